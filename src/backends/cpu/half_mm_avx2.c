/* maximum and minimum bf16/f16 with b one row broadcast, at the avx2
 * level (half_simd.h's hs_mmrows, tb_cpu_half_mmrows_fn): a file of its
 * own, built with half_avx2.c's flags, so that half_avx2.c's inlining
 * stays as it was (see half_simd.h). */
#define HS_MMROWS
#include "half_simd.h"

tb_cpu_half_mmrows_fn tb_cpu_half_mmrows_avx2(tb_dtype dt)
{
    return hs_mmrows(dt);
}
