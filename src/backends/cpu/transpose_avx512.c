/* The avx512 level's plane transposers (transpose_simd.h at zmm: 32 x 8, 16 x 4 and 8 x 2 tiles, output rows of whole 64-byte lines) and its permute rows (kreg.h's layout family; the
 * transpose rows are drv_layout.c's). */
#include "../../base/error.h"
#include "cpu_internal.h"
#include "kreg.h"
#define TP_W 4
#include "transpose_simd.h"

tb_cpu_tp_fn tb_cpu_tp_avx512(size_t esz) { return tp_get(esz); }

int TB_CPU_KFN(permute, f32, avx512)(void *ctx, const tb_tensor *in,
                                     tb_tensor *out, const tb_params *p)
{
    return tb_cpu_permute_lv(ctx, in, out, p, TB_F32, TB_ISA_AVX512);
}

int TB_CPU_KFN(permute, f64, avx512)(void *ctx, const tb_tensor *in,
                                     tb_tensor *out, const tb_params *p)
{
    return tb_cpu_permute_lv(ctx, in, out, p, TB_F64, TB_ISA_AVX512);
}
