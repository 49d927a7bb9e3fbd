/* The chunk loops of the SIMD random rows (rand_simd.h), for inclusion
 * by rand_avx2.c and rand_avx512.c only, each built with its level's
 * flags and -ffp-contract=off.  Everything here is static except the
 * entry points RS_ENTRIES(SFX, LV) defines (kreg.h's TB_CPU_ROWS_RAND_
 * list) and the test hook tb_cpu_rand_vmath_<SFX>. */
#ifndef TB_BACKENDS_CPU_RAND_SIMD_IMPL_H
#define TB_BACKENDS_CPU_RAND_SIMD_IMPL_H

#include <stdint.h>
#include <string.h>

#include "../../ops/op.h"
#include "../../ops/rand.h"
#include "dvec_simd.h"
#include "kreg.h"
#include "rand_simd.h"

/* ---- the stream: rand.h's tb_rand_mix in every lane ------------------- */

static inline ri rs_mix(ri z)
{
    z = rs_ixor(z, rs_isrl(z, 30));
    z = rs_imulc(z, UINT64_C(0xbf58476d1ce4e5b9));
    z = rs_ixor(z, rs_isrl(z, 27));
    z = rs_imulc(z, UINT64_C(0x94d049bb133111eb));
    return rs_ixor(z, rs_isrl(z, 31));
}

/* u24 = (bits >> 40) 2^-24 (from the counter z, bits = mix(z)) and
 * u53 = (bits >> 11) 2^-53, exact.  u24 without a conversion: the 24
 * bits k = bits >> 40, shifted to fraction bits 51..28 under the
 * exponent of 1.0, are the double 1 + k 2^-24 (exact), and subtracting
 * 1 is exact (Sterbenz): one shift, one bitwise select (a single
 * vpternlogq on AVX-512) and one subtraction, where a shift, an integer
 * conversion and a product were (the AVX-512 row's port-0 bound, see
 * rand_simd.h). */
