// The one file that talks to CDiffCore. Everything here is internal; the generic,
// inlinable engine reaches it through @usableFromInline entry points whose signatures
// use Swift types only, and every pointer handed to C lives only inside the call.
internal import CDiffCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@usableFromInline
internal let _unpaired: UInt32 = DC_UNPAIRED

/// The secret that places keys in the core's identity table, drawn once per process from
/// the system's random source. Results never depend on it; only an attacker who knew it
/// could craft keys that share probe sequences.
private let _placementSeed: UInt64 = UInt64.random(in: .min ... .max)

/// XXH3-64 of `bytes` seeded with a per-process secret: the seeded identity key of
/// byte-backed identities (strings, byte arrays, UUIDs), which nobody can craft collisions
/// for without the secret.
@usableFromInline
internal func _secretHash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    dc_hash_bytes_seeded(bytes.baseAddress, bytes.count, _rekeyingSeed)
}

/// XXH3-64 of `bytes` with the caller's seed.
@usableFromInline
internal func _seededHash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
    dc_hash_bytes_seeded(bytes.baseAddress, bytes.count, seed)
}

private let _rekeyingSeed: UInt64 = UInt64.random(in: .min ... .max)

/// How many identity checks may fail (equal keys, distinct identities) in one pass over
/// `rows` rows before the core stops and the caller re-keys with a secret-seeded hash.
/// Honest 64-bit keys almost never fail one; a crafted class of c colliding identities
/// costs about c² / 2, so a linear budget bounds the time spent before re-keying.
@usableFromInline
internal func _collisionBudget(rows: Int) -> Int { 64 + rows / 2 }

/// Asks the processor to load the old rows that `pairing` names for the 64 new rows
/// `DC_PREFETCH_AHEAD` past new row `next`, when the `count` old rows of `stride` bytes are
/// too many for the cache (`dc_prefetch_paired_rows`): a loop comparing paired rows calls it
/// every 64 rows, so that the rows moved from far away are not memory round trips taken one
/// at a time.
@usableFromInline
internal func _prefetchPairedRows(_ rows: UnsafeRawPointer, count: Int, stride: Int,
                                  pairing: UnsafeBufferPointer<UInt32>, next: Int) {
    dc_prefetch_paired_rows(rows, count, stride, pairing.baseAddress, pairing.count, next)
}

/// From how many bytes of old rows `_prefetchPairedRows` prefetches (below, it returns at
/// once: loops skip the call).
@usableFromInline
internal let _farRowBytes = Int(DC_FAR_ROW_BYTES)

/// XXH3-64 with the engine's fixed seed over `bytes`.
@usableFromInline
internal func _stableHash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    dc_hash_bytes(bytes.baseAddress, bytes.count)
}

/// XXH3-64 of the two hashes' little-endian bytes: how multi-field keys fold.
@usableFromInline
internal func _combineHashes(_ first: UInt64, _ second: UInt64) -> UInt64 {
    dc_hash_combine(first, second)
}

/// Hashes spans of one byte buffer in C, straight from the buffer.
@usableFromInline
internal func _hashSpans(
    _ bytes: UnsafeRawBufferPointer, offsets: UnsafeBufferPointer<UInt64>,
    lengths: UnsafeBufferPointer<UInt64>, into out: UnsafeMutableBufferPointer<UInt64>
) {
    precondition(offsets.count == lengths.count && out.count == offsets.count, "span arrays differ in length")
    // Spans are validated in C; a bad one is a caller error.
    var spans = (0..<offsets.count).map { dc_span_t(offset: offsets[$0], length: lengths[$0]) }
    let status = spans.withUnsafeMutableBufferPointer { spanBuffer in
        dc_hash_spans(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count,
                      spanBuffer.baseAddress, spanBuffer.count, out.baseAddress)
    }
    _check(status)
}

private func _check(_ status: dc_status_t, _ what: StaticString = "CDiffCore") {
    precondition(status == DC_OK, "\(what): \(String(cString: dc_status_message(status)))")
}

/// Bridges a Swift equality closure to the core's C callback.
private final class _EqualityBox {
    let equal: (DiffSide, Int, DiffSide, Int) -> Bool
    init(_ equal: @escaping (DiffSide, Int, DiffSide, Int) -> Bool) { self.equal = equal }
}

