/*
 * Optimizer-step loops at the AVX-512 level (built with only this level's
 * -m flags; see meson.build): the template of optim_simd.h at 16 f32 /
 * 8 f64 lanes.  optim.c finishes the tail of each part with its portable
 * loop, so no masked accesses are needed here.
 */
#include <immintrin.h>
#include <stdint.h>

#include "optim_simd.h"

static inline __m512 sqrt_ps(__m512 x) { return _mm512_sqrt_ps(x); }
static inline __m512d sqrt_pd(__m512d x) { return _mm512_sqrt_pd(x); }
static inline __m512 fma_ps(__m512 a, __m512 b, __m512 c)
{
    return _mm512_fmadd_ps(a, b, c);
}
static inline __m512d fma_pd(__m512d a, __m512d b, __m512d c)
{
    return _mm512_fmadd_pd(a, b, c);
}
/* a > b ? a : b per lane (b where either is NaN). */
static inline __m512 max_ps(__m512 a, __m512 b) { return _mm512_max_ps(a, b); }
static inline __m512d max_pd(__m512d a, __m512d b)
{
    return _mm512_max_pd(a, b);
}
static inline __m512 abs_ps(__m512 x) { return _mm512_abs_ps(x); }
static inline __m512d abs_pd(__m512d x) { return _mm512_abs_pd(x); }

/* A scalar second operand of OPT_FMA is broadcast ((vt){0} + b). */
#define OPT_SQRT(x) sqrt_ps(x)
#define OPT_FMA(a, b, c) fma_ps((a), (__m512){0} + (b), (c))
#define OPT_MAX(a, b) max_ps((a), (b))
#define OPT_ABS(x) abs_ps(x)
#define OPT_ET float
#define OPT_VT __m512
#define OPT_NAME loops_f32
#include "optim_simd.h"
#undef OPT_SQRT
#undef OPT_FMA
#undef OPT_MAX
#undef OPT_ABS

#define OPT_SQRT(x) sqrt_pd(x)
#define OPT_FMA(a, b, c) fma_pd((a), (__m512d){0} + (b), (c))
#define OPT_MAX(a, b) max_pd((a), (b))
#define OPT_ABS(x) abs_pd(x)
#define OPT_ET double
#define OPT_VT __m512d
#define OPT_NAME loops_f64
#include "optim_simd.h"

int64_t tb_optim_f32_avx512(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f32(j, b, e);
}

int64_t tb_optim_f64_avx512(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f64(j, b, e);
}
