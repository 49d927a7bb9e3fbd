/* The SIMD levels of peak_loops.h, written once for peak_avx2.c and
 * peak_avx512.c (each built with only its level's flags; see
 * meson.build): W doubles a vector, 256-bit vectors (W = 4) under AVX2's
 * flags, 512-bit (W = 8) under AVX-512's.  The bandwidth loops move
 * 4 W doubles an iteration (read: 8 W, into 8 accumulators); n is a
 * multiple of that and the arrays are aligned (peak_loops.h).  The file
 * defines tb_cpu_peak_loops_<level> (peak_fma.h). */
#ifndef TB_BACKENDS_CPU_PEAK_SIMD_IMPL_H
#define TB_BACKENDS_CPU_PEAK_SIMD_IMPL_H

#include <immintrin.h>

#include "backends/cpu/cpu_config.h"
#include "peak_fma.h"

#ifdef __AVX512F__
#define PK_W 8
#define PK_VD __m512d
#define PK_VS __m512
#define PK_LOAD _mm512_load_pd
#define PK_STORE _mm512_store_pd
#define PK_STOREU _mm512_storeu_pd
#define PK_ADD _mm512_add_pd
#define PK_FMADD_PD _mm512_fmadd_pd
#define PK_FMSUB_PD _mm512_fmsub_pd
#define PK_FMADD_PS _mm512_fmadd_ps
#define PK_SET1D(x) _mm512_set1_pd(x)
#define PK_SET1S(x) _mm512_set1_ps((float)(x))
#define PK_ZERO _mm512_setzero_pd
#define PK_HSUM(r) (PK_HSUM4(r) + PK_HSUM4((r) + 4))
#define PK_ISA "avx512"
#define PK_TABLE tb_cpu_peak_loops_avx512
#else
#define PK_W 4
#define PK_VD __m256d
#define PK_VS __m256
#define PK_LOAD _mm256_load_pd
#define PK_STORE _mm256_store_pd
#define PK_STOREU _mm256_storeu_pd
#define PK_ADD _mm256_add_pd
#define PK_FMADD_PD _mm256_fmadd_pd
#define PK_FMSUB_PD _mm256_fmsub_pd
#define PK_FMADD_PS _mm256_fmadd_ps
#define PK_SET1D(x) _mm256_set1_pd(x)
#define PK_SET1S(x) _mm256_set1_ps((float)(x))
#define PK_ZERO _mm256_setzero_pd
#define PK_HSUM(r) PK_HSUM4(r)
#define PK_ISA "avx2"
#define PK_TABLE tb_cpu_peak_loops_avx2
#endif
#define PK_HSUM4(r) (((r)[0] + (r)[1]) + ((r)[2] + (r)[3]))

static double bw_copy(double *restrict a, const double *restrict b,
                      const double *restrict c, size_t n, double s)
{
    (void)c, (void)s;
    for (size_t i = 0; i < n; i += 4 * PK_W) {
        PK_VD v0 = PK_LOAD(b + i), v1 = PK_LOAD(b + i + PK_W);
        PK_VD v2 = PK_LOAD(b + i + 2 * PK_W);
        PK_VD v3 = PK_LOAD(b + i + 3 * PK_W);
        PK_STORE(a + i, v0);
        PK_STORE(a + i + PK_W, v1);
        PK_STORE(a + i + 2 * PK_W, v2);
        PK_STORE(a + i + 3 * PK_W, v3);
    }
    return a[0];
}

/* A streaming kernel: a[j] = EXPR for every vector j, 4 W doubles an
 * iteration (add, triad and the in-place update; s broadcast as vs). */
#define PK_BW_STREAM(name, EXPR)                                          \
    static double name(double *restrict a, const double *restrict b,     \
                       const double *restrict c, size_t n, double s)     \
    {                                                                    \
        const PK_VD vs = PK_SET1D(s);                                    \
        (void)a, (void)b, (void)c, (void)vs;                             \
        for (size_t i = 0; i < n; i += 4 * PK_W)                         \
            for (size_t j = i; j < i + 4 * PK_W; j += PK_W)              \
                PK_STORE(a + j, EXPR);                                   \
        return a[0];                                                     \
    }
