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
        contentFields = Self.storedFields(repeat each content)
        identityField = _StoredField(identity)
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

/// Adapters whose rows hold their identity and content fields as 8-byte integers at fixed
/// offsets: a stateful differ reads and compares them where they lie, in one pass.
@usableFromInline
internal protocol _IntegerRowLayout {
    /// The byte offsets of the identity and of the content fields, or nil when the rows are
    /// not laid out so.
    var _integerLayout: (identity: Int, contents: [Int])? { get }
}

extension KeyPathAdapter: _IntegerRowLayout {
    @usableFromInline
    var _integerLayout: (identity: Int, contents: [Int])? {
        guard keyFunction.isStable, keyFunction.isExact, let identity = identityIntegerOffset,
              let contents = contentIntegerOffsets else { return nil }
        return (identity, contents)
    }
}

extension KeyPathAdapter: _RawPrefixComparing {
    /// `_markChangedContents` for stored fields of common types, the fields bound once.
    @usableFromInline
    static func markChangedFields(_ old: UnsafeRawPointer, _ new: UnsafeRawPointer, stride: Int, size: Int,
                                  pairing: UnsafeBufferPointer<UInt32>, bits: UnsafeMutableBufferPointer<UInt64>,
                                  content: _StoredFields) -> Bool {
        var any = false
        for newIndex in pairing.indices {
            let oldIndex = pairing[newIndex]
            guard oldIndex != _unpaired else { continue }
            if !content.equal(old + Int(truncatingIfNeeded: oldIndex) &* stride, new + newIndex &* stride, rowSize: size) {
                bits[newIndex &>> 6] |= 1 &<< UInt64(newIndex & 63)
                any = true
            }
        }
        return any
    }

    /// Stored fields of common types: identities and contents compared where they lie, a
    /// run's rows side by side, in one read of both rows.
    @usableFromInline
    func _markChangedContentsCheckingIdentities(_ old: UnsafeRawPointer, _ new: UnsafeRawPointer, stride: Int,
                                                runs: UnsafeBufferPointer<UInt32>, bits: UnsafeMutableBufferPointer<UInt64>,
                                                any: inout Bool) -> Bool? {
        guard let identityField, let contentFields else { return nil }
        let single = singleIntegerContentOffset, size = MemoryLayout<Row>.size
        for run in Swift.stride(from: 0, to: runs.count, by: 3) {
            let newStart = Int(runs[run + 1])
            var left = old + Int(runs[run]) &* stride, right = new + newStart &* stride
            for newIndex in newStart..<(newStart + Int(runs[run + 2])) {
                guard Self.checkStoredPair(left, right, newIndex: newIndex, identityField, contentFields, single: single,
                                           size: size, bits: bits, any: &any) else { return false }
                left += stride
                right += stride
            }
        }
        return true
    }

    /// The same over a pairing a row at a time.
    @usableFromInline
    func _markChangedContentsCheckingIdentities(_ old: UnsafeRawPointer, _ new: UnsafeRawPointer, stride: Int,
                                                pairing: UnsafeBufferPointer<UInt32>, bits: UnsafeMutableBufferPointer<UInt64>,
                                                any: inout Bool) -> Bool? {
        guard let identityField, let contentFields else { return nil }
        let single = singleIntegerContentOffset, size = MemoryLayout<Row>.size
        for newIndex in pairing.indices where pairing[newIndex] != _unpaired {
            let left = old + Int(truncatingIfNeeded: pairing[newIndex]) &* stride, right = new + newIndex &* stride
            guard Self.checkStoredPair(left, right, newIndex: newIndex, identityField, contentFields, single: single,
                                       size: size, bits: bits, any: &any) else { return false }
        }
        return true
    }

    /// One pair of the two above: false when the rows have two identities; else true, with
    /// `newIndex` flagged in `bits` (and `any` set) when their contents differ. A single
    /// integer content field (`single`, its offset) is compared with one load. The fields
    /// are passed in, not read from the adapter a row at a time (a copy of them each time).
    @inlinable @inline(__always)
    static func checkStoredPair(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, newIndex: Int,
                                _ identity: _StoredField, _ content: _StoredFields, single: Int?, size: Int,
                                bits: UnsafeMutableBufferPointer<UInt64>, any: inout Bool) -> Bool {
        guard identity.equal(left, right) else { return false }
        let same: Bool
        if let single {
            same = left.loadUnaligned(fromByteOffset: single, as: UInt64.self) == right.loadUnaligned(fromByteOffset: single, as: UInt64.self)
        } else {
            same = content.equal(left, right, rowSize: size)
        }
        if !same {
            bits[newIndex &>> 6] |= 1 &<< UInt64(newIndex & 63)
            any = true
        }
        return true
    }