private func _side(_ raw: UInt32) -> DiffSide { raw == UInt32(DC_SIDE_OLD) ? .old : .new }

private let _equalityThunk: dc_equal_fn = { context, aSide, aIndex, bSide, bIndex in
    let box = Unmanaged<_EqualityBox>.fromOpaque(context!).takeUnretainedValue()
    return box.equal(_side(aSide), aIndex, _side(bSide), bIndex)
}

/// Calls `body` with the C callback and context for `equal` (nil gives nil); the context
/// must not escape `body`.
private func _withEquality<R>(
    _ equal: ((DiffSide, Int, DiffSide, Int) -> Bool)?,
    _ body: (dc_equal_fn?, UnsafeMutableRawPointer?) -> R
) -> R {
    guard let equal else { return body(nil, nil) }
    let box = _EqualityBox(equal)
    return withExtendedLifetime(box) {
        body(_equalityThunk, Unmanaged.passUnretained(box).toOpaque())
    }
}

/// Counts of one finished diff.
@usableFromInline
internal struct _CoreCounts {
    @usableFromInline var deletions = 0
    @usableFromInline var insertions = 0
    @usableFromInline var updates = 0
    @usableFromInline var moves = 0
}

/// Memory for the core's passes, uninitialized; free it with `deallocate()`. On Linux,
/// blocks of 4 MiB or more are aligned to 2 MiB and offered transparent huge pages: the
/// first touch of a fresh workspace for millions of rows otherwise takes a page fault
/// every 4 KiB (a third of a 10M-row diff), and its random probes a TLB miss each. The
/// advice is only that: where huge pages are off, nothing changes.
private func _allocateScratch(byteCount: Int) -> UnsafeMutableRawPointer {
    #if os(Linux) && (canImport(Glibc) || canImport(Musl))
    let hugePage = 2 << 20
    if byteCount >= 2 * hugePage {
        let rounded = (byteCount + hugePage - 1) / hugePage * hugePage
        let memory = UnsafeMutableRawPointer.allocate(byteCount: rounded, alignment: hugePage)
        _ = madvise(memory, rounded, MADV_HUGEPAGE)
        return memory
    }
    #endif
    return UnsafeMutableRawPointer.allocate(byteCount: Swift.max(byteCount, 8), alignment: 16)
}

/// A reusable workspace for the core's passes. Grows (by half again at least) when a larger
/// diff needs it; never shrinks, so a stream of diffs of similar or slowly growing size
/// allocates only now and then after the first.
@usableFromInline
internal final class _DiffWorkspace {
    fileprivate var memory: UnsafeMutableRawPointer?
    fileprivate var capacity = 0
    fileprivate(set) var oldCount = 0
    fileprivate(set) var newCount = 0
    /// After a carried match: how many leading new rows kept the old rows' keys, unwritten
    /// (0 after any other pass 1).
    @usableFromInline fileprivate(set) var keptKeys = 0

    @usableFromInline
    init() {}

    private var keyScratch: UnsafeMutableBufferPointer<UInt64>?

    deinit {
        memory?.deallocate()
        keyScratch?.deallocate()
        updateScratch?.deallocate()
    }

    /// Bytes currently held, for memory accounting.
    @usableFromInline
    var allocatedBytes: Int { capacity + (keyScratch?.count ?? 0) * 8 }

    /// Scratch space for `count` identity keys, reused across diffs. Valid until the next
    /// call; must not escape the diff that asked for it.
    @usableFromInline
    func keyBuffer(count: Int) -> UnsafeMutableBufferPointer<UInt64> {
        if let keyScratch, keyScratch.count >= count {
            return UnsafeMutableBufferPointer(rebasing: keyScratch[..<count])
        }
        // Half as much again when it grows, as `reserve` does.
        let capacity = Swift.max(count, 1, (keyScratch?.count ?? 0) * 3 / 2)
        keyScratch?.deallocate()
        let fresh = UnsafeMutableBufferPointer(
            start: _allocateScratch(byteCount: capacity * 8).bindMemory(to: UInt64.self, capacity: capacity), count: capacity)
        keyScratch = fresh
        return UnsafeMutableBufferPointer(rebasing: fresh[..<count])
    }

