import Foundation
import Logging
import PostgresNIO

/// The orders in PostgreSQL, shared by every node of a cluster (`--database postgres://…`).
///
/// How a node learns every commit, whichever node made it: statement triggers on `orders`
/// send `NOTIFY orders_changes` with the ids the statement changed (from its transition
/// tables) and the database's clock. PostgreSQL delivers notifications only when their
/// transaction commits, in commit order, to every session listening; a node listens on one
/// connection of its own. Logical decoding would give the same in commit order too, but it
/// needs a replication slot per node that the database keeps WAL for while a node is down;
/// notifications cost nothing while nobody listens. What a notification cannot give is
/// delivery to a node that was disconnected: so on every (re)connection of its listener the
/// store reports `CommitChanges.unknown`, and every live query of the node reads its rows
/// again. A client is then told nothing wrong, only late by the reconnection.
///
/// The notification also carries the rows the statement left, so that a node learns a commit
/// without reading anything; where they do not fit (about 7,000 bytes), the node reads the
/// rows of the ids (one query). A statement that changed more rows than fit as ids notifies
/// without them (`*`): every query reads its rows again.
public final class PostgresOrdersStore: OrderStore {
    /// The connection pool in use, and the task that runs it. A pool can be replaced (see
    /// `renewPool`); every operation takes the current one.
    private struct Pool {
        let client: PostgresClient
        let runner: Task<Void, Never>

