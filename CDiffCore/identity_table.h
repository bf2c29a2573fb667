/* Private: the open-addressing table that groups rows by identity key.
 *
 * A slot is one uint64_t, so a table of 2^k slots for m rows costs 8 * 2^k bytes:
 *   bits 63..32  tag: the high half of the mixed key, to skip most foreign slots
 *                without touching the key array;
 *   bit  31      exhausted: every old occurrence of this identity is already paired;
 *   bits 30..0   row index + 1 (0 in every bit means the slot is empty).
 * Rows with equal keys but unequal identities (hash collisions, verified by the
 * caller's callback) take separate slots; lookups probe past them. */
#ifndef DC_IDENTITY_TABLE_H
#define DC_IDENTITY_TABLE_H

#include <string.h>

#include "CDiffCore.h"

#define DC_SLOT_EXHAUSTED 0x80000000u
#define DC_SLOT_INDEX_MASK 0x7fffffffu

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

/* A bijective mixer (MurmurHash3's finalizer): exact keys such as sequential integers
 * spread over the table, and distinct keys never mix to one value. */
static inline uint64_t dc_mix(uint64_t key) {
    key ^= key >> 33;
    key *= UINT64_C(0xff51afd7ed558ccd);
    key ^= key >> 33;
    key *= UINT64_C(0xc4ceb9fe1a85ec53);
    key ^= key >> 33;
    return key;
}

/* The smallest power of two that keeps the load factor at most 1/2 (and at least 16). */
static inline size_t dc_table_capacity(size_t rows) {
    size_t capacity = 16;
    while (capacity < 2 * rows) capacity <<= 1;
    return capacity;
}

static inline uint32_t dc_slot_tag(uint64_t slot) { return (uint32_t)(slot >> 32); }
static inline uint32_t dc_slot_field(uint64_t slot) { return (uint32_t)slot; }
static inline size_t dc_field_index(uint32_t field) { return (size_t)(field & DC_SLOT_INDEX_MASK) - 1; }
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

/* Finds the slot holding the identity of row `row` of `probe`, or the empty slot where it
 * would go. Returns the slot position; *found tells which. */
static inline size_t dc_table_find(const uint64_t *table, size_t capacity,
                                   const dc_key_view_t *owner, const dc_key_view_t *probe,
                                   size_t row, const dc_verifier_t *verifier, bool *found) {
    uint64_t masked_key = probe->keys[row] & probe->mask;
    uint64_t mixed = dc_mix(masked_key);
    uint32_t tag = (uint32_t)(mixed >> 32);
    size_t position = (size_t)mixed & (capacity - 1);
    for (;;) {
        uint64_t slot = table[position];
        if (slot == 0) {
            *found = false;
            return position;
        }
        if (dc_slot_tag(slot) == tag
            && dc_same_identity(owner, dc_field_index(dc_slot_field(slot)), probe, row, masked_key, verifier)) {
            *found = true;
            return position;
        }
        position = (position + 1) & (capacity - 1);
    }
}

static inline uint32_t dc_key_tag(const dc_key_view_t *view, size_t row) {
    return (uint32_t)(dc_mix(view->keys[row] & view->mask) >> 32);
}

#endif
