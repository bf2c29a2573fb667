/* Private: the built-in XXH3-64 (xxh3.c), for platforms with no system xxHash. */
#ifndef DC_XXH3_H
#define DC_XXH3_H

#include <stddef.h>
#include <stdint.h>

/* XXH3-64 of `length` bytes with `seed`, equal to xxHash 0.8's XXH3_64bits_withSeed(). */
uint64_t dc_xxh3_64(const void *bytes, size_t length, uint64_t seed);

#endif
