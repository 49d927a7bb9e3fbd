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
#include "backends/cpu/kernels.h"
#include "backends/cpu/vmath.h"
#include "ops/op.h"
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

/* Each SIMD level's fused loops (half_cvt.h) against widen + the f32
 * operation + narrow: the arithmetic in C, the activations through the
 * same level's vmath.h array functions (the f32 rows' loops), bit for
 * bit, on every 16-bit pattern as a (NaN, infinities, -0, subnormals)
 * against random b, and tails of every length below a vector pair. */
static float op_c(tb_op_id op, float a, float b, float k)
{
    float t;
    switch (op) {
    case TB_OP_add: return a + b;
    case TB_OP_sub: return a - b;
    case TB_OP_mul: return a * b;
    case TB_OP_div: return a / b;
    case TB_OP_add_relu: a = a + b; /* fall through */
    case TB_OP_relu: return a > 0 || a != a ? a : 0.0f;
    /* NaN in either: a + b (a NaN); ties: a */
    case TB_OP_maximum: return a != a || b != b ? a + b : b <= a ? a : b;
    case TB_OP_minimum: return a != a || b != b ? a + b : a <= b ? a : b;
    case TB_OP_add_scalar: return a + k;
    case TB_OP_sub_scalar: return a - k;
    case TB_OP_mul_scalar: return a * k;
    case TB_OP_div_scalar: return a / k;
    case TB_OP_sqrt: return sqrtf(a);
    case TB_OP_rsqrt: return 1.0f / sqrtf(a);
    case TB_OP_leaky_relu: return a > 0 ? a : k * a;
    case TB_OP_hardswish: /* MAX(u, v) = u < v ? v : u, MIN alike */
        t = a + 3.0f;
        t = t < 0.0f ? 0.0f : t;
        t = 6.0f < t ? 6.0f : t;
        return a * t / 6.0f;
    default: return NAN;
    }
}

/* The constant of an op that takes one (in the dtype), else 0. */
static float op_k(tb_op_id op, tb_dtype dt)
{
    float k = op == TB_OP_leaky_relu ? 0.01f
              : op == TB_OP_add_scalar || op == TB_OP_sub_scalar ? 1.7f
              : op == TB_OP_mul_scalar ? -0.3f
              : op == TB_OP_div_scalar ? 3.1f : 0.0f;
    return dt == TB_F16 ? tb_f16_to_f32(tb_f32_to_f16(k))
                        : tb_bf16_to_f32(tb_f32_to_bf16(k));
}

/* The vmath function of an activation, or -1. */
static int vm_of(tb_op_id op)
{
    switch (op) {
    case TB_OP_exp: return TB_VM_EXP;
    case TB_OP_log: return TB_VM_LOG;
    case TB_OP_tanh: return TB_VM_TANH;
    case TB_OP_sigmoid: return TB_VM_SIGMOID;
    case TB_OP_gelu: return TB_VM_GELU_ERF;
    case TB_OP_gelu_tanh: return TB_VM_GELU_TANH;
    case TB_OP_silu: return TB_VM_SILU;
    default: return -1;
    }
}

