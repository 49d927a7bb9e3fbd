/* Tests of the layouts (a case's inputs as views: ops/tensor.h's
 * tb_layout) and the cpu backend's view rows (drv_view.c, kreg.h's
 * TB_CPU_VIEW_ROWS).
 *
 *  1. views: each layout's parent shape, view strides and data offset
 *     (sliced: one element row past the parent's start in every dim);
 *     transposed refuses an input of one dim with the reason; the names
 *     parse back and a bad one is refused.
 *  2. view_rows: every op the view rows serve x layout x f32, f64 x
 *     every ISA level here x threads 1, 2, on inputs that are views of
 *     NaN-filled parents (a read outside the view would show): the
 *     reference reads the views to the same bits as contiguous copies;
 *     element-wise rows give the pair's C row's bits on the copies;
 *     every row is within the op's tolerance of the reference
 *     (tb_check_outputs, as the harness checks); impl names a view row;
 *     one launch per call.
 *  3. unsupported: the combinations the cpu backend refuses say why (an
 *     op without view rows, broadcasting, bf16), and a backend without
 *     the kernel_view slot (blas) has none.
 *  4. no_copy: a transposed matmul at a GEMM level allocates no more
 *     than the contiguous one (its packing buffer only: the operand is
 *     read in place, never copied) and runs the GEMM's view row.
 *  5. bad_operands: a negative stride or a missing input is an error,
 *     and the output is not written.
 *
 * Every test's leak_teardown checks that it freed all tracked memory. */
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
#include "cpu_family.h"

#include "backends/cpu/kreg.h"
#include "base/error.h"
#include "base/rng.h"
#include "harness/check.h"
#include "ops/alloc.h"
#include "ops/op.h"
#include "ops/tensor.h"

#define SEED UINT64_C(0x1a7001d5eed5eed1)

/* Shapes in static initializers (testutil.h's SHAPE is a call). */
#define S1(a) {1, {a}}
#define S2(a, b) {2, {a, b}}
#define S3(a, b, c) {3, {a, b, c}}

/* ========================================================================= */
/* 1. views                                                                  */
/* ========================================================================= */

static void test_views(void **state)
{
    (void)state;
    const tb_shape s = SHAPE(3, 5);
    tb_tensor par, v;
    tb_shape ps;
    /* transposed: a [5, 3] buffer read with strides {1, 3} */
    assert_int_equal(tb_layout_parent(TB_LAYOUT_TRANSPOSED, &s, &ps, NULL, 0),
                     0);
    assert_int_equal(ps.ndim, 2);
    assert_int_equal(ps.dim[0], 5);
    assert_int_equal(ps.dim[1], 3);
    assert_int_equal(tb_tensor_create(&par, TB_F32, &ps), 0);
    assert_int_equal(tb_layout_view(TB_LAYOUT_TRANSPOSED, &par, &s, &v), 0);
    assert_int_equal(v.shape[0], 3);
    assert_int_equal(v.shape[1], 5);
    assert_int_equal(v.strides[0], 1);
    assert_int_equal(v.strides[1], 3);
    assert_ptr_equal(v.data, par.data);
    assert_false(v.owns);
    assert_false(tb_tensor_is_contiguous(&v));
    tb_tensor_destroy(&par);
    /* strided: a [3, 10] buffer, every 2nd element */
    assert_int_equal(tb_layout_parent(TB_LAYOUT_STRIDED, &s, &ps, NULL, 0), 0);
    assert_int_equal(ps.dim[0], 3);
    assert_int_equal(ps.dim[1], 10);
    assert_int_equal(tb_tensor_create(&par, TB_F64, &ps), 0);
    assert_int_equal(tb_layout_view(TB_LAYOUT_STRIDED, &par, &s, &v), 0);
    assert_int_equal(v.strides[0], 10);
    assert_int_equal(v.strides[1], 2);
    assert_ptr_equal(v.data, par.data);
    tb_tensor_destroy(&par);
    /* sliced: a [4, 6] buffer, the window from [1, 1] */
    assert_int_equal(tb_layout_parent(TB_LAYOUT_SLICED, &s, &ps, NULL, 0), 0);
    assert_int_equal(ps.dim[0], 4);
    assert_int_equal(ps.dim[1], 6);
    assert_int_equal(tb_tensor_create(&par, TB_F64, &ps), 0);
    assert_int_equal(tb_layout_view(TB_LAYOUT_SLICED, &par, &s, &v), 0);
    assert_int_equal(v.strides[0], 6);
    assert_int_equal(v.strides[1], 1);
    assert_ptr_equal(v.data, (double *)par.data + 7);
    tb_tensor_set(&v, 0, 42);
    assert_true(((double *)par.data)[7] == 42);
    tb_tensor_destroy(&par);
    /* a 1-D sliced view is contiguous, a transposed one impossible */
    const tb_shape one = SHAPE(9);
    char err[160] = "";
    assert_int_equal(tb_layout_parent(TB_LAYOUT_SLICED, &one, &ps, NULL, 0),
                     0);
    assert_int_equal(ps.dim[0], 10);
    assert_int_equal(tb_layout_parent(TB_LAYOUT_TRANSPOSED, &one, &ps, err,
                                      sizeof err),
                     TB_ESHAPE);
    assert_non_null(strstr(err, "transposed"));
    assert_null(strchr(err, '\n'));
    /* contiguous: the buffer itself */
    assert_int_equal(tb_layout_parent(TB_LAYOUT_CONTIGUOUS, &s, &ps, NULL, 0),
                     0);
    assert_true(tb_shape_equal(&ps, &s));
    for (int l = 0; l < TB_LAYOUT_COUNT; l++) {
        tb_layout back;
        assert_int_equal(tb_layout_parse(tb_layout_name((tb_layout)l), &back),
                         0);
        assert_int_equal(back, l);
    }
    tb_layout bad;
    assert_int_equal(tb_layout_parse("diagonal", &bad), TB_EINVAL);
    assert_null(tb_layout_name(TB_LAYOUT_COUNT));
}

