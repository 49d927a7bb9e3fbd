/* The shape rules of the op table (the forward ops'; the backward ops'
 * are op_backward.c's) and tb_op_infer.  See op.h and op_rules.h. */
#include "op.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "model_shape.h"
#include "op_rules.h"
#include "optim_math.h"
#include "quant.h"

int tb_rule_broadcast(const tb_op *op, const tb_shape *in, const tb_params *p,
                      tb_shape *out, char *err, size_t len)
{
    (void)p;
    const tb_shape *a = &in[0], *b = &in[1];
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    out->ndim = nd;
    for (int i = 0; i < nd; i++) {
        int ia = a->ndim - nd + i, ib = b->ndim - nd + i;
        int64_t da = ia >= 0 ? a->dim[ia] : 1;
        int64_t db = ib >= 0 ? b->dim[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[96], sb[96];
            return tb_op_fail(err, len, TB_ESHAPE,
                              "%s: shapes %s and %s cannot broadcast (dim %d: "
                              "%lld vs %lld)",
                              op->name, tb_shape_format(a, sa, sizeof sa),
                              tb_shape_format(b, sb, sizeof sb), i,
                              (long long)da, (long long)db);
        }
        out->dim[i] = da == 1 ? db : da;
    }
    return 0;
}

int tb_rule_same(const tb_op *op, const tb_shape *in, const tb_params *p,
                 tb_shape *out, char *err, size_t len)
{
    (void)op, (void)p, (void)err, (void)len;
    *out = in[0];
    return 0;
}

/* sum/mean: param 0 axis (optional), param 1 keepdim. */
int tb_rule_reduce(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len)
{
    bool keep = tb_params_has(p, 1) && p->v[1] != 0;
    if (!tb_params_has(p, 0)) {
        out->ndim = keep ? in[0].ndim : 0;
        for (int i = 0; i < out->ndim; i++)
            out->dim[i] = 1;
        return 0;
    }
    int ax;
    if (tb_axis_norm((int64_t)p->v[0], in[0].ndim, &ax))
        return tb_op_fail(err, len, TB_EPARAM,
                          "%s: axis %lld is out of range for %d dims",
                          op->name, (long long)p->v[0], in[0].ndim);
    out->ndim = 0;
    for (int i = 0; i < in[0].ndim; i++) {
        if (i != ax)
            out->dim[out->ndim++] = in[0].dim[i];
        else if (keep)
            out->dim[out->ndim++] = 1;
    }
    return 0;
}

/* layer_norm / rms_norm: x [..., D]; every other input (weight, bias) a
 * vector of D; the output x's shape. */
int tb_rule_norm(const tb_op *op, const tb_shape *in, const tb_params *p,
                 tb_shape *out, char *err, size_t len)
{
    (void)p;
    const tb_shape *x = &in[0];
    if (x->ndim < 1)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: x needs at least 1 dim", op->name);
    const int64_t D = x->dim[x->ndim - 1];
    for (int i = 1; i < op->n_in; i++)
        if (in[i].ndim != 1 || in[i].dim[0] != D) {
            char s[96];
            tb_shape_format(&in[i], s, sizeof s);
            return tb_op_fail(err, len, TB_ESHAPE,
                              "%s: input %d must be [%lld] (x's last dim), "
                              "got %s", op->name, i, (long long)D, s);
        }
    *out = *x;
    return 0;
}

/* batch_norm and group_norm: x [N, C, ...] (at least 2-D), weight and
 * bias [C]; the output x's shape.
 * batch_norm: running [2, C] (row 0 the running mean, row 1 the running
 * variance), output 1 the running statistics [2, C]; training (param 0)
 * needs more than one value per channel, as PyTorch.
 * group_norm: num_groups (param 0) divides C. */
