/*
 * cpu backend kernels for the AVX-512 level (built with only -mavx512f
 * -mavx512bw -mavx512dq -mavx512vl -mfma; see meson.build): the shared
 * SIMD loops of kernels_simd.h at 16 f32 / 8 f64 lanes, with mask
 * registers for the tails, and the f32 transpose in 16 x 16 register
 * tiles.  f64 transpose and matmul keep the lower levels' kernels (the
 * table says which level really runs).
 */
#include <immintrin.h>
#include <stdint.h>

#include "isa.h"
#include "kernels.h"
#include "kernels_simd.h"

KS_DEFINE_KERNELS(avx512)

/* Input rows per f32 transpose call: 16 rows make each output row of a
 * tile one whole 64-byte line (a full line is what a non-temporal store
 * needs to skip the read-for-ownership, and what keeps a strided store
 * from touching a line twice). */
#define TR_TILE 16

/* out[j * old + i] = in[i * ild + j] for a 16 x 16 block of 32-bit
 * values; NT: streaming stores (out and old must keep every row on a
 * 64-byte boundary).  Loads and stores move bits (NaN payloads
 * survive). */
static inline void tr_u32_16x16(const float *in, int64_t ild, float *out,
                                int64_t old, int nt)
{
    vf r[16];
    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps(in + i * ild);
    v_transpose(r);
    for (int j = 0; j < 16; j++) {
        if (nt)
            _mm512_stream_ps(out + j * old, r[j]);
        else
            _mm512_storeu_ps(out + j * old, r[j]);
    }
}

static inline void tr_u32_run(const float *in, int64_t ild, float *out,
                              int64_t old, int64_t ni, int64_t nj, int nt)
{
    int64_t j = 0;
    if (ni == TR_TILE) {
        nt = nt && ((uintptr_t)out & 63) == 0 && ((old * 4) & 63) == 0;
        for (; j + 16 <= nj; j += 16)
            tr_u32_16x16(in + j, ild, out + j * old, old, nt);
    }
    for (; j < nj; j++)
        for (int64_t i = 0; i < ni; i++)
            out[j * old + i] = in[i * ild + j];
}

static void tr_u32_block(const void *in, int64_t ild, void *out, int64_t old,
                         int64_t ni, int64_t nj)
{
    tr_u32_run(in, ild, out, old, ni, nj, 0);
}

static void tr_u32_block_nt(const void *in, int64_t ild, void *out,
                            int64_t old, int64_t ni, int64_t nj)
{
    tr_u32_run(in, ild, out, old, ni, nj, 1);
}

void tb_cpu_kernels_init_avx512(tb_cpu_kernels *k)
{
    KS_INSTALL(k, avx512, TB_ISA_AVX512);
    tb_cpu_lsm_f64_install_avx512(k);
    ks_set_tr(k, TB_F32, tr_u32_block, tr_u32_block_nt, TR_TILE,
              TB_ISA_AVX512);
}