/* ========================================================================= */
/* 2. the view rows against the reference and the C rows                     */
/* ========================================================================= */

typedef struct {
    const char *op;
    int n_in;
    tb_shape in[2];
    const char *pname[2];
    double pval[2];
} lcase;

static const lcase cases[] = {
    {"add", 2, {S2(7, 13), S2(7, 13)}, {NULL}, {0}},
    {"sub", 2, {S3(2, 3, 33), S3(2, 3, 33)}, {NULL}, {0}},
    {"mul", 2, {S2(40, 1100), S2(40, 1100)}, {NULL}, {0}},
    {"div", 2, {S2(5, 9), S2(5, 9)}, {NULL}, {0}},
    {"maximum", 2, {S2(6, 7), S2(6, 7)}, {NULL}, {0}},
    {"minimum", 2, {S2(6, 7), S2(6, 7)}, {NULL}, {0}},
    {"relu", 1, {S2(9, 31)}, {NULL}, {0}},
    {"neg", 1, {S2(9, 31)}, {NULL}, {0}},
    {"abs", 1, {S2(9, 31)}, {NULL}, {0}},
    {"exp", 1, {S2(40, 1100)}, {NULL}, {0}},
    {"log", 1, {S2(3, 17)}, {NULL}, {0}},
    {"sqrt", 1, {S2(3, 17)}, {NULL}, {0}},
    {"sigmoid", 1, {S2(3, 17)}, {NULL}, {0}},
    {"tanh", 1, {S2(3, 17)}, {NULL}, {0}},
    {"gelu", 1, {S2(3, 17)}, {NULL}, {0}},
    {"silu", 1, {S2(3, 17)}, {NULL}, {0}},
    {"sum", 1, {S2(33, 17)}, {NULL}, {0}},
    {"sum", 1, {S2(33, 17)}, {"axis", "keepdim"}, {0, 1}},
    {"sum", 1, {S3(4, 5, 300)}, {"axis"}, {-1}},
    {"sum", 1, {S2(200, 300)}, {NULL}, {0}},
    {"mean", 1, {S3(4, 5, 6)}, {"axis"}, {1}},
    {"mean", 1, {S2(33, 17)}, {NULL}, {0}},
    {"softmax", 1, {S2(33, 17)}, {"axis"}, {-1}},
    {"softmax", 1, {S2(33, 17)}, {"axis"}, {0}},
    {"log_softmax", 1, {S3(3, 4, 19)}, {"axis"}, {-1}},
    {"log_softmax", 1, {S2(300, 200)}, {"axis"}, {1}},
    {"matmul", 2, {S2(13, 7), S2(7, 11)}, {NULL}, {0}},
    {"matmul", 2, {S3(2, 33, 17), S3(2, 17, 29)}, {NULL}, {0}},
    {"matmul", 2, {S2(70, 90), S2(90, 80)}, {NULL}, {0}},
};

