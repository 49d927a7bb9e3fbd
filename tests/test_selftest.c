/* tbench selftest (src/harness/selftest.h) with a FAKE clock installed
 * (src/base/clock.h): every reading advances time by a fixed cost and
 * is rounded down to a step, and nothing else takes time, so the runner,
 * the batching, the overhead subtraction and calib_spin all run on a
 * clock whose behaviour is known exactly.  The test checks the clock
 * figures selftest reports, that every spin point's error is within the
 * bound selftest states, and, where the arithmetic is exact, the error
 * itself: with cost C (a multiple of the step) calib_spin(ns) makes
 * 1 + ceil(ns / C) readings (the start, then its loop until ns have
 * passed; 0 ns: one loop reading), so net = (ceil(ns / C) - 1) * C.
 * No timing of the real machine is asserted.
 *
 * The normal quantile and the MDE formula against SciPy
 * (scipy.stats.norm.ppf, values printed by python3 in the comments). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

#include "base/clock.h"
#include "harness/selftest.h"

typedef struct fake_clock {
    uint64_t t, cost, step;
    uint64_t reads;
} fake_clock;

static uint64_t fake_read(void *arg)
{
    fake_clock *f = arg;
    f->t += f->cost;
    f->reads++;
    return f->t - f->t % f->step;
}

static void run_fake(uint64_t cost, uint64_t step, tb_selftest *st)
{
    fake_clock f = {.t = 1000000, .cost = cost, .step = step};
    tb_clock_set(fake_read, &f);
    tb_clock_set_res((double)step);
    tb_selftest_opts o;
    tb_selftest_opts_default(&o);
    o.runs = 0; /* calib_work takes no fake time: no MDE here */
    o.max_time_s = 0.05;
    char err[512] = "";
    int rc = tb_selftest_run(&o, st, err, sizeof err);
    tb_clock_set(NULL, NULL);
    if (rc)
        fail_msg("selftest: %s", err);
    assert_true(f.reads > 0);
    print_message("# fake clock cost %llu step %llu: %llu readings\n",
                  (unsigned long long)cost, (unsigned long long)step,
                  (unsigned long long)f.reads);
}

static void check_bounds(const tb_selftest *st)
{
    for (int i = 0; i < TB_SELFTEST_NSPIN; i++) {
        const tb_selftest_point *p = &st->spin[i];
        double want_bound = st->clock_cost_ns + st->clock_step_ns +
                            st->clock_step_ns /
                                (double)p->iters_per_sample;
        assert_true(p->iters_per_sample >= 1);
        assert_true(fabs(p->bound_ns - want_bound) < 1e-9);
        if (!(fabs(p->err_ns) <= p->bound_ns) || !p->within)
            fail_msg("spin %.0f ns: error %.3f ns, bound %.3f ns",
                     p->true_ns, p->err_ns, p->bound_ns);
        assert_true(fabs(p->err_ns - (p->net_ns - p->true_ns)) < 1e-9);
        assert_true(fabs(p->rel_err - p->err_ns / p->true_ns) < 1e-12);
    }
}

/* Cost a multiple of the step: every figure is exact. */
static void test_fake_clock_exact(void **state)
{
    (void)state;
    tb_selftest st;
    run_fake(30, 10, &st);
    assert_true(st.clock_res_ns == 10);
    assert_true(st.clock_step_ns == 30);
    assert_true(st.clock_cost_ns == 30);
    assert_true(st.overhead_ns == 30);
    assert_true(st.spin0_ns == 60); /* start + one loop reading */
    static const double want_true[] = {100, 1000, 10000, 1000000};
    for (int i = 0; i < TB_SELFTEST_NSPIN; i++) {
        const tb_selftest_point *p = &st.spin[i];
        assert_true(p->true_ns == want_true[i]);
        double net = (ceil(want_true[i] / 30) - 1) * 30;
        if (p->net_ns != net || p->measured_ns != net + 60)
            fail_msg("spin %.0f: net %.3f (want %.0f), measured %.3f",
                     want_true[i], p->net_ns, net, p->measured_ns);
        assert_true(p->n_samples >= 10);
    }
    /* Batching: a sample of the 100 ns spin (150 ns a call here) lasts
     * 0.9 to 2 times sample_time (1 ms, the runner's refinement window),
     * and the 1 ms spin is one call per sample. */
    assert_true(st.spin[0].iters_per_sample * 150 >= 900000);
    assert_true(st.spin[0].iters_per_sample * 150 <= 2000000);
    assert_int_equal(st.spin[3].iters_per_sample, 1);
    check_bounds(&st);
    assert_int_equal(st.runs, 0);
}

