/* The inner loops of the SIMD rows of ops_simd.h, written once over
 * vmath_simd.h's vector helpers, for inclusion by ops_avx2.c and
 * ops_avx512.c only (each built with its level's flags).  Everything
 * here is static: no function built with one ISA's flags can be picked
 * by the linker for another's callers.  XS_ENTRIES(SFX, LV) defines
 * level LV's entry points (their rows are in kreg.h's table). */
#ifndef TB_BACKENDS_CPU_OPS_SIMD_IMPL_H
#define TB_BACKENDS_CPU_OPS_SIMD_IMPL_H

#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "ew_defs.h"
#include "kreg.h"
#include "ops_simd.h"
#include "rand_simd.h" /* tb_cpu_create_rand: ones and full's frame */
#include "softplus_vf.h"
#include "vmath_simd.h"
#include "lsm_simd.h" /* ks_load_cols: short rows' columns */

#if VS_LANES == 16
/* VS_LANES / 2 doubles */
typedef __m512d vd;
static inline vd xs_dzero(void) { return _mm512_setzero_pd(); }
static inline vd xs_dset1(double a) { return _mm512_set1_pd(a); }
static inline vd xs_dload_f(const float *p)
{
    return _mm512_cvtps_pd(_mm256_loadu_ps(p));
}
static inline vd xs_dload(const double *p) { return _mm512_loadu_pd(p); }
static inline void xs_dstore(double *p, vd a) { _mm512_storeu_pd(p, a); }
static inline vd xs_dadd(vd a, vd b) { return _mm512_add_pd(a, b); }
static inline vd xs_dsub(vd a, vd b) { return _mm512_sub_pd(a, b); }
static inline vd xs_dfma(vd a, vd b, vd c) { return _mm512_fmadd_pd(a, b, c); }
/* An int32 in every lane, as bits of a vf (v_sel moves bits only). */
static inline vf xs_iset1(int32_t i)
{
    return _mm512_castsi512_ps(_mm512_set1_epi32(i));
}
#else
typedef __m256d vd;
static inline vd xs_dzero(void) { return _mm256_setzero_pd(); }
static inline vd xs_dset1(double a) { return _mm256_set1_pd(a); }
static inline vd xs_dload_f(const float *p)
{
    return _mm256_cvtps_pd(_mm_loadu_ps(p));
}
static inline vd xs_dload(const double *p) { return _mm256_loadu_pd(p); }
static inline void xs_dstore(double *p, vd a) { _mm256_storeu_pd(p, a); }
static inline vd xs_dadd(vd a, vd b) { return _mm256_add_pd(a, b); }
static inline vd xs_dsub(vd a, vd b) { return _mm256_sub_pd(a, b); }
static inline vd xs_dfma(vd a, vd b, vd c) { return _mm256_fmadd_pd(a, b, c); }
static inline vf xs_iset1(int32_t i)
{
    return _mm256_castsi256_ps(_mm256_set1_epi32(i));
}
#endif

/* ---- element functions (k: the op's parameters as floats) ---------- */

static inline vf xs_sqrt_f(vf x, vf k0, vf k1)
{
    (void)k0, (void)k1;
    return v_sqrt(x);
}

/* (T)1 / sqrt(x): two correctly rounded operations, as math_c.c.
 * AVX-512: the division, which cost as much as the memory traffic
 * (1M f32: sqrt alone ~300 us, with the division ~470 us), becomes a
 * reciprocal estimate (rcp14, relative error < 2^-14) and two
 * Newton-Raphson steps r += r (1 - s r) in FMAs: the first brings r
 * within 2^-27 of 1/s, the second, from the exact residual, rounds it
 * correctly - the value of 1.0f / s for every s of a binade but one,
 * proven exhaustively (tests/test_xs_rsqrt.c: every x in [1, 4), whose
 * square roots are every float in [1, 2); 1/s for s = m 2^e is
 * (1/m) 2^-e, exact while normal, and s = sqrt(x) of a positive float
 * x is always a normal float in [2^-75, 2^64), 1/s normal too).  The
 * one is the largest significand, s = (2 - 2^-23) 2^e: 1/s lies just
 * above a rounding tie that the last step's first-order correction
 * lands on exactly, and the tie rounds to even, down.  A vector with
 * such a lane, or one whose s is not a positive normal (x <= 0, inf,
 * NaN, a tail's zero padding), is divided as before. */
static inline vf xs_rsqrt_f(vf x, vf k0, vf k1)
{
    (void)k1;
    (void)k0;
    const vf s = v_sqrt(x);
#if VS_LANES == 16
    const __m512i frac = _mm512_set1_epi32(0x7fffff);
    const __mmask16 ok =
        _mm512_cmp_ps_mask(s, v_set1(FLT_MIN), _CMP_GE_OQ) &
        _mm512_cmp_ps_mask(s, v_set1(FLT_MAX), _CMP_LE_OQ) &
        _mm512_cmpneq_epi32_mask(
            _mm512_and_si512(_mm512_castps_si512(s), frac), frac);
    if (ok == 0xFFFF) {
        const vf one = v_set1(1.0f);
        vf r = _mm512_rcp14_ps(s);
        r = v_fma(r, v_fnma(s, r, one), r);
        return v_fma(r, v_fnma(s, r, one), r);
    }
#endif
    return v_div(v_set1(1.0f), s);
}

/* neg, abs, the scalar forms: math_c.c's one IEEE operation each (the
 * scalar as a float, k0), so its values bit for bit; neg flips and abs
 * clears the sign bit, a NaN's too, as -x and fabsf do. */
