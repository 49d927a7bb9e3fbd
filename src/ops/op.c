/* The op table and its shape rules and cost models.  See op.h. */
#include "op.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "calib.h"
#include "models.h"
#include "op_backward.h"
#include "ref.h"

/* ---- helpers ----------------------------------------------------------- */

static int fail(char *err, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t len, int code, const char *fmt, ...)
{
    if (err && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return code;
}

int tb_axis_norm(int64_t axis, int ndim, int *ax)
{
    if (axis < -ndim || axis >= ndim)
        return TB_EPARAM;
    *ax = (int)(axis < 0 ? axis + ndim : axis);
    return 0;
}

int tb_permute_dims(const tb_params *p, int ndim, int perm[TB_MAX_DIMS],
                    char *err, size_t errlen)
{
    if (ndim < 1 || ndim > TB_MAX_DIMS)
        return fail(err, errlen, TB_EPARAM, "permute: %d dims (allowed 1..%d)",
                    ndim, TB_MAX_DIMS);
    int nset = 0;
    for (int i = 0; i < TB_MAX_DIMS; i++)
        nset += tb_params_has(p, i);
    if (nset == 0) {
        for (int i = 0; i < ndim; i++)
            perm[i] = ndim - 1 - i;
        return 0;
    }
    bool seen[TB_MAX_DIMS] = {false};
    for (int i = 0; i < TB_MAX_DIMS; i++) {
        if (i >= ndim) {
            if (tb_params_has(p, i))
                return fail(err, errlen, TB_EPARAM,
                            "permute: p%d is set but the input has only %d "
                            "dims (give p0..p%d)",
                            i, ndim, ndim - 1);
            continue;
        }
        if (!tb_params_has(p, i))
            return fail(err, errlen, TB_EPARAM,
                        "permute: p%d is missing (give all of p0..p%d, or "
                        "none to reverse the dims)",
                        i, ndim - 1);
        int ax;
        if (!(p->v[i] >= -ndim && p->v[i] < ndim) ||
            p->v[i] != floor(p->v[i]) ||
            tb_axis_norm((int64_t)p->v[i], ndim, &ax))
            return fail(err, errlen, TB_EPARAM,
                        "permute: p%d = %g is not a dim of a %d-dim input",
                        i, p->v[i], ndim);
        if (seen[ax])
            return fail(err, errlen, TB_EPARAM,
                        "permute: dim %d is named twice (p0..p%d must be a "
                        "permutation)",
                        ax, ndim - 1);
        seen[ax] = true;
        perm[i] = ax;
    }
    return 0;
}

int64_t tb_window_out(int64_t in, int64_t k, int64_t stride, int64_t pad,
                      int64_t dil)
{
    if (in < 1 || k < 1 || stride < 1 || pad < 0 || dil < 1)
        return 0;
    int64_t span = in + 2 * pad; /* padded length, >= 1 */
    /* The window covers dil*(k-1)+1 elements; compare without overflow. */
    if (k - 1 > (span - 1) / dil)
        return 0;
    return (span - (dil * (k - 1) + 1)) / stride + 1;
}

bool tb_params_has(const tb_params *p, int idx)
{
    return p && idx >= 0 && idx < TB_MAX_PARAMS && (p->set >> idx) & 1u;
}

int tb_op_param_index(const tb_op *op, const char *name)
{
    for (int i = 0; i < op->n_params; i++)
        if (strcmp(op->params[i].name, name) == 0)
            return i;
    return -1;
}

int tb_params_set(const tb_op *op, tb_params *p, const char *name, double v,
                  char *err, size_t errlen)
{
    int i = tb_op_param_index(op, name);
    if (i < 0) {
        char names[256] = "";
        for (int k = 0; k < op->n_params; k++) {
            strncat(names, k ? ", " : "", sizeof names - strlen(names) - 1);
            strncat(names, op->params[k].name,
                    sizeof names - strlen(names) - 1);
        }
        return fail(err, errlen, TB_ENOTFOUND,
                    "op '%s' has no parameter '%s' (parameters: %s)",
                    op->name, name, op->n_params ? names : "none");
    }
    const tb_param_spec *s = &op->params[i];
    if (!isfinite(v))
        return fail(err, errlen, TB_EPARAM, "%s: value must be finite",
                    name);
    if (s->kind != TB_PARAM_FLOAT && v != floor(v))
        return fail(err, errlen, TB_EPARAM, "%s: expected an integer, got %g",
                    name, v);
    if (s->kind == TB_PARAM_BOOL && v != 0 && v != 1)
        return fail(err, errlen, TB_EPARAM, "%s: expected true or false",
                    name);
    if (v < s->min || v > s->max)
        return fail(err, errlen, TB_EPARAM, "%s: %g is out of range [%g, %g]",
                    name, v, s->min, s->max);
    p->v[i] = v;
    p->set |= 1u << i;
    return 0;
}

void tb_params_defaults(const tb_op *op, tb_params *p)
{
    for (int i = 0; i < op->n_params; i++) {
        if (!tb_params_has(p, i) && !op->params[i].optional) {
            p->v[i] = op->params[i].def;
            p->set |= 1u << i;
        }
    }
}

char *tb_params_format(const tb_op *op, const tb_params *p, char *buf,
                       size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < op->n_params && used < len; i++) {
        if (!tb_params_has(p, i))
            continue;
        int w = snprintf(buf + used, len - used, "%s%s=%.10g",
                         used ? "," : "", op->params[i].name, p->v[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

/* ---- shape rules --------------------------------------------------------- */

static int shape_broadcast(const tb_op *op, const tb_shape *in,
                           const tb_params *p, tb_shape *out, char *err,
                           size_t len)
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
            return fail(err, len, TB_ESHAPE,
                        "%s: shapes %s and %s cannot broadcast (dim %d: "
                        "%lld vs %lld)",
                        op->name, tb_shape_format(a, sa, sizeof sa),
                        tb_shape_format(b, sb, sizeof sb), i, (long long)da,
                        (long long)db);
        }
        out->dim[i] = da == 1 ? db : da;
    }
    return 0;
}

static int shape_same(const tb_op *op, const tb_shape *in, const tb_params *p,
                      tb_shape *out, char *err, size_t len)
{
    (void)op, (void)p, (void)err, (void)len;
    *out = in[0];
    return 0;
}

/* sum/mean: param 0 axis (optional), param 1 keepdim. */
static int shape_reduce(const tb_op *op, const tb_shape *in,
                        const tb_params *p, tb_shape *out, char *err,
                        size_t len)
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
        return fail(err, len, TB_EPARAM,
                    "%s: axis %lld is out of range for %d dims", op->name,
                    (long long)p->v[0], in[0].ndim);
    out->ndim = 0;
    for (int i = 0; i < in[0].ndim; i++) {
        if (i != ax)
            out->dim[out->ndim++] = in[0].dim[i];
        else if (keep)
            out->dim[out->ndim++] = 1;
    }
    return 0;
}

static int shape_matmul(const tb_op *op, const tb_shape *in,
                        const tb_params *p, tb_shape *out, char *err,
                        size_t len)
{
    (void)p;
    const tb_shape *a = &in[0], *b = &in[1];
    char sa[96], sb[96];
    tb_shape_format(a, sa, sizeof sa);
    tb_shape_format(b, sb, sizeof sb);
    if (a->ndim < 2 || b->ndim < 2)
        return fail(err, len, TB_ESHAPE,
                    "%s: inputs need at least 2 dims, got %s and %s",
                    op->name, sa, sb);
    if (a->ndim != b->ndim)
        return fail(err, len, TB_ESHAPE,
                    "%s: batch dims differ (%s vs %s)", op->name, sa, sb);
    for (int i = 0; i < a->ndim - 2; i++)
        if (a->dim[i] != b->dim[i])
            return fail(err, len, TB_ESHAPE,
                        "%s: batch dims differ (%s vs %s)", op->name, sa,
                        sb);
    if (a->dim[a->ndim - 1] != b->dim[b->ndim - 2])
        return fail(err, len, TB_ESHAPE,
                    "%s: inner dims differ (%s @ %s: %lld vs %lld)",
                    op->name, sa, sb, (long long)a->dim[a->ndim - 1],
                    (long long)b->dim[b->ndim - 2]);
    *out = *a;
    out->dim[out->ndim - 1] = b->dim[b->ndim - 1];
    return 0;
}

/* transpose: params 0 dim0, 1 dim1. */
static int shape_transpose(const tb_op *op, const tb_shape *in,
                           const tb_params *p, tb_shape *out, char *err,
                           size_t len)
{
    int a, b;
    if (in[0].ndim < 2)
        return fail(err, len, TB_ESHAPE, "%s: input needs at least 2 dims",
                    op->name);
    if (tb_axis_norm((int64_t)p->v[0], in[0].ndim, &a) ||
        tb_axis_norm((int64_t)p->v[1], in[0].ndim, &b))
        return fail(err, len, TB_EPARAM,
                    "%s: dims %lld,%lld are out of range for %d dims",
                    op->name, (long long)p->v[0], (long long)p->v[1],
                    in[0].ndim);
    if (a == b)
        return fail(err, len, TB_EPARAM, "%s: dim0 and dim1 are both %d",
                    op->name, a);
    *out = in[0];
    out->dim[a] = in[0].dim[b];
    out->dim[b] = in[0].dim[a];
    return 0;
}

/* log_softmax: param 0 axis. */
static int shape_axis_same(const tb_op *op, const tb_shape *in,
                           const tb_params *p, tb_shape *out, char *err,
                           size_t len)
{
    int ax;
    if (tb_axis_norm((int64_t)p->v[0], in[0].ndim, &ax))
        return fail(err, len, TB_EPARAM,
                    "%s: axis %lld is out of range for %d dims", op->name,
                    (long long)p->v[0], in[0].ndim);
    *out = in[0];
    return 0;
}

/* max/min/argmax/var: shape_reduce, plus argmax's index range (indices
 * are stored as values of the case dtype, exact up to 2^24 in f32) and
 * var's divisor n - correction (param 2), which must be positive. */
