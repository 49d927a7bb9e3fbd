/* SIMD rows (AVX2, AVX-512) in f32 of the element-wise backward ops
 * relu_backward, sigmoid_backward, tanh_backward and gelu_backward over
 * backward.c's portable rows (issue 18: those ran the scalar libm
 * expf/tanhf/erfcf per element, 43-88x a copy of their bytes at 1M
 * elements); then of log_softmax_backward and max_pool2d_backward (2x2
 * windows; bwd_simd.h's drivers), the last in f64 too (on
 * pool64_simd.h's double lanes, one macro per row for both dtypes).  For inclusion by bwd_avx2.c and
 * bwd_avx512.c only, each built with its level's flags; everything here
 * is static except the entry points BW_ENTRIES(SFX, LV) defines (rows of
 * kreg.h's backward family).  The element-wise rows' driver is ops_simd.c's
 * tb_cpu_simd_binary (a = g, b = x, equal shapes under the ops' shape
 * rule, split over the threads).
 *
 * Formulas (x the forward input, g the incoming gradient):
 *   relu:    x > 0 ? g : 0 (a select; NaN x gives 0, as the portable row)
 *   sigmoid: g s (1 - s) = g e / (1 + e)^2, e = exp(-|x|): no
 *            cancellation of 1 - s for large x (the portable row's
 *            s (1 - s) rounds to 0 from |x| ~ 17 on, this keeps e);
 *   tanh:    g (1 - t^2) = g 4e / (1 + e)^2, e = exp(-2|x|) (sech^2 x,
 *            again without the cancellation of 1 - t^2);
 *   gelu:    g (Phi(x) + x phi(x)), phi(x) = exp(-x^2/2) / sqrt(2 pi):
 *            g s for x < 0, g (1 - s) for x >= 0, s = Phi(-a) - a
 *            phi(a) (a = |x|): for a <= 3 by vmath's table polynomials
 *            (vs_gelu_dpc), beyond with Phi(-a) = exp(-a^2/2) G(a) (G of
 *            the forward gelu's tail) so that both terms share one exp,
 *            s = exp(-x^2/2) (G(a) - a / sqrt(2 pi)) (bw_gelu_f); +-inf
 *            give g and 0, the limits.  (It computed exp twice, G once
 *            and divided by x where any lane had |x| >= 0.7: 2.5x a
 *            read and write of its bytes; then one exp and G, degree 13,
 *            for every lane.)
 * Accuracy (g = 1, tests/test_checkasm.c bw_act_sweep over a dense sweep
 * of float bit patterns against the derivative in double): sigmoid and
 * tanh within 8 ulp (5.5 measured), gelu within 4 ulp of |Phi| + |x phi|
 * (2.431 measured over every float, at x = -3.224, the exp form; the
 * tables' for |x| <= 3: 1.262 at -2.978), AVX2 and AVX-512
 * bit for bit; far inside the ops' tolerance (f32: rtol 1e-5, atol
 * 1e-6), which op_*_backward (every level and thread count, against the
 * double reference) and tests/test_backward.c (PyTorch vectors and
 * finite differences) check. */
#ifndef TB_BACKENDS_CPU_BWD_SIMD_IMPL_H
#define TB_BACKENDS_CPU_BWD_SIMD_IMPL_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../base/error.h"
#include "bwd_simd.h"
#include "bwd_vf.h" /* bw_relu_f .. bw_gelu_f */
#include "cpu_internal.h"
#include "kreg.h"
#include "lsm_simd.h" /* ks_row_index */
#include "ops_simd.h"
#include "pool64_simd.h"
#include "vmath_simd.h"
#include "vtranspose_simd.h" /* v_transpose: bw_lsm_short */

/* both operands contiguous (the usual case) in a loop of its own, free
 * of the broadcast tests */
