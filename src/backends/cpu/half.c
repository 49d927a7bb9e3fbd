/* The cpu backend's bf16 and f16 rows (kreg.h's TB_CPU_ROWS_HALF).
 *
 * A row of level L is the op's f32 row of level L between level L's
 * conversions: inputs widened to f32 (exactly), the f32 kernel, each
 * result rounded once to the dtype.  That is PyTorch's CPU arithmetic for
 * these dtypes (its kernels load bf16/f16 vectors, compute in float and
 * accumulate reductions and dot products in float), so the values are
 * those of a framework user's bf16 model, and the f32 kernels' speed is
 * reused.
 *
 * The simplest element-wise ops (add, sub, mul, div, add_relu,
 * maximum, minimum, the scalar forms, sqrt, rsqrt, leaky_relu,
 * ew_defs.h's, relu) and the activations of vmath.h (exp, log, tanh,
 * sigmoid, gelu, gelu_tanh, silu), softplus (softplus_vf.h's, at its
 * default threshold), pow (the f32 row's loop on values widened in
 * registers at avx512, on widened chunks in L1 at avx2)
 * and sigmoid, tanh and gelu backward
 * (bwd_vf.h's element functions; log at avx512 by a shorter f32 log
 * proven against vs_log's 16-bit results on every pattern at first
 * use), with same-shape operands (or a binary
 * op's b one row broadcast over a's rows: half_row_len), have fused
 * loops at avx2 and avx512, and in bf16 at avx512bf16 (its narrowing by
 * vcvtne2ps2bf16) (half_simd.h): load, widen, the f32 operation and narrow
 * in registers, the same bits as the blocks below, with no pass through
 * memory between them (the blocks' widen, call and narrow ran one after
 * the other: exp bf16 took twice exp f32's time).  sum, mean, max and
 * min over every element or the last axis read the 16-bit input the
 * same way (tb_cpu_half_red: sum in the f32 sum row's lanes and blocks,
 * bit for bit; max/min the portable rows' value), split over the
 * threads as the f32 drivers split them; var too, at avx2 and avx512
 * (tb_cpu_half_var, ops_simd.c: var_simd.h's f32 lanes on values
 * widened in registers, their bits).
 * (add and sub by the FMA units, maximum and minimum on the patterns:
 * half_simd.h; those two with b one row broadcast by the level's row
 * loop, b's keys once a part: tb_cpu_half_mmrows_get.)  arange is written in place: the f32 row's value
 * narrowed once, by the level's loop (half_simd.h's hs_arange).
 * Optimizer steps take the mixed-precision form (ops/op.h's
 * tb_op_in_dtype): 16-bit p and g widened, the f32 state updated in
 * place by the f32 row, p rounded once; their hyperparameters stay f32.
 * The element-wise ones and lamb run as the f32 row's passes in optim.c
 * (optim.h: p and g read as 16 bits, widened in registers, the f32
 * loop, p narrowed in registers: the same bits, no scratch); lbfgs
 * widens whole tensors (below).
 * Other element-wise ops (categories elementwise and activation, and add_relu,
 * with every input of the output's shape) run in blocks of HALF_BLOCK
 * elements whose f32 copies stay in L1/L2: memory sees the 16-bit
 * tensors only (half the bytes of f32).  The blocks are split over the
 * instance's threads; each block's f32 call runs on the instance's
 * single-threaded twin (drv.h), so it neither splits again nor counts:
 * the row counts one launch.  half_bwd.h's rows (relu_backward,
 * sum_backward, mean_backward on the patterns; sub, mul, div
 * backward on a broadcast row; the norms, non-last-axis sums, softmax
 * rows and pool planes in parts)
 * read and write the 16-bit tensors once too.  Every other op widens
 * whole tensors into f32 scratch from the tracked allocator (counted in
 * allocs), runs the f32 row once on the instance and narrows its
 * outputs. */
#include <stdatomic.h>
#include <string.h>
#include <wchar.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "../../ops/half.h"
#include "attn.h" /* tb_cpu_mask16_rows_avx2 */
#include "backends/cpu/cpu_config.h"
#include "gemm/gemm.h" /* tb_scratch_get */
#include "cpu_internal.h"
#include "half_bwd.h"
#include "half_cvt.h"
#include "half_part.h"
#include "isa.h"
#include "kernels.h" /* TB_CPU_SUM_BLOCK */
#include "kreg.h"
#include "ops_simd.h" /* tb_cpu_half_var */
#include "optim.h"
#include "rand_simd.h"
#include "transpose.h"

