/* checkasm, parts 5 and 7: ops_simd.h's rows and the backward ops' SIMD
 * rows: see test_checkasm.c. */
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
/* 5. ops_simd.h's rows: special values, softplus's ulp sweep                */
/* ========================================================================= */

/* Specials and edges: NaN, infinities, signed zeros, subnormals, the
 * extremes, softplus's threshold (20) and the exp tails where exp(-|z|)
 * underflows (z ~ -87.3 to the subnormals, ~ -103.97 to 0), e < 2^-24
 * (z < -16.6, 1 + e rounds to 1). */
static const float xs_spec[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, FLT_MIN, -FLT_MIN,
    0x1p-149f, -0x1p-149f, 0x1.8p-130f, FLT_MAX, -FLT_MAX, 1.0f, -1.0f,
    20.0f, 0x1.400002p+4f, 0x1.3ffffep+4f, -16.5f, -16.7f, -17.0f, -87.0f,
    -87.5f, -90.0f, -103.0f, -103.9f, -104.0f, -110.0f, 88.8f, 1e-8f,
    -1e-8f, 0.5f, -0.5f, 3.0f, 1e30f, -1e30f,
};
#define XS_NSPEC ((int)(sizeof xs_spec / sizeof xs_spec[0]))

/* The documented bound of softplus's SIMD rows (ops_simd.h) in ulp, for
 * results of at least FLT_MIN in magnitude; below, within FLT_MIN. */
#define XS_SOFTPLUS_ULP 4.0

static double xs_softplus_ref(float xf, float beta, float thr)
{
    const double z = (double)beta * xf;
    return z > thr ? (double)xf : log1p(exp(z)) / beta;
}

/* got vs the portable row's value: the same bits, or both NaN. */
static bool xs_same_bits(float got, float want)
{
    if (isnan(got) || isnan(want))
        return isnan(got) && isnan(want);
    return memcmp(&got, &want, sizeof got) == 0;
}

/* Softplus got vs the double reference: XS_SOFTPLUS_ULP for normal
 * results, FLT_MIN absolute below, NaN for NaN, infinities exact. */
static bool xs_softplus_ok(float got, double want)
{
    if (fabs(want) < FLT_MIN && !isnan(want))
        return fabs(got - want) <= FLT_MIN;
    return ulp_error(got, want) <= XS_SOFTPLUS_ULP;
}

typedef struct xs_case {
    tb_op_id id;
    const char *pn[2];
    double pv[2];
} xs_case;

static const xs_case xs_cases[] = {
    {TB_OP_softplus, {NULL, NULL}, {0, 0}},
    {TB_OP_softplus, {"beta", "threshold"}, {2, 3}},
    {TB_OP_softplus, {"beta", "threshold"}, {0.5, -1}},
    {TB_OP_sqrt, {NULL, NULL}, {0, 0}},
    {TB_OP_rsqrt, {NULL, NULL}, {0, 0}},
    {TB_OP_leaky_relu, {NULL, NULL}, {0, 0}},
    {TB_OP_leaky_relu, {"alpha", NULL}, {-2, 0}},
    {TB_OP_maximum, {NULL, NULL}, {0, 0}},
    {TB_OP_minimum, {NULL, NULL}, {0, 0}},
    {TB_OP_neg, {NULL, NULL}, {0, 0}},
    {TB_OP_abs, {NULL, NULL}, {0, 0}},
    {TB_OP_add_scalar, {"scalar", NULL}, {-2.5, 0}},
    {TB_OP_sub_scalar, {"scalar", NULL}, {0.1, 0}},
    {TB_OP_mul_scalar, {"scalar", NULL}, {-3.1, 0}},
    {TB_OP_div_scalar, {"scalar", NULL}, {3, 0}},
    {TB_OP_div_scalar, {"scalar", NULL}, {0.1, 0}},
};

/* Every isa value, 1 thread: every special (all pairs of them for the
 * binary ops) then 29 random values (an odd tail), f32.  The exact ops
 * against the portable row (math_c.c) bit for bit, softplus against
 * its double definition. */
void test_xs_special(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++) {
        const char *vals[2] = {ax[0].values[iv], ax[1].values[0]};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
        for (size_t ci = 0; ci < sizeof xs_cases / sizeof xs_cases[0];
             ci++) {
            const xs_case *xc = &xs_cases[ci];
            const tb_op *op = tb_op_get(xc->id);
            tb_params p = {0};
            for (int i = 0; i < 2; i++)
                if (xc->pn[i])
                    assert_int_equal(tb_params_set(op, &p, xc->pn[i],
                                                   xc->pv[i], err,
                                                   sizeof err),
                                     0);
            tb_params_defaults(op, &p);
            const bool bin = op->n_in == 2;
            const int64_t n =
                bin ? XS_NSPEC * XS_NSPEC + 29 : XS_NSPEC + 29;
            tb_shape sh = S(1, (int)n);
            tb_tensor in[2], got, base;
            for (int i = 0; i < op->n_in; i++)
                assert_int_equal(tb_tensor_create(&in[i], TB_F32, &sh), 0);
            assert_int_equal(tb_tensor_create(&got, TB_F32, &sh), 0);
            assert_int_equal(tb_tensor_create(&base, TB_F32, &sh), 0);
            rng_seed(77 + ci);
            for (int64_t k = 0; k < n; k++)
                for (int i = 0; i < op->n_in; i++) {
                    float *d = in[i].data;
                    if (k >= n - 29)
                        d[k] = (float)rng_uniform(-3, 3);
                    else if (!bin)
                        d[k] = xs_spec[k];
                    else
                        d[k] = xs_spec[i == 0 ? k / XS_NSPEC : k % XS_NSPEC];
                }
            const char *impl = NULL;
            tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, &p, &impl).fn;
            assert_non_null(fn);
            assert_int_equal(fn(ctx, in, &got, &p), 0);
            tb_kernel_fn pf = tb_cpu_krow_c(op->id, TB_F32)->fn;
            assert_non_null(pf);
            assert_int_equal(pf(NULL, in, &base, &p), 0);
            const float *g = got.data, *w = base.data, *x = in[0].data;
            const float beta = (float)p.v[0], thr = (float)p.v[1];
            int bad = 0;
            for (int64_t k = 0; k < n; k++) {
                bool ok = xc->id == TB_OP_softplus
                              ? xs_softplus_ok(
                                    g[k], xs_softplus_ref(x[k], beta, thr))
                              : xs_same_bits(g[k], w[k]);
                if (!ok && bad++ < 3)
                    print_error("%s case %zu isa=%s impl %s: [%lld] x=%a "
                                "got %a portable %a\n",
                                op->name, ci, vals[0], impl, (long long)k,
                                (double)x[k], (double)g[k], (double)w[k]);
            }
            for (int i = 0; i < op->n_in; i++)
                tb_tensor_destroy(&in[i]);
            tb_tensor_destroy(&got);
            tb_tensor_destroy(&base);
            assert_int_equal(bad, 0);
        }
        B->destroy(ctx);
    }
}

/* softplus (beta 1, threshold 20; then beta 2, threshold 3) at every
 * isa value over vmath's sweep (every vm_stride-th float, 2^18 random
 * ones in [-30, 30]): the worst error printed, XS_SOFTPLUS_ULP held. */
