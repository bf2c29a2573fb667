// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "DiffEngineBenchmarks",
    platforms: [.macOS(.v14)], // as the library requires
    products: [
        // The CSV and JSON Lines readers, for the CLI and the parser fuzzers.
        .library(name: "DiffEngineFiles", targets: ["DiffEngineFiles"]),
        // The keyed table differ for data engineers: `make install PREFIX=…` installs it.
        .executable(name: "diffengine", targets: ["diffengine"]),
        // The command as a library, for the fuzzers.
        .library(name: "DiffEngineCommand", targets: ["DiffEngineCommand"]),
    ],
    dependencies: [
        .package(name: "DiffEngine", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // Counts heap bytes and allocations by interposing malloc in the executable.
        .target(name: "CMallocCounter"),
        // Keyed tables from files: the CSV and JSON Lines readers, readable keys, file access.
        .target(name: "DiffEngineFiles", dependencies: [.product(name: "DiffEngine", package: "DiffEngine")]),
        // The `diffengine` command: table diffing and its output formats, as a library so that
        // it can be tested in-process.
        .target(
            name: "DiffEngineCommand",
            dependencies: [
                "DiffEngineFiles",
                .product(name: "DiffEngine", package: "DiffEngine"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "diffengine", dependencies: ["DiffEngineCommand"]),
        // The benchmark, as a library so it can be tested.
        .target(
            name: "DiffBenchKit",
            dependencies: [
                "DiffEngineFiles",
                "DiffEngineCommand",
                .product(name: "DiffEngine", package: "DiffEngine"),
                .product(name: "DiffEngineTestSupport", package: "DiffEngine"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "CMallocCounter",
            ]
        ),
        .executableTarget(name: "diffbench", dependencies: ["DiffBenchKit"]),
        .testTarget(name: "DiffBenchTests", dependencies: ["DiffBenchKit", "diffbench", "DiffEngineCommand"]),
    ]
)
