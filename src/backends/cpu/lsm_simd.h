/* The online statistics of a log_softmax row (max m and s = sum
 * exp(x - m)) in f32 SIMD lanes, and softmax's write pass, for inclusion by the files of one ISA
 * level only (over vmath_simd.h's helpers): log_softmax and softmax
 * (kernels_simd.h) and cross_entropy (xent_avx2.c) read each row once
 * from memory through them.  Everything here is `static inline`. */
#ifndef TB_BACKENDS_CPU_LSM_SIMD_H
#define TB_BACKENDS_CPU_LSM_SIMD_H

#include <math.h>
#include <stdint.h>

#include "kernels.h" /* TB_CPU_SUM_BLOCK */
#include "vmath_simd.h"
#include "vtranspose_simd.h"

/* a + b (mx 0) or max(a, b) (mx 1; a constant once inlined). */
static inline vf ks_fold(vf a, vf b, int mx)
{
    return mx ? v_max(a, b) : v_add(a, b);
}

/* p[0..m) folded into four vector accumulators (four vectors a step,
 * then single vectors, then the tail with the identity id in the lanes
 * past m), combined as (a0 . a1) . (a2 . a3): the sums' blocks
 * (kernels_simd.h) and the statistics' block max below. */
static inline vf ks_fold4(const float *p, int64_t m, float id, int mx)
{
    const int64_t L = VS_LANES;
    vf a0 = v_set1(id), a1 = a0, a2 = a0, a3 = a0;
    int64_t j = 0;
    for (; j + 4 * L <= m; j += 4 * L) {
        a0 = ks_fold(a0, v_load(p + j), mx);
        a1 = ks_fold(a1, v_load(p + j + L), mx);
        a2 = ks_fold(a2, v_load(p + j + 2 * L), mx);
        a3 = ks_fold(a3, v_load(p + j + 3 * L), mx);
    }
    for (; j + L <= m; j += L)
        a0 = ks_fold(a0, v_load(p + j), mx);
    if (j < m)
        a1 = ks_fold(a1, v_load_fill(p + j, m - j, id), mx);
    return ks_fold(ks_fold(a0, a1, mx), ks_fold(a2, a3, mx), mx);
}

/*
 * Online (one-pass over memory) log_softmax statistics of one row:
 * max m and s = sum exp(x - m).  Blocks of TB_CPU_SUM_BLOCK values are
 * reduced while they sit in L1 (block max, then the block's sum of
 * exp(x - block max) in f32 lanes of at most a few dozen terms, each
 * term <= 1), and blocks are merged in double with the online rule
 *   M' = max(M, mb),  S' = S e^(M - M') + sb e^(mb - M').
 * A block whose max is -inf adds nothing (all its terms are 0).  +inf or
 * NaN in a row makes s NaN, so the whole row becomes NaN, as the
 * reference's does.
 */
static inline void ks_lsm_block(const float *p, int64_t m, float *mb,
                                float *sb)
{
    const int64_t L = VS_LANES;
    const float ninf = -__builtin_inff();
    const float mx = v_hmax(ks_fold4(p, m, ninf, 1));
    const vf vm_ = v_set1(mx);
    vf s0 = v_set1(0.0f), s1 = s0;
    int64_t j = 0;
    for (; j + 2 * L <= m; j += 2 * L) {
        s0 = v_add(s0, vs_exp(v_sub(v_load(p + j), vm_)));
        s1 = v_add(s1, vs_exp(v_sub(v_load(p + j + L), vm_)));
    }
    for (; j + L <= m; j += L)
        s0 = v_add(s0, vs_exp(v_sub(v_load(p + j), vm_)));
    if (j < m)
        s1 = v_add(s1,
                   vs_exp(v_sub(v_load_fill(p + j, m - j, ninf), vm_)));
    *mb = mx;
    *sb = v_hsum(v_add(s0, s1));
}

