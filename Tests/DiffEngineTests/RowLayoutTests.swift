@_spi(Testing) import DiffEngine
import DiffEngineTestSupport
import Testing

/// A row of integer fields, the identity not first.
struct Reading: Equatable, Identifiable {
    var sensor: Int
    var id: Int
    var value: Int
}

/// An adapter written outside the library that declares what the key-path adapter over the
/// same fields declares: an integer identity and integer contents where they lie.
struct ReadingAdapter: IdentifyingAdapter {
    var declaresLayout = true
    var rowLayout: RowLayout? {
        guard declaresLayout else { return nil }
        return RowLayout(equalBytesAreEqualRows: true,
                         integerIdentityOffset: MemoryLayout<Reading>.offset(of: \.id),
                         integerContentOffsets: [MemoryLayout<Reading>.offset(of: \.sensor)!, MemoryLayout<Reading>.offset(of: \.value)!])
    }
    var identityKeysAreExact: Bool { true }
    func identityKey(of row: Reading) -> UInt64 { UInt64(bitPattern: Int64(row.id)) }
    func identitiesEqual(_ lhs: Reading, _ rhs: Reading) -> Bool { lhs.id == rhs.id }
    func contentsEqual(_ lhs: Reading, _ rhs: Reading) -> Bool { lhs.sensor == rhs.sensor && lhs.value == rhs.value }
    func contentHash(of row: Reading) -> UInt64 { combineStableHashes(row.sensor.stableHash, row.value.stableHash) }
    func identity(of row: Reading) -> Int { row.id }
}

/// A row with a string field, and an adapter that declares only that equal bytes are equal
/// rows, as `IdentifiableAdapter` does.
struct Label: Equatable, Identifiable {
    var id: Int
    var text: String
}

struct LabelAdapter: IdentifyingAdapter {
    var declaresLayout = true
    var rowLayout: RowLayout? { declaresLayout ? RowLayout(equalBytesAreEqualRows: true) : nil }
    var identityKeysAreExact: Bool { true }
    func identityKey(of row: Label) -> UInt64 { UInt64(bitPattern: Int64(row.id)) }
    func identitiesEqual(_ lhs: Label, _ rhs: Label) -> Bool { lhs.id == rhs.id }
    func contentsEqual(_ lhs: Label, _ rhs: Label) -> Bool { lhs.text == rhs.text }
    func contentHash(of row: Label) -> UInt64 { row.text.stableHash }
    func identity(of row: Label) -> Int { row.id }
}

