/* Reference kernels: the ground truth every backend is checked against.
 *
 * Each reads host inputs of any dtype and any strides (including the
 * stride-0 dims of a broadcast view), accumulates in double and writes
 * contiguous f64 host outputs whose shapes come from the op's shape rule.
 * Clarity over speed: these are never timed. Signature: tb_ref_fn. */
#ifndef TB_OPS_REF_H
#define TB_OPS_REF_H

#include "op.h"

int tb_ref_add(const tb_tensor *in, tb_tensor *out, const tb_params *p);
int tb_ref_sub(const tb_tensor *in, tb_tensor *out, const tb_params *p);
int tb_ref_mul(const tb_tensor *in, tb_tensor *out, const tb_params *p);
int tb_ref_div(const tb_tensor *in, tb_tensor *out, const tb_params *p);
int tb_ref_relu(const tb_tensor *in, tb_tensor *out, const tb_params *p);
int tb_ref_sum(const tb_tensor *in, tb_tensor *out, const tb_params *p);
int tb_ref_mean(const tb_tensor *in, tb_tensor *out, const tb_params *p);
int tb_ref_matmul(const tb_tensor *in, tb_tensor *out, const tb_params *p);
int tb_ref_transpose(const tb_tensor *in, tb_tensor *out,
                     const tb_params *p);
int tb_ref_log_softmax(const tb_tensor *in, tb_tensor *out,
                       const tb_params *p);

#endif
