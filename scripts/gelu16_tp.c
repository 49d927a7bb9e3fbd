/* gelu16_tp: the compute bound of the gelus' rows at AVX-512 on this
 * machine, measured (issue 34: llvm-mca 19's znver4 model counts a zmm
 * vpermps as cheaper than Zen 4 runs it beside FMAs, see
 * scripts/gelu_lut_bench.c, so its figure for these loops, 0.5625
 * cycles an element, is below what they can do; the hand-stated entries
 * of docs/perf-data/compute-bounds.json cite these figures).
 *
 *   cc -O3 -std=c11 -D_GNU_SOURCE -mavx512f -mavx512bw -mavx512dq \
 *      -mavx512vl -mfma [-mavx512bf16 -mavx512vnni] -Isrc/backends/cpu \
 *      -Isrc -Iinclude -Ibuild/src -o /tmp/gelu16_tp scripts/gelu16_tp.c
 *   /tmp/gelu16_tp [rounds]
 * (with -mavx512bf16 the avx512bf16 rows, without it the avx512 ones: the
 * flags of the file each row is built from)
 *
 * Not a test, not part of tbench.  Each loop is a row's own step (the
 * f32 rows: vmath_simd.h's VS_ARRAY step, two vectors of vs_gelu_erf /
 * vs_gelu_tanh; the bf16 and f16 rows: half_simd.h's HS_STEP1 on
 * hs_gelu / hs_gelu_tanh: load, widen, the same f32 function, narrow,
 * store; gelu_backward: bwd_vf.h's bw_gelu_f on g and x, two vectors, in
 * f32 and by HS_STEP2 in bf16 and f16) over 4096 elements in [-1, 1] that stay in L1 (every lane on
 * the fast path, as the benchmark's), so memory does not limit it: its
 * time per element is the loop's compute bound here.  The core clock
 * comes from a chain of dependent integer adds run just before
 * (tp_clock.h), so the figures are in core cycles; each is the smallest
 * of ROUNDS rounds (default 41), the clock the largest. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "half_simd.h"
#include "tp_clock.h" /* now, ITERS, chain */

#define N 4096
#define REPS 400
static float xf[N], yf[N], gf[N];
static uint16_t xb[N], xh[N], yh[N], gb[N], gh[N];

#define F32_LOOP(NAME, FN)                                                \
    static double NAME(void)                                              \
    {                                                                     \
        double t0 = now();                                                \
        for (int r = 0; r < REPS; r++) {                                  \
            for (int i = 0; i < N; i += 2 * VS_LANES) {                   \
                vf a = v_load(xf + i), b = v_load(xf + i + VS_LANES);     \
                a = FN(a);                                                \
                b = FN(b);                                                \
                v_store(yf + i, a);                                       \
                v_store(yf + i + VS_LANES, b);                            \
            }                                                             \
            __asm__ volatile("" ::: "memory");                            \
        }                                                                 \
        return now() - t0;                                                \
    }
#define HALF_LOOP(NAME, DT, F, X)                                         \
    static double NAME(void)                                              \
    {                                                                     \
        const vf kv = v_set1(0.0f);                                       \
        double t0 = now();                                                \
        for (int r = 0; r < REPS; r++) {                                  \
            for (int i = 0; i < N; i += 2 * VS_LANES)                     \
                HS_STEP1(DT, F, X + i, yh + i);                           \
            __asm__ volatile("" ::: "memory");                            \
        }                                                                 \
        return now() - t0;                                                \
    }
/* gelu_backward: g and x in, bwd_vf.h's bw_gelu_f (the f32 row's and
 * the fused 16-bit loops' element function) */
