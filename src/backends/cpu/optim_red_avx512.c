/* lamb's and lbfgs's loops at the AVX512 level, f32 and f64 (built with
 * only that level's flags and -ffp-contract=off; see meson.build):
 * optim_red_simd.h's, and their entry points tb_cpu_red_f32_avx512 and
 * tb_cpu_red_f64_avx512 (optim_red.h). */
#include "optim_red_simd.h"

RV_ENTRIES(avx512)
