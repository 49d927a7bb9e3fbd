/* var's SIMD rows (ops_simd_impl.h: contiguous lanes in blocks of 4096
 * elements, each block's sums of t = x - k and t^2 formed in f32 within
 * chunks of 16 vectors and added in double, blocks merged by the
 * pairwise (n, mean, M2) update) against an independent oracle: the
 * two-pass variance in long double computed here.
 *
 * Stated bound: |got - ref| <= 1e-6 |ref| (about 8 f32 ulps; the op's
 * own tolerance is 1e-5 + 2e-6 absolute), for every isa value of the
 * cpu backend and 1 and 2 threads, on data that breaks careless forms:
 * a large offset (1e4 + N(0,1): a sum of squares about 0 cancels), an
 * outlier at a block's first element, values whose t^2 overflows f32
 * (1e18 N(0,1): the double fallback), tiny values (t^2 subnormal in
 * f32), lengths that end inside a chunk and a block, several lanes
 * (axis 1) and both corrections; inf and NaN give NaN as the reference
 * does.  No timing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "testutil.h"

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "ops/op.h"
#include "ops/tensor.h"

extern const tb_backend tb_backend_cpu;
static const tb_backend *const B = &tb_backend_cpu;

static double normal(uint64_t *st)
{
    double u1 = ((double)(splitmix64_next(st) >> 11) + 0.5) * 0x1.0p-53;
    double u2 = (double)(splitmix64_next(st) >> 11) * 0x1.0p-53;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* The variance of x[0..n) with the given correction: two passes in long
 * double. */
static double oracle(const float *x, int64_t n, int64_t stride, int corr)
{
    long double s = 0, d = 0, q = 0;
    for (int64_t i = 0; i < n; i++)
        s += x[i * stride];
    const long double m = s / n;
    for (int64_t i = 0; i < n; i++) {
        long double t = x[i * stride] - m;
        d += t;
        q += t * t;
    }
    return (double)((q - d * d / n) / (n - corr));
}

enum { P_OFFSET, P_OUTLIER, P_HUGE, P_TINY, P_INF, P_NAN, N_PAT };

static void fill(float *x, int64_t n, int pat, uint64_t salt)
{
    uint64_t st = 0x7a51ull * (salt + 1);
    for (int64_t i = 0; i < n; i++) {
        double z = normal(&st);
        x[i] = (float)(pat == P_HUGE   ? 1e18 * z
                       : pat == P_TINY ? 2e-19 * z + 1e-18
                                       : 1e4 + z);
    }
    if (pat == P_OUTLIER)
        for (int64_t i = 0; i < n; i += 4096)
            x[i] = 1e7f;
    if (pat == P_INF)
        x[n / 3] = INFINITY;
    if (pat == P_NAN)
        x[n - 1] = NAN;
}

