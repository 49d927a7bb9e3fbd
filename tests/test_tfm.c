/* Tests of the transformer block workload (tfm_train_step,
 * tfm_infer_step: src/ops/models.h) and the tape's differentiable
 * permute (src/ops/autograd.h).
 *
 *  1. ref_vectors: the model on the reference kernels (f64) with the
 *     parameters of each case of tests/data/tfm_vectors.h (PyTorch 1.13,
 *     float64, scripts/gen_oracle_tfm.py) takes one training step: its
 *     loss, output y and the loss's gradient in every parameter within
 *     |got - want| <= 1e-11 |want| + 1e-13 (the same double operations
 *     in another order), and every parameter after the step is
 *     p - lr * grad (sgd_momentum's first step, PyTorch's) to 1e-14;
 *     with hooks = 3 a step makes 18 forward and 18 backward hook calls.
 *  2. cpu_vectors: the same on the cpu backend's kernels at every ISA
 *     level this machine and build have, threads 1 and 2, f32 and f64,
 *     with the harness's own check (tb_check_outputs) at the op's
 *     tolerance (TOL_WORKLOAD); the gradients' scale is the loss's, so
 *     they are held to it relative to their largest element.
 *  3. workload: tfm_train_step and tfm_infer_step through
 *     tb_workload_create on the cpu backend (threads 1, 2; f32, f64):
 *     the first call's output against the op's reference (the runner's
 *     first-call check), impl names the tape's kernels, three more
 *     training steps lower the loss.
 *  4. permute_grad: the tape's gradient of sum(c * permute(x)) in x is
 *     the inverse permute of c exactly, and matches central finite
 *     differences to 1e-8, for orders of 2, 3 and 4 dims (the model's
 *     (0, 2, 1, 3) among them) and the default (reversed) order.
 *  5. bad_operands: x not [batch, seq, d_model], d_model not a multiple
 *     of heads: a one-line error naming the fault, no model built.
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

#include "ag_exec.h"

#include "cpu_family.h"

#include "backends/workload.h"
#include "base/error.h"
#include "harness/check.h"
#include "ops/alloc.h"
#include "ops/autograd.h"
#include "ops/models.h"
#include "ops/op.h"
#include "ops/tensor.h"
#include "tests/data/tfm_vectors.h"

#define LR 0.01
#define MOMENTUM 0.9

/* ---- execs: the reference kernels (f64) and a cpu instance ------------ */

static const tb_ag_exec ref_exec = {ag_ref_run, ag_ref_alloc, ag_ref_free,
                                    ag_host_upload, NULL};

/* ---- helpers ------------------------------------------------------------- */

static void fill(tb_tensor *t, const double *v)
{
    for (int64_t i = 0; i < tb_tensor_numel(t); i++)
        tb_tensor_set(t, i, v[i]);
}

/* An f64 host tensor of shape s holding v. */
static void host(tb_tensor *t, const tb_shape *s, const double *v)
{
    assert_int_equal(tb_tensor_create(t, TB_F64, s), 0);
    fill(t, v);
}

/* The model of case c on exec ex in dtype dt, its parameters the
 * case's. */
static tb_model *model_of(const tfmv_case *c, const tb_ag_exec *ex,
                          tb_dtype dt)
{
    tb_model_cfg cfg = {.kind = TB_MODEL_TFM,
                        .x = {3, {c->B, c->S, c->D}},
                        .heads = c->H,
                        .train = true,
                        .lr = LR,
                        .momentum = MOMENTUM};
    tb_model *m = NULL;
    assert_int_equal(tb_model_create(ex, dt, &cfg, &m), 0);
    assert_int_equal(tb_model_n_params(m), 8);
    for (int i = 0; i < 8; i++)
        fill(tb_model_param(m, i), c->param[i]);
    return m;
}

/* The largest |v[i]| of n. */
static double max_abs(const double *v, int64_t n)
{
    double a = 0;
    for (int64_t i = 0; i < n; i++)
        a = fmax(a, fabs(v[i]));
    return a;
}

/* ---- 1. reference vs PyTorch ------------------------------------------- */