    fileprivate func reserve(_ bytes: Int) -> UnsafeMutableRawPointer {
        if let memory, capacity >= bytes { return memory }
        memory?.deallocate()
        // Growing, it takes half as much again: a stream whose rows grow a little with each
        // diff (a chat, a log) would otherwise get fresh memory, and fault in its pages, on
        // every call.
        let grown = max(bytes, 8, capacity * 3 / 2)
        let fresh = _allocateScratch(byteCount: grown)
        memory = fresh
        capacity = grown
        return fresh
    }

    /// Pass 1: pairs rows by identity key. `identityEqual`, when given, verifies rows with
    /// equal keys.
    /// - Returns: false (and no pairing) when `collisionBudget` (0: none) failed identity
    ///   checks were exceeded: many distinct identities share keys, so the caller re-keys.
    @usableFromInline
    @discardableResult
    func match(
        oldKeys: UnsafeBufferPointer<UInt64>, newKeys: UnsafeBufferPointer<UInt64>,
        identityEqual: ((DiffSide, Int, DiffSide, Int) -> Bool)?, collisionBudget: Int = 0
    ) -> Bool {
        let size = dc_diff_workspace_size(oldKeys.count, newKeys.count)
        precondition(size != 0, "too many rows for one diff (at most \(DC_MAX_ROWS) a side)")
        let workspace = reserve(size)
        oldCount = oldKeys.count
        newCount = newKeys.count
        keptKeys = 0
        let status = _withEquality(identityEqual) { function, context in
            var input = dc_match_input_t(
                old_keys: oldKeys.baseAddress, old_count: oldKeys.count,
                new_keys: newKeys.baseAddress, new_count: newKeys.count,
                identity_equal: function, context: context,
                placement_seed: _placementSeed, collision_budget: collisionBudget)
            return dc_match(workspace, capacity, &input)
        }
        if status == DC_ERR_TOO_MANY_COLLISIONS { return false }
        _check(status, "dc_match")
        return true
    }

    /// The pairing of the last match, by new row: the old index or `_unpaired`.
    /// Valid until the next match on this workspace; must not escape the caller.
    @usableFromInline
    var newToOld: UnsafeBufferPointer<UInt32> {
        UnsafeBufferPointer(start: dc_new_to_old(memory), count: newCount)
    }

    /// The pairing of the last match as runs of paired rows, three values a run (old start,
    /// new start, length), when the core holds it that way (after a carried match, until
    /// `newToOld` writes it out per row); nil otherwise. Must not escape the caller.
    @usableFromInline
    var pairedRuns: UnsafeBufferPointer<UInt32>? {
        var count = 0
        guard let segments = dc_pairing_segments(memory, &count) else { return nil }
        return UnsafeBufferPointer(start: UnsafeRawPointer(segments).assumingMemoryBound(to: UInt32.self),
                                   count: count * MemoryLayout<dc_segment_t>.stride / MemoryLayout<UInt32>.stride)
    }

    private var updateScratch: UnsafeMutableBufferPointer<UInt64>?

