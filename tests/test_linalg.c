/* Tests of svd, qr and eigh: the reference kernels and sign conventions
 * (src/ops/ref_linalg.c), the cpu backend's kernels
 * (src/backends/cpu/linalg.c) and, when built with LAPACKE, the blas
 * backend's (src/backends/blas/blas.c).
 *
 *  1. ref_oracle: every vector of tests/data/linalg_vectors.h (NumPy's
 *     LAPACK results, cross-checked against torch.linalg by
 *     scripts/gen_oracle_linalg.py), f32 and f64 inputs: the reference,
 *     after tb_canon_*, within 1e-10 ||A||_F (1e-10 for ||A||_F < 1) of
 *     each element.
 *  2. cpu_oracle, blas_oracle (threads 1 and the largest): the kernels on
 *     the same vectors, checked as the runner does (canon on both sides,
 *     tb_check_outputs with the op's tolerance and reduce_len), the impl
 *     name, exactly one launch per call, and OpenBLAS left at the
 *     instance's thread count.
 *  3. identities_*: seeded random matrices up to 100x100 (tall, wide,
 *     square, rank-deficient: zero and rank-1, diagonal, I + rank-1 (a
 *     repeated eigenvalue), graded, and scaled to where squares
 *     overflow or underflow), every implementation:
 *     max|A - U S Vt|, max|U^T U - I|, max|Vt Vt^T - I|, S descending and
 *     >= 0; max|A - Q R|, max|Q^T Q - I|, R upper triangular; max|S V -
 *     V diag(w)| (S the symmetric matrix of A's lower triangle),
 *     max|V^T V - I|, w ascending; each below c * max(m, n) * eps of the
 *     dtype (relative to ||A||_F where it scales with A).
 *  4. lower_triangle: eigh reads only the lower triangle (upper one
 *     scrambled, same result bit for bit).
 *  5. canon_*: the sign conventions are idempotent, undo any sign flips
 *     of matching columns/rows, and work on f32 and f64 tensors.
 *  6. coverage: every op of category linalg has vectors in both dtypes,
 *     a cpu kernel named <op>_<dtype>_c and (with LAPACKE) a blas one;
 *     every vector names a linalg op.
 *  7. errors: NaN or inf input gives TB_ENUMERIC from the reference, the
 *     cpu kernels and the LAPACKE ones (no crash, no hang); bad shapes
 *     are refused by tb_op_infer with a message naming the op; kernels
 *     refuse wrong dtypes and output shapes.
 *
 * Every test's leak_teardown checks that it freed all tracked memory.
 * Run one area with: test_linalg --filter 'identities*'. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "backends/backend.h"
#include "harness/check.h"
#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/ref.h"
#include "ops/tensor.h"
#include "tests/data/linalg_vectors.h"

#if TB_HAVE_LAPACKE
#include <cblas.h> /* openblas_get_num_threads */
#endif

extern const tb_backend tb_backend_cpu;
extern const tb_backend tb_backend_blas;

#define SEED UINT64_C(0x3c6ef372fe94f82b)
/* The reference against NumPy, relative to ||A||_F. */
#define REF_TOL 1e-10

/* Fixtures: leak_setup/leak_teardown (testutil.h). */

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_state = SEED;

/* splitmix64: uniform in [-1, 1). */
static double rng_uniform(void)
{
    uint64_t z = splitmix64_next(&rng_state);
    return (double)(z >> 11) * 0x1p-53 * 2.0 - 1.0;
}

static const tb_op *op_named(const char *name)
{
    const tb_op *op = tb_op_find(name);
    if (!op)
        fail_msg("op '%s' not in the table", name);
    return op;
}

static tb_dtype dtype_named(const char *name)
{
    tb_dtype dt;
    assert_int_equal(tb_dtype_parse(name, &dt), 0);
    return dt;
}

/* A host m x n tensor of dtype dt holding x (row-major), or random
 * values in [-1, 1] (rounded to dt) when x is NULL. */
static void matrix_new(tb_tensor *t, tb_dtype dt, int64_t m, int64_t n,
                       const double *x)
{
    tb_shape s = SHAPE(m, n);
    assert_int_equal(tb_tensor_create(t, dt, &s), 0);
    for (int64_t i = 0; i < m * n; i++)
        tb_tensor_set(t, i, x ? x[i] : rng_uniform());
}

/* Output shapes of op for an m x n input (the rule must accept it). */
static void out_shapes(const tb_op *op, int64_t m, int64_t n, tb_shape *os)
{
    tb_shape is = SHAPE(m, n);
    char err[256] = "";
    int rc = tb_op_infer(op, &is, 1, NULL, os, err, sizeof err);
    if (rc)
        fail_msg("%s: tb_op_infer: %s", op->name, err);
}

/* Host outputs of dtype dt for op on an m x n input, filled with NaN so
 * that an element a kernel never writes fails every check. */
