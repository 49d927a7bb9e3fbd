/* The avx512 loops on bf16/f16 of norm_avx512.c (16 lanes: loads that
 * widen, stores that narrow) and the forward 16-bit rows' (NZ_ROWS):
 * included by norm_avx512.c (the avx512 level) and norm_avx512bf16.c
 * (bf16 at the avx512bf16 level, narrowing by AVX512_BF16; same bits). */
#ifndef TB_BACKENDS_CPU_NORM16_SIMD_H
#define TB_BACKENDS_CPU_NORM16_SIMD_H

#include <immintrin.h>
#include <math.h>

#include "../../ops/half.h"
#include "cpu_internal.h"
#include "norm.h"

#define NB_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* 16 lanes of p[k..k+16) widened to f32, the lanes outside m zero */
static inline __m512 nb_ld_f32(const void *p, int64_t k, __mmask16 m)
{
    return m == 0xffff ? _mm512_loadu_ps((const float *)p + k)
                       : _mm512_maskz_loadu_ps(m, (const float *)p + k);
}
static inline __m512 nb_ld_bf16(const void *p, int64_t k, __mmask16 m)
{
    const __m256i h =
        m == 0xffff ? _mm256_loadu_si256((const __m256i *)((const uint16_t *)p + k))
                    : _mm256_maskz_loadu_epi16(m, (const uint16_t *)p + k);
    /* one vpermw placing word j in the upper half of lane j, the lower
     * halves zeroed (vpmovzxwd + vpslld: 2 cycles a vector on Zen 4,
     * this 1: scripts/insn_tp.c) */
    const __m512i idx = _mm512_set_epi16(
        15, 0, 14, 0, 13, 0, 12, 0, 11, 0, 10, 0, 9, 0, 8, 0,
        7, 0, 6, 0, 5, 0, 4, 0, 3, 0, 2, 0, 1, 0, 0, 0);
    return _mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(
        0xaaaaaaaau, idx, _mm512_castsi256_si512(h)));
}
static inline __m512 nb_ld_f16(const void *p, int64_t k, __mmask16 m)
{
    return _mm512_cvtph_ps(
        m == 0xffff
            ? _mm256_loadu_si256((const __m256i *)((const uint16_t *)p + k))
            : _mm256_maskz_loadu_epi16(m, (const uint16_t *)p + k));
}
/* v's lanes in m stored to p[k..k+16): f32; f16 by vcvtps2ph (nearest
 * even); bf16 as ops/half.h's tb_f32_to_bf16 (nearest even on the 16
 * bits dropped, a NaN its upper half with the quiet bit set) */
static inline void nb_st_f32(void *p, int64_t k, __mmask16 m, __m512 v)
{
    if (m == 0xffff)
        _mm512_storeu_ps((float *)p + k, v);
    else
        _mm512_mask_storeu_ps((float *)p + k, m, v);
}
static inline void nb_st16(void *p, int64_t k, __mmask16 m, __m256i h)
{
    if (m == 0xffff)
        _mm256_storeu_si256((__m256i *)((uint16_t *)p + k), h);
    else
        _mm256_mask_storeu_epi16((uint16_t *)p + k, m, h);
}
static inline void nb_st_f16(void *p, int64_t k, __mmask16 m, __m512 v)
{
    nb_st16(p, k, m, _mm512_cvtps_ph(v, NB_RNE));
}
static inline void nb_st_bf16(void *p, int64_t k, __mmask16 m, __m512 v)
{
    const __m512i x = _mm512_castps_si512(v);
    const __m512i hi = _mm512_srli_epi32(x, 16);
    __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(x, _mm512_add_epi32(
                                _mm512_and_si512(hi, _mm512_set1_epi32(1)),
                                _mm512_set1_epi32(0x7fff))),
        16);
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                              _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
    nb_st16(p, k, m, _mm512_cvtepi32_epi16(r));
}
/* two vectors' lanes, a's then b's, to p[k..k+32) as nb_st_* each: f16
 * by vcvtps2ph; bf16 the high halves of the rounded lanes picked by one
 * vpermt2w (vpmovdw's 2 uops on Zen 4 were the loop's cost) */
static inline void nb_st2_f16(void *p, int64_t k, __m512 a, __m512 b)
{
    nb_st_f16(p, k, 0xffff, a);
    nb_st_f16(p, k + 16, 0xffff, b);
}
static inline __m512i nb_bf16_hi(__m512 v)
{
    const __m512i x = _mm512_castps_si512(v);
    const __m512i r = _mm512_add_epi32(
        x, _mm512_add_epi32(
               _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1)),
               _mm512_set1_epi32(0x7fff)));
    return _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                                 _mm512_or_si512(x, _mm512_set1_epi32(0x400000)));
}
/* the rounding of nb_bf16_hi on lanes not NaN, in the low halves */
static inline __m512i nb_bf16_lo(__m512 v)
{
    const __m512i x = _mm512_castps_si512(v);
    return _mm512_srli_epi32(
        _mm512_add_epi32(
            x, _mm512_add_epi32(_mm512_and_si512(_mm512_srli_epi32(x, 16),
                                                 _mm512_set1_epi32(1)),
                                _mm512_set1_epi32(0x7fff))),
        16);
}
static inline void nb_st2_bf16(void *p, int64_t k, __m512 a, __m512 b)
{
    if (_mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q)) { /* a NaN: quiet it */
        const __m512i odd = _mm512_set_epi16(
            63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33,
            31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
        _mm512_storeu_si512((uint16_t *)p + k,
                            _mm512_permutex2var_epi16(nb_bf16_hi(a), odd,
                                                      nb_bf16_hi(b)));
        return;
    }
    /* per 128-bit lane a's 4 words then b's: the 64-bit pieces put back
     * in order */
    const __m512i pk = _mm512_packus_epi32(nb_bf16_lo(a), nb_bf16_lo(b));
    _mm512_storeu_si512(
        (uint16_t *)p + k,
        _mm512_permutexvar_epi64(_mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0), pk));
}
/* a's lanes to p[k..k+16) and b's to q[k..k+16) (two rows' vectors, all
 * lanes), as nb_st_* each */
/* whether the gradients' dx rows are narrowed in pairs (nb_st2r_*):
 * bf16 (one vcvtne2ps2bf16 for two rows); f32 and f16 store each row's
 * vector as it is made (the pairs' order measured 5% slower for f32) */
