/// Keeps one diff workspace between one-shot diffs, so that repeated diffs neither
/// allocate nor page-fault their scratch memory again. A caller that finds it taken (a
/// concurrent diff) simply makes its own.
@usableFromInline
internal final class _WorkspaceCache: @unchecked Sendable {
    /// Workspaces larger than this are freed after use rather than kept.
    static let retainedBytesLimit = 64 << 20

    @usableFromInline
    static let shared = _WorkspaceCache()

    private let lock = _Lock()
    private var cached: _DiffWorkspace?

    private init() {}

    /// The cached workspace, or a new one.
    @usableFromInline
    func take() -> _DiffWorkspace {
        lock.withLock {
            defer { cached = nil }
            return cached
        } ?? _DiffWorkspace()
    }

    /// Keeps `workspace` for the next diff unless one is kept already or it is too large.
    @usableFromInline
    func recycle(_ workspace: _DiffWorkspace) {
        guard workspace.allocatedBytes <= Self.retainedBytesLimit else { return }
        lock.withLock {
            if cached == nil { cached = workspace }
        }
    }

    func release() {
        let dropped = lock.withLock {
            defer { cached = nil }
            return cached
        }
        _ = dropped // freed here, outside the lock
    }
}

/// Frees the scratch memory that one-shot diffs keep between calls (at most 64 MiB: one
/// workspace, sized by the largest recent diff). The next diff allocates it again.
public func releaseCachedDiffMemory() {
    _WorkspaceCache.shared.release()
}
