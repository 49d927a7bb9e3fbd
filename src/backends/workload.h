/* Workload ops (category workload: mlp_train_step, mlp_infer_step,
 * cnn_train_step, cnn_infer_step, tfm_train_step, tfm_infer_step) on
 * one backend instance: the model of
 * ops/models.h on a tape whose every kernel is the backend's own, looked
 * up once per op through its kernel table, and whose memory comes from
 * the backend: with parameter pool = true through a pool of power-of-two
 * classes; else, on host memory (be->device_memory false), through the
 * workload's block cache of exact sizes (ops/pool.h), so that a step
 * after the first allocates nothing; else one allocation per tensor.
 * Either keeps what is freed until destroy.  Like an unfused composition (composite.h), the harness
 * times a call of tb_workload_run as one unit; it needs the backend to
 * implement every op the model and its backward pass use, and reports
 * the first it lacks as unsupported. */
#ifndef TB_BACKENDS_WORKLOAD_H
#define TB_BACKENDS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"

typedef struct tb_workload tb_workload;

/* For a batch of shape in[0] and the case's parameters p.  Returns 0;
 * TB_EUNSUPPORTED (err names the missing op); or another TB_E* code. */
int tb_workload_create(const tb_backend *be, void *ctx, const tb_op *op,
                       tb_dtype dt, const tb_shape *in, const tb_params *p,
                       tb_workload **out, char *err, size_t errlen);
void tb_workload_destroy(tb_workload *w);

/* "tape(cpu: linear_f32_avx2, ...)": the implementations in use. */
const char *tb_workload_impl(const tb_workload *w);

/* A tb_kernel_fn: the kernel {tb_workload_run, the workload}; in[0]
 * the batch, out[0] the loss [1] or the log-probabilities. */
int tb_workload_run(void *w, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p);

/* ---- the state window (a training step, phase 2) ---- */

/* Before a batch of `calls` timed calls, outside the clock: when the
 * steps since the model's state (parameters, momentum buffers) was last
 * set plus `calls` would pass the case's state_window, the state is set
 * back to its initial values (tb_model_restore, then the backend's
 * sync), so every timed step is one of the first max(state_window,
 * calls) steps from the initial state.  Without it the same batch,
 * trained on over and over, drives the momentum of parameters whose
 * gradient is 0 (dead ReLU units) towards 0 by the momentum factor a
 * step, into the subnormals after some hundred steps, where every
 * kernel that reads them is slower: the time would depend on how long
 * the run lasted.  Returns 1 when it restored, 0 when not (no window,
 * not a training step, no step since the last restore, or room left),
 * or a TB_E* error. */
int tb_workload_batch_begin(tb_workload *w, uint64_t calls);

/* Restores so far, and steps since the last (or since create). */
int64_t tb_workload_restores(const tb_workload *w);
int64_t tb_workload_steps_since_restore(const tb_workload *w);

/* Subnormal values (of the case's dtype) among a training model's
 * parameters and momentum buffers now, downloaded from the backend
 * (0 for any other workload), or a negative TB_E* error.  For tests and
 * diagnosis: it reads the whole state. */
int64_t tb_workload_subnormals(tb_workload *w);

/* ---- the per-op breakdown of a step (issue 31) ---- */

/* Where a tape kernel call belongs in a step: the pass of the model's
 * step that makes it (models.h, tb_model_pass_now): the optimizer's
 * steps (sgd_momentum); the backward pass (tb_ag_backward: the ops the
 * tape runs as another op's gradient, tb_ag_backward_op, the permutes
 * that are permute's gradient, and its plumbing: ones seeds the loss's
 * gradient, add_ accumulates); else the forward pass (with the copy of
 * the loss out of the tape). */
typedef enum { TB_WL_FWD, TB_WL_BWD, TB_WL_OPT, TB_WL_NPHASES } tb_wl_phase;

/* "fwd", "bwd", "optimizer"; "?" out of range. */
const char *tb_wl_phase_name(int p);

/* One (op, kernel, phase) of a step: every call of op on the tape in
 * that phase (a workload runs an op through one kernel; only permute
 * has calls in two phases). */
typedef struct tb_wl_part {
    int op;          /* tb_op_id */
    int phase;       /* tb_wl_phase */
    char kernel[64]; /* the implementation, as the backend names it */
    double calls;    /* per step, over every step of the pass */
    double ns;       /* per step: the mean over the kept steps (below) */
} tb_wl_part;

/* Enough for every part a model step may run (workload.c checks). */
#define TB_WL_MAX_PARTS 40

/* A breakdown pass of `steps` steps, each timed by the caller as a
 * sample times a call (the call, the backend's sync, minus the timer's
 * overhead): the step and its parts (in the order of their first call)
 * as means over the `kept` steps no slower than the median step, so
 * that a step the OS preempted (its time in the upper half) is left out
 * and the parts still add up to the step.  Plain data: it crosses the
 * worker socket inside tb_result.  valid false: reason says why there is
 * none. */
typedef struct tb_wl_breakdown {
    bool valid;
    char reason[160];
    int steps, kept;
    double step_ns, parts_ns; /* parts_ns: the sum of part[].ns */
    int n_parts;
    tb_wl_part part[TB_WL_MAX_PARTS];
} tb_wl_breakdown;

/* Time every tape kernel call from now on (a clock read before it, the
 * backend's sync and a clock read after it), with room for `steps`
 * steps: 0; TB_EUNSUPPORTED for a workload that is not a model on the
 * tape (api_add); TB_ENOMEM.  Without this, tb_workload_run reads no
 * clock: one branch per kernel call. */
int tb_workload_breakdown_begin(tb_workload *w, int steps);

/* Close a step of the pass: its time step_ns, and the kernel calls
 * since the last one (beyond the room given to begin: ignored). */
void tb_workload_breakdown_step(tb_workload *w, double step_ns);

/* Stop timing and fill *out from the steps closed (none: not valid). */
void tb_workload_breakdown_end(tb_workload *w, tb_wl_breakdown *out);

/* Hook calls since create. */
int64_t tb_workload_hook_calls(const tb_workload *w);

/* The pool's or the block cache's counters (all zero without either:
 * device memory, pool = false). */
struct tb_pool_stats;
void tb_workload_pool_stats(const tb_workload *w, struct tb_pool_stats *out);

#endif
