/*
 * CDiffCore: XXH3 row hashing and the O(m + n) list-matching core of DiffEngine.
 *
 * Everything here works on caller-owned flat buffers with explicit lengths and
 * never allocates: ask dc_diff_workspace_size() (or dc_repeats_workspace_size())
 * how many bytes a diff needs, hand that workspace in, and reuse it as often as
 * you like. Every entry point returns a dc_status_t; none aborts, none sets errno.
 *
 * A diff runs as four passes over one workspace (match.c, finish.c, moves.c, read.c):
 *   pass 1  dc_match()                  pair old and new rows by identity (k-th occurrence):
 *                                       1a common prefix, 1c pair rows in sequence (1b anchors
 *                                       where it breaks), 1d undo pairs of identities with rows
 *                                       left over, 1e index the old rows left over, 1f pair the
 *                                       rest through that table, 1g invert;
 *   pass 2  dc_mark_updates_by_hash()   and/or dc_mark_updated(): flag paired rows whose content differs;
 *   pass 3  dc_finish()                 compute moves for a move mode and count the results;
 *   pass 4  dc_read()                   copy deletions, insertions, updates and moves out.
 * dc_diff() runs passes 1-3 in one call for callers that have content hashes.
 *
 * The meaning of every result is fixed by DiffEngine.docc/Pairing.md, Changesets.md and Correctness.md.
 */
#ifndef CDIFFCORE_H
#define CDIFFCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The fixed XXH3-64 seed of every row hash. Changing it changes every persisted hash. */
#define DC_HASH_SEED 0x44696666456e6731ull /* "DiffEng1" */

/* The largest number of rows on one side of a diff. Indexes are kept as 32-bit values. */
#define DC_MAX_ROWS 0x7ffffffeu

/* The value of an unpaired row in dc_new_to_old(). */
#define DC_UNPAIRED 0xffffffffu

typedef enum dc_status {
    DC_OK = 0,
    DC_ERR_NULL_POINTER = 1,         /* a required pointer is NULL while its count is not 0 */
    DC_ERR_TOO_MANY_ROWS = 2,        /* a side has more than DC_MAX_ROWS rows, or a size overflows */
    DC_ERR_WORKSPACE_TOO_SMALL = 3,  /* smaller than dc_diff_workspace_size() / dc_repeats_workspace_size() */
    DC_ERR_WORKSPACE_MISALIGNED = 4, /* the workspace is not 8-byte aligned */
    DC_ERR_CAPACITY_TOO_SMALL = 5,   /* an output buffer of dc_read() is smaller than its count */
    DC_ERR_INVALID_ARGUMENT = 6,     /* an unknown move mode, an index out of range, bad offsets or bitmaps */
    DC_ERR_WRONG_STATE = 7,          /* a pass called out of order (e.g. dc_read() before dc_finish()) */
    DC_ERR_TOO_MANY_COLLISIONS = 8,  /* more failed identity checks than collision_budget allows: many
                                      * distinct identities share keys; re-key them with a seeded hash */
} dc_status_t;

/* A short English description of a status, for error messages. Never NULL. */
const char *dc_status_message(dc_status_t status);

/* ---------------------------------------------------------------------------
 * Hashing. XXH3-64 with DC_HASH_SEED: stable across processes and machines.
 * ------------------------------------------------------------------------- */

/* XXH3-64 of `length` bytes. `bytes` may be NULL when `length` is 0. */
uint64_t dc_hash_bytes(const void *bytes, size_t length);

/* XXH3-64 of `length` bytes with the caller's `seed` instead of DC_HASH_SEED: with a secret
 * seed, a key that nobody can craft collisions for (the engine re-keys colliding identities
 * with it). Not stable unless the seed is. */
uint64_t dc_hash_bytes_seeded(const void *bytes, size_t length, uint64_t seed);

/* The hash of a pair of hashes: XXH3-64 over the 16 bytes of `first` then `second`,
 * each little-endian. Multi-field identities and contents fold their fields with it. */
uint64_t dc_hash_combine(uint64_t first, uint64_t second);

/* A byte range [offset, offset + length) of a buffer. */
typedef struct dc_span {
    uint64_t offset;
    uint64_t length;
} dc_span_t;

/* Hashes `count` spans of one buffer (for instance the key field of each CSV row). */
dc_status_t dc_hash_spans(const uint8_t *bytes, size_t byte_count,
                          const dc_span_t *spans, size_t count,
                          uint64_t *out_hashes);

