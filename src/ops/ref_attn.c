/* Attention references: sdpa (and its unfused composition, the same
 * function) in double, one query row at a time: the scores of the
 * allowed keys, their maximum subtracted before exp (the two-pass
 * softmax, an independent route from the kernels' online one), then the
 * weighted sum of v.  The scale as the case dtype holds it (ref.h's
 * convention for a constant: 1/sqrt(D) rounded once, as a kernel in that
 * dtype computes it); causal_mask's -inf fill. */
#include <math.h>
#include <stdlib.h>

#include "../base/error.h"
#include "ref.h"

/* The scale a kernel in dtype dt applies: p's, rounded to dt (a 16-bit
 * row holds a float parameter in its dtype, half.c); for 0, 1/sqrt(D)
 * as the f32 row computes it in a bf16/f16 case, else in dt. */
static double sdpa_scale(const tb_params *p, int64_t D, tb_dtype dt)
{
    double s = p && tb_params_has(p, 1) ? p->v[1] : 0;
    if (s != 0)
        return tb_dtype_round(dt, s);
    return tb_dtype_round(tb_dtype_is_half(dt) ? TB_F32 : dt,
                          1 / sqrt((double)D));
}

static int sdpa_ref(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    const tb_tensor *q = &in[0], *k = &in[1], *v = &in[2];
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4 ||
        out->dtype != TB_F64 || out->ndim != 4)
        return TB_ESHAPE;
    const int64_t BH = q->shape[0] * q->shape[1], Sq = q->shape[2],
                  D = q->shape[3], Sk = k->shape[2], Dv = v->shape[3];
    const bool causal = p && tb_params_has(p, 0) && p->v[0] != 0;
    const double scale = sdpa_scale(p, D, q->dtype);
    double *s = malloc((size_t)(Sk > 0 ? Sk : 1) * sizeof *s);
    if (!s)
        return TB_ENOMEM;
    double *o = out->data;
    for (int64_t h = 0; h < BH; h++)
        for (int64_t i = 0; i < Sq; i++) {
            const int64_t n = causal && i + 1 < Sk ? i + 1 : Sk;
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < n; j++) {
                double dot = 0;
                for (int64_t d = 0; d < D; d++)
                    dot += tb_tensor_get(q, (h * Sq + i) * D + d) *
                           tb_tensor_get(k, (h * Sk + j) * D + d);
                s[j] = dot * scale;
                mx = s[j] > mx ? s[j] : mx;
            }
            for (int64_t j = 0; j < n; j++) {
                s[j] = exp(s[j] - mx);
                sum += s[j];
            }
            double *orow = o + (h * Sq + i) * Dv;
            for (int64_t e = 0; e < Dv; e++) {
                double acc = 0;
                for (int64_t j = 0; j < n; j++)
                    acc += s[j] * tb_tensor_get(v, (h * Sk + j) * Dv + e);
                orow[e] = acc / sum;
            }
        }
    free(s);
    return 0;
}

int tb_ref_sdpa(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return sdpa_ref(in, out, p);
}

int tb_ref_sdpa_unfused(const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    return sdpa_ref(in, out, p);
}

int tb_ref_causal_mask(const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    const tb_tensor *x = &in[0];
    if (x->ndim < 2 || out->dtype != TB_F64 || out->ndim != x->ndim)
        return TB_ESHAPE;
    const bool causal = !p || !tb_params_has(p, 0) || p->v[0] != 0;
    const int64_t M = x->shape[x->ndim - 2], N = x->shape[x->ndim - 1];
    const int64_t n = tb_tensor_numel(x);
    double *o = out->data;
    for (int64_t f = 0; f < n; f++) {
        const int64_t i = f / N % M, j = f % N;
        o[f] = causal && j > i ? -INFINITY : tb_tensor_get(x, f);
    }
    return 0;
}

/* sdpa_backward: g [B, H, Sq, Dv], q, k, v -> dq, dk, dv, with P
 * materialized one query row at a time (the two-pass softmax above):
 *   dv_j += P_ij g_i, dP_ij = g_i . v_j, D_i = sum_j P_ij dP_ij,
 *   dS_ij = P_ij (dP_ij - D_i), dq_i = scale sum_j dS_ij k_j,
 *   dk_j += scale dS_ij q_i,
 * over the allowed keys j of row i only (a masked score has P = 0). */
int tb_ref_sdpa_backward(const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    const tb_tensor *g = &in[0], *q = &in[1], *k = &in[2], *v = &in[3];
    for (int i = 0; i < 4; i++)
        if (in[i].ndim != 4)
            return TB_ESHAPE;
    for (int i = 0; i < 3; i++)
        if (out[i].dtype != TB_F64 || out[i].ndim != 4)
            return TB_ESHAPE;
    const int64_t BH = q->shape[0] * q->shape[1], Sq = q->shape[2],
                  D = q->shape[3], Sk = k->shape[2], Dv = v->shape[3];
    const bool causal = p && tb_params_has(p, 0) && p->v[0] != 0;
    const double scale = sdpa_scale(p, D, q->dtype);
    double *s = malloc((size_t)(Sk > 0 ? 2 * Sk : 1) * sizeof *s);
    if (!s)
        return TB_ENOMEM;
    double *dp = s + Sk;
    double *dq = out[0].data, *dk = out[1].data, *dv = out[2].data;
    for (int64_t e = 0; e < BH * Sk * D; e++)
        dk[e] = 0;
    for (int64_t e = 0; e < BH * Sk * Dv; e++)
        dv[e] = 0;
    for (int64_t h = 0; h < BH; h++)
        for (int64_t i = 0; i < Sq; i++) {
            const int64_t n = causal && i + 1 < Sk ? i + 1 : Sk;
            const int64_t qi = (h * Sq + i) * D, gi = (h * Sq + i) * Dv;
            double mx = -INFINITY, sum = 0, dsum = 0;
            for (int64_t j = 0; j < n; j++) {
                double dot = 0, gv = 0;
                for (int64_t d = 0; d < D; d++)
                    dot += tb_tensor_get(q, qi + d) *
                           tb_tensor_get(k, (h * Sk + j) * D + d);
                for (int64_t e = 0; e < Dv; e++)
                    gv += tb_tensor_get(g, gi + e) *
                          tb_tensor_get(v, (h * Sk + j) * Dv + e);
                s[j] = dot * scale;
                dp[j] = gv;
                mx = s[j] > mx ? s[j] : mx;
            }
            for (int64_t j = 0; j < n; j++) {
                s[j] = exp(s[j] - mx);
                sum += s[j];
            }
            for (int64_t j = 0; j < n; j++) {
                s[j] /= sum; /* P_ij */
                dsum += s[j] * dp[j];
            }
            for (int64_t d = 0; d < D; d++)
                dq[qi + d] = 0;
            for (int64_t j = 0; j < n; j++) {
                const double ds = s[j] * (dp[j] - dsum) * scale;
                for (int64_t d = 0; d < D; d++) {
                    dq[qi + d] += ds * tb_tensor_get(k, (h * Sk + j) * D + d);
                    dk[(h * Sk + j) * D + d] += ds * tb_tensor_get(q, qi + d);
                }
                for (int64_t e = 0; e < Dv; e++)
                    dv[(h * Sk + j) * Dv + e] += s[j] * tb_tensor_get(g, gi + e);
            }
        }
    free(s);
    return 0;
}
