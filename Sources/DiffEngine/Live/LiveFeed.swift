/// One state of a ``LiveFeed``: its rows, the changes from the previous publication's rows,
/// and what the publisher computed once for it (a rendered event, a version).
public struct LiveFeedPublication<Row: Sendable, Payload: Sendable>: Sendable {
    /// 1 for the first publication, then one more for each.
    public let sequence: Int
    /// The rows.
    public let rows: [Row]
    /// From the previous publication's rows to ``rows`` (every row inserted for the first).
    public let changeset: Changeset
    /// What the publisher attached, computed once for every subscriber.
    public let payload: Payload
}

/// What a subscriber of a ``LiveFeed`` receives: the newest publication and the changes from
/// the rows this subscriber received last.
public struct LiveFeedEvent<Row: Sendable, Payload: Sendable>: Sendable {
    /// The newest publication; its rows are where the subscriber now is.
    public let publication: LiveFeedPublication<Row, Payload>
    /// From the rows this subscriber received last (none for its first event) to
    /// `publication.rows`.
    public let changeset: Changeset
    /// True for a subscriber's first event: every row is an insertion.
    public let isInitial: Bool
    /// True when ``changeset`` is the publication's own (the subscriber was one publication
    /// behind, or this is the first publication): what the publisher computed for it in
    /// the payload describes this event too. False for a subscriber that fell further behind
    /// (or joined late): it gets its own changes, computed for it.
    public let isPublicationsOwn: Bool
}

