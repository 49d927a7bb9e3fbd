/*
 * Optimizer-step loops at the AVX2 level (built with only this level's
 * -m flags; see meson.build): the template of optim_simd.h at 8 f32 /
 * 4 f64 lanes, instantiated by optim_simd_impl.h.
 */
#include "optim_simd_impl.h"
