/* bf16/f16 rows in parts that stay in the caches (half_bwd.h).
 *
 * layer_norm, rms_norm (rows of x's last dim D) and group_norm (samples,
 * x [N, C, ...]): each thread widens a few whole rows (samples) into
 * its own f32 scratch of about HP_ELEMS elements, runs the op's f32 row
 * of the level on them through the instance's single-threaded twin and
 * narrows the result: memory sees the 16-bit x and y once, the weights
 * (and bias) are widened once per call.  A row's (sample's) value does
 * not depend on the rows beside it in these f32 rows, so the bits are
 * those of half.c's whole-tensor path (tests/test_half_paths.c).
 * (layer_norm bf16 at 4096x1024 widened 4M elements into scratch, ran
 * the f32 row and narrowed: 7.6x the f32 row's own time.)  layer_norm
 * and rms_norm at avx2 and avx512, where the level's f32 row is
 * norm_avx2.c's, skip the scratch: half_norm_simd.h repeats that row's
 * operations on x widened in registers and narrows y as it goes (f16
 * layer_norm at 4096x1024: 1.90 -> 0.70 ms, bf16 1.95 -> 1.05 ms, tbench
 * ab, 1 thread, load ~10); at avx512 norm16_simd.h's 16-lane copy of
 * those loops (the same bits), bf16 at avx512bf16 narrowed by
 * vcvtne2ps2bf16 (norm_avx512bf16.c).  layer_norm_backward and
 * rms_norm_backward at avx512, where the level's f32 row is
 * norm_avx512.c's: its loops on the 16-bit g, x (w widened once)
 * (hp_norm_bw).  group_norm, batch_norm_backward and group_norm_backward
 * at avx512, where the level's f32 row is bnorm_avx512.c's: its parts
 * on the 16-bit tensors (hp_bnorm; bf16 at avx512bf16 narrowed by
 * vcvtne2ps2bf16, bnorm_avx512bf16.c); group_norm elsewhere in the
 * parts above.
 *
 * sum and mean over a non-last axis (x viewed as [outer, R, inner],
 * inner > 1): the f32 driver (drv_reduce.c) adds each column's rows in
 * f32 from 0 per block of TB_CPU_SUM_COL_ROWS rows, in row order, and
 * adds each block's sum into a double.  At avx2 and avx512 the level's
 * half_part_simd.h loops do those additions on values widened in
 * registers (1024x1024 bf16 over axis 0: 41 us, from 92 with the
 * scratch below, tbench ab, load 13 on 2 CPUs); at the scalar level
 * each block of 64 rows of a tile of up to HP_TILE columns is widened
 * into f32 scratch and handed to the level's f32 column sums
 * (k[isa].sum[f32].cols), one block per call.  Either way the same
 * additions in the same order, so the f32 row's bits, narrowed once
 * from (float)(acc * scale).
 *
 * max_pool2d, avg_pool2d and their backward with kernel 2, stride 2,
 * padding 0 at avx512 (where the level's f32 row is the avx512 one):
 * pool16.h's fused loops on the 16-bit planes, split over the threads
 * by planes, that row's bits; other geometries and levels: half_rows.c's
 * planes in parts. */
#include <string.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "../../ops/half.h"
#include "backends/cpu/cpu_config.h"
#include "bnorm.h"
#include "cpu_internal.h"
#include "drv.h"
#include "half_bwd.h"
#include "half_lsm.h"
#include "half_part.h"
#include "isa.h"
#include "kernels.h"
#include "kreg.h"
#include "norm.h"
#include "pool16.h"

/* f32 elements of a norm part's x (and as many of its y) */
#define HP_ELEMS 8192
/* widest column tile of the non-last-axis sums (the f32 driver's rows
 * are read whole up to TB_CPU_SUM_COL_TILE; here 64 rows of a tile are
 * widened at once, 64 * 1024 f32 = 256 KiB) */
#define HP_TILE 1024

/* ---- norms ---- */

typedef struct {
    void *serial;
    tb_kernel_fn f32;
    tb_cpu_half_cvt cv;
    const tb_tensor *in;
    tb_tensor *out;
    const tb_params *p;
    const tb_tensor *fw; /* f32 twins of in[1..n_in-1] */
    int n_in;
    bool fused; /* tb_cpu_half_norm_rows_avx2, no scratch */
    bool fused512; /* tb_cpu_half_norm_rows_avx512 instead */
    bool fusedbf16; /* bf16: tb_cpu_half_norm_rows_avx512bf16 instead */
    tb_dtype dt;
    float eps;
    bool group; /* group_norm: rows are samples, x keeps its dims */
    int64_t rows, rlen, rpc;
    int rc[TB_MAX_AXIS_VALUES];
} hp_norm_job;

