/* The chunk loops of the SIMD random rows (rand_simd.h), for inclusion
 * by rand_avx2.c and rand_avx512.c only, each built with its level's
 * flags and -ffp-contract=off.  Everything here is static except the
 * entry points RS_ENTRIES(SFX, LV) defines (kreg.h's TB_CPU_ROWS_RAND_
 * list) and the test hook tb_cpu_rand_vmath_<SFX>. */
#ifndef TB_BACKENDS_CPU_RAND_SIMD_IMPL_H
#define TB_BACKENDS_CPU_RAND_SIMD_IMPL_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "../../ops/op.h"
#include "../../ops/rand.h"
#include "kreg.h"
#include "rand_simd.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#define RS_W 8 /* doubles (and 64-bit lanes) per vector */
typedef __m512d rd;
typedef __m512i ri;
typedef __mmask8 rmask;
static inline ri rs_i1(uint64_t v) { return _mm512_set1_epi64((long long)v); }
static inline ri rs_iadd(ri a, ri b) { return _mm512_add_epi64(a, b); }
static inline ri rs_ixor(ri a, ri b) { return _mm512_xor_si512(a, b); }
static inline ri rs_iand(ri a, ri b) { return _mm512_and_si512(a, b); }
static inline ri rs_ior(ri a, ri b) { return _mm512_or_si512(a, b); }
#define rs_isrl(a, k) _mm512_srli_epi64(a, k)
#define rs_isll(a, k) _mm512_slli_epi64(a, k)
static inline ri rs_imulc(ri a, uint64_t c)
{
    return _mm512_mullo_epi64(a, rs_i1(c));
}
static inline rd rs_d1(double v) { return _mm512_set1_pd(v); }
static inline rd rs_add(rd a, rd b) { return _mm512_add_pd(a, b); }
static inline rd rs_sub(rd a, rd b) { return _mm512_sub_pd(a, b); }
static inline rd rs_mul(rd a, rd b) { return _mm512_mul_pd(a, b); }
static inline rd rs_div(rd a, rd b) { return _mm512_div_pd(a, b); }
static inline rd rs_fma(rd a, rd b, rd c) { return _mm512_fmadd_pd(a, b, c); }
static inline rd rs_sqrt(rd a) { return _mm512_sqrt_pd(a); }
static inline rd rs_abs(rd a) { return _mm512_abs_pd(a); }
static inline rd rs_round(rd a) { return _mm512_roundscale_pd(a, 0x08); }
static inline rd rs_asd(ri a) { return _mm512_castsi512_pd(a); }
static inline ri rs_asi(rd a) { return _mm512_castpd_si512(a); }
/* x < 2^53 (2^52), exact */
static inline rd rs_cvt53(ri a) { return _mm512_cvtepi64_pd(a); }
static inline rd rs_cvt52(ri a) { return _mm512_cvtepi64_pd(a); }
static inline rmask rs_lt(rd a, rd b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
static inline rmask rs_le(rd a, rd b) { return _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ); }
static inline rmask rs_gt(rd a, rd b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
static inline rmask rs_mand(rmask a, rmask b) { return (rmask)(a & b); }
static inline unsigned rs_bits(rmask m) { return (unsigned)m; }
static inline rd rs_sel(rmask m, rd a, rd b) { return _mm512_mask_blend_pd(m, b, a); }
/* lanes where (a & 1) != 0 */
static inline rmask rs_odd(ri a) { return _mm512_test_epi64_mask(a, rs_i1(1)); }
static inline rd rs_loadd(const double *p) { return _mm512_loadu_pd(p); }
static inline void rs_stored(double *p, rd a) { _mm512_storeu_pd(p, a); }
/* the lanes rounded to float and back */
static inline rd rs_f32rt(rd a) { return _mm512_cvtps_pd(_mm512_cvtpd_ps(a)); }
static inline void rs_storef(float *p, rd a)
{
    _mm256_storeu_ps(p, _mm512_cvtpd_ps(a));
}
/* p[2l] = a[l], p[2l + 1] = b[l], rounded to float */
static inline void rs_storef2(float *p, rd a, rd b)
{
    __m256 x = _mm512_cvtpd_ps(a), y = _mm512_cvtpd_ps(b);
    __m256 lo = _mm256_unpacklo_ps(x, y), hi = _mm256_unpackhi_ps(x, y);
    _mm256_storeu_ps(p, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}
/* key + (i0 + 1 + l * step) G in lane l */
static inline ri rs_ctr(uint64_t key, uint64_t i0, uint64_t step)
{
    const uint64_t g = TB_RAND_GAMMA;
    return _mm512_set_epi64(
        (long long)(key + (i0 + 1 + 7 * step) * g),
        (long long)(key + (i0 + 1 + 6 * step) * g),
        (long long)(key + (i0 + 1 + 5 * step) * g),
        (long long)(key + (i0 + 1 + 4 * step) * g),
        (long long)(key + (i0 + 1 + 3 * step) * g),
        (long long)(key + (i0 + 1 + 2 * step) * g),
        (long long)(key + (i0 + 1 + step) * g), (long long)(key + (i0 + 1) * g));
}
#else
#define RS_W 4
typedef __m256d rd;
typedef __m256i ri;
typedef __m256d rmask; /* all-ones lanes */
static inline ri rs_i1(uint64_t v) { return _mm256_set1_epi64x((long long)v); }
static inline ri rs_iadd(ri a, ri b) { return _mm256_add_epi64(a, b); }
static inline ri rs_ixor(ri a, ri b) { return _mm256_xor_si256(a, b); }
static inline ri rs_iand(ri a, ri b) { return _mm256_and_si256(a, b); }
static inline ri rs_ior(ri a, ri b) { return _mm256_or_si256(a, b); }
#define rs_isrl(a, k) _mm256_srli_epi64(a, k)
#define rs_isll(a, k) _mm256_slli_epi64(a, k)
/* a c mod 2^64: lo(a) lo(c) + (lo(a) hi(c) + hi(a) lo(c)) 2^32 */
static inline ri rs_imulc(ri a, uint64_t c)
{
    const ri cl = rs_i1(c & 0xffffffffu), ch = rs_i1(c >> 32);
    ri ll = _mm256_mul_epu32(a, cl);
    ri x = _mm256_add_epi64(_mm256_mul_epu32(a, ch),
                            _mm256_mul_epu32(_mm256_srli_epi64(a, 32), cl));
    return _mm256_add_epi64(ll, _mm256_slli_epi64(x, 32));
}
static inline rd rs_d1(double v) { return _mm256_set1_pd(v); }
static inline rd rs_add(rd a, rd b) { return _mm256_add_pd(a, b); }
static inline rd rs_sub(rd a, rd b) { return _mm256_sub_pd(a, b); }
static inline rd rs_mul(rd a, rd b) { return _mm256_mul_pd(a, b); }
static inline rd rs_div(rd a, rd b) { return _mm256_div_pd(a, b); }
static inline rd rs_fma(rd a, rd b, rd c) { return _mm256_fmadd_pd(a, b, c); }
static inline rd rs_sqrt(rd a) { return _mm256_sqrt_pd(a); }
static inline rd rs_abs(rd a)
{
    return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a);
}
static inline rd rs_round(rd a)
{
    return _mm256_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline rd rs_asd(ri a) { return _mm256_castsi256_pd(a); }
static inline ri rs_asi(rd a) { return _mm256_castpd_si256(a); }
/* x < 2^52: the bits of 2^52 + x, minus 2^52 (exact) */
static inline rd rs_cvt52(ri a)
{
    return _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(a, rs_i1(0x4330000000000000u))),
        _mm256_set1_pd(0x1.0p52));
}
/* x < 2^53: (x >> 26) 2^26 + (x mod 2^26), each part exact, the sum
 * representable: exact */
