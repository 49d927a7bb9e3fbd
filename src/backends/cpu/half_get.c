/* The level dispatchers of the bf16/f16 paths (half_cvt.h): each
 * returns the loops of a level (its conversions, fused loops, reduction
 * loops, arange's loop, column sums), the portable ones at the scalar
 * level.  Apart from half.c, so that half.c and half_bwd.c both call
 * down to them and not into each other. */
#include <stdint.h>

#include "../../ops/half.h"
#include "half_cvt.h"
#include "isa.h"
#include "kreg.h"

/* HG_LEVELS(isa, NAME, ARGS): return NAME_<level> ARGS when isa is one of
 * the SIMD levels this build has (the ladder of every getter below). */
#if TB_CPU_HAVE_AVX512BF16
#define HG_AVX512BF16(isa, NAME, ARGS)                                    \
    if ((isa) == TB_ISA_AVX512BF16)                                       \
        return NAME##_avx512bf16 ARGS;
#else
#define HG_AVX512BF16(isa, NAME, ARGS)
#endif
#if TB_CPU_HAVE_AVX512
#define HG_AVX512(isa, NAME, ARGS)                                        \
    if ((isa) == TB_ISA_AVX512)                                           \
        return NAME##_avx512 ARGS;
#else
#define HG_AVX512(isa, NAME, ARGS)
#endif
#if TB_CPU_HAVE_AVX2
#define HG_AVX2(isa, NAME, ARGS)                                          \
    if ((isa) == TB_ISA_AVX2)                                             \
        return NAME##_avx2 ARGS;
#else
#define HG_AVX2(isa, NAME, ARGS)
#endif
#define HG_LEVELS(isa, NAME, ARGS)                                        \
    HG_AVX512BF16(isa, NAME, ARGS)                                        \
    HG_AVX512(isa, NAME, ARGS)                                            \
    HG_AVX2(isa, NAME, ARGS)

static void widen_c(const uint16_t *src, float *dst, int64_t n,
                    float (*cv)(uint16_t))
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = cv(src[i]);
}

static void widen_bf16_c(const uint16_t *src, float *dst, int64_t n)
{
    widen_c(src, dst, n, tb_bf16_to_f32);
}

static void widen_f16_c(const uint16_t *src, float *dst, int64_t n)
{
    widen_c(src, dst, n, tb_f16_to_f32);
}

static void narrow_bf16_c(const float *src, uint16_t *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = tb_f32_to_bf16(src[i]);
}

static void narrow_f16_c(const float *src, uint16_t *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = tb_f32_to_f16(src[i]);
}

tb_cpu_half_cvt tb_cpu_half_cvt_get(tb_dtype dt, int isa)
{
    HG_LEVELS(isa, tb_cpu_half_cvt, (dt))
    if (isa != TB_ISA_SCALAR)
        return (tb_cpu_half_cvt){0, 0};
    if (dt == TB_BF16)
        return (tb_cpu_half_cvt){widen_bf16_c, narrow_bf16_c};
    if (dt == TB_F16)
        return (tb_cpu_half_cvt){widen_f16_c, narrow_f16_c};
    return (tb_cpu_half_cvt){0, 0};
}

tb_cpu_half_fused_fn tb_cpu_half_fused_get(tb_op_id op, tb_dtype dt, int isa)
{
    (void)op, (void)dt;
    HG_LEVELS(isa, tb_cpu_half_fused, (op, dt))
    (void)isa;
    return NULL;
}

tb_cpu_half_red tb_cpu_half_red_get(tb_dtype dt, int isa)
{
    (void)dt;
    HG_LEVELS(isa, tb_cpu_half_red, (dt))
    (void)isa;
    return (tb_cpu_half_red){0, 0, 0};
}

/* arange's portable loop: the f32 row's value (create.c; this file is
 * built for baseline x86-64: no fused multiply-add) narrowed once */
static void arange_bf16_c(uint16_t *o, int64_t b, int64_t e, double start,
                          double step)
{
    for (int64_t i = b; i < e; i++)
        o[i] = tb_f32_to_bf16((float)(start + (double)i * step));
}

static void arange_f16_c(uint16_t *o, int64_t b, int64_t e, double start,
                         double step)
{
    for (int64_t i = b; i < e; i++)
        o[i] = tb_f32_to_f16((float)(start + (double)i * step));
}

tb_cpu_half_arange_fn tb_cpu_half_arange_get(tb_dtype dt, int isa)
{
    HG_LEVELS(isa, tb_cpu_half_arange, (dt))
    if (isa != TB_ISA_SCALAR)
        return NULL;
    return dt == TB_BF16 ? arange_bf16_c : dt == TB_F16 ? arange_f16_c : NULL;
}

tb_cpu_half_colsum_fn tb_cpu_half_colsum_get(tb_dtype dt, int isa)
{
    (void)dt;
    HG_LEVELS(isa, tb_cpu_half_colsum, (dt))
    (void)isa;
    return NULL;
}

tb_cpu_half_mmrows_fn tb_cpu_half_mmrows_get(tb_dtype dt, int isa)
{
    HG_LEVELS(isa, tb_cpu_half_mmrows, (dt))
    (void)dt;
    (void)isa;
    return NULL;
}
