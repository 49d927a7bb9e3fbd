/* The portable driver of bwd_simd.h. */
#include "bwd_simd.h"

#include <string.h>

#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "cpu_internal.h"

/* The outer lanes of log_softmax_backward (fn or fn64) or of the
 * broadcast of sum_backward and mean_backward (fnb, with scale). */
typedef struct bw_lsm_job {
    tb_cpu_bw_lsm_fn fn;     /* f32, or NULL */
    tb_cpu_bw_lsm64_fn fn64; /* f64, or NULL */
    tb_cpu_bw_bcast64_fn fnb; /* the broadcast, or NULL */
    tb_cpu_bw_bcast32_fn fnb32; /* the same in f32, or NULL */
    const void *g, *y;
    void *dx;
    int64_t outer, len, inner;
    double scale;
} bw_lsm_job;

static void bw_lsm_task(void *argp, int part, int nparts)
{
    const bw_lsm_job *j = argp;
    int64_t b, e;
    tb_cpu_span(j->outer, 1, part, nparts, &b, &e);
    if (j->fnb) /* no y; an empty span does nothing */
        j->fnb(j->g, j->dx, b, e, j->len, j->inner, j->scale);
    else if (j->fnb32)
        j->fnb32(j->g, j->dx, b, e, j->len, j->inner, (float)j->scale);
    else if (e > b && j->fn)
        j->fn(j->g, j->y, j->dx, b, e, j->len, j->inner);
    else if (e > b)
        j->fn64(j->g, j->y, j->dx, b, e, j->len, j->inner);
}

/* tb_cpu_bw_lsm's body for the dtype of the one fn given. */
static int bw_lsm_run(void *ctx, int lv, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_cpu_bw_lsm_fn fn,
                      tb_cpu_bw_lsm64_fn fn64)
{
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    int rc = tb_cpu_begin_op(ctx, TB_OP_log_softmax_backward,
                             fn ? TB_F32 : TB_F64, in, out, p);
    if (rc)
        return rc;
    int ax = 0;
    tb_axis_norm((int64_t)tb_cpu_param(p, TB_OP_log_softmax_backward, 0),
                 in[0].ndim, &ax);
    bw_lsm_job j = {.fn = fn, .fn64 = fn64, .g = in[0].data,
                    .y = in[1].data, .dx = out->data, .outer = 1,
                    .len = in[0].shape[ax], .inner = 1};
    for (int d = 0; d < ax; d++)
        j.outer *= in[0].shape[d];
    for (int d = ax + 1; d < in[0].ndim; d++)
        j.inner *= in[0].shape[d];
    if (j.outer > 0 && j.len > 0 && j.inner > 0)
        tb_cpu_parallel(ctx, j.outer * j.len * j.inner * 4, j.outer,
                        bw_lsm_task, &j);
    return 0;
}

int tb_cpu_bw_lsm(void *ctx, int lv, const tb_tensor *in, tb_tensor *out,
                  const tb_params *p, tb_cpu_bw_lsm_fn fn)
{
    return bw_lsm_run(ctx, lv, in, out, p, fn, NULL);
}

int tb_cpu_bw_lsm64(void *ctx, int lv, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p, tb_cpu_bw_lsm64_fn fn)
{
    return bw_lsm_run(ctx, lv, in, out, p, NULL, fn);
}

/* tb_cpu_bw_bcast64's and tb_cpu_bw_bcast32's body: one of fnb, fnb32 */
static int bw_bcast_run(void *ctx, int lv, tb_op_id id, const tb_tensor *in,
                        tb_tensor *out, const tb_params *p,
                        tb_cpu_bw_bcast64_fn fn, tb_cpu_bw_bcast32_fn fn32)
{
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    int rc = tb_cpu_begin_op(ctx, id, fn32 ? TB_F32 : TB_F64, in, out, p);
    if (rc)
        return rc;
    const tb_tensor *x = &in[1];
    bw_lsm_job j = {.fnb = fn, .fnb32 = fn32, .g = in[0].data,
                    .dx = out->data, .outer = 1,
                    .len = tb_tensor_numel(x), .inner = 1};
    if (p && tb_params_has(p, 0)) {
        int ax = 0;
        tb_axis_norm((int64_t)p->v[0], x->ndim, &ax);
        j.len = x->shape[ax];
        for (int d = 0; d < ax; d++)
            j.outer *= x->shape[d];
        for (int d = ax + 1; d < x->ndim; d++)
            j.inner *= x->shape[d];
    }
    /* f32: mean's scale is the float of 1 / len (exact in the double) */
    j.scale = id != TB_OP_mean_backward ? 1.0
              : fn32                    ? (double)(float)(1.0 / (double)j.len)
                                        : 1.0 / (double)j.len;
    if (j.outer > 0 && j.len > 0 && j.inner > 0)
        tb_cpu_parallel(ctx, j.outer * j.len * j.inner, j.outer, bw_lsm_task,
                        &j);
    return 0;
}

