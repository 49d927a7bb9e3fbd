/* Element-wise kernels of the CUDA module: binary ops with NumPy
 * broadcasting (add sub mul div pow maximum minimum; their in-place forms
 * add_ sub_ mul_ div_ run the same kernels), the scalar forms, unary math
 * and activations, in f32, f64, bf16 and f16.
 *
 * bf16 and f16 (half.cuh): each kernel is the f32 one between a load
 * that widens every operand to f32 and a store that rounds the f32
 * result once to the dtype, the values of the cpu backend's half rows
 * (constants are f32, as there); memory sees the 16-bit tensors only.
 *
 * One grid-stride kernel per (op, dtype): tb_cu_blocks_1d blocks of
 * TB_CU_BLOCK threads, at most 4 waves of the device (cu_ctx.max_blocks);
 * each thread then strides by the whole grid.  A binary op whose inputs
 * both have the output's shape runs a kernel without index arithmetic;
 * otherwise each element finds its inputs through tb_bcast_offsets
 * (geometry.h: dims merged first, so the common cases divide once or
 * not at all).
 *
 * Arithmetic follows the references (src/ops/ref.c) formula for formula,
 * in the case dtype: constants (alpha, beta, threshold, scalar) rounded
 * to the dtype, NaN through maximum/minimum and relu, sigmoid in its
 * two-sided stable form, gelu through erfc, gelu_tanh as x*sigmoid(2u),
 * rsqrt as 1/sqrt(x) (rsqrt(-0) = -inf as in PyTorch).  No fast-math:
 * CUDA's single-precision expf/logf/tanhf/erfcf/powf are within 2-4 ulp,
 * inside the table's f32 TOL_MATH (rtol 1e-6 = 8 ulp). */
#include <cmath>

#include "cuda_internal.cuh"

/* ---- math in the dtype ---------------------------------------------------- */

#define CU_MATH1(name, f32, f64)                                          \
    static __device__ __forceinline__ float cu_##name(float x)            \
    {                                                                     \
        return f32(x);                                                    \
    }                                                                     \
    static __device__ __forceinline__ double cu_##name(double x)          \
    {                                                                     \
        return f64(x);                                                    \
    }
CU_MATH1(exp, expf, exp)
CU_MATH1(log, logf, log)
CU_MATH1(sqrt, sqrtf, sqrt)
CU_MATH1(tanh, tanhf, tanh)
CU_MATH1(erfc, erfcf, erfc)
CU_MATH1(log1p, log1pf, log1p)
CU_MATH1(fabs, fabsf, fabs)
#undef CU_MATH1

static __device__ __forceinline__ float cu_pow(float x, float y)
{
    return powf(x, y);
}
static __device__ __forceinline__ double cu_pow(double x, double y)
{
    return pow(x, y);
}

template <typename T> static __device__ __forceinline__ T cu_sigmoid(T x)
{
    if (x >= T(0))
        return T(1) / (T(1) + cu_exp(-x));
    T e = cu_exp(x);
    return e / (T(1) + e);
}

/* ---- functors ------------------------------------------------------------- */

/* Binary: f(a, b).  Unary: f(x) with up to two constants k0, k1 (the op's
 * float parameters 0 and 1 in schema order, rounded to T). */
#define CU_BINARY(name, expr)                                             \
    template <typename T> struct B_##name {                               \
        __device__ __forceinline__ T operator()(T a, T b) const           \
        {                                                                 \
            return expr;                                                  \
        }                                                                 \
    };
CU_BINARY(add, a + b)
CU_BINARY(sub, a - b)
CU_BINARY(mul, a * b)
CU_BINARY(div, a / b)
CU_BINARY(pow, cu_pow(a, b))
/* a NaN in either operand gives NaN (NumPy's maximum), unlike fmax */
CU_BINARY(maximum, a != a || b != b ? a + b : (a >= b ? a : b))
CU_BINARY(minimum, a != a || b != b ? a + b : (a <= b ? a : b))
#undef CU_BINARY

#define CU_UNARY(name, nk_, expr)                                         \
    template <typename T> struct U_##name {                               \
        static constexpr int nk = nk_;                                    \
        T k0, k1;                                                         \
        __device__ __forceinline__ T operator()(T x) const                \
        {                                                                 \
            return expr;                                                  \
        }                                                                 \
    };
