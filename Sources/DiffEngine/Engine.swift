// The generic driver: reads rows through an adapter into flat key buffers, runs the
// core's passes, and verifies what hashes alone cannot prove. It is inlinable so that
// it is specialized for each row type and adapter in the caller's module.

/// Computes how `old` became `new`, reading rows through `adapter`.
///
/// Rows pair by identity, the k-th old occurrence of an identity with its k-th new
/// occurrence; unpaired old rows are deletions, unpaired new rows insertions; paired rows
/// whose contents differ are updates; paired rows out of relative order are moves, as
/// `options.moves` defines them (<doc:Pairing> and <doc:Changesets>).
///
/// - Parameters:
///   - old: the rows before.
///   - new: the rows after.
///   - adapter: how to read identity and content of a row.
///   - options: the move mode and the duplicates policy.
/// - Returns: the changeset; applying it to `old` with UIKit's batch-update rules gives `new`.
/// - Throws: `DuplicateIdentityError` only under `DuplicatePolicy.reject`.
/// - Complexity: O(m + n) expected time for pairing, updates and the `displaced` and
///   already-ordered cases; O(m + n + k log k) with k paired rows for `minimal` and
///   `none`. Each identity key is computed once; `identitiesEqual` runs about once per
///   paired row only for adapters whose keys are not exact, and `contentsEqual` once per
///   paired row. Extra memory is about 20-30 bytes a row.
/// - Note: A 64-bit hash collision between different identities never changes the
///   result: pairs are verified, and a failed verification re-runs the pairing on the
///   adapter's seeded keys (``RowAdapter/writeSeededIdentityKeys(of:to:)``), verified the
///   same way; only if those fail too is `identitiesEqual` consulted for every key match.
@inlinable
public func diff<Rows: RandomAccessCollection, Adapter: RowAdapter>(
    _ old: Rows, _ new: Rows, using adapter: Adapter, options: DiffOptions = DiffOptions()
) throws(DuplicateIdentityError) -> Changeset where Rows.Element == Adapter.Row {
    let result: Result<Changeset, DuplicateIdentityError> = _withContiguousRows(old) { oldRows in
        _withContiguousRows(new) { newRows in
            _diffWithPolicy(oldRows, newRows, adapter, options)
        }
    }
    return try result.get()
}

@inlinable
internal func _withContiguousRows<Rows: RandomAccessCollection, R>(
    _ rows: Rows, _ body: (UnsafeBufferPointer<Rows.Element>) -> R
) -> R {
    if let result = rows.withContiguousStorageIfAvailable(body) { return result }
    return Array(rows).withUnsafeBufferPointer(body)
}

@inlinable
internal func _diffWithPolicy<Adapter: RowAdapter>(
    _ old: UnsafeBufferPointer<Adapter.Row>, _ new: UnsafeBufferPointer<Adapter.Row>,
    _ adapter: Adapter, _ options: DiffOptions
) -> Result<Changeset, DuplicateIdentityError> {
    switch options.duplicates {
    case .pairInOrder:
        return .success(_diffRows(old, new, adapter, options))
    case .reject:
        if let error = _firstRepeat(old, .old, adapter, options) ?? _firstRepeat(new, .new, adapter, options) {
            return .failure(error)
        }
        return .success(_diffRows(old, new, adapter, options))
    case .firstWins:
        let oldRepeats = _repeats(old, .old, adapter, options)
        let newRepeats = _repeats(new, .new, adapter, options)
        if oldRepeats == nil && newRepeats == nil {
            var changeset = _diffRows(old, new, adapter, options)
            changeset.droppedOld = []
            changeset.droppedNew = []
            return .success(changeset)
        }
        let keptOld = _keep(old, oldRepeats), keptNew = _keep(new, newRepeats)
        var changeset = keptOld.withUnsafeBufferPointer { oldKept in
            keptNew.withUnsafeBufferPointer { newKept in _diffRows(oldKept, newKept, adapter, options) }
        }
        changeset.droppedOld = oldRepeats.map { flags in flags.indices.filter { flags[$0] } } ?? []
        changeset.droppedNew = newRepeats.map { flags in flags.indices.filter { flags[$0] } } ?? []
        return .success(changeset)
    }
}