static void test_fused(void **state)
{
    (void)state;
    static const tb_op_id ops[] = {
        TB_OP_add,     TB_OP_sub,  TB_OP_mul,     TB_OP_div,
        TB_OP_add_relu, TB_OP_relu, TB_OP_exp,    TB_OP_log,
        TB_OP_tanh,    TB_OP_sigmoid, TB_OP_gelu, TB_OP_gelu_tanh,
        TB_OP_silu,    TB_OP_maximum, TB_OP_minimum, TB_OP_add_scalar,
        TB_OP_sub_scalar, TB_OP_mul_scalar, TB_OP_div_scalar, TB_OP_sqrt,
        TB_OP_rsqrt,   TB_OP_leaky_relu, TB_OP_hardswish};
    enum { N = 65536, T = 70 };
    static uint16_t a[N + T], b[N + T], o[N + T];
    static float wa[N + T], wr[N + T];
    uint64_t seed = 0xf05ed;
    for (int i = 0; i < N + T; i++) {
        a[i] = (uint16_t)i;
        b[i] = (uint16_t)splitmix64_next(&seed);
    }
    /* maximum's and minimum's ties of distinct patterns: (+0, -0), (-0, +0) */
    b[0] = 0x8000;
    b[0x8000] = 0;
    int levels = 0;
    assert_null(tb_cpu_half_fused_get(TB_OP_add, TB_BF16, TB_ISA_SCALAR));
    /* every SIMD level: avx512bf16's loops narrow bf16 by vcvtne2ps2bf16
     * (the patterns as a hold every result subnormal in f32 that exp,
     * sigmoid, silu, the gelus and tanh give, and mul's random b makes
     * more: the pairs that take the integer code) and run avx512's f32
     * functions */
    for (int lv = TB_ISA_SCALAR + 1; lv <= tb_cpu_isa_max(); lv++) {
        if (!tb_cpu_isa_built(lv))
            continue;
        tb_vmath vm;
        tb_vmath_fill(&vm, lv);
        levels++;
        const tb_dtype dts[2] = {TB_BF16, TB_F16};
        for (int di = 0; di < 2; di++)
            for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
                tb_dtype dt = dts[di];
                tb_cpu_half_fused_fn fn = tb_cpu_half_fused_get(ops[k], dt, lv);
                assert_non_null(fn);
                const int f = vm_of(ops[k]);
                const float kc = op_k(ops[k], dt);
                if (f >= 0)
                    assert_int_equal(vm.isa[f],
                                     tb_cpu_isa_clamp(lv, TB_ISA_AVX512));
                for (int i = 0; i < N + T; i++)
                    wa[i] = dt == TB_F16 ? tb_f16_to_f32(a[i])
                                         : tb_bf16_to_f32(a[i]);
                if (f >= 0)
                    vm.fn[f](wa, wr, N + T);
                /* the whole range, then tails: n = 1..T (a start 5 past
                 * the pattern 0 so they hold other patterns too) */
                for (int len = -1; len <= T; len++) {
                    const int n = len < 0 ? N : len, off = len < 0 ? 0 : 5;
                    memset(o, 0x5a, sizeof o);
                    fn(a + off, b + off, o, n, kc);
                    for (int i = 0; i < n; i++) {
                        const int s = off + i;
                        float y = dt == TB_F16 ? tb_f16_to_f32(b[s])
                                               : tb_bf16_to_f32(b[s]);
                        float r = f >= 0 ? wr[s] : op_c(ops[k], wa[s], y, kc);
                        uint16_t want = dt == TB_F16 ? tb_f32_to_f16(r)
                                                     : tb_f32_to_bf16(r);
                        if (!same16(dt, o[i], want))
                            fail_msg("%s %s at %s (n %d) (%04x, %04x): %04x, "
                                     "want %04x",
                                     tb_dtype_name(dt), tb_op_get(ops[k])->name,
                                     tb_cpu_isa_name(lv), n, a[s], b[s], o[i],
                                     want);
                    }
                    assert_int_equal(o[n], 0x5a5a);
                }
            }
        assert_null(tb_cpu_half_fused_get(TB_OP_softmax, TB_BF16, lv));
        assert_null(tb_cpu_half_fused_get(TB_OP_add, TB_F32, lv));
        print_message("# fused loops at %s\n", tb_cpu_isa_name(lv));
    }
    if (!levels)
        print_message("# no SIMD level here: fused loops not run\n");
}

/* Each SIMD level's row-broadcast maximum and minimum (half_simd.h's
 * hs_mmrows: b's keys once a chunk of columns) against the portable
 * rule on the widened values, as test_fused checks the fused loops:
 * every 16-bit pattern of a (NaN, infinities, -0 included) in rows of
 * lengths about the vectors and the chunk (HS_MMR_C 1024: 2100 takes
 * three chunks), b a row of random patterns, first with no NaN (the
 * keyed steps; b[0] -0 and b[1] +0 against a's zeros), then with one
 * (that chunk row by row by the fused loop). */
