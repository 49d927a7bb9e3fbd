/* The MLP and CNN workloads on the tape.  See models.h. */
#include "models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/rng.h"
#include "ref.h"

#define MAX_PARAMS 8

struct tb_model {
    tb_ag_exec ex;
    tb_dtype dt;
    tb_model_cfg cfg;
    tb_ag *ag;
    int n_params;
    int param[MAX_PARAMS], buf[MAX_PARAMS];
    int target;
    int64_t hook_calls;
    tb_model_pass pass; /* of the kernel call now running */
    tb_params perm;     /* heads_split's (0, 2, 1, 3), once set_perm */
    bool set_perm;
    /* training: the parameters' initial values and the momentum
     * buffers' (zeros) on the host, for tb_model_restore */
    tb_tensor init[MAX_PARAMS], zero[MAX_PARAMS];
};

static void count_hook(void *user, tb_ag_hook_kind kind, const tb_op *op,
                       int node, const tb_tensor *in, int n_in,
                       const tb_tensor *out, int n_out)
{
    (void)kind, (void)op, (void)node, (void)in, (void)n_in, (void)out,
        (void)n_out;
    ((tb_model *)user)->hook_calls++;
}

/* A leaf of shape s filled on the host (uniform in [-bound, bound) from
 * rng; without rng every element bound; targets: i mod 10) and
 * uploaded; keep (may be NULL) gets the host tensor, else it is freed. */
static int host_leaf(tb_model *m, const tb_shape *s, bool rg, tb_rng *rng,
                     double bound, bool targets, int *var, tb_tensor *keep)
{
    int rc = tb_ag_leaf(m->ag, s, rg, var);
    if (rc)
        return rc;
    tb_tensor h;
    if ((rc = tb_tensor_create(&h, m->dt, s)))
        return rc;
    int64_t n = tb_shape_numel(s);
    for (int64_t i = 0; i < n; i++) {
        double v = bound;
        if (targets)
            v = (double)(i % N_CLASSES);
        else if (rng)
            v = bound * (2 * tb_rng_uniform(rng) - 1);
        tb_tensor_set(&h, i, v);
    }
    rc = m->ex.upload(m->ex.user, tb_ag_value(m->ag, *var), &h);
    if (keep && rc == 0)
        *keep = h;
    else
        tb_tensor_destroy(&h);
    return rc;
}

