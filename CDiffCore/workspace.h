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
    uint32_t segmented;      /* the pairing is held as segments, not per row (see dc_segment_t) */
    uint32_t reserved;
    size_t old_count;
    size_t new_count;
    size_t prefix_length;    /* rows 0 ..< prefix_length are paired with themselves */
    size_t paired;           /* pairs kept so far */
    size_t table_capacity;   /* slots available (the size query's capacity for old_count) */
    size_t segment_count;    /* segmented: segments held */
    size_t walk_segments;    /* segmented: the first ones, from the walk; the rest paired later */
    dc_counts_t counts;      /* valid once finished */
    /* Region offsets from the start of the workspace. */
    size_t table_offset;     /* uint64_t[table_capacity]; after matching, scratch for moves */
    size_t old_to_new_offset; /* uint32_t[old_count]; the occurrence chain while matching */
    size_t new_to_old_offset; /* uint32_t[new_count] */
    size_t updated_offset;   /* uint64_t bitmap over new rows */
    size_t moved_offset;     /* uint64_t bitmap over new rows */
    size_t old_paired_offset; /* uint64_t bitmap over old rows, set where paired (once matched) */
    size_t new_paired_offset; /* uint64_t bitmap over new rows, set where paired (once matched) */
    size_t segments_offset;  /* segmented: dc_segment_t[min(old_count, new_count)] */
} dc_workspace_t;

/* The carried walk (dc_match_carried()) keeps its pairing as
 * segments (dc_segment_t) instead of the two pairing arrays: a walk that pairs long runs of
 * rows then costs a write a run, not two a row, and passes 2 to 4 work a segment at a time.
 * Segments [0, walk_segments) are the walk's and the rest the deferred rows'; each group is
 * in new order. dc_unsegment() writes the arrays out for the passes that need them per row. */

_Static_assert(sizeof(dc_workspace_t) % 8 == 0, "regions after the header stay 8-byte aligned");

/* The moves pass keeps every DC_FENCE_SPACING-th pile top in an array of fences as well,
 * and every DC_FENCE_SPACING-th fence in an array of outer fences (a 256th of the piles'
 * bytes, which stays in cache where the piles of millions of rows do not): a search reads
 * the outer fences, then one cache line of fences and one of piles. */
#define DC_FENCE_SPACING 16

/* Fences of either level for up to `count` entries below them. */
static inline size_t dc_fence_count(size_t count) { return count / DC_FENCE_SPACING + 1; }

static inline size_t dc_bitmap_words(size_t bits) { return (bits + 63) / 64; }

static inline uint8_t *dc_region(void *workspace, size_t offset) { return (uint8_t *)workspace + offset; }

static inline uint64_t *dc_table(dc_workspace_t *ws) { return (uint64_t *)dc_region(ws, ws->table_offset); }
static inline uint32_t *dc_old_to_new(dc_workspace_t *ws) { return (uint32_t *)dc_region(ws, ws->old_to_new_offset); }
static inline uint32_t *dc_pairing(dc_workspace_t *ws) { return (uint32_t *)dc_region(ws, ws->new_to_old_offset); }
static inline uint64_t *dc_updated(dc_workspace_t *ws) { return (uint64_t *)dc_region(ws, ws->updated_offset); }
static inline uint64_t *dc_moved(dc_workspace_t *ws) { return (uint64_t *)dc_region(ws, ws->moved_offset); }
static inline uint64_t *dc_old_paired(dc_workspace_t *ws) { return (uint64_t *)dc_region(ws, ws->old_paired_offset); }
static inline uint64_t *dc_new_paired(dc_workspace_t *ws) { return (uint64_t *)dc_region(ws, ws->new_paired_offset); }
static inline dc_segment_t *dc_segments(dc_workspace_t *ws) { return (dc_segment_t *)dc_region(ws, ws->segments_offset); }

static inline void dc_bit_set(uint64_t *bits, size_t index) { bits[index / 64] |= UINT64_C(1) << (index % 64); }
static inline void dc_bit_clear(uint64_t *bits, size_t index) { bits[index / 64] &= ~(UINT64_C(1) << (index % 64)); }
static inline bool dc_bit_get(const uint64_t *bits, size_t index) { return (bits[index / 64] >> (index % 64)) & 1; }

/* Sets bits [first, first + count) of `bits`. */
static inline void dc_bits_set_range(uint64_t *bits, size_t first, size_t count) {
    if (count == 0) return;
    const size_t last = first + count - 1, first_word = first / 64, last_word = last / 64;
    const uint64_t from_first = UINT64_MAX << (first % 64), to_last = UINT64_MAX >> (63 - last % 64);
    if (first_word == last_word) {
        bits[first_word] |= from_first & to_last;
        return;
    }
    bits[first_word] |= from_first;
    for (size_t word = first_word + 1; word < last_word; word++) bits[word] = UINT64_MAX;
    bits[last_word] |= to_last;
}

