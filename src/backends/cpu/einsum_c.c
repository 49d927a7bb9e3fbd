/* The cpu backend's einsum driver (einsum1, einsum, einsum3, einsum4):
 * runs ops/einsum.h's plan.  A GEMM step is a batched product through
 * the native GEMM at the avx2/avx512 levels (as matmul) or the level's
 * row loops at the scalar level; a gather step (diagonal, sum over
 * letters, permute) is a strided walk, its sums in double, split over
 * the threads by output element.  Buffers between steps come from the
 * tracked allocator per call; a plan without them (bij,bjk->bik) reads
 * the inputs and writes the output in place, as matmul does.
 *
 * impl: the registry row's name, then the equation and, once a call has
 * run, the plan with its sizes, e.g. "einsum_f32_avx2(bij,bjk->bik: gemm
 * b=8 m=256 n=256 k=256)" (tb_cpu_einsum_impl). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../ops/alloc.h"
#include "../../ops/einsum.h"
#include "drv.h"

/* ---- impl texts ----------------------------------------------------- */

/* One text per (instance, op, equation, dtype): kernel() hands out its
 * address, a call rewrites it with the plan of its shapes (the harness
 * copies the text after the case ran).  Never freed; full: the row's
 * name alone. */
#define EIN_IMPLS 64
static struct {
    const void *ctx;
    tb_op_id op;
    double eq;
    tb_dtype dt;
    char text[200];
} ein_impl[EIN_IMPLS];
static int ein_impl_n;
static pthread_mutex_t ein_impl_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry of the key; create: add it when absent.  NULL: none.  Call
 * with the lock held. */
static char *ein_impl_entry(const void *ctx, tb_op_id op, double eq,
                            tb_dtype dt, bool create)
{
    for (int i = 0; i < ein_impl_n; i++)
        if (ein_impl[i].ctx == ctx && ein_impl[i].op == op &&
            ein_impl[i].eq == eq && ein_impl[i].dt == dt)
            return ein_impl[i].text;
    if (!create || ein_impl_n == EIN_IMPLS)
        return NULL;
    ein_impl[ein_impl_n].ctx = ctx;
    ein_impl[ein_impl_n].op = op;
    ein_impl[ein_impl_n].eq = eq;
    ein_impl[ein_impl_n].dt = dt;
    ein_impl[ein_impl_n].text[0] = '\0';
    return ein_impl[ein_impl_n++].text;
}

const char *tb_cpu_einsum_impl(const void *ctx, const tb_op *op,
                               tb_dtype dt, const tb_params *p,
                               const char *row)
{
    const char *eq = tb_params_str(p, 0);
    if (!eq)
        return row;
    pthread_mutex_lock(&ein_impl_lock);
    char *t = ein_impl_entry(ctx, op->id, p->v[0], dt, true);
    if (t)
        snprintf(t, sizeof ein_impl[0].text, "%s(%s)", row, eq);
    pthread_mutex_unlock(&ein_impl_lock);
    return t ? t : row;
}

/* After a call: the text of its key, if handed out, with the plan. */
static void ein_impl_note(const void *ctx, const tb_op *op, tb_dtype dt,
                          int lv, const tb_params *p, const tb_einsum *e,
                          const tb_ein_plan *pl)
{
    char plan[160];
    tb_einsum_plan_text(e, pl, plan, sizeof plan);
    pthread_mutex_lock(&ein_impl_lock);
    char *t = ein_impl_entry(ctx, op->id, p->v[0], dt, false);
    if (t)
        snprintf(t, sizeof ein_impl[0].text, "%s_%s_%s(%s: %s)", op->name,
                 tb_dtype_name(dt),
                 op->id == TB_OP_einsum1 ? "c"
                 : lv == TB_ISA_AVX512   ? "avx512"
                 : lv == TB_ISA_AVX2     ? "avx2"
                                         : "scalar",
                 tb_params_str(p, 0), plan);
    pthread_mutex_unlock(&ein_impl_lock);
}

/* ---- gather: dst[d...] = sum over the other letters of src ---------- */

typedef struct gather_job {
    tb_dtype dt;
    const char *src;
    char *dst;
    int nd;                    /* dst letters */
    int64_t size[TB_EIN_TERM_MAX], st[TB_EIN_TERM_MAX]; /* per dst dim */
    int ns;                    /* summed letters */
    int64_t ssize[TB_EIN_TERM_MAX], sst[TB_EIN_TERM_MAX];
    int64_t n, per;            /* dst elements; terms of each sum */
} gather_job;

