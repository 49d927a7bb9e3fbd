/* The cpu backend's reduction drivers: sum and mean (over all elements
 * or one axis) and log_softmax / softmax (over one axis); their rows are
 * the driver pairs of kreg.h's reduction and softmax families.  The
 * input is viewed as [outer, R, inner]; contiguous rows (inner 1) and
 * column tiles of a non-last axis are split over the threads; the inner
 * loops are the instance's tables (kernels.h). */
#include <string.h>

#include "drv.h"

/* Column tiles for reductions / log_softmax over a non-last axis: the
 * per-column accumulators live on the stack (no allocation in a kernel).
 * Tiles are at most TB_CPU_COL_TILE wide (TB_CPU_SUM_COL_TILE for sum
 * and mean: 96 KiB of a worker's stack; fewer passes over the rows),
 * and narrower when that gives each thread a tile (cpu_col_tile). */
#define CPU_COL_TILE_MIN 64

/* Column tile width for `outer` slabs of `inner` columns: `widest`
 * (TB_CPU_COL_TILE, or TB_CPU_SUM_COL_TILE for the sums), halved (down
 * to CPU_COL_TILE_MIN) while there are fewer tiles than threads. */
static void cpu_col_tile_w(const tb_cpu_ctx *c, int64_t outer, int64_t inner,
                           int64_t widest, int64_t *tile, int64_t *ntiles)
{
    int64_t w = widest;
    while (w > CPU_COL_TILE_MIN && outer * ((inner + w - 1) / w) < c->threads)
        w /= 2;
    *tile = w;
    *ntiles = (inner + w - 1) / w;
}

static void cpu_col_tile(const tb_cpu_ctx *c, int64_t outer, int64_t inner,
                         int64_t *tile, int64_t *ntiles)
{
    cpu_col_tile_w(c, outer, inner, TB_CPU_COL_TILE, tile, ntiles);
}

/* The input (esz-byte elements from x) viewed as [outer, R, inner],
 * the output (at o) as [outer, inner]; a non-last axis is split in
 * column tiles of `tile` columns, ntiles a slab. */
typedef struct cpu_axis_view {
    size_t esz;
    const char *x;
    char *o;
    int64_t outer, R, inner, tile, ntiles;
} cpu_axis_view;

/* Column tile `it` (0 <= it < outer * ntiles) of v: its slab *o, its
 * first column *j0 and its width *w. */
static inline void cpu_tile_at(const cpu_axis_view *v, int64_t it,
                               int64_t *o, int64_t *j0, int64_t *w)
{
    *o = it / v->ntiles;
    *j0 = (it % v->ntiles) * v->tile;
    *w = v->inner - *j0 < v->tile ? v->inner - *j0 : v->tile;
}

typedef struct cpu_red_job {
    tb_cpu_sum_fn row;
    tb_cpu_sumcols_fn cols;
    tb_cpu_sumrows_fn rows; /* short rows, several a vector; or NULL */
    tb_dtype dt;
    cpu_axis_view v;
    double scale; /* 1 for sum, 1/R for mean */
    double partial[TB_MAX_AXIS_VALUES]; /* global sum: one per part */
} cpu_red_job;

static void cpu_red_global_task(void *argp, int part, int nparts)
{
    cpu_red_job *j = argp;
    int64_t b, e;
    cpu_span_aligned(j->v.R, TB_CPU_SUM_BLOCK, part, nparts, &b, &e);
    j->partial[part] = e > b ? j->row(j->v.x + b * j->v.esz, e - b) : 0.0;
}

static void cpu_red_rows_task(void *argp, int part, int nparts)
{
    cpu_red_job *j = argp;
    int64_t b, e;
    cpu_span(j->v.outer, part, nparts, &b, &e);
    if (j->rows) {
        double s[256];
        for (int64_t o = b; o < e; o += 256) {
            const int64_t m = e - o < 256 ? e - o : 256;
            j->rows(j->v.x + o * j->v.R * j->v.esz, m, j->v.R, s);
            for (int64_t k = 0; k < m; k++)
                cpu_store(j->v.o, j->dt, o + k, s[k] * j->scale);
        }
        return;
    }
    for (int64_t o = b; o < e; o++)
        cpu_store(j->v.o, j->dt, o,
                  j->row(j->v.x + o * j->v.R * j->v.esz, j->v.R) * j->scale);
}

