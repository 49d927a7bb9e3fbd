/* half_part_simd.h's column sums at the avx512 level (16 f32 lanes; f16
 * widened by vcvtph2ps, bf16 by a zero extension and a shift). */
#include <immintrin.h>

#define HP_L 16
#define HP_SFX avx512
typedef __m512 hp_v;
#define HP_ZERO _mm512_setzero_ps()
#define HP_ADD _mm512_add_ps
#define HP_STORE _mm512_storeu_ps
#define HP_LD_F16(p)                                                      \
    _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define HP_LD_BF16(p)                                                     \
    _mm512_castsi512_ps(_mm512_slli_epi32(                                \
        _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))),  \
        16))
#include "half_part_simd.h"
