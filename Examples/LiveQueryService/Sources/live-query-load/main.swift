import Foundation
import GRDB
import LiveQueryServiceKit

// live-query-load --port P --database FILE --server-pid PID [--clients 1000] [--queries 10]
//                 [--commits 200] [--writers 4] [--changes 5] [--seconds 30] [--token ADMIN_TOKEN]
// live-query-load --ports P1,P2,… --postgres URL --server-pid PID1,PID2,… [--kill-node I --kill-at S] …
// Loopback only: N WebSocket clients on Q distinct live queries while one writer commits
// C times a second (each commit CHANGES rows) for S seconds; then checks that every client
// holds exactly what the query returns from SQLite, and reports latency (commit to event
// received), event size against the full result, and the server's CPU and memory.
// Also keeps one client that never reads, to show that it costs the server bounded memory.
// With --token, every client and the writer send it (a service that checks tokens). With
// --token-secret-file F --customers K, client i is instead customer (i % K) + 1 with a token
// signed with F's secret, so its query is scoped to that customer's orders (the writer is an
// admin): what per-customer scoping costs the server. The commits come from WRITERS
// concurrent writers, each paced to its share: with W writers and commits of L seconds,
// at most W / L commits a second are made, whatever the server could take.
// A cluster: --ports spreads the clients over the nodes and sends each commit to the next
// node (to another when it fails, as a load balancer would), --postgres is where the rows
// are checked, and --kill-node I --kill-at S kills node I (SIGKILL) at second S of the run:
// its clients reconnect to the next node, and the time from losing their node to holding a
// fresh initial event there is reported.

var port = 8080, database = "orders.sqlite", serverPIDs: [Int32] = []
var ports: [Int] = [], postgres: String?, killNode: Int?, killAt = 10.0
var clientCount = 1_000, queryCount = 10, commitsPerSecond = 200, changesPerCommit = 5, seconds = 30.0
var token: String?, secretFile: String?, customerCount = 0, writerCount = 4
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    let value = arguments.next() ?? ""
    switch argument {
    case "--port": port = Int(value) ?? port
    case "--ports": ports = value.split(separator: ",").compactMap { Int($0) }
    case "--database": database = value
    case "--postgres": postgres = value
    case "--server-pid": serverPIDs = value.split(separator: ",").compactMap { Int32($0) }
    case "--kill-node": killNode = Int(value)
    case "--kill-at": killAt = Double(value) ?? killAt
    case "--clients": clientCount = min(Int(value) ?? clientCount, 5_000)
    case "--queries": queryCount = min(Int(value) ?? queryCount, 20)
    case "--commits": commitsPerSecond = min(Int(value) ?? commitsPerSecond, 1_000)
    case "--writers": writerCount = max(1, min(Int(value) ?? writerCount, 64))
    case "--changes": changesPerCommit = Int(value) ?? changesPerCommit
    case "--seconds": seconds = min(Double(value) ?? seconds, 120)
    case "--token": token = value
    case "--token-secret-file": secretFile = value
    case "--customers": customerCount = max(0, Int(value) ?? 0)
    default: FileHandle.standardError.write(Data("live-query-load: unknown argument \(argument)\n".utf8)); exit(2)
    }
}

if ports.isEmpty { ports = [port] }
port = ports[0]
// Read by the clients' tasks: fixed now that the arguments are parsed.
let nodePorts = ports, nodePIDs = serverPIDs, killSeconds = killAt

/// The queries: every status, ordered by amount, id or recency, pages of 100-500 rows.
let statuses: [String?] = [nil] + Order.statuses.map { $0 }
let queries: [QuerySpec] = (0..<queryCount).map { index in
    QuerySpec(status: statuses[index % statuses.count], orderBy: ["amount", "id", "updated_at"][index % 3],
              descending: index % 2 == 0, limit: [500, 200, 500][index % 3])
}
func url(_ spec: QuerySpec, port: Int = port) -> String {
    var items = ["orderBy=\(spec.orderBy)", "descending=\(spec.descending)", "limit=\(spec.limit)"]
    if let status = spec.status { items.append("status=\(status)") }
    return "ws://127.0.0.1:\(port)/live?" + items.joined(separator: "&")
}

