/* Pass 1 (pairing by identity) and the workspace plumbing around it. */
#include <string.h>

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

static inline uint64_t old_keys_masked(const dc_key_view_t *view, size_t row) {
    return view->keys[row] & view->mask;
}

/* Adds `size` to *total rounded up to 8 bytes; false when it would overflow. */
static bool dc_add_region(size_t *total, size_t size) {
    size_t rounded = (size + 7) & ~(size_t)7;
    if (rounded < size || *total > SIZE_MAX - rounded) return false;
    *total += rounded;
    return true;
}

/* Lays the regions out for (old_count, new_count); returns the total or 0 on overflow. */
static size_t dc_layout(size_t old_count, size_t new_count, dc_workspace_t *layout) {
    if (old_count > DC_MAX_ROWS || new_count > DC_MAX_ROWS) return 0;
    size_t capacity = dc_table_capacity(old_count);
    size_t total = 0;
    dc_workspace_t regions = {0};
    regions.table_capacity = capacity;
    if (!dc_add_region(&total, sizeof(dc_workspace_t))) return 0;
    regions.table_offset = total;
    /* After matching, the moves pass reuses this region for 16 bytes an old row (runs and
     * pile tops); size it for whichever is larger. */
    size_t table_bytes = capacity * 8 > old_count * 16 ? capacity * 8 : old_count * 16;
    if (capacity > SIZE_MAX / 8 || !dc_add_region(&total, table_bytes)) return 0;
    regions.old_to_new_offset = total;
    if (!dc_add_region(&total, old_count * 4)) return 0;
    regions.new_to_old_offset = total;
    if (!dc_add_region(&total, new_count * 4)) return 0;
    regions.updated_offset = total;
    if (!dc_add_region(&total, dc_bitmap_words(new_count) * 8)) return 0;
    regions.moved_offset = total;
    if (!dc_add_region(&total, dc_bitmap_words(new_count) * 8)) return 0;
    if (layout) *layout = regions;
    return total;
}

size_t dc_diff_workspace_size(size_t old_count, size_t new_count) {
    return dc_layout(old_count, new_count, NULL);
}

static dc_status_t dc_check_workspace(void *workspace, size_t workspace_size, size_t needed) {
    if (workspace == NULL) return DC_ERR_NULL_POINTER;
    if (((uintptr_t)workspace % 8) != 0) return DC_ERR_WORKSPACE_MISALIGNED;
    if (workspace_size < needed) return DC_ERR_WORKSPACE_TOO_SMALL;
    return DC_OK;
}

