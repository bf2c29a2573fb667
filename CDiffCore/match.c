/* Pass 1: pairing old and new rows by identity (the k-th old occurrence of an identity
 * with its k-th new occurrence). dc_match() reads as its table of contents; each
 * sub-pass below says what it does and what it relies on from the ones before. */
#include <string.h>

#include "CDiffCoreTesting.h"
#include "identity_table.h"
#include "workspace.h"

/* The occurrence chain holds, for each old row (row indexes stay below DC_MAX_ROWS):
 *   an old index         unpaired; the next old occurrence of its identity;
 *   DC_LAST_OF_SEVERAL   unpaired; the last of several occurrences;
 *   DC_UNIQUE            unpaired; its identity occurs nowhere else in the old rows;
 *   DC_PAIRED | j        paired with new row j. */
#define DC_LAST_OF_SEVERAL UINT32_C(0x7ffffffe)
#define DC_UNIQUE UINT32_C(0x7fffffff)
#define DC_PAIRED UINT32_C(0x80000000)
_Static_assert(DC_MAX_ROWS <= DC_LAST_OF_SEVERAL, "row indexes never reach the chain's markers");

/* How many old rows from the expected one pass 1c compares before giving a new row up to
 * the table (so a few deleted or moved-away old rows do not break the sequence), and how
 * many rows in a row it gives up before it probes rows at once to find where the
 * sequence went. */
#define DC_WINDOW 4
#define DC_RESYNC_AFTER 4

/* Everything the sub-passes share. */
typedef struct dc_matcher {
    dc_workspace_t *ws;
    size_t m, n;
    uint32_t *chain;          /* by old row: the occurrence chain (see above) */
    uint32_t *new_to_old;     /* by new row: the paired old row, or DC_UNPAIRED */
    dc_key_view_t old_view, new_view;
    dc_verifier_t verifier;
    dc_placement_t placement;
    size_t prefix;            /* set by pass 1a */
    uint64_t *table;          /* the identity table of the old rows after the prefix */
    size_t capacity;
    unsigned shift;
} dc_matcher_t;

static inline uint64_t dc_masked_key(const dc_key_view_t *view, size_t row) {
    return view->keys[row] & view->mask;
}

/* Whether passes 1b-1d run at all: rows remain on both sides after the prefix. */
static inline bool dc_chained(const dc_matcher_t *mt) {
    return mt->m > mt->prefix && mt->n > mt->prefix;
}

/* pass 1a: the common prefix pairs with itself; in it the k-th occurrences line up
 * on both sides, so no table is needed. (A common suffix does not: an identity that
 * occurs more often on one side pairs its k-th occurrences from the front.) */
static void dc_pair_prefix(dc_matcher_t *mt) {
    size_t prefix = 0;
    const size_t m = mt->m, n = mt->n;
    uint32_t *new_to_old = mt->new_to_old;
    const size_t shorter = m < n ? m : n;
    while (prefix < shorter
           && dc_same_identity(&mt->old_view, prefix, &mt->new_view, prefix,
                               mt->new_view.keys[prefix] & mt->new_view.mask, &mt->verifier)) {
        new_to_old[prefix] = (uint32_t)prefix;
        prefix++;
    }
    mt->prefix = prefix;
    mt->ws->prefix_length = prefix;
}

/* pass 1b: index the remaining old rows by identity, last to first, so that each
 * slot ends up at the first occurrence and `chain` links occurrences in old order. */
