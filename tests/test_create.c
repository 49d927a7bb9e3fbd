/* Tests of the creation ops: zeros, ones, full, arange, rand_uniform,
 * rand_normal, copy (reference kernels in src/ops/ref_create.c, cpu
 * kernels in src/backends/cpu/create.c, the stream in src/ops/rand.h).
 *
 *  1. oracle_*: the cpu kernels and the reference against NumPy/PyTorch
 *     vectors (tests/data/create_vectors.h, scripts/gen_oracle_create.py)
 *     in both dtypes, at 1 and 2 threads; the random streams against an
 *     independent Python implementation of the stream rand.h documents.
 *  2. rand_*: kernel == reference bit for bit in f64 (and the f32 kernel
 *     is the reference rounded once, within the op tolerance); the same
 *     bits at 1 and 2 threads and for any shape holding the same number
 *     of elements (out[i] depends only on (seed, i): a 10-element tensor
 *     is the prefix of a 1000-element one); the Kolmogorov-Smirnov
 *     statistic of 10^6 draws against the exact uniform / normal CDF
 *     under the 1e-3 critical value; mean and variance within 5 standard
 *     errors of the CLT; different seeds give different streams;
 *     rand_normal is Box-Muller on rand_uniform's stream.
 *  3. coverage: every creation op has oracle cases in both dtypes and a
 *     cpu kernel in both; kernels count one launch per call, refuse bad
 *     operands with an error code, and leak nothing (leak_check in every
 *     teardown). */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "backends/backend.h"
#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "backends/cpu/arange.h"
#include "ops/rand.h"
#include "ops/ref.h"
#include "ops/tensor.h"
#include "tests/data/create_vectors.h"

extern const tb_backend tb_backend_cpu;
static const tb_backend *const B = &tb_backend_cpu;

#define NCASES (sizeof cv_cases / sizeof cv_cases[0])
#define NRANDS (sizeof cv_rands / sizeof cv_rands[0])

/* Kolmogorov-Smirnov: the asymptotic critical value of sqrt(n) * D at
 * significance 1e-3 is sqrt(-ln(1e-3 / 2) / 2) = 1.9495 (the Kolmogorov
 * distribution; exact to <1% for n = 10^6). */
#define KS_N 1000000
#define KS_CRIT_1E3 1.9495
/* Moments: |estimate - expected| under 5 standard errors (two-sided
 * p = 5.7e-7 for a correct generator). */
#define CLT_K 5.0

/* ---- fixtures and helpers ------------------------------------------------ */

/* Fixtures: leak_setup/leak_teardown (testutil.h). */

/* A cpu instance with isa=auto and `threads` threads (capped at what the
 * backend offers here). */
static void *instance(int threads)
{
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    if (threads > ax[1].n_values)
        threads = ax[1].n_values;
    const char *vals[2] = {"auto", ax[1].values[threads - 1]};
    void *ctx = NULL;
    char err[256] = "";
    int rc = B->create(B, vals, &ctx, err, sizeof err);
    if (rc)
        fail_msg("cpu create: %s", err);
    return ctx;
}

static uint64_t launches(void *ctx)
{
    tb_backend_counters c;
    tb_backend_counters_read(B, ctx, &c);
    return c.kernel_launches;
}

static tb_dtype dtype_of(const char *s)
{
    return strcmp(s, "f32") == 0 ? TB_F32 : TB_F64;
}

static tb_params params_of(const tb_op *op, const cv_param *ps, int n)
{
    tb_params p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < n; i++) {
        char err[256] = "";
        if (tb_params_set(op, &p, ps[i].name, ps[i].value, err, sizeof err))
            fail_msg("%s: %s", op->name, err);
    }
    tb_params_defaults(op, &p);
    return p;
}

static double as_dt(double v, tb_dtype dt)
{
    return dt == TB_F32 ? (double)(float)v : v;
}

/* Exactly equal, including the sign of zero. */
static bool same(double a, double b)
{
    return a == b && signbit(a) == signbit(b);
}

