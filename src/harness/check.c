#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/stats.h"

double tb_check_terms(const tb_op *op, double reduce_len)
{
    if (op->check == TB_CHECK_DISTRIBUTION && reduce_len > 1)
        return 1 / reduce_len;
    return reduce_len;
}

/* The largest absolute and relative errors seen so far. */
static void note_err(tb_check *out, double e, double want)
{
    if (e > out->max_abs_err)
        out->max_abs_err = e;
    if (want != 0 && e / fabs(want) > out->max_rel_err)
        out->max_rel_err = e / fabs(want);
}

void tb_check_outputs(const tb_tensor *got, const tb_tensor *ref, int n_out,
                      tb_tol tol, double reduce_len, tb_check *out)
{
    memset(out, 0, sizeof *out);
    out->rtol = tol.rtol;
    out->atol = tol.atol * sqrt(reduce_len > 0 ? reduce_len : 1);
    out->first_bad = -1;
    out->method = "full";
    for (int o = 0; o < n_out; o++) {
        int64_t n = tb_tensor_numel(&ref[o]);
        const double *r = ref[o].data;
        /* a result rounded into the dtype's subnormal range is off by up
         * to one subnormal spacing whatever its size (f16: 2^-24; a
         * softmax over 10^5 entries lands there); exact ops stay exact */
        const double atol =
            out->atol + (tol.rtol > 0 || tol.atol > 0
                             ? tb_dtype_tiny(got[o].dtype)
                             : 0);
        const tb_dtype dt = got[o].dtype;
        for (int64_t i = 0; i < n; i++) {
            double g = tb_tensor_get(&got[o], i), want = r[i];
            /* beyond the dtype's largest finite value (f16: 65504) the
             * correctly rounded result is an infinity */
            if (dt != TB_F64 && fabs(want) > 65504 && isfinite(want) &&
                isinf(tb_dtype_round(dt, want)))
                want = tb_dtype_round(dt, want);
            double e = fabs(g - want);
            bool ok;
            if (isnan(want) || isnan(g))
                ok = isnan(want) && isnan(g);
            else if (isinf(want) || isinf(g))
                ok = g == want;
            else {
                ok = e <= atol + out->rtol * fabs(want);
                note_err(out, e, want);
            }
            if (!ok) {
                if (out->first_bad < 0) {
                    out->first_bad = i;
                    out->first_bad_output = o;
                    out->first_bad_got = g;
                    out->first_bad_ref = want;
                }
                out->n_bad++;
            }
        }
    }
    out->passed = out->n_bad == 0;
}

/* Element i (row-major) of a host tensor, through its strides (a
 * layout's view). */
static double at(const tb_tensor *t, int64_t i)
{
    return tb_tensor_get(t, i);
}

void tb_check_matmul_projection(const tb_tensor *a, const tb_tensor *b,
                                const tb_tensor *c, tb_tol tol,
                                uint64_t seed, tb_check *out)
{
    memset(out, 0, sizeof *out);
    out->method = "projection";
    out->first_bad = -1;
    int nd = c->ndim;
    int64_t M = c->shape[nd - 2], N = c->shape[nd - 1];
    int64_t K = a->shape[nd - 1];
    int64_t batches = tb_tensor_numel(c) / (M * N);
    out->rtol = tol.rtol;
    out->atol = tol.atol * sqrt(K > 1 ? (double)K : 1);
    double *v = malloc((size_t)N * sizeof *v);
    double *bv = malloc((size_t)K * sizeof *bv);
    if (!v || !bv) {
        free(v);
        free(bv);
        out->n_bad = 1; /* cannot check: never pass silently */
        return;
    }
    tb_rng rng;
    tb_rng_seed(&rng, seed ^ 0x9e3779b97f4a7c15ull);
    for (int64_t j = 0; j < N; j++)
        v[j] = 2 * tb_rng_uniform(&rng) - 1;
    for (int64_t bt = 0; bt < batches; bt++) {
        int64_t ao = bt * M * K, bo = bt * K * N, co = bt * M * N;
        for (int64_t k = 0; k < K; k++) {
            double s = 0;
            for (int64_t j = 0; j < N; j++)
                s += at(b, bo + k * N + j) * v[j];
            bv[k] = s;
        }
        for (int64_t i = 0; i < M; i++) {
            double want = 0, got = 0, bound = 0;
            for (int64_t k = 0; k < K; k++)
                want += at(a, ao + i * K + k) * bv[k];
            for (int64_t j = 0; j < N; j++) {
                double cij = at(c, co + i * N + j);
                got += cij * v[j];
                bound += (out->atol + tb_dtype_tiny(c->dtype) +
                          out->rtol * fabs(cij)) * fabs(v[j]);
            }
            double e = fabs(got - want);
            bool ok = e <= bound;
            if (isnan(got) || isnan(want))
                ok = false;
            note_err(out, e, want);
            if (!ok) {
                if (out->first_bad < 0) {
                    out->first_bad = co + i * N;
                    out->first_bad_got = got;
                    out->first_bad_ref = want;
                }
                out->n_bad++;
            }
        }
    }
    free(v);
    free(bv);
    out->passed = out->n_bad == 0;
}

