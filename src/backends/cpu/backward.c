/* Portable C kernels of the backward ops (issue 14, op_backward.h) for
 * the cpu backend, f32 and f64: the plain loop nests of the gradient
 * formulas (backward_impl.inc, included once per dtype), single-threaded,
 * except that matmul, linear and conv2d backward run their products
 * through the instance's native GEMM at the SIMD levels (matmul and
 * linear: its transpose flags read the operands in place; conv2d: its
 * matmul row on transposed copies of the im2col columns of chunks of
 * images) and through the matmul row on copies made by the instance's
 * transpose row at the scalar level.
 * Rows of the registry under the level suffix c (kreg.h,
 * TB_CPU_ROWS_BACKWARD).  Every entry point counts its launch, checks its
 * operands and the output shapes against the op's rule and returns a
 * TB_E* code rather than touch memory it was not given. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "../../ops/op.h"
#include "../../ops/op_backward.h"
#include "../../ops/tensor.h"
#include "bwd_simd.h"
#include "cpu_internal.h"
#include "kreg.h"

#define BWK_SQRT1_2 0.70710678118654752440
#define BWK_INV_SQRT_2PI 0.39894228040143267794

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

/* da [M, K] = g [M, N] @ b [K, N]^T and db [K, N] = a [M, K]^T @ g: by
 * the native GEMM with a and b read in place through its transpose
 * flags at the SIMD levels; by the matmul row on transposed copies at
 * the scalar level (the same sums either way). */
static int bwk_product_gemm(void *ctx, tb_dtype dt, const void *g,
                            const void *a, const void *b, void *da,
                            void *db, int64_t M, int64_t K, int64_t N)
{
    int rc = tb_cpu_gemm_tr(ctx, dt, false, true, M, K, N, g, N, b, N, da,
                            K);
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

/* conv2d_backward by GEMM over chunks of nb images at once (P = OH*OW
 * columns per image, R = C*KH*KW rows, the chunk's images side by side):
 *   gc   [O, nb*P] = the chunk's g (row copies)
 *   gt   [nb*P, O] = gc^T (the instance's transpose row)
 *   col  [R, nb*P] = im2col of each image into its column block
 *   dwt  [R, O]    = col @ gt, summed over the chunks into dwa; dw = dwa^T
 *   dcol [R, nb*P] = w^T @ gc (in col's buffer), col2im'd into dx
 * so each chunk is two GEMMs whose long side is nb*P (rather than two
 * small GEMMs per image); db[o] sums row o of every image's g.  A chunk
 * holds at most BWK_CONV_CHUNK elements of col and of gc (at least one
 * image): its buffers stay small enough to be reused from the heap. */
#define BWK_CONV_CHUNK (INT64_C(1) << 17)
#define BWK_CONV_GEMM(SFX, TY)                                            \
    static int bwk_conv_gemm_##SFX(                                       \
        void *ctx, const TY *g, const TY *x, const TY *w, TY *dx, TY *dw,  \
        TY *db, int64_t N, int64_t C, int64_t H, int64_t W, int64_t O,     \
        int64_t KH, int64_t KW, int64_t OH, int64_t OW, int64_t st,        \
        int64_t pad, int64_t dil)                                         \
    {                                                                     \
        tb_dtype dt = sizeof(TY) == 4 ? TB_F32 : TB_F64;                  \
        int64_t R = C * KH * KW, P = OH * OW;                             \
        int64_t big = R > O ? R : O;                                      \
        int64_t nb = big * P > 0 ? BWK_CONV_CHUNK / (big * P) : 1;        \
        nb = nb > N ? N : nb;                                             \
        nb = nb < 1 ? 1 : nb;                                \
        int64_t L = nb * P;                                               \
        TY *col = tb_alloc((size_t)(R * L) * sizeof(TY));                 \
        TY *gc = tb_alloc((size_t)(O * L) * sizeof(TY));                  \
        TY *gt = tb_alloc((size_t)(O * L) * sizeof(TY));                  \
        TY *wt = tb_alloc((size_t)(O * R) * sizeof(TY));                  \
        TY *dwt = tb_alloc((size_t)(O * R) * sizeof(TY));                 \
        TY *dwa = tb_alloc((size_t)(O * R) * sizeof(TY));                 \
        int rc = col && gc && gt && wt && dwt && dwa ? 0 : TB_ENOMEM;     \
        if (rc == 0) {                                                    \
            memset(dwa, 0, (size_t)(O * R) * sizeof(TY));                 \
            bwk_transpose(w, wt, O, R, sizeof(TY));                       \
            for (int64_t o = 0; o < O; o++) {                             \
                double s = 0;                                             \
                for (int64_t n = 0; n < N; n++)                           \
                    s += bwk_rowsum_##SFX(g + (n * O + o) * P, P);        \
                db[o] = (TY)s;                                            \
            }                                                             \
        }                                                                 \
        for (int64_t n0 = 0; rc == 0 && n0 < N; n0 += nb) {               \
            int64_t m = N - n0 < nb ? N - n0 : nb, Lm = m * P;            \
            for (int64_t i = 0; i < m; i++) {                             \
                const TY *gn = g + (n0 + i) * O * P;                      \
                for (int64_t o = 0; o < O; o++)                           \
                    memcpy(gc + o * Lm + i * P, gn + o * P,               \
                           (size_t)P * sizeof(TY));                       \
                bwk_im2col_##SFX(x + (n0 + i) * C * H * W, col + i * P,   \
                                 Lm, C, H, W, KH, KW, OH, OW, st, pad,    \
                                 dil);                                    \
            }                                                             \
            rc = bwk_transpose_k(ctx, dt, gc, gt, O, Lm);                 \
            if (rc == 0)                                                  \
                rc = bwk_gemm(ctx, dt, col, gt, dwt, R, Lm, O);           \
            if (rc == 0) {                                                \
                bwk_acc_##SFX(dwa, dwt, O * R);                           \
                rc = bwk_gemm(ctx, dt, wt, gc, col, R, O, Lm);            \
            }                                                             \
            for (int64_t i = 0; rc == 0 && i < m; i++)                    \
                bwk_col2im_##SFX(col + i * P, dx + (n0 + i) * C * H * W,  \
                                 Lm, C, H, W, KH, KW, OH, OW, st, pad,    \
                                 dil);                                    \
        }                                                                 \
        if (rc == 0)                                                      \
            bwk_transpose(dwa, dw, R, O, sizeof(TY));                     \
        tb_free(col);                                                     \
        tb_free(gc);                                                      \
        tb_free(gt);                                                      \
        tb_free(wt);                                                      \
        tb_free(dwt);                                                     \
        tb_free(dwa);                                                     \
        return rc;                                                        \
    }
