/* cpu backend: host kernels with run-time ISA dispatch, optionally split
 * over a persistent thread pool.
 *
 * Axes, in this order:
 *   isa     = scalar, avx2, avx512 (only what this CPU and OS support,
 *             lowered by TBENCH_ISA), and auto (the best; the default);
 *   threads = 1..N (N = online CPUs, capped at TB_MAX_AXIS_VALUES).
 * An instance fills the inner-loop tables of every level up to its own
 * (kernels.h: the portable C loops of kernels_c.c, overridden level by
 * level by kernels_avx2.c and kernels_avx512.c; vmath.h alike) and owns a
 * pool of threads-1 workers created once at create() and parked between
 * jobs; the calling (harness) thread always runs part 0 of a job itself,
 * so threads=1 never touches the pool.
 *
 * Kernel lookup is the registry's (kreg.h): one best-first table of rows
 * {op, dtype, min_isa, fn, name}; the first row the instance's level
 * allows gives both the function and the impl name ("add_f32_avx512",
 * "log_softmax_f64_scalar" where a level has no version of its own,
 * "gemm_f32_avx2_6x16" for matmul through the native GEMM).  This file
 * defines the entry points of its rows: each runs its row's level's
 * tables only (CPU_SLOT_AT checks it), so a name cannot claim code that
 * did not run.  Ops this file does not implement come from create.c,
 * optim.c, linalg.c and ops_ext.c (portable C), rows of the same table.
 *
 * This file owns shapes, broadcasting, tiling and threading; the inner
 * loops are in the tables.  Matmul, linear and conv2d at the avx2/avx512
 * levels go to the native GEMM (gemm/gemm.h) when the build has it.
 *
 * Concurrency contract: one instance is driven by one thread at a time
 * (the harness thread).  Kernels called concurrently on the same instance
 * would share its pool and are not supported.  Counters are atomics, so
 * counters() may be read from any thread. */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../ops/alloc.h"
#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "../backend.h"
#include "../hostmem.h"
#include "backends/cpu/cpu_config.h"
#include "cpu_internal.h"
#include "isa.h"
#include "kernels.h"
#include "kreg.h"
#include "ops_ext.h"
#include "vmath.h"
#if TB_CPU_HAVE_GEMM
#include "gemm/gemm.h"
#endif

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

/* How long an idle worker (or a caller waiting for workers) polls before
 * blocking on its condition variable.  A futex wake-up costs tens of
 * microseconds on a VM, more than many whole jobs: the polling must
 * outlast the gap between back-to-back kernel calls (a timing loop, with
 * the harness's bookkeeping between samples) or every call pays a
 * wake-up - measured: with a 20000-load spin (a few microseconds on Zen
 * 5) exp on 1M f32 took as long at 2 threads as at 1, with 1.3 voluntary
 * context switches per call; with 200 us, 0.6x the time and 0.04.  Time,
 * not a poll count, so it holds on any core; an idle pool gives its CPU
 * back after this long. */
#define CPU_SPIN_NS 200000

/* Poll pred(p) until true or CPU_SPIN_NS passed; the clock is read every
 * 256 polls (a vDSO call, ~20 ns). */
static bool cpu_spin(bool (*pred)(void *), void *p)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t t0 = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    for (unsigned i = 1;; i++) {
        if (pred(p))
            return true;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if ((i & 255) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &ts);
            if ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - t0 >
                CPU_SPIN_NS)
                return false;
        }
    }
}

/* Column tiles for reductions / log_softmax over a non-last axis: the
 * per-column accumulators live on the stack (no allocation in a kernel).
 * Tiles are at most TB_CPU_COL_TILE wide (TB_CPU_SUM_COL_TILE for sum
 * and mean: 96 KiB of a worker's stack; fewer passes over the rows),
 * and narrower when that gives each thread a tile (cpu_col_tile). */
#define CPU_COL_TILE_MIN 64
/* Transpose (R == 1): a job item is a block of CPU_TR_COLS input columns
 * (output rows) over all input rows, moved tr.tile (8) rows at a time
 * (8x8 register tiles at the SIMD levels).  The block is narrow on
 * purpose: with a power-of-two row pitch every output row of the block
 * maps to the same few cache sets (4 L2 sets x 16 ways on a 1 MiB L2 at
 * a 16 KiB pitch), so the lines one 8-row strip half-fills stay cached
 * for the next strip only if the block has at most ~48 rows; blocks of
 * whole rows (the first version) thrashed L2 and the TLB and ran at a
 * quarter of the copy bandwidth (4096x4096 f32). */
#define CPU_TR_COLS 32
#define CPU_TR_ROWS 256
/* Transposes whose output is at least this large (well beyond a 16-32
 * MiB L3, so the output would be evicted before anyone reads it) write
 * it with non-temporal stores where the level has them. */
#define CPU_TR_NT_BYTES (32.0 * 1024 * 1024)
/* Element-wise ops (add..div on equal shapes, relu, the vmath functions)
 * whose working set (inputs + output) is at least this large write
 * their output with non-temporal stores (the *_nt kernels): twice a
 * 32 MiB L3, so in a loop nothing of the previous call survives in the
 * cache anyway, and skipping the output's read-for-ownership cuts the
 * DRAM traffic of an add from 4 to 3 streams.  Below it the output
 * stays cached for its reader (a 1024x1024 add, 12 MiB, must not use
 * them). */
#define CPU_EW_NT_BYTES (64.0 * 1024 * 1024)

_Static_assert(TB_MAX_AXIS_VALUES <= 32, "cpu: thread value names");

/* An entry point of level lv (kreg.h) calls only inner loops that level
 * lv itself installed: a registry row claiming a level whose code it
 * lacks fails here (checkasm and test_cpu run every row). */
#define CPU_SLOT_AT(slot_isa, lv) assert((slot_isa) == (lv))

/* ------------------------------------------------------------------ */
/* Thread pool                                                          */
/* ------------------------------------------------------------------ */

/* A job: fn(arg, part, nparts) for part in [0, nparts).  Each part must
 * compute its own range of the work from (part, nparts). */
typedef void (*cpu_task_fn)(void *arg, int part, int nparts);

struct cpu_pool;

typedef struct cpu_worker {
    struct cpu_pool *pool;
    int id; /* 1..nworkers */
    pthread_t tid;
} cpu_worker;

