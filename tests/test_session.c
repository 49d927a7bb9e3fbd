/* The session engine (src/harness/session.h) driven without the command
 * line: a tiny plan built from config text, run in process and in
 * isolated workers, with a sink that keeps every document it is handed.
 * Checked: the records and the run's outcome, the rounds and the pacing
 * of the writes, the "interrupted" marks of a record written before its
 * case's last round, a stop request in the middle of the plan (finished
 * cases kept, the signal reported, the file not complete), a worker that
 * crashes (the case is recorded, the run goes on and is failed), and a
 * sink whose write fails (the session ends with its message).  Every
 * document handed to the sink is streamed from the spool and the records
 * in flight (results.h): its text must be that of cJSON_Print of the
 * whole document, byte for byte (and its CSV tb_results_csv's), and a
 * settled case's record must be in the spool, not in memory.
 * `--filter GLOB` runs only the matching tests. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "harness/config.h"
#include "harness/peak.h"
#include "harness/plan.h"
#include "harness/results.h"
#include "harness/session.h"

/* Three tiny cases (add at 1, 7 and 513 elements) of `rounds` rounds,
 * each a few milliseconds. */
static void plan_of(int rounds, tb_config *cfg, tb_plan *plan)
{
    char text[1024], err[512] = "";
    snprintf(text, sizeof text,
             "{\"name\": \"session\", \"seed\": 3,"
             " \"warmup\": {\"min_time_ms\": 1, \"min_iters\": 2},"
             " \"measure\": {\"sample_time_ms\": 0.2, \"min_samples\": 5,"
             " \"max_samples\": 40, \"max_time_s\": 0.02, \"rounds\": %d},"
             " \"backends\": [{\"name\": \"cpu\", \"threads\": 1}],"
             " \"ops\": [{\"op\": \"add\", \"shapes\": [[1], [7], [513]]}]}",
             rounds);
    assert_int_equal(tb_config_parse(text, strlen(text), "session.json",
                                     cfg, err, sizeof err), 0);
    assert_int_equal(tb_plan_build(cfg, 1, NULL, plan, err, sizeof err),
                     0);
    assert_int_equal(plan->n, 3);
}

/* A sink that keeps the documents it is handed and counts the rest. */
typedef struct capture {
    int writes;
    cJSON *last;           /* a copy of the last document written */
    int cases, counts, ends; /* progress reports of each kind */
    int env_warnings;
    volatile sig_atomic_t *stop; /* set to SIGINT ... */
    int stop_after;        /* ... when this many case-rounds are done */
    int fail_write;        /* the write that fails (1 = first), or 0 */
    /* for each write: how many records said "interrupted" */
    int interrupted[64];
    int max_flight; /* the most records in flight at a write */
} capture;

/* The document's text as written, checked against cJSON_Print of the
 * whole document parsed back from it (what the writer printed before
 * the spool): the same bytes, and the same CSV.  The parsed document
 * (caller deletes). */
static cJSON *doc_checked(const tb_results_doc *d)
{
    char *json, *csv, *csv2;
    assert_int_equal(tb_results_doc_text(d, &json, &csv), 0);
    cJSON *doc = cJSON_Parse(json);
    assert_non_null(doc);
    char *again = cJSON_Print(doc);
    assert_non_null(again);
    assert_string_equal(json, again);
    assert_int_equal(tb_results_csv(doc, &csv2), 0);
    assert_string_equal(csv, csv2);
    free(json);
    free(csv);
    free(csv2);
    free(again);
    return doc;
}

static int cap_write(void *ctx, const tb_results_doc *d, char *err,
                     size_t errlen)
{
    capture *c = ctx;
    c->writes++;
    if (c->writes == c->fail_write) {
        snprintf(err, errlen, "disk full (a test)");
        return TB_EIO;
    }
    int fl = cJSON_GetArraySize(d->flight);
    if (fl > c->max_flight)
        c->max_flight = fl;
    cJSON_Delete(c->last);
    c->last = doc_checked(d);
    const cJSON *doc = c->last;
    int n = 0;
    const cJSON *rec;
    cJSON_ArrayForEach(rec, cJSON_GetObjectItem(doc, "cases")) {
        const cJSON *st = cJSON_GetObjectItem(rec, "stats");
        const cJSON *why = cJSON_GetObjectItem(st, "stop_reason");
        n += cJSON_IsString(why) && !strcmp(why->valuestring, "interrupted");
    }
    if (c->writes <= 64)
        c->interrupted[c->writes - 1] = n;
    return 0;
}

