/* cpu backend: portable C kernels on host memory, optionally split over a
 * persistent thread pool.
 *
 * Axis: threads = 1..N (N = online CPUs, capped at TB_MAX_AXIS_VALUES).
 * Each instance owns a pool of threads-1 workers created once at create()
 * and parked between jobs; the calling (harness) thread always runs part 0
 * of a job itself, so threads=1 never touches the pool.
 *
 * Kernels are plain C written for the auto-vectoriser (restrict pointers,
 * unit-stride inner loops, explicit independent accumulator lanes where a
 * reduction would otherwise need -ffast-math to vectorise).  No intrinsics
 * and no -m flags: SIMD variants belong in their own files (later issue).
 *
 * Concurrency contract: one instance is driven by one thread at a time
 * (the harness thread).  Kernels called concurrently on the same instance
 * would share its pool and are not supported.  Counters are atomics, so
 * counters() may be read from any thread. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../ops/alloc.h"
#include "../../ops/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "../backend.h"

/* The one exported symbol (registry.c declares it too). */
extern const tb_backend tb_backend_cpu;

/* Below this much work a kernel runs on the calling thread only.  Work is
 * counted in elements touched (multiply-adds for matmul; log_softmax's
 * elements weigh CPU_EXP_WEIGHT, see below).  Handing out a job costs
 * about a microsecond with spinning workers and several with parked ones,
 * about what 32K simple f32 element operations take on one core, so
 * splitting smaller jobs would only add overhead. */
#define CPU_PAR_MIN_WORK 32768
/* A scalar libm exp() costs ~10-20 simple element operations. */
#define CPU_EXP_WEIGHT 16

/* How many times an idle worker (or a caller waiting for workers) polls
 * before blocking on its condition variable: ~5-10 microseconds on a
 * current x86 core, enough to catch back-to-back kernel calls (a timing
 * loop) without a futex wake-up each time, short enough not to steal a
 * core from other work for long. */
#define CPU_SPIN_POLLS 20000

/* Independent accumulator lanes for reductions: the compiler keeps them
 * in vector registers without needing to reassociate a scalar sum. */
#define CPU_LANES 16
/* Sums are blocked: CPU_SUM_BLOCK values are added in CPU_LANES lanes of
 * the input type, then each block is folded into a double accumulator.
 * An f32 lane adds at most CPU_SUM_BLOCK / CPU_LANES = 64 terms, so its
 * rounding error is bounded by 64 half-ulps of the lane's magnitude (and
 * typically ~8), while the long-range sum is carried in double: the error
 * does not grow with n the way a plain f32 running sum's does. */
#define CPU_SUM_BLOCK 1024
/* Column tiles for reductions / log_softmax over a non-last axis: the
 * per-column accumulators live on the stack (no allocation in a kernel).
 * Tiles are at most CPU_COL_TILE wide (fewer passes over the rows), and
 * narrower when that gives each thread a tile (cpu_col_tile). */
#define CPU_COL_TILE 1024
#define CPU_COL_TILE_MIN 64
/* Matmul cache blocking: a CPU_MM_KC x CPU_MM_NC block of B (128 KiB in
 * f32, 256 KiB in f64) stays in L2 while every row of the output part
 * streams over it; one CPU_MM_NC slice of a C row stays in L1. */
#define CPU_MM_KC 128
#define CPU_MM_NC 256
/* Transpose: a job item reads CPU_TR_TILE whole input rows (streaming)
 * and writes CPU_TR_TILE columns of every output row.  8 rows, not more:
 * with a power-of-two row pitch (1024 floats) every row maps to the same
 * L1 set, and 16 or 32 of them thrash an 8/12-way L1 (measured 2-3x
 * slower); narrower column blocks over all rows (more TLB misses) were
 * 2x slower for f64. */
#define CPU_TR_TILE 8

_Static_assert(TB_MAX_AXIS_VALUES <= 32, "cpu: thread value names");

/* ------------------------------------------------------------------ */
/* Thread pool                                                          */
/* ------------------------------------------------------------------ */

/* A job: fn(arg, part, nparts) for part in [0, nparts).  Each part must
 * compute its own range of the work from (part, nparts). */
typedef void (*cpu_task_fn)(void *arg, int part, int nparts);

struct cpu_pool;

typedef struct cpu_worker {
    struct cpu_pool *pool;
    int id; /* 1..nworkers: the part it runs; part 0 is the caller's */
    pthread_t tid;
} cpu_worker;

typedef struct cpu_pool {
    int nworkers;
    cpu_worker *workers;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* workers: a new generation was published */
    pthread_cond_t done; /* caller: pending reached 0 */
    /* Bumped (under mu) for every job and once for shutdown; the job
     * fields below are written before the release increment and read
     * after an acquire load, and not rewritten until pending is 0. */
    _Atomic uint64_t gen;
    /* Workers that have not yet acknowledged the current generation.
     * Every worker acknowledges every job, even when it has no part, so
     * the caller never rewrites the job while a worker reads it. */
    _Atomic int pending;
    bool stop;
    cpu_task_fn fn;
    void *arg;
    int nparts;
    unsigned epoch; /* cpu_fork_epoch when the workers were started */
} cpu_pool;

/* Fork safety: a child process inherits the pool but not its workers (a
 * harness may fork to isolate a case).  A pthread_atfork child handler
 * bumps this epoch; a pool from an older epoch runs every job on the
 * calling thread, and its destroy only frees memory (joining threads that
 * do not exist, or touching a mutex a vanished worker held, would hang). */
static _Atomic unsigned cpu_fork_epoch;
static pthread_once_t cpu_atfork_once = PTHREAD_ONCE_INIT;

static void cpu_atfork_child(void)
{
    atomic_fetch_add_explicit(&cpu_fork_epoch, 1, memory_order_relaxed);
}

static void cpu_atfork_register(void)
{
    pthread_atfork(NULL, NULL, cpu_atfork_child);
}

static bool cpu_pool_forked(const cpu_pool *pool)
{
    return atomic_load_explicit(&cpu_fork_epoch, memory_order_relaxed) !=
           pool->epoch;
}

/* Wait until pool->gen differs from seen; returns the new generation. */
static uint64_t cpu_pool_await(cpu_pool *pool, uint64_t seen)
{
    for (int i = 0; i < CPU_SPIN_POLLS; i++) {
        uint64_t g = atomic_load_explicit(&pool->gen, memory_order_acquire);
        if (g != seen)
            return g;
    }
    pthread_mutex_lock(&pool->mu);
    uint64_t g;
    while ((g = atomic_load_explicit(&pool->gen, memory_order_acquire)) ==
           seen)
        pthread_cond_wait(&pool->wake, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
    return g;
}

static void *cpu_worker_main(void *argp)
{
    cpu_worker *w = argp;
    cpu_pool *pool = w->pool;
    uint64_t seen = 0;
    for (;;) {
        seen = cpu_pool_await(pool, seen);
        /* stop and the job fields were written before the release bump
         * of gen that cpu_pool_await acquired. */
        if (pool->stop)
            break;
        if (w->id < pool->nparts)
            pool->fn(pool->arg, w->id, pool->nparts);
        /* Last one out wakes the caller; taking mu orders the signal
         * after the caller's check-then-wait. */
        if (atomic_fetch_sub_explicit(&pool->pending, 1,
                                      memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool->mu);
            pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->mu);
        }
    }
    return NULL;
}

/* Stop and join the workers, free the pool.  Accepts NULL and a pool
 * whose workers were only partly started (nworkers counts started ones). */
