/* Repeated identities on one side, for the reject and firstWins policies: one pass over
 * an identity table of the side's rows. */
#include <string.h>

#include "CDiffCoreTesting.h"
#include "identity_table.h"
#include "workspace.h"

size_t dc_repeats_workspace_size(size_t count) {
    if (count > DC_MAX_ROWS) return 0;
    return dc_table_capacity(count) * 8;
}

dc_status_t dc_mark_repeats(void *workspace, size_t workspace_size,
                            const uint64_t *keys, size_t count, uint32_t side,
                            dc_equal_fn identity_equal, void *context,
                            uint64_t placement_seed, size_t collision_budget,
                            uint8_t *is_repeat, size_t *repeat_count) {
    return dc_mark_repeats_weakened(workspace, workspace_size, keys, count, side, identity_equal, context, 0,
                                    placement_seed, collision_budget, is_repeat, repeat_count);
}

dc_status_t dc_mark_repeats_weakened(void *workspace, size_t workspace_size,
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