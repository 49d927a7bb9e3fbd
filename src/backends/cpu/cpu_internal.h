/* What kernel files outside the drivers (drv.h) may use of a cpu backend
 * instance.
 *
 * Kernels in create.c, optim.c, linalg.c, math_c.c, reduce_c.c,
 * permute_c.c, backward.c (and
 * their per-ISA files) are called with the instance as ctx, like the
 * drivers' own.  They ask it for the ISA level it was created for, count
 * their launches (tb_cpu_count_launch, the one counter), check their
 * operands (tb_cpu_begin_op) and split work over its thread pool.  Which
 * entry point runs, and its name, come from the registry (kreg.h). */
#ifndef TB_BACKENDS_CPU_CPU_INTERNAL_H
#define TB_BACKENDS_CPU_CPU_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "../../ops/op.h"
#include "../backend.h"
#include "pool.h"

/* The instance's ISA level (TB_ISA_SCALAR/AVX2/AVX512, isa.h); with a
 * NULL ctx, TB_ISA_SCALAR. */
int tb_cpu_isa(const void *ctx);
/* Add one to the instance's kernel-launch counter (NULL: nothing). */
void tb_cpu_count_launch(void *ctx);

/* The checks of an entry point that serves op id under its shape rule:
 * every input of dtype dt, contiguous, dims >= 1; the output shapes the
 * rule gives for these inputs and parameters (so no kernel indexes past
 * a buffer); every output contiguous, of dtype dt.  0, or TB_EINVAL,
 * TB_ESHAPE, TB_EPARAM. */
int tb_cpu_check_op(tb_op_id id, tb_dtype dt, const tb_tensor *in,
                    const tb_tensor *out, const tb_params *p);
/* The prologue of the portable rows and of their SIMD rows outside the
 * drivers (math_c.c, reduce_c.c, permute_c.c, ops_simd.c, backward.c): count the launch, then
 * tb_cpu_check_op.  A NULL ctx counts nothing. */
int tb_cpu_begin_op(void *ctx, tb_op_id id, tb_dtype dt,
                    const tb_tensor *in, tb_tensor *out, const tb_params *p);

/* rows[r] = value r of t (f32 or f64, contiguous; an embedding's
 * indices, cross_entropy's targets) as an integer in [0, bound): 0, or
 * TB_EINVAL at the first value that is not one (embed_c.c). */
int tb_cpu_indices(const tb_tensor *t, int64_t bound, int64_t *rows);

/* Parameter idx of op id: p's value if set, else the schema default.
 * Only for non-optional parameters (the shape rule validated the
 * value). */
double tb_cpu_param(const tb_params *p, tb_op_id id, int idx);

/* out [M, N] (row stride ldc) = op(a) [M, K] @ op(b) [K, N] by the
 * instance's native GEMM (its avx2 / avx512 levels, over its threads)
 * with its transpose flags (gemm.h): op(a)[i][k] = a[k*lda + i] when ta
 * (lda >= M), a[i*lda + k] otherwise; op(b)[k][j] = b[j*ldb + k] when tb
 * (ldb >= K), b[k*ldb + j] otherwise.  A transposed operand is read in
 * place, never copied, and the results
 * are bit for bit the instance's matmul row on transposed copies.
 * TB_EUNSUPPORTED at the scalar level or for another dtype than f32 and
 * f64 (the caller keeps its own path); else the GEMM's code. */
int tb_cpu_gemm_tr(void *ctx, tb_dtype dt, bool ta, bool tb, int64_t M,
                   int64_t N, int64_t K, const void *a, int64_t lda,
                   const void *b, int64_t ldb, void *out, int64_t ldc);
/* out[M,N] = a[M,K] b^T (b held as N x K) by the GEMM's unpacked path
 * for few rows (gemm.h's tb_gemm_nt_small: its own sum order, not the
 * matmul row's bits), at the instance's level and threads;
 * TB_EUNSUPPORTED where that path does not apply (the caller takes
 * tb_cpu_gemm_tr). */
int tb_cpu_gemm_nt(void *ctx, tb_dtype dt, int64_t M, int64_t N, int64_t K,
                   const void *a, int64_t lda, const void *b, int64_t ldb,
                   void *out, int64_t ldc);

/* The instance's single-threaded twin (drv.h), for kernels called from
 * inside one of its parallel parts; NULL for NULL. */
void *tb_cpu_serial(void *ctx);

/* Run fn(arg, part, nparts) for every part of a job of `work` elements
 * in `items` independent pieces: on the calling thread alone below the
 * backend's work threshold or with threads=1, else split over the pool.
 * Returns when every part is done. */
void tb_cpu_parallel(void *ctx, int64_t work, int64_t items,
                     tb_cpu_task_fn fn, void *arg);
/* [*b, *e): part's share of n items, boundaries on multiples of align
 * (the last part takes the tail). */
void tb_cpu_span(int64_t n, int64_t align, int part, int nparts,
                 int64_t *b, int64_t *e);

/* o[i] = f(a[i * sa], b[i * sb]) for i < n, sa and sb 0 or 1. */
typedef void (*tb_cpu_binary_row_fn)(const void *a, int64_t sa,
                                     const void *b, int64_t sb, void *o,
                                     int64_t n);
/* The broadcasting binary walk of math_c.c's and ops_simd.c's rows:
 * in[0] and in[1] contiguous, of esz-byte elements, broadcast to out
 * (the caller checked it); one fn call per row of out's last dim, an
 * odometer walks the rest.  Single-threaded. */
void tb_cpu_bcast_rows(const tb_tensor *in, tb_tensor *out, size_t esz,
                       tb_cpu_binary_row_fn fn);

/* Impl texts that name what a row's call did (impl_text.c): the text
 * of (row, key), set to `text` and created if new (a static string that
 * stays valid; the einsum rows' key is the equation's handle); and its
 * rewrite after a call (nothing when it was never handed out). */
#define TB_CPU_IMPL_TEXT 200
const char *tb_cpu_impl_text(const char *row, double key, const char *text);
void tb_cpu_impl_text_update(const char *row, double key, const char *text);

#endif
