/* exp and log f64's SIMD rows at the AVX2 level (built with only that
 * level's flags; see meson.build): f64_simd_impl.h's loops and entry
 * points. */
#include "f64_simd_impl.h"
#include "fill_f64_simd.h"
#include "isa.h"
#include "xent_f64_simd.h"

DX_ENTRIES(avx2, TB_ISA_AVX2)
DX_XENT_ENTRIES(avx2, TB_ISA_AVX2)
DX_FILL_ENTRIES(avx2, TB_ISA_AVX2)
