/* Reference kernels of svd, qr and eigh, and their sign conventions.
 *
 * Written from the textbook algorithms (Golub & Van Loan, Matrix
 * Computations, 4th ed.), independent of LAPACK, in double precision:
 *   - qr: Householder QR (sec. 5.2.2), thin Q accumulated backwards;
 *   - eigh: cyclic Jacobi (sec. 8.5.2) on the symmetric matrix built from
 *     the lower triangle, eigenvectors accumulated from the rotations;
 *   - svd: Householder QR of A (of A^T when m < n, so the worked matrix
 *     is tall), then the two-sided (Kogbetliantz) Jacobi SVD of its
 *     square triangle (sec. 8.6.3); not the one-sided Jacobi of the cpu
 *     backend's kernel, so that a fault of that method shows up.
 * Jacobi methods are slow (O(n^3) per sweep, ~6-10 sweeps) but simple
 * and at least as accurate as QR-based LAPACK drivers (Demmel & Veselic
 * 1992), which is what a reference needs; they are never timed.
 *
 * Inputs of any dtype and strides are copied into a contiguous double
 * buffer first (tb_tensor_get); non-finite inputs give TB_ENUMERIC (a
 * Jacobi sweep on NaN would never converge), an iteration limit that is
 * hit gives TB_ECONVERGE.  qr and svd work on the matrix scaled by a
 * power of two to a largest entry in [1, 2) and scale R and the singular
 * values back (unit_scale): entries near 2^+-600 would overflow or
 * underflow the squares they form.  Workspace comes from the tracked
 * allocator. */
#include "ref.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "../base/error.h"

/* Sweeps before giving up: Jacobi converges quadratically, typically in
 * under 10 sweeps for n <= 1000; 60 only fails on a broken input. */
#define MAX_SWEEPS 60

/* Output o must be a contiguous f64 tensor of the given 1-D/2-D shape. */
static int check_out(const tb_tensor *t, int ndim, int64_t d0, int64_t d1)
{
    if (t->dtype != TB_F64)
        return TB_EDTYPE;
    if (t->ndim != ndim || t->shape[0] != d0 ||
        (ndim == 2 && t->shape[1] != d1))
        return TB_ESHAPE;
    if (!tb_tensor_is_contiguous(t) || !t->data)
        return TB_EINVAL;
    return 0;
}

/* Copy 2-D input `a` (any dtype/strides) into a new row-major double
 * buffer; *out is NULL on error.  Returns TB_ENUMERIC on NaN or inf. */
static int load_matrix(const tb_tensor *a, double **out, int64_t *m,
                       int64_t *n)
{
    *out = NULL;
    if ((unsigned)a->dtype >= TB_DTYPE_COUNT)
        return TB_EDTYPE;
    if (a->ndim != 2 || a->shape[0] < 1 || a->shape[1] < 1)
        return TB_ESHAPE;
    if (!a->data)
        return TB_EINVAL;
    *m = a->shape[0];
    *n = a->shape[1];
    int64_t len = *m * *n;
    double *x = tb_alloc((size_t)len * sizeof *x);
    if (!x)
        return TB_ENOMEM;
    for (int64_t i = 0; i < len; i++) {
        x[i] = tb_tensor_get(a, i);
        if (!isfinite(x[i])) {
            tb_free(x);
            return TB_ENUMERIC;
        }
    }
    *out = x;
    return 0;
}

/* The frame of the entry points: in[0] loaded as a row-major double
 * matrix a (m x n), body's code returned, a freed after it. */
typedef int (*linalg_body)(double *a, int64_t m, int64_t n, tb_tensor *out);
static int with_matrix(const tb_tensor *in, tb_tensor *out,
                       linalg_body body)
{
    double *a;
    int64_t m, n;
    int rc = load_matrix(&in[0], &a, &m, &n);
    if (rc)
        return rc;
    rc = body(a, m, n, out);
    tb_free(a);
    return rc;
}

