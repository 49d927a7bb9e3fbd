/* group_norm, batch_norm_backward and group_norm_backward in bf16 at the
 * avx512bf16 level (half_part.c): bnorm_simd_impl.h's bf16 instance
 * with norm16_simd.h's stores narrowing by vcvtne2ps2bf16 (a pair with
 * a subnormal lane by the integer code: the bits of the avx512 level's
 * bf16 parts, tests/test_half_paths.c).  Built with the dvec libraries'
 * -ffp-contract=off (meson.build), as bnorm_avx512.c is. */
#include "norm16_simd.h"
#define BN_ONLY_BF16
#include "bnorm_simd_impl.h"

const tb_cpu_bnorm_parts *tb_cpu_bnorm_parts_bf16_avx512bf16(void)
{
    return &b16b_parts;
}