/* Hashes `count` 8-byte keys, each encoded little-endian: the fixed-width variant. */
dc_status_t dc_hash_u64(const uint64_t *keys, size_t count, uint64_t *out_hashes);

/* ---------------------------------------------------------------------------
 * Matching.
 * ------------------------------------------------------------------------- */

enum { DC_SIDE_OLD = 0, DC_SIDE_NEW = 1 };

/* Tells whether row `a_index` of side `a_side` and row `b_index` of side `b_side`
 * (DC_SIDE_OLD or DC_SIDE_NEW) are equal. The core calls it only for rows whose keys
 * are already equal, so with a good hash it runs about once per paired row. */
typedef bool (*dc_equal_fn)(void *context, uint32_t a_side, size_t a_index,
                            uint32_t b_side, size_t b_index);

typedef enum dc_move_mode {
    DC_MOVES_MINIMAL = 0,   /* paired rows off one longest increasing subsequence move */
    DC_MOVES_DISPLACED = 1, /* paired rows whose shifted old index differs from the new one move */
    DC_MOVES_NONE = 2,      /* out-of-order pairs become a deletion plus an insertion */
} dc_move_mode_t;

typedef struct dc_match_input {
    const uint64_t *old_keys; /* identity key of each old row; NULL allowed when old_count is 0 */
    size_t old_count;
    const uint64_t *new_keys; /* identity key of each new row */
    size_t new_count;
    /* NULL: keys are exact (equal keys mean equal identities, e.g. an integer id).
     * Otherwise keys are hashes and rows with equal keys are paired only if this says so. */
    dc_equal_fn identity_equal;
    void *context; /* passed to identity_equal */
    /* Where keys land in the identity table is a keyed mix of the key and this value. Give
     * a secret random value (one per process is enough) so that nobody who does not know it
     * can craft keys that share probe sequences. Results never depend on it; time does. */
    uint64_t placement_seed;
    /* 0: no limit. Otherwise dc_match() stops with DC_ERR_TOO_MANY_COLLISIONS once more
     * than this many identity_equal calls have said "different" (equal keys, distinct
     * identities): a sign of crafted full-key collisions, which make probing quadratic. */
    size_t collision_budget;
} dc_match_input_t;

/* Bytes of workspace that a diff of old_count and new_count rows needs, or 0 when a count
 * exceeds DC_MAX_ROWS. The workspace must be 8-byte aligned; its contents need no clearing. */
size_t dc_diff_workspace_size(size_t old_count, size_t new_count);

/* Pass 1: pairs the k-th old occurrence of each identity with its k-th new occurrence
 * (DiffEngine.docc/Pairing.md). Any earlier result in the workspace is discarded, also when it
 * returns an error. */
dc_status_t dc_match(void *workspace, size_t workspace_size, const dc_match_input_t *input);

/* After dc_match(): the pairing, indexed by new row: the paired old index, or DC_UNPAIRED.
 * The pointer is into the workspace and is valid until the next dc_match() on it.
 * NULL when the workspace holds no match. After dc_match_carried() the workspace holds its pairing a segment of rows at a time,
 * and the first call writes it out per row (time in the rows: a caller that only reads the
 * lists does not ask, and dc_pairing_segments() reads it as it is). */
const uint32_t *dc_new_to_old(void *workspace);

/* A segment of a pairing: old rows [old_start, old_start + length) pair with new rows
 * [new_start, new_start + length), in order. */
typedef struct dc_segment {
    uint32_t old_start;
    uint32_t new_start;
    uint32_t length;
} dc_segment_t;

/* After dc_match_carried(): the pairing as *count segments, in no particular order,
 * without writing it out per row. NULL (*count 0) when the workspace holds no match, or
 * holds it per row (after dc_match(), or once dc_new_to_old() was called). Valid until the next pass that writes the pairing out or a new match. */
const dc_segment_t *dc_pairing_segments(void *workspace, size_t *count);

/* Pass 2, after dc_match(): flags every paired row whose content hashes differ as updated. When
 * `content_equal` is not NULL, pairs with equal hashes are also compared with it (called
 * with DC_SIDE_OLD and DC_SIDE_NEW), so a content-hash collision cannot hide an update. */
dc_status_t dc_mark_updates_by_hash(void *workspace,
                                    const uint64_t *old_contents, const uint64_t *new_contents,
                                    dc_equal_fn content_equal, void *context);

/* Pass 2, after dc_match(): flags the paired row at `new_index` as updated (the caller compared
 * its contents itself). Unpaired rows are refused with DC_ERR_INVALID_ARGUMENT. */
