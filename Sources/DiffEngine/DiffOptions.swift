/// Which paired rows a diff reports as moved (<doc:Changesets>).
public enum MoveMode: String, Sendable, Hashable, CaseIterable, Codable {
    /// The fewest moves: every paired row off one longest increasing subsequence of the
    /// new indexes (taken in old order) moves. `ABCD -> BCDA` is one move, `(0, 3)`.
    case minimal
    /// IGListKit's and Ditto's legacy rule: a paired row moves when its old index, shifted
    /// by the deletions before it and the insertions before it, differs from its new
    /// index. `ABCD -> BCDA` is four moves.
    case displaced
    /// No moves: a paired row that is out of order becomes a deletion of its old index and
    /// an insertion of its new index. The rows kept paired are those `minimal` keeps.
    case none
}

/// What a diff does with an identity that occurs more than once on one side (<doc:Pairing>).
public enum DuplicatePolicy: String, Sendable, Hashable, CaseIterable, Codable {
    /// The k-th old occurrence of an identity pairs with its k-th new occurrence.
    case pairInOrder
    /// A repeated identity on either side throws `DuplicateIdentityError`.
    case reject
    /// Later repeats on each side are dropped before diffing (IGListKit's behaviour); the
    /// changeset's indexes refer to the deduplicated sequences and the dropped original
    /// indexes are reported in `Changeset.droppedOld` and `droppedNew`.
    case firstWins
}

/// Options of one diff.
public struct DiffOptions: Sendable, Hashable {
    /// How moves are reported; `.minimal` by default.
    public var moves: MoveMode
    /// How repeated identities are treated; `.pairInOrder` by default.
    public var duplicates: DuplicatePolicy
    /// How many threads a diff of rows read through an adapter may use once one side has
    /// ``parallelRowThreshold`` rows or more past the common prefix; 1 (the default) is the
    /// calling thread alone.
    ///
    /// With 2 or more, a second thread computes the new rows' identity keys while the
    /// calling thread computes the old rows', and each compares the contents of half the
    /// paired rows; pairing, moves and the lists stay on the calling thread. At most two
    /// threads are used. Results are identical whatever the value.
    /// - Note: The adapter and the rows' `==` are then called from two threads at once, so
    ///   they must be safe to call concurrently (the built-in adapters are). Smaller diffs,
    ///   the flat-keys `diff(oldKeys:newKeys:)` and the `Differ` always run on the calling
    ///   thread: below the threshold, handing work to a thread costs more than it saves.
    public var parallelism: Int

    /// The number of rows on one side from which `parallelism` takes effect.
    public static let parallelRowThreshold = 1_000_000

    @usableFromInline
    internal var parallelThreshold = DiffOptions.parallelRowThreshold

    /// Creates options.
    /// - Parameters:
    ///   - moves: how moves are reported.
    ///   - duplicates: how repeated identities are treated.
    ///   - parallelism: how many threads a diff of a million rows or more may use (at least 1).
    public init(moves: MoveMode = .minimal, duplicates: DuplicatePolicy = .pairInOrder, parallelism: Int = 1) {
        precondition(parallelism >= 1, "parallelism must be at least 1")
        self.moves = moves
        self.duplicates = duplicates
        self.parallelism = parallelism
    }

    /// Whether a diff of `oldCount` and `newCount` rows uses a second thread.
    @inlinable
    internal func _runsInParallel(oldCount: Int, newCount: Int) -> Bool {
        parallelism > 1 && Swift.max(oldCount, newCount) >= parallelThreshold
    }

    /// Testing only: the rows on one side from which `parallelism` takes effect, so that
    /// small inputs take the parallel path.
    @_spi(Testing)
    public var parallelRowThresholdForTesting: Int {
        get { parallelThreshold }
        set {
            precondition(newValue >= 1, "the threshold must be at least 1")
            parallelThreshold = newValue
        }
    }
}

/// The error of `DuplicatePolicy.reject`: an identity occurs twice on one side.
public struct DuplicateIdentityError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The side where the identity repeats.
    public var side: DiffSide
    /// A description of the repeated identity, from the adapter.
    public var identity: String
    /// The index of its first occurrence.
    public var firstIndex: Int
    /// The index of its second occurrence.
    public var secondIndex: Int

    /// Creates the error for an identity repeated at two indexes of one side.
    public init(side: DiffSide, identity: String, firstIndex: Int, secondIndex: Int) {
        self.side = side
        self.identity = identity
        self.firstIndex = firstIndex
        self.secondIndex = secondIndex
    }

    /// Which side, which identity and both indexes, on one line.
    public var description: String {
        "duplicate identity \(identity) in the \(side) rows at indexes \(firstIndex) and \(secondIndex)"
    }
}

/// Which sequence of a diff a row belongs to.
public enum DiffSide: String, Sendable, Hashable, Codable {
    /// The sequence before.
    case old
    /// The sequence after.
    case new
}