static int shape_reduce_ext(const tb_op *op, const tb_shape *in,
                            const tb_params *p, tb_shape *out, char *err,
                            size_t len)
{
    int rc = shape_reduce(op, in, p, out, err, len);
    if (rc)
        return rc;
    int64_t n = tb_shape_numel(&in[0]);
    int ax = -1;
    if (tb_params_has(p, 0) &&
        tb_axis_norm((int64_t)p->v[0], in[0].ndim, &ax) == 0)
        n = in[0].dim[ax];
    if (op->id == TB_OP_argmax && n > (INT64_C(1) << 24))
        return fail(err, len, TB_ESHAPE,
                    "%s: %lld elements to search %s; at most 2^24 "
                    "(indices are stored as f32/f64 values, exact up to "
                    "2^24)",
                    op->name, (long long)n, ax < 0 ? "in all" : "along the axis");
    if (op->id == TB_OP_var) {
        double corr = tb_params_has(p, 2) ? p->v[2] : op->params[2].def;
        if ((double)n <= corr)
            return fail(err, len, TB_EPARAM,
                        "%s: correction %g needs at least %g elements to "
                        "reduce, got %lld (%s)",
                        op->name, corr, corr + 1, (long long)n,
                        ax < 0 ? "all elements" : "along the axis");
    }
    return 0;
}