#define BW_LOOP(NAME, SFX)                                                \
    static void bw_##NAME##_loop_##SFX(const void *av, int64_t sa,        \
                                       const void *bv, int64_t sb,        \
                                       void *ov, int64_t n)               \
    {                                                                     \
        VS_BIN_BEGIN;                                                     \
        if (sa && sb)                                                     \
            for (; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {            \
                vf y0 = bw_##NAME##_f(v_load(a + i), v_load(b + i));      \
                vf y1 = bw_##NAME##_f(v_load(a + i + VS_LANES),           \
                                      v_load(b + i + VS_LANES));          \
                v_store(o + i, y0);                                       \
                v_store(o + i + VS_LANES, y1);                            \
            }                                                             \
        for (; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {                \
            vf y0 = bw_##NAME##_f(sa ? v_load(a + i) : a0,                \
                                  sb ? v_load(b + i) : b0);               \
            vf y1 = bw_##NAME##_f(sa ? v_load(a + i + VS_LANES) : a0,     \
                                  sb ? v_load(b + i + VS_LANES) : b0);    \
            v_store(o + i, y0);                                           \
            v_store(o + i + VS_LANES, y1);                                \
        }                                                                 \
        VS_BIN_FINISH(bw_##NAME##_f);                                     \
    }

#define BW_ENTRY(NAME, SFX, LV)                                           \
    BW_LOOP(NAME, SFX)                                                    \
    int TB_CPU_KFN(NAME##_backward, f32, SFX)(void *ctx,                  \
                                              const tb_tensor *in,        \
                                              tb_tensor *out,             \
                                              const tb_params *p)         \
    {                                                                     \
        return tb_cpu_simd_binary(ctx, LV, TB_OP_##NAME##_backward, TB_F32, \
                                  in, out, p, bw_##NAME##_loop_##SFX);    \
    }

/* ---- log_softmax_backward (bwd_simd.h): dx = g - exp(y) sum(g) ------ */

#if VS_LANES == 16
typedef __m512d bw_vd;
static inline bw_vd bw_dzero(void) { return _mm512_setzero_pd(); }
/* *lo, *hi += v's lower, upper half in double */
static inline void bw_dacc(vf v, bw_vd *lo, bw_vd *hi)
{
    *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    *hi = _mm512_add_pd(*hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}
static inline double bw_dhsum(bw_vd lo, bw_vd hi)
{
    return _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
}
/* the lanes of lo, hi rounded to float, in v's order */
static inline vf bw_dcvt(bw_vd lo, bw_vd hi)
{
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)),
                              _mm512_cvtpd_ps(hi), 1);
}
#else
typedef __m256d bw_vd;
static inline bw_vd bw_dzero(void) { return _mm256_setzero_pd(); }
static inline void bw_dacc(vf v, bw_vd *lo, bw_vd *hi)
{
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}
static inline double bw_dhsum(bw_vd lo, bw_vd hi)
{
    __m256d s = _mm256_add_pd(lo, hi);
    __m128d t = _mm_add_pd(_mm256_castpd256_pd128(s),
                           _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(t, _mm_unpackhi_pd(t, t)));
}
static inline vf bw_dcvt(bw_vd lo, bw_vd hi)
{
    return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}
#endif

/* base[idx[i]] per lane (bw_lsm_short's row statistics per element) */
#if VS_LANES == 16
static inline vf bw_perm(const int32_t *idx, vf base)
{
    return _mm512_permutexvar_ps(_mm512_loadu_si512(idx), base);
}
#else
static inline vf bw_perm(const int32_t *idx, vf base)
{
    return _mm256_permutevar8x32_ps(
        base, _mm256_loadu_si256((const __m256i *)idx));
}
#endif

/* nb blocks of VS_LANES contiguous rows of n <= VS_LANES (1024 x 10 at
 * avx512: 9.6 us a row at a time, each row's sum two horizontal folds
 * and its exp a part-filled vector): a block's rows loaded masked and
 * transposed in registers (v_transpose: lane r = row r), s = sum g per
 * lane in double from 0 in element order (the portable row's sum, bit
 * for bit) rounded to float, then dx = g - exp(y) s on the block's n
 * full vectors in memory order, s fetched per element by a permute
 * (fidx[v][k] = the row of flat element v L + k).  Blocks go in chunks
 * of BW_SHORT_CHUNK, the sums of the chunk's blocks first, then their
 * writes: one block after another, each write waited on its block's
 * chain of sums. */
