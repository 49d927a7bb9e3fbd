/* layer_norm and rms_norm, the portable C rows (f32, f64): per row of
 * the last dim, two passes in the dtype (mean, then the squared
 * deviations: no cancellation of E[x^2] - E[x]^2), then the scale; rows
 * split over the instance's threads. */
#include <math.h>

#include "../../base/error.h"
#include "cpu_internal.h"
#include "kreg.h"

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    int64_t rows, D;
    double eps;
    bool rms;
} norm_job;

#define NORM_ROWS(T, name)                                                \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        const norm_job *j = arg;                                          \
        const T *x = j->in[0].data, *w = j->in[1].data;                   \
        const T *b = j->rms ? NULL : j->in[2].data;                       \
        T *o = j->out[0].data;                                            \
        const T eps = (T)j->eps, n = (T)j->D;                             \
        int64_t r0, r1;                                                   \
        tb_cpu_span(j->rows, 1, part, nparts, &r0, &r1);                  \
        for (int64_t r = r0; r < r1; r++) {                               \
            const T *xr = x + r * j->D;                                   \
            T mean = 0, ss = 0;                                           \
            if (!j->rms) {                                                \
                for (int64_t k = 0; k < j->D; k++)                        \
                    mean += xr[k];                                        \
                mean /= n;                                                \
            }                                                             \
            for (int64_t k = 0; k < j->D; k++)                            \
                ss += (xr[k] - mean) * (xr[k] - mean);                    \
            const T inv = (T)1 / (T)sqrt((double)(ss / n + eps));        \
            T *orow = o + r * j->D;                                       \
            for (int64_t k = 0; k < j->D; k++)                            \
                orow[k] = (xr[k] - mean) * inv * w[k] + (b ? b[k] : (T)0); \
        }                                                                 \
    }
NORM_ROWS(float, norm_rows_f32)
NORM_ROWS(double, norm_rows_f64)

static int norm_run(void *ctx, tb_op_id id, tb_dtype dt, const tb_tensor *in,
                    tb_tensor *out, const tb_params *p)
{
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    norm_job j = {in, out, 0, in[0].shape[in[0].ndim - 1],
                  tb_cpu_param(p, id, 0), id == TB_OP_rms_norm};
    j.rows = j.D ? tb_tensor_numel(&in[0]) / j.D : 0;
    tb_cpu_parallel(ctx, j.rows * j.D * 4, j.rows,
                    dt == TB_F32 ? norm_rows_f32 : norm_rows_f64, &j);
    return 0;
}

/* This file's rows are the C ones (norm_avx2.c defines the others). */
#define NORM_DEF(op, dt, sfx, c) NORM_DEF_##sfx(op, dt)
#define NORM_DEF_avx2(op, dt)
#define NORM_DEF_c(op, dt)                                                \
    int TB_CPU_KFN(op, dt, c)(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p)         \
    {                                                                     \
        return norm_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, p);     \
    }
TB_CPU_ROWS_NORM(NORM_DEF)
