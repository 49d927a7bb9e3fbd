/* Planner and runner: case ids, plan-time errors, and the measurement
 * loop driven through fake backends whose behaviour is known exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "fake_hostmem.h"
#include "harness/check.h"
#include "harness/config.h"
#include "harness/plan.h"
#include "harness/runner.h"
#include "base/stats.h"
#include "harness/timer.h"
#include "ops/alloc.h"
#include "base/error.h"

/* ---- a fake backend: host memory, one op (add), a switchable bug --------- */

typedef struct {
    int bug;          /* 1: add writes a + b + 1e-3 */
    int allocs_per_call;
    uint64_t launches;
} fake_ctx;

static fake_ctx fake_state;

static int fake_create(const tb_backend *self, const char *const *v,
                       void **ctx, char *e, size_t n)
{
    (void)self, (void)v, (void)e, (void)n;
    *ctx = &fake_state;
    return 0;
}
static int fake_add(void *ctx, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    (void)p;
    fake_ctx *f = ctx;
    f->launches++;
    for (int i = 0; i < f->allocs_per_call; i++)
        tb_free(tb_alloc(64));
    const float *a = in[0].data, *b = in[1].data;
    float *o = out->data;
    int64_t n = tb_tensor_numel(out);
    for (int64_t i = 0; i < n; i++)
        o[i] = a[i] + b[i] + (f->bug ? 1e-3f : 0.0f);
    return 0;
}
static int fake_relu(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    (void)p;
    fake_ctx *f = ctx;
    f->launches++;
    const float *a = in[0].data;
    float *o = out->data;
    int64_t n = tb_tensor_numel(out);
    for (int64_t i = 0; i < n; i++)
        o[i] = a[i] > 0 ? a[i] : 0;
    return 0;
}
/* add (and add_: fake_add reads a[i] before writing o[i]) and relu. */
static tb_kernel fake_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                             const tb_params *p, const char **impl)
{
    (void)p;
    if (dt != TB_F32)
        return (tb_kernel){NULL, NULL};
    if (op->id == TB_OP_add || op->id == TB_OP_add_) {
        *impl = "fake_add";
        return (tb_kernel){fake_add, ctx};
    }
    if (op->id == TB_OP_relu) {
        *impl = "fake_relu";
        return (tb_kernel){fake_relu, ctx};
    }
    return (tb_kernel){NULL, NULL};
}
static void fake_counters(void *ctx, tb_backend_counters *out)
{
    out->kernel_launches = ((fake_ctx *)ctx)->launches;
}

static const tb_backend fake_backend = {
    .name = "fake",
    .doc = "test double",
    .probe = hostmem_probe,
    .axes = hostmem_axes,
    .create = fake_create,
    .destroy = hostmem_destroy,
    .alloc = hostmem_alloc,
    .free = hostmem_free,
    .upload = hostmem_copy,
    .download = hostmem_copy,
    .kernel = fake_kernel,
    .counters = fake_counters,
};

static tb_config test_cfg;

/* Storage for the shapes and ids of the cases make_case returns (the
 * last CASE_SLOTS of them stay valid). */
#define CASE_SLOTS 64
static tb_shape case_shapes[CASE_SLOTS][TB_MAX_INPUTS + TB_MAX_OUTPUTS];
static char case_ids[CASE_SLOTS][64];
static int case_next;