typedef struct cpu_pool {
    int nworkers;
    cpu_worker *workers;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* workers: a new generation was published */
    pthread_cond_t done; /* caller: pending reached 0 */
    /* Bumped (under mu) for every job and once for shutdown: the
     * workers' wake-up signal. */
    _Atomic uint64_t gen;
    /* The parts of the current job not handed out yet, claimed one at
     * a time by whichever thread gets there first - workers and the
     * caller alike (cpu_pool_claim): (job << 32) | (nparts << 16) | next
     * part.  A worker that is not given a core in time thus costs the
     * caller its parts' work, not a wait for that worker: the caller
     * runs them itself.  The job fields below are written before the
     * release store of a new job's word and not rewritten until pending
     * is 0; a thread reads them only after claiming a part of that job
     * (an acq_rel CAS on this word). */
    _Atomic uint64_t claim;
    /* Parts 1.. of the current job not finished yet. */
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

typedef struct {
    cpu_pool *pool;
    uint64_t seen;
} cpu_gen_wait;

static bool cpu_gen_moved(void *p)
{
    cpu_gen_wait *w = p;
    return atomic_load_explicit(&w->pool->gen, memory_order_acquire) !=
           w->seen;
}

static bool cpu_pending_done(void *p)
{
    return atomic_load_explicit(&((cpu_pool *)p)->pending,
                                memory_order_acquire) == 0;
}

/* Wait until pool->gen differs from seen; returns the new generation. */
static uint64_t cpu_pool_await(cpu_pool *pool, uint64_t seen)
{
    cpu_gen_wait w = {pool, seen};
    if (cpu_spin(cpu_gen_moved, &w))
        return atomic_load_explicit(&pool->gen, memory_order_acquire);
    pthread_mutex_lock(&pool->mu);
    uint64_t g;
    while ((g = atomic_load_explicit(&pool->gen, memory_order_acquire)) ==
           seen)
        pthread_cond_wait(&pool->wake, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
    return g;
}

/* Claim the next part of job `job` (the low 32 bits of its generation):
 * its index, or -1 when that job has no part left (or is over: a late
 * worker's claim of an older job fails here and touches nothing). */
static int cpu_pool_claim(cpu_pool *pool, uint32_t job)
{
    uint64_t c = atomic_load_explicit(&pool->claim, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(c >> 32) != job ||
            (c & 0xffff) >= ((c >> 16) & 0xffff))
            return -1;
        if (atomic_compare_exchange_weak_explicit(
                &pool->claim, &c, c + 1, memory_order_acq_rel,
                memory_order_acquire))
            return (int)(c & 0xffff);
    }
}

/* Run parts of job `job` until none is left.  The last part to finish
 * wakes the caller; taking mu orders the signal after the caller's
 * check-then-wait. */
static void cpu_pool_work(cpu_pool *pool, uint32_t job)
{
    int part;
    while ((part = cpu_pool_claim(pool, job)) >= 0) {
        pool->fn(pool->arg, part, pool->nparts);
        if (atomic_fetch_sub_explicit(&pool->pending, 1,
                                      memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool->mu);
            pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->mu);
        }
    }
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
        cpu_pool_work(pool, (uint32_t)seen);
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
 * 0 on the calling thread, the others on whichever thread claims them
 * first (cpu_pool_claim: a worker, or the caller once its own part is
 * done, so a worker that does not get a core under contention delays
 * nothing but its own claim).  Returns when every part is done, with the
 * number of parts actually used. */
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
    atomic_store_explicit(&pool->pending, nparts - 1, memory_order_relaxed);
    const uint64_t gen =
        atomic_load_explicit(&pool->gen, memory_order_relaxed) + 1;
    const uint32_t job = (uint32_t)gen;
    atomic_store_explicit(&pool->claim,
                          ((uint64_t)job << 32) |
                              ((uint64_t)nparts << 16) | 1u,
                          memory_order_release);
    pthread_mutex_lock(&pool->mu);
    atomic_store_explicit(&pool->gen, gen, memory_order_release);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);

    fn(arg, 0, nparts);
    /* then every part no worker has started yet */
    cpu_pool_work(pool, job);

    if (cpu_spin(cpu_pending_done, pool))
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
    int isa; /* the highest level in k (auto resolved) */
    /* Inner loops of every level up to isa, each exactly that level's
     * (the ladder climbed to it): an entry point of level l uses k[l] and
     * vm[l] only (kreg.h). */
    tb_cpu_kernels k[TB_ISA_COUNT];
    tb_vmath vm[TB_ISA_COUNT]; /* f32 exp, log, tanh, sigmoid, gelu... */
    cpu_pool *pool; /* NULL when threads == 1 */
    _Atomic uint64_t kernel_launches;
    tb_hostmem mem; /* tensors, transfers and their counters */
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

/* ---- cpu_internal.h: the instance for kernels in other files ---- */

int tb_cpu_isa(const void *ctx)
{
    return ctx ? ((const cpu_ctx *)ctx)->isa : TB_ISA_SCALAR;
}

void tb_cpu_count_launch(void *ctx)
{
    if (ctx)
        cpu_count_launch(ctx);
}

void tb_cpu_parallel(void *ctx, int64_t work, int64_t items,
                     tb_cpu_task_fn fn, void *arg)
{
    cpu_ctx *c = ctx;
    if (!c) {
        fn(arg, 0, 1);
        return;
    }
    cpu_pool_run(c->pool, cpu_parts(c, work, items), fn, arg);
}

