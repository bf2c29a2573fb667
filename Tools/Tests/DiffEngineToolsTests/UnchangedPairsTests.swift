import DiffEngineTestSupport
import Foundation
import Testing

@testable import DiffEngineCommand

/// `--unchanged` finds pairs again by key hash; keys whose hashes collide must still pair
/// by their bytes.
@Suite struct UnchangedPairsTests {
    @Test(arguments: [UInt64(0), 1, 3]) func collidingKeyHashesStillPairByBytes(mask: UInt64) throws {
        var generator = SeededGenerator(seed: 0xC011 + mask)
        let old = (0..<500).map { _ in "\(Int.random(in: 0..<80, using: &generator)),\(Int.random(in: 0..<2, using: &generator))" }
        var new = old.filter { _ in Int.random(in: 0..<6, using: &generator) > 0 }
        new += (0..<30).map { _ in "\(Int.random(in: 0..<100, using: &generator)),0" }
        new.shuffle(using: &generator)
        let files = try FileFixture()
        var request = TableDiffRequest(oldPath: try files.write("old.csv", "id,v\n" + old.joined(separator: "\n") + "\n"),
                                       newPath: try files.write("new.csv", "id,v\n" + new.joined(separator: "\n") + "\n"),
                                       keys: ["id"])
        request.ignoreOrder = true
        let diff = try TableDiff.run(request)
        let renderer = KeyedRenderer(diff: diff, keys: ["id"], only: nil, ignore: [])
        let expected = renderer.unchangedPairs(ChangeLists(diff))
        // The same diff with every key hash weakened to `mask`'s bits: nearly all collide.
        var weakened = diff
        weakened.old.keyHashes = diff.old.keyHashes.map { $0 & mask }
        weakened.new.keyHashes = diff.new.keyHashes.map { $0 & mask }
        let collided = KeyedRenderer(diff: weakened, keys: ["id"], only: nil, ignore: [])
        let pairs = collided.unchangedPairs(ChangeLists(weakened))
        #expect(expected.count > 150)
        #expect(pairs.map(\.old) == expected.map(\.old) && pairs.map(\.new) == expected.map(\.new))
        for pair in pairs { #expect(old[pair.old] == new[pair.new]) }
    }
}
