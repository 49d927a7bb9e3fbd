/* A thin layer over the double-precision vectors of one ISA level
 * (AVX-512 F+DQ: 8 lanes; else AVX2+FMA: 4 lanes), with 64-bit integer
 * lanes and masks, for the kernels of rand_simd_impl.h and
 * pow_simd_impl.h.  Static inline only; included by files built with
 * their level's flags. */
#ifndef TB_BACKENDS_CPU_DVEC_SIMD_H
#define TB_BACKENDS_CPU_DVEC_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#include "../../ops/rand.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#define RS_W 8 /* doubles (and 64-bit lanes) per vector */
typedef __m512d rd;
typedef __m512i ri;
typedef __mmask8 rmask;
#define RS_I(name) _mm512_##name /* an intrinsic on whole vectors */
#define RS_H(name) _mm256_##name /* on their float halves */
static inline ri rs_i1(uint64_t v) { return _mm512_set1_epi64((long long)v); }
static inline ri rs_ixor(ri a, ri b) { return _mm512_xor_si512(a, b); }
static inline ri rs_iand(ri a, ri b) { return _mm512_and_si512(a, b); }
static inline ri rs_ior(ri a, ri b) { return _mm512_or_si512(a, b); }
static inline ri rs_imulc(ri a, uint64_t c)
{
    return _mm512_mullo_epi64(a, rs_i1(c));
}
static inline rd rs_abs(rd a) { return _mm512_abs_pd(a); }
static inline rd rs_round(rd a) { return _mm512_roundscale_pd(a, 0x08); }
static inline rd rs_asd(ri a) { return _mm512_castsi512_pd(a); }
static inline ri rs_asi(rd a) { return _mm512_castpd_si512(a); }
/* x < 2^53 (2^52), exact */
static inline rd rs_cvt53(ri a) { return _mm512_cvtepi64_pd(a); }
static inline rd rs_cvt52(ri a) { return _mm512_cvtepi64_pd(a); }
static inline rmask rs_lt(rd a, rd b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
static inline rmask rs_le(rd a, rd b) { return _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ); }
static inline rmask rs_gt(rd a, rd b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
static inline rmask rs_eq(rd a, rd b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
static inline rmask rs_unord(rd a, rd b) { return _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q); }
static inline rmask rs_mand(rmask a, rmask b) { return (rmask)(a & b); }
static inline rmask rs_mor(rmask a, rmask b) { return (rmask)(a | b); }
static inline rmask rs_mandn(rmask a, rmask b) { return (rmask)(~a & b); }
static inline unsigned rs_bits(rmask m) { return (unsigned)m; }
static inline rd rs_sel(rmask m, rd a, rd b) { return _mm512_mask_blend_pd(m, b, a); }
/* lanes where (a & 1) != 0 */
static inline rmask rs_odd(ri a) { return _mm512_test_epi64_mask(a, rs_i1(1)); }
/* p[2l] = a[l], p[2l + 1] = b[l], rounded to float */
static inline void rs_storef2(float *p, rd a, rd b)
{
    __m256 x = _mm512_cvtpd_ps(a), y = _mm512_cvtpd_ps(b);
    __m256 lo = _mm256_unpacklo_ps(x, y), hi = _mm256_unpackhi_ps(x, y);
    _mm256_storeu_ps(p, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}
/* key + (i0 + 1 + l * step) G in lane l */
static inline ri rs_ctr(uint64_t key, uint64_t i0, uint64_t step)
{
    const uint64_t g = TB_RAND_GAMMA;
    return _mm512_set_epi64(
        (long long)(key + (i0 + 1 + 7 * step) * g),
        (long long)(key + (i0 + 1 + 6 * step) * g),
        (long long)(key + (i0 + 1 + 5 * step) * g),
        (long long)(key + (i0 + 1 + 4 * step) * g),
        (long long)(key + (i0 + 1 + 3 * step) * g),
        (long long)(key + (i0 + 1 + 2 * step) * g),
        (long long)(key + (i0 + 1 + step) * g), (long long)(key + (i0 + 1) * g));
}
#else
#define RS_W 4
typedef __m256d rd;
typedef __m256i ri;
typedef __m256d rmask; /* all-ones lanes */
#define RS_I(name) _mm256_##name
#define RS_H(name) _mm_##name
static inline ri rs_i1(uint64_t v) { return _mm256_set1_epi64x((long long)v); }
static inline ri rs_ixor(ri a, ri b) { return _mm256_xor_si256(a, b); }
static inline ri rs_iand(ri a, ri b) { return _mm256_and_si256(a, b); }
static inline ri rs_ior(ri a, ri b) { return _mm256_or_si256(a, b); }
/* a c mod 2^64: lo(a) lo(c) + (lo(a) hi(c) + hi(a) lo(c)) 2^32 */
static inline ri rs_imulc(ri a, uint64_t c)
{
    const ri cl = rs_i1(c & 0xffffffffu), ch = rs_i1(c >> 32);
    ri ll = _mm256_mul_epu32(a, cl);
    ri x = _mm256_add_epi64(_mm256_mul_epu32(a, ch),
                            _mm256_mul_epu32(_mm256_srli_epi64(a, 32), cl));
    return _mm256_add_epi64(ll, _mm256_slli_epi64(x, 32));
}
static inline rd rs_abs(rd a)
{
    return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a);
}
static inline rd rs_round(rd a)
{
    return _mm256_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline rd rs_asd(ri a) { return _mm256_castsi256_pd(a); }
static inline ri rs_asi(rd a) { return _mm256_castpd_si256(a); }
/* x < 2^52: the bits of 2^52 + x, minus 2^52 (exact) */
static inline rd rs_cvt52(ri a)
{
    return _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(a, rs_i1(0x4330000000000000u))),
        _mm256_set1_pd(0x1.0p52));
}
/* x < 2^53: (x >> 26) 2^26 + (x mod 2^26), each part exact, the sum
 * representable: exact */
