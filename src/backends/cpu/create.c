/* cpu backend: the creation ops (zeros, ones, full, arange, rand_uniform,
 * rand_normal, copy), f32 and f64, portable C.
 *
 * Every kernel writes a contiguous output in independent chunks, so large
 * outputs are split over the instance's threads (tb_cpu_parallel) with
 * chunk boundaries on 64-byte lines; element i's value never depends on
 * the split (the random ops are counter-based, src/ops/rand.h), so the
 * result is the same for any thread count.  zeros and copy are memset and
 * memcpy per chunk, which is as fast as the C library moves memory; the
 * other loops have no cross-iteration dependence and vectorize where the
 * compiler can (fills, arange; the 64-bit multiplies of the random
 * streams only with AVX-512DQ, which this portable file does not
 * assume).  The SIMD rows of the random ops (rand_simd.h) run their own
 * chunk loops through this file's checks and split (tb_cpu_create_rand),
 * with the same values. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/rand.h"
#include "../../ops/tensor.h"
#include "cpu_internal.h"
#include "kreg.h"
#include "rand_simd.h"

/* Chunk boundaries: whole 64-byte lines of either dtype (and even, so a
 * Box-Muller pair never straddles two parts). */
#define CR_ALIGN_BYTES 64

typedef struct cr_job {
    tb_op_id op;
    tb_dtype dt;
    void *out;
    const void *in; /* copy */
    int64_t n;
    double a, b;  /* value; start, step; low, high; mean, std */
    /* a, b rounded to float for the f32 random ops.  Kept as floats in
     * memory on purpose: GCC 12 at -O2 folds the pair
     * `x = (double)(float)x; y = (double)(float)y;` to nothing (its SLP
     * vectorizer drops the truncation), so the rounding must not be a
     * double-to-double round trip in one function. */
    float af, bf;
    uint64_t key; /* random stream */
    tb_cpu_rand_fn fn; /* a SIMD row's chunk loop (rand_simd.h), or NULL */
} cr_job;

/* ---- operand checks ------------------------------------------------------ */

/* A contiguous host tensor of dtype dt with positive dims and data. */
static int cr_operand(const tb_tensor *t, tb_dtype dt)
{
    if (!t || t->ndim < 1)
        return TB_EINVAL;
    return tb_tensor_check_operand(t, dt, 1);
}

/* The output (and copy's input) against the op's shape rule. */
static int cr_check(tb_op_id id, tb_dtype dt, const tb_tensor *in,
                    const tb_tensor *out)
{
    int rc = cr_operand(out, dt);
    if (rc)
        return rc;
    if (id == TB_OP_arange && out->ndim != 1)
        return TB_ESHAPE;
    if (id == TB_OP_copy) {
        if (!in || (rc = cr_operand(&in[0], dt)))
            return rc ? rc : TB_EINVAL;
        tb_shape a = tb_tensor_shape(&in[0]), b = tb_tensor_shape(out);
        if (!tb_shape_equal(&a, &b))
            return TB_ESHAPE;
    }
    return 0;
}

static double cr_param(const tb_params *p, tb_op_id id, int idx)
{
    if (p && tb_params_has(p, idx))
        return p->v[idx];
    return tb_op_get(id)->params[idx].def;
}

/* ---- loops, one chunk [b, e) each ---------------------------------------- */

static void cr_fill_f32(float *o, int64_t b, int64_t e, float v)
{
    for (int64_t i = b; i < e; i++)
        o[i] = v;
}

static void cr_fill_f64(double *o, int64_t b, int64_t e, double v)
{
    for (int64_t i = b; i < e; i++)
        o[i] = v;
}

/* Below 2^31 the index is converted through an int32_t: the same double
 * (both conversions are exact), but int32 -> double has a vector form in
 * every x86-64 (cvtdq2pd) where int64 -> double has none before
 * AVX-512DQ, so gcc vectorizes this loop (36 us -> a few at 65536). */
