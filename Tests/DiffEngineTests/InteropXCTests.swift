import DiffEngine
import DiffEngineTestSupport
import XCTest

/// The standard-library interop, checked with XCTest as well (so that both of
/// `swift test`'s runners report real tests).
final class InteropXCTests: XCTestCase {
    func testCollectionDifferenceReproducesNewForEveryMoveMode() throws {
        var generator = SeededGenerator(seed: 0x1A7E)
        for _ in 0..<500 {
            let (old, new) = makeScenario(.random(using: &generator), using: &generator)
            for mode in MoveMode.allCases {
                let changes = try diff(old, new, options: DiffOptions(moves: mode))
                XCTAssertEqual(old.applying(changes.collectionDifference(from: old, to: new)), new)
            }
        }
    }

    func testChangesetRoundTripsThroughJSON() throws {
        let changes = try diff(["A", "B", "C", "D"], ["B", "C", "D", "A", "E"])
        let decoded = try JSONDecoder().decode(Changeset.self, from: JSONEncoder().encode(changes))
        XCTAssertEqual(decoded, changes)
        XCTAssertEqual(changes.moves, [IndexPair(old: 0, new: 3)])
        XCTAssertEqual(changes.insertions, [4])
    }
}
