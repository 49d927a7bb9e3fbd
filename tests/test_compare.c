/* Tests for src/report/{resultsio,compare,history,export}.c.
 *
 * Mann-Whitney reference values come from SciPy 1.10.1 (Debian's
 * python3-scipy, /usr/bin/python3), never from this code:
 *   from scipy.stats import mannwhitneyu
 *   r = mannwhitneyu(x, y, alternative='two-sided', method=M)
 *   print(repr(float(r.statistic)), repr(float(r.pvalue)))
 * and Student t quantiles from repr(float(scipy.stats.t.ppf(p, df))),
 * with M = 'exact' (no ties, both sizes <= 50) or 'asymptotic' (normal
 * approximation with tie and continuity corrections), and x, y the C
 * arrays of the same test.  Arrays b, c and e were drawn with
 *   rng = np.random.default_rng(7)
 *   xb = np.round(100 + rng.normal(0, 1, 10), 3)
 *   yb = np.round(101.5 + rng.normal(0, 1, 10), 3)
 *   xc = np.round(50 + rng.normal(0, 2, 50), 4)
 *   yc = np.round(50.8 + rng.normal(0, 2, 40), 4)
 *   xe = np.round(10 + rng.normal(0, 1, 60), 5)
 *   ye = np.round(10.3 + rng.normal(0, 1, 70), 5)
 * (in that order) and printed with repr()/'%.4f'/'%.5f'.
 *
 * Verdict tests build result documents in memory with samples drawn from
 * a seeded generator, so every input is reproducible; the expected
 * verdicts follow from the rules in compare.h with wide margins (a 10%
 * shift against 1% noise, a 0.5% shift against a 2% threshold). */
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
#include "base/strbuf.h"
#include "report/compare.h"
#include "report/export.h"
#include "report/history.h"
#include "report/resultsio.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define assert_close(got, want, rtol)                                     \
    check_close((got), (want), (rtol), #got, __FILE__, __LINE__)

static void check_close(double got, double want, double rtol,
                        const char *what, const char *file, int line)
{
    double tol = rtol * (fabs(want) > 1e-300 ? fabs(want) : 1.0);
    if (!(fabs(got - want) <= tol)) {
        print_error("%s:%d: %s = %.17g, expected %.17g (tol %.3g)\n", file,
                    line, what, got, want, tol);
        fail();
    }
}

/* ---- Mann-Whitney against SciPy ----------------------------------------- */

static void check_mwu(const double *x, size_t nx, const double *y, size_t ny,
                      double u, double p, bool exact, double rtol)
{
    tb_mwu r;
    assert_int_equal(tb_mann_whitney(x, nx, y, ny, &r), 0);
    assert_int_equal(r.exact, exact);
    assert_close(r.u, u, 1e-12);
    assert_close(r.p, p, rtol);
    /* swapping the samples mirrors U and keeps p */
    assert_int_equal(tb_mann_whitney(y, ny, x, nx, &r), 0);
    assert_close(r.u, (double)nx * (double)ny - u, 1e-12);
    assert_close(r.p, p, rtol);
}

static const double xa[] = {1.1, 2.3, 0.7, 4.5, 3.2};
static const double ya[] = {5.1, 6.2, 2.9, 7.7, 8.0, 4.4};

static void test_mwu_exact_small(void **state)
{
    (void)state;
    /* exact: 3.0 0.030303030303030304 */
    check_mwu(xa, NELEM(xa), ya, NELEM(ya), 3.0, 0.030303030303030304, true,
              1e-12);
}

static void test_mwu_exact_10(void **state)
{
    (void)state;
    static const double x[] = {100.001, 100.299, 99.726, 99.109, 99.545,
                               99.008,  100.06,  101.34, 99.508, 99.38};
    static const double y[] = {101.99,  101.857, 101.605, 100.57, 101.471,
                               102.195, 100.156, 101.042, 99.599, 100.21};
    /* exact: 11.0 0.0020892420273225226 */
    check_mwu(x, NELEM(x), y, NELEM(y), 11.0, 0.0020892420273225226, true,
              1e-12);
}

static const double xc[] = {
    46.3165, 49.5298, 47.4651, 50.5425, 50.3135, 49.6261, 44.9665, 48.9226,
    49.9030, 50.2266, 46.9397, 49.0445, 48.0430, 48.3823, 52.1218, 48.3849,
    49.9350, 51.7688, 48.8328, 49.7766, 50.2209, 50.1276, 47.5499, 50.1523,
    52.7176, 46.9057, 51.7188, 50.2387, 48.7171, 54.0008, 51.5245, 47.6014,
    50.1490, 51.1534, 49.6224, 51.3658, 49.8670, 51.3345, 52.8770, 48.6487,
    50.4063, 49.0734, 50.2545, 47.6256, 48.8414, 49.6076, 51.7975, 52.2904,
    47.3529, 48.4107};
static const double yc[] = {
    52.0938, 46.8152, 49.8737, 50.6054, 53.3140, 52.1788, 50.1456, 50.0628,
    50.2996, 53.8471, 49.9440, 50.1926, 51.5052, 50.5585, 50.4054, 48.5719,
    50.7770, 49.9128, 53.1323, 52.1062, 50.7517, 52.1368, 50.1203, 52.9043,
    50.7892, 51.9668, 48.2182, 51.4934, 47.4236, 46.7293, 50.1910, 49.0001,
    51.1281, 55.2895, 49.1366, 49.5521, 51.2108, 51.7860, 50.4472, 50.3881};

static void test_mwu_exact_50_40(void **state)
{
    (void)state;
    /* exact: 671.0 0.00720968292731861 */
    check_mwu(xc, NELEM(xc), yc, NELEM(yc), 671.0, 0.00720968292731861, true,
              1e-10);
}

static void test_mwu_normal_ties(void **state)
{
    (void)state;
    static const double x[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5,
                               8, 9, 7, 9, 3, 2, 3, 8, 4, 6};
    static const double y[] = {2, 7, 1, 8, 2, 8, 1, 8,
                               2, 8, 4, 5, 9, 0, 4, 5};
    /* asymptotic: 181.0 0.699572610261757 */
    check_mwu(x, NELEM(x), y, NELEM(y), 181.0, 0.699572610261757, false,
              1e-9);
}

static const double xe[] = {
    10.70246, 10.51991, 8.96632,  9.92082,  10.03529, 8.94552,  10.25984,
    9.14204,  10.97207, 10.19275, 10.08931, 9.40897,  9.88139,  8.00225,
    8.86859,  10.36284, 7.87143,  10.84661, 8.25390,  10.75674, 9.15450,
    10.77899, 10.13095, 8.46317,  11.24915, 11.44171, 9.93420,  9.72608,
    9.84013,  9.02485,  11.09859, 9.45711,  9.94881,  9.20670,  9.37393,
    8.72227,  11.25707, 9.84591,  10.96592, 10.01332, 9.30560,  9.67331,
    9.43977,  10.00796, 9.62473,  9.70008,  8.62143,  9.19315,  11.65406,
    9.32877,  8.94591,  10.33733, 11.40727, 8.54598,  9.79148,  9.36795,
    8.23898,  10.73493, 9.97656,  10.07144};
static const double ye[] = {
    9.54769,  10.75478, 9.76070,  10.15710, 9.19174,  9.08390,  11.63553,
    9.79290,  10.59168, 10.26621, 9.85885,  9.79204,  10.93008, 9.99813,
    10.14856, 10.32222, 11.47651, 10.98051, 10.68260, 9.73643,  8.91803,
    11.24953, 11.26645, 10.15929, 10.84188, 11.08144, 11.13118, 11.22138,
    9.84438,  11.81497, 9.05341,  11.16172, 10.79393, 11.17362, 12.17901,
    11.78445, 9.15482,  8.61133,  11.11689, 9.28499,  10.28759, 11.13973,
    8.65620,  8.19002,  10.55930, 10.34439, 10.05420, 10.33853, 9.43948,
    8.78651,  10.13335, 9.32829,  8.65652,  10.80568, 10.23860, 10.70653,
    9.31071,  9.64194,  9.30096,  9.41336,  10.49541, 9.51703,  10.65607,
    10.63976, 12.32516, 8.90721,  11.18790, 10.21051, 10.28597, 8.85014};

static void test_mwu_normal_large(void **state)
{
    (void)state;
    /* asymptotic: 1584.0 0.01606394145711797 */
    check_mwu(xe, NELEM(xe), ye, NELEM(ye), 1584.0, 0.01606394145711797,
              false, 1e-9);
}

static void test_mwu_degenerate(void **state)
{
    (void)state;
    static const double two5[] = {2, 2, 2, 2, 2}, two7[] = {2, 2, 2, 2, 2,
                                                             2, 2};
    static const double one[] = {1.0}, other[] = {2.0};
    /* asymptotic: 17.5 1.0 (every value ties) */
    check_mwu(two5, 5, two7, 7, 17.5, 1.0, false, 1e-12);
    /* identical samples tie pairwise: 12.5 1.0 */
    check_mwu(xa, NELEM(xa), xa, NELEM(xa), 12.5, 1.0, false, 1e-12);
    /* exact, one value each: 0.0 1.0 */
    check_mwu(one, 1, other, 1, 0.0, 1.0, true, 1e-12);
    tb_mwu r;
    double nan_in[] = {1.0, NAN};
    assert_int_equal(tb_mann_whitney(xa, 0, ya, 3, &r), TB_EINVAL);
    assert_int_equal(tb_mann_whitney(nan_in, 2, ya, 3, &r), TB_EINVAL);
    assert_int_equal(tb_mann_whitney(NULL, 2, ya, 3, &r), TB_EINVAL);
}

/* ---- synthetic samples and documents -------------------------------- */

static double gauss(tb_rng *r)
{
    double u1 = tb_rng_uniform(r), u2 = tb_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
}

/* n samples around base with relative normal noise `rel`. */
static double *samples(size_t n, double base, double rel, uint64_t seed)
{
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    tb_rng r;
    tb_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        x[i] = base * (1.0 + rel * gauss(&r));
    return x;
}

typedef struct spec {
    const char *id;
    const char *status;   /* NULL: "ok" */
    const double *x;      /* samples (ok only) */
    size_t n;
    double kernels, allocs; /* per iteration */
} spec;

/* A "tbench.results/1" document with the cases of s[0..n). */
static cJSON *make_doc(const spec *s, int n)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "tbench.results/1");
    cJSON_AddBoolToObject(doc, "complete", true);
    cJSON *env = cJSON_AddObjectToObject(doc, "env");
    cJSON_AddStringToObject(env, "hostname", "testhost");
    cJSON_AddStringToObject(env, "date", "2026-01-01T00:00:00Z");
    cJSON *cases = cJSON_AddArrayToObject(doc, "cases");
    for (int i = 0; i < n; i++) {
        cJSON *c = cJSON_CreateObject();
        const char *status = s[i].status ? s[i].status : "ok";
        cJSON_AddStringToObject(c, "id", s[i].id);
        cJSON_AddStringToObject(c, "op", "add");
        cJSON_AddStringToObject(c, "dtype", "f32");
        cJSON_AddStringToObject(c, "backend", "cpu");
        cJSON_AddStringToObject(c, "status", status);
        cJSON_AddStringToObject(c, "impl", "add_f32_c");
        cJSON *bp = cJSON_AddObjectToObject(c, "backend_params");
        cJSON_AddStringToObject(bp, "threads", "2");
        cJSON *md = cJSON_AddObjectToObject(c, "model");
        cJSON_AddNumberToObject(md, "bytes", 3000);
        cJSON_AddNumberToObject(md, "flops", 1000);
        cJSON_AddNumberToObject(md, "items", 1000);
        if (strcmp(status, "ok")) {
            cJSON_AddStringToObject(c, "message", "why");
            cJSON_AddNullToObject(c, "stats");
            cJSON_AddNullToObject(c, "counters");
            cJSON_AddItemToArray(cases, c);
            continue;
        }
        tb_stats st;
        assert_int_equal(tb_stats_compute(s[i].x, s[i].n, 500, 42, &st), 0);
        cJSON *j = cJSON_AddObjectToObject(c, "stats");
        cJSON_AddNumberToObject(j, "n", (double)s[i].n);
        cJSON_AddNumberToObject(j, "iters_per_sample", 4);
        cJSON_AddNumberToObject(j, "min_ns", st.min);
        cJSON_AddNumberToObject(j, "median_ns", st.median);
        cJSON_AddNumberToObject(j, "mean_ns", st.mean);
        cJSON_AddNumberToObject(j, "ci_low_ns", st.ci_low);
        cJSON_AddNumberToObject(j, "ci_high_ns", st.ci_high);
        cJSON_AddItemToObject(j, "samples_ns",
                              cJSON_CreateDoubleArray(s[i].x, (int)s[i].n));
        cJSON *tp = cJSON_AddObjectToObject(c, "throughput");
        cJSON_AddNumberToObject(tp, "gb_s", 3000 / st.median);
        cJSON_AddNumberToObject(tp, "gflop_s", 1000 / st.median);
        cJSON_AddNumberToObject(tp, "items_s", 1e12 / st.median);
        cJSON *ct = cJSON_AddObjectToObject(c, "counters");
        cJSON_AddNumberToObject(ct, "kernel_launches", s[i].kernels);
        cJSON_AddNumberToObject(ct, "allocs", s[i].allocs);
        cJSON_AddItemToArray(cases, c);
    }
    return doc;
}

