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
        cmocka_unit_test(test_source_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
