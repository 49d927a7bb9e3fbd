/* The cpu backend's sdpa rows (attn_c.c, attn_avx2.c): what they share.
 *
 * Both run FlashAttention's schedule: the work is (head, query block)
 * tasks, split over the instance's threads; a task keeps its query block,
 * one key/value block and the accumulators (a TB_ATTN_BQ x Dv output, a
 * running max and sum per row) in scratch that stays in L1/L2, streams
 * over the key blocks with the online softmax (rescale the accumulators
 * when the running max grows) and divides once at the end.  With the
 * causal mask (key j allowed for query i iff j <= i) the key blocks past
 * the query block's last row are never visited, and only the blocks that
 * straddle the diagonal are masked.  Query and key blocks have the same
 * size and start on multiples of it, so every visited block holds an
 * allowed key for every row (key j0 <= i0): no row's max is -inf. */
#ifndef TB_BACKENDS_CPU_ATTN_H
#define TB_BACKENDS_CPU_ATTN_H

#include <stdbool.h>
#include <stdint.h>

#include "../backend.h"
#include "pool.h"

#define TB_ATTN_BQ 64 /* query rows per block */
#define TB_ATTN_BK 64 /* keys per block: the same (see above) */

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    int64_t BH, Sq, Sk, D, Dv;
    int64_t nqb; /* query blocks per head */
    double scale;
    bool causal;
    int rc[TB_MAX_AXIS_VALUES]; /* a part's error (scratch) */
} tb_cpu_attn_job;

/* Count the launch, check the operands (tb_cpu_begin_op) and fill j from
 * them and p (scale 0: 1/sqrt(D)).  0 or a TB_E* code. */
int tb_cpu_attn_begin(void *ctx, tb_dtype dt, const tb_tensor *in,
                      tb_tensor *out, const tb_params *p,
                      tb_cpu_attn_job *j);
/* Run part over the (head, query block) tasks on the instance's threads;
 * the first part's error, or 0. */
int tb_cpu_attn_run(void *ctx, tb_cpu_attn_job *j, tb_cpu_task_fn part);
/* sdpa_backward's: the same from its operands g, q, k, v (in[1..3] as
 * sdpa's in[0..2]); 0 or a TB_E* code. */
int tb_cpu_attn_bw_begin(void *ctx, tb_dtype dt, const tb_tensor *in,
                         tb_tensor *out, const tb_params *p,
                         tb_cpu_attn_job *j);
/* Run part over the (batch, head) pairs (each owns its dk and dv); the
 * first part's error, or 0. */
int tb_cpu_attn_bw_run(void *ctx, tb_cpu_attn_job *j, tb_cpu_task_fn part);
/* The keys a query block [i0, i0 + qn) visits: all Sk, or with the
 * causal mask up to its last row's (i0 + qn - 1) inclusive. */
static inline int64_t tb_cpu_attn_keys(const tb_cpu_attn_job *j,
                                       int64_t i0, int64_t qn)
{
    return j->causal && i0 + qn < j->Sk ? i0 + qn : j->Sk;
}

/* causal_mask of 16-bit values at the avx2 level (attn_avx2.c; half.c
 * calls it at every level from avx2 up): rows [b, e) of N values (a
 * row's index in its plane of M rows is r % M) copied from x to o, each
 * row's values past its first min(i + 1, N) set to v's bits when
 * causal, in 16-lane vectors as the f32 row.  x == o is allowed. */
void tb_cpu_mask16_rows_avx2(const uint16_t *x, uint16_t *o, int64_t b,
                             int64_t e, int64_t M, int64_t N, bool causal,
                             uint16_t v);

#endif
