/* One FMA loop of peak_loops.h, written once for every level's file
 * (peak_c.c, peak_avx2.c, peak_avx512.c; each defines PK_STEP_OP and the
 * PK_FMA_DECL_<vector type> of its types around its uses). */
#ifndef TB_BACKENDS_CPU_PEAK_FMA_H
#define TB_BACKENDS_CPU_PEAK_FMA_H

#include <stddef.h>
#include <string.h>

#include "peak_loops.h"

#define PK_REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
_Static_assert(TB_PEAK_NACC == 12, "PK_REP12 expands TB_PEAK_NACC chains");

/* NAME(iters, mul, add): V is the vector type, E its element type,
 * SET1(x) broadcasts; PK_STEP_OP(a, m, c) computes a * m + c. */
#define PK_FMA_LOOP(NAME, V, E, SET1)                                      \
    static double NAME(long iters, double mul, double add)                \
    {                                                                     \
        const V m = SET1(mul), c = SET1(add);                             \
        PK_REP12(PK_FMA_DECL_##V)                                         \
        for (long it = 0; it < iters; it++) {                             \
            PK_REP12(PK_FMA_STEP)                                         \
        }                                                                 \
        V t = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) +         \
              ((a8 + a9) + (a10 + a11));                                  \
        E r[sizeof(V) / sizeof(E)];                                       \
        memcpy(r, &t, sizeof r);                                          \
        double sum = 0;                                                   \
        for (size_t i = 0; i < sizeof(V) / sizeof(E); i++)                \
            sum += (double)r[i];                                          \
        return sum;                                                       \
    }
#define PK_FMA_STEP(i) a##i = PK_STEP_OP(a##i, m, c);

/* The SIMD levels' loops (peak_avx2.c, peak_avx512.c), in the build when
 * TB_CPU_HAVE_AVX2 / TB_CPU_HAVE_AVX512 say so. */
extern const tb_peak_loops tb_cpu_peak_loops_avx2;
extern const tb_peak_loops tb_cpu_peak_loops_avx512;
extern const tb_peak_loops tb_cpu_peak_loops_avx512bf16;
/* vdpbf16ps chains (peak_avx512bf16.c, TB_CPU_HAVE_AVX512BF16). */
double tb_cpu_peak_dot_bf16_avx512bf16(long iters, double m, double c);
/* The int8 dot loop (peak_avx512bf16.c, built with the avx512bf16
 * level's flags when TB_CPU_HAVE_AVX512BF16 says so): TB_PEAK_NACC
 * chains of vpdpbusd on 512-bit vectors. */
double tb_cpu_peak_dot_int8_avx512bf16(long iters, double m, double c);

#endif
