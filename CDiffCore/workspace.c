/* The workspace: its layout for a pair of row counts, the size query, and the checks and
 * setup every pass starts from. */
#include <string.h>

#include "identity_table.h"
#include "workspace.h"

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
    /* After matching, the moves pass reuses this region for its searched rows, pile tops and
     * fences (a little over 16 bytes an old row), or over segments for 16 bytes a segment (at
     * most one an old row) and 12 bytes every 64 old rows (moves.c); size it for the largest. */
    size_t moves_bytes = old_count * 16 + (dc_fence_count(old_count) + dc_fence_count(dc_fence_count(old_count))) * 4;
    const size_t segmented_moves_bytes = old_count * 16 + dc_bitmap_words(old_count) * 12;
    if (segmented_moves_bytes > moves_bytes) moves_bytes = segmented_moves_bytes;
    size_t table_bytes = capacity * 8 > moves_bytes ? capacity * 8 : moves_bytes;
    if (capacity > SIZE_MAX / 8 || !dc_add_region(&total, table_bytes)) return 0;
    regions.old_to_new_offset = total;
    if (!dc_add_region(&total, old_count * 4)) return 0;
    regions.new_to_old_offset = total;
    if (!dc_add_region(&total, new_count * 4)) return 0;
    regions.updated_offset = total;
    if (!dc_add_region(&total, dc_bitmap_words(new_count) * 8)) return 0;
    regions.moved_offset = total;
    if (!dc_add_region(&total, dc_bitmap_words(new_count) * 8)) return 0;
    regions.old_paired_offset = total;
    if (!dc_add_region(&total, dc_bitmap_words(old_count) * 8)) return 0;
    regions.new_paired_offset = total;
    if (!dc_add_region(&total, dc_bitmap_words(new_count) * 8)) return 0;
    /* A segment holds a pair at least (and no two one), so there are fewer than either side. */
    regions.segments_offset = total;
    if (!dc_add_region(&total, (old_count < new_count ? old_count : new_count) * sizeof(dc_segment_t))) return 0;
    if (layout) *layout = regions;
    return total;
}

size_t dc_diff_workspace_size(size_t old_count, size_t new_count) {
    return dc_layout(old_count, new_count, NULL);
}

dc_status_t dc_check_workspace(void *workspace, size_t workspace_size, size_t needed) {
    if (workspace == NULL) return DC_ERR_NULL_POINTER;
    if (((uintptr_t)workspace % 8) != 0) return DC_ERR_WORKSPACE_MISALIGNED;
    if (workspace_size < needed) return DC_ERR_WORKSPACE_TOO_SMALL;
    return DC_OK;
}

dc_status_t dc_workspace_start(void *workspace, size_t workspace_size, size_t old_count, size_t new_count,
                               dc_workspace_t **started) {
    dc_workspace_t layout;
    size_t needed = dc_layout(old_count, new_count, &layout);
    if (needed == 0) return DC_ERR_TOO_MANY_ROWS;
    dc_status_t status = dc_check_workspace(workspace, workspace_size, needed);
    if (status != DC_OK) return status;
    dc_workspace_t *ws = (dc_workspace_t *)workspace;
    *ws = layout; /* state: empty, until the match completes */
    ws->magic = DC_WORKSPACE_MAGIC;
    ws->old_count = old_count;
    ws->new_count = new_count;
    memset(dc_updated(ws), 0, dc_bitmap_words(new_count) * 8);
    memset(dc_moved(ws), 0, dc_bitmap_words(new_count) * 8);
    *started = ws;
    return DC_OK;
}
