/* Pass 3: which paired rows moved, for each move mode (DiffEngine.docc/Changesets.md). */
#include <string.h>

#include "workspace.h"

#define DC_NO_ROW UINT32_MAX

/* A condition the branch predictor cannot learn: asks the compiler for a conditional move. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_unpredictable)
#define dc_unpredictable(condition) __builtin_unpredictable(condition)
#endif
#endif
#ifndef dc_unpredictable
#define dc_unpredictable(condition) (condition)
#endif

/* The first index in [low, end) whose value exceeds `value`, in increasing `values` whose
 * index end - 1 is known to (it is never read, so it may lie past the array). Branch-free:
 * which way a search goes is a coin toss the branch predictor would lose. */
static inline size_t dc_first_above(const uint32_t *values, size_t low, size_t end, uint32_t value) {
    size_t span = end - low;
    while (span > 1) {
        size_t half = span / 2;
        // Both places the next step may look: their loads overlap this one's.
        __builtin_prefetch(&values[low + half / 2]);
        __builtin_prefetch(&values[low + half + half / 2]);
        low = dc_unpredictable(values[low + half - 1] <= value) ? low + half : low;
        span -= half;
    }
    return low;
}

/* A run: paired rows that are consecutive in old order and whose new indexes are
 * consecutive integers. Patience sorting places a run's rows on consecutive piles (the
 * first on pile `pile`), so the segmented moves pass works a run at a time. */
typedef struct dc_run {
    uint32_t first_value; /* new index of the run's first row */
    uint32_t length;
    uint32_t pile;        /* the pile of its first row: the longest subsequence before it */
} dc_run_t;

/* The piles of the patience sort, with two levels of fences over their tops. */
typedef struct dc_piles {
    uint32_t *top_value;   /* the new index on top of each pile */
    uint32_t *fence;       /* [b]: top_value[b * spacing] */
    uint32_t *outer_fence; /* [c]: fence[c * spacing] */
    size_t count;
    size_t fenced;         /* the fences cover piles [0, fenced) */
} dc_piles_t;

/* Piles for up to m rows at `memory` (m pile tops and their fences). */
static dc_piles_t dc_piles_at(void *memory, size_t m) {
    uint32_t *top_value = memory;
    uint32_t *fence = top_value + m;
    dc_piles_t piles = { top_value, fence, fence + dc_fence_count(m), 0, 0 };
    return piles;
}

/* Brings the fences up to the piles: a row above every top only adds a pile, so the
 * fences of the piles added since the last search are written when a search needs them
 * (each once), not as the piles grow. */
static void dc_fence_piles(dc_piles_t *p) {
    const size_t outer_spacing = DC_FENCE_SPACING * DC_FENCE_SPACING;
    for (size_t f = (p->fenced + DC_FENCE_SPACING - 1) / DC_FENCE_SPACING; f * DC_FENCE_SPACING < p->count; f++) {
        p->fence[f] = p->top_value[f * DC_FENCE_SPACING];
    }
    for (size_t f = (p->fenced + outer_spacing - 1) / outer_spacing; f * outer_spacing < p->count; f++) {
        p->outer_fence[f] = p->top_value[f * outer_spacing];
    }
    p->fenced = p->count;
}

/* Places a value below the last pile's top on the first pile whose top exceeds it, which
 * it returns. */
