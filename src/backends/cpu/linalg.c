/* cpu backend: svd, qr and eigh in portable C, f32 and f64.
 *
 * Textbook algorithms computed in the case dtype (f32 arithmetic for
 * f32 cases), on column-major working copies so that the inner loops run
 * over contiguous columns (qr: row-major, see reflect):
 *   - qr: Householder QR, reflectors stored below the diagonal as LAPACK
 *     does, thin Q accumulated backwards, each reflector applied to the
 *     rows below it across the columns (vector loops);
 *   - eigh: Householder tridiagonalization of the matrix of the lower
 *     triangle, Q accumulated backwards, then implicit QL with
 *     Wilkinson's shift rotating Q's columns (O(n^3) once, where the
 *     reference's cyclic Jacobi pays O(n^3) per sweep: 2.2x at 16x16,
 *     13x at 256x256);
 *   - svd: one-sided Jacobi on A (A^T when m < n), preconditioned by
 *     the eigenvectors of its Gram matrix (tridiagonalization and QL as
 *     eigh's: 2-3 sweeps instead of 8), columns orthogonal to
 *     sqrt(rows) * eps relative to their norms, zero columns of U
 *     completed to an orthonormal basis.
 * Inputs whose largest entry is beyond 2^+-40 (f32) or 2^+-400 (f64) are
 * scaled by a power of 2 first (scale_down), R, w and S back after.
 * One tracked allocation of workspace per call; one launch per call.
 * Non-finite input: TB_ENUMERIC.  Iteration limit hit: TB_ECONVERGE.
 * Single-threaded: the sizes the issue asks for (4..64) are far below
 * the cost of a fork/join, and Jacobi's pair order is sequential.
 *
 * Each algorithm is written once, below `#else`, and instantiated per
 * dtype by including this file into itself with LINALG_T set (the
 * pattern keeps the code debuggable, unlike a macro of 300 lines);
 * <tgmath.h> makes sqrt and fabs follow the type. */
#ifndef LINALG_T

#include <float.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <tgmath.h>

#include "../../ops/alloc.h"
#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "cpu_internal.h"
#include "kreg.h"

/* svd's sweeps, as in the reference: Jacobi converges in well under 20
 * sweeps. */
#define LINALG_MAX_SWEEPS 60

/* Checks every operand of a linalg kernel: in[0] a contiguous 2-D matrix
 * of dtype dt, outputs contiguous of dtype dt with the shapes op's rule
 * gives (so no loop below can run past a buffer). */
static int linalg_operands(tb_op_id id, tb_dtype dt, const tb_tensor *in,
                           const tb_tensor *out)
{
    if (!in || !out)
        return TB_EINVAL;
    const tb_op *op = tb_op_get(id);
    if (in[0].dtype != dt)
        return TB_EDTYPE;
    if (in[0].ndim != 2 || tb_tensor_check_operand(&in[0], dt, 0))
        return TB_EINVAL;
    tb_shape is = tb_tensor_shape(&in[0]), os[TB_MAX_OUTPUTS];
    char err[128];
    int rc = tb_op_infer(op, &is, 1, NULL, os, err, sizeof err);
    if (rc)
        return rc;
    for (int o = 0; o < op->n_out; o++) {
        if (out[o].dtype != dt)
            return TB_EDTYPE;
        tb_shape s = tb_tensor_shape(&out[o]);
        if (!tb_shape_equal(&s, &os[o]))
            return TB_ESHAPE;
        if (tb_tensor_check_operand(&out[o], dt, 0))
            return TB_EINVAL;
    }
    return 0;
}

/* f32 instances */
#define LINALG_T float
#define LINALG_EPS FLT_EPSILON
#define LINALG_RANGE 0x1p40f
#define LINALG_SAFE 0x1p60f
#define LINALG_FN(name) name##_f32
#include "linalg.c"
#undef LINALG_T
#undef LINALG_EPS
#undef LINALG_SAFE
#undef LINALG_RANGE
#undef LINALG_FN

/* f64 instances */
#define LINALG_T double
#define LINALG_EPS DBL_EPSILON
#define LINALG_RANGE 0x1p400
#define LINALG_SAFE 0x1p500
#define LINALG_FN(name) name##_f64
#include "linalg.c"
#undef LINALG_T
#undef LINALG_EPS
#undef LINALG_SAFE
#undef LINALG_RANGE
#undef LINALG_FN

