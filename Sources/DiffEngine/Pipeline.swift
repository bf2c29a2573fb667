// The one driver of the core's passes: pairing (1), updates (2), moves and counts (3), and
// the read-out (4) that the caller picks. The one-shot diff, the flat-keys diff, both kinds
// of Differ state and the sectioned diff all run through `_runPasses`; they differ only in
// how they get their keys, whether identities are verified, and how updates are found.

/// How hashed identity keys are checked: the collision policy's inputs (see
/// `_pairByIdentity`). Nil where keys are taken as final (the flat-keys path, a hash-only
/// differ without identities).
@usableFromInline
internal struct _IdentityCheck {
    /// Keys are the identities (integer ids): nothing to verify.
    @usableFromInline let exact: Bool
    /// Whether row `a` of one side and row `b` of another have one identity.
    @usableFromInline let equal: (DiffSide, Int, DiffSide, Int) -> Bool
    /// Writes per-process secret keys for both sides; false when there are none.
    @usableFromInline let seededKeys: (UnsafeMutableBufferPointer<UInt64>, UnsafeMutableBufferPointer<UInt64>) -> Bool

    @inlinable
    init(exact: Bool, equal: @escaping (DiffSide, Int, DiffSide, Int) -> Bool,
         seededKeys: @escaping (UnsafeMutableBufferPointer<UInt64>, UnsafeMutableBufferPointer<UInt64>) -> Bool) {
        self.exact = exact
        self.equal = equal
        self.seededKeys = seededKeys
    }

    /// The check of rows read through `adapter`.
    @inlinable
    static func rows<Adapter: RowAdapter>(
        _ old: UnsafeBufferPointer<Adapter.Row>, _ new: UnsafeBufferPointer<Adapter.Row>, _ adapter: Adapter
    ) -> _IdentityCheck {
        _IdentityCheck(
            exact: adapter.identityKeysAreExact,
            equal: { aSide, a, bSide, b in
                adapter._identitiesEqual(at: (aSide == .old ? old : new).baseAddress.unsafelyUnwrapped + a,
                                         (bSide == .old ? old : new).baseAddress.unsafelyUnwrapped + b)
            },
            seededKeys: { oldSeeded, newSeeded in
                adapter.writeSeededIdentityKeys(of: old, to: oldSeeded) && adapter.writeSeededIdentityKeys(of: new, to: newSeeded)
            })
    }
}

/// Pass 2: how a caller finds the paired rows whose contents changed.
@usableFromInline
internal protocol _UpdateMarking {
    /// Flags the updated pairs of the workspace's last match, in one call to the core.
    func mark(on workspace: _DiffWorkspace)

    /// `mark(on:)` for a match by hashed keys whose pairs still need their identities
    /// checked, checking each pair as it compares it: true when every pair held (the updates
    /// are then flagged), false at the first pair that did not (nothing is flagged), nil when
    /// this marking cannot check identities (nothing is flagged either).
    func markCheckingIdentities(on workspace: _DiffWorkspace) -> Bool?

    /// `mark(on:)` after a carried walk (which holds the pairing as runs), for the pairs it
    /// left to compare: those of new rows from `prefix` on, and of those only the ones
    /// `candidates` flags when given. `checkingIdentities`: as `markCheckingIdentities(on:)`.
    func markCarried(on workspace: _DiffWorkspace, candidates: UnsafeBufferPointer<UInt64>?, from prefix: Int,
                     checkingIdentities: Bool) -> Bool?
}

extension _UpdateMarking {
    @inlinable
    func markCheckingIdentities(on workspace: _DiffWorkspace) -> Bool? { nil }

    /// Markings that compare in the core: every pair (the walk's equal prefix and unflagged
    /// pairs compare equal there too); nil when identities need checking.
    @inlinable
    func markCarried(on workspace: _DiffWorkspace, candidates: UnsafeBufferPointer<UInt64>?, from prefix: Int,
                     checkingIdentities: Bool) -> Bool? {
        if checkingIdentities { return nil }
        mark(on: workspace)
        return true
    }
}

