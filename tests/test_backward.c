/* Tests of the backward ops (issue 14, src/ops/op_backward.h):
 *
 *  1. vectors: every case of tests/data/autograd_vectors.h (PyTorch
 *     autograd gradients, scripts/gen_oracle_autograd.py) through the
 *     reference kernel (f64 inputs) and the cpu backend's kernel (f32
 *     and f64).  Tolerance: the op table's, |got - want| <= atol *
 *     sqrt(reduce_len) + rtol * |want| at the kernel's dtype (f32
 *     TOL_ACC: rtol 1e-5, atol 2e-6; element-wise gradients rtol 1e-5,
 *     atol 1e-6; f64 1e-12/1e-13 and 1e-13/1e-14).
 *  2. finite differences: every gradient the reference computes equals
 *     the central difference (h = 1e-6) of L = sum(g * forward(inputs))
 *     through tbench's own forward reference kernels, in f64, within
 *     2e-7 + 1e-6 |want| (truncation ~h^2, rounding ~1e-16 |L| / h).
 *  3. shape rules: a gradient of the wrong shape, inputs that do not
 *     broadcast, a sum gradient for the wrong axis: TB_ESHAPE / TB_EPARAM
 *     with a message naming the op.
 *  4. nll_loss targets that are not class indices: TB_EINVAL from the
 *     reference and the cpu kernels.
 *  5. coverage: every op of category backward has vector cases, a
 *     finite-difference check (except nll_loss, a forward op) and cpu
 *     kernels in both dtypes (the norms' gradients: test_norm.c, with
 *     their own vectors).
 *  6. the cpu kernels' fast paths (conv2d_backward's chunks of images,
 *     max_pool2d_backward's tiled windows, with ties;
 *     avg_pool2d_backward's tiled and general paths) at shapes the
 *     vectors do not reach, against the f64 reference kernel (itself
 *     checked by 1 and 2), within the op table's tolerance; conv2d's
 *     forward at image splits likewise. */
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
#include "base/error.h"
#include "base/rng.h"
#include "ops/alloc.h"
#include "ops/op.h"
#include "ops/op_backward.h"
#include "ops/tensor.h"
#include "tests/data/autograd_vectors.h"

extern const tb_backend tb_backend_cpu;
static const tb_backend *const B = &tb_backend_cpu;

#define FD_H 1e-6
#define FD_ATOL 2e-7
#define FD_RTOL 1e-6

static tb_shape shape_of_agv(const agv_shape *s)
{
    tb_shape r;
    memset(&r, 0, sizeof r);
    r.ndim = s->ndim;
    for (int d = 0; d < s->ndim; d++)
        r.dim[d] = s->dim[d];
    return r;
}

static void tensor_from(tb_tensor *t, tb_dtype dt, const agv_shape *s,
                        const double *x)
{
    tb_shape sh = shape_of_agv(s);
    assert_int_equal(tb_tensor_create(t, dt, &sh), 0);
    int64_t n = tb_shape_numel(&sh);
    for (int64_t i = 0; i < n; i++)
        tb_tensor_set(t, i, x[i]);
}

static tb_params case_params(const tb_op *op, const agv_case *c)
{
    tb_params p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < c->n_params; i++) {
        char err[256];
        if (tb_params_set(op, &p, c->params[i].name, c->params[i].value, err,
                          sizeof err))
            fail_msg("%s: %s", c->name, err);
    }
    return p;
}

static void *cpu_new_isa(const char *isa)
{
    const char *vals[2] = {isa, "1"};
    void *ctx = NULL;
    char err[256];
    assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
    return ctx;
}

static void *cpu_new(void) { return cpu_new_isa("auto"); }

/* Compares got (f64 host) with the case's expected output o. */
static void compare(const agv_case *c, const tb_op *op, tb_dtype dt,
                    const tb_shape *ish, const tb_params *p, int o,
                    const tb_tensor *got, const char *who)
{
    tb_shape osh[TB_MAX_OUTPUTS];
    assert_int_equal(tb_op_infer(op, ish, op->n_in, p, osh, NULL, 0), 0);
    tb_params full = *p;
    tb_params_defaults(op, &full);
    double rlen = op->reduce_len ? op->reduce_len(op, ish, osh, &full, dt)
                                 : 1;
    double atol = op->tol[dt].atol * sqrt(rlen), rtol = op->tol[dt].rtol;
    int64_t n = tb_tensor_numel(got);
    for (int64_t i = 0; i < n; i++) {
        double g = tb_tensor_get(got, i), w = c->out[o][i];
        if (!(fabs(g - w) <= atol + rtol * fabs(w)))
            fail_msg("%s (%s, %s) output %d [%lld]: got %.17g want %.17g "
                     "(atol %g rtol %g)",
                     c->name, who, tb_dtype_name(dt), o, (long long)i, g, w,
                     atol, rtol);
    }
}

