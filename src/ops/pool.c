/* The caching allocator.  See pool.h.
 *
 * Blocks are kept in one array; a request takes the most recently freed
 * block of its class (LIFO, as malloc's bins: the block still in cache),
 * a free finds its block by address.  Each block is a 1-D tensor of its
 * class's bytes from the underlying allocator, whose header is kept to
 * give it back.  Both lookups go through open-addressing tables (a class
 * to the head of its stack of free blocks, linked through the blocks; an
 * address to its block), never through the array: a transformer step
 * has a few hundred blocks, and scanning them at every request and every
 * free took 16% of tfm_train_step 1x16x32 (perf, -e cpu-clock). */
#include "pool.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"

#define POOL_MIN_CLASS 256
#define POOL_EXACT_ALIGN 64
#define POOL_NONE ((size_t)-1)

typedef struct pool_block {
    tb_tensor hdr; /* as the underlying allocator returned it */
    size_t cls;
    size_t next_free; /* the next free block of the class, or POOL_NONE */
    bool used;
} pool_block;

/* a class's slot: cls 0 = empty (no class is 0 bytes) */
typedef struct pool_cls {
    size_t cls;
    size_t head; /* its most recently freed block, or POOL_NONE */
} pool_cls;

/* an address's slot: data NULL = empty */
typedef struct pool_addr {
    const void *data;
    size_t blk;
} pool_addr;

struct tb_pool {
    tb_pool_classes classes;
    tb_pool_alloc_fn alloc;
    tb_pool_free_fn free;
    void *user;
    pool_block *b;
    size_t n, cap;
    pool_cls *ct; /* ct_cap slots (a power of two), ct_n used */
    size_t ct_cap, ct_n;
    pool_addr *at; /* at_cap slots (a power of two), n used */
    size_t at_cap;
    tb_pool_stats st;
};

/* Fibonacci hashing to a table of cap (a power of two) slots */
static size_t pool_slot(uint64_t key, size_t cap)
{
    return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (cap - 1);
}

static size_t pool_addr_slot(const pool_addr *at, size_t cap,
                             const void *data)
{
    size_t i = pool_slot((uint64_t)(uintptr_t)data >> 4, cap);
    while (at[i].data && at[i].data != data)
        i = (i + 1) & (cap - 1);
    return i;
}

static size_t pool_cls_slot(const pool_cls *ct, size_t cap, size_t cls)
{
    size_t i = pool_slot((uint64_t)cls, cap);
    while (ct[i].cls && ct[i].cls != cls)
        i = (i + 1) & (cap - 1);
    return i;
}

/* Room for one more address and one more class (at most half of either
 * table full); 0 or TB_ENOMEM, the tables unchanged then. */
static int pool_reserve(tb_pool *p)
{
    if (2 * (p->n + 1) > p->at_cap) {
        size_t cap = p->at_cap ? 2 * p->at_cap : 64;
        pool_addr *at = calloc(cap, sizeof *at);
        if (!at)
            return TB_ENOMEM;
        for (size_t i = 0; i < p->at_cap; i++)
            if (p->at[i].data)
                at[pool_addr_slot(at, cap, p->at[i].data)] = p->at[i];
        free(p->at);
        p->at = at;
        p->at_cap = cap;
    }
    if (2 * (p->ct_n + 1) > p->ct_cap) {
        size_t cap = p->ct_cap ? 2 * p->ct_cap : 32;
        pool_cls *ct = calloc(cap, sizeof *ct);
        if (!ct)
            return TB_ENOMEM;
        for (size_t i = 0; i < p->ct_cap; i++)
            if (p->ct[i].cls)
                ct[pool_cls_slot(ct, cap, p->ct[i].cls)] = p->ct[i];
        free(p->ct);
        p->ct = ct;
        p->ct_cap = cap;
    }
    return 0;
}

size_t tb_pool_class(size_t n)
{
    size_t c = POOL_MIN_CLASS;
    while (c < n && c <= SIZE_MAX / 2)
        c *= 2;
    return c;
}