/// Updates by the adapter's content equality, pair by pair (inlined per row type).
@usableFromInline
internal struct _ContentUpdates<Adapter: RowAdapter>: _UpdateMarking {
    @usableFromInline let old: UnsafeBufferPointer<Adapter.Row>
    @usableFromInline let new: UnsafeBufferPointer<Adapter.Row>
    @usableFromInline let adapter: Adapter
    /// Whether two threads compare half the pairs each (`DiffOptions.parallelism`).
    @usableFromInline let inParallel: Bool
    /// The offsets of the content fields when the adapter's layout says they are all 8-byte
    /// integers: compared as bits where they lie, with no call to the adapter a row.
    @usableFromInline let integerContents: [Int]?
    /// Whether the adapter's layout makes rows with equal bytes equal: such pairs need no
    /// call to the adapter.
    @usableFromInline let equalBytes: _EqualBytes?

    @inlinable
    init(_ old: UnsafeBufferPointer<Adapter.Row>, _ new: UnsafeBufferPointer<Adapter.Row>, _ adapter: Adapter,
         inParallel: Bool = false) {
        self.old = old
        self.new = new
        self.adapter = adapter
        self.inParallel = inParallel
        let layout = adapter.rowLayout
        integerContents = layout?._integerContents(rowSize: MemoryLayout<Adapter.Row>.size)
        equalBytes = _EqualBytes(layout, rowSize: MemoryLayout<Adapter.Row>.size)
    }

    @inlinable
    func mark(on workspace: _DiffWorkspace) {
        if integerContents == nil, let runs = workspace.pairedRuns {
            _ = markRuns(runs, on: workspace, candidates: nil, from: 0, checkingIdentities: false)
            return
        }
        let pairing = workspace.newToOld
        let bits = workspace.updateBitmap()
        guard let oldBase = old.baseAddress, let newBase = new.baseAddress, !pairing.isEmpty else { return }
        // Two halves split on a word of the bitmap, so that no word has two writers.
        let middle = inParallel ? (pairing.count / 2) & ~63 : pairing.count
        var foundInFirst = false, foundInSecond = false
        if middle > 0 && middle < pairing.count {
            _concurrently({ foundInFirst = mark(newRows: 0..<middle, pairing, bits, oldBase, newBase) },
                          { foundInSecond = mark(newRows: middle..<pairing.count, pairing, bits, oldBase, newBase) })
        } else {
            foundInFirst = mark(newRows: 0..<pairing.count, pairing, bits, oldBase, newBase)
        }
        if foundInFirst || foundInSecond { workspace.markUpdatedRows(bits) }
    }

    /// Checks identities while it compares contents, pair by pair through the adapter, over
    /// the pairing as runs (a carried match) or a row at a time. Not when two threads would
    /// share the marking.
    @inlinable
    func markCheckingIdentities(on workspace: _DiffWorkspace) -> Bool? {
        let runs = workspace.pairedRuns
        guard let oldBase = old.baseAddress, let newBase = new.baseAddress, runs != nil || !inParallel else { return nil }
        if let runs { return markRuns(runs, on: workspace, candidates: nil, from: 0, checkingIdentities: true) }
        return markPairs(workspace.newToOld, on: workspace, oldBase, newBase)
    }

    @inlinable
    func markCarried(on workspace: _DiffWorkspace, candidates: UnsafeBufferPointer<UInt64>?, from prefix: Int,
                     checkingIdentities: Bool) -> Bool? {
        guard let runs = workspace.pairedRuns else { return nil }
        return markRuns(runs, on: workspace, candidates: candidates, from: prefix, checkingIdentities: checkingIdentities)
    }

    /// `markCheckingIdentities(on:)` over the pairing a row at a time, through the adapter.
    @inlinable
    func markPairs(_ pairing: UnsafeBufferPointer<UInt32>, on workspace: _DiffWorkspace,
                   _ oldBase: UnsafePointer<Adapter.Row>, _ newBase: UnsafePointer<Adapter.Row>) -> Bool {
        let bits = workspace.updateBitmap()
        var any = false
        var held = true
        _inPrefetchedBlocks(pairing.indices, UnsafeRawPointer(oldBase), oldCount: old.count,
                            stride: MemoryLayout<Adapter.Row>.stride, pairing: pairing) { newRows in
            held = comparePairs(pairing, newRows: newRows, checkingIdentities: true, bits: bits, any: &any)
            return held
        }
        guard held else { return false }
        if any { workspace.markUpdatedRows(bits) }
        return true
    }

