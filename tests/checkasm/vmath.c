/* checkasm, part 4: the vmath functions (vmath.h): see test_checkasm.c. */
#include <errno.h>
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../testutil.h"

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/kreg.h"
#include "backends/cpu/ops_simd.h"
#include "backends/cpu/rand_simd.h"
#include "backends/cpu/vmath.h"
#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/rand.h"
#include "ops/tensor.h"

#include "checkasm.h"

/* ========================================================================= */
/* 4. vmath: ULP bounds, agreement, special values, edges                    */
/* ========================================================================= */

static double mul_sigmoid_ref(double x, double v)
{
    if (v >= 0)
        return x / (1 + exp(-v));
    double e = exp(v);
    return x * e / (1 + e);
}

/* The definitions of vmath.h, in double. */
static double vm_ref(int f, float xf)
{
    const double x = xf;
    switch (f) {
    case TB_VM_EXP:
        return exp(x);
    case TB_VM_LOG:
        return log(x);
    case TB_VM_TANH:
        return tanh(x);
    case TB_VM_SIGMOID:
        return isnan(x) ? x : mul_sigmoid_ref(1.0, x);
    case TB_VM_GELU_ERF:
        if (isinf(x))
            return x > 0 ? x : -0.0;
        return 0.5 * x * erfc(-x * M_SQRT1_2);
    case TB_VM_GELU_TANH:
        if (isinf(x))
            return x > 0 ? x : -0.0;
        return mul_sigmoid_ref(
            x, 2 * 0.7978845608028654 * (x + 0.044715 * x * x * x));
    case TB_VM_SILU:
        if (isinf(x))
            return x > 0 ? x : -0.0;
        return mul_sigmoid_ref(x, x);
    default:
        return NAN;
    }
}

/* Error of got in ulps of the exact result want: the ulp of want's
 * binade (2^-149 below FLT_MIN); an overflow counts as exact when the
 * rounded result is infinite too.  NaN must match NaN. */
double ulp_error(float got, double want)
{
    if (isnan(want))
        return isnan(got) ? 0 : INFINITY;
    if (isnan(got))
        return INFINITY;
    const float wf = (float)want;
    if (isinf(got) || isinf(wf))
        return got == wf ? 0 : INFINITY;
    if (isinf(want))
        return INFINITY;
    int e;
    double a = fabs(want);
    if (a < 0x1p-126) {
        e = -149;
    } else {
        frexp(a, &e);
        e -= 24;
    }
    return fabs((double)got - want) / ldexp(1.0, e);
}

typedef struct vm_worst {
    double ulp;
    float x;
    uint64_t n;
} vm_worst;

/* Inputs of the sweep, chunk by chunk: every vm_stride-th bit pattern,
 * then 2^18 random floats in [-30, 30] (seeded). *pos is the cursor. */
int vm_inputs(uint64_t *pos, float *x)
{
    const uint64_t n_strided = (UINT64_C(0xffffffff) / vm_stride) + 1;
    const uint64_t n_total = n_strided + (UINT64_C(1) << 18);
    int k = 0;
    for (; k < VM_CHUNK && *pos < n_total; k++, (*pos)++) {
        if (*pos < n_strided) {
            uint32_t b = (uint32_t)(*pos * vm_stride);
            memcpy(&x[k], &b, sizeof b);
        } else {
            x[k] = (float)rng_uniform(-30, 30);
        }
    }
    return k;
}

