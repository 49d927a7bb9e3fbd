/* Host tests of the CUDA module's layout, pooling, im2col and random-stream
 * arithmetic (src/backends/cuda/layout.h, compiled here as C11: no GPU).
 *
 * Each function is checked against an independent oracle on the CPU:
 * permute's parameter rule against tbench's own tb_permute_dims; the
 * permute plan's offsets against brute-force index arithmetic for every
 * permutation of ranks 0-4 (and some of rank 6) over shapes with 0-, 1-
 * and odd-sized dims; the tiled transpose simulated thread by thread
 * (every output written exactly once, with the right input); pooling
 * windows against brute force and tb_window_out; conv2d by im2col + a
 * naive GEMM against a direct convolution (integer data: exact); the
 * max/min/argmax fold of lanes.cu simulated thread by thread against
 * the sequential answers (ties and NaNs included); the
 * random stream bit for bit against src/ops/rand.h and the reference
 * kernels tb_ref_rand_uniform / tb_ref_rand_normal (rand_normal f64
 * within 1e-13: rand.h's own Box-Muller against libm's here). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cuda/layout.h"
#include "ops/op.h"
#include "ops/rand.h"
#include "ops/ref.h"
#include "ops/tensor.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- permute's parameters ----------------------------------------------- */

static void check_perm_params(uint32_t set, const double *v, int ndim)
{
    tb_params p;
    memset(&p, 0, sizeof p);
    p.set = set;
    for (int i = 0; i < TB_MAX_PARAMS; i++)
        p.v[i] = v[i];
    int want[TB_MAX_DIMS], got[TB_MAX_DIMS];
    int rw = tb_permute_dims(&p, ndim, want, NULL, 0);
    int rg = tb_cu_perm_params(set, v, ndim, got);
    assert_int_equal(rw == 0, rg == 0);
    if (rw == 0)
        for (int d = 0; d < ndim; d++)
            assert_int_equal(got[d], want[d]);
}

static void test_perm_params(void **state)
{
    (void)state;
    double v[TB_MAX_PARAMS] = {0};
    for (int ndim = 0; ndim <= 4; ndim++) {
        check_perm_params(0, v, ndim); /* none set: reversed */
        /* every value vector in -ndim-1..ndim for p0..p(ndim-1) */
        int span = 2 * ndim + 2, total = 1;
        for (int d = 0; d < ndim; d++)
            total *= span;
        for (int code = 0; code < total; code++) {
            int c = code;
            for (int d = 0; d < ndim; d++) {
                v[d] = c % span - ndim - 1;
                c /= span;
            }
            uint32_t all = (1u << ndim) - 1u;
            check_perm_params(all, v, ndim);
            if (ndim > 0) /* one missing, one too many */
                check_perm_params(all >> 1, v, ndim);
            check_perm_params(all | 1u << ndim, v, ndim);
        }
    }
    /* rank 8: reversed, shifted, and a non-integer value */
    for (int d = 0; d < 8; d++)
        v[d] = (d + 3) % 8;
    check_perm_params(0xff, v, 8);
    v[2] = 1.5;
    check_perm_params(0xff, v, 8);
}

static void test_perm_swap(void **state)
{
    (void)state;
    for (int ndim = 0; ndim <= TB_GEOM_MAX_DIMS; ndim++)
        for (int a = -9; a <= 8; a++)
            for (int b = -9; b <= 8; b++) {
                int perm[TB_GEOM_MAX_DIMS];
                int na, nb;
                int ok = ndim >= 1 && !tb_axis_norm(a, ndim, &na) &&
                         !tb_axis_norm(b, ndim, &nb) && na != nb;
                int rc = tb_cu_perm_swap(a, b, ndim, perm);
                assert_int_equal(rc == 0, ok);
                if (!ok)
                    continue;
                for (int d = 0; d < ndim; d++)
                    assert_int_equal(perm[d],
                                     d == na ? nb : d == nb ? na : d);
            }
}

/* ---- permute plans and the tiled kernel --------------------------------- */