    /// A zeroed bitmap of one bit a new row of the last match, reused across diffs, for the
    /// caller to flag updated rows in and hand back with `markUpdatedRows`. Must not escape.
    @usableFromInline
    func updateBitmap() -> UnsafeMutableBufferPointer<UInt64> {
        let words = (newCount + 63) / 64
        if let scratch = updateScratch, scratch.count >= words {
            let bits = UnsafeMutableBufferPointer(rebasing: scratch[..<words])
            bits.update(repeating: 0)
            return bits
        }
        updateScratch?.deallocate()
        let fresh = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: Swift.max(words, 1))
        fresh.initialize(repeating: 0)
        updateScratch = fresh
        return UnsafeMutableBufferPointer(rebasing: fresh[..<words])
    }

    /// Pass 2 in one call: flags the rows set in `bits` (from `updateBitmap`) as updated.
    @usableFromInline
    func markUpdatedRows(_ bits: UnsafeMutableBufferPointer<UInt64>) {
        _check(dc_mark_updated_rows(memory, bits.baseAddress, bits.count), "dc_mark_updated_rows")
    }

    /// Flags pairs whose content hashes differ (and, with `contentEqual`, pairs whose equal
    /// hashes hide unequal contents).
    @usableFromInline
    func markUpdates(
        oldContents: UnsafeBufferPointer<UInt64>, newContents: UnsafeBufferPointer<UInt64>,
        contentEqual: ((DiffSide, Int, DiffSide, Int) -> Bool)?
    ) {
        precondition(oldContents.count == oldCount && newContents.count == newCount,
                     "content hash arrays must match the matched row counts")
        let status = _withEquality(contentEqual) { function, context in
            dc_mark_updates_by_hash(memory, oldContents.baseAddress, newContents.baseAddress, function, context)
        }
        _check(status, "dc_mark_updates_by_hash")
    }

    /// The updated flags of the last match, one bit a new row (bit j of word j / 64), read
    /// in one call. Valid until the next match; must not escape the caller.
    @usableFromInline
    var updatedBits: UnsafeBufferPointer<UInt64> {
        UnsafeBufferPointer(start: dc_updated_rows(memory), count: (newCount + 63) / 64)
    }

    @usableFromInline
    func finish(_ mode: MoveMode) -> _CoreCounts {
        let coreMode: dc_move_mode_t = switch mode {
        case .minimal: DC_MOVES_MINIMAL
        case .displaced: DC_MOVES_DISPLACED
        case .none: DC_MOVES_NONE
        }
        var counts = dc_counts_t()
        _check(dc_finish(memory, coreMode, &counts), "dc_finish")
        return _CoreCounts(deletions: counts.deletions, insertions: counts.insertions,
                           updates: counts.updates, moves: counts.moves)
    }

    /// Copies the finished lists out, every index plus `offset`.
    @usableFromInline
    func read(_ counts: _CoreCounts, offset: Int, oldCount: Int, newCount: Int) -> Changeset {
        IndexPair._checkLayout()
        // Zero-filled, not `unsafeUninitializedCapacity`: with a capacity of 0 that writes
        // into the shared empty-array storage, a (benign) race that ThreadSanitizer reports.
        var deletions = [Int](repeating: 0, count: counts.deletions)
        var insertions = [Int](repeating: 0, count: counts.insertions)
        var updates = [IndexPair](repeating: IndexPair(old: 0, new: 0), count: counts.updates)
        var moves = [IndexPair](repeating: IndexPair(old: 0, new: 0), count: counts.moves)
        let status = deletions.withUnsafeMutableBufferPointer { deletionBuffer in
            insertions.withUnsafeMutableBufferPointer { insertionBuffer in
                updates.withUnsafeMutableBufferPointer { updateBuffer in
                    moves.withUnsafeMutableBufferPointer { moveBuffer in
                        var buffers = dc_changeset_buffers_t(
                            deletions: _int64(deletionBuffer), deletions_capacity: deletionBuffer.count,
                            insertions: _int64(insertionBuffer), insertions_capacity: insertionBuffer.count,
                            updates: _pairs(updateBuffer), updates_capacity: updateBuffer.count,
                            moves: _pairs(moveBuffer), moves_capacity: moveBuffer.count)
                        return dc_read(memory, offset, &buffers)
                    }
                }
            }
        }
        _check(status, "dc_read")
        return Changeset(oldCount: oldCount, newCount: newCount, deletions: deletions,
                         insertions: insertions, updates: updates, moves: moves)
    }
}

/// The identity keys a stateful differ carries from one diff to the next: the core's key
/// set of the last snapshot, so that the next diff pairs its rows without indexing the old
/// ones. Usable only while that snapshot's keys are distinct; a stream whose rows repeat
/// identities rebuilds it less and less often (after 1, 2, 4, … 64 diffs).
@usableFromInline
internal final class _CarriedKeys {
    fileprivate var memory: UnsafeMutableRawPointer?
    fileprivate var size = 0
    /// Whether the set holds the last snapshot's keys, all distinct.
    @usableFromInline private(set) var isUsable = false
    #if DIFFENGINE_PROBES
    /// Diffs paired from the carried keys: a probe for tests, in debug builds only.
    @usableFromInline var pairings = 0
    #endif
    private var rebuildInterval = 0
    private var diffsUntilRebuild = 0

    @usableFromInline
    init() {}

    deinit { memory?.deallocate() }

    /// Bytes held.
    @usableFromInline
    var allocatedBytes: Int { size }

