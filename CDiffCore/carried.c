/* Carried identity keys: a stateful differ keeps the set of its last snapshot's identity
 * keys, so that the next diff pairs rows without indexing any old row, and without
 * dc_match()'s check of the pairs its sequence made (pass 1d): the set says which
 * identities occur once. dc_match_carried() reads as its table
 * of contents, as dc_match() does. */
#include <string.h>

#include "CDiffCoreTesting.h"
#include "identity_table.h"
#include "workspace.h"

#define DC_KEY_SET_MAGIC UINT64_C(0x44436b6579736574)

/* The set: open addressing with linear probing over `capacity` keys; 0 marks an empty
 * slot, so a key 0 is kept in `holds_zero` instead. Deletion shifts later keys back (no
 * tombstones), so probe sequences stay as short as a fresh table's. */
typedef struct dc_key_set {
    uint64_t magic;
    size_t capacity;
    unsigned shift;
    uint32_t usable;     /* keys pairwise distinct and the set current */
    size_t count;        /* keys held, the zero key included */
    uint32_t holds_zero;
    uint32_t reserved;
    dc_placement_t placement;
} dc_key_set_t;

_Static_assert(sizeof(dc_key_set_t) % 8 == 0, "slots after the header stay 8-byte aligned");

static inline uint64_t *dc_set_slots(dc_key_set_t *set) { return (uint64_t *)(set + 1); }
static inline const uint64_t *dc_set_slots_const(const dc_key_set_t *set) { return (const uint64_t *)(set + 1); }

/* Up to 3/4 full: a set built at most half full takes 1.5 times its keys before rebuilding. */
static inline size_t dc_set_limit(size_t capacity) { return capacity / 4 * 3; }

size_t dc_key_set_size(size_t count) {
    if (count > DC_MAX_ROWS) return 0;
    return sizeof(dc_key_set_t) + dc_table_capacity(count) * 8;
}

static inline size_t dc_set_home(const dc_key_set_t *set, uint64_t key) {
    return (size_t)(dc_place(key, &set->placement) >> set->shift);
}

static bool dc_set_contains(const dc_key_set_t *set, uint64_t key) {
    if (key == 0) return set->holds_zero != 0;
    const uint64_t *slots = dc_set_slots_const(set);
    const size_t wrap = set->capacity - 1;
    for (size_t position = dc_set_home(set, key);; position = (position + 1) & wrap) {
        if (slots[position] == key) return true;
        if (slots[position] == 0) return false;
    }
}

/* How many lookups ahead a batch of them prefetches its slots. */
#define DC_SET_PREFETCH_DISTANCE 16

static inline void dc_set_prefetch(const dc_key_set_t *set, uint64_t key) {
    __builtin_prefetch(&dc_set_slots_const(set)[dc_set_home(set, key)]);
}

/* How many listed rows ahead dc_key_set_update() fetches the slot of a row's key, and twice
 * as far the key itself: the rows lie anywhere, so both are likely misses, which waiting for
 * one at a time made most of the update's time. */
#define DC_SET_UPDATE_AHEAD 8

/* Before the update of listed row k: fetches the key of the row 2 * DC_SET_UPDATE_AHEAD
 * further on, and the slot of the one DC_SET_UPDATE_AHEAD on (its key fetched before). */
static inline void dc_set_prefetch_listed(const dc_key_set_t *set, const uint64_t *keys, const int64_t *rows,
                                          size_t count, size_t k) {
    if (k + 2 * DC_SET_UPDATE_AHEAD < count) __builtin_prefetch(&keys[rows[k + 2 * DC_SET_UPDATE_AHEAD]]);
    if (k + DC_SET_UPDATE_AHEAD < count) dc_set_prefetch(set, keys[rows[k + DC_SET_UPDATE_AHEAD]]);
}

/* Adds `key`; false when it was there already. The caller keeps the set below its limit. */
static bool dc_set_insert(dc_key_set_t *set, uint64_t key) {
    if (key == 0) {
        if (set->holds_zero) return false;
        set->holds_zero = 1;
        set->count++;
        return true;
    }
    uint64_t *slots = dc_set_slots(set);
    const size_t wrap = set->capacity - 1;
    for (size_t position = dc_set_home(set, key);; position = (position + 1) & wrap) {
        if (slots[position] == key) return false;
        if (slots[position] == 0) {
            slots[position] = key;
            set->count++;
            return true;
        }
    }
}

/* Removes `key`; false when the set does not hold it. Every key after it in its run moves
 * back if that brings it nearer its home slot, so no lookup ever stops short of a key. */
static bool dc_set_remove(dc_key_set_t *set, uint64_t key) {
    if (key == 0) {
        if (!set->holds_zero) return false;
        set->holds_zero = 0;
        set->count--;
        return true;
    }
    uint64_t *slots = dc_set_slots(set);
    const size_t wrap = set->capacity - 1;
    size_t hole = dc_set_home(set, key);
    while (slots[hole] != key) {
        if (slots[hole] == 0) return false;
        hole = (hole + 1) & wrap;
    }
    for (size_t next = (hole + 1) & wrap; slots[next] != 0; next = (next + 1) & wrap) {
        size_t home = dc_set_home(set, slots[next]);
        if (((next - home) & wrap) >= ((next - hole) & wrap)) {
            slots[hole] = slots[next];
            hole = next;
        }
    }
    slots[hole] = 0;
    set->count--;
    return true;
}

static dc_key_set_t *dc_key_set_checked(const void *set, size_t set_size) {
    if (set == NULL || ((uintptr_t)set % 8) != 0 || set_size < sizeof(dc_key_set_t)) return NULL;
    dc_key_set_t *keys = (dc_key_set_t *)(uintptr_t)set;
    if (keys->magic != DC_KEY_SET_MAGIC || set_size < sizeof(dc_key_set_t) + keys->capacity * 8) return NULL;
    return keys;
}

dc_status_t dc_key_set_build(void *set, size_t set_size, const uint64_t *keys, size_t count,
                             uint64_t placement_seed, bool *distinct) {
    if (set == NULL || distinct == NULL || (count && keys == NULL)) return DC_ERR_NULL_POINTER;
    const size_t needed = dc_key_set_size(count);
    if (needed == 0) return DC_ERR_TOO_MANY_ROWS;
    dc_status_t status = dc_check_workspace(set, set_size, needed);
    if (status != DC_OK) return status;
    dc_key_set_t *built = (dc_key_set_t *)set;
    memset(built, 0, sizeof *built);
    built->capacity = dc_table_capacity(count);
    built->shift = dc_table_shift(built->capacity);
    built->placement = dc_placement_from_seed(placement_seed);
    memset(dc_set_slots(built), 0, built->capacity * 8);
    built->magic = DC_KEY_SET_MAGIC;
    *distinct = true;
    for (size_t i = 0; i < count; i++) {
        if (!dc_set_insert(built, keys[i])) {
            *distinct = false;
            return DC_OK; /* not usable: the walk below relies on one old row a key */
        }
    }
    built->usable = 1;
    return DC_OK;
}

