/*
 * Optimizer-step loops at the AVX-512 level (built with only this level's
 * -m flags; see meson.build): the template of optim_simd.h at 16 f32 /
 * 8 f64 lanes, instantiated by optim_simd_impl.h.
 */
#include "optim_simd_impl.h"