static void cpu_pool_destroy(cpu_pool *pool)
{
    if (!pool)
        return;
    if (cpu_pool_forked(pool)) {
        free(pool->workers);
        free(pool);
        return;
    }
    pthread_mutex_lock(&pool->mu);
    pool->stop = true;
    atomic_fetch_add_explicit(&pool->gen, 1, memory_order_release);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->nworkers; i++)
        pthread_join(pool->workers[i].tid, NULL);
    pthread_cond_destroy(&pool->done);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->mu);
    free(pool->workers);
    free(pool);
}

/* Start nworkers parked workers.  Returns 0 or TB_ENOMEM. */
static int cpu_pool_create(int nworkers, cpu_pool **out)
{
    *out = NULL;
    pthread_once(&cpu_atfork_once, cpu_atfork_register);
    cpu_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return TB_ENOMEM;
    pool->epoch = atomic_load_explicit(&cpu_fork_epoch, memory_order_relaxed);
    pool->workers = calloc((size_t)(nworkers > 0 ? nworkers : 1),
                           sizeof *pool->workers);
    if (!pool->workers) {
        free(pool);
        return TB_ENOMEM;
    }
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    atomic_init(&pool->gen, 0);
    atomic_init(&pool->pending, 0);
    for (int i = 0; i < nworkers; i++) {
        cpu_worker *w = &pool->workers[i];
        w->pool = pool;
        w->id = i + 1;
        if (pthread_create(&w->tid, NULL, cpu_worker_main, w) != 0) {
            cpu_pool_destroy(pool); /* joins the i already started */
            return TB_ENOMEM;
        }
        pool->nworkers = i + 1;
    }
    *out = pool;
    return 0;
}

/* Run fn over nparts parts (nparts is clamped to [1, nworkers + 1]): part
 * 0 on the calling thread, part i on worker i.  Returns when every part is
 * done, with the number of parts actually used. */
static int cpu_pool_run(cpu_pool *pool, int nparts, cpu_task_fn fn,
                        void *arg)
{
    if (nparts <= 1 || !pool || pool->nworkers == 0 ||
        cpu_pool_forked(pool)) {
        fn(arg, 0, 1);
        return 1;
    }
    if (nparts > pool->nworkers + 1)
        nparts = pool->nworkers + 1;
    pool->fn = fn;
    pool->arg = arg;
    pool->nparts = nparts;
    atomic_store_explicit(&pool->pending, pool->nworkers,
                          memory_order_relaxed);
    pthread_mutex_lock(&pool->mu);
    atomic_fetch_add_explicit(&pool->gen, 1, memory_order_release);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);

    fn(arg, 0, nparts);

    for (int i = 0; i < CPU_SPIN_POLLS; i++)
        if (atomic_load_explicit(&pool->pending, memory_order_acquire) == 0)
            return nparts;
    pthread_mutex_lock(&pool->mu);
    while (atomic_load_explicit(&pool->pending, memory_order_acquire) != 0)
        pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
    return nparts;
}

/* [*b, *e): part's share of n items, as even as possible. */
static void cpu_span(int64_t n, int part, int nparts, int64_t *b, int64_t *e)
{
    int64_t q = n / nparts, r = n % nparts;
    *b = part * q + (part < r ? part : r);
    *e = *b + q + (part < r ? 1 : 0);
}

/* Like cpu_span but with boundaries on multiples of `align` items (so
 * parts start on cache lines / sum blocks); the last part takes the
 * tail. */
static void cpu_span_aligned(int64_t n, int64_t align, int part, int nparts,
                             int64_t *b, int64_t *e)
{
    int64_t units = (n + align - 1) / align;
    cpu_span(units, part, nparts, b, e);
    *b *= align;
    *e *= align;
    if (*b > n)
        *b = n;
    if (*e > n)
        *e = n;
}

/* ------------------------------------------------------------------ */
/* Instance                                                             */
/* ------------------------------------------------------------------ */

typedef struct cpu_ctx {
    int threads;
    cpu_pool *pool; /* NULL when threads == 1 */
    _Atomic uint64_t kernel_launches;
    _Atomic uint64_t memcpy_count;
    _Atomic uint64_t memcpy_bytes;
    _Atomic uint64_t device_allocs;
    _Atomic uint64_t device_alloc_bytes;
} cpu_ctx;

/* How many parts to split `work` (in elements or multiply-adds) over,
 * given `items` independent pieces: 1 below the threshold. */
static int cpu_parts(const cpu_ctx *c, int64_t work, int64_t items)
{
    if (c->threads <= 1 || work < CPU_PAR_MIN_WORK || items < 2)
        return 1;
    return items < c->threads ? (int)items : c->threads;
}

static void cpu_count_launch(cpu_ctx *c)
{
    atomic_fetch_add_explicit(&c->kernel_launches, 1, memory_order_relaxed);
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

static int cpu_probe(char *reason, size_t len)
{
    if (reason && len)
        reason[0] = '\0';
    return 0;
}

static int cpu_axes(tb_axis *out, int max)
{
    if (!out || max < 1)
        return 0;
    memset(&out[0], 0, sizeof out[0]);
    out[0].name = "threads";
    out[0].n_values = cpu_max_threads();
    for (int i = 0; i < out[0].n_values; i++)
        out[0].values[i] = cpu_thread_names[i];
    out[0].def = 0;
    out[0].doc = "threads per kernel call, the calling thread included; "
                 "small jobs (under ~32K elements) run on the calling "
                 "thread only";
    return 1;
}

static void cpu_destroy(void *ctx)
{
    cpu_ctx *c = ctx;
    if (!c)
        return;
    cpu_pool_destroy(c->pool);
    free(c);
}

/* values[0]: the threads value, an integer 1..N in decimal. */
static int cpu_create(const char *const *values, void **ctx, char *err,
                      size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!ctx)
        return TB_EINVAL;
    *ctx = NULL;
    int max = cpu_max_threads();
    const char *v = values ? values[0] : NULL;
    if (!v) {
        if (err && errlen)
            snprintf(err, errlen, "cpu: threads: no value given");
        return TB_EPARAM;
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
        return TB_EPARAM;
    }
    cpu_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return TB_ENOMEM;
    c->threads = (int)n;
    if (c->threads > 1) {
        int rc = cpu_pool_create(c->threads - 1, &c->pool);
        if (rc) {
            if (err && errlen)
                snprintf(err, errlen,
                         "cpu: threads=%d: cannot start worker threads",
                         c->threads);
            free(c);
            return rc;
        }
    }
    *ctx = c;
    return 0;
}

static void cpu_counters(void *ctx, tb_backend_counters *out)
{
    cpu_ctx *c = ctx;
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!c)
        return;
    out->kernel_launches =
        atomic_load_explicit(&c->kernel_launches, memory_order_relaxed);
    out->memcpy_count =
        atomic_load_explicit(&c->memcpy_count, memory_order_relaxed);
    out->memcpy_bytes =
        atomic_load_explicit(&c->memcpy_bytes, memory_order_relaxed);
    out->device_allocs =
        atomic_load_explicit(&c->device_allocs, memory_order_relaxed);
    out->device_alloc_bytes =
        atomic_load_explicit(&c->device_alloc_bytes, memory_order_relaxed);
}

/* ------------------------------------------------------------------ */
/* Memory                                                               */
/* ------------------------------------------------------------------ */

