/* Measured machine peaks (memory bandwidth, FMA FLOP/s, the core clock).
 * See peak.h for the contract and docs/FORMAT.md ("peaks") for the JSON;
 * the cache is peak_cache.c's, the tables peak_table.c's, the roofline
 * roofline.c's.
 *
 * Method.
 *  - A figure is measured by a team of T pinned threads (thread i on the
 *    i-th CPU this process may use; best effort, recorded as "pinned").
 *    Each repetition is: barrier, thread 0 reads the clock, every thread
 *    runs `passes` passes of the kernel over its own data, barrier,
 *    thread 0 reads the clock.  Rate = work of all threads / elapsed.
 *    Two untimed-for-the-result repetitions of one pass come first: the
 *    first warms caches and TLBs, the second sets `passes` so that a
 *    repetition lasts at least rep_time_s.
 *  - Bandwidth: each thread allocates and first-touches its own arrays
 *    (so on a NUMA machine its pages are local).  Bytes counted as STREAM
 *    and the op table's byte model do: each array read or written once
 *    per pass (write-allocate traffic is not counted).  Kernels use the
 *    widest vector ISA the CPU has, with ordinary (cached) stores, as
 *    tbench's own kernels do.  Working sets: L1 = half the L1 data cache
 *    per thread; L2 = half the L2 size per thread; L3 = 4x the L2 size
 *    per thread (just past the L2), at most half the L3 size over all
 *    threads, then each larger quarter of the L3 up to its whole size
 *    (TB_PEAK_L3_QUARTERS); DRAM = 8x the total L3 (its size x the number of L3
 *    instances) over all threads (4x with quick), at most a quarter of
 *    the available memory.  Arrays are offset by a few cache lines from
 *    one another so that they do not alias in 4 KiB-page bits.
 *  - FMA peak: TB_PEAK_NACC independent accumulator chains per thread, all in
 *    registers, acc = acc * m + c.  12 chains cover 4-cycle FMA latency
 *    on 2 FMA pipes with room to spare.  Levels: "scalar" is the
 *    portable build's baseline (GCC vector extensions at the default
 *    target: 128-bit SSE2 on x86-64, a separate multiply and add, which
 *    is the most that portable C can be compiled to); "avx2" is 256-bit
 *    FMA; "avx512" is 512-bit FMA; "avx512bf16" avx512's FMA again and
 *    the level's dot loops (tb_peak_loops.dot: int8's vpdpbusd, 4 u8 x
 *    s8 multiply-adds per int32 lane, dtype "int8" in the figures).  The
 *    loops of every level live in the
 *    cpu backend (backends/cpu/peak_loops.h: each built with its level's
 *    flags only, handed out only where the backend's ISA detector says
 *    the CPU and the OS run them), so this file stays portable.
 *  - Core clock: one thread (pinned) runs a single chain of dependent
 *    integer adds, PK_CLOCK_CHAIN per loop iteration, each add reading
 *    the result of the one before.  An add has 1 cycle of latency on
 *    every x86-64 and AArch64 core, and the loop's own counter, compare
 *    and branch run beside the chain on other ports, so the chain takes
 *    one cycle per add: adds per ns = GHz, the clock this core runs at
 *    while it is busy (turbo included).  An empty asm after each add
 *    says the register changed, so the compiler can neither fold the
 *    adds into one multiply nor split the chain (the release build's
 *    loop is 64 `add reg, reg` on one register).  Each of PK_CLOCK_REPS
 *    short repetitions (~PK_CLOCK_REP_NS) is timed by the thread's own
 *    CPU time (CLOCK_THREAD_CPUTIME_ID), so time the thread spends
 *    descheduled on a busy machine does not count as slow cycles; the
 *    median of the repetitions is the figure the stated compute bounds
 *    of scripts/op_limits.py use. */
#include "peak.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../backends/cpu/peak_loops.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../base/stats.h"
#include "../base/fileio.h"
#include "../ops/alloc.h"
#include "env.h"
#include "gpu_peak.h"
#include "peak_json.h"
#include "tb_config.h"

/* Iterations of the FMA loop in a calibration repetition. */
#define PK_FMA_CAL_ITERS 20000L
/* Array elements are a multiple of this (the widest unrolled step). */
#define PK_ELEM_STEP TB_PEAK_ELEM_STEP
/* Gap between a thread's arrays: 5 cache lines, so that arrays do not
 * start at the same offset within a 4 KiB page. */
#define PK_ARRAY_GAP 320
#define PK_PAGE 4096
/* Thread counts measured: every count up to this, then powers of two
 * and the maximum. */
#define PK_ALL_COUNTS_UP_TO 16
#define PK_MAX_COUNTS 64
#define PK_MAX_FIGS 16 /* ISA x dtype combinations of the FMA and dot loops */

/* ---- clock ----------------------------------------------------------- */

static double pk_now_ns(void)
{
    return (double)tb_clock_ns();
}

/* ---- the loops (backends/cpu/peak_loops.h) ----------------------------- */

_Static_assert((int)PK_NBW == (int)TB_PEAK_NBW &&
                   (int)PK_COPY == (int)TB_PEAK_COPY &&
                   (int)PK_TRIAD == (int)TB_PEAK_TRIAD &&
                   (int)PK_READ == (int)TB_PEAK_READ &&
                   (int)PK_UPDATE == (int)TB_PEAK_UPDATE,
               "peak_json.h's kernel names follow peak_loops.h's loops");
/* Arrays a kernel uses, and the arrays' worth of bytes it moves per
 * element (update reads a and b and writes a: 2 arrays, 3 moved). */
static const int pk_bw_arrays[TB_PEAK_NBW] = {2, 3, 3, 1, 2};
static const int pk_bw_moved[TB_PEAK_NBW] = {2, 3, 3, 1, 3};

static volatile double pk_fma_m = 0.9999999, pk_fma_c = 1e-7;