/* Cost not a multiple of the step, a coarse step: readings jitter by a
 * step, and the errors still stay within the stated bound. */
static void test_fake_clock_coarse(void **state)
{
    (void)state;
    tb_selftest st;
    run_fake(25, 10, &st);
    assert_true(st.clock_res_ns == 10);
    assert_true(st.clock_step_ns == 20); /* readings 30 or 20 apart */
    assert_true(st.clock_cost_ns >= 20 && st.clock_cost_ns <= 30);
    check_bounds(&st);
    run_fake(37, 1, &st);
    assert_true(st.clock_step_ns == 37);
    assert_true(st.clock_cost_ns == 37);
    check_bounds(&st);
    /* A clock as slow as the spin itself: still within. */
    run_fake(700, 100, &st);
    check_bounds(&st);
}

static void test_bad_options(void **state)
{
    (void)state;
    tb_selftest_opts o;
    tb_selftest st;
    char err[256];
    tb_selftest_opts_default(&o);
    o.runs = 2;
    assert_int_not_equal(tb_selftest_run(&o, &st, err, sizeof err), 0);
    assert_non_null(strstr(err, "runs"));
    tb_selftest_opts_default(&o);
    o.alpha = 0;
    assert_int_not_equal(tb_selftest_run(&o, &st, err, sizeof err), 0);
    assert_non_null(strstr(err, "alpha"));
}

static void test_normal_quantile(void **state)
{
    (void)state;
    static const struct {
        double p, z;
    } v[] = {
        {0.995, 2.5758293035489004}, {0.8, 0.8416212335729143},
        {0.975, 1.959963984540054},  {1e-6, -4.753424308822899},
        {0.5, 0.0},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        double z = tb_normal_quantile(v[i].p);
        if (!(fabs(z - v[i].z) <= 1e-12 * (1 + fabs(v[i].z))))
            fail_msg("z(%g) = %.17g, scipy %.17g", v[i].p, z, v[i].z);
    }
    assert_true(isnan(tb_normal_quantile(0)));
    assert_true(isnan(tb_normal_quantile(1)));
    assert_true(isnan(tb_normal_quantile(NAN)));
}

static void test_mde_formula(void **state)
{
    (void)state;
    /* (norm.ppf(0.995) + norm.ppf(0.8)) * cv * sqrt(2 / m) */
    assert_true(fabs(tb_selftest_mde(0.01, 1, 0.01, 0.8) -
                     0.048330048983368894) < 1e-12);
    assert_true(fabs(tb_selftest_mde(0.027, 5, 0.01, 0.8) -
                     0.05835740843666201) < 1e-12);
    /* (norm.ppf(0.975) + norm.ppf(0.9)) * 0.05 * sqrt(2 / 3) */
    assert_true(fabs(tb_selftest_mde(0.05, 3, 0.05, 0.9) -
                     0.13233431818340888) < 1e-12);
    assert_true(tb_selftest_mde(0, 1, 0.01, 0.8) == 0);
    assert_true(isnan(tb_selftest_mde(-1, 1, 0.01, 0.8)));
    assert_true(isnan(tb_selftest_mde(0.01, 0, 0.01, 0.8)));
    assert_true(isnan(tb_selftest_mde(0.01, 1, 1, 0.8)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fake_clock_exact),
        cmocka_unit_test(test_fake_clock_coarse),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_normal_quantile),
        cmocka_unit_test(test_mde_formula),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
