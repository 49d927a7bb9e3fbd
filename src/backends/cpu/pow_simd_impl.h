/* pow f32's SIMD rows (AVX2, AVX-512; ops_simd.h's binary driver does
 * the checks, broadcasting and threads), for inclusion by pow_avx2.c and
 * pow_avx512.c only, each built with its level's flags.
 *
 * A vector the float lanes (below) do not take, at either level, is
 * computed in double lanes as 2^(b log2 |a|),
 * rounded to float once.  log2 (pw_log2): a = 2^e z, a 16-entry table (by
 * vpermt2pd on AVX-512, a gather on AVX2) of c ~ 1/z and log2 c,
 * r = z c - 1 with |r| <= 0.039, log2(1 + r) by a degree-7 polynomial
 * (a fitted one, relative error below 2^-43); bases next to 1 use
 * c = 1 exactly, so they cancel nothing: the double log2 is within
 * about 2^-41 relative (|log2 a| >= 0.017 outside that interval, the
 * polynomial's part at most 0.056).  2^y (pw_exp2): y = k/16 + f, |f| <= 1/32, a
 * 16-entry table of 2^(j/16) and a degree-4 polynomial (relative error
 * below 2^-38.5), times 2^(k >> 4).  |y| <= 150 wherever the float
 * result is finite and nonzero, so y's error is below 150 * 2^-41 and
 * the double is within about 2^-34 relative of a^b: the float is
 * within 0.5 + 2^-10 ulp of the exact a^b (subnormal results: of the
 * subnormal spacing).  Stated bound 0.5 + 2^-9 ulp, checked by the
 * sweep of tests/test_checkasm.c (pow_ulp) against libm's double pow.
 * (This replaces exp(b ln |a|) by a division-based log and a degree-12
 * exp, 0.5 + 2^-12 ulp, 1.7 ms -> 0.96 ms at 1024x1024.)
 * vmath_simd.h's float vs_exp/vs_log were not used: the float log's
 * error, multiplied by |y| up to ~100, would be ~50 ulp.
 *
 * A vector whose lanes all have a positive finite a and |b log2 a| <= 320
 * skips the special-value selects (they would keep every lane).
 * AVX-512 first tries 16 float lanes (pf_exp2 after pf_log2's short or
 * full form): a = 2^e z, a 32-entry table (vpermt2ps) of c ~ 1/z
 * chosen so r = z c - 1 is exact, log2 a as a float pair, y = b log2 a
 * as a float pair, 2^y by a 32-entry table of float pairs and a degree-2
 * fit, its last fma being the result's one rounding.  2^y's error
 * before that rounding: below 2^-28.4 relative (P's fit 2^-32.4, its
 * evaluation 2^-29.5, the fma into rl 2^-31, the dropped rl f P
 * 2^-31.5, f's rounding 2^-31.5).
 * y's error: |y| times log2's relative error, plus the rounding of
 * b sh - k/32 (half an ulp of 1/64 + |b ll|) and f's.  The short log2 (r/ln 2 as an exact pair,
 * r^2 Q(r) in plain float; within 2^-28.2 relative) serves vectors whose
 * every lane has |y| <= 8: y within 8 2^-28.2 + 2^-27 = 2^-24.9 (|b ll|
 * <= 8 |r|/2 <= 2^-3), the float within 0.5 + 2^24 (ln 2 2^-24.9 +
 * 2^-28.4) ~ 0.93 ulp of a^b.  Else the full log2 ((r - r^2/2)/ln 2
 * with exact products by fma and Fast2Sums, r^3 G(r) by a degree-3 fit;
 * within 2^-32.8 relative) for |y| <= 124: y within 124 2^-32.8 + 2^-28
 * = 2^-25.5, the float within ~0.80 ulp.  Stated bound 1 ulp at both
 * levels, checked by pow_ulp's sweeps (every base of
 * [0.75, 1.5), alternately at |y| near 124 .. 8.5 (full log2) and 8 ..
 * 2^-10 (short log2); 2^b for every 1031st b; worst seen 0.62 ulp,
 * AVX2 0.64 ulp).  A vector with any other lane (a <= 0, not finite, |y| > 124: results
 * that are special, subnormal or near overflow) runs the double path
 * below for all its lanes.  Both levels' loops are software-pipelined
 * (a step's log2 with the previous step's exp2: pw_pow_f32).
 * (1.14 ms -> 657 us at 1024x1024, tbench ab
 * of release builds of main and of this, one run, 1 thread; add 438 us.
 * scripts/op_limits.py's run after it: 577 us, NumPy 803 us, PyTorch
 * 5.22 ms, add 435 us.)
 * AVX2 runs the same method in 8 float lanes (pg_*), with what AVX2
 * lacks done by other means: a = 2^e z by integer operations on bits(a)
 * (so a vector with a lane that is not a positive normal float, a <
 * 2^-126 included, takes the double path); 32-entry tables by four
 * vpermd and masks of the index's bits 3 and 4 (pg_lut32); pf_c and
 * pf_th in one table word (pg_tabs_init), so the log2 reads two tables;
 * 2^(k >> 3) by an integer add into the exponent field; and an exp2 of
 * 8 entries (2^(j/8): pf_eh, pf_rl at 4j, one vpermps each) with P8 of
 * degree 3 for |f| <= 1/16 + 2^-20 (fitted, 2^-31.5 relative): fewer
 * vector instructions (this machine's AVX2 loop is bound by them), at
 * the price of 2^f's error before its rounding, as a worst-case sum:
 * P8's fit 2^-31.5, t's rounding (|t| <= 0.044) 2^-29, p's last
 * rounding times |f| 2^-29, the dropped rl f P 2^-29.5, the fma into rl
 * 2^-31, f's rounding 2^-31.5: below 2^-27.3; the float within 0.5 +
 * 2^24 (ln 2 2^-24.9 + 2^-27.3) ~ 0.97 ulp (short log2), ~0.85 ulp
 * (full); stated bound 1 ulp as AVX-512's (pow_ulp's worst: 0.64).
 * (AVX2 row: 2.32 ms -> 1.56 ms at 1024x1024, tbench ab of release
 * builds of main and of this, one run, 1 thread; see docs/perf-data/pow4.)
 * Special values as C99/IEEE pow (powf, the portable row): a^(+-0) = 1
 * and 1^b = 1 even for NaN; (-1)^(+-inf) = 1; otherwise NaN in gives
 * NaN; a finite negative a with a non-integer b gives NaN; a negative a
 * (-0 and -inf included) with an odd integer b gives -|a|^b; 0^b and
 * inf^b by the limits (log 0 = -inf, log inf = inf); infinite b is an
 * even integer. */
