/* mkl: matmul (batched too) and linear over Intel oneMKL, a third BLAS
 * next to tbench's OpenBLAS backend and the BLIS plugin (issue "Every op
 * ahead of the strongest peers", item 2).
 *
 * MKL is not a Debian package: PyPI's `mkl` wheel ships libmkl_rt, which
 * scripts/peers.sh installs into its virtual environment.  The plugin
 * needs no MKL header or library to build: it opens libmkl_rt with
 * dlopen when it is loaded and looks up the five functions it calls
 * (their C prototypes are MKL's documented ones, declared below).  Where
 * the library is found:
 *   TBENCH_MKL_RT   the path of libmkl_rt.so.N (peers.sh prints it), else
 *   libmkl_rt.so.3, then libmkl_rt.so.2, on the loader's search path.
 * Without it the plugin is unavailable, with the reason.
 *
 * Axis threads = 1..(online CPUs): MKL's GNU threading layer (libgomp, as
 * BLIS's and OpenBLAS's OpenMP builds), the count set before every call
 * with MKL_Set_Num_Threads_Local, so instances never disturb each other.
 * Host memory (tbench's allocator); kernel_launches counts gemm calls (a
 * batch of B matrices is B calls). */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tbench/plugin.h>

#define MAX_THREADS 32

/* CBLAS's enumerations (the values every CBLAS uses). */
enum { ROW_MAJOR = 101, NO_TRANS = 111 };
/* MKL_Set_Threading_Layer's value for the GNU OpenMP layer. */
enum { MKL_THREADING_GNU = 3 };

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double,
                         const double *, int, const double *, int, double,
                         double *, int);

static struct {
    void *lib;
    char path[512];
    sgemm_fn sgemm;
    dgemm_fn dgemm;
    int (*set_layer)(int);
    int (*set_threads_local)(int);
    void (*version)(char *, int);
    char why[256]; /* why it is unusable; "" once loaded */
} mkl;

static int load_one(const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(mkl.why, sizeof mkl.why, "%s", dlerror());
        return -1;
    }
    static const char *const need[] = {
        "cblas_sgemm", "cblas_dgemm", "MKL_Set_Threading_Layer",
        "MKL_Set_Num_Threads_Local", "MKL_Get_Version_String"};
    void *f[5];
    for (int i = 0; i < 5; i++)
        if (!(f[i] = dlsym(h, need[i]))) {
            snprintf(mkl.why, sizeof mkl.why, "%s has no %s", name, need[i]);
            dlclose(h);
            return -1;
        }
    mkl.lib = h;
    snprintf(mkl.path, sizeof mkl.path, "%s", name);
    /* object pointers to function pointers: POSIX dlsym's contract */
    memcpy(&mkl.sgemm, &f[0], sizeof f[0]);
    memcpy(&mkl.dgemm, &f[1], sizeof f[1]);
    memcpy(&mkl.set_layer, &f[2], sizeof f[2]);
    memcpy(&mkl.set_threads_local, &f[3], sizeof f[3]);
    memcpy(&mkl.version, &f[4], sizeof f[4]);
    mkl.why[0] = '\0';
    return 0;
}

/* Open libmkl_rt once; 0 or -1 with mkl.why set. */
static int load_mkl(void)
{
    if (mkl.lib)
        return 0;
    const char *env = getenv("TBENCH_MKL_RT");
    if (env && *env) {
        if (load_one(env) == 0)
            return 0;
        char why[sizeof mkl.why];
        snprintf(why, sizeof why, "%s", mkl.why);
        snprintf(mkl.why, sizeof mkl.why, "TBENCH_MKL_RT: %.230s", why);
        return -1;
    }
    if (load_one("libmkl_rt.so.3") == 0 || load_one("libmkl_rt.so.2") == 0)
        return 0;
    snprintf(mkl.why, sizeof mkl.why,
             "libmkl_rt not found (install it with scripts/peers.sh and "
             "set TBENCH_MKL_RT to the path it prints)");
    return -1;
}

typedef struct mkl_inst {
    int threads;
    unsigned long long launches;
} mkl_inst;

static char thread_vals[MAX_THREADS][4];

static int m_probe(char *reason, size_t len)
{
    if (load_mkl() == 0)
        return TBP_OK;
    snprintf(reason, len, "%s", mkl.why);
    return TBP_EUNAVAILABLE;
}

static int m_axes(tbp_axis *out, int max)
{
    if (max < 1)
        return 0;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    n = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
    memset(out, 0, sizeof *out);
    out->name = "threads";
    out->n_values = (int)n;
    for (int i = 0; i < n; i++) {
        snprintf(thread_vals[i], sizeof thread_vals[i], "%d", i + 1);
        out->values[i] = thread_vals[i];
    }
    out->def = 0;
    out->doc = "threads MKL uses per call (GNU OpenMP layer)";
    return 1;
}

static int m_create(const char *const *values, int n_values, void **ctx,
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
    if (load_mkl()) {
        snprintf(err, len, "%s", mkl.why);
        return TBP_EUNAVAILABLE;
    }
    /* before MKL's first computation in this process (a worker) */
    mkl.set_layer(MKL_THREADING_GNU);
    mkl_inst *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, len, "out of memory");
        return TBP_ENOMEM;
    }
    m->threads = threads;
    *ctx = m;
    return TBP_OK;
}

static void m_destroy(void *ctx) { free(ctx); }

