import DiffEngine
import Foundation
import GRDB
import NIOCore

/// What a client asks to watch: a filter and an order over `orders`, and a page size.
/// Only these fields exist, and each is checked, so a query is never SQL from the client.
public struct QuerySpec: Codable, Sendable, Hashable {
    /// Only orders with this status (nil: any).
    public var status: String?
    /// Only orders of this customer (nil: any).
    public var customer: String?
    /// Only orders of at least this amount in cents.
    public var minAmount: Int64?
    /// `updated_at`, `amount` or `id`.
    public var orderBy: String
    /// Descending order.
    public var descending: Bool
    /// At most this many rows (1...1000).
    public var limit: Int

    public init(status: String? = nil, customer: String? = nil, minAmount: Int64? = nil,
                orderBy: String = "updated_at", descending: Bool = true, limit: Int = 100) {
        self.status = status
        self.customer = customer
        self.minAmount = minAmount
        self.orderBy = orderBy
        self.descending = descending
        self.limit = limit
    }

    static let orderColumns = ["updated_at", "amount", "id"]

    /// Parses and checks a client's query message.
    public static func parse(_ text: String) throws(WriteError) -> QuerySpec {
        struct Message: Decodable {
            var status: String?
            var customer: String?
            var minAmount: Int64?
            var orderBy: String?
            var descending: Bool?
            var limit: Int?
        }
        guard let message = try? JSONDecoder().decode(Message.self, from: Data(text.utf8)) else {
            throw WriteError("a query is a JSON object: {\"status\":\"open\",\"orderBy\":\"updated_at\",\"descending\":true,\"limit\":100}")
        }
        let spec = QuerySpec(status: message.status, customer: message.customer, minAmount: message.minAmount,
                             orderBy: message.orderBy ?? "updated_at", descending: message.descending ?? true,
                             limit: message.limit ?? 100)
        if let status = spec.status, !Order.statuses.contains(status) {
            throw WriteError("status must be one of \(Order.statuses.joined(separator: ", "))")
        }
        guard orderColumns.contains(spec.orderBy) else { throw WriteError("orderBy must be one of \(orderColumns.joined(separator: ", "))") }
        guard (1...1_000).contains(spec.limit) else { throw WriteError("limit must be 1...1000") }
        return spec
    }

    /// The SQL and its arguments (ties broken by id, so the order is total).
    public var sql: (String, StatementArguments) {
        var clauses: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let status { clauses.append("status = ?"); arguments.append(status) }
        if let customer { clauses.append("customer = ?"); arguments.append(customer) }
        if let minAmount { clauses.append("amount >= ?"); arguments.append(minAmount) }
        let direction = descending ? "DESC" : "ASC"
        let filter = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        arguments.append(limit)
        return ("SELECT * FROM orders\(filter) ORDER BY \(orderBy) \(direction), id \(direction) LIMIT ?", StatementArguments(arguments))
    }

    /// Whether `order` passes the filter.
    public func matches(_ order: Order) -> Bool {
        (status == nil || order.status == status) && (customer == nil || order.customer == customer)
            && (minAmount == nil || order.amount >= minAmount!)
    }

    /// Whether `a` comes before `b` in this query's order (ties broken by id, as in the SQL).
    public func precedes(_ a: Order, _ b: Order) -> Bool {
        let (left, right): (Int64, Int64) = switch orderBy {
        case "amount": (a.amount, b.amount)
        case "id": (a.id, b.id)
        default: (a.updated_at, b.updated_at)
        }
        if left != right { return descending ? left > right : left < right }
        return descending ? a.id > b.id : a.id < b.id
    }

    /// Runs the query.
    public func fetch(_ db: Database) throws -> [Order] {
        let (sql, arguments) = self.sql
        return try Order.fetchAll(db, sql: sql, arguments: arguments)
    }
}

/// What each publication of a live query carries, computed once for all its clients: the
/// commit its rows were read after, and its event as the clients one publication behind get it.
public struct QueryEvent: Sendable {
    /// The commit the rows were read after.
    public var version: Int
    public var committedAt: Int64
    /// The rendered event (`renderEvent`), a buffer that every client's socket sends without a copy.
    public var event: ByteBuffer
}

/// A live query's states and its clients: DiffEngine's `LiveFeed` over orders by id.
public typealias QueryFeed = LiveFeed<IdentifiableAdapter<Order>, QueryEvent>

