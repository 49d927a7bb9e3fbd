/* layer_norm, rms_norm and their gradients, f64's SIMD rows (AVX2: 4
 * lanes, AVX-512: 8; dvec_simd.h's rd), for inclusion by f64_avx2.c and
 * f64_avx512.c only, each built with its level's flags.  norm_c.c's
 * formulas per row of D, W lanes wide: the two passes of the statistics
 * (the mean, of the deviations from the row's first 8 values' mean:
 * the rounding of the deviations, not of |x|; then the squared
 * deviations: no E[x^2] - E[x]^2) in four vector accumulators each, the row read again from L1; the scale pass
 * ((x - mean) rstd) w + b by one fused multiply-add.  As norm_avx2.c's
 * f32 rows: while the mean pass reads row r, row r + N64_PF_ROWS is
 * prefetched (a row of 8 KiB spans pages, where the hardware prefetchers
 * stop), and when x and the output together reach N64_NT_BYTES the
 * output goes out by streaming stores (rows that start on a vector).
 * The gradients run on norm.h's driver (the same chunks, dw and db added
 * in chunk order), per row in two passes (n64_bw_chunk).
 * checkasm holds the rows to the C rows and to the reference within the
 * ops' tolerance (the sums associate differently). */
#ifndef TB_BACKENDS_CPU_NORM64_SIMD_IMPL_H
#define TB_BACKENDS_CPU_NORM64_SIMD_IMPL_H

#include <immintrin.h> /* _mm_sfence */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpu_internal.h"
#include "dvec_simd.h"
#include "kreg.h"
#include "norm.h"
#include "vsum64_simd.h"

#define N64_PF_ROWS 2
#define N64_NT_BYTES (32.0 * 1024 * 1024)

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    int64_t rows, D;
    double eps;
    bool rms, nt;
} n64_job;

static void n64_part(void *arg, int part, int nparts)
{
    const n64_job *j = arg;
    const double *x = j->in[0].data, *w = j->in[1].data;
    const double *b = j->rms ? NULL : j->in[2].data;
    double *o = j->out[0].data;
    const int64_t D = j->D;
    const double n = (double)D;
    int64_t r0, r1;
    tb_cpu_span(j->rows, 1, part, nparts, &r0, &r1);
    bool streamed = false;
    for (int64_t r = r0; r < r1; r++) {
        const double *xr = x + r * D;
        const double *pf = r + N64_PF_ROWS < r1 ? xr + N64_PF_ROWS * D
                                                : NULL;
        double mean = 0;
        if (!j->rms) { /* shifted by the first values' mean */
            double c = 0;
            const int64_t k = D < 8 ? D : 8;
            for (int64_t i = 0; i < k; i++)
                c += xr[i];
            c /= (double)k;
            mean = c + v64_sum_shift(xr, D, pf, c) / n;
        }
        const double ss = v64_ssd(xr, D, mean, j->rms ? pf : NULL);
        const rd vm = rs_d1(mean), vi = rs_d1(1 / sqrt(ss / n + j->eps));
        double *orow = o + r * D;
        const bool nt = j->nt && (uintptr_t)orow % (RS_W * 8) == 0;
        streamed |= nt;
        int64_t k = 0;
        for (; k + RS_W <= D; k += RS_W) {
            const rd xh = rs_mul(rs_sub(rs_loadd(xr + k), vm), vi);
            const rd y = b ? rs_fma(xh, rs_loadd(w + k), rs_loadd(b + k))
                           : rs_mul(xh, rs_loadd(w + k));
            if (nt)
                RS_I(stream_pd)(orow + k, y);
            else
                rs_stored(orow + k, y);
        }
        const double inv = 1 / sqrt(ss / n + j->eps);
        for (; k < D; k++)
            orow[k] = b ? fma((xr[k] - mean) * inv, w[k], b[k])
                        : (xr[k] - mean) * inv * w[k];
    }
    if (streamed)
        _mm_sfence();
}

static int n64_run(void *ctx, tb_op_id id, const tb_tensor *in,
                   tb_tensor *out, const tb_params *p)
{
    int rc = tb_cpu_begin_op(ctx, id, TB_F64, in, out, p);
    if (rc)
        return rc;
    n64_job j = {in, out, 0, in[0].shape[in[0].ndim - 1],
                 tb_cpu_param(p, id, 0), id == TB_OP_rms_norm, false};
    j.rows = j.D ? tb_tensor_numel(&in[0]) / j.D : 0;
    j.nt = 2.0 * (double)(j.rows * j.D) * 8 >= N64_NT_BYTES;
    tb_cpu_parallel(ctx, j.rows * j.D * 4, j.rows, n64_part, &j);
    return 0;
}

/* The gradients' chunks (norm.h): per row, norm_avx512.c's two passes
 * in double: one over x and g for the sums of d = x - c (c the mean of
 * the row's first 8 elements, 0 for rms_norm), d^2, gh = g w and gh d
 * (the pass again shifted by c + m where m s1 > 3/4 s2), then one for
 * dx = rstd (gh - a - xh b), xh = ((x - c) - m) rstd, and the chunk's
 * dw += g xh, db += g.  (The C row's four passes over x, two over g:
 * mean, squared deviations, the sums with dw, db, then dx.) */