    /// `mark(on:)` over a pairing held as runs (a carried match): each run's rows side by
    /// side, without the per-row pairing; only the pairs `compareRuns` visits.
    /// `checkingIdentities`: as in `markCheckingIdentities(on:)`, false at the first pair of
    /// two identities.
    @inlinable
    func markRuns(_ runs: UnsafeBufferPointer<UInt32>, on workspace: _DiffWorkspace, candidates: UnsafeBufferPointer<UInt64>?,
                  from prefix: Int, checkingIdentities: Bool) -> Bool {
        let bits = workspace.updateBitmap()
        var any = false
        guard compareRuns(runs, candidates: candidates, from: prefix, checkingIdentities: checkingIdentities,
                          bits: bits, any: &any) else { return false }
        if any { workspace.markUpdatedRows(bits) }
        return true
    }

    /// The one loop that compares paired rows through the adapter, over runs of pairs (old
    /// start, new start, length, three values a run), from new row `prefix` on and, given
    /// `candidates`, only the new rows it flags (found a word at a time): sets the bit of
    /// each new row whose contents differ from its old row's (and `any` when one does).
    /// `checkingIdentities` (hashed keys): false at the first pair of two identities, with
    /// the bits so far.
    @inlinable
    func compareRuns(_ runs: UnsafeBufferPointer<UInt32>, candidates: UnsafeBufferPointer<UInt64>?, from prefix: Int,
                     checkingIdentities: Bool, bits: UnsafeMutableBufferPointer<UInt64>, any: inout Bool) -> Bool {
        guard let oldBase = old.baseAddress, let newBase = new.baseAddress else { return true }
        @inline(__always) func compare(_ oldIndex: Int, _ newIndex: Int, _ any: inout Bool) -> Bool {
            let oldRow = oldBase + oldIndex, newRow = newBase + newIndex
            if let equalBytes, equalBytes.equal(UnsafeRawPointer(oldRow), UnsafeRawPointer(newRow)) { return true }
            if checkingIdentities && !adapter._identitiesEqual(at: oldRow, newRow) { return false }
            if !adapter._contentsEqual(at: oldRow, newRow) {
                bits[newIndex &>> 6] |= 1 &<< UInt64(newIndex & 63)
                any = true
            }
            return true
        }
        for run in stride(from: 0, to: runs.count, by: 3) {
            let runStart = Int(runs[run + 1]), end = runStart + Int(runs[run + 2])
            let newStart = Swift.max(runStart, prefix), shift = Int(runs[run]) &- runStart
            guard newStart < end else { continue }
            guard let candidates else {
                for newIndex in newStart..<end where !compare(newIndex &+ shift, newIndex, &any) { return false }
                continue
            }
            var word = newStart &>> 6
            while word &* 64 < end {
                var flagged = candidates[word]
                if word &* 64 < newStart { flagged &= ~0 &<< UInt64(newStart & 63) }
                if (word &+ 1) &* 64 > end { flagged &= (1 &<< UInt64(end & 63)) &- 1 }
                while flagged != 0 {
                    let newIndex = word &* 64 &+ flagged.trailingZeroBitCount
                    if !compare(newIndex &+ shift, newIndex, &any) { return false }
                    flagged &= flagged &- 1
                }
                word &+= 1
            }
        }
        return true
    }

    /// `compareRuns` over a pairing a row at a time (by new row, its old row or `_unpaired`),
    /// the new rows `newRows`.
    @inlinable
    func comparePairs(_ pairing: UnsafeBufferPointer<UInt32>, newRows: Range<Int>, checkingIdentities: Bool,
                      bits: UnsafeMutableBufferPointer<UInt64>, any: inout Bool) -> Bool {
        guard let oldBase = old.baseAddress, let newBase = new.baseAddress else { return true }
        for newIndex in newRows where pairing[newIndex] != _unpaired {
            let oldRow = oldBase + Int(pairing[newIndex]), newRow = newBase + newIndex
            if let equalBytes, equalBytes.equal(UnsafeRawPointer(oldRow), UnsafeRawPointer(newRow)) { continue }
            if checkingIdentities && !adapter._identitiesEqual(at: oldRow, newRow) { return false }
            if !adapter._contentsEqual(at: oldRow, newRow) {
                bits[newIndex &>> 6] |= 1 &<< UInt64(newIndex & 63)
                any = true
            }
        }
        return true
    }

