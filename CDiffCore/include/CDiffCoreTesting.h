/* CDiffCore entry points for tests and fuzzers only: not part of the stable API. */
#ifndef CDIFFCORE_TESTING_H
#define CDIFFCORE_TESTING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "CDiffCore.h"

/* dc_match() with every key cut to its `key_bits` low bits (1...63; 0 or 64 keep all), so
 * that collisions are everywhere and the verification paths run. Requires identity_equal
 * when bits are cut (DC_ERR_INVALID_ARGUMENT otherwise, and for more than 64). */
dc_status_t dc_match_weakened(void *workspace, size_t workspace_size, const dc_match_input_t *input,
                              uint32_t key_bits);

/* dc_mark_repeats() with keys cut to `key_bits` low bits, as dc_match_weakened(). */
dc_status_t dc_mark_repeats_weakened(void *workspace, size_t workspace_size,
                                     const uint64_t *keys, size_t count, uint32_t side,
                                     dc_equal_fn identity_equal, void *context, uint32_t key_bits,
                                     uint64_t placement_seed, size_t collision_budget,
                                     uint8_t *is_repeat, size_t *repeat_count);

/* Hashes `row_count` rows stored back to back in `bytes`: row i is
 * bytes[offsets[i] ..< offsets[i + 1]], so `offsets` holds row_count + 1 entries,
 * non-decreasing, the last at most `byte_count`. Writes `row_count` hashes to `out_hashes`. */
dc_status_t dc_hash_rows(const uint8_t *bytes, size_t byte_count,
                         const uint64_t *offsets, size_t row_count,
                         uint64_t *out_hashes);

/* The built-in XXH3-64 (compiled in every build), whatever hash.c chose; the tests compare
 * it with the system xxHash, which dc_hash_bytes_seeded() uses when it is there. */
uint64_t dc_builtin_xxh3_64(const void *bytes, size_t length, uint64_t seed);

/* 1 when this build hashes with the built-in XXH3 (no system <xxhash.h>, or
 * DC_BUILTIN_XXH3 defined), 0 when with the system xxHash. */
int dc_uses_builtin_xxh3(void);

#ifdef __cplusplus
}
#endif

#endif
