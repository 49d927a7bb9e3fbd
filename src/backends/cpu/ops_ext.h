/* Portable C kernels of the cpu backend for the ops added in issue 3
 * (unary math and activations, pow/maximum/minimum, the scalar forms,
 * max/min/argmax/var, softmax, permute, add_relu, linear, conv2d and
 * pooling), in f32 and f64.
 *
 * Simple, single-threaded and correct: each kernel is the plain loop nest
 * of its op's definition, in the case dtype (f32 kernels use float libm:
 * expf, tanhf, erfcf...), in the same numerically stable forms as the
 * reference kernels (src/ops/ref.c).  Reductions whose length is not
 * bounded (var, softmax's sum) accumulate f32 data in double.  Faster
 * (SIMD, threaded) versions belong to the cpu backend proper; this file
 * is the baseline it starts from.
 *
 * Operands follow the cpu backend's rules: host memory, contiguous, the
 * kernel's dtype, outputs of exactly the shapes the op's shape rule gives
 * (every kernel re-checks this and returns TB_EINVAL/TB_ESHAPE/TB_EPARAM
 * rather than touch memory it was not given). */
#ifndef TB_BACKENDS_CPU_OPS_EXT_H
#define TB_BACKENDS_CPU_OPS_EXT_H

#include <stddef.h>
#include <stdint.h>

#include "../backend.h"

/* The checks every portable kernel makes before it runs (count the launch,
 * operand dtypes and layouts, output shapes from the op's shape rule):
 * 0 or a TB_E* code.  Shared with the SIMD rows of ops_simd.c. */
int tb_cpu_ext_begin(void *ctx, tb_op_id id, tb_dtype dt,
                     const tb_tensor *in, tb_tensor *out, const tb_params *p);
/* Parameter idx of op id: p's value if set, else the schema default. */
double tb_cpu_ext_param(const tb_params *p, tb_op_id id, int idx);

/* permute's plane transposer: o[i * ostq + j] = x[i + j * is] for i < ni,
 * j < nj (bit copies). */
typedef void (*tb_cpu_perm_tile_fn)(const float *x, float *o, int64_t ni,
                                    int64_t nj, int64_t is, int64_t ostq);
/* permute f32 (the portable row's checks and loops) with tile for the
 * planes of a permute that moves the input's contiguous dim: the entry
 * of the SIMD rows (bwd_simd_impl.h). */
int tb_cpu_ext_permute_f32(void *ctx, const tb_tensor *in, tb_tensor *out,
                           const tb_params *p, tb_cpu_perm_tile_fn tile);

#endif