/* The Jacobi rotation (c, s) that zeroes the off-diagonal of the 2x2
 * symmetric [[app, apq], [apq, aqq]] (apq != 0), the smaller of the two
 * angles: t = sign(tau) / (|tau| + sqrt(1 + tau^2)). */
static void jacobi_rot(double app, double aqq, double apq, double *c,
                       double *s)
{
    double tau = (aqq - app) / (2 * apq);
    double t;
    if (fabs(tau) > 1e150) /* tau^2 would overflow; t ~ 1 / (2 tau) */
        t = 0.5 / tau;
    else
        t = (tau >= 0 ? 1.0 : -1.0) / (fabs(tau) + sqrt(1 + tau * tau));
    *c = 1 / sqrt(1 + t * t);
    *s = t * *c;
}

/* a's len entries scaled by a power of two (exact, but for entries that
 * fall below DBL_MIN, far under the result's rounding) so that the
 * largest is in [1, 2): the products of entries in the Jacobi sweeps
 * (|app| |aqq|, the Frobenius norm's) and the Householder vectors'
 * squares (v^T v) then neither overflow (entries near 2^600) nor
 * underflow (near 2^-600).  Returns the exponent that scales the
 * results back (R, the singular values); 0 for a zero or non-finite a. */
static int unit_scale(double *a, int64_t len)
{
    double amax = 0;
    for (int64_t i = 0; i < len; i++)
        amax = fmax(amax, fabs(a[i]));
    if (!(amax > 0) || !isfinite(amax))
        return 0;
    const int e = ilogb(amax);
    for (int64_t i = 0; i < len; i++)
        a[i] = ldexp(a[i], -e);
    return e;
}

/* ---- qr ----------------------------------------------------------------- */

/* Column c of y (rows j..m-1, row stride ld) <- (I - beta v v^T) y,
 * v the reflector in column j of the m x k array v, rows j..m-1. */
static void reflect(const double *v, int64_t k, int64_t j, int64_t m,
                    double beta, double *y, int64_t ld, int64_t c)
{
    double d = 0;
    for (int64_t i = j; i < m; i++)
        d += v[i * k + j] * y[i * ld + c];
    d *= beta;
    for (int64_t i = j; i < m; i++)
        y[i * ld + c] -= d * v[i * k + j];
}

/* Householder QR (Golub & Van Loan sec. 5.2.2) of the m x n row-major
 * matrix a (overwritten): q (m x k) and r (k x n), row-major, k =
 * min(m, n), Q thin, accumulated backwards.  0 or TB_ENOMEM. */
static int householder_qr(double *a, int64_t m, int64_t n, double *q,
                          double *r)
{
    const int64_t k = m < n ? m : n;
    /* v[j]: Householder vector j in rows j..m-1 (m x k, row-major);
     * beta[j] = 2 / (v^T v), 0 for an identity reflector. */
    double *v = tb_alloc((size_t)(m * k + k) * sizeof *v);
    if (!v)
        return TB_ENOMEM;
    double *beta = v + m * k;
    memset(v, 0, (size_t)(m * k) * sizeof *v);
    for (int64_t j = 0; j < k; j++) {
        double norm = 0;
        for (int64_t i = j; i < m; i++)
            norm = hypot(norm, a[i * n + j]);
        double x0 = a[j * n + j];
        /* alpha of the opposite sign to x0: v0 = x0 - alpha never
         * cancels. */
        double alpha = x0 >= 0 ? -norm : norm;
        for (int64_t i = j; i < m; i++)
            v[i * k + j] = a[i * n + j];
        v[j * k + j] = x0 - alpha;
        double vv = 0;
        for (int64_t i = j; i < m; i++)
            vv += v[i * k + j] * v[i * k + j];
        beta[j] = vv > 0 ? 2 / vv : 0;
        for (int64_t c = j; c < n; c++) /* A <- (I - beta v v^T) A */
            reflect(v, k, j, m, beta[j], a, n, c);
    }
    for (int64_t i = 0; i < k; i++)
        for (int64_t c = 0; c < n; c++)
            r[i * n + c] = c >= i ? a[i * n + c] : 0;
    /* Q = H_0 ... H_{k-1} I[:, :k], applied from the last reflector. */
    for (int64_t i = 0; i < m; i++)
        for (int64_t c = 0; c < k; c++)
            q[i * k + c] = i == c;
    for (int64_t j = k - 1; j >= 0; j--)
        for (int64_t c = 0; c < k; c++)
            reflect(v, k, j, m, beta[j], q, k, c);
    tb_free(v);
    return 0;
}

