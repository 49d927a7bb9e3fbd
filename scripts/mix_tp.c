/* mix_tp: the throughput of the random ops' 64-bit mix (rand_simd_mix.h's
 * rs_mix: splitmix64's finalizer, 3 shifts, 3 xors, 2 vpmullq per 8
 * lanes) and of dropout's AVX-512 steps (dropout_simd.h) in registers,
 * measured (issue 34: llvm-mca 19's znver4 model gives dropout's step 5
 * cycles for 16 f32 elements, where this Zen 4 runs the mix alone at
 * about 5 cycles for 8 lanes: vpsrlq zmm issues one a cycle here, so the
 * dropout rows' compute bounds in docs/perf-data/compute-bounds.json are
 * stated from these figures).
 *
 *   cc -O2 -mavx512f -mavx512dq -mavx512bw -mavx512vl \
 *      -o /tmp/mix_tp scripts/mix_tp.c
 *   /tmp/mix_tp [rounds]
 *
 * Not a test (tests/meson.build only builds it; it needs AVX-512 to
 * run).  Each loop
 * runs CH independent chains of counters (no dependency between them but
 * each chain's counter add), nothing loaded or stored, so its time is
 * the ports' time for the operations; the core clock comes from a chain
 * of dependent integer adds (1 cycle each) run just before, so the
 * figures are in core cycles.  Each figure is the smallest of ROUNDS
 * rounds (default 41), the clock the largest. */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tp_clock.h" /* now, ITERS, chain */

static inline __m512i mix(__m512i z)
{
    const __m512i c1 = _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull);
    const __m512i c2 = _mm512_set1_epi64((long long)0x94d049bb133111ebull);
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 30));
    z = _mm512_mullo_epi64(z, c1);
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 27));
    z = _mm512_mullo_epi64(z, c2);
    return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* keep an opaque value live (no code) */
#define LIVE(v) __asm__ volatile("" : "+v"(v))

/* 4 chains of 8 lanes: the mix and the counter's add, the result
 * xor-folded into the chain's own accumulator */
static double mix_only(void)
{
    const __m512i st = _mm512_set1_epi64(0x9e3779b97f4a7c15ll);
    __m512i z0 = _mm512_set1_epi64(1), z1 = _mm512_set1_epi64(2),
            z2 = _mm512_set1_epi64(3), z3 = _mm512_set1_epi64(4);
    double t0 = now();
    for (long i = 0; i < ITERS; i++) {
        __m512i a0 = mix(z0), a1 = mix(z1), a2 = mix(z2), a3 = mix(z3);
        LIVE(a0);
        LIVE(a1);
        LIVE(a2);
        LIVE(a3);
        z0 = _mm512_add_epi64(z0, st);
        z1 = _mm512_add_epi64(z1, st);
        z2 = _mm512_add_epi64(z2, st);
        z3 = _mm512_add_epi64(z3, st);
    }
    double t = now() - t0;
    LIVE(z0);
    LIVE(z1);
    LIVE(z2);
    LIVE(z3);
    return t;
}

/* dropout f32's step (dropout_simd.h, AVX-512) on a register x: two
 * 8-lane keep masks, kunpckbw, the masked scale, the product; two
 * steps (32 elements) a loop iteration */
static double drop_f32(void)
{
    const __m512i st = _mm512_set1_epi64(0x9e3779b97f4a7c15ll);
    const __m512i t = _mm512_set1_epi64(1ll << 60);
    const __m512 vs = _mm512_set1_ps(1.1f);
    __m512 x0 = _mm512_set1_ps(0.5f), x1 = _mm512_set1_ps(0.25f);
    __m512i z0 = _mm512_set1_epi64(1), z1 = _mm512_set1_epi64(2),
            z2 = _mm512_set1_epi64(3), z3 = _mm512_set1_epi64(4);
    double t0 = now();
    for (long i = 0; i < ITERS; i++) {
        __mmask8 k0 = _mm512_cmpge_epu64_mask(mix(z0), t);
        __mmask8 k1 = _mm512_cmpge_epu64_mask(mix(z1), t);
        __mmask8 k2 = _mm512_cmpge_epu64_mask(mix(z2), t);
        __mmask8 k3 = _mm512_cmpge_epu64_mask(mix(z3), t);
        __m512 o0 = _mm512_mul_ps(
            x0, _mm512_maskz_mov_ps(_mm512_kunpackb(k1, k0), vs));
        __m512 o1 = _mm512_mul_ps(
            x1, _mm512_maskz_mov_ps(_mm512_kunpackb(k3, k2), vs));
        LIVE(o0);
        LIVE(o1);
        z0 = _mm512_add_epi64(z0, st);
        z1 = _mm512_add_epi64(z1, st);
        z2 = _mm512_add_epi64(z2, st);
        z3 = _mm512_add_epi64(z3, st);
    }
    double t1 = now() - t0;
    LIVE(x0);
    LIVE(z0);
    return t1;
}

/* dropout f64's step: one 8-lane keep mask, the masked scale, the
 * product; four steps a loop iteration */
static double drop_f64(void)
{
    const __m512i st = _mm512_set1_epi64(0x9e3779b97f4a7c15ll);
    const __m512i t = _mm512_set1_epi64(1ll << 60);
    const __m512d vs = _mm512_set1_pd(1.1);
    __m512d x = _mm512_set1_pd(0.5);
    __m512i z0 = _mm512_set1_epi64(1), z1 = _mm512_set1_epi64(2),
            z2 = _mm512_set1_epi64(3), z3 = _mm512_set1_epi64(4);
    double t0 = now();
    for (long i = 0; i < ITERS; i++) {
#define D1(z)                                                             \
    {                                                                     \
        __m512d o = _mm512_mul_pd(                                        \
            x, _mm512_maskz_mov_pd(_mm512_cmpge_epu64_mask(mix(z), t), vs)); \
        LIVE(o);                                                          \
        z = _mm512_add_epi64(z, st);                                      \
    }
        D1(z0) D1(z1) D1(z2) D1(z3)
#undef D1
    }
    double t1 = now() - t0;
    LIVE(x);
    LIVE(z0);
    return t1;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 41;
    static const struct {
        const char *name;
        double (*fn)(void);
        int elems; /* elements a loop iteration */
    } t[] = {
        {"mix (rs_mix, 8 lanes)", mix_only, 32},
        {"dropout f32 step", drop_f32, 32},
        {"dropout f64 step", drop_f64, 32},
    };
    double clk = 0;
    for (int r = 0; r < rounds; r++) {
        double c = (double)ITERS * 8 / chain();
        clk = c > clk ? c : clk;
    }
    printf("core clock (dependent adds): %.3f GHz\n", clk * 1e-9);
    printf("%-30s %12s %14s\n", "loop", "cycles/8", "cycles/elem");
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        double best = 1e30;
        for (int r = 0; r < rounds; r++) {
            double s = t[i].fn();
            best = s < best ? s : best;
        }
        double cyc = best * clk / ((double)ITERS * t[i].elems);
        printf("%-30s %12.2f %14.3f\n", t[i].name, 8 * cyc, cyc);
    }
    return 0;
}
