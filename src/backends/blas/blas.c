/* blas backend: OpenBLAS's CBLAS on host memory.
 *
 * Axis: threads = 1..N (N = online CPUs, capped at TB_MAX_AXIS_VALUES and
 * at the OpenBLAS build's thread limit).  OpenBLAS's thread count is a
 * process-wide setting, so every kernel call sets it
 * (openblas_set_num_threads) before calling BLAS: two instances with
 * different thread counts can then be used one after the other and each
 * call runs with its own instance's count.  Measured cost of that call
 * on the development machine (OpenBLAS 0.3.21, pthreads build, 2-vCPU
 * KVM guest): about 4 ns, whether or not the count changes, against
 * ~150 ns for an 8x8x8 sgemm and ~6 us for 64x64x64 (Haswell kernels):
 * at most ~3 % on the tiniest GEMM and below the run-to-run noise from
 * 64^3 up, so it is done per call.  OpenBLAS still runs a small GEMM
 * on one thread (it splits only above ~64^3 multiply-adds), and its
 * worker threads spin for a while after each call (THREAD_TIMEOUT),
 * which can slow a following case on a machine with few cores.
 *
 * Kernels: matmul f32/f64, 2-D and batched.  OpenBLAS 0.3.21 (Debian 12)
 * has no cblas_?gemm_batch (OpenBLAS PR #4720, merged for 0.3.28; the
 * header here was checked), so a batched matmul
 * is one cblas_?gemm call per batch item, in order.  linear and conv2d
 * over GEMM; svd, qr and eigh through LAPACKE when it is found at build
 * time (TB_HAVE_LAPACKE).  Every other op returns NULL ("unsupported");
 * there is no fallback to another library.
 *
 * Counters: kernel_launches counts BLAS library calls (one per gemm, so
 * a batched matmul of B items counts B); memory comes from the tracked
 * allocator (tb_alloc) and is counted as device allocations, uploads and
 * downloads as memcpys, as in the cpu backend.
 *
 * Built without OpenBLAS (HAVE_OPENBLAS = 0) the backend still exists,
 * so a config that names it reports "unavailable" with the reason
 * instead of failing as an unknown backend. */
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../ops/alloc.h"
#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "../backend.h"
#include "../hostmem.h"
#include "blas_env.h"
#include "tb_config.h"

#if HAVE_OPENBLAS
#include <cblas.h>
#endif
#if HAVE_OPENBLAS && TB_HAVE_LAPACKE
#include <lapacke.h>
#endif

/* The one exported symbol (registry.c declares it too). */
extern const tb_backend tb_backend_blas;

#if HAVE_OPENBLAS

_Static_assert(TB_MAX_AXIS_VALUES <= 32, "blas: thread value names");

typedef struct blas_ctx {
    tb_hostmem mem; /* first: the tb_hostmem_slot_* slots (hostmem.h) */
    int threads;
} blas_ctx;
_Static_assert(offsetof(blas_ctx, mem) == 0, "hostmem slots");

static const char *const blas_thread_names[32] = {
    "1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",  "9",  "10", "11",
    "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22",
    "23", "24", "25", "26", "27", "28", "29", "30", "31", "32",
};

/* Largest thread count offered: online CPUs, at most TB_MAX_AXIS_VALUES
 * and at most what this OpenBLAS build can run (openblas_get_num_procs
 * is capped at its MAX_THREADS). */
static int blas_max_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    int procs = openblas_get_num_procs();
    if (procs >= 1 && n > procs)
        n = procs;
    if (n > TB_MAX_AXIS_VALUES)
        n = TB_MAX_AXIS_VALUES;
    return (int)n;
}

static int blas_probe(const tb_backend *self, char *reason, size_t len)
{
    (void)self;
    if (reason && len)
        reason[0] = '\0';
    return 0;
}

