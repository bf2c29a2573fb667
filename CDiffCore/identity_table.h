/* Private: the open-addressing table that groups rows by identity key.
 *
 * A slot is one uint64_t, so a table of 2^k slots for m rows costs 8 * 2^k bytes:
 *   bits 63..32  tag: the high half of the mixed key, to skip most foreign slots
 *                without touching the key array;
 *   bits 31..0   row index + 1 (0 means the slot is empty): the next unpaired old
 *                occurrence of the identity, or its last one once all are paired (the
 *                matcher records that in its occurrence chain, not in the slot).
 * Rows with equal keys but unequal identities (hash collisions, verified by the
 * caller's callback) take separate slots; lookups probe past them. */
#ifndef DC_IDENTITY_TABLE_H
#define DC_IDENTITY_TABLE_H

#include <string.h>

#include "CDiffCore.h"


/* The keys a table compares: the caller's keys under a mask (all 64 bits unless testing
 * with weakened hashes) plus an optional verification of equal keys. */
typedef struct dc_key_view {
    const uint64_t *keys;
    uint64_t mask;
    uint32_t side;
} dc_key_view_t;

typedef struct dc_verifier {
    dc_equal_fn equal;
    void *context;
} dc_verifier_t;

static inline uint64_t dc_key_mask(uint32_t key_bits) {
    return (key_bits == 0 || key_bits >= 64) ? UINT64_MAX : ((UINT64_C(1) << key_bits) - 1);
}

/* Fibonacci hashing: one multiply by an odd constant is a bijection of the key, its high
 * bits pick the slot (so sequential integer ids spread evenly) and both halves fold into
 * the tag. */
#define DC_FIBONACCI UINT64_C(0x9e3779b97f4a7c15)

typedef struct dc_probe {
    uint64_t masked_key; /* the key under the view's mask */
    size_t position;     /* the home slot */
    uint32_t tag;
} dc_probe_t;

static inline dc_probe_t dc_probe_for(const dc_key_view_t *view, size_t row, unsigned shift) {
    dc_probe_t probe;
    probe.masked_key = view->keys[row] & view->mask;
    uint64_t product = probe.masked_key * DC_FIBONACCI;
    probe.position = (size_t)(product >> shift);
    probe.tag = (uint32_t)(product >> 32) ^ (uint32_t)product;
    return probe;
}

/* The shift that maps a 64-bit product to a slot of a table of `capacity` slots. */
static inline unsigned dc_table_shift(size_t capacity) {
    return 64u - (unsigned)__builtin_ctzll((unsigned long long)capacity);
}

/* The smallest power of two that keeps the load factor at most 1/2 (and at least 16). */
static inline size_t dc_table_capacity(size_t rows) {
    size_t capacity = 16;
    while (capacity < 2 * rows) capacity <<= 1;
    return capacity;
}

static inline uint32_t dc_slot_tag(uint64_t slot) { return (uint32_t)(slot >> 32); }
static inline uint32_t dc_slot_field(uint64_t slot) { return (uint32_t)slot; }
static inline size_t dc_field_index(uint32_t field) { return (size_t)field - 1; }
static inline uint64_t dc_make_slot(uint32_t tag, uint32_t field) { return ((uint64_t)tag << 32) | field; }
static inline uint32_t dc_index_field(size_t index) { return (uint32_t)(index + 1); }

/* Whether the slot's representative row (`index` in `owner`) has the identity of row
 * `row` in `probe`: equal masked keys first, then the caller's verification. */
static inline bool dc_same_identity(const dc_key_view_t *owner, size_t index,
                                    const dc_key_view_t *probe, size_t row, uint64_t masked_key,
                                    const dc_verifier_t *verifier) {
    if ((owner->keys[index] & owner->mask) != masked_key) return false;
    return verifier->equal == NULL
        || verifier->equal(verifier->context, owner->side, index, probe->side, row);
}

/* Finds the slot holding the identity of row `row` of `probe_view` (whose probe values
 * are `probe`), or the empty slot where it would go. Returns the slot position; *found
 * tells which. */
static inline size_t dc_table_find(const uint64_t *table, size_t capacity,
                                   const dc_key_view_t *owner, const dc_key_view_t *probe_view,
                                   size_t row, dc_probe_t probe, const dc_verifier_t *verifier,
                                   bool *found) {
    size_t position = probe.position;
    for (;;) {
        uint64_t slot = table[position];
        if (slot == 0) {
            *found = false;
            return position;
        }
        if (dc_slot_tag(slot) == probe.tag
            && dc_same_identity(owner, dc_field_index(dc_slot_field(slot)), probe_view, row,
                                probe.masked_key, verifier)) {
            *found = true;
            return position;
        }
        position = (position + 1) & (capacity - 1);
    }
}

/* How many rows ahead the table passes prefetch their slot: a random slot of a table
 * larger than the cache costs a memory round trip, and this many in flight hide most of it. */
#define DC_PREFETCH_DISTANCE 32

static inline void dc_table_prefetch(const uint64_t *table, const dc_key_view_t *view, size_t row, unsigned shift) {
    __builtin_prefetch(&table[dc_probe_for(view, row, shift).position], 1, 1);
}

#endif