final class Stats: @unchecked Sendable {
    let lock = NSLock()
    var latencies: [Double] = []
    var eventBytes = 0, events = 0, fullBytes = 0, fullEvents = 0, errors: [String] = []
    /// The sum over events of event bytes / the full result's bytes of that client's query.
    var eventShare = 0.0
    var mirrors: [Int: (QuerySpec, LiveMirror)] = [:]
    var measuring = false
    /// After the run, while the events received during it are applied: events still arriving
    /// wait their turn behind them.
    var catchingUp = false

    var pending: [Int: [[UInt8]]] = [:]
    /// For each reconnection: milliseconds from losing a node to the initial event from another.
    var recoveries: [Double] = []
    var lostAt: [Int: Double] = [:]

    func record<Result>(_ body: (Stats) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(self)
    }

}
let stats = Stats()

func milliseconds() -> Double { Date().timeIntervalSince1970 * 1000 }

/// The `committedAt` of an event, read from its text without parsing the rest.
func committedAtField(_ bytes: [UInt8]) -> Int64 {
    let key = Array("\"committedAt\":".utf8)
    guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: key) }) else { return 0 }
    var value: Int64 = 0
    var index = start + key.count
    while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
        value = value * 10 + Int64(bytes[index] - 48)
        index += 1
    }
    return value
}

/// The server processes' CPU seconds (user + system) and resident memory now and at most,
/// summed over the nodes still running.
func serverUsage() -> (cpu: Double, rssMB: Double, peakMB: Double) {
    var total: (cpu: Double, rssMB: Double, peakMB: Double) = (0, 0, 0)
    for pid in serverPIDs {
        let usage = processUsage(pid)
        total = (total.cpu + usage.cpu, total.rssMB + usage.rssMB, total.peakMB + usage.peakMB)
    }
    return total
}

func processUsage(_ serverPID: Int32) -> (cpu: Double, rssMB: Double, peakMB: Double) {
    guard serverPID > 0, let stat = try? String(contentsOfFile: "/proc/\(serverPID)/stat", encoding: .utf8),
          let status = try? String(contentsOfFile: "/proc/\(serverPID)/status", encoding: .utf8) else { return (0, 0, 0) }
    let fields = stat.split(separator: ")").last!.split(separator: " ")
    let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
    func kilobytes(_ name: String) -> Double {
        status.split(separator: "\n").first { $0.hasPrefix(name) }.flatMap { Double($0.split(separator: " ").dropFirst().first { !$0.isEmpty }.map(String.init) ?? "") } ?? 0
    }
    return (ticks / Double(sysconf(Int32(_SC_CLK_TCK))), kilobytes("VmRSS:") / 1024, kilobytes("VmHWM:") / 1024)
}

/// A client that upgrades to a WebSocket and then never reads a byte.
func stalledClient(_ path: String) -> Int32 {
    let fd = loopbackSocket(port: port) { fd in
        var small: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    }
    let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    _ = request.withCString { send(fd, $0, strlen($0), 0) }
    return fd
}

/// A TCP socket connected to `port` on loopback, `configure` (socket options) applied before
/// it connects; -1 when it could not connect. A socket `configure` made non-blocking is
/// returned while its connection is still being made.
func loopbackSocket(port: Int, configure: (Int32) -> Void) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return -1 }
    configure(fd)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 || errno == EINPROGRESS else {
        close(fd)
        return -1
    }
    return fd
}

print("live-query-load: \(clientCount) clients on \(queries.count) queries, \(commitsPerSecond) commits/s × \(changesPerCommit) rows for \(Int(seconds)) s from \(writerCount) writers")
let stalled = stalledClient(String(url(queries[0]).dropFirst("ws://127.0.0.1:\(port)".count)) + (token.map { "&access_token=\($0)" } ?? ""))
var customerTokens: [String] = []
if let secretFile, customerCount > 0 {
    var secret = Array(FileManager.default.contents(atPath: secretFile) ?? Data())
    while secret.last == UInt8(ascii: "\n") { secret.removeLast() }
    let authenticator = try await Authenticator(secret: secret)
    let expires = Date(timeIntervalSinceNow: 3_600)
    for customer in 1...customerCount {
        customerTokens.append(try await authenticator.token(for: .customer("customer \(customer)"), expires: expires)!)
    }
    token = try await authenticator.token(for: .admin, expires: expires)
}
var authorization: [String] = []
if let token { authorization = ["Authorization: Bearer \(token)"] }
/// Client `client`'s query (scoped to its customer when clients are customers) and header lines.
func clientQuery(_ client: Int) -> (QuerySpec, [String]) {
    var spec = queries[client % queries.count]
    guard !customerTokens.isEmpty else { return (spec, authorization) }
    spec.customer = "customer \(client % customerTokens.count + 1)"
    return (spec, ["Authorization: Bearer \(customerTokens[client % customerTokens.count])"])
}

