/* bf16/f16 loops at the avx512bf16 level (half_cvt.h): half_simd.h at 16
 * f32 lanes with AVX512_BF16's vcvtne2ps2bf16 / vcvtneps2bf16 for the
 * bf16 narrowing (a vector pair with a subnormal f32 lane takes the
 * integer code: the same bits); everything else as at avx512. */
#include <immintrin.h>

#include "half_simd.h"
#include "half_bwbin_simd.h"

tb_cpu_half_fused_fn tb_cpu_half_fused_avx512bf16(tb_op_id op, tb_dtype dt)
{
    return hs_fused(op, dt);
}

tb_cpu_half_cvt tb_cpu_half_cvt_avx512bf16(tb_dtype dt) { return hs_cvt(dt); }

tb_cpu_half_red tb_cpu_half_red_avx512bf16(tb_dtype dt) { return hs_red(dt); }

tb_cpu_half_arange_fn tb_cpu_half_arange_avx512bf16(tb_dtype dt)
{
    return hs_arange(dt);
}

tb_cpu_half_colsum_fn tb_cpu_half_colsum_avx512bf16(tb_dtype dt)
{
    return hs_colsum(dt);
}

tb_cpu_half_bincols_fn tb_cpu_half_bincols_avx512bf16(tb_dtype dt)
{
    return hbb_get(dt);
}
