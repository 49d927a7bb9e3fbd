/* cuBLAS-backed kernels of the CUDA module: matmul (batched), linear
 * (relu(x @ W + b)), conv2d and conv2d_nobias (im2col + GEMM), f32, f64,
 * bf16 and f16.
 *
 * cuBLAS is linked dynamically (libcublas.so.N, found through the
 * module's RUNPATH or the loader path); a machine without it cannot load
 * the module, which `list` reports as the reason cuda is unavailable.
 * Each instance creates its handle on first use, bound to the instance's
 * stream, in CUBLAS_DEFAULT_MATH mode: f32 GEMMs are true FP32 (TF32
 * tensor cores are OFF; cuBLAS uses them for FP32 only when asked with
 * CUBLAS_TF32_TENSOR_OP_MATH or NVIDIA_TF32_OVERRIDE=1, which tbench
 * never sets) - unless the instance has axis tf32=on, whose handle is in
 * CUBLAS_TF32_TENSOR_OP_MATH mode: f32 matmul, linear and conv2d then
 * round their inputs to TF32 (10 stored significand bits) on the tensor
 * cores and accumulate in f32; their impl ends in "_tf32".
 * Row-major C[M,N] = A[M,K] @ B[K,N] is the column-major C^T = B^T A^T,
 * so the operands are passed swapped, untransposed.
 *
 * bf16 and f16: cublasGemmStridedBatchedEx with CUDA_R_16BF / CUDA_R_16F
 * operands and output and CUBLAS_COMPUTE_32F (tensor cores, products
 * and sums in f32, each result rounded once to the dtype, as PyTorch's
 * GPU matmul in these dtypes).  linear in 16 bits prefills the output
 * with the bias and lets the GEMM add it (beta = 1), then applies relu
 * in place: one rounding of x @ W + b, as the cpu backend's half row;
 * conv2d adds its bias the same way in every dtype.
 *
 * linear: one GEMM, then one epilogue kernel adding the bias and
 * applying relu in place.  conv2d: one im2col kernel writes every
 * image's column matrix [C*KH*KW, OH*OW] (layout.h, tb_im2col_src) to a
 * workspace the instance keeps and grows (counted as a device
 * allocation when it grows), the output is prefilled with the bias, and
 * one strided-batched GEMM (the filters' stride 0) accumulates onto it.
 * Each cuBLAS call counts as one launch in the backend counters (cuBLAS
 * may run more than one kernel; CUPTI counts them exactly).
 * Dimensions beyond cuBLAS's 32-bit int are unsupported. */
#include "kernels_ext.cuh"
#include "../../ops/einsum.h"

#include <climits>
#include <new>

#include <cublas_v2.h>

struct cu_blas {
    cublasHandle_t h;
    void *ws;
    size_t ws_bytes;
};

void cu_blas_release(cu_ctx *c)
{
    cu_blas *b = (cu_blas *)c->blas;
    if (!b)
        return;
    if (b->h)
        cublasDestroy(b->h);
    cudaFree(b->ws);
    delete b;
    c->blas = NULL;
}

/* A cuBLAS status as a TB_E* code, its name on stderr (as cu_err). */
static int blas_err_at(cublasStatus_t s, int line)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return 0;
    fprintf(stderr, "tbench-cuda: %s:%d: %s: %s (status %d)\n", __FILE__,
            line, cublasGetStatusName(s), cublasGetStatusString(s), (int)s);
    return s == CUBLAS_STATUS_ALLOC_FAILED ? TB_ENOMEM : TB_EIO;
}
#define blas_err(s) blas_err_at((s), __LINE__)