/* permute: params p0..p7, see tb_permute_dims. */
static int shape_permute(const tb_op *op, const tb_shape *in,
                         const tb_params *p, tb_shape *out, char *err,
                         size_t len)
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
static int shape_linear(const tb_op *op, const tb_shape *in,
                        const tb_params *p, tb_shape *out, char *err,
                        size_t len)
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
               fail(err, len, TB_ESHAPE,
                    "%s: expects x [M, K], W [K, N], b [N]; got %s, %s, %s",
                    op->name, sx, sw, sb);
    if (in[1].dim[0] != in[0].dim[1])
        return FMT_LINEAR,
               fail(err, len, TB_ESHAPE,
                    "%s: inner dims differ (x %s @ W %s: %lld vs %lld)",
                    op->name, sx, sw, (long long)in[0].dim[1],
                    (long long)in[1].dim[0]);
    if (in[2].dim[0] != in[1].dim[1])
        return FMT_LINEAR,
               fail(err, len, TB_ESHAPE,
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
static int shape_conv2d(const tb_op *op, const tb_shape *in,
                        const tb_params *p, tb_shape *out, char *err,
                        size_t len)
{
    const tb_shape *x = &in[0], *w = &in[1];
    char sx[96], sw[96], sb[96];
#define FMT_CONV                                                          \
    tb_shape_format(x, sx, sizeof sx), tb_shape_format(w, sw, sizeof sw)
    if (x->ndim != 4 || w->ndim != 4)
        return FMT_CONV, fail(err, len, TB_ESHAPE,
                    "%s: expects input [N, C, H, W] and weight [O, C, KH, "
                    "KW]; got %s and %s",
                    op->name, sx, sw);
    if (w->dim[1] != x->dim[1])
        return FMT_CONV, fail(err, len, TB_ESHAPE,
                    "%s: weight %s has %lld input channels, input %s has "
                    "%lld",
                    op->name, sw, (long long)w->dim[1], sx,
                    (long long)x->dim[1]);
    if (op->n_in == 3 && (in[2].ndim != 1 || in[2].dim[0] != w->dim[0]))
        return FMT_CONV, fail(err, len, TB_ESHAPE,
                    "%s: bias %s does not match weight %s (needs [%lld])",
                    op->name, tb_shape_format(&in[2], sb, sizeof sb), sw,
                    (long long)w->dim[0]);
    int64_t st = (int64_t)p->v[0], pad = (int64_t)p->v[1];
    int64_t dil = (int64_t)p->v[2];
    int64_t oh = tb_window_out(x->dim[2], w->dim[2], st, pad, dil);
    int64_t ow = tb_window_out(x->dim[3], w->dim[3], st, pad, dil);
    if (oh < 1 || ow < 1)
        return fail(err, len, TB_ESHAPE,
                    "%s: empty output: input %lldx%lld with kernel "
                    "%lldx%lld, padding %lld, dilation %lld leaves no "
                    "window (needs H, W + 2*padding >= dilation*(k-1)+1)",
                    op->name, (long long)x->dim[2], (long long)x->dim[3],
                    (long long)w->dim[2], (long long)w->dim[3],
                    (long long)pad, (long long)dil);
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
static int shape_pool2d(const tb_op *op, const tb_shape *in,
                        const tb_params *p, tb_shape *out, char *err,
                        size_t len)
{
    const tb_shape *x = &in[0];
    char sx[96];
    if (x->ndim != 4)
        return fail(err, len, TB_ESHAPE,
                    "%s: expects input [N, C, H, W], got %s", op->name,
                    tb_shape_format(x, sx, sizeof sx));
    int64_t k = (int64_t)p->v[0], st = pool_stride(p);
    int64_t pad = (int64_t)p->v[2];
    if (2 * pad > k)
        return fail(err, len, TB_EPARAM,
                    "%s: padding %lld is more than half the kernel %lld",
                    op->name, (long long)pad, (long long)k);
    int64_t oh = tb_window_out(x->dim[2], k, st, pad, 1);
    int64_t ow = tb_window_out(x->dim[3], k, st, pad, 1);
    if (oh < 1 || ow < 1)
        return fail(err, len, TB_ESHAPE,
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
static int shape_create(const tb_op *op, const tb_shape *in,
                        const tb_params *p, tb_shape *out, char *err,
                        size_t len)
{
    (void)p;
    char s[96];
    if (op->id == TB_OP_arange && in[0].ndim != 1)
        return fail(err, len, TB_ESHAPE,
                    "%s: the shape must be 1-D [n], got %s", op->name,
                    tb_shape_format(&in[0], s, sizeof s));
    *out = in[0];
    return 0;
}

/* In-place binary ops: NumPy broadcasting, and the result must have the
 * first input's shape (it is written there). */
static int shape_inplace(const tb_op *op, const tb_shape *in,
                         const tb_params *p, tb_shape *out, char *err,
                         size_t len)
{
    int rc = op->n_in == 1 ? shape_same(op, in, p, out, err, len)
                           : shape_broadcast(op, in, p, out, err, len);
    if (rc)
        return rc;
    char sa[96], so[96];
    if (!tb_shape_equal(out, &in[0]))
        return fail(err, len, TB_ESHAPE,
                    "%s: writes into its first input %s, but the result "
                    "broadcasts to %s",
                    op->name, tb_shape_format(&in[0], sa, sizeof sa),
                    tb_shape_format(out, so, sizeof so));
    return 0;
}

/* Optimizer steps: parameters, gradient and every state tensor have one
 * shape, which every output (the updated parameters and state) has. */
static int shape_optim(const tb_op *op, const tb_shape *in,
                       const tb_params *p, tb_shape *out, char *err,
                       size_t len)
{
    (void)p;
    static const char *const names[] = {"param", "grad", "state 1",
                                        "state 2"};
    for (int i = 1; i < op->n_in; i++) {
        char sa[96], sb[96];
        if (!tb_shape_equal(&in[i], &in[0]))
            return fail(err, len, TB_ESHAPE,
                        "%s: %s [%s] differs from param [%s]", op->name,
                        names[i], tb_shape_format(&in[i], sb, sizeof sb),
                        tb_shape_format(&in[0], sa, sizeof sa));
    }
    for (int i = 0; i < op->n_out; i++)
        out[i] = in[0];
    return 0;
}

/* svd, qr: a 2-D [m, n] matrix, k = min(m, n); svd -> U [m, k], S [k],
 * Vt [k, n] (thin); qr -> Q [m, k], R [k, n] (reduced).  eigh: a square
 * [n, n] matrix -> eigenvalues [n] (ascending), eigenvectors [n, n]
 * (columns). */
static int shape_linalg(const tb_op *op, const tb_shape *in,
                        const tb_params *p, tb_shape *out, char *err,
                        size_t len)
{
    (void)p;
    char s[96];
    if (in[0].ndim != 2)
        return fail(err, len, TB_ESHAPE,
                    "%s: expects a 2-D matrix, got %s", op->name,
                    tb_shape_format(&in[0], s, sizeof s));
    int64_t m = in[0].dim[0], n = in[0].dim[1], k = m < n ? m : n;
    if (m > (1 << 16) || n > (1 << 16))
        return fail(err, len, TB_ESHAPE,
                    "%s: %s is too large (at most 65536 per dim)", op->name,
                    tb_shape_format(&in[0], s, sizeof s));
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
            return fail(err, len, TB_ESHAPE,
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
        return fail(err, errlen, TB_ESHAPE,
                    "%s: creates a tensor: give one shape (the output's), "
                    "got %d",
                    op->name, n_in);
    if (op->n_in && n_in != op->n_in)
        return fail(err, errlen, TB_ESHAPE, "%s: expects %d input%s, got %d",
                    op->name, op->n_in, op->n_in == 1 ? "" : "s", n_in);
    for (int i = 0; i < n_in; i++) {
        if (in[i].ndim < 1 || in[i].ndim > TB_MAX_DIMS)
            return fail(err, errlen, TB_ESHAPE,
                        "%s: %s %d has %d dims (allowed 1..%d)", op->name,
                        op->n_in ? "input" : "shape",
                        i, in[i].ndim, TB_MAX_DIMS);
        int64_t numel = 1;
        for (int d = 0; d < in[i].ndim; d++) {
            if (in[i].dim[d] <= 0)
                return fail(err, errlen, TB_ESHAPE,
                            "%s: input %d dim %d is %lld (must be > 0)",
                            op->name, i, d, (long long)in[i].dim[d]);
            /* keep element and byte counts far from int64 overflow */
            if (numel > (INT64_C(1) << 53) / in[i].dim[d])
                return fail(err, errlen, TB_ESHAPE,
                            "%s: input %d has more than 2^53 elements",
                            op->name, i);
            numel *= in[i].dim[d];
        }
    }
    tb_params full = p ? *p : (tb_params){0};
    tb_params_defaults(op, &full);
    return op->shape(op, in, &full, out, err, errlen);
}

/* ---- cost models --------------------------------------------------------- */

static double numel_d(const tb_shape *s)
{
    return (double)tb_shape_numel(s);
}

static double sz(tb_dtype dt)
{
    return (double)tb_dtype_size(dt);
}

/* One FLOP per output element. */
static double flops_per_out(const tb_op *op, const tb_shape *in,
                            const tb_shape *out, const tb_params *p,
                            tb_dtype dt)
{
    (void)op, (void)in, (void)p, (void)dt;
    return numel_d(&out[0]);
}

/* Reductions: one add per input element (+1 divide per output for mean). */
static double flops_reduce(const tb_op *op, const tb_shape *in,
                           const tb_shape *out, const tb_params *p,
                           tb_dtype dt)
{
    (void)p, (void)dt;
    return numel_d(&in[0]) + (op->id == TB_OP_mean ? numel_d(&out[0]) : 0);
}

static double flops_matmul(const tb_op *op, const tb_shape *in,
                           const tb_shape *out, const tb_params *p,
                           tb_dtype dt)
{
    (void)op, (void)p, (void)dt;
    return 2.0 * numel_d(&out[0]) * (double)in[0].dim[in[0].ndim - 1];
}

static double flops_zero(const tb_op *op, const tb_shape *in,
                         const tb_shape *out, const tb_params *p,
                         tb_dtype dt)
{
    (void)op, (void)in, (void)out, (void)p, (void)dt;
    return 0;
}

/* log_softmax: per element a compare (max), a subtract, an exp and an
 * add (sum), then a subtract of the log-sum: 5 counted operations.
 * softmax likewise, with a divide by the sum in place of the last
 * subtract. */
static double flops_log_softmax(const tb_op *op, const tb_shape *in,
                                const tb_shape *out, const tb_params *p,
                                tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    return 5.0 * numel_d(&in[0]);
}

/* Element-wise ops: FLOPs per output element, counting every arithmetic
 * operation, comparison and libm call of the op's defining formula as
 * one (transcendentals are far dearer than an add, so items/s is the
 * fairer figure for them):
 *   neg, abs, exp, log, sqrt, tanh, pow, maximum, minimum, the scalar
 *   forms: 1; rsqrt 1/sqrt(x): 2; leaky_relu (compare, mul) and add_relu
 *   (add, compare): 2; sigmoid 1/(1+exp(-x)): 4; silu x*sigmoid(x): 5;
 *   gelu 0.5*x*(1+erf(x/sqrt2)): 5; gelu_tanh 0.5*x*(1+tanh(c*(x+
 *   0.044715*x^3))): 9; softplus (mul, compare, exp, log1p, div): 5. */
static double flops_elem(const tb_op *op, const tb_shape *in,
                         const tb_shape *out, const tb_params *p,
                         tb_dtype dt)
{
    (void)in, (void)p, (void)dt;
    double per = 1;
    switch (op->id) {
    case TB_OP_rsqrt:
    case TB_OP_leaky_relu:
    case TB_OP_add_relu: per = 2; break;
    case TB_OP_sigmoid: per = 4; break;
    case TB_OP_silu:
    case TB_OP_gelu:
    case TB_OP_softplus: per = 5; break;
    case TB_OP_gelu_tanh: per = 9; break;
    default: break;
    }
    return per * numel_d(&out[0]);
}

/* var: the mean (an add per element), then a subtract, a multiply and an
 * add per element, and a divide per output. */
static double flops_var(const tb_op *op, const tb_shape *in,
                        const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)op, (void)p, (void)dt;
    return 4.0 * numel_d(&in[0]) + numel_d(&out[0]);
}

/* linear: a multiply-add per (m, k, n), then a bias add and a relu per
 * output. */
static double flops_linear(const tb_op *op, const tb_shape *in,
                           const tb_shape *out, const tb_params *p,
                           tb_dtype dt)
{
    (void)op, (void)p, (void)dt;
    return 2.0 * numel_d(&out[0]) * (double)in[0].dim[1] +
           2.0 * numel_d(&out[0]);
}

/* conv2d: a multiply-add per output and (c, kh, kw), the padded taps
 * included (as the usual 2*N*O*OH*OW*C*KH*KW figure), plus the bias add. */
static double flops_conv2d(const tb_op *op, const tb_shape *in,
                           const tb_shape *out, const tb_params *p,
                           tb_dtype dt)
{
    (void)p, (void)dt;
    double taps = (double)in[1].dim[1] * (double)in[1].dim[2] *
                  (double)in[1].dim[3];
    return numel_d(&out[0]) * (2.0 * taps + (op->n_in == 3 ? 1 : 0));
}

/* Pooling: a compare (max) or add (avg) per output and window tap, plus
 * a divide per output for avg. */
static double flops_pool2d(const tb_op *op, const tb_shape *in,
                           const tb_shape *out, const tb_params *p,
                           tb_dtype dt)
{
    (void)in, (void)dt;
    double k = p->v[0];
    return numel_d(&out[0]) *
           (k * k + (op->id == TB_OP_avg_pool2d ? 1 : 0));
}

/* Minimum traffic: every input read once, every output written once. */
static double bytes_io(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)p;
    double n = 0;
    for (int i = 0; i < op->n_in; i++)
        n += numel_d(&in[i]);
    for (int i = 0; i < op->n_out; i++)
        n += numel_d(&out[i]);
    return n * sz(dt);
}

static double rlen_reduce(const tb_op *op, const tb_shape *in,
                          const tb_shape *out, const tb_params *p,
                          tb_dtype dt)
{
    (void)op, (void)p, (void)dt;
    return numel_d(&in[0]) / numel_d(&out[0]);
}

static double rlen_matmul(const tb_op *op, const tb_shape *in,
                          const tb_shape *out, const tb_params *p,
                          tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    return (double)in[0].dim[in[0].ndim - 1];
}

static double rlen_axis(const tb_op *op, const tb_shape *in,
                        const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)out, (void)dt;
    int ax = 0;
    double axis = tb_params_has(p, 0) ? p->v[0] : op->params[0].def;
    if (tb_axis_norm((int64_t)axis, in[0].ndim, &ax))
        return 1;
    return (double)in[0].dim[ax];
}

/* conv2d: C*KH*KW products (+ the bias) summed into each output. */
static double rlen_conv2d(const tb_op *op, const tb_shape *in,
                          const tb_shape *out, const tb_params *p,
                          tb_dtype dt)
{
    (void)out, (void)p, (void)dt;
    return (double)in[1].dim[1] * (double)in[1].dim[2] *
               (double)in[1].dim[3] + (op->n_in == 3 ? 1 : 0);
}

/* avg_pool2d: kernel^2 terms per output. */
static double rlen_pool2d(const tb_op *op, const tb_shape *in,
                          const tb_shape *out, const tb_params *p,
                          tb_dtype dt)
{
    (void)op, (void)in, (void)out, (void)dt;
    return p->v[0] * p->v[0];
}

/* Optimizer steps: floating-point operations per parameter, counted
 * from the update formulas in their PyTorch form (weight decay, when
 * nonzero, adds 2; divisions and square roots count 1 each). */
static double flops_optim(const tb_op *op, const tb_shape *in,
                          const tb_shape *out, const tb_params *p,
                          tb_dtype dt)
{
    (void)out, (void)p, (void)dt;
    double per;
    switch (op->id) {
    case TB_OP_sgd: per = 2; break;            /* p -= lr*g */
    case TB_OP_sgd_momentum: per = 6; break;   /* buf, nesterov, p */
    case TB_OP_adagrad: per = 6; break;        /* sum += g*g; p -= .. */
    case TB_OP_adamax: per = 9; break;         /* m, u = max(..), p */
    case TB_OP_adam: per = 12; break;          /* m, v, sqrt, div, p */
    case TB_OP_adamw: per = 14; break;         /* adam + decoupled decay */
    case TB_OP_nadam: per = 15; break;
    default: per = 14; break;                  /* radam, rectified */
    }
    return per * numel_d(&in[0]);
}

/* Linear algebra: the textbook operation counts (Golub & Van Loan,
 * Matrix Computations, 4th ed., sec. 5.2 and 8.3 and the table of
 * 8.6.3), a convention for GFLOP/s, not what a given LAPACK performs:
 * qr (Householder, thin Q, m >= n): 4mn^2 - 4n^3/3; svd (thin, R-SVD):
 * 6mn^2 + 11n^3; eigh (symmetric QR with eigenvectors): 9n^3.  For
 * m < n, m and n swap. */
static double flops_linalg(const tb_op *op, const tb_shape *in,
                           const tb_shape *out, const tb_params *p,
                           tb_dtype dt)
{
    (void)out, (void)p, (void)dt;
    double m = (double)in[0].dim[0], n = (double)in[0].dim[1];
    if (m < n) {
        double t = m;
        m = n;
        n = t;
    }
    switch (op->id) {
    case TB_OP_qr: return 4 * m * n * n - 4 * n * n * n / 3;
    case TB_OP_svd: return 6 * m * n * n + 11 * n * n * n;
    default: return 9 * n * n * n;
    }
}

/* svd/qr/eigh: errors grow with the matrix size. */
static double rlen_linalg(const tb_op *op, const tb_shape *in,
                          const tb_shape *out, const tb_params *p,
                          tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    return (double)(in[0].dim[0] > in[0].dim[1] ? in[0].dim[0]
                                                 : in[0].dim[1]);
}

/* ---- parameter schemas and input domains -------------------------------- */

static const tb_param_spec params_reduce[] = {
    {"axis", TB_PARAM_INT, true, 0, -TB_MAX_DIMS, TB_MAX_DIMS - 1,
     "axis to reduce; absent: all elements"},
    {"keepdim", TB_PARAM_BOOL, false, 0, 0, 1,
     "keep the reduced axis with size 1"},
};
static const tb_param_spec params_transpose[] = {
    {"dim0", TB_PARAM_INT, false, -2, -TB_MAX_DIMS, TB_MAX_DIMS - 1,
     "first dim to swap"},
    {"dim1", TB_PARAM_INT, false, -1, -TB_MAX_DIMS, TB_MAX_DIMS - 1,
     "second dim to swap"},
};
static const tb_param_spec params_axis[] = {
    {"axis", TB_PARAM_INT, false, -1, -TB_MAX_DIMS, TB_MAX_DIMS - 1,
     "axis of the softmax"},
};
static const tb_param_spec params_var[] = {
    {"axis", TB_PARAM_INT, true, 0, -TB_MAX_DIMS, TB_MAX_DIMS - 1,
     "axis to reduce; absent: all elements"},
    {"keepdim", TB_PARAM_BOOL, false, 0, 0, 1,
     "keep the reduced axis with size 1"},
    {"correction", TB_PARAM_INT, false, 1, 0, 1e9,
     "divide by n - correction: 1 = unbiased (PyTorch's default), 0 = "
     "NumPy's default ddof=0"},
};
static const tb_param_spec params_leaky[] = {
    {"alpha", TB_PARAM_FLOAT, false, 0.01, -1e6, 1e6,
     "slope for x <= 0"},
};
static const tb_param_spec params_softplus[] = {
    {"beta", TB_PARAM_FLOAT, false, 1, 1e-6, 1e6,
     "log1p(exp(beta*x))/beta"},
    {"threshold", TB_PARAM_FLOAT, false, 20, -1e6, 1e6,
     "x itself where beta*x > threshold"},
};
static const tb_param_spec params_scalar[] = {
    {"scalar", TB_PARAM_FLOAT, false, 1, -1e30, 1e30,
     "the constant operand (rounded to the case dtype)"},
};
#define PERM_DIM(i)                                                       \
    {"p" #i, TB_PARAM_INT, true, 0, -TB_MAX_DIMS, TB_MAX_DIMS - 1,        \
     "input dim that becomes output dim " #i "; none set: reverse"}
static const tb_param_spec params_permute[TB_MAX_PARAMS] = {
    PERM_DIM(0), PERM_DIM(1), PERM_DIM(2), PERM_DIM(3),
    PERM_DIM(4), PERM_DIM(5), PERM_DIM(6), PERM_DIM(7),
};
#undef PERM_DIM
static const tb_param_spec params_conv[] = {
    {"stride", TB_PARAM_INT, false, 1, 1, 1 << 20,
     "window step, both spatial dims"},
    {"padding", TB_PARAM_INT, false, 0, 0, 1 << 20,
     "zeros added on each side, both spatial dims"},
    {"dilation", TB_PARAM_INT, false, 1, 1, 1 << 20,
     "spacing of kernel taps, both spatial dims"},
};
static const tb_param_spec params_pool[] = {
    {"kernel", TB_PARAM_INT, false, 2, 1, 1 << 20,
     "window size, both spatial dims"},
    {"stride", TB_PARAM_INT, true, 0, 1, 1 << 20,
     "window step; absent: = kernel"},
    {"padding", TB_PARAM_INT, false, 0, 0, 1 << 20,
     "padding on each side, at most kernel/2"},
};

/* The divisor stays away from zero so the check measures the kernel,
 * not the conditioning of x / ~0. */
static const tb_domain domain_div[] = {{-1, 1}, {0.5, 2}};
/* log, rsqrt: positive inputs away from 0 (log(0) = -inf); sqrt may
 * touch 0.  pow: a positive base (a negative one with a fractional
 * exponent is NaN) and exponents of both signs. */
static const tb_domain domain_log[] = {{0.01, 10}};
static const tb_domain domain_sqrt[] = {{0, 10}};
static const tb_domain domain_pow[] = {{0.1, 2}, {-2, 2}};

#define P_LR(d) {"lr", TB_PARAM_FLOAT, false, d, 0, 1e6, "learning rate"}
#define P_WD(d)                                                           \
    {"weight_decay", TB_PARAM_FLOAT, false, d, 0, 1e6,                    \
     "L2 penalty added to the gradient (adamw: decoupled decay)"}
#define P_BETA1 {"beta1", TB_PARAM_FLOAT, false, 0.9, 0, 0.999999,      \
                 "decay of the first moment"}
#define P_BETA2 {"beta2", TB_PARAM_FLOAT, false, 0.999, 0, 0.999999,    \
                 "decay of the second moment"}
#define P_EPS(d) {"eps", TB_PARAM_FLOAT, false, d, 0, 1, "added to the denominator"}
/* The state tensors are given (a run in progress): `step` is the number
 * of the step being taken, used in the bias corrections; every timed
 * call repeats that step number on the state the last call left. */
#define P_STEP {"step", TB_PARAM_INT, false, 10, 1, 1e9,                   \
                "number of this step (1 = first), for bias corrections"}
