import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the server sent on one WebSocket connection, read off a plain socket.
///
/// Connections the server ends by itself (a bad query) are checked this way rather than with
/// a WebSocket client library, so the check sees the bytes on the wire and does not depend on
/// how a client library copes with a socket closed right after its upgrade.
struct WireTranscript: Sendable {
    /// The HTTP status of the upgrade response (101 when the upgrade went through).
    var status = 0
    /// The text messages, in order.
    var texts: [String] = []
    /// The code of the server's close frame, if it sent one.
    var closeCode: Int?
    /// Whether the server closed the TCP connection before the deadline.
    var closedByServer = false
}

/// Opens `ws://127.0.0.1:port/target` (with `headers` on the upgrade request), answers the
/// server's close frame as a client must, and reads until the server closes the connection or
/// `seconds` pass without a byte.
func readUntilServerCloses(port: Int, target: String, headers: [String: String] = [:], seconds: Int = 20) async -> WireTranscript {
    await withCheckedContinuation { continuation in
        // A thread of its own: the blocking reads must not hold a thread of the cooperative
        // pool the server's handlers run on.
        Thread {
            continuation.resume(returning: blockingReadUntilServerCloses(port: port, target: target, headers: headers, seconds: seconds))
        }.start()
    }
}

private func blockingReadUntilServerCloses(port: Int, target: String, headers: [String: String], seconds: Int) -> WireTranscript {
    var transcript = WireTranscript()
    #if canImport(Darwin)
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #else
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #endif
    guard fd >= 0 else { return transcript }
    defer { close(fd) }
    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { return transcript }
    let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    let request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        + headers.map { "\($0.key): \($0.value)\r\n" }.joined() + "\r\n"
    guard sendAll(fd, Array(request.utf8)) else { return transcript }

    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var headerEnd: Int?
    var frameStart = 0
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { transcript.closedByServer = true; return transcript }
        if count < 0 { return transcript } // the deadline passed, or the connection broke
        received += buffer[0..<count]
        if headerEnd == nil, let end = indexAfterHeaders(received) {
            headerEnd = end
            frameStart = end
            let statusLine = String(decoding: received[0..<end], as: UTF8.self).split(separator: " ")
            transcript.status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
        }
        guard headerEnd != nil else { continue }
        // Server frames are unmasked: opcode, length (7, 16 or 64 bits), payload.
        while let (opcode, payload, next) = nextFrame(received, from: frameStart) {
            frameStart = next
            switch opcode {
            case 0x1: transcript.texts.append(String(decoding: payload, as: UTF8.self))
            case 0x8:
                transcript.closeCode = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil
                // A client's close reply is masked; an empty one with a zero mask will do.
                _ = sendAll(fd, [0x88, 0x80, 0, 0, 0, 0])
            default: break
            }
        }
    }
}

private func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var sent = 0
    while sent < bytes.count {
        let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        sent += count
    }
    return true
}

private func indexAfterHeaders(_ bytes: [UInt8]) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for index in 3..<bytes.count where bytes[index - 3] == 13 && bytes[index - 2] == 10 && bytes[index - 1] == 13 && bytes[index] == 10 {
        return index + 1
    }
    return nil
}

private func nextFrame(_ bytes: [UInt8], from start: Int) -> (opcode: UInt8, payload: [UInt8], next: Int)? {
    guard bytes.count >= start + 2 else { return nil }
    var length = Int(bytes[start + 1] & 0x7f)
    var offset = start + 2
    if length == 126 {
        guard bytes.count >= offset + 2 else { return nil }
        length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
        offset += 2
    } else if length == 127 {
        guard bytes.count >= offset + 8 else { return nil }
        length = bytes[offset..<offset + 8].reduce(0) { $0 << 8 | Int($1) }
        offset += 8
    }
    guard bytes.count >= offset + length else { return nil }
    return (bytes[start] & 0x0f, Array(bytes[offset..<offset + length]), offset + length)
}
