import Foundation
import Hummingbird
import LiveQueryServiceKit
import NIOCore

/// The secret the corpus's valid tokens are signed with (`fuzz/corpus/access/valid-*`, made
/// with `live-query-service token --token-secret-file` on a file holding these bytes).
public let fuzzSecret = Array("the live-query service's fuzzing secret: corpus tokens use it!!".utf8)

/// The accesses the corpus's valid tokens grant: no other may ever be granted.
let knownAccesses: Set<Access> = [.admin, .customer("alice"), .customer("x' OR '1'='1")]

let authenticator = blockingAwait { try! await Authenticator(secret: fuzzSecret) }

/// One input: an `Authorization` header value, a NUL byte, then a live query's URL query
/// string (without a NUL, all of it is the header). Checks what the server decides before
/// it lets a client in:
/// - a token either grants one of the corpus's accesses (a valid token, perhaps re-encoded)
///   or is refused with 401 and a one-line message, never anything else;
/// - the parameters either give a query within its limits or a one-line error;
/// - a customer's scope either is its own orders or a 403, and an admin's is the query asked.
public func fuzzAccess(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let split = bytes.firstIndex(of: 0)
    let header = String(decoding: bytes[..<(split ?? bytes.count)], as: UTF8.self)
    let query = split.map { String(decoding: bytes[($0 + 1)...], as: UTF8.self) } ?? ""
    var fields = HTTPFields()
    if !header.isEmpty { fields[.authorization] = header }
    let request = Request(head: HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: "/live?" + query,
                                            headerFields: fields),
                          body: RequestBody(buffer: ByteBuffer()))
    let outcome: Result<Grant, AccessDenied> = blockingAwait {
        do throws(AccessDenied) { return .success(try await authenticator.authenticate(request)) } catch { return .failure(error) }
    }
    switch outcome {
    case .success(let grant):
        precondition(knownAccesses.contains(grant.access), "a token granted \(grant.access): \(header)")
    case .failure(let refusal):
        precondition(refusal.status == .unauthorized, "a token refused with \(refusal.status)")
        precondition(!refusal.message.isEmpty && !refusal.message.contains("\n"))
    }
    let spec: QuerySpec
    do {
        spec = try QuerySpec.parse(parameters: request.uri.queryParameters)
    } catch {
        precondition(!error.message.isEmpty && !error.message.contains("\n"))
        return
    }
    precondition((1...1_000).contains(spec.limit) && ["updated_at", "amount", "id"].contains(spec.orderBy))
    precondition(spec.status.map { Order.statuses.contains($0) } ?? true)
    for access in knownAccesses {
        do {
            let scoped = try access.scope(spec)
            precondition(scoped.customer == (access.owner ?? spec.customer), "\(access) scoped \(spec) to \(scoped)")
            precondition(scoped.status == spec.status && scoped.limit == spec.limit && scoped.orderBy == spec.orderBy)
        } catch {
            precondition(error.status == .forbidden && access.owner != nil && spec.customer != access.owner)
        }
    }
}

/// Runs `body` to its end from synchronous code (libFuzzer calls the harness on its own thread).
func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>(), done = DispatchSemaphore(value: 0)
    Task {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// A value handed from a task to the thread waiting for it (the semaphore orders the two).
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