/* ---- 1. vectors ------------------------------------------------------------ */

static void run_vector(const agv_case *c, void *ctx, tb_dtype dt, bool ref)
{
    const tb_op *op = tb_op_find(c->op);
    assert_non_null(op);
    assert_int_equal(op->n_in, c->n_in);
    assert_int_equal(op->n_out, c->n_out);
    tb_params p = case_params(op, c);
    tb_tensor in[4], out[3];
    tb_shape ish[4];
    for (int i = 0; i < c->n_in; i++) {
        tensor_from(&in[i], dt, &c->in_shape[i], c->in[i]);
        ish[i] = tb_tensor_shape(&in[i]);
    }
    tb_shape osh[TB_MAX_OUTPUTS];
    char err[256] = "";
    if (tb_op_infer(op, ish, op->n_in, &p, osh, err, sizeof err))
        fail_msg("%s: %s", c->name, err);
    for (int o = 0; o < c->n_out; o++) {
        tb_shape want = shape_of_agv(&c->out_shape[o]);
        assert_true(tb_shape_equal(&osh[o], &want));
        assert_int_equal(
            tb_tensor_create(&out[o], ref ? TB_F64 : dt, &osh[o]), 0);
    }
    if (ref) {
        assert_int_equal(op->ref(in, out, &p), 0);
    } else {
        const char *impl = NULL;
        tb_kernel_fn fn = B->kernel(ctx, op, dt, &p, &impl).fn;
        assert_non_null(fn);
        assert_int_equal(fn(ctx, in, out, &p), 0);
    }
    for (int o = 0; o < c->n_out; o++)
        compare(c, op, ref ? TB_F64 : dt, ish, &p, o, &out[o],
                ref ? "ref" : "cpu");
    for (int i = 0; i < c->n_in; i++)
        tb_tensor_destroy(&in[i]);
    for (int o = 0; o < c->n_out; o++)
        tb_tensor_destroy(&out[o]);
}

static void test_vectors(void **state)
{
    (void)state;
    void *ctx = cpu_new();
    for (int k = 0; k < AGV_N_CASES; k++) {
        run_vector(&agv_cases[k], ctx, TB_F64, true);
        run_vector(&agv_cases[k], ctx, TB_F32, false);
        run_vector(&agv_cases[k], ctx, TB_F64, false);
    }
    B->destroy(ctx);
}

/* ---- 2. finite differences ------------------------------------------------- */

/* L = sum(g * fwd(fin)), all in f64 through the forward reference. */
static double loss_of(const tb_op *fwd, tb_tensor *fin, const tb_params *fp,
                      const double *g)
{
    tb_shape ish[4], osh[TB_MAX_OUTPUTS];
    for (int i = 0; i < fwd->n_in; i++)
        ish[i] = tb_tensor_shape(&fin[i]);
    assert_int_equal(tb_op_infer(fwd, ish, fwd->n_in, fp, osh, NULL, 0), 0);
    tb_tensor y;
    assert_int_equal(tb_tensor_create(&y, TB_F64, &osh[0]), 0);
    assert_int_equal(fwd->ref(fin, &y, fp), 0);
    double L = 0;
    int64_t n = tb_tensor_numel(&y);
    for (int64_t i = 0; i < n; i++)
        L += g[i] * tb_tensor_get(&y, i);
    tb_tensor_destroy(&y);
    return L;
}