/* How many old rows from the expected one the walk compares before it looks further, how
 * many rows in a row may stay off the sequence before it scans ahead for where the old
 * rows continue, and how far the first such scan looks (each later one in the same run
 * looks twice as far, once the run is twice as long: linear in all). */
#define DC_CARRIED_WINDOW 4
#define DC_CARRIED_RESYNC_AFTER 4
#define DC_CARRIED_SCAN 64

/* Everything the walk's steps share. */
typedef struct dc_walker {
    dc_workspace_t *ws;
    size_t m, n;
    const dc_key_set_t *set;
    const uint64_t *old_keys;
    uint64_t *new_keys;
    dc_verifier_t verifier;
    uint64_t *deferred;  /* new rows whose identity is in an old row off the sequence */
    size_t paired;
    /* What the walk reads besides the keys (the caller's input). DC_ROWS_FIELDS: the new keys
     * are read out of the rows a little ahead of the walk, and contents are compared as rows
     * pair, into `updated`. DC_ROWS_BYTES: pairs whose bytes differ go to `candidates`. */
    const dc_carried_input_t *rows;
    /* Whether new keys are written as the walk needs them (by read_keys, or out of the rows),
     * rather than all given. */
    bool reads_keys;
    uint64_t *candidates;
    /* new_keys[0 ..< keys_ready] are written, or kept: the in-place prefix's keys are the old
     * ones, and are never written. */
    size_t keys_ready;
    size_t kept;         /* the in-place prefix: new rows [0, kept) have the old rows' identities */
    uint64_t *updated;
    /* The pairing, as segments (workspace.h) and a bit a paired row on each side. */
    uint64_t *old_paired, *new_paired;
    dc_segment_t *segments;
    size_t segment_count;
    size_t walk_segments; /* the walk's segments; the deferred rows' follow */
} dc_walker_t;

/* How many keys past the one it needs the walk reads out of the rows at a time where it
 * goes a row at a time (near a change; whole blocks write their own keys). */
#define DC_KEYS_AHEAD 16

/* Which copy of the walk, by the input's kind of rows (DC_ROWS_NONE, DC_ROWS_FIELDS,
 * DC_ROWS_BYTES). A constant in each copy. */
typedef enum { DC_WALK_KEYS, DC_WALK_FIELDS, DC_WALK_BYTES } dc_walk_mode_t;

static inline uint64_t dc_load_field(const unsigned char *field) {
    uint64_t value;
    memcpy(&value, field, sizeof value);
    return value;
}

/* Old row i's key. Rows mode reads it out of the row, which the walk streams through the
 * cache anyway, where the old keys' array is read only near changes, each read a miss. */
static DC_ALWAYS_INLINE uint64_t dc_old_key(const dc_walker_t *w, size_t i, const bool fields) {
    if (!fields) return w->old_keys[i];
    return dc_load_field((const unsigned char *)w->rows->old_rows + i * w->rows->stride + w->rows->identity_offset);
}

/* How far ahead of the walk the new rows are fetched: a fresh snapshot is rarely in cache,
 * and the hardware's own prefetching alone left the walk waiting for it (measured in
 * Benchmarks/RESULTS.md). */
#define DC_ROWS_PREFETCH_BYTES 2048

/* Writes new keys [from, to) out of the rows (DC_ROWS_FIELDS). */
static void dc_read_row_keys(const dc_carried_input_t *rows, uint64_t *keys, size_t from, size_t to) {
    const unsigned char *field = (const unsigned char *)rows->new_rows + from * rows->stride + rows->identity_offset;
    for (size_t j = from; j < to; j++, field += rows->stride) {
        __builtin_prefetch(field + DC_ROWS_PREFETCH_BYTES);
        keys[j] = dc_load_field(field);
    }
}

/* Writes new keys [from, to), however this input gives them. */
static void dc_write_keys(const dc_walker_t *w, size_t from, size_t to) {
    if (from >= to) return;
    if (w->rows->rows == DC_ROWS_FIELDS) {
        dc_read_row_keys(w->rows, w->new_keys, from, to);
    } else if (w->rows->read_keys != NULL) {
        w->rows->read_keys(w->rows->read_context, from, to);
    }
}

/* Makes new keys [0, upto) readable (and some after them), where keys are read as needed. */
static inline void dc_keys_ready(dc_walker_t *w, size_t upto) {
    if (!w->reads_keys || upto <= w->keys_ready) return;
    const size_t end = w->n - upto > DC_KEYS_AHEAD ? upto + DC_KEYS_AHEAD : w->n;
    dc_write_keys(w, w->keys_ready, end);
    w->keys_ready = end;
}

/* Bytes mode: the bits [i, i + 16) of `bits` as the low bits of one value. */
static inline uint32_t dc_bits16(const uint64_t *bits, size_t i) {
    const size_t word = i / 64, shift = i % 64;
    uint64_t value = bits[word] >> shift;
    if (shift > 48) value |= bits[word + 1] << (64 - shift);
    return (uint32_t)(value & 0xFFFF);
}

/* Bytes mode: sets the bits [i, i + 16) of `bits` that are set in the low 16 bits of
 * `value` (none past the bitmap's rows). */
static inline void dc_or_bits16(uint64_t *bits, size_t i, uint32_t value) {
    if (value == 0) return;
    const size_t word = i / 64, shift = i % 64;
    bits[word] |= (uint64_t)value << shift;
    if (shift > 48 && (value >> (64 - shift)) != 0) bits[word + 1] |= (uint64_t)value >> (64 - shift);
}

/* Bytes mode: whether new row j cannot be taken as equal to old row i without the caller's
 * equality: their bytes differ, or the old row was unequal to itself. */
static inline bool dc_bytes_need_compare(const dc_carried_input_t *rows, size_t i, size_t j) {
    if (rows->old_self_unequal != NULL && dc_bit_get(rows->old_self_unequal, i)) return true;
    return memcmp((const unsigned char *)rows->old_rows + i * rows->stride,
                  (const unsigned char *)rows->new_rows + j * rows->stride, rows->stride) != 0;
}

static inline bool dc_contents_differ(const dc_carried_input_t *layout, size_t i, size_t j) {
    const unsigned char *old_row = (const unsigned char *)layout->old_rows + i * layout->stride;
    const unsigned char *new_row = (const unsigned char *)layout->new_rows + j * layout->stride;
    for (size_t c = 0; c < layout->content_count; c++) {
        const size_t offset = layout->content_offsets[c];
        if (dc_load_field(old_row + offset) != dc_load_field(new_row + offset)) return true;
    }
    return false;
}

/* Pairs old rows [i, i + length) with new rows [j, j + length), which continue the last
 * segment or start one. */
static inline void dc_add_segment(dc_walker_t *w, size_t i, size_t j, size_t length) {
    dc_segment_t *last = w->segment_count > 0 ? &w->segments[w->segment_count - 1] : NULL;
    if (last != NULL && last->old_start + (size_t)last->length == i && last->new_start + (size_t)last->length == j) {
        last->length += (uint32_t)length;
    } else {
        w->segments[w->segment_count++] = (dc_segment_t){ (uint32_t)i, (uint32_t)j, (uint32_t)length };
    }
    dc_bits_set_range(w->old_paired, i, length);
    dc_bits_set_range(w->new_paired, j, length);
    w->paired += length;
}

