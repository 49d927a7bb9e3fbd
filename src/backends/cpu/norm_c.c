/* layer_norm and rms_norm, the portable C rows (f32, f64): per row of
 * the last dim, two passes summed in double (mean, then the squared
 * deviations and their sum: the corrected two-pass form, no
 * cancellation of E[x^2] - E[x]^2; a row far from zero mean keeps its
 * accuracy), then the scale; rows
 * split over the instance's threads.  Their gradients likewise, with dw
 * and db summed per chunk of rows and the chunks added in order
 * (norm.h's driver, tb_cpu_norm_bw_run, here for every level's rows). */
#include <math.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "../../ops/half.h"
#include "cpu_internal.h"
#include "kreg.h"
#include "norm.h"

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    int64_t rows, D;
    double eps;
    bool rms;
} norm_job;

/* A row's mean (0 for rms_norm) and sum of squared deviations, in
 * double by the corrected two-pass form: the mean, then the squared
 * deviations and their sum c, which moves the mean by c / D and takes
 * c^2 / D off the squares (the first mean is off by about D ulps of |x|:
 * large beside the deviations of a row far from 0). */
#define NORM_STATS(T, name)                                               \
    static void name(const T *xr, int64_t D, bool rms, double *mean,      \
                     double *ss)                                          \
    {                                                                     \
        double m = 0, s = 0, c = 0;                                       \
        if (!rms) {                                                       \
            for (int64_t k = 0; k < D; k++)                               \
                m += xr[k];                                               \
            m /= (double)D;                                               \
        }                                                                 \
        for (int64_t k = 0; k < D; k++) {                                 \
            const double d = (double)xr[k] - m;                           \
            s += d * d;                                                   \
            c += d;                                                       \
        }                                                                 \
        if (!rms) {                                                       \
            m += c / (double)D;                                           \
            s = fmax(s - c * c / (double)D, 0);                           \
        }                                                                 \
        *mean = m;                                                        \
        *ss = s;                                                          \
    }
NORM_STATS(float, norm_stats_f32)
NORM_STATS(double, norm_stats_f64)
#define norm_stats(x, D, rms, m, s)                                       \
    _Generic((x), const float *: norm_stats_f32,                         \
             const double *: norm_stats_f64)(x, D, rms, m, s)

#define NORM_ROWS(T, name)                                                \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        const norm_job *j = arg;                                          \
        const T *x = j->in[0].data, *w = j->in[1].data;                   \
        const T *b = j->rms ? NULL : j->in[2].data;                       \
        T *o = j->out[0].data;                                            \
        const double eps = (double)(T)j->eps, n = (double)j->D;           \
        int64_t r0, r1;                                                   \
        tb_cpu_span(j->rows, 1, part, nparts, &r0, &r1);                  \
        for (int64_t r = r0; r < r1; r++) {                               \
            const T *xr = x + r * j->D;                                   \
            double mean = 0, ss = 0;                                      \
            norm_stats(xr, j->D, j->rms, &mean, &ss);                     \
            const double inv = 1 / sqrt(ss / n + eps);                    \
            T *orow = o + r * j->D;                                       \
            for (int64_t k = 0; k < j->D; k++)                            \
                orow[k] = (T)(((double)xr[k] - mean) * inv * w[k] +       \
                              (b ? (double)b[k] : 0));                    \
        }                                                                 \
    }
NORM_ROWS(float, norm_rows_f32)
NORM_ROWS(double, norm_rows_f64)

static int norm_run(void *ctx, tb_op_id id, tb_dtype dt, const tb_tensor *in,
                    tb_tensor *out, const tb_params *p)
{
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    norm_job j = {in, out, 0, in[0].shape[in[0].ndim - 1],
                  tb_cpu_param(p, id, 0), id == TB_OP_rms_norm};
    j.rows = j.D ? tb_tensor_numel(&in[0]) / j.D : 0;
    tb_cpu_parallel(ctx, j.rows * j.D * 4, j.rows,
                    dt == TB_F32 ? norm_rows_f32 : norm_rows_f64, &j);
    return 0;
}

#define NORM_BW_ROWS(T, name)                                             \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        const tb_cpu_norm_bw_job *j = arg;                                \
        const T *g = j->in[0].data, *x = j->in[1].data;                   \
        const T *w = j->in[2].data;                                       \
        T *dx = j->out[0].data;                                           \
        const int64_t D = j->D;                                           \
        const T eps = (T)j->eps, n = (T)D;                                \
        const bool rms = j->np == 1;                                      \
        int64_t c0, c1;                                                   \
        tb_cpu_span(j->nch, 1, part, nparts, &c0, &c1);                   \
        for (int64_t c = c0; c < c1; c++) {                               \
            T *pw = (T *)j->part + c * j->np * D;                         \
            T *pb = rms ? NULL : pw + D;                                  \
            for (int64_t k = 0; k < j->np * D; k++)                       \
                pw[k] = 0;                                                \
            for (int64_t r = c * j->rows / j->nch;                        \
                 r < (c + 1) * j->rows / j->nch; r++) {                   \
                const T *xr = x + r * D, *gr = g + r * D;                 \
                double dmean, dss;                                        \
                norm_stats(xr, D, rms, &dmean, &dss);                     \
                const T mean = (T)dmean, ss = (T)dss;                     \
                T sg = 0, sgx = 0;                                        \
                const T rstd = (T)1 / (T)sqrt((double)(ss / n + eps));    \
                for (int64_t k = 0; k < D; k++) {                         \
                    const T xh = (xr[k] - mean) * rstd, gh = gr[k] * w[k]; \
                    sg += gh;                                             \
                    sgx += gh * xh;                                       \
                    pw[k] += gr[k] * xh;                                  \
                    if (pb)                                               \
                        pb[k] += gr[k];                                   \
                }                                                         \
                const T a = rms ? (T)0 : sg / n, b = sgx / n;             \
                T *dr = dx + r * D;                                       \
                for (int64_t k = 0; k < D; k++) {                         \
                    const T xh = (xr[k] - mean) * rstd;                   \
                    dr[k] = rstd * (gr[k] * w[k] - a - xh * b);           \
                }                                                         \
            }                                                             \
        }                                                                 \
    }                                                                     \
    /* dw (db): the chunks' partial sums in chunk order, 0 + the first \
     * + the second ... (column by column, so it vectorizes) */         \
    static void name##_sum(const tb_cpu_norm_bw_job *j, T *o, int i)      \
    {                                                                     \
        for (int64_t k = 0; k < j->D; k++)                                \
            o[k] = 0;                                                     \
        for (int64_t c = 0; c < j->nch; c++) {                            \
            const T *pc = (const T *)j->part + (c * j->np + i) * j->D;    \
            for (int64_t k = 0; k < j->D; k++)                            \
                o[k] += pc[k];                                            \
        }                                                                 \
    }