/* Elements per block: 3 f32 blocks (two inputs, one output) are 48 KiB.
 * (16384 ran exp and gelu no faster: the conversions, not the calls,
 * cost the time.) */
#define HALF_BLOCK 4096

/* arange written in place: the output's elements split over the
 * threads on 32-element (64-byte) lines, each part the level's loop on
 * its span (the values do not depend on the split). */
typedef struct {
    tb_cpu_half_arange_fn fn;
    uint16_t *o;
    int64_t n;
    double start, step;
} arange_job;

static void half_arange_part(void *arg, int part, int nparts)
{
    const arange_job *j = arg;
    int64_t b, e;
    tb_cpu_span(j->n, 32, part, nparts, &b, &e);
    if (e > b)
        j->fn(j->o, b, e, j->start, j->step);
}

static int half_arange(void *ctx, tb_dtype dt, int isa, tb_tensor *out,
                       const tb_params *q)
{
    arange_job j = {tb_cpu_half_arange_get(dt, isa), out->data,
                    tb_tensor_numel(out), q->v[0], q->v[1]};
    if (!j.fn)
        return TB_EINVAL;
    tb_cpu_count_launch(ctx);
    if (out->ndim != 1)
        return TB_ESHAPE; /* the f32 row's check (create.c) */
    tb_cpu_parallel(ctx, j.n, (j.n + 31) / 32, half_arange_part, &j);
    return 0;
}

/* Element-wise: every input of the output's shape, one output. */
static bool half_blockwise(const tb_op *op, const tb_tensor *in,
                           const tb_tensor *out)
{
    if (op->n_out != 1 || op->n_in > 2 ||
        (op->category != TB_CAT_ELEMENTWISE &&
         op->category != TB_CAT_ACTIVATION && op->id != TB_OP_add_relu))
        return false;
    tb_shape os = tb_tensor_shape(&out[0]);
    for (int i = 0; i < op->n_in; i++) {
        tb_shape s = tb_tensor_shape(&in[i]);
        if (!tb_shape_equal(&s, &os))
            return false;
    }
    return true;
}

typedef struct {
    void *serial;
    tb_kernel_fn f32;
    tb_cpu_half_cvt cv;
    int n_in;
    const tb_tensor *in;
    tb_tensor *out;
    const tb_params *p;
    int64_t n;
    int rc[TB_MAX_AXIS_VALUES];
} half_job;

static void half_block_part(void *arg, int part, int nparts)
{
    half_job *j = arg;
    int64_t nb = (j->n + HALF_BLOCK - 1) / HALF_BLOCK, b0, b1;
    tb_cpu_span(nb, 1, part, nparts, &b0, &b1);
    float buf[3][HALF_BLOCK];
    tb_tensor tin[2], tout;
    for (int64_t b = b0; b < b1; b++) {
        int64_t off = b * HALF_BLOCK;
        int64_t len = j->n - off < HALF_BLOCK ? j->n - off : HALF_BLOCK;
        tb_shape s = {1, {len}};
        for (int i = 0; i < j->n_in; i++) {
            tb_tensor_init(&tin[i], TB_F32, &s);
            tin[i].data = buf[i];
            j->cv.widen((const uint16_t *)j->in[i].data + off, buf[i], len);
        }
        tb_tensor_init(&tout, TB_F32, &s);
        tout.data = buf[2];
        int rc = j->f32(j->serial, tin, &tout, j->p);
        if (rc) {
            j->rc[part] = rc;
            return;
        }
        j->cv.narrow(buf[2], (uint16_t *)j->out[0].data + off, len);
    }
}

/* The fused loops (half_cvt.h): each part its span of the elements,
 * or (row > 0: b one row of that many elements broadcast over a's rows)
 * its span of the rows. */
typedef struct {
    tb_cpu_half_fused_fn fn;
    const uint16_t *a, *b;
    uint16_t *o;
    int64_t n, row;
    float k;
    /* maximum, minimum with row > 0: the level's row loop (b's keys
     * once a part), or NULL */
    tb_cpu_half_mmrows_fn mmr;
    int mx;
} fused_job;

static void half_fused_part(void *arg, int part, int nparts)
{
    fused_job *j = arg;
    int64_t b0, b1;
    if (j->row == 0) {
        tb_cpu_span(j->n, 64, part, nparts, &b0, &b1);
        j->fn(j->a + b0, j->b ? j->b + b0 : NULL, j->o + b0, b1 - b0, j->k);
        return;
    }
    tb_cpu_span(j->n / j->row, 1, part, nparts, &b0, &b1);
    if (j->mmr) {
        if (b1 > b0)
            j->mmr(j->a + b0 * j->row, j->b, j->o + b0 * j->row, b1 - b0,
                   j->row, j->mx);
        return;
    }
    for (int64_t r = b0 * j->row; r < b1 * j->row; r += j->row)
        j->fn(j->a + r, j->b, j->o + r, j->row, j->k);
}

