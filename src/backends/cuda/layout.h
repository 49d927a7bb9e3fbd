/* Index arithmetic of the CUDA module's layout, pooling, convolution and
 * creation kernels, host-testable (like geometry.h: valid C11 and CUDA
 * C++; tests/test_cuda_layout.c checks every function on the CPU against
 * brute force and against tbench's own host code).
 *
 *  - permute/transpose: a plan that merges the output dims the input
 *    steps through contiguously, gives the input offset of output
 *    element i, and recognises the [batch, rows, cols] -> [batch, cols,
 *    rows] pattern that the tiled (shared-memory) kernel serves;
 *  - the 32x32 tiles of that kernel;
 *  - pooling windows and conv2d's im2col gather;
 *  - the counter-based random stream of src/ops/rand.h, so a CUDA
 *    rand_uniform/rand_normal draws exactly the CPU's bits. */
#ifndef TB_BACKENDS_CUDA_LAYOUT_H
#define TB_BACKENDS_CUDA_LAYOUT_H

#include <math.h>
#include <stdint.h>

#include "../../ops/rand.h"
#include "geometry.h"

/* ---- permute --------------------------------------------------------- */

/* permute's dims from its parameters p0..p7 (`set`: bit i = p<i> given,
 * v[i] its value), the rule of tb_permute_dims (src/ops/op.h): none set
 * means the dims reversed; otherwise exactly p0..p(ndim-1) are set, each
 * in -ndim..ndim-1, together a permutation; a rank-0 input has no
 * permutation.  Returns 0 or -1. */
TB_GEOM_FN int tb_cu_perm_params(uint32_t set, const double *v, int ndim,
                                 int *perm)
{
    if (ndim < 1 || ndim > TB_GEOM_MAX_DIMS)
        return -1;
    if ((set & 0xffu) == 0) {
        for (int d = 0; d < ndim; d++)
            perm[d] = ndim - 1 - d;
        return 0;
    }
    if ((set & 0xffu) != (ndim >= 8 ? 0xffu : (1u << ndim) - 1u))
        return -1;
    int used = 0;
    for (int d = 0; d < ndim; d++) {
        double x = v[d];
        if (x != floor(x) || x < -ndim || x > ndim - 1)
            return -1;
        int a = (int)x < 0 ? (int)x + ndim : (int)x;
        if (used >> a & 1)
            return -1;
        used |= 1 << a;
        perm[d] = a;
    }
    return 0;
}

/* transpose's dims (dim0, dim1 in -ndim..ndim-1, distinct after
 * normalising) as a permutation.  Returns 0 or -1. */
TB_GEOM_FN int tb_cu_perm_swap(int64_t dim0, int64_t dim1, int ndim,
                               int *perm)
{
    if (ndim < 1 || ndim > TB_GEOM_MAX_DIMS || dim0 < -ndim ||
        dim0 >= ndim || dim1 < -ndim || dim1 >= ndim)
        return -1;
    int a = (int)(dim0 < 0 ? dim0 + ndim : dim0);
    int b = (int)(dim1 < 0 ? dim1 + ndim : dim1);
    if (a == b)
        return -1;
    for (int d = 0; d < ndim; d++)
        perm[d] = d;
    perm[a] = b;
    perm[b] = a;
    return 0;
}

/* Output element i of a permute of a contiguous input reads input
 * element tb_perm_offset(plan, i).  Output dims of size 1 are dropped
 * and neighbours the input steps through as one dim are merged, so a
 * permutation that moves nothing is ndim <= 1 with stride 1 (a copy).
 * `tiled`: the merged plan is an input [batch, rows, cols] written as
 * [batch, cols, rows], which the tiled kernel serves (coalesced reads
 * and writes through shared memory). */
typedef struct tb_perm_plan {
    int ndim;
    int64_t shape[TB_GEOM_MAX_DIMS];   /* merged output dims, outer first */
    int64_t istride[TB_GEOM_MAX_DIMS]; /* input stride of each */
    int copy;  /* output i = input i */
    int tiled;
    int64_t batch, rows, cols;
} tb_perm_plan;

/* Plan for a contiguous input of shape ishape (ndim dims) and perm
 * (output dim d = input dim perm[d]).  Returns 0, or -1 when perm is not
 * a permutation of 0..ndim-1. */
