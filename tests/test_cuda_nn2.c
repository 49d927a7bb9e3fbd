/* Host tests of the arithmetic of the CUDA module's second set of layer
 * and optimizer kernels (src/backends/cuda/nn2_geom.h, compiled here as
 * C11: no GPU): norm2.cu, attn_bw.cu and optim2.cu.
 *
 * Each function is checked against brute force, and each kernel's
 * schedule is simulated on the CPU in double, launch by launch, with the
 * header's functions doing the indexing, against the reference kernels
 * (src/ops/ref_*.c): batch_norm (training, with the running update, and
 * not), group_norm and both gradients through norm2.cu's sets (channels
 * via tb_cu_chan_at, pairs via tb_cu_pair_chan, group_norm_backward's
 * second launch via tb_cu_chan_pair); sdpa_backward through attn_bw.cu's
 * two launches (a block per query row saving M, l and Di, then a block
 * per key over the rows tb_cu_sdpa_row0 names, in tiles, heads in
 * chunks), counting that every allowed (row, key) pair enters dq once
 * and dk, dv once; lbfgs through optim2.cu's 2m + 1 passes
 * (tb_cu_lbfgs_pass_at) with pairs skipped for a small s.y.  The sums'
 * order differs from the reference's, so the comparisons allow double
 * rounding (1e-12 relative). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cuda/nn2_geom.h"
#include "backends/cuda/nn_geom.h"
#include "base/rng.h"
#include "ops/op.h"
#include "ops/optim_math.h"
#include "ops/ref.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static tb_tensor host_tensor(int ndim, const int64_t *dim)
{
    tb_shape s = {.ndim = ndim};
    for (int d = 0; d < ndim; d++)
        s.dim[d] = dim[d];
    tb_tensor t;
    assert_int_equal(tb_tensor_create(&t, TB_F64, &s), 0);
    return t;
}

static double *D(tb_tensor *t)
{
    return t->data;
}

static uint64_t rs = 2026;

static double urand(double lo, double hi)
{
    return lo + (hi - lo) * (double)(tb_splitmix64_next(&rs) >> 11) *
                    0x1p-53;
}

static void fill(tb_tensor *t, double lo, double hi)
{
    for (int64_t e = 0; e < tb_tensor_numel(t); e++)
        D(t)[e] = urand(lo, hi);
}

static tb_params params2(tb_op_id id, const char *n0, double v0,
                         const char *n1, double v1)
{
    const tb_op *op = tb_op_get(id);
    tb_params p = {0};
    char err[128];
    if (n0)
        assert_int_equal(tb_params_set(op, &p, n0, v0, err, sizeof err), 0);
    if (n1)
        assert_int_equal(tb_params_set(op, &p, n1, v1, err, sizeof err), 0);
    tb_params_defaults(op, &p);
    return p;
}

static void near_all(const double *got, const double *want, int64_t n,
                     const char *what)
{
    for (int64_t e = 0; e < n; e++)
        if (!(fabs(got[e] - want[e]) <= 1e-13 + 1e-12 * fabs(want[e])))
            fail_msg("%s: [%lld] %.17g, reference %.17g", what,
                     (long long)e, got[e], want[e]);
}

/* ---- index functions against brute force ------------------------------- */

static void test_nc_indices(void **state)
{
    (void)state;
    const int64_t shapes[][4] = {{1, 1, 1, 1}, {2, 3, 5, 1}, {3, 4, 1, 2},
                                 {2, 6, 7, 3}, {5, 8, 4, 4}, {1, 9, 2, 9}};
    for (size_t a = 0; a < NELEM(shapes); a++) {
        const int64_t N = shapes[a][0], C = shapes[a][1], S = shapes[a][2],
                      G = shapes[a][3], cg = C / G, n = N * C * S;
        int *seen = calloc((size_t)n, sizeof *seen);
        assert_non_null(seen);
        for (int64_t c = 0; c < C; c++) {
            int64_t e = 0; /* the cpu rows' order: samples, positions */
            for (int64_t i = 0; i < N; i++)
                for (int64_t k = 0; k < S; k++, e++) {
                    const int64_t o = tb_cu_chan_at(e, c, C, S);
                    assert_int_equal(o, (i * C + c) * S + k);
                    seen[o]++;
                    assert_int_equal(tb_cu_chan_pair(e, c, S, G, cg),
                                     i * G + c / cg);
                }
        }
        for (int64_t o = 0; o < n; o++)
            assert_int_equal(seen[o], 1);
        for (int64_t r = 0; r < N * G; r++) /* pair r's values */
            for (int64_t e = 0; e < cg * S; e++) {
                const int64_t o = r * cg * S + e;
                assert_int_equal(tb_cu_pair_chan(r, e, G, cg, S),
                                 o / S % C);
            }
        free(seen);
    }
}

