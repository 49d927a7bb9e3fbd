/* The optimizers' mixed-precision form at the SIMD levels (16-bit p and
 * g, f32 state): one vector of f32 lanes (oh_v: 16 at AVX-512, 8 at
 * AVX2) loaded from 16-bit values and stored rounded to them, for the
 * element-wise steps (optim_simd_impl.h) and lamb (optim_red_simd.h).
 * Built only with a SIMD level's flags (AVX2 + F16C, or AVX-512 F/BW). */
#ifndef TB_BACKENDS_CPU_OPTIM_HALF_SIMD_H
#define TB_BACKENDS_CPU_OPTIM_HALF_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#ifdef __AVX512F__
typedef __m512 oh_v;
#else
typedef __m256 oh_v;
#endif

/* The mixed-precision form: 16-bit p and g widened exactly, p rounded
 * once as ops/half.h's tb_f32_to_bf16 / tb_f32_to_f16 round it (nearest
 * even, NaN kept quiet, overflow to infinity), lane for lane. */
#define OH_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#ifdef __AVX512F__
static inline oh_v oh_ld_bf16(const uint16_t *p)
{
    __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(h, 16));
}
static inline void oh_st_bf16(uint16_t *p, oh_v v)
{
    const __m512i x = _mm512_castps_si512(v), hi = _mm512_srli_epi32(x, 16);
    const __m512i bias = _mm512_add_epi32(
        _mm512_and_si512(hi, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x7fff));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(x, bias), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, hi, _mm512_set1_epi32(0x40));
    _mm256_storeu_si256((void *)p, _mm512_cvtepi32_epi16(r));
}
static inline oh_v oh_ld_f16(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const void *)p));
}
static inline void oh_st_f16(uint16_t *p, oh_v v)
{
    _mm256_storeu_si256((void *)p, _mm512_cvtps_ph(v, OH_RNE));
}
#else
static inline oh_v oh_ld_bf16(const uint16_t *p)
{
    __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const void *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}
static inline void oh_st_bf16(uint16_t *p, oh_v v)
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
static inline oh_v oh_ld_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const void *)p));
}
static inline void oh_st_f16(uint16_t *p, oh_v v)
{
    _mm_storeu_si128((void *)p, _mm256_cvtps_ph(v, OH_RNE));
}
#endif

#endif /* TB_BACKENDS_CPU_OPTIM_HALF_SIMD_H */
