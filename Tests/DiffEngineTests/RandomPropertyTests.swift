import CDiffCore
import DiffEngine
@_spi(Testing) import DiffEngine
import DiffEngineTestSupport
import Testing

/// Random inputs, many duplicates, every result checked against DiffEngine.docc/Correctness.md.
@Suite struct RandomPropertyTests {
    static let casesPerConfiguration = 10_000

    /// Runs `cases` seeded scenarios and records the first failures with their seeds.
    static func run(seed: UInt64, cases: Int = casesPerConfiguration,
                    _ check: (_ old: [TestRow], _ new: [TestRow]) -> [String]) {
        var generator = SeededGenerator(seed: seed)
        var failures = 0
        for caseNumber in 0..<cases {
            let shape = ScenarioShape.random(using: &generator)
            let (old, new) = makeScenario(shape, using: &generator)
            let problems = check(old, new)
            if !problems.isEmpty {
                failures += 1
                Issue.record("case \(caseNumber) of seed \(seed) (\(shape)): \(problems.prefix(3))\nold \(old)\nnew \(new)")
                if failures >= 3 { return }
            }
        }
    }

    @Test(arguments: MoveMode.allCases)
    func pairInOrderMatchesTheReference(mode: MoveMode) {
        Self.run(seed: 0xD1FF_0001 &+ UInt64(MoveMode.allCases.firstIndex(of: mode)!)) { old, new in
            let changes = try! diff(old, new, options: DiffOptions(moves: mode))
            return checkChangeset(changes, old: old, new: new, mode: mode)
        }
    }

    /// Identities collide all the time: only 3 bits of each key are kept.
    @Test(arguments: MoveMode.allCases)
    func weakenedHashStillMatchesTheReference(mode: MoveMode) {
        let weakened = WeakenedKeys(IdentifiableAdapter<TestRow>(), bits: 3)
        Self.run(seed: 0xBAD_0001) { old, new in
            let changes = try! diff(old, new, using: weakened, options: DiffOptions(moves: mode))
            return checkChangeset(changes, old: old, new: new, mode: mode)
        }
    }

    /// A collision-prone adapter whose keys are not exact and often collide: every pair is
    /// verified after the optimistic pass and the pairing re-run on a failure.
    @Test(arguments: MoveMode.allCases)
    func collidingAdapterKeysMatchTheReference(mode: MoveMode) {
        Self.run(seed: 0xC011_1DE) { old, new in
            let changes = try! diff(old, new, using: CollidingAdapter(), options: DiffOptions(moves: mode))
            return checkChangeset(changes, old: old, new: new, mode: mode)
        }
    }

    @Test(arguments: MoveMode.allCases)
    func rejectThrowsExactlyWhenTheReferenceFindsARepeat(mode: MoveMode) {
        Self.run(seed: 0x4E1E_C7) { old, new in
            let sameIdentity: (TestRow, TestRow) -> Bool = { $0.id == $1.id }
            let expected = referenceFirstRepeat(old, sameIdentity: sameIdentity).map { (DiffSide.old, $0) }
                ?? referenceFirstRepeat(new, sameIdentity: sameIdentity).map { (DiffSide.new, $0) }
            do throws(DuplicateIdentityError) {
                let changes = try diff(old, new, options: DiffOptions(moves: mode, duplicates: .reject))
                if let expected { return ["no error, expected a repeat at \(expected)"] }
                return checkChangeset(changes, old: old, new: new, mode: mode)
            } catch {
                guard let (side, indexes) = expected else { return ["unexpected \(error)"] }
                let rows = side == .old ? old : new
                let want = DuplicateIdentityError(side: side, identity: String(rows[indexes.first].id),
                                                  firstIndex: indexes.first, secondIndex: indexes.second)
                return error == want ? [] : ["threw \(error), expected \(want)"]
            }
        }
    }