static tb_resfile *load_doc(cJSON *doc, const char *name)
{
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    assert_non_null(text);
    tb_resfile *f = NULL;
    char err[512] = "";
    int rc = tb_resfile_from_text(name, text, strlen(text), &f, err,
                                  sizeof err);
    free(text);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    return f;
}

/* One ok case "c" with n samples around base (noise rel, seed). */
static tb_resfile *one_case(const char *name, double base, double rel,
                            uint64_t seed, double kernels)
{
    double *x = samples(50, base, rel, seed);
    spec s = {"c", NULL, x, 50, kernels, 0};
    tb_resfile *f = load_doc(make_doc(&s, 1), name);
    free(x);
    return f;
}

/* *out keeps the addresses of the two one-file arrays (tb_compare's
 * contract): they are static so that they outlive this call, up to the
 * next one (a pointer to the parameters dangled, and tb_cmp_json read a
 * path through it: a crash under MALLOC_PERTURB_ in the CI build). */
static const tb_cmp_case *compare2(tb_resfile *a, tb_resfile *b,
                                   const tb_cmp_opts *o, tb_cmp *out)
{
    static tb_resfile *old_side, *new_side;
    old_side = a;
    new_side = b;
    char err[512];
    assert_int_equal(tb_compare(&old_side, 1, &new_side, 1, o, out, err,
                                sizeof err),
                     0);
    assert_int_equal(out->n, 1);
    return &out->cases[0];
}

/* ---- bootstrap CI of the ratio ------------------------------------------ */

static void test_ratio_ci_constant(void **state)
{
    (void)state;
    double a[7], b[9];
    for (size_t i = 0; i < 7; i++)
        a[i] = 100;
    for (size_t i = 0; i < 9; i++)
        b[i] = 110;
    tb_sampleset so = {a, 7}, sn = {b, 9};
    double lo, hi;
    assert_int_equal(tb_ratio_ci(&so, 1, &sn, 1, 300, 1, &lo, &hi), 0);
    assert_close(lo, 1.1, 1e-15);
    assert_close(hi, 1.1, 1e-15);
    assert_int_equal(tb_ratio_ci(&so, 0, &sn, 1, 300, 1, &lo, &hi),
                     TB_EINVAL);
}

static void test_ratio_ci_shift(void **state)
{
    (void)state;
    /* population medians 1000 and 1100: the true ratio is 1.1 */
    double *a = samples(400, 1000, 0.01, 11), *b = samples(400, 1100, 0.01,
                                                            12);
    tb_sampleset so = {a, 400}, sn = {b, 400};
    double lo, hi, lo2, hi2;
    assert_int_equal(tb_ratio_ci(&so, 1, &sn, 1, 2000, 5, &lo, &hi), 0);
    assert_true(lo < 1.1 && 1.1 < hi);
    assert_true(hi - lo < 0.005); /* ~ 2 x 1.96 x 1.25 x 1.4% / 20 */
    assert_int_equal(tb_ratio_ci(&so, 1, &sn, 1, 2000, 5, &lo2, &hi2), 0);
    assert_true(lo == lo2 && hi == hi2); /* seeded */
    /* three runs per side whose medians differ by a few percent: the CI
     * must widen to cover that spread */
    double *a2 = samples(400, 1040, 0.01, 13), *a3 = samples(400, 960, 0.01,
                                                              14);
    tb_sampleset olds[] = {{a, 400}, {a2, 400}, {a3, 400}};
    assert_int_equal(tb_ratio_ci(olds, 3, &sn, 1, 2000, 5, &lo2, &hi2), 0);
    assert_true(hi2 - lo2 > 0.05);
    assert_true(lo2 < 1.1 && 1.1 < hi2);
    free(a);
    free(b);
    free(a2);
    free(a3);
}

/* P(median of a resample <= v) for the samples 1, 2, ..., n, n odd: at
 * least (n+1)/2 of the n draws are <= v, each with probability
 * floor(v)/n.  The binomial tail summed in double from lgamma pmfs: the
 * exact bootstrap distribution, independent of the sampler. */
static double exact_median_cdf(size_t n, double v)
{
    double p = floor(v) / (double)n;
    if (p <= 0)
        return 0;
    if (p >= 1)
        return 1;
    double sum = 0, fn = (double)n;
    for (size_t k = (n + 1) / 2; k <= n; k++) {
        double fk = (double)k;
        sum += exp(lgamma(fn + 1) - lgamma(fk + 1) - lgamma(fn - fk + 1) +
                   fk * log(p) + (fn - fk) * log1p(-p));
    }
    return sum;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* xorshift64* draws for the resampling written here: a generator of its
 * own, apart from the library's xoshiro. */
static size_t xs_draw(uint64_t *z, size_t n)
{
    *z ^= *z >> 12;
    *z ^= *z << 25;
    *z ^= *z >> 27;
    uint64_t u = *z * 2685821657736338717ull;
    return (size_t)((u >> 11) * 0x1p-53 * (double)n);
}

/* How a resample's "median" is read off below: the median itself, or a
 * planted mistake that a check of the sampler must catch. */
enum plant {
    PLANT_NONE,
    PLANT_RANK_UP, /* the middle ranks one too high (a Beta shape off by
                      one) */
    PLANT_NO_TIE,  /* even n: the upper middle rank never on the lower
                      one's value, but on the run's next (the tie mass
                      D_i given to the next index) */
    PLANT_SPLIT,   /* the two middle ranks from two resamples (marginals
                      right, joint wrong) */
};

/* Rank r of scr[0..n) (reordered), and in *next rank r + 1 (r + 1 < n). */
static double rank_pair(double *scr, size_t n, size_t r, double *next)
{
    tb_select_kth(scr, n, r);
    double nx = INFINITY;
    for (size_t i = r + 1; i < n; i++)
        nx = scr[i] < nx ? scr[i] : nx;
    *next = nx;
    return scr[r];
}

/* One resample of x[0..n) by plain resampling (scr holds n), read as
 * `plant` says. */
static double resample_median(const double *x, size_t n, double *scr,
                              uint64_t *z, enum plant plant)
{
    for (size_t i = 0; i < n; i++)
        scr[i] = x[xs_draw(z, n)];
    size_t k = (n - 1) / 2 + (plant == PLANT_RANK_UP);
    if (plant == PLANT_NONE)
        return tb_median_inplace(scr, n);
    if (n % 2 && plant == PLANT_RANK_UP) {
        tb_select_kth(scr, n, k);
        return scr[k];
    }
    double a, b;
    a = rank_pair(scr, n, k, &b); /* even n: k + 1 < n */
    if (plant == PLANT_NO_TIE && b == a) {
        /* the tie's mass on the run's next value instead */
        b = INFINITY;
        for (size_t i = 0; i < n; i++)
            b = x[i] > a && x[i] < b ? x[i] : b;
        b = isinf(b) ? a : b;
    } else if (plant == PLANT_SPLIT) {
        for (size_t i = 0; i < n; i++)
            scr[i] = x[xs_draw(z, n)];
        (void)rank_pair(scr, n, k, &b); /* rank k + 1 of another */
        if (b < a) {
            double t = a;
            a = b;
            b = t;
        }
    }
    return b - (b - a) * 0.5;
}

/* Two-sample chi-square statistic of a[0..m) and b[0..m), both sorted:
 * bins of their distinct values, neighbours merged until each holds 20
 * or more of both together, sum (a_i - b_i)^2 / (a_i + b_i) (equal
 * sizes); *df = bins - 1. */
static double chi2_two(const double *a, const double *b, size_t m, int *df)
{
    double stat = 0, last = 0;
    size_t i = 0, j = 0, ca = 0, cb = 0;
    int bins = 0;
    while (i < m || j < m) {
        double v = j == m || (i < m && a[i] < b[j]) ? a[i] : b[j];
        for (; i < m && a[i] == v; i++)
            ca++;
        for (; j < m && b[j] == v; j++)
            cb++;
        if (ca + cb >= 20 || (i == m && j == m)) {
            double d = (double)ca - (double)cb, t = d * d / (double)(ca + cb);
            if (ca + cb < 20 && bins) { /* the tail joins the last bin */
                stat -= last;
                bins--;
            }
            stat += (last = t);
            bins++;
            ca = cb = 0;
        }
    }
    *df = bins - 1;
    return stat;
}

/* The chi-square quantile at 1 - 1e-4 by Wilson and Hilferty's cube
 * (z = 3.7190, the normal's: a little high at df 2, 19.3 against 18.4,
 * so the test errs to passing there, and within 1% from df 10). */
static double chi2_crit(int df)
{
    double h = 2.0 / (9.0 * df), c = 1 - h + 3.7190 * sqrt(h);
    return df * c * c * c;
}

/* B replicates of the exact sampler against B of plain resampling:
 * their chi-square statistic over its 1e-4 critical value (< 1 passes). */
static double sampler_vs_resampling(const double *x, size_t n, uint64_t seed,
                                    enum plant plant)
{
    enum { B = 100000 };
    static double got[B], ref[B];
    tb_sampleset s = {x, n};
    double *scr = malloc(n * sizeof *scr);
    assert_non_null(scr);
    assert_int_equal(tb_boot_medians_exact(&s, B, seed, got), 0);
    uint64_t z = 88172645463325252ull ^ seed;
    for (int b = 0; b < B; b++)
        ref[b] = resample_median(x, n, scr, &z, plant);
    free(scr);
    qsort(got, B, sizeof *got, cmp_dbl);
    qsort(ref, B, sizeof *ref, cmp_dbl);
    int df;
    double chi = chi2_two(got, ref, B, &df);
    print_message("# n %zu, plant %d: chi2 %.1f, df %d, 1e-4 critical "
                  "%.1f\n", n, (int)plant, chi, df, chi2_crit(df));
    return df < 1 ? (chi > 0 ? INFINITY : 0) : chi / chi2_crit(df);
}

/* The exact sampler of a resample's median (compare.c: one Beta draw and
 * one uniform) against plain resampling, 10^5 medians each, two-sample
 * chi-square at 1e-4 (fixed seeds): n = 2, 3, 257, 460, 461, and runs
 * with ties.  Then mistakes planted in the resampling side, each a
 * plausible error in the sampler's formula, must fail the same check:
 * so the check can fail. */
static void test_boot_median_sampler(void **state)
{
    (void)state;
    const size_t sizes[] = {2, 3, 17, 257, 460, 461};
    double *x = malloc(461 * sizeof *x);
    assert_non_null(x);
    for (size_t t = 0; t < NELEM(sizes); t++) {
        size_t n = sizes[t];
        for (size_t i = 0; i < n; i++) /* 1..n, scrambled */
            x[i] = (double)((i * 7919) % n + 1);
        assert_true(sampler_vs_resampling(x, n, 100 + t, PLANT_NONE) < 1);
        for (size_t i = 0; i < n; i++) /* about 20 values, tied */
            x[i] = floor((double)((i * 7919) % n) * 20 / (double)n);
        assert_true(sampler_vs_resampling(x, n, 200 + t, PLANT_NONE) < 1);
    }
    for (size_t i = 0; i < 460; i++)
        x[i] = (double)((i * 7919) % 460 + 1);
    assert_true(sampler_vs_resampling(x, 460, 7, PLANT_RANK_UP) > 1);
    assert_true(sampler_vs_resampling(x, 460, 8, PLANT_NO_TIE) > 1);
    assert_true(sampler_vs_resampling(x, 460, 9, PLANT_SPLIT) > 1);
    assert_true(sampler_vs_resampling(x, 3, 10, PLANT_RANK_UP) > 1);
    assert_true(sampler_vs_resampling(x, 2, 11, PLANT_NO_TIE) > 1);
    free(x);
    /* one value: every replicate is it */
    double one = 4, got[8];
    tb_sampleset s1 = {&one, 1};
    assert_int_equal(tb_boot_medians_exact(&s1, 8, 1, got), 0);
    for (int i = 0; i < 8; i++)
        assert_true(got[i] == 4);
    assert_int_equal(tb_boot_medians_exact(&s1, 0, 1, got), TB_EINVAL);
}

/* Issue 15: the median of a run above 16 samples is drawn from its
 * exact distribution instead of n draws (test_boot_median_sampler).
 * Through tb_boot_medians: against the exact distribution (odd n), and
 * against plain resampling (odd and even n, two-sample
 * Kolmogorov-Smirnov at alpha 1e-3; the seeds are fixed). */
static void test_boot_median_distribution(void **state)
{
    (void)state;
    enum { B = 60000 };
    static double got[B], ref[B];
    /* even sizes twice: -x weighs the lower middle value as x does the
     * upper one */
    const size_t sizes[] = {1001, 1000, 301, 258, 258};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        size_t n = sizes[t];
        double sign = t == 4 ? -1 : 1;
        double *x = malloc(n * sizeof *x), *scr = malloc(n * sizeof *scr);
        assert_non_null(x);
        assert_non_null(scr);
        /* 1..n in a scrambled order (the run is not sorted); for even n
         * 2^(rank - n/2), so that the mean of the two middle order
         * statistics moves by a rank when either of them does */
        for (size_t i = 0; i < n; i++) {
            double rank = (double)((i * 7919) % n + 1);
            x[i] = n % 2 ? rank : sign * ldexp(1, (int)rank - (int)n / 2);
        }
        tb_sampleset s = {x, n};
        assert_int_equal(tb_boot_medians(&s, 1, B, 1234 + t, got), 0);
        qsort(got, B, sizeof *got, cmp_dbl);
        if (n % 2) {
            double tol = 0.004; /* > 5 sd of a 2.5% quantile of B draws */
            double lo = got[B / 40], hi = got[B - B / 40];
            assert_true(exact_median_cdf(n, lo) >= 0.025 - tol);
            assert_true(exact_median_cdf(n, lo - 1) <= 0.025 + tol);
            assert_true(exact_median_cdf(n, hi) >= 0.975 - tol);
            assert_true(exact_median_cdf(n, hi - 1) <= 0.975 + tol);
            assert_true(fabs(exact_median_cdf(n, got[B / 2]) - 0.5) < 0.05);
        }
        uint64_t z = 88172645463325252ull + t;
        for (int b = 0; b < B; b++)
            ref[b] = resample_median(x, n, scr, &z, PLANT_NONE);
        qsort(ref, B, sizeof *ref, cmp_dbl);
        double d = 0;
        size_t i = 0, j = 0;
        while (i < B && j < B) {
            double v = got[i] < ref[j] ? got[i] : ref[j];
            while (i < B && got[i] <= v)
                i++;
            while (j < B && ref[j] <= v)
                j++;
            double diff = fabs((double)i - (double)j) / B;
            d = diff > d ? diff : d;
        }
        if (d > 0.0113) { /* sqrt(-ln(1e-3 / 2) / 2) * sqrt(2 / B) */
            print_error("n %zu: KS distance %g\n", n, d);
            fail();
        }
        free(x);
        free(scr);
    }
    /* a run of equal values has a constant median */
    double c[1000];
    for (int i = 0; i < 1000; i++)
        c[i] = 5;
    tb_sampleset s = {c, 1000};
    assert_int_equal(tb_boot_medians(&s, 1, 100, 1, got), 0);
    for (int i = 0; i < 100; i++)
        assert_true(got[i] == 5);
    assert_int_equal(tb_boot_medians(&s, 0, 100, 1, got), TB_EINVAL);
}