int tb_model_create(const tb_ag_exec *ex, tb_dtype dt,
                    const tb_model_cfg *cfg, tb_model **out)
{
    if (!ex || !ex->upload || !cfg || !out)
        return TB_EINVAL;
    int rc = tb_model_check_shape(cfg->kind, &cfg->x, cfg->heads, NULL, 0);
    if (rc)
        return rc;
    tb_model *m = calloc(1, sizeof *m);
    if (!m)
        return TB_ENOMEM;
    m->ex = *ex;
    m->dt = dt;
    m->cfg = *cfg;
    if ((rc = tb_ag_create(ex, dt, &m->ag))) {
        free(m);
        return rc;
    }
    tb_shape ps[MAX_PARAMS];
    double fan[MAX_PARAMS]; /* 0: a norm's weight, ones */
    m->n_params = 6;
    if (cfg->kind == TB_MODEL_TFM) {
        int64_t D = cfg->x.dim[2], F = TFM_MLP_MULT * D;
        m->n_params = 8;
        ps[0] = ps[5] = (tb_shape){1, {D}}, fan[0] = fan[5] = 0;
        for (int i = 1; i <= 4; i++)
            ps[i] = (tb_shape){2, {D, D}}, fan[i] = (double)D;
        ps[6] = (tb_shape){2, {D, F}}, fan[6] = (double)D;
        ps[7] = (tb_shape){2, {F, D}}, fan[7] = (double)F;
    } else if (cfg->kind == TB_MODEL_MLP) {
        int64_t K = cfg->x.dim[1];
        ps[0] = (tb_shape){2, {K, MLP_H1}}, fan[0] = (double)K;
        ps[1] = (tb_shape){1, {MLP_H1}}, fan[1] = (double)K;
        ps[2] = (tb_shape){2, {MLP_H1, MLP_H2}}, fan[2] = MLP_H1;
        ps[3] = (tb_shape){1, {MLP_H2}}, fan[3] = MLP_H1;
        ps[4] = (tb_shape){2, {MLP_H2, N_CLASSES}}, fan[4] = MLP_H2;
        ps[5] = (tb_shape){1, {N_CLASSES}}, fan[5] = MLP_H2;
    } else {
        int64_t h1, w1, h2, w2, flat;
        tb_model_cnn_dims(&cfg->x, &h1, &w1, &h2, &w2, &flat);
        ps[0] = (tb_shape){4, {CNN_C1, 1, 3, 3}}, fan[0] = 9;
        ps[1] = (tb_shape){1, {CNN_C1}}, fan[1] = 9;
        ps[2] = (tb_shape){4, {CNN_C2, CNN_C1, 3, 3}}, fan[2] = CNN_C1 * 9;
        ps[3] = (tb_shape){1, {CNN_C2}}, fan[3] = CNN_C1 * 9;
        ps[4] = (tb_shape){2, {flat, N_CLASSES}}, fan[4] = (double)flat;
        ps[5] = (tb_shape){1, {N_CLASSES}}, fan[5] = (double)flat;
    }
    tb_rng rng;
    tb_rng_seed(&rng, TB_MODEL_SEED);
    for (int i = 0; rc == 0 && i < m->n_params; i++) {
        rc = host_leaf(m, &ps[i], cfg->train, fan[i] > 0 ? &rng : NULL,
                       fan[i] > 0 ? 1 / sqrt(fan[i]) : 1, false,
                       &m->param[i], cfg->train ? &m->init[i] : NULL);
        if (rc == 0 && cfg->train)
            rc = host_leaf(m, &ps[i], false, NULL, 0, false, &m->buf[i],
                           &m->zero[i]);
    }
    tb_shape ts = {1, {cfg->x.dim[0]}};
    m->target = -1;
    if (rc == 0 && cfg->kind != TB_MODEL_TFM)
        rc = host_leaf(m, &ts, false, NULL, 0, true, &m->target, NULL);
    if (rc == 0 && (cfg->hooks & 1))
        rc = tb_ag_hook_add(m->ag, TB_AG_FORWARD, TB_OP_COUNT, count_hook,
                            m, NULL);
    if (rc == 0 && (cfg->hooks & 2))
        rc = tb_ag_hook_add(m->ag, TB_AG_BACKWARD, TB_OP_COUNT, count_hook,
                            m, NULL);
    if (rc) {
        tb_model_destroy(m);
        return rc;
    }
    *out = m;
    return 0;
}

void tb_model_destroy(tb_model *m)
{
    if (!m)
        return;
    tb_ag_destroy(m->ag);
    for (int i = 0; i < MAX_PARAMS; i++) {
        tb_tensor_destroy(&m->init[i]);
        tb_tensor_destroy(&m->zero[i]);
    }
    free(m);
}

int tb_model_restore(tb_model *m)
{
    if (!m || !m->cfg.train)
        return TB_EINVAL;
    int rc = 0;
    for (int i = 0; rc == 0 && i < m->n_params; i++) {
        rc = m->ex.upload(m->ex.user, tb_ag_value(m->ag, m->param[i]),
                          &m->init[i]);
        if (rc == 0)
            rc = m->ex.upload(m->ex.user, tb_ag_value(m->ag, m->buf[i]),
                              &m->zero[i]);
    }
    return rc;
}

tb_tensor *tb_model_momentum(tb_model *m, int i)
{
    return m && m->cfg.train && i >= 0 && i < m->n_params
               ? tb_ag_value(m->ag, m->buf[i])
               : NULL;
}

int64_t tb_model_hook_calls(const tb_model *m)
{
    return m ? m->hook_calls : 0;
}

int tb_model_n_params(const tb_model *m)
{
    return m ? m->n_params : 0;
}

tb_tensor *tb_model_param(tb_model *m, int i)
{
    return m && i >= 0 && i < m->n_params ? tb_ag_value(m->ag, m->param[i])
                                          : NULL;
}

tb_tensor *tb_model_grad(tb_model *m, int i)
{
    return m && i >= 0 && i < m->n_params ? tb_ag_grad(m->ag, m->param[i])
                                          : NULL;
}

tb_model_pass tb_model_pass_now(const tb_model *m)
{
    return m ? m->pass : TB_MODEL_PASS_FWD;
}

static int ap(tb_model *m, tb_op_id op, int a, int b, int c, int *out)
{
    int in[3] = {a, b, c};
    return tb_ag_apply(m->ag, op, in, NULL, out);
}

