/* Pass 1: pairing old and new rows by identity (the k-th old occurrence of an identity
 * with its k-th new occurrence). dc_match() reads as its table of contents; each
 * sub-pass below says what it does and what it relies on from the ones before.
 *
 * Most rows of a real update keep their order, so the pass pairs rows in sequence first,
 * without any table, and indexes only the old rows that the sequence left over. Pairing a
 * row by its neighbour is right when its identity occurs once on each side — but knowing
 * that takes an index of every row. So it pairs optimistically and checks afterwards: the
 * sequence only ever moves forward, so all pairs it makes of one identity keep their
 * occurrences in order; they are the occurrence rule's pairs unless the identity also
 * has a row the sequence left unpaired. Pass 1d finds those identities (a filter of
 * the unpaired rows' keys) and unpairs their rows, and the table pairs everything
 * unpaired by the rule. */
#include <string.h>

#include "CDiffCoreTesting.h"
#include "identity_table.h"
#include "workspace.h"

/* The occurrence chain holds, for each old row (row indexes stay below DC_MAX_ROWS), after
 * the prefix:
 *   j                    paired with new row j (by pass 1c, if pass 1d keeps the pair, or
 *                        by pass 1f): the inverse pairing the workspace keeps (old_to_new);
 *   an old index         unpaired; the next old occurrence of its identity;
 *   DC_LAST_OF_SEVERAL   unpaired; the last of several occurrences;
 *   DC_UNIQUE            unpaired; its identity occurs nowhere else in the table (also the
 *                        mark of every unpaired row before pass 1e indexes them).
 * The bitmap `old_left` tells the unpaired rows from the paired ones, whose entries look
 * alike: only passes 1e and 1f read an unpaired row's entry, and pass 1g marks DC_UNPAIRED. */
#define DC_LAST_OF_SEVERAL UINT32_C(0x7ffffffe)
#define DC_UNIQUE UINT32_C(0x7fffffff)
_Static_assert(DC_MAX_ROWS <= DC_LAST_OF_SEVERAL, "row indexes never reach the chain's markers");

/* How many old rows from the expected one pass 1c compares before giving a new row up
 * (so a few deleted or moved-away old rows do not break the sequence), and how many rows
 * in a row it gives up before it looks for where the sequence went. */
#define DC_WINDOW 4
#define DC_RESYNC_AFTER 4

/* How far past the window pass 1c looks for where the sequence went (when DC_RESYNC_AFTER,
 * twice, four times ... as many rows in a row found nothing, and at the row after one
 * whose key it met nowhere there), and after how many rows in a row it looks each row up
 * among the anchors instead. */
#define DC_SCAN_AHEAD 64
#define DC_ANCHORS_AFTER 32
#define DC_ANCHOR_TRIES 128

/* Every DC_ANCHOR_SPACING-th old row is an anchor: indexed (only when the sequence first
 * breaks for long) so that pass 1c can find where it went on. Any run of that many old
 * rows that kept their order holds one. */
#define DC_ANCHOR_SPACING 8

/* Filter bits per row after the prefix in pass 1d (rounded up to a power of two): with an
 * eighth of the rows unpaired, about one pair in 50 is undone for nothing. Twice as many
 * while the filter stays within DC_FILTER_CACHED_BYTES, which matters where many rows are
 * unpaired (bench-core, 100k rows at 60% churn: match 2.48 -> 2.14 ms, 4% fewer
 * instructions). Pass 1d tests the filter at every pair without prefetching, and past half
 * of a 1 MiB L2 the extra bits cost more in misses than the pairs they save (1M rows at
 * 10% churn with a 1 MiB filter: +1.5%). */
#define DC_FILTER_BITS_PER_ROW 2
#define DC_FILTER_CACHED_BYTES (512u << 10)

/* How many adds to the filter of pass 1d wait, their words prefetched, before they set them. */
#define DC_FILTER_DELAY 8

/* From how many old rows pass 1f prefetches the old rows its slots name while as few as one
 * new row in 16 finds its identity (else one in 4): the old keys are then 4 MiB and more,
 * a miss each, where below it they mostly stay in cache and the early look costs more than
 * it saves (bench-core: 1M rows at 10% churn, match 19 -> 18 ms; 100k rows 1.36 -> 1.44 ms). */
#define DC_FAR_KEYS_ROWS (UINT64_C(1) << 19)

