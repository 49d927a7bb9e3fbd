/* The SIMD rows of rand_simd.h at the AVX-512 level (built with only that
 * level's flags and -ffp-contract=off; see meson.build):
 * rand_simd_impl.h's loops and entry points. */
#include "isa.h"
#include "rand_simd_impl.h"

RS_ENTRIES(avx512, TB_ISA_AVX512)
