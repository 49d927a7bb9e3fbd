/* The per-op breakdown of a workload step (issue 31 item 1): tiny
 * mlp_train_step, cnn_train_step, mlp_infer_step and tfm_train_step cases
 * run through the session engine (the runner, in process and in forked
 * workers) and
 * their records checked against the models' own op lists (models.c,
 * autograd.c: which kernels one step calls, how often, in which pass),
 * written out here; the parts, the gap and the step add up; the reader
 * (resultsio) round-trips the record, rejects a broken one and accepts a
 * file older than it; the clock is off outside the pass; the config's
 * keys.  `--filter GLOB` runs only the matching tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/workload.h"
#include "base/error.h"
#include "harness/config.h"
#include "harness/peak.h"
#include "harness/plan.h"
#include "harness/session.h"
#include "report/resultsio.h"

/* ---- what one step of each model calls ------------------------------------- */

typedef struct {
    const char *op, *phase;
    int calls;
} want_part;

/* A training step (phase 2): the forward pass, the seed of the loss's
 * gradient (ones), each op's backward in reverse (every gradient is
 * taken over, so add_ never runs), sgd_momentum on the six parameter
 * tensors, the loss copied out.  In the order of first calls. */
static const want_part mlp_train[] = {
    {"linear", "fwd", 2},
    {"matmul", "fwd", 1},
    {"add", "fwd", 1},
    {"log_softmax", "fwd", 1},
    {"nll_loss", "fwd", 1},
    {"ones", "bwd", 1},
    {"nll_loss_backward", "bwd", 1},
    {"log_softmax_backward", "bwd", 1},
    {"add_backward", "bwd", 1},
    {"matmul_backward", "bwd", 1},
    {"linear_backward", "bwd", 2},
    {"sgd_momentum", "optimizer", 6},
    {"copy", "fwd", 1},
    {NULL, NULL, 0},
};

static const want_part cnn_train[] = {
    {"conv2d", "fwd", 2},
    {"relu", "fwd", 2},
    {"max_pool2d", "fwd", 2},
    {"matmul", "fwd", 1},
    {"add", "fwd", 1},
    {"log_softmax", "fwd", 1},
    {"nll_loss", "fwd", 1},
    {"ones", "bwd", 1},
    {"nll_loss_backward", "bwd", 1},
    {"log_softmax_backward", "bwd", 1},
    {"add_backward", "bwd", 1},
    {"matmul_backward", "bwd", 1},
    {"max_pool2d_backward", "bwd", 2},
    {"relu_backward", "bwd", 2},
    {"conv2d_backward", "bwd", 2},
    {"sgd_momentum", "optimizer", 6},
    {"copy", "fwd", 1},
    {NULL, NULL, 0},
};

/* The transformer block's training step (models.h): its four permutes
 * (q, k, v split to heads, the heads merged) in the forward pass, and
 * their gradients, four permutes more, in the backward pass, where they
 * run: a part of their own under bwd, first called for the merge's
 * gradient, after rms_norm_backward.  add_ sums the second gradients of
 * y (y * y), h and the first rms_norm's output (three matmuls). */
static const want_part tfm_train[] = {
    {"rms_norm", "fwd", 2},
    {"matmul", "fwd", 6},
    {"permute", "fwd", 4},
    {"sdpa", "fwd", 1},
    {"add", "fwd", 2},
    {"gelu", "fwd", 1},
    {"mul", "fwd", 1},
    {"mean", "fwd", 1},
    {"ones", "bwd", 1},
    {"mean_backward", "bwd", 1},
    {"mul_backward", "bwd", 1},
    {"add_", "bwd", 4},
    {"add_backward", "bwd", 2},
    {"matmul_backward", "bwd", 6},
    {"gelu_backward", "bwd", 1},
    {"rms_norm_backward", "bwd", 2},
    {"permute", "bwd", 4},
    {"sdpa_backward", "bwd", 1},
    {"sgd_momentum", "optimizer", 8},
    {"copy", "fwd", 1},
    {NULL, NULL, 0},
};

