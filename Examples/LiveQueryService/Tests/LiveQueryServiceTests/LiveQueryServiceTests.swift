import DiffEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GRDB
import Hummingbird
import HummingbirdWSClient
import Logging
import NIOCore
import PostgresNIO
@testable import LiveQueryServiceKit
import Testing

/// The two stores every service test runs on.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// The PostgreSQL server the tests use: `LIVE_QUERY_POSTGRES` (a URL), which
/// `make test-live-query` sets after starting a server (`scripts/postgres.sh`) and stops after.
func postgresServerURL() throws -> String {
    guard let url = ProcessInfo.processInfo.environment["LIVE_QUERY_POSTGRES"], !url.isEmpty else {
        throw WriteError("LIVE_QUERY_POSTGRES is not set: run these tests with `make test-live-query`, which starts PostgreSQL")
    }
    return url
}

/// A new, empty database on the tests' PostgreSQL server; its URL.
func freshPostgresDatabase() async throws -> String {
    let server = try postgresServerURL()
    let name = "orders_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
    let client = PostgresClient(configuration: try PostgresOrdersStore.configuration(server), backgroundLogger: Logger(label: "tests"))
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        group.cancelAll()
    }
    var components = URLComponents(string: server)!
    components.path = "/" + name
    return components.string!
}

/// A service on a fresh database (SQLite in a temporary folder, or a new PostgreSQL
/// database), on a free loopback port. `location` reopens a database a service used before.
/// With a `secret`, requests need tokens signed with it; without, the service is open.
final class RunningService: @unchecked Sendable {
    let kind: StoreKind
    let location: String
    let store: any OrderStore
    let server: LiveQueryServer
    private(set) var port = 0
    private var task: Task<Void, any Error>?

    init(_ kind: StoreKind, seed: Int = 500, location: String? = nil, secret: [UInt8]? = nil) async throws {
        self.kind = kind
        switch kind {
        case .sqlite:
            let folder = location ?? NSTemporaryDirectory() + "live-query-tests-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            self.location = folder
            store = try OrdersStore(path: folder + "/orders.sqlite", seedRows: seed)
        case .postgres:
            let url: String
            if let location { url = location } else { url = try await freshPostgresDatabase() }
            self.location = url
            store = try await PostgresOrdersStore(url: url, seedRows: seed)
        }
        var authenticator = Authenticator.insecure
        if let secret { authenticator = try await Authenticator(secret: secret) }
        server = LiveQueryServer(store: store, authenticator: authenticator)
        try await start()
    }

    private func start() async throws {
        let bound = AsyncStream<Int>.makeStream()
        let app = server.application(host: "127.0.0.1", port: 0) { port in bound.continuation.yield(port) }
        task = Task { try await app.runService(gracefulShutdownSignals: []) }
        for await port in bound.stream {
            self.port = port
            break
        }
    }

    func stop() async {
        task?.cancel()
        _ = await task?.result
        if let postgres = store as? PostgresOrdersStore { await postgres.close() }
    }

    /// A token for `access`, valid for `seconds`, signed with the service's secret.
    func token(_ access: Access, seconds: Double = 600) async throws -> String {
        try #require(try await server.authenticator.token(for: access, expires: Date(timeIntervalSinceNow: seconds)))
    }

    /// A request with `token` as `Authorization: Bearer`, or with `rawAuthorization` as the header.
    func http(_ method: String, _ path: String, _ body: String? = nil, token: String? = nil,
              rawAuthorization: String? = nil) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        if let authorization = token.map({ "Bearer \($0)" }) ?? rawAuthorization {
            request.setValue(authorization, forHTTPHeaderField: "Authorization")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, object)
    }

    func expected(_ spec: QuerySpec) async throws -> [Order] {
        try await store.fetch(spec)
    }
}

/// A WebSocket client that keeps a mirror of its live query.
final class MirrorClient: @unchecked Sendable {
    private let lock = NSLock()
    private var mirror = LiveMirror()
    private var messages: [String] = []
    private var task: Task<Void, Never>?
    private(set) var closed = false