void tb_cpu_span(int64_t n, int64_t align, int part, int nparts,
                 int64_t *b, int64_t *e)
{
    cpu_span_aligned(n, align > 0 ? align : 1, part, nparts, b, e);
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

static int cpu_axes(tb_axis *out, int max)
{
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
    cpu_ctx *c = ctx;
    if (!c)
        return;
    cpu_pool_destroy(c->pool);
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
                     "scalar, avx2, avx512 or auto",
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
                     "cpu: isa=\"%s\": expected scalar, avx2, avx512 or "
                     "auto",
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
static int cpu_create(const char *const *values, void **ctx, char *err,
                      size_t errlen)
{
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
    cpu_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return TB_ENOMEM;
    c->threads = n;
    c->mem.owner = &tb_backend_cpu;
    c->isa = tb_cpu_kernels_fill(&c->k[isa], isa);
    for (int l = TB_ISA_SCALAR; l <= c->isa; l++) {
        tb_cpu_kernels_fill(&c->k[l], l);
        tb_vmath_fill(&c->vm[l], l);
    }
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
    tb_hostmem_counters(&c->mem, out);
}

/* The `host` slot: the level an instance of these values runs (the
 * isa axis resolved within the cap, as cpu_create resolves it), or the
 * best allowed one; TBENCH_ISA as isa.c reads it. */
static int cpu_host(const char *const *values, tb_backend_host *out)
{
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

/* ------------------------------------------------------------------ */
/* Memory                                                               */
/* ------------------------------------------------------------------ */


static int cpu_alloc(void *ctx, tb_tensor *t)
{
    return ctx ? tb_hostmem_alloc(&((cpu_ctx *)ctx)->mem, ctx, t)
               : TB_EINVAL;
}

static void cpu_free(void *ctx, tb_tensor *t)
{
    if (ctx)
        tb_hostmem_free(&((cpu_ctx *)ctx)->mem, t);
}

static int cpu_upload(void *ctx, tb_tensor *dst, const tb_tensor *src)
{
    return ctx ? tb_hostmem_upload(&((cpu_ctx *)ctx)->mem, dst, src)
               : TB_EINVAL;
}

static int cpu_download(void *ctx, tb_tensor *dst, const tb_tensor *src)
{
    return ctx ? tb_hostmem_download(&((cpu_ctx *)ctx)->mem, dst, src)
               : TB_EINVAL;
}

static int cpu_sync(void *ctx)
{
    (void)ctx; /* kernels are synchronous */
    return 0;
}

/* ------------------------------------------------------------------ */
/* Kernel helpers                                                       */
/* ------------------------------------------------------------------ */

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

/* Column tile width for `outer` slabs of `inner` columns: `widest`
 * (TB_CPU_COL_TILE, or TB_CPU_SUM_COL_TILE for the sums), halved (down
 * to CPU_COL_TILE_MIN) while there are fewer tiles than threads. */
static void cpu_col_tile_w(const cpu_ctx *c, int64_t outer, int64_t inner,
                           int64_t widest, int64_t *tile, int64_t *ntiles)
{
    int64_t w = widest;
    while (w > CPU_COL_TILE_MIN && outer * ((inner + w - 1) / w) < c->threads)
        w /= 2;
    *tile = w;
    *ntiles = (inner + w - 1) / w;
}

static void cpu_col_tile(const cpu_ctx *c, int64_t outer, int64_t inner,
                         int64_t *tile, int64_t *ntiles)
{
    cpu_col_tile_w(c, outer, inner, TB_CPU_COL_TILE, tile, ntiles);
}

static void cpu_store(void *o, tb_dtype dt, int64_t i, double v)
{
    if (dt == TB_F32)
        ((float *)o)[i] = (float)v;
    else
        ((double *)o)[i] = v;
}

typedef struct cpu_binop {
    tb_cpu_bin_fn vv, sv, vs;
    size_t esz;
} cpu_binop;

/* Whether an element-wise op over n elements of es bytes with nin
 * inputs should use its streaming-store kernel (CPU_EW_NT_BYTES). */
static bool cpu_ew_nt(int64_t n, size_t es, int nin)
{
    return (double)n * (double)es * (nin + 1) >= CPU_EW_NT_BYTES;
}

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
    tb_cpu_bin_fn fn = j->sa[last] == 0 ? j->op->sv
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

/* Broadcast a (na dims) and b (nb dims) to out; checks out's shape.
 * which: TB_CPU_ADD..TB_CPU_ADD_RELU (add_relu is one fused pass, like
 * the others, so it broadcasts, splits and streams as add does).  Equal
 * shapes take the flat fast path (one vv loop split over the threads);
 * broadcasts coalesce dims and run the sv / vs / vv loop per output
 * row. */
static int cpu_binary(void *ctx, const tb_tensor *in, tb_tensor *out,
                      tb_dtype dt, int which, int lv)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    CPU_SLOT_AT(c->k[lv].bin[which][dt].isa, lv);
    cpu_binop bop = {c->k[lv].bin[which][dt].vv, c->k[lv].bin[which][dt].sv,
                     c->k[lv].bin[which][dt].vs, tb_dtype_size(dt)};
    const cpu_binop *op = &bop;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = tb_tensor_check_operand(&in[0], dt, 0)) ||
        (rc = tb_tensor_check_operand(&in[1], dt, 0)) ||
        (rc = tb_tensor_check_operand(out, dt, 0)))
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
        /* Parts start on 16-element boundaries, so with the tensor's
         * 64-byte alignment every part's output is line-aligned for the
         * streaming kernel (which handles any start anyway). */
        if (cpu_ew_nt(j.n, bop.esz, 2))
            bop.vv = c->k[lv].bin[which][dt].vv_nt;
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
    tb_cpu_unary_fn fn;
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
                    tb_dtype dt, int lv)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    CPU_SLOT_AT(c->k[lv].relu[dt].isa, lv);
    const tb_cpu_unary_fn fn = c->k[lv].relu[dt].fn;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = tb_tensor_check_operand(&in[0], dt, 0)) ||
        (rc = tb_tensor_check_operand(out, dt, 0)))
        return rc;
    if (!tb_hostmem_same_shape(&in[0], out))
        return TB_ESHAPE;
    cpu_unary_job j = {fn, tb_dtype_size(dt), in[0].data, out->data,
                       cpu_numel(out)};
    if (cpu_ew_nt(j.n, j.esz, 1))
        j.fn = c->k[lv].relu[dt].fn_nt;
    if (j.n > 0)
        cpu_pool_run(c->pool, cpu_parts(c, j.n, (j.n + 15) / 16),
                     cpu_unary_task, &j);
    return 0;
}

/* ------------------------------------------------------------------ */
/* f32 math functions (vmath.h)                                         */
/* ------------------------------------------------------------------ */

typedef struct cpu_vm_job {
    tb_vmath_fn fn;
    const float *x;
    float *o;
    int64_t n;
} cpu_vm_job;

static void cpu_vm_task(void *argp, int part, int nparts)
{
    const cpu_vm_job *j = argp;
    int64_t b, e;
    cpu_span_aligned(j->n, 16, part, nparts, &b, &e);
    if (e > b)
        j->fn(j->x + b, j->o + b, e - b);
}

/* y = f(x) element-wise for f32 (f = TB_VM_*), split over the threads
 * above the work threshold (a SIMD exp costs a few simple element
 * operations; the scalar level's double libm calls ~CPU_EXP_WEIGHT). */
static int cpu_vmath(void *ctx, const tb_tensor *in, tb_tensor *out, int f,
                     int lv)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = tb_tensor_check_operand(&in[0], TB_F32, 0)) ||
        (rc = tb_tensor_check_operand(out, TB_F32, 0)))
        return rc;
    if (!tb_hostmem_same_shape(&in[0], out))
        return TB_ESHAPE;
    CPU_SLOT_AT(c->vm[lv].isa[f], lv);
    cpu_vm_job j = {c->vm[lv].fn[f], in[0].data, out->data, cpu_numel(out)};
    if (cpu_ew_nt(j.n, sizeof(float), 1))
        j.fn = c->vm[lv].fn_nt[f];
    const int64_t weight = lv == TB_ISA_SCALAR ? CPU_EXP_WEIGHT : 4;
    if (j.n > 0)
        cpu_pool_run(c->pool, cpu_parts(c, j.n * weight, (j.n + 15) / 16),
                     cpu_vm_task, &j);
    return 0;
}


/* ------------------------------------------------------------------ */
/* sum / mean                                                           */
/* ------------------------------------------------------------------ */

/* The input viewed as [outer, R, inner]; the output as [outer, inner]. */
typedef struct cpu_red_job {
    tb_cpu_sum_fn row;
    tb_cpu_sumcols_fn cols;
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
    cpu_span_aligned(j->R, TB_CPU_SUM_BLOCK, part, nparts, &b, &e);
    j->partial[part] = e > b ? j->row(j->x + b * j->esz, e - b) : 0.0;
}

static void cpu_red_rows_task(void *argp, int part, int nparts)
{
    cpu_red_job *j = argp;
    int64_t b, e;
    cpu_span(j->outer, part, nparts, &b, &e);
    for (int64_t o = b; o < e; o++)
        cpu_store(j->o, j->dt, o,
                  j->row(j->x + o * j->R * j->esz, j->R) * j->scale);
}

static void cpu_red_cols_task(void *argp, int part, int nparts)
{
    cpu_red_job *j = argp;
    int64_t b, e;
    cpu_span(j->outer * j->ntiles, part, nparts, &b, &e);
    double acc[TB_CPU_SUM_COL_TILE];
    for (int64_t it = b; it < e; it++) {
        int64_t o = it / j->ntiles;
        int64_t j0 = (it % j->ntiles) * j->tile;
        int64_t w = j->inner - j0 < j->tile ? j->inner - j0 : j->tile;
        for (int64_t q = 0; q < w; q++)
            acc[q] = 0;
        j->cols(j->x + (o * j->R * j->inner + j0) * j->esz, j->R,
                   j->inner, w, acc);
        for (int64_t q = 0; q < w; q++)
            cpu_store(j->o, j->dt, o * j->inner + j0 + q, acc[q] * j->scale);
    }
}

