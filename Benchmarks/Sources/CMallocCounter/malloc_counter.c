#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>

#include "CMallocCounter.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static _Atomic int64_t live_bytes, peak_bytes, allocation_count;
/* Off until the benchmark turns it on, so that the file differ pays nothing for it. */
static _Atomic int counting;

static void note_allocation(void *pointer) {
    if (pointer == NULL || !atomic_load_explicit(&counting, memory_order_relaxed)) return;
    int64_t size = (int64_t)malloc_usable_size(pointer);
    int64_t now = atomic_fetch_add(&live_bytes, size) + size;
    int64_t peak = atomic_load(&peak_bytes);
    while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {}
    atomic_fetch_add(&allocation_count, 1);
}

static void note_release(void *pointer) {
    if (pointer != NULL && atomic_load_explicit(&counting, memory_order_relaxed)) atomic_fetch_sub(&live_bytes, (int64_t)malloc_usable_size(pointer));
}

void *malloc(size_t size) {
    void *pointer = __libc_malloc(size);
    note_allocation(pointer);
    return pointer;
}

void *calloc(size_t count, size_t size) {
    void *pointer = __libc_calloc(count, size);
    note_allocation(pointer);
    return pointer;
}

void *realloc(void *pointer, size_t size) {
    note_release(pointer);
    void *moved = __libc_realloc(pointer, size);
    if (moved == NULL && size != 0) {
        note_allocation(pointer); /* the old block is still live */
        return NULL;
    }
    note_allocation(moved);
    return moved;
}

void free(void *pointer) {
    note_release(pointer);
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    void *pointer = __libc_memalign(alignment, size);
    note_allocation(pointer);
    return pointer;
}

void *aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }

int posix_memalign(void **out, size_t alignment, size_t size) {
    void *pointer = memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

void mc_start_counting(void) { atomic_store(&counting, 1); }
void mc_reset_peak(void) { atomic_store(&peak_bytes, atomic_load(&live_bytes)); }
int64_t mc_current_bytes(void) { return atomic_load(&live_bytes); }
int64_t mc_peak_bytes(void) { return atomic_load(&peak_bytes); }
int64_t mc_allocations(void) { return atomic_load(&allocation_count); }
int mc_is_active(void) { return atomic_load(&allocation_count) > 0; }