static void test_sdpa_indices(void **state)
{
    (void)state;
    for (int64_t Sq = 1; Sq <= 9; Sq++)
        for (int64_t Sk = 1; Sk <= 9; Sk++)
            for (int causal = 0; causal <= 1; causal++)
                for (int64_t i = 0; i < Sq; i++)
                    for (int64_t j = 0; j < Sk; j++) {
                        const int sees = !tb_cu_masked(i, j, causal);
                        assert_int_equal(j < tb_cu_sdpa_keys(i, Sk, causal),
                                         sees);
                        assert_int_equal(tb_cu_sdpa_row0(j, Sq, causal) <= i,
                                         sees);
                        assert_true(tb_cu_sdpa_keys(i, Sk, causal) >= 1);
                    }
    const int64_t BHs[] = {1, 7, 64}, pers[] = {3, 30, 3000};
    const int64_t fits[] = {0, 2, 100, 540672};
    for (size_t a = 0; a < NELEM(BHs); a++)
        for (size_t b = 0; b < NELEM(pers); b++)
            for (size_t f = 0; f < NELEM(fits); f++) {
                const int64_t h = tb_cu_head_chunk(BHs[a], pers[b], fits[f]);
                assert_true(h >= 0 && h <= BHs[a]);
                assert_true(h * pers[b] <= fits[f]);
                if (h < BHs[a])
                    assert_true((h + 1) * pers[b] > fits[f]);
            }
    for (int64_t d = 1; d <= 4096; d *= 4) {
        const int64_t sm = tb_cu_sdpa_bw_smem(128, d, d + 3);
        assert_true(sm >= 128 + d + 4 && sm >= 256 + d + d + 3);
    }
}

static void test_red_layout(void **state)
{
    (void)state;
    const int64_t ns[] = {1, 255, 256, 257, 100000, INT64_C(1) << 32};
    const int64_t fits[] = {1, 3, 100000};
    for (size_t a = 0; a < NELEM(ns); a++)
        for (size_t f = 0; f < NELEM(fits); f++) {
            const int64_t b = tb_cu_red_blocks(ns[a], 256, 2112, fits[f]);
            assert_true(b >= 1 && b <= fits[f] && b <= 2112);
            assert_true(b == tb_cu_blocks_1d(ns[a], 256, 2112) ||
                        b == fits[f]);
        }
    const int64_t ms[] = {0, 1, 7, TB_LBFGS_MAX_HIST};
    const int64_t scr[] = {8, 600, 61440, 540672};
    for (size_t a = 0; a < NELEM(ms); a++)
        for (size_t s = 0; s < NELEM(scr); s++) {
            tb_cu_lbfgs_layout L;
            const int rc = tb_cu_lbfgs_plan(ms[a], 1000003, 256, 2112,
                                            scr[s], &L);
            const int64_t m = ms[a], per = m > 0 ? 2 * m : 1;
            assert_true(L.nb >= 1);
            assert_int_equal(L.need, L.part + L.nb * per);
            assert_int_equal(rc, L.need <= scr[s] ? 0 : -1);
            /* rho, al, c, gamma, the finished dot, partials: in order */
            assert_true(L.rho + m <= L.al && L.al + m <= L.c &&
                        L.c + m <= L.gamma && L.gamma + 2 <= L.part);
            if (rc == 0 && scr[s] >= 540672)
                assert_true(L.nb > 1);
        }
}

/* ---- norm2.cu's schedules ------------------------------------------------ */

/* The mean of a set's n values (at[e] offsets) and the squared
 * deviations' sum, as nc_stats. */
static double set_stats(const double *x, const int64_t *at, int64_t n,
                        double *ss)
{
    double s = 0, q = 0;
    for (int64_t e = 0; e < n; e++)
        s += x[at[e]];
    const double m = n > 0 ? s / (double)n : 0;
    for (int64_t e = 0; e < n; e++)
        q += (x[at[e]] - m) * (x[at[e]] - m);
    *ss = q;
    return m;
}