/* ---- verdicts --------------------------------------------------------- */

static void test_identical_unchanged(void **state)
{
    (void)state;
    tb_resfile *a = one_case("old.json", 1000, 0.01, 1, 1);
    tb_resfile *b = one_case("new.json", 1000, 0.01, 1, 1);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    assert_int_equal(k->time, TB_TIME_UNCHANGED);
    assert_close(k->change, 0, 1e-15);
    assert_close(k->p, 1.0, 1e-12);
    assert_false(c.failed);
    assert_string_equal(tb_cmp_case_verdict(k), "unchanged");
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(b);
}

static void test_shift10_regressed(void **state)
{
    (void)state;
    tb_resfile *a = one_case("old.json", 1000, 0.01, 1, 1);
    tb_resfile *b = one_case("new.json", 1100, 0.01, 2, 1);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    assert_int_equal(k->time, TB_TIME_REGRESSED);
    assert_true(k->change > 0.08 && k->change < 0.12);
    assert_true(k->ci_lo > 0.05 && k->ci_hi < 0.15);
    assert_true(k->p < 1e-10);
    assert_true(k->exact); /* 50 vs 50, no ties */
    assert_close(k->floor, 0.02, 1e-12); /* threshold above the noise */
    assert_true(isnan(k->floor_between));
    assert_true(c.failed);
    assert_int_equal(c.n_regressed, 1);
    tb_cmp_free(&c);
    /* the threshold can hide it, and fail_on without time ignores it */
    o.threshold = 0.2;
    k = compare2(a, b, &o, &c);
    assert_int_equal(k->time, TB_TIME_UNCHANGED);
    tb_cmp_free(&c);
    tb_cmp_opts_default(&o);
    o.fail_on = TB_FAIL_COUNTERS | TB_FAIL_STATUS;
    k = compare2(a, b, &o, &c);
    assert_int_equal(k->time, TB_TIME_REGRESSED);
    assert_false(c.failed);
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(b);
}

static void test_small_shift_unchanged(void **state)
{
    (void)state;
    tb_resfile *a = one_case("old.json", 1000, 0.01, 1, 1);
    tb_resfile *b = one_case("new.json", 1005, 0.01, 2, 1);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    assert_int_equal(k->time, TB_TIME_UNCHANGED);
    assert_true(fabs(k->change) < 0.02);
    assert_false(c.failed);
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(b);
}

static void test_not_significant(void **state)
{
    (void)state;
    /* 3 samples a side: even complete separation gives exact p = 2/20,
     * above alpha = 0.01, so a clear 10% shift is not called; nor is it
     * "unchanged" (its CI reaches past the threshold): inconclusive */
    static const double x[] = {1000, 1001, 1002}, y[] = {1100, 1101, 1102};
    spec s1 = {"c", NULL, x, 3, 1, 0}, s2 = {"c", NULL, y, 3, 1, 0};
    tb_resfile *a = load_doc(make_doc(&s1, 1), "old.json");
    tb_resfile *b = load_doc(make_doc(&s2, 1), "new.json");
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    assert_true(k->change > k->floor);
    assert_close(k->p, 0.1, 1e-12);
    assert_int_equal(k->time, TB_TIME_INCONCLUSIVE);
    assert_string_equal(tb_cmp_case_verdict(k), "inconclusive");
    tb_cmp_free(&c);
    /* at alpha 0.2 the same data is a regression */
    o.alpha = 0.2;
    k = compare2(a, b, &o, &c);
    assert_int_equal(k->time, TB_TIME_REGRESSED);
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(b);
}

static void test_speedup_improved(void **state)
{
    (void)state;
    tb_resfile *a = one_case("old.json", 1000, 0.01, 1, 1);
    tb_resfile *b = one_case("new.json", 900, 0.01, 2, 1);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    assert_int_equal(k->time, TB_TIME_IMPROVED);
    assert_true(k->ci_hi < 0);
    assert_false(c.failed); /* improvements never fail */
    assert_int_equal(c.n_improved, 1);
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(b);
}

static void test_within_run_floor(void **state)
{
    (void)state;
    /* 10 samples with 8% noise: the medians' CIs are wide, so a 6% shift
     * stays under the floor even though the threshold is 2% */
    double *x = samples(10, 1000, 0.08, 3), *y = samples(10, 1060, 0.08, 4);
    spec s1 = {"c", NULL, x, 10, 1, 0}, s2 = {"c", NULL, y, 10, 1, 0};
    tb_resfile *a = load_doc(make_doc(&s1, 1), "old.json");
    tb_resfile *b = load_doc(make_doc(&s2, 1), "new.json");
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    double want = (a->cases[0].ci_rel + b->cases[0].ci_rel) / 2;
    assert_close(k->floor_within, want, 1e-12);
    assert_true(k->floor_within > 0.06);
    assert_close(k->floor, want, 1e-12);
    assert_close(k->mde, want, 1e-12);
    /* the floor (what the runs can resolve) is above the threshold: the
     * data cannot tell, never "unchanged" */
    assert_int_equal(k->time, TB_TIME_INCONCLUSIVE);
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(b);
    free(x);
    free(y);
}

static void test_t_quantile(void **state)
{
    (void)state;
    /* scipy.stats.t.ppf(p, df) */
    static const double ref[][3] = {
        {0.995, 1, 63.65674116287399},   {0.995, 2, 9.92484320091807},
        {0.995, 4, 4.604094871415897},   {0.995, 8, 3.3553873313333957},
        {0.975, 30, 2.0422724563012373}, {0.9995, 3, 12.923978636637424},
        {0.9, 2.5, 1.730250928807177},   {0.995, 200, 2.600634436165038},
    };
    for (size_t i = 0; i < NELEM(ref); i++)
        assert_close(tb_t_quantile(ref[i][0], ref[i][1]), ref[i][2], 1e-10);
    assert_close(tb_t_quantile(0.75, 1), 1.0, 1e-12); /* tan(pi/4) */
    assert_close(tb_t_quantile(0.005, 4), -4.604094871415897, 1e-10);
    assert_true(tb_t_quantile(0.5, 3) == 0);
    assert_true(isnan(tb_t_quantile(1.0, 3)));
    assert_true(isnan(tb_t_quantile(0.9, 0)));
}

static void test_between_run_floor(void **state)
{
    (void)state;
    /* three old runs with medians near 1000, 1010, 1005 (0.1% noise):
     * the floor is the smallest change a t test on the log run medians
     * finds significant at alpha = 0.01 with df = 2:
     * expm1(t.ppf(0.995, 2) * s * sqrt(1/3 + 1/1)) */
    tb_resfile *old[3] = {one_case("o1.json", 1000, 0.001, 1, 1),
                          one_case("o2.json", 1010, 0.001, 2, 1),
                          one_case("o3.json", 1005, 0.001, 3, 1)};
    tb_resfile *n1 = one_case("n1.json", 1030, 0.001, 4, 1);
    tb_resfile *n2 = one_case("n2.json", 1100, 0.001, 5, 1);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    char err[256];
    assert_int_equal(tb_compare(old, 3, &n1, 1, &o, &c, err, sizeof err), 0);
    const tb_cmp_case *k = &c.cases[0];
    double l[3], mean = 0, ss = 0;
    for (int i = 0; i < 3; i++) {
        l[i] = log(old[i]->cases[0].median_ns);
        mean += l[i] / 3;
    }
    for (int i = 0; i < 3; i++)
        ss += (l[i] - mean) * (l[i] - mean);
    double sd = sqrt(ss / 2);
    double want = expm1(9.92484320091807 * sd * sqrt(1.0 / 3 + 1.0));
    assert_close(k->run_sd, sd, 1e-12);
    assert_int_equal(k->run_df, 2);
    assert_close(k->floor_between, want, 1e-9);
    assert_true(want > 0.04 && want < 0.08);
    assert_close(k->floor, want, 1e-9);
    assert_close(k->old_median, old[2]->cases[0].median_ns, 1e-12);
    assert_int_equal(k->k_old, 3);
    /* +2.5% is within what the runs' spread allows: not a regression,
     * and with a floor above 2% not "unchanged" either */
    assert_int_equal(k->time, TB_TIME_INCONCLUSIVE);
    tb_cmp_free(&c);
    /* +9.5% is beyond it */
    assert_int_equal(tb_compare(old, 3, &n2, 1, &o, &c, err, sizeof err), 0);
    assert_int_equal(c.cases[0].time, TB_TIME_REGRESSED);
    tb_cmp_free(&c);
    /* three runs on each side: df = 4, sqrt(1/3 + 1/3) */
    assert_int_equal(tb_compare(old, 3, old, 3, &o, &c, err, sizeof err), 0);
    assert_int_equal(c.cases[0].run_df, 4);
    assert_close(c.cases[0].floor_between,
                 expm1(4.604094871415897 * sd * sqrt(2.0 / 3)), 1e-9);
    assert_int_equal(c.cases[0].time, TB_TIME_UNCHANGED);
    tb_cmp_free(&c);
    for (int i = 0; i < 3; i++)
        tb_resfile_free(old[i]);
    tb_resfile_free(n1);
    tb_resfile_free(n2);
}

/* Like one_case, plus stats.round_medians_ns (a run made in rounds). */
static tb_resfile *rounds_case(const char *name, double base,
                               const double *rounds, int nr, uint64_t seed)
{
    double *x = samples(50, base, 0.001, seed);
    spec sp = {"c", NULL, x, 50, 1, 0};
    cJSON *doc = make_doc(&sp, 1);
    cJSON *st = cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cases"), 0), "stats");
    cJSON_AddItemToObject(st, "round_medians_ns",
                          cJSON_CreateDoubleArray(rounds, nr));
    free(x);
    return load_doc(doc, name);
}

