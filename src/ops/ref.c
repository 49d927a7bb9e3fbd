/* Reference kernels.  See ref.h for the contract.
 *
 * Every kernel follows the same pattern: check that the output tensors
 * have the shape the op's shape rule would have produced (defensive: the
 * harness already ran tb_op_infer), then walk the iteration space with an
 * odometer (struct walk) that carries one element offset per operand, so
 * inputs of any strides -- including 0 for broadcast dims -- are read
 * directly, without a flat-index division per element.
 *
 * Numerics, chosen once for all kernels:
 *   - every value is converted to double before any arithmetic;
 *   - sums (sum, mean, log_softmax's sum of exps) use Neumaier-compensated
 *     summation in index order along the reduced axis, so results do not
 *     depend on the input strides and are close to the correctly rounded
 *     sum even for long or cancelling reductions; matmul's and linear's
 *     dot products are blocked (ref_gemm.c: plain sums of 16 terms joined
 *     by TwoSum, within u |r| + 17 u sum |a_k b_k| in any order);
 *   - relu(x) = x > 0 ? x : 0, except that NaN propagates (relu(NaN) is
 *     NaN, as in NumPy's maximum and PyTorch) and relu(-0.0) is +0.0;
 *   - maximum/minimum, max/min and max_pool2d propagate NaN, and argmax
 *     points at the first NaN, as NumPy and PyTorch do;
 *   - transcendental functions come from the C library in double, in
 *     forms that do not cancel or overflow (sigmoid via exp(x)/(1+exp(x))
 *     for x < 0, gelu via erfc, gelu_tanh as x * sigmoid(2u)), so the
 *     reference is within a few double ulps of the exact value wherever
 *     the f32 result can be checked against it;
 *   - var uses the corrected two-pass algorithm with compensated sums. */
#include "ref.h"

#include <math.h>
#include <string.h>

#include "../base/error.h"
#include "alloc.h"
#include "ksum.h"

/* ---- element access ----------------------------------------------------- */

/* Element at offset off (in elements) of a host tensor. */
static inline double load(const tb_tensor *t, int64_t off)
{
    return tb_tensor_load(t, off);
}

/* Input must be a host tensor of a known dtype with sane dims. */
static int check_in(const tb_tensor *t)
{
    if ((unsigned)t->dtype >= TB_DTYPE_COUNT)
        return TB_EDTYPE;
    if (t->ndim < 0 || t->ndim > TB_MAX_DIMS)
        return TB_ESHAPE;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            return TB_ESHAPE;
        n *= t->shape[i];
    }
    if (n > 0 && !t->data)
        return TB_EINVAL;
    return 0;
}

/* Output must be a contiguous f64 tensor of exactly `shape`. */
static int check_out(const tb_tensor *t, int ndim, const int64_t *shape)
{
    if (t->dtype != TB_F64)
        return TB_EDTYPE;
    if (t->ndim != ndim)
        return TB_ESHAPE;
    int64_t stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (t->shape[i] != shape[i])
            return TB_ESHAPE;
        if (t->shape[i] != 1 && t->strides[i] != stride)
            return TB_EINVAL;
        stride *= t->shape[i];
    }
    if (stride > 0 && !t->data)
        return TB_EINVAL;
    return 0;
}

/* ---- the odometer ------------------------------------------------------- */

#define WALK_MAX_OPS 3

/* Visits every index of `shape` in row-major order.  off[k] is the element
 * offset of operand k at the current index, from its own strides. */
typedef struct walk {
    int ndim, nops;
    int64_t shape[TB_MAX_DIMS];
    int64_t idx[TB_MAX_DIMS];
    int64_t stride[WALK_MAX_OPS][TB_MAX_DIMS];
    int64_t off[WALK_MAX_OPS];
} walk;

/* Number of indices visited; strides must be set by the caller. */
static int64_t walk_init(walk *w, int ndim, const int64_t *shape, int nops)
{
    memset(w, 0, sizeof *w);
    w->ndim = ndim;
    w->nops = nops;
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        w->shape[d] = shape[d];
        n *= shape[d];
    }
    return n;
}

static void walk_next(walk *w)
{
    for (int d = w->ndim - 1; d >= 0; d--) {
        w->idx[d]++;
        for (int k = 0; k < w->nops; k++)
            w->off[k] += w->stride[k][d];
        if (w->idx[d] < w->shape[d])
            return;
        for (int k = 0; k < w->nops; k++)
            w->off[k] -= w->stride[k][d] * w->shape[d];
        w->idx[d] = 0;
    }
}

/* Row-major strides of a contiguous tensor of the given shape. */
static void contiguous_strides(int ndim, const int64_t *shape,
                               int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d];
    }
}

/* ---- parameters --------------------------------------------------------- */

/* Integer value of parameter idx of op `id`: the value in p if set, else
 * the schema's default.  The schema is the single source of defaults so
 * the kernels and the shape rules cannot disagree. */
static int param_int(const tb_params *p, tb_op_id id, int idx, int64_t *v)
{
    double x;
    if (tb_params_has(p, idx)) {
        x = p->v[idx];
    } else {
        const tb_op *op = tb_op_get(id);
        if (!op || idx >= op->n_params)
            return TB_EPARAM;
        x = op->params[idx].def;
    }
    if (!(x >= -1e9 && x <= 1e9) || x != floor(x))
        return TB_EPARAM;
    *v = (int64_t)x;
    return 0;
}