static int qr_of(double *a, int64_t m, int64_t n, tb_tensor *out)
{
    int64_t k = m < n ? m : n;
    int rc;
    if ((rc = check_out(&out[0], 2, m, k)) ||
        (rc = check_out(&out[1], 2, k, n)))
        return rc;
    const int scale = unit_scale(a, m * n);
    double *r = out[1].data;
    if (!(rc = householder_qr(a, m, n, out[0].data, r)))
        for (int64_t i = 0; i < k * n; i++)
            r[i] = ldexp(r[i], scale);
    return rc;
}

int tb_ref_qr(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return with_matrix(in, out, qr_of);
}

/* ---- eigh --------------------------------------------------------------- */

static int eigh_of(double *a, int64_t m, int64_t n, tb_tensor *out)
{
    int rc;
    if (m != n)
        return TB_ESHAPE;
    if ((rc = check_out(&out[0], 1, n, 0)) ||
        (rc = check_out(&out[1], 2, n, n)))
        return rc;
    double *v = tb_alloc((size_t)(n * n) * sizeof *v);
    if (!v)
        return TB_ENOMEM;
    /* The lower triangle defines the matrix, as LAPACK's UPLO = 'L'. */
    double norm = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            if (j > i)
                a[i * n + j] = a[j * n + i];
            norm = hypot(norm, a[i * n + j]);
            v[i * n + j] = i == j;
        }
    /* An off-diagonal entry below eps ||A||_F changes no eigenvalue by
     * more than the rounding already made; a sweep that finds every
     * entry below it ends the iteration. */
    const double tol = DBL_EPSILON * norm;
    int sweep;
    for (sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        int64_t rotated = 0;
        for (int64_t pp = 0; pp < n - 1; pp++)
            for (int64_t qq = pp + 1; qq < n; qq++) {
                double apq = a[pp * n + qq];
                if (fabs(apq) <= tol)
                    continue;
                rotated++;
                double c, s;
                jacobi_rot(a[pp * n + pp], a[qq * n + qq], apq, &c, &s);
                for (int64_t r = 0; r < n; r++) { /* A J */
                    double x = a[r * n + pp], y = a[r * n + qq];
                    a[r * n + pp] = c * x - s * y;
                    a[r * n + qq] = s * x + c * y;
                }
                for (int64_t r = 0; r < n; r++) { /* J^T (A J) */
                    double x = a[pp * n + r], y = a[qq * n + r];
                    a[pp * n + r] = c * x - s * y;
                    a[qq * n + r] = s * x + c * y;
                }
                a[pp * n + qq] = a[qq * n + pp] = 0;
                for (int64_t r = 0; r < n; r++) { /* V J */
                    double x = v[r * n + pp], y = v[r * n + qq];
                    v[r * n + pp] = c * x - s * y;
                    v[r * n + qq] = s * x + c * y;
                }
            }
        if (!rotated)
            break;
    }
    if (sweep == MAX_SWEEPS) {
        tb_free(v);
        return TB_ECONVERGE;
    }
    /* Ascending by selection: stable enough (first of equal values). */
    double *w = out[0].data, *vo = out[1].data;
    int64_t *perm = (int64_t *)a; /* a's diagonal is read first */
    for (int64_t i = 0; i < n; i++)
        w[i] = a[i * n + i];
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    for (int64_t i = 0; i < n; i++) {
        int64_t best = i;
        for (int64_t j = i + 1; j < n; j++)
            if (w[j] < w[best])
                best = j;
        double t = w[i];
        w[i] = w[best];
        w[best] = t;
        int64_t pt = perm[i];
        perm[i] = perm[best];
        perm[best] = pt;
    }
    for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < n; c++)
            vo[r * n + c] = v[r * n + perm[c]];
    tb_free(v);
    return 0;
}

