import CEpoll
import Foundation

/// The load test's WebSocket clients: every client's socket on one thread that waits on
/// epoll and reads the service's frames straight from its buffers.
///
/// The clients share the two cores with the nodes and PostgreSQL while latency is measured,
/// so what they cost is latency the report would blame on the service: through async
/// streams on an event loop, receiving 27,000 events a second took this process one whole
/// core. Here a frame costs a `recv` and a scan of its header. It speaks only what the
/// service sends: an HTTP/1.1 upgrade answered with 101, then unmasked frames (text frames
/// are messages, fragmented or not; pings are answered; a close ends the connection).
final class LoopbackWebSockets: @unchecked Sendable {
    /// What a client asks for: its request path (query string included) and extra header lines.
    struct Request {
        var path: String
        var headers: [String]
    }

    private struct Client {
        var fd: Int32 = -1
        var node: Int
        var connecting = false
        var upgraded = false
        var received: [UInt8] = []
        var message: [UInt8] = []
        /// When to (re)connect, in `milliseconds()`; nil while connected.
        var connectAt: Double? = 0
        var failures = 0
    }

    private let ports: [Int]
    private let requests: [Request]
    private var clients: [Client]
    private let epoll: Int32
    private let stopLock = NSLock()
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    /// Called on the clients' thread with each client's messages, in order.
    private let onMessage: (_ client: Int, _ message: [UInt8]) -> Void
    /// Called when a client lost its node (closed, refused or failed), before it tries the next.
    private let onLost: (_ client: Int) -> Void
    /// Called when a client gave up (no node took it after `maximumFailures` tries).
    private let onGaveUp: (_ client: Int) -> Void
    static let maximumFailures = 50
    /// Frames larger than this end the connection as a failure.
    static let maximumMessage = 64 << 20

    /// Client `i` connects to node `i % ports.count` and moves to the next node each time it
    /// loses one. Nothing runs until `start()`.
    init(ports: [Int], requests: [Request],
         onMessage: @escaping (Int, [UInt8]) -> Void, onLost: @escaping (Int) -> Void,
         onGaveUp: @escaping (Int) -> Void) {
        self.ports = ports
        self.requests = requests
        clients = requests.indices.map { Client(node: $0 % ports.count) }
        epoll = epoll_create1(0)
        precondition(epoll >= 0, "live-query-load: epoll_create1 failed (errno \(errno))")
        self.onMessage = onMessage
        self.onLost = onLost
        self.onGaveUp = onGaveUp
    }

    /// Starts the clients' thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Stops the thread and closes every socket; returns once it has.
    func stop() {
        stopLock.withLock { stopping = true }
        finished.wait()
    }

