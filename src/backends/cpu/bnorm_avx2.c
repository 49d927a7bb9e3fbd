/* batch_norm, group_norm and their gradients, the SIMD rows of f32 and
 * f64 at the AVX2 level (built with only that level's flags; see
 * meson.build): bnorm_simd_impl.h's two instances, on bnorm_c.c's driver
 * (bnorm.h). */
#include "bnorm_simd_impl.h"

BN_ENTRIES(f32, avx2, b32_parts)
BN_ENTRIES(f64, avx2, b64_parts)
