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

/* One row of max_pool2d_backward's 2x2 windows (kernel 2, stride 2,
 * padding 0): x's rows x0, x1 and dx's rows d0, d1 (2 ow elements each),
 * g's row g (ow windows).  Each window's first maximum in the order
 * x0[2i], x0[2i+1], x1[2i], x1[2i+1] (a NaN wins) takes g[i], the other
 * three +0: bit for bit backward.c's portable row. */
typedef void (*tb_cpu_bw_mp2_fn)(const float *g, const float *x0,
                                 const float *x1, float *d0, float *d1,
                                 int64_t ow);

/* Entry-point body of max_pool2d_backward f32: TB_EUNSUPPORTED below
 * level lv; else count the launch, check the operands; kernel 2 =
 * stride, padding 0 splits the N * C planes over the threads and runs fn
 * on every window row (zeroing the row and column no window covers);
 * every other geometry runs tb_cpu_bw_pool_f32. */
int tb_cpu_bw_max_pool(void *ctx, int lv, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p,
                       tb_cpu_bw_mp2_fn fn);

/* The same in f64 (bwd_simd_impl.h's rows on pool64_simd.h's double
 * lanes): a row function of the same contract, other geometries by
 * tb_cpu_bw_pool_f64. */
typedef void (*tb_cpu_bw_mp2_64_fn)(const double *g, const double *x0,
                                    const double *x1, double *d0, double *d1,
                                    int64_t ow);
int tb_cpu_bw_max_pool64(void *ctx, int lv, const tb_tensor *in,
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

#endif
