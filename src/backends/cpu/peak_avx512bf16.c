/* The avx512bf16 level's own loop of peak_loops.h (built with that
 * level's flags only; see meson.build): TB_PEAK_NACC independent chains
 * of vpdpbusd, acc += four u8 x s8 products in each of 16 int32 lanes,
 * the instruction of matmul_int8's avx512bf16 row.  The lanes wrap (no
 * saturation, no trap); the values do not matter, only that m and c are
 * run-time bytes the compiler cannot fold. */
#include <immintrin.h>
#include <stdint.h>

#include "peak_fma.h"

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
