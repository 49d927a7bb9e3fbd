/* Tests for the op library: reference kernels, shape rules, cost models.
 *
 *  1. vectors_<op>: every reference kernel against oracle vectors that
 *     NumPy computed independently (tests/data/ref_vectors.h, made by
 *     scripts/gen_ref_vectors.py), on f32 and f64 inputs, with and
 *     without tb_params_defaults() applied first.
 *  2. strided_*: the same kernel on a strided view (tb_tensor_transpose_view
 *     or a hand-made stride-0 broadcast) and on a contiguous copy of it
 *     must give bit-identical results.
 *  3. shape_*: shape rules through tb_op_infer, good shapes and bad ones
 *     (which must fail with TB_ESHAPE/TB_EPARAM and a message).
 *  4. cost_*: FLOP, byte and reduction-length models against hand counts.
 *  5. special_*: -0.0, NaN, +-inf, overflow and cancellation.
 *
 * Tolerance against the oracle: |got - want| <= 1e-12 * |want| + 1e-12.
 * Both sides accumulate in double, so they differ only by summation
 * order (NumPy sums pairwise, the reference kernels use compensated
 * summation in index order); that is ~1e-15 here, the bound leaves room.
 *
 * Every test's teardown checks that it freed all tensor memory.
 * Run one area with: test_ops --filter 'strided_*'. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/ref.h"
#include "ops/tensor.h"
#include "tests/data/ref_vectors.h"

#define RTOL 1e-12
#define ATOL 1e-12
#define SEED UINT64_C(0x7b3c1d2e5f607182)

/* ---- fixtures ------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    leak_mark();
    return 0;
}

/* Fails the test if it leaked tensor memory. */
static int teardown(void **state)
{
    (void)state;
    return leak_check();
}

/* ---- helpers ------------------------------------------------------------- */

static const tb_shape shape_scalar = {0, {0}};

/* splitmix64: deterministic inputs in [-1, 1), same on every machine. */
static uint64_t rng_state = SEED;

static double rng_uniform(void)
{
    uint64_t z = splitmix64_next(&rng_state);
    return (double)(z >> 11) * 0x1p-53 * 2.0 - 1.0;
}

static void tensor_new(tb_tensor *t, tb_dtype dt, tb_shape s)
{
    int rc = tb_tensor_create(t, dt, &s);
    assert_int_equal(rc, 0);
}

static void tensor_fill_random(tb_tensor *t)
{
    for (int64_t i = 0; i < tb_tensor_numel(t); i++)
        tb_tensor_set(t, i, rng_uniform());
}

static void tensor_fill(tb_tensor *t, const double *v)
{
    for (int64_t i = 0; i < tb_tensor_numel(t); i++)
        tb_tensor_set(t, i, v[i]);
}

/* Contiguous copy of any (strided) host tensor, through the slow but
 * independent tb_tensor_get/set; caller destroys it. */
static void tensor_copy(const tb_tensor *src, tb_tensor *dst)
{
    tensor_new(dst, src->dtype, tb_tensor_shape(src));
    for (int64_t i = 0; i < tb_tensor_numel(src); i++)
        tb_tensor_set(dst, i, tb_tensor_get(src, i));
}

typedef struct tparam {
    const char *name;
    double v;
} tparam;

#define MAX_TPARAMS 2

/* Parameters through the public setter, which must accept them. */
static tb_params params_make(const tb_op *op, const tparam *list, int n)
{
    tb_params p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < n && list[i].name; i++) {
        char err[256] = "";
        int rc = tb_params_set(op, &p, list[i].name, list[i].v, err,
                               sizeof err);
        if (rc)
            fail_msg("%s: tb_params_set(%s=%g): %s", op->name,
                     list[i].name, list[i].v, err);
    }
    return p;
}

static const tb_op *op_find(const char *name)
{
    const tb_op *op = tb_op_find(name);
    if (!op)
        fail_msg("op '%s' not in the table", name);
    return op;
}

/* Runs op's reference kernel: infers the output shapes, creates f64
 * outputs filled with NaN (so an element the kernel never writes shows
 * up), calls op->ref and returns its code.  The caller destroys the
 * op->n_out outputs. */
static int run_ref(const tb_op *op, const tb_tensor *in, const tb_params *p,
                   tb_tensor *out)
{
    tb_shape ish[TB_MAX_INPUTS], osh[TB_MAX_OUTPUTS];
    char err[256] = "";
    for (int i = 0; i < op->n_in; i++)
        ish[i] = tb_tensor_shape(&in[i]);
    int rc = tb_op_infer(op, ish, op->n_in, p, osh, err, sizeof err);
    if (rc)
        fail_msg("%s: tb_op_infer: %s (%s)", op->name, err,
                 tb_strerror(rc));
    for (int i = 0; i < op->n_out; i++) {
        tensor_new(&out[i], TB_F64, osh[i]);
        double *o = out[i].data;
        for (int64_t k = 0; k < tb_tensor_numel(&out[i]); k++)
            o[k] = NAN;
    }
    return op->ref(in, out, p);
}

static void destroy_all(tb_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        tb_tensor_destroy(&t[i]);
}

static bool close_enough(double got, double want)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= RTOL * fabs(want) + ATOL;
}

