/* softmax and log_softmax rows of n <= VS_LANES (16) bf16/f16 values,
 * for inclusion by half_lsm_fused.h only (avx512 and avx512bf16; its
 * hl_wid, hl_nar): kernels_simd.h's f32 short rows (ks_short_rows:
 * blocks of 16 rows, the columns of a block in registers, lane r = row
 * r) on the 16-bit values themselves, with no f32 scratch.  half_lsm.c
 * widened each L1 block to f32, ran the f32 rows and narrowed the
 * block: two more passes over the block with a 64-byte store a vector
 * (two cycles each on Zen 4).  Here:
 * - the columns as ks_load_cols takes them, from 16-bit pieces: per
 *   four columns, one masked 8-byte load a row into 64-bit lane q of a
 *   ymm, widened (lane q -> 128-bit lane q, ks_load_cols's layout),
 *   then its 4 x 4 transposes within the 128-bit lanes;
 * - the max, the exponentials, their sum and the log (inverse) of a
 *   chunk of HS_CHUNK blocks in ks_short_rows's order and
 *   operations (the same f32 values, bit for bit);
 * - log_softmax's write in memory order from the 16-bit x (a ymm a
 *   vector; bf16 32 values at a time in h_bf16_widen2's order, one
 *   operation a vector each way: 1024x10 4.69 -> 4.29 us), m and log s
 *   by permutes, narrowed;
 * - softmax's columns narrowed, packed two a zmm, and put in memory
 *   order by word permutes (vpermt2w: one output vector of 32 values
 *   takes one permute per pair of column vectors it draws from, ~25 at
 *   n = 10 where ks_short_write's 16 x 16 transpose took ~64 shuffles
 *   and 16 masked stores), stored whole.
 * log_softmax_backward's blocks likewise (hs_bw_rows).  Each n is its
 * own instance (hs_short's switch, KS_SHORT_NS).  Only whole blocks of
 * 16 rows; half_lsm.c runs the rest as before. */
#ifndef TB_BACKENDS_CPU_HALF_LSM_SHORT_H
#define TB_BACKENDS_CPU_HALF_LSM_SHORT_H

#if VS_LANES != 16
#error "half_lsm_short.h: AVX-512 levels only"
#endif

#include <string.h>

#define HS_AI static inline __attribute__((always_inline))
/* blocks a chunk (kernels_simd.h's KS_SHORT_CHUNK; any count gives the
 * same values) */
#define HS_CHUNK 8

/* ks_load_cols on 16-bit rows: col[c] for c < n, lane r = element c of
 * row r of the 16 contiguous rows of n at x */
HS_AI void hs_load_cols(const uint16_t *x, int64_t n, vf *col, int f16)
{
#pragma GCC unroll 4
    for (int64_t g = 0; 4 * g < n; g++) {
        const int64_t w = n - 4 * g < 4 ? n - 4 * g : 4;
        const unsigned m4 = (1u << w) - 1;
        vf a[4];
#pragma GCC unroll 4
        for (int64_t j = 0; j < 4; j++) {
            __m256i v = _mm256_maskz_loadu_epi16((__mmask16)m4,
                                                 x + j * n + 4 * g);
#pragma GCC unroll 4
            for (int64_t q = 1; q < 4; q++)
                v = _mm256_mask_loadu_epi16(v, (__mmask16)(m4 << (4 * q)),
                                            x + (j + 4 * q) * n + 4 * g -
                                                4 * q);
            a[j] = hl_wid(v, f16);
        }
        ks_cols4(a, col + 4 * g, w);
    }
}

/* softmax's output permutes for rows of n: output vector v (32 values,
 * flat elements 32 v ..) from the packed columns p[d] (column 2d in
 * words 0..15, 2d + 1 in 16..31: word 16 (c % 2) + row), per pair t of
 * packed vectors (p[2t], p[2t + 1]): the vpermt2w indices.  Each word
 * of v comes from one pair; every pair gives to every v (v's 32
 * elements hold every column of a row, n <= 16). */
typedef struct {
    int16_t idx[8][4][32]; /* [v][t][word] */
} hs_perm_tab;

static inline void hs_perm_init(hs_perm_tab *pt, int64_t n)
{
    memset(pt, 0, sizeof *pt);
    for (int64_t f = 0; f < 16 * n; f++) {
        const int64_t r = f / n, c = f % n, d = c / 2;
        const int64_t v = f / 32, wd = f % 32, t = d / 2;
        pt->idx[v][t][wd] = (int16_t)(32 * (d % 2) + 16 * (c % 2) + r);
    }
}

