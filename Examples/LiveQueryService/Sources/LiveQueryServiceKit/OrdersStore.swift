import Foundation
import GRDB

/// One row of the `orders` table.
public struct Order: Codable, Sendable, Hashable, Identifiable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "orders"
    public static let statuses = ["open", "paid", "shipped", "cancelled"]

    public var id: Int64
    public var customer: String
    public var status: String
    /// In cents.
    public var amount: Int64
    /// Milliseconds since 1970, set by every write.
    public var updated_at: Int64

    public init(id: Int64, customer: String, status: String, amount: Int64, updated_at: Int64) {
        self.id = id
        self.customer = customer
        self.status = status
        self.amount = amount
        self.updated_at = updated_at
    }

    /// Reads a row by column position (`SELECT *` order): every refresh of a live query
    /// decodes its whole page, and this is several times faster than the `Decodable` path.
    public init(row: Row) {
        id = row[0]
        customer = row[1]
        status = row[2]
        amount = row[3]
        updated_at = row[4]
    }
}

/// A write a client asked for that cannot be done: said back as a JSON error (400, or 404
/// for a missing order, 403 for another customer's).
public struct WriteError: Error, Sendable {
    public enum Reason: Sendable {
        case invalid, notFound, forbidden
    }

    public var message: String
    public var reason: Reason
    public init(_ message: String, _ reason: Reason = .invalid) {
        self.message = message
        self.reason = reason
    }

    static func noOrder(_ id: Int64) -> WriteError { WriteError("no order \(id)", .notFound) }
    static func notOwner(_ id: Int64) -> WriteError { WriteError("order \(id) belongs to another customer", .forbidden) }
}

/// What the last commit was: its number (1, 2, …) and when it committed.
public struct CommitStamp: Sendable, Equatable {
    public var version: Int
    public var committedAtMilliseconds: Int64
}

/// The orders one commit changed: their ids, and the rows of those still there after it
/// (the others were deleted); nil rows when the commit changed too many to list.
public struct CommitChanges: Sendable {
    public var ids: Set<Int64>
    public var rows: [Order]?
}

/// Collects the ids of the orders each transaction changes (SQLite's update hook, through
/// GRDB) and, after its commit, reads the rows those ids have now: the live queries use them
/// to tell whether a commit can change their rows at all.
final class OrderChangeCollector: TransactionObserver, @unchecked Sendable {
    /// A transaction that changed more rows than this is reported without its rows.
    static let rowLimit = 1_000
    // Touched only on the writer's queue (GRDB calls every method there).
    private var ids: Set<Int64> = []
    private let committed: (CommitChanges) -> Void

    init(committed: @escaping (CommitChanges) -> Void) {
        self.committed = committed
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == Order.databaseTableName }

    func databaseDidChange(with event: DatabaseEvent) { ids.insert(event.rowID) }

    func databaseDidCommit(_ db: Database) {
        guard !ids.isEmpty else { return }
        let changed = ids
        ids = []
        let rows = changed.count <= Self.rowLimit ? try? Order.fetchAll(db, keys: Array(changed)) : nil
        committed(CommitChanges(ids: changed, rows: rows))
    }

    func databaseDidRollback(_ db: Database) { ids = [] }
}

/// The SQLite database (WAL mode, through GRDB): the orders table, the writes the HTTP API
/// offers, and a commit counter that a GRDB transaction observer advances after each commit.
public final class OrdersStore: OrderStore {
    public let pool: DatabasePool
    private let stamp = Mutex(CommitStamp(version: 0, committedAtMilliseconds: 0))
    private let listeners = Mutex<[@Sendable (CommitStamp, CommitChanges) -> Void]>([])