static int param_axis(const tb_params *p, tb_op_id id, int idx, int ndim,
                      int *ax)
{
    int64_t v;
    int rc = param_int(p, id, idx, &v);
    if (rc)
        return rc;
    return tb_axis_norm(v, ndim, ax) ? TB_EPARAM : 0;
}

/* ---- element-wise binary ops with broadcasting -------------------------- */

typedef enum {
    BIN_ADD,
    BIN_SUB,
    BIN_MUL,
    BIN_DIV,
    BIN_POW,
    BIN_MAX,
    BIN_MIN,
    BIN_ADD_RELU,
} bin_kind;

/* maximum/minimum: a NaN in either operand gives NaN (NumPy's maximum,
 * PyTorch's maximum), unlike C's fmax. */
static double nan_max(double x, double y)
{
    return isnan(x) || isnan(y) ? x + y : (x >= y ? x : y);
}

static double nan_min(double x, double y)
{
    return isnan(x) || isnan(y) ? x + y : (x <= y ? x : y);
}

/* relu as in tb_ref_relu: NaN passes, -0.0 and negatives give +0.0. */
static double relu_d(double v)
{
    return v > 0 ? v : (isnan(v) ? v : 0.0);
}

/* Strides of t aligned to an output of ndim dims and shape `shape`
 * (trailing dims aligned, as NumPy does): 0 where t broadcasts. */
static int broadcast_strides(const tb_tensor *t, int ndim,
                             const int64_t *shape, int64_t *strides)
{
    if (t->ndim > ndim)
        return TB_ESHAPE;
    for (int d = 0; d < ndim; d++) {
        int j = d - (ndim - t->ndim);
        if (j < 0 || t->shape[j] == 1)
            strides[d] = 0;
        else if (t->shape[j] == shape[d])
            strides[d] = t->strides[j];
        else
            return TB_ESHAPE;
    }
    return 0;
}

static int binary(const tb_tensor *in, tb_tensor *out, bin_kind kind)
{
    const tb_tensor *a = &in[0], *b = &in[1];
    int rc;
    if ((rc = check_in(a)) || (rc = check_in(b)))
        return rc;

    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    int64_t shape[TB_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++) {
        int ia = d - (nd - a->ndim), ib = d - (nd - b->ndim);
        int64_t da = ia >= 0 ? a->shape[ia] : 1;
        int64_t db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return TB_ESHAPE;
        shape[d] = da == 1 ? db : da;
    }
    if ((rc = check_out(&out[0], nd, shape)))
        return rc;

    walk w;
    int64_t n = walk_init(&w, nd, shape, 2);
    if ((rc = broadcast_strides(a, nd, shape, w.stride[0])) ||
        (rc = broadcast_strides(b, nd, shape, w.stride[1])))
        return rc;

    double *o = out[0].data;
    for (int64_t i = 0; i < n; i++, walk_next(&w)) {
        double x = load(a, w.off[0]), y = load(b, w.off[1]);
        switch (kind) {
        case BIN_ADD: o[i] = x + y; break;
        case BIN_SUB: o[i] = x - y; break;
        case BIN_MUL: o[i] = x * y; break;
        case BIN_DIV: o[i] = x / y; break;
        case BIN_POW: o[i] = pow(x, y); break;
        case BIN_MAX: o[i] = nan_max(x, y); break;
        case BIN_MIN: o[i] = nan_min(x, y); break;
        case BIN_ADD_RELU: o[i] = relu_d(x + y); break;
        }
    }
    return 0;
}

int tb_ref_add(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return binary(in, out, BIN_ADD);
}

int tb_ref_sub(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return binary(in, out, BIN_SUB);
}

int tb_ref_mul(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return binary(in, out, BIN_MUL);
}

int tb_ref_div(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return binary(in, out, BIN_DIV);
}

/* ---- relu --------------------------------------------------------------- */

int tb_ref_relu(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    const tb_tensor *x = &in[0];
    int rc;
    if ((rc = check_in(x)) || (rc = check_out(&out[0], x->ndim, x->shape)))
        return rc;

    walk w;
    int64_t n = walk_init(&w, x->ndim, x->shape, 1);
    memcpy(w.stride[0], x->strides, sizeof x->strides);
    double *o = out[0].data;
    for (int64_t i = 0; i < n; i++, walk_next(&w)) {
        double v = load(x, w.off[0]);
        /* NaN fails both comparisons and is passed through; -0.0 and
         * every negative number give +0.0. */
        o[i] = v > 0 ? v : (isnan(v) ? v : 0.0);
    }
    return 0;
}

/* ---- sum, mean ---------------------------------------------------------- */

/* sum/mean: param 0 "axis" (optional; absent = all elements), param 1
 * "keepdim".  Output shape as in op.c's shape rule: without an axis it is
 * 0-dim, or all ones with keepdim. */
