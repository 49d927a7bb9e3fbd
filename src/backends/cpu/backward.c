/* Portable C kernels of the backward ops (issue 14, op_backward.h) for
 * the cpu backend, f32 and f64: the plain loop nests of the gradient
 * formulas (backward_impl.inc, included once per dtype), single-threaded,
 * except that matmul, linear and conv2d backward run their products
 * through the instance's native GEMM at the SIMD levels (matmul and
 * linear: its transpose flags read the operands in place, a narrow
 * weight gradient made transposed then turned; conv2d: the
 * same on the im2col columns of chunks of images, the chunks split over
 * the instance's threads; small stride-1 ones in f32/f64 at the avx512
 * levels by conv_direct.h's loops instead) and through the matmul row
 * on copies made by the instance's transpose row at the scalar level.
 * Rows of the registry under the level suffix c (kreg.h,
 * TB_CPU_ROWS_BACKWARD).  Every entry point counts its launch, checks its
 * operands and the output shapes against the op's rule and returns a
 * TB_E* code rather than touch memory it was not given. */
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "../../ops/op.h"
#include "../../ops/op_backward.h"
#include "../../ops/tensor.h"
#include "bwd_simd.h"
#include "conv_direct.h"
#include "cpu_internal.h"
#include "kreg.h"

#define BWK_SQRT1_2 0.70710678118654752440
#define BWK_INV_SQRT_2PI 0.39894228040143267794

/* d[0..n) = v: F(reduce)'s fills.  f32 by wmemset on v's bits: this
 * file is built for baseline x86-64, whose 16-byte stores held
 * sum_backward f32 1024x1024 at one store a cycle (73 us); libc picks
 * the machine's widest.  f64's C row runs at the scalar level only (its
 * SIMD rows are fill_f64_simd.h's): a loop. */
_Static_assert(sizeof(wchar_t) == sizeof(float), "wmemset fills floats");
static void bwk_fill_f32(float *d, int64_t n, float v)
{
    wchar_t w;
    memcpy(&w, &v, sizeof w);
    if (n > 0)
        wmemset((wchar_t *)(void *)d, w, (size_t)n);
}

static void bwk_fill_f64(double *d, int64_t n, double v)
{
    for (int64_t k = 0; k < n; k++)
        d[k] = v;
}

#define T float
#define TI int32_t
#define F(name) bwk_##name##_f32
#define EXP expf
#define FABS fabsf
#define TANH tanhf
#define ERFC erfcf
#include "backward_impl.inc"

#define T double
#define TI int64_t
#define F(name) bwk_##name##_f64
#define EXP exp
#define FABS fabs
#define TANH tanh
#define ERFC erfc
#include "backward_impl.inc"

void tb_cpu_bw_pool_f32(bool is_max, const float *g, const float *x,
                        float *dx, int64_t NC, int64_t H, int64_t W,
                        int64_t OH, int64_t OW, int64_t k, int64_t st,
                        int64_t pad)
{
    bwk_pool_f32(is_max, g, x, dx, NC, H, W, OH, OW, k, st, pad);
}

void tb_cpu_bw_pool_f64(bool is_max, const double *g, const double *x,
                        double *dx, int64_t NC, int64_t H, int64_t W,
                        int64_t OH, int64_t OW, int64_t k, int64_t st,
                        int64_t pad)
{
    bwk_pool_f64(is_max, g, x, dx, NC, H, W, OH, OW, k, st, pad);
}

void tb_cpu_bw_binary_c(tb_op_id id, tb_dtype dt, const tb_tensor *in,
                        tb_tensor *out)
{
    tb_shape gs = tb_tensor_shape(&in[0]), as = tb_tensor_shape(&in[1]);
    tb_shape bs = tb_tensor_shape(&in[2]);
    int64_t sa[TB_MAX_DIMS], sb[TB_MAX_DIMS];
    tb_shape_bcast_strides(&as, gs.ndim, sa);
    tb_shape_bcast_strides(&bs, gs.ndim, sb);
    if (dt == TB_F32)
        bwk_binary_f32(id, &gs, in[0].data, in[1].data, in[2].data, sa, sb,
                       out[0].data, out[1].data, tb_shape_numel(&as),
                       tb_shape_numel(&bs));
    else
        bwk_binary_f64(id, &gs, in[0].data, in[1].data, in[2].data, sa, sb,
                       out[0].data, out[1].data, tb_shape_numel(&as),
                       tb_shape_numel(&bs));
}

/* Count the launch; check operands and output shapes; fill *full with
 * the parameters and their defaults. */
static int bwk_begin(void *ctx, const tb_op *op, tb_dtype dt,
                     const tb_tensor *in, tb_tensor *out, const tb_params *p,
                     tb_shape *ish, tb_params *full)
{
    int rc = tb_cpu_begin_op(ctx, op->id, dt, in, out, p);
    if (rc)
        return rc;
    for (int i = 0; i < op->n_in; i++)
        ish[i] = tb_tensor_shape(&in[i]);
    *full = p ? *p : (tb_params){0};
    tb_params_defaults(op, full);
    return 0;
}

static void bwk_split(const tb_shape *s, int ax, int64_t *outer,
                      int64_t *len, int64_t *inner)
{
    *outer = 1, *inner = 1;
    for (int d = 0; d < ax; d++)
        *outer *= s->dim[d];
    *len = s->dim[ax];
    for (int d = ax + 1; d < s->ndim; d++)
        *inner *= s->dim[d];
}

