/* layer_norm and rms_norm references and their gradients: each row of
 * x's last dim in double, three passes (the mean, refined by the mean of
 * the deviations from it, then the squared deviations), eps as the case dtype holds it (a constant: ref.c's
 * convention).  batch_norm (per channel over N and the trailing dims)
 * and group_norm (per sample and group of channels) likewise. */
#include <math.h>

#include "../base/error.h"
#include "ref.h"

static double norm_eps(const tb_op *op, const tb_params *p, tb_dtype dt)
{
    double e = p && tb_params_has(p, 0) ? p->v[0] : op->params[0].def;
    return tb_dtype_round(dt, e);
}

/* Row r's mean (0 for rms_norm) and 1 / sqrt(var + eps), in double. */
static double row_rstd(const tb_tensor *x, int64_t r, int64_t D, bool rms,
                       double eps, double *mean)
{
    double m = 0, ss = 0;
    if (!rms) {
        for (int64_t j = 0; j < D; j++)
            m += tb_tensor_get(x, r * D + j);
        m /= (double)D;
        /* refined by the mean of the deviations from it: the first
         * mean's rounding (about D ulps of |x|, large beside the
         * deviations of values far from 0) is what that mean holds */
        double c = 0;
        for (int64_t j = 0; j < D; j++)
            c += tb_tensor_get(x, r * D + j) - m;
        m += c / (double)D;
    }
    for (int64_t j = 0; j < D; j++) {
        double d = tb_tensor_get(x, r * D + j) - m;
        ss += d * d;
    }
    *mean = m;
    return 1 / sqrt(ss / (double)D + eps);
}

/* rms: 0 layer_norm, 1 rms_norm */
static int norm_ref(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    const tb_op *op = tb_op_get(id);
    const tb_tensor *x = &in[0];
    if (x->ndim < 1 || out->dtype != TB_F64 || out->ndim != x->ndim)
        return TB_ESHAPE;
    const int64_t D = x->shape[x->ndim - 1];
    const int64_t rows = D ? tb_tensor_numel(x) / D : 0;
    const double eps = norm_eps(op, p, x->dtype);
    const bool rms = id == TB_OP_rms_norm;
    double *o = out->data;
    for (int64_t r = 0; r < rows; r++) {
        double mean;
        const double inv = row_rstd(x, r, D, rms, eps, &mean);
        for (int64_t j = 0; j < D; j++) {
            double y = (tb_tensor_get(x, r * D + j) - mean) * inv *
                       tb_tensor_get(&in[1], j);
            if (!rms)
                y += tb_tensor_get(&in[2], j);
            o[r * D + j] = y;
        }
    }
    return 0;
}

int tb_ref_layer_norm(const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    return norm_ref(TB_OP_layer_norm, in, out, p);
}

int tb_ref_rms_norm(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return norm_ref(TB_OP_rms_norm, in, out, p);
}

/* The gradients (PyTorch's, mean and rstd recomputed from x): with
 * xh = (x - mean) * rstd and gh = g * w per row,
 *   dx = rstd * (gh - mean(gh) - xh * mean(gh * xh))   (layer_norm)
 *   dx = rstd * (gh - xh * mean(gh * xh))              (rms_norm: mean 0)
 * and dw = sum over the rows of g * xh, db = sum of g. */
