import DiffEngine
import Testing

/// Stable hashes are XXH3-64 with seed 0x44696666456e6731 over the canonical bytes. The
/// expected values were computed with the Python `xxhash` package (an independent XXH3
/// implementation): `xxhash.xxh3_64_intdigest(data, seed)`.
@Suite struct HashingTests {
    @Test func goldenValues() {
        #expect("".stableHash == 0x25f2_5cc7_dffc_ada7)
        #expect("a".stableHash == 0xbde7_698d_3790_dd19)
        #expect("much writing is like snow".stableHash == 0x0095_b3b6_eeaf_19f0)
        #expect(Array(0...255 as ClosedRange<UInt8>).stableHash == 0x37bc_1f0f_1319_ef99)
        #expect(combineStableHashes(1, 2) == 0x8acb_0238_d4e3_24e8)
    }

    @Test func integersAreTheirOwnExactKeys() {
        #expect(42.stableHash == 42)
        #expect((-1).stableHash == UInt64.max)
        #expect(Int.stableHashIsExact && !String.stableHashIsExact)
    }

    @Test func doubleZeroSignsHashAlike() {
        #expect((0.0).stableHash == (-0.0).stableHash)
        #expect((1.0).stableHash != (2.0).stableHash)
    }

    @Test func substringsHashLikeStrings() {
        let text = "key,value"
        #expect(text.split(separator: ",")[0].stableHash == "key".stableHash)
    }
}
