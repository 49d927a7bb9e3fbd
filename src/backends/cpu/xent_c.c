/* cross_entropy and its gradient, the portable C rows (f32, f64), in
 * the frame of xent.c.
 *
 * Every row of logits is read from memory once: its statistics (max M
 * and S = sum exp(x - M)) come from blocks of XENT_BLOCK values reduced
 * while they sit in L1 (block max, then the block's exponentials summed
 * in double) and merged by the online rule M' = max(M, mb), S' = S
 * e^(M - M') + sb e^(mb - M'); the gradient then writes the row, still
 * in cache, as exp(x - M) * (g / (N S)), the target's element in double
 * (softmax - 1 cancels).  Each row's loss is (M - x_t) + log S in
 * double. */
#include <math.h>

#include "cpu_internal.h"
#include "kreg.h"
#include "xent.h"

#define XENT_BLOCK 256

/* The online merge of a block's statistics (mb, sb) into (M, S). */
static inline void xent_merge(double *M, double *S, double mb, double sb)
{
    if (mb == -INFINITY) {
        *S += sb; /* only NaN reaches S here (all terms are 0 else) */
        return;
    }
    if (mb > *M) {
        *S = *S * exp(*M - mb) + sb;
        *M = mb;
    } else {
        *S += sb * exp(mb - *M);
    }
}

/* M and S of one row of C values; a NaN anywhere makes S NaN, +inf makes
 * it NaN (inf - inf), a row of -inf gives M = -inf and S NaN. */
#define XENT_STATS(SFX, T, EXP)                                           \
    static void xent_stats_##SFX(const T *x, int64_t C, double *Mo,       \
                                 double *So)                              \
    {                                                                     \
        double M = -INFINITY, S = 0;                                      \
        for (int64_t b = 0; b < C; b += XENT_BLOCK) {                     \
            const int64_t e = C - b < XENT_BLOCK ? C : b + XENT_BLOCK;    \
            T mb = x[b];                                                  \
            double sb = 0;                                                \
            for (int64_t j = b + 1; j < e; j++)                           \
                mb = x[j] > mb ? x[j] : mb;                               \
            for (int64_t j = b; j < e; j++)                               \
                sb += (double)EXP(x[j] - mb);                             \
            xent_merge(&M, &S, (double)mb, sb);                           \
        }                                                                 \
        *Mo = M;                                                          \
        *So = M == -INFINITY ? NAN : S;                                   \
    }
XENT_STATS(f32, float, expf)
XENT_STATS(f64, double, exp)

static void xent_fwd_c(const tb_cpu_xent_job *j, int64_t r)
{
    double M, S;
    if (j->dt == TB_F32) {
        const float *x = (const float *)j->x + r * j->C;
        xent_stats_f32(x, j->C, &M, &S);
        j->loss[r] = (M - (double)x[j->cls[r]]) + log(S);
    } else {
        const double *x = (const double *)j->x + r * j->C;
        xent_stats_f64(x, j->C, &M, &S);
        j->loss[r] = (M - x[j->cls[r]]) + log(S);
    }
}

static void xent_bwd_c(const tb_cpu_xent_job *j, int64_t r)
{
    const int64_t C = j->C, c = j->cls[r];
    double M, S;
    if (j->dt == TB_F32) {
        const float *x = (const float *)j->x + r * C;
        float *d = (float *)j->dx + r * C;
        xent_stats_f32(x, C, &M, &S);
        const float m = (float)M, sc = (float)(j->gn / S);
        for (int64_t k = 0; k < C; k++)
            d[k] = expf(x[k] - m) * sc;
        d[c] = (float)(exp((double)x[c] - M) / S * j->gn - j->gn);
    } else {
        const double *x = (const double *)j->x + r * C;
        double *d = (double *)j->dx + r * C;
        xent_stats_f64(x, C, &M, &S);
        const double sc = j->gn / S;
        for (int64_t k = 0; k < C; k++)
            d[k] = exp(x[k] - M) * sc;
        d[c] = exp(x[c] - M) / S * j->gn - j->gn;
    }
}

#define XENT_DEF(op, dt, sfx, c)                                          \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return tb_cpu_xent_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out,  \
                               p, TB_OP_##op == TB_OP_cross_entropy       \
                                      ? xent_fwd_c                        \
                                      : xent_bwd_c);                      \
    }
TB_CPU_C2(XENT_DEF, cross_entropy)
TB_CPU_C2(XENT_DEF, cross_entropy_backward)
