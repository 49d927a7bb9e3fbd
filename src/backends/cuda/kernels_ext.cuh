/* Shared by the CUDA module's kernel files beyond elementwise.cu and
 * reduce.cu (layout.cu, create.cu, fused.cu, optim.cu, pool.cu,
 * blas.cu): the small helpers they all use and each file's kernel
 * table.  CUDA C++ only. */
#ifndef TB_BACKENDS_CUDA_KERNELS_EXT_CUH
#define TB_BACKENDS_CUDA_KERNELS_EXT_CUH

#include <cmath>

#include "cuda_internal.cuh"
#include "layout.h"

template <typename T> static constexpr tb_dtype cu_dt()
{
    return sizeof(T) == sizeof(double) ? TB_F64 : TB_F32;
}

/* An integer parameter (the schema's bounds are checked by the CLI; a
 * kernel still refuses a non-integer or out-of-range value). */
static inline int cu_param_int(const tb_params *p, int idx, int64_t lo,
                               int64_t hi, int64_t *v)
{
    double d;
    if (cu_param(p, idx, &d) || d != std::floor(d) || d < (double)lo ||
        d > (double)hi)
        return TB_EPARAM;
    *v = (int64_t)d;
    return 0;
}

/* One row of a kernel table: op, f32 and f64 kernels and their names. */
struct cu_ext_entry {
    tb_op_id id;
    tb_kernel_fn fn[TB_DTYPE_COUNT];
    const char *name[TB_DTYPE_COUNT];
};

static inline tb_kernel_fn cu_ext_find(const cu_ext_entry *t, size_t n,
                                       tb_op_id id, tb_dtype dt,
                                       const char **impl)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].id == id) {
            if (impl)
                *impl = t[i].name[dt];
            return t[i].fn[dt];
        }
    return NULL;
}

#define CU_EXT_ROW(op, f32fn, f64fn)                                      \
    {TB_OP_##op, {f32fn, f64fn}, {#op "_f32_cuda", #op "_f64_cuda"}},

tb_kernel_fn cu_layout_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_create_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_fused_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_optim_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_pool_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_blas_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_linalg_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_lanes_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_norm_kernel(tb_op_id id, tb_dtype dt, const char **impl);

/* Every table above in turn (ext.cu). */
tb_kernel_fn cu_ext_kernel(tb_op_id id, tb_dtype dt, const char **impl);

/* blas.cu: the instance's cuBLAS handle, created on first use; freed
 * by cu_destroy (module.cu). */
void cu_blas_release(cu_ctx *c);
/* linalg.cu: the instance's cuSOLVER handle and workspace. */
void cu_solver_release(cu_ctx *c);

#endif