static void test_var_oracle(void **state)
{
    (void)state;
    static const int lens[] = {2, 100, 255, 256, 257, 4095, 4096, 4097,
                               8192 + 300, 50003};
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    const tb_op *op = tb_op_get(TB_OP_var);
    double worst = 0;
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values && tv < 2; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                for (int pat = 0; pat < N_PAT; pat++)
                    for (int rows = 1; rows <= 3; rows += 2)
                        for (int corr = 0; corr <= 1; corr++) {
                            const int len = lens[li];
                            tb_shape sh = rows == 1 ? SHAPE(len)
                                                    : SHAPE(rows, len);
                            tb_params p = {0};
                            if (rows > 1)
                                assert_int_equal(
                                    tb_params_set(op, &p, "axis", 1, err,
                                                  sizeof err),
                                    0);
                            assert_int_equal(tb_params_set(op, &p,
                                                           "correction",
                                                           corr, err,
                                                           sizeof err),
                                             0);
                            tb_params_defaults(op, &p);
                            tb_shape os;
                            assert_int_equal(tb_op_infer(op, &sh, 1, &p, &os,
                                                         err, sizeof err),
                                             0);
                            tb_tensor in, got;
                            assert_int_equal(
                                tb_tensor_create(&in, TB_F32, &sh), 0);
                            assert_int_equal(
                                tb_tensor_create(&got, TB_F32, &os), 0);
                            float *x = in.data;
                            for (int r = 0; r < rows; r++)
                                fill(x + (int64_t)r * len, len, pat,
                                     li * 100 + (size_t)pat * 10 +
                                         (size_t)r);
                            const char *impl = NULL;
                            tb_kernel_fn fn =
                                B->kernel(ctx, op, TB_F32, &p, &impl).fn;
                            assert_non_null(fn);
                            assert_int_equal(fn(ctx, &in, &got, &p), 0);
                            const float *g = got.data;
                            for (int r = 0; r < rows; r++) {
                                double want = oracle(x + (int64_t)r * len,
                                                     len, 1, corr);
                                double e = fabs((double)g[r] - want);
                                bool ok = isnan(want)
                                              ? (bool)isnan(g[r])
                                              : e <= 1e-6 * fabs(want);
                                if (!isnan(want) && want != 0 &&
                                    e / fabs(want) > worst)
                                    worst = e / fabs(want);
                                if (!ok)
                                    print_error(
                                        "var isa=%s threads=%s impl %s "
                                        "len %d pattern %d row %d corr "
                                        "%d: got %.9g, oracle %.9g\n",
                                        vals[0], vals[1], impl, len, pat,
                                        r, corr, (double)g[r], want);
                                assert_true(ok);
                            }
                            tb_tensor_destroy(&in);
                            tb_tensor_destroy(&got);
                        }
            B->destroy(ctx);
        }
    printf("# var: worst relative error %.3g (bound 1e-6)\n", worst);
}

/* ---- every dtype, the one-pass rows' shifts (var_simd.h, f64's) ---- */

/* Patterns: 1e4 + N(0,1); an outlier at each block's first element;
 * ill-conditioned 1e6 + 1e-2 N(0,1) (f16: 1e3 + 1e-2 N(0,1)); a
 * constant; a trend (i / 1000 + N(0,1): the extrapolated shift); jumps
 * of 1e3 between blocks of 2048 (every predicted shift fails: the
 * two-pass fallback); a NaN. */
enum { Q_OFFSET, Q_OUTLIER, Q_ILL, Q_CONST, Q_TREND, Q_JUMP, Q_NAN, N_Q };

static void fill_dt(tb_tensor *t, int64_t off, int64_t n, int pat,
                    uint64_t salt)
{
    uint64_t st = 0x5eedull * (salt + 1);
    for (int64_t i = 0; i < n; i++) {
        double z = normal(&st), v;
        switch (pat) {
        case Q_ILL:
            v = (t->dtype == TB_F16 ? 1e3 : 1e6) + 1e-2 * z;
            break;
        case Q_CONST:
            v = 0.1;
            break;
        case Q_TREND:
            v = (double)i / 1000 + z;
            break;
        case Q_JUMP:
            v = (i / 2048 % 2 ? 1e3 : 0) + z;
            break;
        default:
            v = (pat == Q_OUTLIER && i % 4096 == 0 ? 3e4 : 1e4) + z;
        }
        if (pat == Q_NAN && i == n - 1)
            v = NAN;
        tb_tensor_store(t, off + i, v);
    }
}

static long double oracle_dt(const tb_tensor *t, int64_t off, int64_t n,
                             int corr)
{
    long double s = 0, d = 0, q = 0;
    for (int64_t i = 0; i < n; i++)
        s += tb_tensor_load(t, off + i);
    const long double m = s / n;
    for (int64_t i = 0; i < n; i++) {
        long double u = tb_tensor_load(t, off + i) - m;
        d += u;
        q += u * u;
    }
    return (q - d * d / n) / (n - corr);
}

