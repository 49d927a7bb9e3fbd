/* softmax and log_softmax rows longer than KS_LSM_SHORT (32) in
 * bf16/f16, read and written as 16-bit values (half_lsm.c, at avx512
 * and avx512bf16: half_lsm_fused_avx512.c, half_lsm_fused_avx512bf16.c
 * include this file with their flags): kernels_simd.h's f32 rows'
 * operations (lsm_simd.h's ks_lsm_stats, ks_lsm_write, ks_sm_row, in
 * the same order, on the same lanes) on values widened in registers as
 * loaded, each result narrowed once as stored (half_simd.h's
 * conversions: the level's widen + f32 row + narrow, bit for bit).
 * Staged through f32 scratch these rows stored every value twice more
 * (the widened input, the f32 output: a 64-byte store a vector is two
 * cycles on Zen 4): log_softmax bf16 256x1000 took 1.1x the f32 row's
 * time.  softmax keeps its exponentials in an f32 row buffer (L1), as
 * ks_sm_row keeps them in its output.  The suffix HL_SFX names the
 * level. */
#ifndef TB_BACKENDS_CPU_HALF_LSM_FUSED_H
#define TB_BACKENDS_CPU_HALF_LSM_FUSED_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "half_simd.h" /* h_*_widen1, h_*_narrow1; lsm_simd.h */
#pragma GCC diagnostic pop
#include "half_lsm.h"

#define HL_CAT_(a, b) a##b
#define HL_CAT(a, b) HL_CAT_(a, b)

/* VS_LANES values at p (f16: dtype f16, else bf16) */
static inline vf hl_wid(hv1 h, int f16)
{
    return f16 ? h_f16_widen1(h) : h_bf16_widen1(h);
}
static inline vf hl_ld(const uint16_t *p, int f16)
{
    return hl_wid(h_load1(p), f16);
}
/* the first r values, the other lanes +0 (v_load_n) */
static inline vf hl_ld_n(const uint16_t *p, int64_t r, int f16)
{
    return hl_wid(_mm256_maskz_loadu_epi16((__mmask16)v_first(r), p), f16);
}
/* the first r values, the others fill (v_load_fill) */
static inline vf hl_ld_fill(const uint16_t *p, int64_t r, float fill,
                            int f16)
{
    return _mm512_mask_blend_ps(v_first(r), v_set1(fill),
                                hl_ld_n(p, r, f16));
}
static inline hv1 hl_nar(vf v, int f16)
{
    return f16 ? h_f16_narrow1(v) : h_bf16_narrow1(v);
}
static inline void hl_st(uint16_t *p, vf v, int f16)
{
    h_store1(p, hl_nar(v, f16));
}
static inline void hl_st_n(uint16_t *p, vf v, int64_t r, int f16)
{
    _mm256_mask_storeu_epi16(p, (__mmask16)v_first(r), hl_nar(v, f16));
}
static inline int hl_nan(uint16_t h, int f16)
{
    return f16 ? (h & 0x7c00) == 0x7c00 && (h & 0x3ff)
               : (h & 0x7f80) == 0x7f80 && (h & 0x7f);
}

/* ks_fold4's max */
static inline vf hl_max4(const uint16_t *p, int64_t m, int f16)
{
    const int64_t L = VS_LANES;
    const float ninf = -__builtin_inff();
    vf a0 = v_set1(ninf), a1 = a0, a2 = a0, a3 = a0;
    int64_t j = 0;
    for (; j + 4 * L <= m; j += 4 * L) {
        a0 = v_max(a0, hl_ld(p + j, f16));
        a1 = v_max(a1, hl_ld(p + j + L, f16));
        a2 = v_max(a2, hl_ld(p + j + 2 * L, f16));
        a3 = v_max(a3, hl_ld(p + j + 3 * L, f16));
    }
    for (; j + L <= m; j += L)
        a0 = v_max(a0, hl_ld(p + j, f16));
    if (j < m)
        a1 = v_max(a1, hl_ld_fill(p + j, m - j, ninf, f16));
    return v_max(v_max(a0, a1), v_max(a2, a3));
}

/* bf16: the max of p[0..m) in another order (even and odd values of
 * 32 by a shift and an and: one operation a vector where the ordered
 * widening takes two).  The max of non-NaN floats is any order's but
 * for the sign of a zero (x86 max returns its second operand on equal
 * ones), which no output shows: x - m and exp(x - m) are the same for
 * m = +0 and -0 but at x = +-0, where exp gives 1 either way and
 * log_softmax's (x - m) - log s is -log s unless s = 1, that is unless
 * x is the row's only zero, whose sign m then has in any order.  With a
 * NaN in the row the max may differ, but every output is NaN either way
 * (its exp term makes the sum NaN).  (tests/test_half_paths.c: rows of
 * both zeros, NaN, -inf.) */
