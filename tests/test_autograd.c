/* Tests of the tape autograd (src/ops/autograd.h):
 *
 *  1. models: the MLP and the small CNN of tests/data/autograd_model_
 *     vectors.h (scripts/gen_oracle_autograd.py) built from table ops on
 *     a tape; the loss and every parameter's gradient equal PyTorch's,
 *     and after AGM_STEPS steps of sgd_momentum (the table's fused
 *     optimizer op) so do the parameters.  Run twice: through the
 *     reference kernels in f64 (loss and gradients within 1e-12 + 1e-10
 *     |want|, parameters within 1e-11) and through the cpu backend's
 *     kernels in f32 and f64 (f32: 2e-5 + 1e-4 |want|, f32 rounding of
 *     inputs and ~10 chained kernels; f64: as the reference).
 *  2. hooks: forward hooks on every op and backward hooks on one op are
 *     called once per call, in tape order forward and in reverse order
 *     backward, with the op's tensors; a removed hook is not called.
 *  3. errors: an op without a backward on a variable that needs a
 *     gradient is refused (TB_EUNSUPPORTED), a reshape to another element
 *     count is TB_ESHAPE, bad handles are TB_EINVAL; a variable used
 *     twice gets the sum of both gradients (y = x*x: 2x).
 *  3b. new_ops: a tiny graph through each of layer_norm, rms_norm,
 *     group_norm, sdpa (causal; a set scale), cross_entropy and embedding
 *     (their targets and indices leaves without gradient): every
 *     gradient of the tape on the reference exec (f64) equals the central
 *     difference of the loss through that exec, and the cpu backend's
 *     tape in f64 gives the same gradients to 1e-10.
 *  4. first_layer: conv2d_backward gets input_grad=0 where the conv's
 *     input needs no gradient (the CNN's first layer), else none; the
 *     gradients stay PyTorch's and x's, when asked for, the reference's.
 *  Every test checks that no tracked memory is left (leak fixtures). */
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

#include "backends/backend.h"
#include "backends/workload.h"
#include "base/error.h"
#include "ops/alloc.h"
#include "ops/autograd.h"
#include "ops/pool.h"
#include "ops/op.h"
#include "ops/tensor.h"
#include "tests/data/autograd_model_vectors.h"

extern const tb_backend tb_backend_cpu;
static const tb_backend *const B = &tb_backend_cpu;

/* ---- execs: the reference kernels (f64) and the cpu backend ------------ */

static const tb_ag_exec ref_exec = {ag_ref_run, ag_ref_alloc, ag_ref_free,
                                    NULL,
                                    NULL};

static void *cpu_new(void)
{
    const char *vals[2] = {"auto", "1"};
    void *ctx = NULL;
    char err[256];
    assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
    return ctx;
}

/* ---- the models ------------------------------------------------------------- */

typedef struct model_param {
    const char *name;
    tb_shape shape;
    const double *init, *grad, *final;
} model_param;

typedef struct model {
    const char *name;
    tb_shape xshape;
    const double *x, *t, *loss;
    int n_params;
    model_param p[6];
} model;

