/*
 * Why gelu f32 at avx512 runs ~1.65x its llvm-mca znver4 bound on Zen 4
 * (docs/ARCHITECTURE.md, "CPU kernels at a compute bound"): two
 * microbenchmarks, not part of tbench.
 *   cc -O3 -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma \
 *      -Isrc/backends/cpu -o /tmp/gelu_lut_bench scripts/gelu_lut_bench.c
 * 1. Throughput of six independent zmm FMAs, vpermps, vaddps and pairs
 *    of those groups (TSC ticks per group; six FMAs take 6 core cycles,
 *    which gives the TSC-to-core ratio).
 * 2. The row's element function (vs_gelu_erf) on 4096 values in [-1, 1]
 *    in L1, and the same arithmetic with its eight vpermps lookups a
 *    vector replaced by loop-invariant broadcasts (wrong values), or
 *    four of them: TSC ticks per element, min of 400 runs.  (Written
 *    for the 8-piece core, which AVX2 keeps; at AVX-512 vs_gelu_erf is
 *    now vs_gelu16_core, six lookups: "row" measures that one, the
 *    broadcast variants still the 8-piece arithmetic; gelu16_tp.c
 *    measures the rows' steps in core cycles.)
 */
#include <stdint.h>
#include <stdio.h>
#include <x86intrin.h>

#include "vmath_simd.h"

#define OP3(I, A, B, D) I " %%zmm" A ", %%zmm" B ", %%zmm" D "\n"
#define FMA6                                                              \
    OP3("vfmadd231ps", "30", "31", "0") OP3("vfmadd231ps", "30", "31", "1") \
    OP3("vfmadd231ps", "30", "31", "2") OP3("vfmadd231ps", "30", "31", "3") \
    OP3("vfmadd231ps", "30", "31", "4") OP3("vfmadd231ps", "30", "31", "5")
#define PERM6                                                             \
    OP3("vpermps", "30", "29", "10") OP3("vpermps", "30", "29", "11")     \
    OP3("vpermps", "30", "29", "12") OP3("vpermps", "30", "29", "13")     \
    OP3("vpermps", "30", "29", "14") OP3("vpermps", "30", "29", "15")
#define ADD6                                                              \
    OP3("vaddps", "30", "20", "20") OP3("vaddps", "30", "21", "21")       \
    OP3("vaddps", "30", "22", "22") OP3("vaddps", "30", "23", "23")       \
    OP3("vaddps", "30", "24", "24") OP3("vaddps", "30", "25", "25")
#define CLOBBER                                                           \
    "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm10",    \
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm20", "xmm21",    \
        "xmm22", "xmm23", "xmm24", "xmm25"
#define BENCH(NAME, BODY)                                                 \
    static double NAME(void)                                              \
    {                                                                     \
        uint64_t best = ~0ull;                                            \
        for (int rep = 0; rep < 300; rep++) {                             \
            uint64_t t0 = __rdtsc();                                      \
            for (int r = 0; r < 1000; r++)                                \
                __asm volatile(BODY BODY ::: CLOBBER);                    \
            uint64_t d = __rdtsc() - t0;                                  \
            if (d < best)                                                 \
                best = d;                                                 \
        }                                                                 \
        return (double)best / 2000.0;                                     \
    }
BENCH(b_fma, FMA6)
BENCH(b_perm, PERM6)
BENCH(b_add, ADD6)
BENCH(b_fma_perm, FMA6 PERM6)
BENCH(b_fma_add, FMA6 ADD6)
BENCH(b_perm_add, PERM6 ADD6)

/* vs_gelu_erf_core's arithmetic, lookups as broadcasts (all, or the
 * even coefficients') */
static inline vf poly_b(const float (*t)[8], vs_idx j, vf u, int half)
{
    vf p = v_fma(v_set1(t[6][3]), u,
                 half ? v_lookup8(t[5], j) : v_set1(t[5][3]));
    p = v_fma(p, u, v_set1(t[4][3]));
    p = v_fma(p, u, half ? v_lookup8(t[3], j) : v_set1(t[3][3]));
    p = v_fma(p, u, v_set1(t[2][3]));
    p = v_fma(p, u, half ? v_lookup8(t[1], j) : v_set1(t[1][3]));
    return v_fma(p, u, v_set1(t[0][3]));
}
static inline vf gelu_b(vf x, int half)
{
    vm in = v_le(v_abs(x), v_set1(VS_GELU_FAST));
    if (!m_all(in))
        return x;
    vs_idx j;
    vf u = half ? vs_gelu_piece(v_abs(x), vs_gelu_ctr, &j)
                : v_sub(v_abs(x), v_set1(vs_gelu_ctr[3]));
    if (!half)
        j = v_trunc_idx(v_mul(v_abs(x), v_set1(2.666f)));
    vf p = poly_b(vs_gelu_pc, j, u, half);
    return v_signsel_sub(x, x, v_mul(x, p));
}
static inline vf gelu_nolut(vf x) { return gelu_b(x, 0); }
static inline vf gelu_halflut(vf x) { return gelu_b(x, 1); }

#define N 4096
static float xs[N], ys[N];
#define BENCHF(NAME, F)                                                   \
    static double NAME(void)                                              \
    {                                                                     \
        uint64_t best = ~0ull;                                            \
        for (int rep = 0; rep < 400; rep++) {                             \
            uint64_t t0 = __rdtsc();                                      \
            for (int i = 0; i < N; i += 32) {                             \
                vf a = v_load(xs + i), b = v_load(xs + i + 16);           \
                v_store(ys + i, F(a));                                    \
                v_store(ys + i + 16, F(b));                               \
            }                                                             \
            uint64_t d = __rdtsc() - t0;                                  \
            if (d < best)                                                 \
                best = d;                                                 \
        }                                                                 \
        return (double)best / N;                                          \
    }
BENCHF(b_real, vs_gelu_erf)
BENCHF(b_nolut, gelu_nolut)
BENCHF(b_half, gelu_halflut)

int main(void)
{
    for (int k = 0; k < 2; k++)
        printf("TSC ticks per group of 6: fma %.2f perm %.2f add %.2f | "
               "fma+perm %.2f fma+add %.2f perm+add %.2f\n",
               b_fma(), b_perm(), b_add(), b_fma_perm(), b_fma_add(),
               b_perm_add());
    for (int i = 0; i < N; i++)
        xs[i] = -1.0f + 2.0f * (float)i / N;
    for (int k = 0; k < 2; k++)
        printf("TSC ticks/element: row %.3f, lookups as broadcasts %.3f, "
               "half of them %.3f\n",
               b_real(), b_nolut(), b_half());
    return ys[5] > 1.0f;
}