/* Everything the sub-passes share. */
typedef struct dc_matcher {
    dc_workspace_t *ws;
    size_t m, n;
    uint32_t *chain;          /* by old row: the occurrence chain (see above) */
    uint32_t *new_to_old;     /* by new row: the paired old row, or DC_UNPAIRED */
    uint64_t *for_table;      /* by new row: set where unpaired after the prefix (pass 1f's rows) */
    uint64_t *old_left;       /* by old row: set where unpaired after the prefix (pass 1e's rows) */
    dc_key_view_t old_view, new_view;
    dc_verifier_t verifier;
    dc_placement_t placement;
    size_t prefix;            /* set by pass 1a */
    size_t paired_in_sequence; /* pairs pass 1c made, then those pass 1d kept */
    size_t old_unpaired;      /* old rows after the prefix that pass 1c or 1d left unpaired */
    /* The table region: the anchors' table (pass 1c) in its first half and the filter
     * (1c, 1d) in its second, then the identity table of the unpaired old rows (1e, 1f). */
    uint64_t *region;
    size_t region_slots;
    size_t anchor_capacity;   /* 0 until pass 1c first needs the anchors */
    unsigned anchor_shift;
    uint64_t *filter;         /* the filter of pass 1d, in the region's second half */
    unsigned filter_shift;
    size_t filter_adds;       /* adds so far; the last DC_FILTER_DELAY wait in the ring */
    uint64_t filter_pending[DC_FILTER_DELAY];
    size_t capacity;          /* of the table of passes 1e and 1f */
    unsigned shift;
} dc_matcher_t;

static inline uint64_t dc_masked_key(const dc_key_view_t *view, size_t row) {
    return view->keys[row] & view->mask;
}

/* Whether passes 1b-1f run at all: rows remain on both sides after the prefix. */
static inline bool dc_chained(const dc_matcher_t *mt) {
    return mt->m > mt->prefix && mt->n > mt->prefix;
}

/* pass 1a: the common prefix pairs with itself; in it the k-th occurrences line up
 * on both sides, so no table is needed. (A common suffix does not: an identity that
 * occurs more often on one side pairs its k-th occurrences from the front.) */
static void dc_pair_prefix(dc_matcher_t *mt) {
    size_t prefix = 0;
    const size_t m = mt->m, n = mt->n;
    uint32_t *new_to_old = mt->new_to_old;
    const size_t shorter = m < n ? m : n;
    while (prefix < shorter
           && dc_same_identity(&mt->old_view, prefix, &mt->new_view, prefix,
                               mt->new_view.keys[prefix] & mt->new_view.mask, &mt->verifier)) {
        new_to_old[prefix] = (uint32_t)prefix;
        prefix++;
    }
    mt->prefix = prefix;
    mt->ws->prefix_length = prefix;
}

/* The filter of pass 1d, set for every row pass 1c leaves unpaired, as it leaves it: two
 * bits of one 64-bit word per key (a blocked Bloom filter), so that adding and testing a
 * key touch one word, and the filter stays small enough to stay in cache while the
 * passes stream the rows past it. Pass 1d tests every row, so a key is mixed with one
 * multiply by the placement secret: a crafted key can only make the filter hit, and a
 * hit sends a pair to the table, which places keys securely. */
static inline uint64_t dc_filter_mix(const dc_matcher_t *mt, uint64_t masked_key) {
    return (masked_key ^ mt->placement.first) * mt->placement.second;
}

static inline uint64_t dc_filter_bits(uint64_t mixed) {
    return (UINT64_C(1) << ((mixed >> 20) & 63)) | (UINT64_C(1) << ((mixed >> 26) & 63));
}

/* Adds go through a small ring: each word is prefetched when its key is added and set
 * DC_FILTER_DELAY adds later, so that pass 1c does not wait for it. */
static inline void dc_filter_set(dc_matcher_t *mt, uint64_t mixed) {
    mt->filter[mixed >> mt->filter_shift] |= dc_filter_bits(mixed);
}

static inline void dc_filter_add(dc_matcher_t *mt, uint64_t masked_key) {
    const uint64_t mixed = dc_filter_mix(mt, masked_key);
    __builtin_prefetch(&mt->filter[mixed >> mt->filter_shift], 1);
    uint64_t *pending = &mt->filter_pending[mt->filter_adds++ % DC_FILTER_DELAY];
    if (mt->filter_adds > DC_FILTER_DELAY) dc_filter_set(mt, *pending);
    *pending = mixed;
}

/* Sets the words of the adds still in the ring. */
static void dc_filter_flush(dc_matcher_t *mt) {
    const size_t held = mt->filter_adds < DC_FILTER_DELAY ? mt->filter_adds : DC_FILTER_DELAY;
    for (size_t k = 0; k < held; k++) dc_filter_set(mt, mt->filter_pending[k]);
    mt->filter_adds = 0;
}

/* Whether the filter misses `masked_key`, or `tested` is false: one test the compiler
 * cannot split into two branches (the unpaired rows' keys are all in the filter, and which
 * rows are unpaired follows no pattern). */
