/* The binary backward ops' SIMD rows (bwd_bin_simd.h) at the AVX2
 * level, built with only that level's flags and without contraction
 * (see meson.build). */
#include "bwd_bin_simd.h"
#include "isa.h"

BWB_ENTRIES(avx2, TB_ISA_AVX2)