/// Flags rows whose identity occurred earlier on the same side, or nil when none did.
/// Hashed keys are verified, and re-keyed with the adapter's seeded keys when many
/// distinct identities share them (as `_pairByIdentity` does).
@inlinable
internal func _repeats<Adapter: RowAdapter>(
    _ rows: UnsafeBufferPointer<Adapter.Row>, _ side: DiffSide, _ adapter: Adapter, _ options: DiffOptions
) -> [Bool]? {
    var keys = [UInt64](repeating: 0, count: rows.count)
    keys.withUnsafeMutableBufferPointer { adapter.writeIdentityKeys(of: rows, to: $0) }
    let verify = !adapter.identityKeysAreExact
    let identityEqual: ((DiffSide, Int, DiffSide, Int) -> Bool)? =
        verify ? { _, a, _, b in adapter.identitiesEqual(rows[a], rows[b]) } : nil
    let budget = verify ? _collisionBudget(rows: rows.count) : 0
    if let flags = keys.withUnsafeBufferPointer({ keyBuffer in
        _markRepeats(keys: keyBuffer, side: side, identityEqual: identityEqual, collisionBudget: budget)
    }) {
        return flags
    }
    _ = keys.withUnsafeMutableBufferPointer { adapter.writeSeededIdentityKeys(of: rows, to: $0) }
    return keys.withUnsafeBufferPointer { keyBuffer in
        _markRepeats(keys: keyBuffer, side: side, identityEqual: identityEqual)!
    }
}

@inlinable
internal func _firstRepeat<Adapter: RowAdapter>(
    _ rows: UnsafeBufferPointer<Adapter.Row>, _ side: DiffSide, _ adapter: Adapter, _ options: DiffOptions
) -> DuplicateIdentityError? {
    guard let flags = _repeats(rows, side, adapter, options), let second = flags.firstIndex(of: true) else {
        return nil
    }
    // The earliest repeat's identity occurred exactly once before it.
    let first = (0..<second).first { adapter.identitiesEqual(rows[$0], rows[second]) }!
    return DuplicateIdentityError(side: side, identity: adapter.identityDescription(of: rows[second]),
                                  firstIndex: first, secondIndex: second)
}

@inlinable
internal func _keep<Row>(_ rows: UnsafeBufferPointer<Row>, _ repeats: [Bool]?) -> [Row] {
    guard let repeats else { return Array(rows) }
    return rows.indices.compactMap { repeats[$0] ? nil : rows[$0] }
}

/// The diff under `pairInOrder`.
@inlinable
internal func _diffRows<Adapter: RowAdapter>(
    _ old: UnsafeBufferPointer<Adapter.Row>, _ new: UnsafeBufferPointer<Adapter.Row>,
    _ adapter: Adapter, _ options: DiffOptions
) -> Changeset {
    _withMatchedRows(old, new, adapter, options, finish: options.moves) { workspace, prefix, counts in
        guard let workspace, let counts else { return Changeset(oldCount: old.count, newCount: new.count) }
        return workspace.read(counts, offset: prefix, oldCount: old.count, newCount: new.count)
    }
}

/// The diff under `pairInOrder` and the pairing it keeps, by new index (the old index, or
/// -1), read from the same workspace: for callers that place rows themselves.
@inlinable
internal func _diffRowsAndPairing<Adapter: RowAdapter>(
    _ old: UnsafeBufferPointer<Adapter.Row>, _ new: UnsafeBufferPointer<Adapter.Row>,
    _ adapter: Adapter, _ options: DiffOptions
) -> (changeset: Changeset, newToOld: [Int]) {
    _withMatchedRows(old, new, adapter, options, finish: options.moves) { workspace, prefix, counts in
        var newToOld = Array(0..<new.count) // the prefix pairs with itself
        guard let workspace, let counts else { return (Changeset(oldCount: old.count, newCount: new.count), newToOld) }
        let changeset = workspace.read(counts, offset: prefix, oldCount: old.count, newCount: new.count)
        let pairing = workspace.newToOld // after finishing: without pairs that `none` dropped
        for index in pairing.indices {
            newToOld[prefix + index] = pairing[index] == _unpaired ? -1 : prefix + Int(pairing[index])
        }
        return (changeset, newToOld)
    }
}

/// The pairing under `pairInOrder` and which paired rows changed, without moves: for
/// callers that place rows themselves (the sectioned diff).
/// - Returns: by new index, the paired old index or -1; and whether that pair's content differs.
@inlinable
internal func _pairRows<Adapter: RowAdapter>(
    _ old: UnsafeBufferPointer<Adapter.Row>, _ new: UnsafeBufferPointer<Adapter.Row>,
    _ adapter: Adapter, _ options: DiffOptions
) -> (newToOld: [Int], updated: [Bool]) {
    _withMatchedRows(old, new, adapter, options, finish: nil) { workspace, prefix, _ in
        var newToOld = Array(0..<new.count) // the prefix pairs with itself
        var updated = [Bool](repeating: false, count: new.count)
        guard let workspace else { return (newToOld, updated) }
        let pairing = workspace.newToOld
        for index in pairing.indices {
            newToOld[prefix + index] = pairing[index] == _unpaired ? -1 : prefix + Int(pairing[index])
        }
        let bits = workspace.updatedBits
        for index in pairing.indices where bits[index / 64] & (1 << UInt64(index % 64)) != 0 { updated[prefix + index] = true }
        return (newToOld, updated)
    }
}

