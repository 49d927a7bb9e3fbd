/* sdpa, sdpa_backward and causal_mask, the portable C rows (f32, f64).
 * sdpa: attn.h's blocked online softmax in the dtype, plain loops (the
 * scores of a block as dot products over D, the weighted sum of v row by
 * row); sdpa_backward: FlashAttention-2's two passes per query block
 * (below); causal_mask: a copy with -inf above the diagonal of each
 * trailing [M, N] plane.  All split over the instance's threads. */
#include <math.h>
#include <string.h>

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

/* The first part's error, or 0. */
static int attn_rc(const tb_cpu_attn_job *j)
{
    for (int i = 0; i < TB_MAX_AXIS_VALUES; i++)
        if (j->rc[i])
            return j->rc[i];
    return 0;
}

int tb_cpu_attn_run(void *ctx, tb_cpu_attn_job *j, tb_cpu_task_fn part)
{
    tb_cpu_parallel(ctx, j->BH * j->Sq * j->Sk * (j->D + j->Dv),
                    j->BH * j->nqb, part, j);
    return attn_rc(j);
}

/* A part's job j, its dims, the block sizes and the scale in T. */
#define ATTN_PART_VARS(T)                                                 \
    tb_cpu_attn_job *j = arg;                                             \
    const int64_t D = j->D, Dv = j->Dv, Sq = j->Sq, Sk = j->Sk;           \
    const int64_t BQ = TB_ATTN_BQ, BK = TB_ATTN_BK;                       \
    const T scale = (T)j->scale

/* One part's tasks: per task, for each visited key block, s = q k^T *
 * scale over the block (-inf where masked), the running max m and sum l
 * of each row rescaled, o = o * alpha + exp(s - m) @ v; then o / l.
 * Scratch: o [BQ, Dv], s [BQ, BK], m and l [BQ]. */
#define SDPA_PART(T, name, EXP)                                           \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        ATTN_PART_VARS(T);                                                \
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

/* ---- sdpa_backward --------------------------------------------------- */

/* FlashAttention-2's backward per (batch, head) pair, which owns its dk
 * and dv (so the pairs split over the threads and every sum runs in the
 * same order at any thread count).  Per query block of BQ rows:
 *  1. over the visited key blocks, the online softmax's running max m
 *     and sum l of each row, and beside them the running sum of
 *     exp(s - m) * dP (dP = g . v_j), so that D = rowsum(P * dP) (=
 *     rowsum(g * out)) comes out of the same pass without out;
 *  2. over the key blocks again: P = exp(s - m) / l (0 where masked), dP,
 *     dS = P * (dP - D) * scale; dv_j += P^T g, dk_j += dS^T q, and
 *     dq += dS k kept in scratch until the block's last key block.
 * The dot products, l and D are summed in double in either dtype: D is
 * subtracted from dP (dS's cancellation where P is nearly one-hot), so
 * f32 sums of them lost the f32 tolerance at large logits.
 * Scratch: l, D [BQ] (double), P and dS [BQ, BK], m [BQ], dq [BQ, D]. */