/* dst [C, R] = src [R, C]^T, elements of esz (4 or 8) bytes, in 32x32
 * blocks. */
#define BWK_TR(TY)                                                        \
    do {                                                                  \
        const TY *s_ = src;                                               \
        TY *d_ = dst;                                                     \
        for (int64_t r0 = 0; r0 < R; r0 += 32)                            \
            for (int64_t c0 = 0; c0 < C; c0 += 32)                        \
                for (int64_t r = r0; r < r0 + 32 && r < R; r++)           \
                    for (int64_t c = c0; c < c0 + 32 && c < C; c++)       \
                        d_[c * R + r] = s_[r * C + c];                    \
    } while (0)
static void bwk_transpose(const void *src, void *dst, int64_t R, int64_t C,
                          size_t esz)
{
    if (esz == sizeof(float))
        BWK_TR(float);
    else
        BWK_TR(double);
}

/* dst [C, R] = src [R, C]^T with the instance's own transpose row (SIMD
 * at the SIMD levels); the blocked loop above when it has none. */
static int bwk_transpose_k(void *ctx, tb_dtype dt, const void *src,
                           void *dst, int64_t R, int64_t C)
{
    size_t n;
    const tb_cpu_krow *rows = tb_cpu_krows(&n);
    const tb_op *op = tb_op_get(TB_OP_transpose);
    const tb_cpu_krow *r =
        tb_cpu_krow_find(rows, n, TB_OP_transpose, dt, tb_cpu_isa(ctx));
    if (!r) {
        bwk_transpose(src, dst, R, C, tb_dtype_size(dt));
        return 0;
    }
    tb_tensor t[2];
    tb_shape ss = {2, {R, C}}, sd = {2, {C, R}};
    tb_tensor_init(&t[0], dt, &ss);
    tb_tensor_init(&t[1], dt, &sd);
    t[0].data = (void *)(uintptr_t)src;
    t[1].data = dst;
    tb_params p = {0};
    tb_params_defaults(op, &p);
    return r->fn(ctx, t, &t[1], &p);
}

/* c [M, N] = a [M, K] @ b [K, N] with the instance's own matmul row (its
 * native GEMM at the SIMD levels). */
static int bwk_gemm(void *ctx, tb_dtype dt, const void *a, const void *b,
                    void *c, int64_t M, int64_t K, int64_t N)
{
    size_t n;
    const tb_cpu_krow *rows = tb_cpu_krows(&n);
    const tb_cpu_krow *r =
        tb_cpu_krow_find(rows, n, TB_OP_matmul, dt, tb_cpu_isa(ctx));
    if (!r)
        return TB_EUNSUPPORTED;
    tb_tensor t[3];
    tb_shape sa = {2, {M, K}}, sb = {2, {K, N}}, sc = {2, {M, N}};
    tb_tensor_init(&t[0], dt, &sa);
    tb_tensor_init(&t[1], dt, &sb);
    tb_tensor_init(&t[2], dt, &sc);
    t[0].data = (void *)(uintptr_t)a;
    t[1].data = (void *)(uintptr_t)b;
    t[2].data = c;
    return r->fn(ctx, t, &t[2], NULL);
}

#define BWK_NARROW 16 /* db's width below which it is made transposed */

/* da [M, K] = g [M, N] @ b [K, N]^T and db [K, N] = a [M, K]^T @ g: by
 * the native GEMM with a and b read in place through its transpose
 * flags at the SIMD levels; by the matmul row on transposed copies at
 * the scalar level (the same sums either way). */
static int bwk_product_gemm(void *ctx, tb_dtype dt, const void *g,
                            const void *a, const void *b, void *da,
                            void *db, int64_t M, int64_t K, int64_t N)
{
    /* few rows of g: both read in place (packing b^T, K x N, cost as
     * much as the products: linear_backward 8 x 784 -> 256) */
    int rc = tb_cpu_gemm_nt(ctx, dt, M, K, N, g, N, b, N, da, K);
    if (rc == TB_EUNSUPPORTED)
        rc = tb_cpu_gemm_tr(ctx, dt, false, true, M, K, N, g, N, b, N, da,
                            K);
    if (rc == 0 && N < BWK_NARROW && N < K) {
        /* a narrow db (linear's [in, out] with few outputs): its rows
         * would fill few lanes of each micro-tile; db^T [N, K] = g^T @ a
         * fills them, then one small transpose (linear_backward
         * 128x128 -> 10 f32: the GEMM's tiles 44 -> 4) */
        void *dbt = tb_alloc((size_t)(N * K) * tb_dtype_size(dt));
        if (!dbt)
            return TB_ENOMEM;
        rc = tb_cpu_gemm_tr(ctx, dt, true, false, N, K, M, g, N, a, K, dbt,
                            K);
        if (rc == 0)
            bwk_transpose(dbt, db, N, K, tb_dtype_size(dt));
        tb_free(dbt);
        return rc;
    }
    if (rc == 0)
        return tb_cpu_gemm_tr(ctx, dt, true, false, K, N, M, a, K, g, N,
                              db, N);
    if (rc != TB_EUNSUPPORTED)
        return rc;
    size_t esz = tb_dtype_size(dt);
    void *bt = tb_alloc((size_t)(K * N) * esz);
    void *at = tb_alloc((size_t)(M * K) * esz);
    rc = bt && at ? 0 : TB_ENOMEM;
    if (rc == 0)
        rc = bwk_transpose_k(ctx, dt, b, bt, K, N);
    if (rc == 0)
        rc = bwk_transpose_k(ctx, dt, a, at, M, K);
    if (rc == 0)
        rc = bwk_gemm(ctx, dt, g, bt, da, M, N, K);
    if (rc == 0)
        rc = bwk_gemm(ctx, dt, at, g, db, K, M, N);
    tb_free(bt);
    tb_free(at);
    return rc;
}