/* Rows from this length: shorter ones cost a call each few elements. */
#define HALF_ROW_MIN 256

/* The length of b's row when b (in[1]) is broadcast along the leading
 * axes of a (in[0]) of the output's shape: b's shape, leading 1s
 * dropped, is out's trailing axes (and their product at least
 * HALF_ROW_MIN); else 0. */
static int64_t half_row_len(const tb_op *op, const tb_tensor *in,
                            const tb_tensor *out)
{
    if (op->n_in != 2 || op->n_out != 1)
        return 0;
    tb_shape os = tb_tensor_shape(&out[0]), as = tb_tensor_shape(&in[0]);
    if (!tb_shape_equal(&as, &os))
        return 0;
    int lead = 0;
    while (lead < in[1].ndim && in[1].shape[lead] == 1)
        lead++;
    const int nd = in[1].ndim - lead;
    if (nd > out[0].ndim)
        return 0;
    int64_t len = 1;
    for (int i = 0; i < nd; i++) {
        if (in[1].shape[lead + i] != out[0].shape[out[0].ndim - nd + i])
            return 0;
        len *= in[1].shape[lead + i];
    }
    return len >= HALF_ROW_MIN ? len : 0;
}

/* add, sub, mul, div with b one value a row of a (b's shape: out's with
 * the last dim 1, a's out's, rows of 2..HPB_N): half_part_short.h's
 * blocks; 1 when not served.  (sub of 1024x10 and 1024x1 bf16, the
 * second and last steps of log_softmax_unfused, widened both tensors
 * into scratch: twice the f32 row's time.) */
typedef struct {
    tb_cpu_half_colbin_fn fn;
    const uint16_t *a, *b;
    uint16_t *o;
    int64_t rows, n;
    int op;
} colbin_job;

static void half_colbin_part(void *arg, int part, int nparts)
{
    const colbin_job *j = arg;
    int64_t b, e;
    tb_cpu_span(j->rows, 16, part, nparts, &b, &e);
    if (e > b)
        j->fn(j->a + b * j->n, j->b + b, j->o + b * j->n, e - b, j->n,
              j->op);
}

static int half_colbin(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                       const tb_tensor *in, tb_tensor *out)
{
    if (op->id != TB_OP_add && op->id != TB_OP_sub && op->id != TB_OP_mul &&
        op->id != TB_OP_div)
        return 1;
    const int nd = out[0].ndim;
    tb_shape os = tb_tensor_shape(&out[0]), as = tb_tensor_shape(&in[0]);
    if (nd < 1 || !tb_shape_equal(&as, &os) || in[1].ndim != nd)
        return 1;
    for (int d = 0; d < nd; d++)
        if (in[1].shape[d] != (d == nd - 1 ? 1 : out[0].shape[d]))
            return 1;
    colbin_job j = {tb_cpu_half_colbin_get(dt, isa), in[0].data, in[1].data,
                    out[0].data, 0, out[0].shape[nd - 1], (int)op->id};
    if (!j.fn || j.n < 2 || j.n > HPB_N)
        return 1;
    j.rows = tb_tensor_numel(&out[0]) / j.n;
    tb_cpu_count_launch(ctx);
    tb_cpu_parallel(ctx, j.rows * j.n, (j.rows + 15) / 16, half_colbin_part,
                    &j);
    return 0;
}

static int half_fused(void *ctx, const tb_op *op, tb_cpu_half_fused_fn fn,
                      const tb_tensor *in, tb_tensor *out, int64_t row,
                      float k, tb_cpu_half_mmrows_fn mmr)
{
    fused_job j = {fn,  in[0].data, op->n_in > 1 ? in[1].data : NULL,
                   out[0].data, tb_tensor_numel(&out[0]), row, k,
                   row ? mmr : NULL, op->id == TB_OP_maximum};
    tb_cpu_count_launch(ctx);
    tb_cpu_parallel(ctx, j.n, row ? j.n / row : (j.n + 63) / 64,
                    half_fused_part, &j);
    return 0;
}

