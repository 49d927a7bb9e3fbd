/* Comparing result files case by case: the verdicts behind `tbench
 * compare` and `tbench run --baseline` (rules in docs/FORMAT.md,
 * "compare").
 *
 * Each side (old, new) is one or more runs of the same matrix.  Cases are
 * joined by id.  For a case that is "ok" on both sides:
 *   - M = the median of the side's run medians; change = M_new/M_old - 1;
 *   - a 95% bootstrap CI of that ratio (runs resampled, then samples
 *     within each run: a plain bootstrap when a side has one run);
 *   - a two-sided Mann-Whitney U test of the pooled raw samples
 *     (exact null distribution without ties when both sides have at most
 *     TB_MWU_EXACT_MAX samples, else the normal approximation with tie
 *     and continuity corrections, as SciPy's mannwhitneyu);
 *   - a noise floor: the largest of the threshold, the within-run noise
 *     (half the sum of the two relative CI widths of the medians) and,
 *     when a side has two or more runs, the between-run noise: the
 *     smallest change a two-sample t test on the log run medians (pooled
 *     variance of the sides with 2+ runs) calls significant at alpha,
 *     expm1(t(1 - alpha/2, df) s sqrt(1/k_old + 1/k_new));
 *   - mde, the smallest change the comparison can resolve: the floor's
 *     noise parts (within-run, between-run) without the threshold;
 *   - the verdict of base/verdict.h (tb_verdict_judge, floor and mde
 *     as above): regressed when change > floor, p < alpha and the CI
 *     lies above 0; improved when new/old < 1/(1 + floor), p < alpha
 *     and the CI lies below 0; unchanged only when the CI lies inside
 *     +-threshold and mde <= threshold (an equivalence test); otherwise
 *     inconclusive.
 * Exact per-iteration counters (resultsio.h) that grow are counter
 * regressions, and so are the CUPTI counts (kernel launches, memcpys,
 * memsets, device allocations) when both sides measured them (when only
 * one side did, there is no verdict and cu_na says why), and so are
 * instructions per iteration that grow by more than opts.instr_threshold
 * (counted by the same source at the same ISA on both sides); a case
 * that ran (ok) and no longer does, or that newly
 * fails, is a status failure.  A case of the old side that is absent
 * from the new one, or that ran (ok) and now does not run there
 * (unsupported, unavailable, skipped), is missing: it fails the gate
 * (with the status kind) unless opts.allow_missing. */
#ifndef TB_REPORT_COMPARE_H
#define TB_REPORT_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "../base/verdict.h"
#include "resultsio.h"

#define TB_COMPARE_SCHEMA "tbench.compare/1"

/* ---- statistics (exported for the tests) ------------------------------ */

#define TB_MWU_EXACT_MAX 50

typedef struct tb_mwu {
    double u;   /* U of x: pairs with x_i > y_j, ties counting 1/2 */
    double p;   /* two-sided p-value, in [0, 1] */
    bool exact; /* exact null distribution (else normal approximation) */
} tb_mwu;

/* Two-sided Mann-Whitney U test of x[0..nx) against y[0..ny) (nx, ny >=
 * 1, no NaN).  Exact when there are no ties and nx, ny <=
 * TB_MWU_EXACT_MAX: p = min(1, 2 P(U <= min(U, nx ny - U))).  Otherwise
 * z = (max(U, nx ny - U) - nx ny/2 - 1/2) / sigma with the tie-corrected
 * sigma, p = min(1, erfc(z/sqrt 2)); p = 1 when every value ties.
 * Returns 0, TB_EINVAL or TB_ENOMEM. */
int tb_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
                    tb_mwu *out);

/* Quantile of Student's t distribution with df > 0 degrees of freedom
 * at p in (0, 1) (regularized incomplete beta by continued fraction,
 * inverted by bisection; about 1e-13 relative).  NAN outside. */
double tb_t_quantile(double p, double df);

/* The samples of one run. */
typedef struct tb_sampleset {
    const double *x;
    size_t n; /* >= 1 */
} tb_sampleset;