void test_vmath_ulp(void **state)
{
    const int f = (int)(intptr_t)*state;
    const int nl = n_levels();
    tb_vmath vm[TB_ISA_COUNT];
    for (int l = 0; l < nl; l++)
        assert_int_equal(tb_vmath_fill(&vm[l], l), l);
    static float x[VM_CHUNK], y[TB_ISA_COUNT][VM_CHUNK];
    vm_worst w[TB_ISA_COUNT] = {{0}};
    uint64_t pos = 0, mismatch = 0;
    rng_seed(1000 + (uint64_t)f);
    int k;
    while ((k = vm_inputs(&pos, x)) > 0) {
        for (int l = 0; l < nl; l++)
            vm[l].fn[f](x, y[l], k);
        for (int i = 0; i < k; i++) {
            const double want = vm_ref(f, x[i]);
            for (int l = 0; l < nl; l++) {
                double e = ulp_error(y[l][i], want);
                w[l].n++;
                if (e > w[l].ulp || (isnan(e) && !isnan(w[l].ulp))) {
                    w[l].ulp = e;
                    w[l].x = x[i];
                }
            }
            /* the SIMD levels agree bit for bit, but for the gelus:
             * AVX-512's core takes 16 table pieces of degree 5, AVX2's 8
             * of degree 6 (vmath_simd.h), each within the bound */
            const bool agree = f != TB_VM_GELU_ERF && f != TB_VM_GELU_TANH;
            for (int l = TB_ISA_AVX2 + 1; agree && l < nl; l++)
                if (memcmp(&y[l][i], &y[TB_ISA_AVX2][i], sizeof(float)) &&
                    !(isnan(y[l][i]) && isnan(y[TB_ISA_AVX2][i])) &&
                    mismatch++ < 3)
                    print_error("%s: avx2 %a != %s %a at x=%a\n",
                                tb_vmath_name(f),
                                (double)y[TB_ISA_AVX2][i],
                                tb_cpu_isa_name(l), (double)y[l][i],
                                (double)x[i]);
        }
    }
    bool ok = mismatch == 0;
    for (int l = 0; l < nl; l++) {
        const double bound = tb_vmath_ulp_bound(f, l);
        printf("# vmath %-9s %-6s max %.3f ulp at x=%a (%.9g), bound "
               "%.3f, %llu inputs\n",
               tb_vmath_name(f), tb_cpu_isa_name(l), w[l].ulp,
               (double)w[l].x, (double)w[l].x, bound,
               (unsigned long long)w[l].n);
        if (!(w[l].ulp <= bound)) {
            print_error("vmath %s %s: %.3f ulp at x=%a exceeds the "
                        "documented bound %.2f\n",
                        tb_vmath_name(f), tb_cpu_isa_name(l), w[l].ulp,
                        (double)w[l].x, bound);
            ok = false;
        }
    }
    assert_true(ok);
}

/* Special values, at every level. */
void test_vmath_special(void **state)
{
    (void)state;
    const float inf = INFINITY, nan = NAN;
    const struct {
        int f;
        float x, want;
    } c[] = {
        {TB_VM_EXP, -inf, 0.0f},         {TB_VM_EXP, inf, inf},
        {TB_VM_EXP, 0.0f, 1.0f},         {TB_VM_EXP, -0.0f, 1.0f},
        {TB_VM_EXP, 89.0f, inf},         {TB_VM_EXP, -104.0f, 0.0f},
        {TB_VM_EXP, nan, nan},           {TB_VM_LOG, 0.0f, -inf},
        {TB_VM_LOG, -0.0f, -inf},        {TB_VM_LOG, -1.0f, nan},
        {TB_VM_LOG, -inf, nan},          {TB_VM_LOG, inf, inf},
        {TB_VM_LOG, 1.0f, 0.0f},         {TB_VM_LOG, nan, nan},
        {TB_VM_TANH, inf, 1.0f},         {TB_VM_TANH, -inf, -1.0f},
        {TB_VM_TANH, 0.0f, 0.0f},        {TB_VM_TANH, -0.0f, -0.0f},
        {TB_VM_TANH, nan, nan},          {TB_VM_SIGMOID, -inf, 0.0f},
        {TB_VM_SIGMOID, inf, 1.0f},      {TB_VM_SIGMOID, 0.0f, 0.5f},
        {TB_VM_SIGMOID, nan, nan},       {TB_VM_SILU, -inf, -0.0f},
        {TB_VM_SILU, inf, inf},          {TB_VM_SILU, 0.0f, 0.0f},
        {TB_VM_SILU, nan, nan},          {TB_VM_GELU_ERF, -inf, -0.0f},
        {TB_VM_GELU_ERF, inf, inf},      {TB_VM_GELU_ERF, 0.0f, 0.0f},
        {TB_VM_GELU_ERF, nan, nan},      {TB_VM_GELU_ERF, -30.0f, -0.0f},
        {TB_VM_GELU_ERF, FLT_MAX, FLT_MAX},
        {TB_VM_GELU_TANH, -inf, -0.0f},  {TB_VM_GELU_TANH, inf, inf},
        {TB_VM_GELU_TANH, 0.0f, 0.0f},   {TB_VM_GELU_TANH, nan, nan},
        {TB_VM_GELU_TANH, -FLT_MAX, -0.0f},
        {TB_VM_GELU_TANH, FLT_MAX, FLT_MAX},
        /* gelu_erf: -0 by the sign bit, the clamped tails exact */
        {TB_VM_GELU_ERF, -0.0f, -0.0f},  {TB_VM_GELU_ERF, 8.0f, 8.0f},
        {TB_VM_GELU_ERF, -15.0f, -0.0f}, {TB_VM_GELU_ERF, -FLT_MAX, -0.0f},
        /* tanh: the exp branch saturates exactly */
        {TB_VM_TANH, 9.5f, 1.0f},        {TB_VM_TANH, -20.0f, -1.0f},
        {TB_VM_TANH, FLT_MAX, 1.0f},     {TB_VM_TANH, 0x1p-140f, 0x1p-140f},
    };
    const int nl = n_levels();
    for (int l = 0; l < nl; l++) {
        tb_vmath vm;
        tb_vmath_fill(&vm, l);
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            float y;
            vm.fn[c[i].f](&c[i].x, &y, 1);
            bool ok = same(y, c[i].want);
            if (!ok)
                print_error("%s %s(%g) = %g, want %g\n", tb_cpu_isa_name(l),
                            tb_vmath_name(c[i].f), (double)c[i].x, (double)y,
                            (double)c[i].want);
            assert_true(ok);
        }
    }
}

