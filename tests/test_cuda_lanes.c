/* Host test of the CUDA module's two-stage lane reductions (max, min,
 * argmax, var: src/backends/cuda/lanes_plan.h with the fold rules of
 * layout.h), compiled as C11: no GPU needed.
 *
 * The plan must cut every lane into non-empty chunks that cover it
 * exactly once, split only when the lanes are too few, and never use
 * more partials than the scratch holds.  Both stages of lanes.cu are
 * then run on the CPU as the kernels run them - stage 1: block threads
 * fold strided elements of a chunk, a tree halves the threads; stage 2:
 * the same over a lane's partials - and the results must equal brute
 * force: NumPy's max/min (NaN propagates), the index of the first NaN or
 * else of the first maximum, and the corrected variance from a two-pass
 * sum in long double (within 1e-12 relative).  Lengths 1, 7, 513, 4097
 * and 300001; ties, NaNs early and late, infinities; blocks of 256 and
 * of 4 threads (deep and shallow trees); any partial budget. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "backends/cuda/lanes_plan.h"
#include "backends/cuda/layout.h"
#include "base/rng.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

enum { OP_MAX, OP_MIN, OP_ARGMAX, OP_VAR };

typedef struct {
    double v, n, mean, m2;
    int64_t iv; /* -1: nothing yet */
} acc;

static void acc_fold(int op, acc *a, const acc *b)
{
    if (op == OP_VAR) {
        tb_var_merge(&a->n, &a->mean, &a->m2, b->n, b->mean, b->m2);
        return;
    }
    if (b->iv < 0)
        return;
    if (a->iv < 0 ||
        (op == OP_ARGMAX && tb_argmax_better(b->v, b->iv, a->v, a->iv))) {
        a->v = b->v;
        a->iv = b->iv;
    } else if (op != OP_ARGMAX) {
        a->v = tb_nan_minmax(a->v, b->v, op == OP_MAX);
    }
}

/* One block of B threads: thread t folds items t, t + B, ... of n
 * (item(k) gives each), then the tree of block_fold. */
static acc block(int op, int B, int64_t n, acc (*item)(void *, int64_t),
                 void *arg)
{
    acc *s = calloc((size_t)B, sizeof *s);
    assert_non_null(s);
    for (int t = 0; t < B; t++) {
        s[t].iv = -1;
        for (int64_t k = t; k < n; k += B) {
            acc e = item(arg, k);
            acc_fold(op, &s[t], &e);
        }
    }
    for (int w = B / 2; w > 0; w /= 2)
        for (int t = 0; t < w; t++)
            acc_fold(op, &s[t], &s[t + w]);
    acc r = s[0];
    free(s);
    return r;
}

typedef struct {
    int op;
    const double *x;
    int64_t first;
    const acc *part;
} src;

/* Stage 1's element k of a chunk: Welford's push is the fold of a
 * one-element summary into the thread's own (the kernel pushes; a push
 * and a merge of (1, x, 0) are the same arithmetic up to rounding, so
 * the simulation pushes too). */
static acc elem(void *arg, int64_t k)
{
    const src *s = arg;
    acc e = {0, 0, 0, 0, -1};
    double x = s->x[s->first + k];
    if (s->op == OP_VAR)
        tb_var_push(&e.n, &e.mean, &e.m2, x);
    else
        e.v = x, e.iv = s->first + k;
    return e;
}

static acc partial(void *arg, int64_t c)
{
    const src *s = arg;
    return s->part[s->first + c];
}

/* Both stages over one lane x[0..len) with plan p (lanes == 1). */
static acc two_stage(int op, int B, const tb_lane_plan *p, const double *x)
{
    acc *part = calloc((size_t)p->items, sizeof *part);
    assert_non_null(part);
    for (int64_t it = 0; it < p->items; it++) {
        int64_t lane, first, count;
        tb_lane_chunk(p, it, &lane, &first, &count);
        src s = {op, x, first, NULL};
        part[it] = block(op, B, count, elem, &s);
    }
    src s2 = {op, x, 0, part};
    acc r = block(op, B, p->chunks, partial, &s2);
    free(part);
    return r;
}

