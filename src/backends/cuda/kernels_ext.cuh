/* Shared by the CUDA module's kernel files beyond elementwise.cu and
 * reduce.cu (layout.cu, create.cu, fused.cu, optim.cu, pool.cu,
 * blas.cu, norm.cu, attn.cu, embed.cu...): the small helpers they use
 * (the group sums of norm.cu and embed.cu) and each file's kernel
 * table.  CUDA C++ only. */
#ifndef TB_BACKENDS_CUDA_KERNELS_EXT_CUH
#define TB_BACKENDS_CUDA_KERNELS_EXT_CUH

#include <cmath>

#include "cuda_internal.cuh"
#include "layout.h"

/* The dtype of storage type T (half.cuh): f32, f64, bf16 or f16. */
template <typename T> static constexpr __host__ __device__ tb_dtype cu_dt()
{
    return cu_dtype_of<T>();
}

#define CU_WARP 32
#define CU_FULL_MASK 0xffffffffu

/* The sum (or with MAX the maximum) of v over a group of `group`
 * threads (32, or the whole block when group == blockDim.x), returned to
 * every thread of the group, in an order fixed by the group's size
 * (shuffles, then the block's warps in order).  part: shared scratch of
 * blockDim.x / 32 doubles.  Every thread of the block calls it the same
 * number of times (the __syncthreads).  A maximum never picks a NaN (a
 * comparison with NaN is false). */
template <bool MAX>
static __device__ __forceinline__ double cu_group_fold(double v, int group,
                                                       double *part)
{
    for (int off = CU_WARP / 2; off > 0; off >>= 1) {
        const double o = __shfl_xor_sync(CU_FULL_MASK, v, off);
        v = MAX ? (o > v ? o : v) : v + o;
    }
    if (group <= CU_WARP)
        return v;
    if (threadIdx.x % CU_WARP == 0)
        part[threadIdx.x / CU_WARP] = v;
    __syncthreads();
    double s = part[0];
    for (int k = 1; k < group / CU_WARP; k++)
        s = MAX ? (part[k] > s ? part[k] : s) : s + part[k];
    __syncthreads(); /* part is reused by the next call */
    return s;
}

static __device__ __forceinline__ double cu_group_sum(double v, int group,
                                                      double *part)
{
    return cu_group_fold<false>(v, group, part);
}

static __device__ __forceinline__ double cu_group_max(double v, int group,
                                                      double *part)
{
    return cu_group_fold<true>(v, group, part);
}

/* exp in the dtype: expf for float. */
template <typename T> static __device__ __forceinline__ T cu_exp(T x);
template <> __device__ __forceinline__ float cu_exp<float>(float x)
{
    return expf(x);
}
template <> __device__ __forceinline__ double cu_exp<double>(double x)
{
    return exp(x);
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

/* Table rows (cu_ext_entry, cu_ext_find: cuda_internal.cuh) of f32 and
 * f64 kernels. */
#define CU_EXT_ROW(op, f32fn, f64fn)                                      \
    {TB_OP_##op, {f32fn, f64fn}, {#op "_f32_cuda", #op "_f64_cuda"}},
/* A row with bf16 and f16 kernels too (half.cuh's cu_bf16, cu_f16). */
#define CU_EXT_ROW4(op, f32fn, f64fn, bf16fn, f16fn)                      \
    {TB_OP_##op, {f32fn, f64fn, bf16fn, f16fn}, CU_NAMES4(op, "cuda")},
/* The same for a kernel template kf of one storage type parameter. */
#define CU_EXT_ROW_T(op, kf)                                              \
    CU_EXT_ROW4(op, kf<float>, kf<double>, kf<cu_bf16>, kf<cu_f16>)

tb_kernel_fn cu_layout_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_create_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_fused_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_optim_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_pool_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_blas_kernel(tb_op_id id, tb_dtype dt, const char **impl);
/* blas.cu: the impl of f32 op id on an instance with tf32=on (its GEMM
 * on TF32 tensor cores), or NULL for an op without a GEMM. */
const char *cu_blas_tf32_impl(tb_op_id id);
tb_kernel_fn cu_linalg_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_lanes_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_norm_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_attn_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_embed_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_norm2_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_optim2_kernel(tb_op_id id, tb_dtype dt, const char **impl);
tb_kernel_fn cu_attn_bw_kernel(tb_op_id id, tb_dtype dt, const char **impl);

/* Every table above in turn (ext.cu). */
tb_kernel_fn cu_ext_kernel(tb_op_id id, tb_dtype dt, const char **impl);

/* blas.cu: the instance's cuBLAS handle, created on first use; freed
 * by cu_destroy (module.cu). */
void cu_blas_release(cu_ctx *c);
/* linalg.cu: the instance's cuSOLVER handle and workspace. */
void cu_solver_release(cu_ctx *c);

#endif