void test_xs_softplus_ulp(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    const tb_op *op = tb_op_get(TB_OP_softplus);
    static const double pv[2][2] = {{1, 20}, {2, 3}};
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int pc = 0; pc < 2; pc++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[0]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
            tb_params p = {0};
            assert_int_equal(tb_params_set(op, &p, "beta", pv[pc][0], err,
                                           sizeof err),
                             0);
            assert_int_equal(tb_params_set(op, &p, "threshold", pv[pc][1],
                                           err, sizeof err),
                             0);
            const char *impl = NULL;
            tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, &p, &impl).fn;
            assert_non_null(fn);
            tb_shape sh = S(1, VM_CHUNK);
            tb_tensor in, out;
            assert_int_equal(tb_tensor_create(&in, TB_F32, &sh), 0);
            assert_int_equal(tb_tensor_create(&out, TB_F32, &sh), 0);
            rng_seed(2000 + (uint64_t)pc);
            uint64_t pos = 0, bad = 0;
            double worst = 0;
            float wx = 0;
            int k;
            while ((k = vm_inputs(&pos, in.data)) > 0) {
                if (k < VM_CHUNK)
                    for (int i = k; i < VM_CHUNK; i++)
                        ((float *)in.data)[i] = 0;
                assert_int_equal(fn(ctx, &in, &out, &p), 0);
                const float *x = in.data, *y = out.data;
                for (int i = 0; i < k; i++) {
                    double want =
                        xs_softplus_ref(x[i], (float)pv[pc][0],
                                        (float)pv[pc][1]);
                    if (!xs_softplus_ok(y[i], want) && bad++ < 3)
                        print_error("softplus isa=%s beta=%g: x=%a got %a "
                                    "want %a\n",
                                    vals[0], pv[pc][0], (double)x[i],
                                    (double)y[i], want);
                    if (fabs(want) >= FLT_MIN) {
                        double e = ulp_error(y[i], want);
                        if (e > worst) {
                            worst = e;
                            wx = x[i];
                        }
                    }
                }
            }
            printf("# softplus %-6s (%s) beta=%g: max %.3f ulp at x=%a, "
                   "bound %.1f\n",
                   vals[0], impl, pv[pc][0], worst, (double)wx,
                   XS_SOFTPLUS_ULP);
            tb_tensor_destroy(&in);
            tb_tensor_destroy(&out);
            B->destroy(ctx);
            assert_int_equal(bad, 0);
        }
}

/* max, min, argmax (ops_simd.h's reduction rows) at every isa value and
 * thread count on lanes with NaNs (none, first, middle, last, two,
 * several in one lane), infinities and signed-zero ties (either sign
 * first, or random signs as the maximum), contiguous (no axis, the last
 * axis of 3 and of 37 rows: the short rows' blocks) and strided (axis
 * 0): the portable row's values exactly (== for values, so -0 and +0
 * tie: the portable rows themselves do not keep the first zero's sign;
 * NaN for NaN), argmax's index exactly; dt f32 (the rows of ops_simd.h)
 * or f64 (f64_simd_impl.h's). */
static void xs_reduce_special(tb_dtype dt)
{
    static const int lens[] = {1, 5, 63, 64, 65, 200, 1031, 2, 10, 17,
                               8, 16};
    static const tb_op_id ids[] = {TB_OP_max, TB_OP_min, TB_OP_argmax};
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values && tv < 2; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
            for (int li = 0; li < (int)(sizeof lens / sizeof lens[0]); li++)
                for (int pat = 0; pat < 10; pat++)
                    for (int ai = 0; ai < 4; ai++)
                        for (int oi = 0; oi < 3; oi++) {
                            const tb_op *op = tb_op_get(ids[oi]);
                            const int len = lens[li];
                            /* ai 0: [len]; 1: [3, len] axis 1; 2: [len, 19]
                             * axis 0 (19 lanes: whole vectors and a
                             * tail); 3: [37, len] axis 1 (short rows
                             * in blocks of 8 or 16 and a tail, split
                             * over the threads) */
                            tb_shape sh = ai == 0   ? S(1, len)
                                          : ai == 1 ? S(2, 3, len)
                                          : ai == 3 ? S(2, 37, len)
                                                    : S(2, len, 19);
                            tb_params p = {0};
                            if (ai)
                                assert_int_equal(
                                    tb_params_set(op, &p, "axis",
                                                  ai == 2 ? 0 : 1, err,
                                                  sizeof err),
                                    0);
                            tb_params_defaults(op, &p);
                            tb_shape os;
                            assert_int_equal(
                                tb_op_infer(op, &sh, 1, &p, &os, err,
                                            sizeof err),
                                0);
                            tb_tensor in, got, base;
                            assert_int_equal(
                                tb_tensor_create(&in, dt, &sh), 0);
                            assert_int_equal(
                                tb_tensor_create(&got, dt, &os), 0);
                            assert_int_equal(
                                tb_tensor_create(&base, dt, &os), 0);
                            const int64_t n = tb_tensor_numel(&in);
                            rng_seed((uint64_t)(li * 64 + pat));
                            for (int64_t k = 0; k < n; k++) {
                                /* few distinct values: ties */
                                double r = rng_uniform(0, 8);
                                tb_tensor_set(
                                    &in, k,
                                    r < 1     ? -0.0
                                    : r < 2   ? 0.0
                                    : r < 2.2 ? INFINITY
                                    : r < 2.4 ? -INFINITY
                                              : (double)(int)(r * 2) - 9);
                            }
                            if (pat == 1 || pat == 5)
                                tb_tensor_set(&in, 0, NAN);
                            if (pat == 2 || pat == 5)
                                tb_tensor_set(&in, n / 2, -NAN);
                            if (pat == 3)
                                tb_tensor_set(&in, n - 1, NAN);
                            if (pat == 4)
                                for (int64_t k = 0; k < n; k++)
                                    tb_tensor_set(&in, k,
                                                  k % 2 ? 0.0 : -0.0);
                            if (pat == 6)
                                for (int64_t k = 0; k < n; k++)
                                    tb_tensor_set(&in, k, -INFINITY);
                            if (pat == 7) /* NaNs sharing a lane */
                                for (int64_t k = 0; k < n;
                                     k += 19 * (len / 2 + 1))
                                    tb_tensor_set(&in, k, k ? -NAN : NAN);
                            if (pat == 8)
                                for (int64_t k = 0; k < n; k++)
                                    tb_tensor_set(&in, k,
                                                  k % 2 ? -0.0 : 0.0);
                            if (pat == 9) /* maxima: zeros of both signs */
                                for (int64_t k = 0; k < n; k++) {
                                    uint64_t r = rng_next() % 3;
                                    tb_tensor_set(&in, k,
                                                  r == 0   ? -1.0
                                                  : r == 1 ? -0.0
                                                           : 0.0);
                                }
                            const char *impl = NULL;
                            tb_kernel_fn fn =
                                B->kernel(ctx, op, dt, &p, &impl).fn;
                            assert_non_null(fn);
                            assert_int_equal(fn(ctx, &in, &got, &p), 0);
                            tb_kernel_fn pf =
                                tb_cpu_krow_c(op->id, dt)->fn;
                            assert_int_equal(pf(NULL, &in, &base, &p), 0);
                            int bad = 0;
                            for (int64_t k = 0; k < tb_tensor_numel(&got);
                                 k++) {
                                const double gk = tb_tensor_get(&got, k);
                                const double wk = tb_tensor_get(&base, k);
                                bool ok = isnan(wk) ? isnan(gk) : gk == wk;
                                if (!ok && bad++ < 3)
                                    print_error(
                                        "%s_%s isa=%s threads=%s len %d "
                                        "pattern %d shape %d impl %s: "
                                        "[%lld] got %a portable %a\n",
                                        op->name, tb_dtype_name(dt), vals[0],
                                        vals[1], len,
                                        pat, ai, impl, (long long)k,
                                        gk, wk);
                            }
                            tb_tensor_destroy(&in);
                            tb_tensor_destroy(&got);
                            tb_tensor_destroy(&base);
                            assert_int_equal(bad, 0);
                        }
            B->destroy(ctx);
        }
}

void test_xs_reduce_special(void **state)
{
    (void)state;
    xs_reduce_special(TB_F32);
}

/* argmax f32 over lanes longer than one block of the SIMD rows'
 * one-pass scan (XS_ARG_BLOCK, 2^16 elements, ops_simd_impl.h), at every
 * isa value and thread count: the maximum tied in a later block (the
 * first wins), a larger one in the short last block, a NaN in a later
 * block after the maximum, zeros of both signs as the maximum in several
 * blocks, every value equal; contiguous (no axis, and axis 1 of 2
 * lanes): the portable row's index exactly. */
