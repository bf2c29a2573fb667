/* A portable XXH3-64, written from the published XXH3 algorithm description, for
 * platforms with no system xxHash (iOS, tvOS, watchOS, visionOS, a bare machine). Its
 * output equals xxHash 0.8's XXH3_64bits_withSeed() for every input and seed; the tests
 * and fuzz/fuzz_xxh3.c compare the two. hash.c uses it when <xxhash.h> is not available
 * or DC_BUILTIN_XXH3 is defined. */
#include "xxh3.h"

#include "bits.h"

#include "CDiffCoreTesting.h"

#define DC_PRIME32_1 UINT64_C(0x9E3779B1)
#define DC_PRIME32_2 UINT64_C(0x85EBCA77)
#define DC_PRIME32_3 UINT64_C(0xC2B2AE3D)
#define DC_PRIME64_1 UINT64_C(0x9E3779B185EBCA87)
#define DC_PRIME64_2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define DC_PRIME64_3 UINT64_C(0x165667B19E3779F9)
#define DC_PRIME64_4 UINT64_C(0x85EBCA77C2B2AE63)
#define DC_PRIME64_5 UINT64_C(0x27D4EB2F165667C5)
#define DC_PRIME_MX1 UINT64_C(0x165667919E3779F9)
#define DC_PRIME_MX2 UINT64_C(0x9FB21C651E98DF25)

enum { DC_SECRET_SIZE = 192, DC_STRIPE = 64, DC_STRIPES_PER_BLOCK = (DC_SECRET_SIZE - 64) / 8,
       DC_BLOCK = DC_STRIPE * DC_STRIPES_PER_BLOCK };

/* The default secret of the description (192 bytes, read as little-endian words). */
static const uint8_t dc_default_secret[DC_SECRET_SIZE] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

static inline uint32_t dc_swap32(uint32_t x) {
    return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}

static inline uint64_t dc_swap64(uint64_t x) {
    return (uint64_t)dc_swap32((uint32_t)x) << 32 | dc_swap32((uint32_t)(x >> 32));
}

static inline uint64_t dc_rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t dc_avalanche(uint64_t x) {
    x ^= x >> 37;
    x *= DC_PRIME_MX1;
    return x ^ (x >> 32);
}

static inline uint64_t dc_avalanche_xxh64(uint64_t x) {
    x ^= x >> 33;
    x *= DC_PRIME64_2;
    x ^= x >> 29;
    x *= DC_PRIME64_3;
    return x ^ (x >> 32);
}

/* 16 bytes of input against 16 bytes of secret, with the seed. */
static inline uint64_t dc_mix16(const uint8_t *data, const uint8_t *secret, uint64_t seed) {
    return dc_fold_multiply(dc_load_le64(data) ^ (dc_load_le64(secret) + seed), dc_load_le64(data + 8) ^ (dc_load_le64(secret + 8) - seed));
}

static uint64_t dc_xxh3_0(const uint8_t *secret, uint64_t seed) {
    return dc_avalanche_xxh64(seed ^ dc_load_le64(secret + 56) ^ dc_load_le64(secret + 64));
}

static uint64_t dc_xxh3_1to3(const uint8_t *input, size_t length, const uint8_t *secret, uint64_t seed) {
    uint32_t combined = (uint32_t)input[length - 1] | (uint32_t)length << 8 | (uint32_t)input[0] << 16
                      | (uint32_t)input[length >> 1] << 24;
    uint64_t value = ((uint64_t)(dc_load_le32(secret) ^ dc_load_le32(secret + 4)) + seed) ^ combined;
    return dc_avalanche_xxh64(value);
}

static uint64_t dc_xxh3_4to8(const uint8_t *input, size_t length, const uint8_t *secret, uint64_t seed) {
    uint64_t modified_seed = seed ^ (uint64_t)dc_swap32((uint32_t)seed) << 32;
    uint64_t combined = (uint64_t)dc_load_le32(input + length - 4) | (uint64_t)dc_load_le32(input) << 32;
    uint64_t value = ((dc_load_le64(secret + 8) ^ dc_load_le64(secret + 16)) - modified_seed) ^ combined;
    value ^= dc_rotl64(value, 49) ^ dc_rotl64(value, 24);
    value *= DC_PRIME_MX2;
    value ^= (value >> 35) + length;
    value *= DC_PRIME_MX2;
    return value ^ (value >> 28);
}

static uint64_t dc_xxh3_9to16(const uint8_t *input, size_t length, const uint8_t *secret, uint64_t seed) {
    uint64_t low = ((dc_load_le64(secret + 24) ^ dc_load_le64(secret + 32)) + seed) ^ dc_load_le64(input);
    uint64_t high = ((dc_load_le64(secret + 40) ^ dc_load_le64(secret + 48)) - seed) ^ dc_load_le64(input + length - 8);
    uint64_t value = length + dc_swap64(low) + high + dc_fold_multiply(low, high);
    return dc_avalanche(value);
}