static inline double ld(tb_dtype dt, const char *p, int64_t i)
{
    return dt == TB_F32 ? (double)((const float *)p)[i]
                        : ((const double *)p)[i];
}

static void gather_task(void *arg, int part, int nparts)
{
    const gather_job *j = arg;
    int64_t o0, o1;
    cpu_span(j->n, part, nparts, &o0, &o1);
    if (o0 >= o1)
        return;
    int64_t idx[TB_EIN_TERM_MAX], off = 0, r = o0;
    for (int d = j->nd - 1; d >= 0; d--) {
        idx[d] = r % j->size[d];
        r /= j->size[d];
        off += idx[d] * j->st[d];
    }
    for (int64_t o = o0; o < o1; o++) {
        double acc = 0;
        if (j->ns == 0) {
            acc = ld(j->dt, j->src, off);
        } else {
            int64_t sidx[TB_EIN_TERM_MAX] = {0}, soff = 0;
            for (int64_t t = 0; t < j->per; t++) {
                acc += ld(j->dt, j->src, off + soff);
                for (int d = j->ns - 1; d >= 0; d--) {
                    soff += j->sst[d];
                    if (++sidx[d] < j->ssize[d])
                        break;
                    soff -= sidx[d] * j->sst[d];
                    sidx[d] = 0;
                }
            }
        }
        cpu_store(j->dst, j->dt, o, acc);
        for (int d = j->nd - 1; d >= 0; d--) {
            off += j->st[d];
            if (++idx[d] < j->size[d])
                break;
            off -= idx[d] * j->st[d];
            idx[d] = 0;
        }
    }
}

static void run_gather(tb_cpu_ctx *c, tb_dtype dt, const tb_einsum *e,
                       const tb_ein_term *src_t, const void *src,
                       const tb_ein_term *dst_t, void *dst)
{
    gather_job j = {.dt = dt, .src = src, .dst = dst, .n = 1, .per = 1};
    int64_t lst[TB_EIN_LETTERS] = {0}, s = 1;
    bool in_src[TB_EIN_LETTERS] = {false};
    for (int d = src_t->n - 1; d >= 0; d--) {
        lst[src_t->l[d]] += s; /* a repeated letter: its diagonal */
        s *= e->size[src_t->l[d]];
    }
    bool in_dst[TB_EIN_LETTERS] = {false};
    for (int d = 0; d < dst_t->n; d++) {
        int l = dst_t->l[d];
        in_dst[l] = true;
        j.size[j.nd] = e->size[l];
        j.st[j.nd++] = lst[l];
        j.n *= e->size[l];
    }
    for (int d = 0; d < src_t->n; d++) {
        int l = src_t->l[d];
        if (in_dst[l] || in_src[l])
            continue;
        in_src[l] = true;
        j.ssize[j.ns] = e->size[l];
        j.sst[j.ns++] = lst[l];
        j.per *= e->size[l];
    }
    cpu_pool_run(c->pool, cpu_parts(c, j.n * j.per, j.n), gather_task, &j);
}

/* ---- the batched GEMM ----------------------------------------------- */

typedef struct gemm_job {
    tb_cpu_ctx *c;
    tb_dtype dt;
    int lv;
    const char *a, *b;
    char *o;
    int64_t batch, M, N, K;
    tb_cpu_mm_fn rows; /* the scalar level's row loops */
    int rc[TB_MAX_AXIS_VALUES];
} gemm_job;

#if TB_CPU_HAVE_GEMM
static int gemm_batches(const gemm_job *j, int64_t lo, int64_t hi,
                        int threads, const tb_gemm_parallel *par)
{
    const size_t es = tb_dtype_size(j->dt);
    for (int64_t bi = lo; bi < hi; bi++) {
        const char *a = j->a + (size_t)(bi * j->M * j->K) * es;
        const char *b = j->b + (size_t)(bi * j->K * j->N) * es;
        char *o = j->o + (size_t)(bi * j->M * j->N) * es;
        int rc = j->dt == TB_F32
                     ? tb_gemm_f32_ex(j->lv, j->M, j->N, j->K,
                                      (const float *)a, j->K,
                                      (const float *)b, j->N, (float *)o,
                                      j->N, threads, par)
                     : tb_gemm_f64_ex(j->lv, j->M, j->N, j->K,
                                      (const double *)a, j->K,
                                      (const double *)b, j->N, (double *)o,
                                      j->N, threads, par);
        if (rc)
            return rc;
    }
    return 0;
}

