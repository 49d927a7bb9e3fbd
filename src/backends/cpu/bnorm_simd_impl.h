/* batch_norm, group_norm and their gradients, the SIMD rows of f32 and
 * f64 from one source: a template over the element type, for inclusion
 * by bnorm_avx2.c and bnorm_avx512.c only (each built with its level's
 * flags).  Included without BN_F32 it includes itself once per dtype:
 * BN_F32 1 (f32, 8 or 16 float lanes, prefix b32_) and 0 (f64, 4 or 8
 * double lanes, prefix b64_), BN_P(name) the instance's prefix; the
 * includer then writes BN_ENTRIES(f32, lv, b32_parts) and BN_ENTRIES(f64,
 * lv, b64_parts).  bnorm_c.c's
 * parts on the same driver (bnorm.h: the same split, the same per-pair
 * and per-channel statistics in double), with their loops in lanes of
 * the element type:
 *  - every sum runs in four vector accumulators of the element type,
 *    flushed into double lanes every BN_BLK vectors (f32: 8 terms a lane
 *    at most in float, 2^-21 of their magnitudes) that a channel's runs
 *    share (BN_P(stat)), added lane by lane at the end;
 *  - the statistics in one pass, shifted by c (the mean of the run's
 *    first 16 values, rounded to the element type): the sums of d = x -
 *    c and d^2, ss = sum d^2 - (sum d)^2 / n, unless (sum d)^2 / n is
 *    over 3/4 of sum d^2 (the subtraction would lose more than 2 bits):
 *    then a second pass shifted by the mean (rounded);
 *  - the loops over values take their double constants rounded to the
 *    element type around a shift c that the element type holds (the mean
 *    rounded), the shift's error folded into the constant term in double:
 *    y = (x - c) sc + (b + sc (c - mean)); the gradients' sums of g and
 *    g (x - c), sum g xh = rstd (sum g (x - c) - (mean - c) sum g); dx =
 *    A g + B (x - c) + K with A = k wc, B = -k rstd b, K = -k a + B (c -
 *    mean).
 *  - batch_norm in training pipelines its channels: channel c + 1's
 *    statistics sums run sample by sample alongside channel c's y, so
 *    the read of x from L3 overlaps y's stores (10% faster than one
 *    channel at a time here; the gradients and f32 group_norm measured
 *    no gain from it and do not; 16-bit group_norm does, by pairs), and
 *    channel c + 2's runs are prefetched a channel ahead; the short
 *    strided runs of the statistics pass and of the gradient's g are
 *    prefetched BN_PF_RUNS ahead.
 * Every result is still the same bits at any thread count (a pair or a
 * channel is one thread's).  checkasm holds the rows to the C rows and
 * to the reference within the ops' tolerance (TOL_ACC: f32 1e-5 relative
 * plus 2e-6 sqrt(n)). */
#ifndef BN_F32
#ifndef BN_ONLY_BF16
#define BN_H16 0
#define BN_F32 1
#define BN_P(name) b32_##name
#include "bnorm_simd_impl.h"
#undef BN_F32
#undef BN_P
#define BN_F32 0
#define BN_P(name) b64_##name
#include "bnorm_simd_impl.h"
#undef BN_F32
#undef BN_P
#undef BN_H16
#endif
#if (defined(BN_WITH_16) || defined(BN_ONLY_BF16)) && defined(__AVX512F__)
#define BN_F32 1
#define BN_H16 1
#define BN_P(name) b16b_##name
#include "bnorm_simd_impl.h"
#undef BN_H16
#undef BN_P
#ifndef BN_ONLY_BF16
#define BN_H16 2
#define BN_P(name) b16h_##name
#include "bnorm_simd_impl.h"
#undef BN_H16
#undef BN_P
#endif
#undef BN_F32
#endif
#else
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "bnorm.h"
#include "cpu_internal.h"
#include "dvec_simd.h"
#include "kreg.h"

#ifndef TB_BACKENDS_CPU_BNORM_SIMD_ONCE
#define TB_BACKENDS_CPU_BNORM_SIMD_ONCE
/* the lanes of a double vector added, as a tree (halves added, then
 * their halves: a short chain where a pair's or a channel's results
 * wait on it) */
static inline double bn_hsum(rd v)
{
#if RS_W == 8
    const __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(v),
                                    _mm512_extractf64x4_pd(v, 1));
#else
    const __m256d h = v;
#endif
    const __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h),
                                 _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
}

/* Runs ahead that the loops over a channel's strided runs prefetch
 * (batch_norm and its gradient: one run per sample, C S values apart),
 * and the longest run they prefetch whole: the hardware prefetchers
 * follow a run, not the jump to the next, so each short run would start
 * with an L3 miss; longer runs are streams they follow. */
#define BN_PF_RUNS 4
#define BN_PF_BYTES 4096

/* the lines of p[0 .. bytes) when bytes is at most BN_PF_BYTES */
static inline void bn_prefetch(const void *p, int64_t bytes)
{
    if (bytes <= BN_PF_BYTES)
        for (int64_t l = 0; l < bytes; l += 64)
            _mm_prefetch((const char *)p + l, _MM_HINT_T0);
}

/* The entry points of dtype dt (f32, f64) at level lv (its name suffix),
 * on an instance's parts. */
#define BN_ENTRY(op, dt, lv, parts)                                       \
    int TB_CPU_KFN(op, dt, lv)(void *ctx, const tb_tensor *in,            \
                               tb_tensor *out, const tb_params *p)        \
    {                                                                     \
        return tb_cpu_bnorm_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, \
                                p, &parts);                               \
    }
#define BN_ENTRIES(dt, lv, parts)                                         \
    BN_ENTRY(batch_norm, dt, lv, parts)                                   \
    BN_ENTRY(group_norm, dt, lv, parts)                                   \
    BN_ENTRY(batch_norm_backward, dt, lv, parts)                          \
    BN_ENTRY(group_norm_backward, dt, lv, parts)