dc_status_t dc_mark_updated(void *workspace, size_t new_index);

/* Pass 2, after dc_match(): flags as updated every new row whose bit is set in `updated`
 * (`word_count` 64-bit words, bit j of word j / 64 for new row j): the caller compared the
 * contents of paired rows itself. A bit set for an unpaired or out-of-range row is refused
 * with DC_ERR_INVALID_ARGUMENT before anything is flagged. */
dc_status_t dc_mark_updated_rows(void *workspace, const uint64_t *updated, size_t word_count);

/* For a caller comparing paired rows itself, 64 new rows at a time: asks the processor to
 * load the old rows that `pairing` (`count` entries, as dc_new_to_old() gives it) names for
 * the 64 new rows DC_PREFETCH_AHEAD after new row `next`. `rows` holds `row_count` old rows
 * of `stride` bytes. Only when they are DC_FAR_ROW_BYTES or more: a moved row's old row
 * lies anywhere in them, and past the cache each is a memory round trip that a comparing
 * loop takes one at a time; where they stay in the last-level cache the hints only cost
 * (bench-core, the updates pass over 8-byte hashes at 10% churn with 2% moved: 1M rows,
 * 7.6 MiB, 2.5 -> 1.4 ms; diffbench, 100,000 records of 56 bytes, 5.3 MiB diffed over and
 * over: +2% with the hints). Entries out of range (DC_UNPAIRED) are skipped. */
#define DC_PREFETCH_AHEAD 128
#define DC_FAR_ROW_BYTES ((size_t)6 << 20)
void dc_prefetch_paired_rows(const void *rows, size_t row_count, size_t stride,
                             const uint32_t *pairing, size_t count, size_t next);

/* After dc_match(): the updated flags, one bit per new row (bit j of word j / 64), into
 * the workspace and valid until the next dc_match() on it; NULL when it holds no match. */
const uint64_t *dc_updated_rows(const void *workspace);

/* After dc_match(): whether the row at `new_index` is flagged as updated (false for
 * unpaired rows, out-of-range indexes and a workspace holding no match). */
bool dc_is_updated(const void *workspace, size_t new_index);

typedef struct dc_counts {
    size_t paired;     /* pairs kept (in DC_MOVES_NONE, after dropping the out-of-order ones) */
    size_t deletions;
    size_t insertions;
    size_t updates;
    size_t moves;
} dc_counts_t;

/* Pass 3: computes moves for `mode` (DiffEngine.docc/Changesets.md) and the counts of every list. */
dc_status_t dc_finish(void *workspace, dc_move_mode_t mode, dc_counts_t *counts);

/* Output buffers for dc_read(). Each capacity is in elements; a pair list holds
 * 2 * count int64 values, old then new, for each pair in turn. */
typedef struct dc_changeset_buffers {
    int64_t *deletions;  size_t deletions_capacity;
    int64_t *insertions; size_t insertions_capacity;
    int64_t *updates;    size_t updates_capacity; /* in pairs */
    int64_t *moves;      size_t moves_capacity;   /* in pairs */
} dc_changeset_buffers_t;

/* Pass 4: writes the lists of DiffEngine.docc/Changesets.md, every index plus `index_offset` (the
 * length of a common prefix the caller trimmed before matching). Lists are ascending;
 * update and move pairs are ordered by their new index. */
dc_status_t dc_read(const void *workspace, size_t index_offset, dc_changeset_buffers_t *out);

/* dc_match(), then dc_mark_updates_by_hash() when both content arrays are given, then
 * dc_finish(). */
typedef struct dc_diff_input {
    dc_match_input_t match;
    const uint64_t *old_contents; /* NULL (with new_contents NULL): no updates are reported */
    const uint64_t *new_contents;
    dc_equal_fn content_equal;    /* optional verification of equal content hashes; uses match.context */
    dc_move_mode_t move_mode;
} dc_diff_input_t;

dc_status_t dc_diff(void *workspace, size_t workspace_size, const dc_diff_input_t *input,
                    dc_counts_t *counts);

/* ---------------------------------------------------------------------------
 * Carried identity keys: what a stateful differ keeps so that its next diff need not
 * index the old rows (carried.c).
 *
 * A key set holds the distinct identity keys (under a key mask) of one snapshot, in a
 * caller-owned buffer. While the snapshot's keys are all distinct, dc_match_carried() pairs
 * the next snapshot against it by walking both in order, probing the set only for rows that
 * are off the sequence, and dc_key_set_update() then turns it into the set of the new
 * snapshot in time proportional to the rows deleted and inserted.
 * ------------------------------------------------------------------------- */
