/* cuSOLVER-backed kernels of the CUDA module: svd, qr and eigh, f32 and
 * f64 (cuSOLVER linked dynamically, like cuBLAS; the instance's handle
 * on its stream, created on first use).
 *
 * tbench's matrices are row-major; cuSOLVER's column-major.  A row-major
 * [m,n] buffer is the column-major n x m matrix B = A^T, so:
 *  - eigh: B's upper triangle is A's lower one; syevd(upper) on a copy,
 *    ascending values; its column-major vectors are transposed into the
 *    row-major output (vectors as columns).
 *  - svd, n >= m: gesvd on a copy of B (n x m, tall or square):
 *    B = Ub S Vb^T, so A = Vb S Ub^T and the row-major U_A [m,k] has
 *    exactly the memory of the column-major VT_b (k x m), and Vt_A [k,n]
 *    that of U_b (n x k): gesvd writes the outputs directly.
 *  - svd, n < m: gesvd needs rows >= cols, so A is first transposed to
 *    column-major (m x n) and the column-major U, VT transposed back.
 *  - qr: A transposed to column-major, geqrf, R = the upper triangle of
 *    its first k rows, orgqr forms Q (m x k); both written row-major.
 * Each call reads back cuSOLVER's info (a stream synchronisation inside
 * the call): info > 0 (did not converge) is TB_ECONVERGE, never a
 * silent wrong answer.  Each cuSOLVER call counts as one launch. */
#include "kernels_ext.cuh"

#include <climits>
#include <new>

#include <cusolverDn.h>

struct cu_solver {
    cusolverDnHandle_t h;
    void *ws;
    size_t ws_bytes;
};

void cu_solver_release(cu_ctx *c)
{
    cu_solver *s = (cu_solver *)c->solver;
    if (!s)
        return;
    if (s->h)
        cusolverDnDestroy(s->h);
    cudaFree(s->ws);
    delete s;
    c->solver = NULL;
}

/* A cuSOLVER status as a TB_E* code, its number on stderr (cuSOLVER
 * has no status-name function). */
static int solver_err_at(cusolverStatus_t s, int line)
{
    if (s == CUSOLVER_STATUS_SUCCESS)
        return 0;
    fprintf(stderr, "tbench-cuda: %s:%d: cuSOLVER status %d\n", __FILE__,
            line, (int)s);
    return s == CUSOLVER_STATUS_ALLOC_FAILED ? TB_ENOMEM : TB_EIO;
}
#define solver_err(s) solver_err_at((s), __LINE__)

static int solver_get(cu_ctx *c, cu_solver **out)
{
    int rc = cu_use_device(c->device);
    if (rc)
        return rc;
    if (!c->solver) {
        cu_solver *s = new (std::nothrow) cu_solver();
        if (!s)
            return TB_ENOMEM;
        cusolverStatus_t st = cusolverDnCreate(&s->h);
        if (st == CUSOLVER_STATUS_SUCCESS)
            st = cusolverDnSetStream(s->h, c->stream);
        if (st != CUSOLVER_STATUS_SUCCESS) {
            if (s->h)
                cusolverDnDestroy(s->h);
            delete s;
            return solver_err(st);
        }
        c->solver = s;
    }
    *out = (cu_solver *)c->solver;
    return 0;
}

/* Carves a workspace into 256-byte aligned parts. */
struct carve {
    size_t off;
    static size_t up(size_t n) { return (n + 255) / 256 * 256; }
    size_t take(size_t bytes)
    {
        size_t at = off;
        off += up(bytes);
        return at;
    }
};

static int solver_ws(cu_ctx *c, cu_solver *s, size_t nb, char **ws)
{
    if (s->ws_bytes < nb) {
        cudaStreamSynchronize(c->stream);
        cudaFree(s->ws);
        s->ws = NULL;
        s->ws_bytes = 0;
        if (cudaMalloc(&s->ws, nb) != cudaSuccess) {
            cudaGetLastError();
            return TB_ENOMEM;
        }
        s->ws_bytes = nb;
        c->device_allocs.fetch_add(1, std::memory_order_relaxed);
        c->device_alloc_bytes.fetch_add(nb, std::memory_order_relaxed);
    }
    *ws = (char *)s->ws;
    return 0;
}