static int blas_axes(const tb_backend *self, tb_axis *out, int max)
{
    (void)self;
    if (!out || max < 1)
        return 0;
    memset(&out[0], 0, sizeof out[0]);
    out[0].name = "threads";
    out[0].n_values = blas_max_threads();
    for (int i = 0; i < out[0].n_values; i++)
        out[0].values[i] = blas_thread_names[i];
    out[0].def = 0;
    out[0].doc = "OpenBLAS threads (openblas_set_num_threads before every "
                 "call); OpenBLAS itself runs small GEMMs on one thread";
    return 1;
}

/* values[0]: the threads value, an integer 1..N in decimal. */
static int blas_create(const tb_backend *self, const char *const *values,
                       void **ctx, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!ctx)
        return TB_EINVAL;
    *ctx = NULL;
    int max = blas_max_threads();
    const char *v = values ? values[0] : NULL;
    if (!v) {
        if (err && errlen)
            snprintf(err, errlen, "blas: threads: no value given");
        return TB_EPARAM;
    }
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || errno || *end != '\0' || n < 1 ||
        n > max) {
        if (err && errlen)
            snprintf(err, errlen,
                     "blas: threads=\"%s\": expected an integer from 1 to "
                     "%d (online CPUs)",
                     v, max);
        return TB_EPARAM;
    }
    blas_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return TB_ENOMEM;
    c->threads = (int)n;
    c->mem.owner = self;
    *ctx = c;
    return 0;
}

static void blas_destroy(void *ctx)
{
    free(ctx);
}


/* ---- memory ---------------------------------------------------------- */



/* ---- matmul ---------------------------------------------------------- */

/* [..., M, K] x [..., K, N] -> [..., M, N] with equal batch dims: one
 * row-major cblas_?gemm (alpha 1, beta 0) per batch item.  Dimensions
 * must fit CBLAS's int (TB_ERANGE otherwise). */
static int blas_matmul(void *ctx, const tb_tensor *in, tb_tensor *out,
                       tb_dtype dt)
{
    blas_ctx *c = ctx;
    if (!c || !in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = tb_tensor_check_operand(&in[0], dt, 0)) ||
        (rc = tb_tensor_check_operand(&in[1], dt, 0)) ||
        (rc = tb_tensor_check_operand(out, dt, 0)))
        return rc;
    const tb_tensor *a = &in[0], *b = &in[1];
    const int nd = a->ndim;
    if (nd < 2 || b->ndim != nd || out->ndim != nd)
        return TB_ESHAPE;
    int64_t batch = 1;
    for (int d = 0; d < nd - 2; d++) {
        if (b->shape[d] != a->shape[d] || out->shape[d] != a->shape[d])
            return TB_ESHAPE;
        batch *= a->shape[d];
    }
    const int64_t M = a->shape[nd - 2], K = a->shape[nd - 1];
    const int64_t N = b->shape[nd - 1];
    if (b->shape[nd - 2] != K || out->shape[nd - 2] != M ||
        out->shape[nd - 1] != N)
        return TB_ESHAPE;
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX)
        return TB_ERANGE;
    if (batch == 0 || M == 0 || N == 0)
        return 0;
    if (K == 0) { /* an empty sum: C = 0 (lda/ldb of 0 are invalid) */
        memset(out->data, 0, tb_tensor_nbytes(out));
        return 0;
    }
    const int m = (int)M, n = (int)N, k = (int)K;
    openblas_set_num_threads(c->threads);
    if (dt == TB_F32) {
        const float *pa = a->data, *pb = b->data;
        float *pc = out->data;
        for (int64_t i = 0; i < batch; i++) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
                        1.0f, pa + i * M * K, k, pb + i * K * N, n, 0.0f,
                        pc + i * M * N, n);
            tb_hostmem_launch(&c->mem);
        }
    } else {
        const double *pa = a->data, *pb = b->data;
        double *pc = out->data;
        for (int64_t i = 0; i < batch; i++) {
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
                        1.0, pa + i * M * K, k, pb + i * K * N, n, 0.0,
                        pc + i * M * N, n);
            tb_hostmem_launch(&c->mem);
        }
    }
    return 0;
}

