/* Direct stride-1 convolution loops of the AVX-512 level, f32 and f64
 * (conv_direct.h; built with only that level's flags, meson.build).
 *
 * Forward: a tile is 8 output channels x NV vectors (NV = 1..3) of one
 * output row, or flat (conv_direct.h's tb_cpu_convd_seg: the vectors
 * run on over the padded image's row ends where that idles fewer lanes),
 * 8*NV accumulators in registers started at the bias; per tap one
 * (masked) load of the image row per vector and 8 fused multiply-adds
 * with the packed weights broadcast.  Stores are whole vectors where
 * the lanes past a row land on outputs stored later (a masked store
 * only at the image's end: 8x1x28x28 -> 16x3x3 f32 -13%).  Weight gradient: a
 * tile is 8 output channels x 3 taps (24 accumulators), per vector of
 * an output row 8 loads of g and 3 of the image, summed over the
 * images and rows, then reduced across the lanes. */
#include "conv_direct.h"

#include <immintrin.h>

#define CONVD_DW_OB 8
#define CONVD_DW_TB 3

/* One forward tile of NV vectors; nrows (<= 8) output channels stored. */
#define CONVD_TILE(SFX, T, VT, V, MT, NV, SET1, ZERO, FMA, LOADZ, STOREM,  \
                   STOREU)                                                 \
    static void convd_tile_##SFX##_##NV(                                   \
        const T *restrict xrow, const T *restrict w, const T *bias8,       \
        T *restrict o, int64_t P, int nrows, const MT *m, bool last,       \
        const tb_cpu_convd_seg *sg, const tb_cpu_convd_geom *g)            \
    {                                                                      \
        VT acc[TB_CPU_CONVD_OB][NV];                                       \
        _Pragma("GCC unroll 8") for (int i = 0; i < TB_CPU_CONVD_OB; i++)  \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)           \
                acc[i][v] = bias8 ? SET1(bias8[i]) : ZERO();               \
        for (int64_t c = 0; c < g->C; c++)                                 \
            for (int64_t kh = 0; kh < g->KH; kh++) {                       \
                const T *row = xrow + (c * g->Hp + kh * g->dil) * g->Wp;   \
                for (int64_t kw = 0; kw < g->KW; kw++, w += 8) {           \
                    VT xv[NV];                                             \
                    _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)   \
                        xv[v] = LOADZ(m[v], row + kw * g->dil + v * V);    \
                    _Pragma("GCC unroll 8") for (int i = 0;                \
                                                 i < TB_CPU_CONVD_OB; i++) \
                    {                                                      \
                        const VT wi = SET1(w[i]);                          \
                        _Pragma("GCC unroll 3") for (int v = 0; v < NV;    \
                                                     v++)                  \
                            acc[i][v] = FMA(wi, xv[v], acc[i][v]);         \
                    }                                                      \
                }                                                          \
            }                                                              \
        /* unrolled, a test per row: an indexed acc would live on the      \
         * stack (stored back every tap) */                                \
        /* whole vectors stored unmasked (Zen 4: a masked store took       \
         * about 4 cycles), and a row's tail too but on the image's last   \
         * row: its lanes past OW land on the next row, stored later */    \
        /* flat (sg): piece 0 whole when sg[v].u, the others masked        \
         * (conv_direct.h's tb_cpu_convd_seg) */                           \
        if (sg) {                                                          \
            _Pragma("GCC unroll 8") for (int i = 0; i < TB_CPU_CONVD_OB;   \
                                         i++)                              \
                if (i < nrows)                                             \
                    _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) { \
                        T *oi = o + i * P;                                 \
                        if (sg[v].u)                                       \
                            STOREU(oi + sg[v].d[0], acc[i][v]);            \
                        else                                               \
                            STOREM(oi + sg[v].d[0], (MT)sg[v].m[0],        \
                                   acc[i][v]);                             \
                        if (sg[v].m[1])                                    \
                            STOREM(oi + sg[v].d[1], (MT)sg[v].m[1],        \
                                   acc[i][v]);                             \
                        if (sg[v].m[2])                                    \
                            STOREM(oi + sg[v].d[2], (MT)sg[v].m[2],        \
                                   acc[i][v]);                             \
                    }                                                      \
            return;                                                        \
        }                                                                  \
        const bool mtail = last && m[NV - 1] != (MT)~(MT)0;                \
        _Pragma("GCC unroll 8") for (int i = 0; i < TB_CPU_CONVD_OB; i++)  \
            if (i < nrows)                                                 \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) {     \
                    if (v == NV - 1 && mtail)                              \
                        STOREM(o + i * P + v * V, m[v], acc[i][v]);        \
                    else                                                   \
                        STOREU(o + i * P + v * V, acc[i][v]);              \
                }                                                          \
    }

/* One output-flat tile (conv_direct.h's tb_cpu_convd_oflat): 8 output
 * channels x NV vectors of V consecutive output positions o[v*V ..]
 * (a vector reaches 2 rows at most: OW >= V); vector v's image at
 * x + a[v] (the lanes of m0[v], its first row) merged with x + a[v] +
 * gap (the lanes of m1[v], the next row's), per tap; whole vectors
 * stored at o + i*P (a test or a masked store in the tile, taken once
 * an image, made the 8x1x28x28 -> 16x3x3 f32 tiles 12% slower: the
 * caller's scratch takes the image's last vector). */
