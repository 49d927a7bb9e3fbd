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

/* ---- fused element-wise loops ---- */

static inline __m256 ld_bf16(const uint16_t *p)
{
    __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}

static inline void st_bf16(uint16_t *p, __m256 v)
{
    __m256i r = narrow8_bf16(v); /* 8 values in the low halves */
    __m256i q = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(q));
}

/* 16 values, one pack (as narrow_bf16) */
static inline void st2_bf16(uint16_t *p, __m256 v0, __m256 v1)
{
    __m256i q = _mm256_permute4x64_epi64(
        _mm256_packus_epi32(narrow8_bf16(v0), narrow8_bf16(v1)), 0xd8);
    _mm256_storeu_si256((__m256i *)p, q);
}

static inline __m256 ld_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

static inline void st_f16(uint16_t *p, __m256 v)
{
    _mm_storeu_si128((__m128i *)p,
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT |
                                            _MM_FROUND_NO_EXC));
}

static inline void st2_f16(uint16_t *p, __m256 v0, __m256 v1)
{
    st_f16(p, v0);
    st_f16(p + 8, v1);
}

static inline __m256 v_relu(__m256 x)
{
    return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NLE_UQ),
                         x);
}

static inline float s_relu(float x)
{
    return x > 0 || x != x ? x : 0.0f;
}

#define FUSED_OPS(X)                                                      \
    X(add, _mm256_add_ps(a, b), a + b)                                    \
    X(sub, _mm256_sub_ps(a, b), a - b)                                    \
    X(mul, _mm256_mul_ps(a, b), a * b)                                    \
    X(div, _mm256_div_ps(a, b), a / b)                                    \
    X(add_relu, v_relu(_mm256_add_ps(a, b)), s_relu(a + b))

/* relu on the 16-bit patterns themselves: its result is its input or +0,
 * exact in the dtype, so nothing is converted.  As int16, the negative
 * numbers (-0 and -inf included) are the patterns below the negative
 * NaNs: below -127 (bf16: 0xff81..0xffff are NaN) or -1023 (f16:
 * 0xfc01..0xffff); those become +0, everything else (NaN too) stays. */
#define RELU16(dt, lim)                                                   \
    static void fused_relu_##dt(const uint16_t *pa, const uint16_t *pb,   \
                                uint16_t *po, int64_t n)                  \
    {                                                                     \
        (void)pb;                                                         \
        const __m256i l = _mm256_set1_epi16(lim);                         \
        int64_t i = 0;                                                    \
        for (; i + 16 <= n; i += 16) {                                    \
            __m256i h = _mm256_loadu_si256((const __m256i *)(pa + i));    \
            _mm256_storeu_si256((__m256i *)(po + i),                      \
                                _mm256_andnot_si256(                      \
                                    _mm256_cmpgt_epi16(l, h), h));        \
        }                                                                 \
        for (; i < n; i++)                                                \
            po[i] = (int16_t)pa[i] < (lim) ? 0 : pa[i];                   \
    }
RELU16(bf16, -127)
RELU16(f16, -1023)

#define FUSED_DEF(op, vexpr, sexpr)                                       \
    FUSED_DT(op, bf16, vexpr, sexpr) FUSED_DT(op, f16, vexpr, sexpr)
#define FUSED_DT(op, dt, vexpr, sexpr)                                    \
    static void fused_##op##_##dt(const uint16_t *pa, const uint16_t *pb, \
                                  uint16_t *po, int64_t n)                \
    {                                                                     \
        int64_t i = 0;                                                    \
        for (; i + 16 <= n; i += 16) {                                    \
            __m256 a = ld_##dt(pa + i);                                   \
            __m256 b = pb ? ld_##dt(pb + i) : a;                          \
            (void)b;                                                      \
            __m256 r0 = vexpr;                                            \
            a = ld_##dt(pa + i + 8);                                      \
            b = pb ? ld_##dt(pb + i + 8) : a;                             \
            st2_##dt(po + i, r0, vexpr);                                  \
        }                                                                 \
        for (; i + 8 <= n; i += 8) {                                      \
            __m256 a = ld_##dt(pa + i);                                   \
            __m256 b = pb ? ld_##dt(pb + i) : a;                          \
            (void)b;                                                      \
            st_##dt(po + i, vexpr);                                       \
        }                                                                 \
        for (; i < n; i++) {                                              \
            float a = tb_##dt##_to_f32(pa[i]);                            \
            float b = pb ? tb_##dt##_to_f32(pb[i]) : a;                   \
            (void)b;                                                      \
            po[i] = tb_f32_to_##dt(sexpr);                                \
        }                                                                 \
    }
FUSED_OPS(FUSED_DEF)

tb_cpu_half_fused_fn tb_cpu_half_fused_avx2(tb_op_id op, tb_dtype dt)
{
#define FUSED_CASE(op_, vexpr, sexpr)                                     \
    case TB_OP_##op_:                                                     \
        return dt == TB_BF16 ? fused_##op_##_bf16 : fused_##op_##_f16;
    if (dt != TB_BF16 && dt != TB_F16)
        return NULL;
    switch (op) {
        FUSED_OPS(FUSED_CASE)
    case TB_OP_relu:
        return dt == TB_BF16 ? fused_relu_bf16 : fused_relu_f16;
    default:
        return NULL;
    }
#undef FUSED_CASE
}

tb_cpu_half_cvt tb_cpu_half_cvt_avx2(tb_dtype dt)
{
    if (dt == TB_BF16)
        return (tb_cpu_half_cvt){widen_bf16, narrow_bf16};
    if (dt == TB_F16)
        return (tb_cpu_half_cvt){widen_f16, narrow_f16};
    return (tb_cpu_half_cvt){0, 0};
}
