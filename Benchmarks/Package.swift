// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "DiffEngineBenchmarks",
    platforms: [.macOS(.v14)], // as the library requires
    dependencies: [
        .package(name: "DiffEngine", path: ".."),
        // The `diffengine` CLI, which `diffbench files` times end to end (and `diffbench diff` runs).
        .package(name: "DiffEngineTools", path: "../Tools"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // Counts heap bytes and allocations by interposing malloc in the executable.
        .target(name: "CMallocCounter"),
        // The benchmark.
        .target(
            name: "DiffBenchKit",
            dependencies: [
                .product(name: "DiffEngineFiles", package: "DiffEngineTools"),
                .product(name: "DiffEngineCommand", package: "DiffEngineTools"),
                .product(name: "DiffEngine", package: "DiffEngine"),
                .product(name: "DiffEngineTestSupport", package: "DiffEngine"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "CMallocCounter",
            ]
        ),
        .executableTarget(name: "diffbench", dependencies: ["DiffBenchKit"]),
    ]
)
