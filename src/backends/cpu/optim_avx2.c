/*
 * Optimizer-step loops at the AVX2 level (built with only this level's
 * -m flags; see meson.build): the template of optim_simd.h at 8 f32 /
 * 4 f64 lanes.  optim.c finishes the tail of each part with its portable
 * loop, so no masked accesses are needed here.
 */
#include <immintrin.h>
#include <stdint.h>

#include "optim_simd.h"

static inline __m256 sqrt_ps(__m256 x) { return _mm256_sqrt_ps(x); }
static inline __m256d sqrt_pd(__m256d x) { return _mm256_sqrt_pd(x); }
static inline __m256 fma_ps(__m256 a, __m256 b, __m256 c)
{
    return _mm256_fmadd_ps(a, b, c);
}
static inline __m256d fma_pd(__m256d a, __m256d b, __m256d c)
{
    return _mm256_fmadd_pd(a, b, c);
}
/* a > b ? a : b per lane (b where either is NaN). */
static inline __m256 max_ps(__m256 a, __m256 b) { return _mm256_max_ps(a, b); }
static inline __m256d max_pd(__m256d a, __m256d b)
{
    return _mm256_max_pd(a, b);
}
/* |x|: clear the sign bit. */
static inline __m256 abs_ps(__m256 x)
{
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
}
static inline __m256d abs_pd(__m256d x)
{
    return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
}

/* A scalar second operand of OPT_FMA is broadcast ((vt){0} + b). */
#define OPT_SQRT(x) sqrt_ps(x)
#define OPT_FMA(a, b, c) fma_ps((a), (__m256){0} + (b), (c))
#define OPT_MAX(a, b) max_ps((a), (b))
#define OPT_ABS(x) abs_ps(x)
#define OPT_ET float
#define OPT_VT __m256
#define OPT_NAME loops_f32
#include "optim_simd.h"
#undef OPT_SQRT
#undef OPT_FMA
#undef OPT_MAX
#undef OPT_ABS

#define OPT_SQRT(x) sqrt_pd(x)
#define OPT_FMA(a, b, c) fma_pd((a), (__m256d){0} + (b), (c))
#define OPT_MAX(a, b) max_pd((a), (b))
#define OPT_ABS(x) abs_pd(x)
#define OPT_ET double
#define OPT_VT __m256d
#define OPT_NAME loops_f64
#include "optim_simd.h"

int64_t tb_optim_f32_avx2(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f32(j, b, e);
}

int64_t tb_optim_f64_avx2(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f64(j, b, e);
}