    /// Sets the bits of the updated pairs among `newRows` (which starts on a bitmap word);
    /// whether there were any.
    @inlinable
    func mark(newRows: Range<Int>, _ pairing: UnsafeBufferPointer<UInt32>, _ bits: UnsafeMutableBufferPointer<UInt64>,
              _ oldBase: UnsafePointer<Adapter.Row>, _ newBase: UnsafePointer<Adapter.Row>) -> Bool {
        var any = false
        _inPrefetchedBlocks(newRows, UnsafeRawPointer(oldBase), oldCount: old.count,
                            stride: MemoryLayout<Adapter.Row>.stride, pairing: pairing) { rows in
            if markRows(rows, pairing, bits, oldBase, newBase) { any = true }
            return true
        }
        return any
    }

    /// `mark(newRows:…)` over `newRows` in one go.
    @inlinable
    func markRows(_ newRows: Range<Int>, _ pairing: UnsafeBufferPointer<UInt32>, _ bits: UnsafeMutableBufferPointer<UInt64>,
                  _ oldBase: UnsafePointer<Adapter.Row>, _ newBase: UnsafePointer<Adapter.Row>) -> Bool {
        let firstWord = newRows.lowerBound / 64
        if let integerContents {
            return _markChangedIntegerContents(UnsafeRawPointer(oldBase), UnsafeRawPointer(newBase + newRows.lowerBound),
                                               stride: MemoryLayout<Adapter.Row>.stride, contents: integerContents,
                                               pairing: UnsafeBufferPointer(rebasing: pairing[newRows]),
                                               bits: UnsafeMutableBufferPointer(rebasing: bits[firstWord..<((newRows.upperBound + 63) / 64)]))
        }
        var any = false
        for newIndex in newRows {
            let oldIndex = pairing[newIndex]
            guard oldIndex != _unpaired else { continue }
            let oldRow = oldBase + Int(oldIndex), newRow = newBase + newIndex
            if let equalBytes, equalBytes.equal(UnsafeRawPointer(oldRow), UnsafeRawPointer(newRow)) { continue }
            if !adapter._contentsEqual(at: oldRow, newRow) {
                bits[newIndex &>> 6] |= 1 &<< UInt64(newIndex & 63)
                any = true
            }
        }
        return any
    }
}

/// Calls `body` with `newRows`, or, where the `oldCount` old rows of `stride` bytes at `old`
/// are too many for the cache, with its 64-row blocks in order (the first starts where
/// `newRows` does), asking before each for the old rows that `pairing` names a little
/// further on (`_prefetchPairedRows`), until `body` returns false. The passes that compare
/// paired rows a row at a time go through it.
@inlinable @inline(__always)
internal func _inPrefetchedBlocks(_ newRows: Range<Int>, _ old: UnsafeRawPointer, oldCount: Int, stride: Int,
                                  pairing: UnsafeBufferPointer<UInt32>, _ body: (Range<Int>) -> Bool) {
    guard oldCount &* stride >= _farRowBytes else {
        _ = body(newRows)
        return
    }
    var start = newRows.lowerBound
    while start < newRows.upperBound {
        let end = Swift.min(start &+ 64, newRows.upperBound)
        _prefetchPairedRows(old, count: oldCount, stride: stride, pairing: pairing, next: start)
        guard body(start..<end) else { return }
        start = end
    }
}

/// Updates by 64-bit content hashes, compared in the core.
@usableFromInline
internal struct _HashUpdates: _UpdateMarking {
    @usableFromInline let old: UnsafeBufferPointer<UInt64>
    @usableFromInline let new: UnsafeBufferPointer<UInt64>

    @inlinable
    init(_ old: UnsafeBufferPointer<UInt64>, _ new: UnsafeBufferPointer<UInt64>) {
        self.old = old
        self.new = new
    }

    @inlinable
    func mark(on workspace: _DiffWorkspace) {
        workspace.markUpdates(oldContents: old, newContents: new, contentEqual: nil)
    }
}

/// No updates (no content to compare).
@usableFromInline
internal struct _NoUpdates: _UpdateMarking {
    @inlinable init() {}
    @inlinable func mark(on workspace: _DiffWorkspace) {}
}