#define CONVD_OTILE(SFX, T, VT, V, MT, NV, SET1, ZERO, FMA, LOADZ, LOADM,  \
                    OT, STOREU)                                            \
    static __attribute__((noinline)) void convd_otile_##SFX##_##NV(        \
        const T *restrict xp, const int64_t *off, int64_t R,               \
        const T *restrict w, const T *bias8, OT *restrict o, int64_t P,    \
        int nrows, const int64_t *a, const MT *m0, const MT *m1,           \
        int64_t gap)                                                       \
    {                                                                      \
        const T *xa[NV], *xb[NV];                                          \
        _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)               \
            xa[v] = xp + a[v], xb[v] = xp + a[v] + gap;                    \
        VT acc[TB_CPU_CONVD_OB][NV];                                       \
        _Pragma("GCC unroll 8") for (int i = 0; i < TB_CPU_CONVD_OB; i++)  \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)           \
                acc[i][v] = bias8 ? SET1(bias8[i]) : ZERO();               \
        for (int64_t r = 0; r < R; r++, w += 8) {                          \
            const int64_t t = off[r];                                      \
            VT xv[NV];                                                     \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)           \
                xv[v] = LOADM(LOADZ(m0[v], xa[v] + t), m1[v], xb[v] + t);  \
            _Pragma("GCC unroll 8") for (int i = 0; i < TB_CPU_CONVD_OB;   \
                                         i++)                              \
            {                                                              \
                const VT wi = SET1(w[i]);                                  \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)       \
                    acc[i][v] = FMA(wi, xv[v], acc[i][v]);                 \
            }                                                              \
        }                                                                  \
        _Pragma("GCC unroll 8") for (int i = 0; i < TB_CPU_CONVD_OB; i++)  \
            if (i < nrows)                                                 \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)       \
                    STOREU(o + i * P + v * V, acc[i][v]);                  \
    }

/* One forward tile of one output channel (fewer than 8 in all: an
 * 8-channel tile would waste most of its multiply-adds) x CONVD_RB
 * output rows (rows of them stored, the others' loads masked off) x NV
 * vectors; w steps 8 apart (the packed layout). */
#define CONVD_RB 4
/* A block of this many output channels or fewer (O < 4, the tail of O)
 * runs one channel at a time. */
#define CONVD_ROWS_MAX 3
#define CONVD_ROWS(SFX, T, VT, V, MT, NV, SET1, FMA, LOADZ, STOREM,        \
                   STOREU)                                                 \
    static void convd_rows_##SFX##_##NV(                                   \
        const T *restrict xrow, const T *restrict w, T bias,               \
        T *restrict o, int rows, const MT *m, int mrow,                    \
        const tb_cpu_convd_geom *g)                                        \
    {                                                                      \
        VT acc[CONVD_RB][NV];                                              \
        MT mr[CONVD_RB][NV];                                               \
        _Pragma("GCC unroll 4") for (int r = 0; r < CONVD_RB; r++)         \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) {         \
                acc[r][v] = SET1(bias);                                    \
                mr[r][v] = r < rows ? m[v] : (MT)0;                        \
            }                                                              \
        for (int64_t c = 0; c < g->C; c++)                                 \
            for (int64_t kh = 0; kh < g->KH; kh++) {                       \
                const T *row = xrow + (c * g->Hp + kh * g->dil) * g->Wp;   \
                for (int64_t kw = 0; kw < g->KW; kw++, w += 8) {           \
                    const VT wv = SET1(*w);                                \
                    const T *x = row + kw * g->dil;                        \
                    _Pragma("GCC unroll 4") for (int r = 0; r < CONVD_RB;  \
                                                 r++)                      \
                        _Pragma("GCC unroll 3") for (int v = 0; v < NV;    \
                                                     v++)                  \
                            acc[r][v] = FMA(                               \
                                wv,                                        \
                                LOADZ(mr[r][v], x + r * g->Wp + v * V),    \
                                acc[r][v]);                                \
                }                                                          \
            }                                                              \
        /* unmasked as the tiles, the tails of rows mrow on masked (the    \
         * image's last row; every row when the row has vectors left of    \
         * this tile's, stored before) */                                  \
        const bool mtail = m[NV - 1] != (MT)~(MT)0;                        \
        _Pragma("GCC unroll 4") for (int r = 0; r < CONVD_RB; r++)         \
            if (r < rows)                                                  \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) {     \
                    if (v == NV - 1 && r >= mrow && mtail)                 \
                        STOREM(o + r * g->OW + v * V, m[v], acc[r][v]);    \
                    else                                                   \
                        STOREU(o + r * g->OW + v * V, acc[r][v]);          \
                }                                                          \
    }

/* dw's output-flat sums (tb_cpu_convd_oflat) of one tile: res [8][3] =
 * over the images q < n and the nq vectors k of consecutive outputs,
 * g's vector of channel row orow[i] (its lanes past P zero) times the
 * image's at taps off[u] (two masked pieces: om0[k] at oa[k], om1[k] at
 * oa[k] + gap); not inlined (inlined, its pointers lived on the
 * stack). */
#define CONVD_DWO(SFX, T, VT, V, MT, ZERO, FMA, LOADZ, LOADM, STOREU)      \
    static __attribute__((noinline)) void convd_dwo_##SFX(                 \
        const T *g, int64_t gs, const T *xp, int64_t xs, int64_t n,        \
        const int64_t *orow, const int64_t *off, const int64_t *oa,        \
        const MT *om0, const MT *om1, int64_t nq, MT mlast, int64_t gap,   \
        T *res)                                                            \
    {                                                                      \
        VT acc[CONVD_DW_OB][CONVD_DW_TB];                                  \
        _Pragma("GCC unroll 8") for (int i = 0; i < CONVD_DW_OB; i++)      \
            _Pragma("GCC unroll 3") for (int u = 0; u < CONVD_DW_TB; u++)  \
                acc[i][u] = ZERO();                                        \
        for (int64_t q = 0; q < n; q++) {                                  \
            const T *gq = g + q * gs, *xq = xp + q * xs;                   \
            const T *xa[CONVD_DW_TB];                                      \
            _Pragma("GCC unroll 3") for (int u = 0; u < CONVD_DW_TB; u++)  \
                xa[u] = xq + off[u];                                       \
            for (int64_t k = 0; k < nq; k++) {                             \
                const MT mp = k == nq - 1 ? mlast : (MT)~(MT)0;            \
                const int64_t a = oa[k];                                   \
                VT xv[CONVD_DW_TB];                                        \
                _Pragma("GCC unroll 3") for (int u = 0; u < CONVD_DW_TB;   \
                                             u++)                          \
                    xv[u] = LOADM(LOADZ(om0[k], xa[u] + a), om1[k],        \
                                  xa[u] + a + gap);                        \
                _Pragma("GCC unroll 8") for (int i = 0; i < CONVD_DW_OB;   \
                                             i++)                          \
                {                                                          \
                    const VT gv = LOADZ(mp, gq + orow[i] + k * V);         \
                    _Pragma("GCC unroll 3") for (int u = 0;                \
                                                 u < CONVD_DW_TB; u++)     \
                        acc[i][u] = FMA(gv, xv[u], acc[i][u]);             \
                }                                                          \
            }                                                              \
        }                                                                  \
        _Pragma("GCC unroll 8") for (int i = 0; i < CONVD_DW_OB; i++)      \
            _Pragma("GCC unroll 3") for (int u = 0; u < CONVD_DW_TB; u++)  \
                STOREU(res + (i * CONVD_DW_TB + u) * V, acc[i][u]);        \
    }

