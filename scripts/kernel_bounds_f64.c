/*
 * The fast paths of the f64 CPU kernel rows whose compute bound
 * scripts/kernel_bounds.py states (docs/perf-data/compute-bounds.json),
 * as loops for llvm-mca: kernel_bounds.c's f64 counterpart.  Not part
 * of tbench: the script compiles this file with the release flags of
 * f64_avx512.c and f64_avx2.c (build/compile_commands.json; rand_avx512.c
 * and rand_avx2.c have the same ones) to assembly, and hands each marked
 * region to llvm-mca.
 *
 * Each loop calls the same inline functions the shipped rows call
 * (f64_simd_impl.h, rand_simd_impl.h), with the rows' own step: one
 * vector for exp (dx_exp1_n; the AVX-512 row on Intel runs two such
 * independent chains a step, dx_exp2_n: the same work an element) and log, DX_SV (4 at AVX-512, 2 at AVX2) for sigmoid,
 * tanh, silu, gelu_tanh (DX_NLOOP's rows) and
 * softplus's loop (at beta 1, the default: no division by beta), DX_IL for the
 * dx_blocks rows (gelu, gelu_backward, pow), RS_IL pairs of vectors for rand_normal,
 * two for the softmax family's fused passes (KB_LSM).
 * The script follows, from each region's start, the shortest path to
 * its end: the step where every lane takes the fast form, which is the
 * path every vector of the benchmark's inputs takes (ops' default domain
 * [-1, 1]; pow's bases [0.1, 2] and exponents [-2, 2]).
 *
 * KB_VECTORS(ROW, N) tells the script how many vectors of 8 (AVX-512)
 * or 4 (AVX2) doubles one step of ROW's region produces; ROW is the
 * kernel row's name without its _ISA suffix (exp_f64).
 */
#include "isa.h"
#include "f64_simd_impl.h"
#include "rand_simd_impl.h"

#define KB_STR(s) #s
#define KB_BEGIN(ROW) __asm volatile("# LLVM-MCA-BEGIN " KB_STR(ROW))
#define KB_END(ROW) __asm volatile("# LLVM-MCA-END " KB_STR(ROW))
/* every call inlined, as the shipped rows' drivers inline their blocks */
#define KB_FLAT __attribute__((flatten))
#define KB_VECTORS(ROW, N)                                                \
    __asm volatile("# KB-VECTORS " KB_STR(ROW) " %c0" : : "i"(N))

/* B vectors a step (DX_SV: each phase for all), as f64_simd_impl.h's
 * DX_NLOOP */
#define KB_NUNARY(ROW, NAME, B)                                           \
    void kb_##ROW(const double *x, double *y, long n);                    \
    KB_FLAT void kb_##ROW(const double *x, double *y, long n)             \
    {                                                                     \
        KB_VECTORS(ROW, B);                                               \
        for (long i = 0; i + (B) * RS_W <= n; i += (B) * RS_W) {          \
            KB_BEGIN(ROW);                                                \
            rd v[B], r[B];                                                \
            _Pragma("GCC unroll 4")                                          \
            for (int j = 0; j < (B); j++)                                 \
                v[j] = rs_loadd(x + i + j * RS_W);                        \
            NAME(v, r);                                                   \
            _Pragma("GCC unroll 4")                                          \
            for (int j = 0; j < (B); j++)                                 \
                rs_stored(y + i + j * RS_W, r[j]);                        \
            KB_END(ROW);                                                  \
        }                                                                 \
    }
KB_NUNARY(exp_f64, dx_exp1_n, 1)
KB_NUNARY(log_f64, dx_log_n, 1)
KB_NUNARY(sigmoid_f64, dx_sigmoid_n, DX_SV)
KB_NUNARY(tanh_f64, dx_tanh_n, DX_SV)
KB_NUNARY(silu_f64, dx_silu_n, DX_SV)
KB_NUNARY(gelu_tanh_f64, dx_gelu_tanh_n, DX_SV)
/* sqrt and rsqrt are left out: their step is the divider's (vsqrtpd;
 * rsqrt's reciprocal at AVX-512 in the FMA pipes beside it), and both
 * models' divider is slower than Zen 4's: icelake-server gives sqrt 3.0
 * cycles an element, znver4 2.25, where this Zen 4 runs vsqrtpd zmm at
 * 2.0.  A "bound" the machine beats is no bound: their znver4 entries
 * (and div f64's, rsqrt f32's) are stated by hand from
 * scripts/divsqrt_tp.c's measurement of the unit. */

