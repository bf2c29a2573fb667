/* XXH3-64 row hashing with the fixed seed DC_HASH_SEED (see CDiffCore.h).
 *
 * The system xxHash when its header is there (found through pkg-config), else the built-in
 * XXH3-64 of xxh3.c, which gives the same hashes; DC_BUILTIN_XXH3 forces the built-in. */
#include "CDiffCore.h"
#include "CDiffCoreTesting.h" /* dc_hash_rows, the built-in XXH3 entry points */
#include "bits.h"

#if !defined(DC_BUILTIN_XXH3) && defined(__has_include)
#  if __has_include(<xxhash.h>)
#    define DC_SYSTEM_XXH3 1
#  endif
#endif

#ifdef DC_SYSTEM_XXH3
#  define XXH_INLINE_ALL
#  include <xxhash.h>
#  if !defined(XXH_VERSION_NUMBER) || XXH_VERSION_NUMBER < 800
#    error "DiffEngine needs xxHash 0.8.0 or newer: XXH3's output is frozen only from 0.8.0, and DiffEngine's stable hashes rest on it (or define DC_BUILTIN_XXH3)"
#  endif
static inline uint64_t dc_xxh3(const void *bytes, size_t length, uint64_t seed) {
    /* xxHash accepts NULL for an empty input. */
    return XXH3_64bits_withSeed(length ? bytes : NULL, length, seed);
}
#else
#  include "xxh3.h"
static inline uint64_t dc_xxh3(const void *bytes, size_t length, uint64_t seed) {
    return dc_xxh3_64(bytes, length, seed);
}
#endif

int dc_uses_builtin_xxh3(void) {
#ifdef DC_SYSTEM_XXH3
    return 0;
#else
    return 1;
#endif
}

uint64_t dc_hash_bytes(const void *bytes, size_t length) {
    return dc_xxh3(bytes, length, DC_HASH_SEED);
}

uint64_t dc_hash_bytes_seeded(const void *bytes, size_t length, uint64_t seed) {
    return dc_xxh3(bytes, length, seed);
}

uint64_t dc_hash_combine(uint64_t first, uint64_t second) {
    uint8_t encoded[16];
    dc_store_le64(encoded, first);
    dc_store_le64(encoded + 8, second);
    return dc_xxh3(encoded, sizeof encoded, DC_HASH_SEED);
}

dc_status_t dc_hash_rows(const uint8_t *bytes, size_t byte_count,
                         const uint64_t *offsets, size_t row_count,
                         uint64_t *out_hashes) {
    if (row_count == 0) return DC_OK;
    if (offsets == NULL || out_hashes == NULL || (bytes == NULL && byte_count != 0)) {
        return DC_ERR_NULL_POINTER;
    }
    /* Validate every offset before hashing anything, so a bad table writes nothing. */
    if (offsets[row_count] > byte_count) return DC_ERR_INVALID_ARGUMENT;
    for (size_t row = 0; row < row_count; row++) {
        if (offsets[row] > offsets[row + 1]) return DC_ERR_INVALID_ARGUMENT;
    }
    for (size_t row = 0; row < row_count; row++) {
        size_t length = (size_t)(offsets[row + 1] - offsets[row]);
        out_hashes[row] = dc_hash_bytes(length ? bytes + offsets[row] : NULL, length);
    }
    return DC_OK;
}

dc_status_t dc_hash_spans(const uint8_t *bytes, size_t byte_count,
                          const dc_span_t *spans, size_t count,
                          uint64_t *out_hashes) {
    if (count == 0) return DC_OK;
    if (spans == NULL || out_hashes == NULL || (bytes == NULL && byte_count != 0)) {
        return DC_ERR_NULL_POINTER;
    }
    for (size_t index = 0; index < count; index++) {
        if (spans[index].offset > byte_count || spans[index].length > byte_count - spans[index].offset) {
            return DC_ERR_INVALID_ARGUMENT;
        }
    }
    for (size_t index = 0; index < count; index++) {
        size_t length = (size_t)spans[index].length;
        out_hashes[index] = dc_hash_bytes(length ? bytes + spans[index].offset : NULL, length);
    }
    return DC_OK;
}

dc_status_t dc_hash_u64(const uint64_t *keys, size_t count, uint64_t *out_hashes) {
    if (count == 0) return DC_OK;
    if (keys == NULL || out_hashes == NULL) return DC_ERR_NULL_POINTER;
    for (size_t index = 0; index < count; index++) {
        uint8_t encoded[8];
        dc_store_le64(encoded, keys[index]);
        out_hashes[index] = dc_xxh3(encoded, sizeof encoded, DC_HASH_SEED);
    }
    return DC_OK;
}
