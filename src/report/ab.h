/* Verdicts of a paired A/B comparison (`tbench ab`, rules in
 * docs/FORMAT.md, "ab"): from the block values of both builds to, per
 * case, the change, its CI, the p value (Holm-adjusted over the cases),
 * the minimum detectable effect and a verdict.
 *
 * For a case with n blocks where both builds were ok, d_i = ln(new_i /
 * old_i) (src/base/abstats.h):
 *   - change = exp(median d) - 1; ci = exp(bootstrap 95% CI of median d)
 *     - 1 (TB_AB_RESAMPLES resamples, seeded by the case);
 *   - p = the two-sided Wilcoxon signed-rank p of d; p_holm its Holm
 *     adjustment over the m cases that have a p;
 *   - mde = expm1(tb_ab_mde_boot(d, n, alpha / m, 0.8,
 *     TB_AB_POWER_RESAMPLES)), raised to the threshold: the smallest
 *     change this case could call, here, now, given its own blocks;
 *   - the verdict of base/verdict.h (tb_verdict_judge with p_holm, floor
 *     = threshold and the mde above): regressed when p_holm < alpha,
 *     change > threshold and the CI lies above 0; improved when p_holm <
 *     alpha, change < -threshold/(1 + threshold) and the CI lies below
 *     0; unchanged only when the CI lies inside +-threshold and mde <=
 *     threshold; otherwise inconclusive (mde "none" is always
 *     inconclusive unless a change is found).
 * A case that is not ok in every block on both sides is "error" (a
 * status failure, like compare's), with the first message, unless the
 * case was unsupported, unavailable or skipped: "skipped", not a failure.
 *
 * Sequential (adaptive) A/B, o->sequential: the blocks are looked at
 * several times and a case stops at a look of its own (c->look, 1-based).
 * Look k spends alpha_k = alpha / (k (k + 1)) of the level (the sum over
 * every k is alpha: a Bonferroni split over the looks, valid whatever
 * rule stopped the case).  A case that stopped at look k is judged with
 * p' = min(1, p / s_k), s_k = 1 / (k (k + 1)), in Holm's adjustment over
 * the cases (P(p' <= t) <= sum_k t s_k = t under no change, so the
 * family-wise level stays alpha), its MDE at level alpha_k / m, and its
 * CI at level 1 - 0.05 s_k (97.5% at look 1, 99.17% at look 2...). */
#ifndef TB_REPORT_AB_H
#define TB_REPORT_AB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "../base/verdict.h"

#define TB_AB_SCHEMA "tbench.ab/2"
#define TB_AB_RESAMPLES 4000
#define TB_AB_POWER_RESAMPLES 200

/* base/verdict.h's four verdicts of a change, then ab's own words. */
typedef enum {
    TB_AB_REGRESSED = TB_RES_VERDICT_REGRESSED,
    TB_AB_IMPROVED = TB_RES_VERDICT_IMPROVED,
    TB_AB_UNCHANGED = TB_RES_VERDICT_UNCHANGED,
    TB_AB_INCONCLUSIVE = TB_RES_VERDICT_INCONCLUSIVE,
    TB_AB_ERROR = TB_RES_NVERDICTS,
    TB_AB_SKIPPED, /* unsupported, unavailable or skipped on a side */
} tb_ab_verdict;

const char *tb_ab_verdict_name(tb_ab_verdict v);

/* Why a case of a sequential run stopped (tb_ab_case.stop): the words
 * of ab.json's "stop" ("fixed" in a fixed design). */
#define TB_AB_STOP_TARGET "target"         /* its MDE reached the target */
#define TB_AB_STOP_DECIDED "decided"       /* regressed or improved */
#define TB_AB_STOP_BUDGET "budget"         /* --budget spent */
#define TB_AB_STOP_MAX_BLOCKS "max-blocks" /* --max-blocks reached */
#define TB_AB_STOP_ERROR "error"           /* failed, or the run broke */

