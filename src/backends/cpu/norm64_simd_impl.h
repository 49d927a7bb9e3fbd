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
 * in chunk order), by quads of 4 rows in two passes (n64_bw_chunk): the
 * sums (AVX-512 layer_norm: the quad's rows column by column), then dx.
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

/* AVX-512's layer_norm rows: the sums of n rows (row i at xr + i D, gr
 * + i D, n at most 4, a constant where inlined) about c[i], column by
 * column, one accumulator a sum and row (16 in registers, the FMA
 * latency of one row's chains hidden behind the others', w loaded once
 * for the rows): t[i] as n64_bw_sums's.  (rms_norm's two chains a row
 * measured 2% slower this way than by n64_bw_sums.) */
static inline __attribute__((always_inline)) void
n64_bw_qsumsn(const double *xr, const double *gr, const double *w,
              int64_t D, int n, const double *c, double (*t)[4])
{
    const rd z = rs_d1(0.0);
    rd vc[4], a1[4], a2[4], ag[4], ad[4];
    for (int i = 0; i < n; i++) {
        vc[i] = rs_d1(c[i]);
        a1[i] = a2[i] = ag[i] = ad[i] = z;
    }
    int64_t k = 0;
    for (; k + RS_W <= D; k += RS_W) {
        const rd wv = rs_loadd(w + k);
        for (int i = 0; i < n; i++) {
            const rd d = rs_sub(rs_loadd(xr + i * D + k), vc[i]);
            const rd gh = rs_mul(rs_loadd(gr + i * D + k), wv);
            a1[i] = rs_add(a1[i], d);
            ag[i] = rs_add(ag[i], gh);
            a2[i] = rs_fma(d, d, a2[i]);
            ad[i] = rs_fma(gh, d, ad[i]);
        }
    }
    for (int i = 0; i < n; i++) {
        double t1 = dx_hsum(a1[i]), t2 = dx_hsum(a2[i]);
        double tg = dx_hsum(ag[i]), td = dx_hsum(ad[i]);
        for (int64_t e = k; e < D; e++) {
            const double d = xr[i * D + e] - c[i];
            const double gh = gr[i * D + e] * w[e];
            t1 += d;
            t2 += d * d;
            tg += gh;
            td += gh * d;
        }
        t[i][0] = t1, t[i][1] = t2, t[i][2] = tg, t[i][3] = td;
    }
}

/* a row's scalars for the dx pass (n64_bw_chunk) */
typedef struct {
    double c, m, rstd, a, bb;
} n64_rs;

/* The quad's rows' scalars from their sums t[i] (rows nq.. zero), four
 * rows a lane of one 256-bit vector: the row-by-row formulas below
 * (n64_bw_chunk) lane by lane, the same IEEE operations, so the same
 * bits, with one division a formula for the quad instead of one a row
 * (the divider takes vdivsd and vdivpd ymm alike; the scalar formulas'
 * 20 divisions and 4 square roots a quad sit between the sums and the
 * dx pass: 512x256 layer_norm_backward -1.3%, tbench ab; rms_norm's rows
 * keep the scalar formulas, each row's right after its sums: +3.7% this
 * way).  Used by the quads of 2 rows or more whose sums are column by
 * column (AVX-512 layer_norm; one row keeps the scalar path: 1x1
 * +6% this way).  Returns false, s untouched, where a row's
 * sums lost more than 2 bits (layer_norm: m s1 > 3/4 s2): the caller
 * sums it again about c + m. */
static inline __attribute__((always_inline)) bool
n64_finish4(bool rms, int nq, double n, double eps, const double (*t)[4],
            const double *c, n64_rs *s)
{
    __m256d s1 = _mm256_loadu_pd(t[0]), s2 = _mm256_loadu_pd(t[1]);
    __m256d sg = _mm256_loadu_pd(t[2]), sd = _mm256_loadu_pd(t[3]);
    /* transposed: lane i row i */
    const __m256d u0 = _mm256_unpacklo_pd(s1, s2), u1 = _mm256_unpackhi_pd(s1, s2);
    const __m256d u2 = _mm256_unpacklo_pd(sg, sd), u3 = _mm256_unpackhi_pd(sg, sd);
    s1 = _mm256_permute2f128_pd(u0, u2, 0x20);
    s2 = _mm256_permute2f128_pd(u1, u3, 0x20);
    sg = _mm256_permute2f128_pd(u0, u2, 0x31);
    sd = _mm256_permute2f128_pd(u1, u3, 0x31);
    const __m256d vn = _mm256_set1_pd(n), z = _mm256_setzero_pd();
    const __m256d m = rms ? z : _mm256_div_pd(s1, vn);
    const __m256d ms1 = _mm256_mul_pd(m, s1);
    if (!rms) {
        const int bad = _mm256_movemask_pd(_mm256_cmp_pd(
            ms1, _mm256_mul_pd(_mm256_set1_pd(0.75), s2), _CMP_GT_OQ));
        if (bad & ((1 << nq) - 1))
            return false;
    }
    const __m256d ss = _mm256_sub_pd(s2, ms1);
    const __m256d rstd = _mm256_div_pd(
        _mm256_set1_pd(1.0),
        _mm256_sqrt_pd(_mm256_add_pd(_mm256_div_pd(ss, vn),
                                     _mm256_set1_pd(eps))));
    const __m256d a = rms ? z : _mm256_div_pd(sg, vn);
    const __m256d bb = _mm256_div_pd(
        _mm256_mul_pd(rstd, _mm256_sub_pd(sd, _mm256_mul_pd(m, sg))), vn);
    double vm[4], vr[4], va[4], vb[4];
    _mm256_storeu_pd(vm, m);
    _mm256_storeu_pd(vr, rstd);
    _mm256_storeu_pd(va, a);
    _mm256_storeu_pd(vb, bb);
    for (int i = 0; i < 4; i++) {
        s[i].c = c[i], s[i].m = vm[i], s[i].rstd = vr[i];
        s[i].a = va[i], s[i].bb = vb[i];
    }
    return true;
}

/* lanes from k of the quad's n rows (rows at xr + i D ...): dx, and
 * the chunk's dw += g xh and db += g in registers in row order (the
 * bits of one row after the other), stored once (first: from 0).  All
 * the loads before the stores: dx's rows lie multiples of 4 KiB from
 * x's and g's, and a load behind a store of the same low 12 address
 * bits waits for it. */
static inline __attribute__((always_inline)) void
n64_bw_qdx(bool rms, const double *xr, const double *gr, const double *w,
           double *dr, int64_t D, int n, int64_t k, const rd *vc,
           const rd *vm, const rd *vr, const rd *va, const rd *vb,
           bool first, double *pw, double *pb)
{
    rd xv[4], gv[4], dxv[4];
    const rd z = rs_d1(0.0);
    rd dw = first ? z : rs_loadd(pw + k);
    rd db = first || rms ? z : rs_loadd(pb + k);
    const rd wv = rs_loadd(w + k);
    for (int i = 0; i < n; i++) {
        xv[i] = rs_loadd(xr + i * D + k);
        gv[i] = rs_loadd(gr + i * D + k);
    }
    /* norm_avx512.c's form: with dm = x - c - m, gr = g rstd, dx =
     * gr w - q dm + na (q = rstd^2 b, na = -rstd a) and dw += gr dm:
     * 4 multiplies or FMAs and 2 subtractions a vector, where rstd (gh -
     * a - xh b) and g xh took 5 and 4 */
    for (int i = 0; i < n; i++) {
        const rd dm = rms ? xv[i] : rs_sub(rs_sub(xv[i], vc[i]), vm[i]);
        const rd gr_ = rs_mul(gv[i], vr[i]);
        const rd u = RS_I(fnmadd_pd)(dm, vb[i], va[i]);
        dxv[i] = rs_fma(gr_, wv, u);
        dw = rs_fma(gr_, dm, dw);
        if (!rms)
            db = rs_add(db, gv[i]);
    }
    for (int i = 0; i < n; i++)
        rs_stored(dr + i * D + k, dxv[i]);
    rs_stored(pw + k, dw);
    if (!rms)
        rs_stored(pb + k, db);
}

/* the dx pass of the quad's n rows (n a constant where inlined) */
static inline __attribute__((always_inline)) void
n64_bw_qdxn(bool rms, const double *xr, const double *gr, const double *w,
            double *dr, int64_t D, int n, const n64_rs *s, bool first,
            double *pw, double *pb)
{
    rd vc[4], vm[4], vr[4], va[4], vb[4]; /* va: na, vb: q */
    for (int i = 0; i < n; i++) {
        vc[i] = rs_d1(s[i].c), vm[i] = rs_d1(s[i].m);
        vr[i] = rs_d1(s[i].rstd);
        va[i] = rs_d1(-(s[i].rstd * s[i].a));
        vb[i] = rs_d1(s[i].rstd * (s[i].rstd * s[i].bb));
    }
    int64_t k = 0;
    for (; k + RS_W <= D; k += RS_W)
        n64_bw_qdx(rms, xr, gr, w, dr, D, n, k, vc, vm, vr, va, vb, first,
                   pw, pb);
    for (; k < D; k++)
        for (int i = 0; i < n; i++) {
            const double xk = xr[i * D + k], gk = gr[i * D + k];
            const double xh = rms ? xk * s[i].rstd
                                  : ((xk - s[i].c) - s[i].m) * s[i].rstd;
            const double gh = gk * w[k];
            dr[i * D + k] =
                s[i].rstd * ((rms ? gh : gh - s[i].a) - xh * s[i].bb);
            pw[k] = fma(gk, xh, first && i == 0 ? 0.0 : pw[k]);
            if (pb)
                pb[k] = (first && i == 0 ? 0.0 : pb[k]) + gk;
        }
}

/* Chunk ch's rows by quads of up to 4: each row's statistics (its own
 * sums, as before), then the quad's dx pass column by column, dw and db
 * in registers across the quad (stored once a quad, not once a row:
 * Zen 4 stores a 512-bit vector in two cycles, and the row-by-row pass
 * stored dx, dw and db for each vector). */
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
    const int64_t r0 = ch * j->rows / j->nch;
    const int64_t r1 = (ch + 1) * j->rows / j->nch;
    if (r1 <= r0)
        for (int64_t k = 0; k < j->np * D; k++)
            pw[k] = 0;
    for (int64_t q = r0; q < r1; q += 4) {
        const int nq = (int)(r1 - q < 4 ? r1 - q : 4);
        n64_rs s[4];
        double cq[4] = {0, 0, 0, 0}, tq[4][4];
        if (!rms)
            for (int i = 0; i < nq; i++) {
                const double *xr = x + (q + i) * D;
                const int64_t n0 = D < 8 ? D : 8;
                for (int64_t k = 0; k < n0; k++)
                    cq[i] += xr[k];
                cq[i] /= (double)n0;
            }
#if RS_W == 8
        if (!rms) {
            const double *xq = x + q * D, *gq = g + q * D;
            switch (nq) {
            case 4: n64_bw_qsumsn(xq, gq, w, D, 4, cq, tq); break;
            case 3: n64_bw_qsumsn(xq, gq, w, D, 3, cq, tq); break;
            case 2: n64_bw_qsumsn(xq, gq, w, D, 2, cq, tq); break;
            default: n64_bw_qsumsn(xq, gq, w, D, 1, cq, tq); break;
            }
        }
        const bool byrow = rms;
#else
        const bool byrow = true;
#endif
        for (int i = nq; i < 4; i++)
            for (int u = 0; u < 4; u++)
                tq[i][u] = 0;
        if (byrow || nq < 2 || !n64_finish4(rms, nq, n, j->eps, tq, cq, s))
            for (int i = 0; i < nq; i++) {
                const double *xr = x + (q + i) * D, *gr = g + (q + i) * D;
                double c = cq[i], t[4];
                if (byrow)
                    n64_bw_sums(rms, xr, gr, w, D, c, t);
                else
                    for (int u = 0; u < 4; u++)
                        t[u] = tq[i][u];
                double m = rms ? 0 : t[0] / n;
                if (!rms && m * t[0] > 0.75 * t[1]) {
                    c += m;
                    n64_bw_sums(rms, xr, gr, w, D, c, t);
                    m = t[0] / n;
                }
                const double ss = t[1] - m * t[0];
                const double rstd = 1 / sqrt(ss / n + j->eps);
                s[i].c = c, s[i].m = m, s[i].rstd = rstd;
                s[i].a = rms ? 0 : t[2] / n;
                s[i].bb = rstd * (t[3] - m * t[2]) / n;
            }
        const double *xq = x + q * D, *gq = g + q * D;
        double *dq = dx + q * D;
        const bool first = q == r0;
        switch (nq) {
        case 4: n64_bw_qdxn(rms, xq, gq, w, dq, D, 4, s, first, pw, pb); break;
        case 3: n64_bw_qdxn(rms, xq, gq, w, dq, D, 3, s, first, pw, pb); break;
        case 2: n64_bw_qdxn(rms, xq, gq, w, dq, D, 2, s, first, pw, pb); break;
        default: n64_bw_qdxn(rms, xq, gq, w, dq, D, 1, s, first, pw, pb); break;
        }
    }
}

