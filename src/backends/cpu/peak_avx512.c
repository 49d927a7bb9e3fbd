/* The AVX-512 level of peak_loops.h: 512-bit loads, stores and FMAs
 * (built with that level's flags only; see meson.build), the loops of
 * peak_simd_impl.h. */
#include "peak_simd_impl.h"