int tb_rule_nc_norm(const tb_op *op, const tb_shape *in, const tb_params *p,
                    tb_shape *out, char *err, size_t len)
{
    const tb_shape *x = &in[0];
    char s[96];
    if (x->ndim < 2)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: x must be [N, C, ...] (at least 2-D), got %s",
                          op->name, tb_shape_format(x, s, sizeof s));
    const int64_t C = x->dim[1];
    int64_t per = 1; /* one channel of one sample */
    for (int d = 2; d < x->ndim; d++)
        per *= x->dim[d];
    for (int i = 1; i < 3; i++)
        if (in[i].ndim != 1 || in[i].dim[0] != C)
            return tb_op_fail(err, len, TB_ESHAPE,
                              "%s: %s must be [%lld] (x's channels), got %s",
                              op->name, i == 1 ? "weight" : "bias",
                              (long long)C,
                              tb_shape_format(&in[i], s, sizeof s));
    const double p0 = tb_params_has(p, 0) ? p->v[0] : op->params[0].def;
    if (op->id == TB_OP_group_norm) {
        if (p0 < 1 || C % (int64_t)p0 != 0)
            return tb_op_fail(err, len, TB_EPARAM,
                              "%s: num_groups = %lld must divide the "
                              "channels C = %lld", op->name, (long long)p0,
                              (long long)C);
    } else {
        if (in[3].ndim != 2 || in[3].dim[0] != 2 || in[3].dim[1] != C)
            return tb_op_fail(err, len, TB_ESHAPE,
                              "%s: running must be [2, %lld] (mean and var "
                              "of x's channels), got %s", op->name,
                              (long long)C,
                              tb_shape_format(&in[3], s, sizeof s));
        if (p0 != 0 && x->dim[0] * per < 2)
            return tb_op_fail(err, len, TB_ESHAPE,
                              "%s: training needs more than 1 value per "
                              "channel (N x trailing dims = %lld)", op->name,
                              (long long)(x->dim[0] * per));
        out[1] = in[3];
    }
    out[0] = *x;
    return 0;
}

/* sdpa: q [B, H, Sq, D], k [B, H, Sk, D], v [B, H, Sk, Dv] (4-D, no
 * broadcasting: every batch and head its own); out [B, H, Sq, Dv].  Sk
 * is at least 1 (tb_op_infer: every dim positive), so no query row is
 * ever fully masked (key 0 is allowed for every i). */
int tb_rule_sdpa(const tb_op *op, const tb_shape *in, const tb_params *p,
                 tb_shape *out, char *err, size_t len)
{
    (void)p;
    static const char *const name[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; i++)
        if (in[i].ndim != 4) {
            char s[96];
            tb_shape_format(&in[i], s, sizeof s);
            return tb_op_fail(err, len, TB_ESHAPE,
                              "%s: %s must be 4-D [B, H, S, D], got %s",
                              op->name, name[i], s);
        }
    for (int i = 1; i < 3; i++)
        for (int d = 0; d < 2; d++)
            if (in[i].dim[d] != in[0].dim[d])
                return tb_op_fail(err, len, TB_ESHAPE,
                                  "%s: %s's %s %lld differs from q's %lld",
                                  op->name, name[i], d ? "H" : "B",
                                  (long long)in[i].dim[d],
                                  (long long)in[0].dim[d]);
    if (in[1].dim[3] != in[0].dim[3])
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: k's D %lld differs from q's %lld", op->name,
                          (long long)in[1].dim[3], (long long)in[0].dim[3]);
    if (in[2].dim[2] != in[1].dim[2])
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: v's Sk %lld differs from k's %lld", op->name,
                          (long long)in[2].dim[2], (long long)in[1].dim[2]);
    *out = in[0];
    out->dim[3] = in[2].dim[3];
    return 0;
}

/* causal_mask: x [..., M, N], at least 2-D; out x's shape. */
int tb_rule_causal_mask(const tb_op *op, const tb_shape *in,
                        const tb_params *p, tb_shape *out, char *err,
                        size_t len)
{
    (void)p;
    if (in[0].ndim < 2)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: x needs at least 2 dims [..., M, N], got %d",
                          op->name, in[0].ndim);
    *out = in[0];
    return 0;
}