static const tb_param_spec params_sgd[] = {P_LR(0.01), P_WD(0)};
static const tb_param_spec params_sgd_momentum[] = {
    P_LR(0.01),
    {"momentum", TB_PARAM_FLOAT, false, 0.9, 0, 1, "momentum factor"},
    {"dampening", TB_PARAM_FLOAT, false, 0, 0, 1, "dampening of the gradient"},
    P_WD(0),
    {"nesterov", TB_PARAM_BOOL, false, 0, 0, 1, "Nesterov momentum"},
};
static const tb_param_spec params_adam[] = {
    P_LR(1e-3), P_BETA1, P_BETA2, P_EPS(1e-8), P_WD(0), P_STEP,
};
static const tb_param_spec params_adamw[] = {
    P_LR(1e-3), P_BETA1, P_BETA2, P_EPS(1e-8), P_WD(0.01), P_STEP,
};
static const tb_param_spec params_adagrad[] = {
    P_LR(0.01),
    {"lr_decay", TB_PARAM_FLOAT, false, 0, 0, 1e6, "lr / (1 + (step-1)*lr_decay)"},
    P_WD(0), P_EPS(1e-10), P_STEP,
};
static const tb_param_spec params_adamax[] = {
    P_LR(2e-3), P_BETA1, P_BETA2, P_EPS(1e-8), P_WD(0), P_STEP,
};
static const tb_param_spec params_nadam[] = {
    P_LR(2e-3), P_BETA1, P_BETA2, P_EPS(1e-8), P_WD(0),
    {"momentum_decay", TB_PARAM_FLOAT, false, 4e-3, 0, 1e6,
     "mu_t = beta1*(1 - 0.5*0.96^(t*momentum_decay))"},
    P_STEP,
};
static const tb_param_spec params_radam[] = {
    P_LR(1e-3), P_BETA1, P_BETA2, P_EPS(1e-8), P_WD(0), P_STEP,
};
#undef P_LR
#undef P_WD
#undef P_BETA1
#undef P_BETA2
#undef P_EPS
#undef P_STEP
static const tb_param_spec params_full[] = {
    {"value", TB_PARAM_FLOAT, false, 0, -1e30, 1e30,
     "the fill value (rounded to the case dtype)"},
};
static const tb_param_spec params_arange[] = {
    {"start", TB_PARAM_FLOAT, false, 0, -1e30, 1e30, "first value"},
    {"step", TB_PARAM_FLOAT, false, 1, -1e30, 1e30,
     "out[i] = start + i*step, computed in double, rounded once"},
};
static const tb_param_spec params_rand_uniform[] = {
    {"low", TB_PARAM_FLOAT, false, 0, -1e30, 1e30, "lower bound"},
    {"high", TB_PARAM_FLOAT, false, 1, -1e30, 1e30, "upper bound"},
    {"seed", TB_PARAM_INT, false, 0, 0, 9007199254740992.0,
     "stream: out[i] depends only on (seed, i)"},
};
static const tb_param_spec params_calib_spin[] = {
    {"ns", TB_PARAM_INT, false, 1000, 0, 1e10,
     "nanoseconds to spin on the clock"},
};
static const tb_param_spec params_rand_normal[] = {
    {"mean", TB_PARAM_FLOAT, false, 0, -1e30, 1e30, "mean"},
    {"std", TB_PARAM_FLOAT, false, 1, 0, 1e30, "standard deviation"},
    {"seed", TB_PARAM_INT, false, 0, 0, 9007199254740992.0,
     "stream: out[i] depends only on (seed, i)"},
};

/* Optimizer inputs: param, grad, then state; second-moment state
 * (v, adagrad's sum, adamax's u) is nonnegative. */
static const tb_domain domain_optim_mv[] = {{-1, 1}, {-1, 1}, {-1, 1},
                                            {0, 1}};
static const tb_domain domain_optim_sum[] = {{-1, 1}, {-1, 1}, {0, 1}};
/* mul_ and div_ write into their input and are called millions of times
 * in a row: any |b| != 1 would drive the values to 0 (subnormals, which
 * are slow) or infinity within the timing loop.  b = -1 keeps them
 * unchanged in magnitude and still makes a kernel that ignores b fail the
 * check (mul and div check the arithmetic on general values). */
static const tb_domain domain_inplace_neg1[] = {{-1, 1}, {-1, -1}};

static const int8_t alias_first[] = {0};
static const int8_t alias_p_buf[] = {0, 2};
static const int8_t alias_p_m_v[] = {0, 2, 3};

/* The unfused compositions, step by step as an eager framework runs
 * them (one kernel and one new tensor per step). */
static const tb_step steps_add_relu[] = {
    {TB_OP_add, {0, 1}, 0, {{NULL, 0}}},
    {TB_OP_relu, {TB_STEP_TMP(0)}, -1, {{NULL, 0}}},
};
static const tb_step steps_linear[] = {
    {TB_OP_matmul, {0, 1}, 0, {{NULL, 0}}},
    {TB_OP_add, {TB_STEP_TMP(0), 2}, 1, {{NULL, 0}}},
    {TB_OP_relu, {TB_STEP_TMP(1)}, -1, {{NULL, 0}}},
};
/* m = max(x, axis, keepdim); s = x - m; e = exp(s); z = sum(e, axis,
 * keepdim); l = log(z); out = s - l. */
static const tb_step steps_log_softmax[] = {
    {TB_OP_max, {0}, 0, {{"keepdim", 1}}},
    {TB_OP_sub, {0, TB_STEP_TMP(0)}, 1, {{NULL, 0}}},
    {TB_OP_exp, {TB_STEP_TMP(1)}, 2, {{NULL, 0}}},
    {TB_OP_sum, {TB_STEP_TMP(2)}, 3, {{"keepdim", 1}}},
    {TB_OP_log, {TB_STEP_TMP(3)}, 4, {{NULL, 0}}},
    {TB_OP_sub, {TB_STEP_TMP(1), TB_STEP_TMP(4)}, -1, {{NULL, 0}}},
};
#define NSTEPS(a) (int)(sizeof a / sizeof a[0])

