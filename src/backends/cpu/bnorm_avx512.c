/* batch_norm, group_norm and their gradients, the SIMD rows of f32 and
 * f64 at the AVX-512 level (built with only that level's flags; see
 * meson.build): bnorm_simd_impl.h's two instances, on bnorm_c.c's driver
 * (bnorm.h); and its f32 instance's loops on bf16 and f16 (norm16_simd.h's
 * loads that widen and stores that narrow) for half_part.c's 16-bit
 * group_norm, batch_norm_backward and group_norm_backward. */
#include "norm16_simd.h"
#define BN_WITH_16
#include "bnorm_simd_impl.h"

BN_ENTRIES(f32, avx512, b32_parts)
BN_ENTRIES(f64, avx512, b64_parts)

const tb_cpu_bnorm_parts *tb_cpu_bnorm_parts16_avx512(tb_dtype dt)
{
    return dt == TB_BF16 ? &b16b_parts : &b16h_parts;
}
