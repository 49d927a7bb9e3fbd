/* Tests for src/harness/stats.c.
 *
 * Every reference number below was computed independently with NumPy
 * 1.24 (/usr/bin/python3) and pasted as a literal; the Python expression
 * that produced each block is in the comment above it.  Python names:
 *   import numpy as np
 *   x = np.array(<the C array of the same test>)
 *   med = np.median(x); q1, q3 = np.quantile(x, [0.25, 0.75]); iqr = q3 - q1
 * Quantiles use NumPy's default method ("linear"), which stats.c copies
 * down to the order of the interpolation, so they are compared at 1e-12
 * relative; mean/stddev/MAD differ from NumPy only in summation order. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/stats.h"
#include "base/error.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define RTOL 1e-12
#define B TB_STATS_BOOTSTRAP_DEFAULT
#define SEED UINT64_C(0x7b5eed)

/* Fails with both values printed unless |got - want| <= rtol*max(1,|want|). */
#define assert_close(got, want, rtol)                                     \
    check_close((got), (want), (rtol), #got, __FILE__, __LINE__)

static void check_close(double got, double want, double rtol,
                        const char *what, const char *file, int line)
{
    double tol = rtol * (fabs(want) > 1.0 ? fabs(want) : 1.0);
    if (!(fabs(got - want) <= tol)) {
        print_error("%s:%d: %s = %.17g, expected %.17g (tol %.3g)\n", file,
                    line, what, got, want, tol);
        fail();
    }
}

/* Expected summary: same fields as tb_stats minus the CI. */
typedef struct {
    double min, max, median, mean, stddev, mad, p5, p95, q1, q3;
    int low_severe, low_mild, high_mild, high_severe;
} expect;

/* Runs tb_stats_compute and checks every field against e, plus the
 * properties every CI must have. */
static void check_stats(const double *x, size_t n, const expect *e)
{
    tb_stats s;
    assert_int_equal(tb_stats_compute(x, n, B, SEED, &s), 0);
    assert_int_equal(s.n, n);
    assert_close(s.min, e->min, RTOL);
    assert_close(s.max, e->max, RTOL);
    assert_close(s.median, e->median, RTOL);
    assert_close(s.mean, e->mean, RTOL);
    assert_close(s.stddev, e->stddev, RTOL);
    assert_close(s.mad, e->mad, RTOL);
    assert_close(s.p5, e->p5, RTOL);
    assert_close(s.p95, e->p95, RTOL);
    assert_close(s.q1, e->q1, RTOL);
    assert_close(s.q3, e->q3, RTOL);
    assert_int_equal(s.outliers.low_severe, e->low_severe);
    assert_int_equal(s.outliers.low_mild, e->low_mild);
    assert_int_equal(s.outliers.high_mild, e->high_mild);
    assert_int_equal(s.outliers.high_severe, e->high_severe);
    assert_true(s.ci_low <= s.median);
    assert_true(s.median <= s.ci_high);
    assert_true(s.min <= s.ci_low);
    assert_true(s.ci_high <= s.max);
}

/* ---- datasets -------------------------------------------------------- */

static const double odd7[] = {3.1, 1.4, 5.9, 2.6, 5.3, 5.8, 9.7};
static const double even8[] = {12.5, 10.0, 11.25, 13.0,
                               9.5,  10.75, 14.0, 12.0};
static const double one1[] = {42.0};
/* Ties everywhere; MAD is 0 and 8.0 sits exactly on the upper mild fence
 * (q3 + 1.5*iqr == 8.0), so it must not count as an outlier. */
static const double ties11[] = {5, 3, 5, 5, 2, 3, 5, 8, 3, 5, 5};
/* Fences (NumPy): q1-3iqr = 9.0, q1-1.5iqr = 9.45, q3+1.5iqr = 10.65,
 * q3+3iqr = 11.1: 2.0 low severe; 9.4, 9.3 low mild; 10.9 high mild;
 * 25.0, 31.5 high severe. */
static const double outl20[] = {10.0, 10.2, 10.1, 9.9,  10.3, 9.8,  10.0,
                                10.1, 10.2, 9.9,  10.0, 10.1, 10.2, 9.9,
                                9.4,  2.0,  10.9, 25.0, 31.5, 9.3};
/* x = np.round(np.random.default_rng(20240607).normal(100.0, 5.0, 200), 3)
 * printed with repr(); 200 values. */
static const double big200[] = {
    99.572, 97.856, 85.633, 116.226, 100.733, 106.558, 101.755,
    96.398, 104.083, 89.412, 101.469, 102.82, 95.106, 94.993,
    102.858, 102.962, 94.29, 92.793, 110.467, 102.566, 100.147,
    94.159, 95.557, 97.208, 97.206, 97.133, 110.29, 102.891,
    92.913, 102.332, 90.241, 95.699, 98.085, 104.422, 93.755,
    99.524, 100.448, 92.486, 97.796, 104.407, 99.953, 96.203,
    98.676, 101.391, 95.919, 91.09, 105.003, 99.552, 98.064,
    98.224, 105.681, 100.549, 106.33, 109.235, 92.234, 101.423,
    102.285, 111.177, 102.282, 106.41, 94.305, 101.353, 101.209,
    103.171, 94.931, 96.422, 97.034, 96.38, 101.423, 100.425,
    102.827, 105.73, 89.811, 98.628, 100.896, 96.913, 89.137,
    95.139, 93.405, 101.378, 87.371, 102.02, 95.95, 96.735,
    103.061, 99.555, 105.179, 92.377, 94.294, 101.348, 102.038,
    99.651, 98.962, 95.881, 103.561, 104.353, 91.796, 96.171,
    102.13, 95.376, 100.796, 97.148, 107.658, 99.699, 109.376,
    101.092, 103.646, 100.645, 103.391, 104.591, 95.594, 103.538,
    99.658, 88.049, 99.17, 92.969, 101.04, 94.089, 101.634,
    99.861, 97.961, 102.48, 98.003, 102.377, 92.249, 100.435,
    103.728, 99.888, 97.594, 100.436, 103.244, 101.421, 95.635,
    92.708, 98.775, 93.187, 99.343, 108.827, 97.452, 100.311,
    99.466, 98.683, 96.208, 113.751, 98.758, 103.167, 94.017,
    104.002, 102.079, 96.266, 92.107, 90.659, 100.573, 99.699,
    102.104, 101.789, 99.325, 102.566, 90.649, 97.94, 93.087,
    110.379, 103.077, 98.539, 97.047, 104.678, 94.878, 99.964,
    105.224, 101.641, 95.521, 100.883, 100.643, 92.175, 108.3,
    90.922, 96.407, 100.754, 96.07, 99.697, 97.875, 105.629,
    101.064, 104.435, 102.962, 107.101, 98.662, 100.885, 102.272,
    99.043, 96.059, 99.209, 105.239, 105.154, 101.614, 100.691,
    95.375, 103.862, 101.289, 110.324,
};

/* ---- rng ------------------------------------------------------------- */

/* Independent Python reference (64-bit arithmetic masked with M):
 *   M = (1 << 64) - 1
 *   def splitmix64(st):
 *       st = (st + 0x9e3779b97f4a7c15) & M; z = st
 *       z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
 *       z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
 *       return st, z ^ (z >> 31)
 *   def rotl(v, k): return ((v << k) | (v >> (64 - k))) & M
 *   def seed(sd):
 *       s = []; st = sd
 *       for _ in range(4): st, v = splitmix64(st); s.append(v)
 *       return s
 *   def nxt(s):
 *       r = (rotl((s[1] * 5) & M, 7) * 9) & M; t = (s[1] << 17) & M
 *       s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t
 *       s[3] = rotl(s[3], 45); return r
 * splitmix64(0)[1] == 0xe220a8397b1dcdaf also matches the published first
 * output of splitmix64 seeded with 0. */
static void test_rng_seed_state(void **state)
{
    (void)state;
    /* [hex(v) for v in seed(0)] */
    static const uint64_t want0[4] = {
        UINT64_C(0xe220a8397b1dcdaf), UINT64_C(0x6e789e6aa1b965f4),
        UINT64_C(0x06c45d188009454f), UINT64_C(0xf88bb8a8724c81ec)};
    /* [hex(v) for v in seed(12345)] */
    static const uint64_t want1[4] = {
        UINT64_C(0x22118258a9d111a0), UINT64_C(0x346edce5f713f8ed),
        UINT64_C(0x1e9a57bc80e6721d), UINT64_C(0x2d160e7e5c3f42ca)};
    tb_rng r;
    tb_rng_seed(&r, 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(r.s[i], want0[i]);
    tb_rng_seed(&r, 12345);
    for (int i = 0; i < 4; i++)
        assert_int_equal(r.s[i], want1[i]);
}

static void test_rng_xoshiro_outputs(void **state)
{
    (void)state;
    /* s = seed(0); [hex(nxt(s)) for _ in range(5)] */
    static const uint64_t want0[5] = {
        UINT64_C(0x99ec5f36cb75f2b4), UINT64_C(0xbf6e1f784956452a),
        UINT64_C(0x1a5f849d4933e6e0), UINT64_C(0x6aa594f1262d2d2c),
        UINT64_C(0xbba5ad4a1f842e59)};
    /* s = seed(12345); [hex(nxt(s)) for _ in range(5)] */
    static const uint64_t want1[5] = {
        UINT64_C(0xbe6a36374160d49b), UINT64_C(0x214aaa0637a688c6),
        UINT64_C(0xf69d16de9954d388), UINT64_C(0x0c60048c4e96e033),
        UINT64_C(0x8e2076aeed51c648)};
    tb_rng r;
    tb_rng_seed(&r, 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(tb_rng_next(&r), want0[i]);
    tb_rng_seed(&r, 12345);
    for (int i = 0; i < 5; i++)
        assert_int_equal(tb_rng_next(&r), want1[i]);
}

static void test_rng_uniform(void **state)
{
    (void)state;
    /* s = seed(2024); [((nxt(s) >> 11) * 2.0**-53).hex() for _ in range(4)] */
    static const double want[4] = {0x1.c90e2b427aee0p-5,
                                   0x1.906fe7dd14f42p-1,
                                   0x1.272314b15ee50p-4,
                                   0x1.47191d355f150p-3};
    tb_rng r;
    tb_rng_seed(&r, 2024);
    for (int i = 0; i < 4; i++)
        assert_true(tb_rng_uniform(&r) == want[i]);

    /* Range, and a loose sanity check of the mean (sd of the mean of 1e6
     * U(0,1) draws is 2.9e-4; 0.005 is 17 sd). */
    double sum = 0.0, lo = 1.0, hi = 0.0;
    const int draws = 1000000;
    for (int i = 0; i < draws; i++) {
        double u = tb_rng_uniform(&r);
        assert_true(u >= 0.0 && u < 1.0);
        sum += u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    assert_true(fabs(sum / draws - 0.5) < 0.005);
    assert_true(lo < 1e-4 && hi > 1.0 - 1e-4);
}

/* ---- quantiles ------------------------------------------------------- */

static void test_quantile_sorted(void **state)
{
    (void)state;
    /* xs = np.sort(odd7) = [1.4, 2.6, 3.1, 5.3, 5.8, 5.9, 9.7]
     * [np.quantile(xs, q) for q in qs] */
    static const double xs[] = {1.4, 2.6, 3.1, 5.3, 5.8, 5.9, 9.7};
    static const double qs[] = {0.0, 0.01, 0.1, 1.0 / 3.0, 0.5,
                                0.9, 0.999, 1.0};
    static const double want[] = {1.4, 1.472, 2.12, 3.1, 5.3,
                                  7.420000000000002, 9.6772,
                                  9.7};
    for (size_t i = 0; i < NELEM(qs); i++)
        assert_close(tb_quantile_sorted(xs, NELEM(xs), qs[i]), want[i],
                     RTOL);
    /* n == 1: every quantile is the value. */
    assert_true(tb_quantile_sorted(one1, 1, 0.0) == 42.0);
    assert_true(tb_quantile_sorted(one1, 1, 0.37) == 42.0);
    assert_true(tb_quantile_sorted(one1, 1, 1.0) == 42.0);
    /* n == 2: straight line between the two. np.quantile([1., 3.], .25) */
    static const double two[] = {1.0, 3.0};
    assert_close(tb_quantile_sorted(two, 2, 0.25), 1.5, RTOL);
}

/* tb_quantile_select (compare's bootstrap intervals) is tb_quantile_sorted
 * of the sorted array, bit for bit, on shuffled values with ties, at the
 * interval's levels, the ends and between, n = 1, 2, 7, 2000; and the
 * NumPy values above. */
static void test_quantile_select(void **state)
{
    (void)state;
    static const double qs[] = {0.0, 0.01, 0.025, 1.0 / 3.0, 0.5,
                                0.975, 0.999, 1.0};
    static const size_t ns[] = {1, 2, 7, 2000};
    double *x = malloc(2000 * sizeof *x), *sorted = malloc(2000 * sizeof *x);
    assert_non_null(x);
    assert_non_null(sorted);
    uint64_t z = 99;
    for (size_t t = 0; t < NELEM(ns); t++) {
        size_t n = ns[t];
        for (size_t i = 0; i < n; i++) /* about n/4 values, tied */
            sorted[i] = (double)(tb_splitmix64_next(&z) % (n / 4 + 1)) +
                        0.125;
        qsort(sorted, n, sizeof *sorted, tb_cmp_double);
        for (size_t j = 0; j < NELEM(qs); j++) {
            for (size_t i = 0; i < n; i++) /* a shuffled copy */
                x[i] = sorted[(i * 7919) % n];
            double want = tb_quantile_sorted(sorted, n, qs[j]);
            assert_true(tb_quantile_select(x, n, qs[j]) == want);
        }
    }
    static const double want[] = {1.4, 1.472, 3.1, 5.3, 7.420000000000002,
                                  9.7};
    static const double q7[] = {0.0, 0.01, 1.0 / 3.0, 0.5, 0.9, 1.0};
    for (size_t j = 0; j < NELEM(q7); j++) {
        memcpy(x, odd7, sizeof odd7);
        assert_close(tb_quantile_select(x, 7, q7[j]), want[j], RTOL);
    }
    free(x);
    free(sorted);
}

/* ---- summaries ------------------------------------------------------- */

/* Each block: [x.min(), x.max(), med, np.mean(x), np.std(x, ddof=1),
 *   np.median(np.abs(x - med)), np.quantile(x, 0.05),
 *   np.quantile(x, 0.95), q1, q3], then outlier counts
 *   np.sum(x < q1-3*iqr), np.sum((x >= q1-3*iqr) & (x < q1-1.5*iqr)),
 *   np.sum((x > q3+1.5*iqr) & (x <= q3+3*iqr)), np.sum(x > q3+3*iqr) */

static void test_stats_odd(void **state)
{
    (void)state;
    static const expect e = {1.4, 9.7, 5.3, 4.828571428571428,
                             2.761469588048053, 2.1999999999999997, 1.76,
                             8.559999999999997, 2.85, 5.85,
                             0, 0, 0, 0};
    check_stats(odd7, NELEM(odd7), &e);
}

static void test_stats_even(void **state)
{
    (void)state;
    static const expect e = {9.5, 14.0, 11.625, 11.625, 1.535298947157477,
                             1.125, 9.675, 13.649999999999999, 10.5625,
                             12.625, 0, 0, 0, 0};
    check_stats(even8, NELEM(even8), &e);
}

static void test_stats_one(void **state)
{
    (void)state;
    /* np.std of one value with ddof=1 is nan; the contract says 0. */
    static const expect e = {42.0, 42.0, 42.0, 42.0, 0.0, 0.0, 42.0, 42.0,
                             42.0, 42.0, 0, 0, 0, 0};
    check_stats(one1, 1, &e);
    tb_stats s;
    assert_int_equal(tb_stats_compute(one1, 1, B, SEED, &s), 0);
    assert_true(s.ci_low == 42.0 && s.ci_high == 42.0);
    double lo = 0.0, hi = 0.0;
    assert_int_equal(tb_stats_median_ci(one1, 1, 10, 99, &lo, &hi), 0);
    assert_true(lo == 42.0 && hi == 42.0);
}

static void test_stats_ties(void **state)
{
    (void)state;
    /* fences: [-3.0, 0.0, 8.0, 11.0]; 8.0 is on the mild fence. */
    static const expect e = {2.0, 8.0, 5.0, 4.454545454545454,
                             1.6348477827391985, 0.0, 2.5, 6.5, 3.0, 5.0,
                             0, 0, 0, 0};
    check_stats(ties11, NELEM(ties11), &e);
}

static void test_stats_outliers(void **state)
{
    (void)state;
    /* fences: [9.000000000000004, 9.450000000000003, 10.649999999999999,
     *          11.099999999999996] */
    static const expect e = {2.0, 31.5, 10.05, 11.440000000000001,
                             6.120491896296537, 0.15000000000000036, 8.935,
                             25.325000000000003, 9.9, 10.2,
                             1, 2, 1, 2};
    check_stats(outl20, NELEM(outl20), &e);
}

static void test_stats_large(void **state)
{
    (void)state;
    static const expect e = {85.633, 116.226, 99.87450000000001, 99.58696,
                             5.049504992745209, 3.163000000000004,
                             91.08160000000001, 108.32634999999999,
                             96.19500000000001, 102.566,
                             0, 1, 2, 0};
    assert_int_equal(NELEM(big200), 200);
    check_stats(big200, NELEM(big200), &e);
}

static void test_input_not_modified(void **state)
{
    (void)state;
    double x[NELEM(outl20)];
    memcpy(x, outl20, sizeof x);
    tb_stats s;
    assert_int_equal(tb_stats_compute(x, NELEM(x), 100, SEED, &s), 0);
    double lo, hi;
    assert_int_equal(tb_stats_median_ci(x, NELEM(x), 100, SEED, &lo, &hi),
                     0);
    assert_memory_equal(x, outl20, sizeof x);
}

/* ---- bootstrap CI ---------------------------------------------------- */

static void test_ci_reproducible(void **state)
{
    (void)state;
    tb_stats a, b, c;
    assert_int_equal(tb_stats_compute(big200, 200, B, 1, &a), 0);
    assert_int_equal(tb_stats_compute(big200, 200, B, 1, &b), 0);
    assert_true(a.ci_low == b.ci_low && a.ci_high == b.ci_high);
    /* The seed is actually used: another seed moves an endpoint. */
    assert_int_equal(tb_stats_compute(big200, 200, B, 2, &c), 0);
    assert_true(a.ci_low != c.ci_low || a.ci_high != c.ci_high);
}

/* tb_stats_median_ci and tb_stats_compute draw the same resamples. */
static void test_ci_matches_compute(void **state)
{
    (void)state;
    static const struct {
        const double *x;
        size_t n;
    } sets[] = {{odd7, NELEM(odd7)},     {even8, NELEM(even8)},
                {one1, 1},               {ties11, NELEM(ties11)},
                {outl20, NELEM(outl20)}, {big200, NELEM(big200)}};
    for (size_t i = 0; i < NELEM(sets); i++) {
        for (int resamples = 1; resamples <= 1001; resamples += 500) {
            tb_stats s;
            double lo, hi;
            assert_int_equal(tb_stats_compute(sets[i].x, sets[i].n,
                                              resamples, 77 + i, &s),
                             0);
            assert_int_equal(tb_stats_median_ci(sets[i].x, sets[i].n,
                                                resamples, 77 + i, &lo,
                                                &hi),
                             0);
            assert_true(lo == s.ci_low && hi == s.ci_high);
            assert_true(lo <= hi);
        }
    }
}

/* The CI width of the 200-value normal sample (sigma 5) against NumPy's
 * own percentile bootstrap of the same sample with 20000 resamples:
 *   r = np.random.default_rng(1)
 *   m = np.median(r.choice(x, size=(20000, 200), replace=True), axis=1)
 *   lo, hi = np.percentile(m, [2.5, 97.5])
 *     -> 99.209, 100.6995, width 1.4905
 * (The normal-theory width 2*1.96*sqrt(pi/2)*5/sqrt(200) = 1.737 is the
 * large-n limit; the bootstrap of this sample is what we must match.)
 * Tolerance: with B = 2000, 200 NumPy seeds gave widths 1.366..1.597
 * (-8.4%..+7.1%), lo 99.13..99.32, hi 100.67..100.74.  So width within
 * 10% and each end within 0.2 (about half the median's standard error,
 * 0.38); a 90% CI (width 1.31, -12%) or 99% CI (2.16) fails. */
static void test_ci_width_large(void **state)
{
    (void)state;
    const double np_lo = 99.209, np_hi = 100.6995;
    const double np_width = np_hi - np_lo;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        double lo, hi;
        assert_int_equal(tb_stats_median_ci(big200, 200, B, seed, &lo, &hi),
                         0);
        double width = hi - lo;
        if (fabs(width / np_width - 1.0) > 0.10 || fabs(lo - np_lo) > 0.2 ||
            fabs(hi - np_hi) > 0.2) {
            print_error("seed %llu: CI [%.6g, %.6g] width %.6g; NumPy "
                        "[%.6g, %.6g] width %.6g\n",
                        (unsigned long long)seed, lo, hi, width, np_lo,
                        np_hi, np_width);
            fail();
        }
    }
}

/* Percentile levels checked exactly on a sample whose bootstrap
 * distribution of the median is known in closed form.  x holds 1..19 (in
 * the order np.random.default_rng(7).permutation(np.arange(1, 20))).  A
 * resample's median is <= j iff at least 10 of its 19 draws are <= j:
 *   cdf(j) = sum(math.comb(19, k) * (j/19)**k * (1 - j/19)**(19 - k)
 *                for k in range(10, 20))
 *   j:      5       6       13      14
 *   cdf: 0.0130  0.0458  0.9542  0.9870
 * so the 2.5% point is 6 and the 97.5% point is 14.  With 20000 resamples
 * the empirical cdf has sd <= 0.0011 there, and each level is >= 0.012
 * (11 sd) from 0.025/0.975, so both ends are exact.  A 90% CI would give
 * [7, 13]; draws that skip an element shift the whole distribution. */
static void test_ci_exact_levels(void **state)
{
    (void)state;
    static const double x19[] = {11, 15, 9,  4, 14, 2,  13, 7,  1, 8,
                                 5,  18, 6, 19, 17, 16, 3,  10, 12};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        double lo, hi;
        assert_int_equal(
            tb_stats_median_ci(x19, NELEM(x19), 20000, seed, &lo, &hi), 0);
        assert_true(lo == 6.0);
        assert_true(hi == 14.0);
    }
    /* Two points {0, 1}: a resample's median is 0, 0.5 or 1 with
     * probabilities 1/4, 1/2, 1/4, so the 95% CI is [0, 1] exactly. */
    static const double x2[] = {0.0, 1.0};
    double lo, hi;
    assert_int_equal(tb_stats_median_ci(x2, 2, B, SEED, &lo, &hi), 0);
    assert_true(lo == 0.0 && hi == 1.0);
}

/* The bootstrap finds each resample's median by counting draws per rank
 * (stats.c).  Oracle: the plain method - copy the n drawn values, sort,
 * take the middle - on the same draws (the generator is public; the
 * unbiased index rule is restated here for n < 2^32).  Both CIs must be
 * bit-identical, for odd and even n and with ties. */
static size_t below_oracle(tb_rng *r, uint32_t bound)
{
    uint64_t m = (tb_rng_next(r) >> 32) * bound;
    uint32_t low = (uint32_t)m;
    if (low < bound) {
        uint32_t threshold = (uint32_t)(-bound) % bound;
        while (low < threshold) {
            m = (tb_rng_next(r) >> 32) * bound;
            low = (uint32_t)m;
        }
    }
    return (size_t)(m >> 32);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void ci_oracle(const double *x, size_t n, int resamples, uint64_t seed,
                      double *lo, double *hi)
{
    double *d = malloc(n * sizeof *d), *meds = malloc(resamples * sizeof *d);
    assert_non_null(d);
    assert_non_null(meds);
    tb_rng rng;
    tb_rng_seed(&rng, seed);
    for (int b = 0; b < resamples; b++) {
        for (size_t i = 0; i < n; i++)
            d[i] = x[below_oracle(&rng, (uint32_t)n)];
        qsort(d, n, sizeof *d, cmp_d);
        meds[b] = n % 2 ? d[n / 2] : 0.5 * d[n / 2 - 1] + 0.5 * d[n / 2];
    }
    qsort(meds, (size_t)resamples, sizeof *meds, cmp_d);
    *lo = tb_quantile_sorted(meds, (size_t)resamples, 0.025);
    *hi = tb_quantile_sorted(meds, (size_t)resamples, 0.975);
    free(d);
    free(meds);
}

static void test_ci_counting_matches_sorting(void **state)
{
    (void)state;
    static const size_t sizes[] = {2, 3, 4, 7, 10, 33, 64, 257, 1000};
    tb_rng g;
    tb_rng_seed(&g, 77);
    for (size_t k = 0; k < NELEM(sizes); k++) {
        size_t n = sizes[k];
        double *x = malloc(n * sizeof *x);
        assert_non_null(x);
        for (int ties = 0; ties < 2; ties++) {
            for (size_t i = 0; i < n; i++) /* ties: only 5 values */
                x[i] = ties ? (double)(tb_rng_next(&g) % 5)
                            : 1e3 * tb_rng_uniform(&g);
            double lo, hi, olo, ohi;
            assert_int_equal(tb_stats_median_ci(x, n, 500, 9 + n, &lo, &hi),
                             0);
            ci_oracle(x, n, 500, 9 + n, &olo, &ohi);
            if (lo != olo || hi != ohi)
                fail_msg("n=%zu ties=%d: [%.17g, %.17g] vs sorting "
                         "[%.17g, %.17g]",
                         n, ties, lo, hi, olo, ohi);
        }
        free(x);
    }
}

/* The CI must shrink as the sample grows: a quarter of the same sample
 * has a wider CI (roughly 2x). */
static void test_ci_shrinks_with_n(void **state)
{
    (void)state;
    double lo50, hi50, lo200, hi200;
    assert_int_equal(tb_stats_median_ci(big200, 50, B, 5, &lo50, &hi50), 0);
    assert_int_equal(tb_stats_median_ci(big200, 200, B, 5, &lo200, &hi200),
                     0);
    assert_true(hi50 - lo50 > 1.4 * (hi200 - lo200));
}

/* ---- errors ---------------------------------------------------------- */

static void test_errors_einval(void **state)
{
    (void)state;
    tb_stats s;
    double lo, hi;
    const double x[] = {1.0, 2.0, 3.0};
    const double with_nan[] = {1.0, NAN, 3.0};
    assert_int_equal(tb_stats_compute(x, 0, B, SEED, &s), TB_EINVAL);
    assert_int_equal(tb_stats_compute(NULL, 3, B, SEED, &s), TB_EINVAL);
    assert_int_equal(tb_stats_compute(x, 3, B, SEED, NULL), TB_EINVAL);
    assert_int_equal(tb_stats_compute(x, 3, 0, SEED, &s), TB_EINVAL);
    assert_int_equal(tb_stats_compute(with_nan, 3, B, SEED, &s), TB_EINVAL);
    assert_int_equal(tb_stats_median_ci(x, 0, B, SEED, &lo, &hi), TB_EINVAL);
    assert_int_equal(tb_stats_median_ci(NULL, 3, B, SEED, &lo, &hi),
                     TB_EINVAL);
    assert_int_equal(tb_stats_median_ci(x, 3, B, SEED, NULL, &hi),
                     TB_EINVAL);
    assert_int_equal(tb_stats_median_ci(x, 3, B, SEED, &lo, NULL),
                     TB_EINVAL);
    assert_int_equal(tb_stats_median_ci(x, 3, -1, SEED, &lo, &hi),
                     TB_EINVAL);
    assert_int_equal(tb_stats_median_ci(with_nan, 3, B, SEED, &lo, &hi),
                     TB_EINVAL);
}

/* A sample count whose byte size overflows size_t is refused as
 * TB_ENOMEM before anything is read or allocated. */
static void test_errors_enomem_overflow(void **state)
{
    (void)state;
    tb_stats s;
    double lo, hi;
    const double x[] = {1.0};
    size_t huge = SIZE_MAX / sizeof(double) + 1;
    assert_int_equal(tb_stats_compute(x, huge, B, SEED, &s), TB_ENOMEM);
    assert_int_equal(tb_stats_median_ci(x, huge, B, SEED, &lo, &hi),
                     TB_ENOMEM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng_seed_state),
        cmocka_unit_test(test_rng_xoshiro_outputs),
        cmocka_unit_test(test_rng_uniform),
        cmocka_unit_test(test_quantile_sorted),
        cmocka_unit_test(test_quantile_select),
        cmocka_unit_test(test_stats_odd),
        cmocka_unit_test(test_stats_even),
        cmocka_unit_test(test_stats_one),
        cmocka_unit_test(test_stats_ties),
        cmocka_unit_test(test_stats_outliers),
        cmocka_unit_test(test_stats_large),
        cmocka_unit_test(test_input_not_modified),
        cmocka_unit_test(test_ci_reproducible),
        cmocka_unit_test(test_ci_matches_compute),
        cmocka_unit_test(test_ci_width_large),
        cmocka_unit_test(test_ci_exact_levels),
        cmocka_unit_test(test_ci_counting_matches_sorting),
        cmocka_unit_test(test_ci_shrinks_with_n),
        cmocka_unit_test(test_errors_einval),
        cmocka_unit_test(test_errors_enomem_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