static dc_status_t dc_index_old_rows(dc_matcher_t *mt) {
    const size_t m = mt->m, prefix = mt->prefix, old_rest = m - prefix;
    const unsigned shift = mt->shift;
    const size_t capacity = mt->capacity;
    uint64_t *table = mt->table;
    uint32_t *chain = mt->chain;
    if (dc_chained(mt)) {
        memset(table, 0, capacity * 8);
        // Each row's placement is computed once, when its slot is prefetched, and kept in
        // a ring until the row is inserted.
        uint64_t placed_ahead[DC_PREFETCH_DISTANCE];
        const size_t lead = old_rest < DC_PREFETCH_DISTANCE ? old_rest : DC_PREFETCH_DISTANCE;
        for (size_t k = 1; k <= lead; k++) {
            const size_t row = m - k;
            placed_ahead[row % DC_PREFETCH_DISTANCE] = dc_place(dc_masked_key(&mt->old_view, row), &mt->placement);
        }
        for (size_t i = m; i-- > prefix;) {
            const uint64_t placed = placed_ahead[i % DC_PREFETCH_DISTANCE];
            if (i >= prefix + DC_PREFETCH_DISTANCE) {
                const size_t ahead = i - DC_PREFETCH_DISTANCE;
                const uint64_t placed_later = dc_place(dc_masked_key(&mt->old_view, ahead), &mt->placement);
                placed_ahead[ahead % DC_PREFETCH_DISTANCE] = placed_later;
                __builtin_prefetch(&table[placed_later >> shift], 1, 1);
            }
            const dc_probe_t probe = dc_probe_placed(dc_masked_key(&mt->old_view, i), placed, shift);
            bool found;
            size_t position = dc_table_find(table, capacity, &mt->old_view, &mt->old_view, i, probe, &mt->verifier, &found);
            if (position == SIZE_MAX) return DC_ERR_TOO_MANY_COLLISIONS;
            if (found) {
                size_t next = dc_field_index(dc_slot_field(table[position]));
                if (chain[next] == DC_UNIQUE) chain[next] = DC_LAST_OF_SEVERAL;
                chain[i] = (uint32_t)next;
            } else {
                chain[i] = DC_UNIQUE;
            }
            table[position] = dc_make_slot(probe.tag, dc_index_field(i));
        }
    }
    return DC_OK;
}

/* pass 1c: each new row takes the next unpaired old occurrence of its identity.
 * Rows that kept their order are the common case, so a new row first looks at the old
 * row after the previous pair's partner and a few beyond: an old row there whose
 * identity occurs once in old, not yet paired, is its partner (a unique old row pairs
 * with the first new row of its identity; if an earlier new row of that identity turns
 * up in the second half of the pass, it takes the old row over). Sequential reads only.
 * Rows that find nothing there are marked for the table (second half), which then
 * touches only them, prefetched precisely; after several in a row, rows are probed at
 * once (prefetched ahead) until one picks the sequence up where the old rows continue. */