/* linear_backward of g [M, N], x [M, K], w [K, N], y [M, N] (checked)
 * into dx, dw, db: gz = y > 0 ? g : 0 and db (gz's columns summed in
 * double, in row order) in one pass, then bwk_product_gemm. */
#define BWK_LINEAR(SFX, TY)                                               \
    static int bwk_linear_##SFX(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out)                           \
    {                                                                     \
        const int64_t M = in[1].shape[0], K = in[1].shape[1];             \
        const int64_t N = in[2].shape[1];                                 \
        const TY *g = in[0].data, *y = in[3].data;                        \
        TY *db = out[2].data;                                             \
        /* the N double sums first: after M N floats they would be    \
         * misaligned when M N is odd */                                  \
        double *s = tb_alloc((size_t)N * sizeof(double) +                 \
                             (size_t)(M * N) * sizeof(TY));               \
        if (!s)                                                           \
            return TB_ENOMEM;                                             \
        TY *gz = (TY *)(void *)(s + N);                                   \
        for (int64_t j = 0; j < N; j++)                                   \
            s[j] = 0;                                                     \
        for (int64_t i = 0; i < M; i++)                                   \
            for (int64_t j = 0; j < N; j++) {                             \
                TY v = y[i * N + j] > 0 ? g[i * N + j] : (TY)0;           \
                gz[i * N + j] = v;                                        \
                s[j] += v;                                                \
            }                                                             \
        for (int64_t j = 0; j < N; j++)                                   \
            db[j] = (TY)s[j];                                             \
        int rc = bwk_product_gemm(ctx, TB_CPU_DT_##SFX, gz, in[1].data,   \
                                  in[2].data, out[0].data, out[1].data,   \
                                  M, K, N);                               \
        tb_free(s);                                                       \
        return rc;                                                        \
    }
BWK_LINEAR(f32, float)
BWK_LINEAR(f64, double)

int tb_cpu_bw_linear_gemm(void *ctx, tb_dtype dt, const tb_tensor *in,
                          tb_tensor *out)
{
    return dt == TB_F32 ? bwk_linear_f32(ctx, in, out)
                        : bwk_linear_f64(ctx, in, out);
}

/* conv2d_backward by GEMM over chunks of nb images at once (P = OH*OW
 * columns per image, R = C*KH*KW rows, L = nb*P, the chunk's images side
 * by side; nb fixed by the shape, so no sum depends on the threads):
 *   gt   [L, O] = each image's g^T (the instance's transpose row)
 *   col  [R, L] = im2col of each image into its column block
 *   dwc  [R, O] = col @ gt, one per chunk
 *   dbc  [O]    = g's rows summed per image in double, one per chunk
 *   gc   [O, L] = the chunk's g (row copies), then
 *   dcol [R, L] = wt @ gc (wt = w^T, made once; in col's buffer),
 *                 col2im'd into dx: neither with input_grad=0 (dx comes
 *                 back zeros, nobody wants it: a first layer's)
 * so each chunk is one or two GEMMs whose long side is L (rather than
 * small GEMMs per image), all on the instance's matmul row (the native
 * GEMM at the SIMD levels): plain operands, which it packs fastest (dwc
 * as gc @ col^T through its transpose flags packs col^T by a generic
 * gather: conv1's dw took 6.7 ms instead of 4.7 at 256 images).  The
 * chunks are split over the threads, each part with its own buffers and
 * one-thread GEMMs (one part: the GEMMs split over the pool); then dw =
 * (the chunks' dwc summed in chunk order)^T and db the chunks' dbc
 * likewise.  A chunk holds at most BWK_CONV_CHUNK elements of col and of
 * gc (at least one image): a part's buffers stay in the L2 cache. */
#define BWK_CONV_CHUNK (INT64_C(1) << 17)

typedef struct bwk_conv_job {
    void *ctx;
    tb_dtype dt;
    size_t es;
    const char *g, *x, *w, *wt; /* wt [R, O] = w^T */
    char *dx, *dwc;             /* dwc [chunks][R, O] */
    double *dbc;                /* [chunks][O] */
    int64_t N, C, H, W, O, KH, KW, OH, OW, st, pad, dil, R, P, nb, chunks;
    bool want_dx;
    int rc[TB_MAX_AXIS_VALUES];
} bwk_conv_job;

/* im2col of image n into col (rows ld apart), or (back) col2im of col
 * into image n of dx. */
