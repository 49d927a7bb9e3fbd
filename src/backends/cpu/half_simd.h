/* The bf16/f16 loops of one SIMD level (half_cvt.h), written once over
 * vmath_simd.h's vectors for inclusion by half_avx2.c, half_avx512.c
 * and half_avx512bf16.c only (each built with its level's flags;
 * everything here is static).
 *
 * Conversions: f16 through F16C's vcvtph2ps / vcvtps2ph (round to
 * nearest even); bf16 widened by placing the pattern in the upper half
 * of an f32, narrowed in integer code: round to nearest even on the 16
 * bits dropped, a NaN kept with its quiet bit set (ops/half.h's
 * tb_f32_to_bf16, bit for bit); at avx512bf16 by vcvtne2ps2bf16, with
 * the integer code for a vector pair holding a subnormal (below).
 *
 * Element-wise loops take 2 * VS_LANES values a step: one integer
 * vector load per operand, widened to two f32 vectors whose lanes hold
 * the values in an order of the level's choosing (bf16: the patterns
 * interleaved with zero words, which the narrowing's pack undoes, so no
 * lane crossing), the f32 operation, one store.  The tail (fewer than
 * 2 * VS_LANES values) goes through a zero-filled copy on the stack:
 * nothing outside the operands is read or written.  Reductions widen
 * in order (h_*_ld1: bf16 by one masked vpermw at avx512, 22% less time
 * for sum at 1M than zero-extend and shift, tbench ab; zero-extend and
 * shift at avx2) so that their lanes add the values the f32 rows' lanes
 * add. */
#ifndef TB_BACKENDS_CPU_HALF_SIMD_H
#define TB_BACKENDS_CPU_HALF_SIMD_H

#include <pthread.h>
#include <string.h>

#include "arange.h"
#include "bwd_vf.h"
#include "ew_defs.h"
#include "half_cvt.h"
#include "kernels.h" /* TB_CPU_SUM_BLOCK */
#include "lsm_simd.h"
#include "ops_simd.h" /* tb_cpu_pow_f32_<level> */
#include "pow_simd_impl.h" /* pow's float lanes (hs_pow at avx512) */
#include "softplus_vf.h"
#include "vmath_simd.h"

#define HS_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* level-independent spellings of the helpers above */
#define HS_COMMON_HELPERS                                                 \
    static inline hv1 h_load1(const uint16_t *p)                          \
    {                                                                     \
        return HS_HSI(loadu)((const hv1 *)p);                             \
    }                                                                     \
    static inline void h_store1(uint16_t *p, hv1 h)                       \
    {                                                                     \
        HS_HSI(storeu)((hv1 *)p, h);                                      \
    }                                                                     \
    static inline hv2 h_load2(const uint16_t *p)                          \
    {                                                                     \
        return HS_WSI(loadu)((const hv2 *)p);                             \
    }                                                                     \
    static inline void h_store2(uint16_t *p, hv2 h)                       \
    {                                                                     \
        HS_WSI(storeu)((hv2 *)p, h);                                      \
    }                                                                     \
    static inline hvi hi_ps(vf v) { return HS_WSI(castps)(v); }           \
    static inline vf hi_f(hvi x) { return HS_CASTF(x); }        \
    static inline hvi hi_set1(int32_t a) { return HS_W(set1_epi32)(a); }  \
    static inline hvi hi_add(hvi a, hvi b) { return HS_W(add_epi32)(a, b); } \
    static inline hvi hi_and(hvi a, hvi b) { return HS_WSI(and)(a, b); }  \
    static inline hvi hi_srl16(hvi a) { return HS_W(srli_epi32)(a, 16); } \
    /* bf16 in order */                                                   \
    static inline vf h_bf16_widen1(hv1 h)                                 \
    {                                                                     \
        return hi_f(HS_W(slli_epi32)(HS_W(cvtepu16_epi32)(h), 16));       \
    }                                                                     \
    /* each word into the upper half of a 32-bit lane: lo holds words     \
     * 0-3 of every 128-bit lane, hi words 4-7 */                         \
    static inline void h_bf16_widen2(hv2 h, vf *lo, vf *hi)               \
    {                                                                     \
        const hv2 z = HS_WSI(setzero)();                                  \
        *lo = hi_f(HS_W(unpacklo_epi16)(z, h));                           \
        *hi = hi_f(HS_W(unpackhi_epi16)(z, h));                           \
    }

#if VS_LANES == 16
typedef __m256i hv1; /* VS_LANES 16-bit values */
typedef __m512i hv2; /* 2 * VS_LANES */
typedef __m512i hvi; /* VS_LANES 32-bit lanes */
typedef __m512d hvd; /* VS_LANES / 2 doubles */
/* the intrinsics of the level's widest integer vector (hvi, hv2) and
 * of half of it (hv1), for the helpers common to both levels below */
#define HS_W(op) _mm512_##op
#define HS_WSI(op) _mm512_##op##_si512
#define HS_HSI(op) _mm256_##op##_si256
#define HS_CASTF _mm512_castsi512_ps
HS_COMMON_HELPERS
/* NaN lanes of x (the f32 bits of v) get the quiet bit, others r */
static inline hvi h_nan_quiet(vf v, hvi r, hvi x)
{
    return _mm512_mask_or_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), x,
                                hi_set1(0x400000));
}
/* The upper halves of lo's and hi's 32-bit lanes (h_bf16_widen2's
 * order), packed in order: one vpermt2w instead of two shifts and a
 * pack (bf16 add at 1M: 12% less time on Zen 4, tbench ab).  (f16's
 * vcvtps2ph as two 256-bit halves was 32% slower: not done.) */
static inline hv2 h_pack2_hi(hvi lo, hvi hi)
{
    /* word k of 128-bit lane g: lo's lane 4g + k (k < 4), else hi's
     * lane 4g + k - 4 (index bit 5 picks hi) */
    const __m512i idx = _mm512_set_epi16(
        63, 61, 59, 57, 31, 29, 27, 25, 55, 53, 51, 49, 23, 21, 19, 17,
        47, 45, 43, 41, 15, 13, 11, 9, 39, 37, 35, 33, 7, 5, 3, 1);
    return _mm512_permutex2var_epi16(lo, idx, hi);
}
#define HS_PACK2_HI 1
/* VS_LANES bf16 values at p, in order: one vpermw placing word k in the
 * upper half of lane k, the lower halves zeroed by the mask */
static inline vf h_bf16_ld1(const uint16_t *p)
{
    const __m512i idx = _mm512_set_epi16(
        15, 0, 14, 0, 13, 0, 12, 0, 11, 0, 10, 0, 9, 0, 8, 0,
        7, 0, 6, 0, 5, 0, 4, 0, 3, 0, 2, 0, 1, 0, 0, 0);
    return hi_f(_mm512_maskz_permutexvar_epi16(
        0xaaaaaaaau, idx, _mm512_castsi256_si512(h_load1(p))));
}
#include "half_ymm_simd.h"
/* the f32 values of lo and hi, as h_bf16_widen2 placed them, packed */
static inline hv2 h_pack2(hvi lo, hvi hi) { return _mm512_packus_epi32(lo, hi); }
/* lo's values then hi's, in order (packus works within 128-bit lanes) */
static inline hv2 h_pack2o(hvi lo, hvi hi)
{
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7),
                                    _mm512_packus_epi32(lo, hi));
}
static inline hv1 h_pack1(hvi a) { return _mm512_cvtepi32_epi16(a); }
static inline vf h_f16_widen1(hv1 h) { return _mm512_cvtph_ps(h); }
static inline hv1 h_f16_narrow1(vf v) { return _mm512_cvtps_ph(v, HS_RNE); }
static inline hv2 h_join(hv1 lo, hv1 hi)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
/* relu on patterns: (int16)h < lim -> 0, on 16 values (256-bit: the
 * zmm compare and masked move took 4% more time at 1M on Zen 4) */
#define HS_RELU_W 16
static inline void h_relu_bits(const uint16_t *p, uint16_t *o, int16_t lim)
{
    const __m256i h = _mm256_loadu_si256((const __m256i *)p);
    _mm256_storeu_si256((__m256i *)o,
                        _mm256_andnot_si256(
                            _mm256_cmpgt_epi16(_mm256_set1_epi16(lim), h), h));
}
static inline vf h_relu(vf x)
{
    return _mm512_maskz_mov_ps(
        _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLE_UQ), x);
}
/* kernels_simd.h's v_lo_pd, v_hi_pd and d_hsum, for the sums */
static inline hvd hd_lo(vf a) { return _mm512_cvtps_pd(_mm512_castps512_ps256(a)); }
static inline hvd hd_hi(vf a) { return _mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1)); }
static inline hvd hd_add(hvd a, hvd b) { return _mm512_add_pd(a, b); }
static inline hvd hd_zero(void) { return _mm512_setzero_pd(); }
static inline double hd_hsum(hvd a) { return _mm512_reduce_add_pd(a); }
#else
typedef __m128i hv1;
typedef __m256i hv2;
typedef __m256i hvi;
typedef __m256d hvd;
#define HS_W(op) _mm256_##op
#define HS_WSI(op) _mm256_##op##_si256
#define HS_HSI(op) _mm_##op##_si128
#define HS_CASTF _mm256_castsi256_ps
HS_COMMON_HELPERS
static inline vf h_bf16_ld1(const uint16_t *p)
{
    return h_bf16_widen1(h_load1(p));
}
static inline hvi h_nan_quiet(vf v, hvi r, hvi x)
{
    const __m256 q = _mm256_castsi256_ps(
        _mm256_or_si256(x, _mm256_set1_epi32(0x400000)));
    return _mm256_castps_si256(_mm256_blendv_ps(
        _mm256_castsi256_ps(r), q, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}
static inline hv2 h_pack2(hvi lo, hvi hi) { return _mm256_packus_epi32(lo, hi); }
static inline hv2 h_pack2o(hvi lo, hvi hi)
{
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xd8);
}
static inline hv1 h_pack1(hvi a)
{
    /* packus works within 128-bit lanes: keep quadwords 0 and 2 */
    return _mm256_castsi256_si128(
        _mm256_permute4x64_epi64(_mm256_packus_epi32(a, a), 0x08));
}
static inline vf h_f16_widen1(hv1 h) { return _mm256_cvtph_ps(h); }
static inline hv1 h_f16_narrow1(vf v) { return _mm256_cvtps_ph(v, HS_RNE); }
static inline hv2 h_join(hv1 lo, hv1 hi) { return _mm256_set_m128i(hi, lo); }
#define HS_RELU_W 16
static inline void h_relu_bits(const uint16_t *p, uint16_t *o, int16_t lim)
{
    const hv2 h = h_load2(p);
    h_store2(o, _mm256_andnot_si256(
                    _mm256_cmpgt_epi16(_mm256_set1_epi16(lim), h), h));
}
static inline vf h_relu(vf x)
{
    return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NLE_UQ),
                         x);
}
static inline hvd hd_lo(vf a) { return _mm256_cvtps_pd(_mm256_castps256_ps128(a)); }
static inline hvd hd_hi(vf a) { return _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)); }
static inline hvd hd_add(hvd a, hvd b) { return _mm256_add_pd(a, b); }
static inline hvd hd_zero(void) { return _mm256_setzero_pd(); }
static inline double hd_hsum(hvd a)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(a),
                           _mm256_extractf128_pd(a, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}
