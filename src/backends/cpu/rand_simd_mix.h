/* The random ops' stream in vector lanes: rand.h's tb_rand_mix in every
 * 64-bit lane of dvec_simd.h's ri (AVX-512: vpmullq; AVX2: three 32x32
 * products a multiply), shared by the random ops' rows
 * (rand_simd_impl.h) and dropout's (dropout_simd.h), so both give the
 * stream's bits.  Static inline only; included after dvec_simd.h by files
 * built with their level's flags. */
#ifndef TB_BACKENDS_CPU_RAND_SIMD_MIX_H
#define TB_BACKENDS_CPU_RAND_SIMD_MIX_H

#include <stdint.h>

#include "dvec_simd.h"

static inline ri rs_mix(ri z)
{
    z = rs_ixor(z, rs_isrl(z, 30));
    z = rs_imulc(z, UINT64_C(0xbf58476d1ce4e5b9));
    z = rs_ixor(z, rs_isrl(z, 27));
    z = rs_imulc(z, UINT64_C(0x94d049bb133111eb));
    return rs_ixor(z, rs_isrl(z, 31));
}

#endif
