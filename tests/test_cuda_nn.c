/* Host tests of the CUDA module's layer-kernel arithmetic
 * (src/backends/cuda/nn_geom.h, compiled here as C11: no GPU) and of the
 * random stream's device-callable part (src/ops/rand.h's TB_HOSTDEV
 * functions, which the module's dropout calls on the device).
 *
 * Each function is checked against an independent oracle on the CPU:
 * tb_cu_index against tb_bw_class (the cpu rows' index rule) on integers,
 * fractions, bounds, NaN and infinities; tb_cu_mask_at against the
 * reference causal_mask; the sdpa tiling by simulating attn.cu's kernel
 * phase by phase in double (tile sizes, keys visited, masks, the online
 * softmax's rescaling) against the reference sdpa, with a count that
 * every allowed key is used exactly once and no masked one; the row
 * chunks of the norm gradients cover the rows once, in order; and
 * tb_rand_keep against a SplitMix64 written here from its definition
 * (u53 >= p in double) and against the cpu backend's dropout row. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cuda/nn_geom.h"
#include "ops/op.h"
#include "ops/op_backward.h"
#include "ops/rand.h"
#include "ops/ref.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

extern const tb_backend tb_backend_cpu;

static tb_tensor host_tensor(tb_dtype dt, int ndim, const int64_t *dim)
{
    tb_shape s = {.ndim = ndim};
    for (int d = 0; d < ndim; d++)
        s.dim[d] = dim[d];
    tb_tensor t;
    assert_int_equal(tb_tensor_create(&t, dt, &s), 0);
    return t;
}

static tb_params op_params(tb_op_id id, const char *name, double v)
{
    const tb_op *op = tb_op_get(id);
    tb_params p = {0};
    char err[128];
    if (name)
        assert_int_equal(tb_params_set(op, &p, name, v, err, sizeof err),
                         0);
    tb_params_defaults(op, &p);
    return p;
}

/* ---- indices -------------------------------------------------------------- */

static void test_index_rule(void **state)
{
    (void)state;
    const int64_t bounds[] = {0, 1, 7, 513, INT64_C(1) << 40};
    int checked = 0;
    for (size_t b = 0; b < NELEM(bounds); b++) {
        const double C = (double)bounds[b];
        const double vals[] = {-1, -0.5, -0.0, 0, 0.25, 1, 2, 6.5, 7,
                               C - 1, C - 0.5, C, C + 1, 0x1p53, 1e300,
                               NAN, INFINITY, -INFINITY, 512.999};
        for (size_t i = 0; i < NELEM(vals); i++, checked++) {
            int64_t want = -1;
            if (tb_bw_class(vals[i], bounds[b], &want) != 0)
                want = -1;
            assert_true(tb_cu_index(vals[i], bounds[b]) == want);
        }
    }
    print_message("# %d (value, bound) pairs as tb_bw_class\n", checked);
}

/* ---- causal_mask ------------------------------------------------------------ */

static void test_mask_vs_reference(void **state)
{
    (void)state;
    const int64_t shapes[][3] = {{2, 3, 5}, {1, 5, 3}, {3, 4, 4}, {1, 1, 7},
                                 {2, 7, 1}};
    for (size_t s = 0; s < NELEM(shapes); s++)
        for (int causal = 0; causal <= 1; causal++) {
            tb_tensor x = host_tensor(TB_F64, 3, shapes[s]);
            tb_tensor o = host_tensor(TB_F64, 3, shapes[s]);
            const int64_t n = tb_tensor_numel(&x);
            for (int64_t f = 0; f < n; f++)
                ((double *)x.data)[f] = (double)f + 0.5;
            tb_params p = op_params(TB_OP_causal_mask, "causal", causal);
            assert_int_equal(tb_ref_causal_mask(&x, &o, &p), 0);
            for (int64_t f = 0; f < n; f++) {
                const int hid = tb_cu_mask_at(f, shapes[s][1], shapes[s][2],
                                              causal);
                assert_int_equal(hid, isinf(((double *)o.data)[f]) != 0);
            }
            tb_tensor_destroy(&x);
            tb_tensor_destroy(&o);
        }
}

/* ---- sdpa tiles -------------------------------------------------------------- */

