/* half_part.h's short-row loops at one SIMD level (included by
 * half_part_avx2.c and half_part_avx512.c, after vmath_simd.h's level
 * is fixed by their flags).  A block of VS_LANES rows of n <= VS_LANES
 * values: each row loaded as one vector of VS_LANES 16-bit values (the
 * lanes past n belong to the next rows and are never used), widened in
 * registers, the block transposed (lane r = row r, vector c = column
 * c), and the columns 0..n-1 folded in order in full vectors: no
 * horizontal step, no per-row call.  A block whose loads would read
 * past the tensor's end is copied into a zeroed local block first.
 * sum: each lane widened to double and added in column order from +0,
 * as ks_sum_f32_short's (kernels_simd.h) on the widened tensor: the
 * f32 row's bits; max/min: the portable rule per lane by compares and
 * a masked move (a NaN replaces m, as v != v does).  A call a row
 * (half.c's hred_value) took 28 ns a row of 10 (1024x10 bf16 sum over
 * axis -1, log_softmax_unfused's fourth step).  The binary ops with b
 * one value a row: hpb_rows below. */
#ifndef TB_BACKENDS_CPU_HALF_PART_SHORT_H
#define TB_BACKENDS_CPU_HALF_PART_SHORT_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "half_simd.h" /* h_*_narrow1 */
#pragma GCC diagnostic pop
#include "half_part.h"
#include "lsm_simd.h" /* ks_row_index */
#include "vmath_simd.h"
#include "vtranspose_simd.h"

#define HPS_CAT_(a, b) a##b
#define HPS_CAT(a, b) HPS_CAT_(a, b)

