/* checkasm, part 6: the bf16/f16 rows of the fused element-wise ops
 * (half_simd.h's loops: add, sub, mul, div, add_relu, maximum, minimum,
 * the scalar forms, leaky_relu, sqrt, rsqrt, hardswish, relu and the
 * activations of vmath.h) bit for bit against their C rows (the binary
 * ops also with b one row broadcast over a's: half.c's row loop against
 * the C row's whole-tensor f32 path; and with b one value a row of 10,
 * [..., 10] op [..., 1]: half_part_short.h's blocks for add, sub, mul
 * and div).
 *
 * rows.c checks every row against its C row within the op's tolerance,
 * which a result flushed to zero passes; these rows promise more: each
 * result is rounded once as ops/half.h's tb_f32_to_bf16 / tb_f32_to_f16
 * round it (subnormals kept, ties to even, NaN quiet), so their outputs
 * are the C row's exactly.  Inputs: every 16-bit pattern as a (NaN,
 * infinities, signed zeros, subnormals; exp, sigmoid, silu, the gelus
 * and tanh have f32 results below FLT_MIN among them), random patterns
 * as b (products and quotients below FLT_MIN), 29 more for a vector
 * tail.  Each op's C outputs must hold bf16/f16 subnormals (log's,
 * sqrt's, rsqrt's and x +- k's cannot): the inputs reach the
 * narrowing's subnormal path.
 * The activations in f16 are left out: the C row's f32 functions
 * (math_c.c) and vmath.h's vector ones may differ in the last f32 bit,
 * which f16's 11 bits can show (exp f16: one pattern in 65536, 1 ulp);
 * rows.c holds them to the tolerance, test_half to widen + the same
 * level's f32 function + narrow, bit for bit.  In bf16 every pattern
 * of a unary op is an input here: its rows are the C row's on all of
 * them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cpu/isa.h"
#include "backends/cpu/kreg.h"
#include "ops/half.h"
#include "ops/op.h"
#include "ops/tensor.h"

#include "checkasm.h"

/* IEEE operations and relu, then (from HR_VM on) vmath.h's functions;
 * the binary ones (the first HR_BIN) broadcast too; from HR_K on a
 * constant (the scalar forms' scalar, leaky_relu's alpha) */
enum { HR_BIN = 7, HR_K = 7, HR_VM = 16 };
static const tb_op_id hr_ops[] = {
    TB_OP_add,        TB_OP_sub,        TB_OP_mul,        TB_OP_div,
    TB_OP_add_relu,   TB_OP_maximum,    TB_OP_minimum,    TB_OP_add_scalar,
    TB_OP_sub_scalar, TB_OP_mul_scalar, TB_OP_div_scalar, TB_OP_leaky_relu,
    TB_OP_sqrt,       TB_OP_rsqrt,      TB_OP_hardswish,  TB_OP_relu,
    TB_OP_exp,        TB_OP_log,        TB_OP_tanh,
    TB_OP_sigmoid,    TB_OP_gelu,       TB_OP_gelu_tanh,  TB_OP_silu};
/* the constants: not the dtype's (each row rounds it), a small one */
static const double hr_k[] = {-0.3, 0.3, -0.3, 0.3, -0.07};

static void *hr_instance(int lv)
{
    const char *vals[2] = {tb_cpu_isa_name(lv), "1"};
    void *ctx = NULL;
    char err[256];
    if (B->create(B, vals, &ctx, err, sizeof err))
        fail_msg("cpu create isa=%s: %s", vals[0], err);
    return ctx;
}

/* a 16-bit pattern that is a NaN of dt */
static bool hr_nan(tb_dtype dt, uint16_t h)
{
    return dt == TB_F16 ? (h & 0x7c00) == 0x7c00 && (h & 0x3ff)
                        : (h & 0x7f80) == 0x7f80 && (h & 0x7f);
}

/* a nonzero subnormal of dt */
static bool hr_subn(tb_dtype dt, uint16_t h)
{
    return dt == TB_F16 ? !(h & 0x7c00) && (h & 0x3ff)
                        : !(h & 0x7f80) && (h & 0x7f);
}

/* results with no bf16/f16 subnormal among them: log's, sqrt's and
 * rsqrt's (|result| >= ~1e-20 for nonzero inputs), x +- k's */
static bool hr_no_subn(tb_op_id id)
{
    return id == TB_OP_log || id == TB_OP_sqrt || id == TB_OP_rsqrt ||
           id == TB_OP_add_scalar || id == TB_OP_sub_scalar;
}

/* Every SIMD row of (op, dt) on in against the C row's want; the number
 * of rows run. */
