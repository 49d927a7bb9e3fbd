/* batch_norm, group_norm and their gradients, f64's SIMD rows (AVX2: 4
 * lanes, AVX-512: 8; dvec_simd.h's rd), for inclusion by f64_avx2.c and
 * f64_avx512.c only, each built with its level's flags.  bnorm_c.c's
 * parts, on the same driver (bnorm.h: the same split, the same per-pair
 * and per-channel statistics), with their loops W lanes wide: the sums
 * (mean, squared deviations, g and g * xh) in four vector accumulators
 * each, added lane by lane at the end, rather than one double in element
 * order; y = (x - mean) sc + b as one fused multiply-add.  Every result
 * is still the same bits at any thread count (a pair or a channel is one
 * thread's).  checkasm holds the rows to the C rows and to the reference
 * within the ops' tolerance (TOL_ACC). */
#ifndef TB_BACKENDS_CPU_BNORM64_SIMD_IMPL_H
#define TB_BACKENDS_CPU_BNORM64_SIMD_IMPL_H

#include <math.h>
#include <stdint.h>

#include "bnorm.h"
#include "cpu_internal.h"
#include "dvec_simd.h"
#include "kreg.h"
#include "vsum64_simd.h"

/* Mean and the sum of squared deviations of the n values at x + k *
 * stride + j for k < nb, j < len (n = nb * len). */
static double b64_stats(const double *x, int64_t nb, int64_t stride,
                        int64_t len, double *ss)
{
    double s = 0, q = 0;
    for (int64_t k = 0; k < nb; k++)
        s += v64_sum(x + k * stride, len, NULL);
    const double n = (double)(nb * len), m = n > 0 ? s / n : 0;
    for (int64_t k = 0; k < nb; k++)
        q += v64_ssd(x + k * stride, len, m, NULL);
    *ss = q;
    return m;
}

/* y[i] = (x[i] - m) sc + b, i < n */
static void b64_affine(const double *x, double *y, int64_t n, double m,
                       double sc, double b)
{
    const rd vm = rs_d1(m), vs = rs_d1(sc), vb = rs_d1(b);
    int64_t i = 0;
    for (; i + 2 * RS_W <= n; i += 2 * RS_W) {
        const rd y0 = rs_fma(rs_sub(rs_loadd(x + i), vm), vs, vb);
        const rd y1 = rs_fma(rs_sub(rs_loadd(x + i + RS_W), vm), vs, vb);
        rs_stored(y + i, y0);
        rs_stored(y + i + RS_W, y1);
    }
    for (; i < n; i++)
        y[i] = fma(x[i] - m, sc, b);
}

/* *sg += sum of g[i], *sgx += sum of g[i] (x[i] - m) rstd, i < n */
static void b64_gsums(const double *g, const double *x, int64_t n, double m,
                      double rstd, double *sg, double *sgx)
{
    const rd vm = rs_d1(m), vr = rs_d1(rstd);
    rd s0 = rs_d1(0.0), s1 = s0, t0 = s0, t1 = s0;
    int64_t i = 0;
    for (; i + 2 * RS_W <= n; i += 2 * RS_W) {
        const rd g0 = rs_loadd(g + i), g1 = rs_loadd(g + i + RS_W);
        const rd h0 = rs_mul(rs_sub(rs_loadd(x + i), vm), vr);
        const rd h1 = rs_mul(rs_sub(rs_loadd(x + i + RS_W), vm), vr);
        s0 = rs_add(s0, g0);
        s1 = rs_add(s1, g1);
        t0 = rs_fma(g0, h0, t0);
        t1 = rs_fma(g1, h1, t1);
    }
    double a = dx_hsum(rs_add(s0, s1)), b = dx_hsum(rs_add(t0, t1));
    for (; i < n; i++) {
        a += g[i];
        b += g[i] * ((x[i] - m) * rstd);
    }
    *sg += a;
    *sgx += b;
}

/* dx[i] = k (g[i] wc - a - (x[i] - m) rstd b), i < n */
static void b64_dx(const double *g, const double *x, double *dx, int64_t n,
                   double m, double rstd, double k, double wc, double a,
                   double b)
{
    const rd vm = rs_d1(m), vr = rs_d1(rstd), vk = rs_d1(k);
    const rd vw = rs_d1(wc), va = rs_d1(a), vb = rs_d1(b);
    int64_t i = 0;
    for (; i + RS_W <= n; i += RS_W) {
        const rd xh = rs_mul(rs_sub(rs_loadd(x + i), vm), vr);
        const rd t = rs_sub(rs_mul(rs_loadd(g + i), vw), va);
        rs_stored(dx + i, rs_mul(vk, rs_sub(t, rs_mul(xh, vb))));
    }
    for (; i < n; i++) {
        const double xh = (x[i] - m) * rstd;
        dx[i] = k * (g[i] * wc - a - xh * b);
    }
}

