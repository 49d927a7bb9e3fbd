/* Unit tests of src/report/report.c and plot.c's pure parts: loading
 * result files (and their one-line errors), the reference-backend rule,
 * the baseline verdict, change-point detection and the Markdown of a
 * minimal document.  The CLI, the charts and the golden report are
 * tested by tests/test_cli_report.py. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "report/plot.h"
#include "report/report.h"

/* Write text to a fresh temporary file; returns its path (static). */
static const char *tmp_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/tbench-test-report-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

#define CASE(id, backend, bp, status, med)                                  \
    "{\"id\":\"" id "\",\"op\":\"add\",\"category\":\"elementwise\","      \
    "\"dtype\":\"f32\",\"backend\":\"" backend "\",\"backend_params\":" bp \
    ",\"status\":\"" status "\",\"message\":null,"                          \
    "\"model\":{\"flops\":10,\"bytes\":120,\"items\":10,\"reduce_len\":1},"  \
    "\"out_shapes\":[[10]],"                                                 \
    "\"stats\":{\"median_ns\":" #med ",\"ci_low_ns\":" #med                 \
    ",\"ci_high_ns\":" #med ",\"ci_rel\":0,\"mad_ns\":0,\"n\":3,"           \
    "\"iters_per_sample\":1,\"stop_reason\":\"ci_target\"}}"

#define DOC(cases)                                                          \
    "{\"schema\":\"tbench.results/1\",\"complete\":true,\"env\":{},"        \
    "\"config\":[],\"summary\":{},\"cases\":[" cases "]}"

static void test_load_ok(void **state)
{
    (void)state;
    tb_rset s = {0};
    char err[512] = "";
    const char *p = tmp_file(DOC(
        CASE("add/10,10/f32/cpu[threads=1]", "cpu", "{\"threads\":\"1\"}",
             "ok", 100) ","
        CASE("add/10,10/f32/cpu[threads=2]", "cpu", "{\"threads\":\"2\"}",
             "ok", 60)));
    assert_int_equal(tb_rset_load(&s, p, TB_ROLE_MAIN, err, sizeof err), 0);
    unlink(p);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.cases[0].key, "add/10,10/f32");
    assert_string_equal(s.cases[0].opp, "add");
    assert_string_equal(s.cases[0].shapes, "10,10");
    assert_string_equal(s.cases[1].variant, "cpu[threads=2]");
    assert_true(s.cases[1].ok);
    assert_true(s.cases[1].median == 60);
    /* reference: cpu threads=1 */
    const tb_rcase *ref = tb_rset_reference(&s, "add/10,10/f32",
                                            1u << TB_ROLE_MAIN);
    assert_non_null(ref);
    assert_string_equal(ref->variant, "cpu[threads=1]");
    tb_rset_free(&s);
}

/* Each bad file gives one line naming the file and what is wrong. */
static void test_load_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
        int rc;
    } bad[] = {
        {"{\"schema\": \"tbench.results/1\",\n \"cases\": [}", ":2:", TB_EPARSE},
        {"{\"schema\": \"other/2\", \"cases\": []}", "schema 'other/2'",
         TB_EINVAL},
        {"{\"schema\": \"tbench.results/1\"}", "'cases' missing", TB_EINVAL},
        {DOC("{\"id\":\"x\"}"), "cases[0]: 'op' missing", TB_EINVAL},
        {DOC(CASE("add-without-slashes", "cpu", "{}", "ok", 1)),
         "is not OP/SHAPES/DTYPE/BACKEND", TB_EINVAL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb_rset s = {0};
        char err[512] = "";
        const char *p = tmp_file(bad[i].text);
        int rc = tb_rset_load(&s, p, TB_ROLE_MAIN, err, sizeof err);
        unlink(p);
        assert_int_equal(rc, bad[i].rc);
        assert_non_null(strstr(err, p));
        if (!strstr(err, bad[i].want))
            fail_msg("case %zu: '%s' not in '%s'", i, bad[i].want, err);
        assert_null(strchr(err, '\n'));
        assert_int_equal(s.n, 0);
        tb_rset_free(&s);
    }
    tb_rset s = {0};
    char err[512];
    assert_int_equal(tb_rset_load(&s, "/nonexistent/r.json", TB_ROLE_MAIN,
                                  err, sizeof err),
                     TB_EIO);
    assert_non_null(strstr(err, "/nonexistent/r.json"));
}

static tb_rcase rc_of(const char *backend, const char *bp_json)
{
    tb_rcase c;
    memset(&c, 0, sizeof c);
    c.backend = backend;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "backend_params", cJSON_Parse(bp_json));
    c.j = j;
    return c;
}

