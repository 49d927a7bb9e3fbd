/* batch_norm, group_norm and their gradients, the portable C rows (f32,
 * f64).  Each statistic is summed in double by one thread, in element
 * order (two passes: the mean, then the squared deviations), so the
 * results are the same bits at any thread count; batch_norm's (and its
 * gradient's) channels are split over the instance's threads, group_norm's
 * (and its gradient's) (sample, group) pairs.  group_norm_backward's dw
 * and db: each pair writes its channels' sums (double) to scratch, added
 * over the samples in order afterwards.  tb_cpu_bnorm_run (bnorm.h) is
 * also the driver of the SIMD rows of f32 and f64 (bnorm_simd_impl.h),
 * which bring their own parts. */
#include <math.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "../../ops/half.h"
#include "bnorm.h"
#include "cpu_internal.h"
#include "kreg.h"


/* Mean and the sum of squared deviations of the n values at x + k *
 * stride + j for k < nb, j < len (n = nb * len), in double. */
#define BNORM_STATS(T, name)                                              \
    static double name(const T *x, int64_t nb, int64_t stride,           \
                       int64_t len, double *ss)                           \
    {                                                                     \
        double s = 0, q = 0;                                              \
        for (int64_t k = 0; k < nb; k++)                                  \
            for (int64_t j = 0; j < len; j++)                             \
                s += x[k * stride + j];                                   \
        const double n = (double)(nb * len), m = n > 0 ? s / n : 0;       \
        for (int64_t k = 0; k < nb; k++)                                  \
            for (int64_t j = 0; j < len; j++) {                           \
                const double d = x[k * stride + j] - m;                   \
                q += d * d;                                               \
            }                                                             \
        *ss = q;                                                          \
        return m;                                                         \
    }
BNORM_STATS(float, bnorm_stats_f32)
BNORM_STATS(double, bnorm_stats_f64)

/* batch_norm over channels [c0, c1): channel c's values are x[(i * C +
 * c) * S + k]; running is read before it is written (the output may be
 * the input's buffer). */
#define BATCH_NORM_CH(T, name, stats)                                     \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        const tb_cpu_bnorm_job *j = arg;                                         \
        const T *x = j->in[0].data, *w = j->in[1].data;                   \
        const T *b = j->in[2].data, *run = j->in[3].data;                 \
        T *y = j->out[0].data, *ro = j->out[1].data;                      \
        const int64_t C = j->C, S = j->S;                                 \
        int64_t c0, c1;                                                   \
        tb_cpu_span(C, 1, part, nparts, &c0, &c1);                        \
        for (int64_t c = c0; c < c1; c++) {                               \
            double rm = run[c], rv = run[C + c], mean = rm, var = rv;     \
            if (j->training) {                                            \
                const double n = (double)(j->N * S);                      \
                double ss;                                                \
                mean = stats(x + c * S, j->N, C * S, S, &ss);             \
                var = ss / n;                                             \
                rm = (1 - j->momentum) * rm + j->momentum * mean;         \
                rv = (1 - j->momentum) * rv + j->momentum * (ss / (n - 1)); \
            }                                                             \
            const double sc = w[c] / sqrt(var + j->eps);                  \
            for (int64_t i = 0; i < j->N; i++) {                          \
                const T *xr = x + (i * C + c) * S;                        \
                T *yr = y + (i * C + c) * S;                              \
                for (int64_t k = 0; k < S; k++)                           \
                    yr[k] = (T)((xr[k] - mean) * sc + b[c]);              \
            }                                                             \
            ro[c] = (T)rm;                                                \
            ro[C + c] = (T)rv;                                            \
        }                                                                 \
    }
BATCH_NORM_CH(float, batch_norm_f32, bnorm_stats_f32)
BATCH_NORM_CH(double, batch_norm_f64, bnorm_stats_f64)

/* group_norm over (sample, group) pairs [r0, r1): pair r's C / G * S
 * values are contiguous at x + r * len. */
#define GROUP_NORM_RG(T, name, stats)                                     \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        const tb_cpu_bnorm_job *j = arg;                                         \
        const T *x = j->in[0].data, *w = j->in[1].data;                   \
        const T *b = j->in[2].data;                                       \
        T *y = j->out[0].data;                                            \
        const int64_t cg = j->C / j->G, S = j->S, len = cg * S;           \
        int64_t r0, r1;                                                   \
        tb_cpu_span(j->N * j->G, 1, part, nparts, &r0, &r1);              \
        for (int64_t r = r0; r < r1; r++) {                               \
            double ss;                                                    \
            const double mean = stats(x + r * len, 1, 0, len, &ss);       \
            const double rstd = 1 / sqrt(ss / (double)len + j->eps);      \
            for (int64_t ch = 0; ch < cg; ch++) {                         \
                const int64_t c = (r % j->G) * cg + ch;                   \
                const double sc = rstd * w[c];                            \
                const T *xr = x + r * len + ch * S;                       \
                T *yr = y + r * len + ch * S;                             \
                for (int64_t k = 0; k < S; k++)                           \
                    yr[k] = (T)((xr[k] - mean) * sc + b[c]);              \
            }                                                             \
        }                                                                 \
    }