TB_GEOM_FN int tb_perm_plan_make(tb_perm_plan *pl, const int64_t *ishape,
                                 int ndim, const int *perm)
{
    if (ndim < 0 || ndim > TB_GEOM_MAX_DIMS)
        return -1;
    int64_t is[TB_GEOM_MAX_DIMS];
    int64_t s = 1;
    int used = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        is[d] = s;
        s *= ishape[d];
        if (perm[d] < 0 || perm[d] >= ndim || (used >> perm[d] & 1))
            return -1;
        used |= 1 << perm[d];
    }
    /* merge from the innermost output dim outwards */
    int64_t shp[TB_GEOM_MAX_DIMS], st[TB_GEOM_MAX_DIMS];
    int k = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t n = ishape[perm[d]], str = is[perm[d]];
        if (n == 1)
            continue;
        if (k > 0 && str == st[k - 1] * shp[k - 1]) {
            shp[k - 1] *= n;
            continue;
        }
        shp[k] = n;
        st[k] = str;
        k++;
    }
    pl->ndim = k;
    for (int d = 0; d < TB_GEOM_MAX_DIMS; d++) {
        pl->shape[d] = d < k ? shp[k - 1 - d] : 1;
        pl->istride[d] = d < k ? st[k - 1 - d] : 0;
    }
    pl->copy = k == 0 || (k == 1 && pl->istride[0] == 1);
    pl->tiled = 0;
    pl->batch = pl->rows = pl->cols = 1;
    if (k == 2 && pl->istride[0] == 1 && pl->istride[1] == pl->shape[0]) {
        pl->tiled = 1;
        pl->rows = pl->shape[1];
        pl->cols = pl->shape[0];
    } else if (k == 3 && pl->istride[1] == 1 &&
               pl->istride[2] == pl->shape[1] &&
               pl->istride[0] == pl->shape[1] * pl->shape[2]) {
        pl->tiled = 1;
        pl->batch = pl->shape[0];
        pl->rows = pl->shape[2];
        pl->cols = pl->shape[1];
    }
    return 0;
}

TB_GEOM_FN int64_t tb_perm_offset(const tb_perm_plan *pl, int64_t i)
{
    int64_t off = 0;
    for (int d = pl->ndim - 1; d > 0; d--) {
        int64_t q = i / pl->shape[d];
        off += (i - q * pl->shape[d]) * pl->istride[d];
        i = q;
    }
    if (pl->ndim > 0)
        off += i * pl->istride[0];
    return off;
}

/* ---- tiles of the tiled transpose ---------------------------------------
 * Input [batch, rows, cols] -> output [batch, cols, rows].  A block of
 * TB_TILE x TB_TILE_ROWS threads moves one TB_TILE x TB_TILE tile: thread
 * (tx, ty) reads input rows r0+ty, r0+ty+TB_TILE_ROWS, ... at column
 * c0+tx into the shared tile, then writes output rows c0+ty, ... at
 * column r0+tx from the tile's transpose.  Blocks stride over the
 * tiles of every batch (a 1-D grid, capped). */
#define TB_TILE 32
#define TB_TILE_ROWS 8

TB_GEOM_FN int64_t tb_tile_count(int64_t batch, int64_t rows, int64_t cols)
{
    return batch * ((rows + TB_TILE - 1) / TB_TILE) *
           ((cols + TB_TILE - 1) / TB_TILE);
}

/* Tile t: its batch and the first input row and column it covers. */
TB_GEOM_FN void tb_tile_at(int64_t t, int64_t rows, int64_t cols,
                           int64_t *b, int64_t *r0, int64_t *c0)
{
    int64_t tr = (rows + TB_TILE - 1) / TB_TILE;
    int64_t tc = (cols + TB_TILE - 1) / TB_TILE;
    int64_t per = tr * tc;
    *b = t / per;
    int64_t rem = t - *b * per;
    *r0 = rem / tc * TB_TILE;
    *c0 = rem % tc * TB_TILE;
}

/* ---- pooling and convolution windows ------------------------------------ */

/* Output size along one dim, as tb_window_out (src/ops/op.h). */
TB_GEOM_FN int64_t tb_cu_window_out(int64_t in, int64_t k, int64_t stride,
                                    int64_t pad, int64_t dil)
{
    if (in < 1 || k < 1 || stride < 1 || pad < 0 || dil < 1)
        return 0;
    int64_t span = in + 2 * pad;
    if (k - 1 > (span - 1) / dil)
        return 0;
    return (span - (dil * (k - 1) + 1)) / stride + 1;
}

/* The input range [*lo, *hi) that the window of output o covers along a
 * dim of length in (kernel k, stride s, padding pad), clipped to the
 * input; empty (lo >= hi) when it lies in the padding only. */
TB_GEOM_FN void tb_pool_range(int64_t o, int64_t k, int64_t s, int64_t pad,
                              int64_t in, int64_t *lo, int64_t *hi)
{
    int64_t start = o * s - pad;
    int64_t end = start + k;
    *lo = start < 0 ? 0 : start;
    *hi = end > in ? in : end;
}