static tb_case make_case(tb_op_id id, tb_dtype dt, int64_t n)
{
    tb_case c;
    memset(&c, 0, sizeof c);
    int slot = case_next++ % CASE_SLOTS;
    tb_shape *in = case_shapes[slot], *out = in + TB_MAX_INPUTS;
    memset(case_shapes[slot], 0, sizeof case_shapes[slot]);
    tb_config_defaults(&test_cfg);
    test_cfg.warmup.min_time_s = 0.001;
    test_cfg.measure.sample_time_s = 0.0002;
    test_cfg.measure.max_time_s = 0.2;
    test_cfg.measure.max_samples = 200;
    c.warmup = test_cfg.warmup;
    c.measure = test_cfg.measure;
    c.op = tb_op_get(id);
    c.dtype = dt;
    c.n_in = c.op->n_in;
    for (int i = 0; i < c.n_in; i++)
        in[i] = (tb_shape){1, {n}};
    if (id == TB_OP_linear_unfused) { /* x [n,4] @ W [4,3] + b [3] */
        in[0] = (tb_shape){2, {n, 4}};
        in[1] = (tb_shape){2, {4, 3}};
        in[2] = (tb_shape){1, {3}};
    }
    char err[256];
    assert_int_equal(tb_op_infer(c.op, in, c.n_in, &c.params, out, err,
                                 sizeof err),
                     0);
    c.in = in;
    c.out = out;
    c.unavailable_reason = "";
    c.backend = &fake_backend;
    c.available = true;
    c.seed = 7;
    c.items = (double)n;
    c.bytes = 12.0 * (double)n;
    c.flops = (double)n;
    c.reduce_len = 1;
    snprintf(case_ids[slot], sizeof case_ids[slot], "add/%lld/f32/fake",
             (long long)n);
    c.id = case_ids[slot];
    return c;
}

static void test_run_ok_and_counters(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    memset(&fake_state, 0, sizeof fake_state);
    fake_state.allocs_per_call = 2;
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(TB_OP_add, TB_F32, 4096);
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_string_equal(res.impl, "fake_add");
    assert_true(res.checked && res.check.passed);
    assert_true(res.n_samples >= 3);
    assert_true(res.n_samples <= 200);
    assert_true(res.iters_per_sample >= 1);
    assert_non_null(res.stop_reason);
    /* counters are exact per iteration: 1 launch, 2 allocs of 64 B, each
     * freed in the call */
    assert_true(res.counters.v[TB_RES_CTR_KERNEL_LAUNCHES] == 1.0);
    assert_true(res.counters.v[TB_RES_CTR_ALLOCS] == 2.0);
    assert_true(res.counters.v[TB_RES_CTR_ALLOC_BYTES] == 128.0);
    assert_true(res.counters.v[TB_RES_CTR_FREES] == 2.0);
    /* statistics are consistent with the samples */
    assert_true(res.stats.min <= res.stats.median);
    assert_true(res.stats.median <= res.stats.max);
    assert_true(res.stats.ci_low <= res.stats.median);
    assert_true(res.stats.ci_high >= res.stats.median);
    assert_true(res.gb_s > 0 && res.gflop_s > 0 && res.items_s > 0);
    assert_true(res.timer_overhead_ns >= 0 &&
                res.timer_overhead_ns < 1e6);
    tb_result_free(&res);
    tb_runner_destroy(r);
}

/* Rounds: samples accumulate over passes, each round has its median,
 * counters stay exact per iteration, a later round does not re-check. */
static void test_rounds(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    memset(&fake_state, 0, sizeof fake_state);
    fake_state.allocs_per_call = 1;
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(TB_OP_add, TB_F32, 2048);
    c.measure.rounds = 3;
    memset(&res, 0, sizeof res);
    size_t after[3];
    for (int round = 0; round < 3; round++) {
        tb_runner_round(r, &c, round, 3, &res);
        assert_int_equal(res.status, TB_STATUS_OK);
        assert_int_equal(res.rounds, round + 1);
        after[round] = res.n_samples;
        /* every round adds at least ceil(min_samples / 3) samples */
        size_t before = round ? after[round - 1] : 0;
        assert_true(after[round] - before >=
                    (size_t)(test_cfg.measure.min_samples + 2) / 3);
        assert_true(res.round_medians_ns[round] > 0);
    }
    tb_runner_summarize(&c, &res);
    assert_true(res.stats.n == res.n_samples);
    assert_true(res.counters.v[TB_RES_CTR_KERNEL_LAUNCHES] == 1.0);
    assert_true(res.counters.v[TB_RES_CTR_ALLOCS] == 1.0);
    assert_true(res.counted_iters == res.n_samples * res.iters_per_sample);
    tb_result_free(&res);

    /* a case that failed its check gets no later rounds */
    fake_state.bug = 1;
    memset(&res, 0, sizeof res);
    tb_runner_round(r, &c, 0, 3, &res);
    assert_int_equal(res.status, TB_STATUS_FAILED_CHECK);
    uint64_t launches = fake_state.launches;
    tb_runner_round(r, &c, 1, 3, &res);
    assert_int_equal(res.status, TB_STATUS_FAILED_CHECK);
    assert_true(fake_state.launches == launches);
    tb_result_free(&res);
    tb_runner_destroy(r);
}

