@_spi(Testing) import DiffEngine
import DiffEngineTestSupport
import Dispatch
import Foundation
import Testing


@Suite struct LiveCollectionTests {
    @Test func concurrentProducersObserverEndsWithTheFinalSnapshot() async {
        let collection = LiveCollection(adapter: IdentifiableAdapter<TestRow>(), initial: rows(0..<50))
        let log = EventLog()
        let token = collection.observe { log.receive($0) }
        // The initial event first, so that the producers' changes are deliveries of their own.
        waitUntil("the initial event") { log.count == 1 }
        // Four producers push 10,000 snapshots between them, with duplicates and updates.
        DispatchQueue.concurrentPerform(iterations: 4) { producer in
            var generator = SeededGenerator(seed: UInt64(producer) &+ 77)
            for _ in 0..<2_500 {
                let shape = ScenarioShape(size: Int.random(in: 0...60, using: &generator), alphabet: 40)
                collection.update(makeScenario(shape, using: &generator).new)
            }
        }
        let final = collection.elements
        waitUntil("the observer to reach the final snapshot") { log.rows == final }
        #expect(log.problems.isEmpty, "\(log.problems.prefix(3))")
        #expect(log.initialEvents == 1)
        #expect(log.count > 1) // bursts are coalesced, but not to nothing
        withExtendedLifetime(token) {}
    }

    @Test func releasedOrInvalidatedTokensGetNothingMore() {
        let collection = LiveCollection(adapter: IdentifiableAdapter<TestRow>(), initial: rows(0..<3))
        let released = EventLog(), invalidated = EventLog()
        var releasedToken: ObservationToken? = collection.observe { released.receive($0) }
        let invalidatedToken = collection.observe { invalidated.receive($0) }
        waitUntil("the initial events") { released.count == 1 && invalidated.count == 1 }
        #expect(collection.observers.count == 2)
        releasedToken = nil
        invalidatedToken.invalidate()
        #expect(collection.observers.isEmpty)
        collection.update(rows(0..<5))
        drain(collection)
        #expect(released.count == 1 && invalidated.count == 1)
    }

    /// An event already queued for a once-observer is not delivered after `invalidate()`.
    @Test func observeOnceHonoursInvalidationOfAQueuedEvent() {
        let collection = LiveCollection(adapter: IdentifiableAdapter<TestRow>(), initial: rows(0..<3))
        let queue = DispatchQueue(label: "blocked observer queue")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let log = EventLog()
        let token = collection.observeOnce(on: queue) { log.receive($0) }
        // Handed over (a once-observer leaves the list then), so its event waits on `queue`.
        waitUntil("the event to be handed over") { collection.observers.isEmpty }
        token.invalidate()
        drain(collection) // the pass that handed it over has queued it behind the gate
        gate.signal()
        queue.sync {}
        #expect(log.count == 0)
    }

