/* The normalization gradients' driver (norm_c.c), shared by the rows of
 * every level: the rows are split into NORM_BW_CHUNKS chunks, a number
 * fixed by the shape alone; chunk c of nch covers rows [c * rows / nch,
 * (c + 1) * rows / nch) and writes its dw (and db) partial sums to part
 * + c * np * D; the driver adds the chunks in order, so dw and db are
 * the same bits at any thread count. */
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
    void *part; /* nch * np * D of the dtype */
} tb_cpu_norm_bw_job;

/* Runs layer_norm_backward or rms_norm_backward in dt with chunks (a
 * tb_cpu_task_fn over the chunks: part and nparts of
 * tb_cpu_norm_bw_job's nch). */
int tb_cpu_norm_bw_run(void *ctx, tb_op_id id, tb_dtype dt,
                       const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_cpu_task_fn chunks);

#endif
