/* Creation kernels of the CUDA module: zeros, ones, full, arange,
 * rand_uniform, rand_normal and copy, f32, f64, bf16 and f16 (the f32
 * values rounded once to the 16-bit format, as the cpu backend's half
 * rows give them: half.cuh).
 *
 * zeros is cudaMemsetAsync and copy a device-to-device cudaMemcpyAsync on
 * the instance's stream (what a tensor library does for them); the
 * others are grid-stride kernels.  The random ops draw the CPU's stream
 * (src/ops/rand.h) through layout.h's __host__ __device__ copy of it:
 * element i depends only on (seed, i), so the bits and uniforms are the
 * CPU's exactly (tests/test_cuda_layout.c proves the arithmetic equal on
 * the host); rand_normal goes through CUDA's double log/sqrt/cos/sin,
 * within an ulp or two of the C library's, hence its tolerance.  One
 * thread computes one Box-Muller pair (both outputs). */
#include "kernels_ext.cuh"

template <typename T>
__global__ void k_fill(T *__restrict__ out, int64_t n, T v)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        out[i] = v;
}

/* out[i] = start + i*step in double, rounded once to T (no FMA, as the
 * reference computes it). */
template <typename T>
__global__ void k_arange(T *__restrict__ out, int64_t n, double start,
                         double stepv)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        out[i] = (T)__dadd_rn(start, __dmul_rn((double)i, stepv));
}

template <typename T>
__global__ void k_rand_uniform(T *__restrict__ out, int64_t n, uint64_t key,
                               double lo, double hi)
{
    const int f32 = cu_dt<T>() != TB_F64;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        out[i] = (T)tb_cu_rand_uniform(key, (uint64_t)i, lo, hi, f32);
}

template <typename T>
__global__ void k_rand_normal(T *__restrict__ out, int64_t n, uint64_t key,
                              double mean, double sd)
{
    const int f32 = cu_dt<T>() != TB_F64;
    int64_t pairs = (n + 1) / 2;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         j < pairs; j += step) {
        double z0, z1;
        tb_cu_rand_normal_pair(key, (uint64_t)j, f32, &z0, &z1);
        out[2 * j] = (T)__dadd_rn(mean, __dmul_rn(sd, z0));
        if (2 * j + 1 < n)
            out[2 * j + 1] = (T)__dadd_rn(mean, __dmul_rn(sd, z1));
    }
}

template <typename T> static bool create_out_ok(const tb_tensor *out)
{
    return out && cu_operand_ok(&out[0], cu_dt<T>());
}

static int cu_count_copy(cu_ctx *c, size_t nb, cudaError_t e)
{
    c->memcpy_count.fetch_add(1, std::memory_order_relaxed);
    c->memcpy_bytes.fetch_add(nb, std::memory_order_relaxed);
    return cu_err(e);
}

/* zeros, ones and full (OP): zeros is a memset (all-zero bytes are +0.0
 * in both dtypes; a memset is no kernel: CUPTI records it as a MEMSET,
 * not a launch, seen on an H200), the others the fill kernel with 1 or
 * the parameter. */
template <typename T, tb_op_id OP>
static int kf_fill(void *ctx, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    (void)in;
    cu_ctx *c = (cu_ctx *)ctx;
    double v = OP == TB_OP_ones ? 1 : 0;
    if (!c || !create_out_ok<T>(out))
        return TB_EINVAL;
    if (OP == TB_OP_full && (cu_param(p, 0, &v) || !std::isfinite(v)))
        return TB_EPARAM;
    int64_t n = cu_numel(&out[0]);
    if (n == 0)
        return 0;
    if (OP == TB_OP_zeros) {
        int rc = cu_use_device(c->device);
        if (rc)
            return rc;
        return cu_err(cudaMemsetAsync(out[0].data, 0, (size_t)n * sizeof(T),
                                      c->stream));
    }
    return cu_launch(c, k_fill<T>, tb_cu_blocks_1d(n, TB_CU_BLOCK,
                                                   c->max_blocks),
                     TB_CU_BLOCK, 0, (T *)out[0].data, n, (T)v);
}

template <typename T>
static int kf_arange(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    (void)in;
    cu_ctx *c = (cu_ctx *)ctx;
    double start, step;
    if (!c || !create_out_ok<T>(out))
        return TB_EINVAL;
    if (out[0].ndim != 1)
        return TB_ESHAPE;
    if (cu_param(p, 0, &start) || cu_param(p, 1, &step) ||
        !std::isfinite(start) || !std::isfinite(step))
        return TB_EPARAM;
    int64_t n = out[0].shape[0];
    if (n == 0)
        return 0;
    return cu_launch(c, k_arange<T>,
                     tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, (T *)out[0].data, n, start, step);
}