static size_t dc_place_below(dc_piles_t *p, uint32_t value) {
    const size_t piles = p->count;
    size_t pile;
    if (piles == 1 || value > p->top_value[piles - 2]) {
        pile = piles - 1; /* the usual case right after one row out of place */
    } else {
        // Among piles 0 ..< piles - 1 (the last of them is known to qualify): the outer
        // fences, which stay in cache, then one cache line of fences, then one of piles.
        // At each level the first entry above the value lies between two entries of the
        // level above (or past the last, where pile piles - 2 qualifies).
        dc_fence_piles(p);
        const size_t fences = (piles - 2) / DC_FENCE_SPACING + 1; /* those below piles - 1 */
        const size_t outer_fences = (fences - 1) / DC_FENCE_SPACING + 1;
        const size_t outer_above = dc_first_above(p->outer_fence, 0, outer_fences + 1, value);
        if (outer_above == 0) {
            pile = 0;
        } else {
            const size_t last_fence = outer_above < outer_fences ? outer_above * DC_FENCE_SPACING : fences;
            const size_t above = dc_first_above(p->fence, (outer_above - 1) * DC_FENCE_SPACING + 1, last_fence + 1, value);
            const size_t last_pile = above < fences ? above * DC_FENCE_SPACING : piles - 2;
            pile = dc_first_above(p->top_value, (above - 1) * DC_FENCE_SPACING + 1, last_pile + 1, value);
        }
    }
    p->top_value[pile] = value;
    if (pile < p->fenced && pile % DC_FENCE_SPACING == 0) {
        p->fence[pile / DC_FENCE_SPACING] = value;
        if (pile % (DC_FENCE_SPACING * DC_FENCE_SPACING) == 0) p->outer_fence[pile / (DC_FENCE_SPACING * DC_FENCE_SPACING)] = value;
    }
    return pile;
}

/* Reads one longest subsequence back, last to first, and marks every other row of the
 * runs (placed, in old order) moved: a row's predecessor is the latest earlier row one
 * pile down, whose new index is below the row's by the piles' invariant. In a run whose
 * piles hold the wanted one, that is the run's rows up to it. */
static void dc_mark_off_kept(const dc_run_t *runs, size_t run_count, size_t piles, uint64_t *moved) {
    size_t wanted = piles;
    for (size_t r = run_count; r-- > 0;) {
        const dc_run_t run = runs[r];
        size_t kept = 0;
        if (wanted > run.pile && wanted <= (size_t)run.pile + run.length) {
            kept = wanted - run.pile;
            wanted = run.pile;
        }
        if (kept < run.length) dc_bits_set_range(moved, run.first_value + kept, run.length - kept);
    }
}

/* A row placed below the last pile's top, by search: its old row, its pile, and how many
 * rows had started a pile of their own before it. */
typedef struct dc_searched {
    uint32_t row;
    uint32_t pile;
    uint32_t fresh;
} dc_searched_t;

/* Rows a block: the forward pass tests that many at once, branch-free (vectorized). */
#define DC_MOVES_BLOCK 16

/* Marks moved the last `count` paired old rows before old row `end`. */
static void dc_mark_last_paired(const uint32_t *old_to_new, size_t end, size_t count, uint64_t *moved) {
    for (size_t i = end; count > 0;) {
        const uint32_t value = old_to_new[--i];
        if (value == DC_UNPAIRED) continue;
        dc_bit_set(moved, value);
        count--;
    }
}

/* minimal and none: marks as moved every paired row off one longest increasing
 * subsequence of the new indexes taken in old order. Patience sorting, O(k log k) for k
 * paired rows, where a row above every pile top (almost every row of a real update: those
 * after an insertion or a deletion too) costs a store and no branch: it starts a pile of
 * its own, so its pile is the number of such rows before it, and only the rows that went
 * through a search are written down. A block of rows that continue one another costs one
 * test. Ties: each pile keeps the row that came last in old order, and the subsequence is
 * read back from the last pile, taking the latest row of each pile that fits, so the same
 * input always gives the same moves (the segmented pass's rule, run for run). */