/* info back to the host: 0, TB_ECONVERGE (> 0) or TB_EINVAL (< 0). */
static int solver_info(cu_ctx *c, const int *dinfo)
{
    int info = 0;
    int rc = cu_read_back(c, &info, dinfo, sizeof info);
    if (rc)
        return rc;
    return info == 0 ? 0 : info > 0 ? TB_ECONVERGE : TB_EINVAL;
}

/* dst row-major [rows, cols] from column-major src (leading dim ld);
 * upper: zero below the diagonal (R of qr). */
template <typename T>
__global__ void k_cm_to_rm(const T *__restrict__ src, T *__restrict__ dst,
                           int64_t rows, int64_t cols, int64_t ld, int upper)
{
    int64_t n = rows * cols;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < n;
         t += step) {
        int64_t i = t / cols, j = t - i * cols;
        dst[t] = upper && j < i ? T(0) : src[i + j * ld];
    }
}

/* dst column-major (rows x cols, leading dim rows) from row-major src. */
template <typename T>
__global__ void k_rm_to_cm(const T *__restrict__ src, T *__restrict__ dst,
                           int64_t rows, int64_t cols)
{
    int64_t n = rows * cols;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < n;
         t += step) {
        int64_t j = t / rows, i = t - j * rows;
        dst[t] = src[i * cols + j];
    }
}

template <typename T>
static int cm_to_rm(cu_ctx *c, const T *src, T *dst, int64_t rows,
                    int64_t cols, int64_t ld, int upper)
{
    int64_t n = rows * cols;
    return cu_launch(c, k_cm_to_rm<T>,
                     tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, src, dst, rows, cols, ld, upper);
}

template <typename T>
static int rm_to_cm(cu_ctx *c, const T *src, T *dst, int64_t rows,
                    int64_t cols)
{
    int64_t n = rows * cols;
    return cu_launch(c, k_rm_to_cm<T>,
                     tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, src, dst, rows, cols);
}

/* ---- the S/D entry points, overloaded on the element type ---------------- */


