/* The cpu backend's element-wise drivers: add, sub, mul, div and the
 * fused add_relu with NumPy broadcasting, relu, and the f32 math
 * functions of vmath.h (exp, log, tanh, sigmoid, gelu, gelu_tanh,
 * silu); their rows are the driver pairs of kreg.h's arithmetic and math
 * families.  Shapes, broadcasting and the thread split are here; the
 * inner loops are the instance's tables (kernels.h, vmath.h). */
#include "drv.h"

/* Element-wise ops (add..div on equal shapes, relu, the vmath functions)
 * whose working set (inputs + output) is at least this large write
 * their output with non-temporal stores (the *_nt kernels): twice a
 * 32 MiB L3, so in a loop nothing of the previous call survives in the
 * cache anyway, and skipping the output's read-for-ownership cuts the
 * DRAM traffic of an add from 4 to 3 streams.  Below it the output
 * stays cached for its reader (a 1024x1024 add, 12 MiB, must not use
 * them).  Two-input ops use them from CPU_EW_NT_BIN_BYTES on (3/4 of
 * that L3, which the machine's other work shares): there the cached form
 * did not keep its working set in L3 either (a 1024x1024 f64 add, 24
 * MiB: 1.64x its L3 bound in the one-run table at load ~1), and the
 * streaming stores measured 35-40% less time (f64 add 1024x1024 597 ->
 * 330 us, f32 1448x1448 493 -> 314 us; 16 MiB unchanged; tbench ab, 10
 * blocks, one thread, load ~20 on 2 CPUs) -- but never when the output
 * is one of the inputs (add_ and the other in-place forms: the output
 * is the next call's input, and streaming it out made add_ f64
 * 1024x1024 68% slower). */
#define CPU_EW_NT_BYTES (64.0 * 1024 * 1024)
#define CPU_EW_NT_BIN_BYTES (20.0 * 1024 * 1024)

typedef struct cpu_binop {
    tb_cpu_bin_fn vv, sv, vs;
    tb_cpu_binrows_fn rows; /* NULL: none at this level */
    size_t esz;
} cpu_binop;

/* Whether an element-wise op over n elements of es bytes with nin
 * inputs should use its streaming-store kernel (CPU_EW_NT_BYTES). */
static bool cpu_ew_nt(int64_t n, size_t es, int nin)
{
    return (double)n * (double)es * (nin + 1) >= CPU_EW_NT_BYTES;
}

typedef struct cpu_bin_job {
    const cpu_binop *op;
    const char *a, *b;
    char *o;
    bool flat;     /* all three have the output's element order */
    int64_t n;     /* output elements */
    int nd;        /* coalesced dims (>= 1) when !flat */
    int64_t dim[TB_MAX_DIMS];
    int64_t sa[TB_MAX_DIMS], sb[TB_MAX_DIMS]; /* element strides, 0 =
                                                  broadcast */
    int64_t rows;  /* product of dim[0..nd-1) */
} cpu_bin_job;

