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

    /// Creates a section from its header model and its items.
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
    /// The item's `[section, item]` index path before.
    public var old: IndexPath
    /// The item's `[section, item]` index path after.
    public var new: IndexPath

    /// Creates the pair of an item's old and new index path.
    public init(old: IndexPath, new: IndexPath) {
        self.old = old
        self.new = new
    }
}

/// What changed between two lists of sections (<doc:Sections>).
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

    /// Creates a sectioned changeset from its section and item changes.
    public init(sections: Changeset, itemDeletions: [IndexPath], itemInsertions: [IndexPath],
                itemUpdates: [IndexPathPair], itemMoves: [IndexPathPair]) {
        self.sections = sections
        self.itemDeletions = itemDeletions
        self.itemInsertions = itemInsertions
        self.itemUpdates = itemUpdates
        self.itemMoves = itemMoves
    }
}

/// One batch of a staged changeset and the sections to show once it is applied.
public struct ChangesetStage<Header, Item> {
    /// The batch, valid on its own under `BatchUpdateValidator`.
    public var batch: BatchUpdate
    /// The data source's sections to set right before applying `batch`.
    public var sections: [SectionData<Header, Item>]

    /// Creates a stage: the batch and the sections a data source shows after it.
    public init(batch: BatchUpdate, sections: [SectionData<Header, Item>]) {
        self.batch = batch
        self.sections = sections
    }
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