#define XS_K_OP(NAME, EXPR)                                               \
    static inline vf xs_##NAME##_f(vf x, vf k0, vf k1)                    \
    {                                                                     \
        (void)k0;                                                         \
        (void)k1;                                                         \
        return EXPR;                                                      \
    }
XS_K_OP(neg, v_neg(x))
XS_K_OP(abs, v_abs(x))
XS_K_OP(add_scalar, v_add(x, k0))
XS_K_OP(sub_scalar, v_sub(x, k0))
XS_K_OP(mul_scalar, v_mul(x, k0))
XS_K_OP(div_scalar, v_div(x, k0))
#undef XS_K_OP

/* x > 0 ? x : alpha x (NaN: alpha NaN, a NaN, as math_c.c). */
static inline vf xs_leaky_relu_f(vf x, vf k0, vf k1)
{
    (void)k1;
    return v_sel(v_gt(x, v_set1(0.0f)), x, v_mul(k0, x));
}

static inline vf xs_softplus1_f(vf x, vf beta, vf thr)
{
    (void)beta;
    return xs_softplus_g(x, beta, thr, 0);
}

static inline vf xs_softplusb_f(vf x, vf beta, vf thr)
{
    return xs_softplus_g(x, beta, thr, 1);
}

/* NaN in either operand gives a + b (a NaN), else the larger/smaller
 * (a on ties: a >= b, a <= b), bit for bit math_c.c's. */
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

/* The ops written once (ew_defs.h), on vectors (ew_vf.h). */
#include "ew_vf.h"
#define XS_EW_F(NAME, W, EXPR, ...)                                       \
    static inline vf xs_##NAME##_f(vf x, vf k0, vf k1)                    \
    {                                                                     \
        (void)k0, (void)k1;                                               \
        return EXPR;                                                      \
    }
TB_CPU_EW_OPS(XS_EW_F, ~)
#include "ew_undef.h"

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

/* sa, sb: 1 (contiguous) or 0 (one value broadcast); both contiguous:
 * four vectors per iteration first. */
#define XS_BINARY_LOOP(NAME, SFX)                                         \
    static void xs_##NAME##_loop_##SFX(const void *av, int64_t sa,        \
                                       const void *bv, int64_t sb,        \
                                       void *ov, int64_t n)               \
    {                                                                     \
        VS_BIN_BEGIN;                                                     \
        if (sa && sb) /* both contiguous: four vectors per iteration */   \
            for (; i + 4 * VS_LANES <= n; i += 4 * VS_LANES)              \
                for (int u = 0; u < 4 * VS_LANES; u += VS_LANES)          \
                    v_store(o + i + u, xs_##NAME##_f(v_load(a + i + u),   \
                                                     v_load(b + i + u))); \
        VS_BIN_FINISH(xs_##NAME##_f);                                     \
    }

/* Element operations per element, for the thread split (a vector exp
 * or log costs a few; see cpu.c's cpu_vmath). */
#define XS_W_softplus 8
#define XS_W_sqrt 1
#define XS_W_rsqrt 1
#define XS_W_leaky_relu 1
#define XS_W_neg 1
#define XS_W_abs 1
#define XS_W_add_scalar 1
#define XS_W_sub_scalar 1
#define XS_W_mul_scalar 1
#define XS_W_div_scalar 1

/* softplus: beta 1 (the default) needs neither the product nor the
 * division. */
#define XS_SOFTPLUS_LOOP(SFX)                                             \
    XS_UNARY_LOOP(softplus1, SFX)                                         \
    XS_UNARY_LOOP(softplusb, SFX)                                         \
    static void xs_softplus_loop_##SFX(const void *x, void *o, int64_t n, \
                                       const double *kd)                  \
    {                                                                     \
        if ((float)kd[0] == 1.0f)                                         \
            xs_softplus1_loop_##SFX(x, o, n, kd);                         \
        else                                                              \
            xs_softplusb_loop_##SFX(x, o, n, kd);                         \
    }
#define XS_UNARY_LOOP_softplus(SFX) XS_SOFTPLUS_LOOP(SFX)
#define XS_UNARY_LOOP_sqrt(SFX) XS_UNARY_LOOP(sqrt, SFX)
#define XS_UNARY_LOOP_rsqrt(SFX) XS_UNARY_LOOP(rsqrt, SFX)
#define XS_UNARY_LOOP_leaky_relu(SFX) XS_UNARY_LOOP(leaky_relu, SFX)
#define XS_UNARY_LOOP_neg(SFX) XS_UNARY_LOOP(neg, SFX)
#define XS_UNARY_LOOP_abs(SFX) XS_UNARY_LOOP(abs, SFX)
#define XS_UNARY_LOOP_add_scalar(SFX) XS_UNARY_LOOP(add_scalar, SFX)
#define XS_UNARY_LOOP_sub_scalar(SFX) XS_UNARY_LOOP(sub_scalar, SFX)
#define XS_UNARY_LOOP_mul_scalar(SFX) XS_UNARY_LOOP(mul_scalar, SFX)
#define XS_UNARY_LOOP_div_scalar(SFX) XS_UNARY_LOOP(div_scalar, SFX)

