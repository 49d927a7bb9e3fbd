/* Runner: measures one case at a time (see ARCHITECTURE.md, Measurement
 * rules).  For each case: create (or reuse) the backend instance, make
 * deterministic inputs, run once and check against the reference, warm
 * up, choose the batch size, sample until the CI target or a limit. */
#ifndef TB_HARNESS_RUNNER_H
#define TB_HARNESS_RUNNER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "gpu_clock.h"
#include "plan.h"
#include "probe.h"
#include "../backends/workload.h"
#include "../base/stats.h"

typedef enum {
    TB_STATUS_OK,
    TB_STATUS_UNSUPPORTED,
    TB_STATUS_UNAVAILABLE,
    TB_STATUS_FAILED_CHECK,
    TB_STATUS_ERROR,
    TB_STATUS_SKIPPED,
    TB_STATUS_CRASHED, /* its worker process died (worker.h) */
    TB_STATUS_TIMEOUT, /* its worker passed measure.timeout_s, killed */
} tb_status;

const char *tb_status_name(tb_status s);

/* What the runner is doing for a case, published through
 * tb_runner_watch so that a parent process can say in which phase a
 * worker died. */
typedef enum {
    TB_PHASE_IDLE,     /* between cases */
    TB_PHASE_SETUP,    /* backend instance, kernel lookup, buffers */
    TB_PHASE_CHECK,    /* the checked call and the reference */
    TB_PHASE_WARMUP,   /* warm-up and batch sizing */
    TB_PHASE_SAMPLING, /* timed samples */
    TB_PHASE_COUNT,    /* the device counting pass (never timed) */
    TB_PHASE_BREAKDOWN, /* a workload's per-op pass (after sampling) */
} tb_phase;

const char *tb_phase_name(tb_phase p);

/* The events of measure.cache (instr.h), per iteration. */
typedef enum {
    TB_CACHE_CYCLES,       /* hardware only */
    TB_CACHE_INSTRUCTIONS, /* perf: retired; callgrind: Ir */
    TB_CACHE_L1D_MISSES,   /* perf: L1D read misses; sim: D1mr + D1mw */
    TB_CACHE_LLC_MISSES,   /* perf: LL read misses; sim: DLmr + DLmw */
    TB_CACHE_DTLB_MISSES,  /* hardware only (dTLB read misses) */
    TB_CACHE_NEV
} tb_cache_event;

typedef struct tb_cache_counts {
    bool requested;
    bool ok;          /* at least one event counted */
    bool simulated;   /* valgrind's cache simulation, not hardware */
    double v[TB_CACHE_NEV]; /* per iteration; NAN: not counted */
    uint64_t iters;   /* iterations counted */
    char source[16];  /* "perf" or "callgrind"; "" none */
    char isa[16];     /* the cpu ISA level that ran; "" n/a */
    char d1[64], ll[64]; /* simulated geometry: "32768 B, 64 B, 8-way" */
    char reason[400]; /* why nothing (or some event) was counted */
} tb_cache_counts;

typedef struct tb_result {
    tb_status status;
    char message[512];
    const char *impl; /* the kernel that ran, as the backend names it */
    char impl_buf[256]; /* impl's storage when the harness names it */
    tb_check check;
    bool checked;
    /* timing */
    double *samples_ns; /* per-iteration time of each sample (heap) */
    size_t n_samples;
    uint64_t iters_per_sample;
    const char *stop_reason; /* ci_target, time_limit, max_samples,
                                interrupted */
    tb_stats stats;
    double timer_overhead_ns;
    uint64_t warmup_iters;
    /* a training workload's state restores (state_window), every round */
    uint64_t state_restores;
    double warmup_ns, sampling_ns;
    tb_counters counters;     /* per iteration, over every round */
    uint64_t counted_iters;   /* iterations the counters average over */
    int rounds;               /* rounds measured so far */
    size_t first_round_samples; /* later rounds take as many */
    double round_medians_ns[TB_CFG_MAX_ROUNDS]; /* median of each round */
    double gb_s, gflop_s, items_s;
    /* What one iteration did on the device, from the backend's counting
     * pass (`count` slot: CUPTI on cuda) after round 0's sampling, over
     * TB_COUNT_ITERS iterations; not valid, with the reason, when the
     * backend has no pass or the case was not timed. */
    tb_dev_counts dev;
    /* Instructions per iteration (measure.instructions, instr.h): counted
     * in a separate pass after the timing, never inside samples. */
    bool instr_requested;
    bool instr_ok;          /* instructions holds a count */
    double instructions;    /* per iteration */
    uint64_t instr_iters;   /* iterations counted */
    char instr_source[16];  /* "perf" or "callgrind"; "" none */
    char instr_isa[16];     /* the cpu ISA level that ran; "" n/a */
    char instr_reason[400]; /* why there is no count, or a note */
    /* Cache behaviour per iteration (measure.cache, instr.h): like the
     * instruction count, a separate pass after the timing. */
    tb_cache_counts cache;
    /* Device time per iteration of each sample (heap, parallel to
     * samples_ns), from the backend's device timer; NULL when it has
     * none.  device_timed: every sample so far has one. */
    double *device_ns;
    bool device_timed;
    /* The backend prepared every sample (its sample_prep returned 1, e.g.
     * cuda with l2=cold), so each sample is one call after it. */
    bool prepped;
    /* The GPU's SM clock and throttle reasons while sampling, for a
     * backend that names its GPU (device_pci); not requested otherwise. */
    tb_gpu_clock clock;
    /* A workload's per-op breakdown (measure.breakdown): a pass of its
     * own after the last round's sampling; not valid, with the reason,
     * otherwise (reason "" for ops that are not workloads). */
    tb_wl_breakdown breakdown;
} tb_result;