static void run_fd(const agv_case *c)
{
    const tb_op *op = tb_op_find(c->op);
    const tb_op *fwd = tb_op_find(c->fwd);
    assert_non_null(op);
    assert_non_null(fwd);
    assert_int_equal(fwd->n_in, c->n_fin);
    tb_params p = case_params(op, c);
    /* the forward op takes the same parameters (by name) */
    tb_params fp;
    memset(&fp, 0, sizeof fp);
    for (int i = 0; i < c->n_params; i++)
        assert_int_equal(tb_params_set(fwd, &fp, c->params[i].name,
                                       c->params[i].value, NULL, 0),
                         0);
    tb_tensor in[4], out[3], fin[4];
    tb_shape ish[4], osh[TB_MAX_OUTPUTS];
    for (int i = 0; i < c->n_in; i++) {
        tensor_from(&in[i], TB_F64, &c->in_shape[i], c->in[i]);
        ish[i] = tb_tensor_shape(&in[i]);
    }
    assert_int_equal(tb_op_infer(op, ish, op->n_in, &p, osh, NULL, 0), 0);
    for (int o = 0; o < op->n_out; o++)
        assert_int_equal(tb_tensor_create(&out[o], TB_F64, &osh[o]), 0);
    assert_int_equal(op->ref(in, out, &p), 0);
    for (int i = 0; i < c->n_fin; i++)
        tensor_from(&fin[i], TB_F64, &c->fin_shape[i], c->fin[i]);
    const double *g = c->in[0];
    for (int o = 0; o < op->n_out; o++) {
        int fi = c->fmap[o];
        assert_in_range(fi, 0, c->n_fin - 1);
        double *x = fin[fi].data;
        int64_t n = tb_tensor_numel(&fin[fi]);
        assert_int_equal(n, tb_tensor_numel(&out[o]));
        for (int64_t j = 0; j < n; j++) {
            double x0 = x[j];
            x[j] = x0 + FD_H;
            double lp = loss_of(fwd, fin, &fp, g);
            x[j] = x0 - FD_H;
            double lm = loss_of(fwd, fin, &fp, g);
            x[j] = x0;
            double fd = (lp - lm) / (2 * FD_H);
            double want = tb_tensor_get(&out[o], j);
            if (!(fabs(fd - want) <= FD_ATOL + FD_RTOL * fabs(want)))
                fail_msg("%s output %d [%lld]: reference %.17g, finite "
                         "difference %.17g",
                         c->name, o, (long long)j, want, fd);
        }
    }
    for (int i = 0; i < c->n_in; i++)
        tb_tensor_destroy(&in[i]);
    for (int o = 0; o < op->n_out; o++)
        tb_tensor_destroy(&out[o]);
    for (int i = 0; i < c->n_fin; i++)
        tb_tensor_destroy(&fin[i]);
}

static void test_finite_differences(void **state)
{
    (void)state;
    int n = 0;
    for (int k = 0; k < AGV_N_CASES; k++) {
        if (strcmp(agv_cases[k].op, "nll_loss") == 0)
            continue; /* a forward op: its value is checked in 1. */
        run_fd(&agv_cases[k]);
        n++;
    }
    assert_true(n > 40);
}

/* ---- 3. shape rules ---------------------------------------------------------- */

static void expect_shape_error(const char *name, int n_in,
                               const tb_shape *in, const tb_params *p,
                               int code, const char *needle)
{
    const tb_op *op = tb_op_find(name);
    assert_non_null(op);
    tb_shape out[TB_MAX_OUTPUTS];
    char err[256] = "";
    int rc = tb_op_infer(op, in, n_in, p, out, err, sizeof err);
    if (rc != code)
        fail_msg("%s: code %d, want %d (%s)", name, rc, code, err);
    if (!strstr(err, name) || !strstr(err, needle))
        fail_msg("%s: message '%s' lacks '%s'", name, err, needle);
}

static void test_shape_rules(void **state)
{
    (void)state;
    tb_shape two[2] = {SHAPE(3, 4), SHAPE(4, 3)};
    expect_shape_error("relu_backward", 2, two, NULL, TB_ESHAPE,
                       "does not match");
    tb_shape bin[3] = {SHAPE(3, 4), SHAPE(3, 4), SHAPE(5)};
    expect_shape_error("mul_backward", 3, bin, NULL, TB_ESHAPE,
                       "cannot broadcast");
    tb_shape mm[3] = {SHAPE(2, 2), SHAPE(2, 3), SHAPE(3, 4)};
    expect_shape_error("matmul_backward", 3, mm, NULL, TB_ESHAPE,
                       "does not match the matmul output 2x4");
    /* sum over axis 0 of [3, 4] is [4], not [3] */
    const tb_op *sum_bw = tb_op_find("sum_backward");
    tb_params p;
    memset(&p, 0, sizeof p);
    assert_int_equal(tb_params_set(sum_bw, &p, "axis", 0, NULL, 0), 0);
    tb_shape sb[2] = {SHAPE(3), SHAPE(3, 4)};
    expect_shape_error("sum_backward", 2, sb, &p, TB_ESHAPE, "gradient 3");
    tb_params bad = p;
    bad.v[0] = 2;
    expect_shape_error("sum_backward", 2, sb, &bad, TB_EPARAM, "axis 2");
    /* a scalar output's gradient is [1] */
    tb_shape all[2] = {SHAPE(1), SHAPE(3, 4)};
    tb_shape out[TB_MAX_OUTPUTS];
    assert_int_equal(tb_op_infer(sum_bw, all, 2, NULL, out, NULL, 0), 0);
    tb_shape want = SHAPE(3, 4);
    assert_true(tb_shape_equal(&out[0], &want));
    tb_shape nll[2] = {SHAPE(4, 5), SHAPE(3)};
    expect_shape_error("nll_loss", 2, nll, NULL, TB_ESHAPE, "targets [N]");
    tb_shape cv[3] = {SHAPE(1, 2, 5, 5), SHAPE(1, 1, 6, 6),
                      SHAPE(2, 1, 3, 3)};
    expect_shape_error("conv2d_backward", 3, cv, NULL, TB_ESHAPE,
                       "gradient 1x2x5x5 does not match");
    tb_shape lin[4] = {SHAPE(2, 3), SHAPE(2, 5), SHAPE(5, 3), SHAPE(3, 2)};
    expect_shape_error("linear_backward", 4, lin, NULL, TB_ESHAPE,
                       "forward output y");
}