#define XS_UNARY_ENTRY(NAME, SFX, LV)                                     \
    XS_UNARY_LOOP_##NAME(SFX)                                             \
    int TB_CPU_KFN(NAME, f32, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_simd_unary(ctx, LV, TB_OP_##NAME, TB_F32, in, out, p, \
                                 XS_W_##NAME, xs_##NAME##_loop_##SFX);    \
    }
#define XS_BINARY_ENTRY(NAME, SFX, LV)                                    \
    XS_BINARY_LOOP(NAME, SFX)                                             \
    int TB_CPU_KFN(NAME, f32, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_simd_binary(ctx, LV, TB_OP_##NAME, TB_F32, in, out, \
                                  p, xs_##NAME##_loop_##SFX);             \
    }

/* XS_BINARY_LOOP's values for contiguous a and b (sa = sb = 1), o's
 * whole 64-byte lines written with streaming stores (four vectors per
 * iteration), the head and the tail by the plain loop, then a store
 * fence: for working sets far beyond the last-level cache, where a
 * streaming store saves the read-for-ownership of o's lines (a third
 * of the traffic). */
#define XS_BINARY_NT_LOOP(NAME, SFX)                                      \
    static void xs_##NAME##_nt_##SFX(const void *av, int64_t sa,          \
                                     const void *bv, int64_t sb,          \
                                     void *ov, int64_t n)                 \
    {                                                                     \
        (void)sa, (void)sb;                                               \
        const float *a = av, *b = bv;                                     \
        float *o = ov;                                                    \
        int64_t i = vs_head64(o, n, (int64_t)sizeof(float));              \
        xs_##NAME##_loop_##SFX(a, 1, b, 1, o, i);                         \
        for (; i + 4 * VS_LANES <= n; i += 4 * VS_LANES)                  \
            for (int u = 0; u < 4 * VS_LANES; u += VS_LANES)              \
                v_stream(o + i + u, xs_##NAME##_f(v_load(a + i + u),      \
                                                  v_load(b + i + u)));    \
        xs_##NAME##_loop_##SFX(a + i, 1, b + i, 1, o + i, n - i);         \
        _mm_sfence();                                                     \
    }
#define XS_BINARY_NT_ENTRY(NAME, SFX, LV)                                 \
    XS_BINARY_LOOP(NAME, SFX)                                             \
    XS_BINARY_NT_LOOP(NAME, SFX)                                          \
    int TB_CPU_KFN(NAME, f32, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_simd_binary_nt(ctx, LV, TB_OP_##NAME, TB_F32, in,   \
                                     out, p, xs_##NAME##_loop_##SFX,      \
                                     xs_##NAME##_nt_##SFX);               \
    }


/* ---- reductions: max, min, argmax (ops_simd.h) ---------------------- */

/* No software prefetch in these scans: one 4 KiB ahead cost max 24%
 * (one lane of 1024x1024, from L3) and min over axis 1 15% in a paired
 * A/B (tbench ab, 12 blocks, avx512; max at avx2 29%; from DRAM,
 * 4096x4096, no difference), and argmax's former scan (an index per
 * vector) 6% at 1024x1024 over axis 1, though it gained 3% on lanes in
 * L2; without it they read as fast as sum f32. */

#if VS_LANES == 16
/* Every lane set (the start of a chain of xs_ord2). */
static inline vm xs_mall(void) { return (vm)0xffff; }
/* acc and (a, b ordered): one masked compare, no separate and. */
static inline vm xs_ord2(vm acc, vf a, vf b)
{
    return _mm512_mask_cmp_ps_mask(acc, a, b, _CMP_ORD_Q);
}
/* The int32 lanes of a (as vf bits) plus k. */
static inline vf xs_iadd(vf a, int32_t k)
{
    return _mm512_castsi512_ps(
        _mm512_add_epi32(_mm512_castps_si512(a), _mm512_set1_epi32(k)));
}
/* Lane u of a plus u + k (int32 bits). */
static inline vf xs_iadd_iota(vf a, int32_t k)
{
    const __m512i io = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                         11, 12, 13, 14, 15);
    return _mm512_castsi512_ps(_mm512_add_epi32(
        _mm512_castps_si512(a), _mm512_add_epi32(io, _mm512_set1_epi32(k))));
}
/* The lane-wise int32 minimum of a and b. */
static inline vf xs_imin(vf a, vf b)
{
    return _mm512_castsi512_ps(
        _mm512_min_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
static inline int32_t xs_hmin_i(vf a)
{
    return _mm512_reduce_min_epi32(_mm512_castps_si512(a));
}
/* The lanes of mask a as the low bits of a word (lane u: bit u). */
static inline uint64_t xs_mbits(vm a) { return (uint64_t)a; }
#else
static inline vm xs_mall(void)
{
    return _mm256_castsi256_ps(_mm256_set1_epi32(-1));
}
static inline vm xs_ord2(vm acc, vf a, vf b)
{
    return _mm256_and_ps(acc, _mm256_cmp_ps(a, b, _CMP_ORD_Q));
}
static inline vf xs_iadd(vf a, int32_t k)
{
    return _mm256_castsi256_ps(
        _mm256_add_epi32(_mm256_castps_si256(a), _mm256_set1_epi32(k)));
}
static inline vf xs_iadd_iota(vf a, int32_t k)
{
    const __m256i io = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_castsi256_ps(_mm256_add_epi32(
        _mm256_castps_si256(a), _mm256_add_epi32(io, _mm256_set1_epi32(k))));
}
static inline vf xs_imin(vf a, vf b)
{
    return _mm256_castsi256_ps(
        _mm256_min_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)));
}
static inline uint64_t xs_mbits(vm a)
{
    return (uint64_t)(unsigned)_mm256_movemask_ps(a);
}
static inline int32_t xs_hmin_i(vf a)
{
    int32_t t[8];
    _mm256_storeu_si256((__m256i *)t, _mm256_castps_si256(a));
    int32_t r = t[0];
    for (int u = 1; u < 8; u++)
        r = t[u] < r ? t[u] : r;
    return r;
}
#endif

