/* The portable driver of bwd_simd.h. */
#include "bwd_simd.h"

#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "cpu_internal.h"
#include "ops_ext.h"

typedef struct bw_lsm_job {
    tb_cpu_bw_lsm_fn fn;
    const float *g, *y;
    float *dx;
    int64_t outer, len, inner;
} bw_lsm_job;

static void bw_lsm_task(void *argp, int part, int nparts)
{
    const bw_lsm_job *j = argp;
    int64_t b, e;
    tb_cpu_span(j->outer, 1, part, nparts, &b, &e);
    if (e > b)
        j->fn(j->g, j->y, j->dx, b, e, j->len, j->inner);
}

int tb_cpu_bw_lsm(void *ctx, int lv, const tb_tensor *in, tb_tensor *out,
                  const tb_params *p, tb_cpu_bw_lsm_fn fn)
{
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    int rc = tb_cpu_ext_begin(ctx, TB_OP_log_softmax_backward, TB_F32, in,
                              out, p);
    if (rc)
        return rc;
    int ax = 0;
    tb_axis_norm((int64_t)tb_cpu_ext_param(p, TB_OP_log_softmax_backward, 0),
                 in[0].ndim, &ax);
    bw_lsm_job j = {.fn = fn, .g = in[0].data, .y = in[1].data,
                    .dx = out->data, .outer = 1, .len = in[0].shape[ax],
                    .inner = 1};
    for (int d = 0; d < ax; d++)
        j.outer *= in[0].shape[d];
    for (int d = ax + 1; d < in[0].ndim; d++)
        j.inner *= in[0].shape[d];
    if (j.outer > 0 && j.len > 0 && j.inner > 0)
        tb_cpu_parallel(ctx, j.outer * j.len * j.inner * 4, j.outer,
                        bw_lsm_task, &j);
    return 0;
}