/* Bitwise equality of two f64 tensors of the same shape. */
static void assert_identical(const tb_tensor *a, const tb_tensor *b,
                             const char *what)
{
    tb_shape sa = tb_tensor_shape(a), sb = tb_tensor_shape(b);
    if (!tb_shape_equal(&sa, &sb))
        fail_msg("%s: output shapes differ", what);
    int64_t n = tb_tensor_numel(a);
    if (memcmp(a->data, b->data, (size_t)n * sizeof(double)) != 0) {
        const double *x = a->data, *y = b->data;
        for (int64_t i = 0; i < n; i++)
            if (memcmp(&x[i], &y[i], sizeof x[i]) != 0)
                fail_msg("%s: element %lld: strided %.17g, contiguous "
                         "%.17g", what, (long long)i, x[i], y[i]);
    }
}

/* ---- 1. oracle vectors --------------------------------------------------- */

/* One vector case; with_defaults: call tb_params_defaults first (as the
 * harness may) -- the kernel must give the same answer either way. */
static void vector_case(const rv_case *c, bool with_defaults)
{
    const tb_op *op = op_find(c->op);
    tb_dtype dt = TB_F64;
    assert_int_equal(tb_dtype_parse(c->dtype, &dt), 0);
    assert_int_equal(c->n_in, op->n_in);

    tb_tensor in[RV_MAX_IN], out[TB_MAX_OUTPUTS];
    for (int i = 0; i < c->n_in; i++) {
        tensor_new(&in[i], dt, shape_of(c->in_ndim[i], c->in_shape[i]));
        int64_t n = tb_tensor_numel(&in[i]);
        /* Fill the buffer directly; f32 inputs are exact floats. */
        for (int64_t k = 0; k < n; k++) {
            double v = c->in_data[i][k];
            if (dt == TB_F32) {
                assert_true((double)(float)v == v || isnan(v));
                ((float *)in[i].data)[k] = (float)v;
            } else {
                ((double *)in[i].data)[k] = v;
            }
        }
    }

    tparam tp[RV_MAX_PARAMS];
    for (int i = 0; i < c->n_params; i++)
        tp[i] = (tparam){c->params[i].name, c->params[i].value};
    tb_params p = params_make(op, tp, c->n_params);
    if (with_defaults)
        tb_params_defaults(op, &p);

    int rc = run_ref(op, in, &p, out);
    if (rc)
        fail_msg("%s: ref returned %d (%s)", c->name, rc, tb_strerror(rc));

    tb_shape want = shape_of(c->out_ndim, c->out_shape);
    tb_shape got = tb_tensor_shape(&out[0]);
    if (!tb_shape_equal(&got, &want)) {
        char a[64], b[64];
        fail_msg("%s: output shape %s, expected %s", c->name,
                 tb_shape_format(&got, a, sizeof a),
                 tb_shape_format(&want, b, sizeof b));
    }
    const double *o = out[0].data;
    for (int64_t k = 0; k < tb_shape_numel(&want); k++)
        if (!close_enough(o[k], c->out_data[k]))
            fail_msg("%s%s: element %lld: got %.17g, expected %.17g",
                     c->name, with_defaults ? " (defaults)" : "",
                     (long long)k, o[k], c->out_data[k]);

    destroy_all(out, op->n_out);
    destroy_all(in, c->n_in);
}

/* state: the op name; runs every vector case of that op, both dtypes. */
static void test_vectors(void **state)
{
    const char *name = *state;
    int seen[TB_DTYPE_COUNT] = {0};
    for (int i = 0; i < RV_N_CASES; i++) {
        const rv_case *c = &rv_cases[i];
        if (strcmp(c->op, name) != 0)
            continue;
        tb_dtype dt = TB_F64;
        assert_int_equal(tb_dtype_parse(c->dtype, &dt), 0);
        seen[dt]++;
        vector_case(c, false);
        vector_case(c, true);
    }
    /* Every op has oracle cases for both dtypes. */
    if (!seen[TB_F32] || !seen[TB_F64])
        fail_msg("%s: %d f32 and %d f64 oracle cases; need both", name,
                 seen[TB_F32], seen[TB_F64]);
}

/* The vector table names only known ops, and every op has a test. */
static void test_vectors_cover_table(void **state)
{
    (void)state;
    for (int i = 0; i < RV_N_CASES; i++)
        assert_non_null(tb_op_find(rv_cases[i].op));
    for (int id = 0; id < TB_OP_COUNT; id++) {
        const tb_op *op = tb_op_get((tb_op_id)id);
        assert_non_null(op);
        assert_non_null(op->ref);
        assert_ptr_equal(tb_op_find(op->name), op);
    }
}

/* ---- 2. strided inputs --------------------------------------------------- */

/* A stored (contiguous) input of shape `base`; swap {a, b} makes the
 * kernel read it through tb_tensor_transpose_view(a, b), and {-1, -1}
 * reads it as stored. */
typedef struct strided_input {
    tb_shape base;
    int swap[2];
} strided_input;

typedef struct strided_case {
    const char *op;
    strided_input in[2];
    tparam params[MAX_TPARAMS];
} strided_case;

#define PLAIN {-1, -1}