/* 17-128 bytes: pairs of 16-byte chunks from both ends, innermost first. */
static uint64_t dc_xxh3_17to128(const uint8_t *input, size_t length, const uint8_t *secret, uint64_t seed) {
    uint64_t acc = length * DC_PRIME64_1;
    size_t rounds = ((length - 1) >> 5) + 1;
    for (size_t round = rounds; round-- > 0;) {
        acc += dc_mix16(input + round * 16, secret + round * 32, seed);
        acc += dc_mix16(input + length - round * 16 - 16, secret + round * 32 + 16, seed);
    }
    return dc_avalanche(acc);
}

/* 129-240 bytes: the first eight chunks, an avalanche, the other chunks, the last 16 bytes. */
static uint64_t dc_xxh3_129to240(const uint8_t *input, size_t length, const uint8_t *secret, uint64_t seed) {
    uint64_t acc = length * DC_PRIME64_1;
    size_t chunks = length >> 4;
    for (size_t chunk = 0; chunk < 8; chunk++) acc += dc_mix16(input + chunk * 16, secret + chunk * 16, seed);
    acc = dc_avalanche(acc);
    for (size_t chunk = 8; chunk < chunks; chunk++) {
        acc += dc_mix16(input + chunk * 16, secret + (chunk - 8) * 16 + 3, seed);
    }
    acc += dc_mix16(input + length - 16, secret + 119, seed);
    return dc_avalanche(acc);
}

/* One 64-byte stripe into the eight accumulators. */
static inline void dc_accumulate(uint64_t acc[8], const uint8_t *stripe, const uint8_t *secret) {
    for (int lane = 0; lane < 8; lane++) {
        uint64_t data = dc_load_le64(stripe + 8 * lane);
        uint64_t keyed = data ^ dc_load_le64(secret + 8 * lane);
        acc[lane ^ 1] += data;
        acc[lane] += (keyed & 0xffffffffu) * (keyed >> 32);
    }
}

static inline void dc_scramble(uint64_t acc[8], const uint8_t *secret) {
    for (int lane = 0; lane < 8; lane++) {
        uint64_t value = acc[lane];
        value ^= value >> 47;
        value ^= dc_load_le64(secret + DC_SECRET_SIZE - 64 + 8 * lane);
        acc[lane] = value * DC_PRIME32_1;
    }
}

/* More than 240 bytes: 1024-byte blocks of 16 stripes (each block but the last followed
 * by a scramble), the last block's full stripes, the last 64 bytes, then a merge. */
static uint64_t dc_xxh3_large(const uint8_t *input, size_t length, const uint8_t *secret) {
    uint64_t acc[8] = { DC_PRIME32_3, DC_PRIME64_1, DC_PRIME64_2, DC_PRIME64_3,
                        DC_PRIME64_4, DC_PRIME32_2, DC_PRIME64_5, DC_PRIME32_1 };
    size_t blocks = (length - 1) / DC_BLOCK;
    for (size_t block = 0; block < blocks; block++) {
        for (size_t stripe = 0; stripe < DC_STRIPES_PER_BLOCK; stripe++) {
            dc_accumulate(acc, input + block * DC_BLOCK + stripe * DC_STRIPE, secret + stripe * 8);
        }
        dc_scramble(acc, secret);
    }
    const uint8_t *last_block = input + blocks * DC_BLOCK;
    size_t last_length = length - blocks * DC_BLOCK;
    size_t full_stripes = (last_length - 1) / DC_STRIPE;
    for (size_t stripe = 0; stripe < full_stripes; stripe++) {
        dc_accumulate(acc, last_block + stripe * DC_STRIPE, secret + stripe * 8);
    }
    dc_accumulate(acc, input + length - DC_STRIPE, secret + DC_SECRET_SIZE - 71);

    uint64_t result = length * DC_PRIME64_1;
    for (int pair = 0; pair < 4; pair++) {
        result += dc_fold_multiply(acc[2 * pair] ^ dc_load_le64(secret + 11 + 16 * pair),
                              acc[2 * pair + 1] ^ dc_load_le64(secret + 11 + 16 * pair + 8));
    }
    return dc_avalanche(result);
}

uint64_t dc_xxh3_64(const void *bytes, size_t length, uint64_t seed) {
    const uint8_t *input = bytes;
    const uint8_t *secret = dc_default_secret;
    if (length == 0) return dc_xxh3_0(secret, seed);
    if (length <= 3) return dc_xxh3_1to3(input, length, secret, seed);
    if (length <= 8) return dc_xxh3_4to8(input, length, secret, seed);
    if (length <= 16) return dc_xxh3_9to16(input, length, secret, seed);
    if (length <= 128) return dc_xxh3_17to128(input, length, secret, seed);
    if (length <= 240) return dc_xxh3_129to240(input, length, secret, seed);
    if (seed == 0) return dc_xxh3_large(input, length, secret);
    // A seeded long input uses a secret derived from the seed: the default secret's
    // 64-bit words, the even ones plus the seed and the odd ones minus it.
    uint8_t derived[DC_SECRET_SIZE];
    for (int word = 0; word < DC_SECRET_SIZE / 8; word++) {
        uint64_t value = dc_load_le64(secret + 8 * word);
        dc_store_le64(derived + 8 * word, (word % 2 == 0) ? value + seed : value - seed);
    }
    return dc_xxh3_large(input, length, derived);
}

uint64_t dc_builtin_xxh3_64(const void *bytes, size_t length, uint64_t seed) {
    return dc_xxh3_64(length ? bytes : NULL, length, seed);
}
