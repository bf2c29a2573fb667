#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A section of a two-level list: a header model and its items.
public struct SectionData<Header, Item> {
    /// The section's own model (its identity and header content).
    public var header: Header
    /// The rows of the section.
    public var items: [Item]

    public init(header: Header, items: [Item]) {
        self.header = header
        self.items = items
    }
}

extension SectionData: Equatable where Header: Equatable, Item: Equatable {}
extension SectionData: Hashable where Header: Hashable, Item: Hashable {}
extension SectionData: Sendable where Header: Sendable, Item: Sendable {}

/// An old index path and the new index path of the same item.
public struct IndexPathPair: Hashable, Sendable, Codable {
    public var old: IndexPath
    public var new: IndexPath

    public init(old: IndexPath, new: IndexPath) {
        self.old = old
        self.new = new
    }
}

/// What changed between two lists of sections (SPEC.md section 6).
///
/// Items are matched across sections, so an item can move from one section to another.
/// Items of a deleted section go with it and items of an inserted section come with it:
/// neither appears in `itemDeletions` or `itemInsertions` (an item that is matched across
/// such a section is an item move).
public struct SectionedChangeset: Equatable, Sendable, Codable {
    /// Sections by identity; `updates` are sections whose header content changed.
    public var sections: Changeset
    /// Old paths of items that are gone, in sections that stay.
    public var itemDeletions: [IndexPath]
    /// New paths of items that are new, in sections that were there before.
    public var itemInsertions: [IndexPath]
    /// Matched items whose content changed.
    public var itemUpdates: [IndexPathPair]
    /// Matched items that changed section, or changed order within their section.
    public var itemMoves: [IndexPathPair]
}

/// One batch of a staged changeset and the sections to show once it is applied.
public struct ChangesetStage<Header, Item> {
    /// The batch, valid on its own under `BatchUpdateValidator`.
    public var batch: BatchUpdate
    /// The data source's sections to set right before applying `batch`.
    public var sections: [SectionData<Header, Item>]
}

extension ChangesetStage: Equatable where Header: Equatable, Item: Equatable {}
extension ChangesetStage: Sendable where Header: Sendable, Item: Sendable {}

/// A sectioned diff and the stages that animate it.
public struct StagedChangeset<Header, Item> {
    /// What changed, as index paths.
    public var changeset: SectionedChangeset
    /// Batches to apply in order, each with its data; applying them all to the old sections
    /// gives the new sections. Empty when nothing changed.
    public var stages: [ChangesetStage<Header, Item>]
}

extension StagedChangeset: Sendable where Header: Sendable, Item: Sendable {}