    /// The common prefix of rows whose identity and content are stored fields of common types.
    @usableFromInline
    static func storedPrefix(_ old: UnsafeRawPointer, _ new: UnsafeRawPointer, count: Int, stride: Int, size: Int,
                             identity: _StoredField, content: _StoredFields) -> Int {
        var prefix = 0
        var left = old, right = new
        while prefix < count {
            let sameBytes = _bytesEqual(left, right, size) && !identity.holdsNaN(left) && !content.holdsNaN(left)
            guard sameBytes || (identity.equal(left, right) && content.equal(left, right)) else { break }
            prefix += 1
            left += stride
            right += stride
        }
        return prefix
    }

    /// Stored 8-byte integer content fields: a paired row is updated when any field's bits
    /// differ (equal values are equal bits).
    @usableFromInline
    func _markChangedContents(_ old: UnsafeRawPointer, _ new: UnsafeRawPointer, stride: Int,
                              pairing: UnsafeBufferPointer<UInt32>, bits: UnsafeMutableBufferPointer<UInt64>) -> Bool? {
        guard let contentOffsets = contentIntegerOffsets else {
            guard let contentFields else { return nil }
            return Self.markChangedFields(old, new, stride: stride, size: MemoryLayout<Row>.size, pairing: pairing,
                                          bits: bits, content: contentFields)
        }
        var any = false
        if contentOffsets.count == 1 {
            // Wrapping arithmetic: indexes and strides of rows in memory cannot overflow, and
            // a checked multiply a row costs as much as the comparison.
            let oldField = old + contentOffsets[0]
            var newField = new + contentOffsets[0]
            for newIndex in pairing.indices {
                let oldIndex = pairing[newIndex]
                if oldIndex != _unpaired
                    && oldField.loadUnaligned(fromByteOffset: Int(truncatingIfNeeded: oldIndex) &* stride, as: UInt64.self)
                        != newField.loadUnaligned(as: UInt64.self) {
                    bits[newIndex &>> 6] |= 1 &<< UInt64(truncatingIfNeeded: newIndex & 63)
                    any = true
                }
                newField += stride
            }
            return any
        }
        contentOffsets.withUnsafeBufferPointer { offsets in
            for newIndex in pairing.indices {
                let oldIndex = pairing[newIndex]
                guard oldIndex != _unpaired else { continue }
                let left = old + Int(truncatingIfNeeded: oldIndex) &* stride, right = new + newIndex &* stride
                for offset in offsets where left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                    != right.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                    bits[newIndex &>> 6] |= 1 &<< UInt64(newIndex & 63)
                    any = true
                    break
                }
            }
        }
        return any
    }

    /// Stored 8-byte integer identity and content fields: equal values are equal bits, so
    /// the prefix is found with loads at fixed offsets, with no generic call a row.
    /// Stored fields of common types (``_StoredField``): rows whose bytes are all equal are
    /// equal unless a field holds a NaN; others are compared field by field, where they lie.
    @usableFromInline
    func _commonPrefix(_ old: UnsafeRawPointer, _ new: UnsafeRawPointer, count: Int, stride: Int) -> Int? {
        guard keyFunction.isStable, let identityOffset = identityIntegerOffset, let contentOffsets = contentIntegerOffsets else {
            guard let identityField, let contentFields else { return nil }
            return Self.storedPrefix(old, new, count: count, stride: stride, size: MemoryLayout<Row>.size,
                                    identity: identityField, content: contentFields)
        }
        if contentOffsets.count == 1 {
            let contentOffset = contentOffsets[0]
            var prefix = 0
            var left = old, right = new
            while prefix < count
                    && left.loadUnaligned(fromByteOffset: identityOffset, as: UInt64.self)
                        == right.loadUnaligned(fromByteOffset: identityOffset, as: UInt64.self)
                    && left.loadUnaligned(fromByteOffset: contentOffset, as: UInt64.self)
                        == right.loadUnaligned(fromByteOffset: contentOffset, as: UInt64.self) {
                prefix += 1
                left += stride
                right += stride
            }
            return prefix
        }
        return contentOffsets.withUnsafeBufferPointer { offsets in
            var prefix = 0
            while prefix < count {
                let left = old + prefix * stride, right = new + prefix * stride
                if left.loadUnaligned(fromByteOffset: identityOffset, as: UInt64.self)
                    != right.loadUnaligned(fromByteOffset: identityOffset, as: UInt64.self) { break }
                var same = true
                for offset in offsets where left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                    != right.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                    same = false
                    break
                }
                if !same { break }
                prefix += 1
            }
            return prefix
        }
    }
}