static void bwk_conv_cols(const bwk_conv_job *j, int64_t n, char *col,
                          int64_t ld, bool back)
{
    const int64_t chw = j->C * j->H * j->W;
#define BWK_COLS(SFX, TY)                                                 \
    if (back)                                                             \
        bwk_col2im_##SFX((const TY *)col, (TY *)j->dx + n * chw, ld,      \
                         j->C, j->H, j->W, j->KH, j->KW, j->OH, j->OW,    \
                         j->st, j->pad, j->dil);                          \
    else                                                                  \
        bwk_im2col_##SFX((const TY *)j->x + n * chw, (TY *)col, ld, j->C, \
                         j->H, j->W, j->KH, j->KW, j->OH, j->OW, j->st,   \
                         j->pad, j->dil)
    if (j->dt == TB_F32) {
        BWK_COLS(f32, float);
    } else {
        BWK_COLS(f64, double);
    }
#undef BWK_COLS
}

/* Chunk c with the part's buffers col [R, L], gc [O, L], gt [L, O] and
 * the GEMMs' instance ctx. */
static int bwk_conv_chunk(const bwk_conv_job *j, void *ctx, int64_t c,
                          char *col, char *gc, char *gt)
{
    const int64_t O = j->O, R = j->R, P = j->P, n0 = c * j->nb;
    const int64_t m = j->N - n0 < j->nb ? j->N - n0 : j->nb, Lm = m * P;
    const size_t es = j->es;
    char *dwc = j->dwc + (size_t)(c * R * O) * es;
    int rc = 0;
    for (int64_t o = 0; o < O; o++)
        j->dbc[c * O + o] = 0;
    for (int64_t i = 0; rc == 0 && i < m; i++) {
        const char *gn = j->g + (size_t)((n0 + i) * O * P) * es;
        /* gt's rows i*P.. = g_n^T; gc's column block i = g_n */
        rc = bwk_transpose_k(ctx, j->dt, gn, gt + (size_t)(i * P * O) * es,
                             O, P);
        for (int64_t o = 0; o < O; o++) {
            const char *r = gn + (size_t)(o * P) * es;
            j->dbc[c * O + o] +=
                j->dt == TB_F32 ? bwk_rowsum_f32((const float *)r, P)
                                : bwk_rowsum_f64((const double *)r, P);
            if (j->want_dx)
                memcpy(gc + (size_t)(o * Lm + i * P) * es, r,
                       (size_t)P * es);
        }
        bwk_conv_cols(j, n0 + i, col + (size_t)(i * P) * es, Lm, false);
    }
    if (rc == 0)
        rc = bwk_gemm(ctx, j->dt, col, gt, dwc, R, Lm, O);
    if (rc || !j->want_dx)
        return rc;
    rc = bwk_gemm(ctx, j->dt, j->wt, gc, col, R, O, Lm);
    for (int64_t i = 0; rc == 0 && i < m; i++)
        bwk_conv_cols(j, n0 + i, col + (size_t)(i * P) * es, Lm, true);
    return rc;
}

/* Part `part` of nparts: its share of the chunks, in order. */
static void bwk_conv_task(void *arg, int part, int nparts)
{
    bwk_conv_job *j = arg;
    void *ctx = nparts > 1 ? tb_cpu_serial(j->ctx) : j->ctx;
    int64_t c0, c1;
    tb_cpu_span(j->chunks, 1, part, nparts, &c0, &c1);
    const int64_t L = j->nb * j->P;
    char *col = c1 > c0 ? tb_alloc((size_t)((j->R + 2 * j->O) * L) *
                                   j->es)
                        : NULL;
    int rc = c1 > c0 && !col ? TB_ENOMEM : 0;
    for (int64_t c = c0; rc == 0 && c < c1; c++)
        rc = bwk_conv_chunk(j, ctx, c, col, col + (size_t)(j->R * L) * j->es,
                            col + (size_t)((j->R + j->O) * L) * j->es);
    tb_free(col);
    j->rc[part] = rc;
}

#define BWK_CONV_SUM(SFX, TY)                                             \
    static void bwk_conv_sum_##SFX(const bwk_conv_job *j, TY *dwa, TY *dw, \
                                   TY *db)                                \
    {                                                                     \
        const int64_t RO = j->R * j->O;                                   \
        const TY *dwc = (const TY *)j->dwc;                               \
        memcpy(dwa, dwc, (size_t)RO * sizeof(TY));                        \
        for (int64_t c = 1; c < j->chunks; c++)                           \
            bwk_acc_##SFX(dwa, dwc + c * RO, RO);                         \
        bwk_transpose(dwa, dw, j->R, j->O, sizeof(TY));                   \
        for (int64_t o = 0; o < j->O; o++) {                              \
            double s = 0;                                                 \
            for (int64_t c = 0; c < j->chunks; c++)                       \
                s += j->dbc[c * j->O + o];                                \
            db[o] = (TY)s;                                                \
        }                                                                 \
    }
BWK_CONV_SUM(f32, float)
BWK_CONV_SUM(f64, double)

#if TB_CPU_HAVE_AVX512
/* conv2d_backward by conv_direct.h's loops (f32/f64 at the AVX-512
 * levels, stride 1, few taps; bwk_conv_direct_fits): db the rows of g
 * summed in vectors, the rows in double (tb_cpu_convd_db); dw [o] by
 * tb_cpu_convd_dw over the padded images, blocks of 8 output channels split over the threads (each
 * weight's sum in one fixed order); dx [n] = the forward loops on g [n]
 * padded by dil*(K-1) - pad with w flipped and transposed ([C, O, KH,
 * KW]), the images split over the threads; with fewer than 8 input
 * channels (that forward would leave most of its 8-channel tiles empty)
 * dcol [R, P] = w^T g [n] (tb_cpu_convd_dcol: all R = C*KH*KW rows in
 * one tile up to 9; the forward's 8-channel tiles left 9 taps a one-row
 * tail: 8x16x26x26 f32 51.0 -> 43.4 us), col2im'd into dx [n]
 * (tb_cpu_convd_col2im). */
