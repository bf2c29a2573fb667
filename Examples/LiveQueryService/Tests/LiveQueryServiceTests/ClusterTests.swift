import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HummingbirdWSClient
import Logging
@testable import LiveQueryServiceKit
import Testing

/// A WebSocket client that, when its node goes away, reconnects to the next node of its list
/// (as a page with a node list, or a client behind a load balancer, would) and keeps the rows
/// of its newest connection.
final class RotatingClient: @unchecked Sendable {
    private let lock = NSLock()
    private var mirror = LiveMirror()
    private var task: Task<Void, Never>?
    private(set) var connections = 0

    init(ports: [Int], first: Int, query: String) {
        var logger = Logger(label: "test-client")
        logger.logLevel = .critical
        task = Task {
            var next = first
            while !Task.isCancelled {
                let port = ports[next % ports.count]
                next += 1
                _ = try? await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/live?\(query)", configuration: .init(maxFrameSize: 16 << 20),
                                                       logger: logger) { inbound, _, _ in
                    self.lock.withLock {
                        self.mirror = LiveMirror() // a new connection starts with an initial event
                        self.connections += 1
                    }
                    for try await message in inbound.messages(maxSize: 16 << 20) {
                        guard case .text(let text) = message else { continue }
                        self.lock.withLock { _ = try? self.mirror.apply(Array(text.utf8)) }
                    }
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    var rows: [Order] { lock.withLock { mirror.rows } }
    var events: Int { lock.withLock { mirror.events } }
    var connectionCount: Int { lock.withLock { connections } }

    func disconnect() async {
        task?.cancel()
        _ = await task?.value
    }
}

/// Several nodes on one PostgreSQL: every node learns every commit from the database, so
/// every client, on whichever node, ends at PostgreSQL's rows for its query, through writes on
/// every node, a node killed mid-run and PostgreSQL restarted mid-run.
@Suite(.serialized) struct ClusterTests {
    let queries = ["status=open&orderBy=updated_at&descending=true&limit=50", "orderBy=amount&descending=false&limit=20",
                   "status=paid&orderBy=id&descending=true&limit=30"]
    let specs = [QuerySpec(status: "open", orderBy: "updated_at", descending: true, limit: 50),
                 QuerySpec(orderBy: "amount", descending: false, limit: 20),
                 QuerySpec(status: "paid", orderBy: "id", descending: true, limit: 30)]

    /// Two nodes on one new database (the first seeds it).
    func cluster(seed: Int = 400) async throws -> [RunningService] {
        let first = try await RunningService(.postgres, seed: seed)
        let second = try await RunningService(.postgres, seed: seed, location: first.location)
        return [first, second]
    }

    /// Writes through each node in turn: inserts, updates of random orders, churn (small,
    /// and every tenth churn too large for its rows to travel in the notification).
    func write(_ steps: Range<Int>, through nodes: [RunningService], using generator: inout some RandomNumberGenerator) async throws {
        for step in steps {
            let store = nodes[step % nodes.count].store
            switch step % 3 {
            case 0: _ = try await store.insert(customer: "n\(step)", status: Order.statuses[step % 4], amount: Int64.random(in: 1...99_999, using: &generator), id: nil)
            case 1: _ = try? await store.update(id: Int64.random(in: 1...400, using: &generator), customer: nil, status: Order.statuses[(step / 3) % 4], amount: nil, owner: nil)
            // Now and then a commit whose rows do not fit its notification: the nodes read them.
            default: try await store.churn(changes: step % 30 == 2 ? 600 : 4)
            }
        }
    }

    /// `count` clients spread over the nodes (client k starts on node k mod the node count) on
    /// the queries in turn, each past its initial event.
    func connect(_ count: Int, to nodes: [RunningService]) async -> [RotatingClient] {
        let ports = nodes.map(\.port)
        let clients = (0..<count).map { RotatingClient(ports: ports, first: $0, query: queries[$0 % queries.count]) }
        #expect(await eventually { clients.allSatisfy { $0.events >= 1 } })
        return clients
    }

    /// Whether every client holds its query's rows as PostgreSQL has them now.
    func converged(_ clients: [RotatingClient], on store: any OrderStore) async throws -> Bool {
        for (index, client) in clients.enumerated() where try await client.rows != store.fetch(specs[index % specs.count]) { return false }
        return true
    }

    @Test func clientsOnEveryNodeConvergeWithWritesThroughEveryNode() async throws {
        let nodes = try await cluster()
        let clients = await connect(6, to: nodes)
        var generator = SplitMix64(seed: 35)
        try await write(0..<150, through: nodes, using: &generator)
        #expect(try await eventually { try await converged(clients, on: nodes[0].store) })
        // Each node counted every commit, its own and the other's.
        #expect(await eventually { nodes[0].store.lastCommit.version == nodes[1].store.lastCommit.version })
        for client in clients { await client.disconnect() }
        for node in nodes { await node.stop() }
    }

    /// What is lost when a node dies: nothing a client was told; its clients reconnect to the
    /// other node, get a fresh initial event there, and follow the commits from then on.
    @Test func clientsOfAKilledNodeReconnectToAnotherAndConverge() async throws {
        let nodes = try await cluster()
        let clients = await connect(6, to: nodes)
        var generator = SplitMix64(seed: 36)
        try await write(0..<50, through: nodes, using: &generator)
        await nodes[0].stop()
        try await write(50..<120, through: [nodes[1]], using: &generator)
        #expect(try await eventually { try await converged(clients, on: nodes[1].store) })
        // The killed node's clients (every other one) moved to the survivor.
        #expect(clients.enumerated().allSatisfy { $0.offset % 2 == 1 || $0.element.connectionCount >= 2 })
        for client in clients { await client.disconnect() }
        await nodes[1].stop()
    }

    /// What is lost when PostgreSQL restarts: notifications of commits made while a node was
    /// not listening, which the node makes up for by reading every query again when its
    /// listener reconnects; clients stay connected and see at most a delay.
    @Test func nodesReconnectAfterPostgresRestartsAndClientsConverge() async throws {
        let url = try ownPostgres("start")
        defer { try? ownPostgres("stop") }
        let first = try await RunningService(.postgres, seed: 400, location: url)
        let nodes = [first, try await RunningService(.postgres, seed: 400, location: url)]
        let clients = await connect(4, to: nodes)
        var generator = SplitMix64(seed: 37)
        try await write(0..<40, through: nodes, using: &generator)
        let listensBefore = nodes.map { ($0.store as! PostgresOrdersStore).listenCount }
        try ownPostgres("restart")
        // Writes as soon as the database takes them again (the pool reconnects by itself). Each
        // try has a deadline: once, the pool made no connection after the restart and a write
        // waited on it forever; the test must then fail, not hang.
        let written = await eventually(30) {
            (try? await withDeadline(.seconds(5)) { try await nodes[0].store.churn(changes: 2) }) != nil
        }
        #expect(written, "no write went through after the restart")
        guard written else { return }
        try await write(40..<100, through: nodes, using: &generator)
        #expect(await eventually(30) { zip(nodes, listensBefore).allSatisfy { ($0.store as! PostgresOrdersStore).listenCount > $1 } })
        #expect(try await eventually(30) { try await converged(clients, on: nodes[0].store) })
        #expect(clients.allSatisfy { $0.connectionCount == 1 })
        for client in clients { await client.disconnect() }
        for node in nodes { await node.stop() }
    }

    /// What is lost when a node's path to PostgreSQL dies silently and comes back (no reset
    /// and no end: bytes just vanish, as through a firewall that dropped its state): nothing.
    /// The node's listener notices within seconds (its heartbeat has a deadline), its reads
    /// give up at theirs, and once the path is back it connects again, reads every query
    /// again, and its clients, still connected to it, converge.
    @Test func aNodeCutOffSilentlyFromPostgresRecoversAndItsClientsConverge() async throws {
        let direct = try await RunningService(.postgres, seed: 400)
        let relay = try CuttableRelay(to: URLComponents(string: direct.location)!.port!)
        defer { relay.stop() }
        let cutOff = try await RunningService(.postgres, seed: 400, location: relay.relaying(direct.location))
        let nodes = [cutOff, direct]
        let clients = await connect(4, to: nodes) // clients 0 and 2 on the node that is cut off
        var generator = SplitMix64(seed: 38)
        try await write(0..<30, through: nodes, using: &generator)
        #expect(try await eventually { try await converged(clients, on: direct.store) })
        let listensBefore = (cutOff.store as! PostgresOrdersStore).listenCount
        relay.cut()
        try await write(30..<60, through: [direct], using: &generator)
        // A write through the cut-off node is answered, at its deadline (which is past the
        // heartbeat's), with a 503 rather than left waiting.
        let (status, answer) = try await cutOff.http("POST", "/api/churn?changes=1") // (the test nodes run without tokens)
        #expect(status == 503, "\(answer)")
        relay.restore()
        try await write(60..<90, through: [direct], using: &generator)
        #expect(await eventually(40) { (cutOff.store as! PostgresOrdersStore).listenCount > listensBefore })
        #expect(try await eventually(40) { try await converged(clients, on: direct.store) })
        #expect(clients.allSatisfy { $0.connectionCount == 1 })
        for client in clients { await client.disconnect() }
        await direct.stop()
        relay.stop() // the cut-off node's connections end only with the relay
        await cutOff.stop()
    }

    /// Runs `scripts/postgres.sh COMMAND` on the restart test's own server (port 54333, its
    /// own folder), so that restarting it disturbs no other test; returns what it printed.
    /// Spawned and reaped by hand: Foundation's `Process` never saw this child exit here (it
    /// stayed a zombie, and `waitUntilExit` and the termination handler waited forever).
    @discardableResult
    func ownPostgres(_ command: String) throws -> String {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../../scripts/postgres.sh").standardized
        let output = NSTemporaryDirectory() + "postgres-\(UUID().uuidString).out"
        var environment = ProcessInfo.processInfo.environment
        environment["PG_PORT"] = "54333"
        environment["PG_DIR"] = NSTemporaryDirectory() + "diffengine-postgres-restart-test"
        let arguments = ["/bin/bash", "-c", "bash \"$0\" \"$1\" > \"$2\"", script.path, command, output]
        var argv = arguments.map { strdup($0) } + [nil]
        var envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, "/bin/bash", nil, nil, &argv, &envp) == 0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        #expect(status == 0, "postgres.sh \(command)")
        defer { try? FileManager.default.removeItem(atPath: output) }
        return (try? String(contentsOfFile: output, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }
}

/// A small seeded generator: the same writes every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

