/* checkasm, part 6: the random creation ops, pow f32, permute's tiles and
 * exp/log f64 (rand_simd.h, pow_simd_impl.h, f64_simd_impl.h): see
 * test_checkasm.c. */
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
/* 6. random creation ops (rand_simd.h)                                      */
/* ========================================================================= */

typedef struct rs_case {
    tb_op_id op;
    double a, b, seed;
} rs_case;

/* Ordinary and extreme parameters: rand_normal's tiny and zero std
 * (every lane through the scalar fallback: values near 0), the largest
 * std and mean, and a large mean next to a small std; rand_uniform's
 * float path (low 0) at and past its ends. */
static const rs_case rs_cases[] = {
    {TB_OP_rand_uniform, 0, 1, 0},
    {TB_OP_rand_uniform, -2.5, 7, 42},
    {TB_OP_rand_uniform, -1e3, 1e-3, 9007199254740992.0},
    {TB_OP_rand_uniform, -1e30, 1e30, 5},
    {TB_OP_rand_normal, 0, 1, 0},
    {TB_OP_rand_normal, 3, 0.5, 7},
    {TB_OP_rand_normal, -1e3, 1e2, 123456789},
    {TB_OP_rand_normal, 1e6, 1e-3, 11},
    {TB_OP_rand_normal, 0, 1e-40, 12},
    {TB_OP_rand_normal, 0, 0, 13},
    {TB_OP_rand_normal, 1e30, 1e30, 14},
    {TB_OP_rand_normal, -1, 2, 15},
    {TB_OP_arange, 0, 1, 0},
    {TB_OP_arange, -3.5, 0.1, 0},
    {TB_OP_arange, 1e6, -7.25, 0},
    {TB_OP_arange, 0.1, 1e-3, 0},
    /* arange f32's exact case (arange.h) and its edges: past 2^24
     * (rounded sums), a quantum of 2^-149 (subnormals, exact) and of
     * 2^-150 (not), zeros of both signs */
    {TB_OP_arange, 16776960, 1, 0},
    {TB_OP_arange, -16777000, 3, 0},
    {TB_OP_arange, 4194300.25, 0.5, 0},
    {TB_OP_arange, 0, 0x1p-149, 0},
    {TB_OP_arange, 0x1p-140, 0x1p-150, 0},
    {TB_OP_arange, -0.0, -0.0, 0},
    {TB_OP_arange, -0.0, 0, 0},
    {TB_OP_arange, -1000, 0.125, 0},
    /* float steps whose multiples leave the exact case early (0.1f:
     * 2^-27 quantum, exact below 0.125; a bf16 step of 2^-11 quantum
     * from 8000, past 2^13) */
    {TB_OP_arange, 0, 0x1.99999ap-4, 0},
    {TB_OP_arange, 8000, 0x1.9ap-4, 0},
    /* rand_uniform f32's float path (low 0, 2^-94 <= high <= FLT_MAX)
     * and its edges (2^-102 was the edge before) */
    {TB_OP_rand_uniform, 0, 3.7, 16},
    {TB_OP_rand_uniform, -0.0, 1e30, 17},
    {TB_OP_rand_uniform, 0, 0x1.0p-102, 18},
    {TB_OP_rand_uniform, 0, 0x1.fffffep-103, 19},
    {TB_OP_rand_uniform, 0, 1e-44, 21},
    {TB_OP_rand_uniform, 0, 0x1.0p-94, 25},
    {TB_OP_rand_uniform, 0, 0x1.fffffep-95, 26},
    /* rand_uniform f64's one-product path (low 0, d >= 2^-969) and
     * below it (d 2^-53 subnormal) */
    {TB_OP_rand_uniform, 0, 0x1.0p-969, 27},
    {TB_OP_rand_uniform, 0, 1e-300, 28},
    /* rand_normal with mean -0: with std 0 every value is -0 + (+-0),
     * whose sign the scalar sum decides (the decision must refuse or
     * agree); with std 1 the values near 0 */
    {TB_OP_rand_normal, -0.0, 0, 22},
    {TB_OP_rand_normal, -0.0, 1, 23},
    {TB_OP_rand_normal, 0, 1e-30, 24},
};

static const int64_t rs_sizes[] = {1, 2, 3, 7, 15, 16, 17, 31, 33, 513,
                                   4099, 70001};

/* Every random op and arange at every isa value and thread count, odd
 * sizes, misaligned canary-guarded outputs: bit for bit the reference
 * rounded to the dtype (rand.h's stream), and at a SIMD level the row
 * of that level ran (its impl name) for every (op, dtype) it serves. */
void test_rand_ops(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
            const bool simd = strcmp(vals[0], "avx2") == 0 ||
                              strcmp(vals[0], "avx512") == 0;
            for (size_t k = 0; k < sizeof rs_cases / sizeof rs_cases[0];
                 k++) {
                const rs_case *rc = &rs_cases[k];
                const tb_op *op = tb_op_get(rc->op);
                const bool u = rc->op == TB_OP_rand_uniform;
                const bool ar = rc->op == TB_OP_arange;
                tb_params p = {0};
                assert_int_equal(
                    tb_params_set(op, &p, ar ? "start" : u ? "low" : "mean",
                                  rc->a, err, sizeof err),
                    0);
                assert_int_equal(
                    tb_params_set(op, &p, ar ? "step" : u ? "high" : "std",
                                  rc->b, err, sizeof err),
                    0);
                if (!ar)
                    assert_int_equal(tb_params_set(op, &p, "seed", rc->seed,
                                                   err, sizeof err),
                                     0);
                tb_params_defaults(op, &p);
                for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
                    for (size_t si = 0;
                         si < sizeof rs_sizes / sizeof rs_sizes[0]; si++) {
                        const tb_dtype d = (tb_dtype)dt;
                        tb_shape os = S(1, (int)rs_sizes[si]);
                        tb_tensor out, ref, hdr;
                        gbuf go;
                        tb_tensor_init(&out, d, &os);
                        out.data = gb_new(&go, tb_tensor_nbytes(&out),
                                          misalign(d));
                        assert_int_equal(tb_tensor_create(&ref, TB_F64, &os),
                                         0);
                        tb_tensor_init(&hdr, d, &os);
                        const char *impl = NULL;
                        tb_kernel_fn fn = B->kernel(ctx, op, d, &p, &impl).fn;
                        assert_non_null(fn);
                        assert_non_null(impl);
                        assert_int_equal(fn(ctx, NULL, &out, &p), 0);
                        assert_int_equal(op->ref(&hdr, &ref, &p), 0);
                        if (simd && (u || ar || d == TB_F32)) {
                            const char *sfx = strrchr(impl, '_');
                            assert_non_null(sfx);
                            assert_string_equal(sfx + 1, vals[0]);
                        }
                        int64_t bad = 0;
                        for (int64_t i = 0; i < rs_sizes[si]; i++) {
                            double w = tb_tensor_get(&ref, i);
                            double want = d == TB_F32 ? (double)(float)w : w;
                            double got = tb_tensor_get(&out, i);
                            if (!same(got, want) && bad++ < 3)
                                print_error("%s_%s isa=%s threads=%s case "
                                            "%zu n %lld impl %s: [%lld] "
                                            "got %a want %a\n",
                                            op->name, tb_dtype_name(d),
                                            vals[0], vals[1], k,
                                            (long long)rs_sizes[si], impl,
                                            (long long)i, got, want);
                        }
                        bool intact = gb_intact(&go);
                        if (!intact)
                            print_error("%s_%s isa=%s threads=%s case %zu: "
                                        "canary overwritten\n",
                                        op->name, tb_dtype_name(d), vals[0],
                                        vals[1], k);
                        gb_free(&go);
                        tb_tensor_destroy(&ref);
                        assert_true(intact);
                        assert_int_equal(bad, 0);
                    }
            }
            B->destroy(ctx);
        }
}

/* The bf16 and f16 rows of rand_uniform and rand_normal (rand_simd.h's
 * chunk loops, the floats narrowed in registers) at every isa value and
 * thread count, bit for bit their dtype's C row (the f32 C row's floats
 * narrowed by ops/half.h, one thread), every case of rs_cases and size of
 * rs_sizes, misaligned canary-guarded outputs. */