static void test_mmrows(void **state)
{
    (void)state;
    enum { N = 65536, B = 2100 };
    static uint16_t a[N], b[B], o[N + 1];
    const int64_t lens[] = {1, 31, 32, 33, 63, 64, 65, 1000, 1024, 1100, B};
    int levels = 0;
    for (int lv = TB_ISA_SCALAR + 1; lv <= tb_cpu_isa_max(); lv++) {
        if (!tb_cpu_isa_built(lv))
            continue;
        levels++;
        const tb_dtype dts[2] = {TB_BF16, TB_F16};
        for (int di = 0; di < 2; di++) {
            const tb_dtype dt = dts[di];
            tb_cpu_half_mmrows_fn fn = tb_cpu_half_mmrows_get(dt, lv);
            assert_non_null(fn);
            const uint16_t inf = dt == TB_F16 ? 0x7c00 : 0x7f80;
            uint64_t seed = 0x3a7 + (uint64_t)lv * 5 + (uint64_t)di;
            for (int i = 0; i < N; i++)
                a[i] = (uint16_t)(i * 7919); /* every pattern, shuffled */
            for (int nb = 0; nb < 2; nb++)
                for (int mx = 0; mx < 2; mx++)
                    for (size_t li = 0; li < sizeof lens / sizeof lens[0];
                         li++) {
                        const int64_t n = lens[li], rows = N / n;
                        for (int64_t i = 0; i < n; i++) {
                            uint16_t h = (uint16_t)splitmix64_next(&seed);
                            if ((h & 0x7fff) > inf) /* no NaN in b */
                                h &= 0x3fff;
                            b[i] = h;
                        }
                        if (n > 1)
                            b[0] = 0x8000, b[1] = 0;
                        if (nb)
                            b[n - 1] = (uint16_t)(inf + 1); /* a NaN */
                        memset(o, 0x5a, sizeof o);
                        fn(a, b, o, rows, n, mx);
                        const tb_op_id id = mx ? TB_OP_maximum : TB_OP_minimum;
                        for (int64_t i = 0; i < rows * n; i++) {
                            const uint16_t x = a[i], y = b[i % n];
                            float fx = dt == TB_F16 ? tb_f16_to_f32(x)
                                                    : tb_bf16_to_f32(x);
                            float fy = dt == TB_F16 ? tb_f16_to_f32(y)
                                                    : tb_bf16_to_f32(y);
                            float r = op_c(id, fx, fy, 0.0f);
                            uint16_t want = dt == TB_F16 ? tb_f32_to_f16(r)
                                                         : tb_f32_to_bf16(r);
                            if (!same16(dt, o[i], want))
                                fail_msg("%s %s rows at %s (n %d, b NaN %d, "
                                         "element %d) (%04x, %04x): %04x, "
                                         "want %04x",
                                         tb_dtype_name(dt),
                                         tb_op_get(id)->name,
                                         tb_cpu_isa_name(lv), (int)n, nb,
                                         (int)i, x, y, o[i], want);
                        }
                        assert_int_equal(o[rows * n], 0x5a5a);
                    }
        }
        print_message("# row-broadcast maximum, minimum at %s\n",
                      tb_cpu_isa_name(lv));
    }
    assert_null(tb_cpu_half_mmrows_get(TB_BF16, TB_ISA_SCALAR));
    if (!levels)
        print_message("# no SIMD level here: row loops not run\n");
}

/* Each SIMD level's reductions (tb_cpu_half_red): sum against the same
 * level's f32 sum row (kernels.h) on the widened values, bit for bit
 * (the association the brief of half_simd.h promises), and against a
 * double sum within the f32 blocks' error; max and min against the
 * portable rule (m = x[0], then v where v > m (v < m) or v is NaN),
 * with and without NaN, infinities and zero extremes, at many lengths. */
static float ext_rule(const float *x, int64_t n, int mx)
{
    float m = x[0];
    for (int64_t j = 1; j < n; j++)
        if ((mx ? x[j] > m : x[j] < m) || x[j] != x[j])
            m = x[j];
    return m;
}

