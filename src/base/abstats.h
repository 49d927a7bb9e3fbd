/* Statistics of a paired A/B comparison (tbench ab, docs/FORMAT.md).
 *
 * The data of one case are n paired blocks: in block i both builds
 * measured the case (in random order, or side by side), giving the
 * per-block ratio r_i = new_i / old_i of their block values.  Everything
 * here works on d_i = ln r_i, so a change and its inverse are symmetric:
 * - the Wilcoxon signed-rank test of "median d = 0", two-sided, with
 *   SciPy's defaults (scipy.stats.wilcoxon, zero_method "wilcox": zero
 *   differences are dropped; exact distribution when at most 50 nonzero
 *   differences and no ties among |d|, otherwise the normal approximation
 *   without continuity correction and with the tie correction of the
 *   variance);
 * - a percentile bootstrap CI of the median of d (seeded xoshiro256**,
 *   so the same data give the same interval);
 * - Holm's step-down adjustment of the p values of all cases;
 * - the minimum detectable effect of a case: the smallest |d| the test
 *   would detect with 80% power at the per-case level alpha/m that Holm
 *   applies to the smallest p (tb_ab_mde_boot, from the case's own
 *   blocks; tb_ab_mde, the normal-theory formula, for comparison). */
#ifndef TB_BASE_ABSTATS_H
#define TB_BASE_ABSTATS_H

#include <stddef.h>
#include <stdint.h>

/* The result of the signed-rank test. */
typedef struct tb_wilcoxon {
    size_t n;      /* nonzero differences used */
    double w_plus; /* sum of the ranks of the positive differences */
    double p;      /* two-sided p value (1 when n == 0) */
    int exact;     /* 1: exact distribution, 0: normal approximation */
} tb_wilcoxon;

/* Signed-rank test of d[0..n) against 0 (d is not modified).  Returns 0,
 * TB_EINVAL (NULL or a NaN) or TB_ENOMEM. */
int tb_wilcoxon_test(const double *d, size_t n, tb_wilcoxon *out);

/* Percentile bootstrap CI, at confidence `level` (e.g. 0.95), of the
 * median of d[0..n): `resamples` resamples drawn by a tb_rng seeded
 * with seed; the interval is the (1-level)/2 and (1+level)/2 quantiles
 * (tb_quantile_sorted) of the resampled medians.  n >= 1.  Returns 0,
 * TB_EINVAL or TB_ENOMEM. */
int tb_ab_bootstrap_median(const double *d, size_t n, int resamples,
                           double level, uint64_t seed, double *lo,
                           double *hi);

/* Holm's adjusted p values: adj[i] = max over the steps up to p[i]'s
 * rank k (0-based, ascending) of min(1, (m - k) * p_(k)).  p and adj may
 * be the same array.  Returns 0, TB_EINVAL or TB_ENOMEM. */
int tb_holm(const double *p, size_t m, double *adj);

/* The smallest two-sided exact signed-rank p value with n nonzero
 * differences: 2 / 2^n (1 when n == 0). */
double tb_wilcoxon_min_p(size_t n);

/* Minimum detectable effect, as |ln ratio|, of a case with n blocks
 * whose log ratios have the robust spread s (1.4826 * MAD, the normal
 * sigma for normal data), tested two-sided at level alpha with 80%
 * power: (z(1 - alpha/2) + z(0.8)) * s / sqrt(n * 3/pi), the normal
 * power formula with the signed-rank test's efficiency 3/pi relative
 * to the t test.  INFINITY when no n-block outcome can reach alpha
 * (tb_wilcoxon_min_p(n) > alpha): more blocks are needed. */
double tb_ab_mde(size_t n, double s, double alpha);

/* Minimum detectable effect of a case from its own blocks, as |ln
 * ratio|: the smallest shift delta such that the signed-rank test at
 * level alpha rejects, with probability >= power, samples of n blocks
 * drawn with replacement from d - HL(d) + delta (HL: the Hodges-Lehmann
 * estimate, median of the Walsh averages; so: the case's own
 * noise, heavy tails and all, shifted), each with a small normal jitter
 * (sd 0.5 * 1.4826 MAD * n^(-1/5): a smoothed bootstrap, so repeated
 * draws of one block do not look like ties that weaken the test).  `resamples` draws per delta
 * (the same draws for every delta), seeded; delta by doubling from
 * 1e-4, then 30 bisection steps.  INFINITY when tb_wilcoxon_min_p(n) >
 * alpha or no delta up to ln 10 has the power.  NAN on a bad argument
 * or out of memory. */
double tb_ab_mde_boot(const double *d, size_t n, double alpha, double power,
                      int resamples, uint64_t seed);

/* Standard normal quantile (inverse CDF) of p in (0, 1). */
double tb_norm_quantile(double p);

#endif