void test_rand_half(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    char err[256];
    void *cctx = NULL;
    const char *cv[2] = {"scalar", "1"};
    assert_int_equal(B->create(B, cv, &cctx, err, sizeof err), 0);
    int64_t checked = 0;
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            void *ctx = NULL;
            assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
            for (size_t k = 0; k < sizeof rs_cases / sizeof rs_cases[0];
                 k++) {
                const rs_case *rc = &rs_cases[k];
                if (rc->op == TB_OP_arange)
                    continue;
                const tb_op *op = tb_op_get(rc->op);
                const bool u = rc->op == TB_OP_rand_uniform;
                tb_params p = {0};
                assert_int_equal(tb_params_set(op, &p, u ? "low" : "mean",
                                               rc->a, err, sizeof err),
                                 0);
                assert_int_equal(tb_params_set(op, &p, u ? "high" : "std",
                                               rc->b, err, sizeof err),
                                 0);
                assert_int_equal(
                    tb_params_set(op, &p, "seed", rc->seed, err, sizeof err),
                    0);
                tb_params_defaults(op, &p);
                for (int dt = TB_BF16; dt <= TB_F16; dt++)
                    for (size_t si = 0;
                         si < sizeof rs_sizes / sizeof rs_sizes[0]; si++) {
                        const tb_dtype d = (tb_dtype)dt;
                        const int64_t n = rs_sizes[si];
                        tb_shape os = S(1, (int)n);
                        tb_tensor out, want;
                        gbuf go;
                        tb_tensor_init(&out, d, &os);
                        out.data = gb_new(&go, tb_tensor_nbytes(&out),
                                          misalign(d));
                        assert_int_equal(tb_tensor_create(&want, d, &os), 0);
                        const char *impl = NULL, *cimpl = NULL;
                        tb_kernel_fn fn = B->kernel(ctx, op, d, &p, &impl).fn;
                        tb_kernel_fn cf =
                            B->kernel(cctx, op, d, &p, &cimpl).fn;
                        assert_non_null(fn);
                        assert_non_null(cf);
                        assert_int_equal(fn(ctx, NULL, &out, &p), 0);
                        assert_int_equal(cf(cctx, NULL, &want, &p), 0);
                        const uint16_t *g = out.data, *w = want.data;
                        int64_t bad = 0;
                        for (int64_t i = 0; i < n; i++)
                            if (g[i] != w[i] && bad++ < 3)
                                print_error("%s_%s isa=%s threads=%s case "
                                            "%zu n %lld impl %s: [%lld] "
                                            "got %04x want %04x (%s)\n",
                                            op->name, tb_dtype_name(d),
                                            vals[0], vals[1], k,
                                            (long long)n, impl,
                                            (long long)i, g[i], w[i], cimpl);
                        checked += n;
                        bool intact = gb_intact(&go);
                        gb_free(&go);
                        tb_tensor_destroy(&want);
                        assert_true(intact);
                        assert_int_equal(bad, 0);
                    }
            }
            B->destroy(ctx);
        }
    B->destroy(cctx);
    print_message("# rand_half: %lld elements bit for bit the C rows\n",
                  (long long)checked);
}

/* The bound rand_normal f32's SIMD rows rest on (rand_simd.h), checked
 * on every input the f32 stream can give them: for all 2^24 uniforms
 * u = k 2^-24, with t = 1 - u, the vector -2 log t within 2^-49 of
 * -2 log(t) by libm (relative), its vector square root within 2^-49 of
 * sqrt(-2 log(t)) by libm (relative: the scalar kernel's r), and the
 * vector cos and sin of 2 pi u within 2^-49 of libm's cos and sin of
 * a = TB_RAND_2PI u (absolute: the scalar kernel's), at every SIMD level
 * this machine runs (a NaN anywhere fails it: t = 1, r = 0 included).
 * The largest differences are printed. */
void test_rand_vmath(void **state)
{
    (void)state;
    enum { BLK = 1 << 16 };
    double *t = malloc(6 * BLK * sizeof *t);
    assert_non_null(t);
    double *u = t + BLK, *lg = u + BLK, *r = lg + BLK, *c = r + BLK,
           *s = c + BLK;
    for (int lv = TB_ISA_AVX2; lv < n_dvec_levels(); lv++) {
        double el = 0, er = 0, ec = 0, es = 0;
        for (int64_t k0 = 0; k0 < (INT64_C(1) << 24); k0 += BLK) {
            for (int i = 0; i < BLK; i++) {
                u[i] = (double)(k0 + i) * 0x1.0p-24;
                t[i] = 1.0 - u[i];
            }
#if TB_CPU_HAVE_AVX512
            if (lv == TB_ISA_AVX512)
                tb_cpu_rand_vmath_avx512(t, u, lg, r, c, s, BLK);
#endif
#if TB_CPU_HAVE_AVX2
            if (lv == TB_ISA_AVX2)
                tb_cpu_rand_vmath_avx2(t, u, lg, r, c, s, BLK);
#endif
            for (int i = 0; i < BLK; i++) {
                double l = -2.0 * log(t[i]), q = sqrt(l);
                double e = l == 0 ? fabs(lg[i]) * 0x1.0p60
                                  : fabs(lg[i] - l) / l;
                el = e > el || isnan(e) ? e : el;
                e = q == 0 ? fabs(r[i]) * 0x1.0p60 : fabs(r[i] - q) / q;
                er = e > er || isnan(e) ? e : er;
                double a = TB_RAND_2PI * u[i];
                e = fabs(c[i] - cos(a));
                ec = e > ec || isnan(e) ? e : ec;
                e = fabs(s[i] - sin(a));
                es = e > es || isnan(e) ? e : es;
            }
        }
        print_message("# rand vmath %s: -2 log 2^%.2f, sqrt 2^%.2f "
                      "(relative), cos 2^%.2f, sin 2^%.2f (absolute)\n",
                      tb_cpu_isa_name(lv), log2(el > 0 || isnan(el) ? el : 1e-300),
                      log2(er > 0 || isnan(er) ? er : 1e-300),
                      log2(ec > 0 || isnan(ec) ? ec : 1e-300),
                      log2(es > 0 || isnan(es) ? es : 1e-300));
        assert_true(el <= 0x1.0p-49);
        assert_true(er <= 0x1.0p-49);
        assert_true(ec <= 0x1.0p-49);
        assert_true(es <= 0x1.0p-49);
    }
    free(t);
}

/* rand_normal f32's decision (rand_simd.h: both ends of [v - err,
 * v + err] round to the same float), at every SIMD level: sound (when a
 * lane is accepted, v and every double within err/8 of it, the kernels'
 * margin, round to the float stored, bit for bit) and not idle (a value
 * on a float, or a quarter gap from the nearest midpoint, with the
 * kernels' err = 2^-44 |v|, is accepted).  Inputs: floats of every
 * binade (subnormal to FLT_MAX), the midpoints between neighbours and
 * points near them, the overflow threshold, +-0, values straddling 0,
 * NaN and infinity; a dropped bit-for-bit compare (-0 against +0), a
 * dropped float compare (NaN) or a check that ignored err fails it. */
typedef void (*rd_fn)(const double *, const double *, float *,
                      unsigned char *, int64_t);

