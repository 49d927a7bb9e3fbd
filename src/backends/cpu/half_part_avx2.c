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
#define HP_STORE _mm256_storeu_ps
#define HP_LD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define HP_LD_BF16(p)                                                     \
    _mm256_castsi256_ps(_mm256_slli_epi32(                                \
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#include "half_part_simd.h"
#include "half_norm_simd.h" /* layer_norm, rms_norm fused (this level only) */