/* Iterations of the counting pass. */
#define TB_COUNT_ITERS 10

typedef struct tb_runner tb_runner;

/* A runner caches backend instances across cases.  `stop` (may be NULL)
 * is polled between samples: when set, the case ends "interrupted". */
int tb_runner_create(tb_runner **r, volatile sig_atomic_t *stop);
void tb_runner_destroy(tb_runner *r);
/* Where a runner publishes what it is doing (the memory may be shared
 * with another process): the phase, and the name of the kernel of the
 * case being run ("" until it is looked up). */
typedef struct tb_runner_watch_area {
    volatile sig_atomic_t phase; /* a tb_phase */
    char impl[256];
} tb_runner_watch_area;

/* Publish into *w from now on; NULL stops publishing. */
void tb_runner_watch(tb_runner *r, tb_runner_watch_area *w);

/* Fault injection, for testing isolation only: TBENCH_FAULT holds up to
 * 8 rules "KIND:PHASE:GLOB" separated by ';' (KIND segv, abort, hang or
 * exit; PHASE check, warmup, sampling or sent; GLOB a pattern on case
 * ids).  The runner reads it at tb_runner_create; when a case whose id
 * matches enters that phase, the process dies by SIGSEGV, calls abort(),
 * spins forever ignoring SIGINT/SIGTERM, or calls exit(3), as a kernel
 * with that bug would.  "sent" fires in a worker process only, once it
 * has sent the case's result (tb_runner_fault_sent): a worker that dies
 * between cases.  TB_EINVAL with a message when the value is
 * malformed. */
int tb_runner_fault_check(const char *spec, char *err, size_t errlen);

/* A worker process has sent case c's result: fire TBENCH_FAULT's rules
 * of phase "sent" that match c (never called in tbench's own process). */
void tb_runner_fault_sent(tb_runner *r, const tb_case *c);

/* Measure one case into *res (zeroed first), all its sampling in one go.
 * Never fails as a whole: problems become res->status with a message.
 * Free with tb_result_free. */
void tb_runner_run(tb_runner *r, const tb_case *c, tb_result *res);

/* Interleaved measurement (config measure.rounds): the plan is run
 * `rounds` times and every case gets a share of its sampling in each
 * pass, so slow phases of the machine that last seconds land in every
 * case's samples (and widen its CI) instead of shifting whole cases.
 * Round 0 (res zeroed by the caller) checks the case; later rounds add
 * samples to res when it is ok.  Call tb_runner_summarize to compute the
 * statistics from the samples so far (again after every round if
 * wanted). */
void tb_runner_round(tb_runner *r, const tb_case *c, int round, int rounds,
                     tb_result *res);
void tb_runner_summarize(const tb_case *c, tb_result *res);
void tb_result_free(tb_result *res);

/* Called by tb_runner_exec with the case's host inputs (n_in, case
 * dtype), the backend's outputs copied to the host (n_out, case dtype)
 * and the reference outputs (n_out, f64).  Returns 0 or a TB_E* code. */
typedef int (*tb_exec_fn)(void *arg, const tb_tensor *in,
                          const tb_tensor *out, const tb_tensor *ref);

/* Run the case once without timing: the same inputs, kernel and check as
 * tb_runner_run (res gets status, impl and check), then hand the tensors
 * to fn when there are outputs to show (status ok or failed-check).
 * Returns fn's result, or 0 when fn was not called. */
int tb_runner_exec(tb_runner *r, const tb_case *c, tb_result *res,
                   tb_exec_fn fn, void *arg);

/* Instruction counting (instr.h): check the case as tb_runner_run does,
 * make one uncounted call, then call start(arg), run the kernel k times
 * exactly as a sample does (no clock readings in between), and call
 * stop(arg).  Returns 0, or a TB_E* code with res->status and message
 * saying why (a case that is not ok is not counted). */
int tb_runner_count(tb_runner *r, const tb_case *c, uint64_t k,
                    void (*start)(void *), void (*stop)(void *), void *arg,
                    tb_result *res);

#endif