/* 95% percentile-bootstrap CI of M_new / M_old, where a side's M is the
 * median of its runs' medians.  Each of `resamples` rounds draws, per
 * side, k runs with replacement and then each drawn run's samples with
 * replacement.  Seeded, so reproducible.  Returns 0, TB_EINVAL or
 * TB_ENOMEM. */
int tb_ratio_ci(const tb_sampleset *old, int k_old, const tb_sampleset *nw,
                int k_new, int resamples, uint64_t seed, double *lo,
                double *hi);

/* `resamples` bootstrap replicates of one side's M (as tb_ratio_ci draws
 * them) into out.  A run of more than 16 samples is sorted once and a
 * replicate's median drawn from the exact distribution of a resample's
 * median (its middle order statistics through one Beta draw and, for
 * even n, one more uniform: compare.c), O(1) each; smaller runs are
 * resampled.  So tb_ratio_ci is O(n log n + resamples) in the samples.
 * For checking that distribution.  0, TB_EINVAL or TB_ENOMEM. */
int tb_boot_medians(const tb_sampleset *s, int k, int resamples,
                    uint64_t seed, double *out);

/* As tb_boot_medians of one run, the sampler at every n (n >= 2; n = 1
 * is its one value): for checking the sampler where runs are resampled.
 * 0, TB_EINVAL or TB_ENOMEM. */
int tb_boot_medians_exact(const tb_sampleset *s, int resamples,
                          uint64_t seed, double *out);

/* ---- comparison ------------------------------------------------------- */

enum {
    TB_FAIL_TIME = 1u,
    TB_FAIL_COUNTERS = 2u,
    TB_FAIL_STATUS = 4u,
    TB_FAIL_ALL = 7u,
};

/* The cache events compared (compare_cache.c). */
enum { TB_CMP_CACHE_L1D, TB_CMP_CACHE_LLC, TB_CMP_CACHE_DTLB,
       TB_CMP_NCACHE };

typedef struct tb_cmp_opts {
    double threshold; /* fraction: 0.02 = 2% (the floor never goes lower) */
    double alpha;     /* significance level, 0.01 */
    unsigned fail_on; /* TB_FAIL_* bits: what makes `failed` true */
    int resamples;    /* bootstrap rounds, 2000 */
    uint64_t seed;
    /* instructions per iteration: a change beyond this fraction (0.001 =
     * 0.1%) either way is a counter regression or improvement */
    double instr_threshold;
    /* cache events per iteration (measure.cache: L1D, LL and dTLB
     * misses): a change beyond this fraction (0.01 = 1%) either way, and
     * of at least one event per iteration, is a counter verdict */
    double cache_threshold;
    /* the gate's resolution: a case timed on both sides whose mde is
     * above this fraction fails (INFINITY: no limit; --max-mde) */
    double max_mde;
    /* missing cases (absent from the new side, or no longer run) do not
     * fail (--allow-missing) */
    bool allow_missing;
    /* (optional) The cases the new side set out to run (`run --filter`,
     * `--exclude`, `--shard`: its plan): a case only on the old side for
     * which in_scope(id, scope_arg) is false was not asked for, so it is
     * left out of the comparison rather than counted missing.  NULL:
     * every case is in scope. */
    bool (*in_scope)(const char *id, void *scope_arg);
    void *scope_arg;
} tb_cmp_opts;

void tb_cmp_opts_default(tb_cmp_opts *o);

/* --fail-on's words: the first three are TB_FAIL_TIME, _COUNTERS and
 * _STATUS in order; "none" stands alone. */
#define TB_FAIL_ON_WORDS "time counters status none"

/* Parse a --fail-on list ("time,counters,status", or "none") into bits.
 * 0 or TB_EINVAL. */
int tb_cmp_parse_fail_on(const char *s, unsigned *bits);

typedef enum { TB_CMP_BOTH, TB_CMP_ADDED, TB_CMP_REMOVED } tb_cmp_presence;

