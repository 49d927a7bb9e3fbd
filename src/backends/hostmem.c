#include "hostmem.h"

#include <stdatomic.h>
#include <string.h>

#include "../ops/alloc.h"
#include "../base/error.h"

bool tb_hostmem_header_ok(const tb_tensor *t)
{
    if (!t || (unsigned)t->dtype >= TB_DTYPE_COUNT || t->ndim < 0 ||
        t->ndim > TB_MAX_DIMS)
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < 0)
            return false;
    return true;
}

bool tb_hostmem_same_shape(const tb_tensor *a, const tb_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

int tb_hostmem_alloc(tb_hostmem *m, void *ctx, tb_tensor *t)
{
    if (!m || !ctx || !tb_hostmem_header_ok(t) ||
        !tb_tensor_is_contiguous(t))
        return TB_EINVAL;
    size_t nb = tb_tensor_nbytes(t);
    void *p = tb_alloc(nb);
    if (!p)
        return TB_ENOMEM;
    t->data = p;
    t->owns = true;
    t->backend = m->owner;
    t->backend_ctx = ctx;
    atomic_fetch_add_explicit(&m->device_allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->device_alloc_bytes, nb,
                              memory_order_relaxed);
    return 0;
}

void tb_hostmem_free(const tb_hostmem *m, tb_tensor *t)
{
    if (!m || !t || t->backend != m->owner)
        return;
    if (t->owns)
        tb_free(t->data);
    t->data = NULL;
    t->owns = false;
}

/* memcpy between two contiguous tensors of equal dtype and shape. */
static int copy(tb_hostmem *m, tb_tensor *dst, const tb_tensor *src)
{
    if (!m || !tb_hostmem_header_ok(dst) || !tb_hostmem_header_ok(src))
        return TB_EINVAL;
    if (dst->dtype != src->dtype || !tb_hostmem_same_shape(dst, src))
        return TB_ESHAPE;
    if (!tb_tensor_is_contiguous(dst) || !tb_tensor_is_contiguous(src))
        return TB_EINVAL;
    size_t nb = tb_tensor_nbytes(src);
    if (nb && (!dst->data || !src->data))
        return TB_EINVAL;
    if (nb && dst->data != src->data)
        memcpy(dst->data, src->data, nb);
    atomic_fetch_add_explicit(&m->memcpy_count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->memcpy_bytes, nb, memory_order_relaxed);
    return 0;
}

int tb_hostmem_upload(tb_hostmem *m, tb_tensor *dst, const tb_tensor *src)
{
    if (!m || !dst || dst->backend != m->owner)
        return TB_EINVAL;
    return copy(m, dst, src);
}

int tb_hostmem_download(tb_hostmem *m, tb_tensor *dst, const tb_tensor *src)
{
    if (!m || !src || src->backend != m->owner)
        return TB_EINVAL;
    return copy(m, dst, src);
}

void tb_hostmem_counters(tb_hostmem *m, tb_backend_counters *out)
{
    out->memcpy_count =
        atomic_load_explicit(&m->memcpy_count, memory_order_relaxed);
    out->memcpy_bytes =
        atomic_load_explicit(&m->memcpy_bytes, memory_order_relaxed);
    out->device_allocs =
        atomic_load_explicit(&m->device_allocs, memory_order_relaxed);
    out->device_alloc_bytes =
        atomic_load_explicit(&m->device_alloc_bytes, memory_order_relaxed);
}

/* ---- the slots (an instance that begins with its tb_hostmem) ---------- */

int tb_hostmem_slot_alloc(void *ctx, tb_tensor *t)
{
    return ctx ? tb_hostmem_alloc((tb_hostmem *)ctx, ctx, t) : TB_EINVAL;
}

void tb_hostmem_slot_free(void *ctx, tb_tensor *t)
{
    if (ctx)
        tb_hostmem_free((const tb_hostmem *)ctx, t);
}

int tb_hostmem_slot_upload(void *ctx, tb_tensor *dst, const tb_tensor *src)
{
    return ctx ? tb_hostmem_upload((tb_hostmem *)ctx, dst, src) : TB_EINVAL;
}

int tb_hostmem_slot_download(void *ctx, tb_tensor *dst, const tb_tensor *src)
{
    return ctx ? tb_hostmem_download((tb_hostmem *)ctx, dst, src)
               : TB_EINVAL;
}

int tb_hostmem_slot_sync(void *ctx)
{
    (void)ctx;
    return 0;
}

void tb_hostmem_slot_counters(void *ctx, tb_backend_counters *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!ctx)
        return;
    tb_hostmem *m = ctx;
    out->kernel_launches =
        atomic_load_explicit(&m->kernel_launches, memory_order_relaxed);
    tb_hostmem_counters(m, out);
}
