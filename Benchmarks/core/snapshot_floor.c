/* The least a stateful diff can cost: time to read a new snapshot that is not in cache and
 * compare it with the previous one, as the `Differ`'s walk does, with nothing else done.
 *
 *   make bench-floor                     # 100,000 rows of 16 bytes, 200 snapshots
 *   .build-core/snapshot_floor ROWS STRIDE SNAPSHOTS
 *
 * The snapshots are made first, as `diffbench` makes a stream's, so that each new one comes
 * from memory while the previous one was read last (as the `Differ` reads them). Each
 * comparison fetches 2 KiB ahead, as the walk does. Prints the median milliseconds of the
 * comparison alone, and with each row's first 8 bytes written out as its key (what the
 * walk keeps for the next call). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FETCH_AHEAD 2048
#define BLOCK_BYTES 256

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Compares `bytes` of two snapshots a block at a time; writes each row's first word to
 * `keys` when it is not NULL. Returns whether they differ anywhere (so none of it is dead). */
static uint64_t compare(const unsigned char *old_rows, const unsigned char *new_rows, size_t bytes, size_t stride,
                        uint64_t *keys) {
    uint64_t differ = 0;
    for (size_t offset = 0; offset + BLOCK_BYTES <= bytes; offset += BLOCK_BYTES) {
        for (size_t line = 0; line < BLOCK_BYTES; line += 64) __builtin_prefetch(new_rows + offset + FETCH_AHEAD + line);
        for (size_t word = 0; word < BLOCK_BYTES; word += 8) {
            uint64_t a, b;
            memcpy(&a, old_rows + offset + word, 8);
            memcpy(&b, new_rows + offset + word, 8);
            differ |= a ^ b;
        }
        if (keys != NULL) {
            for (size_t row = offset; row < offset + BLOCK_BYTES; row += stride) memcpy(keys++, new_rows + row, 8);
        }
    }
    return differ;
}

int main(int argc, char **argv) {
    const size_t rows = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    const size_t stride = argc > 2 ? strtoul(argv[2], NULL, 10) : 16;
    const size_t count = argc > 3 ? strtoul(argv[3], NULL, 10) : 200;
    if (rows == 0 || stride < 8 || stride % 8 != 0 || BLOCK_BYTES % stride != 0 || count < 2) {
        fprintf(stderr, "usage: snapshot_floor ROWS STRIDE (8, 16, 32, 64, 128 or 256) SNAPSHOTS (at least 2)\n");
        return 2;
    }
    const size_t bytes = rows * stride / BLOCK_BYTES * BLOCK_BYTES;
    unsigned char **snapshots = malloc(count * sizeof *snapshots);
    uint64_t *keys[2] = { malloc(rows * 8), malloc(rows * 8) };
    double *alone = malloc((count - 1) * sizeof *alone), *with_keys = malloc((count - 1) * sizeof *with_keys);
    if (snapshots == NULL || keys[0] == NULL || keys[1] == NULL || alone == NULL || with_keys == NULL) return 1;
    for (size_t s = 0; s < count; s++) {
        if ((snapshots[s] = malloc(bytes + FETCH_AHEAD)) == NULL) return 1;
        for (size_t b = 0; b < bytes + FETCH_AHEAD; b++) snapshots[s][b] = (unsigned char)(b * 7 + s);
    }
    uint64_t sink = 0;
    /* Two passes: the comparison alone, then with the keys (two key arrays in turn, as the
     * Differ keeps the previous call's). The snapshots a pass starts with left the cache
     * while the other pass read the rest. */
    for (size_t s = 1; s < count; s++) {
        const double start = now_ms();
        sink += compare(snapshots[s - 1], snapshots[s], bytes, stride, NULL);
        alone[s - 1] = now_ms() - start;
    }
    for (size_t s = 1; s < count; s++) {
        const double start = now_ms();
        sink += compare(snapshots[s - 1], snapshots[s], bytes, stride, keys[s % 2]);
        with_keys[s - 1] = now_ms() - start;
    }
    qsort(alone, count - 1, sizeof *alone, by_value);
    qsort(with_keys, count - 1, sizeof *with_keys, by_value);
    printf("%zu rows of %zu bytes, %zu snapshots: compare %.4f ms, compare and write keys %.4f ms (medians; %llu)\n",
           rows, stride, count, alone[(count - 1) / 2], with_keys[(count - 1) / 2], (unsigned long long)(sink & 1));
    return 0;
}
