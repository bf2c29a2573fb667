import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// The service: the page, the write API and the live queries, on one port.
///
/// - `GET /` — the page;
/// - `GET /live?status=open&orderBy=updated_at&descending=true&limit=100` (WebSocket) —
///   a live query: an initial event with the rows, then one event per commit that changes
///   them; a bad query gets `{"error":…}` and the socket is closed;
/// - `POST /api/orders` `{"customer","status","amount"[,"id"]}`, `PATCH /api/orders/ID`,
///   `DELETE /api/orders/ID`, `POST /api/churn?changes=N` — writes, one commit each; bad
///   ones get `400 {"error":…}` and change nothing;
/// - `GET /api/status` — the last commit and the number of observed queries;
/// - with test hooks: `POST`/`GET /api/report?name=N` — what the page opened with `?report=N`
///   last said it shows.
///
/// Every request but the page's carries an access token (`Authenticator`), and is scoped by
/// what it grants (`Access`): a customer's live queries show only its orders (the filter is
/// added to the query the database runs), asking for another customer's is refused (403),
/// and a customer writes only its own orders; an admin sees and writes all. Without a valid
/// token a request gets 401; a live query whose token expires gets `{"error":…}` and its
/// socket is closed. Clients of one customer asking the same query share one observation;
/// two customers never share one.
public struct LiveQueryServer: Sendable {
    public let store: any OrderStore
    public let hub: QueryHub
    public let authenticator: Authenticator
    public let testHooks: Bool
    /// What each reporting page last said it shows, by the name it reports under.
    private let reports = Mutex<[String: [UInt8]]>([:])

    /// A server of `store`'s orders to the clients `authenticator` lets in (`.insecure`: all,
    /// as admins); `testHooks` adds `/api/report` for the browser test.
    public init(store: any OrderStore, authenticator: Authenticator, testHooks: Bool = false) {
        self.store = store
        hub = QueryHub(store: store)
        self.authenticator = authenticator
        self.testHooks = testHooks
        store.onCommit { [hub] _, changes in hub.commitHappened(changes) }
    }

    /// The application listening on `host:port` (port 0: any free port; see `onServerRunning`).
    public func application(host: String, port: Int, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol {
        let router = Router(context: BasicWebSocketRequestContext.self)
        let store = self.store, hub = self.hub, reports = self.reports, testHooks = self.testHooks
        let authenticator = self.authenticator

        router.get("/") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                     body: .init(byteBuffer: ByteBuffer(bytes: LiveQueryServer.page)))
        }
        router.get("/api/status") { request, _ in
            _ = try await authenticator.authenticate(request)
            let commit = store.lastCommit
            return json(.ok, "{\"version\":\(commit.version),\"committedAt\":\(commit.committedAtMilliseconds),\"queries\":\(await hub.activeQueryCount)}")
        }
        router.post("/api/orders") { request, _ in
            struct NewOrder: Decodable { var customer: String?; var status: String; var amount: Int64; var id: Int64? }
            return await respond {
                let access = try await authenticator.authenticate(request).access
                let body = try await decodeBody(request, as: NewOrder.self)
                // A customer's order is its own whether or not the body names it.
                guard let customer = body.customer ?? access.owner else { throw WriteError("customer is required") }
                try access.mayAssign(customer: customer)
                return try encode(await store.insert(customer: customer, status: body.status, amount: body.amount, id: body.id))
            }
        }
        router.patch("/api/orders/:id") { request, context in
            struct Change: Decodable { var customer: String?; var status: String?; var amount: Int64? }
            return await respond {
                let access = try await authenticator.authenticate(request).access
                let id = try orderID(context)
                let body = try await decodeBody(request, as: Change.self)
                try access.mayAssign(customer: body.customer)
                return try encode(await store.update(id: id, customer: body.customer, status: body.status, amount: body.amount,
                                                     owner: access.owner))
            }
        }
        router.delete("/api/orders/:id") { request, context in
            await respond {
                let access = try await authenticator.authenticate(request).access
                try await store.delete(id: try orderID(context), owner: access.owner)
                return Array("{\"deleted\":true}".utf8)
            }
        }
        router.post("/api/churn") { request, _ in
            await respond {
                guard try await authenticator.authenticate(request).access == .admin else {
                    throw AccessDenied(.forbidden, "only an admin token may churn")
                }
                try await store.churn(changes: try churnChanges(request.uri.queryParameters))
                return Array("{\"version\":\(store.lastCommit.version)}".utf8)
            }
        }
        if testHooks {
            router.post("/api/report") { request, _ in
                let body = try await request.body.collect(upTo: 16 << 20)
                let name = request.uri.queryParameters.get("name") ?? ""
                reports.withLock { $0[name] = Array(body.readableBytesView) }
                return json(.ok, "{}")
            }
            router.get("/api/report") { request, _ in
                let name = request.uri.queryParameters.get("name") ?? ""
                return json(.ok, String(decoding: reports.withLock { $0[name] } ?? Array("null".utf8), as: UTF8.self))
            }
        }
        // A refusal is told on the socket, where a browser can read it (a browser's WebSocket
        // sees no HTTP status of a refused upgrade): the JSON error, then a close with code
        // 4401 (no valid token) or 4403 (not this token's orders), HTTP's status plus 4000. A
        // query that does not parse gets its error and a normal close.
        router.ws("/live") { _, _ in
            .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let grant: Grant, spec: QuerySpec
            do {
                grant = try await authenticator.authenticate(context.request)
                spec = try grant.access.scope(QuerySpec.parse(parameters: context.request.uri.queryParameters))
            } catch let error as AccessDenied {
                try await outbound.write(.text(errorJSON(error.message)))
                try await outbound.close(error.closeCode, reason: nil)
                return
            } catch let error as WriteError {
                try await outbound.write(.text(errorJSON(error.message)))
                return
            }
            try await serveLiveQuery(spec, hub: hub, inbound: inbound, outbound: outbound, until: grant.expires)
        }