static int blas_get(cu_ctx *c, cu_blas **out)
{
    int rc = cu_use_device(c->device);
    if (rc)
        return rc;
    if (!c->blas) {
        cu_blas *b = new (std::nothrow) cu_blas();
        if (!b)
            return TB_ENOMEM;
        cublasStatus_t s = cublasCreate(&b->h);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublasSetStream(b->h, c->stream);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublasSetMathMode(b->h, c->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                : CUBLAS_DEFAULT_MATH);
        if (s != CUBLAS_STATUS_SUCCESS) {
            if (b->h)
                cublasDestroy(b->h);
            delete b;
            return blas_err(s);
        }
        c->blas = b;
    }
    *out = (cu_blas *)c->blas;
    return 0;
}

/* A workspace of at least nb bytes (grown, never shrunk). */
static int blas_ws(cu_ctx *c, cu_blas *b, size_t nb, void **ws)
{
    if (b->ws_bytes < nb) {
        cudaStreamSynchronize(c->stream); /* the old one may be in use */
        cudaFree(b->ws);
        b->ws = NULL;
        b->ws_bytes = 0;
        if (cudaMalloc(&b->ws, nb) != cudaSuccess) {
            cudaGetLastError();
            b->ws = NULL;
            return TB_ENOMEM;
        }
        b->ws_bytes = nb;
        c->device_allocs.fetch_add(1, std::memory_order_relaxed);
        c->device_alloc_bytes.fetch_add(nb, std::memory_order_relaxed);
    }
    *ws = b->ws;
    return 0;
}

/* Row-major C[batch][M,N] = A[batch][M,K] @ B[batch][K,N] + beta*C,
 * strides in elements (0: one matrix for every batch). */
static cublasStatus_t gemm_rm(cublasHandle_t h, int64_t batch, int64_t M,
                              int64_t N, int64_t K, const float *A,
                              int64_t sa, const float *B, int64_t sb,
                              float beta, float *C, int64_t sc)
{
    const float one = 1;
    return cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N,
                                     (int)M, (int)K, &one, B, (int)N, sb, A,
                                     (int)(K > 0 ? K : 1), sa, &beta, C, (int)N,
                                     sc,
                                     (int)batch);
}

/* bf16 and f16: tensor-core GEMMs accumulating in f32. */
static cublasStatus_t gemm_rm_ex(cublasHandle_t h, cudaDataType_t t,
                                 int64_t batch, int64_t M, int64_t N,
                                 int64_t K, const void *A, int64_t sa,
                                 const void *B, int64_t sb, float beta,
                                 void *C, int64_t sc)
{
    const float one = 1;
    return cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, B, t,
        (int)N, sb, A, t, (int)(K > 0 ? K : 1), sa, &beta, C, t, (int)N, sc,
        (int)batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

/* cu_bf16 and cu_f16 (float and double take the overloads around). */
template <typename H>
static cublasStatus_t gemm_rm(cublasHandle_t h, int64_t batch, int64_t M,
                              int64_t N, int64_t K, const H *A, int64_t sa,
                              const H *B, int64_t sb, H beta, H *C,
                              int64_t sc)
{
    static_assert(sizeof(H) == 2, "a 16-bit storage type");
    return gemm_rm_ex(h, cu_dtype_of<H>() == TB_BF16 ? CUDA_R_16BF
                                                      : CUDA_R_16F,
                      batch, M, N, K, A, sa, B, sb, (float)beta, C, sc);
}

static cublasStatus_t gemm_rm(cublasHandle_t h, int64_t batch, int64_t M,
                              int64_t N, int64_t K, const double *A,
                              int64_t sa, const double *B, int64_t sb,
                              double beta, double *C, int64_t sc)
{
    const double one = 1;
    return cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N,
                                     (int)M, (int)K, &one, B, (int)N, sb, A,
                                     (int)(K > 0 ? K : 1), sa, &beta, C, (int)N,
                                     sc,
                                     (int)batch);
}

static bool fits_int(int64_t v)
{
    return v >= 0 && v <= INT_MAX;
}

/* An empty product (K == 0) is all zeros; cuBLAS with k = 0 scales C by
 * beta, which the callers rely on. */
