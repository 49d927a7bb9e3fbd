/* softplus f32's element function (xs_softplus_g) and its log1p on
 * [0, 1], on vmath_simd.h's vectors: shared by ops_simd_impl.h's f32
 * rows and half_simd.h's fused bf16/f16 loops (the same operations on
 * the widened values, so the same bits as widen + f32 row + narrow).
 * Per lane: a value does not depend on the vector it sits in.  For
 * files built with one SIMD level's flags, after vmath_simd.h. */
#ifndef TB_BACKENDS_CPU_SOFTPLUS_VF_H
#define TB_BACKENDS_CPU_SOFTPLUS_VF_H

#include <immintrin.h>

#include "vmath_simd.h"

/* log1p(e) for e in [0, 1] (NaN: NaN): e + e^2 Q(e), 1 + e Q(e) of
 * degree 10 fitted (iteratively reweighted least squares on Chebyshev
 * nodes, coefficients rounded to float) to log1p(e) / e on [0, 1]:
 * relative error below 2^-25.7 in exact arithmetic (measured in 100-bit
 * arithmetic at 3001 points); the fused last step rounds once, the
 * e^2 Q term (at most 0.31 of the result, at e = 1) carries the other
 * roundings.  One chain of FMAs in place of a log (a frexp-free Cephes
 * logf of 1 + e with its rounding error put back): 11 operations
 * instead of about 25.  For e < 2^-24 the result is e exactly.
 * Q(e) = E(s) + e O(s), s = e^2 (which the last step needs anyway), E
 * and O of degree 4 by Horner's scheme: the 11 operations of Horner's
 * scheme in e, in two chains of 4 FMAs instead of one of 9, so fewer
 * vectors wait in the scheduler (llvm-mca -mcpu=icelake-server, the
 * beta-1 loop: 17.3 cycles per vector instead of 18.9, though ports 0
 * and 5 get 14.5 instead of 14.0, a register copy more; tbench ab:
 * softplus 4096 3.5% less time).  The price:
 * E(1) = -1.007 has roundings of 2^-24, so the worst error moves from
 * x = -1.26 (3.23 ulp, exp's share) to x = 0.0032 (3.48 ulp). */
static inline vf xs_log1p01(vf e)
{
    const vf s = v_mul(e, e);
    vf qe = v_fma(v_set1(-1.340748277e-02f), s, v_set1(-8.244163543e-02f));
    vf qo = v_fma(v_set1(2.030231757e-03f), s, v_set1(4.147812724e-02f));
    qe = v_fma(qe, s, v_set1(-1.610568762e-01f));
    qo = v_fma(qo, s, v_set1(1.241842806e-01f));
    qe = v_fma(qe, s, v_set1(-2.498727143e-01f));
    qo = v_fma(qo, s, v_set1(1.989074647e-01f));
    qe = v_fma(qe, s, v_set1(-4.999998212e-01f));
    qo = v_fma(qo, s, v_set1(3.333255947e-01f));
    return v_fma(v_fma(qo, e, qe), s, e);
}

/* z = beta x; z > threshold ? x : (max(z, 0) + log1p(exp(-|z|))) / beta,
 * the division left out when beta is 1 (div 0, a constant).  NaN x: z
 * NaN, not above the threshold, exp(NaN) NaN -> NaN; x = inf is above
 * any threshold; x = -inf: exp(-inf) = 0, y = 0.
 * e = exp(a), a = -|z|, has vs_exp's values (its reduction and short
 * polynomial).  AVX-512 takes the general path for every vector, which
 * here costs less than the check for the fast one: a = -min(|z|, 120)
 * is one vrangeps (minimum of the magnitudes, sign bit set; NaN stays
 * NaN), a clamp that changes no result (exp(-120) underflows to 0), and
 * vscalefps scales by 2^n with one rounding (exact where e is normal,
 * like the fast path's exponent addition); the threshold's select is
 * the mask of the last add or division.  In all 14.0 cycles of ports 0
 * and 5 per vector instead of 16.0 (llvm-mca -mcpu=icelake-server on
 * the beta-1 loop; the fast path's check, abs and negation were four
 * operations); results bit for bit as before.  AVX2 keeps the check:
 * its v_scale costs eight operations. */
static inline vf xs_softplus_g(vf x, vf beta, vf thr, int div)
{
    vf z = div ? v_mul(beta, x) : x;
    vf k, n, e;
#if VS_LANES == 16
    vf a = _mm512_range_ps(z, v_set1(-VS_EXP_LO), 0x0e);
    vf r = vs_exp_reduce(a, &k, &n);
    e = v_scale(vs_exp_poly(r), n);
#else
    vf a = v_or(z, v_set1(-0.0f));
    if (m_all(v_le(v_set1(-VS_EXP_FAST), a))) {
        e = vs_exp_fast(a);
    } else {
        vf p = vs_exp_parts(a, v_set1(-0.0f), &k, &n, 0);
        e = v_scale(p, n);
    }
#endif
    /* v_max returns its second operand, z, for a NaN z */
    vf m = v_max(v_set1(0.0f), z), l = xs_log1p01(e);
#if VS_LANES == 16
    /* !(z > thr): NaN z too */
    const __mmask16 keep = _mm512_cmp_ps_mask(z, thr, _CMP_NGT_UQ);
    if (div)
        return _mm512_mask_div_ps(x, keep, v_add(m, l), beta);
    return _mm512_mask_add_ps(x, keep, m, l);
#else
    vf y = v_add(m, l);
    if (div)
        y = v_div(y, beta);
    return v_sel(v_gt(z, thr), x, y);
#endif
}

#endif /* TB_BACKENDS_CPU_SOFTPLUS_VF_H */