static void gemm_batch_task(void *arg, int part, int nparts)
{
    gemm_job *j = arg;
    int64_t b, e;
    cpu_span(j->batch, part, nparts, &b, &e);
    j->rc[part] = gemm_batches(j, b, e, 1, NULL);
}
#endif

/* The scalar level: rows of every batch's C split over the parts. */
static void rows_task(void *arg, int part, int nparts)
{
    const gemm_job *j = arg;
    const size_t es = tb_dtype_size(j->dt);
    int64_t r, e;
    cpu_span(j->batch * j->M, part, nparts, &r, &e);
    while (r < e) {
        int64_t bi = r / j->M, i0 = r % j->M;
        int64_t i1 = j->M - i0 < e - r ? j->M : i0 + (e - r);
        j->rows(j->a + (size_t)(bi * j->M * j->K) * es,
                j->b + (size_t)(bi * j->K * j->N) * es,
                j->o + (size_t)(bi * j->M * j->N) * es, i0, i1, j->K, j->N);
        r += i1 - i0;
    }
}

static int run_gemm(gemm_job *j)
{
    tb_cpu_ctx *c = j->c;
    CPU_SLOT_AT(cpu_mm_isa(c, j->dt, j->lv), j->lv);
#if TB_CPU_HAVE_GEMM
    if (cpu_use_gemm(j->lv)) {
        /* as matmul: small products one batch per thread, else each
         * product split over the pool */
        if (j->batch > 1 && c->threads > 1 &&
            j->M * j->N * j->K < TB_GEMM_PAR_MIN_MACS) {
            int parts = cpu_parts(c, j->batch * j->M * j->N * j->K,
                                  j->batch);
            parts = cpu_pool_run(c->pool, parts, gemm_batch_task, j);
            for (int i = 0; i < parts; i++)
                if (j->rc[i])
                    return j->rc[i];
            return 0;
        }
        const tb_gemm_parallel par = {cpu_gemm_par_run, c};
        return gemm_batches(j, 0, j->batch, c->threads,
                            c->threads > 1 ? &par : NULL);
    }
#endif
    j->rows = c->k[j->lv].mm[j->dt].rows;
    cpu_pool_run(c->pool,
                 cpu_parts(c, j->batch * j->M * j->K * j->N,
                           j->batch * j->M),
                 rows_task, j);
    return 0;
}

/* ---- the driver ------------------------------------------------------ */

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
    tb_einsum e;
    tb_ein_plan pl;
    if (tb_einsum_of(op, sh, p, &e, NULL, 0) ||
        tb_einsum_plan(&e, &pl, NULL, 0))
        return TB_EPARAM;
    tb_einsum_out_shape(&e, &os);
    if (out->ndim != os.ndim ||
        memcmp(out->shape, os.dim, (size_t)os.ndim * sizeof os.dim[0]))
        return TB_ESHAPE;
    const size_t es = tb_dtype_size(dt);
    void *buf[TB_EIN_SLOTS] = {NULL};
    for (int k = 0; k < op->n_in; k++)
        buf[k] = in[k].data;
    for (int s = op->n_in; s < pl.n_slots; s++)
        if (!(buf[s] = tb_alloc((size_t)pl.numel[s] * es))) {
            rc = TB_ENOMEM;
            goto done;
        }
    for (int i = 0; i < pl.n_steps && !rc; i++) {
        const tb_ein_step *st = &pl.step[i];
        void *dst = st->dst < 0 ? out->data : buf[st->dst];
        if (st->kind == TB_EIN_GATHER) {
            run_gather(c, dt, &e, &pl.term[st->a], buf[st->a], &st->dst_t,
                       dst);
            continue;
        }
        gemm_job j = {.c = c, .dt = dt, .lv = lv, .a = buf[st->a],
                      .b = buf[st->b], .o = dst, .batch = st->batch,
                      .M = st->M, .N = st->N, .K = st->K};
        rc = run_gemm(&j);
    }
done:
    for (int s = op->n_in; s < pl.n_slots; s++)
        tb_free(buf[s]);
    if (!rc)
        ein_impl_note(ctx, op, dt, lv, p, &e, &pl);
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
