/* Direct stride-1 convolution loops of the AVX-512 level
 * (conv_direct_avx512.c), f32 and f64, and bf16's forward of the
 * avx512bf16 level (conv_direct_avx512bf16.c), for the small
 * convolutions whose im2col + GEMM is all fixed cost (issue 34: one
 * input channel, R = C*KH*KW of 9..36): drv_conv.c's conv2d / conv2d_nobias and
 * backward.c's conv2d_backward call them at the avx512 levels when
 * tb_cpu_convd_fits says so (the f32/f64 forward:
 * tb_cpu_convd_fwd_fits, up to R = 256 with few output channels), else
 * im2col and the GEMM.
 *
 * The image is read already padded: xp [C, Hp, Wp] with Hp = OH +
 * dil*(KH-1), Wp = OW + dil*(KW-1) (the caller copies it into a zeroed
 * buffer when padding > 0), so the loops have no border cases but the
 * last vector of a row (masked loads and stores). */
#ifndef TB_BACKENDS_CPU_CONV_DIRECT_H
#define TB_BACKENDS_CPU_CONV_DIRECT_H

#include <stdbool.h>
#include <stdint.h>

/* Output channels per block of the packed weights (zero rows past O). */
#define TB_CPU_CONVD_OB 8
/* The direct loops take R = C*KH*KW at most this (above it im2col +
 * GEMM's packed depth loop wins: the direct loop reloads the image once
 * per block of 8 output channels). */
#define TB_CPU_CONVD_MAX_R 64

typedef struct tb_cpu_convd_geom {
    int64_t C, Hp, Wp, O, KH, KW, OH, OW, dil;
} tb_cpu_convd_geom;

/* Whether the direct loops should take a stride-1 convolution of R =
 * C*KH*KW and output rows of OW elements (vectors of v lanes): few
 * taps, and rows that fill at least half a vector. */
static inline bool tb_cpu_convd_fits(int64_t R, int64_t OW, int v)
{
    return R <= TB_CPU_CONVD_MAX_R && 2 * OW >= v;
}
/* The f32/f64 forward loops (drv_conv.c) also take R up to
 * TB_CPU_CONVD_FWD_MAX_R when there are at most TB_CPU_CONVD_FWD_MAX_O
 * output channels (the image reloaded at most 4 times): against im2col
 * + GEMM (tbench ab, 6 blocks, load 7) conv2d 1x16x13x13 -> 32 (R 144)
 * f32 -18%, f64 -3.6%, 8x8x16x16 -> 16 (R 72) -47% / -27%, 1x28x13x13
 * -> 32 (R 252) -18% / -3.7%, 4x16x32x32 -> 32 -23% / -20%; with 64
 * output channels at R 288 +4% / +7%, at R 576 +6% / +20%. */
#define TB_CPU_CONVD_FWD_MAX_R 256
#define TB_CPU_CONVD_FWD_MAX_O 32
static inline bool tb_cpu_convd_fwd_fits(int64_t R, int64_t O, int64_t OW,
                                         int v)
{
    return 2 * OW >= v &&
           (R <= TB_CPU_CONVD_MAX_R ||
            (R <= TB_CPU_CONVD_FWD_MAX_R && O <= TB_CPU_CONVD_FWD_MAX_O));
}

/* The forward's flat tiles: the 8-channel tiles' vectors run over the
 * output positions p = oh*Wp + ow of the padded image's width (Wp - OW
 * of them a row computed, not stored), so that rows of OW that are not
 * a multiple of the vector leave few lanes idle (rows of 11 in 13, f32:
 * 9 vectors an image against 11 along the rows).  A vector's stores are
 * its pieces, one a row it reaches: piece s the lanes of mask m[s]
 * stored at the channel's output + d[s]; piece 0 whole (unmasked) when
 * u (the lanes past its row land on outputs stored after it, inside
 * the channel). */