/* Input offset of output element i by brute force. */
static int64_t perm_brute(const int64_t *ish, int ndim, const int *perm,
                          int64_t i)
{
    int64_t is[TB_GEOM_MAX_DIMS], s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        is[d] = s;
        s *= ish[d];
    }
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t n = ish[perm[d]];
        off += i % n * is[perm[d]];
        i /= n;
    }
    return off;
}

/* The tiled kernel, thread by thread, on integer "data" (the input
 * offset): out must be the brute-force gather, written once each. */
static void simulate_tiled(const tb_perm_plan *pl, int64_t n, int64_t *out,
                           unsigned char *hits)
{
    int64_t rows = pl->rows, cols = pl->cols;
    int64_t tiles = tb_tile_count(pl->batch, rows, cols);
    int64_t tile[TB_TILE][TB_TILE + 1];
    memset(hits, 0, (size_t)n);
    for (int64_t t = 0; t < tiles; t++) {
        int64_t b, r0, c0;
        tb_tile_at(t, rows, cols, &b, &r0, &c0);
        assert_true(b < pl->batch && r0 < rows && c0 < cols);
        for (int ty = 0; ty < TB_TILE_ROWS; ty++)
            for (int tx = 0; tx < TB_TILE; tx++)
                for (int k = ty; k < TB_TILE; k += TB_TILE_ROWS) {
                    int64_t r = r0 + k, c = c0 + tx;
                    if (r < rows && c < cols)
                        tile[k][tx] = b * rows * cols + r * cols + c;
                }
        for (int ty = 0; ty < TB_TILE_ROWS; ty++)
            for (int tx = 0; tx < TB_TILE; tx++)
                for (int k = ty; k < TB_TILE; k += TB_TILE_ROWS) {
                    int64_t c = c0 + k, r = r0 + tx;
                    if (c < cols && r < rows) {
                        int64_t o = b * rows * cols + c * rows + r;
                        assert_true(o >= 0 && o < n);
                        out[o] = tile[tx][k];
                        hits[o]++;
                    }
                }
    }
}

static int n_tiled;

static void check_plan(const int64_t *ish, int ndim, const int *perm)
{
    tb_perm_plan pl = {0};
    assert_int_equal(tb_perm_plan_make(&pl, ish, ndim, perm), 0);
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= ish[d];
    /* the merged output shape has the same number of elements */
    int64_t m = 1;
    for (int d = 0; d < pl.ndim; d++) {
        assert_true(pl.shape[d] != 1); /* 0 stays: an empty output */
        m *= pl.shape[d];
    }
    if (n > 0)
        assert_int_equal(m, n);
    for (int64_t i = 0; i < n; i++) {
        int64_t want = perm_brute(ish, ndim, perm, i);
        assert_int_equal(tb_perm_offset(&pl, i), want);
        if (pl.copy)
            assert_int_equal(want, i);
    }
    if (pl.tiled && n > 0) {
        n_tiled++;
        assert_int_equal(pl.batch * pl.rows * pl.cols, n);
        int64_t *out = malloc((size_t)n * sizeof *out);
        unsigned char *hits = malloc((size_t)n);
        assert_non_null(out);
        assert_non_null(hits);
        simulate_tiled(&pl, n, out, hits);
        for (int64_t i = 0; i < n; i++) {
            assert_int_equal(hits[i], 1);
            assert_int_equal(out[i], perm_brute(ish, ndim, perm, i));
        }
        free(out);
        free(hits);
    }
}

/* Every permutation of 0..k-1 via Heap's algorithm. */
static void each_perm(const int64_t *ish, int ndim)
{
    int perm[TB_GEOM_MAX_DIMS] = {0}, c[TB_GEOM_MAX_DIMS] = {0};
    for (int d = 0; d < ndim; d++)
        perm[d] = d;
    check_plan(ish, ndim, perm);
    int i = 1;
    while (i < ndim) {
        if (c[i] < i) {
            int j = i % 2 ? c[i] : 0;
            int t = perm[j];
            perm[j] = perm[i];
            perm[i] = t;
            check_plan(ish, ndim, perm);
            c[i]++;
            i = 1;
        } else {
            c[i] = 0;
            i++;
        }
    }
}