/* ---- the table ----------------------------------------------------------- */

/* Tolerances: |got - ref| <= atol * sqrt(reduce_len) + rtol * |ref|.
 * f32 element-wise results are one rounding from the exact value
 * (half an ulp = 6e-8 relative); reductions and matmul accumulate
 * rounding that grows with the number of terms. */
#define TOL_EW {{1e-6, 1e-7}, {1e-14, 1e-15}}
#define TOL_ACC {{1e-5, 2e-6}, {1e-12, 1e-13}}
/* Exact: the result is one of the inputs (or an index), or an exact
 * operation on one (neg, abs). */
#define TOL_EXACT {{0, 0}, {0, 0}}
/* Element-wise math on exact inputs: one correctly rounded operation or
 * a libm call of at most a few ulp (glibc's expf/logf/tanhf/powf are
 * under 2 ulp), or a short chain of them whose rounding errors are not
 * amplified (sigmoid, silu, softplus in their stable forms).  rtol 1e-6
 * is 8 ulp at worst (2^-23 relative per ulp) for f32, 1e-14 ~45 ulp for
 * f64.  atol is the smallest normal number: results in the subnormal
 * range may be flushed to zero (FTZ, as SIMD kernels often run) or
 * computed as 1/(1+inf) = 0, but any normal result must be accurate. */
#define TOL_MATH {{1e-6, FLT_MIN}, {1e-14, DBL_MIN}}
/* gelu and gelu_tanh as most libraries compute them, 0.5*x*(1+erf(.))
 * and 0.5*x*(1+tanh(.)), cancel for negative x: the absolute error is
 * about |x|/2 times half an ulp of 1, i.e. up to ~1.6e-7 in f32 (at
 * x ~ -5.5, beyond which the result rounds to 0) and ~4.4e-16 in f64 (at
 * x ~ -8).  Stable forms (erfc, x*sigmoid(2u)) meet rtol alone. */
#define TOL_GELU {{1e-6, 2e-7}, {1e-14, 1e-15}}
/* Optimizer steps: a short chain of roundings (a square root and a
 * division for the Adam family) on values of order 1. */
#define TOL_OPT {{1e-5, 1e-6}, {1e-13, 1e-14}}
/* rand_normal: Box-Muller's log and cos of the same uniform draws. */
#define TOL_RAND_NORMAL {{1e-5, 1e-6}, {1e-13, 1e-14}}
/* svd/qr/eigh on well-conditioned random matrices (entries in [-1, 1]):
 * backward-stable algorithms, errors ~ n * eps * cond; vectors compared
 * after tb_canon_* fixed their signs. */
#define TOL_LINALG {{2e-3, 2e-4}, {1e-9, 1e-10}}

/* Backward ops: a gradient is a short chain of roundings per term
 * (sigmoid' = g*s*(1-s), gelu' = g*(Phi + x*phi)), sums scale atol with
 * their length (tb_bw_reduce_len). */
#define TOL_BW_EW {{1e-5, 1e-6}, {1e-13, 1e-14}}
#define BW_ROW(nin, nout, shape_fn, tol_)                                 \
    .category = TB_CAT_BACKWARD, .n_in = nin, .n_out = nout,              \
    .shape = shape_fn, .flops = tb_bw_flops, .bytes = bytes_io,           \
    .reduce_len = tb_bw_reduce_len, .tol = tol_
/* log_softmax_backward's y is a log-probability (<= 0); div's divisor
 * away from 0; nll_loss's targets are class indices (0: the harness's
 * random inputs are all class 0; tests give real targets). */
static const tb_domain domain_bw_log_softmax[] = {{-1, 1}, {-4, 0}};
static const tb_domain domain_bw_div[] = {{-1, 1}, {-1, 1}, {0.5, 2}};
static const tb_domain domain_bw_nll[] = {{-4, 0}, {0, 0}};
static const tb_domain domain_bw_nll_backward[] = {{-1, 1}, {-4, 0}, {0, 0}};

/* Workloads (models.h): the batch x in, the loss [1] (train) or the
 * log-probabilities [B, 10] (infer) out; checked on the first call (the
 * initial weights) against the same model on the reference kernels. */
static int shape_workload(const tb_op *op, const tb_shape *in,
                          const tb_params *p, tb_shape *out, char *err,
                          size_t len)
{
    (void)p;
    bool cnn = op->id == TB_OP_cnn_train_step || op->id == TB_OP_cnn_infer_step;
    char why[192];
    if (tb_model_check_shape(cnn ? TB_MODEL_CNN : TB_MODEL_MLP, &in[0], why,
                             sizeof why))
        return fail(err, len, TB_ESHAPE, "%s: %s", op->name, why);
    if (op->id == TB_OP_mlp_train_step || op->id == TB_OP_cnn_train_step) {
        out[0] = (tb_shape){1, {1}};
    } else {
        out[0] = (tb_shape){2, {in[0].dim[0], 10}};
    }
    return 0;
}

/* Forward FLOPs; backward counted as twice the forward (its two
 * products per layer), the optimizer step not at all. */
static double flops_workload(const tb_op *op, const tb_shape *in,
                             const tb_shape *out, const tb_params *p,
                             tb_dtype dt)
{
    (void)out, (void)dt;
    bool cnn = op->id == TB_OP_cnn_train_step || op->id == TB_OP_cnn_infer_step;
    double f = tb_model_forward_flops(cnn ? TB_MODEL_CNN : TB_MODEL_MLP,
                                      &in[0]);
    bool train = op->id == TB_OP_mlp_train_step ||
                 op->id == TB_OP_cnn_train_step;
    if (train && !(tb_params_has(p, 0) && p->v[0] == 0))
        f *= 3;
    return f;
}

/* copy_h2d, copy_d2h: the host side of the copy. */
static const tb_param_spec params_xfer[] = {
    {"pinned", TB_PARAM_BOOL, false, 0, 0, 1,
     "the host buffer is page-locked (cudaMallocHost) instead of pageable "
     "(malloc)"},
};

/* copy_h2d, copy_d2h: the bytes that cross between host and device
 * (read on one side, written on the other), once. */
static double bytes_xfer(const tb_op *op, const tb_shape *in,
                         const tb_shape *out, const tb_params *p,
                         tb_dtype dt)
{
    (void)op, (void)out, (void)p;
    return numel_d(&in[0]) * sz(dt);
}

#define P_POOL                                                            \
    {"pool", TB_PARAM_BOOL, false, 0, 0, 1,                               \
     "tensor memory from a caching pool (pool.h) instead of one backend "  \
     "allocation per tensor"}
static const tb_param_spec params_train_step[] = {
    {"phase", TB_PARAM_INT, false, 2, 0, 2,
     "0: forward only (recorded on the tape); 1: forward + backward; 2: "
     "forward, backward and the sgd_momentum step"},
    {"hooks", TB_PARAM_INT, false, 0, 0, 3,
     "1: a forward hook on every op; 2: a backward hook on every op; 3: "
     "both (each counts its calls)"},
    {"lr", TB_PARAM_FLOAT, false, 0.01, 0, 1e6, "learning rate"},
    {"momentum", TB_PARAM_FLOAT, false, 0.9, 0, 1, "momentum factor"},
    P_POOL,
};
static const tb_param_spec params_infer_step[] = {
    {"hooks", TB_PARAM_INT, false, 0, 0, 1,
     "1: a forward hook on every op (counts its calls)"},
    P_POOL,
};
/* A loss or log-probabilities after ~10 chained kernels with sums over
 * up to K = 784 terms. */
#define TOL_WORKLOAD {{1e-4, 1e-5}, {1e-10, 1e-12}}
#define WL_ROW(nparams, params_)                                          \
    .category = TB_CAT_WORKLOAD, .n_in = 1, .n_out = 1,                   \
    .n_params = nparams, .params = params_, .shape = shape_workload,      \
    .flops = flops_workload, .bytes = bytes_io, .tol = TOL_WORKLOAD
static const tb_param_spec params_api[] = {
    {"layer", TB_PARAM_INT, false, 0, 0, 3,
     "0: the raw kernel (looked up once); 1: through the op table's "
     "dispatch (kernel lookup every call); 2: a tensor API that checks "
     "shapes and allocates its result (freed after the call); 3: that "
     "API with a forward hook registered"},
    P_POOL,
};
#undef P_POOL

/* One row per op, fields by name.  OP_ID(nm): an op that is its own
 * base (id, name, reference kernel); OP_FORM(nm, base): a form of
 * another op (in-place, optimizer state), served by base's kernels.
 * Fields left out are 0 / NULL: no parameters, the default domain
 * [-1, 1], one term per output (reduce_len), no aliasing, no steps, no
 * canonicalisation, the element-wise check. */
#define OP_ID(nm)                                                         \
    .id = TB_OP_##nm, .name = #nm, .ref = tb_ref_##nm, .base = TB_OP_##nm
#define OP_FORM(nm, base_)                                                \
    .id = TB_OP_##nm, .name = #nm, .ref = tb_ref_##nm, .base = TB_OP_##base_