/* Inference: the forward pass, then the loss and the log-probabilities
 * copied out. */
static const want_part mlp_infer[] = {
    {"linear", "fwd", 2},
    {"matmul", "fwd", 1},
    {"add", "fwd", 1},
    {"log_softmax", "fwd", 1},
    {"nll_loss", "fwd", 1},
    {"copy", "fwd", 2},
    {NULL, NULL, 0},
};

/* ---- a session that keeps its last document ------------------------------- */

typedef struct {
    cJSON *last;
} capture;

static int cap_write(void *ctx, const tb_results_doc *doc, char *err,
                     size_t errlen)
{
    (void)err, (void)errlen;
    capture *c = ctx;
    char *json, *csv;
    if (tb_results_doc_text(doc, &json, &csv))
        return TB_ENOMEM;
    cJSON_Delete(c->last);
    c->last = cJSON_Parse(json);
    free(json);
    free(csv);
    return c->last ? 0 : TB_ENOMEM;
}

static void cap_progress(void *ctx, const tb_session_progress *p)
{
    (void)ctx, (void)p;
}

static void cap_warning(void *ctx, const char *id, const char *text)
{
    (void)ctx, (void)id, (void)text;
}

/* Run config text `measure` (the measure object's extra keys) over the
 * plan below; the last document written (caller deletes). */
static cJSON *run_plan(const char *measure, int rounds, bool isolate)
{
    char text[2048], err[512] = "";
    snprintf(text, sizeof text,
             "{\"name\": \"breakdown\", \"seed\": 5,"
             " \"warmup\": {\"min_time_ms\": 1, \"min_iters\": 2},"
             " \"measure\": {\"sample_time_ms\": 1, \"min_samples\": 5,"
             " \"max_samples\": 40, \"max_time_s\": 0.05, \"rounds\": %d%s},"
             " \"backends\": [{\"name\": \"cpu\", \"threads\": 1}],"
             " \"ops\": [{\"op\": \"mlp_train_step\", \"shapes\": [[4, 32]]},"
             " {\"op\": \"cnn_train_step\", \"shapes\": [[1, 1, 12, 12]]},"
             " {\"op\": \"mlp_infer_step\", \"shapes\": [[4, 32]]},"
             " {\"op\": \"api_add\", \"shapes\": [[64]]},"
             " {\"op\": \"add\", \"shapes\": [[64]]},"
             " {\"op\": \"tfm_train_step\", \"shapes\": [[1, 4, 8]],"
             " \"params\": {\"heads\": 2}}]}",
             rounds, measure);
    tb_config cfg;
    tb_plan plan;
    assert_int_equal(tb_config_parse(text, strlen(text), "bd.json", &cfg,
                                     err, sizeof err), 0);
    assert_int_equal(tb_plan_build(&cfg, 1, NULL, &plan, err, sizeof err),
                     0);
    assert_int_equal(plan.n, 6);
    capture c = {0};
    tb_session_sink sink = {.ctx = &c, .write = cap_write,
                            .progress = cap_progress,
                            .warning = cap_warning};
    tb_session_opts o = {.isolate = isolate, .quiet = true};
    tb_session s;
    int rc = tb_session_run(&plan, &cfg, 1, &o, &sink, &s, err, sizeof err);
    if (rc)
        print_message("# session: %s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(c.last);
    tb_session_free(&s);
    tb_plan_free(&plan);
    tb_config_free(&cfg);
    return c.last;
}

static const cJSON *record_of(const cJSON *doc, const char *op)
{
    const cJSON *rec;
    cJSON_ArrayForEach(rec, cJSON_GetObjectItem(doc, "cases"))
    {
        const cJSON *o = cJSON_GetObjectItem(rec, "op");
        if (cJSON_IsString(o) && !strcmp(o->valuestring, op))
            return rec;
    }
    fail_msg("no record of %s", op);
    return NULL;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static bool close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-9;
}

/* The record of op has a breakdown over `steps` steps (0: any) whose
 * parts are want, in order, with the right calls and phases, and whose
 * figures add up: parts_ns the sum of the parts, gap = step - parts (>
 * 0: the tape's own work lies between the clocked calls), each share
 * ns / step and all of them at most 1. */
static void check_record(const cJSON *doc, const char *op,
                         const want_part *want, int steps)
{
    const cJSON *rec = record_of(doc, op);
    assert_string_equal(str(rec, "status"), "ok");
    const cJSON *bd = cJSON_GetObjectItem(rec, "breakdown");
    assert_true(cJSON_IsObject(bd));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(rec, "breakdown_reason")));
    if (steps)
        assert_int_equal((int)num(bd, "steps"), steps);
    /* the steps at or below the median: at least half of them */
    double kept = num(bd, "kept_steps");
    assert_true(kept >= num(bd, "steps") / 2 && kept <= num(bd, "steps"));
    assert_string_equal(str(bd, "statistic"),
                        "mean of the steps at or below the median");
    double step = num(bd, "step_ns"), parts = num(bd, "parts_ns");
    double gap = num(bd, "gap_ns");
    assert_true(step > 0 && parts > 0);
    assert_true(close_to(parts + gap, step));
    assert_true(gap > 0);
    assert_true(close_to(num(bd, "gap_fraction"), gap / step));
    const cJSON *ps = cJSON_GetObjectItem(bd, "parts");
    int n = 0;
    while (want[n].op)
        n++;
    assert_int_equal(cJSON_GetArraySize(ps), n);
    double sum = 0, shares = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *p = cJSON_GetArrayItem(ps, i);
        if (strcmp(str(p, "op"), want[i].op) ||
            strcmp(str(p, "phase"), want[i].phase))
            fail_msg("%s: part %d: %s (%s), the model's is %s (%s)", op, i,
                     str(p, "op"), str(p, "phase"), want[i].op,
                     want[i].phase);
        if (num(p, "calls") != want[i].calls)
            fail_msg("%s: %s: %g calls per step, the model makes %d", op,
                     want[i].op, num(p, "calls"), want[i].calls);
        assert_true(str(p, "kernel")[0] != '\0');
        double ns = num(p, "ns");
        assert_true(ns > 0);
        assert_true(close_to(num(p, "share"), ns / step));
        sum += ns;
        shares += num(p, "share");
    }
    assert_true(close_to(sum, parts));
    assert_true(shares <= 1 + 1e-12);
    print_message("# %s: step %.1f us, parts %.1f us, gap %.1f us (%.1f%%), "
                  "%d steps\n", op, step / 1e3, parts / 1e3, gap / 1e3,
                  100 * gap / step, (int)num(bd, "steps"));
}