/* out (created here, NaN-filled so an unwritten element shows) = the cpu
 * kernel of op; one launch exactly.  Returns the kernel's code. */
static int run_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                      const tb_tensor *in, const tb_shape *os,
                      const tb_params *p, tb_tensor *out)
{
    assert_int_equal(tb_tensor_create(out, dt, os), 0);
    for (int64_t i = 0; i < tb_tensor_numel(out); i++)
        tb_tensor_set(out, i, NAN);
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, p, &impl).fn;
    assert_non_null(fn);
    assert_non_null(impl);
    uint64_t l0 = launches(ctx);
    int rc = fn(ctx, in, out, p);
    assert_int_equal(launches(ctx) - l0, 1);
    return rc;
}

/* The reference with the case dtype in in[0]'s header (ref_create.c). */
static int run_ref(const tb_op *op, tb_dtype dt, const tb_tensor *in,
                   const tb_shape *os, const tb_params *p, tb_tensor *ref)
{
    assert_int_equal(tb_tensor_create(ref, TB_F64, os), 0);
    for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
        tb_tensor_set(ref, i, NAN);
    tb_tensor hdr;
    tb_tensor_init(&hdr, dt, os);
    return op->ref(op->n_in ? in : &hdr, ref, p);
}

static tb_shape case_shape(const cv_case *c)
{
    tb_shape s;
    memset(&s, 0, sizeof s);
    s.ndim = c->ndim;
    for (int d = 0; d < c->ndim; d++)
        s.dim[d] = c->shape[d];
    return s;
}

/* ======================================================================== */
/* 1. oracle vectors                                                        */
/* ======================================================================== */

static void check_case(void *ctx, int threads, size_t ci)
{
    const cv_case *c = &cv_cases[ci];
    const tb_op *op = tb_op_find(c->op);
    assert_non_null(op);
    const tb_dtype dt = dtype_of(c->dtype);
    const tb_shape s = case_shape(c);
    const tb_params p = params_of(op, c->params, c->n_params);
    tb_shape os;
    char err[256] = "";
    assert_int_equal(tb_op_infer(op, &s, 1, &p, &os, err, sizeof err), 0);
    assert_true(tb_shape_equal(&os, &s));
    tb_tensor in, out, ref;
    memset(&in, 0, sizeof in);
    if (c->in) {
        assert_int_equal(tb_tensor_create(&in, dt, &s), 0);
        for (int64_t i = 0; i < tb_tensor_numel(&in); i++)
            tb_tensor_set(&in, i, c->in[i]);
    }
    assert_int_equal(run_kernel(ctx, op, dt, &in, &os, &p, &out), 0);
    assert_int_equal(run_ref(op, dt, &in, &os, &p, &ref), 0);
    int64_t bad = 0;
    for (int64_t i = 0; i < tb_tensor_numel(&out); i++) {
        /* the kernel: the oracle in the case dtype, exactly; the
         * reference: the oracle exactly (arange's f32 vectors hold the
         * double that f32 rounds once) */
        double got = tb_tensor_get(&out, i), want = as_dt(c->out[i], dt);
        double r = tb_tensor_get(&ref, i);
        if ((!same(got, want) || !same(r, c->out[i])) && bad++ < 3)
            print_error("case %zu %s_%s threads=%d [%lld]: kernel %.17g "
                        "ref %.17g oracle %.17g\n",
                        ci, c->op, c->dtype, threads, (long long)i, got, r,
                        c->out[i]);
    }
    tb_tensor_destroy(&out);
    tb_tensor_destroy(&ref);
    tb_tensor_destroy(&in);
    assert_int_equal(bad, 0);
}

static void test_oracle_cases(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        void *ctx = instance(threads);
        for (size_t ci = 0; ci < NCASES; ci++)
            check_case(ctx, threads, ci);
        B->destroy(ctx);
    }
}

/* The stream at the vectors' indices, from the kernel and the
 * reference: rand_uniform exactly; rand_normal within the op tolerance
 * (libm's log/cos/sin may differ by an ulp from the generator's). */
