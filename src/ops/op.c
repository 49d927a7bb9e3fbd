/* The op table and its shape rules and cost models.  See op.h. */
#include "op.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
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

int tb_op_infer(const tb_op *op, const tb_shape *in, int n_in,
                const tb_params *p, tb_shape *out, char *err, size_t errlen)
{
    if (n_in != op->n_in)
        return fail(err, errlen, TB_ESHAPE, "%s: expects %d input%s, got %d",
                    op->name, op->n_in, op->n_in == 1 ? "" : "s", n_in);
    for (int i = 0; i < n_in; i++) {
        if (in[i].ndim < 1 || in[i].ndim > TB_MAX_DIMS)
            return fail(err, errlen, TB_ESHAPE,
                        "%s: input %d has %d dims (allowed 1..%d)", op->name,
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
 * add (sum), then a subtract of the log-sum: 5 counted operations. */
static double flops_log_softmax(const tb_op *op, const tb_shape *in,
                                const tb_shape *out, const tb_params *p,
                                tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    return 5.0 * numel_d(&in[0]);
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
/* The divisor stays away from zero so the check measures the kernel,
 * not the conditioning of x / ~0. */
static const tb_domain domain_div[] = {{-1, 1}, {0.5, 2}};

/* ---- the table ----------------------------------------------------------- */

/* Tolerances: |got - ref| <= atol * sqrt(reduce_len) + rtol * |ref|.
 * f32 element-wise results are one rounding from the exact value
 * (half an ulp = 6e-8 relative); reductions and matmul accumulate
 * rounding that grows with the number of terms. */
#define TOL_EW {{1e-6, 1e-7}, {1e-14, 1e-15}}
#define TOL_ACC {{1e-5, 2e-6}, {1e-12, 1e-13}}

#define OP(nm, cat, nin, nout, np, pspec, dom, shp, fl, by, rl, tol, dc) \
    [TB_OP_##nm] = {TB_OP_##nm, #nm, cat, nin, nout, np, pspec, dom,  \
                    shp, fl, by, rl, tol, tb_ref_##nm, dc},

static const tb_op op_table[TB_OP_COUNT] = {
    OP(add, TB_CAT_ELEMENTWISE, 2, 1, 0, NULL, NULL, shape_broadcast,
       flops_per_out, bytes_io, NULL, TOL_EW, "a + b, NumPy broadcasting")
    OP(sub, TB_CAT_ELEMENTWISE, 2, 1, 0, NULL, NULL, shape_broadcast,
       flops_per_out, bytes_io, NULL, TOL_EW, "a - b, NumPy broadcasting")
    OP(mul, TB_CAT_ELEMENTWISE, 2, 1, 0, NULL, NULL, shape_broadcast,
       flops_per_out, bytes_io, NULL, TOL_EW, "a * b, NumPy broadcasting")
    OP(div, TB_CAT_ELEMENTWISE, 2, 1, 0, NULL, domain_div, shape_broadcast,
       flops_per_out, bytes_io, NULL, TOL_EW, "a / b, NumPy broadcasting")
    OP(relu, TB_CAT_ACTIVATION, 1, 1, 0, NULL, NULL, shape_same,
       flops_per_out, bytes_io, NULL, TOL_EW, "max(x, 0)")
    OP(sum, TB_CAT_REDUCTION, 1, 1, 2, params_reduce, NULL, shape_reduce,
       flops_reduce, bytes_io, rlen_reduce, TOL_ACC,
       "sum over all elements or along an axis")
    OP(mean, TB_CAT_REDUCTION, 1, 1, 2, params_reduce, NULL, shape_reduce,
       flops_reduce, bytes_io, rlen_reduce, TOL_ACC,
       "mean over all elements or along an axis")
    OP(matmul, TB_CAT_MATMUL, 2, 1, 0, NULL, NULL, shape_matmul,
       flops_matmul, bytes_io, rlen_matmul, TOL_ACC,
       "[...,M,K] @ [...,K,N], equal batch dims")
    OP(transpose, TB_CAT_LAYOUT, 1, 1, 2, params_transpose, NULL,
       shape_transpose, flops_zero, bytes_io, NULL, TOL_EW,
       "swap two dims, materialized")
    OP(log_softmax, TB_CAT_SOFTMAX, 1, 1, 1, params_axis, NULL,
       shape_axis_same, flops_log_softmax, bytes_io, rlen_axis, TOL_ACC,
       "x - log(sum(exp(x))) along an axis")
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
    }
    return "unknown";
}