static int k_matmul_f32(void *ctx, const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    (void)p;
    return blas_matmul(ctx, in, out, TB_F32);
}

static int k_matmul_f64(void *ctx, const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    (void)p;
    return blas_matmul(ctx, in, out, TB_F64);
}

/* ---- linear and conv2d over GEMM ------------------------------------ */

/* Operands of a kernel with n_in inputs: all of dtype dt, contiguous. */
static int blas_check_all(blas_ctx *c, const tb_tensor *in, int n_in,
                          const tb_tensor *out, tb_dtype dt)
{
    if (!c || !in || !out)
        return TB_EINVAL;
    int rc;
    for (int i = 0; i < n_in; i++)
        if ((rc = tb_tensor_check_operand(&in[i], dt, 0)))
            return rc;
    return tb_tensor_check_operand(out, dt, 0);
}

/* linear: out = relu(x W + b) for x [M, K], W [K, N], b [N]: every row
 * of out starts as b, one gemm with beta = 1 adds x W, then a relu pass.
 * One launch per call.  conv2d: im2col per image into a tracked buffer
 * of [C*KH*KW, OH*OW] (counted as an allocation per call), then
 * out[n] = W [O, C*KH*KW] x col with beta = 1 over the bias rows; one
 * launch per image.  Both written once per dtype by the macro. */