static cusolverStatus_t syevd_ws(cusolverDnHandle_t h, int n, const float *A,
                                 const float *W, int *lw)
{
    return cusolverDnSsyevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR,
                                       CUBLAS_FILL_MODE_UPPER, n, A, n, W, lw);
}
static cusolverStatus_t syevd_ws(cusolverDnHandle_t h, int n,
                                 const double *A, const double *W, int *lw)
{
    return cusolverDnDsyevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR,
                                       CUBLAS_FILL_MODE_UPPER, n, A, n, W, lw);
}
static cusolverStatus_t syevd(cusolverDnHandle_t h, int n, float *A,
                              float *W, float *w, int lw, int *info)
{
    return cusolverDnSsyevd(h, CUSOLVER_EIG_MODE_VECTOR,
                            CUBLAS_FILL_MODE_UPPER, n, A, n, W, w, lw, info);
}
static cusolverStatus_t syevd(cusolverDnHandle_t h, int n, double *A,
                              double *W, double *w, int lw, int *info)
{
    return cusolverDnDsyevd(h, CUSOLVER_EIG_MODE_VECTOR,
                            CUBLAS_FILL_MODE_UPPER, n, A, n, W, w, lw, info);
}
static cusolverStatus_t gesvd_ws(cusolverDnHandle_t h, int m, int n, float *,
                                 int *lw)
{
    return cusolverDnSgesvd_bufferSize(h, m, n, lw);
}
static cusolverStatus_t gesvd_ws(cusolverDnHandle_t h, int m, int n,
                                 double *, int *lw)
{
    return cusolverDnDgesvd_bufferSize(h, m, n, lw);
}
static cusolverStatus_t gesvd(cusolverDnHandle_t h, int m, int n, float *A,
                              float *S, float *U, float *VT, float *w, int lw,
                              int *info)
{
    int k = m < n ? m : n;
    return cusolverDnSgesvd(h, 'S', 'S', m, n, A, m, S, U, m, VT, k, w, lw,
                            NULL, info);
}
static cusolverStatus_t gesvd(cusolverDnHandle_t h, int m, int n, double *A,
                              double *S, double *U, double *VT, double *w,
                              int lw, int *info)
{
    int k = m < n ? m : n;
    return cusolverDnDgesvd(h, 'S', 'S', m, n, A, m, S, U, m, VT, k, w, lw,
                            NULL, info);
}
static cusolverStatus_t geqrf_ws(cusolverDnHandle_t h, int m, int n,
                                 float *A, int *lw)
{
    return cusolverDnSgeqrf_bufferSize(h, m, n, A, m, lw);
}
static cusolverStatus_t geqrf_ws(cusolverDnHandle_t h, int m, int n,
                                 double *A, int *lw)
{
    return cusolverDnDgeqrf_bufferSize(h, m, n, A, m, lw);
}
static cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, float *A,
                              float *tau, float *w, int lw, int *info)
{
    return cusolverDnSgeqrf(h, m, n, A, m, tau, w, lw, info);
}
static cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, double *A,
                              double *tau, double *w, int lw, int *info)
{
    return cusolverDnDgeqrf(h, m, n, A, m, tau, w, lw, info);
}
static cusolverStatus_t orgqr_ws(cusolverDnHandle_t h, int m, int n, int k,
                                 const float *A, const float *tau, int *lw)
{
    return cusolverDnSorgqr_bufferSize(h, m, n, k, A, m, tau, lw);
}
static cusolverStatus_t orgqr_ws(cusolverDnHandle_t h, int m, int n, int k,
                                 const double *A, const double *tau, int *lw)
{
    return cusolverDnDorgqr_bufferSize(h, m, n, k, A, m, tau, lw);
}
static cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k,
                              float *A, const float *tau, float *w, int lw,
                              int *info)
{
    return cusolverDnSorgqr(h, m, n, k, A, m, tau, w, lw, info);
}
static cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k,
                              double *A, const double *tau, double *w, int lw,
                              int *info)
{
    return cusolverDnDorgqr(h, m, n, k, A, m, tau, w, lw, info);
}

/* Checks every operand and the output shapes of svd/qr/eigh for [m,n]. */
template <typename T>
static int linalg_operands(cu_ctx *c, const tb_tensor *in, tb_tensor *out,
                           int n_out, int64_t *m, int64_t *n)
{
    const tb_dtype dt = cu_dt<T>();
    if (!c || !in || !out || !cu_operand_ok(&in[0], dt))
        return TB_EINVAL;
    for (int i = 0; i < n_out; i++)
        if (!cu_operand_ok(&out[i], dt))
            return TB_EINVAL;
    if (in[0].ndim != 2)
        return TB_ESHAPE;
    *m = in[0].shape[0];
    *n = in[0].shape[1];
    if (*m < 1 || *n < 1 || *m > (1 << 16) || *n > (1 << 16))
        return TB_ESHAPE;
    return 0;
}

static bool shape2(const tb_tensor *t, int64_t a, int64_t b)
{
    return t->ndim == 2 && t->shape[0] == a && t->shape[1] == b;
}