#endif

/* ---- conversions of one vector / pair --------------------------------- */

/* f32 not NaN rounded to bf16, in the upper half of each 32-bit lane */
static inline hvi h_bf16_round_num(vf v)
{
    const hvi x = hi_ps(v);
    const hvi lsb = hi_and(hi_srl16(x), hi_set1(1));
    return hi_add(x, hi_add(lsb, hi_set1(0x7fff)));
}
/* f32 rounded to bf16, the result in the low half of each 32-bit lane */
static inline hvi h_bf16_round(vf v)
{
    return hi_srl16(h_nan_quiet(v, h_bf16_round_num(v), hi_ps(v)));
}
static inline hv1 h_bf16_narrow1(vf v) { return h_pack1(h_bf16_round(v)); }
/* the pair of h_bf16_widen2's order; one test for a NaN in either (the
 * NaN lanes' fix-up only where there is one: 2 of ~10 operations a
 * vector less) */
static inline hv2 h_bf16_narrow2(vf lo, vf hi)
{
    if (m_any(v_unord(lo, hi)))
        return h_pack2(h_bf16_round(lo), h_bf16_round(hi));
#ifdef HS_PACK2_HI
    return h_pack2_hi(h_bf16_round_num(lo), h_bf16_round_num(hi));
#else
    return h_pack2(hi_srl16(h_bf16_round_num(lo)),
                   hi_srl16(h_bf16_round_num(hi)));
#endif
}
/* lo's values then hi's, in order */
static inline hv2 h_bf16_narrow2o(vf lo, vf hi)
{
    return h_pack2o(h_bf16_round(lo), h_bf16_round(hi));
}
#ifdef __AVX512BF16__
/* The avx512bf16 level (half_avx512bf16.c): vcvtne2ps2bf16 rounds two
 * vectors to nearest even in one instruction and keeps NaN as the
 * integer code does (upper half, quiet bit set), but reads a subnormal
 * f32 as a zero of its sign.  A pair with a subnormal lane (vfpclassps,
 * rare: results below FLT_MIN) takes the integer code instead, so the
 * values are tb_f32_to_bf16's, bit for bit. */
static inline int h_bf16_subn(vf lo, vf hi)
{
    return (_mm512_fpclass_ps_mask(lo, 0x20) |
            _mm512_fpclass_ps_mask(hi, 0x20)) != 0;
}
static inline hv2 h_bf16_ne2(vf lo, vf hi)
{
    return (hv2)_mm512_cvtne2ps_pbh(hi, lo); /* lo's values first */
}
/* h_bf16_widen2's order: lo held words 0-3 of each 128-bit lane, hi
 * words 4-7; the packed pair holds lo's then hi's, four words (a
 * quadword) from each lane: quadwords back in place */
static inline hv2 h_bf16_narrow2_ne(vf lo, vf hi)
{
    if (h_bf16_subn(lo, hi))
        return h_bf16_narrow2(lo, hi);
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7),
                                    h_bf16_ne2(lo, hi));
}
#define h_bf16_narrow2 h_bf16_narrow2_ne
static inline hv2 h_bf16_narrow2o_ne(vf lo, vf hi)
{
    if (h_bf16_subn(lo, hi))
        return h_bf16_narrow2o(lo, hi);
    return h_bf16_ne2(lo, hi);
}
#define h_bf16_narrow2o h_bf16_narrow2o_ne
static inline hv1 h_bf16_narrow1_ne(vf v)
{
    if (_mm512_fpclass_ps_mask(v, 0x20))
        return h_bf16_narrow1(v);
    return (hv1)_mm512_cvtneps_pbh(v);
}
#define h_bf16_narrow1 h_bf16_narrow1_ne
#endif
static inline hv2 h_f16_narrow2o(vf lo, vf hi)
{
    return h_join(h_f16_narrow1(lo), h_f16_narrow1(hi));
}

static inline vf h_f16_ld1(const uint16_t *p)
{
    return h_f16_widen1(h_load1(p));
}

/* 2 * VS_LANES values at p as two f32 vectors, and back (bf16: the
 * order of h_bf16_widen2; f16: in order, each half converted from and to
 * memory: a register extract and insert around the conversions made
 * f16 add 1.6x slower on Zen 4) */
static inline void h_bf16_ld2(const uint16_t *p, vf *lo, vf *hi)
{
    h_bf16_widen2(h_load2(p), lo, hi);
}
static inline void h_bf16_st2(uint16_t *p, vf lo, vf hi)
{
    h_store2(p, h_bf16_narrow2(lo, hi));
}
static inline void h_f16_ld2(const uint16_t *p, vf *lo, vf *hi)
{
    *lo = h_f16_widen1(h_load1(p));
    *hi = h_f16_widen1(h_load1(p + VS_LANES));
}
static inline void h_f16_st2(uint16_t *p, vf lo, vf hi)
{
    h_store1(p, h_f16_narrow1(lo));
    h_store1(p + VS_LANES, h_f16_narrow1(hi));
}

/* Pairs for loops free of lane order (add_relu's HS_STEP2: HS_P_<op>,
 * and half_bwbin_simd.h's strips).  At avx512bf16, bf16 in even/odd order: lo
 * the even-numbered values (the vector shifted left 16 bits a 32-bit
 * lane), hi the odd ones (and 0xffff0000), no shuffle; narrowed by
 * one vcvtne2ps2bf16 (lo's words, then hi's) and one vpermw
 * interleaving them, a pair with a subnormal lane by the integer code
 * (h_bf16_round: the same bits).
 * (h_bf16_ld2 / h_bf16_st2 take four vpunpck{l,h}wd and a vpermq a
 * step: add_relu bf16 at 1024x1024 84.9 -> 82.3 us, mul_backward
 * [128, 256] 2.47 -> 2.39, tbench ab, 8 blocks, load 10-13; sigmoid,
 * silu ran 0.2-1.2% slower with it, within the noise, and keep
 * h_<dt>_ld2 / h_<dt>_st2; add, sub, mul take z below, with the
 * cheaper subnormal test, in place or in L2.)
 * Elsewhere h_<dt>_ld2 / h_<dt>_st2. */
