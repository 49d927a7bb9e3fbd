/* The bf16/f16 rows of half_bwd.c, half_part.c (backends/cpu/
 * half_bwd.h) against the path they replace, bit for bit, and against
 * the ops' definitions.
 *
 * Exactness: at every ISA level built and run here, with threads=1 and
 * threads=2, each row's output must be the bits of: the inputs widened
 * (ops/half.h's exact functions), the f32 row of the same level run on
 * them, each result narrowed once (a NaN may be any quiet NaN), with
 * float parameters held in the dtype as half.c holds them.  Shapes
 * reach the parts' edges: rows longer than a norm part, tiles and row
 * blocks of the column sums with tails, every axis of sum_backward,
 * every 16-bit pattern as relu_backward's, sigmoid_backward's,
 * tanh_backward's and gelu_backward's x against random g (NaN, -0,
 * infinities, subnormals), softplus's x and pow's b (test_act_paths);
 * softmax and log_softmax rows (and log_softmax_backward's) and pool
 * planes over several of half_rows.c's chunks, a row past one chunk.
 * (The last five: half.c's fused loops, half_simd.h.)
 * Definitions (an independent oracle, in double): relu_backward is g
 * where x > 0 else 0 (a NaN g comes out quiet); sum_backward copies g along the axis; mean_backward
 * is g / n within one rounding of the dtype (plus the f32 scale's). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/cpu/cpu_config.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/kreg.h"
#include "backends/cpu/ops_simd.h"
#include "ops/half.h"
#include "ops/op.h"
#include "ops/tensor.h"
#include "testutil.h"

static const tb_backend *B;

static void *cpu_new(const char *isa, const char *threads)
{
    return cpu_instance(B, isa, threads);
}

static bool is_nan16(tb_dtype dt, uint16_t h)
{
    return dt == TB_F16 ? (h & 0x7c00) == 0x7c00 && (h & 0x3ff)
                        : (h & 0x7f80) == 0x7f80 && (h & 0x7f);
}

static float wid(tb_dtype dt, uint16_t h)
{
    return dt == TB_F16 ? tb_f16_to_f32(h) : tb_bf16_to_f32(h);
}

static uint16_t nar(tb_dtype dt, float f)
{
    return dt == TB_F16 ? tb_f32_to_f16(f) : tb_f32_to_bf16(f);
}

typedef struct {
    tb_op_id op;
    int nin;
    tb_shape sh[3]; /* inputs */
    tb_shape osh;   /* output */
    int axis;       /* sum/mean (and their backward): -99 none */
    int keepdim;
    int groups;     /* group_norm; the pools: kernel + 10 stride (0:
                     * none) + 100 padding; conv2d: padding */
    int kind;       /* inputs: 0 values in [-3, 3), 1 every pattern,
                     * 2 as 0 with 60 added to x past 8 of each 37,
                     * 3 a in [0.1, 2), b in [-2, 2) (pow's fast path),
                     * 4 the pools' x from {-1, -0, +0, 1} (ties), 5
                     * from those, +-inf and NaN (g as 0), 6 softmax's
                     * edges (edge()), 7 as 0 with the inputs past x
                     * scaled by 2^-126 (norm results about FLT_MIN,
                     * subnormal among them: AVX512_BF16's narrowing's
                     * fallback), 8 as 0 with 1 in 97 of the pools' x an
                     * infinity or NaN (quiet or signaling, either sign:
                     * steps without them beside steps with) */
} pcase;

/* kind 6, softmax's edges, from a random r in row `row`: every fifth
 * row all -inf; every seventh row at most 0, zeros of both signs among
 * its values (a max of +-0: its sign is the f32 row's order's); in
 * every fourth row NaN and +inf (1/64 each); else values in [-3, 3),
 * 1/32 of them -inf, 1/8 large logits (to +-6000: the rows' max far
 * from the rest) */
static float edge(uint64_t r, int64_t row)
{
    const unsigned q = (unsigned)(r >> 58);
    const double v = (double)(r & 0xffffffffu) * 0x1p-32 * 6 - 3;
    if (row % 5 == 3 || q < 2)
        return -INFINITY;
    if (row % 7 == 2)
        return q < 12 ? 0.0f : q < 24 ? -0.0f : (float)-fabs(v);
    if (row % 4 == 1 && q == 2)
        return NAN;
    if (row % 4 == 1 && q == 3)
        return INFINITY;
    return (float)(q >= 56 ? v * 2000 : v);
}

/* the inputs of c in dt, deterministic */
static void fill(const pcase *c, tb_dtype dt, tb_tensor *in, uint64_t seed)
{
    for (int i = 0; i < c->nin; i++) {
        assert_int_equal(tb_tensor_create(&in[i], dt, &c->sh[i]), 0);
        uint16_t *h = in[i].data;
        int64_t n = tb_tensor_numel(&in[i]);
        for (int64_t k = 0; k < n; k++) {
            uint64_t r = splitmix64_next(&seed);
            if (c->kind == 1)
                h[k] = (uint16_t)(i == (c->nin > 1) && k < 65536
                                      ? (uint64_t)k
                                      : r);
            else if (c->kind == 6) /* softmax's edges (below) */
                h[k] = nar(dt, edge(r, k / c->sh[i].dim[c->sh[i].ndim - 1]));
            else if ((c->kind == 4 || c->kind == 5) && i == (c->nin > 1)) {
                /* pools' x: ties (and signed zeros; kind 5 NaN of
                 * either sign and infinities too) */
                static const float tv[] = {-1.0f, -0.0f, 0.0f, 1.0f,
                                           INFINITY, -INFINITY, NAN,
                                           -NAN};
                h[k] = nar(dt, tv[r % (c->kind == 5 ? 8 : 4)]);
                if (c->kind == 5 && r % 8 >= 6 && (r >> 8) % 2)
                    h[k] ^= dt == TB_F16 ? 0x201 : 0x41; /* signaling */
            } else if (c->kind == 8 && i == (c->nin > 1) && r % 97 == 0)
                /* an exponent of all ones, a fraction of 0 or 1 (the
                 * infinity or a signaling NaN) or random */
                h[k] = (uint16_t)((dt == TB_F16 ? 0x7c00 : 0x7f80) |
                                  (r >> 15 & 0x8000) |
                                  ((r >> 8) % 3 == 0   ? 0
                                   : (r >> 8) % 3 == 1 ? 1
                                                       : (r >> 20) &
                                                             (dt == TB_F16
                                                                  ? 0x3ff
                                                                  : 0x7f)));
            else if (c->kind == 3) /* pow's benchmark domain */
                h[k] = nar(dt, (float)(i == 0 ? 0.1 + (double)(r >> 11) *
                                                          0x1p-53 * 1.9
                                              : (double)(r >> 11) *
                                                        0x1p-53 * 4 - 2));
            else /* kind 2: x's rows of 37, the first 8 apart from the rest */
                h[k] = nar(dt, (float)(((double)(r >> 11) * 0x1p-53 * 6 - 3 +
                                        (c->kind == 2 && i == 0 &&
                                                 k % 37 >= 8
                                             ? 60
                                             : 0)) *
                                       (c->kind == 7 && i > 0 ? 0x1p-126
                                                              : 1)));
        }
    }
}

/* beta, thr: softplus's, where nonzero */
static void set_params(const pcase *c, const tb_op *op, tb_params *p,
                       double beta, double thr)
{
    tb_params_defaults(op, p);
    if (c->axis != -99)
        assert_int_equal(tb_params_set(op, p, "axis", c->axis, NULL, 0), 0);
    if (op->id == TB_OP_sum || op->id == TB_OP_mean ||
        op->id == TB_OP_max || op->id == TB_OP_min || op->id == TB_OP_var || op->id == TB_OP_sum_backward ||
        op->id == TB_OP_mean_backward)
        assert_int_equal(
            tb_params_set(op, p, "keepdim", c->keepdim, NULL, 0), 0);
    const bool pool = op->id == TB_OP_max_pool2d ||
                      op->id == TB_OP_avg_pool2d ||
                      op->id == TB_OP_max_pool2d_backward ||
                      op->id == TB_OP_avg_pool2d_backward;
    if (pool) {
        assert_int_equal(
            tb_params_set(op, p, "kernel", c->groups % 10, NULL, 0), 0);
        if (c->groups / 10 % 10)
            assert_int_equal(tb_params_set(op, p, "stride",
                                           c->groups / 10 % 10, NULL, 0),
                             0);
        assert_int_equal(
            tb_params_set(op, p, "padding", c->groups / 100, NULL, 0), 0);
    } else if (c->groups && (op->id == TB_OP_conv2d ||
                              op->id == TB_OP_conv2d_nobias)) {
        assert_int_equal(
            tb_params_set(op, p, "padding", c->groups, NULL, 0), 0);
    } else if (c->groups) {
        assert_int_equal(
            tb_params_set(op, p, "num_groups", c->groups, NULL, 0), 0);
    }
    if (beta)
        assert_int_equal(tb_params_set(op, p, "beta", beta, NULL, 0), 0);
    if (thr)
        assert_int_equal(tb_params_set(op, p, "threshold", thr, NULL, 0), 0);
}

/* The whole-tensor path's bits: widen, the f32 row of level lv, narrow
 * (float parameters rounded to dt as half.c's half_run holds them). */