    @Test(arguments: MoveMode.allCases)
    func firstWinsDropsLaterRepeatsAndDiffsTheRest(mode: MoveMode) {
        let options = DiffOptions(moves: mode, duplicates: .firstWins)
        Self.run(seed: 0xF125_7) { old, new in
            let sameIdentity: (TestRow, TestRow) -> Bool = { $0.id == $1.id }
            let (keptOld, droppedOld) = referenceDeduplicate(old, sameIdentity: sameIdentity)
            let (keptNew, droppedNew) = referenceDeduplicate(new, sameIdentity: sameIdentity)
            let changes = old.count % 2 == 0 ? try! diff(old, new, options: options)
                : try! diff(old, new, using: WeakenedKeys(IdentifiableAdapter<TestRow>(), bits: 2), options: options)
            var problems = checkChangeset(changes, old: keptOld, new: keptNew, mode: mode)
            if changes.droppedOld != droppedOld { problems.append("droppedOld \(String(describing: changes.droppedOld)), expected \(droppedOld)") }
            if changes.droppedNew != droppedNew { problems.append("droppedNew \(String(describing: changes.droppedNew)), expected \(droppedNew)") }
            return problems
        }
    }

    /// The flat-keys API (precomputed exact keys and content hashes) on random inputs with
    /// many duplicates.
    @Test(arguments: MoveMode.allCases)
    func flatKeysMatchTheReference(mode: MoveMode) {
        Self.run(seed: 0xF1A7 &+ UInt64(MoveMode.allCases.firstIndex(of: mode)!)) { old, new in
            // Also behind a common prefix, which the flat path trims before matching.
            let shared = (0..<(old.count % 7)).map { TestRow(id: 1_000 + $0, content: 0) }
            var problems: [String] = []
            for (old, new) in [(old, new), (shared + old, shared + new)] {
                let changes = diff(oldKeys: old.map { $0.id.stableHash }, newKeys: new.map { $0.id.stableHash },
                                   oldContentHashes: old.map { $0.content.stableHash },
                                   newContentHashes: new.map { $0.content.stableHash }, moves: mode)
                problems += checkChangeset(changes, old: old, new: new, mode: mode)
            }
            return problems
        }
    }

    /// The same input gives the same output: moves are deterministic.
    @Test func deterministic() throws {
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<500 {
            let (old, new) = makeScenario(.random(using: &generator), using: &generator)
            #expect(try diff(old, new) == diff(old, new))
        }
    }

    /// Which rows move, not only how many, follows the documented tie rule, on random
    /// scenarios and on block rearrangements (long runs of rows that kept their order,
    /// which the core takes a block at a time, and rows placed below the last pile's top).
    @Test func minimalMovesFollowTheTieRule() throws {
        var generator = SeededGenerator(seed: 0x71E_0001)
        for caseNumber in 0..<4_000 {
            let (old, new) = caseNumber % 2 == 0
                ? makeScenario(.random(using: &generator), using: &generator)
                : Self.blockRearrangement(using: &generator)
            let expected = referenceMinimalMoves(referenceDiff(old, new, sameIdentity: { $0.id == $1.id }, sameContent: ==).pairs)
            let moves = try diff(old, new).moves
            #expect(moves == expected, "case \(caseNumber)\nold \(old)\nnew \(new)")
            if moves != expected { return }
        }
    }

