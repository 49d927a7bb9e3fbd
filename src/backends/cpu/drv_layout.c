/* The cpu backend's transpose driver: a materialised swap of two dims
 * (params dim0, dim1) of a contiguous tensor, by the level's plane
 * transposers (transpose.h: transpose_simd.h at the SIMD levels,
 * permute_c.c's loops at scalar), runs of memcpy, or one copy, for
 * every dtype (bf16/f16 from half.c's rows: the 16-bit values move as
 * bits); its rows are the driver pairs of kreg.h's layout family. */
#include <string.h>

#include "drv.h"
#include "transpose.h"

/* Transpose (R == 1): a job item is a strip of CPU_TR_COLS input
 * columns over all input rows; a part's consecutive strips of one plane
 * go to the plane transposer in one call (its tile order spans them:
 * transpose_simd.h's diagonal order, or strips down the plane, whose
 * output rows are written front to back, a stream the hardware
 * prefetchers follow; items of 256 x 256 blocks, which wrote each
 * output row in four pieces at four times, ran 1.2-1.4x slower). */
#define CPU_TR_COLS 64
/* Transposes whose output is at least this large (well beyond a 16-32
 * MiB L3, so the output would be evicted before anyone reads it) write
 * it with non-temporal stores where the level has them. */
#define CPU_TR_NT_BYTES (32.0 * 1024 * 1024)

/* Swapping dims a < b of a contiguous input viewed as [P, SA, Q, SB, R]
 * gives the output [P, SB, Q, SA, R]. */
typedef struct cpu_tr_job {
    tb_cpu_tp_fn fn;
    size_t esz;
    const char *x;
    char *o;
    int64_t P, SA, Q, SB, R;
    int64_t ncb;  /* blocks of CPU_TR_COLS columns (SB) when R == 1 */
    bool nt;      /* fn may use non-temporal stores */
    int64_t n;   /* elements, for the plain-copy case */
} cpu_tr_job;

/* R == 1: (p, q) is an SA x SB transpose with leading dims Q*SB (input)
 * and Q*SA (output); item (p, q, cb) moves a strip of its columns. */
static void cpu_tr_2d_task(void *argp, int part, int nparts)
{
    const cpu_tr_job *j = argp;
    int64_t b, e;
    cpu_span(j->P * j->Q * j->ncb, part, nparts, &b, &e);
    const int64_t ild = j->Q * j->SB, old = j->Q * j->SA;
    for (int64_t it = b, nx; it < e; it = nx) {
        int64_t cb = it % j->ncb, pq = it / j->ncb;
        int64_t q = pq % j->Q, p = pq / j->Q;
        /* the part's strips of one plane in one call: the transposer
         * orders its tiles over the whole width */
        nx = e - it < j->ncb - cb ? e : it + (j->ncb - cb);
        int64_t j0 = cb * CPU_TR_COLS;
        int64_t j1 = (cb + nx - it) * CPU_TR_COLS;
        int64_t nj = (j->SB < j1 ? j->SB : j1) - j0;
        int64_t ioff = p * j->SA * ild + q * j->SB + j0;
        int64_t ooff = (p * j->SB + j0) * old + q * j->SA;
        j->fn(j->x + (size_t)ioff * j->esz, ild,
              j->o + (size_t)ooff * j->esz, old, j->SA, nj, 1, 0, 0, j->nt);
    }
    /* Non-temporal stores are weakly ordered: make them visible before
     * the part reports done. */
    if (j->nt)
        atomic_thread_fence(memory_order_seq_cst);
}

/* R > 1: item (p, jj, q) fills SA contiguous runs of R elements. */
static void cpu_tr_runs_task(void *argp, int part, int nparts)
{
    const cpu_tr_job *j = argp;
    int64_t b, e;
    cpu_span(j->P * j->SB * j->Q, part, nparts, &b, &e);
    const size_t run = (size_t)j->R * j->esz;
    for (int64_t it = b; it < e; it++) {
        int64_t q = it % j->Q, pj = it / j->Q;
        int64_t jj = pj % j->SB, p = pj / j->SB;
        char *o = j->o + (size_t)(it * j->SA * j->R) * j->esz;
        for (int64_t i = 0; i < j->SA; i++) {
            int64_t ioff = (((p * j->SA + i) * j->Q + q) * j->SB + jj) * j->R;
            memcpy(o + (size_t)i * run, j->x + (size_t)ioff * j->esz, run);
        }
    }
}

static void cpu_copy_task(void *argp, int part, int nparts)
{
    const cpu_tr_job *j = argp;
    int64_t b, e;
    cpu_span_aligned(j->n, 16, part, nparts, &b, &e);
    if (e > b)
        memcpy(j->o + (size_t)b * j->esz, j->x + (size_t)b * j->esz,
               (size_t)(e - b) * j->esz);
}

/* Materialised transpose of params dim0 (default -2) and dim1 (-1) by
 * level lv's code. */
int tb_cpu_transpose_lv(void *ctx, const tb_tensor *in, tb_tensor *out,
                        const tb_params *p, tb_dtype dt, int lv)
{
    int rc = cpu_begin(ctx, dt, in, 1, out);
    if (rc)
        return rc;
    tb_cpu_ctx *c = ctx;
    const tb_tensor *x = &in[0];
    int64_t d0, d1;
    int a, b;
    if ((rc = cpu_param_int(p, 0, -2, NULL, &d0)) ||
        (rc = cpu_param_int(p, 1, -1, NULL, &d1)))
        return rc;
    if (tb_axis_norm(d0, x->ndim, &a) || tb_axis_norm(d1, x->ndim, &b))
        return TB_EPARAM;
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    if (out->ndim != x->ndim)
        return TB_ESHAPE;
    for (int d = 0; d < x->ndim; d++) {
        int sd = d == a ? b : d == b ? a : d;
        if (out->shape[d] != x->shape[sd])
            return TB_ESHAPE;
    }
    cpu_tr_job j = {
        .fn = tb_cpu_tp_get(lv, tb_dtype_size(dt)),
        .esz = tb_dtype_size(dt),
        .x = x->data,
        .o = out->data,
        .P = cpu_prod(x->shape, 0, a),
        .SA = x->shape[a],
        .Q = cpu_prod(x->shape, a + 1, b),
        .SB = x->shape[b],
        .R = cpu_prod(x->shape, b + 1, x->ndim),
        .n = cpu_numel(x),
    };
    if (!j.fn)
        return TB_EINVAL;
    if (j.n == 0)
        return 0;
    if (a == b || j.SA == 1 || j.SB == 1) {
        /* Same element order: a plain copy. */
        cpu_pool_run(c->pool, cpu_parts(c, j.n, (j.n + 15) / 16),
                     cpu_copy_task, &j);
    } else if (j.R == 1) {
        j.ncb = (j.SB + CPU_TR_COLS - 1) / CPU_TR_COLS;
        j.nt = (double)j.n * (double)j.esz >= CPU_TR_NT_BYTES;
        cpu_pool_run(c->pool, cpu_parts(c, j.n, j.P * j.Q * j.ncb),
                     cpu_tr_2d_task, &j);
    } else {
        cpu_pool_run(c->pool, cpu_parts(c, j.n, j.P * j.SB * j.Q),
                     cpu_tr_runs_task, &j);
    }
    return 0;
}

/* ---- entry points ---- */

CPU_RUN(transpose, tb_cpu_transpose_lv(ctx, in, out, p, dt, lv))

TB_CPU_ROWS_LAYOUT(CPU_DEF)
