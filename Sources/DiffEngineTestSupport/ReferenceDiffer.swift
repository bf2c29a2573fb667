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

    @usableFromInline
    init(pairs: [IndexPair], deletions: [Int], insertions: [Int], updates: [IndexPair],
         longestIncreasing: Int, displacedMoves: [IndexPair]) {
        self.pairs = pairs
        self.deletions = deletions
        self.insertions = insertions
        self.updates = updates
        self.longestIncreasing = longestIncreasing
        self.displacedMoves = displacedMoves
    }
}

/// The naive reference differ of DiffEngine.docc/Pairing.md and Changesets.md: each new row
/// takes the first unused old row of its identity (which pairs k-th occurrences), found by
/// walking the unused old rows in order — O(m × n) at worst, with no hashing — then a longest
/// increasing subsequence by patience sorting, and the displaced moves by placing the paired
/// rows between the insertions (the indexed reference counts them instead).
///
/// Inlinable so that a harness or a test gets it specialised for its row type and closures:
/// the fuzzers spend most of each execution here.
@inlinable
public func referenceDiff<Row>(
    _ old: [Row], _ new: [Row],
    sameIdentity: (Row, Row) -> Bool, sameContent: (Row, Row) -> Bool
) -> ReferenceResult {
    // The unused old rows as a list in old order: position p + 1 stands for old row p,
    // position 0 is the list's head and old.count + 1 its end. A row taken leaves the list,
    // so the walk for the next new row never passes it again.
    let end = old.count + 1
    var nextUnused = Array(1...end)
    var oldUsed = [Bool](repeating: false, count: old.count)
    var pairs: [IndexPair] = []
    var updates: [IndexPair] = []
    var insertions: [Int] = []
    for j in 0..<new.count {
        var before = 0, position = nextUnused[0]
        while position != end && !sameIdentity(old[position - 1], new[j]) {
            before = position
            position = nextUnused[position]
        }
        guard position != end else {
            insertions.append(j)
            continue
        }
        nextUnused[before] = nextUnused[position]
        let i = position - 1
        oldUsed[i] = true
        pairs.append(IndexPair(old: i, new: j))
        if !sameContent(old[i], new[j]) { updates.append(IndexPair(old: i, new: j)) }
    }
    var deletions: [Int] = []
    for i in 0..<old.count where !oldUsed[i] { deletions.append(i) }

    var newInOldOrder = [Int](repeating: -1, count: old.count)
    for pair in pairs { newInOldOrder[pair.old] = pair.new }

    // Where each paired old row lands when only the deletions and insertions are applied:
    // the next new place no insertion takes. A pair that lands elsewhere is displaced.
    var landing = [Int](repeating: -1, count: old.count)
    var place = 0, nextInsertion = 0
    for i in 0..<old.count where oldUsed[i] {
        while nextInsertion < insertions.count && insertions[nextInsertion] == place {
            place += 1
            nextInsertion += 1
        }
        landing[i] = place
        place += 1
    }
    var displaced: [IndexPair] = []
    for pair in pairs where landing[pair.old] != pair.new { displaced.append(pair) }
    return ReferenceResult(pairs: pairs, deletions: deletions, insertions: insertions, updates: updates,
                           longestIncreasing: longestIncreasingLength(newInOldOrder.filter { $0 >= 0 }),
                           displacedMoves: displaced)
}

/// The length of a longest strictly increasing subsequence of `values`, by patience
/// sorting: `piles[k]` is the smallest last value of an increasing run of length k + 1.
@usableFromInline
func longestIncreasingLength(_ values: [Int]) -> Int {
    var piles: [Int] = []
    for value in values {
        var low = 0, high = piles.count
        while low < high {
            let middle = (low + high) / 2
            if piles[middle] < value { low = middle + 1 } else { high = middle }
        }
        if low == piles.count { piles.append(value) } else { piles[low] = value }
    }
    return piles.count
}

/// The moves `MoveMode.minimal` reports for `pairs`, by the engine's documented tie rule,
/// computed the slow way: a paired row's level is the length of the longest increasing
/// subsequence (of new indexes in old order) that ends at it; the rows that stay are read
/// back from the end, taking the last row of each level from the highest down. Sorted by
/// new index.
public func referenceMinimalMoves(_ pairs: [IndexPair]) -> [IndexPair] {
    let inOldOrder = pairs.sorted { $0.old < $1.old }
    var level = [Int](repeating: 1, count: inOldOrder.count)
    for a in inOldOrder.indices {
        for b in 0..<a where inOldOrder[b].new < inOldOrder[a].new {
            level[a] = Swift.max(level[a], level[b] + 1)
        }
    }
    var wanted = level.max() ?? 0
    var stays = [Bool](repeating: false, count: inOldOrder.count)
    for index in inOldOrder.indices.reversed() where wanted > 0 && level[index] == wanted {
        stays[index] = true
        wanted -= 1
    }
    return inOldOrder.indices.filter { !stays[$0] }.map { inOldOrder[$0] }.sorted { $0.new < $1.new }
}

