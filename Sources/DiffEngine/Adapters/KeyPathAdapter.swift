/// Reads rows through key paths: one for the identity (`\.id`) and any number for the
/// content (`\.title, \.price`). Rows pair by identity; a paired row is updated when any
/// content field differs.
///
/// ```swift
/// let adapter = KeyPathAdapter(identity: \Product.id, content: \.title, \.price)
/// let changes = try diff(oldProducts, newProducts, using: adapter)
/// ```
///
/// - Note: Content hashes fold the fields' hashes with `combineStableHashes`; a field
///   type that is `StableHashable` contributes its stable hash, any other its per-process
///   `hashValue`.
/// - Complexity: Stored properties of structs are read at their byte offset, as fast as a
///   direct property read; computed properties and class properties go through key-path
///   application, which costs tens of nanoseconds a read.
// @unchecked: the stored closures and key paths are immutable and capture no state.
public struct KeyPathAdapter<Row, ID: Hashable, each Content: Hashable>: RowAdapter, @unchecked Sendable {
    /// The key path of the identity.
    public let identity: KeyPath<Row, ID>
    /// The key paths of the content fields.
    public let content: (repeat KeyPath<Row, each Content>)

    @usableFromInline
    let keyFunction: _KeyFunction<ID>
    /// Byte offsets of stored-property key paths (nil for computed ones and for classes),
    /// read directly: applying a key path costs tens of nanoseconds, a load one.
    @usableFromInline
    let identityOffset: Int?
    @usableFromInline
    let contentOffsets: [Int?]
    /// One hasher a content field, chosen once: the stable hash for `StableHashable`
    /// fields, `hashValue` for the others (no dynamic cast per row).
    @usableFromInline
    let contentHashers: [(Row) -> UInt64]
    /// When the identity is a stored 8-byte integer, its offset: the key is those bits.
    @usableFromInline
    let identityIntegerOffset: Int?
    /// When every content field is a stored 8-byte integer, their offsets: each field's
    /// stable hash is its bits, loaded with no generic dispatch.
    @usableFromInline
    let contentIntegerOffsets: [Int]?
    /// When the content is one stored 8-byte integer field, its offset: compared and hashed
    /// as those bits, with no array to retain on every row.
    @usableFromInline
    let singleIntegerContentOffset: Int?
    /// When every content field is stored and of a common type, each compared where it lies
    /// with its type's `==` (a loop over the content pack compares through generic calls).
    @usableFromInline
    let contentFields: _StoredFields?
    /// The identity, when it is a stored field of a common type.
    @usableFromInline
    let identityField: _StoredField?
    /// What the engine may read from the rows' memory (see `rowLayout`), worked out once.
    @usableFromInline
    let layout: RowLayout

    /// An adapter keyed by the identity's stable hash when `ID` is `StableHashable` (the value
    /// itself for integers), else by its per-process `hashValue`, verified with `==`.
    /// - Parameters:
    ///   - identity: the key path of each row's identity.
    ///   - content: the key paths of the fields compared for updates.
    @inlinable
    public init(identity: KeyPath<Row, ID>, content: repeat KeyPath<Row, each Content>) {
        self.identity = identity
        self.content = (repeat each content)
        keyFunction = .automatic
        identityOffset = MemoryLayout<Row>.offset(of: identity)
        contentOffsets = Self.offsets(repeat each content)
        contentHashers = Self.hashers(repeat each content)
        identityIntegerOffset = Self.isEightByteInteger(ID.self) ? identityOffset : nil
        contentIntegerOffsets = Self.integerOffsets(repeat each content)
        singleIntegerContentOffset = contentIntegerOffsets.flatMap { $0.count == 1 ? $0[0] : nil }
        let contentFields = Self.storedFields(repeat each content), identityField = _StoredField(identity)
        self.contentFields = contentFields
        self.identityField = identityField
        var floatingPoint: RowLayout.FloatingPointFields?
        if let identityField, let identityFields = _StoredFields([identityField]), let contentFields {
            floatingPoint = RowLayout.FloatingPointFields(identityFields, contentFields)
        }
        layout = RowLayout(equalBytesAreEqualRows: true,
                           integerIdentityOffset: keyFunction.isStable && keyFunction.isExact ? identityIntegerOffset : nil,
                           integerContentOffsets: contentIntegerOffsets, floatingPointFields: floatingPoint)
    }

    @inlinable
    static func storedFields(_ paths: repeat KeyPath<Row, each Content>) -> _StoredFields? {
        var fields: [_StoredField] = []
        for path in repeat each paths {
            guard let field = _StoredField(path) else { return nil }
            fields.append(field)
        }
        return _StoredFields(fields)
    }

    /// Whether values of `type` are 8-byte integers, whose stable hash is their bits.
    @inlinable
    static func isEightByteInteger(_ type: Any.Type) -> Bool {
        type == Int.self || type == Int64.self || type == UInt64.self || type == UInt.self
    }