static const strided_case strided_cases[] = {
    {"relu", {{{2, {13, 7}}, {0, 1}}}, {{0}}},
    {"relu", {{{3, {5, 4, 3}}, {0, 2}}}, {{0}}},
    {"add", {{{2, {13, 7}}, {0, 1}}, {{1, {13}}, PLAIN}}, {{0}}},
    {"sub", {{{2, {7, 13}}, PLAIN}, {{2, {13, 7}}, {0, 1}}}, {{0}}},
    {"mul", {{{3, {5, 4, 3}}, {0, 2}}, {{3, {5, 1, 3}}, {0, 2}}}, {{0}}},
    {"div", {{{2, {6, 5}}, {0, 1}}, {{2, {5, 1}}, PLAIN}}, {{0}}},
    {"sum", {{{2, {13, 7}}, {0, 1}}}, {{0}}},
    {"sum", {{{2, {13, 7}}, {0, 1}}}, {{"axis", 0}}},
    {"sum", {{{2, {13, 7}}, {0, 1}}}, {{"axis", -1}, {"keepdim", 1}}},
    {"sum", {{{3, {5, 4, 3}}, {0, 2}}}, {{"axis", 1}}},
    {"mean", {{{2, {13, 7}}, {0, 1}}}, {{"axis", 0}, {"keepdim", 1}}},
    {"mean", {{{3, {5, 4, 3}}, {1, 2}}}, {{0}}},
    {"matmul", {{{2, {13, 7}}, {0, 1}}, {{2, {13, 5}}, PLAIN}}, {{0}}},
    {"matmul", {{{2, {7, 13}}, PLAIN}, {{2, {5, 13}}, {0, 1}}}, {{0}}},
    {"matmul", {{{2, {13, 7}}, {0, 1}}, {{2, {5, 13}}, {0, 1}}}, {{0}}},
    {"matmul", {{{3, {2, 4, 3}}, {1, 2}}, {{3, {4, 2, 5}}, {0, 1}}}, {{0}}},
    {"transpose", {{{2, {13, 7}}, {0, 1}}}, {{0}}},
    {"transpose", {{{3, {5, 4, 3}}, {0, 2}}}, {{"dim0", 0}, {"dim1", 2}}},
    {"transpose", {{{3, {5, 4, 3}}, {0, 1}}}, {{"dim0", 0}, {"dim1", -1}}},
    {"log_softmax", {{{2, {13, 7}}, {0, 1}}}, {{0}}},
    {"log_softmax", {{{2, {13, 7}}, {0, 1}}}, {{"axis", 0}}},
    {"log_softmax", {{{3, {5, 4, 3}}, {0, 2}}}, {{"axis", 1}}},
};

static void strided_run(const strided_case *sc, tb_dtype dt)
{
    const tb_op *op = op_find(sc->op);
    tb_tensor base[2], view[2], copy[2], out_v[TB_MAX_OUTPUTS],
        out_c[TB_MAX_OUTPUTS];
    char what[128];
    snprintf(what, sizeof what, "%s %s (strided case %d)", sc->op,
             tb_dtype_name(dt), (int)(sc - strided_cases));

    for (int i = 0; i < op->n_in; i++) {
        const strided_input *si = &sc->in[i];
        tensor_new(&base[i], dt, si->base);
        tensor_fill_random(&base[i]);
        if (si->swap[0] >= 0)
            assert_int_equal(tb_tensor_transpose_view(&base[i], si->swap[0],
                                                      si->swap[1], &view[i]),
                             0);
        else
            view[i] = base[i], view[i].owns = false;
        tensor_copy(&view[i], &copy[i]);
        assert_true(tb_tensor_is_contiguous(&copy[i]));
    }
    tb_params p = params_make(op, sc->params, MAX_TPARAMS);

    int rc = run_ref(op, view, &p, out_v);
    if (rc)
        fail_msg("%s: ref on the view returned %s", what, tb_strerror(rc));
    rc = run_ref(op, copy, &p, out_c);
    if (rc)
        fail_msg("%s: ref on the copy returned %s", what, tb_strerror(rc));
    for (int i = 0; i < op->n_out; i++)
        assert_identical(&out_v[i], &out_c[i], what);

    destroy_all(out_v, op->n_out);
    destroy_all(out_c, op->n_out);
    destroy_all(copy, op->n_in);
    destroy_all(view, op->n_in); /* views: a no-op */
    destroy_all(base, op->n_in);
}

static void test_strided_transposed_views(void **state)
{
    (void)state;
    size_t n = sizeof strided_cases / sizeof strided_cases[0];
    for (size_t i = 0; i < n; i++) {
        strided_run(&strided_cases[i], TB_F32);
        strided_run(&strided_cases[i], TB_F64);
    }
}

/* Broadcast views with stride 0, as a backend or the harness may pass:
 * a [5] column seen as [5, 6] (strides {1, 0}) and a [6] row seen as
 * [5, 6] (strides {0, 1}); every op reading them must match a
 * materialized copy. */
static void test_strided_stride0(void **state)
{
    (void)state;
    static const char *const ops[] = {"add", "sub", "mul", "div", "matmul",
                                      "relu", "sum", "log_softmax",
                                      "transpose"};
    for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
        tb_dtype dt = (tb_dtype)d;
        tb_tensor col, row, vcol, vrow, ccol, crow;
        tensor_new(&col, dt, SHAPE(5));
        tensor_new(&row, dt, SHAPE(6));
        tensor_fill_random(&col);
        tensor_fill_random(&row);
        tb_tensor_init(&vcol, dt, &(tb_shape){2, {5, 6}});
        vcol.strides[0] = 1, vcol.strides[1] = 0, vcol.data = col.data;
        tb_tensor_init(&vrow, dt, &(tb_shape){2, {5, 6}});
        vrow.strides[0] = 0, vrow.strides[1] = 1, vrow.data = row.data;
        tensor_copy(&vcol, &ccol);
        tensor_copy(&vrow, &crow);
        /* matmul needs [5,6] @ [6,k]: use the row view transposed. */
        tb_tensor vrow_t, crow_t;
        assert_int_equal(tb_tensor_transpose_view(&vrow, 0, 1, &vrow_t), 0);
        tensor_copy(&vrow_t, &crow_t);

        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            const tb_op *op = op_find(ops[k]);
            tb_tensor v[2] = {vcol, op->id == TB_OP_matmul ? vrow_t : vrow};
            tb_tensor c[2] = {ccol, op->id == TB_OP_matmul ? crow_t : crow};
            tb_tensor ov[TB_MAX_OUTPUTS], oc[TB_MAX_OUTPUTS];
            tb_params p;
            memset(&p, 0, sizeof p);
            if (op->id == TB_OP_sum || op->id == TB_OP_log_softmax)
                p = params_make(op, (tparam[]){{"axis", 1}}, 1);
            assert_int_equal(run_ref(op, v, &p, ov), 0);
            assert_int_equal(run_ref(op, c, &p, oc), 0);
            char what[64];
            snprintf(what, sizeof what, "%s %s stride 0", ops[k],
                     tb_dtype_name(dt));
            assert_identical(&ov[0], &oc[0], what);
            destroy_all(ov, op->n_out);
            destroy_all(oc, op->n_out);
        }
        tb_tensor_destroy(&crow_t);
        tb_tensor_destroy(&ccol);
        tb_tensor_destroy(&crow);
        tb_tensor_destroy(&col);
        tb_tensor_destroy(&row);
    }
}

