/* Workload ops (category workload: mlp_train_step, mlp_infer_step,
 * cnn_train_step, cnn_infer_step) on one backend instance: the model of
 * ops/models.h on a tape whose every kernel is the backend's own, looked
 * up once per op through its kernel table, and whose memory comes from
 * the backend.  Like an unfused composition (composite.h), the harness
 * times a call of tb_workload_run as one unit; it needs the backend to
 * implement every op the model and its backward pass use, and reports
 * the first it lacks as unsupported. */
#ifndef TB_BACKENDS_WORKLOAD_H
#define TB_BACKENDS_WORKLOAD_H

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

/* Hook calls since create. */
int64_t tb_workload_hook_calls(const tb_workload *w);

/* The pool's counters (all zero without parameter pool). */
struct tb_pool_stats;
void tb_workload_pool_stats(const tb_workload *w, struct tb_pool_stats *out);

#endif