#define BW_SHORT_CHUNK 8
static inline __attribute__((always_inline)) void
bw_lsm_short_n(const float *g, const float *y, float *dx, int64_t nb,
               int64_t n)
{
    const int64_t L = VS_LANES;
    int32_t fidx[VS_LANES][VS_LANES];
    ks_row_index(fidx, n);
    vf sts[BW_SHORT_CHUNK];
    for (int64_t b0 = 0; b0 < nb; b0 += BW_SHORT_CHUNK) {
        const int64_t cb =
            nb - b0 < BW_SHORT_CHUNK ? nb - b0 : BW_SHORT_CHUNK;
        for (int64_t b = 0; b < cb; b++) {
            const float *gb = g + (b0 + b) * L * n;
            vf c[VS_LANES];
            ks_load_cols(gb, n, c);
            bw_vd lo = bw_dzero(), hi = bw_dzero();
#pragma GCC unroll 16
            for (int64_t k = 0; k < n; k++)
                bw_dacc(c[k], &lo, &hi);
            sts[b] = bw_dcvt(lo, hi);
        }
        for (int64_t b = 0; b < cb; b++) {
            const float *gb = g + (b0 + b) * L * n,
                        *yb = y + (b0 + b) * L * n;
            float *db = dx + (b0 + b) * L * n;
#pragma GCC unroll 16
            for (int64_t v = 0; v < n; v++)
                v_store(db + v * L,
                        v_fnma(vs_exp(v_load(yb + v * L)),
                               bw_perm(fidx[v], sts[b]),
                               v_load(gb + v * L)));
        }
    }
}

/* bw_lsm_short_n, one instance per n (a constant: the loops unrolled,
 * the columns in registers, not on the stack). */
static void bw_lsm_short(const float *g, const float *y, float *dx,
                         int64_t nb, int64_t n)
{
    switch (n) {
#define BW_SHORT_CASE(N)                                                  \
    case N:                                                               \
        bw_lsm_short_n(g, y, dx, nb, N);                                  \
        return;
        KS_SHORT_NS(BW_SHORT_CASE)
#undef BW_SHORT_CASE
    default:
        bw_lsm_short_n(g, y, dx, nb, n);
    }
}

/* Outer lanes [o0, o1): contiguous rows of at most VS_LANES by
 * bw_lsm_short, VS_LANES at once; a contiguous lane (inner 1) sums g in two pairs
 * of double accumulators, then writes g - exp(y) s in one FMA; a lane
 * of a non-last axis runs VS_LANES adjacent lanes at once (the last
 * group masked).  s is rounded to float first, as the portable row's
 * (T)s. */