static inline void ks_lsm_stats(const float *x, int64_t n, float *mo,
                                float *so)
{
    if (n <= TB_CPU_SUM_BLOCK) {
        ks_lsm_block(x, n, mo, so);
        return;
    }
    double M = -__builtin_inf(), S = 0;
    for (int64_t i = 0; i < n; i += TB_CPU_SUM_BLOCK) {
        const int64_t m = n - i < TB_CPU_SUM_BLOCK ? n - i : TB_CPU_SUM_BLOCK;
        float mb, sb;
        ks_lsm_block(x + i, m, &mb, &sb);
        if (mb == -__builtin_inff()) {
            /* Nothing to add, unless the max lost a NaN (x86 max
             * returns its second operand when either is NaN). */
            for (int64_t j = 0; j < m; j++)
                if (x[i + j] != x[i + j])
                    S = __builtin_nan("");
            continue;
        }
        if (mb > M) {
            S = S * exp(M - mb) + sb;
            M = mb;
        } else {
            S += sb * exp(mb - M);
        }
    }
    if (M == -__builtin_inf())
        S = __builtin_nan(""); /* all -inf: the reference gives NaN */
    *mo = (float)M;
    *so = (float)S;
}

/* fidx[v][k] = (v VS_LANES + k) / n for v < n: the row of flat element
 * v VS_LANES + k of a block of VS_LANES rows of n, for the short-row
 * paths' permutes (counted: n VS_LANES divisions cost more than a block
 * of 10-element rows). */
static inline void ks_row_index(int32_t (*fidx)[VS_LANES], int64_t n)
{
    int32_t row = 0, col = 0;
    for (int64_t v = 0; v < n; v++)
        for (int k = 0; k < VS_LANES; k++) {
            fidx[v][k] = row;
            if (++col == n)
                col = 0, row++;
        }
}

/* X(n) for every short-row length n = 1 .. VS_LANES: the case lists of
 * the short-row paths' per-n instances (a switch on n, n a constant in
 * each case) */
#if VS_LANES == 16
#define KS_SHORT_NS(X)                                                    \
    X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)  \
        X(14) X(15) X(16)
#else
#define KS_SHORT_NS(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
#endif

#if VS_LANES == 16
/* ks_load_cols's 4 x 4 transpose inside the 128-bit lanes: col[c] for
 * c < w (1 <= w <= 4) from a[j], whose lane q holds row j + 4q's four
 * columns (half_lsm_short.h's 16-bit columns too, widened) */
static inline __attribute__((always_inline)) void ks_cols4(const vf *a,
                                                           vf *col,
                                                           int64_t w)
{
    const vf t0 = _mm512_unpacklo_ps(a[0], a[1]);
    const vf t1 = _mm512_unpackhi_ps(a[0], a[1]);
    const vf t2 = _mm512_unpacklo_ps(a[2], a[3]);
    const vf t3 = _mm512_unpackhi_ps(a[2], a[3]);
    col[0] = _mm512_shuffle_ps(t0, t2, 0x44);
    if (w > 1)
        col[1] = _mm512_shuffle_ps(t0, t2, 0xee);
    if (w > 2)
        col[2] = _mm512_shuffle_ps(t1, t3, 0x44);
    if (w > 3)
        col[3] = _mm512_shuffle_ps(t1, t3, 0xee);
}
#endif

/* col[c] for c < n (1 <= n <= VS_LANES, a constant once inlined; col
 * holds VS_LANES vectors, those past n scratch): lane r = element c of
 * row r of the VS_LANES contiguous rows of n at x.  AVX-512: per group
 * of four columns, four vectors a_j whose 128-bit lane q holds row j +
 * 4q's four columns (one masked load a lane, the pointer moved back 4q
 * elements so that the piece lands in lane q; masked lanes read
 * nothing), then a 4 x 4 transpose inside the 128-bit lanes: at n = 10
 * 48 loads and 20 shuffles where masked row loads and v_transpose's
 * 16 x 16 took ~58 shuffles (Zen 4 runs a zmm shuffle on the FMA pipe
 * the exponentials need, a load on its own ports).  AVX2: masked row
 * loads and v_transpose.  The same columns either way. */
static inline __attribute__((always_inline)) void
ks_load_cols(const float *x, int64_t n, vf *col)
{
#if VS_LANES == 16
#pragma GCC unroll 4
    for (int64_t g = 0; 4 * g < n; g++) {
        const int64_t w = n - 4 * g < 4 ? n - 4 * g : 4;
        const unsigned m4 = (1u << w) - 1;
        vf a[4];
#pragma GCC unroll 4
        for (int64_t j = 0; j < 4; j++) {
            vf v = _mm512_maskz_loadu_ps((__mmask16)m4, x + j * n + 4 * g);
#pragma GCC unroll 4
            for (int64_t q = 1; q < 4; q++)
                v = _mm512_mask_loadu_ps(v, (__mmask16)(m4 << (4 * q)),
                                         x + (j + 4 * q) * n + 4 * g -
                                             4 * q);
            a[j] = v;
        }
        ks_cols4(a, col + 4 * g, w);
    }
#else
#pragma GCC unroll 8
    for (int64_t r = 0; r < VS_LANES; r++)
        col[r] = v_load_n(x + r * n, n);
    v_transpose(col);
#endif
}