static int half_blocks(void *ctx, const tb_op *op, tb_kernel_fn f32,
                       tb_cpu_half_cvt cv, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p)
{
    half_job j = {.serial = tb_cpu_serial(ctx), .f32 = f32, .cv = cv,
                  .n_in = op->n_in, .in = in, .out = out, .p = p,
                  .n = tb_tensor_numel(&out[0])};
    if (!j.serial)
        return TB_EINVAL;
    tb_cpu_count_launch(ctx);
    int64_t nb = (j.n + HALF_BLOCK - 1) / HALF_BLOCK;
    tb_cpu_parallel(ctx, j.n, nb, half_block_part, &j);
    for (int i = 0; i < TB_MAX_AXIS_VALUES; i++)
        if (j.rc[i])
            return j.rc[i];
    return 0;
}

/* ---- reductions reading the 16-bit input (tb_cpu_half_red) ---- */

/* sum, mean, max and min over every element or the last axis: the
 * input as `lanes` contiguous lanes of len elements. */
typedef struct {
    tb_cpu_half_red red;
    tb_op_id id;
    tb_dtype dt;
    const uint16_t *x;
    uint16_t *o;
    int64_t lanes, len;
    /* lanes of len <= the level's vector: several rows at once
     * (half_part_short.h), their f32 values narrowed by the level */
    tb_cpu_half_short_fn shortf;
    tb_cpu_narrow_fn narrow;
    int kind;
    int nparts;
    bool some[TB_MAX_AXIS_VALUES]; /* one lane: the part had elements */
    double part[TB_MAX_AXIS_VALUES];
} hred_job;

/* A lane's (or a piece's) value: the sum in double, or the extreme. */
static double hred_value(const hred_job *j, const uint16_t *x, int64_t n)
{
    if (j->id == TB_OP_max)
        return j->red.max(x, n);
    if (j->id == TB_OP_min)
        return j->red.min(x, n);
    return j->red.sum(x, n);
}

/* The f32 rows' value: the double sum (or mean) rounded to f32. */
static float hred_f32(const hred_job *j, double v, int64_t len)
{
    return (float)(j->id == TB_OP_mean ? v / (double)len : v);
}

/* The f32 rows' result: hred_f32's value, then once to the dtype (what
 * widen + f32 row + narrow give). */
static uint16_t hred_store(const hred_job *j, double v, int64_t len)
{
    float f = hred_f32(j, v, len);
    return j->dt == TB_BF16 ? tb_f32_to_bf16(f) : tb_f32_to_f16(f);
}

static void hred_part(void *arg, int part, int nparts)
{
    hred_job *j = arg;
    int64_t b, e;
    j->nparts = nparts;
    if (j->lanes == 1) { /* one lane: pieces of whole sum blocks */
        tb_cpu_span(j->len, TB_CPU_SUM_BLOCK, part, nparts, &b, &e);
        j->some[part] = e > b;
        if (e > b)
            j->part[part] = hred_value(j, j->x + b, e - b);
        return;
    }
    tb_cpu_span(j->lanes, 1, part, nparts, &b, &e);
    if (j->shortf) {
        enum { K = 256 }; /* rows a call (a multiple of 16) */
        float f[K];
        for (int64_t l = b; l < e; l += K) {
            const int64_t k = e - l < K ? e - l : K;
            j->shortf(j->x + l * j->len, f, k, j->len, j->kind);
            j->narrow(f, j->o + l, k);
        }
        return;
    }
    /* lanes' f32 values narrowed K at a time by the level (the
     * portable narrowing's bits): one scalar tb_f32_to_f16 a row took
     * a sixth of min f16's time over 1024 rows of 1024 */
    enum { K = 256 };
    float f[K];
    for (int64_t l = b; l < e; l += K) {
        const int64_t k = e - l < K ? e - l : K;
        for (int64_t i = 0; i < k; i++)
            f[i] = hred_f32(
                j, hred_value(j, j->x + (l + i) * j->len, j->len), j->len);
        j->narrow(f, j->o + l, k);
    }
}

/* The reduction of op over in[0] into out[0], or 1 when this path does
 * not serve the case (another op, a non-last axis, no loops at isa). */
