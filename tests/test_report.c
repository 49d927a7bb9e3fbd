/* Unit tests of src/report/report.c: loading result files through the
 * one loader (the same one-line errors as tb_resfile_load), the
 * reference-backend rule, the baseline section against `tbench compare`
 * case by case, the crashed/timeout statuses and the Markdown of a
 * minimal document.  The CLI, the charts (history change points against
 * `tbench history`) and the golden report are tested by
 * tests/test_cli_report.py. */
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
#include "report/compare.h"
#include "report/plot.h"
#include "report/report.h"
#include "report/resultsio.h"

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

/* A case record of add on shapes shp (its inputs', JSON); med is its
 * median (3 samples, all med).  The id is spelled as tbench spells the
 * fields (the report takes the id's parts from the fields). */
#define CASE(id, shp, backend, bp, status, med)                             \
    "{\"id\":\"" id "\",\"op\":\"add\",\"category\":\"elementwise\","      \
    "\"dtype\":\"f32\",\"backend\":\"" backend "\",\"backend_params\":" bp \
    ",\"status\":\"" status "\",\"message\":null,"                          \
    "\"model\":{\"flops\":10,\"bytes\":120,\"items\":10,\"reduce_len\":1},"  \
    "\"shapes\":" shp ",\"out_shapes\":[[10]],"                             \
    "\"stats\":{\"median_ns\":" #med ",\"ci_low_ns\":" #med                 \
    ",\"ci_high_ns\":" #med ",\"ci_rel\":0,\"mad_ns\":0,\"n\":3,"           \
    "\"min_ns\":" #med ",\"mean_ns\":" #med ",\"samples_ns\":[" #med ","    \
    #med "," #med "],"                                                      \
    "\"iters_per_sample\":1,\"stop_reason\":\"ci_target\"}}"

/* A case that did not run, with a message. */
#define NOT_RUN(id, shp, bp, status, msg)                                   \
    "{\"id\":\"" id "\",\"op\":\"add\",\"category\":\"elementwise\","      \
    "\"dtype\":\"f32\",\"backend\":\"cpu\",\"backend_params\":" bp        \
    ",\"shapes\":" shp ","                                                 \
    "\"status\":\"" status "\",\"message\":\"" msg "\",\"stats\":null}"

/* backend_params bp of a case whose data started and ended on the host
 * (its id ends in @transfers). */
#define TRANSFERS(bp) bp ",\"transfers\":true"

#define DOC(cases)                                                          \
    "{\"schema\":\"tbench.results/1\",\"complete\":true,\"env\":{},"        \
    "\"config\":[],\"summary\":{},\"cases\":[" cases "]}"

