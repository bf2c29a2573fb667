import DiffEngine
import DiffEngineTestSupport
import Foundation
import Testing



/// A renderer defined outside the engine, as any plugin would be: a one-line summary.
struct CountsRenderer: ChangesetRenderer {
    func render(_ changeset: Changeset) -> String {
        "-\(changeset.deletions.count) +\(changeset.insertions.count) ~\(changeset.updates.count) >\(changeset.moves.count)"
    }
}

@Suite struct BatchUpdateTests {
    @Test func projectionOfRandomChangesetsIsValidAndReproducesNew() throws {
        var generator = SeededGenerator(seed: 0xBA7C4)
        for _ in 0..<10_000 {
            let (old, new) = makeScenario(.random(using: &generator), using: &generator)
            for mode in MoveMode.allCases {
                let batch = BatchUpdateRenderer().render(try diff(old, new, options: DiffOptions(moves: mode)))
                let problems = simulateBatch(batch, from: [SectionData(header: 0, items: old)], to: [SectionData(header: 0, items: new)],
                                             sameSection: ==, sameHeaderContent: ==, sameItem: { $0.id == $1.id }, sameItemContent: ==)
                #expect(problems.isEmpty, "\(mode) \(old) -> \(new): \(problems)")
                if !problems.isEmpty { return }
            }
        }
    }

    @Test func movedAndUpdatedRowBecomesDeleteAndInsert() throws {
        let old = [TestRow(id: 1, content: 0), TestRow(id: 2, content: 0), TestRow(id: 3, content: 0)]
        let new = [TestRow(id: 3, content: 1), TestRow(id: 1, content: 1), TestRow(id: 2, content: 0)]
        let batch = BatchUpdateRenderer().render(try diff(old, new))
        #expect(batch == BatchUpdate(deletes: [path(0, 2)], inserts: [path(0, 0)], reloads: [path(0, 0)]))
        #expect(CountsRenderer().render(try diff(old, new)) == "-0 +0 ~2 >1")
    }

    /// Each rule UIKit enforces, broken on purpose, is caught.
    @Test(arguments: [
        (BatchUpdate(deletes: [path(0, 3)]), 3, 2, "rowOutOfRange"),
        (BatchUpdate(inserts: [path(0, 4)]), 3, 4, "rowOutOfRange"),
        (BatchUpdate(deletes: [path(0, 1), path(0, 1)]), 3, 2, "rowTouchedTwice"),
        (BatchUpdate(inserts: [path(0, 1), path(0, 1)]), 3, 5, "rowTouchedTwice"),
        (BatchUpdate(reloads: [path(0, 1)], moves: [BatchMove(from: path(0, 1), to: path(0, 2))]), 3, 3, "rowTouchedTwice"),
        (BatchUpdate(deletes: [path(0, 1)], reloads: [path(0, 1)]), 3, 2, "rowTouchedTwice"),
        (BatchUpdate(inserts: [path(0, 2)], moves: [BatchMove(from: path(0, 0), to: path(0, 2))]), 3, 4, "rowTouchedTwice"),
        (BatchUpdate(deletes: [path(0, 0)]), 3, 3, "rowCountMismatch"),
        (BatchUpdate(inserts: [path(0, 0)]), 3, 3, "rowCountMismatch"),
        (BatchUpdate(deletes: [IndexPath(indexes: [0])]), 3, 2, "malformedIndexPath"),
        (BatchUpdate(deletes: [path(1, 0)]), 3, 2, "sectionOutOfRange"),
    ])
    func validatorCatchesEachRowRule(batch: BatchUpdate, oldCount: Int, newCount: Int, rule: String) {
        let violations = BatchUpdateValidator.validate(batch, oldCount: oldCount, newCount: newCount)
        #expect(violations.contains { kind($0) == rule }, "\(violations)")
    }

