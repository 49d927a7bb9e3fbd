/* Tests for the paired A/B statistics (src/base/abstats.c) and the
 * verdicts of `tbench ab` (src/report/ab.c).
 *
 * Oracles:
 * - Wilcoxon: SciPy 1.10's scipy.stats.wilcoxon on the vectors of
 *   tests/data/ab/wilcoxon.json (made by gen_wilcoxon.py there): p to
 *   1e-12 relative for the exact test (both are sums of exact counts
 *   over 2^n) and 1e-9 for the normal approximation (erfc vs SciPy's
 *   norm.sf); W+ exactly.
 * - Bootstrap: the exact bootstrap distribution of the median of 6
 *   values, enumerated in this test over all 6^6 resamples; the
 *   resampled CI ends must lie within the exact quantiles at
 *   0.025 -/+ 0.004 and 0.975 -/+ 0.004 (4 standard errors of an
 *   empirical quantile of 20000 resamples: sqrt(0.025 0.975 / 20000) =
 *   0.0011).
 * - Holm: adjusted p values worked out by hand in the comments.
 * - MDE: the normal quantiles are SciPy's norm.ppf(0.975) and
 *   norm.ppf(0.8), pasted; the bootstrap MDE against the normal-theory
 *   power formula on normal noise, and its power checked by simulating
 *   fresh shifted blocks in the test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "base/abstats.h"
#include "base/error.h"
#include "base/fileio.h"
#include "base/stats.h"
#include "report/ab.h"

#define assert_close(got, want, rtol)                                     \
    check_close((got), (want), (rtol), #got, __FILE__, __LINE__)

static void check_close(double got, double want, double rtol,
                        const char *what, const char *file, int line)
{
    double tol = rtol * (fabs(want) > 1e-300 ? fabs(want) : 1.0);
    if (!(fabs(got - want) <= tol)) {
        print_error("%s:%d: %s = %.17g, expected %.17g (rtol %.3g)\n", file,
                    line, what, got, want, rtol);
        fail();
    }
}

static void test_wilcoxon_vs_scipy(void **state)
{
    (void)state;
    char *text = NULL, err[512];
    size_t len;
    assert_int_equal(tb_read_file("tests/data/ab/wilcoxon.json", &text, &len,
                                  err, sizeof err),
                     0);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    const cJSON *v;
    int seen = 0, exact = 0, normal = 0;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(doc, "vectors"))
    {
        const cJSON *dj = cJSON_GetObjectItem(v, "d");
        size_t n = (size_t)cJSON_GetArraySize(dj);
        double *d = malloc(n * sizeof *d);
        assert_non_null(d);
        for (size_t i = 0; i < n; i++)
            d[i] = cJSON_GetArrayItem(dj, (int)i)->valuedouble;
        tb_wilcoxon w;
        assert_int_equal(tb_wilcoxon_test(d, n, &w), 0);
        double p = cJSON_GetObjectItem(v, "p")->valuedouble;
        const char *name = cJSON_GetObjectItem(v, "name")->valuestring;
        print_message("# %s: n %zu p %.6g (scipy %.6g) %s\n", name, w.n, w.p,
                      p, w.exact ? "exact" : "normal");
        assert_int_equal(w.n, cJSON_GetObjectItem(v, "n")->valueint);
        assert_true(w.w_plus ==
                    cJSON_GetObjectItem(v, "w_plus")->valuedouble);
        /* Exact exactly where SciPy's "auto" is exact. */
        bool want_exact = !strncmp(name, "exact", 5);
        assert_int_equal(w.exact, want_exact);
        assert_close(w.p, p, w.exact ? 1e-12 : 1e-9);
        exact += w.exact;
        normal += !w.exact;
        seen++;
        free(d);
    }
    cJSON_Delete(doc);
    assert_true(seen >= 20 && exact >= 10 && normal >= 5);
}