static void test_failed_check_not_timed(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    memset(&fake_state, 0, sizeof fake_state);
    fake_state.bug = 1;
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(TB_OP_add, TB_F32, 100);
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_FAILED_CHECK);
    assert_false(res.check.passed);
    assert_int_equal(res.check.n_bad, 100);
    assert_int_equal(res.n_samples, 0);
    assert_true(fake_state.launches == 1); /* checked once, never timed */
    assert_non_null(strstr(res.message, "out of tolerance"));
    tb_result_free(&res);
    tb_runner_destroy(r);
}

static void test_unsupported_and_unavailable(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    memset(&fake_state, 0, sizeof fake_state);
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(TB_OP_add, TB_F64, 10);
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_UNSUPPORTED);
    tb_result_free(&res);
    c.available = false;
    c.unavailable_reason = "no card";
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_UNAVAILABLE);
    assert_string_equal(res.message, "no card");
    tb_result_free(&res);
    tb_runner_destroy(r);
}

static void test_interrupt_stops_sampling(void **state)
{
    (void)state;
    volatile sig_atomic_t stop = 1;
    tb_runner *r;
    tb_result res;
    memset(&fake_state, 0, sizeof fake_state);
    assert_int_equal(tb_runner_create(&r, &stop), 0);
    tb_case c = make_case(TB_OP_add, TB_F32, 64);
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_string_equal(res.stop_reason, "interrupted");
    assert_int_equal(res.n_samples, 1);
    tb_result_free(&res);
    tb_runner_destroy(r);
}

/* The check itself: tolerance, NaN and infinity rules. */
static void test_check_rules(void **state)
{
    (void)state;
    tb_tensor got, ref;
    tb_shape s = {1, {4}};
    tb_check ck;
    assert_int_equal(tb_tensor_create(&got, TB_F32, &s), 0);
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &s), 0);
    double r[4] = {1.0, NAN, INFINITY, -2.0};
    float g[4] = {1.0f + 1e-7f, NAN, INFINITY, -2.0f};
    memcpy(ref.data, r, sizeof r);
    memcpy(got.data, g, sizeof g);
    tb_tol tol = {1e-6, 0};
    tb_check_outputs(&got, &ref, 1, tol, 1, &ck);
    assert_true(ck.passed);
    ((float *)got.data)[2] = -INFINITY;
    tb_check_outputs(&got, &ref, 1, tol, 1, &ck);
    assert_false(ck.passed);
    assert_int_equal(ck.first_bad, 2);
    ((float *)got.data)[2] = INFINITY;
    ((float *)got.data)[3] = -2.001f;
    tb_check_outputs(&got, &ref, 1, tol, 1, &ck);
    assert_false(ck.passed);
    assert_int_equal(ck.first_bad, 3);
    /* atol grows with sqrt(reduce_len): 1e-3 * sqrt(4) = 2e-3 */
    tol = (tb_tol){0, 1e-3};
    tb_check_outputs(&got, &ref, 1, tol, 4, &ck);
    assert_true(ck.passed);
    assert_true(ck.atol == 2e-3);
    tb_tensor_destroy(&got);
    tb_tensor_destroy(&ref);
}

/* softmax along rows of 4097 (review WL3): the outputs are about 1/4097
 * each, so an error of 20% of a value must fail, as log_softmax's would;
 * with atol*sqrt(4097) it passed. */