/// The frame to send a client for `event`: the publication's shared event when the client
/// was one publication behind, else its own event (it joined late or fell behind: the
/// changes from what it has, rendered for it).
public func frame(for event: QueryFeed.Event) -> ByteBuffer {
    let payload = event.publication.payload
    if event.isPublicationsOwn { return payload.event }
    return ByteBuffer(bytes: renderEvent(event.changeset, rows: event.publication.rows, isInitial: event.isInitial,
                                         version: payload.version, committedAt: payload.committedAt))
}

/// A query's rows as last read or computed, kept on the writer's queue (in commit order), to
/// tell what a commit does to them: nothing (the commit is skipped), something its changed
/// rows decide (the new rows are computed here, without a read), or something only a read
/// can tell.
///
/// A commit can change the rows only if it changed one of them, or left a row that passes
/// the filter and comes before the last one (or the page is not full). What it changed
/// decides the new rows when the page held every matching row (it was not full), or when,
/// after the commit, at least a page of the rows known (the old rows it left alone and the
/// changed rows that match) comes no later than the old last row: every other matching row
/// was behind the old last row and still is. A commit is always either skipped and leaves
/// the rows as they were, or applied here, or followed by a read (`readPending`); commits
/// that come while a read runs are applied to what it returns, since it may not have seen
/// them, or the read is followed by another. So the clients end at the database's rows.
struct ResultWindow {
    var readPending = true
    /// The commits that came since the running read started, to apply to what it returns
    /// (it may or may not have seen them; applying a commit's rows again changes nothing);
    /// nil when one of them cannot be applied, and the read must be followed by another.
    private(set) var missed: [CommitChanges]? = []
    /// Rows were computed from a commit and not yet published.
    var unpublished = false
    /// The rows, in the query's order.
    private(set) var rows: [Order] = []
    private var ids: Set<Int64> = []
    /// How many commits changed the rows here, without a read of their own.
    private(set) var appliedCommits = 0
    /// At most this many commits are kept for a running read: past them, another read is
    /// cheaper than applying them.
    static let missedLimit = 64

    /// A window holding rows just read.
    init(read rows: [Order]) {
        readPending = false
        self.rows = rows
        ids = Set(rows.lazy.map(\.id))
    }

    /// A window that needs a read.
    init() {}

    /// A read starts: the commits from here on are kept for it.
    mutating func readStarts() {
        missed = []
    }

    /// Takes the rows a read returned, and applies the commits that came while it ran; a
    /// read is still due if one of them cannot be applied.
    mutating func read(_ rows: [Order], _ spec: QuerySpec) {
        self.rows = rows
        ids = Set(rows.lazy.map(\.id))
        unpublished = false
        readPending = missed == nil || missed!.contains { apply($0, spec) == .undecided }
        missed = []
    }

    /// Whether `changes` can change the rows; if so, the rows are computed here when the
    /// changes decide them (`unpublished`), or a read is now pending.
    mutating func admits(_ changes: CommitChanges, _ spec: QuerySpec) -> Bool {
        if readPending {
            if missed != nil && missed!.count < Self.missedLimit && changes.rows != nil {
                missed!.append(changes)
            } else {
                missed = nil
            }
            return true
        }
        switch apply(changes, spec) {
        case .unchanged: return false
        case .changed:
            unpublished = true
            return true
        case .undecided:
            readPending = true
            missed = nil // the commits until the read starts are in what it reads
            return true
        }
    }

    enum Outcome { case unchanged, changed, undecided }

    /// Applies `changes` to the rows when they decide the new rows.
    private mutating func apply(_ changes: CommitChanges, _ spec: QuerySpec) -> Outcome {
        guard let changed = changes.rows else { return .undecided }
        let last = rows.count < spec.limit ? nil : rows.last
        let entering = changed.contains { row in spec.matches(row) && last.map { spec.precedes(row, $0) } ?? true }
        if ids.isDisjoint(with: changes.ids) && !entering { return .unchanged }
        guard let next = applying(changes.ids, now: changed, spec) else { return .undecided }
        if next == rows { return .unchanged }
        rows = next
        ids = Set(next.lazy.map(\.id))
        appliedCommits += 1
        return .changed
    }

