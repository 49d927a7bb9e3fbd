/* The direct stride-1 convolution loop of the avx512bf16 level, bf16
 * forward (conv_direct.h; built with only that level's flags,
 * meson.build).
 *
 * The taps r = (c*KH + kh)*KW + kw are taken two at a time: pair p holds
 * taps 2p and 2p + 1 (a zero in place of tap R when R is odd).  A tile
 * is 8 output channels x NV vectors (NV = 1..3) of 16 pixels of one
 * output row, 8*NV f32 accumulators started at the bias; per pair and
 * vector the two taps' image rows are loaded (16 bf16 each, masked at
 * the row's end) and interleaved by one vpermt2w into 16 dwords (tap
 * 2p's pixel in the low half, tap 2p + 1's in the high), then 8
 * vdpbf16ps against the pair's packed weights broadcast as dwords.  The
 * sums leave the registers once, rounded to bf16 by vcvtneps2bf16.
 * Rows of one vector (OW <= 16) take 1..3 rows a tile.  A
 * block of 1 or 2 output channels (O of 1 or 2, the tail of O) runs one
 * channel x 4 rows a tile. */
#include "conv_direct.h"

#include <immintrin.h>

/* the largest R the loops take (conv_direct.h's TB_CPU_CONVD_MAX_R):
 * the taps' offsets live on the stack */
#define CONVB_MAX_R TB_CPU_CONVD_MAX_R

static __mmask16 convb_mask(int64_t n)
{
    return n >= 16 ? (__mmask16)0xffff
                   : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* the 16 bf16 of a tap's row from x (m: the lanes inside the row) */
static inline __m512i convb_load(__mmask16 m, const uint16_t *x)
{
    return _mm512_castsi256_si512(_mm256_maskz_loadu_epi16(m, x));
}

/* One tile of NV vectors: off [R] the taps' offsets in the padded
 * image, w the pairs' packed weights (8 dwords a pair), nrows (<= 8)
 * output channels stored, m [NV] the vectors' lanes; vector v at xrow +
 * v*xs in the image and o + v*os in the output (16 and 16: along a row;
 * Wp and OW: down the rows of a one-vector row). */
#define CONVB_TILE(NV, SFX, XS, OS, ATTR)                                  \
    static ATTR void convb_tile##SFX##_##NV(const uint16_t *restrict xrow, \
                                const int64_t *off, int64_t R,             \
                                const uint32_t *restrict w,                \
                                const float *bias8, uint16_t *restrict o,  \
                                int64_t P, int nrows, const __mmask16 *m,  \
                                int64_t xs, int64_t os)                    \
    {                                                                      \
        (void)xs;                                                          \
        (void)os;                                                          \
        /* word 2i: lane i of the first source, 2i + 1: of the second */   \
        const __m512i idx = _mm512_set_epi16(                              \
            47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8,  \
            39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);       \
        __m512 acc[TB_CPU_CONVD_OB][NV];                                   \
        _Pragma("GCC unroll 8") for (int i = 0; i < TB_CPU_CONVD_OB; i++)  \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)           \
                acc[i][v] = bias8 ? _mm512_set1_ps(bias8[i])               \
                                  : _mm512_setzero_ps();                   \
        for (int64_t r = 0; r < R; r += 2, w += TB_CPU_CONVD_OB) {         \
            __m512i xv[NV];                                                \
            const uint16_t *x0 = xrow + off[r];                            \
            if (r + 1 < R) {                                               \
                const uint16_t *x1 = xrow + off[r + 1];                    \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)       \
                    xv[v] = _mm512_permutex2var_epi16(                     \
                        convb_load(m[v], x0 + v * (XS)), idx,              \
                        convb_load(m[v], x1 + v * (XS)));                  \
            } else {                                                       \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)       \
                    xv[v] = _mm512_cvtepu16_epi32(                         \
                        _mm256_maskz_loadu_epi16(m[v], x0 + v * (XS)));    \
            }                                                              \
            _Pragma("GCC unroll 8") for (int i = 0; i < TB_CPU_CONVD_OB;   \
                                         i++)                              \
            {                                                              \
                const __m512bh wi =                                        \
                    (__m512bh)_mm512_set1_epi32((int)w[i]);                \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)       \
                    acc[i][v] = _mm512_dpbf16_ps(acc[i][v],                \
                                                 (__m512bh)xv[v], wi);     \
            }                                                              \
        }                                                                  \
        _Pragma("GCC unroll 8") for (int i = 0; i < TB_CPU_CONVD_OB; i++)  \
            if (i < nrows)                                                 \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)       \
                    _mm256_mask_storeu_epi16(                              \
                        o + i * P + v * (OS), m[v],                        \
                        (__m256i)_mm512_cvtneps_pbh(acc[i][v]));           \
    }

