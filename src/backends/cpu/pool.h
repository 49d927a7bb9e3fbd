/* The cpu backend's thread pool: a job of `nparts` parts runs fn(arg,
 * part, nparts) for every part, part 0 on the calling thread, the others
 * on whichever thread claims them first (a worker, or the caller once
 * its own part is done), so a worker that gets no core under contention
 * delays nothing but its own claim.  Workers are created once and park
 * between jobs (they poll for a while first: a futex wake-up costs more
 * than many whole jobs on a VM).
 *
 * Concurrency contract: one pool is driven by one thread at a time (the
 * instance's caller); a process forked from its owner runs every job on
 * the calling thread (its workers did not survive the fork). */
#ifndef TB_BACKENDS_CPU_POOL_H
#define TB_BACKENDS_CPU_POOL_H

#include <stdint.h>

/* A part of a job: computes its own range of the work from (part,
 * nparts). */
typedef void (*tb_cpu_task_fn)(void *arg, int part, int nparts);

typedef struct tb_cpu_pool tb_cpu_pool;

/* Start nworkers parked workers.  Returns 0 or TB_ENOMEM (*out NULL). */
int tb_cpu_pool_create(int nworkers, tb_cpu_pool **out);
/* Stop and join the workers, free the pool.  Accepts NULL and a pool
 * whose workers were only partly started. */
void tb_cpu_pool_destroy(tb_cpu_pool *pool);
/* Run fn over nparts parts (clamped to [1, nworkers + 1]; NULL pool:
 * one part on the calling thread).  Returns when every part is done,
 * with the number of parts actually used. */
int tb_cpu_pool_run(tb_cpu_pool *pool, int nparts, tb_cpu_task_fn fn,
                    void *arg);

/* [*b, *e): part's share of n items, as even as possible. */
static inline void cpu_span(int64_t n, int part, int nparts, int64_t *b, int64_t *e)
{
    int64_t q = n / nparts, r = n % nparts;
    *b = part * q + (part < r ? part : r);
    *e = *b + q + (part < r ? 1 : 0);
}

/* Like cpu_span but with boundaries on multiples of `align` items (so
 * parts start on cache lines / sum blocks); the last part takes the
 * tail. */
static inline void cpu_span_aligned(int64_t n, int64_t align, int part,
                                    int nparts, int64_t *b, int64_t *e)
{
    int64_t units = (n + align - 1) / align;
    cpu_span(units, part, nparts, b, e);
    *b *= align;
    *e *= align;
    if (*b > n)
        *b = n;
    if (*e > n)
        *e = n;
}

#endif