static void dc_mark_off_lis(dc_workspace_t *ws) {
    const size_t m = ws->old_count, prefix = ws->prefix_length;
    const uint32_t *old_to_new = dc_old_to_new(ws);

    // The table region is free after matching and is sized for this (workspace.c): at most
    // m searched rows of 12 bytes, at most m pile tops of 4, and their fences.
    dc_searched_t *searched = (dc_searched_t *)dc_table(ws);
    dc_piles_t piles = dc_piles_at(searched + m, m);
    uint32_t *const tops = piles.top_value;
    size_t searched_count = 0;
    // The last pile's top; -1 before any, and an unpaired row (DC_UNPAIRED) is above all.
    int64_t top = -1;
    for (size_t i = prefix; i < m;) {
        if (m - i >= DC_MOVES_BLOCK) {
            const uint32_t first = old_to_new[i];
            uint32_t breaks = 0;
            for (uint32_t k = 0; k < DC_MOVES_BLOCK; k++) breaks |= (uint32_t)(old_to_new[i + k] != first + k) << k;
            if (breaks == 0 && first != DC_UNPAIRED && (int64_t)first > top) {
                for (uint32_t k = 0; k < DC_MOVES_BLOCK; k++) tops[piles.count + k] = first + k;
                piles.count += DC_MOVES_BLOCK;
                top = first + DC_MOVES_BLOCK - 1;
                i += DC_MOVES_BLOCK;
                continue;
            }
        }
        const size_t end = m - i < DC_MOVES_BLOCK ? m : i + DC_MOVES_BLOCK;
        for (; i < end; i++) {
            const uint32_t value = old_to_new[i];
            if (__builtin_expect((int64_t)value > top, 1)) {
                // A new pile, unless the row is unpaired: then the store lands past the last
                // pile and is overwritten.
                const bool paired = value != DC_UNPAIRED;
                tops[piles.count] = value;
                piles.count += paired;
                top = paired ? value : top;
            } else {
                const size_t fresh = piles.count;
                const size_t pile = dc_place_below(&piles, value);
                if (pile == fresh - 1) top = value;
                searched[searched_count++] = (dc_searched_t){ (uint32_t)i, (uint32_t)pile, (uint32_t)fresh };
            }
        }
    }
    // Back from the last pile, a stretch of rows that started piles at a time, last to first:
    // their piles are consecutive, so those above the wanted pile are not kept (the latest
    // rows of the stretch) and the rest are, all but the wanted one's predecessors taken. In
    // time in the searched rows and the moved ones, not in the rows.
    uint64_t *moved = dc_moved(ws);
    int64_t wanted = (int64_t)piles.count - 1;
    size_t above = piles.count, end = m; /* the stretch's piles end at `above`, its rows at `end` */
    for (size_t k = searched_count + 1; k-- > 0;) {
        const size_t below = k > 0 ? searched[k - 1].fresh : 0;
        if (wanted >= (int64_t)below) {
            dc_mark_last_paired(old_to_new, end, above - 1 - (size_t)wanted, moved);
            wanted = (int64_t)below - 1;
        } else {
            dc_mark_last_paired(old_to_new, end, above - below, moved);
        }
        if (k == 0) break;
        const dc_searched_t row = searched[k - 1];
        if ((int64_t)row.pile == wanted) {
            wanted--;
        } else {
            dc_bit_set(moved, old_to_new[row.row]);
        }
        above = below;
        end = row.row;
    }
}

/* dc_mark_off_lis() over a segmented pairing, in time in the segments (and a bitmap word
 * every 64 old rows), not in the rows. A run is kept or moved whole: no other row's new
 * index lies between two of a run's, so the piles a run's rows land on are those its first
 * lands on and up, and a pile is the length of the longest increasing subsequence before
 * its row. So the pile of a run's first row is the most that some earlier run with lower
 * new indexes reaches (its pile plus its length): for a run above the last pile's top, all
 * the piles; for the others, a Fenwick tree over the runs' ranks in new order answers
 * without the pile tops. Reading the subsequence back is then dc_mark_off_kept(), run for
 * run what dc_mark_off_lis() does. */
