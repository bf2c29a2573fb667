@_spi(Testing) import DiffEngine
import DiffEngineTestSupport
import Foundation
import Testing

/// A record whose contents only its own `==` can compare (a `String` field).
private struct Titled: Identifiable, Equatable {
    var id: Int
    var title: String
}

/// `DiffOptions(parallelism:)`: two threads compute the keys and split the updates pass;
/// every answer equals the calling thread's alone. The threshold is lowered so that random
/// inputs of every size up to a few hundred rows take the parallel path (split points on
/// both sides of a bitmap word, halves with and without updates).
@Suite struct ParallelDiffTests {
    @Test(arguments: MoveMode.allCases)
    func parallelAnswersEqualSequentialOnes(mode: MoveMode) throws {
        var generator = SeededGenerator(seed: 0x9A_4A_11E1 &+ UInt64(MoveMode.allCases.firstIndex(of: mode)!))
        var parallel = DiffOptions(moves: mode, parallelism: 2)
        parallel.parallelRowThresholdForTesting = 1
        let sequential = DiffOptions(moves: mode)
        let keyPaths = KeyPathAdapter(identity: \TestRow.id, content: \.content)
        var updatesSeen = 0
        for round in 0..<400 {
            let scenario = makeScenario(.random(using: &generator), using: &generator)
            // Every other round with identity hashes cut to 6 bits: collisions on both threads.
            let expected = try diff(scenario.old, scenario.new, options: sequential)
            let answer = round % 2 == 0 ? try diff(scenario.old, scenario.new, options: parallel)
                : try diff(scenario.old, scenario.new, using: WeakenedKeys(IdentifiableAdapter<TestRow>(), bits: 6), options: parallel)
            #expect(answer == expected)
            #expect(checkChangeset(answer, old: scenario.old, new: scenario.new, mode: mode).isEmpty)
            #expect(try diff(scenario.old, scenario.new, using: keyPaths, options: parallel)
                    == diff(scenario.old, scenario.new, using: keyPaths, options: sequential))
            let titled = { (rows: [TestRow]) in rows.map { Titled(id: $0.id, title: "\($0.content)") } }
            #expect(try diff(titled(scenario.old), titled(scenario.new), using: IdentifiableAdapter<Titled>(), options: parallel)
                    == diff(titled(scenario.old), titled(scenario.new), using: IdentifiableAdapter<Titled>(), options: sequential))
            updatesSeen += expected.updates.count
        }
        #expect(updatesSeen > 0)
    }

    /// Long inputs, where both halves of the updates pass find updates and moves interleave.
    @Test func longInputsWithUpdatesInBothHalves() throws {
        var generator = SeededGenerator(seed: 0x10_A6)
        var old = (0..<5_000).map { TestRow(id: $0, content: 0) }
        old.shuffle(using: &generator)
        var new = old.filter { _ in Int.random(in: 0..<10, using: &generator) != 0 }
        for index in stride(from: 0, to: new.count, by: 37) { new[index].content = 1 }
        new.insert(contentsOf: (5_000..<5_300).map { TestRow(id: $0, content: 0) }, at: new.count / 3)
        new.swapAt(10, new.count - 10)
        var parallel = DiffOptions(parallelism: 4)
        parallel.parallelRowThresholdForTesting = 1_000
        let expected = try diff(old, new)
        #expect(expected.updates.contains { $0.new < new.count / 2 } && expected.updates.contains { $0.new > new.count / 2 })
        #expect(try diff(old, new, options: parallel) == expected)
        #expect(checkChangeset(expected, old: old, new: new, mode: .minimal).isEmpty)
        // Updates in one half only, either half.
        for secondHalf in [false, true] {
            var oneHalf = new.map { TestRow(id: $0.id, content: 0) }
            let range = secondHalf ? (oneHalf.count / 2 + 100)..<oneHalf.count : 0..<(oneHalf.count / 2 - 100)
            for index in stride(from: range.lowerBound, to: range.upperBound, by: 101) { oneHalf[index].content = 2 }
            let expectedOneHalf = try diff(old, oneHalf)
            #expect(!expectedOneHalf.updates.isEmpty)
            #expect(try diff(old, oneHalf, options: parallel) == expectedOneHalf)
        }
    }

    @Test func theThresholdIsAMillionRowsOnOneSide() {
        #expect(DiffOptions.parallelRowThreshold == 1_000_000)
        #expect(DiffOptions().parallelism == 1)
        #expect(DiffOptions(parallelism: 2).parallelRowThresholdForTesting == 1_000_000)
    }
}