/* Whether new row j is paired: both forms of the pairing keep the bitmap of paired rows. */
static inline bool dc_new_is_paired(dc_workspace_t *ws, size_t j) {
    return dc_bit_get(dc_new_paired(ws), j);
}

/* Word `word` of a bitmap of `count` bits, inverted: its clear bits below `count` set. */
static inline uint64_t dc_clear_bits_of_word(const uint64_t *bits, size_t count, size_t word) {
    const uint64_t clear = ~bits[word];
    return word == count / 64 ? clear & ((UINT64_C(1) << (count % 64)) - 1) : clear;
}

/* Writes the complement of a bitmap of `count` bits (its clear bits below `count`) to `to`,
 * which may be `from`. */
static inline void dc_complement_bits(uint64_t *to, const uint64_t *from, size_t count) {
    for (size_t word = 0; word < dc_bitmap_words(count); word++) to[word] = dc_clear_bits_of_word(from, count, word);
}

/* The number of set bits in the first `words` words of a bitmap. */
static inline size_t dc_popcount(const uint64_t *bits, size_t words) {
    size_t total = 0;
    for (size_t word = 0; word < words; word++) total += (size_t)__builtin_popcountll(bits[word]);
    return total;
}

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

/* Checks that `workspace` is there, aligned and at least `needed` bytes (workspace.c). */
dc_status_t dc_check_workspace(void *workspace, size_t workspace_size, size_t needed);

/* Lays a workspace out for the counts, after checking it, and clears what the passes
 * expect cleared; the state stays empty until dc_match() completes (workspace.c). */
dc_status_t dc_workspace_start(void *workspace, size_t workspace_size, size_t old_count, size_t new_count,
                               dc_workspace_t **started);

/* Pass 3: moves for a mode (moves.c). */
void dc_compute_moves(dc_workspace_t *ws, dc_move_mode_t mode);

/* Writes a segmented workspace's pairing out per row (the two pairing arrays); a workspace
 * not segmented is left as it is (segments.c). */
void dc_unsegment(dc_workspace_t *ws);

/* ---------------------------------------------------------------------------
 * Internal checks: with DC_INTERNAL_CHECKS (the fuzzers build with it), each invariant
 * that fails names itself on stderr and aborts; without it, they cost nothing.
 * ------------------------------------------------------------------------- */
#ifdef DC_INTERNAL_CHECKS
#include <stdio.h>
#include <stdlib.h>
#define DC_CHECK(condition, invariant) \
    do { \
        if (!(condition)) { \
            fprintf(stderr, "CDiffCore: internal check failed: %s (%s:%d)\n", invariant, __FILE__, __LINE__); \
            abort(); \
        } \
    } while (0)

/* After pass 1: the two pairings are inverse, and with exact keys each key's pairs keep
 * the order of their occurrences (the k-th with the k-th; quadratic, so small inputs only). */
static inline void dc_check_matched(dc_workspace_t *ws, const dc_match_input_t *input, uint64_t mask) {
    const uint32_t *old_to_new = dc_old_to_new(ws), *new_to_old = dc_pairing(ws);
    size_t paired_new = 0;
    for (size_t j = 0; j < ws->new_count; j++) {
        if (new_to_old[j] == DC_UNPAIRED) continue;
        paired_new++;
        DC_CHECK(new_to_old[j] < ws->old_count && old_to_new[new_to_old[j]] == j, "old/new pairing not inverse");
    }
    DC_CHECK(paired_new == ws->paired, "paired count differs from the pairing");
    for (size_t i = 0; i < ws->old_count; i++) {
        DC_CHECK(dc_bit_get(dc_old_paired(ws), i) == (old_to_new[i] != DC_UNPAIRED), "old paired bits differ from the pairing");
    }
    for (size_t j = 0; j < ws->new_count; j++) {
        DC_CHECK(dc_bit_get(dc_new_paired(ws), j) == (new_to_old[j] != DC_UNPAIRED), "new paired bits differ from the pairing");
    }
    DC_CHECK(dc_popcount(dc_old_paired(ws), dc_bitmap_words(ws->old_count)) == ws->paired
             && dc_popcount(dc_new_paired(ws), dc_bitmap_words(ws->new_count)) == ws->paired, "paired bits past the rows");
    if (input->identity_equal != NULL || ws->old_count + ws->new_count > 4096) return;
    for (size_t j = 0; j < ws->new_count; j++) {
        for (size_t later = j + 1; later < ws->new_count; later++) {
            if (new_to_old[j] == DC_UNPAIRED || new_to_old[later] == DC_UNPAIRED) continue;
            if ((input->new_keys[j] & mask) != (input->new_keys[later] & mask)) continue;
            DC_CHECK(new_to_old[j] < new_to_old[later], "k-th occurrences of a key not paired in order");
        }
    }
}

/* A segmented pairing: the segments lie within both sides, cover exactly the rows the two
 * bitmaps mark paired (so no two overlap), count the pairs, and each group is in new order. */
