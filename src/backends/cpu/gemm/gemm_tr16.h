/* A 16 x 16 transpose of 32-bit lanes in AVX-512 registers, for the
 * packers of gemm_avx512.c (f32) and gemm_bf16_avx512bf16.c (bf16
 * pairs); included by files built with -mavx512f.  Internal to
 * src/backends/cpu/gemm/. */
#ifndef TB_BACKENDS_CPU_GEMM_GEMM_TR16_H
#define TB_BACKENDS_CPU_GEMM_GEMM_TR16_H

#include <immintrin.h>

/* r[i] lane j <- r[j] lane i: unpack pairs of rows, then pairs of
 * pairs, then 128-bit blocks twice. */
static inline __attribute__((always_inline)) void
tb_gemm_tr16x16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    for (int h = 0; h < 16; h += 8)
        for (int i = 0; i < 4; i++) {
            t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
            t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
        }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
    }
}

#endif /* TB_BACKENDS_CPU_GEMM_GEMM_TR16_H */
