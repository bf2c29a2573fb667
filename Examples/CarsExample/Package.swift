// swift-tools-version:6.0
import PackageDescription

// Ditto's "cars" store observer as a program: a LiveCollection over an in-memory store
// that changes, printing what each event inserts, updates, moves and deletes.
let package = Package(
    name: "CarsExample",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "DiffEngine", path: "../..")],
    targets: [
        .executableTarget(name: "CarsExample", dependencies: [.product(name: "DiffEngine", package: "DiffEngine")]),
    ]
)
