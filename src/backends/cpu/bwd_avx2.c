/* The SIMD rows of the element-wise backward ops (bwd_simd_impl.h) at
 * the AVX2 level, built with only that level's flags (see
 * meson.build). */
#include "bwd_simd_impl.h"
#include "isa.h"

BW_ENTRIES(avx2, TB_ISA_AVX2)