/// Diffs two lists of sections: sections by the header adapter, items by the item
/// adapter, items matched across sections; and stages the result as batch updates.
///
/// The stages, each dropped when empty (DifferenceKit's staged changeset is the idea):
/// 1. item deletes and reloads, in old positions;
/// 2. section deletes;
/// 3. section moves and inserts (inserted sections come with their items);
/// 4. section reloads of changed headers;
/// 5. item inserts and moves (across sections too), in final positions.
///
/// An item that is both moved and updated is reloaded in stage 1 and moved in stage 5;
/// an item matched out of a deleted section or into an inserted one is deleted and
/// inserted instead, since UIKit cannot move it there.
///
/// - Parameters:
///   - old: the sections before.
///   - new: the sections after.
///   - headers: reads section identity and header content.
///   - items: reads item identity and content.
///   - options: the move mode for sections and the duplicates policy (`pairInOrder` or
///     `reject`); item moves inside the last stage are always minimal.
/// - Returns: the changeset and its stages.
/// - Throws: `DuplicateIdentityError` under `DuplicatePolicy.reject`.
/// - Complexity: O(S + N) expected for S sections and N items, plus the moves' O(k log k).
public func stagedDiff<Header, Item, HeaderAdapter: RowAdapter, ItemAdapter: RowAdapter>(
    _ old: [SectionData<Header, Item>], _ new: [SectionData<Header, Item>],
    headers: HeaderAdapter, items: ItemAdapter, options: DiffOptions = DiffOptions()
) throws(DuplicateIdentityError) -> StagedChangeset<Header, Item>
where HeaderAdapter.Row == Header, ItemAdapter.Row == Item {
    precondition(options.duplicates != .firstWins, "firstWins is not supported for sections; deduplicate first")
    let sections = try diff(old.map(\.header), new.map(\.header), using: headers, options: options)
    let sectionNewToOld = _pairing(of: sections)
    var sectionOldToNew = [Int?](repeating: nil, count: old.count)
    for (newSection, oldSection) in sectionNewToOld.enumerated() {
        if let oldSection { sectionOldToNew[oldSection] = newSection }
    }

    // Items of all sections, flattened in order, matched globally.
    let oldPaths = old.indices.flatMap { s in old[s].items.indices.map { (s, $0) } }
    let newPaths = new.indices.flatMap { s in new[s].items.indices.map { (s, $0) } }
    let itemChanges = try diff(old.flatMap(\.items), new.flatMap(\.items), using: items,
                               options: DiffOptions(moves: .displaced, duplicates: options.duplicates))
    let itemNewToOld = _pairing(of: itemChanges)
    let updatedNew = Set(itemChanges.updates.map(\.new))
    func path(_ pair: (Int, Int)) -> IndexPath { IndexPath(indexes: [pair.0, pair.1]) }

    // Classify every matched item: kept (both sections stay), or broken (delete + insert).
    var itemOldToNew = [Int?](repeating: nil, count: oldPaths.count)
    for (newFlat, oldFlat) in itemNewToOld.enumerated() {
        if let oldFlat { itemOldToNew[oldFlat] = newFlat }
    }
    func isKept(oldFlat: Int, newFlat: Int) -> Bool {
        sectionOldToNew[oldPaths[oldFlat].0] != nil && sectionNewToOld[newPaths[newFlat].0] != nil
    }

    // The summary changeset.
    var summary = SectionedChangeset(sections: sections, itemDeletions: [], itemInsertions: [], itemUpdates: [], itemMoves: [])
    for (oldFlat, (s, _)) in oldPaths.enumerated() where itemOldToNew[oldFlat] == nil && sectionOldToNew[s] != nil {
        summary.itemDeletions.append(path(oldPaths[oldFlat]))
    }
    for (newFlat, (s, _)) in newPaths.enumerated() where itemNewToOld[newFlat] == nil && sectionNewToOld[s] != nil {
        summary.itemInsertions.append(path(newPaths[newFlat]))
    }
    let stayingInOrder = _itemsKeepingOrder(newPaths: newPaths, itemNewToOld: itemNewToOld, oldPaths: oldPaths,
                                            sectionNewToOld: sectionNewToOld, isKept: { _, _ in true })
    for (newFlat, oldFlat) in itemNewToOld.enumerated() {
        guard let oldFlat else { continue }
        let pair = IndexPathPair(old: path(oldPaths[oldFlat]), new: path(newPaths[newFlat]))
        if updatedNew.contains(newFlat) { summary.itemUpdates.append(pair) }
        if !stayingInOrder.contains(newFlat) { summary.itemMoves.append(pair) }
    }

    // Stage 1: item deletes and reloads in old positions, in sections that stay.
    var stages: [ChangesetStage<Header, Item>] = []
    var batch = BatchUpdate()
    var removedOld = Set<Int>()
    for (oldFlat, (s, i)) in oldPaths.enumerated() where sectionOldToNew[s] != nil {
        if let newFlat = itemOldToNew[oldFlat], isKept(oldFlat: oldFlat, newFlat: newFlat) {
            if updatedNew.contains(newFlat) { batch.reloads.append(path((s, i))) }
        } else {
            batch.deletes.append(path((s, i)))
            removedOld.insert(oldFlat)
        }
    }
    /// An item's value once stage 1 has reloaded it.
    func itemValueAfterStage1(_ oldFlat: Int) -> Item {
        if let newFlat = itemOldToNew[oldFlat], isKept(oldFlat: oldFlat, newFlat: newFlat), updatedNew.contains(newFlat) {
            let (ns, ni) = newPaths[newFlat]
            return new[ns].items[ni]
        }
        let (s, i) = oldPaths[oldFlat]
        return old[s].items[i]
    }
    // The items of each old section that are still there after stage 1, by old flat index.
    var remaining: [[Int]] = old.indices.map { _ in [] }
    for (oldFlat, (s, _)) in oldPaths.enumerated() where !removedOld.contains(oldFlat) { remaining[s].append(oldFlat) }
    func sectionAfterStage1(_ s: Int) -> SectionData<Header, Item> {
        guard sectionOldToNew[s] != nil else { return old[s] } // deleted in stage 2, untouched before
        return SectionData(header: old[s].header, items: remaining[s].map(itemValueAfterStage1))
    }
    if !batch.isEmpty {
        stages.append(ChangesetStage(batch: batch, sections: old.indices.map(sectionAfterStage1)))
    }

    // Stage 2: section deletes.
    let survivingOld = old.indices.filter { sectionOldToNew[$0] != nil }
    let deletedSections = old.indices.filter { sectionOldToNew[$0] == nil }
    if !deletedSections.isEmpty {
        stages.append(ChangesetStage(batch: BatchUpdate(sectionDeletes: deletedSections),
                                     sections: survivingOld.map(sectionAfterStage1)))
    }

    // Stage 3: section moves and inserts, into final section positions.
    let rankAfterDeletes = Dictionary(uniqueKeysWithValues: survivingOld.enumerated().map { ($1, $0) })
    var sectionBatch = BatchUpdate()
    for move in sections.moves {
        sectionBatch.sectionMoves.append(BatchMove(from: rankAfterDeletes[move.old]!, to: move.new))
    }
    sectionBatch.sectionInserts = new.indices.filter { sectionNewToOld[$0] == nil }
    let afterStage3: [SectionData<Header, Item>] = new.indices.map { s in
        guard let oldSection = sectionNewToOld[s] else { return new[s] }
        return sectionAfterStage1(oldSection)
    }
    if !sectionBatch.isEmpty {
        stages.append(ChangesetStage(batch: sectionBatch, sections: afterStage3))
    }

    // Stage 4: section reloads for changed headers (at final positions).
    let updatedSections = sections.updates.map(\.new)
    var afterStage4 = afterStage3
    for s in updatedSections { afterStage4[s].header = new[s].header }
    if !updatedSections.isEmpty {
        stages.append(ChangesetStage(batch: BatchUpdate(sectionReloads: updatedSections.sorted()), sections: afterStage4))
    }

    // Stage 5: item inserts and moves into final positions. Before it, a surviving final
    // section s holds the remaining old items of its old section, in old order.
    var intermediatePath: [Int: (Int, Int)] = [:] // old flat index -> (final section, row)
    for s in new.indices {
        guard let oldSection = sectionNewToOld[s] else { continue }
        for (row, oldFlat) in remaining[oldSection].enumerated() { intermediatePath[oldFlat] = (s, row) }
    }
    let keepsOrder = _itemsKeepingOrder(newPaths: newPaths, itemNewToOld: itemNewToOld, oldPaths: oldPaths,
                                        sectionNewToOld: sectionNewToOld, isKept: isKept)
    var itemBatch = BatchUpdate()
    for (newFlat, (s, j)) in newPaths.enumerated() where sectionNewToOld[s] != nil {
        if let oldFlat = itemNewToOld[newFlat], isKept(oldFlat: oldFlat, newFlat: newFlat) {
            if !keepsOrder.contains(newFlat) {
                itemBatch.moves.append(BatchMove(from: path(intermediatePath[oldFlat]!), to: path((s, j))))
            }
        } else {
            itemBatch.inserts.append(path((s, j)))
        }
    }
    if !itemBatch.isEmpty {
        stages.append(ChangesetStage(batch: itemBatch, sections: new))
    }
    return StagedChangeset(changeset: summary, stages: stages)
}

