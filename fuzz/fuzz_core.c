/* libFuzzer target: CDiffCore against the naive C reference (DiffEngine.docc/Correctness.md).
 *
 * Input: body bytes then two option bytes. Each body byte is a row: identity
 * byte % alphabet, content (byte / alphabet) % 4, so identities repeat all the time.
 * Option byte 1 (last): move mode (% 3), key kind (exact ids, XXH3 hashes verified by a
 * callback, or hashes cut to 1-3 bits so that collisions are everywhere), alphabet size
 * (2-12, or 64 so that identities are mostly distinct and carried keys can pair them).
 * Option byte 2: where the body splits into old and new.
 * Besides the diff, every call checks the capacity and workspace edges: buffers one
 * element too small must be refused with a status and left untouched. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "CDiffCore.h"
#include "CDiffCoreTesting.h"
#include "reference_differ.h"

typedef struct fuzz_rows {
    int *ids[2];
    int *contents[2];
} fuzz_rows_t;

static bool ids_equal(void *context, uint32_t a_side, size_t a, uint32_t b_side, size_t b) {
    const fuzz_rows_t *rows = context;
    return rows->ids[a_side][a] == rows->ids[b_side][b];
}

static bool contents_equal(void *context, uint32_t a_side, size_t a, uint32_t b_side, size_t b) {
    const fuzz_rows_t *rows = context;
    return rows->contents[a_side][a] == rows->contents[b_side][b];
}

static void dump_input(const uint8_t *data, size_t size) {
    fprintf(stderr, "input (%zu bytes):", size);
    for (size_t k = 0; k < size; k++) fprintf(stderr, " %02x", data[k]);
    fprintf(stderr, "\n");
}

static void dump_list(const char *name, const int64_t *values, size_t count, size_t stride) {
    fprintf(stderr, "  %s:", name);
    for (size_t k = 0; k < count; k++) {
        if (stride == 2) fprintf(stderr, " (%lld,%lld)", (long long)values[2 * k], (long long)values[2 * k + 1]);
        else fprintf(stderr, " %lld", (long long)values[k]);
    }
    fprintf(stderr, "\n");
}

static void fail(const char *problem, const uint8_t *data, size_t size, const ref_rows_t *rows,
                 const ref_changeset_t *changeset) {
    fprintf(stderr, "fuzz_core: %s\n", problem);
    if (rows) {
        fprintf(stderr, "  old:");
        for (size_t i = 0; i < rows->old_count; i++) fprintf(stderr, " %d:%d", rows->old_ids[i], rows->old_contents[i]);
        fprintf(stderr, "\n  new:");
        for (size_t j = 0; j < rows->new_count; j++) fprintf(stderr, " %d:%d", rows->new_ids[j], rows->new_contents[j]);
        fprintf(stderr, "\n");
    }
    if (changeset) {
        dump_list("deletions", changeset->deletions, changeset->deletion_count, 1);
        dump_list("insertions", changeset->insertions, changeset->insertion_count, 1);
        dump_list("updates", changeset->updates, changeset->update_count, 2);
        dump_list("moves", changeset->moves, changeset->move_count, 2);
    }
    dump_input(data, size);
    abort();
}

/* A heap block of exactly `bytes` (at least 1), so that AddressSanitizer flags any write
 * one past the end. */
static void *exact_block(size_t bytes) { return malloc(bytes ? bytes : 1); }

/* The reader of a carried walk over rows compared as bytes (DC_ROWS_BYTES), laid out as
 * the fields walk's: the key is the identity field, and a row is unequal to itself when its
 * content field is a multiple of 5. It checks that the walk asks for each row at most once,
 * in order. */
typedef struct bytes_reader {
    const unsigned char *rows;
    size_t stride, identity_offset, content_offset, next_from;
    uint64_t *keys, *self_unequal;
    bool out_of_order;
    const unsigned char *old_rows;
} bytes_reader_t;

static bool self_unequal_content(uint64_t content) { return content % 5 == 0; }

/* The reader of a carried walk over keys only, asked for as it needs them: copies them from
 * `source`, checking that the walk asks in order and never inside the caller's prefix. */