#endif

/* The element type's vectors: BV of BV_W lanes; BV_ACC(d, v) adds v's
 * lanes into the double vector d. */
#if BN_F32
#if BN_H16 /* bf16 (1) or f16 (2) stored, f32 lanes: norm16_simd.h */
#define BN_T uint16_t
#define BN_H_LD (BN_H16 == 1 ? nb_ld_bf16 : nb_ld_f16)
#define BN_H_ST (BN_H16 == 1 ? nb_st_bf16 : nb_st_f16)
#define BN_H_ST2 (BN_H16 == 1 ? nb_st2_bf16 : nb_st2_f16)
#define BN_GET(p, i)                                                      \
    (BN_H16 == 1 ? tb_bf16_to_f32((p)[i]) : tb_f16_to_f32((p)[i]))
#define BN_PUT(p, i, v)                                                   \
    ((p)[i] = BN_H16 == 1 ? tb_f32_to_bf16((float)(v))                    \
                          : tb_f32_to_f16((float)(v)))
#else
#define BN_T float
#define BN_GET(p, i) ((p)[i])
#define BN_PUT(p, i, v) ((p)[i] = (float)(v))
#endif
#define BN_F float
#if BN_H16
#define BV __m512
#define BV_W 16
#define BV_LD(p) BN_H_LD((p), 0, 0xffff)
#define BV_ST(p, v) BN_H_ST((p), 0, 0xffff, (v))
#define BV_ST2(p, a, b) BN_H_ST2((p), 0, (a), (b))
#define BV_1 _mm512_set1_ps
#define BV_ADD _mm512_add_ps
#define BV_SUB _mm512_sub_ps
#define BV_FMA _mm512_fmadd_ps
#define BV_ACC(d, v)                                                      \
    ((d) = _mm512_add_pd(                                                 \
         (d), _mm512_add_pd(                                              \
                  _mm512_cvtps_pd(_mm512_castps512_ps256(v)),             \
                  _mm512_cvtps_pd(_mm512_extractf32x8_ps((v), 1)))))
#elif defined(__AVX512F__)
#define BV __m512
#define BV_W 16
#define BV_LD _mm512_loadu_ps
#define BV_ST _mm512_storeu_ps
#define BV_1 _mm512_set1_ps
#define BV_ADD _mm512_add_ps
#define BV_SUB _mm512_sub_ps
#define BV_FMA _mm512_fmadd_ps
#define BV_ACC(d, v)                                                      \
    ((d) = _mm512_add_pd(                                                 \
         (d), _mm512_add_pd(                                              \
                  _mm512_cvtps_pd(_mm512_castps512_ps256(v)),             \
                  _mm512_cvtps_pd(_mm512_extractf32x8_ps((v), 1)))))
#else
#define BV __m256
#define BV_W 8
#define BV_LD _mm256_loadu_ps
#define BV_ST _mm256_storeu_ps
#define BV_1 _mm256_set1_ps
#define BV_ADD _mm256_add_ps
#define BV_SUB _mm256_sub_ps
#define BV_FMA _mm256_fmadd_ps
#define BV_ACC(d, v)                                                      \
    ((d) = _mm256_add_pd(                                                 \
         (d), _mm256_add_pd(                                              \
                  _mm256_cvtps_pd(_mm256_castps256_ps128(v)),             \
                  _mm256_cvtps_pd(_mm256_extractf128_ps((v), 1)))))
#endif
#define BN_BLK 8 /* vectors per accumulator between flushes */
#else
#define BN_T double
#define BN_F double
#define BN_GET(p, i) ((p)[i])
#define BN_PUT(p, i, v) ((p)[i] = (double)(v))
#define BV rd
#define BV_W RS_W
#define BV_LD rs_loadd
#define BV_ST rs_stored
#define BV_1 rs_d1
#define BV_ADD rs_add
#define BV_SUB rs_sub
#define BV_FMA rs_fma
#define BV_ACC(d, v) ((d) = rs_add((d), (v)))
#define BN_BLK 64
#endif
#ifndef BV_ST2 /* two vectors stored, a's lanes then b's */
#define BV_ST2(p, a, b) (BV_ST((p), (a)), BV_ST((p) + BV_W, (b)))
#endif

/* Sums in the making around a shift c: two in double lanes (d1, d2)
 * and their scalar tails (s1, s2).  The statistics' d = x - c and d^2;
 * the gradients' g and g (x - c). */
typedef struct {
    BN_F c;
    rd d1, d2;
    double s1, s2;
} BN_P(stat);

/* st empty around c */
static void BN_P(stat_zero)(BN_P(stat) *st, BN_F c)
{
    st->c = c;
    st->d1 = st->d2 = rs_d1(0.0);
    st->s1 = st->s2 = 0;
}

/* st's two sums, its lanes added then its tails */
static void BN_P(stat_tot)(const BN_P(stat) *st, double *t1, double *t2)
{
    *t1 = bn_hsum(st->d1) + st->s1;
    *t2 = bn_hsum(st->d2) + st->s2;
}

/* x - c in the forward loops of the 16-bit instances by an FMA, x 1 +
 * (-c), the same bits (one rounding of the exact difference): Zen 4
 * adds on two pipes, which the conversions share, and multiplies and
 * FMAs on two others (group_norm f16 -5% beside the other change
 * alone; f32, which converts nothing, 11% slower with it: tbench ab,
 * 8 blocks, load ~15) */
#if BN_H16
#define BN_XSUB(x, vnc) BV_FMA((x), BV_1(1), (vnc))
#else
#define BN_XSUB(x, vnc) BV_ADD((x), (vnc))
#endif

/* The forward rows' loads: the 16-bit instances also store the values
 * of the vector steps widened to sw[0 ..) where sw is not NULL (f32 and
 * f64: sw unused) */
