/* Memory for backends that compute on host memory (cpu, blas): tensors
 * from the tracked allocator, memcpy transfers, and their counters.  A
 * backend embeds a tb_hostmem first in its instance and uses the
 * tb_hostmem_slot_* functions as its alloc / free / upload / download
 * slots. */
#ifndef TB_BACKENDS_HOSTMEM_H
#define TB_BACKENDS_HOSTMEM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

typedef struct tb_hostmem {
    const tb_backend *owner; /* set once at instance creation */
    _Atomic uint64_t kernel_launches; /* the backend's kernel calls */
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
/* Set out's memory counts from m (not its kernel_launches: a plugin
 * counts its own). */
void tb_hostmem_counters(tb_hostmem *m, tb_backend_counters *out);

/* One more kernel call of the instance m belongs to. */
static inline void tb_hostmem_launch(tb_hostmem *m)
{
    atomic_fetch_add_explicit(&m->kernel_launches, 1, memory_order_relaxed);
}

/* The alloc / free / upload / download slots themselves, for a backend
 * whose instance begins with its tb_hostmem (cpu, blas: each asserts
 * offsetof(..., mem) == 0).  A NULL instance is TB_EINVAL (free: left
 * alone). */
int tb_hostmem_slot_alloc(void *ctx, tb_tensor *t);
void tb_hostmem_slot_free(void *ctx, tb_tensor *t);
int tb_hostmem_slot_upload(void *ctx, tb_tensor *dst, const tb_tensor *src);
int tb_hostmem_slot_download(void *ctx, tb_tensor *dst,
                             const tb_tensor *src);
/* Host kernels return when their result is written: nothing to wait
 * for.  0. */
int tb_hostmem_slot_sync(void *ctx);
/* The counters slot: *out zeroed, then the instance's counts. */
void tb_hostmem_slot_counters(void *ctx, tb_backend_counters *out);

/* The slots above, in a backend's designated initializer. */
#define TB_HOSTMEM_SLOTS                                                  \
    .alloc = tb_hostmem_slot_alloc, .free = tb_hostmem_slot_free,         \
    .upload = tb_hostmem_slot_upload,                                     \
    .download = tb_hostmem_slot_download, .sync = tb_hostmem_slot_sync,   \
    .counters = tb_hostmem_slot_counters

#endif