static void bw_lsm_rows(const float *g, const float *y, float *dx,
                        int64_t o0, int64_t o1, int64_t len, int64_t inner)
{
    if (inner == 1 && len <= VS_LANES && o1 - o0 >= VS_LANES) {
        const int64_t nb = (o1 - o0) / VS_LANES;
        bw_lsm_short(g + o0 * len, y + o0 * len, dx + o0 * len, nb, len);
        o0 += nb * VS_LANES;
    }
    for (int64_t o = o0; o < o1; o++) {
        const int64_t base = o * len * inner;
        if (inner == 1) {
            const float *gr = g + base, *yr = y + base;
            float *dr = dx + base;
            bw_vd l0 = bw_dzero(), h0 = bw_dzero(), l1 = bw_dzero(),
                  h1 = bw_dzero();
            int64_t k = 0;
            for (; k + 2 * VS_LANES <= len; k += 2 * VS_LANES) {
                bw_dacc(v_load(gr + k), &l0, &h0);
                bw_dacc(v_load(gr + k + VS_LANES), &l1, &h1);
            }
            for (; k < len; k += VS_LANES)
                bw_dacc(v_load_n(gr + k, len - k), &l0, &h0);
            const vf st = v_set1((float)(bw_dhsum(l0, h0) +
                                         bw_dhsum(l1, h1)));
            k = 0;
            for (; k + VS_LANES <= len; k += VS_LANES)
                v_store(dr + k,
                        v_fnma(vs_exp(v_load(yr + k)), st, v_load(gr + k)));
            if (k < len) {
                const int64_t r = len - k;
                v_store_n(dr + k,
                          v_fnma(vs_exp(v_load_n(yr + k, r)), st,
                                 v_load_n(gr + k, r)),
                          r);
            }
            continue;
        }
        for (int64_t i0 = 0; i0 < inner; i0 += VS_LANES) {
            const int64_t r =
                inner - i0 < VS_LANES ? inner - i0 : VS_LANES;
            bw_vd lo = bw_dzero(), hi = bw_dzero();
            for (int64_t k = 0; k < len; k++)
                bw_dacc(v_load_n(g + base + k * inner + i0, r), &lo, &hi);
            const vf st = bw_dcvt(lo, hi);
            for (int64_t k = 0; k < len; k++) {
                const int64_t q = base + k * inner + i0;
                v_store_n(dx + q,
                          v_fnma(vs_exp(v_load_n(y + q, r)), st,
                                 v_load_n(g + q, r)),
                          r);
            }
        }
    }
}

#define BW_LSM_ENTRY(SFX, LV)                                             \
    int TB_CPU_KFN(log_softmax_backward, f32, SFX)(                       \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_bw_lsm(ctx, LV, in, out, p, bw_lsm_rows);           \
    }

/* ---- max_pool2d_backward, 2x2 windows (bwd_simd.h) ------------------ */

#if VS_LANES == 16
/* even / odd lanes of the 2 L-lane sequence a, b; zip: a0 b0 a1 b1 ...
 * of the lower (lo) or upper (hi) halves of a and b */
static inline vf bw_even(vf a, vf b)
{
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                             26, 28, 30), b);
}
static inline vf bw_odd(vf a, vf b)
{
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25,
                             27, 29, 31), b);
}
static inline vf bw_zip_lo(vf a, vf b)
{
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6,
                             22, 7, 23), b);
}
static inline vf bw_zip_hi(vf a, vf b)
{
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29,
                             14, 30, 15, 31), b);
}
#else
static inline vf bw_even(vf a, vf b)
{
    return _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8));
}
static inline vf bw_odd(vf a, vf b)
{
    return _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8));
}
static inline vf bw_zip_lo(vf a, vf b)
{
    return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b),
                                  _mm256_unpackhi_ps(a, b), 0x20);
}
static inline vf bw_zip_hi(vf a, vf b)
{
    return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b),
                                  _mm256_unpackhi_ps(a, b), 0x31);
}
#endif

/* The running maximum m and candidate v: v when m is not NaN and v > m
 * or v is NaN (the first NaN wins, as the forward kernel) */
static inline vf bw_mp_max(vf m, vf v)
{
    vm upd = m_or(v_gt(v, m), v_unord(v, v));
    return v_sel(v_unord(m, m), m, v_sel(upd, v, m));
}

/* The windows' places from their elements v0..v3 (order x00 x01 x10
 * x11) and maximum m: the first equal to m (nan: or NaN) takes gv, the
 * others +0 */
#define BW_MP_TAKE(gv, v0, v1, v2, v3, m, nan, r)                         \
    do {                                                                  \
        const vf z_ = v_set1(0.0f);                                       \
        const vf v_[3] = {v0, v1, v2};                                    \
        vf rest_ = gv;                                                    \
        for (int t_ = 0; t_ < 3; t_++) {                                  \
            const vm h_ = nan ? m_or(v_eq(v_[t_], m),                     \
                                     v_unord(v_[t_], v_[t_]))             \
                              : v_eq(v_[t_], m);                          \
            r[t_] = v_sel(h_, rest_, z_);                                 \
            rest_ = v_sel(h_, z_, rest_);                                 \
        }                                                                 \
        r[3] = rest_;                                                     \
    } while (0)

