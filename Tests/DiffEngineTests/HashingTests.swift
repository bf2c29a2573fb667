import CDiffCore
import CDiffCore.Testing
import DiffEngine
import DiffEngineTestSupport
import Foundation
import Testing

/// Stable hashes are XXH3-64 with seed 0x44696666456e6731 over the canonical bytes. The
/// expected values were computed with the Python `xxhash` package (an independent XXH3
/// implementation): `xxhash.xxh3_64_intdigest(data, seed)`. They hold in both builds of the
/// core: with the system xxHash and with the built-in XXH3 (`-Xcc -DDC_BUILTIN_XXH3`).
@Suite struct HashingTests {
    @Test func goldenValues() {
        #expect("".stableHash == 0x25f2_5cc7_dffc_ada7)                      // 0 bytes
        #expect("a".stableHash == 0xbde7_698d_3790_dd19)                     // 1-3
        #expect("abcd".stableHash == 0xfb6c_f585_f026_9228)                  // 4-8
        #expect("12345678".stableHash == 0x24e7_b7b9_466e_9b3b)
        #expect(combineStableHashes(1, 2) == 0x8acb_0238_d4e3_24e8)          // 9-16
        #expect("much writing is like snow".stableHash == 0x0095_b3b6_eeaf_19f0) // 17-128
        #expect((0..<200).map { UInt8($0 % 251) }.stableHash == 0xbd85_cc59_b6a1_e7b1) // 129-240
        #expect(Array(0...255 as ClosedRange<UInt8>).stableHash == 0x37bc_1f0f_1319_ef99) // > 240
        #expect((0..<5_000).map { UInt8(truncatingIfNeeded: $0 * 7) }.stableHash == 0x902e_3123_e7e0_820b) // blocks
    }

    /// The built-in XXH3-64 (compiled in every build) equals the hash this build uses, on
    /// random bytes of every length 0...4,096 at three alignments, with the engine's seed and
    /// with random seeds. In the system-xxHash build that compares the two implementations.
    @Test func builtinXXH3EqualsTheBuildsHash() {
        var generator = SeededGenerator(seed: 0x5eed_b17e)
        let buffer = (0..<4_200).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var mismatches: [String] = []
        buffer.withUnsafeBytes { bytes in
            for length in 0...4_096 {
                for offset in 0..<3 {
                    let start = bytes.baseAddress! + offset
                    let seed = UInt64.random(in: .min ... .max, using: &generator)
                    if dc_builtin_xxh3_64(start, length, DC_HASH_SEED) != dc_hash_bytes(start, length)
                        || dc_builtin_xxh3_64(start, length, seed) != dc_hash_bytes_seeded(start, length, seed) {
                        mismatches.append("length \(length) offset \(offset)")
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    /// `make test`, `make test-builtin-xxh3` and the pkg-config check set
    /// DIFFENGINE_EXPECTED_XXH3 (`system` or `builtin`) from what the build must find, so a
    /// build that silently fell back to the other hash fails here. (A bare `swift test` does
    /// not know what to expect and checks nothing here.)
    @Test func theExpectedXXH3IsInUse() {
        guard let expected = ProcessInfo.processInfo.environment["DIFFENGINE_EXPECTED_XXH3"] else { return }
        #expect(expected == (dc_uses_builtin_xxh3() != 0 ? "builtin" : "system"))
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