/// Client `client`'s event: its latency is recorded while measuring (the event is applied
/// after the run, so the clients' parsing does not compete with the server for the two cores);
/// otherwise it is applied to the client's mirror now.
func received(_ client: Int, _ bytes: [UInt8], fullSize: inout Int) throws {
    let received = milliseconds()
    let committedAt = committedAtField(bytes)
    let isInitial = bytes.starts(with: Array("{\"isInitial\":true".utf8))
    try stats.record { stats in
        if isInitial, let lost = stats.lostAt.removeValue(forKey: client) {
            stats.recoveries.append(received - lost)
        }
        if (stats.measuring || stats.catchingUp) && isInitial {
            // Back on another node: its rows from now on.
            stats.pending[client] = [bytes]
            fullSize = bytes.count
        } else if stats.catchingUp {
            stats.pending[client, default: []].append(bytes)
        } else if stats.measuring {
            stats.pending[client, default: []].append(bytes)
            stats.latencies.append(received - Double(committedAt))
            stats.eventBytes += bytes.count
            stats.eventShare += Double(bytes.count) / Double(fullSize)
            stats.events += 1
        } else {
            var mirror = stats.mirrors[client]?.1 ?? LiveMirror()
            for event in stats.pending.removeValue(forKey: client) ?? [] { try mirror.apply(event) }
            let (_, isInitial) = try mirror.apply(bytes)
            if isInitial {
                fullSize = bytes.count
                stats.fullBytes += bytes.count
                stats.fullEvents += 1
            }
            stats.mirrors[client] = (clientQuery(client).0, mirror)
        }
    }
}

/// Applies every client's events received during the run, in order, outside the lock: the
/// clients' thread takes it for every event, and must keep reading (and answering the nodes'
/// pings) meanwhile. Events that arrive meanwhile are applied in the next round.
func catchUp() throws {
    stats.record { stats in
        stats.measuring = false
        stats.catchingUp = true
    }
    while let round = stats.record({ stats -> [(client: Int, events: [[UInt8]], mirror: LiveMirror)]? in
        if stats.pending.isEmpty {
            stats.catchingUp = false
            return nil
        }
        defer { stats.pending = [:] }
        return stats.pending.map { client, events in (client, events, stats.mirrors[client]?.1 ?? LiveMirror()) }
    }) {
        for (client, events, first) in round {
            var mirror = first
            for event in events { try mirror.apply(event) }
            stats.record { $0.mirrors[client] = (clientQuery(client).0, mirror) }
        }
    }
}

// The clients, each on its node (the next one when it loses it), on one thread of their own.
var fullSizes = [Int](repeating: 1, count: clientCount)
let clients = LoopbackWebSockets(
    ports: nodePorts,
    requests: (0..<clientCount).map { client in
        let (spec, headers) = clientQuery(client)
        return .init(path: String(url(spec).dropFirst("ws://127.0.0.1:\(port)".count)), headers: headers)
    },
    onMessage: { client, bytes in
        do {
            try received(client, bytes, fullSize: &fullSizes[client])
        } catch {
            stats.record { $0.errors.append("client \(client): \(error)") }
        }
    },
    onLost: { client in
        stats.record { stats in if stats.lostAt[client] == nil { stats.lostAt[client] = milliseconds() } }
    },
    onGaveUp: { client in
        stats.record { $0.errors.append("client \(client): no node took it after \(LoopbackWebSockets.maximumFailures) tries") }
    })
clients.start()

// Wait until every client has its initial event.
let connectDeadline = Date().addingTimeInterval(60)
while stats.lock.withLock({ stats.mirrors.count }) < clientCount && Date() < connectDeadline {
    try await Task.sleep(for: .milliseconds(100))
}
let connected = stats.lock.withLock { stats.mirrors.count }
print("live-query-load: \(connected) clients connected")