#ifdef __AVX512BF16__
static inline void h_bf16_ld2x(const uint16_t *p, vf *lo, vf *hi)
{
    const hv2 h = h_load2(p);
    *lo = hi_f(_mm512_slli_epi32(h, 16));
    *hi = hi_f(hi_and(h, hi_set1(-65536))); /* 0xffff0000 */
}
static inline void h_bf16_st2x(uint16_t *p, vf lo, vf hi)
{
    if (h_bf16_subn(lo, hi)) {
        const hvi r = _mm512_slli_epi32(h_bf16_round(hi), 16);
        h_store2(p, _mm512_or_si512(h_bf16_round(lo), r));
        return;
    }
    /* word 2i: lo's value i (word i), 2i + 1: hi's (word 16 + i) */
    const __m512i idx = _mm512_set_epi16(
        31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
        23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    h_store2(p, _mm512_permutexvar_epi16(idx, h_bf16_ne2(lo, hi)));
}
/* The even/odd pair with a cheaper subnormal test (add, sub, mul:
 * HS_P_<op> z): vcvtne2ps2bf16 turns a subnormal lane into a zero of
 * its sign, and a normal one into a nonzero bf16, so a pair whose 32
 * results hold no +-0 word (one vptestnmw) has no subnormal lane; only
 * a pair with a zero result (an exact zero, or a subnormal) takes
 * vfpclassps's test, then h_bf16_st2x's integer code where it finds
 * one: the same bits.  (add_, sub_, mul_ bf16 at 1M in place:
 * 5.7-6.9% less time than h_bf16_ld2 / h_bf16_st2's vpunpck{l,h}wd,
 * vfpclassps and vpermq, tbench ab, 8 blocks, load 7; the even/odd
 * order with vfpclassps alone gained nothing.  An output of many exact
 * zeros pays the test and vfpclassps: add_relu takes r below.) */
#define h_bf16_ld2z h_bf16_ld2x
static inline void h_bf16_st2z(uint16_t *p, vf lo, vf hi)
{
    const hv2 r = h_bf16_ne2(lo, hi);
    if (_mm512_testn_epi16_mask(r, _mm512_set1_epi16(0x7fff)) &&
        h_bf16_subn(lo, hi)) {
        h_bf16_st2x(p, lo, hi);
        return;
    }
    const __m512i idx = _mm512_set_epi16(
        31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
        23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    h_store2(p, _mm512_permutexvar_epi16(idx, r));
}
/* add_relu's pair (HS_P_add_relu r): lo and hi the sums, the relu
 * (x where x > 0 or NaN, else +0) as vcvtne2ps2bf16's zero-masking,
 * not a masked move a vector (add_relu bf16 at 1M 82.5 -> 73.6 us,
 * 4097 -11%, tbench ab, 8 blocks, load 7); a
 * pair with a subnormal lane (vfpclassps: a positive one must round,
 * not read as zero) takes h_bf16_st2x's integer code on the relu'd
 * values: the same bits. */
#define h_bf16_ld2r h_bf16_ld2x
static inline void h_bf16_st2r(uint16_t *p, vf lo, vf hi)
{
    if (h_bf16_subn(lo, hi)) {
        h_bf16_st2x(p, h_relu(lo), h_relu(hi));
        return;
    }
    const __m512 z = _mm512_setzero_ps();
    const __mmask32 k = _mm512_kunpackw(_mm512_cmp_ps_mask(hi, z, _CMP_NLE_UQ),
                                        _mm512_cmp_ps_mask(lo, z, _CMP_NLE_UQ));
    const __m512i idx = _mm512_set_epi16(
        31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
        23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    h_store2(p, _mm512_permutexvar_epi16(
                    idx, (__m512i)_mm512_maskz_cvtne2ps_pbh(k, hi, lo)));
}
#else
#define h_bf16_ld2x h_bf16_ld2
#define h_bf16_st2x h_bf16_st2
#define h_bf16_ld2z h_bf16_ld2
#define h_bf16_st2z h_bf16_st2
#define h_bf16_ld2r h_bf16_ld2
static inline void h_bf16_st2r(uint16_t *p, vf lo, vf hi)
{
    h_bf16_st2(p, h_relu(lo), h_relu(hi));
}
#endif
#define h_f16_ld2x h_f16_ld2
#define h_f16_st2x h_f16_st2
#define h_f16_ld2z h_f16_ld2
#define h_f16_st2z h_f16_st2
#define h_f16_ld2r h_f16_ld2
static inline void h_f16_st2r(uint16_t *p, vf lo, vf hi)
{
    h_f16_st2(p, h_relu(lo), h_relu(hi));
}

/* ---- conversion arrays (tb_cpu_half_cvt) ------------------------------ */

#define HS_CVT(DT)                                                        \
    static void hs_widen_##DT(const uint16_t *src, float *dst, int64_t n) \
    {                                                                     \
        int64_t i = 0;                                                    \
        for (; i + VS_LANES <= n; i += VS_LANES)                          \
            v_store(dst + i, h_##DT##_ld1(src + i));          \
        for (; i < n; i++)                                                \
            dst[i] = tb_##DT##_to_f32(src[i]);                            \
    }                                                                     \
    static void hs_narrow_##DT(const float *src, uint16_t *dst, int64_t n) \
    {                                                                     \
        int64_t i = 0;                                                    \
        for (; i + 2 * VS_LANES <= n; i += 2 * VS_LANES)                  \
            h_store2(dst + i, h_##DT##_narrow2o(v_load(src + i),          \
                                                v_load(src + i + VS_LANES))); \
        for (; i + VS_LANES <= n; i += VS_LANES)                          \
            h_store1(dst + i, h_##DT##_narrow1(v_load(src + i)));         \
        for (; i < n; i++)                                                \
            dst[i] = tb_f32_to_##DT(src[i]);                              \
    }
HS_CVT(bf16)
HS_CVT(f16)

/* ---- fused element-wise loops (tb_cpu_half_fused_fn) ------------------ */

/* 2 * VS_LANES values: o = F(a) (unary) or F(a, b) */
#define HS_STEP1(DT, F, pa, po)                                           \
    do {                                                                  \
        vf a0_, a1_;                                                      \
        h_##DT##_ld2(pa, &a0_, &a1_);                                     \
        h_##DT##_st2(po, F(a0_, kv), F(a1_, kv));                         \
    } while (0)
/* P: the pairs' functions, h_<dt>_ld2<P> / h_<dt>_st2<P> (P empty or x) */
#define HS_STEP2(DT, P, F, pa, pb, po)                                    \
    do {                                                                  \
        vf a0_, a1_, b0_, b1_;                                            \
        h_##DT##_ld2##P(pa, &a0_, &a1_);                                  \
        h_##DT##_ld2##P(pb, &b0_, &b1_);                                  \
        h_##DT##_st2##P(po, F(a0_, b0_), F(a1_, b1_));                    \
    } while (0)

#define HS_FUSED1(NAME, DT, F)                                            \
    static void NAME(const uint16_t *pa, const uint16_t *pb, uint16_t *po, \
                     int64_t n, float k)                                  \
    {                                                                     \
        (void)pb;                                                         \
        const vf kv = v_set1(k);                                          \
        enum { W = 2 * VS_LANES };                                        \
        int64_t i = 0;                                                    \
        for (; i + W <= n; i += W)                                        \
            HS_STEP1(DT, F, pa + i, po + i);                              \
        if (i < n) {                                                      \
            uint16_t ta[W] = {0}, to[W];                                  \
            memcpy(ta, pa + i, (size_t)(n - i) * 2);                      \
            HS_STEP1(DT, F, ta, to);                                      \
            memcpy(po + i, to, (size_t)(n - i) * 2);                      \
        }                                                                 \
    }
#define HS_FUSED2(NAME, DT, F, P)                                         \
    static void NAME(const uint16_t *pa, const uint16_t *pb, uint16_t *po, \
                     int64_t n, float k)                                  \
    {                                                                     \
        (void)k;                                                          \
        enum { W = 2 * VS_LANES };                                        \
        int64_t i = 0;                                                    \
        for (; i + W <= n; i += W)                                        \
            HS_STEP2(DT, P, F, pa + i, pb + i, po + i);                   \
        if (i < n) {                                                      \
            uint16_t ta[W] = {0}, tb[W] = {0}, to[W];                     \
            memcpy(ta, pa + i, (size_t)(n - i) * 2);                      \
            memcpy(tb, pb + i, (size_t)(n - i) * 2);                      \
            HS_STEP2(DT, P, F, ta, tb, to);                               \
            memcpy(po + i, to, (size_t)(n - i) * 2);                      \
        }                                                                 \
    }

/* a + b and a - b on the multiply-add units (hy_add above: the same
 * values) */
static inline vf hs_add(vf a, vf b) { return v_fma(a, v_set1(1.0f), b); }
static inline vf hs_sub(vf a, vf b) { return v_fma(b, v_set1(-1.0f), a); }
/* add_relu's step: the addition, the relu in the pair's store
 * (h_<dt>_st2r).  (add_relu keeps the addition: its compare takes the
 * FMA units' ports, znver4's model gives it 0.1875 cycles per element
 * at avx512bf16 with the FMA, 0.1562 without) */
static inline vf hs_add_relu(vf a, vf b) { return v_add(a, b); }

/* The f32 rows' element functions (ops_simd_impl.h's xs_*_f, the same
 * values): the scalar forms one IEEE operation with k; sqrt; rsqrt
 * 1 / sqrt(x), two correctly rounded operations; leaky_relu x > 0 ? x :
 * k x.  (maximum and minimum: on the patterns, hs_mm below.) */
static inline vf hs_add_scalar(vf x, vf k) { return v_add(x, k); }
static inline vf hs_sub_scalar(vf x, vf k) { return v_sub(x, k); }
static inline vf hs_mul_scalar(vf x, vf k) { return v_mul(x, k); }
static inline vf hs_div_scalar(vf x, vf k) { return v_div(x, k); }
/* sqrt and rsqrt: vsqrtps and (rsqrt) a division, the f32 row's two
 * correctly rounded operations, so the 16-bit result is the block
 * path's on every CPU (an rsqrt14/rcp14 estimate, specified only to
 * 2^-14, could round an input near a 16-bit tie either way) */
static inline vf hs_sqrt(vf x, vf k)
{
    (void)k;
    return v_sqrt(x);
}
static inline vf hs_rsqrt(vf x, vf k)
{
    (void)k;
    return v_div(v_set1(1.0f), v_sqrt(x));
}
static inline vf hs_leaky_relu(vf x, vf k)
{
#if VS_LANES == 16 /* one masked product (!(x > 0): NaN too) */
    return _mm512_mask_mul_ps(
        x, _mm512_cmp_ps_mask(x, v_set1(0.0f), _CMP_NGT_UQ), k, x);
#else
    return v_sel(v_gt(x, v_set1(0.0f)), x, v_mul(k, x));
#endif
}
/* ew_defs.h's ops, as ops_simd_impl.h's f32 rows spell them (ew_vf.h) */
#include "ew_vf.h"
#define HS_EW_F(NAME, W, EXPR, ...)                                       \
    static inline vf hs_##NAME(vf x, vf k)                                \
    {                                                                     \
        (void)k;                                                          \
        return EXPR;                                                      \
    }
TB_CPU_EW_OPS(HS_EW_F, ~)
#include "ew_undef.h"
/* vmath.h's functions, k unused */
#define HS_VM(NAME, F)                                                    \
    static inline vf hs_##NAME(vf x, vf k)                                \
    {                                                                     \
        (void)k;                                                          \
        return F(x);                                                      \
    }
HS_VM(exp, vs_exp)
HS_VM(log, vs_log)
HS_VM(tanh, vs_tanh)
HS_VM(sigmoid, vs_sigmoid)
HS_VM(gelu, vs_gelu_erf)
HS_VM(gelu_tanh, vs_gelu_tanh)
HS_VM(silu, vs_silu)

/* softplus: softplus_vf.h's element function with the f32 row's beta
 * (k) and the threshold TB_CPU_HALF_SOFTPLUS_THR (half.c takes the
 * blocks for another), beta 1 by the f32 row's form without the
 * product and the division: its operations, so its bits. */
static inline vf hs_softplus(vf x, vf k)
{
    return xs_softplus_g(x, k, v_set1(TB_CPU_HALF_SOFTPLUS_THR), 0);
}
static inline vf hs_softplusb(vf x, vf k)
{
    return xs_softplus_g(x, k, v_set1(TB_CPU_HALF_SOFTPLUS_THR), 1);
}
#define HS_SOFTPLUS(DT)                                                   \
    HS_FUSED1(hs_softplus1_##DT, DT, hs_softplus)                        \
    HS_FUSED1(hs_softplusb_##DT, DT, hs_softplusb)                        \
    static void hs_softplus_##DT(const uint16_t *pa, const uint16_t *pb,  \
                                 uint16_t *po, int64_t n, float k)        \
    {                                                                     \
        if (k == 1.0f)                                                    \
            hs_softplus1_##DT(pa, pb, po, n, k);                          \
        else                                                              \
            hs_softplusb_##DT(pa, pb, po, n, k);                          \
    }
HS_SOFTPLUS(bf16)
HS_SOFTPLUS(f16)

/* pow.  At 16 lanes (avx512, avx512bf16): pw_pow_f32's loop
 * (pow_simd_impl.h: software-pipelined, a step's log2 with the previous
 * step's exp2) on the 32 values of a step loaded and widened in
 * registers (h_<dt>_ld2: bf16's in h_bf16_widen2's order), each step's
 * results narrowed in registers (h_<dt>_st2).  As in pw_pow_f32, a step
 * whose 32 lanes all take the short log2's fast path keeps it (so the
 * order of the lanes within the step does not matter), and a step with
 * a lane off it (and the last n mod 32 values) is redone by the f32
 * row itself (tb_cpu_pow_f32_avx512 on the 32 values widened on the
 * stack), as pw_pow_f32 redoes it (pf_step_slow): the values are widen
 * + f32 row + narrow, bit for bit.  (The chunked loop below, 1024
 * values widened on the stack, ran bf16 at 1M in 613 us.)
 * At 8 lanes (avx2): the f32 row's loop on chunks of HS_POW_CHUNK
 * values widened on the stack (4 KiB of f32 each, in L1), each chunk's
 * results narrowed by hs_narrow_<dt>. */
#if VS_LANES == 16
#define HS_POW_F32 tb_cpu_pow_f32_avx512
#define HS_POW_CHUNK 32
#else
#define HS_POW_F32 tb_cpu_pow_f32_avx2
#define HS_POW_CHUNK 1024
#endif
/* m <= HS_POW_CHUNK values: widen + f32 row + narrow */
#define HS_POW_CH(DT)                                                     \
    __attribute__((noinline)) static void hs_pow_ch_##DT(                 \
        const uint16_t *pa, const uint16_t *pb, uint16_t *po, int64_t m)  \
    {                                                                     \
        float fa[HS_POW_CHUNK], fb[HS_POW_CHUNK];                         \
        hs_widen_##DT(pa, fa, m);                                         \
        hs_widen_##DT(pb, fb, m);                                         \
        HS_POW_F32(fa, fb, fa, m);                                        \
        hs_narrow_##DT(fa, po, m);                                        \
    }
#if VS_LANES == 16
/* pf_stage_log's and pf_stage_exp's work on the 32 values at pa, pb,
 * po; the loop prefetches 2 KiB ahead (pf_prefetch's 1024 values) */
#define HS_POW(DT)                                                        \
    HS_POW_CH(DT)                                                         \
    static inline void hs_pow_log_##DT(const uint16_t *pa,                \
                                       const uint16_t *pb, pf_blk *s)     \
    {                                                                     \
        vf a0, a1;                                                        \
        h_##DT##_ld2(pa, &a0, &a1);                                       \
        h_##DT##_ld2(pb, &s->b0, &s->b1);                                 \
        pf_log2(a0, 0, &s->sh0, &s->ll0);                                 \
        pf_log2(a1, 0, &s->sh1, &s->ll1);                                 \
    }                                                                     \
    static inline void hs_pow_exp_##DT(const uint16_t *pa,                \
                                       const uint16_t *pb, uint16_t *po,  \
                                       const pf_blk *s)                   \
    {                                                                     \
        __mmask16 k0, k1;                                                 \
        const vf r0 = pf_exp2(s->b0, s->sh0, s->ll0, PF_Y1, &k0);         \
        const vf r1 = pf_exp2(s->b1, s->sh1, s->ll1, PF_Y1, &k1);         \
        if (__builtin_expect((k0 & k1) != 0xffff, 0))                     \
            hs_pow_ch_##DT(pa, pb, po, 32);                               \
        else                                                              \
            h_##DT##_st2(po, r0, r1);                                     \
    }                                                                     \
    static void hs_pow_##DT(const uint16_t *pa, const uint16_t *pb,       \
                            uint16_t *po, int64_t n, float k)             \
    {                                                                     \
        (void)k;                                                          \
        int64_t i = 0;                                                    \
        if (n >= 64) {                                                    \
            pf_blk s, t;                                                  \
            hs_pow_log_##DT(pa, pb, &s);                                  \
            for (i = 32; i + 32 <= n; i += 32) {                          \
                _mm_prefetch((const char *)(pa + i) + 2048, _MM_HINT_T0); \
                _mm_prefetch((const char *)(pb + i) + 2048, _MM_HINT_T0); \
                hs_pow_log_##DT(pa + i, pb + i, &t);                      \
                hs_pow_exp_##DT(pa + i - 32, pb + i - 32, po + i - 32,    \
                                &s);                                      \
                s = t;                                                    \
            }                                                             \
            hs_pow_exp_##DT(pa + i - 32, pb + i - 32, po + i - 32, &s);   \
        }                                                                 \
        for (; i < n; i += 32)                                            \
            hs_pow_ch_##DT(pa + i, pb + i, po + i,                        \
                           n - i < 32 ? n - i : 32);                      \
    }