static int hr_rows(const tb_op *op, tb_dtype dt, const tb_tensor *in,
                   const tb_tensor *want, tb_tensor *got, const tb_params *p,
                   int64_t brow, int64_t bcol)
{
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    const int64_t n = tb_tensor_numel(want);
    const uint16_t *w = want->data, *g = got->data, *a = in[0].data;
    const uint16_t *b = op->n_in > 1 ? in[1].data : NULL;
    int ran = 0;
    for (size_t r = 0; r < nrows; r++) {
        if (rows[r].op != op->id || rows[r].dtype != dt ||
            rows[r].min_isa == TB_ISA_SCALAR || rows[r].min_isa >= n_levels())
            continue;
        void *ctx = hr_instance(rows[r].min_isa);
        memset(got->data, 0x5a, (size_t)n * 2);
        assert_int_equal(rows[r].fn(ctx, in, got, p), 0);
        B->destroy(ctx);
        for (int64_t i = 0; i < n; i++) {
            const int64_t ib = bcol ? i / bcol : brow ? i % brow : i;
            if (g[i] != w[i] && !(hr_nan(dt, g[i]) && hr_nan(dt, w[i])))
                fail_msg("%s%s [%lld] (%04x, %04x): %04x, the C row %04x",
                         rows[r].name,
                         bcol   ? " (b a value a row)"
                         : brow ? " (b broadcast)"
                                : "",
                         (long long)i, a[i], b ? b[ib] : 0, g[i], w[i]);
        }
        ran++;
    }
    return ran;
}

void test_half_rows_exact(void **state)
{
    (void)state;
    enum { N = 65536 + 29, BR = 256, BL = 259, CR = 6555, CL = 10 };
    void *cctx = hr_instance(TB_ISA_SCALAR);
    const tb_dtype dts[2] = {TB_BF16, TB_F16};
    int ran = 0;
    for (int di = 0; di < 2; di++)
        for (size_t k = 0; k < sizeof hr_ops / sizeof hr_ops[0]; k++) {
            const tb_dtype dt = dts[di];
            const tb_op *op = tb_op_get(hr_ops[k]);
            if (dt == TB_F16 && k >= HR_VM)
                continue;
            const tb_cpu_krow *c = tb_cpu_krow_c(op->id, dt);
            assert_non_null(c);
            tb_params p = {0};
            tb_params_defaults(op, &p);
            if (k >= HR_K && k < HR_K + sizeof hr_k / sizeof hr_k[0])
                p.v[0] = hr_k[k - HR_K];
            /* each pattern as a, random b; then (binary ops) a [BR, BL]
             * of the patterns and random ones, b [BL] broadcast; a [CR,
             * CL], b [CR, 1] */
            for (int bc = 0; bc < 1 + 2 * (k < HR_BIN); bc++) {
                tb_shape sh = bc == 2 ? S(2, CR, CL)
                              : bc    ? S(2, BR, BL)
                                      : S(1, N);
                tb_shape shb = bc == 2 ? S(2, CR, 1) : bc ? S(1, BL) : sh;
                const int64_t n = bc == 2 ? CR * CL : bc ? BR * BL : N;
                const int64_t nb = bc == 2 ? CR : bc ? BL : N;
                tb_tensor in[2], want, got;
                for (int i = 0; i < op->n_in; i++)
                    assert_int_equal(
                        tb_tensor_create(&in[i], dt, i ? &shb : &sh), 0);
                assert_int_equal(tb_tensor_create(&want, dt, &sh), 0);
                assert_int_equal(tb_tensor_create(&got, dt, &sh), 0);
                rng_seed(0x16b + (uint64_t)k * 2 + (uint64_t)di);
                uint16_t *a = in[0].data;
                uint16_t *b = op->n_in > 1 ? in[1].data : NULL;
                for (int64_t i = 0; i < n; i++) {
                    a[i] = (uint16_t)(i < 65536 ? (uint64_t)i : rng_next());
                    if (b && i < nb)
                        b[i] = (uint16_t)rng_next();
                }
                /* maximum's and minimum's ties of distinct patterns:
                 * (+0, -0), (-0, +0) */
                if (b && !bc) {
                    b[0] = 0x8000;
                    b[0x8000] = 0;
                }
                assert_int_equal(c->fn(cctx, in, &want, &p), 0);
                const uint16_t *w = want.data;
                int64_t nsub = 0;
                for (int64_t i = 0; i < n; i++)
                    nsub += hr_subn(dt, w[i]);
                if (!bc && !hr_no_subn(op->id) && nsub == 0)
                    fail_msg("%s: no subnormal result in the inputs", c->name);
                ran += hr_rows(op, dt, in, &want, &got, &p, bc == 1 ? BL : 0,
                               bc == 2 ? CL : 0);
                if (!bc)
                    print_message("# %s %s: %lld subnormal results\n",
                                  op->name, tb_dtype_name(dt),
                                  (long long)nsub);
                for (int i = 0; i < op->n_in; i++)
                    tb_tensor_destroy(&in[i]);
                tb_tensor_destroy(&want);
                tb_tensor_destroy(&got);
            }
        }
    print_message("# %d SIMD rows bit for bit\n", ran);
    B->destroy(cctx);
}

