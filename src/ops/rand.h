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
 *   z(2j) = r * cos(2 pi u2),  z(2j + 1) = r * sin(2 pi u2)
 *   f64: out[i] = mean + std * z(i)
 *   f32: m = (float)mean, s = (float)std,
 *        out[i] = (float)((double)m + (double)s * z(i))
 * f32: z computed in double by the C library's log, sqrt, cos and sin
 * of TB_RAND_2PI * u2 (2*pi rounded to double, the product rounded).
 * f64: z computed by tb_rand_bm64 below, a fixed sequence of IEEE
 * additions, multiplications, one division and one square root (no
 * libm, no fused multiply-add), so the same bits on every machine and
 * in vector code; within 4 ulp of the exact r cos(2 pi u2) and r
 * sin(2 pi u2) (checkasm's rand_bm64_ulp, against long double: 3.46
 * measured; -2 log t within 2 ulp, r 1.7, cos 1.3, sin 1.6), uniformly:
 * the reduction of 2 pi u2 is exact, so z keeps its relative accuracy
 * next to the zeros of cos and sin too.  An
 * odd-length tensor uses the cos branch of its last pair only.  The f32
 * stream is thus exactly reproducible wherever libm's log/cos/sin are
 * correctly rounded, and within an ulp or so of a float everywhere
 * else; the f64 stream everywhere.  The cpu backend's SIMD rows
 * (backends/cpu/rand_simd.h) give these values bit for bit (rand_normal
 * f32: a vector approximation with a proven bound, and this scalar path
 * wherever the bound cannot decide the float; f64: tb_rand_bm64's
 * operations in vector lanes). */
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

/* rand_normal f64's Box-Muller for uniforms u1, u2 in [0, 1), multiples
 * of 2^-53: z[0] = r cos(2 pi u2), z[1] = r sin(2 pi u2), r = sqrt(-2
 * log(1 - u1)).  The stream's definition: every operation rounded once
 * in double, in the order written (never fused: gcc's ISO C mode does
 * not contract, and the pragma tells clang), no branch (selects), so
 * the vector rows (backends/cpu/rand_simd_impl.h) repeat it lane by lane
 * bit for bit.
 * log t, t = 1 - u1 in [2^-53, 1] (exact): t = 2^e m, m in [sqrt(1/2),
 * sqrt(2)), f = (m - 1) / (m + 1), log m = 2 atanh f = 2f + 2f s P(s),
 * s = f^2 <= 0.0295, P Taylor's series of atanh to f^21 (truncation
 * below 2^-57), e ln 2 in two parts (e ln2_hi exact for |e| <= 54).
 * cos and sin: y = 4 u2 (exact), q = y rounded to an integer by adding
 * and subtracting 1.5 2^52, v = y - q in [-1/2, 1/2] (exact), so 2 pi
 * u2 = (pi/2)(q + v) with no rounding in the reduction; sin(pi/2 v) = v
 * (pi/2 + s S(s)) and cos(pi/2 v) = 1 + s C(s), s = v^2, S and C
 * Taylor's (truncation below 2^-56), pi/2 in two parts; q mod 4 (the
 * low bits of y + 1.5 2^52) picks and negates them. */
#define TB_RAND_LN2_HI 0x1.62e42fefa3800p-1
#define TB_RAND_LN2_LO 0x1.ef35793c7673p-45
#define TB_RAND_PIO2_HI 0x1.921fb54442d18p+0
#define TB_RAND_PIO2_LO 0x1.1a62633145c07p-54
/* sin(pi/2 v) / v - pi/2 = s S(s): S's coefficients from s^0 */
#define TB_RAND_SIN_C(X)                                                  \
    X(-0x1.4abbce625be53p-1) X(0x1.466bc6775aae2p-4)                      \
    X(-0x1.32d2cce62bd86p-8) X(0x1.50783487ee782p-13)                     \
    X(-0x1.e3074fde8871fp-19) X(0x1.e8f434d018d63p-25)                    \
    X(-0x1.6fadb9f155744p-31) X(0x1.aaec32af93359p-38)
/* cos(pi/2 v) - 1 = s C(s): C's coefficients from s^0 */
#define TB_RAND_COS_C(X)                                                  \
    X(-0x1.3bd3cc9be45dep+0) X(0x1.03c1f081b5ac4p-2)                      \
    X(-0x1.55d3c7e3cbffap-6) X(0x1.e1f506891babbp-11)                     \
    X(-0x1.a6d1f2a204a8cp-16) X(0x1.f9d38a3763cc3p-22)                    \
    X(-0x1.b6e24f44b128fp-28) X(0x1.20c62c2f2d7f5p-34)                    \
    X(-0x1.2a0c591af8314p-41)
