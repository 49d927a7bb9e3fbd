/* permute's loops, shared by its portable C row (permute_c.c) and its
 * SIMD rows (bwd_simd_impl.h, register-transposed tiles). */
#ifndef TB_BACKENDS_CPU_PERMUTE_C_H
#define TB_BACKENDS_CPU_PERMUTE_C_H

#include <stdint.h>

#include "../backend.h"

/* permute's plane transposer: o[i * ostq + j] = x[i + j * is] for i < ni,
 * j < nj (bit copies). */
typedef void (*tb_cpu_perm_tile_fn)(const float *x, float *o, int64_t ni,
                                    int64_t nj, int64_t is, int64_t ostq);
/* permute f32 (the portable row's checks and loops) with tile for the
 * planes of a permute that moves the input's contiguous dim: the entry
 * of the SIMD rows (bwd_simd_impl.h). */
int tb_cpu_permute_f32(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_cpu_perm_tile_fn tile);

/* The same in f64 (the SIMD rows' tiles of P64_W x P64_W doubles). */
typedef void (*tb_cpu_perm_tile64_fn)(const double *x, double *o, int64_t ni,
                                      int64_t nj, int64_t is, int64_t ostq);
int tb_cpu_permute_f64(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_cpu_perm_tile64_fn tile);

#endif