    /// Forgets the keys: the next diff pairs without them.
    @usableFromInline
    func forget() {
        isUsable = false
        rebuildInterval = 0
        diffsUntilRebuild = 0
    }

    /// Makes the set hold `keys`.
    @usableFromInline
    func rebuild(_ keys: UnsafeBufferPointer<UInt64>) {
        let needed = dc_key_set_size(keys.count)
        precondition(needed != 0, "too many rows for one diff (at most \(DC_MAX_ROWS) a side)")
        if size < needed {
            memory?.deallocate()
            memory = _allocateScratch(byteCount: needed)
            size = needed
        }
        var distinct = false
        _check(dc_key_set_build(memory, size, keys.baseAddress, keys.count, _placementSeed, &distinct),
               "dc_key_set_build")
        isUsable = distinct
        if distinct {
            rebuildInterval = 0
        } else {
            rebuildInterval = Swift.min(Swift.max(1, rebuildInterval * 2), 64)
            diffsUntilRebuild = rebuildInterval
        }
    }

    /// After the diff `changeset` of the set's snapshot (`oldKeys`) and `newKeys`: makes
    /// the set hold `newKeys` by the rows deleted and inserted; false when it must be rebuilt
    /// from the new keys (a rebuild is put off while the snapshots repeat identities: true
    /// then). Reads the new keys only at `changeset`'s insertions, so `newKeys` may hold only
    /// those rows' keys where the caller knows the others (rows it kept in place).
    @usableFromInline
    func update(from oldKeys: UnsafeBufferPointer<UInt64>, to newKeys: UnsafeBufferPointer<UInt64>,
                by changeset: Changeset) -> Bool {
        if isUsable {
            var distinct = false
            let status = changeset.deletions.withUnsafeBufferPointer { deleted in
                changeset.insertions.withUnsafeBufferPointer { inserted in
                    dc_key_set_update(memory, size, oldKeys.baseAddress, oldKeys.count, _int64(deleted), deleted.count,
                                      newKeys.baseAddress, newKeys.count, _int64(inserted), inserted.count, &distinct)
                }
            }
            isUsable = distinct
            if status == DC_OK { return distinct }
            precondition(status == DC_ERR_CAPACITY_TOO_SMALL, "dc_key_set_update: \(String(cString: dc_status_message(status)))")
        } else if diffsUntilRebuild > 0 {
            diffsUntilRebuild -= 1
            return true
        }
        return false
    }
}

/// What the carried walk may read besides the keys (see `_DiffWorkspace.matchCarried`).
@usableFromInline
internal enum _CarriedRows {
    /// Keys only: `newKeys` are written from `equalPrefix` on; the new rows before it are
    /// equal, by the adapter, to the previous rows at their indices (their keys are the
    /// previous ones), so they pair as they are and need no comparison.
    case keys(equalPrefix: Int)
    /// Rows whose identity and content fields are 8-byte integers where they lie (a layout's
    /// integer fields): the walk reads each new row once, writing its key into `newKeys`
    /// and marking the updates as it pairs.
    case fields(old: UnsafeRawPointer?, new: UnsafeRawPointer?, stride: Int, identity: Int, contents: [Int])
    /// Rows compared as bytes (a layout where equal bytes are equal rows): blocks of rows
    /// whose bytes did not change pair whole and take their old keys; the walk's `readKeys`
    /// writes the keys of the other new rows (`from..<to`) into `newKeys` and flags in
    /// `newSelfUnequal` the ones unequal to themselves; `candidates` gets the pairs the
    /// adapter must compare.
    case bytes(old: UnsafeRawPointer?, new: UnsafeRawPointer?, stride: Int,
               oldSelfUnequal: UnsafeBufferPointer<UInt64>?, newSelfUnequal: UnsafeMutableBufferPointer<UInt64>,
               candidates: UnsafeMutableBufferPointer<UInt64>)
}