static inline rd rs_cvt53(ri a)
{
    rd hi = rs_cvt52(_mm256_srli_epi64(a, 26));
    rd lo = rs_cvt52(_mm256_and_si256(a, rs_i1((1u << 26) - 1)));
    return _mm256_add_pd(_mm256_mul_pd(hi, _mm256_set1_pd(0x1.0p26)), lo);
}
static inline rmask rs_lt(rd a, rd b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
static inline rmask rs_le(rd a, rd b) { return _mm256_cmp_pd(a, b, _CMP_LE_OQ); }
static inline rmask rs_gt(rd a, rd b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
static inline rmask rs_eq(rd a, rd b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
static inline rmask rs_unord(rd a, rd b) { return _mm256_cmp_pd(a, b, _CMP_UNORD_Q); }
static inline rmask rs_mand(rmask a, rmask b) { return _mm256_and_pd(a, b); }
static inline rmask rs_mor(rmask a, rmask b) { return _mm256_or_pd(a, b); }
static inline rmask rs_mandn(rmask a, rmask b) { return _mm256_andnot_pd(a, b); }
static inline unsigned rs_bits(rmask m) { return (unsigned)_mm256_movemask_pd(m); }
static inline rd rs_sel(rmask m, rd a, rd b) { return _mm256_blendv_pd(b, a, m); }
static inline rmask rs_odd(ri a)
{
    return _mm256_castsi256_pd(
        _mm256_cmpeq_epi64(_mm256_and_si256(a, rs_i1(1)), rs_i1(1)));
}
static inline void rs_storef2(float *p, rd a, rd b)
{
    __m128 x = _mm256_cvtpd_ps(a), y = _mm256_cvtpd_ps(b);
    _mm_storeu_ps(p, _mm_unpacklo_ps(x, y));
    _mm_storeu_ps(p + 4, _mm_unpackhi_ps(x, y));
}
static inline ri rs_ctr(uint64_t key, uint64_t i0, uint64_t step)
{
    const uint64_t g = TB_RAND_GAMMA;
    return _mm256_set_epi64x((long long)(key + (i0 + 1 + 3 * step) * g),
                             (long long)(key + (i0 + 1 + 2 * step) * g),
                             (long long)(key + (i0 + 1 + step) * g),
                             (long long)(key + (i0 + 1) * g));
}
#endif

/* ---- the same at both levels but for the width ------------------------ */

static inline ri rs_iadd(ri a, ri b) { return RS_I(add_epi64)(a, b); }
#define rs_isrl(a, k) RS_I(srli_epi64)(a, k)
#define rs_isll(a, k) RS_I(slli_epi64)(a, k)
static inline rd rs_d1(double v) { return RS_I(set1_pd)(v); }
static inline rd rs_add(rd a, rd b) { return RS_I(add_pd)(a, b); }
static inline rd rs_sub(rd a, rd b) { return RS_I(sub_pd)(a, b); }
static inline rd rs_mul(rd a, rd b) { return RS_I(mul_pd)(a, b); }
static inline rd rs_div(rd a, rd b) { return RS_I(div_pd)(a, b); }
static inline rd rs_fma(rd a, rd b, rd c) { return RS_I(fmadd_pd)(a, b, c); }
static inline rd rs_sqrt(rd a) { return RS_I(sqrt_pd)(a); }
static inline rd rs_min(rd a, rd b) { return RS_I(min_pd)(a, b); }
static inline rd rs_max(rd a, rd b) { return RS_I(max_pd)(a, b); }
static inline rd rs_dxor(rd a, rd b) { return RS_I(xor_pd)(a, b); }
static inline rd rs_loadd(const double *p) { return RS_I(loadu_pd)(p); }
static inline rd rs_loadf(const float *p)
{
    return RS_I(cvtps_pd)(RS_H(loadu_ps)(p));
}
static inline void rs_stored(double *p, rd a) { RS_I(storeu_pd)(p, a); }
/* the lanes rounded to float and back */
static inline rd rs_f32rt(rd a) { return RS_I(cvtps_pd)(RS_I(cvtpd_ps)(a)); }
static inline void rs_storef(float *p, rd a)
{
    RS_H(storeu_ps)(p, RS_I(cvtpd_ps)(a));
}

/* ---- shared by both levels ------------------------------------------- */

/* tab[i & 15] for 64-bit lane indices i (one vpermt2pd on AVX-512, a
 * gather on AVX2) */
static inline rd rs_lut16(const double *tab, ri i)
{
#if RS_W == 8
    return _mm512_permutex2var_pd(_mm512_loadu_pd(tab), i,
                                  _mm512_loadu_pd(tab + 8));
#else
    return _mm256_i64gather_pd(tab, rs_iand(i, rs_i1(15)), 8);
#endif
}

/* The table reduction of a logarithm (pow's log2, rand_normal's
 * -2 log): a positive normal double t = 2^e z with z in
 * [RS_LOG_OFF, 2 RS_LOG_OFF) (RS_LOG_OFF = 0x1.6ap-1), cut into 16
 * intervals by the top 4 fraction bits of the bits of t minus those of
 * RS_LOG_OFF: *i the interval (its low 4 bits; rs_lut16 takes it as it
 * is), *e the exponent as a double and *r = z c_i - 1 by one fused
 * rounding, where c_i is 1 / the interval's midpoint rounded to double
 * and exactly 1 for the interval [0.98828125, 1.0390625) around 1 (so
 * arguments next to 1 cancel nothing); |r| <= 0x1.4p-5.  For z of at
 * most 24 significant bits (a float's value) z c_i is exact before the
 * rounding.  The callers' tables of log c_i are indexed by *i. */
#define RS_LOG_OFF UINT64_C(0x3fe6a00000000000)
static inline void rs_log_reduce(rd t, rd *e, rd *r, ri *i)
{
    static const double invc[16] = {
        0x1.623fa77016240p+0, 0x1.5390948f40febp+0, 0x1.460cbc7f5cf9ap+0,
        0x1.3991c2c187f63p+0, 0x1.2e025c04b8097p+0, 0x1.23456789abcdfp+0,
        0x1.19453808ca29cp+0, 0x1.0fef010fef011p+0, 0x1.073260a47f7c6p+0,
        1.0,                  0x1.de5d6e3f8868ap-1, 0x1.c3f8f01c3f8f0p-1,
        0x1.ac5701ac5701bp-1, 0x1.970e4f80cb872p-1, 0x1.83c977ab2beddp-1,
        0x1.724287f46debcp-1,
    };
    ri b = rs_iadd(rs_asi(t), rs_i1((uint64_t)0 - RS_LOG_OFF));
    *i = rs_isrl(b, 48);
#if RS_W == 8
    *e = _mm512_cvtepi64_pd(_mm512_srai_epi64(b, 52));
#else /* no 64-bit arithmetic shift: (b + 2^63) >> 52 is e + 2048 */
    *e = rs_sub(rs_cvt52(rs_isrl(rs_ixor(b, rs_i1(UINT64_C(1) << 63)), 52)),
                rs_d1(2048.0));
#endif
    rd z = rs_asd(rs_iadd(rs_iand(b, rs_i1(0x000fffffffffffffu)),
                          rs_i1(RS_LOG_OFF)));
    *r = rs_fma(z, rs_lut16(invc, *i), rs_d1(-1.0));
}

#endif
