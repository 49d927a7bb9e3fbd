/* The chunk loops of the SIMD random rows (rand_simd.h), for inclusion
 * by rand_avx2.c and rand_avx512.c only, each built with its level's
 * flags and -ffp-contract=off.  Everything here is static except the
 * entry points RS_ENTRIES(SFX, LV) defines (rows of kreg.h's creation
 * family) and the test hook tb_cpu_rand_vmath_<SFX>. */
#ifndef TB_BACKENDS_CPU_RAND_SIMD_IMPL_H
#define TB_BACKENDS_CPU_RAND_SIMD_IMPL_H

#include <stdint.h>
#include <string.h>

#include "../../ops/op.h"
#include "../../ops/rand.h"
#include "arange.h"
#include "dvec_simd.h"
#include "kreg.h"
#include "rand_simd.h"
#include "rand_simd_mix.h"

/* ---- the stream: rand.h's tb_rand_mix in every lane (rs_mix:
 * rand_simd_mix.h, shared with dropout's rows) ------------------------ */

/* u24 = (bits >> 40) 2^-24 (from the counter z, bits = mix(z)) and
 * u53 = (bits >> 11) 2^-53, exact.  u24 without a conversion: the 24
 * bits k = bits >> 40, shifted to fraction bits 51..28 under the
 * exponent of 1.0, are the double 1 + k 2^-24 (exact), and subtracting
 * 1 is exact (Sterbenz): one shift, one bitwise select (a single
 * vpternlogq on AVX-512) and one subtraction, where a shift, an integer
 * conversion and a product were (the AVX-512 row's port-0 bound, see
 * rand_simd.h). */
static inline rd rs_u24w(ri z, uint64_t ex)
{
    z = rs_ixor(z, rs_isrl(z, 30));
    z = rs_imulc(z, UINT64_C(0xbf58476d1ce4e5b9));
    z = rs_ixor(z, rs_isrl(z, 27));
    z = rs_imulc(z, UINT64_C(0x94d049bb133111eb));
    /* the final z ^= z >> 31 leaves bits 40..63 alone: left out */
    const ri t = rs_isrl(z, 12), frac = rs_i1(UINT64_C(0xffffff) << 28);
    const ri one = rs_i1(ex);
#if RS_W == 8
    const ri w = _mm512_ternarylogic_epi64(t, frac, one, 0xea); /* t&f|1 */
#else
    const ri w = rs_ior(rs_iand(t, frac), one);
#endif
    return rs_asd(w);
}
/* mix(z) but for its last step, z ^= z >> 31, which leaves bits 33..63
 * alone: enough for u24 */
static inline ri rs_mix31(ri z)
{
    z = rs_ixor(z, rs_isrl(z, 30));
    z = rs_imulc(z, UINT64_C(0xbf58476d1ce4e5b9));
    z = rs_ixor(z, rs_isrl(z, 27));
    return rs_imulc(z, UINT64_C(0x94d049bb133111eb));
}
static inline rd rs_u24(ri z)
{
    return rs_sub(rs_u24w(z, UINT64_C(0x3ff0000000000000)), rs_d1(1.0));
}
static inline rd rs_u53(ri bits)
{
    return rs_mul(rs_cvt53(rs_isrl(bits, 11)), rs_d1(0x1.0p-53));
}

/* ---- the output dtype: f32, or bf16/f16 narrowed in registers --------- */

/* The 16-bit rows of the random ops (rand_simd.h) give the f32 row's
 * floats rounded once to the dtype, as half.c's generic path (the f32
 * row into a scratch, then the level's narrowing) did: bf16 by round to
 * nearest even on the 16 bits dropped, a NaN made quiet (ops/half.h's
 * tb_f32_to_bf16, half_simd.h's integer code); f16 by vcvtps2ph (RNE),
 * as half_simd.h's f16 rows.  Here the floats never leave the
 * registers: each step's float vector is narrowed and stored as 16-bit
 * values. */
/* (RS_KBF16F: bf16 of values known not to be NaN, no quieting) */
enum { RS_KF32 = 0, RS_KBF16 = 1, RS_KF16 = 2, RS_KBF16F = 3 };
#define RS_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#if RS_W == 8
typedef __m512 rs_f2; /* 2 RS_W floats */
typedef __m256 rs_f1; /* RS_W floats */
static inline __m256i rs_bf16_2(rs_f2 v, int nan)
{
    const __m512i x = _mm512_castps_si512(v);
    __m512i r = _mm512_add_epi32(
        _mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)),
        _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1)));
    if (nan)
        r = _mm512_mask_or_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                                 x, _mm512_set1_epi32(0x400000));
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}
static inline void rs_st2(void *o, int64_t i, rs_f2 v, int k)
{
    if (k == RS_KF32)
        _mm512_storeu_ps((float *)o + i, v);
    else
        _mm256_storeu_si256((__m256i *)((uint16_t *)o + i),
                            k == RS_KF16 ? _mm512_cvtps_ph(v, RS_RNE)
                                         : rs_bf16_2(v, k == RS_KBF16));
}
static inline void rs_st1(void *o, int64_t i, rs_f1 v, int k)
{
    if (k == RS_KF32)
        _mm256_storeu_ps((float *)o + i, v);
    else
        _mm_storeu_si128((__m128i *)((uint16_t *)o + i),
                         k == RS_KF16 /* (no F16C flag: VL's form) */
                             ? _mm256_maskz_cvtps_ph(0xff, v, RS_RNE)
                             : _mm256_castsi256_si128(rs_bf16_2(
                                   _mm512_castps256_ps512(v), k == RS_KBF16)));
}
static inline rs_f2 rs_ldf2(const float *p) { return _mm512_loadu_ps(p); }
#else
typedef __m256 rs_f2;
typedef __m128 rs_f1;
static inline __m128i rs_bf16_2(rs_f2 v, int nan)
{
    const __m256i x = _mm256_castps_si256(v);
    __m256i r = _mm256_add_epi32(
        _mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)),
        _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1)));
    const __m256 q = _mm256_castsi256_ps(
        _mm256_or_si256(x, _mm256_set1_epi32(0x400000)));
    if (nan)
        r = _mm256_castps_si256(_mm256_blendv_ps(
            _mm256_castsi256_ps(r), q, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    r = _mm256_srli_epi32(r, 16);
    return _mm_packus_epi32(_mm256_castsi256_si128(r),
                            _mm256_extracti128_si256(r, 1));
}
static inline void rs_st2(void *o, int64_t i, rs_f2 v, int k)
{
    if (k == RS_KF32)
        _mm256_storeu_ps((float *)o + i, v);
    else
        _mm_storeu_si128((__m128i *)((uint16_t *)o + i),
                         k == RS_KF16 ? _mm256_cvtps_ph(v, RS_RNE)
                                      : rs_bf16_2(v, k == RS_KBF16));
}
static inline void rs_st1(void *o, int64_t i, rs_f1 v, int k)
{
    if (k == RS_KF32)
        _mm_storeu_ps((float *)o + i, v);
    else
        _mm_storel_epi64((__m128i *)((uint16_t *)o + i),
                         k == RS_KF16
                             ? _mm_cvtps_ph(v, RS_RNE)
                             : rs_bf16_2(_mm256_castps128_ps256(v),
                                         k == RS_KBF16));
}
static inline rs_f2 rs_ldf2(const float *p) { return _mm256_loadu_ps(p); }
#endif
/* 4 RS_W floats (a, then b) stored at o + i in the output dtype: bf16
 * without NaN (RS_KBF16F) rounded in 32-bit lanes and the upper halves of
 * both vectors packed in order by one permute (AVX-512 vpermt2w; AVX2 a
 * pack and a vpermq); the other kinds as two rs_st2 */
static inline void rs_st4(void *o, int64_t i, rs_f2 a, rs_f2 b, int k)
{
    if (k != RS_KBF16F) {
        rs_st2(o, i, a, k);
        rs_st2(o, i + 2 * RS_W, b, k);
        return;
    }
#if RS_W == 8
    const __m512i one = _mm512_set1_epi32(1), r = _mm512_set1_epi32(0x7fff);
    const __m512i x = _mm512_castps_si512(a), y = _mm512_castps_si512(b);
    const __m512i xa = _mm512_add_epi32(
        _mm512_add_epi32(x, r), _mm512_and_si512(_mm512_srli_epi32(x, 16), one));
    const __m512i ya = _mm512_add_epi32(
        _mm512_add_epi32(y, r), _mm512_and_si512(_mm512_srli_epi32(y, 16), one));
    const __m512i odd = _mm512_set_epi16(
        63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31,
        29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    _mm512_storeu_si512((uint16_t *)o + i,
                        _mm512_permutex2var_epi16(xa, odd, ya));
#else
    const __m256i one = _mm256_set1_epi32(1), r = _mm256_set1_epi32(0x7fff);
    const __m256i x = _mm256_castps_si256(a), y = _mm256_castps_si256(b);
    const __m256i xa = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(x, r),
                         _mm256_and_si256(_mm256_srli_epi32(x, 16), one)),
        16);
    const __m256i ya = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(y, r),
                         _mm256_and_si256(_mm256_srli_epi32(y, 16), one)),
        16);
    _mm256_storeu_si256(
        (__m256i *)((uint16_t *)o + i),
        _mm256_permute4x64_epi64(_mm256_packus_epi32(xa, ya), 0xd8));
