/* The cpu backend's bf16/f16 conversion loops, one set per ISA level:
 * widen n 16-bit values to f32 (exact), narrow n f32 values to the
 * 16-bit format (round to nearest even, NaN kept, overflow to infinity),
 * bit for bit what ops/half.h's scalar functions give (tests/test_half.c
 * checks each level against them); the fused element-wise loops and
 * reductions of the SIMD levels. */
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
 * result, the values of widen + the op's f32 row of the same level +
 * narrow, bit for bit (add, sub, mul, div, add_relu, maximum, minimum,
 * the scalar forms, sqrt, rsqrt, leaky_relu and ew_defs.h's ops: IEEE;
 * exp, log, tanh, sigmoid, gelu, gelu_tanh, silu: vmath.h's per-lane
 * functions; relu keeps NaN and gives +0 for -0, and works on the
 * patterns directly).  k: the op's constant (add_scalar..div_scalar's
 * scalar, leaky_relu's alpha) as the f32 row gets it, the parameter
 * rounded to the dtype; softplus's beta, its threshold
 * TB_CPU_HALF_SOFTPLUS_THR (the op's default: half.c gives another to
 * the blocks); unused by the other ops (pow: the f32 row's loop on
 * widened chunks). */
#define TB_CPU_HALF_SOFTPLUS_THR 20.0f
typedef void (*tb_cpu_half_fused_fn)(const uint16_t *a, const uint16_t *b,
                                     uint16_t *o, int64_t n, float k);

/* Reductions reading 16-bit values directly (half_simd.h): sum: the f32
 * sum row's value (kernels.h: blocks of TB_CPU_SUM_BLOCK in f32 lanes,
 * carried in double) on the widened values, bit for bit, at the same
 * level; max, min (n >= 1): the portable rows' value. */
typedef double (*tb_cpu_half_sum_fn)(const uint16_t *x, int64_t n);
typedef float (*tb_cpu_half_ext_fn)(const uint16_t *x, int64_t n);
typedef struct tb_cpu_half_red {
    tb_cpu_half_sum_fn sum;
    tb_cpu_half_ext_fn max, min;
} tb_cpu_half_red;

/* arange's chunk [b, e) of a 16-bit output o: o[i] the narrowing of
 * the f32 row's (float)(start + (double)i * step) (create.c), bit for
 * bit; start and step as the f32 row gets them (held in the dtype,
 * half.c). */
typedef void (*tb_cpu_half_arange_fn)(uint16_t *o, int64_t b, int64_t e,
                                      double start, double step);

/* acc[c] += x[r ld + c] for r = 0..R-1 in order, c < w: the 16-bit
 * values widened and added in f32 (add_backward's column sums,
 * half_bwd.c), the f32 row's additions in its order. */
typedef void (*tb_cpu_half_colsum_fn)(const uint16_t *x, int64_t R,
                                      int64_t ld, int64_t w, float *acc);

/* maximum (mx 1) or minimum of a's rows ([rows, n]) with b one row of n
 * values broadcast over them: the fused loop's values (half_simd.h's
 * hs_mmrows: b's keys once, not once a row). */
typedef void (*tb_cpu_half_mmrows_fn)(const uint16_t *a, const uint16_t *b,
                                      uint16_t *o, int64_t rows, int64_t n,
                                      int mx);

/* A SIMD level's loops (half_avx2.c, half_avx512.c, half_avx512bf16.c; one source,
 * half_simd.h): the fused loop of (op, dt) or NULL, the conversions
 * and the reductions of dt ({NULL...} for another dtype). */
tb_cpu_half_fused_fn tb_cpu_half_fused_avx2(tb_op_id op, tb_dtype dt);
tb_cpu_half_fused_fn tb_cpu_half_fused_avx512(tb_op_id op, tb_dtype dt);
tb_cpu_half_cvt tb_cpu_half_cvt_avx2(tb_dtype dt);
tb_cpu_half_cvt tb_cpu_half_cvt_avx512(tb_dtype dt);
tb_cpu_half_red tb_cpu_half_red_avx2(tb_dtype dt);
tb_cpu_half_red tb_cpu_half_red_avx512(tb_dtype dt);
tb_cpu_half_arange_fn tb_cpu_half_arange_avx2(tb_dtype dt);
tb_cpu_half_arange_fn tb_cpu_half_arange_avx512(tb_dtype dt);
tb_cpu_half_arange_fn tb_cpu_half_arange_avx512bf16(tb_dtype dt);
tb_cpu_half_colsum_fn tb_cpu_half_colsum_avx2(tb_dtype dt);
tb_cpu_half_colsum_fn tb_cpu_half_colsum_avx512(tb_dtype dt);
tb_cpu_half_colsum_fn tb_cpu_half_colsum_avx512bf16(tb_dtype dt);
tb_cpu_half_mmrows_fn tb_cpu_half_mmrows_avx2(tb_dtype dt);
tb_cpu_half_mmrows_fn tb_cpu_half_mmrows_avx512(tb_dtype dt);
tb_cpu_half_mmrows_fn tb_cpu_half_mmrows_avx512bf16(tb_dtype dt);
/* (half_avx512bf16.c: avx512's loops with AVX512_BF16's bf16 narrowing) */
tb_cpu_half_fused_fn tb_cpu_half_fused_avx512bf16(tb_op_id op, tb_dtype dt);
tb_cpu_half_cvt tb_cpu_half_cvt_avx512bf16(tb_dtype dt);
tb_cpu_half_red tb_cpu_half_red_avx512bf16(tb_dtype dt);

/* The conversions of dtype dt (TB_BF16 or TB_F16) at ISA level isa
 * (TB_ISA_SCALAR: portable C; TB_ISA_AVX2: F16C and AVX2; TB_ISA_AVX512:
 * AVX-512 F/BW; TB_ISA_AVX512BF16: bf16 narrowed by vcvtne2ps2bf16, the
 * same values), or {NULL, NULL} for a level this build lacks or
 * another dtype. */
tb_cpu_half_cvt tb_cpu_half_cvt_get(tb_dtype dt, int isa);
/* The fused loop of (op, dt) at level isa, or NULL (none: the scalar
 * level, other ops, a level this build lacks). */
tb_cpu_half_fused_fn tb_cpu_half_fused_get(tb_op_id op, tb_dtype dt,
                                           int isa);
/* The reductions of dt at level isa, or {NULL...} (the scalar level,
 * a level this build lacks). */
tb_cpu_half_red tb_cpu_half_red_get(tb_dtype dt, int isa);
/* arange's loop of dt at level isa (the scalar level: portable C), or
 * NULL (another dtype, a level this build lacks). */
tb_cpu_half_arange_fn tb_cpu_half_arange_get(tb_dtype dt, int isa);
/* The column sums of dt at level isa, or NULL (the scalar level, a
 * level this build lacks). */
tb_cpu_half_colsum_fn tb_cpu_half_colsum_get(tb_dtype dt, int isa);
/* The row-broadcast maximum/minimum of dt at level isa, or NULL (the
 * scalar level, a level this build lacks, another dtype). */
tb_cpu_half_mmrows_fn tb_cpu_half_mmrows_get(tb_dtype dt, int isa);

#endif
