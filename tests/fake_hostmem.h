/* The slots every stand-in backend of the C tests shares: a probe that
 * always succeeds, no axes, a destroy with nothing to free, and tensors
 * in host memory (tb_alloc) copied with memcpy.  Included by the tests
 * whose fake backend only differs in its kernels and timer. */
#ifndef TB_TESTS_FAKE_HOSTMEM_H
#define TB_TESTS_FAKE_HOSTMEM_H

#include <string.h>

#include "backends/backend.h"
#include "base/error.h"
#include "ops/alloc.h"
#include "ops/tensor.h"

static inline int hostmem_probe(const tb_backend *self, char *r, size_t n)
{
    (void)self, (void)r, (void)n;
    return 0;
}
static inline int hostmem_axes(const tb_backend *self, tb_axis *out,
                               int max)
{
    (void)self, (void)out, (void)max;
    return 0;
}
static inline void hostmem_destroy(void *ctx) { (void)ctx; }
static inline int hostmem_alloc(void *ctx, tb_tensor *t)
{
    (void)ctx;
    t->data = tb_alloc(tb_tensor_nbytes(t));
    t->owns = true;
    return t->data ? 0 : TB_ENOMEM;
}
static inline void hostmem_free(void *ctx, tb_tensor *t)
{
    (void)ctx;
    tb_free(t->data);
    t->data = NULL;
}
static inline int hostmem_copy(void *ctx, tb_tensor *d, const tb_tensor *s)
{
    (void)ctx;
    memcpy(d->data, s->data, tb_tensor_nbytes(s));
    return 0;
}

#endif