static void outputs_new(const tb_op *op, tb_dtype dt, int64_t m, int64_t n,
                        tb_tensor *out)
{
    tb_shape os[TB_MAX_OUTPUTS];
    out_shapes(op, m, n, os);
    for (int o = 0; o < op->n_out; o++) {
        assert_int_equal(tb_tensor_create(&out[o], dt, &os[o]), 0);
        for (int64_t i = 0; i < tb_tensor_numel(&out[o]); i++)
            tb_tensor_set(&out[o], i, NAN);
    }
}

static void destroy_all(tb_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        tb_tensor_destroy(&t[i]);
}

/* An instance of backend be; threads = 0: every axis at its default,
 * else the `threads` axis at that value. */
static void *backend_new(const tb_backend *be, int threads)
{
    tb_axis ax[TB_MAX_AXES];
    int n = be->axes(be, ax, TB_MAX_AXES);
    const char *vals[TB_MAX_AXES];
    char tv[16];
    snprintf(tv, sizeof tv, "%d", threads);
    for (int i = 0; i < n; i++)
        vals[i] = threads && strcmp(ax[i].name, "threads") == 0
                      ? tv
                      : ax[i].values[ax[i].def];
    void *ctx = NULL;
    char err[256] = "";
    int rc = be->create(be, vals, &ctx, err, sizeof err);
    if (rc)
        fail_msg("%s create: %s", be->name, err);
    return ctx;
}

#if TB_HAVE_LAPACKE
/* The largest value of be's threads axis (1 without one). */
static int max_threads(const tb_backend *be)
{
    tb_axis ax[TB_MAX_AXES];
    int n = be->axes(be, ax, TB_MAX_AXES);
    for (int i = 0; i < n; i++)
        if (strcmp(ax[i].name, "threads") == 0)
            return ax[i].n_values;
    return 1;
}
#endif

static uint64_t launches(const tb_backend *be, void *ctx)
{
    tb_backend_counters c;
    tb_backend_counters_read(be, ctx, &c);
    return c.kernel_launches;
}

/* Runs fn of backend be on host input `in` through the backend's memory
 * (alloc, upload, call, download) into host outputs `out` (made by
 * outputs_new).  Returns the kernel's code; *n_launch: launches counted
 * during the call. */
static int run_kernel(const tb_backend *be, void *ctx, tb_kernel_fn fn,
                      const tb_op *op, const tb_tensor *in, tb_tensor *out,
                      uint64_t *n_launch)
{
    tb_tensor din, dout[TB_MAX_OUTPUTS];
    tb_shape s = tb_tensor_shape(in);
    tb_tensor_init(&din, in->dtype, &s);
    assert_int_equal(be->alloc(ctx, &din), 0);
    assert_int_equal(be->upload(ctx, &din, in), 0);
    for (int o = 0; o < op->n_out; o++) {
        s = tb_tensor_shape(&out[o]);
        tb_tensor_init(&dout[o], out[o].dtype, &s);
        assert_int_equal(be->alloc(ctx, &dout[o]), 0);
        assert_int_equal(be->upload(ctx, &dout[o], &out[o]), 0);
    }
    tb_params p;
    memset(&p, 0, sizeof p);
    tb_params_defaults(op, &p);
    uint64_t l0 = launches(be, ctx);
    int rc = fn(ctx, &din, dout, &p);
    if (n_launch)
        *n_launch = launches(be, ctx) - l0;
    for (int o = 0; o < op->n_out; o++) {
        if (!rc)
            assert_int_equal(be->download(ctx, &out[o], &dout[o]), 0);
        be->free(ctx, &dout[o]);
    }
    be->free(ctx, &din);
    return rc;
}

/* f64 tensors holding case c's expected outputs. */
static void expected_new(const lv_case *c, tb_tensor *want)
{
    for (int o = 0; o < c->n_out; o++) {
        tb_shape s = c->out_shape[o][1] ? SHAPE(c->out_shape[o][0],
                                                c->out_shape[o][1])
                                        : SHAPE(c->out_shape[o][0]);
        assert_int_equal(tb_tensor_create(&want[o], TB_F64, &s), 0);
        memcpy(want[o].data, c->out[o], tb_tensor_nbytes(&want[o]));
    }
}

static double frob(const tb_tensor *t)
{
    double s = 0;
    for (int64_t i = 0; i < tb_tensor_numel(t); i++)
        s = hypot(s, tb_tensor_get(t, i));
    return s;
}

/* ---- 1. the reference against NumPy ------------------------------------- */

