/* Native GEMM: C = A * B, packed and cache-blocked, with register-tiled
 * AVX2 and AVX-512 micro-kernels (plus a portable C one).
 *
 * Structure (after BLIS): a portable framework (gemm.c) packs A and B
 * into contiguous micro-panels and runs three blocking loops around a
 * micro-kernel (gemm_avx2.c, gemm_avx512.c) that keeps an MR x NR tile of
 * C in registers.  Every shape is handled: partial tiles at the M and N
 * edges go through a small buffer (AVX-512: straight into C by edge
 * kernels of only the rows they have, with masked columns), and K is
 * blocked by KC.
 *
 * Matrices are row-major with leading dimensions in elements:
 *   A[i][k] = A[i*lda + k],  B[k][j] = B[k*ldb + j],  C[i][j] = C[i*ldc + j].
 * C is overwritten (never read): C = A * B, not C += A * B.  With K == 0,
 * C is set to zero.  C must not overlap A or B.
 *
 * Threading: the rows of C (or its columns, when that balances the parts
 * better) are split into min(nthreads, 64) slices of whole micro-tiles;
 * each slice runs the whole blocked algorithm with its own buffers for
 * packed A.  When the slices split the rows and the whole packed B fits
 * in 16 MiB (e.g. B 1024 x 1024 f32, not 4096 x 4096), B is packed once
 * for all parts: they claim chunks of it through atomic flags, pack the
 * chunks no one has claimed and wait only for chunks another running
 * part is packing, so parts that a parallel-for runs one after another
 * never wait.  Otherwise each part packs the B (or A) it needs
 * itself.  Below TB_GEMM_PAR_MIN_MACS multiply-adds the call stays on
 * one thread.  tb_gemm_f32/f64 start nthreads-1 POSIX threads per call
 * and join them; tb_gemm_*_ex take a parallel-for from the caller (e.g.
 * a persistent pool) instead.
 *
 * Memory: one 64-byte aligned buffer per call that does work (M, N, K
 * all > 0), from tb_gemm_scratch_get: the calling thread's cached block
 * (tracked by tb_alloc when it is allocated or grown, kept between
 * calls), or a block of its own freed before return (see below).  It
 * holds, per part, KSUB * (min(rows,
 * MC) * kc + kc * min(cols, NC)) elements (rows x cols: the part's slice
 * of C, rounded up to the micro-tile; kc <= KC the depth block; KSUB,
 * MC, KC, NC per kernel in gemm.c): at most about 7 MiB per part with
 * the shipped block sizes, less for small matrices; with a shared B,
 * the per-part B blocks are replaced by one packed copy of all of B
 * (K x N rounded up to the micro-tile, at most 16 MiB) and a flag per
 * chunk.  Reusing the cached block, a call allocates nothing and takes
 * no page faults.
 *
 * Numerics: each C element is a sum of K products accumulated in k order
 * in the input precision (with FMA at the AVX2/AVX-512 levels, multiply
 * then add at the portable one), in depth blocks of at most KC; the error
 * is bounded by about K * u * (|A| |B|)[i][j] (u the unit roundoff).
 * Results are bitwise independent of the thread count and of the
 * parallel-for (the order of operations per element is fixed). */
#ifndef TB_BACKENDS_CPU_GEMM_GEMM_H
#define TB_BACKENDS_CPU_GEMM_GEMM_H

#include <stddef.h>
#include <stdint.h>

/* Calls below this many multiply-adds (M*N*K) run on one thread: thread
 * start-up (tens of microseconds) would cost more than it saves. */
#define TB_GEMM_PAR_MIN_MACS (INT64_C(1) << 21)

/* Set the multiply-add count below which calls stay on one thread
 * (default TB_GEMM_PAR_MIN_MACS); returns the previous value.  For tests
 * that must exercise the split on small shapes; not to be called while
 * GEMMs run on other threads. */
