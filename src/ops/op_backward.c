/* Shape rules and cost models of the backward ops.  See op_backward.h. */
#include "op_backward.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "op_rules.h"

/* The forward op whose gradient op computes. */
static tb_op_id bw_forward(tb_op_id id)
{
    switch (id) {
    case TB_OP_relu_backward: return TB_OP_relu;
    case TB_OP_sigmoid_backward: return TB_OP_sigmoid;
    case TB_OP_tanh_backward: return TB_OP_tanh;
    case TB_OP_gelu_backward: return TB_OP_gelu;
    case TB_OP_log_softmax_backward: return TB_OP_log_softmax;
    case TB_OP_sum_backward: return TB_OP_sum;
    case TB_OP_mean_backward: return TB_OP_mean;
    case TB_OP_add_backward: return TB_OP_add;
    case TB_OP_sub_backward: return TB_OP_sub;
    case TB_OP_mul_backward: return TB_OP_mul;
    case TB_OP_div_backward: return TB_OP_div;
    case TB_OP_matmul_backward: return TB_OP_matmul;
    case TB_OP_linear_backward: return TB_OP_linear;
    case TB_OP_max_pool2d_backward: return TB_OP_max_pool2d;
    case TB_OP_avg_pool2d_backward: return TB_OP_avg_pool2d;
    case TB_OP_conv2d_backward: return TB_OP_conv2d_nobias;
    case TB_OP_layer_norm_backward: return TB_OP_layer_norm;
    case TB_OP_rms_norm_backward: return TB_OP_rms_norm;
    case TB_OP_batch_norm_backward: return TB_OP_batch_norm;
    case TB_OP_group_norm_backward: return TB_OP_group_norm;
    case TB_OP_sdpa_backward: return TB_OP_sdpa;
    case TB_OP_cross_entropy_backward: return TB_OP_cross_entropy;
    case TB_OP_embedding_backward: return TB_OP_embedding;
    default: return TB_OP_nll_loss;
    }
}

/* Runs the forward rule on fin[0..n) (parameters as given) and checks that
 * g has the forward output's shape. */
static int bw_check_g(const tb_op *op, const tb_shape *g, const tb_shape *fin,
                      int n, const tb_params *p, char *err, size_t len)
{
    const tb_op *f = tb_op_get(bw_forward(op->id));
    tb_shape fout[TB_MAX_OUTPUTS];
    char ferr[256] = "";
    int rc = tb_op_infer(f, fin, n, p, fout, ferr, sizeof ferr);
    if (rc)
        return tb_op_fail(err, len, rc, "%s: forward %s", op->name, ferr);
    /* A scalar output's gradient comes as [1] (inputs have >= 1 dim). */
    bool scalar_g = fout[0].ndim == 0 && g->ndim == 1 && g->dim[0] == 1;
    if (!scalar_g && !tb_shape_equal(g, &fout[0])) {
        char sg[96], sf[96];
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: gradient %s does not match the %s output %s",
                          op->name, tb_shape_format(g, sg, sizeof sg), f->name,
                          tb_shape_format(&fout[0], sf, sizeof sf));
    }
    return 0;
}

/* The rule of most backward ops: g checked against the forward rule of
 * the n_fwd forward inputs in[1..n_fwd], and the gradients of the first
 * n_out of them, of their shapes. */
static int bw_grads(const tb_op *op, const tb_shape *in, const tb_params *p,
                    tb_shape *out, char *err, size_t len, int n_fwd,
                    int n_out)
{
    int rc = bw_check_g(op, &in[0], &in[1], n_fwd, p, err, len);
    if (rc)
        return rc;
    for (int i = 0; i < n_out; i++)
        out[i] = in[1 + i];
    return 0;
}

int tb_bw_shape_act(const tb_op *op, const tb_shape *in, const tb_params *p,
                    tb_shape *out, char *err, size_t len)
{
    return bw_grads(op, in, p, out, err, len, 1, 1);
}

