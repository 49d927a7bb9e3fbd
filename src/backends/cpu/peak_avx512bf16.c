/* The avx512bf16 level's dot-product loop of peak_loops.h (built with
 * that level's flags only; see meson.build): TB_PEAK_NACC independent
 * chains of vdpbf16ps, each instruction 16 f32 lanes of 2 bf16
 * multiply-adds (64 FLOPs).  Its FMA loops are avx512's
 * (peak_simd_impl.h), the table there. */
#include <immintrin.h>

#include "ops/half.h"
#include "peak_fma.h"

/* Each step adds c * m + c * -m (both halves of every pair): 0, exactly,
 * so the accumulators stay at their start values (near 1: no overflow,
 * no denormal) while the loop runs the instruction at full rate. */
#define PK_DOT_DECL(i) __m512 a##i = _mm512_set1_ps(1.0f + (float)(i) * 1e-3f);
#define PK_DOT_STEP(i) a##i = _mm512_dpbf16_ps(a##i, (__m512bh)x, (__m512bh)y);

double tb_cpu_peak_dot_bf16_avx512bf16(long iters, double m, double c)
{
    const unsigned bm = tb_f32_to_bf16((float)m),
                   bc = tb_f32_to_bf16((float)c);
    const __m512i x = _mm512_set1_epi32((int)(bc | bc << 16));
    const __m512i y = _mm512_set1_epi32((int)(bm | (bm ^ 0x8000u) << 16));
    PK_REP12(PK_DOT_DECL)
    for (long it = 0; it < iters; it++) {
        PK_REP12(PK_DOT_STEP)
    }
    __m512 t = _mm512_add_ps(
        _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1),
                                    _mm512_add_ps(a2, a3)),
                      _mm512_add_ps(_mm512_add_ps(a4, a5),
                                    _mm512_add_ps(a6, a7))),
        _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return (double)_mm512_reduce_add_ps(t);
}