/* The entry points of linalg.c's registry rows (kreg.h). */
#define LINALG_ENTRY(op, dt, sfx, c)                                      \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return k_##op##_##dt(ctx, in, out, p);                            \
    }
TB_CPU_ROWS_LINALG(LINALG_ENTRY)

#else /* ---- template: LINALG_T, LINALG_EPS, LINALG_SAFE, LINALG_RANGE,
       *      LINALG_FN */

typedef LINALG_T LINALG_FN(real);
#define T LINALG_FN(real)

/* Copy the row-major m x n input into column-major `a` (a[j*m + i]);
 * false if any entry is NaN or infinite. */
static bool LINALG_FN(load_colmajor)(const T *x, int64_t m, int64_t n,
                                     T *a)
{
    bool finite = true;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            T v = x[i * n + j];
            finite &= isfinite(v) != 0;
            a[j * m + i] = v;
        }
    return finite;
}

/* Where the largest magnitude of x[0..n) lies outside [1/LINALG_RANGE,
 * LINALG_RANGE] (squares of entries, or sums of n of them, would
 * overflow or fall to underflow), x times the power of 2 2^-e that brings
 * it into [0.5, 1), and e; else 0, x untouched (the common case, so
 * results there are those of the unscaled algorithm bit for bit).  The
 * caller scales the outputs that scale with x back by 2^e. */
static int LINALG_FN(scale_down)(T *x, int64_t n)
{
    /* Eight running maxima: one would be a chain of n dependent
     * compares (a tenth of qr's time at 16x16). */
    T mx[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++)
            mx[l] = fabs(x[i + l]) > mx[l] ? fabs(x[i + l]) : mx[l];
    for (; i < n; i++)
        mx[0] = fabs(x[i]) > mx[0] ? fabs(x[i]) : mx[0];
    T big = 0;
    for (int l = 0; l < 8; l++)
        big = mx[l] > big ? mx[l] : big;
    if (big == 0 || (big <= LINALG_RANGE && big >= 1 / LINALG_RANGE))
        return 0;
    int e;
    (void)frexp(big, &e);
    for (i = 0; i < n; i++)
        x[i] = ldexp(x[i], -e);
    return e;
}

/* Euclidean norm of x[0..n), scaled by the largest magnitude so that no
 * square overflows or underflows. */
static T LINALG_FN(norm2)(const T *x, int64_t n)
{
    T big = 0;
    for (int64_t i = 0; i < n; i++)
        big = fabs(x[i]) > big ? fabs(x[i]) : big;
    if (big == 0)
        return 0;
    T s = 0;
    for (int64_t i = 0; i < n; i++) {
        T y = x[i] / big;
        s += y * y;
    }
    return big * sqrt(s);
}

/* The rotation (c, s) zeroing apq of [[app, apq], [apq, aqq]], apq != 0:
 * t = sign(tau) / (|tau| + sqrt(1 + tau^2)), the smaller angle. */
static void LINALG_FN(rot)(T app, T aqq, T apq, T *c, T *s)
{
    T tau = (aqq - app) / (2 * apq);
    T t;
    if (fabs(tau) > 1 / LINALG_EPS) /* 1 + tau^2 rounds to tau^2 */
        t = (T)0.5 / tau;
    else
        t = (tau >= 0 ? 1 : -1) / (fabs(tau) + sqrt(1 + tau * tau));
    *c = 1 / sqrt(1 + t * t);
    *s = t * *c;
}

/* sqrt(a^2 + b^2) without overflow or underflow: the plain formula
 * while both magnitudes lie in [1/LINALG_SAFE, LINALG_SAFE] (squares and
 * their sum far from the dtype's limits), else scaled by the larger.
 * glibc's hypot, correctly rounded, took a third of eigh f64's time at
 * 16x16; this one is within an ulp or two. */
static T LINALG_FN(hyp)(T a, T b)
{
    a = fabs(a);
    b = fabs(b);
    T big = a > b ? a : b, small = a > b ? b : a;
    if (big <= LINALG_SAFE && small >= 1 / LINALG_SAFE)
        return sqrt(a * a + b * b);
    if (big == 0)
        return 0;
    T q = small / big;
    return big * sqrt(1 + q * q);
}

