/// What one call of `Differ.diff(_:)` found.
public struct DifferUpdate<Identity: Hashable>: Equatable {
    /// From the previous call's rows to this call's.
    public var changeset: Changeset
    /// True on the first call (and the first after `reset()`): every row is an insertion.
    public var isInitial: Bool
    /// The identities of the deleted rows, in the order of `changeset.deletions`, when the
    /// differ keeps identities; nil otherwise.
    public var deletedIdentities: [Identity]?

    /// Creates an update.
    public init(changeset: Changeset, isInitial: Bool, deletedIdentities: [Identity]?) {
        self.changeset = changeset
        self.isInitial = isInitial
        self.deletedIdentities = deletedIdentities
    }
}

extension DifferUpdate: Sendable where Identity: Sendable {}

/// A stateful differ (Ditto's `DittoDiffer`): each `diff(_:)` compares its rows with the
/// previous call's. It keeps only what the next call needs — each row's identity key and
/// content hash (16 bytes a row) and, when asked, the identities — never the rows.
///
/// ```swift
/// let differ = Differ(adapter: IdentifiableAdapter<Car>())
/// for snapshot in snapshots {
///     let update = differ.diff(snapshot)
///     table.apply(update.changeset)
/// }
/// ```
///
/// - Note: Contents are compared by their 64-bit content hash (the old rows are gone).
///   Identities are exact for integer ids. Other identities pair by their 64-bit hash,
///   unless the differ keeps identities (`keepsIdentities`), which verifies every match.
/// - Note: Not thread-safe: use one differ from one task or queue at a time. It reuses its
///   buffers and workspace, so a steady stream of diffs allocates only the results.
public final class Differ<Adapter: IdentifyingAdapter> {
    /// How rows are read.
    public let adapter: Adapter
    /// How moves are reported.
    public let moves: MoveMode
    /// Whether the identities of the previous rows are kept (to verify matches and name
    /// deleted rows).
    public let keepsIdentities: Bool

    @usableFromInline var previousKeys: [UInt64] = []
    @usableFromInline var previousContents: [UInt64] = []
    @usableFromInline var previousIdentities: [Adapter.Identity] = []
    @usableFromInline var nextKeys: [UInt64] = []
    @usableFromInline var nextContents: [UInt64] = []
    @usableFromInline var nextIdentities: [Adapter.Identity] = []
    @usableFromInline var hasPrevious = false
    @usableFromInline let workspace = _DiffWorkspace()
    @usableFromInline var identityHashBits = 0

    /// Creates a differ.
    /// - Parameters:
    ///   - adapter: how to read identity and content of a row.
    ///   - moves: how moves are reported.
    ///   - keepsIdentities: keep the previous rows' identities too, to verify every match and
    ///     to report the identities of deleted rows.
    public init(adapter: Adapter, moves: MoveMode = .minimal, keepsIdentities: Bool = false) {
        self.adapter = adapter
        self.moves = moves
        self.keepsIdentities = keepsIdentities
    }

    /// Testing only: keep `bits` low bits of identity keys so that collisions are common
    /// (requires `keepsIdentities`, which then verifies every match).
    @_spi(Testing)
    public var weakenedIdentityHashBits: Int {
        get { identityHashBits }
        set {
            precondition(keepsIdentities || newValue == 0, "weakened hashes need keepsIdentities to verify matches")
            identityHashBits = _checkedHashBits(newValue)
        }
    }

    /// The number of rows of the previous call.
    public var rowCount: Int { previousKeys.count }

    /// Bytes kept a row between calls: the identity key and content hash, plus the stride
    /// of the identity when kept (and whatever heap storage the identity owns, such as a
    /// long string's characters).
    public var keptBytesPerRow: Int {
        16 + (keepsIdentities ? MemoryLayout<Adapter.Identity>.stride : 0)
    }