NORM_BW_ROWS(float, norm_bw_f32)
NORM_BW_ROWS(double, norm_bw_f64)

int tb_cpu_norm_bw_run(void *ctx, tb_op_id id, tb_dtype dt,
                       const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_cpu_task_fn chunks,
                       tb_cpu_norm_bw_sum_fn sum)
{
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    tb_cpu_norm_bw_job j = {in, out, 0, in[1].shape[in[1].ndim - 1], 0,
                            id == TB_OP_rms_norm_backward ? 1 : 2,
                            tb_cpu_param(p, id, 0), NULL, NULL};
    j.rows = j.D ? tb_tensor_numel(&in[1]) / j.D : 0;
    float *w32 = NULL; /* bf16, f16: w widened once for the loops */
    if (dt == TB_F32) {
        j.w32 = in[2].data;
    } else if (dt != TB_F64 && j.D > 0) {
        if (!(w32 = tb_alloc((size_t)j.D * sizeof *w32)))
            return TB_ENOMEM;
        const uint16_t *wh = in[2].data;
        for (int64_t k = 0; k < j.D; k++)
            w32[k] = dt == TB_BF16 ? tb_bf16_to_f32(wh[k])
                                   : tb_f16_to_f32(wh[k]);
        j.w32 = w32;
    }
    j.nch = (j.rows + NORM_BW_CHUNK_ROWS - 1) / NORM_BW_CHUNK_ROWS;
    if (j.nch > NORM_BW_CHUNKS)
        j.nch = NORM_BW_CHUNKS;
    const size_t es = dt == TB_F64 ? sizeof(double) : sizeof(float);
    if (j.nch > 0 && j.D > 0) {
        j.part = tb_alloc((size_t)(j.nch * j.np * j.D) * es);
        if (!j.part) {
            tb_free(w32);
            return TB_ENOMEM;
        }
        tb_cpu_parallel(ctx, j.rows * j.D * 4, j.nch, chunks, &j);
    }
    rc = 0;
    for (int i = 0; i < j.np && !rc; i++) {
        if (dt == TB_F64) {
            if (sum)
                sum(&j, i, out[1 + i].data);
            else
                norm_bw_f64_sum(&j, out[1 + i].data, i);
        } else if (dt == TB_F32) {
            if (sum)
                sum(&j, i, out[1 + i].data);
            else
                norm_bw_f32_sum(&j, out[1 + i].data, i);
        } else { /* bf16, f16: the f32 sums narrowed once */
            float *s = tb_alloc((size_t)(j.D ? j.D : 1) * sizeof *s);
            if (!s) {
                rc = TB_ENOMEM;
                break;
            }
            if (sum)
                sum(&j, i, s);
            else
                norm_bw_f32_sum(&j, s, i);
            uint16_t *o = out[1 + i].data;
            for (int64_t k = 0; k < j.D; k++)
                o[k] = dt == TB_BF16 ? tb_f32_to_bf16(s[k])
                                     : tb_f32_to_f16(s[k]);
            tb_free(s);
        }
    }
    tb_free(j.part);
    tb_free(w32);
    return rc;
}

static int norm_entry(void *ctx, tb_op_id id, tb_dtype dt,
                      const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    if (id == TB_OP_layer_norm_backward || id == TB_OP_rms_norm_backward)
        return tb_cpu_norm_bw_run(ctx, id, dt, in, out, p,
                                  dt == TB_F32 ? norm_bw_f32 : norm_bw_f64,
                                  NULL);
    return norm_run(ctx, id, dt, in, out, p);
}

/* This file's rows are the C ones (norm_avx2.c and f64_avx2.c,
 * f64_avx512.c define the others). */
#define NORM_DEF(op, dt, sfx, c) NORM_DEF_##sfx(op, dt)
#define NORM_DEF_avx512(op, dt)
#define NORM_DEF_avx2(op, dt)
#define NORM_DEF_c(op, dt)                                                \
    int TB_CPU_KFN(op, dt, c)(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p)         \
    {                                                                     \
        return norm_entry(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, p);   \
    }
TB_CPU_ROWS_NORM(NORM_DEF)