/* ---- 3. shape rules ------------------------------------------------------ */

typedef struct shape_case {
    const char *op;
    int n_in;
    tb_shape in[3];
    tparam params[MAX_TPARAMS]; /* set directly, bypassing bounds */
    bool ok;
    tb_shape out; /* when ok */
} shape_case;

#define S1(a) {1, {a}}
#define S2(a, b) {2, {a, b}}
#define S3(a, b, c) {3, {a, b, c}}
#define NOP {{0}}

static const shape_case shape_cases[] = {
    /* good */
    {"add", 2, {S3(3, 1, 5), S3(1, 4, 5)}, NOP, true, S3(3, 4, 5)},
    {"add", 2, {S2(5, 1), S2(1, 6)}, NOP, true, S2(5, 6)},
    {"sub", 2, {S2(13, 17), S1(17)}, NOP, true, S2(13, 17)},
    {"mul", 2, {S1(1), S2(4, 5)}, NOP, true, S2(4, 5)},
    {"div", 2, {S1(1), S1(1)}, NOP, true, S1(1)},
    {"relu", 1, {S1(7)}, NOP, true, S1(7)},
    {"sum", 1, {S2(13, 17)}, NOP, true, {0, {0}}},
    {"sum", 1, {S2(13, 17)}, {{"keepdim", 1}}, true, S2(1, 1)},
    {"sum", 1, {S2(13, 17)}, {{"axis", -1}, {"keepdim", 1}}, true,
     S2(13, 1)},
    {"mean", 1, {S2(13, 17)}, {{"axis", -2}}, true, S1(17)},
    {"mean", 1, {S3(3, 4, 5)}, {{"axis", 1}}, true, S2(3, 5)},
    {"matmul", 2, {S2(64, 128), S2(128, 32)}, NOP, true, S2(64, 32)},
    {"matmul", 2, {S3(2, 3, 4), S3(2, 4, 5)}, NOP, true, S3(2, 3, 5)},
    {"transpose", 1, {S3(3, 4, 5)}, NOP, true, S3(3, 5, 4)},
    {"transpose", 1, {S3(3, 4, 5)}, {{"dim0", 0}, {"dim1", 2}}, true,
     S3(5, 4, 3)},
    {"transpose", 1, {S3(3, 4, 5)}, {{"dim0", -1}, {"dim1", -3}}, true,
     S3(5, 4, 3)},
    {"log_softmax", 1, {S2(3, 4)}, {{"axis", 0}}, true, S2(3, 4)},
    /* bad: broadcasting */
    {"add", 2, {S2(3, 4), S2(5, 4)}, NOP, false, {0, {0}}},
    {"sub", 2, {S2(2, 3), S2(3, 2)}, NOP, false, {0, {0}}},
    {"mul", 2, {S3(3, 1, 5), S1(4)}, NOP, false, {0, {0}}},
    /* bad: matmul */
    {"matmul", 2, {S2(3, 4), S2(5, 6)}, NOP, false, {0, {0}}},
    {"matmul", 2, {S1(4), S2(4, 5)}, NOP, false, {0, {0}}},
    {"matmul", 2, {S2(3, 4), S1(4)}, NOP, false, {0, {0}}},
    {"matmul", 2, {S3(2, 3, 4), S3(3, 4, 5)}, NOP, false, {0, {0}}},
    {"matmul", 2, {S3(2, 3, 4), S2(4, 5)}, NOP, false, {0, {0}}},
    /* bad: axes */
    {"sum", 1, {S2(3, 4)}, {{"axis", 2}}, false, {0, {0}}},
    {"sum", 1, {S2(3, 4)}, {{"axis", 3}}, false, {0, {0}}},
    {"sum", 1, {S2(3, 4)}, {{"axis", -3}}, false, {0, {0}}},
    {"mean", 1, {S2(3, 4)}, {{"axis", 3}, {"keepdim", 1}}, false, {0, {0}}},
    {"log_softmax", 1, {S2(3, 4)}, {{"axis", 2}}, false, {0, {0}}},
    {"log_softmax", 1, {S2(3, 4)}, {{"axis", -3}}, false, {0, {0}}},
    /* bad: dims */
    {"add", 2, {S2(3, 0), S2(3, 0)}, NOP, false, {0, {0}}},
    {"relu", 1, {S2(0, 4)}, NOP, false, {0, {0}}},
    {"relu", 1, {S2(-1, 4)}, NOP, false, {0, {0}}},
    {"sum", 1, {S3(2, -3, 4)}, NOP, false, {0, {0}}},
    {"relu", 1, {{TB_MAX_DIMS + 1, {0}}}, NOP, false, {0, {0}}},
    /* bad: input count */
    {"add", 1, {S1(7)}, NOP, false, {0, {0}}},
    {"add", 3, {S1(7), S1(7), S1(7)}, NOP, false, {0, {0}}},
    {"relu", 0, {{0, {0}}}, NOP, false, {0, {0}}},
    {"matmul", 1, {S2(3, 4)}, NOP, false, {0, {0}}},
    /* bad: transpose */
    {"transpose", 1, {S2(3, 4)}, {{"dim0", 1}, {"dim1", 1}}, false,
     {0, {0}}},
    {"transpose", 1, {S2(3, 4)}, {{"dim0", 0}, {"dim1", -2}}, false,
     {0, {0}}},
    {"transpose", 1, {S2(3, 4)}, {{"dim0", 0}, {"dim1", 2}}, false, {0, {0}}},
    {"transpose", 1, {S2(3, 4)}, {{"dim0", -3}, {"dim1", 0}}, false,
     {0, {0}}},
    {"transpose", 1, {S1(7)}, NOP, false, {0, {0}}},
};

