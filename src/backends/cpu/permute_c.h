/* permute's loops (permute_c.c), shared by its portable C rows and its
 * SIMD rows (transpose_avx2.c, transpose_avx512.c) and by half.c's
 * bf16/f16 rows: see transpose.h (tb_cpu_permute_lv). */
#ifndef TB_BACKENDS_CPU_PERMUTE_C_H
#define TB_BACKENDS_CPU_PERMUTE_C_H

#include "transpose.h"

#endif