static void test_norm2_vs_reference(void **state)
{
    (void)state;
    /* N, C, H, W (S = H x W), G */
    const int64_t shapes[][5] = {{2, 3, 5, 1, 3}, {4, 4, 1, 1, 2},
                                 {3, 6, 7, 3, 3}, {1, 8, 3, 3, 4},
                                 {2, 2, 1, 1, 1}};
    int cases = 0;
    for (size_t a = 0; a < NELEM(shapes); a++) {
        const int64_t N = shapes[a][0], C = shapes[a][1], H = shapes[a][2],
                      W = shapes[a][3], S = H * W, G = shapes[a][4];
        const int64_t cg = C / G, n = N * S, len = cg * S;
        const int64_t xs[4] = {N, C, H, W}, cs[1] = {C}, rs2[2] = {2, C};
        tb_tensor x = host_tensor(4, xs), g = host_tensor(4, xs);
        tb_tensor w = host_tensor(1, cs), b = host_tensor(1, cs);
        tb_tensor run = host_tensor(2, rs2);
        tb_tensor y = host_tensor(4, xs), dx = host_tensor(4, xs);
        tb_tensor dw = host_tensor(1, cs), db = host_tensor(1, cs);
        tb_tensor ro = host_tensor(2, rs2);
        fill(&x, -1, 1);
        fill(&g, -1, 1);
        fill(&w, -1, 1);
        fill(&b, -1, 1);
        fill(&run, 0.25, 1);
        const double eps = 1e-5, mom = 0.1;
        int64_t *at = malloc((size_t)(n > len ? n : len) * sizeof *at);
        double *got = malloc((size_t)(N * C * S + 2 * C) * sizeof *got);
        double *st = malloc((size_t)(2 * N * G) * sizeof *st);
        assert_non_null(at);
        assert_non_null(got);
        assert_non_null(st);
        const double *X = D(&x), *Gr = D(&g), *Wt = D(&w), *Bs = D(&b);
        /* batch_norm, training and not: k_batch_norm */
        for (int tr = 0; tr <= 1; tr++, cases++) {
            tb_params p = params2(TB_OP_batch_norm, "training", tr, NULL, 0);
            tb_tensor in[4] = {x, w, b, run}, out[2] = {y, ro};
            assert_int_equal(tb_ref_batch_norm(in, out, &p), 0);
            for (int64_t c = 0; c < C; c++) {
                for (int64_t e = 0; e < n; e++)
                    at[e] = tb_cu_chan_at(e, c, C, S);
                double rm = D(&run)[c], rv = D(&run)[C + c], mean = rm,
                       var = rv, ss;
                if (tr) {
                    mean = set_stats(X, at, n, &ss);
                    var = ss / (double)n;
                    rm = (1 - mom) * rm + mom * mean;
                    rv = (1 - mom) * rv + mom * (ss / (double)(n - 1));
                }
                const double sc = Wt[c] / sqrt(var + eps);
                for (int64_t e = 0; e < n; e++)
                    got[at[e]] = (X[at[e]] - mean) * sc + Bs[c];
                got[N * C * S + c] = rm;
                got[N * C * S + C + c] = rv;
            }
            near_all(got, D(&y), N * C * S, "batch_norm y");
            near_all(got + N * C * S, D(&ro), 2 * C, "batch_norm running");
        }
        /* group_norm: k_group_norm over pairs */
        {
            tb_params p = params2(TB_OP_group_norm, "num_groups", (double)G,
                                  NULL, 0);
            tb_tensor in[3] = {x, w, b};
            assert_int_equal(tb_ref_group_norm(in, &y, &p), 0);
            for (int64_t r = 0; r < N * G; r++) {
                for (int64_t e = 0; e < len; e++)
                    at[e] = r * len + e;
                double ss;
                const double mean = set_stats(X, at, len, &ss);
                const double rstd = 1 / sqrt(ss / (double)len + eps);
                for (int64_t e = 0; e < len; e++) {
                    const int64_t c = tb_cu_pair_chan(r, e, G, cg, S);
                    got[r * len + e] =
                        (X[r * len + e] - mean) * (rstd * Wt[c]) + Bs[c];
                }
            }
            near_all(got, D(&y), N * C * S, "group_norm");
            cases++;
        }
        /* batch_norm_backward: k_batch_norm_bw */
        {
            tb_params p = params2(TB_OP_batch_norm_backward, NULL, 0, NULL,
                                  0);
            tb_tensor in[3] = {g, x, w}, out[3] = {dx, dw, db};
            assert_int_equal(tb_ref_batch_norm_backward(in, out, &p), 0);
            for (int64_t c = 0; c < C; c++) {
                for (int64_t e = 0; e < n; e++)
                    at[e] = tb_cu_chan_at(e, c, C, S);
                double ss, sg = 0, sgx = 0;
                const double mean = set_stats(X, at, n, &ss);
                const double rstd = 1 / sqrt(ss / (double)n + eps);
                for (int64_t e = 0; e < n; e++) {
                    sg += Gr[at[e]];
                    sgx += Gr[at[e]] * ((X[at[e]] - mean) * rstd);
                }
                const double wr = Wt[c] * rstd;
                for (int64_t e = 0; e < n; e++) {
                    const double xh = (X[at[e]] - mean) * rstd;
                    got[at[e]] = wr * (Gr[at[e]] - sg / (double)n -
                                       xh * (sgx / (double)n));
                }
                got[N * C * S + c] = sgx;
                got[N * C * S + C + c] = sg;
            }
            near_all(got, D(&dx), N * C * S, "batch_norm_backward dx");
            near_all(got + N * C * S, D(&dw), C, "batch_norm_backward dw");
            near_all(got + N * C * S + C, D(&db), C,
                     "batch_norm_backward db");
            cases++;
        }
        /* group_norm_backward: k_group_norm_bw_dx, then _dw */
        {
            tb_params p = params2(TB_OP_group_norm_backward, "num_groups",
                                  (double)G, NULL, 0);
            tb_tensor in[3] = {g, x, w}, out[3] = {dx, dw, db};
            assert_int_equal(tb_ref_group_norm_backward(in, out, &p), 0);
            for (int64_t r = 0; r < N * G; r++) {
                for (int64_t e = 0; e < len; e++)
                    at[e] = r * len + e;
                double ss, sgh = 0, sghx = 0;
                const double mean = set_stats(X, at, len, &ss);
                const double rstd = 1 / sqrt(ss / (double)len + eps);
                for (int64_t e = 0; e < len; e++) {
                    const double gh =
                        Gr[r * len + e] * Wt[tb_cu_pair_chan(r, e, G, cg, S)];
                    sgh += gh;
                    sghx += gh * ((X[r * len + e] - mean) * rstd);
                }
                for (int64_t e = 0; e < len; e++) {
                    const double wc = Wt[tb_cu_pair_chan(r, e, G, cg, S)];
                    const double xh = (X[r * len + e] - mean) * rstd;
                    got[r * len + e] =
                        rstd * (Gr[r * len + e] * wc - sgh / (double)len -
                                xh * (sghx / (double)len));
                }
                st[2 * r] = mean;
                st[2 * r + 1] = rstd;
            }
            for (int64_t c = 0; c < C; c++) {
                double sw = 0, sb = 0;
                for (int64_t e = 0; e < n; e++) {
                    const int64_t o = tb_cu_chan_at(e, c, C, S);
                    const int64_t r = tb_cu_chan_pair(e, c, S, G, cg);
                    sw += Gr[o] * ((X[o] - st[2 * r]) * st[2 * r + 1]);
                    sb += Gr[o];
                }
                got[N * C * S + c] = sw;
                got[N * C * S + C + c] = sb;
            }
            near_all(got, D(&dx), N * C * S, "group_norm_backward dx");
            near_all(got + N * C * S, D(&dw), C, "group_norm_backward dw");
            near_all(got + N * C * S + C, D(&db), C,
                     "group_norm_backward db");
            cases++;
        }
        free(at);
        free(got);
        free(st);
        tb_tensor *all[] = {&x, &g, &w, &b, &run, &y, &dx, &dw, &db, &ro};
        for (size_t i = 0; i < NELEM(all); i++)
            tb_tensor_destroy(all[i]);
    }
    print_message("# %d norm2.cu schedules simulated against the "
                  "references\n",
                  cases);
}

