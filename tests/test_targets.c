/* Targets files and their verdicts (src/report/targets.c,
 * targets_judge.c): durations, the file's messages (FILE:LINE:COL),
 * and targets judged on result documents built here, whose samples and
 * recorded CIs make each verdict certain. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "report/targets.h"

/* ---- durations -------------------------------------------------------- */

static void test_duration(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        double ns;
    } good[] = {{"2ms", 2e6},   {"150us", 150e3}, {"1.5 ms", 1.5e6},
                {"800ns", 800}, {"1s", 1e9},      {".5s", 0.5e9},
                {"1e3ns", 1e3}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double ns = 0;
        assert_int_equal(tb_tgt_parse_duration(good[i].s, &ns), 0);
        assert_true(fabs(ns - good[i].ns) <= 1e-9 * good[i].ns);
    }
    static const char *const bad[] = {"2",     "2 min",  "-1ms", "0ms",
                                      "0x10ms", "inf ms", "nanms", "2  ms",
                                      " 2ms",  "",       "2ms ", "ms",
                                      "2MS",   "1e999s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double ns = -1;
        assert_int_equal(tb_tgt_parse_duration(bad[i], &ns), TB_EINVAL);
    }
    double ns;
    assert_int_equal(tb_tgt_parse_duration(NULL, &ns), TB_EINVAL);
}

/* ---- the file --------------------------------------------------------- */

static void test_parse(void **state)
{
    (void)state;
    const char *text =
        "// targets\n"
        "{\"targets\": [\n"
        "  {\"name\": \"fast add\", \"case\": \"add/*\", \"max_time\": "
        "\"2ms\"},\n"
        "  {\"op\": \"matmul\", \"dtype\": \"f32\", \"backend\": \"blas\",\n"
        "   \"max_ratio_to\": {\"ratio\": 1.5, \"peer\": \"torch\"}},\n"
        "  /* a bound */ {\"max_bound_ratio\": 1.2, \"op\": \"exp\"}\n"
        "]}\n";
    tb_targets t;
    char err[512];
    assert_int_equal(tb_targets_parse(text, strlen(text), "t.json", &t, err,
                                      sizeof err),
                     0);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.path, "t.json");
    assert_string_equal(t.t[0].name, "fast add");
    assert_true(t.t[0].named);
    assert_string_equal(t.t[0].glob, "add/*");
    assert_null(t.t[0].op);
    assert_int_equal(t.t[0].kind, TB_TGT_TIME);
    assert_true(t.t[0].limit == 2e6);
    assert_int_equal(t.t[0].line, 3);
    assert_int_equal(t.t[0].col, 3);
    /* unnamed: its selectors */
    assert_string_equal(t.t[1].name, "matmul f32 blas");
    assert_false(t.t[1].named);
    assert_int_equal(t.t[1].kind, TB_TGT_PEER);
    assert_string_equal(t.t[1].peer, "torch");
    assert_true(t.t[1].limit == 1.5);
    assert_int_equal(t.t[1].peer_line, 5);
    assert_int_equal(t.t[1].peer_col, 43);
    assert_int_equal(t.t[2].kind, TB_TGT_BOUND);
    assert_string_equal(t.t[2].name, "exp");
    assert_int_equal(t.t[2].col, 17);
    tb_targets_free(&t);
    tb_targets_free(&t); /* twice: emptied */
    tb_targets_free(NULL);
}

/* text must fail with code and exactly message want. */
static void bad_file(const char *text, int code, const char *want)
{
    tb_targets t;
    char err[512] = "";
    int rc = tb_targets_parse(text, strlen(text), "t.json", &t, err,
                              sizeof err);
    if (rc != code || strcmp(err, want))
        print_error("text: %s\nrc %d, err: %s\nwant: %s\n", text, rc, err,
                    want);
    assert_int_equal(rc, code);
    assert_string_equal(err, want);
    assert_int_equal(t.n, 0);
    assert_null(t.t);
}