/* ---- 4. bad targets ----------------------------------------------------------- */

static void test_bad_targets(void **state)
{
    (void)state;
    /* the C rows (isa scalar) and the best level's (auto: nll_avx512.h's
     * rows where the CPU has AVX-512) */
    for (int lv = 0; lv < 2; lv++) {
        void *ctx = cpu_new_isa(lv ? "auto" : "scalar");
        /* out of range, fractions, NaN, infinities, an integer past 2^53;
         * at the first, a middle and the last of 6 targets and the tail of
         * 10 (the rows check them in a vectorized loop and gather 4 or 8 at
         * a time) */
        const double bad[] = {5,   -1,        1.5,      NAN,    INFINITY,
                              -INFINITY, 4.999999, 0x1p53, -0.5,  1e300};
        const int at[] = {0, 3, 5, 9};
        for (size_t b = 0; b < sizeof bad / sizeof bad[0] * 4; b++)
            for (int which = 0; which < 2; which++) {
                const tb_op *op =
                    tb_op_find(which ? "nll_loss_backward" : "nll_loss");
                agv_shape gs = {1, {1}}, ls = {2, {10, 5}}, ts = {1, {10}};
                const double g[1] = {1}, lp[50] = {0};
                /* -0: class 0 */
                double t[10] = {0, 4, 1, 2, 3, -0.0, 1, 2, 3, 4};
                t[at[b % 4]] = bad[b / 4];
                for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
                    tb_tensor in[3], out, ref;
                    int k = 0;
                    if (which)
                        tensor_from(&in[k++], (tb_dtype)dt, &gs, g);
                    tensor_from(&in[k++], (tb_dtype)dt, &ls, lp);
                    tensor_from(&in[k++], (tb_dtype)dt, &ts, t);
                    tb_shape os = which ? SHAPE(10, 5) : (tb_shape){0, {0}};
                    assert_int_equal(tb_tensor_create(&out, (tb_dtype)dt, &os),
                                     0);
                    assert_int_equal(tb_tensor_create(&ref, TB_F64, &os), 0);
                    tb_kernel_fn fn = B->kernel(ctx, op, (tb_dtype)dt, NULL,
                                                NULL).fn;
                    assert_non_null(fn);
                    assert_int_equal(fn(ctx, in, &out, NULL), TB_EINVAL);
                    assert_int_equal(op->ref(in, &ref, NULL), TB_EINVAL);
                    for (int i = 0; i < k; i++)
                        tb_tensor_destroy(&in[i]);
                    tb_tensor_destroy(&out);
                    tb_tensor_destroy(&ref);
                }
            }
        B->destroy(ctx);
    }
}

/* ---- 5. coverage ----------------------------------------------------------------- */