/* the words of output vector v that pair t gives (constants once
 * inlined: v, t, n are) */
HS_AI __mmask32 hs_kmask(int64_t v, int64_t t, int64_t n)
{
    uint32_t k = 0;
#pragma GCC unroll 32
    for (int64_t wd = 0; wd < 32; wd++)
        if ((32 * v + wd) % n / 4 == t)
            k |= 1u << wd;
    return (__mmask32)k;
}

/* softmax's write of one block: col[c] (c < n) narrowed, packed and
 * permuted into memory order at o */
HS_AI void hs_sm_put(const vf *col, uint16_t *o, int64_t n,
                     const hs_perm_tab *pt, int f16)
{
    const int64_t np = (n + 1) / 2;  /* packed vectors */
    const int64_t no = (n + 1) / 2;  /* output vectors (16 n / 32) */
    __m512i p[8];
#pragma GCC unroll 8
    for (int64_t d = 0; d < np; d++) {
        const __m256i lo = hl_nar(col[2 * d], f16);
        p[d] = 2 * d + 1 < n
                   ? _mm512_inserti64x4(_mm512_castsi256_si512(lo),
                                        hl_nar(col[2 * d + 1], f16), 1)
                   : _mm512_castsi256_si512(lo);
    }
#pragma GCC unroll 8
    for (int64_t v = 0; v < no; v++) {
        __m512i acc = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int64_t t = 0; 2 * t < np; t++) {
            const __m512i b = 2 * t + 1 < np ? p[2 * t + 1] : p[2 * t];
            const __m512i q = _mm512_permutex2var_epi16(
                p[2 * t],
                _mm512_loadu_si512((const void *)pt->idx[v][t]), b);
            /* pair t's words: columns 4t .. 4t + 3 */
            acc = t == 0 ? q
                         : _mm512_mask_mov_epi16(acc, hs_kmask(v, t, n), q);
        }
        if (32 * (v + 1) <= 16 * n)
            _mm512_storeu_si512((void *)(o + 32 * v), acc);
        else /* n odd: the last 16 values */
            _mm256_storeu_si256((__m256i *)(void *)(o + 32 * v),
                                _mm512_castsi512_si256(acc));
    }
}

/* fid2[u][h][k] (bf16; f16 needs none): the row of lane k of
 * h_bf16_widen2's lo (h 0) or hi (1) of the 32 values from 32 u (words
 * 0-3, 4-7 of each 128-bit lane) */
HS_AI void hs_fid2(int32_t (*fid2)[2][VS_LANES], int64_t n, int f16)
{
    for (int64_t u = 0; !f16 && 2 * u + 2 <= n; u++)
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < VS_LANES; k++)
                fid2[u][h][k] =
                    (int32_t)((32 * u + 8 * (k / 4) + 4 * h + k % 4) / n);
}

/* nb blocks of 16 rows of n <= 16 (a constant once inlined):
 * ks_short_rows's transposed blocks */