static bool rd_same(float a, float b)
{
    uint32_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

void test_rand_decide(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    double *v = malloc(2 * N * sizeof *v);
    float *f = malloc(N * sizeof *f);
    unsigned char *ok = malloc(N);
    unsigned char *live = malloc(N);
    assert_non_null(v);
    assert_non_null(f);
    assert_non_null(ok);
    assert_non_null(live);
    double *err = v + N;
    for (int lv = TB_ISA_AVX2; lv < n_dvec_levels(); lv++) {
        rd_fn fn = NULL;
#if TB_CPU_HAVE_AVX512
        if (lv == TB_ISA_AVX512)
            fn = tb_cpu_rand_decide_avx512;
#endif
#if TB_CPU_HAVE_AVX2
        if (lv == TB_ISA_AVX2)
            fn = tb_cpu_rand_decide_avx2;
#endif
        if (!fn)
            continue;
        rng_seed(0x7264);
        int64_t n = 0;
        /* the fixed cases: value, err, must accept (1), must refuse (0),
         * either (2) */
        static const struct {
            double v, e;
            int want;
        } fx[] = {
            {0.0, 0.0, 1},
            {-0.0, 0.0, 2}, /* -0 - 0 is -0, -0 + 0 is +0 */
            {1e-50, 2e-50, 0},       /* straddles 0: -0 and +0 */
            {-1e-50, 2e-50, 0},
            {1e-50, 1e-60, 1},       /* +0 */
            {1.0, 0x1.0p-44, 1},
            {1.0 + 0x1.0p-24, 0x1.0p-44, 0}, /* a midpoint */
            {(double)FLT_MAX + 0x1.0p103, 0x1.0p84, 0}, /* overflow edge */
            {(double)FLT_MAX, 0x1.0p84, 1},
            {0x1.0p200, 0x1.0p156, 1},       /* +inf for sure */
            {0x1.0p-149 * 1.5, 0x1.0p-200, 0}, /* subnormal midpoint */
            {0x1.0p-149 * 3, 0x1.0p-200, 1},
            {NAN, 0.0, 0},
            {INFINITY, INFINITY, 0},
            {1.0, INFINITY, 0},
        };
        const int nfx = (int)(sizeof fx / sizeof fx[0]);
        for (int k = 0; k < nfx; k++) {
            v[n] = fx[k].v;
            err[n] = fx[k].e;
            live[n++] = (unsigned char)fx[k].want;
        }
        while (n < N) {
            /* a float of a random binade and its upper midpoint */
            int ex = (int)(rng_next() % 280) - 150;
            float x = (float)ldexp(rng_uniform(1.0, 2.0), ex);
            if (rng_next() & 1)
                x = -x;
            float y = nextafterf(x, x > 0 ? INFINITY : -INFINITY);
            double mid = ((double)x + (double)y) / 2;
            double gap = fabs((double)y - (double)x);
            uint64_t kind = rng_next() % 4;
            if (kind == 0) { /* on the float */
                v[n] = x;
                live[n] = x != 0 && isfinite(y);
            } else if (kind == 1) { /* a quarter gap from the midpoint */
                v[n] = mid + ((rng_next() & 1) ? 0.25 : -0.25) * gap;
                live[n] = isfinite(y) && 0x1.0p-44 * fabs(v[n]) < gap / 8;
            } else { /* near the midpoint: within a few err */
                v[n] = mid + rng_uniform(-4, 4) * 0x1.0p-44 * fabs(mid);
                live[n] = 2;
            }
            err[n] = 0x1.0p-44 * fabs(v[n]);
            if (live[n] == 0)
                live[n] = 2;
            n++;
        }
        fn(v, err, f, ok, N);
        int64_t bad = 0, acc = 0;
        for (int64_t i = 0; i < N; i++) {
            if (live[i] != 2 && ok[i] != live[i]) {
                if (bad++ < 5)
                    print_error("rand decide %s: v %a err %a: ok %d, want "
                                "%d\n",
                                tb_cpu_isa_name(lv), v[i], err[i], ok[i],
                                live[i]);
                continue;
            }
            if (!ok[i])
                continue;
            acc++;
            const double pts[3] = {v[i] - err[i] / 8, v[i],
                                   v[i] + err[i] / 8};
            for (int k = 0; k < 3; k++)
                if (!rd_same((float)pts[k], f[i]) && bad++ < 5)
                    print_error("rand decide %s: v %a err %a accepted as "
                                "%a, but %a rounds to %a\n",
                                tb_cpu_isa_name(lv), v[i], err[i],
                                (double)f[i], pts[k], (double)(float)pts[k]);
        }
        print_message("# rand decide %s: %lld of %d accepted\n",
                      tb_cpu_isa_name(lv), (long long)acc, N);
        assert_int_equal(bad, 0);
    }
    free(live);
    free(ok);
    free(f);
    free(v);
}

/* ---- pow f32's SIMD rows (pow_simd_impl.h) ---- */

typedef void (*pw_fn)(const float *, const float *, float *, int64_t);

static pw_fn pw_level(int lv)
{
#if TB_CPU_HAVE_AVX512
    if (lv == TB_ISA_AVX512)
        return tb_cpu_pow_f32_avx512;
#endif
#if TB_CPU_HAVE_AVX2
    if (lv == TB_ISA_AVX2)
        return tb_cpu_pow_f32_avx2;
#endif
    (void)lv;
    return NULL;
}

static float pw_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The stated bound of each row (pow_simd_impl.h): 1 ulp at AVX2 and
 * AVX-512 alike (float lanes where every lane is ordinary, their analysis
 * about 0.8 ulp; the double path's 0.5 + 2^-9 elsewhere). */
static double pw_bound(int lv)
{
    (void)lv;
    return 1.0;
}

/* Every pair of a table of special and ordinary values, both orders of
 * sign: bit for bit powf's result (C99 Annex F), NaN for NaN.  Twice:
 * the pairs one after another, and each pair alone among ordinary ones
 * (1.5^0.75) in a block of 16, at lane (pair mod 16), so a special lane
 * a float path (AVX2's 8 lanes, AVX-512's 16) took for ordinary would
 * show. */
void test_pow_special(void **state)
{
    (void)state;
    static const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY,
                              NAN, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f,
                              2.5f, -2.5f, 0x1p-149f, -0x1p-149f, FLT_MAX,
                              -FLT_MAX, 0x1p24f, -0x1p24f, 0x1.000002p24f,
                              127.0f, -127.0f, 1e-3f, 1.0000001f, 0.9999999f,
                              10.0f, -10.0f, 1e10f, 0x1p-126f};
    enum { NV = sizeof v / sizeof v[0], NP = NV * NV, NA = NP * 16 };
    float *a = malloc(3 * NA * sizeof *a);
    assert_non_null(a);
    float *b = a + NA, *o = b + NA;
    for (int lay = 0; lay < 2; lay++) {
        const int n = lay ? NA : NP;
        for (int k = 0; k < n; k++) {
            a[k] = 1.5f;
            b[k] = 0.75f;
        }
        for (int i = 0; i < NV; i++)
            for (int j = 0; j < NV; j++) {
                const int q = i * NV + j, k = lay ? q * 16 + q % 16 : q;
                a[k] = v[i];
                b[k] = v[j];
            }
        for (int lv = TB_ISA_AVX2; lv < n_dvec_levels(); lv++) {
            pw_fn fn = pw_level(lv);
            assert_non_null(fn);
            memset(o, 0, (size_t)n * sizeof *o);
            fn(a, b, o, n);
            int bad = 0;
            for (int k = 0; k < n; k++) {
                float w = powf(a[k], b[k]);
                bool ok = same((double)o[k], (double)w);
                /* ordinary pairs: not bit for bit, within the stated
                 * bound */
                if (!ok && isfinite(w) && w != 0 && isfinite(o[k]))
                    ok = ulp_error(o[k], pow((double)a[k], (double)b[k])) <=
                         pw_bound(lv);
                if (!ok && bad++ < 5)
                    print_error("pow %s: %a ^ %a = %a, powf %a\n",
                                tb_cpu_isa_name(lv), (double)a[k],
                                (double)b[k], (double)o[k], (double)w);
            }
            assert_int_equal(bad, 0);
        }
    }
    free(a);
}

/* Runs fn on the n pairs of a, b and keeps the worst ulp error against
 * libm's double pow (NaN, zeros and infinities must match). */
static void pw_worst(pw_fn fn, const float *a, const float *b, float *o,
                     int n, double *worst, float *wa, float *wb)
{
    fn(a, b, o, n);
    for (int i = 0; i < n; i++) {
        double e = ulp_error(o[i], pow((double)a[i], (double)b[i]));
        if (e > *worst || isnan(e)) {
            *worst = e;
            *wa = a[i];
            *wb = b[i];
        }
    }
}

/* The bound of each row (pw_bound) against libm's double pow on 6
 * families of 2^18 random pairs each: the op's domain, any positive
 * float to small powers (overflow and underflow included), integer
 * powers of [0.5, 2] and of negative bases, bases next to 1 to huge
 * powers, and any float to any float; then two dense sweeps of the
 * float paths' parts (AVX2 and AVX-512): every float base in [0.75, 1.5) (every
 * z of every interval of its log2), the even ones scaled by 2^e with e
 * cycling through -126..127 to a power b making y = b log2 a near one of
 * +-124 .. 8.5 (the full log2; its error counts |y| times), the odd ones
 * with e in -3..3 to y near one of +-8 .. 2^-10 (the short log2,
 * |y| <= 8), and the exact 2^b (a = 2) for every 1031st float b in
 * [-126, 126] (every k and f of its exp2 and both scaling limits).  The
 * worst case of each row is printed. */
void test_pow_ulp(void **state)
{
    (void)state;
    enum { N = 1 << 18 };
    /* |y| targets, large (the full log2) and small (the short one) */
    static const double ty[2][8] = {
        {124, -124, 123.5, -123.5, 100, -64, 17, -8.5},
        {8, -8, 7.95, -7.5, 5, -2.5, 0.3, -0x1p-10}};
    float *a = malloc(3 * N * sizeof *a);
    assert_non_null(a);
    float *b = a + N, *o = b + N;
    for (int lv = TB_ISA_AVX2; lv < n_dvec_levels(); lv++) {
        pw_fn fn = pw_level(lv);
        assert_non_null(fn);
        double worst = 0;
        float wa = 0, wb = 0;
        for (int fam = 0; fam < 6; fam++) {
            rng_seed(0x90e + (uint64_t)fam);
            for (int i = 0; i < N; i++) {
                uint32_t r = (uint32_t)rng_next();
                switch (fam) {
                case 0:
                    a[i] = (float)rng_uniform(0.1, 2);
                    b[i] = (float)rng_uniform(-2, 2);
                    break;
                case 1:
                    a[i] = pw_bits(r % 0x7f800000u);
                    b[i] = (float)rng_uniform(-4, 4);
                    break;
                case 2:
                    a[i] = (float)rng_uniform(0.5, 2);
                    b[i] = (float)(int)(rng_next() % 401) - 200;
                    break;
                case 3:
                    a[i] = -(float)rng_uniform(0.01, 10);
                    b[i] = (float)(int)(rng_next() % 81) - 40;
                    break;
                case 4:
                    a[i] = pw_bits(0x3f800000u + (r % 2001u) - 1000u);
                    b[i] = (float)rng_uniform(-1e7, 1e7);
                    break;
                default:
                    a[i] = pw_bits(r);
                    b[i] = pw_bits((uint32_t)rng_next());
                    break;
                }
            }
            pw_worst(fn, a, b, o, N, &worst, &wa, &wb);
        }
        /* every other float in [0.75, 1) and [1, 1.5) (the even bit
         * patterns for one set of targets, the odd for the other), scaled
         * by 2^e */
        int n = 0;
        for (int t = 0; t < 2; t++) {
            int c = 0;
            for (uint32_t u = 0x3f400000u + (uint32_t)t; u < 0x3fc00000u;
                 u += 2, c++) {
                if (u == 0x3f800000u)
                    continue; /* log2 1 = 0 */
                int e = t ? c % 7 - 3 : c % 254 - 126;
                float z = pw_bits(u);
                a[n] = ldexpf(z, e);
                b[n] = (float)(ty[t][c % 8] / log2((double)a[n]));
                if (++n == N) {
                    pw_worst(fn, a, b, o, n, &worst, &wa, &wb);
                    n = 0;
                }
            }
        }
        /* 2^b: |b| <= 126, every 1031st float */
        for (uint32_t u = 0; u <= 0x42fc0000u; u += 1031) {
            for (int sg = 0; sg < 2; sg++) {
                a[n] = 2.0f;
                b[n] = sg ? -pw_bits(u) : pw_bits(u);
                if (++n == N) {
                    pw_worst(fn, a, b, o, n, &worst, &wa, &wb);
                    n = 0;
                }
            }
        }
        pw_worst(fn, a, b, o, n, &worst, &wa, &wb);
        print_message("# pow %s: worst %.6f ulp at %a ^ %a (bound %g)\n",
                      tb_cpu_isa_name(lv), worst, (double)wa, (double)wb,
                      pw_bound(lv));
        assert_true(worst <= pw_bound(lv));
    }
    free(a);
}

/* The rows' loops at every size 0..300 (software-pipelined steps of 2
 * vectors, the single vectors and the masked tail after them), one float
 * off alignment, canary-guarded: every element within the bound (or the
 * special value) of libm's double pow, nothing written outside the
 * output.  Inputs in the op's domain, with a lane every 29th element that
 * sends its vector off the short log2's path (a negative base to an
 * integer power, |y| > 8, a subnormal result, a zero base), so the slow
 * step comes at every position of the pipeline. */
void test_pow_sizes(void **state)
{
    (void)state;
    enum { NMAX = 300 };
    static const float sp[4][2] = {
        {-1.5f, 3.0f}, {0.9f, 60.0f}, {1e-20f, 7.0f}, {0.0f, 2.0f}};
    for (int lv = TB_ISA_AVX2; lv < n_dvec_levels(); lv++) {
        pw_fn fn = pw_level(lv);
        assert_non_null(fn);
        int bad = 0;
        for (int n = 0; n <= NMAX; n++) {
            gbuf ga, gb, go;
            const size_t nb = (size_t)n * sizeof(float);
            float *a = gb_new(&ga, nb, sizeof(float));
            float *b = gb_new(&gb, nb, sizeof(float));
            float *o = gb_new(&go, nb, sizeof(float));
            rng_seed(0x9051 + (uint64_t)n);
            for (int k = 0; k < n; k++) {
                a[k] = (float)rng_uniform(0.1, 2);
                b[k] = (float)rng_uniform(-2, 2);
                if ((k + 3 * n) % 29 == 0) {
                    a[k] = sp[(k + n) % 4][0];
                    b[k] = sp[(k + n) % 4][1];
                }
            }
            fn(a, b, o, n);
            for (int k = 0; k < n; k++) {
                double e = ulp_error(o[k], pow((double)a[k], (double)b[k]));
                if (!(e <= pw_bound(lv)) && bad++ < 5)
                    print_error("pow %s n=%d: %a ^ %a = %a (%g ulp)\n",
                                tb_cpu_isa_name(lv), n, (double)a[k],
                                (double)b[k], (double)o[k], e);
            }
            if (!gb_intact(&go) && bad++ < 5)
                print_error("pow %s n=%d: wrote outside the output\n",
                            tb_cpu_isa_name(lv), n);
            gb_free(&ga);
            gb_free(&gb);
            gb_free(&go);
        }
        assert_int_equal(bad, 0);
    }
}

/* ---- permute's tiled path (permute_c.c) ---- */

/* Every permutation of 3-D shapes and the common ones of 4-D (NCHW <->
 * NHWC, the (1, 2) and (0, 1) swaps, the reversal, and the (2, 3)
 * swap), shapes from 1 to beyond two tiles per dim with odd extents, on
 * misaligned canary-guarded tensors in both dtypes, on an instance of
 * isa vals[0] and threads vals[1]: bit for bit the reference (values are
 * copies). */
static void permute_tiled_on(const char *const vals[2])
{
    static const int p3[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                 {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    static const int s3[][3] = {{1, 1, 1}, {3, 4, 5}, {37, 45, 3},
                                {70, 33, 65}, {1, 97, 33}, {2, 1, 130}};
    static const int p4[][4] = {{0, 2, 3, 1}, {0, 3, 1, 2}, {0, 2, 1, 3},
                                {1, 0, 2, 3}, {3, 2, 1, 0}, {0, 1, 3, 2}};
    static const int s4[][4] = {{2, 3, 35, 33}, {3, 65, 7, 40},
                                {1, 16, 1, 5}};
    static const char *const pn[4] = {"p0", "p1", "p2", "p3"};
    const tb_op *op = tb_op_get(TB_OP_permute);
    void *ctx = NULL;
    char err[256];
    assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
    const int n3 = (int)(sizeof s3 / sizeof s3[0]) * 6;
    const int n4 = (int)(sizeof p4 / sizeof p4[0]) *
                   (int)(sizeof s4 / sizeof s4[0]);
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
        for (int c = 0; c < n3 + n4; c++) {
            const bool four = c >= n3;
            const int nd = four ? 4 : 3;
            const int *perm = four ? p4[(c - n3) % 6] : p3[c % 6];
            const int *dims = four ? s4[(c - n3) / 6] : s3[c / 6];
            tb_shape is = {.ndim = nd}, os;
            for (int d = 0; d < nd; d++)
                is.dim[d] = dims[d];
            tb_params p = {0};
            for (int d = 0; d < nd; d++)
                assert_int_equal(
                    tb_params_set(op, &p, pn[d], perm[d], err, sizeof err),
                    0);
            assert_int_equal(tb_op_infer(op, &is, 1, &p, &os, err, sizeof err),
                             0);
            const tb_dtype d = (tb_dtype)dt;
            gbuf gi, go;
            tb_tensor in, out, ref;
            tb_tensor_init(&in, d, &is);
            in.data = gb_new(&gi, tb_tensor_nbytes(&in), misalign(d));
            fill(in.data, d, tb_tensor_numel(&in), false);
            tb_tensor_init(&out, d, &os);
            out.data = gb_new(&go, tb_tensor_nbytes(&out), misalign(d));
            assert_int_equal(tb_tensor_create(&ref, TB_F64, &os), 0);
            const char *impl = NULL;
            tb_kernel_fn fn = B->kernel(ctx, op, d, &p, &impl).fn;
            assert_non_null(fn);
            assert_int_equal(fn(ctx, &in, &out, &p), 0);
            assert_int_equal(op->ref(&in, &ref, &p), 0);
            int64_t bad = 0;
            for (int64_t k = 0; k < tb_tensor_numel(&ref); k++)
                if (!same(tb_tensor_get(&out, k), tb_tensor_get(&ref, k)) &&
                    bad++ < 3)
                    print_error("%s isa=%s threads=%s case %d: [%lld] got "
                                "%g want %g\n",
                                impl, vals[0], vals[1], c, (long long)k,
                                tb_tensor_get(&out, k),
                                tb_tensor_get(&ref, k));
            const bool intact = gb_intact(&gi) && gb_intact(&go);
            gb_free(&gi);
            gb_free(&go);
            tb_tensor_destroy(&ref);
            assert_true(intact);
            assert_int_equal(bad, 0);
        }
    B->destroy(ctx);
}

/* permute_tiled_on at every isa value (f32's SIMD rows:
 * bwd_simd_impl.h's register-transposed tiles, full and partial) and
 * thread count. */
void test_permute_tiled(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            permute_tiled_on(vals);
        }
}

/* ---- exp and log f64's SIMD rows (f64_simd_impl.h) ---- */

typedef void (*dx_fn)(const double *, double *, int64_t);

/* Error of got in ulps of want (long double, libm's expl/logl): the ulp
 * of want's binade (2^-1074 below DBL_MIN); infinities and NaN must
 * match exactly. */
static double dx_ulp(double got, long double want)
{
    if (isnan(want))
        return isnan(got) ? 0 : INFINITY;
    const double wd = (double)want;
    if (isnan(got) || isinf(got) || isinf(wd))
        return got == wd ? 0 : INFINITY;
    long double a = fabsl(want);
    int e;
    if (a < 0x1p-1022L) {
        e = -1074;
    } else {
        frexpl(a, &e);
        e -= 53;
    }
    return (double)(fabsl((long double)got - want) / ldexpl(1.0L, e));
}

/* exp and log within 1 ulp of the long double results (0.75 and 0.52
 * measured; 2 and 3 before their tables) on:
 * 2^20 uniform x in [-750, 750], 2^18 in the subnormal-result range
 * [-745.2, -708] and 2^18 in [-2, 2] (exp); 2^20 random positive bit
 * patterns (subnormals included), 2^18 values within 2^-20 of 1 and 2^18
 * in [0.5, 2] (every table interval, e = -1 and 0: log); and special
 * values (results 0, 1, infinite or NaN exactly libm's). */
void test_f64_ulp(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    double *x = malloc(2 * N * sizeof *x);
    assert_non_null(x);
    double *o = x + N;
    static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0,
                                -1.0, 709.782712893384, 709.79, -745.13,
                                -745.14, 0x1p-1074, DBL_MAX, -DBL_MIN};
    /* at avx512 as either vendor (tb_cpu_isa_amd_set): exp's row runs
     * two vectors a step on Intel, one on AMD (f64_simd_impl.h) */
    for (int lv = TB_ISA_AVX2; lv < n_dvec_levels(); lv++)
        for (int fv = 0; fv < (lv == TB_ISA_AVX512 ? 4 : 2); fv++) {
            const int f = fv % 2;
            tb_cpu_isa_amd_set(lv == TB_ISA_AVX512 ? fv / 2 : -1);
            dx_fn fn = NULL;
#if TB_CPU_HAVE_AVX512
            if (lv == TB_ISA_AVX512)
                fn = f ? tb_cpu_log_f64_avx512 : tb_cpu_exp_f64_avx512;
#endif
#if TB_CPU_HAVE_AVX2
            if (lv == TB_ISA_AVX2)
                fn = f ? tb_cpu_log_f64_avx2 : tb_cpu_exp_f64_avx2;
#endif
            assert_non_null(fn);
            double worst = 0, wx = 0;
            for (int fam = 0; fam < 4; fam++) {
                rng_seed(0xf64 + (uint64_t)(f * 4 + fam));
                int64_t n = fam == 0 ? N : fam < 3 ? N / 4 : 14;
                for (int64_t i = 0; i < n; i++) {
                    if (fam == 3) {
                        x[i] = sp[i];
                    } else if (fam == 2) {
                        x[i] = f ? rng_uniform(0.5, 2) : rng_uniform(-2, 2);
                    } else if (f == 0) {
                        x[i] = fam == 0 ? rng_uniform(-750, 750)
                                        : rng_uniform(-745.2, -708);
                    } else if (fam == 0) {
                        uint64_t u = rng_next() % UINT64_C(0x7ff0000000000000);
                        memcpy(&x[i], &u, sizeof u);
                    } else {
                        x[i] = 1.0 + rng_uniform(-0x1p-20, 0x1p-20);
                    }
                }
                fn(x, o, n);
                for (int64_t i = 0; i < n; i++) {
                    long double w = f ? logl((long double)x[i])
                                      : expl((long double)x[i]);
                    double e = dx_ulp(o[i], w);
                    const double lm = f ? log(x[i]) : exp(x[i]);
                    if (fam == 3 && (!isfinite(lm) || lm == 0 || lm == 1) &&
                        !same(o[i], lm))
                        e = INFINITY; /* special results: libm's exactly */
                    if (!(e <= worst)) {
                        worst = e;
                        wx = x[i];
                    }
                }
            }
            print_message("# %s f64 %s%s: worst %.3f ulp at %a\n",
                          f ? "log" : "exp", tb_cpu_isa_name(lv),
                          lv != TB_ISA_AVX512 ? ""
                          : fv / 2       ? " (as AMD)"
                                         : " (as Intel)",
                          worst, wx);
            tb_cpu_isa_amd_set(-1);
            assert_true(worst <= 1.0);
        }
    free(x);
}

/* The forward value of act fn (tb_cpu_act_f64_*'s numbering) at x in
 * long double; *s = sigmoid x.  gelu_tanh's z is the rows' double z
 * (the portable row's and the reference's operations, no fma here):
 * its roundings are the formula's, not the row's. */
static long double act_ld(int f, double x, long double *s)
{
    long double v = x;
    *s = v >= 0 ? 1.0L / (1.0L + expl(-v)) : expl(v) / (1.0L + expl(v));
    if (f == 5) {
        double z = 2.0 * (0.7978845608028654 * (x + 0.044715 * x * x * x));
        long double zl = z;
        long double sz = zl >= 0 ? 1.0L / (1.0L + expl(-zl))
                                 : expl(zl) / (1.0L + expl(zl));
        *s = sz;
        return v * sz;
    }
    return f == 0   ? *s
           : f == 1 ? tanhl(v)
           : f == 2 ? v * *s
           : f == 3 ? (v > 20 ? v : log1pl(expl(v)))
                    : 0.5L * v * erfcl(-v / sqrtl(2.0L));
}

/* sigmoid, tanh, silu, softplus (beta 1, threshold 20), gelu and
 * gelu_tanh f64's SIMD rows (f64_simd_impl.h) against long double:
 * sigmoid within 3 ulp, softplus within 4, silu within 4, gelu within
 * 6, gelu_tanh within 4 of x sigmoid(z) for the double z of its formula
 * (silu, gelu, gelu_tanh where the sigmoid or Phi factor is below
 * DBL_MIN: within (|x| + 1) 2^-1074, x times that subnormal, as the
 * portable row), tanh within 4 (measured on AVX2: 2.2, 3.3, 2.7, ...),
 * on 2^20 uniform x in [-50, 50], 2^18 in [-1, 1] (tanh's cancellation
 * range), 2^18 in [-760, -700] (sigmoid's subnormal results), 2^18 in
 * [-40, -36] (gelu's subnormal results) and special values (0, -0,
 * infinities, NaN: zero, infinite and NaN results exactly). */
void test_f64_act_ulp(void **state)
{
    (void)state;
    enum { N = 1 << 20, NF = 6 };
    static const char *const names[NF] = {"sigmoid",  "tanh", "silu",
                                          "softplus", "gelu", "gelu_tanh"};
    static const double bound[NF] = {3, 4, 4, 4, 6, 4};
    static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN,
                                0x1p-1074, -0x1p-1074, 1e-300, -1e-300,
                                36.0, -36.0, 0.17, -0.17, 0.1700001};
    double *x = malloc(2 * N * sizeof *x);
    assert_non_null(x);
    double *o = x + N;
    for (int lv = TB_ISA_AVX2; lv < n_dvec_levels(); lv++)
        for (int f = 0; f < NF; f++) {
            void (*fn)(int, const double *, double *, int64_t) = NULL;
#if TB_CPU_HAVE_AVX512
            if (lv == TB_ISA_AVX512)
                fn = tb_cpu_act_f64_avx512;
#endif
#if TB_CPU_HAVE_AVX2
            if (lv == TB_ISA_AVX2)
                fn = tb_cpu_act_f64_avx2;
#endif
            assert_non_null(fn);
            double worst = 0, wx = 0;
            for (int fam = 0; fam < 5; fam++) {
                static const double lo[] = {-50, -1, -760, -40};
                static const double hi[] = {50, 1, -700, -36};
                rng_seed(0xac7 + (uint64_t)(f * 5 + fam));
                int64_t n = fam == 0 ? N : fam < 4 ? N / 4 : 14;
                for (int64_t i = 0; i < n; i++)
                    x[i] = fam == 4 ? sp[i] : rng_uniform(lo[fam], hi[fam]);
                fn(f, x, o, n);
                for (int64_t i = 0; i < n; i++) {
                    long double s;
                    long double w = act_ld(f, x[i], &s);
                    if (isnan(x[i]) || (f >= 4 && x[i] == -INFINITY))
                        w = NAN; /* gelu(-inf) = -inf 0, as PyTorch */
                    double e = dx_ulp(o[i], w);
                    /* silu, gelu and gelu_tanh where their factor of x
                     * is subnormal: x times that rounding, as the
                     * portable row; in units of (|x| + 1) 2^-1074 */
                    const long double fac = f == 4 ? w / x[i] : s;
                    if ((f == 2 || f >= 4) && isfinite(x[i]) &&
                        x[i] != 0 && fabsl(fac) < DBL_MIN)
                        e = (double)(fabsl((long double)o[i] - w) /
                                     ((fabsl((long double)x[i]) + 1) *
                                      0x1p-1074L));
                    if (fam == 4 && (!isfinite((double)w) || w == 0) &&
                        !same(o[i], (double)w))
                        e = INFINITY; /* zeros, infinities, NaN exactly */
                    if (!(e <= worst)) {
                        worst = e;
                        wx = x[i];
                    }
                }
            }
            print_message("# %s f64 %s: worst %.3f ulp at %a\n", names[f],
                          tb_cpu_isa_name(lv), worst, wx);
            assert_true(worst <= bound[f]);
        }
    free(x);
}