template <typename T>
static int kf_eigh(void *ctx, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    (void)p;
    cu_ctx *c = (cu_ctx *)ctx;
    int64_t m, n;
    int rc = linalg_operands<T>(c, in, out, 2, &m, &n);
    if (rc)
        return rc;
    if (m != n || out[0].ndim != 1 || out[0].shape[0] != n ||
        !shape2(&out[1], n, n))
        return TB_ESHAPE;
    cu_solver *s;
    if ((rc = solver_get(c, &s)))
        return rc;
    int lw = 0;
    cusolverStatus_t st = syevd_ws(s->h, (int)n, (const T *)in[0].data,
                                   (const T *)out[0].data, &lw);
    if ((rc = solver_err(st)))
        return rc;
    carve cv = {0};
    size_t o_info = cv.take(sizeof(int));
    size_t o_a = cv.take((size_t)(n * n) * sizeof(T));
    size_t o_w = cv.take((size_t)(lw > 0 ? lw : 1) * sizeof(T));
    char *ws;
    if ((rc = solver_ws(c, s, cv.off, &ws)))
        return rc;
    int *info = (int *)(ws + o_info);
    T *a = (T *)(ws + o_a), *w = (T *)(ws + o_w);
    cudaError_t e = cudaMemcpyAsync(a, in[0].data,
                                    (size_t)(n * n) * sizeof(T),
                                    cudaMemcpyDeviceToDevice, c->stream);
    c->memcpy_count.fetch_add(1, std::memory_order_relaxed);
    c->memcpy_bytes.fetch_add((size_t)(n * n) * sizeof(T),
                              std::memory_order_relaxed);
    if (e != cudaSuccess)
        return cu_err(e);
    st = syevd(s->h, (int)n, a, (T *)out[0].data, w, lw, info);
    c->launches.fetch_add(1, std::memory_order_relaxed);
    if ((rc = solver_err(st)) || (rc = solver_info(c, info)))
        return rc;
    /* column j of the column-major result is eigenvector j: row-major
     * vectors-as-columns is its transpose */
    return cm_to_rm<T>(c, a, (T *)out[1].data, n, n, n, 0);
}

template <typename T>
static int kf_svd(void *ctx, const tb_tensor *in, tb_tensor *out,
                  const tb_params *p)
{
    (void)p;
    cu_ctx *c = (cu_ctx *)ctx;
    int64_t m, n;
    int rc = linalg_operands<T>(c, in, out, 3, &m, &n);
    if (rc)
        return rc;
    int64_t k = m < n ? m : n;
    if (!shape2(&out[0], m, k) || out[1].ndim != 1 ||
        out[1].shape[0] != k || !shape2(&out[2], k, n))
        return TB_ESHAPE;
    cu_solver *s;
    if ((rc = solver_get(c, &s)))
        return rc;
    bool wide = n >= m; /* B = A^T (n x m) is tall: no transposes */
    int rows = (int)(wide ? n : m), cols = (int)(wide ? m : n);
    int lw = 0;
    if ((rc = solver_err(gesvd_ws(s->h, rows, cols, (T *)NULL, &lw))))
        return rc;
    carve cv = {0};
    size_t o_info = cv.take(sizeof(int));
    size_t o_a = cv.take((size_t)(m * n) * sizeof(T));
    size_t o_u = wide ? 0 : cv.take((size_t)(m * k) * sizeof(T));
    size_t o_vt = wide ? 0 : cv.take((size_t)(k * n) * sizeof(T));
    size_t o_w = cv.take((size_t)(lw > 0 ? lw : 1) * sizeof(T));
    char *ws;
    if ((rc = solver_ws(c, s, cv.off, &ws)))
        return rc;
    int *info = (int *)(ws + o_info);
    T *a = (T *)(ws + o_a), *w = (T *)(ws + o_w);
    T *S = (T *)out[1].data;
    cusolverStatus_t st;
    if (wide) {
        cudaError_t e = cudaMemcpyAsync(a, in[0].data,
                                        (size_t)(m * n) * sizeof(T),
                                        cudaMemcpyDeviceToDevice, c->stream);
        c->memcpy_count.fetch_add(1, std::memory_order_relaxed);
        c->memcpy_bytes.fetch_add((size_t)(m * n) * sizeof(T),
                                  std::memory_order_relaxed);
        if (e != cudaSuccess)
            return cu_err(e);
        /* U_b (n x k) is Vt_A's memory, VT_b (k x m) is U_A's */
        st = gesvd(s->h, rows, cols, a, S, (T *)out[2].data,
                   (T *)out[0].data, w, lw, info);
        c->launches.fetch_add(1, std::memory_order_relaxed);
        if ((rc = solver_err(st)))
            return rc;
        return solver_info(c, info);
    }
    T *u = (T *)(ws + o_u), *vt = (T *)(ws + o_vt);
    if ((rc = rm_to_cm<T>(c, (const T *)in[0].data, a, m, n)))
        return rc;
    st = gesvd(s->h, rows, cols, a, S, u, vt, w, lw, info);
    c->launches.fetch_add(1, std::memory_order_relaxed);
    if ((rc = solver_err(st)) || (rc = solver_info(c, info)))
        return rc;
    if ((rc = cm_to_rm<T>(c, u, (T *)out[0].data, m, k, m, 0)))
        return rc;
    return cm_to_rm<T>(c, vt, (T *)out[2].data, k, n, k, 0);
}