int64_t tb_gemm_set_par_min_macs(int64_t macs);

/* One part of a parallel job; see tb_gemm_parallel. */
typedef void (*tb_gemm_task_fn)(void *arg, int part, int nparts);

/* A caller-supplied parallel-for.  run(ctx, n, fn, arg) must call
 * fn(arg, part, used) once for every part in [0, used), for some
 * 1 <= used <= n of its choice (the same `used` in every call), possibly
 * concurrently, and return only after every call has returned.  A pool
 * with fewer threads than n may thus pick used < n; the GEMM then gives
 * each part several slices.  The signature matches a pool's run().  run
 * is called at most once per GEMM call, with n >= 2, and not at all when
 * the call runs as one part. */
typedef struct tb_gemm_parallel {
    void (*run)(void *ctx, int n, tb_gemm_task_fn fn, void *arg);
    void *ctx;
} tb_gemm_parallel;

/* C[M,N] = A[M,K] * B[K,N], row-major with leading dims; overwrites C.
 *
 * isa: a tb_cpu_isa level (src/backends/cpu/isa.h): 0 portable C,
 *   1 AVX2+FMA, 2 AVX-512.  The level must be supported by this CPU and
 *   built into this binary (x86-64 only for 1 and 2).
 * nthreads >= 1: the most threads to use (see the threading note above).
 *
 * Returns 0; TB_EINVAL for negative sizes, lda < K, ldb < N, ldc < N,
 * NULL pointers to non-empty matrices, nthreads < 1, sizes whose extent
 * overflows, or C overlapping A or B; TB_EUNSUPPORTED for an isa that is
 * unknown, not built in or not supported by this CPU; TB_ENOMEM when the
 * packing buffer cannot be allocated.  On error C is left untouched. */
int tb_gemm_f32(int isa, int64_t M, int64_t N, int64_t K, const float *A,
                int64_t lda, const float *B, int64_t ldb, float *C,
                int64_t ldc, int nthreads);

/* As tb_gemm_f32, in double precision. */
int tb_gemm_f64(int isa, int64_t M, int64_t N, int64_t K, const double *A,
                int64_t lda, const double *B, int64_t ldb, double *C,
                int64_t ldc, int nthreads);

/* As tb_gemm_f32/f64, but the parts run through par->run instead of
 * threads started by the call; par == NULL means the same as the plain
 * functions.  The caller's thread must be free to block in par->run. */
int tb_gemm_f32_ex(int isa, int64_t M, int64_t N, int64_t K,
                   const float *A, int64_t lda, const float *B, int64_t ldb,
                   float *C, int64_t ldc, int nthreads,
                   const tb_gemm_parallel *par);
int tb_gemm_f64_ex(int isa, int64_t M, int64_t N, int64_t K,
                   const double *A, int64_t lda, const double *B,
                   int64_t ldb, double *C, int64_t ldc, int nthreads,
                   const tb_gemm_parallel *par);

/* Fused epilogue: as tb_gemm_f32_ex / tb_gemm_f64_ex, then, for each
 * element once its whole sum is done (per micro-tile, while the tile is
 * still in L1, so the output is written to memory once):
 *
 *   C[i][j] = C[i][j] + bias[j]                     when bias != NULL
 *   C[i][j] = C[i][j] > 0 or NaN ? C[i][j] : +0     when relu != 0
 *
 * in that order, each rounded to the element type: bit for bit the plain
 * GEMM followed by a broadcast add of bias and a relu (the linear op,
 * relu(x @ W + b), in one call).  bias holds N values (unit stride) and
 * must not overlap C (TB_EINVAL).  With K == 0 the sums are 0.  bias ==
 * NULL and relu == 0 is the plain GEMM.  Other arguments, errors and
 * thread invariance as tb_gemm_f32_ex. */
