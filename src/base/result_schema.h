/* The vocabulary of a result file (schema "tbench.results/1",
 * docs/FORMAT.md), defined once for both sides: the writer
 * (harness/results.c) spells every member it writes with TB_RES_KEY and
 * takes status names from TB_RES_STATUSES; the one loader
 * (report/resultsio.c) reads with the same names and fills its typed
 * record from the tables below, so every renderer above it works on
 * typed fields and never on JSON keys.
 *
 * What a new case field costs: a row in TB_RES_CASE_FIELDS (and its key
 * in TB_RES_KEYS when the name is new), the writer's fill in
 * harness/results.c, and the renderer that shows it; the loader reads
 * the row by itself (tb_rescase.f, resultsio.h).  docs/FORMAT.md and
 * docs/results.schema.json describe it.  A new counter costs less: its
 * row in TB_RES_COUNTERS (below), its measurement in harness/probe.c
 * and its line in docs/FORMAT.md; compare and the report show it. */
#ifndef TB_BASE_RESULT_SCHEMA_H
#define TB_BASE_RESULT_SCHEMA_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#define TB_RES_SCHEMA "tbench.results/1"

/* ---- member names ------------------------------------------------------ */

/* Every member name of a result file, once (the top level, a case record
 * and its objects, the env, peaks and merge objects).  TB_RES_KEY(k) is
 * the name as a string constant, and does not compile for a name that is
 * not in this list. */
