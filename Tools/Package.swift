// swift-tools-version:6.0
import PackageDescription

// The `diffengine` command-line tool: a keyed diff of two table files (CSV, TSV, JSON Lines)
// for data engineers, built on the DiffEngine library. `make install` installs it.
let package = Package(
    name: "DiffEngineTools",
    platforms: [.macOS(.v14)], // as the library requires
    products: [
        .executable(name: "diffengine", targets: ["diffengine"]),
        // The table readers and the command as libraries, for the benchmark and the fuzzers.
        .library(name: "DiffEngineFiles", targets: ["DiffEngineFiles"]),
        .library(name: "DiffEngineCommand", targets: ["DiffEngineCommand"]),
    ],
    dependencies: [
        .package(name: "DiffEngine", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // Keyed tables from files: the CSV and JSON Lines readers, readable keys, file access.
        .target(name: "DiffEngineFiles", dependencies: [.product(name: "DiffEngine", package: "DiffEngine")]),
        // The command: table diffing and its output formats, a library so that it is tested
        // in-process.
        .target(
            name: "DiffEngineCommand",
            dependencies: [
                "DiffEngineFiles",
                .product(name: "DiffEngine", package: "DiffEngine"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "diffengine", dependencies: ["DiffEngineCommand"]),
        .testTarget(name: "DiffEngineToolsTests", dependencies: [
            "DiffEngineCommand",
            .product(name: "DiffEngine", package: "DiffEngine"),
            .product(name: "DiffEngineTestSupport", package: "DiffEngine"),
        ]),
    ]
)