/* A well-formed header: valid dtype and ndim, non-negative dims. */
static bool cpu_header_ok(const tb_tensor *t)
{
    if (!t || (unsigned)t->dtype >= TB_DTYPE_COUNT || t->ndim < 0 ||
        t->ndim > TB_MAX_DIMS)
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < 0)
            return false;
    return true;
}

static bool cpu_same_shape(const tb_tensor *a, const tb_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

/* Allocate t's contiguous bytes from the tracked allocator.  t's header
 * must be contiguous; the tensor then belongs to this instance. */
static int cpu_alloc(void *ctx, tb_tensor *t)
{
    cpu_ctx *c = ctx;
    if (!c || !cpu_header_ok(t))
        return TB_EINVAL;
    if (!tb_tensor_is_contiguous(t))
        return TB_EINVAL;
    size_t nb = tb_tensor_nbytes(t);
    void *p = tb_alloc(nb);
    if (!p)
        return TB_ENOMEM;
    t->data = p;
    t->owns = true;
    t->backend = &tb_backend_cpu;
    t->backend_ctx = c;
    atomic_fetch_add_explicit(&c->device_allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->device_alloc_bytes, nb,
                              memory_order_relaxed);
    return 0;
}

/* Free a tensor from cpu_alloc; views, NULL and foreign tensors are left
 * alone (a view's data pointer is cleared). */
static void cpu_free(void *ctx, tb_tensor *t)
{
    (void)ctx;
    if (!t || t->backend != &tb_backend_cpu)
        return;
    if (t->owns)
        tb_free(t->data);
    t->data = NULL;
    t->owns = false;
}

/* memcpy between two contiguous tensors of equal dtype and shape. */
static int cpu_copy(cpu_ctx *c, tb_tensor *dst, const tb_tensor *src)
{
    if (!c || !cpu_header_ok(dst) || !cpu_header_ok(src))
        return TB_EINVAL;
    if (dst->dtype != src->dtype || !cpu_same_shape(dst, src))
        return TB_ESHAPE;
    if (!tb_tensor_is_contiguous(dst) || !tb_tensor_is_contiguous(src))
        return TB_EINVAL;
    size_t nb = tb_tensor_nbytes(src);
    if (nb && (!dst->data || !src->data))
        return TB_EINVAL;
    if (nb && dst->data != src->data)
        memcpy(dst->data, src->data, nb);
    atomic_fetch_add_explicit(&c->memcpy_count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->memcpy_bytes, nb, memory_order_relaxed);
    return 0;
}

static int cpu_upload(void *ctx, tb_tensor *dst, const tb_tensor *src)
{
    if (!dst || dst->backend != &tb_backend_cpu)
        return TB_EINVAL;
    return cpu_copy(ctx, dst, src);
}

static int cpu_download(void *ctx, tb_tensor *dst, const tb_tensor *src)
{
    if (!src || src->backend != &tb_backend_cpu)
        return TB_EINVAL;
    return cpu_copy(ctx, dst, src);
}

static int cpu_sync(void *ctx)
{
    (void)ctx; /* kernels are synchronous */
    return 0;
}

/* ------------------------------------------------------------------ */
/* Kernel helpers                                                       */
/* ------------------------------------------------------------------ */

/* A kernel operand: right dtype, contiguous, data present. */
static int cpu_check_operand(const tb_tensor *t, tb_dtype dt)
{
    if (!cpu_header_ok(t) || t->dtype != dt || !t->data)
        return TB_EINVAL;
    if (!tb_tensor_is_contiguous(t))
        return TB_EINVAL;
    return 0;
}

static int64_t cpu_numel(const tb_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

static int64_t cpu_prod(const int64_t *dim, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; d++)
        n *= dim[d];
    return n;
}

/* Integer parameter idx: def when absent; TB_EPARAM if not integral. */
static int cpu_param_int(const tb_params *p, int idx, int64_t def,
                         bool *has, int64_t *v)
{
    bool h = p && tb_params_has(p, idx);
    if (has)
        *has = h;
    if (!h) {
        *v = def;
        return 0;
    }
    double x = p->v[idx];
    if (!(x >= -1e15 && x <= 1e15) || x != floor(x))
        return TB_EPARAM;
    *v = (int64_t)x;
    return 0;
}

/* Column tile width for `outer` slabs of `inner` columns: CPU_COL_TILE,
 * halved (down to CPU_COL_TILE_MIN) while there are fewer tiles than
 * threads. */
static void cpu_col_tile(const cpu_ctx *c, int64_t outer, int64_t inner,
                         int64_t *tile, int64_t *ntiles)
{
    int64_t w = CPU_COL_TILE;
    while (w > CPU_COL_TILE_MIN && outer * ((inner + w - 1) / w) < c->threads)
        w /= 2;
    *tile = w;
    *ntiles = (inner + w - 1) / w;
}

static void cpu_store(void *o, tb_dtype dt, int64_t i, double v)
{
    if (dt == TB_F32)
        ((float *)o)[i] = (float)v;
    else
        ((double *)o)[i] = v;
}

/* ------------------------------------------------------------------ */
/* Typed inner loops                                                    */
/* ------------------------------------------------------------------ */

/* Typed loops take restrict-qualified typed parameters (GCC keeps that
 * through inlining; restrict locals converted from void * only get a
 * run-time alias check) and are wrapped in void * functions so the
 * dtype-generic drivers can call them through a table.  Precondition for
 * every kernel: outputs do not overlap inputs. */

/* Element-wise binary op, three forms: vector-vector, scalar-vector and
 * vector-scalar (a stride-0 operand of a broadcast). */
#define CPU_BINARY_LOOPS(NAME, OP, T)                                     \
    static inline void NAME##_vv_t(const T *restrict a,                   \
                                   const T *restrict b, T *restrict o,    \
                                   int64_t n)                             \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = a[i] OP b[i];                                          \
    }                                                                     \
    static inline void NAME##_sv_t(const T a, const T *restrict b,        \
                                   T *restrict o, int64_t n)              \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = a OP b[i];                                             \
    }                                                                     \
    static inline void NAME##_vs_t(const T *restrict a, const T b,        \
                                   T *restrict o, int64_t n)              \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = a[i] OP b;                                             \
    }                                                                     \
    static void NAME##_vv(const void *a, const void *b, void *o,          \
                          int64_t n)                                      \
    {                                                                     \
        NAME##_vv_t(a, b, o, n);                                          \
    }                                                                     \
    static void NAME##_sv(const void *a, const void *b, void *o,          \
                          int64_t n)                                      \
    {                                                                     \
        NAME##_sv_t(*(const T *)a, b, o, n);                              \
    }                                                                     \
    static void NAME##_vs(const void *a, const void *b, void *o,          \
                          int64_t n)                                      \
    {                                                                     \
        NAME##_vs_t(a, *(const T *)b, o, n);                              \
    }                                                                     \
    static const cpu_binop NAME##_op = {NAME##_vv, NAME##_sv, NAME##_vs,  \
                                        sizeof(T)};

typedef void (*cpu_bin_fn)(const void *a, const void *b, void *o,
                           int64_t n);
typedef struct cpu_binop {
    cpu_bin_fn vv, sv, vs;
    size_t esz;
} cpu_binop;

CPU_BINARY_LOOPS(add_f32, +, float)
CPU_BINARY_LOOPS(add_f64, +, double)
CPU_BINARY_LOOPS(sub_f32, -, float)
CPU_BINARY_LOOPS(sub_f64, -, double)
CPU_BINARY_LOOPS(mul_f32, *, float)
CPU_BINARY_LOOPS(mul_f64, *, double)
CPU_BINARY_LOOPS(div_f32, /, float)
CPU_BINARY_LOOPS(div_f64, /, double)