/// A stateful differ's pairing from its carried keys: the set of the previous identity keys,
/// what the walk may read of the rows, the buffer of this call's keys, and, for rows compared
/// as bytes, the adapter's two answers the walk asks for: the keys of new rows `from..<to`
/// (`readKeys`), and, for new rows `from..<to` whose bytes changed in place, how many of them,
/// from the first, have the identities of the previous rows at their indices, setting in the
/// bitmap it is given the bit of each of those whose contents differ (`compareInPlace`: the
/// rows are compared while the walk has them in cache). Both also flag the rows they read
/// that are unequal to themselves.
@usableFromInline
internal struct _CarriedWalk {
    @usableFromInline let keys: _CarriedKeys
    @usableFromInline let rows: _CarriedRows
    @usableFromInline let newKeys: UnsafeMutableBufferPointer<UInt64>
    @usableFromInline let readKeys: (Int, Int) -> Void
    @usableFromInline let compareInPlace: (Int, Int, UnsafeMutablePointer<UInt64>) -> Int

    @inlinable
    init(keys: _CarriedKeys, rows: _CarriedRows, newKeys: UnsafeMutableBufferPointer<UInt64>,
         readKeys: @escaping (Int, Int) -> Void = { _, _ in },
         compareInPlace: @escaping (Int, Int, UnsafeMutablePointer<UInt64>) -> Int = { _, _, _ in 0 }) {
        self.keys = keys
        self.rows = rows
        self.newKeys = newKeys
        self.readKeys = readKeys
        self.compareInPlace = compareInPlace
    }
}

/// The closures behind the callbacks of `_CarriedRows.bytes`: held by a class, so that the C
/// callbacks reach them through an unretained reference.
private final class _RowReaderBox {
    let readKeys: (Int, Int) -> Void
    let compareInPlace: (Int, Int, UnsafeMutablePointer<UInt64>) -> Int
    init(_ walk: _CarriedWalk) {
        readKeys = walk.readKeys
        compareInPlace = walk.compareInPlace
    }
}

private let _keyReaderThunk: dc_read_keys_fn = { context, from, to in
    Unmanaged<_RowReaderBox>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.readKeys(from, to) }
}

private let _compareInPlaceThunk: @convention(c) (UnsafeMutableRawPointer?, Int, Int, UnsafeMutablePointer<UInt64>?) -> Int = {
    context, from, to, updated in
    Unmanaged<_RowReaderBox>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.compareInPlace(from, to, updated!) }
}

extension _DiffWorkspace {
    /// After a carried match whose pairs failed verification: the caller wrote the kept keys.
    @usableFromInline
    func forgetKeptKeys() { keptKeys = 0 }

    /// Pass 1 from carried keys, which must hold `oldKeys` (and pass 2 with `.fields`): false
    /// (and no pairing) when they cannot carry this diff, and the caller pairs as usual;
    /// every new key is then written. When true, the keys of the first `keptKeys` new rows
    /// are the old rows' at their indices, and were not written (`.keys`: not read either).
    /// Pointers must not escape the call.
    @usableFromInline
    func matchCarried(oldKeys: UnsafeBufferPointer<UInt64>, walk: _CarriedWalk) -> Bool {
        keptKeys = 0
        precondition(walk.keys.memory != nil, "a carried walk needs the set of the previous keys")
        let newKeys = walk.newKeys
        let size = dc_diff_workspace_size(oldKeys.count, newKeys.count)
        precondition(size != 0, "too many rows for one diff (at most \(DC_MAX_ROWS) a side)")
        let workspace = reserve(size)
        var input = dc_carried_input_t()
        input.old_keys = oldKeys.baseAddress
        input.old_count = oldKeys.count
        input.new_keys = newKeys.baseAddress
        input.new_count = newKeys.count
        var result = dc_carried_result_t()
        let status: dc_status_t
        switch walk.rows {
        case let .keys(equalPrefix):
            input.equal_prefix = equalPrefix
            status = dc_match_carried(workspace, capacity, &input, walk.keys.memory, &result)
        case let .fields(old, new, stride, identity, contents):
            status = contents.withUnsafeBufferPointer { offsets in
                input.rows = DC_ROWS_FIELDS
                input.old_rows = old
                input.new_rows = new
                input.stride = stride
                input.identity_offset = identity
                input.content_offsets = offsets.baseAddress
                input.content_count = offsets.count
                return dc_match_carried(workspace, capacity, &input, walk.keys.memory, &result)
            }
        case let .bytes(old, new, stride, oldSelfUnequal, newSelfUnequal, candidates):
            let words = (newKeys.count + 63) / 64
            precondition(candidates.count >= words && newSelfUnequal.count >= words, "one bit a new row")
            let box = _RowReaderBox(walk)
            status = withExtendedLifetime(box) {
                input.rows = DC_ROWS_BYTES
                input.old_rows = old
                input.new_rows = new
                input.stride = stride
                input.read_keys = _keyReaderThunk
                input.compare_in_place = _compareInPlaceThunk
                input.read_context = Unmanaged.passUnretained(box).toOpaque()
                input.old_self_unequal = oldSelfUnequal?.baseAddress
                input.new_self_unequal = newSelfUnequal.baseAddress
                input.candidates = candidates.baseAddress
                return dc_match_carried(workspace, capacity, &input, walk.keys.memory, &result)
            }
        }
        _check(status, "dc_match_carried")
        if result.matched {
            oldCount = oldKeys.count
            newCount = newKeys.count
            keptKeys = result.kept_keys
        }
        return result.matched
    }
}

