/* einsum's matrix-vector and narrow products at the SIMD levels
 * (einsum_simd.h, built into einsum_avx2.c and einsum_avx512.c with
 * only their level's flags): the GEMM steps of a plan with N = 1 or
 * M = 1, or N within two vectors and small, which the native GEMM runs
 * in its padded register tile (a 64 x 1 x 64 product as a 64 x 32 one)
 * after packing both operands: einsum4 bi,ij,jk,k->b at 16, 64, 64, 64
 * f32 took 5.2 us so, 0.59 us with these.  einsum_c.c's driver calls
 * them for its rows at those levels. */
#ifndef TB_BACKENDS_CPU_EINSUM_GEMV_H
#define TB_BACKENDS_CPU_EINSUM_GEMV_H

#include <stdint.h>

#include "backends/cpu/cpu_config.h"

/* c[i] = sum over k < K of a[i K + k] x[k], for i < m (rows of a
 * row-major [m, K] matrix against a vector): dot products in the level's
 * vector lanes, four rows at a time, the sums' order not k's. */
typedef void (*tb_cpu_ein_mv_fn)(const void *a, const void *x, void *c,
                                 int64_t m, int64_t K);
/* c[j] = sum over k < K of a[k] b[k N + j], for j0 <= j < j1 (a vector
 * against a row-major [K, N] matrix): along N in the level's vectors,
 * each element's sum in k order with fused multiply-adds. */
typedef void (*tb_cpu_ein_vm_fn)(const void *a, const void *b, void *c,
                                 int64_t j0, int64_t j1, int64_t K,
                                 int64_t N);

/* c [m, N] = a [m, K] b [K, N] row-major, N <= mm_nmax (two of the
 * level's vectors): no packing, four rows of c a step in registers. */
typedef void (*tb_cpu_ein_mm_fn)(const void *a, const void *b, void *c,
                                 int64_t m, int64_t K, int64_t N);

typedef struct tb_cpu_ein_gemv {
    tb_cpu_ein_mv_fn mv;
    tb_cpu_ein_vm_fn vm;
    tb_cpu_ein_mm_fn mm;
    int64_t mm_nmax;
} tb_cpu_ein_gemv;

/* [0] f32, [1] f64 */
#if TB_CPU_HAVE_AVX2
extern const tb_cpu_ein_gemv tb_cpu_ein_gemv_avx2[2];
#endif
#if TB_CPU_HAVE_AVX512
extern const tb_cpu_ein_gemv tb_cpu_ein_gemv_avx512[2];
#endif

#endif