#define TB_RES_KEYS(X)                                                    \
    /* top level */                                                       \
    X(schema) X(complete) X(env) X(peaks) X(timer) X(nvtx) X(isolation)  \
    X(config) X(summary) X(cases) X(shard) X(merge)                      \
    /* timer, config entries */                                          \
    X(source) X(overhead_ns) X(path) X(name) X(seed) X(text) X(warmup)   \
    X(measure) X(min_time_s) X(min_iters) X(sample_time_s)               \
    X(min_samples) X(max_samples) X(ci_target) X(max_time_s) X(rounds)   \
    X(timeout_s)                                                         \
    /* shard and merge */                                                \
    X(index) X(count) X(plan_cases) X(plan_digest) X(rule) X(shards)     \
    X(selection) X(filters) X(excludes) X(backends)                      \
    X(file) X(cpu_model) X(mixed_hosts) X(plan_index)                    \
    /* a case */                                                         \
    X(id) X(op) X(category) X(dtype) X(alloc_outputs) X(transfers)       \
    X(layout)                                                            \
    X(shapes) X(out_shapes) X(params) X(backend) X(backend_params)       \
    X(impl) X(status) X(message) X(model) X(check) X(stats)              \
    X(throughput) X(counters) X(timing) X(roofline) X(cupti)             \
    X(cupti_reason) X(instructions) X(cache) X(host) X(gpu_clock)        \
    /* model, check */                                                   \
    X(flops) X(bytes) X(items) X(reduce_len) X(passed) X(method)         \
    X(max_abs_err) X(max_rel_err) X(rtol) X(atol) X(n_bad)               \
    /* stats */                                                          \
    X(n) X(iters_per_sample) X(min_ns) X(max_ns) X(median_ns)            \
    X(mean_ns) X(stddev_ns) X(mad_ns) X(p5_ns) X(p95_ns) X(ci_low_ns)    \
    X(ci_high_ns) X(ci_rel) X(outliers) X(low_mild) X(low_severe)        \
    X(high_mild) X(high_severe) X(stop_reason) X(round_medians_ns)       \
    X(samples_ns)                                                        \
    /* throughput */                                                     \
    X(gb_s) X(gflop_s) X(items_s) X(steps_s)                             \
    /* counters */                                                       \
    X(kernel_launches) X(memcpy_count) X(memcpy_bytes) X(allocs)         \
    X(alloc_bytes) X(frees) X(device_allocs) X(device_alloc_bytes)      \
    X(peak_bytes) X(peak_extra_bytes) X(minor_faults) X(major_faults)    \
    X(vol_ctx_switches) X(invol_ctx_switches)                            \
    /* timing */                                                         \
    X(timer_overhead_ns) X(warmup_iters) X(warmup_ns) X(sampling_ns)     \
    X(device) X(prepared_samples) X(state_restores)                      \
    /* roofline */                                                       \
    X(level) X(threads) X(bw_kernel) X(bandwidth_gb_s) X(isa)            \
    X(bandwidth_threads) X(bandwidth_working_set_bytes) X(peak_threads)  \
    X(peak_dtype) X(footprint_bytes)                                     \
    X(peak_gflop_s) X(attainable_gflop_s) X(attainable_gb_s) X(bound)    \
    X(min_time_ns) X(fraction)                                           \
    /* results.csv's computed column (threads, isa: above) */            \
    X(size)                                                              \
    /* cupti */                                                          \
    X(iterations) X(memcpy) X(h2d) X(d2h) X(d2d) X(other) X(memsets)     \
    X(memset_bytes) X(device_frees) X(device_free_bytes) X(kernels)      \
    X(device_ns) X(kernels_unlisted)                                     \
    /* instructions */                                                   \
    X(requested) X(per_iter) X(iters) X(reason)                          \
    /* breakdown */                                                      \
    X(breakdown) X(breakdown_reason) X(breakdown_steps) X(steps)        \
    X(kept_steps)                                                        \
    X(statistic) X(step_ns) X(parts_ns) X(gap_ns) X(gap_fraction)        \
    X(parts) X(phase) X(calls) X(ns) X(share)                            \
    /* cache (and instructions, isa, source, iters, reason above) */     \
    X(simulated) X(cycles) X(ipc) X(l1d_misses) X(llc_misses)            \
    X(dtlb_misses) X(d1) X(ll)                                           \
    /* gpu_clock */                                                      \
    X(available) X(readings) X(sm_mhz_start) X(sm_mhz_end) X(sm_mhz_min) \
    X(sm_mhz_max) X(reasons_start) X(reasons_end) X(reasons_seen)        \
    X(throttled) X(throttle_reasons)                                     \
    /* env */                                                            \
    X(cpu) X(vendor) X(logical_cpus) X(physical_cores) X(mhz) X(isa_used) \
    X(caches) X(type) X(size_bytes) X(shared_cpus) X(governor)           \
    X(memory) X(total_bytes) X(available_bytes) X(os) X(kernel)          \
    X(machine) X(hostname) X(date) X(loadavg) X(clock) X(resolution_ns)  \
    X(libraries) X(build) X(warnings) X(command) X(plugins)              \
    X(python_overhead) X(ci_ns) X(tbench_version) X(git_commit)         \
    X(build_type)                                                        \
    X(c_args) X(sanitize)                                                \
    /* peaks */                                                          \
    X(quick) X(load_avg_1m) X(bandwidth) X(working_set_bytes)            \
    X(best_gb_s) X(median_gb_s) X(worst_gb_s) X(vendor_gb_s)             \
    X(best_gflop_s)                                                      \
    X(median_gflop_s) X(vendor_gflop_s) X(gpu) X(compute_capability)     \
    X(sm_count)

enum {
#define TB_RES_KEY_ENUM(k) TB_RES_K_##k,
    TB_RES_KEYS(TB_RES_KEY_ENUM)
#undef TB_RES_KEY_ENUM
        TB_RES_NKEYS
};

/* The member name k ("median_ns"): a string constant, usable in static
 * initializers; a name missing from TB_RES_KEYS is a compile error. */
#define TB_RES_KEY(k) (&(#k)[0 * TB_RES_K_##k])

/* ---- case statuses ----------------------------------------------------- */

/* What a status means for the run: it ran; it could not run here (not a
 * failure); or it failed (the run's exit status 1). */
