/* sdpa and sdpa_backward f64's SIMD rows (AVX2: 4 lanes, AVX-512: 8;
 * dvec_simd.h's rd), for inclusion by f64_avx2.c and f64_avx512.c only
 * (after f64_simd_impl.h, whose dx_exp_neg they use), each built with its
 * level's flags.  attn_avx2.c's f32 rows in double: attn.h's schedule,
 * both products of a block on one 4 x 2W tile (c[4][2W] += a[4][K]
 * b[K][2W], b row-major, W lanes a vector), the scores from the query
 * block times the key block packed transposed [D, BK] and scaled per
 * score as the C row does, the output accumulators from the
 * probabilities times v (packed only when Dv is not a multiple of 2W).
 * The softmax rows run W lanes wide on dx_exp_neg (within 2 ulp of
 * libm's exp); tiles wholly above the causal diagonal are not computed.
 * sdpa_backward: attn_avx2.c's one pass per query block (S and dP kept
 * for every visited key, then dq = dS k, dv += P^T g, dk += dS^T q).
 * Other association than the C rows' dot products (the tile sums over
 * D or the keys in its own order): checkasm holds both rows to the C
 * row and to the reference within the op's tolerance (TOL_ACC). */
#ifndef TB_BACKENDS_CPU_ATTN64_SIMD_IMPL_H
#define TB_BACKENDS_CPU_ATTN64_SIMD_IMPL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "attn.h"
#include "cpu_internal.h"
#include "dvec_simd.h"
#include "kreg.h"
#include "vsum64_simd.h"

#define A64_T (2 * RS_W) /* tile columns */

/* n rounded up to a multiple of m */
static inline int64_t a64_up(int64_t n, int64_t m)
{
    return (n + m - 1) / m * m;
}

/* c[r * ldc + 0..2W) (+)= sum_k a[r * ars + k * aks] * b[k * ldb +
 * 0..2W), r < 4; acc 0: c is overwritten.  Inlined with constant
 * strides through the forms below. */
static inline __attribute__((always_inline)) void
a64_tile_s(int64_t K, const double *a, int64_t ars, int64_t aks,
           const double *b, int64_t ldb, double *c, int64_t ldc, int acc)
{
#define T_LD(r, h) acc ? rs_loadd(c + (r) * ldc + RS_W * (h)) : rs_d1(0.0)
    rd c00 = T_LD(0, 0), c01 = T_LD(0, 1), c10 = T_LD(1, 0),
       c11 = T_LD(1, 1), c20 = T_LD(2, 0), c21 = T_LD(2, 1),
       c30 = T_LD(3, 0), c31 = T_LD(3, 1);
#undef T_LD
    for (int64_t k = 0; k < K; k++) {
        const double *ak = a + k * aks;
        const rd b0 = rs_loadd(b + k * ldb);
        const rd b1 = rs_loadd(b + k * ldb + RS_W);
        rd x = rs_d1(ak[0]);
        c00 = rs_fma(x, b0, c00);
        c01 = rs_fma(x, b1, c01);
        x = rs_d1(ak[ars]);
        c10 = rs_fma(x, b0, c10);
        c11 = rs_fma(x, b1, c11);
        x = rs_d1(ak[2 * ars]);
        c20 = rs_fma(x, b0, c20);
        c21 = rs_fma(x, b1, c21);
        x = rs_d1(ak[3 * ars]);
        c30 = rs_fma(x, b0, c30);
        c31 = rs_fma(x, b1, c31);
    }
    rs_stored(c, c00);
    rs_stored(c + RS_W, c01);
    rs_stored(c + ldc, c10);
    rs_stored(c + ldc + RS_W, c11);
    rs_stored(c + 2 * ldc, c20);
    rs_stored(c + 2 * ldc + RS_W, c21);
    rs_stored(c + 3 * ldc, c30);
    rs_stored(c + 3 * ldc + RS_W, c31);
}

/* a row-major [4, K] (leading dim lda) */
static inline void a64_tile(int64_t K, const double *a, int64_t lda,
                            const double *b, int64_t ldb, double *c,
                            int64_t ldc, int acc)
{
    a64_tile_s(K, a, lda, 1, b, ldb, c, ldc, acc);
}