    /// The rows after a commit that changed `changedIDs`, whose rows are now `now` (an id
    /// without a row was deleted), when those decide them; nil when only a read can tell.
    /// Linear in the rows, plus a binary search for each changed row that matches.
    func applying(_ changedIDs: Set<Int64>, now: [Order], _ spec: QuerySpec) -> [Order]? {
        var known = rows.filter { !changedIDs.contains($0.id) }
        for row in now where changedIDs.contains(row.id) && spec.matches(row) {
            var low = 0, high = known.count
            while low < high {
                let middle = (low + high) / 2
                if spec.precedes(known[middle], row) { low = middle + 1 } else { high = middle }
            }
            known.insert(row, at: low)
        }
        guard rows.count >= spec.limit else { return Array(known.prefix(spec.limit)) }
        // Full: the rows no later than the old last one are decided; the rest may not be.
        guard let boundary = rows.last else { return nil }
        let decided = known.prefix { !spec.precedes(boundary, $0) }.count
        return decided >= spec.limit ? Array(known.prefix(spec.limit)) : nil
    }
}

/// One query, observed once for all its clients: after each commit that can change its rows
/// it takes them as the commit's changed rows decide them (`ResultWindow`), or reads them
/// again when those cannot tell, and publishes them to its `QueryFeed`, which diffs them against the
/// previous ones once, renders the event once, and wakes the clients. Commits that come while
/// a refresh runs are folded into the next one.
public actor SharedQuery {
    public let spec: QuerySpec
    private let store: any OrderStore
    /// The query's publications and subscribers.
    public nonisolated let feed = QueryFeed(adapter: IdentifiableAdapter())
    private var refreshing = false
    private var dirty = false
    private var lastRefresh = ContinuousClock.now - .seconds(1)
    private let window = Mutex(ResultWindow())
    /// How many commits were skipped because they could not change the rows.
    public nonisolated var skippedCommits: Int { skipped.withLock { $0 } }
    /// How many commits changed the rows as their changed rows decided, without a read.
    public nonisolated var appliedCommits: Int { window.withLock { $0.appliedCommits } }
    private let skipped = Mutex(0)
    /// Set when the last client left: a failing read stops being retried.
    nonisolated let dropped = Mutex(false)
    /// Refreshes start at least this far apart: commits in between fold into one event, so a
    /// busy table costs each query at most one read, diff and event per interval.
    public static let minimumInterval = Duration.milliseconds(10)
    /// A read that has not answered by then is given up and tried again: one sent on a
    /// connection the database dropped (restarting) may never answer, and the query must
    /// not wait on it forever.
    static let readDeadline = Duration.seconds(5)
    /// How many times the rows were read (once per refresh that reads, whatever the clients).
    public private(set) var refreshCount = 0
    /// How many times rows computed from commits (no read) were published.
    public private(set) var computedCount = 0

    init(spec: QuerySpec, store: any OrderStore) {
        self.spec = spec
        self.store = store
    }

    /// Called after a commit (and for the first client): refresh now, or once more after the
    /// running refresh.
    func commitHappened() async {
        if refreshing {
            dirty = true
            return
        }
        refreshing = true
        defer { refreshing = false }
        // A read that fails (the database restarting) is tried again until one succeeds or
        // the query is dropped: the clients must not stay on rows older than a commit.
        var retryDelay = Duration.milliseconds(100)
        while !dropped.withLock({ $0 }) {
            do {
                repeat {
                    dirty = false
                    let due = lastRefresh + SharedQuery.minimumInterval
                    if ContinuousClock.now < due { try await Task.sleep(until: due) }
                    try await refresh()
                } while dirty
                return
            } catch {
                try? await Task.sleep(for: retryDelay)
                retryDelay = min(retryDelay * 2, .seconds(2))
            }
        }
    }

    /// Whether no refresh runs or is due: every commit so far is read or applied, and published.
    var isIdle: Bool { !refreshing && !window.withLock { $0.readPending || $0.unpublished } }

    /// Called on the writer's queue after each commit: whether it can change the rows.
    nonisolated func admits(_ changes: CommitChanges) -> Bool {
        let admitted = window.withLock { $0.admits(changes, spec) }
        if !admitted { skipped.withLock { $0 += 1 } }
        return admitted
    }

    /// Publishes the rows: as the window computed them from the commits, or as read again
    /// when a commit needs it.
    private func refresh() async throws {
        lastRefresh = ContinuousClock.now
        let commit = store.lastCommit
        let computed = window.withLock { window -> [Order]? in
            if window.readPending {
                window.readStarts()
                return nil
            }
            window.unpublished = false
            return window.rows
        }
        let rows: [Order]
        if let computed {
            rows = computed
            computedCount += 1
        } else {
            let spec = self.spec, store = self.store
            let read = try await withDeadline(SharedQuery.readDeadline) { try await store.fetch(spec) }
            refreshCount += 1
            rows = window.withLock { window in
                window.read(read, spec)
                return window.rows
            }
        }
        // A commit that leaves this query's rows as they were publishes nothing.
        feed.publish(rows) { update in
            let event = renderEvent(update.changeset, rows: rows, isInitial: update.isInitial,
                                    version: commit.version, committedAt: commit.committedAtMilliseconds)
            return QueryEvent(version: commit.version, committedAt: commit.committedAtMilliseconds, event: ByteBuffer(bytes: event))
        }
    }
}

