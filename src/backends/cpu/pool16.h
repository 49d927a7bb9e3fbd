/* max_pool2d, avg_pool2d and their backward in bf16 and f16 with 2x2
 * windows of stride 2 and no padding, fused (pool16_avx512.c, the
 * avx512 level's rows through half_part.c): the 16-bit planes are read
 * and written once, widened and narrowed in registers, with the
 * operations of the avx512 level's f32 rows (kernels_simd.h's
 * ks_pool_2x2_f32, bwd_simd_impl.h's bw_mp_windows and bw_ap2_row) in
 * their order, so the bits of half.c's widen / f32 row / narrow path
 * (tests/test_half_paths.c; a NaN is a quiet NaN of the dtype).
 * Planes are [H, W] (outputs and g [OH, OW]), OH = H / 2, OW = W / 2;
 * an odd last row / column belongs to no window (its dx is +0).
 * Callers split the planes over threads; W < 2^30. */
#ifndef TB_BACKENDS_CPU_POOL16_H
#define TB_BACKENDS_CPU_POOL16_H

#include <stdbool.h>
#include <stdint.h>

/* o = the max (is_max) or mean of every window of `planes` planes of x
 * (f16: f16, else bf16) */
void tb_cpu_pool16_fwd_avx512(bool f16, bool is_max, const uint16_t *x,
                              uint16_t *o, int64_t planes, int64_t H,
                              int64_t W, int64_t OH, int64_t OW);
/* dx of `planes` planes: is_max, g to each window's first maximum of x
 * (a NaN counts as the largest; order x00 x01 x10 x11), +0 elsewhere;
 * else g / 4 to each of the four places */
void tb_cpu_pool16_bwd_avx512(bool f16, bool is_max, const uint16_t *g,
                              const uint16_t *x, uint16_t *dx,
                              int64_t planes, int64_t H, int64_t W,
                              int64_t OH, int64_t OW);

#endif