typedef enum { TB_RES_RAN, TB_RES_NOT_RUN, TB_RES_FAILED } tb_res_status_kind;

/* The case statuses of docs/FORMAT.md, in the writer's order (tb_status,
 * harness/runner.h; the order of the "summary" members).  Only "ok" is
 * timed; the others carry a message saying why ("crashed": the worker
 * died, naming the signal and the phase; "timeout": the worker passed
 * the time limit). */
#define TB_RES_STATUSES(X)                                               \
    X(OK, "ok", TB_RES_RAN)                                              \
    X(UNSUPPORTED, "unsupported", TB_RES_NOT_RUN)                        \
    X(UNAVAILABLE, "unavailable", TB_RES_NOT_RUN)                        \
    X(FAILED_CHECK, "failed-check", TB_RES_FAILED)                       \
    X(ERROR, "error", TB_RES_FAILED)                                     \
    X(SKIPPED, "skipped", TB_RES_NOT_RUN)                                \
    X(CRASHED, "crashed", TB_RES_FAILED)                                 \
    X(TIMEOUT, "timeout", TB_RES_FAILED)

typedef enum {
#define TB_RES_STATUS_ENUM(e, s, k) TB_RES_STATUS_##e,
    TB_RES_STATUSES(TB_RES_STATUS_ENUM)
#undef TB_RES_STATUS_ENUM
        TB_RES_NSTATUSES
} tb_res_status;

/* Name of status s ("failed-check"), "?" out of range. */
const char *tb_res_status_name(int s);

/* The status named s, or -1 when s is none of TB_RES_STATUSES. */
int tb_res_status_parse(const char *s);

/* A result file's "summary" object counted from its "cases" array (the
 * writer's, and merge's, which never copies a shard's): "cases", then
 * one count per status in TB_RES_STATUSES order.  NULL when out of
 * memory; the caller owns it. */
cJSON *tb_res_summary_of(const cJSON *cases);

/* The same object from the counts: cases records, n[s] of status s
 * (TB_RES_NSTATUSES of them; merge counts its typed records). */
cJSON *tb_res_summary_counts(int cases, const int *n);

/* The kind of the status named s; TB_RES_FAILED for an unknown name. */
tb_res_status_kind tb_res_status_kind_of(const char *s);

/* Why sampling stopped (stats.stop_reason; harness/runner.c sets it). */
#define TB_RES_STOP_REASONS(X)                                           \
    X(CI_TARGET, "ci_target")                                            \
    X(TIME_LIMIT, "time_limit")                                          \
    X(MAX_SAMPLES, "max_samples")                                        \
    X(INTERRUPTED, "interrupted")

/* ---- counters ---------------------------------------------------------- */

/* The per-iteration counters ("counters", docs/FORMAT.md), in the order
 * the writer writes them, with everything the code above the schema
 * needs to know about each, so that a new counter is a row here and its
 * measurement in harness/probe.c (and its line in docs/FORMAT.md):
 *
 *   X(ENUM, key, MERGE, UNIT, SHOWN, TITLE, CSV)
 *     MERGE  how the rounds of a case combine: MEAN (the per-iteration
 *            average over every counted iteration) or MAX (a high-water
 *            mark: the largest round's)
 *     UNIT   COUNT or BYTES: how the report prints it
 *     SHOWN  where the report's per-op counters table ("Kernel launches
 *            and allocations per op") shows it: MAIN (a column, in this
 *            order), DEV (a column after those, only when some case
 *            moved data to or allocated on a device) or NONE
 *     TITLE  that column's heading
 *     CSV    1: a column of the CSV export (docs/FORMAT.md, "CSV")
 *
 * The exact ones come first: they count the same every run, so compare
 * (and ab, history, the report's comparisons) treats a growth of any of
 * them as a regression and prints every change of one; the others vary
 * from run to run (memory high-water marks, faults, context switches). */
