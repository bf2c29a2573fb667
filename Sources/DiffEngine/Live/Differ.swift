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
    public let keepsOnlyHashes: Bool
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
    /// The in-place pass's bitmap of changed rows (`updatesInPlace`), reused.
    @usableFromInline var changedRows: [UInt64] = []
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
    #if DIFFENGINE_PROBES
    @usableFromInline var inPlacePairings = 0
    @usableFromInline var prefixPairings = 0
    #endif

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

    /// Testing (debug builds): how many diffs found every row where it was (the same
    /// identities in the same order) and compared the rows in place.
    @_spi(Testing)
    public var pairedInPlace: Int { inPlacePairings }

    /// Testing (debug builds): how many diffs paired a long common prefix in place and only
    /// the rest by indexing (rows appended, or changed only near the end).
    @_spi(Testing)
    public var pairedAfterPrefix: Int { prefixPairings }

    /// Testing (debug builds): how many diffs paired their rows each way ("in place",
    /// "after prefix", "fields walk", "bytes walk", "keys walk", "indexed"), so that a test
    /// can tell which way an adapter's rows went.
    @_spi(Testing)
    public internal(set) var pairingWays: [String: Int] = [:]

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
    ///   one content comparison (or content hash) per paired row, except that keeping the
    ///   snapshot with an adapter whose layout says equal bytes are equal rows, rows whose
    ///   bytes equal their previous rows' take the previous keys and need no comparison. Keeping the snapshot, rows
    ///   that all kept their identities and places (only contents changed, or nothing did)
    ///   are compared in place in one pass, without keys; when the count is the same but a
    ///   row is out of place, that pass stops there (the last and the middle row are checked
    ///   first) and the call goes on as usual. Unless the walk reads the rows itself (key paths
    ///   to integer fields), the leading rows equal to the previous ones keep their keys, and
    ///   when they are at least seven eighths of the rows (rows came, went or changed only
    ///   near the end, as in a chat or a log), only the rest are paired, as a one-shot diff
    ///   pairs what follows its common prefix.
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
        // Rows that kept their identities and their order (only contents changed, or
        // nothing did): one pass compares them in place. Their keys are the previous ones,
        // and so is the carried set.
        if hasPrevious && previousRows.count == new.count, let updates = updatesInPlace(new) {
            previousRows = snapshot
            selfUnequalKnown = false
            #if DIFFENGINE_PROBES
            inPlacePairings += 1
            noteWay("in place")
            #endif
            return DifferUpdate(changeset: Changeset(oldCount: new.count, newCount: new.count, updates: updates),
                                isInitial: false, deletedIdentities: [])
        }
        // Integer fields: one pass over the new rows reads their keys and, as it pairs them,
        // compares their contents (below); its common prefix costs what measuring one here
        // would. Other rows, appended or changed only near the end: a long prefix of equal
        // rows pairs in place, as in a one-shot diff, and only the rest is keyed and paired.
        let integerLayout = integerFields
        let layout = carried.isUsable ? integerLayout : nil
        let prefix = hasPrevious && layout == nil ? previousRows.withUnsafeBufferPointer { _equalPrefixLength($0, new, adapter) } : 0
        let longer = Swift.max(previousRows.count, new.count)
        if prefix > 0 && (longer - prefix) * Self.restFraction <= longer {
            return diffAfter(prefix: prefix, snapshot, new)
        }
        Self.resize(&nextKeys, to: new.count)
        // Rows compared as bytes need to know which previous rows were unequal to themselves;
        // not while the carried set cannot pair (repeated identities), so that such calls
        // make no pass for it. The first call builds the set, so it records them.
        let tracksSelfUnequal = integerLayout == nil && comparesBytes && (carried.isUsable || !hasPrevious)
        if tracksSelfUnequal { Self.resize(&nextSelfUnequal, to: (new.count + 63) / 64) }
        defer {
            previousRows = snapshot
            swap(&previousKeys, &nextKeys)
            if tracksSelfUnequal { swap(&previousSelfUnequal, &nextSelfUnequal) }
            selfUnequalKnown = tracksSelfUnequal
            hasPrevious = true
        }
        guard hasPrevious else {
            nextKeys.withUnsafeMutableBufferPointer { adapter.writeIdentityKeys(of: new, to: $0) }
            if tracksSelfUnequal { markSelfUnequal(new) }
            nextKeys.withUnsafeBufferPointer { carried.rebuild($0) }
            return initialUpdate(new.count)
        }
        // Integer fields: when the pass cannot pair the rows, the keys are written and the
        // set cannot carry this diff: the passes pair without it. So for rows compared as
        // bytes.
        var pairedWithUpdates = false
        var carriedUsable = layout == nil
        if tracksSelfUnequal && selfUnequalKnown && carried.isUsable {
            pairedWithUpdates = pairAsBytes(new)
            #if DIFFENGINE_PROBES
            if pairedWithUpdates { carried.pairings += 1; noteWay("bytes walk") }
            #endif
            carriedUsable = false
        } else if let layout {
            pairedWithUpdates = previousRows.withUnsafeBufferPointer { old in
                previousKeys.withUnsafeBufferPointer { oldKeys in
                    nextKeys.withUnsafeMutableBufferPointer { newKeys in
                        workspace.matchCarried(oldKeys: oldKeys, newKeys: newKeys,
                                               rows: .fields(old: UnsafeRawPointer(old.baseAddress), new: UnsafeRawPointer(new.baseAddress),
                                                             stride: MemoryLayout<Adapter.Row>.stride, identity: layout.identity,
                                                             contents: layout.contents),
                                               carried: carried)
                    }
                }
            }
            #if DIFFENGINE_PROBES
            if pairedWithUpdates { carried.pairings += 1; noteWay("fields walk") }
            #endif
        } else {
            writeKeys(of: new, keepingPrevious: prefix)
            if tracksSelfUnequal { markSelfUnequal(new) }
        }
        #if DIFFENGINE_PROBES
        let carriedBefore = carried.pairings
        defer { if !pairedWithUpdates { noteWay(carried.pairings > carriedBefore ? "keys walk" : "indexed") } }
        #endif
        let changeset = previousRows.withUnsafeBufferPointer { old in
            previousKeys.withUnsafeBufferPointer { oldKeys in
                nextKeys.withUnsafeBufferPointer { newKeys in
                    _runPasses(workspace, oldKeys: oldKeys, newKeys: newKeys,
                               identities: .rows(old, new, adapter),
                               carried: carriedUsable ? carried : nil, pairedWithUpdates: pairedWithUpdates,
                               updates: _ContentUpdates(old, new, adapter), finish: moves) { workspace, counts in
                        workspace.read(counts!, offset: 0, oldCount: old.count, newCount: new.count)
                    }
                }
            }
        }
        carryKeys(changeset)
        return keptSnapshotUpdate(changeset)
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

    /// Sets `nextSelfUnequal` (sized) for every row of `new`: the bits of the rows the adapter
    /// finds unequal to themselves.
    @inlinable
    func markSelfUnequal(_ new: UnsafeBufferPointer<Adapter.Row>) {
        let adapter = adapter
        nextSelfUnequal.withUnsafeMutableBufferPointer { bits in
            bits.update(repeating: 0)
            guard let base = new.baseAddress else { return }
            for index in new.indices where Self.isUnequalToItself(base + index, adapter) {
                bits[index &>> 6] |= 1 &<< UInt64(index & 63)
            }
        }
    }

    /// Keeping the snapshot of rows compared as bytes: pairs `new` with the previous rows
    /// from the carried keys, where blocks of rows with unchanged bytes pair whole and keep
    /// their keys, and the adapter reads only the other rows (their keys, whether each is
    /// equal to itself) and compares only the pairs whose bytes changed. True when the
    /// workspace holds the pairing and the updates; false leaves every key written (and the
    /// rows' self-inequality marked) for the passes to pair without the carried set (which
    /// could not, or paired two rows whose hashed keys collide).
    @inlinable
    func pairAsBytes(_ new: UnsafeBufferPointer<Adapter.Row>) -> Bool {
        let adapter = adapter
        Self.resize(&candidateRows, to: (new.count + 63) / 64)
        return previousRows.withUnsafeBufferPointer { old in
            previousKeys.withUnsafeBufferPointer { oldKeys in
                nextKeys.withUnsafeMutableBufferPointer { newKeys in
                    previousSelfUnequal.withUnsafeBufferPointer { oldSelfUnequal in
                        nextSelfUnequal.withUnsafeMutableBufferPointer { newSelfUnequal in
                            candidateRows.withUnsafeMutableBufferPointer { candidates -> Bool in
                                let anySelfUnequal = oldSelfUnequal.contains { $0 != 0 }
                                let matched = workspace.matchCarried(oldKeys: oldKeys, newKeys: newKeys, rows: .bytes(
                                    old: UnsafeRawPointer(old.baseAddress), new: UnsafeRawPointer(new.baseAddress),
                                    stride: MemoryLayout<Adapter.Row>.stride,
                                    oldSelfUnequal: anySelfUnequal ? oldSelfUnequal : nil, newSelfUnequal: newSelfUnequal,
                                    candidates: candidates
                                ), carried: carried) { from, to in
                                    adapter.writeIdentityKeys(of: UnsafeBufferPointer(rebasing: new[from..<to]),
                                                              to: UnsafeMutableBufferPointer(rebasing: newKeys[from..<to]))
                                    let base = new.baseAddress!
                                    for index in from..<to where Self.isUnequalToItself(base + index, adapter) {
                                        newSelfUnequal[index &>> 6] |= 1 &<< UInt64(index & 63)
                                    }
                                }
                                guard matched, let runs = workspace.pairedRuns else { return false }
                                return Self.markCandidates(old.baseAddress!, new.baseAddress!, runs: runs,
                                                           candidates: UnsafeBufferPointer(candidates),
                                                           adapter, on: workspace)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Compares the candidate pairs of a match as bytes (`runs` are its pairing) with the
    /// adapter and marks the updated ones on `workspace`; false when a candidate pair's
    /// identities differ (hashed keys collided, or an identity is unequal to itself, which
    /// its key cannot tell), so that the passes pair the rows by identity instead.
    @inlinable
    static func markCandidates(_ old: UnsafePointer<Adapter.Row>, _ new: UnsafePointer<Adapter.Row>,
                               runs: UnsafeBufferPointer<UInt32>, candidates: UnsafeBufferPointer<UInt64>,
                               _ adapter: Adapter, on workspace: _DiffWorkspace) -> Bool {
        var bits: UnsafeMutableBufferPointer<UInt64>?
        for run in stride(from: 0, to: runs.count, by: 3) {
            let oldStart = Int(runs[run]), newStart = Int(runs[run + 1]), end = newStart + Int(runs[run + 2])
            var word = newStart &>> 6
            while word &* 64 < end {
                var flagged = candidates[word]
                if word &* 64 < newStart { flagged &= ~0 &<< UInt64(newStart & 63) }
                if (word &+ 1) &* 64 > end { flagged &= (1 &<< UInt64(end & 63)) &- 1 }
                while flagged != 0 {
                    let newIndex = word &* 64 &+ flagged.trailingZeroBitCount
                    let oldRow = old + (oldStart &+ newIndex &- newStart), newRow = new + newIndex
                    if !adapter._identitiesEqual(at: oldRow, newRow) { return false }
                    if !adapter._contentsEqual(at: oldRow, newRow) {
                        if bits == nil { bits = workspace.updateBitmap() }
                        bits![newIndex &>> 6] |= 1 &<< UInt64(newIndex & 63)
                    }
                    flagged &= flagged &- 1
                }
                word &+= 1
            }
        }
        if let bits { workspace.markUpdatedRows(bits) }
        return true
    }

    /// The update for `changeset`, its deleted rows named from the previous snapshot (still
    /// the previous call's: before `diffSnapshot` or `diffAfter` replaces it).
    @inlinable
    func keptSnapshotUpdate(_ changeset: Changeset) -> DifferUpdate<Adapter.Identity> {
        let old = previousRows
        return DifferUpdate(changeset: changeset, isInitial: false,
                            deletedIdentities: changeset.deletions.map { adapter.identity(of: old[$0]) })
    }

    /// `diffSnapshot` takes the one-shot way (pairs the rows after the equal prefix, by
    /// indexing them) when they are at most 1/`restFraction` of the longer snapshot: a
    /// one-shot diff costs a few times what the walk costs a row.
    @inlinable
    static var restFraction: Int { 8 }

    /// Writes the identity keys of `new` to `nextKeys` (sized): the first `prefix` rows have
    /// their previous rows' identities, and so their keys; the rest are computed.
    @inlinable
    func writeKeys(of new: UnsafeBufferPointer<Adapter.Row>, keepingPrevious prefix: Int) {
        previousKeys.withUnsafeBufferPointer { oldKeys in
            nextKeys.withUnsafeMutableBufferPointer { newKeys in
                if prefix > 0 { newKeys.baseAddress!.update(from: oldKeys.baseAddress!, count: prefix) }
                adapter.writeIdentityKeys(of: UnsafeBufferPointer(rebasing: new[prefix...]),
                                          to: UnsafeMutableBufferPointer(rebasing: newKeys[prefix...]))
            }
        }
    }

    /// Keeping the previous snapshot, when its first `prefix` rows and `new`'s are equal in
    /// identity and content: they pair in place, unchanged; the rest are keyed and paired by
    /// indexing the old rest, as a one-shot diff pairs what follows its common prefix. Only
    /// the rest's keys are written and carried: the prefix keeps its keys where they are.
    @inlinable
    func diffAfter(prefix: Int, _ snapshot: [Adapter.Row], _ new: UnsafeBufferPointer<Adapter.Row>) -> DifferUpdate<Adapter.Identity> {
        // nextKeys[prefix...] gets the rest's keys; its first `prefix` are not read.
        Self.resize(&nextKeys, to: new.count)
        nextKeys.withUnsafeMutableBufferPointer { newKeys in
            adapter.writeIdentityKeys(of: UnsafeBufferPointer(rebasing: new[prefix...]),
                                      to: UnsafeMutableBufferPointer(rebasing: newKeys[prefix...]))
        }
        let changeset = previousRows.withUnsafeBufferPointer { old in
            if prefix == old.count && prefix == new.count { return Changeset(oldCount: prefix, newCount: prefix) }
            let oldRest = UnsafeBufferPointer(rebasing: old[prefix...]), newRest = UnsafeBufferPointer(rebasing: new[prefix...])
            return previousKeys.withUnsafeBufferPointer { oldKeys in
                nextKeys.withUnsafeBufferPointer { newKeys in
                    _runPasses(workspace, oldKeys: UnsafeBufferPointer(rebasing: oldKeys[prefix...]),
                               newKeys: UnsafeBufferPointer(rebasing: newKeys[prefix...]),
                               identities: .rows(oldRest, newRest, adapter),
                               updates: _ContentUpdates(oldRest, newRest, adapter), finish: moves) { workspace, counts in
                        workspace.read(counts!, offset: prefix, oldCount: old.count, newCount: new.count)
                    }
                }
            }
        }
        #if DIFFENGINE_PROBES
        prefixPairings += 1
        noteWay("after prefix")
        #endif
        // Deleted and inserted rows all lie past the prefix, where both key arrays are written.
        let setHoldsNewKeys = previousKeys.withUnsafeBufferPointer { oldKeys in
            nextKeys.withUnsafeBufferPointer { newKeys in
                carried.update(from: oldKeys, to: newKeys, by: changeset)
            }
        }
        let update = keptSnapshotUpdate(changeset)
        previousKeys.replaceSubrange(prefix..., with: nextKeys[prefix...])
        if !setHoldsNewKeys { previousKeys.withUnsafeBufferPointer { carried.rebuild($0) } }
        previousRows = snapshot
        selfUnequalKnown = false
        return update
    }

    /// The updates of `new` from the previous snapshot (as many rows) when every row has the
    /// identity of the previous row at its index; nil when one does not (the last and the
    /// middle row are checked first: a row out of place there spares the pass). Such rows pair
    /// in place under every move mode and duplicate rule: no row moved, came or went. The pass
    /// marks the changed rows in a bitmap kept between calls, so the updates are allocated
    /// once, at their size.
    @inlinable
    func updatesInPlace(_ new: UnsafeBufferPointer<Adapter.Row>) -> [IndexPair]? {
        guard let newBase = new.baseAddress, new.count > 0 else { return [] }
        Self.resize(&changedRows, to: (new.count + 63) / 64)
        let adapter = adapter
        let held = previousRows.withUnsafeBufferPointer { old in
            changedRows.withUnsafeMutableBufferPointer { bits -> Bool in
                let oldBase = old.baseAddress!, last = new.count - 1, middle = new.count / 2
                guard adapter._identitiesEqual(at: oldBase + last, newBase + last),
                      adapter._identitiesEqual(at: oldBase + middle, newBase + middle) else { return false }
                bits.update(repeating: 0)
                if let layout = integerFields {
                    return Self.markInPlace(UnsafeRawPointer(oldBase), UnsafeRawPointer(newBase), count: new.count,
                                            stride: MemoryLayout<Adapter.Row>.stride, layout: layout, bits: bits)
                }
                return Self.markInPlace(oldBase, newBase, count: new.count, adapter, bits: bits)
            }
        }
        guard held else { return nil }
        return changedRows.withUnsafeBufferPointer { bits in
            let count = bits.reduce(0) { $0 &+ $1.nonzeroBitCount }
            guard count > 0 else { return [] }
            return [IndexPair](unsafeUninitializedCapacity: count) { updates, initialized in
                for (word, value) in bits.enumerated() {
                    var remaining = value
                    while remaining != 0 {
                        let index = word &* 64 &+ remaining.trailingZeroBitCount
                        updates.initializeElement(at: initialized, to: IndexPair(old: index, new: index))
                        initialized &+= 1
                        remaining &= remaining &- 1
                    }
                }
            }
        }
    }

    /// `updatesInPlace`'s pass through the adapter: sets the bit of each changed row; false at
    /// the first row whose identity is not its previous row's.
    @inlinable
    static func markInPlace(_ old: UnsafePointer<Adapter.Row>, _ new: UnsafePointer<Adapter.Row>, count: Int,
                            _ adapter: Adapter, bits: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        for index in 0..<count {
            guard adapter._identitiesEqual(at: old + index, new + index) else { return false }
            if !adapter._contentsEqual(at: old + index, new + index) { bits[index &>> 6] |= 1 &<< UInt64(index & 63) }
        }
        return true
    }

    /// The same for rows of integer fields at `layout`'s offsets, compared as bits.
    @inlinable
    static func markInPlace(_ old: UnsafeRawPointer, _ new: UnsafeRawPointer, count: Int, stride: Int,
                            layout: (identity: Int, contents: [Int]), bits: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        @inline(__always) func field(_ row: UnsafeRawPointer, _ offset: Int) -> UInt64 {
            row.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        }
        if layout.contents.count == 1 {
            let content = layout.contents[0]
            for index in 0..<count {
                let oldRow = old + index &* stride, newRow = new + index &* stride
                guard field(oldRow, layout.identity) == field(newRow, layout.identity) else { return false }
                if field(oldRow, content) != field(newRow, content) { bits[index &>> 6] |= 1 &<< UInt64(index & 63) }
            }
            return true
        }
        return layout.contents.withUnsafeBufferPointer { contents -> Bool in
            for index in 0..<count {
                let oldRow = old + index &* stride, newRow = new + index &* stride
                guard field(oldRow, layout.identity) == field(newRow, layout.identity) else { return false }
                if contents.contains(where: { field(oldRow, $0) != field(newRow, $0) }) {
                    bits[index &>> 6] |= 1 &<< UInt64(index & 63)
                }
            }
            return true
        }
    }

    /// Carries this call's identity keys (`nextKeys`) to the next, by `changeset`'s rows.
    @inlinable
    func carryKeys(_ changeset: Changeset) {
        previousKeys.withUnsafeBufferPointer { oldKeys in
            nextKeys.withUnsafeBufferPointer { newKeys in
                carried.carry(from: oldKeys, to: newKeys, by: changeset)
            }
        }
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
            swap(&previousKeys, &nextKeys)
            swap(&previousContents, &nextContents)
            swap(&previousIdentities, &nextIdentities)
            hasPrevious = true
        }
        guard hasPrevious else {
            nextKeys.withUnsafeBufferPointer { carried.rebuild($0) }
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
            nextKeys.withUnsafeBufferPointer { newKeys in
                previousContents.withUnsafeBufferPointer { oldContents in
                    nextContents.withUnsafeBufferPointer { newContents in
                        _runPasses(workspace, oldKeys: oldKeys, newKeys: newKeys, identities: identities, carried: carried,
                                   updates: _HashUpdates(oldContents, newContents), finish: moves) { workspace, counts in
                            workspace.read(counts!, offset: 0, oldCount: oldKeys.count, newCount: newKeys.count)
                        }
                    }
                }
            }
        }
        carryKeys(changeset)
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