static void hp_norm_part(void *arg, int part, int nparts)
{
    hp_norm_job *j = arg;
    int64_t nc = (j->rows + j->rpc - 1) / j->rpc, c0, c1;
    tb_cpu_span(nc, 1, part, nparts, &c0, &c1);
    if (c1 <= c0)
        return;
#if TB_CPU_HAVE_AVX2
    if (j->fused) {
        const int64_t r0 = c0 * j->rpc;
        const int64_t r1 = c1 * j->rpc < j->rows ? c1 * j->rpc : j->rows;
#if TB_CPU_HAVE_AVX512BF16
        if (j->fusedbf16) {
            tb_cpu_half_norm_rows_avx512bf16(
                (const uint16_t *)j->in[0].data + r0 * j->rlen,
                (uint16_t *)j->out[0].data + r0 * j->rlen, r1 - r0, j->rlen,
                j->fw[1].data, j->n_in > 2 ? j->fw[2].data : NULL, j->eps);
            return;
        }
#endif
#if TB_CPU_HAVE_AVX512
        void (*rows)(tb_dtype, const uint16_t *, uint16_t *, int64_t,
                     int64_t, const float *, const float *, float) =
            j->fused512 ? tb_cpu_half_norm_rows_avx512
                        : tb_cpu_half_norm_rows_avx2;
#else
        void (*rows)(tb_dtype, const uint16_t *, uint16_t *, int64_t,
                     int64_t, const float *, const float *, float) =
            tb_cpu_half_norm_rows_avx2;
#endif
        rows(j->dt, (const uint16_t *)j->in[0].data + r0 * j->rlen,
            (uint16_t *)j->out[0].data + r0 * j->rlen, r1 - r0, j->rlen,
            j->fw[1].data, j->n_in > 2 ? j->fw[2].data : NULL, j->eps);
        return;
    }
#endif
    float *buf = tb_alloc((size_t)(2 * j->rpc * j->rlen) * sizeof *buf);
    if (!buf) {
        j->rc[part] = TB_ENOMEM;
        return;
    }
    float *yb = buf + j->rpc * j->rlen;
    tb_tensor tin[3], tout;
    for (int64_t c = c0; c < c1; c++) {
        int64_t r0 = c * j->rpc;
        int64_t nr = j->rows - r0 < j->rpc ? j->rows - r0 : j->rpc;
        int64_t off = r0 * j->rlen, len = nr * j->rlen;
        tb_shape s = tb_tensor_shape(&j->in[0]);
        if (j->group) {
            s.dim[0] = nr;
        } else {
            s.ndim = 2;
            s.dim[0] = nr;
            s.dim[1] = j->rlen;
        }
        tb_tensor_init(&tin[0], TB_F32, &s);
        tin[0].data = buf;
        for (int i = 1; i < j->n_in; i++)
            tin[i] = j->fw[i];
        tb_tensor_init(&tout, TB_F32, &s);
        tout.data = yb;
        j->cv.widen((const uint16_t *)j->in[0].data + off, buf, len);
        int rc = j->f32(j->serial, tin, &tout, j->p);
        if (rc) {
            j->rc[part] = rc;
            break;
        }
        j->cv.narrow(yb, (uint16_t *)j->out[0].data + off, len);
    }
    tb_free(buf);
}

