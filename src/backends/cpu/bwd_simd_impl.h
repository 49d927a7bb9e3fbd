/* SIMD rows (AVX2, AVX-512) of the element-wise backward ops in f32:
 * relu_backward, sigmoid_backward, tanh_backward, gelu_backward and
 * log_softmax_backward (at the end: bwd_simd.h's driver), over
 * backward.c's portable rows (issue 18: those ran the scalar libm
 * expf/tanhf/erfcf per element, 43-88x a copy of their bytes at 1M
 * elements).  For inclusion by bwd_avx2.c and bwd_avx512.c only, each
 * built with its level's flags; everything here is static except the
 * entry points BW_ENTRIES(SFX, LV) defines (kreg.h's TB_CPU_ROWS_BW_
 * list).  The driver is ops_simd.c's tb_cpu_xs_binary (a = g, b = x,
 * equal shapes under the ops' shape rule, split over the threads).
 *
 * Formulas (x the forward input, g the incoming gradient):
 *   relu:    x > 0 ? g : 0 (a select; NaN x gives 0, as the portable row)
 *   sigmoid: g s (1 - s) = g e / (1 + e)^2, e = exp(-|x|): no
 *            cancellation of 1 - s for large x (the portable row's
 *            s (1 - s) rounds to 0 from |x| ~ 17 on, this keeps e);
 *   tanh:    g (1 - t^2) = g 4e / (1 + e)^2, e = exp(-2|x|) (sech^2 x,
 *            again without the cancellation of 1 - t^2);
 *   gelu:    g (Phi(x) + x phi(x)), phi(x) = exp(-x^2/2) / sqrt(2 pi)
 *            with -x^2/2 as an exact head + tail (the tail applied as
 *            e (1 + tail)); Phi(x) = gelu(x) / x by vmath's vs_gelu_erf
 *            for |x| >= 0.7 and the Taylor series 1/2 + x R(x^2) of
 *            Phi to x^13 below (truncation < 1e-9).  x is clamped to
 *            [-20, 20] for Phi and phi (both are then 1 or 0 and 0 in
 *            float), so +-inf give g and 0, the limits.
 * Accuracy (g = 1, tests/test_checkasm.c bw_act_sweep over a dense sweep
 * of float bit patterns against the derivative in double): sigmoid and
 * tanh within 8 ulp (5.5 measured), gelu within 16 ulp of |Phi| + |x phi|
 * (11.2 measured, near x = -13 where phi nears FLT_MIN), AVX2 and AVX-512
 * bit for bit; far inside the ops' tolerance (f32: rtol 1e-5, atol
 * 1e-6), which op_*_backward (every level and thread count, against the
 * double reference) and tests/test_backward.c (PyTorch vectors and
 * finite differences) check. */
#ifndef TB_BACKENDS_CPU_BWD_SIMD_IMPL_H
#define TB_BACKENDS_CPU_BWD_SIMD_IMPL_H

#include <immintrin.h>
#include <stdint.h>

#include "bwd_simd.h"
#include "kreg.h"
#include "ops_simd.h"
#include "vmath_simd.h"

static inline vf bw_relu_f(vf g, vf x)
{
    return v_sel(v_gt(x, v_set1(0.0f)), g, v_set1(0.0f));
}

/* g * k e / (1 + e)^2, e = exp(-c |x|) */
static inline vf bw_sech2(vf g, vf x, float c, float k)
{
    vf e = vs_exp(v_mul(v_set1(-c), v_abs(x)));
    vf d = v_add(v_set1(1.0f), e);
    return v_mul(g, v_div(v_mul(v_set1(k), e), v_mul(d, d)));
}

static inline vf bw_sigmoid_f(vf g, vf x) { return bw_sech2(g, x, 1, 1); }

static inline vf bw_tanh_f(vf g, vf x) { return bw_sech2(g, x, 2, 4); }