static void test_ref_oracle(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t ci = 0; ci < LV_N_CASES; ci++) {
        const lv_case *c = &lv_cases[ci];
        const tb_op *op = op_named(c->op);
        tb_dtype dt = dtype_named(c->dtype);
        tb_tensor a, got[TB_MAX_OUTPUTS], want[TB_MAX_OUTPUTS];
        matrix_new(&a, dt, c->m, c->n, c->in);
        outputs_new(op, TB_F64, c->m, c->n, got);
        expected_new(c, want);
        tb_params p;
        memset(&p, 0, sizeof p);
        int rc = op->ref(&a, got, &p);
        if (rc)
            fail_msg("%s: reference failed: %s", c->name, tb_strerror(rc));
        op->canon(got, op->n_out);
        double tol = REF_TOL * fmax(1, frob(&a)), worst = 0;
        for (int o = 0; o < op->n_out; o++)
            for (int64_t i = 0; i < tb_tensor_numel(&want[o]); i++) {
                double e = fabs(tb_tensor_get(&got[o], i) -
                                tb_tensor_get(&want[o], i));
                if (!(e <= tol) && bad++ < 10)
                    print_error("%s: output %d [%lld]: got %.17g want "
                                "%.17g\n",
                                c->name, o, (long long)i,
                                tb_tensor_get(&got[o], i),
                                tb_tensor_get(&want[o], i));
                worst = e > worst || e != e ? e : worst;
            }
        if (worst > tol / 10)
            print_message("# %s: max error %.3g (bound %.3g)\n", c->name,
                          worst, tol);
        tb_tensor_destroy(&a);
        destroy_all(got, op->n_out);
        destroy_all(want, op->n_out);
    }
    if (bad)
        fail_msg("%d reference values off the NumPy vectors", bad);
}

/* ---- 2. kernels against NumPy, as the runner checks --------------------- */

static void kernels_vs_oracle(const tb_backend *be, int threads,
                              const char *impl_suffix)
{
    void *ctx = backend_new(be, threads);
    int bad = 0;
    for (size_t ci = 0; ci < LV_N_CASES; ci++) {
        const lv_case *c = &lv_cases[ci];
        const tb_op *op = op_named(c->op);
        tb_dtype dt = dtype_named(c->dtype);
        tb_params p;
        memset(&p, 0, sizeof p);
        const char *impl = NULL;
        tb_kernel_fn fn = be->kernel(ctx, op, dt, &p, &impl).fn;
        if (!fn)
            fail_msg("%s: %s has no kernel", c->name, be->name);
        char want_impl[64];
        snprintf(want_impl, sizeof want_impl, "%s_%s_%s", op->name,
                 c->dtype, impl_suffix);
        assert_non_null(impl);
        if (strncmp(impl, want_impl, strlen(want_impl)) != 0)
            fail_msg("%s: impl '%s', expected '%s...'", c->name, impl,
                     want_impl);

        tb_tensor a, got[TB_MAX_OUTPUTS], want[TB_MAX_OUTPUTS];
        matrix_new(&a, dt, c->m, c->n, c->in);
        outputs_new(op, dt, c->m, c->n, got);
        expected_new(c, want);
        uint64_t nl = 0;
#if TB_HAVE_LAPACKE
        openblas_set_num_threads(1); /* the kernel must set its own */
#endif
        int rc = run_kernel(be, ctx, fn, op, &a, got, &nl);
        if (rc)
            fail_msg("%s on %s: %s", c->name, be->name, tb_strerror(rc));
        assert_int_equal(nl, 1);
#if TB_HAVE_LAPACKE
        if (be == &tb_backend_blas)
            assert_int_equal(openblas_get_num_threads(), threads);
#endif
        op->canon(got, op->n_out);
        op->canon(want, op->n_out);
        tb_shape is = SHAPE(c->m, c->n), os[TB_MAX_OUTPUTS];
        out_shapes(op, c->m, c->n, os);
        double rlen = op->reduce_len ? op->reduce_len(op, &is, os, &p, dt)
                                     : 1;
        tb_check ck;
        tb_check_outputs(got, want, op->n_out, op->tol[dt], rlen, &ck);
        if (!ck.passed) {
            print_error("%s on %s threads=%d: %lld bad, first output %d "
                        "[%lld] got %.9g want %.9g (atol %.3g rtol "
                        "%.3g)\n",
                        c->name, be->name, threads, (long long)ck.n_bad,
                        ck.first_bad_output, (long long)ck.first_bad,
                        ck.first_bad_got, ck.first_bad_ref, ck.atol,
                        ck.rtol);
            bad++;
        }
        tb_tensor_destroy(&a);
        destroy_all(got, op->n_out);
        destroy_all(want, op->n_out);
    }
    be->destroy(ctx);
    if (bad)
        fail_msg("%d cases out of tolerance on %s", bad, be->name);
}

static void test_cpu_oracle(void **state)
{
    (void)state;
    kernels_vs_oracle(&tb_backend_cpu, 0, "c");
}

#if TB_HAVE_LAPACKE
static void test_blas_oracle(void **state)
{
    (void)state;
    kernels_vs_oracle(&tb_backend_blas, 1, "lapacke");
    if (max_threads(&tb_backend_blas) > 1)
        kernels_vs_oracle(&tb_backend_blas, max_threads(&tb_backend_blas),
                          "lapacke");
}
#endif

/* ---- 3. identities on random matrices ----------------------------------- */

/* Who computes: the reference (f64 outputs) or a backend's kernel. */
typedef struct impl_t {
    const char *name;
    const tb_backend *be; /* NULL: the reference */
} impl_t;