/* relu: x <= 0 ? +0 : x keeps NaN (the comparison is false) and maps
 * -0.0 to +0.0; it compiles to a compare and a mask, no branch. */
#define CPU_RELU_LOOP(NAME, T)                                            \
    static inline void NAME##_t(const T *restrict x, T *restrict o,       \
                                int64_t n)                                \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = x[i] <= 0 ? (T)0 : x[i];                               \
    }                                                                     \
    static void NAME(const void *x, void *o, int64_t n)                   \
    {                                                                     \
        NAME##_t(x, o, n);                                                \
    }

CPU_RELU_LOOP(relu_f32_v, float)
CPU_RELU_LOOP(relu_f64_v, double)

typedef void (*cpu_unary_fn)(const void *x, void *o, int64_t n);

/* Sum of n contiguous values, returned in double.  Blocked: up to
 * CPU_SUM_BLOCK values go through CPU_LANES lanes of type T, each block is
 * folded into a double (see CPU_SUM_BLOCK). */
#define CPU_SUM_LOOPS(SFX, T)                                             \
    static double sum_##SFX##_block(const T *restrict x, int64_t n)       \
    {                                                                     \
        T acc[CPU_LANES] = {0};                                           \
        int64_t i = 0;                                                    \
        for (; i + CPU_LANES <= n; i += CPU_LANES)                        \
            for (int l = 0; l < CPU_LANES; l++)                           \
                acc[l] += x[i + l];                                       \
        double s = 0;                                                     \
        for (int l = 0; l < CPU_LANES; l++)                               \
            s += acc[l];                                                  \
        for (; i < n; i++)                                                \
            s += x[i];                                                    \
        return s;                                                         \
    }                                                                     \
    static double sum_##SFX##_row(const void *px, int64_t n)              \
    {                                                                     \
        const T *x = px;                                                  \
        double s = 0;                                                     \
        for (int64_t i = 0; i < n; i += CPU_SUM_BLOCK)                    \
            s += sum_##SFX##_block(x + i, n - i < CPU_SUM_BLOCK           \
                                              ? n - i                     \
                                              : CPU_SUM_BLOCK);           \
        return s;                                                         \
    }                                                                     \
    /* acc[j] += sum over r < R of x[r * ld + j], for j < w: blocked like \
     * the row sums, CPU_SUM_BLOCK / CPU_LANES rows at a time in T. */    \
    static inline void sum_##SFX##_cols_t(const T *restrict x, int64_t R, \
                                          int64_t ld, int64_t w,          \
                                          double *restrict acc)           \
    {                                                                     \
        enum { RB = CPU_SUM_BLOCK / CPU_LANES };                          \
        T part[CPU_COL_TILE];                                             \
        for (int64_t r0 = 0; r0 < R; r0 += RB) {                          \
            int64_t re = R - r0 < RB ? R : r0 + RB;                       \
            for (int64_t j = 0; j < w; j++)                               \
                part[j] = x[r0 * ld + j];                                 \
            for (int64_t r = r0 + 1; r < re; r++)                         \
                for (int64_t j = 0; j < w; j++)                           \
                    part[j] += x[r * ld + j];                             \
            for (int64_t j = 0; j < w; j++)                               \
                acc[j] += part[j];                                        \
        }                                                                 \
    }                                                                     \
    static void sum_##SFX##_cols(const void *x, int64_t R, int64_t ld,    \
                                 int64_t w, double *acc)                  \
    {                                                                     \
        sum_##SFX##_cols_t(x, R, ld, w, acc);                             \
    }

CPU_SUM_LOOPS(f32, float)
CPU_SUM_LOOPS(f64, double)

/* log_softmax of one contiguous row and of a tile of w columns (stride
 * ld between rows): x - max - log(sum exp(x - max)), written as
 * (x - max) - log(sum), with the sum of exponentials in double.  The
 * row max runs in CPU_LANES independent chains (instruction-level
 * parallelism; GCC does not vectorise an IEEE max reduction without
 * -ffast-math).  exp() is a scalar libm call: it dominates the cost. */
#define CPU_LSM_LOOPS(SFX, T, EXP)                                        \
    static inline void lsm_##SFX##_row_t(const T *restrict x,             \
                                         T *restrict o, int64_t n)        \
    {                                                                     \
        T lane[CPU_LANES];                                                \
        for (int l = 0; l < CPU_LANES; l++)                               \
            lane[l] = x[0];                                               \
        int64_t i = 0;                                                    \
        for (; i + CPU_LANES <= n; i += CPU_LANES)                        \
            for (int l = 0; l < CPU_LANES; l++)                           \
                lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];        \
        T m = lane[0];                                                    \
        for (int l = 1; l < CPU_LANES; l++)                               \
            m = lane[l] > m ? lane[l] : m;                                \
        for (; i < n; i++)                                                \
            m = x[i] > m ? x[i] : m;                                      \
        double s = 0;                                                     \
        for (i = 0; i < n; i++)                                           \
            s += EXP(x[i] - m);                                           \
        const T ls = (T)log(s);                                           \
        for (i = 0; i < n; i++)                                           \
            o[i] = (x[i] - m) - ls;                                       \
    }                                                                     \
    static void lsm_##SFX##_row(const void *x, void *o, int64_t n)        \
    {                                                                     \
        lsm_##SFX##_row_t(x, o, n);                                       \
    }                                                                     \
    static inline void lsm_##SFX##_cols_t(const T *restrict x,            \
                                          T *restrict o, int64_t R,       \
                                          int64_t ld, int64_t w)          \
    {                                                                     \
        T m[CPU_COL_TILE];                                                \
        double s[CPU_COL_TILE];                                           \
        T ls[CPU_COL_TILE];                                               \
        for (int64_t j = 0; j < w; j++) {                                 \
            m[j] = x[j];                                                  \
            s[j] = 0;                                                     \
        }                                                                 \
        for (int64_t r = 1; r < R; r++)                                   \
            for (int64_t j = 0; j < w; j++)                               \
                m[j] = x[r * ld + j] > m[j] ? x[r * ld + j] : m[j];       \
        for (int64_t r = 0; r < R; r++)                                   \
            for (int64_t j = 0; j < w; j++)                               \
                s[j] += EXP(x[r * ld + j] - m[j]);                        \
        for (int64_t j = 0; j < w; j++)                                   \
            ls[j] = (T)log(s[j]);                                         \
        for (int64_t r = 0; r < R; r++)                                   \
            for (int64_t j = 0; j < w; j++)                               \
                o[r * ld + j] = (x[r * ld + j] - m[j]) - ls[j];           \
    }                                                                     \
    static void lsm_##SFX##_cols(const void *x, void *o, int64_t R,       \
                                 int64_t ld, int64_t w)                   \
    {                                                                     \
        lsm_##SFX##_cols_t(x, o, R, ld, w);                               \
    }

CPU_LSM_LOOPS(f32, float, expf)
CPU_LSM_LOOPS(f64, double, exp)

/* C[i0..i1) rows of one [M,K] x [K,N] product, cache-blocked over K and
 * N (see CPU_MM_KC/NC), i-k-j inside a block so the inner loop runs along
 * a row of B and of C with unit stride.  k is unrolled by 4 so each load
 * and store of C serves four multiply-adds. */