int tb_cpu_bw_bcast64(void *ctx, int lv, tb_op_id id, const tb_tensor *in,
                      tb_tensor *out, const tb_params *p,
                      tb_cpu_bw_bcast64_fn fn)
{
    return bw_bcast_run(ctx, lv, id, in, out, p, fn, NULL);
}

int tb_cpu_bw_bcast32(void *ctx, int lv, tb_op_id id, const tb_tensor *in,
                      tb_tensor *out, const tb_params *p,
                      tb_cpu_bw_bcast32_fn fn)
{
    return bw_bcast_run(ctx, lv, id, in, out, p, NULL, fn);
}

typedef struct bw_mp_job {
    tb_cpu_bw_mp2_fn fn;     /* f32, or NULL */
    tb_cpu_bw_mp2_64_fn fn64; /* f64, or NULL */
    const void *g, *x;
    void *dx;
    size_t esz;
    int64_t NC, H, W, OH, OW;
} bw_mp_job;

/* Planes [b, e) of a 2x2 tiling: fn (or fn64) on them. */
static void bw_mp_task(void *argp, int part, int nparts)
{
    const bw_mp_job *j = argp;
    int64_t b, e;
    tb_cpu_span(j->NC, 1, part, nparts, &b, &e);
    if (e <= b)
        return;
    const size_t xo = (size_t)(b * j->H * j->W) * j->esz;
    const size_t go = (size_t)(b * j->OH * j->OW) * j->esz;
    const void *g = (const char *)j->g + go, *x = (const char *)j->x + xo;
    void *dx = (char *)j->dx + xo;
    if (j->fn)
        j->fn(g, x, dx, e - b, j->H, j->W, j->OH, j->OW);
    else
        j->fn64(g, x, dx, e - b, j->H, j->W, j->OH, j->OW);
}

/* tb_cpu_bw_max_pool's (is_max) or tb_cpu_bw_avg_pool's body for the
 * dtype of the one fn given. */
static int bw_pool_run(void *ctx, int lv, bool is_max, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p,
                       tb_cpu_bw_mp2_fn fn, tb_cpu_bw_mp2_64_fn fn64)
{
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    const tb_op_id id =
        is_max ? TB_OP_max_pool2d_backward : TB_OP_avg_pool2d_backward;
    const tb_dtype dt = fn ? TB_F32 : TB_F64;
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    const int64_t k = (int64_t)tb_cpu_param(p, id, 0);
    const int64_t st = p && tb_params_has(p, 1) ? (int64_t)p->v[1] : k;
    const int64_t pad = (int64_t)tb_cpu_param(p, id, 2);
    bw_mp_job j = {.fn = fn, .fn64 = fn64, .g = in[0].data,
                   .x = in[1].data, .dx = out->data,
                   .esz = tb_dtype_size(dt),
                   .NC = in[1].shape[0] * in[1].shape[1],
                   .H = in[1].shape[2], .W = in[1].shape[3],
                   .OH = in[0].shape[2], .OW = in[0].shape[3]};
    if (k != 2 || st != 2 || pad != 0) {
        if (fn)
            tb_cpu_bw_pool_f32(is_max, j.g, j.x, j.dx, j.NC, j.H, j.W,
                               j.OH, j.OW, k, st, pad);
        else
            tb_cpu_bw_pool_f64(is_max, j.g, j.x, j.dx, j.NC, j.H, j.W, j.OH,
                               j.OW, k, st, pad);
        return 0;
    }
    if (j.NC > 0 && j.H > 0 && j.W > 0)
        tb_cpu_parallel(ctx, j.NC * j.H * j.W * 8, j.NC, bw_mp_task, &j);
    return 0;
}

int tb_cpu_bw_max_pool(void *ctx, int lv, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p,
                       tb_cpu_bw_mp2_fn fn)
{
    return bw_pool_run(ctx, lv, true, in, out, p, fn, NULL);
}

int tb_cpu_bw_max_pool64(void *ctx, int lv, const tb_tensor *in,
                         tb_tensor *out, const tb_params *p,
                         tb_cpu_bw_mp2_64_fn fn)
{
    return bw_pool_run(ctx, lv, true, in, out, p, NULL, fn);
}

int tb_cpu_bw_avg_pool(void *ctx, int lv, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p,
                       tb_cpu_bw_mp2_fn fn)
{
    return bw_pool_run(ctx, lv, false, in, out, p, fn, NULL);
}