/* Rows mode: marks new row j updated when its contents differ from old row i's. Bytes
 * mode: makes it a candidate when the caller's equality must tell. */
static inline void dc_compare_pair(dc_walker_t *w, size_t i, size_t j) {
    if (w->rows->rows == DC_ROWS_FIELDS && dc_contents_differ(w->rows, i, j)) dc_bit_set(w->updated, j);
    if (w->rows->rows == DC_ROWS_BYTES && dc_bytes_need_compare(w->rows, i, j)) dc_bit_set(w->candidates, j);
}

/* What looking at old row i for new row j found. */
typedef enum { DC_LOOK_OTHER, DC_LOOK_PARTNER, DC_LOOK_ABSENT } dc_look_t;

/* Old keys are distinct, so an old row with j's key is the only one that can have j's
 * identity: if it is taken (by an earlier new row) or has another identity, j pairs with
 * nothing. */
static DC_ALWAYS_INLINE dc_look_t dc_look(dc_walker_t *w, size_t i, size_t j, uint64_t key, const bool fields) {
    if (dc_old_key(w, i, fields) != key) return DC_LOOK_OTHER;
    if (dc_bit_get(w->old_paired, i)) return DC_LOOK_ABSENT;
    if (w->verifier.equal != NULL && !w->verifier.equal(w->verifier.context, DC_SIDE_OLD, i, DC_SIDE_NEW, j)) {
        w->verifier.failed++;
        return DC_LOOK_ABSENT;
    }
    return DC_LOOK_PARTNER;
}

/* `rows`: whether the walk reads rows (fields or bytes), a constant in each copy of the walk. */
static inline void dc_walk_pair_as(dc_walker_t *w, size_t i, size_t j, bool rows) {
    dc_add_segment(w, i, j, 1);
    if (rows) dc_compare_pair(w, i, j);
}

static inline void dc_walk_pair(dc_walker_t *w, size_t i, size_t j) { dc_walk_pair_as(w, i, j, w->rows->rows != DC_ROWS_NONE); }

/* How many rows the walk compares at a time while the sequence holds, branch-free. */
#define DC_FOLLOW_BLOCK 16

/* The end of a block that differs: how many of its rows pair in sequence (up to the first
 * bit of `other`, a row of another identity), flagging in `flags` the paired rows whose bit
 * of `changed` is set. */
static inline size_t dc_block_pairs(uint64_t *flags, size_t j, uint32_t other, uint32_t changed) {
    const size_t paired = other != 0 ? (size_t)__builtin_ctz(other) : DC_FOLLOW_BLOCK;
    changed &= (uint32_t)((UINT64_C(1) << paired) - 1);
    for (; changed != 0; changed &= changed - 1) dc_bit_set(flags, j + (size_t)__builtin_ctz(changed));
    return paired;
}

/* Two 8-byte lanes, compared and moved 16 bytes at a time (SSE2 and NEON, the baseline of
 * both 64-bit targets). */
typedef uint64_t dc_u64x2 __attribute__((vector_size(16)));

/* An empty statement the compiler must take as changing `vector`, in a vector register: it
 * keeps a reduction in program order. Without it the compiler moves the reduction past the
 * stores that follow it and spills the loads it must make before them. */
#if defined(__x86_64__) || defined(__i386__)
#define DC_VECTOR_IN_ORDER(vector) __asm__("" : "+x"(vector))
#elif defined(__aarch64__)
#define DC_VECTOR_IN_ORDER(vector) __asm__("" : "+w"(vector))
#else
#define DC_VECTOR_IN_ORDER(vector) ((void)0)
#endif

/* Whether `length` bytes (a multiple of 8) differ between old and new, compared 8 at a time. */
static DC_ALWAYS_INLINE bool dc_bytes_differ(const unsigned char *old_bytes, const unsigned char *new_bytes, const size_t length) {
    uint64_t differ = 0;
    for (size_t word = 0; word < length / 8; word++) differ |= dc_load_field(old_bytes + word * 8) ^ dc_load_field(new_bytes + word * 8);
    return differ != 0;
}

/* Rows and bytes modes: whether 16 old rows and 16 new rows differ anywhere in their bytes
 * (16 strides are a multiple of 8), the new rows fetched ahead a cache line at a time. */
static DC_ALWAYS_INLINE bool dc_block_differs(const unsigned char *old_row, const unsigned char *new_row, const size_t stride) {
    for (size_t offset = 0; offset < DC_FOLLOW_BLOCK * stride; offset += 64) {
        __builtin_prefetch(new_row + DC_ROWS_PREFETCH_BYTES + offset);
    }
    return dc_bytes_differ(old_row, new_row, DC_FOLLOW_BLOCK * stride);
}

/* Rows in a quarter of a block. */
#define DC_BLOCK_QUARTER (DC_FOLLOW_BLOCK / 4)

/* Bytes mode: which quarters of 16 old rows and 16 new rows differ anywhere in their bytes
 * (bit q for rows [4q, 4q + 4)), in one pass 16 bytes at a time (a quarter's 4 strides are a
 * multiple of 32 bytes), the new rows fetched ahead a cache line at a time. The quarters let
 * a changed block compare 4 rows one by one instead of 16. */
static DC_ALWAYS_INLINE uint32_t dc_block_quarters_differ(const unsigned char *old_row, const unsigned char *new_row,
                                                         const size_t stride) {
    for (size_t offset = 0; offset < DC_FOLLOW_BLOCK * stride; offset += 64) {
        __builtin_prefetch(new_row + DC_ROWS_PREFETCH_BYTES + offset);
    }
    const size_t quarter_bytes = DC_BLOCK_QUARTER * stride;
    dc_u64x2 differ[4] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
    for (uint32_t q = 0; q < 4; q++) {
        for (size_t offset = q * quarter_bytes; offset < (q + 1) * quarter_bytes; offset += 16) {
            dc_u64x2 a, b;
            memcpy(&a, old_row + offset, sizeof a);
            memcpy(&b, new_row + offset, sizeof b);
            differ[q] |= a ^ b;
        }
    }
    /* The common case, an unchanged block, folds once. */
    const dc_u64x2 any = differ[0] | differ[1] | differ[2] | differ[3];
    if ((any[0] | any[1]) == 0) return 0;
    uint32_t quarters = 0;
    for (uint32_t q = 0; q < 4; q++) quarters |= (uint32_t)((differ[q][0] | differ[q][1]) != 0) << q;
    return quarters;
}

/* What the blocks of one run of dc_follow_blocks_as() over fields read and write, taken out
 * of the walker once: the keys and flags they store to are uint64_t, as the walker's fields
 * are, so read through the walker each block would be reloaded after every store. */
typedef struct dc_rows_run {
    const dc_carried_input_t *layout;
    const unsigned char *old_rows, *new_rows;
    uint64_t *new_keys;
    uint64_t *updated;
} dc_rows_run_t;