static int reduce(const tb_tensor *in, tb_tensor *out, const tb_params *p,
                  tb_op_id id, bool mean)
{
    const tb_tensor *x = &in[0];
    int rc;
    if ((rc = check_in(x)))
        return rc;

    int64_t keep;
    if ((rc = param_int(p, id, 1, &keep)))
        return rc;

    /* No axis: one output, summing the whole input in row-major order.
     * With an axis: walk `outer` (the input shape with the reduced dim set
     * to 1); each visited index is the next output element and sums `len`
     * inputs `step` elements apart. */
    int64_t oshape[TB_MAX_DIMS] = {0};
    int ond = 0;
    double *o = out[0].data;

    if (!tb_params_has(p, 0)) {
        if (keep)
            for (int d = 0; d < x->ndim; d++)
                oshape[ond++] = 1;
        if ((rc = check_out(&out[0], ond, oshape)))
            return rc;
        walk w;
        int64_t n = walk_init(&w, x->ndim, x->shape, 1);
        memcpy(w.stride[0], x->strides, sizeof x->strides);
        tb_ksum k = {0, 0};
        for (int64_t i = 0; i < n; i++, walk_next(&w))
            tb_ksum_add(&k, load(x, w.off[0]));
        o[0] = mean ? tb_ksum_get(&k) / (double)n : tb_ksum_get(&k);
        return 0;
    }

    int ax;
    if ((rc = param_axis(p, id, 0, x->ndim, &ax)))
        return rc;
    for (int d = 0; d < x->ndim; d++) {
        if (d != ax)
            oshape[ond++] = x->shape[d];
        else if (keep)
            oshape[ond++] = 1;
    }
    if ((rc = check_out(&out[0], ond, oshape)))
        return rc;

    int64_t outer[TB_MAX_DIMS];
    memcpy(outer, x->shape, sizeof outer);
    outer[ax] = 1;
    int64_t len = x->shape[ax], step = x->strides[ax];

    walk w;
    int64_t n = walk_init(&w, x->ndim, outer, 1);
    memcpy(w.stride[0], x->strides, sizeof x->strides);
    for (int64_t i = 0; i < n; i++, walk_next(&w)) {
        tb_ksum k = {0, 0};
        for (int64_t j = 0; j < len; j++)
            tb_ksum_add(&k, load(x, w.off[0] + j * step));
        o[i] = mean ? tb_ksum_get(&k) / (double)len : tb_ksum_get(&k);
    }
    return 0;
}

int tb_ref_sum(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return reduce(in, out, p, TB_OP_sum, false);
}

int tb_ref_mean(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return reduce(in, out, p, TB_OP_mean, true);
}

/* ---- matmul ------------------------------------------------------------- */

/* [..., M, K] @ [..., K, N] -> [..., M, N]; batch dims must be equal (no
 * batch broadcasting).  Each output is a compensated dot product
 * (tb_ref_gemm, blocked). */
int tb_ref_matmul(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    const tb_tensor *a = &in[0], *b = &in[1];
    int rc;
    if ((rc = check_in(a)) || (rc = check_in(b)))
        return rc;
    int nd = a->ndim;
    if (nd < 2 || b->ndim != nd)
        return TB_ESHAPE;
    int nb = nd - 2;
    for (int d = 0; d < nb; d++)
        if (a->shape[d] != b->shape[d])
            return TB_ESHAPE;
    int64_t M = a->shape[nd - 2], K = a->shape[nd - 1];
    int64_t N = b->shape[nd - 1];
    if (b->shape[nd - 2] != K)
        return TB_ESHAPE;

    int64_t oshape[TB_MAX_DIMS];
    memcpy(oshape, a->shape, sizeof oshape);
    oshape[nd - 1] = N;
    if ((rc = check_out(&out[0], nd, oshape)))
        return rc;

    int64_t ostr[TB_MAX_DIMS] = {0};
    contiguous_strides(nd, oshape, ostr);

    walk w;
    int64_t nbatch = walk_init(&w, nb, oshape, 3);
    memcpy(w.stride[0], a->strides, sizeof a->strides);
    memcpy(w.stride[1], b->strides, sizeof b->strides);
    memcpy(w.stride[2], ostr, sizeof ostr);
    double *o = out[0].data;
    for (int64_t bi = 0; bi < nbatch; bi++, walk_next(&w)) {
        tb_ref_mat ma = {a, w.off[0], a->strides[nd - 2],
                         a->strides[nd - 1]};
        tb_ref_mat mb = {b, w.off[1], b->strides[nd - 2],
                         b->strides[nd - 1]};
        if ((rc = tb_ref_gemm(&ma, &mb, NULL, M, N, K, o + w.off[2])))
            return rc;
    }
    return 0;
}

/* ---- transpose ---------------------------------------------------------- */

/* params 0 "dim0", 1 "dim1" (defaults from the schema: -2, -1).  The
 * output is the input with those dims swapped, made contiguous. */
int tb_ref_transpose(const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    const tb_tensor *x = &in[0];
    int rc, d0, d1;
    if ((rc = check_in(x)))
        return rc;
    if ((rc = param_axis(p, TB_OP_transpose, 0, x->ndim, &d0)) ||
        (rc = param_axis(p, TB_OP_transpose, 1, x->ndim, &d1)))
        return rc;
    if (d0 == d1)
        return TB_EPARAM;

    int64_t oshape[TB_MAX_DIMS], istr[TB_MAX_DIMS];
    memcpy(oshape, x->shape, sizeof oshape);
    memcpy(istr, x->strides, sizeof istr);
    oshape[d0] = x->shape[d1];
    oshape[d1] = x->shape[d0];
    istr[d0] = x->strides[d1];
    istr[d1] = x->strides[d0];
    if ((rc = check_out(&out[0], x->ndim, oshape)))
        return rc;

    walk w;
    int64_t n = walk_init(&w, x->ndim, oshape, 1);
    memcpy(w.stride[0], istr, sizeof istr);
    double *o = out[0].data;
    for (int64_t i = 0; i < n; i++, walk_next(&w))
        o[i] = load(x, w.off[0]);
    return 0;
}