static inline float hl_rowmax(const uint16_t *p, int64_t m, int f16)
{
    if (!f16) {
        const __m512i hm = _mm512_set1_epi32((int)0xffff0000u);
        const float ninf = -__builtin_inff();
        vf a0 = v_set1(ninf), a1 = a0, a2 = a0, a3 = a0;
        int64_t j = 0;
        for (; j + 4 * VS_LANES <= m; j += 4 * VS_LANES) {
            const __m512i v = h_load2(p + j);
            const __m512i w = h_load2(p + j + 2 * VS_LANES);
            a0 = v_max(a0, hi_f(_mm512_slli_epi32(v, 16)));
            a1 = v_max(a1, hi_f(_mm512_and_si512(v, hm)));
            a2 = v_max(a2, hi_f(_mm512_slli_epi32(w, 16)));
            a3 = v_max(a3, hi_f(_mm512_and_si512(w, hm)));
        }
        for (; j + VS_LANES <= m; j += VS_LANES)
            a0 = v_max(a0, hl_ld(p + j, 0));
        if (j < m)
            a1 = v_max(a1, hl_ld_fill(p + j, m - j, ninf, 0));
        return v_hmax(v_max(v_max(a0, a1), v_max(a2, a3)));
    }
    return v_hmax(hl_max4(p, m, f16));
}

/* ks_lsm_block */
static inline void hl_block(const uint16_t *p, int64_t m, float *mb,
                            float *sb, int f16)
{
    const int64_t L = VS_LANES;
    const float ninf = -__builtin_inff();
    const float mx = hl_rowmax(p, m, f16);
    const vf vm_ = v_set1(mx);
    vf s0 = v_set1(0.0f), s1 = s0;
    int64_t j = 0;
    for (; j + 2 * L <= m; j += 2 * L) {
        s0 = v_add(s0, vs_exp(v_sub(hl_ld(p + j, f16), vm_)));
        s1 = v_add(s1, vs_exp(v_sub(hl_ld(p + j + L, f16), vm_)));
    }
    for (; j + L <= m; j += L)
        s0 = v_add(s0, vs_exp(v_sub(hl_ld(p + j, f16), vm_)));
    if (j < m)
        s1 = v_add(s1, vs_exp(v_sub(hl_ld_fill(p + j, m - j, ninf, f16),
                                    vm_)));
    *mb = mx;
    *sb = v_hsum(v_add(s0, s1));
}