/* the vectors of the next tile of `left` (1..3; 4: 2 and 2) */
static inline int convd_nchunk(int64_t left)
{
    return left <= 3 ? (int)left : left == 4 ? 2 : 3;
}

/* the lanes of a vector summed in double */
static double convd_lanes_f32(__m512 v)
{
    return _mm512_reduce_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v))) +
           _mm512_reduce_add_pd(
               _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}

#define CONVD_DEFS(SFX, T, VT, V, MT, SET1, ZERO, FMA, LOADZ, STOREM, RED, \
                   STOREU, ADD, LANE_SUM, LOADM)                           \
    CONVD_DWO(SFX, T, VT, V, MT, ZERO, FMA, LOADZ, LOADM, STOREU)          \
    CONVD_OTILE(SFX, T, VT, V, MT, 1, SET1, ZERO, FMA, LOADZ, LOADM, T,    \
                STOREU)                                                    \
    CONVD_OTILE(SFX, T, VT, V, MT, 2, SET1, ZERO, FMA, LOADZ, LOADM, T,    \
                STOREU)                                                    \
    CONVD_OTILE(SFX, T, VT, V, MT, 3, SET1, ZERO, FMA, LOADZ, LOADM, T,    \
                STOREU)                                                    \
    CONVD_TILE(SFX, T, VT, V, MT, 1, SET1, ZERO, FMA, LOADZ, STOREM,       \
               STOREU)                                                     \
    CONVD_TILE(SFX, T, VT, V, MT, 2, SET1, ZERO, FMA, LOADZ, STOREM,       \
               STOREU)                                                     \
    CONVD_TILE(SFX, T, VT, V, MT, 3, SET1, ZERO, FMA, LOADZ, STOREM,       \
               STOREU)                                                     \
    CONVD_ROWS(SFX, T, VT, V, MT, 1, SET1, FMA, LOADZ, STOREM, STOREU)     \
    CONVD_ROWS(SFX, T, VT, V, MT, 2, SET1, FMA, LOADZ, STOREM, STOREU)     \
    CONVD_ROWS(SFX, T, VT, V, MT, 3, SET1, FMA, LOADZ, STOREM, STOREU)     \
                                                                           \
    static MT convd_mask_##SFX(int64_t n)                                  \
    {                                                                      \
        return n >= V ? (MT)~(MT)0 : n <= 0 ? (MT)0 : (MT)((1u << n) - 1); \
    }                                                                      \
                                                                           \
    /* db's sum of a row of P: in 4 vector sums of T, then their lanes     \
     * in double */                                                        \
    static double convd_rowsum_##SFX(const T *r, int64_t P)                \
    {                                                                      \
        VT a0 = ZERO(), a1 = ZERO(), a2 = ZERO(), a3 = ZERO();             \
        int64_t i = 0;                                                     \
        for (; i + 4 * V <= P; i += 4 * V) {                               \
            a0 = ADD(a0, LOADZ((MT)~(MT)0, r + i));                        \
            a1 = ADD(a1, LOADZ((MT)~(MT)0, r + i + V));                    \
            a2 = ADD(a2, LOADZ((MT)~(MT)0, r + i + 2 * V));                \
            a3 = ADD(a3, LOADZ((MT)~(MT)0, r + i + 3 * V));                \
        }                                                                  \
        for (; i < P; i += V)                                              \
            a0 = ADD(a0, LOADZ(convd_mask_##SFX(P - i), r + i));           \
        return LANE_SUM(ADD(ADD(a0, a1), ADD(a2, a3)));                    \
    }                                                                      \
                                                                           \
    /* The vectors of a row from v0 on that the next tile takes (1..3;     \
     * 4 left: 2 and 2) and their masks m[0..3) (of the OW columns). */    \
    static int convd_chunk_##SFX(int64_t nvec, int64_t v0, int64_t OW,     \
                                 MT *m)                                    \
    {                                                                      \
        const int64_t left = nvec - v0;                                    \
        for (int v = 0; v < 3; v++)                                        \
            m[v] = convd_mask_##SFX(OW - (v0 + v) * V);                    \
        return left <= 3 ? (int)left : left == 4 ? 2 : 3;                  \
    }                                                                      \
                                                                           \
    /* the forward loops of one output channel (weights w, 8 apart) */     \
    static void convd_fwd1_##SFX(const T *xp, const T *w, T b, T *out,     \
                                 const tb_cpu_convd_geom *g)               \
    {                                                                      \
        const int64_t nvec = (g->OW + V - 1) / V;                          \
        for (int64_t oh = 0; oh < g->OH; oh += CONVD_RB) {                 \
            const int rows = g->OH - oh < CONVD_RB ? (int)(g->OH - oh)     \
                                                   : CONVD_RB;             \
            for (int64_t v0 = 0; v0 < nvec;) {                             \
                MT m[3];                                                   \
                const int nv = convd_chunk_##SFX(nvec, v0, g->OW, m);      \
                const int mr = v0 > 0 ? 0 : oh + rows == g->OH ? rows - 1  \
                                                               : rows;     \
                const T *xrow = xp + oh * g->Wp + v0 * V;                  \
                T *op = out + oh * g->OW + v0 * V;                         \
                if (nv == 1)                                               \
                    convd_rows_##SFX##_1(xrow, w, b, op, rows, m, mr, g);  \
                else if (nv == 2)                                          \
                    convd_rows_##SFX##_2(xrow, w, b, op, rows, m, mr, g);  \
                else                                                       \
                    convd_rows_##SFX##_3(xrow, w, b, op, rows, m, mr, g);  \
                v0 += nv;                                                  \
            }                                                              \
        }                                                                  \
    }                                                                      \
                                                                           \
    void tb_cpu_convd_fwd_##SFX##_avx512(const T *xp, const T *wp,         \
                                         const T *bias, T *out,            \
                                         const tb_cpu_convd_geom *g)       \
    {                                                                      \
        const int64_t P = g->OH * g->OW, R = g->C * g->KH * g->KW;         \
        const int64_t nvec = (g->OW + V - 1) / V;                          \
        /* flat: np positions of the padded width, in nflat vectors */     \
        const int64_t np = (g->OH - 1) * g->Wp + g->OW;                    \
        const int64_t nflat = (np + V - 1) / V;                            \
        const bool oflat =                                                 \
            R <= TB_CPU_CONVD_FWD_MAX_R && tb_cpu_convd_oflat(g, V);       \
        const bool flat =                                                  \
            !oflat && tb_cpu_convd_flat_pays(nflat, g->OH * nvec, R);      \
        /* oflat: nq vectors, the last chunk's start and size lq, ln */    \
        const int64_t nq = (P + V - 1) / V;                                \
        int64_t oa[TB_CPU_CONVD_FLAT_MAXV], lq = 0;                        \
        MT om0[TB_CPU_CONVD_FLAT_MAXV], om1[TB_CPU_CONVD_FLAT_MAXV];       \
        int ln = 0;                                                        \
        for (int64_t q = 0; oflat && q < nq; q++) {                        \
            uint32_t u0, u1;                                               \
            tb_cpu_convd_opiece(q * V, V, g, &oa[q], &u0, &u1);            \
            om0[q] = (MT)u0, om1[q] = (MT)u1;                              \
        }                                                                  \
        for (int64_t q = 0; oflat && q < nq; q += ln)                      \
            lq = q, ln = convd_nchunk(nq - q);                             \
        /* the taps' offsets in the padded image (oflat) */                \
        int64_t off[TB_CPU_CONVD_FWD_MAX_R];                               \
        for (int64_t c = 0, r = 0; oflat && c < g->C; c++)                 \
            for (int64_t kh = 0; kh < g->KH; kh++)                         \
                for (int64_t kw = 0; kw < g->KW; kw++, r++)                \
                    off[r] = (c * g->Hp + kh * g->dil) * g->Wp +           \
                             kw * g->dil;                                  \
        const MT omt = P % V ? convd_mask_##SFX(P % V) : (MT)0;            \
        const int64_t gap = g->Wp - g->OW;                                 \
        T ob[TB_CPU_CONVD_OB * 3 * V];                                     \
        tb_cpu_convd_seg sgs[TB_CPU_CONVD_FLAT_MAXV];                      \
        int64_t row = 0;                                                   \
        for (int64_t f = 0; flat && f < nflat; f++)                        \
            tb_cpu_convd_segs(f * V, V, g, &row, &sgs[f]);                 \
        for (int64_t o0 = 0; o0 < g->O; o0 += TB_CPU_CONVD_OB) {           \
            const int nrows = g->O - o0 < TB_CPU_CONVD_OB                  \
                                  ? (int)(g->O - o0)                       \
                                  : TB_CPU_CONVD_OB;                       \
            const T *w = wp + (o0 / TB_CPU_CONVD_OB) * R * TB_CPU_CONVD_OB; \
            if (nrows <= CONVD_ROWS_MAX) {                                 \
                for (int i = 0; i < nrows; i++)                            \
                    convd_fwd1_##SFX(xp, w + i, bias ? bias[o0 + i] : (T)0, \
                                     out + (o0 + i) * P, g);               \
                continue;                                                  \
            }                                                              \
            T b8[TB_CPU_CONVD_OB];                                         \
            for (int i = 0; i < TB_CPU_CONVD_OB; i++)                      \
                b8[i] = bias && i < nrows ? bias[o0 + i] : (T)0;           \
            /* oflat: the last chunk first (the others' whole stores land  \
             * on what its vector spills past a channel's end); the last   \
             * block's, spilling past the image, into ob (P' = 3*V) */     \
            const bool lastb = o0 + nrows == g->O && omt;                  \
            for (int64_t k = 0, q = lq; oflat && q < nq; k++) {            \
                const int nv = k == 0 ? ln : convd_nchunk(lq - q);         \
                const T *b = bias ? b8 : 0;                                \
                const bool sc = k == 0 && lastb;                           \
                T *o = sc ? ob : out + o0 * P + q * V;                     \
                const int64_t Po = sc ? 3 * V : P;                         \
                if (nv == 1)                                               \
                    convd_otile_##SFX##_1(xp, off, R, w, b, o, Po, nrows,  \
                                          oa + q, om0 + q, om1 + q, gap);  \
                else if (nv == 2)                                          \
                    convd_otile_##SFX##_2(xp, off, R, w, b, o, Po, nrows,  \
                                          oa + q, om0 + q, om1 + q, gap);  \
                else                                                       \
                    convd_otile_##SFX##_3(xp, off, R, w, b, o, Po, nrows,  \
                                          oa + q, om0 + q, om1 + q, gap);  \
                for (int i = 0; sc && i < nrows; i++)                      \
                    for (int v = 0; v < nv; v++)                           \
                        STOREM(out + (o0 + i) * P + (q + v) * V,           \
                               v == nv - 1 ? omt : (MT)~(MT)0,             \
                               LOADZ((MT)~(MT)0, ob + i * 3 * V + v * V)); \
                q = k == 0 ? 0 : q + nv;                                   \
                if (q >= lq)                                               \
                    break;                                                 \
            }                                                              \
            for (int64_t v0 = 0; flat && v0 < nflat;) {                    \
                MT m[3];                                                   \
                const int nv = convd_chunk_##SFX(nflat, v0, np, m);        \
                const T *xrow = xp + v0 * V;                               \
                T *o = out + o0 * P;                                       \
                const T *b = bias ? b8 : 0;                                \
                const tb_cpu_convd_seg *sg = sgs + v0;                     \
                if (nv == 1)                                               \
                    convd_tile_##SFX##_1(xrow, w, b, o, P, nrows, m, true, \
                                         sg, g);                           \
                else if (nv == 2)                                          \
                    convd_tile_##SFX##_2(xrow, w, b, o, P, nrows, m, true, \
                                         sg, g);                           \
                else                                                       \
                    convd_tile_##SFX##_3(xrow, w, b, o, P, nrows, m, true, \
                                         sg, g);                           \
                v0 += nv;                                                  \
            }                                                              \
            for (int64_t oh = 0; !flat && !oflat && oh < g->OH; oh++)      \
                for (int64_t v0 = 0; v0 < nvec;) {                         \
                    MT m[3];                                               \
                    const int nv = convd_chunk_##SFX(nvec, v0, g->OW, m);  \
                    const T *xrow = xp + oh * g->Wp + v0 * V;              \
                    T *o = out + o0 * P + oh * g->OW + v0 * V;             \
                    const bool lst = oh == g->OH - 1;                      \
                    const T *b = bias ? b8 : 0;                            \
                    if (nv == 1)                                           \
                        convd_tile_##SFX##_1(xrow, w, b, o, P, nrows, m,   \
                                             lst, NULL, g);                \
                    else if (nv == 2)                                      \
                        convd_tile_##SFX##_2(xrow, w, b, o, P, nrows, m,   \
                                             lst, NULL, g);                \
                    else                                                   \
                        convd_tile_##SFX##_3(xrow, w, b, o, P, nrows, m,   \
                                             lst, NULL, g);                \
                    v0 += nv;                                              \
                }                                                          \
        }                                                                  \
    }                                                                      \
                                                                           \
    void tb_cpu_convd_dw_##SFX##_avx512(const T *g, const T *xp,           \
                                        int64_t n, T *dw, int64_t o0,      \
                                        int64_t o1,                        \
                                        const tb_cpu_convd_geom *gm)       \
    {                                                                      \
        const int64_t P = gm->OH * gm->OW, KK = gm->KH * gm->KW;           \
        const int64_t img = gm->Hp * gm->Wp;                               \
        /* output-flat (conv_direct.h): nq vectors of consecutive outputs  \
         * (8x1x28x28 -> 16x3x3: 43 against 52) */                        \
        const bool of = tb_cpu_convd_oflat(gm, V);                         \
        const int64_t nq = (P + V - 1) / V;                                \
        int64_t oa[TB_CPU_CONVD_FLAT_MAXV];                                \
        MT om0[TB_CPU_CONVD_FLAT_MAXV], om1[TB_CPU_CONVD_FLAT_MAXV];       \
        for (int64_t k = 0; of && k < nq; k++) {                           \
            uint32_t u0, u1;                                               \
            tb_cpu_convd_opiece(k * V, V, gm, &oa[k], &u0, &u1);           \
            om0[k] = (MT)u0, om1[k] = (MT)u1;                              \
        }                                                                  \
        const MT mlast = convd_mask_##SFX(P - (nq - 1) * V);               \
        for (int64_t ob = o0; ob < o1; ob += CONVD_DW_OB) {                \
            int64_t orow[CONVD_DW_OB];                                     \
            for (int i = 0; i < CONVD_DW_OB; i++)                          \
                orow[i] = (ob + i < o1 ? ob + i : o1 - 1) * P;             \
            for (int64_t c = 0; c < gm->C; c++)                            \
                for (int64_t t0 = 0; t0 < KK; t0 += CONVD_DW_TB) {         \
                    int64_t off[CONVD_DW_TB];                              \
                    for (int u = 0; u < CONVD_DW_TB; u++) {                \
                        const int64_t t = t0 + u < KK ? t0 + u : t0;       \
                        off[u] = (t / gm->KW) * gm->dil * gm->Wp +         \
                                 (t % gm->KW) * gm->dil;                   \
                    }                                                      \
                    if (of) {                                              \
                        T res[CONVD_DW_OB * CONVD_DW_TB * V];              \
                        convd_dwo_##SFX(g, gm->O * P, xp + c * img,        \
                                        gm->C * img, n, orow, off, oa,     \
                                        om0, om1, nq, mlast,               \
                                        gm->Wp - gm->OW, res);             \
                        for (int i = 0; i < CONVD_DW_OB; i++)              \
                            for (int u = 0; u < CONVD_DW_TB; u++)          \
                                if (ob + i < o1 && t0 + u < KK)            \
                                    dw[((ob + i) * gm->C + c) * KK + t0 +  \
                                       u] = RED(LOADZ((MT)~(MT)0,          \
                                                      res + (i * CONVD_DW_TB \
                                                             + u) * V));   \
                        continue;                                          \
                    }                                                      \
                    VT acc[CONVD_DW_OB][CONVD_DW_TB];                      \
                    _Pragma("GCC unroll 8") for (int i = 0;                \
                                                 i < CONVD_DW_OB; i++)     \
                        _Pragma("GCC unroll 3") for (int u = 0;            \
                                                     u < CONVD_DW_TB; u++) \
                            acc[i][u] = ZERO();                            \
                    for (int64_t q = 0; q < n; q++) {                      \
                        const T *gq = g + q * gm->O * P;                   \
                        const T *xq = xp + (q * gm->C + c) * img;          \
                        for (int64_t oh = 0; oh < gm->OH; oh++)            \
                            for (int64_t ow = 0; ow < gm->OW; ow += V) {   \
                                const MT m = convd_mask_##SFX(gm->OW - ow); \
                                const T *xr = xq + oh * gm->Wp + ow;       \
                                const T *gr = gq + oh * gm->OW + ow;       \
                                VT xv[CONVD_DW_TB];                        \
                                _Pragma("GCC unroll 3") for (int u = 0;    \
                                                             u <           \
                                                             CONVD_DW_TB;  \
                                                             u++)          \
                                    xv[u] = LOADZ(m, xr + off[u]);         \
                                _Pragma("GCC unroll 8") for (int i = 0;    \
                                                             i <           \
                                                             CONVD_DW_OB;  \
                                                             i++)          \
                                {                                          \
                                    const VT gv = LOADZ(m, gr + orow[i]);  \
                                    _Pragma("GCC unroll 3") for (          \
                                        int u = 0; u < CONVD_DW_TB; u++)   \
                                        acc[i][u] =                        \
                                            FMA(gv, xv[u], acc[i][u]);     \
                                }                                          \
                            }                                              \
                    }                                                      \
                    _Pragma("GCC unroll 8") for (int i = 0;                \
                                                 i < CONVD_DW_OB; i++)     \
                        _Pragma("GCC unroll 3") for (int u = 0;            \
                                                     u < CONVD_DW_TB; u++) \
                            if (ob + i < o1 && t0 + u < KK)                \
                                dw[((ob + i) * gm->C + c) * KK + t0 + u] = \
                                    RED(acc[i][u]);                        \
                }                                                          \
        }                                                                  \
    }