/* Stated bounds, relative: f32 1e-6 (var_simd.h: 9.6 u, u = 2^-24);
 * f64 1e-13 (the chains' 64 terms, the shift, the tree: about 80 u, u =
 * 2^-53); bf16 and f16 the f32 value's bound plus one rounding to the
 * dtype (2^-8, 2^-11).  Where the oracle is 0 the result must be 0
 * exactly (constant lanes, and values that round to one constant). */
static void test_var_dtypes(void **state)
{
    (void)state;
    static const int lens[] = {2, 257, 4097, 3 * 4096 + 5, 50003};
    static const tb_dtype dts[] = {TB_F32, TB_F64, TB_BF16, TB_F16};
    static const double bound[] = {1e-6, 1e-13, 0x1p-8 + 1e-6,
                                   0x1p-11 + 1e-6};
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    const tb_op *op = tb_op_get(TB_OP_var);
    double worst[4] = {0};
    int runs = 0;
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values && tv < 2; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
            for (int di = 0; di < 4; di++)
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                    for (int pat = 0; pat < N_Q; pat++)
                        for (int rows = 1; rows <= 3; rows += 2) {
                            const int len = lens[li], corr = rows == 1;
                            const tb_dtype dt = dts[di];
                            tb_shape sh = rows == 1 ? SHAPE(len)
                                                    : SHAPE(rows, len);
                            tb_params p = {0};
                            if (rows > 1)
                                assert_int_equal(
                                    tb_params_set(op, &p, "axis", -1, err,
                                                  sizeof err),
                                    0);
                            assert_int_equal(
                                tb_params_set(op, &p, "correction", corr,
                                              err, sizeof err),
                                0);
                            tb_params_defaults(op, &p);
                            tb_shape os;
                            assert_int_equal(tb_op_infer(op, &sh, 1, &p, &os,
                                                         err, sizeof err),
                                             0);
                            tb_tensor in, got;
                            assert_int_equal(tb_tensor_create(&in, dt, &sh),
                                             0);
                            assert_int_equal(tb_tensor_create(&got, dt, &os),
                                             0);
                            for (int r = 0; r < rows; r++)
                                fill_dt(&in, (int64_t)r * len, len, pat,
                                        li * 100 + (size_t)pat * 10 +
                                            (size_t)r);
                            const char *impl = NULL;
                            tb_kernel_fn fn =
                                B->kernel(ctx, op, dt, &p, &impl).fn;
                            assert_non_null(fn);
                            assert_int_equal(fn(ctx, &in, &got, &p), 0);
                            for (int r = 0; r < rows; r++) {
                                const double want = (double)oracle_dt(
                                    &in, (int64_t)r * len, len, corr);
                                const double g = tb_tensor_load(&got, r);
                                const double e = fabs(g - want);
                                /* past the dtype's range: its inf */
                                const double wr = tb_dtype_round(dt, want);
                                bool ok = isnan(want) ? (bool)isnan(g)
                                          : isinf(wr) ? g == wr
                                          : want == 0
                                              ? g == 0
                                              : e <= bound[di] * fabs(want);
                                if (!isnan(want) && want != 0 &&
                                    !isinf(wr) &&
                                    e / fabs(want) > worst[di])
                                    worst[di] = e / fabs(want);
                                if (!ok)
                                    print_error(
                                        "var %s isa=%s threads=%s impl %s "
                                        "len %d pattern %d row %d: got "
                                        "%.17g, oracle %.17g\n",
                                        tb_dtype_name(dt), vals[0],
                                        vals[1], impl, len, pat, r, g,
                                        want);
                                assert_true(ok);
                            }
                            runs++;
                            tb_tensor_destroy(&in);
                            tb_tensor_destroy(&got);
                        }
            B->destroy(ctx);
        }
    printf("# var: %d runs; worst relative error f32 %.3g, f64 %.3g, "
           "bf16 %.3g, f16 %.3g\n",
           runs, worst[0], worst[1], worst[2], worst[3]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_var_oracle, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_var_dtypes, leak_setup,
                                        leak_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