static void test_check_softmax_long_rows(void **state)
{
    (void)state;
    const tb_op *sm = tb_op_find("softmax"), *lsm = tb_op_find("log_softmax");
    assert_non_null(sm);
    assert_non_null(lsm);
    double len = 4097;
    assert_true(tb_check_terms(sm, len) == 1 / len);
    assert_true(tb_check_terms(lsm, len) == len);
    assert_true(tb_check_terms(sm, 1) == 1);
    tb_tensor got, ref;
    tb_shape s = {1, {4097}};
    tb_check ck;
    assert_int_equal(tb_tensor_create(&got, TB_F32, &s), 0);
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &s), 0);
    double *r = ref.data;
    float *g = got.data;
    for (int i = 0; i < 4097; i++) {
        r[i] = 1.0 / len;
        g[i] = (float)(r[i] * (1 + 3e-7)); /* a few ulp: passes */
    }
    tb_tol tol = sm->tol[TB_F32];
    tb_check_outputs(&got, &ref, 1, tol, tb_check_terms(sm, len), &ck);
    assert_true(ck.passed);
    g[7] = (float)(r[7] * 1.2);
    tb_check_outputs(&got, &ref, 1, tol, tb_check_terms(sm, len), &ck);
    assert_false(ck.passed);
    assert_int_equal(ck.first_bad, 7);
    /* the tolerance it replaced let the same error through */
    tb_check_outputs(&got, &ref, 1, tol, len, &ck);
    assert_true(ck.passed);
    tb_tensor_destroy(&got);
    tb_tensor_destroy(&ref);
}

/* The projection check catches one wrong element of a big product and
 * accepts the exact one. */
static void test_check_projection(void **state)
{
    (void)state;
    tb_tensor a, b, c;
    tb_shape sa = {2, {37, 53}}, sb = {2, {53, 29}}, sc = {2, {37, 29}};
    assert_int_equal(tb_tensor_create(&a, TB_F32, &sa), 0);
    assert_int_equal(tb_tensor_create(&b, TB_F32, &sb), 0);
    assert_int_equal(tb_tensor_create(&c, TB_F32, &sc), 0);
    tb_rng rng;
    tb_rng_seed(&rng, 5);
    for (int64_t i = 0; i < 37 * 53; i++)
        ((float *)a.data)[i] = (float)(2 * tb_rng_uniform(&rng) - 1);
    for (int64_t i = 0; i < 53 * 29; i++)
        ((float *)b.data)[i] = (float)(2 * tb_rng_uniform(&rng) - 1);
    for (int64_t i = 0; i < 37; i++)
        for (int64_t j = 0; j < 29; j++) {
            double s = 0;
            for (int64_t k = 0; k < 53; k++)
                s += (double)((float *)a.data)[i * 53 + k] *
                     ((float *)b.data)[k * 29 + j];
            ((float *)c.data)[i * 29 + j] = (float)s;
        }
    const tb_op *mm = tb_op_get(TB_OP_matmul);
    tb_check ck;
    tb_check_matmul_projection(&a, &b, &c, mm->tol[TB_F32], 9, &ck);
    assert_true(ck.passed);
    assert_string_equal(ck.method, "projection");
    ((float *)c.data)[20 * 29 + 7] += 0.01f; /* one element off by 1e-2 */
    tb_check_matmul_projection(&a, &b, &c, mm->tol[TB_F32], 9, &ck);
    assert_false(ck.passed);
    assert_int_equal(ck.n_bad, 1);
    assert_int_equal(ck.first_bad, 20 * 29);
    tb_tensor_destroy(&a);
    tb_tensor_destroy(&b);
    tb_tensor_destroy(&c);
}

/* ---- planner -------------------------------------------------------------- */

static int plan_from(const char *text, tb_plan *plan, char *err, size_t len,
                     tb_config *cfg, const tb_plan_opts *opts)
{
    int rc = tb_config_parse(text, strlen(text), "t.json", cfg, err, len);
    if (rc)
        return rc;
    return tb_plan_build(cfg, 1, opts, plan, err, len);
}

