/* einsum's matrix-vector products at the AVX2 level (built with only
 * that level's flags; see meson.build): einsum_simd.h's. */
#include "einsum_simd.h"

EG_TABLE(avx2)