static void test_shape_rules(void **state)
{
    (void)state;
    size_t n = sizeof shape_cases / sizeof shape_cases[0];
    for (size_t i = 0; i < n; i++) {
        const shape_case *sc = &shape_cases[i];
        const tb_op *op = op_find(sc->op);
        tb_params p;
        memset(&p, 0, sizeof p);
        for (int k = 0; k < MAX_TPARAMS && sc->params[k].name; k++) {
            int idx = tb_op_param_index(op, sc->params[k].name);
            assert_true(idx >= 0);
            p.v[idx] = sc->params[k].v;
            p.set |= 1u << idx;
        }
        tb_shape out[TB_MAX_OUTPUTS];
        memset(out, 0, sizeof out);
        char err[256] = "";
        int rc = tb_op_infer(op, sc->in, sc->n_in, &p, out, err, sizeof err);
        if (sc->ok) {
            if (rc)
                fail_msg("shape case %zu (%s): unexpected error: %s", i,
                         sc->op, err);
            if (!tb_shape_equal(&out[0], &sc->out)) {
                char a[64], b[64];
                fail_msg("shape case %zu (%s): output %s, expected %s", i,
                         sc->op, tb_shape_format(&out[0], a, sizeof a),
                         tb_shape_format(&sc->out, b, sizeof b));
            }
        } else {
            if (rc != TB_ESHAPE && rc != TB_EPARAM)
                fail_msg("shape case %zu (%s): returned %d (%s), expected "
                         "TB_ESHAPE or TB_EPARAM", i, sc->op, rc,
                         tb_strerror(rc));
            /* The message says which op is wrong. */
            if (!err[0] || !strstr(err, sc->op))
                fail_msg("shape case %zu (%s): message '%s' is empty or "
                         "does not name the op", i, sc->op, err);
        }
    }
}

/* matmul's three messages, each naming the shapes (its rule formats them
 * on failure only) */
static void test_shape_matmul_messages(void **state)
{
    (void)state;
    static const struct {
        tb_shape a, b;
        const char *want;
    } mc[] = {
        {S1(4), S2(4, 5), "inputs need at least 2 dims, got 4 and 4x5"},
        {S3(2, 3, 4), S3(3, 4, 5), "batch dims differ (2x3x4 vs 3x4x5)"},
        {S3(2, 3, 4), S2(4, 5), "batch dims differ (2x3x4 vs 4x5)"},
        {S2(3, 4), S2(5, 6), "inner dims differ (3x4 @ 5x6: 4 vs 5)"},
    };
    const tb_op *op = op_find("matmul");
    for (size_t i = 0; i < sizeof mc / sizeof mc[0]; i++) {
        tb_shape in[2] = {mc[i].a, mc[i].b}, out[TB_MAX_OUTPUTS];
        char err[256] = "";
        assert_int_equal(tb_op_infer(op, in, 2, NULL, out, err, sizeof err),
                         TB_ESHAPE);
        if (!strstr(err, mc[i].want))
            fail_msg("matmul case %zu: message '%s', expected '%s'", i, err,
                     mc[i].want);
    }
}

/* The shape rule's scalar output and tb_op_infer with p == NULL. */
static void test_shape_null_params(void **state)
{
    (void)state;
    tb_shape in = SHAPE(3, 4), out;
    char err[128] = "";
    assert_int_equal(tb_op_infer(op_find("sum"), &in, 1, NULL, &out, err,
                                 sizeof err), 0);
    assert_true(tb_shape_equal(&out, &shape_scalar));
    assert_int_equal(tb_shape_numel(&out), 1);
    assert_int_equal(tb_op_infer(op_find("transpose"), &in, 1, NULL, &out,
                                 err, sizeof err), 0);
    tb_shape want = SHAPE(4, 3);
    assert_true(tb_shape_equal(&out, &want));
}

