/* SIMD rows (AVX2, AVX-512) of add_backward, sub_backward, mul_backward
 * and div_backward, f32 and f64 (issue 34: the C rows ran a memset and
 * a second pass over db for a broadcast b, 1.3-6.3x the memory roof).
 * For inclusion by bwdbin_avx2.c and bwdbin_avx512.c only, each built
 * with its level's flags and -ffp-contract=off (meson.build: no fused
 * multiply-add the code does not write, so that the products and sums
 * are rounded as the C row's); static except the entry points
 * BWB_ENTRIES(SFX, LV) defines.  Their driver is bwd_simd.c's
 * tb_cpu_bw_binary (which case runs which loop, the threads, the
 * fallback to backward.c's loops).
 *
 * Two loops per dtype:
 *  flat: a, b and g of one shape, one pass writing da and db: the C
 *    row's binary_flat operation for operation (bit for bit);
 *  cols: a full operand f [R, C] and a row vector v [C] broadcast over
 *    its R rows: strips of up to four vectors of columns, each strip's
 *    column sums of dv held in registers across the rows while df is
 *    written in the same pass; the sums run in row order from +0, as
 *    the C row's zeroed db (add, sub, mul: bit for bit).  div (b the
 *    row vector): da = g / b as the C row, but db = -(g a) (1 / (b b))
 *    with 1 / (b b) once per column instead of a divide per element
 *    (the divider, 0.375 cycle per f32 and 1.125 per f64 element at
 *    zmm, scripts/divsqrt_tp.c, would bound the C row's two divides per
 *    element at 1.9x (f32) and 5.7x (f64) the memory roof): within 2
 *    ulp of the C row's term (two roundings more), far inside the op's
 *    tolerance; tests/checkasm/simd_rows.c bw_binary_rows states it. */
#ifndef TB_BACKENDS_CPU_BWD_BIN_SIMD_H
#define TB_BACKENDS_CPU_BWD_BIN_SIMD_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../base/error.h"
#include "bwd_simd.h"
#include "isa.h"
#include "kreg.h"

/* ---- the vectors of each dtype at this level ---------------------- */

#if defined(__AVX512F__)
#define BB_L32 16
#define BB_L64 8
/* the level's intrinsic op of each dtype */
#define BB_I32(op) _mm512_##op##_ps
#define BB_I64(op) _mm512_##op##_pd
typedef __m512 bb_v32;
typedef __m512d bb_v64;
static inline __mmask16 bb_m32(int64_t n)
{
    return (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1);
}
static inline __mmask8 bb_m64(int64_t n)
{
    return (__mmask8)(n >= 8 ? 0xff : (1u << n) - 1);
}
#define bb_ldn32(p, n) _mm512_maskz_loadu_ps(bb_m32(n), p)
#define bb_stn32(p, v, n) _mm512_mask_storeu_ps(p, bb_m32(n), v)
#define bb_ldn64(p, n) _mm512_maskz_loadu_pd(bb_m64(n), p)
#define bb_stn64(p, v, n) _mm512_mask_storeu_pd(p, bb_m64(n), v)
#else
#define BB_L32 8
#define BB_L64 4
#define BB_I32(op) _mm256_##op##_ps
#define BB_I64(op) _mm256_##op##_pd
typedef __m256 bb_v32;
typedef __m256d bb_v64;
/* lanes below n set (n in [0, lanes]) */
static inline __m256i bb_m32(int64_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline __m256i bb_m64(int64_t n)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n),
                              _mm256_setr_epi64x(0, 1, 2, 3));
}
#define bb_ldn32(p, n) _mm256_maskload_ps(p, bb_m32(n))
#define bb_stn32(p, v, n) _mm256_maskstore_ps(p, bb_m32(n), v)
#define bb_ldn64(p, n) _mm256_maskload_pd(p, bb_m64(n))
#define bb_stn64(p, v, n) _mm256_maskstore_pd(p, bb_m64(n), v)
#endif

/* ---- f64 division by a row vector without the divider ------------- */

