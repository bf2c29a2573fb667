import Foundation
import Hummingbird
import JWTKit
import NIOWebSocket

/// Who is asking, as the server enforces it: every query and write is scoped by it, whatever
/// the client asks for.
public enum Access: Sendable, Hashable {
    /// Sees and changes every order.
    case admin
    /// Sees and changes only the orders whose `customer` is this value.
    case customer(String)

    /// The customer whose orders this access is limited to (nil: all).
    public var owner: String? {
        if case .customer(let name) = self { return name }
        return nil
    }

    /// The query this access runs for `spec`: a customer's query gets the customer filter
    /// added when it has none; one asking for another customer's orders is refused (403),
    /// never silently narrowed, so a client cannot mistake someone else's empty page for its own.
    public func scope(_ spec: QuerySpec) throws(AccessDenied) -> QuerySpec {
        guard let owner else { return spec }
        if let asked = spec.customer, asked != owner {
            throw AccessDenied(.forbidden, "a customer token sees only its own orders")
        }
        var scoped = spec
        scoped.customer = owner
        return scoped
    }

    /// Checks that this access may give an order the customer `customer` (nil: unchanged).
    public func mayAssign(customer: String?) throws(AccessDenied) {
        guard let owner, let customer, customer != owner else { return }
        throw AccessDenied(.forbidden, "a customer token writes only its own orders")
    }
}

/// A request refused for who is asking: 401 when it has no valid token, 403 when its token
/// may not do what it asks. The response is a one-line JSON error; on a live query's socket,
/// that error as a message and then a close with code 4401 or 4403.
public struct AccessDenied: HTTPResponseError, Sendable {
    public let status: HTTPResponse.Status
    public let message: String

    public init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response { response }

    /// The close code of a live query's socket refused this way: 4000 plus the HTTP status.
    public var closeCode: WebSocketErrorCode { .unknown(4_000 + UInt16(status.code)) }

    /// The refusal as a response: the status, a one-line JSON error and, for a 401, the scheme expected.
    var response: Response {
        var response = json(status, errorJSON(message))
        if status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer" }
        return response
    }
}

/// What a valid token grants: its access and when it ends.
public struct Grant: Sendable {
    public var access: Access
    /// When the token expires (nil: never, only without authentication).
    public var expires: Date?
}

/// The claims of an access token: `role` (`customer` or `admin`), `customer` (a customer
/// token's customer), `exp` and optionally `nbf` (seconds since 1970).
public struct AccessClaims: JWTPayload {
    public var role: String
    public var customer: String?
    public var exp: ExpirationClaim
    public var nbf: NotBeforeClaim?

    /// Claims for `role`; the times are cut to whole seconds, as JWTs usually carry them.
    public init(role: String, customer: String?, expires: Date, notBefore: Date? = nil) {
        func seconds(_ date: Date) -> Date { Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)) }
        self.role = role
        self.customer = customer
        exp = ExpirationClaim(value: seconds(expires))
        nbf = notBefore.map { NotBeforeClaim(value: seconds($0)) }
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        try nbf?.verifyNotBefore()
    }
}

/// Checks the access tokens of requests: JWTs signed with HS256 and the service's secret.
///
/// A request carries its token as `Authorization: Bearer TOKEN`, or, for a browser's
/// WebSocket (which cannot set headers), as the `access_token` URL parameter. A token is
/// refused (401) when it is missing, longer than `maximumTokenBytes`, not a JWT, signed with
/// another key or algorithm (`alg: none` included), expired or not yet valid, or when its
/// claims name no valid role.
///
/// `insecure` lets every request in as an admin: the open demo, for local use only.
public struct Authenticator: Sendable {
    private let keys: JWTKeyCollection?

    /// The longest token read; a longer one is refused before it is parsed.
    public static let maximumTokenBytes = 4_096
    /// The shortest secret accepted: HS256 with a guessable key is no protection.
    public static let minimumSecretBytes = 32

    /// Lets every request in, as an admin.
    public static let insecure = Authenticator(keys: nil)

    /// Whether requests are let in without a token.
    public var isInsecure: Bool { keys == nil }

    private init(keys: JWTKeyCollection?) {
        self.keys = keys
    }

    /// Checks tokens signed with `secret` (at least `minimumSecretBytes` bytes).
    public init(secret: [UInt8]) async throws(WriteError) {
        guard secret.count >= Self.minimumSecretBytes else {
            throw WriteError("the token secret must be at least \(Self.minimumSecretBytes) bytes")
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        self.keys = keys
    }

    /// What `request`'s token grants, or a 401.
    public func authenticate(_ request: Request) async throws(AccessDenied) -> Grant {
        try await authenticate(token: Self.token(of: request))
    }

    /// What `token` grants (nil: the request had none), or a 401.
    public func authenticate(token: Substring?) async throws(AccessDenied) -> Grant {
        guard let keys else { return Grant(access: .admin, expires: nil) }
        guard let token, !token.isEmpty else { throw AccessDenied(.unauthorized, "an access token is required") }
        guard token.utf8.count <= Self.maximumTokenBytes else {
            throw AccessDenied(.unauthorized, "the access token is longer than \(Self.maximumTokenBytes) bytes")
        }
        let claims: AccessClaims
        do {
            claims = try await keys.verify(Array(token.utf8), as: AccessClaims.self)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure {
            throw AccessDenied(.unauthorized, "the access token is expired or not yet valid")
        } catch {
            throw AccessDenied(.unauthorized, "the access token is not valid")
        }
        return Grant(access: try Self.access(claims), expires: claims.exp.value)
    }

    /// The access a verified token's claims name, or a 401.
    static func access(_ claims: AccessClaims) throws(AccessDenied) -> Access {
        switch (claims.role, claims.customer) {
        case ("admin", _):
            return .admin
        case ("customer", let customer?) where !customer.isEmpty && customer.utf8.count <= 200:
            return .customer(customer)
        default:
            throw AccessDenied(.unauthorized, "the access token's role must be admin, or customer with a customer of 1-200 bytes")
        }
    }

    /// The token a request carries: `Authorization: Bearer …`, else the `access_token` parameter.
    static func token(of request: Request) throws(AccessDenied) -> Substring? {
        if let header = request.headers[.authorization] {
            guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
                throw AccessDenied(.unauthorized, "the Authorization header must be: Bearer TOKEN")
            }
            return header.dropFirst(7)
        }
        return request.uri.queryParameters.get("access_token").map { Substring($0) }
    }

    /// A token for `access`, valid from `notBefore` (nil: now) until `expires`, signed with
    /// this authenticator's secret (for tools and tests; nil when insecure).
    public func token(for access: Access, expires: Date, notBefore: Date? = nil) async throws -> String? {
        guard let keys else { return nil }
        let claims = switch access {
        case .admin: AccessClaims(role: "admin", customer: nil, expires: expires, notBefore: notBefore)
        case .customer(let name): AccessClaims(role: "customer", customer: name, expires: expires, notBefore: notBefore)
        }
        return try await keys.sign(claims)
    }
}
