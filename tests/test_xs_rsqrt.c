/* rsqrt's SIMD rows (ops_simd_impl.h, xs_rsqrt_f): (float)1 / sqrtf(x),
 * two correctly rounded operations, bit for bit - at AVX-512 by a
 * reciprocal estimate and two Newton-Raphson steps instead of the
 * division, whose correct rounding is proven here exhaustively:
 * - every x in [1, 4) (2^24 floats; their square roots are every float
 *   of [1, 2), and 1/s for s = m 2^e is (1/m) 2^-e exactly while normal);
 * - every 61st x of every binade from the smallest subnormal to the
 *   largest float (the scaling argument's premises: sqrt of a positive
 *   float is a normal float and so is its reciprocal);
 * - 0, -0, negatives, inf, -inf, NaN and a tail shorter than a vector
 *   (the division path).
 * Every isa value of the cpu backend, 1 thread.  No timing. */
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

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Run rsqrt on x[0..n) at every isa value; count and print mismatches
 * with the scalar 1.0f / sqrtf(x) (NaN: any NaN). */
static void check_all(const float *xs, int64_t n, const char *what)
{
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    const tb_op *op = tb_op_get(TB_OP_rsqrt);
    tb_shape sh = SHAPE(n);
    tb_tensor in, got;
    assert_int_equal(tb_tensor_create(&in, TB_F32, &sh), 0);
    assert_int_equal(tb_tensor_create(&got, TB_F32, &sh), 0);
    memcpy(in.data, xs, (size_t)n * sizeof(float));
    for (int iv = 0; iv < ax[0].n_values; iv++) {
        const char *vals[2] = {ax[0].values[iv], "1"};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
        tb_params p = {0};
        tb_params_defaults(op, &p);
        const char *impl = NULL;
        tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, &p, &impl).fn;
        assert_non_null(fn);
        assert_int_equal(fn(ctx, &in, &got, &p), 0);
        const float *g = got.data;
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            const float want = 1.0f / sqrtf(xs[i]);
            bool ok = isnan(want) ? (bool)isnan(g[i])
                                  : bits_of(g[i]) == bits_of(want);
            if (!ok && bad++ < 3)
                print_error("rsqrt %s isa=%s impl %s: x=%a got %a want "
                            "%a\n",
                            what, vals[0], impl, (double)xs[i],
                            (double)g[i], (double)want);
        }
        printf("# rsqrt %s isa=%s impl %s: %lld values, %lld wrong\n", what,
               vals[0], impl, (long long)n, (long long)bad);
        assert_int_equal(bad, 0);
        B->destroy(ctx);
    }
    tb_tensor_destroy(&in);
    tb_tensor_destroy(&got);
}

static void test_rsqrt_binade(void **state)
{
    (void)state;
    const uint32_t lo = bits_of(1.0f), hi = bits_of(4.0f);
    const int64_t n = hi - lo;
    float *xs = malloc((size_t)n * sizeof *xs);
    assert_non_null(xs);
    for (int64_t i = 0; i < n; i++)
        xs[i] = from_bits(lo + (uint32_t)i);
    check_all(xs, n, "[1, 4)");
    free(xs);
}

static void test_rsqrt_range(void **state)
{
    (void)state;
    /* every 61st positive finite float, then the specials and a tail */
    const int64_t cap = (int64_t)(bits_of(FLT_MAX) / 61) + 64;
    float *xs = malloc((size_t)cap * sizeof *xs);
    assert_non_null(xs);
    int64_t n = 0;
    for (uint32_t u = 1; u <= bits_of(FLT_MAX) && n < cap - 16; u += 61)
        xs[n++] = from_bits(u);
    const float spec[] = {0.0f, -0.0f, -1.0f, -FLT_MIN, INFINITY,
                          -INFINITY, NAN, FLT_MAX, FLT_MIN,
                          FLT_TRUE_MIN, 2.0f, 3.0f, 0.25f};
    for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++)
        xs[n++] = spec[i];
    check_all(xs, n, "all binades");
    free(xs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rsqrt_binade, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_rsqrt_range, leak_setup,
                                        leak_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
