/* sub_backward, mul_backward and div_backward in bf16/f16 with one
 * operand f of g's shape [R, C] and the other a row v [C] broadcast over
 * the rows (half_bwd.c's hb_bin: issue 34's [128, 256] and [256]), one
 * loop of one SIMD level for inclusion by half_avx2.c, half_avx512.c
 * and half_avx512bf16.c after half_simd.h (static but for the entry
 * point each of them defines).  add_backward too, with one operand full
 * and the other a row (HB_ADD).
 *
 * Strips of four vectors of columns: the row v widened once, each
 * strip's column sums of dv held in f32 registers down all the rows
 * while df is computed, narrowed in registers and stored in the same
 * pass; dv narrowed once at the end.  mul and div take a strip as two
 * vector pairs in the order of the dtype's h_*_ld2x / h_*_st2x (bf16: one
 * unpack a vector to widen, one vcvtne2ps2bf16 a pair to narrow (at
 * avx512bf16 a shift or an and a vector and a vpermw a pair), where
 * single vectors took a vpermw and a vcvtneps2bf16 each: bf16 mul at
 * [128, 256] 3.35 to 2.46 us, div 4.25 to 3.78, tbench ab, 8 blocks,
 * load 7; each lane's operations are a column's, so the bits are the
 * same).  add's and sub's df is g or -g,
 * exact in the dtype: g's patterns (the sign flipped for -g), a NaN
 * quieted as narrowing quiets it (hbb_q_*), no conversion.  (The loop
 * before wrote df's f32 terms and the sums to stack buffers a row at a
 * time and narrowed df in a second pass: 4.5-8.7 us at [128, 256]
 * against the f32 row's 2.4-3.6, the one-run table of
 * docs/perf-data/op-limits-zen4.)
 * The operations on each element are backward_impl.inc's brow's (the
 * f32 C row), in its order (mul, div, sub, add, no contraction), but
 * for div with b the row (HB_DIV_AF): db's term is (g a) * (1 / (b b))
 * with 1 / (b b) once per column, the f32 SIMD row's form
 * (bwd_bin_simd.h), one divide an element instead of two: within 2 f32
 * roundings of the C row's term before the sum and the 16-bit rounding
 * (test_half_paths states the tolerance).  Columns past the last whole
 * vector: one by one in C, the C row's statements. */
#ifndef TB_BACKENDS_CPU_HALF_BWBIN_SIMD_H
#define TB_BACKENDS_CPU_HALF_BWBIN_SIMD_H

#include "half_bwd.h"

/* the 16-bit vector (VS_LANES values) of a level */
#if VS_LANES == 16
#define HBB_H(op) _mm256_##op
#else
#define HBB_H(op) _mm_##op
#endif
/* g's patterns as narrowing their widened values gives them: a NaN
 * quieted (bf16: the quiet bit set, the payload kept; f16: sign |
 * 0x7e00, ops/half.h's tb_f32_to_f16), others unchanged: add's and
 * sub's df is g or -g, exact in the dtype, so no conversion */
static inline hv1 hbb_q_bf16(hv1 g)
{
    const hv1 nan =
        HBB_H(cmpgt_epi16)(HS_HSI(and)(g, HBB_H(set1_epi16)(0x7fff)),
                           HBB_H(set1_epi16)(0x7f80));
    return HS_HSI(or)(g, HS_HSI(and)(nan, HBB_H(set1_epi16)(0x0040)));
}
static inline hv1 hbb_q_f16(hv1 g)
{
    const hv1 sign = HBB_H(set1_epi16)((short)0x8000);
    const hv1 nan =
        HBB_H(cmpgt_epi16)(HS_HSI(and)(g, HBB_H(set1_epi16)(0x7fff)),
                           HBB_H(set1_epi16)(0x7c00));
    const hv1 q = HS_HSI(or)(HS_HSI(and)(g, sign), HBB_H(set1_epi16)(0x7e00));
    return HS_HSI(or)(HS_HSI(andnot)(nan, g), HS_HSI(and)(nan, q));
}
/* one element vector step of kind K (not add or sub): d the df term, s
 * the sum updated */
