/* Tracked allocator: see alloc.h for the contract.
 *
 * Layout of one block: [64-byte header holding the size][user data...].
 * The header keeps the user pointer 64-byte aligned and lets tb_free()
 * account the bytes without a lookup table. */
#include "alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
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

/* Freed blocks of TB_HUGE_MIN bytes and more, kept for the next request
 * of the same size (at most KEEP_BLOCKS of them and KEEP_BYTES in all:
 * kept ones are freed to make room for the bytes of a new one; with
 * every slot taken, the new one is freed).  aligned_alloc() of
 * 2 MiB asks glibc for a fresh mapping at every call (its mmap threshold
 * rises, after a free, to the freed chunk's size, and an aligned request
 * is always larger than that by its alignment), so without them every
 * call that allocates a large tensor faulted the whole block in again,
 * zeroed: add_relu_unfused f64 1024x1024, whose 8 MiB temporary is
 * allocated and freed per call, spent ~0.4 ms a call in page faults
 * (1.74 -> 0.88 ms with the blocks kept; tbench ab, 8 blocks, load 15),
 * where NumPy's arrays (plain malloc) get the freed chunk back.  Unlike
 * the heap's reuse, a kept block keeps its huge pages. */
#define KEEP_BLOCKS 8
#define KEEP_BYTES ((size_t)256 << 20)

static pthread_mutex_t keep_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *keep_base[KEEP_BLOCKS];
static size_t keep_size[KEEP_BLOCKS]; /* 0: an empty slot */
static size_t keep_bytes;

static unsigned char *keep_take(size_t total)
{
    unsigned char *p = NULL;
    pthread_mutex_lock(&keep_mu);
    for (int i = 0; i < KEEP_BLOCKS; i++)
        if (keep_size[i] == total) {
            p = keep_base[i];
            keep_size[i] = 0;
            keep_bytes -= total;
            break;
        }
    pthread_mutex_unlock(&keep_mu);
    return p;
}

/* Keep base (total bytes) or free it. */
static void keep_put(unsigned char *base, size_t total)
{
    unsigned char *drop[KEEP_BLOCKS];
    int nd = 0;
    bool kept = false;
    pthread_mutex_lock(&keep_mu);
    if (total <= KEEP_BYTES) {
        for (int i = 0; i < KEEP_BLOCKS && nd < KEEP_BLOCKS; i++) {
            if (keep_size[i] && keep_bytes + total > KEEP_BYTES) {
                drop[nd++] = keep_base[i];
                keep_bytes -= keep_size[i];
                keep_size[i] = 0;
            }
        }
        for (int i = 0; i < KEEP_BLOCKS && !kept; i++)
            if (!keep_size[i]) {
                keep_base[i] = base;
                keep_size[i] = total;
                keep_bytes += total;
                kept = true;
            }
    }
    pthread_mutex_unlock(&keep_mu);
    for (int i = 0; i < nd; i++)
        free(drop[i]);
    if (!kept)
        free(base);
}

/* Free every kept block (before retrying a failed allocation). */
static void keep_flush(void)
{
    for (;;) {
        unsigned char *p = NULL;
        pthread_mutex_lock(&keep_mu);
        for (int i = 0; i < KEEP_BLOCKS && !p; i++)
            if (keep_size[i]) {
                p = keep_base[i];
                keep_bytes -= keep_size[i];
                keep_size[i] = 0;
            }
        pthread_mutex_unlock(&keep_mu);
        if (!p)
            return;
        free(p);
    }
}

/* The bytes tb_alloc_pages gives a block of total bytes. */
static size_t block_bytes(size_t total)
{
    return total >= TB_HUGE_MIN
               ? (total + TB_HUGE_ALIGN - 1) & ~(TB_HUGE_ALIGN - 1)
               : total;
}

void *tb_alloc(size_t size)
{
    if (inject_failure())
        return NULL;
    size_t body = (size + TB_ALIGN - 1) & ~(size_t)(TB_ALIGN - 1);
    /* No object may exceed PTRDIFF_MAX bytes. */
    if (body < size || body > (size_t)PTRDIFF_MAX - 2 * TB_HUGE_ALIGN)
        return NULL;
    size_t total = TB_ALIGN + body;
    unsigned char *base = NULL;
    if (total >= TB_HUGE_MIN)
        base = keep_take(block_bytes(total));
    if (!base)
        base = tb_alloc_pages(TB_ALIGN, &total);
    if (!base && block_bytes(total) >= TB_HUGE_MIN) {
        keep_flush();
        base = tb_alloc_pages(TB_ALIGN, &total);
    }
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
    size_t total = TB_ALIGN + ((size + TB_ALIGN - 1) & ~(size_t)(TB_ALIGN - 1));
    if (total >= TB_HUGE_MIN)
        keep_put(base, block_bytes(total));
    else
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
