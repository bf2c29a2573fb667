/// Reads `Identifiable & Equatable` rows: identity is `id`, content is the whole row
/// compared with `==` (DifferenceKit's `Differentiable`, IGListKit's `diffIdentifier` +
/// `isEqual`).
///
/// - Note: Identity keys are exact for integer ids and stable for `StableHashable` ids;
///   other ids use Swift's per-process `hashValue`, verified with `==`.
/// - Note: `contentHash(of:)`, which only hash-keeping callers such as the stateful
///   differ need, requires `Element: Hashable`.
// @unchecked: the stored closures and key paths are immutable and capture no state.
public struct IdentifiableAdapter<Element: Identifiable & Equatable>: RowAdapter, @unchecked Sendable {
    /// The rows: `Identifiable & Equatable` values.
    public typealias Row = Element

    @usableFromInline
    let keyFunction: _KeyFunction<Element.ID>
    @usableFromInline
    let contentHasher: ((Element) -> UInt64)?

    @inlinable
    init(keyFunction: _KeyFunction<Element.ID>, contentHasher: ((Element) -> UInt64)?) {
        self.keyFunction = keyFunction
        self.contentHasher = contentHasher
    }

    /// An adapter keyed by the ids' stable hash when `Element.ID` is `StableHashable` (the id
    /// itself for integers, so no equality check is needed), else by their per-process
    /// `hashValue`, verified with `==`. Content hashes (for a hash-only ``Differ``) are the
    /// rows' `hashValue` when `Element` is `Hashable`.
    @inlinable
    public init() {
        self.init(keyFunction: .automatic, contentHasher: Self.contentHasher())
    }

    /// The rows' `hashValue`, when `Element` is `Hashable`: one dynamic check, made once.
    @inlinable
    static func contentHasher() -> ((Element) -> UInt64)? {
        guard let hashable = Element.self as? any Hashable.Type else { return nil }
        return hashValues(hashable)
    }

    /// `Element` is `H` here: the cast is between one type's two names.
    @inlinable
    static func hashValues<H: Hashable>(_: H.Type) -> (Element) -> UInt64 {
        { UInt64(bitPattern: Int64(unsafeBitCast($0, to: H.self).hashValue)) }
    }

    /// True for fixed-width integer ids, whose stable hash is the id.
    @inlinable
    public var identityKeysAreExact: Bool { keyFunction.isExact }

    /// Equal bytes are equal rows: a value's identity key and equality read only its value.
    /// A `Differ` keeping the snapshot compares rows with the previous ones as bytes first.
    @inlinable
    public var rowLayout: RowLayout? { RowLayout(equalBytesAreEqualRows: true) }

    /// The id's stable hash (the id itself for integers), or its per-process `hashValue`.
    @inlinable
    public func identityKey(of row: Element) -> UInt64 { keyFunction(row.id) }

    /// The ids' keys, as `identityKey(of:)` gives them; the choice of key function is made
    /// once, not a row, so integer ids cost a load and a store a row.
    @inlinable
    public func writeIdentityKeys(of rows: UnsafeBufferPointer<Element>, to keys: UnsafeMutableBufferPointer<UInt64>) {
        precondition(rows.count == keys.count, "one key a row")
        guard keyFunction.isStable else {
            for index in rows.indices { keys[index] = keyFunction.key(rows[index].id) }
            return
        }
        for index in rows.indices {
            let id = rows[index].id
            keys[index] = _directStableHash(id) ?? keyFunction.key(id)
        }
    }

    /// Whether the two rows' ids are equal.
    @inlinable
    public func identitiesEqual(_ lhs: Element, _ rhs: Element) -> Bool { lhs.id == rhs.id }

    /// Whether the two rows are equal (`==`).
    @inlinable
    public func contentsEqual(_ lhs: Element, _ rhs: Element) -> Bool { lhs == rhs }

    /// The row's `hashValue`; available when `Element: Hashable`, a precondition failure otherwise.
    @inlinable
    public func contentHash(of row: Element) -> UInt64 {
        guard let contentHasher else {
            preconditionFailure("content hashes of \(Element.self) need Element: Hashable")
        }
        return contentHasher(row)
    }

    /// The id, for messages.
    public func identityDescription(of row: Element) -> String { String(describing: row.id) }

    /// Per-process secret keys of the ids (see ``RowAdapter/writeSeededIdentityKeys(of:to:)``).
    @inlinable
    public func writeSeededIdentityKeys(of rows: UnsafeBufferPointer<Element>, to keys: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        _writeSeededKeys(rows, keys) { $0.id }
    }
}