/* along a row (xs, os unused; inlined), and down the rows (not inlined:
 * inlined too, the caller's code grew and the tiles along a row ran 6%
 * slower, 8x1x28x28 * 16x1x3x3) */
CONVB_TILE(1, , 16, 16, inline)
CONVB_TILE(2, , 16, 16, inline)
CONVB_TILE(3, , 16, 16, inline)
CONVB_TILE(1, _down, xs, os, __attribute__((noinline)))
CONVB_TILE(2, _down, xs, os, __attribute__((noinline)))
CONVB_TILE(3, _down, xs, os, __attribute__((noinline)))

/* One tile of one output channel (a block's 1 or 2 channels: an
 * 8-channel tile would waste most of its vdpbf16ps) x CONVB_RB output
 * rows (rows of them stored, the others' loads masked off) x NV
 * vectors: per pair one vpermt2w a vdpbf16ps; w steps 8 dwords a pair
 * (the packed layout). */
#define CONVB_RB 4
#define CONVB_ROWS_MAX 2
#define CONVB_ROWS(NV)                                                     \
    static void convb_rows_##NV(const uint16_t *restrict xrow,             \
                                const int64_t *off, int64_t R,             \
                                const uint32_t *restrict w, float bias,    \
                                uint16_t *restrict o, int rows,            \
                                const __mmask16 *m,                        \
                                const tb_cpu_convd_geom *g)                \
    {                                                                      \
        const __m512i idx = _mm512_set_epi16(                              \
            47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8,  \
            39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);       \
        __m512 acc[CONVB_RB][NV];                                          \
        __mmask16 mr[CONVB_RB][NV];                                        \
        _Pragma("GCC unroll 4") for (int r = 0; r < CONVB_RB; r++)         \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) {         \
                acc[r][v] = _mm512_set1_ps(bias);                          \
                mr[r][v] = r < rows ? m[v] : (__mmask16)0;                 \
            }                                                              \
        for (int64_t t = 0; t < R; t += 2, w += TB_CPU_CONVD_OB) {         \
            const __m512bh wv = (__m512bh)_mm512_set1_epi32((int)*w);      \
            const uint16_t *x0 = xrow + off[t];                            \
            const uint16_t *x1 = t + 1 < R ? xrow + off[t + 1] : 0;        \
            _Pragma("GCC unroll 4") for (int r = 0; r < CONVB_RB; r++)     \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) {     \
                    const uint16_t *p0 = x0 + r * g->Wp + v * 16;          \
                    const __m512i xv =                                     \
                        x1 ? _mm512_permutex2var_epi16(                    \
                                 convb_load(mr[r][v], p0), idx,            \
                                 convb_load(mr[r][v],                      \
                                            x1 + r * g->Wp + v * 16))      \
                           : _mm512_cvtepu16_epi32(                        \
                                 _mm256_maskz_loadu_epi16(mr[r][v], p0));  \
                    acc[r][v] =                                            \
                        _mm512_dpbf16_ps(acc[r][v], (__m512bh)xv, wv);     \
                }                                                          \
        }                                                                  \
        _Pragma("GCC unroll 4") for (int r = 0; r < CONVB_RB; r++)         \
            if (r < rows)                                                  \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)       \
                    _mm256_mask_storeu_epi16(                              \
                        o + r * g->OW + v * 16, m[v],                      \
                        (__m256i)_mm512_cvtneps_pbh(acc[r][v]));           \
    }

CONVB_ROWS(1)
CONVB_ROWS(2)
CONVB_ROWS(3)

/* 1..3 vectors from v0 of nvec a tile (4 left: 2 and 2), their masks
 * m[0..3) of the OW columns */
static int convb_chunk(int64_t nvec, int64_t v0, int64_t OW, __mmask16 *m)
{
    const int64_t left = nvec - v0;
    for (int v = 0; v < 3; v++)
        m[v] = convb_mask(OW - (v0 + v) * 16);
    return left <= 3 ? (int)left : left == 4 ? 2 : 3;
}

