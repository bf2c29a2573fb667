/* Pass 2 (which paired rows changed) and the end of a diff: pass 3, moves, driven by
 * dc_finish() (moves.c), the counts, and the closing invariant checks. */
#include "workspace.h"

/* pass 2: flags paired rows whose contents differ, by hash here or by the caller's
 * comparison (dc_mark_updated). Either way before dc_finish(), which reads the flags. */

/* Shared by this pass and the Swift layer's comparing loops (CDiffCore.h says when). */
void dc_prefetch_paired_rows(const void *rows, size_t row_count, size_t stride,
                             const uint32_t *pairing, size_t count, size_t next) {
    const size_t from = next + DC_PREFETCH_AHEAD;
    if (rows == NULL || pairing == NULL || row_count * stride < DC_FAR_ROW_BYTES || from >= count) return;
    const size_t end = count - from < 64 ? count : from + 64;
    for (size_t j = from; j < end; j++) {
        const uint32_t i = pairing[j];
        __builtin_prefetch((const uint8_t *)rows + (i < row_count ? i : 0) * stride); /* no branch: unpaired rows fall at random */
    }
}

dc_status_t dc_mark_updates_by_hash(void *workspace,
                                    const uint64_t *old_contents, const uint64_t *new_contents,
                                    dc_equal_fn content_equal, void *context) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    if (ws == NULL || ws->state != DC_STATE_MATCHED) return DC_ERR_WRONG_STATE;
    if ((ws->old_count && old_contents == NULL) || (ws->new_count && new_contents == NULL)) {
        return DC_ERR_NULL_POINTER;
    }
    uint64_t *updated = dc_updated(ws);
    if (ws->segmented) {
        const dc_segment_t *segments = dc_segments(ws);
        for (size_t s = 0; s < ws->segment_count; s++) {
            const size_t i = segments[s].old_start, j = segments[s].new_start;
            for (size_t k = 0; k < segments[s].length; k++) {
                bool differs = old_contents[i + k] != new_contents[j + k]
                    || (content_equal && !content_equal(context, DC_SIDE_OLD, i + k, DC_SIDE_NEW, j + k));
                if (differs) dc_bit_set(updated, j + k);
            }
        }
        return DC_OK;
    }
    const uint32_t *new_to_old = dc_pairing(ws);
    if (content_equal == NULL) {
        // A 64-row word at a time, without branches: unpaired rows and updates fall at
        // random, so a branch on either mispredicts for a tenth of the rows.
        if (ws->old_count == 0) return DC_OK;
        for (size_t base = 0; base < ws->new_count; base += 64) {
            const size_t end = ws->new_count - base < 64 ? ws->new_count : base + 64;
            dc_prefetch_paired_rows(old_contents, ws->old_count, sizeof(uint64_t), new_to_old, ws->new_count, base);
            uint64_t word = 0;
            for (size_t j = base; j < end; j++) {
                const uint32_t i = new_to_old[j];
                const uint64_t paired = i != DC_UNPAIRED;
                word |= (paired & (old_contents[paired ? i : 0] != new_contents[j])) << (j - base);
            }
            updated[base / 64] |= word;
        }
        return DC_OK;
    }
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
    if (new_index >= ws->new_count || !dc_new_is_paired(ws, new_index)) {
        return DC_ERR_INVALID_ARGUMENT;
    }
    dc_bit_set(dc_updated(ws), new_index);
    return DC_OK;
}

dc_status_t dc_mark_updated_rows(void *workspace, const uint64_t *updated, size_t word_count) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    if (ws == NULL || ws->state != DC_STATE_MATCHED) return DC_ERR_WRONG_STATE;
    const size_t words = dc_bitmap_words(ws->new_count);
    if (word_count != words) return DC_ERR_INVALID_ARGUMENT;
    if (words == 0) return DC_OK;
    if (updated == NULL) return DC_ERR_NULL_POINTER;
    // A word at a time against the paired rows (whose bits past the rows are clear).
    const uint64_t *paired = dc_new_paired(ws);
    for (size_t word = 0; word < words; word++) {
        if (updated[word] & ~paired[word]) return DC_ERR_INVALID_ARGUMENT;
    }
    uint64_t *flags = dc_updated(ws);
    for (size_t word = 0; word < words; word++) flags[word] |= updated[word];
    return DC_OK;
}

const uint64_t *dc_updated_rows(const void *workspace) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    return ws ? dc_updated(ws) : NULL;
}

bool dc_is_updated(const void *workspace, size_t new_index) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    return ws != NULL && new_index < ws->new_count && dc_bit_get(dc_updated(ws), new_index);
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
    dc_check_finished(ws, &result, mode);
    ws->counts = result;
    ws->move_mode = (uint32_t)mode;
    ws->state = DC_STATE_FINISHED;
    if (counts) *counts = result;
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