/* Bytes a key set of `count` keys needs (it then takes updates up to 1.5 * count keys), or
 * 0 when too many. The buffer must be 8-byte aligned. */
size_t dc_key_set_size(size_t count);
/* Builds the set of `keys` in `set`. *distinct tells whether the keys were pairwise
 * distinct; only then can the set carry diffs (otherwise it stays marked as not usable until
 * rebuilt). `placement_seed` as in dc_match_input_t. */
dc_status_t dc_key_set_build(void *set, size_t set_size, const uint64_t *keys, size_t count,
                             uint64_t placement_seed, bool *distinct);
/* What the carried walk may read besides the keys. */
typedef enum dc_rows_kind {
    /* Keys only. */
    DC_ROWS_NONE = 0,
    /* Rows the core compares as bytes (`stride` bytes a row, a multiple of 8), for rows whose
     * fields it cannot read: rows with equal bytes have equal identities and keys, and are
     * equal exactly when the old row is equal to itself (what a value's equality gives). */
    DC_ROWS_BYTES = 1,
    /* Rows read where they lie (`stride` bytes a row): the identity an 8-byte integer at
     * `identity_offset` (its key is its bits, so keys are exact); the content 8-byte fields
     * at `content_offsets` (a paired row is updated when any field's bits differ). */
    DC_ROWS_FIELDS = 2,
} dc_rows_kind_t;
/* Writes the keys of new rows [from, to) into the match's `new_keys`; with DC_ROWS_BYTES,
 * also sets in `new_self_unequal` the bit of each of those rows that the caller's equality
 * finds unequal to itself (a field holding NaN). */
typedef void (*dc_read_keys_fn)(void *context, size_t from, size_t to);
typedef struct dc_carried_input {
    const uint64_t *old_keys; /* the keys the set holds, one an old row */
    size_t old_count;
    uint64_t *new_keys;       /* one a new row: given, or written as the walk needs them;
                               * shares no memory with the rows */
    size_t new_count;
    /* NULL: new_keys hold every key from equal_prefix on (DC_ROWS_FIELDS reads them out of
     * the rows itself). Otherwise the walk asks for the keys it needs, in order, a few at a
     * time (DC_ROWS_BYTES requires it). */
    dc_read_keys_fn read_keys;
    void *read_context;
    /* DC_ROWS_BYTES, optional: in the in-place prefix, new rows [from, to) whose bytes changed,
     * for the caller to compare with the old rows at their indices while both are in cache.
     * It returns how many of them, from the first, have their old rows' identities; of those
     * it sets in `updated` (the workspace's update flags, a bit a new row) the bit of each
     * whose contents differ, and their new_self_unequal bits as read_keys would. Those rows
     * keep their keys, which the walk neither reads nor asks for, and are not candidates.
     * Called with read_context. */
    size_t (*compare_in_place)(void *context, size_t from, size_t to, uint64_t *updated);
    /* NULL: equal keys are equal identities. Otherwise every pair the walk makes by key is
     * verified with it (DC_ROWS_NONE only). */
    dc_equal_fn identity_equal;
    void *equal_context;
    /* DC_ROWS_NONE: new rows [0, equal_prefix) are, by the caller's equality, equal in
     * identity and content to the old rows at their indices; their keys are not read. */
    size_t equal_prefix;
    dc_rows_kind_t rows;
    const void *old_rows;     /* DC_ROWS_BYTES, DC_ROWS_FIELDS */
    const void *new_rows;
    size_t stride;
    size_t identity_offset;   /* DC_ROWS_FIELDS */
    const size_t *content_offsets;
    size_t content_count;
    /* DC_ROWS_BYTES: a bit an old row, set where the row was unequal to itself (as the
     * previous call left new_self_unequal), or NULL when none was; a bit a new row, zeroed
     * first, then set as read_keys or the old row's bit says; a bit a new row, zeroed first,
     * then set for each paired new row that the caller's equality must compare with its old
     * row (their bytes differ, or the old row is unequal to itself). */
    const uint64_t *old_self_unequal;
    uint64_t *new_self_unequal;
    uint64_t *candidates;
} dc_carried_input_t;
typedef struct dc_carried_result {
    /* Whether the workspace holds the pairing. */
    bool matched;
    /* When matched: new rows [0, kept_keys) have the identities of the old rows at their
     * indices, and so their keys; the walk did not write those (the caller keeps them). */
    size_t kept_keys;
} dc_carried_result_t;
/* Pass 1 (and with DC_ROWS_FIELDS pass 2) from a carried set: what dc_match() computes, for
 * a `set` built from (or updated to) exactly `input->old_keys`. The walk pairs the rows of
 * both snapshots in order, compares whole blocks of 16 rows at a time where it can, and
 * probes the set only for rows off the sequence; the rows that kept their identities and
 * places from the first on (an unchanged snapshot, one whose rows only changed contents,
 * one appended to) pair in place without writing their keys.
 *
 * Once the input and the set pass their checks, any earlier result in the workspace is
 * discarded, as by dc_match(), whether or not this call matches. result->matched is false, with no pairing in the workspace, when the set cannot
 * carry this diff (its keys were not distinct, or the new rows repeat an old identity out of
 * order): then every new key is written, and the caller calls dc_match(). When matched, the workspace holds the pairing a
 * segment of rows at a time (dc_pairing_segments()), so that dc_mark_updates_by_hash(),
 * dc_finish() in DC_MOVES_MINIMAL and dc_read() take time in the runs of rows, not in all
 * rows (other move modes and dc_new_to_old() write it out per row first); every new key past
 * kept_keys is written; with DC_ROWS_FIELDS the workspace holds the updates (as after
 * dc_mark_updated_rows()); with DC_ROWS_BYTES `candidates` holds the pairs the caller
 * compares (it marks the updated ones with dc_mark_updated_rows() and, with keys that are not
 * exact, verifies their identities); with DC_ROWS_NONE the caller compares the pairs past
 * equal_prefix. */