    private var isStopping: Bool { stopLock.withLock { stopping } }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var waiting = Array(clients.indices) // clients with a connectAt
        while !isStopping {
            let now = milliseconds()
            var stillWaiting: [Int] = []
            for index in waiting {
                if let due = clients[index].connectAt, due <= now { connect(index) }
                if clients[index].connectAt != nil { stillWaiting.append(index) }
            }
            waiting = stillWaiting
            let ready = epoll_wait(epoll, &events, Int32(events.count), 10)
            guard ready > 0 else { continue }
            for event in events[..<Int(ready)] {
                let index = Int(event.data.u32)
                guard clients[index].fd >= 0 else { continue }
                let alive = clients[index].connecting ? connected(index) : read(index, into: &chunk)
                if !alive {
                    lose(index)
                    waiting.append(index)
                }
            }
        }
        for index in clients.indices where clients[index].fd >= 0 { close(clients[index].fd) }
        close(epoll)
        finished.signal()
    }

    /// Starts connecting client `index` to its node without waiting (a node whose queue of
    /// connections is full must not hold the other clients); the upgrade is sent once the
    /// socket is writable. On failure it waits its turn to try the next node.
    private func connect(_ index: Int) {
        let fd = loopbackSocket(port: ports[clients[index].node]) { fd in
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        guard fd >= 0 else { return failed(index) }
        var event = epoll_event()
        event.events = EPOLLOUT.rawValue
        event.data.u32 = UInt32(index)
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 else {
            close(fd)
            return failed(index)
        }
        clients[index].fd = fd
        clients[index].connecting = true
        clients[index].upgraded = false
        clients[index].received = []
        clients[index].message = []
        clients[index].connectAt = nil
    }

    /// Client `index`'s socket became writable while connecting: sends the upgrade request and
    /// waits for its answer. False when the connection failed.
    private func connected(_ index: Int) -> Bool {
        let fd = clients[index].fd
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0, error == 0 else { return false }
        let port = ports[clients[index].node]
        let request = requests[index]
        var head = "GET \(request.path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        for line in request.headers { head += line + "\r\n" }
        head += "\r\n"
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u32 = UInt32(index)
        clients[index].connecting = false
        return sendAll(fd, Array(head.utf8)) && epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) == 0
    }

    /// A failed attempt: the next node, after a moment, unless it has failed too often.
    private func failed(_ index: Int) {
        onLost(index)
        clients[index].failures += 1
        clients[index].node = (clients[index].node + 1) % ports.count
        if clients[index].failures >= Self.maximumFailures {
            clients[index].connectAt = nil
            onGaveUp(index)
        } else {
            clients[index].connectAt = milliseconds() + Double(50 + index % 100)
        }
    }

    /// Closes client `index`'s connection after its node closed it or it broke.
    private func lose(_ index: Int) {
        close(clients[index].fd) // also leaves the epoll set
        clients[index].fd = -1
        failed(index)
    }

    /// Reads what is there and hands over every whole message; false when the connection ended.
    private func read(_ index: Int, into chunk: inout [UInt8]) -> Bool {
        let fd = clients[index].fd
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                clients[index].received += chunk[..<count]
                if count < chunk.count { break }
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            if count < 0 && errno == EINTR { continue }
            _ = parse(index) // hand over what arrived whole before the end
            return false
        }
        return parse(index)
    }

    /// Takes every whole frame out of client `index`'s received bytes; false when the
    /// connection must end (refused upgrade, close frame, a frame it cannot read).
    private func parse(_ index: Int) -> Bool {
        let bytes = clients[index].received
        clients[index].received = []
        var offset = 0
        defer {
            if offset < bytes.count { clients[index].received = Array(bytes[offset...]) }
        }
        if !clients[index].upgraded {
            guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return bytes.count < 65_536 }
            guard bytes.starts(with: Array("HTTP/1.1 101".utf8)) else { return false }
            clients[index].upgraded = true
            offset = end.upperBound
        }
        while bytes.count - offset >= 2 {
            let first = bytes[offset], second = bytes[offset + 1]
            guard second & 0x80 == 0 else { return false } // a server's frames are never masked
            var length = Int(second & 0x7f), header = 2
            if length == 126 {
                guard bytes.count - offset >= 4 else { break }
                length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                header = 4
            } else if length == 127 {
                guard bytes.count - offset >= 10 else { break }
                length = (0..<8).reduce(0) { $0 << 8 | Int(bytes[offset + 2 + $1]) }
                header = 10
            }
            guard length >= 0, length <= Self.maximumMessage else { return false }
            guard bytes.count - offset - header >= length else { break }
            let payload = bytes[(offset + header)..<(offset + header + length)]
            offset += header + length
            let isFinal = first & 0x80 != 0
            switch first & 0x0f {
            case 0x1, 0x0: // text, or the continuation of a fragmented one
                if first & 0x0f == 0x1 { clients[index].message = [] }
                clients[index].message += payload
                guard clients[index].message.count <= Self.maximumMessage else { return false }
                if isFinal {
                    let message = clients[index].message
                    clients[index].message = []
                    onMessage(index, message)
                }
            case 0x8: return false // close
            case 0x9: // ping: a masked pong with its payload (mask 0: the payload as it is)
                guard payload.count <= 125 else { return false }
                _ = sendAll(clients[index].fd, [0x8a, 0x80 | UInt8(payload.count), 0, 0, 0, 0] + payload)
            default: break // binary frames and pongs: nothing the service sends the load
            }
        }
        return true
    }
}

/// Sends every byte on a blocking or non-blocking socket (waiting out a full buffer); false
/// when the connection failed.
func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written < 0 && (errno == EAGAIN || errno == EINTR) {
            usleep(100)
            continue
        }
        if written <= 0 { return false }
        offset += written
    }
    return true
}