static void dc_mark_off_lis_segmented(dc_workspace_t *ws) {
    const size_t m = ws->old_count, count = ws->segment_count, walk = ws->walk_segments;
    const dc_segment_t *segments = dc_segments(ws);
    // Scratch: the pairing arrays, which a segmented workspace does not use, and the table
    // region (at most one segment an old row, and fewer than one a new row: workspace.c).
    uint32_t *in_old_order = dc_old_to_new(ws); /* segment indexes */
    uint32_t *reach = dc_pairing(ws) - 1;       /* the Fenwick tree, over ranks 1 ... count */
    dc_run_t *runs = (dc_run_t *)dc_table(ws);
    uint32_t *rank = (uint32_t *)(runs + count); /* each segment's in new order */
    uint64_t *starts = (uint64_t *)(rank + count); /* 16 bytes a segment before it: aligned */
    uint32_t *starts_before = (uint32_t *)(starts + dc_bitmap_words(m)); /* set bits in earlier words */

    // Ranks in new order: the walk's segments and the deferred rows', each in new order, merged.
    for (size_t w = 0, d = walk, r = 0; w < walk || d < count; r++) {
        if (d == count || (w < walk && segments[w].new_start < segments[d].new_start)) {
            rank[w++] = (uint32_t)r;
        } else {
            rank[d++] = (uint32_t)r;
        }
    }
    // Old order: a bit a segment's first old row, so a segment's place is the number of bits
    // before its own (all of it in cache, where an index by old row would not be).
    memset(starts, 0, dc_bitmap_words(m) * 8);
    for (size_t s = 0; s < count; s++) dc_bit_set(starts, segments[s].old_start);
    for (size_t word = 0, before = 0; word < dc_bitmap_words(m); word++) {
        starts_before[word] = (uint32_t)before;
        before += (size_t)__builtin_popcountll(starts[word]);
    }
    for (size_t s = 0; s < count; s++) {
        const size_t i = segments[s].old_start;
        const uint64_t earlier = starts[i / 64] & ((UINT64_C(1) << (i % 64)) - 1);
        in_old_order[starts_before[i / 64] + (size_t)__builtin_popcountll(earlier)] = (uint32_t)s;
    }
    // Segments in old order make the runs: neighbours whose new rows continue join (the old
    // rows between them, if any, are unpaired). A run's `pile` holds its rank until placed.
    size_t run_count = 0;
    for (size_t place = 0; place < count; place++) {
        const size_t s = in_old_order[place];
        if (run_count > 0 && runs[run_count - 1].first_value + runs[run_count - 1].length == segments[s].new_start) {
            runs[run_count - 1].length += segments[s].length;
        } else {
            runs[run_count++] = (dc_run_t){ segments[s].new_start, segments[s].length, rank[s] };
        }
    }
    // A run above the last pile's top lands on new piles, on top of everything: its pile is
    // the piles' count, with no search. Only the others ask the tree, which holds only them,
    // and a list of the runs above tops (first values and reaches both increasing, in the
    // scratch the old-order pass is done with).
    uint32_t *above_value = in_old_order, *above_reach = rank;
    size_t above_count = 0;
    memset(reach + 1, 0, count * 4);
    size_t piles = 0;
    int64_t top = -1; /* the last pile's top */
    for (size_t r = 0; r < run_count; r++) {
        const uint32_t value = runs[r].first_value, length = runs[r].length;
        uint32_t pile = (uint32_t)piles;
        if ((int64_t)value <= top) {
            size_t low = 0, high = above_count; /* the runs above tops with lower values: the last one's reach */
            while (low < high) {
                const size_t middle = (low + high) / 2;
                if (above_value[middle] < value) low = middle + 1; else high = middle;
            }
            pile = low > 0 ? above_reach[low - 1] : 0;
            for (size_t node = runs[r].pile; node > 0; node &= node - 1) { /* ranks below this run's */
                if (reach[node] > pile) pile = reach[node];
            }
            for (size_t node = (size_t)runs[r].pile + 1; node <= count; node += node & (~node + 1)) {
                if (reach[node] < pile + length) reach[node] = pile + length;
            }
        } else {
            // Its reach is the highest yet: a run listed with a higher first value can no
            // longer be the best below any value.
            while (above_count > 0 && above_value[above_count - 1] > value) above_count--;
            above_value[above_count] = value;
            above_reach[above_count++] = (uint32_t)piles + length;
        }
        runs[r].pile = pile;
        if (pile + length >= piles) {
            piles = pile + length;
            top = (int64_t)value + length - 1;
        }
    }
    dc_mark_off_kept(runs, run_count, piles, dc_moved(ws));
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
    if (mode != DC_MOVES_MINIMAL) dc_unsegment(ws);
    if (mode == DC_MOVES_DISPLACED) {
        dc_mark_displaced(ws);
        return;
    }
    if (ws->segmented) {
        dc_mark_off_lis_segmented(ws);
        return;
    }
    dc_mark_off_lis(ws);
    if (mode == DC_MOVES_NONE) {
        // Out-of-order pairs are dropped: each becomes a deletion plus an insertion.
        uint32_t *old_to_new = dc_old_to_new(ws);
        uint32_t *new_to_old = dc_pairing(ws);
        uint64_t *moved = dc_moved(ws), *updated = dc_updated(ws);
        dc_bit_cursor_t cursor = dc_bit_cursor(moved, ws->new_count);
        for (size_t j = dc_bit_next(&cursor); j != SIZE_MAX; j = dc_bit_next(&cursor)) {
            dc_bit_clear(dc_old_paired(ws), new_to_old[j]);
            dc_bit_clear(dc_new_paired(ws), j);
            old_to_new[new_to_old[j]] = DC_UNPAIRED;
            new_to_old[j] = DC_UNPAIRED;
            dc_bit_clear(updated, j);
            ws->paired--;
        }
        memset(moved, 0, dc_bitmap_words(ws->new_count) * 8);
    }
}