static inline void dc_check_segments(dc_workspace_t *ws) {
    const dc_segment_t *segments = dc_segments(ws);
    DC_CHECK(ws->walk_segments <= ws->segment_count, "more walk segments than segments");
    size_t total = 0;
    for (size_t s = 0; s < ws->segment_count; s++) {
        const dc_segment_t segment = segments[s];
        DC_CHECK(segment.length > 0 && segment.old_start + (size_t)segment.length <= ws->old_count
                 && segment.new_start + (size_t)segment.length <= ws->new_count, "a segment out of range");
        for (uint32_t k = 0; k < segment.length; k++) {
            DC_CHECK(dc_bit_get(dc_old_paired(ws), segment.old_start + k) && dc_bit_get(dc_new_paired(ws), segment.new_start + k),
                     "a segment's rows are not marked paired");
        }
        total += segment.length;
        if (s > 0 && s != ws->walk_segments) {
            DC_CHECK(segments[s - 1].new_start + (size_t)segments[s - 1].length <= segment.new_start, "segments out of new order");
        }
    }
    DC_CHECK(total == ws->paired, "paired count differs from the segments");
    DC_CHECK(dc_popcount(dc_old_paired(ws), dc_bitmap_words(ws->old_count)) == total
             && dc_popcount(dc_new_paired(ws), dc_bitmap_words(ws->new_count)) == total, "segments overlap");
}

/* After pass 3: old + inserts - deletes == new; every update and move is a kept pair; in
 * minimal and none modes the rows that stay have increasing new indexes in old order. */
static inline void dc_check_finished(dc_workspace_t *ws, const dc_counts_t *counts, dc_move_mode_t mode) {
    DC_CHECK(ws->old_count - counts->deletions + counts->insertions == ws->new_count, "old + inserts - deletes != new");
    if (ws->segmented) {
        dc_check_segments(ws);
        for (size_t j = 0; j < ws->new_count; j++) {
            bool flagged = dc_bit_get(dc_updated(ws), j) || dc_bit_get(dc_moved(ws), j);
            DC_CHECK(!flagged || dc_bit_get(dc_new_paired(ws), j), "an update or move of an unpaired row");
        }
        DC_CHECK(ws->paired == counts->paired, "kept pairs miscounted");
        if (ws->segment_count > 2048) return;
        // The segments in old order (quadratic, so small inputs only).
        size_t last = SIZE_MAX, after = 0;
        for (size_t visited = 0; visited < ws->segment_count; visited++) {
            const dc_segment_t *next = NULL;
            for (size_t s = 0; s < ws->segment_count; s++) {
                const dc_segment_t *segment = &dc_segments(ws)[s];
                if (segment->old_start >= after && (next == NULL || segment->old_start < next->old_start)) next = segment;
            }
            for (uint32_t k = 0; k < next->length; k++) {
                const size_t j = next->new_start + k;
                if (dc_bit_get(dc_moved(ws), j)) continue;
                DC_CHECK(last == SIZE_MAX || j > last, "rows that stay are not in increasing order");
                last = j;
            }
            after = next->old_start + 1;
        }
        return;
    }
    const uint32_t *new_to_old = dc_pairing(ws), *old_to_new = dc_old_to_new(ws);
    size_t counted = 0;
    for (size_t j = 0; j < ws->new_count; j++) {
        bool flagged = dc_bit_get(dc_updated(ws), j) || dc_bit_get(dc_moved(ws), j);
        DC_CHECK(!flagged || new_to_old[j] != DC_UNPAIRED, "an update or move of an unpaired row");
        counted += new_to_old[j] != DC_UNPAIRED;
    }
    DC_CHECK(counted == counts->paired, "kept pairs miscounted");
    if (mode == DC_MOVES_DISPLACED) return;
    size_t last = SIZE_MAX;
    for (size_t i = 0; i < ws->old_count; i++) {
        uint32_t j = old_to_new[i];
        if (j == DC_UNPAIRED || dc_bit_get(dc_moved(ws), j)) continue;
        DC_CHECK(last == SIZE_MAX || j > last, "rows that stay are not in increasing order");
        last = j;
    }
}

/* A list written by dc_read() (every `stride`-th value) is strictly ascending. */
static inline void dc_check_ascending(const int64_t *values, size_t count, size_t stride, const char *invariant) {
    for (size_t k = 1; k < count; k++) DC_CHECK(values[k * stride] > values[(k - 1) * stride], invariant);
}
#else
#define DC_CHECK(condition, invariant) ((void)0)
static inline void dc_check_segments(dc_workspace_t *ws) { (void)ws; }
static inline void dc_check_matched(dc_workspace_t *ws, const dc_match_input_t *input, uint64_t mask) {
    (void)ws; (void)input; (void)mask;
}
static inline void dc_check_finished(dc_workspace_t *ws, const dc_counts_t *counts, dc_move_mode_t mode) {
    (void)ws; (void)counts; (void)mode;
}
static inline void dc_check_ascending(const int64_t *values, size_t count, size_t stride, const char *invariant) {
    (void)values; (void)count; (void)stride; (void)invariant;
}
#endif

#endif
