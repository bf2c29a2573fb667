#include "reference_differ.h"

#include <stdbool.h>
#include <stdlib.h>

/* Each new row takes the first unused old row of its identity: k-th occurrences pair. */
static void ref_pair(const ref_rows_t *rows, long *new_to_old) {
    bool *used = calloc(rows->old_count + 1, 1);
    for (size_t j = 0; j < rows->new_count; j++) {
        new_to_old[j] = -1;
        for (size_t i = 0; i < rows->old_count; i++) {
            if (!used[i] && rows->old_ids[i] == rows->new_ids[j]) {
                used[i] = true;
                new_to_old[j] = (long)i;
                break;
            }
        }
    }
    free(used);
}

/* Length of a longest increasing subsequence of the new indexes in old order, O(k²). */
static size_t ref_lis(const ref_rows_t *rows, const long *new_to_old) {
    size_t m = rows->old_count;
    long *sequence = malloc((m + 1) * sizeof(long));
    size_t *best = malloc((m + 1) * sizeof(size_t));
    long *old_to_new = malloc((m + 1) * sizeof(long));
    size_t count = 0, longest = 0;
    for (size_t i = 0; i < m; i++) old_to_new[i] = -1;
    for (size_t j = 0; j < rows->new_count; j++) {
        if (new_to_old[j] >= 0) old_to_new[new_to_old[j]] = (long)j;
    }
    for (size_t i = 0; i < m; i++) {
        if (old_to_new[i] >= 0) sequence[count++] = old_to_new[i];
    }
    free(old_to_new);
    for (size_t a = 0; a < count; a++) {
        best[a] = 1;
        for (size_t b = 0; b < a; b++) {
            if (sequence[b] < sequence[a] && best[b] + 1 > best[a]) best[a] = best[b] + 1;
        }
        if (best[a] > longest) longest = best[a];
    }
    free(sequence);
    free(best);
    return longest;
}

static bool ascending(const int64_t *values, size_t count, size_t stride, int64_t limit) {
    for (size_t k = 0; k < count; k++) {
        int64_t value = values[k * stride];
        if (value < 0 || value >= limit) return false;
        if (k > 0 && values[(k - 1) * stride] >= value) return false;
    }
    return true;
}

static bool pair_in_range(const int64_t *pairs, size_t count, size_t m) {
    for (size_t k = 0; k < count; k++) {
        if (pairs[2 * k] < 0 || pairs[2 * k] >= (int64_t)m) return false;
    }
    return true;
}

