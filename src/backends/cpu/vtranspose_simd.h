/* The register transpose of a VS_LANES x VS_LANES block of floats, over
 * vmath_simd.h's vf, for the SIMD headers that move tiles (kernels_simd.h:
 * transpose; bwd_simd_impl.h: permute).  Included once per ISA level's
 * translation unit, after vmath_simd.h. */
#ifndef TB_BACKENDS_CPU_VTRANSPOSE_SIMD_H
#define TB_BACKENDS_CPU_VTRANSPOSE_SIMD_H

#include "vmath_simd.h"

#if VS_LANES == 16
/* r[i][j] -> r[j][i] for a 16 x 16 block: unpacks interleave row pairs
 * within 128-bit lanes, shuffles make 4 x 4 blocks per 128-bit lane,
 * and two rounds of 128-bit lane shuffles put the blocks in place. */
static inline void v_transpose(vf r[16])
{
    vf t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* u[4g + j]: columns j, j + 4, j + 8, j + 12 (one per 128-bit lane)
     * of rows 4g .. 4g + 3 */
    for (int g = 0; g < 4; g++) {
        u[4 * g] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
        u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xee);
        u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
        u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xee);
    }
    for (int j = 0; j < 4; j++) {
        vf v0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
        vf v1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xdd);
        vf w0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
        vf w1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xdd);
        r[j] = _mm512_shuffle_f32x4(v0, w0, 0x88);
        r[j + 8] = _mm512_shuffle_f32x4(v0, w0, 0xdd);
        r[j + 4] = _mm512_shuffle_f32x4(v1, w1, 0x88);
        r[j + 12] = _mm512_shuffle_f32x4(v1, w1, 0xdd);
    }
}
#else
/* r[i][j] -> r[j][i] for an 8 x 8 block (unpack, shuffle, 128-bit
 * permute). */
static inline void v_transpose(vf r[8])
{
    vf t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int g = 0; g < 2; g++) {
        u[4 * g] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
        u[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xee);
        u[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
        u[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xee);
    }
    for (int j = 0; j < 4; j++) {
        r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
        r[j + 4] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
}
#endif

#endif /* TB_BACKENDS_CPU_VTRANSPOSE_SIMD_H */
