/* tp_sets: the memory patterns of a 1024 x 1024 f32 transpose (4 KiB
 * pitches on both sides) apart from its shuffles, measured (the
 * limit-reasons entry "transpose-l1-sets" in
 * docs/perf-data/limit-reasons.json cites these figures).
 *
 *   cc -O3 -mavx512f -mavx512bw -mavx512dq -mavx512vl \
 *      -o /tmp/tp_sets scripts/tp_sets.c
 *   /tmp/tp_sets [rounds]
 *
 * At a 4 KiB pitch every line of one column of lines lies in one L1
 * set (64 sets of 64 bytes), so a 16 x 16 f32 tile's 16 loads hit one
 * set and its 16 stores another.  Each loop below moves the 4 MiB of a
 * plane (X to Y, both 2 MiB pages, in L3 after the first pass):
 *   - copy: the bound's own pattern (row order, whole lines);
 *   - ld/st row: row order, loads only / stores only;
 *   - ld column: one column of lines down all rows, then the next
 *     (the strips' loads), and ld k=4: four lines a row down the rows;
 *   - st R8 / R16: 8 (16) output rows at once, a line each, across;
 *   - tiles ORDER loads/stores/both: the loads and stores of every 16 x
 *     16 tile (16 lines from one set, 16 lines to one set) with no
 *     shuffles (both: the loaded rows stored as they are), for the tile
 *     orders strips (down 16-column strips), rows (along 16-row strips)
 *     and diagonal (transpose_simd.h's);
 *   - tiles diagonal, transposed: the real 16 x 16 register transpose;
 *   - 16-bit: a 1024 x 1024 plane of 2-byte values (2 KiB pitches) in 32
 *     x 32 tiles (32 lines from two sets, 32 to two), the same orders;
 *   - permute [128,128,64] reversed as permute_c.c hands it over (planes
 *     of 128 x 64, input rows 128 x 64 values apart, output rows 128 x
 *     128): f32 16 x 16, 16-bit 32 x 32 and f64 8 x 8 tiles, each
 *     position in every plane in turn (the copies of the same bytes
 *     are their references);
 *   - f64: a 1024 x 1024 plane of 8-byte values (8 MiB, 8 KiB pitches)
 *     in 8 x 8 tiles (8 lines from one set, 8 to one), the same orders.
 * Not a test (tests/meson.build only builds it, so that it keeps
 * compiling; it needs AVX-512 to run).  Each figure is the
 * smallest over ROUNDS rounds (default 40) of one pass, the variants
 * interleaved round by round. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define N 1024
typedef __m512i vi;

static uint32_t *X, *Y;
static vi acc;
static char *X2, *Y2; /* the f64 plane's */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint32_t *huge_buf(size_t n)
{
    void *p = aligned_alloc(1 << 21, n);
    if (!p)
        exit(1);
    madvise(p, n, MADV_HUGEPAGE);
    memset(p, 1, n);
    return p;
}

static vi ld(int64_t i, int64_t j)
{
    return _mm512_loadu_si512((const void *)(X + i * N + j));
}
static void st(int64_t i, int64_t j, vi v)
{
    _mm512_storeu_si512((void *)(Y + i * N + j), v);
}

static void copy(void)
{
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j += 16)
            st(i, j, ld(i, j));
}
static void ld_row(void)
{
    vi a = acc;
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j += 16)
            a = _mm512_xor_si512(a, ld(i, j));
    acc = a;
}
static void st_row(void)
{
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j += 16)
            st(i, j, acc);
}
static void ld_col(int k)
{
    vi a = acc;
    for (int64_t j = 0; j < N; j += 16 * k)
        for (int64_t i = 0; i < N; i++)
            for (int c = 0; c < k; c++)
                a = _mm512_xor_si512(a, ld(i, j + 16 * c));
    acc = a;
}
static void st_rows(int r)
{
    for (int64_t i0 = 0; i0 < N; i0 += r)
        for (int64_t j = 0; j < N; j += 16)
            for (int64_t i = i0; i < i0 + r; i++)
                st(i, j, acc);
}

/* one tile's memory: mode 1 loads, 2 stores, 3 both */
static void tile_mem(int mode, int64_t i, int64_t j)
{
    vi r[16];
    for (int k = 0; k < 16; k++)
        r[k] = mode & 1 ? ld(i + k, j) : acc;
    if (mode & 2)
        for (int k = 0; k < 16; k++)
            st(j + k, i, r[k]);
    else
        for (int k = 0; k < 16; k++)
            acc = _mm512_xor_si512(acc, r[k]);
}