static inline rd rs_u24(ri z)
{
    z = rs_ixor(z, rs_isrl(z, 30));
    z = rs_imulc(z, UINT64_C(0xbf58476d1ce4e5b9));
    z = rs_ixor(z, rs_isrl(z, 27));
    z = rs_imulc(z, UINT64_C(0x94d049bb133111eb));
    /* the final z ^= z >> 31 leaves bits 40..63 alone: left out */
    const ri t = rs_isrl(z, 12), frac = rs_i1(UINT64_C(0xffffff) << 28);
    const ri one = rs_i1(UINT64_C(0x3ff0000000000000));
#if RS_W == 8
    const ri w = _mm512_ternarylogic_epi64(t, frac, one, 0xea); /* t&f|1 */
#else
    const ri w = rs_ior(rs_iand(t, frac), one);
#endif
    return rs_sub(rs_asd(w), rs_d1(1.0));
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
            rd u = rs_u24(x);
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

/* ---- arange ------------------------------------------------------------- */

/* As create.c's cr_arange: (T)(start + (double)i * step), the product
 * and the sum rounded separately; i as a double is exact (i < 2^53). */
static void rs_arange_f32(void *op, int64_t b, int64_t e, uint64_t key,
                          double start, double step)
{
    (void)key;
    float *o = op;
    const rd vs = rs_d1(start), vst = rs_d1(step), w = rs_d1(RS_W);
    int64_t i = b;
    if (e - b >= RS_W) {
        double k0[RS_W];
        for (int l = 0; l < RS_W; l++)
            k0[l] = (double)(b + l);
        rd k = rs_loadd(k0);
        for (; i + RS_W <= e; i += RS_W) {
            rs_storef(o + i, rs_add(vs, rs_mul(k, vst)));
            k = rs_add(k, w);
        }
    }
    for (; i < e; i++)
        o[i] = (float)(start + (double)i * step);
}

static void rs_arange_f64(void *op, int64_t b, int64_t e, uint64_t key,
                          double start, double step)
{
    (void)key;
    double *o = op;
    const rd vs = rs_d1(start), vst = rs_d1(step), w = rs_d1(RS_W);
    int64_t i = b;
    if (e - b >= RS_W) {
        double k0[RS_W];
        for (int l = 0; l < RS_W; l++)
            k0[l] = (double)(b + l);
        rd k = rs_loadd(k0);
        for (; i + RS_W <= e; i += RS_W) {
            rs_stored(o + i, rs_add(vs, rs_mul(k, vst)));
            k = rs_add(k, w);
        }
    }
    for (; i < e; i++)
        o[i] = start + (double)i * step;
}

/* ---- rand_normal f32 ---------------------------------------------------- */

/* rs_log (dvec_simd.h) is used on t = 1 - u1 in [2^-24, 1]; the test's
 * exhaustive check: within 2^-49 |log t| of libm's log. */

/* cos a and sin a for a in [0, 2 pi): a = q pi/2 + y, q = round(a 2/pi)
 * in 0..4, y = a - q pi/2 by fused steps with pi/2 in two parts (|y| <=
 * pi/4 + 2^-50, absolute error a few 2^-53); Taylor polynomials of sin
 * to y^15 and cos to y^16 (truncation: the first terms left out,
 * (pi/4)^17/17! < 2^-54.2 and (pi/4)^18/18! < 2^-58, so with the
 * rounding below 2^-52 + 2^-54.2, inside the 2^-50 the bound assumes);
 * then the quadrant's swap and signs.  The test's exhaustive check:
 * within 2^-50 of libm's cos and sin. */
static inline void rs_sincos(rd a, rd *co, rd *si)
{
    rd q = rs_round(rs_mul(a, rs_d1(0x1.45f306dc9c883p-1))); /* 2/pi */
    rd y = rs_fma(q, rs_d1(-0x1.921fb54442d18p+0), a);
    y = rs_fma(q, rs_d1(-0x1.1a62633145c07p-54), y);
    rd y2 = rs_mul(y, y);
    rd ps = rs_d1(-1.0 / 1307674368000.0); /* -1/15! */
    ps = rs_fma(ps, y2, rs_d1(1.0 / 6227020800.0));
    ps = rs_fma(ps, y2, rs_d1(-1.0 / 39916800.0));
    ps = rs_fma(ps, y2, rs_d1(1.0 / 362880.0));
    ps = rs_fma(ps, y2, rs_d1(-1.0 / 5040.0));
    ps = rs_fma(ps, y2, rs_d1(1.0 / 120.0));
    ps = rs_fma(ps, y2, rs_d1(-1.0 / 6.0));
    rd sn = rs_fma(rs_mul(y, y2), ps, y);
    rd pc = rs_d1(1.0 / 20922789888000.0); /* 1/16! */
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

/* The decision of rand_simd.h's bound, by the rounding of the interval's
 * ends: with lo = (float)(v - err) and hi = (float)(v + err) (each end
 * computed in double), rounding to float is monotonic, so when lo and
 * hi are the same float every double in between rounds to it, the
 * scalar kernel's D included (err is at least 8 times |V - D| and the
 * two end computations are within 2^-52 (|v| + err) <= 2^-8 err of
 * exact, since err >= 2^-44 |v|).  rs_fsame accepts a lane when lo and
 * hi are equal both as floats (false for NaN) and bit for bit (false
 * for -0 against +0, whose interval holds doubles of both signs).  lo is
 * the float stored.  Four conversions and two compares per pair of
 * lanes, where the half-gap test (the exponent, a select, the range
 * checks) cost about twice that. */
#if RS_W == 8
typedef __m256 rf; /* RS_W floats */
static inline rf rs_cvtf(rd a) { return _mm512_cvtpd_ps(a); }
static inline unsigned rs_fsame(rf a, rf b)
{
    return (unsigned)(_mm256_cmp_ps_mask(a, b, _CMP_EQ_OQ) &
                      _mm256_cmpeq_epi32_mask(_mm256_castps_si256(a),
                                              _mm256_castps_si256(b)));
}
/* p[2l] = a[l], p[2l + 1] = b[l] */
static inline void rs_storefx2(float *p, rf x, rf y)
{
    __m256 lo = _mm256_unpacklo_ps(x, y), hi = _mm256_unpackhi_ps(x, y);
    _mm256_storeu_ps(p, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}
#else
typedef __m128 rf;
static inline rf rs_cvtf(rd a) { return _mm256_cvtpd_ps(a); }
static inline unsigned rs_fsame(rf a, rf b)
{
    __m128 eq = _mm_cmpeq_ps(a, b);
    __m128i ib = _mm_cmpeq_epi32(_mm_castps_si128(a), _mm_castps_si128(b));
    return (unsigned)_mm_movemask_ps(_mm_and_ps(eq, _mm_castsi128_ps(ib)));
}
static inline void rs_storefx2(float *p, rf x, rf y)
{
    _mm_storeu_ps(p, _mm_unpacklo_ps(x, y));
    _mm_storeu_ps(p + 4, _mm_unpackhi_ps(x, y));
}
#endif

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
            rd u1 = rs_u24(x);
            rd u2 = rs_u24(rs_iadd(x, g));
            x = rs_iadd(x, step);
            rd r = rs_sqrt(rs_mul(rs_d1(-2.0), rs_log(rs_sub(rs_d1(1.0), u1))));
            rd c, s;
            rs_sincos(rs_mul(rs_d1(TB_RAND_2PI), u2), &c, &s);
            rd vc = rs_add(vm, rs_mul(vs, rs_mul(r, c)));
            rd vsn = rs_add(vm, rs_mul(vs, rs_mul(r, s)));
            rd sr = rs_mul(es, r);
            rd ec = rs_mul(rs_add(sr, rs_abs(vc)), rs_d1(0x1.0p-44));
            rd esn = rs_mul(rs_add(sr, rs_abs(vsn)), rs_d1(0x1.0p-44));
            rf lc = rs_cvtf(rs_sub(vc, ec)), ls = rs_cvtf(rs_sub(vsn, esn));
            rf hc = rs_cvtf(rs_add(vc, ec)), hs = rs_cvtf(rs_add(vsn, esn));
            rs_storefx2(o + 2 * j, lc, ls);
            unsigned ok = rs_fsame(lc, hc) & rs_fsame(ls, hs);
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
            rd a = rs_loadd(vv), b = rs_loadd(vv + RS_W);                 \
            rd ea = rs_loadd(ee), eb = rs_loadd(ee + RS_W);               \
            rf la = rs_cvtf(rs_sub(a, ea)), lb = rs_cvtf(rs_sub(b, eb));  \
            rf ha = rs_cvtf(rs_add(a, ea)), hb = rs_cvtf(rs_add(b, eb));  \
            unsigned ka = rs_fsame(la, ha), kb = rs_fsame(lb, hb);        \
            rs_storefx2(ff, la, lb);                                      \
            for (int l = 0; l < w; l++) {                                 \
                int h = l % RS_W, src = l < RS_W ? 2 * h : 2 * h + 1;     \
                f[i + l] = ff[src];                                       \
                ok[i + l] = (unsigned char)(((l < RS_W ? ka : kb) >> h) & 1); \
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
#define RS_ENTRIES(SFX, LV)                                               \
    RS_ENTRY_(rand_uniform, f32, SFX, LV, 1, rs_uniform_f32)              \
    RS_ENTRY_(rand_uniform, f64, SFX, LV, 1, rs_uniform_f64)              \
    RS_ENTRY_(rand_normal, f32, SFX, LV, 4, rs_normal_f32)                \
    RS_ENTRY_(arange, f32, SFX, LV, 1, rs_arange_f32)                     \
    RS_ENTRY_(arange, f64, SFX, LV, 1, rs_arange_f64)                     \
    RS_VMATH(SFX)                                                         \
    RS_DECIDE(SFX)

#endif
