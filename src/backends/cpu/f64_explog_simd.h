/* exp and log f64 in double lanes (f64_simd_impl.h's exp, log and
 * pow rows, and the cores its activations share: dx_pow2,
 * dx_expm1_small, dx_reduce, dx_exp_neg, dx_log_fk); their algorithms
 * and bounds are stated in f64_simd_impl.h's header.  For inclusion by
 * f64_simd_impl.h only, after dvec_simd.h. */
#ifndef TB_BACKENDS_CPU_F64_EXPLOG_SIMD_H
#define TB_BACKENDS_CPU_F64_EXPLOG_SIMD_H

#include <math.h>
#include <stdint.h>

static inline rd dx_pow2(rd k) /* 2^k, k integral in [-1022, 1023] */
{
    ri ki = rs_asi(rs_add(k, rs_d1(0x1.8p52 + 1023.0)));
    return rs_asd(rs_isll(ki, 52));
}

/* e^r - 1 for |r| <= 0.347: dx_exp's Taylor core without its 1, so no
 * cancellation near 0. */
static inline rd dx_expm1_small(rd r)
{
    rd p = rs_d1(1.0 / 6227020800.0); /* 1/13! */
    p = rs_fma(p, r, rs_d1(1.0 / 479001600.0));
    p = rs_fma(p, r, rs_d1(1.0 / 39916800.0));
    p = rs_fma(p, r, rs_d1(1.0 / 3628800.0));
    p = rs_fma(p, r, rs_d1(1.0 / 362880.0));
    p = rs_fma(p, r, rs_d1(1.0 / 40320.0));
    p = rs_fma(p, r, rs_d1(1.0 / 5040.0));
    p = rs_fma(p, r, rs_d1(1.0 / 720.0));
    p = rs_fma(p, r, rs_d1(1.0 / 120.0));
    p = rs_fma(p, r, rs_d1(1.0 / 24.0));
    p = rs_fma(p, r, rs_d1(1.0 / 6.0));
    p = rs_fma(p, r, rs_d1(0.5));
    return rs_fma(rs_mul(p, r), r, r);
}

/* x = k ln 2 + r, k = round(x / ln 2), ln 2 in two parts (k ln2_hi
 * exact): r, with k in *k. */
static inline rd dx_reduce(rd x, rd *k)
{
    *k = rs_round(rs_mul(x, rs_d1(0x1.71547652b82fep+0))); /* 1/ln2 */
    rd r = rs_fma(*k, rs_d1(-0x1.62e42fefa3800p-1), x);
    return rs_fma(*k, rs_d1(-0x1.ef35793c7673p-45), r);
}

/* exp by dx_reduce and dx_expm1_small (the form before dx_exp's table):
 * dx_exp_neg's rare vectors, so that its lanes' values never depend on
 * their neighbours (bit for bit its fast form's where that is normal). */
static inline rd dx_exp_tay(rd x)
{
    rd xc = rs_min(rs_max(x, rs_d1(-746.0)), rs_d1(710.0));
    rd k;
    rd r = dx_reduce(xc, &k);
    /* 1 + r + r^2 p': the small terms first, then r, then 1 */
    rd p = rs_add(rs_d1(1.0), dx_expm1_small(r));
    rd k1 = rs_round(rs_mul(k, rs_d1(0.5)));
    rd k2 = rs_sub(k, k1); /* both in [-538, 538] */
    rd e = rs_mul(rs_mul(p, dx_pow2(k1)), dx_pow2(k2));
    return rs_sel(rs_unord(x, x), rs_add(x, x), e);
}

#include "f64_explog.h"
#include "f64_powlog.h"

/* x = (16 e + j) ln2 / 16 + r for |x| <= 746: *kf = 1.5 2^52 + k, k =
 * 16 e + j = round(16 x / ln 2) by the FMA's shift (k in its low bits),
 * r = x - k ln2_hi / 16 exact (ln2_hi's 42 bits: a multiple of 2^-58
 * below 2^-5 wherever k != 0) minus k ln2_lo / 16: |r| <= ln2 / 32 plus
 * a rounding. */