/* embedding: weight [V, D], idx [...] (indices as values) -> [..., D]. */
int tb_rule_embedding(const tb_op *op, const tb_shape *in,
                      const tb_params *p, tb_shape *out, char *err,
                      size_t len)
{
    (void)p;
    char sw[96], si[96];
    if (in[0].ndim != 2 || in[1].ndim >= TB_MAX_DIMS)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: expects weight [V, D] and indices of at most "
                          "%d dims; got %s and %s", op->name, TB_MAX_DIMS - 1,
                          tb_shape_format(&in[0], sw, sizeof sw),
                          tb_shape_format(&in[1], si, sizeof si));
    *out = in[1];
    out->dim[out->ndim++] = in[0].dim[1];
    return 0;
}

/* matmul's rule on 2-D inputs, K within the int32 sums' limit. */
int tb_rule_matmul_int8(const tb_op *op, const tb_shape *in,
                        const tb_params *p, tb_shape *out, char *err,
                        size_t len)
{
    if (in[0].ndim != 2 || in[1].ndim != 2)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: inputs must have 2 dims (no batches), got "
                          "%d and %d", op->name, in[0].ndim, in[1].ndim);
    if (in[0].dim[1] > TB_QUANT_MAX_K)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: K = %lld is above %d, where the int32 sums "
                          "could overflow", op->name,
                          (long long)in[0].dim[1], TB_QUANT_MAX_K);
    return tb_rule_matmul(op, in, p, out, err, len);
}

int tb_rule_matmul(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len)
{
    (void)p;
    const tb_shape *a = &in[0], *b = &in[1];
    bool batch_ok = a->ndim >= 2 && b->ndim >= 2 && a->ndim == b->ndim;
    for (int i = 0; batch_ok && i < a->ndim - 2; i++)
        batch_ok = a->dim[i] == b->dim[i];
    if (batch_ok && a->dim[a->ndim - 1] == b->dim[b->ndim - 2]) {
        *out = *a;
        out->dim[out->ndim - 1] = b->dim[b->ndim - 1];
        return 0;
    }
    /* the shapes formatted on failure only: tapes infer every step's
     * shapes (snprintf here was ~3% of tfm_infer_step at 1x16x32) */
    char sa[96], sb[96];
    tb_shape_format(a, sa, sizeof sa);
    tb_shape_format(b, sb, sizeof sb);
    if (a->ndim < 2 || b->ndim < 2)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: inputs need at least 2 dims, got %s and %s",
                          op->name, sa, sb);
    if (!batch_ok)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: batch dims differ (%s vs %s)", op->name, sa,
                          sb);
    return tb_op_fail(err, len, TB_ESHAPE,
                      "%s: inner dims differ (%s @ %s: %lld vs %lld)",
                      op->name, sa, sb, (long long)a->dim[a->ndim - 1],
                      (long long)b->dim[b->ndim - 2]);
}

/* transpose: params 0 dim0, 1 dim1. */
int tb_rule_transpose(const tb_op *op, const tb_shape *in, const tb_params *p,
                      tb_shape *out, char *err, size_t len)
{
    int a, b;
    if (in[0].ndim < 2)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: input needs at least 2 dims", op->name);
    if (tb_axis_norm((int64_t)p->v[0], in[0].ndim, &a) ||
        tb_axis_norm((int64_t)p->v[1], in[0].ndim, &b))
        return tb_op_fail(err, len, TB_EPARAM,
                          "%s: dims %lld,%lld are out of range for %d dims",
                          op->name, (long long)p->v[0], (long long)p->v[1],
                          in[0].ndim);
    if (a == b)
        return tb_op_fail(err, len, TB_EPARAM, "%s: dim0 and dim1 are both %d",
                          op->name, a);
    *out = in[0];
    out->dim[a] = in[0].dim[b];
    out->dim[b] = in[0].dim[a];
    return 0;
}

/* log_softmax: param 0 axis. */
int tb_rule_axis_same(const tb_op *op, const tb_shape *in, const tb_params *p,
                      tb_shape *out, char *err, size_t len)
{
    int ax;
    if (tb_axis_norm((int64_t)p->v[0], in[0].ndim, &ax))
        return tb_op_fail(err, len, TB_EPARAM,
                          "%s: axis %lld is out of range for %d dims",
                          op->name, (long long)p->v[0], in[0].ndim);
    *out = in[0];
    return 0;
}