CONVD_DEFS(f32, float, __m512, 16, __mmask16, _mm512_set1_ps,
           _mm512_setzero_ps, _mm512_fmadd_ps, _mm512_maskz_loadu_ps,
           _mm512_mask_storeu_ps, _mm512_reduce_add_ps, _mm512_storeu_ps,
           _mm512_add_ps, convd_lanes_f32, _mm512_mask_loadu_ps)
CONVD_DEFS(f64, double, __m512d, 8, __mmask8, _mm512_set1_pd,
           _mm512_setzero_pd, _mm512_fmadd_pd, _mm512_maskz_loadu_pd,
           _mm512_mask_storeu_pd, _mm512_reduce_add_pd, _mm512_storeu_pd,
           _mm512_add_pd, _mm512_reduce_add_pd, _mm512_mask_loadu_pd)

/* the f32 loops' 1-, 2- and 3-row tiles storing 16-bit values by STO */
#define CONVD_OTILES16(NAME, STO)                                         \
    CONVD_OTILE(NAME, float, __m512, 16, __mmask16, 1, _mm512_set1_ps,    \
                _mm512_setzero_ps, _mm512_fmadd_ps,                       \
                _mm512_maskz_loadu_ps, _mm512_mask_loadu_ps, uint16_t,    \
                STO)                                                      \
    CONVD_OTILE(NAME, float, __m512, 16, __mmask16, 2, _mm512_set1_ps,    \
                _mm512_setzero_ps, _mm512_fmadd_ps,                       \
                _mm512_maskz_loadu_ps, _mm512_mask_loadu_ps, uint16_t,    \
                STO)                                                      \
    CONVD_OTILE(NAME, float, __m512, 16, __mmask16, 3, _mm512_set1_ps,    \
                _mm512_setzero_ps, _mm512_fmadd_ps,                       \
                _mm512_maskz_loadu_ps, _mm512_mask_loadu_ps, uint16_t,    \
                STO)

