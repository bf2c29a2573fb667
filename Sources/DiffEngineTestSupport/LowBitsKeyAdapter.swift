import DiffEngine

/// Reads `TestRow`s with identity keys cut to their low `bits` bits (`id & (2^bits - 1)`):
/// rows of two identities then share a full key, a stand-in for a crafted 64-bit collision
/// that a plugin's keys could meet. Identities and contents compare exactly.
public struct LowBitsKeyAdapter: IdentifyingAdapter, Sendable {
    /// How many low bits of the id the key keeps (1 to 63).
    public let bits: Int

    /// An adapter whose keys keep `bits` low bits of the id.
    public init(bits: Int) {
        precondition(bits > 0 && bits < 64, "a key of 1 to 63 bits")
        self.bits = bits
    }

    public func identityKey(of row: TestRow) -> UInt64 { UInt64(bitPattern: Int64(row.id)) & ((1 << UInt64(bits)) - 1) }
    public func identitiesEqual(_ lhs: TestRow, _ rhs: TestRow) -> Bool { lhs.id == rhs.id }
    public func contentsEqual(_ lhs: TestRow, _ rhs: TestRow) -> Bool { lhs.content == rhs.content }
    public func contentHash(of row: TestRow) -> UInt64 { UInt64(bitPattern: Int64(row.content)) }
    public func identity(of row: TestRow) -> Int { row.id }
}

/// `LowBitsKeyAdapter` whose layout says equal bytes are equal rows, so that a stateful differ
/// compares rows as bytes first: its colliding keys reach the checks of that path.
public struct LowBitsValueKeyAdapter: IdentifyingAdapter, Sendable {
    /// The adapter whose keys and equality this one has.
    public let base: LowBitsKeyAdapter

    /// An adapter whose keys keep `bits` low bits of the id.
    public init(bits: Int) { base = LowBitsKeyAdapter(bits: bits) }

    public func identityKey(of row: TestRow) -> UInt64 { base.identityKey(of: row) }
    public func identitiesEqual(_ lhs: TestRow, _ rhs: TestRow) -> Bool { base.identitiesEqual(lhs, rhs) }
    public func contentsEqual(_ lhs: TestRow, _ rhs: TestRow) -> Bool { base.contentsEqual(lhs, rhs) }
    public func contentHash(of row: TestRow) -> UInt64 { base.contentHash(of: row) }
    public func identity(of row: TestRow) -> Int { base.identity(of: row) }
    public var rowLayout: RowLayout? { RowLayout(equalBytesAreEqualRows: true) }
}