    /// The same rule at sizes where the moves pass searches its piles through fences (one
    /// for every 16 piles and one for every 256): many rows moved one by one to random
    /// places, besides block moves, deletions and insertions. The expected moves come from
    /// the core's separate LIS (`dc_longest_increasing`, the same tie rule row for row).
    @Test func minimalMovesFollowTheTieRuleAtScale() throws {
        var generator = SeededGenerator(seed: 0x71E_0002)
        for count in [1_000, 5_000, 20_000, 70_000] {
            let old = (0..<count).map { TestRow(id: $0, content: 0) }
            var new = old
            for _ in 0..<count / 8 {
                let row = new.remove(at: Int.random(in: 0..<new.count, using: &generator))
                new.insert(row, at: Int.random(in: 0...new.count, using: &generator))
            }
            for _ in 0..<count / 50 {
                let start = Int.random(in: 0..<new.count, using: &generator)
                let block = Array(new[start..<Swift.min(new.count, start + Int.random(in: 1...60, using: &generator))])
                new.removeSubrange(start..<start + block.count)
                new.insert(contentsOf: block, at: Int.random(in: 0...new.count, using: &generator))
            }
            for _ in 0..<count / 20 { new.remove(at: Int.random(in: 0..<new.count, using: &generator)) }
            for extra in 0..<count / 20 {
                new.insert(TestRow(id: count + extra, content: 0), at: Int.random(in: 0...new.count, using: &generator))
            }
            let newIndex = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($1.id, $0) })
            let pairs = old.indices.compactMap { oldIndex in newIndex[old[oldIndex].id].map { IndexPair(old: oldIndex, new: $0) } }
            let keeps = Self.longestIncreasing(pairs.map { UInt32($0.new) })
            let expected = pairs.indices.filter { !keeps[$0] }.map { pairs[$0] }.sorted { $0.new < $1.new }
            let moves = try diff(old, new).moves
            #expect(moves.count == expected.count && moves == expected, "\(count) rows")
        }
    }

    /// Past the cache-sized thresholds (600,000 old rows: the table pass prefetches further
    /// ahead from 2^19 old rows, and the passes that compare paired rows prefetch moved rows
    /// from 2 MiB of them) the answers are the reference's: rows deleted, inserted, moved
    /// one by one and updated, and ids repeated on both sides, through the flat-keys API,
    /// `Identifiable` (exact and hashed keys) and key paths.
    @Test func largeInputsMatchTheReference() throws {
        var generator = SeededGenerator(seed: 0x1A_26E)
        let count = 600_000
        let old = (0..<count).map { TestRow(id: $0 % 9_973 == 0 ? 7 : $0, content: 0) }
        var new: [TestRow] = [], moved: [TestRow] = []
        new.reserveCapacity(count + count / 10)
        for row in old {
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<10: continue // deleted
            case 10..<12: moved.append(row)
            case 12..<14: new.append(TestRow(id: row.id, content: 1))
            default: new.append(row)
            }
            if Int.random(in: 0..<10, using: &generator) == 0 { new.append(TestRow(id: count + new.count, content: 0)) }
            if !moved.isEmpty && Int.random(in: 0..<50, using: &generator) == 0 {
                new.append(moved.remove(at: Int.random(in: 0..<moved.count, using: &generator)))
            }
        }
        new += moved
        let flat = diff(oldKeys: old.map { $0.id.stableHash }, newKeys: new.map { $0.id.stableHash },
                        oldContentHashes: old.map { $0.content.stableHash }, newContentHashes: new.map { $0.content.stableHash })
        #expect(!flat.moves.isEmpty && !flat.updates.isEmpty)
        let (problems, implied) = checkApplication(flat, old: old, new: new, sameIdentity: { $0.id == $1.id }, sameContent: ==)
        #expect(problems.isEmpty)
        #expect(checkPairing(flat, implied: implied, mode: .minimal,
                             reference: indexedReferenceDiff(old, new, identity: \.id, sameContent: ==)).isEmpty)
        #expect(try diff(old, new) == flat)
        // Hashed keys: each pair's identity checked as its contents are compared.
        #expect(try diff(old, new, using: WeakenedKeys(IdentifiableAdapter<TestRow>(), bits: 40)) == flat)
        #expect(try diff(old, new, identity: \.id, content: \.content) == flat)
    }

    /// Pass 1 pairs rows in sequence before it indexes anything, and indexes only the rows
    /// left over. These shapes break the sequence in each way it handles — a long deleted
    /// range (found again through the anchors), a block moved from the end to the front (a
    /// jump it must refuse), long runs of new rows, everything new, everything reversed —
    /// with repeated identities sprinkled over both sides, and each must pair as the
    /// occurrence rule says: with exact keys, with 3-bit keys (every pair verified), and
    /// through the flat-keys API.
    @Test(arguments: [0, 3])
    func sequenceBreaksMatchTheReference(weakenedBits: Int) {
        var generator = SeededGenerator(seed: 0x5E0_0001 &+ UInt64(weakenedBits))
        for shape in 0..<6 {
            for repeats in [false, true] {
                let count = Int.random(in: 1_500...2_500, using: &generator)
                var old = (0..<count).map { TestRow(id: $0, content: 0) }
                var new: [TestRow]
                switch shape {
                case 0: // a long deleted range, then rows in order with a few changes
                    let start = Int.random(in: 0..<count / 3, using: &generator)
                    new = Array(old[..<start] + old[(start + count / 4)...])
                case 1: // a block moved from the end to the front
                    new = Array(old[(count - 300)...] + old[..<(count - 300)])
                case 2: // long runs of new rows
                    new = old
                    for run in 0..<8 {
                        let fresh = (0..<Int.random(in: 33...200, using: &generator)).map { TestRow(id: 10_000 * (run + 1) + $0, content: 0) }
                        new.insert(contentsOf: fresh, at: Int.random(in: 0...new.count, using: &generator))
                    }
                case 3: // everything new
                    new = (0..<count).map { TestRow(id: 1_000_000 + $0, content: 0) }
                case 4: // reversed
                    new = old.reversed()
                default: // scattered churn: 10% deleted, 10% inserted, 2% moved
                    new = old.filter { _ in Int.random(in: 0..<10, using: &generator) != 0 }
                    for extra in 0..<count / 10 {
                        new.insert(TestRow(id: 2_000_000 + extra, content: 0), at: Int.random(in: 0...new.count, using: &generator))
                    }
                    for _ in 0..<count / 50 {
                        let row = new.remove(at: Int.random(in: 0..<new.count, using: &generator))
                        new.insert(row, at: Int.random(in: 0...new.count, using: &generator))
                    }
                }
                for index in new.indices where Int.random(in: 0..<20, using: &generator) == 0 { new[index].content = 1 }
                if repeats {
                    // Repeated identities on both sides, some of them among rows in order.
                    for _ in 0..<count / 40 {
                        old[Int.random(in: 0..<old.count, using: &generator)].id = Int.random(in: 0..<count, using: &generator)
                        if !new.isEmpty {
                            new[Int.random(in: 0..<new.count, using: &generator)].id = Int.random(in: 0..<count, using: &generator)
                        }
                    }
                }
                let changes = weakenedBits == 0 ? try! diff(old, new)
                    : try! diff(old, new, using: WeakenedKeys(IdentifiableAdapter<TestRow>(), bits: weakenedBits))
                var problems = checkChangeset(changes, old: old, new: new, mode: .minimal)
                if weakenedBits == 0 {
                    let flat = diff(oldKeys: old.map { $0.id.stableHash }, newKeys: new.map { $0.id.stableHash },
                                    oldContentHashes: old.map { $0.content.stableHash },
                                    newContentHashes: new.map { $0.content.stableHash })
                    problems += checkChangeset(flat, old: old, new: new, mode: .minimal)
                }
                #expect(problems.isEmpty, "shape \(shape), repeats \(repeats): \(problems.prefix(3).map { $0.prefix(300) })")
            }
        }
    }

    /// Which of `values` lie on the core's longest increasing subsequence.
    static func longestIncreasing(_ values: [UInt32]) -> [Bool] {
        let size = dc_lis_workspace_size(values.count)
        let workspace = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { workspace.deallocate() }
        var keeps = [UInt8](repeating: 0, count: values.count)
        var kept = 0
        let status = dc_longest_increasing(values, values.count, workspace, size, &keeps, &kept)
        precondition(status == DC_OK, "dc_longest_increasing: \(status)")
        return keeps.map { $0 != 0 }
    }

    /// Rows cut into blocks, a few blocks moved elsewhere, a few rows deleted and inserted.
    static func blockRearrangement(using generator: inout SeededGenerator) -> (old: [TestRow], new: [TestRow]) {
        let count = Int.random(in: 0...300, using: &generator)
        let old = (0..<count).map { TestRow(id: $0, content: 0) }
        var blocks: [[TestRow]] = []
        var start = 0
        while start < count {
            let length = Int.random(in: 1...40, using: &generator)
            blocks.append(Array(old[start..<Swift.min(count, start + length)]))
            start += length
        }
        for _ in 0..<Int.random(in: 0...4, using: &generator) where blocks.count > 1 {
            let block = blocks.remove(at: Int.random(in: 0..<blocks.count, using: &generator))
            blocks.insert(block, at: Int.random(in: 0...blocks.count, using: &generator))
        }
        var new = blocks.flatMap { $0 }
        for _ in 0..<Int.random(in: 0...5, using: &generator) where !new.isEmpty {
            new.remove(at: Int.random(in: 0..<new.count, using: &generator))
        }
        for extra in 0..<Int.random(in: 0...5, using: &generator) {
            new.insert(TestRow(id: count + extra, content: 0), at: Int.random(in: 0...new.count, using: &generator))
        }
        return (old, new)
    }
}