void test_xs_argmax_blocks(void **state)
{
    (void)state;
    const int64_t len = 3 * 65536 + 37;
    const tb_op *op = tb_op_get(TB_OP_argmax);
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values && tv < 2; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
            for (int pat = 0; pat < 6; pat++)
                for (int ai = 0; ai < 2; ai++) {
                    tb_shape sh = ai ? S(2, 2, len) : S(1, len);
                    tb_params p = {0};
                    if (ai)
                        assert_int_equal(tb_params_set(op, &p, "axis", 1,
                                                       err, sizeof err),
                                         0);
                    tb_params_defaults(op, &p);
                    tb_shape os;
                    assert_int_equal(
                        tb_op_infer(op, &sh, 1, &p, &os, err, sizeof err), 0);
                    tb_tensor in, got, base;
                    assert_int_equal(tb_tensor_create(&in, TB_F32, &sh), 0);
                    assert_int_equal(tb_tensor_create(&got, TB_F32, &os), 0);
                    assert_int_equal(tb_tensor_create(&base, TB_F32, &os),
                                     0);
                    const int64_t n = tb_tensor_numel(&in);
                    float *x = in.data;
                    rng_seed((uint64_t)(100 + pat));
                    for (int64_t k = 0; k < n; k++)
                        x[k] = (float)rng_uniform(-1, 1);
                    for (int64_t l = 0; l < n; l += len) {
                        float *y = x + l;
                        switch (pat) {
                        case 0: /* tie: blocks 0 and 2 */
                            y[70000 - 65536] = 5.0f;
                            y[2 * 65536 + 11] = 5.0f;
                            break;
                        case 1: /* larger in the short last block */
                            y[1000] = 5.0f;
                            y[3 * 65536 + 20] = 6.0f;
                            break;
                        case 2: /* NaN in a later block */
                            y[10] = 7.0f;
                            y[65536 + 3] = NAN;
                            y[2 * 65536 + 5] = -NAN;
                            break;
                        case 3: /* zeros as the maximum */
                            for (int64_t k = 0; k < len; k++)
                                y[k] = -fabsf(y[k]) - 1.0f;
                            y[65536 + 40] = -0.0f;
                            y[2 * 65536 + 7] = 0.0f;
                            y[5] = -1.0f;
                            break;
                        case 4: /* all equal */
                            for (int64_t k = 0; k < len; k++)
                                y[k] = 2.0f;
                            break;
                        default: /* increasing: every block improves */
                            for (int64_t k = 0; k < len; k++)
                                y[k] = (float)k;
                            break;
                        }
                    }
                    const char *impl = NULL;
                    tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, &p, &impl).fn;
                    assert_non_null(fn);
                    assert_int_equal(fn(ctx, &in, &got, &p), 0);
                    tb_kernel_fn pf = tb_cpu_krow_c(op->id, TB_F32)->fn;
                    assert_int_equal(pf(NULL, &in, &base, &p), 0);
                    int bad = 0;
                    for (int64_t k = 0; k < tb_tensor_numel(&got); k++) {
                        const double gk = tb_tensor_get(&got, k);
                        const double wk = tb_tensor_get(&base, k);
                        if (gk != wk && bad++ < 3)
                            print_error("argmax isa=%s threads=%s pattern "
                                        "%d shape %d impl %s: [%lld] got "
                                        "%.0f portable %.0f\n",
                                        vals[0], vals[1], pat, ai, impl,
                                        (long long)k, gk, wk);
                    }
                    tb_tensor_destroy(&in);
                    tb_tensor_destroy(&got);
                    tb_tensor_destroy(&base);
                    assert_int_equal(bad, 0);
                }
            B->destroy(ctx);
        }
}

/* argmax f64's SIMD rows (f64_simd_impl.h's dx_extreme_lane: running
 * maxima kept every DX_SNAP_MIN or more elements, the scan for the
 * maximum's first index started at the end of the last snap without
 * it), at every isa value, one thread, over lanes of 33 to 5000
 * elements (5000: snaps further apart than DX_SNAP_MIN), contiguous
 * and over axis 1 of 3 lanes: the maximum tied across snaps, tied at
 * elements 143 and 144 (around the snaps' ends at 16 + 128 k), in the
 * lane's tail, in the first two vectors, zeros of both signs as the
 * maximum, every value equal, increasing values, a NaN after the
 * maximum: the portable row's index exactly. */
void test_xs_argmax_snaps_f64(void **state)
{
    (void)state;
    static const int64_t lens[] = {33, 257, 1024, 4099, 5000};
    const tb_op *op = tb_op_get(TB_OP_argmax);
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++) {
        const char *vals[2] = {ax[0].values[iv], ax[1].values[0]};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (int pat = 0; pat < 8; pat++)
                for (int ai = 0; ai < 2; ai++) {
                    const int64_t len = lens[li];
                    tb_shape sh = ai ? S(2, 3, (int)len) : S(1, (int)len);
                    tb_params p = {0};
                    if (ai)
                        assert_int_equal(tb_params_set(op, &p, "axis", 1,
                                                       err, sizeof err),
                                         0);
                    tb_params_defaults(op, &p);
                    tb_shape os;
                    assert_int_equal(
                        tb_op_infer(op, &sh, 1, &p, &os, err, sizeof err), 0);
                    tb_tensor in, got, base;
                    assert_int_equal(tb_tensor_create(&in, TB_F64, &sh), 0);
                    assert_int_equal(tb_tensor_create(&got, TB_F64, &os), 0);
                    assert_int_equal(tb_tensor_create(&base, TB_F64, &os),
                                     0);
                    const int64_t n = tb_tensor_numel(&in);
                    double *x = in.data;
                    rng_seed((uint64_t)(200 + pat));
                    for (int64_t k = 0; k < n; k++)
                        x[k] = rng_uniform(-1, 1);
                    for (int64_t l = 0; l < n; l += len) {
                        double *y = x + l;
#define XS_AT(i, v)                                                       \
    do {                                                                  \
        if ((i) < len)                                                    \
            y[i] = (v);                                                   \
    } while (0)
                        switch (pat) {
                        case 0: /* tie across snaps */
                            XS_AT(len / 3, 5.0);
                            XS_AT(2 * len / 3, 5.0);
                            break;
                        case 1: /* tie around a snap's end */
                            XS_AT(144, 5.0);
                            XS_AT(143, 5.0);
                            break;
                        case 2: /* larger in the tail */
                            XS_AT(100, 5.0);
                            y[len - 1] = 6.0;
                            break;
                        case 3: /* in the first two vectors, tied later */
                            y[3] = 5.0;
                            XS_AT(len / 2, 5.0);
                            break;
                        case 4: /* zeros of both signs as the maximum */
                            for (int64_t k = 0; k < len; k++)
                                y[k] = -fabs(y[k]) - 1.0;
                            XS_AT(len / 2, 0.0);
                            XS_AT(len / 4 + 1, -0.0);
                            break;
                        case 5: /* all equal */
                            for (int64_t k = 0; k < len; k++)
                                y[k] = 2.0;
                            break;
                        case 6: /* increasing */
                            for (int64_t k = 0; k < len; k++)
                                y[k] = (double)k;
                            break;
                        default: /* a NaN after the maximum */
                            y[10] = 7.0;
                            XS_AT(len / 2 + 3, NAN);
                            break;
                        }
#undef XS_AT
                    }
                    const char *impl = NULL;
                    tb_kernel_fn fn = B->kernel(ctx, op, TB_F64, &p, &impl).fn;
                    assert_non_null(fn);
                    assert_int_equal(fn(ctx, &in, &got, &p), 0);
                    tb_kernel_fn pf = tb_cpu_krow_c(op->id, TB_F64)->fn;
                    assert_int_equal(pf(NULL, &in, &base, &p), 0);
                    int bad = 0;
                    for (int64_t k = 0; k < tb_tensor_numel(&got); k++) {
                        const double gk = tb_tensor_get(&got, k);
                        const double wk = tb_tensor_get(&base, k);
                        if (gk != wk && bad++ < 3)
                            print_error("argmax f64 isa=%s len %lld pattern "
                                        "%d shape %d impl %s: [%lld] got "
                                        "%.0f portable %.0f\n",
                                        vals[0], (long long)len, pat, ai,
                                        impl, (long long)k, gk, wk);
                    }
                    tb_tensor_destroy(&in);
                    tb_tensor_destroy(&got);
                    tb_tensor_destroy(&base);
                    assert_int_equal(bad, 0);
                }
        B->destroy(ctx);
    }
}

/* The same for f64 (f64_simd_impl.h's rows). */
void test_xs_reduce_special_f64(void **state)
{
    (void)state;
    xs_reduce_special(TB_F64);
}

/* ========================================================================= */
/* 6. The SIMD rows of the element-wise backward ops: accuracy, agreement    */
/* ========================================================================= */