CU_UNARY(neg, 0, -x)
CU_UNARY(abs, 0, cu_fabs(x))
CU_UNARY(exp, 0, cu_exp(x))
CU_UNARY(log, 0, cu_log(x))
CU_UNARY(sqrt, 0, cu_sqrt(x))
CU_UNARY(rsqrt, 0, T(1) / cu_sqrt(x))
/* NaN passes; -0.0 and negatives give +0.0 */
CU_UNARY(relu, 0, x > T(0) ? x : (x != x ? x : T(0)))
CU_UNARY(leaky_relu, 1, x > T(0) ? x : k0 * x)
CU_UNARY(sigmoid, 0, cu_sigmoid(x))
CU_UNARY(tanh, 0, cu_tanh(x))
CU_UNARY(gelu, 0, T(0.5) * x * cu_erfc(-x * T(0.70710678118654752440)))
CU_UNARY(gelu_tanh, 0,
         x * cu_sigmoid(T(2) * (T(0.7978845608028654) *
                                (x + T(0.044715) * x * x * x))))
CU_UNARY(silu, 0, x * cu_sigmoid(x))
CU_UNARY(softplus, 2,
         k0 * x > k1 ? x : cu_log1p(cu_exp(k0 * x)) / k0)
CU_UNARY(add_scalar, 1, x + k0)
CU_UNARY(sub_scalar, 1, x - k0)
CU_UNARY(mul_scalar, 1, x * k0)
CU_UNARY(div_scalar, 1, x / k0)
#undef CU_UNARY

/* ---- kernels -------------------------------------------------------------- */

/* No __restrict__: in-place forms pass the same buffer as a and out. */
template <typename T, typename F>
__global__ void k_binary_same(const T *a, const T *b, T *out, int64_t n,
                              F f)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        out[i] = cu_st<T>(f(cu_ld(a[i]), cu_ld(b[i])));
}

template <typename T, typename F>
__global__ void k_binary_bcast(const T *a, const T *b, T *out, int64_t n,
                               tb_bcast bc, F f)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        int64_t oa, ob;
        tb_bcast_offsets(&bc, i, &oa, &ob);
        out[i] = cu_st<T>(f(cu_ld(a[oa]), cu_ld(b[ob])));
    }
}

template <typename T, typename F>
__global__ void k_unary(const T *x, T *y, int64_t n, F f)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        y[i] = cu_st<T>(f(cu_ld(x[i])));
}

/* 16-byte vectors of T (geometry.h, tb_cu_vec_count): 4 floats, 2
 * doubles, 8 bf16 or f16; cudaMalloc's 256-byte alignment makes the
 * module's tensors eligible, and the launchers check every pointer. */
template <typename T> struct cu_vec {
    typedef uint4 type;
    static constexpr int width = 16 / sizeof(T);
};
template <> struct cu_vec<float> {
    typedef float4 type;
    static constexpr int width = 4;
};
template <> struct cu_vec<double> {
    typedef double2 type;
    static constexpr int width = 2;
};

static inline bool cu_aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* The same operation as k_binary_same with 16-byte loads and stores; in
 * place (out == a) each vector is read before it is written by the same
 * thread. */
template <typename T, typename F>
__global__ void k_binary_vec(const T *a, const T *b, T *out, int64_t n, F f)
{
    typedef typename cu_vec<T>::type V;
    constexpr int W = cu_vec<T>::width;
    int64_t nv = tb_cu_vec_count(n, W);
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t v = tid; v < nv; v += step) {
        V x = ((const V *)a)[v], y = ((const V *)b)[v], z;
        const T *xs = (const T *)&x, *ys = (const T *)&y;
        T *zs = (T *)&z;
#pragma unroll
        for (int k = 0; k < W; k++)
            zs[k] = cu_st<T>(f(cu_ld(xs[k]), cu_ld(ys[k])));
        ((V *)out)[v] = z;
    }
    for (int64_t i = nv * W + tid; i < n; i += step)
        out[i] = cu_st<T>(f(cu_ld(a[i]), cu_ld(b[i])));
}

template <typename T, typename F>
__global__ void k_unary_vec(const T *x, T *y, int64_t n, F f)
{
    typedef typename cu_vec<T>::type V;
    constexpr int W = cu_vec<T>::width;
    int64_t nv = tb_cu_vec_count(n, W);
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t v = tid; v < nv; v += step) {
        V u = ((const V *)x)[v], z;
        const T *us = (const T *)&u;
        T *zs = (T *)&z;
#pragma unroll
        for (int k = 0; k < W; k++)
            zs[k] = cu_st<T>(f(cu_ld(us[k])));
        ((V *)y)[v] = z;
    }
    for (int64_t i = nv * W + tid; i < n; i += step)
        y[i] = cu_st<T>(f(cu_ld(x[i])));
}