int tb_gemm_f32_ep(int isa, int64_t M, int64_t N, int64_t K,
                   const float *A, int64_t lda, const float *B, int64_t ldb,
                   float *C, int64_t ldc, int nthreads,
                   const tb_gemm_parallel *par, const float *bias, int relu);
int tb_gemm_f64_ep(int isa, int64_t M, int64_t N, int64_t K,
                   const double *A, int64_t lda, const double *B,
                   int64_t ldb, double *C, int64_t ldc, int nthreads,
                   const tb_gemm_parallel *par, const double *bias,
                   int relu);

/* bf16: C[M,N] = relu?(A[M,K] * B[K,N] + bias), operands, bias and C
 * bf16 bit patterns (ops/half.h), row-major with leading dims.  ep: 0 or
 * the bits TB_GEMM_EP_RELU (relu) and TB_GEMM_EP_ROW_BIAS (bias has M
 * values, bias[i] added to row i, as a convolution's output channels;
 * without it N values, bias[j] to column j, as linear's); other bits:
 * TB_EINVAL.  isa
 * must be TB_ISA_AVX512BF16 (vdpbf16ps; gemm_bf16_avx512bf16.c), else
 * TB_EUNSUPPORTED.  Each sum is accumulated in f32, a pair of k at a
 * time (vdpbf16ps: inputs that are bf16 denormals read as zero, and each
 * pair's f32 result is rounded to nearest even with a denormal result
 * flushed to zero, whatever MXCSR says), in depth blocks added in k
 * order; then bias (when not NULL) and relu (when relu != 0) are
 * applied in f32 and the result is rounded once to bf16 (to nearest
 * even, ops/half.h's tb_f32_to_bf16).  Memory: one buffer per call
 * from tb_gemm_scratch_get, holding M x N f32 partial sums when K
 * exceeds one depth block (384 k), and per part its packed A and B
 * blocks.  Errors, thread
 * split and thread invariance as tb_gemm_f32_ep (bias must not overlap
 * C). */
int tb_gemm_bf16_ep(int isa, int64_t M, int64_t N, int64_t K,
                    const uint16_t *A, int64_t lda, const uint16_t *B,
                    int64_t ldb, uint16_t *C, int64_t ldc, int nthreads,
                    const tb_gemm_parallel *par, const uint16_t *bias,
                    int ep);
/* dst [C, R] = src [R, C]^T, 16-bit values (a bf16 operand made
 * plain for tb_gemm_bf16_ep, which packs row-major operands only); src
 * and dst must not overlap.  AVX512_BF16 level only (built and run
 * where tb_gemm_bf16_ep is): 16 x 16 blocks in registers. */
void tb_gemm_tr16_avx512bf16(const uint16_t *src, uint16_t *dst, int64_t R,
                             int64_t C);
#define TB_GEMM_EP_RELU 1
#define TB_GEMM_EP_ROW_BIAS 2

/* Scratch memory of the GEMMs (gemm_scratch.c), the packing buffers of
 * tb_gemm_* and qgemm.c's, kept per thread between calls so that a call
 * neither allocates nor faults in fresh pages.
 *
 * tb_gemm_scratch_get: bytes of 64-byte aligned memory, or NULL when
 * they cannot be allocated.  The calling thread's cached block when it
 * is free: as it is when it holds at least bytes (contents undefined),
 * else freed and allocated again at the new size (tb_alloc, so counted;
 * the block only grows).  When the block is lent already (a call nested
 * on the same thread) or bytes exceed 256 MiB, a block of its own from
 * tb_alloc.  *own says which; give it back with tb_gemm_scratch_put(p,
 * *own) on the same thread, nested gets first (last lent, first given
 * back): it frees a block of its own and returns the cached one to the
 * thread.  Other threads may use the memory in between (a GEMM's
 * parts), not after.
 *
 * tb_gemm_scratch_release frees the calling thread's cached block
 * unless it is lent (the cpu backend's teardown calls it; every other
 * thread's block is freed when the thread exits).
 * tb_gemm_scratch_cached: the bytes the calling thread's cached block
 * holds (0 when none); tb_gemm_scratch_check: 1 when the 64 bytes kept
 * after them (a pattern) are intact or there is no block, 0 when a call
 * wrote past the bytes it asked for.  For tests. */