/* ---- core clock ------------------------------------------------------- */

/* Dependent adds per iteration of the clock loop; iterations of the
 * calibration pass (64 x 2000 = 128 K adds: ~40 us at 3 GHz); the
 * repetitions and the length of one. */
#define PK_CLOCK_CHAIN 64
#define PK_CLOCK_CAL_ITERS 2000L
#define PK_CLOCK_REPS 21
#define PK_CLOCK_REP_NS 2e6

/* One chain of iters * PK_CLOCK_CHAIN dependent adds of step to x.  On
 * x86-64 the 64 adds of an iteration are the instructions of one asm, on
 * one register, at any optimization level (a -O0 build, the ASan tests',
 * kept a C x in memory between adds: about 12 cycles each, "0.25 GHz").
 * Elsewhere the empty asm claims to change x after every C add: the adds
 * stay separate instructions, in order, on one register (optimized). */
#if defined(__x86_64__)
#define PK_CLOCK_ADD "add %1, %0\n\t"
#define PK_CLOCK_ADD8                                                     \
    PK_CLOCK_ADD PK_CLOCK_ADD PK_CLOCK_ADD PK_CLOCK_ADD PK_CLOCK_ADD      \
        PK_CLOCK_ADD PK_CLOCK_ADD PK_CLOCK_ADD
#define PK_CLOCK_BODY                                                     \
    __asm__ volatile(PK_CLOCK_ADD8 PK_CLOCK_ADD8 PK_CLOCK_ADD8 PK_CLOCK_ADD8 \
                         PK_CLOCK_ADD8 PK_CLOCK_ADD8 PK_CLOCK_ADD8        \
                             PK_CLOCK_ADD8                                \
                     : "+r"(x)                                            \
                     : "r"(step));
#else
#define PK_CLOCK_ADD                                                      \
    x += step;                                                            \
    __asm__ volatile("" : "+r"(x));
#define PK_CLOCK_ADD8                                                     \
    PK_CLOCK_ADD PK_CLOCK_ADD PK_CLOCK_ADD PK_CLOCK_ADD PK_CLOCK_ADD      \
        PK_CLOCK_ADD PK_CLOCK_ADD PK_CLOCK_ADD
#define PK_CLOCK_BODY                                                     \
    PK_CLOCK_ADD8 PK_CLOCK_ADD8 PK_CLOCK_ADD8 PK_CLOCK_ADD8 PK_CLOCK_ADD8 \
        PK_CLOCK_ADD8 PK_CLOCK_ADD8 PK_CLOCK_ADD8
#endif
_Static_assert(PK_CLOCK_CHAIN == 64, "the loop body holds 8 x 8 adds");

__attribute__((noinline)) static uint64_t pk_clock_chain(long iters,
                                                         uint64_t x,
                                                         uint64_t step)
{
    for (long it = 0; it < iters; it++) {
        PK_CLOCK_BODY
    }
    return x;
}

static volatile uint64_t pk_clock_step = 3;

static double pk_thread_cpu_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t))
        return pk_now_ns(); /* no per-thread clock: wall time */
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Adds per ns of thread CPU time over `iters` loop iterations. */
static double pk_clock_rate(long iters)
{
    double t0 = pk_thread_cpu_ns();
    volatile uint64_t sink =
        pk_clock_chain(iters, (uint64_t)iters, pk_clock_step);
    (void)sink;
    double dt = pk_thread_cpu_ns() - t0;
    return (double)iters * PK_CLOCK_CHAIN / (dt < 1 ? 1 : dt);
}

typedef struct pk_clock_job {
    double rates[PK_CLOCK_REPS]; /* adds per ns = GHz */
} pk_clock_job;

/* ---- thread teams ----------------------------------------------------- */

typedef struct pk_team pk_team;
typedef void (*pk_body_fn)(pk_team *t, int tid);

struct pk_team {
    int n;
    const int *cpus; /* pin thread i to cpus[i % ncpus]; ncpus 0: no */
    int ncpus;
    pk_body_fn body;
    void *arg;
    pthread_barrier_t bar;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool go, abort;
    _Atomic int pin_failed;
    _Atomic int failed; /* a thread could not allocate its data */
};

typedef struct pk_thread {
    pk_team *team;
    int tid;
    pthread_t th;
} pk_thread;

static void *pk_thread_main(void *p)
{
    pk_thread *me = p;
    pk_team *t = me->team;
    pthread_mutex_lock(&t->mu);
    while (!t->go)
        pthread_cond_wait(&t->cv, &t->mu);
    bool quit = t->abort;
    pthread_mutex_unlock(&t->mu);
    if (quit)
        return NULL;
    if (t->ncpus > 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(t->cpus[me->tid % t->ncpus], &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set))
            atomic_store(&t->pin_failed, 1);
    }
    t->body(t, me->tid);
    return NULL;
}

/* Run t->body on t->n new threads (the caller only waits, so its own
 * affinity is never changed) and join them.  0 or TB_ENOMEM. */
static int pk_team_run(pk_team *t)
{
    pk_thread *ths = calloc((size_t)t->n, sizeof *ths);
    if (!ths)
        return TB_ENOMEM;
    if (pthread_barrier_init(&t->bar, NULL, (unsigned)t->n)) {
        free(ths);
        return TB_ENOMEM;
    }
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    t->go = t->abort = false;
    atomic_init(&t->pin_failed, 0);
    atomic_init(&t->failed, 0);
    int started = 0;
    for (; started < t->n; started++) {
        ths[started].team = t;
        ths[started].tid = started;
        if (pthread_create(&ths[started].th, NULL, pk_thread_main,
                           &ths[started]))
            break;
    }
    pthread_mutex_lock(&t->mu);
    t->go = true;
    t->abort = started < t->n; /* nobody enters the barrier then */
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    for (int i = 0; i < started; i++)
        pthread_join(ths[i].th, NULL);
    bool aborted = t->abort;
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    pthread_barrier_destroy(&t->bar);
    free(ths);
    return aborted ? TB_ENOMEM : 0;
}

