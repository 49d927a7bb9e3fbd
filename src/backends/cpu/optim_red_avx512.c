/* lamb's and lbfgs's loops at the AVX512 level, f32 and f64 (built with
 * only that level's flags and -ffp-contract=off; see meson.build):
 * optim_red_simd.h's template over both element types, its tails by
 * optim_red.h's C loops instantiated here, and the entry points
 * tb_cpu_red_f32_avx512 and tb_cpu_red_f64_avx512 (optim_red.h). */
#include <math.h>

#define RED_ET float
#define RED_SQRT sqrtf
#define RED_NAME red_c_f32
#include "optim_red.h"
#define RED_ET double
#define RED_SQRT sqrt
#define RED_NAME red_c_f64
#include "optim_red.h"

#include "optim_red_simd.h"

#define RV_SFX s
#define RV_ET float
#define RV_C red_c_f32
#include "optim_red_simd.h"
#define RV_SFX d
#define RV_ET double
#define RV_C red_c_f64
#include "optim_red_simd.h"

RV_ENTRIES(avx512)