/* The bounds of bwd_simd_impl.h's rows with g = 1 (the derivative
 * itself), in ulp of the result for sigmoid and tanh (normal results;
 * below FLT_MIN the error must stay under FLT_MIN) and for gelu in ulp of
 * |Phi(x)| + |x phi(x)| (its result crosses 0 at x ~ -0.75, where a
 * relative bound means nothing).  Measured maxima are printed: with
 * --vmath-stride 97 5.53, 5.32 ulp, the default stride 4.88, 4.93; with
 * --vmath-exhaustive (every float) 5.53, 5.53.  gelu (table polynomials
 * for |x| <= 3, vmath_simd.h's vs_gelu_dpc; the exp form beyond): the
 * default stride 2.107 (x = -3.22), --vmath-exhaustive 2.431
 * (x = -3.224; |x| <= 3 alone: 1.262 at -2.978).
 * AVX2 and AVX-512 must agree bit for bit (vmath's exp does), but for
 * gelu: its table polynomials are 16 pieces of degree 5 at AVX-512
 * (vs_gelu16_dpc), 8 of degree 6 at AVX2, each within the bound. */
#define BW_SIGMOID_ULP 8.0
#define BW_TANH_ULP 8.0
#define BW_GELU_ULP 4.0

static double ulp_of(double a)
{
    int e;
    a = fabs(a);
    if (a < 0x1p-126)
        return 0x1p-149;
    frexp(a, &e);
    return ldexp(1.0, e - 24);
}

/* Derivative of op (sigmoid, tanh or gelu _backward) at x in double;
 * *scale: the magnitude its error is measured against. */
static double bw_ref(tb_op_id id, float xf, double *scale)
{
    const double x = xf, a = fabs(x);
    double r;
    if (isnan(x)) {
        r = NAN;
    } else if (id == TB_OP_sigmoid_backward) {
        double e = exp(-a);
        r = e / ((1 + e) * (1 + e));
    } else if (id == TB_OP_tanh_backward) {
        double e = exp(-2 * a);
        r = 4 * e / ((1 + e) * (1 + e));
    } else if (isinf(x)) {
        r = x > 0 ? 1 : 0;
    } else {
        double cdf = 0.5 * erfc(-x / sqrt(2.0));
        double xpdf = x * exp(-0.5 * x * x) / sqrt(2 * M_PI);
        *scale = fabs(cdf) + fabs(xpdf);
        return cdf + xpdf;
    }
    *scale = fabs(r);
    return r;
}

void test_bw_act_sweep(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    static const tb_op_id ids[3] = {TB_OP_sigmoid_backward,
                                    TB_OP_tanh_backward,
                                    TB_OP_gelu_backward};
    static const double bound[3] = {BW_SIGMOID_ULP, BW_TANH_ULP,
                                    BW_GELU_ULP};
    tb_shape sh = S(1, VM_CHUNK);
    tb_tensor in[2], out[TB_ISA_COUNT];
    assert_int_equal(tb_tensor_create(&in[0], TB_F32, &sh), 0);
    assert_int_equal(tb_tensor_create(&in[1], TB_F32, &sh), 0);
    for (int i = 0; i < VM_CHUNK; i++)
        ((float *)in[0].data)[i] = 1.0f;
    for (int oi = 0; oi < 3; oi++) {
        const tb_op *op = tb_op_get(ids[oi]);
        /* the SIMD levels: every isa value but scalar and auto */
        void *ctx[TB_ISA_COUNT];
        tb_kernel_fn fn[TB_ISA_COUNT];
        const char *name[TB_ISA_COUNT], *impl[TB_ISA_COUNT];
        int nl = 0;
        for (int iv = 0; iv < ax[0].n_values && nl < TB_ISA_COUNT; iv++) {
            const char *v = ax[0].values[iv];
            if (strcmp(v, "scalar") == 0 || strcmp(v, "auto") == 0)
                continue;
            const char *vals[2] = {v, ax[1].values[0]};
            char err[256];
            assert_int_equal(B->create(B, vals, &ctx[nl], err, sizeof err), 0);
            fn[nl] = B->kernel(ctx[nl], op, TB_F32, NULL, &impl[nl]).fn;
            assert_non_null(fn[nl]);
            assert_null(strstr(impl[nl], "_c")); /* a SIMD row */
            name[nl] = v;
            assert_int_equal(tb_tensor_create(&out[nl], TB_F32, &sh), 0);
            nl++;
        }
        rng_seed(3000 + (uint64_t)oi);
        uint64_t pos = 0, bad = 0;
        double worst[TB_ISA_COUNT] = {0};
        float wx[TB_ISA_COUNT] = {0};
        int k;
        while ((k = vm_inputs(&pos, in[1].data)) > 0) {
            for (int i = k; i < VM_CHUNK; i++)
                ((float *)in[1].data)[i] = 0;
            for (int l = 0; l < nl; l++)
                assert_int_equal(fn[l](ctx[l], in, &out[l], NULL), 0);
            const float *x = in[1].data;
            for (int l = 0; l < nl; l++) {
                const float *y = out[l].data, *y0 = out[0].data;
                for (int i = 0; i < k; i++) {
                    double sc = 0, want = bw_ref(ids[oi], x[i], &sc);
                    bool ok;
                    double e = 0;
                    if (isnan(want)) {
                        ok = isnan(y[i]);
                    } else if (sc < FLT_MIN) {
                        ok = fabs(y[i] - want) <= FLT_MIN;
                    } else {
                        e = fabs(y[i] - want) / ulp_of(sc);
                        ok = e <= bound[oi];
                    }
                    /* the levels agree bit for bit (not gelu's) */
                    ok = ok && (ids[oi] == TB_OP_gelu_backward ||
                                memcmp(&y[i], &y0[i], sizeof(float)) == 0);
                    if (e > worst[l]) {
                        worst[l] = e;
                        wx[l] = x[i];
                    }
                    if (!ok && bad++ < 3)
                        print_error("%s isa=%s: x=%a got %a (%s: %a) want "
                                    "%a\n",
                                    op->name, name[l], (double)x[i],
                                    (double)y[i], name[0], (double)y0[i],
                                    want);
                }
            }
        }
        for (int l = 0; l < nl; l++) {
            printf("# %s %-6s (%s): max %.3f ulp at x=%a, bound %.1f\n",
                   op->name, name[l], impl[l], worst[l], (double)wx[l],
                   bound[oi]);
            tb_tensor_destroy(&out[l]);
            B->destroy(ctx[l]);
        }
        assert_int_equal(bad, 0);
    }
    tb_tensor_destroy(&in[0]);
    tb_tensor_destroy(&in[1]);
}

/* ---- max_pool2d_backward's SIMD rows: ties, NaN, signed zeros ---- */

/* max_pool2d_backward f32 and f64 with 2x2 windows (bwd_simd_impl.h's
 * rows) on x drawn from {-inf, -1, -0, +0, 1, +inf, NaN} (windows of
 * equal maxima, NaN winners, +-0 ties; every other shape without NaN) and g with -0 among uniform
 * values, at every SIMD level and thread count: bit for bit the portable
 * row's output (the level scalar), which test_backward checks against
 * the reference; misaligned canary-guarded operands. */