#ifndef TB_BACKENDS_CPU_POW_SIMD_IMPL_H
#define TB_BACKENDS_CPU_POW_SIMD_IMPL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../ops/op.h"
#include "dvec_simd.h"
#include "vmath_simd.h"
#include "kreg.h"
#include "ops_simd.h"
#include "pow_special.h"

/* log2: rs_log_reduce (dvec_simd.h) gives a = 2^e z, the interval i
 * and r = z c_i - 1; pw_logc holds -log2 c_i, rounded to double. */
static const double pw_logc[16] = {
    -0x1.dfdd89d586e2cp-2, -0x1.a152f142981b5p-2, -0x1.6552b49986277p-2,
    -0x1.2baa0c34be1ebp-2, -0x1.e857d3d361368p-3, -0x1.7d60496cfbb4cp-3,
    -0x1.162593186da70p-3, -0x1.64ce26c067157p-4, -0x1.47aa07357703cp-5,
    0x0.0p+0, 0x1.918a16e46335ep-4, 0x1.70742d4ef0280p-3,
    0x1.0790adbb03009p-2, 0x1.52dbdfc4c96b5p-2, 0x1.9a802391e2330p-2,
    0x1.ded3fd442364cp-2};
/* 2^(j/16), j = 0..15, rounded to double */
static const double pw_exp2t[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0,
    0x1.2387a6e756238p+0, 0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0,
    0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0, 0x1.6a09e667f3bcdp+0,
    0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0,
    0x1.ea4afa2a490dap+0};

/* log2 a for a positive finite double (a float's value); other inputs:
 * unspecified (the caller selects).  e + log2 c_i + log2(1 + r), the
 * last as r q(r), q of degree 6 fitted to log2(1 + r) / r on
 * [-0.0292, 0.0391] (relative error below 2^-43, measured in 120-bit
 * arithmetic). */
static inline rd pw_log2(rd a)
{
    rd e, r;
    ri i;
    rs_log_reduce(a, &e, &r, &i);
    rd q = rs_d1(0x1.9a47ce940a49bp-3);
    q = rs_fma(q, r, rs_d1(-0x1.ed013b99d1440p-3));
    q = rs_fma(q, r, rs_d1(0x1.2778d7b80844fp-2));
    q = rs_fma(q, r, rs_d1(-0x1.71546db59339ap-2));
    q = rs_fma(q, r, rs_d1(0x1.ec709d967f877p-2));
    q = rs_fma(q, r, rs_d1(-0x1.71547652dc875p-1));
    q = rs_fma(q, r, rs_d1(0x1.71547652b852bp+0));
    return rs_fma(q, r, rs_add(e, rs_lut16(pw_logc, i)));
}

/* 2^y for |y| <= 320 (NaN: unspecified, the caller selects):
 * k = round(16 y), f = y - k/16 (exact, |f| <= 1/32),
 * 2^(k >> 4) 2^((k & 15)/16) (pw_exp2t) 2^f, the last by a degree-4
 * polynomial fitted on [-1/32, 1/32] (relative error below 2^-38.5). */
static inline rd pw_exp2(rd y)
{
    const double M = 0x1.8p52;
    /* the low 52 bits of kd: 2^51 + k (mod 2^52) */
    rd kd = rs_fma(y, rs_d1(16.0), rs_d1(M));
    rd f = rs_fma(rs_sub(kd, rs_d1(M)), rs_d1(-0.0625), y);
    rd p = rs_d1(0x1.3b29252c4bc7bp-7);
    p = rs_fma(p, f, rs_d1(0x1.c6b3f7401e406p-5));
    p = rs_fma(p, f, rs_d1(0x1.ebfbe00331664p-3));
    p = rs_fma(p, f, rs_d1(0x1.62e42fec39dd8p-1));
    p = rs_fma(p, f, rs_d1(0x1.ffffffffffe70p-1));
    /* 2^(k >> 4) into the exponent of 2^((k & 15)/16): kd's bits with
     * the low 4 cleared, shifted by 48, are (k >> 4) << 52 mod 2^64
     * (2^51 and the bits above 52 leave the word); the sum is that mod
     * 2^64, a normal double */
    ri kb = rs_asi(kd);
    ri s = rs_iadd(rs_asi(rs_lut16(pw_exp2t, kb)),
                   rs_isll(rs_iand(kb, rs_i1(~UINT64_C(15))), 48));
    return rs_mul(p, rs_asd(s));
}

/* a^b of float lanes held in doubles */
static inline rd pw_pow_full(rd a, rd b)
{
    const rd inf = rs_d1(INFINITY);
    rd ax = rs_abs(a);
    rd l = pw_log2(ax);
    l = rs_sel(rs_eq(ax, rs_d1(0.0)), rs_d1(-INFINITY), l);
    l = rs_sel(rs_eq(ax, inf), inf, l);
    rd y = rs_mul(b, l);
    y = rs_min(rs_max(y, rs_d1(-320.0)), rs_d1(320.0)); /* NaN: -320 */
    return pw_special(a, b, pw_exp2(y));
}

/* The common case first: where every lane has a positive finite a and
 * |b log2 a| <= 320 (b finite), pw_pow_full's selects all keep 2^(b
 * log2 a) (1 where a = 1 or b = 0: log2 1 = 0 exactly, and 2^0 rounds
 * to the float 1), so that is the result; else the full form. */
static inline int pw_fast(rd a, rd y)
{
    rmask ok = rs_mand(rs_lt(rs_d1(0.0), a), rs_lt(a, rs_d1(INFINITY)));
    ok = rs_mand(ok, rs_le(rs_abs(y), rs_d1(320.0)));
    return rs_bits(ok) == (1u << RS_W) - 1;
}

static inline rd pw_pow(rd a, rd b)
{
    rd y = rs_mul(b, pw_log2(a));
    if (pw_fast(a, y))
        return pw_exp2(y);
    return pw_pow_full(a, b);
}

/* ---- the float lanes' tables (both rows; see the header comment) ---- */