static void test_plan_ids_and_sweeps(void **state)
{
    (void)state;
    tb_config cfg;
    tb_plan plan;
    char err[512] = "";
    const char *text =
        "{\"name\":\"t\",\"dtypes\":[\"f32\",\"f64\"],"
        "\"backends\":[{\"name\":\"cpu\",\"threads\":[1]}],"
        "\"ops\":[{\"op\":\"add\",\"shapes\":[[4,5],[[4,5],[1,5]]]},"
        "{\"op\":\"sum\",\"shapes\":[[8,3]],\"params\":[{},{\"axis\":-1}]}]}";
    assert_int_equal(plan_from(text, &plan, err, sizeof err, &cfg, NULL), 0);
    /* add: 2 shapes x 2 dtypes; sum: 2 paramsets x 2 dtypes */
    assert_int_equal(plan.n, 8);
    assert_string_equal(plan.cases[0].id,
                        "add/4x5,4x5/f32/cpu[isa=auto,threads=1]");
    assert_string_equal(plan.cases[3].id,
                        "add/4x5,1x5/f64/cpu[isa=auto,threads=1]");
    assert_string_equal(plan.cases[4].id,
                        "sum[keepdim=0]/8x3/f32/cpu[isa=auto,threads=1]");
    assert_string_equal(plan.cases[6].id,
                        "sum[axis=-1,keepdim=0]/8x3/f32/cpu[isa=auto,threads=1]");
    assert_true(plan.cases[0].flops == 20);
    assert_true(plan.cases[0].bytes == 3 * 20 * 4);
    assert_true(plan.cases[6].reduce_len == 3);
    /* inputs depend on the case id, not on its position */
    assert_true(plan.cases[0].seed != plan.cases[1].seed);
    tb_plan_free(&plan);
    tb_config_free(&cfg);

    const char *f64[] = {"sum*/f64/*"};
    tb_plan_opts opts = {.filters = f64, .n_filters = 1};
    assert_int_equal(plan_from(text, &plan, err, sizeof err, &cfg, &opts), 0);
    assert_int_equal(plan.n, 2);
    tb_plan_free(&plan);
    tb_config_free(&cfg);

    /* an id pasted as printed selects its case ('[' ']' are literal);
     * filters are a union; excludes apply after them */
    const char *two[] = {"sum[keepdim=0]/8x3/f32/cpu[isa=auto,threads=1]",
                         "sum[axis=-1,keepdim=0]/8x3/f*"};
    const char *ex[] = {"*/f64/*"};
    opts = (tb_plan_opts){.filters = two, .n_filters = 2, .excludes = ex,
                          .n_excludes = 1};
    assert_int_equal(plan_from(text, &plan, err, sizeof err, &cfg, &opts), 0);
    assert_int_equal(plan.n, 2);
    assert_string_equal(plan.cases[0].id, two[0]);
    assert_string_equal(plan.cases[1].id,
                        "sum[axis=-1,keepdim=0]/8x3/f32/cpu[isa=auto,threads=1]");
    tb_plan_free(&plan);
    tb_config_free(&cfg);
}

static void test_case_id_match(void **state)
{
    (void)state;
    const char *id = "add/7x13,7x13/f32/cpu[isa=auto,threads=1]";
    assert_true(tb_case_id_match(id, id));
    assert_true(tb_case_id_match("add/*", id));
    assert_true(tb_case_id_match("*cpu[isa=auto,threads=?]", id));
    assert_true(tb_case_id_match("*[isa=auto*", id)); /* lone '[' */
    assert_false(tb_case_id_match("*cpu[ai]", "x/cpua")); /* no set */
    assert_true(tb_case_id_match("*cpu[ai]", "x/cpu[ai]"));
    assert_true(tb_case_id_match("a\\*b", "a*b")); /* backslash quotes */
    assert_false(tb_case_id_match("a\\*b", "axb"));
    assert_false(tb_case_id_match("add/*/f64/*", id));
    char long_pat[1200];
    memset(long_pat, '?', 1100);
    long_pat[1100] = '\0';
    assert_false(tb_case_id_match(long_pat, id)); /* heap path */
    assert_false(tb_case_id_match("", id));
}

static void expect_plan_error(const char *text, const char *needle)
{
    tb_config cfg;
    tb_plan plan;
    char err[512] = "";
    int rc = plan_from(text, &plan, err, sizeof err, &cfg, NULL);
    if (rc == 0)
        tb_plan_free(&plan);
    tb_config_free(&cfg);
    assert_int_not_equal(rc, 0);
    if (!strstr(err, needle))
        fail_msg("error '%s' lacks '%s'", err, needle);
    assert_non_null(strstr(err, "t.json"));
    assert_null(strchr(err, '\n'));
}

/* "alloc": true: every call allocates its output (one allocation of the
 * output's bytes per iteration, freed after the call), the check still
 * sees the output, and no output buffer outlives the case. */