/* C[m,n] = A[m,k] @ B[k,n] (+ C when accumulate), row-major. */
#define GEMM(T, CH)                                                       \
    static void gemm_##CH(mkl_inst *mi, int m, int n, int k, const T *a,  \
                          const T *b, T *c, int accumulate)               \
    {                                                                     \
        mkl.set_threads_local(mi->threads);                               \
        mkl.CH##gemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, (T)1, a, k,  \
                     b, n, accumulate ? (T)1 : (T)0, c, n);               \
        mi->launches++;                                                   \
    }
GEMM(float, s)
GEMM(double, d)

/* CBLAS takes int dimensions (MKL's LP64 interface). */
static int dims_fit(int64_t m, int64_t n, int64_t k)
{
    const int64_t lim = 2147483647;
    return m <= lim && n <= lim && k <= lim && m * k <= lim * 64;
}

/* matmul: [..., M, K] @ [..., K, N]; equal batch dims (tbench's shape
 * rule checked them): one gemm per matrix of the batch. */
#define MATMUL(T, CH)                                                     \
    static int matmul_##CH(void *ctx, const tbp_tensor *in,               \
                           tbp_tensor *out, const tbp_params *p)          \
    {                                                                     \
        (void)p;                                                          \
        const tbp_tensor *A = &in[0], *B = &in[1];                        \
        int nd = A->ndim;                                                 \
        if (nd < 2 || B->ndim != nd)                                      \
            return TBP_ESHAPE;                                            \
        int64_t m = A->shape[nd - 2], k = A->shape[nd - 1];               \
        int64_t n = B->shape[nd - 1];                                     \
        if (!dims_fit(m, n, k))                                           \
            return TBP_ESHAPE;                                            \
        int64_t batch = 1;                                                \
        for (int d = 0; d < nd - 2; d++)                                  \
            batch *= A->shape[d];                                         \
        for (int64_t i = 0; i < batch; i++)                               \
            gemm_##CH(ctx, (int)m, (int)n, (int)k,                        \
                      (const T *)A->data + i * m * k,                     \
                      (const T *)B->data + i * k * n,                     \
                      (T *)out[0].data + i * m * n, 0);                   \
        return TBP_OK;                                                    \
    }
MATMUL(float, s)
MATMUL(double, d)

/* linear: relu(x @ W + b), x [M, K], W [K, N], b [N]: the bias copied
 * into every row of the output, the gemm accumulates onto it, then relu
 * in place. */
#define LINEAR(T, CH)                                                     \
    static int linear_##CH(void *ctx, const tbp_tensor *in,               \
                           tbp_tensor *out, const tbp_params *p)          \
    {                                                                     \
        (void)p;                                                          \
        if (in[0].ndim != 2 || in[1].ndim != 2 || in[2].ndim != 1)        \
            return TBP_ESHAPE;                                            \
        int64_t m = in[0].shape[0], k = in[0].shape[1];                   \
        int64_t n = in[1].shape[1];                                       \
        if (!dims_fit(m, n, k))                                           \
            return TBP_ESHAPE;                                            \
        const T *bias = in[2].data;                                       \
        T *c = out[0].data;                                               \
        for (int64_t i = 0; i < m; i++)                                   \
            memcpy(c + i * n, bias, (size_t)n * sizeof(T));               \
        gemm_##CH(ctx, (int)m, (int)n, (int)k, in[0].data, in[1].data, c, \
                  1);                                                     \
        for (int64_t i = 0; i < m * n; i++)                               \
            c[i] = c[i] > 0 ? c[i] : 0;                                   \
        return TBP_OK;                                                    \
    }
LINEAR(float, s)
LINEAR(double, d)

static tbp_kernel_fn m_kernel(void *ctx, const tbp_op *op,
                              const char *dtype, const tbp_params *p,
                              const char **impl)
{
    (void)ctx;
    (void)p;
    int f64 = !strcmp(dtype, "f64");
    if (!f64 && strcmp(dtype, "f32"))
        return NULL;
    if (!strcmp(op->name, "matmul")) {
        *impl = f64 ? "mkl cblas_dgemm" : "mkl cblas_sgemm";
        return f64 ? matmul_d : matmul_s;
    }
    if (!strcmp(op->name, "linear")) {
        *impl = f64 ? "mkl cblas_dgemm+bias+relu" : "mkl cblas_sgemm+bias+relu";
        return f64 ? linear_d : linear_s;
    }
    return NULL;
}

static void m_counters(void *ctx, tbp_counters *out)
{
    out->kernel_launches = ((mkl_inst *)ctx)->launches;
}

static char version[800];

static const tbp_plugin plugin = {
    TBP_PLUGIN_HEADER,
    .name = "mkl",
    .doc = "Intel oneMKL (PyPI's libmkl_rt, opened at load): matmul "
           "(batched too) and linear via cblas_?gemm (axis threads)",
    .version = version,
    .probe = m_probe,
    .axes = m_axes,
    .create = m_create,
    .destroy = m_destroy,
    .kernel = m_kernel,
    .counters = m_counters,
};

TBP_EXPORT const tbp_plugin *tbench_plugin(void)
{
    /* MKL's own version line and the library's path, e.g. "Intel(R)
     * oneAPI Math Kernel Library Version 2026.2-Product Build ...
     * (/path/libmkl_rt.so.3)"; without it probe says why */
    if (load_mkl() == 0) {
        char v[256] = "";
        mkl.version(v, (int)sizeof v);
        v[sizeof v - 1] = '\0';
        snprintf(version, sizeof version, "%s (%s)", v, mkl.path);
    } else {
        snprintf(version, sizeof version, "libmkl_rt not loaded");
    }
    return &plugin;
}
