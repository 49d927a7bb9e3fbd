/* The caching allocator.  See pool.h.
 *
 * Blocks are kept in one array (a model step has tens of live tensors):
 * a request takes the most recently freed block of its class (LIFO, as
 * malloc's bins: the block still in cache), a free finds its block by
 * address.  Each block is a 1-D tensor of its class's bytes
 * from the underlying allocator, whose header is kept to give it back. */
#include "pool.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"

#define POOL_MIN_CLASS 256
#define POOL_EXACT_ALIGN 64

typedef struct pool_block {
    tb_tensor hdr; /* as the underlying allocator returned it */
    size_t cls;
    bool used;
    uint64_t freed_at; /* tick of its last free: the most recent is reused */
} pool_block;

struct tb_pool {
    tb_pool_classes classes;
    tb_pool_alloc_fn alloc;
    tb_pool_free_fn free;
    void *user;
    pool_block *b;
    size_t n, cap;
    uint64_t tick;
    tb_pool_stats st;
};

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
    /* the most recently freed block of the class (still warm in cache) */
    pool_block *blk = NULL;
    for (size_t i = 0; i < p->n; i++)
        if (!p->b[i].used && p->b[i].cls == cls &&
            (!blk || p->b[i].freed_at > blk->freed_at))
            blk = &p->b[i];
    if (blk) {
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
        p->n++;
        p->st.sys_allocs++;
        p->st.sys_bytes += cls;
    }
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
    if (!p || !t || !t->data)
        return;
    for (size_t i = 0; i < p->n; i++)
        if (p->b[i].used && p->b[i].hdr.data == t->data) {
            p->b[i].used = false;
            p->b[i].freed_at = ++p->tick;
            p->st.used_bytes -= (int64_t)p->b[i].cls;
            p->st.cached_bytes += (int64_t)p->b[i].cls;
            t->data = NULL;
            return;
        }
}

void tb_pool_stats_read(const tb_pool *p, tb_pool_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (p)
        *out = p->st;
}
