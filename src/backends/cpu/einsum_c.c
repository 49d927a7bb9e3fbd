/* The cpu backend's einsum driver (einsum1, einsum, einsum3, einsum4):
 * runs ops/einsum.h's plan.  A GEMM step is a batched product through
 * the native GEMM at the avx2/avx512 levels (as matmul; one of N = 1 or
 * M = 1, or a small one of N within two vectors, by the level's kernels
 * of einsum_gemv.h) or the level's row loops at the scalar level; a
 * gather step (diagonal, sum over letters, permute) is a strided walk,
 * its sums in double (without sums: strided copies), split over the
 * threads by output element.  The parse and plan of a thread's last call are reused while it repeats.
 * Buffers between steps: one block, on the stack up to EIN_STACK_BYTES,
 * else from the tracked allocator per call; a plan without them
 * (bij,bjk->bik) reads the inputs and writes the output in place, as
 * matmul does.
 *
 * impl: the registry row's name, then the equation and, once a call has
 * run, the plan with its sizes, e.g. "einsum_f32_avx2(bij,bjk->bik: gemm
 * b=8 m=256 n=256 k=256)" (impl_text.c; cpu.c hands it out). */
#include <stdio.h>
#include <string.h>

#include "../../ops/alloc.h"
#include "../../ops/einsum.h"
#include "drv.h"
#include "einsum_gemv.h"

/* ---- gather: dst[d...] = sum over the other letters of src ---------- */

typedef struct gather_job {
    tb_dtype dt;
    const char *src;
    char *dst;
    tb_ein_gather g;
} gather_job;

static inline double ld(tb_dtype dt, const char *p, int64_t i)
{
    return dt == TB_F32 ? (double)((const float *)p)[i]
                        : ((const double *)p)[i];
}

/* A gather without sums (a permute or a diagonal) of dst elements [o,
 * o1), o's source offset off and index idx: runs along the last dst dim,
 * each a strided copy, then the index carried (the element-wise loop
 * below spent 2 ns an element on loads through ld() and the carry). */
#define GATHER_COPY(TY)                                                   \
    do {                                                                  \
        const TY *restrict s_ = (const TY *)j->src;                       \
        TY *restrict d_ = (TY *)j->dst;                                   \
        const int l_ = g->nd - 1;                                         \
        const int64_t sl_ = g->st[l_];                                    \
        while (o < o1) {                                                  \
            int64_t run = g->size[l_] - idx[l_];                          \
            run = run < o1 - o ? run : o1 - o;                            \
            const TY *sp = s_ + off;                                      \
            TY *dp = d_ + o;                                              \
            if (sl_ == 1)                                                 \
                memcpy(dp, sp, (size_t)run * sizeof(TY));                 \
            else                                                          \
                for (int64_t t = 0; t < run; t++)                         \
                    dp[t] = sp[t * sl_];                                  \
            o += run;                                                     \
            off += run * sl_;                                             \
            idx[l_] += run;                                               \
            for (int d = l_; d > 0 && idx[d] == g->size[d]; d--) {        \
                off += g->st[d - 1] - idx[d] * g->st[d];                  \
                idx[d] = 0;                                               \
                idx[d - 1]++;                                             \
            }                                                             \
        }                                                                 \
    } while (0)

static void gather_task(void *arg, int part, int nparts)
{
    const gather_job *j = arg;
    const tb_ein_gather *g = &j->g;
    int64_t o0, o1;
    cpu_span(j->g.n, part, nparts, &o0, &o1);
    if (o0 >= o1)
        return;
    int64_t idx[TB_EIN_TERM_MAX], off = 0, r = o0;
    for (int d = j->g.nd - 1; d >= 0; d--) {
        idx[d] = r % j->g.size[d];
        r /= j->g.size[d];
        off += idx[d] * j->g.st[d];
    }
    if (g->ns == 0 && g->nd > 0) {
        int64_t o = o0;
        if (j->dt == TB_F32)
            GATHER_COPY(float);
        else
            GATHER_COPY(double);
        return;
    }
    for (int64_t o = o0; o < o1; o++) {
        double acc = 0;
        if (j->g.ns == 0) {
            acc = ld(j->dt, j->src, off);
        } else {
            int64_t sidx[TB_EIN_TERM_MAX] = {0}, soff = 0;
            for (int64_t t = 0; t < j->g.per; t++) {
                acc += ld(j->dt, j->src, off + soff);
                for (int d = j->g.ns - 1; d >= 0; d--) {
                    soff += j->g.sst[d];
                    if (++sidx[d] < j->g.ssize[d])
                        break;
                    soff -= sidx[d] * j->g.sst[d];
                    sidx[d] = 0;
                }
            }
        }
        cpu_store(j->dst, j->dt, o, acc);
        for (int d = j->g.nd - 1; d >= 0; d--) {
            off += j->g.st[d];
            if (++idx[d] < j->g.size[d])
                break;
            off -= idx[d] * j->g.st[d];
            idx[d] = 0;
        }
    }
}