static void test_perm_plans(void **state)
{
    (void)state;
    static const int64_t shapes[][4] = {
        {1, 1, 1, 1}, {7, 1, 1, 1}, {33, 65, 1, 1}, {0, 5, 1, 1},
        {3, 1, 5, 1}, {2, 3, 4, 5}, {1, 7, 1, 9}, {2, 33, 1, 31},
        {5, 0, 3, 2}, {2, 40, 3, 35},
    };
    for (size_t s = 0; s < NELEM(shapes); s++)
        for (int ndim = 0; ndim <= 4; ndim++)
            each_perm(shapes[s], ndim);
    /* the rank-1 odd sizes (a copy) and 2-D odd transposes */
    static const int64_t odd[] = {0, 1, 7, 513, 4097};
    for (size_t a = 0; a < NELEM(odd); a++) {
        int64_t sh[2] = {odd[a], 1};
        each_perm(sh, 1);
        for (size_t b = 0; b < 3; b++) {
            int64_t s2[2] = {odd[a], odd[b]};
            each_perm(s2, 2);
        }
    }
    /* rank 6: a few permutations */
    const int64_t s6[6] = {2, 3, 1, 4, 2, 3};
    const int perms[][6] = {{5, 4, 3, 2, 1, 0}, {0, 1, 2, 3, 5, 4},
                            {1, 0, 2, 3, 4, 5}, {2, 0, 4, 1, 5, 3}};
    for (size_t k = 0; k < NELEM(perms); k++)
        check_plan(s6, 6, perms[k]);
    assert_true(n_tiled > 0);
}

/* Which plans take the tiled kernel: every 2-D transpose, a batched
 * one, NCHW -> NHWC; and which are copies. */
static void test_perm_policy(void **state)
{
    (void)state;
    tb_perm_plan pl = {0};
    const int64_t m2[2] = {256, 1024};
    const int t2[2] = {1, 0};
    assert_int_equal(tb_perm_plan_make(&pl, m2, 2, t2), 0);
    assert_true(pl.tiled);
    assert_int_equal(pl.rows, 256);
    assert_int_equal(pl.cols, 1024);
    const int64_t m3[3] = {8, 100, 30};
    const int t3[3] = {0, 2, 1};
    assert_int_equal(tb_perm_plan_make(&pl, m3, 3, t3), 0);
    assert_true(pl.tiled);
    assert_int_equal(pl.batch, 8);
    const int64_t nchw[4] = {32, 16, 24, 24};
    const int nhwc[4] = {0, 2, 3, 1};
    assert_int_equal(tb_perm_plan_make(&pl, nchw, 4, nhwc), 0);
    assert_true(pl.tiled);
    assert_int_equal(pl.batch, 32);
    assert_int_equal(pl.rows, 16);
    assert_int_equal(pl.cols, 24 * 24);
    /* swapping a size-1 dim moves nothing */
    const int64_t v[3] = {1, 50, 7};
    const int s[3] = {1, 0, 2};
    assert_int_equal(tb_perm_plan_make(&pl, v, 3, s), 0);
    assert_true(pl.copy);
    /* not a permutation */
    const int bad[3] = {0, 0, 2};
    assert_int_equal(tb_perm_plan_make(&pl, v, 3, bad), -1);
}

/* ---- pooling windows and im2col ----------------------------------------- */

