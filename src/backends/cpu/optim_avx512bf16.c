/*
 * The bf16 optimizer-step loops at the avx512bf16 level (built with
 * AVX-512 and AVX512_BF16's -m flags; see meson.build): the template of
 * optim_simd.h at 16 f32 lanes with p narrowed by vcvtneps2bf16,
 * instantiated by optim_simd_impl.h (tb_optim_bf16_avx512bf16 only).
 */
#include "optim_simd_impl.h"