/* the loops of one output channel (weights w, 8 dwords a pair) */
static void convb_fwd1(const uint16_t *xp, const int64_t *off, int64_t R,
                       const uint32_t *w, float b, uint16_t *out,
                       const tb_cpu_convd_geom *g)
{
    const int64_t nvec = (g->OW + 15) / 16;
    for (int64_t oh = 0; oh < g->OH; oh += CONVB_RB) {
        const int rows =
            g->OH - oh < CONVB_RB ? (int)(g->OH - oh) : CONVB_RB;
        for (int64_t v0 = 0; v0 < nvec;) {
            __mmask16 m[3];
            const int nv = convb_chunk(nvec, v0, g->OW, m);
            const uint16_t *xrow = xp + oh * g->Wp + v0 * 16;
            uint16_t *o = out + oh * g->OW + v0 * 16;
            if (nv == 1)
                convb_rows_1(xrow, off, R, w, b, o, rows, m, g);
            else if (nv == 2)
                convb_rows_2(xrow, off, R, w, b, o, rows, m, g);
            else
                convb_rows_3(xrow, off, R, w, b, o, rows, m, g);
            v0 += nv;
        }
    }
}

void tb_cpu_convd_fwd_bf16_avx512bf16(const uint16_t *xp,
                                      const uint32_t *wp, const float *bias,
                                      uint16_t *out,
                                      const tb_cpu_convd_geom *g)
{
    const int64_t P = g->OH * g->OW, R = g->C * g->KH * g->KW;
    const int64_t NP = (R + 1) / 2;
    const int64_t nvec = (g->OW + 15) / 16;
    int64_t off[CONVB_MAX_R];
    for (int64_t c = 0, r = 0; c < g->C; c++)
        for (int64_t kh = 0; kh < g->KH; kh++)
            for (int64_t kw = 0; kw < g->KW; kw++, r++)
                off[r] = (c * g->Hp + kh * g->dil) * g->Wp + kw * g->dil;
    for (int64_t o0 = 0; o0 < g->O; o0 += TB_CPU_CONVD_OB) {
        const int nrows = g->O - o0 < TB_CPU_CONVD_OB ? (int)(g->O - o0)
                                                      : TB_CPU_CONVD_OB;
        const uint32_t *w = wp + (o0 / TB_CPU_CONVD_OB) * NP * TB_CPU_CONVD_OB;
        if (nrows <= CONVB_ROWS_MAX) {
            for (int i = 0; i < nrows; i++)
                convb_fwd1(xp, off, R, w + i, bias ? bias[o0 + i] : 0.0f,
                           out + (o0 + i) * P, g);
            continue;
        }
        float b8[TB_CPU_CONVD_OB];
        for (int i = 0; i < TB_CPU_CONVD_OB; i++)
            b8[i] = bias && i < nrows ? bias[o0 + i] : 0.0f;
        const float *b = bias ? b8 : 0;
        if (nvec == 1) {
            /* a tile of 1..3 rows (4 left: 2 and 2) */
            const __mmask16 m[3] = {convb_mask(g->OW), convb_mask(g->OW),
                                    convb_mask(g->OW)};
            for (int64_t oh = 0; oh < g->OH;) {
                const int64_t left = g->OH - oh;
                const int nv = left <= 3 ? (int)left : left == 4 ? 2 : 3;
                const uint16_t *xrow = xp + oh * g->Wp;
                uint16_t *o = out + o0 * P + oh * g->OW;
                if (nv == 1)
                    convb_tile_down_1(xrow, off, R, w, b, o, P, nrows, m, g->Wp,
                                 g->OW);
                else if (nv == 2)
                    convb_tile_down_2(xrow, off, R, w, b, o, P, nrows, m, g->Wp,
                                 g->OW);
                else
                    convb_tile_down_3(xrow, off, R, w, b, o, P, nrows, m, g->Wp,
                                 g->OW);
                oh += nv;
            }
            continue;
        }
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t v0 = 0; v0 < nvec;) {
                /* 1..3 vectors a tile (4 left: 2 and 2) */
                const int64_t left = nvec - v0;
                const int nv = left <= 3 ? (int)left : left == 4 ? 2 : 3;
                __mmask16 m[3];
                for (int v = 0; v < 3; v++)
                    m[v] = convb_mask(g->OW - (v0 + v) * 16);
                const uint16_t *xrow = xp + oh * g->Wp + v0 * 16;
                uint16_t *o = out + o0 * P + oh * g->OW + v0 * 16;
                if (nv == 1)
                    convb_tile_1(xrow, off, R, w, b, o, P, nrows, m, 16,
                                 16);
                else if (nv == 2)
                    convb_tile_2(xrow, off, R, w, b, o, P, nrows, m, 16,
                                 16);
                else
                    convb_tile_3(xrow, off, R, w, b, o, P, nrows, m, 16,
                                 16);
                v0 += nv;
            }
    }
}