/* The backward activations' f64 SIMD rows (f64_simd_impl.h) with g = 1
 * against the derivative in long double: relu exactly, sigmoid' and
 * tanh' (as k e / (1 + e)^2, e = e^(-c |x|)) within 5 ulp (3.93
 * measured), gelu' =
 * Phi(x) + x phi(x) within 5 ulp of |Phi(x)| + |x phi(x)| (it crosses
 * 0 near x = -0.75; where e^(-x^2 / 2) is subnormal, |x| > 37.6,
 * within (|x| + 1) 2^-1074);
 * on 2^20 uniform x in [-50, 50], 2^18 in [-2, 2],
 * 2^18 in [-760, -700] (subnormal results), 2^18 in [-1, 1] (gelu's
 * short form: blocks of 32 with every |x| <= 1) and special values (0, -0,
 * infinities: the limits; NaN gives NaN, relu 0); and g = 1.5 once: 1.5 times
 * the g = 1 result, exactly. */
void test_f64_bwd_ulp(void **state)
{
    (void)state;
    enum { N = 1 << 20, NF = 4 };
    static const char *const names[NF] = {"relu", "sigmoid", "tanh",
                                          "gelu"};
    static const double bound[NF] = {0, 5, 5, 5};
    static const double sp[] = {0.0,       -0.0,      INFINITY, -INFINITY,
                                NAN,       0x1p-1074, -0x1p-1074,
                                1e-300,    -1e-300,   36.0,     -36.0,
                                -0.7517916};
    double *x = malloc(4 * N * sizeof *x);
    assert_non_null(x);
    double *g = x + N, *o = g + N, *o2 = o + N;
    for (int64_t i = 0; i < N; i++)
        g[i] = 1.0;
    for (int lv = TB_ISA_AVX2; lv < n_dvec_levels(); lv++)
        for (int f = 0; f < NF; f++) {
            void (*fn)(int, const double *, const double *, double *,
                       int64_t) = NULL;
#if TB_CPU_HAVE_AVX512
            if (lv == TB_ISA_AVX512)
                fn = tb_cpu_act_bwd_f64_avx512;
#endif
#if TB_CPU_HAVE_AVX2
            if (lv == TB_ISA_AVX2)
                fn = tb_cpu_act_bwd_f64_avx2;
#endif
            assert_non_null(fn);
            double worst = 0, wx = 0;
            for (int fam = 0; fam < 5; fam++) {
                static const double lo[] = {-50, -2, -760, -1};
                static const double hi[] = {50, 2, -700, 1};
                rng_seed(0xb7d + (uint64_t)(f * 4 + fam));
                int64_t n = fam == 0 ? N : fam < 4 ? N / 4 : 12;
                for (int64_t i = 0; i < n; i++)
                    x[i] = fam == 4 ? sp[i] : rng_uniform(lo[fam], hi[fam]);
                fn(f, g, x, o, n);
                for (int64_t i = 0; i < n; i++) {
                    long double v = x[i], w, unit;
                    if (f == 0) {
                        w = x[i] > 0 ? 1.0L : 0.0L;
                        unit = w;
                    } else if (f < 3) {
                        long double c = f == 1 ? 1.0L : 2.0L;
                        long double e = expl(-c * fabsl(v));
                        w = (f == 1 ? 1.0L : 4.0L) * e / ((1 + e) * (1 + e));
                        unit = w;
                    } else {
                        long double cdf = 0.5L * erfcl(-v / sqrtl(2.0L));
                        long double pdf =
                            expl(-0.5L * v * v) /
                            sqrtl(2.0L * 3.14159265358979323846264L);
                        /* gelu' < 0 below -0.75: its limit at -inf
                         * is -0 */
                        w = isinf(x[i]) ? (x[i] > 0 ? 1.0L : -0.0L)
                                        : cdf + v * pdf;
                        unit = isinf(x[i]) ? w : cdf + fabsl(v * pdf);
                    }
                    if (isnan(x[i]) && f > 0)
                        w = unit = NAN; /* relu: 0, the portable row's */
                    double e = dx_ulp(o[i], w);
                    if (f == 0)
                        e = same(o[i], (double)w) ? 0 : INFINITY;
                    if (f == 3 && !isnan(x[i])) {
                        /* in ulp of |Phi| + |x phi|; where e^(-x^2 /
                         * 2) is subnormal, in units of (|x| + 1)
                         * 2^-1074 (x times that, rounded there) */
                        int ex;
                        frexpl(unit, &ex);
                        long double ul = expl(-0.5L * v * v) < DBL_MIN
                                             ? (fabsl(v) + 1) * 0x1p-1074L
                                             : ldexpl(1.0L, ex - 53);
                        e = (double)(fabsl((long double)o[i] - w) / ul);
                    }
                    if (fam == 4 && (isinf(x[i]) || w == 0 || f == 0) &&
                        !same(o[i], (double)w))
                        e = INFINITY; /* limits and zeros exactly */
                    if (!(e <= worst)) {
                        worst = e;
                        wx = x[i];
                    }
                }
            }
            /* g scales the result exactly (g = 1.5: one rounding of an
             * exact product where no underflow) */
            for (int64_t i = 0; i < 64; i++) {
                x[i] = rng_uniform(-8, 8);
                g[i] = 1.5;
            }
            fn(f, g, x, o2, 64);
            for (int64_t i = 0; i < 64; i++)
                g[i] = 1.0;
            fn(f, g, x, o, 64);
            for (int64_t i = 0; i < 64; i++)
                if (!same(o2[i], 1.5 * o[i]))
                    worst = INFINITY;
            print_message("# %s_backward f64 %s: worst %.3f ulp at %a\n",
                          names[f], tb_cpu_isa_name(lv), worst, wx);
            assert_true(worst <= bound[f]);
        }
    free(x);
}