/* bw_mp_windows's windows holding a NaN: the running rule (the first
 * NaN wins); out of line, so that the common path keeps its registers */
static __attribute__((noinline, cold)) void
bw_mp_windows_nan(vf gv, vf v0, vf v1, vf v2, vf v3, vf r[4])
{
    const vf m = bw_mp_max(bw_mp_max(bw_mp_max(v0, v1), v2), v3);
    BW_MP_TAKE(gv, v0, v1, v2, v3, m, 1, r);
}

/* VS_LANES windows: a0 a1 the x0 row's 2 L elements, b0 b1 x1's, gv
 * their gradients; r0..r3 the dx values of the windows' four places
 * (selects only: g's bits or +0, as the portable row). */
static inline __attribute__((always_inline)) void
bw_mp_windows(vf gv, vf a0, vf a1, vf b0, vf b1, vf r[4])
{
    const vf v0 = bw_even(a0, a1), v1 = bw_odd(a0, a1);
    const vf v2 = bw_even(b0, b1), v3 = bw_odd(b0, b1);
    if (__builtin_expect(m_any(m_or(v_unord(v0, v1), v_unord(v2, v3))),
                         0)) {
        vf t[4]; /* its own array: r stays in registers */
        bw_mp_windows_nan(gv, v0, v1, v2, v3, t);
        r[0] = t[0], r[1] = t[1], r[2] = t[2], r[3] = t[3];
        return;
    }
    /* no NaN among the vector's windows: m the plain maximum (which zero
     * a -0/+0 tie gives does not matter: the first element == m takes
     * g either way) */
    const vf m = v_max(v_max(v0, v1), v_max(v2, v3));
    BW_MP_TAKE(gv, v0, v1, v2, v3, m, 0, r);
}

/* One row of 2x2 windows in T on vectors V of L lanes (P: the helpers'
 * prefix, WIN: the windows' function); the tail as n windows, 2 n
 * elements of each row in two masked vectors (the second empty when n <=
 * L / 2). */
