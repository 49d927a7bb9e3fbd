/* The training workloads of issue 14 on the tape autograd: an MLP
 * (K-256-128-10, ReLU, log_softmax + NLL) and the small CNN (conv 1->16
 * 3x3, ReLU, max-pool 2, conv 16->32 3x3, ReLU, max-pool 2, linear ->
 * 10), and a pre-norm transformer block (issue 30), built from ops of
 * the table through a tb_ag_exec, so the same code runs on a backend
 * (backends/workload.c) and on the reference kernels (the reference of
 * the workload ops).
 *
 * Deterministic: weights uniform in +-1/sqrt(fan_in) (PyTorch's default
 * bound) from tb_rng seeded with TB_MODEL_SEED, in parameter order;
 * targets of the batch i mod 10.  Each hidden linear layer is the fused
 * `linear` op (relu(x@W+b)); the output layer is matmul then add.  A
 * training step is forward, backward and one sgd_momentum step (the
 * table's fused optimizer op) per parameter tensor.
 *
 * The transformer block on x [B, S, D] (H heads of Dh = D / H), its
 * parameters in this order (norm weights ones, the rest drawn):
 *   g1 [D], Wq, Wk, Wv, Wo [D, D], g2 [D], W1 [D, 4D], W2 [4D, D];
 *   x2 = x as [B S, D]
 *   q = split(rms_norm(x2, g1) @ Wq), k, v alike, split: [B S, D] as
 *       [B, S, H, Dh] permuted to [B, H, S, Dh]
 *   h = x2 + merge(sdpa(q, k, v, causal)) @ Wo   (merge: split undone)
 *   y = h + gelu(rms_norm(h, g2) @ W1) @ W2      (gelu: the erf form)
 *   loss = mean(y * y)
 * rms_norm's eps 1e-6; linear layers without bias (as LLaMA's). */
#ifndef TB_OPS_MODELS_H
#define TB_OPS_MODELS_H

#include <stdint.h>

#include "autograd.h"
#include "model_shape.h"
#include "op.h"

#define TB_MODEL_SEED UINT64_C(0x6d6f64656c14)

/* What one call does: the forward pass only (recorded on the tape, then
 * cleared); forward and backward; or a full training step. */
typedef enum {
    TB_MODEL_FWD = 0,
    TB_MODEL_FWD_BWD = 1,
    TB_MODEL_STEP = 2,
} tb_model_phase;

/* The part of tb_model_run a kernel call belongs to (tb_model_pass_now):
 * the forward pass (and the copy of the loss and the output out of the
 * tape), tb_ag_backward's (the backward ops, the permutes that are
 * permute's gradient, the seed's ones and add_), the optimizer's
 * steps. */
typedef enum {
    TB_MODEL_PASS_FWD = 0,
    TB_MODEL_PASS_BWD = 1,
    TB_MODEL_PASS_OPT = 2,
} tb_model_pass;

/* hooks: bit 0 a forward hook on every op, bit 1 a backward hook on
 * every op (each counts its calls). */
typedef struct tb_model_cfg {
    tb_model_kind kind;
    tb_shape x;        /* the batch: MLP [B, K]; CNN [B, 1, H, W];
                          transformer [B, S, D] */
    int heads;         /* the transformer's */
    int hooks;         /* 0..3 */
    bool train;        /* parameters need gradients */
    double lr, momentum;
} tb_model_cfg;

typedef struct tb_model tb_model;

/* (tb_model_kind, tb_model_check_shape, tb_model_forward_flops:
 * model_shape.h) */

/* Builds the parameters (exec needs upload). */
int tb_model_create(const tb_ag_exec *ex, tb_dtype dt,
                    const tb_model_cfg *cfg, tb_model **out);
void tb_model_destroy(tb_model *m);

/* One call on batch x (in the exec's memory, of cfg->x's shape; read,
 * not copied).  Writes the loss of this forward pass into loss (shape
 * [1]) and, when y is not NULL, the model's output (the
 * log-probabilities [B, 10]; the transformer's y [B, S, D]). */
int tb_model_run(tb_model *m, const tb_tensor *x, tb_model_phase phase,
                 tb_tensor *loss, tb_tensor *y);

/* The model's parameter tensors (in the order above) and their
 * gradients after a call of phase FWD_BWD or STEP (NULL: none, or i out
 * of range); the exec's memory. */
int tb_model_n_params(const tb_model *m);
tb_tensor *tb_model_param(tb_model *m, int i);
tb_tensor *tb_model_grad(tb_model *m, int i);

/* A training model's state (its parameters and their momentum buffers,
 * the only values a step carries to the next) set back to what create
 * made: the initial weights, zeros.  The next step is then the first
 * step's work on the first step's values.  0; TB_EINVAL for a model that
 * does not train; the exec's upload's error. */
int tb_model_restore(tb_model *m);

/* A training model's momentum buffer of parameter i (NULL: none). */
tb_tensor *tb_model_momentum(tb_model *m, int i);

/* The pass of tb_model_run that is running now: what an exec's run is
 * called for (the breakdown's phase of a kernel call); FWD between
 * calls and for NULL. */
tb_model_pass tb_model_pass_now(const tb_model *m);

/* Hook calls since create (both kinds). */
int64_t tb_model_hook_calls(const tb_model *m);

#endif
