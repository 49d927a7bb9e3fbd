/* cross_entropy and its gradient, f32 at the AVX2 level (built with
 * only that level's flags; see meson.build): xent_simd.h's rows. */
#include "xent_simd.h"

XENT_ENTRIES(avx2)