/* div's da = g / b with b the row vector, f64 at AVX-512 on Intel: g y
 * with y = RN(1/b) once per column and two Markstein steps q + (g - b q)
 * y (the correctly rounded quotient, f64_simd_impl.h's dx_divk, mode 2,
 * which tests/test_divsqrt.c checks), so the divider's bits.  Taken when
 * every lane of the strip's b has |b| in [2^-50, 2^50] (bb_mkok64) and
 * of g's vector |g| in [2^-900, 2^970] or g = +-0 (its quotient g y,
 * +-0 of the right sign), else the vector is divided.  On this Xeon
 * (Emerald Rapids) a vdivpd zmm takes 15.85 cycles for 8 lanes
 * (scripts/divsqrt_tp.c, 05:15 UTC 2026-12-01), 1.98 cycles an element,
 * which held the row at ~2.4x its memory roof; the steps are 5 FMA-unit
 * operations and a few integer ones a vector: div_backward f64 [128,
 * 256], [256] 22.45 -> 13.35 us (-41%, CI [-44, -31]), [8, 256] 1.76 ->
 * 1.29 us (tbench ab, 12 blocks, load ~8).  Not on AMD: Zen 4's
 * divider (9 cycles a vector) runs beside the multiply pipes, which the
 * steps would fill (not measured there, so that row keeps the
 * divider). */
#if defined(__AVX512F__)
static inline bool bb_mkok64(__m512d b)
{
    const __m512i ab = _mm512_and_si512(_mm512_castpd_si512(b),
                                        _mm512_set1_epi64(INT64_MAX));
    return _mm512_cmple_epu64_mask(
               _mm512_sub_epi64(ab, _mm512_set1_epi64(INT64_C(973) << 52)),
               _mm512_set1_epi64((INT64_C(1073) - 973) << 52)) == 0xff;
}
static inline __m512d bb_divmk64(__m512d g, __m512d b, __m512d y)
{
    const __m512i ab = _mm512_and_si512(_mm512_castpd_si512(g),
                                        _mm512_set1_epi64(INT64_MAX));
    const __mmask8 z = _mm512_testn_epi64_mask(ab, ab);
    const __mmask8 ok =
        _mm512_cmple_epu64_mask(
            _mm512_sub_epi64(ab, _mm512_set1_epi64(INT64_C(123) << 52)),
            _mm512_set1_epi64((INT64_C(1993) - 123) << 52)) |
        z;
    if (ok != 0xff)
        return _mm512_div_pd(g, b);
    const __m512d q0 = _mm512_mul_pd(g, y);
    __m512d q = _mm512_fmadd_pd(_mm512_fnmadd_pd(b, q0, g), y, q0);
    q = _mm512_fmadd_pd(_mm512_fnmadd_pd(b, q, g), y, q);
    return _mm512_mask_blend_pd(z, q, q0);
}
#define BB_MK64 1
#else
static inline bool bb_mkok64(bb_v64 b)
{
    (void)b;
    return false;
}
static inline bb_v64 bb_divmk64(bb_v64 g, bb_v64 b, bb_v64 y)
{
    (void)y;
    return BB_I64(div)(g, b);
}
#define BB_MK64 0
#endif
/* (f32: the divider, always) */
static inline bool bb_mkok32(bb_v32 b)
{
    (void)b;
    return false;
}
static inline bb_v32 bb_divmk32(bb_v32 g, bb_v32 b, bb_v32 y)
{
    (void)y;
    return BB_I32(div)(g, b);
}
#define BB_MK32 0

/* ---- the loops, once per dtype ------------------------------------ */

/* One element step of the cols loop in mode M (bwd_simd.h's
 * TB_CPU_BWB_*): df's value of g (and the row vector's value v) into
 * *df, the column sum acc updated with g, the full operand's f and rq
 * (div: 1 / (v v)). */
#define BB_STEP(M, S, gv, fv, vv, rq, acc, df, mk, y)                      \
    do {                                                                   \
        switch (M) {                                                       \
        case TB_CPU_BWB_ADD:                                               \
            df = gv, acc = BB_I##S(add)(acc, gv);                          \
            break;                                                         \
        case TB_CPU_BWB_SUB_A:                                             \
            df = gv, acc = BB_I##S(sub)(acc, gv);                          \
            break;                                                         \
        case TB_CPU_BWB_SUB_B:                                             \
            df = BB_I##S(xor)(gv, BB_I##S(set1)(-0.0));                    \
            acc = BB_I##S(add)(acc, gv);                                   \
            break;                                                         \
        case TB_CPU_BWB_MUL:                                               \
            df = BB_I##S(mul)(gv, vv);                                     \
            acc = BB_I##S(add)(acc, BB_I##S(mul)(gv, fv));                 \
            break;                                                         \
        default: /* div */                                                 \
            df = (mk) ? bb_divmk##S(gv, vv, y) : BB_I##S(div)(gv, vv);     \
            acc = BB_I##S(sub)(acc, BB_I##S(mul)(BB_I##S(mul)(gv, fv), rq)); \
            break;                                                         \
        }                                                                  \
    } while (0)

