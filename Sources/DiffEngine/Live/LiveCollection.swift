import Dispatch

/// A producer-set status delivered with each event (Amity's `dataStatus` and
/// `loadingStatus`, Ditto's local vs. synced data).
public struct LiveStatus: Sendable, Hashable {
    /// Where the data came from.
    public enum DataStatus: String, Sendable, Hashable, CaseIterable {
        /// There is no data (yet).
        case notExist
        /// Data from the local store, not yet confirmed by a server.
        case local
        /// Data confirmed by a server.
        case fresh
        /// Loading the data failed.
        case error
    }

    /// Whether more data is on its way.
    public enum LoadingStatus: String, Sendable, Hashable, CaseIterable {
        /// Nothing is being loaded.
        case notLoading
        /// More data is being loaded.
        case loading
        /// Everything there is has been loaded.
        case loaded
        /// Loading failed.
        case error
    }

    /// Where the data came from.
    public var data: DataStatus
    /// Whether more data is on its way.
    public var loading: LoadingStatus

    /// Creates a status.
    public init(data: DataStatus, loading: LoadingStatus) {
        self.data = data
        self.loading = loading
    }
}

/// One delivery to an observer: the snapshot and how it came from the observer's
/// previously delivered snapshot.
public struct LiveEvent<Element: Sendable>: Sendable {
    /// The current (paged) snapshot.
    public var snapshot: [Element]
    /// Turns the previously delivered snapshot into `snapshot`.
    public var changeset: Changeset
    /// The producer's status for this snapshot, if it set one.
    public var status: LiveStatus?
    /// True for an observer's first event: every row is an insertion.
    public var isInitial: Bool
}

/// Ends an observation when invalidated or released. Holding the token is what keeps the
/// observation alive; the collection does not keep observers alive on its own.
public final class ObservationToken: Sendable {
    private let end: @Sendable () -> Void

    init(end: @escaping @Sendable () -> Void) {
        self.end = end
    }

    /// Ends delivery: the handler is not called for any event that has not started yet.
    /// Calling it again does nothing.
    public func invalidate() { end() }

    deinit { end() }
}

/// One active observer, as `LiveCollection.observers` lists it (Ditto's `store.observers`).
public struct LiveObserverInfo: Sendable, Hashable {
    /// The observer's number, unique within its collection.
    public var id: UInt64
    /// Whether it ends after its first event.
    public var once: Bool
    /// Whether it is an `AsyncSequence` of events rather than a handler.
    public var isAsyncSequence: Bool
    /// Events delivered so far.
    public var delivered: Int
}

/// A live collection (Amity's `AmityCollection`, Ditto's store observer): it holds the
/// current snapshot that a producer pushes with `update(_:status:)`, and delivers each
/// observer the snapshot with the changeset from the snapshot it delivered last.
///
/// - Diffing runs on the collection's own serial queue, off the producer's thread.
/// - Coalescing: an observer still busy with one event gets, when it is done, one event
///   from its last delivered snapshot straight to the newest; the changes it receives
///   always turn its last delivered snapshot into the new one. An update that changes
///   neither the observer's rows nor the status is not delivered.
/// - Pages: with a `pageSize`, observers see the first `pageSize × pages` rows; a window
///   change is delivered as an ordinary changeset (growth is insertions at the end).
/// - Handlers run on the queue given to `observe` (a private serial queue by default, or
///   the main queue for `observeOnMain`); `events()` is an `AsyncSequence` of the same events.
public final class LiveCollection<Element: Sendable>: @unchecked Sendable {
    // @unchecked: every mutable field below is read and written under `lock`, and observer
    // deliveries are sequenced on `worker`.
    private let lock = _Lock()
    private let worker = DispatchQueue(label: "DiffEngine.LiveCollection")
    private let diffing: @Sendable ([Element], [Element]) -> Changeset
    private let pageSize: Int?

    private var all: [Element]
    private var currentStatus: LiveStatus?
    private var pages = 1
    private var version = 0
    private var nextObserverID: UInt64 = 0
    private var activeObservers: [UInt64: Observer] = [:]
    /// Whether a delivery pass is queued on `worker` and has not started: updates in a
    /// burst then share it, so one pass serves them all.
    private var passQueued = false
    /// The version the last pass looked at every observer for.
    private var scannedVersion = -1
    /// Observers with no event in flight. A pass after a new version looks at these only,
    /// and otherwise only at `returning`: those that became ready since the last pass
    /// (registered, done with an event, waiting in `next()`). So the work of delivery grows
    /// with the events delivered, not with updates × observers.
    private var idle: [UInt64: Observer] = [:]
    private var returning: [Observer] = []
    /// Testing: how many observers delivery passes have looked at.
    #if DIFFENGINE_PROBES
    private var examined = 0
    #endif