static int half_reduce(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                       const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    if (op->id != TB_OP_sum && op->id != TB_OP_mean && op->id != TB_OP_max &&
        op->id != TB_OP_min)
        return 1;
    hred_job j = {.red = tb_cpu_half_red_get(dt, isa), .id = op->id,
                  .dt = dt, .x = in[0].data, .o = out[0].data,
                  .lanes = 1, .len = tb_tensor_numel(&in[0])};
    if (!j.red.sum)
        return 1;
    if (p && tb_params_has(p, 0)) { /* an axis: the last one only */
        int ax;
        if (tb_axis_norm((int64_t)p->v[0], in[0].ndim, &ax) ||
            ax != in[0].ndim - 1)
            return 1;
        j.len = in[0].shape[ax];
        j.lanes = j.len ? tb_tensor_numel(&in[0]) / j.len : 0;
    }
    if (j.len == 0 || (op->id != TB_OP_sum && op->id != TB_OP_mean &&
                       tb_tensor_numel(&out[0]) == 0))
        return 1; /* empty lanes: the f32 row's rule */
    int64_t short_n;
    j.narrow = tb_cpu_half_cvt_get(dt, isa).narrow;
    if (j.lanes > 1 && !j.narrow)
        return 1; /* (every level with the reductions has it) */
    if (j.lanes > 1 && (j.shortf = tb_cpu_half_short_get(dt, isa, &short_n)) &&
        j.len <= short_n) {
        j.kind = op->id == TB_OP_sum    ? TB_CPU_HSR_SUM
                 : op->id == TB_OP_mean ? TB_CPU_HSR_MEAN
                 : op->id == TB_OP_max  ? TB_CPU_HSR_MAX
                                        : TB_CPU_HSR_MIN;
    } else {
        j.shortf = NULL;
    }
    tb_cpu_count_launch(ctx);
    if (j.lanes == 1) {
        tb_cpu_parallel(ctx, j.len,
                        (j.len + TB_CPU_SUM_BLOCK - 1) / TB_CPU_SUM_BLOCK,
                        hred_part, &j);
        /* parts in order: the result depends on the thread count only
         * (sum: as the f32 driver; max/min: the scalar rule over the
         * parts' values gives the rule's value over the whole) */
        double v = 0;
        bool first = true;
        for (int i = 0; i < j.nparts; i++) {
            if (!j.some[i])
                continue;
            double w = j.part[i];
            if (op->id == TB_OP_sum || op->id == TB_OP_mean)
                v += w;
            else if (first || (op->id == TB_OP_max ? w > v : w < v) ||
                     w != w)
                v = w;
            first = false;
        }
        j.o[0] = hred_store(&j, v, j.len);
    } else {
        tb_cpu_parallel(ctx, j.lanes * j.len, j.lanes, hred_part, &j);
    }
    return 0;
}

/* t: an f32 twin of 16-bit tensor h (same shape), data from the tracked
 * allocator (at least one element). */
/* bytes of h's f32 copy in the scratch block (64-byte steps) */
static size_t half_copy_bytes(const tb_tensor *h)
{
    return ((size_t)tb_tensor_numel(h) * sizeof(float) + 63) & ~(size_t)63;
}

/* f32 header for 16-bit tensor h, its data at *at */
static void half_scratch(const tb_tensor *h, tb_tensor *t, char **at)
{
    tb_shape s = tb_tensor_shape(h);
    tb_tensor_init(t, TB_F32, &s);
    t->data = *at;
    t->owns = false;
    *at += half_copy_bytes(h);
}

/* The f32 row on f32 copies of the 16-bit operands, the outputs
 * narrowed once.  The copies share one block of the thread's
 * TB_SCRATCH_HALF scratch (gemm.h: kept from call to call, so a call
 * allocates nothing and faults in no pages; a tb_alloc per copy and
 * call was freed back to the system or not as glibc's heap history
 * went: sdpa bf16 2x4x128x64 took 615 us and 241 page faults a call in
 * one tbench run, 240 us in another). */
static int half_whole(void *ctx, const tb_op *op, tb_kernel_fn f32,
                      tb_cpu_half_cvt cv, const tb_tensor *in,
                      tb_tensor *out, const tb_params *p)
{
    tb_tensor fin[TB_MAX_INPUTS], fout[TB_MAX_OUTPUTS];
    memset(fin, 0, sizeof fin);
    memset(fout, 0, sizeof fout);
    size_t bytes = 64;
    for (int i = 0; i < op->n_in; i++)
        if (in[i].dtype != TB_F32)
            bytes += half_copy_bytes(&in[i]);
    for (int o = 0; o < op->n_out; o++)
        if (out[o].dtype != TB_F32 && !(op->alias && op->alias[o] >= 0))
            bytes += half_copy_bytes(&out[o]);
    int own;
    char *mem = tb_scratch_get(TB_SCRATCH_HALF, bytes, &own);
    if (!mem)
        return TB_ENOMEM;
    char *at = mem;
    /* f32 operands (an optimizer's state) are used in place */
    for (int i = 0; i < op->n_in; i++) {
        if (in[i].dtype == TB_F32) {
            fin[i] = in[i];
            fin[i].owns = false;
        } else {
            half_scratch(&in[i], &fin[i], &at);
            cv.widen(in[i].data, fin[i].data, tb_tensor_numel(&in[i]));
        }
    }
    for (int o = 0; o < op->n_out; o++) {
        if (out[o].dtype == TB_F32) {
            fout[o] = out[o];
            fout[o].owns = false;
        } else if (op->alias && op->alias[o] >= 0) {
            fout[o] = fin[op->alias[o]];
            fout[o].owns = false;
        } else {
            half_scratch(&out[o], &fout[o], &at);
        }
    }
    int rc = f32(ctx, fin, fout, p);
    for (int o = 0; o < op->n_out && !rc; o++)
        if (out[o].dtype != TB_F32)
            cv.narrow(fout[o].data, out[o].data, tb_tensor_numel(&out[o]));
    tb_scratch_put(TB_SCRATCH_HALF, mem, own);
    return rc;
}