/* ---- log_softmax -------------------------------------------------------- */

/* param 0 "axis" (default from the schema: -1).  Per lane along the axis:
 * out = (x - max) - log(sum(exp(x - max))), all in double, so large
 * inputs (1000) do not overflow exp.  -inf entries give -inf (their exp is
 * 0) and leave the others as if absent.  A lane that is all -inf, or that
 * holds +inf or NaN, has no defined result and gives NaN in every
 * element (the formula's inf - inf). */
/* softmax and log_softmax along param 0 "axis" of x: per lane the max
 * m, a compensated sum s of exp(x - m), then exp(x - m) / s or
 * (x - m) - log(s), all in double. */
static int softmax_lanes(const tb_tensor *in, tb_tensor *out,
                         const tb_params *p, tb_op_id id, bool take_log)
{
    const tb_tensor *x = &in[0];
    int rc, ax;
    if ((rc = check_in(x)))
        return rc;
    if ((rc = param_axis(p, id, 0, x->ndim, &ax)))
        return rc;
    if ((rc = check_out(&out[0], x->ndim, x->shape)))
        return rc;

    int64_t ostr[TB_MAX_DIMS] = {0}, outer[TB_MAX_DIMS];
    contiguous_strides(x->ndim, x->shape, ostr);
    memcpy(outer, x->shape, sizeof outer);
    outer[ax] = 1;
    int64_t len = x->shape[ax], step = x->strides[ax], ostep = ostr[ax];

    walk w;
    int64_t n = walk_init(&w, x->ndim, outer, 2);
    memcpy(w.stride[0], x->strides, sizeof x->strides);
    memcpy(w.stride[1], ostr, sizeof ostr);
    double *o = out[0].data;
    for (int64_t i = 0; i < n; i++, walk_next(&w)) {
        /* A NaN is skipped by the max but poisons the sum below. */
        double mx = -INFINITY;
        for (int64_t j = 0; j < len; j++) {
            double v = load(x, w.off[0] + j * step);
            if (v > mx)
                mx = v;
        }
        tb_ksum k = {0, 0};
        for (int64_t j = 0; j < len; j++) {
            double e = exp(load(x, w.off[0] + j * step) - mx);
            if (!take_log)
                o[w.off[1] + j * ostep] = e;
            tb_ksum_add(&k, e);
        }
        double sum = tb_ksum_get(&k);
        if (take_log) {
            double lse = log(sum);
            for (int64_t j = 0; j < len; j++)
                o[w.off[1] + j * ostep] =
                    (load(x, w.off[0] + j * step) - mx) - lse;
        } else {
            for (int64_t j = 0; j < len; j++)
                o[w.off[1] + j * ostep] /= sum;
        }
    }
    return 0;
}

int tb_ref_log_softmax(const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    return softmax_lanes(in, out, p, TB_OP_log_softmax, true);
}

/* ======================================================================== */
/* Ops added for the complete library (issue 3).                            */
/* ======================================================================== */

/* Float parameter idx of op `id`: the value in p if set, else the schema's
 * default (same single source of defaults as param_int). */
static int param_float(const tb_params *p, tb_op_id id, int idx, double *v)
{
    if (tb_params_has(p, idx)) {
        *v = p->v[idx];
    } else {
        const tb_op *op = tb_op_get(id);
        if (!op || idx >= op->n_params)
            return TB_EPARAM;
        *v = op->params[idx].def;
    }
    return isfinite(*v) ? 0 : TB_EPARAM;
}

/* A constant applied to values of dtype dt, rounded as that dtype would
 * hold it (see ref.h). */
static double as_dtype(tb_dtype dt, double v)
{
    return tb_dtype_round(dt, v);
}

/* ---- binary: pow, maximum, minimum, add_relu ------------------------------ */

int tb_ref_pow(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return binary(in, out, BIN_POW);
}

int tb_ref_maximum(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return binary(in, out, BIN_MAX);
}

int tb_ref_minimum(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return binary(in, out, BIN_MIN);
}

/* relu(a + b) with broadcasting: the sum is rounded to double once, then
 * clamped as tb_ref_relu does. */
int tb_ref_add_relu(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return binary(in, out, BIN_ADD_RELU);
}

/* ---- unary element-wise ops ---------------------------------------------- */

/* k: the op's constants, already rounded to the input dtype. */
typedef double (*unary_fn)(double x, const double *k);

/* sigmoid without overflow: for x < 0, exp(x) / (1 + exp(x)) keeps full
 * relative accuracy down to the smallest results instead of computing
 * 1 / (1 + inf). */