static const tb_op op_table[TB_OP_COUNT] = {
    [TB_OP_add] = {OP_ID(add),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .shape = shape_broadcast, .flops = flops_per_out, .bytes = bytes_io,
        .tol = TOL_EW,
        .doc = "a + b, NumPy broadcasting"},
    [TB_OP_sub] = {OP_ID(sub),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .shape = shape_broadcast, .flops = flops_per_out, .bytes = bytes_io,
        .tol = TOL_EW,
        .doc = "a - b, NumPy broadcasting"},
    [TB_OP_mul] = {OP_ID(mul),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .shape = shape_broadcast, .flops = flops_per_out, .bytes = bytes_io,
        .tol = TOL_EW,
        .doc = "a * b, NumPy broadcasting"},
    [TB_OP_div] = {OP_ID(div),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .domain = domain_div, .shape = shape_broadcast,
        .flops = flops_per_out, .bytes = bytes_io, .tol = TOL_EW,
        .doc = "a / b, NumPy broadcasting"},
    [TB_OP_relu] = {OP_ID(relu),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_per_out, .bytes = bytes_io,
        .tol = TOL_EW,
        .doc = "max(x, 0)"},
    [TB_OP_sum] = {OP_ID(sum),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_reduce, .shape = shape_reduce, .flops = flops_reduce,
        .bytes = bytes_io, .reduce_len = rlen_reduce, .tol = TOL_ACC,
        .doc = "sum over all elements or along an axis"},
    [TB_OP_mean] = {OP_ID(mean),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_reduce, .shape = shape_reduce, .flops = flops_reduce,
        .bytes = bytes_io, .reduce_len = rlen_reduce, .tol = TOL_ACC,
        .doc = "mean over all elements or along an axis"},
    [TB_OP_matmul] = {OP_ID(matmul),
        .category = TB_CAT_MATMUL, .n_in = 2, .n_out = 1,
        .shape = shape_matmul, .flops = flops_matmul, .bytes = bytes_io,
        .reduce_len = rlen_matmul, .tol = TOL_ACC, .check = TB_CHECK_PRODUCT,
        .doc = "[...,M,K] @ [...,K,N], equal batch dims"},
    [TB_OP_transpose] = {OP_ID(transpose),
        .category = TB_CAT_LAYOUT, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_transpose, .shape = shape_transpose,
        .flops = flops_zero, .bytes = bytes_io, .tol = TOL_EW,
        .doc = "swap two dims, materialized"},
    [TB_OP_log_softmax] = {OP_ID(log_softmax),
        .category = TB_CAT_SOFTMAX, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_axis, .shape = shape_axis_same,
        .flops = flops_log_softmax, .bytes = bytes_io,
        .reduce_len = rlen_axis, .tol = TOL_ACC,
        .doc = "x - log(sum(exp(x))) along an axis"},

    /* unary math */
    [TB_OP_neg] = {OP_ID(neg),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_EXACT,
        .doc = "-x"},
    [TB_OP_abs] = {OP_ID(abs),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_EXACT,
        .doc = "|x|"},
    [TB_OP_exp] = {OP_ID(exp),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_MATH,
        .doc = "e^x"},
    [TB_OP_log] = {OP_ID(log),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .domain = domain_log, .shape = shape_same, .flops = flops_elem,
        .bytes = bytes_io, .tol = TOL_MATH,
        .doc = "natural log; inputs in [0.01, 10]"},
    [TB_OP_sqrt] = {OP_ID(sqrt),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .domain = domain_sqrt, .shape = shape_same, .flops = flops_elem,
        .bytes = bytes_io, .tol = TOL_MATH,
        .doc = "square root; inputs in [0, 10]"},
    [TB_OP_rsqrt] = {OP_ID(rsqrt),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .domain = domain_log, .shape = shape_same, .flops = flops_elem,
        .bytes = bytes_io, .tol = TOL_MATH,
        .doc = "1/sqrt(x); inputs in [0.01, 10]"},

    /* activations */
    [TB_OP_leaky_relu] = {OP_ID(leaky_relu),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_leaky, .shape = shape_same, .flops = flops_elem,
        .bytes = bytes_io, .tol = TOL_MATH,
        .doc = "x > 0 ? x : alpha*x"},
    [TB_OP_sigmoid] = {OP_ID(sigmoid),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_MATH,
        .doc = "1/(1+exp(-x))"},
    [TB_OP_tanh] = {OP_ID(tanh),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_MATH,
        .doc = "hyperbolic tangent"},
    [TB_OP_gelu] = {OP_ID(gelu),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_GELU,
        .doc = "0.5*x*(1+erf(x/sqrt(2))), the exact (erf) form"},
    [TB_OP_gelu_tanh] = {OP_ID(gelu_tanh),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_GELU,
        .doc = "0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))), the tanh "
               "approximation"},
    [TB_OP_silu] = {OP_ID(silu),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_MATH,
        .doc = "x*sigmoid(x) (swish)"},
    [TB_OP_softplus] = {OP_ID(softplus),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_softplus, .shape = shape_same, .flops = flops_elem,
        .bytes = bytes_io, .tol = TOL_MATH,
        .doc = "log1p(exp(beta*x))/beta, x where beta*x > threshold (PyTorch)"},

    /* binary with broadcasting */
    [TB_OP_pow] = {OP_ID(pow),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .domain = domain_pow, .shape = shape_broadcast, .flops = flops_elem,
        .bytes = bytes_io, .tol = TOL_MATH,
        .doc = "a^b, NumPy broadcasting; a in [0.1, 2], b in [-2, 2]"},
    [TB_OP_maximum] = {OP_ID(maximum),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .shape = shape_broadcast, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_EXACT,
        .doc = "larger of a and b (NaN if either is), NumPy broadcasting"},
    [TB_OP_minimum] = {OP_ID(minimum),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .shape = shape_broadcast, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_EXACT,
        .doc = "smaller of a and b (NaN if either is), NumPy broadcasting"},

    /* scalar forms */
    [TB_OP_add_scalar] = {OP_ID(add_scalar),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_scalar, .shape = shape_same, .flops = flops_elem,
        .bytes = bytes_io, .tol = TOL_MATH,
        .doc = "x + scalar"},
    [TB_OP_sub_scalar] = {OP_ID(sub_scalar),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_scalar, .shape = shape_same, .flops = flops_elem,
        .bytes = bytes_io, .tol = TOL_MATH,
        .doc = "x - scalar"},
    [TB_OP_mul_scalar] = {OP_ID(mul_scalar),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_scalar, .shape = shape_same, .flops = flops_elem,
        .bytes = bytes_io, .tol = TOL_MATH,
        .doc = "x * scalar"},
    [TB_OP_div_scalar] = {OP_ID(div_scalar),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_scalar, .shape = shape_same, .flops = flops_elem,
        .bytes = bytes_io, .tol = TOL_MATH,
        .doc = "x / scalar"},

    /* reductions */
    [TB_OP_max] = {OP_ID(max),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_reduce, .shape = shape_reduce_ext,
        .flops = flops_reduce, .bytes = bytes_io, .tol = TOL_EXACT,
        .doc = "largest element, over all or along an axis (NaN propagates)"},
    [TB_OP_min] = {OP_ID(min),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_reduce, .shape = shape_reduce_ext,
        .flops = flops_reduce, .bytes = bytes_io, .tol = TOL_EXACT,
        .doc = "smallest element, over all or along an axis (NaN propagates)"},
    [TB_OP_argmax] = {OP_ID(argmax),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_reduce, .shape = shape_reduce_ext,
        .flops = flops_reduce, .bytes = bytes_io, .tol = TOL_EXACT,
        .doc =
            "index of the first largest element (first NaN), flat over all or "
            "along an axis; stored as values of the case dtype"},
    [TB_OP_var] = {OP_ID(var),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 3,
        .params = params_var, .shape = shape_reduce_ext, .flops = flops_var,
        .bytes = bytes_io, .reduce_len = rlen_reduce, .tol = TOL_ACC,
        .doc =
            "variance over all or along an axis, "
            "sum((x-mean)^2)/(n-correction)"},

    [TB_OP_softmax] = {OP_ID(softmax),
        .category = TB_CAT_SOFTMAX, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_axis, .shape = shape_axis_same,
        .flops = flops_log_softmax, .bytes = bytes_io,
        .reduce_len = rlen_axis, .tol = TOL_ACC,
        .check = TB_CHECK_DISTRIBUTION,
        .doc = "exp(x - max) / sum(exp(x - max)) along an axis"},
    [TB_OP_permute] = {OP_ID(permute),
        .category = TB_CAT_LAYOUT, .n_in = 1, .n_out = 1,
        .n_params = TB_MAX_PARAMS, .params = params_permute,
        .shape = shape_permute, .flops = flops_zero, .bytes = bytes_io,
        .tol = TOL_EXACT,
        .doc = "reorder dims: output dim i = input dim p<i>; materialized"},

    /* fused */
    [TB_OP_add_relu] = {OP_ID(add_relu),
        .category = TB_CAT_FUSED, .n_in = 2, .n_out = 1,
        .shape = shape_broadcast, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_EW,
        .doc = "relu(a + b) in one pass, NumPy broadcasting (fused add, relu)"},
    [TB_OP_linear] = {OP_ID(linear),
        .category = TB_CAT_FUSED, .n_in = 3, .n_out = 1,
        .shape = shape_linear, .flops = flops_linear, .bytes = bytes_io,
        .reduce_len = rlen_matmul, .tol = TOL_ACC,
        .doc = "relu(x @ W + b): x [M,K], W [K,N], b [N] (fused matmul, add, "
               "relu)"},

    /* convolution and pooling, NCHW */
    [TB_OP_conv2d] = {OP_ID(conv2d),
        .category = TB_CAT_CONV, .n_in = 3, .n_out = 1, .n_params = 3,
        .params = params_conv, .shape = shape_conv2d, .flops = flops_conv2d,
        .bytes = bytes_io, .reduce_len = rlen_conv2d, .tol = TOL_ACC,
        .doc =
            "x [N,C,H,W] * w [O,C,KH,KW] + b [O] -> [N,O,OH,OW], zero padding"},
    [TB_OP_conv2d_nobias] = {OP_ID(conv2d_nobias),
        .category = TB_CAT_CONV, .n_in = 2, .n_out = 1, .n_params = 3,
        .params = params_conv, .shape = shape_conv2d, .flops = flops_conv2d,
        .bytes = bytes_io, .reduce_len = rlen_conv2d, .tol = TOL_ACC,
        .doc = "conv2d without bias: x [N,C,H,W] * w [O,C,KH,KW]"},
    [TB_OP_max_pool2d] = {OP_ID(max_pool2d),
        .category = TB_CAT_CONV, .n_in = 1, .n_out = 1, .n_params = 3,
        .params = params_pool, .shape = shape_pool2d, .flops = flops_pool2d,
        .bytes = bytes_io, .tol = TOL_EXACT,
        .doc =
            "max over kernel x kernel windows of [N,C,H,W] (NaN propagates)"},
    [TB_OP_avg_pool2d] = {OP_ID(avg_pool2d),
        .category = TB_CAT_CONV, .n_in = 1, .n_out = 1, .n_params = 3,
        .params = params_pool, .shape = shape_pool2d, .flops = flops_pool2d,
        .bytes = bytes_io, .reduce_len = rlen_pool2d, .tol = TOL_ACC,
        .doc =
            "mean over kernel x kernel windows of [N,C,H,W], padding counted "
            "as zeros"},

    /* creation: the one shape given is the output's */
    [TB_OP_zeros] = {OP_ID(zeros),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1,
        .shape = shape_create, .flops = flops_zero, .bytes = bytes_io,
        .tol = TOL_EXACT,
        .doc = "a tensor of zeros"},
    [TB_OP_ones] = {OP_ID(ones),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1,
        .shape = shape_create, .flops = flops_zero, .bytes = bytes_io,
        .tol = TOL_EXACT,
        .doc = "a tensor of ones"},
    [TB_OP_full] = {OP_ID(full),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1, .n_params = 1,
        .params = params_full, .shape = shape_create, .flops = flops_zero,
        .bytes = bytes_io, .tol = TOL_EXACT,
        .doc = "a tensor of one value"},
    [TB_OP_arange] = {OP_ID(arange),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1, .n_params = 2,
        .params = params_arange, .shape = shape_create,
        .flops = flops_per_out, .bytes = bytes_io, .tol = TOL_EW,
        .doc = "start + i*step for i in 0..n-1 (1-D)"},
    [TB_OP_rand_uniform] = {OP_ID(rand_uniform),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1, .n_params = 3,
        .params = params_rand_uniform, .shape = shape_create,
        .flops = flops_zero, .bytes = bytes_io, .tol = TOL_EW,
        .doc = "uniform in [low, high): counter-based, out[i] from (seed, i)"},
    [TB_OP_rand_normal] = {OP_ID(rand_normal),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1, .n_params = 3,
        .params = params_rand_normal, .shape = shape_create,
        .flops = flops_zero, .bytes = bytes_io, .tol = TOL_RAND_NORMAL,
        .doc = "normal(mean, std): Box-Muller on the rand_uniform stream"},
    [TB_OP_copy] = {OP_ID(copy),
        .category = TB_CAT_CREATION, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_zero, .bytes = bytes_io,
        .tol = TOL_EXACT,
        .doc = "a new tensor with the input's values"},

    /* in-place: the result overwrites the first input */
    [TB_OP_add_] = {OP_FORM(add_, add),
        .category = TB_CAT_INPLACE, .n_in = 2, .n_out = 1,
        .shape = shape_inplace, .flops = flops_per_out, .bytes = bytes_io,
        .tol = TOL_EW, .alias = alias_first,
        .doc = "a += b in place, b broadcast to a"},
    [TB_OP_sub_] = {OP_FORM(sub_, sub),
        .category = TB_CAT_INPLACE, .n_in = 2, .n_out = 1,
        .shape = shape_inplace, .flops = flops_per_out, .bytes = bytes_io,
        .tol = TOL_EW, .alias = alias_first,
        .doc = "a -= b in place, b broadcast to a"},
    [TB_OP_mul_] = {OP_FORM(mul_, mul),
        .category = TB_CAT_INPLACE, .n_in = 2, .n_out = 1,
        .domain = domain_inplace_neg1, .shape = shape_inplace,
        .flops = flops_per_out, .bytes = bytes_io, .tol = TOL_EW,
        .alias = alias_first,
        .doc = "a *= b in place, b broadcast to a; b = -1"},
    [TB_OP_div_] = {OP_FORM(div_, div),
        .category = TB_CAT_INPLACE, .n_in = 2, .n_out = 1,
        .domain = domain_inplace_neg1, .shape = shape_inplace,
        .flops = flops_per_out, .bytes = bytes_io, .tol = TOL_EW,
        .alias = alias_first,
        .doc = "a /= b in place, b broadcast to a; b = -1"},
    [TB_OP_relu_] = {OP_FORM(relu_, relu),
        .category = TB_CAT_INPLACE, .n_in = 1, .n_out = 1,
        .shape = shape_inplace, .flops = flops_per_out, .bytes = bytes_io,
        .tol = TOL_EW, .alias = alias_first,
        .doc = "x = max(x, 0) in place"},

    /* optimizer steps: param and state updated in place */
    [TB_OP_sgd] = {OP_ID(sgd),
        .category = TB_CAT_OPTIMIZER, .n_in = 2, .n_out = 1, .n_params = 2,
        .params = params_sgd, .shape = shape_optim, .flops = flops_optim,
        .bytes = bytes_io, .tol = TOL_OPT, .alias = alias_first,
        .doc = "p -= lr*(g + wd*p); inputs p, g"},
    [TB_OP_sgd_momentum] = {OP_ID(sgd_momentum),
        .category = TB_CAT_OPTIMIZER, .n_in = 3, .n_out = 2, .n_params = 5,
        .params = params_sgd_momentum, .shape = shape_optim,
        .flops = flops_optim, .bytes = bytes_io, .tol = TOL_OPT,
        .alias = alias_p_buf,
        .doc = "PyTorch SGD with momentum (optionally Nesterov); inputs p, g, "
               "buf; outputs p, buf"},
    [TB_OP_adam] = {OP_ID(adam),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 6,
        .params = params_adam, .domain = domain_optim_mv,
        .shape = shape_optim, .flops = flops_optim, .bytes = bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "PyTorch Adam; inputs p, g, m, v; outputs p, m, v"},
    [TB_OP_adamw] = {OP_ID(adamw),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 6,
        .params = params_adamw, .domain = domain_optim_mv,
        .shape = shape_optim, .flops = flops_optim, .bytes = bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "PyTorch AdamW (decoupled weight decay); inputs p, g, m, v; "
               "outputs p, m, v"},
    [TB_OP_adagrad] = {OP_ID(adagrad),
        .category = TB_CAT_OPTIMIZER, .n_in = 3, .n_out = 2, .n_params = 5,
        .params = params_adagrad, .domain = domain_optim_sum,
        .shape = shape_optim, .flops = flops_optim, .bytes = bytes_io,
        .tol = TOL_OPT, .alias = alias_p_buf,
        .doc = "PyTorch Adagrad; inputs p, g, sum; outputs p, sum"},
    [TB_OP_adamax] = {OP_ID(adamax),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 6,
        .params = params_adamax, .domain = domain_optim_mv,
        .shape = shape_optim, .flops = flops_optim, .bytes = bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "PyTorch Adamax; inputs p, g, m, u; outputs p, m, u"},
    [TB_OP_nadam] = {OP_ID(nadam),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 7,
        .params = params_nadam, .domain = domain_optim_mv,
        .shape = shape_optim, .flops = flops_optim, .bytes = bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "PyTorch NAdam (mu product from the step number); inputs p, g, "
               "m, v; outputs p, m, v"},
    [TB_OP_radam] = {OP_ID(radam),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 6,
        .params = params_radam, .domain = domain_optim_mv,
        .shape = shape_optim, .flops = flops_optim, .bytes = bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "PyTorch RAdam; inputs p, g, m, v; outputs p, m, v"},

    /* linear algebra (LAPACK semantics) */
    [TB_OP_svd] = {OP_ID(svd),
        .category = TB_CAT_LINALG, .n_in = 1, .n_out = 3,
        .shape = shape_linalg, .flops = flops_linalg, .bytes = bytes_io,
        .reduce_len = rlen_linalg, .tol = TOL_LINALG, .canon = tb_canon_svd,
        .check = TB_CHECK_FACTORIZATION,
        .doc = "thin SVD of [m,n]: U [m,k], S [k] (descending), Vt [k,n]"},
    [TB_OP_qr] = {OP_ID(qr),
        .category = TB_CAT_LINALG, .n_in = 1, .n_out = 2,
        .shape = shape_linalg, .flops = flops_linalg, .bytes = bytes_io,
        .reduce_len = rlen_linalg, .tol = TOL_LINALG, .canon = tb_canon_qr,
        .check = TB_CHECK_FACTORIZATION,
        .doc = "reduced QR of [m,n]: Q [m,k], R [k,n]"},
    [TB_OP_eigh] = {OP_ID(eigh),
        .category = TB_CAT_LINALG, .n_in = 1, .n_out = 2,
        .shape = shape_linalg, .flops = flops_linalg, .bytes = bytes_io,
        .reduce_len = rlen_linalg, .tol = TOL_LINALG, .canon = tb_canon_eigh,
        .check = TB_CHECK_FACTORIZATION,
        .doc = "symmetric eigendecomposition from the lower triangle: values "
               "[n] ascending, vectors [n,n] as columns"},

    /* unfused compositions of the fused ops, one kernel per step */
    [TB_OP_add_relu_unfused] = {OP_ID(add_relu_unfused),
        .category = TB_CAT_UNFUSED, .n_in = 2, .n_out = 1,
        .shape = shape_broadcast, .flops = flops_elem, .bytes = bytes_io,
        .tol = TOL_EW, .n_steps = NSTEPS(steps_add_relu),
        .steps = steps_add_relu,
        .doc = "add_relu as two kernels: t = a + b; relu(t)"},
    [TB_OP_linear_unfused] = {OP_ID(linear_unfused),
        .category = TB_CAT_UNFUSED, .n_in = 3, .n_out = 1,
        .shape = shape_linear, .flops = flops_linear, .bytes = bytes_io,
        .reduce_len = rlen_matmul, .tol = TOL_ACC,
        .n_steps = NSTEPS(steps_linear), .steps = steps_linear,
        .doc = "linear as three kernels: t = x @ W; u = t + b; relu(u)"},
    [TB_OP_log_softmax_unfused] = {OP_ID(log_softmax_unfused),
        .category = TB_CAT_UNFUSED, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_axis, .shape = shape_axis_same,
        .flops = flops_log_softmax, .bytes = bytes_io,
        .reduce_len = rlen_axis, .tol = TOL_ACC,
        .n_steps = NSTEPS(steps_log_softmax), .steps = steps_log_softmax,
        .doc = "log_softmax as six kernels: max, sub, exp, sum, log, sub"},

    /* calibration: known work and known time (calib.h) */
    [TB_OP_calib_work] = {OP_ID(calib_work),
        .category = TB_CAT_CALIB, .n_in = 0, .n_out = 1,
        .shape = tb_calib_shape, .flops = tb_calib_flops,
        .bytes = tb_calib_bytes, .tol = TOL_EXACT,
        .doc = "round(n * TBENCH_CALIB_SCALE) steps of a chain of dependent "
               "integer instructions; out[s mod n] = top 24 bits after step "
               "s"},
    [TB_OP_calib_spin] = {OP_ID(calib_spin),
        .category = TB_CAT_CALIB, .n_in = 0, .n_out = 1, .n_params = 1,
        .params = params_calib_spin, .shape = tb_calib_shape,
        .flops = tb_calib_flops, .bytes = tb_calib_bytes, .tol = TOL_EXACT,
        .doc = "spin on CLOCK_MONOTONIC for ns nanoseconds; shape [1], "
               "output 0"},
    /* backward ops: input 0 is the gradient of the forward output, the
     * outputs the gradients of the forward inputs (op_backward.h) */
    [TB_OP_relu_backward] = {OP_ID(relu_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_BW_EW),
        .doc = "relu gradient: g, x -> g * (x > 0)"},
    [TB_OP_sigmoid_backward] = {OP_ID(sigmoid_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_BW_EW),
        .doc = "sigmoid gradient: g, x -> g * s * (1 - s), s = sigmoid(x)"},
    [TB_OP_tanh_backward] = {OP_ID(tanh_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_BW_EW),
        .doc = "tanh gradient: g, x -> g * (1 - tanh(x)^2)"},
    [TB_OP_gelu_backward] = {OP_ID(gelu_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_BW_EW),
        .doc = "gelu (erf form) gradient: g, x -> g * (Phi(x) + x*phi(x))"},
    [TB_OP_log_softmax_backward] = {OP_ID(log_softmax_backward),
        BW_ROW(2, 1, tb_bw_shape_log_softmax, TOL_ACC), .n_params = 1,
        .params = params_axis, .domain = domain_bw_log_softmax,
        .doc = "log_softmax gradient: g, y (the forward output) -> g - "
               "exp(y) * sum(g) along the axis"},
    [TB_OP_sum_backward] = {OP_ID(sum_backward),
        BW_ROW(2, 1, tb_bw_shape_reduce, TOL_EW), .n_params = 2,
        .params = params_reduce,
        .doc = "sum gradient: g, x -> g broadcast to x's shape"},
    [TB_OP_mean_backward] = {OP_ID(mean_backward),
        BW_ROW(2, 1, tb_bw_shape_reduce, TOL_EW), .n_params = 2,
        .params = params_reduce,
        .doc = "mean gradient: g, x -> g / n broadcast to x's shape"},
    [TB_OP_add_backward] = {OP_ID(add_backward),
        BW_ROW(3, 2, tb_bw_shape_binary, TOL_ACC),
        .doc = "add gradient: g, a, b -> da, db (g summed over the dims "
               "each input was broadcast along)"},
    [TB_OP_sub_backward] = {OP_ID(sub_backward),
        BW_ROW(3, 2, tb_bw_shape_binary, TOL_ACC),
        .doc = "sub gradient: g, a, b -> g, -g reduced to a's and b's "
               "shapes"},
    [TB_OP_mul_backward] = {OP_ID(mul_backward),
        BW_ROW(3, 2, tb_bw_shape_binary, TOL_ACC),
        .doc = "mul gradient: g, a, b -> g*b, g*a reduced to a's and b's "
               "shapes"},
    [TB_OP_div_backward] = {OP_ID(div_backward),
        BW_ROW(3, 2, tb_bw_shape_binary, TOL_ACC),
        .domain = domain_bw_div,
        .doc = "div gradient: g, a, b -> g/b, -g*a/b^2 reduced to a's and "
               "b's shapes"},
    [TB_OP_matmul_backward] = {OP_ID(matmul_backward),
        BW_ROW(3, 2, tb_bw_shape_matmul, TOL_ACC),
        .doc = "matmul gradient: g, a, b -> g @ b^T, a^T @ g"},
    [TB_OP_linear_backward] = {OP_ID(linear_backward),
        BW_ROW(4, 3, tb_bw_shape_linear, TOL_ACC),
        .doc = "linear (relu(x@W+b)) gradient: g, x, W, y (the forward "
               "output) -> dx, dW, db with gz = g*(y > 0)"},
    [TB_OP_nll_loss] = {OP_ID(nll_loss),
        BW_ROW(2, 1, tb_bw_shape_nll, TOL_ACC),
        .domain = domain_bw_nll,
        .doc = "negative log-likelihood, mean over the batch: logp [N,C], "
               "target [N] (class indices as values) -> scalar; "
               "cross-entropy is log_softmax then nll_loss"},
    [TB_OP_nll_loss_backward] = {OP_ID(nll_loss_backward),
        BW_ROW(3, 1, tb_bw_shape_nll_backward, TOL_EW),
        .domain = domain_bw_nll_backward,
        .doc = "nll_loss gradient: g (scalar), logp, target -> dlogp, -g/N "
               "at each row's target"},
    [TB_OP_max_pool2d_backward] = {OP_ID(max_pool2d_backward),
        BW_ROW(2, 1, tb_bw_shape_pool2d, TOL_ACC), .n_params = 3,
        .params = params_pool,
        .doc = "max_pool2d gradient: g, x -> dx, g routed to the first "
               "largest element of each window"},
    [TB_OP_avg_pool2d_backward] = {OP_ID(avg_pool2d_backward),
        BW_ROW(2, 1, tb_bw_shape_pool2d, TOL_ACC), .n_params = 3,
        .params = params_pool,
        .doc = "avg_pool2d gradient: g, x -> dx, g/kernel^2 spread over "
               "each window"},
    [TB_OP_conv2d_backward] = {OP_ID(conv2d_backward),
        BW_ROW(3, 3, tb_bw_shape_conv2d, TOL_ACC), .n_params = 3,
        .params = params_conv,
        .doc = "conv2d gradient: g, x, w -> dx, dw, db (the bias's "
               "gradient)"},

    /* workloads: model steps on the tape autograd (models.h) */
    [TB_OP_mlp_train_step] = {OP_ID(mlp_train_step),
        WL_ROW(5, params_train_step),
        .doc = "one MLP (K-256-128-10) training step on batch x [B, K]: "
               "forward, backward, sgd_momentum; out: the loss"},
    [TB_OP_mlp_infer_step] = {OP_ID(mlp_infer_step),
        WL_ROW(2, params_infer_step),
        .doc = "MLP inference on x [B, K]: log-probabilities [B, 10]"},
    [TB_OP_cnn_train_step] = {OP_ID(cnn_train_step),
        WL_ROW(5, params_train_step),
        .doc = "one CNN (conv 16, pool, conv 32, pool, linear 10) training "
               "step on x [B, 1, H, W]; out: the loss"},
    [TB_OP_cnn_infer_step] = {OP_ID(cnn_infer_step),
        WL_ROW(2, params_infer_step),
        .doc = "CNN inference on x [B, 1, H, W]: log-probabilities [B, 10]"},
    [TB_OP_api_add] = {OP_ID(api_add),
        .category = TB_CAT_WORKLOAD, .n_in = 2, .n_out = 1, .n_params = 2,
        .params = params_api, .shape = shape_broadcast,
        .flops = flops_per_out, .bytes = bytes_io, .tol = TOL_EW,
        .doc = "add called through an API layer (parameter layer), for the "
               "per-call cost of each layer"},

    /* copies between host and device memory (a device backend's); the
     * values are copy's (base), which the cpu backend runs for them */
    [TB_OP_copy_h2d] = {OP_FORM(copy_h2d, copy),
        .category = TB_CAT_TRANSFER, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_xfer, .shape = shape_same, .flops = flops_zero,
        .bytes = bytes_xfer, .tol = TOL_EXACT,
        .doc = "host to device copy of the input's bytes (parameter pinned: "
               "page-locked host memory)"},
    [TB_OP_copy_d2h] = {OP_FORM(copy_d2h, copy),
        .category = TB_CAT_TRANSFER, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_xfer, .shape = shape_same, .flops = flops_zero,
        .bytes = bytes_xfer, .tol = TOL_EXACT,
        .doc = "device to host copy of the input's bytes (parameter pinned: "
               "page-locked host memory)"},
    [TB_OP_copy_d2d] = {OP_FORM(copy_d2d, copy),
        .category = TB_CAT_TRANSFER, .n_in = 1, .n_out = 1,
        .shape = shape_same, .flops = flops_zero, .bytes = bytes_io,
        .tol = TOL_EXACT,
        .doc = "device to device copy of the input's bytes (one memcpy)"},
};

