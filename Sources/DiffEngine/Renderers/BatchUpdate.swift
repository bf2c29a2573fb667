#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A move from an old position to a new one.
public struct BatchMove<Position: Hashable & Sendable & Codable>: Hashable, Sendable, Codable {
    /// Where the row or section was, in the old state.
    public var from: Position
    /// Where it ends, in the new state.
    public var to: Position

    /// Creates a move from an old position to a new one.
    public init(from: Position, to: Position) {
        self.from = from
        self.to = to
    }
}

/// One `performBatchUpdates` (`beginUpdates`/`endUpdates`) worth of changes, with UIKit's
/// index conventions (<doc:BatchUpdates>): deletes, reloads and move sources are old
/// positions; inserts and move destinations are new positions. Index paths are
/// `[section, row]`.
public struct BatchUpdate: Hashable, Sendable, Codable {
    /// Old indexes of deleted sections.
    public var sectionDeletes: [Int] = []
    /// New indexes of inserted sections.
    public var sectionInserts: [Int] = []
    /// Old indexes of reloaded sections.
    public var sectionReloads: [Int] = []
    /// Sections moved, old index to new index.
    public var sectionMoves: [BatchMove<Int>] = []
    /// Old index paths of deleted rows.
    public var deletes: [IndexPath] = []
    /// New index paths of inserted rows.
    public var inserts: [IndexPath] = []
    /// Old index paths of reloaded rows.
    public var reloads: [IndexPath] = []
    /// Rows moved, old index path to new index path.
    public var moves: [BatchMove<IndexPath>] = []

    /// Creates a batch; every list is empty unless given.
    public init(sectionDeletes: [Int] = [], sectionInserts: [Int] = [], sectionReloads: [Int] = [],
                sectionMoves: [BatchMove<Int>] = [], deletes: [IndexPath] = [], inserts: [IndexPath] = [],
                reloads: [IndexPath] = [], moves: [BatchMove<IndexPath>] = []) {
        self.sectionDeletes = sectionDeletes
        self.sectionInserts = sectionInserts
        self.sectionReloads = sectionReloads
        self.sectionMoves = sectionMoves
        self.deletes = deletes
        self.inserts = inserts
        self.reloads = reloads
        self.moves = moves
    }

    /// True when the batch changes nothing.
    public var isEmpty: Bool {
        sectionDeletes.isEmpty && sectionInserts.isEmpty && sectionReloads.isEmpty && sectionMoves.isEmpty
            && deletes.isEmpty && inserts.isEmpty && reloads.isEmpty && moves.isEmpty
    }
}

/// The batch-update projection of a flat changeset, for one section (<doc:BatchUpdates>):
/// an updated row that stays is a reload at its old index; an updated row that also moves
/// becomes a delete of its old index and an insert of its new index (UIKit cannot reload
/// and move one row in one batch); other moves stay moves.
public struct BatchUpdateRenderer: ChangesetRenderer {
    /// The section the rows are in.
    public var section: Int

    /// Creates a renderer whose index paths are in `section`.
    public init(section: Int = 0) {
        self.section = section
    }

    /// - Complexity: O(changes).
    public func render(_ changeset: Changeset) -> BatchUpdate {
        let movedNew = Set(changeset.moves.map(\.new))
        let updatedNew = Set(changeset.updates.map(\.new))
        var deletes = changeset.deletions
        var inserts = changeset.insertions
        var reloads: [Int] = []
        for update in changeset.updates {
            if movedNew.contains(update.new) {
                deletes.append(update.old)
                inserts.append(update.new)
            } else {
                reloads.append(update.old)
            }
        }
        let moves = changeset.moves.filter { !updatedNew.contains($0.new) }
        let path = { (row: Int) in IndexPath(indexes: [section, row]) }
        return BatchUpdate(deletes: deletes.sorted().map(path), inserts: inserts.sorted().map(path),
                           reloads: reloads.map(path),
                           moves: moves.map { BatchMove(from: path($0.old), to: path($0.new)) })
    }
}
