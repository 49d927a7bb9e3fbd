/* Reading callgrind's output file (src/harness/instr.h): the Ir total
 * from the "totals:" line (callgrind 3.19 writes "summary: 0" when
 * collection was toggled by client requests), else "summary:"; files
 * without an Ir event or a total are refused.  The texts are shaped as
 * callgrind 3.19 writes them (header, cost lines, totals). */
#include <math.h>

#include "testutil.h"

#include "base/error.h"
#include "harness/config.h"
#include "harness/instr.h"

static void test_callgrind_total(void **state)
{
    (void)state;
    double t = -1;
    const char *toggled =
        "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n"
        "pid: 4024\ncmd:  tbench __instr-count\npart: 1\n\n"
        "desc: Trigger: Program termination\n\npositions: line\n"
        "events: Ir\nsummary: 0\n\n\nob=(1) /usr/bin/tbench\nfl=(1) x.c\n"
        "fn=(1) f\n+1 10\n* 1601350\n\ntotals: 1601549\n";
    assert_int_equal(tb_instr_callgrind_total(toggled, &t), 0);
    assert_true(t == 1601549);
    const char *plain = "events: Ir\nsummary: 123456789012\nfn=(1) f\n"
                        "16 3\n";
    assert_int_equal(tb_instr_callgrind_total(plain, &t), 0);
    assert_true(t == 123456789012.0);
    /* several events: Ir first is fine */
    assert_int_equal(tb_instr_callgrind_total(
                         "events: Ir Dr Dw\ntotals: 77 5 6\n", &t), 0);
    assert_true(t == 77);
    static const char *const bad[] = {
        "",
        "events: Ir\n",                      /* no total */
        "events: Dr Ir\ntotals: 5 6\n",      /* Ir not first */
        "events: Irx\ntotals: 5\n",          /* not Ir */
        "summary: 5\n",                      /* no events line */
        "events: Ir\ntotals: many\n",        /* not a number */
        "events: Ir\ntotals: -3\n",          /* negative */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = -1;
        assert_int_equal(tb_instr_callgrind_total(bad[i], &t), TB_EPARSE);
    }
}

/* --cache-sim=yes output: the totals of named events (a column left out
 * at the end is 0) and the cache geometry of a "desc:" line. */
static void test_callgrind_cache(void **state)
{
    (void)state;
    static const char *const ev[] = {"Ir", "D1mr", "D1mw", "DLmr", "DLmw"};
    double v[5];
    const char *text =
        "# callgrind format\nversion: 1\npart: 1\n"
        "desc: I1 cache: 32768 B, 64 B, 8-way associative\n"
        "desc: D1 cache: 49152 B, 64 B, 12-way associative\n"
        "desc: LL cache: 33554432 B, 64 B, 16-way associative\n"
        "desc: Timerange: Basic block 0 - 26513\npositions: line\n"
        "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 0\n"
        "fn=(1) f\n16 3 1\ntotals: 244239 112614 60205 50 53505 26302 50\n";
    assert_int_equal(tb_instr_callgrind_events(text, ev, 5, v), 0);
    assert_true(v[0] == 244239 && v[1] == 53505 && v[2] == 26302);
    assert_true(v[3] == 0 && v[4] == 0); /* left out: 0 */
    char g[64];
    assert_int_equal(tb_instr_callgrind_geometry(text, "D1", g, sizeof g), 0);
    assert_string_equal(g, "49152 B, 64 B, 12-way");
    assert_int_equal(tb_instr_callgrind_geometry(text, "LL", g, sizeof g), 0);
    assert_string_equal(g, "33554432 B, 64 B, 16-way");
    assert_int_equal(tb_instr_callgrind_geometry(text, "L2", g, sizeof g),
                     TB_EPARSE);
    assert_int_equal(tb_instr_callgrind_geometry(text, "LL", g, 8),
                     TB_EPARSE); /* does not fit */
    static const char *const bad[] = {
        "events: Ir\ntotals: 5\n",                 /* no D1mr... */
        "totals: 5 6 7 8 9\n",                      /* no events line */
        "events: Ir D1mr D1mw DLmr DLmw\n",          /* no totals */
        "events: Ir D1mr D1mw DLmr DLmw\ntotals: 5 x\n",
        "events: Ir D1mr D1mw DLmr DLmw\ntotals: 5 -1\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(tb_instr_callgrind_events(bad[i], ev, 5, v),
                         TB_EPARSE);
    /* the instruction count reads the same file */
    double t;
    assert_int_equal(tb_instr_callgrind_total(text, &t), 0);
    assert_true(t == 244239);
}

static void test_source_names(void **state)
{
    (void)state;
    assert_string_equal(tb_instr_source_name(TB_INSTR_NONE), "none");
    assert_string_equal(tb_instr_source_name(TB_INSTR_PERF), "perf");
    assert_string_equal(tb_instr_source_name(TB_INSTR_CALLGRIND),
                        "callgrind");
    assert_string_equal(tb_instr_source_name(TB_INSTR_AUTO), "auto");
    assert_string_equal(tb_instr_source_name(9), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callgrind_total),
        cmocka_unit_test(test_callgrind_cache),
        cmocka_unit_test(test_source_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
