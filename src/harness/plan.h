/* Plan: the list of cases a run will measure, built from configs.
 *
 * Every check that can be made without running anything is made here —
 * unknown backends and axis values, shapes the op rejects, cases that
 * need more memory than the machine has — so a bad config fails before
 * any result file is written. */
#ifndef TB_HARNESS_PLAN_H
#define TB_HARNESS_PLAN_H

#include <stdbool.h>

#include "../backends/backend.h"
#include "../base/idmatch.h"
#include "config.h"

/* A case of the plan.  Its strings (id, axes, reason) and shapes (in,
 * out) are the plan's (tb_plan.arena), shared where they are the same
 * (a backend entry's axes and reason, an (op entry, shape, params)'s
 * shapes), so that a plan of 100,000 tiny cases stays small; a case made
 * outside a plan (tests, exec) points them at its own storage. */
typedef struct tb_case {
    const char *id;
    /* The measurement settings of the config the case came from (copied:
     * a case does not point into its config). */
    tb_cfg_warmup warmup;
    tb_cfg_measure measure;
    const tb_op *op;
    tb_dtype dtype;
    int n_in; /* shapes given: tb_op_n_shapes (a creation op: 1) */
    const tb_shape *in;  /* max(n_in, op->n_in) shapes */
    const tb_shape *out; /* op->n_out shapes (at least 1) */
    tb_params params;
    /* Outputs allocated by every call (config "alloc": true) instead of
     * written into buffers allocated once (the out= form). */
    bool alloc_outputs;
    /* (exec --input) host tensors of the case's dtype and input shapes
     * to use instead of generated inputs; NULL: generate them. */
    const tb_tensor *given_in;
    const tb_backend *backend;
    int n_axes; /* every axis of the backend, in its order */
    const char *axis_name[TB_MAX_AXES];
    const char *axis_value[TB_MAX_AXES];
    bool available;
    const char *unavailable_reason; /* "" when available */
    uint64_t seed; /* for the inputs: config seed mixed with the id */
    double flops, bytes, items, reduce_len;
    size_t mem_bytes; /* memory the case needs to run and be checked */
    /* Position in the whole plan before `run --shard` kept a slice
     * (tb_shard_select); recorded only in sharded runs. */
    int plan_index;
    /* Every call uploads the inputs from host memory and downloads the
     * outputs (config "transfers": true; a device-memory backend only):
     * the data starts and ends on the host. */
    bool transfers;
    /* How the inputs lie in memory (config "layout"): each input a view
     * of a parent buffer the runner allocates (tensor.h). */
    tb_layout layout;
} tb_case;

struct tb_plan_block;

typedef struct tb_plan {
    int n;
    tb_case *cases;
    /* What the cases' pointers point to: blocks freed by tb_plan_free
     * (NULL for a plan made by hand). */
    struct tb_plan_block *arena;
} tb_plan;

typedef struct tb_plan_opts {
    /* Keep a case when its id matches one of filters[0..n_filters) (all
     * cases when n_filters is 0) and none of excludes[0..n_excludes);
     * patterns as tb_case_id_match. */
    const char *const *filters;
    int n_filters;
    const char *const *excludes;
    int n_excludes;
    /* Run only on these backends (n_backends 0: every backend of the
     * configs): a config's entry of that name with its axes, or, when a
     * config lists no such backend, the backend with its default axis
     * values.  At most TB_PLAN_MAX_BACKENDS names. */
    const char *const *backends;
    int n_backends;
} tb_plan_opts;
#define TB_PLAN_MAX_BACKENDS 8

/* Build the plan from n configs.  Returns 0, or TB_EINVAL/TB_ESHAPE/
 * TB_ENOMEM with a one-line "FILE: KEYPATH: what" message in err. */
int tb_plan_build(const tb_config *cfgs, int n, const tb_plan_opts *opts,
                  tb_plan *plan, char *err, size_t errlen);
void tb_plan_free(tb_plan *plan);

#endif
