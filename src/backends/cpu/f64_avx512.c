/* exp and log f64's SIMD rows at the AVX-512 level (built with only that
 * level's flags; see meson.build): f64_simd_impl.h's loops and entry
 * points. */
#include "f64_simd_impl.h"
#include "fill_f64_simd.h"
#include "isa.h"
#include "xent_f64_simd.h"

DX_ENTRIES(avx512, TB_ISA_AVX512)
DX_XENT_ENTRIES(avx512, TB_ISA_AVX512)
DX_FILL_ENTRIES(avx512, TB_ISA_AVX512)
