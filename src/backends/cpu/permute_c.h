/* permute's loops (permute_c.c), which define its rows of every level
 * and serve half.c's bf16/f16 rows: see transpose.h
 * (tb_cpu_permute_lv). */
#ifndef TB_BACKENDS_CPU_PERMUTE_C_H
#define TB_BACKENDS_CPU_PERMUTE_C_H

#include "transpose.h"

#endif
