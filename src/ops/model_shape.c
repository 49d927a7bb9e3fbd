/* The models' geometry: their input shape rule and FLOP count, which
 * the op table's workload rows need (op.c) without the models
 * themselves (models.c builds them on the tape).  See model_shape.h. */
#include "model_shape.h"

#include <stdio.h>

#include "../base/error.h"
#include "op.h"

/* CNN sizes from the input: conv 3x3 (valid), pool 2 (floor). */
void tb_model_cnn_dims(const tb_shape *x, int64_t *h1, int64_t *w1,
                       int64_t *h2, int64_t *w2, int64_t *flat)
{
    *h1 = x->dim[2] - 2, *w1 = x->dim[3] - 2;       /* conv1 */
    *h2 = *h1 / 2 - 2, *w2 = *w1 / 2 - 2;           /* pool, conv2 */
    *flat = CNN_C2 * (*h2 / 2) * (*w2 / 2);         /* pool, flatten */
}

/* The transformer block: x [B, S, D], D = heads * Dh. */
static int check_tfm(const tb_shape *x, int heads, const char *sx,
                     char *err, size_t len)
{
    if (x->ndim != 3 || x->dim[0] < 1 || x->dim[1] < 1 || x->dim[2] < 1) {
        if (err)
            snprintf(err, len, "expects a batch [batch, seq, d_model], got "
                     "%s", sx);
        return TB_ESHAPE;
    }
    if (heads < 1 || x->dim[2] % heads) {
        if (err)
            snprintf(err, len, "d_model %lld (of %s) is not a multiple of "
                     "heads %d", (long long)x->dim[2], sx, heads);
        return TB_EPARAM;
    }
    return 0;
}

int tb_model_check_shape(tb_model_kind kind, const tb_shape *x, int heads,
                         char *err, size_t len)
{
    char sx[96];
    tb_shape_format(x, sx, sizeof sx);
    if (kind == TB_MODEL_TFM)
        return check_tfm(x, heads, sx, err, len);
    if (kind == TB_MODEL_MLP) {
        if (x->ndim != 2) {
            if (err)
                snprintf(err, len, "expects a batch [B, K] (MLP K-256-128-"
                         "10), got %s", sx);
            return TB_ESHAPE;
        }
        return 0;
    }
    if (x->ndim != 4 || x->dim[1] != 1 || x->dim[2] < 10 || x->dim[3] < 10) {
        if (err)
            snprintf(err, len, "expects a batch [B, 1, H, W] with H, W >= "
                     "10 (e.g. 28x28), got %s", sx);
        return TB_ESHAPE;
    }
    return 0;
}

double tb_model_forward_flops(tb_model_kind kind, const tb_shape *x)
{
    double B = (double)x->dim[0];
    if (kind == TB_MODEL_TFM) {
        /* per token: q, k, v and the output projection 4 D^2, the MLP
         * 2 * MULT D^2 multiply-adds; attention: q.k and p.v per
         * unmasked pair, S (S + 1) / 2 of them per sequence */
        double S = (double)x->dim[1], D = (double)x->dim[2];
        return 2 * B * S * (4 + 2 * TFM_MLP_MULT) * D * D +
               2 * 2 * B * D * S * (S + 1) / 2;
    }
    if (kind == TB_MODEL_MLP)
        return 2 * B *
               ((double)x->dim[1] * MLP_H1 + MLP_H1 * MLP_H2 +
                MLP_H2 * N_CLASSES);
    int64_t h1, w1, h2, w2, flat;
    tb_model_cnn_dims(x, &h1, &w1, &h2, &w2, &flat);
    return 2 * B *
           ((double)(CNN_C1 * h1 * w1 * 9) +
            (double)(CNN_C2 * h2 * w2 * CNN_C1 * 9) +
            (double)flat * N_CLASSES);
}


tb_model_kind tb_model_of_op(const tb_op *op)
{
    switch (op->id) {
    case TB_OP_cnn_train_step:
    case TB_OP_cnn_infer_step: return TB_MODEL_CNN;
    case TB_OP_tfm_train_step:
    case TB_OP_tfm_infer_step: return TB_MODEL_TFM;
    default: return TB_MODEL_MLP;
    }
}

bool tb_model_op_trains(const tb_op *op)
{
    return op->id == TB_OP_mlp_train_step || op->id == TB_OP_cnn_train_step ||
           op->id == TB_OP_tfm_train_step;
}

int tb_model_op_heads(const tb_op *op, const tb_params *p)
{
    int i = tb_op_param_index(op, "heads");
    if (i < 0)
        return 0;
    return (int)(p && tb_params_has(p, i) ? p->v[i] : op->params[i].def);
}
