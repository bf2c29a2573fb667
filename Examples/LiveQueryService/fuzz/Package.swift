// swift-tools-version:6.2
import PackageDescription

// The live-query service's fuzz harness, fuzz_access, built by run.sh with --sanitize=fuzzer
// --sanitize=address (libFuzzer supplies main, and replays the corpus with -runs=0). It reads what a client sends before it is let in: the Authorization header (a JWT or
// anything else) and a live query's URL parameters, through the server's own functions.
let package = Package(
    name: "LiveQueryServiceFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "LiveQueryService", path: "..")],
    targets: [
        .target(name: "AccessFuzzTarget", dependencies: [.product(name: "LiveQueryServiceKit", package: "LiveQueryService")]),
        .executableTarget(name: "fuzz_access", dependencies: ["AccessFuzzTarget"]),
    ]
)
