/* Layout kernels of the CUDA module: transpose and permute (materialized),
 * f32 and f64.
 *
 * Both become a permutation of a contiguous input (layout.h), planned
 * with dims merged.  A plan that swaps the two innermost merged dims -
 * every 2-D transpose, a batched one, NCHW <-> NHWC - runs the tiled
 * kernel: a 32x32 tile through shared memory (padded to 33 columns
 * against bank conflicts), so both the reads and the writes of a warp
 * are coalesced.  Any other permutation gathers: each output element
 * finds its input through tb_perm_offset (coalesced writes, strided
 * reads).  A permutation that moves nothing is a device-to-device copy. */
#include "kernels_ext.cuh"

template <typename T>
__global__ void k_transpose_tiled(const T *__restrict__ in,
                                  T *__restrict__ out, int64_t batch,
                                  int64_t rows, int64_t cols)
{
    __shared__ T tile[TB_TILE][TB_TILE + 1];
    int64_t tiles = tb_tile_count(batch, rows, cols);
    int tx = threadIdx.x, ty = threadIdx.y;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        int64_t b, r0, c0;
        tb_tile_at(t, rows, cols, &b, &r0, &c0);
        const T *src = in + b * rows * cols;
        T *dst = out + b * rows * cols;
        for (int k = ty; k < TB_TILE; k += TB_TILE_ROWS) {
            int64_t r = r0 + k, c = c0 + tx;
            if (r < rows && c < cols)
                tile[k][tx] = src[r * cols + c];
        }
        __syncthreads();
        for (int k = ty; k < TB_TILE; k += TB_TILE_ROWS) {
            int64_t c = c0 + k, r = r0 + tx;
            if (c < cols && r < rows)
                dst[c * rows + r] = tile[tx][k];
        }
        __syncthreads();
    }
}

template <typename T>
__global__ void k_permute_gather(const T *__restrict__ in,
                                 T *__restrict__ out, int64_t n,
                                 tb_perm_plan pl)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        out[i] = in[tb_perm_offset(&pl, i)];
}

template <typename T>
static int run_permute(cu_ctx *c, const tb_tensor *in, tb_tensor *out,
                       const int *perm)
{
    const tb_tensor *x = &in[0];
    if (out[0].ndim != x->ndim)
        return TB_ESHAPE;
    for (int d = 0; d < x->ndim; d++)
        if (out[0].shape[d] != x->shape[perm[d]])
            return TB_ESHAPE;
    tb_perm_plan pl;
    if (tb_perm_plan_make(&pl, x->shape, x->ndim, perm))
        return TB_EPARAM;
    int64_t n = cu_numel(x);
    if (n == 0)
        return 0;
    const T *src = (const T *)x->data;
    T *dst = (T *)out[0].data;
    if (src == dst)
        return TB_EINVAL; /* not an in-place op */
    if (pl.copy) {
        int rc = cu_use_device(c->device);
        if (rc)
            return rc;
        cudaError_t e = cudaMemcpyAsync(dst, src, (size_t)n * sizeof(T),
                                        cudaMemcpyDeviceToDevice, c->stream);
        c->memcpy_count.fetch_add(1, std::memory_order_relaxed);
        c->memcpy_bytes.fetch_add((size_t)n * sizeof(T),
                                  std::memory_order_relaxed);
        return cu_err(e);
    }
    if (pl.tiled) {
        int64_t tiles = tb_tile_count(pl.batch, pl.rows, pl.cols);
        int64_t blocks = tiles < c->max_blocks ? tiles : c->max_blocks;
        int rc = cu_use_device(c->device);
        if (rc)
            return rc;
        dim3 blk(TB_TILE, TB_TILE_ROWS);
        k_transpose_tiled<T><<<(unsigned)blocks, blk, 0, c->stream>>>(
            src, dst, pl.batch, pl.rows, pl.cols);
        c->launches.fetch_add(1, std::memory_order_relaxed);
        return cu_err(cudaGetLastError());
    }
    int64_t blocks = tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks);
    return cu_launch(c, k_permute_gather<T>, blocks, TB_CU_BLOCK, 0, src,
                     dst, n, pl);
}

template <typename T>
static int kf_transpose(void *ctx, const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!cu_args_ok(c, in, 1, out, cu_dt<T>()))
        return TB_EINVAL;
    int64_t d0, d1;
    int perm[TB_MAX_DIMS];
    if (cu_param_int(p, 0, -TB_MAX_DIMS, TB_MAX_DIMS - 1, &d0) ||
        cu_param_int(p, 1, -TB_MAX_DIMS, TB_MAX_DIMS - 1, &d1) ||
        tb_cu_perm_swap(d0, d1, in[0].ndim, perm))
        return TB_EPARAM;
    return run_permute<T>(c, in, out, perm);
}

template <typename T>
static int kf_permute(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!p || !cu_args_ok(c, in, 1, out, cu_dt<T>()))
        return TB_EINVAL;
    int perm[TB_MAX_DIMS];
    if (tb_cu_perm_params(p->set, p->v, in[0].ndim, perm))
        return TB_EPARAM;
    return run_permute<T>(c, in, out, perm);
}

static const cu_ext_entry cu_layout[] = {
    CU_EXT_ROW(transpose, kf_transpose<float>, kf_transpose<double>)
    CU_EXT_ROW(permute, kf_permute<float>, kf_permute<double>)
};

tb_kernel_fn cu_layout_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_layout, sizeof cu_layout / sizeof cu_layout[0], id,
                       dt, impl);
}