/* dw (i 0) or db (i 1): the chunks' sums in chunk order, 0 + the first
 * + the second ... per column (the driver's portable loop's bits), 4
 * vectors of columns at a time in registers */
static void n64_bw_sum(const tb_cpu_norm_bw_job *j, int i, void *out)
{
    double *o = out;
    const int64_t D = j->D, st = j->np * D;
    const double *p = (const double *)j->part + i * D;
    int64_t k = 0;
    for (; k + 4 * RS_W <= D; k += 4 * RS_W) {
        rd a[4];
        for (int u = 0; u < 4; u++)
            a[u] = rs_d1(0.0);
        for (int64_t c = 0; c < j->nch; c++)
            for (int u = 0; u < 4; u++)
                a[u] = rs_add(a[u], rs_loadd(p + c * st + k + RS_W * u));
        for (int u = 0; u < 4; u++)
            rs_stored(o + k + RS_W * u, a[u]);
    }
    for (; k < D; k++) {
        double a = 0;
        for (int64_t c = 0; c < j->nch; c++)
            a += p[c * st + k];
        o[k] = a;
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
                                  in, out, p, n64_bw_part, n64_bw_sum);               \
    }                                                                     \
    int TB_CPU_KFN(rms_norm_backward, f64, lv)(                           \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_norm_bw_run(ctx, TB_OP_rms_norm_backward, TB_F64,   \
                                  in, out, p, n64_bw_part, n64_bw_sum);               \
    }

#endif
