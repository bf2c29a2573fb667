/// What one call of `Differ.diff(_:)` found.
public struct DifferUpdate<Identity: Hashable>: Equatable {
    /// From the previous call's rows to this call's.
    public var changeset: Changeset
    /// True on the first call (and the first after `reset()`): every row is an insertion.
    public var isInitial: Bool
    /// The identities of the deleted rows, in the order of `changeset.deletions`; nil when
    /// the differ keeps only hashes and no identities.
    public var deletedIdentities: [Identity]?

    /// Creates an update.
    public init(changeset: Changeset, isInitial: Bool, deletedIdentities: [Identity]?) {
        self.changeset = changeset
        self.isInitial = isInitial
        self.deletedIdentities = deletedIdentities
    }
}

extension DifferUpdate: Sendable where Identity: Sendable {}

/// An adapter whose `contentHash(of:)` is defined for every row it reads (no precondition),
/// so that a ``Differ`` may keep content hashes instead of rows.
///
/// - Note: Hash-only state reports an update only when the content hash changes. That is
///   exact for adapters that hash every compared field (key paths over `StableHashable`
///   fields, byte rows); a `Hashable` model whose `hash(into:)` hashes only some of the
///   fields that `==` compares has its other changes missed.
public protocol ContentHashingAdapter: RowAdapter {}

extension HashableAdapter: ContentHashingAdapter {}
extension KeyPathAdapter: ContentHashingAdapter {}
extension ByteRowAdapter: ContentHashingAdapter {}
extension IdentifiableAdapter: ContentHashingAdapter where Element: Hashable {}

/// A stateful differ (Ditto's `DittoDiffer`): each `diff(_:)` compares its rows with the
/// previous call's, and its answers equal a one-shot `diff(previous, next, using:)` of the
/// same two snapshots.
///
/// ```swift
/// struct Car: Identifiable, Equatable { var id: Int; var color: String; var mileage: Int }
/// let differ = Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<Car>())
/// let first = differ.diff([Car(id: 1, color: "blue", mileage: 10)])
/// let next = differ.diff([Car(id: 1, color: "blue", mileage: 12), Car(id: 2, color: "red", mileage: 0)])
/// // first.isInitial; next.changeset.updates == [IndexPair(old: 0, new: 0)], insertions == [1]
/// ```
///
/// What it keeps between calls is the caller's choice, made by name:
/// - `init(keepingPreviousSnapshotOf:moves:)` keeps the previous snapshot — the array you
///   passed, shared copy-on-write, so it costs nothing while you keep that array, and a copy
///   of it (the rows' stride a row) once you change it — plus each row's 8-byte identity key,
///   and compares paired rows with the adapter's equality (`==` for `Identifiable` rows),
///   exactly as a one-shot diff does;
/// - `init(keepingOnlyHashesOf:moves:keepsIdentities:)` keeps 16 bytes a row (identity key
///   and content hash), never the rows, for adapters whose content hash covers every field
///   their equality compares.
///
/// Both also carry the set of the previous identity keys (16 to 32 bytes a row): while the
/// rows' identities are distinct, a call pairs rows by walking the two snapshots side by
/// side instead of indexing the previous rows, and keeps the pairing a run of rows at a time,
/// so it costs a fraction of a one-shot diff of the same snapshots when few rows change (the
/// figures are in the repository's `Benchmarks/RESULTS.md`). A changed row costs it about
/// what it costs a one-shot diff: the more rows change, the less it saves. Keeping the
/// snapshot with an adapter whose ``RowLayout`` says equal bytes are equal rows (the
/// library's `Identifiable`, `Hashable` and key-path adapters say so), the walk compares rows
/// with the previous ones as bytes first, and the adapter reads and compares only the rows
/// whose bytes changed. It remembers which rows were unequal to themselves (a `Double`
/// holding NaN), so those stay updates, as in a one-shot diff.
/// ``keptBytesPerRow`` counts everything kept.
///
/// - Note: Not thread-safe: use one differ from one task or queue at a time. It reuses its
///   buffers and workspace, so a steady stream of diffs allocates only the results.
public final class Differ<Adapter: IdentifyingAdapter> {
    /// How rows are read.
    public let adapter: Adapter
    /// How moves are reported.
    public let moves: MoveMode
    /// Whether the differ keeps only identity keys and content hashes (and, with
    /// `keepsIdentities`, the identities), never the rows.
    @usableFromInline let keepsOnlyHashes: Bool
    /// Whether the identities of the previous rows are kept (to verify matches and name
    /// deleted rows). Always true when the previous snapshot is kept: identities come from it.
    public let keepsIdentities: Bool