private func _int64(_ buffer: UnsafeMutableBufferPointer<Int>) -> UnsafeMutablePointer<Int64>? {
    UnsafeMutableRawPointer(buffer.baseAddress)?.assumingMemoryBound(to: Int64.self)
}

private func _int64(_ buffer: UnsafeBufferPointer<Int>) -> UnsafePointer<Int64>? {
    UnsafeRawPointer(buffer.baseAddress)?.assumingMemoryBound(to: Int64.self)
}

private func _pairs(_ buffer: UnsafeMutableBufferPointer<IndexPair>) -> UnsafeMutablePointer<Int64>? {
    UnsafeMutableRawPointer(buffer.baseAddress)?.assumingMemoryBound(to: Int64.self)
}

/// Marks rows whose identity occurred earlier on the same side.
/// - Returns: `.some(nil)` when none do; nil when more than `collisionBudget` (0: no limit)
///   identity checks failed, so that the caller re-keys.
@usableFromInline
internal func _markRepeats(
    keys: UnsafeBufferPointer<UInt64>, side: DiffSide,
    identityEqual: ((DiffSide, Int, DiffSide, Int) -> Bool)?, collisionBudget: Int = 0
) -> [Bool]?? {
    var flags = [UInt8](repeating: 0, count: keys.count)
    var repeats = 0
    let status = _withScratch(dc_repeats_workspace_size(keys.count)) { workspace, size in
        _withEquality(identityEqual) { function, context in
            flags.withUnsafeMutableBufferPointer { flagBuffer in
                dc_mark_repeats(workspace, size, keys.baseAddress, keys.count,
                                UInt32(side == .old ? DC_SIDE_OLD : DC_SIDE_NEW),
                                function, context, _placementSeed, collisionBudget,
                                flagBuffer.baseAddress, &repeats)
            }
        }
    }
    if status == DC_ERR_TOO_MANY_COLLISIONS { return nil }
    _check(status, "dc_mark_repeats")
    return .some(repeats == 0 ? nil : flags.map { $0 != 0 })
}

/// Whether each value lies on the longest strictly increasing subsequence the core's
/// `minimal` move rule keeps (same tie rule, so in-section moves match flat moves).
@usableFromInline
internal func _longestIncreasing(_ values: [UInt32]) -> [Bool] {
    guard !values.isEmpty else { return [] }
    var keeps = [UInt8](repeating: 0, count: values.count)
    var kept = 0
    let status = _withScratch(dc_lis_workspace_size(values.count)) { workspace, size in
        values.withUnsafeBufferPointer { valueBuffer in
            keeps.withUnsafeMutableBufferPointer { keepBuffer in
                dc_longest_increasing(valueBuffer.baseAddress, values.count, workspace, size, keepBuffer.baseAddress, &kept)
            }
        }
    }
    _check(status, "dc_longest_increasing")
    return keeps.map { $0 != 0 }
}

/// Calls `body` with a fresh 16-byte-aligned workspace of `size` bytes (a size query's
/// answer; 0 means too many rows), freed after; the pointer must not escape `body`.
private func _withScratch<R>(_ size: Int, _ body: (UnsafeMutableRawPointer, Int) -> R) -> R {
    precondition(size != 0, "too many rows for one diff (at most \(DC_MAX_ROWS) a side)")
    let workspace = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
    defer { workspace.deallocate() }
    return body(workspace, size)
}