static void test_ref_vectors(void **state)
{
    (void)state;
    for (int k = 0; k < TFMV_N_CASES; k++) {
        const tfmv_case *c = &tfmv_cases[k];
        tb_model *m = model_of(c, &ref_exec, TB_F64);
        tb_shape xs = {3, {c->B, c->S, c->D}}, one = {1, {1}};
        tb_tensor x, loss, y;
        host(&x, &xs, c->x);
        assert_int_equal(tb_tensor_create(&loss, TB_F64, &one), 0);
        assert_int_equal(tb_tensor_create(&y, TB_F64, &xs), 0);
        assert_int_equal(tb_model_run(m, &x, TB_MODEL_STEP, &loss, &y), 0);
        char what[64];
        snprintf(what, sizeof what, "case %s loss", c->name);
        ag_near(what, &loss, c->loss, 1e-13, 1e-11);
        snprintf(what, sizeof what, "case %s y", c->name);
        ag_near(what, &y, c->y, 1e-13, 1e-11);
        for (int i = 0; i < 8; i++) {
            const tb_tensor *g = tb_model_grad(m, i), *p = tb_model_param(m, i);
            assert_non_null(g);
            snprintf(what, sizeof what, "case %s grad %d", c->name, i);
            ag_near(what, g, c->grad[i], 1e-13, 1e-11);
            /* sgd_momentum's first step: buf = g, p -= lr g */
            for (int64_t e = 0; e < tb_tensor_numel(p); e++) {
                double want = c->param[i][e] - LR * tb_tensor_get(g, e);
                if (!(fabs(tb_tensor_get(p, e) - want) <= 1e-14))
                    fail_msg("case %s param %d [%lld] after the step: %.17g "
                             "want %.17g", c->name, i, (long long)e,
                             tb_tensor_get(p, e), want);
            }
        }
        print_message("# ref case %s [%d, %d, %d] heads %d: loss %.17g\n",
                      c->name, c->B, c->S, c->D, c->H,
                      tb_tensor_get(&loss, 0));
        /* hooks = 3: one forward and one backward call per op of the
         * tape, 18 ops (docs/CONFIG.md) */
        tb_model_cfg hc = {.kind = TB_MODEL_TFM, .x = xs, .heads = c->H,
                           .hooks = 3, .train = true, .lr = LR};
        tb_model *h = NULL;
        assert_int_equal(tb_model_create(&ref_exec, TB_F64, &hc, &h), 0);
        assert_int_equal(tb_model_run(h, &x, TB_MODEL_FWD_BWD, &loss, NULL),
                         0);
        assert_int_equal(tb_model_hook_calls(h), 2 * 18);
        tb_model_destroy(h);
        tb_tensor_destroy(&x);
        tb_tensor_destroy(&loss);
        tb_tensor_destroy(&y);
        tb_model_destroy(m);
    }
}

/* ---- 2. cpu kernels vs PyTorch ------------------------------------------ */

/* got (the exec's dtype) against want (n values) by the harness's
 * check at tolerance tol, its absolute part scaled by scale. */
static void check_vs(const char *what, const tb_tensor *got,
                     const double *want, tb_tol tol, double scale)
{
    tb_shape s = tb_tensor_shape(got);
    tb_tensor ref;
    host(&ref, &s, want);
    tb_check chk;
    tol.atol *= scale;
    tb_check_outputs(got, &ref, 1, tol, 1, &chk);
    if (!chk.passed)
        fail_msg("%s: %lld bad, [%lld] = %.9g, torch %.17g", what,
                 (long long)chk.n_bad, (long long)chk.first_bad,
                 chk.first_bad_got, chk.first_bad_ref);
    tb_tensor_destroy(&ref);
}