static void test_parse_errors(void **state)
{
    (void)state;
    bad_file("", TB_EPARSE,
             "t.json: empty targets file (expected a JSON object)");
    bad_file("{\"targets\": [\n  {\"op\" \"add\"}\n]}", TB_EPARSE,
             "t.json:2:9: syntax error near '\"add\"}'");
    bad_file("[]", TB_EINVAL, "t.json:1:1: expected an object, got a list");
    bad_file("{}", TB_EINVAL,
             "t.json:1:1: no \"targets\" (a list of targets, "
             "docs/CONFIG.md)");
    bad_file("{\"target\": []}", TB_EINVAL,
             "t.json:1:2: unknown top-level key 'target' (expected one of: "
             "targets)");
    bad_file("{\"targets\": []}", TB_EINVAL,
             "t.json:1:13: targets: expected a list of 1 to 4096 targets, "
             "got an empty list");
    bad_file("{\"targets\": \"all\"}", TB_EINVAL,
             "t.json:1:13: targets: expected a list of 1 to 4096 targets, "
             "got \"all\"");
    bad_file("{\"targets\": [{\"op\": \"add\"}]}", TB_EINVAL,
             "t.json:1:14: targets[0]: no bound: give one of \"max_time\", "
             "\"max_ratio_to\" or \"max_bound_ratio\"");
    bad_file("{\"targets\": [{\"max_time\": \"1s\"}]}", TB_EINVAL,
             "t.json:1:14: targets[0]: selects no cases: give \"case\" (a "
             "glob on the id), \"op\", \"dtype\" or \"backend\"");
    bad_file("{\"targets\": [\n {\"op\": \"add\",\n  \"max_time\": 2}]}",
             TB_EINVAL,
             "t.json:3:15: targets[0].max_time: expected a duration with a "
             "unit (ns, us, ms or s) up to 1 hour, e.g. \"2ms\" or "
             "\"150us\", got 2");
    bad_file("{\"targets\": [{\"op\": \"add\", \"max_time\": \"2h\"}]}",
             TB_EINVAL,
             "t.json:1:40: targets[0].max_time: expected a duration with a "
             "unit (ns, us, ms or s) up to 1 hour, e.g. \"2ms\" or "
             "\"150us\", got \"2h\"");
    bad_file("{\"targets\": [{\"op\": \"add\", \"max_time\": \"2ms\", "
             "\"max_bound_ratio\": 1}]}",
             TB_EINVAL,
             "t.json:1:47: targets[0]: a target holds one bound: "
             "'max_bound_ratio' after 'max_time' (write a second target)");
    bad_file("{\"targets\": [{\"op\": \"add\", \"max_ratio_to\": "
             "{\"peer\": \"numpy\"}}]}",
             TB_EINVAL,
             "t.json:1:44: targets[0].max_ratio_to: needs \"ratio\" (e.g. "
             "{\"peer\": \"numpy\", \"ratio\": 1.0})");
    bad_file("{\"targets\": [{\"op\": \"add\", \"max_ratio_to\": "
             "{\"peer\": \"numpy\", \"ratio\": 0}}]}",
             TB_EINVAL,
             "t.json:1:71: targets[0].max_ratio_to.ratio: expected a ratio "
             "(a number above 0, at most 1000000), got 0");
    bad_file("{\"targets\": [{\"op\": \"add\", \"max_bound_ratio\": 1, "
             "\"colour\": 1}]}",
             TB_EINVAL,
             "t.json:1:50: targets[0]: unknown key 'colour' (expected one "
             "of: name, case, op, dtype, backend, max_time, max_ratio_to, "
             "max_bound_ratio)");
    bad_file("{\"targets\": [{\"op\": \"\", \"max_bound_ratio\": 1}]}",
             TB_EINVAL,
             "t.json:1:21: targets[0].op: an op name must not be empty");
    bad_file("{\"targets\": [{\"op\": \"a\", \"op\": \"b\", "
             "\"max_bound_ratio\": 1}]}",
             TB_EINVAL, "t.json:1:26: targets[0]: duplicate key 'op'");
    bad_file("{\"targets\": [\n{\"name\": \"x\", \"op\": \"a\", "
             "\"max_bound_ratio\": 1},\n{\"name\": \"x\", \"op\": \"b\", "
             "\"max_bound_ratio\": 1}]}",
             TB_EINVAL,
             "t.json:3:1: targets[1]: name 'x' already names targets[0]");
}