static inline rd dx_e16_red(rd x, rd *kf)
{
    const rd sh = rs_d1(0x1.8p52);
    *kf = rs_fma(x, rs_d1(0x1.71547652b82fep+4), sh); /* 16 / ln2 */
    rd kd = rs_sub(*kf, sh);
    rd r = rs_fma(kd, rs_d1(-0x1.62e42fefa3800p-5), x);
    return rs_fma(kd, rs_d1(-0x1.ef35793c7673p-49), r);
}

/* y = 2^(j/16) e^r in [0.97, 2) (r as dx_e16_red's, pow's yl added):
 * e^r - 1 = r + r^2 q(r) by Taylor's series to r^7 (truncation below
 * 2^-59 relative), 2^(j/16) = T + Tl (f64_explog.h), y = T + (T (e^r -
 * 1) + Tl): one rounding of a sum within 2^-60 of e^x 2^-e. */
static inline rd dx_e16_y(rd r, rd kf)
{
    /* q by Estrin's scheme (1.3% faster than Horner's at 1M, ab) */
    rd r2 = rs_mul(r, r);
    rd q01 = rs_fma(r, rs_d1(1.0 / 6), rs_d1(0.5));
    rd q23 = rs_fma(r, rs_d1(1.0 / 120), rs_d1(1.0 / 24));
    rd q45 = rs_fma(r, rs_d1(1.0 / 5040), rs_d1(1.0 / 720));
    rd q = rs_fma(rs_fma(q45, r2, q23), r2, q01);
    rd p = rs_fma(r2, q, r);
    ri j = rs_asi(kf); /* rs_lut16 takes its low 4 bits */
    rd t = rs_lut16(dx_e16_h, j);
    return rs_add(t, rs_fma(t, p, rs_lut16(dx_e16_l, j)));
}

/* y 2^e where that is normal: e = k >> 4 added to y's exponent field as
 * an integer (the bits of kf shifted: its high bits leave the field). */
static inline rd dx_e16_fast(rd y, rd kf)
{
    return rs_asd(rs_iadd(rs_asi(y), rs_isll(rs_isrl(rs_asi(kf), 4), 52)));
}

/* e^(x + xl) for x clamped to [-746, 710] (the caller zeroes xl where
 * that clamps): y as above, times 2^e as (y 2^e1) 2^e2, e1 = round(e /
 * 2): the first product exact, the second one rounding, also into the
 * subnormal range (0 and inf where they must); where the result is
 * normal, dx_e16_fast's value bit for bit. */
static inline rd dx_e16_full(rd x, rd xl)
{
    rd xc = rs_min(rs_max(x, rs_d1(-746.0)), rs_d1(710.0));
    rd kf;
    rd r = rs_add(dx_e16_red(xc, &kf), xl);
    rd y = dx_e16_y(r, kf);
    /* e = floor(k / 16) = round(k / 16 - 15 / 32), no ties */
    rd e = rs_round(rs_fma(rs_sub(kf, rs_d1(0x1.8p52)), rs_d1(0.0625),
                           rs_d1(-15.0 / 32)));
    rd e1 = rs_round(rs_mul(e, rs_d1(0.5))); /* e1, e - e1 in [-539, 512] */
    return rs_mul(rs_mul(y, dx_pow2(e1)), dx_pow2(rs_sub(e, e1)));
}

/* A vector whose lanes all have |x| <= 708 (normal results: k >=
 * -16343 gives j >= 9 where e = -1022, y >= 1.44) takes the one integer
 * scaling; the others (rare: near or past the range's ends, NaN) the
 * full form, whose values agree where both are normal. */
static inline rd dx_exp(rd x)
{
    if (rs_bits(rs_le(rs_abs(x), rs_d1(708.0))) == (1u << RS_W) - 1) {
        rd kf;
        rd r = dx_e16_red(x, &kf);
        return dx_e16_fast(dx_e16_y(r, kf), kf);
    }
    rd e = dx_e16_full(x, rs_d1(0.0));
    return rs_sel(rs_unord(x, x), rs_add(x, x), e);
}

/* e^y for y <= 0 (sigmoid's, softplus's and the gradients' e^-|x|,
 * gelu's e^(-x^2/2)): a vector whose lanes are all >= -708 (results
 * normal, k >= -1022) takes one 2^k scaling instead of dx_exp's clamp,
 * two scalings and NaN select, which the rest (rare: results near or
 * below DBL_MIN, NaN) still take; values bit for bit dx_exp_tay's (p 2^k
 * is exact either way where it is normal).  sigmoid 1M f64: 2.24 ->
 * 1.92 ms best of 40 alternated calls (a loaded machine). */