static void test_reference_rule(void **state)
{
    (void)state;
    static const struct {
        const char *backend, *bp;
        int score;
    } t[] = {
        {"cpu", "{\"isa\":\"scalar\",\"threads\":\"1\"}", 3},
        {"cpu", "{\"isa\":\"scalar\",\"threads\":\"2\"}", 2},
        {"cpu", "{\"isa\":\"avx2\",\"threads\":\"1\"}", 1},
        {"cpu", "{\"threads\":\"1\"}", 1},
        {"cpu", "{}", 1},
        {"cpu", "{\"isa\":\"avx2\",\"threads\":\"2\"}", -1},
        {"blas", "{\"threads\":\"1\"}", -1},
        {"numpy", "{\"threads\":\"1\",\"form\":\"out\"}", -1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        tb_rcase c = rc_of(t[i].backend, t[i].bp);
        assert_int_equal(tb_rcase_ref_score(&c), t[i].score);
        cJSON_Delete((cJSON *)c.j);
    }
}

static tb_rcase timed(double med, double lo, double hi)
{
    tb_rcase c;
    memset(&c, 0, sizeof c);
    c.median = med;
    c.ci_lo = lo;
    c.ci_hi = hi;
    return c;
}

static void test_verdict(void **state)
{
    (void)state;
    double ch;
    tb_rcase old = timed(100, 99, 101);
    /* +10%, CIs apart: regressed */
    tb_rcase a = timed(110, 109, 111);
    assert_int_equal(tb_report_verdict(&old, &a, 0.02, &ch),
                     TB_VERDICT_REGRESSED);
    assert_true(fabs(ch - 0.10) < 1e-12);
    /* -10%: improved */
    tb_rcase b = timed(90, 89, 91);
    assert_int_equal(tb_report_verdict(&old, &b, 0.02, &ch),
                     TB_VERDICT_IMPROVED);
    /* +1%: under the threshold */
    tb_rcase c = timed(101, 100.5, 101.5);
    assert_int_equal(tb_report_verdict(&old, &c, 0.02, &ch),
                     TB_VERDICT_UNCHANGED);
    /* +10% but the CIs overlap: unchanged */
    tb_rcase d = timed(110, 95, 125);
    assert_int_equal(tb_report_verdict(&old, &d, 0.02, &ch),
                     TB_VERDICT_UNCHANGED);
}

static void test_change_points(void **state)
{
    (void)state;
    bool cp[12];
    /* a 20% step at run 6, 1% noise (CI 2%) */
    double y[12], rel[12];
    for (int i = 0; i < 12; i++) {
        y[i] = (i < 6 ? 100 : 120) * (1 + 0.01 * ((i * 7) % 3 - 1));
        rel[i] = 0.02;
    }
    assert_int_equal(tb_change_points(y, rel, 12, cp), 1);
    for (int i = 0; i < 12; i++)
        assert_int_equal(cp[i], i == 6);
    /* flat with the same noise: none */
    for (int i = 0; i < 12; i++)
        y[i] = 100 * (1 + 0.01 * ((i * 7) % 3 - 1));
    assert_int_equal(tb_change_points(y, rel, 12, cp), 0);
    /* two steps, a missing run skipped */
    double z[9] = {10, 10, 10, 20, NAN, 20, 20, 5, 5};
    assert_int_equal(tb_change_points(z, NULL, 9, cp), 2);
    assert_true(cp[3] && cp[7]);
    /* fewer than two points: nothing */
    assert_int_equal(tb_change_points(z, NULL, 1, cp), 0);
}

/* The report of a single ok case has no speedup, baseline, anomaly or
 * side-by-side section, and every table has rows. */
static void test_markdown_single(void **state)
{
    (void)state;
    tb_rset s = {0};
    char err[512];
    const char *p = tmp_file(DOC(
        CASE("add/10,10/f32/cpu[threads=1]", "cpu", "{\"threads\":\"1\"}",
             "ok", 100)));
    assert_int_equal(tb_rset_load(&s, p, TB_ROLE_MAIN, err, sizeof err), 0);
    unlink(p);
    tb_report_opts o = {"tbench report x", NULL, "perf", NULL, 0.02, 3, 8};
    char *md = NULL;
    assert_int_equal(tb_report_markdown(&s, &o, &md), 0);
    assert_non_null(strstr(md, "## Element-wise"));
    assert_non_null(strstr(md, "| add | 10,10 | f32 | cpu[threads=1] | "
                               "100 ns |"));
    assert_null(strstr(md, "## Backend speedups"));
    assert_null(strstr(md, "## Comparison with the baseline"));
    assert_null(strstr(md, "## Scaling anomalies"));
    assert_null(strstr(md, "## Side by side"));
    assert_null(strstr(md, "## Cases that did not run"));
    assert_null(strstr(md, "!["));
    free(md);
    tb_rset_free(&s);
    /* no MAIN document: EINVAL */
    tb_rset none = {0};
    assert_int_equal(tb_report_markdown(&none, &o, &md), TB_EINVAL);
}

static void test_fmt_time(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(tb_report_fmt_time(812, 812, b, sizeof b), "812 ns");
    assert_string_equal(tb_report_fmt_time(4560000, 4560000, b, sizeof b),
                        "4.56 ms");
    /* the unit follows the scale: a CI end printed like its median */
    assert_string_equal(tb_report_fmt_time(990000, 1000000, b, sizeof b),
                        "0.99 ms");
    assert_string_equal(tb_report_fmt_time(12345, 12345, b, sizeof b),
                        "12.3 us");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_ok),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_reference_rule),
        cmocka_unit_test(test_verdict),
        cmocka_unit_test(test_change_points),
        cmocka_unit_test(test_markdown_single),
        cmocka_unit_test(test_fmt_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
