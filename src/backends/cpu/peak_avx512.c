/* The AVX-512 level of peak_loops.h: 512-bit loads, stores and FMAs
 * (built with that level's flags only; see meson.build). */
#include <immintrin.h>

#include "peak_fma.h"

static double bw_copy_avx512(double *restrict a, const double *restrict b,
                             const double *restrict c, size_t n, double s)
{
    (void)c, (void)s;
    for (size_t i = 0; i < n; i += 32) {
        __m512d v0 = _mm512_load_pd(b + i), v1 = _mm512_load_pd(b + i + 8);
        __m512d v2 = _mm512_load_pd(b + i + 16);
        __m512d v3 = _mm512_load_pd(b + i + 24);
        _mm512_store_pd(a + i, v0);
        _mm512_store_pd(a + i + 8, v1);
        _mm512_store_pd(a + i + 16, v2);
        _mm512_store_pd(a + i + 24, v3);
    }
    return a[0];
}

static double bw_add_avx512(double *restrict a, const double *restrict b,
                            const double *restrict c, size_t n, double s)
{
    (void)s;
    for (size_t i = 0; i < n; i += 32)
        for (size_t j = i; j < i + 32; j += 8)
            _mm512_store_pd(a + j, _mm512_add_pd(_mm512_load_pd(b + j),
                                                 _mm512_load_pd(c + j)));
    return a[0];
}

static double bw_triad_avx512(double *restrict a, const double *restrict b,
                              const double *restrict c, size_t n, double s)
{
    const __m512d vs = _mm512_set1_pd(s);
    for (size_t i = 0; i < n; i += 32)
        for (size_t j = i; j < i + 32; j += 8)
            _mm512_store_pd(a + j,
                            _mm512_fmadd_pd(vs, _mm512_load_pd(c + j),
                                            _mm512_load_pd(b + j)));
    return a[0];
}

static double bw_update_avx512(double *restrict a, const double *restrict b,
                               const double *restrict c, size_t n, double s)
{
    (void)c;
    const __m512d vs = _mm512_set1_pd(s);
    for (size_t i = 0; i < n; i += 32)
        for (size_t j = i; j < i + 32; j += 8)
            _mm512_store_pd(a + j,
                            _mm512_fmsub_pd(vs, _mm512_load_pd(b + j),
                                            _mm512_load_pd(a + j)));
    return a[0];
}

static double bw_read_avx512(double *restrict a, const double *restrict b,
                             const double *restrict c, size_t n, double s)
{
    (void)b, (void)c, (void)s;
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0,
            s5 = s0, s6 = s0, s7 = s0;
    for (size_t i = 0; i < n; i += 64) {
        s0 = _mm512_add_pd(s0, _mm512_load_pd(a + i));
        s1 = _mm512_add_pd(s1, _mm512_load_pd(a + i + 8));
        s2 = _mm512_add_pd(s2, _mm512_load_pd(a + i + 16));
        s3 = _mm512_add_pd(s3, _mm512_load_pd(a + i + 24));
        s4 = _mm512_add_pd(s4, _mm512_load_pd(a + i + 32));
        s5 = _mm512_add_pd(s5, _mm512_load_pd(a + i + 40));
        s6 = _mm512_add_pd(s6, _mm512_load_pd(a + i + 48));
        s7 = _mm512_add_pd(s7, _mm512_load_pd(a + i + 56));
    }
    __m512d t = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(s0, s1),
                                            _mm512_add_pd(s2, s3)),
                              _mm512_add_pd(_mm512_add_pd(s4, s5),
                                            _mm512_add_pd(s6, s7)));
    double r[8];
    _mm512_storeu_pd(r, t);
    return ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
}
#define PK_SET512D(x) _mm512_set1_pd(x)
#define PK_SET512S(x) _mm512_set1_ps((float)(x))
#define PK_FMA_DECL___m512d(i) __m512d a##i = PK_SET512D(1.0 + (i) * 1e-3);
#define PK_FMA_DECL___m512(i) __m512 a##i = PK_SET512S(1.0 + (i) * 1e-3);
#define PK_STEP_OP _mm512_fmadd_pd
PK_FMA_LOOP(fma_f64_avx512, __m512d, double, PK_SET512D)
#undef PK_STEP_OP
#define PK_STEP_OP _mm512_fmadd_ps
PK_FMA_LOOP(fma_f32_avx512, __m512, float, PK_SET512S)
#undef PK_STEP_OP

const tb_peak_loops tb_cpu_peak_loops_avx512 = {
    .isa = "avx512",
    .bw = {bw_copy_avx512, bw_add_avx512, bw_triad_avx512, bw_read_avx512,
           bw_update_avx512},
    .fma = {[TB_F32] = fma_f32_avx512, [TB_F64] = fma_f64_avx512},
    .fma_flops_per_iter = {[TB_F32] = TB_PEAK_NACC * 16 * 2,
                           [TB_F64] = TB_PEAK_NACC * 8 * 2},
};
