// swift-tools-version:6.2
import PackageDescription

// A live query over SQLite (one process) or PostgreSQL (many nodes), pushed to browsers: each
// WebSocket client names a query over an orders table and receives its rows once, then only
// the changes of each commit.
let package = Package(
    name: "LiveQueryService",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "live-query-service", targets: ["live-query-service"]),
        .executable(name: "live-query-load", targets: ["live-query-load"]),
        // For the fuzz harnesses (fuzz/Package.swift).
        .library(name: "LiveQueryServiceKit", targets: ["LiveQueryServiceKit"]),
    ],
    dependencies: [
        .package(name: "DiffEngine", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
    ],
    targets: [
        // The store, the shared live queries and the HTTP/WebSocket server, as a library so
        // that tests run it in-process.
        .target(
            name: "LiveQueryServiceKit",
            dependencies: [
                .product(name: "DiffEngine", package: "DiffEngine"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "JWTKit", package: "jwt-kit"), // the access tokens (HS256)
                .product(name: "NIOWebSocket", package: "swift-nio"), // to send one shared frame buffer to many sockets
            ],
            resources: [.copy("Public")]
        ),
        .executableTarget(name: "live-query-service", dependencies: ["LiveQueryServiceKit"]),
        // Linux's epoll, for the load test's clients.
        .target(name: "CEpoll"),
        // The load test's clients and writer (loopback only, bounded in count and time).
        .executableTarget(
            name: "live-query-load",
            dependencies: ["LiveQueryServiceKit", "CEpoll"],
            swiftSettings: [.swiftLanguageMode(.v5)] // a script-like main over shared counters
        ),
        .testTarget(
            name: "LiveQueryServiceTests",
            dependencies: [
                "LiveQueryServiceKit",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "JWTKit", package: "jwt-kit"), // to forge the tokens the service must refuse
            ]
        ),
    ]
)