/* log2: a = 2^e z, z in [0.75, 1.5) (vgetmantps), 32 intervals by the
 * low 5 bits of bits(z) >> 18: [1 + i/32, 1 + (i + 1)/32) for i < 16,
 * [0.5 + i/64, 0.5 + (i + 1)/64) for i >= 16.  pf_c: a float of at
 * most 6 significant bits near 1 / the interval's midpoint (exactly 1
 * for the two intervals next to 1) such that r = z c - 1 is a float for
 * every z of the interval, so one fused rounding computes it exactly;
 * |r| <= 0.0206, and <= 2^-5 next to 1.  -log2 c = pf_th + pf_tl, pf_th
 * a multiple of 2^-16 (so e + pf_th is exact), the pair within 2^-41;
 * pf_th holds 1 more for i >= 16 (z < 1), where vgetexpps(a) is e - 1.
 * scripts/pow_f32_tables.py prints these tables and the fitted
 * constants below and checks r's exactness over every z, the pairs and
 * the Fast2Sum condition; pow_ulp checks the result. */
static const float pf_c[32] = {
    0x1p+0f, 0x1.e8p-1f, 0x1.d8p-1f, 0x1.dp-1f,
    0x1.cp-1f, 0x1.b4p-1f, 0x1.a8p-1f, 0x1.ap-1f,
    0x1.94p-1f, 0x1.8cp-1f, 0x1.8p-1f, 0x1.78p-1f,
    0x1.7p-1f, 0x1.68p-1f, 0x1.6p-1f, 0x1.58p-1f,
    0x1.5p+0f, 0x1.4cp+0f, 0x1.44p+0f, 0x1.4p+0f,
    0x1.38p+0f, 0x1.34p+0f, 0x1.2cp+0f, 0x1.28p+0f,
    0x1.2p+0f, 0x1.1cp+0f, 0x1.18p+0f, 0x1.14p+0f,
    0x1.1p+0f, 0x1.0cp+0f, 0x1.08p+0f, 0x1p+0f};
static const float pf_th[32] = {
    0x0p+0f, 0x1.1bbp-4f, 0x1.e0bp-4f, 0x1.22d8p-3f,
    0x1.8a88p-3f, 0x1.dacp-3f, 0x1.169cp-2f, 0x1.32cp-2f,
    0x1.5dfcp-2f, 0x1.7b88p-2f, 0x1.a9p-2f, 0x1.c818p-2f,
    0x1.e7ep-2f, 0x1.042cp-1f, 0x1.14c6p-1f, 0x1.25cp-1f,
    0x1.3722p-1f, 0x1.3ffap-1f, 0x1.52p-1f, 0x1.5b2cp-1f,
    0x1.6dep-1f, 0x1.7768p-1f, 0x1.8ad8p-1f, 0x1.94c2p-1f,
    0x1.a9p-1f, 0x1.b354p-1f, 0x1.bdcep-1f, 0x1.c87p-1f,
    0x1.d338p-1f, 0x1.de2ap-1f, 0x1.e946p-1f, 0x1p+0f};
static const float pf_tl[32] = {
    0x0p+0f, 0x1.953002p-19f, 0x1.ae8f3p-20f, 0x1.6e155ap-18f,
    0x1.80abfcp-19f, 0x1.169f22p-18f, 0x1.4d8fc6p-24f, -0x1.1c8f12p-22f,
    0x1.cf1eeap-18f, 0x1.f02cf2p-18f, -0x1.a39fbep-20f, 0x1.dc2d46p-18f,
    -0x1.40358ep-19f, -0x1.5a32c2p-20f, -0x1.3e032ep-18f, 0x1.408c78p-18f,
    0x1.5db83ap-20f, 0x1.a9ce9ep-18f, -0x1.a39fbep-18f, 0x1.ed0cbap-20f,
    -0x1.eac382p-20f, -0x1.f6b4c2p-20f, 0x1.1b3cdap-19f, 0x1.0e9258p-18f,
    -0x1.a39fbep-19f, 0x1.61d876p-19f, 0x1.3b992cp-18f, -0x1.0902b6p-18f,
    0x1.20a6dep-21f, -0x1.c4fd14p-19f, -0x1.a6eb1ep-18f, 0x0p+0f};
static const float pf_eh[32] = {
    0x1p+0f, 0x1.059b0ep+0f, 0x1.0b5586p+0f, 0x1.11301ep+0f,
    0x1.172b84p+0f, 0x1.1d4874p+0f, 0x1.2387a6p+0f, 0x1.29e9ep+0f,
    0x1.306fep+0f, 0x1.371a74p+0f, 0x1.3dea64p+0f, 0x1.44e086p+0f,
    0x1.4bfdaep+0f, 0x1.5342b6p+0f, 0x1.5ab07ep+0f, 0x1.6247ecp+0f,
    0x1.6a09e6p+0f, 0x1.71f75ep+0f, 0x1.7a1148p+0f, 0x1.82589ap+0f,
    0x1.8ace54p+0f, 0x1.93737cp+0f, 0x1.9c4918p+0f, 0x1.a5503cp+0f,
    0x1.ae89fap+0f, 0x1.b7f77p+0f, 0x1.c199bep+0f, 0x1.cb720ep+0f,
    0x1.d5818ep+0f, 0x1.dfc974p+0f, 0x1.ea4afap+0f, 0x1.f50766p+0f};
static const float pf_rl[32] = {
    0x0p+0f, -0x1.947414p-25f, 0x1.8d96d4p-25f, -0x1.dda2fcp-25f,
    -0x1.9c0c22p-27f, -0x1.a2fbb2p-25f, 0x1.964904p-25f, -0x1.2b0dbcp-25f,
    0x1.125002p-25f, -0x1.cde8cep-26f, 0x1.370be4p-25f, 0x1.336de2p-30f,
    -0x1.0a355p-25f, -0x1.c541b4p-26f, -0x1.00d8acp-27f, -0x1.6cb284p-25f,
    0x1.26055cp-26f, 0x1.8b2bb8p-26f, -0x1.05cb44p-25f, -0x1.1c2142p-26f,
    0x1.67a1cap-28f, -0x1.348e56p-25f, 0x1.a3b5e4p-28f, -0x1.0b7ec8p-25f,
    -0x1.f9c304p-27f, -0x1.e4c886p-26f, -0x1.6961b4p-28f, -0x1.b5151ep-28f,
    -0x1.a5217cp-28f, -0x1.ab7132p-26f, 0x1.61428ep-28f, -0x1.2ad5f8p-27f};