    @Test(arguments: [
        (BatchUpdate(sectionDeletes: [2]), [1, 1], [1], "sectionOutOfRange"),
        (BatchUpdate(sectionDeletes: [0, 0]), [1, 1], [1], "sectionTouchedTwice"),
        (BatchUpdate(sectionDeletes: [0], sectionMoves: [BatchMove(from: 0, to: 1)]), [1, 1], [1], "sectionTouchedTwice"),
        (BatchUpdate(sectionReloads: [1], sectionMoves: [BatchMove(from: 1, to: 0)]), [1, 1], [1, 1], "sectionTouchedTwice"),
        (BatchUpdate(sectionInserts: [0]), [1], [1], "sectionCountMismatch"),
        (BatchUpdate(sectionDeletes: [0], moves: [BatchMove(from: path(0, 0), to: path(0, 0))]), [1, 1], [2], "rowInRemovedSection"),
        (BatchUpdate(sectionReloads: [0], deletes: [path(0, 0)]), [1], [0], "rowInRemovedSection"),
        (BatchUpdate(sectionInserts: [1], moves: [BatchMove(from: path(0, 0), to: path(1, 0))]), [1], [0, 1], "rowInInsertedSection"),
        (BatchUpdate(moves: [BatchMove(from: path(0, 0), to: path(1, 0))]), [1, 0], [1, 1], "rowCountMismatch"),
        // A reload is a delete + insert to UIKit: nothing may be inserted or moved into it.
        (BatchUpdate(sectionReloads: [0], inserts: [path(0, 1)]), [1], [2], "rowInReloadedSection"),
        (BatchUpdate(sectionReloads: [1], moves: [BatchMove(from: path(0, 0), to: path(1, 0))]), [1, 1], [0, 2], "rowInReloadedSection"),
        (BatchUpdate(sectionDeletes: [0], sectionReloads: [1], inserts: [path(0, 0)]), [1, 1], [2], "rowInReloadedSection"),
    ])
    func validatorCatchesEachSectionRule(batch: BatchUpdate, old: [Int], new: [Int], rule: String) {
        let violations = BatchUpdateValidator.validate(batch, oldRowCounts: old, newRowCounts: new)
        #expect(violations.contains { kind($0) == rule }, "\(violations)")
    }

    @Test func validBatchesPass() {
        let batch = BatchUpdate(sectionDeletes: [0], sectionInserts: [2], sectionMoves: [BatchMove(from: 2, to: 0)],
                                deletes: [path(1, 0)], inserts: [path(1, 2)], reloads: [path(1, 1)],
                                moves: [BatchMove(from: path(2, 0), to: path(1, 0))])
        #expect(BatchUpdateValidator.validate(batch, oldRowCounts: [5, 2, 1], newRowCounts: [0, 3, 4]).isEmpty)
    }
}

/// The profile screen of "iOS: Animate TableView Updates": sections nameAndPicture,
/// about, email, friend, attribute.
struct ProfileItem: Identifiable, Hashable, Codable, CustomStringConvertible {
    var id: String
    var text: String
    var description: String { id }
}

@Suite struct SectionedDiffTests {
    func section(_ id: String, _ items: [ProfileItem]) -> SectionData<ProfileItem, ProfileItem> {
        SectionData(header: ProfileItem(id: id, text: id), items: items)
    }

    func item(_ id: String, _ text: String? = nil) -> ProfileItem { ProfileItem(id: id, text: text ?? id) }

