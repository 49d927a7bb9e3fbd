/* Oracle tests for the ops of issue 3 (everything after the first ten ops
 * of the table, which test_ops.c and test_cpu.c cover).
 *
 *  1. oracle_<op>: every vector of tests/data/oracle_vectors.h (NumPy,
 *     mpmath and PyTorch agreed on it; scripts/gen_oracle.py), f32 and
 *     f64:
 *       - the reference kernel (op->ref) must match it to
 *         |got - want| <= 1e-12 |want| + ATOL, ATOL = 1e-300 for
 *         element-wise ops (each output is one double evaluation, so it
 *         must be relatively accurate however small) and 1e-12 for ops
 *         that sum (var, softmax, linear, conv2d, avg_pool2d: NumPy sums
 *         in another order, which matters where a sum cancels);
 *       - the op's portable C row (kreg.h's tb_cpu_krow_c: the one row
 *         of level scalar per op and dtype), and the cpu backend's kernel
 *         found through its own lookup if that is a different one, must
 *         match it within the op's tolerance from the op table, the same
 *         check the harness applies: |got - want| <= atol sqrt(reduce_len)
 *         + rtol |want|, with want rounded to the case dtype first (so an
 *         f32 result that overflows is inf, one that underflows is 0 or
 *         subnormal), NaN only against NaN, inf only against itself; and
 *         each call must count exactly one kernel launch.
 *  2. coverage: every new op has vectors in both dtypes and a C row
 *     (named <op>_<dtype>_c or _scalar); every vector names a known op.
 *  3. special_*: inf, NaN, -0.0, huge and tiny inputs for exp, log, tanh,
 *     sigmoid (and gelu, silu, softplus, rsqrt), reference and cpu kernel,
 *     both dtypes, with hand-written expectations (signs of zeros too).
 *  4. strided: reference kernels on transposed and stride-0 views give the
 *     bit-identical result of a contiguous copy.
 *  5. shape_*: shape rules of every new op, good and bad (bad ones fail
 *     with TB_ESHAPE/TB_EPARAM and a message naming the op), parameter
 *     bounds, cost models against hand counts.
 *  6. kernel_errors: the cpu kernels refuse bad operands.
 *  7. seeds_config: configs/seeds.json loads, plans, and holds the
 *     issue's matrix (every part the op table can express).
 *
 * Every test's leak_teardown checks that it freed all tensor memory.
 * Run one area with: test_oracle --filter 'oracle_gelu'. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kreg.h"
#include "harness/config.h"
#include "harness/plan.h"
#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/ref.h"
#include "ops/tensor.h"
#include "tests/data/oracle_vectors.h"

extern const tb_backend tb_backend_cpu;
static const tb_backend *const B = &tb_backend_cpu;

#define REF_RTOL 1e-12
#define SEED UINT64_C(0x5a17e0c3b2d49f86)

/* The ops test_ops.c / test_cpu.c own; every other op is tested here. */
static const char *const base_ops[] = {
    "add", "sub", "mul", "div", "relu", "sum", "mean", "matmul",
    "transpose", "log_softmax",
};

/* Ops with their own test files: creation ops (test_create.c), in-place
 * forms and unfused compositions (test_forms.c), optimizer steps
 * (test_optim.c), svd/qr/eigh (test_linalg.c), calibration ops
 * (test_calib.c).  Each of those checks that
 * every op of its categories has oracle vectors in both dtypes. */
static bool tested_elsewhere(const tb_op *op)
{
    /* exact, f32 only: NumPy's int64 GEMM (tests/test_cli.py t_int8),
     * the integer reference at every level (checkasm) */
    if (op->id == TB_OP_matmul_int8)
        return true;
    /* embedding and dropout: test_embed.c (PyTorch's F.embedding; the
     * random stream's definition) */
    if (op->id == TB_OP_embedding || op->id == TB_OP_dropout)
        return true;
    /* batch_norm and group_norm: test_norm.c (norm_vectors.h: PyTorch's
     * F.batch_norm, running statistics updated, and F.group_norm) */
    if (op->id == TB_OP_batch_norm || op->id == TB_OP_group_norm)
        return true;
    switch (op->category) {
    case TB_CAT_CREATION:
    case TB_CAT_INPLACE:
    case TB_CAT_OPTIMIZER:
    case TB_CAT_LINALG:
    case TB_CAT_UNFUSED:
    case TB_CAT_CALIB:
    case TB_CAT_BACKWARD: /* test_backward.c */
    case TB_CAT_WORKLOAD: /* test_autograd.c */
    case TB_CAT_TRANSFER: /* copy's kernel on cpu; test_transfers.c */
    case TB_CAT_ATTENTION: /* test_attn.c: sdpa's own vectors (NumPy and
                            * PyTorch); causal_mask exact vs its reference */
    case TB_CAT_CONTRACTION: /* test_einsum.c: numpy.einsum's vectors */
        return true;
    default:
        return false;
    }
}

static bool is_base_op(const char *name)
{
    for (size_t i = 0; i < sizeof base_ops / sizeof base_ops[0]; i++)
        if (strcmp(base_ops[i], name) == 0)
            return true;
    return false;
}

/* ---- fixtures ------------------------------------------------------------ */

/* Fixtures: leak_setup/leak_teardown (testutil.h). */

/* ---- helpers ------------------------------------------------------------- */

/* splitmix64: deterministic inputs in [-1, 1). */
static uint64_t rng_state = SEED;

static double rng_uniform(void)
{
    uint64_t z = splitmix64_next(&rng_state);
    return (double)(z >> 11) * 0x1p-53 * 2.0 - 1.0;
}

static void tensor_new(tb_tensor *t, tb_dtype dt, tb_shape s)
{
    assert_int_equal(tb_tensor_create(t, dt, &s), 0);
}

static void destroy_all(tb_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        tb_tensor_destroy(&t[i]);
}

static const tb_op *op_find(const char *name)
{
    const tb_op *op = tb_op_find(name);
    if (!op)
        fail_msg("op '%s' not in the table", name);
    return op;
}

typedef struct tparam {
    const char *name;
    double v;
} tparam;

/* Parameters through the public setter, which must accept them. */
static tb_params params_make(const tb_op *op, const tparam *list, int n)
{
    tb_params p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < n && list && list[i].name; i++) {
        char err[256] = "";
        int rc = tb_params_set(op, &p, list[i].name, list[i].v, err,
                               sizeof err);
        if (rc)
            fail_msg("%s: tb_params_set(%s=%g): %s", op->name,
                     list[i].name, list[i].v, err);
    }
    return p;
}

/* Output shapes from the shape rule, which must accept the inputs. */
static void infer(const tb_op *op, const tb_tensor *in, const tb_params *p,
                  tb_shape *osh)
{
    tb_shape ish[TB_MAX_INPUTS];
    char err[256] = "";
    for (int i = 0; i < op->n_in; i++)
        ish[i] = tb_tensor_shape(&in[i]);
    int rc = tb_op_infer(op, ish, op->n_in, p, osh, err, sizeof err);
    if (rc)
        fail_msg("%s: tb_op_infer: %s (%s)", op->name, err,
                 tb_strerror(rc));
}

/* Runs op->ref into new f64 outputs filled with NaN (so an element the
 * kernel never writes shows up); the caller destroys them. */
static int run_ref(const tb_op *op, const tb_tensor *in, const tb_params *p,
                   tb_tensor *out)
{
    tb_shape osh[TB_MAX_OUTPUTS];
    infer(op, in, p, osh);
    for (int i = 0; i < op->n_out; i++) {
        tensor_new(&out[i], TB_F64, osh[i]);
        double *o = out[i].data;
        for (int64_t k = 0; k < tb_tensor_numel(&out[i]); k++)
            o[k] = NAN;
    }
    return op->ref(in, out, p);
}

/* A cpu backend instance with every axis at its default. */
static void *cpu_new(void)
{
    tb_axis ax[TB_MAX_AXES];
    int n = B->axes(B, ax, TB_MAX_AXES);
    const char *vals[TB_MAX_AXES];
    for (int i = 0; i < n; i++)
        vals[i] = ax[i].values[ax[i].def];
    void *ctx = NULL;
    char err[256] = "";
    int rc = B->create(B, vals, &ctx, err, sizeof err);
    if (rc)
        fail_msg("cpu create: %s", err);
    return ctx;
}

static uint64_t launches(void *ctx)
{
    tb_backend_counters c;
    tb_backend_counters_read(B, ctx, &c);
    return c.kernel_launches;
}

/* The portable C row of (op, dt) (kreg.h), named <op>_<dtype>_c or
 * <op>_<dtype>_scalar. */
