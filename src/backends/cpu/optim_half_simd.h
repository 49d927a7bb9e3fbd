/* The optimizers' mixed-precision form at the SIMD levels (16-bit p and
 * g, f32 state): one vector of f32 lanes (oh_v: 16 at AVX-512, 8 at
 * AVX2) loaded from 16-bit values and stored rounded to them, for the
 * element-wise steps (optim_simd_impl.h) and lamb (optim_red_simd.h).
 * Built only with a SIMD level's flags (AVX2 + F16C, or AVX-512 F/BW). */
#ifndef TB_BACKENDS_CPU_OPTIM_HALF_SIMD_H
#define TB_BACKENDS_CPU_OPTIM_HALF_SIMD_H

#include <immintrin.h>
#include <stdint.h>

/* The level's vector of f32 lanes (oh_v), of as many 32-bit integers
 * (oh_i) and of as many 16-bit values (oh_h), with the few operations
 * that differ between the levels. */
#define OH_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#ifdef __AVX512F__
typedef __m512 oh_v;
typedef __m512i oh_i;
typedef __m256i oh_h;
#define OH_I(name) _mm512_##name
#define OH_SI(name) _mm512_##name##_si512
#define OH_H(name) _mm256_##name##_si256
#define OH_TO_F _mm512_castsi512_ps
#define OH_TO_I _mm512_castps_si512
/* r where v is a number, else a where v is NaN */
static inline oh_i oh_nan_sel(oh_v v, oh_i r, oh_i a)
{
    return _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                                   r, a);
}
/* the low 16 bits of each lane (every lane < 2^16) */
static inline oh_h oh_pack(oh_i r) { return _mm512_cvtepi32_epi16(r); }
#else
typedef __m256 oh_v;
typedef __m256i oh_i;
typedef __m128i oh_h;
#define OH_I(name) _mm256_##name
#define OH_SI(name) _mm256_##name##_si256
#define OH_H(name) _mm_##name##_si128
#define OH_TO_F _mm256_castsi256_ps
#define OH_TO_I _mm256_castps_si256
static inline oh_i oh_nan_sel(oh_v v, oh_i r, oh_i a)
{
    return _mm256_blendv_epi8(
        r, a, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}
/* lanes 0-3 and 4-7 packed within each 128-bit half, then joined */
static inline oh_h oh_pack(oh_i r)
{
    r = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xd8);
    return _mm256_castsi256_si128(r);
}
#endif

/* 16-bit p and g widened exactly; p rounded once as ops/half.h's
 * tb_f32_to_bf16 / tb_f32_to_f16 round it (nearest even, NaN kept
 * quiet, overflow to infinity), lane for lane. */
static inline oh_v oh_ld_bf16(const uint16_t *p)
{
    const oh_i h = OH_I(cvtepu16_epi32)(OH_H(loadu)((const void *)p));
    return OH_TO_F(OH_I(slli_epi32)(h, 16));
}
/* integer code: the 16 bits dropped rounded to nearest even, a NaN's
 * upper half with its quiet bit set */
static inline void oh_st_bf16_int(uint16_t *p, oh_v v)
{
    const oh_i x = OH_TO_I(v), hi = OH_I(srli_epi32)(x, 16);
    const oh_i bias = OH_I(add_epi32)(OH_SI(and)(hi, OH_I(set1_epi32)(1)),
                                      OH_I(set1_epi32)(0x7fff));
    const oh_i r = OH_I(srli_epi32)(OH_I(add_epi32)(x, bias), 16);
    const oh_i q = OH_SI(or)(hi, OH_I(set1_epi32)(0x40));
    OH_H(storeu)((void *)p, oh_pack(oh_nan_sel(v, r, q)));
}
#ifdef __AVX512BF16__
/* The avx512bf16 level (optim_avx512bf16.c): vcvtneps2bf16 rounds to
 * nearest even and keeps a NaN quiet in its upper half as the integer
 * code does, but reads a subnormal f32 as a zero of its sign: a vector
 * with a subnormal lane (vfpclassps; rare) takes the integer code, so
 * the bits are tb_f32_to_bf16's at every level.  (sgd bf16 at 1M, 1
 * thread: the integer code's dozen operations a vector were the step's
 * limit.) */
static inline void oh_st_bf16(uint16_t *p, oh_v v)
{
    if (_mm512_fpclass_ps_mask(v, 0x20))
        oh_st_bf16_int(p, v);
    else
        _mm256_storeu_si256((void *)p, (__m256i)_mm512_cvtneps_pbh(v));
}
#else
static inline void oh_st_bf16(uint16_t *p, oh_v v) { oh_st_bf16_int(p, v); }
#endif
static inline oh_v oh_ld_f16(const uint16_t *p)
{
    return OH_I(cvtph_ps)(OH_H(loadu)((const void *)p));
}
static inline void oh_st_f16(uint16_t *p, oh_v v)
{
    OH_H(storeu)((void *)p, OH_I(cvtps_ph)(v, OH_RNE));
}

#endif /* TB_BACKENDS_CPU_OPTIM_HALF_SIMD_H */
