// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "DiffEngine",
    products: [
        .library(name: "DiffEngine", targets: ["DiffEngine"]),
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
