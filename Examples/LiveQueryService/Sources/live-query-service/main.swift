import Foundation
import Hummingbird
import LiveQueryServiceKit

// live-query-service [--host 127.0.0.1] [--port 8080] [--database orders.sqlite | postgres://…] [--seed 10000] [--test-hooks]
var host = "127.0.0.1", port = 8080, database = "orders.sqlite", seed = 10_000, testHooks = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--host": host = arguments.next() ?? host
    case "--port": port = arguments.next().flatMap { Int($0) } ?? port
    case "--database": database = arguments.next() ?? database
    case "--seed": seed = arguments.next().flatMap { Int($0) } ?? seed
    case "--test-hooks": testHooks = true
    default:
        FileHandle.standardError.write(Data("live-query-service: unknown argument \(argument)\nusage: live-query-service [--host H] [--port P] [--database FILE|postgres://USER@HOST:PORT/DB] [--seed ROWS] [--test-hooks]\n".utf8))
        exit(2)
    }
}
let store: any OrderStore
do {
    if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
        store = try await PostgresOrdersStore(url: database, seedRows: seed)
    } else {
        store = try OrdersStore(path: database, seedRows: seed)
    }
} catch {
    FileHandle.standardError.write(Data("live-query-service: \(database): \(error)\n".utf8))
    exit(2)
}
let server = LiveQueryServer(store: store, testHooks: testHooks)
let (boundHost, databasePath) = (host, database)
let app = server.application(host: host, port: port) { bound in
    FileHandle.standardOutput.write(Data("live-query-service: http://\(boundHost):\(bound)/ (database \(databasePath))\n".utf8))
}
try await app.runService()