#define SDPA_BW_PART(T, name, EXP)                                        \
    static void name(void *arg, int part, int nparts)                     \
    {                                                                     \
        ATTN_PART_VARS(T);                                                \
        int64_t h0, h1;                                                   \
        tb_cpu_span(j->BH, 1, part, nparts, &h0, &h1);                    \
        double *l = tb_alloc((size_t)(2 * BQ) * sizeof(double) +          \
                             (size_t)(2 * BQ * BK + BQ + BQ * D) *        \
                                 sizeof(T));                              \
        if (!l) {                                                         \
            j->rc[part] = h0 < h1 ? TB_ENOMEM : 0;                        \
            return;                                                       \
        }                                                                 \
        double *dd = l + BQ;                                              \
        T *pm = (T *)(dd + BQ), *ds = pm + BQ * BK, *m = ds + BQ * BK;    \
        T *dqa = m + BQ;                                                  \
        for (int64_t h = h0; h < h1; h++) {                               \
            const T *g = (const T *)j->in[0].data + h * Sq * Dv;          \
            const T *q = (const T *)j->in[1].data + h * Sq * D;           \
            const T *k = (const T *)j->in[2].data + h * Sk * D;           \
            const T *v = (const T *)j->in[3].data + h * Sk * Dv;          \
            T *dq = (T *)j->out[0].data + h * Sq * D;                     \
            T *dk = (T *)j->out[1].data + h * Sk * D;                     \
            T *dv = (T *)j->out[2].data + h * Sk * Dv;                    \
            for (int64_t e = 0; e < Sk * D; e++)                          \
                dk[e] = 0;                                                \
            for (int64_t e = 0; e < Sk * Dv; e++)                         \
                dv[e] = 0;                                                \
            for (int64_t i0 = 0; i0 < Sq; i0 += BQ) {                     \
                const int64_t qn = Sq - i0 < BQ ? Sq - i0 : BQ;           \
                const int64_t nk = tb_cpu_attn_keys(j, i0, qn);           \
                const T *qb = q + i0 * D, *gb = g + i0 * Dv;              \
                for (int64_t r = 0; r < qn; r++) {                        \
                    m[r] = -(T)INFINITY;                                  \
                    l[r] = dd[r] = 0;                                     \
                }                                                         \
                for (int64_t j0 = 0; j0 < nk; j0 += BK) {                 \
                    const int64_t kn = nk - j0 < BK ? nk - j0 : BK;       \
                    for (int64_t r = 0; r < qn; r++) {                    \
                        T *sr = pm + r * BK, *pr = ds + r * BK;           \
                        T mx = m[r];                                      \
                        double sum = 0, acc = 0;                          \
                        SDPA_BW_SCORES(T, r, sr, pr, mx);                 \
                        const double alpha = EXP(m[r] - mx);              \
                        for (int64_t c = 0; c < kn; c++) {                \
                            const T e = EXP(sr[c] - mx);                  \
                            sum += e;                                     \
                            acc += (double)e * pr[c];                     \
                        }                                                 \
                        m[r] = mx;                                        \
                        l[r] = l[r] * alpha + sum;                        \
                        dd[r] = dd[r] * alpha + acc;                      \
                    }                                                     \
                }                                                         \
                for (int64_t r = 0; r < qn; r++)                          \
                    dd[r] /= l[r];                                        \
                memset(dqa, 0, (size_t)(qn * D) * sizeof(T));             \
                for (int64_t j0 = 0; j0 < nk; j0 += BK) {                 \
                    const int64_t kn = nk - j0 < BK ? nk - j0 : BK;       \
                    for (int64_t r = 0; r < qn; r++) {                    \
                        T *sr = pm + r * BK, *pr = ds + r * BK, mx = m[r]; \
                        SDPA_BW_SCORES(T, r, sr, pr, mx);                 \
                        const T il = (T)(1 / l[r]);                       \
                        for (int64_t c = 0; c < kn; c++) {                \
                            sr[c] = EXP(sr[c] - m[r]) * il;               \
                            pr[c] = (T)(sr[c] * (pr[c] - dd[r]) * scale); \
                        }                                                 \
                        T *qa = dqa + r * D;                              \
                        for (int64_t c = 0; c < kn; c++) {                \
                            const T *kc = k + (j0 + c) * D;               \
                            for (int64_t d = 0; d < D; d++)               \
                                qa[d] += pr[c] * kc[d];                   \
                        }                                                 \
                    }                                                     \
                    for (int64_t c = 0; c < kn; c++) {                    \
                        T *dvc = dv + (j0 + c) * Dv;                      \
                        T *dkc = dk + (j0 + c) * D;                       \
                        for (int64_t r = 0; r < qn; r++) {                \
                            const T pv = pm[r * BK + c];                  \
                            const T sv = ds[r * BK + c];                  \
                            for (int64_t e = 0; e < Dv; e++)              \
                                dvc[e] += pv * gb[r * Dv + e];            \
                            for (int64_t d = 0; d < D; d++)               \
                                dkc[d] += sv * qb[r * D + d];             \
                        }                                                 \
                    }                                                     \
                }                                                         \
                for (int64_t e = 0; e < qn * D; e++)                      \
                    dq[i0 * D + e] = dqa[e];                              \
            }                                                             \
        }                                                                 \
        tb_free(l);                                                       \
    }
