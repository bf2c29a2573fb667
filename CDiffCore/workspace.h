/* Private: the layout of a diff workspace. The caller owns the memory; the core carves
 * it into regions, each 8-byte aligned, sized for the counts given to the size query. */
#ifndef DC_WORKSPACE_H
#define DC_WORKSPACE_H

#include "CDiffCore.h"

#define DC_WORKSPACE_MAGIC UINT64_C(0x44436469666677ac)

enum dc_state { DC_STATE_EMPTY = 0, DC_STATE_MATCHED = 1, DC_STATE_FINISHED = 2 };

typedef struct dc_workspace {
    uint64_t magic;          /* set by dc_match(), so a stray pointer is refused later */
    uint32_t state;          /* enum dc_state */
    uint32_t move_mode;      /* the mode dc_finish() ran with */
    size_t old_count;
    size_t new_count;
    size_t prefix_length;    /* rows 0 ..< prefix_length are paired with themselves */
    size_t paired;           /* pairs kept so far */
    size_t table_capacity;   /* slots available (the size query's capacity for old_count) */
    dc_counts_t counts;      /* valid once finished */
    /* Region offsets from the start of the workspace. */
    size_t table_offset;     /* uint64_t[table_capacity]; after matching, scratch for moves */
    size_t old_to_new_offset; /* uint32_t[old_count]; the occurrence chain while matching */
    size_t new_to_old_offset; /* uint32_t[new_count] */
    size_t updated_offset;   /* uint64_t bitmap over new rows */
    size_t moved_offset;     /* uint64_t bitmap over new rows */
} dc_workspace_t;

_Static_assert(sizeof(dc_workspace_t) % 8 == 0, "regions after the header stay 8-byte aligned");

static inline size_t dc_bitmap_words(size_t bits) { return (bits + 63) / 64; }

static inline uint8_t *dc_region(void *workspace, size_t offset) { return (uint8_t *)workspace + offset; }

static inline uint64_t *dc_table(dc_workspace_t *ws) { return (uint64_t *)dc_region(ws, ws->table_offset); }
static inline uint32_t *dc_old_to_new(dc_workspace_t *ws) { return (uint32_t *)dc_region(ws, ws->old_to_new_offset); }
static inline uint32_t *dc_pairing(dc_workspace_t *ws) { return (uint32_t *)dc_region(ws, ws->new_to_old_offset); }
static inline uint64_t *dc_updated(dc_workspace_t *ws) { return (uint64_t *)dc_region(ws, ws->updated_offset); }
static inline uint64_t *dc_moved(dc_workspace_t *ws) { return (uint64_t *)dc_region(ws, ws->moved_offset); }

static inline void dc_bit_set(uint64_t *bits, size_t index) { bits[index / 64] |= UINT64_C(1) << (index % 64); }
static inline void dc_bit_clear(uint64_t *bits, size_t index) { bits[index / 64] &= ~(UINT64_C(1) << (index % 64)); }
static inline bool dc_bit_get(const uint64_t *bits, size_t index) { return (bits[index / 64] >> (index % 64)) & 1; }

/* Walks the set bits of a bitmap in increasing order. */
typedef struct dc_bit_cursor {
    const uint64_t *bits;
    size_t words;
    size_t word;
    uint64_t remaining;
} dc_bit_cursor_t;

static inline dc_bit_cursor_t dc_bit_cursor(const uint64_t *bits, size_t count) {
    dc_bit_cursor_t cursor = { bits, dc_bitmap_words(count), 0, count ? bits[0] : 0 };
    return cursor;
}

/* The next set bit's index, or SIZE_MAX after the last. */
static inline size_t dc_bit_next(dc_bit_cursor_t *cursor) {
    while (cursor->remaining == 0) {
        if (++cursor->word >= cursor->words) return SIZE_MAX;
        cursor->remaining = cursor->bits[cursor->word];
    }
    size_t index = cursor->word * 64 + (size_t)__builtin_ctzll(cursor->remaining);
    cursor->remaining &= cursor->remaining - 1;
    return index;
}

/* Returns the workspace if it carries a diff in at least `state`, else NULL. */
static inline dc_workspace_t *dc_workspace_in_state(const void *workspace, uint32_t state) {
    if (workspace == NULL || ((uintptr_t)workspace % 8) != 0) return NULL;
    dc_workspace_t *ws = (dc_workspace_t *)workspace;
    if (ws->magic != DC_WORKSPACE_MAGIC || ws->state < state) return NULL;
    return ws;
}

/* Moves computation (moves.c). */
void dc_compute_moves(dc_workspace_t *ws, dc_move_mode_t mode);

#endif
