/* Host tests of the CUDA module's launch geometry and index arithmetic
 * (src/backends/cuda/geometry.h, compiled here as C11: no GPU needed).
 *
 * Every function is checked against brute force: grid-stride launches
 * visit each element exactly once; tb_bcast_offsets gives, for every
 * output element, the input elements NumPy's broadcasting rule names
 * (shapes with 1-dims, rank differences, empty and rank-8 shapes);
 * reduction plans cut the axis into chunks that cover it exactly once,
 * and the two passes the kernels run (simulated on the CPU with exact
 * integer-valued sums) give the brute-force sums for sizes 0, 1, 7, 513
 * and 4097 along every axis, at device sizes from 1 thread to an H100.
 * The module's bf16/f16 conversions (half_bits.h) give the cpu
 * backend's bits (ops/half.h) on every 16-bit pattern and every f32
 * rounding boundary (cuda_half_check.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cuda/geometry.h"
#include "cuda_half_check.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const int64_t odd_sizes[] = {0, 1, 7, 513, 4097};

/* ---- 1-D launches ------------------------------------------------------- */

static void test_blocks_1d(void **state)
{
    (void)state;
    const int64_t blocks_sz[] = {1, 32, 256, 1024};
    const int64_t caps[] = {1, 3, 64, INT64_C(1) << 31};
    const int64_t big[] = {INT64_C(1) << 20, (INT64_C(1) << 33) + 5};
    unsigned char *seen = malloc(4097);
    assert_non_null(seen);
    for (size_t a = 0; a < NELEM(blocks_sz); a++)
        for (size_t b = 0; b < NELEM(caps); b++) {
            int64_t blk = blocks_sz[a], cap = caps[b];
            for (size_t k = 0; k < NELEM(odd_sizes); k++) {
                int64_t n = odd_sizes[k];
                int64_t g = tb_cu_blocks_1d(n, blk, cap);
                assert_true(g >= 1 && g <= cap);
                int64_t need = n ? (n + blk - 1) / blk : 1;
                assert_int_equal(g, need < cap ? need : cap);
                /* the kernels' grid-stride loop, thread by thread */
                memset(seen, 0, 4097);
                for (int64_t bi = 0; bi < g; bi++)
                    for (int64_t t = 0; t < blk; t++)
                        for (int64_t i = bi * blk + t; i < n; i += g * blk)
                            seen[i]++;
                for (int64_t i = 0; i < n; i++)
                    assert_int_equal(seen[i], 1);
            }
            for (size_t k = 0; k < NELEM(big); k++) {
                int64_t g = tb_cu_blocks_1d(big[k], blk, cap);
                assert_true(g >= 1 && g <= cap);
                assert_true(g == cap || g * blk >= big[k]);
            }
        }
    free(seen);
}

/* The vectorized loops (vectors of `width`, then the tail one by one),
 * thread by thread: every element exactly once. */
static void test_vec_split(void **state)
{
    (void)state;
    const int64_t widths[] = {2, 4};
    const int64_t blocks_sz[] = {1, 32, 256};
    const int64_t caps[] = {1, 3, 64};
    unsigned char *seen = malloc(4097);
    assert_non_null(seen);
    for (size_t w = 0; w < NELEM(widths); w++)
        for (size_t a = 0; a < NELEM(blocks_sz); a++)
            for (size_t b = 0; b < NELEM(caps); b++)
                for (int64_t n = 0; n <= 4097; n += n < 20 ? 1 : 509) {
                    int64_t W = widths[w], blk = blocks_sz[a];
                    int64_t nv = tb_cu_vec_count(n, W);
                    assert_int_equal(nv, n / W);
                    int64_t work = tb_cu_vec_work(n, W);
                    assert_true(work >= 1 && work >= nv &&
                                work >= n - nv * W);
                    int64_t g = tb_cu_blocks_1d(work, blk, caps[b]);
                    int64_t step = g * blk;
                    memset(seen, 0, 4097);
                    for (int64_t tid = 0; tid < step; tid++) {
                        for (int64_t v = tid; v < nv; v += step)
                            for (int64_t k = 0; k < W; k++)
                                seen[v * W + k]++;
                        for (int64_t i = nv * W + tid; i < n; i += step)
                            seen[i]++;
                    }
                    for (int64_t i = 0; i < n; i++)
                        assert_int_equal(seen[i], 1);
                }
    free(seen);
}

/* ---- broadcasting ------------------------------------------------------- */

typedef struct {
    int an, bn;
    int64_t a[8], b[8];
} shape_pair;