/* max/min/argmax/var: tb_rule_reduce, plus argmax's index range (indices
 * are stored as values of the case dtype, exact up to 2^24 in f32) and
 * var's divisor n - correction (param 2), which must be positive. */
int tb_rule_reduce_ext(const tb_op *op, const tb_shape *in, const tb_params *p,
                       tb_shape *out, char *err, size_t len)
{
    int rc = tb_rule_reduce(op, in, p, out, err, len);
    if (rc)
        return rc;
    int64_t n = tb_shape_numel(&in[0]);
    int ax = -1;
    if (tb_params_has(p, 0) &&
        tb_axis_norm((int64_t)p->v[0], in[0].ndim, &ax) == 0)
        n = in[0].dim[ax];
    if (op->id == TB_OP_argmax && n > (INT64_C(1) << 24))
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: %lld elements to search %s; at most 2^24 "
                          "(indices are stored as f32/f64 values, exact up to "
                          "2^24)",
                          op->name, (long long)n,
                          ax < 0 ? "in all" : "along the axis");
    if (op->id == TB_OP_var) {
        double corr = tb_params_has(p, 2) ? p->v[2] : op->params[2].def;
        if ((double)n <= corr)
            return tb_op_fail(
                err, len, TB_EPARAM,
                "%s: correction %g needs at least %g elements to "
                "reduce, got %lld (%s)",
                op->name, corr, corr + 1, (long long)n,
                ax < 0 ? "all elements" : "along the axis");
    }
    return 0;
}

/* permute: params p0..p7, see tb_permute_dims. */
int tb_rule_permute(const tb_op *op, const tb_shape *in, const tb_params *p,
                    tb_shape *out, char *err, size_t len)
{
    (void)op;
    int perm[TB_MAX_DIMS];
    int rc = tb_permute_dims(p, in[0].ndim, perm, err, len);
    if (rc)
        return rc;
    out->ndim = in[0].ndim;
    for (int i = 0; i < in[0].ndim; i++)
        out->dim[i] = in[0].dim[perm[i]];
    return 0;
}

/* linear: x [M, K], W [K, N], b [N] -> [M, N]. */
int tb_rule_linear(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len)
{
    (void)p;
    /* Shapes are formatted only for a message: kernels re-run this rule
     * on every call. */
    char sx[96], sw[96], sb[96];
#define FMT_LINEAR                                                        \
    tb_shape_format(&in[0], sx, sizeof sx),                               \
        tb_shape_format(&in[1], sw, sizeof sw),                           \
        tb_shape_format(&in[2], sb, sizeof sb)
    if (in[0].ndim != 2 || in[1].ndim != 2 || in[2].ndim != 1)
        return FMT_LINEAR,
               tb_op_fail(
                   err, len, TB_ESHAPE,
                   "%s: expects x [M, K], W [K, N], b [N]; got %s, %s, %s",
                   op->name, sx, sw, sb);
    if (in[1].dim[0] != in[0].dim[1])
        return FMT_LINEAR,
               tb_op_fail(err, len, TB_ESHAPE,
                          "%s: inner dims differ (x %s @ W %s: %lld vs %lld)",
                          op->name, sx, sw, (long long)in[0].dim[1],
                          (long long)in[1].dim[0]);
    if (in[2].dim[0] != in[1].dim[1])
        return FMT_LINEAR,
               tb_op_fail(
                   err, len, TB_ESHAPE,
                   "%s: bias %s does not match W %s (needs %lld elements)",
                   op->name, sb, sw, (long long)in[1].dim[1]);
#undef FMT_LINEAR
    out->ndim = 2;
    out->dim[0] = in[0].dim[0];
    out->dim[1] = in[1].dim[1];
    return 0;
}

/* conv2d, conv2d_nobias: x [N, C, H, W], w [O, C, KH, KW] (+ b [O]);
 * params 0 stride, 1 padding, 2 dilation (same in both dims). */