    /// A client of `query`; with a `token`, sent as an `Authorization` header.
    init(port: Int, query: String, token: String? = nil) {
        var logger = Logger(label: "test-client")
        logger.logLevel = .critical
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        task = Task { [headers] in
            _ = try? await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/live?\(query)",
                                                   configuration: .init(maxFrameSize: 16 << 20, additionalHeaders: headers), logger: logger) { inbound, _, _ in
                for try await message in inbound.messages(maxSize: 16 << 20) {
                    guard case .text(let text) = message else { continue }
                    self.lock.withLock {
                        self.messages.append(text)
                        _ = try? self.mirror.apply(Array(text.utf8))
                    }
                }
            }
            self.lock.withLock { self.closed = true }
        }
    }

    var rows: [Order] { lock.withLock { mirror.rows } }
    var received: [String] { lock.withLock { messages } }
    var isClosed: Bool { lock.withLock { closed } }

    func disconnect() async {
        task?.cancel()
        _ = await task?.value
    }
}

/// Polls `condition` until it holds or `seconds` pass.
func eventually(_ seconds: Double = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}

@Suite(.serialized) struct LiveQueryServiceTests {
    let openByRecency = QuerySpec(status: "open", orderBy: "updated_at", descending: true, limit: 50)
    let openQuery = "status=open&orderBy=updated_at&descending=true&limit=50"

    @Test(arguments: StoreKind.allCases)
    func randomWritesConvergeAndClientsShareOneObservation(_ kind: StoreKind) async throws {
        let service = try await RunningService(kind)
        let clients = (0..<3).map { _ in MirrorClient(port: service.port, query: openQuery) }
        let other = MirrorClient(port: service.port, query: "orderBy=amount&descending=false&limit=20")
        #expect(await eventually { clients.allSatisfy { $0.received.count >= 1 } && other.received.count >= 1 })
        #expect(await service.server.hub.activeQueryCount == 2)
        var generator = SystemRandomNumberGenerator()
        let leaver = MirrorClient(port: service.port, query: openQuery)
        #expect(await eventually { leaver.received.count >= 1 })
        for step in 0..<200 {
            if step == 100 { await leaver.disconnect() } // mid-stream: the others carry on
            switch step % 4 {
            case 0: _ = try await service.store.insert(customer: "t\(step)", status: "open", amount: Int64.random(in: 1...9_999, using: &generator), id: nil)
            case 1: try await service.store.churn(changes: 3)
            default:
                let id = Int64.random(in: 1...500, using: &generator)
                _ = try? await service.store.update(id: id, customer: nil, status: Order.statuses.randomElement(), amount: nil, owner: nil)
            }
        }
        let expected = try await service.expected(openByRecency)
        #expect(await eventually { clients.allSatisfy { $0.rows == expected } })
        let amountRows = try await service.expected(QuerySpec(orderBy: "amount", descending: false, limit: 20))
        #expect(await eventually { other.rows == amountRows })
        // One read and diff per refresh, whatever the number of clients (commits coalesce).
        let shared = try #require(await service.server.hub.query(openByRecency))
        #expect(await shared.refreshCount <= 201)
        // Commits that cannot change the query's rows are skipped: amounts of orders that are
        // not open change no row of the open orders by recency. (Once the query is idle: a
        // commit that comes while a read is due is read with it, not skipped, and on
        // PostgreSQL the last notifications may still be arriving.)
        #expect(await eventually { await shared.isIdle })
        let skippedBefore = shared.skippedCommits
        let paid = try await service.store.fetchAll().filter { $0.status == "paid" }.prefix(5).map(\.id)
        for id in paid { _ = try await service.store.update(id: id, customer: nil, status: nil, amount: 7, owner: nil) }
        #expect(await eventually { shared.skippedCommits >= skippedBefore + paid.count })
        #expect(await eventually { clients.allSatisfy { $0.rows == expected } })
        // A commit whose changed rows decide the new rows is applied without a read: a new open
        // order is the newest, and enters the full page at its top.
        let appliedBefore = shared.appliedCommits
        let newest = try await service.store.insert(customer: "newest", status: "open", amount: 5, id: nil)
        #expect(await eventually { shared.appliedCommits > appliedBefore })
        #expect(await eventually { clients.allSatisfy { $0.rows.first == newest } })
        // The last client to leave ends the observation.
        for client in clients + [other] { await client.disconnect() }
        #expect(await eventually { await service.server.hub.activeQueryCount == 0 })
        await service.stop()
    }