static inline bool dc_filter_misses(const dc_matcher_t *mt, uint64_t masked_key, bool tested) {
    const uint64_t mixed = dc_filter_mix(mt, masked_key), bits = dc_filter_bits(mixed);
    return ((~mt->filter[mixed >> mt->filter_shift] & bits) | ((uint64_t)tested - 1)) != 0;
}

/* Lays the filter out in the second half of the table region (the anchors take at most the
 * first), DC_FILTER_BITS_PER_ROW bits a row after the prefix as far as that half allows,
 * twice that while it stays within DC_FILTER_CACHED_BYTES. */
static void dc_start_filter(dc_matcher_t *mt) {
    const size_t rows = (mt->m - mt->prefix) + (mt->n - mt->prefix);
    size_t words = 2; /* the shift below stays under 64 */
    while (words * 64 / DC_FILTER_BITS_PER_ROW < rows && words < mt->region_slots / 2) words <<= 1;
    if (words * 2 * 8 <= DC_FILTER_CACHED_BYTES && words < mt->region_slots / 2) words <<= 1;
    mt->filter = mt->region + mt->region_slots / 2;
    mt->filter_shift = 64u - (unsigned)__builtin_ctzll((unsigned long long)words);
    memset(mt->filter, 0, words * 8);
}

/* pass 1b, the first time pass 1c needs it: an index of every DC_ANCHOR_SPACING-th old
 * row from `from` on, by identity (the first such occurrence of each), at most half full. */
static dc_status_t dc_index_anchors(dc_matcher_t *mt, size_t from) {
    const size_t wanted = (mt->m - from) / DC_ANCHOR_SPACING + 1;
    size_t capacity = dc_table_capacity(wanted);
    if (capacity > mt->region_slots / 2) capacity = mt->region_slots / 2; /* a power of two too */
    mt->anchor_capacity = capacity;
    mt->anchor_shift = dc_table_shift(capacity);
    uint64_t *anchors = mt->region;
    memset(anchors, 0, capacity * 8);
    size_t rows = (mt->m - from + DC_ANCHOR_SPACING - 1) / DC_ANCHOR_SPACING;
    if (rows > capacity / 2) rows = capacity / 2;
    for (size_t k = rows; k-- > 0;) {
        const size_t i = from + k * DC_ANCHOR_SPACING;
        if (k >= DC_PREFETCH_DISTANCE) {
            dc_table_prefetch(anchors, &mt->old_view, i - DC_PREFETCH_DISTANCE * DC_ANCHOR_SPACING,
                              mt->anchor_shift, &mt->placement);
        }
        const dc_probe_t probe = dc_probe_for(&mt->old_view, i, mt->anchor_shift, &mt->placement);
        bool found;
        size_t position = dc_table_find(anchors, capacity, &mt->old_view, &mt->old_view, i, probe, &mt->verifier, &found);
        if (position == SIZE_MAX) return DC_ERR_TOO_MANY_COLLISIONS;
        anchors[position] = dc_make_slot(probe.tag, dc_index_field(i));
    }
    return DC_OK;
}

/* The anchor of new row j's identity, or SIZE_MAX; SIZE_MAX - 1 past the collision budget. */
static inline size_t dc_find_anchor(dc_matcher_t *mt, size_t j) {
    bool found;
    size_t position = dc_table_find(mt->region, mt->anchor_capacity, &mt->old_view, &mt->new_view, j,
                                    dc_probe_for(&mt->new_view, j, mt->anchor_shift, &mt->placement),
                                    &mt->verifier, &found);
    if (position == SIZE_MAX) return SIZE_MAX - 1;
    return found ? dc_field_index(dc_slot_field(mt->region[position])) : SIZE_MAX;
}

/* Whether the new row after j, or the one after it (past a row inserted there), continues
 * the sequence from old row i, by key: a single row moved from far away is not where the
 * rest of the rows went. The row after next counts because an insertion right after a
 * break is common, and a break left unresolved sends every later row to the anchors,
 * whose index over a large table costs more than all of a diff's breaks. */
static inline bool dc_sequence_goes_on(const dc_matcher_t *mt, size_t i, size_t j) {
    if (j + 1 == mt->n) return true;
    const size_t end = mt->m - i > DC_WINDOW ? i + DC_WINDOW : mt->m;
    for (size_t later = j + 1; later <= j + 2 && later < mt->n; later++) {
        const uint64_t key = dc_masked_key(&mt->new_view, later);
        for (size_t next = i + 1; next < end; next++) {
            if (dc_masked_key(&mt->old_view, next) == key) return true;
        }
    }
    return false;
}

/* The old row from `from` on, up to DC_SCAN_AHEAD of them, with new row j's identity, or
 * SIZE_MAX; `key_met` tells whether any of them had its key (masked). */