int tb_bw_shape_binary(const tb_op *op, const tb_shape *in,
                       const tb_params *p, tb_shape *out, char *err,
                       size_t len)
{
    return bw_grads(op, in, p, out, err, len, 2, 2);
}

int tb_bw_shape_linear(const tb_op *op, const tb_shape *in,
                       const tb_params *p, tb_shape *out, char *err,
                       size_t len)
{
    /* The forward rule needs b [N]: N from W. */
    tb_shape fin[3] = {in[1], in[2], {.ndim = 1}};
    if (in[2].ndim == 2)
        fin[2].dim[0] = in[2].dim[1];
    int rc = bw_check_g(op, &in[0], fin, 3, p, err, len);
    if (rc)
        return rc;
    if (!tb_shape_equal(&in[3], &in[0])) {
        char sy[96], sg[96];
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: forward output y %s does not match the gradient "
                          "%s",
                          op->name, tb_shape_format(&in[3], sy, sizeof sy),
                          tb_shape_format(&in[0], sg, sizeof sg));
    }
    out[0] = in[1];
    out[1] = in[2];
    out[2] = fin[2];
    return 0;
}

int tb_bw_shape_nll(const tb_op *op, const tb_shape *in, const tb_params *p,
                    tb_shape *out, char *err, size_t len)
{
    (void)p;
    char sl[96], st[96];
    if (in[0].ndim != 2 || in[1].ndim != 1 || in[1].dim[0] != in[0].dim[0])
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: expects %s [N, C] and targets [N]; got %s "
                          "and %s", op->name,
                          op->id == TB_OP_nll_loss ? "log-probabilities"
                                                   : "logits",
                          tb_shape_format(&in[0], sl, sizeof sl),
                          tb_shape_format(&in[1], st, sizeof st));
    out[0].ndim = 0;
    return 0;
}

int tb_bw_shape_nll_backward(const tb_op *op, const tb_shape *in,
                             const tb_params *p, tb_shape *out, char *err,
                             size_t len)
{
    return bw_grads(op, in, p, out, err, len, 2, 1);
}

int tb_bw_shape_embedding(const tb_op *op, const tb_shape *in,
                          const tb_params *p, tb_shape *out, char *err,
                          size_t len)
{
    const int64_t V = tb_params_has(p, 0) ? (int64_t)p->v[0]
                                          : (int64_t)op->params[0].def;
    if (in[0].ndim < 2) {
        char sg[96];
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: gradient %s needs a last dim D after the "
                          "indices' dims", op->name,
                          tb_shape_format(&in[0], sg, sizeof sg));
    }
    /* the forward's weight [V, D] */
    tb_shape fin[2] = {{2, {V, in[0].dim[in[0].ndim - 1]}}, in[1]};
    int rc = bw_check_g(op, &in[0], fin, 2, p, err, len);
    if (rc)
        return rc;
    out[0] = fin[0];
    return 0;
}

int tb_bw_shape_conv2d(const tb_op *op, const tb_shape *in,
                       const tb_params *p, tb_shape *out, char *err,
                       size_t len)
{
    int rc = bw_grads(op, in, p, out, err, len, 2, 2);
    if (rc)
        return rc;
    out[2].ndim = 1;
    out[2].dim[0] = in[2].dim[0];
    return 0;
}

int tb_bw_shape_sdpa(const tb_op *op, const tb_shape *in,
                     const tb_params *p, tb_shape *out, char *err,
                     size_t len)
{
    return bw_grads(op, in, p, out, err, len, 3, 3);
}