/* ---- factorizations -------------------------------------------------------
 * svd, qr and eigh outputs are not unique (signs; any basis of a repeated
 * singular value's or eigenvalue's subspace; Q and R of a rank-deficient
 * matrix), so they are checked by what defines them, in double:
 *   identity 0: the values (S, or eigh's w) against the reference's;
 *   identity 1: the reconstruction, A - U diag(S) Vt, A - Q R, or
 *               A V - V diag(w) (A: eigh's lower triangle mirrored);
 *   identity 2: orthonormality, U^T U - I and Vt Vt^T - I, Q^T Q - I,
 *               V^T V - I;
 *   identity 3: qr's R is upper triangular (below-diagonal entries 0).
 * Every entry of 0 and 1 must be within atol*sqrt(n) + rtol*scale, with
 * scale = n * max|A_ij| >= the 2-norm of A (the size of a backward-stable
 * algorithm's error, eps * ||A||, and by Weyl's theorem of the values'
 * error); every entry of 2 within atol*sqrt(n) + rtol; of 3 exactly 0. */

typedef struct {
    tb_check *c;
    double bound; /* of the current identity */
    int which;
} fz;

static void fz_entry(fz *f, int64_t idx, double err, double got,
                     double want)
{
    double e = fabs(err);
    bool ok = e <= f->bound; /* false for NaN */
    if (!isnan(e) && e > f->c->max_abs_err)
        f->c->max_abs_err = e;
    if (!ok) {
        if (f->c->first_bad < 0) {
            f->c->first_bad = idx;
            f->c->first_bad_output = f->which;
            f->c->first_bad_got = got;
            f->c->first_bad_ref = want;
        }
        f->c->n_bad++;
    }
}

/* G^T G - I for the k columns of G [r, k] (cols = true), or G G^T - I for
 * the k rows of G [k, r] (cols = false). */
static void fz_orthonormal(fz *f, const tb_tensor *g, int64_t r, int64_t k,
                           bool cols)
{
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < k; j++) {
            double s = 0;
            for (int64_t t = 0; t < r; t++)
                s += cols ? at(g, t * k + i) * at(g, t * k + j)
                          : at(g, i * r + t) * at(g, j * r + t);
            fz_entry(f, i * k + j, s - (i == j), s, i == j);
        }
}

void tb_check_factorization(const tb_op *op, const tb_tensor *a,
                            const tb_tensor *got, const tb_tensor *ref,
                            tb_tol tol, tb_check *out)
{
    memset(out, 0, sizeof *out);
    out->first_bad = -1;
    out->method = "identities";
    const int64_t m = a->shape[0], n = a->shape[1], k = m < n ? m : n;
    const int64_t big = m > n ? m : n;
    /* A in double; eigh reads its lower triangle only */
    double *A = malloc((size_t)(m * n) * sizeof *A);
    if (!A) {
        out->n_bad = 1; /* cannot check: not passed, nothing timed */
        return;
    }
    double amax = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            bool upper = op->id == TB_OP_eigh && j > i;
            double v = tb_tensor_get(a, upper ? j * n + i : i * n + j);
            A[i * n + j] = v;
            if (fabs(v) > amax)
                amax = fabs(v);
        }
    out->rtol = tol.rtol;
    out->atol = tol.atol * sqrt((double)big);
    const double scale = (double)big * amax;
    fz f = {out, out->atol + out->rtol * scale, 0};

    /* 0: the values */
    const tb_tensor *gv = op->id == TB_OP_svd ? &got[1] : &got[0];
    const tb_tensor *rv = op->id == TB_OP_svd ? &ref[1] : &ref[0];
    if (op->id != TB_OP_qr)
        for (int64_t i = 0; i < k; i++) {
            double g = at(gv, i), w = tb_tensor_get(rv, i);
            fz_entry(&f, i, g - w, g, w);
        }
    /* 1: reconstruction */
    f.which = 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            if (op->id == TB_OP_svd) { /* U [m,k] S [k] Vt [k,n] */
                for (int64_t t = 0; t < k; t++)
                    s += at(&got[0], i * k + t) * at(&got[1], t) *
                         at(&got[2], t * n + j);
                fz_entry(&f, i * n + j, A[i * n + j] - s, s, A[i * n + j]);
            } else if (op->id == TB_OP_qr) { /* Q [m,k] R [k,n] */
                for (int64_t t = 0; t < k; t++)
                    s += at(&got[0], i * k + t) * at(&got[1], t * n + j);
                fz_entry(&f, i * n + j, A[i * n + j] - s, s, A[i * n + j]);
            } else { /* (A V)_ij - V_ij w_j, V [n,n] columns */
                for (int64_t t = 0; t < n; t++)
                    s += A[i * n + t] * at(&got[1], t * n + j);
                double vw = at(&got[1], i * n + j) * at(&got[0], j);
                fz_entry(&f, i * n + j, s - vw, s, vw);
            }
        }
    /* 2: orthonormality */
    f.which = 2;
    f.bound = out->atol + out->rtol;
    if (op->id == TB_OP_svd) {
        fz_orthonormal(&f, &got[0], m, k, true);
        fz_orthonormal(&f, &got[2], n, k, false);
    } else if (op->id == TB_OP_qr) {
        fz_orthonormal(&f, &got[0], m, k, true);
    } else {
        fz_orthonormal(&f, &got[1], n, n, true);
    }
    /* 3: R upper triangular */
    f.which = 3;
    f.bound = 0;
    if (op->id == TB_OP_qr)
        for (int64_t i = 1; i < k; i++)
            for (int64_t j = 0; j < i && j < n; j++)
                fz_entry(&f, i * n + j, at(&got[1], i * n + j),
                         at(&got[1], i * n + j), 0);
    out->max_rel_err = scale > 0 ? out->max_abs_err / scale : 0;
    out->passed = out->n_bad == 0;
    free(A);
}
