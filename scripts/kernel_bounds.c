/*
 * The fast paths of the CPU kernel rows whose compute bound
 * scripts/kernel_bounds.py states (docs/perf-data/compute-bounds.json),
 * as loops for llvm-mca.  Not part of tbench: the script compiles this
 * file twice, with the release flags of the AVX-512 and of the AVX2
 * sources (build/compile_commands.json), to assembly, and hands each
 * marked region to llvm-mca.
 *
 * Each loop is the row's own driver step, calling the same inline
 * functions the shipped rows call (vmath_simd.h, ops_simd_impl.h,
 * pow_simd_impl.h, bwd_simd_impl.h): two vectors per step as VS_ARRAY,
 * XS_UNARY_LOOP, BW_LOOP and pw_pow_f32 do (pow's step: one block's log2 with the previous one's
 * exp2), the range checks and their branches included.  The
 * script follows, from each region's start, the shortest path to its end:
 * the step where every lane takes the fast form, which is the path every
 * vector of the benchmark's inputs takes (ops' default domain [-1, 1];
 * pow's bases [0.1, 2] and exponents [-2, 2], so |b log2 a| <= 6.7 and
 * pow's short log2).
 *
 * KB_UNARY(ROW, EXPR): ROW is the kernel row's name without its _f32_ISA
 * suffix; EXPR computes the result from the vector a.  A row whose loop
 * is not that shape (pow's is software-pipelined) writes its kb_ROW by
 * hand, the step between KB_BEGIN(ROW) and KB_END(ROW).
 */
#include "isa.h"
#include "ops_simd_impl.h"
#include "pow_simd_impl.h"
#include "bwd_simd_impl.h"
#include "lsm_simd.h"

#define KB_STR(s) #s
#define KB_BEGIN(ROW) __asm volatile("# LLVM-MCA-BEGIN " KB_STR(ROW))
#define KB_END(ROW) __asm volatile("# LLVM-MCA-END " KB_STR(ROW))

#define KB_UNARY(ROW, EXPR)                                               \
    void kb_##ROW(const float *x, float *y, long n);                      \
    void kb_##ROW(const float *x, float *y, long n)                       \
    {                                                                     \
        const vf k0 = v_set1(1.0f), k1 = v_set1(20.0f);                   \
        (void)k0;                                                         \
        (void)k1;                                                         \
        for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {      \
            KB_BEGIN(ROW);                                                \
            vf a = v_load(x + i);                                         \
            v_store(y + i, EXPR);                                         \
            a = v_load(x + i + VS_LANES);                                 \
            v_store(y + i + VS_LANES, EXPR);                              \
            KB_END(ROW);                                                  \
        }                                                                 \
    }

/* tb_vmath rows (VS_ARRAY2) */
KB_UNARY(exp, vs_exp(a))
KB_UNARY(log, vs_log(a))
KB_UNARY(tanh, vs_tanh(a))
KB_UNARY(sigmoid, vs_sigmoid(a))
KB_UNARY(silu, vs_silu(a))
KB_UNARY(gelu, vs_gelu_erf(a))
KB_UNARY(gelu_tanh, vs_gelu_tanh(a))
/* ops_simd.h rows (XS_UNARY_LOOP; softplus at beta 1, the default) */
KB_UNARY(softplus, xs_softplus1_f(a, k0, k1))
KB_UNARY(sqrt, xs_sqrt_f(a, k0, k1))
/* bwd_simd_impl.h's backward activations (BW_LOOP's step: two vectors
 * of g and x, both contiguous) */
#define KB_BINARY(ROW, F)                                                 \
    void kb_##ROW(const float *g, const float *x, float *y, long n);      \
    void kb_##ROW(const float *g, const float *x, float *y, long n)       \
    {                                                                     \
        for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {      \
            KB_BEGIN(ROW);                                                \
            v_store(y + i, F(v_load(g + i), v_load(x + i)));              \
            v_store(y + i + VS_LANES,                                     \
                    F(v_load(g + i + VS_LANES), v_load(x + i + VS_LANES))); \
            KB_END(ROW);                                                  \
        }                                                                 \
    }
KB_BINARY(sigmoid_backward, bw_sigmoid_f)
KB_BINARY(tanh_backward, bw_tanh_f)
/* The softmax family's rows on rows longer than a vector (lsm_simd.h's
 * passes, per element; log_softmax's own loop below): softmax's and
 * cross_entropy_backward's max, exp(x - m) stored while summed, and the
 * scale by 1 / s (cross_entropy_backward: g / (N s)); cross_entropy's
 * statistics alone (xent_simd.h's ks_lsm_stats: no write, the target's
 * element once a row).  Their short rows
 * (kernels_simd.h's blocks, bwd_simd_impl.h's bw_lsm_short) do the same
 * work per element plus the transposes. */
#define KB_LSM(ROW, SOFT)                                                 \
    void kb_##ROW(const float *x, float *y, long n);                      \
    void kb_##ROW(const float *x, float *y, long n)                       \
    {                                                                     \
        const vf vm_ = v_set1(x[0]), vc = v_set1(x[1]);                   \
        vf m0 = vm_, m1 = vm_, s0 = vc, s1 = vc;                          \
        for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {      \
            KB_BEGIN(ROW);                                                \
            m0 = v_max(m0, v_load(x + i));                                \
            m1 = v_max(m1, v_load(x + i + VS_LANES));                     \
            vf e0 = vs_exp(v_sub(v_load(x + i), vm_));                    \
            vf e1 = vs_exp(v_sub(v_load(x + i + VS_LANES), vm_));         \
            s0 = v_add(s0, e0);                                           \
            s1 = v_add(s1, e1);                                           \
            if (SOFT == 1) {                                              \
                v_store(y + i, e0);                                       \
                v_store(y + i + VS_LANES, e1);                            \
                v_store(y + i, v_mul(v_load(y + i), vc));                 \
                v_store(y + i + VS_LANES,                                 \
                        v_mul(v_load(y + i + VS_LANES), vc));             \
            } else if (SOFT == 0) {                                       \
                v_store(y + i, v_sub(v_sub(v_load(x + i), vm_), vc));     \
                v_store(y + i + VS_LANES,                                 \
                        v_sub(v_sub(v_load(x + i + VS_LANES), vm_), vc)); \
            }                                                             \
            KB_END(ROW);                                                  \
        }                                                                 \
        v_store(y, v_add(v_add(m0, m1), v_add(s0, s1)));                  \
    }
