/* libFuzzer target: the built-in XXH3-64 (CDiffCore/xxh3.c) against the system xxHash, on
 * arbitrary input. The last 8 bytes (when there are more than 8) are the seed; the rest is
 * hashed at every alignment 0-7. A difference prints both values and the input, then aborts. */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "CDiffCore.h"
#include "CDiffCoreTesting.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint64_t seed = DC_HASH_SEED;
    size_t length = size;
    if (size > 8) {
        length = size - 8;
        memcpy(&seed, data + length, 8);
    }
    uint8_t *copy = malloc(length + 8);
    if (copy == NULL) return 0;
    for (size_t shift = 0; shift < 8; shift++) {
        memcpy(copy + shift, data, length);
        uint64_t expected = XXH3_64bits_withSeed(copy + shift, length, seed);
        uint64_t builtin = dc_builtin_xxh3_64(copy + shift, length, seed);
        if (expected != builtin) {
            fprintf(stderr, "fuzz_xxh3: length %zu seed %016llx alignment %zu: xxHash %016llx, built-in %016llx\n",
                    length, (unsigned long long)seed, shift, (unsigned long long)expected, (unsigned long long)builtin);
            abort();
        }
    }
    free(copy);
    return 0;
}
