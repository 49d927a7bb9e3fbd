/* matmul_int8's cpu rows (qgemm.c: the portable C row and the drivers;
 * qgemm_avx2.c: the AVX2 micro-kernel; qgemm_avx512bf16.c: the VNNI
 * packing and micro-kernel).  ops/quant.h defines the values. */
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

/* The avx512bf16 row (vpdpbusd: four u8 x s8 products summed into each
 * int32 lane).  The operands as its kernel reads them, KQ = ceil(K/4)
 * quads along K, every int32 four bytes k = 4kq..4kq+3 (low byte first;
 * 0 past K, past M and past N):
 *   ap[(ip * KQ + kq) * 12 + r] = qa[12 ip + r, 4kq..]  (u8, raw: the
 *                                 zero point is not subtracted)
 *   bp[(jp * KQ + kq) * 32 + c] = qb[4kq.., 32 jp + c]  (s8)
 *   corr[n] = -a_zero * sum_k qb[k, n]                   (int32)
 * so that sum_k (qa - a_zero) qb = corr + sum_k qa qb.  Exact in int32:
 * the sums start from corr, so after the products of k < j they hold
 * sum_{k<j} (qa - a_zero) qb - a_zero sum_{k>=j} qb, K terms of at most
 * 255 x 128 each: |sum| <= 32640 K <= 2,139,095,040 < 2^31 for K <=
 * 65536 (TB_QUANT_MAX_K, the shape rule's and the C row's limit; the
 * bound holds to K = 65793).  vpdpbusd wraps, never saturates; within
 * that bound nothing wraps either. */
#define TB_QGEMM512_MR 12 /* rows of a register tile, of an ap panel */
#define TB_QGEMM512_NR 32 /* columns of a tile (two zmm), of a bp panel */
typedef struct tb_qgemm512_args {
    const float *a, *b; /* [M][K], [K][N] */
    int64_t M, N, K, KQ;
    float a_scale, b_scale;
    int32_t a_zero;
    int32_t *ap;   /* [ceil(M/12)][KQ][12] */
    int32_t *bp;   /* [ceil(N/32)][KQ][32] */
    int32_t *corr; /* [ceil(N/32) * 32] */
    float *out;    /* [M][N] */
} tb_qgemm512_args;

/* Quantize and pack a's row panels [p0, p1) into ap, b's column panels
 * [p0, p1) into bp and corr (avx512bf16). */
void tb_qgemm_pack_a_avx512bf16(const tb_qgemm512_args *g, int64_t p0,
                                int64_t p1);
void tb_qgemm_pack_b_avx512bf16(const tb_qgemm512_args *g, int64_t p0,
                                int64_t p1);
/* Row panels [p0, p1) of out from the packed operands (avx512bf16). */
void tb_qgemm_rows_avx512bf16(const tb_qgemm512_args *g, int64_t p0,
                              int64_t p1);

#endif