#define CR_ARANGE(T, SFX)                                                 \
    static void cr_arange_##SFX(T *o, int64_t b, int64_t e, double start, \
                                double step)                              \
    {                                                                     \
        const int64_t lim = e < INT32_MAX ? e : INT32_MAX;                \
        int64_t i = b;                                                    \
        if (i < lim) {                                                    \
            const int32_t k1 = (int32_t)lim;                              \
            for (int32_t k = (int32_t)i; k < k1; k++)                     \
                o[k] = (T)(start + (double)k * step);                     \
            i = lim;                                                      \
        }                                                                 \
        for (; i < e; i++)                                                \
            o[i] = (T)(start + (double)i * step);                         \
    }
CR_ARANGE(float, f32)
CR_ARANGE(double, f64)
#undef CR_ARANGE

/* lo, hi: the case's bounds rounded to float (rand.h). */
static void cr_uniform_f32(float *o, int64_t b, int64_t e, uint64_t key,
                           float lo, float hi)
{
    const double d = (double)hi - (double)lo;
    for (int64_t i = b; i < e; i++) {
        double u = (double)(tb_rand_bits(key, (uint64_t)i) >> 40) * 0x1.0p-24;
        o[i] = (float)(lo + d * u);
    }
}

static void cr_uniform_f64(double *o, int64_t b, int64_t e, uint64_t key,
                           double low, double high)
{
    const double d = high - low;
    for (int64_t i = b; i < e; i++) {
        double u = (double)(tb_rand_bits(key, (uint64_t)i) >> 11) * 0x1.0p-53;
        o[i] = low + d * u;
    }
}

/* [b, e) with b even (chunk boundaries are); the last pair of an odd n
 * writes its cos half only. */
#define CR_NORMAL(T, SFX, F32)                                            \
    static void cr_normal_##SFX(T *o, int64_t b, int64_t e, uint64_t key, \
                                double mean, double sd)                   \
    {                                                                     \
        for (int64_t i = b; i < e; i += 2) {                              \
            double z[2];                                                  \
            tb_rand_normal_pair(key, (uint64_t)i / 2, F32, z);            \
            o[i] = (T)(mean + sd * z[0]);                                 \
            if (i + 1 < e)                                                \
                o[i + 1] = (T)(mean + sd * z[1]);                         \
        }                                                                 \
    }
CR_NORMAL(float, f32, 1)
CR_NORMAL(double, f64, 0)
#undef CR_NORMAL

static void cr_task(void *arg, int part, int nparts)
{
    const cr_job *j = arg;
    const size_t es = tb_dtype_size(j->dt);
    int64_t b, e;
    tb_cpu_span(j->n, CR_ALIGN_BYTES / (int64_t)es, part, nparts, &b, &e);
    if (b >= e)
        return;
    const bool f32 = j->dt == TB_F32;
    if (j->fn) {
        /* the random ops' f32 constants are the floats (rand.h); the
         * 16-bit rows' too (their values are the f32 row's, narrowed) */
        const bool rf = j->dt != TB_F64 && (j->op == TB_OP_rand_uniform ||
                                            j->op == TB_OP_rand_normal);
        j->fn(j->out, b, e, j->key, rf ? (double)j->af : j->a,
              rf ? (double)j->bf : j->b);
        return;
    }
    switch (j->op) {
    case TB_OP_zeros:
        /* all-zero bytes are +0.0 in both dtypes */
        memset((char *)j->out + b * (int64_t)es, 0, (size_t)(e - b) * es);
        break;
    case TB_OP_copy:
        memcpy((char *)j->out + b * (int64_t)es,
               (const char *)j->in + b * (int64_t)es, (size_t)(e - b) * es);
        break;
    case TB_OP_ones:
    case TB_OP_full:
        if (f32)
            cr_fill_f32(j->out, b, e, (float)j->a);
        else
            cr_fill_f64(j->out, b, e, j->a);
        break;
    case TB_OP_arange:
        if (f32)
            cr_arange_f32(j->out, b, e, j->a, j->b);
        else
            cr_arange_f64(j->out, b, e, j->a, j->b);
        break;
    case TB_OP_rand_uniform:
        if (f32)
            cr_uniform_f32(j->out, b, e, j->key, j->af, j->bf);
        else
            cr_uniform_f64(j->out, b, e, j->key, j->a, j->b);
        break;
    case TB_OP_rand_normal:
        if (f32)
            cr_normal_f32(j->out, b, e, j->key, j->af, j->bf);
        else
            cr_normal_f64(j->out, b, e, j->key, j->a, j->b);
        break;
    default:
        break;
    }
}

