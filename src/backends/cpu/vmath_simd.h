/*
 * The float SIMD algorithms behind vmath.h, written once over a thin
 * layer of vector helpers (v_*), for inclusion by the files of one ISA
 * level only: kernels_avx2.c / vmath_avx2.c (built with -mavx2 -mfma)
 * get 8-lane AVX2 helpers, kernels_avx512.c / vmath_avx512.c (built with
 * the AVX-512 flags) 16-lane ones.  Everything here is `static inline`,
 * so no function compiled with one ISA's flags can be picked by the
 * linker for another's callers.
 *
 * Both flavours perform the same IEEE operations in the same order (FMA
 * where written, no -ffast-math), so their results are bit-identical;
 * only the 2^n scaling differs in instructions (vscalefps vs two exact
 * multiplications), not in results: both round once.
 *
 * Error bounds (measured, see vmath.h / vmath_c.c) assume the default
 * rounding mode; denormals are handled (no DAZ/FTZ assumed).
 */
#ifndef TB_BACKENDS_CPU_VMATH_SIMD_H
#define TB_BACKENDS_CPU_VMATH_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__)
/* ---- AVX-512 helpers -------------------------------------------------- */
#define VS_LANES 16
typedef __m512 vf;
typedef __mmask16 vm;

static inline vf v_set1(float a) { return _mm512_set1_ps(a); }
static inline vf v_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void v_store(float *p, vf a) { _mm512_storeu_ps(p, a); }
/* Non-temporal store; p must be 64-byte aligned. */
static inline void v_stream(float *p, vf a) { _mm512_stream_ps(p, a); }
static inline vf v_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf v_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf v_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf v_div(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf v_sqrt(vf a) { return _mm512_sqrt_ps(a); }
/* a * b + c, c - a * b, a * b - c: one rounding each. */
static inline vf v_fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf v_fnma(vf a, vf b, vf c)
{
    return _mm512_fnmadd_ps(a, b, c);
}
static inline vf v_fms(vf a, vf b, vf c) { return _mm512_fmsub_ps(a, b, c); }
/* x86 min/max: the second operand is returned when either is NaN. */
static inline vf v_min(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf v_max(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf v_and(vf a, vf b) { return _mm512_and_ps(a, b); }
static inline vf v_or(vf a, vf b) { return _mm512_or_ps(a, b); }
static inline vf v_xor(vf a, vf b) { return _mm512_xor_ps(a, b); }
/* ~a & b */
static inline vf v_andnot(vf a, vf b) { return _mm512_andnot_ps(a, b); }
static inline vf v_round(vf a)
{
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT |
                                       _MM_FROUND_NO_EXC);
}
static inline vm v_lt(vf a, vf b)
{
    return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ);
}
static inline vm v_gt(vf a, vf b)
{
    return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ);
}
static inline vm v_eq(vf a, vf b)
{
    return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ);
}
static inline vm v_neq(vf a, vf b)
{
    return _mm512_cmp_ps_mask(a, b, _CMP_NEQ_UQ);
}
static inline vm v_unord(vf a, vf b)
{
    return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q);
}
static inline vm v_le(vf a, vf b)
{
    return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ);
}
/* !(a >= b): true where a < b or either is NaN. */
static inline vm v_nge(vf a, vf b)
{
    return _mm512_cmp_ps_mask(a, b, _CMP_NGE_UQ);
}
static inline vm m_and(vm a, vm b) { return (vm)(a & b); }
static inline vm m_or(vm a, vm b) { return (vm)(a | b); }
static inline int m_any(vm a) { return a != 0; }
static inline int m_all(vm a) { return a == 0xffff; }
/* m ? t : f per lane. */
static inline vf v_sel(vm m, vf t, vf f) { return _mm512_mask_blend_ps(m, f, t); }
/* The lanes of a whose sign bit is set (-0 and negative NaNs too): a
 * mask for v_sel only. */
static inline vm v_sign_m(vf a)
{
    return _mm512_movepi32_mask(_mm512_castps_si512(a));
}
/* p * 2^n for integer-valued n: vscalefps rounds once. */
static inline vf v_scale(vf p, vf n) { return _mm512_scalef_ps(p, n); }
/* p * 2^n where k = n + 1.5 * 2^23 (so k's low bits hold n) and p * 2^n
 * is a normal float: n added to p's exponent field, exact.  Two integer
 * operations, cheaper than vscalefps. */
static inline vf v_ldexp_k(vf p, vf k)
{
    return _mm512_castsi512_ps(_mm512_add_epi32(
        _mm512_castps_si512(p),
        _mm512_slli_epi32(_mm512_castps_si512(k), 23)));
}
/* p * 2^n for the n, k of vs_exp_reduce where p * 2^n is a normal
 * float: the same (exact) result as v_ldexp_k(p, k), one instruction
 * here (vscalefps), v_ldexp_k's two integer operations on AVX2.  In
 * the gelus' cores, where every vector port is busy, the one
 * instruction measured faster (gelu_tanh: 5% less time, tbench ab, 95%
 * CI 3.3% to 6.7%, Sapphire Rapids VM). */
static inline vf v_ldexp_nk(vf p, vf n, vf k)
{
    (void)k;
    return _mm512_scalef_ps(p, n);
}
/* a - b in the lanes where s's sign bit is clear, b where it is set
 * (-0 and negative NaNs too): one masked subtraction and the test. */
static inline vf v_signsel_sub(vf s, vf a, vf b)
{
    return _mm512_mask_sub_ps(
        b,
        _mm512_testn_epi32_mask(_mm512_castps_si512(s),
                                _mm512_set1_epi32(INT32_MIN)),
        a, b);
}
/* x = m * 2^e, m in [1, 2), e integer-valued, for finite x > 0
 * (subnormals included); other lanes are garbage. */
static inline vf v_frexp(vf x, vf *e)
{
    *e = _mm512_getexp_ps(x);
    return _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
}
/* Lane mask of the first r lanes, 0 <= r <= VS_LANES. */
static inline vm v_first(int64_t r)
{
    return (vm)(r >= 16 ? 0xffff : (1u << r) - 1);
}
static inline vf v_load_n(const float *p, int64_t r)
{
    return _mm512_maskz_loadu_ps(v_first(r), p);
}
static inline void v_store_n(float *p, vf a, int64_t r)
{
    _mm512_mask_storeu_ps(p, v_first(r), a);
}
/* First r lanes from p, the others `fill`. */
static inline vf v_load_fill(const float *p, int64_t r, float fill)
{
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), v_first(r), p);
}
static inline float v_hsum(vf a) { return _mm512_reduce_add_ps(a); }
static inline float v_hmax(vf a) { return _mm512_reduce_max_ps(a); }
/* Per-lane indices into an 8-entry table (v_lookup8). */
typedef __m512i vs_idx;
/* trunc(a) as the index, for 0 <= a < 8 (other lanes: any index). */
static inline vs_idx v_trunc_idx(vf a) { return _mm512_cvttps_epi32(a); }
/* t[j] per lane (one vpermps; the table's 8 floats are loop-invariant,
 * so the compiler keeps them in registers). */
static inline vf v_lookup8(const float *t, vs_idx j)
{
    return _mm512_permutexvar_ps(
        j, _mm512_zextps256_ps512(_mm256_loadu_ps(t)));
}
/* t[j & 15] per lane, j from the low 4 bits of each lane of t16's bit
 * pattern: one vpermps (which reads those bits only; the 16 floats are
 * loop-invariant). */
static inline vf v_lookup16(const float *t, vf t16)
{
    return _mm512_permutexvar_ps(_mm512_castps_si512(t16),
                                 _mm512_loadu_ps(t));
}

#elif defined(__AVX2__) && defined(__FMA__)
/* ---- AVX2 + FMA helpers ----------------------------------------------- */
#define VS_LANES 8
typedef __m256 vf;
typedef __m256 vm; /* all-ones / all-zeros lanes */