GROUP_NORM_RG(float, group_norm_f32, bnorm_stats_f32)
GROUP_NORM_RG(double, group_norm_f64, bnorm_stats_f64)

/* batch_norm_backward over channels [c0, c1): the channel's statistics,
 * then its sums of g and g * xh (in double, element order), then dx. */
#define BATCH_NORM_BW_CH(T, name, stats)                                  \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        const tb_cpu_bnorm_job *j = arg;                                         \
        const T *g = j->in[0].data, *x = j->in[1].data;                   \
        const T *w = j->in[2].data;                                       \
        T *dx = j->out[0].data, *dw = j->out[1].data;                     \
        T *db = j->out[2].data;                                           \
        const int64_t C = j->C, S = j->S;                                 \
        const double n = (double)(j->N * S);                              \
        int64_t c0, c1;                                                   \
        tb_cpu_span(C, 1, part, nparts, &c0, &c1);                        \
        for (int64_t c = c0; c < c1; c++) {                               \
            double ss, sg = 0, sgx = 0;                                   \
            const double mean = stats(x + c * S, j->N, C * S, S, &ss);    \
            const double rstd = 1 / sqrt((n > 0 ? ss / n : 0) + j->eps);  \
            for (int64_t i = 0; i < j->N; i++) {                          \
                const int64_t o = (i * C + c) * S;                        \
                for (int64_t k = 0; k < S; k++) {                         \
                    sg += g[o + k];                                       \
                    sgx += g[o + k] * ((x[o + k] - mean) * rstd);         \
                }                                                         \
            }                                                             \
            const double wr = w[c] * rstd, a = sg / n, b = sgx / n;       \
            for (int64_t i = 0; i < j->N; i++) {                          \
                const int64_t o = (i * C + c) * S;                        \
                for (int64_t k = 0; k < S; k++) {                         \
                    const double xh = (x[o + k] - mean) * rstd;           \
                    dx[o + k] = (T)(wr * (g[o + k] - a - xh * b));        \
                }                                                         \
            }                                                             \
            dw[c] = (T)sgx;                                               \
            db[c] = (T)sg;                                                \
        }                                                                 \
    }
BATCH_NORM_BW_CH(float, batch_norm_bw_f32, bnorm_stats_f32)
BATCH_NORM_BW_CH(double, batch_norm_bw_f64, bnorm_stats_f64)

/* group_norm_backward's dw, db: the pairs' channel sums (part) added
 * over the samples in order, stored in dt. */
static void group_norm_bw_sum(const tb_cpu_bnorm_job *j, tb_dtype dt)
{
    for (int64_t c = 0; c < j->C; c++) {
        double sw = 0, sb = 0;
        for (int64_t i = 0; i < j->N; i++) {
            sw += j->part[(i * j->C + c) * 2];
            sb += j->part[(i * j->C + c) * 2 + 1];
        }
        if (dt == TB_F32) {
            ((float *)j->out[1].data)[c] = (float)sw;
            ((float *)j->out[2].data)[c] = (float)sb;
        } else if (dt == TB_BF16 || dt == TB_F16) { /* f32's, narrowed */
            uint16_t *dw = j->out[1].data, *db = j->out[2].data;
            dw[c] = dt == TB_BF16 ? tb_f32_to_bf16((float)sw)
                                  : tb_f32_to_f16((float)sw);
            db[c] = dt == TB_BF16 ? tb_f32_to_bf16((float)sb)
                                  : tb_f32_to_f16((float)sb);
        } else {
            ((double *)j->out[1].data)[c] = sw;
            ((double *)j->out[2].data)[c] = sb;
        }
    }
}

/* group_norm_backward over (sample, group) pairs [r0, r1): the pair's
 * statistics, its channels' sums of g * xh and g into part, the group's
 * sums of gh = g * w and gh * xh (double, element order), then dx. */