#define TB_CPU_CONVD_FLAT_MAXV 256
typedef struct tb_cpu_convd_seg {
    int n;
    bool u;
    int64_t d[3];  /* past n: d[0] */
    uint32_t m[3]; /* past n: 0 */
} tb_cpu_convd_seg;

/* The pieces of the flat vector at p (V lanes: p + k = oh*Wp + ow,
 * stored when ow < OW at out index oh*OW + ow = p + k - oh*(Wp - OW)).
 * Wp >= OW >= V/2 (tb_cpu_convd_fits), so a vector reaches at most 3
 * rows.  *row: a row at or before p's (0 for the first vector), updated
 * (the callers step p up: no division a vector). */
static inline void tb_cpu_convd_segs(int64_t p, int V,
                                     const tb_cpu_convd_geom *g,
                                     int64_t *row, tb_cpu_convd_seg *s)
{
    const int64_t gap = g->Wp - g->OW;
    while ((*row + 1) * g->Wp <= p)
        ++*row;
    s->n = 0;
    s->m[0] = s->m[1] = s->m[2] = 0;
    s->d[0] = s->d[1] = s->d[2] = p - *row * gap;
    for (int64_t r = *row; r < g->OH && r * g->Wp < p + V; r++) {
        int64_t lo = r * g->Wp - p, hi = lo + g->OW;
        lo = lo < 0 ? 0 : lo;
        hi = hi > V ? V : hi;
        if (lo < hi && s->n < 3) {
            s->d[s->n] = p - r * gap;
            s->m[s->n] = (((uint32_t)1 << hi) - 1) & ~(((uint32_t)1 << lo) - 1);
            s->n++;
        }
    }
    s->u = (s->m[0] & 1u) && s->d[0] + V <= g->OH * g->OW;
}

/* Whether the 8-channel tiles run flat (nflat vectors against nrow
 * along the rows, R taps): a vector costs R multiply-adds a channel
 * plus its stores and pieces, about 6 more in the flat tiles (tbench,
 * 1 thread, load 14: 8x1x28x28 -> 16x3x3, R 9, 46 flat vectors against
 * 52 ran 28% slower flat, f32; cnn_infer_step 1x1x28x28's second conv,
 * R 144, 9 against 11, made the step 11% faster). */
static inline bool tb_cpu_convd_flat_pays(int64_t nflat, int64_t nrow,
                                          int64_t R)
{
    return nflat <= TB_CPU_CONVD_FLAT_MAXV && nflat * (R + 6) < nrow * R;
}

/* Output-flat tiles (issue 34): vectors of V consecutive output
 * positions p (across the rows' ends: the 8-channel tiles' stores whole
 * vectors, no lane idle but past P) where the rows are at least a
 * vector (OW >= V: a vector reaches 2 rows) and that takes fewer
 * vectors than along the rows (26x26, f32: 43 vectors against 52); each
 * vector's image loaded per tap in two masked pieces (its first row's
 * lanes, then the next row's).  8x1x28x28 -> 16x3x3 f32 (tbench ab):
 * see ARCHITECTURE.md. */
static inline bool tb_cpu_convd_oflat(const tb_cpu_convd_geom *g, int V)
{
    const int64_t nq = (g->OH * g->OW + V - 1) / V;
    return g->OW >= V && nq <= TB_CPU_CONVD_FLAT_MAXV &&
           nq < g->OH * ((g->OW + V - 1) / V);
}

/* The pieces of the output-flat vector at p (V lanes, P = OH*OW
 * outputs): *a the padded image's index of its lane 0 (tap 0), *m0 the
 * lanes on p's row, *m1 those on the next row (at *a + Wp - OW), both
 * inside P. */