template <typename T>
static int run_gemm(cu_ctx *c, int64_t batch, int64_t M, int64_t N,
                    int64_t K, const T *A, int64_t sa, const T *B,
                    int64_t sb, T beta, T *C, int64_t sc)
{
    if (!fits_int(M) || !fits_int(N) || !fits_int(K) || !fits_int(batch))
        return TB_EUNSUPPORTED;
    if (batch == 0 || M == 0 || N == 0)
        return 0;
    cu_blas *b;
    int rc = blas_get(c, &b);
    if (rc)
        return rc;
    /* ld >= max(1, rows): gemm_rm passes max(K, 1) for A's */
    cublasStatus_t s = gemm_rm(b->h, batch, M, N, K, A, sa, B, sb, beta, C,
                               sc);
    c->launches.fetch_add(1, std::memory_order_relaxed);
    return blas_err(s);
}

/* ---- matmul -------------------------------------------------------------- */

template <typename T>
static int kf_matmul(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    (void)p;
    cu_ctx *c = (cu_ctx *)ctx;
    const tb_dtype dt = cu_dt<T>();
    if (!cu_args_ok(c, in, 2, out, dt))
        return TB_EINVAL;
    const tb_tensor *a = &in[0], *b = &in[1];
    int nd = a->ndim;
    if (nd < 2 || b->ndim != nd || out[0].ndim != nd)
        return TB_ESHAPE;
    int64_t batch = 1;
    for (int d = 0; d < nd - 2; d++) {
        if (b->shape[d] != a->shape[d] || out[0].shape[d] != a->shape[d])
            return TB_ESHAPE;
        batch *= a->shape[d];
    }
    int64_t M = a->shape[nd - 2], K = a->shape[nd - 1], N = b->shape[nd - 1];
    if (b->shape[nd - 2] != K || out[0].shape[nd - 2] != M ||
        out[0].shape[nd - 1] != N)
        return TB_ESHAPE;
    return run_gemm<T>(c, batch, M, N, K, (const T *)a->data, M * K,
                       (const T *)b->data, K * N, T(0), (T *)out[0].data,
                       M * N);
}

/* ---- linear -------------------------------------------------------------- */

/* y = relu(y + bias) (BIAS), or relu(y) where the GEMM added it. */
template <typename T, bool BIAS>
__global__ void k_bias_relu(T *y, const T *__restrict__ bias, int64_t n,
                            int64_t N)
{
    typedef cu_acc<T> C;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        C v = cu_ld(y[i]);
        if (BIAS)
            v += cu_ld(bias[i % N]);
        y[i] = cu_st<T>(v > C(0) ? v : (v != v ? v : C(0)));
    }
}

/* y[i] = bias[i % N]: the 16-bit linear's GEMM adds onto it. */
template <typename T>
__global__ void k_bias_rows(T *__restrict__ y, const T *__restrict__ bias,
                            int64_t n, int64_t N)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        y[i] = bias[i % N];
}

template <typename T>
static int kf_linear(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    (void)p;
    cu_ctx *c = (cu_ctx *)ctx;
    const tb_dtype dt = cu_dt<T>();
    if (!cu_args_ok(c, in, 3, out, dt))
        return TB_EINVAL;
    const tb_tensor *x = &in[0], *w = &in[1], *bias = &in[2];
    if (x->ndim != 2 || w->ndim != 2 || bias->ndim != 1 ||
        out[0].ndim != 2)
        return TB_ESHAPE;
    int64_t M = x->shape[0], K = x->shape[1], N = w->shape[1];
    if (w->shape[0] != K || bias->shape[0] != N || out[0].shape[0] != M ||
        out[0].shape[1] != N)
        return TB_ESHAPE;
    T *y = (T *)out[0].data;
    const T *bv = (const T *)bias->data;
    const int64_t n = M * N;
    const int64_t blocks = tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks);
    /* 16 bits: the bias goes into the GEMM's one rounding (see the top) */
    const bool in_gemm = sizeof(T) == 2;
    int rc = 0;
    if (in_gemm && n > 0)
        rc = cu_launch(c, k_bias_rows<T>, blocks, TB_CU_BLOCK, 0, y, bv, n,
                       N);
    if (rc || (rc = run_gemm<T>(c, 1, M, N, K, (const T *)x->data, 0,
                                (const T *)w->data, 0, T(in_gemm ? 1 : 0),
                                y, 0)))
        return rc;
    if (n == 0)
        return 0;
    if (in_gemm)
        return cu_launch(c, k_bias_relu<T, false>, blocks, TB_CU_BLOCK, 0, y,
                         bv, n, N);
    return cu_launch(c, k_bias_relu<T, true>, blocks, TB_CU_BLOCK, 0, y, bv,
                     n, N);
}

