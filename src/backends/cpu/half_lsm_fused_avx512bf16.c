/* half_lsm_fused.h's rows at the avx512bf16 level (bf16 narrowed by
 * vcvtneps2bf16, a vector with a subnormal lane by the integer code:
 * half_simd.h). */
#include <immintrin.h>

#define HL_SFX avx512bf16
#include "half_lsm_fused.h"
