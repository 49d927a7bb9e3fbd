/* A caching allocator for tensor memory (issue 14): blocks in size
 * classes from an underlying allocator (a backend instance's alloc/free),
 * kept when freed and handed out again, as they are (not cleared), for a
 * request of the same class, returned to the underlying allocator only
 * at destroy.  Two kinds of classes: power-of-two (TB_POOL_POW2, at least
 * 256 bytes: a block serves any request up to twice smaller, the
 * workloads' pool=true) and exact (TB_POOL_EXACT, the request rounded up
 * to 64 bytes: a block serves requests of its own size only, the
 * workloads' block cache on host memory, which keeps a model step's
 * memory no larger than without it).  One pool per user (a workload on
 * one backend instance); not thread-safe.  The tensors it hands out do
 * not own their memory (owns = false): free them with tb_pool_free
 * only. */
#ifndef TB_OPS_POOL_H
#define TB_OPS_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

typedef struct tb_pool tb_pool;

typedef struct tb_pool_stats {
    uint64_t requests;    /* tb_pool_alloc calls that succeeded */
    uint64_t hits;        /* served from a cached block */
    uint64_t sys_allocs;  /* blocks from the underlying allocator */
    uint64_t sys_bytes;   /* their bytes (class sizes) */
    uint64_t req_bytes;   /* bytes the requests asked for */
    int64_t cached_bytes; /* held, not in use */
    int64_t used_bytes;   /* in use (class sizes) */
} tb_pool_stats;

typedef int (*tb_pool_alloc_fn)(void *user, tb_tensor *t);
typedef void (*tb_pool_free_fn)(void *user, tb_tensor *t);

typedef enum { TB_POOL_POW2, TB_POOL_EXACT } tb_pool_classes;

int tb_pool_create(tb_pool_classes classes, tb_pool_alloc_fn alloc,
                   tb_pool_free_fn free_, void *user, tb_pool **out);
/* Returns every block to the underlying allocator (blocks still in use
 * included: their tensors become invalid). */
void tb_pool_destroy(tb_pool *p);

/* Memory for t (header filled: dtype, shape); t->data set. */
int tb_pool_alloc(tb_pool *p, tb_tensor *t);
/* Gives t's block back to the pool (kept for reuse); t->data = NULL.
 * A tensor the pool did not hand out is left alone. */
void tb_pool_free(tb_pool *p, tb_tensor *t);

void tb_pool_stats_read(const tb_pool *p, tb_pool_stats *out);

/* The class (block size in bytes) of a request of n bytes: power-of-two
 * (tb_pool_class) or exact (tb_pool_class_exact). */
size_t tb_pool_class(size_t n);
size_t tb_pool_class_exact(size_t n);

#endif
