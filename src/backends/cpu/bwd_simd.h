/* The portable drivers of the SIMD log_softmax_backward rows
 * (bwd_simd_impl.h in f32, f64_simd_impl.h in f64): dx = g - exp(y)
 * sum(g) along the axis, the sum in double (as backward.c's portable
 * row), exp by vmath's vector core (f32) or dx_exp (f64); and
 * of the max_pool2d_backward rows in f32 and f64 (2x2 windows by a row
 * function, every other geometry by backward.c's portable code). */
#ifndef TB_BACKENDS_CPU_BWD_SIMD_H
#define TB_BACKENDS_CPU_BWD_SIMD_H

#include <stdbool.h>
#include <stdint.h>

#include "../backend.h"

/* The outer lanes [o0, o1) of an f32 [outer, len, inner] layout, g, y
 * and dx alike: every lane's sum of g over its len elements, then dx. */
typedef void (*tb_cpu_bw_lsm_fn)(const float *g, const float *y, float *dx,
                                 int64_t o0, int64_t o1, int64_t len,
                                 int64_t inner);

/* Entry-point body: TB_EUNSUPPORTED when the instance is below level lv;
 * else count the launch, check the operands (op log_softmax_backward),
 * split the outer lanes over the threads and run fn on them. */
int tb_cpu_bw_lsm(void *ctx, int lv, const tb_tensor *in, tb_tensor *out,
                  const tb_params *p, tb_cpu_bw_lsm_fn fn);

/* The same in f64 (f64_simd_impl.h's rows, exp by its dx_exp). */
typedef void (*tb_cpu_bw_lsm64_fn)(const double *g, const double *y,
                                   double *dx, int64_t o0, int64_t o1,
                                   int64_t len, int64_t inner);
int tb_cpu_bw_lsm64(void *ctx, int lv, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p, tb_cpu_bw_lsm64_fn fn);

/* sum_backward and mean_backward f64 (xent_f64_simd.h's rows): dx
 * viewed as [outer, len, inner] over the reduced axis (all of x when
 * the axis is absent), g as [outer, inner]; the outer lanes [o0, o1) of
 * dx set to g's lane times scale (1, or mean's 1 / len rounded once),
 * the portable row's values. */
typedef void (*tb_cpu_bw_bcast64_fn)(const double *g, double *dx,
                                     int64_t o0, int64_t o1, int64_t len,
                                     int64_t inner, double scale);
/* Entry-point body: TB_EUNSUPPORTED below level lv; else count the
 * launch, check the operands (op id), split the outer lanes over the
 * threads and run fn on them. */
int tb_cpu_bw_bcast64(void *ctx, int lv, tb_op_id id, const tb_tensor *in,
                      tb_tensor *out, const tb_params *p,
                      tb_cpu_bw_bcast64_fn fn);

/* The same in f32 (bwd_simd_impl.h's rows): scale 1, or mean's
 * (float)(1 / len), g's lane times it in float, backward.c's portable
 * row's values. */
typedef void (*tb_cpu_bw_bcast32_fn)(const float *g, float *dx, int64_t o0,
                                     int64_t o1, int64_t len, int64_t inner,
                                     float scale);
int tb_cpu_bw_bcast32(void *ctx, int lv, tb_op_id id, const tb_tensor *in,
                      tb_tensor *out, const tb_params *p,
                      tb_cpu_bw_bcast32_fn fn);

/* max_pool2d_backward's 2x2 windows (kernel 2, stride 2, padding 0) of
 * `planes` planes: g [planes, OH, OW], x and dx [planes, H, W] (H >=
 * 2 OH, W >= 2 OW).  Each window's first maximum in the order x0[2i],
 * x0[2i+1], x1[2i], x1[2i+1] (its rows x0, x1; a NaN wins) takes g[i],
 * the other three +0, and the row and column no window covers +0: bit
 * for bit backward.c's portable loop. */
typedef void (*tb_cpu_bw_mp2_fn)(const float *g, const float *x, float *dx,
                                 int64_t planes, int64_t H, int64_t W,
                                 int64_t OH, int64_t OW);

/* Entry-point body of max_pool2d_backward f32: TB_EUNSUPPORTED below
 * level lv; else count the launch, check the operands; kernel 2 =
 * stride, padding 0 splits the N * C planes over the threads and runs fn
 * on each thread's planes;
 * every other geometry runs tb_cpu_bw_pool_f32. */
int tb_cpu_bw_max_pool(void *ctx, int lv, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p,
                       tb_cpu_bw_mp2_fn fn);

/* The same in f64 (bwd_simd_impl.h's rows on pool64_simd.h's double
 * lanes): a plane function of the same contract, other geometries by
 * tb_cpu_bw_pool_f64. */