static tb_kernel_fn c_kernel(const tb_op *op, tb_dtype dt)
{
    const tb_cpu_krow *r = tb_cpu_krow_c(op->id, dt);
    if (!r)
        fail_msg("%s %s: the cpu backend has no C row", op->name,
                 tb_dtype_name(dt));
    char want_c[64], want_s[64];
    snprintf(want_c, sizeof want_c, "%s_%s_c", op->name, tb_dtype_name(dt));
    snprintf(want_s, sizeof want_s, "%s_%s_scalar", op->name,
             tb_dtype_name(dt));
    if (strcmp(r->name, want_c) && strcmp(r->name, want_s))
        fail_msg("%s %s: C row named %s", op->name, tb_dtype_name(dt),
                 r->name);
    return r->fn;
}

/* The cpu backend's kernel for (op, dt) through its own lookup: the best
 * row of the instance's level. */
static tb_kernel_fn backend_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                                   const tb_params *p)
{
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, p, &impl).fn;
    if (!fn || !impl)
        fail_msg("%s %s: the cpu backend has no kernel", op->name,
                 tb_dtype_name(dt));
    return fn;
}

/* Runs kernel fn on host tensors of the case dtype into new outputs
 * pre-filled with a canary; checks that exactly one launch was counted.
 * Returns the kernel's code; the caller destroys the outputs. */
static int run_cpu(void *ctx, tb_kernel_fn fn, const tb_op *op, tb_dtype dt,
                   const tb_tensor *in, const tb_params *p, tb_tensor *out)
{
    tb_shape osh[TB_MAX_OUTPUTS];
    infer(op, in, p, osh);
    for (int i = 0; i < op->n_out; i++) {
        tensor_new(&out[i], dt, osh[i]);
        for (int64_t k = 0; k < tb_tensor_numel(&out[i]); k++)
            tb_tensor_set(&out[i], k, -12345.5);
    }
    uint64_t before = launches(ctx);
    int rc = fn(ctx, in, out, p);
    assert_int_equal(launches(ctx) - before, 1);
    return rc;
}

/* The harness's rule, against want rounded to dt. */
static bool within_tol(double got, double want, tb_dtype dt, tb_tol tol,
                       double rlen)
{
    if (dt == TB_F32)
        want = (double)(float)want;
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    return fabs(got - want) <=
           tol.atol * sqrt(rlen > 1 ? rlen : 1) + tol.rtol * fabs(want);
}

static bool close_ref(double got, double want, double atol)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    return fabs(got - want) <= REF_RTOL * fabs(want) + atol;
}

/* ---- 1. oracle vectors --------------------------------------------------- */

/* Input i of case c as a host tensor of dtype dt (f32 values are exact). */
static void case_input(const ov_case *c, int i, tb_dtype dt, tb_tensor *t)
{
    tensor_new(t, dt, shape_of(c->in_ndim[i], c->in_shape[i]));
    int64_t n = tb_tensor_numel(t);
    for (int64_t k = 0; k < n; k++) {
        double v = c->in_data[i][k];
        if (dt == TB_F32) {
            assert_true((double)(float)v == v || isnan(v));
            ((float *)t->data)[k] = (float)v;
        } else {
            ((double *)t->data)[k] = v;
        }
    }
}

static void vector_case(void *ctx, const ov_case *c)
{
    const tb_op *op = op_find(c->op);
    tb_dtype dt = TB_F64;
    assert_int_equal(tb_dtype_parse(c->dtype, &dt), 0);
    assert_int_equal(c->n_in, op->n_in);

    tb_tensor in[OV_MAX_IN], ref[TB_MAX_OUTPUTS], got[TB_MAX_OUTPUTS];
    for (int i = 0; i < c->n_in; i++)
        case_input(c, i, dt, &in[i]);
    tparam tp[OV_MAX_PARAMS];
    for (int i = 0; i < c->n_params; i++)
        tp[i] = (tparam){c->params[i].name, c->params[i].value};
    tb_params p = params_make(op, tp, c->n_params);

    tb_shape want = shape_of(c->out_ndim, c->out_shape);
    int64_t n = tb_shape_numel(&want);
    const double ref_atol = op->reduce_len ? 1e-12 : 1e-300;

    /* The reference kernel, without and with defaults filled in. */
    for (int pass = 0; pass < 2; pass++) {
        tb_params pp = p;
        if (pass)
            tb_params_defaults(op, &pp);
        int rc = run_ref(op, in, &pp, ref);
        if (rc)
            fail_msg("%s: ref returned %s", c->name, tb_strerror(rc));
        tb_shape gs = tb_tensor_shape(&ref[0]);
        if (!tb_shape_equal(&gs, &want)) {
            char a[64], b[64];
            fail_msg("%s: output shape %s, expected %s", c->name,
                     tb_shape_format(&gs, a, sizeof a),
                     tb_shape_format(&want, b, sizeof b));
        }
        const double *o = ref[0].data;
        for (int64_t k = 0; k < n; k++)
            if (!close_ref(o[k], c->out_data[k], ref_atol))
                fail_msg("%s: ref element %lld: got %.17g, expected %.17g",
                         c->name, (long long)k, o[k], c->out_data[k]);
        destroy_all(ref, op->n_out);
    }

    /* The cpu kernels (the C row, and the backend's best if it is
     * another), with the harness's tolerance. */
    tb_params pd = p;
    tb_params_defaults(op, &pd);
    tb_shape ish[TB_MAX_INPUTS], osh[TB_MAX_OUTPUTS];
    for (int i = 0; i < op->n_in; i++)
        ish[i] = tb_tensor_shape(&in[i]);
    infer(op, in, &pd, osh);
    double rlen = op->reduce_len ? op->reduce_len(op, ish, osh, &pd, dt) : 1;
    tb_kernel_fn fns[2] = {c_kernel(op, dt),
                           backend_kernel(ctx, op, dt, &p)};
    for (int f = 0; f < (fns[1] != fns[0] ? 2 : 1); f++) {
        const char *who = f ? "cpu backend" : "C row";
        int rc = run_cpu(ctx, fns[f], op, dt, in, &p, got);
        if (rc)
            fail_msg("%s: %s kernel returned %s", c->name, who,
                     tb_strerror(rc));
        for (int64_t k = 0; k < n; k++) {
            double g = tb_tensor_get(&got[0], k);
            if (!within_tol(g, c->out_data[k], dt, op->tol[dt], rlen))
                fail_msg("%s: %s element %lld: got %.9g, expected %.9g "
                         "(rtol %g, atol %g x sqrt(%g))",
                         c->name, who, (long long)k, g, c->out_data[k],
                         op->tol[dt].rtol, op->tol[dt].atol, rlen);
        }
        destroy_all(got, op->n_out);
    }
    destroy_all(in, c->n_in);
}

/* state: the op; every vector of that op, both dtypes required. */
static void test_oracle(void **state)
{
    const tb_op *op = *state;
    void *ctx = cpu_new();
    int seen[TB_DTYPE_COUNT] = {0};
    for (int i = 0; i < OV_N_CASES; i++) {
        const ov_case *c = &ov_cases[i];
        if (strcmp(c->op, op->name) != 0)
            continue;
        tb_dtype dt = TB_F64;
        assert_int_equal(tb_dtype_parse(c->dtype, &dt), 0);
        seen[dt]++;
        vector_case(ctx, c);
    }
    B->destroy(ctx);
    if (!seen[TB_F32] || !seen[TB_F64])
        fail_msg("%s: %d f32 and %d f64 oracle cases; need both", op->name,
                 seen[TB_F32], seen[TB_F64]);
}

/* ---- 2. coverage ----------------------------------------------------------- */

static void test_coverage(void **state)
{
    (void)state;
    for (int i = 0; i < OV_N_CASES; i++) {
        const tb_op *op = tb_op_find(ov_cases[i].op);
        if (!op)
            fail_msg("vector %s names an unknown op", ov_cases[i].name);
        assert_false(is_base_op(op->name));
    }
    void *ctx = cpu_new();
    int n_new = 0;
    for (int id = 0; id < TB_OP_COUNT; id++) {
        const tb_op *op = tb_op_get((tb_op_id)id);
        assert_non_null(op);
        assert_non_null(op->ref);
        assert_non_null(op->shape);
        assert_non_null(op->flops);
        assert_non_null(op->bytes);
        assert_string_not_equal(tb_op_category_name(op->category),
                                "unknown");
        if (tested_elsewhere(op))
            continue;
        if (is_base_op(op->name))
            continue;
        n_new++;
        int seen[TB_DTYPE_COUNT] = {0};
        for (int i = 0; i < OV_N_CASES; i++)
            if (strcmp(ov_cases[i].op, op->name) == 0) {
                tb_dtype dt = TB_F64;
                assert_int_equal(tb_dtype_parse(ov_cases[i].dtype, &dt), 0);
                seen[dt]++;
            }
        for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
            if (!seen[d])
                fail_msg("%s: no %s oracle vectors", op->name,
                         tb_dtype_name((tb_dtype)d));
            c_kernel(op, (tb_dtype)d);
            backend_kernel(ctx, op, (tb_dtype)d, NULL);
        }
        /* unknown dtype: no row, and the backend hands out nothing */
        assert_null(tb_cpu_krow_c(op->id, TB_DTYPE_COUNT));
        const char *impl = "stale";
        assert_null(B->kernel(ctx, op, TB_DTYPE_COUNT, NULL, &impl).fn);
        assert_null(impl);
    }
    B->destroy(ctx);
    print_message("# %d new ops, %d oracle vectors\n", n_new, OV_N_CASES);
    assert_true(n_new >= 32);
}