#endif
}
/* RS_W doubles rounded to float */
static inline rs_f1 rs_tof(rd a) { return RS_I(cvtpd_ps)(a); }
/* the floats f[0, n), n <= 2 RS_W, stored at o + i in the output dtype
 * (the 16-bit ones by the vector narrowing, so the same bits as the
 * vector steps) */
static inline void rs_stn(void *o, int64_t i, float *f, int n, int k)
{
    if (k == RS_KF32) {
        memcpy((float *)o + i, f, (size_t)n * sizeof *f);
        return;
    }
    uint16_t h[2 * RS_W];
    for (int l = n; l < 2 * RS_W; l++)
        f[l] = 0.0f;
    rs_st2(h, 0, rs_ldf2(f), k);
    memcpy((uint16_t *)o + i, h, (size_t)n * sizeof *h);
}

/* ---- rand_uniform ------------------------------------------------------- */

/* rs_uniform_k's step at low 0 (its comment says why it is exact): the
 * floats hi u of the 2 RS_W elements of the counters x (the first RS_W)
 * and y (the next), h from rs_uni24_h(hi).  AVX-512: the top dwords of
 * the two vectors of mixes in one (vpermt2d), the 24 bits k kept in
 * place (an and, which any vector pipe runs, where a shift runs on two
 * of Zen 4's four), k 2^8 converted exactly (vcvtudq2ps) and multiplied
 * by h = hi 2^-32 (exact: hi >= 2^-94): the exact k hi 2^-24 rounded
 * once.  AVX2 (no unsigned conversion): k by a shift, h = hi 2^-24. */
#if RS_W == 8
static inline rs_f2 rs_uni24_h(double hi)
{
    return _mm512_set1_ps((float)hi * 0x1.0p-32f);
}
static inline rs_f2 rs_uni24(ri x, ri y, rs_f2 h)
{
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15,
                                         13, 11, 9, 7, 5, 3, 1);
    __m512i k = _mm512_permutex2var_epi32(rs_mix31(x), odd, rs_mix31(y));
    k = _mm512_and_si512(k, _mm512_set1_epi32((int)0xffffff00u));
    return _mm512_mul_ps(_mm512_cvtepu32_ps(k), h);
}
#else
static inline rs_f2 rs_uni24_h(double hi)
{
    return _mm256_set1_ps((float)hi * 0x1.0p-24f);
}
static inline rs_f2 rs_uni24(ri x, ri y, rs_f2 h)
{
    /* the odd dwords, per 128-bit half: x1 x3 y1 y3 | x5 x7 y5 y7; then
     * the middle quadwords swapped */
    __m256 q = _mm256_shuffle_ps(_mm256_castsi256_ps(rs_mix31(x)),
                                 _mm256_castsi256_ps(rs_mix31(y)), 0xdd);
    __m256i k = _mm256_permute4x64_epi64(_mm256_castps_si256(q), 0xd8);
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(k, 8)), h);
}
#endif

/* As create.c's cr_uniform_f32: (float)(lo + (hi - lo) u24), in double,
 * the product and the sum rounded separately. */
