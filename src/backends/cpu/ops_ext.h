/* Portable C kernels of the cpu backend for the ops added in issue 3
 * (unary math and activations, pow/maximum/minimum, the scalar forms,
 * max/min/argmax/var, softmax, permute, add_relu, linear, conv2d and
 * pooling), in f32 and f64.
 *
 * Simple, single-threaded and correct: each kernel is the plain loop nest
 * of its op's definition, in the case dtype (f32 kernels use float libm:
 * expf, tanhf, erfcf...), in the same numerically stable forms as the
 * reference kernels (src/ops/ref.c).  Reductions whose length is not
 * bounded (var, softmax's sum) accumulate f32 data in double.  Faster
 * (SIMD, threaded) versions belong to the cpu backend proper; this file
 * is the baseline it starts from.
 *
 * Operands follow the cpu backend's rules: host memory, contiguous, the
 * kernel's dtype, outputs of exactly the shapes the op's shape rule gives
 * (every kernel re-checks this and returns TB_EINVAL/TB_ESHAPE/TB_EPARAM
 * rather than touch memory it was not given). */
#ifndef TB_BACKENDS_CPU_OPS_EXT_H
#define TB_BACKENDS_CPU_OPS_EXT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../backend.h"

/* Kernel for (op, dt) from this file, or NULL for an op or dtype it does
 * not implement (the cpu backend's own ops included).  *impl (if impl is
 * not NULL) is set to the implementation's name, "<op>_<dtype>_c", or to
 * NULL.  p is not needed for the choice and may be NULL. */
tb_kernel_fn tb_cpu_ext_kernel(const tb_op *op, tb_dtype dt,
                               const tb_params *p, const char **impl);

/* Launch counting.  The kernels are called with the cpu backend's
 * instance pointer as ctx; the backend calls this once per instance it
 * creates, with that instance and the address of its kernel-launch
 * counter inside it.  Every instance has the same layout, so what is kept
 * is the counter's offset in the instance: each kernel call then adds 1 to
 * the counter of the instance it was called with.  Before the first bind
 * (or with ctx == NULL) kernels count nothing.  Thread-safe. */
void tb_cpu_ext_bind_counter(void *instance, _Atomic uint64_t *launches);

#endif