/* f16 outputs of the f32 loops: each f32 vector rounded once to f16
 * (vcvtps2ph, to nearest even: half_simd.h's h_f16_narrow1, the f16
 * rows' narrowing) */
static inline void convd_sto_h(uint16_t *p, __m512 v)
{
    _mm256_storeu_si256((__m256i *)p,
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT |
                                               _MM_FROUND_NO_EXC));
}
CONVD_OTILES16(f32h, convd_sto_h)
/* bf16 outputs of the f32 loops (the bf16 rows at the avx512 level,
 * no vcvtneps2bf16): each f32 lane rounded once to nearest even on its
 * lower 16 bits, a NaN kept with its quiet bit set (ops/half.h's
 * tb_f32_to_bf16, half.c's narrowing of the f32 row) */
static inline void convd_sto_b(uint16_t *p, __m512 v)
{
    const __m512i b = _mm512_castps_si512(v);
    const __m512i r = _mm512_add_epi32(
        b, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                            _mm512_and_si512(_mm512_srli_epi32(b, 16),
                                             _mm512_set1_epi32(1))));
    const __m512i q = _mm512_mask_or_epi32(
        r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), b,
        _mm512_set1_epi32(0x00400000));
    /* the lanes' upper words to the low 256 bits by one vpermw (a
     * shift and vpmovdw took 3 uops on the shuffle port's side) */
    const __m512i up = _mm512_set_epi16(
        31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1, 31, 29,
        27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    _mm256_storeu_si256(
        (__m256i *)p,
        _mm512_castsi512_si256(_mm512_permutexvar_epi16(up, q)));
}
CONVD_OTILES16(f32b, convd_sto_b)