/* the real 16 x 16 register transpose of tile (i, j) */
static void tile_tp(int64_t i, int64_t j)
{
    vi r[16], t[16];
    for (int k = 0; k < 16; k++)
        r[k] = ld(i + k, j);
    for (int k = 0; k < 8; k++) {
        t[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
    }
    for (int g = 0; g < 4; g++) {
        r[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        r[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        r[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        r[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    for (int k = 0; k < 4; k++) {
        vi v0 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0x88);
        vi v1 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0xdd);
        vi w0 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0x88);
        vi w1 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0xdd);
        st(j + k, i, _mm512_shuffle_i32x4(v0, w0, 0x88));
        st(j + k + 8, i, _mm512_shuffle_i32x4(v0, w0, 0xdd));
        st(j + k + 4, i, _mm512_shuffle_i32x4(v1, w1, 0x88));
        st(j + k + 12, i, _mm512_shuffle_i32x4(v1, w1, 0xdd));
    }
}

/* tiles in order o (0 strips, 1 rows, 2 diagonal); mode 0: tile_tp */
static void tiles(int o, int mode)
{
    for (int64_t x = 0; x < N / 16; x++)
        for (int64_t y = 0; y < N / 16; y++) {
            int64_t a = o == 0 ? y : o == 1 ? x : y; /* tile row */
            int64_t c = o == 0 ? x : o == 1 ? y : (y + x) % (N / 16);
            if (mode)
                tile_mem(mode, 16 * a, 16 * c);
            else
                tile_tp(16 * a, 16 * c);
        }
}

/* 16-bit: the same plane of 1024 x 1024 2-byte values (2 MiB, pitch 2
 * KiB) in 32 x 32 tiles (a line a row on both sides: 32 lines from two
 * sets, 32 to two sets), bytes b of X and Y */
#define B16(p, i, j) ((char *)(p) + (i) * 2048 + (j) * 2)
static void copy16(void)
{
    for (int64_t i = 0; i < N * N * 2; i += 64)
        _mm512_storeu_si512((void *)((char *)Y + i),
                            _mm512_loadu_si512((const void *)((char *)X + i)));
}
/* The tiles of T x T values at the B addressing of X into Y, in order o
 * (0 strips, else diagonals), mode 1 loads, 2 stores, 3 both */
#define TILES_FN(NAME, T, B, X, Y)                                        \
    static void NAME(int o, int mode)                                     \
    {                                                                     \
        for (int64_t x = 0; x < N / (T); x++)                             \
            for (int64_t y = 0; y < N / (T); y++) {                       \
                int64_t a = y, c = o == 0 ? x : (y + x) % (N / (T));      \
                vi r[T];                                                  \
                for (int k = 0; k < (T); k++)                             \
                    r[k] = mode & 1 ? _mm512_loadu_si512((const void *)B( \
                                          X, (T) * a + k, (T) * c))       \
                                    : acc;                                \
                if (mode & 2)                                             \
                    for (int k = 0; k < (T); k++)                         \
                        _mm512_storeu_si512(                              \
                            (void *)B(Y, (T) * c + k, (T) * a), r[k]);    \
                else                                                      \
                    for (int k = 0; k < (T); k++)                         \
                        acc = _mm512_xor_si512(acc, r[k]);                \
            }                                                             \
    }
TILES_FN(tiles16, 32, B16, X, Y)

/* f64: a 1024 x 1024 plane of 8-byte values (8 MiB, pitch 8 KiB) in 8 x
 * 8 tiles (8 lines from one set, 8 to one set); X2, Y2 hold it */
#define B64(p, i, j) ((p) + (i) * 8192 + (j) * 8)
static void copy64(void)
{
    for (int64_t i = 0; i < N * N * 8; i += 64)
        _mm512_storeu_si512((void *)(Y2 + i),
                            _mm512_loadu_si512((const void *)(X2 + i)));
}
TILES_FN(tiles64, 8, B64, X2, Y2)

/* b[0] the copy's best time (of `rounds`, each the second of two
 * calls), b[1..6] the tiles' in strips (1-3) and on diagonals (4-6),
 * loads, stores, both */
static void plane_set(void (*copyf)(void), void (*tilesf)(int, int),
                      int rounds, double *b)
{
    for (int v = 0; v < 7; v++)
        b[v] = 1e9;
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < 7; v++)
            for (int w = 0; w < 2; w++) {
                double t = now();
                if (v == 0)
                    copyf();
                else
                    tilesf((v - 1) / 3, 1 + (v - 1) % 3);
                t = now() - t;
                if (w && t < b[v])
                    b[v] = t;
            }
}

/* permute [128, 128, 64] reversed, as permute_c.c hands it to the
 * transposer: for each b a 128 x 64 plane (input rows a at 128 x 64
 * values, output rows c at 128 x 128), tiles of es-byte values (es 4:
 * 16 x 16; 2: 32 x 32) visited at each tile position in every plane b
 * in turn; loads and stores of whole lines, no shuffles */
static void permute_mem(int es, int mode)
{
    char *const xs = es == 8 ? X2 : (char *)X;
    char *const ys = es == 8 ? Y2 : (char *)Y;
    const int t = 64 / es;                 /* tile side */
    const int64_t ip = 128 * 64 * es;      /* input row pitch, bytes */
    const int64_t op = 128 * 128 * es;     /* output row pitch */
    for (int i = 0; i < 128; i += t)       /* a */
        for (int j = 0; j < 64; j += t)    /* c */
            for (int b = 0; b < 128; b++) {
                const char *x = xs + i * ip + (b * 64 + j) * es;
                char *o = ys + j * op + (b * 128 + i) * es;
                vi r[32];
                for (int k = 0; k < t; k++)
                    r[k] = mode & 1 ? _mm512_loadu_si512(
                                          (const void *)(x + k * ip))
                                    : acc;
                if (mode & 2)
                    for (int k = 0; k < t; k++)
                        _mm512_storeu_si512((void *)(o + k * op), r[k]);
                else
                    for (int k = 0; k < t; k++)
                        acc = _mm512_xor_si512(acc, r[k]);
            }
}

enum { NV = 16 };
static const char *const names[NV] = {
    "copy", "ld row", "st row", "ld column", "ld k=4", "st R8", "st R16",
    "tiles strips loads", "tiles strips stores", "tiles strips both",
    "tiles rows loads", "tiles rows stores", "tiles rows both",
    "tiles diagonal loads", "tiles diagonal stores",
    "tiles diagonal both"};

static void run(int v)
{
    switch (v) {
    case 0: copy(); break;
    case 1: ld_row(); break;
    case 2: st_row(); break;
    case 3: ld_col(1); break;
    case 4: ld_col(4); break;
    case 5: st_rows(8); break;
    case 6: st_rows(16); break;
    default: tiles((v - 7) / 3, 1 + (v - 7) % 3); break;
    }
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 40;
    X = huge_buf((size_t)N * N * 4);
    Y = huge_buf((size_t)N * N * 4);
    double best[NV + 2];
    for (int v = 0; v < NV + 2; v++)
        best[v] = 1e9;
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < NV + 2; v++) {
            for (int w = 0; w < 2; w++) { /* warm, then time */
                double t = now();
                if (v < NV)
                    run(v);
                else
                    tiles(v == NV ? 0 : 2, 0);
                t = now() - t;
                if (w && t < best[v])
                    best[v] = t;
            }
        }
    for (int v = 0; v < NV + 2; v++)
        printf("%-28s %7.1f us  %.2fx copy\n",
               v < NV ? names[v]
                      : v == NV ? "tiles strips, transposed"
                                : "tiles diagonal, transposed",
               best[v] * 1e6, best[v] / best[0]);
    /* 16-bit: copy, then strips and diagonal x loads, stores, both */
    double b16[7];
    plane_set(copy16, tiles16, rounds, b16);
    static const char *const n16[7] = {
        "16-bit copy", "16-bit strips loads", "16-bit strips stores",
        "16-bit strips both", "16-bit diagonal loads",
        "16-bit diagonal stores", "16-bit diagonal both"};
    for (int v = 0; v < 7; v++)
        printf("%-28s %7.1f us  %.2fx copy\n", n16[v], b16[v] * 1e6,
               b16[v] / b16[0]);
    /* permute's tiles: f32 and 16-bit x loads, stores, both */
    double bp[6];
    for (int v = 0; v < 6; v++)
        bp[v] = 1e9;
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < 6; v++)
            for (int w = 0; w < 2; w++) {
                double t = now();
                permute_mem(v < 3 ? 4 : 2, 1 + v % 3);
                t = now() - t;
                if (w && t < bp[v])
                    bp[v] = t;
            }
    static const char *const np[6] = {
        "permute f32 loads", "permute f32 stores", "permute f32 both",
        "permute 16-bit loads", "permute 16-bit stores",
        "permute 16-bit both"};
    for (int v = 0; v < 6; v++)
        printf("%-28s %7.1f us  %.2fx copy\n", np[v], bp[v] * 1e6,
               bp[v] / (v < 3 ? best[0] : b16[0]));
    /* f64: copy, then strips and diagonal x loads, stores, both */
    X2 = (char *)huge_buf((size_t)N * N * 8);
    Y2 = (char *)huge_buf((size_t)N * N * 8);
    plane_set(copy64, tiles64, rounds, b16);
    for (int v = 0; v < 7; v++)
        printf("f64%-25s %7.1f us  %.2fx copy\n", n16[v] + 6,
               b16[v] * 1e6, b16[v] / b16[0]);
    for (int v = 0; v < 3; v++)
        bp[v] = 1e9;
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < 3; v++)
            for (int w = 0; w < 2; w++) {
                double t = now();
                permute_mem(8, 1 + v);
                t = now() - t;
                if (w && t < bp[v])
                    bp[v] = t;
            }
    for (int v = 0; v < 3; v++)
        printf("permute f64 %-16s %7.1f us  %.2fx copy\n",
               np[v] + 12, bp[v] * 1e6, bp[v] / b16[0]);
    volatile int sink = _mm512_reduce_add_epi32(acc);
    (void)sink;
    return 0;
}
