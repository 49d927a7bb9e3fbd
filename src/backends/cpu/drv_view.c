/* The cpu backend's view rows (kreg.h's TB_CPU_VIEW_ROWS): the kernels
 * of a case whose inputs are views of larger buffers (a config's
 * "layout": transposed, strided or sliced, ops/tensor.h).  No input is
 * copied whole.
 *
 * Element-wise ops (every input of the output's shape) gather their
 * inputs through the strides, VIEW_BLOCK elements at a time, into
 * buffers that stay in L1, and run the pair's portable C row on each
 * block on the instance's single-threaded twin, writing the (contiguous)
 * output in place, as half.c's blocks do: the values are the C row's on
 * contiguous inputs, bit for bit.  Reductions (sum, mean, along an axis
 * or over all) and softmax / log_softmax walk lines along the axis with
 * its stride and compute in double.  Matmul: at avx2 and avx512 the
 * native GEMM reads each operand in place, a transposed one through its
 * transpose flag, a sliced one through its leading dim, batch by batch;
 * the portable row walks any strides.  Every row splits its work over
 * the instance's threads and counts one launch. */
#include <string.h>

#include "drv.h"

/* Elements per gathered block: two inputs of f64 are 16 KiB; a tile of
 * the last two dims is VIEW_TILE x VIEW_TILE of them. */
#define VIEW_BLOCK 1024
#define VIEW_TILE 32

/* Copy n elements of view t (f32 or f64), from row-major index start,
 * into dst (contiguous): along the last dim at its stride, an odometer
 * over the rest. */
static void view_gather(const tb_tensor *t, int64_t start, int64_t n,
                        void *dst)
{
    const int nd = t->ndim;
    const bool f32 = t->dtype == TB_F32;
    if (nd == 0) {
        memcpy(dst, t->data, f32 ? sizeof(float) : sizeof(double));
        return;
    }
    int64_t idx[TB_MAX_DIMS], off = 0, r = start;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = r % t->shape[d];
        r /= t->shape[d];
        off += idx[d] * t->strides[d];
    }
    const int64_t len = t->shape[nd - 1], s = t->strides[nd - 1];
    for (int64_t done = 0; done < n;) {
        int64_t run = len - idx[nd - 1];
        if (run > n - done)
            run = n - done;
        if (f32) {
            const float *x = (const float *)t->data + off;
            float *o = (float *)dst + done;
            for (int64_t k = 0; k < run; k++)
                o[k] = x[k * s];
        } else {
            const double *x = (const double *)t->data + off;
            double *o = (double *)dst + done;
            for (int64_t k = 0; k < run; k++)
                o[k] = x[k * s];
        }
        done += run;
        off += run * s;
        if ((idx[nd - 1] += run) < len)
            continue;
        off -= len * s;
        idx[nd - 1] = 0;
        for (int d = nd - 2; d >= 0; d--) {
            off += t->strides[d];
            if (++idx[d] < t->shape[d])
                break;
            off -= t->strides[d] * t->shape[d];
            idx[d] = 0;
        }
    }
}

/* Element offset of line li of view t: the lines run along dim ax, and
 * li counts them in row-major order of the other dims. */
static int64_t view_line(const tb_tensor *t, int ax, int64_t li)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (d == ax)
            continue;
        off += li % t->shape[d] * t->strides[d];
        li /= t->shape[d];
    }
    return off;
}

/* Offsets of batch bi in a view: its row-major index over dims
 * [0, nd - 2). */
static int64_t view_batch(const tb_tensor *t, int64_t bi)
{
    int64_t off = 0;
    for (int d = t->ndim - 3; d >= 0; d--) {
        off += bi % t->shape[d] * t->strides[d];
        bi /= t->shape[d];
    }
    return off;
}

/* ---- element-wise: blocks through the pair's C row ---- */

/* A part's error in rc[part] (parts: at most the threads axis's). */
typedef struct view_ew_job {
    const tb_tensor *in; /* n_in views of out's shape */
    tb_tensor *out;      /* contiguous, n elements */
    int64_t n;
    int n_in;
    const tb_params *p;
    tb_kernel_fn fn; /* the pair's C row, called with serial */
    void *serial;
    int rc[TB_MAX_AXIS_VALUES];
} view_ew_job;