bool tb_cpu_convd_fwd_f32h_avx512(const float *xp, const float *wp,
                                  const float *bias, uint16_t *out,
                                  const tb_cpu_convd_geom *g, bool bf16)
{
    enum { V = 16 };
    const int64_t P = g->OH * g->OW, R = g->C * g->KH * g->KW;
    if (!tb_cpu_convd_fwd_h_fits(g))
        return false;
    const int64_t nq = (P + V - 1) / V, gap = g->Wp - g->OW;
    int64_t oa[TB_CPU_CONVD_FLAT_MAXV], lq = 0;
    __mmask16 om0[TB_CPU_CONVD_FLAT_MAXV], om1[TB_CPU_CONVD_FLAT_MAXV];
    int ln = 0;
    for (int64_t q = 0; q < nq; q++) {
        uint32_t u0, u1;
        tb_cpu_convd_opiece(q * V, V, g, &oa[q], &u0, &u1);
        om0[q] = (__mmask16)u0, om1[q] = (__mmask16)u1;
    }
    for (int64_t q = 0; q < nq; q += ln)
        lq = q, ln = convd_nchunk(nq - q);
    int64_t off[TB_CPU_CONVD_FWD_MAX_R];
    for (int64_t c = 0, r = 0; c < g->C; c++)
        for (int64_t kh = 0; kh < g->KH; kh++)
            for (int64_t kw = 0; kw < g->KW; kw++, r++)
                off[r] = (c * g->Hp + kh * g->dil) * g->Wp + kw * g->dil;
    const __mmask16 omt = P % V ? convd_mask_f32(P % V) : (__mmask16)0;
    uint16_t ob[TB_CPU_CONVD_OB * 3 * V];
    for (int64_t o0 = 0; o0 < g->O; o0 += TB_CPU_CONVD_OB) {
        const int nrows = g->O - o0 < TB_CPU_CONVD_OB ? (int)(g->O - o0)
                                                      : TB_CPU_CONVD_OB;
        const float *w = wp + (o0 / TB_CPU_CONVD_OB) * R * TB_CPU_CONVD_OB;
        float b8[TB_CPU_CONVD_OB];
        for (int i = 0; i < TB_CPU_CONVD_OB; i++)
            b8[i] = bias && i < nrows ? bias[o0 + i] : 0.0f;
        const float *b = bias ? b8 : 0;
        /* as the f32 driver's output-flat tiles: the last chunk first,
         * the last block's through ob */
        const bool lastb = o0 + nrows == g->O && omt;
        for (int64_t k = 0, q = lq; q < nq; k++) {
            const int nv = k == 0 ? ln : convd_nchunk(lq - q);
            const bool sc = k == 0 && lastb;
            uint16_t *o = sc ? ob : out + o0 * P + q * V;
            const int64_t Po = sc ? 3 * V : P;
            if (nv == 1)
                (bf16 ? convd_otile_f32b_1 : convd_otile_f32h_1)(
                    xp, off, R, w, b, o, Po, nrows, oa + q, om0 + q, om1 + q,
                    gap);
            else if (nv == 2)
                (bf16 ? convd_otile_f32b_2 : convd_otile_f32h_2)(
                    xp, off, R, w, b, o, Po, nrows, oa + q, om0 + q, om1 + q,
                    gap);
            else
                (bf16 ? convd_otile_f32b_3 : convd_otile_f32h_3)(
                    xp, off, R, w, b, o, Po, nrows, oa + q, om0 + q, om1 + q,
                    gap);
            for (int i = 0; sc && i < nrows; i++)
                for (int v = 0; v < nv; v++)
                    _mm256_mask_storeu_epi16(
                        out + (o0 + i) * P + (q + v) * V,
                        v == nv - 1 ? omt : (__mmask16)0xffff,
                        _mm256_loadu_si256(
                            (const __m256i *)(ob + i * 3 * V + v * V)));
            q = k == 0 ? 0 : q + nv;
            if (q >= lq)
                break;
        }
    }
    return true;
}

