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
 *   - sums (sum, mean, matmul's dot products, log_softmax's sum of exps)
 *     use Neumaier-compensated summation in index order along the reduced
 *     axis, so results do not depend on the input strides and are close to
 *     the correctly rounded sum even for long or cancelling reductions;
 *   - relu(x) = x > 0 ? x : 0, except that NaN propagates (relu(NaN) is
 *     NaN, as in NumPy's maximum and PyTorch) and relu(-0.0) is +0.0. */
#include "ref.h"

#include <math.h>
#include <string.h>

#include "error.h"

/* ---- element access ----------------------------------------------------- */

/* Element at offset off (in elements) of a host f32/f64 tensor. */
static inline double load(const tb_tensor *t, int64_t off)
{
    if (t->dtype == TB_F32)
        return (double)((const float *)t->data)[off];
    return ((const double *)t->data)[off];
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

/* ---- compensated summation ---------------------------------------------- */

typedef struct ksum {
    double s, c;
} ksum;

static inline void ksum_add(ksum *k, double x)
{
    double t = k->s + x;
    if (fabs(k->s) >= fabs(x))
        k->c += (k->s - t) + x;
    else
        k->c += (x - t) + k->s;
    k->s = t;
}

/* Once the running sum is inf or NaN it stays so and the compensation
 * term is meaningless (inf - inf), so the plain sum is the answer. */
static inline double ksum_get(const ksum *k)
{
    return isfinite(k->s) ? k->s + k->c : k->s;
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

typedef enum { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV } bin_kind;

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
        ksum k = {0, 0};
        for (int64_t i = 0; i < n; i++, walk_next(&w))
            ksum_add(&k, load(x, w.off[0]));
        o[0] = mean ? ksum_get(&k) / (double)n : ksum_get(&k);
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
        ksum k = {0, 0};
        for (int64_t j = 0; j < len; j++)
            ksum_add(&k, load(x, w.off[0] + j * step));
        o[i] = mean ? ksum_get(&k) / (double)len : ksum_get(&k);
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
 * batch broadcasting).  Each output is a compensated dot product over k
 * in increasing order. */
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

    int64_t am = a->strides[nd - 2], ak = a->strides[nd - 1];
    int64_t bk = b->strides[nd - 2], bn = b->strides[nd - 1];
    int64_t ostr[TB_MAX_DIMS] = {0};
    contiguous_strides(nd, oshape, ostr);

    walk w;
    int64_t nbatch = walk_init(&w, nb, oshape, 3);
    memcpy(w.stride[0], a->strides, sizeof a->strides);
    memcpy(w.stride[1], b->strides, sizeof b->strides);
    memcpy(w.stride[2], ostr, sizeof ostr);
    double *o = out[0].data;
    for (int64_t bi = 0; bi < nbatch; bi++, walk_next(&w)) {
        for (int64_t m = 0; m < M; m++) {
            for (int64_t n = 0; n < N; n++) {
                ksum k = {0, 0};
                for (int64_t kk = 0; kk < K; kk++)
                    ksum_add(&k, load(a, w.off[0] + m * am + kk * ak) *
                                     load(b, w.off[1] + kk * bk + n * bn));
                o[w.off[2] + m * N + n] = ksum_get(&k);
            }
        }
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
int tb_ref_log_softmax(const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    const tb_tensor *x = &in[0];
    int rc, ax;
    if ((rc = check_in(x)))
        return rc;
    if ((rc = param_axis(p, TB_OP_log_softmax, 0, x->ndim, &ax)))
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
        ksum k = {0, 0};
        for (int64_t j = 0; j < len; j++)
            ksum_add(&k, exp(load(x, w.off[0] + j * step) - mx));
        double lse = log(ksum_get(&k));
        for (int64_t j = 0; j < len; j++)
            o[w.off[1] + j * ostep] =
                (load(x, w.off[0] + j * step) - mx) - lse;
    }
    return 0;
}
