/* Portable C kernels for the ops of issue 3.  See ops_ext.h.
 *
 * Layout of this file: operand checks (launches are counted through
 * tb_cpu_count_launch, cpu_internal.h); typed element
 * functions (one per op and dtype) and the loops generated from them; the
 * drivers per family (unary, broadcasting binary, reductions, softmax,
 * permute, linear, conv2d, pooling); the entry points (rows of kreg.h). */
#include "ops_ext.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "cpu_internal.h"
#include "kreg.h"

/* ------------------------------------------------------------------ */
/* Operand checks                                                       */
/* ------------------------------------------------------------------ */

static int64_t ext_numel(const tb_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

/* Count the launch, then check every operand and that the output has the
 * shape op's rule gives for these inputs and parameters (so no kernel
 * below can index past a buffer).  Returns 0 or a TB_E* code. */
int tb_cpu_ext_begin(void *ctx, tb_op_id id, tb_dtype dt,
                     const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    tb_cpu_count_launch(ctx);
    const tb_op *op = tb_op_get(id);
    if (!op || !in || !out)
        return TB_EINVAL;
    tb_shape ish[TB_MAX_INPUTS], osh[TB_MAX_OUTPUTS];
    int rc;
    for (int i = 0; i < op->n_in; i++) {
        if ((rc = tb_tensor_check_operand(&in[i], dt, 1)))
            return rc;
        ish[i] = tb_tensor_shape(&in[i]);
    }
    if ((rc = tb_op_infer(op, ish, op->n_in, p, osh, NULL, 0)))
        return rc;
    for (int i = 0; i < op->n_out; i++) {
        if (tb_tensor_check_operand(&out[i], dt, 0))
            return TB_EINVAL;
        tb_shape got = tb_tensor_shape(&out[i]);
        if (!tb_shape_equal(&got, &osh[i]))
            return TB_ESHAPE;
    }
    return 0;
}

#define ext_begin tb_cpu_ext_begin
#define ext_param tb_cpu_ext_param

/* Parameter idx of op id: p's value if set, else the schema default.
 * Only for non-optional parameters (the shape rule validated the value). */
double tb_cpu_ext_param(const tb_params *p, tb_op_id id, int idx)
{
    if (p && tb_params_has(p, idx))
        return p->v[idx];
    return tb_op_get(id)->params[idx].def;
}

/* ------------------------------------------------------------------ */
/* Element functions                                                    */
/* ------------------------------------------------------------------ */

/* Same stable forms as the reference kernels: sigmoid never computes
 * 1/(1+inf) for negative x; gelu uses erfc; gelu_tanh is x*sigmoid(2u),
 * equal to 0.5x(1+tanh u) without its cancellation for negative x. */
static inline float stable_sigmoid_f32(float x)
{
    if (x >= 0)
        return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

static inline double stable_sigmoid_f64(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

/* k: the op's float parameters, converted to the dtype. */
#define EXT_ELEM(T, SFX, SQRT, EXP, LOG, TANH, ERFC, LOG1P, FABS)          \
    static inline T neg_##SFX(T x, const T *k)                            \
    {                                                                     \
        (void)k;                                                          \
        return -x;                                                        \
    }                                                                     \
    static inline T abs_##SFX(T x, const T *k)                            \
    {                                                                     \
        (void)k;                                                          \
        return FABS(x);                                                   \
    }                                                                     \
    static inline T exp_##SFX(T x, const T *k)                            \
    {                                                                     \
        (void)k;                                                          \
        return EXP(x);                                                    \
    }                                                                     \
    static inline T log_##SFX(T x, const T *k)                            \
    {                                                                     \
        (void)k;                                                          \
        return LOG(x);                                                    \
    }                                                                     \
    static inline T sqrt_##SFX(T x, const T *k)                           \
    {                                                                     \
        (void)k;                                                          \
        return SQRT(x);                                                   \
    }                                                                     \
    static inline T rsqrt_##SFX(T x, const T *k)                          \
    {                                                                     \
        (void)k;                                                          \
        return (T)1 / SQRT(x);                                            \
    }                                                                     \
    /* the product is computed whatever the sign: a multiply only on   \
     * one side of ?: may trap, so gcc would keep a branch (mispredicted \
     * on random signs) instead of a vector select */                    \
    static inline T leaky_relu_##SFX(T x, const T *k)                     \
    {                                                                     \
        T y = k[0] * x;                                                   \
        return x > 0 ? x : y;                                             \
    }                                                                     \
    static inline T sigmoid_##SFX(T x, const T *k)                        \
    {                                                                     \
        (void)k;                                                          \
        return stable_sigmoid_##SFX(x);                                       \
    }                                                                     \
    static inline T tanh_##SFX(T x, const T *k)                           \
    {                                                                     \
        (void)k;                                                          \
        return TANH(x);                                                   \
    }                                                                     \
    static inline T gelu_##SFX(T x, const T *k)                           \
    {                                                                     \
        (void)k;                                                          \
        return (T)0.5 * x * ERFC(-x * (T)M_SQRT1_2);                      \
    }                                                                     \
    static inline T gelu_tanh_##SFX(T x, const T *k)                      \
    {                                                                     \
        (void)k;                                                          \
        const T c = (T)0.7978845608028654; /* sqrt(2/pi) */               \
        T u = c * (x + (T)0.044715 * x * x * x);                          \
        return x * stable_sigmoid_##SFX((T)2 * u);                            \
    }                                                                     \
    static inline T silu_##SFX(T x, const T *k)                           \
    {                                                                     \
        (void)k;                                                          \
        return x * stable_sigmoid_##SFX(x);                                   \
    }                                                                     \
    static inline T softplus_##SFX(T x, const T *k)                       \
    {                                                                     \
        T z = k[0] * x;                                                   \
        return z > k[1] ? x : LOG1P(EXP(z)) / k[0];                       \
    }                                                                     \
    static inline T add_scalar_##SFX(T x, const T *k)                     \
    {                                                                     \
        return x + k[0];                                                  \
    }                                                                     \
    static inline T sub_scalar_##SFX(T x, const T *k)                     \
    {                                                                     \
        return x - k[0];                                                  \
    }                                                                     \
    static inline T mul_scalar_##SFX(T x, const T *k)                     \
    {                                                                     \
        return x * k[0];                                                  \
    }                                                                     \
    static inline T div_scalar_##SFX(T x, const T *k)                     \
    {                                                                     \
        return x / k[0];                                                  \
    }                                                                     \
    /* binary */                                                          \
    static inline T pow_##SFX(T a, T b)                                   \
    {                                                                     \
        return POW_##SFX(a, b);                                           \
    }                                                                     \
    /* NaN in either operand gives NaN (a + b is then NaN); every value \
     * computed, then selected with | (not ||), so no branch */          \
    static inline T maximum_##SFX(T a, T b)                               \
    {                                                                     \
        T s = a + b, m = a >= b ? a : b;                                  \
        return ((a != a) | (b != b)) ? s : m;                             \
    }                                                                     \
    static inline T minimum_##SFX(T a, T b)                               \
    {                                                                     \
        T s = a + b, m = a <= b ? a : b;                                  \
        return ((a != a) | (b != b)) ? s : m;                             \
    }

#define POW_f32 powf
#define POW_f64 pow

EXT_ELEM(float, f32, sqrtf, expf, logf, tanhf, erfcf, log1pf, fabsf)
EXT_ELEM(double, f64, sqrt, exp, log, tanh, erfc, log1p, fabs)

/* ------------------------------------------------------------------ */
/* Unary driver                                                         */
/* ------------------------------------------------------------------ */

/* o[i] = f(x[i]) for i < n; k: the op's float parameters. */
typedef void (*ext_unary_loop)(const void *x, void *o, int64_t n,
                               const double *k);

#define EXT_UNARY_LOOP(NAME, T, SFX)                                      \
    static void NAME##_##SFX##_loop(const void *xv, void *ov, int64_t n,  \
                                    const double *kd)                     \
    {                                                                     \
        const T *restrict x = xv;                                         \
        T *restrict o = ov;                                               \
        const T k[2] = {(T)kd[0], (T)kd[1]};                              \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = NAME##_##SFX(x[i], k);                                 \
    }

static int ext_unary(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p, tb_op_id id, tb_dtype dt,
                     ext_unary_loop loop, int nk)
{
    int rc = ext_begin(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    double k[2] = {0, 0};
    for (int i = 0; i < nk; i++)
        k[i] = ext_param(p, id, i);
    loop(in[0].data, out[0].data, ext_numel(&in[0]), k);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Broadcasting binary driver                                           */
/* ------------------------------------------------------------------ */

/* o[i] = f(a[i*sa], b[i*sb]) for i < n (sa, sb are 0 or 1 for a
 * broadcast or a contiguous operand). */
typedef void (*ext_binary_loop)(const void *a, int64_t sa, const void *b,
                                int64_t sb, void *o, int64_t n);

#define EXT_BINARY_LOOP(NAME, T, SFX)                                     \
    static void NAME##_##SFX##_loop(const void *av, int64_t sa,           \
                                    const void *bv, int64_t sb, void *ov, \
                                    int64_t n)                            \
    {                                                                     \
        const T *restrict a = av;                                         \
        const T *restrict b = bv;                                         \
        T *restrict o = ov;                                               \
        if (sa == 1 && sb == 1) {                                         \
            for (int64_t i = 0; i < n; i++)                               \
                o[i] = NAME##_##SFX(a[i], b[i]);                          \
        } else {                                                          \
            for (int64_t i = 0; i < n; i++)                               \
                o[i] = NAME##_##SFX(a[i * sa], b[i * sb]);                \
        }                                                                 \
    }

/* Strides (in elements) of contiguous t read as the broadcast output
 * shape of nd dims: trailing dims aligned, 0 where t has size 1. */
static void ext_bcast_strides(const tb_tensor *t, int nd, int64_t *st)
{
    int64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        int j = d - (nd - t->ndim);
        if (j < 0 || t->shape[j] == 1) {
            st[d] = 0;
        } else {
            st[d] = s;
        }
        if (j >= 0)
            s *= t->shape[j];
    }
}

/* Broadcasting (ext_begin checked that the shapes broadcast to out): the
 * output's last dim is one loop call; an odometer walks the rest. */
static int ext_binary(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_op_id id, tb_dtype dt,
                      ext_binary_loop loop)
{
    int rc = ext_begin(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    const int nd = out->ndim;
    const size_t esz = tb_dtype_size(dt);
    int64_t sa[TB_MAX_DIMS] = {0}, sb[TB_MAX_DIMS] = {0};
    ext_bcast_strides(&in[0], nd, sa);
    ext_bcast_strides(&in[1], nd, sb);
    const int64_t inner = out->shape[nd - 1];
    const int64_t rows = ext_numel(out) / inner;
    int64_t idx[TB_MAX_DIMS] = {0}, oa = 0, ob = 0;
    const char *a = in[0].data, *b = in[1].data;
    char *o = out->data;
    for (int64_t r = 0; r < rows; r++) {
        loop(a + (size_t)oa * esz, sa[nd - 1], b + (size_t)ob * esz,
             sb[nd - 1], o + (size_t)(r * inner) * esz, inner);
        for (int d = nd - 2; d >= 0; d--) {
            oa += sa[d];
            ob += sb[d];
            if (++idx[d] < out->shape[d])
                break;
            oa -= sa[d] * out->shape[d];
            ob -= sb[d] * out->shape[d];
            idx[d] = 0;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Reductions and softmax: the input as [outer, len, inner]             */
/* ------------------------------------------------------------------ */

/* Lanes of a reduction over param 0 "axis" (absent: one lane of every
 * element).  Lane (o, i) starts at o*len*inner + i, step inner. */
typedef struct ext_lanes {
    int64_t outer, len, inner;
} ext_lanes;

static ext_lanes ext_lanes_of(const tb_tensor *x, const tb_params *p,
                              bool axis_optional, double axis_def)
{
    ext_lanes l = {1, ext_numel(x), 1};
    double a;
    if (p && tb_params_has(p, 0))
        a = p->v[0];
    else if (axis_optional)
        return l;
    else
        a = axis_def;
    int ax = 0;
    tb_axis_norm((int64_t)a, x->ndim, &ax); /* checked by ext_begin */
    l.outer = 1;
    for (int d = 0; d < ax; d++)
        l.outer *= x->shape[d];
    l.len = x->shape[ax];
    l.inner = 1;
    for (int d = ax + 1; d < x->ndim; d++)
        l.inner *= x->shape[d];
    return l;
}

/* Independent partial sums in a lane's double accumulations. */
#define EXT_ACC 8

/* 16-byte vectors of GCC's vector extension (clang has it too): portable
 * C that gcc turns into SSE2 on x86-64 and NEON on arm64.  gcc does not
 * vectorize a loop of several select-reductions by itself. */
typedef float ext_v4f __attribute__((vector_size(16)));
typedef int32_t ext_v4i __attribute__((vector_size(16)));
typedef double ext_v2d __attribute__((vector_size(16)));
typedef int64_t ext_v2l __attribute__((vector_size(16)));

/* A contiguous lane (step 1) of max or min: 4 vectors of independent
 * running extremes, selected without a branch; a NaN sticks in its
 * accumulator (nothing compares greater than it), and a lane that holds
 * one goes again through the scalar loop, which returns the first NaN.
 * Returns false (nothing written) for a lane with a NaN; len >= 16. */
#define EXT_EXTREME_CONTIG(T, VT, IT, SFX, NAME, OP)                      \
    static bool NAME##_contig_##SFX(const T *x, int64_t len, T *out)      \
    {                                                                     \
        enum { W = 16 / sizeof(T), K = 4 };                               \
        VT m[K];                                                          \
        for (int k = 0; k < K; k++)                                       \
            memcpy(&m[k], x + k * W, 16);                                 \
        int64_t j = K * W;                                                \
        for (; j + K * W <= len; j += K * W)                              \
            for (int k = 0; k < K; k++) {                                 \
                VT v;                                                     \
                memcpy(&v, x + j + k * W, 16);                            \
                IT sel = (v OP m[k]) | (v != v);                          \
                m[k] = (VT)(((IT)v & sel) | ((IT)m[k] & ~sel));           \
            }                                                             \
        T r[K * W];                                                       \
        memcpy(r, m, sizeof r);                                           \
        for (; j < len; j++)                                              \
            r[0] = ((x[j] OP r[0]) | (x[j] != x[j])) ? x[j] : r[0];       \
        for (int u = 0; u < K * W; u++)                                   \
            if (r[u] != r[u])                                             \
                return false;                                             \
        for (int u = 1; u < K * W; u++)                                   \
            r[0] = r[u] OP r[0] ? r[u] : r[0];                            \
        *out = r[0];                                                      \
        return true;                                                      \
    }

EXT_EXTREME_CONTIG(float, ext_v4f, ext_v4i, f32, max, >)
EXT_EXTREME_CONTIG(double, ext_v2d, ext_v2l, f64, max, >)
EXT_EXTREME_CONTIG(float, ext_v4f, ext_v4i, f32, min, <)
EXT_EXTREME_CONTIG(double, ext_v2d, ext_v2l, f64, min, <)

/* The first j < len with x[j] == v (v not NaN), checking blocks of 32
 * with a vectorizable OR before scanning one; len when there is none. */
#define EXT_FIND_CONTIG(T, SFX)                                           \
    static int64_t find_contig_##SFX(const T *x, int64_t len, T v)        \
    {                                                                     \
        int64_t j = 0;                                                    \
        for (; j + 32 <= len; j += 32) {                                  \
            int hit = 0;                                                  \
            for (int u = 0; u < 32; u++)                                  \
                hit |= x[j + u] == v;                                     \
            if (hit)                                                      \
                break;                                                    \
        }                                                                 \
        for (; j < len; j++)                                              \
            if (x[j] == v)                                                \
                return j;                                                 \
        return len;                                                       \
    }

EXT_FIND_CONTIG(float, f32)
EXT_FIND_CONTIG(double, f64)

/* One output per lane: *o = reduce(x[0], x[step], ... x[(len-1)*step]).
 * corr: var's correction. */
#define EXT_REDUCE_LANES(T, SFX)                                          \
    static T max_lane_##SFX(const T *x, int64_t len, int64_t step,        \
                            int64_t corr)                                 \
    {                                                                     \
        (void)corr;                                                       \
        T r;                                                              \
        if (step == 1 && len >= 2 * EXT_ACC && max_contig_##SFX(x, len, &r)) \
            return r;                                                     \
        T m = x[0];                                                       \
        for (int64_t j = 1; j < len; j++) {                               \
            T v = x[j * step];                                            \
            if (v > m || v != v)                                          \
                m = v; /* once NaN, nothing compares greater */           \
        }                                                                 \
        return m;                                                         \
    }                                                                     \
    static T min_lane_##SFX(const T *x, int64_t len, int64_t step,        \
                            int64_t corr)                                 \
    {                                                                     \
        (void)corr;                                                       \
        T r;                                                              \
        if (step == 1 && len >= 2 * EXT_ACC && min_contig_##SFX(x, len, &r)) \
            return r;                                                     \
        T m = x[0];                                                       \
        for (int64_t j = 1; j < len; j++) {                               \
            T v = x[j * step];                                            \
            if (v < m || v != v)                                          \
                m = v;                                                    \
        }                                                                 \
        return m;                                                         \
    }                                                                     \
    /* first maximum, or first NaN; the index as a value of T */          \
    static T argmax_lane_##SFX(const T *x, int64_t len, int64_t step,     \
                               int64_t corr)                              \
    {                                                                     \
        (void)corr;                                                       \
        T r;                                                              \
        /* contiguous without NaN: the maximum, then its first index */   \
        if (step == 1 && len >= 2 * EXT_ACC && max_contig_##SFX(x, len, &r)) \
            return (T)find_contig_##SFX(x, len, r);                       \
        T m = x[0];                                                       \
        int64_t at = 0;                                                   \
        for (int64_t j = 1; j < len && m == m; j++) {                     \
            T v = x[j * step];                                            \
            if (v > m || v != v) {                                        \
                m = v;                                                    \
                at = j;                                                   \
            }                                                             \
        }                                                                 \
        return (T)at;                                                     \
    }                                                                     \
    /* corrected two-pass variance, accumulated in double in EXT_ACC     \
     * independent partial sums (a single running sum would wait on the  \
     * add latency for every element) */                                  \
    static T var_lane_##SFX(const T *x, int64_t len, int64_t step,        \
                            int64_t corr)                                 \
    {                                                                     \
        double s[EXT_ACC] = {0}, d[EXT_ACC] = {0}, d2[EXT_ACC] = {0};     \
        int64_t j = 0;                                                    \
        for (; j + EXT_ACC <= len; j += EXT_ACC)                          \
            for (int u = 0; u < EXT_ACC; u++)                             \
                s[u] += (double)x[(j + u) * step];                        \
        for (; j < len; j++)                                              \
            s[0] += (double)x[j * step];                                  \
        for (int u = 1; u < EXT_ACC; u++)                                 \
            s[0] += s[u];                                                 \
        const double mean = s[0] / (double)len;                           \
        for (j = 0; j + EXT_ACC <= len; j += EXT_ACC)                     \
            for (int u = 0; u < EXT_ACC; u++) {                           \
                double t = (double)x[(j + u) * step] - mean;              \
                d[u] += t;                                                \
                d2[u] += t * t;                                           \
            }                                                             \
        for (; j < len; j++) {                                            \
            double t = (double)x[j * step] - mean;                        \
            d[0] += t;                                                    \
            d2[0] += t * t;                                               \
        }                                                                 \
        for (int u = 1; u < EXT_ACC; u++) {                               \
            d[0] += d[u];                                                 \
            d2[0] += d2[u];                                               \
        }                                                                 \
        return (T)((d2[0] - d[0] * d[0] / (double)len) /                  \
                   (double)(len - corr));                                 \
    }

EXT_REDUCE_LANES(float, f32)
EXT_REDUCE_LANES(double, f64)

/* Reductions over a non-last axis: w <= EXT_COLS adjacent lanes at once
 * (lane t reads x[j*step + t]), so each pass reads whole rows with unit
 * stride instead of striding through memory lane by lane.  Same results
 * as the lane functions up to the order of var's partial sums.
 * Accumulators live on the stack (no allocation in a kernel). */
#define EXT_COLS 256

#define EXT_REDUCE_COLS(T, SFX)                                           \
    static void max_cols_##SFX(const T *x, T *o, int64_t len,             \
                               int64_t step, int64_t w, int64_t corr)     \
    {                                                                     \
        (void)corr;                                                       \
        for (int64_t t = 0; t < w; t++)                                   \
            o[t] = x[t];                                                  \
        for (int64_t j = 1; j < len; j++)                                 \
            for (int64_t t = 0; t < w; t++) {                             \
                T v = x[j * step + t];                                    \
                if (v > o[t] || v != v)                                   \
                    o[t] = v;                                             \
            }                                                             \
    }                                                                     \
    static void min_cols_##SFX(const T *x, T *o, int64_t len,             \
                               int64_t step, int64_t w, int64_t corr)     \
    {                                                                     \
        (void)corr;                                                       \
        for (int64_t t = 0; t < w; t++)                                   \
            o[t] = x[t];                                                  \
        for (int64_t j = 1; j < len; j++)                                 \
            for (int64_t t = 0; t < w; t++) {                             \
                T v = x[j * step + t];                                    \
                if (v < o[t] || v != v)                                   \
                    o[t] = v;                                             \
            }                                                             \
    }                                                                     \
    /* a lane's NaN maximum is final: later NaNs do not move its index */ \
    static void argmax_cols_##SFX(const T *x, T *o, int64_t len,          \
                                  int64_t step, int64_t w, int64_t corr)  \
    {                                                                     \
        (void)corr;                                                       \
        T m[EXT_COLS];                                                    \
        int64_t at[EXT_COLS];                                             \
        for (int64_t t = 0; t < w; t++) {                                 \
            m[t] = x[t];                                                  \
            at[t] = 0;                                                    \
        }                                                                 \
        for (int64_t j = 1; j < len; j++)                                 \
            for (int64_t t = 0; t < w; t++) {                             \
                T v = x[j * step + t];                                    \
                if (v > m[t] || (v != v && m[t] == m[t])) {               \
                    m[t] = v;                                             \
                    at[t] = j;                                            \
                }                                                         \
            }                                                             \
        for (int64_t t = 0; t < w; t++)                                   \
            o[t] = (T)at[t];                                              \
    }                                                                     \
    static void var_cols_##SFX(const T *x, T *o, int64_t len,             \
                               int64_t step, int64_t w, int64_t corr)     \
    {                                                                     \
        double s[EXT_COLS], d[EXT_COLS], d2[EXT_COLS];                    \
        for (int64_t t = 0; t < w; t++)                                   \
            s[t] = d[t] = d2[t] = 0;                                      \
        for (int64_t j = 0; j < len; j++)                                 \
            for (int64_t t = 0; t < w; t++)                               \
                s[t] += (double)x[j * step + t];                          \
        for (int64_t t = 0; t < w; t++)                                   \
            s[t] /= (double)len; /* the mean */                           \
        for (int64_t j = 0; j < len; j++)                                 \
            for (int64_t t = 0; t < w; t++) {                             \
                double u = (double)x[j * step + t] - s[t];                \
                d[t] += u;                                                \
                d2[t] += u * u;                                           \
            }                                                             \
        for (int64_t t = 0; t < w; t++)                                   \
            o[t] = (T)((d2[t] - d[t] * d[t] / (double)len) /              \
                       (double)(len - corr));                             \
    }

EXT_REDUCE_COLS(float, f32)
EXT_REDUCE_COLS(double, f64)

typedef float (*ext_lane_f32)(const float *, int64_t, int64_t, int64_t);
typedef double (*ext_lane_f64)(const double *, int64_t, int64_t, int64_t);
typedef void (*ext_cols_fn)(const void *x, void *o, int64_t len,
                            int64_t step, int64_t w, int64_t corr);

/* max/min/argmax/var: params 0 axis (optional), 1 keepdim, 2 correction
 * (var).  Output element (o, i) is lane (o, i): the row-major order of
 * the output with or without the kept dim.  Contiguous lanes (the last
 * axis, or all elements) go one by one; lanes of a non-last axis go
 * EXT_COLS at a time. */
static int ext_reduce(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_op_id id, tb_dtype dt,
                      ext_lane_f32 f32, ext_lane_f64 f64, ext_cols_fn cols)
{
    int rc = ext_begin(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    ext_lanes l = ext_lanes_of(&in[0], p, true, 0);
    int64_t corr = id == TB_OP_var ? (int64_t)ext_param(p, id, 2) : 0;
    const size_t esz = tb_dtype_size(dt);
    for (int64_t o = 0; o < l.outer; o++) {
        if (l.inner > 1) {
            for (int64_t i = 0; i < l.inner; i += EXT_COLS) {
                int64_t w = l.inner - i < EXT_COLS ? l.inner - i : EXT_COLS;
                cols((const char *)in[0].data +
                         (size_t)(o * l.len * l.inner + i) * esz,
                     (char *)out->data + (size_t)(o * l.inner + i) * esz,
                     l.len, l.inner, w, corr);
            }
            continue;
        }
        if (dt == TB_F32)
            ((float *)out->data)[o] =
                f32((const float *)in[0].data + o * l.len, l.len, 1, corr);
        else
            ((double *)out->data)[o] =
                f64((const double *)in[0].data + o * l.len, l.len, 1, corr);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* permute                                                              */
/* ------------------------------------------------------------------ */

/* Blocked form of a permute that moves the input's contiguous dim:
 * q is the output dim the input's unit stride lands on (q < nd - 1), so
 * for each index of the other output dims the (q, last) plane is a 2-D
 * transpose (input: unit stride along q, stride st[nd - 1] along the
 * last; output: stride ostq along q, unit along the last), done in
 * PERM_TILE x PERM_TILE tiles that stay in L1 (as transpose does): each
 * tile reads PERM_TILE input lines and writes PERM_TILE output rows
 * (the inner loop along the output's unit stride) instead of touching
 * one input line per element.  16: 8 and 16 measured alike, 32 slower
 * (power-of-two strides put more of a tile's lines in one L1 set).
 * Values are copies either way. */
#define PERM_TILE 16
#define EXT_PERM_TILED(T, SFX)                                            \
    static void perm_tiled_##SFX(const T *restrict x, T *restrict o,      \
                                 int64_t ni, int64_t nj, int64_t is,      \
                                 int64_t ostq)                            \
    {                                                                     \
        for (int64_t i0 = 0; i0 < ni; i0 += PERM_TILE) {                  \
            const int64_t i1 = i0 + PERM_TILE < ni ? i0 + PERM_TILE : ni; \
            for (int64_t j0 = 0; j0 < nj; j0 += PERM_TILE) {              \
                const int64_t j1 =                                        \
                    j0 + PERM_TILE < nj ? j0 + PERM_TILE : nj;            \
                for (int64_t i = i0; i < i1; i++)                         \
                    for (int64_t j = j0; j < j1; j++)                     \
                        o[i * ostq + j] = x[i + j * is];                  \
            }                                                             \
        }                                                                 \
    }
EXT_PERM_TILED(float, f32)
EXT_PERM_TILED(double, f64)
#undef EXT_PERM_TILED

static void ext_permute_tiled(const tb_tensor *x, tb_tensor *out,
                              const int64_t *st, int q, tb_dtype dt,
                              tb_cpu_perm_tile_fn tile)
{
    const int nd = out->ndim;
    int64_t ost[TB_MAX_DIMS];
    ost[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--)
        ost[d] = ost[d + 1] * out->shape[d + 1];
    const int64_t ni = out->shape[q], nj = out->shape[nd - 1];
    const int64_t planes = ext_numel(out) / (ni * nj);
    int64_t idx[TB_MAX_DIMS] = {0}, xo = 0, oo = 0;
    for (int64_t r = 0; r < planes; r++) {
        if (dt == TB_F32)
            tile((const float *)x->data + xo, (float *)out->data + oo, ni,
                 nj, st[nd - 1], ost[q]);
        else
            perm_tiled_f64((const double *)x->data + xo,
                           (double *)out->data + oo, ni, nj, st[nd - 1],
                           ost[q]);
        for (int d = nd - 2; d >= 0; d--) { /* odometer, q left out */
            if (d == q)
                continue;
            xo += st[d];
            oo += ost[d];
            if (++idx[d] < out->shape[d])
                break;
            xo -= st[d] * out->shape[d];
            oo -= ost[d] * out->shape[d];
            idx[d] = 0;
        }
    }
}

/* Output in row-major order; the input is read through its strides
 * permuted.  The last output dim is one strided copy loop, unless the
 * input's contiguous dim moves elsewhere (then ext_permute_tiled, f32's
 * planes by tile: perm_tiled_f32 or a SIMD row's). */
static int ext_permute_with(void *ctx, const tb_tensor *in, tb_tensor *out,
                            const tb_params *p, tb_dtype dt,
                            tb_cpu_perm_tile_fn tile)
{
    int rc = ext_begin(ctx, TB_OP_permute, dt, in, out, p);
    if (rc)
        return rc;
    const tb_tensor *x = &in[0];
    const int nd = x->ndim;
    int perm[TB_MAX_DIMS];
    if (tb_permute_dims(p, nd, perm, NULL, 0))
        return TB_EPARAM;
    int64_t st[TB_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++)
        st[d] = x->strides[perm[d]];
    for (int q = 0; q < nd - 1; q++)
        if (st[q] == 1 && out->shape[q] > 1 && out->shape[nd - 1] > 1 &&
            st[nd - 1] != 1) {
            ext_permute_tiled(x, out, st, q, dt, tile);
            return 0;
        }
    const int64_t inner = out->shape[nd - 1], is = st[nd - 1];
    const int64_t rows = ext_numel(out) / inner;
    int64_t idx[TB_MAX_DIMS] = {0}, off = 0;
    for (int64_t r = 0; r < rows; r++) {
        if (dt == TB_F32) {
            const float *restrict s = (const float *)x->data + off;
            float *restrict o = (float *)out->data + r * inner;
            for (int64_t j = 0; j < inner; j++)
                o[j] = s[j * is];
        } else {
            const double *restrict s = (const double *)x->data + off;
            double *restrict o = (double *)out->data + r * inner;
            for (int64_t j = 0; j < inner; j++)
                o[j] = s[j * is];
        }
        for (int d = nd - 2; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < out->shape[d])
                break;
            off -= st[d] * out->shape[d];
            idx[d] = 0;
        }
    }
    return 0;
}

static int ext_permute(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_dtype dt)
{
    return ext_permute_with(ctx, in, out, p, dt, perm_tiled_f32);
}

int tb_cpu_ext_permute_f32(void *ctx, const tb_tensor *in, tb_tensor *out,
                           const tb_params *p, tb_cpu_perm_tile_fn tile)
{
    return ext_permute_with(ctx, in, out, p, TB_F32, tile);
}

/* ------------------------------------------------------------------ */
/* Kernels and the table                                                */
/* ------------------------------------------------------------------ */

#define EXT_K_UNARY(NAME, NK)                                             \
    EXT_UNARY_LOOP(NAME, float, f32)                                      \
    EXT_UNARY_LOOP(NAME, double, f64)                                     \
    int tb_cpu_k_##NAME##_f32_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_unary(ctx, in, out, p, TB_OP_##NAME, TB_F32,           \
                         NAME##_f32_loop, NK);                            \
    }                                                                     \
    int tb_cpu_k_##NAME##_f64_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_unary(ctx, in, out, p, TB_OP_##NAME, TB_F64,           \
                         NAME##_f64_loop, NK);                            \
    }

