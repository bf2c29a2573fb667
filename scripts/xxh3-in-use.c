/* Linked with the core's objects as a build compiled them: prints which XXH3 that build
 * uses ("system" or "builtin") and fails if its hash differs from the built-in XXH3 on
 * random bytes of every length 0...4,096, with the engine's seed and with others.
 * scripts/check-pkgconfig.sh runs it on SwiftPM's objects, so the check needs no test build. */
#include <stdint.h>
#include <stdio.h>

#include "CDiffCore.h"
#include "CDiffCoreTesting.h"

int main(void) {
    static unsigned char bytes[4096 + 3];
    uint64_t state = 0x5eedb17e;
    for (size_t i = 0; i < sizeof bytes; i++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        bytes[i] = (unsigned char)(state >> 56);
    }
    int mismatches = 0;
    for (size_t length = 0; length <= 4096; length++) {
        for (size_t offset = 0; offset < 3; offset++) {
            const unsigned char *start = bytes + offset;
            uint64_t seed = state = state * 6364136223846793005u + 1442695040888963407u;
            if (dc_builtin_xxh3_64(start, length, DC_HASH_SEED) != dc_hash_bytes(start, length)
                || dc_builtin_xxh3_64(start, length, seed) != dc_hash_bytes_seeded(start, length, seed)) {
                if (mismatches++ < 5) fprintf(stderr, "xxh3-in-use: hashes differ at length %zu, offset %zu\n", length, offset);
            }
        }
    }
    printf("%s\n", dc_uses_builtin_xxh3() ? "builtin" : "system");
    return mismatches == 0 ? 0 : 1;
}
