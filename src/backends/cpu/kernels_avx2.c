/*
 * cpu backend kernels for the AVX2 level (built with only -mavx2 -mfma;
 * see meson.build): the shared SIMD loops of kernels_simd.h at 8 f32 /
 * 4 f64 lanes, plus the register-tiled transpose, which the AVX-512
 * level reuses (a transpose is bound by memory and TLB, not by vector
 * width).
 */
#include <immintrin.h>
#include <stdint.h>

#include "isa.h"
#include "kernels.h"
#include "kernels_simd.h"

KS_DEFINE_KERNELS(avx2)

/* Input rows per transpose call: a tile of 8 rows fills whole 32-byte
 * vectors per output row (f32) or two 4x4 blocks (f64). */
#define TR_TILE 8

/* out[j * old + i] = in[i * ild + j] for an 8 x 8 block of 32-bit
 * values: eight row loads, the classic unpack / shuffle / permute
 * network, eight row stores. */
static inline void tr_u32_8x8(const float *in, int64_t ild, float *out,
                              int64_t old)
{
    __m256 r0 = _mm256_loadu_ps(in), r1 = _mm256_loadu_ps(in + ild);
    __m256 r2 = _mm256_loadu_ps(in + 2 * ild);
    __m256 r3 = _mm256_loadu_ps(in + 3 * ild);
    __m256 r4 = _mm256_loadu_ps(in + 4 * ild);
    __m256 r5 = _mm256_loadu_ps(in + 5 * ild);
    __m256 r6 = _mm256_loadu_ps(in + 6 * ild);
    __m256 r7 = _mm256_loadu_ps(in + 7 * ild);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44);
    __m256 u1 = _mm256_shuffle_ps(t0, t2, 0xee);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44);
    __m256 u3 = _mm256_shuffle_ps(t1, t3, 0xee);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44);
    __m256 u5 = _mm256_shuffle_ps(t4, t6, 0xee);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44);
    __m256 u7 = _mm256_shuffle_ps(t5, t7, 0xee);
    _mm256_storeu_ps(out, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(out + old, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(out + 2 * old, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(out + 3 * old, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(out + 4 * old, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(out + 5 * old, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(out + 6 * old, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(out + 7 * old, _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* The same for a 4 x 4 block of 64-bit values. */
static inline void tr_u64_4x4(const double *in, int64_t ild, double *out,
                              int64_t old)
{
    __m256d r0 = _mm256_loadu_pd(in), r1 = _mm256_loadu_pd(in + ild);
    __m256d r2 = _mm256_loadu_pd(in + 2 * ild);
    __m256d r3 = _mm256_loadu_pd(in + 3 * ild);
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    _mm256_storeu_pd(out, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(out + old, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(out + 2 * old, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(out + 3 * old, _mm256_permute2f128_pd(t1, t3, 0x31));
}

/* Floating-point loads and stores move bits unchanged (no arithmetic),
 * so NaN payloads survive, like the C version's integer copies. */
/* NAME: a block of T in full-width steps of STEP columns (FULL, on
 * in + j and out + j * old) when it has TR_TILE rows, then the columns
 * left one by one. */
#define TR_BLOCK(NAME, T, STEP, FULL)                                     \
    static void NAME(const void *pin, int64_t ild, void *pout,            \
                     int64_t old, int64_t ni, int64_t nj)                 \
    {                                                                     \
        const T *in = pin;                                                \
        T *out = pout;                                                    \
        int64_t j = 0;                                                    \
        if (ni == TR_TILE)                                                \
            for (; j + (STEP) <= nj; j += (STEP)) {                       \
                FULL;                                                     \
            }                                                             \
        for (; j < nj; j++)                                               \
            for (int64_t i = 0; i < ni; i++)                              \
                out[j * old + i] = in[i * ild + j];                       \
    }
TR_BLOCK(tr_u32_block, float, 8, tr_u32_8x8(in + j, ild, out + j * old, old))
TR_BLOCK(tr_u64_block, double, 4,
         tr_u64_4x4(in + j, ild, out + j * old, old);
         tr_u64_4x4(in + 4 * ild + j, ild, out + j * old + 4, old))

void tb_cpu_kernels_init_avx2(tb_cpu_kernels *k)
{
    KS_INSTALL(k, avx2, TB_ISA_AVX2);
    tb_cpu_lsm_f64_install_avx2(k);
    /* no streaming stores: the block kernels serve as block_nt too */
    ks_set_tr(k, TB_F32, tr_u32_block, tr_u32_block, TR_TILE, TB_ISA_AVX2);
    ks_set_tr(k, TB_F64, tr_u64_block, tr_u64_block, TR_TILE, TB_ISA_AVX2);
}
