/* SIMD rows (AVX2, AVX-512) of softplus, sqrt, rsqrt, leaky_relu,
 * maximum, minimum, max, min, argmax and var in f32 over their C rows
 * (math_c.c, reduce_c.c), with their portable drivers; the f64
 * reductions (f64_simd_impl.h) and pow f32 (pow_simd_impl.h) use the
 * same drivers.
 *
 * Split like the rest of the backend: this header and ops_simd.c are
 * portable (operand checks, parameters, broadcasting and the thread
 * split); the inner loops live in ops_simd_impl.h, compiled once per ISA
 * level by ops_avx2.c and ops_avx512.c with that level's flags only.  An
 * entry point of level L (kreg.h's table: the SIMD rows of softplus,
 * sqrt, rsqrt, leaky_relu in the math family, maximum and minimum in
 * arithmetic, max, min, argmax and var in the reductions) hands its own
 * level's loop to the driver here, so the recorded impl name is always
 * the code that ran.
 *
 * Results (tests/test_checkasm.c, op_* at every level and thread count,
 * and xs_* directly against the portable row):
 *   sqrt, rsqrt (1 / sqrt), leaky_relu, maximum, minimum: bit for bit the
 *     portable kernels' values (the same correctly rounded IEEE
 *     operations; NaN rule of maximum/minimum: a NaN in either operand
 *     gives a + b, a NaN);
 *   softplus: log1p(exp(z)) / beta in the stable form max(z, 0) +
 *     log1p(exp(-|z|)), z = beta x (no product or division when beta is
 *     1), and x where z > threshold (the reference's rule); exp is
 *     vmath's vector core (vmath_simd.h), log1p on [0, 1] one fitted
 *     polynomial e + e^2 Q(e), Q of degree 9 (ops_simd_impl.h; no log,
 *     no division): within 4 ulp of the double definition for
 *     normal results (3.39 measured by the default sweep, 3.48 at
 *     --vmath-stride 7; 3.48, at x = 0x1.a159p-9, over every float
 *     |x| <= 128 with beta 1 and 2, AVX2 and AVX-512 bit for bit; the
 *     op's tolerance,
 *     rtol 1e-6 and
 *     atol FLT_MIN, since results below FLT_MIN are rounded from an
 *     underflowed exp). */
#ifndef TB_BACKENDS_CPU_OPS_SIMD_H
#define TB_BACKENDS_CPU_OPS_SIMD_H

#include <stdint.h>

#include "../backend.h"

/* o[i] = f(x[i]) for i < n; k: the op's float parameters (double). */
typedef void (*tb_cpu_simd_unary_fn)(const void *x, void *o, int64_t n,
                                     const double *k);
/* o[i] = f(a[i * sa], b[i * sb]) for i < n, sa and sb 0 or 1. */
typedef void (*tb_cpu_simd_binary_fn)(const void *a, int64_t sa,
                                      const void *b, int64_t sb, void *o,
                                      int64_t n);

/* Entry-point bodies: TB_EUNSUPPORTED when the instance is below level
 * lv; else count the launch, check the operands against op id's shape
 * rule, then run fn over the tensor (unary: split over the threads,
 * `weight` element operations per element deciding whether it is worth
 * it; binary: equal shapes split over the threads, broadcasts row by
 * row through an odometer). */
int tb_cpu_simd_unary(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                      const tb_tensor *in, tb_tensor *out, const tb_params *p,
                      int64_t weight, tb_cpu_simd_unary_fn fn);
int tb_cpu_simd_binary(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                       const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_cpu_simd_binary_fn fn);

/* Reductions max, min, argmax and var (f32; argmax's index as a
 * float): the input as [outer, len, inner] lanes (reduce_c.c's layout:
 * param 0 "axis", absent: one lane of every element; var's param 2 is
 * its correction, corr).  lane: a contiguous lane (inner 1); cols: w <=
 * TB_CPU_SIMD_COLS adjacent lanes of a non-last axis, lane t reading x[j
 * * step + t].  max/min/argmax give exactly the portable kernels'
 * values (the first NaN of a lane or the first maximum; argmax: its
 * first index); var: a contiguous lane by var_simd.h (f64:
 * f64_simd_impl.h), read from memory once (blocks around a predicted,
 * checked shift, the two-pass form where the check fails, merged
 * pairwise), a non-last axis by the two-pass form in double (mean, then
 * (sum d^2 - (sum d)^2 / n) / (n - corr) with d = x - mean) in vector
 * partial sums: within the op's tolerance of the reference.  Outer
 * lanes split over the threads.  Each reads its input once (var's
 * non-last axis twice): a
 * contiguous lane in one vector pass (argmax keeps per-lane indices,
 * max/min check NaNs once per lane; a lane with a NaN, or max/min's zero
 * extreme, is scanned again), a non-last axis row by row, every row read
 * from start to end (up to TB_CPU_SIMD_COLS32 lanes per call for max, min
 * and argmax, TB_CPU_SIMD_COLS for var). */
#define TB_CPU_SIMD_COLS 256
/* max, min and argmax f32's cols take up to this many lanes (their
 * running values and indices, 16 KiB each, stay in L1 while every row
 * is read from start to end). */
#define TB_CPU_SIMD_COLS32 4096
/* The function types of the rows and the driver, for element type T:
 * (S empty, float) tb_cpu_simd_lane_fn, tb_cpu_simd_cols_fn and
 * tb_cpu_simd_reduce; (S 64, double: f64_simd_impl.h's max, min, argmax
 * and var rows) tb_cpu_simd_lane64_fn, tb_cpu_simd_cols64_fn and
 * tb_cpu_simd_reduce64. */
