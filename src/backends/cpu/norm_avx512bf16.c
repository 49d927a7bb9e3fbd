/* layer_norm and rms_norm in bf16 at the avx512bf16 level (half_part.c's
 * fused rows): norm16_simd.h's avx512 loops, the bf16 results narrowed
 * by vcvtne2ps2bf16 (a pair with a subnormal lane by the integer code:
 * the bits of the avx512 row; tests/test_half_paths.c).  The integer
 * narrowing took 14 vector instructions per 32 results, most of the
 * bf16 row's time over the f16 row's.  layer_norm_backward and
 * rms_norm_backward in bf16 likewise: norm16_simd.h's NB_ROWS, dx
 * narrowed by vcvtneps2bf16 (half_part.c's hp_norm_bw). */
#include "norm16_simd.h"

NZ_ROWS(bf16)

void tb_cpu_half_norm_rows_avx512bf16(const uint16_t *x, uint16_t *y,
                                      int64_t rows, int64_t D,
                                      const float *w, const float *b,
                                      float eps)
{
    nz_rows_bf16(x, y, rows, D, w, b, eps);
}

NB_ROWS(bf16, 2)

tb_cpu_task_fn tb_cpu_norm_bw_chunks_bf16_avx512bf16(void)
{
    return nb_bw_bf16;
}