static void expected(const pcase *c, const tb_op *op, tb_dtype dt, int lv,
                     const tb_tensor *in, const tb_params *p, tb_tensor *want)
{
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    const tb_cpu_krow *r = tb_cpu_krow_find(rows, nrows, op->id, TB_F32, lv);
    assert_non_null(r);
    tb_tensor fin[3], fout;
    for (int i = 0; i < c->nin; i++) {
        assert_int_equal(tb_tensor_create(&fin[i], TB_F32, &c->sh[i]), 0);
        const uint16_t *h = in[i].data;
        float *f = fin[i].data;
        for (int64_t k = 0; k < tb_tensor_numel(&in[i]); k++)
            f[k] = wid(dt, h[k]);
    }
    assert_int_equal(tb_tensor_create(&fout, TB_F32, &c->osh), 0);
    print_message("# %s %s\n", op->name, tb_dtype_name(dt));
    tb_params q = *p;
    for (int i = 0; i < op->n_params; i++) {
        const tb_param_spec *s = &op->params[i];
        if (s->kind != TB_PARAM_FLOAT || (s->optional && !(q.set >> i & 1)))
            continue;
        q.v[i] = tb_dtype_round(dt, (q.set >> i & 1) ? q.v[i] : s->def);
        q.set |= 1u << i;
    }
    void *ctx = cpu_new(tb_cpu_isa_name(lv), "1");
    assert_int_equal(r->fn(ctx, fin, &fout, &q), 0);
    B->destroy(ctx);
    assert_int_equal(tb_tensor_create(want, dt, &c->osh), 0);
    const float *f = fout.data;
    uint16_t *w = want->data;
    for (int64_t k = 0; k < tb_tensor_numel(&fout); k++)
        w[k] = nar(dt, f[k]);
    for (int i = 0; i < c->nin; i++)
        tb_tensor_destroy(&fin[i]);
    tb_tensor_destroy(&fout);
}

/* relu_backward, sum_backward, mean_backward by their definitions */
static void definition(const pcase *c, tb_dtype dt, const tb_tensor *in,
                       const tb_tensor *got)
{
    const uint16_t *g = in[0].data, *x = in[1].data, *o = got->data;
    const int64_t n = tb_tensor_numel(got);
    if (c->op == TB_OP_relu_backward) {
        for (int64_t k = 0; k < n; k++) {
            double xv = wid(dt, x[k]), gv = wid(dt, g[k]);
            if (xv > 0 && isnan(gv)) /* a quiet NaN, as narrowing gives */
                assert_true(is_nan16(dt, o[k]) &&
                            (o[k] & (dt == TB_F16 ? 0x200 : 0x40)));
            else if (!(xv > 0))
                assert_int_equal(o[k], 0); /* +0, also for NaN and -0 */
            else if (memcmp(&o[k], &g[k], 2))
                fail_msg("relu_backward %04x %04x: %04x", g[k], x[k], o[k]);
        }
        return;
    }
    /* [outer, len, inner] over x (in[1]) */
    int64_t outer = 1, len = tb_tensor_numel(&in[1]), inner = 1;
    if (c->axis != -99) {
        int ax = c->axis < 0 ? c->axis + in[1].ndim : c->axis;
        outer = inner = 1;
        for (int d = 0; d < ax; d++)
            outer *= in[1].shape[d];
        len = in[1].shape[ax];
        for (int d = ax + 1; d < in[1].ndim; d++)
            inner *= in[1].shape[d];
    }
    const double eps = dt == TB_F16 ? 0x1p-11 : 0x1p-8;
    for (int64_t oo = 0; oo < outer; oo++)
        for (int64_t k = 0; k < len; k++)
            for (int64_t i = 0; i < inner; i++) {
                uint16_t gi = g[oo * inner + i];
                uint16_t v = o[(oo * len + k) * inner + i];
                if (c->op == TB_OP_sum_backward) {
                    if (v != gi)
                        fail_msg("sum_backward [%lld,%lld,%lld]: %04x, g %04x",
                                 (long long)oo, (long long)k, (long long)i, v,
                                 gi);
                    continue;
                }
                double want = wid(dt, gi) / (double)len;
                double d = fabs(wid(dt, v) - want);
                /* one rounding (half an ulp) of the dtype, the f32
                 * scale's relative 2^-24, subnormal spacing */
                double tol = eps * fabs(want) + 0x1p-23 * fabs(want) +
                             (dt == TB_F16 ? 0x1p-24 : 0x1p-133);
                if (d > tol)
                    fail_msg("mean_backward: %a, g/n %a", wid(dt, v), want);
            }
}

static int run_case(const pcase *c, tb_dtype dt, uint64_t seed,
                    double beta, double thr)
{
    const tb_op *op = tb_op_get(c->op);
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    tb_params p = {0};
    set_params(c, op, &p, beta, thr);
    tb_tensor in[3];
    fill(c, dt, in, seed);
    int runs = 0;
    /* the pools' NaN: quiet, as narrowing makes it */
    const bool pool = c->op == TB_OP_max_pool2d ||
                      c->op == TB_OP_max_pool2d_backward ||
                      c->op == TB_OP_avg_pool2d ||
                      c->op == TB_OP_avg_pool2d_backward;
    for (int lv = TB_ISA_SCALAR; lv <= tb_cpu_isa_max(); lv++) {
        if (!tb_cpu_isa_built(lv))
            continue;
        const tb_cpu_krow *r = tb_cpu_krow_find(rows, nrows, c->op, dt, lv);
        assert_non_null(r);
        /* bf16's conv2d at avx512bf16 sums pairs in vdpbf16ps: its own
         * numerics, not the f32 path's */
        if (dt == TB_BF16 && r->min_isa >= TB_ISA_AVX512BF16 &&
            (c->op == TB_OP_conv2d || c->op == TB_OP_conv2d_nobias))
            continue;
        tb_tensor want;
        expected(c, op, dt, r->min_isa, in, &p, &want);
        const uint16_t *w = want.data;
        for (int t = 0; t < 2; t++) {
            void *ctx = cpu_new(tb_cpu_isa_name(lv), t ? "2" : "1");
            tb_tensor got;
            assert_int_equal(tb_tensor_create(&got, dt, &c->osh), 0);
            memset(got.data, 0x5a, tb_tensor_nbytes(&got));
            assert_int_equal(r->fn(ctx, in, &got, &p), 0);
            B->destroy(ctx);
            const uint16_t *g = got.data;
            for (int64_t k = 0; k < tb_tensor_numel(&got); k++)
                if (g[k] != w[k] && !(is_nan16(dt, g[k]) && is_nan16(dt, w[k])))
                    fail_msg("%s threads %d [%lld]: %04x, the f32 path %04x",
                             r->name, t ? 2 : 1, (long long)k, g[k], w[k]);
                else if (pool && is_nan16(dt, g[k]) &&
                         !(g[k] & (dt == TB_F16 ? 0x200 : 0x40)))
                    fail_msg("%s threads %d [%lld]: %04x, not quiet", r->name,
                             t ? 2 : 1, (long long)k, g[k]);
            if (c->op == TB_OP_relu_backward || c->op == TB_OP_sum_backward ||
                c->op == TB_OP_mean_backward)
                definition(c, dt, in, &got);
            tb_tensor_destroy(&got);
            runs++;
        }
        tb_tensor_destroy(&want);
    }
    for (int i = 0; i < c->nin; i++)
        tb_tensor_destroy(&in[i]);
    return runs;
}

#define NONE -99

