/* matmul_int8's cpu rows (qgemm.c: the portable C row and the driver;
 * qgemm_avx2.c: the AVX2 micro-kernel).  ops/quant.h defines the values. */
#ifndef TB_BACKENDS_CPU_QGEMM_H
#define TB_BACKENDS_CPU_QGEMM_H

#include <stdint.h>

/* The operands as the AVX2 kernel reads them: a's rows as s16 (qa -
 * a_zero) pairs along K (K2 = ceil(K/2) pairs, an odd K's last pair
 * padded with 0), b as s16 pairs along K for each column, in panels of
 * 16 columns: bp[(panel * K2 + kk) * 32 + 2 * c + t] = qb[2kk + t, 16
 * panel + c] (0 past N or K). */
typedef struct tb_qgemm_args {
    const int16_t *ap; /* [M][2*K2] */
    const int16_t *bp; /* [ceil(N/16)][K2][32] */
    int64_t M, N, K2;
    float a_scale, b_scale;
    float *out; /* [M][N] */
} tb_qgemm_args;

/* Rows [m0, m1) of out (avx2). */
void tb_qgemm_rows_avx2(const tb_qgemm_args *g, int64_t m0, int64_t m1);

#endif