/* The first j < len with x[j] == v (v not NaN); len if none. */
static inline int64_t xs_find(const float *x, int64_t len, float v)
{
    const vf vv = v_set1(v);
    int64_t j = 0;
    for (; j + VS_LANES <= len; j += VS_LANES)
        if (m_any(v_eq(v_load(x + j), vv)))
            break;
    for (; j < len; j++)
        if (x[j] == v)
            return j;
    return len;
}

/* The portable scan of reduce_c.c for a short lane: m = x[0], then
 * m = x[j] where x[j] OP m or x[j] is NaN (argmax: stop at the first
 * NaN), its index to *at. */
static inline float xs_extreme_short(const float *x, int64_t len,
                                     int is_max, int arg, int64_t *at)
{
    *at = 0;
    float m = x[0];
    for (int64_t j = 1; j < len && (!arg || m == m); j++) {
        float v = x[j];
        if ((is_max ? v > m : v < m) || v != v) {
            m = v;
            *at = j;
        }
    }
    return m;
}

/* The NaN of a lane that has one, as the portable scan ends: max/min on
 * its last NaN, argmax on its first; its index to *at. */
static inline float xs_lane_nan(const float *x, int64_t len, int arg,
                                int64_t *at)
{
    int64_t k = 0;
    if (arg) {
        while (x[k] == x[k])
            k++;
    } else {
        for (k = len - 1; x[k] == x[k]; k--)
            ;
    }
    *at = k;
    return x[k];
}

/* max/min of a contiguous lane (len >= 4 * VS_LANES): four running
 * extremes, v_max(v, m) / v_min(v, m) (x86 returns its second operand,
 * the running one, for a NaN and for equal values), so NaNs are found
 * apart: one masked ordered-compare of two vectors per two vectors into
 * two chains of lane masks (no mask OR per vector), checked once at the
 * end.  A lane with a NaN is scanned again for it (rare); the result is
 * then the portable one.  A zero extreme is found again (its sign: the
 * first zero wins, -0 == +0). */
static inline float xs_extreme_vec(const float *x, int64_t len, int is_max,
                                   int64_t *at)
{
    *at = 0;
    vf m0 = v_load(x), m1 = v_load(x + VS_LANES);
    vf m2 = v_load(x + 2 * VS_LANES), m3 = v_load(x + 3 * VS_LANES);
    vm ok0 = xs_ord2(xs_mall(), m0, m1), ok1 = xs_ord2(xs_mall(), m2, m3);
    int64_t j = 4 * VS_LANES;
    for (; j + 4 * VS_LANES <= len; j += 4 * VS_LANES) {
        vf v0 = v_load(x + j), v1 = v_load(x + j + VS_LANES);
        vf v2 = v_load(x + j + 2 * VS_LANES);
        vf v3 = v_load(x + j + 3 * VS_LANES);
        ok0 = xs_ord2(ok0, v0, v1);
        ok1 = xs_ord2(ok1, v2, v3);
        m0 = is_max ? v_max(v0, m0) : v_min(v0, m0);
        m1 = is_max ? v_max(v1, m1) : v_min(v1, m1);
        m2 = is_max ? v_max(v2, m2) : v_min(v2, m2);
        m3 = is_max ? v_max(v3, m3) : v_min(v3, m3);
    }
    for (; j + VS_LANES <= len; j += VS_LANES) {
        vf v = v_load(x + j);
        ok0 = xs_ord2(ok0, v, v);
        m0 = is_max ? v_max(v, m0) : v_min(v, m0);
    }
    bool nan = !m_all(m_and(ok0, ok1));
    for (int64_t k = j; k < len; k++)
        nan |= x[k] != x[k];
    if (nan)
        return xs_lane_nan(x, len, 0, at);
    /* no NaN: the extreme's value by a vector tree (a zero's sign is
     * found below) */
    float r = is_max ? v_hmax(v_max(v_max(m0, m1), v_max(m2, m3)))
                     : -v_hmax(v_neg(v_min(v_min(m0, m1), v_min(m2, m3))));
    for (int64_t k = j; k < len; k++)
        r = (is_max ? x[k] > r : x[k] < r) ? x[k] : r;
    if (r == 0) {
        *at = xs_find(x, len, r);
        return x[*at];
    }
    return r;
}

/* Elements per block of xs_argmax_vec: its indices are int32 offsets
 * from the block's start (any block below 2^31 would do; 2^16 keeps the
 * merge of blocks exercised by lanes of ordinary test sizes and costs
 * one epilogue per 256 KiB). */
#define XS_ARG_BLOCK ((int64_t)1 << 16)

/* argmax of a contiguous lane (4 * VS_LANES <= len <= XS_ARG_BLOCK) in
 * one pass over groups of four vectors: per lane the running maximum and
 * the start j of the first group whose own maximum (three v_max) was
 * strictly above it, so the group where that lane first reached its
 * final maximum; NaNs found apart as in xs_extreme_vec.  The first
 * maximum overall lies in the earliest such group among the lanes equal
 * to the largest value: that group's four vectors compared with it give
 * the index (the lowest set bit of their masks; -0 == +0, so a zero
 * maximum's first zero of either sign).  No branch depends on the data
 * but the NaN test.  A lane with a NaN: its first NaN.  *val: the
 * maximum (NaN for NaN).  Keeping an index per vector (a compare, a max
 * and a blend each) ran at 0.19 cycles an element in L2, above the read
 * bound of 1024x1024 over axis 1; a max pass and then a search for the
 * first equal element mispredicted its exit once a row (+9 to 21%). */