/* The repetition loop shared by both measurements.  Every thread calls
 * it with the same reps; work(arg, tid, passes) runs one repetition's
 * work.  Thread 0 times each repetition and stores work_per_pass *
 * passes / elapsed_ns into rates[r] (rates: reps entries).  The first
 * two repetitions run one pass each and are not stored; the second sets
 * the number of passes so a repetition lasts at least rep_time_ns.
 * *passes is shared: written by thread 0 between barriers only. */
static void pk_repeat(pk_team *t, int tid, int reps, double rep_time_ns,
                      long *passes,
                      void (*work)(void *arg, int tid, long passes),
                      void *arg, double work_per_pass, double *rates)
{
    for (int r = -2; r < reps; r++) {
        pthread_barrier_wait(&t->bar);
        double t0 = tid == 0 ? pk_now_ns() : 0;
        long np = r < 0 ? 1 : *passes;
        work(arg, tid, np);
        pthread_barrier_wait(&t->bar);
        if (tid != 0)
            continue;
        double dt = pk_now_ns() - t0;
        if (dt < 1)
            dt = 1;
        if (r == -1) {
            double want = ceil(rep_time_ns / dt);
            *passes = want < 1 ? 1 : want > 1e9 ? 1000000000L : (long)want;
        } else if (r >= 0) {
            rates[r] = work_per_pass * (double)np / dt;
        }
    }
}

/* ---- bandwidth measurement ------------------------------------------- */

typedef struct pk_bw_job {
    const tb_peak_bw_fn *fns; /* the kernels of the chosen level */
    /* the narrower level's (NULL: none), timed after each of fns: a
     * figure is the faster loop's (pk_measure_bw) */
    const tb_peak_bw_fn *fns2;
    const tb_peak_bw_fn *cur; /* what work() runs now */
    double *rates2[TB_PEAK_NBW];
    size_t ws_per_thread; /* bytes of arrays per thread */
    int reps;
    double rep_time_ns;
    long passes;
    /* per kernel: elements per array, and the rates (thread 0) */
    size_t n[TB_PEAK_NBW];
    double *rates[TB_PEAK_NBW];
    /* what the current kernel's work() uses, per thread */
    int kernel;
    char **mem; /* [team size] */
} pk_bw_job;

/* Elements per array of kernel k so that its arrays fill ws bytes. */
static size_t pk_bw_elems(int k, size_t ws)
{
    size_t n = ws / ((size_t)pk_bw_arrays[k] * sizeof(double));
    n -= n % PK_ELEM_STEP;
    return n < PK_ELEM_STEP ? PK_ELEM_STEP : n;
}

/* Array i of kernel k inside one thread's block. */
static double *pk_bw_array(char *mem, size_t n, int i)
{
    return (double *)(mem + (size_t)i * (n * sizeof(double) + PK_ARRAY_GAP));
}

static size_t pk_bw_block_bytes(size_t ws)
{
    size_t need = ws + 4 * (PK_ARRAY_GAP + PK_ELEM_STEP * sizeof(double));
    return (need + PK_PAGE - 1) / PK_PAGE * PK_PAGE;
}

static void pk_bw_work(void *arg, int tid, long passes)
{
    pk_bw_job *j = arg;
    int k = j->kernel;
    size_t n = j->n[k];
    char *mem = j->mem[tid];
    double *a = pk_bw_array(mem, n, 0);
    double *b = pk_bw_array(mem, n, pk_bw_arrays[k] > 1 ? 1 : 0);
    double *c = pk_bw_array(mem, n, pk_bw_arrays[k] > 2 ? 2 : 0);
    volatile double sink = 0;
    for (long p = 0; p < passes; p++)
        sink = sink + j->cur[k](a, b, c, n, 3.0);
}

static void pk_bw_body(pk_team *t, int tid)
{
    pk_bw_job *j = t->arg;
    size_t bytes = pk_bw_block_bytes(j->ws_per_thread);
    /* as the tensors: a large set on huge pages where the kernel's THP
     * mode allows (the bounds must be what the cases' own buffers can
     * reach) */
    char *mem = tb_alloc_pages(PK_PAGE, &bytes);
    if (mem) {
        /* First touch by the thread that will use the data. */
        double *d = (double *)mem;
        for (size_t i = 0; i < bytes / sizeof(double); i++)
            d[i] = 1.0 + (double)(i & 7) * 0.125;
    } else {
        atomic_store(&t->failed, 1);
    }
    j->mem[tid] = mem;
    pthread_barrier_wait(&t->bar);
    if (!atomic_load(&t->failed)) {
        for (int k = 0; k < TB_PEAK_NBW; k++) {
            double per_pass = (double)t->n * (double)pk_bw_moved[k] *
                              (double)j->n[k] * sizeof(double);
            for (int w = 0; w < (j->fns2 && j->fns2[k] ? 2 : 1); w++) {
                if (tid == 0) {
                    j->kernel = k;
                    j->cur = w ? j->fns2 : j->fns;
                }
                pthread_barrier_wait(&t->bar); /* kernel published */
                pk_repeat(t, tid, j->reps, j->rep_time_ns, &j->passes,
                          pk_bw_work, j, per_pass,
                          w ? j->rates2[k] : j->rates[k]);
            }
        }
    }
    free(mem);
}

/* ---- FMA measurement -------------------------------------------------- */

typedef struct pk_fma_job {
    int nfig;
    tb_peak_fma_fn fns[PK_MAX_FIGS];
    double flops_per_iter[PK_MAX_FIGS];
    double *rates[PK_MAX_FIGS];
    int fig; /* the current figure, set by thread 0 between barriers */
    int reps;
    double rep_time_ns;
    long passes;
} pk_fma_job;

