/* The SIMD plane transposers (transpose.h) of one level, included once
 * by transpose_avx2.c (TP_W 2: ymm) and transpose_avx512.c (TP_W 4:
 * zmm).  The staged planes (tp_get's choice at ymm for 2- and 4-byte
 * values; the other cases take the direct tiles further down): element
 * sizes 2, 4 and 8 bytes share one scheme, over L = 16 / esz elements
 * per 128-bit lane:
 *   - a tile is L * TP_W input rows x L input columns (16 bytes): vector
 *     r[i] (i < L) holds in its 128-bit lane w the 16 bytes of input row
 *     i + L * w (one load per lane: a broadcast and masked broadcasts at
 *     zmm, an insert at ymm), so the cross-lane stage of a register
 *     transpose is done by the loads; an L x L transpose inside each
 *     lane (unpacks: log2 L rounds) leaves in r[k] output row k, L *
 *     TP_W elements (a whole 64-byte line at zmm);
 *   - the tiles of a block of TP_BR = TP_RUN / esz input rows x TP_CB
 *     bytes are read from a contiguous copy of the block (the staging
 *     scratch: each input line read once, whole) and written to a
 *     padded scratch, which is copied out in runs of TP_RUN bytes per
 *     output row.  Reading the tiles straight from a matrix of
 *     power-of-two pitch reads each line in four pieces at four times
 *     while 16-64 rows share one L1 set (the lines are evicted between
 *     the pieces), and writing an output row in tile-wide pieces keeps
 *     16-64 half-written lines in one set; the scratches are where both
 *     patterns meet L1 without conflicts;
 *   - what is left of the plane beyond whole blocks: the tiles straight
 *     from and to memory, then element loops for the last rows and
 *     columns (fewer than a tile's).
 * Loads and stores of integer vectors: the values move as bits (NaN
 * payloads, signaling NaNs survive). */
#ifndef TB_BACKENDS_CPU_TRANSPOSE_SIMD_H
#define TB_BACKENDS_CPU_TRANSPOSE_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#include "transpose.h"

#if TP_W == 4
typedef __m512i tp_v;
#define TP_UNPACKLO(b) _mm512_unpacklo_epi##b
#define TP_UNPACKHI(b) _mm512_unpackhi_epi##b
/* lane w = the 16 bytes at p + w * step */
static inline tp_v tp_gather(const char *p, int64_t step)
{
    tp_v v = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)p));
    v = _mm512_mask_broadcast_i32x4(
        v, 0x00f0, _mm_loadu_si128((const __m128i *)(p + step)));
    v = _mm512_mask_broadcast_i32x4(
        v, 0x0f00, _mm_loadu_si128((const __m128i *)(p + 2 * step)));
    return _mm512_mask_broadcast_i32x4(
        v, 0xf000, _mm_loadu_si128((const __m128i *)(p + 3 * step)));
}
static inline tp_v tp_load(const char *p)
{
    return _mm512_loadu_si512((const void *)p);
}
static inline void tp_store(char *p, tp_v v)
{
    _mm512_storeu_si512((void *)p, v);
}
static inline void tp_stream(char *p, tp_v v)
{
    _mm512_stream_si512((void *)p, v);
}
#elif TP_W == 2
typedef __m256i tp_v;
#define TP_UNPACKLO(b) _mm256_unpacklo_epi##b
#define TP_UNPACKHI(b) _mm256_unpackhi_epi##b
static inline tp_v tp_gather(const char *p, int64_t step)
{
    return _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p)),
        _mm_loadu_si128((const __m128i *)(p + step)), 1);
}
static inline tp_v tp_load(const char *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}
static inline void tp_store(char *p, tp_v v)
{
    _mm256_storeu_si256((__m256i *)p, v);
}
static inline void tp_stream(char *p, tp_v v)
{
    _mm256_stream_si256((__m256i *)p, v);
}
#else
#error "TP_W: 2 (ymm) or 4 (zmm)"
#endif

#define TP_VB (16 * TP_W) /* bytes a vector */
#define TP_RUN 256 /* bytes an output row takes from a block */
/* bytes an input row gives a block (16-bit: 128, so that the two
 * scratches stay within L1) */
