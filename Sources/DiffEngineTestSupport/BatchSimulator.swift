import DiffEngine
import Foundation

/// Applies `batch` to `before` the way UIKit does and compares the result with `after`,
/// the data the data source shows once the batch is applied. Returns every problem: the
/// validator's violations (each an "Invalid update" crash), a row or section that lands
/// where another belongs, or stale content (a changed row or header not reloaded).
///
/// UIKit's semantics: sections are deleted, moved and inserted (moved sections land at
/// their destination, others keep their order in the remaining places); within each
/// surviving section the same holds for rows; reloaded rows and sections show fresh data.
@inlinable
public func simulateBatch<Header, Item>(
    _ batch: BatchUpdate, from before: [SectionData<Header, Item>], to after: [SectionData<Header, Item>],
    sameSection: (Header, Header) -> Bool, sameHeaderContent: (Header, Header) -> Bool,
    sameItem: (Item, Item) -> Bool, sameItemContent: (Item, Item) -> Bool
) -> [String] {
    let violations = BatchUpdateValidator.validate(batch, oldRowCounts: before.map(\.items.count),
                                                   newRowCounts: after.map(\.items.count))
    if !violations.isEmpty { return violations.map(\.description) }
    var problems: [String] = []

    // Sections: where each old section lands.
    var origin = [Int?](repeating: nil, count: after.count) // old section at each new position; nil = inserted
    var taken = Set(batch.sectionInserts)
    for move in batch.sectionMoves {
        origin[move.to] = move.from
        taken.insert(move.to)
    }
    let movedFrom = Set(batch.sectionMoves.map(\.from)), deleted = Set(batch.sectionDeletes)
    var staying = before.indices.filter { !movedFrom.contains($0) && !deleted.contains($0) }.makeIterator()
    for position in after.indices where !taken.contains(position) { origin[position] = staying.next() }

    let reloadedSections = Set(batch.sectionReloads)
    let reloadedRows = Set(batch.reloads)
    let gone = Set(batch.deletes).union(batch.moves.map(\.from))
    for position in after.indices {
        guard let oldSection = origin[position] else { continue } // inserted: comes with its rows
        if !sameSection(before[oldSection].header, after[position].header) {
            problems.append("section \(oldSection) lands at \(position), where another section belongs")
            continue
        }
        if reloadedSections.contains(oldSection) { continue } // shows the data source's rows afresh
        if !sameHeaderContent(before[oldSection].header, after[position].header) {
            problems.append("section \(position)'s header changed but was not reloaded")
        }
        // Rows of this section: inserted and moved-in rows at their places, the rest in order.
        var rowOrigin = [IndexPath?](repeating: nil, count: after[position].items.count)
        var rowTaken = Set<Int>()
        for path in batch.inserts where path[0] == position { rowTaken.insert(path[1]) }
        for move in batch.moves where move.to[0] == position {
            rowOrigin[move.to[1]] = move.from
            rowTaken.insert(move.to[1])
        }
        var stayingRows = before[oldSection].items.indices
            .filter { !gone.contains(IndexPath(indexes: [oldSection, $0])) }.makeIterator()
        for row in after[position].items.indices where !rowTaken.contains(row) {
            rowOrigin[row] = stayingRows.next().map { IndexPath(indexes: [oldSection, $0]) }
        }
        for row in after[position].items.indices {
            guard let source = rowOrigin[row] else { continue } // inserted: fresh from the data source
            let oldItem = before[source[0]].items[source[1]], newItem = after[position].items[row]
            if !sameItem(oldItem, newItem) {
                problems.append("row \(source) lands at [\(position), \(row)], where another row belongs")
            } else if !reloadedRows.contains(source) && !sameItemContent(oldItem, newItem) {
                problems.append("row [\(position), \(row)] changed but was not reloaded")
            }
        }
    }
    return problems
}

