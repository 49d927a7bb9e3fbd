/* The binary backward ops' SIMD rows (bwd_bin_simd.h) at the AVX-512
 * level, built with only that level's flags and without contraction
 * (see meson.build). */
#include "bwd_bin_simd.h"
#include "isa.h"

BWB_ENTRIES(avx512, TB_ISA_AVX512)
