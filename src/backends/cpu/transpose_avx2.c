/* The avx2 level's plane transposers (transpose_simd.h at ymm: 16 x 8, 8 x 4 and 4 x 2 tiles) and its permute rows (kreg.h's layout family; the
 * transpose rows are drv_layout.c's). */
#include "../../base/error.h"
#include "cpu_internal.h"
#include "kreg.h"
#define TP_W 2
#include "transpose_simd.h"

tb_cpu_tp_fn tb_cpu_tp_avx2(size_t esz) { return tp_get(esz); }

int TB_CPU_KFN(permute, f32, avx2)(void *ctx, const tb_tensor *in,
                                     tb_tensor *out, const tb_params *p)
{
    return tb_cpu_permute_lv(ctx, in, out, p, TB_F32, TB_ISA_AVX2);
}

int TB_CPU_KFN(permute, f64, avx2)(void *ctx, const tb_tensor *in,
                                     tb_tensor *out, const tb_params *p)
{
    return tb_cpu_permute_lv(ctx, in, out, p, TB_F64, TB_ISA_AVX2);
}