void test_bw_pool_special(void **state)
{
    (void)state;
    static const double xs[] = {-INFINITY, -1.0, -0.0, 0.0,
                                1.0,       INFINITY, NAN};
    static const int sh[][4] = {{2, 3, 9, 37}, {1, 2, 6, 64},
                                {1, 1, 4, 34}, {3, 1, 5, 5},
                                {1, 1, 2, 6},  {1, 2, 3, 19},
                                /* rows of 12 and 6 windows over row
                                 * pairs and planes in one sequence
                                 * (avx512's bw_mp2_short) */
                                {2, 3, 8, 24}, {3, 2, 4, 12}};
    const tb_op *op = tb_op_get(TB_OP_max_pool2d_backward);
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    char err[256];
    tb_params p = {0};
    assert_int_equal(tb_params_set(op, &p, "kernel", 2, err, sizeof err), 0);
    tb_params_defaults(op, &p);
    rng_seed(4100);
    for (int dt = 0; dt < 2; dt++)
    for (size_t q = 0; q < sizeof sh / sizeof sh[0]; q++) {
        const tb_dtype t = dt ? TB_F64 : TB_F32;
        const size_t es = tb_dtype_size(t);
        tb_shape is[2] = {S(4, sh[q][0], sh[q][1], sh[q][2] / 2,
                            sh[q][3] / 2),
                          S(4, sh[q][0], sh[q][1], sh[q][2], sh[q][3])};
        gbuf gi[2], gr;
        tb_tensor in[2], ref;
        for (int i = 0; i < 2; i++) {
            tb_tensor_init(&in[i], t, &is[i]);
            in[i].data = gb_new(&gi[i], tb_tensor_nbytes(&in[i]), es);
        }
        for (int64_t k = 0; k < tb_tensor_numel(&in[0]); k++) {
            const double v =
                (rng_next() & 7) == 0 ? -0.0 : rng_uniform(-2, 2);
            if (dt)
                ((double *)in[0].data)[k] = v;
            else
                ((float *)in[0].data)[k] = (float)v;
        }
        for (int64_t k = 0; k < tb_tensor_numel(&in[1]); k++) {
            /* the odd shapes without NaN: the rows' NaN-free path
             * (ties of equal maxima and of -0 and +0) */
            const double v = xs[rng_next() % (q % 2 ? 6 : 7)];
            if (dt)
                ((double *)in[1].data)[k] = v;
            else
                ((float *)in[1].data)[k] = (float)v;
        }
        tb_tensor_init(&ref, t, &is[1]);
        ref.data = gb_new(&gr, tb_tensor_nbytes(&ref), es);
        const char *sv[2] = {"scalar", "1"};
        void *sctx = NULL;
        assert_int_equal(B->create(B, sv, &sctx, err, sizeof err), 0);
        const char *impl = NULL;
        tb_kernel_fn fn = B->kernel(sctx, op, t, &p, &impl).fn;
        assert_non_null(fn);
        assert_non_null(strstr(impl, "_c"));
        assert_int_equal(fn(sctx, in, &ref, &p), 0);
        B->destroy(sctx);
        for (int iv = 0; iv < ax[0].n_values; iv++)
            for (int tv = 0; tv < ax[1].n_values; tv++) {
                const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
                if (strcmp(vals[0], "scalar") == 0)
                    continue;
                void *ctx = NULL;
                assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
                fn = B->kernel(ctx, op, t, &p, &impl).fn;
                assert_non_null(fn);
                assert_null(strstr(impl, "_c")); /* a SIMD row */
                gbuf go;
                tb_tensor out;
                tb_tensor_init(&out, t, &is[1]);
                out.data = gb_new(&go, tb_tensor_nbytes(&out), es);
                assert_int_equal(fn(ctx, in, &out, &p), 0);
                int64_t bad = 0;
                for (int64_t k = 0; k < tb_tensor_numel(&out); k++)
                    if (memcmp((char *)out.data + (size_t)k * es,
                               (char *)ref.data + (size_t)k * es, es) != 0 &&
                        bad++ < 3)
                        print_error("%s isa=%s threads=%s shape %zu [%lld]: "
                                    "got %a want %a\n",
                                    impl, vals[0], vals[1], q, (long long)k,
                                    tb_tensor_get(&out, k),
                                    tb_tensor_get(&ref, k));
                const bool intact = gb_intact(&go);
                gb_free(&go);
                B->destroy(ctx);
                assert_true(intact);
                assert_int_equal(bad, 0);
            }
        const bool intact =
            gb_intact(&gi[0]) && gb_intact(&gi[1]) && gb_intact(&gr);
        gb_free(&gi[0]);
        gb_free(&gi[1]);
        gb_free(&gr);
        assert_true(intact);
    }
}


/* The ops written once (ew_defs.h) in f64 at every isa value, 1 thread:
 * the row the ladder gives (f64_simd_impl.h's at a SIMD level) against
 * the portable row bit for bit (NaN for NaN) on special values (zeros,
 * infinities, NaN, the kinks at -3 and 3, their neighbours, subnormals,
 * DBL_MAX) and 1001 random values in [-8, 8] (an odd tail). */
#define XS_EW_ID(NAME, W, EXPR, ...) TB_OP_##NAME,
void test_xs_ew_f64(void **state)
{
    (void)state;
    static const tb_op_id ids[] = {TB_CPU_EW_OPS(XS_EW_ID, ~)};
    static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 3.0,
                                -3.0, 0x1.8000000000001p+1,
                                -0x1.7ffffffffffffp+1, 6.0, -6.0, 1e-310,
                                -1e-310, DBL_MAX, -DBL_MAX, 0.5};
    enum { NS = sizeof sp / sizeof sp[0], N = NS + 1001 };
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++) {
        const char *vals[2] = {ax[0].values[iv], ax[1].values[0]};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
        for (size_t oi = 0; oi < sizeof ids / sizeof ids[0]; oi++) {
            const tb_op *op = tb_op_get(ids[oi]);
            tb_params p = {0};
            tb_params_defaults(op, &p);
            tb_shape sh = S(1, N);
            tb_tensor in, got, base;
            assert_int_equal(tb_tensor_create(&in, TB_F64, &sh), 0);
            assert_int_equal(tb_tensor_create(&got, TB_F64, &sh), 0);
            assert_int_equal(tb_tensor_create(&base, TB_F64, &sh), 0);
            double *x = in.data;
            rng_seed(0xe64 + oi);
            for (int64_t k = 0; k < N; k++)
                x[k] = k < NS ? sp[k] : rng_uniform(-8, 8);
            const char *impl = NULL;
            tb_kernel_fn fn = B->kernel(ctx, op, TB_F64, &p, &impl).fn;
            assert_non_null(fn);
            assert_int_equal(fn(ctx, &in, &got, &p), 0);
            tb_kernel_fn pf = tb_cpu_krow_c(op->id, TB_F64)->fn;
            assert_non_null(pf);
            assert_int_equal(pf(NULL, &in, &base, &p), 0);
            const double *g = got.data, *w = base.data;
            int bad = 0;
            for (int64_t k = 0; k < N; k++) {
                bool ok = isnan(g[k]) || isnan(w[k])
                              ? isnan(g[k]) && isnan(w[k])
                              : memcmp(&g[k], &w[k], sizeof g[k]) == 0;
                if (!ok && bad++ < 3)
                    print_error("%s f64 isa=%s impl %s: [%lld] x=%a got "
                                "%a portable %a\n",
                                op->name, vals[0], impl, (long long)k, x[k],
                                g[k], w[k]);
            }
            if (iv == ax[0].n_values - 1)
                print_message("# %s f64: %s bit for bit the portable row\n",
                              op->name, impl);
            tb_tensor_destroy(&in);
            tb_tensor_destroy(&got);
            tb_tensor_destroy(&base);
            assert_int_equal(bad, 0);
        }
        B->destroy(ctx);
    }
}
#undef XS_EW_ID

/* neg, abs, sqrt, rsqrt, leaky_relu, the scalar forms, maximum and
 * minimum f64 (f64_simd_impl.h) at every isa value, 1 thread, against
 * the portable row bit for bit (NaN for NaN): every special (all pairs
 * for the binary ops) then 1001 random values in [-8, 8] (an odd tail);
 * the binary ops also with b one broadcast value (each special). */
static const double xs_spec64[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, DBL_MIN, -DBL_MIN,
    0x1p-1074, -0x1p-1074, 0x1.8p-1030, DBL_MAX, -DBL_MAX, 1.0, -1.0,
    0x1.fffffffffffffp-1, 0x1.0000000000001p+0, 2.0, 3.0, -3.0, 0.1,
    1e-300, -1e300, 0x1.fffffffffffffp+1023, 0x1p-1022, 4.0, 0.25,
};
#define XS_NSPEC64 ((int)(sizeof xs_spec64 / sizeof xs_spec64[0]))