static double sigmoid_d(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

static double u_neg(double x, const double *k)
{
    (void)k;
    return -x;
}

static double u_abs(double x, const double *k)
{
    (void)k;
    return fabs(x);
}

static double u_exp(double x, const double *k)
{
    (void)k;
    return exp(x);
}

static double u_log(double x, const double *k)
{
    (void)k;
    return log(x);
}

static double u_sqrt(double x, const double *k)
{
    (void)k;
    return sqrt(x);
}

/* 1/sqrt(x): rsqrt(+0) = +inf, rsqrt(-0) = -inf, as in PyTorch. */
static double u_rsqrt(double x, const double *k)
{
    (void)k;
    return 1.0 / sqrt(x);
}

/* x > 0 ? x : alpha * x, so NaN and -0.0 go through alpha * x. */
static double u_leaky_relu(double x, const double *k)
{
    return x > 0 ? x : k[0] * x;
}

static double u_sigmoid(double x, const double *k)
{
    (void)k;
    return sigmoid_d(x);
}

static double u_tanh(double x, const double *k)
{
    (void)k;
    return tanh(x);
}

/* x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), written with erfc so that it
 * keeps its relative accuracy for negative x where 1 + erf cancels.
 * gelu(-inf) is NaN (-inf * 0), as PyTorch's formula gives. */
static double u_gelu(double x, const double *k)
{
    (void)k;
    return 0.5 * x * erfc(-x * M_SQRT1_2);
}

/* 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed as
 * x * sigmoid(2u) (the same function: 1 + tanh(u) = 2 sigmoid(2u)), which
 * does not cancel for negative x. */
static double u_gelu_tanh(double x, const double *k)
{
    (void)k;
    const double c = 0.7978845608028654; /* sqrt(2 / pi) */
    double u = c * (x + 0.044715 * x * x * x);
    return x * sigmoid_d(2.0 * u);
}

/* x * sigmoid(x); silu(-inf) is NaN (-inf * 0), as in PyTorch. */
static double u_silu(double x, const double *k)
{
    (void)k;
    return x * sigmoid_d(x);
}

/* PyTorch's softplus: x where beta * x > threshold, else
 * log1p(exp(beta * x)) / beta.  k = {beta, threshold}. */
static double u_softplus(double x, const double *k)
{
    double z = k[0] * x;
    return z > k[1] ? x : log1p(exp(z)) / k[0];
}

/* PyTorch's hardswish: x * min(max(x + 3, 0), 6) / 6 (a NaN stays). */
static double u_hardswish(double x, const double *k)
{
    (void)k;
    double r = x + 3;
    r = r < 0 ? 0 : r > 6 ? 6 : r;
    return x * r / 6;
}

static double u_add_scalar(double x, const double *k)
{
    return x + k[0];
}

static double u_sub_scalar(double x, const double *k)
{
    return x - k[0];
}

static double u_mul_scalar(double x, const double *k)
{
    return x * k[0];
}

static double u_div_scalar(double x, const double *k)
{
    return x / k[0];
}

/* out = f(x, k) element by element; k holds the op's float parameters
 * 0..nk-1 (schema defaults when absent) rounded to x's dtype. */
static int unary(const tb_tensor *in, tb_tensor *out, const tb_params *p,
                 tb_op_id id, unary_fn f, int nk)
{
    const tb_tensor *x = &in[0];
    int rc;
    if ((rc = check_in(x)) || (rc = check_out(&out[0], x->ndim, x->shape)))
        return rc;
    double k[2] = {0, 0};
    for (int i = 0; i < nk; i++) {
        if ((rc = param_float(p, id, i, &k[i])))
            return rc;
        k[i] = as_dtype(x->dtype, k[i]);
    }

    walk w;
    int64_t n = walk_init(&w, x->ndim, x->shape, 1);
    memcpy(w.stride[0], x->strides, sizeof x->strides);
    double *o = out[0].data;
    for (int64_t i = 0; i < n; i++, walk_next(&w))
        o[i] = f(load(x, w.off[0]), k);
    return 0;
}

#define REF_UNARY(name, nk)                                               \
    int tb_ref_##name(const tb_tensor *in, tb_tensor *out,                \
                      const tb_params *p)                                 \
    {                                                                     \
        return unary(in, out, p, TB_OP_##name, u_##name, nk);             \
    }

REF_UNARY(neg, 0)
REF_UNARY(abs, 0)
REF_UNARY(exp, 0)
REF_UNARY(log, 0)
REF_UNARY(sqrt, 0)
REF_UNARY(rsqrt, 0)
REF_UNARY(leaky_relu, 1)
REF_UNARY(sigmoid, 0)
REF_UNARY(tanh, 0)
REF_UNARY(gelu, 0)
REF_UNARY(gelu_tanh, 0)
REF_UNARY(silu, 0)
REF_UNARY(softplus, 2)
REF_UNARY(hardswish, 0)
REF_UNARY(add_scalar, 1)
REF_UNARY(sub_scalar, 1)
REF_UNARY(mul_scalar, 1)
REF_UNARY(div_scalar, 1)

/* ---- reductions: max, min, argmax, var ----------------------------------- */

/* One lane of a reduction: `len` elements of x, visited in index order,
 * either `step` apart from `off` (along an axis) or, when `all`, every
 * element of x in row-major order (a global reduction of any strides). */
typedef struct lane {
    const tb_tensor *x;
    bool all;
    int64_t len, off, step, i;
    walk w;
} lane;

static void lane_rewind(lane *l)
{
    l->i = 0;
    if (l->all) {
        walk_init(&l->w, l->x->ndim, l->x->shape, 1);
        memcpy(l->w.stride[0], l->x->strides, sizeof l->x->strides);
    }
}

/* The next element; call at most len times after lane_rewind. */
static double lane_next(lane *l)
{
    double v;
    if (l->all) {
        v = load(l->x, l->w.off[0]);
        walk_next(&l->w);
    } else {
        v = load(l->x, l->off + l->i * l->step);
    }
    l->i++;
    return v;
}

/* Reduces one lane (len >= 1) into *res; returns 0 or a TB_E* code. */
typedef int (*lane_fn)(lane *l, const tb_params *p, tb_op_id id,
                       double *res);

/* max/min propagate NaN (np.max, torch.max); otherwise exact. */
static int lane_max(lane *l, const tb_params *p, tb_op_id id, double *res)
{
    (void)p, (void)id;
    double m = lane_next(l);
    for (int64_t j = 1; j < l->len; j++)
        m = nan_max(m, lane_next(l));
    *res = m;
    return 0;
}

static int lane_min(lane *l, const tb_params *p, tb_op_id id, double *res)
{
    (void)p, (void)id;
    double m = lane_next(l);
    for (int64_t j = 1; j < l->len; j++)
        m = nan_min(m, lane_next(l));
    *res = m;
    return 0;
}

/* Index (within the lane; the flat row-major index for a global argmax) of
 * the first maximum, or of the first NaN if there is one, as NumPy and
 * PyTorch answer. */
static int lane_argmax(lane *l, const tb_params *p, tb_op_id id,
                       double *res)
{
    (void)p, (void)id;
    double m = lane_next(l);
    int64_t at = 0;
    for (int64_t j = 1; j < l->len && !isnan(m); j++) {
        double v = lane_next(l);
        if (v > m || isnan(v)) {
            m = v;
            at = j;
        }
    }
    *res = (double)at;
    return 0;
}

/* var = sum((x - mean)^2) - (sum(x - mean))^2 / n, over (n - correction)
 * (the corrected two-pass algorithm, both sums compensated): accurate even
 * when the mean is large against the spread.  TB_EPARAM when
 * n <= correction (the shape rule rejects it first). */
static int lane_var(lane *l, const tb_params *p, tb_op_id id, double *res)
{
    int64_t corr;
    int rc = param_int(p, id, 2, &corr);
    if (rc)
        return rc;
    if (corr < 0 || l->len <= corr)
        return TB_EPARAM;
    tb_ksum s = {0, 0};
    lane_rewind(l);
    for (int64_t j = 0; j < l->len; j++)
        tb_ksum_add(&s, lane_next(l));
    double mean = tb_ksum_get(&s) / (double)l->len;
    tb_ksum d = {0, 0}, d2 = {0, 0};
    lane_rewind(l);
    for (int64_t j = 0; j < l->len; j++) {
        double t = lane_next(l) - mean;
        tb_ksum_add(&d, t);
        tb_ksum_add(&d2, t * t);
    }
    double c = tb_ksum_get(&d);
    *res = (tb_ksum_get(&d2) - c * c / (double)l->len) /
           (double)(l->len - corr);
    return 0;
}

/* Shared driver: param 0 "axis" (optional; absent = all elements), param
 * 1 "keepdim"; output shapes as shape_reduce in op.c. */
static int reduce_lanes(const tb_tensor *in, tb_tensor *out,
                        const tb_params *p, tb_op_id id, lane_fn f)
{
    const tb_tensor *x = &in[0];
    int rc;
    if ((rc = check_in(x)))
        return rc;
    int64_t keep;
    if ((rc = param_int(p, id, 1, &keep)))
        return rc;
    int64_t numel = 1;
    for (int d = 0; d < x->ndim; d++)
        numel *= x->shape[d];
    if (numel == 0)
        return TB_ESHAPE; /* max/min/argmax of nothing are undefined */

    int64_t oshape[TB_MAX_DIMS] = {0};
    int ond = 0;
    double *o = out[0].data;
    lane l;
    memset(&l, 0, sizeof l);
    l.x = x;

    if (!tb_params_has(p, 0)) {
        if (keep)
            for (int d = 0; d < x->ndim; d++)
                oshape[ond++] = 1;
        if ((rc = check_out(&out[0], ond, oshape)))
            return rc;
        l.all = true;
        l.len = numel;
        lane_rewind(&l);
        return f(&l, p, id, &o[0]);
    }

    int ax;
    if ((rc = param_axis(p, id, 0, x->ndim, &ax)))
        return rc;
    for (int d = 0; d < x->ndim; d++) {
        if (d != ax)
            oshape[ond++] = x->shape[d];
        else if (keep)
            oshape[ond++] = 1;
    }
    if ((rc = check_out(&out[0], ond, oshape)))
        return rc;

    int64_t outer[TB_MAX_DIMS];
    memcpy(outer, x->shape, sizeof outer);
    outer[ax] = 1;
    l.len = x->shape[ax];
    l.step = x->strides[ax];

    walk w;
    int64_t n = walk_init(&w, x->ndim, outer, 1);
    memcpy(w.stride[0], x->strides, sizeof x->strides);
    for (int64_t i = 0; i < n; i++, walk_next(&w)) {
        l.off = w.off[0];
        lane_rewind(&l);
        if ((rc = f(&l, p, id, &o[i])))
            return rc;
    }
    return 0;
}

int tb_ref_max(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return reduce_lanes(in, out, p, TB_OP_max, lane_max);
}

int tb_ref_min(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return reduce_lanes(in, out, p, TB_OP_min, lane_min);
}

int tb_ref_argmax(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return reduce_lanes(in, out, p, TB_OP_argmax, lane_argmax);
}

int tb_ref_var(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return reduce_lanes(in, out, p, TB_OP_var, lane_var);
}

/* ---- softmax ------------------------------------------------------------- */

/* param 0 "axis" (default -1).  Per lane: exp(x - max) / sum(exp(x - max))
 * in double, so large inputs do not overflow.  -inf entries give 0; a lane
 * that is all -inf, or holds +inf or NaN, gives NaN throughout (0/0 or
 * inf - inf), as PyTorch's softmax does. */
int tb_ref_softmax(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return softmax_lanes(in, out, p, TB_OP_softmax, false);
}

/* ---- permute ------------------------------------------------------------- */

/* params p0..p7 (see tb_permute_dims); output dim i is input dim perm[i],
 * made contiguous. */
int tb_ref_permute(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    const tb_tensor *x = &in[0];
    int rc, perm[TB_MAX_DIMS];
    if ((rc = check_in(x)))
        return rc;
    if (tb_permute_dims(p, x->ndim, perm, NULL, 0))
        return TB_EPARAM;
    int64_t oshape[TB_MAX_DIMS] = {0}, istr[TB_MAX_DIMS] = {0};
    for (int d = 0; d < x->ndim; d++) {
        oshape[d] = x->shape[perm[d]];
        istr[d] = x->strides[perm[d]];
    }
    if ((rc = check_out(&out[0], x->ndim, oshape)))
        return rc;
    walk w;
    int64_t n = walk_init(&w, x->ndim, oshape, 1);
    memcpy(w.stride[0], istr, sizeof istr);
    double *o = out[0].data;
    for (int64_t i = 0; i < n; i++, walk_next(&w))
        o[i] = load(x, w.off[0]);
    return 0;
}

/* ---- linear -------------------------------------------------------------- */

/* relu(x @ W + b): x [M, K], W [K, N], b [N] -> [M, N].  Each output is
 * one compensated sum of the bias and the K products (tb_ref_gemm), then
 * relu. */
int tb_ref_linear(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    const tb_tensor *x = &in[0], *wt = &in[1], *b = &in[2];
    int rc;
    if ((rc = check_in(x)) || (rc = check_in(wt)) || (rc = check_in(b)))
        return rc;
    if (x->ndim != 2 || wt->ndim != 2 || b->ndim != 1)
        return TB_ESHAPE;
    int64_t M = x->shape[0], K = x->shape[1], N = wt->shape[1];
    if (wt->shape[0] != K || b->shape[0] != N)
        return TB_ESHAPE;
    if ((rc = check_out(&out[0], 2, (int64_t[]){M, N})))
        return rc;
    double *bias = tb_alloc((size_t)(N > 0 ? N : 1) * sizeof *bias);
    if (!bias)
        return TB_ENOMEM;
    for (int64_t n = 0; n < N; n++)
        bias[n] = load(b, n * b->strides[0]);
    tb_ref_mat mx = {x, 0, x->strides[0], x->strides[1]};
    tb_ref_mat mw = {wt, 0, wt->strides[0], wt->strides[1]};
    double *o = out[0].data;
    rc = tb_ref_gemm(&mx, &mw, bias, M, N, K, o);
    tb_free(bias);
    for (int64_t i = 0; rc == 0 && i < M * N; i++)
        o[i] = relu_d(o[i]);
    return rc;
}

/* ---- conv2d and pooling -------------------------------------------------- */

/* conv2d params: 0 stride, 1 padding, 2 dilation (the same in both spatial
 * dims; zero padding).  x [N, C, H, W], w [O, C, KH, KW], optional b [O]
 * -> [N, O, OH, OW]; groups = 1.  Each output is a compensated sum of the
 * C*KH*KW products that fall inside the input (padding contributes 0),
 * then the bias. */
static int conv2d(const tb_tensor *in, tb_tensor *out, const tb_params *p,
                  tb_op_id id, bool has_bias)
{
    const tb_tensor *x = &in[0], *wt = &in[1];
    const tb_tensor *b = has_bias ? &in[2] : NULL;
    int rc;
    if ((rc = check_in(x)) || (rc = check_in(wt)) ||
        (b && (rc = check_in(b))))
        return rc;
    if (x->ndim != 4 || wt->ndim != 4 || (b && b->ndim != 1))
        return TB_ESHAPE;
    int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2],
            W = x->shape[3];
    int64_t O = wt->shape[0], KH = wt->shape[2], KW = wt->shape[3];
    if (wt->shape[1] != C || (b && b->shape[0] != O))
        return TB_ESHAPE;
    int64_t s, pad, dil;
    if ((rc = param_int(p, id, 0, &s)) || (rc = param_int(p, id, 1, &pad)) ||
        (rc = param_int(p, id, 2, &dil)))
        return rc;
    if (s < 1 || pad < 0 || dil < 1)
        return TB_EPARAM;
    if (KH < 1 || KW < 1)
        return TB_ESHAPE;
    int64_t OH = tb_window_out(H, KH, s, pad, dil);
    int64_t OW = tb_window_out(W, KW, s, pad, dil);
    if (OH < 1 || OW < 1)
        return TB_ESHAPE;
    if ((rc = check_out(&out[0], 4, (int64_t[]){N, O, OH, OW})))
        return rc;

    const int64_t *xs = x->strides, *ws = wt->strides;
    double *o = out[0].data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    tb_ksum k = {0, 0};
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t i = 0; i < KH; i++) {
                            int64_t ih = oh * s - pad + i * dil;
                            if (ih < 0 || ih >= H)
                                continue;
                            for (int64_t j = 0; j < KW; j++) {
                                int64_t iw = ow * s - pad + j * dil;
                                if (iw < 0 || iw >= W)
                                    continue;
                                tb_ksum_add(
                                    &k, load(x, n * xs[0] + c * xs[1] +
                                                    ih * xs[2] + iw * xs[3]) *
                                            load(wt, oc * ws[0] + c * ws[1] +
                                                         i * ws[2] +
                                                         j * ws[3]));
                            }
                        }
                    if (b)
                        tb_ksum_add(&k, load(b, oc * b->strides[0]));
                    o[((n * O + oc) * OH + oh) * OW + ow] = tb_ksum_get(&k);
                }
    return 0;
}