#if BN_H16
#define BN_FLD(p, k)                                                      \
    (sw ? BN_P(ldw)((p) + (k), sw + (k)) : BV_LD((p) + (k)))
static inline __attribute__((always_inline)) BV BN_P(ldw)(const BN_T *p,
                                                          float *o)
{
    const BV v = BV_LD(p);
    _mm512_storeu_ps(o, v);
    return v;
}
#else
#define BN_FLD(p, k) BV_LD((p) + (k))
#endif
/* st += the sums of d = x[i] - c and d^2, i < n: fwd 0 (the gradients)
 * as x - c; fwd 1 (the forward rows) as BN_XSUB, loaded by BN_FLD (sw:
 * the widened copy, or NULL): the same sums, the same bits.  Inlined
 * into BN_P(sums) and BN_P(fsums) with fwd a constant. */
static inline __attribute__((always_inline)) void
BN_P(sums_)(const BN_T *x, int64_t n, BN_P(stat) *st, float *sw, int fwd)
{
    const BV vc = BV_1(st->c), vnc = BV_1(-st->c), z = BV_1(0);
    rd d1 = st->d1, d2 = st->d2;
    int64_t i = 0;
    (void)sw;
#define BN_E(k) (fwd ? BN_XSUB(BN_FLD(x, i + (k)), vnc)                     \
                     : BV_SUB(BV_LD(x + i + (k)), vc))
    while (i + 4 * BV_W <= n) {
        BV a0 = z, a1 = z, a2 = z, a3 = z, q0 = z, q1 = z, q2 = z, q3 = z;
        for (int k = 0; k < BN_BLK && i + 4 * BV_W <= n; k++, i += 4 * BV_W) {
            const BV e0 = BN_E(0);
            const BV e1 = BN_E(BV_W);
            const BV e2 = BN_E(2 * BV_W);
            const BV e3 = BN_E(3 * BV_W);
            a0 = BV_ADD(a0, e0);
            a1 = BV_ADD(a1, e1);
            a2 = BV_ADD(a2, e2);
            a3 = BV_ADD(a3, e3);
            q0 = BV_FMA(e0, e0, q0);
            q1 = BV_FMA(e1, e1, q1);
            q2 = BV_FMA(e2, e2, q2);
            q3 = BV_FMA(e3, e3, q3);
        }
        BV_ACC(d1, BV_ADD(BV_ADD(a0, a1), BV_ADD(a2, a3)));
        BV_ACC(d2, BV_ADD(BV_ADD(q0, q1), BV_ADD(q2, q3)));
    }
#undef BN_E
    for (; i < n; i++) {
        const double e = BN_GET(x, i) - st->c;
        st->s1 += e;
        st->s2 += e * e;
    }
    st->d1 = d1;
    st->d2 = d2;
}
static void BN_P(sums)(const BN_T *x, int64_t n, BN_P(stat) *st)
{
    BN_P(sums_)(x, n, st, NULL, 0);
}
static void BN_P(fsums)(const BN_T *x, int64_t n, BN_P(stat) *st,
                        float *sw)
{
    BN_P(sums_)(x, n, st, sw, 1);
}

/* st's shift: the mean of the first min(len, 16) values at x */
static void BN_P(stat_init)(BN_P(stat) *st, const BN_T *x, int64_t len)
{
    const int64_t h = len < 16 ? len : 16;
    double c0 = 0;
    if (h == 16) { /* by vectors, added as a tree (a short chain) */
        rd acc = rs_d1(0.0);
        for (int k = 0; k < 16; k += BV_W)
            BV_ACC(acc, BV_LD(x + k));
        BN_P(stat_zero)(st, (BN_F)(bn_hsum(acc) / 16));
        return;
    }
    for (int64_t j = 0; j < h; j++)
        c0 += BN_GET(x, j);
    BN_P(stat_zero)(st, (BN_F)(h > 0 ? c0 / (double)h : 0));
}

/* The mean and (*ss) the sum of squared deviations of st's n = nb * len
 * values at x + k * stride + j (k < nb, j < len), whose sums st holds;
 * around the mean again when the shifted sums would cancel more than 2
 * bits (x NULL: never; the caller has made them around the mean). */
static double BN_P(stat_done)(BN_P(stat) *st, const BN_T *x, int64_t nb,
                              int64_t stride, int64_t len, double *ss)
{
    const double n = (double)(nb * len);
    *ss = 0;
    if (!(n > 0))
        return 0;
    double s1, s2;
    BN_P(stat_tot)(st, &s1, &s2);
    double m = st->c + s1 / n, r = s1 * s1 / n;
    if (x && r > 0.75 * s2) { /* far from c: again around the mean */
        BN_P(stat_zero)(st, (BN_F)m);
        for (int64_t k = 0; k < nb; k++)
            BN_P(sums)(x + k * stride, len, st);
        BN_P(stat_tot)(st, &s1, &s2);
        m = st->c + s1 / n;
        r = s1 * s1 / n;
    }
    *ss = s2 - r > 0 ? s2 - r : 0;
    return m;
}

/* Mean and the sum of squared deviations of the n values at x + k *
 * stride + j for k < nb, j < len (n = nb * len), in double. */
static double BN_P(stats)(const BN_T *x, int64_t nb, int64_t stride,
                          int64_t len, double *ss)
{
    BN_P(stat) st;
    BN_P(stat_init)(&st, x, len);
    for (int64_t k = 0; k < nb; k++) {
        if (k + BN_PF_RUNS < nb)
            bn_prefetch(x + (k + BN_PF_RUNS) * stride,
                        len * (int64_t)sizeof(BN_T));
        BN_P(sums)(x + k * stride, len, &st);
    }
    return BN_P(stat_done)(&st, x, nb, stride, len, ss);
}

