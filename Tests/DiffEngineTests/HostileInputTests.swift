@_spi(Testing) import DiffEngine
import DiffEngineTestSupport
import Foundation
import Testing

/// 32-byte identities that all share one XXH3-64 under the engine's public seed.
///
/// For inputs of 17-128 bytes XXH3 mixes bytes 0-15 as the folded 128-bit product of
/// (bytes 0-7 xor (secret word 0 + seed)) and (bytes 8-15 xor (secret word 1 - seed)). With
/// bytes 0-7 equal to secret word 0 + seed the first factor is zero, so bytes 8-15 stop
/// mattering: anyone who knows the seed can make 2^64 distinct ids with one stable hash.
func collidingIdentity(_ k: Int) -> [UInt8] {
    let defaultSecretWord0: UInt64 = 0xbe4b_a423_396c_feb8 // XXH3's published kSecret, bytes 0-7
    let zeroingWord = defaultSecretWord0 &+ 0x4469_6666_456e_6731 // + DC_HASH_SEED
    var bytes = [UInt8](repeating: 0x2a, count: 32)
    withUnsafeBytes(of: zeroingWord.littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
    withUnsafeBytes(of: UInt64(k).littleEndian) { bytes.replaceSubrange(8..<16, with: $0) }
    return bytes
}

struct CraftedRow: Identifiable, Hashable, CustomStringConvertible {
    var id: [UInt8]
    var value: Int
    var description: String { "\(id[8..<12].map(String.init).joined(separator: ".")):\(value)" }
}


/// Forwards to a base adapter, counting `identitiesEqual`; with `seeded: false` it has no
/// seeded keys, as a plugin written before they existed.
struct ForwardingCountingAdapter<Base: RowAdapter>: RowAdapter {
    let base: Base
    let counter: CallCounter
    var seeded = true

    var identityKeysAreExact: Bool { base.identityKeysAreExact }
    func identityKey(of row: Base.Row) -> UInt64 { base.identityKey(of: row) }
    func identitiesEqual(_ lhs: Base.Row, _ rhs: Base.Row) -> Bool {
        counter.countIdentityComparison()
        return base.identitiesEqual(lhs, rhs)
    }
    func contentsEqual(_ lhs: Base.Row, _ rhs: Base.Row) -> Bool { base.contentsEqual(lhs, rhs) }
    func contentHash(of row: Base.Row) -> UInt64 { base.contentHash(of: row) }
    func writeSeededIdentityKeys(of rows: UnsafeBufferPointer<Base.Row>, to keys: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        seeded && base.writeSeededIdentityKeys(of: rows, to: keys)
    }
}

/// Old and new rows over crafted identities: deletions, insertions, moves, updates and
/// repeated identities, from a fixed seed.
func craftedScenario(size: Int, seed: UInt64) -> (old: [CraftedRow], new: [CraftedRow]) {
    var generator = SeededGenerator(seed: seed)
    var old: [CraftedRow] = []
    for _ in 0..<size {
        old.append(CraftedRow(id: collidingIdentity(Int.random(in: 0..<(size * 9 / 10), using: &generator)), value: 0))
    }
    var new: [CraftedRow] = []
    for row in old where Int.random(in: 0..<10, using: &generator) != 0 { new.append(row) }
    for _ in 0..<(size / 10) {
        new.insert(CraftedRow(id: collidingIdentity(size + Int.random(in: 0..<size, using: &generator)), value: 0),
                   at: Int.random(in: 0...new.count, using: &generator))
    }
    for _ in 0..<(size / 20) where new.count > 1 {
        let row = new.remove(at: Int.random(in: 0..<new.count, using: &generator))
        new.insert(row, at: Int.random(in: 0...new.count, using: &generator))
    }
    for index in new.indices where Int.random(in: 0..<20, using: &generator) == 0 { new[index].value = 1 }
    return (old, new)
}

@Suite struct HostileInputTests {
    @Test func craftedIdentitiesShareOneStableHash() {
        let hashes = Set((0..<100).map { collidingIdentity($0 * 7_919).stableHash })
        #expect(hashes.count == 1)
        #expect(Set((0..<100).map { collidingIdentity($0) }).count == 100)
    }

    /// Crafted full collisions cost a linear number of identity checks and give the
    /// reference's answer, under every duplicate policy.
    @Test(arguments: DuplicatePolicy.allCases)
    func fullStableHashCollisionsStayLinear(policy: DuplicatePolicy) {
        let (old, new) = craftedScenario(size: 3_000, seed: 0xc011_1de5)
        let counter = CallCounter()
        let adapter = ForwardingCountingAdapter(base: IdentifiableAdapter<CraftedRow>(), counter: counter)
        let options = DiffOptions(moves: .minimal, duplicates: policy)
        switch Result(catching: { () throws(DuplicateIdentityError) in try diff(old, new, using: adapter, options: options) }) {
        case .success(let changeset):
            if policy == .firstWins {
                let oldKept = referenceDeduplicate(old, sameIdentity: { $0.id == $1.id })
                let newKept = referenceDeduplicate(new, sameIdentity: { $0.id == $1.id })
                #expect(changeset.droppedOld == oldKept.dropped && changeset.droppedNew == newKept.dropped)
                #expect(checkChangeset(changeset, old: oldKept.kept, new: newKept.kept, mode: .minimal) == [])
            } else {
                #expect(checkChangeset(changeset, old: old, new: new, mode: .minimal) == [])
            }
        case .failure(let error):
            #expect(policy == .reject)
            let expected = referenceFirstRepeat(old, sameIdentity: { $0.id == $1.id })
            #expect(error.side == .old && error.firstIndex == expected?.first && error.secondIndex == expected?.second)
        }
        // Before re-keying this took about n² / 2 = 4.5 million checks.
        #expect(counter.identityComparisons <= 20 * (old.count + new.count), "identity checks: \(counter.identityComparisons)")
    }

    /// A plugin without seeded keys whose keys collide is slow, as its contract says, but exact.
    @Test func collidingPluginKeysWithoutSeededKeysStayExact() {
        let (old, new) = craftedScenario(size: 400, seed: 7)
        let adapter = ForwardingCountingAdapter(base: IdentifiableAdapter<CraftedRow>(), counter: CallCounter(), seeded: false)
        let changeset = try! diff(old, new, using: adapter)
        #expect(checkChangeset(changeset, old: old, new: new, mode: .minimal) == [])
    }

    /// Byte rows (the CLI's CSV and JSON rows) re-key with `Hasher` over their bytes.
    @Test func byteRowsWithCraftedCollisions() {
        let (old, new) = craftedScenario(size: 2_000, seed: 11)
        var buffer: [UInt8] = []
        func span(_ row: CraftedRow) -> ByteRow {
            let start = buffer.count
            buffer += row.id
            let idEnd = buffer.count
            buffer += Array("=\(row.value)".utf8)
            return ByteRow(identity: start..<idEnd, content: start..<buffer.count)
        }
        let oldRows = old.map(span), newRows = new.map(span)
        let counter = CallCounter()
        let adapter = ForwardingCountingAdapter(base: ByteRowAdapter(bytes: buffer), counter: counter)
        let changeset = try! diff(oldRows, newRows, using: adapter)
        #expect(checkChangeset(changeset, old: old, new: new, mode: .minimal) == [])
        #expect(counter.identityComparisons <= 20 * (old.count + new.count), "identity checks: \(counter.identityComparisons)")
    }

    /// The stateful differ verifies and re-keys the same way, whether it keeps the previous
    /// snapshot or hashes and identities.
    @Test(arguments: [false, true])
    func differWithCraftedIdentities(hashesOnly: Bool) {
        let differ = hashesOnly
            ? Differ(keepingOnlyHashesOf: IdentifiableAdapter<CraftedRow>(), keepsIdentities: true)
            : Differ(keepingPreviousSnapshotOf: IdentifiableAdapter<CraftedRow>())
        var previous: [CraftedRow] = []
        for step in 0..<4 {
            let (_, next) = craftedScenario(size: 1_500, seed: UInt64(100 + step))
            let update = differ.diff(next)
            if step > 0 {
                #expect(checkChangeset(update.changeset, old: previous, new: next, mode: .minimal) == [])
            }
            previous = next
        }
    }

    /// Exact integer ids chosen to land in one home slot of an unkeyed Fibonacci table:
    /// the keyed placement scatters them; the answer is the reference's.
    @Test func integerIDsCraftedForOneSlot() {
        let inverse: UInt64 = 0xf1de_83e1_9937_733d // 0x9e3779b97f4a7c15⁻¹ mod 2^64
        #expect(inverse &* 0x9e37_79b9_7f4a_7c15 == 1)
        let old = (0..<5_000).map { TestRow(id: Int(bitPattern: UInt(UInt64($0) &* inverse)), content: 0) }
        var new = Array(old.dropFirst(300))
        new.reverse()
        new.append(contentsOf: (5_000..<5_400).map { TestRow(id: Int(bitPattern: UInt(UInt64($0) &* inverse)), content: 1) })
        let changeset = try! diff(old, new, using: IdentifiableAdapter<TestRow>())
        #expect(checkChangeset(changeset, old: old, new: new, mode: .minimal) == [])
    }

    /// An object with many members in reverse order canonicalises like the same object in
    /// order, and a repeated member name keeps its last value.
    @Test func wideObjectsCanonicaliseInAnyOrder() throws {
        let count = 20_000
        let names = (0..<count).map { String(format: "k%06d", $0) }
        let forward = "{" + names.map { "\"\($0)\":1" }.joined(separator: ",") + "}"
        let backward = "{" + names.reversed().map { "\"\($0)\":1" }.joined(separator: ",") + "}"
        let canonical = { (text: String) throws -> [UInt8] in
            var copy = text
            return try copy.withUTF8 { try canonicalJSON(UnsafeRawBufferPointer($0)) }
        }
        #expect(try canonical(forward) == canonical(backward))
        #expect(try canonical(#"{"b":1,"a":2,"b":3}"#) == canonical(#"{"a":2,"b":3}"#))
    }
}