/* The float-pair log2 after a level's table reduction (pf_reduce,
 * pg_reduce): a = 2^e z, r = z c_i - 1 exactly, h = e + the high part
 * of -log2 c_i and tl its low part (looked up by the caller), written
 * once over vmath_simd.h's vf for both levels.  pf_log2 says
 * what each form computes and how well. */
static inline void pv_log2_full(vf r, vf h, vf tl, vf *shp, vf *llp)
{
    const vf ilh = v_set1(0x1.715476p+0f);
    const vf ill = v_set1(0x1.4ae0cp-26f);
    /* r - r^2/2 = vh + vl - sl/2 (sq + sl = r^2 exactly; vl, the
     * rounding error of vh, exactly: r - vh is exact by Sterbenz) */
    const vf half = v_set1(0.5f);
    vf sq = v_mul(r, r);
    vf sl = v_fms(r, r, sq);
    vf vh = v_fnma(half, sq, r);
    vf vl = v_fnma(half, sq, v_sub(r, vh));
    /* times 1/ln 2: uh + ul */
    vf uh = v_mul(vh, ilh);
    vf ul = v_fms(vh, ilh, uh);
    ul = v_fma(vl, ilh, ul);
    ul = v_fma(vh, ill, ul);
    ul = v_fma(sl, v_set1(-0x1.715476p-1f), ul);
    /* h + uh = sh + s2 (Fast2Sum: |h| > |uh| or h = 0) */
    vf sh = v_add(h, uh);
    vf s2 = v_sub(uh, v_sub(sh, h));
    vf g = v_set1(-0x1.ece42p-3f);
    g = v_fma(g, r, v_set1(0x1.27ab92p-2f));
    g = v_fma(g, r, v_set1(-0x1.715472p-2f));
    g = v_fma(g, r, v_set1(0x1.ec709cp-2f));
    vf ll = v_add(v_add(ul, tl), s2);
    *llp = v_fma(v_mul(sq, r), g, ll);
    *shp = sh;
}

static inline void pv_log2_short(vf r, vf h, vf tl, vf *shp, vf *llp)
{
    const vf ilh = v_set1(0x1.715476p+0f);
    vf uh = v_mul(r, ilh);
    /* uh a value of its own: half_simd.h's 16-bit loops run this in
     * files built with contraction allowed, where a compiler may turn
     * h + uh and the Fast2Sum's uh - (sh - h) into fmas of r ilh
     * (other bits; GCC 12 does not: the same instructions without
     * this); the empty asm costs nothing */
    __asm__("" : "+v"(uh));
    vf ul = v_fms(r, ilh, uh);
    vf sh = v_add(h, uh);
    vf s2 = v_sub(uh, v_sub(sh, h));
    vf q = v_set1(-0x1.ecfb3ep-3f);
    q = v_fma(q, r, v_set1(0x1.27b8c6p-2f));
    q = v_fma(q, r, v_set1(-0x1.71547p-2f));
    q = v_fma(q, r, v_set1(0x1.ec709ap-2f));
    q = v_fma(q, r, v_set1(-0x1.715476p-1f));
    q = v_fma(q, r, v_set1(0x1.4ae0cp-26f));
    vf ll = v_add(v_add(tl, ul), s2);
    *llp = v_fma(r, q, ll); /* r (ILL + r Q(r)) */
    *shp = sh;
}

#if RS_W == 8
/* ---- AVX-512: 16 float lanes (see the header comment) ---- */

/* tab[i & 31] (pf_eh, pf_rl: 2^(j/32) = pf_eh (1 + pf_rl), within
 * 2^-47 relative) */
static inline __m512 pf_lut32(const float *tab, __m512i i)
{
    return _mm512_permutex2var_ps(_mm512_loadu_ps(tab), i,
                                  _mm512_loadu_ps(tab + 16));
}

/* The float lanes' a^b: pf_reduce, then pf_log2's short or full form
 * (log2 a as a float pair sh + ll), then pf_exp2: y = b (sh + ll),
 * k = round(32 y) (from an approximate y), f = y - k/32 as (b sh -
 * k/32) + b ll, each sum rounded once by an fma (|f| <= 1/64 + 2^-20),
 * 2^f - 1 = f P(f) (P of degree 2,
 * fitted: 2^f within 2^-32.4 relative), 2^(k/32) = 2^(k >> 5) eh (1 +
 * rl) with eh, rl = pf_eh, pf_rl at k & 31, summed as eh + eh (f P +
 * rl) by one fma, the result's only rounding (vscalefps is exact for
 * the normal results allowed). */

/* The common start of both log2 forms: r (exact), h = e - log2 c's
 * high part (exact), i (the table index); z NaN for a negative a (-0
 * included), so y turns NaN; getexp gives -inf for 0, inf for inf. */
static inline __m512 pf_reduce(__m512 a, __m512 *h, __m512i *i)
{
    __m512 z = _mm512_getmant_ps(a, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_nan);
    *i = _mm512_srli_epi32(_mm512_castps_si512(z), 18);
    *h = _mm512_add_ps(_mm512_getexp_ps(a), pf_lut32(pf_th, *i)); /* exact */
    return _mm512_fmsub_ps(z, pf_lut32(pf_c, *i), _mm512_set1_ps(1.0f));
}

/* log2 a = *sh + *ll; full (a constant) picks the form:
 *   full:  within about 2^-32.8 relative (PF_Y2: for |b log2 a| up to
 *          124): h + (r - r^2/2)/ln 2 + r^3 G(r), the first two terms as
 *          float pairs, G of degree 3 (fitted, the cubic term's relative
 *          error wrt log2(1 + r) below 2^-35);
 *   short: within about 2^-28.2 relative (PF_Y1: for |b log2 a| up to
 *          8): r/ln 2 as an exact pair, the rest r^2 Q(r) in plain float,
 *          Q of degree 4 (fitted, relative error wrt log2(1 + r) below
 *          2^-32). */
static inline void pf_log2(__m512 a, int full, __m512 *shp, __m512 *llp)
{
    __m512 h;
    __m512i i;
    __m512 r = pf_reduce(a, &h, &i);
    if (full)
        pv_log2_full(r, h, pf_lut32(pf_tl, i), shp, llp);
    else
        pv_log2_short(r, h, pf_lut32(pf_tl, i), shp, llp);
}

#define PF_Y1 8.0f
#define PF_Y2 124.0f