/* conv2d as a GEMM per image: the column matrix of image n is
 * [C*KH*KW, OH*OW]; its element (r, j) is x[n, c, ih, iw] with
 * c, kh, kw from r and oh, ow from j, or 0 in the padding.  Returns the
 * offset of that element within image n (C*H*W elements), or -1 for
 * padding.  Then out[n] [O, OH*OW] = w [O, C*KH*KW] @ col (+ bias). */
TB_GEOM_FN int64_t tb_im2col_src(int64_t r, int64_t j, int64_t H, int64_t W,
                                 int64_t KH, int64_t KW, int64_t OW,
                                 int64_t s, int64_t pad, int64_t dil)
{
    int64_t kk = KH * KW;
    int64_t c = r / kk, rem = r - c * kk;
    int64_t kh = rem / KW, kw = rem - kh * KW;
    int64_t oh = j / OW, ow = j - oh * OW;
    int64_t ih = oh * s - pad + kh * dil;
    int64_t iw = ow * s - pad + kw * dil;
    if (ih < 0 || ih >= H || iw < 0 || iw >= W)
        return -1;
    return (c * H + ih) * W + iw;
}

/* ---- lane reductions (lanes.cu) -------------------------------------------
 * The combining rules of max/min/argmax, on doubles (a float converts
 * exactly, NaN included).  Each thread of a block folds a strided part of
 * the lane, then a shared-memory tree folds the threads' results; the
 * rules are commutative and associative, so any tree gives the
 * sequential answer (tests/test_cuda_layout.c simulates the kernel's). */

/* NaN in either gives NaN (NumPy's max), else the larger / smaller. */
TB_GEOM_FN double tb_nan_minmax(double a, double b, int is_max)
{
    if (a != a || b != b)
        return a + b;
    return is_max ? (a >= b ? a : b) : (a <= b ? a : b);
}

/* Is (a at index ia) the better argmax candidate than (b at ib)?  NaN
 * beats any number, a larger value a smaller one, and among equals (or
 * two NaNs) the smaller index wins: the index of the first NaN, else of
 * the first maximum, as NumPy and PyTorch answer. */
TB_GEOM_FN int tb_argmax_better(double a, int64_t ia, double b, int64_t ib)
{
    int na = a != a, nb = b != b;
    if (na || nb)
        return na && (!nb || ia < ib);
    return a > b || (a == b && ia < ib);
}

/* ---- the counter-based random stream (src/ops/rand.h) ------------------
 * The integer stream and its uniforms are rand.h's own functions
 * (TB_HOSTDEV: the same definitions on the device); the affine map and
 * Box-Muller below are written for the device (no FMA; CUDA's log,
 * sqrt, cos and sin), and tests/test_cuda_layout.c checks them against
 * rand.h's bit for bit on the host (f32; f64's stream is rand.h's own
 * Box-Muller, tb_rand_bm64, which this libm form matches within 1e-13).
 * Box-Muller's functions are CUDA's on the device (double: within 1-2
 * ulp, not correctly rounded), hence rand_normal's tolerance, not
 * exactness. */
#define TB_CU_RAND_2PI 6.283185307179586

/* rand_uniform: f64 low + (high - low) * u53 (no FMA); f32 the double
 * lo + (hi - lo) * u24 (lo, hi already floats) that the kernel rounds
 * once.  Written with __dmul_rn/__dadd_rn on the device so nvcc cannot
 * contract it into an FMA (the CPU rounds twice). */
#ifdef __CUDA_ARCH__
#define TB_CU_AFFINE(lo, w, u) __dadd_rn((lo), __dmul_rn((w), (u)))
#else
#define TB_CU_AFFINE(lo, w, u) ((lo) + (w) * (u))
#endif

TB_GEOM_FN double tb_cu_rand_uniform(uint64_t key, uint64_t i, double lo,
                                     double hi, int f32)
{
    double u = f32 ? tb_rand_u24(key, i) : tb_rand_u53(key, i);
    return TB_CU_AFFINE(lo, hi - lo, u);
}

/* Box-Muller pair j: z[0] = z(2j) (cos), z[1] = z(2j + 1) (sin). */
TB_GEOM_FN void tb_cu_rand_normal_pair(uint64_t key, uint64_t j, int f32,
                                       double *z0, double *z1)
{
    double u1 = f32 ? tb_rand_u24(key, 2 * j) : tb_rand_u53(key, 2 * j);
    double u2 = f32 ? tb_rand_u24(key, 2 * j + 1)
                    : tb_rand_u53(key, 2 * j + 1);
    double r = sqrt(-2.0 * log(1.0 - u1));
    double a = TB_CU_RAND_2PI * u2;
    *z0 = r * cos(a);
    *z1 = r * sin(a);
}

#endif