static inline size_t dc_scan_ahead(dc_matcher_t *mt, size_t from, size_t j, uint64_t key, bool *key_met) {
    const size_t end = mt->m - from > DC_SCAN_AHEAD ? from + DC_SCAN_AHEAD : mt->m;
    *key_met = false;
    for (size_t i = from; i < end; i++) {
        if (dc_masked_key(&mt->old_view, i) != key) continue;
        *key_met = true;
        if (dc_same_identity(&mt->old_view, i, &mt->new_view, j, key, &mt->verifier)) return i;
    }
    return SIZE_MAX;
}

/* Pass 1c's first pair: the new rows given up before it (below `first`) go into the filter
 * only now, since until a pair exists none of them can conflict with one. */
static void dc_filter_rows_before_first_pair(dc_matcher_t *mt, size_t first, uint64_t key_mask) {
    dc_bit_cursor_t earlier = dc_bit_cursor(mt->for_table, first);
    for (size_t row = dc_bit_next(&earlier); row != SIZE_MAX; row = dc_bit_next(&earlier)) {
        dc_filter_add(mt, mt->new_view.keys[row] & key_mask);
    }
}

/* pass 1c: pairs rows in sequence. A new row first looks at the old row after the previous
 * pair's partner and a few beyond; whole blocks of rows that continue the sequence pair at
 * once. The sequence only moves forward: old rows it passes stay unpaired, as do new rows
 * that find no partner. After several rows in a row without one, it looks a little
 * further ahead, and after many, it looks each such row up among the anchors; it jumps
 * ahead to what it finds if the next new row continues from there and it would pass over
 * at most half the old rows left (a block moved from the end to the front is not where
 * the rest went). Sequential reads only, but for the anchors. */