static inline rd dx_exp_neg(rd y)
{
    if (rs_bits(rs_mor(rs_lt(y, rs_d1(-708.0)), rs_unord(y, y))))
        return dx_exp_tay(y);
    rd k;
    rd r = dx_reduce(y, &k);
    return rs_mul(rs_add(rs_d1(1.0), dx_expm1_small(r)), dx_pow2(k));
}

/* e^y for y <= 0 (the softmax family's e^(x - max); -inf, NaN too):
 * at AVX-512, where every lane has y >= -708 dx_exp's fast form alone
 * (one compare and no |y|), else dx_exp: bit for bit dx_exp's values
 * (within 1 ulp), 13 cycles for 8 lanes on the znver4 model where
 * dx_exp_neg's Taylor form to r^13 takes 17; at AVX2 dx_exp_neg (within
 * 2 ulp: its table's gathers made log_softmax 256x1000 7% slower). */
static inline rd dx_exp_nonpos(rd y)
{
#if RS_W == 4 /* AVX2 looks the table up by gathers: the Taylor form */
    return dx_exp_neg(y);
#endif
    if (rs_bits(rs_le(rs_d1(-708.0), y)) == (1u << RS_W) - 1) {
        rd kf;
        rd r = dx_e16_red(y, &kf);
        return dx_e16_fast(dx_e16_y(r, kf), kf);
    }
    return dx_exp(y);
}

/* k ln 2 + 2 atanh f, f = (m - 1) / (m + 1) for m in [sqrt(1/2),
 * sqrt(2)): the series of atanh to f^21, ln 2 in two parts (dx_log's
 * and dx_log1p's last steps). */
static inline rd dx_log_fk(rd f, rd k)
{
    rd s = rs_mul(f, f);
    rd p = rs_d1(1.0 / 21);
    p = rs_fma(p, s, rs_d1(1.0 / 19));
    p = rs_fma(p, s, rs_d1(1.0 / 17));
    p = rs_fma(p, s, rs_d1(1.0 / 15));
    p = rs_fma(p, s, rs_d1(1.0 / 13));
    p = rs_fma(p, s, rs_d1(1.0 / 11));
    p = rs_fma(p, s, rs_d1(1.0 / 9));
    p = rs_fma(p, s, rs_d1(1.0 / 7));
    p = rs_fma(p, s, rs_d1(1.0 / 5));
    p = rs_fma(p, s, rs_d1(1.0 / 3));
    rd f2 = rs_add(f, f);
    rd lm = rs_fma(rs_mul(f2, s), p, rs_fma(k, rs_d1(0x1.ef35793c7673p-45), f2));
    rd l = rs_fma(k, rs_d1(0x1.62e42fefa3800p-1), lm);
    return l;
}

/* t = 2^e z as rs_log_reduce (dvec_simd.h): *i the interval, *e the
 * exponent as a double, z returned. */
static inline rd dx_log_split(rd t, rd *e, ri *i)
{
    ri b = rs_iadd(rs_asi(t), rs_i1((uint64_t)0 - RS_LOG_OFF));
    *i = rs_isrl(b, 48);
#if RS_W == 8
    *e = _mm512_cvtepi64_pd(_mm512_srai_epi64(b, 52));
#else /* no 64-bit arithmetic shift: (b + 2^63) >> 52 is e + 2048 */
    *e = rs_sub(rs_cvt52(rs_isrl(rs_ixor(b, rs_i1(UINT64_C(1) << 63)), 52)),
                rs_d1(2048.0));
#endif
    return rs_asd(rs_iadd(rs_iand(b, rs_i1(0x000fffffffffffffu)),
                          rs_i1(RS_LOG_OFF)));
}

/* z c - d by one rounding (FMA's fmsub) */
static inline rd dx_fms(rd z, rd c, rd d)
{
#if RS_W == 8
    return _mm512_fmsub_pd(z, c, d);
#else
    return _mm256_fmsub_pd(z, c, d);
#endif
}