static void test_wilcoxon_edges(void **state)
{
    (void)state;
    tb_wilcoxon w;
    double zeros[4] = {0, 0, 0, 0};
    assert_int_equal(tb_wilcoxon_test(zeros, 4, &w), 0);
    assert_int_equal(w.n, 0);
    assert_true(w.p == 1.0);
    double nan[2] = {0.1, NAN};
    assert_int_equal(tb_wilcoxon_test(nan, 2, &w), TB_EINVAL);
    assert_int_equal(tb_wilcoxon_test(NULL, 2, &w), TB_EINVAL);
    /* The smallest exact p: all n of one sign, 2 / 2^n. */
    double pos[9];
    for (int i = 0; i < 9; i++)
        pos[i] = 0.01 * (i + 1);
    assert_int_equal(tb_wilcoxon_test(pos, 9, &w), 0);
    assert_true(w.exact);
    assert_close(w.p, 2.0 / 512, 1e-15);
    assert_close(tb_wilcoxon_min_p(9), 2.0 / 512, 1e-15);
    assert_true(tb_wilcoxon_min_p(0) == 1.0);
}

/* Median of 6 values, the mean of the 3rd and 4th smallest. */
static double median6(const double *x)
{
    double s[6];
    memcpy(s, x, sizeof s);
    qsort(s, 6, sizeof *s, tb_cmp_double);
    return (s[2] + s[3]) / 2;
}

static void test_bootstrap_vs_exact_enumeration(void **state)
{
    (void)state;
    const double x[6] = {0.013, -0.004, 0.021, 0.002, 0.008, -0.011};
    enum { N = 6, ALL = 46656 }; /* 6^6 */
    double *med = malloc(ALL * sizeof *med);
    assert_non_null(med);
    for (int k = 0; k < ALL; k++) {
        double r[N];
        for (int i = 0, t = k; i < N; i++, t /= N)
            r[i] = x[t % N];
        med[k] = median6(r);
    }
    qsort(med, ALL, sizeof *med, tb_cmp_double);
    double lo, hi;
    assert_int_equal(tb_ab_bootstrap_median(x, N, 20000, 0.95, 42, &lo, &hi),
                     0);
    /* within the exact distribution's quantiles 0.025 -/+ 0.004 */
    assert_true(lo >= med[(int)(0.021 * ALL)] &&
                lo <= med[(int)(0.029 * ALL)]);
    assert_true(hi >= med[(int)(0.971 * ALL)] &&
                hi <= med[(int)(0.979 * ALL)]);
    /* deterministic for a seed */
    double lo2, hi2;
    assert_int_equal(
        tb_ab_bootstrap_median(x, N, 20000, 0.95, 42, &lo2, &hi2), 0);
    assert_true(lo == lo2 && hi == hi2);
    free(med);
    assert_int_equal(tb_ab_bootstrap_median(x, 0, 10, 0.95, 1, &lo, &hi),
                     TB_EINVAL);
    assert_int_equal(tb_ab_bootstrap_median(x, 6, 10, 1.0, 1, &lo, &hi),
                     TB_EINVAL);
}

static void test_holm(void **state)
{
    (void)state;
    /* Sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06),
     * 0.04 (x1 = 0.04, raised to the running max 0.06). */
    double p[4] = {0.01, 0.04, 0.03, 0.005}, adj[4];
    assert_int_equal(tb_holm(p, 4, adj), 0);
    assert_close(adj[0], 0.03, 1e-15);
    assert_close(adj[1], 0.06, 1e-15);
    assert_close(adj[2], 0.06, 1e-15);
    assert_close(adj[3], 0.02, 1e-15);
    /* capped at 1; in place */
    double q[3] = {0.5, 0.4, 0.9};
    assert_int_equal(tb_holm(q, 3, q), 0);
    assert_true(q[0] == 1.0 && q[1] == 1.0 && q[2] == 1.0);
    assert_int_equal(tb_holm(q, 0, q), 0);
}

static void test_mde(void **state)
{
    (void)state;
    const double z975 = 1.959963984540054, z80 = 0.8416212335729143;
    assert_close(tb_norm_quantile(0.975), z975, 1e-12);
    assert_close(tb_norm_quantile(0.8), z80, 1e-12);
    assert_close(tb_ab_mde(20, 0.01, 0.05),
                 (z975 + z80) * 0.01 / sqrt(20 * 3 / M_PI), 1e-12);
    /* 5 blocks cannot reach 0.05 (2/32 > 0.05); 6 can. */
    assert_true(isinf(tb_ab_mde(5, 0.01, 0.05)));
    assert_true(isfinite(tb_ab_mde(6, 0.01, 0.05)));
    /* more blocks, smaller MDE; more noise, larger */
    assert_true(tb_ab_mde(40, 0.01, 0.05) < tb_ab_mde(20, 0.01, 0.05));
    assert_true(tb_ab_mde(20, 0.02, 0.05) > tb_ab_mde(20, 0.01, 0.05));
}

