/* Reductions of the CUDA module: sum and mean (over all elements or
 * along one axis), softmax and log_softmax (along any axis, one launch).
 *
 * Design (geometry.h has the arithmetic, unit-tested on the CPU).  The
 * input is viewed as [outer, len, inner] around the reduced axis.
 *  - rows mode, inner == 1 (the axis is contiguous: the last axis, or
 *    every element): a group of threads per row - one warp when
 *    len < 1024, else the whole 256-thread block - reads the row with
 *    interleaved lanes (coalesced), sums per thread, then combines with
 *    warp shuffles (and shared memory across the block's 8 warps).
 *  - cols mode, inner > 1 (e.g. axis 0 of a matrix): one thread per
 *    output column walks the axis with stride inner; the 32 threads of a
 *    warp read 32 neighbouring columns, so every load is coalesced and
 *    nothing needs a shuffle.
 * A reduction with too few rows or columns to fill the device (the
 * global sum: one row) splits the axis into chunks of at least
 * TB_REDUCE_MIN_ITEMS elements per thread, writes one partial per
 * (row or column, chunk) to the instance's scratch buffer, and a second
 * launch of the same kernel sums the partials: two launches instead of
 * one with atomics, because atomics make the summation order - and the
 * f32 result - vary from run to run, and a second launch over at most
 * ~2 x resident-threads partials costs a few microseconds.  Everything is
 * summed in double, f32 inputs included (the reference sums in double
 * too): even the slowest FP64 of a supported GPU (1/64 of FP32 on
 * consumer parts) adds faster than DRAM delivers f32 elements, so a sum
 * stays memory-bound, and sums along a 1024-long axis stay well inside
 * the f32 tolerance, which f32 accumulation would approach.  bf16 and
 * f16 (half.cuh) are summed the same way and the result rounded once
 * (double -> f32 -> the dtype): at least the f32 accumulation PyTorch's
 * 16-bit sums use.
 *
 * softmax/log_softmax use the same views without splitting: each row
 * (group of threads) or column (thread) keeps a running maximum m and a
 * running sum s of exp(x - m) in the dtype, rescaling s when m grows
 * (the "online" softmax: the lane is read twice, once for (m, s) and
 * once to write, in ONE launch, against 3+ for max, sub-exp-sum, log,
 * sub).  Partial (m, s) pairs of a group combine as
 * s = s1 exp(m1 - m) + s2 exp(m2 - m).  Special values follow the
 * reference: NaN and +inf poison the lane (every output NaN), -inf
 * entries contribute 0, an all -inf lane gives NaN.  bf16 and f16 lanes
 * are read widened to f32, m and s kept in f32 (PyTorch's accumulation
 * type), and each output rounded once. */
#include <cmath>

#include "cuda_internal.cuh"

#define CU_WARP 32
#define CU_FULL_MASK 0xffffffffu

template <typename T> static __device__ __forceinline__ T cu_expt(T x);
template <> __device__ __forceinline__ float cu_expt<float>(float x)
{
    return expf(x);
}
template <> __device__ __forceinline__ double cu_expt<double>(double x)
{
    return exp(x);
}
template <typename T> static __device__ __forceinline__ T cu_logt(T x);
template <> __device__ __forceinline__ float cu_logt<float>(float x)
{
    return logf(x);
}
template <> __device__ __forceinline__ double cu_logt<double>(double x)
{
    return log(x);
}

template <typename T> static __device__ __forceinline__ T cu_warp_sum(T v)
{
    for (int off = CU_WARP / 2; off > 0; off >>= 1)
        v += __shfl_xor_sync(CU_FULL_MASK, v, off);
    return v;
}

/* ---- sum / mean --------------------------------------------------------- */

/* One pass of plan p in rows mode: out[item's out_index] =
 * sum / divisor.  blockDim.x == p.block; p.group is 32 or p.block. */
template <typename In, typename Out>
__global__ void k_sum_rows(const In *x, Out *out, tb_reduce_plan p,
                           double divisor)
{
    __shared__ double warp_part[TB_CU_BLOCK / CU_WARP];
    const int group = p.group;
    const int per_block = p.block / group;
    const int g = (int)threadIdx.x / group, lane = (int)threadIdx.x % group;
    const int64_t rounds = (p.items + per_block - 1) / per_block;
    /* the loop bound is the same for the whole block (syncthreads) */
    for (int64_t r = blockIdx.x; r < rounds; r += gridDim.x) {
        int64_t it = r * per_block + g;
        tb_reduce_item w = {0, 0, 1, 0};
        double acc = 0;
        if (it < p.items) {
            w = tb_reduce_item_at(&p, it);
            for (int64_t j = lane; j < w.count; j += group)
                acc += (double)x[w.start + j];
        }
        acc = cu_warp_sum(acc);
        if (group > CU_WARP) {
            if (threadIdx.x % CU_WARP == 0)
                warp_part[threadIdx.x / CU_WARP] = acc;
            __syncthreads();
            acc = 0;
            for (int k = 0; k < group / CU_WARP; k++)
                acc += warp_part[k];
            __syncthreads(); /* warp_part is reused next round */
        }
        if (lane == 0 && it < p.items)
            out[w.out_index] = (Out)(acc / divisor);
    }
}

