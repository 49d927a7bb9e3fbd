/* The blas backend's `env` slot: what OpenBLAS says about itself. */
#ifndef TB_BACKENDS_BLAS_BLAS_ENV_H
#define TB_BACKENDS_BLAS_BLAS_ENV_H

#include "../backend.h"

/* env.openblas: OpenBLAS's configuration string, the core type whose
 * kernels it picked (and the ISA those kernels use), its default thread
 * count, OPENBLAS_CORETYPE as set; and a warning when those kernels are
 * older than the ISA cpu_flags show (see tb_backend.env).  Built without
 * OpenBLAS: out->key NULL.  Returns 0. */
int tb_blas_env(const tb_backend *self, const char *const *cpu_flags,
                tb_backend_env *out);

#endif
