/* A small tape autograd over the op table (issue 14).
 *
 * A tb_ag records the forward ops it runs (tb_ag_apply) on variables
 * (tensors it owns, each with an optional gradient) and computes
 * gradients by running, in reverse order, the backward op of each
 * recorded op (op_backward.h) - ops of the table like any other, so a
 * backend that implements them runs the whole backward pass.  Gradients
 * of a variable used more than once are summed with add_.
 *
 * The tape knows nothing of backends (ops is below them): the layer that
 * creates it supplies a tb_ag_exec, which runs a kernel and allocates
 * tensor memory (a backend instance and its kernel table, or the
 * reference kernels in f64 for tests).
 *
 * Differentiable ops: relu, sigmoid, tanh, gelu, log_softmax, sum, mean,
 * add, sub, mul, div (broadcasting), matmul, linear, conv2d,
 * conv2d_nobias, max_pool2d, avg_pool2d, nll_loss and cross_entropy (not
 * in their targets), layer_norm, rms_norm, group_norm, sdpa, embedding
 * (in its weight only: the indices are not differentiable), permute
 * (its gradient is the permute op again, with the inverse order).
 * Any other op may be applied; it is not recorded, and a variable it
 * computes from one that needs a gradient is an error (TB_EUNSUPPORTED),
 * so no gradient is silently dropped.
 *
 * Hooks: callbacks on an op (or on every op) called after each forward
 * call of it with its inputs and outputs, and after its backward op with
 * the gradient of its output and the gradients of its inputs (PyTorch's
 * forward hook and full backward hook of a module), in the order they
 * were added. */
#ifndef TB_OPS_AUTOGRAD_H
#define TB_OPS_AUTOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "op.h"
#include "tensor.h"

typedef struct tb_ag_exec {
    /* Run op on in -> out; for ops with op->alias, out[i] is the input it
     * overwrites.  Returns 0 or a TB_E* code. */
    int (*run)(void *user, const tb_op *op, const tb_tensor *in,
               tb_tensor *out, const tb_params *p);
    /* Memory for t, whose header (dtype, shape, strides) is filled. */
    int (*alloc)(void *user, tb_tensor *t);
    void (*free)(void *user, tb_tensor *t);
    /* (optional: models.h needs it) copy host tensor src into dst, of the
     * same dtype and shape, in this exec's memory */
    int (*upload)(void *user, tb_tensor *dst, const tb_tensor *src);
    void *user;
} tb_ag_exec;

typedef enum { TB_AG_FORWARD, TB_AG_BACKWARD } tb_ag_hook_kind;

/* Forward: in = the op's inputs, out = its outputs.  Backward: in = the
 * gradient of the op's output (n_in 1), out = the backward op's outputs,
 * the gradients of the op's inputs.  node counts the recorded ops from 0
 * in forward order. */
typedef void (*tb_ag_hook_fn)(void *user, tb_ag_hook_kind kind,
                              const tb_op *op, int node,
                              const tb_tensor *in, int n_in,
                              const tb_tensor *out, int n_out);

typedef struct tb_ag tb_ag;

typedef struct tb_ag_stats {
    int64_t nodes;           /* ops on the tape now */
    int64_t fwd_calls;       /* tb_ag_apply calls since create */
    int64_t bwd_ops;         /* backward ops run since create */
    int64_t fwd_hook_calls;  /* hook calls since create */
    int64_t bwd_hook_calls;
} tb_ag_stats;

/* A tape whose tensors are of dtype dt.  Returns 0, TB_EINVAL or
 * TB_ENOMEM. */
int tb_ag_create(const tb_ag_exec *ex, tb_dtype dt, tb_ag **out);
/* Frees every variable, gradient and the tape. */
void tb_ag_destroy(tb_ag *ag);

/* A leaf variable of shape s (memory from exec, contents undefined: fill
 * it through tb_ag_value).  *var is its handle. */
int tb_ag_leaf(tb_ag *ag, const tb_shape *s, bool requires_grad, int *var);
tb_tensor *tb_ag_value(tb_ag *ag, int var);
/* The variable's gradient, or NULL while it has none.  A scalar
 * variable's gradient has shape [1]. */
tb_tensor *tb_ag_grad(tb_ag *ag, int var);

/* Run op on variables in[0..op->n_in) with parameters p; *out receives
 * the handle of its (first) output.  Recorded on the tape when an input
 * needs a gradient.  Forward hooks run after the op. */
int tb_ag_apply(tb_ag *ag, tb_op_id op, const int *in, const tb_params *p,
                int *out);

/* A variable that views tensor t (memory the caller keeps; no gradient);
 * freed, as a header only, by tb_ag_clear.  For a batch of inputs. */
int tb_ag_input(tb_ag *ag, const tb_tensor *t, int *var);

/* A variable that views var's memory with shape s (same number of
 * elements; e.g. the flatten before a CNN's linear layer).  Recorded on
 * the tape when var needs a gradient; its gradient is var's gradient
 * with var's shape (no kernel runs). */
int tb_ag_reshape(tb_ag *ag, int var, const tb_shape *s, int *out);

/* Gradients of variable `var` (seeded with ones) for every variable that
 * needs one, accumulated into what they hold.  The tape is kept (call
 * tb_ag_clear to start the next iteration). */
int tb_ag_backward(tb_ag *ag, int var);

/* Free every non-leaf variable and the tape; leaves and their gradients
 * stay.  Handles of freed variables become invalid. */
void tb_ag_clear(tb_ag *ag);
/* Free the gradients of the leaves. */
void tb_ag_zero_grad(tb_ag *ag);

/* Hook fn on op (TB_OP_COUNT: every op) for the given kind.  *handle (may
 * be NULL) identifies it for tb_ag_hook_remove. */
int tb_ag_hook_add(tb_ag *ag, tb_ag_hook_kind kind, tb_op_id op,
                   tb_ag_hook_fn fn, void *user, int *handle);
void tb_ag_hook_remove(tb_ag *ag, int handle);

void tb_ag_stats_read(const tb_ag *ag, tb_ag_stats *out);

/* The backward op of a differentiable op, or TB_OP_COUNT. */
tb_op_id tb_ag_backward_op(tb_op_id op);

#endif