/* 2^(b (sh + ll)) where *ok has the lane's bit set: |b (sh + ll)| <=
 * lim (NaN: not set); other lanes unspecified */
static inline __m512 pf_exp2(__m512 b, __m512 sh, __m512 ll, float lim,
                             __mmask16 *ok)
{
    const __m512 M = _mm512_set1_ps(0x1.8p23f);
    /* ys ~ y = b (sh + ll), for k and the check only */
    __m512 ys = _mm512_fmadd_ps(b, sh, _mm512_mul_ps(b, ll));
    *ok = _mm512_cmp_ps_mask(_mm512_abs_ps(ys), _mm512_set1_ps(lim),
                             _CMP_LE_OQ);
    /* kd = 0x1.8p23 + k, k = round(32 ys) (its low 5 bits: k & 31);
     * pk = k/32 (exact) */
    __m512 kd = _mm512_fmadd_ps(ys, _mm512_set1_ps(32.0f), M);
    __m512 pk = _mm512_fmsub_ps(kd, _mm512_set1_ps(0x1p-5f),
                                _mm512_set1_ps(0x1.8p18f));
    /* f = y - k/32: b sh - k/32 rounded once, then b ll added and
     * rounded once */
    __m512 f = _mm512_fmadd_ps(b, ll, _mm512_fmsub_ps(b, sh, pk));
    __m512 p = _mm512_set1_ps(0x1.c6b13cp-5f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.ebfcccp-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.62e43p-1f));
    /* 2^(k/32 + f) ~ eh (1 + rl) (1 + f P) ~ eh + eh (f P + rl) */
    __m512i kb = _mm512_castps_si512(kd);
    __m512 t = _mm512_fmadd_ps(p, f, pf_lut32(pf_rl, kb));
    __m512 eh = pf_lut32(pf_eh, kb);
    __m512 s = _mm512_fmadd_ps(t, eh, eh);
    /* times 2^(k >> 5) = 2^floor(k/32) (exact), by vscalefps (pk
     * serves f and vscalefps: no negated copy) */
    return _mm512_scalef_ps(s, pk);
}

/* a^b on 16 float lanes by pf_log2's full or short form (full: a
 * constant) and pf_exp2 with that form's limit; *ok: the lanes done */
static inline __m512 pf_pow16(__m512 a, __m512 b, int full, __mmask16 *ok)
{
    __m512 sh, ll;
    pf_log2(a, full, &sh, &ll);
    return pf_exp2(b, sh, ll, full ? PF_Y2 : PF_Y1, ok);
}

/* pw_pow_full on 16 float lanes, in two halves of doubles */
static inline __m512 pf_pow_slow(__m512 a, __m512 b)
{
    rd a0 = _mm512_cvtps_pd(_mm512_castps512_ps256(a));
    rd a1 = _mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1));
    rd b0 = _mm512_cvtps_pd(_mm512_castps512_ps256(b));
    rd b1 = _mm512_cvtps_pd(_mm512_extractf32x8_ps(b, 1));
    __m256 o0 = _mm512_cvtpd_ps(pw_pow(a0, b0));
    __m256 o1 = _mm512_cvtpd_ps(pw_pow(a1, b1));
    return _mm512_insertf32x8(_mm512_castps256_ps512(o0), o1, 1);
}

/* the full log2's float path, else the double one */
static inline __m512 pf_pow_long(__m512 a, __m512 b)
{
    __mmask16 ok;
    __m512 r = pf_pow16(a, b, 1, &ok);
    return ok == 0xffff ? r : pf_pow_slow(a, b);
}

/* the short log2's float path (every lane |y| <= 8), else pf_pow_long */
static inline __m512 pf_pow(__m512 a, __m512 b)
{
    __mmask16 ok;
    __m512 r = pf_pow16(a, b, 0, &ok);
    return ok == 0xffff ? r : pf_pow_long(a, b);
}

/* pw_pow_f32's step in two stages (see its comment): the log2 of two
 * vectors, then their exp2, the check and the store.  The stages compute
 * exactly pf_pow16's short-form operations, so the results are those
 * of pf_pow16 (or, where a lane fails its check, pf_pow_long) per
 * vector. */
typedef struct {
    __m512 b0, sh0, ll0, b1, sh1, ll1;
} pf_blk;

static inline void pf_stage_log(const float *a, int64_t sa, const float *b,
                                int64_t sb, __m512 a0, __m512 b0, int64_t i,
                                pf_blk *s)
{
    __m512 va = sa ? _mm512_loadu_ps(a + i) : a0;
    __m512 wa = sa ? _mm512_loadu_ps(a + i + 16) : a0;
    s->b0 = sb ? _mm512_loadu_ps(b + i) : b0;
    s->b1 = sb ? _mm512_loadu_ps(b + i + 16) : b0;
    pf_log2(va, 0, &s->sh0, &s->ll0);
    pf_log2(wa, 0, &s->sh1, &s->ll1);
}

/* pf_stage_exp's rare case (a lane off the short log2's fast path):
 * both vectors again by pf_pow, stored at o + i.  Out of line on the
 * cold branch: inlined (pf_pow_long per vector), its register needs
 * made the loop spill its carried state, 6% slower at 64x64 (tbench ab,
 * one run). */
__attribute__((noinline)) static void pf_step_slow(const float *a, int64_t sa,
                                                   const float *b, int64_t sb,
                                                   int64_t i, float *o)
{
    for (int64_t j = i; j < i + 32; j += 16) {
        __m512 va = sa ? _mm512_loadu_ps(a + j) : _mm512_set1_ps(a[0]);
        __m512 vb = sb ? _mm512_loadu_ps(b + j) : _mm512_set1_ps(b[0]);
        _mm512_storeu_ps(o + j, pf_pow(va, vb));
    }
}

static inline void pf_stage_exp(const float *a, int64_t sa, const float *b,
                                int64_t sb, int64_t i, const pf_blk *s,
                                float *o)
{
    __mmask16 k0, k1;
    __m512 r0 = pf_exp2(s->b0, s->sh0, s->ll0, PF_Y1, &k0);
    __m512 r1 = pf_exp2(s->b1, s->sh1, s->ll1, PF_Y1, &k1);
    /* before any store of this step: o may be a or b */
    if (__builtin_expect((k0 & k1) != 0xffff, 0)) {
        pf_step_slow(a, sa, b, sb, i, o);
        return;
    }
    _mm512_storeu_ps(o + i, r0);
    _mm512_storeu_ps(o + i + 16, r1);
}