static inline vf v_set1(float a) { return _mm256_set1_ps(a); }
static inline vf v_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void v_store(float *p, vf a) { _mm256_storeu_ps(p, a); }
/* Non-temporal store; p must be 32-byte aligned. */
static inline void v_stream(float *p, vf a) { _mm256_stream_ps(p, a); }
static inline vf v_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf v_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf v_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf v_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf v_sqrt(vf a) { return _mm256_sqrt_ps(a); }
static inline vf v_fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf v_fnma(vf a, vf b, vf c)
{
    return _mm256_fnmadd_ps(a, b, c);
}
static inline vf v_fms(vf a, vf b, vf c) { return _mm256_fmsub_ps(a, b, c); }
static inline vf v_min(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf v_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf v_and(vf a, vf b) { return _mm256_and_ps(a, b); }
static inline vf v_or(vf a, vf b) { return _mm256_or_ps(a, b); }
static inline vf v_xor(vf a, vf b) { return _mm256_xor_ps(a, b); }
static inline vf v_andnot(vf a, vf b) { return _mm256_andnot_ps(a, b); }
static inline vf v_round(vf a)
{
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline vm v_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline vm v_gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline vm v_eq(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline vm v_neq(vf a, vf b)
{
    return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ);
}
static inline vm v_unord(vf a, vf b)
{
    return _mm256_cmp_ps(a, b, _CMP_UNORD_Q);
}
static inline vm v_le(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
static inline vm v_nge(vf a, vf b)
{
    return _mm256_cmp_ps(a, b, _CMP_NGE_UQ);
}
static inline vm m_and(vm a, vm b) { return _mm256_and_ps(a, b); }
static inline vm m_or(vm a, vm b) { return _mm256_or_ps(a, b); }
static inline int m_any(vm a) { return _mm256_movemask_ps(a) != 0; }
static inline int m_all(vm a) { return _mm256_movemask_ps(a) == 0xff; }
static inline vf v_sel(vm m, vf t, vf f) { return _mm256_blendv_ps(f, t, m); }
/* blendv reads only the sign bits: a itself, for v_sel only (not for
 * m_and / m_or / m_any / m_all, which read whole lanes). */
static inline vm v_sign_m(vf a) { return a; }
/* p * 2^n for integer-valued n in [-252, 254]: two exact power-of-two
 * factors 2^(n>>1) and 2^(n - (n>>1)), each a normal float; the first
 * product stays normal for the |p| < 2^9 used here, so only the second
 * rounds (once), as vscalefps does. */
static inline vf v_scale(vf p, vf n)
{
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1);
    __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    vf f1 = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    vf f2 = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, f1), f2);
}
static inline vf v_ldexp_k(vf p, vf k)
{
    return _mm256_castsi256_ps(_mm256_add_epi32(
        _mm256_castps_si256(p),
        _mm256_slli_epi32(_mm256_castps_si256(k), 23)));
}
static inline vf v_ldexp_nk(vf p, vf n, vf k)
{
    (void)n;
    return v_ldexp_k(p, k);
}
static inline vf v_signsel_sub(vf s, vf a, vf b)
{
    return _mm256_blendv_ps(_mm256_sub_ps(a, b), b, s);
}
static inline vf v_frexp(vf x, vf *e)
{
    const vf tiny = _mm256_set1_ps(0x1p-126f);
    vm sub = _mm256_cmp_ps(x, tiny, _CMP_LT_OQ);
    vf xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(0x1p23f)),
                             sub);
    __m256i b = _mm256_castps_si256(xs);
    vf ex = _mm256_cvtepi32_ps(_mm256_srli_epi32(b, 23));
    ex = _mm256_sub_ps(ex, _mm256_set1_ps(127.0f));
    *e = _mm256_sub_ps(ex, _mm256_and_ps(sub, _mm256_set1_ps(23.0f)));
    __m256i mb = _mm256_or_si256(
        _mm256_and_si256(b, _mm256_set1_epi32(0x007fffff)),
        _mm256_set1_epi32(0x3f800000));
    return _mm256_castsi256_ps(mb);
}
static inline __m256i v_first_i(int64_t r)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(r > 8 ? 8 : r)),
                              idx);
}
static inline vm v_first(int64_t r)
{
    return _mm256_castsi256_ps(v_first_i(r));
}
static inline vf v_load_n(const float *p, int64_t r)
{
    return _mm256_maskload_ps(p, v_first_i(r));
}
static inline void v_store_n(float *p, vf a, int64_t r)
{
    _mm256_maskstore_ps(p, v_first_i(r), a);
}
/* First r lanes from p, the others `fill`. */
static inline vf v_load_fill(const float *p, int64_t r, float fill)
{
    return _mm256_blendv_ps(_mm256_set1_ps(fill), v_load_n(p, r),
                            v_first(r));
}
static inline float v_hsum(vf a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a),
                          _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
typedef __m256i vs_idx;
static inline vs_idx v_trunc_idx(vf a) { return _mm256_cvttps_epi32(a); }
static inline vf v_lookup8(const float *t, vs_idx j)
{
    return _mm256_permutevar8x32_ps(_mm256_loadu_ps(t), j);
}
static inline float v_hmax(vf a)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a),
                          _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#else
#error "vmath_simd.h: compile with the AVX2+FMA or AVX-512 flags"
#endif

/* ---- shared pieces ---------------------------------------------------- */

static inline vf v_abs(vf a) { return v_andnot(v_set1(-0.0f), a); }
static inline vf v_signbit(vf a)
{
    return v_and(a, v_set1(-0.0f));
}
static inline vf v_neg(vf a) { return v_xor(a, v_set1(-0.0f)); }
/* min(max(x, lo), hi) that keeps NaN (see v_min/v_max). */
static inline vf v_clamp(vf x, float lo, float hi)
{
    return v_max(v_set1(lo), v_min(v_set1(hi), x));
}

/* The frame of a binary loop o[i] = F(a[i sa], b[i sb]) over floats
 * (sa, sb: 1, or 0 for one value broadcast), for the loops of
 * ops_simd_impl.h and bwd_simd_impl.h, inside a function of
 * (const void *av, int64_t sa, const void *bv, int64_t sb, void *ov,
 * int64_t n): VS_BIN_BEGIN declares a, b, o, the broadcast vectors a0
 * and b0 and the index i; after the caller's unrolled part,
 * VS_BIN_FINISH(F) does whole vectors from i, then a masked tail that
 * touches no byte past a[n), b[n), o[n). */
#define VS_BIN_BEGIN                                                      \
    const float *a = av, *b = bv;                                         \
    float *o = ov;                                                        \
    const vf a0 = v_set1(a[0]), b0 = v_set1(b[0]);                        \
    int64_t i = 0
#define VS_BIN_FINISH(F)                                                  \
    do {                                                                  \
        for (; i + VS_LANES <= n; i += VS_LANES)                          \
            v_store(o + i, F(sa ? v_load(a + i) : a0,                     \
                             sb ? v_load(b + i) : b0));                   \
        if (i < n)                                                        \
            v_store_n(o + i,                                              \
                      F(sa ? v_load_n(a + i, n - i) : a0,                 \
                        sb ? v_load_n(b + i, n - i) : b0),                \
                      n - i);                                             \
    } while (0)

/* ---- exp ---------------------------------------------------------------- */

/* Argument range kept by the exp core's general path: exp(-120) * 2^9
 * still underflows to 0 and exp(89) overflows, so clamping changes no
 * result, and n = round(x / ln2) stays in [-174, 129], inside v_scale's
 * range. */
#define VS_EXP_LO (-120.0f)
#define VS_EXP_HI 89.0f
/* |x| <= VS_EXP_FAST: n in [-125, 125], so p * 2^n is a normal float and
 * the scaling is an exact exponent-field addition (v_ldexp_k); NaN is
 * never inside. */
#define VS_EXP_FAST 86.0f

/*
 * exp(r) for |r| <= ln2/2 (plus a few ulps), two strengths, both 1 +
 * r q(r) in Horner form, every step one FMA, so that exp(0) = 1 exactly:
 *   vs_exp_poly:  q of degree 4, relative error 1.9 * 2^-24 (the
 *                 coefficients of Arm's optimized-routines expf);
 *   vs_exp_poly6: q of degree 5, 0.13 * 2^-24 (our relative-error
 *                 minimax fit, Lawson's algorithm on 20001 points of
 *                 [-ln2/2, ln2/2], rounded to float).
 * The shorter one serves exp and softmax; sigmoid, silu and the gelus,
 * which stack more roundings on top, take the longer one to stay inside
 * their bounds (sigmoid: 3.8 ulp with the short one, 2.3 with this).
 */
static inline vf vs_exp_poly(vf r)
{
    vf q = v_fma(v_set1(0x1.0e4020p-7f), r, v_set1(0x1.573e2ep-5f));
    q = v_fma(q, r, v_set1(0x1.555e66p-3f));
    q = v_fma(q, r, v_set1(0x1.fffdb6p-2f));
    q = v_fma(q, r, v_set1(0x1.ffffecp-1f));
    return v_fma(q, r, v_set1(1.0f));
}