/* x, y <- c x - s y, s x + c y over n entries. */
static void LINALG_FN(apply_rot)(T *x, T *y, int64_t n, T c, T s)
{
    for (int64_t r = 0; r < n; r++) {
        T u = x[r], v = y[r];
        x[r] = c * u - s * v;
        y[r] = s * u + c * v;
    }
}

/* ---- qr ----------------------------------------------------------------- */

/* The products and updates of one reflector v (v[0] its first entry, the
 * rest the column below the diagonal) with the columns c0..nc-1 of the
 * row-major rows b[0..len) of pitch ld: d[c] = beta (v^T b[:, c]), then
 * b[:, c] -= d[c] v.  Each d[c] is summed in row order from v[0] b[0][c]
 * (the column-at-a-time loop's order, so the results are that loop's bit
 * for bit), but row by row across the columns: the loops over c are
 * independent chains gcc vectorizes, where a column at a time was one
 * chain of len dependent adds per column (qr 16x16 f32: most of its
 * time). */
static void LINALG_FN(reflect)(const T *restrict v, int64_t len, T beta,
                               T *restrict b, int64_t ld, int64_t c0,
                               int64_t nc, T *restrict d)
{
    for (int64_t c = c0; c < nc; c++)
        d[c] = v[0] * b[c];
    for (int64_t i = 1; i < len; i++) {
        const T vi = v[i];
        const T *restrict r = b + i * ld;
        for (int64_t c = c0; c < nc; c++)
            d[c] += vi * r[c];
    }
    for (int64_t c = c0; c < nc; c++)
        d[c] *= beta;
    for (int64_t i = 0; i < len; i++) {
        const T vi = v[i];
        T *restrict r = b + i * ld;
        for (int64_t c = c0; c < nc; c++)
            r[c] -= d[c] * vi;
    }
}

static int LINALG_FN(k_qr)(void *ctx, const tb_tensor *in, tb_tensor *out,
                           const tb_params *p)
{
    (void)p;
    tb_cpu_count_launch(ctx);
    int rc = linalg_operands(TB_OP_qr, sizeof(T) == 4 ? TB_F32 : TB_F64, in,
                             out);
    if (rc)
        return rc;
    const int64_t m = in[0].shape[0], n = in[0].shape[1];
    const int64_t k = m < n ? m : n;
    /* a: row-major copy (R above the diagonal); q: row-major thin Q;
     * vs: reflector j's entries from the diagonal down in vs + j * m
     * (its first entry vtop, the rest the column below the diagonal);
     * beta: 2 / (v^T v); d: n products. */
    T *a = tb_alloc((size_t)(m * n + m * k + k * m + k + n) * sizeof(T));
    if (!a)
        return TB_ENOMEM;
    T *q = a + m * n, *vs = q + m * k, *beta = vs + k * m, *d = beta + k;
    const T *x0 = in[0].data;
    bool finite = true;
    for (int64_t i = 0; i < m * n; i++) {
        a[i] = x0[i];
        finite &= isfinite(x0[i]) != 0;
    }
    if (!finite) {
        tb_free(a);
        return TB_ENUMERIC;
    }
    const int ex = LINALG_FN(scale_down)(a, m * n); /* R scales back */
    for (int64_t j = 0; j < k; j++) {
        T *v = vs + j * m; /* column j from the diagonal down */
        int64_t len = m - j;
        for (int64_t i = 0; i < len; i++)
            v[i] = a[(j + i) * n + j];
        T norm = LINALG_FN(norm2)(v, len);
        /* alpha opposite in sign to x[0], so v0 = x0 - alpha is exact
         * of cancellation. */
        T alpha = v[0] >= 0 ? -norm : norm;
        v[0] -= alpha;
        T vv = v[0] * v[0];
        for (int64_t i = 1; i < len; i++)
            vv += v[i] * v[i];
        beta[j] = vv > 0 ? 2 / vv : 0;
        LINALG_FN(reflect)(v, len, beta[j], a + j * n, n, j + 1, n, d);
        a[j * n + j] = alpha;
    }
    memset(q, 0, (size_t)(m * k) * sizeof(T));
    for (int64_t c = 0; c < k; c++)
        q[c * k + c] = 1;
    /* Q = H_0 ... H_{k-1} I[:, :k]; H_j leaves columns c < j alone. */
    for (int64_t j = k - 1; j >= 0; j--)
        LINALG_FN(reflect)(vs + j * m, m - j, beta[j], q + j * k, k, j, k,
                           d);
    T *qo = out[0].data, *ro = out[1].data;
    memcpy(qo, q, (size_t)(m * k) * sizeof(T));
    for (int64_t i = 0; i < k; i++)
        for (int64_t c = 0; c < n; c++)
            ro[i * n + c] = c >= i ? a[i * n + c] : 0;
    if (ex) /* ldexp is a call: none in the common case */
        for (int64_t i = 0; i < k * n; i++)
            ro[i] = ldexp(ro[i], ex);
    tb_free(a);
    return 0;
}

