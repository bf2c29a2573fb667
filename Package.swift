// swift-tools-version:6.0
import PackageDescription

let probes: [SwiftSetting] = [.define("DIFFENGINE_PROBES", .when(configuration: .debug))]

let package = Package(
    name: "DiffEngine",
    // Generic types with parameter packs (`KeyPathAdapter`) need the Swift 5.9 runtime,
    // which ships with macOS 14, iOS 17, tvOS 17, watchOS 10 and visionOS 1.
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "DiffEngine", targets: ["DiffEngine"]),
        // The naive reference differ, seeded generator and changeset checker, for the
        // benchmark, the fuzzers and anyone testing an adapter or renderer of their own.
        .library(name: "DiffEngineTestSupport", targets: ["DiffEngineTestSupport"]),
    ],
    targets: [
        // xxHash from the system (0.8.0 or newer), found through pkg-config; where there is
        // none (iOS and the other Apple device platforms), CDiffCore uses its built-in XXH3.
        .systemLibrary(
            name: "CXXHash",
            path: "Sources/CXXHash",
            pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"]), .brew(["xxhash"])]
        ),
        // The O(n) matcher and XXH3 row hashing over caller-owned flat buffers.
        .target(
            name: "CDiffCore",
            dependencies: [.target(name: "CXXHash", condition: .when(platforms: [.linux, .macOS, .android, .windows, .openbsd]))],
            path: "CDiffCore",
            cSettings: [
                .define("NDEBUG", .when(configuration: .release)),
                // The Apple device platforms have no system xxHash: use the built-in XXH3.
                .define("DC_BUILTIN_XXH3", .when(platforms: [.iOS, .tvOS, .watchOS, .visionOS, .macCatalyst])),
            ]
        ),
        // DIFFENGINE_PROBES: counters of which way a diff went, for the tests; debug builds
        // only, so that no release call pays for them.
        .target(name: "DiffEngine", dependencies: ["CDiffCore"], swiftSettings: probes),
        .target(name: "DiffEngineTestSupport", dependencies: ["DiffEngine"]),
        .testTarget(name: "DiffEngineTests", dependencies: ["DiffEngine", "DiffEngineTestSupport", "CDiffCore"],
                    swiftSettings: probes),
    ],
    cLanguageStandard: .c11
)