static inline void rs_uniform_k(void *o, int64_t b, int64_t e, uint64_t key,
                                double lo, double hi, int kd)
{
    const double d = hi - lo;
    const rd vlo = rs_d1(lo), vd = rs_d1(d);
    const ri step = rs_i1((uint64_t)RS_W * TB_RAND_GAMMA);
    int64_t i = b;
    /* low = 0 (either sign) and 2^-94 <= high <= FLT_MAX (the default
     * case, low 0 and high 1, among them): the stream's value is
     * (float)(0 + hi u) with hi u exact in double (24-bit hi times 24-bit
     * u, far from the double's range ends) and 0 + hi u = hi u (it is
     * >= +0), so one rounding of the exact product hi u.  In float,
     * with h = hi 2^-24 (exact: hi 2^-24 >= 2^-126 is normal) and the
     * integer k = bits >> 40 (u = k 2^-24), the product k h is the exact
     * hi u rounded once: the same float, bit for bit.  So 2 RS_W
     * elements per iteration (rs_uni24: AVX-512 takes k 2^8 and
     * h 2^-8, also exact, for hi >= 2^-94), in float lanes; the 16-bit
     * rows narrow those floats (rs_st2). */
    if (lo == 0 && hi >= 0x1.0p-94 && hi <= 0x1.fffffep127 &&
        e - b >= 2 * RS_W) {
        const ri step2 = rs_i1((uint64_t)(2 * RS_W) * TB_RAND_GAMMA);
        ri x = rs_ctr(key, (uint64_t)b, 1);
        ri y = rs_iadd(x, step);
        const rs_f2 h = rs_uni24_h(hi);
        /* (bf16: the values are finite and not NaN, no quieting) */
        const int kf = kd == RS_KBF16 ? RS_KBF16F : kd;
        if (kf == RS_KBF16F) /* 4 RS_W a step: one pack for two */
            for (; i + 4 * RS_W <= e; i += 4 * RS_W) {
                const rs_f2 f0 = rs_uni24(x, y, h);
                x = rs_iadd(x, step2);
                y = rs_iadd(y, step2);
                rs_st4(o, i, f0, rs_uni24(x, y, h), kf);
                x = rs_iadd(x, step2);
                y = rs_iadd(y, step2);
            }
        for (; i + 2 * RS_W <= e; i += 2 * RS_W) {
            rs_st2(o, i, rs_uni24(x, y, h), kf);
            x = rs_iadd(x, step2);
            y = rs_iadd(y, step2);
        }
    }
    if (e - i >= RS_W) {
        ri x = rs_ctr(key, (uint64_t)i, 1);
        for (; i + RS_W <= e; i += RS_W) {
            rd u = rs_u24(x);
            rs_st1(o, i, rs_tof(rs_add(vlo, rs_mul(vd, u))), kd);
            x = rs_iadd(x, step);
        }
    }
    if (i < e) { /* fewer than RS_W */
        float f[2 * RS_W];
        for (int64_t l = i; l < e; l++) {
            double u = (double)(tb_rand_bits(key, (uint64_t)l) >> 40) *
                       0x1.0p-24;
            f[l - i] = (float)(lo + d * u);
        }
        rs_stn(o, i, f, (int)(e - i), kd);
    }
}
#define RS_KROW(NAME, FN, KD)                                             \
    static void NAME(void *op, int64_t b, int64_t e, uint64_t key,        \
                     double a, double b2)                                 \
    {                                                                     \
        FN(op, b, e, key, a, b2, KD);                                     \
    }
RS_KROW(rs_uniform_f32, rs_uniform_k, RS_KF32)
RS_KROW(rs_uniform_bf16, rs_uniform_k, RS_KBF16)
RS_KROW(rs_uniform_f16, rs_uniform_k, RS_KF16)



static void rs_uniform_f64(void *op, int64_t b, int64_t e, uint64_t key,
                           double low, double high)
{
    double *o = op;
    const double d = high - low;
    const rd vlo = rs_d1(low), vd = rs_d1(d);
    const ri step = rs_i1((uint64_t)RS_W * TB_RAND_GAMMA);
    int64_t i = b;
    if (e - b >= RS_W) {
        ri x = rs_ctr(key, (uint64_t)b, 1);
        /* low = 0 (either sign) and 2^-969 <= d = high - low < inf (the
         * default case among them): the stream's value is 0 + d u with
         * d u = d k 2^-53 rounded once (k = bits >> 11) and 0 + that
         * the same (>= +0); d 2^-53 is exact (a normal double) and
         * (d 2^-53) k is that exact product rounded once: the same bits
         * with one product where there were two and a sum */
        if (low == 0 && d >= 0x1.0p-969 && d <= 0x1.fffffffffffffp1023) {
            const rd vh = rs_d1(d * 0x1.0p-53);
            for (; i + RS_W <= e; i += RS_W) {
                rs_stored(o + i,
                          rs_mul(rs_cvt53(rs_isrl(rs_mix(x), 11)), vh));
                x = rs_iadd(x, step);
            }
        }
        for (; i + RS_W <= e; i += RS_W) {
            rd u = rs_u53(rs_mix(x));
            rs_stored(o + i, rs_add(vlo, rs_mul(vd, u)));
            x = rs_iadd(x, step);
        }
    }
    for (; i < e; i++) {
        double u = (double)(tb_rand_bits(key, (uint64_t)i) >> 11) * 0x1.0p-53;
        o[i] = low + d * u;
    }
}

/* ---- arange ------------------------------------------------------------- */

/* f32 in arange.h's exact case: every value a float, computed in float
 * by one exact addition per vector (four chains of 2 RS_W floats, each
 * advanced by 8 RS_W step: the addition's latency), from b up to the
 * last whole step; returns where the caller's loops go on.  (The double
 * loop below took 154 us for 1M values, 3.5x the stores' time: its
 * conversions.) */
static inline int64_t rs_arange_exact(float *o, int64_t b, int64_t e,
                                      double start, double step)
{
#if RS_W == 8
#define RS_FV __m512
#define RS_FS(op) _mm512_##op##_ps
#else
#define RS_FV __m256
#define RS_FS(op) _mm256_##op##_ps
#endif
    enum { L = 2 * RS_W, W = 8 * RS_W };
    float v0[W];
    for (int l = 0; l < W; l++)
        v0[l] = (float)(start + (double)(b + l) * step);
    RS_FV c0 = RS_FS(loadu)(v0), c1 = RS_FS(loadu)(v0 + L);
    RS_FV c2 = RS_FS(loadu)(v0 + 2 * L), c3 = RS_FS(loadu)(v0 + 3 * L);
    const RS_FV inc = RS_FS(set1)((float)((double)W * step));
    int64_t i = b;
    for (; i + W <= e; i += W) {
        RS_FS(storeu)(o + i, c0);
        RS_FS(storeu)(o + i + L, c1);
        RS_FS(storeu)(o + i + 2 * L, c2);
        RS_FS(storeu)(o + i + 3 * L, c3);
        c0 = RS_FS(add)(c0, inc);
        c1 = RS_FS(add)(c1, inc);
        c2 = RS_FS(add)(c2, inc);
        c3 = RS_FS(add)(c3, inc);
    }
#undef RS_FV
#undef RS_FS
    return i;
}

/* As create.c's cr_arange: (T)(start + (double)i * step), the product
 * and the sum rounded separately; i as a double is exact (i < 2^53).
 * f32: each double rounded to float once. */
static inline void rs_arange(void *op, int f32, int64_t b, int64_t e,
                             double start, double step)
{
    const rd vs = rs_d1(start), vst = rs_d1(step), w = rs_d1(RS_W);
    int64_t i = b;
    if (f32 && e - b >= 8 * RS_W && tb_cpu_arange_exact(start, step, e))
        i = rs_arange_exact((float *)op, b, e, start, step);
    if (e - i >= RS_W) {
        double k0[RS_W];
        for (int l = 0; l < RS_W; l++)
            k0[l] = (double)(i + l);
        rd k = rs_loadd(k0);
        for (; i + RS_W <= e; i += RS_W) {
            rd v = rs_add(vs, rs_mul(k, vst));
            if (f32)
                rs_storef((float *)op + i, v);
            else
                rs_stored((double *)op + i, v);
            k = rs_add(k, w);
        }
    }
    for (; i < e; i++) {
        double v = start + (double)i * step;
        if (f32)
            ((float *)op)[i] = (float)v;
        else
            ((double *)op)[i] = v;
    }
}