/*
 * The SIMD exp core has a fast path (every lane of a vector inside
 * |argument| <= 86: exponent-field scaling) and a general one (clamp,
 * vscalefps): a vector takes the general path when any lane needs it,
 * and AVX2 and AVX-512 group lanes differently, so both paths must give
 * the same bits wherever both apply; so must the gelus' small forms
 * and their lane-by-lane mixes with the wide ones.  One far-out lane
 * (200, -200 or
 * NaN) in every other 16-lane group sends those vectors down the
 * general path: every other lane must keep its fast-path bits, and the
 * far-out lanes must still meet the bound (NaN: NaN).
 */
void test_vmath_paths(void **state)
{
    (void)state;
    enum { N = 512 };
    static const float far[] = {200.0f, -200.0f, NAN};
    const int nl = n_levels();
    for (int l = TB_ISA_AVX2; l < nl; l++) {
        tb_vmath vm;
        tb_vmath_fill(&vm, l);
        for (int fr = 0; fr < 2 * TB_VM_COUNT; fr++) {
            const int f = fr % TB_VM_COUNT;
            if (f == TB_VM_LOG)
                continue;
            static float x[N], y[N], x2[N], y2[N];
            rng_seed((uint64_t)(7000 + fr));
            /* exp: arguments up to the fast bound; the others: the range
             * where their exp argument stays on the fast path too; then
             * (second round) [-1, 1], where whole vectors take the
             * narrowest paths (the gelus' small forms, tanh's rational)
             * until a far-out lane joins them */
            const double r = fr >= TB_VM_COUNT ? 1 : f == TB_VM_EXP ? 86 : 9;
            for (int i = 0; i < N; i++)
                x[i] = (float)rng_uniform(-r, r);
            vm.fn[f](x, y, N);
            for (size_t c = 0; c < sizeof far / sizeof far[0]; c++) {
                memcpy(x2, x, sizeof x);
                for (int i = 5; i < N; i += 32)
                    x2[i] = far[c];
                vm.fn[f](x2, y2, N);
                for (int i = 0; i < N; i++) {
                    if (x2[i] == x[i]) {
                        if (memcmp(&y2[i], &y[i], sizeof(float)) != 0)
                            print_error("%s %s: x=%a gives %a next to a "
                                        "far-out lane, %a without\n",
                                        tb_cpu_isa_name(l),
                                        tb_vmath_name(f), (double)x[i],
                                        (double)y2[i], (double)y[i]);
                        assert_memory_equal(&y2[i], &y[i], sizeof(float));
                    } else {
                        assert_true(ulp_error(y2[i], vm_ref(f, x2[i])) <=
                                    tb_vmath_ulp_bound(f, l));
                    }
                }
            }
        }
    }
}

/*
 * log's AVX-512 fast path (vmath_simd.h: a vector whose lanes are all
 * positive and finite skips the special-value blends): one special lane
 * (0, -0, a negative, +-inf, NaN) or an edge of the range (the smallest
 * subnormal, FLT_MAX) in every other 16-lane group of positive values,
 * at each lane position: that lane gets its special value (or meets the
 * bound), every other lane keeps the bits it has without it.
 */