typedef struct bwk_convd_job {
    const bwk_conv_job *j;
    const char *xp; /* [N, C, Hp, Wp]: x padded (x when pad = 0) */
    /* [ceil(C/8), O*KH*KW, 8]: the packed flipped w; dcol: w^T [R, O] */
    const char *wf;
    bool dcol;
    char *dw;
    tb_cpu_convd_geom dw_g, dx_g; /* dx_g: the forward on g (!dcol) */
    int64_t ph, pw;               /* g's padding for dx */
    int rc[TB_MAX_AXIS_VALUES];
} bwk_convd_job;

static bool bwk_conv_direct_fits(const bwk_conv_job *j, int isa)
{
    const int v = j->dt == TB_F32 ? 16 : 8;
    return isa >= TB_ISA_AVX512 && (j->dt == TB_F32 || j->dt == TB_F64) &&
           j->st == 1 && tb_cpu_convd_fits(j->R, j->OW, v) &&
           (!j->want_dx || j->C < TB_CPU_CONVD_OB ||
            (2 * j->W >= v && j->pad <= j->dil * (j->KH - 1) &&
             j->pad <= j->dil * (j->KW - 1)));
}

static void bwk_convd_dw_task(void *arg, int part, int nparts)
{
    const bwk_convd_job *d = arg;
    const bwk_conv_job *j = d->j;
    int64_t b, e;
    tb_cpu_span(j->O, TB_CPU_CONVD_OB, part, nparts, &b, &e);
    if (e <= b)
        return;
    if (j->dt == TB_F32)
        tb_cpu_convd_dw_f32_avx512((const float *)j->g,
                                   (const float *)d->xp, j->N,
                                   (float *)d->dw, b, e, &d->dw_g);
    else
        tb_cpu_convd_dw_f64_avx512((const double *)j->g,
                                   (const double *)d->xp, j->N,
                                   (double *)d->dw, b, e, &d->dw_g);
}

static void bwk_convd_dx_task(void *arg, int part, int nparts)
{
    bwk_convd_job *d = arg;
    const bwk_conv_job *j = d->j;
    const size_t es = j->es;
    int64_t b, e;
    tb_cpu_span(j->N, 1, part, nparts, &b, &e);
    const bool padded = !d->dcol && (d->ph > 0 || d->pw > 0);
    const int64_t Hp = d->dx_g.Hp, Wp = d->dx_g.Wp, P = j->OH * j->OW;
    /* the padded g [O, Hp, Wp], or dcol [R, P] */
    const int64_t bsz = d->dcol ? j->R * P : padded ? j->O * Hp * Wp : 0;
    char *gp = NULL;
    if (bsz && e > b) {
        gp = tb_alloc((size_t)bsz * es);
        if (!gp) {
            d->rc[part] = TB_ENOMEM;
            return;
        }
        /* the padded g's border (dcol's rows are all written) */
        if (padded)
            memset(gp, 0, (size_t)bsz * es);
    }
    for (int64_t n = b; n < e; n++) {
        const char *gn = j->g + (size_t)(n * j->O * P) * es;
        char *dxn = j->dx + (size_t)(n * j->C * j->H * j->W) * es;
        if (d->dcol) {
            if (j->dt == TB_F32) {
                tb_cpu_convd_dcol_f32_avx512((const float *)gn,
                                             (const float *)d->wf,
                                             (float *)gp, j->R, j->O, P);
                tb_cpu_convd_col2im_f32_avx512(
                    (const float *)gp, (float *)dxn, j->C, j->H, j->W,
                    j->KH, j->KW, j->OH, j->OW, j->pad, j->dil);
            } else {
                tb_cpu_convd_dcol_f64_avx512((const double *)gn,
                                             (const double *)d->wf,
                                             (double *)gp, j->R, j->O, P);
                tb_cpu_convd_col2im_f64_avx512(
                    (const double *)gp, (double *)dxn, j->C, j->H, j->W,
                    j->KH, j->KW, j->OH, j->OW, j->pad, j->dil);
            }
            continue;
        }
        if (padded) {
            for (int64_t o = 0; o < j->O; o++)
                for (int64_t oh = 0; oh < j->OH; oh++)
                    memcpy(gp + (size_t)((o * Hp + oh + d->ph) * Wp +
                                         d->pw) * es,
                           gn + (size_t)(o * P + oh * j->OW) * es,
                           (size_t)j->OW * es);
            gn = gp;
        }
        if (j->dt == TB_F32)
            tb_cpu_convd_fwd_f32_avx512((const float *)gn,
                                        (const float *)d->wf, NULL,
                                        (float *)dxn, &d->dx_g);
        else
            tb_cpu_convd_fwd_f64_avx512((const double *)gn,
                                        (const double *)d->wf, NULL,
                                        (double *)dxn, &d->dx_g);
    }
    tb_free(gp);
    d->rc[part] = 0;
}