static void test_pool_range(void **state)
{
    (void)state;
    for (int64_t in = 1; in <= 13; in++)
        for (int64_t k = 1; k <= 5; k++)
            for (int64_t s = 1; s <= 4; s++)
                for (int64_t pad = 0; 2 * pad <= k; pad++) {
                    int64_t on = tb_cu_window_out(in, k, s, pad, 1);
                    assert_int_equal(on, tb_window_out(in, k, s, pad, 1));
                    for (int64_t o = 0; o < on; o++) {
                        int64_t lo, hi, blo = -1, bhi = -1;
                        tb_pool_range(o, k, s, pad, in, &lo, &hi);
                        for (int64_t j = 0; j < k; j++) {
                            int64_t x = o * s - pad + j;
                            if (x < 0 || x >= in)
                                continue;
                            if (blo < 0)
                                blo = x;
                            bhi = x + 1;
                        }
                        /* pad <= k/2: never an empty window */
                        assert_true(blo >= 0);
                        assert_int_equal(lo, blo);
                        assert_int_equal(hi, bhi);
                    }
                }
    /* dilation, as conv2d uses it */
    for (int64_t in = 1; in <= 20; in++)
        for (int64_t k = 1; k <= 4; k++)
            for (int64_t d = 1; d <= 3; d++)
                for (int64_t pad = 0; pad <= 3; pad++)
                    assert_int_equal(tb_cu_window_out(in, k, 2, pad, d),
                                     tb_window_out(in, k, 2, pad, d));
}

static void check_conv(int64_t N, int64_t C, int64_t H, int64_t W, int64_t O,
                       int64_t KH, int64_t KW, int64_t s, int64_t pad,
                       int64_t dil)
{
    int64_t OH = tb_cu_window_out(H, KH, s, pad, dil);
    int64_t OW = tb_cu_window_out(W, KW, s, pad, dil);
    assert_int_equal(OH, tb_window_out(H, KH, s, pad, dil));
    assert_int_equal(OW, tb_window_out(W, KW, s, pad, dil));
    if (OH < 1 || OW < 1)
        return;
    int64_t rows = C * KH * KW, plane = OH * OW;
    int64_t *x = malloc((size_t)(N * C * H * W) * sizeof *x);
    int64_t *w = malloc((size_t)(O * rows) * sizeof *w);
    int64_t *col = malloc((size_t)(rows * plane) * sizeof *col);
    assert_true(x && w && col);
    for (int64_t i = 0; i < N * C * H * W; i++)
        x[i] = (i * 7 + 3) % 11 - 5;
    for (int64_t i = 0; i < O * rows; i++)
        w[i] = (i * 5 + 1) % 7 - 3;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = 0; j < plane; j++) {
                int64_t off = tb_im2col_src(r, j, H, W, KH, KW, OW, s, pad,
                                            dil);
                assert_true(off >= -1 && off < C * H * W);
                col[r * plane + j] = off < 0 ? 0 : x[n * C * H * W + off];
            }
        for (int64_t o = 0; o < O; o++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int64_t gemm = 0, direct = 0;
                    for (int64_t r = 0; r < rows; r++)
                        gemm += w[o * rows + r] * col[r * plane + oh * OW + ow];
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t i = 0; i < KH; i++)
                            for (int64_t j = 0; j < KW; j++) {
                                int64_t ih = oh * s - pad + i * dil;
                                int64_t iw = ow * s - pad + j * dil;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                direct += x[((n * C + c) * H + ih) * W + iw] *
                                          w[((o * C + c) * KH + i) * KW + j];
                            }
                    assert_int_equal(gemm, direct);
                }
    }
    free(x);
    free(w);
    free(col);
}

static void test_im2col(void **state)
{
    (void)state;
    check_conv(2, 1, 28, 28, 3, 3, 3, 1, 0, 1); /* the seeds' shape, small */
    check_conv(1, 3, 7, 9, 2, 3, 2, 2, 1, 1);
    check_conv(2, 2, 8, 5, 3, 2, 3, 1, 2, 2);
    check_conv(1, 1, 1, 1, 1, 1, 1, 1, 0, 1);
    check_conv(1, 2, 5, 5, 1, 5, 5, 3, 2, 1);
    check_conv(1, 1, 3, 3, 1, 3, 3, 1, 0, 2); /* window too wide: none */
}

/* ---- lane reductions: the kernel's fold, simulated -------------------- */

/* lanes.cu's max/min/argmax over one lane: thread t folds elements t,
 * t + B, ... (B = TB_CU_BLOCK), then the tree halves the threads; the
 * result must be the sequential answer of the reference. */