static int norm_bw_ref(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    const tb_op *op = tb_op_get(id);
    const tb_tensor *g = &in[0], *x = &in[1], *w = &in[2];
    if (x->ndim < 1 || out[0].ndim != x->ndim)
        return TB_ESHAPE;
    for (int i = 0; i < op->n_out; i++)
        if (out[i].dtype != TB_F64)
            return TB_EDTYPE;
    const int64_t D = x->shape[x->ndim - 1];
    const int64_t rows = D ? tb_tensor_numel(x) / D : 0;
    const double eps = norm_eps(op, p, x->dtype);
    const bool rms = id == TB_OP_rms_norm_backward;
    double *dx = out[0].data, *dw = out[1].data;
    double *db = rms ? NULL : out[2].data;
    for (int64_t j = 0; j < D; j++) {
        dw[j] = 0;
        if (db)
            db[j] = 0;
    }
    for (int64_t r = 0; r < rows; r++) {
        double mean, sg = 0, sgx = 0;
        const double rstd = row_rstd(x, r, D, rms, eps, &mean);
        for (int64_t j = 0; j < D; j++) {
            double gj = tb_tensor_get(g, r * D + j);
            double xh = (tb_tensor_get(x, r * D + j) - mean) * rstd;
            double gh = gj * tb_tensor_get(w, j);
            sg += gh;
            sgx += gh * xh;
            dw[j] += gj * xh;
            if (db)
                db[j] += gj;
        }
        const double a = rms ? 0 : sg / (double)D, b = sgx / (double)D;
        for (int64_t j = 0; j < D; j++) {
            double xh = (tb_tensor_get(x, r * D + j) - mean) * rstd;
            double gh = tb_tensor_get(g, r * D + j) * tb_tensor_get(w, j);
            dx[r * D + j] = rstd * (gh - a - xh * b);
        }
    }
    return 0;
}

int tb_ref_layer_norm_backward(const tb_tensor *in, tb_tensor *out,
                               const tb_params *p)
{
    return norm_bw_ref(TB_OP_layer_norm_backward, in, out, p);
}

int tb_ref_rms_norm_backward(const tb_tensor *in, tb_tensor *out,
                             const tb_params *p)
{
    return norm_bw_ref(TB_OP_rms_norm_backward, in, out, p);
}

/* Parameter i of op (its default when unset). */
static double param_or_def(const tb_op *op, const tb_params *p, int i)
{
    return p && tb_params_has(p, i) ? p->v[i] : op->params[i].def;
}

/* x [N, C, ...]: N, C and the elements of one channel of one sample. */
static void nc_dims(const tb_tensor *x, int64_t *N, int64_t *C, int64_t *S)
{
    *N = x->shape[0];
    *C = x->shape[1];
    *S = 1;
    for (int d = 2; d < x->ndim; d++)
        *S *= x->shape[d];
}

/* batch_norm: x [N, C, ...], w, b [C], running [2, C] -> y, running'.
 * Training: channel c's mean and biased variance over its N * S values
 * normalize; running' = (1 - momentum) * running + momentum * batch,
 * the variance unbiased (n / (n - 1)).  Else the running statistics
 * normalize and running' = running. */
int tb_ref_batch_norm(const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    const tb_op *op = tb_op_get(TB_OP_batch_norm);
    const tb_tensor *x = &in[0], *run = &in[3];
    if (x->ndim < 2 || out[0].ndim != x->ndim)
        return TB_ESHAPE;
    if (out[0].dtype != TB_F64 || out[1].dtype != TB_F64)
        return TB_EDTYPE;
    int64_t N, C, S;
    nc_dims(x, &N, &C, &S);
    const bool training = param_or_def(op, p, 0) != 0;
    const double mom = param_or_def(op, p, 1);
    const double eps = tb_dtype_round(x->dtype, param_or_def(op, p, 2));
    const double n = (double)(N * S);
    double *y = out[0].data, *ro = out[1].data;
    for (int64_t c = 0; c < C; c++) {
        double rm = tb_tensor_get(run, c), rv = tb_tensor_get(run, C + c);
        double mean = rm, var = rv;
        if (training) {
            double s = 0, ss = 0;
            for (int64_t i = 0; i < N; i++)
                for (int64_t k = 0; k < S; k++)
                    s += tb_tensor_get(x, (i * C + c) * S + k);
            mean = s / n;
            for (int64_t i = 0; i < N; i++)
                for (int64_t k = 0; k < S; k++) {
                    double d = tb_tensor_get(x, (i * C + c) * S + k) - mean;
                    ss += d * d;
                }
            var = ss / n;
            rm = (1 - mom) * rm + mom * mean;
            rv = (1 - mom) * rv + mom * (ss / (n - 1));
        }
        const double rstd = 1 / sqrt(var + eps);
        const double w = tb_tensor_get(&in[1], c), b = tb_tensor_get(&in[2], c);
        for (int64_t i = 0; i < N; i++)
            for (int64_t k = 0; k < S; k++) {
                const int64_t e = (i * C + c) * S + k;
                y[e] = (tb_tensor_get(x, e) - mean) * rstd * w + b;
            }
        ro[c] = rm;
        ro[C + c] = rv;
    }
    return 0;
}

