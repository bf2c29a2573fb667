import DiffEngine
import DiffEngineTestSupport
import Testing

/// Readable cases whose answers are worked out by hand in the comments.
@Suite struct GoldenTests {
    /// Heckel (1978), "A technique for isolating differences between files", words as rows.
    @Test func heckelMuchWritingIsLikeSnow() throws {
        let old = "MUCH WRITING IS LIKE SNOW , A MASS OF LONG WORDS AND PHRASES FALLS UPON THE RELEVANT FACTS COVERING UP THE DETAILS ."
            .split(separator: " ").map(String.init)
        let new = "A MASS OF LATIN WORDS FALLS UPON THE RELEVANT FACTS LIKE SOFT SNOW , COVERING UP THE DETAILS ."
            .split(separator: " ").map(String.init)
        let changes = try diff(old, new)
        // MUCH WRITING IS, LONG, AND PHRASES go; LATIN and SOFT come.
        #expect(changes.deletions == [0, 1, 2, 9, 11, 12])
        #expect(changes.insertions == [3, 11])
        // "A MASS OF … FACTS" and "COVERING UP THE DETAILS ." keep their order (14 rows);
        // "LIKE SNOW ," is the one block that moved.
        #expect(changes.moves == [IndexPair(old: 3, new: 10), IndexPair(old: 4, new: 12), IndexPair(old: 5, new: 13)])
        #expect(changes.updates.isEmpty)
        #expect(checkChangeset(changes, old: old, new: new, mode: .minimal, sameIdentity: ==, sameContent: ==).isEmpty)
    }

    @Test(arguments: [
        (MoveMode.minimal, [IndexPair(old: 0, new: 3)], [Int](), [Int]()),
        (MoveMode.displaced, [IndexPair(old: 1, new: 0), IndexPair(old: 2, new: 1), IndexPair(old: 3, new: 2), IndexPair(old: 0, new: 3)], [], []),
        (MoveMode.none, [], [0], [3]),
    ])
    func abcdToBcda(mode: MoveMode, moves: [IndexPair], deletions: [Int], insertions: [Int]) throws {
        let old = ["A", "B", "C", "D"], new = ["B", "C", "D", "A"]
        let changes = try diff(old, new, options: DiffOptions(moves: mode))
        #expect(changes.moves == moves)
        #expect(changes.deletions == deletions)
        #expect(changes.insertions == insertions)
        #expect(checkChangeset(changes, old: old, new: new, mode: mode, sameIdentity: ==, sameContent: ==).isEmpty)
    }

    /// A repeated new identity whose first occurrence is far from where the old row was:
    /// the later occurrence reaches the old row in sequence first, but the first one takes
    /// it (k-th occurrence pairing), and the later one is the insertion.
    @Test func firstOccurrenceTakesTheOldRowBackFromALaterOne() throws {
        let old = ["a", "b", "c", "d", "e", "f", "g", "h"]
        let new = ["e", "a", "b", "c", "d", "e", "f", "g", "h"]
        let changes = try diff(old, new)
        #expect(changes.insertions == [5])
        #expect(changes.deletions.isEmpty)
        #expect(changes.moves == [IndexPair(old: 4, new: 0)])
        #expect(checkChangeset(changes, old: old, new: new, mode: .minimal, sameIdentity: ==, sameContent: ==).isEmpty)
    }

    /// Duplicates on both sides swap places: k-th occurrences pair, so the first A stays
    /// the first A and only B moves.
    @Test func duplicateSwap() throws {
        let changes = try diff(["A", "A", "B"], ["B", "A", "A"])
        #expect(changes.moves == [IndexPair(old: 2, new: 0)])
        #expect(changes.deletions.isEmpty && changes.insertions.isEmpty)
    }

