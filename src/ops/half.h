/* bf16 and f16: the 16-bit storage formats, converted to and from f32.
 *
 * bf16 is f32's upper half (8 exponent bits, 7 stored significand bits,
 * epsilon 2^-7); f16 is IEEE 754 binary16 (5 exponent bits, 10 stored
 * significand bits, epsilon 2^-10, largest finite 65504, subnormals down
 * to 2^-24).  Narrowing rounds to nearest, ties to even, as PyTorch's
 * c10::BFloat16/Half, NumPy's float16 and the F16C/AVX-512 instructions
 * do; a NaN stays a (quiet) NaN, values beyond the largest finite one
 * become infinities.  Widening is exact.
 *
 * Portable C, the scalar reference of the vector conversions (the
 * cpu backend's lowp rows, tests/test_half.c checks every 16-bit pattern
 * and the f32 patterns around each rounding boundary). */
#ifndef TB_OPS_HALF_H
#define TB_OPS_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t tb_half_f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

static inline float tb_half_bits_f32(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

static inline float tb_bf16_to_f32(uint16_t h)
{
    return tb_half_bits_f32((uint32_t)h << 16);
}

static inline uint16_t tb_f32_to_bf16(float f)
{
    uint32_t x = tb_half_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet */
        return (uint16_t)((x >> 16) | 0x40u);
    /* Round to nearest even on the 16 bits dropped; a carry into the
     * exponent is the right result (up to infinity). */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static inline float tb_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) /* infinity, NaN */
        return tb_half_bits_f32(sign | 0x7f800000u | (m << 13));
    if (e) /* normal: rebias the exponent by 127 - 15 */
        return tb_half_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
    /* zero, subnormal: m units of 2^-24, exact in f32 */
    return tb_half_bits_f32(sign |
                            tb_half_f32_bits((float)m * 0x1p-24f));
}

static inline uint16_t tb_f32_to_f16(float f)
{
    uint32_t x = tb_half_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN */
        return (uint16_t)(sign | 0x7e00u);
    if (ax >= 0x477ff000u) /* >= 65520 (and infinity): rounds to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) { /* >= 2^-14: a normal f16 */
        /* rebias (subtract (127 - 15) << 23), then round to nearest even
         * on the 13 bits dropped; a carry reaches the exponent. */
        uint32_t r = ax - 0x38000000u + 0xfffu + ((ax >> 13) & 1u);
        return (uint16_t)(sign | (r >> 13));
    }
    /* Below 2^-14: a multiple of 2^-24.  Adding 0.5 (whose ulp is
     * 2^-24) rounds |f| to nearest even in those units; 2^-14 itself
     * comes out as the smallest normal's bits. */
    float a = tb_half_bits_f32(ax) + 0.5f;
    return (uint16_t)(sign | (tb_half_f32_bits(a) - 0x3f000000u));
}

#endif