static void test_load_ok(void **state)
{
    (void)state;
    tb_rset s = {0};
    char err[512] = "";
    const char *p = tmp_file(DOC(
        CASE("add/10,10/f32/cpu[threads=1]", "[[10],[10]]", "cpu",
             "{\"threads\":\"1\"}",
             "ok", 100) ","
        CASE("add/10,10/f32/cpu[threads=2]", "[[10],[10]]", "cpu",
             "{\"threads\":\"2\"}",
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

/* A file loaded from disk keeps typed records alone (compact): a
 * record is read again from the file, with its samples, its id as
 * tb_resfile_pick_backend renamed it and its control bytes cleaned;
 * refused once the file changed or is gone. */
static void test_record_again(void **state)
{
    (void)state;
    char err[512] = "";
    const char *p = tmp_file(DOC(
        CASE("add/10,10/f32/cpu[threads=1]", "[[10],[10]]", "cpu",
             "{\"threads\":\"1\"}", "ok", 100) ","
        NOT_RUN("add/10,10/f32/cpu[threads=2]", "[[10],[10]]",
                "{\"threads\":\"2\"}", "error", "bad\\u001b[31m")));
    char path[64];
    snprintf(path, sizeof path, "%s", p);
    tb_resfile *f = NULL;
    assert_int_equal(tb_resfile_load(path, &f, err, sizeof err), 0);
    assert_true(f->compact);
    assert_null(f->cases[0].json);
    assert_string_equal(f->cases[1].message, "bad?[31m");
    cJSON *r = tb_rescase_record(f, &f->cases[0], err, sizeof err);
    assert_non_null(r);
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r, "stats"), "samples_ns");
    assert_int_equal(cJSON_GetArraySize(sa), 3);
    assert_true(cJSON_GetArrayItem(sa, 2)->valuedouble == 100);
    cJSON_Delete(r);
    r = tb_rescase_record(f, &f->cases[1], err, sizeof err);
    assert_non_null(r);
    assert_string_equal(tb_json_str(r, "message"), "bad?[31m");
    cJSON_Delete(r);
    assert_int_equal(tb_resfile_pick_backend(f, "cpu", err, sizeof err), 0);
    r = tb_rescase_record(f, &f->cases[0], err, sizeof err);
    assert_non_null(r);
    assert_string_equal(tb_res_record_id(r), "add/10,10/f32/*[threads=1]");
    cJSON_Delete(r);
    /* the same path, another file (as a rename over it leaves it) */
    unlink(path);
    FILE *w = fopen(path, "w");
    assert_non_null(w);
    fputs("{}", w);
    fclose(w);
    assert_null(tb_rescase_record(f, &f->cases[0], err, sizeof err));
    assert_non_null(strstr(err, "the file changed after it was loaded"));
    assert_true(!strncmp(err, path, strlen(path)));
    unlink(path);
    assert_null(tb_rescase_record(f, &f->cases[1], err, sizeof err));
    assert_non_null(strstr(err, "cases[1] (add/10,10/f32/*[threads=2])"));
    tb_resfile_free(f);
}

/* Each bad file gives one line naming the file and what is wrong: the
 * loader's line, word for word, whether plot/report or compare reads it. */
static void test_load_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
        int rc;
    } bad[] = {
        {"{\"schema\": \"tbench.results/1\",\n \"cases\": [", "truncated",
         TB_EPARSE},
        {"{\"schema\": \"tbench.results/1\",\n \"cases\": [1,, 2]}",
         "corrupt: not valid JSON at line 2", TB_EPARSE},
        {"{\"schema\": \"other/2\", \"cases\": []}",
         "schema is \"other/2\"", TB_EINVAL},
        {"{\"schema\": \"tbench.results/1\"}", "\"cases\": expected an array",
         TB_EINVAL},
        {DOC("{\"id\":\"x\",\"status\":\"skipped\"}"),
         "cases[0] (x): no \"op\" string", TB_EINVAL},
        {DOC(CASE("a/1/f32/cpu", "[[1]]", "cpu", "{}", "ok", 1e999)),
         "stats.median_ns: expected a finite number, got inf", TB_EINVAL},
        {DOC(CASE("a/1/f32/cpu", "[[1]]", "cpu", "{}", "ok", 1) ","
             NOT_RUN("b/1/f32/cpu", "[[1]]", "{}", "exploded", "?")),
         "cases[1] (b/1/f32/cpu): unknown status \"exploded\"", TB_EINVAL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb_rset s = {0};
        char err[512] = "", err2[512] = "";
        const char *p = tmp_file(bad[i].text);
        int rc = tb_rset_load(&s, p, TB_ROLE_MAIN, err, sizeof err);
        tb_resfile *f = NULL;
        int rc2 = tb_resfile_load(p, &f, err2, sizeof err2);
        unlink(p);
        assert_int_equal(rc, bad[i].rc);
        assert_int_equal(rc2, bad[i].rc);
        assert_null(f);
        assert_string_equal(err, err2);
        assert_int_equal(strncmp(err, p, strlen(p)), 0);
        if (!strstr(err, bad[i].want))
            fail_msg("case %zu: '%s' not in '%s'", i, bad[i].want, err);
        assert_null(strchr(err, '\n'));
        assert_int_equal(s.n, 0);
        assert_int_equal(s.n_docs, 0);
        tb_rset_free(&s);
    }
    tb_rset s = {0};
    char err[512];
    assert_int_equal(tb_rset_load(&s, "/nonexistent/r.json", TB_ROLE_MAIN,
                                  err, sizeof err),
                     TB_EIO);
    assert_non_null(strstr(err, "/nonexistent/r.json"));
}

/* The id's parts come from the record's fields, whatever the id (compare
 * accepts any unique id). */
static void test_plain_id(void **state)
{
    (void)state;
    tb_rset s = {0};
    char err[512];
    const char *p =
        tmp_file(DOC(CASE("plain", "[[10],[10]]", "cpu", "{}", "ok", 5)));
    assert_int_equal(tb_rset_load(&s, p, TB_ROLE_MAIN, err, sizeof err), 0);
    unlink(p);
    assert_string_equal(s.cases[0].key, "add/10,10/f32");
    assert_string_equal(s.cases[0].opp, "add");
    assert_string_equal(s.cases[0].variant, "cpu");
    tb_rset_free(&s);
}

/* crashed and timeout load as statuses that did not run, and the report
 * lists them with their meaning. */
static void test_crashed_timeout(void **state)
{
    (void)state;
    tb_rset s = {0};
    char err[512];
    const char *p = tmp_file(DOC(
        CASE("add/10,10/f32/cpu[threads=1]", "[[10],[10]]", "cpu",
             "{\"threads\":\"1\"}",
             "ok", 100) ","
        NOT_RUN("add/10,10/f32/cpu[threads=2]", "[[10],[10]]",
                "{\"threads\":\"2\"}", "crashed",
                "signal 11 (SIGSEGV) during sampling") ","
        NOT_RUN("add/20,20/f32/cpu[threads=2]", "[[20],[20]]",
                "{\"threads\":\"2\"}", "timeout",
                "killed after the case's time limit of 30 s")));
    assert_int_equal(tb_rset_load(&s, p, TB_ROLE_MAIN, err, sizeof err), 0);
    unlink(p);
    assert_int_equal(s.n, 3);
    assert_false(s.cases[1].ok);
    assert_string_equal(s.cases[1].status, "crashed");
    assert_string_equal(s.cases[2].status, "timeout");
    tb_report_opts o = {"tbench report x", NULL, "perf", NULL, NULL, 3, 8};
    char *md = NULL;
    assert_int_equal(tb_report_markdown(&s, &o, &md), 0);
    assert_non_null(strstr(md, "## Cases that did not run"));
    assert_non_null(strstr(md, "`crashed`: the worker process running the "
                               "case died"));
    assert_non_null(strstr(md, "`timeout`: the case passed its time limit"));
    assert_non_null(strstr(md, "| cpu[threads=2] | crashed | 1 | "
                               "`add/10,10/f32/cpu[threads=2]` | signal 11 "
                               "(SIGSEGV) during sampling |"));
    assert_non_null(strstr(md, "| cpu[threads=2] | timeout | 1 |"));
    free(md);
    tb_rset_free(&s);
}

/* A case of backend with the axes of bp_json ({"name": "value"}), as
 * the loader types it; r, ax and text hold what it points to. */
static tb_rcase rc_of(const char *backend, const char *bp_json,
                      tb_rescase *r, tb_res_axis *ax, char (*text)[2][32])
{
    tb_rcase c;
    memset(&c, 0, sizeof c);
    memset(r, 0, sizeof *r);
    c.backend = r->backend = backend;
    cJSON *j = cJSON_Parse(bp_json);
    const cJSON *v;
    cJSON_ArrayForEach(v, j)
    {
        snprintf(text[r->n_axes][0], 32, "%s", v->string);
        snprintf(text[r->n_axes][1], 32, "%s", v->valuestring);
        ax[r->n_axes] = (tb_res_axis){text[r->n_axes][0],
                                      text[r->n_axes][1]};
        r->n_axes++;
    }
    cJSON_Delete(j);
    r->axes = ax;
    c.rc = r;
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
        tb_rescase r;
        tb_res_axis ax[4];
        char text[4][2][32];
        tb_rcase c = rc_of(t[i].backend, t[i].bp, &r, ax, text);
        assert_int_equal(tb_rcase_ref_score(&c), t[i].score);
    }
}