static void test_coverage(void **state)
{
    (void)state;
    void *ctx = cpu_new();
    int n_bw = 0;
    for (int id = 0; id < TB_OP_COUNT; id++) {
        const tb_op *op = tb_op_get((tb_op_id)id);
        if (op->category != TB_CAT_BACKWARD)
            continue;
        n_bw++;
        if (op->id == TB_OP_layer_norm_backward ||
            op->id == TB_OP_rms_norm_backward ||
            op->id == TB_OP_batch_norm_backward ||
            op->id == TB_OP_group_norm_backward)
            continue; /* vectors and coverage: test_norm.c */
        /* cross_entropy, its gradient and embedding_backward:
         * test_embed.c holds them to their own vectors
         * (tests/data/embed_vectors.h) at every level */
        if (op->id == TB_OP_cross_entropy ||
            op->id == TB_OP_cross_entropy_backward ||
            op->id == TB_OP_embedding_backward)
            continue;
        if (op->id == TB_OP_sdpa_backward)
            continue; /* vectors and coverage: test_attn.c */
        int seen = 0;
        for (int k = 0; k < AGV_N_CASES; k++)
            seen += strcmp(agv_cases[k].op, op->name) == 0;
        if (seen < 2)
            fail_msg("%s: %d vector cases (need 2 or more)", op->name, seen);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            const char *impl = NULL;
            if (!B->kernel(ctx, op, (tb_dtype)dt, NULL, &impl).fn)
                fail_msg("%s %s: no cpu kernel", op->name,
                         tb_dtype_name((tb_dtype)dt));
        }
    }
    assert_int_equal(n_bw, 26);
    for (int k = 0; k < AGV_N_CASES; k++) {
        const tb_op *op = tb_op_find(agv_cases[k].op);
        assert_non_null(op);
        assert_int_equal(op->category, TB_CAT_BACKWARD);
    }
    B->destroy(ctx);
}

/* ---- 6. the cpu kernels' fast paths against the reference -------------- */

/* op (a backward op) on inputs of shapes is[] filled from seed (uniform
 * in [-1, 1), or from {-1, 0, 1} when `ties`, so windows hold equal
 * maxima): the cpu kernel (threads 1 and 2, f32 and f64; its outputs
 * NaN before the call) equals the f64 reference kernel within the op
 * table's tolerance (as in compare). */
static void check_against_ref(const char *opname, const tb_shape *is,
                              const tb_params *p, uint64_t seed, bool ties)
{
    const tb_op *op = tb_op_find(opname);
    assert_non_null(op);
    tb_shape osh[TB_MAX_OUTPUTS];
    assert_int_equal(tb_op_infer(op, is, op->n_in, p, osh, NULL, 0), 0);
    tb_params full = *p;
    tb_params_defaults(op, &full);
    tb_tensor in64[4], want[3];
    tb_rng rng;
    tb_rng_seed(&rng, seed);
    for (int i = 0; i < op->n_in; i++) {
        assert_int_equal(tb_tensor_create(&in64[i], TB_F64, &is[i]), 0);
        int64_t n = tb_shape_numel(&is[i]);
        for (int64_t e = 0; e < n; e++) {
            double v = ties ? (double)tb_rng_below(&rng, 3) - 1
                            : 2 * tb_rng_uniform(&rng) - 1;
            /* exactly representable in f32 */
            tb_tensor_set(&in64[i], e, (double)(float)v);
        }
    }
    for (int o = 0; o < op->n_out; o++)
        assert_int_equal(tb_tensor_create(&want[o], TB_F64, &osh[o]), 0);
    assert_int_equal(op->ref(in64, want, p), 0);
    const char *threads[2] = {"1", "2"};
    for (int th = 0; th < 2; th++) {
        const char *vals[2] = {"auto", threads[th]};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            tb_tensor in[4], out[3];
            for (int i = 0; i < op->n_in; i++) {
                assert_int_equal(
                    tb_tensor_create(&in[i], (tb_dtype)dt, &is[i]), 0);
                int64_t n = tb_shape_numel(&is[i]);
                for (int64_t e = 0; e < n; e++)
                    tb_tensor_set(&in[i], e, tb_tensor_get(&in64[i], e));
            }
            for (int o = 0; o < op->n_out; o++) {
                assert_int_equal(
                    tb_tensor_create(&out[o], (tb_dtype)dt, &osh[o]), 0);
                /* the kernel must write every element */
                for (int64_t e = 0; e < tb_tensor_numel(&out[o]); e++)
                    tb_tensor_set(&out[o], e, NAN);
            }
            tb_kernel_fn fn = B->kernel(ctx, op, (tb_dtype)dt, p, NULL).fn;
            assert_non_null(fn);
            assert_int_equal(fn(ctx, in, out, p), 0);
            double rlen = op->reduce_len ? op->reduce_len(op, is, osh, &full,
                                                          (tb_dtype)dt)
                                         : 1;
            double atol = op->tol[dt].atol * sqrt(rlen);
            double rtol = op->tol[dt].rtol;
            for (int o = 0; o < op->n_out; o++) {
                int64_t n = tb_tensor_numel(&out[o]);
                for (int64_t e = 0; e < n; e++) {
                    double g = tb_tensor_get(&out[o], e);
                    double w = tb_tensor_get(&want[o], e);
                    if (!(fabs(g - w) <= atol + rtol * fabs(w)))
                        fail_msg("%s (cpu %s, threads %s) output %d [%lld]: "
                                 "got %.17g want %.17g (atol %g rtol %g)",
                                 opname, tb_dtype_name((tb_dtype)dt),
                                 threads[th], o, (long long)e, g, w, atol,
                                 rtol);
                }
                tb_tensor_destroy(&out[o]);
            }
            for (int i = 0; i < op->n_in; i++)
                tb_tensor_destroy(&in[i]);
        }
        B->destroy(ctx);
    }
    for (int i = 0; i < op->n_in; i++)
        tb_tensor_destroy(&in64[i]);
    for (int o = 0; o < op->n_out; o++)
        tb_tensor_destroy(&want[o]);
}

