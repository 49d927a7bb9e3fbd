/* blis: matmul, batched matmul and linear over BLIS (Debian's
 * libblis-dev), a second real BLAS next to tbench's OpenBLAS backend and
 * its native GEMM.  Built out of tree against tbench/plugin.h like any
 * user's plugin (Makefile here, docs/PLUGINS.md).
 *
 * Axis threads = 1..(online CPUs): the thread count BLIS uses for every
 * call of an instance, set per call through BLIS's runtime object
 * (rntm_t) and the expert interface bli_?gemm_ex, so instances with
 * different counts never disturb each other.  Host memory (tbench's
 * allocator); kernel_launches counts BLIS calls (one per gemm, so a
 * batch of B matrices is B launches). */
/* POSIX 2008: sysconf here, pthread barriers in blis.h under -std=c11 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <blis.h>
#include <tbench/plugin.h>

#define MAX_THREADS 32

typedef struct blis_inst {
    rntm_t rntm; /* the thread count of this instance */
    unsigned long long launches;
} blis_inst;

static char thread_vals[MAX_THREADS][4];

static int b_probe(char *reason, size_t len)
{
    (void)reason;
    (void)len;
    return TBP_OK; /* a host library: always usable once loaded */
}

static int b_axes(tbp_axis *out, int max)
{
    if (max < 1)
        return 0;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > MAX_THREADS)
        n = MAX_THREADS;
    memset(out, 0, sizeof *out);
    out->name = "threads";
    out->n_values = (int)n;
    for (int i = 0; i < n; i++) {
        snprintf(thread_vals[i], sizeof thread_vals[i], "%d", i + 1);
        out->values[i] = thread_vals[i];
    }
    out->def = 0;
    out->doc = "threads BLIS uses per call (rntm_t)";
    return 1;
}

static int b_create(const char *const *values, int n_values, void **ctx,
                    char *err, size_t len)
{
    int threads = 1;
    if (n_values == 1) {
        char *end;
        long t = strtol(values[0], &end, 10);
        if (*end || t < 1 || t > MAX_THREADS) {
            snprintf(err, len, "threads: '%s' is not 1..%d", values[0],
                     MAX_THREADS);
            return TBP_EINVAL;
        }
        threads = (int)t;
    }
    blis_inst *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, len, "out of memory");
        return TBP_ENOMEM;
    }
    bli_rntm_init(&b->rntm);
    bli_rntm_set_num_threads(threads, &b->rntm);
    *ctx = b;
    return TBP_OK;
}

static void b_destroy(void *ctx) { free(ctx); }

/* C[m,n] = A[m,k] @ B[k,n] (+ C when accumulate), row-major: row stride
 * is the row length, column stride 1. */
#define GEMM(T, CH)                                                       \
    static void gemm_##CH(blis_inst *bi, dim_t m, dim_t n, dim_t k,       \
                          const T *a, const T *b, T *c, int accumulate)   \
    {                                                                     \
        T one = 1, beta = accumulate ? 1 : 0;                             \
        bli_##CH##gemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k,  \
                          &one, (T *)a, k, 1, (T *)b, n, 1, &beta, c, n,  \
                          1, NULL, &bi->rntm);                            \
        bi->launches++;                                                   \
    }
GEMM(float, s)
GEMM(double, d)

/* matmul: [..., M, K] @ [..., K, N]; batch dims (if any) are equal, as
 * tbench's shape rule checked: one gemm per matrix of the batch. */
#define MATMUL(T, CH)                                                     \
    static int matmul_##CH(void *ctx, const tbp_tensor *in,               \
                           tbp_tensor *out, const tbp_params *p)          \
    {                                                                     \
        (void)p;                                                          \
        const tbp_tensor *A = &in[0], *B = &in[1];                        \
        int nd = A->ndim;                                                 \
        if (nd < 2 || B->ndim != nd)                                      \
            return TBP_ESHAPE;                                            \
        dim_t m = A->shape[nd - 2], k = A->shape[nd - 1];                 \
        dim_t n = B->shape[nd - 1];                                       \
        dim_t batch = 1;                                                  \
        for (int d = 0; d < nd - 2; d++)                                  \
            batch *= A->shape[d];                                         \
        for (dim_t i = 0; i < batch; i++)                                 \
            gemm_##CH(ctx, m, n, k, (const T *)A->data + i * m * k,       \
                      (const T *)B->data + i * k * n,                     \
                      (T *)out[0].data + i * m * n, 0);                   \
        return TBP_OK;                                                    \
    }
MATMUL(float, s)
MATMUL(double, d)

/* linear: relu(x @ W + b), x [M, K], W [K, N], b [N]: the bias is
 * copied into every row of the output, the gemm accumulates onto it,
 * then relu in place. */
#define LINEAR(T, CH)                                                     \
    static int linear_##CH(void *ctx, const tbp_tensor *in,               \
                           tbp_tensor *out, const tbp_params *p)          \
    {                                                                     \
        (void)p;                                                          \
        if (in[0].ndim != 2 || in[1].ndim != 2 || in[2].ndim != 1)        \
            return TBP_ESHAPE;                                            \
        dim_t m = in[0].shape[0], k = in[0].shape[1];                     \
        dim_t n = in[1].shape[1];                                         \
        const T *bias = in[2].data;                                       \
        T *c = out[0].data;                                               \
        for (dim_t i = 0; i < m; i++)                                     \
            memcpy(c + i * n, bias, (size_t)n * sizeof(T));               \
        gemm_##CH(ctx, m, n, k, in[0].data, in[1].data, c, 1);            \
        for (dim_t i = 0; i < m * n; i++)                                 \
            c[i] = c[i] > 0 ? c[i] : 0;                                   \
        return TBP_OK;                                                    \
    }
LINEAR(float, s)
LINEAR(double, d)

static tbp_kernel_fn b_kernel(void *ctx, const tbp_op *op,
                              const char *dtype, const tbp_params *p,
                              const char **impl)
{
    (void)ctx;
    (void)p;
    int f64 = !strcmp(dtype, "f64");
    if (!f64 && strcmp(dtype, "f32"))
        return NULL;
    if (!strcmp(op->name, "matmul")) {
        *impl = f64 ? "bli_dgemm" : "bli_sgemm";
        return f64 ? matmul_d : matmul_s;
    }
    if (!strcmp(op->name, "linear")) {
        *impl = f64 ? "bli_dgemm+bias+relu" : "bli_sgemm+bias+relu";
        return f64 ? linear_d : linear_s;
    }
    return NULL;
}

static void b_counters(void *ctx, tbp_counters *out)
{
    out->kernel_launches = ((blis_inst *)ctx)->launches;
}

static char version[64];

static const tbp_plugin plugin = {
    TBP_PLUGIN_HEADER,
    .name = "blis",
    .doc = "BLIS: matmul (batched too) and linear via bli_?gemm_ex "
           "(axis threads)",
    .version = version,
    .probe = b_probe,
    .axes = b_axes,
    .create = b_create,
    .destroy = b_destroy,
    .kernel = b_kernel,
    .counters = b_counters,
};

TBP_EXPORT const tbp_plugin *tbench_plugin(void)
{
    /* the version and the sub-configuration (kernel set) BLIS chose
     * for this CPU at run time, e.g. "BLIS 0.9.0 (skx)" */
    snprintf(version, sizeof version, "BLIS %s (%s)",
             bli_info_get_version_str(),
             bli_arch_string(bli_arch_query_id()));
    return &plugin;
}