static void pk_fma_work(void *arg, int tid, long passes)
{
    (void)tid;
    pk_fma_job *j = arg;
    volatile double sink =
        j->fns[j->fig](passes * PK_FMA_CAL_ITERS, pk_fma_m, pk_fma_c);
    (void)sink;
}

static void pk_fma_body(pk_team *t, int tid)
{
    pk_fma_job *j = t->arg;
    for (int f = 0; f < j->nfig; f++) {
        if (tid == 0)
            j->fig = f;
        pthread_barrier_wait(&t->bar);
        double per_pass =
            (double)t->n * j->flops_per_iter[f] * (double)PK_FMA_CAL_ITERS;
        pk_repeat(t, tid, j->reps, j->rep_time_ns, &j->passes, pk_fma_work,
                  j, per_pass, j->rates[f]);
    }
}

/* ---- figures and JSON ------------------------------------------------- */

/* Add best/median/worst/spread of rates (sorted in place) as
 * <prefix>_best etc. */
static void pk_add_figure(cJSON *o, const char *unit, double *rates,
                          int reps)
{
    char key[32];
    qsort(rates, (size_t)reps, sizeof *rates, tb_cmp_double);
    double best = rates[reps - 1], worst = rates[0];
    double median = reps % 2 ? rates[reps / 2]
                             : 0.5 * (rates[reps / 2 - 1] + rates[reps / 2]);
    snprintf(key, sizeof key, "best_%s", unit);
    cJSON_AddNumberToObject(o, key, best);
    snprintf(key, sizeof key, "median_%s", unit);
    cJSON_AddNumberToObject(o, key, median);
    snprintf(key, sizeof key, "worst_%s", unit);
    cJSON_AddNumberToObject(o, key, worst);
    cJSON_AddNumberToObject(o, "spread", best > 0 ? (best - worst) / best
                                                  : 0);
}

/* CPUs this process may run on, in order; count (>= 1) or 0 if unknown. */
static int pk_allowed_cpus(int *cpus, int max)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n;
}

/* Thread counts to measure for at most nmax threads. */
static int pk_thread_counts(int nmax, int *out)
{
    int n = 0;
    if (nmax <= PK_ALL_COUNTS_UP_TO) {
        for (int i = 1; i <= nmax; i++)
            out[n++] = i;
        return n;
    }
    for (int i = 1; i < nmax && n < PK_MAX_COUNTS - 1; i *= 2)
        out[n++] = i;
    out[n++] = nmax;
    return n;
}

/* Largest size_bytes of a cache of this level (data or unified) in the
 * environment's cpu.caches; 0 if none. */
static size_t pk_cache_size(const cJSON *env, int level)
{
    const cJSON *caches = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(env, "cpu"), "caches");
    const cJSON *c;
    double best = 0;
    cJSON_ArrayForEach(c, caches)
    {
        const cJSON *lv = cJSON_GetObjectItemCaseSensitive(c, "level");
        const cJSON *ty = cJSON_GetObjectItemCaseSensitive(c, "type");
        const cJSON *sz = cJSON_GetObjectItemCaseSensitive(c, "size_bytes");
        if (!cJSON_IsNumber(lv) || lv->valuedouble != level ||
            !cJSON_IsNumber(sz))
            continue;
        if (cJSON_IsString(ty) && !strcmp(ty->valuestring, "Instruction"))
            continue;
        if (sz->valuedouble > best)
            best = sz->valuedouble;
    }
    return (size_t)best;
}

/* Number of CPUs in a kernel cpu list ("0-7,64-71"); 0 if malformed. */
static long pk_cpulist_count(const char *s)
{
    long n = 0;
    while (s && *s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0)
            return 0;
        if (*end == '-') {
            const char *q = end + 1;
            b = strtol(q, &end, 10);
            if (end == q || b < a)
                return 0;
        }
        n += b - a + 1;
        if (*end == ',')
            end++;
        else if (*end)
            return 0;
        s = end;
    }
    return n;
}

/* How many separate caches of this level the machine has: logical CPUs
 * divided by the CPUs that share cpu0's (e.g. one L3 per CCX or per
 * socket); 1 if unknown. */
static long pk_cache_instances(const cJSON *env, int level)
{
    const cJSON *caches = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(env, "cpu"), "caches");
    const cJSON *c;
    cJSON_ArrayForEach(c, caches)
    {
        const cJSON *lv = cJSON_GetObjectItemCaseSensitive(c, "level");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(c, "shared_cpus");
        if (!cJSON_IsNumber(lv) || lv->valuedouble != level ||
            !cJSON_IsString(sh))
            continue;
        long per = pk_cpulist_count(sh->valuestring);
        long all = tb_env_ncpus();
        if (per > 0 && all > per)
            return (all + per - 1) / per;
    }
    return 1;
}

static void pk_utc_now(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    if (now == (time_t)-1 || !gmtime_r(&now, &tm) ||
        !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, len, "unknown");
}

static cJSON *pk_key_from_env(const cJSON *env)
{
    cJSON *key = cJSON_CreateObject();
    if (!key)
        return NULL;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(env, "cpu"), "model");
    cJSON_AddStringToObject(key, "cpu_model", cJSON_IsString(model)
                                                  ? model->valuestring
                                                  : "unknown");
    cJSON_AddNumberToObject(key, "logical_cpus", tb_env_ncpus());
    cJSON_AddStringToObject(key, "tbench_version", TB_VERSION);
    cJSON_AddNumberToObject(key, "method", TB_PEAK_METHOD);
    return key;
}

cJSON *tb_peaks_key(void)
{
    cJSON *env = tb_env_capture();
    cJSON *key = pk_key_from_env(env);
    cJSON_Delete(env);
    return key;
}