/* dx_softplus_loop's step at beta 1 (div 0), threshold 20 */
void kb_softplus_f64(const double *x, double *y, long n);
KB_FLAT void kb_softplus_f64(const double *x, double *y, long n)
{
    const rd beta = rs_d1(1.0), thr = rs_d1(20.0);
    KB_VECTORS(softplus_f64, DX_SV);
    for (long i = 0; i + DX_SV * RS_W <= n; i += DX_SV * RS_W) {
        KB_BEGIN(softplus_f64);
        dx_softplus_n(x + i, y + i, beta, thr, 0);
        KB_END(softplus_f64);
    }
}

/* DX_BLOOP's contiguous step (two vectors of g and x): the backward
 * activations sigmoid' and tanh' */
#define KB_BWD(ROW, F)                                                    \
    void kb_##ROW(const double *g, const double *x, double *y, long n);   \
    KB_FLAT void kb_##ROW(const double *g, const double *x, double *y,    \
                          long n)                                         \
    {                                                                     \
        KB_VECTORS(ROW, 2);                                               \
        for (long i = 0; i + 2 * RS_W <= n; i += 2 * RS_W) {              \
            KB_BEGIN(ROW);                                                \
            rd y0 = dx_bwd(F, rs_loadd(g + i), rs_loadd(x + i));          \
            rd y1 = dx_bwd(F, rs_loadd(g + i + RS_W),                     \
                           rs_loadd(x + i + RS_W));                       \
            rs_stored(y + i, y0);                                         \
            rs_stored(y + i + RS_W, y1);                                  \
            KB_END(ROW);                                                  \
        }                                                                 \
    }
KB_BWD(sigmoid_backward_f64, 1)
KB_BWD(tanh_backward_f64, 2)

/* dx_blocks' contiguous step: one block of DX_B elements */
void kb_gelu_f64(const double *x, double *y, long n);
KB_FLAT void kb_gelu_f64(const double *x, double *y, long n)
{
    KB_VECTORS(gelu_f64, DX_IL);
    for (long i = 0; i + DX_B <= n; i += DX_B) {
        KB_BEGIN(gelu_f64);
        dx_gelu_blk(x + i, NULL, y + i);
        KB_END(gelu_f64);
    }
}

/* gelu_backward's dx_blocks step (g and x contiguous): one block */
void kb_gelu_backward_f64(const double *g, const double *x, double *y,
                          long n);
KB_FLAT void kb_gelu_backward_f64(const double *g, const double *x,
                                  double *y, long n)
{
    KB_VECTORS(gelu_backward_f64, DX_IL);
    for (long i = 0; i + DX_B <= n; i += DX_B) {
        KB_BEGIN(gelu_backward_f64);
        dx_gelu_bwd_blk(g + i, x + i, y + i);
        KB_END(gelu_backward_f64);
    }
}

void kb_pow_f64(const double *a, const double *b, double *y, long n);
KB_FLAT void kb_pow_f64(const double *a, const double *b, double *y, long n)
{
    KB_VECTORS(pow_f64, DX_IL);
    for (long i = 0; i + DX_B <= n; i += DX_B) {
        KB_BEGIN(pow_f64);
        dx_pow_blk(a + i, b + i, y + i);
        KB_END(pow_f64);
    }
}

/* rs_normal_f64's main step: RS_IL vectors of RS_W pairs (mean 0, sd 1
 * as op_limits.py's case: the row's sd-1 step, mean + z) */
void kb_rand_normal_f64(double *y, long n, uint64_t key);
KB_FLAT void kb_rand_normal_f64(double *y, long n, uint64_t key)
{
    const rd vm = rs_d1(0.0), vs = rs_d1(1.0);
    ri x1 = rs_ctr(key, 0, 2), x2 = rs_ctr(key, 1, 2);
    KB_VECTORS(rand_normal_f64, 2 * RS_IL);
    for (long i = 0; i + 2 * RS_W * RS_IL <= n; i += 2 * RS_W * RS_IL) {
        KB_BEGIN(rand_normal_f64);
        rs_normal64_step(y + i, &x1, &x2, vm, vs, RS_IL, 1);
        KB_END(rand_normal_f64);
    }
}