typedef struct keys_reader {
    const uint64_t *source;
    uint64_t *keys;
    size_t next_from;
    bool out_of_order;
} keys_reader_t;

static void read_given_keys(void *context, size_t from, size_t to) {
    keys_reader_t *reader = context;
    if (from < reader->next_from || to < from) reader->out_of_order = true;
    reader->next_from = to;
    memcpy(reader->keys + from, reader->source + from, (to - from) * sizeof(uint64_t));
}

static int compare_keys(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Whether `count` keys are pairwise distinct (a sorted copy: linear-ish, where the pairs
 * of keys would make the harness quadratic in the input). */
static bool keys_distinct(const uint64_t *keys, size_t count) {
    if (count < 2) return true;
    uint64_t *sorted = malloc(count * sizeof(uint64_t));
    memcpy(sorted, keys, count * sizeof(uint64_t));
    qsort(sorted, count, sizeof(uint64_t), compare_keys);
    bool distinct = true;
    for (size_t k = 1; k < count && distinct; k++) distinct = sorted[k] != sorted[k - 1];
    free(sorted);
    return distinct;
}

/* The same reader's comparison in the in-place prefix: how many of new rows [from, to) have
 * the identity field of the old row at their index (flagging them as read_bytes_keys()
 * does), marking in `updated` those that differ by the caller's equality (contents equal
 * and neither unequal to itself); the walk may read the first other row's key next. */
static size_t bytes_compare_in_place(void *context, size_t from, size_t to, uint64_t *updated) {
    bytes_reader_t *reader = context;
    if (from < reader->next_from || to < from) reader->out_of_order = true;
    for (size_t r = from; r < to; r++) {
        if (memcmp(reader->rows + r * reader->stride + reader->identity_offset,
                   reader->old_rows + r * reader->stride + reader->identity_offset, 8) != 0) {
            reader->next_from = r;
            return r - from;
        }
        uint64_t content, old_content;
        memcpy(&content, reader->rows + r * reader->stride + reader->content_offset, 8);
        memcpy(&old_content, reader->old_rows + r * reader->stride + reader->content_offset, 8);
        if (self_unequal_content(content)) reader->self_unequal[r / 64] |= UINT64_C(1) << (r % 64);
        if (content != old_content || self_unequal_content(content) || self_unequal_content(old_content)) {
            updated[r / 64] |= UINT64_C(1) << (r % 64);
        }
    }
    reader->next_from = to;
    return to - from;
}

static void read_bytes_keys(void *context, size_t from, size_t to) {
    bytes_reader_t *reader = context;
    if (from < reader->next_from || to < from) reader->out_of_order = true;
    reader->next_from = to;
    for (size_t r = from; r < to; r++) {
        uint64_t content;
        memcpy(&reader->keys[r], reader->rows + r * reader->stride + reader->identity_offset, 8);
        memcpy(&content, reader->rows + r * reader->stride + reader->content_offset, 8);
        if (self_unequal_content(content)) reader->self_unequal[r / 64] |= UINT64_C(1) << (r % 64);
    }
}

/* Finishes a matched workspace in `mode` and reads it: the counts and lists must be
 * `expected` and `expected_lists` (deletions, insertions, updates, moves, end to end). */
static void check_same_lists(void *workspace, int mode, const dc_counts_t *expected, const int64_t *const expected_lists[4],
                             const char *what, const uint8_t *data, size_t size, const ref_rows_t *rows) {
    dc_counts_t counts;
    if (dc_finish(workspace, (dc_move_mode_t)mode, &counts) != DC_OK) fail(what, data, size, NULL, NULL);
    if (counts.paired != expected->paired || counts.deletions != expected->deletions || counts.insertions != expected->insertions
        || counts.updates != expected->updates || counts.moves != expected->moves) {
        fail(what, data, size, rows, NULL);
    }
    const size_t lengths[4] = { counts.deletions, counts.insertions, 2 * counts.updates, 2 * counts.moves };
    int64_t *lists = exact_block((lengths[0] + lengths[1] + lengths[2] + lengths[3]) * sizeof(int64_t));
    dc_changeset_buffers_t out = {
        lists, counts.deletions, lists + lengths[0], counts.insertions,
        lists + lengths[0] + lengths[1], counts.updates, lists + lengths[0] + lengths[1] + lengths[2], counts.moves,
    };
    if (dc_read(workspace, 0, &out) != DC_OK) fail(what, data, size, NULL, NULL);
    for (size_t list = 0, at = 0; list < 4; at += lengths[list], list++) {
        if (memcmp(lists + at, expected_lists[list], lengths[list] * sizeof(int64_t)) != 0) fail(what, data, size, rows, NULL);
    }
    free(lists);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const uint8_t options = data[size - 1], split_byte = data[size - 2];
    const size_t body = size - 2;
    const int mode = options % 3;
    const int key_kind = (options / 3) % 3; /* 0 exact, 1 hashed + verified, 2 truncated */
    int alphabet = 2 + (options / 9) % 12;
    if (alphabet == 13) alphabet = 64; /* identities mostly distinct: the carried-keys matcher runs */
    const size_t m = body * split_byte / 255, n = body - m;

    fuzz_rows_t rows;
    uint64_t *keys[2], *content_hashes[2];
    const size_t counts[2] = { m, n };
    for (int side = 0; side < 2; side++) {
        rows.ids[side] = exact_block(counts[side] * sizeof(int));
        rows.contents[side] = exact_block(counts[side] * sizeof(int));
        keys[side] = exact_block(counts[side] * sizeof(uint64_t));
        content_hashes[side] = exact_block(counts[side] * sizeof(uint64_t));
        const uint8_t *source = data + (side == 0 ? 0 : m);
        for (size_t r = 0; r < counts[side]; r++) {
            rows.ids[side][r] = source[r] % alphabet;
            rows.contents[side][r] = (source[r] / alphabet) % 4;
            content_hashes[side][r] = (uint64_t)rows.contents[side][r];
        }
        if (key_kind == 0) {
            for (size_t r = 0; r < counts[side]; r++) keys[side][r] = (uint64_t)rows.ids[side][r];
        } else {
            uint64_t *raw = exact_block(counts[side] * sizeof(uint64_t));
            for (size_t r = 0; r < counts[side]; r++) raw[r] = (uint64_t)rows.ids[side][r];
            if (dc_hash_u64(raw, counts[side], keys[side]) != DC_OK) fail("dc_hash_u64 failed", data, size, NULL, NULL);
            free(raw);
        }
    }
    const uint32_t key_bits = key_kind == 2 ? (uint32_t)(1 + options % 3) : 0;
    dc_match_input_t match = {
        keys[0], m, keys[1], n,
        key_kind == 0 ? NULL : ids_equal, &rows,
        dc_hash_bytes(data, size), /* placement seed: results must not depend on it */
        0,
    };

    // The workspace: one byte too small is refused; the exact size is enough.
    size_t workspace_size = dc_diff_workspace_size(m, n);
    void *workspace = exact_block(workspace_size);
    if (workspace_size >= 8 && dc_match_weakened(workspace, workspace_size - 1, &match, key_bits) != DC_ERR_WORKSPACE_TOO_SMALL) {
        fail("a workspace one byte too small was not refused", data, size, NULL, NULL);
    }
    if (key_kind == 2) {
        // Collisions everywhere: a tiny budget must either hold or stop the pass cleanly,
        // and the workspace must take the next match as if nothing happened.
        match.collision_budget = 2;
        dc_status_t bounded = dc_match_weakened(workspace, workspace_size, &match, key_bits);
        if (bounded != DC_OK && bounded != DC_ERR_TOO_MANY_COLLISIONS) fail("a budgeted dc_match failed", data, size, NULL, NULL);
        if (bounded != DC_OK && dc_new_to_old(workspace) != NULL) fail("a stopped match left a pairing", data, size, NULL, NULL);
        match.collision_budget = 0;
    }
    if (dc_match_weakened(workspace, workspace_size, &match, key_bits) != DC_OK) fail("dc_match failed", data, size, NULL, NULL);
    if (dc_mark_updates_by_hash(workspace, content_hashes[0], content_hashes[1],
                                key_kind == 1 ? contents_equal : NULL, &rows) != DC_OK) {
        fail("dc_mark_updates_by_hash failed", data, size, NULL, NULL);
    }
    dc_counts_t counts_out;
    if (dc_finish(workspace, (dc_move_mode_t)mode, &counts_out) != DC_OK) fail("dc_finish failed", data, size, NULL, NULL);
    if (m - counts_out.deletions + counts_out.insertions != n) fail("m - deletions + insertions != n", data, size, NULL, NULL);

    int64_t *deletions = exact_block(counts_out.deletions * sizeof(int64_t));
    int64_t *insertions = exact_block(counts_out.insertions * sizeof(int64_t));
    int64_t *updates = exact_block(counts_out.updates * 2 * sizeof(int64_t));
    int64_t *moves = exact_block(counts_out.moves * 2 * sizeof(int64_t));
    dc_changeset_buffers_t out = {
        deletions, counts_out.deletions, insertions, counts_out.insertions,
        updates, counts_out.updates, moves, counts_out.moves,
    };
    // Each list one element too small is refused (ASan would catch a write regardless).
    size_t *capacities[4] = { &out.deletions_capacity, &out.insertions_capacity, &out.updates_capacity, &out.moves_capacity };
    for (int list = 0; list < 4; list++) {
        if (*capacities[list] == 0) continue;
        (*capacities[list])--;
        if (dc_read(workspace, 0, &out) != DC_ERR_CAPACITY_TOO_SMALL) fail("a buffer one too small was not refused", data, size, NULL, NULL);
        (*capacities[list])++;
    }
    if (dc_read(workspace, 0, &out) != DC_OK) fail("dc_read failed", data, size, NULL, NULL);

    ref_rows_t reference_rows = { rows.ids[0], rows.contents[0], m, rows.ids[1], rows.contents[1], n };
    ref_changeset_t changeset = {
        deletions, counts_out.deletions, insertions, counts_out.insertions,
        updates, counts_out.updates, moves, counts_out.moves,
    };
    const char *problem = ref_check(&reference_rows, &changeset, mode);
    if (problem) fail(problem, data, size, &reference_rows, &changeset);

    // Carried keys: when the old keys are distinct, dc_match_carried() pairs exactly as
    // dc_match() did (or declines), and the set then carries the new keys. Cut keys are cut
    // here, as a caller whose keys are that weak would give them.
    const uint64_t mask = key_bits == 0 ? UINT64_MAX : ((UINT64_C(1) << key_bits) - 1);
    uint64_t *carried_keys[2];
    for (int side = 0; side < 2; side++) {
        carried_keys[side] = exact_block(counts[side] * sizeof(uint64_t));
        for (size_t r = 0; r < counts[side]; r++) carried_keys[side][r] = keys[side][r] & mask;
    }
    size_t set_size = dc_key_set_size(m);
    void *set = exact_block(set_size);
    bool distinct = false;
    if (dc_key_set_build(set, set_size, carried_keys[0], m, match.placement_seed, &distinct) != DC_OK) {
        fail("dc_key_set_build failed", data, size, NULL, NULL);
    }
    if (distinct != keys_distinct(carried_keys[0], m)) fail("dc_key_set_build misjudged repeated keys", data, size, NULL, NULL);
    // The rows equal in identity and content from the first on, and those with equal
    // identities: a caller's equal prefix is any part of the first (chosen by the input),
    // and a walk over rows keeps at least the second when it pairs.
    size_t equal_rows = 0, same_identities = 0;
    while (equal_rows < m && equal_rows < n && rows.ids[0][equal_rows] == rows.ids[1][equal_rows]
           && rows.contents[0][equal_rows] == rows.contents[1][equal_rows]) {
        equal_rows++;
    }
    while (same_identities < m && same_identities < n && rows.ids[0][same_identities] == rows.ids[1][same_identities]) same_identities++;
    const size_t caller_prefix = body > 0 ? data[0] % (equal_rows + 1) : 0;
    if (distinct) {
        void *carried_workspace = exact_block(workspace_size);
        const int64_t *const expected_lists[4] = { deletions, insertions, updates, moves };
        uint64_t *written = exact_block(n * sizeof(uint64_t));
        bool matched = false;
        // Keys only, given (the caller's prefix poisoned: the walk must not read it), then
        // asked for as the walk needs them: the same answer both ways.
        for (int asked = 0; asked < 2; asked++) {
            for (size_t r = 0; r < n; r++) written[r] = asked || r < caller_prefix ? ~carried_keys[1][r] : carried_keys[1][r];
            keys_reader_t reader = { carried_keys[1], written, caller_prefix, false };
            const dc_carried_input_t input = {
                .old_keys = carried_keys[0], .old_count = m, .new_keys = written, .new_count = n,
                .read_keys = asked ? read_given_keys : NULL, .read_context = &reader,
                .identity_equal = key_kind == 0 ? NULL : ids_equal, .equal_context = &rows,
                .equal_prefix = caller_prefix, .rows = DC_ROWS_NONE,
            };
            void *keys_workspace = asked ? exact_block(workspace_size) : carried_workspace;
            dc_carried_result_t result;
            if (dc_match_carried(keys_workspace, workspace_size, &input, set, &result) != DC_OK) {
                fail("dc_match_carried failed", data, size, NULL, NULL);
            }
            if (reader.out_of_order) fail("dc_match_carried asked for keys out of order or in the caller's prefix", data, size, NULL, NULL);
            if (asked == 0) matched = result.matched;
            if (result.matched != matched) fail("dc_match_carried declined differently with keys asked for", data, size, NULL, NULL);
            if (result.matched && result.kept_keys != caller_prefix) fail("dc_match_carried kept other keys than the caller's prefix", data, size, NULL, NULL);
            const size_t unwritten = result.matched ? caller_prefix : 0;
            if (n > unwritten && memcmp(written + unwritten, carried_keys[1] + unwritten, (n - unwritten) * sizeof(uint64_t)) != 0) {
                fail("dc_match_carried left keys unwritten", data, size, NULL, NULL);
            }
            if (result.matched) {
                // Its pairing is held in segments until asked for per row: a copy (a workspace
                // holds offsets, not pointers), marked by hash, finished and read from them,
                // gives the one-shot diff's lists.
                void *segmented = exact_block(workspace_size);
                memcpy(segmented, keys_workspace, workspace_size);
                if (dc_mark_updates_by_hash(segmented, content_hashes[0], content_hashes[1],
                                            key_kind == 1 ? contents_equal : NULL, &rows) != DC_OK) {
                    fail("dc_mark_updates_by_hash after dc_match_carried failed", data, size, NULL, NULL);
                }
                check_same_lists(segmented, mode, &counts_out, expected_lists, "dc_match_carried read differently from dc_match",
                                 data, size, &reference_rows);
                free(segmented);
                // (DC_MOVES_NONE drops out-of-order pairs from the finished workspace's pairing.)
                if (n > 0 && mode != DC_MOVES_NONE && memcmp(dc_new_to_old(keys_workspace), dc_new_to_old(workspace), n * sizeof(uint32_t)) != 0) {
                    fail("dc_match_carried paired differently from dc_match", data, size, &reference_rows, NULL);
                }
            }
            if (asked) free(keys_workspace);
        }
        // Rows read in place (key_kind 0: exact keys), in four layouts: DC_ROWS_FIELDS
        // writes every new key past the rows it keeps in place, pairs as over keys, and marks
        // updates exactly where contents differ. Layouts 0 and 1 put the identity second
        // among two content fields (one always equal) and a word outside the fields, equal on
        // both sides (so unchanged blocks compare equal as bytes) or never equal (so no block
        // does); 2 is {identity, content}, 3 {content, constant, identity} and 4 {content,
        // identity} (16-byte rows, whose keys the fields walk takes from vector lanes).
        for (int layout_kind = 0; key_kind == 0 && layout_kind < 5; layout_kind++) {
            const bool two_fields = layout_kind == 2 || layout_kind == 4;
            const size_t stride = layout_kind < 2 ? 32 : two_fields ? 16 : 24;
            const size_t identity_offset = layout_kind < 2 ? 8 : layout_kind == 2 ? 0 : layout_kind == 3 ? 16 : 8;
            const size_t content_offset = layout_kind < 2 ? 16 : layout_kind == 2 ? 8 : 0;
            const size_t constant_offset = layout_kind < 2 ? 24 : 8;
            const size_t content_offsets[2] = { constant_offset, content_offset };
            unsigned char *old_rows = exact_block(m * stride), *new_rows = exact_block(n * stride);
            for (int side = 0; side < 2; side++) {
                unsigned char *side_rows = side == 0 ? old_rows : new_rows;
                for (size_t r = 0; r < (side == 0 ? m : n); r++) {
                    unsigned char *row = side_rows + r * stride;
                    const uint64_t outside = layout_kind == 0 ? 0 : side == 0 ? r : ~(uint64_t)r, constant = 7;
                    if (layout_kind < 2) memcpy(row, &outside, 8);
                    if (!two_fields) memcpy(row + constant_offset, &constant, 8);
                    memcpy(row + identity_offset, &keys[side][r], 8);
                    memcpy(row + content_offset, &content_hashes[side][r], 8);
                }
            }
            const dc_carried_input_t fields = {
                .old_keys = keys[0], .old_count = m, .new_keys = written, .new_count = n, .rows = DC_ROWS_FIELDS,
                .old_rows = old_rows, .new_rows = new_rows, .stride = stride, .identity_offset = identity_offset,
                .content_offsets = two_fields ? content_offsets + 1 : content_offsets, .content_count = two_fields ? 1 : 2,
            };
            for (size_t r = 0; r < n; r++) written[r] = ~keys[1][r];
            void *rows_workspace = exact_block(workspace_size);
            dc_carried_result_t rows_result;
            if (dc_match_carried(rows_workspace, workspace_size, &fields, set, &rows_result) != DC_OK) {
                fail("dc_match_carried over fields failed", data, size, NULL, NULL);
            }
            if (rows_result.matched != matched) fail("dc_match_carried over fields declined differently from over keys", data, size, &reference_rows, NULL);
            const size_t rows_kept = rows_result.matched ? rows_result.kept_keys : 0;
            if (rows_result.matched && rows_kept != same_identities) fail("dc_match_carried over fields kept other rows", data, size, &reference_rows, NULL);
            if (n > rows_kept && memcmp(written + rows_kept, keys[1] + rows_kept, (n - rows_kept) * sizeof(uint64_t)) != 0) {
                fail("dc_match_carried over fields wrote other keys", data, size, NULL, NULL);
            }
            if (rows_result.matched) {
                // Finished and read from its segments, the lists are the one-shot diff's.
                check_same_lists(rows_workspace, mode, &counts_out, expected_lists, "dc_match_carried over fields read differently from dc_match",
                                 data, size, &reference_rows);
                const uint32_t *pairing = dc_new_to_old(rows_workspace);
                // (DC_MOVES_NONE dropped out-of-order pairs when it finished.)
                if (n > 0 && mode != DC_MOVES_NONE && memcmp(pairing, dc_new_to_old(carried_workspace), n * sizeof(uint32_t)) != 0) {
                    fail("dc_match_carried over fields paired differently from over keys", data, size, &reference_rows, NULL);
                }
                for (size_t j = 0; j < n; j++) {
                    const bool expected = pairing[j] != DC_UNPAIRED && content_hashes[0][pairing[j]] != content_hashes[1][j];
                    if (dc_is_updated(rows_workspace, j) != expected) fail("dc_match_carried over fields marked updates wrongly", data, size, &reference_rows, NULL);
                }
            }
            // The same rows compared as bytes: the keys through the reader, a row unequal to
            // itself when its content is a multiple of 5, the caller's equality `contents
            // equal and neither unequal to itself`. DC_ROWS_BYTES writes the keys and flags
            // past the rows it keeps, pairs as over keys, and leaves as candidates exactly the
            // pairs whose bytes differ or whose old row is unequal to itself; so every pair
            // left out is equal.
            const size_t words = (n + 63) / 64 ? (n + 63) / 64 : 1;
            uint64_t *old_self_unequal = calloc((m + 63) / 64 + 1, 8), *new_self_unequal = calloc(words, 8), *candidates = calloc(words, 8);
            bool any_self_unequal = false;
            for (size_t r = 0; r < m; r++) {
                if (self_unequal_content(content_hashes[0][r])) {
                    old_self_unequal[r / 64] |= UINT64_C(1) << (r % 64);
                    any_self_unequal = true;
                }
            }
            for (size_t r = 0; r < n; r++) written[r] = ~keys[1][r];
            for (size_t w = 0; w < words; w++) new_self_unequal[w] = ~UINT64_C(0);
            bytes_reader_t reader = { new_rows, stride, identity_offset, content_offset, 0, written, new_self_unequal, false, old_rows };
            // Changed rows of the in-place prefix compared by the reader in layouts 1 and 3
            // (which then marks their updates itself), by key and as candidates in 0, 2 and 4.
            const dc_carried_input_t bytes = {
                .old_keys = keys[0], .old_count = m, .new_keys = written, .new_count = n,
                .read_keys = read_bytes_keys, .read_context = &reader,
                .compare_in_place = layout_kind % 2 ? bytes_compare_in_place : NULL, .rows = DC_ROWS_BYTES,
                .old_rows = old_rows, .new_rows = new_rows, .stride = stride,
                .old_self_unequal = any_self_unequal ? old_self_unequal : NULL, .new_self_unequal = new_self_unequal,
                .candidates = candidates,
            };
            void *bytes_workspace = exact_block(workspace_size);
            dc_carried_result_t bytes_result;
            if (dc_match_carried(bytes_workspace, workspace_size, &bytes, set, &bytes_result) != DC_OK) {
                fail("dc_match_carried over bytes failed", data, size, NULL, NULL);
            }
            if (reader.out_of_order) fail("dc_match_carried over bytes asked for keys out of order", data, size, NULL, NULL);
            const size_t bytes_kept = bytes_result.matched ? bytes_result.kept_keys : 0;
            if (bytes_result.matched && bytes_kept != same_identities) fail("dc_match_carried over bytes kept other rows", data, size, &reference_rows, NULL);
            if (n > bytes_kept && memcmp(written + bytes_kept, keys[1] + bytes_kept, (n - bytes_kept) * sizeof(uint64_t)) != 0) {
                fail("dc_match_carried over bytes wrote other keys", data, size, NULL, NULL);
            }
            for (size_t r = 0; r < n; r++) {
                if (((new_self_unequal[r / 64] >> (r % 64)) & 1) != self_unequal_content(content_hashes[1][r])) {
                    fail("dc_match_carried over bytes flagged rows unequal to themselves wrongly", data, size, NULL, NULL);
                }
            }
            if (bytes_result.matched != matched) fail("dc_match_carried over bytes declined differently from over keys", data, size, &reference_rows, NULL);
            if (bytes_result.matched) {
                const uint32_t *pairing = dc_new_to_old(bytes_workspace);
                const uint64_t *updated = dc_updated_rows(bytes_workspace);
                if (n > 0 && mode != DC_MOVES_NONE && memcmp(pairing, dc_new_to_old(carried_workspace), n * sizeof(uint32_t)) != 0) {
                    fail("dc_match_carried over bytes paired differently from over keys", data, size, &reference_rows, NULL);
                }
                for (size_t j = 0; j < n; j++) {
                    const bool candidate = (candidates[j / 64] >> (j % 64)) & 1;
                    if (pairing[j] == DC_UNPAIRED) {
                        if (candidate) fail("dc_match_carried over bytes flagged an unpaired row", data, size, &reference_rows, NULL);
                        continue;
                    }
                    const size_t i = pairing[j];
                    const bool need = self_unequal_content(content_hashes[0][i]) || memcmp(old_rows + i * stride, new_rows + j * stride, stride) != 0;
                    const bool equal = content_hashes[0][i] == content_hashes[1][j] && !self_unequal_content(content_hashes[0][i])
                                       && !self_unequal_content(content_hashes[1][j]);
                    const bool updated_flag = (updated[j / 64] >> (j % 64)) & 1;
                    const bool bytes_differ = memcmp(old_rows + i * stride, new_rows + j * stride, stride) != 0;
                    if (layout_kind % 2 && j < bytes_kept && i == j && bytes_differ && !candidate) {
                        // Compared by the reader in place: its update flag is the comparison.
                        if (updated_flag == equal) fail("dc_match_carried over bytes lost an in-place comparison", data, size, &reference_rows, NULL);
                        continue;
                    }
                    if (updated_flag) fail("dc_match_carried over bytes flagged an update the caller did not", data, size, &reference_rows, NULL);
                    if (candidate != need || (!candidate && !equal)) {
                        fail("dc_match_carried over bytes left out a pair its caller must compare", data, size, &reference_rows, NULL);
                    }
                }
            }
            free(bytes_workspace);
            free(candidates);
            free(new_self_unequal);
            free(old_self_unequal);
            free(rows_workspace);
            free(new_rows);
            free(old_rows);
        }
        free(written);
        bool new_distinct = false;
        dc_status_t updated = dc_key_set_update(set, set_size, carried_keys[0], m, deletions, counts_out.deletions,
                                                carried_keys[1], n, insertions, counts_out.insertions, &new_distinct);
        if (updated != DC_OK && updated != DC_ERR_CAPACITY_TOO_SMALL) fail("dc_key_set_update failed", data, size, NULL, NULL);
        if (updated == DC_OK && new_distinct != keys_distinct(carried_keys[1], n)) {
            fail("dc_key_set_update misjudged repeated keys", data, size, &reference_rows, NULL);
        }
        free(carried_keys[0]);
        free(carried_keys[1]);
        free(carried_workspace);
    } else {
        // A set of repeated keys carries no diff: declined, every new key written (asked
        // for), and the earlier diff in the workspace (dc_match's, above) discarded.
        uint64_t *written = exact_block(n * sizeof(uint64_t));
        for (size_t r = 0; r < n; r++) written[r] = ~carried_keys[1][r];
        keys_reader_t reader = { carried_keys[1], written, 0, false };
        const dc_carried_input_t input = {
            .old_keys = carried_keys[0], .old_count = m, .new_keys = written, .new_count = n,
            .read_keys = read_given_keys, .read_context = &reader,
            .identity_equal = key_kind == 0 ? NULL : ids_equal, .equal_context = &rows, .rows = DC_ROWS_NONE,
        };
        dc_carried_result_t result;
        if (dc_match_carried(workspace, workspace_size, &input, set, &result) != DC_OK || result.matched) {
            fail("dc_match_carried did not decline a set of repeated keys", data, size, NULL, NULL);
        }
        if (n > 0 && memcmp(written, carried_keys[1], n * sizeof(uint64_t)) != 0) {
            fail("dc_match_carried declined with keys unwritten", data, size, NULL, NULL);
        }
        if (dc_new_to_old(workspace) != NULL) fail("dc_match_carried declined and left an earlier pairing", data, size, NULL, NULL);
        free(written);
        free(carried_keys[0]);
        free(carried_keys[1]);
    }
    free(set);

    // Repeated identities on each side, against the reference.
    for (int side = 0; side < 2; side++) {
        size_t repeats_size = dc_repeats_workspace_size(counts[side]);
        void *repeats_workspace = exact_block(repeats_size);
        uint8_t *flags = exact_block(counts[side]);
        unsigned char *expected = exact_block(counts[side]);
        size_t repeat_count = 0;
        if (dc_mark_repeats_weakened(repeats_workspace, repeats_size, keys[side], counts[side], (uint32_t)side,
                            match.identity_equal, &rows, key_bits, match.placement_seed, 0,
                            flags, &repeat_count) != DC_OK) {
            fail("dc_mark_repeats failed", data, size, NULL, NULL);
        }
        ref_mark_repeats(rows.ids[side], counts[side], expected);
        size_t expected_count = 0;
        for (size_t r = 0; r < counts[side]; r++) {
            expected_count += expected[r];
            if (flags[r] != expected[r]) fail("dc_mark_repeats differs from the reference", data, size, &reference_rows, NULL);
        }
        if (expected_count != repeat_count) fail("dc_mark_repeats miscounted", data, size, &reference_rows, NULL);
        free(repeats_workspace);
        free(flags);
        free(expected);
    }

    free(deletions);
    free(insertions);
    free(updates);
    free(moves);
    free(workspace);
    for (int side = 0; side < 2; side++) {
        free(rows.ids[side]);
        free(rows.contents[side]);
        free(keys[side]);
        free(content_hashes[side]);
    }
    return 0;
}
