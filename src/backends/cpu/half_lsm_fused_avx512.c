/* half_lsm_fused.h's rows at the avx512 level (16 f32 lanes). */
#include <immintrin.h>

#define HL_SFX avx512
#include "half_lsm_fused.h"
