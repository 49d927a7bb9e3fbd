/* minimal: the smallest useful tbench plugin, as a tutorial.
 *
 * It computes add, mul and relu element-wise and matmul with the naive
 * triple loop, in f32 and f64, on ordinary host memory.  tbench checks
 * every result against its double-precision reference, times it and
 * reports it next to the built-in backends:
 *
 *     make                                  # builds minimal.so
 *     tbench run configs/quick.json --plugin ./minimal.so -b minimal
 *
 * docs/PLUGINS.md walks through this file; every line is explained
 * here too.  The only header is tbench's public ABI. */
#include <stdio.h>  /* snprintf for error messages */
#include <stdlib.h> /* malloc/free for the instance */
#include <string.h> /* strcmp for names */

#include <tbench/plugin.h> /* found by: pkg-config --cflags tbench-plugin */

/* Per-instance state.  tbench makes one instance per combination of
 * axis values; this plugin has no axes, so one instance, and nothing to
 * keep but a count of kernel calls (reported as kernel_launches). */
typedef struct minimal {
    unsigned long long calls;
} minimal;

/* probe: can the plugin run on this machine?  Plain C always can.  A
 * plugin for a GPU would look for a device here and, if there is none,
 * write the reason and return TBP_EUNAVAILABLE.  It runs before tbench
 * forks its workers, so it must not create contexts or threads. */
static int mini_probe(char *reason, size_t len)
{
    (void)reason; /* no reason needed: available */
    (void)len;
    return TBP_OK;
}

/* create: one instance.  values/n_values would hold one value per axis;
 * with no axes n_values is 0. */
static int mini_create(const char *const *values, int n_values, void **ctx,
                       char *err, size_t len)
{
    (void)values;
    (void)n_values;
    minimal *m = calloc(1, sizeof *m); /* zeroed: calls = 0 */
    if (!m) {
        snprintf(err, len, "out of memory"); /* shown in the case */
        return TBP_ENOMEM;
    }
    *ctx = m; /* tbench passes it back to every call */
    return TBP_OK;
}

/* destroy: free what create made. */
static void mini_destroy(void *ctx)
{
    free(ctx);
}

/* Number of elements of a tensor (1 for a scalar, ndim 0). */
static long long numel(const tbp_tensor *t)
{
    long long n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

/* Do two tensors have the same shape?  tbench's add and mul broadcast
 * (NumPy rules); this plugin only takes equal shapes, and says so by
 * failing with TBP_EUNSUPPORTED (the case reports the error). */
static int same_shape(const tbp_tensor *a, const tbp_tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

/* The element-wise kernels, written once per dtype with a macro: T is
 * the C type, S the dtype's suffix.  Each kernel has tbench's kernel
 * signature: instance, inputs, outputs, parameters; tensors are
 * contiguous (tbench allocates them so), so a flat loop is right. */
#define EW_KERNELS(T, S)                                                  \
    static int add_##S(void *ctx, const tbp_tensor *in, tbp_tensor *out,  \
                       const tbp_params *p)                               \
    {                                                                     \
        (void)p;                           /* add has no parameters */    \
        if (!same_shape(&in[0], &in[1]))   /* no broadcasting here */     \
            return TBP_EUNSUPPORTED;                                      \
        const T *a = in[0].data, *b = in[1].data; /* the two inputs */    \
        T *c = out[0].data;                /* the one output */           \
        long long n = numel(&out[0]);                                     \
        for (long long i = 0; i < n; i++)                                 \
            c[i] = a[i] + b[i];                                           \
        ((minimal *)ctx)->calls++;         /* one kernel launch */        \
        return TBP_OK;                                                    \
    }                                                                     \
    static int mul_##S(void *ctx, const tbp_tensor *in, tbp_tensor *out,  \
                       const tbp_params *p)                               \
    {                                                                     \
        (void)p;                                                          \
        if (!same_shape(&in[0], &in[1]))                                  \
            return TBP_EUNSUPPORTED;                                      \
        const T *a = in[0].data, *b = in[1].data;                         \
        T *c = out[0].data;                                               \
        long long n = numel(&out[0]);                                     \
        for (long long i = 0; i < n; i++)                                 \
            c[i] = a[i] * b[i];                                           \
        ((minimal *)ctx)->calls++;                                        \
        return TBP_OK;                                                    \
    }                                                                     \
    static int relu_##S(void *ctx, const tbp_tensor *in, tbp_tensor *out, \
                        const tbp_params *p)                              \
    {                                                                     \
        (void)p;                                                          \
        const T *x = in[0].data;                                          \
        T *y = out[0].data;                                               \
        long long n = numel(&out[0]);                                     \
        for (long long i = 0; i < n; i++)                                 \
            y[i] = x[i] > 0 ? x[i] : 0; /* relu(x) = max(x, 0) */         \
        ((minimal *)ctx)->calls++;                                        \
        return TBP_OK;                                                    \
    }
