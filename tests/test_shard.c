/* Tests for src/harness/shard.c: parsing --shard I/N, the cost model,
 * the LPT assignment and the plan digest.
 *
 * Oracles: the heap-based assignment is checked against a plain
 * re-implementation of the documented rule (sort by cost, scan every
 * shard for the least load) on random plans; the balance against
 * Graham's bound for LPT, makespan <= (4/3 - 1/(3m)) * OPT with
 * OPT >= max(total / m, largest cost); costs against the formula of
 * shard.c evaluated by hand for given numbers; the digest against FNV-1a
 * 64 of "a\nb\n" computed with Python:
 *   h = 0xcbf29ce484222325
 *   for b in b"a\nb\n": h = ((h ^ b) * 0x100000001b3) % 2**64
 *   print(f"{h:016x}")   # 78ed6781f136a14e (see test_digest) */
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
#include "base/rng.h"
#include "harness/shard.h"

static void test_parse(void **state)
{
    (void)state;
    tb_shard s;
    char err[256];
    assert_int_equal(tb_shard_parse("1/1", &s, err, sizeof err), 0);
    assert_int_equal(s.index, 1);
    assert_int_equal(s.count, 1);
    assert_int_equal(tb_shard_parse("7/12", &s, err, sizeof err), 0);
    assert_int_equal(s.index, 7);
    assert_int_equal(s.count, 12);
    assert_int_equal(tb_shard_parse("100000/100000", &s, err, sizeof err),
                     0);
    static const char *const bad[] = {
        "", "/", "1", "1/", "/2", "0/2", "3/2", "1/0", "-1/2", "+1/2",
        " 1/2", "1/2 ", "1/2/3", "a/2", "1/b", "1.0/2", "100001/100001",
        "1/99999999999999999999", "1//2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (tb_shard_parse(bad[i], &s, err, sizeof err) != TB_EINVAL)
            fail_msg("'%s' accepted", bad[i]);
        assert_true(err[0] != '\0');
    }
}

static tb_case mk(double flops, double bytes)
{
    tb_case c;
    memset(&c, 0, sizeof c);
    c.id = "";
    c.flops = flops;
    c.bytes = bytes;
    c.warmup.min_time_s = 0.02;
    c.warmup.min_iters = 2;
    c.measure.min_samples = 10;
    c.measure.max_time_s = 0.5;
    c.measure.rounds = 3;
    return c;
}

static void test_cost(void **state)
{
    (void)state;
    /* small: 0.005 + (1e6/1e9 + 1e6/1e9) + 3 * 0.02 + 0.5 */
    tb_case c = mk(1e6, 1e6);
    assert_true(fabs(tb_shard_cost(&c) - (0.005 + 0.002 + 0.06 + 0.5)) <
                1e-12);
    /* a matmul of 1e12 FLOPs, 1e8 bytes: one call = 100.01 s; check =
     * 2.5e8/1e9 + 1e8/1e9 = 0.35; warm-up 2 calls per round; sampling
     * 10 calls (past max_time_s) */
    c = mk(1e12, 1e8);
    double call = 1e12 / 1e10 + 1e8 / 1e10;
    double want = 0.005 + 0.35 + 3 * 2 * call + 10 * call;
    assert_true(fabs(tb_shard_cost(&c) - want) < 1e-9 * want);
    /* grows with the models; positive and finite for junk */
    tb_case a = mk(1e9, 1e9), b = mk(2e9, 1e9);
    assert_true(tb_shard_cost(&b) > tb_shard_cost(&a));
    c = mk(NAN, -1);
    assert_true(isfinite(tb_shard_cost(&c)) && tb_shard_cost(&c) > 0);
    c = mk(INFINITY, 0);
    assert_true(isfinite(tb_shard_cost(&c)) && tb_shard_cost(&c) > 0);
}

/* The rule of shard.h written the obvious way: O(n * count). */
static void naive_assign(const tb_plan *p, int count, int *of)
{
    int n = p->n;
    int *order = malloc((size_t)n * sizeof *order);
    double *cost = malloc((size_t)n * sizeof *cost);
    double *load = calloc((size_t)count, sizeof *load);
    assert_non_null(order);
    assert_non_null(cost);
    assert_non_null(load);
    for (int i = 0; i < n; i++) {
        order[i] = i;
        cost[i] = tb_shard_cost(&p->cases[i]);
    }
    for (int i = 1; i < n; i++) /* insertion sort: cost down, index up */
        for (int j = i; j > 0; j--) {
            int a = order[j - 1], b = order[j];
            if (cost[b] > cost[a] || (cost[b] == cost[a] && b < a)) {
                order[j - 1] = b;
                order[j] = a;
            } else {
                break;
            }
        }
    for (int k = 0; k < n; k++) {
        int best = 0;
        for (int s = 1; s < count; s++)
            if (load[s] < load[best])
                best = s;
        of[order[k]] = best + 1;
        load[best] += cost[order[k]];
    }
    free(order);
    free(cost);
    free(load);
}