/* sum (mean=false) or mean over param 0 "axis" (absent: all elements).
 * keepdim only changes the output's shape, so only its size is checked. */
static int cpu_reduce(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, bool mean, int lv)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = tb_tensor_check_operand(&in[0], dt, 0)) ||
        (rc = tb_tensor_check_operand(out, dt, 0)))
        return rc;
    const tb_tensor *x = &in[0];
    bool has_axis;
    int64_t axis;
    if ((rc = cpu_param_int(p, 0, 0, &has_axis, &axis)))
        return rc;
    cpu_red_job j;
    memset(&j, 0, sizeof j);
    CPU_SLOT_AT(c->k[lv].sum[dt].isa, lv);
    j.row = c->k[lv].sum[dt].row;
    j.cols = c->k[lv].sum[dt].cols;
    j.dt = dt;
    j.esz = tb_dtype_size(dt);
    j.x = x->data;
    j.o = out->data;
    const int64_t n = cpu_numel(x);
    if (!has_axis) {
        if (cpu_numel(out) != 1)
            return TB_ESHAPE;
        j.R = n;
        int parts =
            cpu_parts(c, n, (n + TB_CPU_SUM_BLOCK - 1) / TB_CPU_SUM_BLOCK);
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
        cpu_col_tile_w(c, j.outer, j.inner, TB_CPU_SUM_COL_TILE, &j.tile,
                       &j.ntiles);
        cpu_pool_run(c->pool, cpu_parts(c, n, j.outer * j.ntiles),
                     cpu_red_cols_task, &j);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* log_softmax                                                          */
/* ------------------------------------------------------------------ */

typedef struct cpu_lsm_job {
    tb_cpu_lsm_rows_fn rows;
    tb_cpu_lsm_cols_fn cols;
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
    if (e > b) {
        size_t off = (size_t)(b * j->R) * j->esz;
        j->rows(j->x + off, j->o + off, e - b, j->R);
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

/* log_softmax (soft false) or softmax (soft true) over param 0 "axis"
 * (default -1): one driver, the two ops' kernels share their online
 * max / sum (kernels_simd.h). */
static int cpu_log_softmax(void *ctx, const tb_tensor *in, tb_tensor *out,
                           const tb_params *p, tb_dtype dt, bool soft,
                           int lv)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = tb_tensor_check_operand(&in[0], dt, 0)) ||
        (rc = tb_tensor_check_operand(out, dt, 0)))
        return rc;
    const tb_tensor *x = &in[0];
    if (!tb_hostmem_same_shape(x, out))
        return TB_ESHAPE;
    int64_t axis;
    int ax;
    if ((rc = cpu_param_int(p, 0, -1, NULL, &axis)))
        return rc;
    if (tb_axis_norm(axis, x->ndim, &ax))
        return TB_EPARAM;
    CPU_SLOT_AT(soft ? c->k[lv].sm[dt].isa : c->k[lv].lsm[dt].isa, lv);
    cpu_lsm_job j = {
        .rows = soft ? c->k[lv].sm[dt].rows : c->k[lv].lsm[dt].rows,
        .cols = soft ? c->k[lv].sm[dt].cols : c->k[lv].lsm[dt].cols,
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
    tb_cpu_mm_fn fn;
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

#if TB_CPU_HAVE_GEMM
/* Matmul through the native GEMM (gemm/gemm.h) at the avx2 and avx512
 * levels; the scalar level keeps the portable loops of kernels_c.c. */
static bool cpu_use_gemm(int lv)
{
    return lv >= TB_ISA_AVX2;
}

/* tb_gemm_parallel over the instance's pool: the GEMM's parts run on
 * the same persistent workers as every other kernel. */
static void cpu_gemm_par_run(void *ctx, int n, tb_gemm_task_fn fn, void *arg)
{
    cpu_ctx *c = ctx;
    cpu_pool_run(c->pool, n, fn, arg);
}

typedef struct cpu_gemm_job {
    const cpu_ctx *c;
    tb_dtype dt;
    int lv; /* the level whose GEMM runs */
    const char *a, *b;
    char *o;
    int64_t M, K, N, batch;
    int rc[TB_MAX_AXIS_VALUES]; /* per part */
} cpu_gemm_job;

/* Batches [lo, hi), each a whole GEMM with `threads` threads over par. */
static int cpu_gemm_batches(const cpu_gemm_job *j, int64_t lo, int64_t hi,
                            int threads, const tb_gemm_parallel *par)
{
    const size_t es = tb_dtype_size(j->dt);
    for (int64_t bi = lo; bi < hi; bi++) {
        const char *a = j->a + (size_t)(bi * j->M * j->K) * es;
        const char *b = j->b + (size_t)(bi * j->K * j->N) * es;
        char *o = j->o + (size_t)(bi * j->M * j->N) * es;
        int rc = j->dt == TB_F32
                     ? tb_gemm_f32_ex(j->lv, j->M, j->N, j->K,
                                      (const float *)a, j->K,
                                      (const float *)b, j->N, (float *)o,
                                      j->N, threads, par)
                     : tb_gemm_f64_ex(j->lv, j->M, j->N, j->K,
                                      (const double *)a, j->K,
                                      (const double *)b, j->N, (double *)o,
                                      j->N, threads, par);
        if (rc)
            return rc;
    }
    return 0;
}

static void cpu_gemm_batch_task(void *argp, int part, int nparts)
{
    cpu_gemm_job *j = argp;
    int64_t b, e;
    cpu_span(j->batch, part, nparts, &b, &e);
    j->rc[part] = cpu_gemm_batches(j, b, e, 1, NULL);
}

/* Small matrices in a batch: one thread per batch slice; otherwise one
 * batch after the other, each split by the GEMM over the pool. */
static int cpu_matmul_gemm(cpu_ctx *c, const tb_tensor *a,
                           const tb_tensor *b, tb_tensor *out, tb_dtype dt,
                           int64_t batch, int64_t M, int64_t K, int64_t N,
                           int lv)
{
    cpu_gemm_job j = {.c = c, .dt = dt, .lv = lv, .a = a->data, .b = b->data,
                      .o = out->data, .M = M, .K = K, .N = N,
                      .batch = batch};
    if (batch > 1 && c->threads > 1 && M * N * K < TB_GEMM_PAR_MIN_MACS) {
        int parts = cpu_parts(c, batch * M * N * K, batch);
        parts = cpu_pool_run(c->pool, parts, cpu_gemm_batch_task, &j);
        for (int i = 0; i < parts; i++)
            if (j.rc[i])
                return j.rc[i];
        return 0;
    }
    const tb_gemm_parallel par = {cpu_gemm_par_run, c};
    return cpu_gemm_batches(&j, 0, batch, c->threads,
                            c->threads > 1 ? &par : NULL);
}
#endif

/* The level of the matrix product code level lv runs for dt: the native
 * GEMM's (lv itself) or the row loops'.  Read only by CPU_SLOT_AT's
 * assertion, so unused where NDEBUG (release builds). */
__attribute__((unused)) static int cpu_mm_isa(const cpu_ctx *c, tb_dtype dt, int lv)
{
#if TB_CPU_HAVE_GEMM
    if (cpu_use_gemm(lv))
        return lv;
#endif
    return c->k[lv].mm[dt].isa;
}

/* [..., M, K] x [..., K, N] -> [..., M, N] with equal batch dims. */
static int cpu_matmul(void *ctx, const tb_tensor *in, tb_tensor *out,
                      tb_dtype dt, int lv)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
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
    for (int d = 0; d < nd - 2; d++)
        if (b->shape[d] != a->shape[d] || out->shape[d] != a->shape[d])
            return TB_ESHAPE;
    const int64_t M = a->shape[nd - 2], K = a->shape[nd - 1];
    const int64_t N = b->shape[nd - 1];
    if (b->shape[nd - 2] != K || out->shape[nd - 2] != M ||
        out->shape[nd - 1] != N)
        return TB_ESHAPE;
    CPU_SLOT_AT(cpu_mm_isa(c, dt, lv), lv);
    cpu_mm_job j = {
        .fn = c->k[lv].mm[dt].rows,
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
#if TB_CPU_HAVE_GEMM
    if (cpu_use_gemm(lv))
        return cpu_matmul_gemm(c, a, b, out, dt, j.rows / M, M, K, N, lv);
#endif
    cpu_pool_run(c->pool, cpu_parts(c, j.rows * K * N, j.rows), cpu_mm_task,
                 &j);
    return 0;
}

/* ------------------------------------------------------------------ */
/* linear: relu(x @ W + b)                                              */
/* ------------------------------------------------------------------ */

/* Rows [r0, r1) of out [M, N]: out += b (broadcast over rows), then relu
 * (x <= 0, -0 included, gives +0; NaN is kept), the same two rounded
 * steps as the unfused add and relu. */
static void cpu_bias_relu_rows(tb_dtype dt, void *out, const void *bias,
                               int64_t r0, int64_t r1, int64_t N)
{
    for (int64_t r = r0; r < r1; r++) {
        if (dt == TB_F32) {
            float *restrict o = (float *)out + r * N;
            const float *restrict b = bias;
            for (int64_t q = 0; q < N; q++) {
                const float v = o[q] + b[q];
                o[q] = v <= 0 ? 0.0f : v;
            }
        } else {
            double *restrict o = (double *)out + r * N;
            const double *restrict b = bias;
            for (int64_t q = 0; q < N; q++) {
                const double v = o[q] + b[q];
                o[q] = v <= 0 ? 0.0 : v;
            }
        }
    }
}

typedef struct cpu_lin_job {
    cpu_mm_job mm; /* rows == M */
    tb_dtype dt;
    const void *bias;
} cpu_lin_job;

/* The portable level: each part multiplies its rows, then adds the bias
 * and applies relu to them (the part's own rows, fresh in its caches). */
static void cpu_lin_task(void *argp, int part, int nparts)
{
    const cpu_lin_job *j = argp;
    int64_t r, e;
    cpu_span(j->mm.rows, part, nparts, &r, &e);
    if (r >= e)
        return;
    j->mm.fn(j->mm.a, j->mm.b, j->mm.c, r, e, j->mm.K, j->mm.N);
    cpu_bias_relu_rows(j->dt, j->mm.c, j->bias, r, e, j->mm.N);
}

/* linear (x [M, K], W [K, N], b [N] -> [M, N]) in one launch.  At the
 * avx2 / avx512 levels the native GEMM runs with its fused epilogue
 * (gemm.h, tb_gemm_*_ep): bias and relu are applied to each micro-tile
 * as soon as its sums are complete, while it is in L1, so the output is
 * written once and no intermediate exists.  The scalar level splits the
 * rows over the threads: the portable matmul rows, then bias and relu
 * on the same rows.  Results equal matmul, then add, then relu (bit for
 * bit at a given level). */
static int cpu_linear(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, int lv)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    for (int i = 0; i < 3; i++)
        if ((rc = tb_tensor_check_operand(&in[i], dt, 0)))
            return rc;
    if ((rc = tb_tensor_check_operand(out, dt, 0)))
        return rc;
    const tb_op *op = tb_op_get(TB_OP_linear);
    tb_shape ish[3] = {tb_tensor_shape(&in[0]), tb_tensor_shape(&in[1]),
                       tb_tensor_shape(&in[2])};
    tb_shape osh;
    if ((rc = tb_op_infer(op, ish, 3, p, &osh, NULL, 0)))
        return rc;
    tb_shape got = tb_tensor_shape(out);
    if (!tb_shape_equal(&got, &osh))
        return TB_ESHAPE;
    const int64_t M = in[0].shape[0], K = in[0].shape[1];
    const int64_t N = in[1].shape[1];
    if (M == 0 || N == 0)
        return 0;
#if TB_CPU_HAVE_GEMM
    if (cpu_use_gemm(lv)) {
        const tb_gemm_parallel par = {cpu_gemm_par_run, c};
        const tb_gemm_parallel *pp = c->threads > 1 ? &par : NULL;
        if (dt == TB_F32)
            return tb_gemm_f32_ep(lv, M, N, K, in[0].data, K,
                                  in[1].data, N, out->data, N, c->threads,
                                  pp, in[2].data, 1);
        return tb_gemm_f64_ep(lv, M, N, K, in[0].data, K, in[1].data,
                              N, out->data, N, c->threads, pp, in[2].data,
                              1);
    }
#endif
    CPU_SLOT_AT(c->k[lv].mm[dt].isa, lv);
    cpu_lin_job j = {
        .mm = {.fn = c->k[lv].mm[dt].rows, .esz = tb_dtype_size(dt),
               .a = in[0].data, .b = in[1].data, .c = out->data, .M = M,
               .K = K, .N = N, .rows = M},
        .dt = dt,
        .bias = in[2].data,
    };
    cpu_pool_run(c->pool, cpu_parts(c, M * K * N + M * N, M), cpu_lin_task,
                 &j);
    return 0;
}

/* ------------------------------------------------------------------ */
/* conv2d / conv2d_nobias: im2col + GEMM                                */
/* ------------------------------------------------------------------ */

/* im2col of one image x [C, H, W] into col [R = C*KH*KW, P = OH*OW]:
 * col[(ci*KH + kh)*KW + kw][oh*OW + ow] = x[ci][ih][iw] with ih = oh*s -
 * pad + kh*dil, iw likewise, and 0 where that is outside the image (the
 * blas backend's layout).  The in-bounds ow range of a tap is computed
 * once per (kw, tap), so the inner loop has no branch; stride 1 rows are
 * contiguous runs. */
#define CPU_IM2COL(SFX, T)                                                \
    static void cpu_im2col_##SFX(const T *restrict x, T *restrict col,    \
                                 const cpu_conv_geom *g)                  \
    {                                                                     \
        for (int64_t ci = 0; ci < g->C; ci++)                             \
            for (int64_t kh = 0; kh < g->KH; kh++)                        \
                for (int64_t kw = 0; kw < g->KW; kw++) {                  \
                    T *dst = col + ((ci * g->KH + kh) * g->KW + kw) *     \
                                       g->OH * g->OW;                     \
                    int64_t w0, w1;                                       \
                    cpu_conv_range(g->W, g->OW, g->s, g->pad,             \
                                   kw * g->dil, &w0, &w1);                \
                    const int64_t dw = kw * g->dil - g->pad;              \
                    for (int64_t oh = 0; oh < g->OH; oh++) {              \
                        T *d = dst + oh * g->OW;                          \
                        const int64_t ih = oh * g->s - g->pad + kh * g->dil; \
                        if (ih < 0 || ih >= g->H || w0 >= w1) {           \
                            for (int64_t ow = 0; ow < g->OW; ow++)        \
                                d[ow] = 0;                                \
                            continue;                                     \
                        }                                                 \
                        const T *xr = x + (ci * g->H + ih) * g->W;        \
                        for (int64_t ow = 0; ow < w0; ow++)               \
                            d[ow] = 0;                                    \
                        if (g->s == 1)                                    \
                            memcpy(d + w0, xr + w0 + dw,                  \
                                   (size_t)(w1 - w0) * sizeof(T));        \
                        else                                              \
                            for (int64_t ow = w0; ow < w1; ow++)          \
                                d[ow] = xr[ow * g->s + dw];               \
                        for (int64_t ow = w1; ow < g->OW; ow++)           \
                            d[ow] = 0;                                    \
                    }                                                     \
                }                                                         \
    }

