/* The avx512bf16 level's dot-product loops of peak_loops.h (built with
 * that level's flags only; see meson.build): TB_PEAK_NACC independent
 * chains of vdpbf16ps (bf16: each instruction 16 f32 lanes of 2 bf16
 * multiply-adds, 64 FLOPs) and of vpdpbusd (int8: 16 int32 lanes of 4
 * u8 x s8 products, 128 ops).  Its FMA loops are avx512's
 * (peak_simd_impl.h), the table there. */
#include <immintrin.h>
#include <stdint.h>

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

/* int8: vpdpbusd, acc += four u8 x s8 products in each of 16 int32
 * lanes, the instruction of matmul_int8's avx512bf16 row.  The lanes wrap
 * (no saturation, no trap); the values do not matter, only that m and c
 * are run-time bytes the compiler cannot fold. */

typedef uint32_t pk_v16u __attribute__((vector_size(64)));
/* m (0.9999999) and c (1e-7) as the operands' bytes: 100 and 1 */
#define PK_SET1_BYTES(x) ((pk_v16u)_mm512_set1_epi8((char)(int)((x)*100 + 1)))
#define PK_FMA_DECL_pk_v16u(i)                                            \
    pk_v16u a##i = (pk_v16u)_mm512_set1_epi32(i);
#define PK_STEP_OP(a, m, c)                                               \
    ((pk_v16u)_mm512_dpbusd_epi32((__m512i)(a), (__m512i)(m),             \
                                  (__m512i)(c)))
PK_FMA_LOOP(dot_int8, pk_v16u, uint32_t, PK_SET1_BYTES)

double tb_cpu_peak_dot_int8_avx512bf16(long iters, double m, double c)
{
    return dot_int8(iters, m, c);
}