static void test_oracle_streams(void **state)
{
    (void)state;
    void *ctx = instance(2);
    for (size_t k = 0; k < NRANDS; k++) {
        const cv_rand *r = &cv_rands[k];
        const tb_op *op = tb_op_find(r->op);
        assert_non_null(op);
        const tb_dtype dt = dtype_of(r->dtype);
        const tb_params p = params_of(op, r->params, 3);
        const tb_shape s = SHAPE(r->n);
        tb_tensor out, ref;
        assert_int_equal(run_kernel(ctx, op, dt, NULL, &s, &p, &out), 0);
        assert_int_equal(run_ref(op, dt, NULL, &s, &p, &ref), 0);
        const tb_tol tol = op->tol[dt];
        const bool exact = op->id == TB_OP_rand_uniform;
        int bad = 0;
        for (int j = 0; j < CV_RAND_NIDX; j++) {
            int64_t i = (int64_t)cv_rand_idx[j];
            double want = r->values[j];
            double got = tb_tensor_get(&out, i);
            double rv = as_dt(tb_tensor_get(&ref, i), dt);
            double lim = tol.atol + tol.rtol * fabs(want);
            bool ok = exact ? same(got, want) && same(rv, want)
                            : fabs(got - want) <= lim &&
                                  fabs(rv - want) <= lim;
            if (!ok && bad++ < 3)
                print_error("%s_%s stream %zu [%lld]: kernel %.17g ref "
                            "%.17g python %.17g\n",
                            r->op, r->dtype, k, (long long)i, got, rv, want);
        }
        tb_tensor_destroy(&out);
        tb_tensor_destroy(&ref);
        assert_int_equal(bad, 0);
    }
    B->destroy(ctx);
}

/* ======================================================================== */
/* 2. random streams                                                        */
/* ======================================================================== */

typedef struct rcase {
    tb_op_id op;
    double a, b, seed;
} rcase;

static const rcase rcases[] = {
    {TB_OP_rand_uniform, 0, 1, 0},
    {TB_OP_rand_uniform, -2.5, 7, 42},
    {TB_OP_rand_uniform, -1e3, 1e-3, 9007199254740992.0},
    {TB_OP_rand_normal, 0, 1, 0},
    {TB_OP_rand_normal, 3, 0.5, 7},
    {TB_OP_rand_normal, -1e3, 1e2, 123456789},
};

static tb_params rparams(const tb_op *op, double a, double b, double seed)
{
    const bool u = op->id == TB_OP_rand_uniform;
    const cv_param ps[3] = {{u ? "low" : "mean", a},
                            {u ? "high" : "std", b},
                            {"seed", seed}};
    return params_of(op, ps, 3);
}

/* Kernel vs reference on shapes with odd lengths and tails, f64 bit for
 * bit, f32 within the op tolerance and equal to the reference rounded
 * once to float. */
static void test_rand_vs_ref(void **state)
{
    (void)state;
    const tb_shape shapes[] = {SHAPE(1), SHAPE(7), SHAPE(513),
                               SHAPE(3, 5, 7), SHAPE(70001)};
    for (int threads = 1; threads <= 2; threads++) {
        void *ctx = instance(threads);
        for (size_t k = 0; k < sizeof rcases / sizeof rcases[0]; k++) {
            const tb_op *op = tb_op_get(rcases[k].op);
            tb_params p =
                rparams(op, rcases[k].a, rcases[k].b, rcases[k].seed);
            for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
                for (size_t si = 0; si < sizeof shapes / sizeof shapes[0];
                     si++) {
                    tb_tensor out, ref;
                    assert_int_equal(run_kernel(ctx, op, (tb_dtype)dt, NULL,
                                                &shapes[si], &p, &out),
                                     0);
                    assert_int_equal(run_ref(op, (tb_dtype)dt, NULL,
                                             &shapes[si], &p, &ref),
                                     0);
                    const tb_tol tol = op->tol[dt];
                    int bad = 0;
                    for (int64_t i = 0; i < tb_tensor_numel(&out); i++) {
                        double g = tb_tensor_get(&out, i);
                        double w = tb_tensor_get(&ref, i);
                        bool ok = same(g, as_dt(w, (tb_dtype)dt)) &&
                                  fabs(g - w) <= tol.atol +
                                                     tol.rtol * fabs(w);
                        if (!ok && bad++ < 3)
                            print_error("%s_%s case %zu shape %zu [%lld]: "
                                        "kernel %.17g ref %.17g\n",
                                        op->name,
                                        tb_dtype_name((tb_dtype)dt), k, si,
                                        (long long)i, g, w);
                    }
                    tb_tensor_destroy(&out);
                    tb_tensor_destroy(&ref);
                    assert_int_equal(bad, 0);
                }
        }
        B->destroy(ctx);
    }
}

