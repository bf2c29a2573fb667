import Foundation
import Hummingbird
import LiveQueryServiceKit

let usage = """
    usage: live-query-service [--host H] [--port P] [--database FILE|postgres://USER@HOST:PORT/DB] [--seed ROWS]
                              [--token-secret-file FILE | --insecure-no-auth] [--test-hooks]
           live-query-service token (--admin | --customer NAME) [--expires-in SECONDS] [--token-secret-file FILE]
    The token secret (at least 32 bytes) is read from --token-secret-file, else from LIVE_QUERY_TOKEN_SECRET.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("live-query-service: \(message)\n".utf8))
    exit(2)
}

/// The token secret: the file's bytes (without a final newline), else the environment's.
func tokenSecret(file: String?) -> [UInt8]? {
    if let file {
        guard var bytes = FileManager.default.contents(atPath: file).map(Array.init) else { fail("cannot read \(file)") }
        while bytes.last == UInt8(ascii: "\n") || bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return bytes
    }
    return ProcessInfo.processInfo.environment["LIVE_QUERY_TOKEN_SECRET"].map { Array($0.utf8) }
}

func authenticator(secretFile: String?) async -> Authenticator {
    guard let secret = tokenSecret(file: secretFile) else {
        fail("no token secret: give --token-secret-file FILE or LIVE_QUERY_TOKEN_SECRET (or --insecure-no-auth for a local demo)")
    }
    do {
        return try await Authenticator(secret: secret)
    } catch {
        fail(error.message)
    }
}

var arguments = CommandLine.arguments.dropFirst().makeIterator()

// `token`: prints an access token signed with the service's secret, for scripts and tests.
if CommandLine.arguments.dropFirst().first == "token" {
    _ = arguments.next()
    var access: Access?, expiresIn = 3_600.0, secretFile: String?
    while let argument = arguments.next() {
        switch argument {
        case "--admin": access = .admin
        case "--customer": access = arguments.next().map(Access.customer)
        case "--expires-in": expiresIn = arguments.next().flatMap(Double.init) ?? -1
        case "--token-secret-file": secretFile = arguments.next()
        default: fail("unknown argument \(argument)\n\(usage)")
        }
    }
    guard let access else { fail("token needs --admin or --customer NAME\n\(usage)") }
    guard expiresIn > 0 else { fail("--expires-in must be a positive number of seconds") }
    let token = try await authenticator(secretFile: secretFile).token(for: access, expires: Date(timeIntervalSinceNow: expiresIn))
    print(token ?? "")
    exit(0)
}

var host = "127.0.0.1", port = 8080, database = "orders.sqlite", seed = 10_000, testHooks = false
var secretFile: String?, insecure = false
while let argument = arguments.next() {
    switch argument {
    case "--host": host = arguments.next() ?? host
    case "--port": port = arguments.next().flatMap { Int($0) } ?? port
    case "--database": database = arguments.next() ?? database
    case "--seed": seed = arguments.next().flatMap { Int($0) } ?? seed
    case "--token-secret-file": secretFile = arguments.next()
    case "--insecure-no-auth": insecure = true
    case "--test-hooks": testHooks = true
    default: fail("unknown argument \(argument)\n\(usage)")
    }
}
if insecure && secretFile != nil { fail("--insecure-no-auth and --token-secret-file exclude each other") }
let access = insecure ? Authenticator.insecure : await authenticator(secretFile: secretFile)
if insecure {
    FileHandle.standardError.write(Data("""
        live-query-service: WARNING: --insecure-no-auth: every client that reaches this port sees and changes every order.
        live-query-service: WARNING: use it on your own machine only; give a token secret anywhere else.

        """.utf8))
}
let store: any OrderStore
do {
    if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
        store = try await PostgresOrdersStore(url: database, seedRows: seed)
    } else {
        store = try OrdersStore(path: database, seedRows: seed)
    }
} catch {
    fail("\(database): \(error)")
}
let server = LiveQueryServer(store: store, authenticator: access, testHooks: testHooks)
let (boundHost, databasePath) = (host, database)
let app = server.application(host: host, port: port) { bound in
    FileHandle.standardOutput.write(Data("live-query-service: http://\(boundHost):\(bound)/ (database \(databasePath))\n".utf8))
}
try await app.runService()