static void rs_arange_f32(void *op, int64_t b, int64_t e, uint64_t key,
                          double start, double step)
{
    (void)key;
    rs_arange(op, 1, b, e, start, step);
}

static void rs_arange_f64(void *op, int64_t b, int64_t e, uint64_t key,
                          double start, double step)
{
    (void)key;
    rs_arange(op, 0, b, e, start, step);
}

/* ---- rand_normal f32 ---------------------------------------------------- */

/* a b - c, one rounding */
static inline rd rs_fms(rd a, rd b, rd c)
{
#if RS_W == 8
    return _mm512_fmsub_pd(a, b, c);
#else
    return _mm256_fmsub_pd(a, b, c);
#endif
}

/* -2 log t for t in [2^-24, 1] (any positive normal t), without a
 * division: rs_log_reduce (dvec_simd.h) gives t = 2^e z, the interval i
 * of its 16 and r = z c_i - 1 (c_i exactly 1 for the interval
 * [0.98828125, 1.0390625) around 1); rs_l2c holds 2 log c_i (correctly
 * rounded), so
 *   -2 log t = -2 e log 2 + 2 log c_i - 2 log(1 + r),  r = z c_i - 1,
 * r by one fused rounding (z has at most 24 significant bits, so z c_i is
 * exact before it), |r| <= 0x1.4p-5.  -2 log(1 + r) by its Taylor
 * series to r^10 (the first term left out, 2 r^11 / 11, is below
 * 2^-50.3 of 2 |r|), split into odd and even parts in s = r^2 so the two
 * Horner chains run side by side.  For t in the interval around 1, e = 0
 * and c_i = 1: the result is the series alone, a few 2^-53 relative;
 * elsewhere |-2 log t| >= 0.0236 and the terms' roundings (table entry,
 * e log 2, the fused sums) stay within about 2^-51 of the result.  The
 * test's exhaustive check (rand_vmath): within 2^-49 of -2 log t by libm
 * on every t = 1 - k 2^-24. */
static const double rs_l2c[16] = {
    0x1.4c9e09e172c3dp-1,  0x1.214456d0eb8d5p-1,  0x1.ef5ade4dcffe5p-2,
    0x1.9f6c407089663p-2,  0x1.527e5e4a1b58dp-2,  0x1.08598b59e3a07p-2,
    0x1.8197e2f40e3f0p-3,  0x1.eea31c006b87cp-4,  0x1.c63d2ec14aad7p-5,
    0.0,                   -0x1.16536eea37ae3p-3, -0x1.fec9131dbeabcp-3,
    -0x1.6d60fe719d21bp-2, -0x1.d5c216b4fbb94p-2, -0x1.1c898c16999fbp-1,
    -0x1.4be5f957778a1p-1,
};
static inline rd rs_nlog2(rd t)
{
    rd e, r;
    ri i;
    rs_log_reduce(t, &e, &r, &i);
    rd s = rs_mul(r, r);
    rd po = rs_fma(rs_d1(-2.0 / 9), s, rs_d1(-2.0 / 7));
    po = rs_fma(po, s, rs_d1(-2.0 / 5));
    po = rs_fma(po, s, rs_d1(-2.0 / 3));
    po = rs_fma(po, s, rs_d1(-2.0));
    rd pe = rs_fma(rs_d1(1.0 / 5), s, rs_d1(1.0 / 4));
    pe = rs_fma(pe, s, rs_d1(1.0 / 3));
    pe = rs_fma(pe, s, rs_d1(1.0 / 2));
    pe = rs_fma(pe, s, rs_d1(1.0));
    rd base = rs_fma(e, rs_d1(-0x1.62e42fefa39efp+0), /* -2 log 2 */
                     rs_lut16(rs_l2c, i));
    return rs_fma(r, po, rs_fma(s, pe, base));
}

/* sqrt x for x in [0, 34] (0 exactly to 0): vsqrtpd, correctly rounded
 * (within 2^-53 of the exact root, well inside the test's 2^-50 of
 * libm's sqrt of libm's -2 log t).  AVX-512 took rsqrt14 and a
 * correction polynomial (6 FMA-pipe operations, no divider) until
 * 2026-11-30: on Zen 4 the divider's 16 cycles a zmm (scripts/
 * divsqrt_tp.c) run beside the loop's ~55 cycles of FP-pipe work, and
 * the loop in L1 went 4.12 -> 3.72 cycles an element (mix_tp_rows.py,
 * kb_rand_normal_f32). */
static inline rd rs_root(rd x) { return rs_sqrt(x); }

/* cos and sin of 2 pi u, from d = 16 + 16 u (u = k 2^-24, so d is exact
 * in [16, 32)): n = round(d) (by the sum with 1.5 2^52, whose low four
 * bits are n mod 16), w = d - n exact in [-1/2, 1/2], the angle
 * 2 pi u = n pi/8 + w pi/8 (mod 2 pi), so with C = cos(n pi/8) and
 * S = sin(n pi/8) (rs_cos16, rs_sin16: rounded to double, 0 and +-1
 * exact) and x = w pi/8, |x| <= pi/16:
 *   cos = C cos x - S sin x,  sin = S cos x + C sin x,
 * sin x and cos x - 1 by their Taylor series in w (coefficients
 * (pi/8)^k / k! rounded) to x^9 and x^10 (the first terms left out,
 * (pi/16)^11/11! and (pi/16)^12/12!, are below 2^-51 and 2^-57).  The
 * stream's angle is a = TB_RAND_2PI u rounded, within 2^-51 of 2 pi u, so
 * these are within a few 2^-53 + 2^-51 of cos a and sin a.  The test's
 * exhaustive check (rand_vmath): within 2^-49 of libm's cos a and sin a
 * for every u = k 2^-24.  One reduction, no division, no quadrant
 * selects. */
