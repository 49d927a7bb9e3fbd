/*
 * cpu backend kernels for the AVX-512 level (built with only -mavx512f
 * -mavx512bw -mavx512dq -mavx512vl -mfma; see meson.build): the shared
 * SIMD loops of kernels_simd.h at 16 f32 / 8 f64 lanes, with mask
 * registers for the tails.  Transpose and matmul keep the lower levels'
 * kernels (the table says which level really runs).
 */
#include <stdint.h>

#include "isa.h"
#include "kernels.h"
#include "kernels_simd.h"

KS_DEFINE_KERNELS(avx512)

void tb_cpu_kernels_init_avx512(tb_cpu_kernels *k)
{
    KS_INSTALL(k, avx512, TB_ISA_AVX512);
}