bool tb_peaks_key_match(const cJSON *peaks, const cJSON *key)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(peaks, "key");
    static const char *const fields[] = {"cpu_model", "logical_cpus",
                                         "tbench_version"};
    if (!cJSON_IsObject(k) || !cJSON_IsObject(key))
        return false;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(k, fields[i]);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(key, fields[i]);
        if (!a || !b || !cJSON_Compare(a, b, true))
            return false;
    }
    /* method: absent in entries cached before it existed, which is 1 */
    const cJSON *ma = cJSON_GetObjectItemCaseSensitive(k, "method");
    const cJSON *mb = cJSON_GetObjectItemCaseSensitive(key, "method");
    double va = cJSON_IsNumber(ma) ? ma->valuedouble : ma ? -1 : 1;
    double vb = cJSON_IsNumber(mb) ? mb->valuedouble : mb ? -1 : 1;
    return va == vb && va >= 1;
}

/* One level of the "levels" array. */
static void pk_add_level(cJSON *levels, const char *name, size_t capacity,
                         bool per_thread, size_t ws)
{
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, "name", name);
    if (capacity)
        cJSON_AddNumberToObject(l, "capacity_bytes", (double)capacity);
    else
        cJSON_AddNullToObject(l, "capacity_bytes");
    cJSON_AddBoolToObject(l, "per_thread", per_thread);
    cJSON_AddNumberToObject(l, "working_set_bytes", (double)ws);
    cJSON_AddItemToArray(levels, l);
}

/* Measure the FMA figures for `threads` threads into the flops array. */
static int pk_measure_fma(cJSON *flops, int threads, const int *cpus,
                          int ncpus, int reps, double rep_time_ns,
                          bool *pinned, FILE *progress)
{
    pk_fma_job j = {.reps = reps, .rep_time_ns = rep_time_ns};
    const char *isa_of[PK_MAX_FIGS];
    const char *dt_of[PK_MAX_FIGS];
    double *store = calloc((size_t)PK_MAX_FIGS * (size_t)reps,
                           sizeof *store);
    if (!store)
        return TB_ENOMEM;
    for (int lv = 0; lv < TB_PEAK_LEVELS; lv++) {
        const tb_peak_loops *L = tb_cpu_peak_loops(lv);
        /* the FMA loops of each dtype, then the level's dot loops */
        for (int f = 0; L && f < TB_DTYPE_COUNT + TB_PEAK_NDOT; f++) {
            const tb_peak_dot *d =
                f < TB_DTYPE_COUNT ? NULL : &L->dot[f - TB_DTYPE_COUNT];
            tb_peak_fma_fn fn = d ? d->fn : L->fma[f];
            if (!fn || (d && !d->dtype) || j.nfig >= PK_MAX_FIGS)
                continue;
            j.fns[j.nfig] = fn;
            j.flops_per_iter[j.nfig] =
                d ? d->flops_per_iter : L->fma_flops_per_iter[f];
            j.rates[j.nfig] = store + (size_t)j.nfig * (size_t)reps;
            isa_of[j.nfig] = L->isa;
            dt_of[j.nfig] = d ? d->dtype : tb_dtype_name((tb_dtype)f);
            j.nfig++;
        }
    }
    pk_team t = {.n = threads, .cpus = cpus, .ncpus = ncpus,
                 .body = pk_fma_body, .arg = &j};
    int rc = pk_team_run(&t);
    if (atomic_load(&t.pin_failed))
        *pinned = false;
    if (!rc) {
        if (progress)
            fprintf(progress, "peak: FMA, %d thread%s:", threads,
                    threads > 1 ? "s" : "");
        for (int f = 0; f < j.nfig; f++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "isa", isa_of[f]);
            cJSON_AddStringToObject(o, "dtype", dt_of[f]);
            cJSON_AddNumberToObject(o, "threads", threads);
            cJSON_AddNumberToObject(o, "accumulators", TB_PEAK_NACC);
            pk_add_figure(o, "gflop_s", j.rates[f], reps);
            if (progress)
                fprintf(progress, " %s/%s %.1f", isa_of[f], dt_of[f],
                        j.rates[f][reps - 1]);
            cJSON_AddItemToArray(flops, o);
        }
        if (progress)
            fprintf(progress, " GFLOP/s\n");
    }
    free(store);
    return rc;
}

/* One untimed warm-up pass, one calibration pass (the best of 3, as
 * an interrupted one runs slow), then PK_CLOCK_REPS repetitions of
 * ~PK_CLOCK_REP_NS each. */
/* Loop iterations of the clock chain that last about ns: from the best
 * of 3 calibration passes (an interrupted one runs slow). */
static long pk_clock_iters(double ns)
{
    double best = 0;
    for (int i = 0; i < 3; i++) {
        double r = pk_clock_rate(PK_CLOCK_CAL_ITERS);
        best = r > best ? r : best;
    }
    double iters = ns * best / PK_CLOCK_CHAIN;
    return iters < 1 ? 1 : iters > 1e9 ? 1000000000L : (long)iters;
}

static void pk_clock_body(pk_team *t, int tid)
{
    (void)tid;
    pk_clock_job *j = t->arg;
    pk_clock_rate(PK_CLOCK_CAL_ITERS);
    long n = pk_clock_iters(PK_CLOCK_REP_NS);
    for (int r = 0; r < PK_CLOCK_REPS; r++)
        j->rates[r] = pk_clock_rate(n);
}

double tb_peak_core_ghz(double ns)
{
    return pk_clock_rate(pk_clock_iters(ns));
}

