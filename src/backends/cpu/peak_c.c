/* The portable level of peak_loops.h (the loops the baseline build's
 * compiler makes of plain C: 128-bit SSE2 on x86-64, a separate multiply
 * and add, the most that portable C can be compiled to) and the lookup
 * of every level, by isa.c's detector. */
#include "peak_loops.h"

#include "backends/cpu/cpu_config.h"
#include "isa.h"
#include "peak_fma.h"

_Static_assert(TB_PEAK_LEVELS == TB_ISA_COUNT, "one loop set per level");

static double bw_copy_scalar(double *restrict a, const double *restrict b,
                             const double *restrict c, size_t n, double s)
{
    (void)c, (void)s;
    for (size_t i = 0; i < n; i++)
        a[i] = b[i];
    return a[0];
}

static double bw_add_scalar(double *restrict a, const double *restrict b,
                            const double *restrict c, size_t n, double s)
{
    (void)s;
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + c[i];
    return a[0];
}

static double bw_triad_scalar(double *restrict a, const double *restrict b,
                              const double *restrict c, size_t n, double s)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
    return a[0];
}

static double bw_update_scalar(double *restrict a, const double *restrict b,
                               const double *restrict c, size_t n, double s)
{
    (void)c;
    for (size_t i = 0; i < n; i++)
        a[i] = s * b[i] - a[i];
    return a[0];
}

static double bw_read_scalar(double *restrict a, const double *restrict b,
                             const double *restrict c, size_t n, double s)
{
    (void)b, (void)c, (void)s;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    for (size_t i = 0; i < n; i += 8) {
        s0 += a[i];
        s1 += a[i + 1];
        s2 += a[i + 2];
        s3 += a[i + 3];
        s4 += a[i + 4];
        s5 += a[i + 5];
        s6 += a[i + 6];
        s7 += a[i + 7];
    }
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

typedef double pk_v2d __attribute__((vector_size(16)));
typedef float pk_v4f __attribute__((vector_size(16)));
#define PK_SET_V2D(x) ((pk_v2d){(x), (x)})
#define PK_SET_V4F(x)                                                     \
    ((pk_v4f){(float)(x), (float)(x), (float)(x), (float)(x)})
#define PK_FMA_DECL_pk_v2d(i) pk_v2d a##i = PK_SET_V2D(1.0 + (i) * 1e-3);
#define PK_FMA_DECL_pk_v4f(i) pk_v4f a##i = PK_SET_V4F(1.0 + (i) * 1e-3);
#define PK_STEP_OP(a, m, c) ((a) * (m) + (c))
PK_FMA_LOOP(fma_f64_scalar, pk_v2d, double, PK_SET_V2D)
PK_FMA_LOOP(fma_f32_scalar, pk_v4f, float, PK_SET_V4F)

static const tb_peak_loops peak_scalar = {
    .isa = "scalar",
    .bw = {bw_copy_scalar, bw_add_scalar, bw_triad_scalar, bw_read_scalar,
           bw_update_scalar},
    .fma = {[TB_F32] = fma_f32_scalar, [TB_F64] = fma_f64_scalar},
    .fma_flops_per_iter = {[TB_F32] = TB_PEAK_NACC * 4 * 2,
                           [TB_F64] = TB_PEAK_NACC * 2 * 2},
};

const tb_peak_loops *tb_cpu_peak_loops(int i)
{
    if (i < 0 || i >= TB_PEAK_LEVELS || i > tb_cpu_isa_detect())
        return NULL;
    switch (i) {
    case TB_ISA_SCALAR:
        return &peak_scalar;
#if TB_CPU_HAVE_AVX2
    case TB_ISA_AVX2:
        return &tb_cpu_peak_loops_avx2;
#endif
#if TB_CPU_HAVE_AVX512
    case TB_ISA_AVX512:
        return &tb_cpu_peak_loops_avx512;
    case TB_ISA_AVX512BF16: /* avx512's loops (peak_simd_impl.h) */
        return TB_CPU_HAVE_AVX512BF16 ? &tb_cpu_peak_loops_avx512bf16
                                      : NULL;
#endif
    default:
        return NULL;
    }
}
