/* f64 vector helpers of the pooling and layout rows on double lanes
 * (AVX2: 4, AVX-512: 8): loads and stores with a lane count, the
 * even/odd split and the interleave of a 2 P64_W sequence (2x2
 * windows), the NaN-aware compares and selects of the portable rows'
 * rules, and the register transpose of a P64_W x P64_W block.  Static
 * inline only; for inclusion by kernels_simd.h (max_pool2d /
 * avg_pool2d f64) and bwd_simd_impl.h (max_pool2d_backward and permute
 * f64), each built with only its level's flags.  Loads and stores move
 * bits (NaN payloads survive). */
#ifndef TB_BACKENDS_CPU_POOL64_SIMD_H
#define TB_BACKENDS_CPU_POOL64_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#if defined(__AVX512F__)
#define P64_W 8
#define P64_I(name) _mm512_##name
typedef __m512d p64;
typedef __mmask8 p64m;
#define P64_CMP(a, b, c) _mm512_cmp_pd_mask(a, b, c)
static inline p64m p64_or(p64m a, p64m b) { return (p64m)(a | b); }
static inline int p64_any(p64m m) { return m != 0; }
static inline p64 p64_sel(p64m m, p64 a, p64 b)
{
    return _mm512_mask_blend_pd(m, b, a);
}
static inline __mmask8 p64_first(int64_t n)
{
    return (__mmask8)(n >= 8 ? 0xff : n <= 0 ? 0 : (1u << n) - 1);
}
/* the first n lanes (n <= P64_W), +0 in the others */
static inline p64 p64_load_n(const double *p, int64_t n)
{
    return _mm512_maskz_loadu_pd(p64_first(n), p);
}
static inline void p64_store_n(double *p, p64 a, int64_t n)
{
    _mm512_mask_storeu_pd(p, p64_first(n), a);
}
/* even / odd lanes of the 2 P64_W sequence a, b; zip: a0 b0 a1 b1 ...
 * of the lower (lo) or upper (hi) halves of a and b */
#define P64_PERM2(a, b, i0, i1, i2, i3, i4, i5, i6, i7)                    \
    _mm512_permutex2var_pd(a, _mm512_setr_epi64(i0, i1, i2, i3, i4, i5,    \
                                                 i6, i7), b)
#define P64_EVEN(a, b) P64_PERM2(a, b, 0, 2, 4, 6, 8, 10, 12, 14)
#define P64_ODD(a, b) P64_PERM2(a, b, 1, 3, 5, 7, 9, 11, 13, 15)
#define P64_ZIP_LO(a, b) P64_PERM2(a, b, 0, 8, 1, 9, 2, 10, 3, 11)
#define P64_ZIP_HI(a, b) P64_PERM2(a, b, 4, 12, 5, 13, 6, 14, 7, 15)
/* r[i][j] -> r[j][i] for an 8 x 8 block: pairs, then 2 x 2 blocks of
 * pairs, then 128-bit quarters */
static inline void p64_transpose(p64 r[8])
{
    p64 t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
    }
    /* t[2i] = r2i0 r2i+1,0 | r2i2 r2i+1,2 | ..4 | ..6 (per 128-bit lane) */
    for (int g = 0; g < 2; g++)
        for (int h = 0; h < 2; h++) {
            /* rows 4g..4g+3, columns h, h+2 | h+4, h+6 as 256-bit
             * halves: quarters 0, 2 of t[4g + h] and t[4g + 2 + h] */
            u[4 * g + h] = _mm512_shuffle_f64x2(t[4 * g + h],
                                                t[4 * g + 2 + h], 0x88);
            u[4 * g + 2 + h] = _mm512_shuffle_f64x2(t[4 * g + h],
                                                    t[4 * g + 2 + h], 0xdd);
        }
    for (int h = 0; h < 4; h++) {
        r[h] = _mm512_shuffle_f64x2(u[h], u[4 + h], 0x88);
        r[h + 4] = _mm512_shuffle_f64x2(u[h], u[4 + h], 0xdd);
    }
}
#else
#define P64_W 4
#define P64_I(name) _mm256_##name
typedef __m256d p64;
typedef __m256d p64m; /* all-ones lanes */
#define P64_CMP(a, b, c) _mm256_cmp_pd(a, b, c)
static inline p64m p64_or(p64m a, p64m b) { return _mm256_or_pd(a, b); }
static inline int p64_any(p64m m) { return _mm256_movemask_pd(m) != 0; }
static inline p64 p64_sel(p64m m, p64 a, p64 b)
{
    return _mm256_blendv_pd(b, a, m);
}
static inline __m256i p64_first(int64_t n)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)n),
                              _mm256_setr_epi64x(0, 1, 2, 3));
}
static inline p64 p64_load_n(const double *p, int64_t n)
{
    return _mm256_maskload_pd(p, p64_first(n));
}
static inline void p64_store_n(double *p, p64 a, int64_t n)
{
    _mm256_maskstore_pd(p, p64_first(n), a);
}
#define P64_EVEN(a, b) _mm256_permute4x64_pd(_mm256_unpacklo_pd(a, b), 0xd8)
#define P64_ODD(a, b) _mm256_permute4x64_pd(_mm256_unpackhi_pd(a, b), 0xd8)
#define P64_ZIP_LO(a, b)                                                  \
    _mm256_permute2f128_pd(_mm256_unpacklo_pd(a, b),                      \
                           _mm256_unpackhi_pd(a, b), 0x20)
#define P64_ZIP_HI(a, b)                                                  \
    _mm256_permute2f128_pd(_mm256_unpacklo_pd(a, b),                      \
                           _mm256_unpackhi_pd(a, b), 0x31)
static inline void p64_transpose(p64 r[4])
{
    p64 t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    p64 t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
#endif

/* Both widths: whole-vector operations, NaN-aware compares (ordered:
 * false with a NaN), the even/odd split and interleave. */
static inline p64 p64_set1(double a) { return P64_I(set1_pd)(a); }
static inline p64 p64_load(const double *p) { return P64_I(loadu_pd)(p); }
static inline void p64_store(double *p, p64 a) { P64_I(storeu_pd)(p, a); }
static inline p64 p64_add(p64 a, p64 b) { return P64_I(add_pd)(a, b); }
static inline p64 p64_mul(p64 a, p64 b) { return P64_I(mul_pd)(a, b); }
static inline p64 p64_max(p64 a, p64 b) { return P64_I(max_pd)(a, b); }
static inline p64m p64_gt(p64 a, p64 b) { return P64_CMP(a, b, _CMP_GT_OQ); }
static inline p64m p64_eq(p64 a, p64 b) { return P64_CMP(a, b, _CMP_EQ_OQ); }
static inline p64m p64_nan(p64 a) { return P64_CMP(a, a, _CMP_UNORD_Q); }
static inline p64m p64_unord(p64 a, p64 b)
{
    return P64_CMP(a, b, _CMP_UNORD_Q);
}
static inline p64 p64_even(p64 a, p64 b) { return P64_EVEN(a, b); }
static inline p64 p64_odd(p64 a, p64 b) { return P64_ODD(a, b); }
static inline p64 p64_zip_lo(p64 a, p64 b) { return P64_ZIP_LO(a, b); }
static inline p64 p64_zip_hi(p64 a, p64 b) { return P64_ZIP_HI(a, b); }

/* The portable rows' running maximum: v replaces acc when v > acc or v
 * is NaN (so the last NaN in the order stays, and a tie keeps acc). */
static inline p64 p64_cmax(p64 acc, p64 v)
{
    return p64_sel(p64_or(p64_gt(v, acc), p64_nan(v)), v, acc);
}

#endif
