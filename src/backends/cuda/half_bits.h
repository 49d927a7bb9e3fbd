/* bf16 and f16 conversions of the CUDA module, host-testable.
 *
 * The device's own conversions (cuda_bf16.h's __float2bfloat16_rn,
 * cuda_fp16.h's __float2half_rn) round to nearest even too, but give a
 * NaN the canonical pattern 0x7fff, where the cpu backend (src/ops/half.h,
 * PyTorch's c10 conversions) keeps a bf16 NaN's sign and upper payload
 * and gives an f16 NaN its sign and 0x7e00.  So the module converts with
 * these functions: pure integer and f32 arithmetic on bit patterns,
 * __host__ __device__ under nvcc and plain C11 otherwise, so that
 * tests/test_cuda_host.c (C) and tests/test_cuda_half.cu (nvcc, host
 * side of the same __host__ __device__ code) check them against half.h
 * on every 16-bit pattern and on the f32 patterns around each rounding
 * boundary (ties, subnormals, overflow, infinities, NaNs).  The header
 * must stay valid C11 and CUDA C++ (no templates, no references).
 *
 * Widening is exact; narrowing rounds to nearest, ties to even; values
 * beyond the largest finite one become infinities. */
#ifndef TB_BACKENDS_CUDA_HALF_BITS_H
#define TB_BACKENDS_CUDA_HALF_BITS_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define TB_HALF_FN static __host__ __device__ __forceinline__
#else
#define TB_HALF_FN static inline
#endif

/* memcpy is the one bit cast both C and device code allow; nvcc turns
 * it into a register move. */
TB_HALF_FN uint32_t tb_cu_f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

TB_HALF_FN float tb_cu_bits_f32(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

TB_HALF_FN float tb_cu_bf16_to_f32(uint16_t h)
{
    return tb_cu_bits_f32((uint32_t)h << 16);
}

TB_HALF_FN uint16_t tb_cu_f32_to_bf16(float f)
{
    uint32_t x = tb_cu_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: sign, payload, quiet */
        return (uint16_t)((x >> 16) | 0x40u);
    /* the low 16 bits decide: above half up, below down, a tie to the
     * even result; the carry of rounding up may reach the exponent
     * (and infinity), which is the right result */
    uint32_t lo = x & 0xffffu, hi = x >> 16;
    if (lo > 0x8000u || (lo == 0x8000u && (hi & 1u)))
        hi++;
    return (uint16_t)hi;
}

TB_HALF_FN float tb_cu_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (uint32_t)(h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1fu) /* infinity, NaN (payload kept) */
        return tb_cu_bits_f32(sign | 0x7f800000u | (m << 13));
    if (e == 0) { /* zero, subnormal: m x 2^-24, exact in f32 */
        float v = (float)m * 5.9604644775390625e-8f;
        return tb_cu_bits_f32(sign | tb_cu_f32_bits(v));
    }
    return tb_cu_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

TB_HALF_FN uint16_t tb_cu_f32_to_f16(float f)
{
    uint32_t x = tb_cu_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: the sign and the quiet NaN 0x7e00 */
        return (uint16_t)(sign | 0x7e00u);
    int32_t e = (int32_t)(ax >> 23) - 127; /* unbiased exponent */
    if (e > 15) /* >= 65536 and infinity */
        return (uint16_t)(sign | 0x7c00u);
    /* the significand with its hidden bit (a zero or an f32 subnormal
     * keeps none: it is far below half of f16's smallest subnormal) */
    uint32_t m = ax ? (ax & 0x7fffffu) | 0x800000u : 0;
    if (e < -25) /* below 2^-25: rounds to zero (2^-25 is a tie) */
        return sign;
    /* an f16 of exponent e keeps 10 bits after the point, a subnormal
     * (e < -14) fewer: drop 13 bits, plus one more per step below -14 */
    int shift = e >= -14 ? 13 : 13 + (-14 - e);
    uint32_t kept = m >> shift, rest = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1u)))
        kept++;
    /* kept counts units of the result's last place: a normal result
     * adds its rebiased exponent above the hidden bit (whose carry, and
     * a subnormal's carry into 2^-14, land on the right exponent) */
    uint32_t bits = e >= -14 ? ((uint32_t)(e + 14) << 10) + kept : kept;
    if (bits >= 0x7c00u) /* rounded up past 65504 */
        bits = 0x7c00u;
    return (uint16_t)(sign | bits);
}

#endif