    @Test(arguments: StoreKind.allCases)
    func badQueriesAndWritesGetJSONErrorsAndChangeNothing(_ kind: StoreKind) async throws {
        let service = try await RunningService(kind, seed: 20)
        // A bad query is upgraded, gets one error message and a normal close, and the server
        // ends the connection itself.
        let bad = await readUntilServerCloses(port: service.port, target: "/live?status=lost")
        #expect(bad.status == 101)
        #expect(bad.texts == ["{\"error\":\"status must be one of open, paid, shipped, cancelled\"}"])
        #expect(bad.closeCode == 1000)
        #expect(bad.closedByServer)
        for query in ["limit=5000", "orderBy=name", "descending=maybe", "limit=ten"] {
            let client = await readUntilServerCloses(port: service.port, target: "/live?\(query)")
            #expect(client.texts.count == 1 && client.texts[0].hasPrefix("{\"error\":"), "\(query)")
            #expect(client.closeCode == 1000 && client.closedByServer, "\(query)")
        }
        let before = service.store.lastCommit.version
        let rowsBefore = try await service.store.fetchAll()
        for (method, path, body) in [("POST", "/api/orders", "{\"customer\":\"x\"}"), ("POST", "/api/orders", "not json"),
                                     ("POST", "/api/orders", "{\"customer\":\"x\",\"status\":\"open\",\"amount\":-5}"),
                                     ("PATCH", "/api/orders/3", "{\"status\":\"gone\"}"), ("PATCH", "/api/orders/abc", "{}"),
                                     ("POST", "/api/churn?changes=0", ""), ("POST", "/api/churn?changes=abc", ""),
                                     ("POST", "/api/churn?changes=-3", ""), ("POST", "/api/churn?changes=99999999999999999999", ""),
                                     ("POST", "/api/churn?changes=", ""), ("POST", "/api/orders", "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]")] {
            let (status, object) = try await service.http(method, path, body)
            #expect(status == 400, "\(method) \(path) \(body)")
            #expect(object["error"] is String)
        }
        // A body past the limit is refused as too large, whole or in part, with a JSON error.
        for size in [100_000, 200_000] {
            let padding = String(repeating: " ", count: size)
            for (method, path) in [("POST", "/api/orders"), ("PATCH", "/api/orders/3")] {
                let (status, object) = try await service.http(method, path, "{\"customer\":\"x\",\"status\":\"open\",\"amount\":5}" + padding)
                #expect(status == 413, "\(method) \(path) \(size)")
                #expect(object["error"] as? String == "the body is larger than 65536 bytes")
            }
        }
        // A query string or header crafted to be huge is answered or cut off by the HTTP parser
        // (at 80 KB of headers, which it stops reading), never served as an error of the
        // server; the server goes on serving.
        let hugeQuery = URLRequest(url: URL(string: "http://127.0.0.1:\(service.port)/api/status?" + String(repeating: "a=1&", count: 50_000))!)
        var hugeHeader = URLRequest(url: URL(string: "http://127.0.0.1:\(service.port)/api/status")!)
        hugeHeader.setValue(String(repeating: "x", count: 200_000), forHTTPHeaderField: "X-Padding")
        for var request in [hugeQuery, hugeHeader] {
            request.timeoutInterval = 3
            if let (_, response) = try? await URLSession.shared.data(for: request) {
                #expect((response as? HTTPURLResponse)?.statusCode != 500)
            }
        }
        #expect(try await service.http("GET", "/api/status").0 == 200)
        let (missing, _) = try await service.http("DELETE", "/api/orders/999999")
        #expect(missing == 404)
        #expect(service.store.lastCommit.version == before)
        #expect(try await service.store.fetchAll() == rowsBefore)
        await service.stop()
    }

