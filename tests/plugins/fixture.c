/* Test plugins for tests/test_cli_plugin.py, one source built several
 * times with -DFIX_<KIND> (tests/meson.build):
 *   GOOD      add (f32/f64) correct, with plugin-managed memory
 *             (alloc/free/upload/download/sync) and its own counters;
 *             name "fixture"
 *   WRONG     add off by one: every case fails its check
 *   CRASH     add writes through a NULL pointer: the worker dies
 *   FORKCRASH forks a child that sleeps holding the worker's
 *             descriptors (a library's helper process), then dies of
 *             SIGSEGV (default action) in add
 *   ABI       declares ABI major 2
 *   NOENTRY   exports no tbench_plugin
 *   PROBE     probe fails with a reason
 *   NOKERNEL  the required kernel slot is NULL
 *   BUILTIN   declares the name "cpu"
 *   AXES      an axis "mode" with values a, b; create fails for b
 *   CTORCRASH, ENTRYCRASH, PROBECRASH  die of SIGSEGV in a constructor,
 *             in tbench_plugin() or in probe: tbench's trial load in a
 *             child process makes them unavailable, tbench lives on
 *   PROBEEXIT probe calls exit(0); PROBEHANG probe never returns
 *   MANY      as GOOD, and f32 add with parameter 0 set to i (0..39)
 *             gives mark_i instead, 40 distinct functions that each
 *             write i to out[0][0]: tests/test_plugin.c holds them all
 *             at once */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tbench/plugin.h>

/* Death by SIGSEGV, by the default action (not a sanitizer's handler),
 * so the signal is the same in every build. */
#if defined(FIX_CTORCRASH) || defined(FIX_ENTRYCRASH) || \
    defined(FIX_PROBECRASH) || defined(FIX_FORKCRASH)
static void segv(void)
{
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
}
#endif

#ifdef FIX_CTORCRASH
__attribute__((constructor)) static void fix_ctor(void) { segv(); }
#endif

typedef struct fix {
    tbp_counters c;
    int mode_b;
} fix;

static int fix_probe(char *reason, size_t len)
{
#ifdef FIX_PROBECRASH
    segv();
#endif
#ifdef FIX_PROBEEXIT
    exit(0);
#endif
#ifdef FIX_PROBEHANG
    for (;;)
        pause();
#endif
#ifdef FIX_PROBE
    snprintf(reason, len, "fixture: no such device");
    return TBP_EUNAVAILABLE;
#else
    (void)reason;
    (void)len;
    return TBP_OK;
#endif
}

static int fix_axes(tbp_axis *out, int max)
{
#ifdef FIX_AXES
    if (max < 1)
        return 0;
    memset(out, 0, sizeof *out);
    out->name = "mode";
    out->n_values = 2;
    out->values[0] = "a";
    out->values[1] = "b";
    out->def = 0;
    out->doc = "b cannot be created";
    return 1;
#else
    (void)out;
    (void)max;
    return 0;
#endif
}

static int fix_create(const char *const *values, int n_values, void **ctx,
                      char *err, size_t len)
{
    if (n_values == 1 && !strcmp(values[0], "b")) {
        snprintf(err, len, "fixture: mode b refused");
        return TBP_EINVAL;
    }
    fix *f = calloc(1, sizeof *f);
    if (!f)
        return TBP_ENOMEM;
    *ctx = f;
    return TBP_OK;
}

static void fix_destroy(void *ctx) { free(ctx); }

static size_t nbytes(const tbp_tensor *t)
{
    size_t n = t->dtype == TBP_F64                                 ? 8
               : t->dtype == TBP_BF16 || t->dtype == TBP_F16 ? 2
                                                              : 4;
    for (int d = 0; d < t->ndim; d++)
        n *= (size_t)t->shape[d];
    return n;
}

/* Plugin-managed memory: malloc'ed "device" buffers and counted
 * copies, as a GPU plugin would do with its own allocator. */
static int fix_alloc(void *ctx, tbp_tensor *t)
{
    fix *f = ctx;
    t->data = malloc(nbytes(t) ? nbytes(t) : 1);
    if (!t->data)
        return TBP_ENOMEM;
    f->c.device_allocs++;
    f->c.device_alloc_bytes += nbytes(t);
    return TBP_OK;
}

static void fix_free(void *ctx, tbp_tensor *t)
{
    (void)ctx;
    free(t->data);
    t->data = NULL;
}

static int fix_copy(void *ctx, tbp_tensor *dst, const tbp_tensor *src)
{
    fix *f = ctx;
    if (nbytes(dst) != nbytes(src) || dst->dtype != src->dtype)
        return TBP_ESHAPE;
    memcpy(dst->data, src->data, nbytes(src));
    f->c.memcpy_count++;
    f->c.memcpy_bytes += nbytes(src);
    return TBP_OK;
}

static int fix_sync(void *ctx)
{
    (void)ctx;
    return TBP_OK;
}

/* A child without exec: it inherits the worker's socket and outlives
 * the worker unless something kills its process group; alarm() ends it
 * where nothing does. */
static void fork_sleeper(void)
{
#ifdef FIX_FORKCRASH
    if (fork() == 0) {
        alarm(60);
        for (;;)
            pause();
    }
    segv(); /* the default action: SIGSEGV under a sanitizer too */
#endif
}