/* Work weights for the threading threshold (elements of simple work):
 * a random draw costs ~5 simple operations, a Box-Muller pair a log, a
 * sqrt and a sincos (~CPU_EXP_WEIGHT-like). */
static int64_t cr_weight(tb_op_id id)
{
    switch (id) {
    case TB_OP_rand_uniform:
        return 4;
    case TB_OP_rand_normal:
        return 16;
    default:
        return 1;
    }
}

/* fn: the chunk loop of a SIMD row with its weight, or NULL (this
 * file's loops, cr_weight). */
static int cr_run_fn(void *ctx, tb_op_id id, tb_dtype dt,
                     const tb_tensor *in, tb_tensor *out, const tb_params *p,
                     int64_t weight, tb_cpu_rand_fn fn)
{
    tb_cpu_count_launch(ctx);
    if (!out)
        return TB_EINVAL;
    int rc = cr_check(id, dt, in, out);
    if (rc)
        return rc;
    cr_job j = {.op = id, .dt = dt, .out = out->data,
                .n = tb_tensor_numel(out), .fn = fn};
    switch (id) {
    case TB_OP_copy:
        j.in = in[0].data;
        if (j.in == j.out)
            return 0; /* copy onto itself: nothing to move */
        break;
    case TB_OP_ones:
        j.a = 1.0;
        break;
    case TB_OP_full:
        j.a = cr_param(p, id, 0);
        break;
    case TB_OP_arange:
        j.a = cr_param(p, id, 0);
        j.b = cr_param(p, id, 1);
        break;
    case TB_OP_rand_uniform:
    case TB_OP_rand_normal:
        j.a = cr_param(p, id, 0);
        j.b = cr_param(p, id, 1);
        j.af = (float)j.a; /* the f32 case's constants (rand.h) */
        j.bf = (float)j.b;
        j.key = tb_rand_key(tb_rand_seed(cr_param(p, id, 2)));
        break;
    default:
        break;
    }
    const int64_t line = CR_ALIGN_BYTES / (int64_t)tb_dtype_size(dt);
    tb_cpu_parallel(ctx, j.n * (fn ? weight : cr_weight(id)),
                    (j.n + line - 1) / line, cr_task, &j);
    return 0;
}

static int cr_run(void *ctx, tb_op_id id, tb_dtype dt, const tb_tensor *in,
                  tb_tensor *out, const tb_params *p)
{
    return cr_run_fn(ctx, id, dt, in, out, p, 0, NULL);
}

int tb_cpu_create_rand(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                       const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, int64_t weight,
                       tb_cpu_rand_fn fn)
{
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    return cr_run_fn(ctx, id, dt, in, out, p, weight, fn);
}

int tb_cpu_rand_half(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                     tb_tensor *out, const tb_params *p)
{
    tb_cpu_rand_fn fn = NULL;
#if TB_CPU_HAVE_AVX512
    if (isa == TB_ISA_AVX512)
        fn = tb_cpu_rand_half_fn_avx512(id, dt);
#endif
#if TB_CPU_HAVE_AVX2
    if (isa == TB_ISA_AVX2)
        fn = tb_cpu_rand_half_fn_avx2(id, dt);
#endif
    (void)isa;
    if (!fn)
        return 1;
    return cr_run_fn(ctx, id, dt, NULL, out, p,
                     id == TB_OP_rand_normal ? 4 : 1, fn);
}

/* ---- kernels and lookup ------------------------------------------------- */

/* The entry points of the creation family's C rows (kreg.h; its SIMD
 * rows are rand_simd.h's). */
#define CR_ENTRY(op, dt, sfx, c) CR_ENTRY_##sfx(op, dt)
#define CR_ENTRY_avx512(op, dt)
#define CR_ENTRY_avx2(op, dt)
#define CR_ENTRY_c(op, dt)                                                \
    int TB_CPU_KFN(op, dt, c)(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p)         \
    {                                                                     \
        return cr_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, p);       \
    }
TB_CPU_ROWS_CREATE(CR_ENTRY)