static const double rs_cos16[16] = {
    1.0,                   0x1.d906bcf328d46p-1,  0x1.6a09e667f3bcdp-1,
    0x1.87de2a6aea963p-2,  0.0,                   -0x1.87de2a6aea963p-2,
    -0x1.6a09e667f3bcdp-1, -0x1.d906bcf328d46p-1, -1.0,
    -0x1.d906bcf328d46p-1, -0x1.6a09e667f3bcdp-1, -0x1.87de2a6aea963p-2,
    0.0,                   0x1.87de2a6aea963p-2,  0x1.6a09e667f3bcdp-1,
    0x1.d906bcf328d46p-1,
};
static const double rs_sin16[16] = {
    0.0,                   0x1.87de2a6aea963p-2,  0x1.6a09e667f3bcdp-1,
    0x1.d906bcf328d46p-1,  1.0,                   0x1.d906bcf328d46p-1,
    0x1.6a09e667f3bcdp-1,  0x1.87de2a6aea963p-2,  0.0,
    -0x1.87de2a6aea963p-2, -0x1.6a09e667f3bcdp-1, -0x1.d906bcf328d46p-1,
    -1.0,                  -0x1.d906bcf328d46p-1, -0x1.6a09e667f3bcdp-1,
    -0x1.87de2a6aea963p-2,
};
static inline void rs_sincos16(rd d, rd *co, rd *si)
{
    const rd M = rs_d1(0x1.8p52);
    rd nm = rs_add(d, M);
    rd w = rs_sub(d, rs_sub(nm, M));
    rd w2 = rs_mul(w, w);
    rd ps = rs_fma(rs_d1(0x1.50783487ee782p-31), w2,
                   rs_d1(-0x1.32d2cce62bd86p-22));
    ps = rs_fma(ps, w2, rs_d1(0x1.466bc6775aae2p-14));
    ps = rs_fma(ps, w2, rs_d1(-0x1.4abbce625be53p-7));
    ps = rs_fma(ps, w2, rs_d1(0x1.921fb54442d18p-2));
    rd sx = rs_mul(w, ps);
    rd pc = rs_fma(rs_d1(-0x1.a6d1f2a204a8cp-36), w2,
                   rs_d1(0x1.e1f506891babbp-27));
    pc = rs_fma(pc, w2, rs_d1(-0x1.55d3c7e3cbffap-18));
    pc = rs_fma(pc, w2, rs_d1(0x1.03c1f081b5ac4p-10));
    pc = rs_fma(pc, w2, rs_d1(-0x1.3bd3cc9be45dep-4));
    rd cx = rs_fma(w2, pc, rs_d1(1.0));
    ri n = rs_asi(nm);
    rd C = rs_lut16(rs_cos16, n), S = rs_lut16(rs_sin16, n);
    *co = rs_fms(C, cx, rs_mul(S, sx));
    *si = rs_fma(S, cx, rs_mul(C, sx));
}

/* The decision of rand_simd.h's bound, by the rounding of the interval's
 * ends, for the pairs (a[l], b[l]) with error bounds ea[l], eb[l]: with
 * lo = (float)(v - err) and hi = (float)(v + err) (each end computed in
 * double), rounding to float is monotonic, so when lo and hi are the same
 * float every double in between rounds to it, the scalar kernel's D
 * included (err exceeds |V - D| by far more than the two end
 * computations' roundings, 2^-53 (|v| + err) <= 2^-9 err, since
 * err >= 2^-44 |v|).  A lane is accepted when lo and hi are equal both as
 * floats (false for NaN) and bit for bit (false for -0 against +0, whose
 * interval holds doubles of both signs).  The lo floats are stored
 * interleaved, p[2l] = lo of a[l], p[2l + 1] = lo of b[l] (one permute and
 * one store on AVX-512), and the compares run on the interleaved
 * vectors.  Returns the accepted elements' bits (bit 2l: a[l], bit
 * 2l + 1: b[l]). */
#if RS_W == 8
static inline unsigned rs_put2v(rs_f2 *f, rd a, rd ea, rd b, rd eb)
{
    const __m512i ix = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3,
                                        18, 2, 17, 1, 16, 0);
    __m512 lo = _mm512_permutex2var_ps(
        _mm512_castps256_ps512(_mm512_cvtpd_ps(rs_sub(a, ea))), ix,
        _mm512_castps256_ps512(_mm512_cvtpd_ps(rs_sub(b, eb))));
    __m512 hi = _mm512_permutex2var_ps(
        _mm512_castps256_ps512(_mm512_cvtpd_ps(rs_add(a, ea))), ix,
        _mm512_castps256_ps512(_mm512_cvtpd_ps(rs_add(b, eb))));
    *f = lo;
    __mmask16 k = _mm512_cmp_ps_mask(lo, hi, _CMP_EQ_OQ);
    return (unsigned)_mm512_mask_cmpeq_epi32_mask(k, _mm512_castps_si512(lo),
                                                  _mm512_castps_si512(hi));
}
#else
static inline __m256 rs_ilv(rd a, rd b)
{
    __m128 x = _mm256_cvtpd_ps(a), y = _mm256_cvtpd_ps(b);
    return _mm256_set_m128(_mm_unpackhi_ps(x, y), _mm_unpacklo_ps(x, y));
}
static inline unsigned rs_put2v(rs_f2 *f, rd a, rd ea, rd b, rd eb)
{
    __m256 lo = rs_ilv(rs_sub(a, ea), rs_sub(b, eb));
    __m256 hi = rs_ilv(rs_add(a, ea), rs_add(b, eb));
    *f = lo;
    __m256 eq = _mm256_cmp_ps(lo, hi, _CMP_EQ_OQ);
    __m256i ib = _mm256_cmpeq_epi32(_mm256_castps_si256(lo),
                                    _mm256_castps_si256(hi));
    return (unsigned)_mm256_movemask_ps(
        _mm256_and_ps(eq, _mm256_castsi256_ps(ib)));
}
#endif

/* rs_put2v's floats stored at p */
static inline unsigned rs_put2(float *p, rd a, rd ea, rd b, rd eb)
{
    rs_f2 f;
    const unsigned k = rs_put2v(&f, a, ea, b, eb);
    rs_st2(p, 0, f, RS_KF32);
    return k;
}

/* The scalar pair j (rand.h): elements 2j and 2j + 1 (if < e) at p[0]
 * and p[1]. */
static void rs_normal_pair_f32(float *p, int64_t j, int64_t e, uint64_t key,
                               double mean, double sd)
{
    double z[2];
    tb_rand_normal_pair(key, (uint64_t)j, 1, z);
    p[0] = (float)(mean + sd * z[0]);
    if (2 * j + 1 < e)
        p[1] = (float)(mean + sd * z[1]);
}

/* The pair's uniforms as doubles straight from the bits (rs_u24): for
 * u1, 1 + u1 (so t = 1 - u1 = 2 - (1 + u1), exact); for u2, 16 + 16 u2
 * (the same 24 bits under the exponent of 16), rs_sincos16's input. */
#define RS_EXP1 UINT64_C(0x3ff0000000000000)
#define RS_EXP16 UINT64_C(0x4030000000000000)

/* One block in three stages: A, the pair's uniforms from the counters x
 * (elements 2j + 2l) and x + g (2j + 2l + 1), l < RS_W; B, -2 log t and
 * cos, sin; C, r, the values, the decision and the store at p
 * (rs_put2's bits). */