/// Checks a staged changeset: every stage is a valid batch that turns the previous
/// stage's sections (the old sections first) into its own, and the last stage's sections
/// are the new sections.
@inlinable
public func checkStages<Header, Item>(
    _ staged: StagedChangeset<Header, Item>, old: [SectionData<Header, Item>], new: [SectionData<Header, Item>],
    sameSection: (Header, Header) -> Bool, sameHeaderContent: (Header, Header) -> Bool,
    sameItem: (Item, Item) -> Bool, sameItemContent: (Item, Item) -> Bool
) -> [String] {
    var state = old
    for (number, stage) in staged.stages.enumerated() {
        if stage.batch.isEmpty { return ["stage \(number + 1) is empty"] }
        let problems = simulateBatch(stage.batch, from: state, to: stage.sections, sameSection: sameSection,
                                     sameHeaderContent: sameHeaderContent, sameItem: sameItem, sameItemContent: sameItemContent)
        if !problems.isEmpty { return problems.map { "stage \(number + 1): \($0)" } }
        state = stage.sections
    }
    let sameSections = state.count == new.count && zip(state, new).allSatisfy { lhs, rhs in
        sameSection(lhs.header, rhs.header) && sameHeaderContent(lhs.header, rhs.header)
            && lhs.items.count == rhs.items.count
            && zip(lhs.items, rhs.items).allSatisfy { sameItem($0, $1) && sameItemContent($0, $1) }
    }
    return sameSections ? [] : ["the stages end in other sections than the new ones"]
}

/// `checkStages` for `Identifiable & Equatable` headers and items.
@inlinable
public func checkStages<Header: Identifiable & Equatable, Item: Identifiable & Equatable>(
    _ staged: StagedChangeset<Header, Item>, old: [SectionData<Header, Item>], new: [SectionData<Header, Item>]
) -> [String] {
    checkStages(staged, old: old, new: new, sameSection: { $0.id == $1.id }, sameHeaderContent: ==,
                sameItem: { $0.id == $1.id }, sameItemContent: ==)
}

/// Random sections for property tests: section and item identities from small alphabets
/// (so both repeat), empty sections, and a new list made by deleting, inserting, moving
/// and updating sections and moving items within and across sections.
public func makeSectionScenario(using generator: inout SeededGenerator) -> (old: [SectionData<TestRow, TestRow>], new: [SectionData<TestRow, TestRow>]) {
    let sectionAlphabet = [2, 4, 8, 30][Int.random(in: 0..<4, using: &generator)]
    let itemAlphabet = [3, 10, 60, 500][Int.random(in: 0..<4, using: &generator)]
    func item(_ generator: inout SeededGenerator) -> TestRow {
        TestRow(id: Int.random(in: 0..<itemAlphabet, using: &generator), content: Int.random(in: 0..<3, using: &generator))
    }
    func section(_ generator: inout SeededGenerator) -> SectionData<TestRow, TestRow> {
        let count = [0, 1, 3, 8][Int.random(in: 0..<4, using: &generator)]
        return SectionData(header: TestRow(id: Int.random(in: 0..<sectionAlphabet, using: &generator), content: Int.random(in: 0..<2, using: &generator)),
                           items: (0..<count).map { _ in item(&generator) })
    }
    let old = (0..<Int.random(in: 0...6, using: &generator)).map { _ in section(&generator) }
    var new = old
    func chance(_ rate: Double, _ generator: inout SeededGenerator) -> Bool { Double.random(in: 0..<1, using: &generator) < rate }
    new.removeAll { _ in chance(0.2, &generator) }
    for index in new.indices where chance(0.2, &generator) { new[index].header.content += 1 }
    if new.count > 1 && chance(0.5, &generator) {
        let moved = new.remove(at: Int.random(in: 0..<new.count, using: &generator))
        new.insert(moved, at: Int.random(in: 0...new.count, using: &generator))
    }
    for _ in 0..<Int.random(in: 0...2, using: &generator) {
        new.insert(section(&generator), at: Int.random(in: 0...new.count, using: &generator))
    }
    for s in new.indices {
        new[s].items.removeAll { _ in chance(0.15, &generator) }
        for i in new[s].items.indices where chance(0.15, &generator) { new[s].items[i].content += 1 }
        for _ in 0..<Int.random(in: 0...2, using: &generator) where chance(0.5, &generator) {
            new[s].items.insert(item(&generator), at: Int.random(in: 0...new[s].items.count, using: &generator))
        }
    }
    // Move some items across sections.
    for _ in 0..<Int.random(in: 0...3, using: &generator) where new.count > 1 {
        let from = Int.random(in: 0..<new.count, using: &generator), to = Int.random(in: 0..<new.count, using: &generator)
        guard !new[from].items.isEmpty else { continue }
        let moved = new[from].items.remove(at: Int.random(in: 0..<new[from].items.count, using: &generator))
        new[to].items.insert(moved, at: Int.random(in: 0...new[to].items.count, using: &generator))
    }
    return (old, new)
}
