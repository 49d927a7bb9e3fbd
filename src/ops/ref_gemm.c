/* The references' blocked GEMM (ref.h, tb_ref_gemm): matmul's and
 * linear's dot products, in plain C (no SIMD intrinsics, nothing from
 * the backends), fast enough that the check of a 4096 matmul takes
 * seconds instead of minutes.
 *
 * Model: the GOTO/BLIS loop nest (columns of B in blocks of GEMM_NC,
 * depth in blocks of GEMM_KC, rows of A in blocks of GEMM_MC; each block
 * converted to double once and packed into panels of GEMM_MR rows and
 * GEMM_NR columns, so the innermost loop reads both operands
 * contiguously from L1/L2), with the register tile's sums made
 * compensated: each output keeps a running sum s and a compensation c
 * (c in a scratch array between depth blocks); every GEMM_KS terms the
 * tile's plain partial sums are added to s by Knuth's TwoSum, whose
 * exact rounding error goes to c; at the end the output is s + c.
 *
 * Error, whatever the order of the blocks: the products are exact for
 * f32, bf16 and f16 inputs (24-bit significands multiply exactly in
 * double) and within u |a_k b_k| for f64 (u = 2^-53); a partial sum of
 * GEMM_KS terms is within (GEMM_KS - 1) u of its terms' absolute sum;
 * TwoSum is exact and c's own rounding is second order; s + c rounds
 * once.  So |ref - exact| <= u |exact| + (GEMM_KS + 1) u sum_k |a_k b_k|
 * (17 u with GEMM_KS = 16) for every K: the previous per-output
 * Neumaier sum's u |exact| + u sum |a_k b_k| (f64) plus 16 u sum |a_k
 * b_k|, which for inputs in [-1, 1] (sum |a_k b_k| ~ K / 4) is at most
 * 0.3 of the f64 check's atol 1e-13 sqrt(K) even at K = 4096 with every
 * rounding of one sign.  An inf or NaN term makes s inf or NaN, which is
 * the result (c is then meaningless), as tb_ksum_get does. */
#include <math.h>
#include <string.h>

#include "../base/error.h"
#include "alloc.h"
#include "ref.h"
#include "tensor.h"

enum {
    GEMM_MR = 4,   /* register tile: rows */
    GEMM_NR = 4,   /* register tile: columns */
    GEMM_KS = 16,  /* terms summed plainly before a TwoSum */
    GEMM_KC = 256, /* depth block (a multiple of GEMM_KS) */
    GEMM_MC = 64,  /* rows of A per block: 128 KiB packed */
    GEMM_NC = 256, /* columns of B per block: 512 KiB packed */
};

/* s + x = t + e exactly (Knuth's TwoSum, no branch): s = t, *c += e. */
static inline void two_sum(double *s, double *c, double x)
{
    double t = *s + x;
    double z = t - *s;
    *c += (*s - (t - z)) + (x - z);
    *s = t;
}

/* A block of m as doubles in panels of w (GEMM_MR or GEMM_NR) along
 * one dimension: np indices from p0 along it (stride ps), each panel
 * nd indices from d0 along the depth (stride ds) of w values, those
 * past np 0.  A's block: rows are the panels' dimension; B's: columns. */
static void pack(const tb_ref_mat *m, int64_t p0, int64_t np, int64_t ps,
                 int64_t d0, int64_t nd, int64_t ds, int64_t w, double *dst)
{
    for (int64_t q = 0; q < np; q += w)
        for (int64_t k = 0; k < nd; k++, dst += w)
            for (int64_t r = 0; r < w; r++)
                dst[r] = q + r < np ? tb_tensor_load(m->t,
                                                     m->off +
                                                         (p0 + q + r) * ps +
                                                         (d0 + k) * ds)
                                    : 0.0;
}

/* One register tile: kc terms of panels a and b added to the mr x nr
 * outputs at s (row stride ld) and their compensations at c. */
static void tile(int64_t kc, const double *a, const double *b, double *s,
                 double *c, int64_t ld, int64_t mr, int64_t nr)
{
    double ts[GEMM_MR][GEMM_NR] = {{0}}, tc[GEMM_MR][GEMM_NR] = {{0}};
    for (int64_t i = 0; i < mr; i++)
        for (int64_t j = 0; j < nr; j++) {
            ts[i][j] = s[i * ld + j];
            tc[i][j] = c[i * ld + j];
        }
    for (int64_t q = 0; q < kc; q += GEMM_KS) {
        double acc[GEMM_MR][GEMM_NR] = {{0}};
        const int64_t qe = q + GEMM_KS < kc ? q + GEMM_KS : kc;
        for (int64_t p = q; p < qe; p++) {
            const double *ap = a + p * GEMM_MR, *bp = b + p * GEMM_NR;
            for (int i = 0; i < GEMM_MR; i++)
                for (int j = 0; j < GEMM_NR; j++)
                    acc[i][j] += ap[i] * bp[j];
        }
        for (int i = 0; i < GEMM_MR; i++)
            for (int j = 0; j < GEMM_NR; j++)
                two_sum(&ts[i][j], &tc[i][j], acc[i][j]);
    }
    for (int64_t i = 0; i < mr; i++)
        for (int64_t j = 0; j < nr; j++) {
            s[i * ld + j] = ts[i][j];
            c[i * ld + j] = tc[i][j];
        }
}

int tb_ref_gemm(const tb_ref_mat *a, const tb_ref_mat *b, const double *init,
                int64_t M, int64_t N, int64_t K, double *o)
{
    if (M <= 0 || N <= 0)
        return 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++)
            o[i * N + j] = init ? init[j] : 0.0;
    if (K <= 0)
        return 0;
    double *c = tb_alloc((size_t)(M * N) * sizeof *c);
    double *ap = tb_alloc(GEMM_MC * GEMM_KC * sizeof *ap);
    double *bp = tb_alloc(GEMM_KC * GEMM_NC * sizeof *bp);
    if (!c || !ap || !bp) {
        tb_free(c);
        tb_free(ap);
        tb_free(bp);
        return TB_ENOMEM;
    }
    memset(c, 0, (size_t)(M * N) * sizeof *c);
    for (int64_t j0 = 0; j0 < N; j0 += GEMM_NC) {
        const int64_t nc = N - j0 < GEMM_NC ? N - j0 : GEMM_NC;
        for (int64_t p0 = 0; p0 < K; p0 += GEMM_KC) {
            const int64_t kc = K - p0 < GEMM_KC ? K - p0 : GEMM_KC;
            pack(b, j0, nc, b->cs, p0, kc, b->rs, GEMM_NR, bp);
            for (int64_t i0 = 0; i0 < M; i0 += GEMM_MC) {
                const int64_t mc = M - i0 < GEMM_MC ? M - i0 : GEMM_MC;
                pack(a, i0, mc, a->rs, p0, kc, a->cs, GEMM_MR, ap);
                for (int64_t jr = 0; jr < nc; jr += GEMM_NR)
                    for (int64_t ir = 0; ir < mc; ir += GEMM_MR) {
                        const int64_t off = (i0 + ir) * N + j0 + jr;
                        tile(kc, ap + ir * kc, bp + jr * kc, o + off,
                             c + off, N,
                             mc - ir < GEMM_MR ? mc - ir : GEMM_MR,
                             nc - jr < GEMM_NR ? nc - jr : GEMM_NR);
                    }
            }
        }
    }
    for (int64_t i = 0; i < M * N; i++)
        if (isfinite(o[i]))
            o[i] += c[i];
    tb_free(c);
    tb_free(ap);
    tb_free(bp);
    return 0;
}