/* ---- 3. special values ----------------------------------------------------- */

#define NSPEC 10
/* NaN, +inf, -inf, -0.0, +0.0, huge, -huge, tiny, -tiny, 1 (a normal value
 * as a control).  huge overflows exp in either dtype; tiny is subnormal. */
static void special_inputs(tb_dtype dt, double *v)
{
    const double huge = dt == TB_F32 ? 1e30 : 1e300;
    const double tiny = dt == TB_F32 ? 1e-40 : 1e-310;
    const double in[NSPEC] = {NAN, INFINITY, -INFINITY, -0.0, 0.0,
                              huge, -huge, tiny, -tiny, 1.0};
    memcpy(v, in, sizeof in);
    if (dt == TB_F32)
        for (int i = 0; i < NSPEC; i++)
            v[i] = (double)(float)v[i];
}

/* Expected value with its sign (for zeros); NaN matches any NaN. */
static void expect_special(const char *what, int i, double got, double want)
{
    bool ok;
    if (isnan(want))
        ok = isnan(got);
    else if (want == 0)
        ok = got == 0 && signbit(got) == signbit(want);
    else if (isinf(want))
        ok = got == want;
    else
        ok = fabs(got - want) <= 2e-6 * fabs(want);
    if (!ok)
        fail_msg("%s: input %d: got %.9g, expected %.9g", what, i, got,
                 want);
}

/* Runs op on the special inputs with the reference kernel and the cpu
 * kernel, both dtypes, and compares with want(dt, i). */
typedef double (*special_want)(tb_dtype dt, int i, double x);

/* want_cpu: the C row's value where it differs from the reference's
 * (NULL: none differs). */
static void special_run_cpu(const char *name, special_want want,
                            special_want want_cpu)
{
    const tb_op *op = op_find(name);
    void *ctx = cpu_new();
    for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
        tb_dtype dt = (tb_dtype)d;
        double v[NSPEC];
        special_inputs(dt, v);
        tb_tensor x, r, g;
        tensor_new(&x, dt, SHAPE(NSPEC));
        for (int i = 0; i < NSPEC; i++)
            tb_tensor_set(&x, i, v[i]);
        tb_params p;
        memset(&p, 0, sizeof p);
        assert_int_equal(run_ref(op, &x, &p, &r), 0);
        assert_int_equal(
            run_cpu(ctx, c_kernel(op, dt), op, dt, &x, &p, &g), 0);
        for (int i = 0; i < NSPEC; i++) {
            char what[64];
            double w = want(dt, i, v[i]);
            snprintf(what, sizeof what, "%s %s ref", name,
                     tb_dtype_name(dt));
            expect_special(what, i, ((double *)r.data)[i], w);
            snprintf(what, sizeof what, "%s %s cpu", name,
                     tb_dtype_name(dt));
            if (want_cpu)
                w = want_cpu(dt, i, v[i]);
            expect_special(what, i, tb_tensor_get(&g, i),
                           dt == TB_F32 ? (double)(float)w : w);
        }
        tb_tensor_destroy(&r);
        tb_tensor_destroy(&g);
        tb_tensor_destroy(&x);
    }
    B->destroy(ctx);
}

static void special_run(const char *name, special_want want)
{
    special_run_cpu(name, want, NULL);
}

/* Index: 0 NaN, 1 +inf, 2 -inf, 3 -0, 4 +0, 5 huge, 6 -huge, 7 tiny,
 * 8 -tiny, 9 one. */
static double want_exp(tb_dtype dt, int i, double x)
{
    (void)dt, (void)x;
    const double w[NSPEC] = {NAN, INFINITY, 0.0, 1, 1, INFINITY, 0.0,
                             1, 1, M_E};
    return w[i];
}

static double want_log(tb_dtype dt, int i, double x)
{
    (void)dt;
    const double w[NSPEC] = {NAN, INFINITY, NAN, -INFINITY, -INFINITY,
                             log(x), NAN, log(x), NAN, 0.0};
    return w[i];
}

/* tanh keeps the sign of zero and of tiny inputs (tanh x = x there). */
static double want_tanh(tb_dtype dt, int i, double x)
{
    (void)dt;
    const double w[NSPEC] = {NAN, 1, -1, -0.0, 0.0, 1, -1, x, x, tanh(1.0)};
    return w[i];
}

static double want_sigmoid(tb_dtype dt, int i, double x)
{
    (void)dt, (void)x;
    const double w[NSPEC] = {NAN, 1, 0.0, 0.5, 0.5, 1, 0.0, 0.5, 0.5,
                             1 / (1 + exp(-1.0))};
    return w[i];
}

/* gelu and silu at -inf are -inf * 0 = NaN, as PyTorch's formulas give;
 * at -huge they underflow to -0.0. */
static double want_gelu(tb_dtype dt, int i, double x)
{
    (void)dt;
    const double w[NSPEC] = {NAN, INFINITY, NAN, -0.0, 0.0, x, -0.0,
                             x / 2, x / 2, 0.5 * erfc(-M_SQRT1_2)};
    return w[i];
}

static double want_silu(tb_dtype dt, int i, double x)
{
    (void)dt;
    const double w[NSPEC] = {NAN, INFINITY, NAN, -0.0, 0.0, x, -0.0,
                             x / 2, x / 2, 1 / (1 + exp(-1.0))};
    return w[i];
}

/* softplus: x itself above the threshold; log1p(exp(x)) -> exp(x) -> +0
 * for large negative x; log 2 at zero. */
static double want_softplus(tb_dtype dt, int i, double x)
{
    (void)dt;
    const double w[NSPEC] = {NAN, INFINITY, 0.0, M_LN2, M_LN2, x, 0.0,
                             M_LN2, M_LN2, log1p(M_E)};
    return w[i];
}

/* 1/sqrt: rsqrt(-0) = -inf, negatives NaN; tiny is subnormal, so its
 * rsqrt is large but finite (f64: 1e155; f32: 1e20). */
static double want_rsqrt(tb_dtype dt, int i, double x)
{
    (void)dt;
    const double w[NSPEC] = {NAN, 0.0, NAN, -INFINITY, INFINITY,
                             1 / sqrt(x), NAN, 1 / sqrt(x), NAN, 1};
    return w[i];
}

static void test_special_exp(void **state)
{
    (void)state;
    special_run("exp", want_exp);
}

static void test_special_log(void **state)
{
    (void)state;
    special_run("log", want_log);
}

static void test_special_tanh(void **state)
{
    (void)state;
    special_run("tanh", want_tanh);
}

static void test_special_sigmoid(void **state)
{
    (void)state;
    special_run("sigmoid", want_sigmoid);
}

/* The f32 C row of gelu and silu is vmath.h's portable tier, which
 * states x -> -0 at -inf (its limit) where the formula gives -inf * 0;
 * the f64 row keeps the formula's NaN. */
static double want_gelu_cpu(tb_dtype dt, int i, double x)
{
    return dt == TB_F32 && i == 2 ? -0.0 : want_gelu(dt, i, x);
}

static double want_silu_cpu(tb_dtype dt, int i, double x)
{
    return dt == TB_F32 && i == 2 ? -0.0 : want_silu(dt, i, x);
}

static void test_special_gelu(void **state)
{
    (void)state;
    special_run_cpu("gelu", want_gelu, want_gelu_cpu);
}

static void test_special_silu(void **state)
{
    (void)state;
    special_run_cpu("silu", want_silu, want_silu_cpu);
}

static void test_special_softplus(void **state)
{
    (void)state;
    special_run("softplus", want_softplus);
}

static void test_special_rsqrt(void **state)
{
    (void)state;
    special_run("rsqrt", want_rsqrt);
}