static void test_load_missing_file(void **state)
{
    (void)state;
    tb_targets t;
    char err[512];
    assert_int_equal(tb_targets_load("/nonexistent/t.json", &t, err,
                                     sizeof err),
                     TB_EIO);
    assert_string_equal(err, "/nonexistent/t.json: cannot open: No such "
                             "file or directory");
}

/* ---- verdicts --------------------------------------------------------- */

/* A case record: op on backend with the axes (backend_params, e.g.
 * {"threads": "1", "form": "out"}; the id spelled from them, as tbench
 * spells it) of status; when ok, 20 samples base * (1 + k/1000), k =
 * 0..19, and the recorded median CI [base * 0.99, base * 1.01] around
 * the median base * 1.0095; bound > 0: roofline.min_time_ns. */
static void add_case(cJSON *cases, const char *op, const char *backend,
                     const char *axes, const char *status, double base,
                     double bound)
{
    cJSON *c = cJSON_CreateObject();
    cJSON *bp = cJSON_Parse(axes);
    char id[256], ax[128] = "";
    const cJSON *a;
    cJSON_ArrayForEach(a, bp)
    {
        size_t u = strlen(ax);
        snprintf(ax + u, sizeof ax - u, "%s%s=%s", u ? "," : "[", a->string,
                 a->valuestring);
    }
    snprintf(id, sizeof id, "%s/64/f32/%s%s%s", op, backend, ax,
             ax[0] ? "]" : "");
    cJSON_AddStringToObject(c, "id", id);
    cJSON_AddStringToObject(c, "op", op);
    cJSON_AddStringToObject(c, "dtype", "f32");
    cJSON_AddItemToObject(c, "shapes", cJSON_Parse("[[64]]"));
    cJSON_AddStringToObject(c, "backend", backend);
    cJSON_AddItemToObject(c, "backend_params", bp);
    cJSON_AddStringToObject(c, "status", status);
    if (strcmp(status, "ok")) {
        cJSON_AddStringToObject(c, "message", "why");
        cJSON_AddItemToArray(cases, c);
        return;
    }
    cJSON *st = cJSON_AddObjectToObject(c, "stats");
    cJSON *s = cJSON_AddArrayToObject(st, "samples_ns");
    for (int k = 0; k < 20; k++)
        cJSON_AddItemToArray(s, cJSON_CreateNumber(base * (1 + k / 1e3)));
    double med = base * 1.0095;
    cJSON_AddNumberToObject(st, "n", 20);
    cJSON_AddNumberToObject(st, "iters_per_sample", 1);
    cJSON_AddNumberToObject(st, "median_ns", med);
    cJSON_AddNumberToObject(st, "ci_low_ns", base * 0.99);
    cJSON_AddNumberToObject(st, "ci_high_ns", base * 1.01);
    cJSON_AddNumberToObject(st, "ci_rel", 0.02 / 1.0095);
    cJSON_AddNumberToObject(st, "min_ns", base);
    cJSON_AddNumberToObject(st, "mean_ns", med);
    if (bound > 0) {
        /* a whole roofline object, as the loader requires */
        cJSON *r = cJSON_AddObjectToObject(c, "roofline");
        cJSON_AddStringToObject(r, "level", "DRAM");
        cJSON_AddNumberToObject(r, "threads", 1);
        cJSON_AddStringToObject(r, "bw_kernel", "add");
        cJSON_AddNumberToObject(r, "bandwidth_gb_s", 20);
        cJSON_AddStringToObject(r, "isa", "avx2");
        cJSON_AddNumberToObject(r, "peak_gflop_s", 100);
        cJSON_AddNumberToObject(r, "attainable_gflop_s", 20);
        cJSON_AddNumberToObject(r, "attainable_gb_s", 20);
        cJSON_AddStringToObject(r, "bound", "memory");
        cJSON_AddNumberToObject(r, "min_time_ns", bound);
        cJSON_AddNumberToObject(r, "fraction", bound / med);
    }
    cJSON_AddItemToArray(cases, c);
}

static tb_resfile *load(cJSON *doc, const char *name)
{
    tb_resfile *f = NULL;
    char err[512] = "";
    int rc = tb_resfile_from_doc(name, doc, &f, err, sizeof err);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    cJSON_Delete(doc);
    return f;
}

static cJSON *new_doc(cJSON **cases)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "tbench.results/1");
    *cases = cJSON_AddArrayToObject(doc, "cases");
    return doc;
}

