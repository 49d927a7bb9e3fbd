/* The optimizer steps' entry for half.c: the element-wise steps (sgd,
 * sgd_momentum, adam, adamw, adagrad, adamax, nadam, radam, adabound)
 * and lamb in the mixed-precision form (ops/op.h's tb_op_in_dtype:
 * bf16/f16 p and g, f32 state) as the f32 row's passes (optim.c,
 * optim_simd.h; lamb's two: optim_red.h, optim_red_simd.h) with p and g
 * read as 16 bits and widened in registers, p rounded once to the dtype
 * in registers and written as 16 bits, the state read and written as
 * f32; no scratch.  The values are those of widening p and g, running
 * the f32 row of level isa and narrowing p, bit for bit. */
#ifndef TB_BACKENDS_CPU_OPTIM_H
#define TB_BACKENDS_CPU_OPTIM_H

#include "../../ops/op.h"
#include "../../ops/tensor.h"

/* The step of op id in dt (TB_BF16 or TB_F16) at level isa (one this
 * build has), operands checked as the f32 rows check theirs; 1 when this
 * path does not serve the case (lbfgs, another dtype). */
int tb_cpu_optim_half(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                      const tb_tensor *in, tb_tensor *out,
                      const tb_params *p);

#endif /* TB_BACKENDS_CPU_OPTIM_H */
