/* bf16/f16 rows that read and write the 16-bit tensors once, outside
 * half.c's fused loops and last-axis reductions (half.c's half_run
 * routes to them before its whole-tensor widening):
 *
 * half_bwd.c: relu_backward, sum_backward and mean_backward on the
 *   16-bit patterns themselves (no f32 scratch at all); which
 *   element-wise backward ops half.c's blocks serve.
 * half_part.c: layer_norm, rms_norm and group_norm in parts of whole
 *   rows (samples) widened into per-thread f32 scratch that stays in
 *   L1/L2 (layer_norm and rms_norm at avx2 and avx512: fused, no
 *   scratch, half_norm_simd.h; their gradients at avx512 on
 *   norm_avx512.c's loops; group_norm, batch_norm_backward and
 *   group_norm_backward at avx512 on bnorm_avx512.c's parts); sum and mean over a non-last axis: the f32 column sums'
 *   additions on values widened in registers (half_part_simd.h, at
 *   avx2 and avx512) or in 64-row blocks of scratch (scalar).
 * half_lsm.c (half_lsm.h): softmax, log_softmax (last axis) and its
 *   backward in L1 blocks on the level's f32 row functions (long rows
 *   at avx512 fused); half_rows.c's chunks for what it declines.
 * half_rows.c: softmax, log_softmax (last axis) and its backward in
 *   chunks of whole rows, the pools and their backward in chunks of
 *   planes, widened into per-thread f32 scratch in L1/L2.
 *
 * Each gives the bits of half.c's widen + f32 row + narrow at the same
 * level (NaN: a NaN, quiet), which tests/test_half_paths.c checks
 * on every ISA level and thread count. */
#ifndef TB_BACKENDS_CPU_HALF_BWD_H
#define TB_BACKENDS_CPU_HALF_BWD_H

#include <stdbool.h>

#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "../backend.h"
#include "half_cvt.h"

/* relu_backward, sum_backward, mean_backward of dt (checked operands):
 * 0 done, 1 not one of these ops. */
int tb_cpu_half_bwd(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                    const tb_tensor *in, tb_tensor *out, const tb_params *p);

/* sigmoid_backward, tanh_backward, gelu_backward with g and x of the
 * output's shape: element-wise, for half.c's fused loops (avx2,
 * avx512) and blocks (the scalar level: the f32 row on L1-sized
 * blocks). */
bool tb_cpu_half_bwd_blockwise(const tb_op *op, const tb_tensor *in,
                               const tb_tensor *out);

/* layer_norm, rms_norm, group_norm (parts of whole rows or samples,
 * f32 of level isa's row `f32`), sum and mean over a non-last axis
 * (the level's f32 column sums): 0 done, an error code, or 1 not
 * served here.  p: the caller's parameters (constants already held in
 * the dtype as half.c holds them). */
int tb_cpu_half_part(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                     tb_kernel_fn f32, tb_cpu_half_cvt cv,
                     const tb_tensor *in, tb_tensor *out,
                     const tb_params *p);

/* softmax, log_softmax, log_softmax_backward over the last axis, and
 * max_pool2d, avg_pool2d and their backward (half_rows.c): chunks of
 * whole rows (planes) widened into per-thread f32 scratch, the f32 row
 * `f32` on each, narrowed; 0 done, an error code, or 1 not served. */
int tb_cpu_half_units(void *ctx, const tb_op *op, tb_kernel_fn f32,
                      tb_cpu_half_cvt cv, const tb_tensor *in,
                      tb_tensor *out, const tb_params *p);

/* acc[j] += column j's sum of x's R rows (row stride ld), j < w, as
 * the f32 column sums (kernels.h's tb_cpu_sumcols_fn) add the widened
 * values (half_part_simd.h): the level's loops for dt. */
typedef void (*tb_cpu_half_cols_fn)(const uint16_t *x, int64_t R,
                                    int64_t ld, int64_t w, double *acc);
tb_cpu_half_cols_fn tb_cpu_half_cols_avx2(tb_dtype dt);
tb_cpu_half_cols_fn tb_cpu_half_cols_avx512(tb_dtype dt);
/* layer_norm (b not NULL) or rms_norm (b NULL) of rows x rows of D
 * 16-bit values of dt into y, f32 weights w (and b), eps as the f32 row
 * gets it: norm_avx2.c's f32 row's operations on values widened in
 * registers, narrowed once (half_norm_simd.h, the avx2 level). */