/* The direct conv2d_backward into dx (j->want_dx), dw and db. */
static int bwk_conv_direct(void *ctx, const bwk_conv_job *j, char *dw,
                           char *db)
{
    const size_t es = j->es;
    const int64_t KK = j->KH * j->KW, P = j->OH * j->OW;
    if (j->dt == TB_F32)
        tb_cpu_convd_db_f32_avx512((const float *)j->g, j->N, j->O, P,
                                   (float *)db);
    else
        tb_cpu_convd_db_f64_avx512((const double *)j->g, j->N, j->O, P,
                                   (double *)db);
    bwk_convd_job d = {.j = j, .dw = dw, .xp = j->x};
    const int64_t Hp = j->OH + j->dil * (j->KH - 1);
    const int64_t Wp = j->OW + j->dil * (j->KW - 1);
    d.dw_g = (tb_cpu_convd_geom){j->C,  Hp,    Wp,    j->O,  j->KH,
                                 j->KW, j->OH, j->OW, j->dil};
    d.dcol = j->C < TB_CPU_CONVD_OB;
    /* blocks of 8 of wf's output channels: C (or dcol's R) */
    const int64_t CB = ((d.dcol ? j->R : j->C) + TB_CPU_CONVD_OB - 1) /
                       TB_CPU_CONVD_OB;
    const size_t xpsz = j->pad > 0 ? (size_t)(j->N * j->C * Hp * Wp) : 0;
    const size_t wfsz =
        j->want_dx ? (size_t)(CB * TB_CPU_CONVD_OB * j->O * (d.dcol ? 1 : KK))
                   : 0;
    char *buf = xpsz + wfsz ? tb_alloc((xpsz + wfsz) * es) : NULL;
    if (xpsz + wfsz && !buf)
        return TB_ENOMEM;
    if (xpsz) {
        memset(buf, 0, xpsz * es);
        for (int64_t ci = 0; ci < j->N * j->C; ci++)
            for (int64_t ih = 0; ih < j->H; ih++)
                memcpy(buf + (size_t)((ci * Hp + ih + j->pad) * Wp +
                                      j->pad) * es,
                       j->x + (size_t)((ci * j->H + ih) * j->W) * es,
                       (size_t)j->W * es);
        d.xp = buf;
    }
    const int64_t macs = j->N * P * j->R * j->O;
    tb_cpu_parallel(ctx, macs,
                    (j->O + TB_CPU_CONVD_OB - 1) / TB_CPU_CONVD_OB,
                    bwk_convd_dw_task, &d);
    int rc = 0;
    if (j->want_dx && d.dcol) {
        /* wf [r, o] = w [o, r] (w^T, tb_cpu_convd_dcol's) */
        char *wf = buf + xpsz * es;
        for (int64_t r = 0; r < j->R; r++)
            for (int64_t o = 0; o < j->O; o++)
                memcpy(wf + (size_t)(r * j->O + o) * es,
                       j->w + (size_t)(o * j->R + r) * es, es);
        d.wf = wf;
    } else if (j->want_dx) {
        /* wf [(b*R' + o*KK + t)*8 + i] = w [o, b*8 + i, KK-1-t] */
        char *wf = buf + xpsz * es;
        const int64_t Rf = j->O * KK;
        for (int64_t b = 0; b < CB; b++)
            for (int64_t o = 0; o < j->O; o++)
                for (int64_t t = 0; t < KK; t++)
                    for (int i = 0; i < TB_CPU_CONVD_OB; i++) {
                        const int64_t c = b * TB_CPU_CONVD_OB + i;
                        char *dst = wf + (size_t)(((b * Rf + o * KK + t) *
                                                   TB_CPU_CONVD_OB) + i) * es;
                        if (c < j->C)
                            memcpy(dst,
                                   j->w + (size_t)((o * j->C + c) * KK +
                                                   KK - 1 - t) * es,
                                   es);
                        else
                            memset(dst, 0, es);
                    }
        d.wf = wf;
        d.ph = j->dil * (j->KH - 1) - j->pad;
        d.pw = j->dil * (j->KW - 1) - j->pad;
        d.dx_g = (tb_cpu_convd_geom){j->O,
                                     j->OH + 2 * d.ph,
                                     j->OW + 2 * d.pw,
                                     j->C,
                                     j->KH,
                                     j->KW,
                                     j->H,
                                     j->W,
                                     j->dil};
    }
    if (j->want_dx) {
        for (int i = 0; i < TB_MAX_AXIS_VALUES; i++)
            d.rc[i] = 0;
        tb_cpu_parallel(ctx, macs, j->N, bwk_convd_dx_task, &d);
        for (int i = 0; i < TB_MAX_AXIS_VALUES && rc == 0; i++)
            rc = d.rc[i];
    }
    tb_free(buf);
    return rc;
}
#endif

/* conv2d_backward of g [N, O, OH, OW], x [N, C, H, W], w [O, C, KH, KW]
 * (the shapes checked) into dx, dw, db; params as resolved. */