/* a tb_shape as a constant initializer */
#define CS(nd, ...) {nd, {__VA_ARGS__}}
#define MP(m, nm, nd, ...)                                                \
    {#nm, CS(nd, __VA_ARGS__), agm_##m##_##nm##_init,                     \
     agm_##m##_##nm##_grad, agm_##m##_##nm##_final}

static const model mlp = {
    "mlp", CS(2, 5, 7), agm_mlp_x, agm_mlp_t, &agm_mlp_loss, 6,
    {MP(mlp, W1, 2, 7, 6), MP(mlp, b1, 1, 6), MP(mlp, W2, 2, 6, 5),
     MP(mlp, b2, 1, 5), MP(mlp, W3, 2, 5, 4), MP(mlp, b3, 1, 4)}};
static const model cnn = {
    "cnn", CS(4, 3, 1, 14, 14), agm_cnn_x, agm_cnn_t, &agm_cnn_loss, 6,
    {MP(cnn, c1, 4, 4, 1, 3, 3), MP(cnn, cb1, 1, 4),
     MP(cnn, c2, 4, 3, 4, 3, 3), MP(cnn, cb2, 1, 3), MP(cnn, W, 2, 12, 4),
     MP(cnn, b, 1, 4)}};

static void fill(tb_tensor *t, const double *v)
{
    for (int64_t i = 0; i < tb_tensor_numel(t); i++)
        tb_tensor_set(t, i, v[i]);
}

static int apply(tb_ag *ag, tb_op_id op, int a, int b, int c)
{
    int in[3] = {a, b, c}, out = -1;
    assert_int_equal(tb_ag_apply(ag, op, in, NULL, &out), 0);
    return out;
}

/* The forward pass on the tape; returns the loss variable.  v: x, t, then
 * the parameters. */
static int forward(tb_ag *ag, const model *m, const int *v)
{
    int h;
    if (m == &mlp) {
        h = apply(ag, TB_OP_linear, v[0], v[2], v[3]);
        h = apply(ag, TB_OP_linear, h, v[4], v[5]);
        h = apply(ag, TB_OP_matmul, h, v[6], -1);
        h = apply(ag, TB_OP_add, h, v[7], -1);
    } else {
        h = apply(ag, TB_OP_conv2d, v[0], v[2], v[3]);
        h = apply(ag, TB_OP_relu, h, -1, -1);
        h = apply(ag, TB_OP_max_pool2d, h, -1, -1);
        h = apply(ag, TB_OP_conv2d, h, v[4], v[5]);
        h = apply(ag, TB_OP_relu, h, -1, -1);
        h = apply(ag, TB_OP_max_pool2d, h, -1, -1);
        tb_shape flat = SHAPE(3, 12);
        int r = -1;
        assert_int_equal(tb_ag_reshape(ag, h, &flat, &r), 0);
        h = apply(ag, TB_OP_matmul, r, v[6], -1);
        h = apply(ag, TB_OP_add, h, v[7], -1);
    }
    h = apply(ag, TB_OP_log_softmax, h, -1, -1);
    return apply(ag, TB_OP_nll_loss, h, v[1], -1);
}

static void train(const model *m, const tb_ag_exec *ex, tb_dtype dt,
                  double atol, double rtol)
{
    tb_ag *ag = NULL;
    assert_int_equal(tb_ag_create(ex, dt, &ag), 0);
    int v[8], buf[6];
    tb_shape ts = SHAPE(m->xshape.dim[0]);
    assert_int_equal(tb_ag_leaf(ag, &m->xshape, false, &v[0]), 0);
    assert_int_equal(tb_ag_leaf(ag, &ts, false, &v[1]), 0);
    fill(tb_ag_value(ag, v[0]), m->x);
    fill(tb_ag_value(ag, v[1]), m->t);
    for (int i = 0; i < m->n_params; i++) {
        assert_int_equal(tb_ag_leaf(ag, &m->p[i].shape, true, &v[2 + i]),
                         0);
        fill(tb_ag_value(ag, v[2 + i]), m->p[i].init);
        assert_int_equal(tb_ag_leaf(ag, &m->p[i].shape, false, &buf[i]), 0);
    }
    const tb_op *sgdm = tb_op_get(TB_OP_sgd_momentum);
    tb_params sp;
    memset(&sp, 0, sizeof sp);
    assert_int_equal(tb_params_set(sgdm, &sp, "lr", AGM_LR, NULL, 0), 0);
    assert_int_equal(
        tb_params_set(sgdm, &sp, "momentum", AGM_MOMENTUM, NULL, 0), 0);
    char what[96];
    for (int step = 0; step < AGM_STEPS; step++) {
        tb_ag_zero_grad(ag);
        int loss = forward(ag, m, v);
        assert_int_equal(tb_ag_backward(ag, loss), 0);
        if (step == 0) {
            snprintf(what, sizeof what, "%s %s loss", m->name,
                     tb_dtype_name(dt));
            ag_near(what, tb_ag_value(ag, loss), m->loss, atol, rtol);
            for (int i = 0; i < m->n_params; i++) {
                snprintf(what, sizeof what, "%s %s grad %s", m->name,
                         tb_dtype_name(dt), m->p[i].name);
                ag_near(what, tb_ag_grad(ag, v[2 + i]), m->p[i].grad, atol,
                     rtol);
            }
            /* x and t need no gradient */
            assert_null(tb_ag_grad(ag, v[0]));
            assert_null(tb_ag_grad(ag, v[1]));
        }
        for (int i = 0; i < m->n_params; i++) {
            tb_tensor in[3] = {*tb_ag_value(ag, v[2 + i]),
                               *tb_ag_grad(ag, v[2 + i]),
                               *tb_ag_value(ag, buf[i])};
            tb_tensor out[2] = {in[0], in[2]};
            assert_int_equal(ex->run(ex->user, sgdm, in, out, &sp), 0);
        }
        tb_ag_clear(ag);
    }
    for (int i = 0; i < m->n_params; i++) {
        snprintf(what, sizeof what, "%s %s param %s after %d steps", m->name,
                 tb_dtype_name(dt), m->p[i].name, AGM_STEPS);
        ag_near(what, tb_ag_value(ag, v[2 + i]), m->p[i].final, atol * 10,
             rtol * 10);
    }
    tb_ag_stats st;
    tb_ag_stats_read(ag, &st);
    assert_int_equal(st.nodes, 0);
    assert_true(st.bwd_ops > 0);
    tb_ag_destroy(ag);
}

static void test_models_ref(void **state)
{
    (void)state;
    train(&mlp, &ref_exec, TB_F64, 1e-12, 1e-10);
    train(&cnn, &ref_exec, TB_F64, 1e-12, 1e-10);
}

static void test_models_cpu(void **state)
{
    (void)state;
    void *ctx = cpu_new();
    tb_ag_exec ex = {ag_cpu_run, ag_cpu_alloc, ag_cpu_free, NULL, ctx};
    train(&mlp, &ex, TB_F64, 1e-12, 1e-10);
    train(&cnn, &ex, TB_F64, 1e-12, 1e-10);
    train(&mlp, &ex, TB_F32, 2e-6, 1e-5);
    train(&cnn, &ex, TB_F32, 2e-6, 1e-5);
    B->destroy(ctx);
}

/* ---- 2. hooks ------------------------------------------------------------------ */

typedef struct event {
    int tag; /* which hook */
    tb_ag_hook_kind kind;
    tb_op_id op;
    int node, n_in, n_out;
    const void *in0, *out0;
} event;

typedef struct recorder {
    event ev[64];
    int n;
} recorder;

static recorder rec;

static void hook(void *user, tb_ag_hook_kind kind, const tb_op *op,
                 int node, const tb_tensor *in, int n_in,
                 const tb_tensor *out, int n_out)
{
    assert_true(rec.n < 64);
    rec.ev[rec.n++] = (event){(int)(intptr_t)user, kind, op->id, node,
                              n_in, n_out, in[0].data, out[0].data};
}

static void test_hooks(void **state)
{
    (void)state;
    memset(&rec, 0, sizeof rec);
    tb_ag *ag = NULL;
    assert_int_equal(tb_ag_create(&ref_exec, TB_F64, &ag), 0);
    int v[8];
    tb_shape ts = SHAPE(5);
    assert_int_equal(tb_ag_leaf(ag, &mlp.xshape, false, &v[0]), 0);
    assert_int_equal(tb_ag_leaf(ag, &ts, false, &v[1]), 0);
    fill(tb_ag_value(ag, v[0]), mlp.x);
    fill(tb_ag_value(ag, v[1]), mlp.t);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(tb_ag_leaf(ag, &mlp.p[i].shape, true, &v[2 + i]),
                         0);
        fill(tb_ag_value(ag, v[2 + i]), mlp.p[i].init);
    }
    int hf, hb, hx;
    assert_int_equal(tb_ag_hook_add(ag, TB_AG_FORWARD, TB_OP_COUNT, hook,
                                    (void *)1, &hf),
                     0);
    assert_int_equal(tb_ag_hook_add(ag, TB_AG_BACKWARD, TB_OP_linear, hook,
                                    (void *)2, &hb),
                     0);
    assert_int_equal(tb_ag_hook_add(ag, TB_AG_BACKWARD, TB_OP_COUNT, hook,
                                    (void *)3, &hx),
                     0);
    tb_ag_hook_remove(ag, hx);
    int loss = forward(ag, &mlp, v);
    /* forward: one call per op, in order, after the op */
    static const tb_op_id fwd_ops[] = {TB_OP_linear, TB_OP_linear,
                                       TB_OP_matmul, TB_OP_add,
                                       TB_OP_log_softmax, TB_OP_nll_loss};
    assert_int_equal(rec.n, 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(rec.ev[i].tag, 1);
        assert_int_equal(rec.ev[i].kind, TB_AG_FORWARD);
        assert_int_equal(rec.ev[i].op, fwd_ops[i]);
        assert_int_equal(rec.ev[i].node, i);
        assert_int_equal(rec.ev[i].n_out, 1);
    }
    assert_ptr_equal(rec.ev[0].in0, tb_ag_value(ag, v[0])->data);
    assert_ptr_equal(rec.ev[5].out0, tb_ag_value(ag, loss)->data);
    assert_int_equal(rec.ev[0].n_in, 3);
    assert_int_equal(tb_ag_backward(ag, loss), 0);
    /* backward: only the linear hook, for nodes 1 then 0, with the three
     * gradients; the removed hook never ran */
    assert_int_equal(rec.n, 8);
    for (int i = 6; i < 8; i++) {
        assert_int_equal(rec.ev[i].tag, 2);
        assert_int_equal(rec.ev[i].kind, TB_AG_BACKWARD);
        assert_int_equal(rec.ev[i].op, TB_OP_linear);
        assert_int_equal(rec.ev[i].node, 7 - i);
        assert_int_equal(rec.ev[i].n_in, 1);
        assert_int_equal(rec.ev[i].n_out, 3);
    }
    tb_ag_stats st;
    tb_ag_stats_read(ag, &st);
    assert_int_equal(st.fwd_hook_calls, 6);
    assert_int_equal(st.bwd_hook_calls, 2);
    assert_int_equal(st.nodes, 6);
    assert_int_equal(st.bwd_ops, 6);
    /* removing the forward hook: a second pass adds no event */
    tb_ag_hook_remove(ag, hf);
    tb_ag_hook_remove(ag, hb);
    tb_ag_clear(ag);
    tb_ag_zero_grad(ag);
    loss = forward(ag, &mlp, v);
    assert_int_equal(tb_ag_backward(ag, loss), 0);
    assert_int_equal(rec.n, 8);
    tb_ag_destroy(ag);
}

