/* The portable driver of the SIMD log_softmax_backward rows
 * (bwd_simd_impl.h): dx = g - exp(y) sum(g) along the axis, the sum in
 * double (as backward.c's portable row), exp by vmath's vector core. */
#ifndef TB_BACKENDS_CPU_BWD_SIMD_H
#define TB_BACKENDS_CPU_BWD_SIMD_H

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

#endif