static void view_ew_part(void *arg, int part, int nparts)
{
    view_ew_job *j = arg;
    const int64_t nb = (j->n + VIEW_BLOCK - 1) / VIEW_BLOCK;
    const size_t es = tb_dtype_size(j->out->dtype);
    int64_t b0, b1;
    cpu_span(nb, part, nparts, &b0, &b1);
    _Alignas(64) double buf[2][VIEW_BLOCK];
    tb_tensor tin[2], tout;
    for (int64_t b = b0; b < b1; b++) {
        const int64_t off = b * VIEW_BLOCK;
        const int64_t len = j->n - off < VIEW_BLOCK ? j->n - off
                                                    : VIEW_BLOCK;
        const tb_shape s = {1, {len}};
        for (int i = 0; i < j->n_in; i++) {
            tb_tensor_init(&tin[i], j->in[i].dtype, &s);
            tin[i].data = buf[i];
            view_gather(&j->in[i], off, len, buf[i]);
        }
        tb_tensor_init(&tout, j->out->dtype, &s);
        tout.data = (char *)j->out->data + (size_t)off * es;
        int rc = j->fn(j->serial, tin, &tout, j->p);
        if (rc) {
            j->rc[part] = rc;
            return;
        }
    }
}

/* Copy the h x w tile at offset off of view t (f32 or f64) into dst,
 * row-major, reading down its columns when they are its shorter stride
 * (a transposed view: memory in order). */
static void view_gather_tile(const tb_tensor *t, int64_t off, int64_t h,
                             int64_t w, void *dst)
{
    const int nd = t->ndim;
    const int64_t sr = t->strides[nd - 2], sc = t->strides[nd - 1];
    if (t->dtype == TB_F32) {
        const float *x = (const float *)t->data + off;
        for (int64_t c = 0; c < w; c++)
            for (int64_t r = 0; r < h; r++)
                ((float *)dst)[r * w + c] = x[r * sr + c * sc];
        return;
    }
    const double *x = (const double *)t->data + off;
    for (int64_t c = 0; c < w; c++)
        for (int64_t r = 0; r < h; r++)
            ((double *)dst)[r * w + c] = x[r * sr + c * sc];
}

/* Inputs whose rows are their longer stride (transposed): the output in
 * tiles of the last two dims, each input's tile read down its columns,
 * the C row on the tile, the tile written row by row.  Whole cache
 * lines on both sides, where a row-major gather would read one element
 * per line. */
static void view_ew_tiles(void *arg, int part, int nparts)
{
    view_ew_job *j = arg;
    const int nd = j->out->ndim;
    const int64_t R = j->out->shape[nd - 2], C = j->out->shape[nd - 1];
    const int64_t nr = (R + VIEW_TILE - 1) / VIEW_TILE;
    const int64_t nc = (C + VIEW_TILE - 1) / VIEW_TILE;
    const size_t es = tb_dtype_size(j->out->dtype);
    int64_t t0, t1;
    cpu_span(j->n / (R * C) * nr * nc, part, nparts, &t0, &t1);
    _Alignas(64) double buf[3][VIEW_BLOCK];
    tb_tensor tin[2], tout;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t bi = t / (nr * nc), r0 = t / nc % nr * VIEW_TILE;
        const int64_t c0 = t % nc * VIEW_TILE;
        const int64_t h = R - r0 < VIEW_TILE ? R - r0 : VIEW_TILE;
        const int64_t w = C - c0 < VIEW_TILE ? C - c0 : VIEW_TILE;
        const tb_shape s = {1, {h * w}};
        for (int i = 0; i < j->n_in; i++) {
            const tb_tensor *x = &j->in[i];
            tb_tensor_init(&tin[i], x->dtype, &s);
            tin[i].data = buf[i];
            view_gather_tile(x, view_batch(x, bi) + r0 * x->strides[nd - 2] +
                                    c0 * x->strides[nd - 1],
                             h, w, buf[i]);
        }
        tb_tensor_init(&tout, j->out->dtype, &s);
        tout.data = buf[2];
        int rc = j->fn(j->serial, tin, &tout, j->p);
        if (rc) {
            j->rc[part] = rc;
            return;
        }
        for (int64_t r = 0; r < h; r++)
            memcpy((char *)j->out->data + ((bi * R + r0 + r) * C + c0) * es,
                   (const char *)buf[2] + (size_t)(r * w) * es,
                   (size_t)w * es);
    }
}