int tb_ref_conv2d(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return conv2d(in, out, p, TB_OP_conv2d, true);
}

int tb_ref_conv2d_nobias(const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    return conv2d(in, out, p, TB_OP_conv2d_nobias, false);
}

/* Pool params: 0 kernel, 1 stride (optional; absent = kernel), 2 padding
 * (<= kernel / 2, so every window holds at least one input element).
 * x [N, C, H, W] -> [N, C, OH, OW] (floor mode).  max: padding is -inf,
 * NaN propagates (PyTorch).  avg: the in-bounds sum over kernel^2, i.e.
 * padding counts as zeros (PyTorch's count_include_pad=True). */
static int pool2d(const tb_tensor *in, tb_tensor *out, const tb_params *p,
                  tb_op_id id, bool is_max)
{
    const tb_tensor *x = &in[0];
    int rc;
    if ((rc = check_in(x)))
        return rc;
    if (x->ndim != 4)
        return TB_ESHAPE;
    int64_t k, s, pad;
    if ((rc = param_int(p, id, 0, &k)) || (rc = param_int(p, id, 2, &pad)))
        return rc;
    if (tb_params_has(p, 1)) {
        if ((rc = param_int(p, id, 1, &s)))
            return rc;
    } else {
        s = k;
    }
    if (k < 1 || s < 1 || pad < 0 || 2 * pad > k)
        return TB_EPARAM;
    int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2],
            W = x->shape[3];
    int64_t OH = tb_window_out(H, k, s, pad, 1);
    int64_t OW = tb_window_out(W, k, s, pad, 1);
    if (OH < 1 || OW < 1)
        return TB_ESHAPE;
    if ((rc = check_out(&out[0], 4, (int64_t[]){N, C, OH, OW})))
        return rc;

    const int64_t *xs = x->strides;
    double *o = out[0].data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double m = -INFINITY;
                    tb_ksum acc = {0, 0};
                    for (int64_t i = 0; i < k; i++) {
                        int64_t ih = oh * s - pad + i;
                        if (ih < 0 || ih >= H)
                            continue;
                        for (int64_t j = 0; j < k; j++) {
                            int64_t iw = ow * s - pad + j;
                            if (iw < 0 || iw >= W)
                                continue;
                            double v = load(x, n * xs[0] + c * xs[1] +
                                                   ih * xs[2] + iw * xs[3]);
                            if (is_max)
                                m = nan_max(m, v);
                            else
                                tb_ksum_add(&acc, v);
                        }
                    }
                    o[((n * C + c) * OH + oh) * OW + ow] =
                        is_max ? m : tb_ksum_get(&acc) / (double)(k * k);
                }
    return 0;
}

int tb_ref_max_pool2d(const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    return pool2d(in, out, p, TB_OP_max_pool2d, true);
}

int tb_ref_avg_pool2d(const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    return pool2d(in, out, p, TB_OP_avg_pool2d, false);
}

/* ---- in-place forms and unfused compositions ----------------------------
 * The same values as the op they are a form of: the reference does not
 * care where a backend writes them or in how many kernels. */
#define TB_REF_SAME_AS(name, base)                                        \
    int tb_ref_##name(const tb_tensor *in, tb_tensor *out,                \
                      const tb_params *p)                                 \
    {                                                                     \
        return tb_ref_##base(in, out, p);                                 \
    }
TB_REF_SAME_AS(add_, add)
TB_REF_SAME_AS(sub_, sub)
TB_REF_SAME_AS(mul_, mul)
TB_REF_SAME_AS(div_, div)
TB_REF_SAME_AS(relu_, relu)
TB_REF_SAME_AS(add_relu_unfused, add_relu)
TB_REF_SAME_AS(linear_unfused, linear)
TB_REF_SAME_AS(log_softmax_unfused, log_softmax)
TB_REF_SAME_AS(cross_entropy_unfused, cross_entropy)
#undef TB_REF_SAME_AS