/* The cells of the Markdown table row that starts with "| `id` |", or
 * NULL; the last cell without its ** emphasis goes to verdict. */
static bool row_verdict(const char *md, const char *id, char *verdict,
                        size_t len)
{
    char head[600];
    snprintf(head, sizeof head, "\n| `%s` |", id);
    const char *r = strstr(md, head);
    if (!r)
        return false;
    const char *end = strchr(r + 1, '\n');
    const char *bar = end - 1; /* the closing '|' */
    const char *start = bar - 1;
    while (*start != '|')
        start--;
    start++;
    while (*start == ' ' || *start == '*')
        start++;
    const char *stop = bar;
    while (stop[-1] == ' ' || stop[-1] == '*')
        stop--;
    snprintf(verdict, len, "%.*s", (int)(stop - start), start);
    return true;
}

/* The report's baseline section and `tbench compare BASELINE MAIN` judge
 * every case of the fixture pair alike: the same comparison code with
 * compare's default options, checked here against an independent
 * tb_compare of files loaded separately. */
static void test_baseline_agrees_with_compare(void **state)
{
    (void)state;
    const char *cur = "tests/data/report/mixed.json";
    const char *base = "tests/data/report/baseline.json";
    tb_rset s = {0};
    char err[512];
    assert_int_equal(tb_rset_load(&s, cur, TB_ROLE_MAIN, err, sizeof err),
                     0);
    assert_int_equal(tb_rset_load(&s, base, TB_ROLE_BASELINE, err,
                                  sizeof err), 0);
    tb_cmp rep;
    assert_int_equal(tb_rset_compare(&s, 0.02, &rep, err, sizeof err), 0);
    tb_report_opts o = {"tbench report x", NULL, "perf", NULL, &rep, 3, 8};
    char *md = NULL;
    assert_int_equal(tb_report_markdown(&s, &o, &md), 0);

    tb_resfile *old = NULL, *nw = NULL;
    assert_int_equal(tb_resfile_load(base, &old, err, sizeof err), 0);
    assert_int_equal(tb_resfile_load(cur, &nw, err, sizeof err), 0);
    tb_cmp_opts co;
    tb_cmp_opts_default(&co);
    tb_cmp cmp;
    assert_int_equal(tb_compare(&old, 1, &nw, 1, &co, &cmp, err, sizeof err),
                     0);
    assert_int_equal(rep.n, cmp.n);
    int seen[3] = {0};
    for (int i = 0; i < cmp.n; i++) {
        const tb_cmp_case *k = &cmp.cases[i];
        assert_string_equal(rep.cases[i].id, k->id);
        assert_string_equal(tb_cmp_case_verdict(&rep.cases[i]),
                            tb_cmp_case_verdict(k));
        char v[64];
        bool row = row_verdict(md, k->id, v, sizeof v);
        if (k->presence != TB_CMP_BOTH ||
            (k->time == TB_TIME_NA && k->schg == TB_SCHG_SAME)) {
            assert_false(row); /* one side only, or ran in neither */
            continue;
        }
        if (!row)
            fail_msg("no baseline row for %s", k->id);
        if (strcmp(v, tb_cmp_case_verdict(k)))
            fail_msg("%s: report says '%s', compare '%s'", k->id, v,
                     tb_cmp_case_verdict(k));
        if (k->time == TB_TIME_UNCHANGED || k->time == TB_TIME_INCONCLUSIVE)
            seen[0]++;
        else if (k->time == TB_TIME_REGRESSED)
            seen[1]++;
        else if (k->time == TB_TIME_IMPROVED)
            seen[2]++;
    }
    /* the pair has every time verdict, so the test can tell them apart */
    assert_true(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
    char line[128];
    snprintf(line, sizeof line, "%d regressed, %d improved, %d unchanged, "
             "%d inconclusive, %d missing;", cmp.n_regressed,
             cmp.n_improved, cmp.n_unchanged, cmp.n_inconclusive,
             cmp.n_missing);
    assert_non_null(strstr(md, line));
    tb_cmp_free(&cmp);
    tb_resfile_free(old);
    tb_resfile_free(nw);
    free(md);
    tb_cmp_free(&rep);
    tb_rset_free(&s);
}

/* A pair with no case id in common is refused with compare's message. */
static void test_baseline_mismatch(void **state)
{
    (void)state;
    tb_rset s = {0};
    char err[512];
    const char *p =
        tmp_file(DOC(CASE("a/1/f32/cpu", "[[1]]", "cpu", "{}", "ok", 5)));
    char p1[64];
    snprintf(p1, sizeof p1, "%s", p);
    const char *q =
        tmp_file(DOC(CASE("b/1/f32/cpu", "[[1]]", "cpu", "{}", "ok", 5)));
    assert_int_equal(tb_rset_load(&s, p1, TB_ROLE_MAIN, err, sizeof err), 0);
    assert_int_equal(tb_rset_load(&s, q, TB_ROLE_BASELINE, err, sizeof err),
                     0);
    tb_cmp c;
    assert_int_equal(tb_rset_compare(&s, 0.02, &c, err, sizeof err),
                     TB_EINVAL);
    char want[256];
    snprintf(want, sizeof want, "%s: no case id in common with %s (a "
             "different matrix?)", q, p1);
    assert_string_equal(err, want);
    unlink(p1);
    unlink(q);
    tb_rset_free(&s);
}

/* The report of a single ok case has no speedup, baseline, anomaly or
 * side-by-side section, and every table has rows. */
static void test_markdown_single(void **state)
{
    (void)state;
    tb_rset s = {0};
    char err[512];
    const char *p = tmp_file(DOC(
        CASE("add/10,10/f32/cpu[threads=1]", "[[10],[10]]", "cpu",
             "{\"threads\":\"1\"}",
             "ok", 100)));
    assert_int_equal(tb_rset_load(&s, p, TB_ROLE_MAIN, err, sizeof err), 0);
    unlink(p);
    tb_report_opts o = {"tbench report x", NULL, "perf", NULL, NULL, 3, 8};
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

/* Cases with and without transfers (issue 11 item 5): the crossover
 * section gets a table pairing each @transfers case with its resident
 * twin, both against the reference, and a guideline line per variant;
 * a run without transfers cases has no such table. */
static void test_transfers_split(void **state)
{
    (void)state;
    tb_rset s = {0};
    char err[512];
    const char *p = tmp_file(DOC(
        CASE("add/10/f32/cpu[isa=scalar,threads=1]", "[[10]]", "cpu",
             "{\"isa\":\"scalar\",\"threads\":\"1\"}", "ok", 1000) ","
        CASE("add/10/f32/cuda[device=0,pool=false]", "[[10]]", "cuda",
             "{\"device\":\"0\",\"pool\":\"false\"}", "ok", 100) ","
        CASE("add/10/f32/cuda[device=0,pool=false]@transfers", "[[10]]",
             "cuda", TRANSFERS("{\"device\":\"0\",\"pool\":\"false\"}"),
             "ok", 400)));
    assert_int_equal(tb_rset_load(&s, p, TB_ROLE_MAIN, err, sizeof err), 0);
    unlink(p);
    tb_report_opts o = {"tbench report x", NULL, "perf", NULL, NULL, 3, 8};
    char *md = NULL;
    assert_int_equal(tb_report_markdown(&s, &o, &md), 0);
    const char *sec = strstr(md, "### With and without transfers");
    assert_non_null(sec);
    /* resident 100 ns (10x the 1000 ns reference), with transfers 400 ns
     * (2.50x), the transfers 300 of the 400 ns */
    assert_non_null(strstr(sec, "| add | 10 | f32 | cuda[device=0,pool=false]"
                                " | 100 ns | 10x | 400 ns | 2.50x | 75% |"));
    /* the guidelines: one line with the data resident, where cuda is
     * fastest ahead of the scalar cpu (its @transfers twin is not a
     * competitor there), and one with the data starting on the host,
     * where the @transfers case is the cuda contender */
    assert_non_null(strstr(md, "- add f32: at 10: "));
    assert_null(strstr(strstr(md, "- add f32: at 10: "), "@transfers ("));
    assert_non_null(strstr(md, "- add f32, data starting on the host: at "
                               "10: "));
    free(md);
    tb_rset_free(&s);
    /* without the resident twin: no table */
    tb_rset s2 = {0};
    p = tmp_file(DOC(
        CASE("add/10/f32/cpu[isa=scalar,threads=1]", "[[10]]", "cpu",
             "{\"isa\":\"scalar\",\"threads\":\"1\"}", "ok", 1000) ","
        CASE("add/10/f32/cuda[device=0,pool=true]@transfers", "[[10]]",
             "cuda", TRANSFERS("{\"device\":\"0\",\"pool\":\"true\"}"),
             "ok", 400)));
    assert_int_equal(tb_rset_load(&s2, p, TB_ROLE_MAIN, err, sizeof err), 0);
    unlink(p);
    assert_int_equal(tb_report_markdown(&s2, &o, &md), 0);
    assert_null(strstr(md, "### With and without transfers"));
    free(md);
    tb_rset_free(&s2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_ok),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_record_again),
        cmocka_unit_test(test_plain_id),
        cmocka_unit_test(test_crashed_timeout),
        cmocka_unit_test(test_reference_rule),
        cmocka_unit_test(test_baseline_agrees_with_compare),
        cmocka_unit_test(test_baseline_mismatch),
        cmocka_unit_test(test_markdown_single),
        cmocka_unit_test(test_transfers_split),
        cmocka_unit_test(test_fmt_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