    /// A burst of updates while every observer is busy costs one coalesced event each
    /// afterwards, and the passes look at observers in proportion to events, not to
    /// updates × observers.
    @Test func burstsCoalescePerObserver() {
        let collection = LiveCollection(adapter: IdentifiableAdapter<TestRow>(), initial: rows(0..<20))
        let queue = DispatchQueue(label: "blocked observer queue")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let observerCount = 300, updateCount = 3_000
        let logs = (0..<observerCount).map { _ in EventLog() }
        let tokens = logs.map { log in collection.observe(on: queue) { log.receive($0) } }
        waitUntil("every initial event to be queued") {
            collection.observers.allSatisfy { $0.delivered == 1 }
        }
        for step in 0..<updateCount { collection.update(rows(step % 7..<20 + step % 11, content: step)) }
        let final = collection.elements
        gate.signal()
        waitUntil("every observer to reach the final snapshot") { logs.allSatisfy { $0.rows == final } }
        for log in logs {
            #expect(log.problems.isEmpty)
            #expect(log.count == 2) // the initial event, then one from it to the newest
        }
        // Before: every update queued a pass over every observer (900,000 looks).
        #expect(collection.examinedObserverCount <= 10 * observerCount + updateCount,
                "observers examined: \(collection.examinedObserverCount)")
        withExtendedLifetime(tokens) {}
    }

    @Test func observeOnceFiresOnceWithTheInitialEvent() {
        let collection = LiveCollection(adapter: IdentifiableAdapter<TestRow>(), initial: rows(0..<3))
        let once = EventLog()
        let token = collection.observeOnce { once.receive($0) }
        waitUntil("the one event") { once.count == 1 }
        collection.update(rows(0..<4))
        collection.update(rows(0..<5))
        drain(collection)
        #expect(once.count == 1 && once.initialEvents == 1)
        #expect(collection.observers.isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func pageChangesArriveAsInsertionsAtTheEnd() {
        let collection = LiveCollection(adapter: IdentifiableAdapter<TestRow>(), initial: rows(0..<25), pageSize: 10)
        let log = EventLog()
        let token = collection.observe { log.receive($0) }
        waitUntil("the initial page") { log.count == 1 }
        #expect(log.rows == rows(0..<10) && collection.count == 10 && collection.hasNext && !collection.hasPrevious)
        collection.nextPage()
        waitUntil("the second page") { log.count == 2 }
        #expect(log.lastChangeset == Changeset(oldCount: 10, newCount: 20, insertions: Array(10..<20)))
        collection.nextPage()
        waitUntil("the third page") { log.count == 3 }
        #expect(log.rows == rows(0..<25) && !collection.hasNext && collection.hasPrevious)
        collection.previousPage()
        waitUntil("back to two pages") { log.count == 4 }
        #expect(log.lastChangeset == Changeset(oldCount: 25, newCount: 20, deletions: Array(20..<25)))
        #expect(collection.count == 20 && collection.hasNext && collection.hasPrevious)
        collection.resetPage()
        waitUntil("back to one page") { log.count == 5 }
        #expect(log.lastChangeset?.deletions == Array(10..<20))
        #expect(log.problems.isEmpty && collection[9] == TestRow(id: 9, content: 0))
        withExtendedLifetime(token) {}
    }

    @Test func statusIsDeliveredWithEachEvent() {
        let collection = LiveCollection(adapter: IdentifiableAdapter<TestRow>())
        let statuses = StatusLog()
        let token = collection.observe { statuses.append($0.status) }
        waitUntil("the initial event") { statuses.values.count == 1 }
        collection.update(rows(0..<2), status: LiveStatus(data: .local, loading: .loading))
        waitUntil("the local data") { statuses.values.count == 2 }
        collection.update(rows(0..<3), status: LiveStatus(data: .fresh, loading: .loaded))
        waitUntil("the fresh data") { statuses.values.last == LiveStatus(data: .fresh, loading: .loaded) }
        #expect(statuses.values.first == .some(nil))
        #expect(collection.observers.map(\.once) == [false])
        withExtendedLifetime(token) {}
    }

    /// The async sequence, consumed while a producer pushes 2,000 snapshots: every event
    /// applies to the one before, the first is initial, bursts are coalesced, and the last
    /// event is the final snapshot (which no earlier update produces).
    @Test func asyncSequenceReproducesSnapshotsAndCoalesces() async {
        let collection = LiveCollection(adapter: IdentifiableAdapter<TestRow>(), initial: rows(0..<5))
        let final = rows(3..<11, content: 99)
        let iterator = collection.events().makeAsyncIterator() // observing from here on
        let producer = Task.detached {
            for step in 1...2_000 { collection.update(rows(0..<(step % 40), content: step % 3)) }
            collection.update(final)
        }
        var copy: [TestRow] = []
        var events = 0, initialEvents = 0
        while let event = await iterator.next() {
            events += 1
            if event.isInitial { initialEvents += 1 }
            let result = checkApplication(event.changeset, old: event.isInitial ? [] : copy, new: event.snapshot,
                                          sameIdentity: { $0.id == $1.id }, sameContent: ==)
            #expect(result.problems.isEmpty, "event \(events): \(result.problems.prefix(2))")
            copy = event.snapshot
            if copy == final { break }
        }
        await producer.value
        #expect(copy == final)
        #expect(initialEvents == 1)
        #expect(events < 2_001) // a consumer slower than the producer gets bursts coalesced
        withExtendedLifetime(iterator) {}
    }

    @Test @MainActor func mainActorDelivery() async {
        let collection = LiveCollection(adapter: IdentifiableAdapter<TestRow>(), initial: rows(0..<2))
        let received: Int = await withCheckedContinuation { continuation in
            let box = TokenBox()
            box.token = collection.observeOnMain { event in
                MainActor.assertIsolated()
                box.token = nil
                continuation.resume(returning: event.snapshot.count)
            }
        }
        #expect(received == 2)
    }
}

final class StatusLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [LiveStatus?] = []
    func append(_ status: LiveStatus?) { lock.lock(); storage.append(status); lock.unlock() }
    var values: [LiveStatus?] { lock.lock(); defer { lock.unlock() }; return storage }
}

@MainActor final class TokenBox: Sendable {
    var token: ObservationToken?
}

@Suite struct LiveCollectionQuietTests {
    /// An update that changes neither the rows nor the status is not delivered.
    @Test func unchangedSnapshotsAreNotDelivered() {
        let collection = LiveCollection(adapter: IdentifiableAdapter<TestRow>(), initial: rows(0..<3))
        let log = EventLog()
        let token = collection.observe { log.receive($0) }
        waitUntil("the initial event") { log.count == 1 }
        collection.update(rows(0..<3))
        drain(collection)
        #expect(log.count == 1)
        collection.update(rows(0..<3), status: LiveStatus(data: .fresh, loading: .loaded))
        waitUntil("the status change") { log.count == 2 }
        #expect(log.lastChangeset?.hasChanges == false)
        withExtendedLifetime(token) {}
    }
}