/* Measure the core clock (1 thread) into p's "clock" object. */
static int pk_measure_clock(cJSON *p, const int *cpus, int ncpus,
                            bool *pinned, FILE *progress)
{
    pk_clock_job j = {{0}};
    pk_team t = {.n = 1, .cpus = cpus, .ncpus = ncpus,
                 .body = pk_clock_body, .arg = &j};
    int rc = pk_team_run(&t);
    if (atomic_load(&t.pin_failed))
        *pinned = false;
    cJSON *o = rc ? NULL : cJSON_AddObjectToObject(p, "clock");
    if (!rc && !o)
        rc = TB_ENOMEM;
    if (!rc) {
        cJSON_AddStringToObject(o, "method", "dependent-add chain");
        cJSON_AddNumberToObject(o, "threads", 1);
        cJSON_AddNumberToObject(o, "chain_adds", PK_CLOCK_CHAIN);
        cJSON_AddNumberToObject(o, "repetitions", PK_CLOCK_REPS);
        pk_add_figure(o, "ghz", j.rates, PK_CLOCK_REPS);
        if (progress)
            fprintf(progress, "peak: core clock, 1 thread: %.2f GHz\n",
                    pk_num(o, "median_ghz"));
    }
    return rc;
}

/* The best of n rates. */
static double pk_best(const double *r, int n)
{
    double b = 0;
    for (int i = 0; i < n; i++)
        b = r[i] > b ? r[i] : b;
    return b;
}

/* Measure the bandwidth kernels at one level for `threads` threads
 * (ws_per_thread bytes each) into the bandwidth array: each kernel with
 * loops' loop and then with loops2's (the narrower level's; NULL:
 * none), the figure the faster one's repetitions (on Zen 4, whose
 * 512-bit loads and stores are two 256-bit halves, AVX2's streams beat
 * AVX-512's out of the L2: the cpu backend's in-place loops are 256-bit
 * there too, kernels_avx512.c). */
static int pk_measure_bw(cJSON *bw, const char *level, size_t ws_per_thread,
                         int threads, const int *cpus, int ncpus,
                         const tb_peak_loops *loops,
                         const tb_peak_loops *loops2,
                         int reps, double rep_time_ns, bool *pinned,
                         FILE *progress)
{
    pk_bw_job j = {.fns = loops->bw,
                   .fns2 = loops2 ? loops2->bw : NULL,
                   .ws_per_thread = ws_per_thread,
                   .reps = reps,
                   .rep_time_ns = rep_time_ns};
    double *store =
        calloc((size_t)2 * TB_PEAK_NBW * (size_t)reps, sizeof *store);
    j.mem = calloc((size_t)threads, sizeof *j.mem);
    if (!store || !j.mem) {
        free(store);
        free(j.mem);
        return TB_ENOMEM;
    }
    for (int k = 0; k < TB_PEAK_NBW; k++) {
        j.n[k] = pk_bw_elems(k, ws_per_thread);
        j.rates[k] = store + (size_t)k * (size_t)reps;
        j.rates2[k] = store + (size_t)(TB_PEAK_NBW + k) * (size_t)reps;
    }
    pk_team t = {.n = threads, .cpus = cpus, .ncpus = ncpus,
                 .body = pk_bw_body, .arg = &j};
    int rc = pk_team_run(&t);
    if (!rc && atomic_load(&t.failed))
        rc = TB_ENOMEM;
    if (atomic_load(&t.pin_failed))
        *pinned = false;
    bool narrow[TB_PEAK_NBW] = {false};
    for (int k = 0; !rc && j.fns2 && k < TB_PEAK_NBW; k++)
        if (j.fns2[k] &&
            pk_best(j.rates2[k], reps) > pk_best(j.rates[k], reps)) {
            memcpy(j.rates[k], j.rates2[k], (size_t)reps * sizeof(double));
            narrow[k] = true;
        }
    if (!rc) {
        if (progress)
            fprintf(progress, "peak: %s (%.1f MiB), %d thread%s:", level,
                    (double)threads * (double)ws_per_thread / 1048576.0,
                    threads, threads > 1 ? "s" : "");
        for (int k = 0; k < TB_PEAK_NBW; k++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "kernel", pk_bw_names[k]);
            cJSON_AddStringToObject(o, "level", level);
            cJSON_AddStringToObject(o, "isa",
                                    narrow[k] ? loops2->isa : loops->isa);
            cJSON_AddNumberToObject(o, "threads", threads);
            cJSON_AddNumberToObject(o, "working_set_bytes",
                                    (double)threads * pk_bw_arrays[k] *
                                        (double)j.n[k] * sizeof(double));
            pk_add_figure(o, "gb_s", j.rates[k], reps);
            if (progress)
                fprintf(progress, " %s %.1f", pk_bw_names[k],
                        j.rates[k][reps - 1]);
            cJSON_AddItemToArray(bw, o);
        }
        if (progress)
            fprintf(progress, " GB/s\n");
    }
    free(store);
    free(j.mem);
    return rc;
}

/* What a measurement measures: repetitions, working sets, the CPUs and
 * thread counts, and the notes that go with the figures. */
typedef struct pk_plan {
    int reps;
    double rep_time_s;
    size_t l1, l2, l3, dram; /* cache sizes; the DRAM working set */
    int cpus[CPU_SETSIZE];
    int ncpus; /* CPUs this process may use (0: unknown) */
    int counts[PK_MAX_COUNTS];
    int ncounts;
    double load; /* the 1-minute load average (-1: unknown) */
    cJSON *notes;
} pk_plan;

/* Fill pl from the options and the environment capture env: sizes
 * (overrides first, then sysfs), the DRAM set (a multiple of every L3
 * together, at most a quarter of the available memory), the thread
 * counts, and a note for each guess or limit. */
