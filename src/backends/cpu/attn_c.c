/* sdpa and causal_mask, the portable C rows (f32, f64).  sdpa: attn.h's
 * blocked online softmax in the dtype, plain loops (the scores of a
 * block as dot products over D, the weighted sum of v row by row);
 * causal_mask: a copy with -inf above the diagonal of each trailing
 * [M, N] plane.  Both split over the instance's threads. */
#include <math.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "attn.h"
#include "cpu_internal.h"
#include "kreg.h"

int tb_cpu_attn_begin(void *ctx, tb_dtype dt, const tb_tensor *in,
                      tb_tensor *out, const tb_params *p,
                      tb_cpu_attn_job *j)
{
    int rc = tb_cpu_begin_op(ctx, TB_OP_sdpa, dt, in, out, p);
    if (rc)
        return rc;
    *j = (tb_cpu_attn_job){.in = in, .out = out,
                           .BH = in[0].shape[0] * in[0].shape[1],
                           .Sq = in[0].shape[2], .Sk = in[1].shape[2],
                           .D = in[0].shape[3], .Dv = in[2].shape[3],
                           .causal = tb_cpu_param(p, TB_OP_sdpa, 0) != 0,
                           .scale = tb_cpu_param(p, TB_OP_sdpa, 1)};
    if (j->scale == 0)
        j->scale = 1 / sqrt((double)j->D);
    j->nqb = (j->Sq + TB_ATTN_BQ - 1) / TB_ATTN_BQ;
    return 0;
}

int tb_cpu_attn_run(void *ctx, tb_cpu_attn_job *j, tb_cpu_task_fn part)
{
    tb_cpu_parallel(ctx, j->BH * j->Sq * j->Sk * (j->D + j->Dv),
                    j->BH * j->nqb, part, j);
    for (int i = 0; i < TB_MAX_AXIS_VALUES; i++)
        if (j->rc[i])
            return j->rc[i];
    return 0;
}

/* One part's tasks: per task, for each visited key block, s = q k^T *
 * scale over the block (-inf where masked), the running max m and sum l
 * of each row rescaled, o = o * alpha + exp(s - m) @ v; then o / l.
 * Scratch: o [BQ, Dv], s [BQ, BK], m and l [BQ]. */
#define SDPA_PART(T, name, EXP)                                           \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        tb_cpu_attn_job *j = arg;                                         \
        const int64_t D = j->D, Dv = j->Dv, Sq = j->Sq, Sk = j->Sk;       \
        const int64_t BQ = TB_ATTN_BQ, BK = TB_ATTN_BK;                   \
        const T scale = (T)j->scale;                                      \
        int64_t t0, t1;                                                   \
        tb_cpu_span(j->BH * j->nqb, 1, part, nparts, &t0, &t1);           \
        T *o = tb_alloc((size_t)(BQ * Dv + BQ * BK + 2 * BQ) * sizeof(T)); \
        if (!o) {                                                         \
            j->rc[part] = t0 < t1 ? TB_ENOMEM : 0;                        \
            return;                                                       \
        }                                                                 \
        T *s = o + BQ * Dv, *m = s + BQ * BK, *l = m + BQ;                \
        for (int64_t t = t0; t < t1; t++) {                               \
            const int64_t h = t / j->nqb, i0 = t % j->nqb * BQ;           \
            const int64_t qn = Sq - i0 < BQ ? Sq - i0 : BQ;               \
            const T *q = (const T *)j->in[0].data + (h * Sq + i0) * D;    \
            const T *k = (const T *)j->in[1].data + h * Sk * D;           \
            const T *v = (const T *)j->in[2].data + h * Sk * Dv;          \
            const int64_t nk = tb_cpu_attn_keys(j, i0, qn);               \
            for (int64_t r = 0; r < qn; r++) {                            \
                m[r] = -(T)INFINITY;                                      \
                l[r] = 0;                                                 \
                for (int64_t e = 0; e < Dv; e++)                          \
                    o[r * Dv + e] = 0;                                    \
            }                                                             \
            for (int64_t j0 = 0; j0 < nk; j0 += BK) {                     \
                const int64_t kn = nk - j0 < BK ? nk - j0 : BK;           \
                for (int64_t r = 0; r < qn; r++) {                        \
                    T *sr = s + r * BK, mx = m[r], sum = 0;               \
                    for (int64_t c = 0; c < kn; c++) {                    \
                        const T *kc = k + (j0 + c) * D;                   \
                        T dot = 0;                                        \
                        for (int64_t d = 0; d < D; d++)                   \
                            dot += q[r * D + d] * kc[d];                  \
                        sr[c] = j->causal && j0 + c > i0 + r              \
                                    ? -(T)INFINITY                        \
                                    : dot * scale;                        \
                        mx = sr[c] > mx ? sr[c] : mx;                     \
                    }                                                     \
                    const T alpha = EXP(m[r] - mx);                       \
                    for (int64_t c = 0; c < kn; c++) {                    \
                        sr[c] = EXP(sr[c] - mx);                          \
                        sum += sr[c];                                     \
                    }                                                     \
                    m[r] = mx;                                            \
                    l[r] = l[r] * alpha + sum;                            \
                    T *orow = o + r * Dv;                                 \
                    for (int64_t e = 0; e < Dv; e++)                      \
                        orow[e] *= alpha;                                 \
                    for (int64_t c = 0; c < kn; c++)                      \
                        for (int64_t e = 0; e < Dv; e++)                  \
                            orow[e] += sr[c] * v[(j0 + c) * Dv + e];      \
                }                                                         \
            }                                                             \
            T *out = (T *)j->out[0].data + (h * Sq + i0) * Dv;            \
            for (int64_t r = 0; r < qn; r++)                              \
                for (int64_t e = 0; e < Dv; e++)                          \
                    out[r * Dv + e] = o[r * Dv + e] / l[r];               \
        }                                                                 \
        tb_free(o);                                                       \
    }
