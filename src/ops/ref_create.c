/* Reference kernels of the creation ops.  See ref.h for the contract.
 *
 * The ops without inputs (zeros, ones, full, arange, rand_uniform,
 * rand_normal) still need the case dtype: full rounds its value to it and
 * the random ops draw 24-bit uniforms for f32 (src/ops/rand.h).  They take
 * it from in[0].dtype, a header-only tensor (its data is never read);
 * in == NULL means f64.  For f32 they return the double value that the f32
 * kernel rounds once (so the op tolerance covers that one rounding);
 * for f64 the exact value the f64 kernel computes. */
#include "ref.h"

#include <string.h>

#include "../base/error.h"
#include "rand.h"

/* Output: contiguous f64 host tensor of the shape the op's rule gives
 * (the rule of a creation op is the identity on the one shape). */
static int out_ok(const tb_tensor *t)
{
    if (!t || t->dtype != TB_F64)
        return TB_EDTYPE;
    if (t->ndim < 1 || t->ndim > TB_MAX_DIMS)
        return TB_ESHAPE;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < 1)
            return TB_ESHAPE;
    if (!t->data || !tb_tensor_is_contiguous(t))
        return TB_EINVAL;
    return 0;
}

static int case_dtype(const tb_tensor *in, tb_dtype *dt)
{
    *dt = in ? in[0].dtype : TB_F64;
    return (unsigned)*dt < TB_DTYPE_COUNT ? 0 : TB_EDTYPE;
}

/* Parameter idx of op id: p's value if set, else the schema default. */
static double param(const tb_params *p, tb_op_id id, int idx)
{
    if (p && tb_params_has(p, idx))
        return p->v[idx];
    return tb_op_get(id)->params[idx].def;
}

/* v rounded to the dtype.  Through a volatile float: GCC 12 at -O2
 * folds two adjacent `(double)(float)x` round trips to nothing (its SLP
 * vectorizer drops the truncation), which would skip the rounding. */
static double to_dtype(double v, tb_dtype dt)
{
    return tb_dtype_round(dt, v);
}

static int fill(const tb_tensor *in, tb_tensor *out, double v)
{
    tb_dtype dt;
    int rc = case_dtype(in, &dt);
    if (rc || (rc = out_ok(out)))
        return rc;
    double *o = out->data;
    int64_t n = tb_tensor_numel(out);
    v = tb_dtype_round(dt, v); /* exact: the value as the dtype holds it */
    for (int64_t i = 0; i < n; i++)
        o[i] = v;
    return 0;
}

int tb_ref_zeros(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return fill(in, out, 0.0);
}

int tb_ref_ones(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return fill(in, out, 1.0);
}

int tb_ref_full(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return fill(in, out, param(p, TB_OP_full, 0));
}

/* start + i*step in double (i exact), both dtypes: f32 rounds it once. */
int tb_ref_arange(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    tb_dtype dt;
    int rc = case_dtype(in, &dt);
    if (rc || (rc = out_ok(out)))
        return rc;
    if (out->ndim != 1)
        return TB_ESHAPE;
    double start = param(p, TB_OP_arange, 0);
    double step = param(p, TB_OP_arange, 1);
    double *o = out->data;
    for (int64_t i = 0; i < out->shape[0]; i++)
        o[i] = start + (double)i * step;
    return 0;
}

/* Element i of random op id (rand_uniform: ab = low, high; rand_normal:
 * mean, sd) of the stream `key` in dtype dt. */
static double rand_value(tb_op_id id, tb_dtype dt, uint64_t key, int64_t i,
                         const double ab[2])
{
    if (id == TB_OP_rand_uniform)
        return tb_dtype_compute(dt) == TB_F32
                   ? tb_rand_uniform_f32(key, (uint64_t)i, ab[0], ab[1])
                   : tb_rand_uniform_f64(key, (uint64_t)i, ab[0], ab[1]);
    double z[2];
    tb_rand_normal_pair(key, (uint64_t)i / 2,
                        tb_dtype_compute(dt) == TB_F32, z);
    return ab[0] + ab[1] * z[i & 1];
}

/* The random ops: parameters 0 and 1 rounded to the dtype, the stream's
 * key from parameter 2 (the seed), every element from rand_value. */
static int rand_fill(const tb_tensor *in, tb_tensor *out,
                     const tb_params *p, tb_op_id id)
{
    tb_dtype dt;
    int rc = case_dtype(in, &dt);
    if (rc || (rc = out_ok(out)))
        return rc;
    const double ab[2] = {to_dtype(param(p, id, 0), dt),
                          to_dtype(param(p, id, 1), dt)};
    uint64_t key = tb_rand_key(tb_rand_seed(param(p, id, 2)));
    double *o = out->data;
    int64_t n = tb_tensor_numel(out);
    for (int64_t i = 0; i < n; i++)
        o[i] = rand_value(id, dt, key, i, ab);
    return 0;
}

int tb_ref_rand_uniform(const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    return rand_fill(in, out, p, TB_OP_rand_uniform);
}

int tb_ref_rand_normal(const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    return rand_fill(in, out, p, TB_OP_rand_normal);
}

/* dropout: x * (keep ? s : 0) in double, keep from the stream (rand.h),
 * s = 1 / (1 - p) as a kernel of the case dtype holds it (1 - p rounded
 * to the dtype, the reciprocal rounded again; PyTorch's noise.div_(1 -
 * p)); x * 0 keeps a NaN as PyTorch's product does. */
int tb_ref_dropout(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    int rc = out_ok(out);
    if (rc)
        return rc;
    if (!in || (unsigned)in[0].dtype >= TB_DTYPE_COUNT)
        return TB_EDTYPE;
    if (tb_tensor_numel(&in[0]) != tb_tensor_numel(out) || !in[0].data)
        return TB_ESHAPE;
    const tb_op *op = tb_op_get(TB_OP_dropout);
    tb_params full = p ? *p : (tb_params){0};
    tb_params_defaults(op, &full);
    const tb_dtype dt = in[0].dtype;
    const double s = tb_dtype_round(dt, 1 / tb_dtype_round(dt, 1 - full.v[0]));
    const uint64_t key = tb_rand_key(tb_rand_seed(full.v[1]));
    const uint64_t thr = tb_rand_keep_threshold(full.v[0]);
    double *o = out->data;
    for (int64_t i = 0; i < tb_tensor_numel(out); i++)
        o[i] = tb_tensor_get(&in[0], i) *
               (tb_rand_keep(key, (uint64_t)i, thr) ? s : 0.0);
    return 0;
}

/* Any dtype and strides in; the values, in row-major order. */
int tb_ref_copy(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    int rc = out_ok(out);
    if (rc)
        return rc;
    if (!in || (unsigned)in[0].dtype >= TB_DTYPE_COUNT)
        return TB_EDTYPE;
    if (in[0].ndim != out->ndim)
        return TB_ESHAPE;
    for (int d = 0; d < out->ndim; d++)
        if (in[0].shape[d] != out->shape[d])
            return TB_ESHAPE;
    if (!in[0].data)
        return TB_EINVAL;
    double *o = out->data;
    int64_t n = tb_tensor_numel(out);
    for (int64_t i = 0; i < n; i++)
        o[i] = tb_tensor_get(&in[0], i);
    return 0;
}