#define TB_RAND_C_ARRAY(c) c,
static const double tb_rand_sin_c[] = {TB_RAND_SIN_C(TB_RAND_C_ARRAY)};
static const double tb_rand_cos_c[] = {TB_RAND_COS_C(TB_RAND_C_ARRAY)};
#undef TB_RAND_C_ARRAY
/* atanh f / f - 1 = s P(s): 1/3, 1/5, ..., 1/21 */
static const double tb_rand_log_c[] = {
    1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9,  1.0 / 11,
    1.0 / 13, 1.0 / 15, 1.0 / 17, 1.0 / 19, 1.0 / 21,
};
#define TB_RAND_NC(c) ((int)(sizeof c / sizeof c[0]))

/* c[0] + c[1] x + ... + c[n - 1] x^(n-1) by Horner's scheme, each
 * product and sum rounded once. */
static inline double tb_rand_poly(const double *c, int n, double x)
{
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
    double p = c[n - 1];
    for (int k = n - 2; k >= 0; k--)
        p = p * x + c[k];
    return p;
}

/* a double's bits and back */
typedef union {
    double d;
    uint64_t u;
} tb_rand_dbits;

static inline void tb_rand_bm64(double u1, double u2, double z[2])
{
#if defined(__clang__) /* gcc's ISO C mode never contracts */
#pragma STDC FP_CONTRACT OFF
#endif
    tb_rand_dbits bits;
    /* r = sqrt(-2 log t), t = 2^e m */
    bits.d = 1.0 - u1;
    const uint64_t tb = bits.u;
    double e = (double)(int64_t)(tb >> 52) - 1023.0;
    bits.u = (tb & UINT64_C(0x000fffffffffffff)) | UINT64_C(0x3ff0000000000000);
    double m = bits.d;
    const int big = m > 0x1.6a09e667f3bcdp+0; /* sqrt(2) */
    m = big ? m * 0.5 : m;
    e = big ? e + 1.0 : e;
    const double f = (m - 1.0) / (m + 1.0), s = f * f;
    const double p = tb_rand_poly(tb_rand_log_c, TB_RAND_NC(tb_rand_log_c), s);
    const double lm = ((f + f) * s) * p + (e * TB_RAND_LN2_LO + (f + f));
    const double r = sqrt((e * TB_RAND_LN2_HI + lm) * -2.0);
    /* cos and sin of 2 pi u2 = pi/2 (q + v) */
    const double y = 4.0 * u2, yb = y + 0x1.8p52;
    const double v = y - (yb - 0x1.8p52), v2 = v * v;
    const double ps = tb_rand_poly(tb_rand_sin_c, TB_RAND_NC(tb_rand_sin_c), v2);
    const double pc = tb_rand_poly(tb_rand_cos_c, TB_RAND_NC(tb_rand_cos_c), v2);
    const double sn = v * TB_RAND_PIO2_HI + v * (v2 * ps + TB_RAND_PIO2_LO);
    const double cs = v2 * pc + 1.0;
    bits.d = yb;
    const uint64_t qi = bits.u & 3, sg = UINT64_C(1) << 63;
    bits.d = qi & 1 ? sn : cs;
    bits.u ^= qi == 1 || qi == 2 ? sg : 0;
    z[0] = r * bits.d;
    bits.d = qi & 1 ? cs : sn;
    bits.u ^= qi >= 2 ? sg : 0;
    z[1] = r * bits.d;
}

/* Box-Muller pair j: z[0] = z(2j) (cos), z[1] = z(2j + 1) (sin), from
 * 53-bit (f64: tb_rand_bm64) or 24-bit (f32: libm) uniforms. */
static inline void tb_rand_normal_pair(uint64_t key, uint64_t j, int f32,
                                       double z[2])
{
    if (!f32) {
        tb_rand_bm64(tb_rand_u53(key, 2 * j), tb_rand_u53(key, 2 * j + 1),
                     z);
        return;
    }
    double u1 = tb_rand_u24(key, 2 * j);
    double u2 = tb_rand_u24(key, 2 * j + 1);
    double r = sqrt(-2.0 * log(1.0 - u1));
    double a = TB_RAND_2PI * u2;
    z[0] = r * cos(a);
    z[1] = r * sin(a);
}

#endif
