/* bf16 and f16 conversions (ops/half.h) and the cpu backend's vector
 * conversions at every ISA level (backends/cpu/half_cvt.h).
 *
 * The oracle is arithmetic, not the code under test: a 16-bit pattern's
 * value is rebuilt with ldexp from its fields, and rounding is checked
 * by the definition (the nearest of the two neighbouring 16-bit values,
 * ties to the one with an even significand, beyond the largest finite
 * value's half-ulp an infinity) at every boundary there is: for every
 * finite 16-bit value, the value itself, the midpoint to the next one
 * and the f32 numbers on either side of that midpoint.  Then each ISA
 * level's loops must give the portable functions' bits on all 2^16
 * patterns (widening) and on those boundary values, random f32 patterns
 * and every tail length (narrowing).  NaN is checked as NaN, quiet. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cpu/half_cvt.h"
#include "backends/cpu/cpu_config.h"
#include "backends/cpu/isa.h"
#include "base/error.h"
#include "ops/half.h"
#include "ops/tensor.h"
#include "testutil.h"

/* The value of a 16-bit pattern from its fields: exp bits, significand
 * bits, bias. */
static double field_value(uint16_t h, int ebits, int mbits)
{
    int bias = (1 << (ebits - 1)) - 1;
    int e = (h >> mbits) & ((1 << ebits) - 1);
    int m = h & ((1 << mbits) - 1);
    double s = (h >> 15) ? -1.0 : 1.0;
    if (e == (1 << ebits) - 1)
        return m ? NAN : s * INFINITY;
    if (e == 0)
        return s * ldexp(m, 1 - bias - mbits);
    return s * ldexp((1 << mbits) + m, e - bias - mbits);
}

static double f16_value(uint16_t h) { return field_value(h, 5, 10); }
static double bf16_value(uint16_t h) { return field_value(h, 8, 7); }

static void test_widen_exact(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        double a = f16_value((uint16_t)h), b = bf16_value((uint16_t)h);
        float fa = tb_f16_to_f32((uint16_t)h), fb = tb_bf16_to_f32((uint16_t)h);
        if (isnan(a))
            assert_true(isnan(fa));
        else if (fa != a || !signbit(fa) != !signbit(a))
            fail_msg("f16 %04x: %.9g, want %.9g", h, fa, a);
        if (isnan(b))
            assert_true(isnan(fb));
        else if (fb != b || !signbit(fb) != !signbit(b))
            fail_msg("bf16 %04x: %.9g, want %.9g", h, fb, b);
    }
}

typedef uint16_t (*narrow1)(float);
typedef double (*value1)(uint16_t);

/* x (finite, f32) must round to the nearest of the patterns lo and lo+1
 * that bracket it (positive patterns), ties to even. */
static void expect_nearest(narrow1 nf, value1 vf, float x, uint16_t lo,
                           const char *what)
{
    double a = vf(lo), b = vf((uint16_t)(lo + 1)), v = fabs((double)x);
    uint16_t want;
    if (isinf(b)) { /* lo is the largest finite: halfway is 2^e * ... */
        double half_ulp = (a - vf((uint16_t)(lo - 1))) / 2;
        want = v - a < half_ulp ? lo : (uint16_t)(lo + 1);
    } else if (v - a < b - v) {
        want = lo;
    } else if (v - a > b - v) {
        want = (uint16_t)(lo + 1);
    } else {
        want = (lo & 1) ? (uint16_t)(lo + 1) : lo;
    }
    if (signbit(x))
        want |= 0x8000;
    uint16_t got = nf(x);
    if (got != want)
        fail_msg("%s(%.9g = %08x): %04x, want %04x", what, (double)x,
                 tb_half_f32_bits(x), got, want);
}

/* Every boundary of format (nf, vf) with largest finite pattern top,
 * both signs; also appended to *set (when not NULL) for the level
 * tests. */