static void fold_lane(const double *x, int64_t len, int op, double *val,
                      int64_t *idx)
{
    enum { B = TB_CU_BLOCK };
    double sv[B];
    int64_t si[B];
    for (int t = 0; t < B; t++) {
        double acc = 0;
        int64_t at = -1;
        for (int64_t j = t; j < len; j += B) {
            if (at < 0) {
                acc = x[j];
                at = j;
            } else if (op == 2) {
                if (tb_argmax_better(x[j], j, acc, at)) {
                    acc = x[j];
                    at = j;
                }
            } else {
                acc = tb_nan_minmax(acc, x[j], op == 0);
            }
        }
        sv[t] = acc;
        si[t] = at;
    }
    for (int w = B / 2; w > 0; w /= 2)
        for (int t = 0; t < w; t++) {
            if (si[t + w] < 0)
                continue;
            if (si[t] < 0 ||
                (op == 2 && tb_argmax_better(sv[t + w], si[t + w], sv[t],
                                             si[t]))) {
                sv[t] = sv[t + w];
                si[t] = si[t + w];
            } else if (op != 2) {
                sv[t] = tb_nan_minmax(sv[t], sv[t + w], op == 0);
            }
        }
    *val = sv[0];
    *idx = si[0];
}

static void test_lane_fold(void **state)
{
    (void)state;
    static const int64_t lens[] = {1, 7, 255, 256, 257, 513, 4097};
    uint64_t rs = 12345;
    double *x = malloc(4097 * sizeof *x);
    assert_non_null(x);
    for (size_t li = 0; li < NELEM(lens); li++)
        for (int variant = 0; variant < 4; variant++) {
            int64_t len = lens[li];
            for (int64_t j = 0; j < len; j++) {
                /* few distinct values: many ties */
                x[j] = (double)(tb_splitmix64_next(&rs) % 9) - 4;
                if (variant >= 2 && tb_splitmix64_next(&rs) % 97 == 0)
                    x[j] = NAN;
            }
            if (variant == 3) /* a NaN late in the lane */
                x[len - 1] = NAN;
            /* sequential answers, as src/ops/ref.c computes them */
            double mx = x[0], mn = x[0];
            int64_t am = 0;
            for (int64_t j = 1; j < len; j++) {
                mx = isnan(mx) || isnan(x[j]) ? NAN : (x[j] > mx ? x[j] : mx);
                mn = isnan(mn) || isnan(x[j]) ? NAN : (x[j] < mn ? x[j] : mn);
            }
            for (int64_t j = 1; j < len && !isnan(x[am]); j++)
                if (x[j] > x[am] || isnan(x[j]))
                    am = j;
            double v;
            int64_t at;
            fold_lane(x, len, 0, &v, &at);
            assert_true(isnan(mx) ? isnan(v) : v == mx);
            fold_lane(x, len, 1, &v, &at);
            assert_true(isnan(mn) ? isnan(v) : v == mn);
            fold_lane(x, len, 2, &v, &at);
            assert_int_equal(at, am);
        }
    free(x);
}

/* ---- the random stream ---------------------------------------------------- */