/* One run per side measured in rounds: the round medians give the
 * between-phase noise, as several runs would (df = rounds - 1 a side). */
static void test_round_floor(void **state)
{
    (void)state;
    const double ro[3] = {1000, 1050, 980}, rn[3] = {1030, 1060, 1000};
    tb_resfile *a = rounds_case("a.json", 1000, ro, 3, 1);
    tb_resfile *b = rounds_case("b.json", 1030, rn, 3, 2);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    double ss = 0;
    for (int side = 0; side < 2; side++) {
        const double *r = side ? rn : ro;
        double m = (log(r[0]) + log(r[1]) + log(r[2])) / 3;
        for (int i = 0; i < 3; i++)
            ss += (log(r[i]) - m) * (log(r[i]) - m);
    }
    double sd = sqrt(ss / 4);
    assert_int_equal(k->run_df, 4);
    assert_close(k->run_sd, sd, 1e-12);
    /* t.ppf(0.995, 4) = 4.604094871415897 (scipy.stats.t) */
    assert_close(k->floor_between,
                 expm1(4.604094871415897 * sd * sqrt(2.0 / 3)), 1e-9);
    /* +3% with 0.1% noise inside each run: within the rounds' spread,
     * which is wider than the threshold: inconclusive */
    assert_true(k->mde > o.threshold);
    assert_int_equal(k->time, TB_TIME_INCONCLUSIVE);
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(b);

    /* the same runs without round medians: only the within-run noise
     * is known, and +3% is a regression */
    tb_resfile *a1 = one_case("a1.json", 1000, 0.001, 1, 1);
    tb_resfile *b1 = one_case("b1.json", 1030, 0.001, 2, 1);
    k = compare2(a1, b1, &o, &c);
    assert_true(isnan(k->floor_between));
    assert_int_equal(k->time, TB_TIME_REGRESSED);
    tb_cmp_free(&c);
    tb_resfile_free(a1);
    tb_resfile_free(b1);
}

static void test_counter_regression(void **state)
{
    (void)state;
    tb_resfile *a = one_case("old.json", 1000, 0.01, 1, 1);
    tb_resfile *b = one_case("new.json", 1000, 0.01, 1, 2);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    assert_int_equal(k->time, TB_TIME_UNCHANGED);
    assert_true(k->ctr_regressed);
    assert_int_equal(k->ctr_dir[TB_RES_CTR_KERNEL_LAUNCHES], 1);
    assert_int_equal(k->ctr_dir[TB_RES_CTR_ALLOCS], 0);
    assert_true(isnan(k->ctr_old[TB_RES_CTR_MEMCPY_COUNT])); /* absent */
    assert_int_equal(c.n_ctr_regressed, 1);
    assert_true(c.failed);
    assert_string_equal(tb_cmp_case_verdict(k), "counters");
    tb_cmp_free(&c);
    o.fail_on = TB_FAIL_TIME;
    compare2(a, b, &o, &c);
    assert_false(c.failed);
    tb_cmp_free(&c);
    /* fewer kernels is an improvement, never a failure */
    tb_cmp_opts_default(&o);
    k = compare2(b, a, &o, &c);
    assert_true(k->ctr_improved && !k->ctr_regressed);
    assert_false(c.failed);
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(b);
}

/* A file whose one ok case "c" has member `key` = the JSON text json:
 * the loader refuses it (TB_EINVAL, no file), naming the case and key. */
static void refused_member(const char *key, const char *json)
{
    double *x = samples(50, 1000, 0.01, 7);
    spec sp = {"c", NULL, x, 50, 1, 0};
    cJSON *doc = make_doc(&sp, 1);
    free(x);
    cJSON_AddItemToObject(
        cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cases"), 0), key,
        cJSON_Parse(json));
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    tb_resfile *f = NULL;
    char err[256], want[64];
    int rc = tb_resfile_from_text("bad.json", text, strlen(text), &f, err,
                                  sizeof err);
    free(text);
    assert_int_equal(rc, TB_EINVAL);
    assert_null(f);
    snprintf(want, sizeof want, "cases[0] (c): %s", key);
    assert_non_null(strstr(err, want));
}

/* One ok case "c" (as one_case, the same samples on both sides) with an
 * instructions record: per_iter (NAN: null), source and isa. */
static tb_resfile *instr_case(const char *name, double per_iter,
                              const char *source, const char *isa)
{
    double *x = samples(50, 1000, 0.01, 7);
    spec sp = {"c", NULL, x, 50, 1, 0};
    cJSON *doc = make_doc(&sp, 1);
    free(x);
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cases"), 0);
    cJSON *in = cJSON_AddObjectToObject(c, "instructions");
    cJSON_AddStringToObject(in, "requested", "callgrind");
    if (isnan(per_iter))
        cJSON_AddNullToObject(in, "per_iter");
    else
        cJSON_AddNumberToObject(in, "per_iter", per_iter);
    if (source)
        cJSON_AddStringToObject(in, "source", source);
    else
        cJSON_AddNullToObject(in, "source");
    if (isa)
        cJSON_AddStringToObject(in, "isa", isa);
    else
        cJSON_AddNullToObject(in, "isa");
    cJSON_AddNumberToObject(in, "iters", 10);
    cJSON_AddNullToObject(in, "reason");
    return load_doc(doc, name);
}

/* Instructions per iteration: exact counts with their own threshold
 * (default 0.1%): +0.5% is a counter regression that fails, an equal
 * count passes. */
static void test_instr_counts(void **state)
{
    (void)state;
    tb_resfile *base = instr_case("a.json", 160154.9, "callgrind", "avx2");
    tb_resfile *same = instr_case("b.json", 160154.9, "callgrind", "avx2");
    tb_resfile *up = instr_case("c.json", 160154.9 * 1.005, "callgrind",
                                "avx2");
    tb_resfile *tiny = instr_case("d.json", 160154.9 * 1.0005, "callgrind",
                                  "avx2");
    tb_resfile *isa = instr_case("e.json", 160154.9, "callgrind", "scalar");
    tb_resfile *none = instr_case("f.json", NAN, NULL, NULL);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    assert_true(o.instr_threshold == 0.001);
    tb_cmp c;

    const tb_cmp_case *k = compare2(base, same, &o, &c);
    assert_int_equal(k->instr_dir, 0);
    assert_true(k->instr_change == 0);
    assert_false(k->ctr_regressed);
    assert_false(c.failed);
    assert_string_equal(k->instr_source, "callgrind");
    tb_cmp_free(&c);

    char err[256];
    assert_int_equal(tb_compare(&base, 1, &up, 1, &o, &c, err, sizeof err),
                     0); /* (the files must outlive c for tb_cmp_json) */
    k = &c.cases[0];
    assert_int_equal(k->instr_dir, 1);
    assert_close(k->instr_change, 0.005, 1e-9);
    assert_true(k->ctr_regressed);
    assert_true(c.failed);
    assert_int_equal(c.n_ctr_regressed, 1);
    assert_string_equal(tb_cmp_case_verdict(k), "counters");
    cJSON *j = tb_cmp_json(&c);
    cJSON *e = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cases"),
                                               0),
                            "counters"),
        "instructions");
    assert_non_null(e);
    assert_string_equal(cJSON_GetObjectItem(e, "verdict")->valuestring,
                        "regressed");
    cJSON_Delete(j);
    tb_cmp_free(&c);
    /* counters not in --fail-on: reported, not failed */
    o.fail_on = TB_FAIL_TIME;
    compare2(base, up, &o, &c);
    assert_false(c.failed);
    tb_cmp_free(&c);
    tb_cmp_opts_default(&o);
    /* a larger threshold lets +0.5% pass; below the default passes */
    o.instr_threshold = 0.01;
    k = compare2(base, up, &o, &c);
    assert_int_equal(k->instr_dir, 0);
    assert_false(c.failed);
    tb_cmp_free(&c);
    tb_cmp_opts_default(&o);
    k = compare2(base, tiny, &o, &c);
    assert_int_equal(k->instr_dir, 0);
    assert_false(c.failed);
    tb_cmp_free(&c);
    /* fewer instructions: an improvement, never a failure */
    k = compare2(up, base, &o, &c);
    assert_int_equal(k->instr_dir, -1);
    assert_true(k->ctr_improved);
    assert_false(c.failed);
    tb_cmp_free(&c);
    /* different ISA paths are not compared */
    k = compare2(isa, up, &o, &c);
    assert_int_equal(k->instr_dir, 0);
    assert_true(isnan(k->instr_change));
    assert_non_null(strstr(k->instr_note, "ISA"));
    assert_false(c.failed);
    tb_cmp_free(&c);
    /* a side without a count: nothing to compare */
    k = compare2(none, up, &o, &c);
    assert_true(isnan(k->instr_old));
    assert_int_equal(k->instr_dir, 0);
    assert_false(c.failed);
    tb_cmp_free(&c);
    /* the loader refuses a malformed record, naming it */
    static const char *const bad[] = {"{\"per_iter\": \"many\"}",
                                      "{\"per_iter\": -1}",
                                      "{\"per_iter\": 5}", "[]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        refused_member("instructions", bad[i]);
    tb_resfile *fs[] = {base, same, up, tiny, isa, none};
    for (size_t i = 0; i < 6; i++)
        tb_resfile_free(fs[i]);
}

/* One ok case "c" (as instr_case) with a cache record: L1D and LL misses
 * per iteration (NAN: null), source, simulated, isa and LL geometry. */
static tb_resfile *cache_case(const char *name, double l1d, double llc,
                              const char *source, const char *isa,
                              const char *ll)
{
    double *x = samples(50, 1000, 0.01, 7);
    spec sp = {"c", NULL, x, 50, 1, 0};
    cJSON *doc = make_doc(&sp, 1);
    free(x);
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cases"), 0);
    cJSON *in = cJSON_AddObjectToObject(c, "cache");
    cJSON_AddStringToObject(in, "requested", "auto");
    if (source)
        cJSON_AddStringToObject(in, "source", source);
    else
        cJSON_AddNullToObject(in, "source");
    cJSON_AddBoolToObject(in, "simulated", source != NULL);
    cJSON_AddStringToObject(in, "isa", isa);
    cJSON_AddNullToObject(in, "cycles");
    if (source)
        cJSON_AddNumberToObject(in, "instructions", 5000);
    else
        cJSON_AddNullToObject(in, "instructions");
    if (isnan(l1d))
        cJSON_AddNullToObject(in, "l1d_misses");
    else
        cJSON_AddNumberToObject(in, "l1d_misses", l1d);
    if (isnan(llc))
        cJSON_AddNullToObject(in, "llc_misses");
    else
        cJSON_AddNumberToObject(in, "llc_misses", llc);
    cJSON_AddNullToObject(in, "dtlb_misses");
    cJSON_AddStringToObject(in, "d1", "32768 B, 64 B, 8-way");
    cJSON_AddStringToObject(in, "ll", ll);
    return load_doc(doc, name);
}

/* Cache events per iteration (measure.cache): their own threshold
 * (default 1%) and at least one event per iteration: +5% L1D misses is a
 * counter regression that fails; +0.5% and an LL change of 0.5 events
 * are none; fewer is an improvement; a different geometry, ISA or
 * source is not compared; the loader refuses a negative count. */