/* a read transposed: a[r + k * lda] (a column of P or dS per key) */
static inline void a64_tile_at(int64_t K, const double *a, int64_t lda,
                               const double *b, int64_t ldb, double *c,
                               int64_t ldc)
{
    a64_tile_s(K, a, 1, lda, b, ldb, c, ldc, 1);
}

/* ---- sdpa ------------------------------------------------------------ */

/* Scratch of one part, in doubles: q [BQ, D], k^T [D, BK], s [BQ, BK], v
 * [BK, DvP], o [BQ, DvP], m and l [BQ]. */
typedef struct {
    double *q, *kt, *s, *v, *o, *m, *l;
    int64_t dvp; /* Dv rounded up to 2W */
} a64_scratch;

static double *a64_scratch_get(const tb_cpu_attn_job *j, a64_scratch *w)
{
    const int64_t BQ = TB_ATTN_BQ, BK = TB_ATTN_BK;
    w->dvp = a64_up(j->Dv, A64_T);
    const size_t n = (size_t)(BQ * j->D + j->D * BK + BQ * BK +
                              BK * w->dvp + BQ * w->dvp + 2 * BQ);
    double *p = tb_alloc(n * sizeof *p);
    if (!p)
        return NULL;
    w->q = p;
    w->kt = w->q + BQ * j->D;
    w->s = w->kt + j->D * BK;
    w->v = w->s + BQ * BK;
    w->o = w->v + BK * w->dvp;
    w->m = w->o + BQ * w->dvp;
    w->l = w->m + BQ;
    /* only v's padding columns are read before a task writes them, and
     * only when there are any (as attn_avx2.c's scratch) */
    if (w->dvp != j->Dv) /* one memset: 64 short ones cost more */
        memset(w->v, 0, (size_t)(BK * w->dvp) * sizeof *p);
    return p;
}

/* Row r of the block's unscaled scores s[0..kn), the first lim allowed:
 * scaled, the online-softmax update of m, l and the output row; s
 * becomes the weights exp(s - m) (0 past lim, up to kn rounded to W). */
static void a64_softmax_row(double *s, int64_t kn, int64_t lim,
                            double scale, double *m, double *l, double *o,
                            int64_t dvp)
{
    /* the vectors up to lim's only (a diagonal block's rows past it
     * are masked: their exps were a third of the row's), the rest 0 */
    const int64_t np = a64_up(kn, RS_W), lw = a64_up(lim, RS_W);
    const rd vsc = rs_d1(scale);
    for (int64_t c = 0; c < lw; c += RS_W)
        rs_stored(s + c, rs_mul(rs_loadd(s + c), vsc));
    for (int64_t c = lim; c < lw; c++)
        s[c] = -INFINITY;
    rd vmx = rs_d1(*m);
    for (int64_t c = 0; c < lw; c += RS_W)
        vmx = rs_max(vmx, rs_loadd(s + c));
    const double mx = v64_hmax(vmx);
    /* exp's exact values without the libm call where they are known:
     * a task's first block (m -inf) and a max that did not grow */
    const double alpha = *m == -INFINITY ? 0.0
                         : *m == mx      ? 1.0
                                         : exp(*m - mx);
    const rd vmax = rs_d1(mx);
    rd vs = rs_d1(0.0);
    for (int64_t c = 0; c < lw; c += RS_W) {
        const rd e = dx_exp_neg(rs_sub(rs_loadd(s + c), vmax));
        rs_stored(s + c, e);
        vs = rs_add(vs, e);
    }
    for (int64_t c = lw; c < np; c++)
        s[c] = 0;
    *l = *l * alpha + dx_hsum(vs);
    *m = mx;
    if (alpha != 1.0) {
        const rd va = rs_d1(alpha);
        for (int64_t e = 0; e < dvp; e += RS_W)
            rs_stored(o + e, rs_mul(rs_loadd(o + e), va));
    }
}

/* kt[d * ldt + c] = k[c * D + d], c < kn, d < D: whole 4 x 4 squares
 * transposed in ymm registers at both levels (unpack, lane swap), the
 * edges one by one (the scalar loop of attn_avx2.c's f32 row was a tenth
 * of its forward's time). */