static tb_params params_of(const tb_op *op, const lcase *c)
{
    tb_params p;
    memset(&p, 0, sizeof p);
    char err[160];
    for (int k = 0; k < 2 && c->pname[k]; k++)
        assert_int_equal(tb_params_set(op, &p, c->pname[k], c->pval[k], err,
                                       sizeof err),
                         0);
    tb_params_defaults(op, &p);
    return p;
}

/* Inputs in layout l: parents filled with NaN, the views with uniform
 * values in the op's domain; copies: contiguous tensors of the same
 * values. */
static void make_inputs(const tb_op *op, const lcase *c, tb_layout l,
                        tb_dtype dt, uint64_t *rng, tb_tensor *par,
                        tb_tensor *view, tb_tensor *copy)
{
    for (int i = 0; i < c->n_in; i++) {
        tb_shape ps;
        assert_int_equal(tb_layout_parent(l, &c->in[i], &ps, NULL, 0), 0);
        assert_int_equal(tb_tensor_create(&par[i], dt, &ps), 0);
        for (int64_t k = 0; k < tb_shape_numel(&ps); k++)
            tb_tensor_set(&par[i], k, NAN);
        assert_int_equal(tb_layout_view(l, &par[i], &c->in[i], &view[i]), 0);
        assert_int_equal(tb_tensor_create(&copy[i], dt, &c->in[i]), 0);
        double lo = op->domain ? op->domain[i].lo : -1;
        double hi = op->domain ? op->domain[i].hi : 1;
        for (int64_t k = 0; k < tb_shape_numel(&c->in[i]); k++) {
            double u = (double)(splitmix64_next(rng) >> 11) * 0x1p-53;
            double v = tb_dtype_round(dt, lo + (hi - lo) * u);
            tb_tensor_set(&view[i], k, v);
            tb_tensor_set(&copy[i], k, v);
        }
    }
}

static bool same_bits(const tb_tensor *a, const tb_tensor *b)
{
    return tb_tensor_nbytes(a) == tb_tensor_nbytes(b) &&
           memcmp(a->data, b->data, tb_tensor_nbytes(a)) == 0;
}

/* One case in layout l and dtype dt: the reference on views and copies,
 * then every level and thread count. */
static int run_case(const lcase *c, tb_layout l, tb_dtype dt, uint64_t *rng)
{
    const tb_op *op = tb_op_find(c->op);
    assert_non_null(op);
    tb_params p = params_of(op, c);
    tb_shape os;
    char err[160];
    assert_int_equal(tb_op_infer(op, c->in, c->n_in, &p, &os, err,
                                 sizeof err),
                     0);
    tb_tensor par[2], view[2], copy[2], ref, ref_c, got, want;
    make_inputs(op, c, l, dt, rng, par, view, copy);
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &os), 0);
    assert_int_equal(tb_tensor_create(&ref_c, TB_F64, &os), 0);
    assert_int_equal(tb_tensor_create(&got, dt, &os), 0);
    assert_int_equal(tb_tensor_create(&want, dt, &os), 0);
    assert_int_equal(op->ref(view, &ref, &p), 0);
    assert_int_equal(op->ref(copy, &ref_c, &p), 0);
    assert_true(same_bits(&ref, &ref_c)); /* the reference reads strides */
    const bool ew = op->category == TB_CAT_ELEMENTWISE ||
                    op->category == TB_CAT_ACTIVATION;
    const double rlen = op->reduce_len
                            ? op->reduce_len(op, c->in, &os, &p, dt)
                            : 1;
    int runs = 0;
    for (int lv = 0; lv < n_levels(); lv++)
        for (int th = 1; th <= 2; th++) {
            void *ctx = cpu_create(lv, th);
            const char *impl = NULL, *why = NULL;
            tb_kernel k = B->kernel_view(ctx, op, dt, &p, view, &impl, &why);
            if (!k.fn)
                fail_msg("%s %s %s level %d: no view row: %s", c->op,
                         tb_layout_name(l), tb_dtype_name(dt), lv,
                         why ? why : "?");
            assert_non_null(strstr(impl, "_view"));
            uint64_t before = launches(ctx);
            memset(got.data, 0xff, tb_tensor_nbytes(&got));
            assert_int_equal(tb_kernel_call(&k, view, &got, &p), 0);
            assert_int_equal(launches(ctx) - before, 1);
            if (ew) { /* the pair's C row on the copies: the same bits */
                const tb_cpu_krow *cr = tb_cpu_krow_c(op->id, dt);
                assert_non_null(cr);
                assert_int_equal(cr->fn(ctx, copy, &want, &p), 0);
                if (!same_bits(&got, &want))
                    fail_msg("%s %s %s level %d threads %d: not the C row's "
                             "bits", c->op, tb_layout_name(l),
                             tb_dtype_name(dt), lv, th);
            }
            tb_check chk;
            tb_check_outputs(&got, &ref, 1, op->tol[dt],
                             tb_check_terms(op, rlen), &chk);
            if (!chk.passed)
                fail_msg("%s %s %s level %d threads %d (%s): %lld bad, "
                         "first %lld: %.9g vs %.9g", c->op,
                         tb_layout_name(l), tb_dtype_name(dt), lv, th, impl,
                         (long long)chk.n_bad, (long long)chk.first_bad,
                         chk.first_bad_got, chk.first_bad_ref);
            B->destroy(ctx);
            runs++;
        }
    for (int i = 0; i < c->n_in; i++) {
        tb_tensor_destroy(&par[i]);
        tb_tensor_destroy(&copy[i]);
    }
    tb_tensor_destroy(&ref);
    tb_tensor_destroy(&ref_c);
    tb_tensor_destroy(&got);
    tb_tensor_destroy(&want);
    return runs;
}

