/* The one verdict on a measured change: regressed, improved, unchanged
 * or inconclusive (docs/FORMAT.md, "Verdicts").  `tbench compare`, `run
 * --baseline`, `history`'s steps, `ab` and the report all judge a change
 * with tb_verdict_judge; each brings its own estimate, interval and test
 * (compare: bootstrap CI and Mann-Whitney U over the runs' samples; ab:
 * the paired blocks' Wilcoxon test, Holm-adjusted), and this function
 * alone turns them into a word. */
#ifndef TB_BASE_VERDICT_H
#define TB_BASE_VERDICT_H

#include "result_schema.h"

/* What a verdict is made from.  All changes are relative (new/old - 1:
 * +0.10 is 10% slower); NAN where unknown. */
typedef struct tb_verdict_in {
    double change;          /* the point estimate */
    double ci_low, ci_high; /* its confidence interval */
    double p;               /* the test's p value (NAN: no test) */
    double alpha;           /* significance level for p */
    double threshold;       /* T: the smallest change that matters */
    double floor;           /* a change must pass this to count; >= T
                               (compare's noise floor; T in ab) */
    double mde;             /* the smallest change the data can resolve;
                               INFINITY when none can be */
} tb_verdict_in;

/* The verdict (TB_RES_VERDICT_REGRESSED, _IMPROVED, _UNCHANGED or
 * _INCONCLUSIVE):
 *   regressed     p < alpha, ci_low > 0 and change > floor;
 *   improved      p < alpha, ci_high < 0 and 1 + change < 1/(1 + floor);
 *   unchanged     an equivalence test: the whole CI lies inside the
 *                 band [1/(1 + T) - 1, T] and mde <= T, so a change of
 *                 T would have been seen;
 *   inconclusive  otherwise: the CI spans a bound of the band, or the
 *                 data cannot resolve T (mde > T), or a figure is NAN.
 * A detected change never needs mde <= T: the MDE limits only what a
 * non-detection can claim. */
tb_res_verdict tb_verdict_judge(const tb_verdict_in *in);

/* Is v one of the four verdicts of a change (not a status word)? */
static inline int tb_verdict_is_change(int v)
{
    return v == TB_RES_VERDICT_REGRESSED || v == TB_RES_VERDICT_IMPROVED ||
           v == TB_RES_VERDICT_UNCHANGED || v == TB_RES_VERDICT_INCONCLUSIVE;
}

#endif