#define CPU_MM_LOOPS(SFX, T)                                              \
    static inline void mm_##SFX##_rows_t(                                 \
        const T *restrict a, const T *restrict b, T *restrict c,          \
        int64_t i0, int64_t i1, int64_t K, int64_t N)                     \
    {                                                                     \
        for (int64_t i = i0; i < i1; i++)                                 \
            for (int64_t j = 0; j < N; j++)                               \
                c[i * N + j] = 0;                                         \
        for (int64_t jb = 0; jb < N; jb += CPU_MM_NC) {                   \
            int64_t nb = N - jb < CPU_MM_NC ? N - jb : CPU_MM_NC;         \
            for (int64_t kb = 0; kb < K; kb += CPU_MM_KC) {               \
                int64_t ke = K - kb < CPU_MM_KC ? K : kb + CPU_MM_KC;     \
                for (int64_t i = i0; i < i1; i++) {                       \
                    T *cr = c + i * N + jb;                               \
                    const T *ar = a + i * K;                              \
                    int64_t k = kb;                                       \
                    for (; k + 4 <= ke; k += 4) {                         \
                        const T a0 = ar[k], a1 = ar[k + 1];               \
                        const T a2 = ar[k + 2], a3 = ar[k + 3];           \
                        const T *b0 = b + k * N + jb;                     \
                        const T *b1 = b0 + N;                             \
                        const T *b2 = b1 + N;                             \
                        const T *b3 = b2 + N;                             \
                        for (int64_t j = 0; j < nb; j++)                  \
                            cr[j] += a0 * b0[j] + a1 * b1[j] +            \
                                     a2 * b2[j] + a3 * b3[j];             \
                    }                                                     \
                    for (; k < ke; k++) {                                 \
                        const T a0 = ar[k];                               \
                        const T *b0 = b + k * N + jb;                     \
                        for (int64_t j = 0; j < nb; j++)                  \
                            cr[j] += a0 * b0[j];                          \
                    }                                                     \
                }                                                         \
            }                                                             \
        }                                                                 \
    }                                                                     \
    static void mm_##SFX##_rows(const void *a, const void *b, void *c,    \
                                int64_t i0, int64_t i1, int64_t K,        \
                                int64_t N)                                \
    {                                                                     \
        mm_##SFX##_rows_t(a, b, c, i0, i1, K, N);                         \
    }

CPU_MM_LOOPS(f32, float)
CPU_MM_LOOPS(f64, double)

typedef void (*cpu_mm_fn)(const void *a, const void *b, void *c, int64_t i0,
                          int64_t i1, int64_t K, int64_t N);

/* out[j * old + i] = in[i * ild + j] for i < ni (a few rows), j < nj.
 * Bit copies (uint32/uint64), so NaN payloads survive. */
#define CPU_TR_LOOPS(SFX, U)                                              \
    static inline void tr_##SFX##_block_t(const U *restrict in,           \
                                          int64_t ild, U *restrict out,   \
                                          int64_t old, int64_t ni,        \
                                          int64_t nj)                     \
    {                                                                     \
        for (int64_t j = 0; j < nj; j++)                                  \
            for (int64_t i = 0; i < ni; i++)                              \
                out[j * old + i] = in[i * ild + j];                       \
    }                                                                     \
    static void tr_##SFX##_block(const void *in, int64_t ild, void *out,  \
                                 int64_t old, int64_t ni, int64_t nj)     \
    {                                                                     \
        tr_##SFX##_block_t(in, ild, out, old, ni, nj);                    \
    }

CPU_TR_LOOPS(u32, uint32_t)
CPU_TR_LOOPS(u64, uint64_t)

typedef void (*cpu_tr_fn)(const void *in, int64_t ild, void *out,
                          int64_t old, int64_t ni, int64_t nj);

/* ------------------------------------------------------------------ */
/* Element-wise binary ops with NumPy broadcasting                      */
/* ------------------------------------------------------------------ */

typedef struct cpu_bin_job {
    const cpu_binop *op;
    const char *a, *b;
    char *o;
    bool flat;     /* all three have the output's element order */
    int64_t n;     /* output elements */
    int nd;        /* coalesced dims (>= 1) when !flat */
    int64_t dim[TB_MAX_DIMS];
    int64_t sa[TB_MAX_DIMS], sb[TB_MAX_DIMS]; /* element strides, 0 =
                                                  broadcast */
    int64_t rows;  /* product of dim[0..nd-1) */
} cpu_bin_job;

static void cpu_bin_task(void *argp, int part, int nparts)
{
    const cpu_bin_job *j = argp;
    const size_t es = j->op->esz;
    int64_t b, e;
    if (j->flat) {
        cpu_span_aligned(j->n, 16, part, nparts, &b, &e);
        if (e > b)
            j->op->vv(j->a + b * es, j->b + b * es, j->o + b * es, e - b);
        return;
    }
    cpu_span(j->rows, part, nparts, &b, &e);
    if (b >= e)
        return;
    const int last = j->nd - 1;
    const int64_t inner = j->dim[last];
    /* Multi-index of row b over dims [0, last). */
    int64_t idx[TB_MAX_DIMS] = {0};
    int64_t oa = 0, ob = 0, r = b;
    for (int d = last - 1; d >= 0; d--) {
        idx[d] = r % j->dim[d];
        r /= j->dim[d];
        oa += idx[d] * j->sa[d];
        ob += idx[d] * j->sb[d];
    }
    cpu_bin_fn fn = j->sa[last] == 0   ? j->op->sv
                    : j->sb[last] == 0 ? j->op->vs
                                       : j->op->vv;
    for (int64_t row = b; row < e; row++) {
        fn(j->a + oa * es, j->b + ob * es, j->o + row * inner * es, inner);
        /* Advance the multi-index (odometer). */
        for (int d = last - 1; d >= 0; d--) {
            oa += j->sa[d];
            ob += j->sb[d];
            if (++idx[d] < j->dim[d])
                break;
            oa -= j->sa[d] * j->dim[d];
            ob -= j->sb[d] * j->dim[d];
            idx[d] = 0;
        }
    }
}

/* Broadcast a (na dims) and b (nb dims) to out; checks out's shape. */
static int cpu_binary(void *ctx, const tb_tensor *in, tb_tensor *out,
                      tb_dtype dt, const cpu_binop *op)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = cpu_check_operand(&in[0], dt)) ||
        (rc = cpu_check_operand(&in[1], dt)) ||
        (rc = cpu_check_operand(out, dt)))
        return rc;
    const tb_tensor *a = &in[0], *b = &in[1];
    const int nd = out->ndim;
    if (a->ndim > nd || b->ndim > nd)
        return TB_ESHAPE;
    /* Align shapes on the right; strides of the contiguous inputs, with 0
     * where an input dim is 1 (broadcast). */
    int64_t da[TB_MAX_DIMS], db[TB_MAX_DIMS], sa[TB_MAX_DIMS],
        sb[TB_MAX_DIMS];
    int64_t acc_a = 1, acc_b = 1;
    for (int d = nd - 1; d >= 0; d--) {
        int ia = d - (nd - a->ndim), ib = d - (nd - b->ndim);
        da[d] = ia >= 0 ? a->shape[ia] : 1;
        db[d] = ib >= 0 ? b->shape[ib] : 1;
        int64_t od = out->shape[d];
        int64_t want = da[d] == 1 ? db[d] : da[d];
        if ((da[d] != 1 && db[d] != 1 && da[d] != db[d]) || od != want)
            return TB_ESHAPE;
        sa[d] = da[d] == 1 ? 0 : acc_a;
        sb[d] = db[d] == 1 ? 0 : acc_b;
        acc_a *= da[d];
        acc_b *= db[d];
    }
    cpu_bin_job j;
    memset(&j, 0, sizeof j);
    j.op = op;
    j.a = a->data;
    j.b = b->data;
    j.o = out->data;
    j.n = cpu_numel(out);
    if (j.n == 0)
        return 0;
    j.flat = cpu_numel(a) == j.n && cpu_numel(b) == j.n;
    if (j.flat) {
        cpu_pool_run(c->pool, cpu_parts(c, j.n, (j.n + 15) / 16),
                     cpu_bin_task, &j);
        return 0;
    }
    /* Drop output dims of size 1, then merge neighbours whose strides
     * line up in both inputs (both 0 counts as lining up). */
    int k = 0;
    for (int d = 0; d < nd; d++) {
        if (out->shape[d] == 1)
            continue;
        if (k > 0 && sa[d] * out->shape[d] == j.sa[k - 1] &&
            sb[d] * out->shape[d] == j.sb[k - 1]) {
            j.dim[k - 1] *= out->shape[d];
            j.sa[k - 1] = sa[d];
            j.sb[k - 1] = sb[d];
            continue;
        }
        j.dim[k] = out->shape[d];
        j.sa[k] = sa[d];
        j.sb[k] = sb[d];
        k++;
    }
    /* n > numel(a) or numel(b) means some dim > 1 was kept. */
    j.nd = k;
    j.rows = cpu_prod(j.dim, 0, k - 1);
    cpu_pool_run(c->pool, cpu_parts(c, j.n, j.rows), cpu_bin_task, &j);
    return 0;
}