typedef struct cpu_conv_geom {
    int64_t C, H, W, KH, KW, OH, OW, s, pad, dil;
} cpu_conv_geom;

/* [*lo, *hi): the output indices o < n_out whose input index o*s - pad
 * + t lies in [0, n_in) (empty: lo == hi). */
static void cpu_conv_range(int64_t n_in, int64_t n_out, int64_t s,
                           int64_t pad, int64_t t, int64_t *lo, int64_t *hi)
{
    int64_t a = pad - t; /* o*s >= a */
    int64_t first = a <= 0 ? 0 : (a + s - 1) / s;
    int64_t b = n_in - 1 + pad - t; /* o*s <= b */
    int64_t last = b < 0 ? -1 : b / s;
    *lo = first < n_out ? first : n_out;
    *hi = last + 1 < n_out ? last + 1 : n_out;
    if (*hi < *lo)
        *hi = *lo;
}

CPU_IM2COL(f32, float)
CPU_IM2COL(f64, double)

typedef struct cpu_conv_job {
    cpu_ctx *c;
    tb_dtype dt;
    int lv; /* the level whose loops (or GEMM) run */
    size_t esz;
    const char *x, *w, *bias; /* bias: NULL for conv2d_nobias */
    char *o;
    char *col;    /* one R x P buffer per part */
    int64_t N, O, R, P;
    cpu_conv_geom g;
    int rc[TB_MAX_AXIS_VALUES]; /* per part */
} cpu_conv_job;