// The writers: C commits a second through the HTTP API, paced, for S seconds, each to the next
// node (to the one after when it fails). Each writer is a thread with a kept-alive connection
// to every node, on plain blocking sockets: URLSession on Linux spent two thirds of this
// process's CPU in dispatch threads, on the cores the nodes and PostgreSQL share with it.
let churnPath = "/api/churn?changes=\(changesPerCommit)"
stats.record { $0.measuring = true }
let before = serverUsage()
let cpuBefore = serverPIDs.map { processUsage($0).cpu }
let start = Date()
final class Counter: @unchecked Sendable {
    let lock = NSLock()
    var commits = 0, errors = 0, peakRSS = 0.0
}
let counter = Counter()
counter.peakRSS = before.rssMB
let writers = writerCount, runSeconds = seconds, rate = commitsPerSecond, writerToken = token
// WRITERS threads, each paced to its share of the rate, so a slow commit does not stall the pace.
let writersDone = DispatchSemaphore(value: 0)
for worker in 0..<writers {
    let thread = Thread {
        let connections = nodePorts.map { PlainHTTPConnection(port: $0, token: writerToken) }
        var sent = 0
        while Date().timeIntervalSince(start) < runSeconds {
            let due = start.addingTimeInterval((Double(sent * writers + worker)) / Double(rate))
            let wait = due.timeIntervalSinceNow
            if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
            sent += 1
            var ok = false
            for attempt in 0..<connections.count where !ok {
                ok = connections[(sent * writers + worker + attempt) % connections.count].post(churnPath) == 200
            }
            counter.lock.withLock { if ok { counter.commits += 1 } else { counter.errors += 1 } }
        }
        writersDone.signal()
    }
    thread.start()
}
await withTaskGroup(of: Void.self) { group in
    group.addTask {
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            Thread {
                for _ in 0..<writers { writersDone.wait() }
                finished.resume()
            }.start()
        }
    }
    if let killNode, killNode < serverPIDs.count {
        group.addTask {
            try? await Task.sleep(for: .seconds(killSeconds))
            kill(nodePIDs[killNode], SIGKILL)
            print("live-query-load: killed node \(killNode) (port \(nodePorts[killNode])) at \(Int(killSeconds)) s")
        }
    }
    group.addTask {
        while Date().timeIntervalSince(start) < runSeconds {
            try? await Task.sleep(for: .seconds(1))
            let rss = serverUsage().rssMB
            counter.lock.withLock { counter.peakRSS = max(counter.peakRSS, rss) }
        }
    }
}
let (commits, writeErrors, peakRSS) = counter.lock.withLock { (counter.commits, counter.errors, counter.peakRSS) }
let writeSeconds = Date().timeIntervalSince(start)
let after = serverUsage()
// The CPU of the nodes still running at the end (a killed node's is not counted).
let cpuSeconds = zip(serverPIDs, cpuBefore).map { pid, before in max(0, processUsage(pid).cpu - before) }.reduce(0, +)
do {
    try catchUp()
} catch {
    stats.record { $0.errors.append("applying events: \(error)") }
}

// Convergence: every client's rows equal the query's rows in the database.
let store: any OrderStore = if let postgres {
    try await PostgresOrdersStore(url: postgres, seedRows: 0)
} else {
    try OrdersStore(path: database, seedRows: 0)
}
var converged = 0
let convergeDeadline = Date().addingTimeInterval(30)
var expected: [QuerySpec: [Order]] = [:]
repeat {
    try await Task.sleep(for: .milliseconds(500))
    expected = [:]
    // Each client's own query (its customer's, when clients are customers).
    for spec in Set(stats.lock.withLock { stats.mirrors.values.map(\.0) }) { expected[spec] = try await store.fetch(spec) }
    converged = stats.lock.withLock { stats.mirrors.values.filter { expected[$0.0] == $0.1.rows }.count }
} while converged < connected && Date() < convergeDeadline