/* The f32 row of op id at level isa, looked up once (the table is
 * static; every call of a 16-bit row is timed, and the lookup scans the
 * whole table).  Racing first calls store the same pointer. */
static const tb_cpu_krow *f32_row(tb_op_id id, int isa)
{
    static _Atomic(const tb_cpu_krow *) cache[TB_OP_COUNT][TB_ISA_COUNT];
    const tb_cpu_krow *r =
        atomic_load_explicit(&cache[id][isa], memory_order_relaxed);
    if (!r) {
        size_t n;
        const tb_cpu_krow *rows = tb_cpu_krows(&n);
        r = tb_cpu_krow_find(rows, n, id, TB_F32, isa);
        atomic_store_explicit(&cache[id][isa], r, memory_order_relaxed);
    }
    return r;
}

/* copy, zeros, ones, full, neg, abs and causal_mask move or set bits
 * only: done on
 * the 16-bit values themselves, with no f32 scratch (widening a whole
 * tensor to narrow it again cost 5x PyTorch's time at 1M), one launch,
 * split over the threads on 64-element lines.  Their values are the
 * widening path's: the same bits, save that a signaling NaN stays
 * signaling (copy moves its bits; neg and abs flip or clear the sign
 * only, as f32's rows do), where narrowing would quiet it.  full's value
 * arrives rounded to the dtype (half_run). */
typedef struct {
    tb_op_id id;
    const uint16_t *x;
    uint16_t *o;
    uint16_t v; /* the fill's bits */
    int64_t n;  /* elements; causal_mask: rows of N */
    int64_t M, N; /* causal_mask: each plane's rows and columns */
    bool causal;
    bool avx2; /* causal_mask: attn_avx2.c's rows (the level is avx2+) */
} bits_job;

/* neg (flip) or abs (clear) of n sign bits, four halves to a 64-bit
 * word through memcpy (x and o may be the same tensor), so the loop is
 * the same simple vector loop whatever the compiler makes of 16-bit
 * lanes. */
static void half_sign(const uint16_t *x, uint16_t *o, int64_t n, int flip)
{
    const uint64_t m = UINT64_C(0x8000800080008000);
    int64_t i = 0;
    /* unrolled: the 2-instruction-a-16-bytes loop ran at half speed
     * where it happened to cross a 64-byte line of code (abs bf16 at 1M
     * 72 us, neg 43 us, from one build to the next) */
#pragma GCC unroll 8
    for (; i + 4 <= n; i += 4) {
        uint64_t w;
        memcpy(&w, x + i, sizeof w);
        w = flip ? w ^ m : w & ~m;
        memcpy(o + i, &w, sizeof w);
    }
    for (; i < n; i++)
        o[i] = (uint16_t)(flip ? x[i] ^ 0x8000u : x[i] & 0x7fffu);
}

/* o[0..n) = v.  This file is built for baseline x86-64, whose stores
 * are 16 bytes wide (one a cycle: 2 MiB of bf16 took 36 us, f32's SIMD
 * fill 42 us for twice the bytes): libc's wmemset picks the machine's
 * widest stores at run time, so the fill is one of 32-bit words, each
 * two copies of v (o is 2-byte aligned: one element first when it is
 * not 4-byte aligned, one last when an odd count is left). */