static void test_paths(void **state)
{
    (void)state;
    B = tb_backend_find("cpu");
    assert_non_null(B);
    const pcase cases[] = {
        {TB_OP_relu_backward, 2, {SHAPE(65536 + 29), SHAPE(65536 + 29)},
         SHAPE(65536 + 29), NONE, 0, 0, 1},
        {TB_OP_relu_backward, 2, {SHAPE(3, 77), SHAPE(3, 77)}, SHAPE(3, 77),
         NONE, 0, 0, 0},
        {TB_OP_sigmoid_backward, 2, {SHAPE(3, 4133), SHAPE(3, 4133)},
         SHAPE(3, 4133), NONE, 0, 0, 0},
        {TB_OP_tanh_backward, 2, {SHAPE(9001), SHAPE(9001)}, SHAPE(9001),
         NONE, 0, 0, 0},
        {TB_OP_gelu_backward, 2, {SHAPE(2, 5000), SHAPE(2, 5000)},
         SHAPE(2, 5000), NONE, 0, 0, 0},
        /* every pattern as x (NaN, infinities, subnormals, gelu's
         * tail past |x| = 3) against random patterns as g */
        {TB_OP_sigmoid_backward, 2, {SHAPE(65536 + 29), SHAPE(65536 + 29)},
         SHAPE(65536 + 29), NONE, 0, 0, 1},
        {TB_OP_tanh_backward, 2, {SHAPE(65536 + 29), SHAPE(65536 + 29)},
         SHAPE(65536 + 29), NONE, 0, 0, 1},
        {TB_OP_gelu_backward, 2, {SHAPE(65536 + 29), SHAPE(65536 + 29)},
         SHAPE(65536 + 29), NONE, 0, 0, 1},
        {TB_OP_sum_backward, 2, {SHAPE(7, 33), SHAPE(5, 7, 33)},
         SHAPE(5, 7, 33), 0, 0, 0, 0},
        {TB_OP_sum_backward, 2, {SHAPE(5, 33), SHAPE(5, 7, 33)},
         SHAPE(5, 7, 33), 1, 0, 0, 0},
        {TB_OP_sum_backward, 2, {SHAPE(5, 7, 1), SHAPE(5, 7, 33)},
         SHAPE(5, 7, 33), -1, 1, 0, 0},
        {TB_OP_sum_backward, 2, {SHAPE(1), SHAPE(5, 7, 33)},
         SHAPE(5, 7, 33), NONE, 0, 0, 0},
        {TB_OP_mean_backward, 2, {SHAPE(300), SHAPE(300, 1000)},
         SHAPE(300, 1000), 1, 0, 0, 0},
        {TB_OP_mean_backward, 2, {SHAPE(1000), SHAPE(300, 1000)},
         SHAPE(300, 1000), 0, 0, 0, 0},
        {TB_OP_mean_backward, 2, {SHAPE(3, 1, 5), SHAPE(3, 7, 5)},
         SHAPE(3, 7, 5), 1, 1, 0, 0},
        {TB_OP_mean_backward, 2, {SHAPE(1), SHAPE(3, 7, 5)},
         SHAPE(3, 7, 5), NONE, 0, 0, 0},
        {TB_OP_layer_norm, 3, {SHAPE(37, 300), SHAPE(300), SHAPE(300)},
         SHAPE(37, 300), NONE, 0, 0, 0},
        {TB_OP_layer_norm, 3, {SHAPE(2, 3, 9000), SHAPE(9000), SHAPE(9000)},
         SHAPE(2, 3, 9000), NONE, 0, 0, 0},
        /* layer_norm and rms_norm (half_norm_simd.h at avx2 and
         * avx512): the two-pass variance (a row's first 8 elements, its
         * shift, far from its mean), rows shorter than 8, random
         * patterns (NaN, infinities, overflowing squares) */
        {TB_OP_layer_norm, 3, {SHAPE(50, 37), SHAPE(37), SHAPE(37)},
         SHAPE(50, 37), NONE, 0, 0, 2},
        {TB_OP_layer_norm, 3, {SHAPE(9, 5), SHAPE(5), SHAPE(5)},
         SHAPE(9, 5), NONE, 0, 0, 0},
        {TB_OP_layer_norm, 3, {SHAPE(40, 264), SHAPE(264), SHAPE(264)},
         SHAPE(40, 264), NONE, 0, 0, 1},
        {TB_OP_rms_norm, 2, {SHAPE(40, 264), SHAPE(264)}, SHAPE(40, 264),
         NONE, 0, 0, 1},
        {TB_OP_rms_norm, 2, {SHAPE(41, 257), SHAPE(257)}, SHAPE(41, 257),
         NONE, 0, 0, 0},
        {TB_OP_rms_norm, 2, {SHAPE(7, 120), SHAPE(120)}, SHAPE(7, 120),
         NONE, 0, 0, 7},
        {TB_OP_layer_norm, 3, {SHAPE(7, 120), SHAPE(120), SHAPE(120)},
         SHAPE(7, 120), NONE, 0, 0, 7},
        {TB_OP_group_norm, 3, {SHAPE(5, 6, 7, 9), SHAPE(6), SHAPE(6)},
         SHAPE(5, 6, 7, 9), NONE, 0, 3, 0},
        {TB_OP_group_norm, 3, {SHAPE(3, 8, 40, 40), SHAPE(8), SHAPE(8)},
         SHAPE(3, 8, 40, 40), NONE, 0, 2, 0},
        /* group_norm at avx512 (bnorm_avx512.c's f32 parts on the
         * 16-bit values): the statistics' second pass (values past 8 of
         * each 37 far from the shift), patterns, results about FLT_MIN */
        {TB_OP_group_norm, 3, {SHAPE(4, 6, 300), SHAPE(6), SHAPE(6)},
         SHAPE(4, 6, 300), NONE, 0, 3, 2},
        {TB_OP_group_norm, 3, {SHAPE(2, 4, 131), SHAPE(4), SHAPE(4)},
         SHAPE(2, 4, 131), NONE, 0, 4, 1},
        {TB_OP_group_norm, 3, {SHAPE(3, 4, 100), SHAPE(4), SHAPE(4)},
         SHAPE(3, 4, 100), NONE, 0, 1, 7},
        /* group_norm's pipelined pairs (the next pair's sums beside a
         * pair's y) and f16's widened scratch (pairs of a multiple of 64
         * values up to 4096): aligned and unaligned channels */
        {TB_OP_group_norm, 3, {SHAPE(2, 8, 16, 16), SHAPE(8), SHAPE(8)},
         SHAPE(2, 8, 16, 16), NONE, 0, 2, 1},
        {TB_OP_group_norm, 3, {SHAPE(5, 4, 48), SHAPE(4), SHAPE(4)},
         SHAPE(5, 4, 48), NONE, 0, 1, 2},
        {TB_OP_sum, 1, {SHAPE(3, 130, 1500)}, SHAPE(3, 1500), 1, 0, 0, 0},
        {TB_OP_mean, 1, {SHAPE(3, 130, 1500)}, SHAPE(3, 1, 1500), 1, 1, 0, 0},
        {TB_OP_sum, 1, {SHAPE(200, 37)}, SHAPE(37), 0, 0, 0, 0},
        {TB_OP_mean, 1, {SHAPE(4, 70, 5, 3)}, SHAPE(4, 5, 3), 1, 0, 0, 0},
        {TB_OP_sum, 1, {SHAPE(2, 3, 4)}, SHAPE(3, 4), -3, 0, 0, 0},
        /* short rows over the last axis (half_part_short.h: blocks of
         * VS_LANES rows, rows of 1 to 16, a copied last block; rows of
         * 17 past it), every pattern (NaN, infinities), signed zeros
         * and NaN ties, softmax's edges */
        {TB_OP_sum, 1, {SHAPE(1000, 10)}, SHAPE(1000, 1), -1, 1, 0, 1},
        {TB_OP_sum, 1, {SHAPE(37, 16)}, SHAPE(37), -1, 0, 0, 0},
        {TB_OP_sum, 1, {SHAPE(300, 1)}, SHAPE(300), 1, 0, 0, 7},
        {TB_OP_mean, 1, {SHAPE(3, 41, 7)}, SHAPE(3, 41, 1), 2, 1, 0, 0},
        {TB_OP_mean, 1, {SHAPE(29, 17)}, SHAPE(29), -1, 0, 0, 0},
        /* whole blocks of TB_CPU_SUM_BLOCK (f16 at avx512: the halves
         * on AMD, hs_part's vectors elsewhere), every element and rows */
        {TB_OP_sum, 1, {SHAPE(5 * 1024 + 77)}, SHAPE(1), NONE, 1, 0, 0},
        {TB_OP_mean, 1, {SHAPE(4, 2100)}, SHAPE(4), -1, 0, 0, 0},
        {TB_OP_max, 1, {SHAPE(1000, 10)}, SHAPE(1000, 1), -1, 1, 0, 5},
        {TB_OP_max, 1, {SHAPE(500, 16)}, SHAPE(500), -1, 0, 0, 1},
        {TB_OP_max, 1, {SHAPE(333, 8)}, SHAPE(333), -1, 0, 0, 6},
        {TB_OP_min, 1, {SHAPE(999, 3)}, SHAPE(999), -1, 0, 0, 5},
        {TB_OP_min, 1, {SHAPE(64, 9)}, SHAPE(64, 1), 1, 1, 0, 1},
        /* longer rows (half.c's hred_part: each row's value, narrowed
         * 256 rows at a time by the level), every pattern, NaN ties */
        {TB_OP_min, 1, {SHAPE(600, 40)}, SHAPE(600), -1, 0, 0, 1},
        {TB_OP_max, 1, {SHAPE(300, 70)}, SHAPE(300), -1, 0, 0, 5},
        {TB_OP_mean, 1, {SHAPE(530, 33)}, SHAPE(530), -1, 0, 0, 1},
        /* b one value a row (half_part_short.h's hpb_rows: blocks of
         * VS_LANES rows, the rows past them in C), every pattern, NaN
         * and infinities, rows of 2 to 32 (33: not served) */
        {TB_OP_sub, 2, {SHAPE(1000, 10), SHAPE(1000, 1)}, SHAPE(1000, 10),
         NONE, 0, 0, 1},
        {TB_OP_add, 2, {SHAPE(3, 7, 5), SHAPE(3, 7, 1)}, SHAPE(3, 7, 5),
         NONE, 0, 0, 0},
        {TB_OP_mul, 2, {SHAPE(37, 32), SHAPE(37, 1)}, SHAPE(37, 32), NONE, 0,
         0, 1},
        {TB_OP_div, 2, {SHAPE(40, 16), SHAPE(40, 1)}, SHAPE(40, 16), NONE, 0,
         0, 5},
        {TB_OP_div, 2, {SHAPE(99, 2), SHAPE(99, 1)}, SHAPE(99, 2), NONE, 0, 0,
         1},
        {TB_OP_sub, 2, {SHAPE(20, 33), SHAPE(20, 1)}, SHAPE(20, 33), NONE, 0,
         0, 0},
        /* var (tb_cpu_half_var at avx2 and avx512: var_simd.h's lanes
         * on the 16-bit values): every element past blocks and chunks,
         * the last axis, rows with 8 values apart (a shift far from the
         * mean), every pattern; a non-last axis (the whole path) */
        {TB_OP_var, 1, {SHAPE(3 * 4096 + 300)}, SHAPE(1), NONE, 1, 0, 0},
        {TB_OP_var, 1, {SHAPE(9000 + 37)}, SHAPE(1), NONE, 1, 0, 2},
        {TB_OP_var, 1, {SHAPE(65536)}, SHAPE(1), NONE, 1, 0, 1},
        {TB_OP_var, 1, {SHAPE(41, 300)}, SHAPE(41), -1, 0, 0, 2},
        {TB_OP_var, 1, {SHAPE(5, 9001)}, SHAPE(5), 1, 0, 0, 0},
        {TB_OP_var, 1, {SHAPE(300, 7)}, SHAPE(7), 0, 0, 0, 0},
        /* softmax, log_softmax and log_softmax_backward over the last
         * axis (half_rows.c: chunks of whole rows, 16-row multiples):
         * short rows over several chunks, rows a chunk holds a few
         * of, a 3-d x (axis -1 and 2), a row past the stack scratch
         * (allocated), every pattern; a non-last axis (the whole
         * path) */
        {TB_OP_softmax, 1, {SHAPE(1024, 10)}, SHAPE(1024, 10), -1, 0, 0, 0},
        {TB_OP_softmax, 1, {SHAPE(5000, 10)}, SHAPE(5000, 10), -1, 0, 0, 0},
        {TB_OP_softmax, 1, {SHAPE(37, 1000)}, SHAPE(37, 1000), 1, 0, 0, 2},
        {TB_OP_softmax, 1, {SHAPE(700, 33)}, SHAPE(700, 33), NONE, 0, 0, 1},
        {TB_OP_log_softmax, 1, {SHAPE(1024, 10)}, SHAPE(1024, 10), -1, 0, 0,
         0},
        {TB_OP_log_softmax, 1, {SHAPE(3, 5, 301)}, SHAPE(3, 5, 301), 2, 0, 0,
         0},
        {TB_OP_log_softmax, 1, {SHAPE(2, 13001)}, SHAPE(2, 13001), -1, 0, 0,
         1},
        {TB_OP_log_softmax, 1, {SHAPE(40, 7)}, SHAPE(40, 7), 0, 0, 0, 0},
        {TB_OP_log_softmax_backward, 2, {SHAPE(1024, 10), SHAPE(1024, 10)},
         SHAPE(1024, 10), -1, 0, 0, 0},
        {TB_OP_log_softmax_backward, 2, {SHAPE(3000, 10), SHAPE(3000, 10)},
         SHAPE(3000, 10), -1, 0, 0, 0},
        {TB_OP_log_softmax_backward, 2, {SHAPE(3, 33, 700), SHAPE(3, 33, 700)},
         SHAPE(3, 33, 700), 2, 0, 0, 0},
        {TB_OP_log_softmax_backward, 2, {SHAPE(300, 77), SHAPE(300, 77)},
         SHAPE(300, 77), NONE, 0, 0, 1},
        /* half_lsm.c's L1 blocks (2048 values, 16-row multiples): rows
         * of 1, 2, 15, 16, 17 (blocks of 2048, 1024, 128, 128, 112
         * rows and a tail; the f32 rows' short paths at n <= 16 and
         * <= 32), 1000 (two rows a block) and 3000 (one row past a
         * block), -inf rows and elements, NaN, +inf, large logits */
#define HL_CASES(n, rows)                                                 \
    {TB_OP_softmax, 1, {SHAPE(rows, n)}, SHAPE(rows, n), -1, 0, 0, 6},     \
        {TB_OP_log_softmax, 1, {SHAPE(rows, n)}, SHAPE(rows, n), -1, 0, 0, \
         6},                                                              \
        {TB_OP_log_softmax_backward, 2, {SHAPE(rows, n), SHAPE(rows, n)}, \
         SHAPE(rows, n), -1, 0, 0, 6},
        HL_CASES(1, 4100) HL_CASES(2, 2100) HL_CASES(10, 1000)
        HL_CASES(15, 301) HL_CASES(16, 300) HL_CASES(17, 259)
        /* every other n <= 16 (half_lsm_short.h's instances: blocks of
         * 16 rows, chunks of 8 blocks and a tail) */
        HL_CASES(3, 333) HL_CASES(4, 130) HL_CASES(5, 200) HL_CASES(6, 99)
        HL_CASES(7, 150) HL_CASES(8, 64) HL_CASES(9, 170) HL_CASES(11, 50)
        HL_CASES(12, 148) HL_CASES(13, 45) HL_CASES(14, 140)
        HL_CASES(1000, 7) HL_CASES(3000, 3)
#undef HL_CASES
        /* the pools and their backward (half_rows.c: chunks of N*C
         * planes): planes over several chunks, a kernel 3 with stride
         * 2 and padding 1 over odd planes, every pattern (NaN) */
        {TB_OP_max_pool2d, 1, {SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 12, 12),
         NONE, 0, 2, 0},
        {TB_OP_max_pool2d, 1, {SHAPE(3, 50, 13, 11)}, SHAPE(3, 50, 7, 6),
         NONE, 0, 123, 1},
        {TB_OP_max_pool2d, 1, {SHAPE(8, 64, 13, 11)}, SHAPE(8, 64, 7, 6),
         NONE, 0, 123, 1},
        {TB_OP_avg_pool2d, 1, {SHAPE(8, 64, 13, 11)}, SHAPE(8, 64, 7, 6),
         NONE, 0, 123, 0},
        {TB_OP_avg_pool2d, 1, {SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 12, 12),
         NONE, 0, 2, 0},
        {TB_OP_avg_pool2d, 1, {SHAPE(3, 50, 13, 11)}, SHAPE(3, 50, 7, 6),
         NONE, 0, 123, 0},
        {TB_OP_max_pool2d_backward, 2,
         {SHAPE(4, 6, 12, 12), SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 24, 24),
         NONE, 0, 2, 0},
        {TB_OP_max_pool2d_backward, 2,
         {SHAPE(3, 50, 7, 6), SHAPE(3, 50, 13, 11)}, SHAPE(3, 50, 13, 11),
         NONE, 0, 123, 1},
        {TB_OP_avg_pool2d_backward, 2,
         {SHAPE(4, 6, 12, 12), SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 24, 24),
         NONE, 0, 2, 0},
        {TB_OP_avg_pool2d_backward, 2,
         {SHAPE(3, 50, 7, 6), SHAPE(3, 50, 13, 11)}, SHAPE(3, 50, 13, 11),
         NONE, 0, 123, 0},
        /* 2x2 windows of stride 2 (pool16_avx512.c at avx512): every
         * pattern as x, odd H and W, rows of 1, 8, 16, 17 and 33
         * windows (steps of 16 and their tails, stores of two steps
         * across rows and planes), ties of +-0 and of equal values,
         * NaN and infinities among them */
        {TB_OP_max_pool2d, 1, {SHAPE(2, 8, 64, 67)}, SHAPE(2, 8, 32, 33),
         NONE, 0, 2, 1},
        /* rows of 12 windows (two steps a test in the fused loop): every
         * pattern, and ties with NaN and infinities */
        {TB_OP_max_pool2d, 1, {SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 12, 12),
         NONE, 0, 2, 1},
        {TB_OP_max_pool2d, 1, {SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 12, 12),
         NONE, 0, 2, 5},
        {TB_OP_avg_pool2d, 1, {SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 12, 12),
         NONE, 0, 2, 1},
        {TB_OP_avg_pool2d, 1, {SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 12, 12),
         NONE, 0, 2, 5},
        {TB_OP_max_pool2d, 1, {SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 12, 12),
         NONE, 0, 2, 8},
        {TB_OP_avg_pool2d, 1, {SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 12, 12),
         NONE, 0, 2, 8},
        {TB_OP_max_pool2d_backward, 2,
         {SHAPE(4, 6, 12, 12), SHAPE(4, 6, 24, 24)}, SHAPE(4, 6, 24, 24),
         NONE, 0, 2, 8},
        {TB_OP_avg_pool2d, 1, {SHAPE(2, 8, 64, 67)}, SHAPE(2, 8, 32, 33),
         NONE, 0, 2, 1},
        {TB_OP_max_pool2d_backward, 2,
         {SHAPE(2, 8, 32, 33), SHAPE(2, 8, 64, 67)}, SHAPE(2, 8, 64, 67),
         NONE, 0, 2, 1},
        {TB_OP_avg_pool2d_backward, 2,
         {SHAPE(2, 8, 32, 33), SHAPE(2, 8, 64, 67)}, SHAPE(2, 8, 64, 67),
         NONE, 0, 2, 1},
        {TB_OP_max_pool2d, 1, {SHAPE(3, 5, 9, 17)}, SHAPE(3, 5, 4, 8), NONE, 0, 2, 4},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(3, 5, 4, 8), SHAPE(3, 5, 9, 17)}, SHAPE(3, 5, 9, 17), NONE, 0, 2, 4},
        {TB_OP_max_pool2d, 1, {SHAPE(2, 3, 2, 2)}, SHAPE(2, 3, 1, 1), NONE, 0, 2, 4},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(2, 3, 1, 1), SHAPE(2, 3, 2, 2)}, SHAPE(2, 3, 2, 2), NONE, 0, 2, 4},
        {TB_OP_max_pool2d, 1, {SHAPE(1, 7, 3, 3)}, SHAPE(1, 7, 1, 1), NONE, 0, 2, 4},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(1, 7, 1, 1), SHAPE(1, 7, 3, 3)}, SHAPE(1, 7, 3, 3), NONE, 0, 2, 4},
        {TB_OP_max_pool2d, 1, {SHAPE(2, 5, 7, 33)}, SHAPE(2, 5, 3, 16), NONE, 0, 2, 4},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(2, 5, 3, 16), SHAPE(2, 5, 7, 33)}, SHAPE(2, 5, 7, 33), NONE, 0, 2, 4},
        {TB_OP_max_pool2d, 1, {SHAPE(1, 3, 5, 35)}, SHAPE(1, 3, 2, 17), NONE, 0, 2, 4},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(1, 3, 2, 17), SHAPE(1, 3, 5, 35)}, SHAPE(1, 3, 5, 35), NONE, 0, 2, 4},
        {TB_OP_max_pool2d, 1, {SHAPE(2, 9, 24, 24)}, SHAPE(2, 9, 12, 12), NONE, 0, 2, 4},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(2, 9, 12, 12), SHAPE(2, 9, 24, 24)}, SHAPE(2, 9, 24, 24), NONE, 0, 2, 4},
        {TB_OP_max_pool2d, 1, {SHAPE(3, 5, 9, 17)}, SHAPE(3, 5, 4, 8), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d, 1, {SHAPE(3, 5, 9, 17)}, SHAPE(3, 5, 4, 8), NONE, 0, 2, 5},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(3, 5, 4, 8), SHAPE(3, 5, 9, 17)}, SHAPE(3, 5, 9, 17), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d_backward, 2, {SHAPE(3, 5, 4, 8), SHAPE(3, 5, 9, 17)}, SHAPE(3, 5, 9, 17), NONE, 0, 2, 5},
        {TB_OP_max_pool2d, 1, {SHAPE(2, 3, 2, 2)}, SHAPE(2, 3, 1, 1), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d, 1, {SHAPE(2, 3, 2, 2)}, SHAPE(2, 3, 1, 1), NONE, 0, 2, 5},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(2, 3, 1, 1), SHAPE(2, 3, 2, 2)}, SHAPE(2, 3, 2, 2), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d_backward, 2, {SHAPE(2, 3, 1, 1), SHAPE(2, 3, 2, 2)}, SHAPE(2, 3, 2, 2), NONE, 0, 2, 5},
        {TB_OP_max_pool2d, 1, {SHAPE(1, 7, 3, 3)}, SHAPE(1, 7, 1, 1), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d, 1, {SHAPE(1, 7, 3, 3)}, SHAPE(1, 7, 1, 1), NONE, 0, 2, 5},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(1, 7, 1, 1), SHAPE(1, 7, 3, 3)}, SHAPE(1, 7, 3, 3), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d_backward, 2, {SHAPE(1, 7, 1, 1), SHAPE(1, 7, 3, 3)}, SHAPE(1, 7, 3, 3), NONE, 0, 2, 5},
        {TB_OP_max_pool2d, 1, {SHAPE(2, 5, 7, 33)}, SHAPE(2, 5, 3, 16), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d, 1, {SHAPE(2, 5, 7, 33)}, SHAPE(2, 5, 3, 16), NONE, 0, 2, 5},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(2, 5, 3, 16), SHAPE(2, 5, 7, 33)}, SHAPE(2, 5, 7, 33), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d_backward, 2, {SHAPE(2, 5, 3, 16), SHAPE(2, 5, 7, 33)}, SHAPE(2, 5, 7, 33), NONE, 0, 2, 5},
        {TB_OP_max_pool2d, 1, {SHAPE(1, 3, 5, 35)}, SHAPE(1, 3, 2, 17), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d, 1, {SHAPE(1, 3, 5, 35)}, SHAPE(1, 3, 2, 17), NONE, 0, 2, 5},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(1, 3, 2, 17), SHAPE(1, 3, 5, 35)}, SHAPE(1, 3, 5, 35), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d_backward, 2, {SHAPE(1, 3, 2, 17), SHAPE(1, 3, 5, 35)}, SHAPE(1, 3, 5, 35), NONE, 0, 2, 5},
        {TB_OP_max_pool2d, 1, {SHAPE(2, 9, 24, 24)}, SHAPE(2, 9, 12, 12), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d, 1, {SHAPE(2, 9, 24, 24)}, SHAPE(2, 9, 12, 12), NONE, 0, 2, 5},
        {TB_OP_max_pool2d_backward, 2, {SHAPE(2, 9, 12, 12), SHAPE(2, 9, 24, 24)}, SHAPE(2, 9, 24, 24), NONE, 0, 2, 5},
        {TB_OP_avg_pool2d_backward, 2, {SHAPE(2, 9, 12, 12), SHAPE(2, 9, 24, 24)}, SHAPE(2, 9, 24, 24), NONE, 0, 2, 5},
    };
    const tb_dtype dts[2] = {TB_BF16, TB_F16};
    int runs = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* the reductions as either vendor: f16 sum, mean and var at
         * avx512 take 256-bit halves on AMD only (half_red_simd.h,
         * var_simd.h; sum and mean over a non-last axis,
         * half_part_simd.h: a broken Intel path fails sum_f16_avx512) */
        const tb_op_id id = cases[i].op;
        const int vendors = id == TB_OP_sum || id == TB_OP_mean ||
                                    id == TB_OP_var
                                ? 2
                                : 1;
        for (int amd = 0; amd < vendors; amd++) {
            if (vendors == 2)
                tb_cpu_isa_amd_set(amd);
            for (int d = 0; d < 2; d++)
                runs += run_case(&cases[i], dts[d],
                                 0x16b0 + i * 2 + (size_t)d, 0, 0);
        }
        tb_cpu_isa_amd_set(-1);
    }
    print_message("# %d runs bit for bit (%zu cases, both dtypes)\n", runs,
                  sizeof cases / sizeof cases[0]);
    /* both dtypes, bf16 up to the avx512 level (run_case) */
    const pcase conv[] = {
        /* conv2d at avx512 (drv_conv.c's tb_cpu_conv2d_h16: the
         * f32 output-flat tiles, 16-bit stores): 16 channels, the image's
         * last vector partial; 8 + 4 channels without bias; values and
         * every pattern (NaN, infinities, overflow to infinity) */
        {TB_OP_conv2d, 3, {SHAPE(3, 1, 28, 28), SHAPE(16, 1, 3, 3), SHAPE(16)}, SHAPE(3, 16, 26, 26), NONE, 0, 0, 0},
        {TB_OP_conv2d, 3, {SHAPE(3, 1, 28, 28), SHAPE(16, 1, 3, 3), SHAPE(16)}, SHAPE(3, 16, 26, 26), NONE, 0, 0, 1},
        {TB_OP_conv2d_nobias, 2, {SHAPE(2, 2, 9, 21), SHAPE(12, 2, 3, 3)}, SHAPE(2, 12, 7, 19), NONE, 0, 0, 0},
        {TB_OP_conv2d_nobias, 2, {SHAPE(2, 2, 9, 21), SHAPE(12, 2, 3, 3)}, SHAPE(2, 12, 7, 19), NONE, 0, 0, 1},
        /* rows of whole vectors (OW 16, 32), padding 1 (groups: the
         * conv's padding) and 0 */
        {TB_OP_conv2d_nobias, 2, {SHAPE(2, 4, 16, 16), SHAPE(8, 4, 3, 3)}, SHAPE(2, 8, 16, 16), NONE, 0, 1, 0},
        {TB_OP_conv2d_nobias, 2, {SHAPE(2, 4, 16, 16), SHAPE(8, 4, 3, 3)}, SHAPE(2, 8, 16, 16), NONE, 0, 1, 1},
        {TB_OP_conv2d, 3, {SHAPE(2, 1, 6, 34), SHAPE(12, 1, 3, 3), SHAPE(12)}, SHAPE(2, 12, 4, 32), NONE, 0, 0, 1},
    };
    runs = 0;
    for (size_t i = 0; i < sizeof conv / sizeof conv[0]; i++)
        for (int d = 0; d < 2; d++)
            runs += run_case(&conv[i], dts[d], 0x16c0 + i * 2 + (size_t)d,
                             0, 0);
    print_message("# %d conv runs bit for bit (%zu cases, both dtypes)\n",
                  runs, sizeof conv / sizeof conv[0]);
}