/* NumPy's rule, directly: output multi-index -> input flat index. */
static int64_t numpy_index(const int64_t *sh, int n, const int64_t *oshape,
                           int ond, int64_t flat)
{
    int64_t idx[8];
    for (int d = ond - 1; d >= 0; d--) {
        idx[d] = flat % oshape[d];
        flat /= oshape[d];
    }
    int64_t off = 0;
    for (int j = 0; j < n; j++) {
        int d = j + (ond - n);
        off = off * sh[j] + (sh[j] == 1 ? 0 : idx[d]);
    }
    return off;
}

static void check_pair(const shape_pair *p)
{
    tb_bcast bc;
    int64_t oshape[8];
    int ond = -1;
    memset(&bc, 0, sizeof bc);
    assert_int_equal(tb_bcast_init(&bc, p->a, p->an, p->b, p->bn, oshape,
                                   &ond),
                     0);
    int nd = p->an > p->bn ? p->an : p->bn;
    assert_int_equal(ond, nd);
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        int ia = d - (nd - p->an), ib = d - (nd - p->bn);
        int64_t da = ia >= 0 ? p->a[ia] : 1, db = ib >= 0 ? p->b[ib] : 1;
        assert_int_equal(oshape[d], da == 1 ? db : da);
        n *= oshape[d];
    }
    assert_true(bc.ndim >= 0 && bc.ndim <= nd);
    for (int64_t i = 0; i < n; i++) {
        int64_t oa, ob;
        tb_bcast_offsets(&bc, i, &oa, &ob);
        int64_t wa = numpy_index(p->a, p->an, oshape, nd, i);
        int64_t wb = numpy_index(p->b, p->bn, oshape, nd, i);
        if (oa != wa || ob != wb)
            fail_msg("shapes a[%d] b[%d]: output %lld: got (%lld, %lld), "
                     "expected (%lld, %lld)",
                     p->an, p->bn, (long long)i, (long long)oa,
                     (long long)ob, (long long)wa, (long long)wb);
        if (bc.same)
            assert_true(oa == i && ob == i);
    }
}

static void test_broadcast(void **state)
{
    (void)state;
    const shape_pair pairs[] = {
        {2, 2, {7, 13}, {7, 13}},
        {3, 3, {3, 1, 5}, {1, 4, 5}},
        {1, 3, {7}, {2, 3, 7}},
        {3, 1, {2, 3, 7}, {7}},
        {1, 1, {4097}, {1}},
        {1, 1, {1}, {4097}},
        {2, 2, {1, 4097}, {7, 1}},
        {2, 1, {513, 7}, {7}},
        {2, 2, {513, 7}, {513, 1}},
        {3, 3, {7, 1, 513}, {1, 7, 1}},
        {3, 2, {1, 7, 1}, {7, 513}},
        {4, 2, {5, 1, 1, 3}, {4, 1}},
        {3, 3, {1, 1, 1}, {1, 1, 1}},
        {0, 1, {0}, {7}},
        {0, 0, {0}, {0}},
        {2, 2, {0, 3}, {1, 3}},
        {1, 1, {0}, {1}},
        {2, 2, {1, 1}, {7, 513}},
        {3, 3, {2, 7, 5}, {2, 7, 5}},
        {3, 3, {2, 1, 5}, {2, 1, 5}},
        {8, 8, {2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 2}},
        {8, 1, {1, 1, 1, 1, 1, 1, 1, 7}, {7}},
        {8, 3, {2, 1, 3, 1, 1, 2, 1, 3}, {1, 1, 3}},
    };
    for (size_t i = 0; i < NELEM(pairs); i++)
        check_pair(&pairs[i]);
    /* merged to a plain loop when nothing broadcasts */
    tb_bcast bc;
    int64_t os[8];
    int ond;
    const int64_t s3[] = {2, 7, 5}, s1[] = {1};
    assert_int_equal(tb_bcast_init(&bc, s3, 3, s3, 3, os, &ond), 0);
    assert_true(bc.same && bc.ndim == 1 && bc.shape[0] == 70);
    assert_int_equal(tb_bcast_init(&bc, s3, 3, s1, 1, os, &ond), 0);
    assert_true(!bc.same && bc.ndim == 1 && bc.stride[1][0] == 0);
}

static void test_broadcast_errors(void **state)
{
    (void)state;
    tb_bcast bc;
    int64_t os[8];
    int ond;
    const int64_t a[] = {3}, b[] = {4}, c[] = {2, 3}, d[] = {3, 3};
    const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    assert_int_equal(tb_bcast_init(&bc, a, 1, b, 1, os, &ond), -1);
    assert_int_equal(tb_bcast_init(&bc, c, 2, d, 2, os, &ond), -1);
    assert_int_equal(tb_bcast_init(&bc, nine, 9, a, 1, os, &ond), -1);
    assert_int_equal(tb_bcast_init(&bc, a, -1, a, 1, os, &ond), -1);
}

/* ---- reductions --------------------------------------------------------- */

/* x[k] as an exact small integer, so every order of summation gives the
 * same double. */
