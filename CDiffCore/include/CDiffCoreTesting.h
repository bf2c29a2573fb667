/* CDiffCore entry points for tests and fuzzers only: not part of the stable API. */
#ifndef CDIFFCORE_TESTING_H
#define CDIFFCORE_TESTING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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