#define TB_RES_EXACT_COUNTERS(X)                                         \
    X(KERNEL_LAUNCHES, kernel_launches, MEAN, COUNT, MAIN,               \
      "Kernel launches", 1)                                              \
    X(MEMCPY_COUNT, memcpy_count, MEAN, COUNT, DEV, "Copies", 0)         \
    X(MEMCPY_BYTES, memcpy_bytes, MEAN, BYTES, NONE, "", 0)              \
    X(ALLOCS, allocs, MEAN, COUNT, MAIN, "Allocations", 1)               \
    X(ALLOC_BYTES, alloc_bytes, MEAN, BYTES, MAIN, "Allocated bytes", 1) \
    X(FREES, frees, MEAN, COUNT, MAIN, "Frees", 0)                       \
    X(DEVICE_ALLOCS, device_allocs, MEAN, COUNT, DEV,                    \
      "Device allocations", 0)                                           \
    X(DEVICE_ALLOC_BYTES, device_alloc_bytes, MEAN, BYTES, NONE, "", 0)
#define TB_RES_OTHER_COUNTERS(X)                                         \
    X(PEAK_BYTES, peak_bytes, MAX, BYTES, NONE, "", 1)                   \
    X(PEAK_EXTRA_BYTES, peak_extra_bytes, MAX, BYTES, MAIN,              \
      "Peak extra", 0)                                                   \
    X(MINOR_FAULTS, minor_faults, MEAN, COUNT, NONE, "", 1)              \
    X(MAJOR_FAULTS, major_faults, MEAN, COUNT, NONE, "", 1)              \
    X(VOL_CTX_SWITCHES, vol_ctx_switches, MEAN, COUNT, NONE, "", 1)      \
    X(INVOL_CTX_SWITCHES, invol_ctx_switches, MEAN, COUNT, NONE, "", 1)
#define TB_RES_COUNTERS(X) TB_RES_EXACT_COUNTERS(X) TB_RES_OTHER_COUNTERS(X)

typedef enum {
#define TB_RES_CTR_ENUM(e, k, m, u, s, t, c) TB_RES_CTR_##e,
    TB_RES_COUNTERS(TB_RES_CTR_ENUM)
#undef TB_RES_CTR_ENUM
        TB_RES_NCOUNTERS_ALL
} tb_res_counter;

/* The exact counters are 0 .. TB_RES_NCOUNTERS - 1. */
enum {
#define TB_RES_CTR_ONE(e, k, m, u, s, t, c) +1
    TB_RES_NCOUNTERS = 0 TB_RES_EXACT_COUNTERS(TB_RES_CTR_ONE)
#undef TB_RES_CTR_ONE
};

typedef enum { TB_RES_MEAN, TB_RES_MAX } tb_res_merge;
typedef enum { TB_RES_COUNT, TB_RES_BYTES } tb_res_unit;
typedef enum { TB_RES_NONE, TB_RES_MAIN, TB_RES_DEV } tb_res_shown;

/* What the schema says of counter k (TB_RES_CTR_*); NULL out of range. */
typedef struct tb_res_counter_info {
    const char *name; /* as in the file: "kernel_launches" */
    tb_res_merge merge;
    tb_res_unit unit;
    tb_res_shown shown;
    const char *title; /* the report's column heading ("" for NONE) */
    bool csv;
} tb_res_counter_info;
const tb_res_counter_info *tb_res_counter_of(int k);

/* Name of counter k as in the file ("kernel_launches"), "?" out of
 * range. */
const char *tb_res_counter_name(int k);

/* ---- CUPTI counts ------------------------------------------------------ */

/* The numbers of the "cupti" object besides iterations, memcpy and the
 * kernel list, each a count or bytes per iteration >= 0. */
#define TB_RES_CUPTI_NUMS(X)                                             \
    X(kernel_launches) X(memsets) X(memset_bytes) X(device_allocs)       \
    X(device_alloc_bytes) X(device_frees) X(device_free_bytes)           \
    X(kernels_unlisted)

