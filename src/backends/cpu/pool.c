/* The cpu backend's thread pool (pool.h): persistent workers parked
 * between jobs; the calling thread runs part 0 of every job itself and
 * claims the parts no worker has started.  See pool.h for the contract. */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "../../base/error.h"
#include "cpu_internal.h"

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


struct tb_cpu_pool;

typedef struct cpu_worker {
    struct tb_cpu_pool *pool;
    int id; /* 1..nworkers */
    pthread_t tid;
} cpu_worker;

struct tb_cpu_pool {
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
    tb_cpu_task_fn fn;
    void *arg;
    int nparts;
    unsigned epoch; /* cpu_fork_epoch when the workers were started */
};

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

static bool cpu_pool_forked(const tb_cpu_pool *pool)
{
    return atomic_load_explicit(&cpu_fork_epoch, memory_order_relaxed) !=
           pool->epoch;
}

typedef struct {
    tb_cpu_pool *pool;
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
    return atomic_load_explicit(&((tb_cpu_pool *)p)->pending,
                                memory_order_acquire) == 0;
}

/* Wait until pool->gen differs from seen; returns the new generation. */
static uint64_t cpu_pool_await(tb_cpu_pool *pool, uint64_t seen)
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
static int cpu_pool_claim(tb_cpu_pool *pool, uint32_t job)
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
static void cpu_pool_work(tb_cpu_pool *pool, uint32_t job)
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
    tb_cpu_pool *pool = w->pool;
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

/* (pool.h; nworkers counts the started workers) */
void tb_cpu_pool_destroy(tb_cpu_pool *pool)
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

/* (pool.h) */
int tb_cpu_pool_create(int nworkers, tb_cpu_pool **out)
{
    *out = NULL;
    pthread_once(&cpu_atfork_once, cpu_atfork_register);
    tb_cpu_pool *pool = calloc(1, sizeof *pool);
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
            tb_cpu_pool_destroy(pool); /* joins the i already started */
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
int tb_cpu_pool_run(tb_cpu_pool *pool, int nparts, tb_cpu_task_fn fn,
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

void tb_cpu_span(int64_t n, int64_t align, int part, int nparts,
                 int64_t *b, int64_t *e)
{
    cpu_span_aligned(n, align > 0 ? align : 1, part, nparts, b, e);
}
