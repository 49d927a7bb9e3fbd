/* The frame of every cross_entropy row (xent.h): the launch counted
 * and the operands checked, the targets turned into classes (integers in
 * [0, C): tb_bw_class) before anything is written, the rows split over
 * the instance's threads, each row's loss kept in double and the losses
 * summed in row order after the rows ran, so that the result does not
 * depend on the thread count. */
#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "cpu_internal.h"
#include "xent.h"

static void xent_part(void *arg, int part, int nparts)
{
    const tb_cpu_xent_job *j = arg;
    int64_t r0, r1;
    tb_cpu_span(j->N, 1, part, nparts, &r0, &r1);
    for (int64_t r = r0; r < r1; r++)
        j->row(j, r);
}

int tb_cpu_xent_run(void *ctx, tb_op_id id, tb_dtype dt,
                    const tb_tensor *in, tb_tensor *out, const tb_params *p,
                    tb_cpu_xent_row_fn row)
{
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    const bool bw = id == TB_OP_cross_entropy_backward;
    const tb_tensor *x = &in[bw ? 1 : 0], *t = &in[bw ? 2 : 1];
    tb_cpu_xent_job j = {.dt = dt, .N = x->shape[0], .C = x->shape[1],
                         .x = x->data, .dx = out[0].data, .row = row};
    j.cls = tb_alloc((size_t)j.N * sizeof *j.cls);
    j.loss = bw ? NULL : tb_alloc((size_t)j.N * sizeof *j.loss);
    if (!j.cls || (!bw && !j.loss)) {
        rc = TB_ENOMEM;
        goto done;
    }
    rc = tb_cpu_indices(t, j.C, j.cls);
    if (rc)
        goto done;
    if (bw) {
        double g = dt == TB_F32 ? (double)*(const float *)in[0].data
                                : *(const double *)in[0].data;
        j.gn = g / (double)j.N;
    }
    tb_cpu_parallel(ctx, j.N * j.C * (bw ? 8 : 4), j.N, xent_part, &j);
    if (!bw) {
        double s = 0;
        for (int64_t r = 0; r < j.N; r++)
            s += j.loss[r];
        s /= (double)j.N;
        if (dt == TB_F32)
            *(float *)out[0].data = (float)s;
        else
            *(double *)out[0].data = s;
    }
done:
    tb_free(j.cls);
    tb_free(j.loss);
    return rc;
}
