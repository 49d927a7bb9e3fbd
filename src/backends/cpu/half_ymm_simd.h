/* The f16 element-wise loops of the AVX-512 level at 8 f32 lanes
 * (AVX512VL ymm vcvtph2ps/vcvtps2ph): part of half_simd.h, included by it
 * where its AVX-512 helpers are defined (never on its own). */
#ifndef TB_BACKENDS_CPU_HALF_YMM_SIMD_H
#define TB_BACKENDS_CPU_HALF_YMM_SIMD_H

/* f16 binary ops at 8 f32 lanes (AVX512VL's ymm vcvtph2ps/vcvtps2ph):
 * the zmm conversions made f16 add at 1M 22% slower than the avx2
 * level's ymm loop on Zen 4 (tbench ab); the same values */
#define HS_F16_YMM 1
static inline __m256 hy_f16_ld(const uint16_t *p)
{
    return _mm256_maskz_cvtph_ps(0xff, _mm_loadu_si128((const __m128i *)p));
}
static inline void hy_f16_st(uint16_t *p, __m256 v)
{
    _mm_storeu_si128((__m128i *)p, _mm256_maskz_cvtps_ph(0xff, v, HS_RNE));
}
/* a + b as a 1 + b and a - b as b (-1) + a: the same single rounding
 * of the same exact value (zero signs too: -b + a is a - b by IEEE's
 * definition), on the multiply-add units: Zen 4's two FADD pipes also
 * run the conversions, and the additions there made f16 add 1.28x the
 * time of f16 mul (0.194 against 0.152 cycles per element on L2 data;
 * fma 0.154).  NaN: a NaN (payloads are not kept: half_cvt.h). */
static inline __m256 hy_add(__m256 a, __m256 b)
{
    return _mm256_fmadd_ps(a, _mm256_set1_ps(1.0f), b);
}
static inline __m256 hy_sub(__m256 a, __m256 b)
{
    return _mm256_fmadd_ps(b, _mm256_set1_ps(-1.0f), a);
}
static inline __m256 hy_mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
static inline __m256 hy_div(__m256 a, __m256 b) { return _mm256_div_ps(a, b); }
static inline __m256 hy_add_relu(__m256 a, __m256 b)
{
    const __m256 x = hy_add(a, b);
    return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NLE_UQ),
                         x);
}
#define HY_F16(op)                                                        \
    static void hy_##op##_f16(const uint16_t *pa, const uint16_t *pb,     \
                              uint16_t *po, int64_t n, float k)           \
    {                                                                     \
        (void)k;                                                          \
        int64_t i = 0;                                                    \
        for (; i + 16 <= n; i += 16) {                                    \
            __m256 r0 = hy_##op(hy_f16_ld(pa + i), hy_f16_ld(pb + i));    \
            __m256 r1 =                                                   \
                hy_##op(hy_f16_ld(pa + i + 8), hy_f16_ld(pb + i + 8));    \
            hy_f16_st(po + i, r0);                                        \
            hy_f16_st(po + i + 8, r1);                                    \
        }                                                                 \
        for (; i < n; i++) {                                              \
            __m256 a = _mm256_set1_ps(tb_f16_to_f32(pa[i]));              \
            __m256 b = _mm256_set1_ps(tb_f16_to_f32(pb[i]));              \
            po[i] = tb_f32_to_f16(_mm256_cvtss_f32(hy_##op(a, b)));       \
        }                                                                 \
    }
HY_F16(add)
HY_F16(sub)
HY_F16(mul)
HY_F16(div)
/* add_relu: x = a + b on the FMA pipes; the relu (x where x > 0 or
 * NaN, else +0) as the narrowing's zero-masking (vcvtps2ph {z}: a
 * zeroed word is +0), no and: f16 at 1M 104 -> 93 us with the FMA add,
 * 72 with the mask (tbench ab, 8 blocks, load 7-10) */
static inline void hy_f16_st_relu(uint16_t *p, __m256 x)
{
    const __mmask8 k = _mm256_cmp_ps_mask(x, _mm256_setzero_ps(), _CMP_NLE_UQ);
    _mm_storeu_si128((__m128i *)p, _mm256_maskz_cvtps_ph(k, x, HS_RNE));
}
static void hy_add_relu_f16(const uint16_t *pa, const uint16_t *pb,
                            uint16_t *po, int64_t n, float k)
{
    (void)k;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        hy_f16_st_relu(po + i, hy_add(hy_f16_ld(pa + i), hy_f16_ld(pb + i)));
        hy_f16_st_relu(po + i + 8,
                       hy_add(hy_f16_ld(pa + i + 8), hy_f16_ld(pb + i + 8)));
    }
    for (; i < n; i++) {
        __m256 a = _mm256_set1_ps(tb_f16_to_f32(pa[i]));
        __m256 b = _mm256_set1_ps(tb_f16_to_f32(pb[i]));
        po[i] = tb_f32_to_f16(_mm256_cvtss_f32(hy_add_relu(a, b)));
    }
}
/* leaky_relu f16 at 8 f32 lanes too: its work is the conversions, and
 * the zmm vcvtps2ph took more time than two ymm ones (0.170 -> 0.137 TSC
 * cycles a value on L1 data; 1M 70.0 -> 57.1 us, tbench ab, 8 blocks,
 * load 7); hs_leaky_relu's
 * masked product (!(x > 0): NaN too), the same values */
static inline __m256 hy_leaky_relu(__m256 x, __m256 k)
{
    return _mm256_mask_mul_ps(
        x, _mm256_cmp_ps_mask(x, _mm256_setzero_ps(), _CMP_NGT_UQ), k, x);
}
static void hy_leaky_relu_f16(const uint16_t *pa, const uint16_t *pb,
                              uint16_t *po, int64_t n, float k)
{
    (void)pb;
    const __m256 kv = _mm256_set1_ps(k);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 r0 = hy_leaky_relu(hy_f16_ld(pa + i), kv);
        const __m256 r1 = hy_leaky_relu(hy_f16_ld(pa + i + 8), kv);
        hy_f16_st(po + i, r0);
        hy_f16_st(po + i + 8, r1);
    }
    for (; i < n; i++) {
        const __m256 a = _mm256_set1_ps(tb_f16_to_f32(pa[i]));
        po[i] = tb_f32_to_f16(_mm256_cvtss_f32(hy_leaky_relu(a, kv)));
    }
}

#endif