int tb_ref_eigh(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return with_matrix(in, out, eigh_of);
}

/* ---- svd ---------------------------------------------------------------- */

/* Rows p, q of the n-column row-major t, and columns p, q of the
 * row-major n x n matrix u (u accumulates the transposes of the row
 * rotations), rotated by (c, s): row_p <- c row_p + s row_q, row_q <- -s
 * row_p + c row_q; alike for the columns of u. */
static void rot_rows(double *t, double *u, int64_t n, int64_t p, int64_t q,
                     double c, double s)
{
    for (int64_t j = 0; j < n; j++) {
        double x = t[p * n + j], y = t[q * n + j];
        t[p * n + j] = c * x + s * y;
        t[q * n + j] = -s * x + c * y;
        x = u[j * n + p], y = u[j * n + q];
        u[j * n + p] = c * x + s * y;
        u[j * n + q] = -s * x + c * y;
    }
}

/* Columns p, q of the n x n row-major t and v rotated by (c, s): col_p
 * <- c col_p - s col_q, col_q <- s col_p + c col_q. */
static void rot_cols(double *t, double *v, int64_t n, int64_t p, int64_t q,
                     double c, double s)
{
    for (int64_t i = 0; i < n; i++) {
        double x = t[i * n + p], y = t[i * n + q];
        t[i * n + p] = c * x - s * y;
        t[i * n + q] = s * x + c * y;
        x = v[i * n + p], y = v[i * n + q];
        v[i * n + p] = c * x - s * y;
        v[i * n + q] = s * x + c * y;
    }
}

/* Two-sided (Kogbetliantz) Jacobi SVD of the square n x n row-major t
 * (overwritten by its diagonal form): t = U diag V^T with u, v n x n
 * orthogonal.  Each pair (p, q) with an off-diagonal entry above tol
 * times the geometric mean of its diagonal gets the 2x2 SVD of its
 * block: a rotation of the rows that makes the block symmetric, then the
 * symmetric Jacobi rotation (jacobi_rot) on both sides.  Entries below
 * eps^2 ||T||_F count as zero (rounding noise where the diagonal is 0:
 * a rank-deficient T).  0 or TB_ECONVERGE. */
static int jacobi2_svd(double *t, double *u, double *v, int64_t n)
{
    double fro = 0;
    for (int64_t i = 0; i < n * n; i++)
        fro = hypot(fro, t[i]);
    for (int64_t i = 0; i < n * n; i++)
        u[i] = v[i] = i % (n + 1) == 0;
    const double tol = DBL_EPSILON * sqrt((double)n);
    const double noise = DBL_EPSILON * DBL_EPSILON * fro + DBL_MIN;
    for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        int64_t rotated = 0;
        for (int64_t p = 0; p < n - 1; p++)
            for (int64_t q = p + 1; q < n; q++) {
                const double app = t[p * n + p], aqq = t[q * n + q];
                const double apq = t[p * n + q], aqp = t[q * n + p];
                const double bound =
                    fmax(tol * sqrt(fabs(app) * fabs(aqq)), noise);
                if (fabs(apq) <= bound && fabs(aqp) <= bound)
                    continue;
                rotated++;
                /* symmetrise: rows by phi, tan phi = (aqp - apq) /
                 * (app + aqq) */
                const double phi = atan2(aqp - apq, app + aqq);
                const double cs = cos(phi), sn = sin(phi);
                rot_rows(t, u, n, p, q, cs, sn);
                /* diagonalise the symmetric block on both sides */
                const double sym = t[p * n + q];
                if (sym != 0) {
                    double c, s;
                    jacobi_rot(t[p * n + p], t[q * n + q], sym, &c, &s);
                    rot_rows(t, u, n, p, q, c, -s);
                    rot_cols(t, v, n, p, q, c, s);
                }
                t[p * n + q] = t[q * n + p] = 0;
            }
        if (!rotated)
            return 0;
    }
    return TB_ECONVERGE;
}