/* softplus and pow (half.c's fused loops: softplus_vf.h's function;
 * pow's f32 loop in registers at avx512, on widened chunks at avx2),
 * as test_paths: every pattern as softplus's x, pow's b (random a)
 * and, in the second pow case, a's values in [-3, 3) (NaN for a
 * negative base's fractional b); softplus's beta 1 and 2 at the
 * default threshold (the fused loops), threshold 5 (the blocks); pow with b one row broadcast over
 * a's (half.c's rows), and with a in [0.1, 2) and b in [-2, 2) (the
 * benchmark's domain: every step on the fused loop's fast path). */
static void test_act_paths(void **state)
{
    (void)state;
    B = tb_backend_find("cpu");
    assert_non_null(B);
    const struct {
        pcase c;
        double beta, thr;
    } cases[] = {
        {{TB_OP_softplus, 1, {SHAPE(65536 + 29)}, SHAPE(65536 + 29), NONE, 0,
          0, 1}, 0, 0},
        {{TB_OP_softplus, 1, {SHAPE(3, 4133)}, SHAPE(3, 4133), NONE, 0, 0, 0},
         2, 0},
        {{TB_OP_softplus, 1, {SHAPE(65536 + 29)}, SHAPE(65536 + 29), NONE, 0,
          0, 1}, 0, 5},
        {{TB_OP_pow, 2, {SHAPE(65536 + 29), SHAPE(65536 + 29)},
          SHAPE(65536 + 29), NONE, 0, 0, 1}, 0, 0},
        {{TB_OP_pow, 2, {SHAPE(3, 4133), SHAPE(3, 4133)}, SHAPE(3, 4133),
          NONE, 0, 0, 0}, 0, 0},
        {{TB_OP_pow, 2, {SHAPE(7, 300), SHAPE(300)}, SHAPE(7, 300), NONE, 0, 0,
          0}, 0, 0},
        /* every step of 32 on the fused loop's fast path (the cases
         * above take mostly its redone steps) */
        {{TB_OP_pow, 2, {SHAPE(65536 + 29), SHAPE(65536 + 29)},
          SHAPE(65536 + 29), NONE, 0, 0, 3}, 0, 0},
    };
    const tb_dtype dts[2] = {TB_BF16, TB_F16};
    int runs = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int d = 0; d < 2; d++)
            runs += run_case(&cases[i].c, dts[d], 0xac70 + i * 2 + (size_t)d,
                             cases[i].beta, cases[i].thr);
    print_message("# %d runs bit for bit (%zu cases, both dtypes)\n", runs,
                  sizeof cases / sizeof cases[0]);
}