static void cap_progress(void *ctx, const tb_session_progress *p)
{
    capture *c = ctx;
    if (p->step == TB_SESSION_CASE) {
        assert_true(p->index >= 0 && p->index < p->n);
        assert_non_null(p->id);
        assert_int_equal(p->done, c->cases);
        if (c->stop && c->stop_after && p->done == c->stop_after)
            *c->stop = SIGINT;
        c->cases++;
    } else if (p->step == TB_SESSION_COUNT) {
        c->counts++;
    } else {
        c->ends++;
    }
}

static void cap_warning(void *ctx, const char *id, const char *text)
{
    capture *c = ctx;
    assert_non_null(text);
    if (!id)
        c->env_warnings++;
}

static void run_session(const tb_plan *plan, const tb_config *cfg,
                        bool isolate, capture *c, tb_session *s, int *rc,
                        char *err, size_t errlen)
{
    tb_session_sink sink = {.ctx = c, .write = cap_write,
                            .progress = cap_progress,
                            .warning = cap_warning};
    tb_session_opts o = {.isolate = isolate, .quiet = true,
                         .stop = c->stop};
    *rc = tb_session_run(plan, cfg, 1, &o, &sink, s, err, errlen);
}

static const char *rec_str(const cJSON *rec, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(rec, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* A record's stats.stop_reason. */
static const char *stop_reason(const cJSON *rec)
{
    return rec_str(cJSON_GetObjectItem(rec, "stats"), "stop_reason");
}

/* Every case ran, each record is ok and final, the file is complete. */
static void assert_all_ok(const tb_plan *plan, const tb_session *s,
                          const capture *c)
{
    assert_int_equal(s->n, plan->n);
    assert_int_equal(s->started, plan->n);
    assert_false(s->failed);
    assert_int_equal(s->signal, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c->last, "complete")));
    const cJSON *cases = cJSON_GetObjectItem(c->last, "cases");
    assert_int_equal(cJSON_GetArraySize(cases), plan->n);
    int i = 0;
    const cJSON *rec;
    cJSON_ArrayForEach(rec, cases) {
        assert_string_equal(rec_str(rec, "id"), plan->cases[i].id);
        assert_string_equal(rec_str(rec, "status"), "ok");
        assert_string_not_equal(stop_reason(rec), "interrupted");
        assert_int_equal(s->sum[i].status, TB_STATUS_OK);
        assert_int_equal(s->sum[i].rounds, plan->cases[i].measure.rounds);
        i++;
    }
    assert_int_equal(c->counts, 0); /* no case asks for instructions */
    assert_int_equal(c->ends, 1);
}