/* Fields, one block of the walk's common case: how many of old rows [i, i + 16) and new
 * rows [j, j + 16) pair in sequence (up to the first pair of two identities), marking the
 * pairs whose contents differ; it writes the block's new keys (the run marks them ready),
 * except in the in-place prefix (`keeps`), whose keys are the old ones.
 * First the block's bytes, 8 or 16 at a time (16 strides are a multiple of 8 bytes): equal
 * bytes are equal keys (the old keys are the old rows' identity fields) and equal contents,
 * so an unchanged block costs one comparison of its bytes. A block that differs most often
 * holds one or two rows that do (an update, or the row where the sequence breaks), so it
 * goes row by row: a row's bytes first (when the stride is a multiple of 8), then its
 * identity and contents only if they differ, up to the first row of another identity. It
 * fetches the new rows ahead a cache line at a time. Compiled for the common strides, and
 * for 16-byte rows the identity's offset, as constants (`stride`, `identity_offset`), so
 * that the loops unroll and vectorize. */
static DC_ALWAYS_INLINE size_t dc_follow_rows_block_as(const dc_rows_run_t *run, size_t i, size_t j, const size_t stride,
                                                       const size_t identity_offset, const bool keeps) {
    const dc_carried_input_t *layout = run->layout;
    const unsigned char *old_row = run->old_rows + i * stride;
    const unsigned char *new_row = run->new_rows + j * stride;
    DC_CHECK(identity_offset == layout->identity_offset, "the identity where the layout puts it");
    bool differs;
    if (stride == 16 && (identity_offset == 0 || identity_offset == 8)) {
        /* A row is one vector, its identity one lane: the loads that compare two rows give
         * both their keys, one shuffle each. The keys never share memory with the rows
         * (`restrict`), and the comparison stays in order, so each pair's loads, compare and
         * store stay together, in registers. */
        for (size_t offset = 0; offset < DC_FOLLOW_BLOCK * 16; offset += 64) {
            __builtin_prefetch(new_row + DC_ROWS_PREFETCH_BYTES + offset);
        }
        const unsigned char *restrict old_pair = old_row, *restrict new_pair = new_row;
        uint64_t *restrict keys = run->new_keys + j;
        dc_u64x2 differ = {0, 0};
        for (size_t b = 0; b < DC_FOLLOW_BLOCK; b += 2) {
            dc_u64x2 old_first, old_second, new_first, new_second;
            memcpy(&old_first, old_pair + b * 16, 16);
            memcpy(&old_second, old_pair + b * 16 + 16, 16);
            memcpy(&new_first, new_pair + b * 16, 16);
            memcpy(&new_second, new_pair + b * 16 + 16, 16);
            differ |= (old_first ^ new_first) | (old_second ^ new_second);
            DC_VECTOR_IN_ORDER(differ);
            if (!keeps) {
                const dc_u64x2 pair_keys = identity_offset == 0 ? __builtin_shufflevector(new_first, new_second, 0, 2)
                                                                : __builtin_shufflevector(new_first, new_second, 1, 3);
                memcpy(keys + b, &pair_keys, 16);
            }
        }
        differs = (differ[0] | differ[1]) != 0;
    } else {
        if (!keeps) {
            const unsigned char *identity = new_row + identity_offset;
            for (size_t b = 0; b < DC_FOLLOW_BLOCK; b++) run->new_keys[j + b] = dc_load_field(identity + b * stride);
        }
        differs = dc_block_differs(old_row, new_row, stride);
    }
    if (!differs) return DC_FOLLOW_BLOCK;
    size_t b = 0;
    for (; b < DC_FOLLOW_BLOCK; b++) {
        const unsigned char *old_b = old_row + b * stride, *new_b = new_row + b * stride;
        if (stride % 8 == 0 && !dc_bytes_differ(old_b, new_b, stride)) continue;
        if (dc_load_field(old_b + identity_offset) != dc_load_field(new_b + identity_offset)) break;
        if (dc_contents_differ(layout, i + b, j + b)) dc_bit_set(run->updated, j + b);
    }
    return b;
}

/* Bytes, in the in-place prefix, a block whose rows `differs` changed their bytes, when the
 * caller compares them in place: the rows whose bytes did not change keep their old rows'
 * identities (and self-inequality); the caller compares the changed rows a run at a time
 * with the old rows while both are in cache (which a later pass over the candidates would
 * find evicted), marking the updates itself, and tells how many kept their identities; their
 * keys the walk then never touches. The block pairs up to the first row that did not (whose
 * key is then read as the walk goes on). */
static size_t dc_keep_changed_rows(dc_walker_t *w, size_t j, uint32_t differs, uint32_t self_unequal) {
    const dc_carried_input_t *rows = w->rows;
    DC_CHECK(w->keys_ready <= j, "the in-place prefix reads no key ahead");
    size_t paired = DC_FOLLOW_BLOCK;
    for (uint32_t runs = differs; runs != 0;) {
        const unsigned first = (unsigned)__builtin_ctz(runs);
        const unsigned length = (unsigned)__builtin_ctz(~(runs >> first));
        const size_t kept = rows->compare_in_place(rows->read_context, j + first, j + first + length, w->updated);
        if (kept < length) {
            paired = first + kept;
            break;
        }
        runs &= ~(((UINT32_C(1) << length) - 1) << first);
    }
    const uint32_t in_place = paired == DC_FOLLOW_BLOCK ? UINT32_C(0xFFFF) : (UINT32_C(1) << paired) - 1;
    dc_or_bits16(rows->new_self_unequal, j, self_unequal & ~differs & in_place);
    /* The caller compared the changed rows; an unchanged row whose old row was unequal to
     * itself is still its to compare. */
    for (uint32_t flagged = self_unequal & ~differs & in_place; flagged != 0; flagged &= flagged - 1) {
        dc_bit_set(w->candidates, j + (size_t)__builtin_ctz(flagged));
    }
    return paired;
}

/* Bytes, one block: dc_follow_rows_block_as() for rows the core compares as bytes. Equal
 * bytes are equal identities and contents (the caller's equality is a function of a row's
 * value), so an unchanged block pairs whole and takes its old rows' keys (in the in-place
 * prefix, `keeps`, it has them already), and an old row unequal to itself passes that on. A
 * block that differs asks the caller for its keys; its rows pair up to the first other key,
 * and those whose bytes differ are candidates. */
