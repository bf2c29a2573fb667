import DiffEngine
import Foundation
import HummingbirdCore
import JWTKit
@testable import LiveQueryServiceKit
import Testing

/// Who may see what: tokens, the scope the server adds, refusals, and a token's lifetime.
@Suite(.serialized) struct AccessTests {
    static let secret = Array(String(repeating: "the access tests' secret ", count: 3).utf8) // 75 bytes: HS512 forgeries need 64

    /// Over a random run of writes by several customers (and an admin's churn), no event a
    /// customer's client receives ever holds another customer's order (checked on every event),
    /// every client ends at its scoped rows, and clients of one customer and query share one
    /// observation.
    @Test(arguments: StoreKind.allCases)
    func everyEventACustomerReceivesHoldsOnlyItsOwnOrders(_ kind: StoreKind) async throws {
        let service = try await RunningService(kind, seed: 200, secret: Self.secret)
        let customers = ["alice", "bob", "carol"]
        var tokens: [String: String] = [:]
        for customer in customers { tokens[customer] = try await service.token(.customer(customer)) }
        let admin = try await service.token(.admin)
        for customer in customers {
            for _ in 0..<4 {
                #expect(try await service.http("POST", "/api/orders", "{\"status\":\"open\",\"amount\":100}", token: tokens[customer]).0 == 200)
            }
        }
        let recent = "orderBy=updated_at&descending=true&limit=20"
        let clients: [(customer: String?, query: String, client: MirrorClient)] = [
            ("alice", recent, MirrorClient(port: service.port, query: recent, token: tokens["alice"])),
            ("alice", recent, MirrorClient(port: service.port, query: recent, token: tokens["alice"])),
            ("bob", "status=open&orderBy=amount&limit=20", MirrorClient(port: service.port, query: "status=open&orderBy=amount&limit=20", token: tokens["bob"])),
            ("carol", "customer=carol&" + recent, MirrorClient(port: service.port, query: "customer=carol&" + recent, token: tokens["carol"])),
            (nil, recent, MirrorClient(port: service.port, query: recent, token: admin)),
        ]
        #expect(await eventually { clients.allSatisfy { $0.client.received.count >= 1 } })
        // alice's two clients share one query; the admin's same query is another.
        #expect(await service.server.hub.activeQueryCount == 4)

        var generator = SplitMix64(seed: 91)
        for step in 0..<120 {
            let customer = customers[Int(generator.next() % 3)]
            let token = tokens[customer]
            let all = try await service.store.fetchAll()
            let own = all.filter { $0.customer == customer }, others = all.filter { $0.customer != customer }
            switch generator.next() % 6 {
            case 0:
                #expect(try await service.http("POST", "/api/orders", "{\"status\":\"open\",\"amount\":\(generator.next() % 9_999)}", token: token).0 == 200)
            case 1, 2:
                if let order = own.randomElement(using: &generator) {
                    let status = Order.statuses[Int(generator.next() % 4)]
                    #expect(try await service.http("PATCH", "/api/orders/\(order.id)", "{\"status\":\"\(status)\"}", token: token).0 == 200)
                }
            case 3:
                if let order = own.randomElement(using: &generator) {
                    #expect(try await service.http("DELETE", "/api/orders/\(order.id)", token: token).0 == 200)
                }
            case 4:
                // Another customer's order: refused, and left as it was.
                let order = try #require(others.randomElement(using: &generator))
                #expect(try await service.http("PATCH", "/api/orders/\(order.id)", "{\"amount\":1}", token: token).0 == 403)
                #expect(try await service.http("DELETE", "/api/orders/\(order.id)", token: token).0 == 403)
                #expect(try await service.store.fetchAll().first { $0.id == order.id } == order)
            default:
                #expect(try await service.http("POST", "/api/churn?changes=5", token: admin).0 == 200)
            }
        }
        for (customer, query, mirror) in clients {
            var spec = try QuerySpec.parse(parameters: URI("/live?" + query).queryParameters)
            spec.customer = customer ?? spec.customer
            let expected = try await service.expected(spec)
            #expect(await eventually { mirror.rows == expected }, "\(customer ?? "admin") \(query)")
        }
        for (customer, _, mirror) in clients {
            guard let customer else { continue }
            var replay = LiveMirror()
            for message in mirror.received {
                let event = try #require(try JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any])
                let rows = try #require(event["rows"] as? [String: [String: Any]])
                #expect(rows.values.allSatisfy { $0["customer"] as? String == customer }, "an event to \(customer): \(message)")
                try replay.apply(Array(message.utf8))
                #expect(replay.rows.allSatisfy { $0.customer == customer })
            }
            #expect(mirror.received.count > 1)
        }
        for (_, _, mirror) in clients { await mirror.disconnect() }
        await service.stop()
    }

