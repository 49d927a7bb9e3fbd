/* NVTX ranges: the structure of a run as Nsight Systems (or any NVTX
 * tool) shows it, on every backend, CPU included.
 *
 * Domain "tbench".  Ranges nest as
 *     run > CASE-ID > phase (setup, check, warmup, sampling) > round N
 *         > batch
 * and, on a backend with a counting pass (cuda), CASE-ID > count after
 * the first round's sampling.
 * "run" lives in the tbench process; each case's ranges in the process
 * that runs it (a worker, or tbench itself with --no-isolate): a worker
 * is a fork made inside "run", so a tool that follows it sees the same
 * nesting.  Fixed names are registered strings, so a range costs a
 * function-pointer call and no string work per sample; with no tool
 * attached NVTX's calls return at once (the cost, measured, is in the
 * closing note of the issue that added this and in docs/FORMAT.md).
 *
 * Built only when the NVTX v3 headers of the CUDA toolkit are found
 * (HAVE_NVTX); otherwise every call does nothing and tb_trace_available
 * says why.  tb_trace_enable(false) (run --no-nvtx) turns them off. */
#ifndef TB_HARNESS_TRACE_H
#define TB_HARNESS_TRACE_H

#include <stdbool.h>

typedef enum {
    TB_TRACE_RUN,
    TB_TRACE_SETUP,
    TB_TRACE_CHECK,
    TB_TRACE_WARMUP,
    TB_TRACE_SAMPLING,
    TB_TRACE_BATCH,
    TB_TRACE_COUNT, /* a device backend's counting pass */
    TB_TRACE_BREAKDOWN, /* a workload's per-op breakdown pass */
    TB_TRACE_NFIXED,
} tb_trace_name;

/* Was tbench built with NVTX?  If not, *why (may be NULL) says why. */
bool tb_trace_available(const char **why);

/* Turn the ranges on or off for this process and the workers it forks
 * afterwards (default: on when available). */
void tb_trace_enable(bool on);
bool tb_trace_enabled(void);

void tb_trace_push(tb_trace_name n);
void tb_trace_push_round(int round); /* "round N", N = round + 1 */
void tb_trace_push_str(const char *name); /* e.g. a case id */
void tb_trace_pop(void);

#endif