/* log(2^e z) by log's table (f64_explog.h): c = dx_lg_c[i] (pow's c_i
 * moved by under 2^-29 relative, so that -log c is within 2^-62 of h =
 * dx_lg_h[i], a multiple of 2^-42), z c = p + pl exactly (fmsub), r = p
 * - 1 exact, log z = h + log1p(r + pl) (h's error: below 2^-62); w = e
 * ln2_hi + h exact (one fma), hi + lo = w + r (Fast2Sum: |w| >= |r|
 * unless w = 0, checked per interval by the table's script), then log x
 * = hi + (lo + pl + e ln2_lo + R^2 P(R)), R = r + pl rounded, log1p R =
 * R + R^2 P(R) (f64_explog.h: within 2^-57.4 of log x): R's rounding (<=
 * 2^-58, |r| < 2^-4) moves R^2 P(R) by about R times it, below 2^-62.6
 * absolute (and R = r exactly in the interval around 1, where pl = 0);
 * the small terms' roundings below 2^-57 of log x (|log x| >= 0.0117
 * outside the interval around 1, where w = 0 and log x = r + r^2 P).
 * One table lookup fewer than a hi + lo pair: 9.5% faster in cache. */
static inline rd dx_log_zi(rd z, ri i, rd e)
{
    rd c = rs_lut16(dx_lg_c, i);
    rd p = rs_mul(z, c);
    rd pl = dx_fms(z, c, p);
    rd r = rs_sub(p, rs_d1(1.0));
    rd R = rs_add(r, pl);
    rd w = rs_fma(e, rs_d1(0x1.62e42fefa3800p-1), rs_lut16(dx_lg_h, i));
    rd hi = rs_add(w, r);
    rd lo = rs_add(rs_sub(w, hi), r);
    /* P = E(R^2) + R O(R^2): two Horner chains of 4 and 3 (one of 8
     * would be the loop's longest dependency) */
    rd R2 = rs_mul(R, R);
    rd ev = rs_d1(dx_lg_p[0]), od = rs_d1(dx_lg_p[1]);
#pragma GCC unroll 4
    for (int k = 2; k < 8; k += 2) {
        ev = rs_fma(ev, R2, rs_d1(dx_lg_p[k]));
        od = rs_fma(od, R2, rs_d1(dx_lg_p[k + 1]));
    }
    ev = rs_fma(ev, R2, rs_d1(dx_lg_p[8]));
    rd q = rs_fma(od, R, ev);
    rd t = rs_fma(e, rs_d1(0x1.ef35793c7673p-45), rs_add(lo, pl));
    return rs_add(hi, rs_fma(R2, q, t));
}

/* A vector whose lanes are all positive normal finite takes dx_log_zi
 * alone; the others: x < 2^-1022 scaled by 2^54 first (e - 54), log 0 =
 * -inf, log inf = inf, x < 0 or NaN: NaN. */
static inline rd dx_log(rd x)
{
    rd e;
    ri i;
#if RS_W == 8 /* one vfpclasspd: NaN, +-0, +-inf, subnormal, negative */
    if (_mm512_fpclass_pd_mask(x, 0xff) == 0) {
#else
    rmask ok = rs_mand(rs_le(rs_d1(0x1.0p-1022), x),
                       rs_lt(x, rs_d1(INFINITY)));
    if (rs_bits(ok) == (1u << RS_W) - 1) {
#endif
        rd z = dx_log_split(x, &e, &i);
        return dx_log_zi(z, i, e);
    }
    rmask sub = rs_lt(x, rs_d1(0x1.0p-1022));
    rd z = dx_log_split(rs_sel(sub, rs_mul(x, rs_d1(0x1.0p54)), x), &e, &i);
    rd l = dx_log_zi(z, i, rs_sel(sub, rs_sub(e, rs_d1(54.0)), e));
    l = rs_sel(rs_eq(x, rs_d1(0.0)), rs_d1(-INFINITY), l);
    l = rs_sel(rs_eq(x, rs_d1(INFINITY)), x, l);
    l = rs_sel(rs_lt(x, rs_d1(0.0)), rs_d1(NAN), l);
    return rs_sel(rs_unord(x, x), rs_add(x, x), l);
}

#endif