/* ---- attn_bw.cu's schedule ----------------------------------------------- */

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t d = 0; d < n; d++)
        s += a[d] * b[d];
    return s;
}

/* k_sdpa_bw_q, then k_sdpa_bw_kv, heads in chunks of hc, tiles of nt;
 * uq[i * Sk + j], ukv[...] count the (row, key) pairs each used. */
static void sim_sdpa_bw(const double *g, const double *q, const double *k,
                        const double *v, double *dq, double *dk, double *dv,
                        int64_t BH, int64_t Sq, int64_t Sk, int64_t Dd,
                        int64_t Dv, int causal, double scale, int64_t nt,
                        int64_t hc, int *uq, int *ukv)
{
    double *st = malloc((size_t)(3 * hc * Sq) * sizeof *st);
    double *w = malloc((size_t)(2 * nt) * sizeof *w);
    assert_non_null(st);
    assert_non_null(w);
    for (int64_t h0 = 0; h0 < BH; h0 += hc) {
        const int64_t nh = BH - h0 < hc ? BH - h0 : hc;
        for (int64_t t = 0; t < nh * Sq; t++) {
            const int64_t h = h0 + t / Sq, i = t % Sq;
            const double *qi = q + (h * Sq + i) * Dd;
            const double *gi = g + (h * Sq + i) * Dv;
            const double *kh = k + h * Sk * Dd, *vh = v + h * Sk * Dv;
            const int64_t nk = tb_cu_sdpa_keys(i, Sk, causal);
            double mx = -INFINITY, l = 0, pd = 0;
            for (int64_t j = 0; j < nk; j++) {
                const double s = dot(qi, kh + j * Dd, Dd) * scale;
                mx = s > mx ? s : mx;
            }
            for (int64_t j = 0; j < nk; j++) {
                const double e = exp(dot(qi, kh + j * Dd, Dd) * scale - mx);
                l += e;
                pd += e * dot(gi, vh + j * Dv, Dv);
            }
            const double di = pd / l;
            for (int64_t d = 0; d < Dd; d++)
                dq[(h * Sq + i) * Dd + d] = 0;
            for (int64_t j0 = 0; j0 < nk; j0 += nt) {
                const int64_t kn = nk - j0 < nt ? nk - j0 : nt;
                for (int64_t c = 0; c < kn; c++) {
                    const int64_t j = j0 + c;
                    const double p =
                        exp(dot(qi, kh + j * Dd, Dd) * scale - mx) / l;
                    w[c] = p * (dot(gi, vh + j * Dv, Dv) - di) * scale;
                    uq[(h * Sq + i) * Sk + j]++;
                }
                for (int64_t d = 0; d < Dd; d++)
                    for (int64_t c = 0; c < kn; c++)
                        dq[(h * Sq + i) * Dd + d] +=
                            w[c] * kh[(j0 + c) * Dd + d];
            }
            st[3 * t] = mx;
            st[3 * t + 1] = l;
            st[3 * t + 2] = di;
        }
        for (int64_t t = 0; t < nh * Sk; t++) {
            const int64_t hl = t / Sk, h = h0 + hl, j = t % Sk;
            const double *kj = k + (h * Sk + j) * Dd;
            const double *vj = v + (h * Sk + j) * Dv;
            const double *qh = q + h * Sq * Dd, *gh = g + h * Sq * Dv;
            double *dkj = dk + (h * Sk + j) * Dd, *dvj = dv + (h * Sk + j) * Dv;
            for (int64_t d = 0; d < Dd; d++)
                dkj[d] = 0;
            for (int64_t e = 0; e < Dv; e++)
                dvj[e] = 0;
            for (int64_t i0 = tb_cu_sdpa_row0(j, Sq, causal); i0 < Sq;
                 i0 += nt) {
                const int64_t rn = Sq - i0 < nt ? Sq - i0 : nt;
                for (int64_t r = 0; r < rn; r++) {
                    const int64_t i = i0 + r;
                    const double *si = st + 3 * (hl * Sq + i);
                    const double p =
                        exp(dot(qh + i * Dd, kj, Dd) * scale - si[0]) / si[1];
                    w[r] = p;
                    w[nt + r] = p * (dot(gh + i * Dv, vj, Dv) - si[2]) * scale;
                    ukv[(h * Sq + i) * Sk + j]++;
                }
                for (int64_t d = 0; d < Dd; d++)
                    for (int64_t r = 0; r < rn; r++)
                        dkj[d] += w[nt + r] * qh[(i0 + r) * Dd + d];
                for (int64_t e = 0; e < Dv; e++)
                    for (int64_t r = 0; r < rn; r++)
                        dvj[e] += w[r] * gh[(i0 + r) * Dv + e];
            }
        }
    }
    free(st);
    free(w);
}

