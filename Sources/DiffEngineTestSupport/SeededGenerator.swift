/// SplitMix64: a tiny, fast, seeded random number generator, so that every random test
/// case can be replayed from its seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator that gives the same numbers for the same seed, in every process.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// A test row: an integer identity and an integer content.
public struct TestRow: Identifiable, Hashable, Sendable, CustomStringConvertible {
    /// The identity.
    public var id: Int
    /// The content compared for updates.
    public var content: Int

    /// Creates a row.
    public init(id: Int, content: Int) {
        self.id = id
        self.content = content
    }

    /// `id:content`.
    public var description: String { "\(id):\(content)" }
}

/// The shape of a random scenario: how many rows, how many distinct identities (small
/// alphabets make duplicates common) and how often each kind of change happens.
public struct ScenarioShape: Sendable, CustomStringConvertible {
    /// Rows in the old list.
    public var size: Int
    /// Distinct identities to draw from (small values make repeats common).
    public var alphabet: Int
    /// Fraction of old rows deleted.
    public var deleteRate: Double
    /// New rows inserted, as a fraction of the size.
    public var insertRate: Double
    /// Fraction of kept rows moved elsewhere.
    public var moveRate: Double
    /// Fraction of kept rows whose content changes.
    public var updateRate: Double

    /// Creates a shape; the rates default to 10% deleted, 10% inserted, 2% moved, 2% updated.
    public init(size: Int, alphabet: Int, deleteRate: Double = 0.1, insertRate: Double = 0.1,
                moveRate: Double = 0.05, updateRate: Double = 0.05) {
        self.size = size
        self.alphabet = alphabet
        self.deleteRate = deleteRate
        self.insertRate = insertRate
        self.moveRate = moveRate
        self.updateRate = updateRate
    }

    /// A random shape: sizes 0-300 (mostly small, so the naive reference stays quick),
    /// alphabets from 2 identities up, and change rates from none to heavy.
    public static func random(using generator: inout SeededGenerator) -> ScenarioShape {
        let size: Int = switch Int.random(in: 0..<20, using: &generator) {
        case 0: Int.random(in: 0...300, using: &generator)
        case 1...5: Int.random(in: 0...100, using: &generator)
        default: Int.random(in: 0...30, using: &generator)
        }
        let alphabet = [2, 3, 5, 10, 50, 1000][Int.random(in: 0..<6, using: &generator)]
        func rate() -> Double { [0, 0.02, 0.1, 0.3, 0.7][Int.random(in: 0..<5, using: &generator)] }
        return ScenarioShape(size: size, alphabet: alphabet, deleteRate: rate(), insertRate: rate(),
                             moveRate: rate(), updateRate: rate())
    }

    /// The size, alphabet and rates, on one line.
    public var description: String {
        "size \(size), alphabet \(alphabet), rates -\(deleteRate) +\(insertRate) move \(moveRate) update \(updateRate)"
    }
}

/// Makes an old and a new list of rows of `shape`: new is old with rows deleted, updated,
/// moved and inserted at the given rates. Identities come from the alphabet, so both
/// sides repeat identities freely.
public func makeScenario(_ shape: ScenarioShape, using generator: inout SeededGenerator) -> (old: [TestRow], new: [TestRow]) {
    let contents = 4
    let old = (0..<shape.size).map { _ in
        TestRow(id: Int.random(in: 0..<shape.alphabet, using: &generator),
                content: Int.random(in: 0..<contents, using: &generator))
    }
    var new: [TestRow] = []
    for row in old {
        if Double.random(in: 0..<1, using: &generator) < shape.deleteRate { continue }
        var kept = row
        if Double.random(in: 0..<1, using: &generator) < shape.updateRate {
            kept.content = (kept.content + Int.random(in: 1..<contents, using: &generator)) % contents
        }
        new.append(kept)
    }
    let moves = Int((Double(new.count) * shape.moveRate).rounded())
    for _ in 0..<moves where new.count > 1 {
        let row = new.remove(at: Int.random(in: 0..<new.count, using: &generator))
        new.insert(row, at: Int.random(in: 0...new.count, using: &generator))
    }
    let inserts = Int((Double(Swift.max(shape.size, 1)) * shape.insertRate).rounded())
    for _ in 0..<inserts {
        let row = TestRow(id: Int.random(in: 0..<shape.alphabet, using: &generator),
                          content: Int.random(in: 0..<contents, using: &generator))
        new.insert(row, at: Int.random(in: 0...new.count, using: &generator))
    }
    return (old, new)
}