const tb_op *tb_op_get(tb_op_id id)
{
    return (unsigned)id < TB_OP_COUNT ? &op_table[id] : NULL;
}

const tb_op *tb_op_find(const char *name)
{
    for (int i = 0; name && i < TB_OP_COUNT; i++)
        if (strcmp(op_table[i].name, name) == 0)
            return &op_table[i];
    return NULL;
}

const char *tb_op_category_name(tb_op_category c)
{
    switch (c) {
    case TB_CAT_ELEMENTWISE: return "elementwise";
    case TB_CAT_ACTIVATION: return "activation";
    case TB_CAT_REDUCTION: return "reduction";
    case TB_CAT_SOFTMAX: return "softmax";
    case TB_CAT_MATMUL: return "matmul";
    case TB_CAT_LAYOUT: return "layout";
    case TB_CAT_FUSED: return "fused";
    case TB_CAT_CONV: return "conv";
    case TB_CAT_CREATION: return "creation";
    case TB_CAT_INPLACE: return "inplace";
    case TB_CAT_OPTIMIZER: return "optimizer";
    case TB_CAT_LINALG: return "linalg";
    case TB_CAT_UNFUSED: return "unfused";
    case TB_CAT_CALIB: return "calibration";
    case TB_CAT_BACKWARD: return "backward";
    case TB_CAT_WORKLOAD: return "workload";
    case TB_CAT_TRANSFER: return "transfer";
    }
    return "unknown";
}