/* Software prefetch of a and b 4 KB ahead (the lines of the step 32
 * steps on), into L1: at 1024x1024 (12 MB, past the L2) the loop ran
 * well behind its memory bound with the hardware prefetchers alone
 * (tbench ab, 1 thread, load ~4: 540 -> 507 us 2 KB ahead, 4 KB a
 * further 5% faster; 8 KB, one line of each pair, or prefetchw of o no
 * better; in cache no change).  Addresses by integer arithmetic: they
 * may lie past the arrays (a prefetch does not fault); with sa or sb 0
 * the same address every step. */
static inline void pf_prefetch(const float *a, const float *b)
{
    const uintptr_t ua = (uintptr_t)a + 4096, ub = (uintptr_t)b + 4096;
    _mm_prefetch((const char *)ua, _MM_HINT_T0);
    _mm_prefetch((const char *)(ua + 64), _MM_HINT_T0);
    _mm_prefetch((const char *)ub, _MM_HINT_T0);
    _mm_prefetch((const char *)(ub + 64), _MM_HINT_T0);
}

/* o[i] = a[i sa]^b[i sb], sa and sb 0 or 1.  Two vectors a step, the
 * loop software-pipelined: step k's log2 (pf_stage_log) and step k - 1's
 * exp2 (pf_stage_exp) in one iteration, so the exp2's inputs are ready
 * when it issues.  One vector's chain (vgetmantps, the table reads,
 * the Horner steps, k, f, P, the last fmas: ~80 cycles) is about twice
 * a step's port time, so in the plain loop (both stages of a step in
 * one iteration) the scheduler filled with one step's waiting
 * operations before the next step's independent ones could enter: it
 * ran at about twice its port bound.  The rare vector off the short
 * log2's path is redone out of line (pf_step_slow), so no call
 * clobbers the loop's registers.  llvm-mca 14 -mcpu=icelake-server on
 * scripts/kernel_bounds.c's kb_pow (one step, 32 elements; ports 0 and
 * 5 about 44 uops each): simulated 75.5 -> 61 cycles a step; tbench ab
 * of release builds of main and of this, 1 thread, load ~4: 64x64
 * 2.30 -> 1.78 us (~1.3 cycles an element), 1024x1024 649 -> 543 us. */
static inline void pw_pow_f32(const void *ap, int64_t sa, const void *bp,
                              int64_t sb, void *op, int64_t n)
{
    const float *a = ap, *b = bp;
    float *o = op;
    int64_t i = 0;
    if (n <= 0)
        return;
    const __m512 a0 = _mm512_set1_ps(a[0]), b0 = _mm512_set1_ps(b[0]);
    if (n >= 32) {
        pf_blk s, t;
        pf_stage_log(a, sa, b, sb, a0, b0, 0, &s);
        for (i = 32; i + 32 <= n; i += 32) {
            pf_prefetch(a + i * sa, b + i * sb);
            pf_stage_log(a, sa, b, sb, a0, b0, i, &t);
            pf_stage_exp(a, sa, b, sb, i - 32, &s, o);
            s = t;
        }
        pf_stage_exp(a, sa, b, sb, i - 32, &s, o);
    }
    for (; i + 16 <= n; i += 16) {
        __m512 va = sa ? _mm512_loadu_ps(a + i) : a0;
        __m512 vb = sb ? _mm512_loadu_ps(b + i) : b0;
        _mm512_storeu_ps(o + i, pf_pow(va, vb));
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 va = sa ? _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, a + i) : a0;
        __m512 vb = sb ? _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, b + i) : b0;
        _mm512_mask_storeu_ps(o + i, m, pf_pow(va, vb));
    }
}
#else
/* ---- AVX2: 8 float lanes, pf_'s method without vgetmantps, vgetexpps
 * and vscalefps (see the header comment) ---- */

/* tab[i & 31] from x, tab's four rows of 8 XORed (bit patterns) as
 * pg_xtab makes them, by four vpermd (each takes i's low 3 bits) and
 * masks of i's bits 3 and 4: x0 ^ (m3 & x1) ^ (m4 & x2) ^ (m3 m4 & x3)
 * is row (m3 + 2 m4).  (Two levels of vblendvps, 3 uops each on this
 * machine's cores, and one vgatherdps a table measured no faster.) */
typedef struct {
    __m256i x[4];
} pg_tab;

static inline void pg_xtab(const void *tab, pg_tab *t)
{
    const __m256i *v = tab;
    __m256i r0 = _mm256_loadu_si256(v), r1 = _mm256_loadu_si256(v + 1);
    __m256i r2 = _mm256_loadu_si256(v + 2), r3 = _mm256_loadu_si256(v + 3);
    t->x[0] = r0;
    t->x[1] = _mm256_xor_si256(r0, r1);
    t->x[2] = _mm256_xor_si256(r0, r2);
    t->x[3] = _mm256_xor_si256(_mm256_xor_si256(r0, r1),
                               _mm256_xor_si256(r2, r3));
}

/* the tables pg_ looks up, made once a call */
typedef struct {
    pg_tab cth, tl;
    __m256 eh8, rl8;
} pg_tabs;

/* 2^(j/8) = eh (1 + rl) for j = 0..7: pf_eh, pf_rl at 4j */
static inline __m256 pg_tab8(const float *t)
{
    return _mm256_setr_ps(t[0], t[4], t[8], t[12], t[16], t[20], t[24], t[28]);
}

static inline void pg_tabs_init(pg_tabs *t)
{
    /* pf_c's bits 0..16 are clear (at most 7 significant bits), pf_th
     * is 2^-16 times an integer in [0, 2^16]: both in one word, c's bits
     * above 16 and pf_th 2^16 below (scripts/pow_f32_tables.py checks
     * both) */
    uint32_t cth[32];
    for (int i = 0; i < 32; i++) {
        uint32_t u;
        memcpy(&u, &pf_c[i], sizeof u);
        cth[i] = (u & 0xfffe0000u) | (uint32_t)(pf_th[i] * 0x1p16f);
    }
    pg_xtab(cth, &t->cth);
    pg_xtab(pf_tl, &t->tl);
    t->eh8 = pg_tab8(pf_eh);
    t->rl8 = pg_tab8(pf_rl);
}