    private enum Delivery {
        case handler(DispatchQueue, @Sendable (LiveEvent<Element>) -> Void)
        case pull(CheckedContinuation<LiveEvent<Element>?, Never>?)
    }

    // @unchecked: its fields change under the collection's lock or on its worker queue.
    private final class Observer: @unchecked Sendable {
        let id: UInt64
        let once: Bool
        var delivery: Delivery
        var lastDelivered: [Element]?
        var lastStatus: LiveStatus?
        var deliveredVersion = -1
        var deliveredCount = 0
        var inFlight = false
        /// Set when the token ends the observation: no handler runs after that, even one
        /// whose event was already queued (a once-observer's included).
        var ended = false

        init(id: UInt64, once: Bool, delivery: Delivery) {
            self.id = id
            self.once = once
            self.delivery = delivery
        }
    }

    /// Creates a collection.
    /// - Parameters:
    ///   - adapter: how to read rows (identity and content).
    ///   - initial: the first snapshot.
    ///   - pageSize: rows a page, or nil to show every row.
    ///   - moves: the move mode of delivered changesets.
    public init<Adapter: RowAdapter & Sendable>(
        adapter: Adapter, initial: [Element] = [], pageSize: Int? = nil, moves: MoveMode = .minimal
    ) where Adapter.Row == Element {
        precondition(pageSize.map { $0 > 0 } ?? true, "pageSize must be positive")
        all = initial
        self.pageSize = pageSize
        diffing = { old, new in
            // pairInOrder never throws.
            (try? diff(old, new, using: adapter, options: DiffOptions(moves: moves))) ?? Changeset(oldCount: old.count, newCount: new.count)
        }
    }

    // MARK: The snapshot

    private var window: [Element] {
        guard let pageSize else { return all }
        return Array(all.prefix(pageSize * pages))
    }

    /// The current (paged) snapshot.
    public var elements: [Element] { lock.withLock { window } }

    /// The number of rows in the current (paged) snapshot.
    public var count: Int { lock.withLock { pageSize.map { Swift.min(all.count, $0 * pages) } ?? all.count } }

    /// The row at `index` of the current (paged) snapshot.
    public subscript(index: Int) -> Element {
        lock.withLock {
            precondition(index >= 0 && index < (pageSize.map { Swift.min(all.count, $0 * pages) } ?? all.count), "index out of range")
            return all[index]
        }
    }

    /// The producer's latest status.
    public var status: LiveStatus? { lock.withLock { currentStatus } }

    /// Replaces the snapshot; observers get the changes, diffed off this thread.
    /// - Parameters:
    ///   - snapshot: the new rows, all of them (the collection pages them).
    ///   - status: the producer's status for this snapshot; nil keeps the previous one.
    public func update(_ snapshot: [Element], status: LiveStatus? = nil) {
        lock.withLock {
            all = snapshot
            if let status { currentStatus = status }
            version += 1
        }
        scheduleDeliveries()
    }

    // MARK: Pages

    /// Whether rows exist past the current window.
    public var hasNext: Bool { lock.withLock { pageSize.map { all.count > $0 * pages } ?? false } }

    /// Whether the window can shrink by a page.
    public var hasPrevious: Bool { lock.withLock { pageSize != nil && pages > 1 } }

    /// Grows the window by one page, if more rows exist.
    public func nextPage() { changeWindow { pages, rows, pageSize in rows > pageSize * pages ? pages + 1 : nil } }

    /// Shrinks the window by one page, down to one page.
    public func previousPage() { changeWindow { pages, _, _ in pages > 1 ? pages - 1 : nil } }

    /// Back to the first page.
    public func resetPage() { changeWindow { pages, _, _ in pages != 1 ? 1 : nil } }

    /// Applies a page change (pages, rows, page size -> new pages, or nil for none).
    private func changeWindow(_ newPages: (Int, Int, Int) -> Int?) {
        let changed = lock.withLock { () -> Bool in
            guard let pageSize, let pages = newPages(self.pages, all.count, pageSize) else { return false }
            self.pages = pages
            version += 1
            return true
        }
        if changed { scheduleDeliveries() }
    }