/* svd by an algorithm of its own, so that it can catch the cpu
 * backend's kernel (a one-sided Jacobi, backends/cpu/linalg.c): the
 * worked matrix W (A, or A^T when m < n, so that it is tall) is reduced
 * by Householder QR to its square triangle R, whose two-sided Jacobi SVD
 * gives the singular values and R = Ur S Vr^T; W's left vectors are Q
 * Ur, its right ones Vr (orthonormal whatever the rank: no basis to
 * complete).  Relative accuracy as one-sided Jacobi's on the QR-reduced
 * matrix (Demmel & Veselic 1992). */
static int svd_of(double *a, int64_t m, int64_t n, tb_tensor *out)
{
    int rc;
    const int64_t k = m < n ? m : n;
    if ((rc = check_out(&out[0], 2, m, k)) ||
        (rc = check_out(&out[1], 1, k, 0)) ||
        (rc = check_out(&out[2], 2, k, n)))
        return rc;
    const int scale = unit_scale(a, m * n);
    const bool tall = m >= n;
    const int64_t R = tall ? m : n, C = k;
    /* w: W (R x C); q: its Q (R x C); t: its R (C x C); ur, vr: the
     * square SVD's factors; perm: the columns by descending value */
    size_t words = (size_t)(2 * R * C + 3 * C * C + C);
    double *w = tb_alloc(words * sizeof *w);
    if (!w)
        return TB_ENOMEM;
    double *q = w + R * C, *t = q + R * C, *ur = t + C * C, *vr = ur + C * C;
    int64_t *perm = (int64_t *)(vr + C * C);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            if (tall)
                w[i * C + j] = a[i * n + j];
            else
                w[j * C + i] = a[i * n + j];
        }
    if (!(rc = householder_qr(w, R, C, q, t)))
        rc = jacobi2_svd(t, ur, vr, C);
    if (rc) {
        tb_free(w);
        return rc;
    }
    /* values |t_jj| (a negative one flips its left vector), descending */
    for (int64_t j = 0; j < C; j++) {
        if (t[j * C + j] < 0) {
            t[j * C + j] = -t[j * C + j];
            for (int64_t i = 0; i < C; i++)
                ur[i * C + j] = -ur[i * C + j];
        }
        perm[j] = j;
    }
    for (int64_t i = 0; i < C; i++) {
        int64_t best = i;
        for (int64_t j = i + 1; j < C; j++)
            if (t[perm[j] * C + perm[j]] > t[perm[best] * C + perm[best]])
                best = j;
        int64_t x = perm[i];
        perm[i] = perm[best];
        perm[best] = x;
    }
    /* W's left vectors L = Q Ur (R x C, into w), right ones Vr.  Tall
     * (W = A): U = L, Vt = Vr^T.  Wide (W = A^T, A = Vr S L^T): U = Vr,
     * Vt = L^T. */
    double *uo = out[0].data, *so = out[1].data, *vto = out[2].data;
    for (int64_t i = 0; i < R; i++)
        for (int64_t c = 0; c < C; c++) {
            double d = 0;
            for (int64_t j = 0; j < C; j++)
                d += q[i * C + j] * ur[j * C + perm[c]];
            w[i * C + c] = d;
        }
    for (int64_t c = 0; c < C; c++) {
        so[c] = ldexp(t[perm[c] * C + perm[c]], scale);
        for (int64_t r = 0; r < C; r++) {
            if (tall)
                vto[c * n + r] = vr[r * C + perm[c]];
            else
                uo[r * k + c] = vr[r * C + perm[c]];
        }
        for (int64_t r = 0; r < R; r++) {
            if (tall)
                uo[r * k + c] = w[r * C + c];
            else
                vto[c * n + r] = w[r * C + c];
        }
    }
    tb_free(w);
    return 0;
}

