/* The calibration ops (src/ops/calib.h): TBENCH_CALIB_SCALE parsing, the
 * step count, the shape rule, and calib_work's outputs from the cpu
 * kernel and the reference against vectors computed independently in
 * Python (arbitrary-precision integers, masked to 64 bits):
 *
 *   x = 0x9e3779b97f4a7c15
 *   for s in range(steps):
 *       x = ((x ^ (x >> 29)) * 0xbf58476d1ce4e5b9
 *            + 0x94d049bb133111eb) & (2**64 - 1)
 *       o[s % n] = x >> 40
 *
 * calib_spin: it spins at least the time asked (a lower bound that holds
 * by construction, not a timing expectation) and writes 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "testutil.h"

#include "backends/backend.h"
#include "base/error.h"
#include "ops/calib.h"
#include "ops/op.h"
#include "ops/ref.h"

extern const tb_backend tb_backend_cpu;
static const tb_backend *const B = &tb_backend_cpu;

static void *instance(void)
{
    const char *vals[2] = {"auto", "1"};
    void *ctx = NULL;
    char err[256] = "";
    if (B->create(B, vals, &ctx, err, sizeof err))
        fail_msg("cpu create: %s", err);
    return ctx;
}

static void set_scale(const char *s)
{
    if (s)
        setenv("TBENCH_CALIB_SCALE", s, 1);
    else
        unsetenv("TBENCH_CALIB_SCALE");
    tb_calib_scale_reload();
}

static void test_scale_parse(void **state)
{
    (void)state;
    static const char *const good[] = {"1", "1.02", "0.5", "1e-3", "1000",
                                       "1.005"};
    static const double want[] = {1, 1.02, 0.5, 1e-3, 1000, 1.005};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double v = -1;
        assert_int_equal(tb_calib_scale_parse(good[i], &v), 0);
        assert_true(v == want[i]);
    }
    static const char *const bad[] = {"", "abc", "0", "-1", "1000.5",
                                      "nan", "inf", "1.0x", " ", "1,02"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v = -1;
        assert_int_equal(tb_calib_scale_parse(bad[i], &v), -1);
        assert_true(v == -1);
    }
    assert_int_equal(tb_calib_scale_parse(NULL, NULL), -1);

    set_scale(NULL);
    assert_null(tb_calib_scale_env_error());
    assert_true(tb_calib_scale() == 1.0);
    set_scale("1.25");
    assert_null(tb_calib_scale_env_error());
    assert_true(tb_calib_scale() == 1.25);
    set_scale("fast");
    assert_string_equal(tb_calib_scale_env_error(), "fast");
    assert_true(tb_calib_scale() == 1.0); /* refused by the CLI first */
    set_scale(NULL);
}

static void test_steps(void **state)
{
    (void)state;
    assert_int_equal(tb_calib_steps(100000, 1.0), 100000);
    assert_int_equal(tb_calib_steps(100000, 1.02), 102000);
    assert_int_equal(tb_calib_steps(100000, 1.005), 100500);
    assert_int_equal(tb_calib_steps(5, 1.5), 8);  /* 7.5, to even */
    assert_int_equal(tb_calib_steps(7, 0.5), 4);  /* 3.5, to even */
    assert_int_equal(tb_calib_steps(3, 0.1), 1);  /* at least one */
    assert_int_equal(tb_calib_steps(1, 1e-3), 1);
}

static void test_shape_rule(void **state)
{
    (void)state;
    const tb_op *w = tb_op_find("calib_work");
    const tb_op *s = tb_op_find("calib_spin");
    assert_non_null(w);
    assert_non_null(s);
    assert_string_equal(tb_op_category_name(w->category), "calibration");
    tb_params p = {0};
    tb_params_defaults(s, &p);
    assert_true(p.v[0] == 1000);
    tb_shape in = SHAPE(513), out;
    char err[256] = "";
    assert_int_equal(tb_op_infer(w, &in, 1, &p, &out, err, sizeof err), 0);
    assert_int_equal(out.ndim, 1);
    assert_int_equal(out.dim[0], 513);
    in = (tb_shape)SHAPE(2, 3);
    assert_int_equal(tb_op_infer(w, &in, 1, &p, &out, err, sizeof err),
                     TB_ESHAPE);
    assert_non_null(strstr(err, "1-D [n]"));
    in = (tb_shape)SHAPE(2);
    assert_int_equal(tb_op_infer(s, &in, 1, &p, &out, err, sizeof err),
                     TB_ESHAPE);
    assert_non_null(strstr(err, "[1]"));
    in = (tb_shape)SHAPE(1);
    assert_int_equal(tb_op_infer(s, &in, 1, &p, &out, err, sizeof err), 0);
}

typedef struct work_vec {
    int64_t n;
    const char *scale; /* NULL: unset */
    uint64_t steps;
    double out[8];
} work_vec;

