/* cpu backend: host kernels with run-time ISA dispatch, optionally split
 * over a persistent thread pool.  This file is the instance: its axes,
 * create/destroy, memory, counters, the `host` slot and the kernel
 * lookup; the work is done by the drivers (drv_*.c, drv.h), the
 * portable and per-ISA kernel files and the thread pool (pool.c).
 *
 * Axes, in this order:
 *   isa     = scalar, avx2, avx512, avx512bf16 (only what this CPU and
 *             OS support, lowered by TBENCH_ISA; avx512bf16 runs
 *             avx512's rows where an op has none of its own), and auto
 *             (the best; the default);
 *   threads = 1..N (N = online CPUs, capped at TB_MAX_AXIS_VALUES).
 * An instance fills the inner-loop tables of every level up to its own
 * (kernels.h: the portable C loops of kernels_c.c, overridden level by
 * level by kernels_avx2.c and kernels_avx512.c; vmath.h alike) and owns a
 * pool of threads-1 workers created once at create() and parked between
 * jobs; the calling (harness) thread always runs part 0 of a job itself,
 * so threads=1 never touches the pool.
 *
 * Kernel lookup is the registry's (kreg.h): one table of rows {op,
 * dtype, min_isa, fn, name} by op family, each pair's rows best first
 * down to its one C row; the first row the instance's level allows gives
 * both the function and the impl name ("add_f32_avx512",
 * "log_softmax_f64_scalar" where a level has no version of its own,
 * "gemm_f32_avx2_6x16" for matmul through the native GEMM), so a name
 * cannot claim code that did not run.
 *
 * Concurrency contract: one instance is driven by one thread at a time
 * (the harness thread).  Kernels called concurrently on the same instance
 * would share its pool and are not supported.  Counters are atomics, so
 * counters() may be read from any thread. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drv.h"

/* The one exported symbol (registry.c declares it too). */
extern const tb_backend tb_backend_cpu;

_Static_assert(TB_MAX_AXIS_VALUES <= 32, "cpu: thread value names");

/* ---- cpu_internal.h: the instance for kernels in other files ---- */

int tb_cpu_isa(const void *ctx)
{
    return ctx ? ((const tb_cpu_ctx *)ctx)->isa : TB_ISA_SCALAR;
}

void tb_cpu_count_launch(void *ctx)
{
    if (ctx)
        cpu_count_launch(ctx);
}

void *tb_cpu_serial(void *ctx)
{
    return ctx ? ((tb_cpu_ctx *)ctx)->serial : NULL;
}

void tb_cpu_parallel(void *ctx, int64_t work, int64_t items,
                     tb_cpu_task_fn fn, void *arg)
{
    tb_cpu_ctx *c = ctx;
    if (!c) {
        fn(arg, 0, 1);
        return;
    }
    cpu_pool_run(c->pool, cpu_parts(c, work, items), fn, arg);
}

/* t's shape into *s, every field stored in place: tb_tensor_shape's
 * returned struct (built with memset and memcpy, copied out with 16-byte
 * loads) stalled on store forwarding, ~20 cycles a call, three calls a
 * checked op call (nll_loss 128x10's profile: 9% of its ~210 ns). */
static inline void cpu_shape_of(const tb_tensor *t, tb_shape *s)
{
    s->ndim = t->ndim;
    for (int i = 0; i < TB_MAX_DIMS; i++)
        s->dim[i] = i < t->ndim ? t->shape[i] : 0;
}

int tb_cpu_check_op(tb_op_id id, tb_dtype dt, const tb_tensor *in,
                    const tb_tensor *out, const tb_params *p)
{
    const tb_op *op = tb_op_get(id);
    if (!op || !in || !out)
        return TB_EINVAL;
    tb_shape ish[TB_MAX_INPUTS], osh[TB_MAX_OUTPUTS];
    int rc;
    for (int i = 0; i < op->n_in; i++) {
        if ((rc = tb_tensor_check_operand(&in[i], tb_op_in_dtype(op, i, dt),
                                          1)))
            return rc;
        cpu_shape_of(&in[i], &ish[i]);
    }
    if ((rc = tb_op_infer(op, ish, op->n_in, p, osh, NULL, 0)))
        return rc;
    for (int i = 0; i < op->n_out; i++) {
        if (tb_tensor_check_operand(&out[i], tb_op_out_dtype(op, i, dt), 0))
            return TB_EINVAL;
        tb_shape got;
        cpu_shape_of(&out[i], &got);
        if (!tb_shape_equal(&got, &osh[i]))
            return TB_ESHAPE;
    }
    return 0;
}

