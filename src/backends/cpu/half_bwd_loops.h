/* relu_backward's loops on 16-bit patterns (half_bwd.c): plain C that
 * gcc and clang vectorize at -O3 on 16-bit compares and selects, built
 * once at the baseline (half_bwd.c: the scalar level) and once per SIMD
 * level with its flags (half_part_simd.h: 16 and 32 lanes a vector at
 * avx2 and avx512; at 1024x1024 bf16 the baseline's 8 took 110 us).
 * dx = x > 0 ? g : 0 on the patterns: x > 0 is "sign clear, not zero,
 * not NaN", a signed compare against 0 and +inf; -0 and NaN x give +0;
 * a NaN g comes out quiet as narrowing makes it (bf16: the quiet bit
 * set; f16: sign | 0x7e00, ops/half.h's tb_f32_to_f16). */
#ifndef TB_BACKENDS_CPU_HALF_BWD_LOOPS_H
#define TB_BACKENDS_CPU_HALF_BWD_LOOPS_H

#include <stdint.h>

#define HB_RELU(NAME, INF, QUIET)                                         \
    static void NAME(const uint16_t *restrict g,                          \
                     const uint16_t *restrict x, uint16_t *restrict o,    \
                     int64_t n)                                           \
    {                                                                     \
        for (int64_t i = 0; i < n; i++) {                                 \
            int16_t xi = (int16_t)x[i];                                   \
            uint16_t gi = g[i];                                           \
            int16_t ga = (int16_t)(gi & 0x7fff);                          \
            uint16_t q = ga > (int16_t)(INF) ? (uint16_t)(QUIET) : gi;    \
            o[i] = xi > 0 && xi <= (int16_t)(INF) ? q : (uint16_t)0;      \
        }                                                                 \
    }
HB_RELU(hb_relu_bf16, 0x7f80, gi | 0x40)
HB_RELU(hb_relu_f16, 0x7c00, (gi & 0x8000) | 0x7e00)

#endif