    // MARK: Observers

    /// Delivers every change to `handler` on `queue` until the token is invalidated or
    /// released. The first event is initial: the whole snapshot as insertions.
    /// - Parameters:
    ///   - queue: where the handler runs; a serial queue keeps events in order (the
    ///     default is a private serial queue).
    ///   - handler: gets each event.
    /// - Returns: the token that keeps the observation alive.
    public func observe(on queue: DispatchQueue? = nil,
                        _ handler: @escaping @Sendable (LiveEvent<Element>) -> Void) -> ObservationToken {
        addObserver(once: false, delivery: .handler(queue ?? DispatchQueue(label: "DiffEngine.LiveCollection.observer"), handler))
    }

    /// Delivers one event (the current snapshot, initial) to `handler`, then ends.
    public func observeOnce(on queue: DispatchQueue? = nil,
                            _ handler: @escaping @Sendable (LiveEvent<Element>) -> Void) -> ObservationToken {
        addObserver(once: true, delivery: .handler(queue ?? DispatchQueue(label: "DiffEngine.LiveCollection.observer"), handler))
    }

    /// Delivers every change to `handler` on the main actor, for UI code.
    public func observeOnMain(_ handler: @escaping @MainActor @Sendable (LiveEvent<Element>) -> Void) -> ObservationToken {
        observe(on: .main) { event in MainActor.assumeIsolated { handler(event) } }
    }

    /// The active observers.
    public var observers: [LiveObserverInfo] {
        lock.withLock {
            activeObservers.values.map { observer in
                let isPull = if case .pull = observer.delivery { true } else { false }
                return LiveObserverInfo(id: observer.id, once: observer.once, isAsyncSequence: isPull,
                                        delivered: observer.deliveredCount)
            }.sorted { $0.id < $1.id }
        }
    }

    private func addObserver(once: Bool, delivery: Delivery) -> ObservationToken {
        let (_, token) = register(once: once, delivery: delivery)
        scheduleDeliveries()
        return token
    }

    /// Adds an observer; its token ends it.
    private func register(once: Bool, delivery: Delivery) -> (UInt64, ObservationToken) {
        let observer = lock.withLock { () -> Observer in
            nextObserverID += 1
            let observer = Observer(id: nextObserverID, once: once, delivery: delivery)
            activeObservers[observer.id] = observer
            idle[observer.id] = observer
            returning.append(observer)
            return observer
        }
        return (observer.id, ObservationToken { [weak self, observer] in self?.endObservation(observer) })
    }

    private func endObservation(_ observer: Observer) {
        let waiting = lock.withLock { () -> CheckedContinuation<LiveEvent<Element>?, Never>? in
            observer.ended = true
            activeObservers[observer.id] = nil
            idle[observer.id] = nil
            guard case .pull(let waiting?) = observer.delivery else { return nil }
            observer.delivery = .pull(nil)
            return waiting
        }
        waiting?.resume(returning: nil)
    }

    private func removeObserver(_ id: UInt64) {
        if let observer = lock.withLock({ activeObservers[id] }) { endObservation(observer) }
    }

    // MARK: Delivery (on `worker`)

    /// Queues a delivery pass unless one is queued already (it will see the newest state).
    private func scheduleDeliveries() {
        let queue = lock.withLock { () -> Bool in
            guard !passQueued else { return false }
            passQueued = true
            return true
        }
        if queue { worker.async { [weak self] in self?.deliverPending() } }
    }

