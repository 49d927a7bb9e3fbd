/* einsum's matrix-vector products at the AVX-512 level (built with only
 * that level's flags; see meson.build): einsum_simd.h's. */
#include "einsum_simd.h"

EG_TABLE(avx512)