BWK_CONV_GEMM(f32, float)
BWK_CONV_GEMM(f64, double)

/* One body for both dtypes: SFX selects the typed functions. */
#define BWK_BODY(SFX, TY)                                                 \
    do {                                                                  \
        const TY *x0 = in[0].data, *x1 = op->n_in > 1 ? in[1].data : NULL; \
        const TY *x2 = op->n_in > 2 ? in[2].data : NULL;                  \
        const TY *x3 = op->n_in > 3 ? in[3].data : NULL;                  \
        TY *y0 = out[0].data, *y1 = op->n_out > 1 ? out[1].data : NULL;   \
        TY *y2 = op->n_out > 2 ? out[2].data : NULL;                      \
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
        case TB_OP_linear_backward: {                                     \
            int64_t M = ish[1].dim[0], K = ish[1].dim[1];                 \
            int64_t N = ish[2].dim[1];                                    \
            TY *gz = tb_alloc((size_t)(M * N) * sizeof(TY));              \
            if (!gz)                                                      \
                return TB_ENOMEM;                                         \
            for (int64_t i = 0; i < M * N; i++) {                         \
                TY gv = x0[i], yv = x3[i];                                \
                gz[i] = yv > 0 ? gv : (TY)0;                              \
            }                                                             \
            for (int64_t j = 0; j < N; j++) {                             \
                double s = 0;                                             \
                for (int64_t i = 0; i < M; i++)                           \
                    s += gz[i * N + j];                                   \
                y2[j] = (TY)s;                                            \
            }                                                             \
            int rc_ = bwk_product_gemm(ctx, dt, gz, x1, x2, y0, y1, M, K, \
                                       N);                                \
            tb_free(gz);                                                  \
            return rc_;                                                   \
        }                                                                 \
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
            return bwk_conv_gemm_##SFX(                                   \
                ctx, x0, x1, x2, y0, y1, y2, ish[1].dim[0],               \
                           ish[1].dim[1], ish[1].dim[2], ish[1].dim[3],   \
                           ish[2].dim[0], ish[2].dim[2], ish[2].dim[3],   \
                           ish[0].dim[2], ish[0].dim[3],                  \
                           (int64_t)full.v[0], (int64_t)full.v[1],        \
                           (int64_t)full.v[2]);                           \
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