typedef struct rs_nst {
    rd t, d;     /* after A */
    rd l, c, s;  /* after B */
    rd r;        /* after R */
} rs_nst;
static inline void rs_normal_a(rs_nst *st, ri x, ri g)
{
    st->t = rs_sub(rs_d1(2.0), rs_u24w(x, RS_EXP1));
    st->d = rs_u24w(rs_iadd(x, g), RS_EXP16);
}
static inline void rs_normal_b(rs_nst *st)
{
    st->l = rs_nlog2(st->t);
    rs_sincos16(st->d, &st->c, &st->s);
}
static inline void rs_normal_r(rs_nst *st, rd vs)
{
    st->r = rs_mul(vs, rs_root(st->l));
}
static inline unsigned rs_normal_c(void *o, int64_t i, const rs_nst *st,
                                   rd vm, rd k2, rd em, int kd)
{
    rd r = st->r;
    rd vc = rs_fma(r, st->c, vm), vsn = rs_fma(r, st->s, vm);
    rd err = rs_fma(rs_abs(r), k2, em);
    rs_f2 f;
    const unsigned k = rs_put2v(&f, vc, err, vsn, err);
    rs_st2(o, i, f, kd);
    return k;
}

/* [b, e), b even.  mean, sd: the case's values rounded to float.
 * (Inlined into each row: kd a constant; gcc shared one copy between
 * bf16 and f16 with kd a run-time value once the file grew.)
 * V = m + (s r) c (and with sin), fused; the error bound
 * err = 2^-43 |s r| + 2^-44 |m| >= 2^-44 (|s| r + |V|) (rand_simd.h).
 * The loop is software-pipelined: block k's stage C, block k + 1's B and
 * block k + 2's A in one iteration, so each stage's inputs are ready when
 * it issues and the long chain of a block (two 15-cycle products, the
 * polynomials, the root, the conversions: ~140 cycles) does not fill the
 * scheduler (the stages past the end compute but store nothing). */
static inline __attribute__((always_inline)) void
rs_normal_k(void *o, int64_t b, int64_t e, uint64_t key,
            double mean, double sd, int kd)
{
    int64_t j = b / 2;
    const int64_t jn = e / 2; /* whole pairs end */
    if (jn - j >= RS_W) {
        const rd vm = rs_d1(mean), vs = rs_d1(sd);
        const rd em = rs_d1((mean < 0 ? -mean : mean) * 0x1.0p-44);
        const rd k2 = rs_d1(0x1.0p-43);
        const ri step = rs_i1((uint64_t)(2 * RS_W) * TB_RAND_GAMMA);
        const ri g = rs_i1(TB_RAND_GAMMA);
        const unsigned all = (1u << 2 * RS_W) - 1;
        /* bf16 without the NaN quieting: an accepted float is never NaN
         * (its interval's ends compared equal) and the refused pairs'
         * sub-blocks are stored again below, by kd */
        const int kf = kd == RS_KBF16 ? RS_KBF16F : kd;
        ri x = rs_ctr(key, (uint64_t)(2 * j), 2); /* elements 2j */
        ri xa = x;                                /* stage A's block */
        rs_nst s0, s1, s2; /* the blocks of stages C, R and B */
        rs_normal_a(&s0, xa, g);
        xa = rs_iadd(xa, step);
        rs_normal_b(&s0);
        rs_normal_r(&s0, vs);
        rs_normal_a(&s1, xa, g);
        xa = rs_iadd(xa, step);
        rs_normal_b(&s1);
        rs_normal_a(&s2, xa, g);
        xa = rs_iadd(xa, step);
        while (j + RS_W <= jn) {
            /* RS_NB blocks without a call (whose clobbers would cost the
             * loop its constants in registers), the refusals and'ed; if
             * any, those blocks again with the scalar code for the
             * refused pairs (about one sub-block in 400) */
            enum { RS_NB = 16 };
            const int64_t j0 = j;
            const ri x0 = x;
            const int64_t je = jn - j >= RS_NB * RS_W ? j + RS_NB * RS_W : jn;
            unsigned acc = all;
            for (; j + RS_W <= je; j += RS_W) {
                acc &= rs_normal_c(o, 2 * j, &s0, vm, k2, em, kf);
                s0.l = s1.l;
                rs_normal_r(&s0, vs);
                s0.c = s1.c;
                s0.s = s1.s;
                s1.t = s2.t;
                s1.d = s2.d;
                rs_normal_b(&s1);
                rs_normal_a(&s2, xa, g);
                xa = rs_iadd(xa, step);
                x = rs_iadd(x, step);
            }
            if (acc != all) {
                ri y = x0;
                for (int64_t q = j0; q < j; q += RS_W) {
                    rs_nst sq;
                    float f[2 * RS_W];
                    rs_normal_a(&sq, y, g);
                    rs_normal_b(&sq);
                    rs_normal_r(&sq, vs);
                    unsigned ok = rs_normal_c(f, 0, &sq, vm, k2, em, RS_KF32);
                    y = rs_iadd(y, step);
                    if ((ok & all) == all)
                        continue;
                    for (int l = 0; l < RS_W; l++)
                        if ((ok >> 2 * l & 3) != 3)
                            rs_normal_pair_f32(f + 2 * l, q + l, e, key,
                                               mean, sd);
                    rs_stn(o, 2 * q, f, 2 * RS_W, kd);
                }
            }
        }
    }
    if (2 * j < e) { /* fewer than RS_W pairs */
        float f[2 * RS_W];
        for (int64_t q = j; 2 * q < e; q++)
            rs_normal_pair_f32(f + 2 * (q - j), q, e, key, mean, sd);
        rs_stn(o, 2 * j, f, (int)(e - 2 * j), kd);
    }
}
RS_KROW(rs_normal_f32, rs_normal_k, RS_KF32)
RS_KROW(rs_normal_bf16, rs_normal_k, RS_KBF16)
RS_KROW(rs_normal_f16, rs_normal_k, RS_KF16)

/* ---- rand_normal f64 ---------------------------------------------------- */

/* rand.h's tb_rand_bm64 in RS_W lanes of nv vectors at once (nv <=
 * RS_IL), operation for operation (this file is built without
 * contraction; the selects and sign flips are exact), so its values bit
 * for bit.  Each step is done for all nv vectors before the next: the
 * chain of one vector (a division, three Horner polynomials of unfused
 * products and sums, a square root: ~150 cycles) is too long for the
 * out-of-order window to overlap the next vector's, so nv chains
 * advance side by side (AVX2, nv 1 -> 4: 8.1 -> see rand_simd.h). */
enum { RS_IL = 4 };
static inline ri rs_isubq(ri a, ri b) { return RS_I(sub_epi64)(a, b); }
#define RS_J _Pragma("GCC unroll 4") for (int j = 0; j < nv; j++)

static inline void rs_poly_n(const double *c, int n, const rd *x, rd *p,
                             int nv)
{
    RS_J p[j] = rs_d1(c[n - 1]);
#pragma GCC unroll 16
    for (int k = n - 2; k >= 0; k--) {
        const rd ck = rs_d1(c[k]);
        RS_J p[j] = rs_add(rs_mul(p[j], x[j]), ck);
    }
}