#define TB_CPU_SIMD_REDUCE_API(S, T)                                      \
    typedef T (*tb_cpu_simd_lane##S##_fn)(const T *x, int64_t len,        \
                                          int64_t corr);                  \
    typedef void (*tb_cpu_simd_cols##S##_fn)(const T *x, T *o,            \
                                             int64_t len, int64_t step,   \
                                             int64_t w, int64_t corr);    \
    int tb_cpu_simd_reduce##S(void *ctx, int lv, tb_op_id id,             \
                              const tb_tensor *in, tb_tensor *out,        \
                              const tb_params *p,                         \
                              tb_cpu_simd_lane##S##_fn lane,              \
                              tb_cpu_simd_cols##S##_fn cols);
TB_CPU_SIMD_REDUCE_API(, float)
TB_CPU_SIMD_REDUCE_API(64, double)

/* Short last-axis rows of f32 several at once: o[r] = the reduction of
 * row r of x's rows x len (len <= the short_n given with it), the lane
 * function's value for each row. */
typedef void (*tb_cpu_simd_rows_fn)(const float *x, float *o, int64_t rows,
                                    int64_t len);
/* tb_cpu_simd_reduce, with rows (and short_n) for a last axis of at most
 * short_n elements */
int tb_cpu_simd_reduce_rows(void *ctx, int lv, tb_op_id id,
                            const tb_tensor *in, tb_tensor *out,
                            const tb_params *p, tb_cpu_simd_lane_fn lane,
                            tb_cpu_simd_cols_fn cols,
                            tb_cpu_simd_rows_fn rows, int64_t short_n);

/* tb_cpu_simd_binary with fn_nt in place of fn where both inputs have the
 * output's element count and the three tensors hold at least 64 MiB
 * (cpu.c's streaming-store threshold): fn_nt gives fn's values, the
 * output's whole 64-byte lines written with streaming stores, then a
 * store fence (maximum and minimum, f32 and f64). */
int tb_cpu_simd_binary_nt(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                          const tb_tensor *in, tb_tensor *out,
                          const tb_params *p, tb_cpu_simd_binary_fn fn,
                          tb_cpu_simd_binary_fn fn_nt);

/* var's bf16/f16 contiguous lanes (var_simd.h, at the level SFX): the
 * f32 lane's value on the widened elements, bit for bit, read from the
 * 16-bit lane itself.  dt TB_BF16 or TB_F16. */
#define TB_CPU_VAR16_LANE(SFX) tb_cpu_var16_lane_##SFX
float tb_cpu_var16_lane_avx2(const uint16_t *x, int64_t len, int64_t corr,
                             tb_dtype dt);
float tb_cpu_var16_lane_avx512(const uint16_t *x, int64_t len,
                               int64_t corr, tb_dtype dt);
/* var bf16/f16 (half.c's rows at avx2 and avx512) over every element or
 * the last axis: each lane by the level's tb_cpu_var16_lane (the best
 * at or below isa), rounded once to dt, the lanes split over the
 * threads; 1 where it does not serve the case (another axis, an empty
 * lane, isa below avx2), else 0.  Operands checked by the caller. */
int tb_cpu_half_var(void *ctx, tb_dtype dt, int isa, const tb_tensor *in,
                    tb_tensor *out, const tb_params *p);

/* pow f32's SIMD rows (pow_simd_impl.h), called directly by the sweep
 * test: o[i] = a[i]^b[i], i < n.  Call only where the level runs. */
void tb_cpu_pow_f32_avx2(const float *a, const float *b, float *o,
                         int64_t n);
void tb_cpu_pow_f32_avx512(const float *a, const float *b, float *o,
                           int64_t n);
/* pow f64's SIMD rows (f64_simd_impl.h), for the sweep test: o[i] =
 * a[i]^b[i], i < n. */
void tb_cpu_pow_f64_avx2(const double *a, const double *b, double *o,
                         int64_t n);
void tb_cpu_pow_f64_avx512(const double *a, const double *b, double *o,
                           int64_t n);
/* exp and log f64's SIMD rows (f64_simd_impl.h), for the sweep test:
 * o[i] = f(x[i]), i < n.  Call only where the level runs. */
void tb_cpu_exp_f64_avx2(const double *x, double *o, int64_t n);
void tb_cpu_exp_f64_avx512(const double *x, double *o, int64_t n);
void tb_cpu_log_f64_avx2(const double *x, double *o, int64_t n);
void tb_cpu_log_f64_avx512(const double *x, double *o, int64_t n);
/* sigmoid (fn 0), tanh (1), silu (2), softplus (3: beta 1,
 * threshold 20), gelu (4) and gelu_tanh (5) f64's vector loops, for the
 * ulp test */
void tb_cpu_act_f64_avx2(int fn, const double *x, double *o, int64_t n);
void tb_cpu_act_f64_avx512(int fn, const double *x, double *o, int64_t n);
/* The backward activations' f64 SIMD rows, for the sweep test: o[i] =
 * dx from g[i] and x[i], fn 0 relu, 1 sigmoid, 2 tanh, 3 gelu. */
void tb_cpu_act_bwd_f64_avx2(int fn, const double *g, const double *x,
                             double *o, int64_t n);
void tb_cpu_act_bwd_f64_avx512(int fn, const double *g, const double *x,
                               double *o, int64_t n);

#endif
