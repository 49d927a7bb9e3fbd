/* AVX2 + FMA GEMM micro-kernels (contract: gemm_kernels.h).
 *
 * Built with only -mavx2 -mfma; the framework calls these only after
 * checking that the CPU and OS support AVX2 and FMA.
 *
 * Register tile: 6 rows x 2 YMM vectors of C (12 accumulators), plus two
 * vectors of packed B and one broadcast of packed A: 15 of the 16 YMM
 * registers, and 12 independent FMAs per k step (the Haswell-class shape
 * that fills two FMA pipes of latency 4-5 without spilling). */
#include <immintrin.h>
#include <stdint.h>

#include "gemm_kernels.h"

/* Prefetch distance in k steps for the packed A panel (streamed from L2
 * by the framework's blocking; the B panel stays in L1). */
#define PF_K 8

/* ---- f32: 6 x 16 --------------------------------------------------- */

#define F32_ROW(r)                                                        \
    do {                                                                  \
        __m256 av = _mm256_broadcast_ss(a + (r));                         \
        c##r##_0 = _mm256_fmadd_ps(av, b0, c##r##_0);                     \
        c##r##_1 = _mm256_fmadd_ps(av, b1, c##r##_1);                     \
    } while (0)

#define F32_OUT(r)                                                        \
    do {                                                                  \
        float *cr = c + (r) * ldc;                                        \
        if (accumulate) {                                                 \
            c##r##_0 = _mm256_add_ps(c##r##_0, _mm256_loadu_ps(cr));      \
            c##r##_1 = _mm256_add_ps(c##r##_1, _mm256_loadu_ps(cr + 8));  \
        }                                                                 \
        _mm256_storeu_ps(cr, c##r##_0);                                   \
        _mm256_storeu_ps(cr + 8, c##r##_1);                               \
    } while (0)

void tb_gemm_ukr_f32_avx2_6x16(int64_t kc, const float *a, const float *b,
                               float *c, int64_t ldc, int accumulate)
{
    __m256 c0_0, c0_1, c1_0, c1_1, c2_0, c2_1, c3_0, c3_1, c4_0, c4_1,
        c5_0, c5_1;
    c0_0 = c0_1 = c1_0 = c1_1 = c2_0 = c2_1 = c3_0 = c3_1 = c4_0 = c4_1 =
        c5_0 = c5_1 = _mm256_setzero_ps();

    for (int r = 0; r < 6; r++)
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);

#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; k++) {
        _mm_prefetch((const char *)(a + PF_K * 6), _MM_HINT_T0);
        __m256 b0 = _mm256_loadu_ps(b);
        __m256 b1 = _mm256_loadu_ps(b + 8);
        F32_ROW(0);
        F32_ROW(1);
        F32_ROW(2);
        F32_ROW(3);
        F32_ROW(4);
        F32_ROW(5);
        a += 6;
        b += 16;
    }

    F32_OUT(0);
    F32_OUT(1);
    F32_OUT(2);
    F32_OUT(3);
    F32_OUT(4);
    F32_OUT(5);
}

/* ---- f64: 6 x 8 ---------------------------------------------------- */

#define F64_ROW(r)                                                        \
    do {                                                                  \
        __m256d av = _mm256_broadcast_sd(a + (r));                        \
        c##r##_0 = _mm256_fmadd_pd(av, b0, c##r##_0);                     \
        c##r##_1 = _mm256_fmadd_pd(av, b1, c##r##_1);                     \
    } while (0)

#define F64_OUT(r)                                                        \
    do {                                                                  \
        double *cr = c + (r) * ldc;                                       \
        if (accumulate) {                                                 \
            c##r##_0 = _mm256_add_pd(c##r##_0, _mm256_loadu_pd(cr));      \
            c##r##_1 = _mm256_add_pd(c##r##_1, _mm256_loadu_pd(cr + 4));  \
        }                                                                 \
        _mm256_storeu_pd(cr, c##r##_0);                                   \
        _mm256_storeu_pd(cr + 4, c##r##_1);                               \
    } while (0)

void tb_gemm_ukr_f64_avx2_6x8(int64_t kc, const double *a, const double *b,
                              double *c, int64_t ldc, int accumulate)
{
    __m256d c0_0, c0_1, c1_0, c1_1, c2_0, c2_1, c3_0, c3_1, c4_0, c4_1,
        c5_0, c5_1;
    c0_0 = c0_1 = c1_0 = c1_1 = c2_0 = c2_1 = c3_0 = c3_1 = c4_0 = c4_1 =
        c5_0 = c5_1 = _mm256_setzero_pd();

    for (int r = 0; r < 6; r++)
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);

#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; k++) {
        _mm_prefetch((const char *)(a + PF_K * 6), _MM_HINT_T0);
        __m256d b0 = _mm256_loadu_pd(b);
        __m256d b1 = _mm256_loadu_pd(b + 4);
        F64_ROW(0);
        F64_ROW(1);
        F64_ROW(2);
        F64_ROW(3);
        F64_ROW(4);
        F64_ROW(5);
        a += 6;
        b += 8;
    }

    F64_OUT(0);
    F64_OUT(1);
    F64_OUT(2);
    F64_OUT(3);
    F64_OUT(4);
    F64_OUT(5);
}

/* ---- epilogues (tb_gemm_*_ep) -------------------------------------- */

/* Full vectors, then the row's last n % lanes elements one by one in the
 * same two steps (a scalar tail is short: n is at most NR per tile).
 * relu: the NLE_UQ compare is true for NaN (kept) and false for -0 and
 * negatives (and-ed to +0); the scalar tail's x <= 0 is its negation. */
void tb_gemm_epi_f32_avx2(float *c, int64_t ldc, int64_t m, int64_t n,
                          const float *bias, int relu)
{
    const __m256 z = _mm256_setzero_ps();
    for (int64_t i = 0; i < m; i++) {
        float *cr = c + i * ldc;
        int64_t q = 0;
        for (; q + 8 <= n; q += 8) {
            __m256 v = _mm256_loadu_ps(cr + q);
            if (bias)
                v = _mm256_add_ps(v, _mm256_loadu_ps(bias + q));
            if (relu)
                v = _mm256_and_ps(_mm256_cmp_ps(v, z, _CMP_NLE_UQ), v);
            _mm256_storeu_ps(cr + q, v);
        }
        for (; q < n; q++) {
            float v = cr[q];
            if (bias)
                v += bias[q];
            if (relu)
                v = v <= 0 ? 0.0f : v;
            cr[q] = v;
        }
    }
}

void tb_gemm_epi_f64_avx2(double *c, int64_t ldc, int64_t m, int64_t n,
                          const double *bias, int relu)
{
    const __m256d z = _mm256_setzero_pd();
    for (int64_t i = 0; i < m; i++) {
        double *cr = c + i * ldc;
        int64_t q = 0;
        for (; q + 4 <= n; q += 4) {
            __m256d v = _mm256_loadu_pd(cr + q);
            if (bias)
                v = _mm256_add_pd(v, _mm256_loadu_pd(bias + q));
            if (relu)
                v = _mm256_and_pd(_mm256_cmp_pd(v, z, _CMP_NLE_UQ), v);
            _mm256_storeu_pd(cr + q, v);
        }
        for (; q < n; q++) {
            double v = cr[q];
            if (bias)
                v += bias[q];
            if (relu)
                v = v <= 0 ? 0.0 : v;
            cr[q] = v;
        }
    }
}