static int hp_norm(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                   tb_kernel_fn f32, tb_cpu_half_cvt cv,
                   const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    hp_norm_job j = {.serial = tb_cpu_serial(ctx), .f32 = f32, .cv = cv,
                     .in = in, .out = out, .p = p, .n_in = op->n_in,
                     .group = op->id == TB_OP_group_norm, .dt = dt};
#if TB_CPU_HAVE_AVX2
    /* layer_norm and rms_norm fused where the level's f32 row is
     * norm_avx2.c's, whose operations half_norm_simd.h repeats */
    j.fused = isa >= TB_ISA_AVX2 &&
              ((op->id == TB_OP_layer_norm &&
                f32 == TB_CPU_KFN(layer_norm, f32, avx2)) ||
               (op->id == TB_OP_rms_norm &&
                f32 == TB_CPU_KFN(rms_norm, f32, avx2)));
    j.fused512 = j.fused && TB_CPU_HAVE_AVX512 && isa >= TB_ISA_AVX512;
    j.fusedbf16 = j.fused512 && TB_CPU_HAVE_AVX512BF16 && dt == TB_BF16 &&
                  isa >= TB_ISA_AVX512BF16;
    j.eps = (float)tb_cpu_param(p, op->id, 0);
#else
    (void)isa;
#endif
    const int64_t n = tb_tensor_numel(&in[0]);
    if (!j.serial || n == 0)
        return 1; /* (empty: the whole path's rules) */
    j.rlen = j.group ? n / in[0].shape[0] : in[0].shape[in[0].ndim - 1];
    j.rows = n / j.rlen;
    j.rpc = HP_ELEMS / j.rlen > 1 ? HP_ELEMS / j.rlen : 1;
    if (j.rpc > j.rows)
        j.rpc = j.rows;
    tb_tensor fw[3];
    memset(fw, 0, sizeof fw);
    int rc = 0;
    for (int i = 1; i < op->n_in && !rc; i++) {
        tb_shape s = tb_tensor_shape(&in[i]);
        tb_tensor_init(&fw[i], TB_F32, &s);
        size_t bytes = tb_tensor_nbytes(&fw[i]);
        fw[i].data = tb_alloc(bytes ? bytes : sizeof(float));
        if (!fw[i].data) {
            rc = TB_ENOMEM;
            break;
        }
        fw[i].owns = true;
        cv.widen(in[i].data, fw[i].data, tb_tensor_numel(&in[i]));
    }
    j.fw = fw;
    if (!rc) {
        tb_cpu_count_launch(ctx);
        tb_cpu_parallel(ctx, n, (j.rows + j.rpc - 1) / j.rpc, hp_norm_part,
                        &j);
        for (int i = 0; i < TB_MAX_AXIS_VALUES && !rc; i++)
            rc = j.rc[i];
    }
    for (int i = 1; i < op->n_in; i++)
        tb_tensor_destroy(&fw[i]);
    return rc;
}

/* layer_norm_backward, rms_norm_backward at avx512 (where the level's
 * f32 row is norm_avx512.c's): its loops on g, x, w widened in
 * registers, dx narrowed as stored, dw and db from their f32 sums (the
 * bits of the f32 row on the widened inputs, narrowed) */
static int hp_norm_bw(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                      tb_kernel_fn f32, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
#if TB_CPU_HAVE_AVX512
    if (isa >= TB_ISA_AVX512 &&
        ((op->id == TB_OP_layer_norm_backward &&
          f32 == TB_CPU_KFN(layer_norm_backward, f32, avx512)) ||
         (op->id == TB_OP_rms_norm_backward &&
          f32 == TB_CPU_KFN(rms_norm_backward, f32, avx512))))
        return tb_cpu_norm_bw_run(
            ctx, op->id, dt, in, out, p,
#if TB_CPU_HAVE_AVX512BF16
            dt == TB_BF16 && isa >= TB_ISA_AVX512BF16
                ? tb_cpu_norm_bw_chunks_bf16_avx512bf16() :
#endif
                tb_cpu_norm_bw_chunks_avx512(dt),
            tb_cpu_norm_bw_sum_avx512);
#else
    (void)ctx, (void)op, (void)dt, (void)isa, (void)f32, (void)in;
    (void)out, (void)p;
#endif
    return 1;
}

/* group_norm, batch_norm_backward, group_norm_backward at avx512 (where
 * the level's f32 row is bnorm_avx512.c's): its f32 parts' loops on the
 * 16-bit values (tb_cpu_bnorm_parts16_avx512), no scratch: the bits of
 * that row on the widened tensors, narrowed */