static const impl_t impls[] = {
    {"ref", NULL},
    {"cpu", &tb_backend_cpu},
#if TB_HAVE_LAPACKE
    {"blas", &tb_backend_blas},
#endif
};

/* Runs op on a by implementation im, outputs of dtype dt (f64 for the
 * reference); returns the code. */
static int compute(const impl_t *im, const tb_op *op, const tb_tensor *a,
                   tb_tensor *out)
{
    int64_t m = a->shape[0], n = a->shape[1];
    if (!im->be) {
        outputs_new(op, TB_F64, m, n, out);
        tb_params p;
        memset(&p, 0, sizeof p);
        return op->ref(a, out, &p);
    }
    outputs_new(op, a->dtype, m, n, out);
    void *ctx = backend_new(im->be, 0);
    tb_kernel_fn fn = im->be->kernel(ctx, op, a->dtype, NULL, NULL).fn;
    assert_non_null(fn);
    uint64_t nl = 0;
    int rc = run_kernel(im->be, ctx, fn, op, a, out, &nl);
    if (!rc)
        assert_int_equal(nl, 1);
    im->be->destroy(ctx);
    return rc;
}

/* max |X^T X - I| over the columns of the rows x cols matrix t
 * (transposed: over its rows). */
static double orth_defect(const tb_tensor *t, bool rows)
{
    int64_t r = t->shape[0], c = t->shape[1];
    int64_t nv = rows ? r : c, len = rows ? c : r;
    double worst = 0;
    for (int64_t i = 0; i < nv; i++)
        for (int64_t j = 0; j < nv; j++) {
            double d = 0;
            for (int64_t k = 0; k < len; k++)
                d += (rows ? tb_tensor_get(t, i * c + k)
                           : tb_tensor_get(t, k * c + i)) *
                     (rows ? tb_tensor_get(t, j * c + k)
                           : tb_tensor_get(t, k * c + j));
            d = fabs(d - (i == j));
            worst = d > worst || d != d ? d : worst;
        }
    return worst;
}

/* The symmetric matrix eigh sees: A's lower triangle mirrored. */
static double sym_at(const tb_tensor *a, int64_t i, int64_t j)
{
    int64_t n = a->shape[1];
    return i >= j ? tb_tensor_get(a, i * n + j) : tb_tensor_get(a, j * n + i);
}

/* The largest defect of op's identities on a, relative as described in
 * the file comment; fails the test on an ordering/shape violation. */
static double identity_defect(const tb_op *op, const tb_tensor *a,
                              const tb_tensor *out)
{
    int64_t m = a->shape[0], n = a->shape[1], k = m < n ? m : n;
    double scale = fmax(frob(a), DBL_MIN), worst = 0;
#define WORSE(x)                                                          \
    do {                                                                  \
        double x_ = (x);                                                  \
        worst = x_ > worst || x_ != x_ ? x_ : worst;                      \
    } while (0)
    if (op->id == TB_OP_svd) {
        for (int64_t j = 0; j < k; j++) {
            double s = tb_tensor_get(&out[1], j);
            assert_true(s >= 0);
            if (j)
                assert_true(s <= tb_tensor_get(&out[1], j - 1));
        }
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double r = 0;
                for (int64_t c = 0; c < k; c++)
                    r += tb_tensor_get(&out[0], i * k + c) *
                         tb_tensor_get(&out[1], c) *
                         tb_tensor_get(&out[2], c * n + j);
                WORSE(fabs(r - tb_tensor_get(a, i * n + j)) / scale);
            }
        WORSE(orth_defect(&out[0], false));
        WORSE(orth_defect(&out[2], true));
    } else if (op->id == TB_OP_qr) {
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < i && j < n; j++)
                assert_true(tb_tensor_get(&out[1], i * n + j) == 0);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double r = 0;
                for (int64_t c = 0; c < k; c++)
                    r += tb_tensor_get(&out[0], i * k + c) *
                         tb_tensor_get(&out[1], c * n + j);
                WORSE(fabs(r - tb_tensor_get(a, i * n + j)) / scale);
            }
        WORSE(orth_defect(&out[0], false));
    } else {
        for (int64_t j = 1; j < n; j++)
            assert_true(tb_tensor_get(&out[0], j) >=
                        tb_tensor_get(&out[0], j - 1));
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = 0; c < n; c++) { /* (S V - V diag(w))[i,c] */
                double r = 0;
                for (int64_t j = 0; j < n; j++)
                    r += sym_at(a, i, j) * tb_tensor_get(&out[1], j * n + c);
                r -= tb_tensor_get(&out[1], i * n + c) *
                     tb_tensor_get(&out[0], c);
                WORSE(fabs(r) / scale);
            }
        WORSE(orth_defect(&out[1], false));
    }
#undef WORSE
    return worst;
}

/* DIAG: random diagonal (eigh's reflectors are all skipped); CLUSTER:
 * I + a a^T (eigenvalue 1 repeated n - 1 times, so QL splits early);
 * GRADED: a_ij 4^-(i+j) (entries from 1 down to 4^-2(n-1)); HUGE, TINY:
 * random times 2^100 or 2^-100 (f32), 2^600 or 2^-600 (f64), where
 * squares of entries overflow or underflow the dtype. */