static int view_ew(void *ctx, tb_op_id id, tb_dtype dt, const tb_tensor *in,
                   tb_tensor *out, const tb_params *p)
{
    const tb_op *op = tb_op_get(id);
    int rc = cpu_begin_views(ctx, dt, in, op->n_in, out, true);
    if (rc)
        return rc;
    const tb_cpu_krow *row = tb_cpu_krow_c(id, dt);
    view_ew_job j = {.serial = tb_cpu_serial(ctx), .fn = row ? row->fn : NULL,
                     .n_in = op->n_in, .in = in, .out = out, .p = p,
                     .n = cpu_numel(out)};
    if (!j.serial || !j.fn)
        return TB_EINVAL;
    for (int i = 0; i < op->n_in; i++)
        if (!tb_hostmem_same_shape(&in[i], out))
            return TB_ESHAPE;
    const int nd = out->ndim;
    if (nd >= 2 && in[0].strides[nd - 2] < in[0].strides[nd - 1])
        tb_cpu_parallel(ctx, j.n * 2, (j.n + VIEW_BLOCK - 1) / VIEW_BLOCK,
                        view_ew_tiles, &j);
    else
        tb_cpu_parallel(ctx, j.n * 2, (j.n + VIEW_BLOCK - 1) / VIEW_BLOCK,
                        view_ew_part, &j);
    for (int i = 0; i < TB_MAX_AXIS_VALUES; i++)
        if (j.rc[i])
            return j.rc[i];
    return 0;
}

/* ---- reductions and softmax: lines along the axis ---- */

typedef struct view_line_job {
    const tb_tensor *x;
    tb_tensor *out;
    tb_op_id id;
    int ax;
    int64_t len, lines;
    double part_sum[TB_MAX_AXIS_VALUES]; /* sum / mean over all */
    bool all;
} view_line_job;

static double view_at(const tb_tensor *t, int64_t off)
{
    return t->dtype == TB_F32 ? ((const float *)t->data)[off]
                              : ((const double *)t->data)[off];
}

/* One line of softmax / log_softmax (max, sum of exps, write). */
static void view_softmax_line(const view_line_job *j, int64_t xo,
                              int64_t oo)
{
    const int64_t s = j->x->strides[j->ax], so = j->out->strides[j->ax];
    double m = -INFINITY, sum = 0;
    for (int64_t k = 0; k < j->len; k++)
        m = fmax(m, view_at(j->x, xo + k * s));
    for (int64_t k = 0; k < j->len; k++)
        sum += exp(view_at(j->x, xo + k * s) - m);
    const double ls = log(sum);
    for (int64_t k = 0; k < j->len; k++) {
        const double v = view_at(j->x, xo + k * s) - m;
        cpu_store(j->out->data, j->out->dtype, oo + k * so,
                  j->id == TB_OP_softmax ? exp(v) / sum : v - ls);
    }
}

static void view_line_part(void *arg, int part, int nparts)
{
    view_line_job *j = arg;
    int64_t b, e;
    cpu_span(j->lines, part, nparts, &b, &e);
    const int64_t s = j->x->strides[j->ax];
    double total = 0;
    for (int64_t li = b; li < e; li++) {
        const int64_t xo = view_line(j->x, j->ax, li);
        if (j->id == TB_OP_softmax || j->id == TB_OP_log_softmax) {
            view_softmax_line(j, xo, view_line(j->out, j->ax, li));
            continue;
        }
        double acc = 0;
        for (int64_t k = 0; k < j->len; k++)
            acc += view_at(j->x, xo + k * s);
        if (j->all)
            total += acc;
        else
            cpu_store(j->out->data, j->out->dtype, li,
                      j->id == TB_OP_mean ? acc / (double)j->len : acc);
    }
    j->part_sum[part] = total;
}