static void cpu_red_cols_task(void *argp, int part, int nparts)
{
    cpu_red_job *j = argp;
    const cpu_axis_view *v = &j->v;
    int64_t b, e;
    cpu_span(v->outer * v->ntiles, part, nparts, &b, &e);
    double acc[TB_CPU_SUM_COL_TILE];
    for (int64_t it = b; it < e; it++) {
        int64_t o, j0, w;
        cpu_tile_at(v, it, &o, &j0, &w);
        for (int64_t q = 0; q < w; q++)
            acc[q] = 0;
        j->cols(v->x + (o * v->R * v->inner + j0) * v->esz, v->R, v->inner,
                w, acc);
        for (int64_t q = 0; q < w; q++)
            cpu_store(v->o, j->dt, o * v->inner + j0 + q, acc[q] * j->scale);
    }
}

/* sum (mean=false) or mean over param 0 "axis" (absent: all elements).
 * keepdim only changes the output's shape, so only its size is checked. */
static int cpu_reduce(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, bool mean, int lv)
{
    int rc = cpu_begin(ctx, dt, in, 1, out);
    if (rc)
        return rc;
    tb_cpu_ctx *c = ctx;
    const tb_tensor *x = &in[0];
    bool has_axis;
    int64_t axis;
    if ((rc = cpu_param_int(p, 0, 0, &has_axis, &axis)))
        return rc;
    cpu_red_job j;
    memset(&j, 0, sizeof j);
    CPU_SLOT_AT(c->k[lv].sum[dt].isa, lv);
    j.row = c->k[lv].sum[dt].row;
    j.cols = c->k[lv].sum[dt].cols;
    j.dt = dt;
    j.v.esz = tb_dtype_size(dt);
    j.v.x = x->data;
    j.v.o = out->data;
    const int64_t n = cpu_numel(x);
    if (!has_axis) {
        if (cpu_numel(out) != 1)
            return TB_ESHAPE;
        j.v.R = n;
        int parts =
            cpu_parts(c, n, (n + TB_CPU_SUM_BLOCK - 1) / TB_CPU_SUM_BLOCK);
        parts = cpu_pool_run(c->pool, parts, cpu_red_global_task, &j);
        /* Fixed order: the result depends on the thread count only. */
        double s = 0;
        for (int i = 0; i < parts; i++)
            s += j.partial[i];
        cpu_store(j.v.o, dt, 0, mean ? s / (double)n : s);
        return 0;
    }
    int ax;
    if (tb_axis_norm(axis, x->ndim, &ax))
        return TB_EPARAM;
    j.v.R = x->shape[ax];
    j.v.outer = cpu_prod(x->shape, 0, ax);
    j.v.inner = cpu_prod(x->shape, ax + 1, x->ndim);
    if (cpu_numel(out) != j.v.outer * j.v.inner)
        return TB_ESHAPE;
    if (j.v.outer * j.v.inner == 0)
        return 0;
    j.scale = mean ? 1.0 / (double)j.v.R : 1.0;
    if (j.v.inner == 1 && j.v.R <= c->k[lv].sum[dt].short_n)
        j.rows = c->k[lv].sum[dt].rows;
    if (j.v.inner == 1) {
        cpu_pool_run(c->pool, cpu_parts(c, n, j.v.outer), cpu_red_rows_task,
                     &j);
    } else {
        cpu_col_tile_w(c, j.v.outer, j.v.inner, TB_CPU_SUM_COL_TILE, &j.v.tile,
                       &j.v.ntiles);
        cpu_pool_run(c->pool, cpu_parts(c, n, j.v.outer * j.v.ntiles),
                     cpu_red_cols_task, &j);
    }
    return 0;
}

