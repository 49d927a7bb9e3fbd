/* half_part_simd.h's column sums at the avx512 level (16 f32 lanes; f16
 * widened by vcvtph2ps, bf16 by a zero extension and a shift). */
#include <immintrin.h>

#define HP_L 16
#define HP_SFX avx512
typedef __m512 hp_v;
#define HP_ZERO _mm512_setzero_ps()
#define HP_ADD _mm512_add_ps
typedef __m512i hp_i;
#define HP_SET1 _mm512_set1_ps
#define HP_SET1I _mm512_set1_epi32
#define HP_FMA _mm512_fmadd_ps
#define HP_CASTF _mm512_castsi512_ps
#define HP_SLLI16(v) _mm512_slli_epi32(v, 16)
#define HP_ANDI _mm512_and_si512
#define HP_LDI(p) _mm512_loadu_si512((const void *)(p))
#define HP_STORE _mm512_storeu_ps
#define HP_LDU _mm512_loadu_ps
#define HP_SUB _mm512_sub_ps
#define HP_MUL _mm512_mul_ps
#define HP_DIV _mm512_div_ps
#define HP_XOR _mm512_xor_ps
#define HP_LD_F16(p)                                                      \
    _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define HP_LD_BF16(p)                                                     \
    _mm512_castsi512_ps(_mm512_slli_epi32(                                \
        _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))),  \
        16))
/* f16's wide passes on 8-lane halves (hp_wide_f16): a 256-bit
 * vcvtph2ps and an fma(x, 1, acc) a half */
#define HP_F16_HALF 1
typedef __m256 hp_h;
#define HP_H_ZERO _mm256_setzero_ps()
#define HP_H_SET1 _mm256_set1_ps
#define HP_H_FMA _mm256_fmadd_ps
#define HP_H_LD_F16(p)                                                    \
    _mm256_maskz_cvtph_ps(0xff, _mm_loadu_si128((const __m128i *)(p)))
#define HP_JOIN(l, h) _mm512_insertf32x8(_mm512_castps256_ps512(l), h, 1)
#define HP_LDD _mm512_loadu_pd
#define HP_STD _mm512_storeu_pd
#define HP_ADDD _mm512_add_pd
#define HP_LOPD(s) _mm512_cvtps_pd(_mm512_castps512_ps256(s))
#define HP_HIPD(s) _mm512_cvtps_pd(_mm512_extractf32x8_ps(s, 1))
/* columns 0-15 (c0) and 16-31 (c1) from e (lane i: column 2i) and o
 * (2i + 1) */
static inline void hp_eo(__m512 e, __m512 o, __m512 *c0, __m512 *c1)
{
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20,
                                         5, 21, 6, 22, 7, 23);
    *c0 = _mm512_permutex2var_ps(e, lo, o);
    *c1 = _mm512_permutex2var_ps(e, _mm512_add_epi32(lo, _mm512_set1_epi32(8)),
                                 o);
}
#include "half_part_simd.h"
#include "half_part_short.h" /* short-row sum, mean, max, min */