_Static_assert(sizeof(wchar_t) == 4, "wmemset fills 32-bit words");
static void half_fill(uint16_t *o, int64_t n, uint16_t v)
{
    /* +0 (zeros; ones/full of 0): memset, whose large sizes glibc does
     * by rep stosb (ERMSB): on the Xeon (Emerald Rapids, L2 2 MiB) of
     * 2026-12-01, 2 MiB written again and again took 50 us by memset or
     * rep stosb, 55.5 us by wmemset or 64-byte vector stores, 88 us by
     * streaming stores; zeros bf16/f16 1024x1024 61.4/61.3 to 51.5/54.2
     * us (tbench ab, 16 blocks, load 9.7) */
    if (v == 0) {
        if (n > 0)
            memset(o, 0, (size_t)n * sizeof *o);
        return;
    }
    if (n > 0 && ((uintptr_t)o & 2)) {
        *o++ = v;
        n--;
    }
    const uint32_t w = (uint32_t)v * 0x10001u;
    wchar_t wc;
    memcpy(&wc, &w, sizeof wc);
    if (n >= 2)
        wmemset((wchar_t *)(void *)o, wc, (size_t)(n / 2));
    if (n & 1)
        o[n - 1] = v;
}

/* causal_mask's rows [b, e): row r keeps its first i + 1 values (i its
 * row in the plane) and sets the rest to -inf (v). */
static void half_mask_rows(const bits_job *j, int64_t b, int64_t e)
{
#if TB_CPU_HAVE_AVX2
    if (j->avx2) { /* no call per row: 16-lane vectors */
        tb_cpu_mask16_rows_avx2(j->x, j->o, b, e, j->M, j->N, j->causal,
                                j->v);
        return;
    }
#endif
    for (int64_t r = b; r < e; r++) {
        const int64_t i = r % j->M;
        const int64_t keep = j->causal && i + 1 < j->N ? i + 1 : j->N;
        if (j->x != j->o)
            memcpy(j->o + r * j->N, j->x + r * j->N,
                   (size_t)keep * sizeof *j->o);
        half_fill(j->o + r * j->N + keep, j->N - keep, j->v);
    }
}

static void half_bits_part(void *arg, int part, int nparts)
{
    const bits_job *j = arg;
    int64_t b, e;
    tb_cpu_span(j->n, j->id == TB_OP_causal_mask ? 1 : 64, part, nparts,
                &b, &e);
    uint16_t *o = j->o;
    const uint16_t *x = j->x;
    switch (j->id) {
    case TB_OP_causal_mask:
        half_mask_rows(j, b, e);
        break;
    case TB_OP_copy:
        if (e > b)
            memmove(o + b, x + b, (size_t)(e - b) * sizeof *o);
        break;
    case TB_OP_neg:
    case TB_OP_abs:
        half_sign(x + b, o + b, e - b, j->id == TB_OP_neg);
        break;
    default:
        half_fill(o + b, e - b, j->v);
        break;
    }
}

/* 0, or 1: not one of these ops. */
static int half_bits(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                     const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    bits_job j = {.id = id, .x = in ? in[0].data : NULL, .o = out[0].data,
                  .v = 0, .n = tb_tensor_numel(&out[0])};
    float f;
    switch (id) {
    case TB_OP_copy:
    case TB_OP_neg:
    case TB_OP_abs:
    case TB_OP_zeros:
        break;
    case TB_OP_ones:
    case TB_OP_full:
        f = id == TB_OP_ones ? 1.0f : (float)p->v[0];
        j.v = dt == TB_BF16 ? tb_f32_to_bf16(f) : tb_f32_to_f16(f);
        break;
    case TB_OP_causal_mask: {
        const int nd = in[0].ndim;
        j.v = dt == TB_BF16 ? 0xff80u : 0xfc00u; /* -inf */
        j.M = in[0].shape[nd - 2];
        j.N = in[0].shape[nd - 1];
        j.causal = tb_cpu_param(p, TB_OP_causal_mask, 0) != 0;
        j.avx2 = TB_CPU_HAVE_AVX2 && isa >= TB_ISA_AVX2;
        const int64_t n = j.n;
        j.n = j.N ? n / j.N : 0;
        tb_cpu_count_launch(ctx);
        tb_cpu_parallel(ctx, n, j.n, half_bits_part, &j);
        return 0;
    }
    default:
        return 1;
    }
    tb_cpu_count_launch(ctx);
    if (id == TB_OP_copy && j.x == j.o)
        return 0; /* copy onto itself: nothing to move */
    tb_cpu_parallel(ctx, j.n, (j.n + 63) / 64, half_bits_part, &j);
    return 0;
}