#define T1 "{\"threads\": \"1\""
#define T2 "{\"threads\": \"2\""
#define OUT ", \"form\": \"out\"}"
#define ALLOC ", \"form\": \"alloc\"}"

/* The results: add (1000 ns, bound 500) and exp (1000 ns, no bound) on
 * cpu at 1 and 2 threads, relu on cpu unsupported, mul on cuda (no
 * threads axis).  The peers: numpy add at 2000 and 4000 ns (threads=1:
 * the fastest is the peer), at 1000 ns with threads=2, numpy exp
 * unsupported, numpy mul at 2000 ns (threads=1). */
static void files(tb_resfile **res, tb_resfile **peer)
{
    cJSON *cases, *doc = new_doc(&cases);
    add_case(cases, "add", "cpu", T1 "}", "ok", 1000, 500);
    add_case(cases, "add", "cpu", T2 "}", "ok", 1000, 500);
    add_case(cases, "exp", "cpu", T1 "}", "ok", 1000, 0);
    add_case(cases, "relu", "cpu", T1 "}", "unsupported", 0, 0);
    add_case(cases, "mul", "cuda", "{}", "ok", 1000, 0);
    *res = load(doc, "res.json");
    doc = new_doc(&cases);
    add_case(cases, "add", "numpy", T1 ALLOC, "ok", 4000, 0);
    add_case(cases, "add", "torch", T1 OUT, "ok", 1500, 0); /* not numpy */
    add_case(cases, "add", "numpy", T1 OUT, "ok", 2000, 0);
    add_case(cases, "add", "numpy", T2 OUT, "ok", 1000, 0);
    add_case(cases, "exp", "numpy", T1 OUT, "unsupported", 0, 0);
    add_case(cases, "mul", "numpy", T1 OUT, "ok", 2000, 0);
    *peer = load(doc, "peer.json");
}

/* Parse text into *t and judge it on res with the peers' file *peer
 * (none when *peer is NULL), which r keeps a pointer to. */
static void judge(const char *text, const tb_tgt_opts *o, tb_resfile *res,
                  tb_resfile *const *peer, tb_targets *t, tb_tgt_result *r)
{
    char err[512];
    assert_int_equal(tb_targets_parse(text, strlen(text), "t.json", t, err,
                                      sizeof err),
                     0);
    int rc = tb_targets_judge(t, res, peer, *peer ? 1 : 0, o, r, err,
                              sizeof err);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
}

static void want_check(const tb_tgt_result *r, int i, const char *id,
                         tb_tgt_verdict v)
{
    assert_true(i < r->n);
    assert_string_equal(r->checks[i].c->id, id);
    if (r->checks[i].v != v)
        print_error("%s: %s, want %s\n", id,
                    tb_tgt_verdict_word(r->checks[i].v),
                    tb_tgt_verdict_word(v));
    assert_int_equal(r->checks[i].v, v);
}

