/* The plane transposers of transpose and permute, any element size (2,
 * 4 or 8 bytes: bf16/f16, f32, f64; bit copies), one set per level:
 * the portable C loops (permute_c.c) and the SIMD ones of
 * transpose_simd.h (transpose_avx2.c, transpose_avx512.c). */
#ifndef TB_BACKENDS_CPU_TRANSPOSE_H
#define TB_BACKENDS_CPU_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

#include "../backend.h"

/* out[k * obs + j * old + i] = in[k * ibs + i * ild + j] for i < ni,
 * j < nj, k < nb: nb planes (leading dims and plane strides in
 * elements; ibs, obs unused when nb is 1); nt: full output lines may be
 * written with non-temporal stores (the caller fences before the output
 * is read). */
typedef void (*tb_cpu_tp_fn)(const void *in, int64_t ild, void *out,
                             int64_t old, int64_t ni, int64_t nj, int64_t nb,
                             int64_t ibs, int64_t obs, int nt);

/* Level lv's transposer of esz-byte elements (lv's own code), or NULL
 * (a level this binary lacks, an element size of none). */
tb_cpu_tp_fn tb_cpu_tp_get(int lv, size_t esz);
tb_cpu_tp_fn tb_cpu_tp_c(size_t esz);
tb_cpu_tp_fn tb_cpu_tp_avx2(size_t esz);
tb_cpu_tp_fn tb_cpu_tp_avx512(size_t esz);

/* transpose and permute of bf16/f16 at level lv (half.c's rows route
 * here: the 16-bit values move as bits, no widening). */
int tb_cpu_transpose_lv(void *ctx, const tb_tensor *in, tb_tensor *out,
                        const tb_params *p, tb_dtype dt, int lv);
int tb_cpu_permute_lv(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, int lv);

#endif
