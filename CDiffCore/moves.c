/* Pass 3: which paired rows moved, for each move mode (SPEC.md section 3). */
#include <string.h>

#include "workspace.h"

#define DC_NO_ROW UINT32_MAX

/* minimal and none: marks as moved every paired row off one longest increasing
 * subsequence of the new indexes taken in old order. Patience sorting, O(k log k); a row
 * that extends the longest pile or replaces its top costs O(1), so input that is mostly
 * in order runs in about linear time. Ties: each pile keeps the row that came last in old
 * order, and the subsequence is read back from the last pile, so the same input always
 * gives the same moves. */
static void dc_mark_off_lis(dc_workspace_t *ws) {
    const size_t m = ws->old_count, prefix = ws->prefix_length;
    const uint32_t *old_to_new = dc_old_to_new(ws);
    uint64_t *moved = dc_moved(ws);

    // Fast path: already increasing (no moves at all).
    uint32_t last = prefix ? (uint32_t)(prefix - 1) : DC_NO_ROW;
    bool increasing = true;
    for (size_t i = prefix; i < m && increasing; i++) {
        uint32_t j = old_to_new[i];
        if (j == DC_UNPAIRED) continue;
        increasing = last == DC_NO_ROW || j > last;
        last = j;
    }
    if (increasing) return;

    // The table region is free after matching and holds at least 3 * m uint32 values.
    uint32_t *level = (uint32_t *)dc_table(ws);   /* by old row: its pile */
    uint32_t *pile_top_value = level + m;        /* the new index on top of each pile */
    size_t piles = 0;
    for (size_t i = prefix; i < m; i++) {
        uint32_t value = old_to_new[i];
        if (value == DC_UNPAIRED) continue;
        dc_bit_set(moved, value); /* cleared below for the rows on the subsequence */
        size_t pile;
        if (piles == 0 || value > pile_top_value[piles - 1]) {
            pile = piles++;
        } else if (piles == 1 || value > pile_top_value[piles - 2]) {
            pile = piles - 1; /* the usual case right after one row out of place */
        } else {
            size_t low = 0, high = piles - 2; /* first pile whose top exceeds value */
            while (low < high) {
                size_t middle = low + (high - low) / 2;
                if (pile_top_value[middle] > value) high = middle; else low = middle + 1;
            }
            pile = low;
        }
        level[i] = (uint32_t)pile;
        pile_top_value[pile] = value;
    }

    // Read one longest subsequence back, last to first. A row's predecessor is the pile
    // top one level down when it was placed: the latest earlier row of that level. So a
    // backward scan for the wanted level finds it with sequential reads only, and its new
    // index is below the row's by the piles' invariant.
    size_t wanted = piles;
    for (size_t i = m; wanted > 0 && i-- > prefix;) {
        uint32_t value = old_to_new[i];
        if (value == DC_UNPAIRED || level[i] != wanted - 1) continue;
        dc_bit_clear(moved, value);
        wanted--;
    }
}

/* displaced: IGListKit's rule. A paired row moves when its old index, less the deletions
 * before it, plus the insertions before its new index, is not its new index. */
static void dc_mark_displaced(dc_workspace_t *ws) {
    const size_t m = ws->old_count, n = ws->new_count;
    const uint32_t *old_to_new = dc_old_to_new(ws);
    const uint32_t *new_to_old = dc_pairing(ws);
    uint64_t *moved = dc_moved(ws);
    uint32_t *deletions_before = (uint32_t *)dc_table(ws); /* by old row */

    uint32_t deletions = 0;
    for (size_t i = 0; i < m; i++) {
        deletions_before[i] = deletions;
        deletions += old_to_new[i] == DC_UNPAIRED;
    }
    size_t insertions = 0;
    for (size_t j = 0; j < n; j++) {
        uint32_t i = new_to_old[j];
        if (i == DC_UNPAIRED) {
            insertions++;
        } else if ((size_t)i - deletions_before[i] + insertions != j) {
            dc_bit_set(moved, j);
        }
    }
}

void dc_compute_moves(dc_workspace_t *ws, dc_move_mode_t mode) {
    memset(dc_moved(ws), 0, dc_bitmap_words(ws->new_count) * 8);
    if (mode == DC_MOVES_DISPLACED) {
        dc_mark_displaced(ws);
        return;
    }
    dc_mark_off_lis(ws);
    if (mode == DC_MOVES_NONE) {
        // Out-of-order pairs are dropped: each becomes a deletion plus an insertion.
        uint32_t *old_to_new = dc_old_to_new(ws);
        uint32_t *new_to_old = dc_pairing(ws);
        uint64_t *moved = dc_moved(ws), *updated = dc_updated(ws);
        for (size_t word = 0; word < dc_bitmap_words(ws->new_count); word++) {
            uint64_t remaining = moved[word];
            while (remaining) {
                size_t j = word * 64 + (size_t)__builtin_ctzll(remaining);
                remaining &= remaining - 1;
                old_to_new[new_to_old[j]] = DC_UNPAIRED;
                new_to_old[j] = DC_UNPAIRED;
                dc_bit_clear(updated, j);
                ws->paired--;
            }
            moved[word] = 0;
        }
    }
}