/* Standard normal draw (Box-Muller) from the test's own generator. */
static double normal(tb_rng *r)
{
    double u = tb_rng_uniform(r), v = tb_rng_uniform(r);
    return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

static void test_mde_boot(void **state)
{
    (void)state;
    tb_rng r;
    tb_rng_seed(&r, 99);
    double d[20];
    for (int i = 0; i < 20; i++)
        d[i] = 0.01 * normal(&r);
    double boot = tb_ab_mde_boot(d, 20, 0.05, 0.8, 200, 7);
    /* Normal noise: near the normal-theory formula with the sample SD. */
    double mean = 0, ss = 0;
    for (int i = 0; i < 20; i++)
        mean += d[i] / 20;
    for (int i = 0; i < 20; i++)
        ss += (d[i] - mean) * (d[i] - mean);
    double formula = tb_ab_mde(20, sqrt(ss / 19), 0.05);
    print_message("# normal: boot MDE %.5f, formula %.5f\n", boot, formula);
    /* Calibration, by fresh simulation: N(boot, 0.01) blocks are
     * detected about 80% of the time (400 trials: +/- 0.06 at 3 SE). */
    int hit = 0;
    for (int t = 0; t < 400; t++) {
        double x[20];
        for (int i = 0; i < 20; i++)
            x[i] = boot + 0.01 * normal(&r);
        tb_wilcoxon w;
        assert_int_equal(tb_wilcoxon_test(x, 20, &w), 0);
        hit += w.p < 0.05;
    }
    print_message("# power at the MDE: %d/400\n", hit);
    assert_true(hit >= 0.68 * 400 && hit <= 0.92 * 400);
    assert_true(boot > 0.7 * formula && boot < 1.6 * formula);
    /* Heavy tails: 16 quiet blocks and 4 jumps of +/-7% (as preempted
     * blocks are).  The MAD sees only the quiet ones; the bootstrap MDE
     * is far larger than the MAD formula says. */
    double h[20];
    for (int i = 0; i < 20; i++)
        h[i] = i < 16 ? 0.001 * normal(&r) : (i % 2 ? 0.07 : -0.07);
    double tmp[20];
    memcpy(tmp, h, sizeof tmp);
    double med = tb_median_inplace(tmp, 20);
    for (int i = 0; i < 20; i++)
        tmp[i] = fabs(h[i] - med);
    double mad = 1.4826 * tb_median_inplace(tmp, 20);
    double hb = tb_ab_mde_boot(h, 20, 0.05, 0.8, 200, 7);
    print_message("# heavy tails: boot MDE %.5f, MAD formula %.5f\n", hb,
                  tb_ab_mde(20, mad, 0.05));
    assert_true(hb > 2 * tb_ab_mde(20, mad, 0.05));
    /* deterministic; too few blocks; bad arguments */
    assert_true(tb_ab_mde_boot(d, 20, 0.05, 0.8, 200, 7) == boot);
    assert_true(isinf(tb_ab_mde_boot(d, 5, 0.05, 0.8, 200, 7)));
    assert_true(isnan(tb_ab_mde_boot(d, 20, 0, 0.8, 200, 7)));
}

/* Blocks: old = 100 ns * noise, new = old * (1 + shift) * other noise. */
static void fill(tb_ab_case *c, const char *id, int n, double shift,
                 double noise, uint64_t seed, double *buf)
{
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    c->n = n;
    c->old_ns = buf;
    c->new_ns = buf + n;
    tb_rng r;
    tb_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        double a = 100 * (1 + noise * (tb_rng_uniform(&r) - 0.5));
        c->old_ns[i] = a;
        c->new_ns[i] = a * (1 + shift) *
                       (1 + noise * (tb_rng_uniform(&r) - 0.5));
    }
}