static void test_sdpa_bw_vs_reference(void **state)
{
    (void)state;
    const int64_t seqs[][2] = {{1, 1}, {7, 7}, {33, 20}, {5, 40}, {40, 5}};
    const int64_t nts[] = {1, 4, 128}, hcs[] = {1, 2, 5};
    int cases = 0;
    for (size_t a = 0; a < NELEM(seqs); a++)
        for (size_t b = 0; b < NELEM(nts); b++)
            for (int causal = 0; causal <= 1; causal++, cases++) {
                const int64_t H = 3, Sq = seqs[a][0], Sk = seqs[a][1],
                              Dd = 5, Dv = 3, hc = hcs[(a + b) % 3];
                const int64_t gs[4] = {1, H, Sq, Dv}, qs[4] = {1, H, Sq, Dd},
                              ks[4] = {1, H, Sk, Dd}, vs[4] = {1, H, Sk, Dv};
                tb_tensor in[4] = {host_tensor(4, gs), host_tensor(4, qs),
                                   host_tensor(4, ks), host_tensor(4, vs)};
                tb_tensor ref[3] = {host_tensor(4, qs), host_tensor(4, ks),
                                    host_tensor(4, vs)};
                for (int i = 0; i < 4; i++)
                    fill(&in[i], -1, 1);
                tb_params p = params2(TB_OP_sdpa_backward, "causal", causal,
                                      NULL, 0);
                assert_int_equal(tb_ref_sdpa_backward(in, ref, &p), 0);
                double *got[3];
                for (int i = 0; i < 3; i++) {
                    got[i] = malloc((size_t)tb_tensor_numel(&ref[i]) *
                                    sizeof(double));
                    assert_non_null(got[i]);
                }
                int *uq = calloc((size_t)(H * Sq * Sk), sizeof *uq);
                int *ukv = calloc((size_t)(H * Sq * Sk), sizeof *ukv);
                assert_non_null(uq);
                assert_non_null(ukv);
                sim_sdpa_bw(D(&in[0]), D(&in[1]), D(&in[2]), D(&in[3]),
                            got[0], got[1], got[2], H, Sq, Sk, Dd, Dv,
                            causal, 1 / sqrt((double)Dd), nts[b], hc, uq,
                            ukv);
                for (int64_t h = 0; h < H; h++)
                    for (int64_t i = 0; i < Sq; i++)
                        for (int64_t j = 0; j < Sk; j++) {
                            const int want = !tb_cu_masked(i, j, causal);
                            assert_int_equal(uq[(h * Sq + i) * Sk + j], want);
                            assert_int_equal(ukv[(h * Sq + i) * Sk + j],
                                             want);
                        }
                near_all(got[0], D(&ref[0]), tb_tensor_numel(&ref[0]), "dq");
                near_all(got[1], D(&ref[1]), tb_tensor_numel(&ref[1]), "dk");
                near_all(got[2], D(&ref[2]), tb_tensor_numel(&ref[2]), "dv");
                free(uq);
                free(ukv);
                for (int i = 0; i < 3; i++) {
                    free(got[i]);
                    tb_tensor_destroy(&ref[i]);
                }
                for (int i = 0; i < 4; i++)
                    tb_tensor_destroy(&in[i]);
            }
    print_message("# %d sdpa_backward schedules simulated against the "
                  "reference\n",
                  cases);
}