static inline __attribute__((always_inline)) void
n64_bw_sums(bool rms, const double *xr, const double *gr, const double *w,
            int64_t D, double c, double *t)
{
    const rd vc = rs_d1(c), z = rs_d1(0.0);
    rd a1[2] = {z, z}, a2[2] = {z, z}, ag[2] = {z, z}, ad[2] = {z, z};
    int64_t k = 0;
    for (; k + 2 * RS_W <= D; k += 2 * RS_W)
        for (int u = 0; u < 2; u++) {
            const int64_t i = k + u * RS_W;
            const rd x = rs_loadd(xr + i);
            const rd d = rms ? x : rs_sub(x, vc);
            const rd gh = rs_mul(rs_loadd(gr + i), rs_loadd(w + i));
            if (!rms) {
                a1[u] = rs_add(a1[u], d);
                ag[u] = rs_add(ag[u], gh);
            }
            a2[u] = rs_fma(d, d, a2[u]);
            ad[u] = rs_fma(gh, d, ad[u]);
        }
    double t1 = dx_hsum(rs_add(a1[0], a1[1]));
    double t2 = dx_hsum(rs_add(a2[0], a2[1]));
    double tg = dx_hsum(rs_add(ag[0], ag[1]));
    double td = dx_hsum(rs_add(ad[0], ad[1]));
    for (; k < D; k++) {
        const double d = xr[k] - c, gh = gr[k] * w[k];
        t1 += d;
        t2 += d * d;
        tg += gh;
        td += gh * d;
    }
    t[0] = t1, t[1] = t2, t[2] = tg, t[3] = td;
}

static inline __attribute__((always_inline)) void
n64_bw_chunk(const tb_cpu_norm_bw_job *j, bool rms, int64_t ch)
{
    const double *g = j->in[0].data, *x = j->in[1].data;
    const double *w = j->in[2].data;
    double *dx = j->out[0].data;
    const int64_t D = j->D;
    const double n = (double)D;
    double *pw = (double *)j->part + ch * j->np * D;
    double *pb = rms ? NULL : pw + D;
    for (int64_t k = 0; k < j->np * D; k++)
        pw[k] = 0;
    for (int64_t r = ch * j->rows / j->nch;
         r < (ch + 1) * j->rows / j->nch; r++) {
        const double *xr = x + r * D, *gr = g + r * D;
        double c = 0, t[4];
        if (!rms) {
            const int64_t n0 = D < 8 ? D : 8;
            for (int64_t k = 0; k < n0; k++)
                c += xr[k];
            c /= (double)n0;
        }
        n64_bw_sums(rms, xr, gr, w, D, c, t);
        double m = rms ? 0 : t[0] / n;
        if (!rms && m * t[0] > 0.75 * t[1]) {
            c += m;
            n64_bw_sums(rms, xr, gr, w, D, c, t);
            m = t[0] / n;
        }
        const double ss = t[1] - m * t[0];
        const double rstd = 1 / sqrt(ss / n + j->eps);
        const double a = rms ? 0 : t[2] / n;
        const double bb = rstd * (t[3] - m * t[2]) / n;
        const rd vc = rs_d1(c), vm = rs_d1(m), vr = rs_d1(rstd);
        const rd va = rs_d1(a), vb = rs_d1(bb);
        double *dr = dx + r * D;
        int64_t k = 0;
        for (; k + RS_W <= D; k += RS_W) {
            const rd xv = rs_loadd(xr + k), gk = rs_loadd(gr + k);
            const rd xh = rms ? rs_mul(xv, vr)
                              : rs_mul(rs_sub(rs_sub(xv, vc), vm), vr);
            const rd gh = rs_mul(gk, rs_loadd(w + k));
            const rd tt = rms ? gh : rs_sub(gh, va);
            rs_stored(dr + k, rs_mul(vr, rs_sub(tt, rs_mul(xh, vb))));
            rs_stored(pw + k, rs_fma(gk, xh, rs_loadd(pw + k)));
            if (!rms)
                rs_stored(pb + k, rs_add(rs_loadd(pb + k), gk));
        }
        for (; k < D; k++) {
            const double xh = rms ? xr[k] * rstd : ((xr[k] - c) - m) * rstd;
            const double gh = gr[k] * w[k];
            dr[k] = rstd * ((rms ? gh : gh - a) - xh * bb);
            pw[k] = fma(gr[k], xh, pw[k]);
            if (pb)
                pb[k] += gr[k];
        }
    }
}

static void n64_bw_part(void *arg, int part, int nparts)
{
    const tb_cpu_norm_bw_job *j = arg;
    int64_t c0, c1;
    tb_cpu_span(j->nch, 1, part, nparts, &c0, &c1);
    for (int64_t ch = c0; ch < c1; ch++)
        if (j->np == 1)
            n64_bw_chunk(j, true, ch);
        else
            n64_bw_chunk(j, false, ch);
}

/* The entry points of level `lv` (its name suffix). */
#define N64_ENTRIES(lv)                                                   \
    int TB_CPU_KFN(layer_norm, f64, lv)(void *ctx, const tb_tensor *in,   \
                                        tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return n64_run(ctx, TB_OP_layer_norm, in, out, p);                \
    }                                                                     \
    int TB_CPU_KFN(rms_norm, f64, lv)(void *ctx, const tb_tensor *in,     \
                                      tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return n64_run(ctx, TB_OP_rms_norm, in, out, p);                  \
    }                                                                     \
    int TB_CPU_KFN(layer_norm_backward, f64, lv)(                         \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_norm_bw_run(ctx, TB_OP_layer_norm_backward, TB_F64, \
                                  in, out, p, n64_bw_part, NULL);               \
    }                                                                     \
    int TB_CPU_KFN(rms_norm_backward, f64, lv)(                           \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_norm_bw_run(ctx, TB_OP_rms_norm_backward, TB_F64,   \
                                  in, out, p, n64_bw_part, NULL);               \
    }

#endif