typedef void (*tb_cpu_bw_mp2_64_fn)(const double *g, const double *x,
                                    double *dx, int64_t planes, int64_t H,
                                    int64_t W, int64_t OH, int64_t OW);
int tb_cpu_bw_max_pool64(void *ctx, int lv, const tb_tensor *in,
                         tb_tensor *out, const tb_params *p,
                         tb_cpu_bw_mp2_64_fn fn);

/* avg_pool2d_backward's (bwd_simd_impl.h's rows): the same drivers, fn
 * a plane function of the same contract writing g * 0.25 to each
 * window's four places (x unused); other geometries by
 * tb_cpu_bw_pool_f32/f64. */
int tb_cpu_bw_avg_pool(void *ctx, int lv, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p,
                       tb_cpu_bw_mp2_fn fn);
int tb_cpu_bw_avg_pool64(void *ctx, int lv, const tb_tensor *in,
                         tb_tensor *out, const tb_params *p,
                         tb_cpu_bw_mp2_64_fn fn);

/* backward.c's portable f32 pooling gradient (is_max: max_pool2d's,
 * else avg_pool2d's; any kernel k, stride st, padding pad), single
 * threaded: g [NC, OH, OW], x and dx [NC, H, W]. */
void tb_cpu_bw_pool_f32(bool is_max, const float *g, const float *x,
                        float *dx, int64_t NC, int64_t H, int64_t W,
                        int64_t OH, int64_t OW, int64_t k, int64_t st,
                        int64_t pad);
void tb_cpu_bw_pool_f64(bool is_max, const double *g, const double *x,
                        double *dx, int64_t NC, int64_t H, int64_t W,
                        int64_t OH, int64_t OW, int64_t k, int64_t st,
                        int64_t pad);

/* ---- add/sub/mul/div_backward (bwd_bin_simd.h's loops) ---- */

/* What a loop computes: dF, the full operand's gradient, and the column
 * sums of dV, the broadcast row vector's (flat: da and db of one shape,
 * SUB_A's dF = g, dV = -g).  ADD: g, sum g; SUB_A (a full): g, -sum g;
 * SUB_B (b full): -g, sum g; MUL: g v, sum g f; DIV (a full): g / v,
 * -sum g f / (v v). */
enum { TB_CPU_BWB_ADD, TB_CPU_BWB_SUB_A, TB_CPU_BWB_SUB_B, TB_CPU_BWB_MUL,
       TB_CPU_BWB_DIV };

/* flat: da, db [n] from g, a, b [n] (mode ADD, SUB_A, MUL or DIV).
 * cols: columns [c0, c1) of a full f, g, df [R, C] and a row vector v,
 * dv [C]: df and dv's column sums over all R rows. */
typedef struct tb_cpu_bw_bin_loops {
    void (*flat)(int mode, const void *g, const void *a, const void *b,
                 void *da, void *db, int64_t n);
    void (*cols)(int mode, const void *g, const void *f, const void *v,
                 void *df, void *dv, int64_t R, int64_t C, int64_t c0,
                 int64_t c1);
    int64_t lanes; /* of the loops' vectors */
} tb_cpu_bw_bin_loops;

/* Entry-point body of the binary backward ops' SIMD rows (id add, sub,
 * mul or div _backward, dt f32 or f64): TB_EUNSUPPORTED below level
 * lv; else count the launch, check the operands; equal shapes run
 * lp->flat over the threads; a full a and a b broadcast as a row
 * vector over its leading dims (or, but for div, the other way round),
 * of at least lp->lanes elements and g's last dim > 1, lp->cols over
 * strips of columns; every other case backward.c's loops
 * (tb_cpu_bw_binary_c). */
int tb_cpu_bw_binary(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                     const tb_tensor *in, tb_tensor *out,
                     const tb_params *p, const tb_cpu_bw_bin_loops *lp);

/* backward.c's portable loops of the binary backward ops (the C row's
 * body after its checks), single threaded. */
void tb_cpu_bw_binary_c(tb_op_id id, tb_dtype dt, const tb_tensor *in,
                        tb_tensor *out);

/* linear_backward f32 or f64 (operands already checked, the launch
 * counted) by backward.c's path: gz and db in one pass, then the
 * products on the level's GEMM (tb_cpu_gemm_tr; the matmul row on
 * transposed copies at the scalar level).  linbwd_avx512.c's rows hand
 * it the layers wider than their narrow loops. */
int tb_cpu_bw_linear_gemm(void *ctx, tb_dtype dt, const tb_tensor *in,
                          tb_tensor *out);

#endif
