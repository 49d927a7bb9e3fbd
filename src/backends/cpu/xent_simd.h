/* cross_entropy and its gradient, f32 at the avx2 and avx512 levels
 * (xent.c's frame), for inclusion by xent_avx2.c and xent_avx512.c only
 * (each built with its level's flags): each row's statistics by
 * lsm_simd.h's online blocks (the log_softmax rows' own, 8 or 16 lanes,
 * vmath_simd.h's exp), the gradient's row by softmax's write pass as
 * exp(x - M) * (g / (N S)) (rows of at most a block: the exponentials
 * of the sum's pass kept and scaled, ks_sm_exp: one exp an element),
 * the target's element in double as the C row does.  checkasm holds
 * them to the C rows and the reference within the op's tolerance (the
 * sums associate differently, the exp is vmath's). */
#ifndef TB_BACKENDS_CPU_XENT_SIMD_H
#define TB_BACKENDS_CPU_XENT_SIMD_H

#include <immintrin.h>
#include <math.h>

#include "cpu_internal.h"
#include "kreg.h"
#include "lsm_simd.h"
#include "xent.h"

static void xent_fwd_simd(const tb_cpu_xent_job *j, int64_t r)
{
    const float *x = (const float *)j->x + r * j->C;
    float m, s;
    ks_lsm_stats(x, j->C, &m, &s);
    j->loss[r] = ((double)m - (double)x[j->cls[r]]) + log((double)s);
}

static void xent_bwd_simd(const tb_cpu_xent_job *j, int64_t r)
{
    const int64_t C = j->C, c = j->cls[r];
    const float *x = (const float *)j->x + r * C;
    float *d = (float *)j->dx + r * C;
    float m, s;
    if (C <= TB_CPU_SUM_BLOCK) {
        /* one exp an element: e kept in d, then scaled */
        s = ks_sm_exp(x, d, C, &m);
        ks_sm_scale(d, C, (float)(j->gn / (double)s));
    } else {
        ks_lsm_stats(x, C, &m, &s);
        ks_lsm_write(x, d, C, m, (float)(j->gn / (double)s), 1);
    }
    d[c] = (float)(exp((double)x[c] - (double)m) / (double)s * j->gn -
                   j->gn);
}

#define XENT_ENTRIES(SFX)                                                 \
    int TB_CPU_KFN(cross_entropy, f32, SFX)(void *ctx,                    \
                                            const tb_tensor *in,          \
                                            tb_tensor *out,               \
                                            const tb_params *p)           \
    {                                                                     \
        return tb_cpu_xent_run(ctx, TB_OP_cross_entropy, TB_F32, in, out, \
                               p, xent_fwd_simd);                         \
    }                                                                     \
    int TB_CPU_KFN(cross_entropy_backward, f32, SFX)(void *ctx,           \
                                                     const tb_tensor *in, \
                                                     tb_tensor *out,      \
                                                     const tb_params *p)  \
    {                                                                     \
        return tb_cpu_xent_run(ctx, TB_OP_cross_entropy_backward, TB_F32, \
                               in, out, p, xent_bwd_simd);                \
    }

#endif