/* A record without a breakdown: null, and the reason (NULL: null). */
static void check_none(const cJSON *doc, const char *op, const char *why)
{
    const cJSON *rec = record_of(doc, op);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(rec, "breakdown")));
    const cJSON *r = cJSON_GetObjectItem(rec, "breakdown_reason");
    if (!why)
        assert_true(cJSON_IsNull(r));
    else
        assert_string_equal(str(rec, "breakdown_reason"), why);
}

/* ---- the tests ---------------------------------------------------------------- */

static void test_in_process(void **state)
{
    (void)state;
    cJSON *doc = run_plan(", \"breakdown_steps\": 5", 1, false);
    check_record(doc, "mlp_train_step", mlp_train, 5);
    check_record(doc, "cnn_train_step", cnn_train, 5);
    check_record(doc, "mlp_infer_step", mlp_infer, 5);
    check_record(doc, "tfm_train_step", tfm_train, 5);
    check_none(doc, "api_add",
               "not measured: api_add is not a model on the tape");
    check_none(doc, "add", NULL);
    cJSON_Delete(doc);
}

/* Forked workers and two rounds: the pass after the last round, its
 * result back over the worker socket; the steps a tenth of those
 * sampled (3 to 1000). */
static void test_isolated_rounds_auto_steps(void **state)
{
    (void)state;
    cJSON *doc = run_plan("", 2, true);
    check_record(doc, "mlp_train_step", mlp_train, 0);
    check_record(doc, "cnn_train_step", cnn_train, 0);
    const cJSON *rec = record_of(doc, "cnn_train_step");
    const cJSON *st = cJSON_GetObjectItem(rec, "stats");
    double k = floor(num(st, "n") * num(st, "iters_per_sample") / 10);
    double want = k < 3 ? 3 : k > 1000 ? 1000 : k;
    assert_int_equal(
        (int)num(cJSON_GetObjectItem(rec, "breakdown"), "steps"),
        (int)want);
    cJSON_Delete(doc);
}