/* group_norm's (and its gradient's) dims of x [N, C, S...]: num_groups
 * G (p's or the default), a group's len = C / G * S values, eps as x's
 * dtype holds it. */
typedef struct {
    int64_t N, C, S, G, len;
    double eps;
} group_dims;

/* d for x and p; TB_EPARAM when G does not divide C. */
static int group_dims_of(const tb_op *op, const tb_tensor *x,
                         const tb_params *p, group_dims *d)
{
    nc_dims(x, &d->N, &d->C, &d->S);
    d->G = (int64_t)param_or_def(op, p, 0);
    d->eps = tb_dtype_round(x->dtype, param_or_def(op, p, 1));
    if (d->G < 1 || d->C % d->G)
        return TB_EPARAM;
    d->len = d->C / d->G * d->S;
    return 0;
}

/* The mean of x's len values from offset o, and in *rstd 1 / sqrt(their
 * biased variance + eps) (two passes, in double). */
static double group_stats(const tb_tensor *x, int64_t o, int64_t len,
                          double eps, double *rstd)
{
    double s = 0, ss = 0;
    for (int64_t k = 0; k < len; k++)
        s += tb_tensor_get(x, o + k);
    const double mean = len ? s / (double)len : 0;
    for (int64_t k = 0; k < len; k++) {
        double d = tb_tensor_get(x, o + k) - mean;
        ss += d * d;
    }
    *rstd = 1 / sqrt((len ? ss / (double)len : 0) + eps);
    return mean;
}

/* group_norm: per sample i and group g, the C / G channels' S values
 * each (contiguous in x) normalized by their mean and biased variance,
 * then channel c scaled by w[c] and shifted by b[c]. */
int tb_ref_group_norm(const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    const tb_op *op = tb_op_get(TB_OP_group_norm);
    const tb_tensor *x = &in[0];
    if (x->ndim < 2 || out->ndim != x->ndim)
        return TB_ESHAPE;
    if (out->dtype != TB_F64)
        return TB_EDTYPE;
    group_dims d;
    if (group_dims_of(op, x, p, &d))
        return TB_EPARAM;
    const int64_t N = d.N, C = d.C, S = d.S, G = d.G, len = d.len;
    double *y = out->data;
    for (int64_t r = 0; r < N * G; r++) {
        double rstd;
        const double mean = group_stats(x, r * len, len, d.eps, &rstd);
        for (int64_t k = 0; k < len; k++) {
            const int64_t c = (r % G) * (C / G) + k / S;
            y[r * len + k] = (tb_tensor_get(x, r * len + k) - mean) * rstd *
                                 tb_tensor_get(&in[1], c) +
                             tb_tensor_get(&in[2], c);
        }
    }
    return 0;
}

/* The gradients' outputs dx (of x's rank, x at least 2-D), dw, db: all
 * f64. */
static int nc_bw_check(const tb_tensor *x, const tb_tensor *out)
{
    if (x->ndim < 2 || out[0].ndim != x->ndim)
        return TB_ESHAPE;
    for (int i = 0; i < 3; i++)
        if (out[i].dtype != TB_F64)
            return TB_EDTYPE;
    return 0;
}

/* batch_norm_backward (training): per channel c over its n = N * S
 * values, xh = (x - mean) * rstd (biased variance) and
 *   dx = w * rstd * (g - sum(g) / n - xh * sum(g * xh) / n),
 *   dw = sum(g * xh), db = sum(g). */
