/* The SIMD levels' optimizer-step loops, written once for optim_avx2.c
 * and optim_avx512.c (each built with only its level's -m flags; see
 * meson.build): the template of optim_simd.h over 256-bit vectors (8 f32
 * / 4 f64 lanes) under AVX2's flags, 512-bit (16 / 8) under AVX-512's,
 * and the level's entry points tb_optim_f32_<level>,
 * tb_optim_f64_<level> and the mixed-precision form's
 * tb_optim_bf16_<level> and tb_optim_f16_<level> (16-bit p and g, f32
 * state, the f32 loop's arithmetic).  optim.c finishes the tail of each part with its
 * portable loop, so no masked accesses are needed here. */
#ifndef TB_BACKENDS_CPU_OPTIM_SIMD_IMPL_H
#define TB_BACKENDS_CPU_OPTIM_SIMD_IMPL_H

#include <immintrin.h>
#include <stdint.h>

#include "optim_simd.h"

#ifdef __AVX512F__
typedef __m512 opt_vs;
typedef __m512d opt_vd;
#define OPT_I(name) _mm512_##name
#define OPT_ENTRY(dt) tb_optim_##dt##_avx512
/* |x|: clear the sign bit. */
static inline opt_vs abs_ps(opt_vs x) { return _mm512_abs_ps(x); }
static inline opt_vd abs_pd(opt_vd x) { return _mm512_abs_pd(x); }
#else
typedef __m256 opt_vs;
typedef __m256d opt_vd;
#define OPT_I(name) _mm256_##name
#define OPT_ENTRY(dt) tb_optim_##dt##_avx2
/* |x|: clear the sign bit. */
static inline opt_vs abs_ps(opt_vs x)
{
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
}
static inline opt_vd abs_pd(opt_vd x)
{
    return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
}
#endif

static inline opt_vs sqrt_ps(opt_vs x) { return OPT_I(sqrt_ps)(x); }
static inline opt_vd sqrt_pd(opt_vd x) { return OPT_I(sqrt_pd)(x); }
static inline opt_vs fma_ps(opt_vs a, opt_vs b, opt_vs c)
{
    return OPT_I(fmadd_ps)(a, b, c);
}
static inline opt_vd fma_pd(opt_vd a, opt_vd b, opt_vd c)
{
    return OPT_I(fmadd_pd)(a, b, c);
}
/* a > b ? a : b per lane (b where either is NaN). */
static inline opt_vs max_ps(opt_vs a, opt_vs b)
{
    return OPT_I(max_ps)(a, b);
}
static inline opt_vd max_pd(opt_vd a, opt_vd b)
{
    return OPT_I(max_pd)(a, b);
}
/* a < b ? a : b per lane (b where either is NaN). */
static inline opt_vs min_ps(opt_vs a, opt_vs b)
{
    return OPT_I(min_ps)(a, b);
}
static inline opt_vd min_pd(opt_vd a, opt_vd b)
{
    return OPT_I(min_pd)(a, b);
}

/* A scalar second operand of OPT_FMA is broadcast ((vt){0} + b). */
#define OPT_SQRT(x) sqrt_ps(x)
#define OPT_FMA(a, b, c) fma_ps((a), (opt_vs){0} + (b), (c))
#define OPT_MAX(a, b) max_ps((a), (b))
#define OPT_MIN(a, b) min_ps((a), (b))
#define OPT_ABS(x) abs_ps(x)
#define OPT_ET float
#define OPT_VT opt_vs
#define OPT_NAME loops_f32
#include "optim_simd.h"

/* The mixed-precision form: 16-bit p and g widened exactly, p rounded
 * once as ops/half.h's tb_f32_to_bf16 / tb_f32_to_f16 round it (nearest
 * even, NaN kept quiet, overflow to infinity), lane for lane. */
#define OPT_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#ifdef __AVX512F__
static inline opt_vs ldh_bf16(const uint16_t *p)
{
    __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(h, 16));
}
static inline void sth_bf16(uint16_t *p, opt_vs v)
{
    const __m512i x = _mm512_castps_si512(v), hi = _mm512_srli_epi32(x, 16);
    const __m512i bias = _mm512_add_epi32(
        _mm512_and_si512(hi, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x7fff));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(x, bias), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, hi, _mm512_set1_epi32(0x40));
    _mm256_storeu_si256((void *)p, _mm512_cvtepi32_epi16(r));
}
static inline opt_vs ldh_f16(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const void *)p));
}
static inline void sth_f16(uint16_t *p, opt_vs v)
{
    _mm256_storeu_si256((void *)p, _mm512_cvtps_ph(v, OPT_RNE));
}
#else
static inline opt_vs ldh_bf16(const uint16_t *p)
{
    __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const void *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}
static inline void sth_bf16(uint16_t *p, opt_vs v)
{
    const __m256i x = _mm256_castps_si256(v), hi = _mm256_srli_epi32(x, 16);
    const __m256i bias = _mm256_add_epi32(
        _mm256_and_si256(hi, _mm256_set1_epi32(1)), _mm256_set1_epi32(0x7fff));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(x, bias), 16);
    const __m256i nan =
        _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)),
                           nan);
    /* lanes 0-3 and 4-7 packed within each 128-bit half, then joined */
    r = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xd8);
    _mm_storeu_si128((void *)p, _mm256_castsi256_si128(r));
}
static inline opt_vs ldh_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const void *)p));
}
static inline void sth_f16(uint16_t *p, opt_vs v)
{
    _mm_storeu_si128((void *)p, _mm256_cvtps_ph(v, OPT_RNE));
}
#endif

#define OPT_ET float
#define OPT_VT opt_vs
#define OPT_HT uint16_t
#define OPT_LDH(x, ptr, i) ((x) = ldh_bf16((ptr) + (i)))
#define OPT_STH(ptr, i, x) sth_bf16((ptr) + (i), (x))
#define OPT_NAME loops_bf16
#include "optim_simd.h"
#define OPT_ET float
#define OPT_VT opt_vs
#define OPT_HT uint16_t
#define OPT_LDH(x, ptr, i) ((x) = ldh_f16((ptr) + (i)))
#define OPT_STH(ptr, i, x) sth_f16((ptr) + (i), (x))
#define OPT_NAME loops_f16
#include "optim_simd.h"
#undef OPT_SQRT
#undef OPT_FMA
#undef OPT_MAX
#undef OPT_MIN
#undef OPT_ABS

#define OPT_SQRT(x) sqrt_pd(x)
#define OPT_FMA(a, b, c) fma_pd((a), (opt_vd){0} + (b), (c))
#define OPT_MAX(a, b) max_pd((a), (b))
#define OPT_MIN(a, b) min_pd((a), (b))
#define OPT_ABS(x) abs_pd(x)
#define OPT_ET double
#define OPT_VT opt_vd
#define OPT_NAME loops_f64
#include "optim_simd.h"

int64_t OPT_ENTRY(f32)(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f32(j, b, e);
}

int64_t OPT_ENTRY(f64)(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f64(j, b, e);
}

int64_t OPT_ENTRY(bf16)(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_bf16(j, b, e);
}

int64_t OPT_ENTRY(f16)(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f16(j, b, e);
}

#endif
