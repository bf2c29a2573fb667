// swift-tools-version:6.0
import PackageDescription

// The Swift fuzz targets, each built twice by fuzz/build.sh:
//   fuzz_NAME          with --sanitize=fuzzer --sanitize=address (libFuzzer supplies main)
//   fuzz_NAME_replay   with --sanitize=address, replaying corpus folders
// swift_api: the public diff API against the naive reference; csv and json: the parsers
// of untrusted input (the CSV reader and the JSON canonicaliser); jsonl: the JSON Lines reader.
let harnesses = ["fuzz_swift_api", "fuzz_csv", "fuzz_json", "fuzz_jsonl"]

let package = Package(
    name: "DiffEngineFuzz",
    platforms: [.macOS(.v14)], // as the library requires
    dependencies: [
        .package(name: "DiffEngine", path: "../.."),
        .package(name: "DiffEngineTools", path: "../../Tools"),
    ],
    targets: [
        .target(name: "FuzzTargets", dependencies: [
            .product(name: "DiffEngine", package: "DiffEngine"),
            .product(name: "DiffEngineTestSupport", package: "DiffEngine"),
            .product(name: "DiffEngineFiles", package: "DiffEngineTools"),
            .product(name: "DiffEngineCommand", package: "DiffEngineTools"),
        ]),
    ] + harnesses.flatMap { name in [
        .executableTarget(name: name, dependencies: ["FuzzTargets"]),
        .executableTarget(name: name + "_replay", dependencies: ["FuzzTargets"]),
    ] }
)