static void test_switched_off(void **state)
{
    (void)state;
    cJSON *doc = run_plan(", \"breakdown\": false", 1, false);
    check_none(doc, "mlp_train_step",
               "not measured: measure.breakdown is false");
    check_none(doc, "add", NULL);
    cJSON_Delete(doc);
}

/* Replace member k of the first part of op's breakdown (or of the
 * breakdown itself when part is false) in a copy of doc; load it. */
static int load_broken(const cJSON *doc, const char *op, bool part,
                       const char *k, cJSON *v, char *err, size_t len)
{
    cJSON *d = cJSON_Duplicate(doc, true);
    cJSON *rec = (cJSON *)record_of(d, op);
    cJSON *bd = cJSON_GetObjectItem(rec, "breakdown");
    cJSON *o = part ? cJSON_GetArrayItem(cJSON_GetObjectItem(bd, "parts"), 0)
                    : bd;
    assert_true(cJSON_ReplaceItemInObject(o, k, v));
    tb_resfile *f = NULL;
    int rc = tb_resfile_from_doc("broken.json", d, &f, err, len);
    tb_resfile_free(f);
    cJSON_Delete(d);
    return rc;
}

/* The reader: every figure as written; a breakdown of the wrong type is
 * refused, naming it; a file from before the breakdown loads without
 * one. */
