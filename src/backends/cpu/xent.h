/* The frame of the cross_entropy rows (xent.c): one job per call, the
 * targets checked and turned into class numbers first, the rows split
 * over the instance's threads, each row computed by its level's row
 * function (xent_c.c's portable ones, xent_avx2.c's). */
#ifndef TB_BACKENDS_CPU_XENT_H
#define TB_BACKENDS_CPU_XENT_H

#include <stdint.h>

#include "../../ops/op.h"

typedef struct tb_cpu_xent_job tb_cpu_xent_job;
/* Row r of a job: its loss into loss[r] (forward) or its gradient into
 * dx's row r (backward). */
typedef void (*tb_cpu_xent_row_fn)(const tb_cpu_xent_job *j, int64_t r);

struct tb_cpu_xent_job {
    tb_dtype dt;
    int64_t N, C;
    const void *x; /* logits [N, C] */
    void *dx;      /* backward: dlogits [N, C] */
    int64_t *cls;  /* the N targets' classes */
    double *loss;  /* forward: the N rows' losses */
    double gn;     /* backward: g / N */
    tb_cpu_xent_row_fn row;
};

/* The entry point of every cross_entropy(_backward) row: the launch
 * counted and the operands checked (tb_cpu_begin_op), the targets
 * checked before any write, the rows run by `row` over the threads, the
 * forward's losses summed in row order (the same result at every thread
 * count). */
int tb_cpu_xent_run(void *ctx, tb_op_id id, tb_dtype dt,
                    const tb_tensor *in, tb_tensor *out, const tb_params *p,
                    tb_cpu_xent_row_fn row);

#endif