static void test_alloc_outputs(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    memset(&fake_state, 0, sizeof fake_state);
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(TB_OP_add, TB_F32, 1000);
    c.alloc_outputs = true;
    tb_alloc_stats before, after;
    tb_alloc_stats_read(&before);
    tb_runner_run(r, &c, &res);
    tb_alloc_stats_read(&after);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_true(res.check.passed);
    assert_true(res.counters.v[TB_RES_CTR_ALLOCS] == 1.0);
    assert_true(res.counters.v[TB_RES_CTR_ALLOC_BYTES] == 4000.0);
    assert_true(res.counters.v[TB_RES_CTR_KERNEL_LAUNCHES] == 1.0);
    assert_true(after.live_bytes == before.live_bytes);
    tb_result_free(&res);

    /* the preallocated (out=) form of the same case allocates nothing */
    c.alloc_outputs = false;
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_true(res.counters.v[TB_RES_CTR_ALLOCS] == 0.0);
    tb_result_free(&res);

    /* a wrong result is still caught in the allocating form */
    fake_state.bug = 1;
    c.alloc_outputs = true;
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_FAILED_CHECK);
    tb_result_free(&res);
    tb_runner_destroy(r);
}

/* add_: the output is the first input's buffer; the check compares it
 * with the reference computed from the original inputs. */
static void test_inplace(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    memset(&fake_state, 0, sizeof fake_state);
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(TB_OP_add_, TB_F32, 777);
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_string_equal(res.impl, "fake_add");
    assert_true(res.check.passed);
    assert_true(res.counters.v[TB_RES_CTR_ALLOCS] == 0.0);
    tb_result_free(&res);
    fake_state.bug = 1;
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_FAILED_CHECK);
    tb_result_free(&res);
    tb_runner_destroy(r);
}

/* add_relu_unfused: two kernels and one intermediate per call, checked
 * against the fused op's reference; a composition whose step the backend
 * lacks is unsupported, naming the step. */
static void test_unfused(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    memset(&fake_state, 0, sizeof fake_state);
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(TB_OP_add_relu_unfused, TB_F32, 500);
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_string_equal(res.impl, "fake_add+fake_relu");
    assert_true(res.check.passed);
    assert_true(res.counters.v[TB_RES_CTR_KERNEL_LAUNCHES] == 2.0);
    assert_true(res.counters.v[TB_RES_CTR_ALLOCS] == 1.0);
    assert_true(res.counters.v[TB_RES_CTR_ALLOC_BYTES] == 2000.0);
    tb_result_free(&res);

    fake_state.bug = 1; /* the add step is wrong: the whole is */
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_FAILED_CHECK);
    tb_result_free(&res);

    c = make_case(TB_OP_linear_unfused, TB_F32, 8); /* no fake matmul */
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_UNSUPPORTED);
    assert_non_null(strstr(res.message, "step 1 (matmul)"));
    tb_result_free(&res);
    tb_runner_destroy(r);
}

/* Case ids and config errors of the forms: "@alloc" ids, creation ops
 * planned from their output shape. */
/* ---- the counting pass (backend slot `count`) ---------------------------- */

static int count_calls, count_rc;
static uint64_t count_iters, count_launches;

/* A device profiler stand-in: the launches the calls made, per call. */
static int fake_count(void *ctx, tb_count_run_fn run, void *arg,
                      uint64_t iters, tb_dev_counts *out)
{
    fake_ctx *f = ctx;
    count_calls++;
    count_iters = iters;
    uint64_t before = f->launches;
    int rc = run(arg, iters);
    count_launches = f->launches - before;
    if (rc)
        return rc;
    if (count_rc)
        return count_rc;
    out->valid = true;
    out->kernel_launches = (double)count_launches / (double)iters;
    return 0;
}

static const tb_backend fake_dev_backend = {
    .name = "fakedev",
    .doc = "test double with a counting pass",
    .probe = hostmem_probe,
    .axes = hostmem_axes,
    .create = fake_create,
    .destroy = hostmem_destroy,
    .alloc = hostmem_alloc,
    .free = hostmem_free,
    .upload = hostmem_copy,
    .download = hostmem_copy,
    .kernel = fake_kernel,
    .counters = fake_counters,
    .count = fake_count,
};