    @usableFromInline var previousRows: [Adapter.Row] = []
    @usableFromInline var previousKeys: [UInt64] = []
    @usableFromInline var previousContents: [UInt64] = []
    @usableFromInline var previousIdentities: [Adapter.Identity] = []
    @usableFromInline var nextKeys: [UInt64] = []
    @usableFromInline var nextContents: [UInt64] = []
    @usableFromInline var nextIdentities: [Adapter.Identity] = []
    /// Rows compared as bytes: a bit a previous row, set where the adapter found the row
    /// unequal to itself (a NaN field); valid while `selfUnequalKnown`.
    @usableFromInline var previousSelfUnequal: [UInt64] = []
    @usableFromInline var nextSelfUnequal: [UInt64] = []
    @usableFromInline var selfUnequalKnown = false
    /// Rows compared as bytes: the pairs whose bytes changed, for the adapter to compare.
    @usableFromInline var candidateRows: [UInt64] = []
    @usableFromInline var hasPrevious = false
    @usableFromInline let workspace = _DiffWorkspace()
    @usableFromInline let carried = _CarriedKeys()

    /// Creates a differ that keeps the previous snapshot and compares contents with the
    /// adapter's equality: its answers equal a one-shot diff's for every adapter.
    ///
    /// It keeps the rows: the array each `diff(_:)` gets, shared copy-on-write — nothing
    /// while you keep that array, the rows' stride a row once you change it — plus an 8-byte
    /// identity key a row (``keptBytesPerRow``).
    /// - Parameters:
    ///   - adapter: how to read identity and content of a row.
    ///   - moves: how moves are reported.
    public init(keepingPreviousSnapshotOf adapter: Adapter, moves: MoveMode = .minimal) {
        self.adapter = adapter
        self.moves = moves
        keepsOnlyHashes = false
        keepsIdentities = true
    }

    @usableFromInline
    init(adapter: Adapter, moves: MoveMode, hashesOnly keepsIdentities: Bool) {
        self.adapter = adapter
        self.moves = moves
        keepsOnlyHashes = true
        self.keepsIdentities = keepsIdentities
    }

    /// The number of rows of the previous call.
    public var rowCount: Int { previousKeys.count }

    #if DIFFENGINE_PROBES
    /// Testing (debug builds): how many diffs paired their rows from the carried identity keys.
    @_spi(Testing)
    public var carriedPairings: Int { carried.pairings }

    /// Testing (debug builds): how many diffs paired their rows each way ("fields walk",
    /// "bytes walk", "keys walk", or "indexed" where the walk could not pair), so that a test
    /// can tell which way an adapter's rows went.
    @_spi(Testing)
    public internal(set) var pairingWays: [String: Int] = [:]

    /// Testing (debug builds): how many leading rows the last diff found where they were
    /// (the previous rows' identities at the same indices) and paired without their keys.
    @_spi(Testing)
    public var lastKeptKeys: Int { keptKeysOfLastDiff }

    @usableFromInline var keptKeysOfLastDiff = 0

    @usableFromInline
    func noteWay(_ way: String) { pairingWays[way, default: 0] += 1 }
    #endif

    /// Bytes kept a row between calls. Keeping the previous snapshot: the identity key and
    /// the row's stride (which the snapshot array shares with yours while you keep it).
    /// Hash-only: the identity key and content hash, plus the identity's stride when kept.
    /// Both carry the set of the identity keys, which spares the next call indexing the
    /// previous rows: 8 bytes a slot, 2 to 4 slots a row (16 slots at least), counted here
    /// once there are rows; a differ that compares rows as bytes also keeps a bit a row (which
    /// rows were unequal to themselves), counted with it. Heap storage that rows or
    /// identities own (a long string's characters) comes on top.
    public var keptBytesPerRow: Int {
        let selfUnequalBytes = selfUnequalKnown ? previousSelfUnequal.count * 8 : 0
        let carriedBytes = rowCount == 0 ? 0 : (carried.allocatedBytes + selfUnequalBytes + rowCount - 1) / rowCount
        return carriedBytes + (keepsOnlyHashes
            ? 16 + (keepsIdentities ? MemoryLayout<Adapter.Identity>.stride : 0)
            : 8 + MemoryLayout<Adapter.Row>.stride)
    }