#define BLAS_GEMM_OPS(T, SUF, GEMM)                                        \
    static int k_linear_##SUF(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p)         \
    {                                                                     \
        (void)p;                                                          \
        blas_ctx *c = ctx;                                                \
        int rc = blas_check_all(c, in, 3, out, TB_DTYPE_##SUF);           \
        if (rc)                                                           \
            return rc;                                                    \
        const tb_tensor *x = &in[0], *w = &in[1], *b = &in[2];            \
        if (x->ndim != 2 || w->ndim != 2 || b->ndim != 1 ||               \
            out->ndim != 2 || w->shape[0] != x->shape[1] ||               \
            b->shape[0] != w->shape[1] || out->shape[0] != x->shape[0] || \
            out->shape[1] != w->shape[1])                                 \
            return TB_ESHAPE;                                             \
        int64_t M = x->shape[0], K = x->shape[1], N = w->shape[1];        \
        if (M > INT_MAX || N > INT_MAX || K > INT_MAX)                    \
            return TB_ERANGE;                                             \
        T *o = out->data;                                                 \
        const T *bias = b->data;                                          \
        for (int64_t i = 0; i < M; i++)                                   \
            memcpy(o + i * N, bias, (size_t)N * sizeof(T));               \
        openblas_set_num_threads(c->threads);                             \
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N,   \
             (int)K, 1, x->data, (int)K, w->data, (int)N, 1, o, (int)N);  \
        for (int64_t i = 0; i < M * N; i++)                               \
            o[i] = o[i] > 0 ? o[i] : (o[i] != o[i] ? o[i] : 0);           \
        tb_hostmem_launch(&c->mem);                                       \
        return 0;                                                         \
    }                                                                     \
                                                                          \
    static int conv2d_##SUF(blas_ctx *c, const tb_tensor *in, int n_in,   \
                            tb_tensor *out, const tb_params *p)           \
    {                                                                     \
        int rc = blas_check_all(c, in, n_in, out, TB_DTYPE_##SUF);        \
        if (rc)                                                           \
            return rc;                                                    \
        const tb_tensor *x = &in[0], *w = &in[1];                         \
        if (x->ndim != 4 || w->ndim != 4 || out->ndim != 4 ||             \
            w->shape[1] != x->shape[1])                                   \
            return TB_ESHAPE;                                             \
        int64_t st = (int64_t)p->v[0], pad = (int64_t)p->v[1];            \
        int64_t dil = (int64_t)p->v[2];                                   \
        int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2],        \
                W = x->shape[3], O = w->shape[0], KH = w->shape[2],       \
                KW = w->shape[3];                                         \
        int64_t OH = tb_window_out(H, KH, st, pad, dil);                  \
        int64_t OW = tb_window_out(W, KW, st, pad, dil);                  \
        if (out->shape[0] != N || out->shape[1] != O ||                   \
            out->shape[2] != OH || out->shape[3] != OW ||                 \
            (n_in == 3 && (in[2].ndim != 1 || in[2].shape[0] != O)))      \
            return TB_ESHAPE;                                             \
        int64_t R = C * KH * KW, P = OH * OW;                             \
        if (R > INT_MAX || P > INT_MAX || O > INT_MAX)                    \
            return TB_ERANGE;                                             \
        T *col = tb_alloc((size_t)(R * P) * sizeof(T));                   \
        if (!col)                                                         \
            return TB_ENOMEM;                                             \
        const T *xs = x->data, *bias = n_in == 3 ? in[2].data : NULL;     \
        T *os = out->data;                                                \
        openblas_set_num_threads(c->threads);                             \
        for (int64_t n = 0; n < N; n++) {                                 \
            const T *xn = xs + n * C * H * W;                             \
            for (int64_t r = 0; r < R; r++) {                             \
                int64_t ci = r / (KH * KW), kh = r / KW % KH, kw = r % KW;\
                T *dst = col + r * P;                                     \
                for (int64_t oh = 0; oh < OH; oh++) {                     \
                    int64_t ih = oh * st - pad + kh * dil;                \
                    for (int64_t ow = 0; ow < OW; ow++) {                 \
                        int64_t iw = ow * st - pad + kw * dil;            \
                        dst[oh * OW + ow] =                               \
                            ih >= 0 && ih < H && iw >= 0 && iw < W        \
                                ? xn[(ci * H + ih) * W + iw]              \
                                : 0;                                      \
                    }                                                     \
                }                                                         \
            }                                                             \
            T *on = os + n * O * P;                                       \
            for (int64_t o = 0; o < O; o++)                               \
                for (int64_t q = 0; q < P; q++)                           \
                    on[o * P + q] = bias ? bias[o] : 0;                   \
            GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)O,       \
                 (int)P, (int)R, 1, w->data, (int)R, col, (int)P, 1, on,  \
                 (int)P);                                                 \
            tb_hostmem_launch(&c->mem);                                   \
        }                                                                 \
        tb_free(col);                                                     \
        return 0;                                                         \
    }                                                                     \
                                                                          \
    static int k_conv2d_##SUF(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p)         \
    {                                                                     \
        return conv2d_##SUF(ctx, in, 3, out, p);                          \
    }                                                                     \
                                                                          \
    static int k_conv2d_nobias_##SUF(void *ctx, const tb_tensor *in,      \
                                     tb_tensor *out, const tb_params *p)  \
    {                                                                     \
        return conv2d_##SUF(ctx, in, 2, out, p);                          \
    }

#define TB_DTYPE_f32 TB_F32
#define TB_DTYPE_f64 TB_F64
BLAS_GEMM_OPS(float, f32, cblas_sgemm)
BLAS_GEMM_OPS(double, f64, cblas_dgemm)

/* ---- svd, qr, eigh through LAPACKE ---------------------------------- */