static void test_cache_counts(void **state)
{
    (void)state;
    const char *g = "33554432 B, 64 B, 16-way";
    tb_resfile *base = cache_case("a.json", 800, 0.5, "callgrind", "avx2", g);
    tb_resfile *up = cache_case("b.json", 840, 1.0, "callgrind", "avx2", g);
    tb_resfile *tiny = cache_case("c.json", 804, 0.5, "callgrind", "avx2", g);
    tb_resfile *geo = cache_case("d.json", 840, 0.5, "callgrind", "avx2",
                                 "1048576 B, 64 B, 16-way");
    tb_resfile *isa = cache_case("e.json", 840, 0.5, "callgrind", "scalar", g);
    tb_resfile *none = cache_case("f.json", NAN, NAN, NULL, "avx2", g);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    assert_true(o.cache_threshold == 0.01);
    tb_cmp c;
    char err[256];
    assert_int_equal(tb_compare(&base, 1, &up, 1, &o, &c, err, sizeof err),
                     0);
    const tb_cmp_case *k = &c.cases[0];
    assert_int_equal(k->cache_dir[TB_CMP_CACHE_L1D], 1);
    assert_close(k->cache_change[TB_CMP_CACHE_L1D], 0.05, 1e-9);
    assert_int_equal(k->cache_dir[TB_CMP_CACHE_LLC], 0); /* +0.5 event */
    assert_true(k->cache_simulated);
    assert_true(k->ctr_regressed && c.failed);
    char line[400];
    assert_true(tb_cmp_cache_line(k, TB_CMP_CACHE_L1D, o.cache_threshold,
                                  line, sizeof line));
    assert_non_null(strstr(line, "l1d_misses 800 -> 840"));
    assert_non_null(strstr(line, "callgrind simulated avx2"));
    assert_false(tb_cmp_cache_line(k, TB_CMP_CACHE_LLC, o.cache_threshold,
                                   line, sizeof line));
    cJSON *j = tb_cmp_json(&c);
    cJSON *e = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cases"),
                                               0),
                            "counters"),
        "l1d_misses");
    assert_non_null(e);
    assert_string_equal(cJSON_GetObjectItem(e, "verdict")->valuestring,
                        "regressed");
    cJSON_Delete(j);
    tb_cmp_free(&c);
    k = compare2(base, tiny, &o, &c);
    assert_int_equal(k->cache_dir[TB_CMP_CACHE_L1D], 0);
    assert_false(c.failed);
    tb_cmp_free(&c);
    o.cache_threshold = 0.1; /* --cache-threshold 10 */
    k = compare2(base, up, &o, &c);
    assert_int_equal(k->cache_dir[TB_CMP_CACHE_L1D], 0);
    assert_false(c.failed);
    tb_cmp_free(&c);
    tb_cmp_opts_default(&o);
    k = compare2(up, base, &o, &c);
    assert_int_equal(k->cache_dir[TB_CMP_CACHE_L1D], -1);
    assert_true(k->ctr_improved && !c.failed);
    tb_cmp_free(&c);
    const struct {
        tb_resfile *other;
        const char *note;
    } nc[] = {{geo, "geometries"}, {isa, "ISA"}};
    for (int i = 0; i < 2; i++) {
        k = compare2(base, nc[i].other, &o, &c);
        assert_int_equal(k->cache_dir[TB_CMP_CACHE_L1D], 0);
        assert_non_null(strstr(k->cache_note, nc[i].note));
        assert_true(tb_cmp_cache_line(k, 0, o.cache_threshold, line,
                                      sizeof line));
        assert_non_null(strstr(line, "not compared"));
        assert_false(c.failed);
        tb_cmp_free(&c);
    }
    k = compare2(none, up, &o, &c);
    assert_true(isnan(k->cache_old[TB_CMP_CACHE_L1D]));
    assert_false(c.failed);
    tb_cmp_free(&c);
    static const char *const bad[] = {"{\"l1d_misses\": -1, \"source\": "
                                      "\"perf\"}",
                                      "{\"llc_misses\": \"x\"}",
                                      "{\"l1d_misses\": 5}", "[]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        refused_member("cache", bad[i]);
    tb_resfile *fs[] = {base, up, tiny, geo, isa, none};
    for (size_t i = 0; i < 6; i++)
        tb_resfile_free(fs[i]);
}

static void test_status_changes(void **state)
{
    (void)state;
    double *x = samples(20, 1000, 0.01, 9);
    spec olds[] = {{"a", NULL, x, 20, 1, 0},
                   {"b", "unavailable", NULL, 0, 0, 0},
                   {"c", "unsupported", NULL, 0, 0, 0},
                   {"d", "unavailable", NULL, 0, 0, 0},
                   {"gone", NULL, x, 20, 1, 0},
                   {"k", NULL, x, 20, 1, 0},
                   {"t", "unsupported", NULL, 0, 0, 0}};
    spec news[] = {{"a", "failed-check", NULL, 0, 0, 0},
                   {"b", NULL, x, 20, 1, 0},
                   {"c", "unavailable", NULL, 0, 0, 0},
                   {"d", "unavailable", NULL, 0, 0, 0},
                   {"new", NULL, x, 20, 1, 0},
                   {"k", "crashed", NULL, 0, 0, 0},
                   {"t", "timeout", NULL, 0, 0, 0}};
    tb_resfile *a = load_doc(make_doc(olds, 7), "old.json");
    tb_resfile *b = load_doc(make_doc(news, 7), "new.json");
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    char err[256];
    assert_int_equal(tb_compare(&a, 1, &b, 1, &o, &c, err, sizeof err), 0);
    assert_int_equal(c.n, 8);
    assert_string_equal(c.cases[0].id, "a");
    assert_int_equal(c.cases[0].schg, TB_SCHG_FAILURE);
    assert_string_equal(tb_cmp_case_verdict(&c.cases[0]), "failure");
    assert_int_equal(c.cases[1].schg, TB_SCHG_FIXED);
    assert_int_equal(c.cases[2].schg, TB_SCHG_CHANGED);
    assert_int_equal(c.cases[3].schg, TB_SCHG_SAME);
    assert_string_equal(tb_cmp_case_verdict(&c.cases[3]), "unavailable");
    assert_int_equal(c.cases[4].presence, TB_CMP_REMOVED);
    /* newly crashed (was ok) and newly timed out (did not run before)
     * are status failures like a newly failed check */
    assert_string_equal(c.cases[5].id, "k");
    assert_int_equal(c.cases[5].schg, TB_SCHG_FAILURE);
    assert_string_equal(tb_cmp_case_verdict(&c.cases[5]), "failure");
    assert_string_equal(c.cases[6].id, "t");
    assert_int_equal(c.cases[6].schg, TB_SCHG_FAILURE);
    assert_string_equal(c.cases[7].id, "new");
    assert_int_equal(c.cases[7].presence, TB_CMP_ADDED);
    assert_int_equal(c.n_failures, 3);
    assert_int_equal(c.n_added, 1);
    assert_int_equal(c.n_removed, 1);
    assert_int_equal(c.n_timed, 0);
    assert_true(c.failed);
    tb_cmp_free(&c);
    o.fail_on = TB_FAIL_TIME | TB_FAIL_COUNTERS;
    assert_int_equal(tb_compare(&a, 1, &b, 1, &o, &c, err, sizeof err), 0);
    assert_false(c.failed);
    /* the JSON form carries the same verdicts */
    cJSON *j = tb_cmp_json(&c);
    assert_non_null(j);
    assert_string_equal(
        cJSON_GetObjectItem(j, "schema")->valuestring, "tbench.compare/1");
    cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cases"), 0);
    assert_string_equal(cJSON_GetObjectItem(c0, "verdict")->valuestring,
                        "failure");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c0, "time")));
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary"),
                                         "status_failures")->valueint, 3);
    cJSON_Delete(j);
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(b);
    free(x);
}

static void test_mismatched_matrices(void **state)
{
    (void)state;
    double *x = samples(20, 1000, 0.01, 9);
    spec s1 = {"a", NULL, x, 20, 1, 0}, s2 = {"b", NULL, x, 20, 1, 0};
    tb_resfile *a = load_doc(make_doc(&s1, 1), "old.json");
    tb_resfile *b = load_doc(make_doc(&s2, 1), "other.json");
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    char err[256];
    assert_int_equal(tb_compare(&a, 1, &b, 1, &o, &c, err, sizeof err),
                     TB_EINVAL);
    assert_non_null(strstr(err, "no case id in common"));
    assert_int_equal(strncmp(err, "old.json: ", 10), 0);
    tb_resfile_free(a);
    tb_resfile_free(b);
    free(x);
}

