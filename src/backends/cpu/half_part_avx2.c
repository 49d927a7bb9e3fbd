/* half_part_simd.h's column sums at the avx2 level (8 f32 lanes; f16
 * widened by F16C's vcvtph2ps, bf16 by a zero extension and a shift),
 * and half_norm_simd.h's fused layer_norm and rms_norm (this level's
 * build serves the avx512 level too: both run norm_avx2.c's f32 row). */
#include <immintrin.h>

#define HP_L 8
#define HP_SFX avx2
typedef __m256 hp_v;
#define HP_ZERO _mm256_setzero_ps()
#define HP_ADD _mm256_add_ps
typedef __m256i hp_i;
#define HP_SET1 _mm256_set1_ps
#define HP_SET1I _mm256_set1_epi32
#define HP_FMA _mm256_fmadd_ps
#define HP_CASTF _mm256_castsi256_ps
#define HP_SLLI16(v) _mm256_slli_epi32(v, 16)
#define HP_ANDI _mm256_and_si256
#define HP_LDI(p) _mm256_loadu_si256((const void *)(p))
#define HP_STORE _mm256_storeu_ps
#define HP_LDU _mm256_loadu_ps
#define HP_SUB _mm256_sub_ps
#define HP_MUL _mm256_mul_ps
#define HP_DIV _mm256_div_ps
#define HP_XOR _mm256_xor_ps
#define HP_LD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define HP_LD_BF16(p)                                                     \
    _mm256_castsi256_ps(_mm256_slli_epi32(                                \
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define HP_LDD _mm256_loadu_pd
#define HP_STD _mm256_storeu_pd
#define HP_ADDD _mm256_add_pd
#define HP_LOPD(s) _mm256_cvtps_pd(_mm256_castps256_ps128(s))
#define HP_HIPD(s) _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1))
/* columns 0-7 (c0) and 8-15 (c1) from e (lane i: column 2i) and o
 * (2i + 1) */
static inline void hp_eo(__m256 e, __m256 o, __m256 *c0, __m256 *c1)
{
    const __m256 lo = _mm256_unpacklo_ps(e, o); /* columns 0-3, 8-11 */
    const __m256 hi = _mm256_unpackhi_ps(e, o); /* 4-7, 12-15 */
    *c0 = _mm256_permute2f128_ps(lo, hi, 0x20);
    *c1 = _mm256_permute2f128_ps(lo, hi, 0x31);
}
#include "half_part_simd.h"
#include "half_norm_simd.h" /* layer_norm, rms_norm fused (this level only) */
#include "half_part_short.h" /* short-row sum, mean, max, min */