static void cpu_bin_task(void *argp, int part, int nparts)
{
    const cpu_bin_job *j = argp;
    const size_t es = j->op->esz;
    int64_t b, e;
    if (j->flat) {
        cpu_span_aligned(j->n, 16, part, nparts, &b, &e);
        if (e > b)
            j->op->vv(j->a + b * es, j->b + b * es, j->o + b * es, e - b);
        return;
    }
    cpu_span(j->rows, part, nparts, &b, &e);
    if (b >= e)
        return;
    const int last = j->nd - 1;
    const int64_t inner = j->dim[last];
    /* [rows, inner] with one input a value per row (strides [1, 0]) and
     * the other whole ([inner, 1]): the level's row-broadcast loop, one
     * call for every row of the part (x - max(x, -1, keepdim)) */
    if (j->nd == 2 && j->op->rows && inner > 1) {
        const bool bs = j->sb[0] == 1 && j->sb[1] == 0 &&
                        j->sa[0] == inner && j->sa[1] == 1;
        const bool as = j->sa[0] == 1 && j->sa[1] == 0 &&
                        j->sb[0] == inner && j->sb[1] == 1;
        if (bs || as) {
            j->op->rows(j->a + (as ? b : b * inner) * es,
                        j->b + (bs ? b : b * inner) * es,
                        j->o + b * inner * es, e - b, inner, as);
            return;
        }
    }
    /* Multi-index of row b over dims [0, last). */
    int64_t idx[TB_MAX_DIMS] = {0};
    int64_t oa = 0, ob = 0, r = b;
    for (int d = last - 1; d >= 0; d--) {
        idx[d] = r % j->dim[d];
        r /= j->dim[d];
        oa += idx[d] * j->sa[d];
        ob += idx[d] * j->sb[d];
    }
    tb_cpu_bin_fn fn = j->sa[last] == 0 ? j->op->sv
                    : j->sb[last] == 0 ? j->op->vs
                                       : j->op->vv;
    for (int64_t row = b; row < e; row++) {
        fn(j->a + oa * es, j->b + ob * es, j->o + row * inner * es, inner);
        /* Advance the multi-index (odometer). */
        for (int d = last - 1; d >= 0; d--) {
            oa += j->sa[d];
            ob += j->sb[d];
            if (++idx[d] < j->dim[d])
                break;
            oa -= j->sa[d] * j->dim[d];
            ob -= j->sb[d] * j->dim[d];
            idx[d] = 0;
        }
    }
}

/* The flat path of cpu_binary: j (op = bop, a, b, o, n) split over the
 * threads, one vv loop a part (the streaming or in-place form where it
 * applies). */
static int cpu_bin_flat(tb_cpu_ctx *c, cpu_bin_job *j, cpu_binop *bop,
                        int which, tb_dtype dt, int lv)
{
    /* Parts start on 16-element boundaries, so with the tensor's 64-byte
     * alignment every part's output is line-aligned for the streaming
     * kernel (which handles any start anyway). */
    if ((double)j->n * (double)bop->esz * 3 >= CPU_EW_NT_BIN_BYTES &&
        j->o != j->a && j->o != j->b)
        bop->vv = c->k[lv].bin[which][dt].vv_nt;
    if ((j->o == j->a || j->o == j->b) && c->k[lv].bin[which][dt].vv_ip)
        bop->vv = c->k[lv].bin[which][dt].vv_ip;
    cpu_pool_run(c->pool, cpu_parts(c, j->n, (j->n + 15) / 16),
                 cpu_bin_task, j);
    return 0;
}

/* Broadcast a (na dims) and b (nb dims) to out; checks out's shape.
 * which: TB_CPU_ADD..TB_CPU_ADD_RELU (add_relu is one fused pass, like
 * the others, so it broadcasts, splits and streams as add does).  Equal
 * shapes take the flat fast path (one vv loop split over the threads);
 * broadcasts coalesce dims and run the sv / vs / vv loop per output
 * row. */