static int bwk_conv(void *ctx, tb_dtype dt, const tb_tensor *in,
                    tb_tensor *out, const tb_params *full, bool direct)
{
    const tb_tensor *g = &in[0], *x = &in[1], *w = &in[2];
    bwk_conv_job j = {
        .ctx = ctx, .dt = dt, .es = tb_dtype_size(dt),
        .g = g->data, .x = x->data, .w = w->data, .dx = out[0].data,
        .N = x->shape[0], .C = x->shape[1], .H = x->shape[2],
        .W = x->shape[3], .O = w->shape[0], .KH = w->shape[2],
        .KW = w->shape[3], .OH = g->shape[2], .OW = g->shape[3],
        .st = (int64_t)full->v[0], .pad = (int64_t)full->v[1],
        .dil = (int64_t)full->v[2],
        .want_dx = !tb_params_has(full, 3) || full->v[3] != 0,
    };
    j.R = j.C * j.KH * j.KW, j.P = j.OH * j.OW;
    if (!j.want_dx || j.N * j.P == 0)
        memset(j.dx, 0, (size_t)tb_tensor_numel(&out[0]) * j.es);
    if (j.N * j.P * j.O == 0 || j.R == 0) {
        memset(out[1].data, 0, (size_t)tb_tensor_numel(&out[1]) * j.es);
        memset(out[2].data, 0, (size_t)tb_tensor_numel(&out[2]) * j.es);
        return 0;
    }
#if TB_CPU_HAVE_AVX512
    if (direct && bwk_conv_direct_fits(&j, tb_cpu_isa(ctx)))
        return bwk_conv_direct(ctx, &j, out[1].data, out[2].data);
#endif
    int64_t big = j.R > j.O ? j.R : j.O;
    j.nb = BWK_CONV_CHUNK / (big * j.P);
    j.nb = j.nb > j.N ? j.N : j.nb < 1 ? 1 : j.nb;
    j.chunks = (j.N + j.nb - 1) / j.nb;
    const size_t ro = (size_t)(j.R * j.O) * j.es;
    char *wt = tb_alloc(ro), *dwa = tb_alloc(ro);
    j.dwc = tb_alloc((size_t)j.chunks * ro);
    j.dbc = tb_alloc((size_t)(j.chunks * j.O) * sizeof(double));
    int rc = wt && dwa && j.dwc && j.dbc ? 0 : TB_ENOMEM;
    if (rc == 0) {
        bwk_transpose(j.w, wt, j.O, j.R, j.es);
        j.wt = wt;
        /* about 2 (input_grad=0: 1) products' multiply-adds a chunk */
        int64_t work = (j.want_dx ? 2 : 1) * j.N * j.P * j.R * j.O;
        for (int i = 0; i < TB_MAX_AXIS_VALUES; i++)
            j.rc[i] = 0;
        tb_cpu_parallel(ctx, work, j.chunks, bwk_conv_task, &j);
        for (int i = 0; i < TB_MAX_AXIS_VALUES && rc == 0; i++)
            rc = j.rc[i];
    }
    if (rc == 0 && dt == TB_F32)
        bwk_conv_sum_f32(&j, (float *)dwa, out[1].data, out[2].data);
    else if (rc == 0)
        bwk_conv_sum_f64(&j, (double *)dwa, out[1].data, out[2].data);
    tb_free(wt);
    tb_free(dwa);
    tb_free(j.dwc);
    tb_free(j.dbc);
    return rc;
}

#if TB_CPU_HAVE_AVX512
/* conv2d_backward's avx512 rows (kreg.h): conv_direct.h's loops where
 * bwk_conv_direct_fits, else the chunks on the level's GEMM; the C rows
 * never take the direct loops (a row's name is the code that ran). */
static int bwk_conv_avx512(void *ctx, tb_dtype dt, const tb_tensor *in,
                           tb_tensor *out, const tb_params *p)
{
    if (ctx && tb_cpu_isa(ctx) < TB_ISA_AVX512)
        return TB_EUNSUPPORTED;
    const tb_op *op = tb_op_get(TB_OP_conv2d_backward);
    tb_shape ish[TB_MAX_INPUTS];
    tb_params full;
    int rc = bwk_begin(ctx, op, dt, in, out, p, ish, &full);
    return rc ? rc : bwk_conv(ctx, dt, in, out, &full, true);
}

int TB_CPU_KFN(conv2d_backward, f32, avx512)(void *ctx, const tb_tensor *in,
                                             tb_tensor *out,
                                             const tb_params *p)
{
    return bwk_conv_avx512(ctx, TB_F32, in, out, p);
}

int TB_CPU_KFN(conv2d_backward, f64, avx512)(void *ctx, const tb_tensor *in,
                                             tb_tensor *out,
                                             const tb_params *p)
{
    return bwk_conv_avx512(ctx, TB_F64, in, out, p);
}
#endif