void tb_cpu_convd_widen_f16(const uint16_t *src, int64_t ss, float *dst,
                            int64_t ds, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; r++, src += ss, dst += ds) {
        int64_t i = 0;
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_ps(dst + i,
                             _mm512_cvtph_ps(_mm256_loadu_si256(
                                 (const __m256i *)(src + i))));
        if (i < n) {
            const __mmask16 m = convd_mask_f32(n - i);
            _mm512_mask_storeu_ps(
                dst + i, m,
                _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, src + i)));
        }
    }
}

void tb_cpu_convd_widen_bf16(const uint16_t *src, int64_t ss, float *dst,
                             int64_t ds, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; r++, src += ss, dst += ds)
        for (int64_t i = 0; i < n; i += 16) {
            const __mmask16 m =
                n - i >= 16 ? (__mmask16)0xffff : convd_mask_f32(n - i);
            _mm512_mask_storeu_ps(
                dst + i, m,
                _mm512_castsi512_ps(_mm512_slli_epi32(
                    _mm512_cvtepu16_epi32(
                        _mm256_maskz_loadu_epi16(m, src + i)),
                    16)));
        }
}

/* db [o] = the rows g [q, o] summed over the images q < n (each by
 * convd_rowsum), the rows in double */
#define CONVD_DB(SFX, T)                                                   \
    void tb_cpu_convd_db_##SFX##_avx512(const T *g, int64_t n, int64_t O,  \
                                        int64_t P, T *db)                  \
    {                                                                      \
        for (int64_t o = 0; o < O; o++) {                                  \
            double s = 0;                                                  \
            for (int64_t q = 0; q < n; q++)                                \
                s += convd_rowsum_##SFX(g + (q * O + o) * P, P);           \
            db[o] = (T)s;                                                  \
        }                                                                  \
    }
CONVD_DB(f32, float)
CONVD_DB(f64, double)

/* dcol [R, P] = wt [R, O] @ g [O, P]: tiles of up to CONVD_DC_RB rows x
 * up to 3 vectors of P (27 accumulators), per o 3 loads of g's row and
 * one broadcast a row; R split in near-equal blocks (9 taps: one block,
 * where the forward's 8-channel tiles left a one-row tail). */
#define CONVD_DC_RB 9
#define CONVD_DCOL(SFX, T, VT, V, MT, SET1, ZERO, FMA, LOADZ, STOREM)      \
    static inline __attribute__((always_inline)) void convd_dc_##SFX(      \
        int RB, int NV, const T *restrict wt, const T *restrict g,         \
        T *restrict o, int64_t O, int64_t P, const MT *m)                  \
    {                                                                      \
        VT acc[CONVD_DC_RB][3];                                            \
        _Pragma("GCC unroll 9") for (int r = 0; r < RB; r++)               \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)           \
                acc[r][v] = ZERO();                                        \
        for (int64_t q = 0; q < O; q++) {                                  \
            VT gv[3];                                                      \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)           \
                gv[v] = LOADZ(m[v], g + q * P + v * V);                    \
            _Pragma("GCC unroll 9") for (int r = 0; r < RB; r++) {         \
                const VT s = SET1(wt[r * O + q]);                          \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)       \
                    acc[r][v] = FMA(s, gv[v], acc[r][v]);                  \
            }                                                              \
        }                                                                  \
        _Pragma("GCC unroll 9") for (int r = 0; r < RB; r++)               \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)           \
                STOREM(o + r * P + v * V, m[v], acc[r][v]);                \
    }                                                                      \
    void tb_cpu_convd_dcol_##SFX##_avx512(const T *g, const T *wt, T *dcol, \
                                          int64_t R, int64_t O, int64_t P) \
    {                                                                      \
        const int64_t nb = (R + CONVD_DC_RB - 1) / CONVD_DC_RB;            \
        for (int64_t b = 0, r0 = 0; b < nb; b++) {                         \
            const int rb = (int)((R - r0 + (nb - b) - 1) / (nb - b));      \
            for (int64_t p = 0; p < P; p += 3 * V) {                       \
                MT m[3];                                                   \
                for (int v = 0; v < 3; v++)                                \
                    m[v] = convd_mask_##SFX(P - p - v * V);                \
                const int nv =                                             \
                    P - p >= 3 * V ? 3 : (int)((P - p + V - 1) / V);       \
                const T *w = wt + r0 * O, *gp = g + p;                     \
                T *o = dcol + r0 * P + p;                                  \
                switch (rb * 4 + nv) {                                     \
                CONVD_DC_CASES(SFX)                                        \
                default: break;                                            \
                }                                                          \
            }                                                              \
            r0 += rb;                                                      \
        }                                                                  \
    }
