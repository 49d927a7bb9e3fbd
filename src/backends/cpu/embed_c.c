/* embedding and embedding_backward, the portable C rows (f32, f64).
 *
 * The indices (values of the idx tensor) are checked first, integers in
 * [0, V) (tb_bw_class), and turned into row numbers; a bad one is
 * TB_EINVAL before anything is written.  The forward copies one row of
 * D per index (memcpy), the indices split over the instance's threads.
 * The gradient is a scatter-add made deterministic: each thread owns a
 * range of dW's V rows, zeroes them and walks every index in order,
 * adding the g rows of the indices it owns, so each row of dW is the sum
 * of its g rows in index order whatever the thread count: the same bits
 * every run and at every thread count. */
#include <string.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "../../ops/op_backward.h"
#include "cpu_internal.h"
#include "kreg.h"

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    const int64_t *row; /* the n indices' rows */
    int64_t n, D, V;
    size_t esz;
} emb_job;

static void emb_gather(void *arg, int part, int nparts)
{
    const emb_job *j = arg;
    const char *w = j->in[0].data;
    char *o = j->out[0].data;
    const size_t rb = (size_t)j->D * j->esz;
    int64_t r0, r1;
    tb_cpu_span(j->n, 1, part, nparts, &r0, &r1);
    for (int64_t r = r0; r < r1; r++)
        memcpy(o + (size_t)r * rb, w + (size_t)j->row[r] * rb, rb);
}

#define EMB_SCATTER(SFX, T)                                               \
    static void emb_scatter_##SFX(void *arg, int part, int nparts)        \
    {                                                                     \
        const emb_job *j = arg;                                           \
        const T *g = j->in[0].data;                                       \
        T *dw = j->out[0].data;                                           \
        const int64_t D = j->D;                                           \
        int64_t v0, v1;                                                   \
        tb_cpu_span(j->V, 1, part, nparts, &v0, &v1);                     \
        memset(dw + v0 * D, 0, (size_t)((v1 - v0) * D) * sizeof(T));      \
        for (int64_t r = 0; r < j->n; r++) {                              \
            const int64_t v = j->row[r];                                  \
            if (v < v0 || v >= v1)                                        \
                continue;                                                 \
            T *restrict d = dw + v * D;                                   \
            const T *restrict s = g + r * D;                              \
            for (int64_t k = 0; k < D; k++)                               \
                d[k] += s[k];                                             \
        }                                                                 \
    }
EMB_SCATTER(f32, float)
EMB_SCATTER(f64, double)

int tb_cpu_indices(const tb_tensor *t, int64_t bound, int64_t *rows)
{
    const int64_t n = tb_tensor_numel(t);
    for (int64_t r = 0; r < n; r++) {
        double v = t->dtype == TB_F32 ? (double)((const float *)t->data)[r]
                                      : ((const double *)t->data)[r];
        if (tb_bw_class(v, bound, &rows[r]))
            return TB_EINVAL;
    }
    return 0;
}

static int emb_run(void *ctx, tb_op_id id, tb_dtype dt, const tb_tensor *in,
                   tb_tensor *out, const tb_params *p)
{
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    const bool bw = id == TB_OP_embedding_backward;
    const tb_tensor *w = bw ? &out[0] : &in[0];
    emb_job j = {in, out, NULL, tb_tensor_numel(&in[1]), w->shape[1],
                 w->shape[0], tb_dtype_size(dt)};
    int64_t *row = tb_alloc((size_t)(j.n ? j.n : 1) * sizeof *row);
    if (!row)
        return TB_ENOMEM;
    rc = tb_cpu_indices(&in[1], j.V, row);
    j.row = row;
    if (rc == 0 && bw)
        tb_cpu_parallel(ctx, j.V * j.D + j.n * j.D, j.V,
                        dt == TB_F32 ? emb_scatter_f32 : emb_scatter_f64,
                        &j);
    else if (rc == 0)
        tb_cpu_parallel(ctx, j.n * j.D, j.n, emb_gather, &j);
    tb_free(row);
    return rc;
}

#define EMB_DEF(op, dt, sfx, c)                                           \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return emb_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, p);      \
    }
TB_CPU_ROWS_EMBED(EMB_DEF)