static inline rd rs_cvt53(ri a)
{
    rd hi = rs_cvt52(_mm256_srli_epi64(a, 26));
    rd lo = rs_cvt52(_mm256_and_si256(a, rs_i1((1u << 26) - 1)));
    return _mm256_add_pd(_mm256_mul_pd(hi, _mm256_set1_pd(0x1.0p26)), lo);
}
static inline rmask rs_lt(rd a, rd b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
static inline rmask rs_le(rd a, rd b) { return _mm256_cmp_pd(a, b, _CMP_LE_OQ); }
static inline rmask rs_gt(rd a, rd b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
static inline rmask rs_mand(rmask a, rmask b) { return _mm256_and_pd(a, b); }
static inline unsigned rs_bits(rmask m) { return (unsigned)_mm256_movemask_pd(m); }
static inline rd rs_sel(rmask m, rd a, rd b) { return _mm256_blendv_pd(b, a, m); }
static inline rmask rs_odd(ri a)
{
    return _mm256_castsi256_pd(
        _mm256_cmpeq_epi64(_mm256_and_si256(a, rs_i1(1)), rs_i1(1)));
}
static inline rd rs_loadd(const double *p) { return _mm256_loadu_pd(p); }
static inline void rs_stored(double *p, rd a) { _mm256_storeu_pd(p, a); }
static inline rd rs_f32rt(rd a) { return _mm256_cvtps_pd(_mm256_cvtpd_ps(a)); }
static inline void rs_storef(float *p, rd a)
{
    _mm_storeu_ps(p, _mm256_cvtpd_ps(a));
}
static inline void rs_storef2(float *p, rd a, rd b)
{
    __m128 x = _mm256_cvtpd_ps(a), y = _mm256_cvtpd_ps(b);
    _mm_storeu_ps(p, _mm_unpacklo_ps(x, y));
    _mm_storeu_ps(p + 4, _mm_unpackhi_ps(x, y));
}
static inline ri rs_ctr(uint64_t key, uint64_t i0, uint64_t step)
{
    const uint64_t g = TB_RAND_GAMMA;
    return _mm256_set_epi64x((long long)(key + (i0 + 1 + 3 * step) * g),
                             (long long)(key + (i0 + 1 + 2 * step) * g),
                             (long long)(key + (i0 + 1 + step) * g),
                             (long long)(key + (i0 + 1) * g));
}
#endif

/* ---- the stream: rand.h's tb_rand_mix in every lane ------------------- */

static inline ri rs_mix(ri z)
{
    z = rs_ixor(z, rs_isrl(z, 30));
    z = rs_imulc(z, UINT64_C(0xbf58476d1ce4e5b9));
    z = rs_ixor(z, rs_isrl(z, 27));
    z = rs_imulc(z, UINT64_C(0x94d049bb133111eb));
    return rs_ixor(z, rs_isrl(z, 31));
}

/* u24 = (bits >> 40) 2^-24 and u53 = (bits >> 11) 2^-53, exact */
static inline rd rs_u24(ri bits)
{
    return rs_mul(rs_cvt52(rs_isrl(bits, 40)), rs_d1(0x1.0p-24));
}
static inline rd rs_u53(ri bits)
{
    return rs_mul(rs_cvt53(rs_isrl(bits, 11)), rs_d1(0x1.0p-53));
}

/* ---- rand_uniform ------------------------------------------------------- */

/* As create.c's cr_uniform_f32: (float)(lo + (hi - lo) u24), in double,
 * the product and the sum rounded separately. */
static void rs_uniform_f32(void *op, int64_t b, int64_t e, uint64_t key,
                           double lo, double hi)
{
    float *o = op;
    const double d = hi - lo;
    const rd vlo = rs_d1(lo), vd = rs_d1(d);
    const ri step = rs_i1((uint64_t)RS_W * TB_RAND_GAMMA);
    int64_t i = b;
    if (e - b >= RS_W) {
        ri x = rs_ctr(key, (uint64_t)b, 1);
        for (; i + RS_W <= e; i += RS_W) {
            rd u = rs_u24(rs_mix(x));
            rs_storef(o + i, rs_add(vlo, rs_mul(vd, u)));
            x = rs_iadd(x, step);
        }
    }
    for (; i < e; i++) {
        double u = (double)(tb_rand_bits(key, (uint64_t)i) >> 40) * 0x1.0p-24;
        o[i] = (float)(lo + d * u);
    }
}

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

/* ---- rand_normal f32 ---------------------------------------------------- */

/* log t for t in [2^-24, 1] (normal, positive): t = 2^k m with m in
 * [sqrt(1/2), sqrt(2)), log m = 2 atanh(f), f = (m - 1) / (m + 1), |f| <=
 * 0.1716, by the series 2 f (1 + f^2/3 + ... + f^18/19) (the next term is
 * below 2^-55 of the sum); m - 1 is exact (Sterbenz), so the relative
 * error of log m is a few 2^-53, and k ln 2 + log m has no cancellation
 * beyond a factor 2 (k = -1, m near sqrt(2)).  The test's exhaustive
 * check: within 2^-49 |log t| of libm's log. */
static inline rd rs_log(rd t)
{
    ri bits = rs_asi(t);
    rd k = rs_sub(rs_cvt52(rs_isrl(bits, 52)), rs_d1(1023.0));
    rd m = rs_asd(rs_ior(rs_iand(bits, rs_i1(0x000fffffffffffffu)),
                         rs_i1(0x3ff0000000000000u)));
    rmask big = rs_gt(m, rs_d1(0x1.6a09e667f3bcdp+0)); /* sqrt(2) */
    m = rs_sel(big, rs_mul(m, rs_d1(0.5)), m);
    k = rs_sel(big, rs_add(k, rs_d1(1.0)), k);
    const rd one = rs_d1(1.0);
    rd f = rs_div(rs_sub(m, one), rs_add(m, one));
    rd s = rs_mul(f, f);
    rd p = rs_d1(1.0 / 19);
    p = rs_fma(p, s, rs_d1(1.0 / 17));
    p = rs_fma(p, s, rs_d1(1.0 / 15));
    p = rs_fma(p, s, rs_d1(1.0 / 13));
    p = rs_fma(p, s, rs_d1(1.0 / 11));
    p = rs_fma(p, s, rs_d1(1.0 / 9));
    p = rs_fma(p, s, rs_d1(1.0 / 7));
    p = rs_fma(p, s, rs_d1(1.0 / 5));
    p = rs_fma(p, s, rs_d1(1.0 / 3));
    rd f2 = rs_add(f, f);
    rd lm = rs_fma(rs_mul(f2, s), p, f2);
    return rs_fma(k, rs_d1(0x1.62e42fefa39efp-1), lm); /* ln 2 */
}

/* cos a and sin a for a in [0, 2 pi): a = q pi/2 + y, q = round(a 2/pi)
 * in 0..4, y = a - q pi/2 by fused steps with pi/2 in two parts (|y| <=
 * pi/4 + 2^-50, absolute error a few 2^-53); Taylor polynomials of sin
 * to y^17 and cos to y^18 (truncation below 2^-54); then the quadrant's
 * swap and signs.  The test's exhaustive check: within 2^-50 of libm's
 * cos and sin. */
static inline void rs_sincos(rd a, rd *co, rd *si)
{
    rd q = rs_round(rs_mul(a, rs_d1(0x1.45f306dc9c883p-1))); /* 2/pi */
    rd y = rs_fma(q, rs_d1(-0x1.921fb54442d18p+0), a);
    y = rs_fma(q, rs_d1(-0x1.1a62633145c07p-54), y);
    rd y2 = rs_mul(y, y);
    rd ps = rs_d1(1.0 / 355687428096000.0); /* 1/17! */
    ps = rs_fma(ps, y2, rs_d1(-1.0 / 1307674368000.0));
    ps = rs_fma(ps, y2, rs_d1(1.0 / 6227020800.0));
    ps = rs_fma(ps, y2, rs_d1(-1.0 / 39916800.0));
    ps = rs_fma(ps, y2, rs_d1(1.0 / 362880.0));
    ps = rs_fma(ps, y2, rs_d1(-1.0 / 5040.0));
    ps = rs_fma(ps, y2, rs_d1(1.0 / 120.0));
    ps = rs_fma(ps, y2, rs_d1(-1.0 / 6.0));
    rd sn = rs_fma(rs_mul(y, y2), ps, y);
    rd pc = rs_d1(-1.0 / 6402373705728000.0); /* -1/18! */
    pc = rs_fma(pc, y2, rs_d1(1.0 / 20922789888000.0));
    pc = rs_fma(pc, y2, rs_d1(-1.0 / 87178291200.0));
    pc = rs_fma(pc, y2, rs_d1(1.0 / 479001600.0));
    pc = rs_fma(pc, y2, rs_d1(-1.0 / 3628800.0));
    pc = rs_fma(pc, y2, rs_d1(1.0 / 40320.0));
    pc = rs_fma(pc, y2, rs_d1(-1.0 / 720.0));
    pc = rs_fma(pc, y2, rs_d1(1.0 / 24.0));
    pc = rs_fma(pc, y2, rs_d1(-0.5));
    rd cs = rs_fma(y2, pc, rs_d1(1.0));
    /* quadrant n = q mod 4 (q + 2^52 holds q in its low bits):
     * sin a = (n odd ? cos y : sin y) negated when n & 2,
     * cos a = (n odd ? sin y : cos y) negated when (n + 1) & 2 */
    ri n = rs_asi(rs_add(q, rs_d1(0x1.0p52)));
    rmask odd = rs_odd(n);
    rd s0 = rs_sel(odd, cs, sn), c0 = rs_sel(odd, sn, cs);
    ri sgs = rs_isll(rs_iand(n, rs_i1(2)), 62);
    ri sgc = rs_isll(rs_iand(rs_iadd(n, rs_i1(1)), rs_i1(2)), 62);
    *si = rs_asd(rs_ixor(rs_asi(s0), sgs));
    *co = rs_asd(rs_ixor(rs_asi(c0), sgc));
}

/* Lanes whose f = (float)v is certainly the float of the scalar value:
 * |v - f| + err < h, h the half-gap of the floats around f (2^(e - 24)
 * for 2^e <= |f| < 2^(e + 1), 2^(e - 25) when |f| = 2^e, whose lower
 * gap is half), and 2^-100 <= |f| <= 2^127 (false for NaN). */
static inline rmask rs_safe(rd v, rd err)
{
    rd f = rs_f32rt(v);
    rd af = rs_abs(f);
    rd p2 = rs_asd(rs_iand(rs_asi(af), rs_i1(0x7ff0000000000000u)));
    rd h = rs_mul(p2, rs_d1(0x1.0p-24));
    h = rs_sel(rs_le(af, p2), rs_mul(p2, rs_d1(0x1.0p-25)), h);
    rmask ok = rs_lt(rs_add(rs_abs(rs_sub(v, f)), err), h);
    ok = rs_mand(ok, rs_le(rs_d1(0x1.0p-100), af));
    return rs_mand(ok, rs_le(af, rs_d1(0x1.0p127)));
}

/* The scalar pair j (rand.h), elements 2j and 2j + 1 < e. */
static void rs_normal_pair_f32(float *o, int64_t j, int64_t e, uint64_t key,
                               double mean, double sd)
{
    double z[2];
    tb_rand_normal_pair(key, (uint64_t)j, 1, z);
    o[2 * j] = (float)(mean + sd * z[0]);
    if (2 * j + 1 < e)
        o[2 * j + 1] = (float)(mean + sd * z[1]);
}

/* [b, e), b even.  mean, sd: the case's values rounded to float. */
static void rs_normal_f32(void *op, int64_t b, int64_t e, uint64_t key,
                          double mean, double sd)
{
    float *o = op;
    int64_t j = b / 2;
    const int64_t jn = e / 2; /* whole pairs end */
    if (jn - j >= RS_W) {
        const rd vm = rs_d1(mean), vs = rs_d1(sd);
        const rd es = rs_d1(sd < 0 ? -sd : sd);
        const ri step = rs_i1((uint64_t)(2 * RS_W) * TB_RAND_GAMMA);
        const ri g = rs_i1(TB_RAND_GAMMA);
        ri x = rs_ctr(key, (uint64_t)(2 * j), 2); /* elements 2j */
        for (; j + RS_W <= jn; j += RS_W) {
            rd u1 = rs_u24(rs_mix(x));
            rd u2 = rs_u24(rs_mix(rs_iadd(x, g)));
            x = rs_iadd(x, step);
            rd r = rs_sqrt(rs_mul(rs_d1(-2.0), rs_log(rs_sub(rs_d1(1.0), u1))));
            rd c, s;
            rs_sincos(rs_mul(rs_d1(TB_RAND_2PI), u2), &c, &s);
            rd vc = rs_add(vm, rs_mul(vs, rs_mul(r, c)));
            rd vsn = rs_add(vm, rs_mul(vs, rs_mul(r, s)));
            rd sr = rs_mul(es, r);
            rd ec = rs_mul(rs_add(sr, rs_abs(vc)), rs_d1(0x1.0p-44));
            rd esn = rs_mul(rs_add(sr, rs_abs(vsn)), rs_d1(0x1.0p-44));
            rs_storef2(o + 2 * j, vc, vsn);
            unsigned ok = rs_bits(rs_mand(rs_safe(vc, ec), rs_safe(vsn, esn)));
            if (ok != (1u << RS_W) - 1)
                for (int l = 0; l < RS_W; l++)
                    if (!(ok >> l & 1))
                        rs_normal_pair_f32(o, j + l, e, key, mean, sd);
        }
    }
    for (; 2 * j < e; j++)
        rs_normal_pair_f32(o, j, e, key, mean, sd);
}

/* ---- the test hook ------------------------------------------------------ */

#define RS_CAT_(a, b) a##b
#define RS_CAT(a, b) RS_CAT_(a, b)

#define RS_VMATH(SFX)                                                     \
    void RS_CAT(tb_cpu_rand_vmath_, SFX)(const double *t, const double *a, \
                                         double *lg, double *c, double *s, \
                                         int64_t n)                       \
    {                                                                     \
        for (int64_t i = 0; i < n; i += RS_W) {                           \
            double tt[RS_W], aa[RS_W], l1[RS_W], c1[RS_W], s1[RS_W];      \
            int64_t w = n - i < RS_W ? n - i : RS_W;                      \
            for (int l = 0; l < RS_W; l++) {                              \
                tt[l] = l < w ? t[i + l] : 1.0;                           \
                aa[l] = l < w ? a[i + l] : 0.0;                           \
            }                                                             \
            rd vc, vs;                                                    \
            rs_sincos(rs_loadd(aa), &vc, &vs);                            \
            rs_stored(l1, rs_log(rs_loadd(tt)));                          \
            rs_stored(c1, vc);                                            \
            rs_stored(s1, vs);                                            \
            memcpy(lg + i, l1, (size_t)w * sizeof *lg);                   \
            memcpy(c + i, c1, (size_t)w * sizeof *c);                     \
            memcpy(s + i, s1, (size_t)w * sizeof *s);                     \
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
#define RS_ENTRIES(SFX, LV)                                               \
    RS_ENTRY_(rand_uniform, f32, SFX, LV, 1, rs_uniform_f32)              \
    RS_ENTRY_(rand_uniform, f64, SFX, LV, 1, rs_uniform_f64)              \
    RS_ENTRY_(rand_normal, f32, SFX, LV, 4, rs_normal_f32)                \
    RS_VMATH(SFX)

#endif