/* batch_norm over channels [c0, c1) (bnorm_c.c's BATCH_NORM_CH) */
static void b64_batch_norm(void *arg, int part, int nparts)
{
    const tb_cpu_bnorm_job *j = arg;
    const double *x = j->in[0].data, *w = j->in[1].data;
    const double *b = j->in[2].data, *run = j->in[3].data;
    double *y = j->out[0].data, *ro = j->out[1].data;
    const int64_t C = j->C, S = j->S;
    int64_t c0, c1;
    tb_cpu_span(C, 1, part, nparts, &c0, &c1);
    for (int64_t c = c0; c < c1; c++) {
        double rm = run[c], rv = run[C + c], mean = rm, var = rv;
        if (j->training) {
            const double n = (double)(j->N * S);
            double ss;
            mean = b64_stats(x + c * S, j->N, C * S, S, &ss);
            var = ss / n;
            rm = (1 - j->momentum) * rm + j->momentum * mean;
            rv = (1 - j->momentum) * rv + j->momentum * (ss / (n - 1));
        }
        const double sc = w[c] / sqrt(var + j->eps);
        for (int64_t i = 0; i < j->N; i++)
            b64_affine(x + (i * C + c) * S, y + (i * C + c) * S, S, mean,
                       sc, b[c]);
        ro[c] = rm;
        ro[C + c] = rv;
    }
}

/* group_norm over (sample, group) pairs [r0, r1) (GROUP_NORM_RG) */
static void b64_group_norm(void *arg, int part, int nparts)
{
    const tb_cpu_bnorm_job *j = arg;
    const double *x = j->in[0].data, *w = j->in[1].data;
    const double *b = j->in[2].data;
    double *y = j->out[0].data;
    const int64_t cg = j->C / j->G, S = j->S, len = cg * S;
    int64_t r0, r1;
    tb_cpu_span(j->N * j->G, 1, part, nparts, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        double ss;
        const double mean = b64_stats(x + r * len, 1, 0, len, &ss);
        const double rstd = 1 / sqrt(ss / (double)len + j->eps);
        for (int64_t ch = 0; ch < cg; ch++) {
            const int64_t c = (r % j->G) * cg + ch;
            b64_affine(x + r * len + ch * S, y + r * len + ch * S, S, mean,
                       rstd * w[c], b[c]);
        }
    }
}

/* batch_norm_backward over channels [c0, c1) (BATCH_NORM_BW_CH) */
static void b64_batch_norm_bw(void *arg, int part, int nparts)
{
    const tb_cpu_bnorm_job *j = arg;
    const double *g = j->in[0].data, *x = j->in[1].data;
    const double *w = j->in[2].data;
    double *dx = j->out[0].data, *dw = j->out[1].data;
    double *db = j->out[2].data;
    const int64_t C = j->C, S = j->S;
    const double n = (double)(j->N * S);
    int64_t c0, c1;
    tb_cpu_span(C, 1, part, nparts, &c0, &c1);
    for (int64_t c = c0; c < c1; c++) {
        double ss, sg = 0, sgx = 0;
        const double mean = b64_stats(x + c * S, j->N, C * S, S, &ss);
        const double rstd = 1 / sqrt((n > 0 ? ss / n : 0) + j->eps);
        for (int64_t i = 0; i < j->N; i++) {
            const int64_t o = (i * C + c) * S;
            b64_gsums(g + o, x + o, S, mean, rstd, &sg, &sgx);
        }
        const double wr = w[c] * rstd, a = sg / n, b = sgx / n;
        for (int64_t i = 0; i < j->N; i++) {
            const int64_t o = (i * C + c) * S;
            b64_dx(g + o, x + o, dx + o, S, mean, rstd, wr, 1, a, b);
        }
        dw[c] = sgx;
        db[c] = sg;
    }
}

/* group_norm_backward over (sample, group) pairs [r0, r1)
 * (GROUP_NORM_BW_RG) */
static void b64_group_norm_bw(void *arg, int part, int nparts)
{
    const tb_cpu_bnorm_job *j = arg;
    const double *g = j->in[0].data, *x = j->in[1].data;
    const double *w = j->in[2].data;
    double *dx = j->out[0].data;
    const int64_t cg = j->C / j->G, S = j->S, len = cg * S;
    int64_t r0, r1;
    tb_cpu_span(j->N * j->G, 1, part, nparts, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        double ss, sgh = 0, sghx = 0;
        const double mean = b64_stats(x + r * len, 1, 0, len, &ss);
        const double rstd = 1 / sqrt(ss / (double)len + j->eps);
        const int64_t c0 = (r % j->G) * cg;
        double *pp = j->part + (r / j->G * j->C + c0) * 2;
        for (int64_t ch = 0; ch < cg; ch++) {
            double sgx = 0, sg = 0;
            b64_gsums(g + r * len + ch * S, x + r * len + ch * S, S, mean,
                      rstd, &sg, &sgx);
            pp[2 * ch] = sgx;
            pp[2 * ch + 1] = sg;
            sgh += sg * w[c0 + ch];
            sghx += sgx * w[c0 + ch];
        }
        const double a = sgh / (double)len, b = sghx / (double)len;
        for (int64_t ch = 0; ch < cg; ch++) {
            const int64_t o = r * len + ch * S;
            b64_dx(g + o, x + o, dx + o, S, mean, rstd, rstd, w[c0 + ch], a,
                   b);
        }
    }
}

static const tb_cpu_bnorm_parts b64_parts = {
    b64_batch_norm, b64_group_norm, b64_batch_norm_bw, b64_group_norm_bw};

/* The entry points of level `lv` (its name suffix). */
#define B64_ENTRY(op, lv)                                                 \
    int TB_CPU_KFN(op, f64, lv)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return tb_cpu_bnorm_run(ctx, TB_OP_##op, TB_F64, in, out, p,      \
                                &b64_parts);                              \
    }
#define B64_ENTRIES(lv)                                                   \
    B64_ENTRY(batch_norm, lv) B64_ENTRY(group_norm, lv)                   \
    B64_ENTRY(batch_norm_backward, lv) B64_ENTRY(group_norm_backward, lv)

#endif