/* [B S, D] as [B, S, H, Dh] permuted to [B, H, S, Dh] (split), or back
 * (merge). */
static int heads_split(tb_model *m, int v, bool merge, int *out)
{
    int64_t B = m->cfg.x.dim[0], S = m->cfg.x.dim[1], D = m->cfg.x.dim[2];
    int64_t H = m->cfg.heads, Dh = D / H;
    if (!m->set_perm) { /* by name once: not 4 lookups a call */
        const tb_op *op = tb_op_get(TB_OP_permute);
        static const char *const names[4] = {"p0", "p1", "p2", "p3"};
        static const int order[4] = {0, 2, 1, 3}; /* its own inverse */
        m->perm = (tb_params){0};
        for (int i = 0; i < 4; i++)
            tb_params_set(op, &m->perm, names[i], order[i], NULL, 0);
        m->set_perm = true;
    }
    const tb_params p = m->perm;
    tb_shape bshd = {4, {B, S, H, Dh}}, flat = {2, {B * S, D}};
    int in, rc;
    if (merge) {
        if ((rc = tb_ag_apply(m->ag, TB_OP_permute, &v, &p, &in)))
            return rc;
        return tb_ag_reshape(m->ag, in, &flat, out);
    }
    if ((rc = tb_ag_reshape(m->ag, v, &bshd, &in)))
        return rc;
    return tb_ag_apply(m->ag, TB_OP_permute, &in, &p, out);
}

/* The transformer block (models.h): *y [B S, D] and *loss. */
static int tfm_forward(tb_model *m, int x, int *y, int *loss)
{
    const int *w = m->param;
    tb_shape flat = {2, {m->cfg.x.dim[0] * m->cfg.x.dim[1],
                         m->cfg.x.dim[2]}};
    tb_params sp = {0};
    const tb_op *sdpa = tb_op_get(TB_OP_sdpa);
    tb_params_set(sdpa, &sp, "causal", 1, NULL, 0);
    int x2, n, qkv[3], a, h, rc;
    if ((rc = tb_ag_reshape(m->ag, x, &flat, &x2)) ||
        (rc = ap(m, TB_OP_rms_norm, x2, w[0], -1, &n)))
        return rc;
    for (int i = 0; i < 3; i++)
        if ((rc = ap(m, TB_OP_matmul, n, w[1 + i], -1, &a)) ||
            (rc = heads_split(m, a, false, &qkv[i])))
            return rc;
    if ((rc = tb_ag_apply(m->ag, TB_OP_sdpa, qkv, &sp, &a)) ||
        (rc = heads_split(m, a, true, &a)) ||
        (rc = ap(m, TB_OP_matmul, a, w[4], -1, &a)) ||
        (rc = ap(m, TB_OP_add, x2, a, -1, &h)) ||
        (rc = ap(m, TB_OP_rms_norm, h, w[5], -1, &n)) ||
        (rc = ap(m, TB_OP_matmul, n, w[6], -1, &a)) ||
        (rc = ap(m, TB_OP_gelu, a, -1, -1, &a)) ||
        (rc = ap(m, TB_OP_matmul, a, w[7], -1, &a)) ||
        (rc = ap(m, TB_OP_add, h, a, -1, y)) ||
        (rc = ap(m, TB_OP_mul, *y, *y, -1, &a)))
        return rc;
    return ap(m, TB_OP_mean, a, -1, -1, loss);
}

/* The forward pass: *logp (the model's output) and *loss variables. */
static int forward(tb_model *m, int x, int *logp, int *loss)
{
    const int *w = m->param;
    int h = x, rc;
    if (m->cfg.kind == TB_MODEL_TFM)
        return tfm_forward(m, x, logp, loss);
    if (m->cfg.kind == TB_MODEL_MLP) {
        if ((rc = ap(m, TB_OP_linear, h, w[0], w[1], &h)) ||
            (rc = ap(m, TB_OP_linear, h, w[2], w[3], &h)))
            return rc;
    } else {
        int64_t h1, w1, h2, w2, flat;
        tb_model_cnn_dims(&m->cfg.x, &h1, &w1, &h2, &w2, &flat);
        tb_shape fs = {2, {m->cfg.x.dim[0], flat}};
        if ((rc = ap(m, TB_OP_conv2d, h, w[0], w[1], &h)) ||
            (rc = ap(m, TB_OP_relu, h, -1, -1, &h)) ||
            (rc = ap(m, TB_OP_max_pool2d, h, -1, -1, &h)) ||
            (rc = ap(m, TB_OP_conv2d, h, w[2], w[3], &h)) ||
            (rc = ap(m, TB_OP_relu, h, -1, -1, &h)) ||
            (rc = ap(m, TB_OP_max_pool2d, h, -1, -1, &h)) ||
            (rc = tb_ag_reshape(m->ag, h, &fs, &h)))
            return rc;
    }
    if ((rc = ap(m, TB_OP_matmul, h, w[4], -1, &h)) ||
        (rc = ap(m, TB_OP_add, h, w[5], -1, &h)) ||
        (rc = ap(m, TB_OP_log_softmax, h, -1, -1, logp)))
        return rc;
    return ap(m, TB_OP_nll_loss, *logp, m->target, -1, loss);
}