static void test_reduce(void **state)
{
    (void)state;
    enum { N = 5000 };
    static uint16_t h[N];
    static float w[N];
    const tb_dtype dts[2] = {TB_BF16, TB_F16};
    const int64_t lens[] = {1, 2, 7, 15, 16, 17, 31, 33, 63, 64, 65, 127,
                            1023, 1024, 1025, 2049, 4999, N};
    int levels = 0;
    /* every SIMD level (avx512bf16's sums are avx512's f32 sum row's) */
    for (int lv = TB_ISA_SCALAR + 1; lv <= tb_cpu_isa_max(); lv++) {
        if (!tb_cpu_isa_built(lv))
            continue;
        tb_cpu_kernels k;
        const int klv = tb_cpu_isa_clamp(lv, TB_ISA_AVX512);
        assert_int_equal(tb_cpu_kernels_fill(&k, lv), lv);
        assert_int_equal(k.sum[TB_F32].isa, klv);
        levels++;
        for (int di = 0; di < 2; di++) {
            const tb_dtype dt = dts[di];
            tb_cpu_half_red r = tb_cpu_half_red_get(dt, lv);
            assert_non_null(r.sum);
            uint64_t seed = 0x5e1 + (uint64_t)lv * 7 + (uint64_t)di;
            /* kinds: 0 values in [-2, 2) times 2^-12..2^12 (so that
             * f32 sums round: the order shows), 1 negative only (max),
             * 2 positive only (min), 3 and 6 with -0 then +0 as the max
             * (min), 4 with a NaN, 5 with +-inf, 7 with a negative NaN
             * (the pattern rows see its sign bit: it must not pass for
             * a negative number) */
            for (int kind = 0; kind < 8; kind++)
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                    const int64_t n = lens[li];
                    for (int64_t i = 0; i < n; i++) {
                        double u = (double)(splitmix64_next(&seed) >> 11) *
                                   0x1p-53;
                        double v = kind == 1   ? -0.5 - 2 * u
                                   : kind == 2 ? 0.5 + 2 * u
                                   : kind == 3 ? -0.5 - 2 * u
                                   : kind == 6 ? 0.5 + 2 * u
                                               : 4 * u - 2;
                        if (kind == 0)
                            v = ldexp(v, (int)(splitmix64_next(&seed) % 25) - 12);
                        h[i] = (uint16_t)(dt == TB_F16 ? tb_f32_to_f16((float)v)
                                                       : tb_f32_to_bf16((float)v));
                    }
                    if (kind == 3 || kind == 6) {
                        h[(2 * n) / 3] = 0;
                        h[n / 3] = 0x8000; /* first when n >= 3 */
                    }
                    if (kind == 4)
                        h[(n * 2) / 3] = dt == TB_F16 ? 0x7e01 : 0x7fc1;
                    if (kind == 7)
                        h[n / 2] = dt == TB_F16 ? 0xfe01 : 0xffc1;
                    if (kind == 5) {
                        h[n - 1] = dt == TB_F16 ? 0x7c00 : 0x7f80;
                        h[0] = dt == TB_F16 ? 0xfc00 : 0xff80;
                    }
                    for (int64_t i = 0; i < n; i++)
                        w[i] = dt == TB_F16 ? tb_f16_to_f32(h[i])
                                            : tb_bf16_to_f32(h[i]);
                    double got = r.sum(h, n), want = k.sum[TB_F32].row(w, n);
                    if (memcmp(&got, &want, sizeof got) &&
                        !(isnan(got) && isnan(want)))
                        fail_msg("%s sum at %s, n %lld kind %d: %a, f32 row %a",
                                 tb_dtype_name(dt), tb_cpu_isa_name(lv),
                                 (long long)n, kind, got, want);
                    if (kind < 4 || kind == 6) { /* near the exact sum */
                        double ex = 0, ab = 0;
                        for (int64_t i = 0; i < n; i++)
                            ex += w[i], ab += fabs(w[i]);
                        assert_true(fabs(got - ex) <= 64 * 0x1p-24 * ab);
                    }
                    for (int mx = 0; mx < 2; mx++) {
                        float e = (mx ? r.max : r.min)(h, n);
                        float we = ext_rule(w, n, mx);
                        if (memcmp(&e, &we, 4) && !(isnan(e) && isnan(we)))
                            fail_msg("%s %s at %s, n %lld kind %d: %a, want %a",
                                     tb_dtype_name(dt), mx ? "max" : "min",
                                     tb_cpu_isa_name(lv), (long long)n, kind,
                                     (double)e, (double)we);
                    }
                }
        }
        print_message("# reductions at %s\n", tb_cpu_isa_name(lv));
    }
    assert_null(tb_cpu_half_red_get(TB_BF16, TB_ISA_SCALAR).sum);
    if (!levels)
        print_message("# no SIMD level here: reductions not run\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widen_exact),
        cmocka_unit_test(test_narrow_boundaries),
        cmocka_unit_test(test_dtype_facts),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_fused),
        cmocka_unit_test(test_mmrows),
        cmocka_unit_test(test_reduce),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
