/* Private: the bit-level helpers several passes share. */
#ifndef DC_BITS_H
#define DC_BITS_H

#include <stddef.h>
#include <stdint.h>

/* For a function compiled once per value of a constant argument, so that each copy tests
 * nothing it does not need. */
#if defined(__GNUC__) || defined(__clang__)
#define DC_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define DC_ALWAYS_INLINE inline
#endif

/* The 128-bit product of a and b, its low half xor its high half: one folded multiply. */
static inline uint64_t dc_fold_multiply(uint64_t a, uint64_t b) {
#ifdef __SIZEOF_INT128__
    __uint128_t product = (__uint128_t)a * b;
    return (uint64_t)product ^ (uint64_t)(product >> 64);
#else
    uint64_t a_lo = (uint32_t)a, a_hi = a >> 32, b_lo = (uint32_t)b, b_hi = b >> 32;
    uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
    uint64_t cross = (lo_lo >> 32) + (uint32_t)hi_lo + lo_hi;
    uint64_t high = (hi_lo >> 32) + (cross >> 32) + hi_hi;
    uint64_t low = (cross << 32) | (uint32_t)lo_lo;
    return low ^ high;
#endif
}

/* Little-endian loads and stores, whatever the machine's byte order and alignment, so that
 * canonical bytes and thus hashes are the same on every machine. */
static inline uint32_t dc_load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t dc_load_le64(const uint8_t *p) {
    return (uint64_t)dc_load_le32(p) | (uint64_t)dc_load_le32(p + 4) << 32;
}

static inline void dc_store_le64(uint8_t *to, uint64_t value) {
    for (int byte = 0; byte < 8; byte++) to[byte] = (uint8_t)(value >> (8 * byte));
}

#endif