static void test_verdicts(void **state)
{
    (void)state;
    double buf[5][40];
    tb_ab_case c[5];
    fill(&c[0], "same", 20, 0, 0.01, 1, buf[0]);
    fill(&c[1], "slower", 20, 0.05, 0.01, 2, buf[1]);
    fill(&c[2], "faster", 20, -0.05, 0.01, 3, buf[2]);
    fill(&c[3], "failed", 20, 0, 0.01, 4, buf[3]);
    c[3].failed = true;
    snprintf(c[3].message, sizeof c[3].message, "new build: crashed");
    fill(&c[4], "tiny", 20, 0.002, 0.0001, 5, buf[4]);
    tb_ab_opts o;
    tb_ab_opts_default(&o);
    assert_int_equal(tb_ab_analyze(c, 5, &o), 0);
    /* no shift, +-0.5% noise, 20 blocks: CI and MDE inside the 0.5%
     * threshold */
    assert_true(c[0].mde <= o.threshold);
    assert_int_equal(c[0].verdict, TB_AB_UNCHANGED);
    assert_int_equal(c[1].verdict, TB_AB_REGRESSED);
    assert_int_equal(c[2].verdict, TB_AB_IMPROVED);
    assert_int_equal(c[3].verdict, TB_AB_ERROR);
    /* significant but under the 0.5% threshold, CI and MDE inside it:
     * unchanged (an equivalence test) */
    assert_true(c[4].p_holm < o.alpha);
    assert_true(c[4].ci_high <= o.threshold && c[4].mde <= o.threshold);
    assert_int_equal(c[4].verdict, TB_AB_UNCHANGED);
    assert_true(fabs(c[1].change - 0.05) < 0.01);
    assert_true(c[1].ci_low > 0 && c[1].ci_high < 0.1);
    assert_true(c[2].ci_high < 0);
    /* Holm over the 4 cases with a p: p_holm >= p, <= 4 p */
    for (int k = 0; k < 5; k++) {
        if (k == 3)
            continue;
        assert_true(c[k].p_holm >= c[k].p);
        assert_true(c[k].p_holm <= fmin(1, 4 * c[k].p) * (1 + 1e-12));
        assert_true(c[k].mde >= o.threshold);
    }
    cJSON *j = tb_ab_json(c, 5, &o, cJSON_CreateObject(),
                          cJSON_CreateObject());
    assert_non_null(j);
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary"), "regressed")
            ->valueint,
        1);
    cJSON_Delete(j);
    /* too few blocks for alpha/m: no verdict can be reached, MDE none:
     * inconclusive, never "same" (ux review D5), and --max-mde fails it */
    fill(&c[0], "short", 6, 0.2, 0.01, 6, buf[0]);
    fill(&c[1], "short2", 6, 0.2, 0.01, 7, buf[1]);
    assert_int_equal(tb_ab_analyze(c, 2, &o), 0);
    assert_int_equal(c[0].verdict, TB_AB_INCONCLUSIVE);
    assert_true(isinf(c[0].mde));
    assert_int_equal(tb_ab_unresolved(c, 2, &o), 0); /* no limit */
    o.max_mde = 0.05;
    assert_int_equal(tb_ab_unresolved(c, 2, &o), 2);
    /* no shift, +-10% noise: the blocks cannot resolve 0.5% */
    o.max_mde = INFINITY;
    fill(&c[0], "noisy", 20, 0, 0.2, 9, buf[0]);
    assert_int_equal(tb_ab_analyze(c, 1, &o), 0);
    assert_true(c[0].mde > o.threshold);
    assert_int_equal(c[0].verdict, TB_AB_INCONCLUSIVE);
    o.max_mde = 0.05;
    fill(&c[0], "quiet", 20, 0, 0.0001, 8, buf[0]);
    assert_int_equal(tb_ab_analyze(c, 1, &o), 0);
    assert_int_equal(c[0].verdict, TB_AB_UNCHANGED);
    assert_int_equal(tb_ab_unresolved(c, 1, &o), 0);
}

/* Sequential looks (ab.h): look k spends alpha / (k (k + 1)); a case is
 * judged with p / share in Holm, its CI at 1 - 0.05 share; tb_ab_look
 * stops each case for its reason. */