/* A gather that swaps the last two letters of a source whose
 * second-to-last dst letter is its innermost (k^T of bhkd into bhdk):
 * per matrix, the level's transpose blocks (kernels.h's tr) rather than
 * a column walk. */
typedef struct swap_job {
    tb_cpu_tr_fn fn;
    int tile;
    size_t es;
    const char *src;
    char *dst;
    const tb_ein_gather *g;
    int64_t mats; /* leading index values: one matrix each */
} swap_job;

static void swap_task(void *arg, int part, int nparts)
{
    const swap_job *j = arg;
    const tb_ein_gather *g = j->g;
    const int nd = g->nd;
    const int64_t rows = g->size[nd - 1], cols = g->size[nd - 2];
    int64_t m0, m1;
    cpu_span(j->mats, part, nparts, &m0, &m1);
    for (int64_t mt = m0; mt < m1; mt++) {
        const int64_t off = tb_ein_offset(nd - 2, g->size, g->st, mt);
        for (int64_t r0 = 0; r0 < rows; r0 += j->tile)
            j->fn(j->src + (size_t)(off + r0 * g->st[nd - 1]) * j->es,
                  g->st[nd - 1],
                  j->dst + (size_t)(mt * rows * cols + r0) * j->es, rows,
                  rows - r0 < j->tile ? rows - r0 : j->tile, cols);
    }
}

static void run_gather(tb_cpu_ctx *c, tb_dtype dt, int lv,
                       const tb_einsum *e, const tb_ein_term *src_t,
                       const void *src, const tb_ein_term *dst_t, void *dst)
{
    gather_job j = {.dt = dt, .src = src, .dst = dst};
    tb_ein_gather_of(e, src_t, dst_t, &j.g);
    const int nd = j.g.nd;
    if (j.g.ns == 0 && nd >= 2 && j.g.st[nd - 2] == 1 &&
        j.g.st[nd - 1] >= j.g.size[nd - 2] && j.g.size[nd - 1] > 1 &&
        c->k[lv].tr[dt].block) {
        swap_job w = {.fn = c->k[lv].tr[dt].block,
                      .tile = c->k[lv].tr[dt].tile,
                      .es = tb_dtype_size(dt),
                      .src = src,
                      .dst = dst,
                      .g = &j.g,
                      .mats = j.g.n / (j.g.size[nd - 1] * j.g.size[nd - 2])};
        cpu_pool_run(c->pool, cpu_parts(c, j.g.n, w.mats), swap_task, &w);
        return;
    }
    cpu_pool_run(c->pool, cpu_parts(c, j.g.n * j.g.per, j.g.n), gather_task,
                 &j);
}

/* ---- matrix-vector steps ----------------------------------------------- */

/* A GEMM step with N = 1 or M = 1 at a SIMD level: einsum_gemv.h's
 * products, split over the threads by rows of C (N = 1) or by blocks of
 * EIN_VM_COLS columns (M = 1), units numbered over the batch. */
#define EIN_VM_COLS 64
typedef struct gemv_job {
    const tb_cpu_ein_gemv *k;
    size_t es;
    const char *a, *b;
    char *c;
    int64_t M, K, N;
    int64_t nblk; /* M = 1: column blocks a batch */
} gemv_job;

static void gemv_task(void *arg, int part, int nparts)
{
    const gemv_job *j = arg;
    const size_t es = j->es;
    int64_t u, e;
    if (j->N == 1 || j->M > 1) { /* units: rows of C over the batch */
        const int64_t M = j->M, K = j->K, N = j->N;
        cpu_span(j->nblk, part, nparts, &u, &e);
        while (u < e) {
            const int64_t bi = u / M, i0 = u % M;
            const int64_t i1 = M - i0 < e - u ? M : i0 + (e - u);
            const char *a = j->a + (size_t)(u * K) * es;
            const char *b = j->b + (size_t)(bi * K * N) * es;
            char *c = j->c + (size_t)(u * N) * es;
            if (N == 1)
                j->k->mv(a, b, c, i1 - i0, K);
            else
                j->k->mm(a, b, c, i1 - i0, K, N);
            u += i1 - i0;
        }
        return;
    }
    const int64_t K = j->K, N = j->N;
    const int64_t per = (N + EIN_VM_COLS - 1) / EIN_VM_COLS;
    cpu_span(j->nblk, part, nparts, &u, &e);
    while (u < e) {
        const int64_t bi = u / per, b0 = u % per;
        const int64_t b1 = per - b0 < e - u ? per : b0 + (e - u);
        const int64_t j1 = b1 * EIN_VM_COLS < N ? b1 * EIN_VM_COLS : N;
        j->k->vm(j->a + (size_t)(bi * K) * es, j->b + (size_t)(bi * K * N) * es,
                 j->c + (size_t)(bi * N) * es, b0 * EIN_VM_COLS, j1, K, N);
        u += b1 - b0;
    }
}