/* conv2d_backward runs its GEMMs on chunks of images (at most 2^17
 * elements of columns or of g each, at least one image), the chunks
 * split over the threads: shapes of several chunks, a last partial
 * chunk, an odd number of chunks (two threads take 3 and 2), one image
 * a chunk, with stride, padding and dilation, and the CNN's two layers
 * (one chunk, one of 12 images); each also with input_grad=0 (dx
 * zeros, as the reference's; dw and db the same), the tape's first
 * layer. */
static void test_conv_chunks(void **state)
{
    (void)state;
    const tb_op *op = tb_op_find("conv2d_backward");
    struct {
        int64_t n, c, h, w, o, k, st, pad, dil;
    } cs[] = {
        {11, 8, 30, 30, 4, 3, 1, 0, 1},  /* chunks of 2 images, then 1 */
        {9, 8, 30, 30, 4, 3, 1, 0, 1},   /* 5 chunks, the last of 1 */
        {12, 32, 24, 24, 5, 3, 1, 1, 1}, /* one image a chunk */
        {7, 24, 40, 38, 3, 3, 2, 2, 2},  /* strided, dilated */
        {3, 1, 28, 28, 16, 3, 1, 0, 1},  /* the CNN's conv1 */
        {3, 16, 13, 13, 32, 3, 1, 0, 1}, /* and conv2 */
        {29, 1, 28, 28, 16, 3, 1, 0, 1}, /* conv1: 12 + 12 + 5 images */
    };
    for (size_t i = 0; i < 2 * (sizeof cs / sizeof cs[0]); i++) {
        size_t c = i / 2;
        tb_params p;
        memset(&p, 0, sizeof p);
        if (i % 2)
            assert_int_equal(
                tb_params_set(op, &p, "input_grad", 0, NULL, 0), 0);
        assert_int_equal(tb_params_set(op, &p, "stride", (double)cs[c].st,
                                       NULL, 0), 0);
        assert_int_equal(tb_params_set(op, &p, "padding",
                                       (double)cs[c].pad, NULL, 0), 0);
        assert_int_equal(tb_params_set(op, &p, "dilation",
                                       (double)cs[c].dil, NULL, 0), 0);
        int64_t ek = (cs[c].k - 1) * cs[c].dil + 1;
        int64_t oh = (cs[c].h + 2 * cs[c].pad - ek) / cs[c].st + 1;
        int64_t ow = (cs[c].w + 2 * cs[c].pad - ek) / cs[c].st + 1;
        tb_shape is[3] = {
            {4, {cs[c].n, cs[c].o, oh, ow}},
            {4, {cs[c].n, cs[c].c, cs[c].h, cs[c].w}},
            {4, {cs[c].o, cs[c].c, cs[c].k, cs[c].k}},
        };
        check_against_ref("conv2d_backward", is, &p, 100 + i, false);
    }
}

/* conv2d's forward (drv_conv.c, beside its gradient here): the images
 * split over the threads (7: 4 and 3 at two threads), the CNN's conv1
 * at 32 images and conv2 at 9, without bias, and two big images (each
 * GEMM split over the threads), each against the f64 reference kernel
 * (the checkasm rows share the driver's loop: they cannot tell it
 * wrong). */
static void test_conv_forward_images(void **state)
{
    (void)state;
    struct {
        int64_t n, c, h, w, o, k, pad;
        bool bias;
    } cs[] = {
        {7, 2, 9, 10, 3, 3, 0, true},
        {32, 1, 28, 28, 16, 3, 0, true},
        {9, 16, 13, 13, 32, 3, 0, true},
        {9, 16, 13, 13, 32, 3, 1, false},
        {2, 16, 40, 40, 32, 3, 1, true},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const char *name = cs[i].bias ? "conv2d" : "conv2d_nobias";
        const tb_op *op = tb_op_find(name);
        tb_params p;
        memset(&p, 0, sizeof p);
        assert_int_equal(
            tb_params_set(op, &p, "padding", (double)cs[i].pad, NULL, 0), 0);
        tb_shape is[3] = {
            {4, {cs[i].n, cs[i].c, cs[i].h, cs[i].w}},
            {4, {cs[i].o, cs[i].c, cs[i].k, cs[i].k}},
            {1, {cs[i].o}},
        };
        check_against_ref(name, is, &p, 200 + i, false);
    }
}

