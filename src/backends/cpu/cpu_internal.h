/* What kernel files outside cpu.c may use of a cpu backend instance.
 *
 * Kernels in create.c, optim.c and linalg.c (and their per-ISA files) are
 * called with the instance as ctx, like cpu.c's own.  They ask it for the
 * ISA level it was created for, count their launches (tb_cpu_count_launch,
 * the one counter), and split work over its thread pool.  Which entry
 * point runs, and its name, come from the registry (kreg.h). */
#ifndef TB_BACKENDS_CPU_CPU_INTERNAL_H
#define TB_BACKENDS_CPU_CPU_INTERNAL_H

#include <stdint.h>

#include "../backend.h"

/* The instance's ISA level (TB_ISA_SCALAR/AVX2/AVX512, isa.h); with a
 * NULL ctx, TB_ISA_SCALAR. */
int tb_cpu_isa(const void *ctx);
/* Add one to the instance's kernel-launch counter (NULL: nothing). */
void tb_cpu_count_launch(void *ctx);

typedef void (*tb_cpu_task_fn)(void *arg, int part, int nparts);
/* Run fn(arg, part, nparts) for every part of a job of `work` elements
 * in `items` independent pieces: on the calling thread alone below the
 * backend's work threshold or with threads=1, else split over the pool.
 * Returns when every part is done. */
void tb_cpu_parallel(void *ctx, int64_t work, int64_t items,
                     tb_cpu_task_fn fn, void *arg);
/* [*b, *e): part's share of n items, boundaries on multiples of align
 * (the last part takes the tail). */
void tb_cpu_span(int64_t n, int64_t align, int part, int nparts,
                 int64_t *b, int64_t *e);

#endif