double tb_cpu_param(const tb_params *p, tb_op_id id, int idx)
{
    if (p && tb_params_has(p, idx))
        return p->v[idx];
    return tb_op_get(id)->params[idx].def;
}

int tb_cpu_begin_op(void *ctx, tb_op_id id, tb_dtype dt,
                    const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    tb_cpu_count_launch(ctx);
    return tb_cpu_check_op(id, dt, in, out, p);
}

static int cpu_max_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > TB_MAX_AXIS_VALUES)
        n = TB_MAX_AXIS_VALUES;
    return (int)n;
}

static const char *const cpu_thread_names[32] = {
    "1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",  "9",  "10", "11",
    "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22",
    "23", "24", "25", "26", "27", "28", "29", "30", "31", "32",
};

static int cpu_probe(const tb_backend *self, char *reason, size_t len)
{
    (void)self;
    if (reason && len)
        reason[0] = '\0';
    return 0;
}

/* The isa axis: scalar and every level up to tb_cpu_isa_max() that this
 * binary was built with, then auto (the default). */
static const char *const cpu_isa_auto = "auto";

static int cpu_isa_levels(void)
{
    int max = tb_cpu_isa_max();
    while (max > TB_ISA_SCALAR && !tb_cpu_isa_built(max))
        max--;
    return max + 1;
}

static int cpu_axes(const tb_backend *self, tb_axis *out, int max)
{
    (void)self;
    if (!out || max < 1)
        return 0;
    memset(&out[0], 0, sizeof out[0]);
    out[0].name = "isa";
    int nl = cpu_isa_levels();
    for (int i = 0; i < nl; i++)
        out[0].values[i] = tb_cpu_isa_name(i);
    out[0].values[nl] = cpu_isa_auto;
    out[0].n_values = nl + 1;
    out[0].def = nl;
    out[0].doc = "instruction set of the kernels: scalar (portable C), "
                 "avx2 (AVX2+FMA), avx512 (AVX-512 F/BW/DQ/VL), as far as "
                 "this CPU and TBENCH_ISA allow; auto = the best";
    if (max < 2)
        return 1;
    memset(&out[1], 0, sizeof out[1]);
    out[1].name = "threads";
    out[1].n_values = cpu_max_threads();
    for (int i = 0; i < out[1].n_values; i++)
        out[1].values[i] = cpu_thread_names[i];
    out[1].def = 0;
    out[1].doc = "threads per kernel call, the calling thread included; "
                 "small jobs (under ~32K elements) run on the calling "
                 "thread only";
    return 2;
}

static void cpu_destroy(void *ctx)
{
    tb_cpu_ctx *c = ctx;
    if (!c)
        return;
    /* the workers' GEMM scratch dies with them, the caller's here */
    tb_cpu_pool_destroy(c->pool);
#if TB_CPU_HAVE_GEMM
    tb_gemm_scratch_release();
#endif
    free(c->serial);
    free(c);
}

/* The level for an isa value: "auto" or a level name that is usable
 * here; -1 with a one-line reason in err otherwise. */