/// Runs the passes on `workspace`: pairs `oldKeys` with `newKeys` (verifying as `identities`
/// says, or taking keys as final when it is nil), marks updates, computes moves and counts
/// when `finish` names a move mode (nil leaves the workspace matched, for callers that
/// place rows themselves), and hands the workspace to `read`. A stateful differ passes the
/// walk over the keys it `carried` from its last snapshot (`oldKeys`), whose buffer
/// `newKeys` views: it pairs the rows when it can, writing the new keys it reads past the
/// in-place prefix (`_DiffWorkspace.keptKeys`); when it cannot, every new key is written
/// and the rows pair by indexing, as in a one-shot diff.
@inlinable
internal func _runPasses<Updates: _UpdateMarking, Result>(
    _ workspace: _DiffWorkspace, oldKeys: UnsafeBufferPointer<UInt64>, newKeys: UnsafeBufferPointer<UInt64>,
    identities: _IdentityCheck?, carried: _CarriedWalk? = nil, updates: Updates,
    finish moves: MoveMode?, read: (_DiffWorkspace, _CoreCounts?) -> Result
) -> Result {
    var marked = false
    if let carried, let markedWhilePairing = _pairCarried(workspace, oldKeys: oldKeys, identities: identities,
                                                          walk: carried, updates: updates) {
        marked = markedWhilePairing
    } else if let identities {
        marked = _pairByIdentity(workspace, oldKeys: oldKeys, newKeys: newKeys, exact: identities.exact,
                                 identityEqual: identities.equal, seededKeys: identities.seededKeys, updates: updates)
    } else {
        workspace.match(oldKeys: oldKeys, newKeys: newKeys, identityEqual: nil)
    }
    if !marked { updates.mark(on: workspace) }
    return read(workspace, moves.map { workspace.finish($0) })
}

/// Pairs rows from carried keys, under the same collision policy as `_pairByIdentity`:
/// hashed keys pair by key and then every pair is verified, and a failure (a real
/// collision) leaves the pairing to `_pairByIdentity`, with every new key written.
/// The pairs the walk left to compare are compared here, in the loop that verifies them
/// (one pass over the rows instead of two).
/// - Returns: nil when the workspace does not hold the pairing; else whether it holds the
///   updates too.
@inlinable
internal func _pairCarried<Updates: _UpdateMarking>(
    _ workspace: _DiffWorkspace, oldKeys: UnsafeBufferPointer<UInt64>,
    identities: _IdentityCheck?, walk: _CarriedWalk, updates: Updates
) -> Bool? {
    guard workspace.matchCarried(oldKeys: oldKeys, walk: walk) else { return nil }
    let checking = identities.map { !$0.exact } ?? false
    var held: Bool?
    switch walk.rows {
    case .fields:
        held = true // compared (and exact) in the core
    case let .bytes(_, _, _, _, _, candidates):
        // An identity unequal to itself (NaN) has an equal key and equal bytes: checked too.
        held = updates.markCarried(on: workspace, candidates: UnsafeBufferPointer(candidates), from: 0, checkingIdentities: true)
    case let .keys(equalPrefix):
        held = updates.markCarried(on: workspace, candidates: nil, from: equalPrefix, checkingIdentities: checking)
        if held == nil, let identities {
            // Verified a run at a time while the core holds the pairing so (asking for it per
            // row would write it out, and the passes after would lose the runs).
            held = workspace.pairedRuns.map { _allRunsHold($0, identities.equal) } ?? _allPairsHold(workspace.newToOld, identities.equal)
            if held == true { updates.mark(on: workspace) }
        }
    }
    guard held == true else {
        // The kept keys are the old ones: written for the pairing by indexing.
        let kept = workspace.keptKeys
        if kept > 0 { walk.newKeys.baseAddress!.update(from: oldKeys.baseAddress!, count: kept) }
        workspace.forgetKeptKeys()
        return nil
    }
    #if DIFFENGINE_PROBES
    walk.keys.pairings += 1
    #endif
    return true
}