#define TP_CB(ESZ) ((ESZ) == 2 ? 128 : 256)
#define TP_OP (TP_RUN + 64) /* the output scratch's row pitch (padded) */


/* the L x L transposes inside each 128-bit lane: r[k] <- column k */
static inline void tp_lanes8(tp_v r[2])
{
    tp_v a = TP_UNPACKLO(64)(r[0], r[1]), b = TP_UNPACKHI(64)(r[0], r[1]);
    r[0] = a;
    r[1] = b;
}
static inline void tp_lanes4(tp_v r[4])
{
    tp_v t0 = TP_UNPACKLO(32)(r[0], r[1]), t1 = TP_UNPACKHI(32)(r[0], r[1]);
    tp_v t2 = TP_UNPACKLO(32)(r[2], r[3]), t3 = TP_UNPACKHI(32)(r[2], r[3]);
    r[0] = TP_UNPACKLO(64)(t0, t2);
    r[1] = TP_UNPACKHI(64)(t0, t2);
    r[2] = TP_UNPACKLO(64)(t1, t3);
    r[3] = TP_UNPACKHI(64)(t1, t3);
}
/* 16-bit: pairs of rows interleaved, then the 32-bit transpose of the
 * pairs (columns 0-3 from the low halves, 4-7 from the high ones) */
static inline void tp_lanes2(tp_v r[8])
{
    tp_v a[4], b[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        a[k] = TP_UNPACKLO(16)(r[2 * k], r[2 * k + 1]);
        b[k] = TP_UNPACKHI(16)(r[2 * k], r[2 * k + 1]);
    }
    tp_lanes4(a);
    tp_lanes4(b);
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        r[k] = a[k];
        r[4 + k] = b[k];
    }
}

/* (the small loops over register arrays are unrolled by pragma, so that
 * the arrays live in registers: GCC -O2 kept them on the stack) */
/* One tile: input rows at s + i * sp (bytes), output rows at o + k * op;
 * L * TP_W rows x L columns of ESZ-byte elements. */
#define TP_TILE(ESZ, L)                                                   \
    static inline void tp_tile##ESZ(const char *s, int64_t sp, char *o,   \
                                    int64_t op)                           \
    {                                                                     \
        tp_v r[L];                                                        \
        _Pragma("GCC unroll 8") for (int i = 0; i < (L); i++)             \
            r[i] = tp_gather(s + i * sp, (L) * sp);                       \
        tp_lanes##ESZ(r);                                                 \
        _Pragma("GCC unroll 8") for (int k = 0; k < (L); k++)             \
            tp_store(o + k * op, r[k]);                                   \
    }
TP_TILE(2, 8)
TP_TILE(4, 4)
TP_TILE(8, 2)

/* whole tiles straight from in to out over [0, ni) x [0, nj) (the
 * parts of the plane beyond whole blocks), then element loops */
#define TP_RECT(ESZ, L, T)                                                \
    static void tp_rect##ESZ(const T *in, int64_t ild, T *out,            \
                             int64_t old, int64_t ni, int64_t nj)         \
    {                                                                     \
        const int64_t tr = (L) * TP_W;                                    \
        const int64_t ti = ni / tr * tr, tj = nj / (L) * (L);             \
        for (int64_t j = 0; j < tj; j += (L))                             \
            for (int64_t i = 0; i < ti; i += tr)                          \
                tp_tile##ESZ((const char *)(in + i * ild + j),            \
                             ild * (ESZ), (char *)(out + j * old + i),    \
                             old * (ESZ));                                \
        for (int64_t j = 0; j < nj; j++)                                  \
            for (int64_t i = j < tj ? ti : 0; i < ni; i++)                \
                out[j * old + i] = in[i * ild + j];                       \
    }
