/* layer_norm and rms_norm in bf16/f16 fused (half_bwd.h's
 * tb_cpu_half_norm_rows_avx2; included by half_part_avx2.c only, built
 * with the avx2 level's flags): per row of D, norm_avx2.c's f32 row's
 * operations in its order on values widened in registers, each result
 * narrowed once, so the bits of half_part.c's widen + that row + narrow
 * (tests/test_half_paths.c), with no f32 copy of x or y: the
 * statistics (the shift c, the mean of the first 8 elements; the sums
 * of d = x - c and d^2 in four 8-lane accumulators, v_hsum's order, the
 * scalar tail; the two-pass sum where E[d]^2 > 3/4 E[d^2]), then the
 * scale pass ((x - c) - m) * rstd * w (+ b) by FMA, the tail in scalar
 * C (-ffp-contract=off: as the f32 row's).  The f32 row is the avx2 one
 * at the avx2 and avx512 levels alike (kreg.h: no avx512 f32 row), so
 * this loop serves both (half_part.c checks that the level's f32 row is
 * it). */
#include <math.h>

#include "../../ops/half.h"
#include "norm.h"        /* TB_HALF_NORM_STATS */
#include "vmath_simd.h" /* v_hsum: the f32 row's */

#define HN_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* rows ahead the statistics pass prefetches (norm_avx2.c's
 * NORM_PF_ROWS: the hardware prefetchers stop at a page's end) */
#define HN_PF_ROWS 4

static inline __m256 hn_ld_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
static inline __m256 hn_ld_bf16(const uint16_t *p)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}
static inline void hn_st_f16(uint16_t *p, __m256 v)
{
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, HN_RNE));
}
/* f32 not NaN rounded to bf16 (nearest even), in each lane's low half */
static inline __m256i hn_bf16_rne(__m256 v)
{
    const __m256i x = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16),
                                         _mm256_set1_epi32(1));
    return _mm256_srli_epi32(
        _mm256_add_epi32(x, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))),
        16);
}
/* ops/half.h's tb_f32_to_bf16 on 8 lanes: round to nearest even on the
 * 16 bits dropped; a NaN keeps its upper half with the quiet bit set */
static inline void hn_st_bf16(uint16_t *p, __m256 v)
{
    const __m256i x = _mm256_castps_si256(v);
    __m256i r = hn_bf16_rne(v);
    const __m256i q = _mm256_or_si256(_mm256_srli_epi32(x, 16),
                                      _mm256_set1_epi32(0x40));
    r = _mm256_castps_si256(_mm256_blendv_ps(
        _mm256_castsi256_ps(r), _mm256_castsi256_ps(q),
        _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    r = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(r));
}

/* two vectors, a's values then b's: f16 one conversion each; bf16 the
 * rounding of hn_st_bf16 with one pack for both, where neither holds a
 * NaN (else hn_st_bf16 each) */
static inline void hn_st2_f16(uint16_t *p, __m256 a, __m256 b)
{
    hn_st_f16(p, a);
    hn_st_f16(p + 8, b);
}
static inline void hn_st2_bf16(uint16_t *p, __m256 a, __m256 b)
{
    if (_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q))) {
        hn_st_bf16(p, a);
        hn_st_bf16(p + 8, b);
        return;
    }
    _mm256_storeu_si256(
        (__m256i *)p,
        _mm256_permute4x64_epi64(
            _mm256_packus_epi32(hn_bf16_rne(a), hn_bf16_rne(b)), 0xd8));
}