#define BW_MP2_ROW(NAME, T, V, P, L, WIN)                                 \
    static inline __attribute__((always_inline)) void NAME(               \
        const T *g, const T *x0, const T *x1, T *d0, T *d1, int64_t ow)   \
    {                                                                     \
        int64_t i = 0;                                                    \
        V r[4];                                                           \
        for (; i + (L) <= ow; i += (L)) {                                 \
            WIN(P##load(g + i), P##load(x0 + 2 * i),                      \
                P##load(x0 + 2 * i + (L)), P##load(x1 + 2 * i),           \
                P##load(x1 + 2 * i + (L)), r);                            \
            P##store(d0 + 2 * i, P##zip_lo(r[0], r[1]));                  \
            P##store(d0 + 2 * i + (L), P##zip_hi(r[0], r[1]));            \
            P##store(d1 + 2 * i, P##zip_lo(r[2], r[3]));                  \
            P##store(d1 + 2 * i + (L), P##zip_hi(r[2], r[3]));            \
        }                                                                 \
        if (i < ow) {                                                     \
            const int64_t n = ow - i, e0 = 2 * n < (L) ? 2 * n : (L);     \
            const int64_t e1 = 2 * n - e0;                                \
            const V z = P##set1(0);                                       \
            WIN(P##load_n(g + i, n), P##load_n(x0 + 2 * i, e0),           \
                e1 ? P##load_n(x0 + 2 * i + (L), e1) : z,                 \
                P##load_n(x1 + 2 * i, e0),                                \
                e1 ? P##load_n(x1 + 2 * i + (L), e1) : z, r);             \
            P##store_n(d0 + 2 * i, P##zip_lo(r[0], r[1]), e0);            \
            P##store_n(d1 + 2 * i, P##zip_lo(r[2], r[3]), e0);            \
            if (e1) {                                                     \
                P##store_n(d0 + 2 * i + (L), P##zip_hi(r[0], r[1]), e1);  \
                P##store_n(d1 + 2 * i + (L), P##zip_hi(r[2], r[3]), e1);  \
            }                                                             \
        }                                                                 \
    }

/* f32's helpers under the macros' names */
#define bw_f32_load v_load
#define bw_f32_load_n v_load_n
#define bw_f32_store v_store
#define bw_f32_store_n v_store_n
#define bw_f32_set1 v_set1
#define bw_f32_zip_lo bw_zip_lo
#define bw_f32_zip_hi bw_zip_hi
BW_MP2_ROW(bw_mp2_row, float, vf, bw_f32_, VS_LANES, bw_mp_windows)

#if VS_LANES == 16
/* bw_mp2_row on `rows` consecutive row pairs of rows of W = 2 ow < 32
 * elements (one masked step each; the masks made once: computed per row
 * they cost 32x16x24x24's f32 rows a fifth of their time) */
static void bw_mp2_short(const float *g, const float *x, float *dx,
                         int64_t rows, int64_t ow)
{
    const int64_t W = 2 * ow, e0 = W < 16 ? W : 16, e1 = W - e0;
    const __mmask16 mg = v_first(ow), m0 = v_first(e0), m1 = v_first(e1);
    for (int64_t t = 0; t < rows; t++, g += ow, x += 2 * W, dx += 2 * W) {
        vf r[4];
        bw_mp_windows(_mm512_maskz_loadu_ps(mg, g),
                      _mm512_maskz_loadu_ps(m0, x),
                      _mm512_maskz_loadu_ps(m1, x + 16),
                      _mm512_maskz_loadu_ps(m0, x + W),
                      _mm512_maskz_loadu_ps(m1, x + W + 16), r);
        _mm512_mask_storeu_ps(dx, m0, bw_zip_lo(r[0], r[1]));
        _mm512_mask_storeu_ps(dx + 16, m1, bw_zip_hi(r[0], r[1]));
        _mm512_mask_storeu_ps(dx + W, m0, bw_zip_lo(r[2], r[3]));
        _mm512_mask_storeu_ps(dx + W + 16, m1, bw_zip_hi(r[2], r[3]));
    }
}
#define BW_MP2_SHORT(g, x, dx, rows, ow)                                  \
    ((ow) < 16 ? (bw_mp2_short(g, x, dx, rows, ow), 1) : 0)
#else
#define BW_MP2_SHORT(g, x, dx, rows, ow) 0
#endif
#define BW_NO_SHORT(g, x, dx, rows, ow) 0

/* The same in f64 on pool64_simd.h's P64_W double lanes (selects only:
 * g's bits or +0, the portable row's).  Without a NaN among the vectors'
 * windows, m is the plain maximum (which zero a tie of -0 and +0 gives
 * does not matter: the first element == m takes g either way); with
 * one, the running rule (m stays NaN once NaN, the first NaN takes g). */
static inline void bw_mp_windows64(p64 gv, p64 a0, p64 a1, p64 b0, p64 b1,
                                   p64 r[4])
{
    const p64 v[4] = {p64_even(a0, a1), p64_odd(a0, a1), p64_even(b0, b1),
                      p64_odd(b0, b1)};
    const bool nan = p64_any(p64_or(p64_unord(v[0], v[1]),
                                    p64_unord(v[2], v[3])));
    p64 m = p64_max(p64_max(v[0], v[1]), p64_max(v[2], v[3]));
    if (nan) {
        m = v[0];
        for (int t = 1; t < 4; t++)
            m = p64_sel(p64_nan(m), m, p64_cmax(m, v[t]));
    }
    const p64 z = p64_set1(0.0);
    p64 rest = gv;
    for (int t = 0; t < 3; t++) {
        const p64m h = nan ? p64_or(p64_eq(v[t], m), p64_nan(v[t]))
                           : p64_eq(v[t], m);
        r[t] = p64_sel(h, rest, z);
        rest = p64_sel(h, z, rest);
    }
    r[3] = rest;
}

BW_MP2_ROW(bw_mp2_row64, double, p64, p64_, P64_W, bw_mp_windows64)

/* avg_pool2d_backward's row of 2x2 windows (the same contract, x0 and
 * x1 unused): each window's four places g[i] * 0.25, the C row's
 * product, by pairs of lanes (zip of the vector with itself). */
#define BW_AP2_ROW(NAME, T, V, P, L)                                      \
    static void NAME(const T *g, const T *x0, const T *x1, T *d0, T *d1,  \
                     int64_t ow)                                          \
    {                                                                     \
        (void)x0, (void)x1;                                               \
        const V q = P##set1((T)0.25);                                     \
        int64_t i = 0;                                                    \
        for (; i + (L) <= ow; i += (L)) {                                 \
            const V v = P##mul(P##load(g + i), q);                        \
            const V lo = P##zip_lo(v, v), hi = P##zip_hi(v, v);           \
            P##store(d0 + 2 * i, lo);                                     \
            P##store(d0 + 2 * i + (L), hi);                               \
            P##store(d1 + 2 * i, lo);                                     \
            P##store(d1 + 2 * i + (L), hi);                               \
        }                                                                 \
        if (i < ow) {                                                     \
            const int64_t n = ow - i, e0 = 2 * n < (L) ? 2 * n : (L);     \
            const int64_t e1 = 2 * n - e0;                                \
            const V v = P##mul(P##load_n(g + i, n), q);                   \
            const V lo = P##zip_lo(v, v), hi = P##zip_hi(v, v);           \
            P##store_n(d0 + 2 * i, lo, e0);                               \
            P##store_n(d1 + 2 * i, lo, e0);                               \
            if (e1) {                                                     \
                P##store_n(d0 + 2 * i + (L), hi, e1);                     \
                P##store_n(d1 + 2 * i + (L), hi, e1);                     \
            }                                                             \
        }                                                                 \
    }
#define bw_f32_mul v_mul
BW_AP2_ROW(bw_ap2_row, float, vf, bw_f32_, VS_LANES)
BW_AP2_ROW(bw_ap2_row64, double, p64, p64_, P64_W)

/* bwd_simd.h's plane function over a row function ROW of T: every
 * window row of `planes` planes, then the last column (W odd) and the
 * last row (H odd), which no window covers, zeroed (the row called
 * directly, inlined: an indirect call per row cost avg_pool2d_backward
 * f32 a third of its 32x16x24x24 time) */
#define BW_2X2_PLANES(NAME, T, ROW, SHORT)                                \
    static void NAME(const T *g, const T *x, T *dx, int64_t planes,       \
                     int64_t H, int64_t W, int64_t OH, int64_t OW)        \
    {                                                                     \
        if (H == 2 * OH && W == 2 * OW) {                                 \
            if (SHORT(g, x, dx, planes * OH, OW))                         \
                return;                                                   \
            /* every row pair of every plane in one sequence (pair t at  \
             * 2 t W, its g row at t OW): fewer live pointers */          \
            for (int64_t t = 0; t < planes * OH; t++)                     \
                ROW(g + t * OW, x + 2 * t * W, x + (2 * t + 1) * W,       \
                    dx + 2 * t * W, dx + (2 * t + 1) * W, OW);            \
            return;                                                       \
        }                                                                 \
        for (int64_t nc = 0; nc < planes; nc++) {                         \
            const T *xp = x + nc * H * W, *gp = g + nc * OH * OW;         \
            T *dp = dx + nc * H * W;                                      \
            for (int64_t oh = 0; oh < OH; oh++) {                         \
                T *d0 = dp + 2 * oh * W;                                  \
                const T *x0 = xp + 2 * oh * W;                            \
                ROW(gp + oh * OW, x0, x0 + W, d0, d0 + W, OW);            \
                if (W > 2 * OW)                                           \
                    d0[W - 1] = d0[2 * W - 1] = 0;                        \
            }                                                             \
            if (H > 2 * OH)                                               \
                memset(dp + 2 * OH * W, 0, (size_t)W * sizeof(T));        \
        }                                                                 \
    }
BW_2X2_PLANES(bw_mp2_planes, float, bw_mp2_row, BW_MP2_SHORT)
BW_2X2_PLANES(bw_mp2_planes64, double, bw_mp2_row64, BW_NO_SHORT)
BW_2X2_PLANES(bw_ap2_planes, float, bw_ap2_row, BW_NO_SHORT)
BW_2X2_PLANES(bw_ap2_planes64, double, bw_ap2_row64, BW_NO_SHORT)

#define BW_MP_ENTRY(SFX, LV)                                              \
    int TB_CPU_KFN(max_pool2d_backward, f32, SFX)(                        \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_bw_max_pool(ctx, LV, in, out, p, bw_mp2_planes);       \
    }                                                                     \
    int TB_CPU_KFN(max_pool2d_backward, f64, SFX)(                        \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_bw_max_pool64(ctx, LV, in, out, p, bw_mp2_planes64);   \
    }                                                                     \
    int TB_CPU_KFN(avg_pool2d_backward, f32, SFX)(                        \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_bw_avg_pool(ctx, LV, in, out, p, bw_ap2_planes);       \
    }                                                                     \
    int TB_CPU_KFN(avg_pool2d_backward, f64, SFX)(                        \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_bw_avg_pool64(ctx, LV, in, out, p, bw_ap2_planes64);   \
    }

/* ---- sum_backward, mean_backward f32 (bwd_simd.h's broadcast) -------
 * backward.c's portable row fills each lane's run by wmemset, 16-byte
 * stores in this baseline build (sum_backward axis 1 1024x1024, 4 MiB:
 * 188 us); whole vectors here, 4 a step, the tail by a masked-length
 * store (v_store_n).  Values: g times the scale in float, the portable
 * row's. */
static void bw_bcast32(const float *g, float *dx, int64_t o0, int64_t o1,
                       int64_t len, int64_t inner, float scale)
{
    const vf sc = v_set1(scale);
    for (int64_t o = o0; o < o1; o++) {
        float *d = dx + o * len * inner;
        const float *go = g + o * inner;
        if (inner == 1) {
            const vf v = v_mul(v_set1(go[0]), sc);
            int64_t i = 0;
            for (; i + 4 * VS_LANES <= len; i += 4 * VS_LANES) {
                v_store(d + i, v);
                v_store(d + i + VS_LANES, v);
                v_store(d + i + 2 * VS_LANES, v);
                v_store(d + i + 3 * VS_LANES, v);
            }
            for (; i + VS_LANES <= len; i += VS_LANES)
                v_store(d + i, v);
            if (i < len)
                v_store_n(d + i, v, len - i);
            continue;
        }
        for (int64_t k = 0; k < len; k++, d += inner) {
            int64_t i = 0;
            for (; i + VS_LANES <= inner; i += VS_LANES)
                v_store(d + i, v_mul(v_load(go + i), sc));
            for (; i < inner; i++)
                d[i] = go[i] * scale;
        }
    }
}

#define BW_BCAST_ENTRY(SFX, LV)                                           \
    int TB_CPU_KFN(sum_backward, f32, SFX)(                               \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_bw_bcast32(ctx, LV, TB_OP_sum_backward, in, out, p, \
                                 bw_bcast32);                             \
    }                                                                     \
    int TB_CPU_KFN(mean_backward, f32, SFX)(                              \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_bw_bcast32(ctx, LV, TB_OP_mean_backward, in, out,   \
                                 p, bw_bcast32);                          \
    }

#define BW_ENTRIES(SFX, LV)                                               \
    BW_ENTRY(relu, SFX, LV)                                               \
    BW_ENTRY(sigmoid, SFX, LV)                                            \
    BW_ENTRY(tanh, SFX, LV)                                               \
    BW_ENTRY(gelu, SFX, LV)                                               \
    BW_LSM_ENTRY(SFX, LV)                                                 \
    BW_MP_ENTRY(SFX, LV)                                                  \
    BW_BCAST_ENTRY(SFX, LV)

#endif /* TB_BACKENDS_CPU_BWD_SIMD_IMPL_H */