#define NB_PAIR_f32 0
#define NB_PAIR_f16 0
#define NB_PAIR_bf16 1
static inline void nb_st2r_f32(void *p, void *q, int64_t k, __m512 a,
                               __m512 b)
{
    nb_st_f32(p, k, 0xffff, a);
    nb_st_f32(q, k, 0xffff, b);
}
static inline void nb_st2r_f16(void *p, void *q, int64_t k, __m512 a,
                               __m512 b)
{
    nb_st_f16(p, k, 0xffff, a);
    nb_st_f16(q, k, 0xffff, b);
}
static inline void nb_st2r_bf16(void *p, void *q, int64_t k, __m512 a,
                                __m512 b)
{
    nb_st_bf16(p, k, 0xffff, a);
    nb_st_bf16(q, k, 0xffff, b);
}
/* nb_st2_* with, where NB_ZACC_<DT>, a word of *z the least of its
 * previous value and the results' words doubled (the sign dropped): a
 * zero word there after a row says a result was a zero, which
 * vcvtne2ps2bf16 also makes of a subnormal one (below) */
#define NB_ZACC_f16 0
static inline void nb_st2z_f16(void *p, int64_t k, __m512 a, __m512 b,
                               __m512i *z)
{
    (void)z;
    nb_st2_f16(p, k, a, b);
}
static inline void nb_st2z_bf16(void *p, int64_t k, __m512 a, __m512 b,
                                __m512i *z)
{
    (void)z;
    nb_st2_bf16(p, k, a, b);
}
#ifdef __AVX512BF16__
/* At the avx512bf16 level (norm_avx512bf16.c): bf16 narrowed by
 * vcvtneps2bf16 / vcvtne2ps2bf16 (1.33 cycles for 16 or 32 results on
 * Zen 4; nearest even, a NaN its upper half with the quiet bit set, as
 * above), which read a subnormal f32 as a zero of its sign: where a
 * result is a zero (vptestnmw, one test for the pair) and a lane is
 * subnormal (vfpclassps: results below FLT_MIN, rare), the integer
 * code, so the bits are tb_f32_to_bf16's. */
static inline void nb_st_bf16_ne(void *p, int64_t k, __mmask16 m, __m512 v)
{
    const __m256i r = (__m256i)_mm512_cvtneps_pbh(v);
    if (_mm256_testn_epi16_mask(r, _mm256_set1_epi16(0x7fff)) &&
        _mm512_fpclass_ps_mask(v, 0x20))
        nb_st_bf16(p, k, m, v);
    else
        nb_st16(p, k, m, r);
}
static inline void nb_st2_bf16_ne(void *p, int64_t k, __m512 a, __m512 b)
{
    const __m512i r = (__m512i)_mm512_cvtne2ps_pbh(b, a); /* a's first */
    if (_mm512_testn_epi16_mask(r, _mm512_set1_epi16(0x7fff)) &&
        (_mm512_fpclass_ps_mask(a, 0x20) | _mm512_fpclass_ps_mask(b, 0x20)))
        nb_st2_bf16(p, k, a, b);
    else
        _mm512_storeu_si512((uint16_t *)p + k, r);
}
/* two rows' vectors narrowed by one vcvtne2ps2bf16 (the cost of one
 * vcvtneps2bf16 for twice the results: the layer_norm and rms_norm
 * gradients' dx, a row at a time, paid it per row) */
static inline void nb_st2r_bf16_ne(void *p, void *q, int64_t k, __m512 a,
                                   __m512 b)
{
    const __m512i r = (__m512i)_mm512_cvtne2ps_pbh(b, a); /* a's low */
    if (_mm512_testn_epi16_mask(r, _mm512_set1_epi16(0x7fff)) &&
        (_mm512_fpclass_ps_mask(a, 0x20) | _mm512_fpclass_ps_mask(b, 0x20))) {
        nb_st2r_bf16(p, q, k, a, b);
        return;
    }
    _mm256_storeu_si256((__m256i *)((uint16_t *)p + k),
                        _mm512_castsi512_si256(r));
    _mm256_storeu_si256((__m256i *)((uint16_t *)q + k),
                        _mm512_extracti64x4_epi64(r, 1));
}
/* nb_st2_bf16_ne without its test: the zero words counted in *z (a
 * mask-making test takes an FMA pipe's cycle on this Zen 4; vpaddw and
 * vpminuw run beside the FMAs), the row stored again by nb_st2_bf16_ne
 * where one was found (nz_row) */
static inline void nb_st2z_bf16_ne(void *p, int64_t k, __m512 a, __m512 b,
                                   __m512i *z)
{
    if (!z) {
        nb_st2_bf16_ne(p, k, a, b);
        return;
    }
    const __m512i r = (__m512i)_mm512_cvtne2ps_pbh(b, a); /* a's first */
    *z = _mm512_min_epu16(*z, _mm512_add_epi16(r, r));
    _mm512_storeu_si512((uint16_t *)p + k, r);
}
#define nb_st_bf16 nb_st_bf16_ne
#define nb_st2_bf16 nb_st2_bf16_ne
#define nb_st2r_bf16 nb_st2r_bf16_ne
#define nb_st2z_bf16 nb_st2z_bf16_ne
#define NB_ZACC_bf16 1
#else
#define NB_ZACC_bf16 0
#endif
static inline float nb_get_f32(const void *p, int64_t k)
{
    return ((const float *)p)[k];
}
static inline float nb_get_bf16(const void *p, int64_t k)
{
    return tb_bf16_to_f32(((const uint16_t *)p)[k]);
}
static inline float nb_get_f16(const void *p, int64_t k)
{
    return tb_f16_to_f32(((const uint16_t *)p)[k]);
}