/* ---- pow f64's SIMD rows (f64_simd_impl.h) ---- */

typedef void (*pw64_fn)(const double *, const double *, double *, int64_t);

static pw64_fn pw64_level(int lv)
{
    (void)lv;
#if TB_CPU_HAVE_AVX512
    if (lv == TB_ISA_AVX512)
        return tb_cpu_pow_f64_avx512;
#endif
#if TB_CPU_HAVE_AVX2
    if (lv == TB_ISA_AVX2)
        return tb_cpu_pow_f64_avx2;
#endif
    return NULL;
}

/* Family fam's i-th pair (a, b): 0 the op's inputs (a in [0.1, 2], b in
 * [-2, 2]); 1 a = 2^u, u in [-40, 40], b = y / log a for y in [-708,
 * 708] (the largest exponents that stay normal); 2 a within 2^-20 of
 * 1, y likewise (large b); 3 y in [-745, -708] and [708, 709.78] (the
 * subnormal and near-overflow results, the full path); 4 a random
 * positive bit pattern (subnormals included), b in [-3, 3]; 5 a in [-2,
 * -0.1] and an integer b in [-40, 40] (signs). */
static void pw64_pair(int fam, double *a, double *b)
{
    double y = rng_uniform(-708, 708);
    switch (fam) {
    case 0:
        *a = rng_uniform(0.1, 2);
        *b = rng_uniform(-2, 2);
        return;
    case 1:
        *a = exp2(rng_uniform(-40, 40));
        break;
    case 2:
        *a = 1.0 + rng_uniform(-0x1p-20, 0x1p-20);
        break;
    case 3:
        *a = exp2(rng_uniform(-40, 40));
        y = (rng_next() & 1) ? rng_uniform(-745, -708)
                             : rng_uniform(708, 709.78);
        break;
    case 4: {
        uint64_t u = rng_next() % UINT64_C(0x7ff0000000000000);
        memcpy(a, &u, sizeof u);
        *b = rng_uniform(-3, 3);
        return;
    }
    default:
        *a = rng_uniform(-2, -0.1);
        *b = (double)((int64_t)(rng_next() % 81) - 40);
        return;
    }
    *b = *a == 1.0 ? y : y / log(*a);
}