/* max, min and argmax of long contiguous lanes (the vector paths of the
 * portable kernels, and every SIMD row this CPU runs), against a scalar
 * scan written here: a NaN at the start, the middle or the end (max/min
 * NaN, argmax its first index), none, several equal maxima (in one
 * vector group or far apart: argmax's SIMD rows keep a group index per
 * lane), signed zeros and infinities, at lengths around the vector and
 * block sizes. */
static void test_reduce_contig(void **state)
{
    (void)state;
    void *ctx = cpu_new();
    static const int lens[] = {16, 17, 31, 32, 33, 63, 64, 65, 100, 257,
                               1000, 1024, 4099, 70000};
    static const char *const ops[] = {"max", "min", "argmax"};
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    uint64_t seed = 12345;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        int n = lens[li];
        for (int kind = 0; kind < 9; kind++) {
            for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
                tb_dtype dt = (tb_dtype)d;
                tb_tensor x;
                tensor_new(&x, dt, SHAPE(n));
                for (int i = 0; i < n; i++) {
                    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                    double v = (double)(int64_t)(seed >> 40) / (1 << 20) - 8;
                    tb_tensor_set(&x, i, v);
                }
                /* kinds: 0 plain, 1-3 NaN first/middle/last, 4 the max
                 * twice (first wins), 5 signed zeros only, 6 infinities,
                 * 7 the max in two lanes of one group of 64 (the later
                 * lane first), 8 the max in every 7th element from the
                 * middle on */
                if (kind == 1)
                    tb_tensor_set(&x, 0, NAN);
                if (kind == 2)
                    tb_tensor_set(&x, n / 2, NAN);
                if (kind == 3)
                    tb_tensor_set(&x, n - 1, NAN);
                if (kind == 4) {
                    tb_tensor_set(&x, n / 3, 99);
                    tb_tensor_set(&x, n - 2, 99);
                }
                if (kind == 5)
                    for (int i = 0; i < n; i++)
                        tb_tensor_set(&x, i, i % 3 ? 0.0 : -0.0);
                if (kind == 6) {
                    tb_tensor_set(&x, n / 4, INFINITY);
                    tb_tensor_set(&x, n / 5, -INFINITY);
                }
                if (kind == 7) {
                    tb_tensor_set(&x, n / 2 / 64 * 64 + 9, 99);
                    tb_tensor_set(&x, n / 2 / 64 * 64 + 40, 99);
                    tb_tensor_set(&x, n - 1, 99);
                }
                if (kind == 8)
                    for (int i = n / 2; i < n; i += 7)
                        tb_tensor_set(&x, i, 99);
                for (int o = 0; o < 3; o++) {
                    const tb_op *op = op_find(ops[o]);
                    /* the scalar scan: first NaN wins, else the first
                     * strict improvement */
                    double m = tb_tensor_get(&x, 0);
                    int at = 0;
                    for (int i = 1; i < n && m == m; i++) {
                        double v = tb_tensor_get(&x, i);
                        if (v != v || (o == 1 ? v < m : v > m)) {
                            m = v;
                            at = i;
                        }
                    }
                    tb_params p;
                    memset(&p, 0, sizeof p);
                    /* the C row, then each level's own row */
                    for (int lv = TB_ISA_SCALAR;
                         lv <= tb_cpu_isa_detect() && lv < TB_ISA_COUNT;
                         lv++) {
                        const tb_cpu_krow *r = lv == TB_ISA_SCALAR
                            ? tb_cpu_krow_c(op->id, dt)
                            : tb_cpu_krow_find(rows, nrows, op->id, dt, lv);
                        if (!r || (lv > TB_ISA_SCALAR && r->min_isa != lv))
                            continue;
                        tb_tensor g;
                        assert_int_equal(run_cpu(ctx, r->fn, op, dt, &x,
                                                 &p, &g),
                                         0);
                        double got = tb_tensor_get(&g, 0);
                        if (o == 2) {
                            if (got != at)
                                fail_msg("%s n=%d kind=%d: got %g, want %d",
                                         r->name, n, kind, got, at);
                        } else if (isnan(m) ? !isnan(got) : got != m) {
                            fail_msg("%s n=%d kind=%d: got %g, want %g",
                                     r->name, n, kind, got, m);
                        }
                        tb_tensor_destroy(&g);
                    }
                }
                tb_tensor_destroy(&x);
            }
        }
    }
    B->destroy(ctx);
}