int tb_rule_conv2d(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len)
{
    const tb_shape *x = &in[0], *w = &in[1];
    char sx[96], sw[96], sb[96];
#define FMT_CONV                                                          \
    tb_shape_format(x, sx, sizeof sx), tb_shape_format(w, sw, sizeof sw)
    if (x->ndim != 4 || w->ndim != 4)
        return FMT_CONV,
               tb_op_fail(
                   err, len, TB_ESHAPE,
                   "%s: expects input [N, C, H, W] and weight [O, C, KH, "
                   "KW]; got %s and %s",
                   op->name, sx, sw);
    if (w->dim[1] != x->dim[1])
        return FMT_CONV,
               tb_op_fail(
                   err, len, TB_ESHAPE,
                   "%s: weight %s has %lld input channels, input %s has "
                   "%lld",
                   op->name, sw, (long long)w->dim[1], sx,
                   (long long)x->dim[1]);
    if (op->n_in == 3 && (in[2].ndim != 1 || in[2].dim[0] != w->dim[0]))
        return FMT_CONV,
               tb_op_fail(
                   err, len, TB_ESHAPE,
                   "%s: bias %s does not match weight %s (needs [%lld])",
                   op->name, tb_shape_format(&in[2], sb, sizeof sb), sw,
                   (long long)w->dim[0]);
    int64_t st = (int64_t)p->v[0], pad = (int64_t)p->v[1];
    int64_t dil = (int64_t)p->v[2];
    int64_t oh = tb_window_out(x->dim[2], w->dim[2], st, pad, dil);
    int64_t ow = tb_window_out(x->dim[3], w->dim[3], st, pad, dil);
    if (oh < 1 || ow < 1)
        return tb_op_fail(
            err, len, TB_ESHAPE,
            "%s: empty output: input %lldx%lld with kernel "
            "%lldx%lld, padding %lld, dilation %lld leaves no "
            "window (needs H, W + 2*padding >= dilation*(k-1)+1)",
            op->name, (long long)x->dim[2], (long long)x->dim[3],
            (long long)w->dim[2], (long long)w->dim[3], (long long)pad,
            (long long)dil);
    out->ndim = 4;
    out->dim[0] = x->dim[0];
    out->dim[1] = w->dim[0];
    out->dim[2] = oh;
    out->dim[3] = ow;
    return 0;
#undef FMT_CONV
}

/* Pool stride: param 1 when given, else the kernel size (param 0). */
static int64_t pool_stride(const tb_params *p)
{
    return (int64_t)(tb_params_has(p, 1) ? p->v[1] : p->v[0]);
}

/* max_pool2d, avg_pool2d: x [N, C, H, W]; params 0 kernel, 1 stride
 * (optional: = kernel), 2 padding (at most kernel / 2, as PyTorch). */
int tb_rule_pool2d(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len)
{
    const tb_shape *x = &in[0];
    char sx[96];
    if (x->ndim != 4)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: expects input [N, C, H, W], got %s", op->name,
                          tb_shape_format(x, sx, sizeof sx));
    int64_t k = (int64_t)p->v[0], st = pool_stride(p);
    int64_t pad = (int64_t)p->v[2];
    if (2 * pad > k)
        return tb_op_fail(err, len, TB_EPARAM,
                          "%s: padding %lld is more than half the kernel %lld",
                          op->name, (long long)pad, (long long)k);
    int64_t oh = tb_window_out(x->dim[2], k, st, pad, 1);
    int64_t ow = tb_window_out(x->dim[3], k, st, pad, 1);
    if (oh < 1 || ow < 1)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: empty output: input %lldx%lld with kernel %lld "
                          "and padding %lld leaves no window (needs H, W + "
                          "2*padding >= kernel)",
                          op->name, (long long)x->dim[2], (long long)x->dim[3],
                          (long long)k, (long long)pad);
    out->ndim = 4;
    out->dim[0] = x->dim[0];
    out->dim[1] = x->dim[1];
    out->dim[2] = oh;
    out->dim[3] = ow;
    return 0;
}