static void a64_pack_t(const double *k, int64_t D, int64_t kn, double *kt,
                       int64_t ldt)
{
    const int64_t c4 = kn / 4 * 4, d4 = D / 4 * 4;
    for (int64_t c = 0; c < c4; c += 4)
        for (int64_t d = 0; d < d4; d += 4) {
            const double *s = k + c * D + d;
            const __m256d r0 = _mm256_loadu_pd(s),
                          r1 = _mm256_loadu_pd(s + D),
                          r2 = _mm256_loadu_pd(s + 2 * D),
                          r3 = _mm256_loadu_pd(s + 3 * D);
            const __m256d t0 = _mm256_unpacklo_pd(r0, r1),
                          t1 = _mm256_unpackhi_pd(r0, r1),
                          t2 = _mm256_unpacklo_pd(r2, r3),
                          t3 = _mm256_unpackhi_pd(r2, r3);
            double *o = kt + d * ldt + c;
            _mm256_storeu_pd(o, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(o + ldt, _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(o + 2 * ldt,
                             _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(o + 3 * ldt,
                             _mm256_permute2f128_pd(t1, t3, 0x31));
        }
    for (int64_t c = 0; c < kn; c++) /* the edges */
        for (int64_t d = c < c4 ? d4 : 0; d < D; d++)
            kt[d * ldt + c] = k[c * D + d];
}

/* One key block [j0, j0 + kn) of query block [i0, i0 + qn) of head h. */
static void a64_key_block(const tb_cpu_attn_job *j, a64_scratch *w,
                          int64_t h, int64_t i0, int64_t qn, int64_t j0,
                          int64_t kn)
{
    const int64_t BK = TB_ATTN_BK, D = j->D, Dv = j->Dv, dvp = w->dvp;
    const int64_t q4 = a64_up(qn, 4), nt = a64_up(kn, A64_T);
    const double *k = (const double *)j->in[1].data + (h * j->Sk + j0) * D;
    const double *v = (const double *)j->in[2].data + (h * j->Sk + j0) * Dv;
    a64_pack_t(k, D, kn, w->kt, BK);
    for (int64_t c = kn; c < nt; c++)
        for (int64_t d = 0; d < D; d++)
            w->kt[d * BK + c] = 0;
    const bool diag = j->causal && j0 + kn - 1 > i0;
    for (int64_t r = 0; r < q4; r += 4)
        for (int64_t c = 0; c < nt; c += A64_T)
            if (!diag || j0 + c <= i0 + r + 3) /* else wholly masked */
                a64_tile(D, w->q + r * D, D, w->kt + c, BK,
                         w->s + r * BK + c, BK, 0);
    for (int64_t r = 0; r < qn; r++) {
        const int64_t lim = diag && i0 + r - j0 + 1 < kn ? i0 + r - j0 + 1
                                                         : kn;
        a64_softmax_row(w->s + r * BK, kn, lim, j->scale, &w->m[r],
                        &w->l[r], w->o + r * dvp, dvp);
    }
    for (int64_t r = qn; r < q4; r++) /* padding rows: no weight */
        memset(w->s + r * BK, 0, (size_t)kn * sizeof(double));
    const double *vb = v;
    int64_t ldv = Dv;
    if (Dv % A64_T) {
        for (int64_t c = 0; c < kn; c++)
            memcpy(w->v + c * dvp, v + c * Dv, (size_t)Dv * sizeof(double));
        vb = w->v;
        ldv = dvp;
    }
    /* rows r..r+3 over the keys row r + 3 may see (on a diagonal block
     * the probabilities past them are 0) */
    for (int64_t r = 0; r < q4; r += 4) {
        const int64_t kr = diag && i0 + r + 4 - j0 < kn ? i0 + r + 4 - j0
                                                         : kn;
        for (int64_t e = 0; e < dvp; e += A64_T)
            a64_tile(kr, w->s + r * BK, BK, vb + e, ldv, w->o + r * dvp + e,
                     dvp, 1);
    }
}

static void a64_sdpa_part(void *arg, int part, int nparts)
{
    tb_cpu_attn_job *j = arg;
    const int64_t BQ = TB_ATTN_BQ, BK = TB_ATTN_BK, D = j->D, Dv = j->Dv;
    int64_t t0, t1;
    tb_cpu_span(j->BH * j->nqb, 1, part, nparts, &t0, &t1);
    if (t0 >= t1)
        return;
    a64_scratch w;
    double *buf = a64_scratch_get(j, &w);
    if (!buf) {
        j->rc[part] = TB_ENOMEM;
        return;
    }
    for (int64_t t = t0; t < t1; t++) {
        const int64_t h = t / j->nqb, i0 = t % j->nqb * BQ;
        const int64_t qn = j->Sq - i0 < BQ ? j->Sq - i0 : BQ;
        const double *q =
            (const double *)j->in[0].data + (h * j->Sq + i0) * D;
        memcpy(w.q, q, (size_t)(qn * D) * sizeof(double));
        /* the rows the 4-row tiles read */
        const int64_t q4 = a64_up(qn, 4);
        memset(w.q + qn * D, 0, (size_t)((q4 - qn) * D) * sizeof(double));
        memset(w.o, 0, (size_t)(q4 * w.dvp) * sizeof(double));
        for (int64_t r = 0; r < BQ; r++) {
            w.m[r] = -INFINITY;
            w.l[r] = 0;
        }
        const int64_t nk = tb_cpu_attn_keys(j, i0, qn);
        for (int64_t j0 = 0; j0 < nk; j0 += BK)
            a64_key_block(j, &w, h, i0, qn, j0, nk - j0 < BK ? nk - j0 : BK);
        double *out = (double *)j->out[0].data + (h * j->Sq + i0) * Dv;
        for (int64_t r = 0; r < qn; r++)
            for (int64_t e = 0; e < Dv; e++)
                out[r * Dv + e] = w.o[r * w.dvp + e] / w.l[r];
    }
    tb_free(buf);
}

/* ---- sdpa_backward --------------------------------------------------- */

/* Scratch in doubles, widths padded to 2W (skp: Sk to 2W, sk4: to 4):
 * q [BQ, dpt], g [BQ, dvt], k^T [D, skp], v^T [Dv, skp], k [skp, dpt], s
 * and dp [BQ, skp], dq [BQ, dpt], dk [sk4, dpt], dv [sk4, dvt]. */
typedef struct {
    double *q, *g, *kt, *vt, *k, *s, *dp, *dq, *dk, *dv;
    int64_t dpt, dvt, skp, sk4;
} a64_bw_scratch;

static double *a64_bw_scratch_get(const tb_cpu_attn_job *j,
                                  a64_bw_scratch *w)
{
    const int64_t BQ = TB_ATTN_BQ, D = j->D, Dv = j->Dv;
    w->dpt = a64_up(D, A64_T);
    w->dvt = a64_up(Dv, A64_T);
    w->skp = a64_up(j->Sk, A64_T);
    w->sk4 = a64_up(j->Sk, 4);
    const int64_t skp = w->skp;
    const size_t n = (size_t)(BQ * w->dpt + BQ * w->dvt + D * skp +
                              Dv * skp + skp * w->dpt + 2 * BQ * skp +
                              BQ * w->dpt + w->sk4 * (w->dpt + w->dvt));
    double *p = tb_alloc(n * sizeof *p);
    if (!p)
        return NULL;
    memset(p, 0, n * sizeof *p);
    w->q = p;
    w->g = w->q + BQ * w->dpt;
    w->kt = w->g + BQ * w->dvt;
    w->vt = w->kt + D * skp;
    w->k = w->vt + Dv * skp;
    w->s = w->k + skp * w->dpt;
    w->dp = w->s + BQ * skp;
    w->dq = w->dp + BQ * skp;
    w->dk = w->dq + BQ * w->dpt;
    w->dv = w->dk + w->sk4 * w->dpt;
    return p;
}

/* Head h's k^T, v^T (columns past Sk 0) and k into the scratch; its dk,
 * dv accumulators zeroed. */
static void a64_bw_pack_head(const tb_cpu_attn_job *j, a64_bw_scratch *w,
                             int64_t h)
{
    const int64_t D = j->D, Dv = j->Dv, Sk = j->Sk, skp = w->skp;
    const double *k = (const double *)j->in[2].data + h * Sk * D;
    const double *v = (const double *)j->in[3].data + h * Sk * Dv;
    a64_pack_t(k, D, Sk, w->kt, skp);
    a64_pack_t(v, Dv, Sk, w->vt, skp);
    for (int64_t c = 0; c < Sk; c++)
        memcpy(w->k + c * w->dpt, k + c * D, (size_t)D * sizeof(double));
    memset(w->dk, 0, (size_t)(w->sk4 * (w->dpt + w->dvt)) * sizeof(double));
}

/* Row r's unscaled scores sr[0..nt) and dP dpr, the first lim > 0 keys
 * allowed: sr becomes P, dpr dS = P (dP - D) scale, D = rowsum(P dP)
 * (both 0 past lim). */
static void a64_bw_row(double *sr, double *dpr, int64_t nt, int64_t lim,
                       double scale)
{
    /* the vectors up to lim's only (on the causal diagonal the rest is
     * masked: it was up to half of a row's exps), then P and dS 0 */
    const int64_t lw = a64_up(lim, RS_W);
    const rd vsc = rs_d1(scale);
    for (int64_t c = 0; c < lw; c += RS_W)
        rs_stored(sr + c, rs_mul(rs_loadd(sr + c), vsc));
    for (int64_t c = lim; c < lw; c++) {
        sr[c] = -INFINITY;
        dpr[c] = 0;
    }
    rd vmx = rs_d1(-INFINITY);
    for (int64_t c = 0; c < lw; c += RS_W)
        vmx = rs_max(vmx, rs_loadd(sr + c));
    const rd vm = rs_d1(v64_hmax(vmx));
    rd vl = rs_d1(0.0), vd = rs_d1(0.0);
    for (int64_t c = 0; c < lw; c += RS_W) {
        const rd e = dx_exp_neg(rs_sub(rs_loadd(sr + c), vm));
        rs_stored(sr + c, e);
        vl = rs_add(vl, e);
        vd = rs_fma(e, rs_loadd(dpr + c), vd);
    }
    const double l = dx_hsum(vl);
    const rd vil = rs_d1(1 / l), vdd = rs_d1(dx_hsum(vd) / l);
    for (int64_t c = 0; c < lw; c += RS_W) {
        const rd p = rs_mul(rs_loadd(sr + c), vil);
        rs_stored(sr + c, p);
        rs_stored(dpr + c,
                  rs_mul(rs_mul(p, rs_sub(rs_loadd(dpr + c), vdd)), vsc));
    }
    for (int64_t c = lw; c < nt; c++)
        sr[c] = dpr[c] = 0;
}

/* Query block [i0, i0 + qn) of head h (its k, v packed): the scores,
 * the rows, the three products, its dq written. */
static void a64_bw_query_block(const tb_cpu_attn_job *j, a64_bw_scratch *w,
                               int64_t h, int64_t i0, int64_t qn)
{
    const int64_t BQ = TB_ATTN_BQ, D = j->D, Dv = j->Dv, skp = w->skp;
    const int64_t dpt = w->dpt, dvt = w->dvt;
    const int64_t q4 = a64_up(qn, 4), nk = tb_cpu_attn_keys(j, i0, qn);
    const int64_t nt = a64_up(nk, A64_T), k4 = a64_up(nk, 4);
    const bool causal = j->causal;
    const double *q = (const double *)j->in[1].data + (h * j->Sq + i0) * D;
    const double *g = (const double *)j->in[0].data + (h * j->Sq + i0) * Dv;
    for (int64_t r = 0; r < BQ; r++) {
        for (int64_t d = 0; d < D; d++)
            w->q[r * dpt + d] = r < qn ? q[r * D + d] : 0;
        for (int64_t e = 0; e < Dv; e++)
            w->g[r * dvt + e] = r < qn ? g[r * Dv + e] : 0;
    }
    for (int64_t r = 0; r < q4; r += 4)
        for (int64_t c = 0; c < nt; c += A64_T) {
            if (causal && c > i0 + r + 3) /* wholly masked */
                break;
            a64_tile(D, w->q + r * dpt, dpt, w->kt + c, skp,
                     w->s + r * skp + c, skp, 0);
            a64_tile(Dv, w->g + r * dvt, dvt, w->vt + c, skp,
                     w->dp + r * skp + c, skp, 0);
        }
    for (int64_t r = 0; r < q4; r++) {
        const int64_t lim = r >= qn                    ? 0
                            : causal && i0 + r + 1 < nk ? i0 + r + 1
                                                        : nk;
        if (lim == 0) /* a padding row: no weight */
            for (int64_t c = 0; c < nt; c++)
                w->s[r * skp + c] = w->dp[r * skp + c] = 0;
        else
            a64_bw_row(w->s + r * skp, w->dp + r * skp, nt, lim, j->scale);
    }
    /* dq [r..r+4) = dS k over the keys row r + 3 may see */
    for (int64_t r = 0; r < q4; r += 4) {
        const int64_t kr = causal && i0 + r + 4 < nk ? i0 + r + 4 : nk;
        for (int64_t e = 0; e < dpt; e += A64_T)
            a64_tile(kr, w->dp + r * skp, skp, w->k + e, dpt,
                     w->dq + r * dpt + e, dpt, 0);
    }
    /* dv, dk [c..c+4) over the rows that see key c: from c - i0 */
    for (int64_t c = 0; c < k4; c += 4) {
        const int64_t r0 = causal && c > i0 ? c - i0 : 0;
        if (r0 >= q4)
            continue;
        for (int64_t e = 0; e < dvt; e += A64_T)
            a64_tile_at(q4 - r0, w->s + r0 * skp + c, skp,
                        w->g + r0 * dvt + e, dvt, w->dv + c * dvt + e, dvt);
        for (int64_t e = 0; e < dpt; e += A64_T)
            a64_tile_at(q4 - r0, w->dp + r0 * skp + c, skp,
                        w->q + r0 * dpt + e, dpt, w->dk + c * dpt + e, dpt);
    }
    double *dq = (double *)j->out[0].data + (h * j->Sq + i0) * D;
    for (int64_t r = 0; r < qn; r++)
        memcpy(dq + r * D, w->dq + r * dpt, (size_t)D * sizeof(double));
}

static void a64_sdpa_bw_part(void *arg, int part, int nparts)
{
    tb_cpu_attn_job *j = arg;
    int64_t h0, h1;
    tb_cpu_span(j->BH, 1, part, nparts, &h0, &h1);
    if (h0 >= h1)
        return;
    a64_bw_scratch w;
    double *buf = a64_bw_scratch_get(j, &w);
    if (!buf) {
        j->rc[part] = TB_ENOMEM;
        return;
    }
    const int64_t D = j->D, Dv = j->Dv, Sk = j->Sk;
    for (int64_t h = h0; h < h1; h++) {
        a64_bw_pack_head(j, &w, h);
        for (int64_t i0 = 0; i0 < j->Sq; i0 += TB_ATTN_BQ)
            a64_bw_query_block(j, &w, h, i0,
                               j->Sq - i0 < TB_ATTN_BQ ? j->Sq - i0
                                                       : TB_ATTN_BQ);
        double *dk = (double *)j->out[1].data + h * Sk * D;
        double *dv = (double *)j->out[2].data + h * Sk * Dv;
        for (int64_t c = 0; c < Sk; c++) {
            memcpy(dk + c * D, w.dk + c * w.dpt, (size_t)D * sizeof(double));
            memcpy(dv + c * Dv, w.dv + c * w.dvt,
                   (size_t)Dv * sizeof(double));
        }
    }
    tb_free(buf);
}

/* The entry points of level `lv` (its name suffix). */
#define A64_ENTRIES(lv)                                                   \
    int TB_CPU_KFN(sdpa, f64, lv)(void *ctx, const tb_tensor *in,         \
                                  tb_tensor *out, const tb_params *p)     \
    {                                                                     \
        tb_cpu_attn_job j;                                                \
        int rc = tb_cpu_attn_begin(ctx, TB_F64, in, out, p, &j);          \
        return rc ? rc : tb_cpu_attn_run(ctx, &j, a64_sdpa_part);         \
    }                                                                     \
    int TB_CPU_KFN(sdpa_backward, f64, lv)(void *ctx, const tb_tensor *in,\
                                           tb_tensor *out,                \
                                           const tb_params *p)            \
    {                                                                     \
        tb_cpu_attn_job j;                                                \
        int rc = tb_cpu_attn_bw_begin(ctx, TB_F64, in, out, p, &j);       \
        return rc ? rc : tb_cpu_attn_bw_run(ctx, &j, a64_sdpa_bw_part);   \
    }

#endif