int tb_ref_batch_norm_backward(const tb_tensor *in, tb_tensor *out,
                               const tb_params *p)
{
    const tb_op *op = tb_op_get(TB_OP_batch_norm_backward);
    const tb_tensor *g = &in[0], *x = &in[1];
    const int rc = nc_bw_check(x, out);
    if (rc)
        return rc;
    int64_t N, C, S;
    nc_dims(x, &N, &C, &S);
    const double eps = tb_dtype_round(x->dtype, param_or_def(op, p, 0));
    const double n = (double)(N * S);
    double *dx = out[0].data, *dw = out[1].data, *db = out[2].data;
    for (int64_t c = 0; c < C; c++) {
        double s = 0, ss = 0, sg = 0, sgx = 0;
        for (int64_t i = 0; i < N; i++)
            for (int64_t k = 0; k < S; k++)
                s += tb_tensor_get(x, (i * C + c) * S + k);
        const double mean = n > 0 ? s / n : 0;
        for (int64_t i = 0; i < N; i++)
            for (int64_t k = 0; k < S; k++) {
                double d = tb_tensor_get(x, (i * C + c) * S + k) - mean;
                ss += d * d;
            }
        const double rstd = 1 / sqrt((n > 0 ? ss / n : 0) + eps);
        for (int64_t i = 0; i < N; i++)
            for (int64_t k = 0; k < S; k++) {
                const int64_t e = (i * C + c) * S + k;
                const double gj = tb_tensor_get(g, e);
                sg += gj;
                sgx += gj * (tb_tensor_get(x, e) - mean) * rstd;
            }
        const double wr = tb_tensor_get(&in[2], c) * rstd;
        for (int64_t i = 0; i < N; i++)
            for (int64_t k = 0; k < S; k++) {
                const int64_t e = (i * C + c) * S + k;
                const double xh = (tb_tensor_get(x, e) - mean) * rstd;
                dx[e] = wr * (tb_tensor_get(g, e) - sg / n - xh * sgx / n);
            }
        dw[c] = sgx;
        db[c] = sg;
    }
    return 0;
}

/* group_norm_backward: per (sample, group) pair over its len = C / G * S
 * values, xh = (x - mean) * rstd (biased variance) and gh = g * w[c];
 *   dx = rstd * (gh - sum(gh) / len - xh * sum(gh * xh) / len),
 * and per channel, over the samples and trailing dims,
 *   dw = sum(g * xh), db = sum(g). */
int tb_ref_group_norm_backward(const tb_tensor *in, tb_tensor *out,
                               const tb_params *p)
{
    const tb_op *op = tb_op_get(TB_OP_group_norm_backward);
    const tb_tensor *g = &in[0], *x = &in[1], *w = &in[2];
    const int rc = nc_bw_check(x, out);
    if (rc)
        return rc;
    group_dims d;
    if (group_dims_of(op, x, p, &d))
        return TB_EPARAM;
    const int64_t N = d.N, C = d.C, S = d.S, G = d.G, len = d.len;
    double *dx = out[0].data, *dw = out[1].data, *db = out[2].data;
    for (int64_t c = 0; c < C; c++)
        dw[c] = db[c] = 0;
    for (int64_t r = 0; r < N * G; r++) {
        const int64_t o = r * len;
        double rstd, sgh = 0, sghx = 0;
        const double mean = group_stats(x, o, len, d.eps, &rstd);
        for (int64_t k = 0; k < len; k++) {
            const int64_t c = (r % G) * (C / G) + k / S;
            const double gj = tb_tensor_get(g, o + k);
            const double xh = (tb_tensor_get(x, o + k) - mean) * rstd;
            sgh += gj * tb_tensor_get(w, c);
            sghx += gj * tb_tensor_get(w, c) * xh;
            dw[c] += gj * xh;
            db[c] += gj;
        }
        for (int64_t k = 0; k < len; k++) {
            const int64_t c = (r % G) * (C / G) + k / S;
            const double xh = (tb_tensor_get(x, o + k) - mean) * rstd;
            dx[o + k] = rstd * (tb_tensor_get(g, o + k) *
                                    tb_tensor_get(w, c) -
                                sgh / (double)len - xh * sghx / (double)len);
        }
    }
    return 0;
}