static DC_ALWAYS_INLINE dc_status_t dc_pair_in_sequence_as(dc_matcher_t *mt, const bool exact) {
    const size_t m = mt->m, n = mt->n, prefix = mt->prefix;
    uint32_t *chain = mt->chain, *new_to_old = mt->new_to_old;
    uint64_t *for_table = mt->for_table; /* zero here */
    const uint64_t *const old_keys = mt->old_view.keys, *const new_keys = mt->new_view.keys;
    const uint64_t key_mask = exact ? UINT64_MAX : mt->new_view.mask;
    size_t guess = prefix; /* old rows before it are decided: paired, or passed over */
    size_t given_up = 0, paired = 0, anchor_stride = 1, anchor_tries = 0;
    bool scan_again = false; /* the last look ahead met no old row with its key */
    const bool verified = !exact && mt->verifier.equal != NULL;
    enum { block = 16 };
    size_t rows_before_block = 0, block_wait = block;
    for (size_t j = prefix; j < n; j++) {
        // A block at a time while whole blocks continue the sequence (branch-free,
        // vectorized): the same pairs the row-by-row test below would make, one by one.
        // After a block that does not, rows go row by row for a while first, twice as
        // long after each such block in a row (short runs never pay for block tests).
        while (!verified && given_up == 0 && rows_before_block == 0 && n - j >= block && m - guess >= block) {
            uint64_t differ = 0;
            for (size_t k = 0; k < block; k++) differ |= old_keys[guess + k] ^ new_keys[j + k];
            if ((differ & key_mask) != 0) {
                rows_before_block = block_wait;
                if (block_wait < 64 * block) block_wait *= 2;
                break;
            }
            block_wait = block;
            for (size_t k = 0; k < block; k++) {
                new_to_old[j + k] = (uint32_t)(guess + k);
                chain[guess + k] = (uint32_t)(j + k);
            }
            paired += block;
            guess += block;
            j += block;
        }
        if (j == n) break;
        // Rows that pair with the old row the sequence expects (the common case between
        // breaks), a row at a time in a loop that tests nothing else, up to the first row
        // that does not, whose window below then starts past that old row, or until blocks
        // are due (at once when one is due but was not tried: after a row given up, or
        // near the end).
        {
            const size_t limit = rows_before_block > 0 ? rows_before_block : verified ? SIZE_MAX : 1;
            size_t most = m - guess < n - j ? m - guess : n - j;
            if (most > limit) most = limit;
            size_t run = 0;
            while (run < most && (old_keys[guess + run] & key_mask) == (new_keys[j + run] & key_mask)
                   && (exact || dc_same_identity(&mt->old_view, guess + run, &mt->new_view, j + run,
                                                 new_keys[j + run] & key_mask, &mt->verifier))) {
                new_to_old[j + run] = (uint32_t)(guess + run);
                chain[guess + run] = (uint32_t)(j + run);
                run++;
            }
            if (run > 0) {
                if (paired == 0) dc_filter_rows_before_first_pair(mt, j, key_mask);
                paired += run;
                guess += run;
                j += run;
                given_up = 0;
                scan_again = false;
                anchor_stride = 1;
                anchor_tries = 0;
                rows_before_block -= run < rows_before_block ? run : rows_before_block;
                if (j == n) break;
                if (run == most && guess < m) {
                    j--; /* blocks' turn, from row j */
                    continue;
                }
            }
        }
        // Here old row `guess` (if any) does not pair with new row j.
        if (rows_before_block) rows_before_block--;
        new_to_old[j] = DC_UNPAIRED;
        size_t partner = SIZE_MAX;
        if (guess < m) {
            const uint64_t key = new_keys[j] & key_mask;
            const size_t window_end = m - guess > DC_WINDOW ? guess + DC_WINDOW : m;
            for (size_t i = guess + 1; i < window_end; i++) {
                if ((old_keys[i] & key_mask) == key
                    && (exact || dc_same_identity(&mt->old_view, i, &mt->new_view, j, key, &mt->verifier))) {
                    partner = i;
                    break;
                }
            }
            if (verified && dc_over_budget(&mt->verifier)) return DC_ERR_TOO_MANY_COLLISIONS;
            if (partner == SIZE_MAX && given_up >= DC_RESYNC_AFTER) {
                size_t candidate = SIZE_MAX;
                if (given_up < DC_ANCHORS_AFTER) {
                    // Most breaks are a few more old rows gone: look a little further
                    // ahead, once each time the run of rows given up doubles, and again
                    // at the next row when this one's key was nowhere there (an inserted
                    // row: it tells nothing of where the sequence went).
                    if ((given_up & (given_up - 1)) == 0 || scan_again) {
                        bool key_met;
                        candidate = dc_scan_ahead(mt, window_end, j, key, &key_met);
                        scan_again = !key_met;
                    }
                } else if ((given_up - DC_ANCHORS_AFTER) % anchor_stride == 0) {
                    // While the lookups find nothing (the new rows are new, or from behind),
                    // look up fewer rows: every 3rd, 7th, 15th ... row after each
                    // DC_ANCHOR_TRIES lookups in vain (odd strides meet every anchor).
                    if (++anchor_tries % DC_ANCHOR_TRIES == 0) anchor_stride = 2 * anchor_stride + 1;
                    if (mt->anchor_capacity == 0) {
                        dc_status_t status = dc_index_anchors(mt, guess);
                        if (status != DC_OK) return status;
                    }
                    if (j + DC_PREFETCH_DISTANCE < n) {
                        dc_table_prefetch(mt->region, &mt->new_view, j + DC_PREFETCH_DISTANCE, mt->anchor_shift, &mt->placement);
                    }
                    candidate = dc_find_anchor(mt, j);
                    if (candidate == SIZE_MAX - 1) return DC_ERR_TOO_MANY_COLLISIONS;
                    if (candidate != SIZE_MAX && candidate < guess) candidate = SIZE_MAX;
                }
                if (dc_over_budget(&mt->verifier)) return DC_ERR_TOO_MANY_COLLISIONS;
                if (candidate != SIZE_MAX && candidate - guess <= (m - guess) / 2
                    && dc_sequence_goes_on(mt, candidate, j)) {
                    partner = candidate;
                }
            }
        }
        if (partner == SIZE_MAX) {
            dc_bit_set(for_table, j);
            if (paired > 0) dc_filter_add(mt, new_keys[j] & key_mask); /* else when the first pair is made */
            given_up++;
            continue;
        }
        if (paired == 0) dc_filter_rows_before_first_pair(mt, j, key_mask);
        anchor_stride = 1;
        anchor_tries = 0;
        for (; guess < partner; guess++) { /* passed over: unpaired */
            chain[guess] = DC_UNIQUE;
            dc_bit_set(mt->old_left, guess);
            dc_filter_add(mt, old_keys[guess] & key_mask);
        }
        new_to_old[j] = (uint32_t)partner;
        chain[partner] = (uint32_t)j;
        paired++;
        guess = partner + 1;
        given_up = 0;
        scan_again = false;
    }
    if (guess < m) dc_bits_set_range(mt->old_left, guess, m - guess);
    for (; guess < m; guess++) {
        chain[guess] = DC_UNIQUE;
        if (paired > 0) dc_filter_add(mt, old_keys[guess] & key_mask); /* else pass 1d has nothing to check */
    }
    dc_filter_flush(mt);
    mt->paired_in_sequence = paired;
    mt->old_unpaired = (m - prefix) - paired;
    return DC_OK;
}

/* Pass 1c compiled twice: exact keys (all 64 bits, no verification) test nothing else. */
static dc_status_t dc_pair_in_sequence(dc_matcher_t *mt) {
    if (mt->verifier.equal == NULL && mt->new_view.mask == UINT64_MAX) return dc_pair_in_sequence_as(mt, true);
    return dc_pair_in_sequence_as(mt, false);
}