    @Test func profileScreenGoldenStages() throws {
        let old = [
            section("nameAndPicture", [item("name", "Jane")]), section("about", [item("about", "Hi")]),
            section("email", [item("email", "jane@old.example")]),
            section("friend", [item("alice"), item("bob"), item("carol"), item("dave")]),
            section("attribute", [item("height"), item("weight")]),
        ]
        // Remove the attributes section, change the email, remove bob, add eve, reorder friends.
        let new = [
            section("nameAndPicture", [item("name", "Jane")]), section("about", [item("about", "Hi")]),
            section("email", [item("email", "jane@new.example")]),
            section("friend", [item("dave"), item("alice"), item("carol"), item("eve")]),
        ]
        let staged = try stagedDiff(old, new, headers: IdentifiableAdapter<ProfileItem>(), items: IdentifiableAdapter<ProfileItem>())
        #expect(staged.stages.map(\.batch) == [
            // 1: bob goes, the email reloads (old positions).
            BatchUpdate(deletes: [path(3, 1)], reloads: [path(2, 0)]),
            // 2: the attribute section goes.
            BatchUpdate(sectionDeletes: [4]),
            // 3: alice and carol keep their order; dave moves to the top; eve comes.
            BatchUpdate(inserts: [path(3, 3)], moves: [BatchMove(from: path(3, 2), to: path(3, 0))]),
        ])
        #expect(staged.stages[0].sections[3].items.map(\.id) == ["alice", "carol", "dave"])
        #expect(staged.stages[0].sections[2].items[0].text == "jane@new.example")
        #expect(staged.stages[1].sections.map(\.header.id) == ["nameAndPicture", "about", "email", "friend"])
        #expect(staged.stages[2].sections == new)
        #expect(staged.changeset.sections.deletions == [4])
        #expect(staged.changeset.itemDeletions == [path(3, 1)] && staged.changeset.itemInsertions == [path(3, 3)])
        #expect(staged.changeset.itemUpdates == [IndexPathPair(old: path(2, 0), new: path(2, 0))])
        #expect(staged.changeset.itemMoves == [IndexPathPair(old: path(3, 3), new: path(3, 0))])
        #expect(checkStages(staged, old: old, new: new).isEmpty)
        #expect(try stagedDiff(new, new, headers: IdentifiableAdapter<ProfileItem>(), items: IdentifiableAdapter<ProfileItem>()).stages.isEmpty)
    }

    @Test func itemsMoveAcrossSectionsAndSectionsMove() throws {
        let old = [section("a", [item("1"), item("2")]), section("b", [item("3")]), section("c", [item("4", "x")])]
        let new = [section("c", [item("4", "y"), item("1")]), section("b", [item("3")]), section("a", [item("2")])]
        let staged = try stagedDiff(old, new, headers: IdentifiableAdapter<ProfileItem>(), items: IdentifiableAdapter<ProfileItem>())
        #expect(checkStages(staged, old: old, new: new).isEmpty)
        #expect(staged.changeset.itemMoves.contains(IndexPathPair(old: path(0, 0), new: path(0, 1))))
    }

    @Test(arguments: MoveMode.allCases)
    func randomSectionsStageCorrectly(mode: MoveMode) throws {
        var generator = SeededGenerator(seed: 0x5EC7 &+ UInt64(MoveMode.allCases.firstIndex(of: mode)!))
        var failures = 0
        for caseNumber in 0..<(mode == .minimal ? 10_000 : 3_000) {
            let (old, new) = makeSectionScenario(using: &generator)
            let staged = try stagedDiff(old, new, headers: IdentifiableAdapter<TestRow>(), items: IdentifiableAdapter<TestRow>(),
                                        options: DiffOptions(moves: mode))
            var problems = checkStages(staged, old: old, new: new)
            problems += checkChangeset(staged.changeset.sections, old: old.map(\.header), new: new.map(\.header), mode: mode)
            for update in staged.changeset.itemUpdates {
                let before = old[update.old[0]].items[update.old[1]], after = new[update.new[0]].items[update.new[1]]
                if before.id != after.id || before == after { problems.append("item update \(update) is not real") }
            }
            if !problems.isEmpty {
                failures += 1
                Issue.record("case \(caseNumber): \(problems.prefix(3))\nold \(old)\nnew \(new)")
                if failures >= 3 { return }
            }
        }
    }

    @Test func jsonRenderers() throws {
        let changes = Changeset(oldCount: 2, newCount: 3, deletions: [1], insertions: [0, 2], moves: [], droppedOld: [4], droppedNew: [])
        #expect(String(decoding: JSONChangesetRenderer().render(changes), as: UTF8.self)
                == #"{"oldCount":2,"newCount":3,"deletions":[1],"insertions":[0,2],"updates":[],"moves":[],"droppedOld":[4],"droppedNew":[]}"# + "\n")
        let old = [section("a", [item("1")])], new = [section("a", [item("1"), item("2")])]
        let staged = try stagedDiff(old, new, headers: IdentifiableAdapter<ProfileItem>(), items: IdentifiableAdapter<ProfileItem>())
        let json = try JSONSerialization.jsonObject(with: Data(JSONStagesRenderer<ProfileItem, ProfileItem>().render(staged))) as? [String: Any]
        let stages = json?["stages"] as? [[String: Any]]
        #expect(stages?.count == 1)
        #expect((stages?.first?["batch"] as? [String: Any])?["inserts"] as? [[Int]] == [[0, 1]])
        #expect(((stages?.first?["sections"] as? [[String: Any]])?.first?["items"] as? [Any])?.count == 2)
        let batch = BatchUpdate(sectionMoves: [BatchMove(from: 1, to: 0)], deletes: [path(0, 1)],
                                moves: [BatchMove(from: path(0, 0), to: path(1, 2))])
        let encoded = try JSONEncoder().encode(batch)
        #expect(try JSONDecoder().decode(BatchUpdate.self, from: encoded) == batch)
        #expect(String(decoding: encoded, as: UTF8.self).contains(#""moves":[[[0,0],[1,2]]]"#))
    }
}
