/* Fused kernels of the CUDA module: add_relu = relu(a + b) in one pass
 * with NumPy broadcasting, f32 and f64 (linear, the other fused op, is in
 * blas.cu).  The unfused composition add_relu_unfused runs as the
 * harness's separate add and relu launches (elementwise.cu). */
#include "kernels_ext.cuh"

/* relu as elementwise.cu and the reference: NaN passes, -0 and
 * negatives give +0. */
template <typename T> static __device__ __forceinline__ T relu_of(T x)
{
    return x > T(0) ? x : (x != x ? x : T(0));
}

template <typename T>
__global__ void k_add_relu_same(const T *a, const T *b, T *out, int64_t n)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        out[i] = relu_of<T>(a[i] + b[i]);
}

template <typename T>
__global__ void k_add_relu_bcast(const T *a, const T *b, T *out, int64_t n,
                                 tb_bcast bc)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        int64_t oa, ob;
        tb_bcast_offsets(&bc, i, &oa, &ob);
        out[i] = relu_of<T>(a[oa] + b[ob]);
    }
}

template <typename T>
static int kf_add_relu(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    (void)p;
    cu_ctx *c = (cu_ctx *)ctx;
    tb_bcast bc;
    int64_t n;
    int rc = cu_binary_begin(c, in, out, cu_dt<T>(), &bc, &n);
    if (rc || n == 0)
        return rc;
    int64_t blocks = tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks);
    const T *a = (const T *)in[0].data, *b = (const T *)in[1].data;
    T *o = (T *)out[0].data;
    if (bc.same)
        return cu_launch(c, k_add_relu_same<T>, blocks, TB_CU_BLOCK, 0, a, b,
                         o, n);
    return cu_launch(c, k_add_relu_bcast<T>, blocks, TB_CU_BLOCK, 0, a, b, o,
                     n, bc);
}

static const cu_ext_entry cu_fused[] = {
    CU_EXT_ROW(add_relu, kf_add_relu<float>, kf_add_relu<double>)
};

tb_kernel_fn cu_fused_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_fused, sizeof cu_fused / sizeof cu_fused[0], id, dt,
                       impl);
}