/* The matrix-vector kernels of level lv for dt, or NULL (the scalar
 * level, a build without the level, a dtype without them). */
static const tb_cpu_ein_gemv *gemv_of(tb_dtype dt, int lv)
{
    const int d = dt == TB_F32 ? 0 : dt == TB_F64 ? 1 : -1;
    if (d < 0)
        return NULL;
#if TB_CPU_HAVE_AVX512
    if (lv >= TB_ISA_AVX512)
        return &tb_cpu_ein_gemv_avx512[d];
#endif
#if TB_CPU_HAVE_AVX2
    if (lv >= TB_ISA_AVX2)
        return &tb_cpu_ein_gemv_avx2[d];
#endif
    (void)lv;
    return NULL;
}

/* A product narrow enough for einsum_gemv.h's unpacked kernel: N of at
 * most two vectors, K and the multiply-adds small (the native GEMM
 * pads N to its 32-wide tile and packs both operands). */
#define EIN_MM_KMAX 256
#define EIN_MM_MACS (INT64_C(1) << 18)

/* step's product: a matrix-vector one or a narrow small one where it is
 * one and the level has them, else tb_cpu_matmul_batched's GEMM. */
static int run_gemm(tb_cpu_ctx *c, tb_dtype dt, int lv, const tb_ein_step *st,
                    const void *a, const void *b, void *dst)
{
    const tb_cpu_ein_gemv *k = gemv_of(dt, lv);
    const bool narrow = k && st->N <= k->mm_nmax && st->K <= EIN_MM_KMAX &&
                        st->M * st->N * st->K <= EIN_MM_MACS;
    if (!k || (st->N != 1 && st->M != 1 && !narrow) ||
        st->batch * st->M * st->N == 0)
        return tb_cpu_matmul_batched(c, dt, lv, a, b, dst, st->batch, st->M,
                                     st->K, st->N);
    gemv_job j = {.k = k, .es = tb_dtype_size(dt), .a = a, .b = b,
                  .c = dst, .M = st->M, .K = st->K, .N = st->N};
    j.nblk = st->N == 1 || st->M > 1
                 ? st->batch * st->M
                 : st->batch * ((st->N + EIN_VM_COLS - 1) / EIN_VM_COLS);
    cpu_pool_run(c->pool,
                 cpu_parts(c, st->batch * st->M * st->N * st->K, j.nblk),
                 gemv_task, &j);
    return 0;
}

/* ---- the driver ------------------------------------------------------ */

/* This thread's last parse and plan, reused while the op, dtype, level,
 * equation and operand shapes repeat (a benchmark's loop, a training
 * step's): parsing, planning, the row lookup and the impl text's
 * formatting cost more than einsum1's 256-element diagonal (about 500 of
 * its 990 ns).  The text is still written on every call (impl_text.c
 * copies it), as a lookup between two calls may have reset it. */
#define EIN_MEMO_EQ 128
typedef struct ein_memo {
    bool valid;
    tb_op_id id;
    tb_dtype dt;
    int lv;
    char eq[EIN_MEMO_EQ];
    tb_shape sh[TB_MAX_INPUTS];
    tb_einsum e;
    tb_ein_plan pl;
    const char *row; /* the registry row's name, or NULL */
    char text[TB_CPU_IMPL_TEXT];
} ein_memo;
static _Thread_local ein_memo ein_last;

static bool ein_memo_hit(const ein_memo *m, tb_op_id id, tb_dtype dt, int lv,
                         const char *eq, const tb_shape *sh, int n_in)
{
    if (!m->valid || m->id != id || m->dt != dt || m->lv != lv ||
        strcmp(m->eq, eq) != 0)
        return false;
    for (int k = 0; k < n_in; k++)
        if (!tb_shape_equal(&m->sh[k], &sh[k]))
            return false;
    return true;
}

/* Parse and plan (or reuse) the call's equation into this thread's memo;
 * TB_EPARAM when it does not parse or plan. */