/* Same bits at 1 and 2 threads (a size split over both), for a 2-D shape
 * of the same element count, and as a prefix of a longer tensor. */
static void test_rand_split_invariance(void **state)
{
    (void)state;
    void *c1 = instance(1), *c2 = instance(2);
    const int64_t n = (1 << 20) + 7; /* odd: a split pair in rand_normal */
    for (size_t k = 0; k < sizeof rcases / sizeof rcases[0]; k++) {
        const tb_op *op = tb_op_get(rcases[k].op);
        tb_params p = rparams(op, rcases[k].a, rcases[k].b, rcases[k].seed);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            const size_t es = tb_dtype_size((tb_dtype)dt);
            const tb_shape s1 = SHAPE(n), s2 = SHAPE(7, (n + 6) / 7);
            tb_tensor a, b, c, small, mid;
            assert_int_equal(
                run_kernel(c1, op, (tb_dtype)dt, NULL, &s1, &p, &a), 0);
            assert_int_equal(
                run_kernel(c2, op, (tb_dtype)dt, NULL, &s1, &p, &b), 0);
            assert_memory_equal(a.data, b.data, (size_t)n * es);
            /* 7 x 149798 elements: the first n of them */
            assert_int_equal(
                run_kernel(c2, op, (tb_dtype)dt, NULL, &s2, &p, &c), 0);
            assert_true(tb_tensor_numel(&c) >= n);
            assert_memory_equal(a.data, c.data, (size_t)n * es);
            const tb_shape s10 = SHAPE(10), s1000 = SHAPE(1000);
            assert_int_equal(
                run_kernel(c1, op, (tb_dtype)dt, NULL, &s10, &p, &small), 0);
            assert_int_equal(
                run_kernel(c2, op, (tb_dtype)dt, NULL, &s1000, &p, &mid), 0);
            assert_memory_equal(small.data, mid.data, 10 * es);
            assert_memory_equal(mid.data, a.data, 1000 * es);
            tb_tensor_destroy(&a);
            tb_tensor_destroy(&b);
            tb_tensor_destroy(&c);
            tb_tensor_destroy(&small);
            tb_tensor_destroy(&mid);
        }
    }
    B->destroy(c1);
    B->destroy(c2);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double normal_cdf(double x)
{
    return 0.5 * erfc(-x * M_SQRT1_2);
}

/* sqrt(n) * D_n of sorted x against cdf (of the standardized value). */
static double ks_stat(double *x, int64_t n, double (*cdf)(double))
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    double d = 0;
    for (int64_t i = 0; i < n; i++) {
        double f = cdf(x[i]);
        double lo = f - (double)i / (double)n;
        double hi = (double)(i + 1) / (double)n - f;
        if (lo > d)
            d = lo;
        if (hi > d)
            d = hi;
    }
    return sqrt((double)n) * d;
}

static double uniform_cdf(double x)
{
    return x <= 0 ? 0 : x >= 1 ? 1 : x;
}

/* 10^6 draws of each op, dtype and two seeds, standardized (to [0, 1)
 * or N(0, 1)): KS statistic, mean and variance. */