/* tb_params_set checks names, kinds and bounds. */
static void test_shape_params_set(void **state)
{
    (void)state;
    const tb_op *sum = op_find("sum"), *add = op_find("add");
    tb_params p;
    memset(&p, 0, sizeof p);
    char err[256];
    struct {
        const tb_op *op;
        const char *name;
        double v;
        int rc;
    } cases[] = {
        {sum, "axis", -1, 0},
        {sum, "keepdim", 1, 0},
        {sum, "keepdim", 2, TB_EPARAM},
        {sum, "axis", 0.5, TB_EPARAM},
        {sum, "axis", NAN, TB_EPARAM},
        {sum, "axis", 1000, TB_EPARAM},
        {sum, "axes", 0, TB_ENOTFOUND},
        {add, "axis", 0, TB_ENOTFOUND},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err[0] = '\0';
        int rc = tb_params_set(cases[i].op, &p, cases[i].name, cases[i].v,
                               err, sizeof err);
        if (rc != cases[i].rc)
            fail_msg("params case %zu: %s=%g returned %d, expected %d", i,
                     cases[i].name, cases[i].v, rc, cases[i].rc);
        if (rc && !err[0])
            fail_msg("params case %zu: no message", i);
    }
    /* Only the valid settings stuck. */
    assert_true(tb_params_has(&p, 0));
    assert_true(tb_params_has(&p, 1));
    assert_true(p.v[0] == -1 && p.v[1] == 1);
}

/* ---- 4. cost models ------------------------------------------------------ */

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

static void test_cost_models(void **state)
{
    (void)state;
    tb_shape mm[2] = {SHAPE(64, 128), SHAPE(128, 32)};
    costs c = cost_of("matmul", 2, mm, NULL, 0, TB_F32);
    assert_true(c.flops == 2.0 * 64 * 128 * 32);
    assert_true(c.bytes == (64.0 * 128 + 128 * 32 + 64 * 32) * 4);
    assert_true(c.rlen == 128);

    tb_shape bmm[2] = {SHAPE(2, 3, 4), SHAPE(2, 4, 5)};
    c = cost_of("matmul", 2, bmm, NULL, 0, TB_F64);
    assert_true(c.flops == 2.0 * 2 * 3 * 4 * 5);
    assert_true(c.bytes == (24.0 + 40 + 30) * 8);

    tb_shape ad[2] = {SHAPE(256, 256), SHAPE(256, 256)};
    c = cost_of("add", 2, ad, NULL, 0, TB_F32);
    assert_true(c.flops == 256.0 * 256);
    assert_true(c.bytes == 3.0 * 256 * 256 * 4);
    assert_true(c.rlen == 1);

    /* Broadcast operand is read once: 256 elements, not 256 * 256. */
    tb_shape adb[2] = {SHAPE(256, 256), SHAPE(256)};
    c = cost_of("add", 2, adb, NULL, 0, TB_F64);
    assert_true(c.bytes == (2.0 * 256 * 256 + 256) * 8);

    tb_shape r = SHAPE(1000);
    c = cost_of("relu", 1, &r, NULL, 0, TB_F64);
    assert_true(c.bytes == 2.0 * 1000 * 8);

    tb_shape s = SHAPE(13, 17);
    c = cost_of("sum", 1, &s, (tparam[]){{"axis", 0}}, 1, TB_F32);
    assert_true(c.bytes == (13.0 * 17 + 17) * 4);
    assert_true(c.rlen == 13);
    c = cost_of("sum", 1, &s, NULL, 0, TB_F32);
    assert_true(c.rlen == 13 * 17);

    c = cost_of("log_softmax", 1, &s, NULL, 0, TB_F64);
    assert_true(c.rlen == 17);
    c = cost_of("log_softmax", 1, &s, (tparam[]){{"axis", 0}}, 1, TB_F64);
    assert_true(c.rlen == 13);

    c = cost_of("transpose", 1, &s, NULL, 0, TB_F32);
    assert_true(c.flops == 0);
    assert_true(c.bytes == 2.0 * 13 * 17 * 4);

    /* Optimizers: every operand once (adam: p, g, m, v read, p, m, v
     * written; in bf16 p and g 2 bytes, the state f32) ... */
    tb_shape o4[4] = {SHAPE(1000), SHAPE(1000), SHAPE(1000), SHAPE(1000)};
    c = cost_of("adam", 4, o4, NULL, 0, TB_F32);
    assert_true(c.bytes == 7.0 * 1000 * 4);
    c = cost_of("adam", 4, o4, NULL, 0, TB_BF16);
    assert_true(c.bytes == (2 + 2 + 4 + 4 + 2 + 4 + 4) * 1000.0);
    /* ... lamb's second pass reads p, m and v again ... */
    c = cost_of("lamb", 4, o4, NULL, 0, TB_F32);
    assert_true(c.bytes == 10.0 * 1000 * 4);
    c = cost_of("lamb", 4, o4, NULL, 0, TB_BF16);
    assert_true(c.bytes == (22 + 2 + 4 + 4) * 1000.0);
    /* ... lbfgs reads S and Y [m, n] twice */
    tb_shape lb[4] = {SHAPE(100), SHAPE(100), SHAPE(3, 100), SHAPE(3, 100)};
    c = cost_of("lbfgs", 4, lb, NULL, 0, TB_F32);
    assert_true(c.bytes == (2 + 2 * 2 * 3 + 2) * 100.0 * 4);
    c = cost_of("lbfgs", 4, lb, NULL, 0, TB_BF16);
    assert_true(c.bytes == (2 + 2 + 2 * 2 * 3 * 4 + 2 + 2) * 100.0);
}

/* ---- 5. special values --------------------------------------------------- */

/* Runs a one-input op on a [n] tensor of dtype dt holding v; the f64
 * output (caller destroys) has the shape the shape rule gave. */