    /// Every token that must not let a request in gets 401 and a one-line JSON error on the
    /// write API, and the error and a close with code 4401 on a live query's socket, whether
    /// the token comes as a header or as `access_token`; none gets a 500.
    @Test(arguments: StoreKind.allCases)
    func hostileTokensAreRefused(_ kind: StoreKind) async throws {
        let service = try await RunningService(kind, seed: 20, secret: Self.secret)
        let valid = try await service.token(.customer("alice"))
        let adminClaims = base64URL(Data("{\"role\":\"admin\",\"exp\":\(Int(Date().timeIntervalSince1970) + 600)}".utf8))
        let parts = valid.split(separator: ".").map(String.init)
        let sameKey = JWTKeyCollection()
        await sameKey.add(hmac: HMACKey(from: Self.secret), digestAlgorithm: .sha256)
        let sha512 = JWTKeyCollection()
        await sha512.add(hmac: HMACKey(from: Self.secret), digestAlgorithm: .sha512)
        let later = Date(timeIntervalSinceNow: 600)
        let tokens: [(String, String?)] = [
            ("missing", nil),
            ("empty", ""),
            ("not a JWT", "garbage"),
            ("three empty parts", ".."),
            ("parts not base64", "a.b.c"),
            ("tampered payload", parts[0] + "." + adminClaims + "." + parts[2]),
            ("no signature", parts[0] + "." + parts[1] + "."),
            ("alg none", base64URL(Data("{\"alg\":\"none\",\"typ\":\"JWT\"}".utf8)) + "." + adminClaims + "."),
            ("another key", try await Authenticator(secret: Array(String(repeating: "another secret ", count: 4).utf8)).token(for: .admin, expires: later)),
            ("HS512 with the same secret", try await sha512.sign(AccessClaims(role: "admin", customer: nil, expires: later))),
            ("expired", try await service.server.authenticator.token(for: .admin, expires: Date(timeIntervalSinceNow: -60))),
            ("not yet valid", try await service.server.authenticator.token(for: .admin, expires: later, notBefore: Date(timeIntervalSinceNow: 600))),
            ("unknown role", try await sameKey.sign(AccessClaims(role: "root", customer: nil, expires: later))),
            ("customer without a customer", try await sameKey.sign(AccessClaims(role: "customer", customer: nil, expires: later))),
            ("oversized", valid + String(repeating: "A", count: 5_000)),
            ("claims not an object", parts[0] + "." + base64URL(Data("[1,2,3]".utf8)) + "." + parts[2]),
        ]
        let before = try await service.store.fetchAll()
        for (name, token) in tokens {
            for (method, path, body) in [("GET", "/api/status", nil), ("POST", "/api/churn?changes=3", nil),
                                         ("POST", "/api/orders", "{\"customer\":\"x\",\"status\":\"open\",\"amount\":5}"),
                                         ("DELETE", "/api/orders/1", nil)] {
                let (status, object) = try await service.http(method, path, body, token: token)
                #expect(status == 401, "\(name): \(method) \(path)")
                #expect(object["error"] is String, "\(name)")
            }
            // On a live query: the upgrade is refused with the same answer, as a header or a parameter.
            var headers: [String: String] = [:]
            if let token { headers["Authorization"] = "Bearer \(token)" }
            let byHeader = await readUntilServerCloses(port: service.port, target: "/live?limit=5", headers: headers)
            let byParameter = await readUntilServerCloses(port: service.port, target: "/live?limit=5" + (token.map { "&access_token=\($0)" } ?? ""))
            for transcript in [byHeader, byParameter] {
                #expect(transcript.texts.count == 1 && transcript.texts[0].hasPrefix("{\"error\":\"") && !transcript.texts[0].contains("\n"),
                        "\(name): \(transcript.texts)")
                #expect(transcript.closeCode == 4401 && transcript.closedByServer, "\(name)")
            }
        }
        for header in ["Basic YWxpY2U6c2VjcmV0", "Bearer", "bearer  ", valid] {
            let transcript = await readUntilServerCloses(port: service.port, target: "/live?limit=5", headers: ["Authorization": header])
            #expect(transcript.closeCode == 4401, "Authorization: \(header)")
            let (status, _) = try await service.http("GET", "/api/status", rawAuthorization: header)
            #expect(status == 401, "Authorization: \(header)")
        }
        #expect(try await service.store.fetchAll() == before)
        await service.stop()
    }

    /// A customer token asking for another customer's orders is refused (403), not narrowed;
    /// values crafted as SQL are values, and writes to other customers' orders change nothing.
    @Test(arguments: StoreKind.allCases)
    func aCustomerCannotReachAnotherCustomersOrders(_ kind: StoreKind) async throws {
        let service = try await RunningService(kind, seed: 50, secret: Self.secret)
        let alice = try await service.token(.customer("alice"))
        let admin = try await service.token(.admin)
        let (created, order) = try await service.http("POST", "/api/orders", "{\"customer\":\"bob\",\"status\":\"open\",\"amount\":10}", token: admin)
        #expect(created == 200)
        let bobsOrder = try #require(order["id"] as? Int)
        let before = try await service.store.fetchAll()
        for query in ["customer=bob", "customer=alice'%20OR%20'1'='1", "customer=alice%22%20OR%201=1%20--", "customer="] {
            let transcript = await readUntilServerCloses(port: service.port, target: "/live?\(query)&access_token=\(alice)")
            #expect(transcript.texts == ["{\"error\":\"a customer token sees only its own orders\"}"], "\(query)")
            #expect(transcript.closeCode == 4403 && transcript.closedByServer, "\(query)")
        }
        let writes: [(String, String, String?)] = [
            ("PATCH", "/api/orders/\(bobsOrder)", "{\"amount\":1}"),
            ("DELETE", "/api/orders/\(bobsOrder)", nil),
            ("POST", "/api/orders", "{\"customer\":\"bob\",\"status\":\"open\",\"amount\":5}"),
            ("POST", "/api/churn?changes=5", nil),
        ]
        for (method, path, body) in writes {
            let (status, object) = try await service.http(method, path, body, token: alice)
            #expect(status == 403, "\(method) \(path)")
            #expect(object["error"] is String)
        }
        // alice cannot give her own order away either.
        let (_, mine) = try await service.http("POST", "/api/orders", "{\"status\":\"open\",\"amount\":5}", token: alice)
        let aliceOrder = try #require(mine["id"] as? Int)
        #expect(mine["customer"] as? String == "alice")
        #expect(try await service.http("PATCH", "/api/orders/\(aliceOrder)", "{\"customer\":\"bob\"}", token: alice).0 == 403)
        #expect(try await service.store.fetchAll().filter { $0.id != Int64(aliceOrder) } == before)
        // A customer whose name is crafted as SQL sees the orders of that name: none.
        let crafted = try await service.token(.customer("x' OR '1'='1"))
        let transcript = await readUntilServerCloses(port: service.port, target: "/live?limit=50&access_token=\(crafted)", seconds: 2)
        #expect(transcript.status == 101)
        #expect(transcript.texts.first?.contains("\"count\":0,") == true, "\(transcript.texts)")
        await service.stop()
    }

    /// A token that expires while subscribed ends the subscription with an error event and a
    /// close; a new token resumes with a fresh initial event.
    @Test func anExpiringTokenEndsItsSubscription() async throws {
        let service = try await RunningService(.sqlite, seed: 30, secret: Self.secret)
        let short = try await service.token(.customer("customer 7"), seconds: 2)
        let ended = await readUntilServerCloses(port: service.port, target: "/live?limit=5&access_token=\(short)")
        #expect(ended.status == 101)
        #expect(ended.texts.first?.hasPrefix("{\"isInitial\":true") == true)
        #expect(ended.texts.last == "{\"error\":\"the access token expired; connect again with a new one\"}")
        #expect(ended.closeCode == 4401 && ended.closedByServer)
        let renewed = try await service.token(.customer("customer 7"))
        let resumed = await readUntilServerCloses(port: service.port, target: "/live?limit=5&access_token=\(renewed)", seconds: 2)
        #expect(resumed.texts.first?.hasPrefix("{\"isInitial\":true") == true)
        #expect(await eventually { await service.server.hub.activeQueryCount == 0 })
        await service.stop()
    }

    /// The secret is refused when too short to protect anything.
    @Test func aShortSecretIsRefused() async throws {
        await #expect(throws: WriteError.self) { try await Authenticator(secret: Array("short".utf8)) }
    }
}

/// Base64url without padding, as JWTs encode their parts.
func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