static void test_cpu_vectors(void **state)
{
    (void)state;
    const tb_op *op = tb_op_get(TB_OP_tfm_train_step);
    for (int isa = 0; isa < n_levels(); isa++)
        for (int th = 1; th <= 2; th++) {
            void *ctx = cpu_create(isa, th);
            tb_ag_exec ex = {ag_cpu_run, ag_cpu_alloc, ag_cpu_free,
                             ag_host_upload, ctx};
            for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
                for (int k = 0; k < TFMV_N_CASES; k++) {
                    const tfmv_case *c = &tfmv_cases[k];
                    tb_model *m = model_of(c, &ex, (tb_dtype)dt);
                    tb_shape xs = {3, {c->B, c->S, c->D}}, one = {1, {1}};
                    tb_tensor x, loss, y;
                    assert_int_equal(tb_tensor_create(&x, (tb_dtype)dt, &xs),
                                     0);
                    fill(&x, c->x);
                    assert_int_equal(
                        tb_tensor_create(&loss, (tb_dtype)dt, &one), 0);
                    assert_int_equal(tb_tensor_create(&y, (tb_dtype)dt, &xs),
                                     0);
                    assert_int_equal(
                        tb_model_run(m, &x, TB_MODEL_FWD_BWD, &loss, &y), 0);
                    tb_tol tol = op->tol[dt];
                    char what[96];
                    snprintf(what, sizeof what, "%s threads %d %s case %s",
                             tb_cpu_isa_name(isa), th,
                             tb_dtype_name((tb_dtype)dt), c->name);
                    char w2[160];
                    snprintf(w2, sizeof w2, "%s loss", what);
                    check_vs(w2, &loss, c->loss, tol, 1);
                    snprintf(w2, sizeof w2, "%s y", what);
                    check_vs(w2, &y, c->y, tol, 1);
                    for (int i = 0; i < 8; i++) {
                        const tb_tensor *g = tb_model_grad(m, i);
                        assert_non_null(g);
                        snprintf(w2, sizeof w2, "%s grad %d", what, i);
                        check_vs(w2, g, c->grad[i], tol,
                                 max_abs(c->grad[i], tb_tensor_numel(g)));
                    }
                    tb_tensor_destroy(&x);
                    tb_tensor_destroy(&loss);
                    tb_tensor_destroy(&y);
                    tb_model_destroy(m);
                }
            B->destroy(ctx);
        }
    print_message("# cpu: %d levels x threads 1, 2 x f32, f64 x %d cases\n",
                  n_levels(), TFMV_N_CASES);
}

/* ---- 3. the workload ops ------------------------------------------------ */

static void test_workload(void **state)
{
    (void)state;
    static const tb_op_id ids[2] = {TB_OP_tfm_train_step,
                                    TB_OP_tfm_infer_step};
    tb_shape xs = {3, {2, 6, 16}};
    for (int th = 1; th <= 2; th++) {
        void *ctx = cpu_create(n_levels() - 1, th);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
            for (int o = 0; o < 2; o++) {
                const tb_op *op = tb_op_get(ids[o]);
                tb_params p = {0};
                assert_int_equal(tb_params_set(op, &p, "heads", 2, NULL, 0),
                                 0);
                tb_params_defaults(op, &p);
                tb_shape os[TB_MAX_OUTPUTS];
                assert_int_equal(tb_op_infer(op, &xs, 1, &p, os, NULL, 0), 0);
                tb_tensor x, out, ref;
                assert_int_equal(tb_tensor_create(&x, (tb_dtype)dt, &xs), 0);
                uint64_t seed = 7;
                for (int64_t i = 0; i < tb_tensor_numel(&x); i++)
                    tb_tensor_set(&x, i,
                                  (double)(splitmix64_next(&seed) >> 11) *
                                          0x1p-52 - 1);
                assert_int_equal(tb_tensor_create(&out, (tb_dtype)dt, &os[0]),
                                 0);
                assert_int_equal(tb_tensor_create(&ref, TB_F64, &os[0]), 0);
                tb_workload *w = NULL;
                char err[256] = "";
                if (tb_workload_create(B, ctx, op, (tb_dtype)dt, &xs, &p, &w,
                                       err, sizeof err))
                    fail_msg("%s: %s", op->name, err);
                assert_non_null(strstr(tb_workload_impl(w), "sdpa"));
                assert_non_null(strstr(tb_workload_impl(w), "permute"));
                assert_int_equal(tb_workload_run(w, &x, &out, &p), 0);
                assert_int_equal(op->ref(&x, &ref, &p), 0);
                tb_check chk;
                tb_check_outputs(&out, &ref, 1, op->tol[dt], 1, &chk);
                if (!chk.passed)
                    fail_msg("%s %s threads %d: %lld bad, [%lld] = %.9g, ref "
                             "%.17g", op->name, tb_dtype_name((tb_dtype)dt),
                             th, (long long)chk.n_bad,
                             (long long)chk.first_bad, chk.first_bad_got,
                             chk.first_bad_ref);
                if (ids[o] == TB_OP_tfm_train_step) {
                    double l0 = tb_tensor_get(&out, 0), l = l0;
                    for (int s = 0; s < 3; s++) {
                        assert_int_equal(tb_workload_run(w, &x, &out, &p), 0);
                        double ls = tb_tensor_get(&out, 0);
                        assert_true(ls < l);
                        l = ls;
                    }
                    print_message("# %s %s threads %d: loss %.6g -> %.6g "
                                  "after 3 steps\n", op->name,
                                  tb_dtype_name((tb_dtype)dt), th, l0, l);
                }
                tb_workload_destroy(w);
                tb_tensor_destroy(&x);
                tb_tensor_destroy(&out);
                tb_tensor_destroy(&ref);
            }
        B->destroy(ctx);
    }
}

