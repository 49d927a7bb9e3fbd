/* bf16/f16 loops at the avx512 level (half_cvt.h; AVX-512 F, BW, DQ, VL:
 * no AVX512_BF16): half_simd.h at 16 f32 lanes. */
#include <immintrin.h>

#include "half_simd.h"
#include "half_bwbin_simd.h"

tb_cpu_half_fused_fn tb_cpu_half_fused_avx512(tb_op_id op, tb_dtype dt)
{
    return hs_fused(op, dt);
}

tb_cpu_half_cvt tb_cpu_half_cvt_avx512(tb_dtype dt) { return hs_cvt(dt); }

tb_cpu_half_red tb_cpu_half_red_avx512(tb_dtype dt) { return hs_red(dt); }

tb_cpu_half_arange_fn tb_cpu_half_arange_avx512(tb_dtype dt)
{
    return hs_arange(dt);
}

tb_cpu_half_colsum_fn tb_cpu_half_colsum_avx512(tb_dtype dt)
{
    return hs_colsum(dt);
}

tb_cpu_half_bincols_fn tb_cpu_half_bincols_avx512(tb_dtype dt)
{
    return hbb_get(dt);
}
