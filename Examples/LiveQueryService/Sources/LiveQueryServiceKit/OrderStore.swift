import Foundation

/// Where the orders live: the writes the HTTP API offers, the live queries' reads, and the
/// commits, told to listeners in commit order with the ids each changed.
///
/// Two implementations: `OrdersStore` (SQLite in the process, the embedded default; it sees
/// the commits it makes) and `PostgresOrdersStore` (one PostgreSQL for many nodes; every node
/// learns every commit from the database, whichever node made it).
public protocol OrderStore: AnyObject, Sendable {
    /// The last commit this process learned of.
    var lastCommit: CommitStamp { get }
    /// Calls `listener` after every commit that changed the orders table, in commit order,
    /// with what the commit changed. A store that may have missed commits (a lost connection)
    /// calls it with `CommitChanges.unknown`, which every live query takes as a change.
    func onCommit(_ listener: @escaping @Sendable (CommitStamp, CommitChanges) -> Void)
    /// Inserts an order; a missing id takes the next free one.
    func insert(customer: String, status: String, amount: Int64, id: Int64?) async throws -> Order
    /// Changes the given fields of order `id`; with an `owner`, only if the order is that
    /// customer's (else `WriteError.notOwner`, nothing changed).
    func update(id: Int64, customer: String?, status: String?, amount: Int64?, owner: String?) async throws -> Order
    /// Deletes order `id`; with an `owner`, only if the order is that customer's.
    func delete(id: Int64, owner: String?) async throws
    /// One commit of random churn: `changes` rows updated, inserted or deleted, as a busy shop would.
    func churn(changes: Int) async throws
    /// The rows of a live query now.
    func fetch(_ spec: QuerySpec) async throws -> [Order]
    /// Every order, by id.
    func fetchAll() async throws -> [Order]
}

extension CommitChanges {
    /// Changes not known (commits may have been missed): every query reads its rows again.
    public static let unknown = CommitChanges(ids: [], rows: nil)
}

/// Checks a write's fields as both stores do.
func validateOrder(customer: String?, status: String?, amount: Int64?) throws(WriteError) {
    if let customer, customer.isEmpty || customer.utf8.count > 200 { throw WriteError("customer must be 1-200 bytes") }
    if let status, !Order.statuses.contains(status) { throw WriteError("status must be one of \(Order.statuses.joined(separator: ", "))") }
    if let amount, !(0...1_000_000_000).contains(amount) { throw WriteError("amount must be 0...1000000000 cents") }
}

/// `churn`'s count, checked as both stores do.
func validateChurn(_ changes: Int) throws(WriteError) {
    guard (1...10_000).contains(changes) else { throw WriteError("changes must be 1...10000") }
}
