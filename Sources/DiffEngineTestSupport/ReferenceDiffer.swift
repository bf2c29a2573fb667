import DiffEngine

/// What the naive reference differ finds: written with plain loops and no hashing, and
/// sharing no code with the engine, so that the two can be compared.
public struct ReferenceResult: Sendable {
    /// Every pair (old, new), in new order.
    public var pairs: [IndexPair]
    /// Old indexes with no pair.
    public var deletions: [Int]
    /// New indexes with no pair.
    public var insertions: [Int]
    /// Pairs whose contents differ, in new order.
    public var updates: [IndexPair]
    /// The length of a longest increasing subsequence of the new indexes in old order.
    public var longestIncreasing: Int
    /// The moves of `MoveMode.displaced`, in new order.
    public var displacedMoves: [IndexPair]
}

/// The naive reference differ of SPEC.md sections 2 and 3: O(m × n) pairing (each new
/// row takes the first unused old row of its identity, which pairs k-th occurrences) and an
/// O(k²) longest increasing subsequence.
public func referenceDiff<Row>(
    _ old: [Row], _ new: [Row],
    sameIdentity: (Row, Row) -> Bool, sameContent: (Row, Row) -> Bool
) -> ReferenceResult {
    var oldUsed = [Bool](repeating: false, count: old.count)
    var newToOld = [Int?](repeating: nil, count: new.count)
    for j in 0..<new.count {
        for i in 0..<old.count where !oldUsed[i] && sameIdentity(old[i], new[j]) {
            oldUsed[i] = true
            newToOld[j] = i
            break
        }
    }
    var pairs: [IndexPair] = []
    var updates: [IndexPair] = []
    var insertions: [Int] = []
    for j in 0..<new.count {
        if let i = newToOld[j] {
            pairs.append(IndexPair(old: i, new: j))
            if !sameContent(old[i], new[j]) { updates.append(IndexPair(old: i, new: j)) }
        } else {
            insertions.append(j)
        }
    }
    var deletions: [Int] = []
    for i in 0..<old.count where !oldUsed[i] { deletions.append(i) }

    // Longest increasing subsequence, quadratic dynamic programming.
    let sequence = pairs.sorted { $0.old < $1.old }.map(\.new)
    var longestEndingAt = [Int](repeating: 1, count: sequence.count)
    var longest = 0
    for a in 0..<sequence.count {
        for b in 0..<a where sequence[b] < sequence[a] {
            longestEndingAt[a] = Swift.max(longestEndingAt[a], longestEndingAt[b] + 1)
        }
        longest = Swift.max(longest, longestEndingAt[a])
    }

    var displaced: [IndexPair] = []
    for pair in pairs {
        let deletedBefore = deletions.filter { $0 < pair.old }.count
        let insertedBefore = insertions.filter { $0 < pair.new }.count
        if pair.old - deletedBefore + insertedBefore != pair.new { displaced.append(pair) }
    }
    return ReferenceResult(pairs: pairs, deletions: deletions, insertions: insertions, updates: updates,
                           longestIncreasing: longest, displacedMoves: displaced)
}

/// The reference for `DuplicatePolicy.firstWins`: the rows kept (first occurrences) and the
/// original indexes dropped.
public func referenceDeduplicate<Row>(_ rows: [Row], sameIdentity: (Row, Row) -> Bool) -> (kept: [Row], dropped: [Int]) {
    var kept: [Row] = []
    var dropped: [Int] = []
    for (index, row) in rows.enumerated() {
        if kept.contains(where: { sameIdentity($0, row) }) {
            dropped.append(index)
        } else {
            kept.append(row)
        }
    }
    return (kept, dropped)
}

/// The reference for `DuplicatePolicy.reject`: the first repeated identity (the one whose
/// second occurrence comes first) and its first two indexes, old side before new.
public func referenceFirstRepeat<Row>(_ rows: [Row], sameIdentity: (Row, Row) -> Bool) -> (first: Int, second: Int)? {
    for second in 0..<rows.count {
        for first in 0..<second where sameIdentity(rows[first], rows[second]) {
            return (first, second)
        }
    }
    return nil
}