static void boundaries(narrow1 nf, value1 vf, uint16_t top, const char *what,
                       float *set, size_t *n)
{
    for (uint32_t h = 0; h <= top; h++) {
        double a = vf((uint16_t)h);
        double b = h < top ? vf((uint16_t)(h + 1))
                           : a + (a - vf((uint16_t)(h - 1)));
        float mid = (float)((a + b) / 2); /* exact: one more bit */
        float xs[4] = {(float)a, nextafterf(mid, 0), mid,
                       nextafterf(mid, INFINITY)};
        for (int k = 0; k < 4; k++)
            for (int sg = 0; sg < 2; sg++) {
                float x = sg ? -xs[k] : xs[k];
                expect_nearest(nf, vf, x, (uint16_t)h, what);
                if (set)
                    set[(*n)++] = x;
            }
    }
}

static void test_narrow_boundaries(void **state)
{
    (void)state;
    boundaries(tb_f32_to_f16, f16_value, 0x7bff, "f16", NULL, NULL);
    boundaries(tb_f32_to_bf16, bf16_value, 0x7f7f, "bf16", NULL, NULL);
    /* beyond: infinities stay, far values overflow, NaN stays NaN */
    assert_int_equal(tb_f32_to_f16(1e10f), 0x7c00);
    assert_int_equal(tb_f32_to_f16(-INFINITY), 0xfc00);
    assert_int_equal(tb_f32_to_bf16(INFINITY), 0x7f80);
    assert_int_equal(tb_f32_to_bf16(-3.4e38f), 0xff80);
    uint16_t n1 = tb_f32_to_f16(NAN), n2 = tb_f32_to_bf16(-NAN);
    assert_true(isnan(tb_f16_to_f32(n1)) && (n1 & 0x0200));
    assert_true(isnan(tb_bf16_to_f32(n2)) && (n2 & 0x0040));
    /* a signalling NaN whose payload lives in the dropped bits */
    uint16_t n3 = tb_f32_to_bf16(tb_half_bits_f32(0x7f800001u));
    assert_true(isnan(tb_bf16_to_f32(n3)));
    /* subnormal f16 ties: 2^-25 (half the smallest) -> 0 (even),
     * 3 * 2^-25 -> 2 * 2^-24 */
    assert_int_equal(tb_f32_to_f16(0x1p-25f), 0x0000);
    assert_int_equal(tb_f32_to_f16(0x3p-25f), 0x0002);
    assert_int_equal(tb_f32_to_f16(-0.0f), 0x8000);
}

static void test_dtype_facts(void **state)
{
    (void)state;
    static const char *const names[] = {"f32", "f64", "bf16", "f16"};
    static const size_t sizes[] = {4, 8, 2, 2};
    for (int d = 0; d < TB_DTYPE_COUNT; d++) {
        tb_dtype got;
        assert_string_equal(tb_dtype_name((tb_dtype)d), names[d]);
        assert_int_equal(tb_dtype_parse(names[d], &got), 0);
        assert_int_equal(got, d);
        assert_int_equal(tb_dtype_size((tb_dtype)d), sizes[d]);
        /* eps: 1 + eps is the next value after 1 in the dtype */
        double e = tb_dtype_eps((tb_dtype)d);
        assert_true(tb_dtype_round((tb_dtype)d, 1 + e) == 1 + e);
        assert_true(tb_dtype_round((tb_dtype)d, 1 + e / 2) == 1);
    }
    assert_int_equal(tb_dtype_parse("fp16", &(tb_dtype){TB_F32}), TB_EDTYPE);
    assert_true(tb_dtype_compute(TB_BF16) == TB_F32);
    assert_true(tb_dtype_compute(TB_F16) == TB_F32);
    assert_true(tb_dtype_compute(TB_F64) == TB_F64);
    /* 1/3 held by each dtype (torch.tensor(1/3, dtype=...).item()) */
    assert_true(tb_dtype_round(TB_BF16, 1.0 / 3) == 0.333984375);
    assert_true(tb_dtype_round(TB_F16, 1.0 / 3) == 0.333251953125);
    assert_true(tb_dtype_round(TB_F16, 65519.0) == 65504.0);
    assert_true(isinf(tb_dtype_round(TB_F16, 65520.0)));
    assert_true(tb_dtype_round(TB_F32, 1.0 / 3) == (double)(1.0f / 3));
    /* element access through the tensor helpers */
    tb_tensor t;
    tb_shape s = {1, {3}};
    assert_int_equal(tb_tensor_create(&t, TB_BF16, &s), 0);
    tb_tensor_set(&t, 1, 1.0 / 3);
    assert_true(tb_tensor_get(&t, 1) == 0.333984375);
    assert_int_equal(((uint16_t *)t.data)[1], 0x3eab);
    tb_tensor_destroy(&t);
}