/* Once per case, after round 0's sampling, TB_COUNT_ITERS calls made as
 * the samples make them; never again in later rounds; not for a case
 * that failed its check; a backend without the slot says so. */
static void test_count_pass(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    memset(&fake_state, 0, sizeof fake_state);
    count_calls = count_rc = 0;
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(TB_OP_add, TB_F32, 300);
    c.backend = &fake_dev_backend;
    memset(&res, 0, sizeof res);
    for (int round = 0; round < 3; round++) {
        tb_runner_round(r, &c, round, 3, &res);
        assert_int_equal(res.status, TB_STATUS_OK);
        assert_int_equal(count_calls, 1);
    }
    assert_int_equal(count_iters, TB_COUNT_ITERS);
    assert_int_equal(count_launches, TB_COUNT_ITERS);
    assert_true(res.dev.valid && res.dev.kernel_launches == 1.0);
    assert_int_equal(res.dev.iters, TB_COUNT_ITERS);
    tb_result_free(&res);

    /* an unfused composition: two kernels a call */
    count_calls = 0;
    tb_case u = make_case(TB_OP_add_relu_unfused, TB_F32, 300);
    u.backend = &fake_dev_backend;
    tb_runner_run(r, &u, &res);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_int_equal(count_calls, 1);
    assert_int_equal(count_launches, 2 * TB_COUNT_ITERS);
    assert_true(res.dev.valid && res.dev.kernel_launches == 2.0);
    tb_result_free(&res);

    /* a pass whose calls fail: the case is an error */
    count_calls = 0;
    count_rc = TB_EIO;
    tb_runner_run(r, &c, &res);
    assert_int_equal(count_calls, 1);
    assert_int_equal(res.status, TB_STATUS_ERROR);
    assert_non_null(strstr(res.message, "while counting"));
    tb_result_free(&res);
    count_rc = 0;

    /* failed its check: never counted */
    count_calls = 0;
    fake_state.bug = 1;
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_FAILED_CHECK);
    assert_int_equal(count_calls, 0);
    assert_false(res.dev.valid);
    tb_result_free(&res);
    fake_state.bug = 0;

    /* no slot: not valid, with the reason */
    c.backend = &fake_backend;
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_false(res.dev.valid);
    assert_string_equal(res.dev.reason,
                        "backend fake counts no device activity");
    tb_result_free(&res);
    tb_runner_destroy(r);
}

static void test_plan_forms(void **state)
{
    (void)state;
    tb_config cfg;
    tb_plan plan;
    char err[512] = "";
    const char *text =
        "{\"name\":\"t\",\"backends\":[{\"name\":\"cpu\",\"threads\":[1]}],"
        "\"ops\":[{\"op\":\"add\",\"shapes\":[[4,5]],"
        "\"alloc\":[false,true]},"
        "{\"op\":\"zeros\",\"shapes\":[[3,2]],\"alloc\":true},"
        "{\"op\":\"add_\",\"shapes\":[[[4,5],[5]]]}]}";
    assert_int_equal(plan_from(text, &plan, err, sizeof err, &cfg, NULL), 0);
    assert_int_equal(plan.n, 4);
    assert_string_equal(plan.cases[0].id,
                        "add/4x5,4x5/f32/cpu[isa=auto,threads=1]");
    assert_false(plan.cases[0].alloc_outputs);
    assert_string_equal(plan.cases[1].id,
                        "add@alloc/4x5,4x5/f32/cpu[isa=auto,threads=1]");
    assert_true(plan.cases[1].alloc_outputs);
    assert_string_equal(plan.cases[2].id,
                        "zeros@alloc/3x2/f32/cpu[isa=auto,threads=1]");
    assert_true(plan.cases[2].out[0].ndim == 2 &&
                plan.cases[2].out[0].dim[0] == 3);
    assert_true(plan.cases[2].bytes == 6 * 4); /* writes only */
    assert_string_equal(plan.cases[3].id,
                        "add_/4x5,5/f32/cpu[isa=auto,threads=1]");
    tb_plan_free(&plan);
    tb_config_free(&cfg);

    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"add_\","
                      "\"shapes\":[[4]],\"alloc\":true}]}",
                      "add_ writes its results into its inputs");
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"add\","
                      "\"shapes\":[[4]],\"alloc\":\"yes\"}]}",
                      "ops[0].alloc: expected true or false");
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"add\","
                      "\"shapes\":[[4]],\"alloc\":[true,true]}]}",
                      "listed twice");
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"zeros\","
                      "\"shapes\":[[[4],[4]]]}]}",
                      "takes one shape (the output's)");
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"add_\","
                      "\"shapes\":[[[4],[3,4]]]}]}",
                      "writes into its first input");
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"arange\","
                      "\"shapes\":[[4,4]]}]}",
                      "must be 1-D");
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"eigh\","
                      "\"shapes\":[[4,5]]}]}",
                      "eigh: needs a square matrix");
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"adam\","
                      "\"shapes\":[[[8],[8],[8],[7]]]}]}",
                      "adam: state 2 [7] differs from param [8]");
}