/* The staged plane of ESZ-byte elements of type T. */
#define TP_PLANE(ESZ, L, T)                                               \
    TP_RECT(ESZ, L, T)                                                    \
    static void tp_plane1_##ESZ(const void *pin, int64_t ild, void *pout, \
                                int64_t old, int64_t ni, int64_t nj,      \
                                int nt)                                   \
    {                                                                     \
        enum { CB = TP_CB(ESZ), BR = TP_RUN / (ESZ), BC = CB / (ESZ) };   \
        _Alignas(64) char is[BR * CB];                                    \
        _Alignas(64) char os[BC * TP_OP];                                 \
        const T *in = pin;                                                \
        T *out = pout;                                                    \
        const int64_t bi = ni / BR * BR, bj = nj / BC * BC;               \
        nt = nt && ((uintptr_t)out & 63) == 0 && ((old * (ESZ)) & 63) == 0; \
        for (int64_t j0 = 0; j0 < bj; j0 += BC)                           \
            for (int64_t i0 = 0; i0 < bi; i0 += BR) {                     \
                const T *x = in + i0 * ild + j0;                          \
                for (int i = 0; i < BR; i++)                              \
                    for (int c = 0; c < CB; c += TP_VB)                   \
                        tp_store(is + i * CB + c,                         \
                                 tp_load((const char *)(x + i * ild) + c)); \
                for (int c = 0; c < CB; c += 16)                          \
                    for (int i = 0; i < BR; i += (L) * TP_W)              \
                        tp_tile##ESZ(is + i * CB + c, CB,                 \
                                     os + c / (ESZ) * TP_OP + i * (ESZ),  \
                                     TP_OP);                              \
                char *o = (char *)(out + j0 * old + i0);                  \
                for (int k = 0; k < BC; k++)                              \
                    for (int c = 0; c < TP_RUN; c += TP_VB) {             \
                        tp_v v = tp_load(os + k * TP_OP + c);             \
                        if (nt)                                           \
                            tp_stream(o + k * old * (ESZ) + c, v);        \
                        else                                              \
                            tp_store(o + k * old * (ESZ) + c, v);         \
                    }                                                     \
            }                                                             \
        /* the rest: rows [bi, ni) of the first bj columns, columns */    \
        /* [bj, nj) of all rows */                                        \
        tp_rect##ESZ(in + bi * ild, ild, out + bi, old, ni - bi, bj);     \
        tp_rect##ESZ(in + bj, ild, out + bj * old, old, ni, nj - bj);     \
    }                                                                     \
    /* nb planes (transpose.h), one after the other */                    \
    static void tp_plane##ESZ(const void *pin, int64_t ild, void *pout,   \
                              int64_t old, int64_t ni, int64_t nj,        \
                              int64_t nb, int64_t ibs, int64_t obs,       \
                              int nt)                                     \
    {                                                                     \
        for (int64_t k = 0; k < nb; k++)                                  \
            tp_plane1_##ESZ((const T *)pin + k * ibs, ild,                \
                            (T *)pout + k * obs, old, ni, nj, nt);        \
    }
#if TP_W == 2 /* (tp_get's choice) */
TP_PLANE(2, 8, uint16_t)
TP_PLANE(4, 4, uint32_t)
TP_RECT(8, 2, uint64_t)
#else
TP_RECT(2, 8, uint16_t)
TP_RECT(4, 4, uint32_t)
TP_RECT(8, 2, uint64_t)
#endif

/* 4- and 8-byte elements at zmm: register tiles of whole vectors per
 * row (the staging above measured slower for them in tbench there: 1.2x
 * for f32, 2.4x for f64, where a tile's rows already read and write
 * whole lines), TP_DR x TP_DC elements, out rows at o + k * op; at
 * ymm 8 x 4 64-bit values (below). */
#if TP_W == 4
/* 16 x 16 32-bit values: pairs, 2 x 2 blocks of pairs, then two rounds
 * of 128-bit lane shuffles */
