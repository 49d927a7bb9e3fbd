/* The op table's rules and models, shared by op.c (the table) and the
 * files that define them (op_shape.c, op_cost.c, op_params.c): private
 * to src/ops. */
#ifndef TB_OPS_OP_RULES_H
#define TB_OPS_OP_RULES_H

#include <stddef.h>

#include "op.h"

/* Write the printf-formatted reason into err (when err and len are
 * set) and return code: the error of every shape rule. */
int tb_op_fail(char *err, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static inline double op_numel_d(const tb_shape *s)
{
    return (double)tb_shape_numel(s);
}

static inline double op_dtype_bytes(tb_dtype dt)
{
    return (double)tb_dtype_size(dt);
}

/* The function types of op.h's tb_shape_fn and tb_cost_fn, to declare
 * the table's rules and models by. */
typedef int tb_shape_rule(const tb_op *op, const tb_shape *in,
                          const tb_params *p, tb_shape *out, char *err,
                          size_t len);
typedef double tb_cost_model(const tb_op *op, const tb_shape *in,
                             const tb_shape *out, const tb_params *p,
                             tb_dtype dt);

/* ---- shape rules (op_shape.c; tb_shape_fn) ---- */
tb_shape_rule tb_rule_broadcast, tb_rule_same, tb_rule_reduce, tb_rule_matmul,
    tb_rule_transpose, tb_rule_axis_same, tb_rule_reduce_ext, tb_rule_permute,
    tb_rule_linear, tb_rule_conv2d, tb_rule_pool2d, tb_rule_create,
    tb_rule_inplace, tb_rule_optim, tb_rule_linalg, tb_rule_matmul_int8,
    tb_rule_norm, tb_rule_sdpa, tb_rule_causal_mask, tb_rule_embedding,
    tb_rule_nc_norm, tb_rule_lbfgs, tb_rule_einsum, tb_rule_workload;

/* ---- cost models (op_cost.c; tb_cost_fn) ---- */
tb_cost_model tb_flops_per_out, tb_flops_reduce, tb_flops_matmul,
    tb_flops_zero, tb_flops_log_softmax, tb_flops_elem, tb_flops_var,
    tb_flops_linear, tb_flops_conv2d, tb_flops_pool2d, tb_bytes_io,
    tb_rlen_reduce, tb_rlen_matmul, tb_rlen_axis, tb_rlen_conv2d,
    tb_rlen_lastdim, tb_flops_sdpa, tb_bytes_sdpa_unfused, tb_rlen_sdpa,
    tb_rlen_pool2d, tb_flops_optim, tb_flops_linalg, tb_rlen_linalg,
    tb_flops_batch_norm, tb_rlen_batch_norm, tb_rlen_group_norm,
    tb_rlen_optim, tb_flops_sdpa_backward, tb_rlen_sdpa_backward,
    tb_flops_einsum, tb_rlen_einsum, tb_flops_workload, tb_bytes_optim_red;

#endif
