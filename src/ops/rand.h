/* The counter-based random stream of rand_uniform and rand_normal, shared
 * by the reference kernels (ref_create.c) and every backend's kernels, so
 * a reference reproduces a kernel's draws exactly.
 *
 * Element i of an output depends only on (seed, i): not on the shape, the
 * thread split, the ISA or the backend.  Precisely, with SplitMix64
 * (Steele, Lea, Flood 2014; the constants of Vigna's splitmix64.c):
 *
 *   mix(z)  = z ^= z >> 30; z *= 0xbf58476d1ce4e5b9;
 *             z ^= z >> 27; z *= 0x94d049bb133111eb; z ^ (z >> 31)
 *   G       = 0x9e3779b97f4a7c15
 *   key     = mix(seed + G)             (all arithmetic mod 2^64)
 *   bits(i) = mix(key + (i + 1) * G)
 *
 * i.e. key is the first output of a SplitMix64 generator seeded with
 * `seed`, and bits(0), bits(1), ... are the outputs of a second one seeded
 * with key.  Hashing the seed first keeps streams of nearby seeds (0, 1,
 * 2 ...) from being shifted copies of each other.
 *
 * Uniforms in [0, 1), exact multiples of 2^-53 (f64) or 2^-24 (f32):
 *   u53(i) = (bits(i) >> 11) * 2^-53      u24(i) = (bits(i) >> 40) * 2^-24
 *
 * rand_uniform(low, high):
 *   f64: out[i] = low + (high - low) * u53(i), each operation rounded in
 *        double (no FMA), left to right;
 *   f32: lo = (float)low, hi = (float)high, then
 *        out[i] = (float)((double)lo + ((double)hi - (double)lo) * u24(i))
 *        evaluated in double and rounded to float once, so the result is
 *        the float nearest the exact affine map (no f32 cancellation).
 *   The result lies in [low, high] and is < high except when high - low
 *   is within a few ulps of high (the final rounding may reach high).
 *
 * rand_normal(mean, std): Box-Muller on the rand_uniform stream.  For the
 * pair j = floor(i / 2), with u1 = u(2j), u2 = u(2j + 1) (u53 for f64,
 * u24 for f32: the same uniforms rand_uniform(0, 1) draws at 2j, 2j+1):
 *   r  = sqrt(-2 * log(1 - u1))      (1 - u1 is exact and in (0, 1])
 *   z(2j) = r * cos(TB_RAND_2PI * u2),  z(2j + 1) = r * sin(TB_RAND_2PI * u2)
 *   f64: out[i] = mean + std * z(i)
 *   f32: m = (float)mean, s = (float)std,
 *        out[i] = (float)((double)m + (double)s * z(i))
 * with z computed in double by the C library's log, sqrt, cos and sin
 * (TB_RAND_2PI is 2*pi rounded to double).  An odd-length tensor uses
 * the cos branch of its last pair only.  The f32 stream is thus exactly
 * reproducible wherever libm's log/cos/sin are correctly rounded, and
 * within an ulp or so of a float everywhere else.  The cpu backend's
 * SIMD rows (backends/cpu/rand_simd.h) give these values bit for bit
 * (rand_normal f32: a vector approximation with a proven bound, and
 * this scalar path wherever the bound cannot decide the float). */
#ifndef TB_OPS_RAND_H
#define TB_OPS_RAND_H

#include <math.h>
#include <stdint.h>

#include "../base/hostdev.h"
#include "../base/rng.h"

#define TB_RAND_GAMMA TB_SPLITMIX64_GAMMA
#define TB_RAND_2PI 6.283185307179586

TB_HOSTDEV uint64_t tb_rand_mix(uint64_t z)
{
    return tb_splitmix64_mix(z);
}

/* The stream's key for a seed (computed once per call). */
TB_HOSTDEV uint64_t tb_rand_key(uint64_t seed)
{
    return tb_rand_mix(seed + TB_RAND_GAMMA);
}

/* 64 random bits of element i of the stream of key. */
TB_HOSTDEV uint64_t tb_rand_bits(uint64_t key, uint64_t i)
{
    return tb_rand_mix(key + (i + 1) * TB_RAND_GAMMA);
}

TB_HOSTDEV double tb_rand_u53(uint64_t key, uint64_t i)
{
    return (double)(tb_rand_bits(key, i) >> 11) * 0x1.0p-53;
}

/* u24 as a double (exact; a float holds it exactly too). */
TB_HOSTDEV double tb_rand_u24(uint64_t key, uint64_t i)
{
    return (double)(tb_rand_bits(key, i) >> 40) * 0x1.0p-24;
}

/* The seed parameter (a double holding an integer in [0, 2^53]). */
static inline uint64_t tb_rand_seed(double v)
{
    return v > 0 ? (uint64_t)v : 0;
}

/* rand_uniform's value in double: f64 (exact stream value) or, for f32,
 * the double value the f32 kernel rounds once (lo, hi already rounded to
 * float by the caller). */
static inline double tb_rand_uniform_f64(uint64_t key, uint64_t i,
                                         double low, double high)
{
    return low + (high - low) * tb_rand_u53(key, i);
}

static inline double tb_rand_uniform_f32(uint64_t key, uint64_t i,
                                         double lo, double hi)
{
    return lo + (hi - lo) * tb_rand_u24(key, i);
}

/* dropout(p): element i is kept when u53(i) >= p, i.e. when bits(i) >>
 * 11 >= ceil(p * 2^53) (u53 = k 2^-53 exactly and p * 2^53 is exact): an
 * integer comparison, the same at every ISA level, thread count and
 * dtype.  The threshold of p in [0, 1) (computed once per call).
 * tb_rand_keep and the functions it calls (tb_rand_bits, tb_rand_mix,
 * tb_splitmix64_mix; tb_rand_key, tb_rand_u53, tb_rand_u24) are
 * TB_HOSTDEV: the CUDA module's dropout and random fills
 * (backends/cuda/layout.h) call these very definitions on the device
 * (tests/test_cuda_nn.c checks them against an independent SplitMix64). */
static inline uint64_t tb_rand_keep_threshold(double p)
{
    return (uint64_t)ceil(p * 0x1.0p53);
}

TB_HOSTDEV int tb_rand_keep(uint64_t key, uint64_t i, uint64_t thr)
{
    return (tb_rand_bits(key, i) >> 11) >= thr;
}

/* Box-Muller pair j: z[0] = z(2j) (cos), z[1] = z(2j + 1) (sin), from
 * 53-bit (f64) or 24-bit (f32) uniforms. */
static inline void tb_rand_normal_pair(uint64_t key, uint64_t j, int f32,
                                       double z[2])
{
    double u1 = f32 ? tb_rand_u24(key, 2 * j) : tb_rand_u53(key, 2 * j);
    double u2 = f32 ? tb_rand_u24(key, 2 * j + 1)
                    : tb_rand_u53(key, 2 * j + 1);
    double r = sqrt(-2.0 * log(1.0 - u1));
    double a = TB_RAND_2PI * u2;
    z[0] = r * cos(a);
    z[1] = r * sin(a);
}

#endif