/* y[i] = (x[i] - m) sc + b, i < n */
static void BN_P(affine)(const BN_T *x, BN_T *y, int64_t n, double m,
                         double sc, double b)
{
    const BN_F c = (BN_F)m, sh = (BN_F)(b + sc * (c - m));
    const BV vnc = BV_1(-c), vs = BV_1((BN_F)sc), vb = BV_1(sh);
    int64_t i = 0;
    for (; i + 2 * BV_W <= n; i += 2 * BV_W) {
        const BV y0 = BV_FMA(BN_XSUB(BV_LD(x + i), vnc), vs, vb);
        const BV y1 = BV_FMA(BN_XSUB(BV_LD(x + i + BV_W), vnc), vs, vb);
        BV_ST2(y + i, y0, y1);
    }
    for (; i < n; i++)
        BN_PUT(y, i, fma(BN_GET(x, i) - m, sc, b));
}

#if BN_H16
/* BN_P(affine) on x's values widened in xs (vector steps; the tail from
 * x): the same bits */
static void BN_P(affine_s)(const float *xs, const BN_T *x, BN_T *y,
                           int64_t n, double m, double sc, double b)
{
    const BN_F c = (BN_F)m, sh = (BN_F)(b + sc * (c - m));
    const BV vnc = BV_1(-c), vs = BV_1((BN_F)sc), vb = BV_1(sh);
    int64_t i = 0;
    for (; i + 2 * BV_W <= n; i += 2 * BV_W) {
        const BV y0 = BV_FMA(BN_XSUB(_mm512_loadu_ps(xs + i), vnc), vs, vb);
        const BV y1 =
            BV_FMA(BN_XSUB(_mm512_loadu_ps(xs + i + BV_W), vnc), vs, vb);
        BV_ST2(y + i, y0, y1);
    }
    for (; i < n; i++)
        BN_PUT(y, i, fma(BN_GET(x, i) - m, sc, b));
}
#endif

/* st += the sums of g[i] and g[i] (x[i] - c), i < n */
static void BN_P(gsums)(const BN_T *g, const BN_T *x, int64_t n,
                        BN_P(stat) *st)
{
    const BV vc = BV_1(st->c), z = BV_1(0);
    rd d1 = st->d1, d2 = st->d2;
    int64_t i = 0;
    while (i + 2 * BV_W <= n) {
        BV s0 = z, s1 = z, t0 = z, t1 = z;
        for (int k = 0; k < BN_BLK && i + 2 * BV_W <= n; k++, i += 2 * BV_W) {
            const BV g0 = BV_LD(g + i), g1 = BV_LD(g + i + BV_W);
            const BV e0 = BV_SUB(BV_LD(x + i), vc);
            const BV e1 = BV_SUB(BV_LD(x + i + BV_W), vc);
            s0 = BV_ADD(s0, g0);
            s1 = BV_ADD(s1, g1);
            t0 = BV_FMA(g0, e0, t0);
            t1 = BV_FMA(g1, e1, t1);
        }
        BV_ACC(d1, BV_ADD(s0, s1));
        BV_ACC(d2, BV_ADD(t0, t1));
    }
    for (; i < n; i++) {
        st->s1 += BN_GET(g, i);
        st->s2 += (double)BN_GET(g, i) * (BN_GET(x, i) - st->c);
    }
    st->d1 = d1;
    st->d2 = d2;
}

/* One pass over x and g: st += the sums of d = x[i] - c and d^2, gs +=
 * the sums of g[i] and g[i] d (gs's c is st's), i < n: the statistics'
 * and the gradients' sums from one read of the values; with keep (the
 * 16-bit rows' BN_P(xgsums_w)) the widened g and x also stored to
 * gw[0..n), xw[0..n).  Inlined with keep a constant. */
#if BN_H16
#define BN_KEEPW(p, v) _mm512_storeu_ps((p), (v))
#else
#define BN_KEEPW(p, v) ((void)(p), (void)(v))
#endif
static inline __attribute__((always_inline)) void
BN_P(xgsums_)(const BN_T *g, const BN_T *x, int64_t n, BN_P(stat) *st,
              BN_P(stat) *gs, float *gw, float *xw, int keep)
{
    const BV vc = BV_1(st->c), z = BV_1(0);
    rd d1 = st->d1, d2 = st->d2, h1 = gs->d1, h2 = gs->d2;
    int64_t i = 0;
    while (i + 2 * BV_W <= n) {
        BV a0 = z, a1 = z, q0 = z, q1 = z, s0 = z, s1 = z, t0 = z, t1 = z;
        for (int k = 0; k < BN_BLK && i + 2 * BV_W <= n; k++, i += 2 * BV_W) {
            const BV x0 = BV_LD(x + i), x1 = BV_LD(x + i + BV_W);
            const BV g0 = BV_LD(g + i), g1 = BV_LD(g + i + BV_W);
            if (keep) {
                BN_KEEPW(xw + i, x0);
                BN_KEEPW(xw + i + BV_W, x1);
                BN_KEEPW(gw + i, g0);
                BN_KEEPW(gw + i + BV_W, g1);
            }
            const BV e0 = BV_SUB(x0, vc), e1 = BV_SUB(x1, vc);
            a0 = BV_ADD(a0, e0);
            a1 = BV_ADD(a1, e1);
            q0 = BV_FMA(e0, e0, q0);
            q1 = BV_FMA(e1, e1, q1);
            s0 = BV_ADD(s0, g0);
            s1 = BV_ADD(s1, g1);
            t0 = BV_FMA(g0, e0, t0);
            t1 = BV_FMA(g1, e1, t1);
        }
        BV_ACC(d1, BV_ADD(a0, a1));
        BV_ACC(d2, BV_ADD(q0, q1));
        BV_ACC(h1, BV_ADD(s0, s1));
        BV_ACC(h2, BV_ADD(t0, t1));
    }
    for (; i < n; i++) {
        if (keep) {
            xw[i] = (float)BN_GET(x, i);
            gw[i] = (float)BN_GET(g, i);
        }
        const double e = BN_GET(x, i) - st->c;
        st->s1 += e;
        st->s2 += e * e;
        gs->s1 += BN_GET(g, i);
        gs->s2 += (double)BN_GET(g, i) * e;
    }
    st->d1 = d1;
    st->d2 = d2;
    gs->d1 = h1;
    gs->d2 = h2;
}
#undef BN_KEEPW
static void BN_P(xgsums)(const BN_T *g, const BN_T *x, int64_t n,
                         BN_P(stat) *st, BN_P(stat) *gs)
{
    BN_P(xgsums_)(g, x, n, st, gs, NULL, NULL, 0);
}