/* The row of (id, dt) at level isa. */
static int half_run(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                    const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    if (!ctx)
        return TB_EINVAL;
    const tb_op *op = tb_op_get(id);
    /* Creation ops take their shape from the case, not from inputs: the
     * output checked here, its shape by the f32 row on the scratch. */
    int rc = op->n_in == 0 ? (out ? tb_tensor_check_operand(out, dt, 1)
                                  : TB_EINVAL)
                           : tb_cpu_check_op(id, dt, in, out, p);
    if (rc)
        return rc;
    if (isa > tb_cpu_isa(ctx))
        return TB_EINVAL;
    /* transpose and permute move the 16-bit values as bits, by the
     * level's plane transposers (transpose.h): no widening */
    if (id == TB_OP_transpose)
        return tb_cpu_transpose_lv(ctx, in, out, p, dt, isa);
    if (id == TB_OP_permute)
        return tb_cpu_permute_lv(ctx, in, out, p, dt, isa);
    /* the element-wise optimizer steps: one fused pass (optim.h) */
    if (op->category == TB_CAT_OPTIMIZER &&
        (rc = tb_cpu_optim_half(ctx, id, dt, isa, in, out, p)) != 1)
        return rc;
    if (half_reduce(ctx, op, dt, isa, in, out, p) == 0 ||
        (id == TB_OP_var && tb_cpu_half_var(ctx, dt, isa, in, out, p) == 0))
        return 0;
    /* A constant (add_scalar's scalar, leaky_relu's alpha, full's value)
     * is held in the dtype, as PyTorch holds a Python scalar it applies
     * to a bf16/f16 tensor (and tbench holds one in f32 for f32). */
    tb_params q = p ? *p : (tb_params){0};
    /* (an optimizer's hyperparameters are no tensor constants: f32) */
    for (int i = 0; op->category != TB_CAT_OPTIMIZER && i < op->n_params;
         i++) {
        const tb_param_spec *s = &op->params[i];
        if (s->kind != TB_PARAM_FLOAT || (s->optional && !(q.set >> i & 1)))
            continue;
        q.v[i] = tb_dtype_round(dt, (q.set >> i & 1) ? q.v[i] : s->def);
        q.set |= 1u << i;
    }
    const tb_params *pp = &q;
    /* rand_uniform, rand_normal: the level's 16-bit chunk loops (the f32
     * row's values narrowed in registers, rand_simd.h) */
    if ((rc = tb_cpu_rand_half(ctx, id, dt, isa, out, pp)) != 1)
        return rc;
    if (id == TB_OP_arange) /* start and step held in the dtype */
        return half_arange(ctx, dt, isa, out, pp);
    /* the fused loops first: no f32 row, no scratch, no lookup; the
     * constant (add_scalar's, leaky_relu's alpha) as the f32 row's
     * float */
    tb_cpu_half_fused_fn fused = tb_cpu_half_fused_get(id, dt, isa);
    if (fused && id == TB_OP_softplus &&
        (float)q.v[1] != TB_CPU_HALF_SOFTPLUS_THR)
        fused = NULL; /* its fused loops hold the default threshold */
    if (fused) {
        const float k = op->n_params > 0 ? (float)q.v[0] : 0.0f;
        if (half_blockwise(op, in, out) ||
            tb_cpu_half_bwd_blockwise(op, in, out))
            return half_fused(ctx, op, fused, in, out, 0, k, NULL);
        int64_t row = op->category == TB_CAT_BACKWARD
                          ? 0 /* g and x of one shape only */
                          : half_row_len(op, in, out);
        if (row)
            return half_fused(ctx, op, fused, in, out, row, k,
                              id == TB_OP_maximum || id == TB_OP_minimum
                                  ? tb_cpu_half_mmrows_get(dt, isa)
                                  : NULL);
    }
    if (half_colbin(ctx, op, dt, isa, in, out) == 0)
        return 0;
    const tb_cpu_krow *r = f32_row(id, isa);
    tb_cpu_half_cvt cv = tb_cpu_half_cvt_get(dt, isa);
    if (!r || !cv.widen)
        return TB_EINVAL;
    if (half_bits(ctx, id, dt, isa, in, out, pp) == 0 ||
        tb_cpu_half_bwd(ctx, id, dt, isa, in, out, pp) == 0)
        return 0;
    if (half_blockwise(op, in, out) || tb_cpu_half_bwd_blockwise(op, in, out))
        return half_blocks(ctx, op, r->fn, cv, in, out, pp);
    if ((rc = tb_cpu_half_part(ctx, op, dt, isa, r->fn, cv, in, out, pp)) != 1)
        return rc;
    return half_whole(ctx, op, r->fn, cv, in, out, pp);
}

#define HALF_DEF(op, dt, sfx, c)                                          \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return half_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, TB_CPU_LV_##sfx, \
                        in, out, p);                                      \
    }
TB_CPU_ROWS_HALF(HALF_DEF)