dc_status_t dc_match_carried(void *workspace, size_t workspace_size, const dc_carried_input_t *input, const void *set,
                             dc_carried_result_t *result);
/* After a diff of the snapshot the set holds (`old_keys`) against `new_keys`, by either
 * matcher: makes the set hold the new snapshot's keys, removing the keys of the `deleted`
 * old rows and adding those of the `inserted` new rows (the diff's lists, as dc_read()
 * writes them with an offset of 0), in time proportional to them. *distinct is false when
 * the new keys repeat (the set is then not usable until rebuilt). DC_ERR_CAPACITY_TOO_SMALL,
 * with the set marked not usable, when the new keys outgrow it: rebuild it with
 * dc_key_set_size(new_count). */
dc_status_t dc_key_set_update(void *set, size_t set_size,
                              const uint64_t *old_keys, size_t old_count, const int64_t *deleted, size_t deleted_count,
                              const uint64_t *new_keys, size_t new_count, const int64_t *inserted, size_t inserted_count,
                              bool *distinct);
/* ---------------------------------------------------------------------------
 * Longest increasing subsequences, by the tie rule of DC_MOVES_MINIMAL.
 * ------------------------------------------------------------------------- */

/* Bytes of workspace that dc_longest_increasing() needs for `count` values, or 0 when too many. */
size_t dc_lis_workspace_size(size_t count);

/* Marks keeps[i] = 1 for the values of one longest strictly increasing subsequence of
 * values[0 ..< count] and 0 for the others; stores its length in *kept. Among equally long
 * subsequences it keeps the one DC_MOVES_MINIMAL keeps for paired rows whose new indexes,
 * in old order, are `values`: so a caller that places rows itself (the sectioned diff)
 * moves the same rows a flat diff moves. The workspace must be 8-byte aligned. */
dc_status_t dc_longest_increasing(const uint32_t *values, size_t count, void *workspace, size_t workspace_size,
                                  uint8_t *keeps, size_t *kept);

/* ---------------------------------------------------------------------------
 * Repeated identities on one side (for the `reject` and `firstWins` policies).
 * ------------------------------------------------------------------------- */

/* Bytes of workspace that dc_mark_repeats() needs for `count` rows, or 0 when too many. */
size_t dc_repeats_workspace_size(size_t count);

/* Sets is_repeat[i] to 1 when an earlier row of the same side has row i's identity and to 0
 * otherwise; stores the number of repeats in *repeat_count. `identity_equal` (both sides
 * `side`) verifies equal keys, as in dc_match_input_t; `placement_seed` and
 * `collision_budget` as there. */
dc_status_t dc_mark_repeats(void *workspace, size_t workspace_size,
                            const uint64_t *keys, size_t count, uint32_t side,
                            dc_equal_fn identity_equal, void *context,
                            uint64_t placement_seed, size_t collision_budget,
                            uint8_t *is_repeat, size_t *repeat_count);

#ifdef __cplusplus
}
#endif

#endif /* CDIFFCORE_H */