static DC_ALWAYS_INLINE size_t dc_follow_bytes_block_as(dc_walker_t *w, size_t i, size_t j, const size_t stride,
                                                        const bool keeps) {
    const dc_carried_input_t *rows = w->rows;
    const unsigned char *old_row = (const unsigned char *)rows->old_rows + i * stride;
    const unsigned char *new_row = (const unsigned char *)rows->new_rows + j * stride;
    DC_CHECK(keeps || w->keys_ready >= j, "the new keys before the block are written");
    const uint32_t self_unequal = rows->old_self_unequal != NULL ? dc_bits16(rows->old_self_unequal, i) : 0;
    const uint32_t quarters = dc_block_quarters_differ(old_row, new_row, stride);
    if (quarters == 0) {
        if (!keeps) {
            for (size_t b = 0; b < DC_FOLLOW_BLOCK; b++) w->new_keys[j + b] = w->old_keys[i + b];
            if (w->keys_ready < j + DC_FOLLOW_BLOCK) w->keys_ready = j + DC_FOLLOW_BLOCK;
        }
        for (uint32_t bits = self_unequal; bits != 0; bits &= bits - 1) {
            const size_t b = (size_t)__builtin_ctz(bits);
            dc_bit_set(rows->new_self_unequal, j + b);
            dc_bit_set(w->candidates, j + b);
        }
        return DC_FOLLOW_BLOCK;
    }
    /* Row by row only in the quarters that differ: a changed block has mostly one changed row. */
    uint32_t differs = 0;
    for (uint32_t left = quarters; left != 0; left &= left - 1) {
        const uint32_t first = (uint32_t)__builtin_ctz(left) * DC_BLOCK_QUARTER;
        for (uint32_t b = first; b < first + DC_BLOCK_QUARTER; b++) {
            uint64_t row_differs = 0;
            for (size_t word = 0; word < stride / 8; word++) {
                row_differs |= dc_load_field(old_row + b * stride + word * 8) ^ dc_load_field(new_row + b * stride + word * 8);
            }
            differs |= (uint32_t)(row_differs != 0) << b;
        }
    }
    if (keeps && rows->compare_in_place != NULL) return dc_keep_changed_rows(w, j, differs, self_unequal);
    /* The keys the walk has not read yet: a row with its old row's bytes has its key (and
     * its self-inequality), so the block takes the old keys and bits, and the caller is
     * asked only for each run of rows whose bytes changed, in order. */
    const size_t start = w->keys_ready > j ? w->keys_ready - j : 0;
    if (start < DC_FOLLOW_BLOCK) {
        const uint32_t unread = (UINT32_C(0xFFFF) << start) & UINT32_C(0xFFFF);
        memcpy(w->new_keys + j + start, w->old_keys + i + start, (DC_FOLLOW_BLOCK - start) * sizeof(uint64_t));
        dc_or_bits16(rows->new_self_unequal, j, self_unequal & ~differs & unread);
        for (uint32_t runs = differs & unread; runs != 0;) {
            const unsigned first = (unsigned)__builtin_ctz(runs);
            const unsigned length = (unsigned)__builtin_ctz(~(runs >> first));
            rows->read_keys(rows->read_context, j + first, j + first + length);
            runs &= ~(((UINT32_C(1) << length) - 1) << first);
        }
        w->keys_ready = j + DC_FOLLOW_BLOCK;
    }
    uint32_t other = 0;
    for (uint32_t b = 0; b < DC_FOLLOW_BLOCK; b++) other |= (uint32_t)(w->old_keys[i + b] != w->new_keys[j + b]) << b;
    return dc_block_pairs(w->candidates, j, other, differs | self_unequal);
}

/* Fields and bytes: dc_follow()'s whole blocks, up to the first that leaves the sequence,
 * with the stride chosen once for the run of blocks. */
static DC_ALWAYS_INLINE size_t dc_follow_blocks_as(dc_walker_t *w, size_t i, size_t j, size_t limit, const size_t stride,
                                                   const size_t identity_offset, const bool bytes, const bool keeps) {
    size_t k = 0;
    if (bytes) {
        while (limit - k >= DC_FOLLOW_BLOCK) {
            const size_t paired = dc_follow_bytes_block_as(w, i + k, j + k, stride, keeps);
            k += paired;
            if (paired < DC_FOLLOW_BLOCK) break;
        }
    } else {
        DC_CHECK(keeps || w->keys_ready >= j, "the new keys before the blocks are written");
        const dc_rows_run_t run = {
            w->rows, (const unsigned char *)w->rows->old_rows, (const unsigned char *)w->rows->new_rows, w->new_keys, w->updated,
        };
        size_t written_to = j; /* every block writes its 16 keys, the last one too */
        while (limit - k >= DC_FOLLOW_BLOCK) {
            const size_t paired = dc_follow_rows_block_as(&run, i + k, j + k, stride, identity_offset, keeps);
            written_to = j + k + DC_FOLLOW_BLOCK;
            k += paired;
            if (paired < DC_FOLLOW_BLOCK) break;
        }
        if (!keeps && w->keys_ready < written_to) w->keys_ready = written_to;
    }
    /* The in-place prefix's keys are the old ones: ready as far as it pairs. */
    if (keeps && w->keys_ready < j + k) w->keys_ready = j + k;
    return k;
}

static DC_ALWAYS_INLINE size_t dc_follow_blocks(dc_walker_t *w, size_t i, size_t j, size_t limit, const bool bytes,
                                                const bool keeps) {
    const size_t identity_offset = w->rows->identity_offset;
    switch (w->rows->stride) {
    case 16:
        /* Fields: the identity first or second, as a constant (see dc_follow_rows_block_as);
         * bytes read no identity. */
        if (bytes) return dc_follow_blocks_as(w, i, j, limit, 16, identity_offset, bytes, keeps);
        if (identity_offset == 0) return dc_follow_blocks_as(w, i, j, limit, 16, 0, bytes, keeps);
        if (identity_offset == 8) return dc_follow_blocks_as(w, i, j, limit, 16, 8, bytes, keeps);
        return dc_follow_blocks_as(w, i, j, limit, w->rows->stride, identity_offset, bytes, keeps);
    case 24: return dc_follow_blocks_as(w, i, j, limit, 24, identity_offset, bytes, keeps);
    case 32: return dc_follow_blocks_as(w, i, j, limit, 32, identity_offset, bytes, keeps);
    default: return dc_follow_blocks_as(w, i, j, limit, w->rows->stride, identity_offset, bytes, keeps);
    }
}

/* One copy each of the blocks of fields and bytes, in the prefix and after it. */
static size_t dc_follow_rows_blocks(dc_walker_t *w, size_t i, size_t j, size_t limit) { return dc_follow_blocks(w, i, j, limit, false, false); }
static size_t dc_follow_bytes_blocks(dc_walker_t *w, size_t i, size_t j, size_t limit) { return dc_follow_blocks(w, i, j, limit, true, false); }
static size_t dc_keep_rows_blocks(dc_walker_t *w, size_t i, size_t j, size_t limit) { return dc_follow_blocks(w, i, j, limit, false, true); }
static size_t dc_keep_bytes_blocks(dc_walker_t *w, size_t i, size_t j, size_t limit) { return dc_follow_blocks(w, i, j, limit, true, true); }

/* The walk's common case, rows that kept their order: how many of the `limit` old rows
 * from i and new rows from j pair in sequence (their keys agree). Fields also compares the
 * contents of those pairs, marking the ones that differ. Whole blocks first (branch-free,
 * vectorized; over rows, up to the row that leaves the sequence), then a row at a time.
 * `keeps`: the in-place prefix, where the new keys are the old ones and are not written. */
