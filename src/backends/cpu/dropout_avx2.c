/* dropout's SIMD rows at the AVX2 level (built with only that level's
 * flags and -ffp-contract=off; see meson.build): dropout_simd.h's loops
 * and entry points. */
#include "dropout_simd.h"
#include "isa.h"

DP_ENTRIES(avx2, TB_ISA_AVX2)