/* ---- layer_norm and rms_norm in bf16/f16 (half_part.c's fused rows at
 * the avx512 and avx512bf16 levels, whose f32 row is norm_avx2.c's): that
 * row's operations in its order, 16 lanes at a time, so its bits (as
 * half_norm_simd.h's avx2 loops; tests/test_half_paths.c): its four
 * 8-lane accumulators of each sum as two 16-lane ones (elements k..k+15
 * and k+16..k+31 of each 32), its 8-element step into the low half by
 * a mask, its reduction order (a0 + a1) + (a2 + a3), then v_hsum's; the
 * scale pass lane by lane; the scalar tails the same C.  Row r + 1's
 * sums run in row r's scale loop (nz_rows: two sums' chains alone held
 * a step to 4 cycles of FMA latency).  No software prefetch: the one of
 * 4 rows ahead (norm_avx2.c's reason: the hardware prefetchers stop at a
 * page's end) made rms_norm f16 and bf16 2-4% slower at 4096x1024 and
 * 8% and 25% at 16384x1024 (tbench ab, 1 thread, load 27-31).  Not
 * memory either: at 128x1024 (in L2) bf16 rms_norm runs 0.345 cycles an
 * element, as at 4096x1024, against the model's 0.1875 (2026-11-30,
 * load ~10); tried there and slower or no better: the x line 2 rows
 * ahead (layer_norm bf16 +11%), the y line a row ahead by prefetchw
 * (+14%, +28%), y's stores half a row rotated (+17% to +141% at
 * 4096x1024: the store stream must run in order), the loop unswitched on
 * sr and sn (+0-4%), the bf16 zero-result test moved after the row
 * (-1%, +1%); without that test at all (not exact: a subnormal result
 * flushed) bf16 rms_norm was 10% and layer_norm 8% faster.  The step
 * is bound by its vector ops, nearly every one adds (2026-11-30, the
 * loop alone at 128x1024, min of 400 calls, load ~20): bf16 rms_norm
 * 10.6 cycles a step of 32, 9.4 without the zero test, 7.5 without it
 * and the four vpermw widenings (not exact), against 6 mul/FMA; the
 * test accumulated (kord, or vpaddw + vpminuw) instead of branched
 * saved 0.1-0.3; exact and no faster: widening to even/odd lanes (vpslld,
 * vpandd; the sums' lanes permuted back at the row's end, y by one
 * vpermw) -1%; slower: the even lanes by a masked or unaligned load
 * one element back (+10%: the 64-byte loads split lines); x - c and
 * a + d of layer_norm's sums and scale by FMA (within 2%); f16 rms_norm
 * without its scratch +22%; layer_norm's scratch holding x - c, not x
 * (a sub an element fewer in the scale pass): bf16 -7% at 512x1024 and
 * 1024x1024, but at 4096x1024 +47% and erratic, 543-1508 us a worker
 * process against 539-652 (tbench ab, 16 blocks, load ~8, 2026-12-01;
 * address-dependent, not found).  What paid (bf16 rms_norm: 10.6 to 9.7
 * cycles a step): a vptestnmw, vpcmpeqw or vptestmd on zmm takes a
 * cycle of the FMA pipes (8 FMAs and 4 tests: 11.9 cycles, 8 FMAs 7.9),
 * vpunpck{l,h}wd, vpaddw, vpminuw run beside them, vpermw partly
 * (a throwaway loop of 8 FMAs and the op, 2026-11-30): so
 * NZ_UNPK (the sums' widening) and nb_st2z (the zero test counted for
 * the row; layer_norm: +3%, not used there). ---- */

/* vmath_simd.h's 8-lane v_hsum */
static inline float nz_hsum8(__m256 a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a),
                          _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline __m256 nz_fold(__m512 a0, __m512 a1)
{
    return _mm256_add_ps(_mm256_add_ps(_mm512_castps512_ps256(a0),
                                       _mm512_extractf32x8_ps(a0, 1)),
                         _mm256_add_ps(_mm512_castps512_ps256(a1),
                                       _mm512_extractf32x8_ps(a1, 1)));
}

/* x - c, or x itself where c is 0 (rms_norm's statistics and scale:
 * the same value, NaN aside, which stays a NaN) */
#define NZ_SUB(rms, x, vc) ((rms) ? (x) : _mm512_sub_ps((x), (vc)))

/* the longest row whose widened 32-element steps nz_rows keeps (two
 * rows, 16 KiB of stack at 2048), and the second row's skew (floats) */
#define NZ_SCR_D 2048
/* whether rms_norm (no b) keeps the rows widened too: f16's widening
 * (vcvtph2ps) shares the FP add pipes and pays for the scratch; bf16's
 * (a shift) does not: bf16 rms_norm 4096x1024 408 -> 470 us with it
 * (tbench ab, 12 blocks, CI +3% to +27%), layer_norm bf16 gained */
#define NZ_SCR_bf16 0
#define NZ_SCR_f16 1
#define NZ_SCR_SKEW 32
/* whether rms_norm's sums (no scratch: NZ_SCR_<DT> 0) widen a step's 32
 * values by two in-lane unpacks (bf16: vpunpck{l,h}wd with zero, beside
 * the FMAs on this Zen 4, where a vpermw takes an FMA pipe's cycle: the
 * step 8% faster), leaving the accumulators' lanes permuted: lane 4L + i
 * of the first holds element 8L + i, of the second 8L + 4 + i (L < 4,
 * i < 4); nz_end puts them back before any other use (the same sums,
 * lane by lane) */
#define NZ_UNPK_bf16 (!NZ_SCR_bf16)
#define NZ_UNPK_f16 0
static inline void nz_ld_unpk_bf16(const uint16_t *x, int64_t k, __m512 *lo,
                                   __m512 *hi)
{
    const __m512i v = _mm512_loadu_si512(x + k), z = _mm512_setzero_si512();
    *lo = _mm512_castsi512_ps(_mm512_unpacklo_epi16(z, v));
    *hi = _mm512_castsi512_ps(_mm512_unpackhi_epi16(z, v));
}
static inline void nz_ld_unpk_f16(const uint16_t *x, int64_t k, __m512 *lo,
                                  __m512 *hi)
{
    *lo = nb_ld_f16(x, k, 0xffff); /* (not used: NZ_UNPK_f16 0) */
    *hi = nb_ld_f16(x, k + 16, 0xffff);
}
/* the accumulators of nz_ld_unpk's lanes back in element order */
static inline void nz_unpk_fix(__m512 *a)
{
    const __m512i i0 = _mm512_set_epi32(23, 22, 21, 20, 7, 6, 5, 4, 19, 18,
                                        17, 16, 3, 2, 1, 0);
    const __m512i i1 = _mm512_set_epi32(31, 30, 29, 28, 15, 14, 13, 12, 27,
                                        26, 25, 24, 11, 10, 9, 8);
    const __m512 lo = a[0], hi = a[1];
    a[0] = _mm512_permutex2var_ps(lo, i0, hi);
    a[1] = _mm512_permutex2var_ps(lo, i1, hi);
}