static bool same16(tb_dtype dt, uint16_t a, uint16_t b)
{
    if (a == b)
        return true;
    float fa = dt == TB_F16 ? tb_f16_to_f32(a) : tb_bf16_to_f32(a);
    float fb = dt == TB_F16 ? tb_f16_to_f32(b) : tb_bf16_to_f32(b);
    return isnan(fa) && isnan(fb); /* payloads may differ */
}

static void test_levels(void **state)
{
    (void)state;
    /* inputs: all 2^16 patterns; boundary values of both formats plus
     * random f32 patterns */
    enum { NB = (0x7f80 + 0x7c00) * 8 + 4096, NR = 1 << 20 };
    uint16_t *pat = malloc(65536 * sizeof *pat);
    float *x = malloc((size_t)(NB + NR) * sizeof *x);
    float *w1 = malloc(65536 * sizeof *w1), *w2 = malloc(65536 * sizeof *w2);
    uint16_t *n1 = malloc((size_t)(NB + NR) * 2), *n2 = malloc((size_t)(NB + NR) * 2);
    assert_non_null(pat && x && w1 && w2 && n1 && n2);
    for (uint32_t h = 0; h < 65536; h++)
        pat[h] = (uint16_t)h;
    size_t nx = 0;
    boundaries(tb_f32_to_f16, f16_value, 0x7bff, "f16", x, &nx);
    boundaries(tb_f32_to_bf16, bf16_value, 0x7f7f, "bf16", x, &nx);
    uint64_t seed = 0x5eed16;
    for (int i = 0; i < NR; i++)
        x[nx++] = tb_half_bits_f32((uint32_t)splitmix64_next(&seed));
    const tb_dtype dts[2] = {TB_BF16, TB_F16};
    for (int di = 0; di < 2; di++) {
        tb_dtype dt = dts[di];
        tb_cpu_half_cvt c = tb_cpu_half_cvt_get(dt, TB_ISA_SCALAR);
        assert_non_null(c.widen);
        c.widen(pat, w1, 65536);
        c.narrow(x, n1, (int64_t)nx);
        for (uint32_t h = 0; h < 65536; h++) {
            float want = dt == TB_F16 ? tb_f16_to_f32((uint16_t)h)
                                      : tb_bf16_to_f32((uint16_t)h);
            assert_true(memcmp(&w1[h], &want, 4) == 0 || isnan(want));
        }
        for (size_t i = 0; i < nx; i++) {
            uint16_t want = dt == TB_F16 ? tb_f32_to_f16(x[i])
                                         : tb_f32_to_bf16(x[i]);
            assert_true(same16(dt, n1[i], want));
        }
        for (int lv = TB_ISA_SCALAR + 1; lv <= tb_cpu_isa_max(); lv++) {
            tb_cpu_half_cvt v = tb_cpu_half_cvt_get(dt, lv);
            if (!v.widen) /* no rows of this level (half.c) */
                continue;
            print_message("# %s conversions at level %s\n", tb_dtype_name(dt),
                          tb_cpu_isa_name(lv));
            v.widen(pat, w2, 65536);
            for (uint32_t h = 0; h < 65536; h++)
                if (memcmp(&w1[h], &w2[h], 4) && !(isnan(w1[h]) && isnan(w2[h])))
                    fail_msg("%s widen %04x at %s", tb_dtype_name(dt), h,
                             tb_cpu_isa_name(lv));
            v.narrow(x, n2, (int64_t)nx);
            for (size_t i = 0; i < nx; i++)
                if (!same16(dt, n1[i], n2[i]))
                    fail_msg("%s narrow %08x at %s: %04x, want %04x",
                             tb_dtype_name(dt), tb_half_f32_bits(x[i]),
                             tb_cpu_isa_name(lv), n2[i], n1[i]);
            /* every tail length, and nothing written past n */
            for (int len = 0; len <= 40; len++) {
                uint16_t out[48];
                float wout[48];
                memset(out, 0xa5, sizeof out);
                memset(wout, 0xa5, sizeof wout);
                v.narrow(x + 3, out, len);
                v.widen(pat + 5, wout, len);
                for (int i = 0; i < 48; i++) {
                    if (i < len) {
                        assert_true(same16(dt, out[i], n1[3 + i]));
                        assert_true(memcmp(&wout[i], &w1[5 + i], 4) == 0);
                    } else {
                        assert_int_equal(out[i], 0xa5a5);
                        uint32_t b;
                        memcpy(&b, &wout[i], 4);
                        assert_int_equal(b, 0xa5a5a5a5u);
                    }
                }
            }
        }
    }
    free(pat);
    free(x);
    free(w1);
    free(w2);
    free(n1);
    free(n2);
}