/* NaN in reductions, maximum/minimum, pooling and softmax lanes. */
static void test_special_nan(void **state)
{
    (void)state;
    void *ctx = cpu_new();
    struct {
        const char *op;
        double v[4];
        double want; /* of the first output element */
    } cases[] = {
        {"max", {1, NAN, 3, 2}, NAN},
        {"min", {1, 2, NAN, -5}, NAN},
        {"argmax", {1, 7, NAN, NAN}, 2},  /* the first NaN */
        {"argmax", {NAN, 7, 1, 2}, 0},
        {"argmax", {-INFINITY, -INFINITY, -1e30, -INFINITY}, 2},
        {"max", {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, -INFINITY},
        {"var", {1, INFINITY, 2, 3}, NAN}, /* inf - inf */
        {"var", {5, 5, 5, 5}, 0},
        {"softmax", {1, NAN, 2, 3}, NAN},
        {"softmax", {-INFINITY, 0, 0, -INFINITY}, 0.0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const tb_op *op = op_find(cases[k].op);
        for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
            tb_dtype dt = (tb_dtype)d;
            tb_tensor x, r, g;
            tensor_new(&x, dt, SHAPE(4));
            for (int i = 0; i < 4; i++)
                tb_tensor_set(&x, i, cases[k].v[i]);
            tb_params p;
            memset(&p, 0, sizeof p);
            assert_int_equal(run_ref(op, &x, &p, &r), 0);
            assert_int_equal(
                run_cpu(ctx, c_kernel(op, dt), op, dt, &x, &p, &g),
                0);
            char what[64];
            snprintf(what, sizeof what, "nan case %zu (%s %s) ref", k,
                     cases[k].op, tb_dtype_name(dt));
            expect_special(what, 0, ((double *)r.data)[0], cases[k].want);
            what[strlen(what) - 3] = '\0';
            strcat(what, "cpu");
            expect_special(what, 0, tb_tensor_get(&g, 0), cases[k].want);
            tb_tensor_destroy(&r);
            tb_tensor_destroy(&g);
            tb_tensor_destroy(&x);
        }
    }
    /* maximum/minimum: a NaN in either operand wins; max_pool2d too. */
    const char *bin[] = {"maximum", "minimum"};
    for (int b = 0; b < 2; b++) {
        const tb_op *op = op_find(bin[b]);
        tb_tensor in[2], r, g;
        tensor_new(&in[0], TB_F32, SHAPE(3));
        tensor_new(&in[1], TB_F32, SHAPE(3));
        const double a[3] = {NAN, 1, 2}, c[3] = {0, NAN, 1};
        for (int i = 0; i < 3; i++) {
            tb_tensor_set(&in[0], i, a[i]);
            tb_tensor_set(&in[1], i, c[i]);
        }
        tb_params p;
        memset(&p, 0, sizeof p);
        assert_int_equal(run_ref(op, in, &p, &r), 0);
        assert_int_equal(run_cpu(ctx, c_kernel(op, TB_F32), op,
                                 TB_F32, in, &p, &g),
                         0);
        assert_true(isnan(((double *)r.data)[0]));
        assert_true(isnan(((double *)r.data)[1]));
        assert_true(isnan(tb_tensor_get(&g, 0)));
        assert_true(isnan(tb_tensor_get(&g, 1)));
        assert_true(tb_tensor_get(&g, 2) == (b == 0 ? 2 : 1));
        tb_tensor_destroy(&r);
        tb_tensor_destroy(&g);
        destroy_all(in, 2);
    }
    {
        const tb_op *op = op_find("max_pool2d");
        tb_tensor x, r, g;
        tensor_new(&x, TB_F64, SHAPE(1, 1, 2, 4));
        const double v[8] = {1, NAN, 3, 4, 5, 6, 7, 8};
        for (int i = 0; i < 8; i++)
            tb_tensor_set(&x, i, v[i]);
        tb_params p;
        memset(&p, 0, sizeof p);
        assert_int_equal(run_ref(op, &x, &p, &r), 0);
        assert_int_equal(run_cpu(ctx, c_kernel(op, TB_F64), op,
                                 TB_F64, &x, &p, &g),
                         0);
        assert_true(isnan(((double *)r.data)[0]) &&
                    ((double *)r.data)[1] == 8);
        assert_true(isnan(tb_tensor_get(&g, 0)) &&
                    tb_tensor_get(&g, 1) == 8);
        tb_tensor_destroy(&r);
        tb_tensor_destroy(&g);
        tb_tensor_destroy(&x);
    }
    B->destroy(ctx);
}

/* ---- 4. strided inputs to the reference kernels ------------------------ */

/* Bitwise equality of two f64 tensors of the same shape. */
static void assert_identical(const tb_tensor *a, const tb_tensor *b,
                             const char *what)
{
    tb_shape sa = tb_tensor_shape(a), sb = tb_tensor_shape(b);
    if (!tb_shape_equal(&sa, &sb))
        fail_msg("%s: output shapes differ", what);
    const double *x = a->data, *y = b->data;
    for (int64_t i = 0; i < tb_tensor_numel(a); i++)
        if (memcmp(&x[i], &y[i], sizeof x[i]) != 0)
            fail_msg("%s: element %lld: strided %.17g, contiguous %.17g",
                     what, (long long)i, x[i], y[i]);
}

typedef struct strided_case {
    const char *op;
    int n_in;
    tb_shape base[3];
    int swap[3][2]; /* {-1, -1}: read as stored */
    tparam params[4];
} strided_case;

#define PLAIN {-1, -1}

static const strided_case strided_cases[] = {
    {"exp", 1, {{2, {13, 7}}}, {{0, 1}}, {{0}}},
    {"gelu", 1, {{3, {5, 4, 3}}}, {{0, 2}}, {{0}}},
    {"softplus", 1, {{2, {6, 5}}}, {{0, 1}}, {{"beta", 2}}},
    {"add_scalar", 1, {{2, {6, 5}}}, {{0, 1}}, {{"scalar", 0.5}}},
    {"pow", 2, {{2, {6, 5}}, {1, {6}}}, {{0, 1}, PLAIN}, {{0}}},
    {"maximum", 2, {{2, {7, 5}}, {2, {5, 7}}}, {PLAIN, {0, 1}}, {{0}}},
    {"add_relu", 2, {{3, {5, 1, 3}}, {3, {5, 4, 3}}}, {{0, 2}, {0, 2}},
     {{0}}},
    {"max", 1, {{2, {13, 7}}}, {{0, 1}}, {{0}}},
    {"min", 1, {{2, {13, 7}}}, {{0, 1}}, {{"axis", 0}}},
    {"argmax", 1, {{3, {5, 4, 3}}}, {{0, 2}}, {{"axis", 1}}},
    {"argmax", 1, {{2, {13, 7}}}, {{0, 1}}, {{0}}},
    {"var", 1, {{2, {13, 7}}}, {{0, 1}}, {{"axis", -1}, {"keepdim", 1}}},
    {"var", 1, {{2, {13, 7}}}, {{0, 1}}, {{0}}},
    {"softmax", 1, {{2, {13, 7}}}, {{0, 1}}, {{"axis", 0}}},
    {"permute", 1, {{3, {5, 4, 3}}}, {{0, 2}},
     {{"p0", 1}, {"p1", 2}, {"p2", 0}}},
    {"linear", 3, {{2, {5, 7}}, {2, {4, 5}}, {1, {4}}}, {{0, 1}, {0, 1},
     PLAIN}, {{0}}},
    {"conv2d", 3, {{4, {2, 3, 7, 6}}, {4, {4, 3, 2, 3}}, {1, {4}}},
     {{2, 3}, {2, 3}, PLAIN}, {{"stride", 2}, {"padding", 1}}},
    {"conv2d_nobias", 2, {{4, {2, 1, 7, 7}}, {4, {3, 2, 3, 3}}},
     {{0, 1}, {2, 3}}, {{"dilation", 2}}},
    {"max_pool2d", 1, {{4, {2, 3, 7, 6}}}, {{2, 3}},
     {{"kernel", 3}, {"stride", 2}, {"padding", 1}}},
    {"avg_pool2d", 1, {{4, {2, 3, 7, 6}}}, {{0, 1}},
     {{"kernel", 3}, {"padding", 1}}},
};

static void strided_run(const strided_case *sc, tb_dtype dt)
{
    const tb_op *op = op_find(sc->op);
    assert_int_equal(sc->n_in, op->n_in);
    tb_tensor base[3], view[3], copy[3], ov[TB_MAX_OUTPUTS],
        oc[TB_MAX_OUTPUTS];
    char what[128];
    snprintf(what, sizeof what, "%s %s (strided case %d)", sc->op,
             tb_dtype_name(dt), (int)(sc - strided_cases));
    for (int i = 0; i < op->n_in; i++) {
        tensor_new(&base[i], dt, sc->base[i]);
        for (int64_t k = 0; k < tb_tensor_numel(&base[i]); k++)
            tb_tensor_set(&base[i], k, rng_uniform());
        if (sc->swap[i][0] >= 0)
            assert_int_equal(tb_tensor_transpose_view(&base[i],
                                                      sc->swap[i][0],
                                                      sc->swap[i][1],
                                                      &view[i]),
                             0);
        else
            view[i] = base[i], view[i].owns = false;
        tensor_new(&copy[i], dt, tb_tensor_shape(&view[i]));
        for (int64_t k = 0; k < tb_tensor_numel(&view[i]); k++)
            tb_tensor_set(&copy[i], k, tb_tensor_get(&view[i], k));
    }
    tb_params p = params_make(op, sc->params, 4);
    int rc = run_ref(op, view, &p, ov);
    if (rc)
        fail_msg("%s: ref on the view returned %s", what, tb_strerror(rc));
    rc = run_ref(op, copy, &p, oc);
    if (rc)
        fail_msg("%s: ref on the copy returned %s", what, tb_strerror(rc));
    assert_identical(&ov[0], &oc[0], what);
    destroy_all(ov, op->n_out);
    destroy_all(oc, op->n_out);
    destroy_all(copy, op->n_in);
    destroy_all(base, op->n_in);
}

static void test_strided_views(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof strided_cases / sizeof strided_cases[0];
         i++) {
        strided_run(&strided_cases[i], TB_F32);
        strided_run(&strided_cases[i], TB_F64);
    }
}

/* A [5] column read as [5, 6] with stride 0 (a broadcast view). */
static void test_strided_stride0(void **state)
{
    (void)state;
    static const char *const ops[] = {"neg", "sigmoid", "max", "argmax",
                                      "var", "softmax", "permute",
                                      "mul_scalar"};
    for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
        tb_dtype dt = (tb_dtype)d;
        tb_tensor col, v, c;
        tensor_new(&col, dt, SHAPE(5));
        for (int i = 0; i < 5; i++)
            tb_tensor_set(&col, i, rng_uniform());
        tb_tensor_init(&v, dt, &(tb_shape){2, {5, 6}});
        v.strides[0] = 1, v.strides[1] = 0, v.data = col.data;
        tensor_new(&c, dt, SHAPE(5, 6));
        for (int64_t k = 0; k < 30; k++)
            tb_tensor_set(&c, k, tb_tensor_get(&v, k));
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            const tb_op *op = op_find(ops[k]);
            tb_params p;
            memset(&p, 0, sizeof p);
            if (op->id == TB_OP_var || op->id == TB_OP_argmax)
                p = params_make(op, (tparam[]){{"axis", 0}}, 1);
            tb_tensor ov, oc;
            assert_int_equal(run_ref(op, &v, &p, &ov), 0);
            assert_int_equal(run_ref(op, &c, &p, &oc), 0);
            char what[64];
            snprintf(what, sizeof what, "%s %s stride 0", ops[k],
                     tb_dtype_name(dt));
            assert_identical(&ov, &oc, what);
            tb_tensor_destroy(&ov);
            tb_tensor_destroy(&oc);
        }
        tb_tensor_destroy(&c);
        tb_tensor_destroy(&col);
    }
}

/* ---- 5. shape rules, parameters, cost models ---------------------------- */

typedef struct shape_case {
    const char *op;
    int n_in;
    tb_shape in[3];
    tparam params[4]; /* set directly, bypassing bounds */
    int rc;           /* 0, TB_ESHAPE or TB_EPARAM */
    tb_shape out;     /* when rc == 0 */
    const char *msg;  /* when rc != 0: a substring of the message */
} shape_case;

#define S1(a) {1, {a}}
#define S2(a, b) {2, {a, b}}
#define S3(a, b, c) {3, {a, b, c}}
#define S4(a, b, c, d) {4, {a, b, c, d}}
#define NOP {{0}}
#define NOSHAPE {0, {0}}