#define NZ_ROWS(DT)                                                       \
    /* a row's sums of the 32 elements from k: a[u] += d, q[u] += d^2,  \
     * d = x - c (rms: x; lin: the sums of d too); the widened x to      \
     * sn[k..k+32) where sn is not NULL */                               \
    static inline __attribute__((always_inline)) void nz_step_##DT(      \
        const uint16_t *x, int64_t k, __m512 vc, bool rms, bool lin,      \
        __m512 *a, __m512 *q, float *sn)                                  \
    {                                                                     \
        __m512 x0, x1;                                                    \
        if (NZ_UNPK_##DT && !lin) {                                       \
            nz_ld_unpk_##DT(x, k, &x0, &x1);                              \
        } else {                                                          \
            x0 = nb_ld_##DT(x, k, 0xffff);                                \
            x1 = nb_ld_##DT(x, k + 16, 0xffff);                           \
        }                                                                 \
        if (sn) {                                                         \
            _mm512_store_ps(sn + k, x0);                                  \
            _mm512_store_ps(sn + k + 16, x1);                             \
        }                                                                 \
        const __m512 d0 = NZ_SUB(rms, x0, vc);                            \
        const __m512 d1 = NZ_SUB(rms, x1, vc);                            \
        if (lin) {                                                        \
            a[0] = _mm512_add_ps(a[0], d0);                               \
            a[1] = _mm512_add_ps(a[1], d1);                               \
        }                                                                 \
        q[0] = _mm512_fmadd_ps(d0, d0, q[0]);                             \
        q[1] = _mm512_fmadd_ps(d1, d1, q[1]);                             \
    }                                                                     \
    /* the sums' end from k (past the 32-element steps): the 8-element   \
     * step, the reduction, the scalar tail; *s2 (and *s1 where not     \
     * NULL) */                                                           \
    static inline __attribute__((always_inline)) void nz_end_##DT(       \
        const uint16_t *x, int64_t k, int64_t D, float c, bool rms,       \
        __m512 *a, __m512 *q, float *s1, float *s2)                       \
    {                                                                     \
        const __m512 vc = _mm512_set1_ps(c);                              \
        if (NZ_UNPK_##DT && !s1) /* (nz_step's lin: s1 given) */          \
            nz_unpk_fix(q);                                               \
        for (; k + 8 <= D; k += 8) {                                      \
            const __m512 d = NZ_SUB(rms, nb_ld_##DT(x, k, 0xff), vc);     \
            a[0] = _mm512_mask_add_ps(a[0], 0xff, a[0], d);               \
            q[0] = _mm512_mask3_fmadd_ps(d, d, q[0], 0xff);               \
        }                                                                 \
        float t1 = nz_hsum8(nz_fold(a[0], a[1]));                         \
        float t2 = nz_hsum8(nz_fold(q[0], q[1]));                         \
        for (; k < D; k++) {                                              \
            const float xk = tb_##DT##_to_f32(x[k]);                      \
            t1 += xk - c;                                                 \
            t2 += (xk - c) * (xk - c);                                    \
        }                                                                 \
        if (s1)                                                           \
            *s1 = t1;                                                     \
        *s2 = t2;                                                         \
    }                                                                     \
    /* TB_HALF_NORM_STATS's SUMS (rms: s1 NULL and c 0, folded where     \
     * inlined) */                                                        \
    static inline __attribute__((always_inline)) void nz_sums_##DT(      \
        const uint16_t *x, int64_t D, float c, const char *pf, float *s1, \
        float *s2)                                                        \
    {                                                                     \
        const __m512 z = _mm512_setzero_ps(), vc = _mm512_set1_ps(c);    \
        __m512 a[2] = {z, z}, q[2] = {z, z};                              \
        const bool rms = !s1 && c == 0.0f;                                \
        int64_t k = 0;                                                    \
        (void)pf; /* (none) */                                            \
        for (; k + 32 <= D; k += 32)                                      \
            nz_step_##DT(x, k, vc, rms, s1 != NULL, a, q, NULL);          \
        nz_end_##DT(x, k, D, c, rms, a, q, s1, s2);                       \
    }                                                                     \
    /* y of the lanes of mk from k: ((x - sh) - m) * inv * w (+ b; rms   \
     * (b NULL): x * inv * w + 0, sh and m being 0); x widened from xr,  \
     * or sr's (the row widened by nz_step, full vectors) where sr is    \
     * not NULL */                                                        \
    static inline __attribute__((always_inline)) __m512 nz_yx_##DT(     \
        const uint16_t *xr, const float *sr, const float *w,              \
        const float *b, int64_t k, __mmask16 mk, __m512 vsh, __m512 vmu,  \
        __m512 vinv)                                                      \
    {                                                                     \
        const __m512 x =                                                  \
            sr ? _mm512_load_ps(sr + k) : nb_ld_##DT(xr, k, mk);          \
        const __m512 c = _mm512_mul_ps(                                   \
            b ? _mm512_sub_ps(_mm512_sub_ps(x, vsh), vmu) : x, vinv);     \
        return _mm512_fmadd_ps(c, nb_ld_f32(w, k, mk),                    \
                               b ? nb_ld_f32(b, k, mk)                    \
                                 : _mm512_setzero_ps());                  \
    }                                                                     \
    static inline __attribute__((always_inline)) __m512 nz_y_##DT(      \
        const uint16_t *xr, const float *w, const float *b, int64_t k,    \
        __mmask16 mk, __m512 vsh, __m512 vmu, __m512 vinv)                \
    {                                                                     \
        return nz_yx_##DT(xr, NULL, w, b, k, mk, vsh, vmu, vinv);         \
    }                                                                     \
    static inline __attribute__((always_inline)) void nz_scale_##DT(     \
        const uint16_t *xr, uint16_t *yr, const float *w, const float *b, \
        int64_t k, __mmask16 mk, __m512 vsh, __m512 vmu, __m512 vinv)     \
    {                                                                     \
        nb_st_##DT(yr, k, mk, nz_y_##DT(xr, w, b, k, mk, vsh, vmu, vinv)); \
    }                                                                     \
    /* the scale pass of a row from k (past its 32-element steps) */     \
    static inline __attribute__((always_inline)) void nz_tail_##DT(      \
        const uint16_t *xr, uint16_t *yr, int64_t k, int64_t D,           \
        const float *w, const float *b, float sh, float m, float inv)     \
    {                                                                     \
        const __m512 vsh = _mm512_set1_ps(sh), vmu = _mm512_set1_ps(m);   \
        const __m512 vinv = _mm512_set1_ps(inv);                          \
        for (; k + 16 <= D; k += 16)                                      \
            nz_scale_##DT(xr, yr, w, b, k, 0xffff, vsh, vmu, vinv);       \
        if (k + 8 <= D) {                                                 \
            nz_scale_##DT(xr, yr, w, b, k, 0xff, vsh, vmu, vinv);         \
            k += 8;                                                       \
        }                                                                 \
        for (; k < D; k++)                                                \
            yr[k] = tb_f32_to_##DT((tb_##DT##_to_f32(xr[k]) - sh - m) *   \
                                       inv * w[k] +                       \
                                   (b ? b[k] : 0.0f));                    \
    }                                                                     \
    /* the scale pass's 32 elements at k (nb_st2z_<DT>: zw, when not    \
     * NULL, counts the zero results) */                                  \
    static inline __attribute__((always_inline)) void nz_put2_##DT(      \
        const uint16_t *xr, const float *sr, uint16_t *yr, const float *w, \
        const float *b, int64_t k, __m512 vsh, __m512 vmu, __m512 vinv,   \
        __m512i *zw)                                                      \
    {                                                                     \
        nb_st2z_##DT(yr, k,                                               \
                     nz_yx_##DT(xr, sr, w, b, k, 0xffff, vsh, vmu, vinv), \
                     nz_yx_##DT(xr, sr, w, b, k + 16, 0xffff, vsh, vmu,   \
                                vinv),                                    \
                     zw);                                                 \
    }                                                                     \
    /* row xr's scale pass into yr and, in the same steps, the sums of   \
     * the next row xn about cn (xn NULL: none; inlined for b NULL and   \
     * not: rms_norm's and layer_norm's loops); sr (not NULL): xr's      \
     * 32-element steps widened, read instead of xr; sn (not NULL):     \
     * xn's stored there (both 64-byte aligned) */                        \
    static inline __attribute__((always_inline)) void nz_row_##DT(       \
        const uint16_t *xr, uint16_t *yr, const uint16_t *xn, int64_t D,  \
        const float *w, const float *b,                                   \
        float sh, float m, float inv, float cn, float *s1, float *s2,     \
        const float *sr, float *sn)                                       \
    {                                                                     \
        const __m512 vsh = _mm512_set1_ps(sh), vmu = _mm512_set1_ps(m);   \
        const __m512 vinv = _mm512_set1_ps(inv), vc = _mm512_set1_ps(cn); \
        const __m512 z = _mm512_setzero_ps();                             \
        __m512 a[2] = {z, z}, q[2] = {z, z};                              \
        __m512i zw = _mm512_set1_epi16(-1); /* (NB_ZACC_<DT>) */          \
        int64_t k = 0;                                                    \
        if (xn)                                                           \
            for (; k + 32 <= D; k += 32) {                                \
                nz_step_##DT(xn, k, vc, !b, b != NULL, a, q, sn);         \
                nz_put2_##DT(xr, sr, yr, w, b, k, vsh, vmu, vinv,         \
                             !b ? &zw : NULL);                            \
            }                                                             \
        else                                                              \
            for (; k + 32 <= D; k += 32)                                  \
                nz_put2_##DT(xr, sr, yr, w, b, k, vsh, vmu, vinv,         \
                             !b ? &zw : NULL);                            \
        /* a zero result (or a flushed subnormal one): the steps again,  \
         * each pair by nb_st2_<DT> (rare) */                             \
        if (NB_ZACC_##DT && !b && _mm512_testn_epi16_mask(zw, zw))        \
            for (int64_t j = 0; j < k; j += 32)                           \
                nb_st2_##DT(yr, j,                                        \
                            nz_yx_##DT(xr, sr, w, b, j, 0xffff, vsh, vmu, \
                                       vinv),                             \
                            nz_yx_##DT(xr, sr, w, b, j + 16, 0xffff, vsh, \
                                       vmu, vinv));                       \
        if (xn)                                                           \
            nz_end_##DT(xn, k, D, cn, !b, a, q, b ? s1 : NULL, s2);       \
        nz_tail_##DT(xr, yr, k, D, w, b, sh, m, inv);                     \
    }                                                                     \
    /* The rows: row 0's statistics (TB_HALF_NORM_STATS), then per row r \
     * its scale pass with row r + 1's sums in the same loop (the sums'  \
     * chains, 4 cycles of FMA latency per 32 elements, beside the       \
     * scale's independent work), that row's statistics finished as     \
     * TB_HALF_NORM_STATS finishes them (the same operations). */       \
    static void nz_rows_##DT(const uint16_t *x, uint16_t *y, int64_t rows, \
                             int64_t D, const float *w, const float *b,   \
                             float eps)                                   \
    {                                                                     \
        if (rows <= 0)                                                    \
            return;                                                       \
        float sh, m, ss;                                                  \
        TB_HALF_NORM_STATS(nz_sums_##DT, tb_##DT##_to_f32, x, D, b, NULL, \
                           sh, m, ss);                                    \
        /* two rows widened (D <= NZ_SCR_D), the second NZ_SCR_SKEW     \
         * floats past a 4 KiB multiple: a row's loads and the next's   \
         * stores at k do not alias in 4K */                              \
        _Alignas(64) float scr[2 * NZ_SCR_D + NZ_SCR_SKEW];               \
        float *sb[2] = {NULL, NULL};                                      \
        if (D <= NZ_SCR_D && (NZ_SCR_##DT || b)) {                        \
            sb[0] = scr;                                                  \
            sb[1] = scr + (D + 1023) / 1024 * 1024 + NZ_SCR_SKEW;         \
        }                                                                 \
        for (int64_t r = 0; r < rows; r++) {                              \
            const uint16_t *xr = x + r * D;                               \
            uint16_t *yr = y + r * D;                                     \
            const uint16_t *xn = r + 1 < rows ? xr + D : NULL;            \
            const float *sr = r > 0 ? sb[r & 1] : NULL;                   \
            float *sn = xn ? sb[(r + 1) & 1] : NULL;                      \
            const float inv =                                             \
                1.0f / (float)sqrt((double)(ss / (float)D + eps));        \
            float cn = 0, s1 = 0, s2 = 0;                                 \
            if (xn && b)                                                  \
                TB_HALF_NORM_SHIFT(tb_##DT##_to_f32, xn, D, cn);          \
            if (b)                                                        \
                nz_row_##DT(xr, yr, xn, D, w, b, sh, m, inv, cn, &s1, &s2, \
                            sr, sn);                                      \
            else                                                          \
                nz_row_##DT(xr, yr, xn, D, w, NULL, 0, 0, inv, 0, NULL,   \
                            &s2, sr, sn);                                 \
            if (!xn)                                                      \
                break;                                                    \
            if (!b) {                                                     \
                ss = s2;                                                  \
                continue;                                                 \
            }                                                             \
            sh = cn;                                                      \
            TB_HALF_NORM_FINISH(nz_sums_##DT, xn, D, s1, s2, sh, m, ss);  \
        }                                                                 \
    }
/* layer_norm_backward's and rms_norm_backward's chunk loops (NB_ROWS:
 * nb_bw_<DT> over tb_cpu_norm_bw_job's chunks, DT's loads and stores,
 * w in f32), instantiated by norm_avx512.c (f32, bf16, f16) and
 * norm_avx512bf16.c (bf16 narrowed by vcvtne2ps2bf16); a row's scalars
 * from its sums by one function for every instance (norm_avx512.c), so
 * they round alike. */
/* rows per quad (nb_chunk's unit) and the L1 bytes two quads' x and g
 * may take (fewer rows a quad where a row is longer) */
#define NB_Q 4
#define NB_L1_BYTES 32768
/* whether a quad's x and g are kept widened from its sums' pass for
 * its dx pass (NB_WQ values a quad at most, two quads' on the stack),
 * not widened again: 0 never (f32), 1 layer_norm's, 2 both ops'.  f16:
 * vcvtph2ps and vcvtps2ph take 1.33 cycles each on shared pipes on Zen
 * 4 (scripts/insn_tp.c), the stores into L1 less (512x256
 * layer_norm_backward 38.9 -> 34.6 us, rms_norm_backward 28.0 -> 26.3);
 * bf16's widening is one vpermw: layer_norm 34.5 -> 33.6, rms_norm
 * 25.3 -> 27.8 (tbench ab, load ~11), so layer_norm's only */
#define NB_WQ 1024
#define NB_WID_f32 0
#define NB_WID_bf16 1
#define NB_WID_f16 2
/* a quad's rows' scalars, lane i row i: the shift c, the mean m of x -
 * c, rstd, and with a = mean(gh) (0 for rms_norm) and b = mean(gh xh):
 * q = rstd (rstd b) and na = -(rstd a), so that dx = rstd (gh - a - xh
 * b) = (g rstd) w - q (x - c - m) + na and dw += (g rstd) (x - c - m):
 * 4 multiplies or FMAs a vector (nb_qdx), where the form as written
 * takes 5 */
typedef struct {
    float c[NB_Q], m[NB_Q], rstd[NB_Q], q[NB_Q], na[NB_Q];
} nb_grp;
/* o's m, rstd, q, na from each row's sums t[i] = {sum d, sum d^2, sum gh,
 * sum gh d} (d = x - c; rms: c = 0 and no sums of d and gh), all NB_Q
 * lanes (the unused lanes' t zero); returns the lanes whose sums lost
 * more than 2 bits (again set, layer_norm: m s1 > 3/4 s2), to be summed
 * again about c + m (tb_cpu_nb_shift) and finished with again unset.
 * One function for every instance, so their rows round alike. */
unsigned tb_cpu_nb_finish4(bool rms, float inv_n, float eps,
                           const float (*t)[4], bool again, nb_grp *o);
float tb_cpu_nb_shift(float c, float m);
/* the sums of four vectors' lanes: {sum a, sum b, sum c, sum d} */
static inline __m128 nb_hsum4(__m512 a, __m512 b, __m512 c, __m512 d)
{
#define NB_HALVES(v)                                                      \
    _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1))
    const __m256 p = _mm256_hadd_ps(NB_HALVES(a), NB_HALVES(b));
    const __m256 q = _mm256_hadd_ps(NB_HALVES(c), NB_HALVES(d));