static void test_view_rows(void **state)
{
    (void)state;
    uint64_t rng = SEED;
    int runs = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int l = 1; l < TB_LAYOUT_COUNT; l++)
            for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++)
                runs += run_case(&cases[ci], (tb_layout)l, (tb_dtype)d, &rng);
    print_message("# %d view-row calls checked (seed 0x%llx, %d levels)\n",
                  runs, (unsigned long long)SEED, n_levels());
}

/* ========================================================================= */
/* 3. unsupported combinations say why                                       */
/* ========================================================================= */

static const char *why_of(const char *name, tb_dtype dt, tb_layout l,
                          const tb_shape *in)
{
    const tb_op *op = tb_op_find(name);
    tb_params p;
    memset(&p, 0, sizeof p);
    tb_params_defaults(op, &p);
    tb_tensor par[2], view[2];
    for (int i = 0; i < op->n_in; i++) {
        tb_shape ps;
        assert_int_equal(tb_layout_parent(l, &in[i], &ps, NULL, 0), 0);
        tb_tensor_init(&par[i], dt, &ps);
        assert_int_equal(tb_layout_view(l, &par[i], &in[i], &view[i]), 0);
    }
    void *ctx = cpu_create(0, 1);
    const char *impl = NULL, *why = NULL;
    tb_kernel k = B->kernel_view(ctx, op, dt, &p, view, &impl, &why);
    B->destroy(ctx);
    assert_null(k.fn);
    assert_null(impl);
    assert_non_null(why);
    assert_null(strchr(why, '\n'));
    return why;
}

static void test_unsupported(void **state)
{
    (void)state;
    const tb_shape one[1] = {SHAPE(8, 9)};
    assert_non_null(strstr(why_of("var", TB_F32, TB_LAYOUT_STRIDED, one),
                           "needs contiguous input"));
    assert_non_null(strstr(why_of("transpose", TB_F64, TB_LAYOUT_SLICED, one),
                           "needs contiguous input"));
    assert_non_null(strstr(why_of("relu", TB_BF16, TB_LAYOUT_STRIDED, one),
                           "needs contiguous input"));
    const tb_shape bc[2] = {SHAPE(8, 9), SHAPE(9)};
    assert_non_null(strstr(why_of("add", TB_F32, TB_LAYOUT_STRIDED, bc),
                           "broadcasting"));
    const tb_backend *blas = tb_backend_find("blas");
    if (blas)
        assert_null(blas->kernel_view);
}

/* ========================================================================= */
/* 4. a transposed matmul at a GEMM level is not copied                      */
/* ========================================================================= */