/* u(r) of vs_exp_poly6: exp(r) = 1 + r (1 + r u(r)). */
static inline vf vs_exp_u6(vf r)
{
    vf u = v_fma(v_set1(0x1.6c16a8p-10f), r, v_set1(0x1.123ce6p-7f));
    u = v_fma(u, r, v_set1(0x1.555652p-5f));
    u = v_fma(u, r, v_set1(0x1.55547ep-3f));
    return v_fma(u, r, v_set1(0x1.fffffep-2f));
}

static inline vf vs_exp_poly6(vf r)
{
    return v_fma(v_fma(vs_exp_u6(r), r, v_set1(1.0f)), r, v_set1(1.0f));
}

/*
 * Reduction for exp(x), x inside [VS_EXP_LO, VS_EXP_HI]: *k = n + 1.5 *
 * 2^23 with n = x / ln2 rounded to nearest (the shift rounds: one FMA
 * and one subtraction, cheaper than a multiplication and vroundps), *n
 * = n as a float, and r = x - n ln2 by Cody-Waite: x - n * L2U is exact
 * (both are multiples of 2^-24 and the difference is below 0.5), the
 * L2L term is added with one rounding.  Every caller reduces this way,
 * so the fast (v_ldexp_k) and general (v_scale) paths agree bit for bit
 * wherever both apply: a vector takes the general path when any of its
 * lanes needs it, and AVX2 and AVX-512 group lanes differently.
 */
static inline vf vs_exp_reduce(vf x, vf *k, vf *n)
{
    const float L2U = 0x1.62e430p-1f;    /* ln2 rounded to float */
    const float L2L = -0x1.05c610p-29f;  /* ln2 - L2U */
    const vf shift = v_set1(0x1.8p23f);
    *k = v_fma(x, v_set1(0x1.715476p+0f), shift);
    *n = v_sub(*k, shift);
    vf r = v_fnma(*n, v_set1(L2U), x);
    return v_fnma(*n, v_set1(L2L), r);
}

/*
 * exp(hi + lo) = p * 2^n with p in [0.70, 1.42], n integer-valued, *k as
 * in vs_exp_reduce.  |lo| must be tiny next to 1 (the tail of a
 * double-float argument; -0 for a plain float, which the compiler folds
 * away), added to r with one rounding.  deg6 (a constant) picks
 * vs_exp_poly6.  hi outside [VS_EXP_LO, VS_EXP_HI] is clamped (no
 * result changes, see there); NaN stays NaN.
 */
static inline vf vs_exp_parts(vf hi, vf lo, vf *k, vf *n, int deg6)
{
    vf r = v_add(vs_exp_reduce(v_clamp(hi, VS_EXP_LO, VS_EXP_HI), k, n),
                 lo);
    return deg6 ? vs_exp_poly6(r) : vs_exp_poly(r);
}

/* 1 when every lane of x is inside [-VS_EXP_FAST, VS_EXP_FAST] (so none
 * is NaN): the fast path applies to the whole vector. */
static inline int vs_exp_fast_ok(vf x)
{
    return m_all(v_le(v_abs(x), v_set1(VS_EXP_FAST)));
}

/* exp(x) for |x| <= VS_EXP_FAST only (no clamp, no special values). */
static inline vf vs_exp_fast(vf x)
{
    vf k, n;
    vf p = vs_exp_poly(vs_exp_reduce(x, &k, &n));
    return v_ldexp_k(p, k);
}

static inline vf vs_exp(vf x)
{
    if (vs_exp_fast_ok(x))
        return vs_exp_fast(x);
    vf k, n;
    vf p = vs_exp_parts(x, v_set1(-0.0f), &k, &n, 0);
    return v_scale(p, n);
}

/* ---- log ---------------------------------------------------------------- */

/* log(x) = e * ln2 + log(m), m in [sqrt(1/2), sqrt(2)), log(1 + f) =
 * f - f^2/2 + f^3 * P(f) (Cephes logf coefficients), ln2 split so that
 * e * C1 is exact. */
static inline vf vs_log(vf x)
{
    vf e;
    vf m = v_frexp(x, &e);
    vm big = v_gt(m, v_set1(0x1.6a09e6p+0f)); /* sqrt(2) */
    m = v_sel(big, v_mul(m, v_set1(0.5f)), m);
    e = v_sel(big, v_add(e, v_set1(1.0f)), e);
    vf f = v_sub(m, v_set1(1.0f));
    vf z = v_mul(f, f);
    vf p = v_fma(v_set1(7.0376836292e-2f), f, v_set1(-1.1514610310e-1f));
    p = v_fma(p, f, v_set1(1.1676998740e-1f));
    p = v_fma(p, f, v_set1(-1.2420140846e-1f));
    p = v_fma(p, f, v_set1(1.4249322787e-1f));
    p = v_fma(p, f, v_set1(-1.6668057665e-1f));
    p = v_fma(p, f, v_set1(2.0000714765e-1f));
    p = v_fma(p, f, v_set1(-2.4999993993e-1f));
    p = v_fma(p, f, v_set1(3.3333331174e-1f));
    vf y = v_mul(v_mul(p, f), z);
    y = v_fma(e, v_set1(-2.12194440e-4f), y);
    y = v_fnma(v_set1(0.5f), z, y);
    vf r = v_add(f, y);
    r = v_fma(e, v_set1(0.693359375f), r);
#if VS_LANES == 16
    /* every lane positive and finite (its bits - 1, unsigned, below
     * those of +inf - 1: one integer compare on port 5 where the four
     * float compares, the mask and the three blends below are ~7 of the
     * ~34 uops of a step on Golden Cove's two 512-bit ports): r as is,
     * the same value the blends give */
    if (m_all(_mm512_cmplt_epu32_mask(
            _mm512_sub_epi32(_mm512_castps_si512(x), _mm512_set1_epi32(1)),
            _mm512_set1_epi32(0x7f7fffff))))
        return r;
#endif
    /* x <= 0, inf, NaN: -inf at 0, NaN below, x itself otherwise. */
    const vf zero = v_set1(0.0f), inf = v_set1(__builtin_inff());
    vm ok = m_and(v_gt(x, zero), v_lt(x, inf));
    vf spec = v_sel(v_eq(x, zero), v_neg(inf),
                    v_sel(v_lt(x, zero), v_set1(__builtin_nanf("")), x));
    return v_sel(ok, r, spec);
}

/* ---- tanh --------------------------------------------------------------- */

/* |x| < VS_TANH_RAT: vs_tanh's rational range. */
#define VS_TANH_RAT 3.0f

/*
 * tanh, two forms sharing one division:
 *   |x| < 3:  x P(s) / Q(s), s = x^2, P of degree 3, Q of degree 3, P(0) =
 *             Q(0) = 1: our relative-error minimax rational on [0, 3] (an
 *             iteratively reweighted, linearised least-squares fit on
 *             8000 Chebyshev points; 0.01 * 2^-24 in double).  Positive
 *             coefficients: Horner's scheme only adds roundings of
 *             positive terms; the numerator x + (x s) P1(s), P = 1 +
 *             s P1, is one FMA.  Odd: -0 gives -0, tiny x gives x.
 *   else:     sign(x) (1 - 2 / (1 + E)), E = exp(2 min(|x|, 9.5)) by the
 *             short exp (vs_exp_fast): 2 / (1 + E) < 0.005 here, so
 *             E's error hardly shows; tanh rounds to +-1 from 9.01 on
 *             (so does this at 9.5 and for +-inf).  NaN takes the
 *             rational, which keeps it.
 * A vector whose lanes are all inside the first range (the usual case
 * for activations) skips the exp: about a third less time than the
 * expm1 form E / (E + 2) this replaces (bound 3.0 ulp; this one 4.0).
 * A vector with lanes on both sides pays for both forms: on inputs
 * uniform in [-8, 8], about 35% (AVX-512) to 50% (AVX2) more time than
 * that form (in-cache microbenchmark).  Each lane's result depends only on its x,
 * so AVX2 and AVX-512 agree bit for bit.
 */
