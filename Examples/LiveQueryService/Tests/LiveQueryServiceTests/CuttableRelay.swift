import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on a loopback port to a server's port, whose path can be cut silently: as a
/// firewall that drops its state or a pulled cable, and unlike a server that stops, a cut
/// sends no reset and no end: bytes sent either way just vanish. `cut()` kills every
/// connection relayed so far, and every connection accepted until `restore()`; connections
/// made after `restore()` are relayed again, while the cut ones stay dead, as TCP
/// connections whose path died do.
final class CuttableRelay: @unchecked Sendable {
    /// One relayed connection: its two sockets, and whether its path is cut (under the
    /// relay's lock).
    private final class Link: @unchecked Sendable {
        let client: Int32
        var server: Int32 = -1
        var cut: Bool
        init(client: Int32, cut: Bool) {
            self.client = client
            self.cut = cut
        }
    }

    let port: Int
    private let serverPort: Int
    private let listener: Int32
    private let lock = NSLock()
    private var cutting = false
    private var links: [Link] = []

    /// Listens on 127.0.0.1 (a port of the system's choice) and relays to 127.0.0.1:`serverPort`.
    init(to serverPort: Int) throws {
        self.serverPort = serverPort
        let socketHandle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketHandle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard socketHandle >= 0, bound == 0, listen(socketHandle, 64) == 0 else { throw RelayError("cannot listen on a loopback port") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketHandle, $0, &length) }
        }
        listener = socketHandle
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in accepting() }
    }

    /// `url` (a `postgres://` URL) with its port replaced by the relay's.
    func relaying(_ url: String) -> String {
        var components = URLComponents(string: url)!
        components.port = port
        return components.string!
    }

    /// Cuts every connection's path, and the paths of connections accepted from now on.
    func cut() {
        lock.withLock {
            cutting = true
            for link in links { link.cut = true }
        }
    }

    /// Relays new connections again; the cut ones stay dead.
    func restore() {
        lock.withLock { cutting = false }
    }

    /// Closes the relay and every connection (threads blocked on a socket wake on its shutdown).
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        lock.withLock {
            for link in links {
                shutdown(link.client, Int32(SHUT_RDWR))
                if link.server >= 0 { shutdown(link.server, Int32(SHUT_RDWR)) }
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func accepting() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            let link = lock.withLock { () -> Link in
                let link = Link(client: client, cut: cutting)
                links.append(link)
                return link
            }
            // A connection accepted while cut is held open and never answered.
            if link.cut { continue }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: serverPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            lock.withLock { link.server = server }
            guard connected == 0 else {
                shutdown(client, Int32(SHUT_RDWR))
                continue
            }
            Thread.detachNewThread { [self] in pump(from: client, to: server, link) }
            Thread.detachNewThread { [self] in pump(from: server, to: client, link) }
        }
    }

    /// Copies bytes from one socket to the other until either ends, dropping them once the
    /// link is cut; a cut link passes no end on either.
    private func pump(from source: Int32, to destination: Int32, _ link: Link) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            if lock.withLock({ link.cut }) { continue }
            var written = 0
            while written < count {
                let result = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + written, count - written) }
                if result <= 0 { return }
                written += result
            }
        }
        if !lock.withLock({ link.cut }) {
            shutdown(destination, Int32(SHUT_RDWR))
            shutdown(source, Int32(SHUT_RDWR))
        }
    }

    struct RelayError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
