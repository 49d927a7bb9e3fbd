/* f64's SIMD rows at the AVX-512 level (built with only that level's
 * flags; see meson.build): f64_simd_impl.h's loops and entry points, and
 * those of sdpa and sdpa_backward (attn64_simd_impl.h), layer_norm,
 * rms_norm and their gradients (norm64_simd_impl.h), cross_entropy and
 * its gradient (xent_f64_simd.h), ones, full, sum_backward and mean_backward
 * (fill_f64_simd.h). */
#include "f64_simd_impl.h"
#include "fill_f64_simd.h"
#include "attn64_simd_impl.h"
#include "norm64_simd_impl.h"
#include "isa.h"
#include "xent_f64_simd.h"

DX_ENTRIES(avx512, TB_ISA_AVX512)
DX_XENT_ENTRIES(avx512, TB_ISA_AVX512)
DX_FILL_ENTRIES(avx512, TB_ISA_AVX512)
A64_ENTRIES(avx512)
N64_ENTRIES(avx512)