/// An adapter with deliberately poor, non-exact keys (identity modulo 4), defined outside
/// the engine module as any plugin would be.
struct CollidingAdapter: RowAdapter {
    func identityKey(of row: TestRow) -> UInt64 { UInt64(row.id & 3) }
    func identitiesEqual(_ lhs: TestRow, _ rhs: TestRow) -> Bool { lhs.id == rhs.id }
    func contentsEqual(_ lhs: TestRow, _ rhs: TestRow) -> Bool { lhs.content == rhs.content }
    func contentHash(of row: TestRow) -> UInt64 { UInt64(row.content) }
}

@Suite struct ReferenceTests {
    /// The indexed reference (for large inputs) agrees with the naive one everywhere.
    @Test func indexedReferenceAgreesWithNaiveReference() {
        var generator = SeededGenerator(seed: 0x1DE_C5)
        for _ in 0..<3_000 {
            let (old, new) = makeScenario(.random(using: &generator), using: &generator)
            let naive = referenceDiff(old, new, sameIdentity: { $0.id == $1.id }, sameContent: ==)
            let indexed = indexedReferenceDiff(old, new, identity: \.id, sameContent: ==)
            #expect(naive.pairs == indexed.pairs && naive.updates == indexed.updates)
            #expect(naive.deletions == indexed.deletions && naive.insertions == indexed.insertions)
            #expect(naive.longestIncreasing == indexed.longestIncreasing && naive.displacedMoves == indexed.displacedMoves)
            // Both find the longest increasing subsequence by patience sorting; the quadratic
            // dynamic programming of the minimal moves finds the same length.
            #expect(naive.pairs.count - referenceMinimalMoves(naive.pairs).count == naive.longestIncreasing)
        }
    }

    /// The checker itself catches broken changesets (so a passing check means something).
    @Test func checkerCatchesBrokenChangesets() throws {
        let old = [TestRow(id: 1, content: 0), TestRow(id: 2, content: 0), TestRow(id: 3, content: 0)]
        let new = [TestRow(id: 3, content: 0), TestRow(id: 1, content: 5), TestRow(id: 2, content: 0)]
        let good = try diff(old, new)
        #expect(checkChangeset(good, old: old, new: new, mode: .minimal).isEmpty)
        var missingUpdate = good
        missingUpdate.updates = []
        var extraMove = good
        extraMove.moves.append(IndexPair(old: 0, new: 1))
        var wrongCount = good
        wrongCount.deletions = [1]
        let displacedAsMinimal = try diff(old, new, options: DiffOptions(moves: .displaced))
        for broken in [missingUpdate, extraMove, wrongCount] {
            #expect(!checkChangeset(broken, old: old, new: new, mode: .minimal).isEmpty)
        }
        #expect(!checkChangeset(displacedAsMinimal, old: old, new: new, mode: .minimal).isEmpty)
        #expect(checkChangeset(displacedAsMinimal, old: old, new: new, mode: .displaced).isEmpty)
    }
}
