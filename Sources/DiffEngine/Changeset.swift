/// An old index and the new index of the same row.
///
/// Encodes as the two-element JSON array `[old, new]` (as ``JSONChangesetRenderer`` writes pairs).
@frozen
public struct IndexPair: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The row's index in the old sequence.
    public var old: Int
    /// The row's index in the new sequence.
    public var new: Int

    /// Creates the pair of a row's old and new index.
    @inlinable
    public init(old: Int, new: Int) {
        self.old = old
        self.new = new
    }

    /// Decodes the two-element array `[old, new]`.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        old = try container.decode(Int.self)
        new = try container.decode(Int.self)
        guard container.isAtEnd else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "an index pair has exactly two elements")
        }
    }

    /// Encodes the two-element array `[old, new]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(old)
        try container.encode(new)
    }

    /// `(old, new)`.
    public var description: String { "(\(old), \(new))" }

    /// The core writes pairs as two consecutive 64-bit integers straight into arrays of
    /// `IndexPair`; this guards that assumption.
    @usableFromInline
    static func _checkLayout() {
        precondition(MemoryLayout<IndexPair>.stride == 16 && MemoryLayout<IndexPair>.offset(of: \.new) == 8
                     && MemoryLayout<Int>.size == 8, "IndexPair must be two 64-bit integers")
    }
}

/// How one sequence of rows became another: which rows were deleted, inserted, updated
/// and moved (<doc:Changesets>).
///
/// Every list is sorted ascending (pairs by their new index) and free of repeats.
/// `deletions` and the old side of each pair are indexes into the old sequence;
/// `insertions` and the new side of each pair into the new sequence. Applying the
/// changeset with UIKit's batch-update rules to the old rows gives the new rows.
public struct Changeset: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The number of rows in the old sequence (after dropping duplicates under `firstWins`).
    public var oldCount: Int
    /// The number of rows in the new sequence (after dropping duplicates under `firstWins`).
    public var newCount: Int
    /// Old indexes of rows that have no counterpart in the new sequence.
    public var deletions: [Int]
    /// New indexes of rows that have no counterpart in the old sequence.
    public var insertions: [Int]
    /// Paired rows whose contents differ, ordered by new index. Reload at `old` (UIKit,
    /// IGListKit) or at `new` (Ditto).
    public var updates: [IndexPair]
    /// Paired rows that changed relative order, ordered by new index. A moved row may
    /// also be updated; it then appears in both lists.
    public var moves: [IndexPair]
    /// Under `DuplicatePolicy.firstWins`: original old indexes of the rows dropped as
    /// repeats before diffing; nil under the other policies.
    public var droppedOld: [Int]?
    /// Under `DuplicatePolicy.firstWins`: original new indexes of the rows dropped as
    /// repeats before diffing; nil under the other policies.
    public var droppedNew: [Int]?

    /// Creates a changeset from its lists; the lists are taken as they are.
    public init(oldCount: Int, newCount: Int, deletions: [Int] = [], insertions: [Int] = [],
                updates: [IndexPair] = [], moves: [IndexPair] = [],
                droppedOld: [Int]? = nil, droppedNew: [Int]? = nil) {
        self.oldCount = oldCount
        self.newCount = newCount
        self.deletions = deletions
        self.insertions = insertions
        self.updates = updates
        self.moves = moves
        self.droppedOld = droppedOld
        self.droppedNew = droppedNew
    }

    /// True when something changed: a deletion, an insertion, an update or a move.
    public var hasChanges: Bool {
        !(deletions.isEmpty && insertions.isEmpty && updates.isEmpty && moves.isEmpty)
    }

    /// The counts and every list, on one line.
    public var description: String {
        "Changeset(\(oldCount) -> \(newCount): -\(deletions) +\(insertions) ~\(updates) moves \(moves))"
    }
}