/* ks_load_cols's columns with each group of four columns' lanes loaded
 * as one 16-byte load and three 16-byte broadcasts under a mask (loads
 * only, on the load ports; a 64-byte masked load of the same four
 * values spans two cache lines most of the time): the last group of w
 * < 4 columns as ks_load_cols.  The columns of a block of 16 rows of 10
 * in ~45 cycles where ks_load_cols's 48 masked loads took ~75 (lsm-short
 * microbenchmark, Zen 4); the softmax rows' stats, whose loads overlap
 * their exponentials (log_softmax_backward's sums ran ~3% slower this
 * way and keep ks_load_cols), at n < 16 (softmax 512x16 ran 2.7%
 * slower this way: its rows' masked loads split no line).  AVX2:
 * ks_load_cols. */
#if VS_LANES == 16
static inline __attribute__((always_inline)) vf ks_ld4x4(const float *p,
                                                        int64_t step)
{
    vf v = _mm512_castps128_ps512(_mm_loadu_ps(p));
    v = _mm512_mask_broadcast_f32x4(v, 0x00f0, _mm_loadu_ps(p + step));
    v = _mm512_mask_broadcast_f32x4(v, 0x0f00, _mm_loadu_ps(p + 2 * step));
    return _mm512_mask_broadcast_f32x4(v, 0xf000,
                                       _mm_loadu_ps(p + 3 * step));
}
#endif

static inline __attribute__((always_inline)) void
ks_load_cols_bc(const float *x, int64_t n, vf *col)
{
#if VS_LANES == 16
    if (n == VS_LANES) { /* rows of a cache line: no split loads */
        ks_load_cols(x, n, col);
        return;
    }
#pragma GCC unroll 4
    for (int64_t g = 0; 4 * g + 4 <= n; g++) {
        vf a[4];
#pragma GCC unroll 4
        for (int64_t j = 0; j < 4; j++)
            a[j] = ks_ld4x4(x + j * n + 4 * g, 4 * n);
        ks_cols4(a, col + 4 * g, 4);
    }
    const int64_t w = n % 4;
    if (w) {
        const int64_t c0 = n - w;
        const unsigned m4 = (1u << w) - 1;
        vf a[4];
#pragma GCC unroll 4
        for (int64_t j = 0; j < 4; j++) {
            vf v = _mm512_maskz_loadu_ps((__mmask16)m4, x + j * n + c0);
#pragma GCC unroll 4
            for (int64_t q = 1; q < 4; q++)
                v = _mm512_mask_loadu_ps(v, (__mmask16)(m4 << (4 * q)),
                                         x + (j + 4 * q) * n + c0 - 4 * q);
            a[j] = v;
        }
        ks_cols4(a, col + c0, w);
    }
#else
    ks_load_cols(x, n, col);
#endif
}

/* exp(x) for x <= 0 or NaN (x - max in a row): the same value as
 * vs_exp's, bit for bit (its general path's clamp and reduction, whose
 * vscalefps equals the fast path's exponent addition wherever that
 * applies), with no range test: one vmaxps for the andn, compare, mask
 * move and branch a vector (a block of 16 rows of 10: ~104 -> ~96
 * cycles, lsm-short microbenchmark, Zen 4).  AVX2 keeps vs_exp (its
 * v_scale takes seven operations). */
static inline vf ks_exp_nonpos(vf x)
{
#if VS_LANES == 16
    vf k, n;
    const vf r = vs_exp_reduce(v_max(v_set1(VS_EXP_LO), x), &k, &n);
    return v_scale(vs_exp_poly(r), n);
#else
    return vs_exp(x);
#endif
}

/* Pass one of a transposed block (n <= VS_LANES; its columns col):
 * *mo = the rows' max, *so = s = sum exp(x - m) in column order
 * (ks_short_rows and half_lsm_short.h's rows take its log or inverse);
 * softmax keeps exp(x - m) of columns 0 .. n - 1 in ex. */
