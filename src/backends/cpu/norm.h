/* The normalization gradients' driver (norm_c.c), shared by the rows of
 * every level: the rows are split into NORM_BW_CHUNKS chunks, a number
 * fixed by the shape alone; chunk c of nch covers rows [c * rows / nch,
 * (c + 1) * rows / nch) and writes its dw (and db) partial sums to part
 * + c * np * D; the driver adds the chunks in order, so dw and db are
 * the same bits at any thread count.  bf16/f16 (half_part.c's fused
 * path): g, x, w and dx of the dtype, the partial sums in f32, dw and db
 * narrowed once from their f32 sums. */
#ifndef TB_BACKENDS_CPU_NORM_H
#define TB_BACKENDS_CPU_NORM_H

#include "cpu_internal.h"

#define NORM_BW_CHUNKS 64

typedef struct {
    const tb_tensor *in; /* g, x, w */
    tb_tensor *out;      /* dx, dw[, db] */
    int64_t rows, D, nch;
    int np; /* partial sums per chunk: 2 (dw, db) or 1 (dw) */
    double eps;
    void *part; /* nch * np * D of the dtype (f32 for bf16/f16) */
} tb_cpu_norm_bw_job;

/* Runs layer_norm_backward or rms_norm_backward in dt with chunks (a
 * tb_cpu_task_fn over the chunks: part and nparts of
 * tb_cpu_norm_bw_job's nch). */
int tb_cpu_norm_bw_run(void *ctx, tb_op_id id, tb_dtype dt,
                       const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_cpu_task_fn chunks);

/* The chunks of norm_avx512.c's rows for dt (f32, bf16, f16): g, x, w
 * of dt widened in registers, dx narrowed as stored. */
tb_cpu_task_fn tb_cpu_norm_bw_chunks_avx512(tb_dtype dt);

#endif
