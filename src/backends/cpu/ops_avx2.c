/* The SIMD rows of ops_simd.h at the AVX2 level (built with only that
 * level's flags; see meson.build): ops_simd_impl.h's loops and entry
 * points. */
#include "isa.h"
#include "ops_simd_impl.h"

XS_ENTRIES(avx2, TB_ISA_AVX2)