#define BB_LOOPS(S, T, V, L)                                               \
    /* flat: the C row's binary_flat (add, sub, mul, div only) */          \
    static inline __attribute__((always_inline)) void bb_flat_m##S(        \
        const int m, const T *g, const T *a, const T *b, T *da, T *db,     \
        int64_t n)                                                         \
    {                                                                      \
        int64_t i = 0;                                                     \
        for (; i < n; i += (L)) {                                          \
            const int64_t r = n - i;                                       \
            const bool full = r >= (L);                                    \
            V gv = full ? BB_I##S(loadu)(g + i) : bb_ldn##S(g + i, r), x, y; \
            if (m == TB_CPU_BWB_ADD) {                                     \
                x = gv, y = gv;                                            \
            } else if (m == TB_CPU_BWB_SUB_A) {                            \
                x = gv, y = BB_I##S(xor)(gv, BB_I##S(set1)(-0.0));         \
            } else {                                                       \
                V av = full ? BB_I##S(loadu)(a + i) : bb_ldn##S(a + i, r); \
                V bv = full ? BB_I##S(loadu)(b + i) : bb_ldn##S(b + i, r); \
                if (m == TB_CPU_BWB_MUL) {                                 \
                    x = BB_I##S(mul)(gv, bv), y = BB_I##S(mul)(gv, av);    \
                } else {                                                   \
                    x = BB_I##S(div)(gv, bv);                              \
                    y = BB_I##S(xor)(BB_I##S(set1)(-0.0),                  \
                                    BB_I##S(div)(BB_I##S(mul)(gv, av),     \
                                            BB_I##S(mul)(bv, bv)));        \
                }                                                          \
            }                                                              \
            if (full) {                                                    \
                BB_I##S(storeu)(da + i, x), BB_I##S(storeu)(db + i, y);    \
            } else {                                                       \
                bb_stn##S(da + i, x, r), bb_stn##S(db + i, y, r);          \
            }                                                              \
        }                                                                  \
    }                                                                      \
    static void bb_flat##S(int m, const void *g, const void *a,            \
                           const void *b, void *da, void *db, int64_t n)   \
    {                                                                      \
        switch (m) {                                                       \
        case TB_CPU_BWB_ADD:                                               \
            bb_flat_m##S(TB_CPU_BWB_ADD, g, a, b, da, db, n);              \
            break;                                                         \
        case TB_CPU_BWB_SUB_A:                                             \
            bb_flat_m##S(TB_CPU_BWB_SUB_A, g, a, b, da, db, n);            \
            break;                                                         \
        case TB_CPU_BWB_MUL:                                               \
            bb_flat_m##S(TB_CPU_BWB_MUL, g, a, b, da, db, n);              \
            break;                                                         \
        default:                                                           \
            bb_flat_m##S(TB_CPU_BWB_DIV, g, a, b, da, db, n);              \
            break;                                                         \
        }                                                                  \
    }                                                                      \
    /* cols: columns [c0, c1) of f, g, df [R, C] and of v, dv [C]; full    \
     * strips of 4 vectors, then single (last: masked) vectors */          \
    static inline __attribute__((always_inline)) void bb_cols_m##S(        \
        const int m, const T *g, const T *f, const T *v, T *df, T *dv,     \
        int64_t R, int64_t C, int64_t c0, int64_t c1)                      \
    {                                                                      \
        const bool rd = m == TB_CPU_BWB_MUL || m == TB_CPU_BWB_DIV;        \
        /* div: by Markstein's steps where bb_divmk##S serves */           \
        const bool mka = BB_MK##S && m == TB_CPU_BWB_DIV &&               \
                         !tb_cpu_isa_amd();                                \
        int64_t c = c0;                                                    \
        for (; c + 4 * (L) <= c1; c += 4 * (L)) {                          \
            V acc[4], vv[4], rq[4], y[4];                                  \
            bool mk = mka;                                                 \
            for (int t = 0; t < 4; t++) {                                  \
                acc[t] = BB_I##S(setzero)();                               \
                vv[t] = rd ? BB_I##S(loadu)(v + c + t * (L))               \
                           : BB_I##S(setzero)();                           \
                rq[t] = m == TB_CPU_BWB_DIV                                \
                            ? BB_I##S(div)(BB_I##S(set1)(1),               \
                                        BB_I##S(mul)(vv[t], vv[t]))        \
                            : BB_I##S(setzero)();                          \
                y[t] = mka ? BB_I##S(div)(BB_I##S(set1)(1), vv[t])         \
                           : BB_I##S(setzero)();                           \
                mk = mk && bb_mkok##S(vv[t]);                              \
            }                                                              \
            for (int64_t r = 0; r < R; r++) {                              \
                const int64_t o = r * C + c;                               \
                for (int t = 0; t < 4; t++) {                              \
                    V gv = BB_I##S(loadu)(g + o + t * (L)), d;             \
                    V fv = rd ? BB_I##S(loadu)(f + o + t * (L)) : gv;      \
                    BB_STEP(m, S, gv, fv, vv[t], rq[t], acc[t], d, mk,     \
                            y[t]);                                         \
                    BB_I##S(storeu)(df + o + t * (L), d);                  \
                }                                                          \
            }                                                              \
            for (int t = 0; t < 4; t++)                                    \
                BB_I##S(storeu)(dv + c + t * (L), acc[t]);                 \
        }                                                                  \
        for (; c < c1; c += (L)) {                                         \
            const int64_t w = c1 - c < (L) ? c1 - c : (L);                 \
            V acc = BB_I##S(setzero)();                                    \
            V vv = rd ? bb_ldn##S(v + c, w) : BB_I##S(setzero)();          \
            V rq = m == TB_CPU_BWB_DIV                                     \
                       ? BB_I##S(div)(BB_I##S(set1)(1), BB_I##S(mul)(vv, vv)) \
                       : BB_I##S(setzero)();                               \
            for (int64_t r = 0; r < R; r++) {                              \
                const int64_t o = r * C + c;                               \
                V gv = bb_ldn##S(g + o, w), d;                             \
                V fv = rd ? bb_ldn##S(f + o, w) : gv;                      \
                BB_STEP(m, S, gv, fv, vv, rq, acc, d, false, vv);          \
                bb_stn##S(df + o, d, w);                                   \
            }                                                              \
            bb_stn##S(dv + c, acc, w);                                     \
        }                                                                  \
    }                                                                      \
    static void bb_cols##S(int m, const void *g, const void *f,            \
                           const void *v, void *df, void *dv, int64_t R,   \
                           int64_t C, int64_t c0, int64_t c1)              \
    {                                                                      \
        switch (m) {                                                       \
        case TB_CPU_BWB_ADD:                                               \
            bb_cols_m##S(TB_CPU_BWB_ADD, g, f, v, df, dv, R, C, c0, c1);   \
            break;                                                         \
        case TB_CPU_BWB_SUB_A:                                             \
            bb_cols_m##S(TB_CPU_BWB_SUB_A, g, f, v, df, dv, R, C, c0, c1); \
            break;                                                         \
        case TB_CPU_BWB_SUB_B:                                             \
            bb_cols_m##S(TB_CPU_BWB_SUB_B, g, f, v, df, dv, R, C, c0, c1); \
            break;                                                         \
        case TB_CPU_BWB_MUL:                                               \
            bb_cols_m##S(TB_CPU_BWB_MUL, g, f, v, df, dv, R, C, c0, c1);   \
            break;                                                         \
        default:                                                           \
            bb_cols_m##S(TB_CPU_BWB_DIV, g, f, v, df, dv, R, C, c0, c1);   \
            break;                                                         \
        }                                                                  \
    }

