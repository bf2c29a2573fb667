/* XXH3-64 row hashing with the fixed seed DC_HASH_SEED (see CDiffCore.h). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "CDiffCore.h"

uint64_t dc_hash_bytes(const void *bytes, size_t length) {
    /* xxHash accepts NULL for an empty input. */
    return XXH3_64bits_withSeed(length ? bytes : NULL, length, DC_HASH_SEED);
}

uint64_t dc_hash_bytes_seeded(const void *bytes, size_t length, uint64_t seed) {
    return XXH3_64bits_withSeed(length ? bytes : NULL, length, seed);
}

/* Little-endian store, so that the canonical bytes and thus the hash are the same on
 * every machine. */
static inline void dc_store_le64(uint8_t *to, uint64_t value) {
    for (int byte = 0; byte < 8; byte++) {
        to[byte] = (uint8_t)(value >> (8 * byte));
    }
}

uint64_t dc_hash_combine(uint64_t first, uint64_t second) {
    uint8_t encoded[16];
    dc_store_le64(encoded, first);
    dc_store_le64(encoded + 8, second);
    return XXH3_64bits_withSeed(encoded, sizeof encoded, DC_HASH_SEED);
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
        out_hashes[index] = XXH3_64bits_withSeed(encoded, sizeof encoded, DC_HASH_SEED);
    }
    return DC_OK;
}
