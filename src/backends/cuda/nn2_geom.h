/* Index and scheduling arithmetic of the CUDA module's second set of
 * layer and optimizer kernels (norm2.cu: batch_norm, group_norm and their
 * gradients; attn_bw.cu: sdpa_backward; optim2.cu: lamb, lbfgs),
 * host-testable like geometry.h and nn_geom.h: valid C11 and CUDA C++,
 * every function checked on the CPU by tests/test_cuda_nn2.c (against
 * brute force, and lbfgs's pass schedule simulated against the
 * reference tb_ref_lbfgs). */
#ifndef TB_BACKENDS_CUDA_NN2_GEOM_H
#define TB_BACKENDS_CUDA_NN2_GEOM_H

#include <stdint.h>

#include "geometry.h"

/* ---- x [N, C, S...]: channels and (sample, group) pairs ----------------- */

/* The offset of value e (0 <= e < N * S) of channel c in x [N, C, S]
 * (S: the trailing dims' product): sample e / S, position e % S.  In
 * order of e it is the cpu rows' order (samples, then positions). */
TB_GEOM_FN int64_t tb_cu_chan_at(int64_t e, int64_t c, int64_t C,
                                 int64_t S)
{
    return ((e / S) * C + c) * S + e % S;
}

/* The channel of value e (0 <= e < C / G * S) of (sample, group) pair r
 * (r = sample * G + group; the pair's values are contiguous at r * C / G
 * * S): group r % G's channel e / S of its cg = C / G. */
TB_GEOM_FN int64_t tb_cu_pair_chan(int64_t r, int64_t e, int64_t G,
                                   int64_t cg, int64_t S)
{
    return (r % G) * cg + e / S;
}

/* The (sample, group) pair of value e (0 <= e < N * S) of channel c:
 * sample e / S, group c / cg (cg = C / G channels a group). */
TB_GEOM_FN int64_t tb_cu_chan_pair(int64_t e, int64_t c, int64_t S,
                                   int64_t G, int64_t cg)
{
    return e / S * G + c / cg;
}

/* ---- sdpa_backward ------------------------------------------------------ */

/* The keys query row i sees: [0, n), n = i + 1 with the causal mask
 * (when that is below Sk), else Sk (the reference's rule). */
TB_GEOM_FN int64_t tb_cu_sdpa_keys(int64_t i, int64_t Sk, int causal)
{
    return causal && i + 1 < Sk ? i + 1 : Sk;
}

/* The query rows that see key j: [r0, Sq), r0 = j with the causal mask
 * (Sq when j >= Sq: none), else 0.  Row i sees key j iff j < keys(i). */
TB_GEOM_FN int64_t tb_cu_sdpa_row0(int64_t j, int64_t Sq, int causal)
{
    if (!causal)
        return 0;
    return j < Sq ? j : Sq;
}

/* Heads (batch x head pairs) per pair of launches: the row statistics of
 * `per` doubles a head must fit in `fit` doubles of scratch; at most BH;
 * 0 when not even one head fits (the kernel refuses the case). */
TB_GEOM_FN int64_t tb_cu_head_chunk(int64_t BH, int64_t per, int64_t fit)
{
    if (per <= 0)
        return BH;
    const int64_t h = fit / per;
    return h < BH ? h : BH;
}

/* Shared memory of sdpa_backward's two kernels, in doubles, for blocks
 * of nt threads: the dq kernel a weight per thread, dq's D accumulators
 * and the block sums' nt / 32 partials; the dk/dv kernel two weights
 * (P, dS) per thread and D + Dv accumulators. */
TB_GEOM_FN int64_t tb_cu_sdpa_bw_smem(int64_t nt, int64_t D, int64_t Dv)
{
    const int64_t q = nt + D + nt / 32, kv = 2 * nt + D + Dv;
    return q > kv ? q : kv;
}

/* ---- reductions over a whole tensor (lamb, lbfgs) ------------------------ */

/* Blocks of a grid-stride reduction over n elements that leaves one
 * partial (or pair) per block: tb_cu_blocks_1d's, at most fit (the
 * partials that fit in scratch), at least 1.  A function of the shape
 * and the device only: the partials are added in block order, so the
 * sum is the same bits every run on a device. */
