/* History of a matrix over several runs: per case the series of medians
 * and the runs where it stepped up or down (`tbench history`; rules and
 * the JSON form in docs/FORMAT.md, "history").
 *
 * Change points: the log medians y of the runs where the case is ok are
 * fitted with a piecewise-constant function by optimal partitioning
 * (exact dynamic programming, least squares), each extra segment costing
 * beta = penalty * sigma^2 * max(1, ln n), where sigma is the larger of
 * the series' own noise (1.4826 * MAD of consecutive differences /
 * sqrt 2) and the runs' within-run noise (median ci_rel / 3.92).  Steps
 * smaller than the threshold are then merged away, smallest first.
 * With two ok runs the one candidate step is between them.  Every
 * candidate step is then judged by compare's verdict (tb_cmp_runs: the
 * runs of the segment before against the runs of the segment after,
 * base/verdict.h): a step that is not regressed or improved is merged
 * away (the one with the largest p first, then the rest judged again),
 * so every step history reports is one `tbench compare` calls on those
 * runs, and on two files history and compare agree. */
#ifndef TB_REPORT_HISTORY_H
#define TB_REPORT_HISTORY_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "resultsio.h"

#define TB_HISTORY_SCHEMA "tbench.history/1"

typedef struct tb_hist_opts {
    double threshold; /* smallest step reported, fraction (0.02) */
    double penalty;   /* beta = penalty * sigma^2 * max(1, ln n) (4) */
    double alpha;     /* the steps' verdict: compare's --alpha (0.01) */
} tb_hist_opts;

void tb_hist_opts_default(tb_hist_opts *o);

/* Optimal partitioning of y[0..n) (n >= 1) into segments minimizing the
 * sum of squared deviations from each segment's mean plus beta per
 * segment; then, while two neighbouring segments' medians differ by less
 * than min_step (in y's units), the closest pair is merged.  Writes the
 * first index of each segment to starts (starts[0] = 0; room for n) and
 * returns the number of segments, or TB_EINVAL (also when a y is not
 * finite) / TB_ENOMEM. */
int tb_changepoints(const double *y, int n, double beta, double min_step,
                    int *starts);

typedef struct tb_hist_step {
    int run;          /* index of the first run after the step */
    double before_ns; /* median of the segment before and after */
    double after_ns;
    double change; /* after / before - 1 */
    /* compare's verdict on the runs before against the runs after:
     * TB_RES_VERDICT_REGRESSED or _IMPROVED, with its p and CI */
    int verdict;
    double p, ci_low, ci_high;
} tb_hist_step;

typedef struct tb_hist_case {
    const char *id;
    const tb_rescase **rc; /* per run, NULL when the run lacks the case */
    int n_ok;              /* runs where it is ok */
    double sigma;          /* noise used for the penalty (log units) */
    int n_seg;
    int *seg_first, *seg_last; /* run indices, inclusive */
    double *seg_median;        /* ns */
    int n_steps;               /* n_seg - 1 */
    tb_hist_step *steps;
} tb_hist_case;

typedef struct tb_history {
    tb_hist_opts opts;
    tb_resfile *const *files; /* not owned, oldest first */
    int k;
    int n;
    tb_hist_case *cases; /* in order of first appearance */
} tb_history;

/* Build the history of k >= 1 runs, oldest first.  Every file after the
 * first must share a case id with an earlier one (else TB_EINVAL and
 * "FILE: no case id in common with the earlier runs" in err).  The files
 * must outlive *out.  0, TB_EINVAL or TB_ENOMEM; free with
 * tb_history_free. */
int tb_history_build(tb_resfile *const *files, int k,
                     const tb_hist_opts *opts, tb_history *out, char *err,
                     size_t errlen);
void tb_history_free(tb_history *h);

/* Table: one row per case (runs ok, first and last median, range,
 * noise, steps with the run each happened at), then the list of runs.
 * markdown selects a Markdown table. */
void tb_history_print(FILE *f, const tb_history *h, bool markdown);

/* The JSON data (schema "tbench.history/1") for charts.  NULL on
 * allocation failure. */
cJSON *tb_history_json(const tb_history *h);

#endif