/* ---- 4. the permute's gradient ------------------------------------------ */

/* sum(c * permute(x)) on the reference tape; *g (when not NULL) its
 * gradient in x. */
static double perm_loss(const tb_shape *xs, const double *xv,
                        const double *cv, const tb_params *p, double *g)
{
    tb_ag *ag = NULL;
    assert_int_equal(tb_ag_create(&ref_exec, TB_F64, &ag), 0);
    const tb_op *perm = tb_op_get(TB_OP_permute);
    tb_shape ys;
    assert_int_equal(tb_op_infer(perm, xs, 1, p, &ys, NULL, 0), 0);
    int x, c, y, z, l;
    assert_int_equal(tb_ag_leaf(ag, xs, true, &x), 0);
    fill(tb_ag_value(ag, x), xv);
    assert_int_equal(tb_ag_leaf(ag, &ys, false, &c), 0);
    fill(tb_ag_value(ag, c), cv);
    assert_int_equal(tb_ag_apply(ag, TB_OP_permute, &x, p, &y), 0);
    int in[2] = {y, c};
    assert_int_equal(tb_ag_apply(ag, TB_OP_mul, in, NULL, &z), 0);
    assert_int_equal(tb_ag_apply(ag, TB_OP_sum, &z, NULL, &l), 0);
    double v = tb_tensor_get(tb_ag_value(ag, l), 0);
    if (g) {
        assert_int_equal(tb_ag_backward(ag, l), 0);
        const tb_tensor *gx = tb_ag_grad(ag, x);
        assert_non_null(gx);
        tb_shape gs = tb_tensor_shape(gx);
        assert_true(tb_shape_equal(&gs, xs));
        for (int64_t i = 0; i < tb_shape_numel(xs); i++)
            g[i] = tb_tensor_get(gx, i);
    }
    tb_ag_destroy(ag);
    return v;
}