#define HN_ROWS(DT)                                                       \
    /* norm_avx2.c's row_sums on the widened row */                       \
    static inline __attribute__((always_inline)) void hn_sums_##DT(       \
        const uint16_t *x, int64_t D, float c, const char *pf, float *s1, \
        float *s2)                                                        \
    {                                                                     \
        __m256 a[4], q[4];                                                \
        for (int u = 0; u < 4; u++)                                       \
            a[u] = q[u] = _mm256_setzero_ps();                            \
        const __m256 vc = _mm256_set1_ps(c);                              \
        int64_t k = 0;                                                    \
        for (; k + 32 <= D; k += 32) {                                    \
            if (pf)                                                       \
                _mm_prefetch(pf + 2 * k, _MM_HINT_T0);                    \
            for (int u = 0; u < 4; u++) {                                 \
                __m256 d = _mm256_sub_ps(hn_ld_##DT(x + k + 8 * u), vc);  \
                a[u] = _mm256_add_ps(a[u], d);                            \
                q[u] = _mm256_fmadd_ps(d, d, q[u]);                       \
            }                                                             \
        }                                                                 \
        for (; k + 8 <= D; k += 8) {                                      \
            __m256 d = _mm256_sub_ps(hn_ld_##DT(x + k), vc);              \
            a[0] = _mm256_add_ps(a[0], d);                                \
            q[0] = _mm256_fmadd_ps(d, d, q[0]);                           \
        }                                                                 \
        float t1 = v_hsum(_mm256_add_ps(_mm256_add_ps(a[0], a[1]),       \
                                         _mm256_add_ps(a[2], a[3])));     \
        float t2 = v_hsum(_mm256_add_ps(_mm256_add_ps(q[0], q[1]),       \
                                         _mm256_add_ps(q[2], q[3])));     \
        for (; k < D; k++) {                                              \
            const float xk = tb_##DT##_to_f32(x[k]);                      \
            t1 += xk - c;                                                 \
            t2 += (xk - c) * (xk - c);                                    \
        }                                                                 \
        if (s1)                                                           \
            *s1 = t1;                                                     \
        *s2 = t2;                                                         \
    }                                                                     \
    static void hn_rows_##DT(const uint16_t *x, uint16_t *y, int64_t rows, \
                             int64_t D, const float *w, const float *b,   \
                             float eps)                                   \
    {                                                                     \
        const __m256 zero = _mm256_setzero_ps();                          \
        for (int64_t r = 0; r < rows; r++) {                              \
            const uint16_t *xr = x + r * D;                               \
            uint16_t *yr = y + r * D;                                     \
            const char *pf = r + HN_PF_ROWS < rows                        \
                                 ? (const char *)(xr + HN_PF_ROWS * D)    \
                                 : NULL;                                  \
            float sh, m, ss;                                              \
            TB_HALF_NORM_STATS(hn_sums_##DT, tb_##DT##_to_f32, xr, D, b,  \
                               pf, sh, m, ss);                            \
            const float inv =                                             \
                1.0f / (float)sqrt((double)(ss / (float)D + eps));        \
            const __m256 vsh = _mm256_set1_ps(sh), vmu = _mm256_set1_ps(m); \
            const __m256 vinv = _mm256_set1_ps(inv);                      \
            int64_t k = 0;                                                \
            for (; k + 16 <= D; k += 16) {                                \
                __m256 c0 = _mm256_mul_ps(                                \
                    _mm256_sub_ps(_mm256_sub_ps(hn_ld_##DT(xr + k), vsh), \
                                  vmu),                                   \
                    vinv);                                                \
                __m256 c1 = _mm256_mul_ps(                                \
                    _mm256_sub_ps(                                        \
                        _mm256_sub_ps(hn_ld_##DT(xr + k + 8), vsh), vmu), \
                    vinv);                                                \
                hn_st2_##DT(                                              \
                    yr + k,                                               \
                    _mm256_fmadd_ps(c0, _mm256_loadu_ps(w + k),           \
                                    b ? _mm256_loadu_ps(b + k) : zero),   \
                    _mm256_fmadd_ps(c1, _mm256_loadu_ps(w + k + 8),       \
                                    b ? _mm256_loadu_ps(b + k + 8)        \
                                      : zero));                           \
            }                                                             \
            for (; k + 8 <= D; k += 8) {                                  \
                __m256 c = _mm256_mul_ps(                                 \
                    _mm256_sub_ps(_mm256_sub_ps(hn_ld_##DT(xr + k), vsh), \
                                  vmu),                                   \
                    vinv);                                                \
                hn_st_##DT(yr + k,                                        \
                           _mm256_fmadd_ps(c, _mm256_loadu_ps(w + k),     \
                                           b ? _mm256_loadu_ps(b + k)     \
                                             : zero));                    \
            }                                                             \
            for (; k < D; k++)                                            \
                yr[k] = tb_f32_to_##DT((tb_##DT##_to_f32(xr[k]) - sh - m) * \
                                           inv * w[k] +                   \
                                       (b ? b[k] : 0.0f));                \
        }                                                                 \
    }
HN_ROWS(bf16)
HN_ROWS(f16)

void tb_cpu_half_norm_rows_avx2(tb_dtype dt, const uint16_t *x, uint16_t *y,
                                int64_t rows, int64_t D, const float *w,
                                const float *b, float eps)
{
    if (dt == TB_BF16)
        hn_rows_bf16(x, y, rows, D, w, b, eps);
    else
        hn_rows_f16(x, y, rows, D, w, b, eps);
}