/* ---- optim2.cu's lbfgs passes -------------------------------------------- */

static void test_lbfgs_passes_vs_reference(void **state)
{
    (void)state;
    const int64_t ms[] = {1, 2, 5, 9};
    const int64_t n = 37;
    int cases = 0, skipped = 0;
    for (size_t a = 0; a < NELEM(ms); a++)
        for (int variant = 0; variant < 3; variant++, cases++) {
            const int64_t m = ms[a];
            const int64_t ps[1] = {n}, hs[2] = {m, n};
            tb_tensor in[4] = {host_tensor(1, ps), host_tensor(1, ps),
                               host_tensor(2, hs), host_tensor(2, hs)};
            tb_tensor ref[2] = {host_tensor(1, ps), host_tensor(1, ps)};
            fill(&in[0], -1, 1);
            fill(&in[1], -1, 1);
            fill(&in[2], -1, 1);
            for (int64_t e = 0; e < m * n; e++) /* y near s: s.y > 0 */
                D(&in[3])[e] = D(&in[2])[e] + urand(-0.3, 0.3);
            /* variant 1: the oldest pair skipped; 2: every odd one */
            for (int64_t k = 0; k < m; k++)
                if ((variant == 1 && k == 0) || (variant == 2 && k % 2))
                    for (int64_t e = 0; e < n; e++)
                        D(&in[3])[k * n + e] = -D(&in[2])[k * n + e];
            tb_params p = params2(TB_OP_lbfgs, "lr", 0.5, NULL, 0);
            assert_int_equal(tb_ref_lbfgs(in, ref, &p), 0);
            const double *S = D(&in[2]), *Y = D(&in[3]);
            double rho[16], al[16], cc[16], gamma = 1;
            for (int64_t k = 0; k < m; k++) { /* k_lbfgs_rho */
                const double ys = dot(S + k * n, Y + k * n, n);
                rho[k] = ys > TB_LBFGS_MIN_YS ? 1 / ys : 0;
                if (rho[k] != 0)
                    gamma = ys / dot(Y + k * n, Y + k * n, n);
                skipped += rho[k] == 0;
            }
            double q[37], po[37];
            assert_int_equal(tb_cu_lbfgs_passes(m), 2 * m + 1);
            int steps = 0;
            for (int64_t t = 0; t < tb_cu_lbfgs_passes(m); t++) {
                const tb_cu_lbfgs_pass s = tb_cu_lbfgs_pass_at(m, t);
                assert_true(s.ax_k >= 0 && s.ax_k < (m ? m : 1));
                assert_true(s.dot_k >= 0 && s.dot_k < (m ? m : 1));
                const double *av = s.ax == TB_CU_LB_Y   ? Y + s.ax_k * n
                                   : s.ax == TB_CU_LB_S ? S + s.ax_k * n
                                                        : NULL;
                const int ax = av && rho[s.ax_k] != 0;
                const double ca = !ax                   ? 0
                                  : s.ax == TB_CU_LB_Y ? -al[s.ax_k]
                                                       : cc[s.ax_k];
                double d = 0;
                const double *dv = s.dot == TB_CU_LB_S   ? S + s.dot_k * n
                                   : s.dot == TB_CU_LB_Y ? Y + s.dot_k * n
                                                         : NULL;
                for (int64_t i = 0; i < n; i++) {
                    double qi = s.init ? -D(&in[1])[i] : q[i];
                    if (ax)
                        qi += ca * av[i];
                    if (s.scale)
                        qi *= gamma;
                    q[i] = qi;
                    if (dv)
                        d += dv[i] * qi;
                    if (s.step)
                        po[i] = D(&in[0])[i] + 0.5 * qi;
                }
                if (s.dot == TB_CU_LB_S) /* k_lbfgs_fin */
                    al[s.dot_k] = d * rho[s.dot_k];
                else if (s.dot == TB_CU_LB_Y)
                    cc[s.dot_k] = al[s.dot_k] - d * rho[s.dot_k];
                steps += s.step;
            }
            assert_int_equal(steps, 1);
            near_all(po, D(&ref[0]), n, "lbfgs p");
            near_all(q, D(&ref[1]), n, "lbfgs d");
            for (int i = 0; i < 4; i++)
                tb_tensor_destroy(&in[i]);
            for (int i = 0; i < 2; i++)
                tb_tensor_destroy(&ref[i]);
        }
    assert_true(skipped > 0);
    /* no history: q = -g, times gamma 1, the step; nothing to dot */
    const tb_cu_lbfgs_pass z = tb_cu_lbfgs_pass_at(0, 0);
    assert_int_equal(tb_cu_lbfgs_passes(0), 1);
    assert_true(z.init && z.scale && z.step && z.ax == TB_CU_LB_NONE &&
                z.dot == TB_CU_LB_NONE);
    print_message("# %d lbfgs pass schedules (%d pairs skipped) against "
                  "tb_ref_lbfgs\n",
                  cases, skipped);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nc_indices),
        cmocka_unit_test(test_sdpa_indices),
        cmocka_unit_test(test_red_layout),
        cmocka_unit_test(test_norm2_vs_reference),
        cmocka_unit_test(test_sdpa_bw_vs_reference),
        cmocka_unit_test(test_lbfgs_passes_vs_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
