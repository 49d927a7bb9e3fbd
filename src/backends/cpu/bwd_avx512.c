/* The SIMD rows of the element-wise backward ops (bwd_simd_impl.h) at
 * the AVX-512 level, built with only that level's flags (see
 * meson.build). */
#include "bwd_simd_impl.h"
#include "isa.h"

BW_ENTRIES(avx512, TB_ISA_AVX512)

/* nll_loss's and nll_loss_backward's rows of the level */
#include "nll_avx512.h"