static inline vf bw_gelu_f(vf g, vf x)
{
    vf xc = v_clamp(x, -20.0f, 20.0f);
    vf sq = v_mul(xc, xc);
    /* -x^2/2 = qh + ql exactly */
    vf qh = v_mul(sq, v_set1(-0.5f));
    vf ql = v_mul(v_fms(xc, xc, sq), v_set1(-0.5f));
    vf e = vs_exp(qh);
    e = v_fma(e, ql, e);
    vf xpdf = v_mul(xc, v_mul(e, v_set1(0.3989422804014327f)));
    /* Phi(x), |x| < 0.7: 1/2 + x R(x^2) (Taylor coefficients
     * (-1)^n / (sqrt(2 pi) 2^n n! (2n + 1))) */
    vf r = v_fma(v_set1(6.6596935163e-07f), sq, v_set1(-9.4446562595e-06f));
    r = v_fma(r, sq, v_set1(1.1543468762e-04f));
    r = v_fma(r, sq, v_set1(-1.1873282155e-03f));
    r = v_fma(r, sq, v_set1(9.9735570100e-03f));
    r = v_fma(r, sq, v_set1(-6.6490380067e-02f));
    r = v_fma(r, sq, v_set1(3.9894228040e-01f));
    vf cs = v_fma(xc, r, v_set1(0.5f));
    vm small = v_lt(v_abs(xc), v_set1(0.7f));
    vf cdf = cs;
    if (!m_all(small))
        cdf = v_sel(small, cs, v_div(vs_gelu_erf(xc), xc));
    /* NaN x: xc may be a bound (v_clamp keeps NaN, but be explicit) */
    vf d = v_mul(g, v_add(cdf, xpdf));
    return v_sel(v_unord(x, x), x, d);
}

#define BW_LOOP(NAME, SFX)                                                \
    static void bw_##NAME##_loop_##SFX(const void *av, int64_t sa,        \
                                       const void *bv, int64_t sb,        \
                                       void *ov, int64_t n)               \
    {                                                                     \
        const float *a = av, *b = bv;                                     \
        float *o = ov;                                                    \
        const vf a0 = v_set1(a[0]), b0 = v_set1(b[0]);                    \
        int64_t i = 0;                                                    \
        for (; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {                \
            vf y0 = bw_##NAME##_f(sa ? v_load(a + i) : a0,                \
                                  sb ? v_load(b + i) : b0);               \
            vf y1 = bw_##NAME##_f(sa ? v_load(a + i + VS_LANES) : a0,     \
                                  sb ? v_load(b + i + VS_LANES) : b0);    \
            v_store(o + i, y0);                                           \
            v_store(o + i + VS_LANES, y1);                                \
        }                                                                 \
        for (; i + VS_LANES <= n; i += VS_LANES)                          \
            v_store(o + i, bw_##NAME##_f(sa ? v_load(a + i) : a0,         \
                                         sb ? v_load(b + i) : b0));       \
        if (i < n)                                                        \
            v_store_n(o + i,                                              \
                      bw_##NAME##_f(sa ? v_load_n(a + i, n - i) : a0,     \
                                    sb ? v_load_n(b + i, n - i) : b0),    \
                      n - i);                                             \
    }

#define BW_ENTRY(NAME, SFX, LV)                                           \
    BW_LOOP(NAME, SFX)                                                    \
    int TB_CPU_KFN(NAME##_backward, f32, SFX)(void *ctx,                  \
                                              const tb_tensor *in,        \
                                              tb_tensor *out,             \
                                              const tb_params *p)         \
    {                                                                     \
        return tb_cpu_xs_binary(ctx, LV, TB_OP_##NAME##_backward, TB_F32, \
                                in, out, p, bw_##NAME##_loop_##SFX);      \
    }

/* ---- log_softmax_backward (bwd_simd.h): dx = g - exp(y) sum(g) ------ */

#if VS_LANES == 16
typedef __m512d bw_vd;
static inline bw_vd bw_dzero(void) { return _mm512_setzero_pd(); }
/* *lo, *hi += v's lower, upper half in double */
static inline void bw_dacc(vf v, bw_vd *lo, bw_vd *hi)
{
    *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    *hi = _mm512_add_pd(*hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}
static inline double bw_dhsum(bw_vd lo, bw_vd hi)
{
    return _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
}
/* the lanes of lo, hi rounded to float, in v's order */
static inline vf bw_dcvt(bw_vd lo, bw_vd hi)
{
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)),
                              _mm512_cvtpd_ps(hi), 1);
}
#else
typedef __m256d bw_vd;
static inline bw_vd bw_dzero(void) { return _mm256_setzero_pd(); }
static inline void bw_dacc(vf v, bw_vd *lo, bw_vd *hi)
{
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}
static inline double bw_dhsum(bw_vd lo, bw_vd hi)
{
    __m256d s = _mm256_add_pd(lo, hi);
    __m128d t = _mm_add_pd(_mm256_castpd256_pd128(s),
                           _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(t, _mm_unpackhi_pd(t, t)));
}
static inline vf bw_dcvt(bw_vd lo, bw_vd hi)
{
    return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}