/* The directions of cupti.memcpy, each {count, bytes}, in this order
 * (tb_dev_counts' memcpy arrays, backends/backend.h). */
#define TB_RES_CUPTI_DIRS(X) X(H2D, h2d) X(D2H, d2h) X(D2D, d2d) X(OTHER, other)

enum {
#define TB_RES_DIR_ENUM(e, k) TB_RES_DIR_##e,
    TB_RES_CUPTI_DIRS(TB_RES_DIR_ENUM)
#undef TB_RES_DIR_ENUM
        TB_RES_NDIRS
};

/* Name of memcpy direction d ("h2d"), "?" out of range. */
const char *tb_res_dir_name(int d);

/* The exact per-iteration CUPTI counts compare treats as regressions
 * when they grow, in this order: the name compare prints ("memcpys" is
 * the sum of memcpy.{h2d,d2h,d2d,other}.count). */
#define TB_RES_CUPTI_COUNTERS(X)                                         \
    X(LAUNCHES, "cupti.kernel_launches")                                 \
    X(MEMCPYS, "cupti.memcpys")                                          \
    X(MEMSETS, "cupti.memsets")                                          \
    X(DEVICE_ALLOCS, "cupti.device_allocs")

typedef enum {
#define TB_RES_CUPTI_ENUM(e, s) TB_RES_CUPTI_##e,
    TB_RES_CUPTI_COUNTERS(TB_RES_CUPTI_ENUM)
#undef TB_RES_CUPTI_ENUM
        TB_RES_NCUPTI
} tb_res_cupti_counter;

/* Name of CUPTI counter k ("cupti.kernel_launches"). */
const char *tb_res_cupti_name(int k);

/* ---- the scalar members of a case's objects ----------------------------- */

/* The objects of a case record that hold plain scalars, X(NAME, PARENT):
 * PARENT `case` is the record itself. */
#define TB_RES_CASE_OBJS(X)                                              \
    X(model, case) X(check, case) X(stats, case) X(outliers, stats)      \
    X(throughput, case) X(timing, case) X(device, timing)                \
    X(roofline, case) X(instructions, case) X(cache, case)               \
    X(shard, case) X(gpu_clock, case)

/* Scalar members the loader reads into tb_rescase.f without a check of
 * their own (resultsio.h): X(OBJECT, KEY, TYPE), TYPE num (a double,
 * NAN when absent, null or not a number), str (NULL unless a string) or
 * flag (true only for JSON true).  The field is f.OBJECT_KEY. */
