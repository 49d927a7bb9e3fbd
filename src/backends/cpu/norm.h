/* The normalization gradients' driver (norm_c.c), shared by the rows of
 * every level: the rows are split into nch chunks, a number fixed by the
 * shape alone (NORM_BW_CHUNKS, or one per NORM_BW_CHUNK_ROWS rows where
 * that is fewer: the chunks' sums cost D each, and a chunk of 1 row
 * spends more on them than on its row); chunk c covers rows [c * rows / nch,
 * (c + 1) * rows / nch) and writes its dw (and db) partial sums to part
 * + c * np * D; the driver adds the chunks in order, so dw and db are
 * the same bits at any thread count.  bf16/f16 (half_part.c's fused
 * path): g, x, w and dx of the dtype, the partial sums in f32, dw and db
 * narrowed once from their f32 sums. */
#ifndef TB_BACKENDS_CPU_NORM_H
#define TB_BACKENDS_CPU_NORM_H

#include "cpu_internal.h"

#define NORM_BW_CHUNKS 64
#define NORM_BW_CHUNK_ROWS 8

typedef struct {
    const tb_tensor *in; /* g, x, w */
    tb_tensor *out;      /* dx, dw[, db] */
    int64_t rows, D, nch;
    int np; /* partial sums per chunk: 2 (dw, db) or 1 (dw) */
    double eps;
    void *part; /* nch * np * D of the dtype (f32 for bf16/f16) */
    const float *w32; /* f32, bf16, f16: w in f32 (widened once) */
} tb_cpu_norm_bw_job;

/* dw (i 0) or db (i 1) of j's partial sums (f64's for f64, f32's for
 * the others) into o[0..D) of that type: per column 0 + chunk 0's +
 * chunk 1's ... in chunk order, the bits of the driver's own loop. */
typedef void (*tb_cpu_norm_bw_sum_fn)(const tb_cpu_norm_bw_job *j, int i,
                                      void *o);

/* Runs layer_norm_backward or rms_norm_backward in dt with chunks (a
 * tb_cpu_task_fn over the chunks: part and nparts of
 * tb_cpu_norm_bw_job's nch) and sum (NULL: the driver's portable
 * loop). */
int tb_cpu_norm_bw_run(void *ctx, tb_op_id id, tb_dtype dt,
                       const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_cpu_task_fn chunks,
                       tb_cpu_norm_bw_sum_fn sum);

/* The f32 sum at the avx512 level (norm_avx512.c): 64 columns at a
 * time in registers over the chunks. */
void tb_cpu_norm_bw_sum_avx512(const tb_cpu_norm_bw_job *j, int i,
                               void *o);

/* The chunks of norm_avx512.c's rows for dt (f32, bf16, f16): g, x, w
 * of dt widened in registers, dx narrowed as stored. */
tb_cpu_task_fn tb_cpu_norm_bw_chunks_avx512(tb_dtype dt);
/* bf16's at the avx512bf16 level (norm_avx512bf16.c): the same loops and
 * bits, dx narrowed by vcvtneps2bf16 */
tb_cpu_task_fn tb_cpu_norm_bw_chunks_bf16_avx512bf16(void);

/* layer_norm (b set) or rms_norm of rows x D bf16 values at the
 * avx512bf16 level: half_bwd.h's tb_cpu_half_norm_rows_avx512 for bf16,
 * narrowed by AVX512_BF16 (norm_avx512bf16.c), the same bits. */
void tb_cpu_half_norm_rows_avx512bf16(const uint16_t *x, uint16_t *y,
                                      int64_t rows, int64_t D,
                                      const float *w, const float *b,
                                      float eps);

/* A 16-bit row's statistics (half_norm_simd.h's loops and norm_avx512.c's,
 * which repeat the f32 rows' arithmetic): layer_norm (b set) shifts the
 * sums by the mean of the row's first 8 values, sh, and takes the mean m
 * of the deviations from it and their squares' sum ss, summed again
 * about sh + m where m s1 > 3/4 s2 (cancellation); rms_norm the squares
 * alone.  SUMS(xr, D, shift, pf, s1 or NULL, &s2), WIDEN one value. */
#define TB_HALF_NORM_STATS(SUMS, WIDEN, xr, D, b, pf, sh, m, ss)          \
    do {                                                                  \
        (sh) = 0;                                                         \
        (m) = 0;                                                          \
        if (!(b)) {                                                       \
            SUMS(xr, D, 0, pf, NULL, &(ss));                              \
        } else {                                                          \
            float s1_, s2_;                                               \
            TB_HALF_NORM_SHIFT(WIDEN, xr, D, sh);                         \
            SUMS(xr, D, sh, pf, &s1_, &s2_);                              \
            TB_HALF_NORM_FINISH(SUMS, xr, D, s1_, s2_, sh, m, ss);        \
        }                                                                 \
    } while (0)
/* layer_norm's shift sh: the mean of the row's first 8 values */
#define TB_HALF_NORM_SHIFT(WIDEN, xr, D, sh)                              \
    do {                                                                  \
        float c0_ = 0;                                                    \
        const int64_t n0_ = (D) < 8 ? (D) : 8;                            \
        for (int64_t k_ = 0; k_ < n0_; k_++)                              \
            c0_ += WIDEN((xr)[k_]);                                       \
        (sh) = c0_ / (float)n0_;                                          \
    } while (0)
/* layer_norm's m and ss from the sums s1, s2 about sh */
#define TB_HALF_NORM_FINISH(SUMS, xr, D, s1, s2, sh, m, ss)               \
    do {                                                                  \
        (m) = (s1) / (float)(D);                                          \
        (ss) = (s2) - (m) * (s1);                                         \
        if ((m) * (s1) > 0.75f * (s2))                                    \
            SUMS(xr, D, (sh) + (m), NULL, NULL, &(ss));                   \
    } while (0)

#endif
