// Helpers every suite may use: waiting without timing assertions, event logs, call
// counters, row and index-path shorthands. Fixtures of one suite stay in its file.
@_spi(Testing) import DiffEngine
import DiffEngineTestSupport
import Foundation
import Testing

/// Collects events delivered to an observer, checking each against DiffEngine.docc/Correctness.md.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var copy: [TestRow] = []
    private(set) var events = 0
    private(set) var initialEvents = 0
    private(set) var problems: [String] = []
    private(set) var lastChangeset: Changeset?

    func receive(_ event: LiveEvent<TestRow>) {
        lock.lock()
        defer { lock.unlock() }
        events += 1
        if event.isInitial { initialEvents += 1 }
        let base = event.isInitial ? [] : copy
        let result = checkApplication(event.changeset, old: base, new: event.snapshot,
                                      sameIdentity: { $0.id == $1.id }, sameContent: ==)
        problems += result.problems
        copy = event.snapshot
        lastChangeset = event.changeset
    }

    var rows: [TestRow] { lock.lock(); defer { lock.unlock() }; return copy }
    var count: Int { lock.lock(); defer { lock.unlock() }; return events }
}

/// Waits (bounded) for `condition`; records an issue on time-out. Not a timing assertion.
func waitUntil(_ what: String, seconds: Double = 60, _ condition: () -> Bool) {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline {
            Issue.record("timed out waiting for \(what)")
            return
        }
        usleep(1_000)
    }
}

/// Makes sure every update pushed so far has been processed: a one-shot observer added
/// now is served after them, on the same worker.
func drain(_ collection: LiveCollection<TestRow>) {
    let done = EventLog()
    let token = collection.observeOnce { done.receive($0) }
    waitUntil("the collection's worker to drain") { done.count == 1 }
    withExtendedLifetime(token) {}
}

func rows(_ ids: some Sequence<Int>, content: Int = 0) -> [TestRow] { ids.map { TestRow(id: $0, content: content) } }

/// Counts the events an observer gets and remembers the last snapshot's size.
final class EventCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var events = 0, lastCount = -1
    func record(_ count: Int) { lock.lock(); events += 1; lastCount = count; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return events }
    var last: Int { lock.lock(); defer { lock.unlock() }; return lastCount }
}

func path(_ section: Int, _ row: Int) -> IndexPath { IndexPath(indexes: [section, row]) }

/// The case name of a violation (every case carries a payload, so it is the child's label).
func kind(_ violation: BatchUpdateViolation) -> String { Mirror(reflecting: violation).children.first?.label ?? "" }

/// Counts how often the engine asks an adapter for keys and comparisons, to show that the
/// work is linear (each key once, each comparison about once a paired row) or stays linear
/// under attack. Safe to share between threads.
final class CallCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var counts = (keys: 0, identityComparisons: 0, contentComparisons: 0)
    func countKey() { lock.withLock { counts.keys += 1 } }
    func countIdentityComparison() { lock.withLock { counts.identityComparisons += 1 } }
    func countContentComparison() { lock.withLock { counts.contentComparisons += 1 } }
    var keys: Int { lock.withLock { counts.keys } }
    var identityComparisons: Int { lock.withLock { counts.identityComparisons } }
    var contentComparisons: Int { lock.withLock { counts.contentComparisons } }
}
