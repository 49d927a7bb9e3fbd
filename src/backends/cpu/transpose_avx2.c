/* The avx2 level's plane transposers (transpose.h): transpose_simd.h
 * at ymm, built with this level's flags; transpose's and permute's
 * rows (drv_layout.c, permute_c.c) call them through tb_cpu_tp_get. */
#define TP_W 2
#include "transpose_simd.h"

tb_cpu_tp_fn tb_cpu_tp_avx2(size_t esz) { return tp_get(esz); }