/* The softmax family's f64 rows on long rows (f64_simd_impl.h's
 * passes, xent_f64_simd.h's, per element; a step of two vectors):
 * the max (a load and a max), the sum of e^(x - m) by dx_exp_nonpos
 * and the write: log_softmax (x - m) - log s; softmax and
 * cross_entropy_backward e^(x - m) stored while summed, then scaled
 * (1 / s, g / (N s)); cross_entropy no write.  Their short rows
 * (f64_lsm_short.h) do the same work per element plus the transposes. */
#define KB_LSM(ROW, SOFT)                                               \
    void kb_##ROW(const double *x, double *y, long n);                    \
    KB_FLAT void kb_##ROW(const double *x, double *y, long n)             \
    {                                                                     \
        const rd vm = rs_d1(x[0]), vc = rs_d1(x[1]);                      \
        rd m0 = vm, m1 = vm, s0 = vc, s1 = vc;                            \
        KB_VECTORS(ROW, 2);                                               \
        for (long i = 0; i + 2 * RS_W <= n; i += 2 * RS_W) {              \
            KB_BEGIN(ROW);                                                \
            m0 = rs_max(rs_loadd(x + i), m0);                             \
            m1 = rs_max(rs_loadd(x + i + RS_W), m1);                      \
            rd e0 = dx_exp_nonpos(rs_sub(rs_loadd(x + i), vm));           \
            rd e1 = dx_exp_nonpos(rs_sub(rs_loadd(x + i + RS_W), vm));    \
            s0 = rs_add(s0, e0);                                          \
            s1 = rs_add(s1, e1);                                          \
            if (SOFT == 1) {                                              \
                rs_stored(y + i, e0);                                     \
                rs_stored(y + i + RS_W, e1);                              \
                rs_stored(y + i, rs_mul(rs_loadd(y + i), vc));            \
                rs_stored(y + i + RS_W,                                   \
                          rs_mul(rs_loadd(y + i + RS_W), vc));            \
            } else if (SOFT == 0) {                                       \
                rs_stored(y + i, rs_sub(rs_sub(rs_loadd(x + i), vm), vc)); \
                rs_stored(y + i + RS_W,                                   \
                          rs_sub(rs_sub(rs_loadd(x + i + RS_W), vm), vc)); \
            }                                                             \
            KB_END(ROW);                                                  \
        }                                                                 \
        rs_stored(y, rs_add(rs_add(m0, m1), rs_add(s0, s1)));             \
    }
KB_LSM(log_softmax_f64, 0)
KB_LSM(softmax_f64, 1)
KB_LSM(cross_entropy_backward_f64, 1)
KB_LSM(cross_entropy_f64, 2)

/* log_softmax_backward's long rows: the sum of g (a load and an add),
 * then dx = g - e^y s (dx_lsm_one) */
void kb_log_softmax_backward_f64(const double *g, const double *x,
                                 double *y, long n);
KB_FLAT void kb_log_softmax_backward_f64(const double *g, const double *x,
                                         double *y, long n)
{
    const rd s = rs_d1(g[0]);
    rd a0 = s, a1 = s;
    KB_VECTORS(log_softmax_backward_f64, 2);
    for (long i = 0; i + 2 * RS_W <= n; i += 2 * RS_W) {
        KB_BEGIN(log_softmax_backward_f64);
        a0 = rs_add(a0, rs_loadd(g + i));
        a1 = rs_add(a1, rs_loadd(g + i + RS_W));
        rs_stored(y + i, dx_lsm_one(rs_loadd(g + i), rs_loadd(x + i), s));
        rs_stored(y + i + RS_W, dx_lsm_one(rs_loadd(g + i + RS_W),
                                           rs_loadd(x + i + RS_W), s));
        KB_END(log_softmax_backward_f64);
    }
    rs_stored(y, rs_add(a0, a1));
}