static dc_status_t dc_pair_in_sequence(dc_matcher_t *mt) {
    const size_t m = mt->m, n = mt->n, prefix = mt->prefix, old_rest = m - prefix;
    const unsigned shift = mt->shift;
    const size_t capacity = mt->capacity;
    uint64_t *table = mt->table;
    uint32_t *chain = mt->chain, *new_to_old = mt->new_to_old;
    uint64_t *for_table = dc_moved(mt->ws); /* zero here; the moves pass clears it again */
    const uint64_t *const old_keys = mt->old_view.keys, *const new_keys = mt->new_view.keys;
    const uint64_t key_mask = mt->new_view.mask;
    size_t guess = prefix;
    size_t given_up = 0;
    const bool verified = mt->verifier.equal != NULL;
    enum { block = 16 };
    size_t rows_before_block = 0, block_wait = block;
    for (size_t j = prefix; j < n; j++) {
        if (old_rest == 0) {
            new_to_old[j] = DC_UNPAIRED;
            continue;
        }
        // A block at a time while whole blocks continue the sequence (branch-free,
        // vectorized): the same pairs the row-by-row test below would make, one by one.
        // After a block that does not, rows go row by row for a while first, twice as
        // long after each such block in a row (short runs never pay for block tests).
        while (!verified && given_up == 0 && rows_before_block == 0 && n - j >= block && m - guess >= block) {
            uint64_t differ = 0;
            uint32_t shared = 0;
            for (size_t k = 0; k < block; k++) {
                differ |= old_keys[guess + k] ^ new_keys[j + k];
                shared |= chain[guess + k] ^ DC_UNIQUE;
            }
            if ((differ & key_mask) != 0 || shared != 0) {
                rows_before_block = block_wait;
                if (block_wait < 64 * block) block_wait *= 2;
                break;
            }
            block_wait = block;
            for (size_t k = 0; k < block; k++) {
                new_to_old[j + k] = (uint32_t)(guess + k);
                chain[guess + k] = DC_PAIRED | (uint32_t)(j + k);
            }
            guess += block;
            j += block;
        }
        if (j == n) break;
        if (rows_before_block) rows_before_block--;
        new_to_old[j] = DC_UNPAIRED;
        const uint64_t key = new_keys[j] & key_mask;
        size_t partner = SIZE_MAX;
        if (guess < m && chain[guess] == DC_UNIQUE && (old_keys[guess] & key_mask) == key
            && (mt->verifier.equal == NULL || mt->verifier.equal(mt->verifier.context, DC_SIDE_OLD, guess, DC_SIDE_NEW, j))) {
            partner = guess;
        } else {
            const size_t window_end = m - guess > DC_WINDOW ? guess + DC_WINDOW : m;
            for (size_t i = guess + 1; i < window_end; i++) {
                if (chain[i] == DC_UNIQUE && dc_same_identity(&mt->old_view, i, &mt->new_view, j, key, &mt->verifier)) {
                    partner = i;
                    break;
                }
            }
        }
        if (partner == SIZE_MAX && given_up >= DC_RESYNC_AFTER) {
            // Off the sequence for a while (a run of inserted or moved rows, or new rows
            // in another order altogether): probe each row at once, prefetching ahead as
            // long as the run lasts.
            if (j + DC_PREFETCH_DISTANCE < n) {
                dc_table_prefetch(table, &mt->new_view, j + DC_PREFETCH_DISTANCE, shift, &mt->placement);
            }
            bool found;
            size_t position = dc_table_find(table, capacity, &mt->old_view, &mt->new_view, j,
                                            dc_probe_for(&mt->new_view, j, shift, &mt->placement), &mt->verifier, &found);
            if (position == SIZE_MAX) return DC_ERR_TOO_MANY_COLLISIONS;
            if (!found) continue; /* in no old row: an insertion */
            size_t first = dc_field_index(dc_slot_field(table[position]));
            if (chain[first] == DC_UNIQUE) partner = first;
        }
        if (partner == SIZE_MAX) {
            dc_bit_set(for_table, j);
            given_up++;
            continue;
        }
        new_to_old[j] = (uint32_t)partner;
        chain[partner] = DC_PAIRED | (uint32_t)j;
        guess = partner + 1;
        given_up = 0;
    }
    return DC_OK;
}

/* pass 1d: the marked rows, in new order, through the table; each slot names the
 * first unpaired occurrence of its identity, moving down the chain as they pair. */
static dc_status_t dc_pair_through_table(dc_matcher_t *mt) {
    const size_t n = mt->n;
    const unsigned shift = mt->shift;
    const size_t capacity = mt->capacity;
    uint64_t *table = mt->table;
    uint32_t *chain = mt->chain, *new_to_old = mt->new_to_old;
    uint64_t *for_table = dc_moved(mt->ws);
    dc_bit_cursor_t rows = dc_bit_cursor(for_table, n), ahead = rows;
    size_t prefetched = 0;
    for (size_t j = dc_bit_next(&rows); j != SIZE_MAX; j = dc_bit_next(&rows)) {
        for (; prefetched < DC_PREFETCH_DISTANCE; prefetched++) {
            size_t later = dc_bit_next(&ahead);
            if (later == SIZE_MAX) break;
            dc_table_prefetch(table, &mt->new_view, later, shift, &mt->placement);
        }
        if (prefetched > 0) prefetched--;
        bool found;
        size_t position = dc_table_find(table, capacity, &mt->old_view, &mt->new_view, j,
                                        dc_probe_for(&mt->new_view, j, shift, &mt->placement), &mt->verifier, &found);
        if (position == SIZE_MAX) return DC_ERR_TOO_MANY_COLLISIONS;
        if (!found) continue;
        size_t first = dc_field_index(dc_slot_field(table[position]));
        uint32_t entry = chain[first];
        if (entry & DC_PAIRED) {
            // Taken: either the last occurrence, by an earlier new row (nothing left for
            // this one), or a unique row taken in the first half by a later new row of the
            // same identity, which gives it up to this one (the first of its identity).
            size_t taker = entry & ~DC_PAIRED;
            if (taker < j) continue;
            new_to_old[taker] = DC_UNPAIRED;
        } else if (entry < DC_LAST_OF_SEVERAL) {
            table[position] = dc_make_slot(dc_slot_tag(table[position]), dc_index_field(entry));
        }
        // At the last occurrence the slot stays (it still names the identity for verifying
        // later probes) and the chain entry says it is taken.
        new_to_old[j] = (uint32_t)first;
        chain[first] = DC_PAIRED | (uint32_t)j;
    }
    memset(for_table, 0, dc_bitmap_words(n) * 8);
    return DC_OK;
}