template <typename T>
static int kf_qr(void *ctx, const tb_tensor *in, tb_tensor *out,
                 const tb_params *p)
{
    (void)p;
    cu_ctx *c = (cu_ctx *)ctx;
    int64_t m, n;
    int rc = linalg_operands<T>(c, in, out, 2, &m, &n);
    if (rc)
        return rc;
    int64_t k = m < n ? m : n;
    if (!shape2(&out[0], m, k) || !shape2(&out[1], k, n))
        return TB_ESHAPE;
    cu_solver *s;
    if ((rc = solver_get(c, &s)))
        return rc;
    carve cv = {0};
    size_t o_info = cv.take(sizeof(int));
    size_t o_a = cv.take((size_t)(m * n) * sizeof(T));
    size_t o_tau = cv.take((size_t)k * sizeof(T));
    char *ws;
    int lw1 = 0, lw2 = 0;
    /* buffer sizes need only the dims and pointers, not their data */
    if ((rc = solver_ws(c, s, cv.off, &ws)))
        return rc;
    T *a = (T *)(ws + o_a), *tau = (T *)(ws + o_tau);
    if ((rc = solver_err(geqrf_ws(s->h, (int)m, (int)n, a, &lw1))) ||
        (rc = solver_err(orgqr_ws(s->h, (int)m, (int)k, (int)k, a, tau,
                                  &lw2))))
        return rc;
    int lw = lw1 > lw2 ? lw1 : lw2;
    size_t o_w = cv.take((size_t)(lw > 0 ? lw : 1) * sizeof(T));
    if ((rc = solver_ws(c, s, cv.off, &ws)))
        return rc;
    int *info = (int *)(ws + o_info);
    a = (T *)(ws + o_a);
    tau = (T *)(ws + o_tau);
    T *w = (T *)(ws + o_w);
    if ((rc = rm_to_cm<T>(c, (const T *)in[0].data, a, m, n)))
        return rc;
    cusolverStatus_t st = geqrf(s->h, (int)m, (int)n, a, tau, w, lw, info);
    c->launches.fetch_add(1, std::memory_order_relaxed);
    if ((rc = solver_err(st)) || (rc = solver_info(c, info)))
        return rc;
    /* R: the upper triangle of the first k rows, before orgqr
     * overwrites a */
    if ((rc = cm_to_rm<T>(c, a, (T *)out[1].data, k, n, m, 1)))
        return rc;
    st = orgqr(s->h, (int)m, (int)k, (int)k, a, tau, w, lw, info);
    c->launches.fetch_add(1, std::memory_order_relaxed);
    if ((rc = solver_err(st)) || (rc = solver_info(c, info)))
        return rc;
    return cm_to_rm<T>(c, a, (T *)out[0].data, m, k, m, 0);
}

static const cu_ext_entry cu_linalg[] = {
    CU_EXT_ROW(svd, kf_svd<float>, kf_svd<double>)
    CU_EXT_ROW(qr, kf_qr<float>, kf_qr<double>)
    CU_EXT_ROW(eigh, kf_eigh<float>, kf_eigh<double>)
};

tb_kernel_fn cu_linalg_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_linalg, sizeof cu_linalg / sizeof cu_linalg[0], id,
                       dt, impl);
}
