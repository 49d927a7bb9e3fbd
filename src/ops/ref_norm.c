/* layer_norm and rms_norm references: each row of x's last dim in double,
 * two passes (mean, then the squared deviations), eps as the case dtype
 * holds it (a constant: ref.c's convention). */
#include <math.h>

#include "../base/error.h"
#include "ref.h"

static double norm_eps(const tb_op *op, const tb_params *p, tb_dtype dt)
{
    double e = p && tb_params_has(p, 0) ? p->v[0] : op->params[0].def;
    return tb_dtype_round(dt, e);
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
        double mean = 0, ss = 0;
        if (!rms) {
            for (int64_t j = 0; j < D; j++)
                mean += tb_tensor_get(x, r * D + j);
            mean /= (double)D;
        }
        for (int64_t j = 0; j < D; j++) {
            double d = tb_tensor_get(x, r * D + j) - mean;
            ss += d * d;
        }
        const double inv = 1 / sqrt(ss / (double)D + eps);
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