    /// Creates a staged changeset from the changes and their stages.
    public init(changeset: SectionedChangeset, stages: [ChangesetStage<Header, Item>]) {
        self.changeset = changeset
        self.stages = stages
    }
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
@inlinable
public func stagedDiff<Header, Item, HeaderAdapter: RowAdapter, ItemAdapter: RowAdapter>(
    _ old: [SectionData<Header, Item>], _ new: [SectionData<Header, Item>],
    headers: HeaderAdapter, items: ItemAdapter, options: DiffOptions = DiffOptions()
) throws(DuplicateIdentityError) -> StagedChangeset<Header, Item>
where HeaderAdapter.Row == Header, ItemAdapter.Row == Item {
    precondition(options.duplicates != .firstWins, "firstWins is not supported for sections; deduplicate first")
    let oldHeaders = old.map(\.header), newHeaders = new.map(\.header)
    if options.duplicates == .reject {
        let headerError = oldHeaders.withUnsafeBufferPointer { _firstRepeat($0, .old, headers, options) }
            ?? newHeaders.withUnsafeBufferPointer { _firstRepeat($0, .new, headers, options) }
        if let headerError { throw headerError }
    }
    let (sections, sectionNewToOld) = oldHeaders.withUnsafeBufferPointer { oldBuffer in
        newHeaders.withUnsafeBufferPointer { newBuffer in _diffRowsAndPairing(oldBuffer, newBuffer, headers, options) }
    }
    var sectionOldToNew = [Int](repeating: -1, count: old.count)
    for (newSection, oldSection) in sectionNewToOld.enumerated() where oldSection >= 0 { sectionOldToNew[oldSection] = newSection }

    // Items of all sections, flattened in order and matched globally. A flat index f of
    // section s is row f - start[s] of it.
    let oldLayout = _FlatLayout(old.map(\.items.count)), newLayout = _FlatLayout(new.map(\.items.count))
    let oldItems = old.flatMap(\.items), newItems = new.flatMap(\.items)
    if options.duplicates == .reject {
        let itemError = oldItems.withUnsafeBufferPointer { _firstRepeat($0, .old, items, options) }
            ?? newItems.withUnsafeBufferPointer { _firstRepeat($0, .new, items, options) }
        if let itemError { throw itemError }
    }
    let (itemNewToOld, updatedNew) = oldItems.withUnsafeBufferPointer { oldBuffer in
        newItems.withUnsafeBufferPointer { newBuffer in _pairRows(oldBuffer, newBuffer, items, options) }
    }
    var itemOldToNew = [Int](repeating: -1, count: oldItems.count)
    for (newFlat, oldFlat) in itemNewToOld.enumerated() where oldFlat >= 0 { itemOldToNew[oldFlat] = newFlat }
    // A match is kept when both its sections stay; otherwise it is a delete plus an insert.
    func isKept(oldFlat: Int, newFlat: Int) -> Bool {
        sectionOldToNew[oldLayout.section[oldFlat]] >= 0 && sectionNewToOld[newLayout.section[newFlat]] >= 0
    }
    // Items that keep their place: matched within a section's counterpart and on a
    // longest run in order there. (Such a match is always kept: both sections stay.)
    let stayingInOrder = _itemsKeepingOrder(newLayout: newLayout, oldLayout: oldLayout,
                                            itemOldToNew: itemOldToNew, sectionNewToOld: sectionNewToOld)

    // The summary changeset.
    var summary = SectionedChangeset(sections: sections, itemDeletions: [], itemInsertions: [], itemUpdates: [], itemMoves: [])
    for oldFlat in oldItems.indices where itemOldToNew[oldFlat] < 0 && sectionOldToNew[oldLayout.section[oldFlat]] >= 0 {
        summary.itemDeletions.append(oldLayout.path(oldFlat))
    }
    for newFlat in newItems.indices {
        let oldFlat = itemNewToOld[newFlat]
        guard oldFlat >= 0 else {
            if sectionNewToOld[newLayout.section[newFlat]] >= 0 { summary.itemInsertions.append(newLayout.path(newFlat)) }
            continue
        }
        guard updatedNew[newFlat] || !stayingInOrder[newFlat] else { continue }
        let pair = IndexPathPair(old: oldLayout.path(oldFlat), new: newLayout.path(newFlat))
        if updatedNew[newFlat] { summary.itemUpdates.append(pair) }
        if !stayingInOrder[newFlat] { summary.itemMoves.append(pair) }
    }

    // Stage 1: item deletes and reloads in old positions, in sections that stay. After it,
    // each staying old section holds its remaining items, reloaded ones with new content.
    var stages: [ChangesetStage<Header, Item>] = []
    var batch = BatchUpdate()
    var stage1Sections = old
    var remainingRows = [Int](repeating: 0, count: oldItems.count) // old flat -> row after stage 1
    for s in old.indices where sectionOldToNew[s] >= 0 {
        var items: [Item] = []
        var touched = false
        for oldFlat in oldLayout.start[s]..<oldLayout.start[s + 1] {
            let newFlat = itemOldToNew[oldFlat]
            if newFlat >= 0 && isKept(oldFlat: oldFlat, newFlat: newFlat) {
                remainingRows[oldFlat] = items.count
                if updatedNew[newFlat] {
                    batch.reloads.append(oldLayout.path(oldFlat))
                    items.append(newItems[newFlat])
                    touched = true
                } else {
                    items.append(oldItems[oldFlat])
                }
            } else {
                batch.deletes.append(oldLayout.path(oldFlat))
                touched = true
            }
        }
        if touched { stage1Sections[s].items = items } // untouched sections share their array
    }
    if !batch.isEmpty { stages.append(ChangesetStage(batch: batch, sections: stage1Sections)) }

    // Stage 2: section deletes.
    let survivingOld = old.indices.filter { sectionOldToNew[$0] >= 0 }
    let deletedSections = old.indices.filter { sectionOldToNew[$0] < 0 }
    if !deletedSections.isEmpty {
        stages.append(ChangesetStage(batch: BatchUpdate(sectionDeletes: deletedSections),
                                     sections: survivingOld.map { stage1Sections[$0] }))
    }

    // Stage 3: section moves and inserts, into final section positions.
    var rankAfterDeletes = [Int](repeating: -1, count: old.count)
    for (rank, s) in survivingOld.enumerated() { rankAfterDeletes[s] = rank }
    var sectionBatch = BatchUpdate()
    sectionBatch.sectionMoves = sections.moves.map { BatchMove(from: rankAfterDeletes[$0.old], to: $0.new) }
    sectionBatch.sectionInserts = new.indices.filter { sectionNewToOld[$0] < 0 }
    var finalOrder = new.indices.map { sectionNewToOld[$0] >= 0 ? stage1Sections[sectionNewToOld[$0]] : new[$0] }
    if !sectionBatch.isEmpty { stages.append(ChangesetStage(batch: sectionBatch, sections: finalOrder)) }

    // Stage 4: section reloads for changed headers (at final positions).
    if !sections.updates.isEmpty {
        for update in sections.updates { finalOrder[update.new].header = new[update.new].header }
        stages.append(ChangesetStage(batch: BatchUpdate(sectionReloads: sections.updates.map(\.new).sorted()), sections: finalOrder))
    }

    // Stage 5: item inserts and moves into final positions; a staying final section s
    // holds the remaining items of its old section, in old order.
    var itemBatch = BatchUpdate()
    for newFlat in newItems.indices {
        let s = newLayout.section[newFlat]
        guard sectionNewToOld[s] >= 0 else { continue } // comes with its inserted section
        let oldFlat = itemNewToOld[newFlat]
        if oldFlat >= 0 && isKept(oldFlat: oldFlat, newFlat: newFlat) {
            if !stayingInOrder[newFlat] {
                let from = _indexPath(sectionOldToNew[oldLayout.section[oldFlat]], remainingRows[oldFlat])
                itemBatch.moves.append(BatchMove(from: from, to: newLayout.path(newFlat)))
            }
        } else {
            itemBatch.inserts.append(newLayout.path(newFlat))
        }
    }
    if !itemBatch.isEmpty { stages.append(ChangesetStage(batch: itemBatch, sections: new)) }
    return StagedChangeset(changeset: summary, stages: stages)
}

/// Where each item of the flattened sections is: its section, and each section's first
/// flat index.
@usableFromInline
struct _FlatLayout {
    /// By section, its first flat index; one more entry holds the total.
    @usableFromInline var start: [Int]
    /// By flat index, its section.
    @usableFromInline var section: [Int]