/* pow f64 within 1.5 ulp of powl (long double; 0.75 measured) on 2^18
 * pairs of each of
 * pw64_pair's six families (results in ulp of their binade, subnormal
 * ones in 2^-1074, as dx_ulp); and on every pair of special values
 * (zeros, infinities, NaN, +-1, integers odd and even, halves, a
 * subnormal, DBL_MAX) libm's pow bit for bit where that is 0, +-1,
 * infinite or NaN. */
void test_pow64_ulp(void **state)
{
    (void)state;
    enum { N = 1 << 18, NF = 6 };
    static const double v[] = {0.0,  -0.0,     1.0,     -1.0,   INFINITY,
                               -INFINITY, NAN, 0.5,     -0.5,   2.0,
                               -2.0, 3.0,      -3.0,    2.5,    -2.5,
                               0x1p-1074, -0x1p-1074, DBL_MAX, -DBL_MAX,
                               0x1p53, -0x1p53, 1e-300, 1e300, 1.0000001};
    enum { NV = sizeof v / sizeof v[0] };
    double *a = malloc(3 * N * sizeof *a);
    assert_non_null(a);
    double *b = a + N, *o = b + N;
    for (int lv = TB_ISA_AVX2; lv < n_dvec_levels(); lv++) {
        pw64_fn fn = pw64_level(lv);
        assert_non_null(fn);
        double worst = 0, wa = 0, wb = 0;
        for (int fam = 0; fam < NF; fam++) {
            rng_seed(0x9064 + (uint64_t)fam);
            for (int64_t i = 0; i < N; i++)
                pw64_pair(fam, &a[i], &b[i]);
            fn(a, b, o, N);
            double fw = 0;
            for (int64_t i = 0; i < N; i++) {
                double e = dx_ulp(o[i], powl(a[i], b[i]));
                if (!(e <= fw))
                    fw = e;
                if (!(e <= worst)) {
                    worst = e;
                    wa = a[i];
                    wb = b[i];
                }
            }
            print_message("# pow f64 %s family %d: worst %.3f ulp\n",
                          tb_cpu_isa_name(lv), fam, fw);
        }
        int bad = 0;
        for (int i = 0; i < NV; i++)
            for (int j = 0; j < NV; j++) {
                a[i * NV + j] = v[i];
                b[i * NV + j] = v[j];
            }
        fn(a, b, o, NV * NV);
        for (int k = 0; k < NV * NV; k++) {
            const double w = pow(a[k], b[k]);
            const bool sp = !isfinite(w) || w == 0 || fabs(w) == 1;
            if ((sp && !same(o[k], w)) ||
                (!sp && !(dx_ulp(o[k], powl(a[k], b[k])) <= 1.5)))
                if (bad++ < 5)
                    print_error("pow f64 %s: %a^%a = %a, want %a\n",
                                tb_cpu_isa_name(lv), a[k], b[k], o[k], w);
        }
        print_message("# pow f64 %s: worst %.3f ulp at %a^%a\n",
                      tb_cpu_isa_name(lv), worst, wa, wb);
        assert_int_equal(bad, 0);
        assert_true(worst <= 1.5);
    }
    free(a);
}

