@_spi(Testing) import DiffEngine
import DiffEngineTestSupport
import Testing

@Suite struct DifferTests {
    /// Streams of snapshots: every update checks against the reference from the previous one.
    @Test(arguments: [(MoveMode.minimal, false, 0), (.displaced, true, 0), (.none, false, 0), (.minimal, true, 3)])
    func streamsReproduceEverySnapshot(mode: MoveMode, keepsIdentities: Bool, weakBits: Int) {
        var generator = SeededGenerator(seed: 0xD1FF_E4 &+ UInt64(weakBits))
        for stream in 0..<300 {
            let differ = Differ(adapter: IdentifiableAdapter<TestRow>(), moves: mode, keepsIdentities: keepsIdentities)
            differ.weakenedIdentityHashBits = weakBits
            var previous: [TestRow] = []
            for step in 0..<12 {
                let next = step == 0 ? makeScenario(.random(using: &generator), using: &generator).old
                    : makeScenario(.random(using: &generator), using: &generator).new.enumerated().map { $0.offset % 3 == 0 ? $0.element : ($0.offset < previous.count ? previous[$0.offset] : $0.element) }
                let update = differ.diff(next)
                #expect(update.isInitial == (step == 0))
                let problems = checkChangeset(update.changeset, old: previous, new: next, mode: mode)
                if !problems.isEmpty {
                    Issue.record("stream \(stream) step \(step): \(problems.prefix(3))")
                    return
                }
                if keepsIdentities {
                    #expect(update.deletedIdentities == update.changeset.deletions.map { previous[$0].id })
                } else {
                    #expect(update.deletedIdentities == nil)
                }
                previous = next
            }
        }
    }

    @Test func initialResetAndKeptBytes() {
        let differ = Differ(adapter: IdentifiableAdapter<TestRow>())
        let rows = [TestRow(id: 1, content: 0), TestRow(id: 2, content: 0)]
        #expect(differ.diff(rows) == DifferUpdate(changeset: Changeset(oldCount: 0, newCount: 2, insertions: [0, 1]), isInitial: true, deletedIdentities: nil))
        #expect(!differ.diff(rows).changeset.hasChanges)
        #expect(differ.rowCount == 2 && differ.keptBytesPerRow == 16)
        differ.reset()
        #expect(differ.diff(rows).isInitial)
        #expect(Differ(adapter: IdentifiableAdapter<TestRow>(), keepsIdentities: true).keptBytesPerRow == 24)
    }

    /// Byte rows and strings (hashed identities) through the differ.
    @Test func hashedIdentitiesWithAndWithoutKeptIdentities() {
        for keeps in [false, true] {
            let differ = Differ(adapter: HashableAdapter<String>(), keepsIdentities: keeps)
            _ = differ.diff(["a", "b", "c"])
            let update = differ.diff(["c", "a", "d"])
            #expect(update.changeset.deletions == [1] && update.changeset.insertions == [2])
            #expect(update.deletedIdentities == (keeps ? ["b"] : nil))
        }
    }
}