static void test_rand_statistics(void **state)
{
    (void)state;
    void *ctx = instance(2);
    const tb_shape s = SHAPE(KS_N);
    double *x = malloc(KS_N * sizeof *x);
    assert_non_null(x);
    for (int u = 0; u < 2; u++) {
        const tb_op *op = tb_op_get(u ? TB_OP_rand_uniform : TB_OP_rand_normal);
        /* a, b exact in float, so standardizing is exact too */
        const double a = u ? -2.5 : 3.0, b = u ? 7.0 : 0.5;
        const double mean = u ? 0.5 : 0.0, var = u ? 1.0 / 12 : 1.0;
        /* Var of the sample variance: (mu4 - sigma^4) / n, with mu4 =
         * 1/80 (uniform on [0, 1)) or 3 (standard normal). */
        const double mu4 = u ? 1.0 / 80 : 3.0;
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
            for (int seed = 0; seed < 2; seed++) {
                tb_params p = rparams(op, a, b, seed ? 20240611 : 0);
                tb_tensor out;
                assert_int_equal(
                    run_kernel(ctx, op, (tb_dtype)dt, NULL, &s, &p, &out), 0);
                double sum = 0, sum2 = 0;
                for (int64_t i = 0; i < KS_N; i++) {
                    double v = tb_tensor_get(&out, i);
                    x[i] = u ? (v - a) / (b - a) : (v - a) / b;
                    if (u)
                        assert_true(v >= a && v < b);
                    sum += x[i];
                }
                const double m = sum / KS_N;
                for (int64_t i = 0; i < KS_N; i++)
                    sum2 += (x[i] - m) * (x[i] - m);
                const double v = sum2 / (KS_N - 1);
                const double ks =
                    ks_stat(x, KS_N, u ? uniform_cdf : normal_cdf);
                const double se_m = sqrt(var / KS_N);
                const double se_v = sqrt((mu4 - var * var) / KS_N);
                print_message("# %s_%s seed %d: sqrt(n)*D = %.4f (crit "
                              "%.4f), mean %+.2f SE, var %+.2f SE\n",
                              op->name, tb_dtype_name((tb_dtype)dt), seed,
                              ks, KS_CRIT_1E3, (m - mean) / se_m,
                              (v - var) / se_v);
                tb_tensor_destroy(&out);
                assert_true(ks < KS_CRIT_1E3);
                assert_true(fabs(m - mean) < CLT_K * se_m);
                assert_true(fabs(v - var) < CLT_K * se_v);
            }
    }
    free(x);
    B->destroy(ctx);
}

/* Seeds 0, 1, 2, 2^53 and 2^53 - 1: no element of 1000 shared between
 * any two f64 streams (a shared 53-bit uniform has probability ~1e-10). */
static void test_rand_seeds_differ(void **state)
{
    (void)state;
    void *ctx = instance(1);
    const double seeds[] = {0, 1, 2, 9007199254740991.0,
                            9007199254740992.0};
    enum { NS = sizeof seeds / sizeof seeds[0], N = 1000 };
    const tb_shape s = SHAPE(N);
    for (int u = 0; u < 2; u++) {
        const tb_op *op = tb_op_get(u ? TB_OP_rand_uniform : TB_OP_rand_normal);
        tb_tensor out[NS];
        for (int k = 0; k < NS; k++) {
            tb_params p = rparams(op, 0, 1, seeds[k]);
            assert_int_equal(
                run_kernel(ctx, op, TB_F64, NULL, &s, &p, &out[k]), 0);
        }
        for (int a = 0; a < NS; a++)
            for (int b = a + 1; b < NS; b++) {
                const double *x = out[a].data, *y = out[b].data;
                int equal = 0;
                for (int i = 0; i < N; i++)
                    for (int j = 0; j < N; j++)
                        equal += x[i] == y[j];
                if (equal)
                    print_error("%s: seeds %.0f and %.0f share %d values\n",
                                op->name, seeds[a], seeds[b], equal);
                assert_int_equal(equal, 0);
            }
        for (int k = 0; k < NS; k++)
            tb_tensor_destroy(&out[k]);
    }
    B->destroy(ctx);
}