void *tb_gemm_scratch_get(size_t bytes, int *own);
/* The same cache for other kinds of per-call scratch, one block per kind
 * and thread (a kind's block can be lent while another kind's is:
 * half.c's 16-bit rows hold their f32 copies while the f32 row they
 * run takes the GEMM's).  tb_gemm_scratch_* are kind TB_SCRATCH_GEMM's;
 * tb_gemm_scratch_release frees every kind's block. */
enum { TB_SCRATCH_GEMM = 0, TB_SCRATCH_HALF = 1, TB_SCRATCH_KINDS = 2 };
void *tb_scratch_get(int kind, size_t bytes, int *own);
void tb_scratch_put(int kind, void *p, int own);
void tb_gemm_scratch_put(void *p, int own);
void tb_gemm_scratch_release(void);
size_t tb_gemm_scratch_cached(void);
int tb_gemm_scratch_check(void);

/* C[M,N] = A[M,K] B^T with B held as N x K (rows ldb apart), both read
 * in place, no packing: for few rows of A, where packing B^T costs as
 * much as the multiply-adds (linear_backward's dx = gz w^T at batch 8).
 * Each sum runs in the vector's lanes over k (k mod 16 for f32, mod 8
 * for f64, in k order), then a fixed tree over the lanes: not
 * tb_gemm_tr's bits, the same bits at any thread count (the columns are
 * split).  f32 and f64 at AVX-512 only, 1 <= M <= TB_GEMM_NT_MMAX,
 * K >= TB_GEMM_NT_KMIN; TB_EUNSUPPORTED otherwise (the caller takes
 * tb_gemm_tr). */
#define TB_GEMM_NT_MMAX 16
#define TB_GEMM_NT_KMIN 64
int tb_gemm_nt_small(int isa, int f64, int64_t M, int64_t N, int64_t K,
                     const void *A, int64_t lda, const void *B, int64_t ldb,
                     void *C, int64_t ldc, int nthreads,
                     const tb_gemm_parallel *par);

/* Operands held transposed (tb_gemm_tr's trans, bits). */
#define TB_GEMM_TRANS_A 1 /* A as K x M: A[i][k] = A[k*lda + i] */
#define TB_GEMM_TRANS_B 2 /* B as N x K: B[k][j] = B[j*ldb + k] */

/* As tb_gemm_f32_ex (f64 == 0; A, B, C float) or tb_gemm_f64_ex (f64 !=
 * 0; double), with A and/or B held transposed (trans: TB_GEMM_TRANS_*;
 * lda >= M for a transposed A, ldb >= K for a transposed B): the
 * packing reads them in place, so no copy is made (a layout's
 * `transposed` matmul).  The packed panels, and so the results, are bit
 * for bit those of the plain call on transposed copies. */
int tb_gemm_tr(int isa, int f64, int trans, int64_t M, int64_t N,
               int64_t K, const void *A, int64_t lda, const void *B,
               int64_t ldb, void *C, int64_t ldc, int nthreads,
               const tb_gemm_parallel *par);

/* Name of the micro-kernel tb_gemm_f32 (dtype_is_f64 == 0) or tb_gemm_f64
 * (otherwise) runs at this isa level, e.g. "gemm_f32_avx512_12x32"
 * (MR rows x NR columns of C per micro-tile).  A static string; NULL for
 * an isa level that is unknown or not built in (CPU support is not
 * checked here). */
const char *tb_gemm_impl_name(int isa, int dtype_is_f64);

#endif /* TB_BACKENDS_CPU_GEMM_GEMM_H */