/* ---- eigh --------------------------------------------------------------- */

/* Householder tridiagonalization of the symmetric n x n matrix a (full
 * storage; column-major and row-major coincide): a = Z T Z^T with T's
 * diagonal in d, its subdiagonal in e[0..n-1) (e[n-1] = 0) and the
 * orthogonal Z in z (column-major).  Reflector k, I - beta[k] v v^T with
 * v in column k below the diagonal, zeroes that column below the
 * subdiagonal; the trailing block takes it as the rank-2 update
 * B - v w^T - w v^T, w = p - (beta p^T v / 2) v, p = beta B v
 * (GVL 8.3.1).  wk: n scratch entries. */
static void LINALG_FN(tridiag)(T *a, int64_t n, T *d, T *e, T *beta, T *z,
                               T *wk)
{
    for (int64_t k = 0; k + 2 < n; k++) {
        T *x = a + k * n + k + 1;
        const int64_t len = n - k - 1;
        T *b = a + (k + 1) * n + k + 1; /* trailing block, stride n */
        T norm = LINALG_FN(norm2)(x, len);
        /* alpha opposite in sign to x[0]: v0 = x0 - alpha is free of
         * cancellation. */
        T alpha = x[0] >= 0 ? -norm : norm;
        T v0 = x[0] - alpha;
        T vv = v0 * v0;
        for (int64_t i = 1; i < len; i++)
            vv += x[i] * x[i];
        d[k] = a[k * n + k];
        e[k] = alpha;
        x[0] = v0;
        beta[k] = vv > 0 ? 2 / vv : 0;
        if (beta[k] == 0) /* column already zero: H = I */
            continue;
        T bk = beta[k];
        for (int64_t i = 0; i < len; i++)
            wk[i] = 0;
        for (int64_t j = 0; j < len; j++) { /* p = beta B v */
            const T *bj = b + j * n;
            T vj = bk * x[j];
            for (int64_t i = 0; i < len; i++)
                wk[i] += bj[i] * vj;
        }
        T pv = 0;
        for (int64_t i = 0; i < len; i++)
            pv += wk[i] * x[i];
        T kk = bk * pv / 2;
        for (int64_t i = 0; i < len; i++)
            wk[i] -= kk * x[i];
        for (int64_t j = 0; j < len; j++) {
            T *bj = b + j * n;
            T vj = x[j], wj = wk[j];
            for (int64_t i = 0; i < len; i++)
                bj[i] -= x[i] * wj + wk[i] * vj;
        }
    }
    if (n >= 2) {
        d[n - 2] = a[(n - 2) * n + n - 2];
        e[n - 2] = a[(n - 2) * n + n - 1];
    }
    d[n - 1] = a[(n - 1) * n + n - 1];
    e[n - 1] = 0;
    /* Z = H_0 ... H_{n-3}, accumulated backwards: H_k touches rows and
     * columns k+1.. only. */
    memset(z, 0, (size_t)(n * n) * sizeof(T));
    for (int64_t c = 0; c < n; c++)
        z[c * n + c] = 1;
    for (int64_t k = n - 3; k >= 0; k--) {
        if (beta[k] == 0)
            continue;
        const T *v = a + k * n + k + 1;
        const int64_t len = n - k - 1;
        for (int64_t c = k + 1; c < n; c++) {
            T *y = z + c * n + k + 1;
            T dt = 0;
            for (int64_t i = 0; i < len; i++)
                dt += v[i] * y[i];
            dt *= beta[k];
            for (int64_t i = 0; i < len; i++)
                y[i] -= dt * v[i];
        }
    }
}