static DC_ALWAYS_INLINE size_t dc_follow(dc_walker_t *w, size_t i, size_t j, size_t limit, const dc_walk_mode_t mode,
                                         const bool keeps) {
    const uint64_t *const old_keys = w->old_keys, *const new_keys = w->new_keys;
    const bool rows = mode != DC_WALK_KEYS;
    size_t k = 0;
    if (rows) {
        if (mode == DC_WALK_FIELDS) {
            k = keeps ? dc_keep_rows_blocks(w, i, j, limit) : dc_follow_rows_blocks(w, i, j, limit);
        } else {
            k = keeps ? dc_keep_bytes_blocks(w, i, j, limit) : dc_follow_bytes_blocks(w, i, j, limit);
        }
        if (limit - k >= DC_FOLLOW_BLOCK) return k; /* a block left the sequence at row k */
    }
    while (!rows && limit - k >= DC_FOLLOW_BLOCK) {
        dc_keys_ready(w, j + k + DC_FOLLOW_BLOCK);
        uint64_t differ = 0;
        for (size_t b = 0; b < DC_FOLLOW_BLOCK; b++) differ |= old_keys[i + k + b] ^ new_keys[j + k + b];
        if (differ != 0) break;
        k += DC_FOLLOW_BLOCK;
    }
    for (; k < limit; k++) {
        dc_keys_ready(w, j + k + 1);
        if (dc_old_key(w, i + k, mode == DC_WALK_FIELDS) != new_keys[j + k]) break;
        if (rows) dc_compare_pair(w, i + k, j + k);
    }
    return k;
}

/* The walk is compiled three times (DC_ALWAYS_INLINE), for keys, fields and bytes, so each
 * copy tests nothing it does not need. */

/* Off the sequence: how many rows the walk has gone without a pair on it, at which count
 * it next scans past the window, and how far. A scan that pairs nothing doubles both; a
 * pair on the sequence starts them over. */
typedef struct dc_resync {
    size_t off_sequence, next_scan, scan_length;
} dc_resync_t;
static const dc_resync_t dc_resync_fresh = { 0, DC_CARRIED_RESYNC_AFTER, DC_CARRIED_SCAN };

/* Whether the walk may follow the sequence from old row `guess` (dc_follow()):
 * equal keys are equal identities (nothing to verify), and no scan has paired an old row at
 * or after `guess` (taken_ahead is past the last it paired). */
static inline bool dc_may_follow(const dc_walker_t *w, size_t guess, size_t taken_ahead) {
    return w->verifier.equal == NULL && guess >= taken_ahead;
}

/* step 1: the in-place prefix (from the caller's equal prefix on), then each new row in
 * order against the old rows where the sequence is expected to continue. A row found
 * nowhere near waits for step 2, which tells insertions (keys not in the set) from moved
 * rows. After several in a row, one scan further ahead picks the sequence up where it went
 * (past a run of deleted rows); a row found there pairs, and the walk follows only if the
 * next rows continue from it. */
static DC_ALWAYS_INLINE void dc_walk_as(dc_walker_t *w, const dc_walk_mode_t mode) {
    const size_t m = w->m, n = w->n;
    const bool rows = mode != DC_WALK_KEYS, fields = mode == DC_WALK_FIELDS;
    size_t j = w->rows->equal_prefix;
    w->keys_ready = j;
    if (w->verifier.equal == NULL) {
        j += dc_follow(w, j, j, (m < n ? m : n) - j, mode, true);
    } else {
        while (j < m && j < n) {
            dc_keys_ready(w, j + 1);
            if (w->old_keys[j] != w->new_keys[j] || !w->verifier.equal(w->verifier.context, DC_SIDE_OLD, j, DC_SIDE_NEW, j)) break;
            if (rows) dc_compare_pair(w, j, j);
            j++;
        }
    }
    if (j > 0) dc_add_segment(w, 0, 0, j);
    w->ws->prefix_length = j;
    /* Over keys only, every key past the caller's prefix was given (or read): only that
     * prefix's are unwritten. */
    w->kept = mode == DC_WALK_KEYS ? w->rows->equal_prefix : j;
    if (w->keys_ready < j) w->keys_ready = j;
    size_t guess = j;
    dc_resync_t resync = dc_resync_fresh;
    /* Old rows at or after `guess` are untaken unless a scan paired one ahead (up to here). */
    size_t taken_ahead = 0;
    const uint64_t *const new_keys = w->new_keys;
    for (; j < n; j++) {
        if (dc_may_follow(w, guess, taken_ahead)) {
            /* The common case, rows that kept their order: pair while the keys agree. */
            const size_t followed = dc_follow(w, guess, j, n - j < m - guess ? n - j : m - guess, mode, false);
            j += followed;
            if (followed > 0) {
                dc_add_segment(w, guess, j - followed, followed);
                guess += followed;
                resync = dc_resync_fresh;
            }
            if (j == n) break;
        }
        dc_keys_ready(w, j + 1);
        const uint64_t key = new_keys[j];
        const size_t window_end = m - guess > DC_CARRIED_WINDOW ? guess + DC_CARRIED_WINDOW : m;
        dc_look_t look = DC_LOOK_OTHER;
        size_t i = guess;
        for (; i < window_end && look == DC_LOOK_OTHER; i++) look = dc_look(w, i, j, key, fields);
        if (look == DC_LOOK_PARTNER && dc_may_follow(w, guess, taken_ahead)) {
            /* Past a deleted row, most often: the sequence goes on from old row i - 1, and
             * following it from there pairs j in the same segment as the rows after it. */
            guess = i - 1;
            j--;
            continue;
        }
        if (look == DC_LOOK_PARTNER) {
            dc_walk_pair_as(w, i - 1, j, rows);
            guess = i;
            resync = dc_resync_fresh;
            continue;
        }
        if (look == DC_LOOK_ABSENT) continue; /* an insertion */
        if (++resync.off_sequence == resync.next_scan) {
            const size_t scan_end = m - window_end > resync.scan_length ? window_end + resync.scan_length : m;
            for (i = window_end; i < scan_end && look == DC_LOOK_OTHER; i++) look = dc_look(w, i, j, key, fields);
            resync.next_scan *= 2;
            resync.scan_length *= 2;
            if (look == DC_LOOK_ABSENT) continue;
            if (look == DC_LOOK_PARTNER) {
                dc_walk_pair_as(w, i - 1, j, rows);
                if (i > taken_ahead) taken_ahead = i;
                if (j + 1 < n) dc_keys_ready(w, j + 2);
                if (j + 1 < n && i < m && dc_old_key(w, i, fields) == w->new_keys[j + 1]) {
                    guess = i;
                    resync = dc_resync_fresh;
                }
                continue;
            }
        }
        dc_bit_set(w->deferred, j);
    }
}

static void dc_walk(dc_walker_t *w) {
    switch (w->rows->rows) {
    case DC_ROWS_FIELDS: dc_walk_as(w, DC_WALK_FIELDS); break;
    case DC_ROWS_BYTES: dc_walk_as(w, DC_WALK_BYTES); break;
    default: dc_walk_as(w, DC_WALK_KEYS); break;
    }
}

/* step 2: the deferred rows, in new order, through a table of the old rows the walk left
 * unpaired (built in the workspace's table region). A deferred row whose key's old row the
 * walk paired needs the occurrence rule across the whole input: false, and dc_match() decides. */