size_t dc_lis_workspace_size(size_t count) {
    if (count > DC_MAX_ROWS) return 0;
    return count * 2 * sizeof(uint32_t) + 8;
}

/* The minimal-moves rule over any sequence: patience sorting with a link from each value to
 * the pile top below it when it was placed; the subsequence is read back from the last
 * pile's top. That picks, level by level from the highest, the latest value of the level
 * that fits — the tie rule of dc_mark_off_lis, row for row. */
dc_status_t dc_longest_increasing(const uint32_t *values, size_t count, void *workspace, size_t workspace_size,
                                  uint8_t *keeps, size_t *kept) {
    if (kept == NULL || (count && (values == NULL || keeps == NULL || workspace == NULL))) return DC_ERR_NULL_POINTER;
    if (count > DC_MAX_ROWS) return DC_ERR_TOO_MANY_ROWS;
    if (count && ((uintptr_t)workspace % 8) != 0) return DC_ERR_WORKSPACE_MISALIGNED;
    if (count && workspace_size < dc_lis_workspace_size(count)) return DC_ERR_WORKSPACE_TOO_SMALL;
    uint32_t *pile_top = workspace;          /* index of the top value of each pile */
    uint32_t *below = pile_top + count;      /* the top of the pile below, when placed */
    size_t piles = 0;
    for (size_t index = 0; index < count; index++) {
        const uint32_t value = values[index];
        size_t low = 0, high = piles;
        if (piles > 0 && values[pile_top[piles - 1]] < value) {
            low = piles; /* the common case for rows in order: on top of everything */
        } else {
            while (low < high) {
                size_t middle = (low + high) / 2;
                if (values[pile_top[middle]] < value) low = middle + 1; else high = middle;
            }
        }
        below[index] = low > 0 ? pile_top[low - 1] : DC_NO_ROW;
        pile_top[low] = (uint32_t)index;
        if (low == piles) piles++;
    }
    memset(keeps, 0, count);
    for (uint32_t cursor = piles ? pile_top[piles - 1] : DC_NO_ROW; cursor != DC_NO_ROW; cursor = below[cursor]) {
        keeps[cursor] = 1;
    }
    *kept = piles;
    return DC_OK;
}