/* ---- conv2d -------------------------------------------------------------- */

struct conv_geom {
    int64_t N, C, H, W, O, KH, KW, OH, OW, s, pad, dil;
};

/* col[n][r][j] for r < C*KH*KW, j < OH*OW (layout.h). */
template <typename T>
__global__ void k_im2col(const T *__restrict__ x, T *__restrict__ col,
                         int64_t total, conv_geom g)
{
    int64_t rows = g.C * g.KH * g.KW, cols = g.OH * g.OW;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         i < total; i += step) {
        int64_t j = i % cols, t = i / cols;
        int64_t r = t % rows, n = t / rows;
        int64_t off = tb_im2col_src(r, j, g.H, g.W, g.KH, g.KW, g.OW, g.s,
                                    g.pad, g.dil);
        col[i] = off < 0 ? T(0) : x[n * g.C * g.H * g.W + off];
    }
}

/* y[n][o][j] = bias[o] (or 0). */
template <typename T>
__global__ void k_bias_fill(T *__restrict__ y, const T *__restrict__ bias,
                            int64_t n, int64_t O, int64_t plane)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        y[i] = bias ? bias[i / plane % O] : T(0);
}

template <typename T, bool BIAS>
static int kf_conv2d(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    const tb_dtype dt = cu_dt<T>();
    if (!cu_args_ok(c, in, BIAS ? 3 : 2, out, dt))
        return TB_EINVAL;
    const tb_tensor *x = &in[0], *w = &in[1];
    if (x->ndim != 4 || w->ndim != 4 || out[0].ndim != 4 ||
        (BIAS && in[2].ndim != 1))
        return TB_ESHAPE;
    conv_geom g;
    if (cu_param_int(p, 0, 1, 1 << 20, &g.s) ||
        cu_param_int(p, 1, 0, 1 << 20, &g.pad) ||
        cu_param_int(p, 2, 1, 1 << 20, &g.dil))
        return TB_EPARAM;
    g.N = x->shape[0];
    g.C = x->shape[1];
    g.H = x->shape[2];
    g.W = x->shape[3];
    g.O = w->shape[0];
    g.KH = w->shape[2];
    g.KW = w->shape[3];
    if (w->shape[1] != g.C || (BIAS && in[2].shape[0] != g.O))
        return TB_ESHAPE;
    g.OH = tb_cu_window_out(g.H, g.KH, g.s, g.pad, g.dil);
    g.OW = tb_cu_window_out(g.W, g.KW, g.s, g.pad, g.dil);
    if (out[0].shape[0] != g.N || out[0].shape[1] != g.O ||
        out[0].shape[2] != g.OH || out[0].shape[3] != g.OW)
        return TB_ESHAPE;
    int64_t rows = g.C * g.KH * g.KW, plane = g.OH * g.OW;
    int64_t ny = g.N * g.O * plane, ncol = g.N * rows * plane;
    if (ny == 0)
        return 0;
    if (!fits_int(rows) || !fits_int(plane) || !fits_int(g.O) ||
        !fits_int(g.N))
        return TB_EUNSUPPORTED;
    cu_blas *b;
    void *ws = NULL;
    int rc = blas_get(c, &b);
    if (rc || (ncol && (rc = blas_ws(c, b, (size_t)ncol * sizeof(T), &ws))))
        return rc;
    T *col = (T *)ws, *y = (T *)out[0].data;
    if (ncol &&
        (rc = cu_launch(c, k_im2col<T>,
                        tb_cu_blocks_1d(ncol, TB_CU_BLOCK, c->max_blocks),
                        TB_CU_BLOCK, 0, (const T *)x->data, col, ncol, g)))
        return rc;
    if ((rc = cu_launch(c, k_bias_fill<T>,
                        tb_cu_blocks_1d(ny, TB_CU_BLOCK, c->max_blocks),
                        TB_CU_BLOCK, 0, y,
                        BIAS ? (const T *)in[2].data : (const T *)NULL, ny,
                        g.O, plane)))
        return rc;
    /* y[n] [O, plane] += w [O, rows] @ col[n] [rows, plane] */
    return run_gemm<T>(c, g.N, g.O, plane, rows, (const T *)w->data, 0, col,
                       rows * plane, T(1), y, g.O * plane);
}