/* ------------------------------------------------------------------ */
/* relu                                                                 */
/* ------------------------------------------------------------------ */

typedef struct cpu_unary_job {
    cpu_unary_fn fn;
    size_t esz;
    const char *x;
    char *o;
    int64_t n;
} cpu_unary_job;

static void cpu_unary_task(void *argp, int part, int nparts)
{
    const cpu_unary_job *j = argp;
    int64_t b, e;
    cpu_span_aligned(j->n, 16, part, nparts, &b, &e);
    if (e > b)
        j->fn(j->x + b * j->esz, j->o + b * j->esz, e - b);
}

static int cpu_relu(void *ctx, const tb_tensor *in, tb_tensor *out,
                    tb_dtype dt, cpu_unary_fn fn)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = cpu_check_operand(&in[0], dt)) ||
        (rc = cpu_check_operand(out, dt)))
        return rc;
    if (!cpu_same_shape(&in[0], out))
        return TB_ESHAPE;
    cpu_unary_job j = {fn, tb_dtype_size(dt), in[0].data, out->data,
                       cpu_numel(out)};
    if (j.n > 0)
        cpu_pool_run(c->pool, cpu_parts(c, j.n, (j.n + 15) / 16),
                     cpu_unary_task, &j);
    return 0;
}

/* ------------------------------------------------------------------ */
/* sum / mean                                                           */
/* ------------------------------------------------------------------ */

typedef struct cpu_red_fns {
    double (*row)(const void *x, int64_t n);
    void (*cols)(const void *x, int64_t R, int64_t ld, int64_t w,
                 double *acc);
} cpu_red_fns;

static const cpu_red_fns cpu_red_f32 = {sum_f32_row, sum_f32_cols};
static const cpu_red_fns cpu_red_f64 = {sum_f64_row, sum_f64_cols};

/* The input viewed as [outer, R, inner]; the output as [outer, inner]. */
typedef struct cpu_red_job {
    const cpu_red_fns *f;
    tb_dtype dt;
    size_t esz;
    const char *x;
    void *o;
    int64_t outer, R, inner, tile, ntiles;
    double scale; /* 1 for sum, 1/R for mean */
    double partial[TB_MAX_AXIS_VALUES]; /* global sum: one per part */
} cpu_red_job;

static void cpu_red_global_task(void *argp, int part, int nparts)
{
    cpu_red_job *j = argp;
    int64_t b, e;
    cpu_span_aligned(j->R, CPU_SUM_BLOCK, part, nparts, &b, &e);
    j->partial[part] = e > b ? j->f->row(j->x + b * j->esz, e - b) : 0.0;
}

static void cpu_red_rows_task(void *argp, int part, int nparts)
{
    cpu_red_job *j = argp;
    int64_t b, e;
    cpu_span(j->outer, part, nparts, &b, &e);
    for (int64_t o = b; o < e; o++)
        cpu_store(j->o, j->dt, o,
                  j->f->row(j->x + o * j->R * j->esz, j->R) * j->scale);
}

static void cpu_red_cols_task(void *argp, int part, int nparts)
{
    cpu_red_job *j = argp;
    int64_t b, e;
    cpu_span(j->outer * j->ntiles, part, nparts, &b, &e);
    double acc[CPU_COL_TILE];
    for (int64_t it = b; it < e; it++) {
        int64_t o = it / j->ntiles;
        int64_t j0 = (it % j->ntiles) * j->tile;
        int64_t w = j->inner - j0 < j->tile ? j->inner - j0 : j->tile;
        for (int64_t q = 0; q < w; q++)
            acc[q] = 0;
        j->f->cols(j->x + (o * j->R * j->inner + j0) * j->esz, j->R,
                   j->inner, w, acc);
        for (int64_t q = 0; q < w; q++)
            cpu_store(j->o, j->dt, o * j->inner + j0 + q, acc[q] * j->scale);
    }
}

/* sum (mean=false) or mean over param 0 "axis" (absent: all elements).
 * keepdim only changes the output's shape, so only its size is checked. */
