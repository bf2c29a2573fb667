/// Reads `Hashable` values whose identity is the whole value (strings, numbers, enums):
/// rows pair when they are equal, and a paired row is never updated.
///
/// Identity keys are stable (`StableHashable`) when the element type is, and exact for
/// fixed-width integers; other `Hashable` types use Swift's per-process `hashValue`,
/// verified with `==`, which is right for one diff but must not be persisted.
// @unchecked: the stored closures and key paths are immutable and capture no state.
public struct HashableAdapter<Element: Hashable>: RowAdapter, @unchecked Sendable {
    /// The rows: the values themselves.
    public typealias Row = Element

    @usableFromInline
    let keyFunction: _KeyFunction<Element>

    /// An adapter keyed by the elements' stable hash when `Element` is `StableHashable`
    /// (the value itself for integers), else by Swift's per-process `hashValue`, verified
    /// with `==`.
    @inlinable
    public init() {
        keyFunction = .automatic
    }

    /// True for fixed-width integers and `Bool`, whose stable hash is the value.
    @inlinable
    public var identityKeysAreExact: Bool { keyFunction.isExact }

    /// Equal bytes are equal rows: a value's identity key and equality read only its value.
    /// A `Differ` keeping the snapshot compares rows with the previous ones as bytes first.
    @inlinable
    public var rowLayout: RowLayout? { RowLayout(equalBytesAreEqualRows: true) }

    /// The value's stable hash, or its per-process `hashValue`.
    @inlinable
    public func identityKey(of row: Element) -> UInt64 { keyFunction(row) }

    /// Whether the two values are equal (`==`).
    @inlinable
    public func identitiesEqual(_ lhs: Element, _ rhs: Element) -> Bool { lhs == rhs }

    /// Always true: equal identities are equal values.
    @inlinable
    public func contentsEqual(_ lhs: Element, _ rhs: Element) -> Bool { true }

    /// Always 0: the content is the identity, so paired rows never differ.
    @inlinable
    public func contentHash(of row: Element) -> UInt64 { 0 }

    /// Per-process secret keys of the values (see ``RowAdapter/writeSeededIdentityKeys(of:to:)``).
    @inlinable
    public func writeSeededIdentityKeys(of rows: UnsafeBufferPointer<Element>, to keys: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        _writeSeededKeys(rows, keys) { $0 }
    }
}