/* ---- 3. errors and accumulation ---------------------------------------------- */

static void test_errors(void **state)
{
    (void)state;
    tb_ag *ag = NULL;
    assert_int_equal(tb_ag_create(NULL, TB_F64, &ag), TB_EINVAL);
    assert_int_equal(tb_ag_create(&ref_exec, TB_F64, &ag), 0);
    tb_shape s = SHAPE(2, 3);
    int x, y, r;
    assert_int_equal(tb_ag_leaf(ag, &s, true, &x), 0);
    const double xv[6] = {1, -2, 3, 0.5, -0.25, 4};
    fill(tb_ag_value(ag, x), xv);
    int in[2] = {x, x};
    /* exp has no backward op: refused on a variable needing a gradient */
    assert_int_equal(tb_ag_apply(ag, TB_OP_exp, in, NULL, &y),
                     TB_EUNSUPPORTED);
    tb_shape bad = SHAPE(4);
    assert_int_equal(tb_ag_reshape(ag, x, &bad, &r), TB_ESHAPE);
    assert_int_equal(tb_ag_apply(ag, TB_OP_relu, (int[]){99}, NULL, &y),
                     TB_EINVAL);
    assert_null(tb_ag_value(ag, 99));
    assert_int_equal(tb_ag_backward(ag, 99), TB_EINVAL);
    /* y = sum(x * x): dy/dx = 2x, from two uses of x in one op and the
     * sum's gradient; then a second use of x adds x's gradient again */
    assert_int_equal(tb_ag_apply(ag, TB_OP_mul, in, NULL, &y), 0);
    int l;
    assert_int_equal(tb_ag_apply(ag, TB_OP_sum, &y, NULL, &l), 0);
    assert_int_equal(tb_ag_backward(ag, l), 0);
    double want[6];
    for (int i = 0; i < 6; i++)
        want[i] = 2 * xv[i];
    ag_near("d sum(x*x)/dx", tb_ag_grad(ag, x), want, 0, 0);
    int m;
    assert_int_equal(tb_ag_apply(ag, TB_OP_mean, &x, NULL, &m), 0);
    tb_ag_clear(ag); /* frees y, l, m; x keeps its gradient */
    assert_int_equal(tb_ag_apply(ag, TB_OP_mean, &x, NULL, &m), 0);
    assert_int_equal(tb_ag_backward(ag, m), 0);
    for (int i = 0; i < 6; i++)
        want[i] = 2 * xv[i] + 1.0 / 6;
    ag_near("accumulated", tb_ag_grad(ag, x), want, 1e-15, 1e-15);
    tb_ag_destroy(ag);
}

