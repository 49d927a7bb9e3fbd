/* sum, mean, max and min of short 16-bit rows over the last axis, and
 * add, sub, mul and div of short rows with b one value a row
 * (half_part_short.h, built once per SIMD level in half_part_avx2.c and
 * half_part_avx512.c; called by half.c: its tb_cpu_half_red path and
 * half_colbin). */
#ifndef TB_BACKENDS_CPU_HALF_PART_H
#define TB_BACKENDS_CPU_HALF_PART_H

#include <stdint.h>

#include "../../ops/op.h"

/* The kinds of tb_cpu_half_short_fn's rows. */
enum { TB_CPU_HSR_SUM, TB_CPU_HSR_MEAN, TB_CPU_HSR_MAX, TB_CPU_HSR_MIN };

/* out[r] for rows r < rows of x (rows x n contiguous 16-bit values, 1 <=
 * n <= the level's VS_LANES): the f32 value (before the narrowing) of
 * half.c's reductions: sum (double, rounded to f32: the f32 sum row's
 * short rows, kernels_simd.h's ks_sum_f32_short, on the widened values:
 * each row's values added in order in double), mean (that double / n,
 * rounded), max and min (the portable rows' rule: m = x[0], then m = v
 * where v > m (v < m) or v is NaN). */
typedef void (*tb_cpu_half_short_fn)(const uint16_t *x, float *out,
                                     int64_t rows, int64_t n, int kind);
tb_cpu_half_short_fn tb_cpu_half_short_avx2(tb_dtype dt);
tb_cpu_half_short_fn tb_cpu_half_short_avx512(tb_dtype dt);

/* o[r n + c] = a[r n + c] op b[r] for rows r < rows, c < n <= HPB_N
 * (op: add, sub, mul, div; b one value a row, [..., 1] against a's
 * [..., n]): the f32 operation on the widened values, narrowed once (the
 * f32 row's bits on the widened tensors). */
#define HPB_N 32
typedef void (*tb_cpu_half_colbin_fn)(const uint16_t *a, const uint16_t *b,
                                      uint16_t *o, int64_t rows, int64_t n,
                                      int op);
tb_cpu_half_colbin_fn tb_cpu_half_colbin_avx2(tb_dtype dt);
tb_cpu_half_colbin_fn tb_cpu_half_colbin_avx512(tb_dtype dt);
/* the level's (NULL: the scalar level, a level this build lacks) */
tb_cpu_half_colbin_fn tb_cpu_half_colbin_get(tb_dtype dt, int isa);

/* The loop of dt at level isa and the longest row it takes (*max_n), or
 * NULL (the scalar level, a level this build lacks, another dtype). */
tb_cpu_half_short_fn tb_cpu_half_short_get(tb_dtype dt, int isa,
                                           int64_t *max_n);

#endif