/* Creation ops: the one shape given is the output's; arange is 1-D. */
int tb_rule_create(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len)
{
    (void)p;
    char s[96];
    if (op->id == TB_OP_arange && in[0].ndim != 1)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: the shape must be 1-D [n], got %s", op->name,
                          tb_shape_format(&in[0], s, sizeof s));
    *out = in[0];
    return 0;
}

/* In-place binary ops: NumPy broadcasting, and the result must have the
 * first input's shape (it is written there). */
int tb_rule_inplace(const tb_op *op, const tb_shape *in, const tb_params *p,
                    tb_shape *out, char *err, size_t len)
{
    int rc = op->n_in == 1 ? tb_rule_same(op, in, p, out, err, len)
                           : tb_rule_broadcast(op, in, p, out, err, len);
    if (rc)
        return rc;
    char sa[96], so[96];
    if (!tb_shape_equal(out, &in[0]))
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: writes into its first input %s, but the result "
                          "broadcasts to %s",
                          op->name, tb_shape_format(&in[0], sa, sizeof sa),
                          tb_shape_format(out, so, sizeof so));
    return 0;
}

/* Optimizer steps: parameters, gradient and every state tensor have one
 * shape, which every output (the updated parameters and state) has. */
int tb_rule_optim(const tb_op *op, const tb_shape *in, const tb_params *p,
                  tb_shape *out, char *err, size_t len)
{
    (void)p;
    static const char *const names[] = {"param", "grad", "state 1", "state 2"};
    for (int i = 1; i < op->n_in; i++) {
        char sa[96], sb[96];
        if (!tb_shape_equal(&in[i], &in[0]))
            return tb_op_fail(err, len, TB_ESHAPE,
                              "%s: %s [%s] differs from param [%s]", op->name,
                              names[i], tb_shape_format(&in[i], sb, sizeof sb),
                              tb_shape_format(&in[0], sa, sizeof sa));
    }
    for (int i = 0; i < op->n_out; i++)
        out[i] = in[0];
    return 0;
}

/* lbfgs: p and g of one shape (n elements), S and Y both [m, n] with
 * 1 <= m <= TB_LBFGS_MAX_HIST; outputs p and the direction, p's shape. */
int tb_rule_lbfgs(const tb_op *op, const tb_shape *in, const tb_params *p,
                  tb_shape *out, char *err, size_t len)
{
    (void)p;
    char sa[96], sb[96];
    if (!tb_shape_equal(&in[1], &in[0]))
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: grad [%s] differs from param [%s]", op->name,
                          tb_shape_format(&in[1], sb, sizeof sb),
                          tb_shape_format(&in[0], sa, sizeof sa));
    int64_t n = 1;
    for (int d = 0; d < in[0].ndim; d++)
        n *= in[0].dim[d];
    if (in[2].ndim != 2 || in[2].dim[1] != n)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: S [%s] is not [m x %lld] (m pairs of param's "
                          "%lld elements)", op->name,
                          tb_shape_format(&in[2], sa, sizeof sa),
                          (long long)n, (long long)n);
    if (in[2].dim[0] > TB_LBFGS_MAX_HIST)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: S has %lld pairs, at most %d", op->name,
                          (long long)in[2].dim[0], TB_LBFGS_MAX_HIST);
    if (!tb_shape_equal(&in[3], &in[2]))
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: Y [%s] differs from S [%s]", op->name,
                          tb_shape_format(&in[3], sb, sizeof sb),
                          tb_shape_format(&in[2], sa, sizeof sa));
    out[0] = out[1] = in[0];
    return 0;
}

/* svd, qr: a 2-D [m, n] matrix, k = min(m, n); svd -> U [m, k], S [k],
 * Vt [k, n] (thin); qr -> Q [m, k], R [k, n] (reduced).  eigh: a square
 * [n, n] matrix -> eigenvalues [n] (ascending), eigenvectors [n, n]
 * (columns). */
