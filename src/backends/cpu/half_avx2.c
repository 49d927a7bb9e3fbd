/* bf16/f16 conversions at the avx2 level (half_cvt.h): F16C's vcvtph2ps
 * and vcvtps2ph for f16 (round to nearest even, as ops/half.h), AVX2
 * integer code for bf16 (f32's upper half, rounded to nearest even on
 * the lower). */
#include <immintrin.h>

#include "half_cvt.h"

static void widen_bf16(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i h = _mm256_cvtepu16_epi32(
            _mm_loadu_si128((const __m128i *)(src + i)));
        _mm256_storeu_ps(dst + i,
                         _mm256_castsi256_ps(_mm256_slli_epi32(h, 16)));
    }
    for (; i < n; i++)
        dst[i] = tb_bf16_to_f32(src[i]);
}

/* Eight f32 to bf16 bits in the low halves of the 32-bit lanes. */
static inline __m256i narrow8_bf16(__m256 v)
{
    const __m256i x = _mm256_castps_si256(v);
    const __m256i lsb =
        _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(
        x, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
    r = _mm256_srli_epi32(r, 16);
    /* NaN: the upper half with the quiet bit set */
    const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(x, 16),
                                        _mm256_set1_epi32(0x40));
    const __m256 isnan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    return _mm256_castps_si256(_mm256_blendv_ps(
        _mm256_castsi256_ps(r), _mm256_castsi256_ps(nan), isnan));
}

static void narrow_bf16(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a = narrow8_bf16(_mm256_loadu_ps(src + i));
        __m256i b = narrow8_bf16(_mm256_loadu_ps(src + i + 8));
        /* packus works within 128-bit lanes: a0 b0 a1 b1 -> a0 a1 b0 b1 */
        __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b),
                                             0xd8);
        _mm256_storeu_si256((__m256i *)(dst + i), p);
    }
    for (; i < n; i++)
        dst[i] = tb_f32_to_bf16(src[i]);
}

static void widen_f16(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i,
                         _mm256_cvtph_ps(_mm_loadu_si128(
                             (const __m128i *)(src + i))));
    for (; i < n; i++)
        dst[i] = tb_f16_to_f32(src[i]);
}

static void narrow_f16(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                         _MM_FROUND_TO_NEAREST_INT |
                                             _MM_FROUND_NO_EXC));
    for (; i < n; i++)
        dst[i] = tb_f32_to_f16(src[i]);
}

tb_cpu_half_cvt tb_cpu_half_cvt_avx2(tb_dtype dt)
{
    if (dt == TB_BF16)
        return (tb_cpu_half_cvt){widen_bf16, narrow_bf16};
    if (dt == TB_F16)
        return (tb_cpu_half_cvt){widen_f16, narrow_f16};
    return (tb_cpu_half_cvt){0, 0};
}