static void test_attn_tile_choice(void **state)
{
    (void)state;
    const int64_t dims[] = {1, 7, 64, 128, 256, 1000, 3000, 6000};
    for (size_t a = 0; a < NELEM(dims); a++)
        for (size_t b = 0; b < NELEM(dims); b++)
            for (int64_t es = 4; es <= 8; es += 4) {
                const int64_t D = dims[a], Dv = dims[b], lim = 48 * 1024;
                const int64_t B = tb_cu_attn_tile(D, Dv, es, lim);
                if (B == 0) {
                    assert_true(tb_cu_attn_smem(1, D, Dv) * es > lim);
                    continue;
                }
                assert_true(B >= 1 && B <= TB_CU_ATTN_TILE_MAX);
                assert_int_equal(B & (B - 1), 0);
                assert_true(tb_cu_attn_smem(B, D, Dv) * es <= lim);
                if (B < TB_CU_ATTN_TILE_MAX)
                    assert_true(tb_cu_attn_smem(2 * B, D, Dv) * es > lim);
            }
}

/* attn.cu's k_sdpa simulated on the CPU in double, phase by phase (one
 * thread: the kernel's phases are separated by __syncthreads).  Counts
 * per query row the keys whose weights entered the sums. */
static void sim_sdpa(const double *q, const double *k, const double *v,
                     double *out, int64_t BH, int64_t Sq, int64_t Sk,
                     int64_t D, int64_t Dv, int64_t B, int causal,
                     double scale, int64_t *used)
{
    double *o = malloc((size_t)(B * Dv) * sizeof *o);
    double *s = malloc((size_t)(B * B) * sizeof *s);
    double m[TB_CU_ATTN_TILE_MAX], l[TB_CU_ATTN_TILE_MAX],
        alpha[TB_CU_ATTN_TILE_MAX];
    assert_non_null(o);
    assert_non_null(s);
    const int64_t nqt = (Sq + B - 1) / B;
    for (int64_t t = 0; t < BH * nqt; t++) {
        const int64_t h = t / nqt, i0 = t % nqt * B;
        const int64_t qn = Sq - i0 < B ? Sq - i0 : B;
        const double *qt = q + (h * Sq + i0) * D;
        const int64_t nk = tb_cu_attn_keys(i0, qn, Sk, causal);
        for (int64_t e = 0; e < qn * Dv; e++)
            o[e] = 0;
        for (int64_t r = 0; r < qn; r++) {
            m[r] = -INFINITY;
            l[r] = 0;
        }
        for (int64_t j0 = 0; j0 < nk; j0 += B) {
            const int64_t kn = nk - j0 < B ? nk - j0 : B;
            const double *kt = k + (h * Sk + j0) * D;
            const double *vt = v + (h * Sk + j0) * Dv;
            for (int64_t e = 0; e < qn * kn; e++) {
                const int64_t r = e / kn, c = e % kn;
                double dot = 0;
                for (int64_t d = 0; d < D; d++)
                    dot += qt[r * D + d] * kt[c * D + d];
                const int hid = tb_cu_masked(i0 + r, j0 + c, causal);
                s[r * B + c] = hid ? -INFINITY : dot * scale;
                used[(h * Sq + i0 + r)] += !hid;
            }
            for (int64_t r = 0; r < qn; r++) {
                double *sr = s + r * B, mx = m[r], sum = 0;
                for (int64_t c = 0; c < kn; c++)
                    mx = sr[c] > mx ? sr[c] : mx;
                assert_false(isinf(mx)); /* key tile 0 has key 0 */
                const double a = exp(m[r] - mx);
                for (int64_t c = 0; c < kn; c++) {
                    sr[c] = exp(sr[c] - mx);
                    sum += sr[c];
                }
                m[r] = mx;
                l[r] = l[r] * a + sum;
                alpha[r] = a;
            }
            for (int64_t e = 0; e < qn * Dv; e++) {
                const int64_t r = e / Dv, col = e % Dv;
                double acc = o[e] * alpha[r];
                for (int64_t c = 0; c < kn; c++)
                    acc += s[r * B + c] * vt[c * Dv + col];
                o[e] = acc;
            }
        }
        for (int64_t e = 0; e < qn * Dv; e++)
            out[(h * Sq + i0) * Dv + e] = o[e] / l[e / Dv];
    }
    free(o);
    free(s);
}

