/* The cpu backend's bf16/f16 conversion loops, one set per ISA level:
 * widen n 16-bit values to f32 (exact), narrow n f32 values to the
 * 16-bit format (round to nearest even, NaN kept, overflow to infinity),
 * bit for bit what ops/half.h's scalar functions give (tests/test_half.c
 * checks each level against them). */
#ifndef TB_BACKENDS_CPU_HALF_CVT_H
#define TB_BACKENDS_CPU_HALF_CVT_H

#include <stdint.h>

#include "../../ops/op.h"
#include "../../ops/tensor.h"

typedef void (*tb_cpu_widen_fn)(const uint16_t *src, float *dst,
                                int64_t n);
typedef void (*tb_cpu_narrow_fn)(const float *src, uint16_t *dst,
                                 int64_t n);

typedef struct tb_cpu_half_cvt {
    tb_cpu_widen_fn widen;
    tb_cpu_narrow_fn narrow;
} tb_cpu_half_cvt;

/* A fused element-wise loop: o[i] = op(a[i], b[i]) (b unused by unary
 * ops), 16-bit in and out, f32 in registers: one rounding of the f32
 * result, the values of widen + the op's f32 row + narrow, bit for bit
 * (IEEE add/sub/mul/div; relu keeps NaN and gives +0 for -0, and works
 * on the patterns directly). */
typedef void (*tb_cpu_half_fused_fn)(const uint16_t *a, const uint16_t *b,
                                     uint16_t *o, int64_t n);
/* The avx2 level's fused loop of (op, dt), or NULL (half_avx2.c). */
tb_cpu_half_fused_fn tb_cpu_half_fused_avx2(tb_op_id op, tb_dtype dt);

/* The conversions of dtype dt (TB_BF16 or TB_F16) at ISA level isa
 * (TB_ISA_SCALAR: portable C; TB_ISA_AVX2: F16C and AVX2), or {NULL,
 * NULL} for a level this build lacks or another dtype. */
tb_cpu_half_cvt tb_cpu_half_cvt_get(tb_dtype dt, int isa);
/* The AVX2 level's (half_avx2.c; F16C is part of the avx2 level). */
tb_cpu_half_cvt tb_cpu_half_cvt_avx2(tb_dtype dt);

#endif
