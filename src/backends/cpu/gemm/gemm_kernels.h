/* GEMM micro-kernels: the contract between the portable framework
 * (gemm.c) and the per-ISA files (gemm_avx2.c, gemm_avx512.c, each built
 * with only its ISA's -m flags).  Internal to src/backends/cpu/gemm/.
 *
 * A micro-kernel computes one MR x NR tile of C from packed operands:
 *
 *   c[i*ldc + j] (=|+=) sum_{k < kc} a[k*MR + i] * b[k*NR + j]
 *
 * for i < MR, j < NR, with `=` when accumulate == 0 and `+=` otherwise.
 * a is a packed A micro-panel (MR values per k step, rows of A side by
 * side), b a packed B micro-panel (NR values per k step, a row segment
 * of B); both are zero-padded to full MR / NR by the packer, so the
 * kernel always reads exactly kc*MR and kc*NR elements.  kc >= 1.  b is
 * 64-byte aligned when NR * sizeof(T) is a multiple of 64; a may have
 * any alignment of T.  c is a full MR x NR tile with row stride ldc (the
 * framework passes a scratch tile for partial edge tiles), never read
 * when accumulate == 0.  The products are accumulated with FMA, in k
 * order, per element. */
#ifndef TB_BACKENDS_CPU_GEMM_GEMM_KERNELS_H
#define TB_BACKENDS_CPU_GEMM_GEMM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef void (*tb_gemm_ukr_f32)(int64_t kc, const float *a, const float *b,
                                float *c, int64_t ldc, int accumulate);
typedef void (*tb_gemm_ukr_f64)(int64_t kc, const double *a,
                                const double *b, double *c, int64_t ldc,
                                int accumulate);

/* AVX2 + FMA (gemm_avx2.c): 16 YMM registers, 12 accumulators. */
#define TB_GEMM_AVX2_F32_MR 6
#define TB_GEMM_AVX2_F32_NR 16
#define TB_GEMM_AVX2_F64_MR 6
#define TB_GEMM_AVX2_F64_NR 8
void tb_gemm_ukr_f32_avx2_6x16(int64_t kc, const float *a, const float *b,
                               float *c, int64_t ldc, int accumulate);
void tb_gemm_ukr_f64_avx2_6x8(int64_t kc, const double *a, const double *b,
                              double *c, int64_t ldc, int accumulate);

/* AVX-512 F (gemm_avx512.c): 32 ZMM registers, 24 accumulators. */
#define TB_GEMM_AVX512_F32_MR 12
#define TB_GEMM_AVX512_F32_NR 32
#define TB_GEMM_AVX512_F64_MR 12
#define TB_GEMM_AVX512_F64_NR 16
void tb_gemm_ukr_f32_avx512_12x32(int64_t kc, const float *a,
                                  const float *b, float *c, int64_t ldc,
                                  int accumulate);
void tb_gemm_ukr_f64_avx512_12x16(int64_t kc, const double *a,
                                  const double *b, double *c, int64_t ldc,
                                  int accumulate);

/* Edge tiles (AVX-512): the valid m x n corner (1 <= m <= MR,
 * 1 <= n <= NR) of the tile the level's full kernel computes from the
 * same packed A panel, stored straight into c (row stride ldc; nothing
 * outside the m x n block is read or written), bit for bit the full
 * kernel's values; m or n outside those ranges: nothing.  B's k-th row
 * of the tile is at b + k * ldb: ldb = NR for a packed micro-panel, or
 * B's own row stride where a GEMM of at most MR rows reads it in place
 * (gemm_impl.inc: no packing of B); only its first n columns are read. */
typedef void (*tb_gemm_edge_f32)(int64_t m, int64_t n, int64_t kc,
                                 const float *a, const float *b,
                                 int64_t ldb, float *c, int64_t ldc,
                                 int accumulate);
typedef void (*tb_gemm_edge_f64)(int64_t m, int64_t n, int64_t kc,
                                 const double *a, const double *b,
                                 int64_t ldb, double *c, int64_t ldc,
                                 int accumulate);
/* C[i][j] = sum over k of A[i][k] B[j][k] (B held transposed, both
 * operands read in place, rows lda and ldb apart) for i < M and
 * n0 <= j < n1: tiles of 8 rows x 2 columns, each sum in 16 lanes over
 * k (lane k mod 16, one FMA a term in k order, the last vector masked)
 * then a fixed tree over the lanes.  No packing: for few rows of A
 * (linear_backward's dx = gz w^T at batch 8), where packing B^T costs
 * as much as the FMAs. */