/* zeros, ones and full (half.c's half_fill: wmemset of 32-bit words of
 * two copies of the value, an odd element last) at every level and
 * thread count, odd and even lengths, across the threads' 64-element
 * parts: every element the value rounded once to the dtype, in a buffer
 * whose bytes started as 0x5a. */
static void test_fills(void **state)
{
    (void)state;
    B = tb_backend_find("cpu");
    assert_non_null(B);
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    const int64_t lens[] = {1, 7, 2047, 2048, 2049, 5 * 2048 + 3, 65536 + 29};
    /* 3, -2.5 (a word with its sign bits set), 0x3f3f in bf16, and one
     * beyond f16's range (inf) */
    const double vals[] = {3, -2.5, 0.74609375, 1e6};
    const tb_dtype dts[2] = {TB_BF16, TB_F16};
    const tb_op_id ops[3] = {TB_OP_zeros, TB_OP_ones, TB_OP_full};
    int runs = 0;
    for (int d = 0; d < 2; d++)
        for (int o = 0; o < 3; o++)
            for (int lv = TB_ISA_SCALAR; lv <= tb_cpu_isa_max(); lv++) {
                if (!tb_cpu_isa_built(lv))
                    continue;
                const tb_cpu_krow *r =
                    tb_cpu_krow_find(rows, nrows, ops[o], dts[d], lv);
                assert_non_null(r);
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                    for (size_t vi = 0; vi < (ops[o] == TB_OP_full ? 4u : 1u);
                         vi++) {
                        tb_params p = {0};
                        double v = ops[o] == TB_OP_zeros ? 0
                                   : ops[o] == TB_OP_ones ? 1
                                                          : vals[vi];
                        if (ops[o] == TB_OP_full) {
                            p.v[0] = vals[vi];
                            p.set = 1;
                        }
                        const uint16_t want = nar(dts[d], (float)v);
                        for (int t = 0; t < 2; t++) {
                            void *ctx = cpu_new(tb_cpu_isa_name(lv),
                                                t ? "2" : "1");
                            tb_tensor got;
                            const tb_shape sh = SHAPE(lens[li]);
                            assert_int_equal(
                                tb_tensor_create(&got, dts[d], &sh), 0);
                            memset(got.data, 0x5a, tb_tensor_nbytes(&got));
                            assert_int_equal(r->fn(ctx, NULL, &got, &p), 0);
                            B->destroy(ctx);
                            const uint16_t *g = got.data;
                            for (int64_t k = 0; k < lens[li]; k++)
                                if (g[k] != want)
                                    fail_msg("%s n %lld value %g threads %d "
                                             "[%lld]: %04x, want %04x",
                                             r->name, (long long)lens[li], v,
                                             t ? 2 : 1, (long long)k, g[k],
                                             want);
                            tb_tensor_destroy(&got);
                            runs++;
                        }
                    }
            }
    print_message("# %d fills checked\n", runs);
}