/* A pooling geometry of the pool-path tests. */
typedef struct pool_case {
    int64_t n, c, h, w, k, st, pad;
} pool_case;

/* name (max_pool2d_backward or avg_pool2d_backward) on each geometry of
 * cs against the reference kernel, seeds seed0 + i; with ties, each case
 * once more with equal values in a window. */
static void check_pool_cases(const char *name, const pool_case *cs,
                             size_t n, int seed0, bool ties)
{
    const tb_op *op = tb_op_find(name);
    for (size_t i = 0; i < n; i++)
        for (int t = 0; t < (ties ? 2 : 1); t++) {
            tb_params p;
            memset(&p, 0, sizeof p);
            assert_int_equal(tb_params_set(op, &p, "kernel",
                                           (double)cs[i].k, NULL, 0), 0);
            assert_int_equal(tb_params_set(op, &p, "stride",
                                           (double)cs[i].st, NULL, 0), 0);
            assert_int_equal(tb_params_set(op, &p, "padding",
                                           (double)cs[i].pad, NULL, 0), 0);
            int64_t oh = (cs[i].h + 2 * cs[i].pad - cs[i].k) / cs[i].st + 1;
            int64_t ow = (cs[i].w + 2 * cs[i].pad - cs[i].k) / cs[i].st + 1;
            tb_shape is[2] = {
                {4, {cs[i].n, cs[i].c, oh, ow}},
                {4, {cs[i].n, cs[i].c, cs[i].h, cs[i].w}},
            };
            check_against_ref(name, is, &p, seed0 + (int)i, t != 0);
        }
}

/* max_pool2d_backward's tiled path (stride == kernel, no padding) with
 * equal maxima in a window (the first one takes g, as in the reference)
 * and rows / columns no window covers; and the general path. */
static void test_max_pool_paths(void **state)
{
    (void)state;
    static const pool_case cs[] = {
        {3, 16, 26, 26, 2, 2, 0}, {2, 3, 11, 9, 2, 2, 0},
        {2, 2, 10, 11, 3, 3, 0},  {2, 2, 9, 9, 3, 2, 1},
    };
    check_pool_cases("max_pool2d_backward", cs, sizeof cs / sizeof cs[0],
                     200, true);
}

/* avg_pool2d_backward's tiled path (stride == kernel, no padding: kernel
 * 2's interleaving loop, kernel 1, 3 and 4's general one, rows and
 * columns no window covers) and the general path (overlapping windows,
 * padding). */
static void test_avg_pool_paths(void **state)
{
    (void)state;
    static const pool_case cs[] = {
        {3, 16, 26, 26, 2, 2, 0}, {2, 3, 11, 9, 2, 2, 0},
        {2, 2, 10, 11, 3, 3, 0},  {2, 2, 9, 9, 3, 2, 1},
        {1, 3, 5, 7, 1, 1, 0},    {2, 2, 13, 18, 4, 4, 0},
        {2, 3, 8, 8, 2, 1, 0},    {1, 2, 7, 6, 2, 2, 1},
    };
    check_pool_cases("avg_pool2d_backward", cs, sizeof cs / sizeof cs[0],
                     300, false);
}

/* ---- 6. broadcasting paths of the cpu kernels ------------------------------ */

/* add/sub/mul/div_backward's cpu kernels (f32, f64) against the
 * reference kernel on shapes that take every path of backward_impl.inc's
 * F(binary): both operands full (one pass), one full and one broadcast
 * row vector on either side (F(brow): written and accumulated outputs),
 * both broadcast, and a broadcast last axis (the odometer's strided
 * loop).  Inputs are deterministic: no two elements alike. */
