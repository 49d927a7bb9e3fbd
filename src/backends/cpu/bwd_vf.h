/* The element functions of the f32 SIMD rows of relu_backward,
 * sigmoid_backward, tanh_backward and gelu_backward (bwd_simd_impl.h
 * has their formulas and accuracy), on vmath_simd.h's vectors: shared
 * by those rows and half_simd.h's fused bf16/f16 loops of the same ops
 * (the same operations on the widened values, so the same bits).  Per
 * lane: a value does not depend on the vector it sits in.  For files
 * built with one SIMD level's flags, after vmath_simd.h. */
#ifndef TB_BACKENDS_CPU_BWD_VF_H
#define TB_BACKENDS_CPU_BWD_VF_H

#include <immintrin.h>

#include "vmath_simd.h"

static inline vf bw_relu_f(vf g, vf x)
{
    return v_sel(v_gt(x, v_set1(0.0f)), g, v_set1(0.0f));
}

/* 4 v for a normal float v (and 4 v normal): 2 added to the exponent
 * field, exact, an integer operation instead of a multiplication on the
 * FMA ports */
static inline vf bw_mul4(vf v)
{
#if VS_LANES == 16
    return _mm512_castsi512_ps(_mm512_add_epi32(
        _mm512_castps_si512(v), _mm512_set1_epi32(2 << 23)));
#else
    return _mm256_castsi256_ps(_mm256_add_epi32(
        _mm256_castps_si256(v), _mm256_set1_epi32(2 << 23)));
#endif
}

/* g * k e / (1 + e)^2, e = exp(-c |x|) (c 1 or 2, k c^2).  -c |x| by
 * a sign OR and an addition (not a multiplication); where every lane's
 * exp takes vs_exp's fast path, e is normal and k e (tanh's 4 e) an
 * exponent addition: the same values as vs_exp and a multiplication by
 * k, with two fewer operations on the FMA ports (the busiest). */
static inline vf bw_sech2(vf g, vf x, float c, float k)
{
    vf y = v_or(x, v_set1(-0.0f));
    if (c == 2)
        y = v_add(y, y);
    vf e, ke;
    if (vs_exp_fast_ok(y)) {
        e = vs_exp_fast(y);
        ke = k == 4 ? bw_mul4(e) : e;
    } else {
        e = vs_exp(y);
        ke = v_mul(v_set1(k), e);
    }
    vf d = v_add(v_set1(1.0f), e);
    return v_mul(g, v_div(ke, v_mul(d, d)));
}

static inline vf bw_sigmoid_f(vf g, vf x) { return bw_sech2(g, x, 1, 1); }

static inline vf bw_tanh_f(vf g, vf x) { return bw_sech2(g, x, 2, 4); }

/* s = gelu'(-a) = Phi(-a) - a phi(a) for a = |x| > 3 (other lanes:
 * garbage; NaN stays NaN), with E = exp(-x^2/2), c = 1/sqrt(2 pi) and
 * vmath's G (Phi(-a) = E G(a), vs_gelu_g_tail): s = E (G(a) - c a).
 * E as vs_gelu_erf_tail computes it (head -sq/2 reduced, tail added to
 * r, d exp(r) = d + (d r) q).  x is clamped to [-15, 15] (there |s| <
 * 2^-159: -0 and 1 in bw_gelu_f, the limits; +-inf give them too), G's
 * argument to 14.5 (its range; beyond, |s| < 2^-149, the least
 * subnormal, and G is 0.5% of d).  The scaling is v_scale (one
 * rounding, into the subnormals near x = -13). */
static inline vf bw_gelu_s_tail(vf x)
{
    vf xc = v_clamp(x, -15.0f, 15.0f);
    vf a = v_abs(xc);
    vf gg = vs_gelu_g_tail(v_min(a, v_set1(14.5f)));
    vf d = v_fnma(v_set1(0.3989422804014327f), a, gg);
    vf sq = v_mul(xc, xc);
    vf sql = v_fms(xc, xc, sq);
    vf k, n;
    vf r = vs_exp_reduce(v_mul(sq, v_set1(-0.5f)), &k, &n);
    r = v_fma(sql, v_set1(-0.5f), r);
    vf q = v_fma(vs_exp_u6(r), r, v_set1(1.0f));
    return v_scale(v_fma(v_mul(d, r), q, d), n);
}

/* gelu'(x) = Phi(x) + x phi(x): with a = |x| and s = gelu'(-a) =
 * Phi(-a) - a phi(a),
 *   x < 0 (and -0): s,   x >= 0: 1 - s
 * (Phi(x) = 1 - Phi(-a) and x phi(x) = a phi(a) for x >= 0).  s: for
 * a <= 3 the table polynomials vs_gelu_dpc at AVX2, vs_gelu16_dpc at
 * AVX-512 (vmath_simd.h: 1.20 and 1.31 * 2^-24 of Phi(-a) + a phi(a) as
 * evaluated; so the levels may differ in the last bit), no exp; else
 * bw_gelu_s_tail.  A
 * vector with every lane inside takes only the tables; in the others
 * each lane takes its own form, so the result does not depend on the
 * lane's neighbours. */
static inline vf bw_gelu_f(vf g, vf x)
{
    vf a = v_abs(x);
#if VS_LANES == 16 /* vmath_simd.h's 16-entry tables (AVX2: 8 pieces) */
    vf s = vs_gelu16_poly(a, vs_gelu16_dpc);
#else
    vs_idx j;
    vf u = vs_gelu_piece(a, vs_gelu_ctr, &j);
    vf s = vs_gelu_poly6(vs_gelu_dpc, j, u);
#endif
    vm fast = v_le(a, v_set1(VS_GELU_FAST));
    if (!m_all(fast))
        s = v_sel(fast, s, bw_gelu_s_tail(x));
    vf dv = v_mul(g, v_sel(v_sign_m(x), s, v_sub(v_set1(1.0f), s)));
    return v_sel(v_unord(x, x), x, dv);
}

#endif