    /// For every idle observer behind the current version: diff from its last delivered
    /// snapshot (once per distinct one) and hand the event over.
    private func deliverPending() {
        let (snapshot, currentVersion, eventStatus, ready) = lock.withLock { () -> ([Element], Int, LiveStatus?, [Observer]) in
            passQueued = false
            // A new version concerns every observer; otherwise only those that came back.
            let candidates = scannedVersion != version ? Array(idle.values) : returning
            returning.removeAll(keepingCapacity: true)
            scannedVersion = version
            #if DIFFENGINE_PROBES
            examined += candidates.count
            #endif
            let ready = candidates.filter { observer in
                guard !observer.ended, !observer.inFlight, observer.deliveredVersion < version else { return false }
                if case .pull(nil) = observer.delivery { return false } // nobody is waiting yet
                return true
            }
            for observer in ready {
                observer.inFlight = true
                idle[observer.id] = nil
            }
            return (window, version, currentStatus, ready)
        }
        var changesByVersion: [Int: Changeset] = [:] // observers at one version share a diff
        for observer in ready.sorted(by: { $0.id < $1.id }) {
            let changeset: Changeset
            if let cached = changesByVersion[observer.deliveredVersion] {
                changeset = cached
            } else {
                changeset = diffing(observer.lastDelivered ?? [], snapshot)
                changesByVersion[observer.deliveredVersion] = changeset
            }
            let event = LiveEvent(snapshot: snapshot, changeset: changeset, status: eventStatus,
                                  isInitial: observer.lastDelivered == nil)
            observer.lastDelivered = snapshot
            observer.deliveredVersion = currentVersion
            // Nothing to tell: the rows and the status are what this observer last got.
            if !event.isInitial && !changeset.hasChanges && eventStatus == observer.lastStatus {
                lock.withLock { markIdle(observer) }
                continue
            }
            observer.lastStatus = eventStatus
            hand(event, to: observer)
        }
    }

    /// Under the lock: the observer has no event in flight and may get the next one.
    private func markIdle(_ observer: Observer) {
        observer.inFlight = false
        guard !observer.ended else { return }
        idle[observer.id] = observer
        returning.append(observer)
    }

    #if DIFFENGINE_PROBES
    /// Testing: how many observers delivery passes have looked at so far (debug builds only).
    @_spi(Testing)
    public var examinedObserverCount: Int { lock.withLock { examined } }
    #endif

    private func hand(_ event: LiveEvent<Element>, to observer: Observer) {
        let id = observer.id
        let delivery = lock.withLock { () -> Delivery? in
            guard activeObservers[id] != nil else { return nil }
            observer.deliveredCount += 1
            if observer.once { activeObservers[id] = nil }
            let delivery = observer.delivery
            if case .pull = delivery { observer.delivery = .pull(nil) }
            return delivery
        }
        switch delivery {
        case nil:
            return
        case .pull(let waiting)?:
            lock.withLock { markIdle(observer) }
            waiting?.resume(returning: event)
        case .handler(let queue, let handler)?:
            queue.async { [weak self] in
                // Nothing more after invalidation, even for an event already on its way.
                guard let self, !self.lock.withLock({ observer.ended }) else { return }
                handler(event)
                guard !observer.once else { return }
                self.lock.withLock { self.markIdle(observer) }
                self.scheduleDeliveries()
            }
        }
    }

    // MARK: AsyncSequence

    /// The events as an `AsyncSequence`. Each `next()` waits for a snapshot newer than the
    /// last one it returned and diffs from that one, so a slow consumer sees bursts
    /// coalesced. The observation ends when the iteration ends or its task is cancelled.
    public func events() -> LiveEvents<Element> {
        LiveEvents(collection: self)
    }

    /// Registers a pull observer (it is served once it waits in `nextEvent`).
    fileprivate func addPullObserver() -> (UInt64, ObservationToken) {
        register(once: false, delivery: .pull(nil))
    }

    /// Waits for the pull observer's next event; nil once it has ended.
    fileprivate func nextEvent(for id: UInt64) async -> LiveEvent<Element>? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<LiveEvent<Element>?, Never>) in
                let registered = lock.withLock { () -> Bool in
                    guard let observer = activeObservers[id] else { return false }
                    observer.delivery = .pull(continuation)
                    returning.append(observer)
                    return true
                }
                if registered { scheduleDeliveries() } else { continuation.resume(returning: nil) }
            }
        } onCancel: {
            removeObserver(id)
        }
    }
}

/// The `AsyncSequence` of a live collection's events (see `LiveCollection.events()`).
public struct LiveEvents<Element: Sendable>: AsyncSequence, Sendable {
    /// Each element is one event.
    public typealias Element = LiveEvent<Element>
    let collection: LiveCollection<Element>

    /// Waits for each next event; ends the observation when released.
    public final class AsyncIterator: AsyncIteratorProtocol {
        private let collection: LiveCollection<Element>
        private let id: UInt64
        private let token: ObservationToken // ends the observation with the iterator

        init(collection: LiveCollection<Element>) {
            self.collection = collection
            (id, token) = collection.addPullObserver()
        }

        /// The next event, diffed from the one returned last; nil once the observation has ended.
        public func next() async -> LiveEvent<Element>? {
            await collection.nextEvent(for: id)
        }
    }

    /// Starts an observation; its first event is initial.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(collection: collection)
    }
}