#if TB_HAVE_LAPACKE
/* LAPACK's column-major drivers through the LAPACKE ?_work interface:
 * the plain LAPACKE calls would allocate their workspace (and, for
 * row-major, transposed copies) with malloc, out of the tracked
 * allocator's sight; here one tb_alloc per call holds the input copy
 * (every driver overwrites its matrix), the workspace the driver asked
 * for in a size query (lwork = -1, not counted as a launch), and any
 * transposed output.
 *   svd: a row-major m x n A is the column-major n x m A^T; ?gesdd
 *        (jobz 'S', divide and conquer, as NumPy and PyTorch call) on A^T
 *        = U' S V'^T gives A = V' S U'^T, and the column-major V'^T
 *        (k x m) and U' (n x k) buffers are exactly the row-major U
 *        (m x k) and Vt (k x n): no transposes.
 *   qr:  the input transposed into column-major, ?geqrf, R read out,
 *        ?orgqr for the thin Q, transposed out.
 *   eigh: the input transposed into column-major, ?syevd ('V', 'L': the
 *        lower triangle of A, as the op defines), V transposed out.
 * Non-finite input: TB_ENUMERIC before LAPACK sees it (reference LAPACK
 * may iterate on NaN without converging).  info > 0 (no convergence):
 * TB_ECONVERGE; info < 0 (an argument LAPACK rejected): TB_EINVAL.
 * One launch per call (the driver call); the instance's thread count is
 * set first, as for GEMM. */
static int blas_lapack_rc(lapack_int info)
{
    return info == 0 ? 0 : info > 0 ? TB_ECONVERGE : TB_EINVAL;
}

/* Check in[0] and the n_out outputs: dtype dt, contiguous, the shapes
 * of op's rule for in[0]; dims must fit lapack_int. */
static int blas_linalg_operands(blas_ctx *c, const tb_op *op,
                                const tb_tensor *in, const tb_tensor *out,
                                tb_dtype dt)
{
    int rc = blas_check_all(c, in, 1, out, dt);
    if (rc)
        return rc;
    for (int o = 1; o < op->n_out; o++)
        if ((rc = tb_tensor_check_operand(&out[o], dt, 0)))
            return rc;
    if (in[0].ndim != 2)
        return TB_ESHAPE;
    if (in[0].shape[0] > INT_MAX / 8 || in[0].shape[1] > INT_MAX / 8)
        return TB_ERANGE;
    tb_shape is = tb_tensor_shape(&in[0]), os[TB_MAX_OUTPUTS];
    char err[128];
    if ((rc = tb_op_infer(op, &is, 1, NULL, os, err, sizeof err)))
        return rc;
    for (int o = 0; o < op->n_out; o++) {
        tb_shape s = tb_tensor_shape(&out[o]);
        if (!tb_shape_equal(&s, &os[o]))
            return TB_ESHAPE;
    }
    return 0;
}

/* LAPACK's reply to a workspace query, as a count of elements. */
#define BLAS_LWORK(x) ((lapack_int)(x) > 1 ? (lapack_int)(x) : 1)

