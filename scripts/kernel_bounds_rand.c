/*
 * The fast paths of the random ops' SIMD rows (rand_simd_impl.h:
 * rand_uniform f32, bf16, f16 and f64, rand_normal f32, bf16 and f16)
 * and of dropout's (dropout_simd.h: f32, f64), whose compute bound
 * scripts/kernel_bounds.py states (docs/perf-data/compute-bounds.json),
 * as loops for llvm-mca.  Not part of tbench: the script compiles this
 * file with the release flags of rand_avx512.c and rand_avx2.c
 * (build/compile_commands.json; dropout_avx512.c and dropout_avx2.c have
 * the same ones) to assembly, and hands each marked region to llvm-mca.
 * (rand_normal f64's step is kernel_bounds_f64.c's.)
 *
 * Each loop is the row's own step with the inline functions the shipped
 * rows call: rand_uniform's at low 0 (the default case: rs_uni24, two
 * vectors of counters; f64: one vector), rand_normal's software-pipelined
 * step (rs_normal_a/b/r/c: one block of RS_W pairs, every lane accepted,
 * the path of all but about one pair in 30000), dropout's (p < 1).  The
 * 16-bit rows narrow in registers (rs_st2).  Region names carry the
 * dtype: rand_uniform_bf16 -> rand_uniform_bf16_avx512.  KB_VECTORS(ROW,
 * N): one step makes N vectors of RS_W elements (8 at AVX-512, 4 at
 * AVX2).
 */
#include "isa.h"
#include "dropout_simd.h"
#include "rand_simd_impl.h"

#define KB_STR(s) #s
#define KB_BEGIN(ROW) __asm volatile("# LLVM-MCA-BEGIN " KB_STR(ROW))
#define KB_END(ROW) __asm volatile("# LLVM-MCA-END " KB_STR(ROW))
#define KB_FLAT __attribute__((flatten))
#define KB_VECTORS(ROW, N)                                                \
    __asm volatile("# KB-VECTORS " KB_STR(ROW) " %c0" : : "i"(N))

/* rs_uniform_k's low-0 step: 2 RS_W elements */
#define KB_UNIFORM(ROW, KD)                                               \
    void kb_##ROW(void *o, long n, uint64_t key, double hi);              \
    KB_FLAT void kb_##ROW(void *o, long n, uint64_t key, double hi)       \
    {                                                                     \
        const ri step = rs_i1((uint64_t)RS_W * TB_RAND_GAMMA);            \
        const ri step2 = rs_i1((uint64_t)(2 * RS_W) * TB_RAND_GAMMA);     \
        ri x = rs_ctr(key, 0, 1), y = rs_iadd(x, step);                   \
        const rs_f2 h = rs_uni24_h(hi);                                   \
        KB_VECTORS(ROW, 2);                                               \
        for (long i = 0; i + 2 * RS_W <= n; i += 2 * RS_W) {              \
            KB_BEGIN(ROW);                                                \
            rs_st2(o, i, rs_uni24(x, y, h), KD);                          \
            x = rs_iadd(x, step2);                                        \
            y = rs_iadd(y, step2);                                        \
            KB_END(ROW);                                                  \
        }                                                                 \
    }
KB_UNIFORM(rand_uniform_f32, RS_KF32)
KB_UNIFORM(rand_uniform_f16, RS_KF16)

/* bf16's: 4 RS_W elements, one pack for two vectors of floats */
void kb_rand_uniform_bf16(void *o, long n, uint64_t key, double hi);
KB_FLAT void kb_rand_uniform_bf16(void *o, long n, uint64_t key, double hi)
{
    const ri step = rs_i1((uint64_t)RS_W * TB_RAND_GAMMA);
    const ri step2 = rs_i1((uint64_t)(2 * RS_W) * TB_RAND_GAMMA);
    ri x = rs_ctr(key, 0, 1), y = rs_iadd(x, step);
    const rs_f2 h = rs_uni24_h(hi);
    KB_VECTORS(rand_uniform_bf16, 4);
    for (long i = 0; i + 4 * RS_W <= n; i += 4 * RS_W) {
        KB_BEGIN(rand_uniform_bf16);
        const rs_f2 f0 = rs_uni24(x, y, h);
        x = rs_iadd(x, step2);
        y = rs_iadd(y, step2);
        rs_st4(o, i, f0, rs_uni24(x, y, h), RS_KBF16F);
        x = rs_iadd(x, step2);
        y = rs_iadd(y, step2);
        KB_END(rand_uniform_bf16);
    }
}

/* rs_uniform_f64's low-0 step: RS_W elements */
void kb_rand_uniform_f64(double *o, long n, uint64_t key, double d);
KB_FLAT void kb_rand_uniform_f64(double *o, long n, uint64_t key, double d)
{
    const ri step = rs_i1((uint64_t)RS_W * TB_RAND_GAMMA);
    const rd vh = rs_d1(d * 0x1.0p-53);
    ri x = rs_ctr(key, 0, 1);
    KB_VECTORS(rand_uniform_f64, 1);
    for (long i = 0; i + RS_W <= n; i += RS_W) {
        KB_BEGIN(rand_uniform_f64);
        rs_stored(o + i, rs_mul(rs_cvt53(rs_isrl(rs_mix(x), 11)), vh));
        x = rs_iadd(x, step);
        KB_END(rand_uniform_f64);
    }
}

