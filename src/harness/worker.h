/* Cases in isolated worker processes.
 *
 * The parent (tbench run) keeps the plan, the results and the result
 * file; a worker, a fork of the parent made before any backend instance
 * exists, creates its own runner and backend instances and measures one
 * round of one case per request.  So a kernel that crashes, calls exit()
 * or hangs costs only the case it was running: the parent records it as
 * `crashed` (with the signal or exit status and the phase: setup, check,
 * warmup or sampling) or `timeout` (no answer within the case's
 * measure.timeout_s; the worker is killed), forks a fresh worker and goes
 * on.  A worker serves case after case, so the fork and the backends'
 * start-up are paid once per run, not once per case; its backend
 * instances (thread pools, a CUDA context) live in the worker only and
 * are never inherited across a fork.
 *
 * Signals: a worker runs in a process group of its own, so what a
 * terminal sends tbench's group (Ctrl-C, a hang-up) reaches tbench
 * alone; tbench tells the worker to stop through memory they share, and
 * the worker obeys nothing else.  A signal that reaches the worker alone
 * (an out-of-memory killer's SIGKILL or SIGTERM, an admin's kill, a
 * SIGINT to its pid) kills it like any crash: the case is `crashed`
 * with that signal and the next case gets a fresh worker.
 *
 * In-process mode (tbench run --no-isolate, for debugging) runs the same
 * requests on a runner in the calling process.
 *
 * Requests and replies travel over a socketpair: a header, then the
 * tb_result by value and its samples.  The worker is a fork of the same
 * executable, so the few pointers a result holds to string constants of
 * the program (stop_reason, check.method) mean the same in both
 * processes; the kernel's name is copied into impl_buf before it is sent
 * (it may live in a module only the worker has loaded). */
#ifndef TB_HARNESS_WORKER_H
#define TB_HARNESS_WORKER_H

#include <signal.h>
#include <stdbool.h>

#include "plan.h"
#include "runner.h"

typedef struct tb_workers tb_workers;

/* What became of a request. */
typedef enum {
    TB_WORK_DONE,        /* res holds the round's result */
    TB_WORK_INTERRUPTED, /* *stop was set and the worker was killed (by
                          * us after the grace period, or by the caller's
                          * signal) before it answered: res is as it was */
} tb_work_outcome;

/* Workers for the cases of plan (which must outlive w).  isolate: fork
 * workers; false: run in this process.  stop (may be NULL) is the
 * caller's signal flag: while a request is running, a set flag is
 * passed on to the worker through shared memory (it ends its sampling
 * at the next sample, "interrupted"), and a worker that still has not
 * answered 5 s later is killed.  A worker that dies of SIGINT, SIGTERM
 * or SIGHUP while the flag is set got the caller's signal too: its case
 * is left unfinished (TB_WORK_INTERRUPTED), not `crashed`.
 * TBENCH_FAULT must have been checked (tb_runner_fault_check): a worker
 * whose runner cannot be made exits with status 125.  Returns 0,
 * TB_ENOMEM, or (in process) what tb_runner_create returns. */
int tb_workers_create(tb_workers **w, const tb_plan *plan, bool isolate,
                      volatile sig_atomic_t *stop);

/* Stop the worker (it exits when its socket closes) and free w.  Accepts
 * NULL. */
void tb_workers_destroy(tb_workers *w);

/* Measure round `round` of `rounds` of plan case i into res, exactly as
 * tb_runner_round would in this process (res zeroed by the caller before
 * round 0).  A dead or hung worker sets res->status to crashed or
 * timeout with a message naming the phase. */
tb_work_outcome tb_workers_round(tb_workers *w, int i, int round,
                                 int rounds, tb_result *res);

/* What became of a worker that died between cases since the last call
 * (killed while idle: it was replaced and the case sent to the fresh
 * one, so no case lost anything), as one line to warn with; NULL when
 * none did.  The text lasts until the next call. */
const char *tb_workers_note(tb_workers *w);

/* Install fn as the handler of SIGINT, SIGTERM and SIGHUP, the signals
 * that stop a run, in tbench (never in a worker: see above); SIG_DFL
 * gives them their default action back (the workers do). */
void tb_workers_catch_stop(void (*fn)(int));

/* Did w fork workers ("process") or run cases in process ("none")? */
const char *tb_workers_mode(const tb_workers *w);

#endif