/* ---- launchers ------------------------------------------------------------ */

template <typename T, template <typename> class F>
static int run_binary(void *ctx, const tb_tensor *in, tb_tensor *out)
{
    cu_ctx *c = (cu_ctx *)ctx;
    tb_bcast bc;
    int64_t n;
    int rc = cu_binary_begin(c, in, out, cu_dtype_of<T>(), &bc, &n);
    if (rc || n == 0)
        return rc;
    int64_t blocks = tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks);
    const T *a = (const T *)in[0].data, *b = (const T *)in[1].data;
    T *o = (T *)out[0].data;
    typedef F<cu_acc<T>> Fn;
    if (bc.same && cu_aligned16(a) && cu_aligned16(b) && cu_aligned16(o))
        return cu_launch(c, k_binary_vec<T, Fn>,
                         tb_cu_blocks_1d(tb_cu_vec_work(n, cu_vec<T>::width),
                                         TB_CU_BLOCK, c->max_blocks),
                         TB_CU_BLOCK, 0, a, b, o, n, Fn());
    if (bc.same)
        return cu_launch(c, k_binary_same<T, Fn>, blocks, TB_CU_BLOCK, 0,
                         a, b, o, n, Fn());
    return cu_launch(c, k_binary_bcast<T, Fn>, blocks, TB_CU_BLOCK, 0, a,
                     b, o, n, bc, Fn());
}

template <typename T, template <typename> class F>
static int run_unary(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    int rc = cu_unary_begin(c, in, out, cu_dtype_of<T>());
    if (rc)
        return rc;
    typedef cu_acc<T> C;
    typedef F<C> Fn;
    Fn f;
    double k[2] = {0, 0};
    for (int i = 0; i < Fn::nk; i++)
        if (cu_param(p, i, &k[i]) || !std::isfinite(k[i]))
            return TB_EPARAM;
    f.k0 = (C)k[0]; /* rounded to the compute dtype, as the reference */
    f.k1 = (C)k[1];
    int64_t n = cu_numel(&out[0]);
    if (n == 0)
        return 0;
    const T *x = (const T *)in[0].data;
    T *y = (T *)out[0].data;
    if (cu_aligned16(x) && cu_aligned16(y))
        return cu_launch(c, k_unary_vec<T, Fn>,
                         tb_cu_blocks_1d(tb_cu_vec_work(n, cu_vec<T>::width),
                                         TB_CU_BLOCK, c->max_blocks),
                         TB_CU_BLOCK, 0, x, y, n, f);
    int64_t blocks = tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks);
    return cu_launch(c, k_unary<T, Fn>, blocks, TB_CU_BLOCK, 0, x, y, n, f);
}

/* ---- the table ------------------------------------------------------------ */

template <typename T, template <typename> class F>
static int kf_binary(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    (void)p;
    return run_binary<T, F>(ctx, in, out);
}

template <typename T, template <typename> class F>
static int kf_unary(void *ctx, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    return run_unary<T, F>(ctx, in, out, p);
}

#define BIN(op)                                                           \
    {TB_OP_##op,                                                          \
     {kf_binary<float, B_##op>, kf_binary<double, B_##op>,                \
      kf_binary<cu_bf16, B_##op>, kf_binary<cu_f16, B_##op>},             \
     CU_NAMES4(op, "cuda")},
#define UN(op)                                                            \
    {TB_OP_##op,                                                          \
     {kf_unary<float, U_##op>, kf_unary<double, U_##op>,                  \
      kf_unary<cu_bf16, U_##op>, kf_unary<cu_f16, U_##op>},               \
     CU_NAMES4(op, "cuda")},

static const cu_ext_entry cu_elementwise[] = {
    BIN(add) BIN(sub) BIN(mul) BIN(div) BIN(pow) BIN(maximum) BIN(minimum)
    UN(neg) UN(abs) UN(exp) UN(log) UN(sqrt) UN(rsqrt) UN(relu)
    UN(leaky_relu) UN(sigmoid) UN(tanh) UN(gelu) UN(gelu_tanh) UN(silu)
    UN(softplus)
    UN(add_scalar) UN(sub_scalar) UN(mul_scalar) UN(div_scalar)
};
#undef BIN
#undef UN

tb_kernel_fn cu_elementwise_kernel(tb_op_id id, tb_dtype dt,
                                   const char **impl)
{
    return CU_EXT_FIND(cu_elementwise, id, dt, impl);
}