/// New flat indexes of matched items that need no move: kept items whose old section is
/// their new section's counterpart and that lie on a longest increasing run of old
/// positions within that section.
private func _itemsKeepingOrder(
    newPaths: [(Int, Int)], itemNewToOld: [Int?], oldPaths: [(Int, Int)], sectionNewToOld: [Int?],
    isKept: (Int, Int) -> Bool
) -> Set<Int> {
    var staying = Set<Int>()
    var start = 0
    while start < newPaths.count {
        let section = newPaths[start].0
        var end = start
        while end < newPaths.count && newPaths[end].0 == section { end += 1 }
        // Items of this section coming from its counterpart, by old flat index.
        let candidates = (start..<end).filter { newFlat in
            guard let oldFlat = itemNewToOld[newFlat], let oldSection = sectionNewToOld[section] else { return false }
            return oldPaths[oldFlat].0 == oldSection && isKept(oldFlat, newFlat)
        }
        staying.formUnion(_longestIncreasing(candidates, by: { itemNewToOld[$0]! }))
        start = end
    }
    return staying
}

/// The members of one longest subsequence of `elements` whose keys increase.
private func _longestIncreasing(_ elements: [Int], by key: (Int) -> Int) -> [Int] {
    var pileTops: [Int] = [] // index into elements of each pile's top
    var previous = [Int?](repeating: nil, count: elements.count)
    for index in elements.indices {
        let value = key(elements[index])
        var low = 0, high = pileTops.count
        while low < high {
            let middle = (low + high) / 2
            if key(elements[pileTops[middle]]) < value { low = middle + 1 } else { high = middle }
        }
        previous[index] = low > 0 ? pileTops[low - 1] : nil
        if low == pileTops.count { pileTops.append(index) } else { pileTops[low] = index }
    }
    var result: [Int] = []
    var cursor = pileTops.last
    while let index = cursor {
        result.append(elements[index])
        cursor = previous[index]
    }
    return result
}

/// The pairing a changeset implies (SPEC.md section 4, rule 2), by new index.
func _pairing(of changeset: Changeset) -> [Int?] {
    var newToOld = [Int?](repeating: nil, count: changeset.newCount)
    var oldTouched = [Bool](repeating: false, count: changeset.oldCount)
    var newTouched = [Bool](repeating: false, count: changeset.newCount)
    for index in changeset.deletions { oldTouched[index] = true }
    for index in changeset.insertions { newTouched[index] = true }
    for move in changeset.moves {
        oldTouched[move.old] = true
        newTouched[move.new] = true
        newToOld[move.new] = move.old
    }
    var oldIndex = 0
    for newIndex in 0..<changeset.newCount where !newTouched[newIndex] {
        while oldTouched[oldIndex] { oldIndex += 1 }
        newToOld[newIndex] = oldIndex
        oldIndex += 1
    }
    return newToOld
}
