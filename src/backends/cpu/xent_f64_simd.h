/* cross_entropy and its gradient, f64 at the avx2 and avx512 levels
 * (xent.c's frame), for inclusion by f64_avx2.c and f64_avx512.c only,
 * after f64_simd_impl.h (its row max, dx_rowmax, and its sum of
 * exponentials, dx_expsum, the log_softmax rows' own).
 *
 * Each row in two passes over the row (in L1 at the op's class counts):
 * M = max x (the portable row's NaN rule), S = sum e^(x - M) in vector
 * partial sums (dx_exp_nonpos: within 1 ulp an element, 2 at avx2; the next row
 * prefetched meanwhile); the loss (M -
 * x_t) + log S in double (libm's log), the gradient's row e^(x - M)
 * written by the sum's pass and scaled by g / (N S) in a third, the
 * target's element exp(x_t - M) / S g/N - g/N by libm as the C row
 * (softmax - 1 cancels).  The C row's blocks of 256 with their online
 * merge are not needed: one max first costs one more read of a row
 * that sits in cache.  A NaN or +inf in a row makes its S NaN, a row
 * of -inf too (-inf - -inf), as the C row's.  The sums associate
 * differently from the C row's: checkasm holds these rows to it within
 * the op's tolerance. */
#ifndef TB_BACKENDS_CPU_XENT_F64_SIMD_H
#define TB_BACKENDS_CPU_XENT_F64_SIMD_H

#include "xent.h"

static void dx_xent_fwd(const tb_cpu_xent_job *j, int64_t r)
{
    const double *x = (const double *)j->x + r * j->C;
    const double M = dx_rowmax(x, j->C);
    const double S =
        dx_expsum(x, NULL, j->C, M, r + 1 < j->N ? x + j->C : NULL, NULL);
    j->loss[r] = (M - x[j->cls[r]]) + log(M == -INFINITY ? NAN : S);
}

static void dx_xent_bwd(const tb_cpu_xent_job *j, int64_t r)
{
    const int64_t C = j->C, c = j->cls[r];
    const double *x = (const double *)j->x + r * C;
    double *d = (double *)j->dx + r * C;
    const double M = dx_rowmax(x, C);
    const bool nx = r + 1 < j->N; /* the next row's x and dx */
    const double S =
        dx_expsum(x, d, C, M, nx ? x + C : NULL, nx ? d + C : NULL);
    const double sc = j->gn / S;
    const rd vs = rs_d1(sc);
    int64_t k = 0;
    for (; k + RS_W <= C; k += RS_W)
        rs_stored(d + k, rs_mul(rs_loadd(d + k), vs));
    for (; k < C; k++)
        d[k] *= sc;
    d[c] = exp(x[c] - M) / S * j->gn - j->gn;
}

#define DX_XENT_ENTRIES(SFX, LV)                                          \
    int TB_CPU_KFN(cross_entropy, f64, SFX)(void *ctx,                    \
                                            const tb_tensor *in,          \
                                            tb_tensor *out,               \
                                            const tb_params *p)           \
    {                                                                     \
        return tb_cpu_xent_run(ctx, TB_OP_cross_entropy, TB_F64, in, out, \
                               p, dx_xent_fwd);                           \
    }                                                                     \
    int TB_CPU_KFN(cross_entropy_backward, f64, SFX)(void *ctx,           \
                                                     const tb_tensor *in, \
                                                     tb_tensor *out,      \
                                                     const tb_params *p)  \
    {                                                                     \
        return tb_cpu_xent_run(ctx, TB_OP_cross_entropy_backward, TB_F64, \
                               in, out, p, dx_xent_bwd);                  \
    }

#endif