static inline int64_t xs_argmax_vec(const float *x, int64_t len, float *val)
{
    enum { G = 4 * VS_LANES };
    vf v0 = v_load(x), v1 = v_load(x + VS_LANES);
    vf v2 = v_load(x + 2 * VS_LANES), v3 = v_load(x + 3 * VS_LANES);
    vm ok0 = xs_ord2(xs_mall(), v0, v1), ok1 = xs_ord2(xs_mall(), v2, v3);
    vf m = v_max(v_max(v0, v1), v_max(v2, v3));
    vf gi = xs_iset1(0), jv = gi;
    int64_t j = G;
    for (; j + G <= len; j += G) {
        jv = xs_iadd(jv, G);
        v0 = v_load(x + j);
        v1 = v_load(x + j + VS_LANES);
        v2 = v_load(x + j + 2 * VS_LANES);
        v3 = v_load(x + j + 3 * VS_LANES);
        ok0 = xs_ord2(ok0, v0, v1);
        ok1 = xs_ord2(ok1, v2, v3);
        const vf c = v_max(v_max(v0, v1), v_max(v2, v3));
        gi = v_sel(v_gt(c, m), jv, gi);
        m = v_max(c, m);
    }
    bool nan = !m_all(m_and(ok0, ok1));
    for (int64_t k = j; k < len && !nan; k++)
        nan = x[k] != x[k];
    if (nan) {
        int64_t at;
        *val = xs_lane_nan(x, len, 1, &at);
        return at;
    }
    float r = v_hmax(m);
    const vf rv = v_set1(r);
    const int64_t g =
        xs_hmin_i(v_sel(v_eq(m, rv), gi, xs_iset1(INT32_MAX)));
    const float *p = x + g;
    const uint64_t hit =
        xs_mbits(v_eq(v_load(p), rv)) |
        xs_mbits(v_eq(v_load(p + VS_LANES), rv)) << VS_LANES |
        xs_mbits(v_eq(v_load(p + 2 * VS_LANES), rv)) << 2 * VS_LANES |
        xs_mbits(v_eq(v_load(p + 3 * VS_LANES), rv)) << 3 * VS_LANES;
    int64_t at = g + __builtin_ctzll(hit);
    for (int64_t k = j; k < len; k++)
        if (x[k] > r) {
            r = x[k];
            at = k;
        }
    *val = r;
    return at;
}

/* max/min of a short contiguous lane (2 <= len < 4 * VS_LANES, not
 * argmax): whole vectors, the last one's missing lanes filled with x[0]
 * (a repeated element changes no extreme), one v_max / v_min per vector
 * and a vector tree; a NaN (checked as in xs_extreme_vec) and a zero
 * extreme (its sign) are found again, so the result is the portable
 * scan's, bit for bit.  The scan itself (xs_extreme_short) branches on
 * every element, unpredictably on data in no order: 8.5 ns a lane of 10
 * (max of 1024x10 over axis -1, log_softmax_unfused's first step). */
static inline float xs_extreme_vshort(const float *x, int64_t len,
                                      int is_max, int64_t *at)
{
    *at = 0;
    vf m = v_load_fill(x, len, x[0]);
    vm ok = xs_ord2(xs_mall(), m, m);
    for (int64_t j = VS_LANES; j < len; j += VS_LANES) {
        vf v = v_load_fill(x + j, len - j, x[0]);
        ok = xs_ord2(ok, v, v);
        m = is_max ? v_max(v, m) : v_min(v, m);
    }
    if (!m_all(ok))
        return xs_lane_nan(x, len, 0, at);
    float r = is_max ? v_hmax(m) : -v_hmax(v_neg(m));
    if (r == 0) {
        *at = xs_find(x, len, r);
        return x[*at];
    }
    return r;
}

/* A contiguous lane (len >= 1) as reduce_c.c scans it: m = x[0], then m
 * = x[j] where x[j] OP m or x[j] is NaN; for max/min that ends on the
 * last NaN of a lane that has one, for argmax (arg) on the first
 * maximum or the first NaN, whose index goes to *at.  Short lanes by the
 * scan itself; argmax over blocks of XS_ARG_BLOCK merged by the same
 * rule (a later block's maximum wins only when strictly larger). */
static inline float xs_extreme_lane(const float *x, int64_t len,
                                    int is_max, int arg, int64_t *at)
{
    if (len < 4 * VS_LANES && !arg && len > 1)
        return xs_extreme_vshort(x, len, is_max, at);
    if (len < 4 * VS_LANES)
        return xs_extreme_short(x, len, is_max, arg, at);
    if (!arg)
        return xs_extreme_vec(x, len, is_max, at);
    float r = 0;
    *at = 0;
    for (int64_t b = 0; b < len; b += XS_ARG_BLOCK) {
        const int64_t n = len - b < XS_ARG_BLOCK ? len - b : XS_ARG_BLOCK;
        float v;
        int64_t k;
        if (n < 4 * VS_LANES)
            v = xs_extreme_short(x + b, n, 1, 1, &k);
        else
            k = xs_argmax_vec(x + b, n, &v);
        if (b == 0 || v > r || (v != v && r == r)) {
            r = v;
            *at = b + k;
        }
        if (r != r)
            break;
    }
    return r;
}

/* The portable update of one vector of w lanes of a non-last axis: max
 * and min take v where v OP m or v is NaN (v_max(v, m) / v_min(v, m)
 * take v where v OP m, m for a NaN; then a NaN v), argmax where v > m or
 * (v is NaN and m is not), its index jv (int32 bits) into *a. */