HS_AI void hs_short_rows(const uint16_t *x, uint16_t *o, int64_t nb,
                         int64_t n, int soft, int f16)
{
    int32_t fidx[VS_LANES][VS_LANES];
    hs_perm_tab pt;
    int32_t fid2[VS_LANES / 2][2][VS_LANES];
    if (soft)
        hs_perm_init(&pt, n);
    else
        ks_row_index(fidx, n);
    if (!soft)
        hs_fid2(fid2, n, f16);
    const int64_t bs = VS_LANES * n;
    vf m[HS_CHUNK], st[HS_CHUNK];
    vf ex[HS_CHUNK][VS_LANES];
    for (int64_t b0 = 0; b0 < nb; b0 += HS_CHUNK) {
        const int64_t cb =
            nb - b0 < HS_CHUNK ? nb - b0 : HS_CHUNK;
        int64_t b;
        for (b = 0; b < cb; b++) { /* as ks_short_stats */
            vf col[VS_LANES];
            hs_load_cols(x + (b0 + b) * bs, n, col, f16);
            ks_cols_stats(col, n, &m[b], &st[b], ex[b], soft);
        }
        for (b = 0; b < cb; b++)
            st[b] = soft ? v_div(v_set1(1.0f), st[b]) : vs_log(st[b]);
        for (b = 0; b < cb; b++) {
            const uint16_t *xb = x + (b0 + b) * bs;
            uint16_t *ob = o + (b0 + b) * bs;
            if (soft) {
                vf col[VS_LANES];
#pragma GCC unroll 16
                for (int64_t c = 0; c < n; c++)
                    col[c] = v_mul(ex[b][c], st[b]);
                hs_sm_put(col, ob, n, &pt, f16);
                continue;
            }
            /* bf16: 32 values at a time in h_bf16_widen2's order (one
             * operation a vector each way, as hl_write) */
            const int64_t n2 = f16 ? 0 : n / 2;
#pragma GCC unroll 8
            for (int64_t u = 0; u < n2; u++) {
                const int64_t v = 2 * u;
                vf lo, hi;
                h_bf16_widen2(h_load2(xb + v * VS_LANES), &lo, &hi);
                const __m512i kl =
                    _mm512_loadu_si512((const void *)fid2[v / 2][0]);
                const __m512i kh =
                    _mm512_loadu_si512((const void *)fid2[v / 2][1]);
                lo = v_sub(v_sub(lo, _mm512_permutexvar_ps(kl, m[b])),
                           _mm512_permutexvar_ps(kl, st[b]));
                hi = v_sub(v_sub(hi, _mm512_permutexvar_ps(kh, m[b])),
                           _mm512_permutexvar_ps(kh, st[b]));
                h_store2(ob + v * VS_LANES, h_bf16_narrow2(lo, hi));
            }
#pragma GCC unroll 16
            for (int64_t v = 2 * n2; v < n; v++) {
                const __m512i k =
                    _mm512_loadu_si512((const void *)fidx[v]);
                const vf xv = v_sub(hl_ld(xb + v * VS_LANES, f16),
                                    _mm512_permutexvar_ps(k, m[b]));
                hl_st(ob + v * VS_LANES,
                      v_sub(xv, _mm512_permutexvar_ps(k, st[b])), f16);
            }
        }
    }
}

#define HS_CASE(N)                                                        \
    case N:                                                               \
        if (soft)                                                         \
            hs_short_rows(x, o, nb, N, 1, f16);                           \
        else                                                              \
            hs_short_rows(x, o, nb, N, 0, f16);                           \
        return nb * VS_LANES;

/* The rows' first whole blocks of 16 (n <= 16): the number done */
HS_AI int64_t hs_short(const uint16_t *x, uint16_t *o, int64_t rows,
                       int64_t n, int soft, int f16)
{
    const int64_t nb = rows / VS_LANES;
    switch (n) {
        KS_SHORT_NS(HS_CASE)
    default:
        return 0;
    }
}
#undef HS_CASE

#define HS_DEF(NAME, SOFT, F16)                                           \
    static int64_t HL_CAT(NAME, HL_SFX)(const uint16_t *x, uint16_t *o,   \
                                        int64_t rows, int64_t n)          \
    {                                                                     \
        return hs_short(x, o, rows, n, SOFT, F16);                        \
    }
HS_DEF(hs_sm_bf16_, 1, 0)
HS_DEF(hs_sm_f16_, 1, 1)
HS_DEF(hs_lsm_bf16_, 0, 0)
HS_DEF(hs_lsm_f16_, 0, 1)
#undef HS_DEF

tb_cpu_half_short_lsm_fn HL_CAT(tb_cpu_half_lsm_short_, HL_SFX)(tb_dtype dt,
                                                                int soft)
{
    if (dt == TB_F16)
        return soft ? HL_CAT(hs_sm_f16_, HL_SFX) : HL_CAT(hs_lsm_f16_, HL_SFX);
    return soft ? HL_CAT(hs_sm_bf16_, HL_SFX) : HL_CAT(hs_lsm_bf16_, HL_SFX);
}

/* log_softmax_backward of nb blocks of 16 rows of n <= 16 (a constant
 * once inlined): bwd_simd_impl.h's bw_lsm_short_n on the 16-bit g and
 * y (x[0], x[1] of half_lsm.c's job): per block s = sum g a row in
 * double from 0 in column order (g's columns by hs_load_cols), rounded
 * to float; then dx = g - exp(y) s in memory order (one fnma), s by a
 * permute, narrowed; chunks of HS_CHUNK blocks, the sums first.  The
 * same operations on the same f32 values: its bits. */