static double gelu_backward_f32(void)
{
    double t0 = now();
    for (int r = 0; r < REPS; r++) {
        for (int i = 0; i < N; i += 2 * VS_LANES) {
            vf a = bw_gelu_f(v_load(gf + i), v_load(xf + i));
            vf b = bw_gelu_f(v_load(gf + i + VS_LANES),
                             v_load(xf + i + VS_LANES));
            v_store(yf + i, a);
            v_store(yf + i + VS_LANES, b);
        }
        __asm__ volatile("" ::: "memory");
    }
    return now() - t0;
}
#define HALF_BWD(NAME, DT, G, X)                                          \
    static double NAME(void)                                              \
    {                                                                     \
        double t0 = now();                                                \
        for (int r = 0; r < REPS; r++) {                                  \
            for (int i = 0; i < N; i += 2 * VS_LANES)                     \
                HS_STEP2(DT, , bw_gelu_f, G + i, X + i, yh + i);            \
            __asm__ volatile("" ::: "memory");                            \
        }                                                                 \
        return now() - t0;                                                \
    }
HALF_BWD(gelu_backward_bf16, bf16, gb, xb)
HALF_BWD(gelu_backward_f16, f16, gh, xh)
F32_LOOP(gelu_f32, vs_gelu_erf)
F32_LOOP(gelu_tanh_f32, vs_gelu_tanh)
HALF_LOOP(gelu_bf16, bf16, hs_gelu, xb)
HALF_LOOP(gelu_tanh_bf16, bf16, hs_gelu_tanh, xb)
HALF_LOOP(gelu_f16, f16, hs_gelu, xh)
HALF_LOOP(gelu_tanh_f16, f16, hs_gelu_tanh, xh)

/* lv: the level whose flags the row is built with (1: avx512bf16,
 * half_avx512bf16.c; 0: avx512, vmath_avx512.c / half_avx512.c); a
 * build prints the rows of its own flags' level (f32 ones at both) */
static const struct {
    const char *name;
    double (*fn)(void);
    int lv;
} loops[] = {{"gelu_f32_avx512", gelu_f32, -1},
             {"gelu_tanh_f32_avx512", gelu_tanh_f32, -1},
             {"gelu_bf16_avx512bf16", gelu_bf16, 1},
             {"gelu_tanh_bf16_avx512bf16", gelu_tanh_bf16, 1},
             {"gelu_f16_avx512", gelu_f16, 0},
             {"gelu_tanh_f16_avx512", gelu_tanh_f16, 0},
             {"gelu_backward_f32_avx512", gelu_backward_f32, -1},
             {"gelu_backward_bf16_avx512", gelu_backward_bf16, 0},
             {"gelu_backward_f16_avx512", gelu_backward_f16, 0}};
#ifdef __AVX512BF16__
#define GT_LV 1
#else
#define GT_LV 0
#endif
enum { NL = sizeof loops / sizeof loops[0] };

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 41;
    for (int i = 0; i < N; i++) {
        xf[i] = -1.0f + 2.0f * (float)i / N;
        xb[i] = tb_f32_to_bf16(xf[i]);
        xh[i] = tb_f32_to_f16(xf[i]);
        gf[i] = 0.5f - (float)(i % 7) / 8;
        gb[i] = tb_f32_to_bf16(gf[i]);
        gh[i] = tb_f32_to_f16(gf[i]);
    }
    double best[NL], hz = 0;
    for (int l = 0; l < NL; l++)
        best[l] = 1e30;
    for (int r = 0; r < rounds; r++) {
        double c = 8.0 * ITERS / chain();
        if (c > hz)
            hz = c;
        for (int l = 0; l < NL; l++) {
            double t = loops[l].fn();
            if (t < best[l])
                best[l] = t;
        }
    }
    printf("core clock %.2f GHz (dependent adds)\n", hz * 1e-9);
    for (int l = 0; l < NL; l++)
        if (loops[l].lv < 0 || loops[l].lv == GT_LV)
            printf("%-26s %.4f cycles/element in L1\n", loops[l].name,
                   best[l] * hz / ((double)N * REPS));
    return 0;
}
