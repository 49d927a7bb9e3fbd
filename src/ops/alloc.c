/* Tracked allocator: see alloc.h for the contract.
 *
 * Layout of one block: [64-byte header holding the size][user data...].
 * The header keeps the user pointer 64-byte aligned and lets tb_free()
 * account the bytes without a lookup table. */
#include "alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif


#define TB_SLOTS 256

typedef struct {
    _Alignas(64) atomic_uint_fast64_t allocs;
    atomic_uint_fast64_t frees;
    atomic_uint_fast64_t bytes;
    atomic_int_fast64_t live;
    atomic_int_fast64_t peak;
} tb_slot;

static tb_slot slots[TB_SLOTS];
static atomic_int next_slot;
static _Thread_local int my_slot = -1;
static atomic_long fail_after = -1;

/* The calling thread's slot.  Threads beyond TB_SLOTS share the last
 * slot; the sums stay exact because every update is atomic. */
static tb_slot *slot_get(void)
{
    if (my_slot < 0) {
        int s = atomic_fetch_add(&next_slot, 1);
        my_slot = s < TB_SLOTS ? s : TB_SLOTS - 1;
    }
    return &slots[my_slot];
}

static int inject_failure(void)
{
    long n = atomic_load_explicit(&fail_after, memory_order_relaxed);
    while (n >= 0) {
        if (n == 0)
            return 1;
        if (atomic_compare_exchange_weak(&fail_after, &n, n - 1))
            return 0;
    }
    return 0;
}

void *tb_alloc_pages(size_t align, size_t *bytes)
{
    const int huge = *bytes >= TB_HUGE_MIN;
    if (huge) /* aligned_alloc wants a multiple of the alignment */
        *bytes = (*bytes + TB_HUGE_ALIGN - 1) & ~(TB_HUGE_ALIGN - 1);
    void *p = aligned_alloc(huge ? TB_HUGE_ALIGN : align, *bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p && huge)
        (void)madvise(p, *bytes, MADV_HUGEPAGE);
#endif
    return p;
}

void *tb_alloc(size_t size)
{
    if (inject_failure())
        return NULL;
    size_t body = (size + TB_ALIGN - 1) & ~(size_t)(TB_ALIGN - 1);
    /* No object may exceed PTRDIFF_MAX bytes. */
    if (body < size || body > (size_t)PTRDIFF_MAX - TB_ALIGN)
        return NULL;
    size_t total = TB_ALIGN + body;
    unsigned char *base = tb_alloc_pages(TB_ALIGN, &total);
    if (!base)
        return NULL;
    memcpy(base, &size, sizeof size);

    tb_slot *s = slot_get();
    atomic_fetch_add_explicit(&s->allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->bytes, size, memory_order_relaxed);
    int_fast64_t live = atomic_fetch_add_explicit(&s->live, (int64_t)size,
                                                  memory_order_relaxed) +
                        (int64_t)size;
    int_fast64_t peak = atomic_load_explicit(&s->peak, memory_order_relaxed);
    while (live > peak &&
           !atomic_compare_exchange_weak(&s->peak, &peak, live))
        ;
    return base + TB_ALIGN;
}

void tb_free(void *p)
{
    if (!p)
        return;
    unsigned char *base = (unsigned char *)p - TB_ALIGN;
    size_t size;
    memcpy(&size, base, sizeof size);
    tb_slot *s = slot_get();
    atomic_fetch_add_explicit(&s->frees, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&s->live, (int64_t)size, memory_order_relaxed);
    free(base);
}

void tb_alloc_stats_read(tb_alloc_stats *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < TB_SLOTS; i++) {
        tb_slot *s = &slots[i];
        out->allocs += atomic_load_explicit(&s->allocs, memory_order_relaxed);
        out->frees += atomic_load_explicit(&s->frees, memory_order_relaxed);
        out->bytes += atomic_load_explicit(&s->bytes, memory_order_relaxed);
        out->live_bytes +=
            atomic_load_explicit(&s->live, memory_order_relaxed);
        out->peak_bytes +=
            atomic_load_explicit(&s->peak, memory_order_relaxed);
    }
}

void tb_alloc_peak_reset(void)
{
    for (int i = 0; i < TB_SLOTS; i++) {
        int_fast64_t live =
            atomic_load_explicit(&slots[i].live, memory_order_relaxed);
        atomic_store_explicit(&slots[i].peak, live > 0 ? live : 0,
                              memory_order_relaxed);
    }
}

void tb_alloc_fail_after(long n)
{
    atomic_store(&fail_after, n < 0 ? -1 : n);
}