dc_status_t dc_match(void *workspace, size_t workspace_size, const dc_match_input_t *input) {
    if (input == NULL) return DC_ERR_NULL_POINTER;
    const size_t m = input->old_count, n = input->new_count;
    if ((m && input->old_keys == NULL) || (n && input->new_keys == NULL)) return DC_ERR_NULL_POINTER;
    if (input->key_bits > 64) return DC_ERR_INVALID_ARGUMENT;
    if (input->key_bits != 0 && input->key_bits < 64 && input->identity_equal == NULL) {
        return DC_ERR_INVALID_ARGUMENT; /* truncated keys are not exact: they need verifying */
    }
    dc_workspace_t layout;
    size_t needed = dc_layout(m, n, &layout);
    if (needed == 0) return DC_ERR_TOO_MANY_ROWS;
    dc_status_t status = dc_check_workspace(workspace, workspace_size, needed);
    if (status != DC_OK) return status;

    dc_workspace_t *ws = (dc_workspace_t *)workspace;
    *ws = layout;
    ws->magic = DC_WORKSPACE_MAGIC;
    ws->old_count = m;
    ws->new_count = n;
    uint32_t *chain = dc_old_to_new(ws); /* next old occurrence of the same identity */
    uint32_t *new_to_old = dc_pairing(ws);
    memset(dc_updated(ws), 0, dc_bitmap_words(n) * 8);
    memset(dc_moved(ws), 0, dc_bitmap_words(n) * 8);

    const dc_key_view_t old_view = { input->old_keys, dc_key_mask(input->key_bits), DC_SIDE_OLD };
    const dc_key_view_t new_view = { input->new_keys, dc_key_mask(input->key_bits), DC_SIDE_NEW };
    dc_verifier_t verifier = { input->identity_equal, input->context, input->collision_budget, 0 };
    const dc_placement_t placement = dc_placement_from_seed(input->placement_seed);

    // pass 1a: the common prefix pairs with itself; in it the k-th occurrences line up
    // on both sides, so no table is needed. (A common suffix does not: an identity that
    // occurs more often on one side pairs its k-th occurrences from the front.)
    size_t prefix = 0;
    const size_t shorter = m < n ? m : n;
    while (prefix < shorter
           && dc_same_identity(&old_view, prefix, &new_view, prefix,
                               input->new_keys[prefix] & new_view.mask, &verifier)) {
        new_to_old[prefix] = (uint32_t)prefix;
        prefix++;
    }
    ws->prefix_length = prefix;

    // pass 1b: index the remaining old rows by identity, last to first, so that each
    // slot ends up at the first occurrence and `chain` links occurrences in old order.
    const size_t old_rest = m - prefix;
    size_t capacity = dc_table_capacity(old_rest); /* never above the size query's */
    const unsigned shift = dc_table_shift(capacity);
    uint64_t *table = dc_table(ws);
    if (old_rest > 0 && n > prefix) {
        memset(table, 0, capacity * 8);
        // Each row's placement is computed once, when its slot is prefetched, and kept in
        // a ring until the row is inserted.
        uint64_t placed_ahead[DC_PREFETCH_DISTANCE];
        const size_t lead = old_rest < DC_PREFETCH_DISTANCE ? old_rest : DC_PREFETCH_DISTANCE;
        for (size_t k = 1; k <= lead; k++) {
            const size_t row = m - k;
            placed_ahead[row % DC_PREFETCH_DISTANCE] = dc_place(old_keys_masked(&old_view, row), &placement);
        }
        for (size_t i = m; i-- > prefix;) {
            const uint64_t placed = placed_ahead[i % DC_PREFETCH_DISTANCE];
            if (i >= prefix + DC_PREFETCH_DISTANCE) {
                const size_t ahead = i - DC_PREFETCH_DISTANCE;
                const uint64_t placed_later = dc_place(old_keys_masked(&old_view, ahead), &placement);
                placed_ahead[ahead % DC_PREFETCH_DISTANCE] = placed_later;
                __builtin_prefetch(&table[placed_later >> shift], 1, 1);
            }
            const dc_probe_t probe = dc_probe_placed(old_keys_masked(&old_view, i), placed, shift);
            bool found;
            size_t position = dc_table_find(table, capacity, &old_view, &old_view, i, probe, &verifier, &found);
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

    // pass 1c: each new row takes the next unpaired old occurrence of its identity.
    // Rows that kept their order are the common case, so a new row first looks at the old
    // row after the previous pair's partner and a few beyond: an old row there whose
    // identity occurs once in old, not yet paired, is its partner (a unique old row pairs
    // with the first new row of its identity; if an earlier new row of that identity turns
    // up in the second half of the pass, it takes the old row over). Sequential reads only.
    // Rows that find nothing there are marked for the table (second half), which then
    // touches only them, prefetched precisely; after several in a row, rows are probed at
    // once (prefetched ahead) until one picks the sequence up where the old rows continue.
    uint64_t *for_table = dc_moved(ws); /* zero here; the moves pass clears it again */
    const uint64_t *const old_keys = input->old_keys, *const new_keys = input->new_keys;
    const uint64_t key_mask = new_view.mask;
    size_t guess = prefix;
    size_t given_up = 0;
    for (size_t j = prefix; j < n; j++) {
        new_to_old[j] = DC_UNPAIRED;
        if (old_rest == 0) continue;
        const uint64_t key = new_keys[j] & key_mask;
        size_t partner = SIZE_MAX;
        if (guess < m && chain[guess] == DC_UNIQUE && (old_keys[guess] & key_mask) == key
            && (verifier.equal == NULL || verifier.equal(verifier.context, DC_SIDE_OLD, guess, DC_SIDE_NEW, j))) {
            partner = guess;
        } else {
            const size_t window_end = m - guess > DC_WINDOW ? guess + DC_WINDOW : m;
            for (size_t i = guess + 1; i < window_end; i++) {
                if (chain[i] == DC_UNIQUE && dc_same_identity(&old_view, i, &new_view, j, key, &verifier)) {
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
                dc_table_prefetch(table, &new_view, j + DC_PREFETCH_DISTANCE, shift, &placement);
            }
            bool found;
            size_t position = dc_table_find(table, capacity, &old_view, &new_view, j,
                                            dc_probe_for(&new_view, j, shift, &placement), &verifier, &found);
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

    // Second half: the marked rows, in new order, through the table; each slot names the
    // first unpaired occurrence of its identity, moving down the chain as they pair.
    dc_bit_cursor_t rows = dc_bit_cursor(for_table, n), ahead = rows;
    size_t prefetched = 0;
    for (size_t j = dc_bit_next(&rows); j != SIZE_MAX; j = dc_bit_next(&rows)) {
        for (; prefetched < DC_PREFETCH_DISTANCE; prefetched++) {
            size_t later = dc_bit_next(&ahead);
            if (later == SIZE_MAX) break;
            dc_table_prefetch(table, &new_view, later, shift, &placement);
        }
        if (prefetched > 0) prefetched--;
        bool found;
        size_t position = dc_table_find(table, capacity, &old_view, &new_view, j,
                                        dc_probe_for(&new_view, j, shift, &placement), &verifier, &found);
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

    // pass 1d: the chain already names each paired old row's partner; it becomes the
    // inverse pairing in place, in one sequential pass.
    uint32_t *old_to_new = chain;
    for (size_t i = 0; i < prefix; i++) old_to_new[i] = (uint32_t)i;
    const bool chained = old_rest > 0 && n > prefix; /* else pass 1b left the chain unset */
    size_t paired = prefix;
    for (size_t i = prefix; i < m; i++) {
        const uint32_t entry = chained ? chain[i] : 0;
        const bool taken = (entry & DC_PAIRED) != 0;
        old_to_new[i] = taken ? entry & ~DC_PAIRED : DC_UNPAIRED;
        paired += taken;
    }
    ws->paired = paired;
    ws->state = DC_STATE_MATCHED;
    return DC_OK;
}

const uint32_t *dc_new_to_old(const void *workspace) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    return ws ? dc_pairing(ws) : NULL;
}

dc_status_t dc_mark_updates_by_hash(void *workspace,
                                    const uint64_t *old_contents, const uint64_t *new_contents,
                                    dc_equal_fn content_equal, void *context) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    if (ws == NULL || ws->state != DC_STATE_MATCHED) return DC_ERR_WRONG_STATE;
    if ((ws->old_count && old_contents == NULL) || (ws->new_count && new_contents == NULL)) {
        return DC_ERR_NULL_POINTER;
    }
    const uint32_t *new_to_old = dc_pairing(ws);
    uint64_t *updated = dc_updated(ws);
    for (size_t j = 0; j < ws->new_count; j++) {
        uint32_t i = new_to_old[j];
        if (i == DC_UNPAIRED) continue;
        bool differs = old_contents[i] != new_contents[j]
            || (content_equal && !content_equal(context, DC_SIDE_OLD, i, DC_SIDE_NEW, j));
        if (differs) dc_bit_set(updated, j);
    }
    return DC_OK;
}

dc_status_t dc_mark_updated(void *workspace, size_t new_index) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    if (ws == NULL || ws->state != DC_STATE_MATCHED) return DC_ERR_WRONG_STATE;
    if (new_index >= ws->new_count || dc_pairing(ws)[new_index] == DC_UNPAIRED) {
        return DC_ERR_INVALID_ARGUMENT;
    }
    dc_bit_set(dc_updated(ws), new_index);
    return DC_OK;
}

bool dc_is_updated(const void *workspace, size_t new_index) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    return ws != NULL && new_index < ws->new_count && dc_bit_get(dc_updated(ws), new_index);
}

static size_t dc_popcount(const uint64_t *bits, size_t words) {
    size_t total = 0;
    for (size_t word = 0; word < words; word++) total += (size_t)__builtin_popcountll(bits[word]);
    return total;
}

dc_status_t dc_finish(void *workspace, dc_move_mode_t mode, dc_counts_t *counts) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    if (ws == NULL || ws->state != DC_STATE_MATCHED) return DC_ERR_WRONG_STATE;
    if (mode != DC_MOVES_MINIMAL && mode != DC_MOVES_DISPLACED && mode != DC_MOVES_NONE) {
        return DC_ERR_INVALID_ARGUMENT;
    }
    dc_compute_moves(ws, mode);

    const size_t paired = ws->paired;
    dc_counts_t result;
    result.paired = paired;
    result.deletions = ws->old_count - paired;
    result.insertions = ws->new_count - paired;
    result.updates = dc_popcount(dc_updated(ws), dc_bitmap_words(ws->new_count));
    result.moves = dc_popcount(dc_moved(ws), dc_bitmap_words(ws->new_count));
#ifdef DC_INTERNAL_CHECKS
    /* old + inserts - deletes == new, and every update and move is a kept pair. */
    if (ws->old_count - result.deletions + result.insertions != ws->new_count) __builtin_trap();
    const uint32_t *new_to_old = dc_pairing(ws);
    size_t counted = 0;
    for (size_t j = 0; j < ws->new_count; j++) {
        bool flagged = dc_bit_get(dc_updated(ws), j) || dc_bit_get(dc_moved(ws), j);
        if (flagged && new_to_old[j] == DC_UNPAIRED) __builtin_trap();
        counted += new_to_old[j] != DC_UNPAIRED;
    }
    if (counted != paired) __builtin_trap();
#endif
    ws->counts = result;
    ws->move_mode = (uint32_t)mode;
    ws->state = DC_STATE_FINISHED;
    if (counts) *counts = result;
    return DC_OK;
}

/* Writes the set bits of `bits` (below `limit`) as (old, new) pairs. */
static void dc_write_pairs(const uint64_t *bits, size_t limit, const uint32_t *new_to_old,
                           int64_t offset, int64_t *out) {
    size_t written = 0;
    dc_bit_cursor_t cursor = dc_bit_cursor(bits, limit);
    for (size_t j = dc_bit_next(&cursor); j != SIZE_MAX; j = dc_bit_next(&cursor)) {
        out[2 * written] = (int64_t)new_to_old[j] + offset;
        out[2 * written + 1] = (int64_t)j + offset;
        written++;
    }
}

/* Writes the `unpaired` indexes whose partner is DC_UNPAIRED. Where they are sparse,
 * blocks without one are skipped with a branch-free test the compiler vectorizes. */
static void dc_write_unpaired(const uint32_t *partner, size_t count, size_t unpaired,
                              int64_t offset, int64_t *out) {
    enum { block = 16 };
    size_t written = 0, index = 0;
    const bool sparse = unpaired < count / (2 * block);
    for (; sparse && index + block <= count; index += block) {
        uint32_t any = 0;
        for (size_t k = 0; k < block; k++) any |= partner[index + k] == DC_UNPAIRED;
        if (!any) continue;
        for (size_t k = 0; k < block; k++) {
            if (partner[index + k] == DC_UNPAIRED) out[written++] = (int64_t)(index + k) + offset;
        }
    }
    // The rest (all of it where unpaired rows are dense) without a branch per row, which
    // would be mispredicted at every unpaired one: each index is stored, and kept only if
    // unpaired. The store stays in bounds while unpaired ones remain to be written.
    for (; index < count && written < unpaired; index++) {
        out[written] = (int64_t)index + offset;
        written += partner[index] == DC_UNPAIRED;
    }
}

dc_status_t dc_read(const void *workspace, size_t index_offset, dc_changeset_buffers_t *out) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_FINISHED);
    if (ws == NULL) return DC_ERR_WRONG_STATE;
    if (out == NULL) return DC_ERR_NULL_POINTER;
    const dc_counts_t *c = &ws->counts;
    if (out->deletions_capacity < c->deletions || out->insertions_capacity < c->insertions
        || out->updates_capacity < c->updates || out->moves_capacity < c->moves) {
        return DC_ERR_CAPACITY_TOO_SMALL;
    }
    if ((c->deletions && out->deletions == NULL) || (c->insertions && out->insertions == NULL)
        || (c->updates && out->updates == NULL) || (c->moves && out->moves == NULL)) {
        return DC_ERR_NULL_POINTER;
    }
    if (index_offset > (size_t)INT64_MAX - DC_MAX_ROWS) return DC_ERR_INVALID_ARGUMENT;
    const int64_t offset = (int64_t)index_offset;
    const uint32_t *old_to_new = dc_old_to_new(ws);
    const uint32_t *new_to_old = dc_pairing(ws);
    if (c->deletions) dc_write_unpaired(old_to_new, ws->old_count, c->deletions, offset, out->deletions);
    if (c->insertions) dc_write_unpaired(new_to_old, ws->new_count, c->insertions, offset, out->insertions);
    if (c->updates) dc_write_pairs(dc_updated(ws), ws->new_count, new_to_old, offset, out->updates);
    if (c->moves) dc_write_pairs(dc_moved(ws), ws->new_count, new_to_old, offset, out->moves);
    return DC_OK;
}