#if BV_W == 16
/* BN_P(xgsums) on two runs of n values (g0, x0 and g1, x1) in lockstep:
 * their f32 sums in accumulators of their own, flushed into double
 * lanes together (one flush per two runs where a run is a block) */
static void BN_P(xgsums2)(const BN_T *g0, const BN_T *x0, const BN_T *g1,
                          const BN_T *x1, int64_t n, BN_P(stat) *st,
                          BN_P(stat) *gs)
{
    const BV vc = BV_1(st->c), z = BV_1(0);
    rd d1 = st->d1, d2 = st->d2, h1 = gs->d1, h2 = gs->d2;
    int64_t i = 0;
    while (i + 2 * BV_W <= n) {
        BV a0 = z, a1 = z, a2 = z, a3 = z, q0 = z, q1 = z, q2 = z, q3 = z;
        BV s0 = z, s1 = z, s2 = z, s3 = z, t0 = z, t1 = z, t2 = z, t3 = z;
        for (int k = 0; k < BN_BLK && i + 2 * BV_W <= n; k++, i += 2 * BV_W) {
            const BV e0 = BV_SUB(BV_LD(x0 + i), vc);
            const BV e1 = BV_SUB(BV_LD(x0 + i + BV_W), vc);
            const BV e2 = BV_SUB(BV_LD(x1 + i), vc);
            const BV e3 = BV_SUB(BV_LD(x1 + i + BV_W), vc);
            const BV u0 = BV_LD(g0 + i), u1 = BV_LD(g0 + i + BV_W);
            const BV u2 = BV_LD(g1 + i), u3 = BV_LD(g1 + i + BV_W);
            a0 = BV_ADD(a0, e0);
            a1 = BV_ADD(a1, e1);
            a2 = BV_ADD(a2, e2);
            a3 = BV_ADD(a3, e3);
            q0 = BV_FMA(e0, e0, q0);
            q1 = BV_FMA(e1, e1, q1);
            q2 = BV_FMA(e2, e2, q2);
            q3 = BV_FMA(e3, e3, q3);
            s0 = BV_ADD(s0, u0);
            s1 = BV_ADD(s1, u1);
            s2 = BV_ADD(s2, u2);
            s3 = BV_ADD(s3, u3);
            t0 = BV_FMA(u0, e0, t0);
            t1 = BV_FMA(u1, e1, t1);
            t2 = BV_FMA(u2, e2, t2);
            t3 = BV_FMA(u3, e3, t3);
        }
        BV_ACC(d1, BV_ADD(BV_ADD(a0, a1), BV_ADD(a2, a3)));
        BV_ACC(d2, BV_ADD(BV_ADD(q0, q1), BV_ADD(q2, q3)));
        BV_ACC(h1, BV_ADD(BV_ADD(s0, s1), BV_ADD(s2, s3)));
        BV_ACC(h2, BV_ADD(BV_ADD(t0, t1), BV_ADD(t2, t3)));
    }
    st->d1 = d1;
    st->d2 = d2;
    gs->d1 = h1;
    gs->d2 = h2;
    if (i < n) { /* the tails, one run after the other */
        BN_P(xgsums)(g0 + i, x0 + i, n - i, st, gs);
        BN_P(xgsums)(g1 + i, x1 + i, n - i, st, gs);
    }
}
#endif

/* Whether st's n values (nx, the sums of d = x - c and d^2) are far
 * enough from c that ss = sum d^2 - (sum d)^2 / n would lose more than 2
 * bits (BN_P(stat_done)'s test); *m their mean. */
static bool BN_P(stat_far)(const BN_P(stat) *st, double n, double *m)
{
    double s1, s2;
    BN_P(stat_tot)(st, &s1, &s2);
    *m = n > 0 ? st->c + s1 / n : 0;
    return n > 0 && s1 * s1 / n > 0.75 * s2;
}

/* dx[i] = k (g[i] wc - a - (x[i] - m) rstd b), i < n, as A g + B (x -
 * c) + K, g and x read by LDV (a vector) and GET (a value): the body of
 * BN_P(dx) (g and x as stored) and BN_P(dx_w) (widened f32 copies) */
#define BN_DX_BODY(LDV, GET)                                              \
    const BN_F c = (BN_F)m;                                               \
    const double A = k * wc, B = -k * rstd * b, K = -k * a + B * (c - m); \
    const BV vc = BV_1(c), va = BV_1((BN_F)A), vb = BV_1((BN_F)B);       \
    const BV vk = BV_1((BN_F)K);                                          \
    int64_t i = 0;                                                        \
    for (; i + 2 * BV_W <= n; i += 2 * BV_W) {                            \
        const BV e0 = BV_SUB(LDV(x + i), vc);                             \
        const BV e1 = BV_SUB(LDV(x + i + BV_W), vc);                      \
        BV_ST2(dx + i, BV_FMA(va, LDV(g + i), BV_FMA(vb, e0, vk)),        \
               BV_FMA(va, LDV(g + i + BV_W), BV_FMA(vb, e1, vk)));        \
    }                                                                     \
    for (; i + BV_W <= n; i += BV_W) {                                    \
        const BV e = BV_SUB(LDV(x + i), vc);                              \
        BV_ST(dx + i, BV_FMA(va, LDV(g + i), BV_FMA(vb, e, vk)));         \
    }                                                                     \
    for (; i < n; i++)                                                    \
        BN_PUT(dx, i, A * GET(g, i) + (B * (GET(x, i) - c) + K))