int tb_cpu_bw_avg_pool64(void *ctx, int lv, const tb_tensor *in,
                         tb_tensor *out, const tb_params *p,
                         tb_cpu_bw_mp2_64_fn fn)
{
    return bw_pool_run(ctx, lv, false, in, out, p, NULL, fn);
}

/* ---- add/sub/mul/div_backward ---- */

typedef struct bw_bin_job {
    const tb_cpu_bw_bin_loops *lp;
    int mode;
    const char *g, *f, *v; /* flat: f = a, v = b */
    char *df, *dv;         /* flat: da, db */
    size_t esz;
    int64_t n, R, C, strip;
} bw_bin_job;

static void bw_flat_task(void *argp, int part, int nparts)
{
    const bw_bin_job *j = argp;
    int64_t b, e;
    tb_cpu_span(j->n, 16, part, nparts, &b, &e);
    const size_t o = (size_t)b * j->esz;
    if (e > b)
        j->lp->flat(j->mode, j->g + o, j->f + o, j->v + o, j->df + o,
                    j->dv + o, e - b);
}

/* Strips of j->strip columns, each a part's whole. */
static void bw_cols_task(void *argp, int part, int nparts)
{
    const bw_bin_job *j = argp;
    int64_t b, e;
    tb_cpu_span((j->C + j->strip - 1) / j->strip, 1, part, nparts, &b, &e);
    if (e > b)
        j->lp->cols(j->mode, j->g, j->f, j->v, j->df, j->dv, j->R, j->C,
                    b * j->strip,
                    e * j->strip < j->C ? e * j->strip : j->C);
}

/* v's elements when v (right-aligned under g's shape) is g's trailing
 * dims with ones (or nothing) before them: a row vector broadcast over
 * g's leading dims; else 0. */
static int64_t bw_row_len(const tb_tensor *g, const tb_tensor *v)
{
    int64_t len = 1;
    int d = g->ndim - 1, e = v->ndim - 1;
    for (; d >= 0 && e >= 0 && v->shape[e] == g->shape[d]; d--, e--)
        len *= g->shape[d];
    for (; e >= 0; e--)
        if (v->shape[e] != 1)
            return 0;
    return len;
}

int tb_cpu_bw_binary(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                     const tb_tensor *in, tb_tensor *out,
                     const tb_params *p, const tb_cpu_bw_bin_loops *lp)
{
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    const int64_t n = tb_tensor_numel(&in[0]);
    const int64_t na = tb_tensor_numel(&in[1]), nb = tb_tensor_numel(&in[2]);
    const int sub = id == TB_OP_sub_backward;
    bw_bin_job j = {.lp = lp, .esz = tb_dtype_size(dt), .n = n,
                    .g = in[0].data};
    j.mode = id == TB_OP_add_backward   ? TB_CPU_BWB_ADD
             : sub                      ? TB_CPU_BWB_SUB_A
             : id == TB_OP_mul_backward ? TB_CPU_BWB_MUL
                                        : TB_CPU_BWB_DIV;
    if (n > 0 && na == n && nb == n) {
        j.f = in[1].data, j.v = in[2].data;
        j.df = out[0].data, j.dv = out[1].data;
        tb_cpu_parallel(ctx, n * (j.mode >= TB_CPU_BWB_MUL ? 4 : 2),
                        (n + 15) / 16, bw_flat_task, &j);
        return 0;
    }
    /* a row vector: b (any op), or a (but for div) */
    const int last = in[0].ndim > 0 ? (int)in[0].shape[in[0].ndim - 1] : 1;
    int vb = -1;
    if (n > 0 && last > 1 && na == n && bw_row_len(&in[0], &in[2]) == nb &&
        nb >= lp->lanes)
        vb = 1;
    else if (n > 0 && last > 1 && nb == n && j.mode != TB_CPU_BWB_DIV &&
             bw_row_len(&in[0], &in[1]) == na && na >= lp->lanes)
        vb = 0;
    if (vb < 0) {
        tb_cpu_bw_binary_c(id, dt, in, out);
        return 0;
    }
    if (vb == 0 && sub)
        j.mode = TB_CPU_BWB_SUB_B;
    j.f = in[vb ? 1 : 2].data, j.v = in[vb ? 2 : 1].data;
    j.df = out[vb ? 0 : 1].data, j.dv = out[vb ? 1 : 0].data;
    j.C = vb ? nb : na;
    j.R = n / j.C;
    j.strip = 4 * lp->lanes;
    tb_cpu_parallel(ctx, n * (j.mode >= TB_CPU_BWB_MUL ? 4 : 2),
                    (j.C + j.strip - 1) / j.strip, bw_cols_task, &j);
    return 0;
}