@Suite struct RowLayoutTests {
    /// A stream of snapshots with rows deleted, inserted, moved and updated, some of them
    /// only in a field after the identity.
    static func stream<Row>(_ make: (Int, Int) -> Row, update: (inout Row) -> Void, seed: UInt64) -> [[Row]] {
        var generator = SeededGenerator(seed: seed)
        var nextID = 0
        var rows = (0..<400).map { _ in nextID += 1; return make(nextID, 0) }
        var snapshots = [rows]
        for _ in 0..<40 {
            for _ in 0..<Int.random(in: 0...3, using: &generator) where !rows.isEmpty {
                rows.remove(at: Int.random(in: 0..<rows.count, using: &generator))
            }
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                nextID += 1
                rows.insert(make(nextID, 0), at: Int.random(in: 0...rows.count, using: &generator))
            }
            if Bool.random(using: &generator), rows.count > 1 {
                let moved = rows.remove(at: Int.random(in: 0..<rows.count, using: &generator))
                rows.insert(moved, at: Int.random(in: 0...rows.count, using: &generator))
            }
            for _ in 0..<Int.random(in: 0...4, using: &generator) where !rows.isEmpty {
                update(&rows[Int.random(in: 0..<rows.count, using: &generator)])
            }
            snapshots.append(rows)
        }
        return snapshots
    }

    /// Diffs every snapshot with each differ; every answer is the one-shot diff's, checked
    /// against the reference rules; returns each differ's probe of the ways it paired.
    static func run<Row: Identifiable & Equatable>(
        _ snapshots: [[Row]], _ differs: [TestDiffer<Row, Row.ID>], ways: [() -> [String: Int]]
    ) -> [[String: Int]] {
        var previous: [Row] = []
        for snapshot in snapshots {
            let answers = differs.map { $0.diff(snapshot).changeset }
            for answer in answers {
                #expect(answer == answers[0])
                #expect(checkChangeset(answer, old: previous, new: snapshot, mode: .minimal).isEmpty)
            }
            previous = snapshot
        }
        return ways.map { $0() }
    }

    @Test func anAdapterDeclaringIntegerFieldsTakesTheKeyPathWalk() {
        let snapshots = Self.stream({ Reading(sensor: $0 % 7, id: $0, value: $1) }, update: { $0.value += 1 }, seed: 0x1A_40)
        let builtIn = Differ(keepingPreviousSnapshotOf: KeyPathAdapter(identity: \Reading.id, content: \.sensor, \.value))
        let declared = Differ(keepingPreviousSnapshotOf: ReadingAdapter())
        let undeclared = Differ(keepingPreviousSnapshotOf: ReadingAdapter(declaresLayout: false))
        let ways = Self.run(snapshots, [TestDiffer(builtIn), TestDiffer(declared), TestDiffer(undeclared)],
                            ways: [{ builtIn.pairingWays }, { declared.pairingWays }, { undeclared.pairingWays }])
        #expect(ways[0] == ways[1], "\(ways)")
        #expect((ways[0]["fields walk"] ?? 0) > 30, "\(ways[0])")
        // Without the layout, the same rows pair another way: the probe can tell.
        #expect(ways[2]["fields walk"] == nil && ways[2] != ways[0], "\(ways[2])")
    }

    @Test func anAdapterDeclaringEqualBytesTakesTheBytesWalk() {
        let snapshots = Self.stream({ Label(id: $0, text: "label \($0) \($1)") }, update: { $0.text += "!" }, seed: 0x1A_41)
        let builtIn = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<Label>())
        let declared = Differ(keepingPreviousSnapshotOf: LabelAdapter())
        let undeclared = Differ(keepingPreviousSnapshotOf: LabelAdapter(declaresLayout: false))
        let ways = Self.run(snapshots, [TestDiffer(builtIn), TestDiffer(declared), TestDiffer(undeclared)],
                            ways: [{ builtIn.pairingWays }, { declared.pairingWays }, { undeclared.pairingWays }])
        #expect(ways[0] == ways[1], "\(ways)")
        #expect((ways[0]["bytes walk"] ?? 0) > 30, "\(ways[0])")
        #expect(ways[2]["bytes walk"] == nil && ways[2] != ways[0], "\(ways[2])")
    }

    /// The one-shot diff reads integer fields through the layout too (its common prefix and
    /// its updates): the same answers as the key-path adapter, duplicates and all.
    @Test func oneShotDiffsAgreeWithTheKeyPathAdapter() throws {
        var generator = SeededGenerator(seed: 0x1A_42)
        for _ in 0..<300 {
            let scenario = makeScenario(.random(using: &generator), using: &generator)
            let old = scenario.old.map { Reading(sensor: $0.content % 3, id: $0.id, value: $0.content) }
            let new = scenario.new.map { Reading(sensor: $0.content % 3, id: $0.id, value: $0.content) }
            for mode in MoveMode.allCases {
                let options = DiffOptions(moves: mode)
                let declared = try diff(old, new, using: ReadingAdapter(), options: options)
                #expect(declared == (try diff(old, new, using: KeyPathAdapter(identity: \Reading.id, content: \.sensor, \.value), options: options)))
                #expect(checkChangeset(declared, old: old, new: new, mode: mode).isEmpty)
            }
        }
    }
}