static void test_plan_errors(void **state)
{
    (void)state;
    expect_plan_error("{\"name\":\"t\",\"backends\":[\"gpu9\"],"
                      "\"ops\":[{\"op\":\"add\",\"shapes\":[[4]]}]}",
                      "unknown backend 'gpu9'");
    expect_plan_error("{\"name\":\"t\",\"backends\":[{\"name\":\"cpu\","
                      "\"threads\":[999]}],"
                      "\"ops\":[{\"op\":\"add\",\"shapes\":[[4]]}]}",
                      "value '999' is not offered");
    expect_plan_error("{\"name\":\"t\",\"backends\":[{\"name\":\"cpu\","
                      "\"colour\":[1]}],"
                      "\"ops\":[{\"op\":\"add\",\"shapes\":[[4]]}]}",
                      "no axis 'colour'");
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"add\","
                      "\"shapes\":[[[4,5],[3,5]]]}]}",
                      "cannot broadcast");
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"matmul\","
                      "\"shapes\":[[[4,5],[6,7]]]}]}",
                      "ops[0].shapes[0]");
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"sum\","
                      "\"shapes\":[[4,5]],\"params\":{\"axis\":2}}]}",
                      "out of range");
    /* 2^22 x 2^22 f32 = 64 TiB: more memory than any test machine */
    expect_plan_error("{\"name\":\"t\",\"ops\":[{\"op\":\"relu\","
                      "\"shapes\":[[4194304,4194304]]}]}",
                      "GiB");
}

/* An unavailable backend is planned (reported, with its reason), not an
 * error: cuda has no module in this build. */
static void test_plan_unavailable_backend(void **state)
{
    (void)state;
    tb_config cfg;
    tb_plan plan;
    char err[512] = "";
    const char *text = "{\"name\":\"t\",\"backends\":[\"cpu\",\"cuda\"],"
                       "\"ops\":[{\"op\":\"relu\",\"shapes\":[[16]]}]}";
    char reason[256];
    const tb_backend *cuda = tb_backend_find("cuda");
    if (tb_backend_probe(&cuda, reason, sizeof reason) == 0)
        skip(); /* a machine with the module and a GPU */
    assert_int_equal(plan_from(text, &plan, err, sizeof err, &cfg, NULL), 0);
    assert_int_equal(plan.n, 2);
    assert_true(plan.cases[0].available);
    assert_false(plan.cases[1].available);
    assert_true(strlen(plan.cases[1].unavailable_reason) > 0);
    tb_plan_free(&plan);
    tb_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_ok_and_counters),
        cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_failed_check_not_timed),
        cmocka_unit_test(test_unsupported_and_unavailable),
        cmocka_unit_test(test_interrupt_stops_sampling),
        cmocka_unit_test(test_check_rules),
        cmocka_unit_test(test_check_softmax_long_rows),
        cmocka_unit_test(test_check_projection),
        cmocka_unit_test(test_alloc_outputs),
        cmocka_unit_test(test_inplace),
        cmocka_unit_test(test_unfused),
        cmocka_unit_test(test_count_pass),
        cmocka_unit_test(test_plan_forms),
        cmocka_unit_test(test_plan_ids_and_sweeps),
        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_case_id_match),
        cmocka_unit_test(test_plan_unavailable_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