BB_LOOPS(32, float, bb_v32, BB_L32)
BB_LOOPS(64, double, bb_v64, BB_L64)

static const tb_cpu_bw_bin_loops bb_loops32 = {bb_flat32, bb_cols32, BB_L32};
static const tb_cpu_bw_bin_loops bb_loops64 = {bb_flat64, bb_cols64, BB_L64};

#define BWB_ENTRY(OP, SFX, LV)                                             \
    int TB_CPU_KFN(OP##_backward, f32, SFX)(void *ctx, const tb_tensor *in, \
                                            tb_tensor *out,                \
                                            const tb_params *p)            \
    {                                                                      \
        return tb_cpu_bw_binary(ctx, LV, TB_OP_##OP##_backward, TB_F32, in, \
                                out, p, &bb_loops32);                      \
    }                                                                      \
    int TB_CPU_KFN(OP##_backward, f64, SFX)(void *ctx, const tb_tensor *in, \
                                            tb_tensor *out,                \
                                            const tb_params *p)            \
    {                                                                      \
        return tb_cpu_bw_binary(ctx, LV, TB_OP_##OP##_backward, TB_F64, in, \
                                out, p, &bb_loops64);                      \
    }

#define BWB_ENTRIES(SFX, LV)                                               \
    BWB_ENTRY(add, SFX, LV)                                                \
    BWB_ENTRY(sub, SFX, LV)                                                \
    BWB_ENTRY(mul, SFX, LV)                                                \
    BWB_ENTRY(div, SFX, LV)

#endif /* TB_BACKENDS_CPU_BWD_BIN_SIMD_H */