#define CONVD_DC_CASE(SFX, RB, NV)                                         \
    case RB * 4 + NV:                                                      \
        convd_dc_##SFX(RB, NV, w, gp, o, O, P, m);                         \
        break;
#define CONVD_DC_CASES3(SFX, RB)                                           \
    CONVD_DC_CASE(SFX, RB, 1) CONVD_DC_CASE(SFX, RB, 2)                    \
    CONVD_DC_CASE(SFX, RB, 3)
#define CONVD_DC_CASES(SFX)                                                \
    CONVD_DC_CASES3(SFX, 1) CONVD_DC_CASES3(SFX, 2)                        \
    CONVD_DC_CASES3(SFX, 3) CONVD_DC_CASES3(SFX, 4)                        \
    CONVD_DC_CASES3(SFX, 5) CONVD_DC_CASES3(SFX, 6)                        \
    CONVD_DC_CASES3(SFX, 7) CONVD_DC_CASES3(SFX, 8)                        \
    CONVD_DC_CASES3(SFX, 9)
CONVD_DCOL(f32, float, __m512, 16, __mmask16, _mm512_set1_ps,
           _mm512_setzero_ps, _mm512_fmadd_ps, _mm512_maskz_loadu_ps,
           _mm512_mask_storeu_ps)
CONVD_DCOL(f64, double, __m512d, 8, __mmask8, _mm512_set1_pd,
           _mm512_setzero_pd, _mm512_fmadd_pd, _mm512_maskz_loadu_pd,
           _mm512_mask_storeu_pd)

/* lanes [lo, hi) of a mask of V lanes (clamped to [0, V]) */
#define CONVD_COL2IM(SFX, T, VT, V, MT, ZERO, ADD, LOADZ, STOREM)          \
    static MT convd_span_##SFX(int64_t lo, int64_t hi)                     \
    {                                                                      \
        lo = lo < 0 ? 0 : lo, hi = hi > V ? V : hi;                        \
        if (hi <= lo)                                                      \
            return (MT)0;                                                  \
        return (MT)((((uint32_t)1 << hi) - 1) & ~(((uint32_t)1 << lo) - 1)); \
    }                                                                      \
    void tb_cpu_convd_col2im_##SFX##_avx512(                               \
        const T *dcol, T *dx, int64_t C, int64_t H, int64_t W, int64_t KH, \
        int64_t KW, int64_t OH, int64_t OW, int64_t pad, int64_t dil)      \
    {                                                                      \
        const int64_t P = OH * OW;                                         \
        MT mk[TB_CPU_CONVD_MAX_R];                                         \
        for (int64_t c = 0; c < C; c++)                                    \
            for (int64_t iw = 0; iw < W; iw += V) {                        \
                const MT mw = convd_mask_##SFX(W - iw);                    \
                for (int64_t kw = 0; kw < KW; kw++) {                      \
                    const int64_t off = iw + pad - kw * dil;               \
                    mk[kw] = convd_span_##SFX(-off, OW - off) & mw;        \
                }                                                          \
                for (int64_t ih = 0; ih < H; ih++) {                       \
                    VT acc = ZERO();                                       \
                    for (int64_t kh = 0; kh < KH; kh++) {                  \
                        const int64_t oh = ih + pad - kh * dil;            \
                        if (oh < 0 || oh >= OH)                            \
                            continue;                                      \
                        const T *row = dcol + (c * KH + kh) * KW * P +     \
                                       oh * OW + iw + pad;                 \
                        for (int64_t kw = 0; kw < KW; kw++)                \
                            acc = ADD(acc, LOADZ(mk[kw],                   \
                                                 row + kw * (P - dil)));   \
                    }                                                      \
                    STOREM(dx + (c * H + ih) * W + iw, mw, acc);           \
                }                                                          \
            }                                                              \
    }
CONVD_COL2IM(f32, float, __m512, 16, __mmask16, _mm512_setzero_ps,
             _mm512_add_ps, _mm512_maskz_loadu_ps, _mm512_mask_storeu_ps)
CONVD_COL2IM(f64, double, __m512d, 8, __mmask8, _mm512_setzero_pd,
             _mm512_add_pd, _mm512_maskz_loadu_pd, _mm512_mask_storeu_pd)

void tb_cpu_convd_copy_rows(const void *src, int64_t ss, void *dst,
                            int64_t ds, int64_t rows, int64_t n)
{
    const char *s = src;
    char *d = dst;
    for (int64_t r = 0; r < rows; r++, s += ss, d += ds) {
        /* whole vectors unmasked (a masked store cost more), the tail
         * masked */
        int64_t b = 0;
        for (; b + 64 <= n; b += 64)
            _mm512_storeu_si512(d + b, _mm512_loadu_si512(s + b));
        if (b + 32 <= n) {
            _mm256_storeu_si256((__m256i *)(d + b),
                                _mm256_loadu_si256((const __m256i *)(s + b)));
            b += 32;
        }
        if (b < n) {
            const __mmask32 m = ((__mmask32)1 << (n - b)) - 1;
            _mm256_mask_storeu_epi8(d + b, m,
                                    _mm256_maskz_loadu_epi8(m, s + b));
        }
    }
}