typedef enum { RANDOM, ZERO, RANK1, DIAG, CLUSTER, GRADED, HUGE, TINY } kind;

static void identities(tb_dtype dt)
{
    static const struct {
        int64_t m, n;
        kind k;
    } shapes[] = {
        {1, 1, RANDOM},   {3, 3, RANDOM},  {4, 4, RANDOM},
        {17, 9, RANDOM},  {9, 17, RANDOM}, {33, 33, RANDOM},
        {64, 20, RANDOM}, {20, 64, RANDOM}, {64, 64, RANDOM},
        {6, 6, ZERO},     {7, 3, ZERO},    {12, 12, RANK1},
        {10, 5, RANK1},   {5, 10, RANK1},  {9, 9, DIAG},
        {8, 5, DIAG},     {16, 16, CLUSTER}, {13, 13, GRADED},
        {100, 100, RANDOM}, {16, 16, HUGE}, {16, 16, TINY},
        {12, 7, HUGE},    {7, 12, TINY},
    };
    const double eps = dt == TB_F32 ? FLT_EPSILON : DBL_EPSILON;
    static const char *const ops[] = {"svd", "qr", "eigh"};
    int bad = 0;
    for (size_t oi = 0; oi < 3; oi++) {
        const tb_op *op = op_named(ops[oi]);
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            int64_t m = shapes[si].m, n = shapes[si].n;
            if (op->id == TB_OP_eigh && m != n)
                continue;
            tb_tensor a;
            matrix_new(&a, dt, m, n, NULL);
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double x = tb_tensor_get(&a, i * n + j);
                    if (shapes[si].k == ZERO)
                        x = 0;
                    else if (shapes[si].k == RANK1 ||
                             shapes[si].k == CLUSTER) /* a_i * a_j */
                        x = tb_tensor_get(&a, i * n) *
                                tb_tensor_get(&a, j % m * n) +
                            (shapes[si].k == CLUSTER && i == j);
                    else if (shapes[si].k == DIAG && i != j)
                        x = 0;
                    else if (shapes[si].k == GRADED)
                        x = ldexp(x, -2 * (int)(i + j));
                    else if (shapes[si].k == HUGE || shapes[si].k == TINY)
                        x = ldexp(x, (dt == TB_F32 ? 100 : 600) *
                                         (shapes[si].k == HUGE ? 1 : -1));
                    tb_tensor_set(&a, i * n + j, x);
                }
            /* A bound of c * max(m, n) * eps: backward-stable algorithms
             * make errors of order n * eps; c = 4 leaves room for the
             * constants, which random matrices keep small. */
            double bound = 4 * (double)(m > n ? m : n) * eps;
            for (size_t ii = 0; ii < sizeof impls / sizeof impls[0];
                 ii++) {
                const impl_t *im = &impls[ii];
                double e_bound = im->be ? bound : 4 * (m > n ? m : n) *
                                                      DBL_EPSILON;
                tb_tensor out[TB_MAX_OUTPUTS];
                int rc = compute(im, op, &a, out);
                if (rc)
                    fail_msg("%s %lldx%lld %s on %s: %s", op->name,
                             (long long)m, (long long)n, tb_dtype_name(dt),
                             im->name, tb_strerror(rc));
                double d = identity_defect(op, &a, out);
                if (!(d <= e_bound)) {
                    print_error("%s %lldx%lld %s on %s: defect %.3g > "
                                "%.3g (seed 0x%016llx)\n",
                                op->name, (long long)m, (long long)n,
                                tb_dtype_name(dt), im->name, d, e_bound,
                                (unsigned long long)SEED);
                    bad++;
                }
                destroy_all(out, op->n_out);
            }
            tb_tensor_destroy(&a);
        }
    }
    if (bad)
        fail_msg("%d identity checks failed", bad);
}

static void test_identities_f32(void **state)
{
    (void)state;
    identities(TB_F32);
}

static void test_identities_f64(void **state)
{
    (void)state;
    identities(TB_F64);
}

/* ---- 4. eigh reads the lower triangle only ------------------------------ */

static void test_lower_triangle(void **state)
{
    (void)state;
    const tb_op *op = op_named("eigh");
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
        for (size_t ii = 0; ii < sizeof impls / sizeof impls[0]; ii++) {
            const int64_t n = 9;
            tb_tensor a, b, oa[2], ob[2];
            matrix_new(&a, (tb_dtype)dt, n, n, NULL);
            matrix_new(&b, (tb_dtype)dt, n, n, NULL);
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j <= i; j++)
                    tb_tensor_set(&b, i * n + j, tb_tensor_get(&a, i * n + j));
            assert_int_equal(compute(&impls[ii], op, &a, oa), 0);
            assert_int_equal(compute(&impls[ii], op, &b, ob), 0);
            for (int o = 0; o < 2; o++)
                assert_memory_equal(oa[o].data, ob[o].data,
                                    tb_tensor_nbytes(&oa[o]));
            tb_tensor_destroy(&a);
            tb_tensor_destroy(&b);
            destroy_all(oa, 2);
            destroy_all(ob, 2);
        }
}