static void BN_P(dx)(const BN_T *g, const BN_T *x, BN_T *dx, int64_t n,
                     double m, double rstd, double k, double wc, double a,
                     double b)
{
    BN_DX_BODY(BV_LD, BN_GET);
}

/* batch_norm over channels [c0, c1) (bnorm_c.c's BATCH_NORM_CH).  In
 * training the statistics' sums of channel c + 1 run alongside channel
 * c's y, sample by sample (the same sums in the same order), so the read
 * of c + 1's values from L3 overlaps y's stores; c's values are in L2. */
#if !BN_H16 /* (batch_norm has no 16-bit row) */
static void BN_P(batch_norm)(void *arg, int part, int nparts)
{
    const tb_cpu_bnorm_job *j = arg;
    const BN_T *x = j->in[0].data, *w = j->in[1].data;
    const BN_T *b = j->in[2].data, *run = j->in[3].data;
    BN_T *y = j->out[0].data, *ro = j->out[1].data;
    const int64_t C = j->C, S = j->S;
    int64_t c0, c1;
    tb_cpu_span(C, 1, part, nparts, &c0, &c1);
    BN_P(stat) st, nx;
    BN_P(stat_zero)(&st, 0);
    nx = st;
    if (j->training && c0 < c1) {
        BN_P(stat_init)(&st, x + c0 * S, S);
        for (int64_t i = 0; i < j->N; i++)
            BN_P(fsums)(x + (i * C + c0) * S, S, &st, NULL);
    }
    for (int64_t c = c0; c < c1; c++) {
        double rm = run[c], rv = run[C + c], mean = rm, var = rv;
        if (j->training) {
            const double n = (double)(j->N * S);
            double ss;
            mean = BN_P(stat_done)(&st, x + c * S, j->N, C * S, S, &ss);
            var = ss / n;
            rm = (1 - j->momentum) * rm + j->momentum * mean;
            rv = (1 - j->momentum) * rv + j->momentum * (ss / (n - 1));
        }
        const double sc = w[c] / sqrt(var + j->eps);
        const bool next = j->training && c + 1 < c1;
        if (next)
            BN_P(stat_init)(&nx, x + (c + 1) * S, S);
        const bool pf = j->training && c + 2 < c1;
        for (int64_t i = 0; i < j->N; i++) {
            const int64_t o = (i * C + c) * S;
            if (pf) /* channel c + 2's run: read a channel from now */
                bn_prefetch(x + o + 2 * S, S * (int64_t)sizeof(BN_T));
            if (next)
                BN_P(fsums)(x + o + S, S, &nx, NULL);
            BN_P(affine)(x + o, y + o, S, mean, sc, b[c]);
        }
        ro[c] = (BN_T)rm;
        ro[C + c] = (BN_T)rv;
        st = nx;
    }
}

#endif

/* group_norm over (sample, group) pairs [r0, r1) (GROUP_NORM_RG).  In
 * the 16-bit instances (BN_GN_PIPE) pair r + 1's statistics sums run
 * beside pair r's y, a block of BN_BLK steps (BN_GN_BLK values,
 * BN_P(sums)'s flush unit, so the same sums in the same order as one
 * call over the pair) before some of its channels: the pair's scalars
 * (folded sums, a division, a square root) then wait on loads issued a
 * pair earlier, not on the loop before them (bf16 and f16 -2.5%; f32
 * +2% to +4%, which sums each pair before its y: tbench ab, 12-16
 * blocks, load ~13). */
#define BN_GN_BLK (BN_BLK * 4 * BV_W)
#define BN_GN_PIPE (BN_H16 != 0)
#define BN_GN_SCR 4096
static void BN_P(group_norm)(void *arg, int part, int nparts)
{
    const tb_cpu_bnorm_job *j = arg;
    const BN_T *x = j->in[0].data, *w = j->in[1].data;
    const BN_T *b = j->in[2].data;
    BN_T *y = j->out[0].data;
    const int64_t cg = j->C / j->G, S = j->S, len = cg * S;
    const int64_t nb = (len + BN_GN_BLK - 1) / BN_GN_BLK;
    int64_t r0, r1;
    tb_cpu_span(j->N * j->G, 1, part, nparts, &r0, &r1);
    BN_P(stat) st, nx;
    BN_P(stat_zero)(&nx, 0);
    st = nx;
    float *sb[2] = {NULL, NULL};
#if BN_H16
    /* the 16-bit values widened once: pair r + 1's by its sums, read by
     * its y (two pairs of up to BN_GN_SCR values, every value in a vector
     * step; the second skewed off a 4 KiB multiple): f16 only, whose
     * vcvtph2ps shares the conversions' pipes (f16 -5.8%, bf16 -0.1%:
     * tbench ab, 12 blocks, load ~12) */
    _Alignas(64) float scr[2 * BN_GN_SCR + 32];
    if (BN_H16 == 2 && len <= BN_GN_SCR && len % (4 * BV_W) == 0) {
        sb[0] = scr;
        sb[1] = scr + BN_GN_SCR + 32;
    }
#endif
    if (r0 < r1) {
        BN_P(stat_init)(&st, x + r0 * len, len);
        BN_P(fsums)(x + r0 * len, len, &st, sb[r0 & 1]);
    }
    for (int64_t r = r0; r < r1; r++) {
        const BN_T *xr = x + r * len, *xn = xr + len;
        if (!BN_GN_PIPE && r > r0) {
            BN_P(stat_init)(&st, xr, len);
            BN_P(fsums)(xr, len, &st, NULL);
        }
        double ss;
        const double mean = BN_P(stat_done)(&st, xr, 1, 0, len, &ss);
        const double rstd = 1 / sqrt(ss / (double)len + j->eps);
        const bool next = BN_GN_PIPE && r + 1 < r1;
        if (next)
            BN_P(stat_init)(&nx, xn, len);
        int64_t kb = 0; /* xn's blocks summed */
        for (int64_t ch = 0; ch < cg; ch++) {
            const int64_t c = (r % j->G) * cg + ch;
            const int64_t ke = next ? (ch + 1) * nb / cg : 0;
            for (; kb < ke; kb++) {
                const int64_t i0 = kb * BN_GN_BLK;
                BN_P(fsums)(xn + i0,
                            len - i0 < BN_GN_BLK ? len - i0 : BN_GN_BLK, &nx,
                            sb[(r + 1) & 1] ? sb[(r + 1) & 1] + i0 : NULL);
            }
#if BN_H16
            if (sb[r & 1])
                BN_P(affine_s)(sb[r & 1] + ch * S, xr + ch * S,
                               y + r * len + ch * S, S, mean,
                               rstd * BN_GET(w, c), BN_GET(b, c));
            else
#endif
                BN_P(affine)(xr + ch * S, y + r * len + ch * S, S, mean,
                             rstd * BN_GET(w, c), BN_GET(b, c));
        }
        if (next)
            st = nx;
    }
}