static inline vf vs_tanh(vf x)
{
    vf a = v_abs(x);
    /* NaN goes to the rational, which keeps it */
    vm rat = v_nge(a, v_set1(VS_TANH_RAT));
    vf s = v_mul(x, x);
    vf p = v_fma(v_set1(6.408349691e-06f), s, v_set1(2.683098894e-03f));
    p = v_fma(p, s, v_set1(1.271602064e-01f));
    vf q = v_fma(v_set1(1.913807937e-04f), s, v_set1(2.284762450e-02f));
    q = v_fma(q, s, v_set1(4.604935348e-01f));
    q = v_fma(q, s, v_set1(1.0f));
    vf num = v_fma(v_mul(x, s), p, x);
    if (m_all(rat))
        return v_div(num, q);
    vf e = vs_exp_fast(v_min(v_add(a, a), v_set1(19.0f)));
    vf sg = v_signbit(x);
    vf d = v_div(v_sel(rat, num, v_or(v_set1(2.0f), sg)),
                 v_sel(rat, q, v_add(e, v_set1(1.0f))));
    return v_sel(rat, d, v_sub(v_or(v_set1(1.0f), sg), d));
}

/* ---- x * sigmoid(v) family --------------------------------------------- */

/*
 * mpos * sigmoid(v) where v >= 0, mneg * sigmoid(v) where v < 0 (vneg),
 * given -|v| = ah + al (al: tail of a double-float, or -0 when there
 * is none: x + -0 = x folds away).
 *   v >= 0: mpos / (1 + e),            e = exp(-|v|) in (0, 1]
 *   v <  0: (mneg * p / (1 + e)) 2^n,  e = p 2^n
 * The negative branch scales last, so a result that underflows into
 * the subnormals is rounded once, not computed from a subnormal e.
 * |mneg| must stay below 2^8 (v_scale's precondition); deg6 (a
 * constant) picks vs_exp_poly6.
 * When every |v| <= VS_EXP_FAST, e and every intermediate are normal
 * floats (or |mneg| is so small that n = 0), so mneg * e / (1 + e)
 * rounds the same values as the scaled-last form: that cheaper path
 * gives bit-identical results.  (The division stays: a Newton
 * reciprocal from a start that AVX2 and AVX-512 share costs six FMAs,
 * about what one vdivps costs on Zen 5, and the division rounds
 * correctly.)
 */
static inline vf vs_mul_sigmoid(vf mpos, vf mneg, vf ah, vf al, vm vneg,
                                int deg6)
{
    vf k, n;
    if (m_all(v_le(v_set1(-VS_EXP_FAST), ah))) {
        vf r = v_add(vs_exp_reduce(ah, &k, &n), al);
        vf e = v_ldexp_k(deg6 ? vs_exp_poly6(r) : vs_exp_poly(r), k);
        vf d = v_add(v_set1(1.0f), e);
        return v_div(v_sel(vneg, v_mul(mneg, e), mpos), d);
    }
    vf p = vs_exp_parts(ah, al, &k, &n, deg6);
    vf d = v_add(v_set1(1.0f), v_scale(p, n));
    vf q = v_div(v_sel(vneg, v_mul(mneg, p), mpos), d);
    return v_sel(vneg, v_scale(q, n), q);
}

static inline vf vs_sigmoid(vf x)
{
    const vf one = v_set1(1.0f);
    return vs_mul_sigmoid(one, one, v_neg(v_abs(x)), v_set1(-0.0f),
                          v_lt(x, v_set1(0.0f)), 1);
}

static inline vf vs_silu(vf x)
{
    /* x < -200 gives -0 anyway; the clamp keeps -inf * 0 out. */
    return vs_mul_sigmoid(x, v_max(v_set1(-200.0f), x), v_neg(v_abs(x)),
                          v_set1(-0.0f), v_lt(x, v_set1(0.0f)), 1);
}

/* Split a double-float constant into float head and tail. */
#define VS_HI(c) ((float)(c))
#define VS_LO(c) ((float)((c) - (double)(float)(c)))

/*
 * gelu, tanh form: x * sigmoid(v), v = c1 x + c3 x^3 (c1 = 2 sqrt(2/pi),
 * c3 = 0.044715 c1).  For x < 0 the result is x e^v / (1 + e^v), whose
 * relative error is |v| times v's: v is therefore evaluated in
 * double-float (head + tail, ~2^-40 relative) with exact FMA products.
 * |x| > 20 is clamped for v only (sigmoid is then 0 or 1 in float).
 * This is the general form (vs_gelu_tanh_wide); vs_gelu_tanh_small
 * serves |x| <= VS_GELU_TANH_SMALL, and vs_gelu_tanh_core (below, no
 * exp) |x| <= VS_GELU_TANH_FAST: vs_gelu_tanh takes the small form for
 * the lanes in between, this one for the others.
 */
static inline vf vs_gelu_tanh_wide(vf x)
{
    const double C1 = 1.5957691216057308, C3 = 0.044715 * C1;
    vf xc = v_clamp(x, -20.0f, 20.0f);
    /* v is odd in x: -|v| = ah + al from xa = -|x| directly (the
     * roundings are symmetric, so these are the negated parts of v's) */
    vf xa = v_or(xc, v_set1(-0.0f));
    /* x^2 = x2h + x2l exactly */
    vf x2h = v_mul(xc, xc);
    vf x2l = v_fms(xc, xc, x2h);
    /* w = C3 * x^2 + C1 in double-float */
    vf ph = v_mul(v_set1(VS_HI(C3)), x2h);
    vf pl = v_fms(v_set1(VS_HI(C3)), x2h, ph);
    const vf c1h = v_set1(VS_HI(C1));
    vf wh = v_add(ph, c1h), wl;
    if (m_all(v_lt(ph, v_set1(2.0f)))) {
        /* ph < 2 <= 2^exponent(c1h) + ...: c1h's exponent is at least
         * ph's, so Fast2Sum gives the same exact error as TwoSum */
        wl = v_sub(ph, v_sub(wh, c1h));
    } else { /* TwoSum: wl gets the rounding error */
        vf bb = v_sub(wh, ph);
        wl = v_add(v_sub(ph, v_sub(wh, bb)), v_sub(c1h, bb));
    }
    wl = v_add(wl, v_fma(v_set1(VS_HI(C3)), x2l, pl));
    wl = v_fma(v_set1(VS_LO(C3)), x2h, wl);
    wl = v_add(wl, v_set1(VS_LO(C1)));
    /* -|v| = xa * w */
    vf ah = v_mul(xa, wh);
    vf al = v_fma(xa, wl, v_fms(xa, wh, ah));
    return vs_mul_sigmoid(x, xc, ah, al, v_lt(x, v_set1(0.0f)), 1);
}

/* |x| <= VS_GELU_TANH_SMALL: vs_gelu_tanh_small's range. */
#define VS_GELU_TANH_SMALL 4.0f

/*
 * gelu, tanh form, for |x| <= VS_GELU_TANH_SMALL only (other lanes:
 * garbage; NaN too): v's double-float with fewer operations than the
 * wide form's, and no range checks.  w = C3 x^2 + C1 is one FMA, wh;
 * as C3 x^2 <= C1 here, wh lies in [C1, 2 C1], so C1 - wh is exact
 * (Sterbenz) and FMA(C3, x2h, C1 - wh) is wh's rounding error, rounded
 * once (2^-24 of an error below 2^-24 wh).  The terms C3 x2l, C3lo x2h
 * and C1lo complete w's tail as in the wide form.  |v| <= 11 here, so
 * the sigmoid takes vs_mul_sigmoid's fast path without its check.
 * The values differ from the wide form's in the last bits (other
 * roundings of the tail), within the same bound.
 */
static inline vf vs_gelu_tanh_small(vf x)
{
    const double C1 = 1.5957691216057308, C3 = 0.044715 * C1;
    const vf c1h = v_set1(VS_HI(C1)), c3h = v_set1(VS_HI(C3));
    vf xa = v_or(x, v_set1(-0.0f));
    vf x2h = v_mul(x, x);
    vf x2l = v_fms(x, x, x2h);
    vf wh = v_fma(c3h, x2h, c1h);
    vf t = v_fma(v_set1(VS_LO(C3)), x2h, v_set1(VS_LO(C1)));
    vf wl = v_fma(c3h, x2h, v_sub(c1h, wh));
    wl = v_add(v_fma(c3h, x2l, wl), t);
    vf ah = v_mul(xa, wh);
    vf al = v_fma(xa, wl, v_fms(xa, wh, ah));
    vf k, n;
    vf r = v_add(vs_exp_reduce(ah, &k, &n), al);
    vf e = v_ldexp_nk(vs_exp_poly6(r), n, k);
    vf d = v_add(v_set1(1.0f), e);
    return v_div(v_sel(v_lt(x, v_set1(0.0f)), v_mul(x, e), x), d);
}