int tb_rule_linalg(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len)
{
    (void)p;
    char s[96];
    if (in[0].ndim != 2)
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: expects a 2-D matrix, got %s", op->name,
                          tb_shape_format(&in[0], s, sizeof s));
    int64_t m = in[0].dim[0], n = in[0].dim[1], k = m < n ? m : n;
    if (m > (1 << 16) || n > (1 << 16))
        return tb_op_fail(err, len, TB_ESHAPE,
                          "%s: %s is too large (at most 65536 per dim)",
                          op->name, tb_shape_format(&in[0], s, sizeof s));
    switch (op->id) {
    case TB_OP_svd:
        out[0] = (tb_shape){2, {m, k}};
        out[1] = (tb_shape){1, {k}};
        out[2] = (tb_shape){2, {k, n}};
        return 0;
    case TB_OP_qr:
        out[0] = (tb_shape){2, {m, k}};
        out[1] = (tb_shape){2, {k, n}};
        return 0;
    default:
        if (m != n)
            return tb_op_fail(err, len, TB_ESHAPE,
                              "%s: needs a square matrix, got %s", op->name,
                              tb_shape_format(&in[0], s, sizeof s));
        out[0] = (tb_shape){1, {n}};
        out[1] = (tb_shape){2, {n, n}};
        return 0;
    }
}

int tb_op_infer(const tb_op *op, const tb_shape *in, int n_in,
                const tb_params *p, tb_shape *out, char *err, size_t errlen)
{
    if (op->n_in == 0 && n_in != 1)
        return tb_op_fail(
            err, errlen, TB_ESHAPE,
            "%s: creates a tensor: give one shape (the output's), "
            "got %d",
            op->name, n_in);
    if (op->n_in && n_in != op->n_in)
        return tb_op_fail(err, errlen, TB_ESHAPE,
                          "%s: expects %d input%s, got %d", op->name, op->n_in,
                          op->n_in == 1 ? "" : "s", n_in);
    for (int i = 0; i < n_in; i++) {
        if (in[i].ndim < 1 || in[i].ndim > TB_MAX_DIMS)
            return tb_op_fail(err, errlen, TB_ESHAPE,
                              "%s: %s %d has %d dims (allowed 1..%d)",
                              op->name, op->n_in ? "input" : "shape", i,
                              in[i].ndim, TB_MAX_DIMS);
        int64_t numel = 1;
        for (int d = 0; d < in[i].ndim; d++) {
            if (in[i].dim[d] <= 0)
                return tb_op_fail(err, errlen, TB_ESHAPE,
                                  "%s: input %d dim %d is %lld (must be > 0)",
                                  op->name, i, d, (long long)in[i].dim[d]);
            /* keep element and byte counts far from int64 overflow:
             * numel * dim > 2^53, the same test as numel > 2^53 / dim
             * for positive integers, by a multiply (a 64-bit division a
             * dim, ~15 cycles of latency each, was a third of this
             * function's time in the checks of a 4-dim call such as
             * nll_loss_backward 1,1x1,1) */
            int64_t next = 0;
            if (__builtin_mul_overflow(numel, in[i].dim[d], &next) ||
                next > (INT64_C(1) << 53))
                return tb_op_fail(err, errlen, TB_ESHAPE,
                                  "%s: input %d has more than 2^53 elements",
                                  op->name, i);
            numel = next;
        }
    }
    tb_params full = p ? *p : (tb_params){0};
    tb_params_defaults(op, &full);
    return op->shape(op, in, &full, out, err, errlen);
}

/* Workloads (models.h): the batch x in, the loss [1] (train) or the
 * model's output (infer: the MLP's and CNN's log-probabilities [B, 10],
 * the transformer block's y [B, S, D]) out. */
int tb_rule_workload(const tb_op *op, const tb_shape *in, const tb_params *p,
                     tb_shape *out, char *err, size_t len)
{
    tb_model_kind kind = tb_model_of_op(op);
    char why[192];
    int rc = tb_model_check_shape(kind, &in[0], tb_model_op_heads(op, p), why,
                                  sizeof why);
    if (rc)
        return tb_op_fail(err, len, rc, "%s: %s", op->name, why);
    if (tb_model_op_trains(op))
        out[0] = (tb_shape){1, {1}};
    else if (kind == TB_MODEL_TFM)
        out[0] = in[0];
    else
        out[0] = (tb_shape){2, {in[0].dim[0], 10}};
    return 0;
}