/* ks_lsm_stats */
static inline void hl_stats(const uint16_t *x, int64_t n, float *mo,
                            float *so, int f16)
{
    if (n <= TB_CPU_SUM_BLOCK) {
        hl_block(x, n, mo, so, f16);
        return;
    }
    double M = -__builtin_inf(), S = 0;
    for (int64_t i = 0; i < n; i += TB_CPU_SUM_BLOCK) {
        const int64_t m = n - i < TB_CPU_SUM_BLOCK ? n - i : TB_CPU_SUM_BLOCK;
        float mb, sb;
        hl_block(x + i, m, &mb, &sb, f16);
        if (mb == -__builtin_inff()) {
            for (int64_t j = 0; j < m; j++)
                if (hl_nan(x[i + j], f16))
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
        S = __builtin_nan("");
    *mo = (float)M;
    *so = (float)S;
}

/* ks_lsm_write: (x - m) - c (soft 0) or exp(x - m) * c (soft 1), per
 * element */
static inline void hl_write(const uint16_t *x, uint16_t *o, int64_t n,
                            float m, float c, int soft, int f16)
{
    const int64_t L = VS_LANES;
    const vf vm_ = v_set1(m), vc = v_set1(c);
    int64_t j = 0;
    /* bf16: pairs of vectors widened and narrowed in half_simd.h's
     * unpacked order (one operation a vector each way; every element's
     * operations are its own) */
    for (; !f16 && j + 2 * L <= n; j += 2 * L) {
        vf lo, hi;
        h_bf16_widen2(h_load2(x + j), &lo, &hi);
        h_store2(o + j, h_bf16_narrow2(ks_lsm_one(lo, vm_, vc, soft),
                                       ks_lsm_one(hi, vm_, vc, soft)));
    }
    for (; j + L <= n; j += L)
        hl_st(o + j, ks_lsm_one(hl_ld(x + j, f16), vm_, vc, soft), f16);
    if (j < n)
        hl_st_n(o + j,
                ks_lsm_one(hl_ld_n(x + j, n - j, f16), vm_, vc, soft),
                n - j, f16);
}

/* ks_sm_row (n <= TB_CPU_SUM_BLOCK): ks_sm_exp's exponentials into e
 * (f32), their sum in its order, then e * (1 / s) narrowed */
static inline void hl_sm_row(const uint16_t *x, uint16_t *o, float *e,
                             int64_t n, int f16)
{
    const int64_t L = VS_LANES;
    const float ninf = -__builtin_inff();
    const vf vm_ = v_set1(hl_rowmax(x, n, f16));
    vf s0 = v_set1(0.0f), s1 = s0;
    int64_t j = 0;
    for (; j + 2 * L <= n; j += 2 * L) {
        const vf a = vs_exp(v_sub(hl_ld(x + j, f16), vm_));
        const vf b = vs_exp(v_sub(hl_ld(x + j + L, f16), vm_));
        v_store(e + j, a);
        v_store(e + j + L, b);
        s0 = v_add(s0, a);
        s1 = v_add(s1, b);
    }
    for (; j + L <= n; j += L) {
        const vf a = vs_exp(v_sub(hl_ld(x + j, f16), vm_));
        v_store(e + j, a);
        s0 = v_add(s0, a);
    }
    if (j < n) {
        const vf a = vs_exp(v_sub(hl_ld_fill(x + j, n - j, ninf, f16), vm_));
        v_store_n(e + j, a, n - j);
        s1 = v_add(s1, a);
    }
    const vf vc = v_set1(1.0f / v_hsum(v_add(s0, s1)));
    j = 0;
    for (; !f16 && j + 2 * L <= n; j += 2 * L)
        h_store2(o + j, h_bf16_narrow2o(v_mul(v_load(e + j), vc),
                                        v_mul(v_load(e + j + L), vc)));
    for (; j + L <= n; j += L)
        hl_st(o + j, v_mul(v_load(e + j), vc), f16);
    if (j < n)
        hl_st_n(o + j, v_mul(v_load_n(e + j, n - j), vc), n - j, f16);
}

/* ks_rows_f32 on rows of n > KS_LSM_SHORT: softmax's rows of at most a
 * block by ks_sm_row, else each row's statistics, the group's log (or
 * inverse) by vectors, the write */
static inline __attribute__((always_inline)) void
hl_rows(const uint16_t *x, uint16_t *o, int64_t rows, int64_t n, int soft,
        int f16)
{
    if (soft && n <= TB_CPU_SUM_BLOCK) {
        float e[TB_CPU_SUM_BLOCK];
        for (int64_t r = 0; r < rows; r++)
            hl_sm_row(x + r * n, o + r * n, e, n, f16);
        return;
    }
    float m[VS_LANES], s[VS_LANES], ls[VS_LANES];
    for (int64_t r0 = 0; r0 < rows; r0 += VS_LANES) {
        const int64_t g = rows - r0 < VS_LANES ? rows - r0 : VS_LANES;
        for (int64_t r = 0; r < g; r++)
            hl_stats(x + (r0 + r) * n, n, &m[r], &s[r], f16);
        const vf sv = v_load_fill(s, g, 1.0f);
        v_store(ls, soft ? v_div(v_set1(1.0f), sv) : vs_log(sv));
        for (int64_t r = 0; r < g; r++)
            hl_write(x + (r0 + r) * n, o + (r0 + r) * n, n, m[r], ls[r],
                     soft, f16);
    }
}

static void HL_CAT(hl_sm_bf16_, HL_SFX)(const uint16_t *x, uint16_t *o,
                                        int64_t rows, int64_t n)
{
    hl_rows(x, o, rows, n, 1, 0);
}
static void HL_CAT(hl_sm_f16_, HL_SFX)(const uint16_t *x, uint16_t *o,
                                       int64_t rows, int64_t n)
{
    hl_rows(x, o, rows, n, 1, 1);
}
static void HL_CAT(hl_lsm_bf16_, HL_SFX)(const uint16_t *x, uint16_t *o,
                                         int64_t rows, int64_t n)
{
    hl_rows(x, o, rows, n, 0, 0);
}
static void HL_CAT(hl_lsm_f16_, HL_SFX)(const uint16_t *x, uint16_t *o,
                                        int64_t rows, int64_t n)
{
    hl_rows(x, o, rows, n, 0, 1);
}

#include "half_lsm_short.h" /* rows of n <= 16 */

tb_cpu_half_lsm_fn HL_CAT(tb_cpu_half_lsm_fused_, HL_SFX)(tb_dtype dt,
                                                          int soft)
{
    if (dt == TB_F16)
        return soft ? HL_CAT(hl_sm_f16_, HL_SFX) : HL_CAT(hl_lsm_f16_, HL_SFX);
    return soft ? HL_CAT(hl_sm_bf16_, HL_SFX) : HL_CAT(hl_lsm_bf16_, HL_SFX);
}

#endif