/* |x| <= VS_GELU_FAST: vs_gelu_erf_core's range. */
#define VS_GELU_FAST 3.0f

/*
 * Phi(-a) = erfc(a / sqrt(2)) / 2 for a in [0, 3] on 8 pieces, piece
 * j = trunc(a * 2.666f) (a = 3 gives 7.998: piece 7), Phi(-a) =
 * P_j(a - c_j) with P_j of degree 6: vs_gelu_pc[k][j] is its
 * coefficient of u^k, vs_gelu_ctr[j] = c_j.  c_0 = 0; the other c_j are
 * within 0.006 of their piece's midpoint, chosen so that Phi(-c_j) is
 * nearly a float (P_j(0) rounds with almost no error), and a - c_j is
 * exact (Sterbenz: c_j / 2 <= a <= 2 c_j on the piece).  Our
 * relative-error minimax fits (scripts/gelu_erf_tables.py, which prints
 * these tables and checks them): at most 9.8e-9 (2^-26.6, piece 7) with
 * the float coefficients in double, 1.52 * 2^-24 as evaluated in float
 * (Horner, one rounding per FMA).  vs_gelu_dpc is the same for
 * gelu'(-a) = Phi(-a) - a phi(a) (phi the normal density; gelu_backward,
 * bwd_simd_impl.h), fitted for error relative to Phi(-a) + a phi(a)
 * (its bound's unit; it crosses 0 near a = 0.75): at most 3.2e-8
 * (2^-24.9, piece 5) in double, 1.20 * 2^-24 in float.
 * The lookups are vpermps (v_lookup8):
 * 8 entries, the width of one AVX2 register, so both ISAs run the same
 * operations.
 */
static _Alignas(32) const float vs_gelu_ctr[8] = {
    0.000000000e+00f, 5.586101413e-01f, 9.419723153e-01f, 1.307562113e+00f,
    1.690929055e+00f, 2.062339306e+00f, 2.436019421e+00f, 2.813321829e+00f};
static _Alignas(32) const float vs_gelu_pc[7][8] = {
    {5.000000000e-01f, 2.882139087e-01f, 1.731034070e-01f,
     9.551093727e-02f, 4.542517662e-02f, 1.958772168e-02f,
     7.424943615e-03f, 2.451627515e-03f},
    {-3.989423215e-01f, -3.413110077e-01f, -2.559957504e-01f,
     -1.696873158e-01f, -9.550668299e-02f, -4.756965488e-02f,
     -2.052659541e-02f, -7.624958176e-03f},
    {1.938902415e-06f, 9.532989562e-02f, 1.205704585e-01f,
     1.109383330e-01f, 8.074751496e-02f, 4.905238748e-02f,
     2.500159852e-02f, 1.072573476e-02f},
    {6.645967811e-02f, 3.913458809e-02f, 4.808954895e-03f,
     -2.007092722e-02f, -2.959471196e-02f, -2.579262853e-02f,
     -1.688061841e-02f, -8.787618950e-03f},
    {2.253503771e-04f, -2.135361917e-02f, -2.122803219e-02f,
     -1.192681491e-02f, -9.475151310e-04f, 5.122327711e-03f,
     6.112742703e-03f, 4.392587114e-03f},
    {-1.081766654e-02f, -3.482292639e-03f, 3.228442511e-03f,
     6.083958317e-03f, 4.743203986e-03f, 1.762637752e-03f,
     -4.304670147e-04f, -1.144760754e-03f},
    {1.577468240e-03f, 3.163002199e-03f, 2.327526687e-03f,
     2.208528167e-04f, -1.200819388e-03f, -1.269747620e-03f,
     -6.216389593e-04f, -4.071994408e-05f},
};
static _Alignas(32) const float vs_gelu_dpc[7][8] = {
    {5.000000000e-01f, 9.755411744e-02f, -6.803749502e-02f,
     -1.263657659e-01f, -1.160698459e-01f, -7.851704955e-02f,
     -4.257824272e-02f, -1.899983548e-02f},
    {-7.978847623e-01f, -5.761175156e-01f, -2.848434448e-01f,
     -4.925705492e-02f, 8.206326514e-02f, 1.071860194e-01f,
     8.075553924e-02f, 4.509995133e-02f},
    {1.042559325e-05f, 3.515733778e-01f, 3.752970994e-01f,
     2.540806234e-01f, 9.211314470e-02f, -1.242036652e-02f,
     -4.835834354e-02f, -4.198861122e-02f},
    {2.657816112e-01f, 1.088239700e-01f, -6.074627116e-02f,
     -1.426736563e-01f, -1.247864813e-01f, -6.091325730e-02f,
     -7.953001186e-03f, 1.428401843e-02f},
    {1.431983663e-03f, -1.165697351e-01f, -9.063121676e-02f,
     -1.959226280e-02f, 3.552479669e-02f, 4.358923808e-02f,
     2.515608259e-02f, 5.720104091e-03f},
    {-6.563918293e-02f, -1.027118508e-02f, 3.241702542e-02f,
     3.854597360e-02f, 1.624310389e-02f, -5.190053023e-03f,
     -1.188216265e-02f, -7.659492549e-03f},
    {1.169142034e-02f, 2.390638553e-02f, 1.053102594e-02f,
     -4.962426145e-03f, -1.203306578e-02f, -4.194122273e-03f,
     -1.525263360e-04f, 3.012226662e-03f},
};

/* The piece j of a in [0, 3] and u = a - c_j (exact), c_j = ctr[j]
 * (vs_gelu_ctr, or vs_gelu_tanh_ctr below). */
static inline vf vs_gelu_piece(vf a, const float *ctr, vs_idx *j)
{
    *j = v_trunc_idx(v_mul(a, v_set1(2.666f)));
    return v_sub(a, v_lookup8(ctr, *j));
}

/* P_j(u) = sum of t[k][j] u^k, k = 0..6, by Horner (one FMA a step). */
static inline vf vs_gelu_poly6(const float (*t)[8], vs_idx j, vf u)
{
    vf p = v_fma(v_lookup8(t[6], j), u, v_lookup8(t[5], j));
    p = v_fma(p, u, v_lookup8(t[4], j));
    p = v_fma(p, u, v_lookup8(t[3], j));
    p = v_fma(p, u, v_lookup8(t[2], j));
    p = v_fma(p, u, v_lookup8(t[1], j));
    return v_fma(p, u, v_lookup8(t[0], j));
}

#if VS_LANES == 16
/*
 * The gelus' cores at AVX-512 for a = |x| <= 3: F(a) = Phi(-a) (gelu) or
 * S(a) = sigmoid(-v(a)) = 1 / (1 + exp(v(a))) (gelu_tanh, v as in
 * vs_gelu_tanh_wide) on 13 pieces of a 16-entry table, then xs = x F(a)
 * and x < 0 (and -0): xs, x >= 0: x - xs, as the 8-piece cores below.
 * No centre table and no conversion: t = fl(a + 1.5 2^21) (ulp 1/4)
 * holds j = round(4 a) in its low bits, which are the lookups' index
 * (vpermps reads the low 4 bits), w = a - (t - 1.5 2^21) = a - j / 4
 * (both exact, |w| <= 1/8) and F(a) = P_j(w), P_j of degree 5, t[k][j]
 * its coefficient of w^k (piece j: a in [(j - 1/2) / 4, (j + 1/2) / 4];
 * a = 3 is in piece 12; entries 13-15 are 0, unused).  Our
 * relative-error minimax fits (scripts/gelu16_tables.py, which prints
 * vs_gelu16_pc and vs_gelu16_tanh_pc and checks them): at most 2^-24.4
 * in double (P_j(0) is F(j / 4) rounded to float), 1.63 * 2^-24 (Phi)
 * and 1.67 * 2^-24 (S) as evaluated in float.  vs_gelu16_dpc is the
 * same for gelu_backward's gelu'(-a) = Phi(-a) - a phi(a) (bwd_vf.h),
 * fitted for error relative to Phi(-a) + a phi(a) as vs_gelu_dpc:
 * 1.31 * 2^-24 in float.  Measured over every float
 * with |x| <= 3: in vmath_c.c.  Six lookups, five FMAs and three
 * additions a vector where the 8 pieces of degree 6 take eight lookups
 * (one for the centre), a conversion and seven multiplications: on
 * Zen 4 a zmm vpermps shares the FMA's pipes (scripts/gelu_lut_bench.c)
 * and the additions run beside them, so the lookups are most of the
 * step (scripts/gelu16_tp.c measures it).  AVX2 keeps the 8 pieces: a
 * 16-entry lookup there is two vpermps and a blend, which made its
 * gelus 30% slower; so the levels' gelus differ in the last bits (each
 * within its bound; tests/checkasm/vmath.c). */