static const shape_case shape_cases[] = {
    /* unary and scalar forms keep the shape */
    {"exp", 1, {S2(3, 4)}, NOP, 0, S2(3, 4), NULL},
    {"gelu_tanh", 1, {S1(7)}, NOP, 0, S1(7), NULL},
    {"div_scalar", 1, {S3(2, 3, 4)}, {{"scalar", 0.5}}, 0, S3(2, 3, 4),
     NULL},
    {"leaky_relu", 2, {S1(7), S1(7)}, NOP, TB_ESHAPE, NOSHAPE, "expects 1"},
    {"sqrt", 1, {S2(0, 4)}, NOP, TB_ESHAPE, NOSHAPE, "must be > 0"},
    /* binary broadcasting */
    {"pow", 2, {S3(3, 1, 5), S2(4, 5)}, NOP, 0, S3(3, 4, 5), NULL},
    {"maximum", 2, {S2(5, 1), S2(1, 6)}, NOP, 0, S2(5, 6), NULL},
    {"minimum", 2, {S2(3, 4), S2(5, 4)}, NOP, TB_ESHAPE, NOSHAPE,
     "cannot broadcast"},
    {"add_relu", 2, {S2(2, 3), S1(2)}, NOP, TB_ESHAPE, NOSHAPE,
     "cannot broadcast"},
    {"pow", 1, {S1(3)}, NOP, TB_ESHAPE, NOSHAPE, "expects 2"},
    /* reductions */
    {"max", 1, {S2(13, 17)}, NOP, 0, {0, {0}}, NULL},
    {"min", 1, {S3(3, 4, 5)}, {{"axis", -2}}, 0, S2(3, 5), NULL},
    {"argmax", 1, {S2(13, 17)}, {{"axis", 1}, {"keepdim", 1}}, 0,
     S2(13, 1), NULL},
    {"var", 1, {S2(13, 17)}, {{"keepdim", 1}}, 0, S2(1, 1), NULL},
    {"max", 1, {S2(3, 4)}, {{"axis", 2}}, TB_EPARAM, NOSHAPE,
     "out of range"},
    {"argmax", 1, {S2(3, 4)}, {{"axis", -3}}, TB_EPARAM, NOSHAPE,
     "out of range"},
    {"var", 1, {S2(3, 1)}, {{"axis", 1}}, TB_EPARAM, NOSHAPE,
     "correction 1"},
    {"var", 1, {S1(1)}, NOP, TB_EPARAM, NOSHAPE, "correction 1"},
    {"var", 1, {S1(4)}, {{"correction", 4}}, TB_EPARAM, NOSHAPE,
     "correction 4"},
    {"var", 1, {S1(1)}, {{"correction", 0}}, 0, {0, {0}}, NULL},
    {"argmax", 1, {S2(4097, 4096)}, NOP, TB_ESHAPE, NOSHAPE, "2^24"},
    {"argmax", 1, {S2(4096, 4096)}, NOP, 0, {0, {0}}, NULL},
    {"argmax", 1, {S2(4097, 4096)}, {{"axis", 0}}, 0, S1(4096), NULL},
    /* softmax */
    {"softmax", 1, {S3(2, 3, 4)}, {{"axis", 0}}, 0, S3(2, 3, 4), NULL},
    {"softmax", 1, {S2(2, 3)}, {{"axis", 2}}, TB_EPARAM, NOSHAPE,
     "out of range"},
    /* permute */
    {"permute", 1, {S3(3, 4, 5)}, NOP, 0, S3(5, 4, 3), NULL},
    {"permute", 1, {S3(3, 4, 5)}, {{"p0", 1}, {"p1", 2}, {"p2", 0}}, 0,
     S3(4, 5, 3), NULL},
    {"permute", 1, {S3(3, 4, 5)}, {{"p0", -1}, {"p1", 0}, {"p2", 1}}, 0,
     S3(5, 3, 4), NULL},
    {"permute", 1, {S3(3, 4, 5)}, {{"p0", 1}, {"p1", 2}}, TB_EPARAM,
     NOSHAPE, "p2 is missing"},
    {"permute", 1, {S3(3, 4, 5)}, {{"p0", 1}, {"p1", 1}, {"p2", 0}},
     TB_EPARAM, NOSHAPE, "named twice"},
    {"permute", 1, {S2(3, 4)}, {{"p0", 1}, {"p1", 0}, {"p2", 2}},
     TB_EPARAM, NOSHAPE, "only 2 dims"},
    {"permute", 1, {S2(3, 4)}, {{"p0", 2}, {"p1", 0}}, TB_EPARAM, NOSHAPE,
     "not a dim"},
    {"permute", 1, {S2(3, 4)}, {{"p1", 0}}, TB_EPARAM, NOSHAPE,
     "p0 is missing"},
    /* linear */
    {"linear", 3, {S2(7, 13), S2(13, 5), S1(5)}, NOP, 0, S2(7, 5), NULL},
    {"linear", 3, {S2(7, 13), S2(12, 5), S1(5)}, NOP, TB_ESHAPE, NOSHAPE,
     "inner dims"},
    {"linear", 3, {S2(7, 13), S2(13, 5), S1(4)}, NOP, TB_ESHAPE, NOSHAPE,
     "bias"},
    {"linear", 3, {S3(2, 7, 13), S2(13, 5), S1(5)}, NOP, TB_ESHAPE,
     NOSHAPE, "expects x [M, K]"},
    {"linear", 2, {S2(7, 13), S2(13, 5)}, NOP, TB_ESHAPE, NOSHAPE,
     "expects 3"},
    /* conv2d */
    {"conv2d", 3, {S4(32, 1, 28, 28), S4(16, 1, 3, 3), S1(16)}, NOP, 0,
     S4(32, 16, 26, 26), NULL},
    {"conv2d", 3, {S4(2, 3, 7, 6), S4(4, 3, 3, 2), S1(4)},
     {{"stride", 2}, {"padding", 1}}, 0, S4(2, 4, 4, 4), NULL},
    {"conv2d_nobias", 2, {S4(1, 2, 7, 7), S4(3, 2, 3, 3)},
     {{"dilation", 2}}, 0, S4(1, 3, 3, 3), NULL},
    {"conv2d", 3, {S4(1, 1, 2, 2), S4(1, 1, 3, 3), S1(1)}, NOP, TB_ESHAPE,
     NOSHAPE, "empty output"},
    {"conv2d_nobias", 2, {S4(1, 1, 5, 5), S4(1, 1, 3, 3)},
     {{"dilation", 3}}, TB_ESHAPE, NOSHAPE, "empty output"},
    {"conv2d", 3, {S4(1, 2, 5, 5), S4(1, 3, 3, 3), S1(1)}, NOP, TB_ESHAPE,
     NOSHAPE, "input channels"},
    {"conv2d", 3, {S4(1, 2, 5, 5), S4(4, 2, 3, 3), S1(3)}, NOP, TB_ESHAPE,
     NOSHAPE, "bias"},
    {"conv2d", 3, {S3(2, 5, 5), S4(4, 2, 3, 3), S1(4)}, NOP, TB_ESHAPE,
     NOSHAPE, "[N, C, H, W]"},
    {"conv2d", 2, {S4(1, 2, 5, 5), S4(4, 2, 3, 3)}, NOP, TB_ESHAPE,
     NOSHAPE, "expects 3"},
    {"conv2d_nobias", 3, {S4(1, 2, 5, 5), S4(4, 2, 3, 3), S1(4)}, NOP,
     TB_ESHAPE, NOSHAPE, "expects 2"},
    /* pooling */
    {"max_pool2d", 1, {S4(32, 16, 24, 24)}, NOP, 0, S4(32, 16, 12, 12),
     NULL},
    {"avg_pool2d", 1, {S4(2, 3, 7, 6)},
     {{"kernel", 3}, {"stride", 2}, {"padding", 1}}, 0, S4(2, 3, 4, 3),
     NULL},
    {"max_pool2d", 1, {S4(1, 1, 7, 5)}, {{"kernel", 4}, {"padding", 2}}, 0,
     S4(1, 1, 2, 2), NULL},
    {"max_pool2d", 1, {S4(1, 1, 2, 2)}, {{"kernel", 3}}, TB_ESHAPE,
     NOSHAPE, "empty output"},
    {"avg_pool2d", 1, {S4(1, 1, 8, 8)}, {{"kernel", 2}, {"padding", 2}},
     TB_EPARAM, NOSHAPE, "more than half"},
    {"max_pool2d", 1, {S3(1, 8, 8)}, NOP, TB_ESHAPE, NOSHAPE,
     "[N, C, H, W]"},
};

