// swift-tools-version:6.0
import PackageDescription

// The Swift API fuzz target. Built only by fuzz/build.sh:
//   fuzz_swift_api         with --sanitize=fuzzer --sanitize=address (libFuzzer supplies main)
//   fuzz_swift_api_replay  with --sanitize=address, replaying corpus folders
let package = Package(
    name: "DiffEngineFuzz",
    dependencies: [.package(name: "DiffEngine", path: "../..")],
    targets: [
        .target(name: "FuzzTargets", dependencies: [
            .product(name: "DiffEngine", package: "DiffEngine"),
            .product(name: "DiffEngineTestSupport", package: "DiffEngine"),
        ]),
        .executableTarget(name: "fuzz_swift_api", dependencies: ["FuzzTargets"]),
        .executableTarget(name: "fuzz_swift_api_replay", dependencies: ["FuzzTargets"]),
    ]
)