static void run_1d(const char *name, tb_dtype dt, const double *v, int64_t n,
                   const tparam *params, int n_params, tb_tensor *out)
{
    const tb_op *op = op_find(name);
    tb_tensor x;
    tensor_new(&x, dt, SHAPE(n));
    tensor_fill(&x, v);
    tb_params p = params_make(op, params, n_params);
    int rc = run_ref(op, &x, &p, out);
    if (rc)
        fail_msg("%s: ref returned %s", name, tb_strerror(rc));
    tb_tensor_destroy(&x);
}

static void test_special_relu(void **state)
{
    (void)state;
    const double v[] = {-0.0, NAN, -INFINITY, INFINITY, -1e-300, 1e-300,
                        0.0, -1.5};
    for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
        tb_tensor out;
        run_1d("relu", (tb_dtype)d, v, 8, NULL, 0, &out);
        const double *o = out.data;
        /* relu(-0.0) is +0.0: max(x, 0) with the zero we return. */
        assert_true(o[0] == 0.0 && !signbit(o[0]));
        assert_true(isnan(o[1])); /* NaN propagates */
        assert_true(o[2] == 0.0 && !signbit(o[2]));
        assert_true(o[3] == INFINITY);
        assert_true(o[4] == 0.0 && !signbit(o[4]));
        /* 1e-300 is 0 in f32 */
        assert_true(o[5] == (d == TB_F32 ? 0.0 : 1e-300));
        assert_true(o[6] == 0.0 && !signbit(o[6]));
        assert_true(o[7] == 0.0);
        tb_tensor_destroy(&out);
    }
}

static void test_special_log_softmax(void **state)
{
    (void)state;
    const double l2 = log(2.0);
    for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
        tb_dtype dt = (tb_dtype)d;
        tb_tensor out;
        const double *o;

        /* -inf entries get -inf and drop out of the others' sum. */
        run_1d("log_softmax", dt, (double[]){0, -INFINITY, 0}, 3, NULL, 0,
               &out);
        o = out.data;
        assert_true(fabs(o[0] + l2) < 1e-15 && fabs(o[2] + l2) < 1e-15);
        assert_true(o[1] == -INFINITY);
        tb_tensor_destroy(&out);

        run_1d("log_softmax", dt, (double[]){-INFINITY, 5}, 2, NULL, 0,
               &out);
        o = out.data;
        assert_true(o[0] == -INFINITY && o[1] == 0.0);
        tb_tensor_destroy(&out);

        /* Large values: the shift by the max keeps exp finite. */
        run_1d("log_softmax", dt, (double[]){1000, 1000, -1000}, 3, NULL, 0,
               &out);
        o = out.data;
        assert_true(fabs(o[0] + l2) < 1e-15 && fabs(o[1] + l2) < 1e-15);
        assert_true(isfinite(o[2]) && fabs(o[2] - (-2000 - l2)) < 1e-12);
        tb_tensor_destroy(&out);
        /* ... and so does it for a lane of large negative values, where
         * exp underflows to 0 without it. */
        run_1d("log_softmax", dt, (double[]){-1000, -1000}, 2, NULL, 0,
               &out);
        o = out.data;
        assert_true(fabs(o[0] + l2) < 1e-15 && fabs(o[1] + l2) < 1e-15);
        tb_tensor_destroy(&out);

        /* All -inf (0/0) and NaN lanes are NaN throughout. */
        run_1d("log_softmax", dt, (double[]){-INFINITY, -INFINITY}, 2, NULL,
               0, &out);
        o = out.data;
        assert_true(isnan(o[0]) && isnan(o[1]));
        tb_tensor_destroy(&out);
        run_1d("log_softmax", dt, (double[]){1, NAN, 2}, 3, NULL, 0, &out);
        o = out.data;
        assert_true(isnan(o[0]) && isnan(o[1]) && isnan(o[2]));
        tb_tensor_destroy(&out);

        /* A one-element lane is log(1) = 0. */
        run_1d("log_softmax", dt, (double[]){-7.25}, 1, NULL, 0, &out);
        assert_true(((double *)out.data)[0] == 0.0);
        tb_tensor_destroy(&out);
    }
}

