// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "DiffEngine",
    products: [
        .library(name: "DiffEngine", targets: ["DiffEngine"]),
        // The naive reference differ, seeded generator and SPEC section 4 checker, for the
        // benchmark, the fuzzers and anyone testing an adapter or renderer of their own.
        .library(name: "DiffEngineTestSupport", targets: ["DiffEngineTestSupport"]),
    ],
    targets: [
        // The O(n) matcher and XXH3 row hashing over caller-owned flat buffers.
        .target(
            name: "CDiffCore",
            path: "CDiffCore",
            cSettings: [
                .define("NDEBUG", .when(configuration: .release)),
            ]
        ),
        .target(name: "DiffEngine", dependencies: ["CDiffCore"]),
        // The naive reference differ, the seeded generator and the SPEC section 4 checker.
        .target(name: "DiffEngineTestSupport", dependencies: ["DiffEngine"]),
        .testTarget(name: "DiffEngineTests", dependencies: ["DiffEngine", "DiffEngineTestSupport", "CDiffCore"]),
    ],
    cLanguageStandard: .c11
)
