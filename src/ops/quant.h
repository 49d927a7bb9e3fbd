/* matmul_int8's quantization (ops/op.c): the one definition its double
 * reference (ref_quant.c) and every kernel use, so their results can be
 * compared exactly.
 *
 *   qa = clamp(nearbyint(a / a_scale) + a_zero, 0, 255)   (u8)
 *   qb = clamp(nearbyint(b / b_scale), -128, 127)         (s8, zero 0)
 *   y[i,j] = (float)acc * (a_scale * b_scale),
 *   acc = sum_k (qa[i,k] - a_zero) * qb[k,j]              (int32, exact)
 *
 * Every step in f32 with IEEE rounding: x / s correctly rounded,
 * nearbyint ties to even (the default rounding mode, as PyTorch's and
 * oneDNN's quantizers round), the clamp in float before the conversion
 * to an integer (a NaN quantizes to the low end), the int32 sum exact
 * (|term| <= 255 * 128, K <= 65536: the shape rule's limit), its
 * conversion to f32 rounded to nearest even, then one f32 multiply by
 * the f32 product of the scales.  The scales and a_zero are the op's
 * parameters, the scales taken as f32. */
#ifndef TB_OPS_QUANT_H
#define TB_OPS_QUANT_H

#include <math.h>
#include <stdint.h>

/* The deepest K whose int32 sums cannot overflow. */
#define TB_QUANT_MAX_K 65536

static inline int32_t tb_quant(float x, float s, float z, float lo,
                               float hi)
{
    float q = nearbyintf(x / s) + z;
    q = q > lo ? q : lo; /* NaN: lo */
    q = q < hi ? q : hi;
    return (int32_t)q;
}

static inline uint8_t tb_quant_u8(float x, float s, int32_t z)
{
    return (uint8_t)tb_quant(x, s, (float)z, 0.0f, 255.0f);
}

static inline int8_t tb_quant_s8(float x, float s)
{
    return (int8_t)tb_quant(x, s, 0.0f, -128.0f, 127.0f);
}

/* The result of one output element from its exact integer sum. */
static inline float tb_quant_out(int32_t acc, float a_scale, float b_scale)
{
    const float sab = a_scale * b_scale; /* one f32 product */
    return (float)acc * sab;
}

#endif