    /// A client that fell behind gets one diff from what it has to the newest rows; one
    /// that is one step behind gets the event shared by all.
    @Test func aSlowClientGetsOneCoalescedDiff() throws {
        func order(_ id: Int64, _ amount: Int64) -> Order { Order(id: id, customer: "c", status: "open", amount: amount, updated_at: id) }
        let snapshots: [[Order]] = [
            [order(1, 10), order(2, 20), order(3, 30)],
            [order(2, 20), order(1, 10), order(3, 31)],
            [order(4, 40), order(2, 20), order(3, 31)],
            [order(3, 32), order(4, 40), order(5, 50)],
        ]
        let feed = QueryFeed(adapter: IdentifiableAdapter())
        var slow = QueryFeed.Cursor(), prompt = QueryFeed.Cursor(), mirror = LiveMirror()
        func publish(_ index: Int) {
            let rows = snapshots[index]
            feed.publish(rows) { update in
                let event = renderEvent(update.changeset, rows: rows, isInitial: update.isInitial, version: index + 10, committedAt: 0)
                return QueryEvent(version: index + 10, committedAt: 0, event: ByteBuffer(bytes: event))
            }
        }
        func bytes(_ event: QueryFeed.Event?) throws -> [UInt8] {
            var buffer = frame(for: try #require(event))
            return buffer.readBytes(length: buffer.readableBytes)!
        }
        publish(0)
        try mirror.apply(try bytes(feed.next(after: &slow)))
        publish(1)
        _ = feed.next(after: &prompt)
        publish(2)
        // One publication behind: the shared event, rendered once.
        let shared = try #require(feed.next(after: &prompt))
        #expect(shared.isPublicationsOwn && frame(for: shared) == feed.latest!.payload.event)
        publish(3)
        // Three behind: one event of its own from what it has, which brings it to the rows.
        let coalesced = try #require(feed.next(after: &slow))
        #expect(!coalesced.isPublicationsOwn && frame(for: coalesced) != feed.latest!.payload.event)
        try mirror.apply(try bytes(coalesced))
        #expect(mirror.rows == snapshots[3])
        #expect(feed.next(after: &slow) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func aRestartedServerGivesReconnectingClientsAFreshInitialEvent(_ kind: StoreKind) async throws {
        let first = try await RunningService(kind, seed: 100)
        let location = first.location
        let before = MirrorClient(port: first.port, query: openQuery)
        #expect(await eventually { before.rows.count > 0 })
        await first.stop()
        #expect(await eventually { before.isClosed })
        // Changes while the server was down are in the next initial event.
        let second = try await RunningService(kind, seed: 100, location: location)
        _ = try await second.store.insert(customer: "while away", status: "open", amount: 1, id: nil)
        let after = MirrorClient(port: second.port, query: openQuery)
        #expect(await eventually { after.received.count >= 1 })
        let first_event = try #require(after.received.first)
        #expect(first_event.hasPrefix("{\"isInitial\":true"))
        let expected = try await second.expected(openByRecency)
        #expect(await eventually { after.rows == expected })
        #expect(expected.first?.customer == "while away")
        await after.disconnect()
        await second.stop()
    }
}

/// The window that lets a query skip a commit or compute its rows from it: through random
/// commits on a model table, whenever the window skips a commit or computes the rows, they are
/// the query's rows on the table; when it asks for a read, the read's rows are taken.
@Suite struct NotificationTests {
    /// The rows as PostgreSQL's trigger writes them (`json_build_array`), escapes included.
    @Test func notifiedRowsReadAsTheTriggerWritesThem() {
        let text = #"[[1, "customer 7", "open", 250, 1700000000000], [9007199254740993, "ünï \"q\"", "paid", -5, 0]]"#
        #expect(PostgresOrdersStore.notifiedRows(text[...]) == [
            Order(id: 1, customer: "customer 7", status: "open", amount: 250, updated_at: 1_700_000_000_000),
            Order(id: 9_007_199_254_740_993, customer: "ünï \"q\"", status: "paid", amount: -5, updated_at: 0),
        ])
        #expect(PostgresOrdersStore.notifiedRows("[]") == [])
    }

    /// Anything else is not taken as rows (the node then reads them): no row is made up.
    @Test func notifiedRowsRefuseOtherShapes() {
        for text in [#"[[1, "a", "open", 2]]"#, #"[[1, "a", "open", 2, 3, 4]]"#, #"[[1.5, "a", "open", 2, 3]]"#,
                     #"[[1, null, "open", 2, 3]]"#, #"{"id": 1}"#, "", "[[1, \"a\""] {
            #expect(PostgresOrdersStore.notifiedRows(text[...]) == nil, "\(text)")
        }
    }
}