static inline void tp_dtile4(const char *s, int64_t sp, char *o, int64_t op)
{
    tp_v r[16], t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++)
        r[i] = tp_load(s + i * sp);
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) {
        r[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        r[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        r[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        r[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        tp_v v0 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x88);
        tp_v v1 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xdd);
        tp_v w0 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x88);
        tp_v w1 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xdd);
        tp_store(o + j * op, _mm512_shuffle_i32x4(v0, w0, 0x88));
        tp_store(o + (j + 8) * op, _mm512_shuffle_i32x4(v0, w0, 0xdd));
        tp_store(o + (j + 4) * op, _mm512_shuffle_i32x4(v1, w1, 0x88));
        tp_store(o + (j + 12) * op, _mm512_shuffle_i32x4(v1, w1, 0xdd));
    }
}
/* 8 x 8 64-bit values: pairs, then the 4 x 4 transpose of the 128-bit
 * lanes of the even and of the odd columns (two lane-shuffle rounds) */
static inline void tp_dtile8(const char *s, int64_t sp, char *o, int64_t op)
{
    tp_v r[8], t[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        r[i] = tp_load(s + i * sp);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_unpacklo_epi64(r[2 * i], r[2 * i + 1]);
        t[4 + i] = _mm512_unpackhi_epi64(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) { /* h: odd columns */
        tp_v u0 = _mm512_shuffle_i64x2(t[4 * h], t[4 * h + 1], 0x88);
        tp_v u1 = _mm512_shuffle_i64x2(t[4 * h], t[4 * h + 1], 0xdd);
        tp_v w0 = _mm512_shuffle_i64x2(t[4 * h + 2], t[4 * h + 3], 0x88);
        tp_v w1 = _mm512_shuffle_i64x2(t[4 * h + 2], t[4 * h + 3], 0xdd);
        tp_store(o + h * op, _mm512_shuffle_i64x2(u0, w0, 0x88));
        tp_store(o + (h + 4) * op, _mm512_shuffle_i64x2(u0, w0, 0xdd));
        tp_store(o + (h + 2) * op, _mm512_shuffle_i64x2(u1, w1, 0x88));
        tp_store(o + (h + 6) * op, _mm512_shuffle_i64x2(u1, w1, 0xdd));
    }
}
#else
/* 4 x 4 64-bit values: pairs, then a 128-bit permute */
static inline void tp_rtile8(const char *s, int64_t sp, char *o, int64_t op)
{
    __m256d r[4], t[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        r[i] = _mm256_loadu_pd((const double *)(const void *)(s + i * sp));
    t[0] = _mm256_unpacklo_pd(r[0], r[1]);
    t[1] = _mm256_unpackhi_pd(r[0], r[1]);
    t[2] = _mm256_unpacklo_pd(r[2], r[3]);
    t[3] = _mm256_unpackhi_pd(r[2], r[3]);
#pragma GCC unroll 2
    for (int j = 0; j < 2; j++) {
        _mm256_storeu_pd((double *)(void *)(o + j * op),
                         _mm256_permute2f128_pd(t[j], t[2 + j], 0x20));
        _mm256_storeu_pd((double *)(void *)(o + (j + 2) * op),
                         _mm256_permute2f128_pd(t[j], t[2 + j], 0x31));
    }
}
/* 8 x 4: two 4 x 4 tiles down, so that each output row gets a whole
 * 64-byte line from one tile (4 x 4 tiles alone wrote each line in two
 * halves at two times: 1.5x slower) */
static inline void tp_dtile8(const char *s, int64_t sp, char *o, int64_t op)
{
    tp_rtile8(s, sp, o, op);
    tp_rtile8(s + 4 * sp, sp, o + 32, op);
}
#endif /* TP_W */
#if TP_W == 4
/* 16-bit, a half tile: 16 input rows x 32 columns (whole 64-byte lines,
 * one load each) transposed in registers: tp_lanes2 over rows 0-7 and
 * over rows 8-15 leaves in r[k] (r[8 + k]) lane L column k + 8 L of
 * rows 0-7 (8-15); a two-source qword permute of r[k] and r[8 + k]
 * pairs them: z0 holds output rows k and k + 8, z1 rows k + 16 and
 * k + 24, 16 values (32 bytes) each.  fin 0: the 32 half rows go to b
 * (32 bytes a row, L1); fin 1: output row c is b's row c and this half
 * tile's, one whole line (an insert, one store). */
static inline void tp_qtile2(const char *s, int64_t sp, char *o, int64_t op,
                             char *b, int fin)
{
    tp_v r[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++)
        r[i] = tp_load(s + i * sp);
    tp_lanes2(r);
    tp_lanes2(r + 8);
    const __m512i ilo = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    const __m512i ihi = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        const tp_v z0 = _mm512_permutex2var_epi64(r[k], ilo, r[8 + k]);
        const tp_v z1 = _mm512_permutex2var_epi64(r[k], ihi, r[8 + k]);
        const __m256i w[4] = {_mm512_castsi512_si256(z0),
                              _mm512_extracti64x4_epi64(z0, 1),
                              _mm512_castsi512_si256(z1),
                              _mm512_extracti64x4_epi64(z1, 1)};
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            char *bc = b + 32 * (k + 8 * q);
            if (!fin)
                _mm256_store_si256((__m256i *)(void *)bc, w[q]);
            else
                tp_store(o + (k + 8 * q) * op,
                         _mm512_inserti64x4(
                             _mm512_castsi256_si512(_mm256_load_si256(
                                 (const __m256i *)(const void *)bc)),
                             w[q], 1));
        }
    }
}
/* 32 x 32 16-bit values: two half tiles of 16 rows through a 1 KiB L1
 * scratch, so that every input line is read once, whole, and every
 * output line written once, whole (tbench-like loop, permute
 * [128,128,64] 16-bit, 1 thread: 32-row tiles reading each input line
 * in two 32-byte halves, 172 us; 16-row tiles writing each output line
 * in two halves at two times, 163 us; this, 130 us; the staged plane
 * 171 us: 32 input lines at a power-of-two pitch share one L1 set, and
 * 16 in flight cost half as much a line as 32) */