static int cpu_binary(void *ctx, const tb_tensor *in, tb_tensor *out,
                      tb_dtype dt, int which, int lv)
{
    int rc = cpu_begin(ctx, dt, in, 2, out);
    if (rc)
        return rc;
    tb_cpu_ctx *c = ctx;
    CPU_SLOT_AT(c->k[lv].bin[which][dt].isa, lv);
    cpu_binop bop = {c->k[lv].bin[which][dt].vv, c->k[lv].bin[which][dt].sv,
                     c->k[lv].bin[which][dt].vs,
                     c->k[lv].bin[which][dt].rows, tb_dtype_size(dt)};
    const cpu_binop *op = &bop;
    const tb_tensor *a = &in[0], *b = &in[1];
    const int nd = out->ndim;
    if (a->ndim > nd || b->ndim > nd)
        return TB_ESHAPE;
    /* Only the fields the job's path reads are set: the flat path's up
     * to n, the broadcast path's dims and strides up to nd (a memset of
     * the whole job, 224 bytes, was a quarter of this function's time
     * in an add of 256 elements). */
    cpu_bin_job j;
    j.op = op;
    j.a = a->data;
    j.b = b->data;
    j.o = out->data;
    /* Equal shapes (the common case): flat, nothing to align */
    bool same = a->ndim == nd && b->ndim == nd;
    for (int d = 0; same && d < nd; d++)
        same = a->shape[d] == out->shape[d] && b->shape[d] == out->shape[d];
    if (same) {
        j.n = cpu_numel(out);
        if (j.n == 0)
            return 0;
        j.flat = true;
        return cpu_bin_flat(c, &j, &bop, which, dt, lv);
    }
    /* Align shapes on the right; strides of the contiguous inputs, with 0
     * where an input dim is 1 (broadcast). */
    int64_t da[TB_MAX_DIMS], db[TB_MAX_DIMS], sa[TB_MAX_DIMS],
        sb[TB_MAX_DIMS];
    int64_t acc_a = 1, acc_b = 1;
    for (int d = nd - 1; d >= 0; d--) {
        int ia = d - (nd - a->ndim), ib = d - (nd - b->ndim);
        da[d] = ia >= 0 ? a->shape[ia] : 1;
        db[d] = ib >= 0 ? b->shape[ib] : 1;
        int64_t od = out->shape[d];
        int64_t want = da[d] == 1 ? db[d] : da[d];
        if ((da[d] != 1 && db[d] != 1 && da[d] != db[d]) || od != want)
            return TB_ESHAPE;
        sa[d] = da[d] == 1 ? 0 : acc_a;
        sb[d] = db[d] == 1 ? 0 : acc_b;
        acc_a *= da[d];
        acc_b *= db[d];
    }
    j.n = cpu_numel(out);
    if (j.n == 0)
        return 0;
    j.flat = cpu_numel(a) == j.n && cpu_numel(b) == j.n;
    if (j.flat)
        return cpu_bin_flat(c, &j, &bop, which, dt, lv);
    /* Drop output dims of size 1, then merge neighbours whose strides
     * line up in both inputs (both 0 counts as lining up). */
    int k = 0;
    for (int d = 0; d < nd; d++) {
        if (out->shape[d] == 1)
            continue;
        if (k > 0 && sa[d] * out->shape[d] == j.sa[k - 1] &&
            sb[d] * out->shape[d] == j.sb[k - 1]) {
            j.dim[k - 1] *= out->shape[d];
            j.sa[k - 1] = sa[d];
            j.sb[k - 1] = sb[d];
            continue;
        }
        j.dim[k] = out->shape[d];
        j.sa[k] = sa[d];
        j.sb[k] = sb[d];
        k++;
    }
    /* n > numel(a) or numel(b) means some dim > 1 was kept. */
    j.nd = k;
    j.rows = cpu_prod(j.dim, 0, k - 1);
    cpu_pool_run(c->pool, cpu_parts(c, j.n, j.rows), cpu_bin_task, &j);
    return 0;
}

/* ---- relu ---- */

typedef struct cpu_unary_job {
    tb_cpu_unary_fn fn;
    size_t esz;
    const char *x;
    char *o;
    int64_t n;
} cpu_unary_job;

static void cpu_unary_task(void *argp, int part, int nparts)
{
    const cpu_unary_job *j = argp;
    int64_t b, e;
    cpu_span_aligned(j->n, 16, part, nparts, &b, &e);
    if (e > b)
        j->fn(j->x + b * j->esz, j->o + b * j->esz, e - b);
}

