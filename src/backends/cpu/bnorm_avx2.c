/* batch_norm, group_norm and their gradients, the SIMD rows of f32 and
 * f64 at the AVX2 level (built with only that level's flags; see
 * meson.build): bnorm_simd_impl.h once per dtype, on bnorm_c.c's driver
 * (bnorm.h). */
#define BN_F32 1
#define BN_P(name) b32_##name
#include "bnorm_simd_impl.h"
#undef BN_F32
#undef BN_P

#define BN_F32 0
#define BN_P(name) b64_##name
#include "bnorm_simd_impl.h"
#undef BN_F32
#undef BN_P

BN_ENTRIES(f32, avx2, b32_parts)
BN_ENTRIES(f64, avx2, b64_parts)