#else
#define HS_POW(DT)                                                        \
    HS_POW_CH(DT)                                                         \
    static void hs_pow_##DT(const uint16_t *pa, const uint16_t *pb,       \
                            uint16_t *po, int64_t n, float k)             \
    {                                                                     \
        (void)k;                                                          \
        for (int64_t i = 0; i < n; i += HS_POW_CHUNK)                     \
            hs_pow_ch_##DT(pa + i, pb + i, po + i,                        \
                           n - i < HS_POW_CHUNK ? n - i : HS_POW_CHUNK);  \
    }
#endif
HS_POW(bf16)
HS_POW(f16)

/* maximum and minimum on the 16-bit patterns, nothing converted: the
 * f32 rows' rule (ops_simd_impl.h's xs_maximum_f: NaN in either gives
 * a + b, a NaN; else the larger (smaller), a on ties, -0 and +0 being
 * equal) is an integer compare of keys, the magnitude m (h & 0x7fff)
 * with the sign applied as two's complement ((m ^ s) - s, s = h >> 15
 * arithmetic: -0 and +0 both key 0, and the order of the keys is the
 * order of the values), then a select of a or b.  A vector holding a
 * NaN in a or b (a magnitude above the infinity's) takes the scalar
 * rule, a + b in f32 narrowed (a NaN), for its lanes.  (f16 maximum
 * took 0.24 cycles per element widened, compared and narrowed, 0.14 on
 * the patterns, L2 data; the widening loop was 2.3x its memory bound at
 * 1024x1024.) */