static inline __m256 pg_lut32(const pg_tab *t, __m256i i)
{
    const __m256i m3 = _mm256_srai_epi32(_mm256_slli_epi32(i, 28), 31);
    const __m256i m4 = _mm256_srai_epi32(_mm256_slli_epi32(i, 27), 31);
    __m256i v = _mm256_permutevar8x32_epi32(t->x[0], i);
    v = _mm256_xor_si256(v, _mm256_and_si256(
                                m3, _mm256_permutevar8x32_epi32(t->x[1], i)));
    v = _mm256_xor_si256(v, _mm256_and_si256(
                                m4, _mm256_permutevar8x32_epi32(t->x[2], i)));
    v = _mm256_xor_si256(v, _mm256_and_si256(
                                _mm256_and_si256(m3, m4),
                                _mm256_permutevar8x32_epi32(t->x[3], i)));
    return _mm256_castsi256_ps(v);
}

/* pf_reduce for a positive normal finite a (other lanes: unspecified;
 * pg_pow8 screens them): u = bits(a) - bits(0.75), z = 2^-(u >> 23) a
 * in [0.75, 1.5) as (u & 0x7fffff) + bits(0.75), as vgetmantps gives
 * it, and vgetexpps's floor(log2 a) from bits(a)'s exponent field. */
static inline __m256 pg_reduce(const pg_tabs *T, __m256 a, __m256 *h,
                                __m256i *i)
{
    const __m256i ia = _mm256_castps_si256(a);
    const __m256i b75 = _mm256_set1_epi32(0x3f400000);
    __m256i u = _mm256_sub_epi32(ia, b75);
    __m256 z = _mm256_castsi256_ps(_mm256_add_epi32(
        _mm256_and_si256(u, _mm256_set1_epi32(0x7fffff)), b75));
    __m256 ge = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(ia, 23),
                                                    _mm256_set1_epi32(127)));
    *i = _mm256_srli_epi32(_mm256_castps_si256(z), 18);
    __m256i x = _mm256_castps_si256(pg_lut32(&T->cth, *i));
    __m256 c = _mm256_castsi256_ps(
        _mm256_and_si256(x, _mm256_set1_epi32((int)0xfffe0000u)));
    __m256 th = _mm256_cvtepi32_ps(_mm256_and_si256(x, _mm256_set1_epi32(0x1ffff)));
    *h = _mm256_fmadd_ps(th, _mm256_set1_ps(0x1p-16f), ge); /* exact */
    return _mm256_fmsub_ps(z, c, _mm256_set1_ps(1.0f));
}

/* pf_log2 on 8 lanes */
static inline void pg_log2(const pg_tabs *T, __m256 a, int full,
                           __m256 *shp, __m256 *llp)
{
    __m256 h;
    __m256i i;
    __m256 r = pg_reduce(T, a, &h, &i);
    if (full)
        pv_log2_full(r, h, pg_lut32(&T->tl, i), shp, llp);
    else
        pv_log2_short(r, h, pg_lut32(&T->tl, i), shp, llp);
}

#define PF_Y1 8.0f
#define PF_Y2 124.0f

/* pf_exp2 on 8 lanes with 8-entry tables (one vpermps each): k =
 * round(8 ys), f = y - k/8 (|f| <= 1/16 + 2^-20), 2^f - 1 = f P8(f),
 * P8 of degree 3 (fitted: 2^f within 2^-31.5 relative); the lanes' mask
 * (every bit set: all 8 ok) also requires a positive normal finite a
 * (pg_reduce's domain).  2^(k >> 3) goes into s's exponent field by an
 * integer add: s in [1 - 2^-24, 2) and |k >> 3| <= 124 keep the result
 * normal, so it is exact. */
static inline __m256 pg_exp2(const pg_tabs *T, __m256 a, __m256 b, __m256 sh,
                             __m256 ll, float lim, int *ok)
{
    const __m256 M = _mm256_set1_ps(0x1.8p23f);
    __m256 ys = _mm256_fmadd_ps(b, sh, _mm256_mul_ps(b, ll));
    __m256 ay = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), ys);
    __m256 m = _mm256_cmp_ps(ay, _mm256_set1_ps(lim), _CMP_LE_OQ);
    m = _mm256_and_ps(m, _mm256_cmp_ps(a, _mm256_set1_ps(0x1p-126f), _CMP_GE_OQ));
    m = _mm256_and_ps(m, _mm256_cmp_ps(a, _mm256_set1_ps(INFINITY), _CMP_LT_OQ));
    *ok = _mm256_movemask_ps(m);
    /* kd = 0x1.8p23 + k (its low 3 bits: k & 7); nk = -k/8 (exact) */
    __m256 kd = _mm256_fmadd_ps(ys, _mm256_set1_ps(8.0f), M);
    __m256 nk = _mm256_fmadd_ps(kd, _mm256_set1_ps(-0.125f),
                                _mm256_set1_ps(0x1.8p20f));
    __m256 f = _mm256_fmadd_ps(b, ll, _mm256_fmadd_ps(b, sh, nk));
    __m256 p = _mm256_set1_ps(0x1.3b3106p-7f);
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(0x1.c6bb7ap-5f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(0x1.ebfbep-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(0x1.62e43p-1f));
    __m256i kb = _mm256_castps_si256(kd);
    __m256 t = _mm256_fmadd_ps(p, f, _mm256_permutevar8x32_ps(T->rl8, kb));
    __m256 eh = _mm256_permutevar8x32_ps(T->eh8, kb);
    __m256 s = _mm256_fmadd_ps(t, eh, eh);
    /* bits(kd) = bits(0x1.8p23) + k, bits(0x1.8p23)'s low 3 bits clear:
     * with the low 3 cleared, shifted by 20, (k >> 3) << 23 mod 2^32 */
    __m256i e = _mm256_slli_epi32(_mm256_and_si256(kb, _mm256_set1_epi32(~7)),
                                  20);
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(s), e));
}

/* pf_pow16 on 8 lanes */
static inline __m256 pg_pow8(const pg_tabs *T, __m256 a, __m256 b, int full,
                             int *ok)
{
    __m256 sh, ll;
    pg_log2(T, a, full, &sh, &ll);
    return pg_exp2(T, a, b, sh, ll, full ? PF_Y2 : PF_Y1, ok);
}

/* pw_pow on 8 float lanes, in two halves of doubles */
static inline __m256 pg_pow_slow(__m256 a, __m256 b)
{
    rd a0 = _mm256_cvtps_pd(_mm256_castps256_ps128(a));
    rd a1 = _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
    rd b0 = _mm256_cvtps_pd(_mm256_castps256_ps128(b));
    rd b1 = _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1));
    return _mm256_set_m128(_mm256_cvtpd_ps(pw_pow(a1, b1)),
                           _mm256_cvtpd_ps(pw_pow(a0, b0)));
}