    /// One side has more copies: the extra copy is the last one, whatever the order.
    @Test func extraDuplicateIsTheLastOccurrence() throws {
        let old = [TestRow(id: 7, content: 0), TestRow(id: 1, content: 0), TestRow(id: 7, content: 1)]
        let new = [TestRow(id: 1, content: 0), TestRow(id: 7, content: 1)]
        let changes = try diff(old, new)
        // old 7:0 (first 7) pairs with new 7:1 (first 7): an update; old 7:1 is deleted.
        // The two pairs swapped order; of two equally short answers the engine keeps the
        // later old row in place and moves the earlier one.
        #expect(changes.deletions == [2])
        #expect(changes.updates == [IndexPair(old: 0, new: 1)])
        #expect(changes.moves == [IndexPair(old: 0, new: 1)])
        #expect(checkChangeset(changes, old: old, new: new, mode: .minimal).isEmpty)
    }

    @Test func emptySides() throws {
        let rows = [TestRow(id: 1, content: 0), TestRow(id: 2, content: 0)]
        let empty: [TestRow] = []
        #expect(try diff(empty, empty) == Changeset(oldCount: 0, newCount: 0))
        #expect(try diff(empty, rows) == Changeset(oldCount: 0, newCount: 2, insertions: [0, 1]))
        #expect(try diff(rows, empty) == Changeset(oldCount: 2, newCount: 0, deletions: [0, 1]))
        #expect(try diff(rows, rows) == Changeset(oldCount: 2, newCount: 2))
    }

    @Test func allRowsIdenticalAndDuplicated() throws {
        let old = Array(repeating: TestRow(id: 3, content: 1), count: 50)
        let new = Array(repeating: TestRow(id: 3, content: 2), count: 40)
        let changes = try diff(old, new)
        #expect(changes.deletions == Array(40..<50))
        #expect(changes.updates == (0..<40).map { IndexPair(old: $0, new: $0) })
        #expect(changes.moves.isEmpty)
    }

    @Test func updateAndMoveOfOneRow() throws {
        let old = [TestRow(id: 1, content: 0), TestRow(id: 2, content: 0), TestRow(id: 3, content: 0)]
        let new = [TestRow(id: 3, content: 9), TestRow(id: 1, content: 0), TestRow(id: 2, content: 0)]
        let changes = try diff(old, new)
        #expect(changes.moves == [IndexPair(old: 2, new: 0)])
        #expect(changes.updates == [IndexPair(old: 2, new: 0)])
    }
}

/// Inside one section, the sectioned diff moves exactly the items a flat diff moves: the
/// same core LIS and tie rule (`AB → BA` moves `A`).
@Suite struct SectionTieRuleTests {
    @Test func swapInsideASectionMovesTheFirstLikeAFlatDiff() throws {
        let old = [SectionData(header: TestRow(id: 0, content: 0), items: [TestRow(id: 1, content: 0), TestRow(id: 2, content: 0)])]
        let new = [SectionData(header: TestRow(id: 0, content: 0), items: [TestRow(id: 2, content: 0), TestRow(id: 1, content: 0)])]
        let staged = try stagedDiff(old, new, headers: IdentifiableAdapter<TestRow>(), items: IdentifiableAdapter<TestRow>())
        #expect(staged.changeset.itemMoves == [IndexPathPair(old: [0, 0], new: [0, 1])])
        #expect(try diff(old[0].items, new[0].items).moves == [IndexPair(old: 0, new: 1)])
    }

    @Test func randomPermutationsMoveTheSameItems() throws {
        var generator = SeededGenerator(seed: 0x71E5)
        for _ in 0..<2_000 {
            let count = Int.random(in: 2...8, using: &generator)
            let items = (0..<count).map { TestRow(id: $0, content: 0) }
            let shuffled = items.shuffled(using: &generator)
            let header = TestRow(id: -1, content: 0)
            let staged = try stagedDiff([SectionData(header: header, items: items)], [SectionData(header: header, items: shuffled)],
                                        headers: IdentifiableAdapter<TestRow>(), items: IdentifiableAdapter<TestRow>())
            let flat = try diff(items, shuffled).moves.map { IndexPathPair(old: [0, $0.old], new: [0, $0.new]) }
            #expect(staged.changeset.itemMoves == flat, "\(items.map(\.id)) -> \(shuffled.map(\.id))")
        }
    }
}
