/* Shape rules and cost models of the backward ops (issue 14): the
 * gradient kernels of the differentiable ops, as rows of the op table
 * (category "backward") so every backend can implement them and the
 * harness checks and times them like any op.  The rows are in op.c; the
 * reference kernels in ref_backward.c.
 *
 * Conventions, shared by every backward op: input 0 is the gradient of
 * the loss with respect to the forward op's output (g, of exactly the
 * forward output's shape); the other inputs are what the gradient needs
 * from the forward pass (its inputs, or for log_softmax and linear its
 * output); the outputs are the gradients with respect to the forward
 * inputs, of exactly their shapes.  The parameters are the forward op's.
 * Each shape rule runs the forward op's own rule and rejects a g of any
 * other shape, except that the gradient of a scalar output (sum or mean
 * over all elements without keepdim, nll_loss) is given as shape [1],
 * since an op's inputs have at least one dim. */
#ifndef TB_OPS_OP_BACKWARD_H
#define TB_OPS_OP_BACKWARD_H

#include "op.h"

/* g, x -> dx: the activations (g and x of one shape),
 * log_softmax_backward (g, y; axis as log_softmax), sum/mean_backward
 * (axis, keepdim as sum) and max/avg_pool2d_backward (pool
 * parameters). */
int tb_bw_shape_act(const tb_op *op, const tb_shape *in, const tb_params *p,
                    tb_shape *out, char *err, size_t len);
/* g, a, b -> da, db: add/sub/mul/div_backward (NumPy broadcasting) and
 * matmul_backward. */
int tb_bw_shape_binary(const tb_op *op, const tb_shape *in,
                       const tb_params *p, tb_shape *out, char *err,
                       size_t len);
/* linear_backward: g, x, W, y -> dx, dW, db (y = relu(x@W+b)). */
int tb_bw_shape_linear(const tb_op *op, const tb_shape *in,
                       const tb_params *p, tb_shape *out, char *err,
                       size_t len);
/* nll_loss: logp [N, C], target [N] -> scalar; cross_entropy alike
 * (logits [N, C]). */
int tb_bw_shape_nll(const tb_op *op, const tb_shape *in, const tb_params *p,
                    tb_shape *out, char *err, size_t len);
/* nll_loss_backward: g (scalar), logp [N, C], target [N] -> dlogp;
 * cross_entropy_backward alike (logits -> dlogits). */
int tb_bw_shape_nll_backward(const tb_op *op, const tb_shape *in,
                             const tb_params *p, tb_shape *out, char *err,
                             size_t len);
/* embedding_backward: g [..., D], idx [...] -> dW [V, D], V the
 * parameter num_weights. */
int tb_bw_shape_embedding(const tb_op *op, const tb_shape *in,
                          const tb_params *p, tb_shape *out, char *err,
                          size_t len);
/* conv2d_backward: g, x, w -> dx, dw, db (conv parameters). */
int tb_bw_shape_conv2d(const tb_op *op, const tb_shape *in,
                       const tb_params *p, tb_shape *out, char *err,
                       size_t len);

/* sdpa_backward: g [B, H, Sq, Dv], q, k, v (as sdpa, whose rule checks
 * them and g against its output) -> dq, dk, dv of their shapes. */
int tb_bw_shape_sdpa(const tb_op *op, const tb_shape *in,
                     const tb_params *p, tb_shape *out, char *err,
                     size_t len);

/* layer_norm_backward: g, x, w -> dx, dw, db; rms_norm_backward: g, x,
 * w -> dx, dw; batch_norm_backward and group_norm_backward: g, x [N, C,
 * ...], w [C] -> dx, dw, db (eps and num_groups as the forward op). */
int tb_bw_shape_norm(const tb_op *op, const tb_shape *in, const tb_params *p,
                     tb_shape *out, char *err, size_t len);

/* FLOP models (see op_backward.c for what is counted). */
double tb_bw_flops(const tb_op *op, const tb_shape *in, const tb_shape *out,
                   const tb_params *p, tb_dtype dt);
/* Terms summed into one output element, for the tolerance. */
double tb_bw_reduce_len(const tb_op *op, const tb_shape *in,
                        const tb_shape *out, const tb_params *p,
                        tb_dtype dt);

/* The class index of a target value of nll_loss (cross_entropy's, an
 * embedding's index): 0 and *cls when t is an integer in [0, C), else
 * TB_EINVAL. */
int tb_bw_class(double t, int64_t C, int64_t *cls);

#endif