static void test_attn_tiles_vs_reference(void **state)
{
    (void)state;
    const int64_t seqs[][2] = {{1, 1},  {7, 7},   {33, 33}, {65, 40},
                               {5, 70}, {31, 32}, {64, 64}, {100, 3}};
    const int64_t tiles[] = {1, 2, 8, 16, 32};
    uint64_t rs = 42;
    int cases = 0;
    for (size_t a = 0; a < NELEM(seqs); a++)
        for (size_t b = 0; b < NELEM(tiles); b++)
            for (int causal = 0; causal <= 1; causal++, cases++) {
                const int64_t H = 2, Sq = seqs[a][0], Sk = seqs[a][1],
                              D = 5, Dv = 3, B = tiles[b];
                const int64_t qs[4] = {1, H, Sq, D}, ks[4] = {1, H, Sk, D},
                              vs[4] = {1, H, Sk, Dv},
                              os[4] = {1, H, Sq, Dv};
                tb_tensor in[3] = {host_tensor(TB_F64, 4, qs),
                                   host_tensor(TB_F64, 4, ks),
                                   host_tensor(TB_F64, 4, vs)};
                tb_tensor ref = host_tensor(TB_F64, 4, os);
                for (int i = 0; i < 3; i++)
                    for (int64_t e = 0; e < tb_tensor_numel(&in[i]); e++)
                        ((double *)in[i].data)[e] =
                            (double)(tb_splitmix64_next(&rs) >> 11) *
                                0x1p-52 - 1;
                tb_params p = op_params(TB_OP_sdpa, "causal", causal);
                assert_int_equal(tb_ref_sdpa(in, &ref, &p), 0);
                double *got = malloc((size_t)(H * Sq * Dv) * sizeof *got);
                int64_t *used = calloc((size_t)(H * Sq), sizeof *used);
                assert_non_null(got);
                assert_non_null(used);
                sim_sdpa(in[0].data, in[1].data, in[2].data, got, H, Sq,
                         Sk, D, Dv, B, causal, 1 / sqrt((double)D), used);
                for (int64_t h = 0; h < H; h++)
                    for (int64_t i = 0; i < Sq; i++)
                        assert_int_equal(used[h * Sq + i],
                                         causal && i + 1 < Sk ? i + 1 : Sk);
                const double *want = ref.data;
                for (int64_t e = 0; e < H * Sq * Dv; e++)
                    if (!(fabs(got[e] - want[e]) <=
                          1e-13 + 1e-12 * fabs(want[e])))
                        fail_msg("Sq %lld Sk %lld B %lld causal %d: [%lld] "
                                 "%.17g, reference %.17g",
                                 (long long)Sq, (long long)Sk, (long long)B,
                                 causal, (long long)e, got[e], want[e]);
                free(got);
                free(used);
                for (int i = 0; i < 3; i++)
                    tb_tensor_destroy(&in[i]);
                tb_tensor_destroy(&ref);
            }
    print_message("# %d tilings simulated against the reference sdpa\n",
                  cases);
}

/* ---- row chunks --------------------------------------------------------------- */

static void test_row_chunks(void **state)
{
    (void)state;
    const int64_t rows_set[] = {0, 1, 7, 64, 513, 65537};
    const int64_t wants[] = {1, 3, 64, 8448};
    const int64_t fits[] = {0, 1, 5, 100000};
    for (size_t a = 0; a < NELEM(rows_set); a++)
        for (size_t b = 0; b < NELEM(wants); b++)
            for (size_t f = 0; f < NELEM(fits); f++) {
                const int64_t rows = rows_set[a];
                const int64_t nch = tb_cu_row_chunks(rows, wants[b],
                                                     fits[f]);
                int64_t lim = wants[b] < rows ? wants[b] : rows;
                lim = lim < fits[f] ? lim : fits[f];
                assert_int_equal(nch, lim);
                int64_t next = 0, lo = rows, hi = 0;
                for (int64_t c = 0; c < nch; c++) {
                    int64_t r0, r1;
                    tb_cu_chunk_rows(rows, nch, c, &r0, &r1);
                    assert_int_equal(r0, next); /* in order, no gap */
                    assert_true(r1 >= r0);
                    lo = r1 - r0 < lo ? r1 - r0 : lo;
                    hi = r1 - r0 > hi ? r1 - r0 : hi;
                    next = r1;
                }
                if (nch > 0) {
                    assert_int_equal(next, rows);
                    assert_true(hi - lo <= 1 && lo >= 1);
                }
            }
}

/* ---- the dropout stream --------------------------------------------------------- */

