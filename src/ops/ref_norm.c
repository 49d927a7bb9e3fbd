/* layer_norm and rms_norm references and their gradients: each row of
 * x's last dim in double, two passes (mean, then the squared
 * deviations), eps as the case dtype holds it (a constant: ref.c's
 * convention). */
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