static int hp_bnorm(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                    tb_kernel_fn f32, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
#if TB_CPU_HAVE_AVX512
    const tb_op_id id = op->id;
    const tb_kernel_fn want =
        id == TB_OP_group_norm ? TB_CPU_KFN(group_norm, f32, avx512)
        : id == TB_OP_batch_norm_backward
            ? TB_CPU_KFN(batch_norm_backward, f32, avx512)
            : TB_CPU_KFN(group_norm_backward, f32, avx512);
    if (isa >= TB_ISA_AVX512 && f32 == want)
        return tb_cpu_bnorm_run(
            ctx, id, dt, in, out, p,
#if TB_CPU_HAVE_AVX512BF16
            dt == TB_BF16 && isa >= TB_ISA_AVX512BF16
                ? tb_cpu_bnorm_parts_bf16_avx512bf16() :
#endif
                tb_cpu_bnorm_parts16_avx512(dt));
#else
    (void)ctx, (void)op, (void)dt, (void)isa, (void)f32, (void)in;
    (void)out, (void)p;
#endif
    return 1;
}

/* ---- sum and mean over a non-last axis ---- */

typedef struct {
    tb_cpu_sumcols_fn cols;
    tb_cpu_half_cols_fn cols16; /* the level's direct loops, or NULL */
    tb_cpu_widen_fn widen;
    tb_cpu_narrow_fn narrow; /* the level's, or NULL */
    tb_dtype dt;
    const uint16_t *x;
    uint16_t *o;
    int64_t outer, R, inner, tile, ntiles;
    double scale;
    int rc[TB_MAX_AXIS_VALUES];
} hp_cols_job;

static void hp_cols_part(void *arg, int part, int nparts)
{
    hp_cols_job *j = arg;
    int64_t b, e;
    tb_cpu_span(j->outer * j->ntiles, 1, part, nparts, &b, &e);
    if (e <= b)
        return;
    float *buf = j->cols16 ? NULL
                           : tb_alloc((size_t)(TB_CPU_SUM_COL_ROWS * j->tile) *
                                      sizeof *buf);
    if (!buf && !j->cols16) {
        j->rc[part] = TB_ENOMEM;
        return;
    }
    double acc[HP_TILE];
    for (int64_t it = b; it < e; it++) {
        int64_t o = it / j->ntiles, j0 = (it % j->ntiles) * j->tile;
        int64_t w = j->inner - j0 < j->tile ? j->inner - j0 : j->tile;
        const uint16_t *x = j->x + o * j->R * j->inner + j0;
        for (int64_t q = 0; q < w; q++)
            acc[q] = 0;
        if (j->cols16)
            j->cols16(x, j->R, j->inner, w, acc);
        for (int64_t r0 = 0; !j->cols16 && r0 < j->R;
             r0 += TB_CPU_SUM_COL_ROWS) {
            int64_t nr = j->R - r0 < TB_CPU_SUM_COL_ROWS
                             ? j->R - r0
                             : TB_CPU_SUM_COL_ROWS;
            for (int64_t r = 0; r < nr; r++)
                j->widen(x + (r0 + r) * j->inner, buf + r * w, w);
            j->cols(buf, nr, w, w, acc);
        }
        uint16_t *out = j->o + o * j->inner + j0;
        if (j->narrow) { /* the tile narrowed by vectors: the same bits */
            float f[HP_TILE];
            for (int64_t q = 0; q < w; q++)
                f[q] = (float)(acc[q] * j->scale);
            j->narrow(f, out, w);
            continue;
        }
        for (int64_t q = 0; q < w; q++) {
            float f = (float)(acc[q] * j->scale);
            out[q] = j->dt == TB_BF16 ? tb_f32_to_bf16(f) : tb_f32_to_f16(f);
        }
    }
    tb_free(buf);
}