static void test_binary_paths(void **state)
{
    (void)state;
    static const int sh[][3][4] = {
        /* {ndim, dims...} of a and b */
        {{2, 9, 37}, {2, 9, 37}},
        {{2, 9, 37}, {1, 37}},
        {{1, 37}, {2, 9, 37}},
        {{3, 2, 1, 37}, {3, 1, 5, 37}},
        {{2, 9, 37}, {2, 9, 1}},
        {{2, 1, 37}, {3, 4, 9, 37}},
    };
    static const char *const ops[] = {"add_backward", "sub_backward",
                                      "mul_backward", "div_backward"};
    void *ctx = cpu_new();
    for (size_t oi = 0; oi < 4; oi++) {
        const tb_op *op = tb_op_find(ops[oi]);
        assert_non_null(op);
        for (size_t si = 0; si < sizeof sh / sizeof sh[0]; si++)
            for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
                tb_shape ab[2];
                for (int j = 0; j < 2; j++) {
                    ab[j].ndim = sh[si][j][0];
                    for (int d = 0; d < ab[j].ndim; d++)
                        ab[j].dim[d] = sh[si][j][1 + d];
                }
                tb_shape gsh;
                tb_shape ish3[3] = {{0}, ab[0], ab[1]};
                /* g has the broadcast shape of a and b */
                int nd = ab[0].ndim > ab[1].ndim ? ab[0].ndim : ab[1].ndim;
                gsh.ndim = nd;
                for (int d = 0; d < nd; d++) {
                    int ja = d - (nd - ab[0].ndim);
                    int jb = d - (nd - ab[1].ndim);
                    int64_t x = ja >= 0 ? ab[0].dim[ja] : 1;
                    int64_t y = jb >= 0 ? ab[1].dim[jb] : 1;
                    gsh.dim[d] = x > y ? x : y;
                }
                ish3[0] = gsh;
                tb_tensor in[3], out[2], ref[2];
                for (int i = 0; i < 3; i++) {
                    assert_int_equal(
                        tb_tensor_create(&in[i], (tb_dtype)dt, &ish3[i]), 0);
                    for (int64_t k = 0; k < tb_tensor_numel(&in[i]); k++)
                        tb_tensor_set(&in[i], k,
                                      (i == 2 ? 1.5 : 0.0) +
                                          sin(1.0 + (double)k * 0.37 +
                                              (double)i));
                }
                tb_params p = {0};
                tb_shape osh[TB_MAX_OUTPUTS];
                char err[256] = "";
                if (tb_op_infer(op, ish3, 3, &p, osh, err, sizeof err))
                    fail_msg("%s case %zu: %s", ops[oi], si, err);
                for (int o = 0; o < 2; o++) {
                    assert_int_equal(
                        tb_tensor_create(&out[o], (tb_dtype)dt, &osh[o]), 0);
                    assert_int_equal(
                        tb_tensor_create(&ref[o], TB_F64, &osh[o]), 0);
                }
                const char *impl = NULL;
                tb_kernel_fn fn =
                    B->kernel(ctx, op, (tb_dtype)dt, &p, &impl).fn;
                assert_non_null(fn);
                assert_int_equal(fn(ctx, in, out, &p), 0);
                assert_int_equal(op->ref(in, ref, &p), 0);
                tb_shape outs[2] = {osh[0], osh[1]};
                double rlen = op->reduce_len
                                  ? op->reduce_len(op, ish3, outs, &p,
                                                   (tb_dtype)dt)
                                  : 1;
                double atol = op->tol[dt].atol * sqrt(rlen);
                double rtol = op->tol[dt].rtol;
                for (int o = 0; o < 2; o++)
                    for (int64_t k = 0; k < tb_tensor_numel(&ref[o]); k++) {
                        double g = tb_tensor_get(&out[o], k);
                        double w = tb_tensor_get(&ref[o], k);
                        if (!(fabs(g - w) <= atol + rtol * fabs(w)))
                            fail_msg("%s case %zu (%s) output %d [%lld]: got "
                                     "%.17g want %.17g",
                                     ops[oi], si, tb_dtype_name((tb_dtype)dt),
                                     o, (long long)k, g, w);
                    }
                for (int i = 0; i < 3; i++)
                    tb_tensor_destroy(&in[i]);
                for (int o = 0; o < 2; o++) {
                    tb_tensor_destroy(&out[o]);
                    tb_tensor_destroy(&ref[o]);
                }
            }
    }
    B->destroy(ctx);
}

#define T(f) {#f, test_##f, leak_setup, leak_teardown, NULL}

int main(void)
{
    static const struct CMUnitTest tests[] = {
        T(vectors),
        T(finite_differences),
        T(shape_rules),
        T(bad_targets),
        T(coverage),
        T(conv_chunks),
        T(conv_forward_images),
        T(max_pool_paths),
        T(binary_paths),
        T(avg_pool_paths),
    };
    printf("# test_backward: %d autograd vectors\n", AGV_N_CASES);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