#if VS_LANES == 16
static inline hv2 hs_mm_key(hv2 h)
{
    const hv2 m = _mm512_and_si512(h, _mm512_set1_epi16(0x7fff));
    const hv2 sg = _mm512_srai_epi16(h, 15);
    return _mm512_sub_epi16(_mm512_xor_si512(m, sg), sg);
}
static inline int hs_mm_nan(hv2 a, hv2 b, int inf)
{
    const hv2 m = _mm512_set1_epi16(0x7fff);
    return _mm512_cmpgt_epu16_mask(
               _mm512_max_epu16(_mm512_and_si512(a, m),
                                _mm512_and_si512(b, m)),
               _mm512_set1_epi16((short)inf)) != 0;
}
/* b where its key is above (mx) or below a's, else a */
static inline hv2 hs_mm_pick(hv2 a, hv2 b, int mx)
{
    const hv2 ka = hs_mm_key(a), kb = hs_mm_key(b);
    return _mm512_mask_mov_epi16(a, mx ? _mm512_cmpgt_epi16_mask(kb, ka)
                                       : _mm512_cmpgt_epi16_mask(ka, kb),
                                 b);
}
/* a NaN in a alone; b where kb (b's key) is above (mx) or below a's */
static inline int hs_mm_nan1(hv2 a, int inf)
{
    return _mm512_cmpgt_epu16_mask(
               _mm512_and_si512(a, _mm512_set1_epi16(0x7fff)),
               _mm512_set1_epi16((short)inf)) != 0;
}
static inline hv2 hs_mm_pickk(hv2 a, hv2 b, hv2 kb, int mx)
{
    const hv2 ka = hs_mm_key(a);
    return _mm512_mask_mov_epi16(a, mx ? _mm512_cmpgt_epi16_mask(kb, ka)
                                       : _mm512_cmpgt_epi16_mask(ka, kb),
                                 b);
}
#else
static inline hv2 hs_mm_key(hv2 h)
{
    const hv2 m = _mm256_and_si256(h, _mm256_set1_epi16(0x7fff));
    const hv2 sg = _mm256_srai_epi16(h, 15);
    return _mm256_sub_epi16(_mm256_xor_si256(m, sg), sg);
}
static inline int hs_mm_nan(hv2 a, hv2 b, int inf)
{
    const hv2 m = _mm256_set1_epi16(0x7fff);
    const hv2 x = _mm256_subs_epu16(
        _mm256_max_epu16(_mm256_and_si256(a, m), _mm256_and_si256(b, m)),
        _mm256_set1_epi16((short)inf));
    return !_mm256_testz_si256(x, x);
}
static inline hv2 hs_mm_pick(hv2 a, hv2 b, int mx)
{
    const hv2 ka = hs_mm_key(a), kb = hs_mm_key(b);
    return _mm256_blendv_epi8(a, b, mx ? _mm256_cmpgt_epi16(kb, ka)
                                       : _mm256_cmpgt_epi16(ka, kb));
}
static inline int hs_mm_nan1(hv2 a, int inf)
{
    const hv2 x = _mm256_subs_epu16(
        _mm256_and_si256(a, _mm256_set1_epi16(0x7fff)),
        _mm256_set1_epi16((short)inf));
    return !_mm256_testz_si256(x, x);
}
static inline hv2 hs_mm_pickk(hv2 a, hv2 b, hv2 kb, int mx)
{
    const hv2 ka = hs_mm_key(a);
    return _mm256_blendv_epi8(a, b, mx ? _mm256_cmpgt_epi16(kb, ka)
                                       : _mm256_cmpgt_epi16(ka, kb));
}
#endif
#define HS_MM(DT, INF)                                                    \
    static inline uint16_t hs_mm1_##DT(uint16_t a, uint16_t b, int mx)    \
    {                                                                     \
        const float fa = tb_##DT##_to_f32(a), fb = tb_##DT##_to_f32(b);   \
        const float r = fa != fa || fb != fb ? fa + fb                    \
                        : mx                 ? (fb > fa ? fb : fa)        \
                                             : (fb < fa ? fb : fa);       \
        return tb_f32_to_##DT(r);                                         \
    }                                                                     \
    static inline void hs_mm_##DT(const uint16_t *pa, const uint16_t *pb, \
                                  uint16_t *po, int64_t n, int mx)        \
    {                                                                     \
        enum { W = 2 * VS_LANES };                                        \
        int64_t i = 0;                                                    \
        for (; i + W <= n; i += W) {                                      \
            const hv2 a = h_load2(pa + i), b = h_load2(pb + i);           \
            if (hs_mm_nan(a, b, INF)) {                                   \
                for (int l = 0; l < W; l++)                               \
                    po[i + l] = hs_mm1_##DT(pa[i + l], pb[i + l], mx);    \
                continue;                                                 \
            }                                                             \
            h_store2(po + i, hs_mm_pick(a, b, mx));                       \
        }                                                                 \
        for (; i < n; i++)                                                \
            po[i] = hs_mm1_##DT(pa[i], pb[i], mx);                        \
    }                                                                     \
    static void hs_maximum_##DT(const uint16_t *pa, const uint16_t *pb,   \
                                uint16_t *po, int64_t n, float k)         \
    {                                                                     \
        (void)k;                                                          \
        hs_mm_##DT(pa, pb, po, n, 1);                                     \
    }                                                                     \
    static void hs_minimum_##DT(const uint16_t *pa, const uint16_t *pb,   \
                                uint16_t *po, int64_t n, float k)         \
    {                                                                     \
        (void)k;                                                          \
        hs_mm_##DT(pa, pb, po, n, 0);                                     \
    }
HS_MM(bf16, 0x7f80)
HS_MM(f16, 0x7c00)

#ifdef HS_MMROWS /* half_mm_<level>.c only */
/* maximum (mx 1) and minimum of the rows of a ([rows, n]) against one
 * row b of n values broadcast over them (tb_cpu_half_mmrows_fn): hs_mm's
 * values (each lane's result depends on its a and b only), with b's
 * keys computed once per chunk of HS_MMR_C columns, not once a row: a
 * step of a row then keys a alone and tests a alone for a NaN (a chunk
 * of b holding one goes through hs_mm row by row).  (maximum f16
 * [1024, 1024] against [1024], a microbenchmark of the two loops on
 * this Zen 4: 59.5 us a row at a time by hs_mm, 43.7 with b's keys
 * held.)  Built in a file of its own per level (half_mm_<level>.c,
 * which defines HS_MMROWS): in half_<level>.c its four bodies made gcc
 * stop inlining vmath's functions into the activations' rows
 * (gelu_tanh bf16 +17.7%, f16 +6.2% in tbench ab). */
#define HS_MMR_C 1024
#define HS_MMR(DT, INF)                                                   \
    static inline __attribute__((always_inline)) void hs_mmr_##DT(        \
        const uint16_t *pa, const uint16_t *pb, uint16_t *po, int64_t rows, \
        int64_t n, int mx)                                                \
    {                                                                     \
        enum { W = 2 * VS_LANES, C = HS_MMR_C };                          \
        hv2 kb[C / W];                                                    \
        for (int64_t c0 = 0; c0 < n; c0 += C) {                           \
            const int64_t w = n - c0 < C ? n - c0 : C, wv = w / W * W;    \
            const uint16_t *b = pb + c0;                                  \
            int bnan = 0;                                                 \
            for (int64_t i = 0; i < wv; i += W) {                         \
                const hv2 v = h_load2(b + i);                             \
                bnan |= hs_mm_nan1(v, INF);                               \
                kb[i / W] = hs_mm_key(v);                                 \
            }                                                             \
            for (int64_t r = 0; r < rows; r++) {                          \
                const uint16_t *a = pa + r * n + c0;                      \
                uint16_t *o = po + r * n + c0;                            \
                if (bnan) {                                               \
                    hs_mm_##DT(a, b, o, w, mx);                           \
                    continue;                                             \
                }                                                         \
                int64_t i = 0;                                            \
                for (; i < wv; i += W) {                                  \
                    const hv2 v = h_load2(a + i);                         \
                    if (hs_mm_nan1(v, INF)) {                             \
                        for (int l = 0; l < W; l++)                       \
                            o[i + l] = hs_mm1_##DT(a[i + l], b[i + l], mx); \
                        continue;                                         \
                    }                                                     \
                    h_store2(o + i,                                       \
                             hs_mm_pickk(v, h_load2(b + i), kb[i / W], mx)); \
                }                                                         \
                for (; i < w; i++)                                        \
                    o[i] = hs_mm1_##DT(a[i], b[i], mx);                   \
            }                                                             \
        }                                                                 \
    }                                                                     \
    /* mx a constant in each body (a variable one cost 10%) */            \
    static void hs_mmrows_##DT(const uint16_t *pa, const uint16_t *pb,    \
                               uint16_t *po, int64_t rows, int64_t n,     \
                               int mx)                                    \
    {                                                                     \
        if (mx)                                                           \
            hs_mmr_##DT(pa, pb, po, rows, n, 1);                          \
        else                                                              \
            hs_mmr_##DT(pa, pb, po, rows, n, 0);                          \
    }
HS_MMR(bf16, 0x7f80)
HS_MMR(f16, 0x7c00)
static inline tb_cpu_half_mmrows_fn hs_mmrows(tb_dtype dt)
{
    return dt == TB_BF16 ? hs_mmrows_bf16 : dt == TB_F16 ? hs_mmrows_f16 : NULL;
}
#endif

/* X(op): the binary ops (IEEE, as the f32 rows) and the unary ones:
 * vmath.h's activations (its per-lane functions, which both SIMD
 * levels' f32 rows apply: the same bits whatever vector a value sits
 * in), then IEEE ones, each hs_<op> */
#define HS_BINARY(X)                                                      \
    X(add, hs_add) X(sub, hs_sub) X(mul, v_mul) X(div, v_div)             \
    X(add_relu, hs_add_relu)
#define HS_UNARY(X)                                                       \
    X(exp) X(tanh) X(sigmoid) X(gelu) X(gelu_tanh) X(silu)                \
    X(add_scalar) X(sub_scalar) X(mul_scalar) X(div_scalar) X(sqrt)       \
    X(rsqrt) /* and leaky_relu: f16's at 16 lanes is hy_leaky_relu_f16 */
#define HS_EW_UNARY(NAME, W, EXPR, X) X(NAME)

/* bf16's loop of op with the pairs P (P expanded before the paste) */
#define HS_BF16_F2(op, F, P) HS_BF16_F2P(op, F, P)
#define HS_BF16_F2P(op, F, P) HS_BF16_F2_##P(op, F)
#define HS_BF16_F2_(op, F) HS_FUSED2(hs_##op##_bf16, bf16, F, )
#define HS_BF16_F2_r(op, F) HS_FUSED2(hs_##op##_bf16, bf16, F, r)
#ifdef __AVX512BF16__
/* z: the even/odd loop where the output is an operand (add_, sub_,
 * mul_: 5.6-6.9% less time at 1M than h_bf16_ld2's order, tbench ab,
 * 8 blocks, load 8) or fits in L2 (HS_Z_N values: add at 4097 -4.6%),
 * h_bf16_ld2's elsewhere (add and mul at 1M: +1.4% and +2.4% with z) */