/// A read given up at its deadline.
struct ReadTimedOut: Error {}

/// `operation`'s result, or `ReadTimedOut` once `limit` passes. The operation runs in a task of
/// its own, cancelled at the deadline and left to end by itself: one that ignores
/// cancellation (a read on a dead connection) must not hold its caller.
func withDeadline<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let waiter = Mutex<CheckedContinuation<T, any Error>?>(nil)
    let work = Mutex<Task<Void, Never>?>(nil)
    return try await withCheckedThrowingContinuation { continuation in
        waiter.withLock { $0 = continuation }
        let timer = Task {
            try? await Task.sleep(for: limit)
            guard !Task.isCancelled, let waiting = waiter.withLock({ $0.take() }) else { return }
            work.withLock { $0?.cancel() }
            waiting.resume(throwing: ReadTimedOut())
        }
        let task = Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            timer.cancel()
            waiter.withLock { $0.take() }?.resume(with: result)
        }
        work.withLock { $0 = task }
    }
}

/// Renders one event: `{"isInitial":…,"version":…,"committedAt":…,"count":…,"changes":CHANGESET,
/// "rows":{"NEW INDEX":ROW,…}}` — the changeset as DiffEngine's JSON renderer writes it, and
/// the rows of the insertions and updates by their new index.
public func renderEvent(_ changes: Changeset, rows: [Order], isInitial: Bool, version: Int, committedAt: Int64) -> [UInt8] {
    var out = Array("{\"isInitial\":\(isInitial),\"version\":\(version),\"committedAt\":\(committedAt),\"count\":\(rows.count),\"changes\":".utf8)
    var changeset = JSONChangesetRenderer().render(changes)
    if changeset.last == UInt8(ascii: "\n") { changeset.removeLast() }
    out += changeset
    out += Array(",\"rows\":{".utf8)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    var first = true
    for index in changes.insertions + changes.updates.map(\.new) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        out += Array("\"\(index)\":".utf8)
        out += (try? encoder.encode(rows[index])).map(Array.init) ?? Array("null".utf8)
    }
    out += Array("}}".utf8)
    return out
}

/// The live queries being served: one `SharedQuery` per distinct query, made for its first
/// client and dropped with its last.
public actor QueryHub {
    private let store: any OrderStore
    private var queries: [QuerySpec: SharedQuery] = [:]
    private var clients: [QuerySpec: Set<UUID>] = [:]

    public init(store: any OrderStore) {
        self.store = store
    }

    /// The queries, for the commit listener on the writer's queue.
    private let observed = Mutex<[QuerySpec: SharedQuery]>([:])

    /// Wakes, after a commit, every query whose rows it can change (call from the store's
    /// commit listener, which runs on the writer's queue in commit order).
    public nonisolated func commitHappened(_ changes: CommitChanges) {
        for query in observed.withLock({ Array($0.values) }) where query.admits(changes) {
            Task { await query.commitHappened() }
        }
    }

    /// How many queries are observed now.
    public var activeQueryCount: Int { queries.count }

    /// The shared query for `spec`, with client `id` counted in; a new query reads its rows.
    public func join(_ spec: QuerySpec, client id: UUID) -> SharedQuery {
        let query = queries[spec] ?? SharedQuery(spec: spec, store: store)
        if queries[spec] == nil {
            queries[spec] = query
            observed.withLock { $0[spec] = query }
            Task { await query.commitHappened() }
        }
        clients[spec, default: []].insert(id)
        return query
    }

    /// Removes client `id`; the query stops being observed when it was the last.
    public func leave(_ spec: QuerySpec, client id: UUID) {
        guard let query = queries[spec] else { return }
        clients[spec]?.remove(id)
        if clients[spec]?.isEmpty ?? true {
            queries[spec] = nil
            clients[spec] = nil
            observed.withLock { $0[spec] = nil }
            query.dropped.withLock { $0 = true }
            query.feed.finish()
        }
    }

    /// The shared query for `spec`, if observed.
    public func query(_ spec: QuerySpec) -> SharedQuery? { queries[spec] }
}