static void test_time_and_bound(void **state)
{
    (void)state;
    tb_resfile *res, *peer;
    files(&res, &peer);
    tb_targets t;
    tb_tgt_result r;
    tb_tgt_opts o = {0};
    tb_resfile *none = NULL;
    /* the median CI is [990, 1010] ns: 1.1 us met, 900 ns missed, 1 us
     * inside it; over the bound 500: [1.98, 2.02] */
    judge("{\"targets\": ["
          "{\"case\": \"add/*[threads=1]\", \"max_time\": \"1.1us\"},"
          "{\"case\": \"add/*[threads=1]\", \"max_time\": \"900ns\"},"
          "{\"case\": \"add/*[threads=1]\", \"max_time\": \"1us\"},"
          "{\"op\": \"add\", \"max_bound_ratio\": 2.5},"
          "{\"op\": \"add\", \"backend\": \"cpu\", \"max_bound_ratio\": 1.5},"
          "{\"op\": \"add\", \"dtype\": \"f32\", \"max_bound_ratio\": 2}"
          "]}",
          &o, res, &none, &t, &r);
    assert_int_equal(r.n, 9);
    want_check(&r, 0, "add/64/f32/cpu[threads=1]", TB_TGT_MET);
    assert_true(r.checks[0].value == 1009.5 && r.checks[0].lo == 990 &&
                r.checks[0].hi == 1010);
    want_check(&r, 1, "add/64/f32/cpu[threads=1]", TB_TGT_MISSED);
    want_check(&r, 2, "add/64/f32/cpu[threads=1]", TB_TGT_INCONCLUSIVE);
    want_check(&r, 3, "add/64/f32/cpu[threads=1]", TB_TGT_MET);
    assert_true(fabs(r.checks[3].value - 2.019) < 1e-12);
    assert_true(fabs(r.checks[3].lo - 1.98) < 1e-12);
    want_check(&r, 4, "add/64/f32/cpu[threads=2]", TB_TGT_MET);
    want_check(&r, 5, "add/64/f32/cpu[threads=1]", TB_TGT_MISSED);
    want_check(&r, 7, "add/64/f32/cpu[threads=1]", TB_TGT_INCONCLUSIVE);
    assert_int_equal(r.n_met, 3);
    assert_int_equal(r.n_missed, 3);
    assert_int_equal(r.n_inconclusive, 3);
    assert_true(r.failed);
    tb_tgt_result_free(&r);
    tb_targets_free(&t);

    /* a limit between the median (1009.5) and the CI's top (1010): the
     * CI decides, not the point estimate */
    judge("{\"targets\": [{\"case\": \"add/*[threads=1]\", \"max_time\": "
          "\"1009.7ns\"}]}",
          &o, res, &none, &t, &r);
    want_check(&r, 0, "add/64/f32/cpu[threads=1]", TB_TGT_INCONCLUSIVE);
    tb_tgt_result_free(&r);
    tb_targets_free(&t);

    /* only met and inconclusive: passes, unless strict */
    const char *text = "{\"targets\": [{\"op\": \"add\", \"max_time\": "
                       "\"1us\"}, {\"op\": \"add\", \"max_time\": \"1s\"}]}";
    judge(text, &o, res, &none, &t, &r);
    assert_int_equal(r.n_inconclusive, 2);
    assert_int_equal(r.n_met, 2);
    assert_false(r.failed);
    tb_tgt_result_free(&r);
    tb_targets_free(&t);
    o.strict = true;
    judge(text, &o, res, &none, &t, &r);
    assert_true(r.failed);
    tb_tgt_result_free(&r);
    tb_targets_free(&t);
    tb_resfile_free(res);
    tb_resfile_free(peer);
}