/* The 16-bit rows name cuBLAS's tensor-core path. */
/* ---- einsum ---------------------------------------------------------------- */

/* A gather step of an einsum plan (ops/einsum.h's tb_ein_gather): a
 * thread per dst element, its sum over the summed letters in double,
 * stored once (the cpu rows' arithmetic). */
template <typename T>
__global__ void k_ein_gather(const T *src, T *dst, tb_ein_gather g)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         o < g.n; o += step) {
        const int64_t off = tb_ein_offset(g.nd, g.size, g.st, o);
        double acc = 0;
        for (int64_t t = 0; t < g.per; t++)
            acc += (double)src[off + tb_ein_offset(g.ns, g.ssize, g.sst, t)];
        dst[o] = (T)acc;
    }
}

/* einsum of NIN operands: the plan tbench makes (the op's einsum_plan
 * slot, which reads the equation from tbench's string table; cu_kernel
 * keeps the op in the instance), run step by step: a gather kernel per
 * gather, a strided-batched cuBLAS GEMM per GEMM; the buffers between
 * steps in the instance's cuBLAS workspace (grown, kept: as conv2d's
 * columns). */
template <typename T, int NIN>
static int kf_einsum(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!cu_args_ok(c, in, NIN, out, cu_dt<T>()))
        return TB_EINVAL;
    const tb_op *op = c->einsum_op[NIN];
    if (!op || !op->einsum_plan || op->n_in != NIN)
        return TB_EINVAL;
    tb_shape sh[TB_MAX_INPUTS];
    for (int k = 0; k < NIN; k++) {
        sh[k].ndim = in[k].ndim;
        for (int d = 0; d < in[k].ndim; d++)
            sh[k].dim[d] = in[k].shape[d];
    }
    tb_einsum e;
    tb_ein_plan pl;
    int rc = op->einsum_plan(op, sh, p, &e, &pl);
    if (rc)
        return rc;
    if (out[0].ndim != e.out.n)
        return TB_ESHAPE;
    for (int d = 0; d < e.out.n; d++)
        if (out[0].shape[d] != e.size[e.out.l[d]])
            return TB_ESHAPE;
    size_t at[TB_EIN_SLOTS] = {0}, total = 0;
    for (int s = NIN; s < pl.n_slots; s++) {
        at[s] = total;
        total += ((size_t)pl.numel[s] * sizeof(T) + 255) / 256 * 256;
    }
    cu_blas *b = NULL;
    void *ws = NULL;
    if ((rc = blas_get(c, &b)) ||
        (total && (rc = blas_ws(c, b, total, &ws))))
        return rc;
    T *buf[TB_EIN_SLOTS];
    for (int s = 0; s < pl.n_slots; s++)
        buf[s] = s < NIN ? (T *)in[s].data : (T *)((char *)ws + at[s]);
    for (int i = 0; i < pl.n_steps && !rc; i++) {
        const tb_ein_step *st = &pl.step[i];
        T *dst = st->dst < 0 ? (T *)out[0].data : buf[st->dst];
        if (st->kind == TB_EIN_GATHER) {
            tb_ein_gather g;
            tb_ein_gather_of(&e, &pl.term[st->a], &st->dst_t, &g);
            if (g.n > 0)
                rc = cu_launch(c, k_ein_gather<T>,
                               tb_cu_blocks_1d(g.n, TB_CU_BLOCK,
                                               c->max_blocks),
                               TB_CU_BLOCK, 0, (const T *)buf[st->a], dst,
                               g);
            continue;
        }
        /* an empty sum (K = 0): beta 0 makes the zeros */
        rc = run_gemm(c, st->batch, st->M, st->N, st->K,
                      (const T *)buf[st->a], st->M * st->K,
                      (const T *)buf[st->b], st->K * st->N, (T)0, dst,
                      st->M * st->N);
    }
    return rc;
}

