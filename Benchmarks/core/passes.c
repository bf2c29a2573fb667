/* Times each pass of the C core on a stream of keyed snapshots, without the Swift layer:
 * the figures behind the README's per-pass notes.
 *
 *   make bench-core                      # 100,000 rows, 300 updates, 0.25% of each change kind
 *   .build-core/passes ROWS UPDATES DELETED MOVED INSERTED UPDATED
 *
 * Each snapshot is the previous one with DELETED rows deleted, MOVED rows moved to random
 * places, INSERTED fresh rows inserted and UPDATED contents changed (counts, per update).
 * Prints the median milliseconds of match, update marking, moves and listing. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "CDiffCore.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint64_t state = 0x9E3779B97F4A7C15u;
static uint64_t next_random(void) { /* xorshift64 */
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return state;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, size_t count) {
    qsort(values, count, sizeof(double), by_value);
    return values[count / 2];
}

static size_t argument(int argc, char **argv, int index, size_t fallback) {
    return argc > index ? (size_t)strtoull(argv[index], NULL, 10) : fallback;
}

int main(int argc, char **argv) {
    const size_t rows = argument(argc, argv, 1, 100000), updates = argument(argc, argv, 2, 300);
    const size_t deleted = argument(argc, argv, 3, rows / 400), moved = argument(argc, argv, 4, rows / 400);
    const size_t inserted = argument(argc, argv, 5, rows / 400), changed = argument(argc, argv, 6, rows / 400);
    if (rows == 0 || updates == 0 || deleted + moved > rows / 2 || inserted > rows) {
        fprintf(stderr, "passes: need ROWS > 0, UPDATES > 0, DELETED + MOVED <= ROWS / 2, INSERTED <= ROWS\n");
        return 2;
    }
    const size_t limit = rows + updates * inserted + 1;
    uint64_t *keys = malloc(limit * 8), *next_keys = malloc(limit * 8);
    uint64_t *contents = malloc(limit * 8), *next_contents = malloc(limit * 8);
    unsigned char *dropped = calloc(limit, 1);
    size_t *taken = malloc((deleted + moved + 1) * sizeof(size_t));
    int64_t *lists = malloc(limit * 6 * sizeof(int64_t));
    double *match = malloc(updates * 8), *mark = malloc(updates * 8), *finish = malloc(updates * 8), *read = malloc(updates * 8);
    size_t workspace_size = dc_diff_workspace_size(limit, limit);
    void *workspace = aligned_alloc(64, (workspace_size + 63) / 64 * 64);
    if (!keys || !next_keys || !contents || !next_contents || !dropped || !taken || !lists
        || !match || !mark || !finish || !read || !workspace) {
        fprintf(stderr, "passes: out of memory\n");
        return 2;
    }

    uint64_t next_id = 0;
    size_t count = rows;
    for (size_t i = 0; i < count; i++) { keys[i] = ++next_id; contents[i] = next_random() % 1000; }
    for (size_t update = 0; update < updates; update++) {
        // Drop DELETED + MOVED distinct rows; MOVED of them come back at random places.
        memset(dropped, 0, count);
        size_t drops = 0;
        while (drops < deleted + moved) {
            size_t row = next_random() % count;
            if (!dropped[row]) { dropped[row] = 1; taken[drops++] = row; }
        }
        size_t to_move = moved, to_insert = inserted, next_count = 0;
        for (size_t i = 0; i <= count; i++) {
            const bool last = i == count; /* whatever is left goes at the end */
            while (to_move && (last || next_random() % (count / moved + 1) == 0)) {
                size_t row = taken[--to_move];
                next_keys[next_count] = keys[row]; next_contents[next_count++] = contents[row];
                if (!last) break;
            }
            while (to_insert && (last || next_random() % (count / inserted + 1) == 0)) {
                to_insert--;
                next_keys[next_count] = ++next_id; next_contents[next_count++] = next_random() % 1000;
                if (!last) break;
            }
            if (!last && !dropped[i]) { next_keys[next_count] = keys[i]; next_contents[next_count++] = contents[i]; }
        }
        for (size_t u = 0; u < changed && next_count; u++) next_contents[next_random() % next_count]++;

        dc_match_input_t input = { .old_keys = keys, .old_count = count, .new_keys = next_keys, .new_count = next_count };
        dc_counts_t counts;
        double t0 = now_ms();
        dc_status_t status = dc_match(workspace, workspace_size, &input);
        double t1 = now_ms();
        if (status == DC_OK) status = dc_mark_updates_by_hash(workspace, contents, next_contents, NULL, NULL);
        double t2 = now_ms();
        if (status == DC_OK) status = dc_finish(workspace, DC_MOVES_MINIMAL, &counts);
        double t3 = now_ms();
        dc_changeset_buffers_t out = {
            lists, counts.deletions, lists + limit, counts.insertions,
            lists + 2 * limit, counts.updates, lists + 4 * limit, counts.moves };
        if (status == DC_OK) status = dc_read(workspace, 0, &out);
        double t4 = now_ms();
        if (status != DC_OK) {
            fprintf(stderr, "passes: %s\n", dc_status_message(status));
            return 1;
        }
        match[update] = t1 - t0; mark[update] = t2 - t1; finish[update] = t3 - t2; read[update] = t4 - t3;
        uint64_t *swap = keys; keys = next_keys; next_keys = swap;
        swap = contents; contents = next_contents; next_contents = swap;
        count = next_count;
    }
    const double medians[4] = { median(match, updates), median(mark, updates), median(finish, updates), median(read, updates) };
    printf("rows %zu, %zu updates (-%zu ~%zu +%zu *%zu each); median ms: match %.4f  updates %.4f  moves %.4f  lists %.4f  (sum %.4f)\n",
           rows, updates, deleted, moved, inserted, changed, medians[0], medians[1], medians[2], medians[3],
           medians[0] + medians[1] + medians[2] + medians[3]);
    return 0;
}