static int cpu_reduce(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, bool mean)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = cpu_check_operand(&in[0], dt)) ||
        (rc = cpu_check_operand(out, dt)))
        return rc;
    const tb_tensor *x = &in[0];
    bool has_axis;
    int64_t axis;
    if ((rc = cpu_param_int(p, 0, 0, &has_axis, &axis)))
        return rc;
    cpu_red_job j;
    memset(&j, 0, sizeof j);
    j.f = dt == TB_F32 ? &cpu_red_f32 : &cpu_red_f64;
    j.dt = dt;
    j.esz = tb_dtype_size(dt);
    j.x = x->data;
    j.o = out->data;
    const int64_t n = cpu_numel(x);
    if (!has_axis) {
        if (cpu_numel(out) != 1)
            return TB_ESHAPE;
        j.R = n;
        int parts = cpu_parts(c, n, (n + CPU_SUM_BLOCK - 1) / CPU_SUM_BLOCK);
        parts = cpu_pool_run(c->pool, parts, cpu_red_global_task, &j);
        /* Fixed order: the result depends on the thread count only. */
        double s = 0;
        for (int i = 0; i < parts; i++)
            s += j.partial[i];
        cpu_store(j.o, dt, 0, mean ? s / (double)n : s);
        return 0;
    }
    int ax;
    if (tb_axis_norm(axis, x->ndim, &ax))
        return TB_EPARAM;
    j.R = x->shape[ax];
    j.outer = cpu_prod(x->shape, 0, ax);
    j.inner = cpu_prod(x->shape, ax + 1, x->ndim);
    if (cpu_numel(out) != j.outer * j.inner)
        return TB_ESHAPE;
    if (j.outer * j.inner == 0)
        return 0;
    j.scale = mean ? 1.0 / (double)j.R : 1.0;
    if (j.inner == 1) {
        cpu_pool_run(c->pool, cpu_parts(c, n, j.outer), cpu_red_rows_task,
                     &j);
    } else {
        cpu_col_tile(c, j.outer, j.inner, &j.tile, &j.ntiles);
        cpu_pool_run(c->pool, cpu_parts(c, n, j.outer * j.ntiles),
                     cpu_red_cols_task, &j);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* log_softmax                                                          */
/* ------------------------------------------------------------------ */

typedef struct cpu_lsm_job {
    void (*row)(const void *x, void *o, int64_t n);
    void (*cols)(const void *x, void *o, int64_t R, int64_t ld, int64_t w);
    size_t esz;
    const char *x;
    char *o;
    int64_t outer, R, inner, tile, ntiles;
} cpu_lsm_job;

static void cpu_lsm_rows_task(void *argp, int part, int nparts)
{
    const cpu_lsm_job *j = argp;
    int64_t b, e;
    cpu_span(j->outer, part, nparts, &b, &e);
    for (int64_t o = b; o < e; o++) {
        size_t off = (size_t)(o * j->R) * j->esz;
        j->row(j->x + off, j->o + off, j->R);
    }
}

static void cpu_lsm_cols_task(void *argp, int part, int nparts)
{
    const cpu_lsm_job *j = argp;
    int64_t b, e;
    cpu_span(j->outer * j->ntiles, part, nparts, &b, &e);
    for (int64_t it = b; it < e; it++) {
        int64_t o = it / j->ntiles;
        int64_t j0 = (it % j->ntiles) * j->tile;
        int64_t w = j->inner - j0 < j->tile ? j->inner - j0 : j->tile;
        size_t off = (size_t)(o * j->R * j->inner + j0) * j->esz;
        j->cols(j->x + off, j->o + off, j->R, j->inner, w);
    }
}

/* log_softmax over param 0 "axis" (default -1). */
static int cpu_log_softmax(void *ctx, const tb_tensor *in, tb_tensor *out,
                           const tb_params *p, tb_dtype dt)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = cpu_check_operand(&in[0], dt)) ||
        (rc = cpu_check_operand(out, dt)))
        return rc;
    const tb_tensor *x = &in[0];
    if (!cpu_same_shape(x, out))
        return TB_ESHAPE;
    int64_t axis;
    int ax;
    if ((rc = cpu_param_int(p, 0, -1, NULL, &axis)))
        return rc;
    if (tb_axis_norm(axis, x->ndim, &ax))
        return TB_EPARAM;
    cpu_lsm_job j = {
        .row = dt == TB_F32 ? lsm_f32_row : lsm_f64_row,
        .cols = dt == TB_F32 ? lsm_f32_cols : lsm_f64_cols,
        .esz = tb_dtype_size(dt),
        .x = x->data,
        .o = out->data,
        .outer = cpu_prod(x->shape, 0, ax),
        .R = x->shape[ax],
        .inner = cpu_prod(x->shape, ax + 1, x->ndim),
    };
    const int64_t n = cpu_numel(x);
    if (n == 0)
        return 0;
    const int64_t work = n * CPU_EXP_WEIGHT;
    if (j.inner == 1) {
        cpu_pool_run(c->pool, cpu_parts(c, work, j.outer),
                     cpu_lsm_rows_task, &j);
    } else {
        cpu_col_tile(c, j.outer, j.inner, &j.tile, &j.ntiles);
        cpu_pool_run(c->pool, cpu_parts(c, work, j.outer * j.ntiles),
                     cpu_lsm_cols_task, &j);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* matmul                                                               */
/* ------------------------------------------------------------------ */

typedef struct cpu_mm_job {
    cpu_mm_fn fn;
    size_t esz;
    const char *a, *b;
    char *c;
    int64_t M, K, N;
    int64_t rows; /* batch * M: the output rows split over parts */
} cpu_mm_job;

static void cpu_mm_task(void *argp, int part, int nparts)
{
    const cpu_mm_job *j = argp;
    int64_t r, e;
    cpu_span(j->rows, part, nparts, &r, &e);
    while (r < e) {
        int64_t bi = r / j->M, i0 = r % j->M;
        int64_t i1 = j->M - i0 < e - r ? j->M : i0 + (e - r);
        j->fn(j->a + (size_t)(bi * j->M * j->K) * j->esz,
              j->b + (size_t)(bi * j->K * j->N) * j->esz,
              j->c + (size_t)(bi * j->M * j->N) * j->esz, i0, i1, j->K,
              j->N);
        r += i1 - i0;
    }
}

/* [..., M, K] x [..., K, N] -> [..., M, N] with equal batch dims. */
static int cpu_matmul(void *ctx, const tb_tensor *in, tb_tensor *out,
                      tb_dtype dt)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = cpu_check_operand(&in[0], dt)) ||
        (rc = cpu_check_operand(&in[1], dt)) ||
        (rc = cpu_check_operand(out, dt)))
        return rc;
    const tb_tensor *a = &in[0], *b = &in[1];
    const int nd = a->ndim;
    if (nd < 2 || b->ndim != nd || out->ndim != nd)
        return TB_ESHAPE;
    for (int d = 0; d < nd - 2; d++)
        if (b->shape[d] != a->shape[d] || out->shape[d] != a->shape[d])
            return TB_ESHAPE;
    const int64_t M = a->shape[nd - 2], K = a->shape[nd - 1];
    const int64_t N = b->shape[nd - 1];
    if (b->shape[nd - 2] != K || out->shape[nd - 2] != M ||
        out->shape[nd - 1] != N)
        return TB_ESHAPE;
    cpu_mm_job j = {
        .fn = dt == TB_F32 ? mm_f32_rows : mm_f64_rows,
        .esz = tb_dtype_size(dt),
        .a = a->data,
        .b = b->data,
        .c = out->data,
        .M = M,
        .K = K,
        .N = N,
        .rows = cpu_prod(a->shape, 0, nd - 2) * M,
    };
    if (j.rows == 0 || N == 0)
        return 0;
    cpu_pool_run(c->pool, cpu_parts(c, j.rows * K * N, j.rows), cpu_mm_task,
                 &j);
    return 0;
}

/* ------------------------------------------------------------------ */
/* transpose                                                            */
/* ------------------------------------------------------------------ */

/* Swapping dims a < b of a contiguous input viewed as [P, SA, Q, SB, R]
 * gives the output [P, SB, Q, SA, R]. */
typedef struct cpu_tr_job {
    cpu_tr_fn fn;
    size_t esz;
    const char *x;
    char *o;
    int64_t P, SA, Q, SB, R;
    int64_t nti; /* tiles of CPU_TR_TILE input rows (SA) when R == 1 */
    int64_t n;   /* elements, for the plain-copy case */
} cpu_tr_job;

/* R == 1: (p, q) is an SA x SB transpose with leading dims Q*SB (input)
 * and Q*SA (output); item (p, q, t) moves input rows [8t, 8t + 8). */
static void cpu_tr_2d_task(void *argp, int part, int nparts)
{
    const cpu_tr_job *j = argp;
    int64_t b, e;
    cpu_span(j->P * j->Q * j->nti, part, nparts, &b, &e);
    const int64_t ild = j->Q * j->SB, old = j->Q * j->SA;
    for (int64_t it = b; it < e; it++) {
        int64_t t = it % j->nti, pq = it / j->nti;
        int64_t q = pq % j->Q, p = pq / j->Q;
        int64_t i0 = t * CPU_TR_TILE;
        int64_t ni = j->SA - i0 < CPU_TR_TILE ? j->SA - i0 : CPU_TR_TILE;
        int64_t ioff = (p * j->SA + i0) * ild + q * j->SB;
        int64_t ooff = p * j->SB * old + q * j->SA + i0;
        j->fn(j->x + (size_t)ioff * j->esz, ild, j->o + (size_t)ooff * j->esz,
              old, ni, j->SB);
    }
}