static void random_plan(tb_plan *p, int n, uint64_t *rng)
{
    p->n = n;
    p->arena = NULL;
    p->cases = calloc((size_t)(n ? n : 1), sizeof *p->cases);
    assert_non_null(p->cases);
    for (int i = 0; i < n; i++) {
        uint64_t r = tb_splitmix64_next(rng);
        /* sizes over 8 decades, and many exact ties (r % 4 == 0) */
        double e = (double)(r % 9);
        double f = r % 4 == 0 ? 1e6 : pow(10.0, e) * (double)(1 + (r >> 8) % 7);
        p->cases[i] = mk(f, f / 4);
        if (r % 5 == 0)
            p->cases[i].measure.max_time_s = 2.0;
    }
}

static void test_assign_matches_rule(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed;
    static const int ns[] = {1, 2, 7, 81, 513};
    static const int counts[] = {1, 2, 3, 4, 7, 64};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof counts / sizeof counts[0]; b++) {
            tb_plan p;
            random_plan(&p, ns[a], &rng);
            int count = counts[b];
            int *got = malloc((size_t)p.n * sizeof *got);
            int *want = malloc((size_t)p.n * sizeof *want);
            assert_non_null(got);
            assert_non_null(want);
            assert_int_equal(tb_shard_assign(&p, count, got), 0);
            naive_assign(&p, count, want);
            double *load = calloc((size_t)count, sizeof *load);
            assert_non_null(load);
            double total = 0, big = 0;
            for (int i = 0; i < p.n; i++) {
                if (got[i] != want[i])
                    fail_msg("n %d count %d case %d: shard %d, rule says %d",
                             p.n, count, i, got[i], want[i]);
                assert_true(got[i] >= 1 && got[i] <= count);
                double c = tb_shard_cost(&p.cases[i]);
                load[got[i] - 1] += c;
                total += c;
                big = c > big ? c : big;
            }
            double opt = fmax(total / count, big), mk_span = 0;
            for (int s = 0; s < count; s++)
                mk_span = fmax(mk_span, load[s]);
            double bound = (4.0 / 3 - 1.0 / (3.0 * count)) * opt;
            if (mk_span > bound * (1 + 1e-12))
                fail_msg("n %d count %d: makespan %g above Graham's bound %g",
                         p.n, count, mk_span, bound);
            free(load);
            free(got);
            free(want);
            free(p.cases);
        }
}

static void test_select(void **state)
{
    (void)state;
    uint64_t rng = 42;
    tb_plan whole;
    random_plan(&whole, 50, &rng);
    static char ids[50][16];
    for (int i = 0; i < whole.n; i++) {
        snprintf(ids[i], sizeof ids[i], "case%d", i);
        whole.cases[i].id = ids[i];
    }
    int *of = malloc((size_t)whole.n * sizeof *of);
    assert_non_null(of);
    assert_int_equal(tb_shard_assign(&whole, 4, of), 0);
    int seen = 0;
    for (int s = 1; s <= 4; s++) {
        tb_plan p = {.n = whole.n,
                     .cases = malloc((size_t)whole.n * sizeof(tb_case))};
        assert_non_null(p.cases);
        memcpy(p.cases, whole.cases, (size_t)whole.n * sizeof(tb_case));
        cJSON *info;
        tb_shard sh = {s, 4};
        assert_int_equal(tb_shard_select(&p, &sh, &info), 0);
        assert_non_null(info);
        int prev = -1;
        for (int k = 0; k < p.n; k++) {
            int pi = p.cases[k].plan_index;
            assert_true(pi > prev); /* plan order */
            prev = pi;
            assert_int_equal(of[pi], s);
            assert_string_equal(p.cases[k].id, whole.cases[pi].id);
        }
        seen += p.n;
        assert_int_equal(cJSON_GetObjectItem(info, "cases")->valueint, p.n);
        assert_int_equal(cJSON_GetObjectItem(info, "plan_cases")->valueint,
                         50);
        assert_int_equal(cJSON_GetObjectItem(info, "index")->valueint, s);
        assert_string_equal(cJSON_GetObjectItem(info, "rule")->valuestring,
                            "lpt");
        cJSON_Delete(info);
        free(p.cases);
    }
    assert_int_equal(seen, 50);
    free(of);
    free(whole.cases);
}

static void test_digest(void **state)
{
    (void)state;
    tb_case c[2];
    memset(c, 0, sizeof c);
    c[0].id = "a";
    c[1].id = "b";
    tb_plan p = {.n = 2, .cases = c};
    char d[32];
    tb_plan_digest(&p, d, sizeof d);
    assert_string_equal(d, "78ed6781f136a14e");
    c[1].id = "c";
    char e[32];
    tb_plan_digest(&p, e, sizeof e);
    assert_string_not_equal(d, e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_cost),
        cmocka_unit_test(test_assign_matches_rule),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_digest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