static int hp_cols(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                   tb_cpu_half_cvt cv, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    int ax;
    if (!p || !tb_params_has(p, 0) ||
        tb_axis_norm((int64_t)p->v[0], in[0].ndim, &ax) ||
        ax == in[0].ndim - 1)
        return 1;
    tb_cpu_ctx *c = ctx;
    hp_cols_job j = {.cols = c->k[isa].sum[TB_F32].cols, .widen = cv.widen,
                     .narrow = cv.narrow, .dt = dt, .x = in[0].data, .o = out[0].data,
                     .outer = 1, .R = in[0].shape[ax], .inner = 1};
    for (int d = 0; d < ax; d++)
        j.outer *= in[0].shape[d];
    for (int d = ax + 1; d < in[0].ndim; d++)
        j.inner *= in[0].shape[d];
#if TB_CPU_HAVE_AVX512
    if (isa == TB_ISA_AVX512 || isa == TB_ISA_AVX512BF16)
        j.cols16 = tb_cpu_half_cols_avx512(dt);
#endif
#if TB_CPU_HAVE_AVX2
    if (isa == TB_ISA_AVX2)
        j.cols16 = tb_cpu_half_cols_avx2(dt);
#endif
    if (!j.cols || j.outer * j.inner == 0 || j.R == 0)
        return 1; /* empty: the whole path's rules */
    j.scale = op->id == TB_OP_mean ? 1.0 / (double)j.R : 1.0;
    /* tiles as wide as HP_TILE, narrower (to 64) while there are fewer
     * than threads (drv_reduce.c's rule; the tile does not change the
     * values) */
    j.tile = j.inner < HP_TILE ? j.inner : HP_TILE;
    while (j.tile > 64 &&
           j.outer * ((j.inner + j.tile - 1) / j.tile) < c->threads)
        j.tile = (j.tile / 2 + 31) / 32 * 32;
    j.ntiles = (j.inner + j.tile - 1) / j.tile;
    tb_cpu_count_launch(ctx);
    tb_cpu_parallel(ctx, tb_tensor_numel(&in[0]), j.outer * j.ntiles,
                    hp_cols_part, &j);
    for (int i = 0; i < TB_MAX_AXIS_VALUES; i++)
        if (j.rc[i])
            return j.rc[i];
    return 0;
}

/* ---- the pools with 2x2 windows of stride 2 at avx512 (pool16.h) ---- */

typedef struct {
    bool f16, is_max, bwd;
    const uint16_t *g, *x;
    uint16_t *o;
    int64_t planes, H, W, OH, OW;
} hp_pool_job;

static void hp_pool_part(void *arg, int part, int nparts)
{
#if TB_CPU_HAVE_AVX512
    const hp_pool_job *j = arg;
    int64_t b, e;
    tb_cpu_span(j->planes, 1, part, nparts, &b, &e);
    if (e <= b)
        return;
    const int64_t in = j->H * j->W, on = j->OH * j->OW;
    if (j->bwd)
        tb_cpu_pool16_bwd_avx512(j->f16, j->is_max, j->g + b * on,
                                 j->x + b * in, j->o + b * in, e - b, j->H,
                                 j->W, j->OH, j->OW);
    else
        tb_cpu_pool16_fwd_avx512(j->f16, j->is_max, j->x + b * in,
                                 j->o + b * on, e - b, j->H, j->W, j->OH,
                                 j->OW);
#else
    (void)arg, (void)part, (void)nparts;
#endif
}

/* max_pool2d, avg_pool2d and their backward with kernel 2, stride 2,
 * padding 0 where the level's f32 row is the avx512 one: pool16.h's
 * fused loops (that row's bits); else 1 (the parts) */
static int hp_pool(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                   tb_kernel_fn f32, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
#if TB_CPU_HAVE_AVX512
    const tb_op_id id = op->id;
    const bool bwd = id == TB_OP_max_pool2d_backward ||
                     id == TB_OP_avg_pool2d_backward;
    const tb_kernel_fn want =
        id == TB_OP_max_pool2d            ? TB_CPU_KFN(max_pool2d, f32, avx512)
        : id == TB_OP_avg_pool2d          ? TB_CPU_KFN(avg_pool2d, f32, avx512)
        : id == TB_OP_max_pool2d_backward ? TB_CPU_KFN(max_pool2d_backward,
                                                       f32, avx512)
        : id == TB_OP_avg_pool2d_backward ? TB_CPU_KFN(avg_pool2d_backward,
                                                       f32, avx512)
                                          : NULL;
    if (isa < TB_ISA_AVX512 || !want || f32 != want)
        return 1;
    const int64_t k = (int64_t)tb_cpu_param(p, id, 0);
    const int64_t s = p && tb_params_has(p, 1) ? (int64_t)p->v[1] : k;
    const tb_tensor *x = &in[bwd ? 1 : 0], *y = bwd ? &in[0] : &out[0];
    if (k != 2 || s != 2 || (int64_t)tb_cpu_param(p, id, 2) != 0 ||
        x->ndim != 4 || y->ndim != 4 || x->shape[3] >= TB_CPU_POOL_SIMD_MAX_W ||
        tb_tensor_numel(x) == 0 || tb_tensor_numel(y) == 0)
        return 1;
    hp_pool_job j = {.f16 = dt == TB_F16,
                     .is_max = id == TB_OP_max_pool2d ||
                               id == TB_OP_max_pool2d_backward,
                     .bwd = bwd, .g = bwd ? in[0].data : NULL,
                     .x = x->data, .o = out[0].data,
                     .planes = x->shape[0] * x->shape[1], .H = x->shape[2],
                     .W = x->shape[3], .OH = y->shape[2], .OW = y->shape[3]};
    tb_cpu_count_launch(ctx);
    tb_cpu_parallel(ctx, tb_tensor_numel(x) + tb_tensor_numel(y), j.planes,
                    hp_pool_part, &j);
    return 0;
#else
    (void)ctx, (void)op, (void)dt, (void)isa, (void)f32, (void)in;
    (void)out, (void)p;
    return 1;
#endif
}