SDPA_PART(float, sdpa_part_f32, expf)
SDPA_PART(double, sdpa_part_f64, exp)

int TB_CPU_KFN(sdpa, f32, c)(void *ctx, const tb_tensor *in, tb_tensor *out,
                             const tb_params *p)
{
    tb_cpu_attn_job j;
    int rc = tb_cpu_attn_begin(ctx, TB_F32, in, out, p, &j);
    return rc ? rc : tb_cpu_attn_run(ctx, &j, sdpa_part_f32);
}

int TB_CPU_KFN(sdpa, f64, c)(void *ctx, const tb_tensor *in, tb_tensor *out,
                             const tb_params *p)
{
    tb_cpu_attn_job j;
    int rc = tb_cpu_attn_begin(ctx, TB_F64, in, out, p, &j);
    return rc ? rc : tb_cpu_attn_run(ctx, &j, sdpa_part_f64);
}

/* ---- causal_mask ---------------------------------------------------- */

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    int64_t rows, M, N; /* rows: of N elements, over all planes */
    bool causal;
} mask_job;

#define MASK_PART(T, name)                                                \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        const mask_job *j = arg;                                          \
        const T *x = j->in[0].data;                                       \
        T *o = j->out[0].data;                                            \
        int64_t r0, r1;                                                   \
        tb_cpu_span(j->rows, 1, part, nparts, &r0, &r1);                  \
        for (int64_t r = r0; r < r1; r++) {                               \
            const int64_t i = r % j->M;                                   \
            const int64_t keep = j->causal && i + 1 < j->N ? i + 1 : j->N; \
            for (int64_t c = 0; c < keep; c++)                            \
                o[r * j->N + c] = x[r * j->N + c];                        \
            for (int64_t c = keep; c < j->N; c++)                         \
                o[r * j->N + c] = -(T)INFINITY;                           \
        }                                                                 \
    }
MASK_PART(float, mask_part_f32)
MASK_PART(double, mask_part_f64)

static int mask_run(void *ctx, tb_dtype dt, const tb_tensor *in,
                    tb_tensor *out, const tb_params *p)
{
    int rc = tb_cpu_begin_op(ctx, TB_OP_causal_mask, dt, in, out, p);
    if (rc)
        return rc;
    const int nd = in[0].ndim;
    mask_job j = {in, out, 0, in[0].shape[nd - 2], in[0].shape[nd - 1],
                  tb_cpu_param(p, TB_OP_causal_mask, 0) != 0};
    j.rows = tb_tensor_numel(&in[0]) / j.N;
    tb_cpu_parallel(ctx, j.rows * j.N, j.rows,
                    dt == TB_F32 ? mask_part_f32 : mask_part_f64, &j);
    return 0;
}

int TB_CPU_KFN(causal_mask, f32, c)(void *ctx, const tb_tensor *in,
                                    tb_tensor *out, const tb_params *p)
{
    return mask_run(ctx, TB_F32, in, out, p);
}

int TB_CPU_KFN(causal_mask, f64, c)(void *ctx, const tb_tensor *in,
                                    tb_tensor *out, const tb_params *p)
{
    return mask_run(ctx, TB_F64, in, out, p);
}