static inline vf xs_cols_upd(vf v, vf m, vf *a, vf jv, int is_max, int arg)
{
    if (!arg) {
        vf r = is_max ? v_max(v, m) : v_min(v, m);
        return v_sel(v_unord(v, v), v, r);
    }
    vm up = m_or(v_gt(v, m), m_and(v_unord(v, v), v_eq(m, m)));
    *a = v_sel(up, jv, *a);
    return v_sel(up, v, m);
}

/* w <= TB_CPU_SIMD_COLS32 lanes of a non-last axis, two rows per pass
 * (each row's w values are adjacent: a sequential read of every row,
 * as the hardware prefetcher likes, even from DRAM), the running
 * extremes and argmax's indices in arrays on the stack (L1, read and
 * written once per two rows), whole vectors unmasked, the end of the
 * row masked.  Lanes are tensor dims, below 2^31: indices as int32. */
static inline void xs_extreme_cols(const float *x, float *o, int64_t len,
                                   int64_t step, int64_t w, int is_max,
                                   int arg)
{
    float m[TB_CPU_SIMD_COLS32];
    int32_t at[TB_CPU_SIMD_COLS32];
    const int64_t wv = w - w % VS_LANES, r = w - wv;
    for (int64_t t = 0; t < w; t += VS_LANES) {
        v_store_n(m + t, v_load_n(x + t, w - t), w - t);
        if (arg)
            v_store_n((float *)(at + t), xs_iset1(0), w - t);
    }
    int64_t j = 1;
    for (; j + 2 <= len; j += 2) {
        const float *r0 = x + j * step, *r1 = r0 + step;
        const vf j0 = xs_iset1((int32_t)j), j1 = xs_iset1((int32_t)j + 1);
        vf a = j0;
        for (int64_t t = 0; t < wv; t += VS_LANES) {
            float *ap = (float *)(at + t);
            if (arg)
                a = v_load(ap);
            vf mv = xs_cols_upd(v_load(r0 + t), v_load(m + t), &a, j0,
                                is_max, arg);
            mv = xs_cols_upd(v_load(r1 + t), mv, &a, j1, is_max, arg);
            v_store(m + t, mv);
            if (arg)
                v_store(ap, a);
        }
        if (r) {
            float *ap = (float *)(at + wv);
            if (arg)
                a = v_load_n(ap, r);
            vf mv = xs_cols_upd(v_load_n(r0 + wv, r), v_load_n(m + wv, r),
                                &a, j0, is_max, arg);
            mv = xs_cols_upd(v_load_n(r1 + wv, r), mv, &a, j1, is_max, arg);
            v_store_n(m + wv, mv, r);
            if (arg)
                v_store_n(ap, a, r);
        }
    }
    if (j < len) {
        const float *row = x + j * step;
        const vf jv = xs_iset1((int32_t)j);
        for (int64_t t = 0; t < w; t += VS_LANES) {
            const int64_t n = w - t;
            float *ap = (float *)(at + t);
            vf a = arg ? v_load_n(ap, n) : jv;
            v_store_n(m + t,
                      xs_cols_upd(v_load_n(row + t, n), v_load_n(m + t, n),
                                  &a, jv, is_max, arg),
                      n);
            if (arg)
                v_store_n(ap, a, n);
        }
    }
    for (int64_t t = 0; t < w; t++)
        o[t] = arg ? (float)at[t] : m[t];
}

/* max and min over short last-axis rows (len <= VS_LANES): VS_LANES
 * rows at once, their columns by lsm_simd.h's ks_load_cols (lane r =
 * row r), then reduce_c.c's scan on the columns in order: m = column
 * 0, then m = column c where its value OP m or is NaN (so the first of
 * equal zeros stays and the last NaN wins, as xs_extreme_lane's); the
 * rows past the last whole block by xs_extreme_lane.  A call of
 * xs_extreme_lane a row cost ~12 cycles a row of 10 (max over the last
 * axis of 1024x10, log_softmax_unfused's first step: 3.46 us). */
static inline __attribute__((always_inline)) void
xs_extreme_rows_n(const float *x, float *o, int64_t rows, int64_t n,
                  int is_max)
{
    int64_t r0 = 0;
    for (; r0 + VS_LANES <= rows; r0 += VS_LANES) {
        vf col[VS_LANES];
        ks_load_cols(x + r0 * n, n, col);
        vf m = col[0];
#pragma GCC unroll 16
        for (int64_t c = 1; c < n; c++) {
            const vf v = col[c];
            const vm up = m_or(is_max ? v_gt(v, m) : v_gt(m, v),
                               v_unord(v, v));
            m = v_sel(up, v, m);
        }
        v_store(o + r0, m);
    }
    for (; r0 < rows; r0++) {
        int64_t at;
        o[r0] = xs_extreme_lane(x + r0 * n, n, is_max, 0, &at);
    }
}
/* xs_extreme_rows_n, one instance per n (the columns in registers) */
#define XS_ROWS_CASE(N)                                                   \
    case N:                                                               \
        xs_extreme_rows_n(x, o, rows, N, is_max);                         \
        return;
static inline __attribute__((always_inline)) void
xs_extreme_rows(const float *x, float *o, int64_t rows, int64_t n,
                int is_max)
{
    switch (n) {
        KS_SHORT_NS(XS_ROWS_CASE)
    default: /* (longer rows do not come here: short_n) */
        for (int64_t r = 0; r < rows; r++) {
            int64_t at;
            o[r] = xs_extreme_lane(x + r * n, n, is_max, 0, &at);
        }
    }
}
#undef XS_ROWS_CASE