    /// Forgets the previous rows: the next call is initial again.
    public func reset() {
        previousKeys.removeAll(keepingCapacity: true)
        previousContents.removeAll(keepingCapacity: true)
        previousIdentities.removeAll(keepingCapacity: true)
        hasPrevious = false
    }

    /// Diffs `rows` against the previous call's rows and keeps what the next call needs.
    /// - Parameter rows: the new snapshot.
    /// - Returns: the changeset from the previous snapshot (all insertions on the first call).
    /// - Complexity: O(n) expected plus the moves' O(k log k); one identity key and one
    ///   content hash per row.
    @inlinable
    public func diff<Rows: RandomAccessCollection>(_ rows: Rows) -> DifferUpdate<Adapter.Identity> where Rows.Element == Adapter.Row {
        _withContiguousRows(rows) { buffer in diffRows(buffer) }
    }

    /// Gives a reused buffer `count` elements, keeping (not zeroing) the ones it has: the
    /// adapter overwrites every element.
    @inlinable
    static func resize(_ buffer: inout [UInt64], to count: Int) {
        if buffer.count > count {
            buffer.removeLast(buffer.count - count)
        } else if buffer.count < count {
            buffer.append(contentsOf: repeatElement(0, count: count - buffer.count))
        }
    }

    @inlinable
    func diffRows(_ rows: UnsafeBufferPointer<Adapter.Row>) -> DifferUpdate<Adapter.Identity> {
        // This call's keys, hashes and identities, into reused buffers.
        Self.resize(&nextKeys, to: rows.count)
        nextKeys.withUnsafeMutableBufferPointer { adapter.writeIdentityKeys(of: rows, to: $0) }
        Self.resize(&nextContents, to: rows.count)
        nextContents.withUnsafeMutableBufferPointer { adapter.writeContentHashes(of: rows, to: $0) }
        nextIdentities.removeAll(keepingCapacity: true)
        if keepsIdentities {
            for row in rows { nextIdentities.append(adapter.identity(of: row)) }
        }
        defer {
            swap(&previousKeys, &nextKeys)
            swap(&previousContents, &nextContents)
            swap(&previousIdentities, &nextIdentities)
            hasPrevious = true
        }
        guard hasPrevious else {
            return DifferUpdate(changeset: Changeset(oldCount: 0, newCount: rows.count, insertions: Array(0..<rows.count)),
                                isInitial: true, deletedIdentities: keepsIdentities ? [] : nil)
        }

        previousKeys.withUnsafeBufferPointer { oldKeys in
            nextKeys.withUnsafeBufferPointer { newKeys in
                guard keepsIdentities else {
                    // No identities at hand: keys are taken as they are (see the type's note).
                    workspace.match(oldKeys: oldKeys, newKeys: newKeys, keyBits: 0, identityEqual: nil)
                    return
                }
                let old = previousIdentities, new = nextIdentities
                _pairByIdentity(
                    workspace, oldKeys: oldKeys, newKeys: newKeys,
                    exact: adapter.identityKeysAreExact, keyBits: identityHashBits,
                    identityEqual: { aSide, a, bSide, b in
                        (aSide == .old ? old[a] : new[a]) == (bSide == .old ? old[b] : new[b])
                    },
                    seededKeys: { oldSeeded, newSeeded in
                        for index in old.indices { oldSeeded[index] = _seededKey(old[index]) }
                        for index in new.indices { newSeeded[index] = _seededKey(new[index]) }
                        return true
                    })
            }
        }
        previousContents.withUnsafeBufferPointer { oldContents in
            nextContents.withUnsafeBufferPointer { newContents in
                workspace.markUpdates(oldContents: oldContents, newContents: newContents, contentEqual: nil)
            }
        }
        let counts = workspace.finish(moves)
        let changeset = workspace.read(counts, offset: 0, oldCount: previousKeys.count, newCount: rows.count)
        return DifferUpdate(changeset: changeset, isInitial: false,
                            deletedIdentities: keepsIdentities ? changeset.deletions.map { previousIdentities[$0] } : nil)
    }
}