/* From the uniforms' integers k1, k2 (u = k 2^-53, k = bits >> 11):
 * t 2^53 = 2^53 - k1 in [1, 2^53] and 4 u2 = k2 2^-51, both exact, so
 * t's exponent and significand come from the bits of the integer's
 * conversion (its exponent 53 more: e = its field - 1076) and y from one
 * product, where u1, 1 - u1, u2 and 4 u2 took three products and a
 * subtraction; and m/2, e + 1 for m > sqrt(2) by integer operations on
 * the fields (exact: m is normal, e an integer).  The same bits as
 * rand.h's operations (all of these are exact there too). */
static inline void rs_bm64_n(const ri *k1, const ri *k2, rd *z0, rd *z1,
                             int nv)
{
    const rd one = rs_d1(1.0);
    rd e[RS_IL], f[RS_IL], s[RS_IL], p[RS_IL], r[RS_IL];
    RS_J {
        const ri tb =
            rs_asi(rs_cvt53(rs_isubq(rs_i1(UINT64_C(1) << 53), k1[j])));
        ri ei = rs_isrl(tb, 52);
        ri mb = rs_ior(rs_iand(tb, rs_i1(UINT64_C(0x000fffffffffffff))),
                       rs_i1(UINT64_C(0x3ff0000000000000)));
        const rmask big = rs_gt(rs_asd(mb), rs_d1(0x1.6a09e667f3bcdp+0));
#if RS_W == 8
        mb = _mm512_mask_sub_epi64(mb, big, mb, rs_i1(UINT64_C(1) << 52));
        ei = _mm512_mask_add_epi64(ei, big, ei, rs_i1(1));
#else /* big's lanes all ones: -1 as an integer */
        mb = rs_isubq(mb, rs_iand(rs_asi(big), rs_i1(UINT64_C(1) << 52)));
        ei = rs_isubq(ei, rs_asi(big));
#endif
        e[j] = rs_sub(rs_cvt52(ei), rs_d1(1076.0));
        const rd m = rs_asd(mb);
        f[j] = rs_div(rs_sub(m, one), rs_add(m, one));
        s[j] = rs_mul(f[j], f[j]);
    }
    rs_poly_n(tb_rand_log_c, TB_RAND_NC(tb_rand_log_c), s, p, nv);
    RS_J {
        const rd f2 = rs_add(f[j], f[j]);
        const rd a = rs_add(rs_mul(e[j], rs_d1(TB_RAND_LN2_LO)), f2);
        const rd lm = rs_add(rs_mul(rs_mul(f2, s[j]), p[j]), a);
        const rd l = rs_add(rs_mul(e[j], rs_d1(TB_RAND_LN2_HI)), lm);
        r[j] = rs_sqrt(rs_mul(l, rs_d1(-2.0)));
    }
    /* ps, pc: zeroed for gcc 12 -O2, which cannot see rs_poly_n fill
     * the first nv of them (-Wmaybe-uninitialized) */
    rd yb[RS_IL], v[RS_IL], v2[RS_IL], ps[RS_IL] = {0}, pc[RS_IL] = {0};
    RS_J {
        const rd y = rs_mul(rs_cvt53(k2[j]), rs_d1(0x1.0p-51));
        yb[j] = rs_add(y, rs_d1(0x1.8p52));
        v[j] = rs_sub(y, rs_sub(yb[j], rs_d1(0x1.8p52)));
        v2[j] = rs_mul(v[j], v[j]);
    }
    rs_poly_n(tb_rand_sin_c, TB_RAND_NC(tb_rand_sin_c), v2, ps, nv);
    rs_poly_n(tb_rand_cos_c, TB_RAND_NC(tb_rand_cos_c), v2, pc, nv);
    RS_J {
        const rd w1 = rs_add(rs_mul(v2[j], ps[j]), rs_d1(TB_RAND_PIO2_LO));
        const rd sn = rs_add(rs_mul(v[j], rs_d1(TB_RAND_PIO2_HI)),
                             rs_mul(v[j], w1));
        const rd cs = rs_add(rs_mul(v2[j], pc[j]), one);
        /* q mod 4 = qi: odd swaps cos and sin; cos negated for qi 1 and
         * 2 (bit 1 of qi + 1), sin for 2 and 3 (bit 1 of qi) */
        const ri qi = rs_iand(rs_asi(yb[j]), rs_i1(3));
        const rmask odd = rs_odd(qi);
        const rd nc =
            rs_asd(rs_isll(rs_iand(rs_iadd(qi, rs_i1(1)), rs_i1(2)), 62));
        const rd ns = rs_asd(rs_isll(rs_iand(qi, rs_i1(2)), 62));
        z0[j] = rs_mul(r[j], rs_dxor(rs_sel(odd, sn, cs), nc));
        z1[j] = rs_mul(r[j], rs_dxor(rs_sel(odd, cs, sn), ns));
    }
}

/* p[2l] = a[l], p[2l + 1] = b[l], l < RS_W */
static inline void rs_store2(double *p, rd a, rd b)
{
#if RS_W == 8 /* one two-source permute a vector */
    _mm512_storeu_pd(p, _mm512_permutex2var_pd(
                            a, _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), b));
    _mm512_storeu_pd(p + 8, _mm512_permutex2var_pd(
                                a, _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4),
                                b));
#else
    const __m256d lo = _mm256_unpacklo_pd(a, b), hi = _mm256_unpackhi_pd(a, b);
    _mm256_storeu_pd(p, _mm256_permute2f128_pd(lo, hi, 0x20));
    _mm256_storeu_pd(p + 4, _mm256_permute2f128_pd(lo, hi, 0x31));
#endif
}

/* nv vectors of pairs from the counters x1 (u1: the even elements) and
 * x2 (u2: the odd ones), mean + sd z each rounded as create.c's loop,
 * stored interleaved at o; the counters advanced.  unit (a constant):
 * sd is 1, so sd z = z exactly and the product is left out. */
static inline void rs_normal64_step(double *o, ri *x1, ri *x2, rd vm, rd vs,
                                    int nv, int unit)
{
    const ri step = rs_i1((uint64_t)(2 * RS_W) * TB_RAND_GAMMA);
    ri k1[RS_IL], k2[RS_IL];
    rd z0[RS_IL], z1[RS_IL];
    RS_J {
        k1[j] = rs_isrl(rs_mix(*x1), 11);
        k2[j] = rs_isrl(rs_mix(*x2), 11);
        *x1 = rs_iadd(*x1, step);
        *x2 = rs_iadd(*x2, step);
    }
    rs_bm64_n(k1, k2, z0, z1, nv);
    if (unit)
        RS_J rs_store2(o + 2 * RS_W * j, rs_add(vm, z0[j]),
                       rs_add(vm, z1[j]));
    else
        RS_J rs_store2(o + 2 * RS_W * j, rs_add(vm, rs_mul(vs, z0[j])),
                       rs_add(vm, rs_mul(vs, z1[j])));
}