static void test_plan(void **state)
{
    (void)state;
    static const int64_t lanes[] = {1, 2, 3, 100, 5000};
    static const int64_t lens[] = {1, 7, 513, 4097, 300001, 1 << 24};
    static const int64_t targets[] = {1, 264, 2112};
    static const int64_t budgets[] = {0, 1, 7, 4096, 1 << 20};
    for (size_t a = 0; a < NELEM(lanes); a++)
        for (size_t b = 0; b < NELEM(lens); b++)
            for (size_t t = 0; t < NELEM(targets); t++)
                for (size_t m = 0; m < NELEM(budgets); m++) {
                    tb_lane_plan p = tb_lane_plan_make(
                        lanes[a], lens[b], 256, targets[t], budgets[m]);
                    assert_true(p.chunks >= 1);
                    assert_int_equal(p.items, lanes[a] * p.chunks);
                    if (p.chunks > 1) {
                        assert_true(p.items <= budgets[m]);
                        assert_true(lanes[a] < targets[t]);
                        assert_true(p.chunk_len >= 256 *
                                    TB_LANE_MIN_PER_THREAD / 2);
                    }
                    /* chunks cover each lane once, none empty */
                    int64_t next = 0;
                    for (int64_t c = 0; c < p.chunks; c++) {
                        int64_t l, f, n;
                        tb_lane_chunk(&p, (lanes[a] - 1) * p.chunks + c,
                                      &l, &f, &n);
                        assert_int_equal(l, lanes[a] - 1);
                        assert_int_equal(f, next);
                        assert_true(n >= 1);
                        next += n;
                    }
                    assert_int_equal(next, lens[b]);
                }
    /* the global reduction of 16M elements on an H100-sized device is
     * split; many lanes are not */
    tb_lane_plan g = tb_lane_plan_make(1, 1 << 24, 256, 2 * 132 * 8,
                                       2 * 132 * 2048);
    assert_true(g.chunks >= 2 * 132 * 8);
    tb_lane_plan r = tb_lane_plan_make(4096, 1024, 256, 2 * 132 * 8,
                                       2 * 132 * 2048);
    assert_int_equal(r.chunks, 1);
}

static void check_lane(const double *x, int64_t len, const tb_lane_plan *p,
                       int B)
{
    /* brute force */
    double mx = x[0], mn = x[0];
    int64_t am = 0;
    for (int64_t j = 1; j < len; j++) {
        mx = isnan(mx) || isnan(x[j]) ? NAN : (x[j] > mx ? x[j] : mx);
        mn = isnan(mn) || isnan(x[j]) ? NAN : (x[j] < mn ? x[j] : mn);
    }
    for (int64_t j = 1; j < len && !isnan(x[am]); j++)
        if (x[j] > x[am] || isnan(x[j]))
            am = j;
    long double s = 0, d2 = 0;
    for (int64_t j = 0; j < len; j++)
        s += x[j];
    long double mean = s / len;
    for (int64_t j = 0; j < len; j++)
        d2 += ((long double)x[j] - mean) * ((long double)x[j] - mean);

    acc r = two_stage(OP_MAX, B, p, x);
    assert_true(isnan(mx) ? isnan(r.v) : r.v == mx);
    r = two_stage(OP_MIN, B, p, x);
    assert_true(isnan(mn) ? isnan(r.v) : r.v == mn);
    r = two_stage(OP_ARGMAX, B, p, x);
    assert_int_equal(r.iv, am);
    r = two_stage(OP_VAR, B, p, x);
    assert_true(r.n == (double)len);
    if (isnan((double)d2) || isinf((double)mean))
        assert_true(isnan(r.m2) || isinf(r.m2));
    else if (len > 1) {
        double want = (double)(d2 / (len - 1)), got = r.m2 / (len - 1);
        if (fabs(got - want) > 1e-12 * fabs(want) + 1e-300) {
            fprintf(stderr, "var len %lld chunks %lld: %.17g vs %.17g\n",
                    (long long)len, (long long)p->chunks, got, want);
            fail();
        }
    }
}

static void test_two_stages(void **state)
{
    (void)state;
    static const int64_t lens[] = {1, 7, 513, 4097, 300001};
    static const int blocks[] = {256, 4};
    uint64_t rs = 777;
    double *x = malloc(300001 * sizeof *x);
    assert_non_null(x);
    for (size_t li = 0; li < NELEM(lens); li++)
        for (int variant = 0; variant < 6; variant++) {
            int64_t len = lens[li];
            for (int64_t j = 0; j < len; j++) {
                uint64_t u = tb_splitmix64_next(&rs);
                /* few distinct values: ties; or spread values with a
                 * large offset (the var's cancellation case) */
                x[j] = variant == 1 ? 1e6 + (double)(u % 1000003) / 7
                                    : (double)(u % 9) - 4;
                if (variant == 2 && u % 97 == 0)
                    x[j] = NAN;
            }
            if (variant == 3) /* a NaN late in the lane */
                x[len - 1] = NAN;
            if (variant == 4)
                x[len / 2] = INFINITY;
            if (variant == 5)
                x[0] = -INFINITY;
            for (size_t b = 0; b < NELEM(blocks); b++) {
                int B = blocks[b];
                /* split as on a big GPU, as on a tiny one, not at all */
                const int64_t targets[] = {2112, 8, 1};
                for (size_t t = 0; t < NELEM(targets); t++) {
                    tb_lane_plan p = tb_lane_plan_make(1, len, B,
                                                       targets[t], 1 << 16);
                    check_lane(x, len, &p, B);
                }
            }
        }
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_two_stages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