static inline __m256 pg_pow_long(const pg_tabs *T, __m256 a, __m256 b)
{
    int ok;
    __m256 r = pg_pow8(T, a, b, 1, &ok);
    return ok == 0xff ? r : pg_pow_slow(a, b);
}

static inline __m256 pg_pow(const pg_tabs *T, __m256 a, __m256 b)
{
    int ok;
    __m256 r = pg_pow8(T, a, b, 0, &ok);
    return ok == 0xff ? r : pg_pow_long(T, a, b);
}

/* pw_pow_f32's step in two stages, as AVX-512's (pf_blk): the log2 of
 * two vectors, then their exp2, the check and the store; the results are
 * pg_pow8's short form's (or, where a lane fails its check,
 * pg_pow_long's) per vector. */
typedef struct {
    __m256 a0, b0, sh0, ll0, a1, b1, sh1, ll1;
} pg_blk;

static inline void pg_stage_log(const pg_tabs *T, const float *a, int64_t sa,
                                const float *b, int64_t sb, __m256 a0,
                                __m256 b0, int64_t i, pg_blk *s)
{
    s->a0 = sa ? _mm256_loadu_ps(a + i) : a0;
    s->a1 = sa ? _mm256_loadu_ps(a + i + 8) : a0;
    s->b0 = sb ? _mm256_loadu_ps(b + i) : b0;
    s->b1 = sb ? _mm256_loadu_ps(b + i + 8) : b0;
    pg_log2(T, s->a0, 0, &s->sh0, &s->ll0);
    pg_log2(T, s->a1, 0, &s->sh1, &s->ll1);
}

/* pg_stage_exp's rare case: both vectors again by pg_pow, stored at
 * o + i (out of line, as pf_step_slow) */
__attribute__((noinline)) static void pg_step_slow(const pg_tabs *T,
                                                   const float *a, int64_t sa,
                                                   const float *b, int64_t sb,
                                                   int64_t i, float *o)
{
    for (int64_t j = i; j < i + 16; j += 8) {
        __m256 va = sa ? _mm256_loadu_ps(a + j) : _mm256_set1_ps(a[0]);
        __m256 vb = sb ? _mm256_loadu_ps(b + j) : _mm256_set1_ps(b[0]);
        _mm256_storeu_ps(o + j, pg_pow(T, va, vb));
    }
}

static inline void pg_stage_exp(const pg_tabs *T, const float *a, int64_t sa,
                                const float *b, int64_t sb, int64_t i,
                                const pg_blk *s, float *o)
{
    int k0, k1;
    __m256 r0 = pg_exp2(T, s->a0, s->b0, s->sh0, s->ll0, PF_Y1, &k0);
    __m256 r1 = pg_exp2(T, s->a1, s->b1, s->sh1, s->ll1, PF_Y1, &k1);
    /* before any store of this step: o may be a or b */
    if (__builtin_expect((k0 & k1) != 0xff, 0)) {
        pg_step_slow(T, a, sa, b, sb, i, o);
        return;
    }
    _mm256_storeu_ps(o + i, r0);
    _mm256_storeu_ps(o + i + 8, r1);
}

/* o[i] = a[i sa]^b[i sb], sa and sb 0 or 1; two vectors a step, the
 * loop software-pipelined as AVX-512's (llvm-mca as there: simulated
 * 87 -> 64 cycles a step of 16 elements, though the carried state
 * spills some of AVX2's 16 registers; tbench ab as there, isa=avx2:
 * 64x64 6.21 -> 5.50 us, 1024x1024 1.61 -> 1.45 ms) */
static inline void pw_pow_f32(const void *ap, int64_t sa, const void *bp,
                              int64_t sb, void *op, int64_t n)
{
    const float *a = ap, *b = bp;
    float *o = op;
    int64_t i = 0;
    if (n <= 0)
        return;
    const __m256 a0 = _mm256_set1_ps(a[0]), b0 = _mm256_set1_ps(b[0]);
    pg_tabs T;
    pg_tabs_init(&T);
    if (n >= 16) {
        pg_blk s, t;
        pg_stage_log(&T, a, sa, b, sb, a0, b0, 0, &s);
        for (i = 16; i + 16 <= n; i += 16) {
            pg_stage_log(&T, a, sa, b, sb, a0, b0, i, &t);
            pg_stage_exp(&T, a, sa, b, sb, i - 16, &s, o);
            s = t;
        }
        pg_stage_exp(&T, a, sa, b, sb, i - 16, &s, o);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 va = sa ? _mm256_loadu_ps(a + i) : a0;
        __m256 vb = sb ? _mm256_loadu_ps(b + i) : b0;
        _mm256_storeu_ps(o + i, pg_pow(&T, va, vb));
    }
    if (i < n) {
        float ta[8], tb[8], to[8];
        const int64_t w = n - i;
        for (int l = 0; l < 8; l++)
            ta[l] = tb[l] = 1.0f;
        for (int64_t l = 0; l < w; l++) {
            ta[l] = a[(i + l) * sa];
            tb[l] = b[(i + l) * sb];
        }
        _mm256_storeu_ps(to, pg_pow(&T, _mm256_loadu_ps(ta), _mm256_loadu_ps(tb)));
        memcpy(o + i, to, (size_t)w * sizeof *o);
    }
}

#endif

/* For the sweep test: o[i] = a[i]^b[i], i < n. */
#define PW_CAT_(a, b) a##b
#define PW_CAT(a, b) PW_CAT_(a, b)
#define PW_ENTRIES(SFX, LV)                                               \
    int TB_CPU_KFN(pow, f32, SFX)(void *ctx, const tb_tensor *in,         \
                                  tb_tensor *out, const tb_params *p)     \
    {                                                                     \
        return tb_cpu_simd_binary(ctx, LV, TB_OP_pow, TB_F32, in, out, p, \
                                  pw_pow_f32);                            \
    }                                                                     \
    void PW_CAT(tb_cpu_pow_f32_, SFX)(const float *a, const float *b,     \
                                      float *o, int64_t n)                \
    {                                                                     \
        pw_pow_f32(a, 1, b, 1, o, n);                                     \
    }

#endif