void test_vmath_log_lanes(void **state)
{
    (void)state;
    enum { N = 256 };
    const float inf = INFINITY, nan = NAN;
    const struct {
        float x, want; /* want NaN: any NaN; 1: within the bound */
    } sp[] = {{0.0f, -inf}, {-0.0f, -inf}, {-1.0f, nan}, {-FLT_MIN, nan},
              {inf, inf},   {-inf, nan},   {nan, nan},   {0x1p-149f, 1},
              {FLT_MAX, 1}, {FLT_MIN, 1}};
    const int nl = n_levels();
    for (int l = 0; l < nl; l++) {
        tb_vmath vm;
        tb_vmath_fill(&vm, l);
        static float x[N], y[N], x2[N], y2[N];
        rng_seed(7100);
        for (int i = 0; i < N; i++)
            x[i] = (float)rng_uniform(0.01, 100);
        vm.fn[TB_VM_LOG](x, y, N);
        for (size_t c = 0; c < sizeof sp / sizeof sp[0]; c++)
            for (int at = 0; at < 16; at++) {
                memcpy(x2, x, sizeof x);
                for (int i = at; i < N; i += 32)
                    x2[i] = sp[c].x;
                vm.fn[TB_VM_LOG](x2, y2, N);
                for (int i = 0; i < N; i++) {
                    bool ok;
                    if (x2[i] == x[i])
                        ok = memcmp(&y2[i], &y[i], sizeof(float)) == 0;
                    else if (sp[c].want == 1)
                        ok = ulp_error(y2[i], vm_ref(TB_VM_LOG, x2[i])) <=
                             tb_vmath_ulp_bound(TB_VM_LOG, l);
                    else
                        ok = same(y2[i], sp[c].want);
                    if (!ok)
                        print_error("%s log: x=%a gives %a (lane %d, "
                                    "special %a at %d)\n",
                                    tb_cpu_isa_name(l), (double)x2[i],
                                    (double)y2[i], i, (double)sp[c].x, at);
                    assert_true(ok);
                }
            }
    }
}

/* Every length 0..70 and a few more, misaligned, canaries, in place. */
void test_vmath_edges(void **state)
{
    (void)state;
    const int nl = n_levels();
    for (int l = 0; l < nl; l++) {
        tb_vmath vm;
        tb_vmath_fill(&vm, l);
        for (int f = 0; f < TB_VM_COUNT; f++)
            for (int64_t n = 0; n <= 600; n += n < 70 ? 1 : 131) {
                rng_seed((uint64_t)(f * 1000 + n));
                gbuf gx, gy;
                float *x = gb_new(&gx, (size_t)n * 4, 4);
                float *y = gb_new(&gy, (size_t)n * 4, 4);
                for (int64_t i = 0; i < n; i++)
                    x[i] = (float)rng_uniform(f == TB_VM_LOG ? 0 : -20, 20);
                vm.fn[f](x, y, n);
                for (int64_t i = 0; i < n; i++)
                    assert_true(ulp_error(y[i], vm_ref(f, x[i])) <=
                                tb_vmath_ulp_bound(f, l));
                /* the streaming form: the same bits, at every offset of
                 * y in a line (its head / body / tail split) */
                gbuf gz;
                float *z = gb_new(&gz, (size_t)n * 4, nt_off(TB_F32, (int)n));
                vm.fn_nt[f](x, z, n);
                assert_memory_equal(z, y, (size_t)n * 4);
                assert_true(gb_intact(&gz));
                gb_free(&gz);
                vm.fn[f](x, x, n); /* in place */
                assert_memory_equal(x, y, (size_t)n * 4);
                assert_true(gb_intact(&gx) && gb_intact(&gy));
                gb_free(&gx);
                gb_free(&gy);
            }
    }
    for (int f = 0; f < TB_VM_COUNT; f++)
        assert_true(tb_vmath_ulp_bound(f, 0) > 0);
    assert_true(tb_vmath_ulp_bound(-1, 0) < 0);
    assert_true(tb_vmath_ulp_bound(0, TB_ISA_COUNT) < 0);
    assert_string_equal(tb_vmath_name(TB_VM_COUNT), "?");
}