static void test_shape_rules(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shape_cases / sizeof shape_cases[0];
         i++) {
        const shape_case *sc = &shape_cases[i];
        const tb_op *op = op_find(sc->op);
        tb_params p;
        memset(&p, 0, sizeof p);
        for (int k = 0; k < 4 && sc->params[k].name; k++) {
            int idx = tb_op_param_index(op, sc->params[k].name);
            if (idx < 0)
                fail_msg("shape case %zu: %s has no parameter %s", i,
                         sc->op, sc->params[k].name);
            p.v[idx] = sc->params[k].v;
            p.set |= 1u << idx;
        }
        tb_shape out[TB_MAX_OUTPUTS];
        memset(out, 0, sizeof out);
        char err[256] = "";
        int rc = tb_op_infer(op, sc->in, sc->n_in, &p, out, err, sizeof err);
        if (rc != sc->rc)
            fail_msg("shape case %zu (%s): returned %d (%s: %s), expected "
                     "%d", i, sc->op, rc, tb_strerror(rc), err, sc->rc);
        if (rc == 0) {
            if (!tb_shape_equal(&out[0], &sc->out)) {
                char a[64], b[64];
                fail_msg("shape case %zu (%s): output %s, expected %s", i,
                         sc->op, tb_shape_format(&out[0], a, sizeof a),
                         tb_shape_format(&sc->out, b, sizeof b));
            }
        } else if (!strstr(err, sc->op) || !strstr(err, sc->msg) ||
                   strchr(err, '\n')) {
            fail_msg("shape case %zu (%s): message '%s' does not name the "
                     "op and say '%s' on one line", i, sc->op, err, sc->msg);
        }
    }
}

/* tb_params_set checks names, kinds and bounds of the new schemas. */
static void test_shape_params(void **state)
{
    (void)state;
    struct {
        const char *op, *name;
        double v;
        int rc;
    } cases[] = {
        {"leaky_relu", "alpha", 0.2, 0},
        {"leaky_relu", "alpha", 1e7, TB_EPARAM},
        {"softplus", "beta", 0, TB_EPARAM},
        {"softplus", "threshold", -5, 0},
        {"add_scalar", "scalar", -2.5, 0},
        {"add_scalar", "scalar", INFINITY, TB_EPARAM},
        {"mul_scalar", "value", 2, TB_ENOTFOUND},
        {"var", "correction", -1, TB_EPARAM},
        {"var", "correction", 0.5, TB_EPARAM},
        {"var", "ddof", 0, TB_ENOTFOUND},
        {"argmax", "keepdim", 2, TB_EPARAM},
        {"permute", "p7", -8, 0},
        {"permute", "p8", 0, TB_ENOTFOUND},
        {"permute", "p0", 8, TB_EPARAM},
        {"conv2d", "stride", 0, TB_EPARAM},
        {"conv2d", "padding", -1, TB_EPARAM},
        {"conv2d_nobias", "dilation", 0, TB_EPARAM},
        {"max_pool2d", "kernel", 0, TB_EPARAM},
        {"avg_pool2d", "stride", 3, 0},
        {"exp", "alpha", 1, TB_ENOTFOUND},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const tb_op *op = op_find(cases[i].op);
        tb_params p;
        memset(&p, 0, sizeof p);
        char err[256] = "";
        int rc = tb_params_set(op, &p, cases[i].name, cases[i].v, err,
                               sizeof err);
        if (rc != cases[i].rc)
            fail_msg("params case %zu: %s %s=%g returned %d, expected %d",
                     i, cases[i].op, cases[i].name, cases[i].v, rc,
                     cases[i].rc);
        if (rc && !err[0])
            fail_msg("params case %zu: no message", i);
    }
    /* Defaults: stride of the pools stays absent (= kernel). */
    const tb_op *mp = op_find("max_pool2d");
    tb_params p;
    memset(&p, 0, sizeof p);
    tb_params_defaults(mp, &p);
    assert_true(tb_params_has(&p, 0) && p.v[0] == 2);
    assert_false(tb_params_has(&p, 1));
    const tb_op *var = op_find("var");
    memset(&p, 0, sizeof p);
    tb_params_defaults(var, &p);
    assert_true(tb_params_has(&p, 2) && p.v[2] == 1);
}

typedef struct costs {
    double flops, bytes, rlen;
} costs;

static costs cost_of(const char *name, int n_in, const tb_shape *in,
                     const tparam *params, int n_params, tb_dtype dt)
{
    const tb_op *op = op_find(name);
    tb_params p = params_make(op, params, n_params);
    tb_params_defaults(op, &p);
    tb_shape out[TB_MAX_OUTPUTS];
    char err[128];
    assert_int_equal(tb_op_infer(op, in, n_in, &p, out, err, sizeof err), 0);
    costs c = {
        op->flops(op, in, out, &p, dt),
        op->bytes(op, in, out, &p, dt),
        op->reduce_len ? op->reduce_len(op, in, out, &p, dt) : 1,
    };
    return c;
}

static void test_shape_costs(void **state)
{
    (void)state;
    /* conv2d of the seeds matrix: 32x1x28x28 with 16 3x3 filters. */
    tb_shape cv[3] = {SHAPE(32, 1, 28, 28), SHAPE(16, 1, 3, 3), SHAPE(16)};
    costs c = cost_of("conv2d", 3, cv, NULL, 0, TB_F32);
    double outs = 32.0 * 16 * 26 * 26;
    assert_true(c.flops == outs * (2 * 9 + 1));
    assert_true(c.bytes == (32.0 * 28 * 28 + 16 * 9 + 16 + outs) * 4);
    assert_true(c.rlen == 10);
    c = cost_of("conv2d_nobias", 2, cv, NULL, 0, TB_F64);
    assert_true(c.flops == outs * 18 && c.rlen == 9);
    assert_true(c.bytes == (32.0 * 28 * 28 + 16 * 9 + outs) * 8);

    tb_shape pool = SHAPE(32, 16, 24, 24);
    c = cost_of("max_pool2d", 1, &pool, NULL, 0, TB_F32);
    assert_true(c.flops == 32.0 * 16 * 12 * 12 * 4);
    assert_true(c.bytes == (32.0 * 16 * 24 * 24 + 32.0 * 16 * 144) * 4);
    c = cost_of("avg_pool2d", 1, &pool, (tparam[]){{"kernel", 3}}, 1,
                TB_F32);
    assert_true(c.flops == 32.0 * 16 * 8 * 8 * 10 && c.rlen == 9);

    tb_shape lin[3] = {SHAPE(64, 128), SHAPE(128, 32), SHAPE(32)};
    c = cost_of("linear", 3, lin, NULL, 0, TB_F32);
    assert_true(c.flops == 2.0 * 64 * 128 * 32 + 2.0 * 64 * 32);
    assert_true(c.bytes == (64.0 * 128 + 128 * 32 + 32 + 64 * 32) * 4);
    assert_true(c.rlen == 128);

    tb_shape v = SHAPE(1000);
    assert_true(cost_of("gelu", 1, &v, NULL, 0, TB_F32).flops == 5000);
    assert_true(cost_of("gelu_tanh", 1, &v, NULL, 0, TB_F32).flops == 9000);
    assert_true(cost_of("exp", 1, &v, NULL, 0, TB_F64).flops == 1000);
    assert_true(cost_of("exp", 1, &v, NULL, 0, TB_F64).bytes == 16000);
    assert_true(cost_of("sigmoid", 1, &v, NULL, 0, TB_F32).flops == 4000);

    tb_shape ar[2] = {SHAPE(256, 256), SHAPE(256)};
    c = cost_of("add_relu", 2, ar, NULL, 0, TB_F32);
    assert_true(c.flops == 2.0 * 65536);
    assert_true(c.bytes == (2.0 * 65536 + 256) * 4);

    tb_shape s = SHAPE(13, 17);
    c = cost_of("var", 1, &s, (tparam[]){{"axis", 0}}, 1, TB_F64);
    assert_true(c.flops == 4.0 * 221 + 17 && c.rlen == 13);
    c = cost_of("softmax", 1, &s, NULL, 0, TB_F32);
    assert_true(c.flops == 5.0 * 221 && c.rlen == 17);
    c = cost_of("argmax", 1, &s, NULL, 0, TB_F32);
    assert_true(c.flops == 221 && c.bytes == 222.0 * 4);
    c = cost_of("permute", 1, &s, NULL, 0, TB_F32);
    assert_true(c.flops == 0 && c.bytes == 2.0 * 221 * 4);
}

/* ---- 6. kernel errors ------------------------------------------------------ */

