/* Calibration ops: the scale, the shape rule, the cost model and the
 * reference kernels.  See calib.h. */
#include "calib.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "ref.h"

/* The cached scale as its bits; 0 (no double has those bits but +0.0,
 * which is never a valid scale) means not read yet. */
static _Atomic uint64_t scale_bits;

int tb_calib_scale_parse(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v) || !(v > 0) || v > 1000)
        return -1;
    *out = v;
    return 0;
}

const char *tb_calib_scale_env_error(void)
{
    const char *s = getenv("TBENCH_CALIB_SCALE");
    double v;
    if (!s || !*s || tb_calib_scale_parse(s, &v) == 0)
        return NULL;
    return s;
}

double tb_calib_scale(void)
{
    uint64_t b = atomic_load_explicit(&scale_bits, memory_order_relaxed);
    double v;
    if (b) {
        memcpy(&v, &b, sizeof v);
        return v;
    }
    if (tb_calib_scale_parse(getenv("TBENCH_CALIB_SCALE"), &v))
        v = 1.0;
    memcpy(&b, &v, sizeof b);
    atomic_store_explicit(&scale_bits, b, memory_order_relaxed);
    return v;
}

void tb_calib_scale_reload(void)
{
    atomic_store_explicit(&scale_bits, 0, memory_order_relaxed);
}

uint64_t tb_calib_steps(int64_t n, double scale)
{
    double s = nearbyint((double)n * scale);
    if (!(s >= 1))
        return 1;
    if (s >= 1.8e19)
        return UINT64_MAX;
    return (uint64_t)s;
}

int tb_calib_shape(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t errlen)
{
    (void)p;
    char s[96];
    if (in[0].ndim != 1 ||
        (op->id == TB_OP_calib_spin && in[0].dim[0] != 1)) {
        if (err && errlen)
            snprintf(err, errlen, "%s: the shape must be %s, got %s",
                     op->name, op->id == TB_OP_calib_spin ? "[1]" : "1-D [n]",
                     tb_shape_format(&in[0], s, sizeof s));
        return TB_ESHAPE;
    }
    *out = in[0];
    return 0;
}

double tb_calib_flops(const tb_op *op, const tb_shape *in,
                      const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)op, (void)in, (void)out, (void)p, (void)dt;
    return 0;
}

double tb_calib_bytes(const tb_op *op, const tb_shape *in,
                      const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)op, (void)in, (void)p;
    return (double)tb_shape_numel(&out[0]) * (double)tb_dtype_size(dt);
}

/* ---- reference kernels ----------------------------------------------- */

static int ref_out_ok(const tb_tensor *t)
{
    if (!t || t->dtype != TB_F64 || t->ndim != 1 || t->shape[0] < 1 ||
        !t->data || !tb_tensor_is_contiguous(t))
        return TB_EINVAL;
    return 0;
}

/* Written step by step from the definition in calib.h (the cpu kernel
 * is written separately, for speed): out[s mod n] gets the top 24 bits
 * of the value after step s, and elements no step reached are 0. */
int tb_ref_calib_work(const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    (void)in, (void)p;
    int rc = ref_out_ok(out);
    if (rc)
        return rc;
    double *o = out->data;
    int64_t n = out->shape[0];
    for (int64_t i = 0; i < n; i++)
        o[i] = 0;
    uint64_t steps = tb_calib_steps(n, tb_calib_scale());
    uint64_t x = TB_CALIB_SEED;
    for (uint64_t s = 0; s < steps; s++) {
        x = (x ^ (x >> 29)) * TB_CALIB_MUL + TB_CALIB_ADD;
        o[s % (uint64_t)n] = (double)(x >> 40);
    }
    return 0;
}

int tb_ref_calib_spin(const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    (void)in, (void)p;
    int rc = ref_out_ok(out);
    if (rc)
        return rc;
    ((double *)out->data)[0] = 0;
    return 0;
}
