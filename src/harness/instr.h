/* Instructions retired per iteration of a case (config
 * measure.instructions), and its cache and TLB behaviour per iteration
 * (measure.cache), each from one of two sources:
 *
 * - perf: perf_event_open(PERF_COUNT_HW_INSTRUCTIONS), user mode only,
 *   enabled around the counted calls on the calling thread (a case with
 *   threads > 1 counts the calling thread only).  Needs a hardware PMU
 *   the kernel lets the process use (perf_event_paranoid <= 2; VMs often
 *   have no virtual PMU: ENOENT).
 * - callgrind: the case re-run in a new tbench process under
 *   `valgrind --tool=callgrind --collect-atstart=no --instr-atstart=no`,
 *   which switches instrumentation and collection on
 *   (CALLGRIND_START_INSTRUMENTATION, CALLGRIND_TOGGLE_COLLECT) only
 *   around the counted calls; the total Ir is read from callgrind's
 *   output file.  Valgrind does not run AVX-512 code, so the process runs
 *   with TBENCH_ISA capped at avx2 (unless it asks for less): its count
 *   is of the AVX2 (or lower) path, and the result says which ISA ran.
 *
 * Either way the count is made in a separate process (`tbench
 * __instr-count`, never listed by --help) that rebuilds the run's plan,
 * checks the case, makes one uncounted call, then counts k =
 * measure.instructions_iters calls (tb_runner_count): the figure is the
 * total / k.  Deterministic for a given binary and input with threads=1.
 * A source that cannot count gives no figure and the reason.
 *
 * measure.cache counts, the same way (tb_result.cache):
 * - perf: one counter group (cycles as its leader, instructions, L1D
 *   read misses, LL read misses, dTLB read misses; user mode, the
 *   calling thread), read only when the group ran for the whole count
 *   (never scaled from a multiplexed share); a member the PMU lacks is
 *   null, named in the reason.
 * - callgrind with --cache-sim=yes: valgrind's simulation of a D1 and an
 *   LL (last-level) cache, no L2, of the geometry sysfs gives for cpu0
 *   (--D1, --LL; valgrind's own detection when sysfs has none or its
 *   sets are not a power of two), read with the totals: Ir, D1 misses
 *   (D1mr + D1mw) and LL misses (DLmr + DLmw) per iteration, marked
 *   simulated with the geometry; cycles, IPC and dTLB misses are null.
 * The uncounted call before the counted ones leaves the caches warm: the
 * figures are the steady state of back-to-back calls. */
#ifndef TB_HARNESS_INSTR_H
#define TB_HARNESS_INSTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plan.h"
#include "runner.h"

/* The name of a TB_INSTR_* source ("none", "perf", "callgrind",
 * "auto"). */
const char *tb_instr_source_name(int source);

/* Parent side: count case c's instructions with the case's
 * measure.instructions source into res->instr_* (res->instr_requested
 * set).  The child rebuilds the plan from the config files
 * cfg_paths[0..ncfg) with backend option `backend` (may be NULL), as
 * `run` did, and finds c by its id.  Never fails as a whole: a count
 * that cannot be made leaves res->instr_ok false with the reason. */
void tb_instr_count(const tb_case *c, const char *const *cfg_paths,
                    int ncfg, const char *backend, tb_result *res);

/* Parent side of measure.cache: count case c's cache events with its
 * measure.cache source into res->cache (requested set; ok false with
 * the reason when nothing could be counted). */
void tb_instr_cache(const tb_case *c, const char *const *cfg_paths,
                    int ncfg, const char *backend, tb_result *res);

/* Child side (`tbench __instr-count`): count case c (a case of the
 * rebuilt plan) with `source` (TB_INSTR_PERF or TB_INSTR_CALLGRIND)
 * over k calls, instructions or (cache) the cache events, and print one
 * line on out:
 *   "tbench-instr/1 ok COUNT IMPL ISA"  (COUNT "-" for callgrind: the
 *                                         parent reads callgrind's file;
 *                                         perf's cache events as
 *                                         "CYC,INS,L1D,LLC,DTLB", "-"
 *                                         for a counter not there)
 *   "tbench-instr/1 error MESSAGE"
 * Returns 0 when counted. */
int tb_instr_child(const tb_case *c, int source, bool cache, uint64_t k,
                   FILE *out);

/* Total of the first event (Ir) in callgrind output text: the
 * "totals:" line, else the "summary:" line.  Returns 0, or TB_EPARSE
 * when neither is there or the event list does not start with Ir. */
int tb_instr_callgrind_total(const char *text, double *total);

/* The totals of events names[0..n) in callgrind output text (the
 * "totals:" line, else "summary:"; a column callgrind left out at the
 * end of the line is 0) into v.  0, or TB_EPARSE when a name is not on
 * the "events:" line or a total is not a number >= 0. */
int tb_instr_callgrind_events(const char *text, const char *const *names,
                              int n, double *v);

/* The geometry of cache `level` ("D1", "LL") from the "desc: D1 cache:
 * 32768 B, 64 B, 8-way associative" line of a --cache-sim=yes output:
 * "32768 B, 64 B, 8-way".  0, or TB_EPARSE. */
int tb_instr_callgrind_geometry(const char *text, const char *level,
                                char *out, size_t len);

#endif