dc_status_t dc_diff(void *workspace, size_t workspace_size, const dc_diff_input_t *input,
                    dc_counts_t *counts) {
    if (input == NULL) return DC_ERR_NULL_POINTER;
    dc_status_t status = dc_match(workspace, workspace_size, &input->match);
    if (status != DC_OK) return status;
    if (input->old_contents != NULL || input->new_contents != NULL) {
        status = dc_mark_updates_by_hash(workspace, input->old_contents, input->new_contents,
                                         input->content_equal, input->match.context);
        if (status != DC_OK) return status;
    }
    return dc_finish(workspace, input->move_mode, counts);
}

size_t dc_repeats_workspace_size(size_t count) {
    if (count > DC_MAX_ROWS) return 0;
    return dc_table_capacity(count) * 8;
}

dc_status_t dc_mark_repeats(void *workspace, size_t workspace_size,
                            const uint64_t *keys, size_t count, uint32_t side,
                            dc_equal_fn identity_equal, void *context, uint32_t key_bits,
                            uint64_t placement_seed, size_t collision_budget,
                            uint8_t *is_repeat, size_t *repeat_count) {
    if (count > DC_MAX_ROWS) return DC_ERR_TOO_MANY_ROWS;
    if (key_bits > 64 || side > DC_SIDE_NEW) return DC_ERR_INVALID_ARGUMENT;
    if (key_bits != 0 && key_bits < 64 && identity_equal == NULL) return DC_ERR_INVALID_ARGUMENT;
    if (repeat_count == NULL || (count && (keys == NULL || is_repeat == NULL))) return DC_ERR_NULL_POINTER;
    size_t capacity = dc_table_capacity(count);
    dc_status_t status = dc_check_workspace(workspace, workspace_size, capacity * 8);
    if (status != DC_OK) return status;

    uint64_t *table = (uint64_t *)workspace;
    memset(table, 0, capacity * 8);
    const dc_key_view_t view = { keys, dc_key_mask(key_bits), side };
    dc_verifier_t verifier = { identity_equal, context, collision_budget, 0 };
    const dc_placement_t placement = dc_placement_from_seed(placement_seed);
    size_t repeats = 0;
    const unsigned shift = dc_table_shift(capacity);
    for (size_t i = 0; i < count; i++) {
        if (i + DC_PREFETCH_DISTANCE < count) {
            dc_table_prefetch(table, &view, i + DC_PREFETCH_DISTANCE, shift, &placement);
        }
        const dc_probe_t probe = dc_probe_for(&view, i, shift, &placement);
        bool found;
        size_t position = dc_table_find(table, capacity, &view, &view, i, probe, &verifier, &found);
        if (position == SIZE_MAX) return DC_ERR_TOO_MANY_COLLISIONS;
        is_repeat[i] = found;
        if (found) {
            repeats++;
        } else {
            table[position] = dc_make_slot(probe.tag, dc_index_field(i));
        }
    }
    *repeat_count = repeats;
    return DC_OK;
}