/* batch_norm_backward over channels [c0, c1) (BATCH_NORM_BW_CH): the
 * statistics and the sums of g and g (x - c) in one pass around the
 * same shift c (x's and g's runs prefetched BN_PF_RUNS ahead; both
 * again around the mean when the statistics' test asks for it), then dx
 * from L2 (one pass fewer over x than statistics, then g's sums: f32
 * 151 -> 129 us, bf16 124 -> 102 us at 32x64x16x16); at 16 lanes two
 * samples' runs at a time (BN_P(xgsums2): half the flushes; bf16 102 ->
 * 99, f16 122 -> 116 us, f32 the same).  (Running the next
 * channel's statistics alongside the sums of g, as batch_norm does,
 * measured no faster.)  The dx pass runs the samples last to first: a
 * channel's runs lie C S values apart and share a few sets of L2, which
 * keep the last samples the first pass read, not the first ones (f32
 * 132 -> 130 us, bf16 98.3 -> 96.3, tbench ab, load ~10; the same bits). */
static void BN_P(batch_norm_bw)(void *arg, int part, int nparts)
{
    const tb_cpu_bnorm_job *j = arg;
    const BN_T *g = j->in[0].data, *x = j->in[1].data;
    const BN_T *w = j->in[2].data;
    BN_T *dx = j->out[0].data, *dw = j->out[1].data;
    BN_T *db = j->out[2].data;
    const int64_t C = j->C, S = j->S;
    const double n = (double)(j->N * S);
    int64_t c0, c1;
    tb_cpu_span(C, 1, part, nparts, &c0, &c1);
    for (int64_t c = c0; c < c1; c++) {
        double ss, sg, sgd, m0;
        BN_P(stat) st, gs;
        BN_P(stat_init)(&st, x + c * S, S);
        for (int pass = 0; pass < 2; pass++) {
            BN_P(stat_zero)(&gs, st.c);
            for (int64_t i = 0; i < j->N; i++) {
                const int64_t o = (i * C + c) * S;
                if (i + BN_PF_RUNS < j->N) {
                    bn_prefetch(x + o + BN_PF_RUNS * C * S,
                                S * (int64_t)sizeof(BN_T));
                    bn_prefetch(g + o + BN_PF_RUNS * C * S,
                                S * (int64_t)sizeof(BN_T));
                }
#if BV_W == 16
                if (i + 1 < j->N) { /* two samples' runs at once */
                    if (i + 1 + BN_PF_RUNS < j->N) {
                        bn_prefetch(x + o + (BN_PF_RUNS + 1) * C * S,
                                    S * (int64_t)sizeof(BN_T));
                        bn_prefetch(g + o + (BN_PF_RUNS + 1) * C * S,
                                    S * (int64_t)sizeof(BN_T));
                    }
                    BN_P(xgsums2)(g + o, x + o, g + o + C * S,
                                  x + o + C * S, S, &st, &gs);
                    i++;
                    continue;
                }
#endif
                BN_P(xgsums)(g + o, x + o, S, &st, &gs);
            }
            if (pass || !BN_P(stat_far)(&st, n, &m0))
                break;
            BN_P(stat_zero)(&st, (BN_F)m0); /* again around the mean */
        }
        const double mean = BN_P(stat_done)(&st, NULL, j->N, 0, S, &ss);
        const double rstd = 1 / sqrt((n > 0 ? ss / n : 0) + j->eps);
        BN_P(stat_tot)(&gs, &sg, &sgd);
        const double sgx = rstd * (sgd - (mean - gs.c) * sg);
        const double wr = BN_GET(w, c) * rstd, a = sg / n, b = sgx / n;
        for (int64_t i = j->N - 1; i >= 0; i--) {
            const int64_t o = (i * C + c) * S;
            BN_P(dx)(g + o, x + o, dx + o, S, mean, rstd, wr, 1, a, b);
        }
        BN_PUT(dw, c, sgx);
        BN_PUT(db, c, sg);
    }
}

#if BN_H16
/* The 16-bit rows' group_norm_backward keeps a pair's x and g widened
 * (BN_GN_W floats each at most, L1's) from its sums' pass for its dx
 * pass, which widened both again: f16's vcvtph2ps and vcvtps2ph take
 * 1.33 cycles each on shared pipes on Zen 4 (scripts/insn_tp.c; f16
 * 34.0 -> 29.6 us at [8,64,16,16]), bf16's vpermw 1 (28.7 -> 27.8;
 * tbench ab, load 10-12) */