static void test_no_copy(void **state)
{
    (void)state;
    if (n_levels() < 2) {
        print_message("# no GEMM level on this machine: skipped\n");
        return;
    }
    const tb_op *op = tb_op_find("matmul");
    const lcase c = {"matmul", 2, {S2(64, 48), S2(48, 40)}, {NULL}, {0}};
    tb_params p = params_of(op, &c);
    const tb_shape os = SHAPE(64, 40);
    uint64_t rng = SEED;
    for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
        const tb_dtype dt = (tb_dtype)d;
        tb_tensor par[2], view[2], copy[2], got, want;
        make_inputs(op, &c, TB_LAYOUT_TRANSPOSED, dt, &rng, par, view, copy);
        assert_int_equal(tb_tensor_create(&got, dt, &os), 0);
        assert_int_equal(tb_tensor_create(&want, dt, &os), 0);
        void *ctx = cpu_create(n_levels() - 1, 1);
        const char *impl = NULL, *why = NULL;
        tb_kernel kv = B->kernel_view(ctx, op, dt, &p, view, &impl, &why);
        assert_non_null(kv.fn);
        assert_non_null(strstr(impl, "_avx")); /* avx2_view, avx512_view */
        tb_kernel kc = B->kernel(ctx, op, dt, &p, NULL);
        tb_alloc_stats s0, s1, s2;
        /* a first call sizes the GEMM's cached packing buffer (gemm.h) */
        assert_int_equal(tb_kernel_call(&kc, copy, &want, &p), 0);
        tb_alloc_stats_read(&s0);
        assert_int_equal(tb_kernel_call(&kc, copy, &want, &p), 0);
        tb_alloc_stats_read(&s1);
        assert_int_equal(tb_kernel_call(&kv, view, &got, &p), 0);
        tb_alloc_stats_read(&s2);
        /* the same allocations (none: the GEMM's packing buffer is
         * cached), no copy */
        assert_int_equal(s2.allocs - s1.allocs, s1.allocs - s0.allocs);
        assert_int_equal(s2.bytes - s1.bytes, s1.bytes - s0.bytes);
        assert_int_equal(s2.allocs - s1.allocs, 0);
        /* the packed panels are the same: the same bits */
        assert_true(same_bits(&got, &want));
        B->destroy(ctx);
        for (int i = 0; i < 2; i++) {
            tb_tensor_destroy(&par[i]);
            tb_tensor_destroy(&copy[i]);
        }
        tb_tensor_destroy(&got);
        tb_tensor_destroy(&want);
    }
}

/* ========================================================================= */
/* 5. bad operands                                                           */
/* ========================================================================= */

static void test_bad_operands(void **state)
{
    (void)state;
    const tb_op *op = tb_op_find("add");
    const tb_shape s = SHAPE(4, 6);
    tb_tensor a, b, out;
    assert_int_equal(tb_tensor_create(&a, TB_F32, &s), 0);
    assert_int_equal(tb_tensor_create(&b, TB_F32, &s), 0);
    assert_int_equal(tb_tensor_create(&out, TB_F32, &s), 0);
    memset(out.data, 0x5a, tb_tensor_nbytes(&out));
    void *ctx = cpu_create(0, 1);
    tb_params p;
    memset(&p, 0, sizeof p);
    const char *impl = NULL, *why = NULL;
    tb_tensor in[2] = {a, b};
    in[1].strides[1] = 2; /* not contiguous: the view row */
    tb_kernel k = B->kernel_view(ctx, op, TB_F32, &p, in, &impl, &why);
    assert_non_null(k.fn);
    in[1].strides[1] = -1;
    assert_int_equal(tb_kernel_call(&k, in, &out, &p), TB_EINVAL);
    in[1].strides[1] = 2;
    in[1].data = NULL;
    assert_int_equal(tb_kernel_call(&k, in, &out, &p), TB_EINVAL);
    for (size_t i = 0; i < tb_tensor_nbytes(&out); i++)
        assert_int_equal(((unsigned char *)out.data)[i], 0x5a);
    B->destroy(ctx);
    tb_tensor_destroy(&a);
    tb_tensor_destroy(&b);
    tb_tensor_destroy(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_views, leak_setup, leak_teardown),
        cmocka_unit_test_setup_teardown(test_view_rows, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_unsupported, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_no_copy, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_bad_operands, leak_setup,
                                        leak_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
