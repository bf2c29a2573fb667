@testable import DiffEngine
import Testing

/// The reused workspace of a `Differ` (and of one-shot diffs) when each diff is a little
/// larger than the last, as in a chat or a log: it grows by half again, so 201 diffs from
/// 1,000 to 3,000 rows a side get fresh memory a few times, not on every call.
@Suite struct WorkspaceGrowthTests {
    @Test func growingDiffsReallocateRarely() {
        let workspace = _DiffWorkspace()
        var sizes: [Int] = []
        for count in stride(from: 1_000, through: 3_000, by: 10) {
            let keys = (0..<count).map { UInt64($0) }
            keys.withUnsafeBufferPointer { workspace.match(oldKeys: $0, newKeys: $0, identityEqual: nil) }
            _ = workspace.keyBuffer(count: 2 * count)
            if sizes.last != workspace.allocatedBytes { sizes.append(workspace.allocatedBytes) }
        }
        // From 1,000 to 3,000 at half again each time: at most 3 growths of each buffer.
        #expect(sizes.count <= 7, "\(sizes)")
        // Never more than half again what the largest diff needs (plus the first size).
        let fresh = _DiffWorkspace()
        let keys = (0..<3_000).map { UInt64($0) }
        keys.withUnsafeBufferPointer { fresh.match(oldKeys: $0, newKeys: $0, identityEqual: nil) }
        _ = fresh.keyBuffer(count: 6_000)
        let needed = fresh.allocatedBytes
        #expect(sizes.last! <= needed * 3 / 2 + 64, "\(sizes.last!) for \(needed)")
    }
}