static int cpu_relu(void *ctx, const tb_tensor *in, tb_tensor *out,
                    tb_dtype dt, int lv)
{
    int rc = cpu_begin(ctx, dt, in, 1, out);
    if (rc)
        return rc;
    tb_cpu_ctx *c = ctx;
    CPU_SLOT_AT(c->k[lv].relu[dt].isa, lv);
    const tb_cpu_unary_fn fn = c->k[lv].relu[dt].fn;
    if (!tb_hostmem_same_shape(&in[0], out))
        return TB_ESHAPE;
    cpu_unary_job j = {fn, tb_dtype_size(dt), in[0].data, out->data,
                       cpu_numel(out)};
    if (cpu_ew_nt(j.n, j.esz, 1))
        j.fn = c->k[lv].relu[dt].fn_nt;
    if (j.n > 0)
        cpu_pool_run(c->pool, cpu_parts(c, j.n, (j.n + 15) / 16),
                     cpu_unary_task, &j);
    return 0;
}

/* ---- f32 math functions (vmath.h) ---- */

typedef struct cpu_vm_job {
    tb_vmath_fn fn;
    const float *x;
    float *o;
    int64_t n;
} cpu_vm_job;

static void cpu_vm_task(void *argp, int part, int nparts)
{
    const cpu_vm_job *j = argp;
    int64_t b, e;
    cpu_span_aligned(j->n, 16, part, nparts, &b, &e);
    if (e > b)
        j->fn(j->x + b, j->o + b, e - b);
}

/* y = f(x) element-wise for f32 (f = TB_VM_*), split over the threads
 * above the work threshold (a SIMD exp costs a few simple element
 * operations; the scalar level's double libm calls ~CPU_EXP_WEIGHT). */
static int cpu_vmath(void *ctx, const tb_tensor *in, tb_tensor *out, int f,
                     int lv)
{
    int rc = cpu_begin(ctx, TB_F32, in, 1, out);
    if (rc)
        return rc;
    tb_cpu_ctx *c = ctx;
    if (!tb_hostmem_same_shape(&in[0], out))
        return TB_ESHAPE;
    CPU_SLOT_AT(c->vm[lv].isa[f], lv);
    cpu_vm_job j = {c->vm[lv].fn[f], in[0].data, out->data, cpu_numel(out)};
    if (cpu_ew_nt(j.n, sizeof(float), 1))
        j.fn = c->vm[lv].fn_nt[f];
    const int64_t weight = lv == TB_ISA_SCALAR ? CPU_EXP_WEIGHT : 4;
    if (j.n > 0)
        cpu_pool_run(c->pool, cpu_parts(c, j.n * weight, (j.n + 15) / 16),
                     cpu_vm_task, &j);
    return 0;
}

/* ---- entry points ---- */

/* The adapters of this file's rows (CPU_DEF in drv.h). */
#define CPU_RUN_BIN(NAME, IDX) CPU_RUN(NAME, cpu_binary(ctx, in, out, dt, IDX, lv))
#define CPU_RUN_VM(NAME, F) CPU_RUN(NAME, cpu_vmath(ctx, in, out, F, lv))

CPU_RUN_BIN(add, TB_CPU_ADD)
CPU_RUN_BIN(sub, TB_CPU_SUB)
CPU_RUN_BIN(mul, TB_CPU_MUL)
CPU_RUN_BIN(div, TB_CPU_DIV)
CPU_RUN_BIN(add_relu, TB_CPU_ADD_RELU)
CPU_RUN_VM(exp, TB_VM_EXP)
CPU_RUN_VM(log, TB_VM_LOG)
CPU_RUN_VM(tanh, TB_VM_TANH)
CPU_RUN_VM(sigmoid, TB_VM_SIGMOID)
CPU_RUN_VM(gelu, TB_VM_GELU_ERF)
CPU_RUN_VM(gelu_tanh, TB_VM_GELU_TANH)
CPU_RUN_VM(silu, TB_VM_SILU)
CPU_RUN(relu, cpu_relu(ctx, in, out, dt, lv))

TB_CPU_ROWS_ARITH(CPU_DEF)
TB_CPU_ROWS_MATH(CPU_DEF)