/* add_backward (half_bwd.c's hb_add_bwd: copies and column sums of the
 * 16-bit g; other broadcasts fall back to the f32 path) and sub, mul and
 * div backward (hb_bin: one operand full, the other a row; the level's
 * loops in half_part_simd.h) at every level and at 1 and 2 threads:
 * both gradients the bits of widen + the f32 C row + narrow (a NaN any
 * NaN), and by definition: the full operand's gradient its term of g
 * (g; -g; g times the other; g / b, -g a / b^2), a row operand's the
 * sums of its terms over the broadcast rows, in double within the f32
 * running sum's error (rows + 3 roundings of each term x 2^-24 x the
 * sum of |terms|) plus one rounding of the dtype (and half
 * its subnormal spacing).  Shapes: a bias row
 * [128, 256] + [256] (issue 34's case), leading 1s, a broadcast, both
 * full, rows wider than the 512-column blocks with a tail, and patterns
 * the paths do not serve ([50, 3] + [50, 1], a last axis of 1).  div's
 * b in +-[0.5, 3). */
static void test_add_backward(void **state)
{
    (void)state;
    B = tb_backend_find("cpu");
    assert_non_null(B);
    const struct {
        tb_shape g, a, b;
        int kind; /* 0 values in [-3, 3); 1 random patterns in g */
    } cs[] = {
        {SHAPE(128, 256), SHAPE(128, 256), SHAPE(256), 0},
        {SHAPE(3, 5, 300), SHAPE(3, 5, 300), SHAPE(1, 5, 300), 0},
        {SHAPE(7, 33), SHAPE(33), SHAPE(7, 33), 0},
        {SHAPE(64, 40), SHAPE(64, 40), SHAPE(64, 40), 1},
        {SHAPE(37, 1100), SHAPE(37, 1100), SHAPE(1100), 0},
        {SHAPE(37, 1100), SHAPE(1, 1100), SHAPE(37, 1100), 1},
        {SHAPE(50, 3), SHAPE(50, 3), SHAPE(50, 1), 0},
        {SHAPE(9, 1), SHAPE(9, 1), SHAPE(1), 0},
    };
    const tb_op_id ops[4] = {TB_OP_add_backward, TB_OP_sub_backward,
                             TB_OP_mul_backward, TB_OP_div_backward};
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    int runs = 0;
    for (int oi = 0; oi < 4; oi++)
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
        for (int d = 0; d < 2; d++) {
            const tb_op *op = tb_op_get(ops[oi]);
            const tb_cpu_krow *f32 = tb_cpu_krow_c(op->id, TB_F32);
            assert_non_null(f32);
            tb_params p = {0};
            tb_params_defaults(op, &p);
            const tb_dtype dt = d ? TB_F16 : TB_BF16;
            const tb_shape sh[3] = {cs[ci].g, cs[ci].a, cs[ci].b};
            tb_tensor in[3], fin[3], fout[2], want[2];
            uint64_t seed = 0xadd0 + ci * 2 + (uint64_t)d + 100 * oi;
            for (int i = 0; i < 3; i++) {
                assert_int_equal(tb_tensor_create(&in[i], dt, &sh[i]), 0);
                assert_int_equal(tb_tensor_create(&fin[i], TB_F32, &sh[i]), 0);
                uint16_t *h = in[i].data;
                float *f = fin[i].data;
                for (int64_t k = 0; k < tb_tensor_numel(&in[i]); k++) {
                    uint64_t r = splitmix64_next(&seed);
                    double u = (double)(r >> 11) * 0x1p-53 * 6 - 3;
                    if (ops[oi] == TB_OP_div_backward && i == 2)
                        u = u < 0 ? u * (2.5 / 3) - 0.5 : u * (2.5 / 3) + 0.5;
                    h[k] = cs[ci].kind && i == 0 ? (uint16_t)r
                                                 : nar(dt, (float)u);
                    f[k] = wid(dt, h[k]);
                }
            }
            void *cctx = cpu_new("scalar", "1");
            for (int o = 0; o < 2; o++) {
                assert_int_equal(
                    tb_tensor_create(&fout[o], TB_F32, &sh[1 + o]), 0);
                assert_int_equal(tb_tensor_create(&want[o], dt, &sh[1 + o]),
                                 0);
            }
            assert_int_equal(f32->fn(cctx, fin, fout, &p), 0);
            B->destroy(cctx);
            for (int o = 0; o < 2; o++) {
                const float *f = fout[o].data;
                uint16_t *w = want[o].data;
                for (int64_t k = 0; k < tb_tensor_numel(&want[o]); k++)
                    w[k] = nar(dt, f[k]);
            }
            const int64_t n = tb_tensor_numel(&in[0]);
            for (int lv = TB_ISA_SCALAR; lv <= tb_cpu_isa_max(); lv++) {
                if (!tb_cpu_isa_built(lv))
                    continue;
                const tb_cpu_krow *r =
                    tb_cpu_krow_find(rows, nrows, op->id, dt, lv);
                assert_non_null(r);
                /* t: threads 1, 2; then (2, 3) threads 1, 2 as the
                 * other vendor at the AVX-512 levels (f16 mul and div take
                 * the avx2 loop there on AMD only, half_bwd.c) */
                const int nt = lv >= TB_ISA_AVX512 ? 4 : 2;
                for (int t = 0; t < nt; t++) {
                    if (t >= 2)
                        tb_cpu_isa_amd_set(!tb_cpu_isa_amd());
                    void *ctx = cpu_new(tb_cpu_isa_name(lv),
                                        t & 1 ? "2" : "1");
                    tb_tensor got[2];
                    for (int o = 0; o < 2; o++) {
                        assert_int_equal(
                            tb_tensor_create(&got[o], dt, &sh[1 + o]), 0);
                        memset(got[o].data, 0x5a, tb_tensor_nbytes(&got[o]));
                    }
                    assert_int_equal(r->fn(ctx, in, got, &p), 0);
                    B->destroy(ctx);
                    if (t >= 2)
                        tb_cpu_isa_amd_set(-1);
                    for (int o = 0; o < 2; o++) {
                        const uint16_t *gv = got[o].data, *w = want[o].data;
                        const int64_t m = tb_tensor_numel(&got[o]);
                        for (int64_t k = 0; k < m; k++) {
                            /* div's db with b the row at a SIMD
                             * level: (g a) (1 / (b b)), two f32
                             * roundings off the C row's term before
                             * the sum (half_bwbin_simd.h): within 1
                             * ulp of the dtype, and the definition's
                             * tolerance below */
                            const int ulp1 =
                                ops[oi] == TB_OP_div_backward && o == 1 &&
                                lv > TB_ISA_SCALAR &&
                                tb_tensor_numel(&in[1]) == n &&
                                tb_tensor_numel(&in[2]) < n &&
                                (gv[k] ^ w[k]) < 0x8000 &&
                                (gv[k] > w[k] ? gv[k] - w[k]
                                              : w[k] - gv[k]) <= 1;
                            if (gv[k] != w[k] && !ulp1 &&
                                !(is_nan16(dt, gv[k]) && is_nan16(dt, w[k])))
                                fail_msg("%s case %zu threads %d%s "
                                         "d%c[%lld]: %04x, the f32 path "
                                         "%04x", r->name, ci, (t & 1) + 1,
                                         t >= 2 ? " other vendor" : "",
                                         o ? 'b' : 'a',
                                         (long long)k, gv[k], w[k]);
                            const tb_shape *os = &sh[1 + o];
                            const int64_t gl = sh[0].dim[sh[0].ndim - 1];
                            if (cs[ci].kind || os->dim[os->ndim - 1] != gl ||
                                sh[1].dim[sh[1].ndim - 1] != gl ||
                                sh[2].dim[sh[2].ndim - 1] != gl)
                                continue; /* (a column broadcast: the
                                           * f32 path's bits only) */
                            /* the definition: the terms summed over
                             * the rows of m (m == n: the term itself) */
                            const uint16_t *g = in[0].data,
                                           *av = in[1].data,
                                           *bv = in[2].data;
                            const int64_t na = tb_tensor_numel(&in[1]),
                                          nb = tb_tensor_numel(&in[2]);
                            double sum = 0, abs = 0;
                            for (int64_t i = k; i < n; i += m) {
                                const double gi = wid(dt, g[i]),
                                             ai = wid(dt, av[i % na]),
                                             bi = wid(dt, bv[i % nb]);
                                double tm = gi;
                                if (ops[oi] == TB_OP_sub_backward && o)
                                    tm = -gi;
                                else if (ops[oi] == TB_OP_mul_backward)
                                    tm = o ? gi * ai : gi * bi;
                                else if (ops[oi] == TB_OP_div_backward)
                                    tm = o ? -gi * ai / (bi * bi) : gi / bi;
                                sum += tm;
                                abs += fabs(tm);
                            }
                            const double tol =
                                (double)(n / m + 3) * 0x1p-24 * abs +
                                (dt == TB_F16 ? 0x1p-11 : 0x1p-8) *
                                    fabs(sum) +
                                (dt == TB_F16 ? 0x1p-25 : 0x1p-134);
                            if (fabs(wid(dt, gv[k]) - sum) > tol)
                                fail_msg("%s case %zu d%c[%lld]: %a, the sum "
                                         "%a", r->name, ci, o ? 'b' : 'a',
                                         (long long)k, wid(dt, gv[k]), sum);
                        }
                        tb_tensor_destroy(&got[o]);
                    }
                    runs++;
                }
            }
            for (int i = 0; i < 3; i++) {
                tb_tensor_destroy(&in[i]);
                tb_tensor_destroy(&fin[i]);
            }
            for (int o = 0; o < 2; o++) {
                tb_tensor_destroy(&fout[o]);
                tb_tensor_destroy(&want[o]);
            }
        }
    print_message("# add/sub/mul/div_backward: %d runs bit for bit (div's db "
                  "with b the row at a SIMD level: within 1 ulp)\n",
                  runs);
}

