@testable import DiffEngine
import Testing

/// The engine's one loop over paired rows, checking each pair's identities as it compares
/// contents (hashed keys). A pair of two identities reaches it through the public API only by
/// a real 64-bit collision of the stable hash, so it is called here directly.
@Suite struct CarriedIdentityCheckTests {
    struct Named { var name: String; var count: Int }

    static let old = (0..<100).map { Named(name: "row \($0)", count: $0) }

    /// The loop's answer for a pairing a row at a time (new row to old, `_unpaired` for none)
    /// and the bits it set.
    func check(_ new: [Named], pairing: [UInt32]) -> (held: Bool?, any: Bool, bits: [UInt64]) {
        check(new, pairing) { updates, pairs, bits, any in updates.comparePairs(pairs, newRows: pairs.indices, checkingIdentities: true, bits: bits, any: &any) }
    }

    /// The loop's answer for `runs` (old start, new start, length) and the bits it set.
    func check(_ new: [Named], runs: [UInt32]) -> (held: Bool?, any: Bool, bits: [UInt64]) {
        check(new, runs) { updates, runs, bits, any in updates.compareRuns(runs, candidates: nil, from: 0, checkingIdentities: true, bits: bits, any: &any) }
    }

    func check(
        _ new: [Named], _ pairs: [UInt32],
        _ compare: (_ContentUpdates<KeyPathAdapter<Named, String, Int>>, UnsafeBufferPointer<UInt32>,
                    UnsafeMutableBufferPointer<UInt64>, inout Bool) -> Bool
    ) -> (held: Bool?, any: Bool, bits: [UInt64]) {
        let adapter = KeyPathAdapter(identity: \Named.name, content: \.count)
        var bits = [UInt64](repeating: 0, count: (new.count + 63) / 64)
        var any = false
        let held = Self.old.withUnsafeBufferPointer { old in
            new.withUnsafeBufferPointer { new in
                pairs.withUnsafeBufferPointer { pairs in
                    bits.withUnsafeMutableBufferPointer { bits in
                        compare(_ContentUpdates(old, new, adapter), pairs, bits, &any)
                    }
                }
            }
        }
        return (held, any, bits)
    }

    @Test func pairsOfOneIdentityHaveTheirUpdatesMarked() {
        var new = Array(Self.old[10...])
        new[50].count += 1
        new[80].count += 1
        let result = check(new, runs: [10, 0, 40, 50, 40, 50])
        #expect(result.held == true)
        #expect(result.any)
        #expect(result.bits == [1 << 50, 1 << (80 - 64)])
        #expect(check(Array(Self.old[10...]), runs: [10, 0, 90]) == (true, false, [0, 0]))
    }

    @Test func aPairOfTwoIdentitiesStopsTheCheck() {
        var new = Self.old
        new[70].name = "another row"
        #expect(check(new, runs: [0, 0, 100]).held == false)
        // Rows paired out of step: row 5 against row 6.
        #expect(check(Self.old, runs: [0, 0, 5, 6, 5, 10]).held == false)
    }

    @Test func aPairingRowByRowIsCheckedTheSameWay() {
        // New rows: old rows 99 down to 0, and one row paired with nothing.
        var new = Array(Self.old.reversed()) + [Named(name: "fresh", count: 0)]
        new[3].count += 1
        let pairing = (0..<100).map { UInt32(99 - $0) } + [_unpaired]
        #expect(check(new, pairing: pairing) == (true, true, [1 << 3, 0]))
        new[40].name = "another row"
        #expect(check(new, pairing: pairing).held == false)
    }
}
