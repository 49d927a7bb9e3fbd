/* half_lsm.c's log_softmax_backward rows at the avx512 level: the f32
 * row's own bw_lsm_rows (bwd_simd_impl.h, built with this level's
 * flags; its entry points stay bwd_avx512.c's, and its pools' row
 * functions, which only they use, go unused here). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "bwd_simd_impl.h"
#pragma GCC diagnostic pop
#include "half_lsm.h"

tb_cpu_bw_lsm_fn tb_cpu_half_lsm_bw_avx512(void) { return bw_lsm_rows; }