/* rand_normal(0, 1, seed) is Box-Muller on rand_uniform(0, 1, seed):
 * with u = the uniform stream, z(2j)^2 + z(2j+1)^2 = -2 log(1 - u(2j))
 * and atan2(z(2j+1), z(2j)) = 2 pi u(2j+1) (mod 2 pi), from the kernels'
 * outputs alone. */
static void test_rand_normal_is_box_muller(void **state)
{
    (void)state;
    void *ctx = instance(2);
    const tb_shape s = SHAPE(100000);
    const tb_op *un = tb_op_get(TB_OP_rand_uniform);
    const tb_op *nm = tb_op_get(TB_OP_rand_normal);
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
        /* f32 outputs carry float rounding: relative 1e-6 bounds */
        const double tol = dt == TB_F32 ? 2e-6 : 1e-12;
        tb_params pu = rparams(un, 0, 1, 99), pn = rparams(nm, 0, 1, 99);
        tb_tensor u, z;
        assert_int_equal(
            run_kernel(ctx, un, (tb_dtype)dt, NULL, &s, &pu, &u), 0);
        assert_int_equal(
            run_kernel(ctx, nm, (tb_dtype)dt, NULL, &s, &pn, &z), 0);
        int bad = 0;
        for (int64_t j = 0; j < 50000; j++) {
            double u1 = tb_tensor_get(&u, 2 * j);
            double u2 = tb_tensor_get(&u, 2 * j + 1);
            double z0 = tb_tensor_get(&z, 2 * j);
            double z1 = tb_tensor_get(&z, 2 * j + 1);
            double r2 = -2 * log(1 - u1);
            double ang = atan2(z1, z0);
            if (ang < 0)
                ang += 2 * M_PI;
            double dang = fabs(ang - 2 * M_PI * u2);
            if (dang > M_PI) /* the wrap at 0 / 2 pi */
                dang = 2 * M_PI - dang;
            double rr = sqrt(z0 * z0 + z1 * z1);
            /* the angle is undefined at r ~ 0 */
            bool ok = fabs(z0 * z0 + z1 * z1 - r2) <= tol * (r2 + 1e-6) &&
                      (rr < 1e-3 || dang <= tol * 10 / rr);
            if (!ok && bad++ < 3)
                print_error("%s pair %lld: u %.17g %.17g z %.17g %.17g\n",
                            tb_dtype_name((tb_dtype)dt), (long long)j, u1,
                            u2, z0, z1);
        }
        tb_tensor_destroy(&u);
        tb_tensor_destroy(&z);
        assert_int_equal(bad, 0);
    }
    B->destroy(ctx);
}

/* ======================================================================== */
/* 3. coverage, launches, bad operands                                      */
/* ======================================================================== */

static void test_coverage(void **state)
{
    (void)state;
    void *ctx = instance(1);
    int n_creation = 0;
    for (int id = 0; id < TB_OP_COUNT; id++) {
        const tb_op *op = tb_op_get((tb_op_id)id);
        if (op->category != TB_CAT_CREATION)
            continue;
        n_creation++;
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            int cases = 0;
            for (size_t i = 0; i < NCASES; i++)
                cases += !strcmp(cv_cases[i].op, op->name) &&
                         (int)dtype_of(cv_cases[i].dtype) == dt;
            for (size_t i = 0; i < NRANDS; i++)
                cases += !strcmp(cv_rands[i].op, op->name) &&
                         (int)dtype_of(cv_rands[i].dtype) == dt;
            if (!cases)
                print_error("%s_%s: no oracle vectors\n", op->name,
                            tb_dtype_name((tb_dtype)dt));
            assert_true(cases > 0);
            const char *impl = NULL;
            tb_params p = {0};
            tb_params_defaults(op, &p);
            assert_non_null(B->kernel(ctx, op, (tb_dtype)dt, &p, &impl).fn);
            /* create.c's portable row, or a SIMD row (rand_simd.h) */
            char want[64];
            int len = snprintf(want, sizeof want, "%s_%s_", op->name,
                               tb_dtype_name((tb_dtype)dt));
            assert_int_equal(strncmp(impl, want, (size_t)len), 0);
            const char *sfx = impl + len;
            if (strcmp(sfx, "c") != 0 && strcmp(sfx, "avx2") != 0 &&
                strcmp(sfx, "avx512") != 0)
                print_error("%s: not a creation row\n", impl);
            assert_true(!strcmp(sfx, "c") || !strcmp(sfx, "avx2") ||
                        !strcmp(sfx, "avx512"));
        }
    }
    assert_int_equal(n_creation, 7);
    B->destroy(ctx);
}