/* ---- 3b. the normalization, attention, loss and embedding ops ---------------- */

/* A tiny graph through one op: L = sum(op(leaves) * c) (c fixed, random)
 * or, for a scalar output, L = op(leaves). */
typedef struct ag_case {
    const char *name;
    tb_op_id op;
    int n_in;
    tb_shape sh[3];
    bool grad[3];  /* false: a leaf without gradient (indices) */
    int classes;   /* > 0: input 1's values are indices below it */
    const char *pn; /* a parameter, or NULL */
    double pv;
    const char *pn2;
    double pv2;
} ag_case;

static const ag_case ag_cases[] = {
    {"layer_norm", TB_OP_layer_norm, 3, {CS(2, 3, 5), CS(1, 5), CS(1, 5)},
     {true, true, true}, 0, "eps", 0.1, NULL, 0},
    {"rms_norm", TB_OP_rms_norm, 2, {CS(3, 2, 2, 5), CS(1, 5)},
     {true, true}, 0, NULL, 0, NULL, 0},
    {"group_norm", TB_OP_group_norm, 3,
     {CS(3, 2, 4, 3), CS(1, 4), CS(1, 4)}, {true, true, true}, 0,
     "num_groups", 2, "eps", 0.01},
    {"sdpa causal", TB_OP_sdpa, 3,
     {CS(4, 1, 2, 3, 4), CS(4, 1, 2, 5, 4), CS(4, 1, 2, 5, 3)},
     {true, true, true}, 0, "causal", 1, NULL, 0},
    {"sdpa scale", TB_OP_sdpa, 3,
     {CS(4, 2, 1, 4, 2), CS(4, 2, 1, 3, 2), CS(4, 2, 1, 3, 3)},
     {true, true, true}, 0, "scale", 0.7, NULL, 0},
    {"cross_entropy", TB_OP_cross_entropy, 2, {CS(2, 4, 5), CS(1, 4)},
     {true, false}, 5, NULL, 0, NULL, 0},
    {"embedding", TB_OP_embedding, 2, {CS(2, 6, 3), CS(2, 2, 4)},
     {true, false}, 6, NULL, 0, NULL, 0},
};
#define AG_N_CASES (sizeof ag_cases / sizeof ag_cases[0])

/* L of case c on inputs vals (and c's multiplier cv) through ex in dt;
 * with grads, their gradients after tb_ag_backward (NULL where the leaf
 * has none). */
static double ag_case_loss(const tb_ag_exec *ex, tb_dtype dt,
                           const ag_case *c, double *const *vals,
                           const double *cv, double **grads)
{
    const tb_op *op = tb_op_get(c->op);
    tb_ag *ag = NULL;
    assert_int_equal(tb_ag_create(ex, dt, &ag), 0);
    int v[3], y, l;
    for (int i = 0; i < c->n_in; i++) {
        assert_int_equal(tb_ag_leaf(ag, &c->sh[i], c->grad[i], &v[i]), 0);
        fill(tb_ag_value(ag, v[i]), vals[i]);
    }
    tb_params p;
    memset(&p, 0, sizeof p);
    if (c->pn)
        assert_int_equal(tb_params_set(op, &p, c->pn, c->pv, NULL, 0), 0);
    if (c->pn2)
        assert_int_equal(tb_params_set(op, &p, c->pn2, c->pv2, NULL, 0), 0);
    assert_int_equal(tb_ag_apply(ag, c->op, v, &p, &y), 0);
    l = y;
    tb_shape ys = tb_tensor_shape(tb_ag_value(ag, y));
    if (tb_shape_numel(&ys) > 1) {
        int m[2] = {y, 0}, t;
        assert_int_equal(tb_ag_leaf(ag, &ys, false, &m[1]), 0);
        fill(tb_ag_value(ag, m[1]), cv);
        assert_int_equal(tb_ag_apply(ag, TB_OP_mul, m, NULL, &t), 0);
        assert_int_equal(tb_ag_apply(ag, TB_OP_sum, &t, NULL, &l), 0);
    }
    const double L = tb_tensor_get(tb_ag_value(ag, l), 0);
    if (grads) {
        assert_int_equal(tb_ag_backward(ag, l), 0);
        for (int i = 0; i < c->n_in; i++) {
            const tb_tensor *g = tb_ag_grad(ag, v[i]);
            assert_true(!g == !c->grad[i]);
            for (int64_t e = 0; g && e < tb_tensor_numel(g); e++)
                grads[i][e] = tb_tensor_get(g, e);
        }
    }
    tb_ag_destroy(ag);
    return L;
}