/* ---- log_softmax ---- */

typedef struct cpu_lsm_job {
    tb_cpu_lsm_rows_fn rows;
    tb_cpu_lsm_cols_fn cols;
    cpu_axis_view v;
} cpu_lsm_job;

static void cpu_lsm_rows_task(void *argp, int part, int nparts)
{
    const cpu_lsm_job *j = argp;
    int64_t b, e;
    cpu_span(j->v.outer, part, nparts, &b, &e);
    if (e > b) {
        size_t off = (size_t)(b * j->v.R) * j->v.esz;
        j->rows(j->v.x + off, j->v.o + off, e - b, j->v.R);
    }
}

static void cpu_lsm_cols_task(void *argp, int part, int nparts)
{
    const cpu_lsm_job *j = argp;
    const cpu_axis_view *v = &j->v;
    int64_t b, e;
    cpu_span(v->outer * v->ntiles, part, nparts, &b, &e);
    for (int64_t it = b; it < e; it++) {
        int64_t o, j0, w;
        cpu_tile_at(v, it, &o, &j0, &w);
        size_t off = (size_t)(o * v->R * v->inner + j0) * v->esz;
        j->cols(v->x + off, v->o + off, v->R, v->inner, w);
    }
}

/* log_softmax (soft false) or softmax (soft true) over param 0 "axis"
 * (default -1): one driver, the two ops' kernels share their online
 * max / sum (kernels_simd.h). */
static int cpu_log_softmax(void *ctx, const tb_tensor *in, tb_tensor *out,
                           const tb_params *p, tb_dtype dt, bool soft,
                           int lv)
{
    int rc = cpu_begin(ctx, dt, in, 1, out);
    if (rc)
        return rc;
    tb_cpu_ctx *c = ctx;
    const tb_tensor *x = &in[0];
    if (!tb_hostmem_same_shape(x, out))
        return TB_ESHAPE;
    int64_t axis;
    int ax;
    if ((rc = cpu_param_int(p, 0, -1, NULL, &axis)))
        return rc;
    if (tb_axis_norm(axis, x->ndim, &ax))
        return TB_EPARAM;
    CPU_SLOT_AT(soft ? c->k[lv].sm[dt].isa : c->k[lv].lsm[dt].isa, lv);
    cpu_lsm_job j = {
        .rows = soft ? c->k[lv].sm[dt].rows : c->k[lv].lsm[dt].rows,
        .cols = soft ? c->k[lv].sm[dt].cols : c->k[lv].lsm[dt].cols,
        .v = {.esz = tb_dtype_size(dt),
              .x = x->data,
              .o = out->data,
              .outer = cpu_prod(x->shape, 0, ax),
              .R = x->shape[ax],
              .inner = cpu_prod(x->shape, ax + 1, x->ndim)},
    };
    const int64_t n = cpu_numel(x);
    if (n == 0)
        return 0;
    const int64_t work = n * CPU_EXP_WEIGHT;
    if (j.v.inner == 1) {
        cpu_pool_run(c->pool, cpu_parts(c, work, j.v.outer),
                     cpu_lsm_rows_task, &j);
    } else {
        cpu_col_tile(c, j.v.outer, j.v.inner, &j.v.tile, &j.v.ntiles);
        cpu_pool_run(c->pool, cpu_parts(c, work, j.v.outer * j.v.ntiles),
                     cpu_lsm_cols_task, &j);
    }
    return 0;
}

/* ---- entry points ---- */

CPU_RUN(sum, cpu_reduce(ctx, in, out, p, dt, false, lv))
CPU_RUN(mean, cpu_reduce(ctx, in, out, p, dt, true, lv))
CPU_RUN(log_softmax, cpu_log_softmax(ctx, in, out, p, dt, false, lv))
CPU_RUN(softmax, cpu_log_softmax(ctx, in, out, p, dt, true, lv))

TB_CPU_ROWS_REDUCE(CPU_DEF)
TB_CPU_ROWS_SOFTMAX(CPU_DEF)