        init(_ configuration: PostgresClient.Configuration) {
            let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "live-query-service.postgres.pool"))
            self.client = client
            runner = Task { await client.run() }
        }
    }

    private let configuration: PostgresClient.Configuration
    private let pool: Mutex<Pool>
    private var client: PostgresClient { pool.withLock { $0.client } }
    /// How long the listener may wait for a connection before its pool counts as stuck.
    static let connectDeadline: Duration = .seconds(10)
    /// How long the listener's connection may take to answer its heartbeat before it counts
    /// as cut off.
    static let heartbeatDeadline: Duration = .seconds(3)
    /// How long a write may wait for the database's answer (as a live query's read may).
    static let answerDeadline = SharedQuery.readDeadline
    private let listener = Mutex<Task<Void, Never>?>(nil)
    private let stamp = Mutex(CommitStamp(version: 0, committedAtMilliseconds: 0))
    private let listeners = Mutex<[@Sendable (CommitStamp, CommitChanges) -> Void]>([])
    private let logger = Logger(label: "live-query-service.postgres")
    /// Called each time the listener (re)connects, after LISTEN took effect.
    let listening = Mutex<[@Sendable () -> Void]>([])
    /// How many times the listener has connected and listened (1 until a reconnection).
    public var listenCount: Int { listens.withLock { $0 } }
    private let listens = Mutex(0)

    /// The channel the triggers notify.
    static let channel = "orders_changes"

    /// Connects to `url` (`postgres://user[:password]@host[:port]/database`), creates the
    /// table, its indexes and triggers when missing, seeds `seedRows` orders into an empty
    /// table, and starts listening for commits; returns once it listens.
    public init(url: String, seedRows: Int) async throws {
        configuration = try Self.configuration(url)
        pool = Mutex(Pool(configuration))
        do {
            try await prepare(seed: seedRows)
        } catch {
            pool.withLock { $0.runner.cancel() }
            throw error
        }
        let (first, firstListen) = AsyncStream<Void>.makeStream()
        listening.withLock { $0.append { firstListen.finish() } }
        startListening()
        for await _ in first {}
    }

    deinit {
        listener.withLock { $0?.cancel() }
        pool.withLock { $0.runner.cancel() }
    }

    /// Stops listening and closes the connections.
    public func close() async {
        let task = listener.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        let runner = pool.withLock { $0.runner }
        runner.cancel()
        await runner.value
    }

    /// Replaces a pool that made no connection within `connectDeadline` with a new one,
    /// and shuts the old one down, which fails whatever still waits on it. (Seen once in
    /// CI: after PostgreSQL restarted, postgres-nio's pool never connected again, and every
    /// write waited forever.) Does nothing if `stale` was already replaced.
    private func renewPool(replacing stale: PostgresClient) {
        let old = pool.withLock { current -> Pool? in
            guard current.client === stale else { return nil }
            defer { current = Pool(configuration) }
            return current
        }
        guard let old else { return }
        logger.warning("no PostgreSQL connection within \(Self.connectDeadline): replacing the connection pool")
        old.runner.cancel()
    }

    static func configuration(_ url: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), components.scheme == "postgres" || components.scheme == "postgresql",
              let host = components.host, !host.isEmpty else {
            throw WriteError("the database URL must be postgres://user[:password]@host[:port]/database")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password, database: database.isEmpty ? nil : database, tls: .disable)
        configuration.options.maximumConnections = 16
        return configuration
    }

    /// Creates the schema when it is missing, and seeds an empty table: one transaction under
    /// one lock, so that nodes starting together do it once. (Two locks, one for each step,
    /// deadlocked: one node's DDL waited for another's seeding INSERT, which waited for the
    /// first node's index.) A node that finds the triggers takes the schema as made and
    /// changes nothing, so it never locks the table while other nodes write.
    private func prepare(seed rows: Int) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(4242)"), logger: logger)
            let made = try await integers(connection.query(PostgresQuery(unsafeSQL: """
                SELECT count(*) FROM pg_trigger WHERE tgname = 'orders_deleted' AND tgrelid = to_regclass('orders')
                """), logger: logger)).first ?? 0
            if made == 0 {
                for statement in Self.schema { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
            }
            guard rows > 0 else { return }
            let count = try await integers(connection.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM orders"), logger: logger)).first ?? 0
            guard count == 0 else { return }
            let now = OrdersStore.milliseconds()
            try await self.run(connection, """
                INSERT INTO orders (id, customer, status, amount, updated_at)
                SELECT g, 'customer ' || (1 + floor(random() * 5000))::BIGINT,
                       (ARRAY['open', 'paid', 'shipped', 'cancelled'])[1 + floor(random() * 4)::INT],
                       100 + floor(random() * 99901)::BIGINT, \(now - Int64(rows)) + g
                FROM generate_series(1, \(rows)) AS g
                """)
        }
    }

    static let schema = [
        """
        CREATE TABLE IF NOT EXISTS orders (
            id BIGINT PRIMARY KEY,
            customer TEXT NOT NULL,
            status TEXT NOT NULL,
            amount BIGINT NOT NULL,
            updated_at BIGINT NOT NULL)
        """,
        // The orders a live query may ask for, with and without a status.
        "CREATE INDEX IF NOT EXISTS orders_status_updated ON orders (status, updated_at, id)",
        "CREATE INDEX IF NOT EXISTS orders_status_amount ON orders (status, amount, id)",
        "CREATE INDEX IF NOT EXISTS orders_updated ON orders (updated_at, id)",
        "CREATE INDEX IF NOT EXISTS orders_amount ON orders (amount, id)",
        "CREATE INDEX IF NOT EXISTS orders_customer ON orders (customer, updated_at, id)",
        // The payload: the database's clock in milliseconds, the ids (or `*`), then the rows
        // the statement left, as `[id, customer, status, amount, updated_at]` arrays, where
        // they fit: a node then learns the commit without a query of its own.
        """
        CREATE OR REPLACE FUNCTION orders_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            ids TEXT;
            rows TEXT;
        BEGIN
            IF TG_OP = 'INSERT' THEN
                SELECT string_agg(id::TEXT, ','), json_agg(json_build_array(id, customer, status, amount, updated_at))::TEXT
                    INTO ids, rows FROM new_rows;
            ELSIF TG_OP = 'DELETE' THEN
                SELECT string_agg(id::TEXT, ',') INTO ids FROM old_rows;
                rows := '[]';
            ELSE
                SELECT string_agg(id::TEXT, ',') INTO ids FROM (SELECT id FROM old_rows UNION SELECT id FROM new_rows) changed;
                SELECT COALESCE(json_agg(json_build_array(id, customer, status, amount, updated_at))::TEXT, '[]')
                    INTO rows FROM new_rows;
            END IF;
            IF ids IS NULL THEN
                RETURN NULL;
            END IF;
            IF length(ids) > 7000 THEN
                ids := '*';
                rows := NULL;
            ELSIF length(ids) + octet_length(rows) > 7000 THEN
                rows := NULL;
            END IF;
            PERFORM pg_notify('orders_changes', (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT::TEXT || ':' || ids
                                                || COALESCE(';' || rows, ''));
            RETURN NULL;
        END
        $$
        """,
        "DROP TRIGGER IF EXISTS orders_inserted ON orders",
        "DROP TRIGGER IF EXISTS orders_updated ON orders",
        "DROP TRIGGER IF EXISTS orders_deleted ON orders",
        "CREATE TRIGGER orders_inserted AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION orders_notify()",
        "CREATE TRIGGER orders_updated AFTER UPDATE ON orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION orders_notify()",
        "CREATE TRIGGER orders_deleted AFTER DELETE ON orders REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION orders_notify()",
    ]

    /// Runs a statement in a transaction's connection, its rows discarded.
    private func run(_ connection: PostgresConnection, _ query: PostgresQuery) async throws {
        try await connection.query(query, logger: logger)
    }

    // MARK: Commits

    public var lastCommit: CommitStamp { stamp.withLock { $0 } }

    public func onCommit(_ listener: @escaping @Sendable (CommitStamp, CommitChanges) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// The listener: one connection that LISTENs, in a loop that reconnects after a failure
    /// (the database restarted, the connection dropped) and then reports unknown changes.
    private func startListening() {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                let client = self.client
                let state = Mutex((listened: false, ended: false))
                // The attempt runs on its own, so that a pool stuck before giving a
                // connection cannot hold the loop: past the deadline the pool is replaced
                // and the attempt abandoned (cancelled, not awaited).
                let attempt = Task {
                    defer { state.withLock { $0.ended = true } }
                    try await self.listen(on: client) { state.withLock { $0.listened = true } }
                }
                let deadline = ContinuousClock.now + Self.connectDeadline
                var stuck = false
                while true {
                    let (listened, ended) = state.withLock { ($0.listened, $0.ended) }
                    if listened || ended { break }
                    if Task.isCancelled {
                        attempt.cancel()
                        return
                    }
                    if ContinuousClock.now >= deadline {
                        stuck = true
                        break
                    }
                    try? await Task.sleep(for: .milliseconds(100))
                }
                if stuck {
                    attempt.cancel()
                    self.renewPool(replacing: client)
                    continue
                }
                do {
                    try await withTaskCancellationHandler {
                        try await attempt.value
                    } onCancel: {
                        attempt.cancel()
                    }
                } catch {
                    if Task.isCancelled { return }
                    self.logger.warning("listener lost its connection, reconnecting: \(error)")
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        listener.withLock { $0 = task }
    }

    /// One listening session on one connection of `client`, until that connection fails;
    /// `listened` is called once LISTEN took effect.
    private func listen(on client: PostgresClient, listened: @escaping @Sendable () -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: Self.channel) { notifications in
                // LISTEN took effect: commits from here on are delivered; the ones
                // before it (while disconnected, or before the first listen) are
                // covered by reading every query again.
                listened()
                self.listens.withLock { $0 += 1 }
                self.committed(CommitChanges.unknown, at: OrdersStore.milliseconds())
                for callback in self.listening.withLock({ $0 }) { callback() }
                // The notifications do not end when the connection dies (seen when the
                // server restarts): a query every second on the same connection does
                // fail, and ends both. A connection whose path died silently (no reset: a
                // firewall dropping its state, a cable) answers nothing ever, and TCP takes
                // about 15 minutes to give up on it: so the query has a deadline, and past
                // it the connection is closed, which fails whatever waits on it.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await notification in notifications { await self.received(notification.payload) }
                        throw WriteError("the notifications ended")
                    }
                    group.addTask {
                        while true {
                            try await Task.sleep(for: .seconds(1))
                            do {
                                try await withDeadline(Self.heartbeatDeadline) {
                                    _ = try await connection.query("SELECT 1", logger: self.logger)
                                }
                            } catch {
                                try? await connection.close()
                                throw error
                            }
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }

    /// One notification: `MILLISECONDS:ID,ID,…;ROWS`, `MILLISECONDS:ID,ID,…` or
    /// `MILLISECONDS:*`. Live queries use the rows to skip commits that cannot change theirs;
    /// where the trigger could not fit them (or they do not read), they are read (one query).
    private func received(_ payload: String) async {
        guard let colon = payload.firstIndex(of: ":"), let at = Int64(payload[..<colon]) else { return }
        let rest = payload[payload.index(after: colon)...]
        guard rest != "*" else {
            committed(.unknown, at: at)
            return
        }
        let semicolon = rest.firstIndex(of: ";")
        let ids = rest[..<(semicolon ?? rest.endIndex)].split(separator: ",").compactMap { Int64($0) }
        var rows = semicolon.flatMap { Self.notifiedRows(rest[rest.index(after: $0)...]) }
        if rows == nil {
            rows = try? await orders(client.query("SELECT id, customer, status, amount, updated_at FROM orders WHERE id = ANY(\(ids))", logger: logger))
        }
        committed(CommitChanges(ids: Set(ids), rows: rows), at: at)
    }

    /// The rows of a notification, or nil where they do not read as the trigger writes them.
    static func notifiedRows(_ text: Substring) -> [Order]? {
        try? JSONDecoder().decode([NotifiedOrder].self, from: Data(text.utf8)).map(\.order)
    }

    /// Counts the commit and tells the listeners (in the order notifications arrive: commit order).
    private func committed(_ changes: CommitChanges, at milliseconds: Int64) {
        let next = stamp.withLock { current in
            current = CommitStamp(version: current.version + 1, committedAtMilliseconds: milliseconds)
            return current
        }
        for listener in listeners.withLock({ $0 }) { listener(next, changes) }
    }

    // MARK: Writes (each one transaction, one commit)

    /// `work`, or `ReadTimedOut` once `answerDeadline` passes: a write sent on a connection
    /// whose path died silently would otherwise wait for minutes, and its HTTP request with
    /// it. (Whether such a write was applied is unknown: its answer is lost.)
    private func answered<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withDeadline(Self.answerDeadline, work)
    }

    public func insert(customer: String, status: String, amount: Int64, id: Int64?) async throws -> Order {
        try validateOrder(customer: customer, status: status, amount: amount)
        return try await answered { [self] in
            let now = OrdersStore.milliseconds()
            // A free id is taken by trying: nodes inserting at once may pick the same one.
            for _ in 0..<8 {
                let rows = try await integers(client.query("""
                    INSERT INTO orders (id, customer, status, amount, updated_at)
                    VALUES (COALESCE(\(id), (SELECT COALESCE(MAX(id), 0) + 1 FROM orders)), \(customer), \(status), \(amount), \(now))
                    ON CONFLICT (id) DO NOTHING
                    RETURNING id
                    """, logger: logger))
                if let newID = rows.first { return Order(id: newID, customer: customer, status: status, amount: amount, updated_at: now) }
                if let id { throw WriteError("order \(id) exists") }
            }
            throw WriteError("no free order id; try again")
        }
    }

    public func update(id: Int64, customer: String?, status: String?, amount: Int64?, owner: String?) async throws -> Order {
        try validateOrder(customer: customer, status: status, amount: amount)
        return try await answered { [self] in
            let now = OrdersStore.milliseconds()
            // The owner is checked in the statement itself: no other write can come in between.
            let rows = try await orders(client.query("""
                UPDATE orders SET customer = COALESCE(\(customer), customer), status = COALESCE(\(status), status),
                                  amount = COALESCE(\(amount), amount), updated_at = \(now)
                WHERE id = \(id) AND (\(owner)::TEXT IS NULL OR customer = \(owner))
                RETURNING id, customer, status, amount, updated_at
                """, logger: logger))
            guard let row = rows.first else { throw try await missing(id) }
            return row
        }
    }

    public func delete(id: Int64, owner: String?) async throws {
        try await answered { [self] in
            let rows = try await integers(client.query("""
                DELETE FROM orders WHERE id = \(id) AND (\(owner)::TEXT IS NULL OR customer = \(owner)) RETURNING id
                """, logger: logger))
            guard !rows.isEmpty else { throw try await missing(id) }
        }
    }

    /// Why a write of order `id` that changed nothing failed: the order is not there, or
    /// (when it is) it belongs to another customer.
    private func missing(_ id: Int64) async throws -> WriteError {
        let found = try await integers(client.query("SELECT id FROM orders WHERE id = \(id)", logger: logger))
        return found.isEmpty ? .noOrder(id) : .notOwner(id)
    }

    /// `changes` rows in one commit: about a tenth inserted, a tenth deleted, the rest updated,
    /// each at a random id (one that no longer exists changes nothing; a row both deleted and
    /// updated is one or the other).
    public func churn(changes: Int) async throws {
        try validateChurn(changes)
        var generator = SystemRandomNumberGenerator()
        var inserts = 0, deletes = 0, updates = 0
        for _ in 0..<changes {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: inserts += 1
            case 1: deletes += 1
            default: updates += 1
            }
        }
        try await answered { [self, inserts, deletes, updates] in
            let now = OrdersStore.milliseconds()
            // One statement (data-modifying CTEs share one snapshot and commit together): one
            // commit, without a transaction held open across round trips.
            try await client.query("""
                WITH top AS (SELECT COALESCE(MAX(id), 0) AS id FROM orders),
                inserted AS (
                    INSERT INTO orders (id, customer, status, amount, updated_at)
                    SELECT top.id + g, 'customer ' || (1 + floor(random() * 5000))::BIGINT,
                           (ARRAY['open', 'paid', 'shipped', 'cancelled'])[1 + floor(random() * 4)::INT],
                           100 + floor(random() * 99901)::BIGINT, \(now)
                    FROM top, generate_series(1, \(inserts)) AS g
                    ON CONFLICT (id) DO NOTHING
                    RETURNING id),
                deleted AS (
                    DELETE FROM orders WHERE id IN (SELECT (1 + floor(random() * top.id))::BIGINT FROM top, generate_series(1, \(deletes)))
                    RETURNING id),
                updated AS (
                    UPDATE orders SET status = (ARRAY['open', 'paid', 'shipped', 'cancelled'])[1 + floor(random() * 4)::INT],
                                      amount = 100 + floor(random() * 99901)::BIGINT, updated_at = \(now)
                    WHERE id IN (SELECT (1 + floor(random() * top.id))::BIGINT FROM top, generate_series(1, \(updates)))
                    RETURNING id)
                SELECT (SELECT count(*) FROM inserted) + (SELECT count(*) FROM deleted) + (SELECT count(*) FROM updated)
                """, logger: logger)
        }
    }

    // MARK: Reads

    public func fetch(_ spec: QuerySpec) async throws -> [Order] {
        try await orders(client.query(spec.postgresQuery, logger: logger))
    }

    public func fetchAll() async throws -> [Order] {
        try await orders(client.query("SELECT id, customer, status, amount, updated_at FROM orders ORDER BY id", logger: logger))
    }
}