/* Each case's gradients through the reference exec (f64) against central
 * differences (h = 1e-6) of L through the same exec, within 2e-7 + 1e-6
 * |want|; through the cpu backend in f64 within 1e-10 |want| + 1e-12 of
 * the reference's. */
static void test_new_ops(void **state)
{
    (void)state;
    uint64_t rs = 0x7a9e0c0ffee;
    void *ctx = cpu_new();
    const tb_ag_exec cpu_ex = {ag_cpu_run, ag_cpu_alloc, ag_cpu_free, NULL,
                               ctx};
    int checked = 0;
    for (size_t k = 0; k < AG_N_CASES; k++) {
        const ag_case *c = &ag_cases[k];
        static double val[3][64], grad[3][64], cgrad[3][64], cv[64];
        double *vals[3] = {val[0], val[1], val[2]};
        double *grads[3] = {grad[0], grad[1], grad[2]};
        double *cgrads[3] = {cgrad[0], cgrad[1], cgrad[2]};
        for (int i = 0; i < c->n_in; i++) {
            assert_true(tb_shape_numel(&c->sh[i]) <= 64);
            for (int64_t e = 0; e < tb_shape_numel(&c->sh[i]); e++)
                val[i][e] = i == 1 && c->classes
                                ? (double)(splitmix64_next(&rs) %
                                           (uint64_t)c->classes)
                                : (double)(splitmix64_next(&rs) >> 11) *
                                          0x1.0p-52 - 1;
        }
        for (int e = 0; e < 64; e++)
            cv[e] = (double)(splitmix64_next(&rs) >> 11) * 0x1.0p-52 - 1;
        ag_case_loss(&ref_exec, TB_F64, c, vals, cv, grads);
        ag_case_loss(&cpu_ex, TB_F64, c, vals, cv, cgrads);
        for (int i = 0; i < c->n_in; i++) {
            if (!c->grad[i])
                continue;
            for (int64_t e = 0; e < tb_shape_numel(&c->sh[i]); e++) {
                const double v0 = val[i][e], want = grad[i][e];
                val[i][e] = v0 + 1e-6;
                const double lp = ag_case_loss(&ref_exec, TB_F64, c, vals,
                                               cv, NULL);
                val[i][e] = v0 - 1e-6;
                const double lm = ag_case_loss(&ref_exec, TB_F64, c, vals,
                                               cv, NULL);
                val[i][e] = v0;
                const double fd = (lp - lm) / 2e-6;
                if (!(fabs(fd - want) <= 2e-7 + 1e-6 * fabs(want)))
                    fail_msg("%s input %d [%lld]: tape %.17g, finite "
                             "difference %.17g", c->name, i, (long long)e,
                             want, fd);
                if (!(fabs(cgrad[i][e] - want) <= 1e-12 + 1e-10 * fabs(want)))
                    fail_msg("%s input %d [%lld]: cpu %.17g, reference "
                             "%.17g", c->name, i, (long long)e, cgrad[i][e],
                             want);
                checked++;
            }
        }
    }
    B->destroy(ctx);
    print_message("# %zu graphs, %d gradients against finite differences\n",
                  (size_t)AG_N_CASES, checked);
}

/* ---- 4. workload ops -------------------------------------------------------- */

/* Each workload op on the cpu backend: its first call gives the
 * reference's output (the harness's check, here at f64 and 1e-10), a
 * second training call a different loss (the step changed the weights),
 * hooks are called, and a wrong batch shape is refused. */
static void test_workloads(void **state)
{
    (void)state;
    static const struct {
        tb_op_id op;
        tb_shape x;
        int hook_calls; /* per call: one per op forward (and backward) */
    } cases[] = {
        {TB_OP_mlp_train_step, CS(2, 3, 20), 12},
        {TB_OP_mlp_infer_step, CS(2, 4, 9), 6},
        {TB_OP_cnn_train_step, CS(4, 2, 1, 12, 11), 20},
        {TB_OP_cnn_infer_step, CS(4, 1, 1, 10, 10), 10},
    };
    void *ctx = cpu_new();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const tb_op *op = tb_op_get(cases[k].op);
        bool train = cases[k].op == TB_OP_mlp_train_step ||
                     cases[k].op == TB_OP_cnn_train_step;
        tb_params p;
        memset(&p, 0, sizeof p);
        assert_int_equal(tb_params_set(op, &p, "hooks", train ? 3 : 1, NULL,
                                       0),
                         0);
        tb_shape os[TB_MAX_OUTPUTS];
        assert_int_equal(tb_op_infer(op, &cases[k].x, 1, &p, os, NULL, 0),
                         0);
        tb_workload *w = NULL;
        char err[256];
        assert_int_equal(tb_workload_create(B, ctx, op, TB_F64, &cases[k].x,
                                            &p, &w, err, sizeof err),
                         0);
        tb_tensor x, out, ref;
        assert_int_equal(tb_tensor_create(&x, TB_F64, &cases[k].x), 0);
        for (int64_t i = 0; i < tb_tensor_numel(&x); i++)
            tb_tensor_set(&x, i, sin((double)i));
        assert_int_equal(tb_tensor_create(&out, TB_F64, &os[0]), 0);
        assert_int_equal(tb_tensor_create(&ref, TB_F64, &os[0]), 0);
        assert_int_equal(tb_workload_run(w, &x, &out, &p), 0);
        assert_int_equal(op->ref(&x, &ref, &p), 0);
        ag_near(op->name, &out, ref.data, 1e-12, 1e-10);
        assert_int_equal(tb_workload_hook_calls(w), cases[k].hook_calls);
        if (train) {
            assert_int_equal(tb_workload_run(w, &x, &out, &p), 0);
            assert_true(fabs(tb_tensor_get(&out, 0) -
                             tb_tensor_get(&ref, 0)) > 1e-9);
        }
        assert_non_null(strstr(tb_workload_impl(w), "tape(cpu+cache:"));
        tb_tensor_destroy(&x);
        tb_tensor_destroy(&out);
        tb_tensor_destroy(&ref);
        tb_workload_destroy(w);
        tb_shape bad = CS(3, 2, 3, 4);
        char why[256] = "";
        assert_int_equal(tb_op_infer(op, &bad, 1, &p, os, why, sizeof why),
                         TB_ESHAPE);
        assert_non_null(strstr(why, op->name));
    }
    B->destroy(ctx);
}