/* The random ops' parameters: a, b (low/high or mean/std) and the key.
 * f32 (and bf16, f16: the f32 stream rounded) rounds a and b to float
 * first (rand.h). */
template <typename T>
static int rand_params(const tb_params *p, double *a, double *b,
                       uint64_t *key)
{
    double s;
    if (cu_param(p, 0, a) || cu_param(p, 1, b) || cu_param(p, 2, &s) ||
        !std::isfinite(*a) || !std::isfinite(*b) || s < 0 ||
        s > 9007199254740992.0 || s != std::floor(s))
        return TB_EPARAM;
    if (cu_dt<T>() != TB_F64) {
        *a = (double)(float)*a;
        *b = (double)(float)*b;
    }
    *key = tb_rand_key((uint64_t)s);
    return 0;
}

/* rand_uniform (a, b = low, high) and rand_normal (NORMAL: mean, sd;
 * a thread draws a pair of values). */
template <typename T, bool NORMAL>
static int kf_rand(void *ctx, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    (void)in;
    cu_ctx *c = (cu_ctx *)ctx;
    double a, b;
    uint64_t key;
    if (!c || !create_out_ok<T>(out))
        return TB_EINVAL;
    int rc = rand_params<T>(p, &a, &b, &key);
    if (rc)
        return rc;
    int64_t n = cu_numel(&out[0]);
    if (n == 0)
        return 0;
    if (NORMAL)
        return cu_launch(c, k_rand_normal<T>,
                         tb_cu_blocks_1d((n + 1) / 2, TB_CU_BLOCK,
                                         c->max_blocks),
                         TB_CU_BLOCK, 0, (T *)out[0].data, n, key, a, b);
    return cu_launch(c, k_rand_uniform<T>,
                     tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, (T *)out[0].data, n, key, a, b);
}

template <typename T>
static int kf_copy(void *ctx, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    (void)p;
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c || !in || !create_out_ok<T>(out) ||
        !cu_operand_ok(&in[0], cu_dt<T>()))
        return TB_EINVAL;
    if (!cu_same_shape(&in[0], &out[0]))
        return TB_ESHAPE;
    size_t nb = (size_t)cu_numel(&out[0]) * sizeof(T);
    if (!nb || in[0].data == out[0].data)
        return 0;
    int rc = cu_use_device(c->device);
    if (rc)
        return rc;
    return cu_count_copy(c, nb,
                         cudaMemcpyAsync(out[0].data, in[0].data, nb,
                                         cudaMemcpyDeviceToDevice,
                                         c->stream));
}

static const cu_ext_entry cu_create[] = {
    /* the kernels parenthesized: their template arguments hold commas */
    CU_EXT_ROW4(zeros, (kf_fill<float, TB_OP_zeros>),
                (kf_fill<double, TB_OP_zeros>),
                (kf_fill<cu_bf16, TB_OP_zeros>), (kf_fill<cu_f16, TB_OP_zeros>))
    CU_EXT_ROW4(ones, (kf_fill<float, TB_OP_ones>),
                (kf_fill<double, TB_OP_ones>),
                (kf_fill<cu_bf16, TB_OP_ones>), (kf_fill<cu_f16, TB_OP_ones>))
    CU_EXT_ROW4(full, (kf_fill<float, TB_OP_full>),
                (kf_fill<double, TB_OP_full>),
                (kf_fill<cu_bf16, TB_OP_full>), (kf_fill<cu_f16, TB_OP_full>))
    CU_EXT_ROW_T(arange, kf_arange)
    CU_EXT_ROW4(rand_uniform, (kf_rand<float, false>),
                (kf_rand<double, false>), (kf_rand<cu_bf16, false>),
                (kf_rand<cu_f16, false>))
    CU_EXT_ROW4(rand_normal, (kf_rand<float, true>), (kf_rand<double, true>),
                (kf_rand<cu_bf16, true>), (kf_rand<cu_f16, true>))
    CU_EXT_ROW_T(copy, kf_copy)
};

tb_kernel_fn cu_create_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_create, sizeof cu_create / sizeof cu_create[0], id,
                       dt, impl);
}
