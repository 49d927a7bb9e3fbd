/* Index and tiling arithmetic of the CUDA module's layer kernels (norm.cu's
 * gradients, attn.cu, xent.cu, embed.cu), host-testable like geometry.h:
 * valid C11 and CUDA C++, every function checked on the CPU by
 * tests/test_cuda_nn.c (against brute force and tbench's own host code:
 * tb_bw_class, the reference kernels). */
#ifndef TB_BACKENDS_CUDA_NN_GEOM_H
#define TB_BACKENDS_CUDA_NN_GEOM_H

#include <stdint.h>

#include "geometry.h"

/* ---- class and row indices ------------------------------------------ */

/* The index a value t of an index tensor names (cross_entropy's target,
 * an embedding's idx): t when it is an integer in [0, bound), else -1
 * (NaN, infinities, fractions, out of range).  The rule of tb_bw_class
 * (src/ops/op_backward.h), which the cpu rows apply. */
TB_GEOM_FN int64_t tb_cu_index(double t, int64_t bound)
{
    if (!(t >= 0 && t < (double)bound))
        return -1;
    int64_t k = (int64_t)t; /* in [0, bound): no overflow */
    return (double)k == t ? k : -1;
}

/* ---- causal masks ------------------------------------------------------ */

/* Key (column) j is hidden from query (row) i when causal and j > i
 * (torch.ones(Sq, Sk).tril(): top-left aligned). */
TB_GEOM_FN int tb_cu_masked(int64_t i, int64_t j, int causal)
{
    return causal && j > i;
}

/* causal_mask's element f of x [..., M, N] (row-major): hidden or not. */
TB_GEOM_FN int tb_cu_mask_at(int64_t f, int64_t M, int64_t N, int causal)
{
    return tb_cu_masked(f / N % M, f % N, causal);
}

/* ---- sdpa tiles -------------------------------------------------------- */

/* A block computes one tile of B query rows of one (batch, head) and
 * streams the key tiles of B keys through shared memory; the smallest B
 * is 1.  Shared memory of one block, in elements of the dtype: the
 * current key tile (B x D), reused for the value tile (B x Dv) once the
 * scores are taken; the output accumulators (B x Dv); the scores or
 * weights (B x B); the running max, sum and rescale factor (3 x B). */
#define TB_CU_ATTN_TILE_MAX 32

TB_GEOM_FN int64_t tb_cu_attn_smem(int64_t B, int64_t D, int64_t Dv)
{
    const int64_t kv = D > Dv ? D : Dv;
    return B * kv + B * Dv + B * B + 3 * B;
}

/* The largest tile B in 32, 16, ..., 1 whose shared memory (elements of
 * esize bytes) fits in smem_bytes; 0 when none does (D or Dv too large:
 * the kernel refuses the case). */
TB_GEOM_FN int64_t tb_cu_attn_tile(int64_t D, int64_t Dv, int64_t esize,
                                   int64_t smem_bytes)
{
    for (int64_t B = TB_CU_ATTN_TILE_MAX; B >= 1; B /= 2)
        if (tb_cu_attn_smem(B, D, Dv) * esize <= smem_bytes)
            return B;
    return 0;
}

/* The keys the query tile [i0, i0 + qn) visits: [0, Sk), or with the
 * causal mask up to its last row's key i0 + qn - 1: the key tiles past
 * the diagonal are never loaded.  Key tile 0 holds key 0, allowed for
 * every row, so no row's running max stays -inf. */
TB_GEOM_FN int64_t tb_cu_attn_keys(int64_t i0, int64_t qn, int64_t Sk,
                                   int causal)
{
    return causal && i0 + qn < Sk ? i0 + qn : Sk;
}

/* ---- row chunks (the norm gradients' dw and db) ------------------------ */

/* Chunks of rows for the per-chunk partial sums of dw (and db): about
 * `want` (enough groups of threads to fill the device), at most `fit`
 * (the partials that fit in the scratch buffer) and at most rows; 0 when
 * rows == 0 or nothing fits.  The count depends on the shape and the
 * device only, so the sums' order - and the result - is the same every
 * run. */
TB_GEOM_FN int64_t tb_cu_row_chunks(int64_t rows, int64_t want,
                                    int64_t fit)
{
    int64_t c = want < rows ? want : rows;
    c = c < fit ? c : fit;
    return c > 0 ? c : 0;
}

/* Rows [*r0, *r1) of chunk c of nch (0 <= c < nch): consecutive, in
 * order, covering [0, rows) exactly once; sizes differ by at most 1. */
TB_GEOM_FN void tb_cu_chunk_rows(int64_t rows, int64_t nch, int64_t c,
                                 int64_t *r0, int64_t *r1)
{
    *r0 = c * rows / nch;
    *r1 = (c + 1) * rows / nch;
}

#endif