/* api_add at every layer: a + b with broadcasting into the case's
 * output (layers 2 and 3 on their first call), one hook call per call at
 * layer 3, no memory left. */
static void test_api_layers(void **state)
{
    (void)state;
    void *ctx = cpu_new();
    const tb_op *op = tb_op_get(TB_OP_api_add);
    tb_shape s[2] = {SHAPE(3, 5), SHAPE(5)}, os = SHAPE(3, 5);
    tb_tensor in[2], out;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tb_tensor_create(&in[i], TB_F32, &s[i]), 0);
        for (int64_t k = 0; k < tb_tensor_numel(&in[i]); k++)
            tb_tensor_set(&in[i], k, (double)(k * (i + 1)) - 2.5);
    }
    for (int layer = 0; layer < 4; layer++) {
        tb_params p;
        memset(&p, 0, sizeof p);
        assert_int_equal(tb_params_set(op, &p, "layer", layer, NULL, 0), 0);
        tb_workload *w = NULL;
        char err[256];
        assert_int_equal(tb_workload_create(B, ctx, op, TB_F32, s, &p, &w,
                                            err, sizeof err),
                         0);
        assert_int_equal(tb_tensor_create(&out, TB_F32, &os), 0);
        for (int rep = 0; rep < 3; rep++)
            assert_int_equal(tb_workload_run(w, in, &out, &p), 0);
        for (int64_t k = 0; k < 15; k++)
            assert_float_equal(tb_tensor_get(&out, k),
                               tb_tensor_get(&in[0], k) +
                                   tb_tensor_get(&in[1], k % 5),
                               0);
        assert_int_equal(tb_workload_hook_calls(w), layer == 3 ? 3 : 0);
        tb_tensor_destroy(&out);
        tb_workload_destroy(w);
    }
    for (int i = 0; i < 2; i++)
        tb_tensor_destroy(&in[i]);
    B->destroy(ctx);
}

/* The state window of a training step (workload.h,
 * tb_workload_batch_begin): mlp_train_step 8x784 f32 trained on its one
 * batch for WIN_STEPS steps.  With state_window=0 (never restored) the
 * momentum of the parameters whose gradient is 0 (dead ReLU units)
 * decays by 0.9 a step into the f32 subnormals; with the default window
 * the runner's call before each batch sets the state back every 100
 * steps, none is ever subnormal, and the step after a restore is the
 * first step again: the same loss, to the bit. */
#define WIN_STEPS 1000
static void test_state_window(void **state)
{
    (void)state;
    const tb_op *op = tb_op_get(TB_OP_mlp_train_step);
    tb_shape xs = CS(2, 8, 784), one = CS(1, 1);
    void *ctx = cpu_new();
    tb_tensor x, out;
    assert_int_equal(tb_tensor_create(&x, TB_F32, &xs), 0);
    assert_int_equal(tb_tensor_create(&out, TB_F32, &one), 0);
    for (int64_t i = 0; i < tb_tensor_numel(&x); i++)
        tb_tensor_set(&x, i, sin(0.37 * (double)i));
    for (int win = 0; win < 2; win++) {
        tb_params p;
        memset(&p, 0, sizeof p);
        if (win == 0)
            assert_int_equal(tb_params_set(op, &p, "state_window", 0, NULL,
                                           0),
                             0);
        tb_workload *w = NULL;
        assert_int_equal(
            tb_workload_create(B, ctx, op, TB_F32, &xs, &p, &w, NULL, 0), 0);
        assert_int_equal(tb_workload_subnormals(w), 0);
        double first = 0;
        int restored = 0;
        for (int s = 0; s < WIN_STEPS; s++) {
            int rc = tb_workload_batch_begin(w, 1);
            assert_true(rc == 0 || rc == 1);
            assert_int_equal(tb_workload_run(w, &x, &out, &p), 0);
            double loss = tb_tensor_get(&out, 0);
            if (s == 0)
                first = loss;
            if (rc == 1) { /* the first step again */
                restored++;
                assert_true(loss == first);
                assert_int_equal(s % 100, 0);
            } else if (s > 0) {
                assert_true(loss != first);
            }
            assert_true(tb_workload_steps_since_restore(w) <=
                        (win ? 100 : WIN_STEPS));
            if (s % 100 == 99) /* the drift, for the log */
                print_message("# state_window %s: after %4d steps %lld "
                              "subnormal values, loss %.9g\n",
                              win ? "100" : "0", s + 1,
                              (long long)tb_workload_subnormals(w), loss);
        }
        int64_t sub = tb_workload_subnormals(w);
        print_message("# state_window %s: %d restores, %lld subnormal "
                      "values after %d steps\n", win ? "100" : "0",
                      restored, (long long)sub, WIN_STEPS);
        assert_int_equal(tb_workload_restores(w), restored);
        if (win) {
            assert_int_equal(restored, WIN_STEPS / 100 - 1);
            assert_int_equal(sub, 0);
        } else {
            assert_int_equal(restored, 0);
            assert_true(sub > 0);
        }
        tb_workload_destroy(w);
    }
    tb_tensor_destroy(&x);
    tb_tensor_destroy(&out);
    B->destroy(ctx);
}

