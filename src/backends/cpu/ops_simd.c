/* The portable drivers of the SIMD rows of ops_simd.h. */
#include "ops_simd.h"

#include <stdbool.h>
#include <stdint.h>

#include "../../base/error.h"
#include "../../ops/half.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "backends/cpu/cpu_config.h"
#include "cpu_internal.h"
#include "isa.h"

static int64_t xs_numel(const tb_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

/* The level, then tb_cpu_begin_op: the launch, every operand and the
 * output's shape under op id's rule. */
static int xs_begin(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                    const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    return tb_cpu_begin_op(ctx, id, dt, in, out, p);
}

#define xs_param tb_cpu_param

typedef struct xs_job {
    tb_cpu_simd_unary_fn un;
    tb_cpu_simd_binary_fn bin;
    const char *a, *b;
    char *o;
    size_t esz;
    int64_t n;
    double k[2];
} xs_job;

/* Parts start on multiples of 16 elements (64 bytes of f32). */
static void xs_unary_task(void *argp, int part, int nparts)
{
    const xs_job *j = argp;
    int64_t b, e;
    tb_cpu_span(j->n, 16, part, nparts, &b, &e);
    if (e > b)
        j->un(j->a + (size_t)b * j->esz, j->o + (size_t)b * j->esz, e - b,
              j->k);
}

int tb_cpu_simd_unary(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                      const tb_tensor *in, tb_tensor *out, const tb_params *p,
                      int64_t weight, tb_cpu_simd_unary_fn fn)
{
    int rc = xs_begin(ctx, lv, id, dt, in, out, p);
    if (rc)
        return rc;
    xs_job j = {.un = fn, .a = in[0].data, .o = out->data,
                .esz = tb_dtype_size(dt), .n = xs_numel(out)};
    const tb_op *op = tb_op_get(id);
    for (int i = 0; i < op->n_params && i < 2; i++)
        j.k[i] = xs_param(p, id, i);
    if (j.n > 0)
        tb_cpu_parallel(ctx, j.n * weight, (j.n + 15) / 16, xs_unary_task,
                        &j);
    return 0;
}

static void xs_binary_task(void *argp, int part, int nparts)
{
    const xs_job *j = argp;
    int64_t b, e;
    tb_cpu_span(j->n, 16, part, nparts, &b, &e);
    if (e > b)
        j->bin(j->a + (size_t)b * j->esz, 1, j->b + (size_t)b * j->esz, 1,
               j->o + (size_t)b * j->esz, e - b);
}

/* Working set (bytes of the inputs and the output) from which
 * tb_cpu_simd_binary_nt writes with streaming stores, unless the output
 * is one of the inputs: drv_ew.c's CPU_EW_NT_BIN_BYTES, the threshold
 * of add's vv_nt (why there). */
#define XS_NT_BYTES (20.0 * 1024 * 1024)

/* tb_cpu_simd_binary; fn_nt (or NULL) for equal shapes from XS_NT_BYTES. */
static int xs_binary_run(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                         const tb_tensor *in, tb_tensor *out,
                         const tb_params *p, tb_cpu_simd_binary_fn fn,
                         tb_cpu_simd_binary_fn fn_nt)
{
    int rc = xs_begin(ctx, lv, id, dt, in, out, p);
    if (rc)
        return rc;
    const size_t esz = tb_dtype_size(dt);
    const int64_t n = xs_numel(out);
    if (xs_numel(&in[0]) == n && xs_numel(&in[1]) == n) {
        if (fn_nt && (double)n * (double)esz * 3 >= XS_NT_BYTES &&
            out->data != in[0].data && out->data != in[1].data)
            fn = fn_nt;
        xs_job j = {.bin = fn, .a = in[0].data, .b = in[1].data,
                    .o = out->data, .esz = esz, .n = n};
        if (n > 0)
            tb_cpu_parallel(ctx, n, (n + 15) / 16, xs_binary_task, &j);
        return 0;
    }
    tb_cpu_bcast_rows(in, out, esz, fn);
    return 0;
}

int tb_cpu_simd_binary(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                       const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_cpu_simd_binary_fn fn)
{
    return xs_binary_run(ctx, lv, id, dt, in, out, p, fn, NULL);
}

/* A reduction over one axis (or all elements) of an f32 or f64 tensor:
 * the lane function for a contiguous lane, the column function for
 * TB_CPU_SIMD_COLS lanes strided by `inner`; exactly one pair is set. */
typedef struct xs_red_job {
    tb_cpu_simd_lane_fn lane;
    tb_cpu_simd_cols_fn cols;
    tb_cpu_simd_lane64_fn lane64;
    tb_cpu_simd_cols64_fn cols64;
    tb_cpu_simd_rows_fn rows; /* short last-axis rows, or NULL */
    int64_t short_n;
    const void *x;
    void *o;
    int64_t outer, len, inner, corr;
    int64_t cw; /* lanes per cols call: TB_CPU_SIMD_COLS or _COLS32 */
} xs_red_job;

static void xs_red_task(void *argp, int part, int nparts)
{
    const xs_red_job *j = argp;
    size_t esz = j->lane64 ? sizeof(double) : sizeof(float);
    int64_t b, e;
    tb_cpu_span(j->outer, 1, part, nparts, &b, &e);
    if (j->inner == 1 && j->rows && j->len <= j->short_n) {
        if (b < e)
            j->rows((const float *)j->x + b * j->len, (float *)j->o + b,
                    e - b, j->len);
        return;
    }
    for (int64_t o = b; o < e; o++) {
        const char *x =
            (const char *)j->x + (size_t)(o * j->len * j->inner) * esz;
        if (j->inner == 1) {
            if (j->lane64)
                ((double *)j->o)[o] =
                    j->lane64((const double *)x, j->len, j->corr);
            else
                ((float *)j->o)[o] =
                    j->lane((const float *)x, j->len, j->corr);
            continue;
        }
        for (int64_t i = 0; i < j->inner; i += j->cw) {
            int64_t w = j->inner - i < j->cw ? j->inner - i : j->cw;
            int64_t at = o * j->inner + i;
            if (j->cols64)
                j->cols64((const double *)x + i, (double *)j->o + at, j->len,
                          j->inner, w, j->corr);
            else
                j->cols((const float *)x + i, (float *)j->o + at, j->len,
                        j->inner, w, j->corr);
        }
    }
}

/* The geometry of j (outer x len x inner from the op's axis parameter),
 * then the lanes split over the instance's threads. */
static int xs_reduce_run(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                         const tb_tensor *in, tb_tensor *out,
                         const tb_params *p, xs_red_job *j)
{
    int rc = xs_begin(ctx, lv, id, dt, in, out, p);
    if (rc)
        return rc;
    j->x = in[0].data;
    j->o = out->data;
    j->outer = 1;
    j->len = xs_numel(&in[0]);
    j->inner = 1;
    if (id == TB_OP_var)
        j->corr = (int64_t)xs_param(p, id, 2);
    if (p && tb_params_has(p, 0)) {
        int ax = 0;
        tb_axis_norm((int64_t)p->v[0], in[0].ndim, &ax); /* checked */
        for (int d = 0; d < ax; d++)
            j->outer *= in[0].shape[d];
        j->len = in[0].shape[ax];
        for (int d = ax + 1; d < in[0].ndim; d++)
            j->inner *= in[0].shape[d];
    }
    if (j->len > 0 && j->outer > 0)
        tb_cpu_parallel(ctx, j->outer * j->len * j->inner, j->outer,
                        xs_red_task, j);
    return 0;
}

int tb_cpu_simd_reduce(void *ctx, int lv, tb_op_id id, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p,
                       tb_cpu_simd_lane_fn lane, tb_cpu_simd_cols_fn cols)
{
    return tb_cpu_simd_reduce_rows(ctx, lv, id, in, out, p, lane, cols,
                                   NULL, 0);
}

int tb_cpu_simd_reduce_rows(void *ctx, int lv, tb_op_id id,
                            const tb_tensor *in, tb_tensor *out,
                            const tb_params *p, tb_cpu_simd_lane_fn lane,
                            tb_cpu_simd_cols_fn cols,
                            tb_cpu_simd_rows_fn rows, int64_t short_n)
{
    xs_red_job j = {.lane = lane, .cols = cols, .rows = rows,
                    .short_n = short_n,
                    .cw = id == TB_OP_var ? TB_CPU_SIMD_COLS
                                          : TB_CPU_SIMD_COLS32};
    return xs_reduce_run(ctx, lv, id, TB_F32, in, out, p, &j);
}

/* tb_cpu_simd_reduce on doubles (f64_simd_impl.h's reduction rows). */
int tb_cpu_simd_reduce64(void *ctx, int lv, tb_op_id id, const tb_tensor *in,
                         tb_tensor *out, const tb_params *p,
                         tb_cpu_simd_lane64_fn lane, tb_cpu_simd_cols64_fn cols)
{
    xs_red_job j = {.lane64 = lane, .cols64 = cols, .cw = TB_CPU_SIMD_COLS};
    return xs_reduce_run(ctx, lv, id, TB_F64, in, out, p, &j);
}

int tb_cpu_simd_binary_nt(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                          const tb_tensor *in, tb_tensor *out,
                          const tb_params *p, tb_cpu_simd_binary_fn fn,
                          tb_cpu_simd_binary_fn fn_nt)
{
    return xs_binary_run(ctx, lv, id, dt, in, out, p, fn, fn_nt);
}

/* ---- var bf16/f16: contiguous lanes read in 16 bits ---- */

typedef float (*xs_var16_fn)(const uint16_t *, int64_t, int64_t, tb_dtype);

typedef struct {
    xs_var16_fn lane;
    tb_dtype dt;
    const uint16_t *x;
    uint16_t *o;
    int64_t lanes, len, corr;
} xs_var16_job;

static void xs_var16_part(void *arg, int part, int nparts)
{
    const xs_var16_job *j = arg;
    int64_t b, e;
    tb_cpu_span(j->lanes, 1, part, nparts, &b, &e);
    for (int64_t l = b; l < e; l++) {
        float v = j->lane(j->x + l * j->len, j->len, j->corr, j->dt);
        j->o[l] = j->dt == TB_BF16 ? tb_f32_to_bf16(v) : tb_f32_to_f16(v);
    }
}

int tb_cpu_half_var(void *ctx, tb_dtype dt, int isa, const tb_tensor *in,
                    tb_tensor *out, const tb_params *p)
{
    xs_var16_job j = {.lane = NULL, .dt = dt, .x = in[0].data,
                      .o = out[0].data, .lanes = 1,
                      .len = xs_numel(&in[0]),
                      .corr = (int64_t)xs_param(p, TB_OP_var, 2)};
#if TB_CPU_HAVE_AVX512
    if (isa >= TB_ISA_AVX512)
        j.lane = tb_cpu_var16_lane_avx512;
#endif
#if TB_CPU_HAVE_AVX2
    if (!j.lane && isa >= TB_ISA_AVX2)
        j.lane = tb_cpu_var16_lane_avx2;
#endif
    if (!j.lane || (dt != TB_BF16 && dt != TB_F16))
        return 1;
    if (p && tb_params_has(p, 0)) { /* an axis: the last one only */
        int ax;
        if (tb_axis_norm((int64_t)p->v[0], in[0].ndim, &ax) ||
            ax != in[0].ndim - 1)
            return 1;
        j.len = in[0].shape[ax];
        j.lanes = j.len ? xs_numel(&in[0]) / j.len : 0;
    }
    if (j.len == 0 || j.lanes == 0)
        return 1; /* empty lanes: the f32 row's rule */
    tb_cpu_count_launch(ctx);
    tb_cpu_parallel(ctx, j.lanes * j.len, j.lanes, xs_var16_part, &j);
    return 0;
}