/* Bad operands: an error code (never a crash), still one launch. */
static void test_bad_operands(void **state)
{
    (void)state;
    void *ctx = instance(1);
    const tb_op *zeros = tb_op_get(TB_OP_zeros);
    const tb_op *arange = tb_op_get(TB_OP_arange);
    const tb_op *copy = tb_op_get(TB_OP_copy);
    tb_params p = {0};
    tb_params_defaults(arange, &p);
    tb_kernel_fn fz = B->kernel(ctx, zeros, TB_F32, &p, NULL).fn;
    tb_kernel_fn fa = B->kernel(ctx, arange, TB_F32, &p, NULL).fn;
    tb_kernel_fn fc = B->kernel(ctx, copy, TB_F32, &p, NULL).fn;
    assert_non_null(fz);
    assert_non_null(fa);
    assert_non_null(fc);
    const tb_shape s = SHAPE(4, 6), s2 = SHAPE(6, 4);
    tb_tensor a, b, d;
    assert_int_equal(tb_tensor_create(&a, TB_F32, &s), 0);
    assert_int_equal(tb_tensor_create(&b, TB_F32, &s2), 0);
    assert_int_equal(tb_tensor_create(&d, TB_F64, &s), 0);
    uint64_t l0 = launches(ctx);
    assert_int_equal(fz(ctx, NULL, &d, &p), TB_EINVAL);  /* dtype */
    assert_int_equal(fa(ctx, NULL, &a, &p), TB_ESHAPE);  /* arange: 2-D */
    assert_int_equal(fc(ctx, &a, &b, &p), TB_ESHAPE);    /* shapes */
    assert_int_equal(fc(ctx, &d, &a, &p), TB_EINVAL);    /* dtypes */
    assert_int_equal(fc(ctx, NULL, &a, &p), TB_EINVAL);  /* no input */
    assert_int_equal(fz(ctx, NULL, NULL, &p), TB_EINVAL);
    tb_tensor view;
    assert_int_equal(tb_tensor_transpose_view(&a, 0, 1, &view), 0);
    assert_int_equal(fz(ctx, NULL, &view, &p), TB_EINVAL); /* strides */
    tb_tensor nodata = a;
    nodata.data = NULL;
    assert_int_equal(fz(ctx, NULL, &nodata, &p), TB_EINVAL);
    assert_int_equal(launches(ctx) - l0, 8);
    /* copy onto itself is a no-op; zeros then writes +0.0 */
    tb_tensor_set(&a, 3, 2.5);
    assert_int_equal(fc(ctx, &a, &a, &p), 0);
    assert_true(tb_tensor_get(&a, 3) == 2.5);
    tb_tensor_set(&a, 5, -1.0);
    assert_int_equal(fz(ctx, NULL, &a, &p), 0);
    for (int64_t i = 0; i < 24; i++)
        assert_true(same(tb_tensor_get(&a, i), 0.0));
    /* the reference refuses a non-f64 output and a bad case dtype */
    tb_tensor hdr;
    tb_tensor_init(&hdr, TB_F32, &s);
    assert_int_equal(zeros->ref(&hdr, &a, &p), TB_EDTYPE);
    hdr.dtype = (tb_dtype)7;
    assert_int_equal(zeros->ref(&hdr, &d, &p), TB_EDTYPE);
    assert_int_equal(copy->ref(&a, &b, &p), TB_EDTYPE); /* b is f32 */
    tb_tensor_destroy(&a);
    tb_tensor_destroy(&b);
    tb_tensor_destroy(&d);
    B->destroy(ctx);
}