/* Images [lo, hi) with column buffer col: im2col, out[n] = W [O, R] x
 * col [R, P] (the native GEMM at the SIMD levels with `threads` threads
 * over par, the portable matmul rows at the scalar level), then the
 * bias of each output channel over its row. */
static int cpu_conv_images(const cpu_conv_job *j, char *col, int64_t lo,
                           int64_t hi, int threads,
                           const tb_gemm_parallel *par)
{
    const size_t es = j->esz;
    const int64_t chw = j->g.C * j->g.H * j->g.W;
    (void)threads;
    (void)par;
    for (int64_t n = lo; n < hi; n++) {
        const char *xn = j->x + (size_t)(n * chw) * es;
        char *on = j->o + (size_t)(n * j->O * j->P) * es;
        if (j->dt == TB_F32)
            cpu_im2col_f32((const float *)xn, (float *)col, &j->g);
        else
            cpu_im2col_f64((const double *)xn, (double *)col, &j->g);
#if TB_CPU_HAVE_GEMM
        if (cpu_use_gemm(j->lv)) {
            int rc = j->dt == TB_F32
                         ? tb_gemm_f32_ex(j->lv, j->O, j->P, j->R,
                                          (const float *)j->w, j->R,
                                          (const float *)col, j->P,
                                          (float *)on, j->P, threads, par)
                         : tb_gemm_f64_ex(j->lv, j->O, j->P, j->R,
                                          (const double *)j->w, j->R,
                                          (const double *)col, j->P,
                                          (double *)on, j->P, threads, par);
            if (rc)
                return rc;
        } else
#endif
        {
            j->c->k[j->lv].mm[j->dt].rows(j->w, col, on, 0, j->O, j->R,
                                          j->P);
        }
        if (!j->bias)
            continue;
        for (int64_t oc = 0; oc < j->O; oc++) {
            if (j->dt == TB_F32) {
                float *restrict r = (float *)on + oc * j->P;
                const float b = ((const float *)j->bias)[oc];
                for (int64_t q = 0; q < j->P; q++)
                    r[q] += b;
            } else {
                double *restrict r = (double *)on + oc * j->P;
                const double b = ((const double *)j->bias)[oc];
                for (int64_t q = 0; q < j->P; q++)
                    r[q] += b;
            }
        }
    }
    return 0;
}

static void cpu_conv_task(void *argp, int part, int nparts)
{
    cpu_conv_job *j = argp;
    int64_t b, e;
    cpu_span(j->N, part, nparts, &b, &e);
    char *col = j->col + (size_t)part * (size_t)(j->R * j->P) * j->esz;
    j->rc[part] = cpu_conv_images(j, col, b, e, 1, NULL);
}

/* conv2d (with_bias) / conv2d_nobias of x [N, C, H, W] and w [O, C, KH,
 * KW] (+ b [O]), params 0 stride, 1 padding, 2 dilation; the output must
 * have the shape the op's rule gives.  Many images: the images are split
 * over the threads, each part with its own column buffer and a
 * one-thread GEMM per image; few: one image after another, each GEMM
 * split over the pool.  One tracked allocation per call (the column
 * buffers, parts x C*KH*KW x OH*OW elements). */
static int cpu_conv2d(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, bool with_bias,
                      int lv)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    const tb_op *op =
        tb_op_get(with_bias ? TB_OP_conv2d : TB_OP_conv2d_nobias);
    const int n_in = with_bias ? 3 : 2;
    int rc;
    tb_shape ish[3];
    for (int i = 0; i < n_in; i++) {
        if ((rc = tb_tensor_check_operand(&in[i], dt, 0)))
            return rc;
        ish[i] = tb_tensor_shape(&in[i]);
    }
    if ((rc = tb_tensor_check_operand(out, dt, 0)))
        return rc;
    tb_params q;
    if (p)
        q = *p;
    else
        memset(&q, 0, sizeof q);
    tb_params_defaults(op, &q);
    int64_t st, pad, dil;
    if ((rc = cpu_param_int(&q, 0, 1, NULL, &st)) ||
        (rc = cpu_param_int(&q, 1, 0, NULL, &pad)) ||
        (rc = cpu_param_int(&q, 2, 1, NULL, &dil)))
        return rc;
    if (st < 1 || pad < 0 || dil < 1)
        return TB_EPARAM;
    tb_shape osh;
    if ((rc = tb_op_infer(op, ish, n_in, &q, &osh, NULL, 0)))
        return rc;
    tb_shape got = tb_tensor_shape(out);
    if (!tb_shape_equal(&got, &osh))
        return TB_ESHAPE;
    const tb_tensor *x = &in[0], *w = &in[1];
    CPU_SLOT_AT(cpu_mm_isa(c, dt, lv), lv);
    cpu_conv_job j = {
        .c = c,
        .dt = dt,
        .lv = lv,
        .esz = tb_dtype_size(dt),
        .x = x->data,
        .w = w->data,
        .bias = with_bias ? in[2].data : NULL,
        .o = out->data,
        .N = x->shape[0],
        .O = w->shape[0],
        .R = x->shape[1] * w->shape[2] * w->shape[3],
        .P = osh.dim[2] * osh.dim[3],
        .g = {x->shape[1], x->shape[2], x->shape[3], w->shape[2],
              w->shape[3], osh.dim[2], osh.dim[3], st, pad, dil},
    };
    if (j.N == 0 || j.O == 0 || j.P == 0)
        return 0;
    const int64_t macs = j.N * j.O * j.P * j.R;
    int parts = cpu_parts(c, macs + j.N * j.R * j.P, j.N);
    /* One big image per part would leave each GEMM unsplit: below the
     * GEMM's own threading threshold only the image split helps, above
     * it with fewer images than threads the GEMM splits better. */