/* layer_norm_backward and rms_norm_backward (at avx512: norm_avx512.c's
 * rows on g, x, w of the dtype, dx narrowed as stored, dw and db from
 * f32 sums) against the whole path at every level: g, x, w widened, the
 * f32 row of the level, dx, dw (db) narrowed, bit for bit at threads 1
 * and 2.  Shapes: issue 34's [512, 256], rows of 16 + a tail, rows
 * shorter than 16, fewer rows than the 64 chunks; x of values in [-3,
 * 3), x with each row's first 8 values 60 below the rest (the shifted
 * sums' second pass), random patterns (NaN, infinities) as g and x.
 * batch_norm_backward and group_norm_backward (at avx512:
 * bnorm_avx512.c's f32 parts on the 16-bit values, dx, dw, db narrowed
 * once) the same way, x [N, C, S]: runs of S with vector tails and
 * flushes, issue 34's [32, 64, 256] with the prefetched runs, x past 16
 * of each 37 values 60 above the rest (the statistics' second pass),
 * patterns; groups of one and of several channels.  All four with g
 * near FLT_MIN (dx subnormal: the bf16 narrowing at avx512bf16). */
static void test_norm_bw(void **state)
{
    (void)state;
    B = tb_backend_find("cpu");
    assert_non_null(B);
    const struct {
        tb_op_id op;
        int64_t rows, D;
        int kind; /* 0 [-3, 3), 1 first 8 apart, 2 patterns, 3 as 0 with
                   * g scaled by 2^-126 (dx about FLT_MIN, subnormal
                   * among them: AVX512_BF16's narrowing's fallback) */
        int64_t S, G; /* the bnorm ops': x [rows, D, S]; G groups */
    } cs[] = {
        {TB_OP_layer_norm_backward, 512, 256, 0, 0, 0},
        {TB_OP_layer_norm_backward, 70, 37, 1, 0, 0},
        {TB_OP_layer_norm_backward, 9, 5, 0, 0, 0},
        {TB_OP_layer_norm_backward, 65, 300, 2, 0, 0},
        {TB_OP_rms_norm_backward, 512, 256, 0, 0, 0},
        {TB_OP_rms_norm_backward, 41, 257, 0, 0, 0},
        {TB_OP_rms_norm_backward, 3, 7, 2, 0, 0},
        {TB_OP_batch_norm_backward, 4, 5, 0, 63, 0},
        {TB_OP_batch_norm_backward, 3, 3, 1, 1600, 0},
        {TB_OP_batch_norm_backward, 2, 4, 2, 300, 0},
        {TB_OP_batch_norm_backward, 32, 64, 0, 256, 0},
        {TB_OP_group_norm_backward, 3, 6, 0, 49, 3},
        {TB_OP_group_norm_backward, 2, 8, 1, 256, 2},
        {TB_OP_group_norm_backward, 2, 4, 2, 33, 4},
        {TB_OP_group_norm_backward, 2, 6, 0, 77, 1},
        {TB_OP_layer_norm_backward, 64, 96, 3, 0, 0},
        {TB_OP_rms_norm_backward, 33, 80, 3, 0, 0},
        {TB_OP_batch_norm_backward, 3, 4, 3, 100, 0},
        {TB_OP_group_norm_backward, 2, 4, 3, 64, 2},
    };
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    int runs = 0;
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
        for (int d = 0; d < 2; d++) {
            const tb_dtype dt = d ? TB_F16 : TB_BF16;
            const tb_op *op = tb_op_get(cs[ci].op);
            const bool bn = cs[ci].S > 0;
            const int nout =
                cs[ci].op == TB_OP_rms_norm_backward ? 2 : 3;
            const tb_shape xs = bn ? SHAPE(cs[ci].rows, cs[ci].D, cs[ci].S)
                                   : SHAPE(cs[ci].rows, cs[ci].D);
            const tb_shape ws = SHAPE(cs[ci].D);
            const tb_shape sh[3] = {xs, xs, ws};
            tb_params p = {0}, q;
            tb_params_defaults(op, &p);
            if (cs[ci].G)
                assert_int_equal(tb_params_set(op, &p, "num_groups",
                                               (double)cs[ci].G, NULL, 0),
                                 0);
            q = p; /* eps held in the dtype, as half_run holds it */
            for (int i = 0; i < op->n_params; i++)
                if (op->params[i].kind == TB_PARAM_FLOAT) {
                    q.v[i] = tb_dtype_round(dt, q.v[i]);
                    q.set |= 1u << i;
                }
            tb_tensor in[3], fin[3];
            uint64_t seed = 0x1a0 + ci * 2 + (uint64_t)d;
            for (int i = 0; i < 3; i++) {
                assert_int_equal(tb_tensor_create(&in[i], dt, &sh[i]), 0);
                assert_int_equal(tb_tensor_create(&fin[i], TB_F32, &sh[i]), 0);
                uint16_t *h = in[i].data;
                float *f = fin[i].data;
                for (int64_t k = 0; k < tb_tensor_numel(&in[i]); k++) {
                    uint64_t r = splitmix64_next(&seed);
                    double v = (double)(r >> 11) * 0x1p-53 * 6 - 3;
                    if (cs[ci].kind == 1 && i == 1 &&
                        (bn ? k % 37 >= 16 : k % cs[ci].D >= 8))
                        v += 60;
                    if (cs[ci].kind == 3 && i == 0)
                        v *= 0x1p-126;
                    h[k] = cs[ci].kind == 2 && i < 2 && k % 5 == 1
                               ? (uint16_t)r
                               : nar(dt, (float)v);
                    f[k] = wid(dt, h[k]);
                }
            }
            for (int lv = TB_ISA_SCALAR; lv <= tb_cpu_isa_max(); lv++) {
                if (!tb_cpu_isa_built(lv))
                    continue;
                const tb_cpu_krow *r =
                    tb_cpu_krow_find(rows, nrows, op->id, dt, lv);
                const tb_cpu_krow *r32 =
                    tb_cpu_krow_find(rows, nrows, op->id, TB_F32, lv);
                assert_non_null(r);
                assert_non_null(r32);
                tb_tensor fout[3], want[3];
                for (int o = 0; o < nout; o++) {
                    assert_int_equal(
                        tb_tensor_create(&fout[o], TB_F32, &sh[o ? 2 : 0]), 0);
                    assert_int_equal(
                        tb_tensor_create(&want[o], dt, &sh[o ? 2 : 0]), 0);
                }
                void *fctx = cpu_new(tb_cpu_isa_name(lv), "1");
                assert_int_equal(r32->fn(fctx, fin, fout, &q), 0);
                B->destroy(fctx);
                for (int o = 0; o < nout; o++) {
                    const float *f = fout[o].data;
                    uint16_t *w = want[o].data;
                    for (int64_t k = 0; k < tb_tensor_numel(&want[o]); k++)
                        w[k] = nar(dt, f[k]);
                }
                for (int t = 0; t < 2; t++) {
                    void *ctx = cpu_new(tb_cpu_isa_name(lv), t ? "2" : "1");
                    tb_tensor got[3];
                    for (int o = 0; o < nout; o++) {
                        assert_int_equal(
                            tb_tensor_create(&got[o], dt, &sh[o ? 2 : 0]), 0);
                        memset(got[o].data, 0x5a, tb_tensor_nbytes(&got[o]));
                    }
                    assert_int_equal(r->fn(ctx, in, got, &p), 0);
                    B->destroy(ctx);
                    for (int o = 0; o < nout; o++) {
                        const uint16_t *gv = got[o].data, *w = want[o].data;
                        for (int64_t k = 0; k < tb_tensor_numel(&got[o]); k++)
                            if (gv[k] != w[k] &&
                                !(is_nan16(dt, gv[k]) && is_nan16(dt, w[k])))
                                fail_msg("%s case %zu threads %d out %d "
                                         "[%lld]: %04x, the f32 path %04x",
                                         r->name, ci, t + 1, o, (long long)k,
                                         gv[k], w[k]);
                        tb_tensor_destroy(&got[o]);
                    }
                    runs++;
                }
                for (int o = 0; o < nout; o++) {
                    tb_tensor_destroy(&fout[o]);
                    tb_tensor_destroy(&want[o]);
                }
            }
            for (int i = 0; i < 3; i++) {
                tb_tensor_destroy(&in[i]);
                tb_tensor_destroy(&fin[i]);
            }
        }
    print_message("# layer_norm_backward, rms_norm_backward, "
                  "batch_norm_backward, group_norm_backward: %d runs bit "
                  "for bit\n", runs);
}