static void test_permute_grad(void **state)
{
    (void)state;
    static const struct {
        tb_shape x;
        int n;
        int order[4]; /* n < 0: the default, reversed */
    } cases[] = {
        {{2, {3, 5}}, 2, {1, 0, 0, 0}},
        {{3, {2, 3, 4}}, 3, {2, 0, 1, 0}},
        {{3, {2, 3, 4}}, -1, {0}},
        {{4, {2, 3, 2, 5}}, 4, {0, 2, 1, 3}},
        {{4, {2, 3, 2, 5}}, 4, {3, 1, 0, 2}},
    };
    static const char *const names[4] = {"p0", "p1", "p2", "p3"};
    const tb_op *perm = tb_op_get(TB_OP_permute);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const tb_shape *xs = &cases[k].x;
        tb_params p = {0};
        for (int i = 0; i < cases[k].n; i++)
            assert_int_equal(tb_params_set(perm, &p, names[i],
                                           cases[k].order[i], NULL, 0), 0);
        int64_t n = tb_shape_numel(xs);
        double xv[64], cv[64], g[64], want[64];
        uint64_t seed = 1000 + k;
        for (int64_t i = 0; i < n; i++) {
            xv[i] = (double)(splitmix64_next(&seed) >> 11) * 0x1p-52 - 1;
            cv[i] = (double)(splitmix64_next(&seed) >> 11) * 0x1p-52 - 1;
        }
        perm_loss(xs, xv, cv, &p, g);
        /* exact: dL/dx = permute^-1(c), from the reference permute of
         * the identity's indices */
        tb_tensor idx, pidx;
        tb_shape ys;
        assert_int_equal(tb_op_infer(perm, xs, 1, &p, &ys, NULL, 0), 0);
        assert_int_equal(tb_tensor_create(&idx, TB_F64, xs), 0);
        assert_int_equal(tb_tensor_create(&pidx, TB_F64, &ys), 0);
        for (int64_t i = 0; i < n; i++)
            tb_tensor_set(&idx, i, (double)i);
        assert_int_equal(perm->ref(&idx, &pidx, &p), 0);
        for (int64_t j = 0; j < n; j++)
            want[(int64_t)tb_tensor_get(&pidx, j)] = cv[j];
        tb_tensor_destroy(&idx);
        tb_tensor_destroy(&pidx);
        double worst = 0;
        for (int64_t i = 0; i < n; i++) {
            if (g[i] != want[i])
                fail_msg("permute case %zu: dx[%lld] = %.17g, want %.17g", k,
                         (long long)i, g[i], want[i]);
            const double h = 1e-6;
            double save = xv[i];
            xv[i] = save + h;
            double lp = perm_loss(xs, xv, cv, &p, NULL);
            xv[i] = save - h;
            double lm = perm_loss(xs, xv, cv, &p, NULL);
            xv[i] = save;
            double fd = (lp - lm) / (2 * h);
            worst = fmax(worst, fabs(fd - g[i]));
            if (!(fabs(fd - g[i]) <= 1e-8))
                fail_msg("permute case %zu: dx[%lld] = %.17g, finite "
                         "differences %.17g", k, (long long)i, g[i], fd);
        }
        print_message("# permute case %zu (%d dims): worst |fd - grad| "
                      "%.3g\n", k, xs->ndim, worst);
    }
}

/* ---- 5. bad operands ------------------------------------------------------ */

static void test_bad_operands(void **state)
{
    (void)state;
    static const tb_op_id ids[2] = {TB_OP_tfm_train_step,
                                    TB_OP_tfm_infer_step};
    for (int o = 0; o < 2; o++) {
        const tb_op *op = tb_op_get(ids[o]);
        tb_params p = {0};
        tb_params_defaults(op, &p); /* heads 4 */
        tb_shape out[TB_MAX_OUTPUTS];
        char err[256] = "";
        tb_shape flat = {2, {4, 16}}, odd = {3, {2, 5, 6}};
        assert_int_equal(tb_op_infer(op, &flat, 1, &p, out, err, sizeof err),
                         TB_ESHAPE);
        assert_non_null(strstr(err, "[batch, seq, d_model]"));
        assert_null(strchr(err, '\n'));
        assert_int_equal(tb_op_infer(op, &odd, 1, &p, out, err, sizeof err),
                         TB_EPARAM);
        assert_non_null(strstr(err, "not a multiple of heads 4"));
        print_message("# %s: %s\n", op->name, err);
    }
    tb_model_cfg cfg = {.kind = TB_MODEL_TFM, .x = {3, {2, 5, 6}},
                        .heads = 4, .train = true};
    tb_model *m = NULL;
    assert_int_equal(tb_model_create(&ref_exec, TB_F64, &cfg, &m),
                     TB_EPARAM);
    assert_null(m);
    cfg.heads = 0;
    assert_int_equal(tb_model_create(&ref_exec, TB_F64, &cfg, &m),
                     TB_EPARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ref_vectors, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_cpu_vectors, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_workload, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_permute_grad, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_bad_operands, leak_setup,
                                        leak_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