static dc_status_t dc_pair_deferred(dc_walker_t *w, bool *complete) {
    *complete = true;
    // First the insertions go: rows whose key is in no old row, as the set tells. Each
    // lookup is a likely cache miss, so the set's slots are prefetched a few rows ahead
    // (the walk asked row by row and waited for every one).
    size_t remaining = 0;
    {
        dc_bit_cursor_t rows = dc_bit_cursor(w->deferred, w->n), ahead = rows;
        size_t prefetched = 0;
        for (size_t j = dc_bit_next(&rows); j != SIZE_MAX; j = dc_bit_next(&rows)) {
            for (; prefetched < DC_SET_PREFETCH_DISTANCE; prefetched++) {
                size_t later = dc_bit_next(&ahead);
                if (later == SIZE_MAX) break;
                dc_set_prefetch(w->set, w->new_keys[later]);
            }
            if (prefetched > 0) prefetched--;
            if (dc_set_contains(w->set, w->new_keys[j])) {
                remaining++;
            } else {
                dc_bit_clear(w->deferred, j);
            }
        }
    }
    dc_bit_cursor_t rows = dc_bit_cursor(w->deferred, w->n);
    size_t first = dc_bit_next(&rows);
    if (remaining == 0) return DC_OK;
    const size_t capacity = dc_table_capacity(w->m - w->paired);
    const unsigned shift = dc_table_shift(capacity);
    uint64_t *table = dc_table(w->ws);
    memset(table, 0, capacity * 8);
    const dc_key_view_t old_view = { w->old_keys, UINT64_MAX, DC_SIDE_OLD }, new_view = { w->new_keys, UINT64_MAX, DC_SIDE_NEW };
    dc_verifier_t by_key = { NULL, NULL, 0, 0 }; /* keys are distinct here; identities are checked below */
    // The unpaired old rows: the clear bits of old_paired.
    for (size_t word = 0; word < dc_bitmap_words(w->m); word++) {
        for (uint64_t unpaired = dc_clear_bits_of_word(w->old_paired, w->m, word); unpaired != 0; unpaired &= unpaired - 1) {
            const size_t i = word * 64 + (size_t)__builtin_ctzll(unpaired);
            bool found;
            const dc_probe_t probe = dc_probe_for(&old_view, i, shift, &w->set->placement);
            size_t position = dc_table_find(table, capacity, &old_view, &old_view, i, probe, &by_key, &found);
            table[position] = dc_make_slot(probe.tag, dc_index_field(i));
        }
    }
    for (size_t j = first; j != SIZE_MAX; j = dc_bit_next(&rows)) {
        bool found;
        const dc_probe_t probe = dc_probe_for(&new_view, j, shift, &w->set->placement);
        size_t position = dc_table_find(table, capacity, &old_view, &new_view, j, probe, &by_key, &found);
        if (!found) {
            *complete = false; /* the walk gave this identity's old row to a new row: which one was first? */
            break;
        }
        const size_t i = dc_field_index(dc_slot_field(table[position]));
        if (dc_look(w, i, j, w->new_keys[j], false) == DC_LOOK_PARTNER) dc_walk_pair(w, i, j);
    }
    memset(w->deferred, 0, dc_bitmap_words(w->n) * 8);
    return DC_OK;
}

#ifdef DC_INTERNAL_CHECKS
/* Rows mode: the walk flagged exactly the pairs whose contents differ, as updated; bytes
 * mode: exactly those whose bytes differ or whose old row is unequal to itself, as
 * candidates, but for the in-place prefix's changed rows when the caller compared them
 * (compare_in_place), which it may have flagged as updated, and no other row. */
static void dc_check_pair_flags(const dc_walker_t *w, const uint64_t *flags) {
    size_t expected = 0;
    for (size_t s = 0; s < w->segment_count; s++) {
        const dc_segment_t segment = w->segments[s];
        for (uint32_t k = 0; k < segment.length; k++) {
            const size_t i = segment.old_start + k, j = segment.new_start + k;
            const bool flag = w->rows->rows == DC_ROWS_FIELDS ? dc_contents_differ(w->rows, i, j) : dc_bytes_need_compare(w->rows, i, j);
            if (w->rows->rows == DC_ROWS_BYTES && w->rows->compare_in_place != NULL && j < w->kept && flag
                && memcmp((const unsigned char *)w->rows->old_rows + i * w->rows->stride,
                          (const unsigned char *)w->rows->new_rows + j * w->rows->stride, w->rows->stride) != 0) {
                /* compared by the caller (whole blocks) or left to it (the prefix's last rows) */
                expected += dc_bit_get(flags, j);
                continue;
            }
            DC_CHECK(dc_bit_get(flags, j) == flag, "a pair is flagged exactly when its contents (rows) or bytes differ");
            expected += flag;
        }
    }
    size_t marked = 0;
    for (size_t j = 0; j < w->n; j++) marked += dc_bit_get(flags, j);
    DC_CHECK(marked == expected, "only paired rows are flagged");
    if (w->rows->rows == DC_ROWS_BYTES) {
        for (size_t j = 0; j < w->n; j++) {
            DC_CHECK(!dc_bit_get(w->updated, j) || (j < w->kept && w->rows->compare_in_place != NULL && !dc_bit_get(flags, j)),
                     "over bytes only the caller flags updates, in the in-place prefix");
        }
    }
}
#endif

/* Whether the input is well formed for its kind of rows. */
static dc_status_t dc_check_carried_input(const dc_carried_input_t *in) {
    const size_t m = in->old_count, n = in->new_count;
    if ((m && in->old_keys == NULL) || (n && in->new_keys == NULL)) return DC_ERR_NULL_POINTER;
    if (in->equal_prefix > m || in->equal_prefix > n) return DC_ERR_INVALID_ARGUMENT;
    if (in->compare_in_place != NULL && in->rows != DC_ROWS_BYTES) return DC_ERR_INVALID_ARGUMENT;
    switch (in->rows) {
    case DC_ROWS_NONE:
        return DC_OK;
    case DC_ROWS_FIELDS:
        if ((m && in->old_rows == NULL) || (n && in->new_rows == NULL) || (in->content_count && in->content_offsets == NULL)) {
            return DC_ERR_NULL_POINTER;
        }
        if (in->read_keys != NULL || in->identity_equal != NULL || in->equal_prefix != 0) return DC_ERR_INVALID_ARGUMENT;
        if (in->stride < 8 || in->identity_offset > in->stride - 8) return DC_ERR_INVALID_ARGUMENT;
        for (size_t c = 0; c < in->content_count; c++) {
            if (in->content_offsets[c] > in->stride - 8) return DC_ERR_INVALID_ARGUMENT;
        }
        return DC_OK;
    case DC_ROWS_BYTES:
        if (in->read_keys == NULL || in->new_self_unequal == NULL || in->candidates == NULL
            || (m && in->old_rows == NULL) || (n && in->new_rows == NULL)) {
            return DC_ERR_NULL_POINTER;
        }
        if (in->identity_equal != NULL || in->equal_prefix != 0) return DC_ERR_INVALID_ARGUMENT;
        if (in->stride == 0 || in->stride % 8 != 0) return DC_ERR_INVALID_ARGUMENT;
        return DC_OK;
    default:
        return DC_ERR_INVALID_ARGUMENT;
    }
}

