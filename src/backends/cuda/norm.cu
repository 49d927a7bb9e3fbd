/* Normalization of the CUDA module: layer_norm and rms_norm over the last
 * dim, f32 and f64, one launch each.
 *
 * Design: rows of D elements, a group of threads per row as the
 * reductions' rows mode (reduce.cu; tb_reduce_plan_make with inner 1 and
 * no splitting: one warp per row when D < 1024, else the whole 256-thread
 * block), interleaved lanes so every load is coalesced.  Three sweeps of
 * the row, as the reference: the mean (layer_norm only), the sum of
 * squared deviations from it (no cancellation of E[x^2] - E[x]^2), then
 * the scaled output; the second and third read the row again from L1/L2,
 * where it stays (a 1024-long f32 row is 4 KiB).  Sums are kept in double
 * for both dtypes, as reduce.cu's: they combine across lanes in a fixed
 * order (shuffles, then the block's warps in order), so the result is the
 * same every run.  eps is the parameter as given (the reference rounds it
 * to the dtype; an f32 eps differs from the double one by < 3e-8
 * relative, far inside the tolerance). */
#include "kernels_ext.cuh"

#define CU_WARP 32
#define CU_FULL_MASK 0xffffffffu

/* The sum of v over a group of `group` threads (32, or the whole block
 * when group == blockDim.x), returned to every thread of the group.
 * part: shared scratch of blockDim.x / 32 doubles.  Every thread of the
 * block calls it the same number of times (the __syncthreads). */
static __device__ __forceinline__ double cu_group_sum(double v, int group,
                                                      double *part)
{
    for (int off = CU_WARP / 2; off > 0; off >>= 1)
        v += __shfl_xor_sync(CU_FULL_MASK, v, off);
    if (group <= CU_WARP)
        return v;
    if (threadIdx.x % CU_WARP == 0)
        part[threadIdx.x / CU_WARP] = v;
    __syncthreads();
    double s = 0;
    for (int k = 0; k < group / CU_WARP; k++)
        s += part[k];
    __syncthreads(); /* part is reused by the next call */
    return s;
}

/* p.items rows of p.len elements; b is NULL for rms_norm. */
template <typename T, bool RMS>
__global__ void k_norm_rows(const T *x, const T *w, const T *b, T *y,
                            tb_reduce_plan p, double eps)
{
    __shared__ double part[TB_CU_BLOCK / CU_WARP];
    const int group = p.group;
    const int per_block = p.block / group;
    const int g = (int)threadIdx.x / group, lane = (int)threadIdx.x % group;
    const int64_t rounds = (p.items + per_block - 1) / per_block;
    const double n = (double)p.len;
    for (int64_t r = blockIdx.x; r < rounds; r += gridDim.x) {
        const int64_t row = r * per_block + g;
        const bool valid = row < p.items;
        const T *xr = x + (valid ? row * p.len : 0);
        const int64_t count = valid ? p.len : 0;
        double mean = 0;
        if (!RMS) {
            double s = 0;
            for (int64_t j = lane; j < count; j += group)
                s += (double)xr[j];
            mean = cu_group_sum(s, group, part) / n;
        }
        double ss = 0;
        for (int64_t j = lane; j < count; j += group) {
            const double d = (double)xr[j] - mean;
            ss += d * d;
        }
        ss = cu_group_sum(ss, group, part);
        const double inv = 1 / sqrt(ss / n + eps);
        T *yr = y + (valid ? row * p.len : 0);
        for (int64_t j = lane; j < count; j += group) {
            double v = ((double)xr[j] - mean) * inv * (double)w[j];
            if (!RMS)
                v += (double)b[j];
            yr[j] = (T)v;
        }
    }
}

template <typename T, bool RMS>
static int run_norm(void *ctx, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    const int n_in = RMS ? 2 : 3;
    if (!cu_args_ok(c, in, n_in, out, cu_dt<T>()))
        return TB_EINVAL;
    if (in[0].ndim < 1 || !cu_same_shape(&in[0], &out[0]))
        return TB_ESHAPE;
    const int64_t D = in[0].shape[in[0].ndim - 1];
    for (int i = 1; i < n_in; i++)
        if (in[i].ndim != 1 || in[i].shape[0] != D)
            return TB_ESHAPE;
    double eps;
    int rc = cu_param(p, 0, &eps);
    if (rc)
        return rc;
    if (!(eps >= 0))
        return TB_EPARAM;
    const int64_t n = cu_numel(&in[0]);
    if (n == 0)
        return 0;
    /* max_partials 0: one chunk per row, never split */
    tb_reduce_plan pl = tb_reduce_plan_make(n / D, D, 1, c->target_threads,
                                            0, c->max_blocks);
    return cu_launch(c, k_norm_rows<T, RMS>, pl.blocks, pl.block, 0,
                     (const T *)in[0].data, (const T *)in[1].data,
                     RMS ? (const T *)NULL : (const T *)in[2].data,
                     (T *)out[0].data, pl, eps);
}

template <typename T>
static int kf_layer_norm(void *ctx, const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    return run_norm<T, false>(ctx, in, out, p);
}

template <typename T>
static int kf_rms_norm(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    return run_norm<T, true>(ctx, in, out, p);
}

static const cu_ext_entry cu_norms[] = {
    CU_EXT_ROW(layer_norm, kf_layer_norm<float>, kf_layer_norm<double>)
    CU_EXT_ROW(rms_norm, kf_rms_norm<float>, kf_rms_norm<double>)
};

tb_kernel_fn cu_norm_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_norms, sizeof cu_norms / sizeof cu_norms[0], id,
                       dt, impl);
}
