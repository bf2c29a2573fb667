/* Pass 4: the lists out of a finished workspace, and the pairing of a matched one. */
#include "workspace.h"

const uint32_t *dc_new_to_old(void *workspace) {
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    if (ws == NULL) return NULL;
    dc_unsegment(ws);
    return dc_pairing(ws);
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

/* Finds the old row paired with new rows in increasing order, through the segments. */
typedef struct dc_segment_cursor {
    const dc_segment_t *walk, *walk_end, *deferred, *deferred_end;
} dc_segment_cursor_t;

static inline dc_segment_cursor_t dc_segment_cursor(dc_workspace_t *ws) {
    const dc_segment_t *segments = dc_segments(ws);
    dc_segment_cursor_t cursor = { segments, segments + ws->walk_segments, segments + ws->walk_segments,
                                   segments + ws->segment_count };
    return cursor;
}

/* The old row of paired new row j, j no lower than at the last call. */
static inline uint32_t dc_segment_old_of(dc_segment_cursor_t *cursor, size_t j) {
    while (cursor->walk < cursor->walk_end && cursor->walk->new_start + (size_t)cursor->walk->length <= j) cursor->walk++;
    if (cursor->walk < cursor->walk_end && cursor->walk->new_start <= j) {
        return cursor->walk->old_start + (uint32_t)(j - cursor->walk->new_start);
    }
    while (cursor->deferred->new_start + (size_t)cursor->deferred->length <= j) cursor->deferred++;
    return cursor->deferred->old_start + (uint32_t)(j - cursor->deferred->new_start);
}

/* Segmented: dc_write_pairs() through the segments. */
static void dc_write_pairs_segmented(const uint64_t *bits, dc_workspace_t *ws, int64_t offset, int64_t *out) {
    size_t written = 0;
    dc_segment_cursor_t segments = dc_segment_cursor(ws);
    dc_bit_cursor_t cursor = dc_bit_cursor(bits, ws->new_count);
    for (size_t j = dc_bit_next(&cursor); j != SIZE_MAX; j = dc_bit_next(&cursor)) {
        out[2 * written] = (int64_t)dc_segment_old_of(&segments, j) + offset;
        out[2 * written + 1] = (int64_t)j + offset;
        written++;
    }
}

/* Writes the indexes below `count` whose bit in `paired` is clear: the unpaired rows. */
static void dc_write_clear_bits(const uint64_t *paired, size_t count, int64_t offset, int64_t *out) {
    size_t written = 0;
    for (size_t word = 0; word < dc_bitmap_words(count); word++) {
        for (uint64_t clear = dc_clear_bits_of_word(paired, count, word); clear != 0; clear &= clear - 1) {
            out[written++] = (int64_t)(word * 64 + (size_t)__builtin_ctzll(clear)) + offset;
        }
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
    if (c->deletions) dc_write_clear_bits(dc_old_paired(ws), ws->old_count, offset, out->deletions);
    if (c->insertions) dc_write_clear_bits(dc_new_paired(ws), ws->new_count, offset, out->insertions);
    if (ws->segmented) {
        if (c->updates) dc_write_pairs_segmented(dc_updated(ws), ws, offset, out->updates);
        if (c->moves) dc_write_pairs_segmented(dc_moved(ws), ws, offset, out->moves);
    } else {
        const uint32_t *new_to_old = dc_pairing(ws);
        if (c->updates) dc_write_pairs(dc_updated(ws), ws->new_count, new_to_old, offset, out->updates);
        if (c->moves) dc_write_pairs(dc_moved(ws), ws->new_count, new_to_old, offset, out->moves);
    }
    dc_check_ascending(out->deletions, c->deletions, 1, "deletions ascending");
    dc_check_ascending(out->insertions, c->insertions, 1, "insertions ascending");
    dc_check_ascending(out->updates + 1, c->updates, 2, "updates ascending by new index");
    dc_check_ascending(out->moves + 1, c->moves, 2, "moves ascending by new index");
    return DC_OK;
}