void tb_gemm_nt_f32_avx512(int64_t M, int64_t n0, int64_t n1, int64_t K,
                           const float *A, int64_t lda, const float *B,
                           int64_t ldb, float *C, int64_t ldc);
/* f64: the same tiles, 8 lanes over k */
void tb_gemm_nt_f64_avx512(int64_t M, int64_t n0, int64_t n1, int64_t K,
                           const double *A, int64_t lda, const double *B,
                           int64_t ldb, double *C, int64_t ldc);
void tb_gemm_edge_f32_avx512_12x32(int64_t m, int64_t n, int64_t kc,
                                   const float *a, const float *b,
                                   int64_t ldb, float *c, int64_t ldc,
                                   int accumulate);
void tb_gemm_edge_f64_avx512_12x16(int64_t m, int64_t n, int64_t kc,
                                   const double *a, const double *b,
                                   int64_t ldb, double *c, int64_t ldc,
                                   int accumulate);

/* Packing of A into MR-row micro-panels (AVX-512, f32): the values and
 * layout of gemm_impl.inc's gemm_pack_a_ (ap[p*MR*kc + k*MR + r] =
 * A[(p*MR + r)*lda + k], rows past mc zero), any mr <= TB_GEMM_MAX_NR,
 * 16 x 16 blocks transposed in registers.  Also packs a transposed B's
 * NR-column panels. */
void tb_gemm_pack_a_f32_avx512(float *ap, const float *A, int64_t lda,
                               int64_t mc, int64_t kc, int mr);

/* Epilogues (tb_gemm_*_ep): on the m x n block of finished sums at c
 * (row stride ldc), any m, n >= 0:
 *   c[i*ldc + j] += bias[j]  (bias != NULL), then
 *   c[i*ldc + j] = c > 0 or NaN ? c : +0  (relu != 0),
 * each rounded to the element type, so every level gives the same bits.
 * Touches nothing outside the block (masked tails). */
typedef void (*tb_gemm_epi_f32)(float *c, int64_t ldc, int64_t m,
                                int64_t n, const float *bias, int relu);
typedef void (*tb_gemm_epi_f64)(double *c, int64_t ldc, int64_t m,
                                int64_t n, const double *bias, int relu);
void tb_gemm_epi_f32_avx2(float *c, int64_t ldc, int64_t m, int64_t n,
                          const float *bias, int relu);
void tb_gemm_epi_f64_avx2(double *c, int64_t ldc, int64_t m, int64_t n,
                          const double *bias, int relu);
void tb_gemm_epi_f32_avx512(float *c, int64_t ldc, int64_t m, int64_t n,
                            const float *bias, int relu);
void tb_gemm_epi_f64_avx512(double *c, int64_t ldc, int64_t m, int64_t n,
                            const double *bias, int relu);

/* bf16 on AVX512_BF16 (gemm_bf16_avx512bf16.c): the whole blocked
 * algorithm of one part, packing included; gemm.c's tb_gemm_bf16_ep
 * checks the arguments, splits the work and allocates the buffers.
 * Operands and output are bf16 bit patterns (uint16_t), row-major. */
#define TB_GEMM_BF16_MR 12
#define TB_GEMM_BF16_NR 32
typedef struct tb_gemm_bf16_job {
    int64_t M, N, K;
    const uint16_t *A, *B;
    int64_t lda, ldb;
    uint16_t *C;
    int64_t ldc;
    /* M x N f32 partial sums (row stride N) when K spans more than one
     * depth block, else NULL */
    float *acc;
    const uint16_t *bias; /* N values (M with row_bias) or NULL */
    int relu;
    int row_bias; /* bias[i] to row i, not bias[j] to column j */
    int64_t kc;      /* depth block, even (K split evenly) */
    int ksub;        /* depth blocks packed at once */
    int64_t mc, nc;  /* rows of a packed A block, columns of a B block */
    size_t a_stride; /* words between A sub-blocks in a part's buffer */
    size_t b_stride; /* words between B sub-blocks */
} tb_gemm_bf16_job;
/* C[m0:m1, n0:n1] (and its sums, bias, relu, rounding) with the part's
 * buffers ap (ksub x a_stride words) and bp (ksub x b_stride words). */
void tb_gemm_bf16_block_avx512bf16(const tb_gemm_bf16_job *j, uint32_t *ap,
                                   uint32_t *bp, int64_t m0, int64_t m1,
                                   int64_t n0, int64_t n1);

/* The largest MR and NR of any kernel (sizes the edge scratch tile). */
#define TB_GEMM_MAX_MR 12
#define TB_GEMM_MAX_NR 32

#endif /* TB_BACKENDS_CPU_GEMM_GEMM_KERNELS_H */