static void test_fail_on_parse(void **state)
{
    (void)state;
    unsigned b;
    assert_int_equal(tb_cmp_parse_fail_on("time", &b), 0);
    assert_int_equal(b, TB_FAIL_TIME);
    assert_int_equal(tb_cmp_parse_fail_on("status,counters", &b), 0);
    assert_int_equal(b, TB_FAIL_STATUS | TB_FAIL_COUNTERS);
    assert_int_equal(tb_cmp_parse_fail_on("none", &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(tb_cmp_parse_fail_on("time,", &b), TB_EINVAL);
    assert_int_equal(tb_cmp_parse_fail_on("timing", &b), TB_EINVAL);
    assert_int_equal(tb_cmp_parse_fail_on("", &b), TB_EINVAL);
    assert_int_equal(tb_cmp_parse_fail_on("time,none", &b), TB_EINVAL);
    assert_int_equal(tb_cmp_parse_fail_on(",time", &b), TB_EINVAL);
    assert_int_equal(tb_cmp_parse_fail_on("tim", &b), TB_EINVAL);
}

/* The one word picker every word-valued option parses through. */
static void test_word_index(void **state)
{
    (void)state;
    static const char w[] = "text md json";
    assert_int_equal(tb_word_index(w, "text", 4), 0);
    assert_int_equal(tb_word_index(w, "md", 2), 1);
    assert_int_equal(tb_word_index(w, "json", 4), 2);
    assert_int_equal(tb_word_index(w, "jso", 3), -1);
    assert_int_equal(tb_word_index(w, "jsonx", 5), -1);
    assert_int_equal(tb_word_index(w, "md json", 7), -1);
    assert_int_equal(tb_word_index(w, "", 0), -1);
    assert_int_equal(tb_word_index(w, "time,md", 4), -1);
    assert_int_equal(tb_word_index(w, "mdx", 2), 1); /* n bytes only */
    tb_export_format f = TB_EXPORT_GBENCH;
    assert_int_equal(tb_export_parse_format("gab", &f), 0);
    assert_int_equal(f, TB_EXPORT_GAB);
    assert_int_equal(tb_export_parse_format("bmf", &f), 0);
    assert_int_equal(f, TB_EXPORT_BMF);
    assert_int_equal(tb_export_parse_format("gbench ", &f), TB_EINVAL);
}

/* ---- reading result files ------------------------------------------------- */

/* The strings every case record needs besides id and status. */
#define OPDB "\"op\": \"add\", \"dtype\": \"f32\", \"backend\": \"cpu\", "

/* tb_resfile_from_text(text) must fail with "bad.json: " + needle. */
static void expect_load_error(const char *text, int code, const char *needle)
{
    tb_resfile *f = (tb_resfile *)1;
    char err[512] = "";
    int rc = tb_resfile_from_text("bad.json", text, strlen(text), &f, err,
                                  sizeof err);
    if (rc != code || !strstr(err, needle) || strncmp(err, "bad.json: ", 10))
        print_error("text %.60s: rc %d, err '%s'\n", text, rc, err);
    assert_int_equal(rc, code);
    assert_null(f);
    assert_int_equal(strncmp(err, "bad.json: ", 10), 0);
    assert_non_null(strstr(err, needle));
    assert_null(strchr(err, '\n'));
}

static void test_load_errors(void **state)
{
    (void)state;
    expect_load_error("", TB_EPARSE, "empty file");
    expect_load_error("  \n", TB_EPARSE, "white space");
    expect_load_error("{\"schema\": \"tbench.results/1\", \"cases\": [{\"id\"",
                      TB_EPARSE, "truncated");
    expect_load_error("{\"schema\": \"tbench.results/1\",, }", TB_EPARSE,
                      "corrupt: not valid JSON at line 1, column ");
    expect_load_error("[1, 2]", TB_EINVAL, "not a tbench result file");
    expect_load_error("{\"cases\": []}", TB_EINVAL, "no \"schema\"");
    expect_load_error("{\"schema\": \"tbench.peaks/1\", \"cases\": []}",
                      TB_EINVAL, "schema is \"tbench.peaks/1\"");
    expect_load_error("{\"schema\": \"tbench.results/1\", \"cases\": {}}",
                      TB_EINVAL, "\"cases\": expected an array");
    expect_load_error("{\"schema\": \"tbench.results/1\", \"cases\": "
                      "[{\"status\": \"ok\"}]",
                      TB_EPARSE, "truncated");
    expect_load_error("{\"schema\": \"tbench.results/1\", \"cases\": "
                      "[{\"status\": \"ok\"}]}",
                      TB_EINVAL, "cases[0]: no \"id\"");
    expect_load_error("{\"schema\": \"tbench.results/1\", \"cases\": "
                      "[{\"id\": \"x\", " OPDB "\"status\": \"ok\"}]}",
                      TB_EINVAL, "cases[0] (x): status is ok but stats");
    expect_load_error(
        "{\"schema\": \"tbench.results/1\", \"cases\": [{\"id\": \"x\", " OPDB
        "\"status\": \"ok\", \"stats\": {\"n\": 2, \"iters_per_sample\": 1, "
        "\"median_ns\": 5, \"ci_low_ns\": 4, \"ci_high_ns\": 6, \"min_ns\": "
        "4, \"mean_ns\": 5, \"samples_ns\": [4, 5, 6]}}]}",
        TB_EINVAL, "stats.n is 2 but samples_ns has 3 values");
    expect_load_error(
        "{\"schema\": \"tbench.results/1\", \"cases\": [{\"id\": \"x\", " OPDB
        "\"status\": \"ok\", \"stats\": {\"n\": 1, \"iters_per_sample\": 1, "
        "\"median_ns\": -5, \"ci_low_ns\": -6, \"ci_high_ns\": 6, "
        "\"min_ns\": 4, \"mean_ns\": 5, \"samples_ns\": [4]}}]}",
        TB_EINVAL, "stats.median_ns: expected a positive number");
    expect_load_error(
        "{\"schema\": \"tbench.results/1\", \"cases\": [{\"id\": \"x\", " OPDB
        "\"status\": \"ok\", \"stats\": {\"n\": 1, \"iters_per_sample\": 1, "
        "\"median_ns\": 5, \"ci_low_ns\": 4, \"ci_high_ns\": 6, \"min_ns\": "
        "4, \"mean_ns\": 5, \"samples_ns\": [\"4\"]}}]}",
        TB_EINVAL, "stats.samples_ns[0]: expected a number");
    /* 1e999 parses as infinity: refused, never handed to a chart */
    expect_load_error(
        "{\"schema\": \"tbench.results/1\", \"cases\": [{\"id\": \"x\", " OPDB
        "\"status\": \"ok\", \"stats\": {\"n\": 1, \"iters_per_sample\": 1, "
        "\"median_ns\": 1e999, \"ci_low_ns\": 4, \"ci_high_ns\": 6, "
        "\"min_ns\": 4, \"mean_ns\": 5, \"samples_ns\": [4]}}]}",
        TB_EINVAL, "cases[0] (x): stats.median_ns: expected a finite number");
    /* the strings plot and report group by are required of every case */
    expect_load_error("{\"schema\": \"tbench.results/1\", \"cases\": "
                      "[{\"id\": \"x\", \"op\": \"add\", \"backend\": "
                      "\"cpu\", \"status\": \"skipped\"}]}",
                      TB_EINVAL, "cases[0] (x): no \"dtype\" string");
    expect_load_error("{\"schema\": \"tbench.results/1\", \"cases\": "
                      "[{\"id\": \"x\", \"op\": \"add\", \"dtype\": "
                      "\"f32\", \"status\": \"skipped\"}]}",
                      TB_EINVAL, "cases[0] (x): no \"backend\" string");
    expect_load_error("{\"schema\": \"tbench.results/1\", \"cases\": "
                      "[{\"id\": \"x\", " OPDB "\"status\": \"done\"}]}",
                      TB_EINVAL, "cases[0] (x): unknown status \"done\"");
    expect_load_error("{\"schema\": \"tbench.results/1\", \"cases\": "
                      "[{\"id\": \"x\", " OPDB "\"status\": \"skipped\"}, "
                      "{\"id\": \"x\", " OPDB "\"status\": \"skipped\"}]}",
                      TB_EINVAL, "cases[1]: id 'x' already used by cases[0]");
}

static void test_load_fields(void **state)
{
    (void)state;
    const char *text =
        "{\"schema\": \"tbench.results/1\", \"complete\": false, \"env\": "
        "{\"hostname\": \"h\", \"build\": {\"git_commit\": \"abc\"}}, "
        "\"cases\": [{\"id\": \"z\", " OPDB "\"status\": \"ok\", "
        "\"impl\": null, "
        "\"stats\": {\"n\": 3, \"iters_per_sample\": 2, \"median_ns\": 5, "
        "\"ci_low_ns\": 4, \"ci_high_ns\": 6, \"min_ns\": 4, \"mean_ns\": "
        "5, \"samples_ns\": [4, 5, 6]}, \"throughput\": {\"gb_s\": null, "
        "\"items_s\": 7}, \"counters\": {\"kernel_launches\": 3}}, "
        "{\"id\": \"a\", " OPDB "\"status\": \"unavailable\", "
        "\"message\": \"no gpu\", \"stats\": null}, "
        "{\"id\": \"k\", " OPDB "\"status\": \"crashed\", \"message\": "
        "\"signal 9 (SIGKILL) during warmup\", \"stats\": null}, "
        "{\"id\": \"t\", " OPDB "\"status\": \"timeout\", \"message\": "
        "\"killed after 30 s\", \"stats\": null}]}";
    tb_resfile *f;
    char err[256];
    assert_int_equal(tb_resfile_from_text("t.json", text, strlen(text), &f,
                                          err, sizeof err),
                     0);
    assert_int_equal(f->n, 4);
    assert_false(f->complete);
    assert_string_equal(f->hostname, "h");
    assert_string_equal(f->git_commit, "abc");
    const tb_rescase *z = tb_resfile_find(f, "z");
    assert_non_null(z);
    assert_true(z->timed);
    assert_int_equal(z->n, 3);
    assert_close(z->samples_ns[2], 6, 0);
    assert_close(z->ci_rel, 2.0 / 5.0, 1e-15);
    assert_null(z->impl);
    assert_true(isnan(z->gb_s));
    assert_close(z->items_s, 7, 0);
    assert_close(z->counters[TB_RES_CTR_KERNEL_LAUNCHES], 3, 0);
    assert_true(isnan(z->counters[TB_RES_CTR_ALLOCS]));
    const tb_rescase *a = tb_resfile_find(f, "a");
    assert_non_null(a);
    assert_false(a->timed);
    assert_string_equal(a->message, "no gpu");
    const tb_rescase *k = tb_resfile_find(f, "k"), *t = tb_resfile_find(f,
                                                                        "t");
    assert_false(k->timed);
    assert_string_equal(k->status, "crashed");
    assert_string_equal(k->message, "signal 9 (SIGKILL) during warmup");
    assert_false(t->timed);
    assert_string_equal(t->status, "timeout");
    assert_null(tb_resfile_find(f, "b"));
    tb_resfile_free(f);
    tb_resfile_free(NULL);
}

/* ---- change points and history -------------------------------------------- */

static void test_changepoints(void **state)
{
    (void)state;
    /* 8 runs at 1000 ns, then 7 at 1100 ns, 0.3% noise */
    double y[15];
    int starts[15];
    tb_rng r;
    tb_rng_seed(&r, 77);
    for (int i = 0; i < 15; i++)
        y[i] = log((i < 8 ? 1000.0 : 1100.0) * (1 + 0.003 * gauss(&r)));
    double beta = 4 * 0.003 * 0.003 * log(15.0);
    int k = tb_changepoints(y, 15, beta, log1p(0.02), starts);
    assert_int_equal(k, 2);
    assert_int_equal(starts[0], 0);
    assert_int_equal(starts[1], 8);
    /* the same series without the step: one segment */
    for (int i = 8; i < 15; i++)
        y[i] -= log(1.1);
    assert_int_equal(tb_changepoints(y, 15, beta, log1p(0.02), starts), 1);
    /* a 1% step is found with a low penalty but merged under a 2%
     * minimum step */
    for (int i = 0; i < 15; i++)
        y[i] = log(i < 6 ? 1000.0 : 1010.0);
    assert_int_equal(tb_changepoints(y, 15, 1e-9, 0, starts), 2);
    assert_int_equal(starts[1], 6);
    assert_int_equal(tb_changepoints(y, 15, 1e-9, log1p(0.02), starts), 1);
    /* a step at the last run is found */
    for (int i = 0; i < 15; i++)
        y[i] = log(i < 14 ? 1000.0 : 1300.0);
    assert_int_equal(tb_changepoints(y, 15, 1e-6, log1p(0.02), starts), 2);
    assert_int_equal(starts[1], 14);
    assert_int_equal(tb_changepoints(y, 1, 1, 0, starts), 1);
    assert_int_equal(tb_changepoints(y, 0, 1, 0, starts), TB_EINVAL);
    /* issue 15: a penalty so large that every cost is infinite gave a
     * backtrack through uninitialised memory; it is one segment */
    for (int i = 0; i < 15; i++)
        y[i] = log(i < 7 ? 1000.0 : 2000.0);
    for (int i = 0; i < 15; i++)
        starts[i] = -7;
    assert_int_equal(tb_changepoints(y, 15, INFINITY, 0, starts), 1);
    assert_int_equal(starts[0], 0);
    /* and a series that is not finite is refused, not fitted */
    y[3] = INFINITY;
    assert_int_equal(tb_changepoints(y, 15, 1, 0, starts), TB_EINVAL);
    y[3] = NAN;
    assert_int_equal(tb_changepoints(y, 15, 1, 0, starts), TB_EINVAL);
}

static void test_history(void **state)
{
    (void)state;
    /* run medians 1000 x 5, then 1200 x 4 (0.5% noise); the case "x" is
     * unavailable in run 3, which is skipped in its series */
    tb_resfile *f[9];
    double *xs[9];
    for (int j = 0; j < 9; j++) {
        xs[j] = samples(30, j < 5 ? 1000 : 1200, 0.005, 100 + (uint64_t)j);
        spec s[2] = {{"c", NULL, xs[j], 30, 1, 0},
                     {"x", j == 3 ? "unavailable" : NULL, xs[j], 30, 1, 0}};
        char name[32];
        snprintf(name, sizeof name, "run%d.json", j);
        f[j] = load_doc(make_doc(s, 2), name);
    }
    tb_hist_opts o;
    tb_hist_opts_default(&o);
    tb_history h;
    char err[256];
    assert_int_equal(tb_history_build(f, 9, &o, &h, err, sizeof err), 0);
    assert_int_equal(h.n, 2);
    const tb_hist_case *c = &h.cases[0];
    assert_string_equal(c->id, "c");
    assert_int_equal(c->n_ok, 9);
    assert_int_equal(c->n_steps, 1);
    assert_int_equal(c->steps[0].run, 5);
    assert_true(c->steps[0].change > 0.18 && c->steps[0].change < 0.22);
    assert_int_equal(c->seg_first[1], 5);
    assert_int_equal(c->seg_last[1], 8);
    const tb_hist_case *x = &h.cases[1];
    assert_int_equal(x->n_ok, 8);
    assert_int_equal(x->n_steps, 1);
    assert_int_equal(x->steps[0].run, 5);
    cJSON *j = tb_history_json(&h);
    assert_non_null(j);
    cJSON *c1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cases"), 1);
    assert_true(cJSON_IsNull(
        cJSON_GetArrayItem(cJSON_GetObjectItem(c1, "median_ns"), 3)));
    cJSON *st = cJSON_GetArrayItem(cJSON_GetObjectItem(c1, "steps"), 0);
    assert_string_equal(cJSON_GetObjectItem(st, "path")->valuestring,
                        "run5.json");
    assert_string_equal(cJSON_GetObjectItem(st, "kind")->valuestring,
                        "regression");
    cJSON_Delete(j);
    tb_history_free(&h);

    /* a file of another matrix is named */
    spec other = {"zzz", NULL, xs[0], 30, 1, 0};
    tb_resfile *g[3] = {f[0], f[1], load_doc(make_doc(&other, 1), "z.json")};
    assert_int_equal(tb_history_build(g, 3, &o, &h, err, sizeof err),
                     TB_EINVAL);
    assert_int_equal(strncmp(err, "z.json: no case id in common", 28), 0);
    tb_resfile_free(g[2]);
    for (int i = 0; i < 9; i++) {
        tb_resfile_free(f[i]);
        free(xs[i]);
    }
}

/* ---- the four verdicts: the ux review's reproducers (D5) ------------------ */

/* One case "c": n samples around base with relative noise rel, and, when
 * nr > 0, round medians (a run measured in rounds). */
static tb_resfile *mk_run(const char *name, double base, double rel,
                          size_t n, const double *rounds, int nr,
                          uint64_t seed)
{
    double *x = samples(n, base, rel, seed);
    spec sp = {"c", NULL, x, n, 1, 0};
    cJSON *doc = make_doc(&sp, 1);
    if (nr > 0) {
        cJSON *st = cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cases"), 0),
            "stats");
        cJSON_AddItemToObject(st, "round_medians_ns",
                              cJSON_CreateDoubleArray(rounds, nr));
    }
    free(x);
    return load_doc(doc, name);
}

/* compare's verdict on a pair and history's steps on the same two files. */
static void verdict_and_steps(tb_resfile *a, tb_resfile *b,
                              tb_time_verdict *v, int *steps, double *step)
{
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    *v = compare2(a, b, &o, &c)->time;
    tb_cmp_free(&c);
    tb_resfile *f[2] = {a, b};
    tb_hist_opts ho;
    tb_hist_opts_default(&ho);
    tb_history h;
    char err[256];
    assert_int_equal(tb_history_build(f, 2, &ho, &h, err, sizeof err), 0);
    *steps = h.cases[0].n_steps;
    *step = *steps ? h.cases[0].steps[0].change : NAN;
    if (*steps)
        assert_int_equal(h.cases[0].steps[0].verdict, (int)*v);
    tb_history_free(&h);
}

/* A floor of tens of thousands of percent (round medians 3.6x apart, 2
 * rounds a side): compare called identical medians "unchanged"; no change
 * could have been seen, so it is inconclusive. */
static void test_huge_floor_inconclusive(void **state)
{
    (void)state;
    const double ro[2] = {1000, 3600}, rn[2] = {3600, 1000};
    tb_resfile *a = mk_run("a.json", 1000, 0.01, 50, ro, 2, 1);
    tb_resfile *b = mk_run("b.json", 1000, 0.01, 50, rn, 2, 2);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    assert_true(k->floor > 100); /* above 10,000% */
    assert_true(fabs(k->change) < 0.02);
    assert_int_equal(k->time, TB_TIME_INCONCLUSIVE);
    assert_string_equal(tb_cmp_case_verdict(k), "inconclusive");
    assert_int_equal(c.n_inconclusive, 1);
    assert_int_equal(c.n_unchanged, 0);
    assert_false(c.failed);
    tb_cmp_free(&c);
    /* --max-mde: a case that cannot be judged at 10% fails the gate */
    o.max_mde = 0.10;
    k = compare2(a, b, &o, &c);
    assert_true(k->unresolved);
    assert_int_equal(c.n_unresolved, 1);
    assert_true(c.failed);
    tb_cmp_free(&c);
    /* and a quiet pair passes it */
    tb_resfile *q1 = one_case("q1.json", 1000, 0.001, 1, 1);
    tb_resfile *q2 = one_case("q2.json", 1000, 0.001, 2, 1);
    k = compare2(q1, q2, &o, &c);
    assert_int_equal(k->time, TB_TIME_UNCHANGED);
    assert_false(k->unresolved);
    assert_false(c.failed);
    tb_cmp_free(&c);
    tb_resfile_free(q1);
    tb_resfile_free(q2);
    tb_resfile_free(a);
    tb_resfile_free(b);
}

/* -64% with p ~ 1e-8 and a CI far below 0: on main compare said
 * "unchanged" (its round floor was above 178%) while history on the same
 * two files reported a -64% step.  Now: where the runs' own rounds say
 * the machine moved by more than that, inconclusive, and history reports
 * no step; where they do not, improved, and history's step agrees. */
static void test_big_drop_never_unchanged(void **state)
{
    (void)state;
    /* rounds 4x apart on each side: the between-round floor is huge */
    const double ro[2] = {1000, 4000}, rn[2] = {360, 1440};
    tb_resfile *a = mk_run("a.json", 1000, 0.3, 40, ro, 2, 11);
    tb_resfile *b = mk_run("b.json", 360, 0.3, 40, rn, 2, 12);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    print_message("# noisy rounds: change %+.1f%% CI [%+.1f%%, %+.1f%%] "
                  "p %.2g floor %.0f%%\n", 100 * k->change, 100 * k->ci_lo,
                  100 * k->ci_hi, k->p, 100 * k->floor);
    assert_true(k->change < -0.55 && k->change > -0.75);
    assert_true(k->ci_hi < 0 && k->p < 1e-6);
    assert_true(k->floor > 1 / (1 + k->change) - 1); /* beyond the drop */
    assert_int_not_equal(k->time, TB_TIME_UNCHANGED);
    assert_int_equal(k->time, TB_TIME_INCONCLUSIVE);
    tb_cmp_free(&c);
    tb_time_verdict v;
    int steps;
    double step;
    verdict_and_steps(a, b, &v, &steps, &step);
    assert_int_equal(v, TB_TIME_INCONCLUSIVE);
    assert_int_equal(steps, 0); /* history agrees: no step it can call */
    tb_resfile_free(a);
    tb_resfile_free(b);

    /* the same drop from runs whose rounds agree: improved, and history
     * reports the same step */
    const double qo[2] = {1000, 1010}, qn[2] = {360, 362};
    a = mk_run("a.json", 1000, 0.3, 40, qo, 2, 11);
    b = mk_run("b.json", 360, 0.3, 40, qn, 2, 12);
    verdict_and_steps(a, b, &v, &steps, &step);
    assert_int_equal(v, TB_TIME_IMPROVED);
    assert_int_equal(steps, 1);
    assert_true(step < -0.55 && step > -0.75);
    tb_resfile_free(a);
    tb_resfile_free(b);
}

/* history's steps and compare's verdicts agree on any pair of runs: a
 * grid of shifts, within-run noise and round spreads, each pair judged by
 * both (a step iff regressed or improved, in its direction). */
static void test_history_agrees_with_compare(void **state)
{
    (void)state;
    static const double shift[] = {-0.64, -0.2, -0.05, -0.025, -0.01, 0,
                                   0.01, 0.025, 0.05, 0.2, 1.5};
    static const double noise[] = {0.001, 0.02, 0.15};
    static const double spread[] = {0, 0.002, 0.05, 1.0};
    int seen[TB_RES_NVERDICTS + 1] = {0};
    uint64_t seed = 500;
    for (size_t i = 0; i < NELEM(shift); i++)
        for (size_t j = 0; j < NELEM(noise); j++)
            for (size_t r = 0; r < NELEM(spread); r++) {
                double nb = 1000 * (1 + shift[i]);
                double ro[2] = {1000, 1000 * (1 + spread[r])};
                double rn[2] = {nb * (1 + spread[r]), nb};
                int nr = spread[r] > 0 ? 2 : 0;
                tb_resfile *a = mk_run("a.json", 1000, noise[j], 30, ro, nr,
                                       seed++);
                tb_resfile *b = mk_run("b.json", nb, noise[j], 30, rn, nr,
                                       seed++);
                tb_time_verdict v;
                int steps;
                double step;
                verdict_and_steps(a, b, &v, &steps, &step);
                seen[v]++;
                bool dir = v == TB_TIME_REGRESSED || v == TB_TIME_IMPROVED;
                if (steps != (dir ? 1 : 0) ||
                    (dir && (step > 0) != (v == TB_TIME_REGRESSED)))
                    fail_msg("shift %g noise %g spread %g: compare '%s', "
                             "history %d step(s) %g", shift[i], noise[j],
                             spread[r], tb_res_verdict_name(v), steps,
                             step);
                tb_resfile_free(a);
                tb_resfile_free(b);
            }
    /* the grid holds every verdict, so the test can tell them apart */
    assert_true(seen[TB_TIME_REGRESSED] && seen[TB_TIME_IMPROVED] &&
                seen[TB_TIME_UNCHANGED] && seen[TB_TIME_INCONCLUSIVE]);
}

/* The one function's rules on hand-made figures. */
static void test_verdict_judge(void **state)
{
    (void)state;
    tb_verdict_in in = {.change = 0.1, .ci_low = 0.05, .ci_high = 0.15,
                        .p = 1e-9, .alpha = 0.01, .threshold = 0.02,
                        .floor = 0.02, .mde = 0.01};
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_REGRESSED);
    in.floor = 0.2; /* the change is inside the noise floor */
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_INCONCLUSIVE);
    in = (tb_verdict_in){.change = -0.64, .ci_low = -0.70, .ci_high = -0.13,
                         .p = 2e-8, .alpha = 0.01, .threshold = 0.02,
                         .floor = 0.02, .mde = 0.02};
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_IMPROVED);
    in.mde = INFINITY; /* a detection never needs the MDE */
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_IMPROVED);
    in.floor = 8936.84; /* 893,684%: the drop is inside the floor */
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_INCONCLUSIVE);
    /* equivalence: the whole CI inside +-T and mde <= T */
    in = (tb_verdict_in){.change = 0.001, .ci_low = -0.015, .ci_high = 0.018,
                         .p = 0.5, .alpha = 0.01, .threshold = 0.02,
                         .floor = 0.02, .mde = 0.015};
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_UNCHANGED);
    in.ci_high = 0.021; /* the CI spans +T */
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_INCONCLUSIVE);
    in.ci_high = 0.018;
    in.mde = 0.03; /* a change of T could not have been seen */
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_INCONCLUSIVE);
    in.mde = INFINITY; /* ab's "MDE none" */
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_INCONCLUSIVE);
    in.mde = NAN;
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_INCONCLUSIVE);
    /* the band is symmetric in ratio: 1/1.02 - 1 = -1.96% */
    in = (tb_verdict_in){.change = 0, .ci_low = -0.0197, .ci_high = 0.0,
                         .p = 1, .alpha = 0.01, .threshold = 0.02,
                         .floor = 0.02, .mde = 0};
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_INCONCLUSIVE);
    in.ci_low = -0.0195;
    assert_int_equal(tb_verdict_judge(&in), TB_RES_VERDICT_UNCHANGED);
    assert_string_equal(tb_res_verdict_name(TB_RES_VERDICT_INCONCLUSIVE),
                        "inconclusive");
}