#define BLAS_LAPACK_OPS(T, SUF, P)                                        \
    static int k_svd_##SUF(void *ctx, const tb_tensor *in, tb_tensor *out,\
                           const tb_params *p)                            \
    {                                                                     \
        (void)p;                                                          \
        blas_ctx *c = ctx;                                                \
        int rc = blas_linalg_operands(c, tb_op_get(TB_OP_svd), in, out,   \
                                      TB_DTYPE_##SUF);                    \
        if (rc)                                                           \
            return rc;                                                    \
        lapack_int m = (lapack_int)in[0].shape[0];                        \
        lapack_int n = (lapack_int)in[0].shape[1], k = m < n ? m : n;     \
        T q;                                                              \
        lapack_int info = LAPACKE_##P##gesdd_work(                        \
            LAPACK_COL_MAJOR, 'S', n, m, NULL, n, NULL, NULL, n, NULL, k, \
            &q, -1, NULL);                                                \
        if (info)                                                         \
            return blas_lapack_rc(info);                                  \
        lapack_int lwork = BLAS_LWORK(q);                                 \
        size_t na = (size_t)m * (size_t)n;                                \
        T *a = tb_alloc((na + (size_t)lwork) * sizeof(T) +                \
                        8 * (size_t)k * sizeof(lapack_int));              \
        if (!a)                                                           \
            return TB_ENOMEM;                                             \
        T *work = a + na;                                                 \
        lapack_int *iwork = (lapack_int *)(work + lwork);                 \
        const T *x = in[0].data;                                          \
        bool finite = true;                                               \
        for (size_t i = 0; i < na; i++) {                                 \
            a[i] = x[i];                                                  \
            finite &= isfinite(x[i]) != 0;                                \
        }                                                                 \
        if (finite) {                                                     \
            openblas_set_num_threads(c->threads);                         \
            info = LAPACKE_##P##gesdd_work(                               \
                LAPACK_COL_MAJOR, 'S', n, m, a, n, out[1].data,           \
                out[2].data, n, out[0].data, k, work, lwork, iwork);      \
            tb_hostmem_launch(&c->mem);                                   \
        }                                                                 \
        tb_free(a);                                                       \
        return finite ? blas_lapack_rc(info) : TB_ENUMERIC;               \
    }                                                                     \
                                                                          \
    static int k_qr_##SUF(void *ctx, const tb_tensor *in, tb_tensor *out, \
                          const tb_params *p)                             \
    {                                                                     \
        (void)p;                                                          \
        blas_ctx *c = ctx;                                                \
        int rc = blas_linalg_operands(c, tb_op_get(TB_OP_qr), in, out,    \
                                      TB_DTYPE_##SUF);                    \
        if (rc)                                                           \
            return rc;                                                    \
        lapack_int m = (lapack_int)in[0].shape[0];                        \
        lapack_int n = (lapack_int)in[0].shape[1], k = m < n ? m : n;     \
        T q1, q2;                                                         \
        lapack_int info = LAPACKE_##P##geqrf_work(                        \
            LAPACK_COL_MAJOR, m, n, NULL, m, NULL, &q1, -1);              \
        if (!info)                                                        \
            info = LAPACKE_##P##orgqr_work(LAPACK_COL_MAJOR, m, k, k,     \
                                           NULL, m, NULL, &q2, -1);       \
        if (info)                                                         \
            return blas_lapack_rc(info);                                  \
        lapack_int lwork = BLAS_LWORK(q1 > q2 ? q1 : q2);                 \
        size_t na = (size_t)m * (size_t)n;                                \
        T *a = tb_alloc((na + (size_t)k + (size_t)lwork) * sizeof(T));    \
        if (!a)                                                           \
            return TB_ENOMEM;                                             \
        T *tau = a + na, *work = tau + k;                                 \
        const T *x = in[0].data;                                          \
        bool finite = true;                                               \
        for (lapack_int i = 0; i < m; i++)                                \
            for (lapack_int j = 0; j < n; j++) {                          \
                T e = x[(size_t)i * n + j];                               \
                a[(size_t)j * m + i] = e;                                 \
                finite &= isfinite(e) != 0;                               \
            }                                                             \
        if (!finite) {                                                    \
            tb_free(a);                                                   \
            return TB_ENUMERIC;                                           \
        }                                                                 \
        openblas_set_num_threads(c->threads);                             \
        info = LAPACKE_##P##geqrf_work(LAPACK_COL_MAJOR, m, n, a, m, tau, \
                                       work, lwork);                      \
        T *qo = out[0].data, *ro = out[1].data;                           \
        if (!info) {                                                      \
            for (lapack_int i = 0; i < k; i++)                            \
                for (lapack_int j = 0; j < n; j++)                        \
                    ro[(size_t)i * n + j] =                               \
                        j >= i ? a[(size_t)j * m + i] : 0;                \
            info = LAPACKE_##P##orgqr_work(LAPACK_COL_MAJOR, m, k, k, a,  \
                                           m, tau, work, lwork);          \
        }                                                                 \
        if (!info)                                                        \
            for (lapack_int i = 0; i < m; i++)                            \
                for (lapack_int j = 0; j < k; j++)                        \
                    qo[(size_t)i * k + j] = a[(size_t)j * m + i];         \
        tb_hostmem_launch(&c->mem);                                       \
        tb_free(a);                                                       \
        return blas_lapack_rc(info);                                      \
    }                                                                     \
                                                                          \
    static int k_eigh_##SUF(void *ctx, const tb_tensor *in,               \
                            tb_tensor *out, const tb_params *p)           \
    {                                                                     \
        (void)p;                                                          \
        blas_ctx *c = ctx;                                                \
        int rc = blas_linalg_operands(c, tb_op_get(TB_OP_eigh), in, out,  \
                                      TB_DTYPE_##SUF);                    \
        if (rc)                                                           \
            return rc;                                                    \
        lapack_int n = (lapack_int)in[0].shape[0];                        \
        T q;                                                              \
        lapack_int qi;                                                    \
        lapack_int info = LAPACKE_##P##syevd_work(                        \
            LAPACK_COL_MAJOR, 'V', 'L', n, NULL, n, NULL, &q, -1, &qi,    \
            -1);                                                          \
        if (info)                                                         \
            return blas_lapack_rc(info);                                  \
        lapack_int lwork = BLAS_LWORK(q), liwork = qi > 1 ? qi : 1;       \
        size_t na = (size_t)n * (size_t)n;                                \
        T *a = tb_alloc((na + (size_t)lwork) * sizeof(T) +                \
                        (size_t)liwork * sizeof(lapack_int));             \
        if (!a)                                                           \
            return TB_ENOMEM;                                             \
        T *work = a + na;                                                 \
        lapack_int *iwork = (lapack_int *)(work + lwork);                 \
        const T *x = in[0].data;                                          \
        bool finite = true;                                               \
        for (lapack_int i = 0; i < n; i++)                                \
            for (lapack_int j = 0; j < n; j++) {                          \
                T e = x[(size_t)i * n + j];                               \
                a[(size_t)j * n + i] = e;                                 \
                /* only the lower triangle is data */                     \
                finite &= j > i || isfinite(e) != 0;                      \
            }                                                             \
        if (!finite) {                                                    \
            tb_free(a);                                                   \
            return TB_ENUMERIC;                                           \
        }                                                                 \
        openblas_set_num_threads(c->threads);                             \
        info = LAPACKE_##P##syevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, a,  \
                                       n, out[0].data, work, lwork,       \
                                       iwork, liwork);                    \
        T *vo = out[1].data;                                              \
        if (!info)                                                        \
            for (lapack_int i = 0; i < n; i++)                            \
                for (lapack_int j = 0; j < n; j++)                        \
                    vo[(size_t)i * n + j] = a[(size_t)j * n + i];         \
        tb_hostmem_launch(&c->mem);                                       \
        tb_free(a);                                                       \
        return blas_lapack_rc(info);                                      \
    }

