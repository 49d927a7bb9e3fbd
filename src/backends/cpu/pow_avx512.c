/* pow f32's SIMD row at the AVX-512 level (built with only that level's
 * flags; see meson.build): pow_simd_impl.h's loop and entry point. */
#include "isa.h"
#include "pow_simd_impl.h"

PW_ENTRIES(avx512, TB_ISA_AVX512)