/* ---- 5. the pool ---------------------------------------------------------- */

static int n_sys_alloc, n_sys_free;

static int count_alloc(void *user, tb_tensor *t)
{
    n_sys_alloc++;
    return ag_ref_alloc(user, t);
}

static void count_free(void *user, tb_tensor *t)
{
    n_sys_free++;
    ag_ref_free(user, t);
}

/* A freed block is reused for a request of its class, other classes get
 * their own, the counters are exact, destroy returns every block (the
 * leak fixture sees no tracked bytes left). */
static void test_pool(void **state)
{
    (void)state;
    n_sys_alloc = n_sys_free = 0;
    assert_int_equal(tb_pool_class(1), 256);
    assert_int_equal(tb_pool_class(256), 256);
    assert_int_equal(tb_pool_class(257), 512);
    assert_int_equal(tb_pool_class(100000), 131072);
    tb_pool *p = NULL;
    assert_int_equal(tb_pool_create(TB_POOL_POW2, NULL, count_free, NULL, &p), TB_EINVAL);
    assert_int_equal(tb_pool_create(TB_POOL_POW2, count_alloc, count_free, NULL, &p), 0);
    tb_shape s100 = SHAPE(100), s60 = SHAPE(60), s1000 = SHAPE(1000);
    tb_tensor a, b, c, d;
    tb_tensor_init(&a, TB_F32, &s100); /* 400 B: class 512 */
    tb_tensor_init(&b, TB_F32, &s60);  /* 240 B: class 256 */
    tb_tensor_init(&c, TB_F64, &s1000); /* 8000 B: class 8192 */
    assert_int_equal(tb_pool_alloc(p, &a), 0);
    assert_int_equal(tb_pool_alloc(p, &b), 0);
    assert_false(a.owns);
    void *pa = a.data;
    tb_pool_free(p, &a);
    assert_null(a.data);
    /* 120 doubles = 960 B: class 1024, not a's block */
    tb_shape s120 = SHAPE(120);
    tb_tensor_init(&d, TB_F64, &s120);
    assert_int_equal(tb_pool_alloc(p, &d), 0);
    assert_ptr_not_equal(d.data, pa);
    /* 128 floats = 512 B: a's class, a's block */
    tb_shape s128 = SHAPE(128);
    tb_tensor_init(&a, TB_F32, &s128);
    assert_int_equal(tb_pool_alloc(p, &a), 0);
    assert_ptr_equal(a.data, pa);
    assert_int_equal(tb_pool_alloc(p, &c), 0);
    tb_pool_stats st;
    tb_pool_stats_read(p, &st);
    assert_int_equal(st.requests, 5);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.sys_allocs, 4);
    assert_int_equal(n_sys_alloc, 4);
    assert_int_equal(st.sys_bytes, 512 + 256 + 1024 + 8192);
    assert_int_equal(st.req_bytes, 400 + 240 + 960 + 512 + 8000);
    assert_int_equal(st.used_bytes, 512 + 256 + 1024 + 8192);
    assert_int_equal(st.cached_bytes, 0);
    tb_pool_free(p, &b);
    tb_pool_free(p, &c);
    tb_tensor stranger = b; /* not the pool's: left alone */
    int x = 0;
    stranger.data = &x;
    tb_pool_free(p, &stranger);
    assert_ptr_equal(stranger.data, &x);
    tb_pool_stats_read(p, &st);
    assert_int_equal(st.cached_bytes, 256 + 8192);
    assert_int_equal(st.used_bytes, 512 + 1024);
    assert_int_equal(n_sys_free, 0);
    tb_pool_destroy(p); /* a and d still in use: returned too */
    assert_int_equal(n_sys_free, 4);
}

/* A training step with pool = 1: the second step takes every tensor from
 * the pool (no new block), and the losses equal those without the pool
 * (pool = 0: the block cache of exact sizes, test_tapecache). */
static void test_pool_workload(void **state)
{
    (void)state;
    void *ctx = cpu_new();
    const tb_op *op = tb_op_get(TB_OP_mlp_train_step);
    tb_shape xs = SHAPE(4, 12), one = SHAPE(1);
    tb_tensor x, out;
    assert_int_equal(tb_tensor_create(&x, TB_F64, &xs), 0);
    for (int64_t i = 0; i < tb_tensor_numel(&x); i++)
        tb_tensor_set(&x, i, cos((double)i));
    assert_int_equal(tb_tensor_create(&out, TB_F64, &one), 0);
    double loss[2][3];
    for (int pool = 0; pool < 2; pool++) {
        tb_params p;
        memset(&p, 0, sizeof p);
        assert_int_equal(tb_params_set(op, &p, "pool", pool, NULL, 0), 0);
        tb_workload *w = NULL;
        assert_int_equal(
            tb_workload_create(B, ctx, op, TB_F64, &xs, &p, &w, NULL, 0), 0);
        tb_pool_stats st1, st2;
        for (int step = 0; step < 3; step++) {
            assert_int_equal(tb_workload_run(w, &x, &out, &p), 0);
            loss[pool][step] = tb_tensor_get(&out, 0);
            if (step == 0)
                tb_workload_pool_stats(w, &st1);
        }
        tb_workload_pool_stats(w, &st2);
        /* either way (pool, or the cache) no new block after step 1 */
        assert_true(st1.sys_allocs > 0);
        assert_int_equal(st2.sys_allocs, st1.sys_allocs);
        assert_int_equal(st2.hits - st1.hits, st2.requests - st1.requests);
        assert_true(st2.requests > st1.requests);
        assert_non_null(strstr(tb_workload_impl(w),
                               pool ? "tape(cpu+pool:" : "tape(cpu+cache:"));
        tb_workload_destroy(w);
    }
    for (int step = 0; step < 3; step++)
        assert_float_equal(loss[0][step], loss[1][step], 0);
    tb_tensor_destroy(&x);
    tb_tensor_destroy(&out);
    B->destroy(ctx);
}