    /// The offsets of the content fields when all are stored 8-byte integers, else nil.
    @inlinable
    static func integerOffsets(_ paths: repeat KeyPath<Row, each Content>) -> [Int]? {
        var offsets: [Int] = []
        var allIntegers = true
        for path in repeat each paths {
            if let offset = MemoryLayout<Row>.offset(of: path), isEightByteInteger(type(of: path).valueType) {
                offsets.append(offset)
            } else {
                allIntegers = false
            }
        }
        return allIntegers ? offsets : nil
    }

    @inlinable
    static func offsets(_ paths: repeat KeyPath<Row, each Content>) -> [Int?] {
        var offsets: [Int?] = []
        for path in repeat each paths { offsets.append(MemoryLayout<Row>.offset(of: path)) }
        return offsets
    }

    @inlinable
    static func hashers(_ paths: repeat KeyPath<Row, each Content>) -> [(Row) -> UInt64] {
        var hashers: [(Row) -> UInt64] = []
        for path in repeat each paths { hashers.append(hasher(for: path)) }
        return hashers
    }

    @inlinable
    static func hasher<Value: Hashable>(for path: KeyPath<Row, Value>) -> (Row) -> UInt64 {
        let offset = MemoryLayout<Row>.offset(of: path)
        func read(_ row: Row) -> Value {
            guard let offset else { return row[keyPath: path] }
            return withUnsafeBytes(of: row) { $0.load(fromByteOffset: offset, as: Value.self) }
        }
        if let stableType = Value.self as? any StableHashable.Type {
            return stableHasher(stableType, read)
        }
        return { UInt64(bitPattern: Int64(read($0).hashValue)) }
    }

    /// `Value` is `Stable` here; the cast is between one type's two names.
    @inlinable
    static func stableHasher<Value, Stable: StableHashable>(
        _: Stable.Type, _ read: @escaping (Row) -> Value
    ) -> (Row) -> UInt64 {
        { unsafeBitCast(read($0), to: Stable.self).stableHash }
    }

    @inlinable
    func read<Value>(_ row: Row, _ path: KeyPath<Row, Value>, at offset: Int?) -> Value {
        guard let offset else { return row[keyPath: path] }
        return withUnsafeBytes(of: row) { $0.load(fromByteOffset: offset, as: Value.self) }
    }

    /// `body` applied to the field in place: a stored field is borrowed where it lies, not
    /// copied out (a copy of a string or array field costs a retain and a release).
    @inlinable
    func withField<Value, Result>(_ row: Row, _ path: KeyPath<Row, Value>, at offset: Int?,
                                  _ body: (Value) -> Result) -> Result {
        guard let offset else { return body(row[keyPath: path]) }
        return withUnsafeBytes(of: row) { bytes in
            body(bytes.baseAddress.unsafelyUnwrapped.advanced(by: offset).assumingMemoryBound(to: Value.self).pointee)
        }
    }

    /// Whether the field is equal in the rows at two addresses, compared where it lies.
    @inlinable
    static func equalInPlace<Value: Equatable>(_ lhs: UnsafePointer<Row>, _ rhs: UnsafePointer<Row>,
                                               _ path: KeyPath<Row, Value>, at offset: Int?) -> Bool {
        guard let offset else { return lhs.pointee[keyPath: path] == rhs.pointee[keyPath: path] }
        return UnsafeRawPointer(lhs).advanced(by: offset).assumingMemoryBound(to: Value.self).pointee
            == UnsafeRawPointer(rhs).advanced(by: offset).assumingMemoryBound(to: Value.self).pointee
    }

    /// The identities compared where they lie.
    @inlinable
    public func _identitiesEqual(at lhs: UnsafePointer<Row>, _ rhs: UnsafePointer<Row>) -> Bool {
        if let offset = identityIntegerOffset {
            return UnsafeRawPointer(lhs).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                == UnsafeRawPointer(rhs).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        }
        if let identityField { return identityField.equal(UnsafeRawPointer(lhs), UnsafeRawPointer(rhs)) }
        return Self.equalInPlace(lhs, rhs, identity, at: identityOffset)
    }

    /// The content fields compared where they lie.
    @inlinable
    public func _contentsEqual(at lhs: UnsafePointer<Row>, _ rhs: UnsafePointer<Row>) -> Bool {
        if let offset = singleIntegerContentOffset {
            return UnsafeRawPointer(lhs).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                == UnsafeRawPointer(rhs).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        }
        if let contentFields {
            return contentFields.equal(UnsafeRawPointer(lhs), UnsafeRawPointer(rhs), rowSize: MemoryLayout<Row>.size)
        }
        var field = 0
        for path in repeat each content {
            if !Self.equalInPlace(lhs, rhs, path, at: contentOffsets[field]) { return false }
            field += 1
        }
        return true
    }


    /// True for fixed-width integer identities, whose stable hash is the value.
    @inlinable
    public var identityKeysAreExact: Bool { keyFunction.isExact }

    /// The identity's stable hash (the value itself for integers), or its per-process `hashValue`.
    @inlinable
    public func identityKey(of row: Row) -> UInt64 {
        if keyFunction.isStable, let offset = identityIntegerOffset {
            return withUnsafeBytes(of: row) { $0.load(fromByteOffset: offset, as: UInt64.self) }
        }
        return withField(row, identity, at: identityOffset) { keyFunction($0) }
    }

