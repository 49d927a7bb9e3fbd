/* The GEMMs' scratch memory, kept from call to call (contract: gemm.h,
 * tb_gemm_scratch_get).
 *
 * Each thread owns at most one cached block, a tb_alloc block that only
 * grows: a request that fits takes it as it is (no allocation, no page
 * faults: the pages are already mapped), a larger one frees it and
 * allocates the larger size.  The block is lent to one call at a time
 * (`busy`); a request while it is lent (a GEMM reached again on the same
 * thread before the first returned, e.g. through a parallel-for that
 * runs other work on the waiting thread) and a request above
 * GEMM_SCRATCH_KEEP get a block of their own, freed when they give it
 * back, as before the cache.
 *
 * The block dies with its thread: its address is also the value of a
 * pthread key whose destructor frees it when a thread that allocated
 * one exits (the cpu backend's pool workers, when the pool is
 * destroyed).  The thread that never exits before the process does
 * (main) frees its block in tb_gemm_scratch_release, which the cpu
 * backend's teardown calls; till then the block is reachable from the
 * thread's TLS, so LeakSanitizer does not count it. */
#include "gemm.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "ops/alloc.h"

/* Requests above this many bytes are not kept: their allocation's cost
 * (page faults and zeroing, linear in the bytes) is a small part of a
 * GEMM that large (its work grows as the bytes to the power 1.5), and a
 * thread should not hold more than this between calls. */
#define GEMM_SCRATCH_KEEP ((size_t)256 << 20)

/* Sizes kept are rounded up to this, so that requests a little larger
 * than the last (a sweep over nearby sizes) reuse the block. */
#define GEMM_SCRATCH_ROUND ((size_t)64 << 10)

/* Bytes of a known pattern kept after the cached block's usable bytes:
 * a call that wrote past the memory it asked for damages them
 * (tb_gemm_scratch_check). */
#define GEMM_SCRATCH_GUARD 64
#define GEMM_SCRATCH_PATTERN 0xa5

typedef struct gemm_scratch {
    void *p;     /* the cached block (tb_alloc) or NULL */
    size_t cap;  /* its usable bytes */
    int busy;    /* lent to a call */
} gemm_scratch;

/* one cached block per kind (TB_SCRATCH_*) and thread */
static _Thread_local gemm_scratch gemm_tls[TB_SCRATCH_KINDS];

static pthread_key_t gemm_scratch_key[TB_SCRATCH_KINDS];
static pthread_once_t gemm_scratch_once = PTHREAD_ONCE_INIT;
static int gemm_scratch_key_ok[TB_SCRATCH_KINDS];

/* The keys' destructor: the exiting thread's block (its key value). */
static void gemm_scratch_dtor(void *p)
{
    tb_free(p);
}

static void gemm_scratch_key_init(void)
{
    for (int k = 0; k < TB_SCRATCH_KINDS; k++)
        gemm_scratch_key_ok[k] =
            pthread_key_create(&gemm_scratch_key[k], gemm_scratch_dtor) ==
            0;
}

/* Record p as the calling thread's block of kind k: in its TLS and as
 * its key value (for the destructor).  Without a key
 * (pthread_key_create failed) nothing is cached: 0. */
static int gemm_scratch_keep(int k, void *p)
{
    pthread_once(&gemm_scratch_once, gemm_scratch_key_init);
    if (!gemm_scratch_key_ok[k] ||
        pthread_setspecific(gemm_scratch_key[k], p) != 0)
        return 0;
    return 1;
}

static void scratch_release(int k)
{
    gemm_scratch *s = &gemm_tls[k];
    if (s->busy || !s->p)
        return;
    (void)pthread_setspecific(gemm_scratch_key[k], NULL);
    tb_free(s->p);
    s->p = NULL;
    s->cap = 0;
}

void *tb_scratch_get(int kind, size_t bytes, int *own)
{
    *own = 1;
    if (kind < 0 || kind >= TB_SCRATCH_KINDS)
        return NULL;
    gemm_scratch *s = &gemm_tls[kind];
    if (s->busy || bytes > GEMM_SCRATCH_KEEP)
        return tb_alloc(bytes);
    if (s->p && s->cap >= bytes) {
        s->busy = 1;
        *own = 0;
        return s->p;
    }
    /* Grow: the old block first, so that both are never held. */
    scratch_release(kind);
    const size_t cap =
        (bytes + GEMM_SCRATCH_ROUND - 1) / GEMM_SCRATCH_ROUND *
        GEMM_SCRATCH_ROUND;
    void *p = tb_alloc(cap + GEMM_SCRATCH_GUARD);
    if (!p)
        return NULL;
    memset((char *)p + cap, GEMM_SCRATCH_PATTERN, GEMM_SCRATCH_GUARD);
    if (!gemm_scratch_keep(kind, p))
        return p; /* *own: freed by tb_scratch_put */
    s->p = p;
    s->cap = cap;
    s->busy = 1;
    *own = 0;
    return p;
}

void tb_scratch_put(int kind, void *p, int own)
{
    if (own)
        tb_free(p);
    else if (p && kind >= 0 && kind < TB_SCRATCH_KINDS)
        gemm_tls[kind].busy = 0;
}

void *tb_gemm_scratch_get(size_t bytes, int *own)
{
    return tb_scratch_get(TB_SCRATCH_GEMM, bytes, own);
}

void tb_gemm_scratch_put(void *p, int own)
{
    tb_scratch_put(TB_SCRATCH_GEMM, p, own);
}

void tb_gemm_scratch_release(void)
{
    for (int k = 0; k < TB_SCRATCH_KINDS; k++)
        scratch_release(k);
}

size_t tb_gemm_scratch_cached(void)
{
    return gemm_tls[TB_SCRATCH_GEMM].cap;
}

int tb_gemm_scratch_check(void)
{
    const gemm_scratch *s = &gemm_tls[TB_SCRATCH_GEMM];
    if (!s->p)
        return 1;
    const unsigned char *g = (const unsigned char *)s->p + s->cap;
    for (int i = 0; i < GEMM_SCRATCH_GUARD; i++)
        if (g[i] != GEMM_SCRATCH_PATTERN)
            return 0;
    return 1;
}