BLAS_LAPACK_OPS(float, f32, s)
BLAS_LAPACK_OPS(double, f64, d)
#endif /* TB_HAVE_LAPACKE */

typedef struct blas_kentry {
    tb_kernel_fn fn;
    const char *name;
} blas_kentry;

/* Ops missing here stay {NULL}: unsupported. */
static const blas_kentry blas_kernels[TB_OP_COUNT][TB_DTYPE_COUNT] = {
    [TB_OP_matmul] = {{k_matmul_f32, "cblas_sgemm"},
                      {k_matmul_f64, "cblas_dgemm"}},
    [TB_OP_linear] = {{k_linear_f32, "linear_f32_cblas_sgemm"},
                      {k_linear_f64, "linear_f64_cblas_dgemm"}},
    [TB_OP_conv2d] = {{k_conv2d_f32, "conv2d_f32_im2col_sgemm"},
                      {k_conv2d_f64, "conv2d_f64_im2col_dgemm"}},
    [TB_OP_conv2d_nobias] = {{k_conv2d_nobias_f32,
                              "conv2d_nobias_f32_im2col_sgemm"},
                             {k_conv2d_nobias_f64,
                              "conv2d_nobias_f64_im2col_dgemm"}},
#if TB_HAVE_LAPACKE
    [TB_OP_svd] = {{k_svd_f32, "svd_f32_lapacke_sgesdd"},
                   {k_svd_f64, "svd_f64_lapacke_dgesdd"}},
    [TB_OP_qr] = {{k_qr_f32, "qr_f32_lapacke_sgeqrf_sorgqr"},
                  {k_qr_f64, "qr_f64_lapacke_dgeqrf_dorgqr"}},
    [TB_OP_eigh] = {{k_eigh_f32, "eigh_f32_lapacke_ssyevd"},
                    {k_eigh_f64, "eigh_f64_lapacke_dsyevd"}},
#endif
};