static void test_peer(void **state)
{
    (void)state;
    tb_resfile *res, *peer;
    files(&res, &peer);
    tb_targets t;
    tb_tgt_result r;
    tb_tgt_opts o = {0};
    /* add at threads=1 against numpy's fastest at threads=1 (2000 ns,
     * not torch's 1500, not the 4000 ns one): 0.5x, the same samples
     * scaled, so the pair's CI spans 0.5; at threads=2 against numpy's
     * 1000 ns: 1x */
    judge("{\"targets\": ["
          "{\"case\": \"add/*\", \"max_ratio_to\": {\"peer\": \"numpy\", "
          "\"ratio\": 0.6}},"
          "{\"case\": \"add/*[threads=1]\", \"max_ratio_to\": {\"peer\": "
          "\"numpy\", \"ratio\": 0.4}},"
          "{\"case\": \"add/*[threads=1]\", \"max_ratio_to\": {\"peer\": "
          "\"numpy\", \"ratio\": 0.5}},"
          "{\"op\": \"exp\", \"max_ratio_to\": {\"peer\": \"numpy\", "
          "\"ratio\": 9}},"
          "{\"op\": \"relu\", \"max_ratio_to\": {\"peer\": \"numpy\", "
          "\"ratio\": 9}},"
          "{\"op\": \"mul\", \"max_ratio_to\": {\"peer\": \"torch\", "
          "\"ratio\": 9}},"
          "{\"op\": \"mul\", \"max_ratio_to\": {\"peer\": \"numpy\", "
          "\"ratio\": 0.6}}"
          "]}",
          &o, res, &peer, &t, &r);
    assert_int_equal(r.n, 8);
    want_check(&r, 0, "add/64/f32/cpu[threads=1]", TB_TGT_MET);
    assert_true(fabs(r.checks[0].value - 0.5) < 1e-12);
    assert_string_equal(r.checks[0].peer->id,
                        "add/64/f32/numpy[threads=1,form=out]");
    assert_true(r.checks[0].lo < 0.5 && r.checks[0].hi > 0.5);
    want_check(&r, 1, "add/64/f32/cpu[threads=2]", TB_TGT_MISSED);
    assert_true(fabs(r.checks[1].value - 1) < 1e-12);
    want_check(&r, 2, "add/64/f32/cpu[threads=1]", TB_TGT_MISSED);
    want_check(&r, 3, "add/64/f32/cpu[threads=1]", TB_TGT_INCONCLUSIVE);
    want_check(&r, 4, "exp/64/f32/cpu[threads=1]", TB_TGT_MISSING);
    assert_string_equal(r.checks[4].why,
                        "numpy's case not run (unsupported)");
    assert_true(isnan(r.checks[4].value));
    want_check(&r, 5, "relu/64/f32/cpu[threads=1]", TB_TGT_MISSING);
    assert_string_equal(r.checks[5].why, "not run (unsupported)");
    /* mul on cuda has no threads axis: numpy's threads=1 case pairs */
    want_check(&r, 6, "mul/64/f32/cuda", TB_TGT_MISSING);
    assert_string_equal(r.checks[6].why, "no torch case");
    want_check(&r, 7, "mul/64/f32/cuda", TB_TGT_MET);
    assert_int_equal(r.n_missing, 3);
    assert_true(r.failed);
    tb_tgt_result_free(&r);
    tb_targets_free(&t);

    /* missing checks pass with allow_missing; an unmatched target never */
    o.allow_missing = true;
    judge("{\"targets\": [{\"op\": \"relu\", \"max_time\": \"1s\"}]}", &o,
          res, &peer, &t, &r);
    assert_int_equal(r.n_missing, 1);
    assert_false(r.failed);
    tb_tgt_result_free(&r);
    tb_targets_free(&t);
    judge("{\"targets\": [{\"op\": \"relu\", \"max_time\": \"1s\"}, "
          "{\"op\": \"sub\", \"max_time\": \"1s\"}]}",
          &o, res, &peer, &t, &r);
    assert_int_equal(r.n_unmatched, 1);
    assert_int_equal(r.matched[1], 0);
    assert_true(r.failed);
    tb_tgt_result_free(&r);
    tb_targets_free(&t);

    /* a peer target needs a --with file, and the peer's cases in it */
    char err[512];
    const char *text = "{\"targets\": [{\"op\": \"add\", \"max_ratio_to\": "
                       "{\"peer\": \"jax\", \"ratio\": 1}}]}";
    assert_int_equal(tb_targets_parse(text, strlen(text), "t.json", &t, err,
                                      sizeof err),
                     0);
    tb_resfile *with[1] = {peer};
    assert_int_equal(tb_targets_judge(&t, res, with, 1, &o, &r, err,
                                      sizeof err),
                     TB_EINVAL);
    assert_string_equal(err, "t.json:1:53: targets[0].max_ratio_to.peer: "
                             "no case of backend 'jax' in the --with files "
                             "(their backends: numpy, torch)");
    assert_int_equal(tb_targets_judge(&t, res, with, 0, &o, &r, err,
                                      sizeof err),
                     TB_EINVAL);
    assert_string_equal(err, "t.json:1:53: targets[0].max_ratio_to.peer: "
                             "'jax' needs the peer's result file (--with "
                             "FILE)");
    tb_targets_free(&t);
    tb_resfile_free(res);
    tb_resfile_free(peer);
}

/* The table of r at width. */
static char *table(const tb_tgt_result *r, int width)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    tb_tgt_print(f, r, width);
    fclose(f);
    return buf;
}