    @inlinable
    init(_ counts: [Int]) {
        start = [0]
        start.reserveCapacity(counts.count + 1)
        section = []
        section.reserveCapacity(counts.reduce(0, +))
        for (index, count) in counts.enumerated() {
            start.append(start[index] + count)
            section.append(contentsOf: repeatElement(index, count: count))
        }
    }

    @inlinable
    func path(_ flat: Int) -> IndexPath {
        let s = section[flat]
        return _indexPath(s, flat - start[s])
    }
}

/// By new flat index: whether a matched item needs no move, because its old section is
/// its new section's counterpart and it lies on the longest increasing run of new positions
/// (taken in old order) within that section that the core's `minimal` rule keeps — so an
/// in-section swap moves the item a flat diff would move.
@usableFromInline
func _itemsKeepingOrder(newLayout: _FlatLayout, oldLayout: _FlatLayout, itemOldToNew: [Int], sectionNewToOld: [Int]) -> [Bool] {
    var staying = [Bool](repeating: false, count: newLayout.section.count)
    var candidates: [Int] = [], positions: [UInt32] = [] // reused
    for section in sectionNewToOld.indices {
        let oldSection = sectionNewToOld[section]
        guard oldSection >= 0 else { continue }
        candidates.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        for oldFlat in oldLayout.start[oldSection]..<oldLayout.start[oldSection + 1] {
            let newFlat = itemOldToNew[oldFlat]
            if newFlat >= 0 && newLayout.section[newFlat] == section {
                candidates.append(newFlat)
                positions.append(UInt32(newFlat - newLayout.start[section]))
            }
        }
        for (index, keeps) in _longestIncreasing(positions).enumerated() where keeps { staying[candidates[index]] = true }
    }
    return staying
}

/// A two-level index path, built without a temporary array.
@inlinable
func _indexPath(_ section: Int, _ row: Int) -> IndexPath {
    IndexPath(index: section).appending(row)
}