/* rs_normal_k's pipelined step: stage C of one block, R and B of the
 * next, A of the one after: RS_W pairs.  The values the step carries
 * from the last pass go through an empty asm after the start marker
 * (KB_CARRY), so the compiler cannot move a stage's work ahead of the
 * marker into the last pass's tail: unpinned, gcc 12 rotated the loop
 * and left stage B's cosine and sine (about 30 of the loop's 101
 * instructions) between the end and the start markers, outside the
 * region llvm-mca saw (znver4: 29.5 cycles a step for the 70 it saw,
 * 45 for the whole loop). */
#define KB_CARRY(a, b, c, d, e, f, g, h, i)                               \
    __asm volatile("" : "+v"(a), "+v"(b), "+v"(c), "+v"(d), "+v"(e),     \
                   "+v"(f), "+v"(g), "+v"(h), "+v"(i))
#define KB_NORMAL(ROW, KD)                                                \
    unsigned kb_##ROW(void *o, long n, uint64_t key, double mean,         \
                      double sd);                                         \
    KB_FLAT unsigned kb_##ROW(void *o, long n, uint64_t key, double mean, \
                              double sd)                                  \
    {                                                                     \
        const rd vm = rs_d1(mean), vs = rs_d1(sd);                        \
        const rd em = rs_d1((mean < 0 ? -mean : mean) * 0x1.0p-44);       \
        const rd k2 = rs_d1(0x1.0p-43);                                   \
        const ri step = rs_i1((uint64_t)(2 * RS_W) * TB_RAND_GAMMA);      \
        const ri g = rs_i1(TB_RAND_GAMMA);                                \
        ri xa = rs_ctr(key, 0, 2);                                        \
        rs_nst s0, s1, s2;                                                \
        rs_normal_a(&s0, xa, g);                                          \
        rs_normal_b(&s0);                                                 \
        rs_normal_r(&s0, vs);                                             \
        s1 = s0;                                                          \
        s2 = s0;                                                          \
        unsigned acc = ~0u;                                               \
        KB_VECTORS(ROW, 2);                                               \
        for (long i = 0; i + 2 * RS_W <= n; i += 2 * RS_W) {              \
            KB_BEGIN(ROW);                                                \
            KB_CARRY(s0.r, s0.c, s0.s, s1.l, s1.c, s1.s, s2.t, s2.d, xa); \
            acc &= rs_normal_c(o, i, &s0, vm, k2, em, KD);                \
            s0.l = s1.l;                                                  \
            rs_normal_r(&s0, vs);                                         \
            s0.c = s1.c;                                                  \
            s0.s = s1.s;                                                  \
            s1.t = s2.t;                                                  \
            s1.d = s2.d;                                                  \
            rs_normal_b(&s1);                                             \
            rs_normal_a(&s2, xa, g);                                      \
            xa = rs_iadd(xa, step);                                       \
            KB_END(ROW);                                                  \
        }                                                                 \
        return acc;                                                       \
    }
KB_NORMAL(rand_normal_f32, RS_KF32)
KB_NORMAL(rand_normal_bf16, RS_KBF16F) /* the row's main loop: no NaN */
KB_NORMAL(rand_normal_f16, RS_KF16)

/* dp_f64's and dp_f32's steps (dp_step_f64: RS_W elements; dp_step_f32:
 * 2 RS_W) */
void kb_dropout_f64(double *o, const double *x, long n, uint64_t key,
                    uint64_t thr, double s);
KB_FLAT void kb_dropout_f64(double *o, const double *x, long n,
                            uint64_t key, uint64_t thr, double s)
{
    const ri step = rs_i1((uint64_t)RS_W * TB_RAND_GAMMA), t = dp_thr(thr);
    const rd vs = rs_d1(s);
    ri z = rs_ctr(key, 0, 1);
    KB_VECTORS(dropout_f64, 1);
    for (long i = 0; i + RS_W <= n; i += RS_W) {
        KB_BEGIN(dropout_f64);
        dp_step_f64(o + i, x + i, z, t, vs);
        z = rs_iadd(z, step);
        KB_END(dropout_f64);
    }
}
void kb_dropout_f32(float *o, const float *x, long n, uint64_t key,
                    uint64_t thr, double s);
KB_FLAT void kb_dropout_f32(float *o, const float *x, long n, uint64_t key,
                            uint64_t thr, double s)
{
    const ri step = rs_i1((uint64_t)RS_W * TB_RAND_GAMMA), t = dp_thr(thr);
    const dp_vf vs = dp_vs32(s);
    const ri step2 = rs_iadd(step, step);
    ri z0 = rs_ctr(key, 0, 1), z1 = rs_iadd(z0, step);
    KB_VECTORS(dropout_f32, 2);
    for (long i = 0; i + 2 * RS_W <= n; i += 2 * RS_W) {
        KB_BEGIN(dropout_f32);
        dp_step_f32(o + i, x + i, z0, z1, t, vs);
        z0 = rs_iadd(z0, step2);
        z1 = rs_iadd(z1, step2);
        KB_END(dropout_f32);
    }
}
