/* layer_norm, rms_norm and their gradients, f64's SIMD rows (AVX2: 4
 * lanes, AVX-512: 8; dvec_simd.h's rd), for inclusion by f64_avx2.c and
 * f64_avx512.c only, each built with its level's flags.  norm_c.c's
 * formulas per row of D, W lanes wide: the two passes of the statistics
 * (the mean, then the squared deviations; no E[x^2] - E[x]^2) in four
 * vector accumulators each, the row read again from L1; the scale pass
 * ((x - mean) rstd) w + b by one fused multiply-add.  As norm_avx2.c's
 * f32 rows: while the mean pass reads row r, row r + N64_PF_ROWS is
 * prefetched (a row of 8 KiB spans pages, where the hardware prefetchers
 * stop), and when x and the output together reach N64_NT_BYTES the
 * output goes out by streaming stores (rows that start on a vector).
 * The gradients run on norm.h's driver (the same chunks, dw and db added
 * in chunk order), their per-element sums as vectors across the row.
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
        const double mean = j->rms ? 0 : v64_sum(xr, D, pf) / n;
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

/* The gradients' chunks (norm.h; norm_c.c's NORM_BW_ROWS in double) */
static void n64_bw_part(void *arg, int part, int nparts)
{
    const tb_cpu_norm_bw_job *j = arg;
    const double *g = j->in[0].data, *x = j->in[1].data;
    const double *w = j->in[2].data;
    double *dx = j->out[0].data;
    const int64_t D = j->D;
    const double n = (double)D;
    const bool rms = j->np == 1;
    int64_t c0, c1;
    tb_cpu_span(j->nch, 1, part, nparts, &c0, &c1);
    for (int64_t c = c0; c < c1; c++) {
        double *pw = (double *)j->part + c * j->np * D;
        double *pb = rms ? NULL : pw + D;
        for (int64_t k = 0; k < j->np * D; k++)
            pw[k] = 0;
        for (int64_t r = c * j->rows / j->nch;
             r < (c + 1) * j->rows / j->nch; r++) {
            const double *xr = x + r * D, *gr = g + r * D;
            const double mean = rms ? 0 : v64_sum(xr, D, NULL) / n;
            const double ss = v64_ssd(xr, D, mean, NULL);
            const double rstd = 1 / sqrt(ss / n + j->eps);
            const rd vm = rs_d1(mean), vr = rs_d1(rstd);
            rd s0 = rs_d1(0.0), s1 = s0;
            int64_t k = 0;
            for (; k + RS_W <= D; k += RS_W) {
                const rd xh = rs_mul(rs_sub(rs_loadd(xr + k), vm), vr);
                const rd gk = rs_loadd(gr + k);
                const rd gh = rs_mul(gk, rs_loadd(w + k));
                s0 = rs_add(s0, gh);
                s1 = rs_fma(gh, xh, s1);
                rs_stored(pw + k, rs_fma(gk, xh, rs_loadd(pw + k)));
                if (pb)
                    rs_stored(pb + k, rs_add(rs_loadd(pb + k), gk));
            }
            double sg = dx_hsum(s0), sgx = dx_hsum(s1);
            for (; k < D; k++) {
                const double xh = (xr[k] - mean) * rstd, gh = gr[k] * w[k];
                sg += gh;
                sgx += gh * xh;
                pw[k] += gr[k] * xh;
                if (pb)
                    pb[k] += gr[k];
            }
            const double a = rms ? 0 : sg / n, bb = sgx / n;
            const rd va = rs_d1(a), vb = rs_d1(bb);
            double *dr = dx + r * D;
            for (k = 0; k + RS_W <= D; k += RS_W) {
                const rd xh = rs_mul(rs_sub(rs_loadd(xr + k), vm), vr);
                const rd t = rs_sub(rs_mul(rs_loadd(gr + k), rs_loadd(w + k)),
                                    va);
                rs_stored(dr + k, rs_mul(vr, rs_sub(t, rs_mul(xh, vb))));
            }
            for (; k < D; k++) {
                const double xh = (xr[k] - mean) * rstd;
                dr[k] = rstd * (gr[k] * w[k] - a - xh * bb);
            }
        }
    }
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
                                  in, out, p, n64_bw_part);               \
    }                                                                     \
    int TB_CPU_KFN(rms_norm_backward, f64, lv)(                           \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_norm_bw_run(ctx, TB_OP_rms_norm_backward, TB_F64,   \
                                  in, out, p, n64_bw_part);               \
    }

#endif