/* ---- export --------------------------------------------------------------- */

static void test_export(void **state)
{
    (void)state;
    double *x = samples(20, 1000, 0.01, 5);
    spec s[] = {{"add/8/f32/cpu[threads=2]", NULL, x, 20, 1, 0},
                {"add/8/f64/cuda", "unavailable", NULL, 0, 0, 0}};
    tb_resfile *f = load_doc(make_doc(s, 2), "r.json");
    const tb_rescase *c = &f->cases[0];
    tb_export_format fmt;
    assert_int_equal(tb_export_parse_format("bmf", &fmt), 0);
    assert_int_equal(fmt, TB_EXPORT_BMF);
    assert_int_equal(tb_export_parse_format("csv", &fmt), TB_EINVAL);

    cJSON *g = tb_export(f, TB_EXPORT_GBENCH);
    cJSON *bs = cJSON_GetObjectItem(g, "benchmarks");
    assert_int_equal(cJSON_GetArraySize(bs), 2);
    cJSON *b0 = cJSON_GetArrayItem(bs, 0), *b1 = cJSON_GetArrayItem(bs, 1);
    assert_string_equal(cJSON_GetObjectItem(b0, "name")->valuestring, c->id);
    assert_close(cJSON_GetObjectItem(b0, "real_time")->valuedouble,
                 c->median_ns, 0);
    assert_close(cJSON_GetObjectItem(b0, "cpu_time")->valuedouble,
                 c->median_ns, 0);
    assert_close(cJSON_GetObjectItem(b0, "iterations")->valuedouble, 80, 0);
    assert_int_equal(cJSON_GetObjectItem(b0, "threads")->valueint, 2);
    assert_string_equal(cJSON_GetObjectItem(b0, "time_unit")->valuestring,
                        "ns");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(b1, "error_occurred")));
    /* Google Benchmark's convention for a run that did not happen: the
     * time fields are there (compare.py reads them) and zero. */
    assert_close(cJSON_GetObjectItem(b1, "real_time")->valuedouble, 0, 0);
    assert_close(cJSON_GetObjectItem(b1, "iterations")->valuedouble, 0, 0);
    assert_non_null(cJSON_GetObjectItem(b1, "error_message"));
    cJSON_Delete(g);

    cJSON *m = tb_export(f, TB_EXPORT_BMF);
    assert_int_equal(cJSON_GetArraySize(m), 1);
    cJSON *lat = cJSON_GetObjectItem(cJSON_GetObjectItem(m, c->id), "latency");
    assert_close(cJSON_GetObjectItem(lat, "value")->valuedouble, c->median_ns,
                 0);
    assert_close(cJSON_GetObjectItem(lat, "lower_value")->valuedouble,
                 c->ci_low_ns, 0);
    assert_close(cJSON_GetObjectItem(lat, "upper_value")->valuedouble,
                 c->ci_high_ns, 0);
    cJSON *kl = cJSON_GetObjectItem(cJSON_GetObjectItem(m, c->id),
                                    "kernel-launches-per-call");
    assert_close(cJSON_GetObjectItem(kl, "value")->valuedouble, 1, 0);
    cJSON_Delete(m);

    cJSON *a = tb_export(f, TB_EXPORT_GAB);
    assert_int_equal(cJSON_GetArraySize(a), 1);
    cJSON *e = cJSON_GetArrayItem(a, 0);
    assert_string_equal(cJSON_GetObjectItem(e, "unit")->valuestring, "ns");
    assert_close(cJSON_GetObjectItem(e, "value")->valuedouble, c->median_ns,
                 0);
    assert_int_equal(
        strncmp(cJSON_GetObjectItem(e, "range")->valuestring, "\u00b1 ", 3),
        0);
    assert_non_null(cJSON_GetObjectItem(e, "extra"));
    cJSON_Delete(a);
    tb_resfile_free(f);
    free(x);
}

/* ---- the cupti object of a case record ------------------------------ */

#define CU_HEAD "{\"schema\": \"tbench.results/1\", \"cases\": [{\"id\": " \
                "\"x\", " OPDB "\"status\": \"unavailable\", "