/* arange in bf16 and f16: every SIMD row (half_simd.h's hs_arange: in
 * arange.h's exact case a float loop, else the portable loop's
 * operations) against the C row, bit for bit, at 1 and 2 threads (a
 * part's loop starting past 0), misaligned canary-guarded outputs; the
 * C row against the definition, the double start + i step (start and
 * step held in the dtype) rounded to float and narrowed once.  Cases:
 * exact ones (0, 1; steps that are powers of 2 and others), zeros of
 * both signs, ranges that leave the exact case (past 2^24 times the
 * quantum: the float loop would round its sums), f16 overflow to inf
 * (the f16 rows fill from the saturation on: up and down, at and past a
 * vector's edge, a range starting at -inf), bf16 near 2^100, f16 infinite parameters, subnormal results. */
void test_half_arange(void **state)
{
    (void)state;
    static const double cs[][2] = {
        {0, 1},          {-3.5, 0.1},     {1e6, -7.25},    {0.1, 1e-3},
        {-0.0, 0},       {-0.0, -0.0},    {0, -0.0},       {5, -0.0},
        {-20, 0.25},     {65000, 1},      {-1000, 0.3},    {1e-5, 1e-7},
        {1e30, 1e29},    {1e-38, 1e-39},  {256, 1},        {2048, 1},
        {-4096, 3},      {0, 0x1p-14},    {1, 0x1p-20},    {0, -1},
        {-1000, 7},      {65519, 0.5},    {-65600, 1}};
    static const int64_t ns[] = {1, 31, 64, 65, 127, 128, 129, 1000, 70001};
    const tb_dtype dts[2] = {TB_BF16, TB_F16};
    const tb_op *op = tb_op_get(TB_OP_arange);
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    int ran = 0;
    for (int di = 0; di < 2; di++)
        for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++)
            for (size_t si = 0; si < sizeof ns / sizeof ns[0]; si++) {
                const tb_dtype dt = dts[di];
                const int64_t n = ns[si];
                tb_params p = {0};
                char err[256];
                assert_int_equal(tb_params_set(op, &p, "start", cs[k][0],
                                               err, sizeof err), 0);
                assert_int_equal(tb_params_set(op, &p, "step", cs[k][1],
                                               err, sizeof err), 0);
                tb_params_defaults(op, &p);
                const double s0 = tb_dtype_round(dt, cs[k][0]);
                const double st = tb_dtype_round(dt, cs[k][1]);
                tb_shape sh = S(1, (int)n);
                tb_tensor want, got;
                assert_int_equal(tb_tensor_create(&want, dt, &sh), 0);
                tb_tensor_init(&got, dt, &sh);
                const tb_cpu_krow *c = tb_cpu_krow_c(op->id, dt);
                assert_non_null(c);
                void *cctx = hr_instance(TB_ISA_SCALAR);
                assert_int_equal(c->fn(cctx, NULL, &want, &p), 0);
                B->destroy(cctx);
                const uint16_t *w = want.data;
                for (int64_t i = 0; i < n; i++) {
                    const float f = (float)(s0 + (double)i * st);
                    const uint16_t d = dt == TB_BF16 ? tb_f32_to_bf16(f)
                                                     : tb_f32_to_f16(f);
                    if (w[i] != d && !(hr_nan(dt, w[i]) && hr_nan(dt, d)))
                        fail_msg("%s case %zu n %lld [%lld]: %04x, the "
                                 "definition %04x", c->name, k,
                                 (long long)n, (long long)i, w[i], d);
                }
                for (size_t r = 0; r < nrows; r++)
                    for (int th = 1; th <= 2; th++) {
                        if (rows[r].op != op->id || rows[r].dtype != dt ||
                            (rows[r].min_isa == TB_ISA_SCALAR && th == 1) ||
                            rows[r].min_isa >= n_levels())
                            continue;
                        char ths[12];
                        snprintf(ths, sizeof ths, "%d", th);
                        const char *vals[2] = {
                            tb_cpu_isa_name(rows[r].min_isa), ths};
                        void *ctx = NULL;
                        if (B->create(B, vals, &ctx, err, sizeof err)) {
                            if (th > 1)
                                continue; /* one CPU: no second thread */
                            fail_msg("cpu create: %s", err);
                        }
                        gbuf g;
                        got.data = gb_new(&g, (size_t)n * 2, misalign(dt));
                        assert_int_equal(rows[r].fn(ctx, NULL, &got, &p), 0);
                        B->destroy(ctx);
                        const uint16_t *o = got.data;
                        for (int64_t i = 0; i < n; i++)
                            if (o[i] != w[i] &&
                                !(hr_nan(dt, o[i]) && hr_nan(dt, w[i])))
                                fail_msg("%s threads %d case %zu n %lld "
                                         "[%lld]: %04x, the C row %04x",
                                         rows[r].name, th, k, (long long)n,
                                         (long long)i, o[i], w[i]);
                        assert_true(gb_intact(&g));
                        gb_free(&g);
                        ran++;
                    }
                tb_tensor_destroy(&want);
            }
    print_message("# arange bf16/f16: %d row runs bit for bit\n", ran);
    assert_true(ran > 0);
}