    /// Opens (and on first start creates and seeds with `seedRows` orders) the database at `path`.
    public init(path: String, seedRows: Int) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        // WAL's usual durability (a commit survives a crash of the process; fsyncs at
        // checkpoints), and reads from a memory map and a larger page cache: every refresh
        // of a live query reads its page of rows again, and pread calls were a fifth of the
        // server's time under load.
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL; PRAGMA mmap_size = 268435456; PRAGMA cache_size = -16000")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS orders (
                    id INTEGER PRIMARY KEY,
                    customer TEXT NOT NULL,
                    status TEXT NOT NULL,
                    amount INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL);
                -- One index for each order a live query may ask for, with and without a status,
                -- each holding every column (the rowid ends every index, so ties by id come
                -- in order too): a page is read from its index alone, with no lookup a row in
                -- the table, which was the largest part of SQLite's time under load.
                CREATE INDEX IF NOT EXISTS orders_status_updated_all ON orders (status, updated_at, customer, amount);
                CREATE INDEX IF NOT EXISTS orders_status_amount_all ON orders (status, amount, customer, updated_at);
                CREATE INDEX IF NOT EXISTS orders_status_id_all ON orders (status, id, customer, amount, updated_at);
                CREATE INDEX IF NOT EXISTS orders_updated_all ON orders (updated_at, customer, status, amount);
                CREATE INDEX IF NOT EXISTS orders_amount_all ON orders (amount, customer, status, updated_at);
                -- A customer's own orders (every query of a customer token), few enough to sort.
                CREATE INDEX IF NOT EXISTS orders_customer_all ON orders (customer, updated_at, status, amount);
                """)
        }
        if try pool.read({ try Order.fetchCount($0) }) == 0 && seedRows > 0 {
            var generator = SystemRandomNumberGenerator()
            let now = OrdersStore.milliseconds()
            try pool.write { db in
                for id in 1...Int64(seedRows) {
                    try OrdersStore.randomOrder(id: id, at: now - Int64(seedRows) + id, using: &generator).insert(db)
                }
            }
        }
        // The planner's statistics: without them SQLite takes `customer = ?` to be as selective
        // as `status = ?` and, for a customer's orders by amount, walks every order of the
        // status in amount order rather than sorting the customer's few (measured: 100
        // customers' queries under load, p99 0.57 s before).
        try pool.write { db in try db.execute(sql: "ANALYZE") }
        // Every commit that touches the table advances the clock and tells the live queries
        // what it changed (on the writer's queue, in commit order).
        let collector = OrderChangeCollector { [stamp, listeners] changes in
            let next = stamp.withLock { current in
                current = CommitStamp(version: current.version + 1, committedAtMilliseconds: OrdersStore.milliseconds())
                return current
            }
            for listener in listeners.withLock({ $0 }) { listener(next, changes) }
        }
        pool.add(transactionObserver: collector, extent: .databaseLifetime)
    }

    /// The last commit.
    public var lastCommit: CommitStamp { stamp.withLock { $0 } }

    /// Calls `listener` after every commit that changed the orders table, on the writer's
    /// queue, in commit order, with what the commit changed.
    public func onCommit(_ listener: @escaping @Sendable (CommitStamp, CommitChanges) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    static func milliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    static func randomOrder(id: Int64, at time: Int64, using generator: inout some RandomNumberGenerator) -> Order {
        Order(id: id, customer: "customer \(Int.random(in: 1...5_000, using: &generator))",
              status: Order.statuses[Int.random(in: 0..<Order.statuses.count, using: &generator)],
              amount: Int64.random(in: 100...100_000, using: &generator), updated_at: time)
    }

    // MARK: Writes (each one transaction, one commit)

    /// Inserts an order; a missing id takes the next free one.
    public func insert(customer: String, status: String, amount: Int64, id: Int64?) throws -> Order {
        try validate(customer: customer, status: status, amount: amount)
        return try pool.write { db in
            let newID = try id ?? ((Int64.fetchOne(db, sql: "SELECT MAX(id) FROM orders") ?? 0) + 1)
            guard try Order.fetchOne(db, key: newID) == nil else { throw WriteError("order \(newID) exists") }
            let order = Order(id: newID, customer: customer, status: status, amount: amount, updated_at: OrdersStore.milliseconds())
            try order.insert(db)
            return order
        }
    }

    /// Changes the given fields of order `id` (with an `owner`, only if it is that customer's).
    public func update(id: Int64, customer: String?, status: String?, amount: Int64?, owner: String?) throws -> Order {
        try pool.write { db in
            guard var order = try Order.fetchOne(db, key: id) else { throw WriteError.noOrder(id) }
            if let owner, order.customer != owner { throw WriteError.notOwner(id) }
            if let customer { order.customer = customer }
            if let status { order.status = status }
            if let amount { order.amount = amount }
            try validate(customer: order.customer, status: order.status, amount: order.amount)
            order.updated_at = OrdersStore.milliseconds()
            try order.update(db)
            return order
        }
    }

    /// Deletes order `id` (with an `owner`, only if it is that customer's).
    public func delete(id: Int64, owner: String?) throws {
        try pool.write { db in
            guard let order = try Order.fetchOne(db, key: id) else { throw WriteError.noOrder(id) }
            if let owner, order.customer != owner { throw WriteError.notOwner(id) }
            try Order.deleteOne(db, key: id)
        }
    }

    /// One commit of random churn: `changes` rows updated (status, amount), inserted or
    /// deleted, as a busy shop would.
    public func churn(changes: Int) throws {
        try validateChurn(changes)
        var generator = SystemRandomNumberGenerator()
        try pool.write { db in
            let now = OrdersStore.milliseconds()
            let maxID = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM orders") ?? 0
            for step in 0..<changes {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0:
                    try OrdersStore.randomOrder(id: maxID + 1 + Int64(step), at: now, using: &generator).insert(db)
                case 1:
                    try db.execute(sql: "DELETE FROM orders WHERE id = (SELECT id FROM orders WHERE id >= ? ORDER BY id LIMIT 1)",
                                   arguments: [Int64.random(in: 1...max(1, maxID), using: &generator)])
                default:
                    try db.execute(sql: """
                        UPDATE orders SET status = ?, amount = ?, updated_at = ?
                        WHERE id = (SELECT id FROM orders WHERE id >= ? ORDER BY id LIMIT 1)
                        """, arguments: [Order.statuses[Int.random(in: 0..<Order.statuses.count, using: &generator)],
                                         Int64.random(in: 100...100_000, using: &generator), now + Int64(step),
                                         Int64.random(in: 1...max(1, maxID), using: &generator)])
                }
            }
        }
    }

    private func validate(customer: String, status: String, amount: Int64) throws {
        try validateOrder(customer: customer, status: status, amount: amount)
    }

    public func fetch(_ spec: QuerySpec) async throws -> [Order] {
        try await pool.read { db in try spec.fetch(db) }
    }

    public func fetchAll() async throws -> [Order] {
        try await pool.read { db in try Order.order(Column("id")).fetchAll(db) }
    }
}

/// A lock around a value (Synchronization's `Mutex` needs macOS 15; this works from 14).
public final class Mutex<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    public init(_ value: Value) { self.value = value }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