/* Steps 1 and 2; *matched false when the set cannot carry this diff (the workspace then
 * holds nothing). The walker keeps how far the keys are written. */
static dc_status_t dc_walk_carried(dc_walker_t *walker, dc_workspace_t *ws, bool *matched) {
    const dc_carried_input_t *in = walker->rows;
    const size_t m = in->old_count, n = in->new_count;
    dc_status_t status;
    walker->ws = ws;
    walker->deferred = dc_moved(ws);
    walker->updated = dc_updated(ws);
    walker->old_paired = dc_old_paired(ws);
    walker->new_paired = dc_new_paired(ws);
    walker->segments = dc_segments(ws);
    memset(walker->old_paired, 0, dc_bitmap_words(m) * 8);
    memset(walker->new_paired, 0, dc_bitmap_words(n) * 8);
    dc_walk(walker);                                             /* step 1 */
    dc_keys_ready(walker, n);
    walker->walk_segments = walker->segment_count;
    bool complete;
    if ((status = dc_pair_deferred(walker, &complete)) != DC_OK) return status;  /* step 2 */
    if (!complete) return DC_OK; /* the workspace stays empty */
    ws->paired = walker->paired;
    ws->segmented = 1;
    ws->segment_count = walker->segment_count;
    ws->walk_segments = walker->walk_segments;
    dc_check_segments(ws);
#ifdef DC_INTERNAL_CHECKS
    if (in->rows == DC_ROWS_FIELDS) dc_check_pair_flags(walker, walker->updated);
    if (in->rows == DC_ROWS_BYTES) dc_check_pair_flags(walker, in->candidates);
    for (size_t j = 0; j < walker->kept; j++) {
        DC_CHECK(dc_bit_get(walker->new_paired, j), "the kept prefix pairs in place");
    }
#endif
    ws->state = DC_STATE_MATCHED;
    *matched = true;
    return DC_OK;
}

dc_status_t dc_match_carried(void *workspace, size_t workspace_size, const dc_carried_input_t *input, const void *set,
                             dc_carried_result_t *result) {
    if (input == NULL || result == NULL || set == NULL) return DC_ERR_NULL_POINTER;
    *result = (dc_carried_result_t){ false, 0 };
    dc_status_t status = dc_check_carried_input(input);
    if (status != DC_OK) return status;
    const size_t m = input->old_count, n = input->new_count;
    const dc_key_set_t *keys = dc_key_set_checked(set, SIZE_MAX);
    if (keys == NULL) return DC_ERR_INVALID_ARGUMENT;
    if (input->rows == DC_ROWS_BYTES) {
        memset(input->candidates, 0, dc_bitmap_words(n) * 8);
        memset(input->new_self_unequal, 0, dc_bitmap_words(n) * 8);
    }
    dc_walker_t walker = {
        .m = m, .n = n, .set = keys, .old_keys = input->old_keys, .new_keys = input->new_keys,
        .verifier = { input->identity_equal, input->equal_context, 0, 0 },
        .rows = input, .reads_keys = input->rows == DC_ROWS_FIELDS || input->read_keys != NULL,
        .candidates = input->candidates, .keys_ready = input->equal_prefix,
    };
    /* Any earlier diff in the workspace is discarded first, as dc_match() discards it: a
     * call that does not match leaves no pairing behind to be read as this one's. */
    dc_workspace_t *ws = NULL;
    status = dc_workspace_start(workspace, workspace_size, m, n, &ws);
    bool matched = false;
    if (status == DC_OK && keys->usable && keys->count == m) {
#ifdef DC_INTERNAL_CHECKS
        for (size_t i = 0; i < m; i++) DC_CHECK(dc_set_contains(keys, input->old_keys[i]), "the set holds the old keys");
        if (input->rows == DC_ROWS_FIELDS) {
            for (size_t i = 0; i < m; i++) {
                DC_CHECK(input->old_keys[i] == dc_old_key(&walker, i, true), "fields: the old keys are the old rows' identity fields");
            }
        }
#endif
        status = dc_walk_carried(&walker, ws, &matched);
    }
    if (matched) {
        *result = (dc_carried_result_t){ true, walker.kept };
        return DC_OK;
    }
    /* The keys are the caller's whatever happened: a diff the set cannot carry needs them. */
    if (walker.reads_keys && walker.keys_ready < n) dc_write_keys(&walker, walker.keys_ready, n);
    if (walker.kept > 0 || input->equal_prefix > 0) {
        const size_t kept = walker.kept > input->equal_prefix ? walker.kept : input->equal_prefix;
        memcpy(input->new_keys, input->old_keys, kept * 8);
    }
    return status;
}

dc_status_t dc_key_set_update(void *set, size_t set_size,
                              const uint64_t *old_keys, size_t old_count, const int64_t *deleted, size_t deleted_count,
                              const uint64_t *new_keys, size_t new_count, const int64_t *inserted, size_t inserted_count,
                              bool *distinct) {
    if (distinct == NULL) return DC_ERR_NULL_POINTER;
    *distinct = false;
    dc_key_set_t *keys = dc_key_set_checked(set, set_size);
    if (keys == NULL) return DC_ERR_INVALID_ARGUMENT;
    if ((deleted_count && (old_keys == NULL || deleted == NULL)) || (inserted_count && (new_keys == NULL || inserted == NULL))) {
        return DC_ERR_NULL_POINTER;
    }
    if (!keys->usable || keys->count != old_count || deleted_count > old_count
        || old_count - deleted_count + inserted_count != new_count) {
        return DC_ERR_INVALID_ARGUMENT;
    }
    for (size_t k = 0; k < deleted_count; k++) {
        if (deleted[k] < 0 || (uint64_t)deleted[k] >= old_count) return DC_ERR_INVALID_ARGUMENT;
    }
    for (size_t k = 0; k < inserted_count; k++) {
        if (inserted[k] < 0 || (uint64_t)inserted[k] >= new_count) return DC_ERR_INVALID_ARGUMENT;
    }
    keys->usable = 0;
    if (new_count > dc_set_limit(keys->capacity)) return DC_ERR_CAPACITY_TOO_SMALL;
    /* Removals first: a pair DC_MOVES_NONE dropped is deleted and inserted under one key. */
    for (size_t k = 0; k < deleted_count; k++) {
        dc_set_prefetch_listed(keys, old_keys, deleted, deleted_count, k);
        /* Only a list naming one row twice, or keys other than the set's, can miss. */
        if (!dc_set_remove(keys, old_keys[deleted[k]])) return DC_ERR_INVALID_ARGUMENT;
    }
    for (size_t k = 0; k < inserted_count; k++) {
        dc_set_prefetch_listed(keys, new_keys, inserted, inserted_count, k);
        if (!dc_set_insert(keys, new_keys[inserted[k]])) return DC_OK;
    }
    DC_CHECK(keys->count == new_count, "the set holds one key a new row");
    keys->usable = 1;
    *distinct = true;
    return DC_OK;
}
