import DiffEngine

/// Reads rows as `base` does, with every identity key (and seeded key) cut to its low
/// `bits` bits: rows of distinct identities then share keys all the time, a stand-in for the
/// 64-bit collisions that someone who knows the public hash can craft. The engine must give
/// the same answers as with `base`, through its ordinary collision policy: pair by key, verify
/// each pair, re-key when a pair fails, and verify every match when a re-keyed pair fails too.
///
/// ```swift
/// let changes = try diff(old, new, using: WeakenedKeys(IdentifiableAdapter<Row>(), bits: 3))
/// ```
///
/// Keys are never exact (`identityKeysAreExact` is false), so identities are always compared.
public struct WeakenedKeys<Base: RowAdapter>: RowAdapter {
    /// The adapter whose identities and contents this one reads.
    public let base: Base
    /// How many low bits of each key are kept (1 to 63).
    public let bits: Int

    /// An adapter with `base`'s identities and contents and its keys cut to `bits` bits.
    /// - Parameters:
    ///   - base: the adapter to weaken.
    ///   - bits: the low bits kept of each key, 1 to 63.
    public init(_ base: Base, bits: Int) {
        precondition((1...63).contains(bits), "a weakened key keeps 1 to 63 bits")
        self.base = base
        self.bits = bits
    }

    private var mask: UInt64 { (1 << UInt64(bits)) &- 1 }

    public var identityKeysAreExact: Bool { false }

    public func identityKey(of row: Base.Row) -> UInt64 { base.identityKey(of: row) & mask }

    public func writeIdentityKeys(of rows: UnsafeBufferPointer<Base.Row>, to keys: UnsafeMutableBufferPointer<UInt64>) {
        base.writeIdentityKeys(of: rows, to: keys)
        for index in keys.indices { keys[index] &= mask }
    }

    public func identitiesEqual(_ lhs: Base.Row, _ rhs: Base.Row) -> Bool { base.identitiesEqual(lhs, rhs) }

    public func contentsEqual(_ lhs: Base.Row, _ rhs: Base.Row) -> Bool { base.contentsEqual(lhs, rhs) }

    public func _identitiesEqual(at lhs: UnsafePointer<Base.Row>, _ rhs: UnsafePointer<Base.Row>) -> Bool {
        base._identitiesEqual(at: lhs, rhs)
    }

    public func _contentsEqual(at lhs: UnsafePointer<Base.Row>, _ rhs: UnsafePointer<Base.Row>) -> Bool {
        base._contentsEqual(at: lhs, rhs)
    }

    public func contentHash(of row: Base.Row) -> UInt64 { base.contentHash(of: row) }

    public func writeContentHashes(of rows: UnsafeBufferPointer<Base.Row>, to hashes: UnsafeMutableBufferPointer<UInt64>) {
        base.writeContentHashes(of: rows, to: hashes)
    }

    public func identityDescription(of row: Base.Row) -> String { base.identityDescription(of: row) }

    /// The base's seeded keys, cut too: the re-keyed pairing must verify its matches as well.
    public func writeSeededIdentityKeys(of rows: UnsafeBufferPointer<Base.Row>, to keys: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        guard base.writeSeededIdentityKeys(of: rows, to: keys) else { return false }
        for index in keys.indices { keys[index] &= mask }
        return true
    }
}

extension WeakenedKeys: IdentifyingAdapter where Base: IdentifyingAdapter {
    public func identity(of row: Base.Row) -> Base.Identity { base.identity(of: row) }
}

extension WeakenedKeys: ContentHashingAdapter where Base: ContentHashingAdapter {}

extension WeakenedKeys: Sendable where Base: Sendable {}