/* log_softmax's rows of up to TB_CPU_SUM_BLOCK (kernels_simd.h's
 * ks_lsm_pipe, ks_pipe_row): one loop over three rows, the next row's
 * max, this row's exp(x - m) summed, the previous row's (x - m) - log s
 * written (its own loads and subtractions: the rows differ). */
void kb_log_softmax(const float *xn, const float *xc, const float *xp,
                    float *y, long n);
void kb_log_softmax(const float *xn, const float *xc, const float *xp,
                    float *y, long n)
{
    const vf mc = v_set1(xc[0]), mp = v_set1(xp[0]), lp = v_set1(xp[1]);
    vf m0 = mc, m1 = mc, s0 = lp, s1 = lp;
    for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {
        KB_BEGIN(log_softmax);
        m0 = v_max(m0, v_load(xn + i));
        m1 = v_max(m1, v_load(xn + i + VS_LANES));
        s0 = v_add(s0, vs_exp(v_sub(v_load(xc + i), mc)));
        s1 = v_add(s1, vs_exp(v_sub(v_load(xc + i + VS_LANES), mc)));
        v_store(y + i, v_sub(v_sub(v_load(xp + i), mp), lp));
        v_store(y + i + VS_LANES,
                v_sub(v_sub(v_load(xp + i + VS_LANES), mp), lp));
        KB_END(log_softmax);
    }
    v_store(y, v_add(v_add(m0, m1), v_add(s0, s1)));
}
KB_LSM(softmax, 1)
KB_LSM(cross_entropy_backward, 1)
KB_LSM(cross_entropy, 2)
/* log_softmax_backward's rows longer than a vector (bwd_simd_impl.h's
 * bw_lsm_rows, per element): its sum pass (g widened to double, two
 * pairs of accumulators) and its write pass (g - exp(y) s in one fnma);
 * the short rows (bw_lsm_short) do the same work per element plus the
 * transposes. */
void kb_log_softmax_backward(const float *g, const float *y, float *dx,
                             long n);
void kb_log_softmax_backward(const float *g, const float *y, float *dx,
                             long n)
{
    bw_vd l0 = bw_dzero(), h0 = bw_dzero(), l1 = bw_dzero(),
          h1 = bw_dzero();
    const vf st = v_set1(y[0]);
    for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {
        KB_BEGIN(log_softmax_backward);
        bw_dacc(v_load(g + i), &l0, &h0);
        bw_dacc(v_load(g + i + VS_LANES), &l1, &h1);
        v_store(dx + i, v_fnma(vs_exp(v_load(y + i)), st, v_load(g + i)));
        v_store(dx + i + VS_LANES,
                v_fnma(vs_exp(v_load(y + i + VS_LANES)), st,
                       v_load(g + i + VS_LANES)));
        KB_END(log_softmax_backward);
    }
    dx[0] = (float)(bw_dhsum(l0, h0) + bw_dhsum(l1, h1));
}
/* rsqrt is left out: llvm-mca 14's Ice Lake model puts vrcp14ps on the
 * divider for as long as a vsqrtps, which makes its step 44 cycles where
 * this machine runs it in ~27 (0.86 cycles/element at 4096 elements):
 * a "bound" above the measured time is no bound.  Its row is held to
 * its memory bound only. */
/* pow_simd_impl.h's row (pw_pow_f32, both operands contiguous) */
#ifdef __AVX512F__
/* pw_pow_f32's software-pipelined loop: step k's log2 with step k - 1's
 * exp2 (the prologue and epilogue outside the region) */
void kb_pow(const float *x, const float *z, float *y, long n);
void kb_pow(const float *x, const float *z, float *y, long n)
{
    const __m512 a0 = _mm512_set1_ps(1.0f);
    pf_blk s, t;
    pf_stage_log(x, 1, z, 1, a0, a0, 0, &s);
    for (long i = 32; i + 32 <= n; i += 32) {
        KB_BEGIN(pow);
        pf_prefetch(x + i, z + i);
        pf_stage_log(x, 1, z, 1, a0, a0, i, &t);
        pf_stage_exp(x, 1, z, 1, i - 32, &s, y);
        s = t;
        KB_END(pow);
    }
}
#else
void kb_pow(const float *x, const float *z, float *y, long n);
void kb_pow(const float *x, const float *z, float *y, long n)
{
    const __m256 a0 = _mm256_set1_ps(1.0f);
    pg_tabs T;
    pg_tabs_init(&T);
    pg_blk s, t;
    pg_stage_log(&T, x, 1, z, 1, a0, a0, 0, &s);
    for (long i = 16; i + 16 <= n; i += 16) {
        KB_BEGIN(pow);
        pg_stage_log(&T, x, 1, z, 1, a0, a0, i, &t);
        pg_stage_exp(&T, x, 1, z, 1, i - 16, &s, y);
        s = t;
        KB_END(pow);
    }
}
#endif
