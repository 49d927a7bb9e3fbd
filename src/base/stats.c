/* Summary statistics of timing samples: see stats.h for the definitions.
 *
 * All scratch memory here is plain malloc/free: it belongs to the harness,
 * not to a measured op, so it must not show up in the tracked allocator's
 * counters. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* ---- order statistics ----------------------------------------------- */

/* NumPy's _lerp: a + (b-a)*t, computed from the nearer end so t = 1
 * returns b exactly and results match np.quantile bit for bit. */
static inline double lerp(double a, double b, double t)
{
    double d = b - a;
    return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

double tb_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 1 || !(q > 0.0))
        return sorted[0];
    if (q >= 1.0)
        return sorted[n - 1];
    double h = (double)(n - 1) * q;
    double fl = floor(h);
    size_t i = (size_t)fl;
    if (i >= n - 1)
        return sorted[n - 1];
    return lerp(sorted[i], sorted[i + 1], h - fl);
}

int tb_cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static inline void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Rearrange a[0..n) so a[k] holds the k-th smallest value, everything
 * before it is <= a[k] and everything after is >= a[k] (like C++
 * nth_element).  No NaNs.  Hoare partitioning around a median-of-three
 * pivot: it splits runs of equal values evenly, so ties (common in timer
 * samples) do not make it quadratic.  Signed indices because j can step
 * just below lo. */
void tb_select_kth(double *a, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
    while (hi - lo >= 16) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        if (a[mid] < a[lo])
            swap_d(&a[mid], &a[lo]);
        if (a[hi] < a[lo])
            swap_d(&a[hi], &a[lo]);
        if (a[hi] < a[mid])
            swap_d(&a[hi], &a[mid]);
        /* a[lo] <= pivot <= a[hi]: sentinels for both scans. */
        double pivot = a[mid];
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                swap_d(&a[i], &a[j]);
                i++;
                j--;
            }
        }
        /* a[lo..j] <= pivot <= a[i..hi]; anything between equals pivot. */
        if (kk <= j)
            hi = j;
        else if (kk >= i)
            lo = i;
        else
            return;
    }
    for (ptrdiff_t i = lo + 1; i <= hi; i++) {
        double v = a[i];
        ptrdiff_t j = i - 1;
        while (j >= lo && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

/* Median of a[0..n), n >= 1, reordering a.  Same value as
 * tb_quantile_sorted(sorted(a), n, 0.5). */
double tb_median_inplace(double *a, size_t n)
{
    size_t k = (n - 1) / 2;
    tb_select_kth(a, n, k);
    if (n % 2)
        return a[k];
    /* After selection everything past k is >= a[k]; the next order
     * statistic is the smallest of those. */
    double next = a[k + 1];
    for (size_t i = k + 2; i < n; i++)
        if (a[i] < next)
            next = a[i];
    return lerp(a[k], next, 0.5);
}

double tb_quantile_select(double *a, size_t n, double q)
{
    if (n == 1 || !(q > 0.0) || q >= 1.0 ||
        (size_t)floor((double)(n - 1) * q) >= n - 1) {
        size_t k = !(q > 0.0) ? 0 : n - 1, at = 0;
        for (size_t i = 1; i < n; i++) /* the smallest or the largest */
            if (k ? a[i] > a[at] : a[i] < a[at])
                at = i;
        return a[at];
    }
    double h = (double)(n - 1) * q, fl = floor(h);
    size_t i = (size_t)fl;
    tb_select_kth(a, n, i);
    double next = a[i + 1]; /* the smallest of those past i */
    for (size_t j = i + 2; j < n; j++)
        if (a[j] < next)
            next = a[j];
    return lerp(a[i], next, h - fl);
}

/* ---- bootstrap ------------------------------------------------------ */

/* Ascending order of indices into keys (qsort_r), for the ranks below. */
static int cmp_index(const void *a, const void *b, void *keys)
{
    const double *k = keys;
    double x = k[*(const uint32_t *)a], y = k[*(const uint32_t *)b];
    return (x > y) - (x < y);
}

/* Percentile bootstrap 95% CI of the median of x[0..n).  scratch holds n
 * doubles, meds holds `resamples` doubles; both are overwritten.  Resample
 * b draws n indices into x (in x's own order, so callers that pass the
 * same x, seed and resamples get identical results).
 *
 * A resample's median is found by counting, not by copying and
 * selecting: with x sorted once (scratch) and rank[i] the sorted position
 * of x[i], a draw of index i adds one to count[rank[i]], and the order
 * statistics the median needs are where the running count crosses them.
 * The values are the same as selecting within the drawn copy (the same
 * multiset), at a fraction of the cost: this runs after every few samples
 * of every case (the stopping rule). Returns 0 or TB_ENOMEM. */
static int bootstrap_median_ci(const double *x, size_t n, int resamples,
                               uint64_t seed, double *scratch, double *meds,
                               double *lo, double *hi)
{
    if (n == 1) {
        /* Every resample is {x[0]}; skip the draws. */
        *lo = *hi = x[0];
        return 0;
    }
    if (n > UINT32_MAX)
        return TB_EINVAL;
    uint32_t *rank = malloc(2 * n * sizeof *rank);
    if (!rank)
        return TB_ENOMEM;
    uint32_t *count = rank + n;
    for (size_t i = 0; i < n; i++)
        count[i] = (uint32_t)i; /* indices, sorted by value below */
    qsort_r(count, n, sizeof *count, cmp_index, (void *)x);
    for (size_t r = 0; r < n; r++) {
        rank[count[r]] = (uint32_t)r;
        scratch[r] = x[count[r]];
    }
    const size_t k = (n - 1) / 2; /* the median's lower order statistic */
    tb_rng rng;
    tb_rng_seed(&rng, seed);
    for (int b = 0; b < resamples; b++) {
        memset(count, 0, n * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[rank[(size_t)tb_rng_below(&rng, n)]]++;
        size_t r = 0, seen = count[0];
        while (seen <= k)
            seen += count[++r];
        double lower = scratch[r];
        if (n % 2) {
            meds[b] = lower;
            continue;
        }
        /* Even n: the next order statistic is the same value if more
         * draws of it lie past k, else the next drawn value. */
        if (seen <= k + 1) {
            while (count[++r] == 0)
                ;
        }
        meds[b] = lerp(lower, scratch[r], 0.5);
    }
    free(rank);
    qsort(meds, (size_t)resamples, sizeof *meds, tb_cmp_double);
    *lo = tb_quantile_sorted(meds, (size_t)resamples, 0.025);
    *hi = tb_quantile_sorted(meds, (size_t)resamples, 0.975);
    return 0;
}

static int has_nan(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(x[i]))
            return 1;
    return 0;
}

/* malloc for n doubles, NULL on failure or if the size overflows. */
static double *alloc_doubles(size_t n)
{
    if (n > SIZE_MAX / sizeof(double))
        return NULL;
    return malloc(n * sizeof(double));
}

int tb_stats_median_ci(const double *x, size_t n, int resamples,
                       uint64_t seed, double *lo, double *hi)
{
    if (!x || n == 0 || resamples < 1 || !lo || !hi)
        return TB_EINVAL;
    double *scratch = alloc_doubles(n);
    double *meds = alloc_doubles((size_t)resamples);
    if (!scratch || !meds) {
        free(scratch);
        free(meds);
        return TB_ENOMEM;
    }
    int err = 0;
    if (has_nan(x, n))
        err = TB_EINVAL;
    else
        err = bootstrap_median_ci(x, n, resamples, seed, scratch, meds, lo,
                                  hi);
    free(scratch);
    free(meds);
    return err;
}

/* ---- everything ----------------------------------------------------- */

/* Sample mean and standard deviation (n-1), two passes: the second pass
 * sums deviations from the first-pass mean, and the sum of those
 * deviations (zero in exact arithmetic) corrects the rounding of both. */
static void mean_stddev(const double *x, size_t n, double *mean,
                        double *stddev)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    double m = sum / (double)n;
    double sd = 0.0, sd2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - m;
        sd += d;
        sd2 += d * d;
    }
    *mean = m + sd / (double)n;
    if (n < 2) {
        *stddev = 0.0;
        return;
    }
    double var = (sd2 - sd * sd / (double)n) / (double)(n - 1);
    *stddev = var > 0.0 ? sqrt(var) : 0.0;
}

