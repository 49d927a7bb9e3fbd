/* softmax, log_softmax and log_softmax_backward in bf16/f16 over the
 * last axis (half_lsm.c), called from half_part.c before half_rows.c's
 * chunks: blocks of whole rows (at most HL_ELEMS f32 values a tensor,
 * 16-row multiples) widened into per-thread f32 scratch that stays in
 * L1, the level's f32 row function itself (kernels.h's lsm / sm rows,
 * bwd_simd_impl.h's bw_lsm_rows through half_lsm_avx2.c /
 * half_lsm_avx512.c) called on them directly, no tensors and no
 * driver, and the block narrowed while in L1 (softmax's and
 * log_softmax's rows longer than 32 at avx512 and avx512bf16: no
 * scratch, half_lsm_fused.h).  The same f32 operations
 * on the same rows in the same groups of VS_LANES rows as half.c's
 * whole-tensor path and half_rows.c: the same bits
 * (tests/test_half_paths.c). */
#ifndef TB_BACKENDS_CPU_HALF_LSM_H
#define TB_BACKENDS_CPU_HALF_LSM_H

#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "bwd_simd.h"
#include "half_cvt.h"

/* 0 done, an error code, or 1 not served (another op or axis, the
 * scalar level's log_softmax_backward, an empty tensor): the caller's
 * next path.  isa: the 16-bit row's level; cv: its conversions;
 * p: the caller's parameters. */
int tb_cpu_half_lsm(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                    tb_kernel_fn f32, tb_cpu_half_cvt cv,
                    const tb_tensor *in, tb_tensor *out, const tb_params *p);

/* softmax (soft 1) or log_softmax rows of n > 32 16-bit values of dt,
 * widened as loaded and narrowed as stored (half_lsm_fused.h): the
 * avx512 level's f32 rows' bits */
typedef void (*tb_cpu_half_lsm_fn)(const uint16_t *x, uint16_t *o,
                                   int64_t rows, int64_t n);
tb_cpu_half_lsm_fn tb_cpu_half_lsm_fused_avx512(tb_dtype dt, int soft);
tb_cpu_half_lsm_fn tb_cpu_half_lsm_fused_avx512bf16(tb_dtype dt, int soft);

/* softmax (soft 1) or log_softmax rows of n <= 16 16-bit values of dt
 * in whole blocks of 16 rows (half_lsm_short.h): the first rows - rows
 * % 16 rows done (0 for n > 16), the number returned; the avx512
 * level's f32 rows' bits */
typedef int64_t (*tb_cpu_half_short_lsm_fn)(const uint16_t *x, uint16_t *o,
                                            int64_t rows, int64_t n);
tb_cpu_half_short_lsm_fn tb_cpu_half_lsm_short_avx512(tb_dtype dt, int soft);
tb_cpu_half_short_lsm_fn tb_cpu_half_lsm_short_avx512bf16(tb_dtype dt,
                                                          int soft);

/* log_softmax_backward's likewise: dx from g and y */
typedef int64_t (*tb_cpu_half_short_bw_fn)(const uint16_t *g,
                                           const uint16_t *y, uint16_t *dx,
                                           int64_t rows, int64_t n);
tb_cpu_half_short_bw_fn tb_cpu_half_lsm_bw_short_avx512(tb_dtype dt);
tb_cpu_half_short_bw_fn tb_cpu_half_lsm_bw_short_avx512bf16(tb_dtype dt);

/* the f32 rows of log_softmax_backward of a SIMD level
 * (bwd_simd_impl.h's bw_lsm_rows, built with the level's flags) */
tb_cpu_bw_lsm_fn tb_cpu_half_lsm_bw_avx2(void);
tb_cpu_bw_lsm_fn tb_cpu_half_lsm_bw_avx512(void);

#endif