/* The f64 row only: the f32 row of these ops is the element-wise driver's
 * (cpu.c over vmath.h), the one portable C version per op and dtype. */
#define EXT_K_UNARY_F64(NAME, NK)                                         \
    EXT_UNARY_LOOP(NAME, double, f64)                                     \
    int tb_cpu_k_##NAME##_f64_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_unary(ctx, in, out, p, TB_OP_##NAME, TB_F64,           \
                         NAME##_f64_loop, NK);                            \
    }

#define EXT_K_BINARY(NAME)                                                \
    EXT_BINARY_LOOP(NAME, float, f32)                                     \
    EXT_BINARY_LOOP(NAME, double, f64)                                    \
    int tb_cpu_k_##NAME##_f32_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_binary(ctx, in, out, p, TB_OP_##NAME, TB_F32,          \
                          NAME##_f32_loop);                               \
    }                                                                     \
    int tb_cpu_k_##NAME##_f64_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_binary(ctx, in, out, p, TB_OP_##NAME, TB_F64,          \
                          NAME##_f64_loop);                               \
    }

#define EXT_K_REDUCE(NAME)                                                \
    static void NAME##_cols_f32_v(const void *x, void *o, int64_t len,    \
                                  int64_t step, int64_t w, int64_t corr)  \
    {                                                                     \
        NAME##_cols_f32(x, o, len, step, w, corr);                        \
    }                                                                     \
    static void NAME##_cols_f64_v(const void *x, void *o, int64_t len,    \
                                  int64_t step, int64_t w, int64_t corr)  \
    {                                                                     \
        NAME##_cols_f64(x, o, len, step, w, corr);                        \
    }                                                                     \
    int tb_cpu_k_##NAME##_f32_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_reduce(ctx, in, out, p, TB_OP_##NAME, TB_F32,          \
                          NAME##_lane_f32, NAME##_lane_f64,               \
                          NAME##_cols_f32_v);                             \
    }                                                                     \
    int tb_cpu_k_##NAME##_f64_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_reduce(ctx, in, out, p, TB_OP_##NAME, TB_F64,          \
                          NAME##_lane_f32, NAME##_lane_f64,               \
                          NAME##_cols_f64_v);                             \
    }