/* pass 1d: unpairs the pairs of every identity that also has a row pass 1c left unpaired:
 * those whose key is in the filter of unpaired rows' keys. A false hit only sends a pair
 * to the table, which pairs it again. It goes over the old rows, a word of `old_left` at a
 * time, and reads only their keys: a pair it keeps already has its entry of the inverse
 * pairing (a paired row's key is its partner's). */
static void dc_check_sequence_pairs(dc_matcher_t *mt) {
    const size_t m = mt->m, prefix = mt->prefix;
    if (mt->paired_in_sequence == 0) return;
    uint32_t *chain = mt->chain, *new_to_old = mt->new_to_old;
    size_t undone = 0;
    for (size_t word = prefix / 64; word * 64 < m; word++) {
        const size_t first = word * 64 > prefix ? word * 64 : prefix, end = (word + 1) * 64 < m ? (word + 1) * 64 : m;
        uint64_t paired = ~mt->old_left[word] >> (first - word * 64);
        for (size_t i = first; i < end; i++, paired >>= 1) {
            // Branch-free up to the rare hit: which rows are paired follows no pattern.
            if (dc_filter_misses(mt, dc_masked_key(&mt->old_view, i), paired & 1)) continue;
            const uint32_t j = chain[i];
            new_to_old[j] = DC_UNPAIRED;
            chain[i] = DC_UNIQUE;
            dc_bit_set(mt->old_left, i);
            dc_bit_set(mt->for_table, j);
            undone++;
        }
    }
    mt->paired_in_sequence -= undone;
    mt->old_unpaired += undone;
}

/* Walks the unpaired old rows after the prefix from the last to the first, a word of the
 * bitmap pass 1c and 1d kept at a time: it is a 32nd of the chain's bytes, and which rows
 * are paired follows no pattern, so a branch per row would mostly be mispredicted. */
typedef struct dc_unpaired_cursor {
    const uint64_t *bits;
    size_t word;       /* the word of `remaining`; the words above it are visited */
    size_t first_word; /* the word of the first row after the prefix (no bit below it is set) */
    uint64_t remaining;
} dc_unpaired_cursor_t;

static inline size_t dc_unpaired_previous(dc_unpaired_cursor_t *cursor) {
    while (cursor->remaining == 0) {
        if (cursor->word == cursor->first_word) return SIZE_MAX;
        cursor->remaining = cursor->bits[--cursor->word];
    }
    const unsigned top = 63u - (unsigned)__builtin_clzll(cursor->remaining);
    cursor->remaining &= ~(UINT64_C(1) << top);
    return cursor->word * 64 + top;
}

/* Rows on their way through the table of passes 1e and 1f: each row's placement is
 * computed once, when it joins the ring and its home slot is prefetched, and kept until
 * the row's turn comes DC_PREFETCH_DISTANCE rows later. */
typedef struct dc_placed_ring {
    struct { size_t row; uint64_t placed; } entries[DC_PREFETCH_DISTANCE];
    size_t added; /* rows that ever joined; row k of them is entries[k % DC_PREFETCH_DISTANCE] */
} dc_placed_ring_t;

static inline void dc_ring_add(dc_placed_ring_t *ring, const dc_matcher_t *mt, const dc_key_view_t *view,
                               size_t row) {
    const uint64_t placed = dc_place(dc_masked_key(view, row), &mt->placement);
    __builtin_prefetch(&mt->region[placed >> mt->shift], 1, 3);
    ring->entries[ring->added % DC_PREFETCH_DISTANCE].row = row;
    ring->entries[ring->added % DC_PREFETCH_DISTANCE].placed = placed;
    ring->added++;
}

static inline size_t dc_ring_row(const dc_placed_ring_t *ring, size_t k) {
    return ring->entries[k % DC_PREFETCH_DISTANCE].row;
}

static inline uint64_t dc_ring_placed(const dc_placed_ring_t *ring, size_t k) {
    return ring->entries[k % DC_PREFETCH_DISTANCE].placed;
}

/* pass 1e: indexes the unpaired old rows by identity, last to first, so that each slot
 * ends up at the first occurrence and `chain` links occurrences in old order, through the
 * ring of placements. */