/// The reference for `DuplicatePolicy.firstWins`: the rows kept (first occurrences) and the
/// original indexes dropped.
@inlinable
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
@inlinable
public func referenceFirstRepeat<Row>(_ rows: [Row], sameIdentity: (Row, Row) -> Bool) -> (first: Int, second: Int)? {
    for second in 0..<rows.count {
        for first in 0..<second where sameIdentity(rows[first], rows[second]) {
            return (first, second)
        }
    }
    return nil
}

/// The same answers as `referenceDiff`, computed with a dictionary of occurrence queues
/// and patience sorting, for inputs too large for the quadratic reference (the benchmark
/// checks 1,000,000-row results with it). The tests check that both references agree.
public func indexedReferenceDiff<Row, Identity: Hashable>(
    _ old: [Row], _ new: [Row], identity: (Row) -> Identity, sameContent: (Row, Row) -> Bool
) -> ReferenceResult {
    var occurrences: [Identity: [Int]] = [:]
    for (i, row) in old.enumerated() { occurrences[identity(row), default: []].append(i) }
    var taken: [Identity: Int] = [:]
    var oldUsed = [Bool](repeating: false, count: old.count)
    var pairs: [IndexPair] = [], updates: [IndexPair] = [], insertions: [Int] = []
    for (j, row) in new.enumerated() {
        let key = identity(row)
        let k = taken[key, default: 0]
        if let list = occurrences[key], k < list.count {
            taken[key] = k + 1
            let i = list[k]
            oldUsed[i] = true
            pairs.append(IndexPair(old: i, new: j))
            if !sameContent(old[i], row) { updates.append(IndexPair(old: i, new: j)) }
        } else {
            insertions.append(j)
        }
    }
    let deletions = (0..<old.count).filter { !oldUsed[$0] }
    var deletedBefore = [Int](repeating: 0, count: old.count + 1)
    for i in 0..<old.count { deletedBefore[i + 1] = deletedBefore[i] + (oldUsed[i] ? 0 : 1) }
    var insertedBefore = [Int](repeating: 0, count: new.count + 1)
    var isInserted = [Bool](repeating: false, count: new.count)
    for j in insertions { isInserted[j] = true }
    for j in 0..<new.count { insertedBefore[j + 1] = insertedBefore[j] + (isInserted[j] ? 1 : 0) }
    let displaced = pairs.filter { $0.old - deletedBefore[$0.old] + insertedBefore[$0.new] != $0.new }
    return ReferenceResult(pairs: pairs, deletions: deletions, insertions: insertions, updates: updates,
                           longestIncreasing: longestIncreasingLength(pairs.sorted(by: { $0.old < $1.old }).map(\.new)),
                           displacedMoves: displaced)
}

/// The naive reference's own changeset in `minimal` mode: every pair off one longest
/// increasing subsequence (found by quadratic dynamic programming) is a move. Slow on
/// purpose; the benchmark times it at small sizes as the baseline of plain loops.
public func referenceChangeset<Row>(
    _ old: [Row], _ new: [Row], sameIdentity: (Row, Row) -> Bool, sameContent: (Row, Row) -> Bool
) -> Changeset {
    let result = referenceDiff(old, new, sameIdentity: sameIdentity, sameContent: sameContent)
    let inOldOrder = result.pairs.sorted { $0.old < $1.old }
    var length = [Int](repeating: 1, count: inOldOrder.count)
    var previous = [Int?](repeating: nil, count: inOldOrder.count)
    for a in inOldOrder.indices {
        for b in 0..<a where inOldOrder[b].new < inOldOrder[a].new && length[b] + 1 > length[a] {
            length[a] = length[b] + 1
            previous[a] = b
        }
    }
    var staying = Set<IndexPair>()
    var cursor = length.indices.max { length[$0] < length[$1] }
    while let index = cursor {
        staying.insert(inOldOrder[index])
        cursor = previous[index]
    }
    return Changeset(oldCount: old.count, newCount: new.count, deletions: result.deletions,
                     insertions: result.insertions, updates: result.updates,
                     moves: result.pairs.filter { !staying.contains($0) })
}