PK_BW_STREAM(bw_add, PK_ADD(PK_LOAD(b + j), PK_LOAD(c + j)))
PK_BW_STREAM(bw_triad, PK_FMADD_PD(vs, PK_LOAD(c + j), PK_LOAD(b + j)))
PK_BW_STREAM(bw_update, PK_FMSUB_PD(vs, PK_LOAD(b + j), PK_LOAD(a + j)))
#undef PK_BW_STREAM

static double bw_read(double *restrict a, const double *restrict b,
                      const double *restrict c, size_t n, double s)
{
    (void)b, (void)c, (void)s;
    PK_VD s0 = PK_ZERO(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0,
          s6 = s0, s7 = s0;
    for (size_t i = 0; i < n; i += 8 * PK_W) {
        s0 = PK_ADD(s0, PK_LOAD(a + i));
        s1 = PK_ADD(s1, PK_LOAD(a + i + PK_W));
        s2 = PK_ADD(s2, PK_LOAD(a + i + 2 * PK_W));
        s3 = PK_ADD(s3, PK_LOAD(a + i + 3 * PK_W));
        s4 = PK_ADD(s4, PK_LOAD(a + i + 4 * PK_W));
        s5 = PK_ADD(s5, PK_LOAD(a + i + 5 * PK_W));
        s6 = PK_ADD(s6, PK_LOAD(a + i + 6 * PK_W));
        s7 = PK_ADD(s7, PK_LOAD(a + i + 7 * PK_W));
    }
    PK_VD t = PK_ADD(PK_ADD(PK_ADD(s0, s1), PK_ADD(s2, s3)),
                     PK_ADD(PK_ADD(s4, s5), PK_ADD(s6, s7)));
    double r[PK_W];
    PK_STOREU(r, t);
    return PK_HSUM(r);
}

/* PK_FMA_LOOP pastes PK_FMA_DECL_ to its vector-type argument. */
#define PK_FMA_DECL_PK_VD(i) PK_VD a##i = PK_SET1D(1.0 + (i) * 1e-3);
#define PK_FMA_DECL_PK_VS(i) PK_VS a##i = PK_SET1S(1.0 + (i) * 1e-3);
#define PK_STEP_OP PK_FMADD_PD
PK_FMA_LOOP(fma_f64, PK_VD, double, PK_SET1D)
#undef PK_STEP_OP
#define PK_STEP_OP PK_FMADD_PS
PK_FMA_LOOP(fma_f32, PK_VS, float, PK_SET1S)
#undef PK_STEP_OP

const tb_peak_loops PK_TABLE = {
    .isa = PK_ISA,
    .bw = {bw_copy, bw_add, bw_triad, bw_read, bw_update},
    .fma = {[TB_F32] = fma_f32, [TB_F64] = fma_f64},
    .fma_flops_per_iter = {[TB_F32] = TB_PEAK_NACC * 2 * PK_W * 2,
                           [TB_F64] = TB_PEAK_NACC * PK_W * 2},
};

#if PK_W == 8
/* The avx512bf16 level (isa.h) multiplies f32 and f64 with avx512's
 * instructions: its FMA figures are measured with these loops again,
 * under its own name, so that a case run at that level finds its roof,
 * with the level's dot-product loops (peak_avx512bf16.c: bf16's
 * vdpbf16ps, int8's vpdpbusd); it moves memory as avx512 does (no
 * bandwidth loops of its own: the bandwidth is measured once, at
 * avx512). */
const tb_peak_loops tb_cpu_peak_loops_avx512bf16 = {
    .isa = "avx512bf16",
    .fma = {[TB_F32] = fma_f32, [TB_F64] = fma_f64},
    .fma_flops_per_iter = {[TB_F32] = TB_PEAK_NACC * 2 * PK_W * 2,
                           [TB_F64] = TB_PEAK_NACC * PK_W * 2},
#if TB_CPU_HAVE_AVX512BF16
    /* and its own: vdpbf16ps, 16 lanes x 2 multiply-adds; vpdpbusd, 16
     * lanes x 4 */
    .dot = {{"bf16", tb_cpu_peak_dot_bf16_avx512bf16,
             TB_PEAK_NACC * 2 * PK_W * 2 * 2},
            {"int8", tb_cpu_peak_dot_int8_avx512bf16,
             TB_PEAK_NACC * 16 * 4 * 2}},
#endif
};
#endif

#endif