/* Tukey fences: mild is beyond 1.5 IQR but not beyond 3 IQR, severe is
 * beyond 3 IQR; a value exactly on a fence is not beyond it. */
static tb_outliers count_outliers(const double *x, size_t n, double q1,
                                  double q3)
{
    double iqr = q3 - q1;
    double lo_mild = q1 - 1.5 * iqr, lo_sev = q1 - 3.0 * iqr;
    double hi_mild = q3 + 1.5 * iqr, hi_sev = q3 + 3.0 * iqr;
    tb_outliers o = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (v < lo_sev)
            o.low_severe++;
        else if (v < lo_mild)
            o.low_mild++;
        else if (v > hi_sev)
            o.high_severe++;
        else if (v > hi_mild)
            o.high_mild++;
    }
    return o;
}

int tb_stats_compute(const double *x, size_t n, int resamples, uint64_t seed,
                     tb_stats *out)
{
    if (!x || n == 0 || resamples < 1 || !out)
        return TB_EINVAL;
    double *sorted = alloc_doubles(n);
    double *scratch = alloc_doubles(n);
    double *meds = alloc_doubles((size_t)resamples);
    if (!sorted || !scratch || !meds) {
        free(sorted);
        free(scratch);
        free(meds);
        return TB_ENOMEM;
    }
    if (has_nan(x, n)) {
        free(sorted);
        free(scratch);
        free(meds);
        return TB_EINVAL;
    }

    tb_stats s;
    memset(&s, 0, sizeof s);
    s.n = n;

    memcpy(sorted, x, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, tb_cmp_double);
    s.min = sorted[0];
    s.max = sorted[n - 1];
    s.median = tb_quantile_sorted(sorted, n, 0.5);
    s.p5 = tb_quantile_sorted(sorted, n, 0.05);
    s.p95 = tb_quantile_sorted(sorted, n, 0.95);
    s.q1 = tb_quantile_sorted(sorted, n, 0.25);
    s.q3 = tb_quantile_sorted(sorted, n, 0.75);
    mean_stddev(sorted, n, &s.mean, &s.stddev);

    for (size_t i = 0; i < n; i++)
        scratch[i] = fabs(sorted[i] - s.median);
    s.mad = tb_median_inplace(scratch, n);

    s.outliers = count_outliers(sorted, n, s.q1, s.q3);

    /* From x, not sorted: tb_stats_median_ci(x, ...) must agree. */
    int rc = bootstrap_median_ci(x, n, resamples, seed, scratch, meds,
                                 &s.ci_low, &s.ci_high);

    free(sorted);
    free(scratch);
    free(meds);
    if (rc)
        return rc;
    *out = s;
    return 0;
}
