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

/* ---- shape rules (op_shape.c; tb_shape_fn) ---- */
int tb_rule_broadcast(const tb_op *op, const tb_shape *in, const tb_params *p,
                      tb_shape *out, char *err, size_t len);
int tb_rule_same(const tb_op *op, const tb_shape *in, const tb_params *p,
                 tb_shape *out, char *err, size_t len);
int tb_rule_reduce(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len);
int tb_rule_matmul(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len);
int tb_rule_transpose(const tb_op *op, const tb_shape *in, const tb_params *p,
                      tb_shape *out, char *err, size_t len);
int tb_rule_axis_same(const tb_op *op, const tb_shape *in, const tb_params *p,
                      tb_shape *out, char *err, size_t len);
int tb_rule_reduce_ext(const tb_op *op, const tb_shape *in, const tb_params *p,
                       tb_shape *out, char *err, size_t len);
int tb_rule_permute(const tb_op *op, const tb_shape *in, const tb_params *p,
                    tb_shape *out, char *err, size_t len);
int tb_rule_linear(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len);
int tb_rule_conv2d(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len);
int tb_rule_pool2d(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len);
int tb_rule_create(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len);
int tb_rule_inplace(const tb_op *op, const tb_shape *in, const tb_params *p,
                    tb_shape *out, char *err, size_t len);
int tb_rule_optim(const tb_op *op, const tb_shape *in, const tb_params *p,
                  tb_shape *out, char *err, size_t len);
int tb_rule_linalg(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len);

/* ---- cost models (op_cost.c; tb_cost_fn) ---- */
double tb_flops_per_out(const tb_op *op, const tb_shape *in,
                        const tb_shape *out, const tb_params *p, tb_dtype dt);
double tb_flops_reduce(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt);
double tb_flops_matmul(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt);
double tb_flops_zero(const tb_op *op, const tb_shape *in, const tb_shape *out,
                     const tb_params *p, tb_dtype dt);
double tb_flops_log_softmax(const tb_op *op, const tb_shape *in,
                            const tb_shape *out, const tb_params *p,
                            tb_dtype dt);
double tb_flops_elem(const tb_op *op, const tb_shape *in, const tb_shape *out,
                     const tb_params *p, tb_dtype dt);
double tb_flops_var(const tb_op *op, const tb_shape *in, const tb_shape *out,
                    const tb_params *p, tb_dtype dt);
double tb_flops_linear(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt);
double tb_flops_conv2d(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt);
double tb_flops_pool2d(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt);
double tb_bytes_io(const tb_op *op, const tb_shape *in, const tb_shape *out,
                   const tb_params *p, tb_dtype dt);
double tb_rlen_reduce(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt);
double tb_rlen_matmul(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt);
double tb_rlen_axis(const tb_op *op, const tb_shape *in, const tb_shape *out,
                    const tb_params *p, tb_dtype dt);
double tb_rlen_conv2d(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt);
double tb_rlen_pool2d(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt);
double tb_flops_optim(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt);
double tb_flops_linalg(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt);
double tb_rlen_linalg(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt);

#endif
