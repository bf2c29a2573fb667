extension Changeset {
    /// The changeset as a standard-library `CollectionDifference`, so that
    /// `old.applying(difference)` gives `new`.
    ///
    /// Deleted, moved and updated rows are removals at their old offsets; inserted, moved
    /// and updated rows are insertions at their new offsets (an update is a remove plus an
    /// insert). Moves that are not updates carry `associatedWith`, as `inferringMoves()` does.
    /// - Parameters:
    ///   - old: the rows this changeset was computed from (deduplicated under `firstWins`).
    ///   - new: the rows it leads to.
    /// - Returns: the difference.
    /// - Complexity: O(m + n).
    public func collectionDifference<Element>(from old: [Element], to new: [Element]) -> CollectionDifference<Element> {
        precondition(old.count == oldCount && new.count == newCount, "the rows must be the ones diffed")
        var removedOld = Set(deletions)
        var insertedNew = Set(insertions)
        for update in updates {
            removedOld.insert(update.old)
            insertedNew.insert(update.new)
        }
        let updatedNew = Set(updates.map(\.new))
        var partner: [Int: Int] = [:] // old offset -> new offset of moves that are not updates
        for move in moves {
            removedOld.insert(move.old)
            insertedNew.insert(move.new)
            if !updatedNew.contains(move.new) { partner[move.old] = move.new }
        }
        let partnerOf = Dictionary(uniqueKeysWithValues: partner.map { ($1, $0) })
        var changes: [CollectionDifference<Element>.Change] = []
        changes.reserveCapacity(removedOld.count + insertedNew.count)
        for offset in removedOld.sorted() {
            changes.append(.remove(offset: offset, element: old[offset], associatedWith: partner[offset]))
        }
        for offset in insertedNew.sorted() {
            changes.append(.insert(offset: offset, element: new[offset], associatedWith: partnerOf[offset]))
        }
        guard let difference = CollectionDifference(changes) else {
            preconditionFailure("a changeset always forms a valid CollectionDifference")
        }
        return difference
    }
}
