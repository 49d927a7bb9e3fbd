/* Unfused compositions (ops of category TB_CAT_UNFUSED): the steps of an
 * op's tb_step list run as separate kernels of one backend, the way an
 * eager framework runs `relu(a + b)`: each step is one kernel call (one
 * launch in the backend's counters) and each intermediate is a new tensor
 * allocated by the backend before its step and freed after its last use
 * (one allocation per step in the counters).  Timed as one unit, next to
 * the fused op, the difference is what fusion saves. */
#ifndef TB_BACKENDS_COMPOSITE_H
#define TB_BACKENDS_COMPOSITE_H

#include <stddef.h>

#include "backend.h"

typedef struct tb_composite tb_composite;

/* Look up every step's kernel on instance ctx of be and work out the
 * intermediate shapes, for inputs of shapes in[0..op->n_in) and the
 * case's parameters p.  Returns 0; TB_EUNSUPPORTED when the backend lacks
 * a step's kernel (err names it); or another TB_E* code. */
int tb_composite_create(const tb_backend *be, void *ctx, const tb_op *op,
                        tb_dtype dt, const tb_shape *in, const tb_params *p,
                        tb_composite **out, char *err, size_t errlen);
void tb_composite_destroy(tb_composite *c);

/* "add_f32_avx512+relu_f32_avx512": the steps' implementations. */
const char *tb_composite_impl(const tb_composite *c);

/* A tb_kernel_fn: the kernel {tb_composite_run, the composite}. */
int tb_composite_run(void *comp, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p);

#endif