#if VS_LANES == 16
typedef __m512d hps_vd;
/* VS_LANES values at p widened (bf: bf16, else f16) */
static inline vf hps_ld(const uint16_t *p, int bf)
{
    const __m256i u = _mm256_loadu_si256((const __m256i *)(const void *)p);
    return bf ? _mm512_castsi512_ps(
                    _mm512_slli_epi32(_mm512_cvtepu16_epi32(u), 16))
              : _mm512_cvtph_ps(u);
}
static inline hps_vd hps_lo(vf a)
{
    return _mm512_cvtps_pd(_mm512_castps512_ps256(a));
}
static inline hps_vd hps_hi(vf a)
{
    return _mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1));
}
static inline hps_vd hps_dzero(void) { return _mm512_setzero_pd(); }
/* table's lanes picked by the VS_LANES indices at idx */
static inline vf hps_perm(const int32_t *idx, vf table)
{
    return _mm512_permutexvar_ps(_mm512_loadu_si512((const void *)idx),
                                 table);
}
static inline hps_vd hps_dadd(hps_vd a, hps_vd b)
{
    return _mm512_add_pd(a, b);
}
static inline hps_vd hps_ddiv(hps_vd a, double d)
{
    return _mm512_div_pd(a, _mm512_set1_pd(d));
}
static inline vf hps_join(hps_vd lo, hps_vd hi)
{
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)),
                              _mm512_cvtpd_ps(hi), 1);
}
/* the portable rule's step: v where v > m (mx) or v < m, or v is NaN */
static inline vf hps_ext(vf m, vf v, int mx)
{
    /* (immediates: constants at -O0 too) */
    const __mmask16 k = (mx ? _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ)
                            : _mm512_cmp_ps_mask(v, m, _CMP_LT_OQ)) |
                        _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_mov_ps(m, k, v);
}
#else
typedef __m256d hps_vd;
static inline vf hps_ld(const uint16_t *p, int bf)
{
    const __m128i u = _mm_loadu_si128((const __m128i *)(const void *)p);
    return bf ? _mm256_castsi256_ps(
                    _mm256_slli_epi32(_mm256_cvtepu16_epi32(u), 16))
              : _mm256_cvtph_ps(u);
}
static inline hps_vd hps_lo(vf a)
{
    return _mm256_cvtps_pd(_mm256_castps256_ps128(a));
}
static inline hps_vd hps_hi(vf a)
{
    return _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
}
static inline hps_vd hps_dzero(void) { return _mm256_setzero_pd(); }
static inline vf hps_perm(const int32_t *idx, vf table)
{
    return _mm256_permutevar8x32_ps(
        table, _mm256_loadu_si256((const __m256i *)(const void *)idx));
}
static inline hps_vd hps_dadd(hps_vd a, hps_vd b)
{
    return _mm256_add_pd(a, b);
}
static inline hps_vd hps_ddiv(hps_vd a, double d)
{
    return _mm256_div_pd(a, _mm256_set1_pd(d));
}
static inline vf hps_join(hps_vd lo, hps_vd hi)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)),
                                _mm256_cvtpd_ps(hi), 1);
}
static inline vf hps_ext(vf m, vf v, int mx)
{
    const __m256 k =
        _mm256_or_ps(mx ? _mm256_cmp_ps(v, m, _CMP_GT_OQ)
                        : _mm256_cmp_ps(v, m, _CMP_LT_OQ),
                     _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_ps(m, v, k);
}
#endif

/* out[0..VS_LANES) for the VS_LANES rows of n at x (each row readable
 * for VS_LANES values) */
static inline __attribute__((always_inline)) void
hps_block(const uint16_t *x, float *out, int64_t n, int kind, int bf)
{
    vf col[VS_LANES];
    for (int r = 0; r < VS_LANES; r++)
        col[r] = hps_ld(x + r * n, bf);
    v_transpose(col);
    if (kind == TB_CPU_HSR_SUM || kind == TB_CPU_HSR_MEAN) {
        hps_vd lo = hps_dzero(), hi = lo;
        for (int64_t c = 0; c < n; c++) {
            lo = hps_dadd(lo, hps_lo(col[c]));
            hi = hps_dadd(hi, hps_hi(col[c]));
        }
        if (kind == TB_CPU_HSR_MEAN) {
            lo = hps_ddiv(lo, (double)n);
            hi = hps_ddiv(hi, (double)n);
        }
        v_store(out, hps_join(lo, hi));
        return;
    }
    const int mx = kind == TB_CPU_HSR_MAX;
    vf m = col[0];
    for (int64_t c = 1; c < n; c++)
        m = hps_ext(m, col[c], mx);
    v_store(out, m);
}

static inline __attribute__((always_inline)) void
hps_rows(const uint16_t *x, float *out, int64_t rows, int64_t n, int kind,
         int bf)
{
    const int64_t L = VS_LANES;
    int64_t r0 = 0;
    /* whole blocks whose last row's load ends inside the tensor */
    for (; r0 + L <= rows && (r0 + L - 1) * n + L <= rows * n; r0 += L)
        hps_block(x + r0 * n, out + r0, n, kind, bf);
    while (r0 < rows) {
        const int64_t k = rows - r0 < L ? rows - r0 : L;
        uint16_t t[VS_LANES * VS_LANES + VS_LANES];
        float o[VS_LANES];
        memset(t, 0, sizeof t);
        memcpy(t, x + r0 * n, (size_t)(k * n) * sizeof *t);
        hps_block(t, o, n, kind, bf);
        memcpy(out + r0, o, (size_t)k * sizeof *o);
        r0 += k;
    }
}

/* one function a dtype, kind a run-time switch into constant copies */
#define HPS_DEF(DT, BF)                                                   \
    static void HPS_CAT(hps_##DT##_, HP_SFX)(const uint16_t *x,           \
                                             float *out, int64_t rows,    \
                                             int64_t n, int kind)         \
    {                                                                     \
        switch (kind) {                                                   \
        case TB_CPU_HSR_SUM:                                              \
            hps_rows(x, out, rows, n, TB_CPU_HSR_SUM, BF);                \
            break;                                                        \
        case TB_CPU_HSR_MEAN:                                             \
            hps_rows(x, out, rows, n, TB_CPU_HSR_MEAN, BF);               \
            break;                                                        \
        case TB_CPU_HSR_MAX:                                              \
            hps_rows(x, out, rows, n, TB_CPU_HSR_MAX, BF);                \
            break;                                                        \
        default:                                                          \
            hps_rows(x, out, rows, n, TB_CPU_HSR_MIN, BF);                \
            break;                                                        \
        }                                                                 \
    }
HPS_DEF(bf16, 1)
HPS_DEF(f16, 0)
#undef HPS_DEF

/* ---- a 16-bit binary op with b one value a row (half_part.h) ---- */

static inline vf hpb_op(vf a, vf b, int op)
{
    switch (op) {
    case TB_OP_add:
        return v_add(a, b);
    case TB_OP_sub:
        return v_sub(a, b);
    case TB_OP_mul:
        return v_mul(a, b);
    default:
        return v_div(a, b);
    }
}
static inline float hpb_op1(float a, float b, int op)
{
    switch (op) {
    case TB_OP_add:
        return a + b;
    case TB_OP_sub:
        return a - b;
    case TB_OP_mul:
        return a * b;
    default:
        return a / b;
    }
}
static inline hv1 hpb_nar(vf v, int bf)
{
    return bf ? h_bf16_narrow1(v) : h_f16_narrow1(v);
}
static inline float hpb_wid1(uint16_t h, int bf)
{
    return bf ? tb_bf16_to_f32(h) : tb_f16_to_f32(h);
}

/* Blocks of VS_LANES rows of n <= HPB_N are n whole vectors: b's
 * VS_LANES values widened once, each vector's lanes given their row's
 * value by a permute (ks_row_index's table), the f32 operation, the
 * result narrowed; the rows past the last block one value at a time in
 * C (the same IEEE operation on the same f32 values, the same
 * narrowing's bits: ops/half.h). */
static inline __attribute__((always_inline)) void
hpb_rows(const uint16_t *a, const uint16_t *b, uint16_t *o, int64_t rows,
         int64_t n, int op, int bf)
{
    const int64_t L = VS_LANES;
    int32_t fidx[HPB_N][VS_LANES];
    ks_row_index(fidx, n);
    int64_t r0 = 0;
    for (; r0 + L <= rows; r0 += L) {
        const vf bv = hps_ld(b + r0, bf);
        const uint16_t *ab = a + r0 * n;
        uint16_t *ob = o + r0 * n;
        for (int64_t v = 0; v < n; v++) {
            const vf bb = hps_perm(fidx[v], bv);
            h_store1(ob + v * L,
                     hpb_nar(hpb_op(hps_ld(ab + v * L, bf), bb, op), bf));
        }
    }
    for (; r0 < rows; r0++) {
        const float bs = hpb_wid1(b[r0], bf);
        for (int64_t c = 0; c < n; c++) {
            const float f = hpb_op1(hpb_wid1(a[r0 * n + c], bf), bs, op);
            o[r0 * n + c] = bf ? tb_f32_to_bf16(f) : tb_f32_to_f16(f);
        }
    }
}

#define HPB_DEF(DT, BF)                                                   \
    static void HPS_CAT(hpb_##DT##_, HP_SFX)(                             \
        const uint16_t *a, const uint16_t *b, uint16_t *o, int64_t rows,  \
        int64_t n, int op)                                                \
    {                                                                     \
        switch (op) {                                                     \
        case TB_OP_add:                                                   \
            hpb_rows(a, b, o, rows, n, TB_OP_add, BF);                    \
            break;                                                        \
        case TB_OP_sub:                                                   \
            hpb_rows(a, b, o, rows, n, TB_OP_sub, BF);                    \
            break;                                                        \
        case TB_OP_mul:                                                   \
            hpb_rows(a, b, o, rows, n, TB_OP_mul, BF);                    \
            break;                                                        \
        default:                                                          \
            hpb_rows(a, b, o, rows, n, TB_OP_div, BF);                    \
            break;                                                        \
        }                                                                 \
    }
HPB_DEF(bf16, 1)
HPB_DEF(f16, 0)
#undef HPB_DEF

tb_cpu_half_colbin_fn HPS_CAT(tb_cpu_half_colbin_, HP_SFX)(tb_dtype dt)
{
    return dt == TB_BF16   ? HPS_CAT(hpb_bf16_, HP_SFX)
           : dt == TB_F16 ? HPS_CAT(hpb_f16_, HP_SFX)
                          : NULL;
}

tb_cpu_half_short_fn HPS_CAT(tb_cpu_half_short_, HP_SFX)(tb_dtype dt)
{
    return dt == TB_BF16   ? HPS_CAT(hps_bf16_, HP_SFX)
           : dt == TB_F16 ? HPS_CAT(hps_f16_, HP_SFX)
                          : NULL;
}

#endif