static const work_vec vecs[] = {
    {1, NULL, 1, {6213856}},
    {7, NULL, 7, {6213856, 5907346, 238750, 15542157, 3874582, 10257193,
                  5959524}},
    {5, "1.5", 8, {10257193, 5959524, 335693, 15542157, 3874582}},
    {7, "0.5", 4, {6213856, 5907346, 238750, 15542157, 0, 0, 0}},
    {3, "3.3", 10, {9889569, 335693, 10584553}},
};

/* Runs the kernel (dtype dt) and the reference for n elements; returns
 * the kernel's output as doubles in got (n entries), checks the
 * reference equals it. */
static void run_work(void *ctx, tb_dtype dt, int64_t n, double *got)
{
    const tb_op *op = tb_op_find("calib_work");
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, NULL, &impl).fn;
    assert_non_null(fn);
    assert_string_equal(impl, dt == TB_F32 ? "calib_work_f32_c"
                                           : "calib_work_f64_c");
    tb_shape sh = SHAPE(n);
    tb_tensor out, ref;
    assert_int_equal(tb_tensor_create(&out, dt, &sh), 0);
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &sh), 0);
    tb_params p = {0};
    for (int64_t i = 0; i < n; i++) /* stale values must be overwritten */
        tb_tensor_set(&out, i, -7);
    assert_int_equal(fn(ctx, NULL, &out, &p), 0);
    assert_int_equal(tb_ref_calib_work(NULL, &ref, &p), 0);
    for (int64_t i = 0; i < n; i++) {
        got[i] = tb_tensor_get(&out, i);
        assert_true(got[i] == ((double *)ref.data)[i]);
    }
    tb_tensor_destroy(&out);
    tb_tensor_destroy(&ref);
}

static void test_work_vectors(void **state)
{
    (void)state;
    void *ctx = instance();
    for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; v++) {
        set_scale(vecs[v].scale);
        assert_int_equal(tb_calib_steps(vecs[v].n, tb_calib_scale()),
                         vecs[v].steps);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            double got[8];
            run_work(ctx, (tb_dtype)dt, vecs[v].n, got);
            for (int64_t i = 0; i < vecs[v].n; i++)
                if (got[i] != vecs[v].out[i])
                    fail_msg("n=%lld scale=%s %s: out[%lld] = %.0f, "
                             "python %.0f",
                             (long long)vecs[v].n,
                             vecs[v].scale ? vecs[v].scale : "unset",
                             tb_dtype_name((tb_dtype)dt), (long long)i,
                             got[i], vecs[v].out[i]);
        }
    }
    /* Longer chains: the sum of the outputs and one element (Python). */
    static const struct {
        int64_t n;
        const char *scale;
        double sum, first, last;
    } big[] = {
        {1000, NULL, 8280064546.0, -1, 611894},
        {100000, "1.02", 839073517701.0, 11203205, 10626950},
    };
    for (size_t v = 0; v < sizeof big / sizeof big[0]; v++) {
        set_scale(big[v].scale);
        double *got = malloc((size_t)big[v].n * sizeof *got);
        assert_non_null(got);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            run_work(ctx, (tb_dtype)dt, big[v].n, got);
            double sum = 0;
            for (int64_t i = 0; i < big[v].n; i++)
                sum += got[i];
            assert_true(sum == big[v].sum);
            if (big[v].first >= 0)
                assert_true(got[0] == big[v].first);
            assert_true(got[big[v].n - 1] == big[v].last);
        }
        free(got);
    }
    set_scale(NULL);
    B->destroy(ctx);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_spin(void **state)
{
    (void)state;
    void *ctx = instance();
    const tb_op *op = tb_op_find("calib_spin");
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
        tb_kernel_fn fn = B->kernel(ctx, op, (tb_dtype)dt, NULL, NULL).fn;
        assert_non_null(fn);
        tb_shape sh = SHAPE(1);
        tb_tensor out;
        assert_int_equal(tb_tensor_create(&out, (tb_dtype)dt, &sh), 0);
        tb_tensor_set(&out, 0, 5);
        tb_params p = {0};
        char err[128];
        assert_int_equal(tb_params_set(op, &p, "ns", 200000, err,
                                       sizeof err), 0);
        uint64_t t0 = now_ns();
        assert_int_equal(fn(ctx, NULL, &out, &p), 0);
        assert_true(now_ns() - t0 >= 200000);
        assert_true(tb_tensor_get(&out, 0) == 0);
        /* a wrong shape is refused, not written past */
        tb_shape two = SHAPE(2, 1);
        tb_tensor bad;
        assert_int_equal(tb_tensor_create(&bad, (tb_dtype)dt, &two), 0);
        assert_int_not_equal(fn(ctx, NULL, &bad, &p), 0);
        tb_tensor_destroy(&bad);
        tb_tensor_destroy(&out);
    }
    B->destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale_parse),
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_shape_rule),
        cmocka_unit_test_setup_teardown(test_work_vectors, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_spin, leak_setup,
                                        leak_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