static _Alignas(64) const float vs_gelu16_pc[6][16] = {
    {5.000000000e-01f, 4.012936652e-01f, 3.085375428e-01f,
     2.266273499e-01f, 1.586552560e-01f, 1.056497768e-01f,
     6.680720299e-02f, 4.005915672e-02f, 2.275013179e-02f,
     1.222447213e-02f, 6.209665444e-03f, 2.979763318e-03f,
     1.349898055e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {-3.989422917e-01f, -3.866681159e-01f, -3.520653248e-01f,
     -3.011374176e-01f, -2.419707328e-01f, -1.826490909e-01f,
     -1.295175999e-01f, -8.627732098e-02f, -5.399096757e-02f,
     -3.173965216e-02f, -1.752830110e-02f, -9.093563072e-03f,
     -4.431848414e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {8.524816622e-07f, 4.833792895e-02f, 8.801388741e-02f,
     1.129274368e-01f, 1.209840551e-01f, 1.141540259e-01f,
     9.713739157e-02f, 7.549282908e-02f, 5.399114639e-02f,
     3.570748866e-02f, 2.191038802e-02f, 1.250362117e-02f,
     6.647750270e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {6.647048891e-02f, 6.041377410e-02f, 4.400916770e-02f,
     2.195425145e-02f, 2.798364903e-06f, -1.712050289e-02f,
     -2.698087879e-02f, -2.965728194e-02f, -2.699513733e-02f,
     -2.149076387e-02f, -1.533705555e-02f, -9.945921600e-03f,
     -5.909109022e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {1.808616071e-04f, -1.208271459e-02f, -1.996651292e-02f,
     -2.294812351e-02f, -2.004920319e-02f, -1.356034074e-02f,
     -6.029934622e-03f, 3.628081176e-04f, 4.468014929e-03f,
     6.097280420e-03f, 5.925260019e-03f, 4.753867164e-03f,
     3.327006474e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {-1.052017603e-02f, -8.225697093e-03f, -4.669831134e-03f,
     3.310721659e-04f, 3.863101825e-03f, 5.793521646e-03f,
     5.739234854e-03f, 4.280616064e-03f, 2.232067054e-03f,
     4.967440618e-04f, -6.745128776e-04f, -1.129022101e-03f,
     -1.108676894e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
};
static _Alignas(64) const float vs_gelu16_tanh_pc[6][16] = {
    {5.000000000e-01f, 4.012985826e-01f, 3.085719943e-01f,
     2.267192602e-01f, 1.588080078e-01f, 1.058286354e-01f,
     6.695228070e-02f, 4.011692479e-02f, 2.270115353e-02f,
     1.208947971e-02f, 6.033706479e-03f, 2.808416029e-03f,
     1.212464063e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {-3.989422917e-01f, -3.866107464e-01f, -3.518837690e-01f,
     -3.008766770e-01f, -2.417720854e-01f, -1.826570183e-01f,
     -1.297753751e-01f, -8.669365942e-02f, -5.440020561e-02f,
     -3.200178221e-02f, -1.759411395e-02f, -9.002668783e-03f,
     -4.265543539e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {8.517170613e-07f, 4.855304956e-02f, 8.825314045e-02f,
     1.129634827e-01f, 1.206985340e-01f, 1.136543155e-01f,
     9.669042379e-02f, 7.533315569e-02f, 5.416874588e-02f,
     3.608503565e-02f, 2.228675783e-02f, 1.274025906e-02f,
     6.716431584e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {6.679963320e-02f, 6.060208008e-02f, 4.388989136e-02f,
     2.155568078e-02f, -4.133317270e-04f, -1.724769920e-02f,
     -2.672645822e-02f, -2.919105068e-02f, -2.660604194e-02f,
     -2.136119828e-02f, -1.545461453e-02f, -1.017466653e-02f,
     -6.110024638e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {1.800307073e-04f, -1.251368131e-02f, -1.998260990e-02f,
     -2.303575724e-02f, -2.001335286e-02f, -1.335523929e-02f,
     -5.800081417e-03f, 4.388208617e-04f, 4.288811702e-03f,
     5.826432724e-03f, 5.734890699e-03f, 4.717785399e-03f,
     3.401755588e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {-1.074328367e-02f, -8.076423779e-03f, -4.937514663e-03f,
     4.866502422e-04f, 4.387000110e-03f, 6.124031264e-03f,
     5.840438418e-03f, 4.042112734e-03f, 2.058514627e-03f,
     5.245979992e-04f, -5.561514990e-04f, -1.008864841e-03f,
     -1.056398032e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
};
static _Alignas(64) const float vs_gelu16_dpc[6][16] = {
    {5.000000000e-01f, 3.046266437e-01f, 1.325048804e-01f,
     7.742806338e-04f, -8.331546932e-02f, -1.226615831e-01f,
     -1.274691969e-01f, -1.109261513e-01f, -8.523180336e-02f,
     -5.918974429e-02f, -3.761108592e-02f, -2.202753350e-02f,
     -1.194564719e-02f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {-7.978845835e-01f, -7.491694689e-01f, -6.161143184e-01f,
     -4.328850508e-01f, -2.419707179e-01f, -7.990898192e-02f,
     3.237940371e-02f, 9.166964144e-02f, 1.079819351e-01f,
     9.720268101e-02f, 7.449527830e-02f, 5.058294535e-02f,
     3.102294169e-02f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {1.630524139e-06f, 1.903120875e-01f, 3.300565183e-01f,
     3.881823123e-01f, 3.629547060e-01f, 2.782547772e-01f,
     1.699953526e-01f, 7.077561319e-02f, 1.946325483e-06f,
     -3.793843091e-02f, -4.929843917e-02f, -4.454456270e-02f,
     -3.323912621e-02f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {2.659260631e-01f, 2.298334986e-01f, 1.356911212e-01f,
     1.901625097e-02f, -8.065830916e-02f, -1.368655860e-01f,
     -1.443606615e-01f, -1.158765331e-01f, -7.198992372e-02f,
     -3.072685003e-02f, -2.009067917e-03f, 1.250847615e-02f,
     1.624923386e-02f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {2.819340443e-04f, -6.944319606e-02f, -1.116592139e-01f,
     -1.136845276e-01f, -8.043724298e-02f, -3.102024831e-02f,
     1.327279024e-02f, 3.943641484e-02f, 4.474617913e-02f,
     3.581672162e-02f, 2.136072330e-02f, 8.391031064e-03f,
     5.499022882e-05f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
    {-6.042421609e-02f, -4.769416898e-02f, -1.824431866e-02f,
     1.452043653e-02f, 3.627016768e-02f, 4.003063589e-02f,
     2.941771410e-02f, 1.200436987e-02f, -2.523025265e-03f,
     -1.058092155e-02f, -1.164110657e-02f, -8.641763590e-03f,
     -4.610426724e-03f, 0.000000000e+00f, 0.000000000e+00f,
     0.000000000e+00f},
};

/* P_j(w) of the table t for a = |x| in [0, 3] (other lanes: garbage) */
static inline vf vs_gelu16_poly(vf a, const float (*t)[16])
{
    const vf mag = v_set1(3145728.0f); /* 1.5 2^21: its ulp is 1/4 */
    vf tt = v_add(a, mag);
    vf w = v_sub(a, v_sub(tt, mag));
    vf p = v_fma(v_lookup16(t[5], tt), w, v_lookup16(t[4], tt));
    p = v_fma(p, w, v_lookup16(t[3], tt));
    p = v_fma(p, w, v_lookup16(t[2], tt));
    p = v_fma(p, w, v_lookup16(t[1], tt));
    return v_fma(p, w, v_lookup16(t[0], tt));
}

static inline vf vs_gelu16_core(vf x, const float (*t)[16])
{
    vf p = vs_gelu16_poly(v_abs(x), t);
    return v_signsel_sub(x, x, v_mul(x, p));
}

/* gelu, erf form, for |x| <= VS_GELU_FAST only (other lanes: garbage):
 * the 16 pieces above on Phi(-a). */
static inline vf vs_gelu_erf_core(vf x)
{
    return vs_gelu16_core(x, vs_gelu16_pc);
}
#else
/*
 * gelu, erf form, for |x| <= VS_GELU_FAST only (other lanes: garbage),
 * without an exp, a division or a double-float sum: with a = |x| and
 * xs = x Phi(-a) (P_j above, one rounding more),
 *   x <  0 (and -0): xs,   x >= 0: x - xs  (|xs| <= x / 2: no
 * cancellation), chosen by x's sign bit, so -0 gives -0.  Error: for
 * x < 0, Phi(-a)'s 1.52 * 2^-24 plus the product's half ulp; for
 * x > 0 less (xs is at most half the result); measured over every
 * float with |x| <= 3: 1.760 ulp (x = -1.859).  23 instructions per
 * vector (8 lookups, 6 FMAs) where the form below (exp(-x^2/2) G(a),
 * G of degree 13 on [0, 3]) took 40: llvm-mca -mcpu=icelake-server
 * 18.5 -> 9.0 cycles per 16 elements.
 */
static inline vf vs_gelu_erf_core(vf x)
{
    vs_idx j;
    vf u = vs_gelu_piece(v_abs(x), vs_gelu_ctr, &j);
    vf p = vs_gelu_poly6(vs_gelu_pc, j, u);
    return v_signsel_sub(x, x, v_mul(x, p));
}
#endif

/*
 * gelu, erf form, for |x| > VS_GELU_FAST (other lanes: garbage; NaN
 * stays NaN), with a = |x|: Phi(-a) = exp(-a^2/2) G(a), G(a) =
 * erfcx(a / sqrt(2)) / 2 smooth, on two pieces, a in [3, 7] and
 * [7, 14.5], each a polynomial of degree 10 in u = a - 5 and a - 10.75
 * (our relative-error minimax fits, Lawson's algorithm on Chebyshev
 * points: 5.9e-9 and 6.6e-9 in double, 1.8 and 1.2 * 2^-24 in float),
 * the lane's piece picked.  exp's argument is -x^2/2 exactly: the head
 * -sq/2 is reduced as in vs_exp_reduce and the tail -(x^2 - sq)/2 (one
 * FMA) added to r; x G exp(r) = xg + (xg r) q, exp(r) = 1 + r q
 * (vs_exp_poly6), then, with xs = x Phi(-a), x < 0: xs, x >= 0:
 * x - xs as in the core.  x
 * is clamped to [-14.5, 14.5]: below, x Phi(x) rounds to -0 (from
 * -14.23 on); above 7, Phi(-a) < 2^-39 and x - xs is x.  exp(-a^2/2)
 * reaches 2^-152 here, so xs is scaled last by v_scale (one rounding,
 * into the subnormals where the result is one).  vs_gelu_g_tail is G
 * on the two pieces, for a in (3, 14.5] (gelu_backward's rows too).
 */
static inline vf vs_gelu_g_tail(vf a)
{
    /* both pieces, then one selection: fewer live constants than
     * selecting each coefficient (AVX2 has 16 registers) */
    vf u = v_sub(a, v_set1(5.0f));
    vf g = v_fma(v_set1(1.560796825e-09f), u, v_set1(-1.057503329e-08f));
    g = v_fma(g, u, v_set1(5.233090761e-08f));
    g = v_fma(g, u, v_set1(-3.319720463e-07f));
    g = v_fma(g, u, v_set1(2.139068101e-06f));
    g = v_fma(g, u, v_set1(-1.309616619e-05f));
    g = v_fma(g, u, v_set1(7.821629697e-05f));
    g = v_fma(g, u, v_set1(-4.564665433e-04f));
    g = v_fma(g, u, v_set1(2.595263533e-03f));
    g = v_fma(g, u, v_set1(-1.434575766e-02f));
    g = v_fma(g, u, v_set1(7.691930234e-02f));
    vf w = v_sub(a, v_set1(10.75f));
    vf h = v_fma(v_set1(1.421634945e-12f), w, v_set1(-1.675626998e-11f));
    h = v_fma(h, w, v_set1(1.403112904e-10f));
    h = v_fma(h, w, v_set1(-1.612574629e-09f));
    h = v_fma(h, w, v_set1(1.920430215e-08f));
    h = v_fma(h, w, v_set1(-2.182430450e-07f));
    h = v_fma(h, w, v_set1(2.456826223e-06f));
    h = v_fma(h, w, v_set1(-2.749986561e-05f));
    h = v_fma(h, w, v_set1(3.054619883e-04f));
    h = v_fma(h, w, v_set1(-3.366219345e-03f));
    h = v_fma(h, w, v_set1(3.679777309e-02f));
    return v_sel(v_lt(a, v_set1(7.0f)), g, h);
}

static inline vf vs_gelu_erf_tail(vf x)
{
    vf xc = v_clamp(x, -14.5f, 14.5f);
    vf g = vs_gelu_g_tail(v_abs(xc));
    vf sq = v_mul(xc, xc);
    vf sql = v_fms(xc, xc, sq);
    vf k, n;
    vf r = vs_exp_reduce(v_mul(sq, v_set1(-0.5f)), &k, &n);
    r = v_fma(sql, v_set1(-0.5f), r);
    vf xg = v_mul(xc, g);
    vf q = v_fma(vs_exp_u6(r), r, v_set1(1.0f));
    vf xs = v_scale(v_fma(v_mul(xg, r), q, xg), n);
    return v_sel(v_sign_m(x), xs, v_sub(x, xs));
}

/* gelu, erf form: vs_gelu_erf_core where every lane allows it (the
 * common case), else lane by lane the core or vs_gelu_erf_tail (so a
 * lane's result does not depend on its neighbours: AVX2 and AVX-512
 * agree bit for bit). */
static inline __attribute__((always_inline)) vf vs_gelu_erf(vf x)
{
    vm in = v_le(v_abs(x), v_set1(VS_GELU_FAST));
    if (m_all(in))
        return vs_gelu_erf_core(x);
    return v_sel(in, vs_gelu_erf_core(x), vs_gelu_erf_tail(x));
}

/* |x| <= VS_GELU_TANH_FAST: vs_gelu_tanh_core's range. */
#define VS_GELU_TANH_FAST 3.0f

/*
 * S(a) = sigmoid(-v(a)) = 1 / (1 + exp(v(a))) (v as in
 * vs_gelu_tanh_wide) for a in [0, 3] on 8 pieces, as Phi(-a) above:
 * piece j = trunc(a * 2.666f) (a = 3 is in piece 7), S(a) =
 * P_j(a - c_j), P_j of degree 6, vs_gelu_tanh_pc[k][j] its coefficient
 * of u^k, vs_gelu_tanh_ctr[j] = c_j (c_0 = 0, the others within 0.006
 * of their piece's midpoint with S(c_j) nearly a float; a - c_j exact
 * by Sterbenz).  Our relative-error minimax fits
 * (scripts/gelu_tanh_tables.py, which prints these tables and checks
 * them): at most 1.04e-8 (2^-26.5, piece 7) with the float
 * coefficients in double, 1.48 * 2^-24 as evaluated in float (Horner,
 * one rounding per FMA).
 */
static _Alignas(32) const float vs_gelu_tanh_ctr[8] = {
    0.000000000e+00f, 5.608735085e-01f, 9.361953139e-01f, 1.314412713e+00f,
    1.691808581e+00f, 2.062369108e+00f, 2.435629606e+00f, 2.817771673e+00f};
static _Alignas(32) const float vs_gelu_tanh_pc[7][8] = {
    {5.000000000e-01f, 2.874882519e-01f, 1.747253388e-01f,
     9.452991933e-02f, 4.542260244e-02f, 1.951258443e-02f,
     7.262813859e-03f, 2.253737068e-03f},
    {-3.989423215e-01f, -3.406692445e-01f, -2.571581900e-01f,
     -1.682439595e-01f, -9.575781971e-02f, -4.794944450e-02f,
     -2.066160925e-02f, -7.410239894e-03f},
    {1.954692380e-06f, 9.580925107e-02f, 1.202773303e-01f,
     1.100058779e-01f, 8.043028414e-02f, 4.929574952e-02f,
     2.541537769e-02f, 1.079848502e-02f},
    {6.678827107e-02f, 3.873606771e-02f, 4.861391149e-03f,
     -2.041646466e-02f, -2.915461548e-02f, -2.545823157e-02f,
     -1.695407182e-02f, -8.942178451e-03f},
    {2.308927797e-04f, -2.171511017e-02f, -2.125244215e-02f,
     -1.132168155e-02f, -7.919561467e-04f, 4.882680252e-03f,
     5.888177082e-03f, 4.371039104e-03f},
    {-1.107317209e-02f, -3.344209632e-03f, 3.396309214e-03f,
     6.088288501e-03f, 4.500157665e-03f, 1.652833656e-03f,
     -3.310753673e-04f, -1.044773730e-03f},
    {1.640911913e-03f, 3.294463735e-03f, 2.357357880e-03f,
     1.064336757e-04f, -1.229199348e-03f, -1.158011029e-03f,
     -5.676059518e-04f, -7.870008994e-05f},
};

/*
 * gelu, tanh form, for |x| <= VS_GELU_TANH_FAST only (other lanes:
 * garbage), without an exp, a division or v's double-float: with
 * a = |x| and xs = x S(a) (P_j above, one rounding more),
 *   x <  0 (and -0): xs,   x >= 0: x - xs  (|xs| <= x / 2: no
 * cancellation), chosen by x's sign bit as vs_gelu_erf_core does.
 * Error: for x < 0, S's 1.48 * 2^-24 plus the product's half ulp; for
 * x > 0 less (S / (1 - S) <= 1 of S's error, plus the subtraction's
 * half ulp); measured over every float with |x| <= 3 (then at both
 * levels; AVX2 keeps this form, AVX-512 takes vs_gelu16_core):
 * 1.986 ulp (x = -2.997, piece 7), 1.187 for x > 0.  Where the small
 * form (an exp of v's double-float and a division) served these lanes,
 * scripts/kernel_bounds.py's step of 2 vectors (llvm-mca
 * -mcpu=icelake-server) went from 82 to 72 instructions and from 32 to
 * 20 cycles per 32 elements on AVX-512, 27 to 16 cycles per 16 on AVX2.
 */
#if VS_LANES == 16 /* the 16 pieces of vs_gelu16_core on S(a) */
static inline vf vs_gelu_tanh_core(vf x)
{
    return vs_gelu16_core(x, vs_gelu16_tanh_pc);
}
#else
static inline vf vs_gelu_tanh_core(vf x)
{
    vs_idx j;
    vf u = vs_gelu_piece(v_abs(x), vs_gelu_tanh_ctr, &j);
    vf p = vs_gelu_poly6(vs_gelu_tanh_pc, j, u);
    return v_signsel_sub(x, x, v_mul(x, p));
}
#endif

/* gelu, tanh form: vs_gelu_tanh_core where every lane allows it (the
 * common case), else lane by lane the core, vs_gelu_tanh_small
 * (|x| <= VS_GELU_TANH_SMALL) or the wide form (so a lane's result does
 * not depend on its neighbours: AVX2 and AVX-512 agree bit for bit;
 * NaN takes the wide form). */
static inline __attribute__((always_inline)) vf vs_gelu_tanh(vf x)
{
    vf a = v_abs(x);
    vm in = v_le(a, v_set1(VS_GELU_TANH_FAST));
    if (m_all(in))
        return vs_gelu_tanh_core(x);
    vm sm = v_le(a, v_set1(VS_GELU_TANH_SMALL));
    vf r = vs_gelu_tanh_small(x);
    if (!m_all(sm))
        r = v_sel(sm, r, vs_gelu_tanh_wide(x));
    return v_sel(in, vs_gelu_tanh_core(x), r);
}

/* ---- array drivers ---------------------------------------------------- */

/* static void NAME(const float *x, float *y, int64_t n) applying FN: two
 * vectors per iteration (independent chains), then one, then a masked
 * tail that touches no byte past x[n) / y[n).  Both vectors are loaded
 * before either is stored, so y == x works. */
#define VS_ARRAY(NAME, FN)                                                \
    static void NAME(const float *x, float *y, int64_t n)                 \
    {                                                                     \
        int64_t i = 0;                                                    \
        for (; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {                \
            vf a = v_load(x + i), b = v_load(x + i + VS_LANES);           \
            a = FN(a);                                                    \
            b = FN(b);                                                    \
            v_store(y + i, a);                                            \
            v_store(y + i + VS_LANES, b);                                 \
        }                                                                 \
        for (; i + VS_LANES <= n; i += VS_LANES)                          \
            v_store(y + i, FN(v_load(x + i)));                            \
        if (i < n)                                                        \
            v_store_n(y + i, FN(v_load_n(x + i, n - i)), n - i);          \
    }

/* Elements from p up to the next 64-byte boundary (at most n): the
 * head that a streaming loop writes with ordinary stores.  p must be
 * aligned to its element size es. */
static inline int64_t vs_head64(const void *p, int64_t n, int64_t es)
{
    int64_t h = (int64_t)((64 - ((uintptr_t)p & 63)) & 63) / es;
    return h < n ? h : n;
}

/* NAME##_nt: the same results as NAME, y's whole 64-byte lines written
 * with streaming stores (see tb_vmath.fn_nt): the head up to y's first
 * line boundary and the tail go through NAME, then a store fence. */
#define VS_ARRAY_NT(NAME, FN)                                             \
    static void NAME##_nt(const float *x, float *y, int64_t n)            \
    {                                                                     \
        int64_t i = vs_head64(y, n, 4);                                   \
        NAME(x, y, i);                                                    \
        for (; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {                \
            vf a = v_load(x + i), b = v_load(x + i + VS_LANES);           \
            a = FN(a);                                                    \
            b = FN(b);                                                    \
            v_stream(y + i, a);                                           \
            v_stream(y + i + VS_LANES, b);                                \
        }                                                                 \
        NAME(x + i, y + i, n - i);                                        \
        _mm_sfence();                                                     \
    }

#define VS_ARRAY2(NAME, FN) VS_ARRAY(NAME, FN) VS_ARRAY_NT(NAME, FN)

#define VS_ARRAYS(SFX)                                                    \
    VS_ARRAY2(vm_exp_##SFX, vs_exp)                                       \
    VS_ARRAY2(vm_log_##SFX, vs_log)                                       \
    VS_ARRAY2(vm_tanh_##SFX, vs_tanh)                                     \
    VS_ARRAY2(vm_sigmoid_##SFX, vs_sigmoid)                               \
    VS_ARRAY2(vm_gelu_erf_##SFX, vs_gelu_erf)                             \
    VS_ARRAY2(vm_gelu_tanh_##SFX, vs_gelu_tanh)                           \
    VS_ARRAY2(vm_silu_##SFX, vs_silu)

/* Install the VS_ARRAYS(SFX) functions into tb_vmath *t at level ISA. */
#define VS_INSTALL(t, SFX, ISA)                                           \
    do {                                                                  \
        (t)->fn[TB_VM_EXP] = vm_exp_##SFX;                                \
        (t)->fn[TB_VM_LOG] = vm_log_##SFX;                                \
        (t)->fn[TB_VM_TANH] = vm_tanh_##SFX;                              \
        (t)->fn[TB_VM_SIGMOID] = vm_sigmoid_##SFX;                        \
        (t)->fn[TB_VM_GELU_ERF] = vm_gelu_erf_##SFX;                      \
        (t)->fn[TB_VM_GELU_TANH] = vm_gelu_tanh_##SFX;                    \
        (t)->fn[TB_VM_SILU] = vm_silu_##SFX;                              \
        (t)->fn_nt[TB_VM_EXP] = vm_exp_##SFX##_nt;                        \
        (t)->fn_nt[TB_VM_LOG] = vm_log_##SFX##_nt;                        \
        (t)->fn_nt[TB_VM_TANH] = vm_tanh_##SFX##_nt;                      \
        (t)->fn_nt[TB_VM_SIGMOID] = vm_sigmoid_##SFX##_nt;                \
        (t)->fn_nt[TB_VM_GELU_ERF] = vm_gelu_erf_##SFX##_nt;              \
        (t)->fn_nt[TB_VM_GELU_TANH] = vm_gelu_tanh_##SFX##_nt;            \
        (t)->fn_nt[TB_VM_SILU] = vm_silu_##SFX##_nt;                      \
        for (int f_ = 0; f_ < TB_VM_COUNT; f_++)                          \
            (t)->isa[f_] = (ISA);                                         \
    } while (0)

#endif /* TB_BACKENDS_CPU_VMATH_SIMD_H */