static void test_sequential(void **state)
{
    (void)state;
    assert_true(fabs(tb_ab_look_share(1) - 0.5) < 1e-15);
    assert_true(fabs(tb_ab_look_share(2) - 1.0 / 6) < 1e-15);
    assert_true(tb_ab_look_share(0) == 1);
    static double buf[4][2 * 200];
    tb_ab_case c[4];
    fill(&c[0], "slower", 200, 0.05, 0.01, 11, buf[0]);
    fill(&c[1], "quiet", 200, 0, 0.0001, 12, buf[1]);
    fill(&c[2], "noisy", 200, 0, 0.3, 13, buf[2]);
    fill(&c[3], "failed", 200, 0, 0.01, 14, buf[3]);
    c[3].failed = true;
    tb_ab_opts o;
    tb_ab_opts_default(&o);
    o.sequential = true;
    int rc = 0;
    /* look 1 after 12 blocks: the shift is decided, the quiet case
     * reaches a 2% target, the noisy one stays open */
    assert_int_equal(tb_ab_look(c, 4, &o, 1, 12, 0.02, NULL, &rc), 1);
    assert_int_equal(rc, 0);
    assert_string_equal(c[0].stop, "decided");
    assert_int_equal(c[0].verdict, TB_AB_REGRESSED);
    assert_string_equal(c[1].stop, "target");
    assert_null(c[2].stop);
    assert_string_equal(c[3].stop, "error");
    assert_true(fabs(c[0].ci_level - (1 - 0.05 / 2)) < 1e-12);
    /* one p per judged case, each divided by its look's share */
    for (int k = 0; k < 3; k++)
        assert_true(c[k].p_holm >= fmin(1, c[k].p * 2) * (1 - 1e-12));
    /* look 3 ends the run (the budget): the open case stops there with
     * its blocks and level; the stopped ones keep theirs */
    assert_int_equal(tb_ab_look(c, 4, &o, 3, 40, 0.02, "budget", &rc), 0);
    assert_string_equal(c[2].stop, "budget");
    assert_int_equal(c[2].n, 40);
    assert_int_equal(c[2].look, 3);
    assert_int_equal(c[0].n, 12);
    assert_int_equal(c[0].look, 1);
    assert_true(fabs(c[2].ci_level - (1 - 0.05 / 12)) < 1e-12);
    assert_int_equal(c[2].verdict, TB_AB_INCONCLUSIVE);

    /* Peeking at no change: A/A runs looked at after 12, 18, 27 and 40
     * blocks, each stopped at the first look that calls a change (the
     * rule most likely to find a false one).  With the looks' shares the
     * false-change rate stays at alpha (0.05; the bound allows 3 binomial
     * sigmas over 300 runs); judging every look at the full alpha (a
     * fixed design's p, share 1) finds more. */
    static const int looks[4] = {12, 18, 27, 40};
    int false_seq = 0, false_naive = 0;
    const int runs = 300;
    o.power_resamples = 0; /* a change needs no MDE: faster */
    o.threshold = 0;       /* any change counts: peeking shows most */
    for (int r = 0; r < runs; r++) {
        for (int naive = 0; naive < 2; naive++) {
            tb_ab_case one;
            fill(&one, "aa", 40, 0, 0.02, 1000 + (uint64_t)r, buf[0]);
            o.sequential = !naive;
            bool found = false;
            for (int l = 0; l < 4 && !found; l++) {
                one.n = looks[l];
                one.look = l + 1;
                assert_int_equal(tb_ab_analyze(&one, 1, &o), 0);
                found = one.verdict == TB_AB_REGRESSED ||
                        one.verdict == TB_AB_IMPROVED;
            }
            if (found)
                *(naive ? &false_naive : &false_seq) += 1;
        }
    }
    double sigma = sqrt(0.05 * 0.95 / runs);
    assert_true((double)false_seq / runs <= 0.05 + 3 * sigma);
    print_message("# false changes in %d A/A runs, 4 looks: %d with the "
                  "looks' shares, %d at the full alpha\n", runs, false_seq,
                  false_naive);
    assert_true(false_naive > false_seq);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wilcoxon_vs_scipy),
        cmocka_unit_test(test_wilcoxon_edges),
        cmocka_unit_test(test_bootstrap_vs_exact_enumeration),
        cmocka_unit_test(test_holm),
        cmocka_unit_test(test_mde),
        cmocka_unit_test(test_mde_boot),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_sequential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