static void test_rand_stream(void **state)
{
    (void)state;
    const uint64_t seeds[] = {0, 1, 2, 12345, UINT64_C(1) << 53};
    const uint64_t far[] = {UINT64_C(1) << 32, (UINT64_C(1) << 40) + 7,
                            UINT64_MAX - 1};
    for (size_t s = 0; s < NELEM(seeds); s++) {
        uint64_t key = tb_rand_key(seeds[s]);
        for (uint64_t i = 0; i < 4100 + NELEM(far); i++) {
            uint64_t at = i < 4100 ? i : far[i - 4100];
            assert_true(tb_cu_rand_uniform(key, at, -3.5, 2.25, 0) ==
                        tb_rand_uniform_f64(key, at, -3.5, 2.25));
            float lo = (float)-0.1, hi = (float)0.7;
            assert_true(tb_cu_rand_uniform(key, at, lo, hi, 1) ==
                        tb_rand_uniform_f32(key, at, lo, hi));
            for (int f32 = 0; f32 < 2; f32++) {
                double z[2], z0, z1;
                tb_rand_normal_pair(key, at, f32, z);
                tb_cu_rand_normal_pair(key, at, f32, &z0, &z1);
                /* f32: libm's on both sides, bit for bit; f64: rand.h's
                 * own Box-Muller (tb_rand_bm64) against libm's of the
                 * rounded angle 2 pi u2 (an absolute 4.4e-16 r apart) */
                if (f32)
                    assert_true(z0 == z[0] && z1 == z[1]);
                else
                    assert_true(fabs(z0 - z[0]) <= 1e-13 * (1 + fabs(z[0])) &&
                                fabs(z1 - z[1]) <= 1e-13 * (1 + fabs(z[1])));
            }
        }
    }
}

/* The stream as the kernels write it (create.cu, here on the host) equals
 * the reference kernels' values rounded as the op table says. */
static void check_rand_ref(tb_op_id id, tb_dtype dt, int64_t n, double a,
                           double b, double seed)
{
    const tb_op *op = tb_op_get(id);
    tb_params p;
    memset(&p, 0, sizeof p);
    const char *names[2] = {id == TB_OP_rand_uniform ? "low" : "mean",
                            id == TB_OP_rand_uniform ? "high" : "std"};
    assert_int_equal(tb_params_set(op, &p, names[0], a, NULL, 0), 0);
    assert_int_equal(tb_params_set(op, &p, names[1], b, NULL, 0), 0);
    assert_int_equal(tb_params_set(op, &p, "seed", seed, NULL, 0), 0);
    tb_shape sh = {1, {n}};
    tb_tensor hdr, out;
    tb_tensor_init(&hdr, dt, &sh);
    assert_int_equal(tb_tensor_create(&out, TB_F64, &sh), 0);
    int rc = id == TB_OP_rand_uniform ? tb_ref_rand_uniform(&hdr, &out, &p)
                                      : tb_ref_rand_normal(&hdr, &out, &p);
    assert_int_equal(rc, 0);
    const double *ref = out.data;
    int f32 = dt == TB_F32;
    double ka = f32 ? (double)(float)a : a, kb = f32 ? (double)(float)b : b;
    uint64_t key = tb_rand_key((uint64_t)seed);
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (id == TB_OP_rand_uniform) {
            v = tb_cu_rand_uniform(key, (uint64_t)i, ka, kb, f32);
        } else {
            double z0, z1;
            tb_cu_rand_normal_pair(key, (uint64_t)i / 2, f32, &z0, &z1);
            v = ka + kb * (i % 2 ? z1 : z0);
        }
        if (f32)
            assert_true((float)v == (float)ref[i]);
        else if (id == TB_OP_rand_normal) /* libm's against rand.h's */
            assert_true(fabs(v - ref[i]) <= 1e-13 * (fabs(ref[i]) + fabs(kb)));
        else
            assert_true(v == ref[i]);
    }
    tb_tensor_destroy(&out);
}

static void test_rand_vs_reference(void **state)
{
    (void)state;
    static const int64_t sizes[] = {1, 7, 513, 4097};
    for (size_t s = 0; s < NELEM(sizes); s++)
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            check_rand_ref(TB_OP_rand_uniform, (tb_dtype)dt, sizes[s], -2,
                           0.3, 7);
            check_rand_ref(TB_OP_rand_normal, (tb_dtype)dt, sizes[s], 0.5,
                           1.7, 99);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perm_params),
        cmocka_unit_test(test_perm_swap),
        cmocka_unit_test(test_perm_plans),
        cmocka_unit_test(test_perm_policy),
        cmocka_unit_test(test_pool_range),
        cmocka_unit_test(test_im2col),
        cmocka_unit_test(test_lane_fold),
        cmocka_unit_test(test_rand_stream),
        cmocka_unit_test(test_rand_vs_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
