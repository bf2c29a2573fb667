import DiffEngine

/// Checks a changeset against DiffEngine.docc/Correctness.md and the naive reference. Returns every
/// problem found; an empty list means the changeset is correct for (old, new) in `mode`.
///
/// 1. Lists are sorted, in range and free of repeats; each old index appears at most once
///    in deletions ∪ moves.old and each new index at most once in insertions ∪ moves.new.
/// 2. Applying with UIKit's rules (inserted rows, moved rows at their new index, the other
///    surviving old rows in order in the remaining places) gives a list R of length n.
/// 3. R[j] has the identity of new[j]; its content equals new[j]'s exactly when j is not
///    the new side of an update; every update pair is a pair of the applied result.
/// 4. The implied pairing is the reference's (in `none` mode, a subset of it that keeps a
///    longest increasing subsequence); `minimal` has exactly paired − LIS moves and
///    `displaced` exactly the reference's displaced moves.
///
/// The checks are inlinable, as the reference is: harnesses and tests get them specialised.
@inlinable
public func checkChangeset<Row>(
    _ changeset: Changeset, old: [Row], new: [Row], mode: MoveMode,
    sameIdentity: (Row, Row) -> Bool, sameContent: (Row, Row) -> Bool
) -> [String] {
    let (problems, implied) = checkApplication(changeset, old: old, new: new,
                                               sameIdentity: sameIdentity, sameContent: sameContent)
    guard problems.isEmpty else { return problems }
    return checkPairing(changeset, implied: implied, mode: mode,
                        reference: referenceDiff(old, new, sameIdentity: sameIdentity, sameContent: sameContent))
}

/// Rules 1-3 of DiffEngine.docc/Correctness.md: the changeset applies to `old` and gives `new`, and
/// every update is real. Any correct diff passes, whatever its pairing (peers such as
/// `CollectionDifference` are held to this). Returns the problems and the pairing implied
/// by the application, in new order.
@inlinable
public func checkApplication<Row>(
    _ changeset: Changeset, old: [Row], new: [Row],
    sameIdentity: (Row, Row) -> Bool, sameContent: (Row, Row) -> Bool
) -> (problems: [String], implied: [IndexPair]) {
    var problems: [String] = []
    let m = old.count, n = new.count
    if changeset.oldCount != m || changeset.newCount != n {
        problems.append("counts \(changeset.oldCount)->\(changeset.newCount), expected \(m)->\(n)")
        return (problems, [])
    }
    func strictlyIncreasing(_ values: [Int]) -> Bool { zip(values, values.dropFirst()).allSatisfy { $0 < $1 } }
    if !strictlyIncreasing(changeset.deletions) { problems.append("deletions not ascending and unique") }
    if !strictlyIncreasing(changeset.insertions) { problems.append("insertions not ascending and unique") }
    if !strictlyIncreasing(changeset.updates.map(\.new)) { problems.append("updates not ordered by new index") }
    if !strictlyIncreasing(changeset.moves.map(\.new)) { problems.append("moves not ordered by new index") }
    let oldSide = changeset.deletions + changeset.moves.map(\.old) + changeset.updates.map(\.old)
    let newSide = changeset.insertions + changeset.moves.map(\.new) + changeset.updates.map(\.new)
    if !oldSide.allSatisfy({ (0..<m).contains($0) }) { problems.append("an old index is out of range") }
    if !newSide.allSatisfy({ (0..<n).contains($0) }) { problems.append("a new index is out of range") }
    if !problems.isEmpty { return (problems, []) }

    // Rule 1.
    var oldTouched = [Bool](repeating: false, count: m)
    for i in changeset.deletions + changeset.moves.map(\.old) {
        if oldTouched[i] { problems.append("old index \(i) deleted or moved twice") }
        oldTouched[i] = true
    }
    var origin = [Int?](repeating: nil, count: n) // old index that lands at j; nil = inserted
    var newTouched = [Bool](repeating: false, count: n)
    for j in changeset.insertions {
        if newTouched[j] { problems.append("new index \(j) inserted twice") }
        newTouched[j] = true
    }
    for move in changeset.moves {
        if newTouched[move.new] { problems.append("new index \(move.new) inserted or moved into twice") }
        newTouched[move.new] = true
        origin[move.new] = move.old
    }
    if !problems.isEmpty { return (problems, []) }

    // Rule 2: fill the untouched positions with the untouched old rows, in order.
    let staying = (0..<m).filter { !oldTouched[$0] }
    let free = (0..<n).filter { !newTouched[$0] }
    if staying.count != free.count {
        problems.append("\(staying.count) old rows stay but \(free.count) places are free (m - deletions + insertions != n)")
        return (problems, [])
    }
    for (i, j) in zip(staying, free) { origin[j] = i }

    // Rule 3.
    var updatedNew = [Bool](repeating: false, count: n)
    for update in changeset.updates { updatedNew[update.new] = true }
    for j in 0..<n {
        guard let i = origin[j] else { continue }
        if !sameIdentity(old[i], new[j]) {
            problems.append("applied row \(j) (old \(i)) has another identity than new row \(j)")
        } else if sameContent(old[i], new[j]) == updatedNew[j] {
            problems.append(updatedNew[j] ? "update (\(i), \(j)) changes nothing" : "row \(j) (old \(i)) changed but is not an update")
        }
    }
    for update in changeset.updates where origin[update.new] != update.old {
        problems.append("update \(update) is not a pair of the applied result")
    }
    for j in changeset.insertions where newTouched[j] && origin[j] != nil {
        problems.append("inserted row \(j) also has an origin")
    }

    let implied = (0..<n).compactMap { j in origin[j].map { IndexPair(old: $0, new: j) } }
    return (problems, implied)
}

/// Rule 4 of DiffEngine.docc/Correctness.md, given the pairing implied by applying the changeset and a
/// reference result (`referenceDiff`, or `indexedReferenceDiff` for large inputs).
public func checkPairing(_ changeset: Changeset, implied: [IndexPair], mode: MoveMode,
                         reference: ReferenceResult) -> [String] {
    var problems: [String] = []
    switch mode {
    case .minimal, .displaced:
        if implied != reference.pairs {
            problems.append("pairing \(implied) differs from the reference's \(reference.pairs)")
        }
        if mode == .minimal && changeset.moves.count != reference.pairs.count - reference.longestIncreasing {
            problems.append("\(changeset.moves.count) moves, expected paired \(reference.pairs.count) - LIS \(reference.longestIncreasing)")
        }
        if mode == .displaced && changeset.moves != reference.displacedMoves {
            problems.append("displaced moves \(changeset.moves), expected \(reference.displacedMoves)")
        }
    case .none:
        if !changeset.moves.isEmpty { problems.append("moves reported in none mode") }
        let referencePairs = Set(reference.pairs)
        if !implied.allSatisfy(referencePairs.contains) {
            problems.append("none mode pairs \(implied) outside the reference's \(reference.pairs)")
        }
        if implied.count != reference.longestIncreasing {
            problems.append("none mode keeps \(implied.count) pairs, expected LIS \(reference.longestIncreasing)")
        }
    }
    return problems
}

/// `checkChangeset` for rows that are `Identifiable & Equatable`.
@inlinable
public func checkChangeset<Row: Identifiable & Equatable>(
    _ changeset: Changeset, old: [Row], new: [Row], mode: MoveMode
) -> [String] {
    checkChangeset(changeset, old: old, new: new, mode: mode,
                   sameIdentity: { $0.id == $1.id }, sameContent: { $0 == $1 })
}