/* A row of the table, called with the instance. */
static tb_kernel blas_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                             const tb_params *p, const char **impl)
{
    (void)p;
    if (impl)
        *impl = NULL;
    if (!op || (unsigned)op->id >= TB_OP_COUNT ||
        (unsigned)dt >= TB_DTYPE_COUNT)
        return (tb_kernel){NULL, NULL};
    const blas_kentry *e = &blas_kernels[op->id][dt];
    if (!e->fn)
        return (tb_kernel){NULL, NULL};
    if (impl)
        *impl = e->name;
    return (tb_kernel){e->fn, ctx};
}

const tb_backend tb_backend_blas = {
    .name = "blas",
    .doc = "OpenBLAS (CBLAS) on host memory: matmul, linear and conv2d "
           "(im2col) via cblas_?gemm; svd, qr, eigh via LAPACKE "
           "(axis threads)",
    .probe = blas_probe,
    .axes = blas_axes,
    .create = blas_create,
    .destroy = blas_destroy,
    TB_HOSTMEM_SLOTS,
    .kernel = blas_kernel,
    .env = tb_blas_env,
};

#else /* !HAVE_OPENBLAS */

/* Built without OpenBLAS: listed, never available, never instantiated. */
static int blas_probe(const tb_backend *self, char *reason, size_t len)
{
    (void)self;
    if (reason && len)
        snprintf(reason, len,
                 "tbench was built without OpenBLAS (install "
                 "libopenblas-dev and reconfigure, or -Dopenblas=enabled)");
    return TB_EUNAVAILABLE;
}

static int blas_axes(const tb_backend *self, tb_axis *out, int max)
{
    (void)self;
    (void)out;
    (void)max;
    return 0;
}

static int blas_create(const tb_backend *self, const char *const *values,
                       void **ctx, char *err, size_t errlen)
{
    (void)values;
    if (ctx)
        *ctx = NULL;
    return blas_probe(self, err, errlen);
}

static void blas_destroy(void *ctx)
{
    (void)ctx;
}

static int blas_none_alloc(void *ctx, tb_tensor *t)
{
    (void)ctx;
    (void)t;
    return TB_EUNAVAILABLE;
}

static void blas_none_free(void *ctx, tb_tensor *t)
{
    (void)ctx;
    (void)t;
}

static int blas_none_copy(void *ctx, tb_tensor *dst, const tb_tensor *src)
{
    (void)ctx;
    (void)dst;
    (void)src;
    return TB_EUNAVAILABLE;
}

static tb_kernel blas_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                             const tb_params *p, const char **impl)
{
    (void)ctx;
    (void)op;
    (void)dt;
    (void)p;
    if (impl)
        *impl = NULL;
    return (tb_kernel){NULL, NULL};
}

const tb_backend tb_backend_blas = {
    .name = "blas",
    .doc = "OpenBLAS (CBLAS) on host memory (not built in)",
    .probe = blas_probe,
    .axes = blas_axes,
    .create = blas_create,
    .destroy = blas_destroy,
    .alloc = blas_none_alloc,
    .free = blas_none_free,
    .upload = blas_none_copy,
    .download = blas_none_copy,
    .sync = NULL,
    .kernel = blas_kernel,
    .counters = NULL,
};

#endif /* HAVE_OPENBLAS */