    /// Integer identities are read straight out of the rows' memory, a stride apart.
    @inlinable
    public func writeIdentityKeys(of rows: UnsafeBufferPointer<Row>, to keys: UnsafeMutableBufferPointer<UInt64>) {
        precondition(rows.count == keys.count, "one key a row")
        guard keyFunction.isStable, let offset = identityIntegerOffset, let base = rows.baseAddress else {
            if let offset = identityOffset, let base = rows.baseAddress {
                // Each identity hashed where it lies, not copied out of its row.
                let raw = UnsafeRawPointer(base), stride = MemoryLayout<Row>.stride
                for index in rows.indices {
                    keys[index] = keyFunction(raw.advanced(by: index &* stride &+ offset).assumingMemoryBound(to: ID.self).pointee)
                }
                return
            }
            for index in rows.indices { keys[index] = identityKey(of: rows[index]) }
            return
        }
        // A pointer stepped a stride at a time: no overflow check a row, so the loop vectorizes.
        var field = UnsafeRawPointer(base) + offset
        let stride = MemoryLayout<Row>.stride
        for index in keys.indices {
            keys[index] = field.load(as: UInt64.self)
            field += stride
        }
    }

    /// All-integer contents are read straight out of the rows' memory, a stride apart; other
    /// stored fields are hashed where they lie.
    @inlinable
    public func writeContentHashes(of rows: UnsafeBufferPointer<Row>, to hashes: UnsafeMutableBufferPointer<UInt64>) {
        precondition(rows.count == hashes.count, "one hash a row")
        guard let offsets = contentIntegerOffsets, let first = offsets.first, let base = rows.baseAddress else {
            if let contentFields, let base = rows.baseAddress {
                // A hasher of a row copies the row for each field it reads: a retain and a
                // release for each string in it, and generic calls for the field's type.
                let raw = UnsafeRawPointer(base), stride = MemoryLayout<Row>.stride
                for index in rows.indices { hashes[index] = contentFields.hashKey(raw + index &* stride) }
                return
            }
            for index in rows.indices { hashes[index] = contentHash(of: rows[index]) }
            return
        }
        let raw = UnsafeRawPointer(base), stride = MemoryLayout<Row>.stride
        for index in rows.indices {
            var folded = raw.load(fromByteOffset: index &* stride &+ first, as: UInt64.self)
            for offset in offsets.dropFirst() {
                folded = combineStableHashes(folded, raw.load(fromByteOffset: index &* stride &+ offset, as: UInt64.self))
            }
            hashes[index] = folded
        }
    }

    /// Whether the two rows' identities are equal.
    @inlinable
    public func identitiesEqual(_ lhs: Row, _ rhs: Row) -> Bool {
        withUnsafePointer(to: lhs) { left in withUnsafePointer(to: rhs) { right in _identitiesEqual(at: left, right) } }
    }

    /// Whether every content field of the two rows is equal.
    @inlinable
    public func contentsEqual(_ lhs: Row, _ rhs: Row) -> Bool {
        withUnsafePointer(to: lhs) { left in withUnsafePointer(to: rhs) { right in _contentsEqual(at: left, right) } }
    }

    /// The content fields' hashes folded with ``combineStableHashes(_:_:)``.
    @inlinable
    public func contentHash(of row: Row) -> UInt64 {
        if let offsets = contentIntegerOffsets, !offsets.isEmpty {
            return withUnsafeBytes(of: row) { bytes in
                var folded = bytes.load(fromByteOffset: offsets[0], as: UInt64.self)
                for offset in offsets.dropFirst() {
                    folded = combineStableHashes(folded, bytes.load(fromByteOffset: offset, as: UInt64.self))
                }
                return folded
            }
        }
        if let contentFields {
            return withUnsafePointer(to: row) { contentFields.hashKey(UnsafeRawPointer($0)) }
        }
        guard var folded = contentHashers.first?(row) else { return 0 }
        for hasher in contentHashers.dropFirst() { folded = combineStableHashes(folded, hasher(row)) }
        return folded
    }

    /// The identity value, for messages.
    public func identityDescription(of row: Row) -> String { String(describing: row[keyPath: identity]) }

    /// Per-process secret keys of the identities (see ``RowAdapter/writeSeededIdentityKeys(of:to:)``).
    @inlinable
    public func writeSeededIdentityKeys(of rows: UnsafeBufferPointer<Row>, to keys: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        _writeSeededKeys(rows, keys) { read($0, identity, at: identityOffset) }
    }
}

extension KeyPathAdapter {
    /// Equal bytes are equal rows; an integer identity whose stable hash is its bits, and
    /// content fields that are all stored 8-byte integers, are read where they lie.
    /// With the identity and every content field stored and of a common type, the
    /// floating-point fields among them are known too.
    @inlinable
    public var rowLayout: RowLayout? { layout }
}