static void test_reader(void **state)
{
    (void)state;
    cJSON *doc = run_plan(", \"breakdown_steps\": 3", 1, false);
    tb_resfile *f = NULL;
    char err[512] = "";
    assert_int_equal(tb_resfile_from_doc("bd.json", doc, &f, err,
                                         sizeof err), 0);
    int seen = 0;
    for (int i = 0; i < f->n; i++) {
        const tb_rescase *c = &f->cases[i];
        const cJSON *rec = record_of(doc, c->op);
        const cJSON *bd = cJSON_GetObjectItem(rec, "breakdown");
        assert_int_equal(c->has_breakdown, cJSON_IsObject(bd));
        if (!c->has_breakdown)
            continue;
        seen++;
        assert_true(close_to(c->breakdown.steps, num(bd, "steps")));
        assert_true(close_to(c->breakdown.kept_steps,
                             num(bd, "kept_steps")));
        assert_true(close_to(c->breakdown.step_ns, num(bd, "step_ns")));
        assert_true(close_to(c->breakdown.parts_ns, num(bd, "parts_ns")));
        assert_true(close_to(c->breakdown.gap_ns, num(bd, "gap_ns")));
        assert_true(close_to(c->breakdown.gap_fraction,
                             num(bd, "gap_fraction")));
        const cJSON *ps = cJSON_GetObjectItem(bd, "parts");
        assert_int_equal(c->breakdown.n_parts, cJSON_GetArraySize(ps));
        for (int j = 0; j < c->breakdown.n_parts; j++) {
            const tb_res_part *q = &c->breakdown.parts[j];
            const cJSON *p = cJSON_GetArrayItem(ps, j);
            assert_string_equal(q->op, str(p, "op"));
            assert_string_equal(q->kernel, str(p, "kernel"));
            assert_string_equal(q->phase, str(p, "phase"));
            assert_true(close_to(q->calls, num(p, "calls")));
            assert_true(close_to(q->ns, num(p, "ns")));
            assert_true(close_to(q->share, num(p, "share")));
        }
    }
    assert_int_equal(seen, 4);
    const tb_rescase *api = tb_resfile_find(f, str(record_of(doc, "api_add"),
                                                   "id"));
    assert_non_null(api);
    assert_false(api->has_breakdown);
    assert_string_equal(api->breakdown_reason,
                        "not measured: api_add is not a model on the tape");
    tb_resfile_free(f);

    assert_int_equal(load_broken(doc, "mlp_train_step", true, "phase",
                                 cJSON_CreateString("sideways"), err,
                                 sizeof err), TB_EINVAL);
    print_message("# %s\n", err);
    assert_non_null(strstr(err, "breakdown.parts[0]"));
    assert_int_equal(load_broken(doc, "cnn_train_step", true, "ns",
                                 cJSON_CreateNumber(-1), err, sizeof err),
                     TB_EINVAL);
    assert_non_null(strstr(err, "breakdown.parts[0]"));
    assert_int_equal(load_broken(doc, "cnn_train_step", false, "steps",
                                 cJSON_CreateNumber(0), err, sizeof err),
                     TB_EINVAL);
    assert_non_null(strstr(err, "breakdown.steps"));
    assert_int_equal(load_broken(doc, "cnn_train_step", false, "kept_steps",
                                 cJSON_CreateNumber(4), err, sizeof err),
                     TB_EINVAL); /* more than the pass's 3 */
    assert_non_null(strstr(err, "breakdown.kept_steps"));
    assert_int_equal(load_broken(doc, "mlp_train_step", false, "gap_ns",
                                 cJSON_CreateString("1"), err, sizeof err),
                     TB_EINVAL);
    assert_non_null(strstr(err, "breakdown.gap_ns"));

    /* an older file: no breakdown members at all */
    cJSON *old = cJSON_Duplicate(doc, true);
    cJSON *rec;
    cJSON_ArrayForEach(rec, cJSON_GetObjectItem(old, "cases"))
    {
        cJSON_DeleteItemFromObject(rec, "breakdown");
        cJSON_DeleteItemFromObject(rec, "breakdown_reason");
    }
    assert_int_equal(tb_resfile_from_doc("old.json", old, &f, err,
                                         sizeof err), 0);
    for (int i = 0; i < f->n; i++) {
        assert_false(f->cases[i].has_breakdown);
        assert_null(f->cases[i].breakdown_reason);
    }
    tb_resfile_free(f);
    cJSON_Delete(old);
    cJSON_Delete(doc);
}

/* The clock is off outside the pass: steps run before begin, or after
 * end, are not tallied; between them every call is.  The figures are
 * means over the steps no slower than the median step. */