/// Pairs rows by identity on `workspace`: the one place that decides how far hashed keys
/// are trusted.
///
/// - Exact keys (integer ids): the keys are the identities; nothing is verified.
/// - Hashed keys: pair by key first, then verify every pair. If all hold, the pairing is
///   the one exact identities give (a merged hash class whose paired prefixes agree pairs
///   each identity's k-th occurrences). A failure is a real 64-bit collision: by chance
///   about once in 2^64 / n² diffs, so in practice crafted against the public hash. The
///   rows are then re-keyed with `seededKeys` (a per-process secret hash nobody can craft
///   collisions for) and paired and verified the same way; only if those keys fail too
///   (or the adapter has none) is every key match verified while pairing, which is exact
///   whatever the keys, and slow when many distinct identities share keys.
///
/// - Parameters:
///   - identityEqual: whether row `a` of one side and row `b` of another have one identity.
///   - seededKeys: writes seeded keys for both sides; false when the adapter has none.
///   - updates: the update marking, which checks the pairs of hashed keys as it compares
///     them where it can (one read of both sides, not two).
/// - Returns: whether `updates` marked the updates.
@inlinable
internal func _pairByIdentity<Updates: _UpdateMarking>(
    _ workspace: _DiffWorkspace,
    oldKeys old: UnsafeBufferPointer<UInt64>, newKeys new: UnsafeBufferPointer<UInt64>,
    exact: Bool,
    identityEqual: @escaping (DiffSide, Int, DiffSide, Int) -> Bool,
    seededKeys: (UnsafeMutableBufferPointer<UInt64>, UnsafeMutableBufferPointer<UInt64>) -> Bool,
    updates: Updates
) -> Bool {
    workspace.match(oldKeys: old, newKeys: new, identityEqual: nil)
    if exact { return false }
    if let marked = _pairsHold(workspace, identityEqual, updates) { return marked }
    var oldSeeded = [UInt64](repeating: 0, count: old.count), newSeeded = [UInt64](repeating: 0, count: new.count)
    let seeded = oldSeeded.withUnsafeMutableBufferPointer { oldBuffer in
        newSeeded.withUnsafeMutableBufferPointer { newBuffer in seededKeys(oldBuffer, newBuffer) }
    }
    guard seeded else {
        // The adapter's own keys collide: slow if many do, as its contract says, but exact.
        workspace.match(oldKeys: old, newKeys: new, identityEqual: identityEqual)
        return false
    }
    return oldSeeded.withUnsafeBufferPointer { oldBuffer in
        newSeeded.withUnsafeBufferPointer { newBuffer in
            workspace.match(oldKeys: oldBuffer, newKeys: newBuffer, identityEqual: nil)
            if let marked = _pairsHold(workspace, identityEqual, updates) { return marked }
            workspace.match(oldKeys: oldBuffer, newKeys: newBuffer, identityEqual: identityEqual)
            return false
        }
    }
}

/// Whether every pair of a match by unverified hashed keys has one identity: nil when one
/// does not; else whether `updates` marked the updates while it checked them.
@inlinable
internal func _pairsHold<Updates: _UpdateMarking>(
    _ workspace: _DiffWorkspace, _ identityEqual: (DiffSide, Int, DiffSide, Int) -> Bool, _ updates: Updates
) -> Bool? {
    if let held = updates.markCheckingIdentities(on: workspace) { return held ? true : nil }
    return _allPairsHold(workspace.newToOld, identityEqual) ? false : nil
}

/// `_allPairsHold` over a pairing held as runs (old start, new start, length).
@inlinable
internal func _allRunsHold(
    _ runs: UnsafeBufferPointer<UInt32>, _ identityEqual: (DiffSide, Int, DiffSide, Int) -> Bool
) -> Bool {
    for run in stride(from: 0, to: runs.count, by: 3) {
        let oldStart = Int(runs[run]), newStart = Int(runs[run + 1])
        for offset in 0..<Int(runs[run + 2]) where !identityEqual(.old, oldStart + offset, .new, newStart + offset) {
            return false
        }
    }
    return true
}

@inlinable
internal func _allPairsHold(
    _ pairing: UnsafeBufferPointer<UInt32>, _ identityEqual: (DiffSide, Int, DiffSide, Int) -> Bool
) -> Bool {
    for newIndex in pairing.indices {
        let oldIndex = pairing[newIndex]
        if oldIndex != _unpaired && !identityEqual(.old, Int(oldIndex), .new, newIndex) {
            return false
        }
    }
    return true
}