/* One body for both dtypes: SFX selects the typed functions. */
#define BWK_BODY(SFX, TY)                                                 \
    do {                                                                  \
        const TY *x0 = in[0].data, *x1 = op->n_in > 1 ? in[1].data : NULL; \
        const TY *x2 = op->n_in > 2 ? in[2].data : NULL;                  \
        TY *y0 = out[0].data, *y1 = op->n_out > 1 ? out[1].data : NULL;   \
        switch (op->id) {                                                 \
        case TB_OP_relu_backward:                                         \
        case TB_OP_sigmoid_backward:                                      \
        case TB_OP_tanh_backward:                                         \
        case TB_OP_gelu_backward:                                         \
            bwk_act_##SFX(op->id, x0, x1, y0, tb_shape_numel(&ish[0]));  \
            return 0;                                                     \
        case TB_OP_log_softmax_backward: {                                \
            int ax = 0;                                                   \
            tb_axis_norm((int64_t)full.v[0], ish[0].ndim, &ax);           \
            int64_t o, l, i;                                              \
            bwk_split(&ish[0], ax, &o, &l, &i);                           \
            bwk_log_softmax_##SFX(x0, x1, y0, o, l, i);                   \
            return 0;                                                     \
        }                                                                 \
        case TB_OP_sum_backward:                                          \
        case TB_OP_mean_backward: {                                       \
            int64_t o = 1, l = tb_shape_numel(&ish[1]), i = 1;            \
            if (tb_params_has(&full, 0)) {                                \
                int ax = 0;                                               \
                tb_axis_norm((int64_t)full.v[0], ish[1].ndim, &ax);       \
                bwk_split(&ish[1], ax, &o, &l, &i);                       \
            }                                                             \
            TY sc = op->id == TB_OP_mean_backward ? (TY)(1.0 / (double)l) \
                                                  : (TY)1;                \
            bwk_reduce_##SFX(x0, y0, o, l, i, sc);                        \
            return 0;                                                     \
        }                                                                 \
        case TB_OP_add_backward:                                          \
        case TB_OP_sub_backward:                                          \
        case TB_OP_mul_backward:                                          \
        case TB_OP_div_backward: {                                        \
            int64_t sa[TB_MAX_DIMS], sb[TB_MAX_DIMS];                     \
            tb_shape_bcast_strides(&ish[1], ish[0].ndim, sa);             \
            tb_shape_bcast_strides(&ish[2], ish[0].ndim, sb);             \
            bwk_binary_##SFX(op->id, &ish[0], x0, x1, x2, sa, sb, y0, y1, \
                             tb_shape_numel(&ish[1]),                     \
                             tb_shape_numel(&ish[2]));                    \
            return 0;                                                     \
        }                                                                 \
        case TB_OP_matmul_backward: {                                     \
            int nd = ish[1].ndim;                                         \
            int64_t M = ish[1].dim[nd - 2], K = ish[1].dim[nd - 1];       \
            int64_t N = ish[2].dim[nd - 1];                               \
            int64_t B = tb_shape_numel(&ish[1]) / (M * K);                \
            int rc_ = 0;                                                  \
            for (int64_t t = 0; t < B && rc_ == 0; t++)                   \
                rc_ = bwk_product_gemm(ctx, dt, x0 + t * M * N,           \
                                       x1 + t * M * K, x2 + t * K * N,    \
                                       y0 + t * M * K, y1 + t * K * N, M, \
                                       K, N);                             \
            return rc_;                                                   \
        }                                                                 \
        case TB_OP_linear_backward:                                       \
            return tb_cpu_bw_linear_gemm(ctx, dt, in, out);               \
        case TB_OP_nll_loss:                                              \
            return bwk_nll_##SFX(x0, x1, y0, ish[0].dim[0],               \
                                 ish[0].dim[1]);                          \
        case TB_OP_nll_loss_backward:                                     \
            return bwk_nll_bw_##SFX(x0, x2, y0, ish[1].dim[0],            \
                                    ish[1].dim[1]);                       \
        case TB_OP_max_pool2d_backward:                                   \
        case TB_OP_avg_pool2d_backward: {                                 \
            int64_t k = (int64_t)full.v[0];                               \
            int64_t st = tb_params_has(&full, 1) ? (int64_t)full.v[1] : k; \
            bwk_pool_##SFX(op->id == TB_OP_max_pool2d_backward, x0, x1,   \
                           y0, ish[1].dim[0] * ish[1].dim[1],             \
                           ish[1].dim[2], ish[1].dim[3], ish[0].dim[2],   \
                           ish[0].dim[3], k, st, (int64_t)full.v[2]);     \
            return 0;                                                     \
        }                                                                 \
        case TB_OP_conv2d_backward:                                       \
            return bwk_conv(ctx, dt, in, out, &full, false);              \
        default:                                                          \
            return TB_EUNSUPPORTED;                                       \
        }                                                                 \
    } while (0)

static int bwk_run(void *ctx, tb_op_id id, tb_dtype dt, const tb_tensor *in,
                   tb_tensor *out, const tb_params *p)
{
    const tb_op *op = tb_op_get(id);
    tb_shape ish[TB_MAX_INPUTS];
    tb_params full;
    int rc = bwk_begin(ctx, op, dt, in, out, p, ish, &full);
    if (rc)
        return rc;
    if (dt == TB_F32)
        BWK_BODY(f32, float);
    else
        BWK_BODY(f64, double);
}

/* The entry points of the backward family's C rows (kreg.h; its SIMD
 * rows are bwd_simd_impl.h's). */
#define BWK_ENTRY(op, dt, sfx, c) BWK_ENTRY_##sfx(op, dt)
#define BWK_ENTRY_avx512(op, dt)
#define BWK_ENTRY_avx2(op, dt)
#define BWK_ENTRY_c(op, dt)                                               \
    int TB_CPU_KFN(op, dt, c)(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p)         \
    {                                                                     \
        return bwk_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, p);      \
    }
TB_CPU_ROWS_BACKWARD(BWK_ENTRY)
