/* The inner loops of the SIMD rows of ops_simd.h, written once over
 * vmath_simd.h's vector helpers, for inclusion by ops_avx2.c and
 * ops_avx512.c only (each built with its level's flags).  Everything
 * here is static: no function built with one ISA's flags can be picked
 * by the linker for another's callers.  XS_ENTRIES(SFX, LV) defines
 * level LV's entry points (kreg.h's TB_CPU_ROWS_XS_ list). */
#ifndef TB_BACKENDS_CPU_OPS_SIMD_IMPL_H
#define TB_BACKENDS_CPU_OPS_SIMD_IMPL_H

#include <immintrin.h>
#include <stdint.h>

#include "kreg.h"
#include "ops_simd.h"
#include "vmath_simd.h"

#if VS_LANES == 16
static inline vf xs_sqrt(vf a) { return _mm512_sqrt_ps(a); }
#else
static inline vf xs_sqrt(vf a) { return _mm256_sqrt_ps(a); }
#endif

/* ---- element functions (k: the op's parameters as floats) ---------- */

static inline vf xs_sqrt_f(vf x, vf k0, vf k1)
{
    (void)k0, (void)k1;
    return xs_sqrt(x);
}

/* (T)1 / sqrt(x): two correctly rounded operations, as ops_ext.c. */
static inline vf xs_rsqrt_f(vf x, vf k0, vf k1)
{
    (void)k1;
    (void)k0;
    return v_div(v_set1(1.0f), xs_sqrt(x));
}

/* x > 0 ? x : alpha x (NaN: alpha NaN, a NaN, as ops_ext.c). */
static inline vf xs_leaky_relu_f(vf x, vf k0, vf k1)
{
    (void)k1;
    return v_sel(v_gt(x, v_set1(0.0f)), x, v_mul(k0, x));
}

/* z = beta x; z > threshold ? x : (max(z, 0) + log1p(exp(-|z|))) / beta.
 * e = exp(-|z|) in [0, 1] (NaN for NaN), u = 1 + e rounded; u - 1 is
 * exact (Sterbenz), so e - (u - 1) is u's rounding error c, and
 * log1p(e) = log(u) + log1p(c / u) = log(u) + c / u to far below an
 * ulp.  For e < 2^-24 (z < -16.6), u = 1 and log1p(e) = e exactly as
 * wanted.  NaN x: z NaN, not above the threshold, e NaN -> NaN; x = inf
 * is above any threshold; x = -inf: e = 0, y = 0. */
static inline vf xs_softplus_f(vf x, vf beta, vf thr)
{
    const vf one = v_set1(1.0f);
    vf z = v_mul(beta, x);
    vf e = vs_exp(v_neg(v_abs(z)));
    vf u = v_add(one, e);
    vf c = v_sub(e, v_sub(u, one));
    vf l = v_add(vs_log(u), v_div(c, u));
    /* v_max returns its second operand, z, for a NaN z */
    vf y = v_div(v_add(v_max(v_set1(0.0f), z), l), beta);
    return v_sel(v_gt(z, thr), x, y);
}

/* NaN in either operand gives a + b (a NaN), else the larger/smaller
 * (a on ties: a >= b, a <= b), bit for bit ops_ext.c's. */
static inline vf xs_maximum_f(vf a, vf b)
{
    vf m = v_sel(v_le(b, a), a, b);
    return v_sel(v_unord(a, b), v_add(a, b), m);
}

static inline vf xs_minimum_f(vf a, vf b)
{
    vf m = v_sel(v_le(a, b), a, b);
    return v_sel(v_unord(a, b), v_add(a, b), m);
}

/* ---- loops ---------------------------------------------------------- */

/* Two vectors per iteration, then one, then a masked tail that touches
 * no byte past x[n) / o[n). */
#define XS_UNARY_LOOP(NAME, SFX)                                          \
    static void xs_##NAME##_loop_##SFX(const void *xv, void *ov,          \
                                       int64_t n, const double *kd)       \
    {                                                                     \
        const float *x = xv;                                              \
        float *o = ov;                                                    \
        const vf k0 = v_set1((float)kd[0]), k1 = v_set1((float)kd[1]);    \
        int64_t i = 0;                                                    \
        for (; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {                \
            vf a = v_load(x + i), b = v_load(x + i + VS_LANES);           \
            v_store(o + i, xs_##NAME##_f(a, k0, k1));                     \
            v_store(o + i + VS_LANES, xs_##NAME##_f(b, k0, k1));          \
        }                                                                 \
        for (; i + VS_LANES <= n; i += VS_LANES)                          \
            v_store(o + i, xs_##NAME##_f(v_load(x + i), k0, k1));         \
        if (i < n)                                                        \
            v_store_n(o + i, xs_##NAME##_f(v_load_n(x + i, n - i), k0, k1), \
                      n - i);                                             \
    }

/* sa, sb: 1 (contiguous) or 0 (one value broadcast). */
#define XS_BINARY_LOOP(NAME, SFX)                                         \
    static void xs_##NAME##_loop_##SFX(const void *av, int64_t sa,        \
                                       const void *bv, int64_t sb,        \
                                       void *ov, int64_t n)               \
    {                                                                     \
        const float *a = av, *b = bv;                                     \
        float *o = ov;                                                    \
        const vf a0 = v_set1(a[0]), b0 = v_set1(b[0]);                    \
        int64_t i = 0;                                                    \
        for (; i + VS_LANES <= n; i += VS_LANES)                          \
            v_store(o + i, xs_##NAME##_f(sa ? v_load(a + i) : a0,         \
                                         sb ? v_load(b + i) : b0));       \
        if (i < n)                                                        \
            v_store_n(o + i,                                              \
                      xs_##NAME##_f(sa ? v_load_n(a + i, n - i) : a0,     \
                                    sb ? v_load_n(b + i, n - i) : b0),    \
                      n - i);                                             \
    }

/* Element operations per element, for the thread split (a vector exp
 * or log costs a few; see cpu.c's cpu_vmath). */
#define XS_W_softplus 8
#define XS_W_sqrt 1
#define XS_W_rsqrt 1
#define XS_W_leaky_relu 1

#define XS_UNARY_ENTRY(NAME, SFX, LV)                                     \
    XS_UNARY_LOOP(NAME, SFX)                                              \
    int TB_CPU_KFN(NAME, f32, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_xs_unary(ctx, LV, TB_OP_##NAME, TB_F32, in, out, p, \
                               XS_W_##NAME, xs_##NAME##_loop_##SFX);      \
    }
#define XS_BINARY_ENTRY(NAME, SFX, LV)                                    \
    XS_BINARY_LOOP(NAME, SFX)                                             \
    int TB_CPU_KFN(NAME, f32, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_xs_binary(ctx, LV, TB_OP_##NAME, TB_F32, in, out,   \
                                p, xs_##NAME##_loop_##SFX);               \
    }

#define XS_ENTRIES(SFX, LV)                                               \
    XS_UNARY_ENTRY(softplus, SFX, LV)                                     \
    XS_UNARY_ENTRY(sqrt, SFX, LV)                                         \
    XS_UNARY_ENTRY(rsqrt, SFX, LV)                                        \
    XS_UNARY_ENTRY(leaky_relu, SFX, LV)                                   \
    XS_BINARY_ENTRY(maximum, SFX, LV)                                     \
    XS_BINARY_ENTRY(minimum, SFX, LV)

#endif /* TB_BACKENDS_CPU_OPS_SIMD_IMPL_H */