/* pass 1e: the chain already names each paired old row's partner; it becomes the
 * inverse pairing in place, in one sequential pass. */
static void dc_invert_chain(dc_matcher_t *mt) {
    const size_t m = mt->m, prefix = mt->prefix;
    uint32_t *chain = mt->chain, *old_to_new = chain;
    for (size_t i = 0; i < prefix; i++) old_to_new[i] = (uint32_t)i;
    const bool chained = dc_chained(mt); /* else pass 1b left the chain unset */
    size_t paired = prefix;
    for (size_t i = prefix; i < m; i++) {
        const uint32_t entry = chained ? chain[i] : 0;
        const bool taken = (entry & DC_PAIRED) != 0;
        old_to_new[i] = taken ? entry & ~DC_PAIRED : DC_UNPAIRED;
        paired += taken;
    }
    mt->ws->paired = paired;
}

dc_status_t dc_match(void *workspace, size_t workspace_size, const dc_match_input_t *input) {
    return dc_match_weakened(workspace, workspace_size, input, 0);
}

dc_status_t dc_match_weakened(void *workspace, size_t workspace_size, const dc_match_input_t *input,
                              uint32_t key_bits) {
    if (input == NULL) return DC_ERR_NULL_POINTER;
    const size_t m = input->old_count, n = input->new_count;
    if ((m && input->old_keys == NULL) || (n && input->new_keys == NULL)) return DC_ERR_NULL_POINTER;
    if (key_bits > 64) return DC_ERR_INVALID_ARGUMENT;
    if (key_bits != 0 && key_bits < 64 && input->identity_equal == NULL) {
        return DC_ERR_INVALID_ARGUMENT; /* truncated keys are not exact: they need verifying */
    }
    dc_workspace_t *ws;
    dc_status_t status = dc_workspace_start(workspace, workspace_size, m, n, &ws);
    if (status != DC_OK) return status;

    const uint64_t mask = dc_key_mask(key_bits);
    dc_matcher_t mt = {
        .ws = ws, .m = m, .n = n, .chain = dc_old_to_new(ws), .new_to_old = dc_pairing(ws),
        .old_view = { input->old_keys, mask, DC_SIDE_OLD }, .new_view = { input->new_keys, mask, DC_SIDE_NEW },
        .verifier = { input->identity_equal, input->context, input->collision_budget, 0 },
        .placement = dc_placement_from_seed(input->placement_seed),
    };
    dc_pair_prefix(&mt);                                       /* 1a */
    mt.capacity = dc_table_capacity(m - mt.prefix);            /* never above the size query's */
    mt.shift = dc_table_shift(mt.capacity);
    mt.table = dc_table(ws);
    if ((status = dc_index_old_rows(&mt)) != DC_OK) return status;      /* 1b */
    if ((status = dc_pair_in_sequence(&mt)) != DC_OK) return status;    /* 1c */
    if ((status = dc_pair_through_table(&mt)) != DC_OK) return status;  /* 1d */
    dc_invert_chain(&mt);                                      /* 1e */
    dc_check_matched(ws, input, mask);
    ws->state = DC_STATE_MATCHED;
    return DC_OK;
}