static void test_timing_off_outside_the_pass(void **state)
{
    (void)state;
    const tb_backend *cpu = tb_backend_find("cpu");
    assert_non_null(cpu);
    tb_axis ax[TB_MAX_AXES];
    int na = cpu->axes(cpu, ax, TB_MAX_AXES);
    const char *vals[TB_MAX_AXES];
    for (int i = 0; i < na; i++)
        vals[i] = ax[i].values[ax[i].def];
    void *ctx = NULL;
    char err[256] = "";
    assert_int_equal(cpu->create(cpu, vals, &ctx, err, sizeof err), 0);
    tb_shape xs = {2, {4, 32}}, one = {1, {1}};
    tb_workload *w = NULL;
    assert_int_equal(tb_workload_create(cpu, ctx,
                                        tb_op_get(TB_OP_mlp_train_step),
                                        TB_F32, &xs, NULL, &w, err,
                                        sizeof err), 0);
    tb_tensor x, loss;
    assert_int_equal(tb_tensor_create(&x, TB_F32, &xs), 0);
    assert_int_equal(tb_tensor_create(&loss, TB_F32, &one), 0);
    for (int64_t i = 0; i < tb_tensor_numel(&x); i++)
        tb_tensor_set(&x, i, (double)(i % 7) / 7);
    tb_params none = {0};
    tb_wl_breakdown bd;
    for (int i = 0; i < 2; i++)
        assert_int_equal(tb_workload_run(w, &x, &loss, &none), 0);
    assert_int_equal(tb_workload_breakdown_begin(w, 4), 0);
    tb_workload_breakdown_step(w, 1e6);
    tb_workload_breakdown_end(w, &bd);
    assert_true(bd.valid);
    assert_int_equal(bd.n_parts, 0); /* the two steps before: untallied */
    /* three steps of 1, 9 and 2 ms: the median 2 ms, the 9 ms step (a
     * preempted one) left out of every figure */
    assert_int_equal(tb_workload_breakdown_begin(w, 3), 0);
    const double t[3] = {1e6, 9e6, 2e6};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(tb_workload_run(w, &x, &loss, &none), 0);
        tb_workload_breakdown_step(w, t[k]);
    }
    tb_workload_breakdown_end(w, &bd);
    assert_int_equal(bd.n_parts, 13);
    assert_int_equal(bd.steps, 3);
    assert_int_equal(bd.kept, 2);
    assert_true(bd.step_ns == 1.5e6);
    assert_true(bd.part[0].calls == 2); /* linear: 6 calls in 3 steps */
    double sum = 0;
    for (int i = 0; i < bd.n_parts; i++)
        sum += bd.part[i].ns;
    assert_true(close_to(sum, bd.parts_ns));
    assert_int_equal(tb_workload_run(w, &x, &loss, &none), 0); /* after */
    assert_int_equal(tb_workload_breakdown_begin(w, 1), 0);
    tb_workload_breakdown_step(w, 1e6);
    tb_workload_breakdown_end(w, &bd);
    assert_int_equal(bd.n_parts, 0);
    assert_int_equal(tb_workload_breakdown_begin(w, 2), 0);
    tb_workload_breakdown_end(w, &bd); /* no step closed: none */
    assert_false(bd.valid);
    tb_tensor_destroy(&x);
    tb_tensor_destroy(&loss);
    tb_workload_destroy(w);
    cpu->destroy(ctx);
}

/* measure.breakdown and measure.breakdown_steps: their defaults and
 * one-line errors naming the key. */
static void test_config_keys(void **state)
{
    (void)state;
    static const struct {
        const char *measure, *err;
    } bad[] = {
        {"{\"breakdown\": 1}", "measure.breakdown"},
        {"{\"breakdown\": \"yes\"}", "measure.breakdown"},
        {"{\"breakdown_steps\": -1}", "measure.breakdown_steps"},
        {"{\"breakdown_steps\": 2.5}", "measure.breakdown_steps"},
    };
    char text[512], err[512];
    tb_config cfg;
    const char *ok = "{\"name\": \"c\", \"ops\": [{\"op\": \"add\", "
                     "\"shapes\": [[4]]}]}";
    int rc = tb_config_parse(ok, strlen(ok), "c.json", &cfg, err,
                             sizeof err);
    if (rc)
        print_message("# %s\n", err);
    assert_int_equal(rc, 0);
    assert_true(cfg.measure.breakdown);
    assert_int_equal(cfg.measure.breakdown_steps, 0);
    tb_config_free(&cfg);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text,
                 "{\"name\": \"c\", \"measure\": %s, "
                 "\"ops\": [{\"op\": \"add\", "
                 "\"shapes\": [[4]]}]}", bad[i].measure);
        err[0] = '\0';
        assert_int_not_equal(tb_config_parse(text, strlen(text), "c.json",
                                             &cfg, err, sizeof err), 0);
        print_message("# %s\n", err);
        assert_non_null(strstr(err, bad[i].err));
        assert_null(strchr(err, '\n'));
    }
}

int main(int argc, char **argv)
{
    setenv(TB_PEAK_CACHE_ENV, "/nonexistent/tbench-test-breakdown.json", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_process),
        cmocka_unit_test(test_isolated_rounds_auto_steps),
        cmocka_unit_test(test_switched_off),
        cmocka_unit_test(test_reader),
        cmocka_unit_test(test_timing_off_outside_the_pass),
        cmocka_unit_test(test_config_keys),
    };
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--filter") == 0)
            cmocka_set_test_filter(argv[i + 1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