int tb_cpu_half_part(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                     tb_kernel_fn f32, tb_cpu_half_cvt cv,
                     const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    switch (op->id) {
    case TB_OP_conv2d: /* f16, bf16 at avx512: drv_conv.c's direct loops */
    case TB_OP_conv2d_nobias:
        if ((dt == TB_F16 || dt == TB_BF16) && isa == TB_ISA_AVX512)
            return tb_cpu_conv2d_h16(ctx, in, out, p, dt,
                                     op->id == TB_OP_conv2d);
        return 1;
    case TB_OP_group_norm:
    case TB_OP_batch_norm_backward:
    case TB_OP_group_norm_backward: {
        const int rc = hp_bnorm(ctx, op, dt, isa, f32, in, out, p);
        if (rc != 1)
            return rc;
        if (op->id == TB_OP_group_norm)
            return hp_norm(ctx, op, dt, isa, f32, cv, in, out, p);
        return tb_cpu_half_units(ctx, op, f32, cv, in, out, p);
    }
    case TB_OP_layer_norm:
    case TB_OP_rms_norm:
        return hp_norm(ctx, op, dt, isa, f32, cv, in, out, p);
    case TB_OP_layer_norm_backward:
    case TB_OP_rms_norm_backward:
        return hp_norm_bw(ctx, op, dt, isa, f32, in, out, p);
    case TB_OP_sum:
    case TB_OP_mean:
        return hp_cols(ctx, op, dt, isa, cv, in, out, p);
    case TB_OP_max_pool2d:
    case TB_OP_avg_pool2d:
    case TB_OP_max_pool2d_backward:
    case TB_OP_avg_pool2d_backward:
        if (hp_pool(ctx, op, dt, isa, f32, in, out, p) == 0)
            return 0;
        return tb_cpu_half_units(ctx, op, f32, cv, in, out, p);
    case TB_OP_softmax: /* L1 blocks on the f32 row function first */
    case TB_OP_log_softmax:
    case TB_OP_log_softmax_backward: {
        const int rc = tb_cpu_half_lsm(ctx, op, dt, isa, f32, cv, in, out, p);
        if (rc != 1)
            return rc;
    }
    /* fall through */
    default: /* softmax's other axes: half_rows.c */
        return tb_cpu_half_units(ctx, op, f32, cv, in, out, p);
    }
}

tb_cpu_half_short_fn tb_cpu_half_short_get(tb_dtype dt, int isa,
                                           int64_t *max_n)
{
    (void)dt;
#if TB_CPU_HAVE_AVX512
    if (isa == TB_ISA_AVX512 || isa == TB_ISA_AVX512BF16) {
        *max_n = 16;
        return tb_cpu_half_short_avx512(dt);
    }
#endif
#if TB_CPU_HAVE_AVX2
    if (isa == TB_ISA_AVX2) {
        *max_n = 8;
        return tb_cpu_half_short_avx2(dt);
    }
#endif
    (void)isa;
    *max_n = 0;
    return NULL;
}

tb_cpu_half_colbin_fn tb_cpu_half_colbin_get(tb_dtype dt, int isa)
{
    (void)dt;
#if TB_CPU_HAVE_AVX512
    if (isa == TB_ISA_AVX512 || isa == TB_ISA_AVX512BF16)
        return tb_cpu_half_colbin_avx512(dt);
#endif
#if TB_CPU_HAVE_AVX2
    if (isa == TB_ISA_AVX2)
        return tb_cpu_half_colbin_avx2(dt);
#endif
    (void)isa;
    return NULL;
}