static void test_kernel_errors(void **state)
{
    (void)state;
    void *ctx = cpu_new();
    tb_params p;
    memset(&p, 0, sizeof p);
    tb_tensor a, b, o;
    tensor_new(&a, TB_F32, SHAPE(3, 4));

    /* wrong output shape, dtype; a strided (non-contiguous) input */
    const tb_op *ex = op_find("exp");
    tb_kernel_fn fn = c_kernel(ex, TB_F32);
    tensor_new(&o, TB_F32, SHAPE(4, 3));
    assert_int_equal(fn(ctx, &a, &o, &p), TB_ESHAPE);
    tb_tensor_destroy(&o);
    tensor_new(&o, TB_F64, SHAPE(3, 4));
    assert_int_equal(fn(ctx, &a, &o, &p), TB_EINVAL);
    tb_tensor_destroy(&o);
    tensor_new(&o, TB_F32, SHAPE(4, 3));
    tb_tensor at;
    assert_int_equal(tb_tensor_transpose_view(&a, 0, 1, &at), 0);
    assert_int_equal(fn(ctx, &at, &o, &p), TB_EINVAL);
    tb_tensor_destroy(&o);

    /* shapes that cannot broadcast; a bad parameter */
    tensor_new(&b, TB_F32, SHAPE(5, 4));
    tensor_new(&o, TB_F32, SHAPE(3, 4));
    tb_tensor ab[2] = {a, b};
    fn = c_kernel(op_find("maximum"), TB_F32);
    assert_int_equal(fn(ctx, ab, &o, &p), TB_ESHAPE);
    const tb_op *pm = op_find("permute");
    tb_params bad = {.set = 3u, .v = {0, 0}};
    fn = c_kernel(pm, TB_F32);
    assert_int_equal(fn(ctx, &a, &o, &bad), TB_EPARAM);
    tb_tensor_destroy(&o);

    /* a NULL ctx is allowed by the rows of ops_ext.c (nothing is
     * counted); NULL operands are not */
    tensor_new(&o, TB_F32, SHAPE(3, 4));
    fn = c_kernel(op_find("neg"), TB_F32);
    assert_int_equal(fn(NULL, &a, &o, &p), 0);
    assert_int_equal(fn(ctx, NULL, &o, &p), TB_EINVAL);
    assert_int_equal(fn(ctx, &a, NULL, &p), TB_EINVAL);
    tb_tensor_destroy(&o);

    tb_tensor_destroy(&a);
    tb_tensor_destroy(&b);
    B->destroy(ctx);
}

/* ---- 7. configs/seeds.json ------------------------------------------------ */

/* The shipped seeds matrix loads, plans (every shape passes its op's shape
 * rule) and holds every case of issue 3's list that the op table can
 * express. */
static bool plan_has(const tb_plan *pl, const char *op, const char *shape,
                     int axis) /* axis: -99 = no axis param */
{
    for (int i = 0; i < pl->n; i++) {
        const tb_case *c = &pl->cases[i];
        char buf[96];
        if (strcmp(c->op->name, op) != 0 || c->dtype != TB_F32 ||
            strcmp(tb_shape_format(&c->in[0], buf, sizeof buf), shape) != 0)
            continue;
        int ai = tb_op_param_index(c->op, "axis");
        bool has = ai >= 0 && tb_params_has(&c->params, ai) &&
                   c->op->params[ai].optional;
        if (axis == -99 ? !has : has && c->params.v[ai] == axis)
            return true;
    }
    return false;
}

static void test_seeds_config(void **state)
{
    (void)state;
    tb_config cfg;
    char err[512] = "";
    int rc = tb_config_load("configs/seeds.json", &cfg, err, sizeof err);
    if (rc)
        fail_msg("configs/seeds.json: %s", err);
    tb_plan pl;
    memset(&pl, 0, sizeof pl);
    rc = tb_plan_build(&cfg, 1, NULL, &pl, err, sizeof err);
    if (rc)
        fail_msg("configs/seeds.json: plan: %s", err);
    static const char *const ew[] = {"add", "sub", "mul", "div", "relu"};
    static const char *const sq[] = {"256x256", "1024x1024", "4096x4096"};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++)
            if (!plan_has(&pl, ew[i], sq[j], -99))
                fail_msg("seeds: no %s %s", ew[i], sq[j]);
    static const char *const act[] = {"tanh", "sigmoid", "gelu", "exp",
                                      "relu"};
    static const char *const n1[] = {"100", "1000", "10000", "100000",
                                     "1000000"};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            if (!plan_has(&pl, act[i], n1[j], -99))
                fail_msg("seeds: no %s %s", act[i], n1[j]);
    for (int j = 0; j < 2; j++) {
        assert_true(plan_has(&pl, "sum", sq[j], -99));
        assert_true(plan_has(&pl, "sum", sq[j], 0));
        assert_true(plan_has(&pl, "mean", sq[j], -99));
        assert_true(plan_has(&pl, "mean", sq[j], 0));
    }
    assert_true(plan_has(&pl, "log_softmax", "256x10", -99));
    assert_true(plan_has(&pl, "log_softmax", "1024x10", -99));
    assert_true(plan_has(&pl, "log_softmax", "4096x10", -99));
    static const char *const mm[] = {"256x256", "1000x1000", "1024x1024",
                                     "4096x4096"};
    for (int j = 0; j < 4; j++)
        assert_true(plan_has(&pl, "matmul", mm[j], -99));
    for (int j = 0; j < 3; j++)
        assert_true(plan_has(&pl, "transpose", sq[j], -99));
    assert_true(plan_has(&pl, "conv2d", "32x1x28x28", -99));
    assert_true(plan_has(&pl, "max_pool2d", "32x16x24x24", -99));
    /* fused next to unfused; optimizer steps on 1M parameters; linalg
     * at 4, 8, 12, 16 */
    assert_true(plan_has(&pl, "add_relu_unfused", "256x256", -99));
    assert_true(plan_has(&pl, "linear_unfused", "256x256", -99));
    for (int j = 0; j < 3; j++) {
        static const char *const ls[] = {"256x10", "1024x10", "4096x10"};
        assert_true(plan_has(&pl, "log_softmax_unfused", ls[j], -99));
    }
    static const char *const opt[] = {"sgd",     "sgd_momentum", "adam",
                                      "adamw",   "adagrad",      "adamax",
                                      "nadam",   "radam"};
    for (int i = 0; i < 8; i++)
        if (!plan_has(&pl, opt[i], "1000000", -99))
            fail_msg("seeds: no %s on 1M parameters", opt[i]);
    static const char *const la[] = {"svd", "qr", "eigh"};
    static const char *const lsz[] = {"4x4", "8x8", "12x12", "16x16"};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            if (!plan_has(&pl, la[i], lsz[j], -99))
                fail_msg("seeds: no %s %s", la[i], lsz[j]);
    for (int i = 0; i < pl.n; i++) {
        const tb_case *c = &pl.cases[i];
        char buf[96];
        if (c->op->id == TB_OP_conv2d) {
            assert_string_equal(tb_shape_format(&c->in[1], buf, sizeof buf),
                                "16x1x3x3");
            assert_string_equal(tb_shape_format(&c->out[0], buf, sizeof buf),
                                "32x16x26x26");
        }
        if (c->op->id == TB_OP_max_pool2d)
            assert_string_equal(tb_shape_format(&c->out[0], buf, sizeof buf),
                                "32x16x12x12");
    }
    print_message("# configs/seeds.json: %d cases\n", pl.n);
    tb_plan_free(&pl);
    tb_config_free(&cfg);
}

/* ---- main ---------------------------------------------------------------- */

#define T(f) {#f, test_##f, leak_setup, leak_teardown, NULL}

int main(int argc, char **argv)
{
    static struct CMUnitTest tests[TB_OP_COUNT + 32];
    static char names[TB_OP_COUNT][48];
    static const struct CMUnitTest fixed[] = {
        T(coverage),
        T(special_exp),
        T(special_log),
        T(special_tanh),
        T(special_sigmoid),
        T(special_gelu),
        T(special_silu),
        T(special_softplus),
        T(special_rsqrt),
        T(special_nan),
        T(reduce_contig),
        T(strided_views),
        T(strided_stride0),
        T(shape_rules),
        T(shape_params),
        T(shape_costs),
        T(kernel_errors),
        T(seeds_config),
    };
    size_t n = 0;
    for (int id = 0; id < TB_OP_COUNT; id++) {
        const tb_op *op = tb_op_get((tb_op_id)id);
        if (is_base_op(op->name) || tested_elsewhere(op))
            continue;
        snprintf(names[n], sizeof names[n], "oracle_%s", op->name);
        tests[n] = (struct CMUnitTest){names[n], test_oracle, leak_setup,
                                       leak_teardown, (void *)op};
        n++;
    }
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        tests[n++] = fixed[i];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            cmocka_set_test_filter(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--filter PATTERN]\n", argv[0]);
            return 2;
        }
    }
    printf("# test_oracle: %d oracle vectors, input seed 0x%016llx\n",
           OV_N_CASES, (unsigned long long)SEED);
    return _cmocka_run_group_tests("test_oracle", tests, n, NULL, NULL);
}