/* The avx2 level's fused loops against widen + the f32 operation in C +
 * narrow, on every 16-bit pattern as a (NaN, infinities, -0, subnormals)
 * against random b, and every tail length. */
static float op_c(tb_op_id op, float a, float b)
{
    switch (op) {
    case TB_OP_add: return a + b;
    case TB_OP_sub: return a - b;
    case TB_OP_mul: return a * b;
    case TB_OP_div: return a / b;
    case TB_OP_add_relu: a = a + b; /* fall through */
    case TB_OP_relu: return a > 0 || a != a ? a : 0.0f;
    default: return NAN;
    }
}

static void test_fused(void **state)
{
    (void)state;
#if TB_CPU_HAVE_AVX2
    if (tb_cpu_isa_max() < TB_ISA_AVX2) {
        print_message("# no avx2 here: fused loops not run\n");
        return;
    }
    static const tb_op_id ops[] = {TB_OP_add, TB_OP_sub, TB_OP_mul,
                                   TB_OP_div, TB_OP_add_relu, TB_OP_relu};
    static uint16_t a[65536 + 40], b[65536 + 40], o[65536 + 40];
    uint64_t seed = 0xf05ed;
    for (int i = 0; i < 65536 + 40; i++) {
        a[i] = (uint16_t)i;
        b[i] = (uint16_t)splitmix64_next(&seed);
    }
    const tb_dtype dts[2] = {TB_BF16, TB_F16};
    for (int di = 0; di < 2; di++)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            tb_dtype dt = dts[di];
            tb_cpu_half_fused_fn fn = tb_cpu_half_fused_avx2(ops[k], dt);
            assert_non_null(fn);
            for (int len = 65536; len >= 65536 - 40; len--) {
                memset(o, 0x5a, sizeof o);
                fn(a, b, o, len);
                for (int i = 0; i < len; i++) {
                    float x = dt == TB_F16 ? tb_f16_to_f32(a[i])
                                           : tb_bf16_to_f32(a[i]);
                    float y = dt == TB_F16 ? tb_f16_to_f32(b[i])
                                           : tb_bf16_to_f32(b[i]);
                    float r = op_c(ops[k], x, y);
                    uint16_t want = dt == TB_F16 ? tb_f32_to_f16(r)
                                                 : tb_f32_to_bf16(r);
                    if (!same16(dt, o[i], want))
                        fail_msg("%s %s(%04x, %04x): %04x, want %04x",
                                 tb_dtype_name(dt), tb_op_get(ops[k])->name,
                                 a[i], b[i], o[i], want);
                }
                assert_int_equal(o[len], 0x5a5a);
                if (len < 65536 - 2) /* the tails: a few suffice */
                    len -= 5;
            }
        }
    assert_null(tb_cpu_half_fused_avx2(TB_OP_exp, TB_BF16));
    assert_null(tb_cpu_half_fused_avx2(TB_OP_add, TB_F32));
#else
    print_message("# built without avx2: no fused loops\n");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widen_exact),
        cmocka_unit_test(test_narrow_boundaries),
        cmocka_unit_test(test_dtype_facts),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_fused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