static const xs_case xs_cases64[] = {
    {TB_OP_neg, {NULL, NULL}, {0, 0}},
    {TB_OP_abs, {NULL, NULL}, {0, 0}},
    {TB_OP_sqrt, {NULL, NULL}, {0, 0}},
    {TB_OP_rsqrt, {NULL, NULL}, {0, 0}},
    {TB_OP_leaky_relu, {NULL, NULL}, {0, 0}},
    {TB_OP_leaky_relu, {"alpha", NULL}, {-2, 0}},
    {TB_OP_add_scalar, {"scalar", NULL}, {0.1, 0}},
    {TB_OP_sub_scalar, {"scalar", NULL}, {-3.5, 0}},
    {TB_OP_mul_scalar, {"scalar", NULL}, {0.3, 0}},
    {TB_OP_mul_scalar, {"scalar", NULL}, {-1e30, 0}},
    {TB_OP_div_scalar, {"scalar", NULL}, {3, 0}},
    {TB_OP_div_scalar, {"scalar", NULL}, {1e-30, 0}},
    /* dx_divk's mode 2 (|1 - k RN(1/k)| > 2^-54) and beyond its |k| */
    {TB_OP_div_scalar, {"scalar", NULL}, {12345.678, 0}},
    {TB_OP_div_scalar, {"scalar", NULL}, {0x1p60, 0}},
    {TB_OP_maximum, {NULL, NULL}, {0, 0}},
    {TB_OP_minimum, {NULL, NULL}, {0, 0}},
};

static bool xs_same_bits64(double got, double want)
{
    if (isnan(got) || isnan(want))
        return isnan(got) && isnan(want);
    return memcmp(&got, &want, sizeof got) == 0;
}

/* One case at one instance: n elements; a binary op's b of n too, or
 * (bs >= 0) the one value xs_spec64[bs] broadcast; `more` random
 * elements after the 1001. */
static void xs_special64_one(void *ctx, const char *isa, size_t ci, int bs,
                             int64_t more)
{
    const int64_t nb = bs >= 0 ? 1 : 2;
    const xs_case *xc = &xs_cases64[ci];
    const tb_op *op = tb_op_get(xc->id);
    tb_params p = {0};
    char err[256];
    for (int i = 0; i < 2; i++)
        if (xc->pn[i])
            assert_int_equal(
                tb_params_set(op, &p, xc->pn[i], xc->pv[i], err, sizeof err),
                0);
    tb_params_defaults(op, &p);
    const bool bin = op->n_in == 2;
    const int64_t n =
        (bin && nb > 1 ? XS_NSPEC64 * XS_NSPEC64 + 1001 : XS_NSPEC64 + 1001) +
        more;
    tb_shape sh = S(1, (int)n), shb = S(1, (int)(bs >= 0 ? 1 : n));
    tb_tensor in[2], got, base;
    assert_int_equal(tb_tensor_create(&in[0], TB_F64, &sh), 0);
    if (bin)
        assert_int_equal(tb_tensor_create(&in[1], TB_F64, &shb), 0);
    assert_int_equal(tb_tensor_create(&got, TB_F64, &sh), 0);
    assert_int_equal(tb_tensor_create(&base, TB_F64, &sh), 0);
    rng_seed(0x64 + ci);
    double *x = in[0].data;
    for (int64_t k = 0; k < n; k++) {
        if (k >= n - 1001 - more)
            x[k] = rng_uniform(-8, 8);
        else
            x[k] = xs_spec64[bin && nb > 1 ? k / XS_NSPEC64 : k];
        if (bin && nb > 1)
            ((double *)in[1].data)[k] =
                k >= n - 1001 - more ? rng_uniform(-8, 8)
                                     : xs_spec64[k % XS_NSPEC64];
    }
    if (bin && nb == 1)
        ((double *)in[1].data)[0] = xs_spec64[bs];
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, TB_F64, &p, &impl).fn;
    assert_non_null(fn);
    assert_int_equal(fn(ctx, in, &got, &p), 0);
    tb_kernel_fn pf = tb_cpu_krow_c(op->id, TB_F64)->fn;
    assert_non_null(pf);
    assert_int_equal(pf(NULL, in, &base, &p), 0);
    const double *g = got.data, *w = base.data;
    int bad = 0;
    for (int64_t k = 0; k < n; k++)
        if (!xs_same_bits64(g[k], w[k]) && bad++ < 3)
            print_error("%s f64 case %zu isa=%s impl %s: [%lld] x=%a got %a "
                        "portable %a\n",
                        op->name, ci, isa, impl, (long long)k, x[k], g[k],
                        w[k]);
    if (strcmp(isa, "auto") != 0 && nb != 1)
        print_message("# %s f64 isa=%s: %s bit for bit the portable row\n",
                      op->name, isa, impl);
    for (int i = 0; i < op->n_in; i++)
        tb_tensor_destroy(&in[i]);
    tb_tensor_destroy(&got);
    tb_tensor_destroy(&base);
    assert_int_equal(bad, 0);
}

/* maximum/minimum f64 with one operand a row broadcast over the
 * other's 130 x C (1 MiB: past the 512 KiB from which AMD CPUs take the
 * rows' 256-bit loop; C 1028 leaves a tail, 1024 none: the last row's
 * end is the buffer's, as ASan checks), the row on either side, the
 * specials in the row and in the matrix's first rows; bit for bit the
 * portable row. */
static void xs_rows64_one(void *ctx, const char *isa, tb_op_id id, int a_row,
                          int C)
{
    const tb_op *op = tb_op_get(id);
    const int R = 130;
    tb_shape full = S(2, R, C), row = S(1, C);
    tb_tensor in[2], got, base;
    assert_int_equal(tb_tensor_create(&in[a_row ? 1 : 0], TB_F64, &full), 0);
    assert_int_equal(tb_tensor_create(&in[a_row ? 0 : 1], TB_F64, &row), 0);
    assert_int_equal(tb_tensor_create(&got, TB_F64, &full), 0);
    assert_int_equal(tb_tensor_create(&base, TB_F64, &full), 0);
    rng_seed(0x65 + (uint64_t)id * 2 + (uint64_t)a_row + (uint64_t)C);
    double *m = in[a_row ? 1 : 0].data, *r = in[a_row ? 0 : 1].data;
    for (int64_t k = 0; k < (int64_t)R * C; k++)
        m[k] = k < XS_NSPEC64 * XS_NSPEC64 ? xs_spec64[k / XS_NSPEC64]
                                           : rng_uniform(-8, 8);
    for (int k = 0; k < C; k++)
        r[k] = k < XS_NSPEC64 * XS_NSPEC64 ? xs_spec64[k % XS_NSPEC64]
                                           : rng_uniform(-8, 8);
    tb_params p = {0};
    tb_params_defaults(op, &p);
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, TB_F64, &p, &impl).fn;
    assert_non_null(fn);
    assert_int_equal(fn(ctx, in, &got, &p), 0);
    assert_int_equal(tb_cpu_krow_c(id, TB_F64)->fn(NULL, in, &base, &p), 0);
    const double *g = got.data, *w = base.data;
    int bad = 0;
    for (int64_t k = 0; k < (int64_t)R * C; k++)
        if (!xs_same_bits64(g[k], w[k]) && bad++ < 3)
            print_error("%s f64 rows (row %s) isa=%s impl %s: [%lld] got %a "
                        "portable %a\n",
                        op->name, a_row ? "a" : "b", isa, impl, (long long)k,
                        g[k], w[k]);
    for (int i = 0; i < 2; i++)
        tb_tensor_destroy(&in[i]);
    tb_tensor_destroy(&got);
    tb_tensor_destroy(&base);
    assert_int_equal(bad, 0);
}

void test_xs_special_f64(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++) {
        const char *vals[2] = {ax[0].values[iv], ax[1].values[0]};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
        for (size_t ci = 0; ci < sizeof xs_cases64 / sizeof xs_cases64[0];
             ci++) {
            xs_special64_one(ctx, vals[0], ci, -1, 0);
            const bool bin = tb_op_get(xs_cases64[ci].id)->n_in == 2;
            if (bin)
                for (int s = 0; s < XS_NSPEC64; s++)
                    xs_special64_one(ctx, vals[0], ci, s, 0);
            /* past the 512 KiB from which AMD CPUs run the simple ops'
             * 256-bit loops (isa.h), as either vendor */
            for (int amd = 0; amd <= 1; amd++) {
                tb_cpu_isa_amd_set(amd);
                xs_special64_one(ctx, vals[0], ci, -1, 131072 + 7);
                for (int a_row = 0; bin && a_row <= 1; a_row++)
                    for (int C = 1024; C <= 1028; C += 4)
                        xs_rows64_one(ctx, vals[0], xs_cases64[ci].id,
                                      a_row, C);
            }
            tb_cpu_isa_amd_set(-1);
        }
        B->destroy(ctx);
    }
}