static inline void tb_cpu_convd_opiece(int64_t p, int V,
                                       const tb_cpu_convd_geom *g,
                                       int64_t *a, uint32_t *m0,
                                       uint32_t *m1)
{
    const int64_t P = g->OH * g->OW, r = p / g->OW;
    const int64_t n0 = g->OW - p % g->OW, n = P - p < V ? P - p : V;
    const uint32_t all = ((uint32_t)1 << n) - 1; /* V <= 16 */
    const uint32_t lo = n0 >= V ? all : (((uint32_t)1 << n0) - 1);
    *a = p + r * (g->Wp - g->OW);
    *m0 = lo & all;
    *m1 = ~lo & all;
}

/* out [O, OH, OW] = bias[o] (0 without bias) + sum over c, kh, kw (in
 * that order, one fused multiply-add each) of wp's weight times xp [c,
 * oh + kh*dil, ow + kw*dil]; wp is [ceil(O/8), R, 8]: wp[(b*R + r)*8 + i]
 * the weight of output channel b*8 + i at tap r = (c*KH + kh)*KW + kw. */
void tb_cpu_convd_fwd_f32_avx512(const float *xp, const float *wp,
                                 const float *bias, float *out,
                                 const tb_cpu_convd_geom *g);
void tb_cpu_convd_fwd_f64_avx512(const double *xp, const double *wp,
                                 const double *bias, double *out,
                                 const tb_cpu_convd_geom *g);

/* f16 (and bf16) conv2d at the avx512 level (drv_conv.c): the f32 forward's
 * output-flat tiles on the image and weights widened to f32, each sum
 * rounded once to f16 as it is stored (vcvtps2ph, to nearest even: the
 * f16 rows' narrowing, so the bits of the f32 row narrowed); false (and
 * nothing written) where those tiles do not take the convolution
 * (tb_cpu_convd_fwd_h_fits: tb_cpu_convd_oflat or rows of whole
 * vectors, R up to
 * TB_CPU_CONVD_FWD_MAX_R, channel blocks of 4 to 8). */
static inline bool tb_cpu_convd_fwd_h_fits(const tb_cpu_convd_geom *g)
{
    const int64_t R = g->C * g->KH * g->KW, ot = g->O % TB_CPU_CONVD_OB;
    /* also rows of whole vectors (OW a multiple of 16: as many
     * output-flat vectors as along the rows, none reaching a second
     * row), which the f32 driver runs along the rows: the 16-bit rows
     * have no other direct loop (conv2d_nobias 8x4x16x16 padding 1:
     * see ARCHITECTURE.md) */
    const int64_t nq = (g->OH * g->OW + 15) / 16;
    /* a block of 3 or fewer channels runs the one-channel tiles */
    return R <= TB_CPU_CONVD_FWD_MAX_R &&
           (tb_cpu_convd_oflat(g, 16) ||
            (g->OW % 16 == 0 && nq <= TB_CPU_CONVD_FLAT_MAXV)) &&
           (ot == 0 || ot > 3);
}
/* bf16 (the avx512 level's bf16 rows: no vcvtneps2bf16 there): the same
 * tiles, each sum rounded once to bf16 by ops/half.h's tb_f32_to_bf16
 * (to nearest even, a NaN quiet), the bits of half.c's widen / f32 row /
 * narrow path */
bool tb_cpu_convd_fwd_f32h_avx512(const float *xp, const float *wp,
                                  const float *bias, uint16_t *out,
                                  const tb_cpu_convd_geom *g, bool bf16);
/* rows rows of n f16 (bf16) from src (rows ss elements apart) widened
 * into dst (ds apart), exactly */
void tb_cpu_convd_widen_f16(const uint16_t *src, int64_t ss, float *dst,
                            int64_t ds, int64_t rows, int64_t n);
void tb_cpu_convd_widen_bf16(const uint16_t *src, int64_t ss, float *dst,
                             int64_t ds, int64_t rows, int64_t n);

/* The weight gradient of output channels [o0, o1) over n images:
 * dw [o, c, kh, kw] = sum over the images, oh, ow of g [n, o, oh, ow] *
 * xp [n, c, oh + kh*dil, ow + kw*dil] (g [n, O, OH, OW] and xp [n, C,
 * Hp, Wp] contiguous), summed in vector lanes in a fixed order (images,
 * rows, columns) that does not depend on [o0, o1) or on the threads. */
