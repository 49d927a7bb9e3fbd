/* Memory for backends that compute on host memory (cpu, blas): tensors
 * from the tracked allocator, memcpy transfers, and their counters.  A
 * backend embeds a tb_hostmem in its instance and forwards its alloc /
 * free / upload / download slots here. */
#ifndef TB_BACKENDS_HOSTMEM_H
#define TB_BACKENDS_HOSTMEM_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

typedef struct tb_hostmem {
    const tb_backend *owner; /* set once at instance creation */
    _Atomic uint64_t memcpy_count;
    _Atomic uint64_t memcpy_bytes;
    _Atomic uint64_t device_allocs;
    _Atomic uint64_t device_alloc_bytes;
} tb_hostmem;

/* A well-formed header: valid dtype and ndim, non-negative dims. */
bool tb_hostmem_header_ok(const tb_tensor *t);
/* Same ndim and dims (strides are not compared). */
bool tb_hostmem_same_shape(const tb_tensor *a, const tb_tensor *b);

/* Allocate t's contiguous bytes (t's header filled by the caller); the
 * tensor then belongs to m->owner and instance ctx.  0, TB_EINVAL or
 * TB_ENOMEM. */
int tb_hostmem_alloc(tb_hostmem *m, void *ctx, tb_tensor *t);
/* Free a tensor from tb_hostmem_alloc; NULL, views and other backends'
 * tensors are left alone (a view's data pointer is cleared). */
void tb_hostmem_free(const tb_hostmem *m, tb_tensor *t);
/* Copy a host tensor into one of m's tensors, and back.  Equal dtype and
 * shape, both contiguous.  0, TB_EINVAL or TB_ESHAPE. */
int tb_hostmem_upload(tb_hostmem *m, tb_tensor *dst, const tb_tensor *src);
int tb_hostmem_download(tb_hostmem *m, tb_tensor *dst,
                        const tb_tensor *src);
/* Add m's counts to out (kernel launches are the backend's own). */
void tb_hostmem_counters(tb_hostmem *m, tb_backend_counters *out);

#endif