static inline void tp_dtile2(const char *s, int64_t sp, char *o, int64_t op)
{
    _Alignas(64) char b[32 * 32];
    tp_qtile2(s, sp, o, op, b, 0);
    tp_qtile2(s + 16 * sp, sp, o, op, b, 1);
}
#endif
/* a direct tile: TP_DR##ESZ input rows x TP_DC##ESZ input columns */
#define TP_DR2 32
#define TP_DC2 32
#define TP_DR4 16
#define TP_DC4 16
#define TP_DR8 8
#define TP_DC8 (2 * TP_W)

/* The direct planes of ESZ-byte elements.  One plane (nb 1), or planes
 * larger than TP_BATCH_PLANE bytes one after the other: blocks of
 * TP_DCOLS columns (narrow, so that the output lines a strip of tiles
 * half-fills stay cached for the next strip: drv_layout.c's earlier
 * measure), tile rows down the plane, the tiles of a block along its
 * row.  f32 planes of at least TP_NARROW_ROWS rows at an input pitch
 * of a multiple of 4 KiB (a column of lines all in one L1 set) whose
 * input spans at most TP_NARROW_BYTES (an L3) take strips one tile
 * wide (TP_DCOLS4): the input then streams down one column of lines at
 * a constant stride, and each output row gets a whole line per tile
 * (tbench ab, transpose f32, 1 thread: 1024 x 1024 238 -> 219 us,
 * 2048 x 2048 3.10 -> 1.67 ms, 1024 x 4096 2.53 -> 1.72 ms; narrow
 * strips at 1000 x 1000 ran 3% slower, at 512 x 1024 10%, 512 x 2048
 * 7%, 4096 x 4096 (from DRAM) 16%, hence the tests; f64 at 8 or 16
 * columns, and f32 in 64 x 64 blocks staged
 * through L1 so that rows move in 256-byte runs, measured slower or
 * alike).  (Blocks of 256 rows inside: no faster; prefetching the
 * next tile row's input lines 32 rows ahead: 1.0-1.5x slower.)  Several
 * planes of up to TP_BATCH_PLANE bytes (permute's, permute_c.c): each
 * tile position over all the planes in turn, tile rows outer (permute
 * [128,128,64] reversed: the planes 128 x 64 at pitches of 32 and 64
 * KiB, one plane a step apart on both sides, 256 and 512 bytes: 1.25x
 * faster in f32, 1.07x in f64 than plane after plane, 1 thread, min of
 * 20 runs; a 1024 x 1024 f32 plane in that order, tile rows outer,
 * measured 1.06x slower than the strips, hence the limit, which sizes
 * between were not measured to place).  The rest of each plane by
 * tp_rect. */