static double val(int64_t k)
{
    return (double)(k % 97 - 48);
}

/* Run one pass of plan p over in (as the kernels do: every item of every
 * block round), writing out[out_index]; counts visits of each input. */
static void run_pass(const tb_reduce_plan *p, const double *in,
                     int64_t n_in, double *out, int64_t n_out,
                     unsigned *visits)
{
    int64_t per_block = p->cols ? p->block : p->block / p->group;
    int64_t rounds = (p->items + per_block - 1) / per_block;
    int64_t done = 0;
    for (int64_t blk = 0; blk < p->blocks; blk++)
        for (int64_t r = blk; r < rounds; r += p->blocks)
            for (int64_t g = 0; g < per_block; g++) {
                int64_t it = r * per_block + g;
                if (it >= p->items)
                    continue;
                tb_reduce_item w = tb_reduce_item_at(p, it);
                assert_true(w.count >= 0 && w.count <= p->chunk_len);
                assert_true(w.out_index >= 0 && w.out_index < n_out);
                double acc = 0;
                for (int64_t j = 0; j < w.count; j++) {
                    int64_t k = w.start + j * w.stride;
                    assert_true(k >= 0 && k < n_in);
                    acc += in[k];
                    if (visits)
                        visits[k]++;
                }
                out[w.out_index] = acc;
                done++;
            }
    assert_int_equal(done, p->items);
}

static void check_plan_shape(const tb_reduce_plan *p, int64_t max_partials,
                             int64_t max_blocks)
{
    assert_true(p->chunks >= 1 && p->chunk_len >= 1);
    assert_true(p->chunks * p->chunk_len >= p->len);
    assert_true(p->len == 0 || (p->chunks - 1) * p->chunk_len < p->len);
    assert_int_equal(p->items, p->outer * p->inner * p->chunks);
    assert_true(p->blocks >= 1 && p->blocks <= max_blocks);
    assert_int_equal(p->cols, p->inner > 1);
    if (!p->cols)
        assert_true(p->group == 32 || p->group == p->block);
    assert_true(p->block % 32 == 0 && p->block <= 1024);
    if (p->chunks > 1)
        assert_true(p->outer * p->inner * p->chunks <= max_partials);
}

/* Reduce shape along axis (-1: all) with the two passes the kernels run;
 * compare with brute force. */
static void check_reduce(const int64_t *shape, int ndim, int axis,
                         int64_t target, int64_t max_partials,
                         int64_t max_blocks)
{
    int64_t outer, len, inner;
    tb_reduce_view(shape, ndim, axis, &outer, &len, &inner);
    int64_t n = outer * len * inner, n_out = outer * inner;
    double *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    double *want = calloc((size_t)(n_out ? n_out : 1), sizeof *want);
    double *got = calloc((size_t)(n_out ? n_out : 1), sizeof *got);
    unsigned *visits = calloc((size_t)(n ? n : 1), sizeof *visits);
    assert_true(x && want && got && visits);
    for (int64_t k = 0; k < n; k++)
        x[k] = val(k);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < len; j++)
            for (int64_t i = 0; i < inner; i++)
                want[o * inner + i] += x[(o * len + j) * inner + i];

    if (n_out > 0) {
        tb_reduce_plan p = tb_reduce_plan_make(outer, len, inner, target,
                                               max_partials, max_blocks);
        check_plan_shape(&p, max_partials, max_blocks);
        if (p.chunks == 1) {
            run_pass(&p, x, n ? n : 1, got, n_out, visits);
        } else {
            double *part = calloc((size_t)p.items, sizeof *part);
            assert_non_null(part);
            run_pass(&p, x, n, part, p.items, visits);
            tb_reduce_plan q = tb_reduce_next(&p, target, max_blocks);
            check_plan_shape(&q, 0, max_blocks);
            assert_int_equal(q.chunks, 1);
            assert_int_equal(q.outer * q.inner, n_out);
            run_pass(&q, part, p.items, got, n_out, NULL);
            free(part);
        }
        for (int64_t k = 0; k < n; k++)
            if (visits[k] != 1)
                fail_msg("axis %d: input %lld summed %u times", axis,
                         (long long)k, visits[k]);
        for (int64_t k = 0; k < n_out; k++)
            if (got[k] != want[k])
                fail_msg("axis %d len %lld: output %lld = %g, expected %g",
                         axis, (long long)len, (long long)k, got[k],
                         want[k]);
    }
    free(x);
    free(want);
    free(got);
    free(visits);
}