#if TB_CPU_HAVE_GEMM
    if (j.N < c->threads && j.O * j.P * j.R >= TB_GEMM_PAR_MIN_MACS)
        parts = 1;
#endif
    j.col = tb_alloc((size_t)parts * (size_t)(j.R * j.P) * j.esz);
    if (!j.col)
        return TB_ENOMEM;
    if (parts > 1) {
        parts = cpu_pool_run(c->pool, parts, cpu_conv_task, &j);
        rc = 0;
        for (int i = 0; i < parts && !rc; i++)
            rc = j.rc[i];
    } else {
#if TB_CPU_HAVE_GEMM
        const tb_gemm_parallel par = {cpu_gemm_par_run, c};
        rc = cpu_conv_images(&j, j.col, 0, j.N, c->threads,
                             c->threads > 1 ? &par : NULL);
#else
        rc = cpu_conv_images(&j, j.col, 0, j.N, 1, NULL);
#endif
    }
    tb_free(j.col);
    return rc;
}

/* ------------------------------------------------------------------ */
/* transpose                                                            */
/* ------------------------------------------------------------------ */

/* Swapping dims a < b of a contiguous input viewed as [P, SA, Q, SB, R]
 * gives the output [P, SB, Q, SA, R]. */
typedef struct cpu_tr_job {
    tb_cpu_tr_fn fn;
    size_t esz;
    const char *x;
    char *o;
    int64_t P, SA, Q, SB, R;
    int64_t tile; /* input rows per fn call */
    int64_t ncb;  /* blocks of CPU_TR_COLS columns (SB) when R == 1 */
    bool nt;      /* fn may use non-temporal stores */
    int64_t n;   /* elements, for the plain-copy case */
} cpu_tr_job;

/* R == 1: (p, q) is an SA x SB transpose with leading dims Q*SB (input)
 * and Q*SA (output); item (p, q, t) moves input rows [8t, 8t + 8). */
static void cpu_tr_2d_task(void *argp, int part, int nparts)
{
    const cpu_tr_job *j = argp;
    int64_t b, e;
    const int64_t nrb = (j->SA + CPU_TR_ROWS - 1) / CPU_TR_ROWS;
    cpu_span(j->P * j->Q * nrb * j->ncb, part, nparts, &b, &e);
    const int64_t ild = j->Q * j->SB, old = j->Q * j->SA;
    for (int64_t it = b; it < e; it++) {
        int64_t cb = it % j->ncb, rest = it / j->ncb;
        int64_t rb = rest % nrb, pq = rest / nrb;
        int64_t q = pq % j->Q, p = pq / j->Q;
        int64_t j0 = cb * CPU_TR_COLS;
        int64_t nj = j->SB - j0 < CPU_TR_COLS ? j->SB - j0 : CPU_TR_COLS;
        int64_t i1 = (rb + 1) * CPU_TR_ROWS < j->SA ? (rb + 1) * CPU_TR_ROWS
                                                    : j->SA;
        for (int64_t i0 = rb * CPU_TR_ROWS; i0 < i1; i0 += j->tile) {
            int64_t ni = i1 - i0 < j->tile ? i1 - i0 : j->tile;
            int64_t ioff = (p * j->SA + i0) * ild + q * j->SB + j0;
            int64_t ooff = (p * j->SB + j0) * old + q * j->SA + i0;
            j->fn(j->x + (size_t)ioff * j->esz, ild,
                  j->o + (size_t)ooff * j->esz, old, ni, nj);
        }
    }
    /* Non-temporal stores are weakly ordered: make them visible before
     * the part reports done. */
    if (j->nt)
        atomic_thread_fence(memory_order_seq_cst);
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
                         const tb_params *p, tb_dtype dt, int lv)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = tb_tensor_check_operand(&in[0], dt, 0)) ||
        (rc = tb_tensor_check_operand(out, dt, 0)))
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
    CPU_SLOT_AT(c->k[lv].tr[dt].isa, lv);
    cpu_tr_job j = {
        .fn = c->k[lv].tr[dt].block,
        .tile = c->k[lv].tr[dt].tile,
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
        j.ncb = (j.SB + CPU_TR_COLS - 1) / CPU_TR_COLS;
        if ((double)j.n * (double)j.esz >= CPU_TR_NT_BYTES) {
            j.fn = c->k[lv].tr[dt].block_nt;
            j.nt = true;
        }
        cpu_pool_run(c->pool,
                     cpu_parts(c, j.n,
                               j.P * j.Q * j.ncb *
                                   ((j.SA + CPU_TR_ROWS - 1) / CPU_TR_ROWS)),
                     cpu_tr_2d_task, &j);
    } else {
        cpu_pool_run(c->pool, cpu_parts(c, j.n, j.P * j.SB * j.Q),
                     cpu_tr_runs_task, &j);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* max_pool2d / avg_pool2d                                              */
/* ------------------------------------------------------------------ */

typedef struct cpu_pool2d_job {
    tb_cpu_pool_fn fn;
    size_t esz;
    const char *x;
    char *o;
    int64_t planes; /* N * C */
    tb_cpu_pool_geom g;
} cpu_pool2d_job;

static void cpu_pool2d_task(void *argp, int part, int nparts)
{
    const cpu_pool2d_job *j = argp;
    int64_t b, e;
    cpu_span(j->planes, part, nparts, &b, &e);
    if (e > b)
        j->fn(j->x + (size_t)(b * j->g.H * j->g.W) * j->esz,
              j->o + (size_t)(b * j->g.OH * j->g.OW) * j->esz, e - b, &j->g);
}

/* Pooling of x [N, C, H, W] over params 0 kernel, 1 stride (absent: =
 * kernel), 2 padding; the output must have the shape the op's rule
 * gives.  The N * C planes are split over the threads. */
static int cpu_pool2d(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, bool is_max,
                      int lv)
{
    cpu_ctx *c = ctx;
    if (!c)
        return TB_EINVAL;
    cpu_count_launch(c);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    if ((rc = tb_tensor_check_operand(&in[0], dt, 0)) ||
        (rc = tb_tensor_check_operand(out, dt, 0)))
        return rc;
    const tb_op *op = tb_op_get(is_max ? TB_OP_max_pool2d : TB_OP_avg_pool2d);
    int64_t k, s, pad;
    if ((rc = cpu_param_int(p, 0, (int64_t)op->params[0].def, NULL, &k)) ||
        (rc = cpu_param_int(p, 1, k, NULL, &s)) ||
        (rc = cpu_param_int(p, 2, (int64_t)op->params[2].def, NULL, &pad)))
        return rc;
    if (k < 1 || s < 1 || pad < 0 || k > (INT64_C(1) << 20) ||
        s > (INT64_C(1) << 20) || 2 * pad > k)
        return TB_EPARAM;
    const tb_tensor *x = &in[0];
    if (x->ndim != 4 || out->ndim != 4)
        return TB_ESHAPE;
    tb_shape ish = tb_tensor_shape(x), osh;
    if ((rc = tb_op_infer(op, &ish, 1, p, &osh, NULL, 0)))
        return rc;
    tb_shape got = tb_tensor_shape(out);
    if (!tb_shape_equal(&got, &osh))
        return TB_ESHAPE;
    const tb_cpu_pool_geom g = {x->shape[2], x->shape[3], osh.dim[2],
                                osh.dim[3], k, s, pad};
    CPU_SLOT_AT(c->k[lv].pool[dt].isa, lv);
    cpu_pool2d_job j = {
        .fn = is_max ? c->k[lv].pool[dt].max : c->k[lv].pool[dt].avg,
        .esz = tb_dtype_size(dt),
        .x = x->data,
        .o = out->data,
        .planes = x->shape[0] * x->shape[1],
        .g = g,
    };
    if (g.W >= TB_CPU_POOL_SIMD_MAX_W) {
        /* beyond the SIMD versions' int32 lane offsets */
        tb_cpu_kernels kc;
        tb_cpu_kernels_init_c(&kc);
        j.fn = is_max ? kc.pool[dt].max : kc.pool[dt].avg;
    }
    const int64_t work = cpu_numel(x) + j.planes * g.OH * g.OW * k * k / 4;
    cpu_pool_run(c->pool, cpu_parts(c, work, j.planes), cpu_pool2d_task, &j);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Kernel table                                                         */
/* ------------------------------------------------------------------ */

/* One adapter per op: (ctx, in, out, p, dtype, level) -> the op's code
 * above, which runs level lv's inner loops only. */
#define CPU_RUN_BIN(NAME, IDX)                                            \
    static int cpu_run_##NAME(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p,         \
                              tb_dtype dt, int lv)                        \
    {                                                                     \
        (void)p;                                                          \
        return cpu_binary(ctx, in, out, dt, IDX, lv);                     \
    }
#define CPU_RUN_VM(NAME, F)                                               \
    static int cpu_run_##NAME(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p,         \
                              tb_dtype dt, int lv)                        \
    {                                                                     \
        (void)p, (void)dt; /* f32 only (kreg.h) */                        \
        return cpu_vmath(ctx, in, out, F, lv);                            \
    }