/* ---- rand_normal f64's Box-Muller (rand.h's tb_rand_bm64) ---- */

/* The documented bound (rand.h) in ulp of each of z0 = r cos(2 pi u2) and
 * z1 = r sin(2 pi u2). */
#define BM64_ULP 4.0

/* z0, z1 in long double: r = sqrtl(-2 logl(1 - u1)), 2 pi u2 = pi/2 (q
 * + v) with y = 4 u2, q the nearest integer, v = y - q (exact), so
 * cosl/sinl see pi/2 v (|v| <= 1/2, relative error 2^-64) and the zeros
 * of cos and sin keep their relative accuracy; q mod 4 rotates. */
static void bm64_ref(double u1, double u2, long double z[2])
{
    const long double r = sqrtl(-2.0L * logl(1.0L - (long double)u1));
    const long double y = 4.0L * u2, q = nearbyintl(y);
    const long double a = 1.5707963267948966192313216916397514L * (y - q);
    const long double c = cosl(a), s = sinl(a);
    switch ((int)q & 3) {
    case 0: z[0] = c, z[1] = s; break;
    case 1: z[0] = -s, z[1] = c; break;
    case 2: z[0] = -c, z[1] = -s; break;
    default: z[0] = s, z[1] = -c; break;
    }
    z[0] *= r;
    z[1] *= r;
}