/* Kernels whose driver takes (ctx, in, out, p, [id,] dt). */
#define EXT_K_CALL(NAME, CALL_F32, CALL_F64)                              \
    int tb_cpu_k_##NAME##_f32_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return CALL_F32;                                                  \
    }                                                                     \
    int tb_cpu_k_##NAME##_f64_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return CALL_F64;                                                  \
    }

EXT_K_UNARY(neg, 0)
EXT_K_UNARY(abs, 0)
EXT_K_UNARY_F64(exp, 0)
EXT_K_UNARY_F64(log, 0)
EXT_K_UNARY(sqrt, 0)
EXT_K_UNARY(rsqrt, 0)
EXT_K_UNARY(leaky_relu, 1)
EXT_K_UNARY_F64(sigmoid, 0)
EXT_K_UNARY_F64(tanh, 0)
EXT_K_UNARY_F64(gelu, 0)
EXT_K_UNARY_F64(gelu_tanh, 0)
EXT_K_UNARY_F64(silu, 0)
EXT_K_UNARY(softplus, 2)
EXT_K_UNARY(add_scalar, 1)
EXT_K_UNARY(sub_scalar, 1)
EXT_K_UNARY(mul_scalar, 1)
EXT_K_UNARY(div_scalar, 1)
EXT_K_BINARY(pow)
EXT_K_BINARY(maximum)
EXT_K_BINARY(minimum)
EXT_K_REDUCE(max)
EXT_K_REDUCE(min)
EXT_K_REDUCE(argmax)
EXT_K_REDUCE(var)
EXT_K_CALL(permute, ext_permute(ctx, in, out, p, TB_F32),
           ext_permute(ctx, in, out, p, TB_F64))