static int cpu_parse_isa(const char *v, char *err, size_t errlen)
{
    const int levels = cpu_isa_levels();
    const char *bad_env = tb_cpu_isa_env_error();
    if (bad_env) {
        if (err && errlen)
            snprintf(err, errlen,
                     "cpu: environment TBENCH_ISA=\"%s\": expected "
                     "scalar, avx2, avx512, avx512bf16 or auto",
                     bad_env);
        return -1;
    }
    if (!v) {
        if (err && errlen)
            snprintf(err, errlen, "cpu: isa: no value given");
        return -1;
    }
    if (strcmp(v, cpu_isa_auto) == 0)
        return levels - 1;
    int isa = tb_cpu_isa_parse(v);
    if (isa < 0) {
        if (err && errlen)
            snprintf(err, errlen,
                     "cpu: isa=\"%s\": expected scalar, avx2, avx512, "
                     "avx512bf16 or auto",
                     v);
        return -1;
    }
    if (isa >= levels) {
        if (err && errlen)
            snprintf(err, errlen,
                     "cpu: isa=%s: not usable on this machine (best: %s, "
                     "given CPU/OS support and TBENCH_ISA)",
                     v, tb_cpu_isa_name(levels - 1));
        return -1;
    }
    return isa;
}

/* The threads value v: an integer 1..N in decimal; -1 with a one-line
 * reason in err otherwise. */
static int cpu_parse_threads(const char *v, char *err, size_t errlen)
{
    int max = cpu_max_threads();
    if (!v) {
        if (err && errlen)
            snprintf(err, errlen, "cpu: threads: no value given");
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || errno || *end != '\0' || n < 1 ||
        n > max) {
        if (err && errlen)
            snprintf(err, errlen,
                     "cpu: threads=\"%s\": expected an integer from 1 to "
                     "%d (online CPUs)",
                     v, max);
        return -1;
    }
    return (int)n;
}

/* values[0]: the isa value (see cpu_axes); values[1]: the threads value,
 * an integer 1..N in decimal. */
static int cpu_create(const tb_backend *self, const char *const *values,
                      void **ctx, char *err, size_t errlen)
{
    (void)self;
    if (err && errlen)
        err[0] = '\0';
    if (!ctx)
        return TB_EINVAL;
    *ctx = NULL;
    int isa = cpu_parse_isa(values ? values[0] : NULL, err, errlen);
    if (isa < 0)
        return TB_EPARAM;
    int n = cpu_parse_threads(values ? values[1] : NULL, err, errlen);
    if (n < 0)
        return TB_EPARAM;
    tb_cpu_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return TB_ENOMEM;
    c->threads = n;
    c->mem.owner = self;
    c->isa = tb_cpu_kernels_fill(&c->k[isa], isa);
    for (int l = TB_ISA_SCALAR; l <= c->isa; l++) {
        tb_cpu_kernels_fill(&c->k[l], l);
        tb_vmath_fill(&c->vm[l], l);
    }
    c->serial = calloc(1, sizeof *c->serial);
    if (!c->serial) {
        free(c);
        return TB_ENOMEM;
    }
    memcpy(c->serial->k, c->k, sizeof c->k);
    memcpy(c->serial->vm, c->vm, sizeof c->vm);
    c->serial->threads = 1;
    c->serial->isa = c->isa;
    c->serial->mem.owner = self;
    if (c->threads > 1) {
        int rc = tb_cpu_pool_create(c->threads - 1, &c->pool);
        if (rc) {
            if (err && errlen)
                snprintf(err, errlen,
                         "cpu: threads=%d: cannot start worker threads",
                         c->threads);
            free(c->serial);
            free(c);
            return rc;
        }
    }
    *ctx = c;
    return 0;
}


/* The `host` slot: the level an instance of these values runs (the
 * isa axis resolved within the cap, as cpu_create resolves it), or the
 * best allowed one; TBENCH_ISA as isa.c reads it. */
static int cpu_host(const tb_backend *self, const char *const *values,
                    tb_backend_host *out)
{
    (void)self;
    memset(out, 0, sizeof *out);
    const char *env = tb_cpu_isa_env();
    out->isa_cap = env && strcmp(env, "auto") != 0 ? env : NULL;
    out->isa_cap_error = tb_cpu_isa_env_error();
    out->isa = tb_cpu_isa_name(cpu_isa_levels() - 1);
    out->threads = 1;
    if (!values)
        return 0;
    int isa = cpu_parse_isa(values[0], NULL, 0);
    int n = cpu_parse_threads(values[1], NULL, 0);
    if (isa < 0 || n < 0)
        return TB_EPARAM;
    out->isa = tb_cpu_isa_name(isa);
    out->threads = n;
    return 0;
}