/* Implicit QL with Wilkinson's shift on the tridiagonal (d, e) of
 * tridiag, each plane rotation applied to columns i, i+1 of z, so that
 * on return d holds the eigenvalues (unsorted) and z the eigenvectors
 * (GVL 8.3.3, in QL form: the chase runs from the bottom up, which
 * suits matrices graded that way).  An off-diagonal entry below
 * eps (|d_m| + |d_m+1|) splits the matrix.  False after 30 iterations
 * on one eigenvalue. */
static bool LINALG_FN(tridiag_ql)(T *d, T *e, T *z, int64_t n)
{
    for (int64_t l = 0; l < n; l++) {
        int iter = 0;
        for (;;) {
            int64_t m = l;
            for (; m + 1 < n; m++)
                if (fabs(e[m]) <= LINALG_EPS * (fabs(d[m]) + fabs(d[m + 1])))
                    break;
            if (m == l)
                break;
            if (iter++ == 30)
                return false;
            /* The shift: the eigenvalue of T[l..l+1] nearer d[l]. */
            T g = (d[l + 1] - d[l]) / (2 * e[l]);
            T r = LINALG_FN(hyp)(g, 1);
            g = d[m] - d[l] + e[l] / (g + (g >= 0 ? r : -r));
            T s = 1, c = 1, p = 0;
            bool split = false;
            for (int64_t i = m - 1; i >= l; i--) {
                T f = s * e[i], b = c * e[i];
                r = LINALG_FN(hyp)(f, g);
                e[i + 1] = r;
                if (r == 0) { /* underflow: T splits at i+1 */
                    d[i + 1] -= p;
                    e[m] = 0;
                    split = true;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                LINALG_FN(apply_rot)(z + i * n, z + (i + 1) * n, n, c, s);
            }
            if (split)
                continue;
            d[l] -= p;
            e[l] = g;
            e[m] = 0;
        }
    }
    return true;
}

static int LINALG_FN(k_eigh)(void *ctx, const tb_tensor *in, tb_tensor *out,
                             const tb_params *p)
{
    (void)p;
    tb_cpu_count_launch(ctx);
    int rc = linalg_operands(TB_OP_eigh, sizeof(T) == 4 ? TB_F32 : TB_F64,
                             in, out);
    if (rc)
        return rc;
    const int64_t n = in[0].shape[0];
    /* perm first: the allocation's alignment suits int64_t and T. */
    int64_t *perm = tb_alloc((size_t)n * sizeof(int64_t) +
                             (size_t)(2 * n * n + 4 * n) * sizeof(T));
    if (!perm)
        return TB_ENOMEM;
    T *a = (T *)(perm + n), *z = a + n * n, *d = z + n * n, *e = d + n;
    T *beta = e + n, *wk = beta + n;
    const T *x = in[0].data;
    /* Symmetric from the lower triangle (UPLO = 'L'); column-major and
     * row-major coincide for it. */
    bool finite = true;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) {
            T v = x[i * n + j];
            finite &= isfinite(v) != 0;
            a[i * n + j] = a[j * n + i] = v;
        }
    if (!finite) {
        tb_free(perm);
        return TB_ENUMERIC;
    }
    const int ex = LINALG_FN(scale_down)(a, n * n); /* w scales back */
    LINALG_FN(tridiag)(a, n, d, e, beta, z, wk);
    if (!LINALG_FN(tridiag_ql)(d, e, z, n)) {
        tb_free(perm);
        return TB_ECONVERGE;
    }
    /* Ascending; insertion sort keeps equal values in index order. */
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i;
        for (; j > 0 && d[perm[j - 1]] > d[i]; j--)
            perm[j] = perm[j - 1];
        perm[j] = i;
    }
    T *wo = out[0].data, *vo = out[1].data;
    for (int64_t c = 0; c < n; c++) {
        wo[c] = ex ? ldexp(d[perm[c]], ex) : d[perm[c]];
        for (int64_t r = 0; r < n; r++)
            vo[r * n + c] = z[perm[c] * n + r];
    }
    tb_free(perm);
    return 0;
}