#define XS_RED_FNS(NAME, IS_MAX, ARG, SFX)                                \
    static float xs_##NAME##_lane_##SFX(const float *x, int64_t len,      \
                                        int64_t corr)                     \
    {                                                                     \
        (void)corr;                                                       \
        int64_t at;                                                       \
        float r = xs_extreme_lane(x, len, IS_MAX, ARG, &at);              \
        return ARG ? (float)at : r;                                       \
    }                                                                     \
    static void xs_##NAME##_cols_##SFX(const float *x, float *o,          \
                                       int64_t len, int64_t step,         \
                                       int64_t w, int64_t corr)           \
    {                                                                     \
        (void)corr;                                                       \
        xs_extreme_cols(x, o, len, step, w, IS_MAX, ARG);                 \
    }
#define XS_RED_ENTRY(NAME, IS_MAX, ARG, SFX, LV)                          \
    XS_RED_FNS(NAME, IS_MAX, ARG, SFX)                                    \
    static void xs_##NAME##_rows_##SFX(const float *x, float *o,          \
                                       int64_t rows, int64_t len)         \
    {                                                                     \
        xs_extreme_rows(x, o, rows, len, IS_MAX);                         \
    }                                                                     \
    int TB_CPU_KFN(NAME, f32, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_simd_reduce_rows(                                   \
            ctx, LV, TB_OP_##NAME, in, out, p, xs_##NAME##_lane_##SFX,    \
            xs_##NAME##_cols_##SFX, ARG ? NULL : xs_##NAME##_rows_##SFX,  \
            VS_LANES);                                                    \
    }

/* ---- var: two passes in double (ops_simd.h) -------------------------- */

#define XS_DL (VS_LANES / 2)

static inline double xs_dhsum(vd a)
{
    double t[XS_DL];
    xs_dstore(t, a);
    double r = 0;
    for (int u = 0; u < XS_DL; u++)
        r += t[u];
    return r;
}

static inline float xs_var_final(double d, double d2, int64_t len,
                                 int64_t corr)
{
    return (float)((d2 - d * d / (double)len) / (double)(len - corr));
}

/* Contiguous lanes (f32 here, bf16/f16 through tb_cpu_var16_lane_*):
 * var_simd.h's one-pass blocks. */
#include "var_simd.h"

static float xs_var_lane(const float *x, int64_t len, int64_t corr)
{
    return xv_lane(x, len, corr, XV_F32);
}

/* 2 * XS_DL lanes of a non-last axis with their sums in registers. */
static void xs_var_cols2(const float *x, float *o, int64_t len,
                         int64_t step, int64_t corr)
{
    vd s0 = xs_dzero(), s1 = s0;
    for (int64_t j = 0; j < len; j++) {
        s0 = xs_dadd(s0, xs_dload_f(x + j * step));
        s1 = xs_dadd(s1, xs_dload_f(x + j * step + XS_DL));
    }
    double m[2 * XS_DL];
    xs_dstore(m, s0);
    xs_dstore(m + XS_DL, s1);
    for (int u = 0; u < 2 * XS_DL; u++)
        m[u] /= (double)len; /* the mean, as the portable code divides */
    const vd m0 = xs_dload(m), m1 = xs_dload(m + XS_DL);
    vd d0 = xs_dzero(), d1 = d0, q0 = d0, q1 = d0;
    for (int64_t j = 0; j < len; j++) {
        vd t0 = xs_dsub(xs_dload_f(x + j * step), m0);
        vd t1 = xs_dsub(xs_dload_f(x + j * step + XS_DL), m1);
        d0 = xs_dadd(d0, t0);
        d1 = xs_dadd(d1, t1);
        q0 = xs_dfma(t0, t0, q0);
        q1 = xs_dfma(t1, t1, q1);
    }
    double d[2 * XS_DL], d2[2 * XS_DL];
    xs_dstore(d, d0);
    xs_dstore(d + XS_DL, d1);
    xs_dstore(d2, q0);
    xs_dstore(d2 + XS_DL, q1);
    for (int u = 0; u < 2 * XS_DL; u++)
        o[u] = xs_var_final(d[u], d2[u], len, corr);
}

/* w lanes of a non-last axis: 2 * XS_DL at a time in registers, the rest
 * with per-lane sums in double arrays on the stack, each row's values
 * converted XS_DL at a time. */
static void xs_var_cols(const float *x, float *o, int64_t len,
                        int64_t step, int64_t w, int64_t corr)
{
    for (; w >= 2 * XS_DL; w -= 2 * XS_DL, x += 2 * XS_DL, o += 2 * XS_DL)
        xs_var_cols2(x, o, len, step, corr);
    double s[TB_CPU_SIMD_COLS], d[TB_CPU_SIMD_COLS], d2[TB_CPU_SIMD_COLS];
    const int64_t wv = w - w % XS_DL;
    for (int64_t t = 0; t < w; t++)
        s[t] = d[t] = d2[t] = 0;
    for (int64_t j = 0; j < len; j++) {
        const float *row = x + j * step;
        int64_t t = 0;
        for (; t < wv; t += XS_DL)
            xs_dstore(s + t, xs_dadd(xs_dload(s + t), xs_dload_f(row + t)));
        for (; t < w; t++)
            s[t] += (double)row[t];
    }
    for (int64_t t = 0; t < w; t++)
        s[t] /= (double)len; /* the mean */
    for (int64_t j = 0; j < len; j++) {
        const float *row = x + j * step;
        int64_t t = 0;
        for (; t < wv; t += XS_DL) {
            vd u = xs_dsub(xs_dload_f(row + t), xs_dload(s + t));
            xs_dstore(d + t, xs_dadd(xs_dload(d + t), u));
            xs_dstore(d2 + t, xs_dfma(u, u, xs_dload(d2 + t)));
        }
        for (; t < w; t++) {
            double u = (double)row[t] - s[t];
            d[t] += u;
            d2[t] += u * u;
        }
    }
    for (int64_t t = 0; t < w; t++)
        o[t] = xs_var_final(d[t], d2[t], len, corr);
}