/// One observation shared by many subscribers, for a service that pushes a live query to
/// its clients (Ditto's store observers, Firestore listeners, Supabase Realtime): the
/// publisher publishes each new state of the rows once; a ``Differ`` finds the changes from
/// the previous state, once for all subscribers; each subscriber receives the changes from
/// what it received last.
///
/// ```swift
/// let feed = LiveFeed<IdentifiableAdapter<Order>, [UInt8]>(adapter: IdentifiableAdapter())
/// feed.publish(try fetchOrders()) { update in render(update.changeset) } // once per state
/// for await event in feed.subscribe() {                                    // per client
///     send(event.isPublicationsOwn ? event.publication.payload : render(event.changeset))
/// }
/// ```
///
/// - A slow subscriber is never sent a stale state and never loses a change: when it asks
///   for its next event it gets one event from what it received last to the newest
///   publication, however many it missed (computed once for all subscribers that missed
///   the same ones). So it holds one state, not a queue.
/// - A publication whose rows equal the previous one's (by the adapter) publishes nothing.
/// - ``Cursor`` and ``next(after:)`` are the same delivery without `async`: for a caller that
///   has its own wake-ups.
///
/// - Note: `publish` calls run one at a time (they share the differ); subscribers may read
///   from any thread.
public final class LiveFeed<Adapter: IdentifyingAdapter & Sendable, Payload: Sendable>: @unchecked Sendable
where Adapter.Row: Sendable {
    // @unchecked: `differ` is used only under `publishing`; every other mutable field only
    // under `lock`.
    public typealias Row = Adapter.Row
    public typealias Publication = LiveFeedPublication<Row, Payload>
    public typealias Event = LiveFeedEvent<Row, Payload>

    /// How rows are read.
    public let adapter: Adapter
    /// How moves are reported.
    public let moves: MoveMode

    private let publishing = _Lock()
    private let differ: Differ<Adapter>
    private let lock = _Lock()
    private var newest: Publication?
    /// Changes to `newest` from an older publication, by its sequence: computed for the first
    /// subscriber that fell that far behind, reused by the others.
    private var catchUps: [Int: Changeset] = [:]
    private var wakeups: [UInt64: AsyncStream<Void>.Continuation] = [:]
    private var nextSubscriber: UInt64 = 0
    private var finished = false

    /// Creates a feed with nothing published.
    /// - Parameters:
    ///   - adapter: how rows are read.
    ///   - moves: how moves are reported.
    public init(adapter: Adapter, moves: MoveMode = .minimal) {
        self.adapter = adapter
        self.moves = moves
        differ = Differ(keepingPreviousSnapshotOf: adapter, moves: moves)
    }

    /// The newest publication, or nil before the first.
    public var latest: Publication? { lock.withLock { newest } }

    /// How many subscriptions are being iterated.
    public var subscriberCount: Int { lock.withLock { wakeups.count } }

    /// Publishes `rows` as the feed's new state, unless they equal the newest publication's,
    /// and wakes every subscriber.
    /// - Parameters:
    ///   - rows: the new state. Pass an `Array` to have it shared, not copied.
    ///   - payload: what to attach, computed once from the differ's update (the changes from
    ///     the previous publication, the deleted rows' identities).
    /// - Returns: the publication, or nil when the rows did not change or the feed is
    ///   finished (nothing published).
    /// - Complexity: one `Differ.diff(_:)` of the rows; O(1) a subscriber to wake it.
    /// - Note: After ``finish()`` it does nothing: a refresh still running when a service
    ///   drops the feed need not be stopped first.
    @discardableResult
    public func publish(_ rows: [Row], payload: (DifferUpdate<Adapter.Identity>) -> Payload) -> Publication? {
        publishing.withLock {
            guard !lock.withLock({ finished }) else { return nil }
            let update = differ.diff(rows)
            guard update.isInitial || update.changeset.hasChanges else { return nil }
            let publication = Publication(sequence: (latest?.sequence ?? 0) + 1, rows: rows,
                                          changeset: update.changeset, payload: payload(update))
            let woken = lock.withLock { () -> [AsyncStream<Void>.Continuation] in
                newest = publication
                catchUps = [:]
                return Array(wakeups.values)
            }
            for wakeup in woken { wakeup.yield() }
            return publication
        }
    }

    /// Ends every subscription once it has received the newest publication; later
    /// publications are ignored.
    public func finish() {
        let ended = lock.withLock { () -> [AsyncStream<Void>.Continuation] in
            finished = true
            return Array(wakeups.values)
        }
        for wakeup in ended { wakeup.finish() }
    }

    /// Where one subscriber is: the publication it received last.
    public struct Cursor: Sendable {
        /// The sequence of the publication received last, or nil before the first event.
        public fileprivate(set) var sequence: Int?
        fileprivate var rows: [Row] = []

        /// A cursor that has received nothing.
        public init() {}
    }

    /// The event that brings `cursor` to the newest publication, and moves it there; nil when
    /// it is there already (or nothing is published, or the rows it has equal the newest).
    /// - Complexity: O(1) one publication behind; a one-shot diff of the cursor's rows and the
    ///   newest, once for all cursors at the same place, further behind.
    public func next(after cursor: inout Cursor) -> Event? {
        let (found, cached) = lock.withLock { (newest, cursor.sequence.flatMap { catchUps[$0] }) }
        guard let publication = found, cursor.sequence.map({ $0 < publication.sequence }) ?? true else { return nil }
        let from = cursor.sequence, fromRows = cursor.rows
        cursor.sequence = publication.sequence
        cursor.rows = publication.rows
        guard let from else {
            if publication.sequence == 1 {
                return Event(publication: publication, changeset: publication.changeset, isInitial: true, isPublicationsOwn: true)
            }
            let all = Changeset(oldCount: 0, newCount: publication.rows.count, insertions: Array(publication.rows.indices))
            return Event(publication: publication, changeset: all, isInitial: true, isPublicationsOwn: false)
        }
        if from == publication.sequence - 1 {
            return Event(publication: publication, changeset: publication.changeset, isInitial: false, isPublicationsOwn: true)
        }
        let changes = cached ?? catchUp(from: from, fromRows, to: publication)
        guard changes.hasChanges else { return nil }
        return Event(publication: publication, changeset: changes, isInitial: false, isPublicationsOwn: false)
    }

    /// A one-shot diff from an older publication's rows to `publication`'s, kept for the
    /// other cursors at `from` while `publication` is the newest.
    private func catchUp(from: Int, _ rows: [Row], to publication: Publication) -> Changeset {
        let changes: Changeset
        do {
            changes = try diff(rows, publication.rows, using: adapter, options: DiffOptions(moves: moves))
        } catch {
            preconditionFailure("pairInOrder never throws: \(error)")
        }
        lock.withLock { if newest?.sequence == publication.sequence { catchUps[from] = changes } }
        return changes
    }

    /// The feed's events for one subscriber, as an `AsyncSequence`: the first is the newest
    /// publication as an initial event (once there is one), each next one the changes to the
    /// newest from the last one received. It ends after ``finish()``, or when the task
    /// iterating it is cancelled.
    public func subscribe() -> Subscription { Subscription(feed: self) }

    /// One subscriber's events (see ``subscribe()``).
    public struct Subscription: AsyncSequence, Sendable {
        public typealias Element = Event
        fileprivate let feed: LiveFeed

        public func makeAsyncIterator() -> Iterator {
            let (stream, wakeup) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            return Iterator(feed: feed, wakeups: stream.makeAsyncIterator(), registration: feed.register(wakeup))
        }

        /// Waits for the feed's next event.
        public struct Iterator: AsyncIteratorProtocol {
            fileprivate let feed: LiveFeed
            fileprivate var wakeups: AsyncStream<Void>.AsyncIterator
            fileprivate let registration: _Registration
            fileprivate var cursor = Cursor()

            /// The next event; nil once the feed is finished (and this subscriber has the
            /// newest publication) or the task is cancelled.
            public mutating func next() async -> Event? {
                while true {
                    if let event = feed.next(after: &cursor) { return event }
                    guard await wakeups.next() != nil else { return nil }
                }
            }
        }
    }

    /// Removes a subscriber from the feed when its iterator goes away.
    fileprivate final class _Registration: Sendable {
        let end: @Sendable () -> Void
        init(end: @escaping @Sendable () -> Void) { self.end = end }
        deinit { end() }
    }

    private func register(_ wakeup: AsyncStream<Void>.Continuation) -> _Registration {
        let (id, ended) = lock.withLock { () -> (UInt64, Bool) in
            nextSubscriber += 1
            if !finished { wakeups[nextSubscriber] = wakeup }
            return (nextSubscriber, finished)
        }
        if ended { wakeup.finish() }
        wakeup.onTermination = { [weak self] _ in self?.unregister(id) }
        return _Registration { [weak self] in self?.unregister(id) }
    }

    private func unregister(_ id: UInt64) {
        lock.withLock { _ = wakeups.removeValue(forKey: id) }
    }
}

extension LiveFeed where Payload == Void {
    /// Publishes `rows` with no payload (see ``publish(_:payload:)``).
    /// - Returns: the publication, or nil when the rows did not change.
    @discardableResult
    public func publish(_ rows: [Row]) -> Publication? { publish(rows) { _ in () } }
}