size_t tb_pool_class_exact(size_t n)
{
    if (n == 0)
        return POOL_EXACT_ALIGN;
    if (n > SIZE_MAX - (POOL_EXACT_ALIGN - 1))
        return 0; /* no class: tb_pool_alloc refuses it */
    return (n + POOL_EXACT_ALIGN - 1) & ~(size_t)(POOL_EXACT_ALIGN - 1);
}

int tb_pool_create(tb_pool_classes classes, tb_pool_alloc_fn alloc,
                   tb_pool_free_fn free_, void *user, tb_pool **out)
{
    if (!alloc || !free_ || !out ||
        (classes != TB_POOL_POW2 && classes != TB_POOL_EXACT))
        return TB_EINVAL;
    tb_pool *p = calloc(1, sizeof *p);
    if (!p)
        return TB_ENOMEM;
    p->classes = classes;
    p->alloc = alloc;
    p->free = free_;
    p->user = user;
    *out = p;
    return 0;
}

void tb_pool_destroy(tb_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        p->free(p->user, &p->b[i].hdr);
    free(p->b);
    free(p->ct);
    free(p->at);
    free(p);
}

int tb_pool_alloc(tb_pool *p, tb_tensor *t)
{
    if (!p || !t || (unsigned)t->dtype >= TB_DTYPE_COUNT)
        return TB_EINVAL;
    size_t need = tb_tensor_nbytes(t);
    size_t cls = p->classes == TB_POOL_EXACT ? tb_pool_class_exact(need)
                                             : tb_pool_class(need);
    if (cls < need) /* beyond any class: no allocator has it */
        return TB_ENOMEM;
    if (pool_reserve(p))
        return TB_ENOMEM;
    /* the most recently freed block of the class (still warm in cache) */
    pool_cls *c = &p->ct[pool_cls_slot(p->ct, p->ct_cap, cls)];
    pool_block *blk = NULL;
    if (c->cls && c->head != POOL_NONE) {
        blk = &p->b[c->head];
        c->head = blk->next_free;
        p->st.hits++;
        p->st.cached_bytes -= (int64_t)cls;
    } else {
        if (p->n == p->cap) {
            size_t cap = p->cap ? 2 * p->cap : 32;
            pool_block *b = realloc(p->b, cap * sizeof *b);
            if (!b)
                return TB_ENOMEM;
            p->b = b;
            p->cap = cap;
        }
        blk = &p->b[p->n];
        memset(blk, 0, sizeof *blk);
        size_t esz = tb_dtype_size(t->dtype);
        tb_shape s = {1, {(int64_t)(cls / esz)}};
        tb_tensor_init(&blk->hdr, t->dtype, &s);
        int rc = p->alloc(p->user, &blk->hdr);
        if (rc)
            return rc;
        blk->cls = cls;
        if (!c->cls) {
            c->cls = cls;
            c->head = POOL_NONE;
            p->ct_n++;
        }
        p->at[pool_addr_slot(p->at, p->at_cap, blk->hdr.data)] =
            (pool_addr){blk->hdr.data, p->n};
        p->n++;
        p->st.sys_allocs++;
        p->st.sys_bytes += cls;
    }
    blk->next_free = POOL_NONE;
    blk->used = true;
    p->st.requests++;
    p->st.req_bytes += need;
    p->st.used_bytes += (int64_t)cls;
    t->data = blk->hdr.data;
    t->backend = blk->hdr.backend;
    t->backend_ctx = blk->hdr.backend_ctx;
    t->owns = false;
    return 0;
}

void tb_pool_free(tb_pool *p, tb_tensor *t)
{
    if (!p || !t || !t->data || !p->at_cap)
        return;
    const pool_addr *e = &p->at[pool_addr_slot(p->at, p->at_cap, t->data)];
    if (!e->data)
        return; /* not the pool's */
    pool_block *blk = &p->b[e->blk];
    if (!blk->used)
        return;
    pool_cls *c = &p->ct[pool_cls_slot(p->ct, p->ct_cap, blk->cls)];
    blk->used = false;
    blk->next_free = c->head;
    c->head = e->blk;
    p->st.used_bytes -= (int64_t)blk->cls;
    p->st.cached_bytes += (int64_t)blk->cls;
    t->data = NULL;
}

void tb_pool_stats_read(const tb_pool *p, tb_pool_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (p)
        *out = p->st;
}