#define XS_VAR_ENTRY(SFX, LV)                                             \
    int TB_CPU_KFN(var, f32, SFX)(void *ctx, const tb_tensor *in,         \
                                  tb_tensor *out, const tb_params *p)     \
    {                                                                     \
        return tb_cpu_simd_reduce(ctx, LV, TB_OP_var, in, out, p,         \
                                  xs_var_lane, xs_var_cols);              \
    }                                                                     \
    /* a function a dtype: one's code does not move with the other's */ \
    static __attribute__((noinline)) float xs_var16_bf16_##SFX(           \
        const uint16_t *x, int64_t len, int64_t corr)                     \
    {                                                                     \
        return xv_lane(x, len, corr, XV_BF16);                            \
    }                                                                     \
    static __attribute__((noinline)) float xs_var16_f16_##SFX(            \
        const uint16_t *x, int64_t len, int64_t corr)                     \
    {                                                                     \
        return xv_lane(x, len, corr, XV_F16);                             \
    }                                                                     \
    float TB_CPU_VAR16_LANE(SFX)(const uint16_t *x, int64_t len,          \
                                 int64_t corr, tb_dtype dt)               \
    {                                                                     \
        return dt == TB_BF16 ? xs_var16_bf16_##SFX(x, len, corr)          \
                             : xs_var16_f16_##SFX(x, len, corr);          \
    }

/* An op written once: its loop and its entry point of level LV. */
#define XS_EW_ENTRY(NAME, W, EXPR, SFX, LV)                               \
    XS_UNARY_LOOP(NAME, SFX)                                              \
    int TB_CPU_KFN(NAME, f32, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_simd_unary(ctx, LV, TB_OP_##NAME, TB_F32, in, out,  \
                                 p, W, xs_##NAME##_loop_##SFX);           \
    }

/* ones, full f32: o[b..e) = (float)a (tb_cpu_rand_fn; create.c's frame:
 * checks, the value, the thread split on 64-byte lines).  The portable
 * rows are built for baseline x86-64 and store 16 bytes at a time (ones
 * 1M f32: 71.6 us against PyPI PyTorch's 45); these store whole vectors,
 * the same value's bits. */
#define XS_FILL_ENTRIES(SFX, LV)                                          \
    static void xs_fill_chunk_##SFX(void *ov, int64_t b, int64_t e,       \
                                    uint64_t key, double a, double b2)    \
    {                                                                     \
        (void)key;                                                        \
        (void)b2;                                                         \
        float *o = (float *)ov + b;                                       \
        const int64_t n = e - b;                                          \
        const vf v = v_set1((float)a);                                    \
        int64_t i = 0;                                                    \
        for (; i + 4 * VS_LANES <= n; i += 4 * VS_LANES) {                \
            v_store(o + i, v);                                            \
            v_store(o + i + VS_LANES, v);                                 \
            v_store(o + i + 2 * VS_LANES, v);                             \
            v_store(o + i + 3 * VS_LANES, v);                             \
        }                                                                 \
        for (; i + VS_LANES <= n; i += VS_LANES)                          \
            v_store(o + i, v);                                            \
        if (i < n)                                                        \
            v_store_n(o + i, v, n - i);                                   \
    }                                                                     \
    int TB_CPU_KFN(ones, f32, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_create_rand(ctx, LV, TB_OP_ones, TB_F32, in, out,   \
                                  p, 1, xs_fill_chunk_##SFX);             \
    }                                                                     \
    int TB_CPU_KFN(full, f32, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_create_rand(ctx, LV, TB_OP_full, TB_F32, in, out,   \
                                  p, 1, xs_fill_chunk_##SFX);             \
    }

#define XS_ENTRIES(SFX, LV)                                               \
    XS_FILL_ENTRIES(SFX, LV)                                              \
    XS_UNARY_ENTRY(softplus, SFX, LV)                                     \
    XS_UNARY_ENTRY(sqrt, SFX, LV)                                         \
    XS_UNARY_ENTRY(rsqrt, SFX, LV)                                        \
    XS_UNARY_ENTRY(leaky_relu, SFX, LV)                                   \
    XS_UNARY_ENTRY(neg, SFX, LV)                                          \
    XS_UNARY_ENTRY(abs, SFX, LV)                                          \
    XS_UNARY_ENTRY(add_scalar, SFX, LV)                                   \
    XS_UNARY_ENTRY(sub_scalar, SFX, LV)                                   \
    XS_UNARY_ENTRY(mul_scalar, SFX, LV)                                   \
    XS_UNARY_ENTRY(div_scalar, SFX, LV)                                   \
    XS_BINARY_NT_ENTRY(maximum, SFX, LV)                                  \
    XS_BINARY_NT_ENTRY(minimum, SFX, LV)                                  \
    XS_RED_ENTRY(max, 1, 0, SFX, LV)                                      \
    XS_RED_ENTRY(min, 0, 0, SFX, LV)                                      \
    XS_RED_ENTRY(argmax, 1, 1, SFX, LV)                                   \
    XS_VAR_ENTRY(SFX, LV)                                                 \
    TB_CPU_EW_OPS(XS_EW_ENTRY, SFX, LV)

#endif /* TB_BACKENDS_CPU_OPS_SIMD_IMPL_H */