/* arange.h's exact case against brute force: wherever it holds, every
 * value start + i step (i < n) and every multiple k step (k < n) is a
 * float, and a float loop adding W step to the values W before (any
 * W < n, here 1, 7 and 64) gives the double loop's floats bit for bit;
 * pairs of many scales (steps of 1 to 24 significant bits, starts of
 * any sign, quanta from 2^-160 to 2^110), and n up to 4096, so both
 * sides of the bound are met (counted: the rule must accept some and
 * refuse some). */
static void test_arange_exact_rule(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15u;
    int yes = 0, no = 0;
    for (int t = 0; t < 20000; t++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const int bits = 1 + (int)(x % 24), e0 = (int)(x >> 8 & 0xff) - 160;
        const double step =
            ldexp((double)((x >> 16 & ((1u << bits) - 1)) | 1u), e0) *
            ((x >> 40 & 1) ? -1 : 1);
        const double start =
            ldexp((double)(x >> 41 & 0xffffff), e0 + (int)(x >> 60)) *
            ((x >> 39 & 1) ? -1 : 1);
        const int64_t n = 1 + (int64_t)(x >> 20 & 0xfff);
        if (!tb_cpu_arange_exact(start, step, n)) {
            no++;
            continue;
        }
        yes++;
        for (int64_t i = 0; i < n; i++) {
            const double v = start + (double)i * step, p = (double)i * step;
            if ((double)(float)v != v || (double)(float)p != p)
                fail_msg("start %a step %a n %lld: [%lld] %a not a float",
                         start, step, (long long)n, (long long)i, v);
        }
        static const int ws[] = {1, 7, 64};
        for (int k = 0; k < 3; k++) {
            const int w = ws[k];
            if (w >= n)
                continue;
            const float inc = (float)((double)w * step);
            for (int64_t i = w; i < n; i++) {
                const float prev = (float)(start + (double)(i - w) * step);
                const float f = prev + inc;
                const float want = (float)(start + (double)i * step);
                if (memcmp(&f, &want, sizeof f))
                    fail_msg("start %a step %a n %lld w %d: [%lld] %a, "
                             "want %a", start, step, (long long)n, w,
                             (long long)i, (double)f, (double)want);
            }
        }
    }
    print_message("# arange exact rule: %d accepted, %d refused\n", yes, no);
    assert_true(yes > 1000 && no > 1000);
    /* the usual case and its edges */
    assert_true(tb_cpu_arange_exact(0, 1, INT64_C(1) << 24));
    assert_false(tb_cpu_arange_exact(0, 1, (INT64_C(1) << 24) + 1));
    assert_true(tb_cpu_arange_exact(-0.0, -0.0, 100));
    assert_false(tb_cpu_arange_exact(0, 0x1p-150, 2));
    assert_true(tb_cpu_arange_exact(0, 0x1p-149, 1000));
    assert_false(tb_cpu_arange_exact(0, 0.1, 2));
    assert_false(tb_cpu_arange_exact(INFINITY, 1, 2));
    assert_false(tb_cpu_arange_exact(0, NAN, 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_oracle_cases, leak_setup, leak_teardown),
        cmocka_unit_test_setup_teardown(test_oracle_streams, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_rand_vs_ref, leak_setup, leak_teardown),
        cmocka_unit_test_setup_teardown(test_rand_split_invariance, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_rand_statistics, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_rand_seeds_differ, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_rand_normal_is_box_muller,
                                        leak_setup, leak_teardown),
        cmocka_unit_test_setup_teardown(test_coverage, leak_setup, leak_teardown),
        cmocka_unit_test(test_arange_exact_rule),
        cmocka_unit_test_setup_teardown(test_bad_operands, leak_setup, leak_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
