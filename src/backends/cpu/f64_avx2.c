/* f64's SIMD rows at the AVX2 level (built with only that level's
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

DX_ENTRIES(avx2, TB_ISA_AVX2)
DX_XENT_ENTRIES(avx2, TB_ISA_AVX2)
DX_FILL_ENTRIES(avx2, TB_ISA_AVX2)
A64_ENTRIES(avx2)
N64_ENTRIES(avx2)
