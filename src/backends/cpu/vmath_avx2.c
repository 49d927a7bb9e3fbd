/*
 * vmath functions for the AVX2 level (built with only -mavx2 -mfma; see
 * meson.build).  The algorithms live in vmath_simd.h, shared with the
 * other SIMD level so that both give identical results.
 */
#include "isa.h"
#include "vmath.h"
#include "vmath_simd.h"

VS_ARRAYS(avx2)

void tb_vmath_init_avx2(tb_vmath *t)
{
    VS_INSTALL(t, avx2, TB_ISA_AVX2);
}