int tb_bw_shape_norm(const tb_op *op, const tb_shape *in, const tb_params *p,
                     tb_shape *out, char *err, size_t len)
{
    /* The forward inputs: x, w and (layer_norm, batch_norm, group_norm)
     * a bias of w's shape; batch_norm's running [2, C] and its
     * parameters' defaults (training: the form whose gradient this is);
     * group_norm's parameters as given (num_groups must divide C). */
    const int64_t C = in[1].ndim > 1 ? in[1].dim[1] : 0;
    const tb_shape fin[4] = {in[1], in[2], in[2], {2, {2, C}}};
    const bool bn = op->id == TB_OP_batch_norm_backward;
    const int n_fwd = bn ? 4 : op->id == TB_OP_rms_norm_backward ? 2 : 3;
    const tb_params none = {0};
    int rc = bw_check_g(op, &in[0], fin, n_fwd, bn ? &none : p, err, len);
    if (rc)
        return rc;
    out[0] = in[1];
    for (int i = 1; i < op->n_out; i++)
        out[i] = in[2];
    return 0;
}

static double numel(const tb_shape *s)
{
    return (double)tb_shape_numel(s);
}

/* Operations per element of the result, counted from the formulas:
 * relu' 1 (select), sigmoid' s(1-s)g 6, tanh' (1-t^2)g 5, gelu'
 * (Phi + x*phi)g 9; log_softmax' g - exp(y)*sum(g) 4; sum' 0 (copy),
 * mean' 1; add/sub' 1 per g element per input, mul' 2, div' 2 + 3;
 * matmul' two products (4*M*N*K); linear' the mask, two products and
 * the bias sum; nll 1 per row; pools one per window tap; conv2d' two
 * multiply-adds per tap of every output (one with input_grad=0), plus
 * the bias sum; layer_norm'
 * 16 (the statistics 3, x-hat 2, g*w 1, its two row sums 3, dx 4, dw 2,
 * db 1), rms_norm' 12 (no mean, no db), batch_norm' and group_norm' 16
 * as layer_norm' (per channel or group instead of per row). */
double tb_bw_flops(const tb_op *op, const tb_shape *in, const tb_shape *out,
                   const tb_params *p, tb_dtype dt)
{
    (void)dt;
    double ng = numel(&in[0]);
    switch (op->id) {
    case TB_OP_relu_backward: return ng;
    case TB_OP_sigmoid_backward: return 6 * ng;
    case TB_OP_tanh_backward: return 5 * ng;
    case TB_OP_gelu_backward: return 9 * ng;
    case TB_OP_log_softmax_backward: return 4 * ng;
    case TB_OP_sum_backward: return 0;
    case TB_OP_mean_backward: return numel(&out[0]);
    case TB_OP_add_backward:
    case TB_OP_sub_backward: return 2 * ng;
    case TB_OP_mul_backward: return 4 * ng;
    case TB_OP_div_backward: return 5 * ng;
    case TB_OP_matmul_backward:
        return 4 * ng * (double)in[1].dim[in[1].ndim - 1];
    case TB_OP_linear_backward:
        return ng * (1 + 4 * (double)in[1].dim[1]) + ng;
    case TB_OP_nll_loss: return (double)in[0].dim[0];
    case TB_OP_nll_loss_backward: return (double)in[1].dim[0];
    case TB_OP_cross_entropy: /* max, x - m, exp, + per logit; log, -x_t */
    case TB_OP_cross_entropy_unfused:
        return 4 * ng + 3 * (double)in[0].dim[0];
    case TB_OP_cross_entropy_backward: /* the stats, then x - m, exp, * */
        return 7 * numel(&in[1]);
    case TB_OP_embedding_backward: return ng; /* one add per g element */
    case TB_OP_max_pool2d_backward:
    case TB_OP_avg_pool2d_backward: {
        double k = tb_params_has(p, 0) ? p->v[0] : 2;
        return ng * k * k;
    }
    case TB_OP_layer_norm_backward:
    case TB_OP_rms_norm_backward:
    case TB_OP_batch_norm_backward:
    case TB_OP_group_norm_backward:
        return (op->id == TB_OP_rms_norm_backward ? 12 : 16) * ng;
    case TB_OP_conv2d_backward: {
        /* input_grad=0: dw's product alone */
        double prods = p && tb_params_has(p, 3) && p->v[3] == 0 ? 2 : 4;
        return prods * ng * (double)in[2].dim[1] * (double)in[2].dim[2] *
                   (double)in[2].dim[3] + ng;
    }
    default: return ng;
    }
}