void tb_cpu_convd_dw_f32_avx512(const float *g, const float *xp, int64_t n,
                                float *dw, int64_t o0, int64_t o1,
                                const tb_cpu_convd_geom *gm);
void tb_cpu_convd_dw_f64_avx512(const double *g, const double *xp,
                                int64_t n, double *dw, int64_t o0,
                                int64_t o1, const tb_cpu_convd_geom *gm);

/* db [o] = the sum over the images q < n of g [q, o, :] (g [n, O, P]):
 * each row summed in vectors of T, the rows' sums in double. */
void tb_cpu_convd_db_f32_avx512(const float *g, int64_t n, int64_t O,
                                int64_t P, float *db);
void tb_cpu_convd_db_f64_avx512(const double *g, int64_t n, int64_t O,
                                int64_t P, double *db);

/* dcol [R, P] = wt [R, O] @ g [O, P] (all contiguous): each element
 * the sum over o in order of one fused multiply-add a term from 0 (the
 * forward loops' 1x1 sums), in tiles of up to 9 rows. */
void tb_cpu_convd_dcol_f32_avx512(const float *g, const float *wt,
                                  float *dcol, int64_t R, int64_t O,
                                  int64_t P);
void tb_cpu_convd_dcol_f64_avx512(const double *g, const double *wt,
                                  double *dcol, int64_t R, int64_t O,
                                  int64_t P);

/* dx [C, H, W] = col2im of dcol [C*KH*KW, OH*OW] for stride 1: each
 * vector of a dx row the sum of its taps' dcol rows in (kh, kw) order
 * (backward.c's col2im's sums, bit for bit) in a register, stored once;
 * a tap's lanes outside dcol's row masked off. */
void tb_cpu_convd_col2im_f32_avx512(const float *dcol, float *dx,
                                    int64_t C, int64_t H, int64_t W,
                                    int64_t KH, int64_t KW, int64_t OH,
                                    int64_t OW, int64_t pad, int64_t dil);
void tb_cpu_convd_col2im_f64_avx512(const double *dcol, double *dx,
                                    int64_t C, int64_t H, int64_t W,
                                    int64_t KH, int64_t KW, int64_t OH,
                                    int64_t OW, int64_t pad, int64_t dil);

/* rows rows of n bytes from src (rows ss bytes apart) to dst (ds
 * apart): the padded image's interior, by vectors, the tail of a row
 * masked (a memcpy call per row was 14% of a bf16 8x4x16x16 conv). */
void tb_cpu_convd_copy_rows(const void *src, int64_t ss, void *dst,
                            int64_t ds, int64_t rows, int64_t n);

/* The bf16 forward of the avx512bf16 level (conv_direct_avx512bf16.c):
 * out [O, OH, OW] (bf16) = bias[o] (f32; 0 when bias is NULL) + the
 * sum over the taps r = (c*KH + kh)*KW + kw of xp [c, oh + kh*dil, ow +
 * kw*dil] (bf16) times the weight, two taps a vdpbf16ps (taps 2p and
 * 2p + 1: a pair of products added per step in f32, bf16 denormal
 * inputs read as zero, denormal sums flushed to zero), rounded once to
 * nearest even (NaN kept, quiet: ops/half.h's tb_f32_to_bf16); wp is
 * [ceil(O/8), ceil(R/2), 8] dwords: wp[(b*ceil(R/2) + p)*8 + i] holds
 * the weights of output channel b*8 + i at taps 2p (low half) and 2p + 1
 * (high half; 0 past R), zero past O. */
void tb_cpu_convd_fwd_bf16_avx512bf16(const uint16_t *xp,
                                      const uint32_t *wp, const float *bias,
                                      uint16_t *out,
                                      const tb_cpu_convd_geom *g);

#endif
