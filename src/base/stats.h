/* Summary statistics of timing samples.
 *
 * Definitions (documented in docs/FORMAT.md, tested in tests/test_stats.c):
 * - quantiles (median, p5, p95, Q1, Q3) use linear interpolation between
 *   order statistics, as NumPy's default ("linear", type 7);
 * - stddev is the sample standard deviation (n-1 denominator; 0 if n<2);
 * - mad is the raw median absolute deviation from the median (unscaled);
 * - ci_low/ci_high: percentile bootstrap 95% CI of the median, B resamples
 *   drawn with a seeded xoshiro256** generator, so it is reproducible;
 * - outliers: Tukey fences with Q1/Q3; mild = beyond 1.5 IQR but within
 *   3 IQR, severe = beyond 3 IQR, counted separately below and above. */
#ifndef TB_BASE_STATS_H
#define TB_BASE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

typedef struct tb_outliers {
    int low_mild, low_severe, high_mild, high_severe;
} tb_outliers;

typedef struct tb_stats {
    size_t n;
    double min, max, median, mean, stddev, mad, p5, p95, q1, q3;
    double ci_low, ci_high; /* bootstrap 95% CI of the median */
    tb_outliers outliers;
} tb_stats;

#define TB_STATS_BOOTSTRAP_DEFAULT 2000

/* Quantile q in [0,1] of sorted[0..n), NumPy "linear" method. n >= 1. */
double tb_quantile_sorted(const double *sorted, size_t n, double q);

/* Compute every field of *out from x[0..n).  x is not modified.  n >= 1,
 * no NaN in x.  `resamples` (>= 1) bootstrap resamples seeded by `seed`.
 * A value exactly on a Tukey fence is not an outlier.
 * Returns 0, TB_EINVAL (NULL, n == 0, resamples < 1, NaN) or TB_ENOMEM. */
int tb_stats_compute(const double *x, size_t n, int resamples, uint64_t seed,
                     tb_stats *out);

/* Bootstrap 95% CI of the median only (used by the runner's stopping
 * rule without computing everything else); the same CI as
 * tb_stats_compute for the same seed and resamples.  Returns 0,
 * TB_EINVAL (as tb_stats_compute) or TB_ENOMEM. */
int tb_stats_median_ci(const double *x, size_t n, int resamples,
                       uint64_t seed, double *lo, double *hi);

/* Order statistics shared by the runner, compare and history. */

/* qsort comparator for doubles, ascending (no NaN). */
int tb_cmp_double(const void *pa, const void *pb);

/* Rearrange a[0..n) so a[k] holds the k-th smallest value, everything
 * before it <= a[k] and everything after >= a[k] (like C++ nth_element).
 * No NaN.  k < n. */
void tb_select_kth(double *a, size_t n, size_t k);

/* Median of a[0..n), n >= 1, reordering a: the same value as
 * tb_quantile_sorted of the sorted array at q = 0.5. */
double tb_median_inplace(double *a, size_t n);

/* Quantile q in [0, 1] of a[0..n), n >= 1, reordering a: the value of
 * tb_quantile_sorted of the sorted array at q (a selection, O(n), where
 * sorting took O(n log n): compare's bootstrap intervals). */
double tb_quantile_select(double *a, size_t n, double q);

#endif