static void test_in_process_one_round(void **state)
{
    (void)state;
    tb_config cfg;
    tb_plan plan;
    plan_of(1, &cfg, &plan);
    capture c = {0};
    tb_session s;
    int rc;
    char err[512] = "";
    run_session(&plan, &cfg, false, &c, &s, &rc, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_all_ok(&plan, &s, &c);
    assert_int_equal(c.cases, 3);
    /* written after each case of the (first and last) round, as paced,
     * and once more at the end */
    assert_true(c.writes >= 2 && c.writes <= 4);
    assert_string_equal(rec_str(c.last, "isolation"), "none");
    /* one round: each record is spooled as its case ends, none kept */
    assert_int_equal(c.max_flight, 0);
    cJSON_Delete(c.last);
    tb_session_free(&s);
    tb_session_free(&s); /* emptied: a second free is harmless */
    tb_plan_free(&plan);
    tb_config_free(&cfg);
}

/* Three rounds in forked workers: every case gets every round; a record
 * written before its case's last round says "interrupted", the last
 * write none. */
static void test_isolated_rounds(void **state)
{
    (void)state;
    tb_config cfg;
    tb_plan plan;
    plan_of(3, &cfg, &plan);
    capture c = {0};
    tb_session s;
    int rc;
    char err[512] = "";
    run_session(&plan, &cfg, true, &c, &s, &rc, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_all_ok(&plan, &s, &c);
    assert_int_equal(c.cases, 9);
    assert_string_equal(rec_str(c.last, "isolation"), "process");
    assert_true(c.writes >= 2);
    assert_true(c.interrupted[0] > 0); /* after round 0's first case */
    assert_int_equal(c.interrupted[c.writes - 1], 0);
    /* records wait in flight until their case's last round */
    assert_true(c.max_flight > 0 && c.max_flight <= 3);
    cJSON_Delete(c.last);
    tb_session_free(&s);
    tb_plan_free(&plan);
    tb_config_free(&cfg);
}

/* A stop request as the third case of round 0 starts (as a signal
 * arriving then would): that case ends early (its worker is told to
 * stop), no round 1 starts, every case is written as cut short
 * ("interrupted": one round of two), the file is not complete and the
 * session reports the signal. */
static void test_stop_keeps_finished_cases(void **state)
{
    (void)state;
    tb_config cfg;
    tb_plan plan;
    plan_of(2, &cfg, &plan);
    volatile sig_atomic_t stop = 0;
    capture c = {.stop = &stop, .stop_after = 2};
    tb_session s;
    int rc;
    char err[512] = "";
    run_session(&plan, &cfg, true, &c, &s, &rc, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_int_equal(s.signal, SIGINT);
    assert_int_equal(s.started, 3);
    assert_int_equal(c.cases, 3); /* round 1 never started */
    const cJSON *cases = cJSON_GetObjectItem(c.last, "cases");
    assert_int_equal(cJSON_GetArraySize(cases), 3);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(c.last, "complete")));
    const cJSON *rec;
    cJSON_ArrayForEach(rec, cases) {
        assert_string_equal(rec_str(rec, "status"), "ok");
        assert_string_equal(stop_reason(rec), "interrupted");
    }
    cJSON_Delete(c.last);
    tb_session_free(&s);
    tb_plan_free(&plan);
    tb_config_free(&cfg);
}

/* A kernel that crashes in its worker: the case is "crashed", the
 * others run, the session is failed but goes through. */
static void test_crash_is_recorded(void **state)
{
    (void)state;
    setenv("TBENCH_FAULT", "segv:sampling:add/7,7/*", 1);
    tb_config cfg;
    tb_plan plan;
    plan_of(1, &cfg, &plan);
    capture c = {0};
    tb_session s;
    int rc;
    char err[512] = "";
    run_session(&plan, &cfg, true, &c, &s, &rc, err, sizeof err);
    unsetenv("TBENCH_FAULT");
    assert_int_equal(rc, 0);
    assert_true(s.failed);
    assert_int_equal(s.started, 3);
    assert_int_equal(s.sum[0].status, TB_STATUS_OK);
    assert_int_equal(s.sum[1].status, TB_STATUS_CRASHED);
    assert_int_equal(s.sum[2].status, TB_STATUS_OK);
    const cJSON *rec = cJSON_GetArrayItem(cJSON_GetObjectItem(c.last,
                                                              "cases"), 1);
    assert_string_equal(rec_str(rec, "status"), "crashed");
    cJSON_Delete(c.last);
    tb_session_free(&s);
    tb_plan_free(&plan);
    tb_config_free(&cfg);
}

/* The sink's first write fails: the session ends there with its
 * message, after clearing the progress line. */
static void test_write_failure_ends_the_session(void **state)
{
    (void)state;
    tb_config cfg;
    tb_plan plan;
    plan_of(1, &cfg, &plan);
    capture c = {.fail_write = 1};
    tb_session s;
    int rc;
    char err[512] = "";
    run_session(&plan, &cfg, false, &c, &s, &rc, err, sizeof err);
    assert_int_equal(rc, TB_EIO);
    assert_string_equal(err, "writing results: disk full (a test)");
    assert_int_equal(c.writes, 1);
    assert_int_equal(c.cases, 1);
    assert_int_equal(c.ends, 1);
    assert_int_equal(s.started, 1);
    tb_session_free(&s);
    tb_plan_free(&plan);
    tb_config_free(&cfg);
}

int main(int argc, char **argv)
{
    /* the run's peaks: none cached here (and the user's cache untouched) */
    setenv(TB_PEAK_CACHE_ENV, "/nonexistent/tbench-test-session.json", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_process_one_round),
        cmocka_unit_test(test_isolated_rounds),
        cmocka_unit_test(test_stop_keeps_finished_cases),
        cmocka_unit_test(test_crash_is_recorded),
        cmocka_unit_test(test_write_failure_ends_the_session),
    };
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--filter") == 0)
            cmocka_set_test_filter(argv[i + 1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