#define BN_GN_W 2048
/* BN_P(xgsums) storing the widened g and x to gw[0..n), xw[0..n) */
static void BN_P(xgsums_w)(const BN_T *g, const BN_T *x, int64_t n,
                           BN_P(stat) *st, BN_P(stat) *gs, float *gw,
                           float *xw)
{
    BN_P(xgsums_)(g, x, n, st, gs, gw, xw, 1);
}

/* BN_P(dx) on the widened g and x (BN_P(xgsums_w)'s) */
#define BN_DX_GETW(p, i) ((p)[i])
static void BN_P(dx_w)(const float *g, const float *x, BN_T *dx, int64_t n,
                       double m, double rstd, double k, double wc,
                       double a, double b)
{
    BN_DX_BODY(_mm512_loadu_ps, BN_DX_GETW);
}
#undef BN_DX_GETW
#endif

/* group_norm_backward over (sample, group) pairs [r0, r1)
 * (GROUP_NORM_BW_RG): where a channel's run is at least a step of
 * BN_P(xgsums) (2 vectors), the pair's statistics and its channels'
 * sums of g and g (x - c) in one pass around one shift (again around
 * the mean when the statistics' test asks for it), else the statistics
 * first and the sums around their mean; then dx. */
static void BN_P(group_norm_bw)(void *arg, int part, int nparts)
{
    const tb_cpu_bnorm_job *j = arg;
    const BN_T *g = j->in[0].data, *x = j->in[1].data;
    const BN_T *w = j->in[2].data;
    BN_T *dx = j->out[0].data;
    const int64_t cg = j->C / j->G, S = j->S, len = cg * S;
    int64_t r0, r1;
    tb_cpu_span(j->N * j->G, 1, part, nparts, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        double ss, sgh = 0, sghx = 0, mean, m0;
        const int64_t c0 = (r % j->G) * cg;
        double *pp = j->part + (r / j->G * j->C + c0) * 2;
        const BN_T *xr = x + r * len, *gr = g + r * len;
        BN_P(stat) st, gs;
#if BN_H16
        _Alignas(64) float xws[BN_GN_W], gws[BN_GN_W];
        const bool wid = S >= 2 * BV_W && len <= BN_GN_W;
#endif
        if (S >= 2 * BV_W) { /* statistics and sums in one pass */
            BN_P(stat_init)(&st, xr, len);
            for (int pass = 0; pass < 2; pass++) {
                for (int64_t ch = 0; ch < cg; ch++) {
                    BN_P(stat_zero)(&gs, st.c);
#if BN_H16
                    if (wid && !pass)
                        BN_P(xgsums_w)(gr + ch * S, xr + ch * S, S, &st, &gs,
                                       gws + ch * S, xws + ch * S);
                    else
#endif
                        BN_P(xgsums)(gr + ch * S, xr + ch * S, S, &st, &gs);
                    BN_P(stat_tot)(&gs, &pp[2 * ch + 1], &pp[2 * ch]);
                }
                if (pass || !BN_P(stat_far)(&st, (double)len, &m0))
                    break;
                BN_P(stat_zero)(&st, (BN_F)m0); /* again around the mean */
            }
            mean = BN_P(stat_done)(&st, NULL, 1, 0, len, &ss);
        } else { /* the statistics, then the sums around their mean */
            mean = BN_P(stats)(xr, 1, 0, len, &ss);
            BN_P(stat_zero)(&st, (BN_F)mean);
            for (int64_t ch = 0; ch < cg; ch++) {
                BN_P(stat_zero)(&gs, st.c);
                BN_P(gsums)(gr + ch * S, xr + ch * S, S, &gs);
                BN_P(stat_tot)(&gs, &pp[2 * ch + 1], &pp[2 * ch]);
            }
        }
        const double rstd = 1 / sqrt(ss / (double)len + j->eps);
        for (int64_t ch = 0; ch < cg; ch++) {
            const double sg = pp[2 * ch + 1];
            const double sgx = rstd * (pp[2 * ch] - (mean - st.c) * sg);
            pp[2 * ch] = sgx;
            sgh += sg * BN_GET(w, c0 + ch);
            sghx += sgx * BN_GET(w, c0 + ch);
        }
        const double a = sgh / (double)len, b = sghx / (double)len;
        for (int64_t ch = 0; ch < cg; ch++) {
            const int64_t o = r * len + ch * S;
#if BN_H16
            if (wid) {
                BN_P(dx_w)(gws + ch * S, xws + ch * S, dx + o, S, mean, rstd,
                           rstd, BN_GET(w, c0 + ch), a, b);
                continue;
            }
#endif
            BN_P(dx)(g + o, x + o, dx + o, S, mean, rstd, rstd,
                     BN_GET(w, c0 + ch), a, b);
        }
    }
}

static const tb_cpu_bnorm_parts BN_P(parts) = {
#if BN_H16
    NULL,
#else
    BN_P(batch_norm),
#endif
    BN_P(group_norm), BN_P(batch_norm_bw), BN_P(group_norm_bw)};

#undef BN_T
#undef BN_F
#undef BN_GET
#undef BN_PUT
#undef BN_H_LD
#undef BN_H_ST
#undef BN_H_ST2
#undef BV_ST2
#undef BV
#undef BV_W
#undef BV_LD
#undef BV_ST
#undef BV_1
#undef BV_ADD
#undef BV_SUB
#undef BV_FMA
#undef BV_ACC
#undef BN_BLK
#undef BN_GN_BLK
#undef BN_GN_PIPE
#undef BN_GN_SCR
#undef BN_FLD
#undef BN_XSUB
#undef BN_DX_BODY
#endif