/* ---- 5. sign conventions ------------------------------------------------ */

/* Outputs of op on a random m x n matrix from the reference, converted
 * to dtype dt; canon applied to a copy with random sign flips (of
 * matching U column / Vt row, Q column / R row, V column) must give the
 * canonical outputs exactly, and canon must be idempotent. */
static void canon_case(const tb_op *op, tb_dtype dt, int64_t m, int64_t n)
{
    tb_tensor a, r[3], x[3], y[3];
    matrix_new(&a, TB_F64, m, n, NULL);
    outputs_new(op, TB_F64, m, n, r);
    tb_params p;
    memset(&p, 0, sizeof p);
    assert_int_equal(op->ref(&a, r, &p), 0);
    for (int o = 0; o < op->n_out; o++) {
        tb_shape s = tb_tensor_shape(&r[o]);
        assert_int_equal(tb_tensor_create(&x[o], dt, &s), 0);
        assert_int_equal(tb_tensor_create(&y[o], dt, &s), 0);
        for (int64_t i = 0; i < tb_tensor_numel(&r[o]); i++)
            tb_tensor_set(&x[o], i, tb_tensor_get(&r[o], i));
    }
    op->canon(x, op->n_out);
    /* Which output holds vectors as columns, and which (if any) holds
     * the matching rows. */
    int vec = op->id == TB_OP_eigh ? 1 : 0;
    int rows = op->id == TB_OP_svd ? 2 : op->id == TB_OP_qr ? 1 : -1;
    int64_t vr = x[vec].shape[0], vc = x[vec].shape[1];
    for (int o = 0; o < op->n_out; o++)
        for (int64_t i = 0; i < tb_tensor_numel(&x[o]); i++)
            tb_tensor_set(&y[o], i, tb_tensor_get(&x[o], i));
    for (int64_t j = 0; j < vc; j++) {
        if (j > 0 && rng_uniform() < 0) /* column 0 always flips */
            continue;
        for (int64_t i = 0; i < vr; i++)
            tb_tensor_set(&y[vec], i * vc + j,
                          -tb_tensor_get(&y[vec], i * vc + j));
        if (rows >= 0) {
            int64_t rc = y[rows].shape[1];
            for (int64_t i = 0; i < rc; i++)
                tb_tensor_set(&y[rows], j * rc + i,
                              -tb_tensor_get(&y[rows], j * rc + i));
        }
    }
    op->canon(y, op->n_out);
    for (int o = 0; o < op->n_out; o++)
        assert_memory_equal(x[o].data, y[o].data, tb_tensor_nbytes(&x[o]));
    op->canon(y, op->n_out); /* idempotent */
    for (int o = 0; o < op->n_out; o++)
        assert_memory_equal(x[o].data, y[o].data, tb_tensor_nbytes(&x[o]));
    /* The convention itself. */
    if (op->id == TB_OP_qr) {
        for (int64_t j = 0; j < x[1].shape[0]; j++)
            assert_true(tb_tensor_get(&x[1], j * x[1].shape[1] + j) >= 0);
    } else {
        for (int64_t j = 0; j < vc; j++) {
            double big = 0;
            for (int64_t i = 0; i < vr; i++) {
                double v = tb_tensor_get(&x[vec], i * vc + j);
                if (fabs(v) > fabs(big))
                    big = v;
            }
            assert_true(big > 0);
        }
    }
    tb_tensor_destroy(&a);
    destroy_all(r, op->n_out);
    destroy_all(x, op->n_out);
    destroy_all(y, op->n_out);
}

static void test_canon(void **state)
{
    (void)state;
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
        canon_case(op_named("svd"), (tb_dtype)dt, 8, 5);
        canon_case(op_named("svd"), (tb_dtype)dt, 5, 8);
        canon_case(op_named("qr"), (tb_dtype)dt, 8, 5);
        canon_case(op_named("qr"), (tb_dtype)dt, 5, 8);
        canon_case(op_named("eigh"), (tb_dtype)dt, 7, 7);
    }
}

/* ---- 6. coverage -------------------------------------------------------- */