/* copy src (a [1]-shaped view when it is a scalar) into dst. */
static int copy_out(tb_model *m, const tb_tensor *src, tb_tensor *dst)
{
    tb_tensor s = *src;
    if (s.ndim == 0) {
        s.ndim = 1;
        s.shape[0] = 1;
        s.strides[0] = 1;
    }
    tb_params none = {0};
    return m->ex.run(m->ex.user, tb_op_get(TB_OP_copy), &s, dst, &none);
}

int tb_model_run(tb_model *m, const tb_tensor *x, tb_model_phase phase,
                 tb_tensor *loss, tb_tensor *logp)
{
    if (!m || !x || !loss)
        return TB_EINVAL;
    tb_shape xs = tb_tensor_shape(x);
    if (!tb_shape_equal(&xs, &m->cfg.x))
        return TB_ESHAPE;
    if (phase != TB_MODEL_FWD && !m->cfg.train)
        return TB_EINVAL;
    int xv, lp = -1, l = -1;
    int rc = tb_ag_input(m->ag, x, &xv);
    if (rc == 0)
        rc = forward(m, xv, &lp, &l);
    if (rc == 0 && phase != TB_MODEL_FWD) {
        tb_ag_zero_grad(m->ag);
        m->pass = TB_MODEL_PASS_BWD;
        rc = tb_ag_backward(m->ag, l);
    }
    m->pass = TB_MODEL_PASS_OPT;
    if (rc == 0 && phase == TB_MODEL_STEP) {
        const tb_op *op = tb_op_get(TB_OP_sgd_momentum);
        tb_params p = {0};
        tb_params_set(op, &p, "lr", m->cfg.lr, NULL, 0);
        tb_params_set(op, &p, "momentum", m->cfg.momentum, NULL, 0);
        for (int i = 0; rc == 0 && i < m->n_params; i++) {
            tb_tensor in[3] = {*tb_ag_value(m->ag, m->param[i]),
                               *tb_ag_grad(m->ag, m->param[i]),
                               *tb_ag_value(m->ag, m->buf[i])};
            tb_tensor out[2] = {in[0], in[2]};
            rc = m->ex.run(m->ex.user, op, in, out, &p);
        }
    }
    m->pass = TB_MODEL_PASS_FWD;
    if (rc == 0)
        rc = copy_out(m, tb_ag_value(m->ag, l), loss);
    if (rc == 0 && logp) { /* the transformer's y: [B S, D] as [B, S, D] */
        tb_tensor y = *tb_ag_value(m->ag, lp);
        tb_shape ys = tb_tensor_shape(logp);
        if (tb_tensor_numel(&y) != tb_shape_numel(&ys))
            rc = TB_ESHAPE;
        tb_tensor_init(&y, y.dtype, &ys);
        y.data = tb_ag_value(m->ag, lp)->data;
        y.backend = tb_ag_value(m->ag, lp)->backend;
        y.backend_ctx = tb_ag_value(m->ag, lp)->backend_ctx;
        y.owns = false;
        if (rc == 0)
            rc = copy_out(m, &y, logp);
    }
    tb_ag_clear(m->ag);
    return rc;
}

/* ---- the reference of the workload ops ----------------------------------- */

/* The reference kernels as an exec, in f64 host memory; ops that write
 * into their inputs go through temporaries. */