#define GROUP_NORM_BW_RG(T, name, stats)                                  \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        const tb_cpu_bnorm_job *j = arg;                                         \
        const T *g = j->in[0].data, *x = j->in[1].data;                   \
        const T *w = j->in[2].data;                                       \
        T *dx = j->out[0].data;                                           \
        const int64_t cg = j->C / j->G, S = j->S, len = cg * S;           \
        int64_t r0, r1;                                                   \
        tb_cpu_span(j->N * j->G, 1, part, nparts, &r0, &r1);              \
        for (int64_t r = r0; r < r1; r++) {                               \
            double ss, sgh = 0, sghx = 0;                                 \
            const double mean = stats(x + r * len, 1, 0, len, &ss);       \
            const double rstd = 1 / sqrt(ss / (double)len + j->eps);      \
            const int64_t c0 = (r % j->G) * cg;                           \
            double *pp = j->part + (r / j->G * j->C + c0) * 2;            \
            for (int64_t ch = 0; ch < cg; ch++) {                         \
                const T *gr = g + r * len + ch * S;                       \
                const T *xr = x + r * len + ch * S;                       \
                double sgx = 0, sg = 0;                                   \
                for (int64_t k = 0; k < S; k++) {                         \
                    sgx += gr[k] * ((xr[k] - mean) * rstd);               \
                    sg += gr[k];                                          \
                }                                                         \
                pp[2 * ch] = sgx;                                         \
                pp[2 * ch + 1] = sg;                                      \
                sgh += sg * w[c0 + ch];                                   \
                sghx += sgx * w[c0 + ch];                                 \
            }                                                             \
            const double a = sgh / (double)len, b = sghx / (double)len;   \
            for (int64_t ch = 0; ch < cg; ch++) {                         \
                const double wc = w[c0 + ch];                             \
                const T *gr = g + r * len + ch * S;                       \
                const T *xr = x + r * len + ch * S;                       \
                T *dr = dx + r * len + ch * S;                            \
                for (int64_t k = 0; k < S; k++) {                         \
                    const double xh = (xr[k] - mean) * rstd;              \
                    dr[k] = (T)(rstd * (gr[k] * wc - a - xh * b));        \
                }                                                         \
            }                                                             \
        }                                                                 \
    }
GROUP_NORM_BW_RG(float, group_norm_bw_f32, bnorm_stats_f32)
GROUP_NORM_BW_RG(double, group_norm_bw_f64, bnorm_stats_f64)

int tb_cpu_bnorm_run(void *ctx, tb_op_id id, tb_dtype dt,
                     const tb_tensor *in, tb_tensor *out, const tb_params *p,
                     const tb_cpu_bnorm_parts *parts)
{
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    const bool bn = id == TB_OP_batch_norm;
    const bool gn = id == TB_OP_group_norm || id == TB_OP_group_norm_backward;
    const int xi = id == TB_OP_batch_norm_backward ||
                   id == TB_OP_group_norm_backward; /* g, x, w */
    const tb_tensor *x = &in[xi];
    tb_cpu_bnorm_job j = {in, out, x->shape[0], x->shape[1], 1, 1, false, 0,
                   tb_cpu_param(p, id, bn ? 2 : gn), NULL};
    for (int d = 2; d < x->ndim; d++)
        j.S *= x->shape[d];
    if (dt != TB_F64) /* (bf16, f16: the f32 parts' eps) */
        j.eps = (float)j.eps;
    const int64_t work = j.N * j.C * j.S * 4;
    if (gn)
        j.G = (int64_t)tb_cpu_param(p, id, 0);
    if (id == TB_OP_group_norm_backward) { /* pairs, then dw and db */
        j.part = tb_alloc((size_t)(j.N * j.C * 2) * sizeof *j.part);
        if (!j.part)
            return TB_ENOMEM;
        tb_cpu_parallel(ctx, work, j.N * j.G,
                        parts ? parts->group_norm_bw
                        : dt == TB_F32 ? group_norm_bw_f32 : group_norm_bw_f64,
                        &j);
        group_norm_bw_sum(&j, dt);
        tb_free(j.part);
    } else if (xi) {
        tb_cpu_parallel(ctx, work, j.C,
                        parts ? parts->batch_norm_bw
                        : dt == TB_F32 ? batch_norm_bw_f32 : batch_norm_bw_f64,
                        &j);
    } else if (bn) {
        j.training = tb_cpu_param(p, id, 0) != 0;
        j.momentum = tb_cpu_param(p, id, 1);
        tb_cpu_parallel(ctx, work, j.C,
                        parts ? parts->batch_norm
                        : dt == TB_F32 ? batch_norm_f32 : batch_norm_f64,
                        &j);
    } else {
        if (j.C > 0 && j.S > 0)
            tb_cpu_parallel(ctx, work, j.N * j.G,
                            parts ? parts->group_norm
                            : dt == TB_F32 ? group_norm_f32
                                           : group_norm_f64,
                            &j);
    }
    return 0;
}

#define BNORM_DEF(op, dt, sfx, c) BNORM_DEF_##sfx(op, dt)
#define BNORM_DEF_avx512(op, dt) /* bnorm_avx512.c's, bnorm_avx2.c's */
#define BNORM_DEF_avx2(op, dt)
#define BNORM_DEF_c(op, dt)                                               \
    int TB_CPU_KFN(op, dt, c)(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p)         \
    {                                                                     \
        return tb_cpu_bnorm_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, \
                                p, NULL);                                 \
    }
TB_CPU_ROWS_BNORM(BNORM_DEF)