/* R > 1: item (p, jj, q) fills SA contiguous runs of R elements. */
static void cpu_tr_runs_task(void *argp, int part, int nparts)
{
    const cpu_tr_job *j = argp;
    int64_t b, e;
    cpu_span(j->P * j->SB * j->Q, part, nparts, &b, &e);
    const size_t run = (size_t)j->R * j->esz;
    for (int64_t it = b; it < e; it++) {
        int64_t q = it % j->Q, pj = it / j->Q;
        int64_t jj = pj % j->SB, p = pj / j->SB;
        char *o = j->o + (size_t)(it * j->SA * j->R) * j->esz;
        for (int64_t i = 0; i < j->SA; i++) {
            int64_t ioff = (((p * j->SA + i) * j->Q + q) * j->SB + jj) * j->R;
            memcpy(o + (size_t)i * run, j->x + (size_t)ioff * j->esz, run);
        }
    }
}

static void cpu_copy_task(void *argp, int part, int nparts)
{
    const cpu_tr_job *j = argp;
    int64_t b, e;
    cpu_span_aligned(j->n, 16, part, nparts, &b, &e);
    if (e > b)
        memcpy(j->o + (size_t)b * j->esz, j->x + (size_t)b * j->esz,
               (size_t)(e - b) * j->esz);
}

/* Materialised transpose of params dim0 (default -2) and dim1 (-1). */
static int cpu_transpose(void *ctx, const tb_tensor *in, tb_tensor *out,
                         const tb_params *p, tb_dtype dt)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = cpu_check_operand(&in[0], dt)) ||
        (rc = cpu_check_operand(out, dt)))
        return rc;
    const tb_tensor *x = &in[0];
    int64_t d0, d1;
    int a, b;
    if ((rc = cpu_param_int(p, 0, -2, NULL, &d0)) ||
        (rc = cpu_param_int(p, 1, -1, NULL, &d1)))
        return rc;
    if (tb_axis_norm(d0, x->ndim, &a) || tb_axis_norm(d1, x->ndim, &b))
        return TB_EPARAM;
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    if (out->ndim != x->ndim)
        return TB_ESHAPE;
    for (int d = 0; d < x->ndim; d++) {
        int sd = d == a ? b : d == b ? a : d;
        if (out->shape[d] != x->shape[sd])
            return TB_ESHAPE;
    }
    cpu_tr_job j = {
        .fn = dt == TB_F32 ? tr_u32_block : tr_u64_block,
        .esz = tb_dtype_size(dt),
        .x = x->data,
        .o = out->data,
        .P = cpu_prod(x->shape, 0, a),
        .SA = x->shape[a],
        .Q = cpu_prod(x->shape, a + 1, b),
        .SB = x->shape[b],
        .R = cpu_prod(x->shape, b + 1, x->ndim),
        .n = cpu_numel(x),
    };
    if (j.n == 0)
        return 0;
    if (a == b || j.SA == 1 || j.SB == 1) {
        /* Same element order: a plain copy. */
        cpu_pool_run(c->pool, cpu_parts(c, j.n, (j.n + 15) / 16),
                     cpu_copy_task, &j);
    } else if (j.R == 1) {
        j.nti = (j.SA + CPU_TR_TILE - 1) / CPU_TR_TILE;
        cpu_pool_run(c->pool, cpu_parts(c, j.n, j.P * j.Q * j.nti),
                     cpu_tr_2d_task, &j);
    } else {
        cpu_pool_run(c->pool, cpu_parts(c, j.n, j.P * j.SB * j.Q),
                     cpu_tr_runs_task, &j);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Kernel table                                                         */
/* ------------------------------------------------------------------ */

#define CPU_K_BINARY(NAME, SFX, DT)                                       \
    static int k_##NAME##_##SFX(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        (void)p;                                                          \
        return cpu_binary(ctx, in, out, DT, &NAME##_##SFX##_op);          \
    }
#define CPU_K_TYPED(SFX, DT)                                              \
    CPU_K_BINARY(add, SFX, DT)                                            \
    CPU_K_BINARY(sub, SFX, DT)                                            \
    CPU_K_BINARY(mul, SFX, DT)                                            \
    CPU_K_BINARY(div, SFX, DT)                                            \
    static int k_relu_##SFX(void *ctx, const tb_tensor *in,               \
                            tb_tensor *out, const tb_params *p)           \
    {                                                                     \
        (void)p;                                                          \
        return cpu_relu(ctx, in, out, DT, relu_##SFX##_v);                \
    }                                                                     \
    static int k_sum_##SFX(void *ctx, const tb_tensor *in,                \
                           tb_tensor *out, const tb_params *p)            \
    {                                                                     \
        return cpu_reduce(ctx, in, out, p, DT, false);                    \
    }                                                                     \
    static int k_mean_##SFX(void *ctx, const tb_tensor *in,               \
                            tb_tensor *out, const tb_params *p)           \
    {                                                                     \
        return cpu_reduce(ctx, in, out, p, DT, true);                     \
    }                                                                     \
    static int k_matmul_##SFX(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p)         \
    {                                                                     \
        (void)p;                                                          \
        return cpu_matmul(ctx, in, out, DT);                              \
    }                                                                     \
    static int k_transpose_##SFX(void *ctx, const tb_tensor *in,          \
                                 tb_tensor *out, const tb_params *p)      \
    {                                                                     \
        return cpu_transpose(ctx, in, out, p, DT);                        \
    }                                                                     \
    static int k_log_softmax_##SFX(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return cpu_log_softmax(ctx, in, out, p, DT);                      \
    }

CPU_K_TYPED(f32, TB_F32)
CPU_K_TYPED(f64, TB_F64)

typedef struct cpu_kentry {
    tb_kernel_fn fn;
    const char *name;
} cpu_kentry;

#define CPU_KROW(NAME)                                                    \
    [TB_OP_##NAME] = {{k_##NAME##_f32, #NAME "_f32_c"},                   \
                      {k_##NAME##_f64, #NAME "_f64_c"}},

/* Ops missing here (a newer op table) stay {NULL}: unsupported. */
static const cpu_kentry cpu_kernels[TB_OP_COUNT][TB_DTYPE_COUNT] = {
    CPU_KROW(add) CPU_KROW(sub) CPU_KROW(mul) CPU_KROW(div) CPU_KROW(relu)
    CPU_KROW(sum) CPU_KROW(mean) CPU_KROW(matmul) CPU_KROW(transpose)
    CPU_KROW(log_softmax)
};

static tb_kernel_fn cpu_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                               const tb_params *p, const char **impl)
{
    (void)ctx;
    (void)p;
    if (impl)
        *impl = NULL;
    if (!op || (unsigned)op->id >= TB_OP_COUNT ||
        (unsigned)dt >= TB_DTYPE_COUNT)
        return NULL;
    const cpu_kentry *e = &cpu_kernels[op->id][dt];
    if (!e->fn)
        return NULL;
    if (impl)
        *impl = e->name;
    return e->fn;
}

const tb_backend tb_backend_cpu = {
    .name = "cpu",
    .doc = "portable C kernels on host memory, split over a persistent "
           "pthread pool (axis threads)",
    .probe = cpu_probe,
    .axes = cpu_axes,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .sync = cpu_sync,
    .kernel = cpu_kernel,
    .timer_start = NULL,
    .timer_stop = NULL,
    .counters = cpu_counters,
};