@Suite struct ResultWindowTests {
    @Test func skippedAndComputedCommitsGiveTheQuerysRows() {
        var generator = SplitMix64(seed: 333)
        var skipped = 0, computed = 0, read = 0
        for round in 0..<400 {
            var table = (1...60).map { id in
                Order(id: Int64(id), customer: "c\(id % 3)", status: Order.statuses[Int.random(in: 0..<4, using: &generator)],
                      amount: Int64.random(in: 1...50, using: &generator), updated_at: Int64.random(in: 1...50, using: &generator))
            }
            let spec = QuerySpec(status: round % 5 == 0 ? nil : Order.statuses[round % 4], customer: round % 7 == 0 ? "c1" : nil,
                                 minAmount: round % 3 == 0 ? 20 : nil, orderBy: ["amount", "id", "updated_at"][round % 3],
                                 descending: round % 2 == 0, limit: [3, 10, 100][round % 3])
            func run(_ rows: [Order]) -> [Order] { Array(rows.filter(spec.matches).sorted(by: spec.precedes).prefix(spec.limit)) }
            var window = ResultWindow(read: run(table))
            var nextID = Int64(1_000)
            for _ in 0..<20 {
                let before = window.rows
                var ids = Set<Int64>()
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    let index = Int.random(in: 0..<table.count, using: &generator)
                    ids.insert(table[index].id)
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: table.remove(at: index)
                    case 1:
                        nextID += 1
                        table.append(Order(id: nextID, customer: "c1", status: "open", amount: Int64.random(in: 1...50, using: &generator),
                                           updated_at: Int64.random(in: 1...60, using: &generator)))
                        ids.insert(nextID)
                    default:
                        table[index].status = Order.statuses[Int.random(in: 0..<4, using: &generator)]
                        table[index].amount = Int64.random(in: 1...50, using: &generator)
                        table[index].updated_at = Int64.random(in: 1...60, using: &generator)
                    }
                }
                let changes = CommitChanges(ids: ids, rows: table.filter { ids.contains($0.id) })
                if !window.admits(changes, spec) {
                    skipped += 1
                    #expect(window.rows == before && run(table) == before, "skipped a commit that changed \(spec)")
                } else if window.readPending {
                    read += 1
                    window.readStarts()
                    // The read sees the table as it is now; a commit that comes while it runs,
                    // which it may not see, is applied to what it returns or asks for another.
                    let seen = run(table)
                    if Bool.random(using: &generator) {
                        let index = Int.random(in: 0..<table.count, using: &generator)
                        table[index].updated_at = Int64.random(in: 1...60, using: &generator)
                        let during = CommitChanges(ids: [table[index].id], rows: [table[index]])
                        let admitted = window.admits(during, spec)
                        #expect(admitted)
                    }
                    window.read(seen, spec)
                    if window.readPending { window.readStarts(); window.read(run(table), spec) }
                    #expect(!window.readPending && window.rows == run(table), "read and applied other rows than \(spec) has")
                } else {
                    computed += 1
                    #expect(window.unpublished)
                    #expect(window.rows == run(table), "computed other rows than \(spec) has")
                }
            }
            // A pending read admits everything (and the read that follows it may have missed
            // the commit); unknown rows need a read.
            var pending = ResultWindow()
            pending.readStarts()
            let pendingAdmits = pending.admits(CommitChanges(ids: [1], rows: []), spec)
            #expect(pendingAdmits && pending.missed?.count == 1)
            var unknown = ResultWindow(read: run(table))
            let unknownAdmits = unknown.admits(CommitChanges(ids: [1], rows: nil), spec)
            #expect(unknownAdmits && unknown.readPending)
        }
        #expect(skipped > 500 && computed > 500 && read > 200, "\(skipped) skipped, \(computed) computed, \(read) read")
    }
}

/// A live query's read that never answers (sent on a connection the database dropped) is
/// given up at its deadline, so the query reads again instead of waiting forever.
@Suite struct ReadDeadlineTests {
    struct Refused: Error {}

    @Test func aReadThatNeverAnswersIsGivenUp() async throws {
        let held = Mutex<CheckedContinuation<Void, Never>?>(nil)
        await #expect(throws: ReadTimedOut.self) {
            try await withDeadline(.milliseconds(50)) {
                // Ignores cancellation, as a read on a dead connection did.
                await withCheckedContinuation { continuation in held.withLock { $0 = continuation } }
                return 1
            }
        }
        #expect(await eventually { held.withLock { $0 != nil } })
        held.withLock { $0?.resume() } // the abandoned read ends by itself later
        #expect(try await withDeadline(.seconds(5)) { 7 } == 7)
        await #expect(throws: Refused.self) { try await withDeadline(.seconds(5)) { () async throws -> Int in throw Refused() } }
    }
}