static int ref_run(void *user, const tb_op *op, const tb_tensor *in,
                   tb_tensor *out, const tb_params *p)
{
    (void)user;
    if (!op->alias)
        return op->ref(in, out, p);
    tb_tensor tmp[TB_MAX_OUTPUTS];
    memset(tmp, 0, sizeof tmp);
    int rc = 0;
    for (int o = 0; rc == 0 && o < op->n_out; o++) {
        tb_shape s = tb_tensor_shape(&out[o]);
        rc = tb_tensor_create(&tmp[o], TB_F64, &s);
    }
    if (rc == 0)
        rc = op->ref(in, tmp, p);
    for (int o = 0; o < op->n_out; o++) {
        int64_t n = tb_tensor_numel(&out[o]);
        for (int64_t i = 0; rc == 0 && i < n; i++)
            tb_tensor_set(&out[o], i, tb_tensor_get(&tmp[o], i));
        tb_tensor_destroy(&tmp[o]);
    }
    return rc;
}

static int ref_alloc(void *user, tb_tensor *t)
{
    (void)user;
    tb_shape s = tb_tensor_shape(t);
    return tb_tensor_create(t, t->dtype, &s);
}

static void ref_free(void *user, tb_tensor *t)
{
    (void)user;
    tb_tensor_destroy(t);
}

static int ref_upload(void *user, tb_tensor *dst, const tb_tensor *src)
{
    (void)user;
    int64_t n = tb_tensor_numel(src);
    for (int64_t i = 0; i < n; i++)
        tb_tensor_set(dst, i, tb_tensor_get(src, i));
    return 0;
}

/* Runs op id's model on the reference kernels: in[0] the batch (any
 * dtype, read as f64), out[0] its output. */
static int ref_workload(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    const tb_op *op = tb_op_get(id);
    bool train = tb_model_op_trains(op);
    tb_model_cfg cfg = {
        .kind = tb_model_of_op(op),
        .x = tb_tensor_shape(&in[0]),
        .heads = tb_model_op_heads(op, p),
        /* the output is the loss of this call's forward pass (before
         * any update), so the reference runs the forward pass only */
        .hooks = 0,
        .train = false,
    };
    tb_shape os[TB_MAX_OUTPUTS];
    int rc = tb_op_infer(op, &cfg.x, 1, p, os, NULL, 0);
    if (rc)
        return rc;
    tb_shape got = tb_tensor_shape(&out[0]);
    if (out[0].dtype != TB_F64 || !tb_shape_equal(&got, &os[0]))
        return TB_ESHAPE;
    static const tb_ag_exec ex = {ref_run, ref_alloc, ref_free, ref_upload,
                                  NULL};
    tb_model *m = NULL;
    if ((rc = tb_model_create(&ex, TB_F64, &cfg, &m)))
        return rc;
    tb_tensor x;
    if ((rc = tb_tensor_create(&x, TB_F64, &cfg.x)) == 0) {
        ref_upload(NULL, &x, &in[0]);
        if (train) {
            rc = tb_model_run(m, &x, TB_MODEL_FWD, &out[0], NULL);
        } else {
            tb_tensor loss;
            tb_shape one = {1, {1}};
            if ((rc = tb_tensor_create(&loss, TB_F64, &one)) == 0) {
                rc = tb_model_run(m, &x, TB_MODEL_FWD, &loss, &out[0]);
                tb_tensor_destroy(&loss);
            }
        }
        tb_tensor_destroy(&x);
    }
    tb_model_destroy(m);
    return rc;
}

int tb_ref_mlp_train_step(const tb_tensor *in, tb_tensor *out,
                          const tb_params *p)
{
    return ref_workload(TB_OP_mlp_train_step, in, out, p);
}

int tb_ref_mlp_infer_step(const tb_tensor *in, tb_tensor *out,
                          const tb_params *p)
{
    return ref_workload(TB_OP_mlp_infer_step, in, out, p);
}

int tb_ref_cnn_train_step(const tb_tensor *in, tb_tensor *out,
                          const tb_params *p)
{
    return ref_workload(TB_OP_cnn_train_step, in, out, p);
}

int tb_ref_cnn_infer_step(const tb_tensor *in, tb_tensor *out,
                          const tb_params *p)
{
    return ref_workload(TB_OP_cnn_infer_step, in, out, p);
}

int tb_ref_tfm_train_step(const tb_tensor *in, tb_tensor *out,
                          const tb_params *p)
{
    return ref_workload(TB_OP_tfm_train_step, in, out, p);
}

int tb_ref_tfm_infer_step(const tb_tensor *in, tb_tensor *out,
                          const tb_params *p)
{
    return ref_workload(TB_OP_tfm_infer_step, in, out, p);
}