static int ein_memo_get(const tb_op *op, tb_dtype dt, int lv,
                        const tb_shape *sh, const tb_params *p,
                        ein_memo **out)
{
    ein_memo *m = &ein_last;
    const char *eq = tb_params_str(p, 0);
    *out = m;
    if (eq && ein_memo_hit(m, op->id, dt, lv, eq, sh, op->n_in))
        return 0;
    m->valid = false;
    if (tb_einsum_of(op, sh, p, &m->e, NULL, 0) ||
        tb_einsum_plan(&m->e, &m->pl, NULL, 0))
        return TB_EPARAM;
    size_t n;
    const tb_cpu_krow *rows = tb_cpu_krows(&n);
    const tb_cpu_krow *r = tb_cpu_krow_find(rows, n, op->id, dt, lv);
    char plan[160];
    tb_einsum_plan_text(&m->e, &m->pl, plan, sizeof plan);
    m->row = r ? r->name : NULL;
    snprintf(m->text, sizeof m->text, "%s(%s: %s)", r ? r->name : "?", eq,
             plan);
    if (strlen(eq) < sizeof m->eq) { /* longer ones are not kept */
        strcpy(m->eq, eq);
        m->id = op->id, m->dt = dt, m->lv = lv;
        memcpy(m->sh, sh, (size_t)op->n_in * sizeof sh[0]);
        m->valid = true;
    }
    return 0;
}

/* Intermediates of at most this many bytes in all live on einsum_run's
 * stack: three tracked allocations (malloc, free and the counters) were
 * ~160 of the 590 ns of einsum4 bi,ij,jk,k->b at 16, 64, 64, 64 f32. */
#define EIN_STACK_BYTES 16384

static int einsum_run(void *ctx, tb_op_id id, const tb_tensor *in,
                      tb_tensor *out, const tb_params *p, tb_dtype dt,
                      int lv)
{
    const tb_op *op = tb_op_get(id);
    int rc = cpu_begin(ctx, dt, in, op->n_in, out);
    if (rc)
        return rc;
    tb_cpu_ctx *c = ctx;
    tb_shape sh[TB_MAX_INPUTS], os;
    for (int k = 0; k < op->n_in; k++) {
        sh[k].ndim = in[k].ndim;
        memcpy(sh[k].dim, in[k].shape, sizeof sh[k].dim);
    }
    ein_memo *m;
    if ((rc = ein_memo_get(op, dt, lv, sh, p, &m)))
        return rc;
    const tb_einsum *e = &m->e;
    const tb_ein_plan *pl = &m->pl;
    tb_einsum_out_shape(e, &os);
    if (out->ndim != os.ndim ||
        memcmp(out->shape, os.dim, (size_t)os.ndim * sizeof os.dim[0]))
        return TB_ESHAPE;
    const size_t es = tb_dtype_size(dt);
    void *buf[TB_EIN_SLOTS] = {NULL};
    for (int k = 0; k < op->n_in; k++)
        buf[k] = in[k].data;
    /* the buffers in one block, each on a 64-byte line: on the stack
     * when they fit EIN_STACK_BYTES, else one tracked allocation */
    _Alignas(64) char stk[EIN_STACK_BYTES];
    size_t off[TB_EIN_SLOTS], total = 0;
    for (int s = op->n_in; s < pl->n_slots; s++) {
        off[s] = total;
        total += ((size_t)pl->numel[s] * es + 63) / 64 * 64;
    }
    char *ws = total <= sizeof stk ? stk : tb_alloc(total);
    if (!ws)
        return TB_ENOMEM;
    for (int s = op->n_in; s < pl->n_slots; s++)
        buf[s] = ws + off[s];
    for (int i = 0; i < pl->n_steps && !rc; i++) {
        const tb_ein_step *st = &pl->step[i];
        void *dst = st->dst < 0 ? out->data : buf[st->dst];
        if (st->kind == TB_EIN_GATHER) {
            run_gather(c, dt, lv, e, &pl->term[st->a], buf[st->a],
                       &st->dst_t, dst);
            continue;
        }
        rc = run_gemm(c, dt, lv, st, buf[st->a], buf[st->b], dst);
    }
    if (ws != stk)
        tb_free(ws);
    if (!rc && m->row)
        tb_cpu_impl_text_update(m->row, p->v[0], m->text);
    return rc;
}

#define EIN_DEF(op, dt, sfx, c)                                           \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        if (ctx && tb_cpu_isa(ctx) < TB_CPU_LV_##sfx)                     \
            return TB_EUNSUPPORTED;                                       \
        return einsum_run(ctx, TB_OP_##op, in, out, p, TB_CPU_DT_##dt,    \
                          TB_CPU_LV_##sfx);                               \
    }
TB_CPU_ROWS_EINSUM(EIN_DEF)