static void test_reduce_view(void **state)
{
    (void)state;
    const int64_t s[] = {3, 4097, 5};
    int64_t o, l, i;
    tb_reduce_view(s, 3, -1, &o, &l, &i);
    assert_true(o == 1 && l == 3 * 4097 * 5 && i == 1);
    tb_reduce_view(s, 3, 0, &o, &l, &i);
    assert_true(o == 1 && l == 3 && i == 4097 * 5);
    tb_reduce_view(s, 3, 1, &o, &l, &i);
    assert_true(o == 3 && l == 4097 && i == 5);
    tb_reduce_view(s, 3, 2, &o, &l, &i);
    assert_true(o == 3 * 4097 && l == 5 && i == 1);
}

static void test_reduce_plans(void **state)
{
    (void)state;
    /* device sizes: one thread, a tiny GPU, an H100 (132 SMs x 2048) */
    const int64_t targets[] = {1, 64 * 32, 132 * 2048};
    for (size_t t = 0; t < NELEM(targets); t++) {
        int64_t target = targets[t];
        int64_t max_blocks = target / 256 * 4 > 0 ? target / 256 * 4 : 1;
        const int64_t partials[] = {0, 64, 2 * target};
        for (size_t q = 0; q < NELEM(partials); q++) {
            int64_t mp = partials[q];
            /* 1-D of every odd size, all elements */
            for (size_t a = 0; a < NELEM(odd_sizes); a++) {
                int64_t s1[] = {odd_sizes[a]};
                check_reduce(s1, 1, -1, target, mp, max_blocks);
                check_reduce(s1, 1, 0, target, mp, max_blocks);
            }
            /* 2-D and 3-D: every axis, and all */
            for (size_t a = 1; a < NELEM(odd_sizes); a++)
                for (size_t b = 1; b < NELEM(odd_sizes); b++) {
                    if (odd_sizes[a] * odd_sizes[b] > 4097 * 7)
                        continue;
                    int64_t s2[] = {odd_sizes[a], odd_sizes[b]};
                    for (int ax = -1; ax < 2; ax++)
                        check_reduce(s2, 2, ax, target, mp, max_blocks);
                    int64_t s3[] = {odd_sizes[a], 3, odd_sizes[b]};
                    for (int ax = -1; ax < 3; ax++)
                        check_reduce(s3, 3, ax, target, mp, max_blocks);
                }
            const int64_t s0[] = {7, 0, 3};
            for (int ax = -1; ax < 3; ax++)
                check_reduce(s0, 3, ax, target, mp, max_blocks);
        }
    }
}

/* The plan splits only when the lines cannot fill the device, and then
 * into chunks of at least TB_REDUCE_MIN_ITEMS per thread. */
static void test_reduce_split_policy(void **state)
{
    (void)state;
    const int64_t target = 132 * 2048, cap = 132 * 2048 / 256 * 4;
    tb_reduce_plan p =
        tb_reduce_plan_make(1, INT64_C(1) << 24, 1, target, 2 * target, cap);
    assert_int_equal(p.group, 256);
    assert_true(p.chunks > 1);
    assert_true(p.chunk_len >= 256 * TB_REDUCE_MIN_ITEMS);
    assert_true(p.chunks * 256 <= 2 * target);
    /* many rows: never split */
    p = tb_reduce_plan_make(4096, 10, 1, target, 2 * target, cap);
    assert_int_equal(p.chunks, 1);
    assert_int_equal(p.group, 32);
    /* axis 0 of 1024x1024: a thread per column, split 4 ways at most */
    p = tb_reduce_plan_make(1, 1024, 1024, target, 2 * target, cap);
    assert_int_equal(p.cols, 1);
    assert_true(p.chunk_len >= TB_REDUCE_MIN_ITEMS);
    /* softmax plans (no partials) never split */
    p = tb_reduce_plan_make(2, 1 << 20, 1, target, 0, cap);
    assert_int_equal(p.chunks, 1);
}

/* ---- bf16 / f16 conversions (half_bits.h vs ops/half.h) ---------------- */

static void test_half_bits(void **state)
{
    (void)state;
    long tried = 0;
    long bad = tb_half_check_all(&tried);
    print_message("# %ld conversions compared, %ld differ\n", tried, bad);
    assert_true(tried > 4000000);
    assert_int_equal(bad, 0);
    /* the check sees a wrong rounding: truncation differs above half */
    assert_int_not_equal(tb_cu_f32_to_bf16(tb_cu_bits_f32(0x3f80c000u)),
                         0x3f80);
    assert_int_equal(tb_cu_f32_to_f16(tb_cu_bits_f32(0x33000000u)), 0);
    assert_int_equal(tb_cu_f32_to_f16(tb_cu_bits_f32(0x33000001u)), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_1d),
        cmocka_unit_test(test_vec_split),
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_broadcast_errors),
        cmocka_unit_test(test_reduce_view),
        cmocka_unit_test(test_reduce_plans),
        cmocka_unit_test(test_reduce_split_policy),
        cmocka_unit_test(test_half_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