/* The f64 fills (fill_f64_simd.h) at every isa value: sum_backward and
 * mean_backward against g[o, i] * scale computed here (1, or 1 / len
 * rounded once: the portable row's values), ones and full against their
 * constant, all bit for bit (memcmp: -0, infinities, NaN's payload);
 * lanes of 1 to 33 (whole vectors and tails), inner lanes narrower
 * than a vector, no axis. */
static void fill_case(void *ctx, const char *lv, tb_op_id id,
                      const tb_shape *gs, const tb_shape *xs, int axis)
{
    const tb_op *op = tb_op_get(id);
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, TB_F64, NULL, &impl).fn;
    assert_non_null(fn);
    const bool bw = op->n_in == 2;
    tb_params p = {0};
    char err[256];
    if (axis >= 0)
        assert_int_equal(tb_params_set(op, &p, "axis", axis, err,
                                       sizeof err), 0);
    if (id == TB_OP_full)
        assert_int_equal(tb_params_set(op, &p, "value", -0.0, err,
                                       sizeof err), 0);
    tb_params_defaults(op, &p);
    tb_tensor in[2], out;
    const tb_shape *os = bw ? xs : gs;
    assert_int_equal(tb_tensor_create(&out, TB_F64, os), 0);
    const int64_t n = tb_tensor_numel(&out);
    double *want = malloc((size_t)n * sizeof *want);
    assert_non_null(want);
    if (bw) {
        assert_int_equal(tb_tensor_create(&in[0], TB_F64, gs), 0);
        assert_int_equal(tb_tensor_create(&in[1], TB_F64, xs), 0);
        double *g = in[0].data;
        const int64_t ng = tb_tensor_numel(&in[0]);
        for (int64_t k = 0; k < ng; k++) {
            const double v[6] = {-0.0, INFINITY, NAN, 0x1p-1070, -3.0,
                                 rng_uniform(-5, 5)};
            g[k] = v[k % 6 == 5 || (rng_next() & 3) ? 5 : k % 6];
        }
        for (int64_t k = 0; k < n; k++)
            ((double *)in[1].data)[k] = 1.0;
        int64_t outer = 1, len = n, inner = 1;
        if (axis >= 0) {
            len = xs->dim[axis];
            for (int d = 0; d < axis; d++)
                outer *= xs->dim[d];
            inner = n / (outer * len);
        }
        const double sc = id == TB_OP_mean_backward ? 1.0 / (double)len
                                                     : 1.0;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t k = 0; k < len; k++)
                for (int64_t i = 0; i < inner; i++)
                    want[(o * len + k) * inner + i] = g[o * inner + i] * sc;
    } else {
        for (int64_t k = 0; k < n; k++)
            want[k] = id == TB_OP_ones ? 1.0 : -0.0;
    }
    memset(out.data, 0x5a, (size_t)n * sizeof *want);
    assert_int_equal(fn(ctx, bw ? in : NULL, &out, &p), 0);
    if (memcmp(out.data, want, (size_t)n * sizeof *want) != 0)
        print_error("%s (%s at %s) numel %lld axis %d: not the portable "
                    "row's bits\n", op->name, impl, lv, (long long)n, axis);
    assert_memory_equal(out.data, want, (size_t)n * sizeof *want);
    free(want);
    tb_tensor_destroy(&out);
    if (bw) {
        tb_tensor_destroy(&in[0]);
        tb_tensor_destroy(&in[1]);
    }
}

void test_f64_fill_exact(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    rng_seed(4242);
    for (int iv = 0; iv < ax[0].n_values; iv++) {
        const char *vals[2] = {ax[0].values[iv], ax[1].values[0]};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
        for (int b = 0; b < 2; b++) {
            const tb_op_id id = b ? TB_OP_mean_backward : TB_OP_sum_backward;
            for (int len = 1; len <= 33; len++) {
                tb_shape g = S(1, 5), x = S(2, 5, len);
                fill_case(ctx, vals[0], id, &g, &x, 1);
                tb_shape g0 = S(1, len), x0 = S(2, 3, len);
                fill_case(ctx, vals[0], id, &g0, &x0, 0);
            }
            tb_shape g = S(2, 4, 3), x = S(3, 4, 17, 3);
            fill_case(ctx, vals[0], id, &g, &x, 1);
            tb_shape g1 = S(1, 1), x1 = S(2, 7, 9);
            fill_case(ctx, vals[0], id, &g1, &x1, -1);
        }
        for (int b = 0; b < 2; b++)
            for (int n = 1; n <= 70; n += 3) {
                tb_shape s = S(1, n);
                fill_case(ctx, vals[0], b ? TB_OP_full : TB_OP_ones, &s, &s,
                          -1);
            }
        B->destroy(ctx);
    }
}

/* sum_backward and mean_backward f32 (bwd_simd_impl.h's bw_bcast32) at
 * every isa value against g[o, i] * scale in float computed here (1, or
 * (float)(1 / len): the portable row's values), bit for bit; lanes of 1
 * to 33 and 63 to 66, 130 (the 4-vector steps, single vectors, the
 * masked tail), inner lanes narrower and wider than a vector, no axis. */
static void bcast32_case(void *ctx, const char *lv, tb_op_id id,
                         const tb_shape *gs, const tb_shape *xs, int axis)
{
    const tb_op *op = tb_op_get(id);
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, NULL, &impl).fn;
    assert_non_null(fn);
    tb_params p = {0};
    char err[256];
    if (axis >= 0)
        assert_int_equal(tb_params_set(op, &p, "axis", axis, err,
                                       sizeof err), 0);
    tb_params_defaults(op, &p);
    tb_tensor in[2], out;
    assert_int_equal(tb_tensor_create(&out, TB_F32, xs), 0);
    assert_int_equal(tb_tensor_create(&in[0], TB_F32, gs), 0);
    assert_int_equal(tb_tensor_create(&in[1], TB_F32, xs), 0);
    const int64_t n = tb_tensor_numel(&out);
    float *want = malloc((size_t)n * sizeof *want);
    assert_non_null(want);
    float *g = in[0].data;
    const int64_t ng = tb_tensor_numel(&in[0]);
    for (int64_t k = 0; k < ng; k++) {
        const float v[6] = {-0.0f, INFINITY, NAN, 0x1p-140f, -3.0f,
                            (float)rng_uniform(-5, 5)};
        g[k] = v[k % 6 == 5 || (rng_next() & 3) ? 5 : k % 6];
    }
    for (int64_t k = 0; k < n; k++)
        ((float *)in[1].data)[k] = 1.0f;
    int64_t outer = 1, len = n, inner = 1;
    if (axis >= 0) {
        len = xs->dim[axis];
        for (int d = 0; d < axis; d++)
            outer *= xs->dim[d];
        inner = n / (outer * len);
    }
    const float sc = id == TB_OP_mean_backward ? (float)(1.0 / (double)len)
                                                : 1.0f;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < len; k++)
            for (int64_t i = 0; i < inner; i++)
                want[(o * len + k) * inner + i] = g[o * inner + i] * sc;
    memset(out.data, 0x5a, (size_t)n * sizeof *want);
    assert_int_equal(fn(ctx, in, &out, &p), 0);
    if (memcmp(out.data, want, (size_t)n * sizeof *want) != 0)
        print_error("%s f32 (%s at %s) numel %lld axis %d: not the portable "
                    "row's bits\n", op->name, impl, lv, (long long)n, axis);
    assert_memory_equal(out.data, want, (size_t)n * sizeof *want);
    free(want);
    tb_tensor_destroy(&out);
    tb_tensor_destroy(&in[0]);
    tb_tensor_destroy(&in[1]);
}

void test_f32_bcast_exact(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    rng_seed(4343);
    static const int lens[] = {1,  2,  3,  5,  8,  15, 16, 17, 31, 32,
                               33, 63, 64, 65, 66, 130};
    for (int iv = 0; iv < ax[0].n_values; iv++) {
        const char *vals[2] = {ax[0].values[iv], ax[1].values[0]};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
        for (int b = 0; b < 2; b++) {
            const tb_op_id id = b ? TB_OP_mean_backward : TB_OP_sum_backward;
            for (size_t t = 0; t < sizeof lens / sizeof *lens; t++) {
                const int len = lens[t];
                tb_shape g = S(1, 5), x = S(2, 5, len);
                bcast32_case(ctx, vals[0], id, &g, &x, 1);
                tb_shape g0 = S(1, len), x0 = S(2, 3, len);
                bcast32_case(ctx, vals[0], id, &g0, &x0, 0);
            }
            tb_shape g = S(2, 4, 3), x = S(3, 4, 17, 3);
            bcast32_case(ctx, vals[0], id, &g, &x, 1);
            tb_shape g1 = S(1, 1), x1 = S(2, 7, 9);
            bcast32_case(ctx, vals[0], id, &g1, &x1, -1);
        }
        B->destroy(ctx);
    }
}