static dc_status_t dc_index_unpaired_old_rows(dc_matcher_t *mt) {
    mt->capacity = dc_table_capacity(mt->old_unpaired); /* never above the region's */
    mt->shift = dc_table_shift(mt->capacity);
    const unsigned shift = mt->shift;
    const size_t capacity = mt->capacity;
    uint64_t *table = mt->region;
    uint32_t *chain = mt->chain;
    memset(table, 0, capacity * 8);
    dc_placed_ring_t ahead = { .added = 0 };
    dc_unpaired_cursor_t lead = { mt->old_left, dc_bitmap_words(mt->m), mt->prefix / 64, 0 };
    size_t inserted = 0;
    for (;;) {
        while (ahead.added - inserted < DC_PREFETCH_DISTANCE) {
            const size_t row = dc_unpaired_previous(&lead);
            if (row == SIZE_MAX) break;
            dc_ring_add(&ahead, mt, &mt->old_view, row);
        }
        if (inserted == ahead.added) break;
        const size_t i = dc_ring_row(&ahead, inserted);
        const dc_probe_t probe = dc_probe_placed(dc_masked_key(&mt->old_view, i), dc_ring_placed(&ahead, inserted), shift);
        inserted++;
        bool found;
        size_t position = dc_table_find(table, capacity, &mt->old_view, &mt->old_view, i, probe, &mt->verifier, &found);
        if (position == SIZE_MAX) return DC_ERR_TOO_MANY_COLLISIONS;
        if (found) {
            size_t next = dc_field_index(dc_slot_field(table[position]));
            if (chain[next] == DC_UNIQUE) chain[next] = DC_LAST_OF_SEVERAL;
            chain[i] = (uint32_t)next;
        } else {
            chain[i] = DC_UNIQUE;
        }
        table[position] = dc_make_slot(probe.tag, dc_index_field(i));
    }
    return DC_OK;
}

/* pass 1f: the unpaired new rows, in new order, through the table; each slot names the
 * first unpaired occurrence of its identity, moving down the chain as they pair. After
 * pass 1d no identity in the table has a pair outside it, so this is the occurrence rule. */
static dc_status_t dc_pair_through_table(dc_matcher_t *mt) {
    const unsigned shift = mt->shift;
    const size_t capacity = mt->capacity;
    uint64_t *table = mt->region;
    uint32_t *chain = mt->chain, *new_to_old = mt->new_to_old;
    const uint64_t *const old_keys = mt->old_view.keys;
    // In three stages: a row's slot is prefetched DC_PREFETCH_DISTANCE rows before it is
    // paired; half as far ahead, its slot is in cache and the old row it names (its key, to
    // verify, and its chain entry) is prefetched in turn — while at least one row in four
    // (in 16 past DC_FAR_KEYS_ROWS) finds its identity: the rows of an all-new list find
    // none, and the early look at their slots would only wait. The ring of placements is
    // the first stage.
    enum { near = DC_PREFETCH_DISTANCE / 2 };
    const size_t rows_a_find = mt->m >= DC_FAR_KEYS_ROWS ? 16 : 4;
    dc_placed_ring_t ahead = { .added = 0 };
    dc_bit_cursor_t rows = dc_bit_cursor(mt->for_table, mt->n);
    size_t looked = 0, paired = 0, found_count = 0;
    for (;;) {
        while (ahead.added - paired < DC_PREFETCH_DISTANCE) {
            const size_t row = dc_bit_next(&rows);
            if (row == SIZE_MAX) break;
            dc_ring_add(&ahead, mt, &mt->new_view, row);
        }
        if (rows_a_find * found_count + 64 < paired) looked = ahead.added; /* rows mostly new: no second stage */
        for (; looked < ahead.added && looked - paired < near; looked++) {
            const uint64_t placed = dc_ring_placed(&ahead, looked), slot = table[placed >> shift];
            if (slot != 0 && dc_slot_tag(slot) == (uint32_t)placed) { /* most likely the identity's slot */
                const size_t named = dc_field_index(dc_slot_field(slot));
                __builtin_prefetch(&old_keys[named]);
                __builtin_prefetch(&chain[named], 1);
            }
        }
        if (paired == ahead.added) break;
        const size_t j = dc_ring_row(&ahead, paired);
        const dc_probe_t probe = dc_probe_placed(dc_masked_key(&mt->new_view, j), dc_ring_placed(&ahead, paired), shift);
        paired++;
        bool found;
        size_t position = dc_table_find(table, capacity, &mt->old_view, &mt->new_view, j, probe, &mt->verifier, &found);
        if (position == SIZE_MAX) return DC_ERR_TOO_MANY_COLLISIONS;
        if (!found) continue;
        found_count++;
        size_t first = dc_field_index(dc_slot_field(table[position]));
        if (!dc_bit_get(mt->old_left, first)) continue; /* the last occurrence, taken by an earlier new row */
        uint32_t entry = chain[first];
        if (entry < DC_LAST_OF_SEVERAL) {
            table[position] = dc_make_slot(dc_slot_tag(table[position]), dc_index_field(entry));
        }
        // At the last occurrence the slot stays (it still names the identity for verifying
        // later probes) and its cleared bit in `old_left` says it is taken.
        new_to_old[j] = (uint32_t)first;
        chain[first] = (uint32_t)j;
        dc_bit_clear(mt->for_table, j);
        dc_bit_clear(mt->old_left, first);
    }
    return DC_OK;
}

