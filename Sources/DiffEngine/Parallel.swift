import Dispatch

/// Runs `first` and `second` at the same time on Dispatch's threads (the calling thread may
/// be one of them), and returns when both have (`DiffOptions.parallelism`). Both must touch
/// disjoint memory.
@usableFromInline
internal func _concurrently(_ first: () -> Void, _ second: () -> Void) {
    withoutActuallyEscaping(first) { first in
        withoutActuallyEscaping(second) { second in
            let jobs = _TwoJobs(first: first, second: second)
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 { jobs.first() } else { jobs.second() }
            }
        }
    }
}

/// The two jobs, handed to Dispatch's threads: the caller guarantees they touch disjoint
/// memory and that both end before `_concurrently` returns.
private struct _TwoJobs: @unchecked Sendable {
    let first: () -> Void
    let second: () -> Void
}
