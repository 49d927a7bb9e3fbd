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

/* In-place binary loops (vv_ip: the output is one of the inputs) with
 * 256-bit vectors, installed on AMD CPUs, where they stream an update
 * through the L3 faster (isa.h's TB_CPU_AMD_YMM_MIN_BYTES says by how
 * much); NumPy 2's AVX2 loop is what beat add_ f64 1024x1024 by 1.26x
 * in the one-run table.  The last partial block goes to the zmm loop
 * (its masked tail), and so do arrays below that size. */
#define KS_VV_YMM(NAME, T, VT, PS, L, OPF, ZMM)                           \
    static void NAME(const void *pa, const void *pb, void *po, int64_t n) \
    {                                                                     \
        const T *a = pa, *b = pb;                                         \
        T *o = po;                                                        \
        int64_t i = 0;                                                    \
        if ((double)n * sizeof(T) <                                       \
            TB_CPU_AMD_YMM_MIN_BYTES) {                                   \
            ZMM(a, b, o, n);                                              \
            return;                                                       \
        }                                                                 \
        for (; i + 4 * L <= n; i += 4 * L) {                              \
            VT x0 = _mm256_loadu_##PS(a + i);                             \
            VT x1 = _mm256_loadu_##PS(a + i + L);                         \
            VT x2 = _mm256_loadu_##PS(a + i + 2 * L);                     \
            VT x3 = _mm256_loadu_##PS(a + i + 3 * L);                     \
            x0 = _mm256_##OPF##_##PS(x0, _mm256_loadu_##PS(b + i));       \
            x1 = _mm256_##OPF##_##PS(x1, _mm256_loadu_##PS(b + i + L));   \
            x2 = _mm256_##OPF##_##PS(x2,                                  \
                                     _mm256_loadu_##PS(b + i + 2 * L));   \
            x3 = _mm256_##OPF##_##PS(x3,                                  \
                                     _mm256_loadu_##PS(b + i + 3 * L));   \
            _mm256_storeu_##PS(o + i, x0);                                \
            _mm256_storeu_##PS(o + i + L, x1);                            \
            _mm256_storeu_##PS(o + i + 2 * L, x2);                        \
            _mm256_storeu_##PS(o + i + 3 * L, x3);                        \
        }                                                                 \
        if (i < n)                                                        \
            ZMM(a + i, b + i, o + i, n - i);                              \
    }
KS_VV_YMM(add_f32_ip_y, float, __m256, ps, 8, add, add_f32_avx512_vv)
KS_VV_YMM(sub_f32_ip_y, float, __m256, ps, 8, sub, sub_f32_avx512_vv)
KS_VV_YMM(mul_f32_ip_y, float, __m256, ps, 8, mul, mul_f32_avx512_vv)
KS_VV_YMM(div_f32_ip_y, float, __m256, ps, 8, div, div_f32_avx512_vv)
KS_VV_YMM(add_f64_ip_y, double, __m256d, pd, 4, add, add_f64_avx512_vv)
KS_VV_YMM(sub_f64_ip_y, double, __m256d, pd, 4, sub, sub_f64_avx512_vv)
KS_VV_YMM(mul_f64_ip_y, double, __m256d, pd, 4, mul, mul_f64_avx512_vv)
KS_VV_YMM(div_f64_ip_y, double, __m256d, pd, 4, div, div_f64_avx512_vv)

void tb_cpu_kernels_ip_ymm_avx512(tb_cpu_kernels *k)
{
    static const tb_cpu_bin_fn y[4][2] = {
        {add_f32_ip_y, add_f64_ip_y}, {sub_f32_ip_y, sub_f64_ip_y},
        {mul_f32_ip_y, mul_f64_ip_y}, {div_f32_ip_y, div_f64_ip_y}};
    for (int op = TB_CPU_ADD; op <= TB_CPU_DIV; op++) {
        k->bin[op][TB_F32].vv_ip = y[op][0];
        k->bin[op][TB_F64].vv_ip = y[op][1];
    }
}

void tb_cpu_kernels_init_avx512(tb_cpu_kernels *k)
{
    KS_INSTALL(k, avx512, TB_ISA_AVX512);
    if (tb_cpu_isa_amd())
        tb_cpu_kernels_ip_ymm_avx512(k);
    tb_cpu_lsm_f64_install_avx512(k);
    ks_set_tr(k, TB_F32, tr_u32_block, tr_u32_block_nt, TR_TILE,
              TB_ISA_AVX512);
}