#define CU_MC(h2d)                                                        \
    "\"memcpy\": {\"h2d\": " h2d ", \"d2h\": {\"count\": 1, \"bytes\": " \
    "8}, \"d2d\": {\"count\": 0.5, \"bytes\": 4}, \"other\": "            \
    "{\"count\": 0, \"bytes\": 0}}, "
#define CU_REST                                                          \
    "\"memsets\": 0, \"memset_bytes\": 0, \"device_allocs\": 1, "          \
    "\"device_alloc_bytes\": 64, \"device_frees\": 1, "                     \
    "\"device_free_bytes\": 64, \"kernels_unlisted\": 0"
/* A record whose cupti object has `launches` and `kernels`. */
#define CU_DOC(iters, launches, h2d, kernels)                            \
    CU_HEAD "\"cupti\": {\"iterations\": " iters ", "                       \
    "\"kernel_launches\": " launches ", " CU_MC(h2d) CU_REST                 \
    ", \"kernels\": " kernels "}}]}"
#define CU_H2D "{\"count\": 2, \"bytes\": 16}"
#define CU_K1 "{\"name\": \"void f<float>(float*)\", \"count\": 1, " \
              "\"device_ns\": 1500.5}"
#define CU_K "[" CU_K1 "]"

static void test_load_cupti(void **state)
{
    (void)state;
    const char *text = CU_DOC("10", "3", CU_H2D, CU_K);
    tb_resfile *f;
    char err[512] = "";
    int rc = tb_resfile_from_text("t.json", text, strlen(text), &f, err,
                                  sizeof err);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    const tb_rescase *x = tb_resfile_find(f, "x");
    assert_int_equal(x->cupti_state, TB_RES_CUPTI_VALID);
    assert_null(x->cupti_reason);
    assert_close(x->cupti_ctr[TB_RES_CUPTI_LAUNCHES], 3, 0);
    assert_close(x->cupti_ctr[TB_RES_CUPTI_MEMCPYS], 3.5, 0); /* 2+1+.5 */
    assert_close(x->cupti_ctr[TB_RES_CUPTI_MEMSETS], 0, 0);
    assert_close(x->cupti_ctr[TB_RES_CUPTI_DEVICE_ALLOCS], 1, 0);
    assert_string_equal(tb_res_cupti_name(TB_RES_CUPTI_MEMCPYS),
                        "cupti.memcpys");
    tb_resfile_free(f);

    /* null with the reason; absent (an older file) */
    text = CU_HEAD "\"cupti\": null, \"cupti_reason\": \"no CUPTI\"}]}";
    assert_int_equal(tb_resfile_from_text("t.json", text, strlen(text), &f,
                                          err, sizeof err), 0);
    x = tb_resfile_find(f, "x");
    assert_int_equal(x->cupti_state, TB_RES_CUPTI_NULL);
    assert_string_equal(x->cupti_reason, "no CUPTI");
    assert_true(isnan(x->cupti_ctr[TB_RES_CUPTI_LAUNCHES]));
    tb_resfile_free(f);
    text = CU_HEAD "\"message\": \"m\"}]}";
    assert_int_equal(tb_resfile_from_text("t.json", text, strlen(text), &f,
                                          err, sizeof err), 0);
    assert_int_equal(tb_resfile_find(f, "x")->cupti_state,
                     TB_RES_CUPTI_ABSENT);
    tb_resfile_free(f);

    /* malformed: one line naming the case and the field */
    expect_load_error(CU_HEAD "\"cupti\": null}]}", TB_EINVAL,
                      "cases[0] (x): cupti is null but cupti_reason is not");
    expect_load_error(CU_HEAD "\"cupti\": null, \"cupti_reason\": \"\"}]}",
                      TB_EINVAL, "cupti_reason is not a non-empty string");
    expect_load_error(CU_HEAD "\"cupti\": 0, \"cupti_reason\": null}]}",
                      TB_EINVAL, "cases[0] (x): cupti: expected an object");
    expect_load_error(CU_HEAD "\"cupti\": null, \"cupti_reason\": 7}]}",
                      TB_EINVAL, "cupti_reason: expected a string or null");
    expect_load_error(CU_DOC("0", "3", CU_H2D, CU_K), TB_EINVAL,
                      "cases[0] (x): cupti.iterations: expected an integer");
    expect_load_error(CU_DOC("2.5", "3", CU_H2D, CU_K), TB_EINVAL,
                      "cupti.iterations: expected an integer >= 1");
    expect_load_error(CU_DOC("10", "-1", CU_H2D, CU_K), TB_EINVAL,
                      "cases[0] (x): cupti.kernel_launches: expected a "
                      "number >= 0");
    expect_load_error(CU_DOC("10", "null", CU_H2D, CU_K), TB_EINVAL,
                      "cupti.kernel_launches: expected a number >= 0");
    expect_load_error(CU_DOC("10", "1e999", CU_H2D, CU_K), TB_EINVAL,
                      "cupti.kernel_launches: expected a finite number");
    expect_load_error(CU_DOC("10", "3", "{\"count\": 2}", CU_K), TB_EINVAL,
                      "cases[0] (x): cupti.memcpy.h2d: expected");
    expect_load_error(CU_DOC("10", "3", "[]", CU_K), TB_EINVAL,
                      "cupti.memcpy.h2d: expected");
    expect_load_error(CU_DOC("10", "3", CU_H2D, "{}"), TB_EINVAL,
                      "cases[0] (x): cupti.kernels: expected an array");
    expect_load_error(CU_DOC("10", "3", CU_H2D,
                             "[{\"name\": \"\", \"count\": 1, "
                             "\"device_ns\": 1}]"),
                      TB_EINVAL, "cupti.kernels[0]: expected");
    expect_load_error(CU_DOC("10", "3", CU_H2D,
                             "[" CU_K1 ", {\"name\": \"g\", \"count\": -1, "
                             "\"device_ns\": 1}]"),
                      TB_EINVAL, "cupti.kernels[1]: expected");
}

/* One ok case "c" (the same samples for every seed-1 file) with CUPTI
 * counts: launches per iteration, or a negative value for "cupti": null
 * with the reason "no driver", or NAN for no cupti member at all. */
static tb_resfile *cupti_case(const char *name, double launches)
{
    double *x = samples(50, 1000, 0.01, 1);
    spec s = {"c", NULL, x, 50, 1, 0};
    cJSON *doc = make_doc(&s, 1);
    free(x);
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cases"), 0);
    if (launches < 0) {
        cJSON_AddNullToObject(c, "cupti");
        cJSON_AddStringToObject(c, "cupti_reason", "no driver");
    } else if (!isnan(launches)) {
        const char *text = CU_DOC("10", "0", CU_H2D, CU_K);
        cJSON *d = cJSON_Parse(text);
        assert_non_null(d);
        cJSON *cu = cJSON_DetachItemFromObject(
            cJSON_GetArrayItem(cJSON_GetObjectItem(d, "cases"), 0), "cupti");
        cJSON_Delete(d);
        cJSON_ReplaceItemInObject(cu, "kernel_launches",
                                  cJSON_CreateNumber(launches));
        cJSON_AddItemToObject(c, "cupti", cu);
        cJSON_AddNullToObject(c, "cupti_reason");
    }
    return load_doc(doc, name);
}

static void test_cupti_regression(void **state)
{
    (void)state;
    tb_resfile *a = cupti_case("old.json", 1);
    tb_resfile *b = cupti_case("new.json", 3);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    const tb_cmp_case *k = compare2(a, b, &o, &c);
    assert_int_equal(k->time, TB_TIME_UNCHANGED);
    assert_true(k->ctr_regressed);
    assert_int_equal(k->cu_dir[TB_RES_CUPTI_LAUNCHES], 1);
    assert_int_equal(k->cu_dir[TB_RES_CUPTI_MEMCPYS], 0);
    assert_close(k->cu_old[TB_RES_CUPTI_LAUNCHES], 1, 0);
    assert_close(k->cu_new[TB_RES_CUPTI_LAUNCHES], 3, 0);
    assert_close(k->cu_new[TB_RES_CUPTI_MEMCPYS], 3.5, 0);
    assert_string_equal(k->cu_na, "");
    assert_string_equal(tb_cmp_case_verdict(k), "counters");
    assert_true(c.failed);
    tb_cmp_free(&c);
    o.fail_on = TB_FAIL_TIME | TB_FAIL_STATUS; /* counters not failing */
    compare2(a, b, &o, &c);
    assert_false(c.failed);
    tb_cmp_free(&c);
    tb_cmp_opts_default(&o);
    k = compare2(b, a, &o, &c); /* 3 -> 1: an improvement */
    assert_true(k->ctr_improved && !k->ctr_regressed);
    assert_int_equal(k->cu_dir[TB_RES_CUPTI_LAUNCHES], -1);
    assert_false(c.failed);
    tb_cmp_free(&c);
    tb_resfile *a2 = cupti_case("old2.json", 1);
    k = compare2(a, a2, &o, &c);
    assert_false(k->ctr_regressed || k->ctr_improved);
    assert_string_equal(tb_cmp_case_verdict(k), "unchanged");
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(a2);
    tb_resfile_free(b);
}

static void test_cupti_one_side(void **state)
{
    (void)state;
    tb_resfile *a = cupti_case("old.json", 1);
    tb_resfile *n = cupti_case("null.json", -1);
    tb_resfile *z = cupti_case("none.json", NAN);
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp c;
    /* null on the new side: no verdict, says why, never a failure */
    const tb_cmp_case *k = compare2(a, n, &o, &c);
    assert_false(k->ctr_regressed || k->ctr_improved);
    assert_false(c.failed);
    assert_string_equal(k->cu_na, "no CUPTI verdict: not measured in the "
                                  "new run: no driver");
    assert_true(isnan(k->cu_new[TB_RES_CUPTI_LAUNCHES]));
    assert_close(k->cu_old[TB_RES_CUPTI_LAUNCHES], 1, 0);
    assert_string_equal(tb_cmp_case_verdict(k), "unchanged");
    cJSON *j = tb_cmp_json(&c);
    cJSON *cj = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cases"), 0);
    assert_string_equal(tb_json_str(cj, "cupti_no_verdict"), k->cu_na);
    cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(cj, "counters"),
                                   "cupti.kernel_launches");
    assert_string_equal(tb_json_str(e, "verdict"), "not-compared");
    cJSON_Delete(j);
    tb_cmp_free(&c);
    /* absent on the old side (an older file) */
    k = compare2(z, a, &o, &c);
    assert_string_equal(k->cu_na, "no CUPTI verdict: not measured in the "
                                  "old run: the file has no cupti field");
    tb_cmp_free(&c);
    /* neither side measured: nothing to say */
    k = compare2(n, z, &o, &c);
    assert_string_equal(k->cu_na, "");
    assert_false(k->ctr_regressed);
    tb_cmp_free(&c);
    tb_resfile_free(a);
    tb_resfile_free(n);
    tb_resfile_free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mwu_exact_small),
        cmocka_unit_test(test_mwu_exact_10),
        cmocka_unit_test(test_mwu_exact_50_40),
        cmocka_unit_test(test_mwu_normal_ties),
        cmocka_unit_test(test_mwu_normal_large),
        cmocka_unit_test(test_mwu_degenerate),
        cmocka_unit_test(test_ratio_ci_constant),
        cmocka_unit_test(test_ratio_ci_shift),
        cmocka_unit_test(test_identical_unchanged),
        cmocka_unit_test(test_shift10_regressed),
        cmocka_unit_test(test_small_shift_unchanged),
        cmocka_unit_test(test_not_significant),
        cmocka_unit_test(test_speedup_improved),
        cmocka_unit_test(test_within_run_floor),
        cmocka_unit_test(test_t_quantile),
        cmocka_unit_test(test_between_run_floor),
        cmocka_unit_test(test_round_floor),
        cmocka_unit_test(test_counter_regression),
        cmocka_unit_test(test_instr_counts),
        cmocka_unit_test(test_cache_counts),
        cmocka_unit_test(test_status_changes),
        cmocka_unit_test(test_mismatched_matrices),
        cmocka_unit_test(test_fail_on_parse),
        cmocka_unit_test(test_word_index),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_load_fields),
        cmocka_unit_test(test_changepoints),
        cmocka_unit_test(test_boot_median_sampler),
        cmocka_unit_test(test_boot_median_distribution),
        cmocka_unit_test(test_history),
        cmocka_unit_test(test_huge_floor_inconclusive),
        cmocka_unit_test(test_big_drop_never_unchanged),
        cmocka_unit_test(test_history_agrees_with_compare),
        cmocka_unit_test(test_verdict_judge),
        cmocka_unit_test(test_export),
        cmocka_unit_test(test_load_cupti),
        cmocka_unit_test(test_cupti_regression),
        cmocka_unit_test(test_cupti_one_side),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
