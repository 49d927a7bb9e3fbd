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
 * b=8 m=256 n=256 k=256)" (impl_text.c; cpu.c hands it out). */
#include <stdio.h>
#include <string.h>

#include "../../ops/alloc.h"
#include "../../ops/einsum.h"
#include "drv.h"

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

static void gather_task(void *arg, int part, int nparts)
{
    const gather_job *j = arg;
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

static void run_gather(tb_cpu_ctx *c, tb_dtype dt, const tb_einsum *e,
                       const tb_ein_term *src_t, const void *src,
                       const tb_ein_term *dst_t, void *dst)
{
    gather_job j = {.dt = dt, .src = src, .dst = dst};
    tb_ein_gather_of(e, src_t, dst_t, &j.g);
    cpu_pool_run(c->pool, cpu_parts(c, j.g.n * j.g.per, j.g.n), gather_task,
                 &j);
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
        rc = tb_cpu_matmul_batched(c, dt, lv, buf[st->a], buf[st->b], dst,
                                   st->batch, st->M, st->K, st->N);
    }
done:
    for (int s = op->n_in; s < pl.n_slots; s++)
        tb_free(buf[s]);
    if (!rc) {
        size_t n;
        const tb_cpu_krow *rows = tb_cpu_krows(&n);
        const tb_cpu_krow *r = tb_cpu_krow_find(rows, n, id, dt, lv);
        char plan[160], text[TB_CPU_IMPL_TEXT];
        tb_einsum_plan_text(&e, &pl, plan, sizeof plan);
        snprintf(text, sizeof text, "%s(%s: %s)", r ? r->name : "?",
                 tb_params_str(p, 0), plan);
        if (r)
            tb_cpu_impl_text_update(r->name, p->v[0], text);
    }
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
