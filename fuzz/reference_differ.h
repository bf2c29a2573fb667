/* The naive reference differ and DiffEngine.docc/Correctness.md checker for the C fuzz harness:
 * plain loops, nothing shared with CDiffCore. */
#ifndef FUZZ_REFERENCE_DIFFER_H
#define FUZZ_REFERENCE_DIFFER_H

#include <stddef.h>
#include <stdint.h>

/* Rows as small integers: identity and content. */
typedef struct ref_rows {
    const int *old_ids, *old_contents;
    size_t old_count;
    const int *new_ids, *new_contents;
    size_t new_count;
} ref_rows_t;

/* A changeset as the core reports it (pairs are old, new interleaved). */
typedef struct ref_changeset {
    const int64_t *deletions; size_t deletion_count;
    const int64_t *insertions; size_t insertion_count;
    const int64_t *updates; size_t update_count;
    const int64_t *moves; size_t move_count;
} ref_changeset_t;

/* Checks `changeset` for `rows` in move mode `mode` (0 minimal, 1 displaced, 2 none).
 * Returns NULL when correct, else a static description of the first problem found. */
const char *ref_check(const ref_rows_t *rows, const ref_changeset_t *changeset, int mode);

/* The reference for repeated identities on one side: is_repeat[i] = 1 when an earlier
 * row has row i's identity. */
void ref_mark_repeats(const int *ids, size_t count, unsigned char *is_repeat);

#endif
