/* The f64 rows that divide without the divider (f64_simd_impl.h):
 * rsqrt (1 / sqrt x: vsqrtpd, then at AVX-512 a reciprocal estimate and
 * three Newton-Raphson steps), div_scalar and hardswish (dx_divk:
 * x * RN(1/k) and one or two Markstein corrections), against the C
 * expressions they must equal bit for bit (1.0 / sqrt(x), x / k,
 * (x * min(max(x + 3, 0), 6)) / 6; NaN: any NaN), at every isa value, 1
 * thread, on:
 * - the hard cases: quotients nearest a rounding tie (a = RN(k m) for
 *   tie points m of random binades) and of the largest significands
 *   (where RN(x RN(1/k)) can be more than an ulp off), reciprocals of the significands
 *   scripts/recip_ties.py lists as the nearest to a tie (the largest,
 *   2 - 2^-52, the step's one failure, must take the division path) and
 *   the square roots next to them;
 * - the fast path's range edges (|a| = 2^-900, 2^970 and their
 *   neighbours; |k| = 2^-50, 2^50 and beyond) and every special (0, -0,
 *   inf, NaN, subnormals, DBL_MAX);
 * - random bit patterns of every binade and random values in [-10, 10],
 *   with a tail shorter than a vector.
 * No timing. */
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
#include "ops/op.h"
#include "ops/tensor.h"

extern const tb_backend tb_backend_cpu;
static const tb_backend *const B = &tb_backend_cpu;