#define HS_Z_N 65536
#define HS_BF16_F2_z(op, F)                                               \
    /* each loop a function of its own: inlined into one, gcc stopped    \
     * inlining h_bf16_st2 in the second (a call a step: +50% time) */   \
    __attribute__((noinline)) static void hs_##op##_bf16_z(              \
        const uint16_t *, const uint16_t *, uint16_t *, int64_t, float);  \
    __attribute__((noinline)) static void hs_##op##_bf16_u(              \
        const uint16_t *, const uint16_t *, uint16_t *, int64_t, float);  \
    HS_FUSED2(hs_##op##_bf16_z, bf16, F, z)                               \
    HS_FUSED2(hs_##op##_bf16_u, bf16, F, )                                \
    static void hs_##op##_bf16(const uint16_t *pa, const uint16_t *pb,   \
                               uint16_t *po, int64_t n, float k)          \
    {                                                                     \
        if (po == pa || po == pb || n <= HS_Z_N)                          \
            hs_##op##_bf16_z(pa, pb, po, n, k);                           \
        else                                                              \
            hs_##op##_bf16_u(pa, pb, po, n, k);                           \
    }
#else
#define HS_BF16_F2_z HS_BF16_F2_
#endif
#define HS_BF16_DEF2(op, F) HS_BF16_F2(op, F, HS_P_##op)
#ifdef HS_F16_YMM /* f16's binary loops: hy_*_f16 above */
#define HS_DEF2(op, F) HS_BF16_DEF2(op, F)
#else
#define HS_DEF2(op, F)                                                    \
    HS_BF16_DEF2(op, F)                                                   \
    HS_FUSED2(hs_##op##_f16, f16, F, HS_P_##op)
#endif
#define HS_DEF1(op)                                                       \
    HS_FUSED1(hs_##op##_bf16, bf16, hs_##op)                              \
    HS_FUSED1(hs_##op##_f16, f16, hs_##op)
/* the pairs of HS_STEP2 (h_<dt>_ld2<P>): even/odd bf16 for add, sub,
 * mul (z: the zero-word test) and add_relu (r: the relu in the store) */
#define HS_P_add z
#define HS_P_sub z
#define HS_P_mul z
#define HS_P_div
#define HS_P_add_relu r
HS_BINARY(HS_DEF2)
HS_UNARY(HS_DEF1)
#ifdef HS_F16_YMM
HS_FUSED1(hs_leaky_relu_bf16, bf16, hs_leaky_relu)
#define hs_leaky_relu_f16 hy_leaky_relu_f16
#else
HS_DEF1(leaky_relu)
#endif
HS_DEF1(log)
TB_CPU_EW_OPS(HS_EW_UNARY, HS_DEF1)

/* sigmoid_backward, tanh_backward, gelu_backward (a = g, b = x of one
 * shape; half.c): bwd_vf.h's element functions, which the f32 rows of
 * both SIMD levels apply per lane, on g and x widened in registers, the
 * result narrowed once: the block path's bits in one pass (it widened,
 * ran the f32 row and narrowed: 3 passes, bf16 sigmoid_backward at
 * 1024x1024 2x the f32 row's time).  f16 at the level's full width:
 * the element function, not the conversions, takes the time. */
#define HS_BWD(X) X(sigmoid) X(tanh) X(gelu)
#define HS_DEF_BWD(op)                                                    \
    HS_FUSED2(hs_##op##_backward_bf16, bf16, bw_##op##_f, )               \
    HS_FUSED2(hs_##op##_backward_f16, f16, bw_##op##_f, )
HS_BWD(HS_DEF_BWD)

#if VS_LANES == 16
/* log at avx512 by a shorter f32 log whose 16-bit results are hs_log's
 * (the f32 rows' vs_log narrowed: the block path's) on every input,
 * proven on this CPU before first use (f16 log at 1M took 1.7x NumPy's
 * time: vs_log's degree-8 polynomial, 1.4 cycles a value).  x = 2^e m,
 * m in [0.75, 1.5) (vgetmantps, vgetexpps); the top 5 bits of m's
 * fraction pick c_j (the middle of its 1/32 or 1/64, c = 1 at both
 * sides of 1 so that log(x) near 1 is the polynomial alone): inv_j, 1/c_j
 * to 9 bits, and t_j = -log(inv_j) rounded to f32 (two vpermt2ps); u =
 * m inv_j - 1 is exact (m has 11 significant bits at most, bf16 8), |u|
 * < 1/32; log(1 + u) = u + u^2 q(u), q a quadratic fitted to (log1p(u)
 * - u) / u^2 on [-1/64, 1/32] (relative error 2^-23.8); log(x) = e ln2
 * + (t_j + that) in one FMA; e = getexp(x 4/3).  A vector of 32 values
 * holding a zero, negative, infinite, NaN or bf16 subnormal pattern (or
 * bf16 from 1.5 * 2^127 up, where x 4/3 overflows) takes vs_log for all
 * its lanes.
 * Its f32 value is within about an f32 ulp of vs_log's, which can round
 * to the other 16-bit neighbour where vs_log's lies near a tie: the
 * first call (pthread_once) runs both over every 16-bit pattern and
 * keeps the patterns that differ (with hs_log's result) as exceptions,
 * patched after narrowing (one 16-bit compare per exception and 32
 * values); with more than HS_LOGQ_EX the loop is not used (hs_log
 * instead).  So the bits are the block path's by construction. */
#define HS_LOGQ_EX 16
/* the narrowing of a pair in h_<dt>_ld2's order */
#define h_bf16_narrow2x h_bf16_narrow2
#define h_f16_narrow2x h_f16_narrow2o
#define HS_IS_bf16 1
#define HS_IS_f16 0
static const float hs_lq_inv[32] = {
    0x1p+0f, 0x1.e9p-1f, 0x1.dbp-1f, 0x1.cep-1f, 0x1.c1p-1f, 0x1.b5p-1f,
    0x1.aap-1f, 0x1.9fp-1f, 0x1.95p-1f, 0x1.8bp-1f, 0x1.82p-1f, 0x1.79p-1f,
    0x1.7p-1f, 0x1.68p-1f, 0x1.6p-1f, 0x1.59p-1f, 0x1.52p+0f, 0x1.4bp+0f,
    0x1.44p+0f, 0x1.3ep+0f, 0x1.38p+0f, 0x1.32p+0f, 0x1.2dp+0f, 0x1.27p+0f,
    0x1.22p+0f, 0x1.1dp+0f, 0x1.18p+0f, 0x1.13p+0f, 0x1.0fp+0f, 0x1.0ap+0f,
    0x1.06p+0f, 0x1p+0f};
static const float hs_lq_t[32] = {
    0.0f, 0x1.788596p-5f, 0x1.333d8p-4f, 0x1.a4e764p-4f, 0x1.0ce7ecp-3f,
    0x1.4462bap-3f, 0x1.7898d8p-3f, 0x1.ae2ca6p-3f, 0x1.e020ccp-3f,
    0x1.09aa58p-2f, 0x1.214456p-2f, 0x1.396ce4p-2f, 0x1.522aep-2f,
    0x1.68ac84p-2f, 0x1.7fafa4p-2f, 0x1.944144p-2f, -0x1.1c898cp-2f,
    -0x1.071b86p-2f, -0x1.e27076p-3f, -0x1.bc2868p-3f, -0x1.9525aap-3f,
    -0x1.6d60fep-3f, -0x1.4ba37p-3f, -0x1.2266f2p-3f, -0x1.fec914p-4f,
    -0x1.b78c82p-4f, -0x1.6f0d28p-4f, -0x1.253f62p-4f, -0x1.d276b8p-5f,
    -0x1.39e87cp-5f, -0x1.7b91bp-6f, 0.0f};
/* the short log of positive normal x (other lanes: garbage) */
static inline vf hs_logq_core(vf x)
{
    const vf m = _mm512_getmant_ps(x, _MM_MANT_NORM_p75_1p5,
                                   _MM_MANT_SIGN_src);
    /* x's exponent, one more where m = M / 2 (M >= 1.5: x 4/3 >= 2^(E+1),
     * 4/3 rounded up; bf16 from 1.5 * 2^127 up would overflow: vs_log) */
    const vf e = _mm512_getexp_ps(v_mul(x, v_set1(0x1.555556p+0f)));
    const __m512i j = _mm512_srli_epi32(_mm512_castps_si512(m), 18);
    const vf inv = _mm512_permutex2var_ps(v_load(hs_lq_inv), j,
                                          v_load(hs_lq_inv + 16));
    const vf t = _mm512_permutex2var_ps(v_load(hs_lq_t), j,
                                        v_load(hs_lq_t + 16));
    const vf u = v_fma(m, inv, v_set1(-1.0f));
    vf q = v_fma(u, v_set1(-0x1.f45a0p-3f), v_set1(0x1.556236p-2f));
    q = v_fma(q, u, v_set1(-0x1.00003p-1f));
    const vf y = v_fma(v_mul(u, u), q, u);
    return v_fma(e, v_set1(0x1.62e43p-1f), v_add(t, y));
}
/* 32 values of h_<dt>_ld2's pattern h whose lanes are all positive
 * and finite, f32-normal when widened (f16: 0x0001..0x7bff; bf16:
 * 0x0080..0x7f7f): one unsigned 16-bit compare */
static inline int hs_lq_ok(hv2 h, int bf16)
{
    const __m512i lo = _mm512_set1_epi16(bf16 ? 0x80 : 1);
    const __m512i span = _mm512_set1_epi16(bf16 ? 0x7ec0 : 0x7bff);
    return _mm512_cmplt_epu16_mask(_mm512_sub_epi16(h, lo), span) ==
           0xffffffffu;
}
#define HS_LOGQ(DT)                                                       \
    static struct {                                                       \
        int n; /* exceptions; > HS_LOGQ_EX: not used */                   \
        uint16_t in[HS_LOGQ_EX], out[HS_LOGQ_EX];                         \
    } hs_lq_##DT;                                                         \
    static pthread_once_t hs_lq_once_##DT = PTHREAD_ONCE_INIT;            \
    /* the 32 values at pa (h: their patterns): hs_logq_core where all \
     * are positive and finite, else vs_log (no exceptions patched) */  \
    static inline hv2 hs_lq_calc_##DT(const uint16_t *pa, hv2 h)          \
    {                                                                     \
        vf lo, hi;                                                        \
        h_##DT##_ld2(pa, &lo, &hi);                                       \
        if (hs_lq_ok(h, HS_IS_##DT))                                      \
            return h_##DT##_narrow2x(hs_logq_core(lo), hs_logq_core(hi)); \
        return h_##DT##_narrow2x(vs_log(lo), vs_log(hi));                 \
    }                                                                     \
    static void hs_lq_prove_##DT(void)                                    \
    {                                                                     \
        enum { C = 2 * VS_LANES };                                        \
        uint16_t a[C], want[C], got[C];                                   \
        for (uint32_t b = 0; b < 65536; b += C) {                         \
            for (int i = 0; i < C; i++)                                   \
                a[i] = (uint16_t)(b + (uint32_t)i);                       \
            hs_log_##DT(a, NULL, want, C, 0.0f);                          \
            /* each pattern alone (32 copies): the path it takes in   \
             * any vector of positive finite values, or vs_log */         \
            for (int i = 0; i < C; i++) {                                 \
                uint16_t t[C];                                            \
                for (int l = 0; l < C; l++)                               \
                    t[l] = a[i];                                          \
                h_store2(t, hs_lq_calc_##DT(t, h_load2(t)));              \
                got[i] = t[0];                                            \
            }                                                             \
            for (int i = 0; i < C; i++) {                                 \
                if (got[i] == want[i])                                    \
                    continue;                                             \
                if (hs_lq_##DT.n < HS_LOGQ_EX) {                          \
                    hs_lq_##DT.in[hs_lq_##DT.n] = a[i];                   \
                    hs_lq_##DT.out[hs_lq_##DT.n] = want[i];               \
                }                                                         \
                hs_lq_##DT.n++;                                           \
            }                                                             \
        }                                                                 \
    }                                                                     \
    static inline hv2 hs_lq_step_##DT(const uint16_t *pa)                 \
    {                                                                     \
        const hv2 h = h_load2(pa);                                        \
        hv2 o = hs_lq_calc_##DT(pa, h);                                   \
        if (hs_lq_##DT.n) {                                               \
            __mmask32 any = 0;                                            \
            for (int e = 0; e < hs_lq_##DT.n; e++)                        \
                any |= _mm512_cmpeq_epi16_mask(                           \
                    h, _mm512_set1_epi16((short)hs_lq_##DT.in[e]));       \
            if (any)                                                      \
                for (int e = 0; e < hs_lq_##DT.n; e++)                    \
                    o = _mm512_mask_mov_epi16(                            \
                        o,                                                \
                        _mm512_cmpeq_epi16_mask(                          \
                            h, _mm512_set1_epi16((short)hs_lq_##DT.in[e])), \
                        _mm512_set1_epi16((short)hs_lq_##DT.out[e]));     \
        }                                                                 \
        return o;                                                         \
    }                                                                     \
    static void hs_logq_##DT(const uint16_t *pa, const uint16_t *pb,      \
                             uint16_t *po, int64_t n, float k)            \
    {                                                                     \
        pthread_once(&hs_lq_once_##DT, hs_lq_prove_##DT);                 \
        if (hs_lq_##DT.n > HS_LOGQ_EX) {                                  \
            hs_log_##DT(pa, pb, po, n, k);                                \
            return;                                                       \
        }                                                                 \
        enum { W = 2 * VS_LANES };                                        \
        int64_t i = 0;                                                    \
        for (; i + W <= n; i += W)                                        \
            h_store2(po + i, hs_lq_step_##DT(pa + i));                    \
        if (i < n) {                                                      \
            uint16_t ta[W] = {0};                                         \
            memcpy(ta, pa + i, (size_t)(n - i) * 2);                      \
            const hv2 o = hs_lq_step_##DT(ta);                            \
            uint16_t to[W];                                               \
            h_store2(to, o);                                              \
            memcpy(po + i, to, (size_t)(n - i) * 2);                      \
        }                                                                 \
    }
HS_LOGQ(bf16)
HS_LOGQ(f16)
#define HS_LOG_FN(dt) ((dt) == TB_BF16 ? hs_logq_bf16 : hs_logq_f16)
#else
#define HS_LOG_FN(dt) ((dt) == TB_BF16 ? hs_log_bf16 : hs_log_f16)
#endif

/* relu on the 16-bit patterns themselves: its result is its input or
 * +0, exact in the dtype, so nothing is converted.  As int16, the
 * negative numbers (-0 and -inf included) are the patterns below the
 * negative NaNs: below -127 (bf16: 0xff81..0xffff are NaN) or -1023
 * (f16: 0xfc01..0xffff); those become +0, everything else (NaN too)
 * stays. */
#define HS_RELU(DT, LIM)                                                  \
    static void hs_relu_##DT(const uint16_t *pa, const uint16_t *pb,      \
                             uint16_t *po, int64_t n, float k)            \
    {                                                                     \
        (void)pb, (void)k;                                                \
        int64_t i = 0;                                                    \
        for (; i + HS_RELU_W <= n; i += HS_RELU_W)                        \
            h_relu_bits(pa + i, po + i, LIM);                             \
        for (; i < n; i++)                                                \
            po[i] = (int16_t)pa[i] < (LIM) ? 0 : pa[i];                   \
    }
HS_RELU(bf16, -127)
HS_RELU(f16, -1023)

static inline tb_cpu_half_fused_fn hs_fused(tb_op_id op, tb_dtype dt)
{
#define HS_CASE(op_)                                                      \
    case TB_OP_##op_:                                                     \
        return dt == TB_BF16 ? hs_##op_##_bf16 : hs_##op_##_f16;
#ifdef HS_F16_YMM
#define HS_CASE2(op_, F)                                                  \
    case TB_OP_##op_:                                                     \
        return dt == TB_BF16 ? hs_##op_##_bf16 : hy_##op_##_f16;
#else
#define HS_CASE2(op_, F) HS_CASE(op_)
#endif
    if (dt != TB_BF16 && dt != TB_F16)
        return NULL;
    switch (op) {
        HS_BINARY(HS_CASE2)
        HS_CASE(leaky_relu)
        HS_CASE(maximum)
        HS_CASE(minimum)
        HS_UNARY(HS_CASE)
        TB_CPU_EW_OPS(HS_EW_UNARY, HS_CASE)
    case TB_OP_relu:
        return dt == TB_BF16 ? hs_relu_bf16 : hs_relu_f16;
    case TB_OP_log:
        return HS_LOG_FN(dt);
    case TB_OP_softplus:
        return dt == TB_BF16 ? hs_softplus_bf16 : hs_softplus_f16;
    case TB_OP_pow:
        return dt == TB_BF16 ? hs_pow_bf16 : hs_pow_f16;
#define HS_CASE_BWD(op_)                                                  \
    case TB_OP_##op_##_backward:                                          \
        return dt == TB_BF16 ? hs_##op_##_backward_bf16                   \
                             : hs_##op_##_backward_f16;
        HS_BWD(HS_CASE_BWD)
#undef HS_CASE_BWD
    default:
        return NULL;
    }
#undef HS_CASE
#undef HS_CASE2
}

static inline tb_cpu_half_cvt hs_cvt(tb_dtype dt)
{
    if (dt == TB_BF16)
        return (tb_cpu_half_cvt){hs_widen_bf16, hs_narrow_bf16};
    if (dt == TB_F16)
        return (tb_cpu_half_cvt){hs_widen_f16, hs_narrow_f16};
    return (tb_cpu_half_cvt){0, 0};
}

/* ---- arange (tb_cpu_half_arange_fn) ----------------------------------- */

/* o[i] for i in [b, e): the narrowing of (float)(start + (double)i
 * step), the f32 row's value (create.c).  In arange.h's exact case
 * every value is a float computed exactly in float: four chains of
 * VS_LANES values, each advanced by 4 VS_LANES step a step (one
 * addition per vector, exact; four chains for the addition's latency),
 * narrowed two vectors at a time; otherwise (and for the tail) each
 * value as the portable loop computes it. */
/* start + (double)i step, the product rounded first: this file is
 * built with contraction allowed, and a fused multiply-add would round
 * once (the empty asm makes the product a value of its own) */
static inline double hs_arange_val(double start, double step, int64_t i)
{
    double t = (double)i * step;
    __asm__("" : "+x"(t));
    return start + t;
}
/* The arange loop's narrowing of a pair of exact values (finite: no
 * NaN to quiet) and the place of lane l of the pair (lo's lanes, then
 * hi's) among its 2 VS_LANES outputs: f16 in order; bf16 in order at
 * avx512bf16 (vcvtne2ps2bf16), else in h_bf16_widen2's order, so that
 * the integer rounding packs by one vpermt2w (avx512) with no NaN test
 * (the in-order pack with its NaN fix-up took arange bf16 at 1M to
 * 4.1x its bound). */
static inline int hs_ar_at_in_order(int l) { return l; }
static inline hv2 hs_ar_narrow_f16(vf lo, vf hi) { return h_f16_narrow2o(lo, hi); }
#define HS_AR_NORMAL_f16 0
#define hs_ar_narrow_n_f16 hs_ar_narrow_f16
#define hs_ar_at_f16 hs_ar_at_in_order
#ifdef __AVX512BF16__
static inline hv2 hs_ar_narrow_bf16(vf lo, vf hi) { return h_bf16_narrow2o(lo, hi); }
/* no subnormal lane (tb_cpu_arange_normal): vcvtne2ps2bf16 alone, no
 * vfpclassps test (arange bf16 at 1M 33.6 -> 30.4 us, 29.7 with the
 * increments on the FMA pipes; f16 23.7 -> 23.0; tbench ab, 8 blocks,
 * load 9-11) */
#define HS_AR_NORMAL_bf16 1
static inline hv2 hs_ar_narrow_n_bf16(vf lo, vf hi) { return h_bf16_ne2(lo, hi); }
#define hs_ar_at_bf16 hs_ar_at_in_order
#else
static inline int hs_ar_at_bf16(int l)
{
    const int j = l % VS_LANES; /* lo's words 0-3 of each 128-bit lane */
    return 8 * (j / 4) + 4 * (l / VS_LANES) + j % 4;
}
static inline hv2 hs_ar_narrow_bf16(vf lo, vf hi)
{
#ifdef HS_PACK2_HI
    return h_pack2_hi(h_bf16_round_num(lo), h_bf16_round_num(hi));
#else
    return h_pack2(hi_srl16(h_bf16_round_num(lo)),
                   hi_srl16(h_bf16_round_num(hi)));
#endif
}
#endif
#ifndef HS_AR_NORMAL_bf16
#define HS_AR_NORMAL_bf16 0
#define hs_ar_narrow_n_bf16 hs_ar_narrow_bf16
#endif
/* o[b..e) = pat (whole vectors, then single values). */
static inline void hs_ar_fill(uint16_t *o, int64_t b, int64_t e,
                              uint16_t pat)
{
    const hv2 v = HS_W(set1_epi16)((short)pat);
    int64_t i = b;
    for (; i + 2 * VS_LANES <= e; i += 2 * VS_LANES)
        h_store2(o + i, v);
    for (; i < e; i++)
        o[i] = pat;
}
/* f16's saturation in arange.h's exact case: the first index in [b, e)
 * from which every value narrows to an infinity (|v| >= 65520 rounds to
 * one, 65504 being the largest finite f16), or e.  The values are exact
 * (start + i step, monotone in i), so once one is at or beyond 65520 in
 * the step's direction every later one is too: [k, e) is all +inf (step
 * > 0) or -inf (step < 0), filled as a constant pattern (arange f16 at
 * 1M, start 0 step 1: 98% of the values; the narrowing of those cost
 * 2.35x the output's write bound).  *pat gets the pattern.  bf16's
 * overflow lies past 2^127, beyond the exact case: none. */
static inline int64_t hs_ar_fin_f16(int64_t b, int64_t e, double start,
                                    double step, uint16_t *pat)
{
    const double lim = 65520.0;
    if (!(step > 0) && !(step < 0))
        return e; /* step 0 (or NaN): constant values, narrowed */
    const double sg = step > 0 ? 1.0 : -1.0;
    *pat = step > 0 ? 0x7c00 : 0xfc00;
    const double t = (sg * lim - start) / step; /* index of the crossing */
    int64_t k = t <= (double)b ? b : t >= (double)e ? e : (int64_t)t;
    /* exact values: correct the estimate by whole steps */
    while (k > b && sg * hs_arange_val(start, step, k - 1) >= lim)
        k--;
    while (k < e && sg * hs_arange_val(start, step, k) < lim)
        k++;
    return k;
}
static inline int64_t hs_ar_fin_bf16(int64_t b, int64_t e, double start,
                                     double step, uint16_t *pat)
{
    (void)b, (void)start, (void)step, (void)pat;
    return e;
}
/* the exact loop's steps, NARROW the pairs' narrowing; the increments
 * as fma(c, 1, inc), exact as the adds are, on the FMA pipes (Zen 4's
 * FADD pipes also run the conversions), INC2 the second of each pair:
 * for bf16 at avx512bf16 an add, the two FMA pipes with four increments
 * being that step's limit (arange bf16 at 1M 29.4 -> 26.1 us, tbench ab, 8 blocks, load 7; on L1 data
 * 0.0713 -> 0.0636 TSC cycles a value with two adds, all four adds
 * 0.0741, the stores alone 0.0517) */
#define HS_AR_LOOP(NARROW, INC2)                                          \
    for (; i + W <= e; i += W) {                                          \
        h_store2(o + i, NARROW(c0, c1));                                  \
        h_store2(o + i + 2 * L, NARROW(c2, c3));                          \
        c0 = v_fma(c0, one, inc);                                         \
        c1 = INC2(c1, one, inc);                                          \
        c2 = v_fma(c2, one, inc);                                         \
        c3 = INC2(c3, one, inc);                                          \
    }
/* the second increment of a pair: an add for bf16 at avx512bf16 (its
 * vcvtne2ps2bf16 leaves the FADD pipes room), an FMA elsewhere (f16 at
 * 4097 took 10% more time with the adds: vcvtps2ph shares those pipes) */
static inline vf hs_ar_add(vf c, vf one, vf inc)
{
    (void)one;
    return v_add(c, inc);
}
#ifdef __AVX512BF16__
#define HS_AR_INC2_bf16 hs_ar_add
#else
#define HS_AR_INC2_bf16 v_fma
#endif
#define HS_AR_INC2_f16 v_fma
#define HS_ARANGE(DT)                                                     \
    static void hs_arange_##DT(uint16_t *o, int64_t b, int64_t e,         \
                               double start, double step)                 \
    {                                                                     \
        enum { L = VS_LANES, W = 4 * VS_LANES };                          \
        int64_t i = b;                                                    \
        /* exact up to e, so up to any k <= e too */                      \
        const bool exact =                                                \
            e - b >= W && tb_cpu_arange_exact(start, step, e);            \
        if (exact) {                                                      \
            uint16_t pat = 0;                                             \
            const int64_t k = hs_ar_fin_##DT(b, e, start, step, &pat);    \
            hs_ar_fill(o, k, e, pat);                                     \
            e = k; /* the values before the saturation */                 \
        }                                                                 \
        if (exact && e - b >= W) {                                        \
            float v0[W]; /* chain c's lane l: v0[c L + l] */              \
            for (int l = 0; l < W; l++) {                                 \
                const int pair = l / (2 * L), at = hs_ar_at_##DT(l % (2 * L)); \
                v0[l] = (float)hs_arange_val(start, step,                 \
                                             b + pair * 2 * L + at);      \
            }                                                             \
            vf c0 = v_load(v0), c1 = v_load(v0 + L);                      \
            vf c2 = v_load(v0 + 2 * L), c3 = v_load(v0 + 3 * L);          \
            const vf inc = v_set1((float)((double)W * step));             \
            const vf one = v_set1(1.0f);                                  \
            if (HS_AR_NORMAL_##DT && tb_cpu_arange_normal(start, step)) { \
                HS_AR_LOOP(hs_ar_narrow_n_##DT, HS_AR_INC2_##DT)          \
            } else {                                                      \
                HS_AR_LOOP(hs_ar_narrow_##DT, HS_AR_INC2_##DT)            \
            }                                                             \
        }                                                                 \
        for (; i < e; i++)                                                \
            o[i] = tb_f32_to_##DT((float)hs_arange_val(start, step, i));  \
    }
HS_ARANGE(bf16)
HS_ARANGE(f16)

static inline tb_cpu_half_arange_fn hs_arange(tb_dtype dt)
{
    return dt == TB_BF16 ? hs_arange_bf16 : dt == TB_F16 ? hs_arange_f16 : NULL;
}

/* ---- column sums for add_backward (tb_cpu_half_colsum_fn) ------------- */

/* acc[c] += x[r ld + c] for r = 0..R-1 in order, c < w: each value
 * widened in registers and added in f32, 8 vectors of columns held in
 * registers over all the rows (the f32 row's additions, in its order). */
#define HS_COLSUM(DT)                                                     \
    static void hs_colsum_##DT(const uint16_t *x, int64_t R, int64_t ld,  \
                               int64_t w, float *acc)                     \
    {                                                                     \
        enum { L = VS_LANES };                                            \
        int64_t c = 0;                                                    \
        for (; c + 8 * L <= w; c += 8 * L) {                              \
            vf a[8];                                                      \
            for (int k = 0; k < 8; k++)                                   \
                a[k] = v_load(acc + c + k * L);                           \
            for (int64_t r = 0; r < R; r++)                               \
                for (int k = 0; k < 8; k++)                               \
                    a[k] = v_add(a[k], h_##DT##_ld1(x + r * ld + c + k * L)); \
            for (int k = 0; k < 8; k++)                                   \
                v_store(acc + c + k * L, a[k]);                           \
        }                                                                 \
        for (; c + L <= w; c += L) {                                      \
            vf a = v_load(acc + c);                                       \
            for (int64_t r = 0; r < R; r++)                               \
                a = v_add(a, h_##DT##_ld1(x + r * ld + c));               \
            v_store(acc + c, a);                                          \
        }                                                                 \
        for (; c < w; c++) {                                              \
            float a = acc[c];                                             \
            for (int64_t r = 0; r < R; r++)                               \
                a += tb_##DT##_to_f32(x[r * ld + c]);                     \
            acc[c] = a;                                                   \
        }                                                                 \
    }
HS_COLSUM(bf16)
HS_COLSUM(f16)

static inline tb_cpu_half_colsum_fn hs_colsum(tb_dtype dt)
{
    return dt == TB_BF16 ? hs_colsum_bf16 : dt == TB_F16 ? hs_colsum_f16 : NULL;
}

#include "half_red_simd.h" /* the reductions (hs_red) */

#endif /* TB_BACKENDS_CPU_HALF_SIMD_H */
