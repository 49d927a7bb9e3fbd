/* The CUDA module's bf16/f16 conversions (src/backends/cuda/half_bits.h)
 * against the cpu backend's (src/ops/half.h), bit for bit.  Included by
 * tests/test_cuda_host.c (the header compiled as C11) and by
 * tests/test_cuda_half.cu (compiled by nvcc: the __host__ __device__
 * functions' host side), so both compilations are proven equal to the
 * reference.  Valid C11 and C++ (no designated initializers, casts
 * spelled for both).
 *
 * Widening: all 65,536 patterns of each format.  Narrowing: every
 * widened 16-bit value and its f32 neighbours (+-1, +-2 ulp), every
 * rounding boundary (the f32 halfway point between two neighbouring
 * 16-bit values, and its neighbours: ties to even both ways), infinities,
 * NaNs with payloads of both signs, f32 subnormals, and a stride through
 * all 2^32 f32 patterns.  Returns the number of mismatches; the first
 * few go to stderr with the input's bits. */
#ifndef TB_TESTS_CUDA_HALF_CHECK_H
#define TB_TESTS_CUDA_HALF_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "backends/cuda/half_bits.h"
#include "ops/half.h"

static long tb_half_check_narrow(uint32_t x, long *bad)
{
    float f = tb_cu_bits_f32(x);
    uint16_t gb = tb_cu_f32_to_bf16(f), wb = tb_f32_to_bf16(f);
    uint16_t gh = tb_cu_f32_to_f16(f), wh = tb_f32_to_f16(f);
    if (gb != wb || gh != wh) {
        if (*bad < 8)
            fprintf(stderr,
                    "# f32 0x%08x: bf16 0x%04x (cpu 0x%04x), f16 0x%04x "
                    "(cpu 0x%04x)\n",
                    (unsigned)x, (unsigned)gb, (unsigned)wb, (unsigned)gh,
                    (unsigned)wh);
        ++*bad;
    }
    return 1;
}

/* x and its neighbours within 2 ulp (patterns, wrapping harmlessly). */
static long tb_half_check_around(uint32_t x, long *bad)
{
    long n = 0;
    for (int d = -2; d <= 2; d++)
        n += tb_half_check_narrow(x + (uint32_t)d, bad);
    return n;
}

/* Mismatches over the whole sweep; *tried gets the number of inputs. */
static long tb_half_check_all(long *tried)
{
    long bad = 0, n = 0;
    for (uint32_t h = 0; h <= 0xffffu; h++) {
        uint32_t hb = tb_cu_f32_bits(tb_cu_bf16_to_f32((uint16_t)h));
        uint32_t wb = tb_half_f32_bits(tb_bf16_to_f32((uint16_t)h));
        uint32_t hh = tb_cu_f32_bits(tb_cu_f16_to_f32((uint16_t)h));
        uint32_t wh = tb_half_f32_bits(tb_f16_to_f32((uint16_t)h));
        if (hb != wb || hh != wh) {
            if (bad < 8)
                fprintf(stderr,
                        "# 16-bit 0x%04x widened: bf16 0x%08x (cpu 0x%08x), "
                        "f16 0x%08x (cpu 0x%08x)\n",
                        (unsigned)h, (unsigned)hb, (unsigned)wb,
                        (unsigned)hh, (unsigned)wh);
            bad++;
        }
        n += 2;
        /* the value itself, and the halfway points to the next value
         * up in magnitude (bf16: half of the 16 dropped bits; f16:
         * the widened neighbours' mean, exact in f32) */
        n += tb_half_check_around(wb, &bad);
        n += tb_half_check_around(wb + 0x8000u, &bad);
        n += tb_half_check_around(wh, &bad);
        if ((h & 0x7c00u) != 0x7c00u && (h & 0x7fffu) != 0x7bffu) {
            float a = tb_f16_to_f32((uint16_t)h);
            float b = tb_f16_to_f32((uint16_t)(h + 1));
            n += tb_half_check_around(tb_half_f32_bits((a + b) / 2), &bad);
        }
    }
    /* 65520 (f16's overflow tie), infinities, NaNs, f32 subnormals */
    const uint32_t special[] = {0x477ff000u, 0xc77ff000u, 0x7f800000u,
                                0xff800000u, 0x7fc00000u, 0xffc00000u,
                                0x7f800001u, 0xff812345u, 0x7fffffffu,
                                0x00000001u, 0x807fffffu, 0x33000000u,
                                0xb3000000u, 0x33000001u, 0x387fc000u};
    for (unsigned i = 0; i < sizeof special / sizeof special[0]; i++)
        n += tb_half_check_around(special[i], &bad);
    for (uint64_t x = 0; x <= 0xffffffffu; x += 1021)
        n += tb_half_check_narrow((uint32_t)x, &bad);
    *tried = n;
    return bad;
}

#endif