/* The time verdict: one of base/verdict.h's four, or not compared. */
typedef enum {
    TB_TIME_REGRESSED = TB_RES_VERDICT_REGRESSED,
    TB_TIME_IMPROVED = TB_RES_VERDICT_IMPROVED,
    TB_TIME_UNCHANGED = TB_RES_VERDICT_UNCHANGED,
    TB_TIME_INCONCLUSIVE = TB_RES_VERDICT_INCONCLUSIVE,
    TB_TIME_NA = TB_RES_NVERDICTS, /* not ok on both sides: not compared */
} tb_time_verdict;

typedef enum {
    TB_SCHG_SAME,
    TB_SCHG_FAILURE, /* ran and no longer does, or newly fails */
    TB_SCHG_FIXED,   /* did not run, now ok */
    TB_SCHG_CHANGED, /* between two statuses that are not ok */
} tb_status_change;

typedef struct tb_cmp_case {
    const char *id;
    tb_cmp_presence presence;
    const char *old_status, *new_status; /* NULL on a side without it */
    const char *old_message, *new_message;
    const char *old_impl, *new_impl;
    tb_status_change schg;
    int k_old, k_new; /* runs with the case on each side */
    /* time (valid unless time == TB_TIME_NA) */
    tb_time_verdict time;
    double old_median, new_median; /* M of each side, ns */
    double change, ci_lo, ci_hi;   /* fractions: +0.10 = 10% slower */
    double p, u;
    bool exact;
    size_t n_old, n_new; /* pooled samples */
    double floor, floor_within, floor_between; /* fractions; between NAN
                                                  with one run per side */
    double mde;     /* max(floor_within, floor_between): the resolution */
    bool unresolved; /* timed and mde > opts.max_mde */
    bool missing;    /* removed, or ran (ok) and no longer runs */
    double run_sd; /* pooled sd of ln(run median), NAN with one run each */
    int run_df;    /* its degrees of freedom (0 with one run each) */
    double bytes, flops, items; /* the cost model, for throughput */
    /* counters: NAN unless both sides are ok and report them */
    double ctr_old[TB_RES_NCOUNTERS], ctr_new[TB_RES_NCOUNTERS];
    int ctr_dir[TB_RES_NCOUNTERS]; /* +1 grew, -1 shrank, 0 same/NA */
    bool ctr_regressed, ctr_improved;
    /* CUPTI counts per iteration (resultsio.h), exact like the counters
     * above and part of ctr_regressed/ctr_improved: NAN unless both
     * sides are ok and the side has a valid cupti object (the largest
     * over the side's runs). */
    double cu_old[TB_RES_NCUPTI], cu_new[TB_RES_NCUPTI];
    int cu_dir[TB_RES_NCUPTI];
    /* Why there is no CUPTI verdict although a side has counts (the
     * other's cupti is null or absent: "not measured in the new run:
     * REASON"); "" otherwise. */
    char cu_na[320];
    /* instructions per iteration (each side's largest over its runs):
     * NAN on a side without a count; instr_change = new/old - 1, NAN
     * when not compared; instr_dir +1 beyond +instr_threshold (a counter
     * regression), -1 beyond -instr_threshold; instr_note says why two
     * counts were not compared (different source or ISA), else NULL */
    double instr_old, instr_new, instr_change;
    int instr_dir;
    const char *instr_source, *instr_isa; /* the old side's */
    const char *instr_note;
    /* cache events per iteration (tb_cmp_cache; each side's record with
     * the most L1D misses): NAN where a side has none; change new/old -
     * 1 (NAN: not compared), dir as instr_dir with cache_threshold;
     * cache_note says why the sides were not compared (source,
     * simulated or not, ISA, simulated geometry), else NULL */
    double cache_old[TB_CMP_NCACHE], cache_new[TB_CMP_NCACHE];
    double cache_change[TB_CMP_NCACHE];
    int cache_dir[TB_CMP_NCACHE];
    const char *cache_source, *cache_isa; /* the old side's */
    bool cache_simulated;
    const char *cache_note;
} tb_cmp_case;