/* ---- add/sub/mul/div_backward's SIMD rows (bwd_bin_simd.h) ---- */

/* The rows of add, sub, mul and div _backward f32 and f64 at every SIMD
 * level and thread count against the C row (the level scalar), on
 * each of their driver's cases: equal shapes (flat), a row vector b,
 * a row vector a (div: backward.c's loops), a row vector narrower than
 * a vector and g's last dim 1 (backward.c's loops), a general
 * broadcast; g with -0 among uniform values (f64: a few near 2^-950),
 * b away from 0.  Bit for
 * bit (signed zeros included), but div's db of a row vector b: its
 * terms -(g a) (1 / (b b)) are within 3 rounding errors of the C row's
 * -(g a) / (b b), summed in the same order, so |got - want| <= 2 (R +
 * 3) u sum |g a / (b b)| (u the dtype's unit roundoff, R the rows). */
void test_bw_binary_rows(void **state)
{
    (void)state;
    /* g, a, b shapes (rank, dims) */
    static const int sh[][3][4] = {
        {{1, 37}, {1, 37}, {1, 37}},                 /* flat */
        {{2, 5, 67}, {2, 5, 67}, {2, 5, 67}},
        {{2, 33, 70}, {2, 33, 70}, {1, 70}},         /* row b */
        {{3, 3, 4, 129}, {3, 3, 4, 129}, {3, 1, 4, 129}},
        {{2, 2, 259}, {2, 2, 259}, {1, 259}},
        {{2, 33, 70}, {1, 70}, {2, 33, 70}},         /* row a */
        {{2, 9, 3}, {2, 9, 3}, {1, 3}},              /* narrow */
        {{3, 4, 20, 1}, {3, 4, 20, 1}, {2, 20, 1}},  /* last dim 1 */
        {{3, 5, 3, 7}, {3, 5, 1, 7}, {3, 1, 3, 7}},  /* general */
    };
    static const tb_op_id ids[4] = {TB_OP_add_backward, TB_OP_sub_backward,
                                    TB_OP_mul_backward, TB_OP_div_backward};
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    char err[256];
    rng_seed(4200);
    for (int dt = 0; dt < 2; dt++)
    for (int oi = 0; oi < 4; oi++)
    for (size_t q = 0; q < sizeof sh / sizeof sh[0]; q++) {
        const tb_op *op = tb_op_get(ids[oi]);
        const tb_dtype t = dt ? TB_F64 : TB_F32;
        const size_t es = tb_dtype_size(t);
        tb_shape is[3];
        for (int i = 0; i < 3; i++) {
            const int *d = sh[q][i];
            is[i] = d[0] == 1   ? S(1, d[1])
                    : d[0] == 2 ? S(2, d[1], d[2])
                                : S(3, d[1], d[2], d[3]);
        }
        gbuf gi[3], gr[2];
        tb_tensor in[3], ref[2];
        for (int i = 0; i < 3; i++) {
            tb_tensor_init(&in[i], t, &is[i]);
            in[i].data = gb_new(&gi[i], tb_tensor_nbytes(&in[i]), es);
            for (int64_t k = 0; k < tb_tensor_numel(&in[i]); k++) {
                double v = (rng_next() & 7) == 0 && i == 0
                               ? -0.0
                               : rng_uniform(-2, 2);
                if (i == 2)
                    v = (v < 0 ? -0.25 : 0.25) + v;
                /* f64 g: now and then a tiny value (f64 div by a row
                 * vector b at AVX-512 on Intel: Markstein's steps for
                 * g in [2^-900, 2^970], the divider for a vector with
                 * such a lane, bwd_bin_simd.h) */
                if (dt && i == 0 && k % 97 == 5)
                    v *= 0x1p-950;
                if (dt)
                    ((double *)in[i].data)[k] = v;
                else
                    ((float *)in[i].data)[k] = (float)v;
            }
        }
        for (int i = 0; i < 2; i++) {
            tb_tensor_init(&ref[i], t, &is[i + 1]);
            ref[i].data = gb_new(&gr[i], tb_tensor_nbytes(&ref[i]), es);
        }
        const char *sv[2] = {"scalar", "1"};
        void *sctx = NULL;
        assert_int_equal(B->create(B, sv, &sctx, err, sizeof err), 0);
        const char *impl = NULL;
        tb_kernel_fn fn = B->kernel(sctx, op, t, NULL, &impl).fn;
        assert_non_null(fn);
        assert_non_null(strstr(impl, "_c"));
        assert_int_equal(fn(sctx, in, ref, NULL), 0);
        B->destroy(sctx);
        /* div's db of a row vector b: the bound's sum |g a / (b b)| per
         * column, R rows */
        const bool loose = ids[oi] == TB_OP_div_backward && q >= 2 && q <= 4;
        const int64_t nb = tb_tensor_numel(&in[2]);
        const int64_t R = tb_tensor_numel(&in[0]) / nb;
        double *bound = calloc((size_t)nb, sizeof *bound);
        assert_non_null(bound);
        for (int64_t k = 0; loose && k < tb_tensor_numel(&in[0]); k++) {
            const double g = get(in[0].data, t, k), a = get(in[1].data, t, k);
            const double b = get(in[2].data, t, k % nb);
            bound[k % nb] += fabs(g * a / (b * b));
        }
        const double u = dt ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
        for (int64_t k = 0; k < nb; k++)
            bound[k] *= 2 * (double)(R + 3) * u;
        /* as either vendor (f64 div by a row vector b at AVX-512:
         * Markstein's steps on Intel, the divider on AMD) */
        for (int amd = 0; amd < 2; amd++)
        for (int iv = 0; iv < ax[0].n_values; iv++)
            for (int tv = 0; tv < ax[1].n_values; tv++) {
                const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
                if (strcmp(vals[0], "scalar") == 0)
                    continue;
                tb_cpu_isa_amd_set(amd);
                void *ctx = NULL;
                assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
                fn = B->kernel(ctx, op, t, NULL, &impl).fn;
                assert_non_null(fn);
                assert_null(strstr(impl, "_c")); /* a SIMD row */
                gbuf go[2];
                tb_tensor out[2];
                for (int i = 0; i < 2; i++) {
                    tb_tensor_init(&out[i], t, &is[i + 1]);
                    out[i].data =
                        gb_new(&go[i], tb_tensor_nbytes(&out[i]), es);
                }
                assert_int_equal(fn(ctx, in, out, NULL), 0);
                tb_cpu_isa_amd_set(-1);
                int64_t bad = 0;
                for (int i = 0; i < 2; i++)
                    for (int64_t k = 0; k < tb_tensor_numel(&out[i]); k++) {
                        const double gv = get(out[i].data, t, k);
                        const double wv = get(ref[i].data, t, k);
                        const bool ok =
                            loose && i == 1
                                ? fabs(gv - wv) <= bound[k]
                                : memcmp((char *)out[i].data + (size_t)k * es,
                                         (char *)ref[i].data + (size_t)k * es,
                                         es) == 0;
                        if (!ok && bad++ < 3)
                            print_error("%s isa=%s threads=%s amd=%d "
                                        "shape %zu out %d [%lld]: got %a "
                                        "want %a\n",
                                        impl, vals[0], vals[1], amd, q, i,
                                        (long long)k, gv, wv);
                    }
                const bool intact = gb_intact(&go[0]) && gb_intact(&go[1]);
                gb_free(&go[0]);
                gb_free(&go[1]);
                B->destroy(ctx);
                assert_true(intact);
                assert_int_equal(bad, 0);
            }
        free(bound);
        bool intact = gb_intact(&gr[0]) && gb_intact(&gr[1]);
        for (int i = 0; i < 3; i++) {
            intact = intact && gb_intact(&gi[i]);
            gb_free(&gi[i]);
        }
        gb_free(&gr[0]);
        gb_free(&gr[1]);
        assert_true(intact);
    }
}
