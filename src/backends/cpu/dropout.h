/* The frame of the dropout rows (dropout_c.c): the launch counted and
 * the operands checked, the parameters read (the stream's key, the keep
 * threshold, s = 1 / (1 - p) rounded in the dtype), the elements split
 * over the instance's threads by index (64-element boundaries), each
 * part written by its level's chunk function (dropout_c.c's portable
 * loop, dropout_simd.h's vector ones), so every row gives the same bits
 * at every thread count. */
#ifndef TB_BACKENDS_CPU_DROPOUT_H
#define TB_BACKENDS_CPU_DROPOUT_H

#include <stdint.h>

#include "../backend.h"

/* o[i] = x[i] * (tb_rand_keep(key, i, thr) ? s : 0) for i in [b, e), in
 * the dtype (float or double; s the dtype's value, exact in double). */
typedef void (*tb_cpu_drop_fn)(void *o, const void *x, int64_t b,
                               int64_t e, uint64_t key, uint64_t thr,
                               double s);

/* The entry point of every dropout row of level lv (TB_EUNSUPPORTED
 * when the instance is below it), fn its chunk loop for dtype dt. */
int tb_cpu_dropout_run(void *ctx, int lv, tb_dtype dt, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p,
                       tb_cpu_drop_fn fn);

#endif
