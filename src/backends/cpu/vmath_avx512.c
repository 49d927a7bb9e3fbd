/*
 * vmath functions for the AVX-512 level (built with only -mavx512f
 * -mavx512bw -mavx512dq -mavx512vl -mfma; see meson.build).  The algorithms live in vmath_simd.h, shared with the
 * other SIMD level so that both give identical results.
 */
#include "isa.h"
#include "vmath.h"
#include "vmath_simd.h"

VS_ARRAYS(avx512)

void tb_vmath_init_avx512(tb_vmath *t)
{
    VS_INSTALL(t, avx512, TB_ISA_AVX512);
}