#define CPU_RUN(NAME, CALL)                                               \
    static int cpu_run_##NAME(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p,         \
                              tb_dtype dt, int lv)                        \
    {                                                                     \
        (void)p;                                                          \
        return CALL;                                                      \
    }

CPU_RUN_BIN(add, TB_CPU_ADD)
CPU_RUN_BIN(sub, TB_CPU_SUB)
CPU_RUN_BIN(mul, TB_CPU_MUL)
CPU_RUN_BIN(div, TB_CPU_DIV)
CPU_RUN_BIN(add_relu, TB_CPU_ADD_RELU)
CPU_RUN_VM(exp, TB_VM_EXP)
CPU_RUN_VM(log, TB_VM_LOG)
CPU_RUN_VM(tanh, TB_VM_TANH)
CPU_RUN_VM(sigmoid, TB_VM_SIGMOID)
CPU_RUN_VM(gelu, TB_VM_GELU_ERF)
CPU_RUN_VM(gelu_tanh, TB_VM_GELU_TANH)
CPU_RUN_VM(silu, TB_VM_SILU)
CPU_RUN(relu, cpu_relu(ctx, in, out, dt, lv))
CPU_RUN(sum, cpu_reduce(ctx, in, out, p, dt, false, lv))
CPU_RUN(mean, cpu_reduce(ctx, in, out, p, dt, true, lv))
CPU_RUN(matmul, cpu_matmul(ctx, in, out, dt, lv))
CPU_RUN(linear, cpu_linear(ctx, in, out, p, dt, lv))
CPU_RUN(conv2d, cpu_conv2d(ctx, in, out, p, dt, true, lv))
CPU_RUN(conv2d_nobias, cpu_conv2d(ctx, in, out, p, dt, false, lv))
CPU_RUN(transpose, cpu_transpose(ctx, in, out, p, dt, lv))
CPU_RUN(log_softmax, cpu_log_softmax(ctx, in, out, p, dt, false, lv))
CPU_RUN(softmax, cpu_log_softmax(ctx, in, out, p, dt, true, lv))
CPU_RUN(max_pool2d, cpu_pool2d(ctx, in, out, p, dt, true, lv))
CPU_RUN(avg_pool2d, cpu_pool2d(ctx, in, out, p, dt, false, lv))

/* The entry point of each of this file's registry rows (kreg.h): the
 * row's op at the row's dtype and level.  An instance below the level
 * has no tables for it (the lookup never hands such a row out). */
#define CPU_ENTRY(op, dt, sfx)                                            \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        if (ctx && tb_cpu_isa(ctx) < TB_CPU_LV_##sfx)                     \
            return TB_EUNSUPPORTED;                                       \
        return cpu_run_##op(ctx, in, out, p, TB_CPU_DT_##dt,              \
                            TB_CPU_LV_##sfx);                             \
    }
/* This file's rows: the pairs of the families below whose C row is a
 * driver's (suffix scalar). */
#define CPU_DEF(op, dt, sfx, c) CPU_DEF_##c(op, dt, sfx)
#define CPU_DEF_scalar(op, dt, sfx) CPU_ENTRY(op, dt, sfx)
#define CPU_DEF_c(op, dt, sfx)
#define CPU_DEF_N(op, dt, sfx, c, name) CPU_DEF(op, dt, sfx, c)
TB_CPU_ROWS_ARITH(CPU_DEF)
TB_CPU_ROWS_MATH(CPU_DEF)
TB_CPU_ROWS_REDUCE(CPU_DEF)
TB_CPU_ROWS_SOFTMAX(CPU_DEF)
TB_CPU_ROWS_LAYOUT(CPU_DEF)
TB_CPU_ROWS_MATMUL(CPU_DEF, CPU_DEF_N)
TB_CPU_ROWS_CONV(CPU_DEF)

/* The registry row for the instance's level (kreg.c: best first, so the
 * best level at or below it that has the op); with a NULL instance, the
 * portable one.  fn and *impl come from that one row. */
static tb_kernel_fn cpu_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                               const tb_params *p, const char **impl)
{
    (void)p; /* no choice depends on the parameters yet */
    if (impl)
        *impl = NULL;
    if (!op || (unsigned)op->id >= TB_OP_COUNT ||
        (unsigned)dt >= TB_DTYPE_COUNT)
        return NULL;
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
            return NULL;
        op = tb_op_get(op->base);
    }
    size_t n;
    const tb_cpu_krow *rows = tb_cpu_krows(&n);
    const tb_cpu_krow *r =
        tb_cpu_krow_find(rows, n, op->id, dt, tb_cpu_isa(ctx));
    if (!r)
        return NULL;
    if (impl)
        *impl = r->name;
    return r->fn;
}

const tb_backend tb_backend_cpu = {
    .name = "cpu",
    .doc = "host kernels with run-time ISA dispatch (axis isa: portable "
           "C, AVX2, AVX-512), split over a persistent pthread pool (axis "
           "threads)",
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
    .counters = cpu_counters,
    .host = cpu_host,
};
