/* batch_norm, group_norm and their gradients: the driver (bnorm_c.c)
 * that the rows of every level share.  It reads the shape and the
 * parameters into a job and splits its parts over the instance's
 * threads: batch_norm's (and its gradient's) channels, group_norm's (and
 * its gradient's) (sample, group) pairs; group_norm_backward's dw and db
 * are the pairs' channel sums (part) added over the samples in order
 * afterwards, so every result is the same bits at any thread count. */
#ifndef TB_BACKENDS_CPU_BNORM_H
#define TB_BACKENDS_CPU_BNORM_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu_internal.h"

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    int64_t N, C, S, G; /* x [N, C, S...]; G groups (group_norm) */
    bool training;
    double momentum, eps; /* eps as the dtype holds it */
    double *part; /* group_norm_backward: [N, C, 2] sums of g * xh, g */
} tb_cpu_bnorm_job;

/* A level's parts (tb_cpu_task_fn over a tb_cpu_bnorm_job): batch_norm's
 * and batch_norm_backward's over channels, group_norm's and
 * group_norm_backward's over (sample, group) pairs. */
typedef struct {
    tb_cpu_task_fn batch_norm, group_norm, batch_norm_bw, group_norm_bw;
} tb_cpu_bnorm_parts;

/* Runs op id in dt with parts (NULL: the portable C rows'); 0 or a TB_E*
 * code. */
int tb_cpu_bnorm_run(void *ctx, tb_op_id id, tb_dtype dt,
                     const tb_tensor *in, tb_tensor *out, const tb_params *p,
                     const tb_cpu_bnorm_parts *parts);

/* The avx512 level's parts on bf16 or f16 (dt) values (bnorm_avx512.c):
 * its f32 parts' operations on values widened as loaded, each result
 * narrowed once (the bits of the f32 row on the widened tensors, its
 * results narrowed); group_norm, batch_norm_backward and
 * group_norm_backward only (batch_norm: NULL). */
const tb_cpu_bnorm_parts *tb_cpu_bnorm_parts16_avx512(tb_dtype dt);
/* bf16's at the avx512bf16 level (bnorm_avx512bf16.c): the same bits,
 * narrowed by vcvtne2ps2bf16 */
const tb_cpu_bnorm_parts *tb_cpu_bnorm_parts_bf16_avx512bf16(void);

#endif