/* sum / mean (axis or all, keepdim) and softmax / log_softmax (axis). */
static int view_lines(void *ctx, tb_op_id id, tb_dtype dt,
                      const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    int rc = cpu_begin_views(ctx, dt, in, 1, out, true);
    if (rc)
        return rc;
    const tb_tensor *x = &in[0];
    tb_shape xs = tb_tensor_shape(x), os;
    char err[8];
    if (tb_op_infer(tb_op_get(id), &xs, 1, p, &os, err, sizeof err))
        return TB_ESHAPE;
    tb_shape have = tb_tensor_shape(out);
    if (!tb_shape_equal(&have, &os))
        return TB_ESHAPE;
    const bool sm = id == TB_OP_softmax || id == TB_OP_log_softmax;
    view_line_job j = {.x = x, .out = out, .id = id};
    j.all = !sm && !tb_params_has(p, 0);
    int ax = x->ndim - 1;
    if (!j.all && tb_axis_norm((int64_t)p->v[0], x->ndim, &ax))
        return TB_EPARAM;
    /* over all: lines along the dim of the smallest stride (a transposed
     * view's first), so that a line reads memory in order */
    for (int d = 0; j.all && d < x->ndim; d++)
        if (x->shape[d] > 1 && x->strides[d] < x->strides[ax])
            ax = d;
    j.ax = ax;
    const int64_t n = cpu_numel(x);
    j.len = x->ndim ? x->shape[ax] : 1;
    j.lines = j.len ? n / j.len : 0;
    if (x->ndim == 0) { /* a scalar: one line of one */
        j.ax = 0;
        j.lines = 1;
    }
    if (n == 0 && !j.all)
        return 0;
    if (x->ndim > 0)
        tb_cpu_parallel(ctx, n * (sm ? CPU_EXP_WEIGHT : 1), j.lines,
                        view_line_part, &j);
    if (!j.all)
        return 0;
    double total = 0;
    if (x->ndim == 0)
        total = view_at(x, 0);
    for (int i = 0; i < TB_MAX_AXIS_VALUES; i++)
        total += j.part_sum[i];
    cpu_store(out->data, dt, 0,
              id == TB_OP_mean ? total / (double)(n ? n : 1) : total);
    return 0;
}

/* ---- matmul ---- */

typedef struct view_mm_job {
    const tb_tensor *a, *b;
    tb_tensor *c;
    int64_t M, K, N, batch;
} view_mm_job;

/* Row r of the product (batch r / M, row r % M) when B's rows are read
 * at their stride: out[r, :] += a[r, k] * b[k, :] over k, in the output
 * dtype (as the contiguous rows accumulate), so B is read along its
 * rows, not down its columns. */
static void view_mm_row(const view_mm_job *j, int64_t r, int64_t ao,
                        int64_t bo)
{
    const int nd = j->a->ndim;
    const int64_t sa1 = j->a->strides[nd - 1];
    const int64_t sb0 = j->b->strides[nd - 2], sb1 = j->b->strides[nd - 1];
#define VIEW_MM_ROW(T)                                                    \
    do {                                                                  \
        T *o = (T *)j->c->data + r * j->N;                                \
        const T *a = j->a->data, *b = j->b->data;                         \
        for (int64_t q = 0; q < j->N; q++)                                \
            o[q] = 0;                                                     \
        for (int64_t k = 0; k < j->K; k++) {                              \
            const T s = a[ao + k * sa1];                                  \
            const T *bk = b + bo + k * sb0;                               \
            for (int64_t q = 0; q < j->N; q++)                            \
                o[q] += s * bk[q * sb1];                                  \
        }                                                                 \
    } while (0)
    if (j->c->dtype == TB_F32)
        VIEW_MM_ROW(float);
    else
        VIEW_MM_ROW(double);
#undef VIEW_MM_ROW
}

/* The portable loop through the strides: row by row along B's rows
 * (view_mm_row) when they are its shorter stride, else dot products
 * down B's columns in double. */
static void view_mm_part(void *arg, int part, int nparts)
{
    const view_mm_job *j = arg;
    const int nd = j->a->ndim;
    const int64_t sa0 = j->a->strides[nd - 2], sa1 = j->a->strides[nd - 1];
    const int64_t sb0 = j->b->strides[nd - 2], sb1 = j->b->strides[nd - 1];
    int64_t r0, r1;
    cpu_span(j->batch * j->M, part, nparts, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t bi = r / j->M, i = r % j->M;
        const int64_t ao = view_batch(j->a, bi) + i * sa0;
        const int64_t bo = view_batch(j->b, bi);
        if (sb1 <= sb0) {
            view_mm_row(j, r, ao, bo);
            continue;
        }
        for (int64_t q = 0; q < j->N; q++) {
            double acc = 0;
            for (int64_t k = 0; k < j->K; k++)
                acc += view_at(j->a, ao + k * sa1) *
                       view_at(j->b, bo + k * sb0 + q * sb1);
            cpu_store(j->c->data, j->c->dtype, r * j->N + q, acc);
        }
    }
}