#define ADD(T, S)                                                         \
    static int add_##S(void *ctx, const tbp_tensor *in, tbp_tensor *out,  \
                       const tbp_params *p)                               \
    {                                                                     \
        (void)p;                                                          \
        fix *f = ctx;                                                     \
        const T *a = in[0].data, *b = in[1].data;                         \
        T *c = out[0].data;                                               \
        size_t n = nbytes(&out[0]) / sizeof(T);                           \
        if (nbytes(&in[0]) != nbytes(&out[0]) ||                          \
            nbytes(&in[1]) != nbytes(&out[0]))                            \
            return TBP_EUNSUPPORTED;                                      \
        if (CRASH) {                                                      \
            if (FORK)                                                     \
                fork_sleeper();                                           \
            T *volatile bad = NULL; /* opaque to the optimizer */         \
            c = bad;                                                      \
        }                                                                 \
        for (size_t i = 0; i < n; i++)                                    \
            c[i] = a[i] + b[i] + (T)WRONG;                                \
        f->c.kernel_launches += 2; /* as if two device kernels */         \
        return TBP_OK;                                                    \
    }
#if defined(FIX_CRASH) || defined(FIX_FORKCRASH)
#define CRASH 1
#else
#define CRASH 0
#endif
#ifdef FIX_FORKCRASH
#define FORK 1
#else
#define FORK 0
#endif
#ifdef FIX_WRONG
#define WRONG 1
#else
#define WRONG 0
#endif
ADD(float, f32)
ADD(double, f64)

/* bf16 (ABI 1.1): widen, add in f32, round to nearest even once */
static float bf16_f(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

__attribute__((unused)) static int add_bf16(void *ctx, const tbp_tensor *in,
                                            tbp_tensor *out,
                                            const tbp_params *p)
{
    (void)ctx, (void)p;
    const uint16_t *a = in[0].data, *b = in[1].data;
    uint16_t *c = out[0].data;
    size_t n = nbytes(&out[0]) / 2;
    if (nbytes(&in[0]) != nbytes(&out[0]) ||
        nbytes(&in[1]) != nbytes(&out[0]))
        return TBP_EUNSUPPORTED;
    for (size_t i = 0; i < n; i++) {
        float s = bf16_f(a[i]) + bf16_f(b[i]);
        uint32_t x;
        memcpy(&x, &s, sizeof x);
        c[i] = (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
    }
    return TBP_OK;
}

#ifdef FIX_MANY
#define MARK(i)                                                          \
    static int mark_##i(void *ctx, const tbp_tensor *in, tbp_tensor *out, \
                        const tbp_params *p)                             \
    {                                                                    \
        (void)ctx, (void)in, (void)p;                                    \
        *(float *)out[0].data = (float)(i);                              \
        return TBP_OK;                                                   \
    }
#define MARKS(X)                                                         \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12)  \
    X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)    \
    X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) X(32) X(33) X(34)   \
    X(35) X(36) X(37) X(38) X(39)
MARKS(MARK)
#define MARK_REF(i) mark_##i,
static const tbp_kernel_fn marks[] = {MARKS(MARK_REF)};
#endif

#ifdef FIX_NOKERNEL
__attribute__((unused))
#endif
static tbp_kernel_fn fix_kernel(void *ctx, const tbp_op *op,
                                const char *dtype, const tbp_params *p,
                                const char **impl)
{
    (void)ctx;
    (void)p;
    if (strcmp(op->name, "add") || op->n_in != 2 || op->n_out != 1)
        return NULL;
#ifdef FIX_MANY
    if (p && (p->set & 1u) && !strcmp(dtype, "f32") && p->v[0] >= 0 &&
        p->v[0] < (double)(sizeof marks / sizeof marks[0])) {
        *impl = "fixture_mark";
        return marks[(int)p->v[0]];
    }
#endif
    *impl = "fixture_add";
#ifdef FIX_OLD10
    /* built for ABI 1.0 and careless: any other name gets the f32
     * kernel, which tbench must never ask for (it would read bf16 as
     * floats) */
    return !strcmp(dtype, "f64") ? add_f64 : add_f32;
#else
    return !strcmp(dtype, "f32")    ? add_f32
           : !strcmp(dtype, "f64")  ? add_f64
           : !strcmp(dtype, "bf16") ? add_bf16
                                    : NULL;
#endif
}

static void fix_counters(void *ctx, tbp_counters *out)
{
    *out = ((fix *)ctx)->c;
}

static const tbp_plugin plugin = {
#ifdef FIX_ABI
    (uint32_t)2 << 16, sizeof(tbp_plugin), sizeof(tbp_tensor),
    sizeof(tbp_params),
#elif defined(FIX_OLD10)
    /* a plugin built against ABI 1.0's header (same layout) */
    (uint32_t)1 << 16, sizeof(tbp_plugin), sizeof(tbp_tensor),
    sizeof(tbp_params),
#else
    TBP_PLUGIN_HEADER,
#endif
#ifdef FIX_BUILTIN
    .name = "cpu",
#else
    .name = "fixture",
#endif
    .doc = "test plugin (tests/plugins/fixture.c)",
    .probe = fix_probe,
    .axes = fix_axes,
    .create = fix_create,
    .destroy = fix_destroy,
    .alloc = fix_alloc,
    .free = fix_free,
    .upload = fix_copy,
    .download = fix_copy,
    .sync = fix_sync,
#ifdef FIX_NOKERNEL
    .kernel = NULL,
#else
    .kernel = fix_kernel,
#endif
    .counters = fix_counters,
};

#ifdef FIX_NOENTRY
TBP_EXPORT const tbp_plugin *not_the_entry(void);
TBP_EXPORT const tbp_plugin *not_the_entry(void)
#else
TBP_EXPORT const tbp_plugin *tbench_plugin(void);
TBP_EXPORT const tbp_plugin *tbench_plugin(void)
#endif
{
#ifdef FIX_ENTRYCRASH
    segv();
#endif
    return &plugin;
}