#define TP_DCOLS 32
#define TP_DCOLS4 16
#define TP_NARROW_ROWS 1024
#define TP_NARROW_BYTES (32 * 1024 * 1024)
#define TP_BATCH_PLANE (256 * 1024)
/* The diagonal order of a plane's tiles (4- and 8-byte values in tiles
 * a line wide, both pitches multiples of 4 KiB, at least TP_DIAG_MIN
 * tiles a side, input rows spanning at most TP_DIAG_BYTES, so that a
 * part of a larger plane (drv_layout.c's threads) is judged by the
 * whole plane's rows): tile (a, c) of the grid (a a tile
 * row, c a tile column) in the order d = 0, 1, ..., a = 0, 1, ... with
 * c = (a + d) mod the columns.  At such pitches every input line of a
 * tile column and every output line of a tile row share one L1 set (64
 * sets of 64 bytes: 4 KiB), so a tile's 16 (8) loads hit one set and
 * its stores another; strips down the plane keep one input set busy for
 * the whole strip (a load-only loop of that pattern: 183-192 us for 4
 * MiB, against 42 us in row order), while consecutive tiles on a
 * diagonal move both sets by one (the loads alone 88 us; the stores
 * stay at 121-130 us in every order that writes a tile's 16 lines
 * together: 16 lines into an 8-way set; 8 rows at a time write in 62
 * us).  1 thread, the old and the new order alternated, 200 calls each,
 * load 8-11, medians: f32 1024 x 1024 226-256 -> 207-216 us (0.84-0.95x),
 * f64 512 x 1024 and 1024 x 512 0.82-0.89x.  Larger inputs lose it
 * (f32 2048 x 2048 2.9x slower, 1024 x 4096 1.5x, f64 1024 x 1024
 * 1.1-1.8x: diagonals touch the whole footprint at once, a 16 MiB one
 * in a shared 32 MiB L3; 2 threads on halves of an f64 1024 x 1024
 * plane, 2 x 4 MiB of input, 1.95x), as does 16-bit (32 x 32 tiles at a
 * 2 KiB pitch: 99 -> 101-103 us); tiles of half a line (f64 at ymm)
 * would read each input line twice, a diagonal apart. */
#define TP_DIAG_MIN 8
#define TP_DIAG_BYTES (4 << 20)
#define TP_DIAG_OK(ni, ild, old, ESZ, DC, ta, tc)                         \
    ((ESZ) >= 4 && (DC) * (ESZ) == 64 && (ild) * (ESZ) % 4096 == 0 &&    \
     (old) * (ESZ) % 4096 == 0 && (ta) >= TP_DIAG_MIN &&                 \
     (tc) >= TP_DIAG_MIN && (ni) * (ild) * (ESZ) <= TP_DIAG_BYTES)