/* One pass of plan p in cols mode: a thread per item. */
template <typename In, typename Out>
__global__ void k_sum_cols(const In *x, Out *out, tb_reduce_plan p,
                           double divisor)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t it = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         it < p.items; it += step) {
        tb_reduce_item w = tb_reduce_item_at(&p, it);
        double acc = 0;
        for (int64_t j = 0; j < w.count; j++)
            acc += (double)x[w.start + j * w.stride];
        out[w.out_index] = (Out)(acc / divisor);
    }
}

template <typename In, typename Out>
static int sum_pass(cu_ctx *c, const tb_reduce_plan &p, const In *x,
                    Out *out, double divisor)
{
    if (p.cols)
        return cu_launch(c, k_sum_cols<In, Out>, p.blocks, p.block, 0, x,
                         out, p, divisor);
    return cu_launch(c, k_sum_rows<In, Out>, p.blocks, p.block, 0, x, out,
                     p, divisor);
}

/* The reduced axis from param 0 "axis" (absent: all elements, -1). */
static int cu_axis(const tb_params *p, int ndim, bool optional, int *ax)
{
    if (!cu_param_has(p, 0)) {
        if (!optional)
            return TB_EPARAM;
        *ax = -1;
        return 0;
    }
    double v = p->v[0];
    if (!(v >= -ndim && v < ndim) || v != (double)(int64_t)v)
        return TB_EPARAM;
    int a = (int)v;
    *ax = a < 0 ? a + ndim : a;
    return 0;
}

template <typename T>
static int run_sum(void *ctx, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p, bool mean)
{
    cu_ctx *c = (cu_ctx *)ctx;
    const tb_dtype dt = cu_dtype_of<T>();
    if (!cu_args_ok(c, in, 1, out, dt))
        return TB_EINVAL;
    int ax, rc;
    if ((rc = cu_axis(p, in[0].ndim, true, &ax)))
        return rc;
    int64_t outer, len, inner;
    tb_reduce_view(in[0].shape, in[0].ndim, ax, &outer, &len, &inner);
    /* keepdim only changes the output's dims, not its elements */
    if (cu_numel(&out[0]) != outer * inner)
        return TB_ESHAPE;
    if (outer * inner == 0)
        return 0;
    const double divisor = mean ? (double)len : 1.0;
    tb_reduce_plan pl = tb_reduce_plan_make(outer, len, inner,
                                            c->target_threads,
                                            c->scratch_elems, c->max_blocks);
    const T *x = (const T *)in[0].data;
    T *o = (T *)out[0].data;
    if (pl.chunks == 1)
        return sum_pass(c, pl, x, o, divisor);
    if ((rc = sum_pass(c, pl, x, c->scratch, 1.0)))
        return rc;
    tb_reduce_plan next = tb_reduce_next(&pl, c->target_threads,
                                         c->max_blocks);
    return sum_pass(c, next, (const double *)c->scratch, o, divisor);
}

/* ---- softmax / log_softmax --------------------------------------------- */

/* Fold value v into the running (m, s).  exp(v - v) rather than 1: +inf
 * gives inf - inf = NaN, as the reference's exp(x - max) does. */
template <typename T>
static __device__ __forceinline__ void sm_add(T &m, T &s, T v)
{
    if (v > m) {
        s = s * cu_expt(m - v) + cu_expt(v - v);
        m = v;
    } else if (!(v == m && m == -INFINITY)) {
        s += cu_expt(v - m); /* NaN v lands here and poisons s */
    }
}

/* s rescaled from its own max mi to the common max m (mi <= m). */
template <typename T>
static __device__ __forceinline__ T sm_rescale(T s, T mi, T m)
{
    return mi == m ? s : s * cu_expt(mi - m);
}

template <typename T, bool LOG>
static __device__ __forceinline__ T sm_out(T v, T m, T s, T log_s)
{
    return LOG ? (v - m) - log_s : cu_expt(v - m) / s;
}

