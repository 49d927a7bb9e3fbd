/* cpu backend: linalg kernels (placeholder: being written). */
#include "cpu_internal.h"

tb_kernel_fn tb_cpu_linalg_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                               const tb_params *p, const char **impl)
{
    (void)ctx, (void)op, (void)dt, (void)p;
    if (impl)
        *impl = NULL;
    return NULL;
}
