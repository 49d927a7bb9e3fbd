/* The optimizer steps' entry for half.c: the element-wise steps (sgd,
 * sgd_momentum, adam, adamw, adagrad, adamax, nadam, radam, adabound)
 * in the mixed-precision form (ops/op.h's tb_op_in_dtype: bf16/f16 p
 * and g, f32 state) as one fused pass (optim.c, optim_simd.h): p and g
 * read as 16 bits and widened in registers, the f32 loop of level isa,
 * p rounded once to the dtype and written as 16 bits, the state read
 * and written once as f32.  The values are those of widening p and g,
 * running the f32 row of level isa and narrowing p, bit for bit. */
#ifndef TB_BACKENDS_CPU_OPTIM_H
#define TB_BACKENDS_CPU_OPTIM_H

#include "../../ops/op.h"
#include "../../ops/tensor.h"

/* The step of op id in dt (TB_BF16 or TB_F16) at level isa (one this
 * build has), operands checked as the f32 rows check theirs; 1 when this
 * path does not serve the case (lamb, lbfgs, another dtype). */
int tb_cpu_optim_half(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                      const tb_tensor *in, tb_tensor *out,
                      const tb_params *p);

#endif /* TB_BACKENDS_CPU_OPTIM_H */