TB_GEOM_FN int64_t tb_cu_red_blocks(int64_t n, int64_t block,
                                    int64_t max_blocks, int64_t fit)
{
    int64_t b = tb_cu_blocks_1d(n, block, max_blocks);
    if (b > fit)
        b = fit;
    return b < 1 ? 1 : b;
}

/* lbfgs's scratch (doubles): rho [m], al [m], c [m], gamma, the
 * finished dot [1], then the partials: nb pairs per history row for the
 * first launch (s.y, y.y of every row at once), nb per pass later. */
typedef struct tb_cu_lbfgs_layout {
    int64_t rho, al, c, gamma, part; /* offsets */
    int64_t nb;                      /* blocks of every launch */
    int64_t need;                    /* doubles used */
} tb_cu_lbfgs_layout;

/* The layout for m pairs of n elements; 0, or -1 when scratch_elems
 * cannot hold it with one block. */
TB_GEOM_FN int tb_cu_lbfgs_plan(int64_t m, int64_t n, int64_t block,
                                int64_t max_blocks, int64_t scratch_elems,
                                tb_cu_lbfgs_layout *L)
{
    L->rho = 0;
    L->al = m;
    L->c = 2 * m;
    L->gamma = 3 * m;
    L->part = 3 * m + 2;
    const int64_t per = m > 0 ? 2 * m : 1; /* partials per block */
    const int64_t left = scratch_elems - L->part;
    L->nb = tb_cu_red_blocks(n, block, max_blocks,
                             left > 0 ? left / per : 0);
    L->need = L->part + L->nb * per;
    return L->need <= scratch_elems ? 0 : -1;
}

/* One pass of lbfgs's two-loop recursion on the device: an element-wise
 * update of the direction q, then (dot) the per-block partials of a
 * dot product with the new q, finished by a one-block launch into al[k]
 * or c[k].  Pass t of 2m + 1 (m pairs, k below in [0, m)):
 *   t = 0:        q = -g; dot S_{m-1} -> al[m-1] = rho s.q
 *   t = 1..m-1:   q -= al[k+1] Y_{k+1}; dot S_k -> al[k], k = m-1-t
 *   t = m:        q -= al[0] Y_0; q *= gamma; dot Y_0 -> c[0]
 *   t = m+1..2m-1: q += c[k-1] S_{k-1}; dot Y_k -> c[k], k = t-m
 *   t = 2m:       q += c[m-1] S_{m-1}; p_out = p + lr q
 * with c[k] = al[k] - rho[k] y_k.q; a pair with rho 0 (s.y too small)
 * never updates q (its axpy is skipped on the device).  With m = 0 the
 * one pass is q = -g, q *= gamma (1), the step. */
enum { TB_CU_LB_NONE = 0, TB_CU_LB_S = 1, TB_CU_LB_Y = 2 };

typedef struct tb_cu_lbfgs_pass {
    int init;   /* q = -g first */
    int ax;     /* TB_CU_LB_Y: q -= al[ax_k] Y; TB_CU_LB_S: q += c[ax_k] S */
    int64_t ax_k;
    int scale;  /* q *= gamma after the axpy */
    int dot;    /* TB_CU_LB_S: al[dot_k] from S; TB_CU_LB_Y: c[dot_k] */
    int64_t dot_k;
    int step;   /* p_out = p + lr q */
} tb_cu_lbfgs_pass;

TB_GEOM_FN int64_t tb_cu_lbfgs_passes(int64_t m)
{
    return 2 * m + 1;
}

TB_GEOM_FN tb_cu_lbfgs_pass tb_cu_lbfgs_pass_at(int64_t m, int64_t t)
{
    tb_cu_lbfgs_pass s = {0, TB_CU_LB_NONE, 0, 0, TB_CU_LB_NONE, 0, 0};
    if (m == 0) {
        s.init = s.scale = s.step = 1;
        return s;
    }
    if (t == 0) {
        s.init = 1;
    } else if (t <= m) {
        s.ax = TB_CU_LB_Y;
        s.ax_k = m - t;
        s.scale = t == m;
    } else {
        s.ax = TB_CU_LB_S;
        s.ax_k = t - m - 1;
    }
    if (t < m) {
        s.dot = TB_CU_LB_S;
        s.dot_k = m - 1 - t;
    } else if (t < 2 * m) {
        s.dot = TB_CU_LB_Y;
        s.dot_k = t - m;
    } else {
        s.step = 1;
    }
    return s;
}

#endif