clients.stop()
close(stalled)
let latencies = stats.lock.withLock { stats.latencies.sorted() }
func percentile(_ p: Double) -> Double { latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
let (eventBytes, events, fullBytes, fullEvents, errors, share) = stats.lock.withLock { (stats.eventBytes, stats.events, stats.fullBytes, stats.fullEvents, stats.errors, stats.eventShare) }
let recoveries = stats.lock.withLock { stats.recoveries.sorted() }
let averageEvent = events > 0 ? Double(eventBytes) / Double(events) : 0
let averageFull = fullEvents > 0 ? Double(fullBytes) / Double(fullEvents) : 1
let averageShare = events > 0 ? share / Double(events) : 0
print(String(format: """
    commits: %d in %.1f s (%.0f/s), %d write errors
    events received: %d (%.0f/s); commit → event received: p50 %.1f ms, p99 %.1f ms, max %.1f ms
    bytes per event: %.0f on average, %.2f%% of its query's full result on average (full results average %.0f bytes)
    server: CPU %.0f%% of one core (the nodes together), RSS %.0f MB at the end (peak seen %.0f MB, high-water %.0f MB), with one client that never reads
    converged: %d of %d clients hold exactly the query's rows in the database
    errors: %d
    """, commits, writeSeconds, Double(commits) / writeSeconds, writeErrors, events, Double(events) / writeSeconds,
    percentile(0.5), percentile(0.99), latencies.last ?? 0, averageEvent, 100 * averageShare, averageFull,
    100 * cpuSeconds / writeSeconds, after.rssMB, max(peakRSS, after.rssMB), after.peakMB, converged, connected, errors.count))
if !recoveries.isEmpty {
    print(String(format: "reconnected: %d clients; losing their node → initial event from another: p50 %.0f ms, p99 %.0f ms, max %.0f ms",
                 recoveries.count, recoveries[recoveries.count / 2], recoveries[min(recoveries.count - 1, recoveries.count * 99 / 100)], recoveries.last!))
}
for error in errors.prefix(5) { print("  \(error)") }
let passed = connected == clientCount && converged == clientCount && errors.isEmpty && writeErrors == 0
print(passed ? "live-query-load: passed" : "live-query-load: FAILED")
exit(passed ? 0 : 1)

/// One writer's HTTP/1.1 connection to a node on loopback, kept alive across requests and
/// reopened after a failure. Blocking: used only from a writer's own thread.
final class PlainHTTPConnection {
    let port: Int
    let token: String?
    private var socketFD: Int32 = -1

    init(port: Int, token: String?) {
        self.port = port
        self.token = token
    }

    deinit { disconnect() }

    /// POSTs to `path` with an empty body; the response's status, or nil when the node could
    /// not be reached or answered something that does not read as HTTP/1.1.
    func post(_ path: String) -> Int? {
        if socketFD < 0 && !connectToNode() { return nil }
        var request = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 0\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        request += "\r\n"
        guard sendAll(socketFD, Array(request.utf8)), let (status, keepAlive) = readResponse() else {
            disconnect()
            return nil
        }
        if !keepAlive { disconnect() }
        return status
    }

    private func connectToNode() -> Bool {
        socketFD = loopbackSocket(port: port) { fd in
            // A node that stops answering costs a writer at most this long.
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var noDelay: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        }
        return socketFD >= 0
    }

    private func disconnect() {
        if socketFD >= 0 { close(socketFD) }
        socketFD = -1
    }

    /// The status and whether the connection stays open; the body (sized by Content-Length,
    /// which the service always sends) is read and dropped.
    private func readResponse() -> (status: Int, keepAlive: Bool)? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let headerEnd = Array("\r\n\r\n".utf8)
        var bodyStart: Int?
        while bodyStart == nil {
            let count = chunk.withUnsafeMutableBytes { recv(socketFD, $0.baseAddress, $0.count, 0) }
            if count <= 0 || buffer.count > 65_536 { return nil }
            buffer += chunk[..<count]
            if let end = buffer.firstRange(of: headerEnd) { bodyStart = end.upperBound }
        }
        let head = String(decoding: buffer[..<bodyStart!], as: UTF8.self).lowercased()
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("http/1.1 "),
              let status = Int(statusLine.dropFirst(9).prefix(3)) else { return nil }
        let contentLength = lines.lazy.compactMap { line -> Int? in
            line.hasPrefix("content-length:") ? Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) : nil
        }.first
        guard let contentLength else { return nil }
        while buffer.count - bodyStart! < contentLength {
            let count = chunk.withUnsafeMutableBytes { recv(socketFD, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            buffer += chunk[..<count]
        }
        return (status, !lines.contains("connection: close"))
    }
}