/* SplitMix64 from its definition (Steele, Lea, Flood 2014; Vigna's
 * splitmix64.c), independent of base/rng.h. */
static uint64_t sm64(uint64_t z)
{
    z ^= z >> 30;
    z *= 0xbf58476d1ce4e5b9u;
    z ^= z >> 27;
    z *= 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void test_keep_stream(void **state)
{
    (void)state;
    const uint64_t g = 0x9e3779b97f4a7c15u;
    /* the first output of the generator seeded with 0 */
    assert_true(sm64(g) == UINT64_C(0xe220a8397b1dcdaf));
    assert_true(tb_rand_mix(g) == UINT64_C(0xe220a8397b1dcdaf));
    const uint64_t seeds[] = {0, 1, 2, 12345, UINT64_C(1) << 53};
    const double ps[] = {0,   0x1p-53, 0.1, 0.5, 0.5 + 0x1p-53,
                         0.9, 1 - 0x1p-53};
    int64_t kept = 0, total = 0;
    for (size_t s = 0; s < NELEM(seeds); s++) {
        const uint64_t key = sm64(seeds[s] + g);
        assert_true(tb_rand_key(seeds[s]) == key);
        for (size_t a = 0; a < NELEM(ps); a++) {
            const uint64_t thr = tb_rand_keep_threshold(ps[a]);
            for (uint64_t i = 0; i < 5000; i++) {
                const uint64_t at = i < 4000 ? i : (i << 40) + i;
                const uint64_t bits = sm64(key + (at + 1) * g);
                const double u = (double)(bits >> 11) * 0x1p-53;
                const int want = u >= ps[a];
                assert_int_equal(tb_rand_keep(key, at, thr), want);
                /* the threshold exactly at this element's u */
                const uint64_t t2 = tb_rand_keep_threshold(u);
                assert_true(tb_rand_keep(key, at, t2));
                if (u > 0)
                    assert_false(tb_rand_keep(
                        key, at, tb_rand_keep_threshold(u + 0x1p-53)));
                kept += want;
                total++;
            }
        }
    }
    print_message("# %lld of %lld elements kept, each as u53 >= p\n",
                  (long long)kept, (long long)total);
}

/* The cpu backend's dropout row keeps exactly the elements tb_rand_keep
 * keeps (the function the CUDA kernel calls). */
static void test_keep_vs_cpu_row(void **state)
{
    (void)state;
    const tb_backend *B = &tb_backend_cpu;
    const char *vals[2] = {tb_cpu_isa_name(0), "2"};
    void *ctx = NULL;
    char err[256];
    assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
    const double ps[] = {0.1, 0.5, 0.75};
    const int64_t n[1] = {10007};
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
        for (size_t a = 0; a < NELEM(ps); a++) {
            tb_params p = op_params(TB_OP_dropout, "p", ps[a]);
            char e2[128];
            assert_int_equal(tb_params_set(tb_op_get(TB_OP_dropout), &p,
                                           "seed", 77 + (double)a, e2,
                                           sizeof e2),
                             0);
            tb_tensor x = host_tensor((tb_dtype)dt, 1, n);
            tb_tensor o = host_tensor((tb_dtype)dt, 1, n);
            for (int64_t i = 0; i < n[0]; i++)
                tb_tensor_set(&x, i, 1);
            tb_kernel k = B->kernel(ctx, tb_op_get(TB_OP_dropout),
                                    (tb_dtype)dt, &p, NULL);
            assert_non_null(k.fn);
            assert_int_equal(k.fn(k.ctx, &x, &o, &p), 0);
            const uint64_t key = tb_rand_key(tb_rand_seed(p.v[1]));
            const uint64_t thr = tb_rand_keep_threshold(ps[a]);
            for (int64_t i = 0; i < n[0]; i++)
                assert_int_equal(tb_tensor_get(&o, i) != 0,
                                 tb_rand_keep(key, (uint64_t)i, thr));
            tb_tensor_destroy(&x);
            tb_tensor_destroy(&o);
        }
    B->destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_rule),
        cmocka_unit_test(test_mask_vs_reference),
        cmocka_unit_test(test_attn_tile_choice),
        cmocka_unit_test(test_attn_tiles_vs_reference),
        cmocka_unit_test(test_row_chunks),
        cmocka_unit_test(test_keep_stream),
        cmocka_unit_test(test_keep_vs_cpu_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
