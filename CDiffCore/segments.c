/* A segmented pairing (dc_segment_t, workspace.h) written out per row, for the passes that
 * read the pairing a row at a time. */
#include <string.h>

#include "workspace.h"

void dc_unsegment(dc_workspace_t *ws) {
    if (!ws->segmented) return;
    const size_t count = ws->segment_count;
    const dc_segment_t *segments = dc_segments(ws);
    uint32_t *old_to_new = dc_old_to_new(ws), *new_to_old = dc_pairing(ws);
    memset(old_to_new, 0xff, ws->old_count * 4);
    memset(new_to_old, 0xff, ws->new_count * 4);
    for (size_t s = 0; s < count; s++) {
        const dc_segment_t segment = segments[s];
        for (uint32_t k = 0; k < segment.length; k++) {
            old_to_new[segment.old_start + k] = segment.new_start + k;
            new_to_old[segment.new_start + k] = segment.old_start + k;
        }
    }
    ws->segmented = 0;
}

const dc_segment_t *dc_pairing_segments(void *workspace, size_t *count) {
    if (count != NULL) *count = 0;
    dc_workspace_t *ws = dc_workspace_in_state(workspace, DC_STATE_MATCHED);
    if (ws == NULL || count == NULL || !ws->segmented) return NULL;
    *count = ws->segment_count;
    return dc_segments(ws);
}
