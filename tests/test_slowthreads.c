/* The note under `tbench run`'s table (src/report/slowthreads.c): a
 * threads=N case that `tbench compare` calls regressed against the same
 * case at threads=1, with the context switches per call of both.
 * Result documents built here with known samples: which cases get a
 * line, and its text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/slowthreads.h"

/* One case record of op on backend (axes: its backend_params, e.g.
 * {"isa": "auto", "threads": "2"}): samples base * (1 + k/100) for
 * k = 0..19 (so two cases whose bases differ by 2x are told apart with
 * p ~ 1e-8), and the switch counters given.  The id is spelled from
 * the fields, as tbench spells it. */
static void add_case(cJSON *cases, const char *op, const char *backend,
                     const char *axes, double base, double vol, double invol)
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
    cJSON_AddStringToObject(c, "status", "ok");
    cJSON *st = cJSON_AddObjectToObject(c, "stats");
    cJSON *s = cJSON_AddArrayToObject(st, "samples_ns");
    for (int k = 0; k < 20; k++)
        cJSON_AddItemToArray(s, cJSON_CreateNumber(base * (1 + k / 100.0)));
    double med = base * (1 + 9.5 / 100.0);
    cJSON_AddNumberToObject(st, "n", 20);
    cJSON_AddNumberToObject(st, "iters_per_sample", 1);
    cJSON_AddNumberToObject(st, "median_ns", med);
    cJSON_AddNumberToObject(st, "ci_low_ns", med);
    cJSON_AddNumberToObject(st, "ci_high_ns", med);
    cJSON_AddNumberToObject(st, "min_ns", base);
    cJSON_AddNumberToObject(st, "mean_ns", med);
    cJSON *ct = cJSON_AddObjectToObject(c, "counters");
    cJSON_AddNumberToObject(ct, "vol_ctx_switches", vol);
    cJSON_AddNumberToObject(ct, "invol_ctx_switches", invol);
    cJSON_AddItemToArray(cases, c);
}

/* The note's text for doc, and its line count in *n. */
static char *note_of(const cJSON *doc, int *n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    *n = tb_note_slow_threads(f, doc);
    fclose(f);
    return buf;
}

#define T1 "{\"isa\": \"auto\", \"threads\": \"1\"}"
#define T2 "{\"isa\": \"auto\", \"threads\": \"2\"}"

static void test_slow_threads_note(void **state)
{
    (void)state;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "tbench.results/1");
    cJSON *cases = cJSON_AddArrayToObject(doc, "cases");
    /* 2x slower at 2 threads: a line */
    add_case(cases, "add", "cpu", T1, 100, 0, 0.001);
    add_case(cases, "add", "cpu", T2, 200, 1.5, 0.25);
    /* the same samples: none */
    add_case(cases, "sub", "cpu", T1, 100, 0, 0);
    add_case(cases, "sub", "cpu", T2, 100, 0, 0);
    /* faster with 2: none */
    add_case(cases, "mul", "cpu", T1, 100, 0, 0);
    add_case(cases, "mul", "cpu", T2, 60, 0, 0);
    /* no threads=1 case to compare with: none */
    add_case(cases, "div", "cpu", T2, 900, 0, 0);
    /* slower by 1%, under compare's 2% threshold (the floor: the CIs
     * recorded are of zero width): none */
    add_case(cases, "exp", "cpu", T1, 1000, 0, 0);
    add_case(cases, "exp", "cpu", T2, 1010, 0, 0);
    /* a two-digit thread count against threads=1: a line */
    add_case(cases, "log", "blas", "{\"threads\": \"1\"}", 100, 0, 0);
    add_case(cases, "log", "blas", "{\"threads\": \"12\"}", 300, 0.004, 2);
    /* no threads axis at all: none */
    add_case(cases, "neg", "numpy", "{}", 100, 0, 0);
    int n = 0;
    char *text = note_of(doc, &n);
    const char *want =
        "note: add/64/f32/cpu[isa=auto,threads=2] is 2.00x slower than "
        "with threads=1 (context switches per call, voluntary 1.5 vs 0, "
        "involuntary 0.25 vs 0.001)\n"
        "note: log/64/f32/blas[threads=12] is 3.00x slower than with "
        "threads=1 (context switches per call, voluntary 0.004 vs 0, "
        "involuntary 2 vs 0)\n";
    assert_string_equal(text, want);
    assert_int_equal(n, 2);
    free(text);
    cJSON_Delete(doc);

    /* not a result file (no schema; a case without samples): nothing,
     * no crash */
    doc = cJSON_Parse("{\"cases\": [{\"id\": \"a/1/f32/cpu[threads=2]\"}, "
                      "{\"id\": \"a/1/f32/cpu[threads=1]\"}, {}]}");
    assert_non_null(doc);
    text = note_of(doc, &n);
    assert_string_equal(text, "");
    assert_int_equal(n, 0);
    free(text);
    cJSON_Delete(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_threads_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