const char *ref_check(const ref_rows_t *rows, const ref_changeset_t *c, int mode) {
    const size_t m = rows->old_count, n = rows->new_count;
    const char *problem = NULL;
    /* Lists sorted, in range, free of repeats; pairs ordered by new index. */
    if (!ascending(c->deletions, c->deletion_count, 1, (int64_t)m)) return "deletions not ascending or out of range";
    if (!ascending(c->insertions, c->insertion_count, 1, (int64_t)n)) return "insertions not ascending or out of range";
    if (!ascending(c->updates + 1, c->update_count, 2, (int64_t)n) || !pair_in_range(c->updates, c->update_count, m)) {
        return "updates not ordered by new index or out of range";
    }
    if (!ascending(c->moves + 1, c->move_count, 2, (int64_t)n) || !pair_in_range(c->moves, c->move_count, m)) {
        return "moves not ordered by new index or out of range";
    }

    bool *old_touched = calloc(m + 1, 1), *new_touched = calloc(n + 1, 1), *updated = calloc(n + 1, 1);
    long *origin = malloc((n + 1) * sizeof(long));
    long *reference = malloc((n + 1) * sizeof(long));
    for (size_t j = 0; j < n; j++) origin[j] = -1;

    /* Rule 1: each old index at most once in deletions ∪ moves.old, each new index at most
     * once in insertions ∪ moves.new. */
    for (size_t k = 0; k < c->deletion_count && !problem; k++) {
        if (old_touched[c->deletions[k]]) problem = "old index deleted twice";
        old_touched[c->deletions[k]] = true;
    }
    for (size_t k = 0; k < c->move_count && !problem; k++) {
        if (old_touched[c->moves[2 * k]]) problem = "old index deleted or moved twice";
        old_touched[c->moves[2 * k]] = true;
    }
    for (size_t k = 0; k < c->insertion_count && !problem; k++) {
        new_touched[c->insertions[k]] = true;
    }
    for (size_t k = 0; k < c->move_count && !problem; k++) {
        if (new_touched[c->moves[2 * k + 1]]) problem = "new index inserted or moved into twice";
        new_touched[c->moves[2 * k + 1]] = true;
        origin[c->moves[2 * k + 1]] = (long)c->moves[2 * k];
    }

    /* Rule 2: the untouched old rows fill the untouched places in order. */
    if (!problem) {
        size_t i = 0;
        for (size_t j = 0; j < n && !problem; j++) {
            if (new_touched[j]) continue;
            while (i < m && old_touched[i]) i++;
            if (i == m) problem = "fewer staying old rows than free places";
            else origin[j] = (long)i++;
        }
        while (!problem && i < m && old_touched[i]) i++;
        if (!problem && i < m) problem = "more staying old rows than free places";
    }

    /* Rule 3: identities line up; contents differ exactly at updates; updates are pairs. */
    for (size_t k = 0; k < c->update_count && !problem; k++) {
        size_t j = (size_t)c->updates[2 * k + 1];
        updated[j] = true;
        if (origin[j] != (long)c->updates[2 * k]) problem = "an update is not a pair of the applied result";
    }
    for (size_t j = 0; j < n && !problem; j++) {
        if (origin[j] < 0) continue;
        if (rows->old_ids[origin[j]] != rows->new_ids[j]) problem = "an applied row has another identity";
        else if ((rows->old_contents[origin[j]] != rows->new_contents[j]) != updated[j]) {
            problem = updated[j] ? "an update changes nothing" : "a changed row is not an update";
        }
    }

    /* Rule 4: the pairing is the reference's; moves as the mode defines them. */
    if (!problem) {
        ref_pair(rows, reference);
        size_t reference_pairs = 0, implied_pairs = 0;
        for (size_t j = 0; j < n; j++) {
            reference_pairs += reference[j] >= 0;
            implied_pairs += origin[j] >= 0;
        }
        size_t lis = ref_lis(rows, reference);
        if (mode == 0 || mode == 1) {
            for (size_t j = 0; j < n && !problem; j++) {
                if (origin[j] != reference[j]) problem = "the pairing differs from the reference";
            }
        }
        if (!problem && mode == 0 && c->move_count != reference_pairs - lis) problem = "minimal mode: moves != paired - LIS";
        if (!problem && mode == 1) {
            /* A pair moves when old - deletions before it + insertions before it != new.
             * deleted_before[i]: the old rows before i that the reference leaves unpaired. */
            bool *old_paired = calloc(m + 1, 1);
            size_t *deleted_before = malloc((m + 1) * sizeof(size_t));
            for (size_t j = 0; j < n; j++) {
                if (reference[j] >= 0) old_paired[reference[j]] = true;
            }
            deleted_before[0] = 0;
            for (size_t i = 0; i < m; i++) deleted_before[i + 1] = deleted_before[i] + !old_paired[i];
            size_t expected = 0, insertions_before = 0, k = 0;
            for (size_t j = 0; j < n && !problem; j++) {
                if (reference[j] < 0) {
                    insertions_before++;
                    continue;
                }
                const size_t deletions_before = deleted_before[reference[j]];
                if ((size_t)reference[j] - deletions_before + insertions_before != j) {
                    expected++;
                    if (k >= c->move_count || c->moves[2 * k + 1] != (int64_t)j) problem = "displaced moves differ from the reference";
                    k++;
                }
            }
            if (!problem && expected != c->move_count) problem = "displaced mode: wrong number of moves";
            free(old_paired);
            free(deleted_before);
        }
        if (!problem && mode == 2) {
            if (c->move_count != 0) problem = "none mode reported moves";
            for (size_t j = 0; j < n && !problem; j++) {
                if (origin[j] >= 0 && origin[j] != reference[j]) problem = "none mode kept a pair outside the reference";
            }
            if (!problem && implied_pairs != lis) problem = "none mode: kept pairs != LIS";
        }
    }
    free(old_touched);
    free(new_touched);
    free(updated);
    free(origin);
    free(reference);
    return problem;
}

void ref_mark_repeats(const int *ids, size_t count, unsigned char *is_repeat) {
    for (size_t i = 0; i < count; i++) {
        is_repeat[i] = 0;
        for (size_t k = 0; k < i; k++) {
            if (ids[k] == ids[i]) {
                is_repeat[i] = 1;
                break;
            }
        }
    }
}