/* ---- memory ---- */

_Static_assert(offsetof(tb_cpu_ctx, mem) == 0, "hostmem slots");


/* ---- lookup ---- */

/* The registry row for the instance's level (kreg.c: best first, so the
 * best level at or below it that has the op); with a NULL instance, the
 * portable one.  fn and *impl come from that one row. */
static tb_kernel cpu_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                            const tb_params *p, const char **impl)
{
    if (impl)
        *impl = NULL;
    if (!op || (unsigned)op->id >= TB_OP_COUNT ||
        (unsigned)dt >= TB_DTYPE_COUNT)
        return (tb_kernel){NULL, NULL};
    /* In-place forms run the kernel of their op: every kernel here reads
     * element i of its inputs before it writes element i of its output,
     * so an output that is also the first input is safe (test_cpu). */
    if (op->base != op->id && op->category == TB_CAT_INPLACE)
        op = tb_op_get(op->base);
    /* Transfer ops (copy_h2d, copy_d2h, copy_d2d): host memory has no
     * device side, so the cpu backend runs them as its copy kernel (a
     * memcpy split over its threads): the same bytes moved within host
     * memory, the baseline a device copy is set against.  Page-locked
     * memory means nothing here: pinned=true is unsupported. */
    if (op->category == TB_CAT_TRANSFER) {
        if (op->n_params && p && tb_params_has(p, 0) && p->v[0] != 0)
            return (tb_kernel){NULL, NULL};
        op = tb_op_get(op->base);
    }
    size_t n;
    const tb_cpu_krow *rows = tb_cpu_krows(&n);
    const tb_cpu_krow *r =
        tb_cpu_krow_find(rows, n, op->id, dt, tb_cpu_isa(ctx));
    if (!r)
        return (tb_kernel){NULL, NULL};
    if (impl)
        *impl = r->name;
    /* einsum: the row's name and the equation, its call adds the plan */
    const char *eq = op->category == TB_CAT_CONTRACTION
                         ? tb_params_str(p, 0)
                         : NULL;
    if (impl && eq) {
        char t[TB_CPU_IMPL_TEXT];
        snprintf(t, sizeof t, "%s(%s)", r->name, eq);
        *impl = tb_cpu_impl_text(r->name, p->v[0], t);
    }
    return (tb_kernel){r->fn, ctx};
}

/* A case whose inputs are views: the view row (kreg.h) for the
 * instance's level. */
static tb_kernel cpu_kernel_view(void *ctx, const tb_op *op, tb_dtype dt,
                                 const tb_params *p, const tb_tensor *in,
                                 const char **impl, const char **why)
{
    (void)p;
    *impl = NULL;
    *why = NULL;
    if (!op || (unsigned)op->id >= TB_OP_COUNT ||
        (unsigned)dt >= TB_DTYPE_COUNT)
        return (tb_kernel){NULL, NULL};
    const tb_cpu_krow *r = tb_cpu_view_find(op, dt, tb_cpu_isa(ctx), in, why);
    if (!r)
        return (tb_kernel){NULL, NULL};
    *impl = r->name;
    return (tb_kernel){r->fn, ctx};
}

const tb_backend tb_backend_cpu = {
    .name = "cpu",
    .doc = "host kernels with run-time ISA dispatch (axis isa: portable "
           "C, AVX2, AVX-512, AVX-512 with BF16 and VNNI), split over a "
           "persistent pthread pool (axis threads)",
    .probe = cpu_probe,
    .axes = cpu_axes,
    .create = cpu_create,
    .destroy = cpu_destroy,
    TB_HOSTMEM_SLOTS,
    .kernel = cpu_kernel,
    .host = cpu_host,
    .kernel_view = cpu_kernel_view,
};