#define HBB_STEP(K, gv, fv, rv, rq, s, d)                                 \
    do {                                                                  \
        switch (K) {                                                      \
        case HB_MUL:                                                      \
            d = v_mul(gv, rv);                                            \
            s = v_add(s, v_mul(gv, fv));                                  \
            break;                                                        \
        case HB_DIV_AF: /* rv: b, rq: 1 / (b b) */                        \
            d = v_div(gv, rv);                                            \
            s = v_sub(s, v_mul(v_mul(gv, fv), rq));                       \
            break;                                                        \
        default: /* HB_DIV_BF: rv: a, fv: b */                            \
            d = v_xor(v_div(v_mul(gv, rv), v_mul(fv, fv)), v_set1(-0.0f)); \
            s = v_add(s, v_div(gv, fv));                                  \
            break;                                                        \
        }                                                                 \
    } while (0)

#define HBB_LOOP(DT)                                                      \
    /* one vector of columns of one row: df's values stored, *s updated */ \
    static inline __attribute__((always_inline)) void hbb_##DT##_step(    \
        const int K, const uint16_t *g, const uint16_t *f, uint16_t *df,  \
        vf rv, vf rq, vf *s)                                              \
    {                                                                     \
        const vf gv = h_##DT##_ld1(g);                                    \
        if (K == HB_ADD || K == HB_SUB_AF || K == HB_SUB_BF) {            \
            const hv1 q = hbb_q_##DT(h_load1(g));                         \
            h_store1(df, K == HB_SUB_BF                                   \
                             ? HS_HSI(xor)(q, HBB_H(set1_epi16)(          \
                                                  (short)0x8000))         \
                             : q);                                        \
            *s = K == HB_SUB_AF ? v_sub(*s, gv) : v_add(*s, gv);          \
            return;                                                       \
        }                                                                 \
        const vf fv = h_##DT##_ld1(f);                                    \
        vf d;                                                             \
        HBB_STEP(K, gv, fv, rv, rq, *s, d);                               \
        h_store1(df, h_##DT##_narrow1(d));                                \
    }                                                                     \
    /* two vectors of columns (mul and div): g, f and df in             \
     * h_##DT##_ld2x's lane order, rv, rq and s too */                    \
    static inline __attribute__((always_inline)) void hbb_##DT##_step2(   \
        const int K, const uint16_t *g, const uint16_t *f, uint16_t *df,  \
        const vf *rv, const vf *rq, vf *s)                                \
    {                                                                     \
        vf g0, g1, f0, f1, d0, d1;                                        \
        h_##DT##_ld2x(g, &g0, &g1);                                       \
        h_##DT##_ld2x(f, &f0, &f1);                                       \
        HBB_STEP(K, g0, f0, rv[0], rq[0], s[0], d0);                      \
        HBB_STEP(K, g1, f1, rv[1], rq[1], s[1], d1);                      \
        /* mul: st2x's order with the zero-word subnormal test (bf16 at \
         * [128, 256] 2.39 -> 2.33 us, tbench ab, 10 blocks, load 6;    \
         * div's +1.9% with it: vfpclassps) */                           \
        if (K == HB_MUL)                                                  \
            h_##DT##_st2z(df, d0, d1);                                    \
        else                                                              \
            h_##DT##_st2x(df, d0, d1);                                    \
    }                                                                     \
    static inline __attribute__((always_inline)) void hbb_##DT##_k(       \
        const int K, const uint16_t *g, const uint16_t *f,                \
        const uint16_t *v, uint16_t *df, uint16_t *dv, int64_t R,         \
        int64_t C, int64_t c0, int64_t c1)                                \
    {                                                                     \
        enum { L = VS_LANES };                                            \
        const int vals = K == HB_MUL || K == HB_DIV_AF || K == HB_DIV_BF;                  \
        int64_t c = c0;                                                   \
        for (; c + 4 * L <= c1; c += 4 * L) {                             \
            vf s[4], rv[4], rq[4];                                        \
            for (int t = 0; t < 4; t++)                                   \
                s[t] = rv[t] = v_set1(0.0f);                              \
            if (vals) { /* in ld2x's order, as g and f */                 \
                h_##DT##_ld2x(v + c, &rv[0], &rv[1]);                     \
                h_##DT##_ld2x(v + c + 2 * L, &rv[2], &rv[3]);             \
            }                                                             \
            for (int t = 0; t < 4; t++)                                   \
                rq[t] = K == HB_DIV_AF                                    \
                            ? v_div(v_set1(1.0f), v_mul(rv[t], rv[t]))    \
                            : s[t];                                       \
            for (int64_t r = 0; r < R; r++) {                             \
                const int64_t o = r * C + c;                              \
                if (vals) {                                               \
                    for (int t = 0; t < 4; t += 2)                        \
                        hbb_##DT##_step2(K, g + o + t * L, f + o + t * L, \
                                         df + o + t * L, rv + t, rq + t,  \
                                         s + t);                          \
                    continue;                                             \
                }                                                         \
                for (int t = 0; t < 4; t++)                               \
                    hbb_##DT##_step(K, g + o + t * L, f + o + t * L,      \
                                    df + o + t * L, rv[t], rq[t], &s[t]); \
            }                                                             \
            if (vals) {                                                   \
                h_##DT##_st2x(dv + c, s[0], s[1]);                        \
                h_##DT##_st2x(dv + c + 2 * L, s[2], s[3]);                \
            } else {                                                      \
                for (int t = 0; t < 4; t++)                               \
                    h_store1(dv + c + t * L, h_##DT##_narrow1(s[t]));     \
            }                                                             \
        }                                                                 \
        for (; c + L <= c1; c += L) {                                     \
            vf s = v_set1(0.0f);                                          \
            const vf rv = vals ? h_##DT##_ld1(v + c) : s;                   \
            const vf rq = K == HB_DIV_AF                                  \
                              ? v_div(v_set1(1.0f), v_mul(rv, rv))        \
                              : s;                                        \
            for (int64_t r = 0; r < R; r++) {                             \
                const int64_t o = r * C + c;                              \
                hbb_##DT##_step(K, g + o, f + o, df + o, rv, rq, &s);     \
            }                                                             \
            h_store1(dv + c, h_##DT##_narrow1(s));                        \
        }                                                                 \
        for (; c < c1; c++) { /* the C row's statements */                \
            const float rs = tb_##DT##_to_f32(v[c]);                      \
            float s = 0.0f;                                               \
            for (int64_t r = 0; r < R; r++) {                             \
                const int64_t o = r * C + c;                              \
                const float gv = tb_##DT##_to_f32(g[o]);                  \
                const float fv = tb_##DT##_to_f32(f[o]);                  \
                df[o] = tb_f32_to_##DT(hb_term(K, gv, fv, rs, &s));       \
            }                                                             \
            dv[c] = tb_f32_to_##DT(s);                                    \
        }                                                                 \
    }                                                                     \
    static void hbb_##DT(int kind, const uint16_t *g, const uint16_t *f,  \
                         const uint16_t *v, uint16_t *df, uint16_t *dv,   \
                         int64_t R, int64_t C, int64_t c0, int64_t c1)    \
    {                                                                     \
        switch (kind) {                                                   \
        case HB_SUB_AF:                                                   \
            hbb_##DT##_k(HB_SUB_AF, g, f, v, df, dv, R, C, c0, c1);       \
            break;                                                        \
        case HB_SUB_BF:                                                   \
            hbb_##DT##_k(HB_SUB_BF, g, f, v, df, dv, R, C, c0, c1);       \
            break;                                                        \
        case HB_MUL:                                                      \
            hbb_##DT##_k(HB_MUL, g, f, v, df, dv, R, C, c0, c1);          \
            break;                                                        \
        case HB_DIV_AF:                                                   \
            hbb_##DT##_k(HB_DIV_AF, g, f, v, df, dv, R, C, c0, c1);       \
            break;                                                        \
        case HB_ADD:                                                      \
            hbb_##DT##_k(HB_ADD, g, f, v, df, dv, R, C, c0, c1);          \
            break;                                                        \
        default:                                                          \
            hbb_##DT##_k(HB_DIV_BF, g, f, v, df, dv, R, C, c0, c1);       \
            break;                                                        \
        }                                                                 \
    }
HBB_LOOP(bf16)
HBB_LOOP(f16)

static inline tb_cpu_half_bincols_fn hbb_get(tb_dtype dt)
{
    return dt == TB_BF16 ? hbb_bf16 : dt == TB_F16 ? hbb_f16 : NULL;
}

#endif