#undef NB_HALVES
    const __m256 r = _mm256_hadd_ps(p, q);
    return _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps(r, 1));
}
static inline __mmask16 nb_mask(int64_t D, int64_t k)
{
    return D - k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (D - k)) - 1);
}

/* The loops are bound by Zen 4's one 512-bit load a cycle (a broadcast
 * from memory counts as one, a store takes two cycles): a quad of rows
 * goes column by column, w loaded once for its rows, each row's scalars
 * in registers, dw and db in registers across the quad; per vector 2.25
 * loads for the sums and 2.75 for dx and 1.5 stores.  The quads are
 * pipelined: quad j's sums, its scalars, then quad j - 1's dx, so that
 * the scalars' latency (sums folded, a square root, a division) runs
 * beside the next quad's loop. */
/* NB_KB(DT, pass p1 or p2, rms, n, k): a mark at the start of the step
 * at k of the quad's loops, which scripts/kernel_bounds_half.c defines to
 * price a step with llvm-mca; nothing in the rows */
#ifndef NB_KB
#define NB_KB(DT, P, rms, n, k) ((void)0)
#endif
#define NB_ROWS(DT, ES)                                                     \
    /* lanes mk from k of the quad's n rows' sums (row i at xr + i D,   \
     * gr + i D; rms: c = 0, no sums of d and gh) */                    \
    static inline __attribute__((always_inline)) void nb_qstep_##DT(     \
        bool rms, const char *xr, const char *gr, const float *w,         \
        int64_t D, int n, int64_t k, __mmask16 mk, const __m512 *vc,      \
        __m512 *a1, __m512 *a2, __m512 *ag, __m512 *ad, float *sx,        \
        float *sg)                                                        \
    {                                                                     \
        const __m512 wv = nb_ld_f32(w, k, mk);                            \
        for (int i = 0; i < n; i++) {                                     \
            const int64_t o = i * D * ES;                                 \
            const __m512 x = nb_ld_##DT(xr + o, k, mk);                   \
            const __m512 gw = nb_ld_##DT(gr + o, k, mk);                  \
            if (sx) {                                                     \
                nb_st_f32(sx + i * D, k, mk, x);                          \
                nb_st_f32(sg + i * D, k, mk, gw);                         \
            }                                                             \
            const __m512 d = rms            ? x                           \
                             : mk == 0xffff ? _mm512_sub_ps(x, vc[i])     \
                                            : _mm512_maskz_sub_ps(mk, x, vc[i]); \
            const __m512 gh = _mm512_mul_ps(gw, wv);                      \
            if (!rms) {                                                   \
                a1[i] = _mm512_add_ps(a1[i], d);                          \
                ag[i] = _mm512_add_ps(ag[i], gh);                         \
            }                                                             \
            a2[i] = _mm512_fmadd_ps(d, d, a2[i]);                         \
            ad[i] = _mm512_fmadd_ps(gh, d, ad[i]);                        \
        }                                                                 \
    }                                                                     \
    /* the quad's sums about c[i]: t[i] = {sum d, sum d^2, sum gh, sum   \
     * gh d} (n a constant where inlined: the rows' accumulators in      \
     * registers) */                                                      \
    static inline __attribute__((always_inline)) void nb_qsumsn_##DT(    \
        bool rms, const char *xr, const char *gr, const float *w,         \
        int64_t D, int n, const float *c, float (*t)[4], float *sx,       \
        float *sg)                                                        \
    {                                                                     \
        const __m512 z = _mm512_setzero_ps();                             \
        __m512 vc[NB_Q], a1[NB_Q], a2[NB_Q], ag[NB_Q], ad[NB_Q];          \
        for (int i = 0; i < NB_Q; i++) {                                  \
            vc[i] = _mm512_set1_ps(c[i]);                                 \
            a1[i] = a2[i] = ag[i] = ad[i] = z;                            \
        }                                                                 \
        int64_t k = 0;                                                    \
        for (; k + 16 <= D; k += 16) {                                    \
            NB_KB(DT, p1, rms, n, k);                                    \
            nb_qstep_##DT(rms, xr, gr, w, D, n, k, 0xffff, vc, a1, a2, ag, \
                          ad, sx, sg);                                    \
        }                                                                 \
        if (k < D)                                                        \
            nb_qstep_##DT(rms, xr, gr, w, D, n, k, nb_mask(D, k), vc, a1, \
                          a2, ag, ad, sx, sg);                            \
        for (int i = 0; i < n; i++)                                       \
            _mm_storeu_ps(t[i], nb_hsum4(a1[i], a2[i], ag[i], ad[i]));    \
    }                                                                     \
    static inline __attribute__((always_inline)) void nb_qsums_##DT(     \
        bool rms, const char *xr, const char *gr, const float *w,         \
        int64_t D, int n, const float *c, float (*t)[4], float *sx,       \
        float *sg)                                                        \
    {                                                                     \
        switch (n) {                                                      \
        case 4: nb_qsumsn_##DT(rms, xr, gr, w, D, 4, c, t, sx, sg); break; \
        case 3: nb_qsumsn_##DT(rms, xr, gr, w, D, 3, c, t, sx, sg); break; \
        case 2: nb_qsumsn_##DT(rms, xr, gr, w, D, 2, c, t, sx, sg); break; \
        default: nb_qsumsn_##DT(rms, xr, gr, w, D, 1, c, t, sx, sg); break; \
        }                                                                 \
    }                                                                     \
    /* lanes mk of dx from k of the quad's n rows (nb_grp's form, its    \
     * scalars in registers) and of the chunk's dw and db there: per row  \
     * dx, dw += g xh and db += g in registers (rows in order), stored  \
     * once (first: the chunk's first quad, from 0) */                    \
    static inline __attribute__((always_inline)) void nb_qdxs_##DT(      \
        bool rms, const char *xr, const char *gr, const float *w,         \
        char *dr, int64_t D, int n, int64_t k, __mmask16 mk,              \
        const __m512 *vc, const __m512 *vm, const __m512 *vr,             \
        const __m512 *vq, const __m512 *vna, bool first, float *pw,       \
        float *pb, const float *sx, const float *sg)                      \
    {                                                                     \
        const __m512 wv = nb_ld_f32(w, k, mk);                            \
        __m512 dw = first ? _mm512_setzero_ps() : nb_ld_f32(pw, k, mk);   \
        __m512 db = first || rms ? _mm512_setzero_ps()                    \
                                 : nb_ld_f32(pb, k, mk);                  \
        __m512 dv[NB_Q];                                                  \
        for (int i = 0; i < n; i++) {                                     \
            const int64_t o = i * D * ES;                                 \
            const __m512 xv = sx ? nb_ld_f32(sx + i * D, k, mk)           \
                                 : nb_ld_##DT(xr + o, k, mk);             \
            const __m512 gv = sx ? nb_ld_f32(sg + i * D, k, mk)           \
                                 : nb_ld_##DT(gr + o, k, mk);             \
            const __m512 dm =                                             \
                rms ? xv : _mm512_sub_ps(_mm512_sub_ps(xv, vc[i]), vm[i]); \
            const __m512 gr_ = _mm512_mul_ps(gv, vr[i]);                  \
            const __m512 u = _mm512_fnmadd_ps(dm, vq[i], vna[i]);         \
            dv[i] = _mm512_fmadd_ps(gr_, wv, u);                          \
            if (!NB_PAIR_##DT)                                            \
                nb_st_##DT(dr + o, k, mk, dv[i]);                         \
            dw = _mm512_fmadd_ps(gr_, dm, dw);                            \
            if (!rms)                                                     \
                db = _mm512_add_ps(db, gv);                               \
        }                                                                 \
        /* dx stored after the step's loads, rows in pairs where whole */ \
        int i0 = NB_PAIR_##DT ? 0 : n;                                    \
        if (mk == 0xffff)                                                 \
            for (; i0 + 1 < n; i0 += 2)                                   \
                nb_st2r_##DT(dr + i0 * D * ES, dr + (i0 + 1) * D * ES, k, \
                             dv[i0], dv[i0 + 1]);                         \
        for (; i0 < n; i0++)                                              \
            nb_st_##DT(dr + i0 * D * ES, k, mk, dv[i0]);                  \
        nb_st_f32(pw, k, mk, dw);                                         \
        if (!rms)                                                         \
            nb_st_f32(pb, k, mk, db);                                     \
    }                                                                     \
    static inline __attribute__((always_inline)) void nb_qdxn_##DT(      \
        bool rms, const char *xr, const char *gr, const float *w,         \
        char *dr, int64_t D, int n, const nb_grp *s, bool first,          \
        float *pw, float *pb, const float *sx, const float *sg)           \
    {                                                                     \
        __m512 vc[NB_Q], vm[NB_Q], vr[NB_Q], vq[NB_Q], vna[NB_Q];         \
        for (int i = 0; i < NB_Q; i++) {                                  \
            vc[i] = _mm512_set1_ps(s->c[i]);                              \
            vm[i] = _mm512_set1_ps(s->m[i]);                              \
            vr[i] = _mm512_set1_ps(s->rstd[i]);                           \
            vq[i] = _mm512_set1_ps(s->q[i]);                              \
            vna[i] = rms ? _mm512_set1_ps(-0.0f) : _mm512_set1_ps(s->na[i]); \
        }                                                                 \
        int64_t k = 0;                                                    \
        for (; k + 16 <= D; k += 16) {                                    \
            NB_KB(DT, p2, rms, n, k);                                    \
            nb_qdxs_##DT(rms, xr, gr, w, dr, D, n, k, 0xffff, vc, vm, vr, \
                         vq, vna, first, pw, pb, sx, sg);                 \
        }                                                                 \
        if (k < D)                                                        \
            nb_qdxs_##DT(rms, xr, gr, w, dr, D, n, k, nb_mask(D, k), vc,  \
                         vm, vr, vq, vna, first, pw, pb, sx, sg);         \
    }                                                                     \
    static inline __attribute__((always_inline)) void nb_qdx_##DT(       \
        bool rms, const char *xr, const char *gr, const float *w,         \
        char *dr, int64_t D, int n, const nb_grp *s, bool first,          \
        float *pw, float *pb, const float *sx, const float *sg)           \
    {                                                                     \
        switch (n) {                                                      \
        case 4: nb_qdxn_##DT(rms, xr, gr, w, dr, D, 4, s, first, pw, pb, sx, sg); break; \
        case 3: nb_qdxn_##DT(rms, xr, gr, w, dr, D, 3, s, first, pw, pb, sx, sg); break; \
        case 2: nb_qdxn_##DT(rms, xr, gr, w, dr, D, 2, s, first, pw, pb, sx, sg); break; \
        default: nb_qdxn_##DT(rms, xr, gr, w, dr, D, 1, s, first, pw, pb, sx, sg); break; \
        }                                                                 \
    }                                                                     \
    /* the quad at row r0 of n rows: its shifts (the mean of each row's  \
     * first 8 values; 0 for rms_norm), sums and scalars into s */       \
    static inline __attribute__((always_inline)) void nb_qstats_##DT(    \
        bool rms, const char *xr, const char *gr, const float *w,         \
        int64_t D, int n, float inv_n, float eps, nb_grp *s, float *sx,   \
        float *sg)                                                        \
    {                                                                     \
        float t[NB_Q][4] = {{0}};                                         \
        for (int i = 0; i < NB_Q; i++) {                                  \
            const char *x = xr + i * D * ES;                              \
            float cn = 0;                                                 \
            if (rms || i >= n) {                                          \
            } else if (D >= 8) {                                          \
                cn = nz_hsum8(_mm512_castps512_ps256(                     \
                         nb_ld_##DT(x, 0, 0xff))) * 0.125f;               \
            } else {                                                      \
                for (int64_t k = 0; k < D; k++)                           \
                    cn += nb_get_##DT(x, k);                              \
                cn /= (float)D;                                           \
            }                                                             \
            s->c[i] = cn;                                                 \
        }                                                                 \
        nb_qsums_##DT(rms, xr, gr, w, D, n, s->c, t, sx, sg);             \
        const unsigned redo =                                             \
            tb_cpu_nb_finish4(rms, inv_n, eps, t, true, s) &              \
            ((1u << n) - 1);                                              \
        if (redo) { /* (rare) */                                          \
            for (int i = 0; i < n; i++)                                   \
                if (redo >> i & 1) {                                      \
                    float c1[NB_Q] = {0};                                 \
                    c1[0] = s->c[i] = tb_cpu_nb_shift(s->c[i], t[i][0] * inv_n); \
                    nb_qsums_##DT(rms, xr + i * D * ES, gr + i * D * ES,  \
                                  w, D, 1, c1, &t[i], NULL, NULL);        \
                }                                                         \
            tb_cpu_nb_finish4(rms, inv_n, eps, t, false, s);              \
        }                                                                 \
    }                                                                     \
    /* chunk ch's rows by quads of up to NB_Q (nq: two quads' x and g in \
     * NB_L1_BYTES): quad j's statistics, then quad j - 1's dx, dw, db */ \
    static inline __attribute__((always_inline)) void nb_chunk_##DT(     \
        const tb_cpu_norm_bw_job *j, bool rms, int64_t ch)                \
    {                                                                     \
        const char *g = j->in[0].data, *x = j->in[1].data;                \
        const float *w = j->w32; /* (f32: w itself) */                    \
        char *dx = j->out[0].data;                                        \
        const int64_t D = j->D, row = D * ES;                             \
        const float inv_n = 1.0f / (float)D, eps = (float)j->eps;         \
        float *pw = (float *)j->part + ch * j->np * D;                    \
        float *pb = rms ? NULL : pw + D;                                  \
        const int64_t r0 = ch * j->rows / j->nch;                         \
        const int64_t r1 = (ch + 1) * j->rows / j->nch;                   \
        int64_t nq = NB_L1_BYTES / (4 * row);                             \
        nq = nq < 1 ? 1 : nq > NB_Q ? NB_Q : nq;                          \
        nb_grp s[2];                                                      \
        /* the quads' x and g widened by their sums' pass for their dx   \
         * pass (NB_WID_<DT>; two quads of NB_WQ floats each) */          \
        _Alignas(64) float sw[2][2][NB_WID_##DT ? NB_WQ : 1];             \
        const bool wid = NB_WID_##DT > (rms ? 1 : 0) && nq * D <= NB_WQ; \
        int64_t rp = -1; /* the previous quad's first row */              \
        int np = 0, cur = 0;                                              \
        for (int64_t r = r0;; r += nq) {                                  \
            const int n = (int)(r1 - r < nq ? r1 - r : nq);               \
            if (n > 0)                                                    \
                nb_qstats_##DT(rms, x + r * row, g + r * row, w, D, n,    \
                               inv_n, eps, &s[cur],                       \
                               wid ? sw[cur & 1][0] : NULL,               \
                               wid ? sw[cur & 1][1] : NULL);              \
            if (rp >= 0)                                                  \
                nb_qdx_##DT(rms, x + rp * row, g + rp * row, w,           \
                            dx + rp * row, D, np, &s[cur ^ 1], rp == r0,  \
                            pw, pb, wid ? sw[(cur ^ 1) & 1][0] : NULL,    \
                            wid ? sw[(cur ^ 1) & 1][1] : NULL);           \
            if (n <= 0)                                                   \
                break;                                                    \
            rp = r, np = n, cur ^= 1;                                     \
        }                                                                 \
    }                                                                     \
    static void nb_bw_##DT(void *arg, int part, int nparts)               \
    {                                                                     \
        const tb_cpu_norm_bw_job *j = arg;                                \
        int64_t c0, c1;                                                   \
        tb_cpu_span(j->nch, 1, part, nparts, &c0, &c1);                   \
        for (int64_t ch = c0; ch < c1; ch++)                              \
            if (j->np == 1)                                               \
                nb_chunk_##DT(j, true, ch);                               \
            else                                                          \
                nb_chunk_##DT(j, false, ch);                              \
    }

#endif