/// The orders a query returned (columns id, customer, status, amount, updated_at).
private func orders(_ rows: PostgresRowSequence) async throws -> [Order] {
    var orders: [Order] = []
    for try await (id, customer, status, amount, updated) in rows.decode((Int64, String, String, Int64, Int64).self) {
        orders.append(Order(id: id, customer: customer, status: status, amount: amount, updated_at: updated))
    }
    return orders
}

/// The integers of a query's one column.
private func integers(_ rows: PostgresRowSequence) async throws -> [Int64] {
    var values: [Int64] = []
    for try await value in rows.decode(Int64.self) { values.append(value) }
    return values
}

extension QuerySpec {
    /// The query in PostgreSQL, every value a bound parameter (the order column and direction
    /// come from a fixed list), ties broken by id as in SQLite.
    var postgresQuery: PostgresQuery {
        var bindings = PostgresBindings()
        var clauses: [String] = []
        if let status {
            bindings.append(status)
            clauses.append("status = $\(bindings.count)")
        }
        if let customer {
            bindings.append(customer)
            clauses.append("customer = $\(bindings.count)")
        }
        if let minAmount {
            bindings.append(minAmount)
            clauses.append("amount >= $\(bindings.count)")
        }
        bindings.append(Int64(limit))
        let direction = descending ? "DESC" : "ASC"
        let column = QuerySpec.orderColumns.contains(orderBy) ? orderBy : "updated_at"
        let filter = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        return PostgresQuery(unsafeSQL: """
            SELECT id, customer, status, amount, updated_at FROM orders\(filter)
            ORDER BY \(column) \(direction), id \(direction) LIMIT $\(bindings.count)
            """, binds: bindings)
    }
}

/// An order as the notification trigger writes it: `[id, customer, status, amount, updated_at]`.
struct NotifiedOrder: Decodable {
    let order: Order

    init(from decoder: Decoder) throws {
        var fields = try decoder.unkeyedContainer()
        order = Order(id: try fields.decode(Int64.self), customer: try fields.decode(String.self),
                      status: try fields.decode(String.self), amount: try fields.decode(Int64.self),
                      updated_at: try fields.decode(Int64.self))
        guard fields.isAtEnd else {
            throw DecodingError.dataCorruptedError(in: fields, debugDescription: "more than five fields")
        }
    }
}