/* ---- svd ---------------------------------------------------------------- */

/* Columns c of u (column-major, rows x cols) with ok[c] == 0 become unit
 * vectors orthogonal to the others: the first e_i that keeps over half
 * its length through two Gram-Schmidt passes (such an e_i exists while
 * fewer than `rows` columns are set). */
static void LINALG_FN(complete)(T *u, int64_t rows, int64_t cols,
                                unsigned char *ok)
{
    for (int64_t j = 0; j < cols; j++) {
        if (ok[j])
            continue;
        T *t = u + j * rows;
        for (int64_t e = 0; e < rows && !ok[j]; e++) {
            for (int64_t i = 0; i < rows; i++)
                t[i] = i == e;
            for (int pass = 0; pass < 2; pass++)
                for (int64_t c = 0; c < cols; c++) {
                    if (!ok[c])
                        continue;
                    const T *uc = u + c * rows;
                    T d = 0;
                    for (int64_t i = 0; i < rows; i++)
                        d += uc[i] * t[i];
                    for (int64_t i = 0; i < rows; i++)
                        t[i] -= d * uc[i];
                }
            T nn = LINALG_FN(norm2)(t, rows);
            if (nn > (T)0.5) {
                for (int64_t i = 0; i < rows; i++)
                    t[i] /= nn;
                ok[j] = 1;
            }
        }
    }
}