EW_KERNELS(float, f32)
EW_KERNELS(double, f64)

/* matmul: [..., M, K] @ [..., K, N] -> [..., M, N] with equal batch
 * dims (tbench's shape rule has checked them).  The naive i-k-j loop,
 * accumulating in the dtype itself; tbench's tolerance for matmul
 * allows the rounding of a K-term sum. */
#define MATMUL_KERNEL(T, S)                                               \
    static int matmul_##S(void *ctx, const tbp_tensor *in,                \
                          tbp_tensor *out, const tbp_params *p)           \
    {                                                                     \
        (void)p;                                                          \
        const tbp_tensor *A = &in[0], *B = &in[1];                        \
        int nd = A->ndim;                   /* >= 2 */                    \
        long long M = A->shape[nd - 2], K = A->shape[nd - 1];             \
        long long N = B->shape[nd - 1];                                   \
        long long batch = numel(A) / (M * K); /* product of batch dims */ \
        for (long long b = 0; b < batch; b++) {                           \
            const T *a = (const T *)A->data + b * M * K;                  \
            const T *w = (const T *)B->data + b * K * N;                  \
            T *c = (T *)out[0].data + b * M * N;                          \
            for (long long i = 0; i < M * N; i++)                         \
                c[i] = 0;                                                 \
            for (long long i = 0; i < M; i++)                             \
                for (long long k = 0; k < K; k++)                         \
                    for (long long j = 0; j < N; j++)                     \
                        c[i * N + j] += a[i * K + k] * w[k * N + j];      \
        }                                                                 \
        ((minimal *)ctx)->calls++;                                        \
        return TBP_OK;                                                    \
    }
MATMUL_KERNEL(float, f32)
MATMUL_KERNEL(double, f64)

/* The lookup table: op name x dtype name -> kernel, with the name tbench
 * shows as the case's impl. */
static const struct {
    const char *op, *dtype, *impl;
    tbp_kernel_fn fn;
} table[] = {
    {"add", "f32", "minimal_add_f32", add_f32},
    {"add", "f64", "minimal_add_f64", add_f64},
    {"mul", "f32", "minimal_mul_f32", mul_f32},
    {"mul", "f64", "minimal_mul_f64", mul_f64},
    {"relu", "f32", "minimal_relu_f32", relu_f32},
    {"relu", "f64", "minimal_relu_f64", relu_f64},
    {"matmul", "f32", "minimal_matmul_f32", matmul_f32},
    {"matmul", "f64", "minimal_matmul_f64", matmul_f64},
};

/* kernel: find the kernel by the op's stable name and the dtype's name.
 * Returning NULL makes the case `unsupported`: tbench never runs
 * something else in its place. */
static tbp_kernel_fn mini_kernel(void *ctx, const tbp_op *op,
                                 const char *dtype, const tbp_params *p,
                                 const char **impl)
{
    (void)ctx;
    (void)p; /* none of these ops has parameters */
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].op, op->name) &&
            !strcmp(table[i].dtype, dtype)) {
            *impl = table[i].impl;
            return table[i].fn;
        }
    return NULL;
}

/* counters: kernel calls so far.  Without this slot tbench would count
 * calls itself; a plugin whose kernel starts several device kernels
 * reports those instead. */
static void mini_counters(void *ctx, tbp_counters *out)
{
    out->kernel_launches = ((minimal *)ctx)->calls;
}

/* The table tbench reads.  TBP_PLUGIN_HEADER fills the ABI version and
 * the struct sizes that tbench checks at load.  alloc, free, upload,
 * download, sync, axes and the timer are left NULL: host memory that
 * tbench manages, synchronous kernels, no axes. */
static const tbp_plugin plugin = {
    TBP_PLUGIN_HEADER,
    .name = "minimal",
    .doc = "tutorial plugin: add, mul, relu, naive matmul in plain C",
    .version = "1.0",
    .probe = mini_probe,
    .create = mini_create,
    .destroy = mini_destroy,
    .kernel = mini_kernel,
    .counters = mini_counters,
};

/* The one exported symbol: tbench finds it with dlsym. */
TBP_EXPORT const tbp_plugin *tbench_plugin(void)
{
    return &plugin;
}