static void test_coverage(void **state)
{
    (void)state;
    void *cpu = backend_new(&tb_backend_cpu, 0);
#if TB_HAVE_LAPACKE
    void *blas = backend_new(&tb_backend_blas, 0);
#endif
    int n_linalg = 0;
    for (int id = 0; id < TB_OP_COUNT; id++) {
        const tb_op *op = tb_op_get((tb_op_id)id);
        if (op->category != TB_CAT_LINALG)
            continue;
        n_linalg++;
        assert_non_null(op->canon);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            int found = 0;
            for (size_t ci = 0; ci < LV_N_CASES; ci++)
                found += strcmp(lv_cases[ci].op, op->name) == 0 &&
                         dtype_named(lv_cases[ci].dtype) == (tb_dtype)dt;
            if (found < 5)
                fail_msg("%s %s: %d oracle vectors, expected >= 5",
                         op->name, tb_dtype_name((tb_dtype)dt), found);
            const char *impl = NULL;
            assert_non_null(
                tb_backend_cpu.kernel(cpu, op, (tb_dtype)dt, NULL, &impl).fn);
            char want[64];
            snprintf(want, sizeof want, "%s_%s_c", op->name,
                     tb_dtype_name((tb_dtype)dt));
            assert_string_equal(impl, want);
#if TB_HAVE_LAPACKE
            assert_non_null(
                tb_backend_blas.kernel(blas, op, (tb_dtype)dt, NULL, NULL).fn);
#endif
        }
    }
    assert_int_equal(n_linalg, 3);
    for (size_t ci = 0; ci < LV_N_CASES; ci++)
        assert_int_equal(op_named(lv_cases[ci].op)->category,
                         TB_CAT_LINALG);
    tb_backend_cpu.destroy(cpu);
#if TB_HAVE_LAPACKE
    tb_backend_blas.destroy(blas);
#endif
}

/* ---- 7. errors ----------------------------------------------------------- */

static void test_nonfinite(void **state)
{
    (void)state;
    static const char *const ops[] = {"svd", "qr", "eigh"};
    const double bad_values[] = {NAN, INFINITY};
    for (size_t oi = 0; oi < 3; oi++) {
        const tb_op *op = op_named(ops[oi]);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
            for (size_t bi = 0; bi < 2; bi++)
                for (size_t ii = 0; ii < sizeof impls / sizeof impls[0];
                     ii++) {
                    tb_tensor a, out[TB_MAX_OUTPUTS];
                    matrix_new(&a, (tb_dtype)dt, 6, 6, NULL);
                    /* lower triangle: eigh reads it */
                    tb_tensor_set(&a, 4 * 6 + 2, bad_values[bi]);
                    int rc = compute(&impls[ii], op, &a, out);
                    if (rc != TB_ENUMERIC)
                        fail_msg("%s %s %g on %s: got %d (%s), expected "
                                 "TB_ENUMERIC",
                                 op->name, tb_dtype_name((tb_dtype)dt),
                                 bad_values[bi], impls[ii].name, rc,
                                 tb_strerror(rc));
                    tb_tensor_destroy(&a);
                    destroy_all(out, op->n_out);
                }
    }
}

/* A shape rule refusal, with a message naming the op. */
static void refused(const char *name, tb_shape s)
{
    const tb_op *op = op_named(name);
    tb_shape os[TB_MAX_OUTPUTS];
    char err[256] = "";
    assert_int_equal(tb_op_infer(op, &s, 1, NULL, os, err, sizeof err),
                     TB_ESHAPE);
    if (!strstr(err, name))
        fail_msg("%s: message '%s' does not name the op", name, err);
}

static void test_shapes(void **state)
{
    (void)state;
    refused("eigh", SHAPE(3, 4));
    refused("eigh", SHAPE(5, 2));
    refused("eigh", SHAPE(4));
    refused("svd", SHAPE(2, 3, 4));
    refused("svd", SHAPE(6));
    refused("qr", SHAPE(2, 2, 2));
    refused("qr", SHAPE(70000, 3));
    tb_shape os[TB_MAX_OUTPUTS], s74 = SHAPE(7, 4), s4 = SHAPE(4),
                                  s44 = SHAPE(4, 4), s47 = SHAPE(4, 7);
    out_shapes(op_named("svd"), 7, 4, os);
    assert_true(tb_shape_equal(&os[0], &s74));
    assert_true(tb_shape_equal(&os[1], &s4));
    assert_true(tb_shape_equal(&os[2], &s44));
    out_shapes(op_named("qr"), 4, 7, os);
    assert_true(tb_shape_equal(&os[0], &s44));
    assert_true(tb_shape_equal(&os[1], &s47));
}

/* Kernels refuse what their op's rule would not produce. */
static void test_kernel_errors(void **state)
{
    (void)state;
    static const char *const ops[] = {"svd", "qr", "eigh"};
    for (size_t oi = 0; oi < 3; oi++) {
        const tb_op *op = op_named(ops[oi]);
        for (size_t ii = 1; ii < sizeof impls / sizeof impls[0]; ii++) {
            const tb_backend *be = impls[ii].be;
            void *ctx = backend_new(be, 0);
            tb_kernel_fn fn = be->kernel(ctx, op, TB_F32, NULL, NULL).fn;
            assert_non_null(fn);
            tb_tensor a, out[TB_MAX_OUTPUTS];
            /* f64 operands to the f32 kernel */
            matrix_new(&a, TB_F64, 5, 5, NULL);
            outputs_new(op, TB_F64, 5, 5, out);
            assert_int_not_equal(run_kernel(be, ctx, fn, op, &a, out, NULL),
                                 0);
            tb_tensor_destroy(&a);
            destroy_all(out, op->n_out);
            /* outputs of a 6 x 6 input for a 5 x 5 one */
            matrix_new(&a, TB_F32, 5, 5, NULL);
            outputs_new(op, TB_F32, 6, 6, out);
            assert_int_equal(run_kernel(be, ctx, fn, op, &a, out, NULL),
                             TB_ESHAPE);
            tb_tensor_destroy(&a);
            destroy_all(out, op->n_out);
            /* eigh of a non-square matrix */
            if (op->id == TB_OP_eigh) {
                matrix_new(&a, TB_F32, 5, 4, NULL);
                outputs_new(op, TB_F32, 5, 5, out);
                assert_int_equal(run_kernel(be, ctx, fn, op, &a, out, NULL),
                                 TB_ESHAPE);
                tb_tensor_destroy(&a);
                destroy_all(out, op->n_out);
            }
            be->destroy(ctx);
        }
    }
}