double tb_bw_reduce_len(const tb_op *op, const tb_shape *in,
                        const tb_shape *out, const tb_params *p,
                        tb_dtype dt)
{
    (void)p, (void)dt;
    double ng = numel(&in[0]), r = 1;
    switch (op->id) {
    case TB_OP_log_softmax_backward: {
        int ax = 0;
        double a = tb_params_has(p, 0) ? p->v[0] : -1;
        if (tb_axis_norm((int64_t)a, in[0].ndim, &ax) == 0)
            r = (double)in[0].dim[ax];
        break;
    }
    case TB_OP_add_backward:
    case TB_OP_sub_backward:
    case TB_OP_mul_backward:
    case TB_OP_div_backward:
        for (int i = 0; i < op->n_out; i++)
            if (ng / numel(&out[i]) > r)
                r = ng / numel(&out[i]);
        break;
    case TB_OP_matmul_backward: {
        /* da sums over N, db over M */
        double n = (double)in[0].dim[in[0].ndim - 1];
        double m = (double)in[0].dim[in[0].ndim - 2];
        r = n > m ? n : m;
        break;
    }
    case TB_OP_linear_backward:
        r = (double)(in[0].dim[0] > in[0].dim[1] ? in[0].dim[0]
                                                  : in[0].dim[1]);
        break;
    case TB_OP_nll_loss: r = (double)in[0].dim[0]; break;
    case TB_OP_layer_norm_backward:
    case TB_OP_rms_norm_backward: {
        /* dx sums over the row (D), dw and db over the rows */
        double D = (double)in[0].dim[in[0].ndim - 1];
        r = D > 0 && ng / D > D ? ng / D : D;
        break;
    }
    case TB_OP_batch_norm_backward: /* a channel's N x trailing dims */
        r = in[1].ndim > 1 && in[1].dim[1] > 0 ? ng / (double)in[1].dim[1]
                                               : 1;
        break;
    case TB_OP_group_norm_backward: {
        /* dx sums over a group (C / num_groups x trailing dims), dw and
         * db over a channel's N x trailing dims */
        const double C = in[1].ndim > 1 ? (double)in[1].dim[1] : 1;
        const double G = tb_params_has(p, 0) ? p->v[0] : 1;
        const double n = in[1].dim[0] > 0 ? (double)in[1].dim[0] : 1;
        const double grp = ng / n / G, ch = C > 0 ? ng / C : 1;
        r = grp > ch ? grp : ch;
        break;
    }
    /* each row's sum of exponentials; the loss's mean over the rows adds
     * errors of a size relative to the result's */
    case TB_OP_cross_entropy:
    case TB_OP_cross_entropy_unfused: r = (double)in[0].dim[1]; break;
    case TB_OP_cross_entropy_backward: r = (double)in[1].dim[1]; break;
    /* a row of dW sums the g rows of every repeat of its index */
    case TB_OP_embedding_backward: r = numel(&in[1]); break;
    case TB_OP_max_pool2d_backward:
    case TB_OP_avg_pool2d_backward: {
        double k = tb_params_has(p, 0) ? p->v[0] : 2;
        r = k * k;
        break;
    }
    case TB_OP_conv2d_backward: {
        /* dw and db sum over every output position of every item */
        double per = ng / (double)in[0].dim[1];
        double taps = (double)in[2].dim[0] * (double)in[2].dim[2] *
                      (double)in[2].dim[3];
        r = per > taps ? per : taps;
        break;
    }
    default: break;
    }
    return r;
}

int tb_bw_class(double t, int64_t C, int64_t *cls)
{
    if (!(t >= 0 && t < (double)C) || t != floor(t))
        return TB_EINVAL;
    *cls = (int64_t)t;
    return 0;
}