#define TP_DPLANE(ESZ, T, DR, DC, DCOLS)                                  \
    static void tp_dplane##ESZ(const void *pin, int64_t ild, void *pout,  \
                               int64_t old, int64_t ni, int64_t nj,       \
                               int64_t nb, int64_t ibs, int64_t obs,      \
                               int nt)                                    \
    {                                                                     \
        const T *in = pin;                                                \
        T *out = pout;                                                    \
        (void)nt;                                                         \
        const int64_t bi = ni / (DR) * (DR), bj = nj / (DC) * (DC);       \
        const int64_t sw = (ild * (ESZ)) % 4096 || ni < TP_NARROW_ROWS || \
                                   ni * ild * (ESZ) > TP_NARROW_BYTES     \
                               ? TP_DCOLS                                 \
                               : (DCOLS);                                 \
        if (TP_DIAG_OK(ni, ild, old, ESZ, DC, bi / (DR), bj / (DC)) &&   \
            (nb == 1 || ni * nj * (ESZ) > TP_BATCH_PLANE))                \
            for (int64_t k = 0; k < nb; k++)                              \
                for (int64_t d = 0; d < bj / (DC); d++)                   \
                    for (int64_t a = 0, c = d; a < bi / (DR); a++) {      \
                        tp_dtile##ESZ(                                    \
                            (const char *)(in + k * ibs + a * (DR) * ild  \
                                           + c * (DC)),                   \
                            ild * (ESZ),                                  \
                            (char *)(out + k * obs + c * (DC) * old       \
                                     + a * (DR)),                         \
                            old * (ESZ));                                 \
                        c = c + 1 == bj / (DC) ? 0 : c + 1;               \
                    }                                                     \
        else if (nb == 1 || ni * nj * (ESZ) > TP_BATCH_PLANE)             \
            for (int64_t k = 0; k < nb; k++)                              \
                for (int64_t j0 = 0; j0 < bj; j0 += sw) {                 \
                    const int64_t j1 = j0 + sw < bj ? j0 + sw : bj;       \
                    for (int64_t i = 0; i < bi; i += (DR))                \
                        for (int64_t j = j0; j < j1; j += (DC))           \
                            tp_dtile##ESZ(                                \
                                (const char *)(in + k * ibs + i * ild + j), \
                                ild * (ESZ),                              \
                                (char *)(out + k * obs + j * old + i),    \
                                old * (ESZ));                             \
                }                                                         \
        else                                                              \
            for (int64_t i = 0; i < bi; i += (DR))                        \
                for (int64_t j = 0; j < bj; j += (DC))                    \
                    for (int64_t k = 0; k < nb; k++)                      \
                        tp_dtile##ESZ(                                    \
                            (const char *)(in + k * ibs + i * ild + j),   \
                            ild * (ESZ),                                  \
                            (char *)(out + k * obs + j * old + i),        \
                            old * (ESZ));                                 \
        for (int64_t k = 0; k < nb; k++) {                                \
            const T *x = in + k * ibs;                                    \
            T *o = out + k * obs;                                         \
            tp_rect##ESZ(x + bi * ild, ild, o + bi, old, ni - bi, bj);    \
            tp_rect##ESZ(x + bj, ild, o + bj * old, old, ni, nj - bj);    \
        }                                                                 \
    }
#if TP_W == 4
TP_DPLANE(2, uint16_t, TP_DR2, TP_DC2, TP_DCOLS)
TP_DPLANE(4, uint32_t, TP_DR4, TP_DC4, TP_DCOLS4)
#endif
TP_DPLANE(8, uint64_t, TP_DR8, TP_DC8, TP_DCOLS)

/* The level's choice, by measure (1024 x 1024, 1 thread, ratios in one
 * run): for 16-bit values the staged plane at ymm and the direct 32 x 32
 * tiles at zmm (tbench ab against the staged plane, 1 thread: permute
 * [128,128,64] 179 -> 143 us, transpose 1024 x 1024 124 -> 107 us, bf16
 * and f16 alike); for 32-bit ones the
 * staged plane at ymm (1.6x faster than 16 x 8 direct tiles of two 8 x 8
 * register transposes, and as fast as those tiles staged through a
 * padded output scratch) and the direct tiles at zmm (1.1x faster than
 * staged); for 64-bit ones the direct tiles (zmm: 1.5x faster than
 * staged; ymm, 8 x 4: 2.3x faster than the staged plane, whose 4-row
 * tiles of 16-byte pieces cost twice the loads and shuffles). */
static inline tb_cpu_tp_fn tp_get(size_t esz)
{
#if TP_W == 4
    return esz == 2 ? tp_dplane2 : esz == 4 ? tp_dplane4
                              : esz == 8 ? tp_dplane8
                                         : NULL;
#else
    return esz == 2 ? tp_plane2 : esz == 4 ? tp_plane4
                              : esz == 8 ? tp_dplane8
                                         : NULL;
#endif
}

#endif /* TB_BACKENDS_CPU_TRANSPOSE_SIMD_H */
