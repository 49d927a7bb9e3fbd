/* The AVX2 level of peak_loops.h: 256-bit loads, stores and FMAs
 * (built with that level's flags only; see meson.build). */
#include <immintrin.h>

#include "peak_fma.h"

static double bw_copy_avx2(double *restrict a, const double *restrict b,
                           const double *restrict c, size_t n, double s)
{
    (void)c, (void)s;
    for (size_t i = 0; i < n; i += 16) {
        __m256d v0 = _mm256_load_pd(b + i), v1 = _mm256_load_pd(b + i + 4);
        __m256d v2 = _mm256_load_pd(b + i + 8);
        __m256d v3 = _mm256_load_pd(b + i + 12);
        _mm256_store_pd(a + i, v0);
        _mm256_store_pd(a + i + 4, v1);
        _mm256_store_pd(a + i + 8, v2);
        _mm256_store_pd(a + i + 12, v3);
    }
    return a[0];
}

static double bw_add_avx2(double *restrict a, const double *restrict b,
                          const double *restrict c, size_t n, double s)
{
    (void)s;
    for (size_t i = 0; i < n; i += 16)
        for (size_t j = i; j < i + 16; j += 4)
            _mm256_store_pd(a + j, _mm256_add_pd(_mm256_load_pd(b + j),
                                                 _mm256_load_pd(c + j)));
    return a[0];
}

static double bw_triad_avx2(double *restrict a, const double *restrict b,
                            const double *restrict c, size_t n, double s)
{
    const __m256d vs = _mm256_set1_pd(s);
    for (size_t i = 0; i < n; i += 16)
        for (size_t j = i; j < i + 16; j += 4)
            _mm256_store_pd(a + j,
                            _mm256_fmadd_pd(vs, _mm256_load_pd(c + j),
                                            _mm256_load_pd(b + j)));
    return a[0];
}

static double bw_update_avx2(double *restrict a, const double *restrict b,
                             const double *restrict c, size_t n, double s)
{
    (void)c;
    const __m256d vs = _mm256_set1_pd(s);
    for (size_t i = 0; i < n; i += 16)
        for (size_t j = i; j < i + 16; j += 4)
            _mm256_store_pd(a + j,
                            _mm256_fmsub_pd(vs, _mm256_load_pd(b + j),
                                            _mm256_load_pd(a + j)));
    return a[0];
}

static double bw_read_avx2(double *restrict a, const double *restrict b,
                           const double *restrict c, size_t n, double s)
{
    (void)b, (void)c, (void)s;
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0,
            s5 = s0, s6 = s0, s7 = s0;
    for (size_t i = 0; i < n; i += 32) {
        s0 = _mm256_add_pd(s0, _mm256_load_pd(a + i));
        s1 = _mm256_add_pd(s1, _mm256_load_pd(a + i + 4));
        s2 = _mm256_add_pd(s2, _mm256_load_pd(a + i + 8));
        s3 = _mm256_add_pd(s3, _mm256_load_pd(a + i + 12));
        s4 = _mm256_add_pd(s4, _mm256_load_pd(a + i + 16));
        s5 = _mm256_add_pd(s5, _mm256_load_pd(a + i + 20));
        s6 = _mm256_add_pd(s6, _mm256_load_pd(a + i + 24));
        s7 = _mm256_add_pd(s7, _mm256_load_pd(a + i + 28));
    }
    __m256d t = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(s0, s1),
                                            _mm256_add_pd(s2, s3)),
                              _mm256_add_pd(_mm256_add_pd(s4, s5),
                                            _mm256_add_pd(s6, s7)));
    double r[4];
    _mm256_storeu_pd(r, t);
    return (r[0] + r[1]) + (r[2] + r[3]);
}

#define PK_SET256D(x) _mm256_set1_pd(x)
#define PK_SET256S(x) _mm256_set1_ps((float)(x))
#define PK_FMA_DECL___m256d(i) __m256d a##i = PK_SET256D(1.0 + (i) * 1e-3);
#define PK_FMA_DECL___m256(i) __m256 a##i = PK_SET256S(1.0 + (i) * 1e-3);
#define PK_STEP_OP _mm256_fmadd_pd
PK_FMA_LOOP(fma_f64_avx2, __m256d, double, PK_SET256D)
#undef PK_STEP_OP
#define PK_STEP_OP _mm256_fmadd_ps
PK_FMA_LOOP(fma_f32_avx2, __m256, float, PK_SET256S)
#undef PK_STEP_OP

const tb_peak_loops tb_cpu_peak_loops_avx2 = {
    .isa = "avx2",
    .bw = {bw_copy_avx2, bw_add_avx2, bw_triad_avx2, bw_read_avx2,
           bw_update_avx2},
    .fma = {[TB_F32] = fma_f32_avx2, [TB_F64] = fma_f64_avx2},
    .fma_flops_per_iter = {[TB_F32] = TB_PEAK_NACC * 8 * 2,
                           [TB_F64] = TB_PEAK_NACC * 4 * 2},
};