    /// Forgets the previous rows: the next call is initial again.
    public func reset() {
        previousRows = []
        previousKeys.removeAll(keepingCapacity: true)
        previousContents.removeAll(keepingCapacity: true)
        previousIdentities.removeAll(keepingCapacity: true)
        carried.forget()
        selfUnequalKnown = false
        hasPrevious = false
    }

    /// Diffs `rows` against the previous call's rows and keeps what the next call needs.
    /// - Parameter rows: the new snapshot. Pass an `Array` to have it shared, not copied.
    /// - Returns: the changeset from the previous snapshot (all insertions on the first call).
    /// - Complexity: O(n) expected plus the moves' O(k log k); one identity key per row and
    ///   one content comparison (or content hash) per paired row, with two exceptions when
    ///   the differ keeps the snapshot. Rows that kept their identities and places from the
    ///   first on (nothing changed, only contents changed, rows came or went only at the end,
    ///   as in a chat or a log) pair in place and keep their previous keys: with a layout
    ///   they are compared 16 at a time, as bytes or as integer fields, and otherwise only
    ///   the leading rows equal to the previous ones are. And with an adapter whose layout
    ///   says equal bytes are equal rows, any row whose bytes equal its previous row's takes
    ///   the previous key and needs no comparison.
    @inlinable
    public func diff<Rows: RandomAccessCollection>(_ rows: Rows) -> DifferUpdate<Adapter.Identity> where Rows.Element == Adapter.Row {
        if keepsOnlyHashes {
            return _withContiguousRows(rows) { buffer in diffHashes(buffer) }
        }
        let snapshot = (rows as? [Adapter.Row]) ?? Array(rows)
        return snapshot.withUnsafeBufferPointer { buffer in diffSnapshot(snapshot, buffer) }
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

    /// The update of the first call: every row inserted.
    @inlinable
    func initialUpdate(_ count: Int) -> DifferUpdate<Adapter.Identity> {
        DifferUpdate(changeset: Changeset(oldCount: 0, newCount: count, insertions: Array(0..<count)),
                     isInitial: true, deletedIdentities: keepsIdentities ? [] : nil)
    }

    /// Keeping the previous snapshot: pairs, verifies and compares through the adapter, as a
    /// one-shot diff does, reusing the previous call's identity keys.
    @inlinable
    func diffSnapshot(_ snapshot: [Adapter.Row], _ new: UnsafeBufferPointer<Adapter.Row>) -> DifferUpdate<Adapter.Identity> {
        Self.resize(&nextKeys, to: new.count)
        let fields = integerFields
        // Rows compared as bytes need to know which previous rows were unequal to themselves;
        // not while the carried set cannot pair (repeated identities), so that such calls
        // make no pass for it. The first call builds the set, so it records them.
        let tracksSelfUnequal = fields == nil && comparesBytes && (carried.isUsable || !hasPrevious)
        if tracksSelfUnequal {
            Self.resize(&nextSelfUnequal, to: (new.count + 63) / 64)
            Self.resize(&candidateRows, to: (new.count + 63) / 64)
        }
        defer {
            previousRows = snapshot
            if tracksSelfUnequal { swap(&previousSelfUnequal, &nextSelfUnequal) }
            selfUnequalKnown = tracksSelfUnequal
            hasPrevious = true
        }
        guard hasPrevious else {
            nextKeys.withUnsafeMutableBufferPointer { adapter.writeIdentityKeys(of: new, to: $0) }
            if tracksSelfUnequal { nextSelfUnequal.withUnsafeMutableBufferPointer { markSelfUnequal(new, from: 0, in: $0) } }
            nextKeys.withUnsafeBufferPointer { carried.rebuild($0) }
            swap(&previousKeys, &nextKeys)
            return initialUpdate(new.count)
        }
        let changeset = pair(new, fields: fields, tracksSelfUnequal: tracksSelfUnequal)
        let update = keptSnapshotUpdate(changeset)
        #if DIFFENGINE_PROBES
        keptKeysOfLastDiff = workspace.keptKeys
        #endif
        carryKeys(changeset, kept: workspace.keptKeys)
        return update
    }

    /// The differ's one pairing: the walk over the carried keys, told what it may read of
    /// the rows (integer fields where they lie; the bytes of rows whose layout makes equal
    /// bytes equal rows, with the adapter asked only for the keys of rows whose bytes changed;
    /// else the keys, written past the rows equal to the previous ones in place), and when it
    /// cannot pair (repeated identities, or hashed keys that collided), pairing by indexing,
    /// as in a one-shot diff. Rows that kept their places (nothing changed, only contents
    /// changed, rows came or went only at the end) pair in place, without their keys.
    @inlinable
    func pair(_ new: UnsafeBufferPointer<Adapter.Row>, fields: (identity: Int, contents: [Int])?,
              tracksSelfUnequal: Bool) -> Changeset {
        let adapter = adapter, carried = carried
        let bytes = tracksSelfUnequal && selfUnequalKnown && carried.isUsable
        #if DIFFENGINE_PROBES
        let carriedBefore = carried.pairings
        #endif
        let changeset = previousRows.withUnsafeBufferPointer { old in
            previousKeys.withUnsafeBufferPointer { oldKeys in
                nextKeys.withUnsafeMutableBufferPointer { newKeys in
                    previousSelfUnequal.withUnsafeBufferPointer { oldSelfUnequal in
                        nextSelfUnequal.withUnsafeMutableBufferPointer { newSelfUnequal in
                            candidateRows.withUnsafeMutableBufferPointer { candidates in
                                let rows: _CarriedRows
                                if let fields, carried.isUsable {
                                    rows = .fields(old: UnsafeRawPointer(old.baseAddress), new: UnsafeRawPointer(new.baseAddress),
                                                   stride: MemoryLayout<Adapter.Row>.stride, identity: fields.identity,
                                                   contents: fields.contents)
                                } else if bytes {
                                    let anySelfUnequal: UnsafeBufferPointer<UInt64>? = oldSelfUnequal.contains { $0 != 0 } ? oldSelfUnequal : nil
                                    rows = .bytes(old: UnsafeRawPointer(old.baseAddress), new: UnsafeRawPointer(new.baseAddress),
                                                  stride: MemoryLayout<Adapter.Row>.stride,
                                                  oldSelfUnequal: anySelfUnequal,
                                                  newSelfUnequal: newSelfUnequal, candidates: candidates)
                                } else {
                                    let prefix = carried.isUsable ? _equalPrefixLength(old, new, adapter) : 0
                                    adapter.writeIdentityKeys(of: UnsafeBufferPointer(rebasing: new[prefix...]),
                                                              to: UnsafeMutableBufferPointer(rebasing: newKeys[prefix...]))
                                    if tracksSelfUnequal {
                                        newSelfUnequal.update(repeating: 0)
                                        Self.markSelfUnequal(new, from: 0, to: new.count, in: newSelfUnequal, adapter)
                                    }
                                    rows = .keys(equalPrefix: prefix)
                                }
                                let keysOut = newKeys, selfUnequalOut = newSelfUnequal
                                let walk = _CarriedWalk(keys: carried, rows: rows, newKeys: newKeys, readKeys: { from, to in
                                    adapter.writeIdentityKeys(of: UnsafeBufferPointer(rebasing: new[from..<to]),
                                                              to: UnsafeMutableBufferPointer(rebasing: keysOut[from..<to]))
                                    Self.markSelfUnequal(new, from: from, to: to, in: selfUnequalOut, adapter)
                                }, compareInPlace: { from, to, updated in
                                    // Rows whose bytes changed where they were: compared with
                                    // the previous rows in place, so their keys are not needed,
                                    // and while both are in cache.
                                    let oldBase = old.baseAddress!, newBase = new.baseAddress!
                                    for index in from..<to {
                                        guard adapter._identitiesEqual(at: oldBase + index, newBase + index) else { return index - from }
                                        if !adapter._contentsEqual(at: oldBase + index, newBase + index) {
                                            updated[index &>> 6] |= 1 &<< UInt64(index & 63)
                                        }
                                        if Self.isUnequalToItself(newBase + index, adapter) {
                                            selfUnequalOut[index &>> 6] |= 1 &<< UInt64(index & 63)
                                        }
                                    }
                                    return to - from
                                })
                                return _runPasses(workspace, oldKeys: oldKeys, newKeys: UnsafeBufferPointer(newKeys),
                                                  identities: .rows(old, new, adapter), carried: walk,
                                                  updates: _ContentUpdates(old, new, adapter), finish: moves) { workspace, counts in
                                    workspace.read(counts!, offset: 0, oldCount: old.count, newCount: new.count)
                                }
                            }
                        }
                    }
                }
            }
        }
        #if DIFFENGINE_PROBES
        noteWay(carried.pairings == carriedBefore ? "indexed" : fields != nil ? "fields walk" : bytes ? "bytes walk" : "keys walk")
        #endif
        return changeset
    }

    /// Whether rows are compared with the previous ones as bytes first (the adapter's layout
    /// says equal bytes are equal rows; rows a whole number of 8-byte words).
    @inlinable
    var comparesBytes: Bool {
        adapter.rowLayout?.equalBytesAreEqualRows == true && MemoryLayout<Adapter.Row>.stride % 8 == 0
    }

    /// The offsets of the rows' integer identity and content fields, when the adapter's layout
    /// has both: the walk then reads and compares them where they lie.
    @inlinable
    var integerFields: (identity: Int, contents: [Int])? {
        guard let fields = adapter.rowLayout?._integerFields(rowSize: MemoryLayout<Adapter.Row>.size) else { return nil }
        precondition(adapter.identityKeysAreExact, "a RowLayout with an integer identity needs exact identity keys")
        return fields
    }

    /// Whether the adapter finds the row unequal to itself, in identity or in content (a
    /// `Double` holding NaN): equal bytes then do not make it equal to its previous row.
    @inlinable
    static func isUnequalToItself(_ row: UnsafePointer<Adapter.Row>, _ adapter: Adapter) -> Bool {
        !adapter._identitiesEqual(at: row, row) || !adapter._contentsEqual(at: row, row)
    }

    /// Sets in `bits` the bit of each row of `new[from..<to]` that the adapter finds unequal
    /// to itself.
    @inlinable
    static func markSelfUnequal(_ new: UnsafeBufferPointer<Adapter.Row>, from: Int, to: Int,
                                in bits: UnsafeMutableBufferPointer<UInt64>, _ adapter: Adapter) {
        guard let base = new.baseAddress else { return }
        for index in from..<to where isUnequalToItself(base + index, adapter) {
            bits[index &>> 6] |= 1 &<< UInt64(index & 63)
        }
    }

    /// `markSelfUnequal` over every row of `new`, into `bits` (zeroed first).
    @inlinable
    func markSelfUnequal(_ new: UnsafeBufferPointer<Adapter.Row>, from: Int, in bits: UnsafeMutableBufferPointer<UInt64>) {
        bits.update(repeating: 0)
        Self.markSelfUnequal(new, from: from, to: new.count, in: bits, adapter)
    }

    /// The update for `changeset`, its deleted rows named from the previous snapshot (still
    /// the previous call's: before `diffSnapshot` replaces it).
    @inlinable
    func keptSnapshotUpdate(_ changeset: Changeset) -> DifferUpdate<Adapter.Identity> {
        let old = previousRows
        return DifferUpdate(changeset: changeset, isInitial: false,
                            deletedIdentities: changeset.deletions.map { adapter.identity(of: old[$0]) })
    }

    /// Carries this call's identity keys to the next, by `changeset`'s rows: the set, and
    /// `previousKeys`, which become the new keys. The first `kept` new rows kept the previous
    /// rows' keys (the walk did not write them to `nextKeys`), so only the shorter part moves:
    /// the rest into `previousKeys`, or the kept ones into `nextKeys`, which then swaps in.
    @inlinable
    func carryKeys(_ changeset: Changeset, kept: Int) {
        // Deleted and inserted rows all lie past the kept rows, where both arrays are written.
        let setHoldsNewKeys = previousKeys.withUnsafeBufferPointer { oldKeys in
            nextKeys.withUnsafeBufferPointer { newKeys in carried.update(from: oldKeys, to: newKeys, by: changeset) }
        }
        let count = nextKeys.count
        if kept * 2 > count {
            Self.resize(&previousKeys, to: count)
            previousKeys.withUnsafeMutableBufferPointer { keys in
                nextKeys.withUnsafeBufferPointer { newKeys in
                    (keys.baseAddress! + kept).update(from: newKeys.baseAddress! + kept, count: count - kept)
                }
            }
        } else {
            if kept > 0 {
                nextKeys.withUnsafeMutableBufferPointer { newKeys in
                    previousKeys.withUnsafeBufferPointer { newKeys.baseAddress!.update(from: $0.baseAddress!, count: kept) }
                }
            }
            swap(&previousKeys, &nextKeys)
        }
        if !setHoldsNewKeys { previousKeys.withUnsafeBufferPointer { carried.rebuild($0) } }
    }

    /// Hash-only state: identity keys and content hashes (and identities when kept).
    @inlinable
    func diffHashes(_ rows: UnsafeBufferPointer<Adapter.Row>) -> DifferUpdate<Adapter.Identity> {
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
            swap(&previousContents, &nextContents)
            swap(&previousIdentities, &nextIdentities)
            hasPrevious = true
        }
        guard hasPrevious else {
            nextKeys.withUnsafeBufferPointer { carried.rebuild($0) }
            swap(&previousKeys, &nextKeys)
            return initialUpdate(rows.count)
        }

        let old = previousIdentities, new = nextIdentities
        // Without identities at hand, keys are taken as they are (see the initializer's note).
        let identities = keepsIdentities ? _IdentityCheck(
            exact: adapter.identityKeysAreExact,
            equal: { aSide, a, bSide, b in (aSide == .old ? old[a] : new[a]) == (bSide == .old ? old[b] : new[b]) },
            seededKeys: { oldSeeded, newSeeded in
                for index in old.indices { oldSeeded[index] = _seededKey(old[index]) }
                for index in new.indices { newSeeded[index] = _seededKey(new[index]) }
                return true
            }) : nil
        let changeset = previousKeys.withUnsafeBufferPointer { oldKeys in
            nextKeys.withUnsafeMutableBufferPointer { newKeys in
                previousContents.withUnsafeBufferPointer { oldContents in
                    nextContents.withUnsafeBufferPointer { newContents in
                        _runPasses(workspace, oldKeys: oldKeys, newKeys: UnsafeBufferPointer(newKeys), identities: identities,
                                   carried: _CarriedWalk(keys: carried, rows: .keys(equalPrefix: 0), newKeys: newKeys),
                                   updates: _HashUpdates(oldContents, newContents), finish: moves) { workspace, counts in
                            workspace.read(counts!, offset: 0, oldCount: oldKeys.count, newCount: newKeys.count)
                        }
                    }
                }
            }
        }
        carryKeys(changeset, kept: workspace.keptKeys)
        return DifferUpdate(changeset: changeset, isInitial: false,
                            deletedIdentities: keepsIdentities ? changeset.deletions.map { previousIdentities[$0] } : nil)
    }
}

