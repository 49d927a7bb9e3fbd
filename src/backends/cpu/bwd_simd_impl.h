/* SIMD rows (AVX2, AVX-512) of the element-wise backward ops in f32:
 * relu_backward, sigmoid_backward, tanh_backward and gelu_backward, over
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
 * Accuracy: a few ulp relative to each factor (vmath's exp, 1 ulp bound
 * class, gelu_erf's documented bound plus the rounding of the division),
 * far inside the ops' tolerance (f32: rtol 1e-5, atol 1e-6); checked by
 * tests/test_checkasm.c (op_*_backward, every level and thread count,
 * against the double reference) and tests/test_backward.c (PyTorch
 * vectors and finite differences). */
#ifndef TB_BACKENDS_CPU_BWD_SIMD_IMPL_H
#define TB_BACKENDS_CPU_BWD_SIMD_IMPL_H

#include <immintrin.h>
#include <stdint.h>

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

#define BW_ENTRIES(SFX, LV)                                               \
    BW_ENTRY(relu, SFX, LV)                                               \
    BW_ENTRY(sigmoid, SFX, LV)                                            \
    BW_ENTRY(tanh, SFX, LV)                                               \
    BW_ENTRY(gelu, SFX, LV)

#endif /* TB_BACKENDS_CPU_BWD_SIMD_IMPL_H */