static void pk_plan_make(const tb_peak_opts *o, const cJSON *env,
                         pk_plan *pl)
{
    pl->reps = o->reps ? o->reps : o->quick ? TB_PEAK_QUICK_REPS
                                            : TB_PEAK_REPS;
    pl->rep_time_s = o->rep_time_s > 0 ? o->rep_time_s
                     : o->quick        ? TB_PEAK_QUICK_REP_TIME_S
                                       : TB_PEAK_REP_TIME_S;
    pl->l1 = o->l1_bytes ? o->l1_bytes : pk_cache_size(env, 1);
    pl->l2 = o->l2_bytes ? o->l2_bytes : pk_cache_size(env, 2);
    pl->l3 = o->l3_bytes ? o->l3_bytes : pk_cache_size(env, 3);
    pl->dram = o->dram_bytes;
    pl->notes = cJSON_CreateArray();
    char note[256];
    /* Several L3s (one per CCX or socket) hold their sum together: the
     * DRAM set must exceed all of them. */
    size_t l3_all =
        pl->l3 * (size_t)(o->l3_bytes ? 1 : pk_cache_instances(env, 3));
    if (!pl->dram)
        pl->dram = pl->l3 ? l3_all * (o->quick ? TB_PEAK_DRAM_L3_MULT / 2
                                               : TB_PEAK_DRAM_L3_MULT)
                          : TB_PEAK_DRAM_FALLBACK_BYTES;
    if (!pl->l3 && !o->dram_bytes) {
        snprintf(note, sizeof note,
                 "L3 size unknown: DRAM working set fixed at %zu MiB",
                 pl->dram >> 20);
        cJSON_AddItemToArray(pl->notes, cJSON_CreateString(note));
    }
    unsigned long long avail = tb_env_mem_available();
    if (avail && pl->dram > avail / 4) {
        pl->dram = (size_t)(avail / 4);
        snprintf(note, sizeof note,
                 "DRAM working set limited to a quarter of the available "
                 "memory (%zu MiB)",
                 pl->dram >> 20);
        cJSON_AddItemToArray(pl->notes, cJSON_CreateString(note));
    }
    pl->ncpus = pk_allowed_cpus(pl->cpus, CPU_SETSIZE);
    int nmax = pl->ncpus > 0 ? pl->ncpus : tb_env_ncpus();
    /* Peaks measured while other processes run are low, and every
     * roofline fraction computed from them too high: say so in the
     * entry, which run repeats when it uses the cached figures. */
    pl->load = tb_env_load1();
    if (isnan(pl->load))
        pl->load = -1; /* unreadable */
    if (pl->load > 0.5 * (nmax > 0 ? nmax : 1)) {
        snprintf(note, sizeof note,
                 "measured while the 1-minute load average was %.2f on %d "
                 "logical CPUs: other processes competed, so these figures "
                 "may be low; measure again on a quiet machine",
                 pl->load, nmax);
        cJSON_AddItemToArray(pl->notes, cJSON_CreateString(note));
    }
    if (o->max_threads > 0 && nmax > o->max_threads)
        nmax = o->max_threads;
    pl->ncounts = pk_thread_counts(nmax, pl->counts);
}

/* The peaks object before any figure: schema, key, date, settings and
 * the working-set levels (NULL on allocation failure). */
static cJSON *pk_doc_new(const tb_peak_opts *o, const pk_plan *pl,
                         const cJSON *env, const tb_peak_loops *bw_loops)
{
    cJSON *p = cJSON_CreateObject();
    char date[32];
    pk_utc_now(date, sizeof date);
    cJSON_AddStringToObject(p, "schema", TB_PEAKS_SCHEMA);
    cJSON *key = pk_key_from_env(env);
    if (key && !cJSON_AddItemToObject(p, "key", key)) {
        cJSON_Delete(key);
        key = NULL;
    }
    cJSON_AddStringToObject(p, "date", date);
    cJSON_AddBoolToObject(p, "quick", o->quick);
    cJSON_AddNumberToObject(p, "repetitions", pl->reps);
    cJSON_AddNumberToObject(p, "min_rep_time_s", pl->rep_time_s);
    cJSON_AddItemToObject(p, "threads",
                          cJSON_CreateIntArray(pl->counts, pl->ncounts));
    cJSON *levels = cJSON_AddArrayToObject(p, "levels");
    if (pl->l1)
        pk_add_level(levels, "L1", pl->l1, true, pl->l1 / 2);
    if (pl->l2)
        pk_add_level(levels, "L2", pl->l2, true, pl->l2 / 2);
    if (pl->l3) {
        pk_add_level(levels, "L3", pl->l3, false, pl->l3 / 2);
        /* Just past the L2 (TB_PEAK_L3_L2_MULT x its size per thread),
         * where the L3 gives its best bandwidth: on a large L3 shared
         * with other cores or tenants, half of it runs far slower than
         * the sets a case of a few L2 sizes moves, and a bound must be
         * the fastest the level allows. */
        cJSON *l3 = cJSON_GetArrayItem(levels, cJSON_GetArraySize(levels) - 1);
        if (pl->l2)
            cJSON_AddNumberToObject(l3, "per_thread_max_bytes",
                                    (double)(pl->l2 * TB_PEAK_L3_L2_MULT));
        /* Larger sets too (over all threads), shown: how far the L3's
         * bandwidth falls with the set (cached stores); a case is held to
         * the level's fastest figure (roofline.c says why). */
        cJSON *more = cJSON_AddArrayToObject(l3, "more_working_sets_bytes");
        for (int q = 1; q <= TB_PEAK_L3_QUARTERS; q++)
            cJSON_AddItemToArray(
                more, cJSON_CreateNumber((double)(pl->l3 / 4 * (size_t)q)));
    }
    pk_add_level(levels, "DRAM", 0, false, pl->dram);
    cJSON_AddStringToObject(p, "bandwidth_isa", bw_loops->isa);
    cJSON *bw = cJSON_AddArrayToObject(p, "bandwidth");
    cJSON *flops = cJSON_AddArrayToObject(p, "flops");
    if (!key || !levels || !bw || !flops) {
        cJSON_Delete(p);
        return NULL;
    }
    return p;
}

/* Every figure of p: the core clock, the FMA peaks at every thread
 * count, the bandwidth kernels at every level and thread count.  0, or
 * a TB_E* code with the reason in msg ("" when it is the threads). */