/* The GEMM's form of operand t: transposed (stride 1 along the rows)
 * and its leading dim. */
static void view_mm_form(const tb_tensor *t, int *trans, int64_t *ld)
{
    const int nd = t->ndim;
    *trans = t->strides[nd - 1] != 1;
    *ld = *trans ? t->strides[nd - 1] : t->strides[nd - 2];
}

static int view_matmul(void *ctx, tb_dtype dt, const tb_tensor *in,
                       tb_tensor *out, int lv)
{
    int rc = cpu_begin_views(ctx, dt, in, 2, out, true);
    if (rc)
        return rc;
    const tb_tensor *a = &in[0], *b = &in[1];
    view_mm_job j = {.a = a, .b = b, .c = out};
    if ((rc = cpu_matmul_dims(a, b, out, &j.batch, &j.M, &j.K, &j.N)))
        return rc;
    if (lv == TB_ISA_SCALAR) {
        tb_cpu_parallel(ctx, j.batch * j.M * j.K * j.N, j.batch * j.M,
                        view_mm_part, &j);
        return 0;
    }
#if TB_CPU_HAVE_GEMM
    tb_cpu_ctx *c = ctx;
    int ta, tb;
    int64_t lda, ldb;
    view_mm_form(a, &ta, &lda);
    view_mm_form(b, &tb, &ldb);
    const tb_gemm_parallel par = {cpu_gemm_par_run, c};
    const size_t es = tb_dtype_size(dt);
    for (int64_t bi = 0; bi < j.batch && !rc; bi++)
        rc = tb_gemm_tr(lv, dt == TB_F64,
                        (ta ? TB_GEMM_TRANS_A : 0) | (tb ? TB_GEMM_TRANS_B : 0),
                        j.M, j.N, j.K,
                        (const char *)a->data + view_batch(a, bi) * es, lda,
                        (const char *)b->data + view_batch(b, bi) * es, ldb,
                        (char *)out->data + bi * j.M * j.N * es, j.N,
                        c->threads, c->threads > 1 ? &par : NULL);
    return rc;
#else
    return TB_EUNSUPPORTED;
#endif
}

/* ---- entry points ---- */

#define VIEW_ENTRY_EW(op, dt, sfx, takes) \
    VIEW_ENTRY_EW_##op(op, dt, sfx)
#define VIEW_EW(op, dt, sfx)                                              \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return view_ew(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, p);      \
    }
#define VIEW_LINES(op, dt, sfx)                                           \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return view_lines(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, p);   \
    }
#define VIEW_MM(op, dt, sfx)                                              \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        (void)p;                                                          \
        if (ctx && tb_cpu_isa(ctx) < TB_CPU_LV_##sfx)                     \
            return TB_EUNSUPPORTED;                                       \
        return view_matmul(ctx, TB_CPU_DT_##dt, in, out,                  \
                           TB_CPU_LV_##sfx);                              \
    }
#define VIEW_ENTRY_EW_add VIEW_EW
#define VIEW_ENTRY_EW_sub VIEW_EW
#define VIEW_ENTRY_EW_mul VIEW_EW
#define VIEW_ENTRY_EW_div VIEW_EW
#define VIEW_ENTRY_EW_maximum VIEW_EW
#define VIEW_ENTRY_EW_minimum VIEW_EW
#define VIEW_ENTRY_EW_relu VIEW_EW
#define VIEW_ENTRY_EW_neg VIEW_EW
#define VIEW_ENTRY_EW_abs VIEW_EW
#define VIEW_ENTRY_EW_exp VIEW_EW
#define VIEW_ENTRY_EW_log VIEW_EW
#define VIEW_ENTRY_EW_sqrt VIEW_EW
#define VIEW_ENTRY_EW_sigmoid VIEW_EW
#define VIEW_ENTRY_EW_tanh VIEW_EW
#define VIEW_ENTRY_EW_gelu VIEW_EW
#define VIEW_ENTRY_EW_silu VIEW_EW
#define VIEW_ENTRY_EW_sum VIEW_LINES
#define VIEW_ENTRY_EW_mean VIEW_LINES
#define VIEW_ENTRY_EW_softmax VIEW_LINES
#define VIEW_ENTRY_EW_log_softmax VIEW_LINES
#define VIEW_ENTRY_EW_matmul VIEW_MM

TB_CPU_VIEW_ROWS(VIEW_ENTRY_EW)