/* rows mode: a group (warp or block) per row of p.len elements. */
template <typename T, bool LOG>
__global__ void k_softmax_rows(const T *x, T *y, tb_reduce_plan p)
{
    typedef cu_acc<T> C;
    __shared__ C wm[TB_CU_BLOCK / CU_WARP], ws[TB_CU_BLOCK / CU_WARP];
    const int group = p.group;
    const int per_block = p.block / group;
    const int g = (int)threadIdx.x / group, lane = (int)threadIdx.x % group;
    const int64_t rounds = (p.items + per_block - 1) / per_block;
    for (int64_t r = blockIdx.x; r < rounds; r += gridDim.x) {
        int64_t row = r * per_block + g;
        bool valid = row < p.items;
        int64_t start = valid ? row * p.len : 0;
        int64_t count = valid ? p.len : 0;
        C m = -INFINITY, s = 0;
        for (int64_t j = lane; j < count; j += group)
            sm_add(m, s, cu_ld(x[start + j]));
        for (int off = CU_WARP / 2; off > 0; off >>= 1) {
            C m2 = __shfl_xor_sync(CU_FULL_MASK, m, off);
            C s2 = __shfl_xor_sync(CU_FULL_MASK, s, off);
            C mm = m > m2 ? m : m2;
            s = sm_rescale(s, m, mm) + sm_rescale(s2, m2, mm);
            m = mm;
        }
        if (group > CU_WARP) {
            if (threadIdx.x % CU_WARP == 0) {
                wm[threadIdx.x / CU_WARP] = m;
                ws[threadIdx.x / CU_WARP] = s;
            }
            __syncthreads();
            m = -INFINITY;
            for (int k = 0; k < group / CU_WARP; k++)
                m = wm[k] > m ? wm[k] : m;
            s = 0;
            for (int k = 0; k < group / CU_WARP; k++)
                s += sm_rescale(ws[k], wm[k], m);
            __syncthreads();
        }
        C log_s = LOG ? cu_logt(s) : C(0);
        for (int64_t j = lane; j < count; j += group)
            y[start + j] =
                cu_st<T>(sm_out<C, LOG>(cu_ld(x[start + j]), m, s, log_s));
    }
}

/* cols mode: a thread per (outer, inner) lane, stride inner. */
template <typename T, bool LOG>
__global__ void k_softmax_cols(const T *x, T *y, tb_reduce_plan p)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t it = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         it < p.items; it += step) {
        tb_reduce_item w = tb_reduce_item_at(&p, it);
        typedef cu_acc<T> C;
        C m = -INFINITY, s = 0;
        for (int64_t j = 0; j < w.count; j++)
            sm_add(m, s, cu_ld(x[w.start + j * w.stride]));
        C log_s = LOG ? cu_logt(s) : C(0);
        for (int64_t j = 0; j < w.count; j++) {
            int64_t k = w.start + j * w.stride;
            y[k] = cu_st<T>(sm_out<C, LOG>(cu_ld(x[k]), m, s, log_s));
        }
    }
}

template <typename T, bool LOG>
static int run_softmax(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    int ax, rc = cu_unary_begin(c, in, out, cu_dtype_of<T>());
    if (rc)
        return rc;
    if (in[0].ndim < 1)
        return TB_ESHAPE;
    if ((rc = cu_axis(p, in[0].ndim, false, &ax)))
        return rc;
    int64_t outer, len, inner;
    tb_reduce_view(in[0].shape, in[0].ndim, ax, &outer, &len, &inner);
    if (outer * inner * len == 0)
        return 0;
    tb_reduce_plan pl = tb_reduce_plan_make(outer, len, inner,
                                            c->target_threads, 0,
                                            c->max_blocks);
    const T *x = (const T *)in[0].data;
    T *y = (T *)out[0].data;
    if (pl.cols)
        return cu_launch(c, k_softmax_cols<T, LOG>, pl.blocks, pl.block, 0,
                         x, y, pl);
    return cu_launch(c, k_softmax_rows<T, LOG>, pl.blocks, pl.block, 0, x,
                     y, pl);
}

/* ---- the table ------------------------------------------------------------ */

template <typename T>
static int kf_sum(void *ctx, const tb_tensor *in, tb_tensor *out,
                  const tb_params *p)
{
    return run_sum<T>(ctx, in, out, p, false);
}

template <typename T>
static int kf_mean(void *ctx, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    return run_sum<T>(ctx, in, out, p, true);
}

template <typename T>
static int kf_softmax(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    return run_softmax<T, false>(ctx, in, out, p);
}

template <typename T>
static int kf_log_softmax(void *ctx, const tb_tensor *in, tb_tensor *out,
                          const tb_params *p)
{
    return run_softmax<T, true>(ctx, in, out, p);
}

#define RED(op)                                                           \
    {TB_OP_##op,                                                          \
     {kf_##op<float>, kf_##op<double>, kf_##op<cu_bf16>, kf_##op<cu_f16>}, \
     CU_NAMES4(op, "cuda")},
static const cu_ext_entry cu_reductions[] = {
    RED(sum) RED(mean) RED(softmax) RED(log_softmax)
};
#undef RED

tb_kernel_fn cu_reduce_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return CU_EXT_FIND(cu_reductions, id, dt, impl);
}