/* "l1d_misses", "llc_misses", "dtlb_misses". */
const char *tb_cmp_cache_name(int e);
/* All NAN, no verdict. */
void tb_cmp_cache_init(tb_cmp_case *c);
/* Compare the cache events of c's runs ro[0..ko) and rn[0..kn). */
void tb_cmp_cache(tb_cmp_case *c, const tb_rescase *const *ro, int ko,
                  const tb_rescase *const *rn, int kn, const tb_cmp_opts *o);
/* The text after the case id for event e (": l1d_misses 796 -> 900
 * (...: counter regression)", or for e 0 why the events were not
 * compared): false when there is nothing to say. */
bool tb_cmp_cache_line(const tb_cmp_case *k, int e, double threshold,
                       char *out, size_t len);

typedef struct tb_cmp {
    tb_cmp_opts opts;
    tb_resfile *const *old_files, *const *new_files; /* not owned */
    int k_old, k_new;
    int n;
    tb_cmp_case *cases; /* old side's order, then cases only in new */
    int n_common, n_timed, n_regressed, n_improved, n_unchanged;
    int n_inconclusive;
    int n_ctr_regressed, n_ctr_improved, n_failures, n_fixed, n_changed;
    int n_added, n_removed;
    int n_missing;    /* removed + ran and no longer runs */
    int n_unresolved; /* timed with mde > opts.max_mde */
    /* a regression of a kind in opts.fail_on (a missing case counts as a
     * status failure unless opts.allow_missing), or an unresolved case */
    bool failed;
} tb_cmp;

/* Compare k_old >= 1 old runs with k_new >= 1 new runs.  Every file must
 * share at least one case id with the other side (else TB_EINVAL and
 * "FILE: no case id in common with OTHER (a different matrix?)" in
 * err).  The arrays old and nw and their files must outlive *out (it
 * keeps their addresses).  Returns 0, TB_EINVAL or
 * TB_ENOMEM; free with tb_cmp_free. */
int tb_compare(tb_resfile *const *old, int k_old, tb_resfile *const *nw,
               int k_new, const tb_cmp_opts *opts, tb_cmp *out, char *err,
               size_t errlen);
void tb_cmp_free(tb_cmp *c);

/* One pair of cases, one run a side, judged as tb_compare judges a case
 * that ran on both sides (the rules above): old against nw, whatever
 * their ids (two backends of one case, two thread counts).  out->time
 * is TB_TIME_NA unless both ran ("ok"); out->id is nw's.  The one
 * verdict of a pair for every renderer (report, run's slow-threads
 * note).  0 or TB_ENOMEM. */
int tb_cmp_pair(const tb_rescase *old, const tb_rescase *nw,
                const tb_cmp_opts *opts, tb_cmp_case *out);

/* One run or several a side of one case: the old runs' records against
 * the new runs' (ko, kn >= 1, every one ok), judged as tb_compare judges
 * a case on both sides; out->id is nw[0]'s.  history's steps (the runs
 * before a step against the runs after it) use it, so that history and
 * compare agree.  0 or TB_ENOMEM. */
int tb_cmp_runs(const tb_rescase *const *old, int ko,
                const tb_rescase *const *nw, int kn, const tb_cmp_opts *opts,
                tb_cmp_case *out);

/* "regressed", "improved", "unchanged", "inconclusive", "failure", "fixed",
 * "status-changed", "counters", "added", "removed" or the shared status
 * ("unavailable"...): one word per case for tables. */
const char *tb_cmp_case_verdict(const tb_cmp_case *c);
/* Did the two sides run different kernels (impl names differ)? */
bool tb_cmp_case_impl_changed(const tb_cmp_case *c);

/* Human-readable report: a table, then counter and status changes,
 * added and removed cases, a summary line and notes.  markdown selects
 * Markdown tables and lists instead of aligned text.  color (text only;
 * NULL: none) gives the escape that starts a verdict word in the
 * table ("" for none; ended by "\033[0m"). */
void tb_cmp_print(FILE *f, const tb_cmp *c, bool markdown,
                  const char *(*color)(const char *word));

/* The JSON form (schema "tbench.compare/1", docs/FORMAT.md); NULL on
 * allocation failure.  Caller frees with cJSON_Delete. */
cJSON *tb_cmp_json(const tb_cmp *c);

#endif