#endif

/* Outer lanes [o0, o1): a contiguous lane (inner 1) sums g in two pairs
 * of double accumulators, then writes g - exp(y) s in one FMA; a lane
 * of a non-last axis runs VS_LANES adjacent lanes at once (the last
 * group masked).  s is rounded to float first, as the portable row's
 * (T)s. */
static void bw_lsm_rows(const float *g, const float *y, float *dx,
                        int64_t o0, int64_t o1, int64_t len, int64_t inner)
{
    for (int64_t o = o0; o < o1; o++) {
        const int64_t base = o * len * inner;
        if (inner == 1) {
            const float *gr = g + base, *yr = y + base;
            float *dr = dx + base;
            bw_vd l0 = bw_dzero(), h0 = bw_dzero(), l1 = bw_dzero(),
                  h1 = bw_dzero();
            int64_t k = 0;
            for (; k + 2 * VS_LANES <= len; k += 2 * VS_LANES) {
                bw_dacc(v_load(gr + k), &l0, &h0);
                bw_dacc(v_load(gr + k + VS_LANES), &l1, &h1);
            }
            for (; k < len; k += VS_LANES)
                bw_dacc(v_load_n(gr + k, len - k), &l0, &h0);
            const vf st = v_set1((float)(bw_dhsum(l0, h0) +
                                         bw_dhsum(l1, h1)));
            k = 0;
            for (; k + VS_LANES <= len; k += VS_LANES)
                v_store(dr + k,
                        v_fnma(vs_exp(v_load(yr + k)), st, v_load(gr + k)));
            if (k < len) {
                const int64_t r = len - k;
                v_store_n(dr + k,
                          v_fnma(vs_exp(v_load_n(yr + k, r)), st,
                                 v_load_n(gr + k, r)),
                          r);
            }
            continue;
        }
        for (int64_t i0 = 0; i0 < inner; i0 += VS_LANES) {
            const int64_t r =
                inner - i0 < VS_LANES ? inner - i0 : VS_LANES;
            bw_vd lo = bw_dzero(), hi = bw_dzero();
            for (int64_t k = 0; k < len; k++)
                bw_dacc(v_load_n(g + base + k * inner + i0, r), &lo, &hi);
            const vf st = bw_dcvt(lo, hi);
            for (int64_t k = 0; k < len; k++) {
                const int64_t q = base + k * inner + i0;
                v_store_n(dx + q,
                          v_fnma(vs_exp(v_load_n(y + q, r)), st,
                                 v_load_n(g + q, r)),
                          r);
            }
        }
    }
}

#define BW_LSM_ENTRY(SFX, LV)                                             \
    int TB_CPU_KFN(log_softmax_backward, f32, SFX)(                       \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_bw_lsm(ctx, LV, in, out, p, bw_lsm_rows);           \
    }

#define BW_ENTRIES(SFX, LV)                                               \
    BW_ENTRY(relu, SFX, LV)                                               \
    BW_ENTRY(sigmoid, SFX, LV)                                            \
    BW_ENTRY(tanh, SFX, LV)                                               \
    BW_ENTRY(gelu, SFX, LV)                                               \
    BW_LSM_ENTRY(SFX, LV)

#endif /* TB_BACKENDS_CPU_BWD_SIMD_IMPL_H */