static void test_special_sum(void **state)
{
    (void)state;
    struct {
        const char *op;
        double v[4];
        int n;
        double want; /* NAN: expect NaN */
    } cases[] = {
        {"sum", {3.5}, 1, 3.5},
        {"mean", {3.5}, 1, 3.5},
        {"sum", {1, INFINITY, 2}, 3, INFINITY},
        {"sum", {-INFINITY, 1}, 2, -INFINITY},
        {"sum", {INFINITY, -INFINITY}, 2, NAN},
        {"sum", {1, NAN, 2}, 3, NAN},
        {"sum", {1e308, 1e308}, 2, INFINITY},
        {"mean", {1e308, 1e308}, 2, INFINITY},
        /* Cancellation: compensated summation keeps the small terms
         * that a plain double sum (and NumPy) lose. */
        {"sum", {1, 1e100, 1, -1e100}, 4, 2},
        {"mean", {1, 1e100, 1, -1e100}, 4, 0.5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_tensor out;
        run_1d(cases[i].op, TB_F64, cases[i].v, cases[i].n, NULL, 0, &out);
        assert_int_equal(out.ndim, 0);
        double got = ((double *)out.data)[0], want = cases[i].want;
        if (isnan(want) ? !isnan(got) : got != want)
            fail_msg("special sum case %zu: got %.17g, expected %.17g", i,
                     got, want);
        tb_tensor_destroy(&out);
    }

    /* One element along an axis, kept. */
    tb_tensor out;
    run_1d("sum", TB_F32, (double[]){-2.5}, 1,
           (tparam[]){{"axis", 0}, {"keepdim", 1}}, 2, &out);
    assert_int_equal(out.ndim, 1);
    assert_int_equal(out.shape[0], 1);
    assert_true(((double *)out.data)[0] == -2.5);
    tb_tensor_destroy(&out);
}

static void test_special_div(void **state)
{
    (void)state;
    const tb_op *op = op_find("div");
    tb_tensor in[2], out;
    tensor_new(&in[0], TB_F64, SHAPE(4));
    tensor_new(&in[1], TB_F64, SHAPE(4));
    tensor_fill(&in[0], (double[]){1, -1, 0, 1});
    tensor_fill(&in[1], (double[]){0, 0, 0, INFINITY});
    tb_params p;
    memset(&p, 0, sizeof p);
    assert_int_equal(run_ref(op, in, &p, &out), 0);
    const double *o = out.data;
    assert_true(o[0] == INFINITY && o[1] == -INFINITY && isnan(o[2]));
    assert_true(o[3] == 0.0);
    tb_tensor_destroy(&out);
    destroy_all(in, 2);
}

/* Kernels re-check what the shape rule promised and refuse bad outputs
 * instead of writing out of bounds. */
static void test_special_ref_rejects(void **state)
{
    (void)state;
    tb_tensor a, b, out;
    tb_params p;
    memset(&p, 0, sizeof p);
    tensor_new(&a, TB_F32, SHAPE(3, 4));
    tensor_new(&b, TB_F32, SHAPE(5, 4));

    /* Inputs that cannot broadcast (matmul: K mismatch). */
    tensor_new(&out, TB_F64, SHAPE(3, 4));
    tb_tensor ab[2] = {a, b};
    assert_int_equal(tb_ref_add(ab, &out, &p), TB_ESHAPE);
    assert_int_equal(tb_ref_matmul(ab, &out, &p), TB_ESHAPE);
    tb_tensor_destroy(&out);

    /* Wrong output shape, wrong output dtype. */
    tb_tensor aa[2] = {a, a};
    tensor_new(&out, TB_F64, SHAPE(4, 3));
    assert_int_equal(tb_ref_add(aa, &out, &p), TB_ESHAPE);
    assert_int_equal(tb_ref_relu(&a, &out, &p), TB_ESHAPE);
    tb_tensor_destroy(&out);
    tensor_new(&out, TB_F32, SHAPE(3, 4));
    assert_int_equal(tb_ref_relu(&a, &out, &p), TB_EDTYPE);
    tb_tensor_destroy(&out);

    /* Bad parameters reaching the kernel directly. */
    tensor_new(&out, TB_F64, SHAPE(3, 4));
    tb_params bad = {.set = 3u, .v = {1, 1}};
    assert_int_equal(tb_ref_transpose(&a, &out, &bad), TB_EPARAM);
    bad = (tb_params){.set = 1u, .v = {2}};
    assert_int_equal(tb_ref_log_softmax(&a, &out, &bad), TB_EPARAM);
    assert_int_equal(tb_ref_sum(&a, &out, &bad), TB_EPARAM);
    tb_tensor_destroy(&out);

    tb_tensor_destroy(&a);
    tb_tensor_destroy(&b);
}

/* ---- main ---------------------------------------------------------------- */

/* Test names without the test_ prefix, so --filter 'special_*' works. */
#define T(f) {#f, test_##f, setup, teardown, NULL}
#define V(opname)                                                         \
    {"vectors_" #opname, test_vectors, setup, teardown, (void *)#opname}

/* The pattern GCC 12.2's SLP vectorizer miscompiles at -O2 (meson.build
 * turns it off): two adjacent float round trips on one struct's fields.
 * With the bug, pair.a and pair.b keep their double values. */
typedef struct {
    double a, b;
    int k;
} round_pair;

static __attribute__((noinline)) void round_pair_f32(round_pair *out,
                                                     double x, double y,
                                                     int f32)
{
    round_pair j = {0, 0, 0};
    j.a = x;
    j.b = y;
    if (f32) {
        j.a = (double)(float)j.a;
        j.b = (double)(float)j.b;
    }
    *out = j;
}

static void test_float_round_trip_pairs(void **state)
{
    (void)state;
    round_pair r;
    volatile double x = 0.1, y = 0.2; /* not folded at compile time */
    round_pair_f32(&r, x, y, 1);
    assert_true(r.a == (double)0.1f);
    assert_true(r.b == (double)0.2f);
    assert_true(r.a != 0.1);
}

int main(int argc, char **argv)
{
    static const struct CMUnitTest tests[] = {
        T(vectors_cover_table),
        /* the first ops; later ops have their vectors in test_oracle.c */
        V(add), V(sub), V(mul), V(div), V(relu), V(sum), V(mean),
        V(matmul), V(transpose), V(log_softmax),
        T(strided_transposed_views),
        T(strided_stride0),
        T(shape_rules),
        T(shape_matmul_messages),
        T(shape_null_params),
        T(shape_params_set),
        T(cost_models),
        T(special_relu),
        T(special_log_softmax),
        T(special_sum),
        T(special_div),
        T(special_ref_rejects),
        T(float_round_trip_pairs),
    };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            cmocka_set_test_filter(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--filter PATTERN]\n", argv[0]);
            return 2;
        }
    }
    printf("# test_ops: %d oracle vectors, input seed 0x%016llx\n",
           RV_N_CASES, (unsigned long long)SEED);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