static double from_bits(uint64_t u)
{
    double f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint64_t bits_of(double f)
{
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint64_t st = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void)
{
    uint64_t z = (st += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double mx(double a, double b) { return a < b ? b : a; }
static double mn(double a, double b) { return b < a ? b : a; }

static double want_of(tb_op_id id, double x, double k)
{
    switch (id) {
    case TB_OP_rsqrt: return 1.0 / sqrt(x);
    case TB_OP_div_scalar: return x / k;
    default: return (x * mn(mx(x + 3.0, 0.0), 6.0)) / 6.0;
    }
}

/* Run op (k: div_scalar's scalar) on x[0..n) at every isa value; count
 * and print mismatches. */
static void check_all(tb_op_id id, double k, const double *xs, int64_t n,
                      const char *what)
{
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    const tb_op *op = tb_op_get(id);
    tb_shape sh = SHAPE(n);
    tb_tensor in, got;
    assert_int_equal(tb_tensor_create(&in, TB_F64, &sh), 0);
    assert_int_equal(tb_tensor_create(&got, TB_F64, &sh), 0);
    memcpy(in.data, xs, (size_t)n * sizeof(double));
    for (int iv = 0; iv < ax[0].n_values; iv++) {
        const char *vals[2] = {ax[0].values[iv], "1"};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
        tb_params p = {0};
        if (id == TB_OP_div_scalar)
            assert_int_equal(
                tb_params_set(op, &p, "scalar", k, err, sizeof err), 0);
        tb_params_defaults(op, &p);
        const char *impl = NULL;
        tb_kernel_fn fn = B->kernel(ctx, op, TB_F64, &p, &impl).fn;
        assert_non_null(fn);
        assert_int_equal(fn(ctx, &in, &got, &p), 0);
        const double *g = got.data;
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            const double want = want_of(id, xs[i], k);
            bool ok = isnan(want) ? (bool)isnan(g[i])
                                  : bits_of(g[i]) == bits_of(want);
            if (!ok && bad++ < 3)
                print_error("%s %s k=%a isa=%s impl %s: x=%a got %a want "
                            "%a\n",
                            op->name, what, k, vals[0], impl, xs[i], g[i],
                            want);
        }
        printf("# %s %s k=%g isa=%s impl %s: %lld values, %lld wrong\n",
               op->name, what, k, vals[0], impl, (long long)n,
               (long long)bad);
        assert_int_equal(bad, 0);
        B->destroy(ctx);
    }
    tb_tensor_destroy(&in);
    tb_tensor_destroy(&got);
}

static const double spec[] = {
    0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, DBL_MIN, -DBL_MIN,
    0x1p-1074, -0x1p-1074, DBL_MAX, -DBL_MAX, 1.0, -1.0, 3.0, -3.0, 6.0,
    0x1p-900, 0x1.0000000000001p-900, 0x1.fffffffffffffp-901,
    -0x1p-900, 0x1p970, 0x1.fffffffffffffp969, 0x1.0000000000001p970,
    -0x1p970, 0x1p-1000, 0x1p1000, 0x1.fffffffffffffp+0, -2.9999999999,
};
#define NSPEC ((int64_t)(sizeof spec / sizeof spec[0]))

/* significands (B 2^-52 in [1, 2)) whose reciprocal lies within 2^-104
 * of a rounding tie (scripts/recip_ties.py) */
static const uint64_t tie_sig[] = {
    0x1fffffffffffff, 0x1ffffff8000001, 0x120a8f5bbf2106, 0x1c69bf28eba166,
    0x163dd0554d0122, 0x155f2490c86132, 0x1a0b8ffffcbe8e,
};

enum { N = 1 << 17 };

/* x / k on the quotients nearest a tie, the edges, the specials and
 * random bit patterns and values */
static void fill_div(double *xs, double k)
{
    int64_t i = 0;
    for (int64_t j = 0; j < NSPEC; j++)
        xs[i++] = spec[j];
    /* a = RN(k m), m a tie point (odd 54-bit significand) */
    for (; i < N / 4; i++) {
        const uint64_t mm = (rnd() | 1) & ((UINT64_C(1) << 54) - 1);
        const double m = ldexp((double)(mm | (UINT64_C(1) << 53)) * 0x1p-53,
                               (int)(rnd() % 200) - 100);
        xs[i] = k * m * (rnd() & 1 ? 1.0 : -1.0);
    }
    /* a = RN(k g), g a float of significand in [1.75, 2): a y, q's
     * first value, is then most often more than an ulp from a / k when
     * |1 - k y| > 2^-54 (the mode 2 scalars') */
    for (; i < N / 2; i++) {
        const double g = ldexp(1.75 + (double)(rnd() >> 11) * 0x1p-55,
                               (int)(rnd() % 200) - 100);
        xs[i] = k * g;
    }
    for (; i < 3 * N / 4; i++) {
        const uint64_t u = rnd();
        xs[i] = from_bits(u);
    }
    for (; i < N; i++)
        xs[i] = ldexp((double)(rnd() >> 11), -53) * 20.0 - 10.0;
}

static void test_div_scalar(void **state)
{
    (void)state;
    double *xs = malloc(N * sizeof *xs);
    assert_non_null(xs);
    /* mode 1 (|1 - k RN(1/k)| <= 2^-54: most, 6, 3, 7, 0.1, pi...),
     * mode 2 (12345.678 and the last three), the edges and beyond
     * (division; the op takes scalars in [-1e30, 1e30]) */
    const double ks[] = {6.0, 3.0, -6.0, 7.0, 0.1, 0.3, -2.5,
                         3.141592653589793, 1e-30, 0x1p-50, 0x1p50,
                         0x1.0000000000001p50, 0x1p51,
                         0x1.fffffffffffffp-51, 1e20, -1e30, 0x1p-1074,
                         0.0, -0.0, 1.0, 0.75, 1.0 / 3.0,
                         0x1.fffffffffffffp+0, 12345.678,
                         0x1.c6a5387e2ffa6p-5, 0x1.f770c23ee211dp+4,
                         0x1.d5d1cbcf8abbcp-4};
    for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
        fill_div(xs, ks[j]);
        check_all(TB_OP_div_scalar, ks[j], xs, N - 3, "hard+random");
    }
    free(xs);
}

static void test_hardswish(void **state)
{
    (void)state;
    double *xs = malloc(N * sizeof *xs);
    assert_non_null(xs);
    int64_t i = 0;
    for (int64_t j = 0; j < NSPEC; j++)
        xs[i++] = spec[j];
    /* x >= 3: the numerator RN(6 x) and its quotient near a tie when x
     * is a tie point's neighbour; in (-3, 3): x (x + 3) */
    for (; i < N / 4; i++) {
        const uint64_t mm = (rnd() | 1) & ((UINT64_C(1) << 54) - 1);
        xs[i] = ldexp((double)(mm | (UINT64_C(1) << 53)) * 0x1p-53,
                      2 + (int)(rnd() % 60));
    }
    for (; i < N / 2; i++)
        xs[i] = from_bits(rnd());
    for (; i < N; i++)
        xs[i] = ldexp((double)(rnd() >> 11), -53) * 20.0 - 10.0;
    check_all(TB_OP_hardswish, 0, xs, N - 5, "hard+random");
    free(xs);
}

static void test_rsqrt(void **state)
{
    (void)state;
    double *xs = malloc(N * sizeof *xs);
    assert_non_null(xs);
    int64_t i = 0;
    for (int64_t j = 0; j < NSPEC; j++)
        xs[i++] = spec[j];
    /* x whose square root is (or is next to) s = B 2^-52 2^e, B a tie
     * significand: x = RN(s^2) and its neighbours, many binades */
    for (size_t j = 0; j < sizeof tie_sig / sizeof tie_sig[0]; j++)
        for (int e = -500; e <= 500; e += 7) {
            const double s = ldexp((double)tie_sig[j], e - 52);
            const double x = s * s;
            xs[i++] = x;
            xs[i++] = nextafter(x, 0.0);
            xs[i++] = nextafter(x, INFINITY);
        }
    for (; i < N / 2; i++)
        xs[i] = from_bits(rnd() >> 1); /* positive, every binade */
    for (; i < 3 * N / 4; i++)
        xs[i] = ldexp((double)(rnd() >> 11), -53) * 100.0;
    for (; i < N; i++)
        xs[i] = from_bits(rnd());
    /* the significand 2 - 2^-52 must come out right: 1/sqrt(x) for x
     * with that square root */
    const double s1 = 0x1.fffffffffffffp+0;
    assert_true(sqrt(s1 * s1) == s1);
    check_all(TB_OP_rsqrt, 0, xs, N - 1, "hard+random");
    free(xs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rsqrt, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_div_scalar, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_hardswish, leak_setup,
                                        leak_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