extension Differ where Adapter: ContentHashingAdapter {
    /// Creates a differ that keeps only each row's identity key and content hash (16 bytes a
    /// row) and, with `keepsIdentities`, the identities — never the rows.
    ///
    /// - Parameters:
    ///   - adapter: how to read identity and content of a row; its content hash must cover
    ///     every field its equality compares.
    ///   - moves: how moves are reported.
    ///   - keepsIdentities: keep the previous rows' identities too, to verify every match and
    ///     to report the identities of deleted rows.
    /// - Note: Contents are compared by their 64-bit content hash only, so an update whose
    ///   fields the hash ignores is missed: with `IdentifiableAdapter`, the content hash is
    ///   the rows' `hashValue`, which many models compute from the id alone. Without
    ///   `keepsIdentities`, identities other than integers pair by their 64-bit hash.
    /// - Complexity: each call hashes every row's content, where a differ keeping the
    ///   snapshot compares only the paired rows: with integer fields the two cost about the
    ///   same, with string or date fields hash-only state can cost a few times a one-shot
    ///   diff. It saves memory, not time.
    public convenience init(keepingOnlyHashesOf adapter: Adapter, moves: MoveMode = .minimal, keepsIdentities: Bool = false) {
        self.init(adapter: adapter, moves: moves, hashesOnly: keepsIdentities)
    }
}