static int LINALG_FN(k_svd)(void *ctx, const tb_tensor *in, tb_tensor *out,
                            const tb_params *p)
{
    (void)p;
    tb_cpu_count_launch(ctx);
    int rc = linalg_operands(TB_OP_svd, sizeof(T) == 4 ? TB_F32 : TB_F64, in,
                             out);
    if (rc)
        return rc;
    const int64_t m = in[0].shape[0], n = in[0].shape[1];
    const bool tall = m >= n;
    /* W (R x C, column-major, R >= C): A if tall, else A^T, whose
     * row-major copy is A^T in column-major order. */
    const int64_t R = tall ? m : n, C = tall ? n : m;
    /* perm first: the allocation's alignment suits int64_t and T. */
    int64_t *perm = tb_alloc((size_t)C * sizeof(int64_t) +
                             (size_t)(2 * R * C + 2 * C * C + 5 * C) *
                                 sizeof(T) +
                             (size_t)C);
    if (!perm)
        return TB_ENOMEM;
    T *w = (T *)(perm + C), *v = w + R * C, *sig = v + C * C;
    T *g = sig + C, *wz = g + C * C, *d = wz + R * C, *e = d + C;
    T *beta = e + C, *wk = beta + C;
    unsigned char *ok = (unsigned char *)(wk + C);
    const T *x = in[0].data;
    if (tall) {
        if (!LINALG_FN(load_colmajor)(x, m, n, w)) {
            tb_free(perm);
            return TB_ENUMERIC;
        }
    } else {
        bool finite = true;
        for (int64_t i = 0; i < m * n; i++) {
            finite &= isfinite(x[i]) != 0;
            w[i] = x[i];
        }
        if (!finite) {
            tb_free(perm);
            return TB_ENUMERIC;
        }
    }
    const int ex = LINALG_FN(scale_down)(w, R * C); /* S scales back */
    /* Preconditioning: with V0 the eigenvectors of the Gram matrix
     * W^T W (tridiag and tridiag_ql, as eigh), W V0's columns are
     * orthogonal up to the Gram matrix's rounding, so the Jacobi sweeps
     * below start near convergence (at 16x16 and 64x64: 2 or 3 sweeps
     * instead of 8)
     * with V = V0.  The sweeps still decide the result, to the same
     * tolerances; V = I should QL not converge. */
    for (int64_t j = 0; j < C; j++)
        for (int64_t i = j; i < C; i++) {
            const T *wi = w + i * R, *wj = w + j * R;
            T dt = 0;
            for (int64_t r = 0; r < R; r++)
                dt += wi[r] * wj[r];
            g[j * C + i] = g[i * C + j] = dt;
        }
    LINALG_FN(tridiag)(g, C, d, e, beta, v, wk);
    if (LINALG_FN(tridiag_ql)(d, e, v, C)) {
        memset(wz, 0, (size_t)(R * C) * sizeof(T));
        for (int64_t j = 0; j < C; j++)
            for (int64_t k = 0; k < C; k++) {
                const T vkj = v[j * C + k], *wk_ = w + k * R;
                T *wzj = wz + j * R;
                for (int64_t r = 0; r < R; r++)
                    wzj[r] += wk_[r] * vkj;
            }
        memcpy(w, wz, (size_t)(R * C) * sizeof(T));
    } else {
        memset(v, 0, (size_t)(C * C) * sizeof(T));
        for (int64_t i = 0; i < C; i++)
            v[i * C + i] = 1;
    }
    /* sqrt(rows) * eps, as LAPACK's ?gesvj: the level at which the
     * computed dot product of two orthogonal columns is rounding. */
    const T tol = LINALG_EPS * sqrt((T)R);
    /* Columns below tol * ||A||_F are rounding noise (a rank-deficient
     * A): rotating them against each other cannot meet the relative
     * test above in the case dtype and would never converge, so they are
     * left alone and treated as zero below (their singular value is 0
     * within the error the algorithm makes anyway). */
    const T floor2 = tol * tol * LINALG_FN(norm2)(w, R * C) *
                     LINALG_FN(norm2)(w, R * C);
    int sweep;
    for (sweep = 0; sweep < LINALG_MAX_SWEEPS; sweep++) {
        int64_t rotated = 0;
        for (int64_t i = 0; i < C - 1; i++)
            for (int64_t j = i + 1; j < C; j++) {
                T *wi = w + i * R, *wj = w + j * R;
                T al = 0, be = 0, ga = 0;
                for (int64_t r = 0; r < R; r++) {
                    al += wi[r] * wi[r];
                    be += wj[r] * wj[r];
                    ga += wi[r] * wj[r];
                }
                if (fabs(ga) <= tol * sqrt(al) * sqrt(be) ||
                    al <= floor2 || be <= floor2)
                    continue; /* also every pair with a zero column */
                rotated++;
                T c, s;
                LINALG_FN(rot)(al, be, ga, &c, &s);
                LINALG_FN(apply_rot)(wi, wj, R, c, s);
                LINALG_FN(apply_rot)(v + i * C, v + j * C, C, c, s);
            }
        if (!rotated)
            break;
    }
    if (sweep == LINALG_MAX_SWEEPS) {
        tb_free(perm);
        return TB_ECONVERGE;
    }
    for (int64_t j = 0; j < C; j++) {
        sig[j] = LINALG_FN(norm2)(w + j * R, R);
        if (sig[j] * sig[j] <= floor2) /* noise: a zero singular value */
            sig[j] = 0;
        ok[j] = sig[j] > 0;
        if (ok[j])
            for (int64_t r = 0; r < R; r++)
                w[j * R + r] /= sig[j];
    }
    LINALG_FN(complete)(w, R, C, ok);
    /* Descending; insertion sort keeps equal values in index order. */
    for (int64_t i = 0; i < C; i++) {
        int64_t j = i;
        for (; j > 0 && sig[perm[j - 1]] < sig[i]; j--)
            perm[j] = perm[j - 1];
        perm[j] = i;
    }
    /* W = L S V^T with L = w's columns.  Tall: U = L, Vt = V^T.  Wide
     * (W = A^T): A = V S L^T, so U = V and Vt = L^T. */
    T *uo = out[0].data, *so = out[1].data, *vto = out[2].data;
    const int64_t k = C;
    for (int64_t c = 0; c < k; c++) {
        const T *lc = w + perm[c] * R, *vc = v + perm[c] * C;
        so[c] = ex ? ldexp(sig[perm[c]], ex) : sig[perm[c]];
        for (int64_t r = 0; r < R; r++) {
            if (tall)
                uo[r * k + c] = lc[r];
            else
                vto[c * n + r] = lc[r];
        }
        for (int64_t r = 0; r < C; r++) {
            if (tall)
                vto[c * n + r] = vc[r];
            else
                uo[r * k + c] = vc[r];
        }
    }
    tb_free(perm);
    return 0;
}

#undef T
#endif /* LINALG_T */
