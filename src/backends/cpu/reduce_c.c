/* The portable C rows of max, min, argmax and var in f32 and f64
 * (kreg.h's reduction family; their SIMD rows: ops_simd.h and
 * f64_simd_impl.h), over param 0 "axis" (absent: every element) with
 * keepdim (1) and var's correction (2).  Lanes accumulate in double where
 * their length is not bounded; a NaN makes max and min NaN (the first
 * NaN), argmax gives its first index; a NULL ctx is allowed. */
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
    ext_lanes l = {1, tb_tensor_numel(x), 1};
    double a;
    if (p && tb_params_has(p, 0))
        a = p->v[0];
    else if (axis_optional)
        return l;
    else
        a = axis_def;
    int ax = 0;
    tb_axis_norm((int64_t)a, x->ndim, &ax); /* checked by tb_cpu_begin_op */
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
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    ext_lanes l = ext_lanes_of(&in[0], p, true, 0);
    int64_t corr = id == TB_OP_var ? (int64_t)tb_cpu_param(p, id, 2) : 0;
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
/* Entry points (rows of kreg.h)                                        */
/* ------------------------------------------------------------------ */

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


EXT_K_REDUCE(max)
EXT_K_REDUCE(min)
EXT_K_REDUCE(argmax)
EXT_K_REDUCE(var)
