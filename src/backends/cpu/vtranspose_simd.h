/* The register transpose of a VS_LANES x VS_LANES block of floats, over
 * vmath_simd.h's vf, for the SIMD headers that move tiles (kernels_simd.h:
 * transpose; bwd_simd_impl.h: permute).  Included once per ISA level's
 * translation unit, after vmath_simd.h. */
#ifndef TB_BACKENDS_CPU_VTRANSPOSE_SIMD_H
#define TB_BACKENDS_CPU_VTRANSPOSE_SIMD_H

#include "vmath_simd.h"

#if VS_LANES == 16
#define VT_UNPACKLO _mm512_unpacklo_ps
#define VT_UNPACKHI _mm512_unpackhi_ps
#define VT_SHUFFLE _mm512_shuffle_ps
#else
#define VT_UNPACKLO _mm256_unpacklo_ps
#define VT_UNPACKHI _mm256_unpackhi_ps
#define VT_SHUFFLE _mm256_shuffle_ps
#endif

/* The first two rounds, the same at both widths (t: VS_LANES vf of
 * scratch): unpacks interleave row pairs within 128-bit lanes, shuffles
 * make 4 x 4 blocks per 128-bit lane: u[4g + j] holds columns j, j + 4,
 * j + 8, ... (one per 128-bit lane) of rows 4g .. 4g + 3.  A macro, not
 * a function: the register allocation of the callers' loops stays that
 * of one function body. */
#define VT_BLOCKS4(r, t, u)                                               \
    do {                                                                  \
        for (int i = 0; i < VS_LANES / 2; i++) {                          \
            t[2 * i] = VT_UNPACKLO(r[2 * i], r[2 * i + 1]);               \
            t[2 * i + 1] = VT_UNPACKHI(r[2 * i], r[2 * i + 1]);           \
        }                                                                 \
        for (int g = 0; g < VS_LANES / 4; g++) {                          \
            u[4 * g] = VT_SHUFFLE(t[4 * g], t[4 * g + 2], 0x44);          \
            u[4 * g + 1] = VT_SHUFFLE(t[4 * g], t[4 * g + 2], 0xee);      \
            u[4 * g + 2] = VT_SHUFFLE(t[4 * g + 1], t[4 * g + 3], 0x44);  \
            u[4 * g + 3] = VT_SHUFFLE(t[4 * g + 1], t[4 * g + 3], 0xee);  \
        }                                                                 \
    } while (0)

#if VS_LANES == 16
/* r[i][j] -> r[j][i] for a 16 x 16 block: VT_BLOCKS4, then two rounds
 * of 128-bit lane shuffles put the blocks in place. */
static inline __attribute__((always_inline)) void v_transpose(vf r[16])
{
    vf t[16], u[16];
    VT_BLOCKS4(r, t, u);
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
/* r[i][j] -> r[j][i] for an 8 x 8 block: VT_BLOCKS4, then a 128-bit
 * permute. */
static inline __attribute__((always_inline)) void v_transpose(vf r[8])
{
    vf t[8], u[8];
    VT_BLOCKS4(r, t, u);
    for (int j = 0; j < 4; j++) {
        r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
        r[j + 4] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
}
#endif
#undef VT_UNPACKLO
#undef VT_UNPACKHI
#undef VT_SHUFFLE
#undef VT_BLOCKS4

#endif /* TB_BACKENDS_CPU_VTRANSPOSE_SIMD_H */