/// The number of leading rows of `old` and `new` equal in identity and content: they pair
/// in place, unchanged, under every move mode and duplicate rule (occurrences are ranked
/// from the start).
@inlinable
internal func _equalPrefixLength<Adapter: RowAdapter>(
    _ old: UnsafeBufferPointer<Adapter.Row>, _ new: UnsafeBufferPointer<Adapter.Row>, _ adapter: Adapter
) -> Int {
    let shorter = Swift.min(old.count, new.count)
    guard shorter > 0, let oldBase = old.baseAddress, let newBase = new.baseAddress else { return 0 }
    if let fields = adapter.rowLayout?._integerFields(rowSize: MemoryLayout<Adapter.Row>.size) {
        return _integerPrefixLength(UnsafeRawPointer(oldBase), UnsafeRawPointer(newBase), count: shorter,
                                    stride: MemoryLayout<Adapter.Row>.stride, identity: fields.identity, contents: fields.contents)
    }
    @inline(__always) func equalRows(_ old: UnsafePointer<Adapter.Row>, _ new: UnsafePointer<Adapter.Row>) -> Bool {
        adapter._identitiesEqual(at: old, new) && adapter._contentsEqual(at: old, new)
    }
    var prefix = 0
    // Rows whose layout makes equal bytes equal rows are compared as bytes first (the check
    // is hoisted out of the loop: the optimizer keeps the adapter's loop tight then).
    if let equalBytes = _EqualBytes(adapter.rowLayout, rowSize: MemoryLayout<Adapter.Row>.size) {
        let stride = MemoryLayout<Adapter.Row>.stride
        while true {
            prefix += equalBytes.prefixLength(UnsafeRawPointer(oldBase + prefix), UnsafeRawPointer(newBase + prefix),
                                              count: shorter - prefix, stride: stride)
            guard prefix < shorter, equalRows(oldBase + prefix, newBase + prefix) else { return prefix }
            prefix += 1
        }
    }
    while prefix < shorter, equalRows(oldBase + prefix, newBase + prefix) { prefix += 1 }
    return prefix
}

/// Trims the common prefix, writes identity keys and runs the passes (`_runPasses`, moves
/// for `finish` or none), then hands the workspace to `body` with the length of the prefix
/// it trimmed and the counts (nil workspace: the rows are identical).
@inlinable
internal func _withMatchedRows<Adapter: RowAdapter, Result>(
    _ old: UnsafeBufferPointer<Adapter.Row>, _ new: UnsafeBufferPointer<Adapter.Row>,
    _ adapter: Adapter, _ options: DiffOptions, finish: MoveMode?,
    _ body: (_DiffWorkspace?, Int, _CoreCounts?) -> Result
) -> Result {
    // A common prefix of equal rows needs no hashing at all: it is paired in place and
    // unchanged, and it covers the no-change case entirely.
    let prefix = _equalPrefixLength(old, new, adapter)
    if prefix == old.count && prefix == new.count { return body(nil, prefix, nil) }
    let oldRest = UnsafeBufferPointer(rebasing: old[prefix...])
    let newRest = UnsafeBufferPointer(rebasing: new[prefix...])

    let workspace = _WorkspaceCache.shared.take()
    defer { _WorkspaceCache.shared.recycle(workspace) }
    let keys = workspace.keyBuffer(count: oldRest.count + newRest.count)
    let oldKeys = UnsafeMutableBufferPointer(rebasing: keys[..<oldRest.count])
    let newKeys = UnsafeMutableBufferPointer(rebasing: keys[oldRest.count...])
    let parallel = options._runsInParallel(oldCount: oldRest.count, newCount: newRest.count)
    if parallel {
        _concurrently({ adapter.writeIdentityKeys(of: oldRest, to: oldKeys) },
                      { adapter.writeIdentityKeys(of: newRest, to: newKeys) })
    } else {
        adapter.writeIdentityKeys(of: oldRest, to: oldKeys)
        adapter.writeIdentityKeys(of: newRest, to: newKeys)
    }

    return _runPasses(
        workspace, oldKeys: UnsafeBufferPointer(oldKeys), newKeys: UnsafeBufferPointer(newKeys),
        identities: .rows(oldRest, newRest, adapter),
        updates: _ContentUpdates(oldRest, newRest, adapter, inParallel: parallel), finish: finish
    ) { workspace, counts in body(workspace, prefix, counts) }
}