/* The stream's f64 Box-Muller within BM64_ULP of bm64_ref on 2^21 pairs
 * of the stream's own uniforms, every pair of edge uniforms (u1 0, its
 * largest value 1 - 2^-53 with t = 2^-53, binade edges of t; u2 at and
 * next to the quadrant boundaries k/8, where q and the sign flips
 * change), and all 2^16 u2 = k 2^-16 with u1 = 0.5; the worst printed. */
void test_rand_bm64_ulp(void **state)
{
    (void)state;
    const double e53 = 0x1p-53;
    static const double eu1[] = {0.0, 0x1p-53, 0x1p-30, 0.25, 0.5,
                                 0.5 - 0x1p-53, 0.5 + 0x1p-53,
                                 1 - 0x1p-53, 1 - 0x1p-52, 0.75,
                                 0.2928932188134524, 0.29289321881345254};
    double eu2[3 * 9];
    for (int k = 0; k < 9; k++) {
        eu2[3 * k] = k / 8.0;
        eu2[3 * k + 1] = k / 8.0 + e53;
        eu2[3 * k + 2] = k / 8.0 - e53;
    }
    eu2[2] = 0.5; /* 0 - 2^-53 is outside [0, 1) */
    eu2[3 * 8] = 1 - e53, eu2[3 * 8 + 1] = 1 - 2 * e53;
    eu2[3 * 8 + 2] = 1 - 0x1p-40;
    const int ne1 = (int)(sizeof eu1 / sizeof eu1[0]);
    const int ne2 = (int)(sizeof eu2 / sizeof eu2[0]);
    const int64_t nr = (int64_t)1 << 21, n16 = 1 << 16;
    const uint64_t key = tb_rand_key(0xb0c5);
    double worst = 0, wu1 = 0, wu2 = 0;
    int bad = 0;
    for (int64_t i = 0; i < ne1 * ne2 + nr + n16; i++) {
        double u1, u2;
        if (i < ne1 * ne2) {
            u1 = eu1[i / ne2];
            u2 = eu2[i % ne2];
        } else if (i < ne1 * ne2 + nr) {
            u1 = tb_rand_u53(key, (uint64_t)(2 * i));
            u2 = tb_rand_u53(key, (uint64_t)(2 * i + 1));
        } else {
            u1 = 0.5;
            u2 = (double)(i - ne1 * ne2 - nr) * 0x1p-16;
        }
        double z[2];
        long double w[2];
        tb_rand_bm64(u1, u2, z);
        bm64_ref(u1, u2, w);
        for (int h = 0; h < 2; h++) {
            double err = w[h] == 0 ? (z[h] == 0 ? 0 : INFINITY)
                                   : dx_ulp(z[h], w[h]);
            if (err > worst) {
                worst = err;
                wu1 = u1;
                wu2 = u2;
            }
            if (!(err <= BM64_ULP) && bad++ < 3)
                print_error("bm64 u1 %a u2 %a: z%d %a, long double %La "
                            "(%.2f ulp)\n",
                            u1, u2, h, z[h], w[h], err);
        }
    }
    print_message("# rand_normal f64 Box-Muller: worst %.3f ulp (bound %.1f) "
                  "at u1 %a u2 %a\n",
                  worst, BM64_ULP, wu1, wu2);
    assert_int_equal(bad, 0);
}

/* ========================================================================= */
/* dropout's rows (dropout_simd.h): the stream's keep bits, bit for bit      */
/* ========================================================================= */

/* SplitMix64's finalizer written again from its definition (Steele, Lea,
 * Flood 2014; Vigna's constants), independent of rand.h's: the oracle of
 * the keep bit. */
static uint64_t dp_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Every dropout row at every isa value and thread count, on sizes
 * around the vector widths and the 64-element thread split, misaligned
 * canary-guarded operands with special values (NaN, +-inf, +-0), five
 * p (0, the largest p < 1 among them) and three seeds: each output
 * element's bits are x * (keep ? s : 0) in the dtype, keep =
 * (mix(key + (i + 1) G) >> 11) >= ceil(p 2^53), key = mix(seed + G), s =
 * 1 / (1 - p) rounded in the dtype (the C row's definition, from the
 * finalizer above), and at a SIMD level the row of that level ran. */
void test_dropout_rows(void **state)
{
    (void)state;
    static const double ps[] = {0, 0.1, 0.5, 0.9, 0x1.fffffffffffffp-1};
    static const double seeds[] = {0, 42, 9007199254740992.0};
    static const int64_t sizes[] = {1,  3,  7,   8,   15,   16,   17,
                                    31, 33, 127, 513, 4099, 70001};
    const uint64_t G = UINT64_C(0x9e3779b97f4a7c15);
    const tb_op *op = tb_op_get(TB_OP_dropout);
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    int64_t checked = 0;
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
            const bool simd = strcmp(vals[0], "avx2") == 0 ||
                              strcmp(vals[0], "avx512") == 0;
            for (size_t q = 0; q < sizeof ps / sizeof ps[0]; q++)
                for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
                    tb_params p = {0};
                    assert_int_equal(tb_params_set(op, &p, "p", ps[q], err,
                                                   sizeof err),
                                     0);
                    assert_int_equal(tb_params_set(op, &p, "seed", seeds[k],
                                                   err, sizeof err),
                                     0);
                    const uint64_t key = dp_mix((uint64_t)seeds[k] + G);
                    const uint64_t thr = (uint64_t)ceil(ps[q] * 0x1.0p53);
                    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
                        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0];
                             si++) {
                            const tb_dtype d = (tb_dtype)dt;
                            const int64_t n = sizes[si];
                            tb_shape sh = S(1, (int)n);
                            tb_tensor x, out;
                            gbuf gx, go;
                            tb_tensor_init(&x, d, &sh);
                            tb_tensor_init(&out, d, &sh);
                            x.data = gb_new(&gx, tb_tensor_nbytes(&x),
                                            misalign(d));
                            out.data = gb_new(&go, tb_tensor_nbytes(&out),
                                              misalign(d));
                            rng_seed(0xd50 + si);
                            fill(x.data, d, n, true);
                            const char *impl = NULL;
                            tb_kernel_fn fn =
                                B->kernel(ctx, op, d, &p, &impl).fn;
                            assert_non_null(fn);
                            assert_int_equal(fn(ctx, &x, &out, &p), 0);
                            if (simd) {
                                const char *sfx = strrchr(impl, '_');
                                assert_non_null(sfx);
                                assert_string_equal(sfx + 1, vals[0]);
                            }
                            int64_t bad = 0;
                            for (int64_t i = 0; i < n; i++) {
                                const bool keep =
                                    dp_mix(key + ((uint64_t)i + 1) * G) >>
                                        11 >=
                                    thr;
                                bool ok;
                                if (d == TB_F32) {
                                    const float s = 1.0f / (float)(1 - ps[q]);
                                    const float w =
                                        ((const float *)x.data)[i] *
                                        (keep ? s : 0.0f);
                                    ok = memcmp(&w, (float *)out.data + i,
                                                sizeof w) == 0;
                                } else {
                                    const double s = 1.0 / (1 - ps[q]);
                                    const double w =
                                        ((const double *)x.data)[i] *
                                        (keep ? s : 0.0);
                                    ok = memcmp(&w, (double *)out.data + i,
                                                sizeof w) == 0;
                                }
                                if (!ok && bad++ < 3)
                                    print_error(
                                        "dropout_%s isa=%s threads=%s p=%g "
                                        "seed=%g n %lld impl %s: [%lld] "
                                        "got %a x %a\n",
                                        tb_dtype_name(d), vals[0], vals[1],
                                        ps[q], seeds[k], (long long)n, impl,
                                        (long long)i, get(out.data, d, i),
                                        get(x.data, d, i));
                            }
                            checked += n;
                            const bool intact =
                                gb_intact(&gx) && gb_intact(&go);
                            if (!intact)
                                print_error("dropout_%s isa=%s threads=%s: "
                                            "canary overwritten\n",
                                            tb_dtype_name(d), vals[0],
                                            vals[1]);
                            gb_free(&gx);
                            gb_free(&go);
                            assert_true(intact);
                            assert_int_equal(bad, 0);
                        }
                }
            B->destroy(ctx);
        }
    print_message("# dropout_rows: %lld elements bit for bit\n",
                  (long long)checked);
}