/* var's 16-bit lanes (ops_simd.h's tb_cpu_var16_lane_*, var_simd.h)
 * against the f32 row of the same level on the widened lane, bit for
 * bit in f32, before the narrowing that test_paths sees (which hides
 * most changes in the f32 sums' order): lanes of whole chunks, blocks
 * and tails, around several means and spreads and with magnitudes
 * spread over 2^16, corrections 0 and 1. */
typedef float (*var16_fn)(const uint16_t *, int64_t, int64_t, tb_dtype);
static void test_var16_lane_bits(void **state)
{
    (void)state;
    B = tb_backend_find("cpu");
    assert_non_null(B);
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    struct {
        int lv;
        var16_fn fn;
    } lanes[2] = {{-1, NULL}, {-1, NULL}};
#if TB_CPU_HAVE_AVX2
    lanes[0].lv = TB_ISA_AVX2, lanes[0].fn = tb_cpu_var16_lane_avx2;
#endif
#if TB_CPU_HAVE_AVX512
    lanes[1].lv = TB_ISA_AVX512, lanes[1].fn = tb_cpu_var16_lane_avx512;
#endif
    const int64_t lens[] = {1, 255, 256, 4096, 3 * 4096 + 300, 65536 + 29};
    const double mid[] = {0, 3, 1000}, spread[] = {1, 0.01, 100};
    const tb_dtype dts[2] = {TB_BF16, TB_F16};
    const tb_op *op = tb_op_get(TB_OP_var);
    int runs = 0;
    uint64_t st = 0x9e3779b97f4a7c15ull;
    for (int l = 0; l < 2; l++) {
        if (!lanes[l].fn || lanes[l].lv > tb_cpu_isa_max())
            continue;
        const tb_cpu_krow *r =
            tb_cpu_krow_find(rows, nrows, TB_OP_var, TB_F32, lanes[l].lv);
        assert_non_null(r);
        void *ctx = cpu_new(tb_cpu_isa_name(lanes[l].lv), "1");
        for (int d = 0; d < 2; d++)
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                for (int m = 0; m < 4; m++) {
                    const int64_t n = lens[li];
                    const tb_shape sh = SHAPE(n);
                    tb_params p = {0};
                    assert_int_equal(
                        tb_params_set(op, &p, "correction", 0, NULL, 0), 0);
                    tb_params_defaults(op, &p);
                    tb_shape osh;
                    char err[256];
                    assert_int_equal(tb_op_infer(op, &sh, 1, &p, &osh, err,
                                                 sizeof err),
                                     0);
                    tb_tensor h, f, out;
                    assert_int_equal(tb_tensor_create(&h, dts[d], &sh), 0);
                    assert_int_equal(tb_tensor_create(&f, TB_F32, &sh), 0);
                    assert_int_equal(tb_tensor_create(&out, TB_F32, &osh),
                                     0);
                    uint16_t *hx = h.data;
                    float *fx = f.data;
                    for (int64_t k = 0; k < n; k++) {
                        st = st * 6364136223846793005ull +
                             1442695040888963407ull;
                        const double u =
                            (double)(st >> 11) * 0x1p-53 * 2 - 1;
                        /* m 3: magnitudes 2^-8 to 2^8 (sums that round
                         * in f32, so their order shows) */
                        hx[k] = nar(dts[d],
                                    m == 3 ? (float)ldexp(
                                                 u, (int)(st >> 3 & 15) - 8)
                                           : (float)(mid[m] +
                                                     spread[m] * u));
                        fx[k] = wid(dts[d], hx[k]);
                    }
                    for (int corr = 0; corr < 2 && corr < n; corr++) {
                        /* (the shape does not depend on the correction) */
                        assert_int_equal(tb_params_set(op, &p, "correction",
                                                       corr, NULL, 0),
                                         0);
                        assert_int_equal(r->fn(ctx, &f, &out, &p), 0);
                        const float want = *(const float *)out.data;
                        /* as either vendor: f16 at avx512 takes
                         * var_simd.h's ymm halves on AMD only */
                        for (int amd = 0; amd <= 1; amd++) {
                            tb_cpu_isa_amd_set(amd);
                            const float got =
                                lanes[l].fn(hx, n, corr, dts[d]);
                            if (memcmp(&got, &want, sizeof got))
                                fail_msg("var16 lane %s %s n %lld mean %g "
                                         "corr %d amd %d: %a, f32 row %a",
                                         tb_cpu_isa_name(lanes[l].lv),
                                         tb_dtype_name(dts[d]),
                                         (long long)n, m < 3 ? mid[m] : -1,
                                         corr, amd, (double)got,
                                         (double)want);
                            runs++;
                        }
                        tb_cpu_isa_amd_set(-1);
                    }
                    tb_tensor_destroy(&h);
                    tb_tensor_destroy(&f);
                    tb_tensor_destroy(&out);
                }
        B->destroy(ctx);
    }
    print_message("# %d var lanes checked\n", runs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_paths, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_act_paths, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_add_backward, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_var16_lane_bits, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_fills, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_norm_bw, leak_setup,
                                        leak_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