static int pk_measure_all(cJSON *p, const pk_plan *pl,
                          const tb_peak_loops *bw_loops,
                          const tb_peak_loops *bw_loops2, bool *pinned,
                          FILE *progress, char *msg, size_t msglen)
{
    const double rep_ns = pl->rep_time_s * 1e9;
    cJSON *flops = cJSON_GetObjectItemCaseSensitive(p, "flops");
    cJSON *bw = cJSON_GetObjectItemCaseSensitive(p, "bandwidth");
    int rc = pk_measure_clock(p, pl->cpus, *pinned ? pl->ncpus : 0, pinned,
                              progress);
    for (int i = 0; i < pl->ncounts && !rc; i++)
        rc = pk_measure_fma(flops, pl->counts[i], pl->cpus,
                            *pinned ? pl->ncpus : 0, pl->reps, rep_ns,
                            pinned, progress);
    const cJSON *lv;
    cJSON_ArrayForEach(lv, cJSON_GetObjectItemCaseSensitive(p, "levels"))
    {
        if (rc)
            break;
        const char *name =
            cJSON_GetObjectItemCaseSensitive(lv, "name")->valuestring;
        bool per_thread = cJSON_IsTrue(
            cJSON_GetObjectItemCaseSensitive(lv, "per_thread"));
        double ws = cJSON_GetObjectItemCaseSensitive(lv, "working_set_bytes")
                        ->valuedouble;
        const cJSON *pmax =
            cJSON_GetObjectItemCaseSensitive(lv, "per_thread_max_bytes");
        const cJSON *more =
            cJSON_GetObjectItemCaseSensitive(lv, "more_working_sets_bytes");
        for (int i = 0; i < pl->ncounts && !rc; i++) {
            const int T = pl->counts[i];
            size_t per = per_thread ? (size_t)ws : (size_t)(ws / T);
            if (cJSON_IsNumber(pmax) && per > (size_t)pmax->valuedouble)
                per = (size_t)pmax->valuedouble;
            /* the level's set, then each larger one of `more` */
            const cJSON *m = more ? more->child : NULL;
            for (size_t last = 0; !rc && per > last;) {
                last = per;
                rc = pk_measure_bw(bw, name, per, T, pl->cpus,
                                   *pinned ? pl->ncpus : 0, bw_loops,
                                   bw_loops2, pl->reps, rep_ns, pinned,
                                   progress);
                if (rc == TB_ENOMEM)
                    snprintf(msg, msglen,
                             "peak: cannot allocate the %s working set "
                             "(%.0f MiB) on %d threads",
                             name, (double)per * T / 1048576.0, T);
                for (; m && per <= last; m = m->next)
                    per = (size_t)(m->valuedouble / T);
            }
        }
    }
    return rc;
}

/* The GPU's peaks, by the first backend with device memory (a module's
 * placeholder included: the probe loads it). */
static cJSON *pk_gpu(int reps, double rep_time_s, FILE *progress)
{
    const tb_backend *gpu_be = NULL;
    int n_be = 0;
    const tb_backend *const *bes = tb_backend_list(&n_be);
    for (int i = 0; i < n_be && !gpu_be; i++)
        if (bes[i]->device_memory)
            gpu_be = bes[i];
    if (progress)
        fprintf(progress, "peak: GPU (%s)\n",
                gpu_be ? gpu_be->name : "no GPU backend");
    return tb_gpu_peaks_measure(gpu_be, reps, rep_time_s);
}

int tb_peaks_measure(const tb_peak_opts *o, cJSON **out, char *err,
                     size_t errlen)
{
    static const tb_peak_opts defaults = {0};
    if (!o)
        o = &defaults;
    if (out)
        *out = NULL;
    if (!out || o->reps < 0 || o->rep_time_s < 0 || o->max_threads < 0) {
        snprintf(err, errlen, "peak: invalid options");
        return TB_EINVAL;
    }
    const double t_start = pk_now_ns();
    pk_plan pl;
    cJSON *env = tb_env_capture();
    pk_plan_make(o, env, &pl);
    /* the widest level the CPU runs that has bandwidth loops, and the
     * SIMD level below it that has them too (timed beside it) */
    const tb_peak_loops *bw_loops = tb_cpu_peak_loops(0), *bw_loops2 = NULL;
    for (int lv = 1, at = 0; lv < TB_PEAK_LEVELS; lv++)
        if (tb_cpu_peak_loops(lv) && tb_cpu_peak_loops(lv)->bw[0]) {
            bw_loops2 = at > 0 ? bw_loops : NULL;
            bw_loops = tb_cpu_peak_loops(lv);
            at = lv;
        }
    cJSON *p = pk_doc_new(o, &pl, env, bw_loops);
    cJSON_Delete(env);
    if (!p || !pl.notes) {
        cJSON_Delete(p);
        cJSON_Delete(pl.notes);
        snprintf(err, errlen, "peak: out of memory");
        return TB_ENOMEM;
    }
    bool pinned = pl.ncpus > 0;
    char msg[256] = "";
    int rc = pk_measure_all(p, &pl, bw_loops, bw_loops2, &pinned,
                            o->progress, msg, sizeof msg);
    if (rc) {
        snprintf(err, errlen, "%s",
                 msg[0] ? msg : "peak: cannot start the measuring threads");
        cJSON_Delete(p);
        cJSON_Delete(pl.notes);
        return rc;
    }
    cJSON_AddBoolToObject(p, "pinned", pinned);
    if (pl.load >= 0)
        cJSON_AddNumberToObject(p, "load_avg_1m", pl.load);
    else
        cJSON_AddNullToObject(p, "load_avg_1m");
    cJSON_AddItemToObject(p, "notes", pl.notes);
    cJSON_AddItemToObject(p, "gpu",
                          pk_gpu(pl.reps, pl.rep_time_s, o->progress));
    cJSON_AddNumberToObject(p, "duration_s",
                            (pk_now_ns() - t_start) * 1e-9);
    *out = p;
    return 0;
}