static void test_print(void **state)
{
    (void)state;
    cJSON *cases, *doc = new_doc(&cases);
    add_case(cases, "add_relu_unfused_with_a_long_name", "cpu",
             "{\"threads\": \"1234567890\"}", "ok", 1500, 0);
    add_case(cases, "add", "cpu", T1 "}", "unsupported", 0, 0);
    tb_resfile *res = load(doc, "res.json"), *none = NULL;
    tb_targets t;
    tb_tgt_result r;
    tb_tgt_opts o = {0};
    judge("{\"targets\": [{\"name\": \"t1\", \"backend\": \"cpu\", "
          "\"max_time\": \"2us\"},\n"
          "  {\"op\": \"sub\", \"max_bound_ratio\": 1.25}]}",
          &o, res, &none, &t, &r);
    char *full = table(&r, 0);
    const char *want =
        "target / case                                                       "
        "value [95% CI]        verdict\n"
        "t1: at most 2 us\n"
        "  add_relu_unfused_with_a_long_name/64/f32/cpu[threads=1234567890]"
        "  1.51 us [1.49, 1.51]  met\n"
        "  add/64/f32/cpu[threads=1]                                       "
        "  -                     missing: not run (unsupported)\n"
        "sub: at most 1.25x the roofline bound\n"
        "  matched no case (t.json:2:3)  unmatched\n"
        "summary: 1 met, 0 missed, 0 inconclusive, 1 missing, 1 unmatched "
        "(2 cases under 2 targets)\n";
    if (strcmp(full, want))
        print_error("got:\n%s\nwant:\n%s\n", full, want);
    assert_string_equal(full, want);
    free(full);
    /* 60 columns: the ids cut in the middle, down to 24 */
    char *cut = table(&r, 60);
    assert_non_null(strstr(cut, "\n  add_relu_un...234567890]  "
                                "1.51 us [1.49, 1.51]  met\n"));
    free(cut);
    tb_tgt_result_free(&r);
    tb_targets_free(&t);
    tb_resfile_free(res);
}

static void test_json(void **state)
{
    (void)state;
    tb_resfile *res, *peer;
    files(&res, &peer);
    tb_targets t;
    tb_tgt_result r;
    tb_tgt_opts o = {.allow_missing = true};
    judge("{\"targets\": [{\"name\": \"a\", \"op\": \"add\", \"max_ratio_to\":"
          " {\"peer\": \"numpy\", \"ratio\": 2}}, {\"op\": \"relu\", "
          "\"max_time\": \"5ms\"}]}",
          &o, res, &peer, &t, &r);
    cJSON *doc = tb_tgt_json(&r);
    char *s = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    assert_non_null(strstr(s, "\"schema\":\"tbench.targets/1\","
                              "\"targets_file\":\"t.json\","
                              "\"results\":\"res.json\","
                              "\"with\":[\"peer.json\"],\"strict\":false,"
                              "\"allow_missing\":true"));
    assert_non_null(strstr(s, "\"name\":\"a\",\"line\":1,\"col\":14,"
                              "\"select\":{\"case\":null,\"op\":\"add\","
                              "\"dtype\":null,\"backend\":null},"
                              "\"bound\":\"max_ratio_to\",\"limit\":2,"
                              "\"unit\":\"ratio\",\"peer\":\"numpy\","
                              "\"matched\":2,\"checks\":[{\"id\":"
                              "\"add/64/f32/cpu[threads=1]\",\"status\":"
                              "\"ok\",\"verdict\":\"met\",\"value\":0.5,"));
    assert_non_null(strstr(s, "\"peer_id\":\"add/64/f32/numpy[threads=1,"
                              "form=out]\",\"why\":null}"));
    assert_non_null(strstr(s, "\"bound\":\"max_time\",\"limit\":5000000,"
                              "\"unit\":\"ns\",\"peer\":null,\"matched\":1,"
                              "\"checks\":[{\"id\":\"relu/64/f32/cpu"
                              "[threads=1]\",\"status\":\"unsupported\","
                              "\"verdict\":\"missing\",\"value\":null,"
                              "\"ci_low\":null,\"ci_high\":null,"
                              "\"peer_id\":null,\"why\":\"not run "
                              "(unsupported)\"}]"));
    assert_non_null(strstr(s, "\"summary\":{\"met\":2,\"missed\":0,"
                              "\"inconclusive\":0,\"missing\":1,"
                              "\"unmatched\":0,\"checks\":3,\"targets\":2,"
                              "\"failed\":false}}"));
    free(s);
    tb_tgt_result_free(&r);
    tb_targets_free(&t);
    tb_resfile_free(res);
    tb_resfile_free(peer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_load_missing_file),
        cmocka_unit_test(test_time_and_bound),
        cmocka_unit_test(test_peer),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