#define TB_RES_CASE_FIELDS(X)                                            \
    X(model, reduce_len, num)                                            \
    X(check, passed, flag) X(check, method, str)                         \
    X(check, max_abs_err, num) X(check, max_rel_err, num)                \
    X(check, rtol, num) X(check, atol, num) X(check, n_bad, num)         \
    X(stats, max_ns, num) X(stats, stddev_ns, num) X(stats, mad_ns, num) \
    X(stats, p5_ns, num) X(stats, p95_ns, num)                           \
    X(stats, stop_reason, str) X(stats, rounds, num)                     \
    X(outliers, low_mild, num) X(outliers, low_severe, num)              \
    X(outliers, high_mild, num) X(outliers, high_severe, num)            \
    X(throughput, steps_s, num)                                          \
    X(timing, timer_overhead_ns, num) X(timing, warmup_iters, num)       \
    X(timing, warmup_ns, num) X(timing, sampling_ns, num)                \
    X(timing, prepared_samples, flag)                                    \
    X(timing, state_restores, num)                                       \
    X(device, source, str) X(device, median_ns, num)                     \
    X(device, min_ns, num) X(device, max_ns, num)                        \
    X(device, overhead_ns, num)                                          \
    X(roofline, level, str) X(roofline, threads, num)                    \
    X(roofline, bw_kernel, str) X(roofline, bandwidth_gb_s, num)         \
    X(roofline, bandwidth_threads, num)                                  \
    X(roofline, bandwidth_working_set_bytes, num)                        \
    X(roofline, footprint_bytes, num)                                    \
    X(roofline, isa, str) X(roofline, peak_gflop_s, num)                 \
    X(roofline, peak_threads, num) X(roofline, peak_dtype, str)          \
    X(roofline, attainable_gflop_s, num)                                 \
    X(roofline, attainable_gb_s, num) X(roofline, bound, str)            \
    X(roofline, min_time_ns, num) X(roofline, fraction, num)             \
    X(instructions, requested, str) X(instructions, iters, num)          \
    X(instructions, reason, str)                                         \
    X(cache, requested, str) X(cache, source, str)                       \
    X(cache, simulated, flag) X(cache, isa, str) X(cache, iters, num)    \
    X(cache, cycles, num) X(cache, instructions, num) X(cache, ipc, num)  \
    X(cache, l1d_misses, num) X(cache, llc_misses, num)                  \
    X(cache, dtlb_misses, num) X(cache, d1, str) X(cache, ll, str)       \
    X(cache, reason, str)                                                \
    X(shard, index, num) X(shard, count, num) X(shard, plan_index, num)  \
    X(gpu_clock, source, str) X(gpu_clock, available, flag)              \
    X(gpu_clock, reason, str) X(gpu_clock, readings, num)                \
    X(gpu_clock, sm_mhz_start, num) X(gpu_clock, sm_mhz_end, num)        \
    X(gpu_clock, sm_mhz_min, num) X(gpu_clock, sm_mhz_max, num)          \
    X(gpu_clock, throttled, flag)

/* ---- verdicts ---------------------------------------------------------- */

/* How a word reads on a terminal: good, bad, a warning or plain. */
typedef enum {
    TB_RES_PLAIN,
    TB_RES_GOOD,
    TB_RES_WARN,
    TB_RES_BAD,
} tb_res_tone;

/* The one-word verdicts of a case in `tbench compare`, `ab`, `history`
 * and the report (docs/FORMAT.md, "Verdicts"): the first four are the
 * verdicts of a change (base/verdict.h); a case whose status is the same
 * on both sides and not ok gets that status instead. */
#define TB_RES_VERDICTS(X)                                               \
    X(REGRESSED, "regressed", TB_RES_BAD)                                \
    X(IMPROVED, "improved", TB_RES_GOOD)                                 \
    X(UNCHANGED, "unchanged", TB_RES_PLAIN)                              \
    X(INCONCLUSIVE, "inconclusive", TB_RES_WARN)                         \
    X(FAILURE, "failure", TB_RES_BAD)                                    \
    X(FIXED, "fixed", TB_RES_GOOD)                                       \
    X(STATUS_CHANGED, "status-changed", TB_RES_WARN)                     \
    X(COUNTERS, "counters", TB_RES_BAD)                                  \
    X(ADDED, "added", TB_RES_PLAIN)                                      \
    X(REMOVED, "removed", TB_RES_BAD)

typedef enum {
#define TB_RES_VERDICT_ENUM(e, s, t) TB_RES_VERDICT_##e,
    TB_RES_VERDICTS(TB_RES_VERDICT_ENUM)
#undef TB_RES_VERDICT_ENUM
        TB_RES_NVERDICTS
} tb_res_verdict;

/* Name of verdict v ("status-changed"), "?" out of range. */
const char *tb_res_verdict_name(int v);

/* The tone of a status or verdict word (TB_RES_PLAIN for any other
 * word): ok, improved and fixed are good; the statuses that did not
 * run, status-changed and inconclusive warnings; failed statuses, regressed, failure,
 * counters and removed bad. */
tb_res_tone tb_res_word_tone(const char *word);

#endif