        return Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router),
            // When a node goes away its clients all come to the others at once (500 within a
            // tenth of a second in the cluster's load test): past the default queue of 256,
            // a connection waits out a SYN retry, a second or more.
            configuration: .init(address: .hostname(host, port: port), backlog: 2_048),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: Logger(label: "live-query-service")
        )
    }

    /// The page (`Public/index.html`), read once.
    static let page: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "index", withExtension: "html", subdirectory: "Public"),
              let data = try? Data(contentsOf: url) else { return Array("<p>page missing</p>".utf8) }
        return Array(data)
    }()
}

/// Sends a client its live query until it leaves or its token expires (`until`; then an
/// error event): the initial event, then for each new publication the shared event, or its
/// own when it fell behind (a client that reads slowly gets one event for many commits, and
/// holds one snapshot, whatever it missed).
func serveLiveQuery(_ spec: QuerySpec, hub: QueryHub, inbound: WebSocketInboundStream,
                    outbound: WebSocketOutboundWriter, until expires: Date?) async throws {
    let id = UUID()
    let query = await hub.join(spec, client: id)
    let expired = await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            do {
                for await event in query.feed.subscribe() {
                    try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: frame(for: event))))
                }
            } catch {}
            return false
        }
        group.addTask {
            // The client sends nothing; this ends when it closes.
            do { for try await _ in inbound {} } catch {}
            return false
        }
        if let expires {
            group.addTask {
                try? await Task.sleep(for: .seconds(max(0, expires.timeIntervalSinceNow)))
                return !Task.isCancelled
            }
        }
        let expired = await group.next() ?? false
        group.cancelAll()
        return expired
    }
    await hub.leave(spec, client: id)
    if expired {
        let refusal = AccessDenied(.unauthorized, "the access token expired; connect again with a new one")
        try? await outbound.write(.text(errorJSON(refusal.message)))
        try? await outbound.close(refusal.closeCode, reason: nil)
    }
}

extension QuerySpec {
    /// A query from URL parameters (`status`, `customer`, `minAmount`, `orderBy`, `descending`, `limit`).
    public static func parse(parameters: Parameters) throws(WriteError) -> QuerySpec {
        var object: [String: Any] = [:]
        for name in ["status", "customer", "orderBy"] { if let value = parameters.get(name) { object[name] = value } }
        for name in ["minAmount", "limit"] {
            if let value = parameters.get(name) {
                guard let number = Int64(value) else { throw WriteError("\(name) must be an integer") }
                object[name] = number
            }
        }
        if let value = parameters.get("descending") {
            guard value == "true" || value == "false" else { throw WriteError("descending must be true or false") }
            object["descending"] = value == "true"
        }
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data("{}".utf8)
        return try parse(String(decoding: data, as: UTF8.self))
    }
}

func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
    Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
}

func errorJSON(_ message: String) -> String {
    let data = (try? JSONSerialization.data(withJSONObject: ["error": message])) ?? Data("{\"error\":\"bad request\"}".utf8)
    return String(decoding: data, as: UTF8.self)
}

/// Runs a request's work: its bytes as a 200, a client's mistake as a 4xx with a one-line
/// JSON error (400; 401 without a valid token; 403 for what the token may not do; 404 for a
/// missing order; 413 for a body past `maximumBody`); 503 when the database did not answer
/// in time (the write may or may not have been applied); only a failure of the server
/// itself is a 500.
func respond(_ body: () async throws -> [UInt8]) async -> Response {
    do {
        let bytes = try await body()
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    } catch let error as WriteError {
        let status: HTTPResponse.Status = switch error.reason {
        case .invalid: .badRequest
        case .notFound: .notFound
        case .forbidden: .forbidden
        }
        return json(status, errorJSON(error.message))
    } catch let error as AccessDenied {
        return error.response
    } catch is ReadTimedOut {
        return json(.serviceUnavailable, errorJSON("the database did not answer in time; the write may or may not have been applied"))
    } catch let error as any HTTPResponseError where (400..<500).contains(error.status.code) {
        // The body's reader refusing more than `maximumBody` bytes (NIOTooManyBytesError) is one.
        let message = error.status == .contentTooLarge ? "the body is larger than \(maximumBody) bytes" : error.status.reasonPhrase
        return json(error.status, errorJSON(message))
    } catch {
        return json(.internalServerError, errorJSON("\(error)"))
    }
}

/// The largest request body the write API reads: an order is well under a kilobyte.
let maximumBody = 1 << 16

/// `POST /api/churn`'s `changes` (default 10): an integer in 1...10000, or a 400.
func churnChanges(_ parameters: Parameters) throws(WriteError) -> Int {
    guard let text = parameters.get("changes") else { return 10 }
    guard let changes = Int(text), (1...10_000).contains(changes) else { throw WriteError("changes must be an integer in 1...10000") }
    return changes
}

func decodeBody<T: Decodable>(_ request: Request, as type: T.Type) async throws -> T {
    let buffer = try await request.body.collect(upTo: maximumBody)
    do {
        return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
    } catch {
        throw WriteError("the body must be a JSON object with the fields of an order")
    }
}

func orderID(_ context: BasicWebSocketRequestContext) throws -> Int64 {
    guard let text = context.parameters.get("id"), let id = Int64(text) else { throw WriteError("the order id must be an integer") }
    return id
}

func encode(_ order: Order) throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return Array(try encoder.encode(order))
}