static inline __attribute__((always_inline)) void
ks_cols_stats(const vf *col, int64_t n, vf *mo, vf *so, vf *ex, int soft)
{
    vf m = col[0];
#pragma GCC unroll 16
    for (int64_t c = 1; c < n; c++)
        m = v_max(m, col[c]);
    vf s = v_set1(0.0f);
#pragma GCC unroll 16
    for (int64_t c = 0; c < n; c++) {
        const vf e = ks_exp_nonpos(v_sub(col[c], m));
        if (soft)
            ex[c] = e;
        s = v_add(s, e);
    }
    *mo = m;
    *so = s;
}

/* One vector of the write pass below. */
static inline vf ks_lsm_one(vf x, vf m, vf c, int soft)
{
    return soft ? v_mul(vs_exp(v_sub(x, m)), c) : v_sub(v_sub(x, m), c);
}

/* The write pass of a row of n values: log_softmax's (x - m) - c (soft
 * 0, c = log s) or softmax's exp(x - m) * c (soft 1, c = 1 / s rounded
 * once, as the portable version's inverse; cross_entropy's gradient
 * passes g / (N s)); soft is a constant once inlined. */
static inline void ks_lsm_write(const float *x, float *o, int64_t n, float m,
                                float c, int soft)
{
    const int64_t L = VS_LANES;
    const vf vm_ = v_set1(m), vc = v_set1(c);
    int64_t j = 0;
    for (; j + 2 * L <= n; j += 2 * L) {
        vf a = ks_lsm_one(v_load(x + j), vm_, vc, soft);
        vf b = ks_lsm_one(v_load(x + j + L), vm_, vc, soft);
        v_store(o + j, a);
        v_store(o + j + L, b);
    }
    for (; j + L <= n; j += L)
        v_store(o + j, ks_lsm_one(v_load(x + j), vm_, vc, soft));
    if (j < n)
        v_store_n(o + j, ks_lsm_one(v_load_n(x + j, n - j), vm_, vc, soft),
                  n - j);
}


/* softmax's statistics of one row of n <= TB_CPU_SUM_BLOCK values with
 * its exponentials kept: *m = max x, e = exp(x - m) written to o, their
 * sum returned (two partial sums in ks_lsm_block's order: the same m
 * and sum).  A row of -inf, or a NaN or +inf in it, makes the sum NaN,
 * as ks_lsm_stats's. */
static inline float ks_sm_exp(const float *x, float *o, int64_t n, float *m)
{
    const int64_t L = VS_LANES;
    const float ninf = -__builtin_inff();
    *m = v_hmax(ks_fold4(x, n, ninf, 1));
    const vf vm_ = v_set1(*m);
    vf s0 = v_set1(0.0f), s1 = s0;
    int64_t j = 0;
    for (; j + 2 * L <= n; j += 2 * L) {
        const vf a = vs_exp(v_sub(v_load(x + j), vm_));
        const vf b = vs_exp(v_sub(v_load(x + j + L), vm_));
        v_store(o + j, a);
        v_store(o + j + L, b);
        s0 = v_add(s0, a);
        s1 = v_add(s1, b);
    }
    for (; j + L <= n; j += L) {
        const vf a = vs_exp(v_sub(v_load(x + j), vm_));
        v_store(o + j, a);
        s0 = v_add(s0, a);
    }
    if (j < n) {
        const vf a = vs_exp(v_sub(v_load_fill(x + j, n - j, ninf), vm_));
        v_store_n(o + j, a, n - j);
        s1 = v_add(s1, a);
    }
    return v_hsum(v_add(s0, s1));
}

/* o[0..n) *= c */
static inline void ks_sm_scale(float *o, int64_t n, float c)
{
    const int64_t L = VS_LANES;
    const vf vc = v_set1(c);
    int64_t j = 0;
    for (; j + 2 * L <= n; j += 2 * L) {
        v_store(o + j, v_mul(v_load(o + j), vc));
        v_store(o + j + L, v_mul(v_load(o + j + L), vc));
    }
    for (; j + L <= n; j += L)
        v_store(o + j, v_mul(v_load(o + j), vc));
    if (j < n)
        v_store_n(o + j, v_mul(v_load_n(o + j, n - j), vc), n - j);
}

/* softmax of a row of n <= TB_CPU_SUM_BLOCK with one exp an element:
 * exp(x - m) * (1 / s), 1 / s rounded once, as ks_lsm_write's (the same
 * values); the two-pass form recomputed every exp in its write pass. */
static inline void ks_sm_row(const float *x, float *o, int64_t n)
{
    float m;
    const float s = ks_sm_exp(x, o, n, &m);
    ks_sm_scale(o, n, 1.0f / s);
}

#endif