#define CU_BLAS_ROW(op, f32fn, f64fn, bf16fn, f16fn)                      \
    {TB_OP_##op,                                                          \
     {f32fn, f64fn, bf16fn, f16fn},                                       \
     {#op "_f32_cuda", #op "_f64_cuda", #op "_bf16_cublas_tc",            \
      #op "_f16_cublas_tc"}},
static const cu_ext_entry cu_blas_table[] = {
#define CU_EIN_ROW(op, n)                                                 \
    {TB_OP_##op,                                                          \
     {kf_einsum<float, n>, kf_einsum<double, n>, NULL, NULL},             \
     {#op "_f32_cuda", #op "_f64_cuda", NULL, NULL}},
    CU_EIN_ROW(einsum1, 1) CU_EIN_ROW(einsum, 2) CU_EIN_ROW(einsum3, 3)
    CU_EIN_ROW(einsum4, 4)
#undef CU_EIN_ROW
    CU_BLAS_ROW(matmul, kf_matmul<float>, kf_matmul<double>,
                kf_matmul<cu_bf16>, kf_matmul<cu_f16>)
    CU_BLAS_ROW(linear, kf_linear<float>, kf_linear<double>,
                kf_linear<cu_bf16>, kf_linear<cu_f16>)
    CU_BLAS_ROW(conv2d, (kf_conv2d<float, true>), (kf_conv2d<double, true>),
                (kf_conv2d<cu_bf16, true>), (kf_conv2d<cu_f16, true>))
    CU_BLAS_ROW(conv2d_nobias, (kf_conv2d<float, false>),
                (kf_conv2d<double, false>), (kf_conv2d<cu_bf16, false>),
                (kf_conv2d<cu_f16, false>))
};
#undef CU_BLAS_ROW

tb_kernel_fn cu_blas_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_blas_table,
                       sizeof cu_blas_table / sizeof cu_blas_table[0], id, dt,
                       impl);
}

const char *cu_blas_tf32_impl(tb_op_id id)
{
    switch (id) {
    case TB_OP_matmul:
        return "matmul_f32_cublas_tf32";
    case TB_OP_linear:
        return "linear_f32_cublas_tf32";
    case TB_OP_conv2d:
        return "conv2d_f32_cublas_tf32";
    case TB_OP_conv2d_nobias:
        return "conv2d_nobias_f32_cublas_tf32";
    case TB_OP_einsum: /* its plan's GEMMs on the same handle (einsum1
                        * has none: gathers only) */
        return "einsum_f32_cuda_tf32";
    case TB_OP_einsum3:
        return "einsum3_f32_cuda_tf32";
    case TB_OP_einsum4:
        return "einsum4_f32_cuda_tf32";
    default:
        return NULL;
    }
}