/* [b, e), b even: RS_IL vectors of RS_W pairs a step, then one vector,
 * then the last pairs (and an odd end's cos half) by rand.h. */
static inline void rs_normal64_k(double *o, int64_t b, int64_t e,
                                 uint64_t key, double mean, double sd,
                                 int unit)
{
    const rd vm = rs_d1(mean), vs = rs_d1(sd);
    int64_t i = b;
    if (e - b >= 2 * RS_W) {
        ri x1 = rs_ctr(key, (uint64_t)b, 2);
        ri x2 = rs_ctr(key, (uint64_t)b + 1, 2);
        for (; i + 2 * RS_W * RS_IL <= e; i += 2 * RS_W * RS_IL)
            rs_normal64_step(o + i, &x1, &x2, vm, vs, RS_IL, unit);
        for (; i + 2 * RS_W <= e; i += 2 * RS_W)
            rs_normal64_step(o + i, &x1, &x2, vm, vs, 1, unit);
    }
    for (; i < e; i += 2) {
        double z[2];
        tb_rand_normal_pair(key, (uint64_t)i / 2, 0, z);
        o[i] = mean + sd * z[0];
        if (i + 1 < e)
            o[i + 1] = mean + sd * z[1];
    }
}
static void rs_normal_f64(void *op, int64_t b, int64_t e, uint64_t key,
                          double mean, double sd)
{
    if (sd == 1.0) /* (1.0 exactly: 1 z = z for every z) */
        rs_normal64_k(op, b, e, key, mean, sd, 1);
    else
        rs_normal64_k(op, b, e, key, mean, sd, 0);
}
#undef RS_J

/* ---- the test hook ------------------------------------------------------ */

#define RS_CAT_(a, b) a##b
#define RS_CAT(a, b) RS_CAT_(a, b)

/* lg = -2 log t, r = its square root, c, s = cos, sin of 2 pi u, as
 * rs_normal_f32 computes them (u = k 2^-24, t in [2^-24, 1]) */
#define RS_VMATH(SFX)                                                     \
    void RS_CAT(tb_cpu_rand_vmath_, SFX)(const double *t, const double *u, \
                                         double *lg, double *r, double *c, \
                                         double *s, int64_t n)            \
    {                                                                     \
        for (int64_t i = 0; i < n; i += RS_W) {                           \
            double tt[RS_W], dd[RS_W], o[4][RS_W];                        \
            int64_t w = n - i < RS_W ? n - i : RS_W;                      \
            for (int l = 0; l < RS_W; l++) {                              \
                tt[l] = l < w ? t[i + l] : 1.0;                           \
                dd[l] = 16.0 + 16.0 * (l < w ? u[i + l] : 0.0);           \
            }                                                             \
            rd vc, vs, vl = rs_nlog2(rs_loadd(tt));                       \
            rs_sincos16(rs_loadd(dd), &vc, &vs);                          \
            rs_stored(o[0], vl);                                          \
            rs_stored(o[1], rs_root(vl));                                 \
            rs_stored(o[2], vc);                                          \
            rs_stored(o[3], vs);                                          \
            memcpy(lg + i, o[0], (size_t)w * sizeof *lg);                 \
            memcpy(r + i, o[1], (size_t)w * sizeof *r);                   \
            memcpy(c + i, o[2], (size_t)w * sizeof *c);                   \
            memcpy(s + i, o[3], (size_t)w * sizeof *s);                   \
        }                                                                 \
    }

/* rs_normal_f32's decision on both halves of a pair (v, err) of inputs:
 * the cos lanes from the first RS_W, the sin lanes from the next. */
#define RS_DECIDE(SFX)                                                    \
    void RS_CAT(tb_cpu_rand_decide_, SFX)(const double *v,                \
                                          const double *err, float *f,    \
                                          unsigned char *ok, int64_t n)   \
    {                                                                     \
        for (int64_t i = 0; i < n; i += 2 * RS_W) {                       \
            double vv[2 * RS_W], ee[2 * RS_W];                            \
            float ff[2 * RS_W];                                           \
            int64_t w = n - i < 2 * RS_W ? n - i : 2 * RS_W;              \
            for (int l = 0; l < 2 * RS_W; l++) {                          \
                vv[l] = l < w ? v[i + l] : 1.0;                           \
                ee[l] = l < w ? err[i + l] : 0.0;                         \
            }                                                             \
            unsigned k = rs_put2(ff, rs_loadd(vv), rs_loadd(ee),          \
                                 rs_loadd(vv + RS_W), rs_loadd(ee + RS_W)); \
            for (int l = 0; l < w; l++) {                                 \
                int h = l % RS_W, src = l < RS_W ? 2 * h : 2 * h + 1;     \
                f[i + l] = ff[src];                                       \
                ok[i + l] = (unsigned char)(k >> src & 1);                \
            }                                                             \
        }                                                                 \
    }

/* ---- entry points ------------------------------------------------------- */

#define RS_ENTRY_(op, dt, sfx, LV, W, FN)                                 \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return tb_cpu_create_rand(ctx, LV, TB_OP_##op, TB_CPU_DT_##dt,    \
                                  in, out, p, W, FN);                     \
    }
/* the chunk loops of the 16-bit rows (rand_simd.h) */
#define RS_HALF(SFX)                                                      \
    tb_cpu_rand_fn RS_CAT(tb_cpu_rand_half_fn_, SFX)(tb_op_id id,         \
                                                     tb_dtype dt)         \
    {                                                                     \
        const int bf = dt == TB_BF16;                                     \
        if (dt != TB_BF16 && dt != TB_F16)                                \
            return NULL;                                                  \
        if (id == TB_OP_rand_uniform)                                     \
            return bf ? rs_uniform_bf16 : rs_uniform_f16;                 \
        if (id == TB_OP_rand_normal)                                      \
            return bf ? rs_normal_bf16 : rs_normal_f16;                   \
        return NULL;                                                      \
    }
#define RS_ENTRIES(SFX, LV)                                               \
    RS_ENTRY_(rand_uniform, f32, SFX, LV, 1, rs_uniform_f32)              \
    RS_ENTRY_(rand_uniform, f64, SFX, LV, 1, rs_uniform_f64)              \
    RS_ENTRY_(rand_normal, f32, SFX, LV, 4, rs_normal_f32)                \
    RS_ENTRY_(rand_normal, f64, SFX, LV, 4, rs_normal_f64)                \
    RS_ENTRY_(arange, f32, SFX, LV, 1, rs_arange_f32)                     \
    RS_ENTRY_(arange, f64, SFX, LV, 1, rs_arange_f64)                     \
    RS_HALF(SFX)                                                          \
    RS_VMATH(SFX)                                                         \
    RS_DECIDE(SFX)

#endif