HS_AI void hs_bw_rows(const uint16_t *g, const uint16_t *y, uint16_t *dx,
                      int64_t nb, int64_t n, int f16)
{
    const int64_t L = VS_LANES;
    int32_t fidx[VS_LANES][VS_LANES], fid2[VS_LANES / 2][2][VS_LANES];
    ks_row_index(fidx, n);
    hs_fid2(fid2, n, f16);
    vf sts[HS_CHUNK];
    for (int64_t b0 = 0; b0 < nb; b0 += HS_CHUNK) {
        const int64_t cb = nb - b0 < HS_CHUNK ? nb - b0 : HS_CHUNK;
        for (int64_t b = 0; b < cb; b++) {
            vf c[VS_LANES];
            hs_load_cols(g + (b0 + b) * L * n, n, c, f16);
            __m512d lo = _mm512_setzero_pd(), hi = lo;
#pragma GCC unroll 16
            for (int64_t k = 0; k < n; k++) {
                lo = _mm512_add_pd(
                    lo, _mm512_cvtps_pd(_mm512_castps512_ps256(c[k])));
                hi = _mm512_add_pd(
                    hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(c[k], 1)));
            }
            sts[b] = _mm512_insertf32x8(
                _mm512_castps256_ps512(_mm512_cvtpd_ps(lo)),
                _mm512_cvtpd_ps(hi), 1);
        }
        for (int64_t b = 0; b < cb; b++) {
            const int64_t at = (b0 + b) * L * n;
            /* bf16: 32 values at a time (hs_short_rows's write) */
            const int64_t n2 = f16 ? 0 : n / 2;
#pragma GCC unroll 8
            for (int64_t u = 0; u < n2; u++) {
                const int64_t v = 2 * u;
                vf gl, gh, yl, yh;
                h_bf16_widen2(h_load2(g + at + v * L), &gl, &gh);
                h_bf16_widen2(h_load2(y + at + v * L), &yl, &yh);
                const __m512i kl =
                    _mm512_loadu_si512((const void *)fid2[u][0]);
                const __m512i kh =
                    _mm512_loadu_si512((const void *)fid2[u][1]);
                h_store2(dx + at + v * L,
                         h_bf16_narrow2(
                             v_fnma(vs_exp(yl),
                                    _mm512_permutexvar_ps(kl, sts[b]), gl),
                             v_fnma(vs_exp(yh),
                                    _mm512_permutexvar_ps(kh, sts[b]),
                                    gh)));
            }
#pragma GCC unroll 16
            for (int64_t v = 2 * n2; v < n; v++) {
                const __m512i k =
                    _mm512_loadu_si512((const void *)fidx[v]);
                hl_st(dx + at + v * L,
                      v_fnma(vs_exp(hl_ld(y + at + v * L, f16)),
                             _mm512_permutexvar_ps(k, sts[b]),
                             hl_ld(g + at + v * L, f16)),
                      f16);
            }
        }
    }
}

#define HS_BW_CASE(N)                                                     \
    case N:                                                               \
        hs_bw_rows(g, y, dx, nb, N, f16);                                 \
        return nb * VS_LANES;

/* hs_short's for log_softmax_backward */
HS_AI int64_t hs_bw(const uint16_t *g, const uint16_t *y, uint16_t *dx,
                    int64_t rows, int64_t n, int f16)
{
    const int64_t nb = rows / VS_LANES;
    switch (n) {
        KS_SHORT_NS(HS_BW_CASE)
    default:
        return 0;
    }
}
#undef HS_BW_CASE

static int64_t HL_CAT(hs_bw_bf16_, HL_SFX)(const uint16_t *g,
                                           const uint16_t *y, uint16_t *dx,
                                           int64_t rows, int64_t n)
{
    return hs_bw(g, y, dx, rows, n, 0);
}
static int64_t HL_CAT(hs_bw_f16_, HL_SFX)(const uint16_t *g,
                                          const uint16_t *y, uint16_t *dx,
                                          int64_t rows, int64_t n)
{
    return hs_bw(g, y, dx, rows, n, 1);
}

tb_cpu_half_short_bw_fn HL_CAT(tb_cpu_half_lsm_bw_short_, HL_SFX)(tb_dtype dt)
{
    return dt == TB_F16 ? HL_CAT(hs_bw_f16_, HL_SFX)
                        : HL_CAT(hs_bw_bf16_, HL_SFX);
}

#undef HS_AI
#undef HS_CHUNK
#endif