void tb_cpu_half_norm_rows_avx2(tb_dtype dt, const uint16_t *x, uint16_t *y,
                                int64_t rows, int64_t D, const float *w,
                                const float *b, float eps);
/* the same at the avx512 level (norm_avx512.c: 16 lanes, the same
 * bits) */
void tb_cpu_half_norm_rows_avx512(tb_dtype dt, const uint16_t *x,
                                  uint16_t *y, int64_t rows, int64_t D,
                                  const float *w, const float *b,
                                  float eps);
/* sub, mul and div backward with one operand of g's shape (F) and the
 * other one row of w values broadcast over g's rows (half_bwd.c's
 * hb_bin), the scalar level's loop: for one row of w columns, df (F's gradient, f32) written and
 * acc (the row operand's, f32) added into, term by term as
 * backward_impl.inc's brow computes them in f32 (no fused multiply-add):
 * g and f the 16-bit row of g and F, rv the row operand's values
 * widened.  kind: HB_SUB_AF (a full, b the row) .. HB_DIV_BF. */
enum { HB_SUB_AF, HB_SUB_BF, HB_MUL, HB_DIV_AF, HB_DIV_BF,
       HB_ADD /* (half_bwbin_simd.h only) */ };
/* One element's f32 terms of kind: backward_impl.inc's brow's
 * statements, one operation a statement (no contraction): g, the full
 * operand's f (not read by add and sub) and the row operand's r; *acc,
 * the row operand's sum, updated; the full operand's term returned (the
 * scalar level's loop and the SIMD loops' last columns). */
static inline float hb_term(int kind, float gv, float fv, float r,
                            float *acc)
{
    float d, t;
    switch (kind) {
    case HB_SUB_AF:
        d = gv;
        *acc -= gv;
        break;
    case HB_SUB_BF:
        d = -gv;
        *acc += gv;
        break;
    case HB_ADD:
        d = gv;
        *acc += gv;
        break;
    case HB_MUL:
        d = gv * r;
        t = gv * fv;
        *acc += t;
        break;
    case HB_DIV_AF:
        d = gv / r;
        t = gv * fv;
        fv = r * r;
        t = t / fv;
        *acc -= t;
        break;
    default: /* HB_DIV_BF: r is a, f is b */
        d = gv * r;
        t = fv * fv;
        d = -(d / t);
        t = gv / fv;
        *acc += t;
        break;
    }
    return d;
}
typedef void (*tb_cpu_half_bin_fn)(int kind, const uint16_t *g,
                                   const uint16_t *f, const float *rv,
                                   float *df, float *acc, int64_t w);
/* the SIMD levels' loop of the same ops (half_bwbin_simd.h): columns
 * [c0, c1) of g, f, df [R, C] and of v, dv [C] (the row operand and its
 * gradient), every row, the results narrowed to the dtype in registers */
typedef void (*tb_cpu_half_bincols_fn)(int kind, const uint16_t *g,
                                       const uint16_t *f, const uint16_t *v,
                                       uint16_t *df, uint16_t *dv,
                                       int64_t R, int64_t C, int64_t c0,
                                       int64_t c1);
tb_cpu_half_bincols_fn tb_cpu_half_bincols_avx2(tb_dtype dt);
tb_cpu_half_bincols_fn tb_cpu_half_bincols_avx512(tb_dtype dt);
tb_cpu_half_bincols_fn tb_cpu_half_bincols_avx512bf16(tb_dtype dt);
/* relu_backward's loop (half_bwd_loops.h) of dt built at the level */
typedef void (*tb_cpu_half_relu_bwd_fn)(const uint16_t *g,
                                        const uint16_t *x, uint16_t *o,
                                        int64_t n);
tb_cpu_half_relu_bwd_fn tb_cpu_half_relu_bwd_avx2(tb_dtype dt);
tb_cpu_half_relu_bwd_fn tb_cpu_half_relu_bwd_avx512(tb_dtype dt);

#endif
