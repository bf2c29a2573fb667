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

    /// An adapter keyed by the ids' per-process `hashValue`.
    @inlinable
    public init() {
        self.init(keyFunction: .perProcess, contentHasher: nil)
    }

    /// True for fixed-width integer ids, whose stable hash is the id.
    @inlinable
    public var identityKeysAreExact: Bool { keyFunction.isExact }

    /// The id's stable hash (the id itself for integers), or its per-process `hashValue`.
    @inlinable
    public func identityKey(of row: Element) -> UInt64 { keyFunction(row.id) }

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

extension IdentifiableAdapter where Element.ID: StableHashable {
    /// An adapter keyed by the ids' stable hash (exact for integer ids).
    @inlinable
    public init() {
        self.init(keyFunction: .stable, contentHasher: nil)
    }
}

extension IdentifiableAdapter where Element: Hashable {
    /// An adapter keyed by the ids' per-process `hashValue`, with content hashes.
    @inlinable
    public init() {
        self.init(keyFunction: .perProcess, contentHasher: { UInt64(bitPattern: Int64($0.hashValue)) })
    }
}

extension IdentifiableAdapter where Element: Hashable, Element.ID: StableHashable {
    /// An adapter keyed by the ids' stable hash (exact for integer ids), with content hashes.
    @inlinable
    public init() {
        self.init(keyFunction: .stable, contentHasher: { UInt64(bitPattern: Int64($0.hashValue)) })
    }
}