int tb_ref_svd(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return with_matrix(in, out, svd_of);
}

/* ---- sign conventions ------------------------------------------------ */

/* Index of the first entry of largest magnitude in column j of the 2-D
 * tensor t (any dtype and strides). */
static int64_t col_argmax(const tb_tensor *t, int64_t j)
{
    int64_t rows = t->shape[0], cols = t->shape[1], best = 0;
    double bv = -1;
    for (int64_t i = 0; i < rows; i++) {
        double x = fabs(tb_tensor_get(t, i * cols + j));
        if (x > bv) {
            bv = x;
            best = i;
        }
    }
    return best;
}

static void negate_col(tb_tensor *t, int64_t j)
{
    int64_t rows = t->shape[0], cols = t->shape[1];
    for (int64_t i = 0; i < rows; i++)
        tb_tensor_set(t, i * cols + j, -tb_tensor_get(t, i * cols + j));
}

static void negate_row(tb_tensor *t, int64_t i)
{
    int64_t cols = t->shape[1];
    for (int64_t j = 0; j < cols; j++)
        tb_tensor_set(t, i * cols + j, -tb_tensor_get(t, i * cols + j));
}

static bool is_2d(const tb_tensor *t)
{
    return t->ndim == 2 && t->data && (unsigned)t->dtype < TB_DTYPE_COUNT;
}

/* U's column j and Vt's row j change sign together (U S Vt unchanged)
 * so that U's largest-magnitude entry (first on ties) is positive. */
void tb_canon_svd(tb_tensor *out, int n_out)
{
    if (n_out != 3 || !is_2d(&out[0]) || !is_2d(&out[2]) ||
        out[2].shape[0] != out[0].shape[1])
        return;
    for (int64_t j = 0; j < out[0].shape[1]; j++) {
        int64_t i = col_argmax(&out[0], j);
        if (tb_tensor_get(&out[0], i * out[0].shape[1] + j) < 0) {
            negate_col(&out[0], j);
            negate_row(&out[2], j);
        }
    }
}

/* Q's column j and R's row j change sign together so that R's diagonal
 * is >= 0 (the convention of the unique QR of a full-rank matrix). */
void tb_canon_qr(tb_tensor *out, int n_out)
{
    if (n_out != 2 || !is_2d(&out[0]) || !is_2d(&out[1]) ||
        out[1].shape[0] != out[0].shape[1] ||
        out[1].shape[1] < out[1].shape[0])
        return;
    int64_t n = out[1].shape[1];
    for (int64_t j = 0; j < out[1].shape[0]; j++)
        if (tb_tensor_get(&out[1], j * n + j) < 0) {
            negate_col(&out[0], j);
            negate_row(&out[1], j);
        }
}

/* Each eigenvector (a column of V) gets its largest-magnitude entry
 * (first on ties) positive. */
void tb_canon_eigh(tb_tensor *out, int n_out)
{
    if (n_out != 2 || !is_2d(&out[1]))
        return;
    for (int64_t j = 0; j < out[1].shape[1]; j++) {
        int64_t i = col_argmax(&out[1], j);
        if (tb_tensor_get(&out[1], i * out[1].shape[1] + j) < 0)
            negate_col(&out[1], j);
    }
}