/* ---- 4. the first layer's input gradient ------------------------------ */

/* An exec that records each conv2d_backward call's input_grad (-1:
 * absent) and then runs it on the cpu backend. */
typedef struct conv_spy {
    void *ctx;
    int n, input_grad[8];
} conv_spy;

static int spy_run(void *user, const tb_op *op, const tb_tensor *in,
                   tb_tensor *out, const tb_params *p)
{
    conv_spy *s = user;
    if (op->id == TB_OP_conv2d_backward) {
        assert_true(s->n < 8);
        s->input_grad[s->n++] = p && tb_params_has(p, 3) ? (int)p->v[3] : -1;
    }
    return ag_cpu_run(s->ctx, op, in, out, p);
}

static int spy_alloc(void *user, tb_tensor *t)
{
    return ag_cpu_alloc(((conv_spy *)user)->ctx, t);
}

static void spy_free(void *user, tb_tensor *t)
{
    ag_cpu_free(((conv_spy *)user)->ctx, t);
}

/* One backward pass of the CNN (f64) on ex with x a leaf that needs a
 * gradient (x_grad) or not; *dx: x's gradient copied out (x_grad). */
static void cnn_pass(const tb_ag_exec *ex, bool x_grad, double *dx)
{
    tb_ag *ag = NULL;
    assert_int_equal(tb_ag_create(ex, TB_F64, &ag), 0);
    int v[8];
    tb_shape ts = SHAPE(cnn.xshape.dim[0]);
    assert_int_equal(tb_ag_leaf(ag, &cnn.xshape, x_grad, &v[0]), 0);
    assert_int_equal(tb_ag_leaf(ag, &ts, false, &v[1]), 0);
    fill(tb_ag_value(ag, v[0]), cnn.x);
    fill(tb_ag_value(ag, v[1]), cnn.t);
    for (int i = 0; i < cnn.n_params; i++) {
        assert_int_equal(
            tb_ag_leaf(ag, &cnn.p[i].shape, true, &v[2 + i]), 0);
        fill(tb_ag_value(ag, v[2 + i]), cnn.p[i].init);
    }
    assert_int_equal(tb_ag_backward(ag, forward(ag, &cnn, v)), 0);
    for (int i = 0; i < cnn.n_params; i++)
        ag_near("cnn grad", tb_ag_grad(ag, v[2 + i]), cnn.p[i].grad, 1e-12,
                1e-10);
    const tb_tensor *g = tb_ag_grad(ag, v[0]);
    if (x_grad) {
        assert_non_null(g);
        for (int64_t i = 0; i < tb_tensor_numel(g); i++)
            dx[i] = tb_tensor_get(g, i);
    } else {
        assert_null(g);
    }
    tb_ag_destroy(ag);
}

/* The tape asks conv2d_backward for dx (input_grad) only where the
 * input needs a gradient: the CNN's first layer (x a batch) runs with
 * input_grad=0, its second without the parameter, and the weights'
 * gradients are PyTorch's either way; with x a leaf that needs a
 * gradient both layers compute dx, and x's gradient equals the
 * reference exec's (f64, 1e-12 + 1e-10 |want|). */
static void test_first_layer(void **state)
{
    (void)state;
    conv_spy spy = {.ctx = cpu_new()};
    const tb_ag_exec ex = {spy_run, spy_alloc, spy_free, NULL, &spy};
    cnn_pass(&ex, false, NULL);
    assert_int_equal(spy.n, 2);
    assert_int_equal(spy.input_grad[0], -1); /* conv2: reverse order */
    assert_int_equal(spy.input_grad[1], 0);  /* conv1 */
    double dx[3 * 14 * 14], want[3 * 14 * 14];
    spy.n = 0;
    cnn_pass(&ex, true, dx);
    assert_int_equal(spy.n, 2);
    assert_int_equal(spy.input_grad[0], -1);
    assert_int_equal(spy.input_grad[1], -1);
    cnn_pass(&ref_exec, true, want);
    double norm = 0;
    for (int i = 0; i < 3 * 14 * 14; i++) {
        norm += fabs(want[i]);
        if (!(fabs(dx[i] - want[i]) <= 1e-12 + 1e-10 * fabs(want[i])))
            fail_msg("cnn dx[%d]: got %.17g want %.17g", i, dx[i], want[i]);
    }
    assert_true(norm > 0);
    B->destroy(spy.ctx);
}

#define T(f) {#f, test_##f, leak_setup, leak_teardown, NULL}

int main(void)
{
    static const struct CMUnitTest tests[] = {
        T(models_ref),
        T(models_cpu),
        T(hooks),
        T(errors),
        T(new_ops),
        T(workloads),
        T(state_window),
        T(api_layers),
        T(pool),
        T(pool_workload),
        T(first_layer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