/* The runner's check of a factorization (tb_check_factorization): a
 * matrix with repeated eigenvalues and singular values (rank 1: any basis
 * of the zero subspace is right) passes for every implementation, though
 * its vectors differ from the reference's; each kind of wrong output
 * fails the identity it breaks. */
static void test_factorization_check(void **state)
{
    (void)state;
    double x[25];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            x[i * 5 + j] = (i + 1.0) * (j + 1.0); /* v v^T, rank 1 */
    static const char *const names[] = {"svd", "qr", "eigh"};
    for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++)
        for (int o = 0; o < 3; o++)
            for (size_t im = 1; im < sizeof impls / sizeof impls[0]; im++) {
                const tb_op *op = op_named(names[o]);
                tb_tensor a, got[TB_MAX_OUTPUTS], ref[TB_MAX_OUTPUTS];
                matrix_new(&a, (tb_dtype)d, 5, 5, x);
                assert_int_equal(compute(&impls[0], op, &a, ref), 0);
                assert_int_equal(compute(&impls[im], op, &a, got), 0);
                tb_check ck;
                tb_check_factorization(op, &a, got, ref, op->tol[d], &ck);
                if (!ck.passed)
                    fail_msg("%s %s %s: %lld bad, identity %d: %g vs %g",
                             impls[im].name, op->name,
                             tb_dtype_name((tb_dtype)d),
                             (long long)ck.n_bad, ck.first_bad_output,
                             ck.first_bad_got, ck.first_bad_ref);
                assert_string_equal(ck.method, "identities");
                /* break each identity in turn */
                int vals = op->id == TB_OP_svd ? 1 : 0;
                int vecs = op->id == TB_OP_eigh ? 1 : 0;
                if (op->id != TB_OP_qr) { /* a value off by 1% of ||A|| */
                    double v = tb_tensor_get(&got[vals], 0);
                    tb_tensor_set(&got[vals], 0, v + 0.55);
                    tb_check_factorization(op, &a, got, ref, op->tol[d],
                                           &ck);
                    assert_false(ck.passed);
                    assert_int_equal(ck.first_bad_output, 0);
                    tb_tensor_set(&got[vals], 0, v);
                }
                /* a vector entry scaled: reconstruction or orthogonality */
                double e = tb_tensor_get(&got[vecs], 3);
                tb_tensor_set(&got[vecs], 3, e * 1.01 + 0.01);
                tb_check_factorization(op, &a, got, ref, op->tol[d], &ck);
                assert_false(ck.passed);
                assert_true(ck.first_bad_output == 1 ||
                            ck.first_bad_output == 2);
                tb_tensor_set(&got[vecs], 3, e);
                if (op->id == TB_OP_qr) { /* R not triangular */
                    tb_tensor_set(&got[1], 5, 1e-30);
                    tb_check_factorization(op, &a, got, ref, op->tol[d],
                                           &ck);
                    assert_false(ck.passed);
                    assert_int_equal(ck.first_bad_output, 3);
                }
                destroy_all(got, op->n_out);
                destroy_all(ref, op->n_out);
                tb_tensor_destroy(&a);
            }
}

#define T(name)                                                           \
    cmocka_unit_test_setup_teardown(test_##name, leak_setup, leak_teardown)

int main(int argc, char **argv)
{
    static const struct CMUnitTest tests[] = {
        T(ref_oracle),
        T(cpu_oracle),
#if TB_HAVE_LAPACKE
        T(blas_oracle),
#endif
        T(identities_f32),
        T(identities_f64),
        T(lower_triangle),
        T(factorization_check),
        T(canon),
        T(coverage),
        T(nonfinite),
        T(shapes),
        T(kernel_errors),
    };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            cmocka_set_test_filter(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--filter PATTERN]\n", argv[0]);
            return 2;
        }
    }
    printf("# test_linalg: %zu oracle vectors, seed 0x%016llx, LAPACKE "
           "%s\n",
           (size_t)LV_N_CASES, (unsigned long long)SEED,
           TB_HAVE_LAPACKE ? "in" : "not built");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