/* One case: the input (id, blocks, status) and the analysis. */
typedef struct tb_ab_case {
    char id[512];
    int n;           /* blocks filled below */
    double *old_ns;  /* block values (caller's arrays, n entries) */
    double *new_ns;
    bool failed;     /* a block was not ok on a side */
    bool skipped;    /* ... because the case does not run there */
    char message[640]; /* why, when failed */
    /* analysis (tb_ab_analyze) */
    double change, ci_low, ci_high; /* relative, e.g. 0.02 = +2% */
    double p, p_holm, mde;          /* mde: INFINITY when none */
    double old_median_ns, new_median_ns;
    bool exact;
    tb_ab_verdict verdict;
    /* sequential: the look the case stopped at (1-based; 0 in a fixed
     * design) and why (a TB_AB_STOP_* word; NULL in a fixed design) */
    int look;
    const char *stop;
    double ci_level; /* of ci_low..ci_high (analysis) */
} tb_ab_case;

typedef struct tb_ab_opts {
    double alpha;     /* family-wise, over the cases (default 0.05) */
    double threshold; /* smallest change that can count (default 0.005) */
    double max_mde;   /* --max-mde: a judged case with a larger mde is
                         unresolved and fails (INFINITY: no limit) */
    uint64_t seed;
    bool sequential; /* judge each case at its look (above) */
    int power_resamples; /* of the MDE (TB_AB_POWER_RESAMPLES); 0: no
                            MDE (INFINITY), so no case is unchanged */
} tb_ab_opts;

/* The share of alpha that look k (>= 1) spends: 1 / (k (k + 1)); 1 for
 * k = 0 (a fixed design). */
double tb_ab_look_share(int k);

void tb_ab_opts_default(tb_ab_opts *o);

/* Analyse cases[0..m).  Returns 0, TB_EINVAL or TB_ENOMEM. */
int tb_ab_analyze(tb_ab_case *cases, size_t m, const tb_ab_opts *o);

/* Look k (1-based) of a sequential A/B (o->sequential) after `blocks`
 * blocks: every open case (stop NULL) gets n = blocks and look = k, then
 * all cases are analysed (a stopped case keeps its n and look).  An open
 * case stops: "error" (failed or skipped), "decided" (regressed or
 * improved at its look), "target" (its MDE at most target); then, when
 * final_why is not NULL (the budget or the block limit ends the run
 * here), every case still open stops with final_why.  Returns the
 * number of cases still open, or -1 after TB_ENOMEM/TB_EINVAL in *rc. */
int tb_ab_look(tb_ab_case *cases, size_t m, const tb_ab_opts *o, int k,
               int blocks, double target, const char *final_why, int *rc);

/* The number of judged cases whose mde is above o->max_mde. */
size_t tb_ab_unresolved(const tb_ab_case *cases, size_t m,
                        const tb_ab_opts *o);

/* The number of cases with verdict v. */
size_t tb_ab_count(const tb_ab_case *cases, size_t m, tb_ab_verdict v);

/* The table (one line per case and a summary).  color (NULL: none)
 * gives the escape that starts a verdict word ("" for none; ended by
 * "\033[0m"). */
void tb_ab_print(FILE *f, const tb_ab_case *cases, size_t m,
                 const tb_ab_opts *o, const char *(*color)(const char *));

/* The same as Markdown, for a pull request's page or
 * $GITHUB_STEP_SUMMARY: a heading with the outcome, the counts, a table
 * of the cases (changes first), the notes.  stopped: why the blocks
 * ended early, or NULL. */
void tb_ab_print_md(FILE *f, const tb_ab_case *cases, size_t m,
                    const tb_ab_opts *o, const char *stopped);

/* The "tbench.ab/2" document (docs/FORMAT.md); builds names the two
 * executables and what they said they are: {"old": {...}, "new":
 * {...}} (taken over).  NULL on allocation failure. */
cJSON *tb_ab_json(const tb_ab_case *cases, size_t m, const tb_ab_opts *o,
                  cJSON *builds, cJSON *settings);

#endif