/* Row r's scores of key block j0 into sr (-inf where masked, mx their
 * running max) and dP = g_r . v_c into pr. */
#define SDPA_BW_SCORES(T, r, sr, pr, mx)                                  \
    for (int64_t c = 0; c < kn; c++) {                                    \
        const T *kc = k + (j0 + c) * D, *vc = v + (j0 + c) * Dv;          \
        double dot = 0, gv = 0;                                           \
        for (int64_t d = 0; d < D; d++)                                   \
            dot += (double)qb[r * D + d] * kc[d];                         \
        for (int64_t e = 0; e < Dv; e++)                                  \
            gv += (double)gb[r * Dv + e] * vc[e];                         \
        const bool masked = j->causal && j0 + c > i0 + r;                 \
        sr[c] = masked ? -(T)INFINITY : (T)dot * scale;                   \
        pr[c] = masked ? 0 : (T)gv;                                       \
        mx = sr[c] > mx ? sr[c] : mx;                                     \
    }
SDPA_BW_PART(float, sdpa_bw_part_f32, expf)
SDPA_BW_PART(double, sdpa_bw_part_f64, exp)

int tb_cpu_attn_bw_begin(void *ctx, tb_dtype dt, const tb_tensor *in,
                         tb_tensor *out, const tb_params *p,
                         tb_cpu_attn_job *j)
{
    int rc = tb_cpu_begin_op(ctx, TB_OP_sdpa_backward, dt, in, out, p);
    if (rc)
        return rc;
    const tb_op_id id = TB_OP_sdpa_backward;
    *j = (tb_cpu_attn_job){.in = in, .out = out,
                           .BH = in[1].shape[0] * in[1].shape[1],
                           .Sq = in[1].shape[2], .Sk = in[2].shape[2],
                           .D = in[1].shape[3], .Dv = in[3].shape[3],
                           .causal = tb_cpu_param(p, id, 0) != 0,
                           .scale = tb_cpu_param(p, id, 1)};
    if (j->scale == 0)
        j->scale = 1 / sqrt((double)j->D);
    j->nqb = (j->Sq + TB_ATTN_BQ - 1) / TB_ATTN_BQ;
    return 0;
}

int tb_cpu_attn_bw_run(void *ctx, tb_cpu_attn_job *j, tb_cpu_task_fn part)
{
    tb_cpu_parallel(ctx, 3 * j->BH * j->Sq * j->Sk * (j->D + j->Dv), j->BH,
                    part, j);
    return attn_rc(j);
}

static int sdpa_bw_run(void *ctx, tb_dtype dt, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p)
{
    tb_cpu_attn_job j;
    int rc = tb_cpu_attn_bw_begin(ctx, dt, in, out, p, &j);
    return rc ? rc
              : tb_cpu_attn_bw_run(ctx, &j, dt == TB_F32 ? sdpa_bw_part_f32
                                                         : sdpa_bw_part_f64);
}

/* A C row of op in dt (f32, f64) through run. */
#define ATTN_C_ROW(op, dt, run)                                           \
    int TB_CPU_KFN(op, dt, c)(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p)         \
    {                                                                     \
        return run(ctx, TB_CPU_DT_##dt, in, out, p);                      \
    }
ATTN_C_ROW(sdpa_backward, f32, sdpa_bw_run)
ATTN_C_ROW(sdpa_backward, f64, sdpa_bw_run)

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
            if (x + r * j->N != o + r * j->N)                             \
                memcpy(o + r * j->N, x + r * j->N,                        \
                       (size_t)keep * sizeof(T));                         \
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

ATTN_C_ROW(causal_mask, f32, mask_run)
ATTN_C_ROW(causal_mask, f64, mask_run)