/* pass 1g: the chain is the inverse pairing but for the prefix and the rows left unpaired
 * (the set bits of `old_left`: a few where rows mostly pair, whole words where they do
 * not), whose entries it writes. */
static void dc_invert_chain(dc_matcher_t *mt) {
    const size_t m = mt->m, prefix = mt->prefix;
    uint32_t *old_to_new = mt->chain;
    for (size_t i = 0; i < prefix; i++) old_to_new[i] = (uint32_t)i;
    size_t unpaired = 0;
    for (size_t word = prefix / 64; word < dc_bitmap_words(m); word++) {
        uint64_t left = mt->old_left[word];
        if (left == UINT64_MAX) { /* no bit past the rows is set: 64 rows */
            for (size_t k = 0; k < 64; k++) old_to_new[word * 64 + k] = DC_UNPAIRED;
            unpaired += 64;
            continue;
        }
        for (; left != 0; left &= left - 1) {
            old_to_new[word * 64 + (size_t)__builtin_ctzll(left)] = DC_UNPAIRED;
            unpaired++;
        }
    }
    mt->ws->paired = m - unpaired;
}

/* Passes 1b-1f, over the rows after the prefix. */
static dc_status_t dc_pair_rest(dc_matcher_t *mt) {
    dc_status_t status;
    memset(mt->old_left, 0, dc_bitmap_words(mt->m) * 8);
    if (!dc_chained(mt)) {
        for (size_t j = mt->prefix; j < mt->n; j++) mt->new_to_old[j] = DC_UNPAIRED;
        dc_bits_set_range(mt->old_left, mt->prefix, mt->m - mt->prefix);
        dc_bits_set_range(mt->for_table, mt->prefix, mt->n - mt->prefix);
        return DC_OK;
    }
    dc_start_filter(mt);
    if ((status = dc_pair_in_sequence(mt)) != DC_OK) return status;        /* 1b, 1c */
    dc_check_sequence_pairs(mt);                                           /* 1d */
    if (mt->old_unpaired > 0) {
        if ((status = dc_index_unpaired_old_rows(mt)) != DC_OK) return status; /* 1e */
        if ((status = dc_pair_through_table(mt)) != DC_OK) return status;      /* 1f */
    }
    return DC_OK;
}

dc_status_t dc_match(void *workspace, size_t workspace_size, const dc_match_input_t *input) {
    return dc_match_weakened(workspace, workspace_size, input, 0);
}

dc_status_t dc_match_weakened(void *workspace, size_t workspace_size, const dc_match_input_t *input,
                              uint32_t key_bits) {
    if (input == NULL) return DC_ERR_NULL_POINTER;
    const size_t m = input->old_count, n = input->new_count;
    if ((m && input->old_keys == NULL) || (n && input->new_keys == NULL)) return DC_ERR_NULL_POINTER;
    if (key_bits > 64) return DC_ERR_INVALID_ARGUMENT;
    if (key_bits != 0 && key_bits < 64 && input->identity_equal == NULL) {
        return DC_ERR_INVALID_ARGUMENT; /* truncated keys are not exact: they need verifying */
    }
    dc_workspace_t *ws;
    dc_status_t status = dc_workspace_start(workspace, workspace_size, m, n, &ws);
    if (status != DC_OK) return status;

    const uint64_t mask = dc_key_mask(key_bits);
    dc_matcher_t mt = {
        .ws = ws, .m = m, .n = n, .chain = dc_old_to_new(ws), .new_to_old = dc_pairing(ws),
        .for_table = dc_moved(ws), /* zero here; cleared again before the moves pass */
        .old_left = dc_old_paired(ws), /* complemented in place once matched */
        .old_view = { input->old_keys, mask, DC_SIDE_OLD }, .new_view = { input->new_keys, mask, DC_SIDE_NEW },
        .verifier = { input->identity_equal, input->context, input->collision_budget, 0 },
        .placement = dc_placement_from_seed(input->placement_seed),
        .region = dc_table(ws), .region_slots = ws->table_capacity,
    };
    dc_pair_prefix(&mt);                                       /* 1a */
    status = dc_pair_rest(&mt);                                /* 1b-1f */
    if (status == DC_OK) {
        dc_invert_chain(&mt);                                  /* 1g */
        // The rows left unpaired, complemented: the bitmaps of paired rows that the lists
        // are read from (dc_read()), as a segmented pairing keeps them.
        dc_complement_bits(dc_old_paired(ws), mt.old_left, m);
        dc_complement_bits(dc_new_paired(ws), mt.for_table, n);
    }
    memset(mt.for_table, 0, dc_bitmap_words(n) * 8);
    if (status != DC_OK) return status;
    dc_check_matched(ws, input, mask);
    ws->state = DC_STATE_MATCHED;
    return DC_OK;
}
