/// Diffs rows given only as precomputed 64-bit identity keys and content hashes: the
/// engine's flat-buffer path, with no adapter and no row access at all.
///
/// - Parameters:
///   - oldKeys: the identity key of each old row.
///   - newKeys: the identity key of each new row.
///   - oldContentHashes: the content hash of each old row, or nil to report no updates.
///   - newContentHashes: the content hash of each new row (nil exactly when `oldContentHashes` is).
///   - moves: the move mode.
/// - Returns: the changeset (k-th occurrences of equal keys pair).
/// - Complexity: O(m + n) expected, plus O(k log k) for `minimal` and `none` moves.
/// - Note: Keys are taken as final: rows with equal keys pair and rows with equal content
///   hashes are unchanged. Pass exact keys (integer ids) or hashes whose 64-bit collisions
///   you accept; to have every match verified, diff the rows through a `RowAdapter`.
public func diff(
    oldKeys: [UInt64], newKeys: [UInt64],
    oldContentHashes: [UInt64]? = nil, newContentHashes: [UInt64]? = nil,
    moves: MoveMode = .minimal
) -> Changeset {
    let workspace = _WorkspaceCache.shared.take()
    defer { _WorkspaceCache.shared.recycle(workspace) }
    return _diffKeys(oldKeys, newKeys, oldContentHashes, newContentHashes, moves, workspace)
}

/// The keyed diff on a caller-kept workspace, so that a stream of diffs reuses it. Like the
/// row driver, it trims the common prefix first (rows with equal keys and equal content
/// hashes), so that an unchanged list costs one comparison a row and no matching.
@usableFromInline
internal func _diffKeys(
    _ oldKeys: [UInt64], _ newKeys: [UInt64], _ oldContents: [UInt64]?, _ newContents: [UInt64]?,
    _ moves: MoveMode, _ workspace: _DiffWorkspace
) -> Changeset {
    precondition((oldContents == nil) == (newContents == nil), "give content hashes for both sides or neither")
    precondition(oldContents.map { $0.count == oldKeys.count } ?? true, "one old content hash a row")
    precondition(newContents.map { $0.count == newKeys.count } ?? true, "one new content hash a row")
    let shorter = Swift.min(oldKeys.count, newKeys.count)
    var prefix = 0
    while prefix < shorter && oldKeys[prefix] == newKeys[prefix]
            && (oldContents.map { $0[prefix] == newContents![prefix] } ?? true) {
        prefix += 1
    }
    if prefix == oldKeys.count && prefix == newKeys.count {
        return Changeset(oldCount: oldKeys.count, newCount: newKeys.count)
    }
    return oldKeys.withUnsafeBufferPointer { oldBuffer in
        newKeys.withUnsafeBufferPointer { newBuffer in
            let old = UnsafeBufferPointer(rebasing: oldBuffer[prefix...]), new = UnsafeBufferPointer(rebasing: newBuffer[prefix...])
            let read = { (workspace: _DiffWorkspace, counts: _CoreCounts?) in
                workspace.read(counts!, offset: prefix, oldCount: oldKeys.count, newCount: newKeys.count)
            }
            guard let oldContents, let newContents else {
                return _runPasses(workspace, oldKeys: old, newKeys: new, identities: nil, updates: _NoUpdates(), finish: moves, read: read)
            }
            return oldContents.withUnsafeBufferPointer { oldHashes in
                newContents.withUnsafeBufferPointer { newHashes in
                    _runPasses(workspace, oldKeys: old, newKeys: new, identities: nil,
                               updates: _HashUpdates(UnsafeBufferPointer(rebasing: oldHashes[prefix...]),
                                                     UnsafeBufferPointer(rebasing: newHashes[prefix...])),
                               finish: moves, read: read)
                }
            }
        }
    }
}
