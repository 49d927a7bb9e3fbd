/* pow f32's SIMD rows (AVX2, AVX-512; ops_simd.h's binary driver does
 * the checks, broadcasting and threads), for inclusion by pow_avx2.c and
 * pow_avx512.c only, each built with its level's flags.
 *
 * a^b is computed in double lanes as 2^(b log2 |a|) and rounded to
 * float once.  log2 (pw_log2): a = 2^e z, a 16-entry table (by
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
#include "kreg.h"
#include "ops_simd.h"

/* tab[i & 15] for 64-bit lane indices i */
static inline rd pw_lut16(const double *tab, ri i)
{
#if RS_W == 8
    return _mm512_permutex2var_pd(_mm512_loadu_pd(tab), i,
                                  _mm512_loadu_pd(tab + 8));
#else
    return _mm256_i64gather_pd(tab, rs_iand(i, rs_i1(15)), 8);
#endif
}

/* log2: a = 2^e z, z in [PW_OFF, 2 PW_OFF) (PW_OFF = 0x1.6ap-1), cut into
 * 16 intervals by the top 4 fraction bits of a - PW_OFF; interval i has
 * c_i (pw_invc: 1 / its midpoint, and exactly 1 for the interval
 * [0.98828125, 1.0390625) around 1, so bases next to 1 cancel nothing)
 * and -log2 c_i (pw_logc, rounded to double).  r = z c_i - 1 (one
 * fused rounding), |r| <= 0x1.4p-5. */
#define PW_OFF UINT64_C(0x3fe6a00000000000)
static const double pw_invc[16] = {
    0x1.623fa77016240p+0, 0x1.5390948f40febp+0, 0x1.460cbc7f5cf9ap+0,
    0x1.3991c2c187f63p+0, 0x1.2e025c04b8097p+0, 0x1.23456789abcdfp+0,
    0x1.19453808ca29cp+0, 0x1.0fef010fef011p+0, 0x1.073260a47f7c6p+0,
    0x1.0000000000000p+0, 0x1.de5d6e3f8868ap-1, 0x1.c3f8f01c3f8f0p-1,
    0x1.ac5701ac5701bp-1, 0x1.970e4f80cb872p-1, 0x1.83c977ab2beddp-1,
    0x1.724287f46debcp-1};
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
    ri t = rs_iadd(rs_asi(a), rs_i1((uint64_t)0 - PW_OFF));
    ri i = rs_isrl(t, 48);
    /* e = t >> 52 (arithmetic); AVX2 has no such shift: (t + 2^63) >> 52
     * is e + 2048 */
#if RS_W == 8
    rd e = _mm512_cvtepi64_pd(_mm512_srai_epi64(t, 52));
#else
    rd e = rs_sub(rs_cvt52(rs_isrl(rs_ixor(t, rs_i1(UINT64_C(1) << 63)), 52)),
                  rs_d1(2048.0));
#endif
    rd z = rs_asd(rs_iadd(rs_iand(t, rs_i1(0x000fffffffffffffu)),
                          rs_i1(PW_OFF)));
    rd r = rs_fma(z, pw_lut16(pw_invc, i), rs_d1(-1.0));
    rd q = rs_d1(0x1.9a47ce940a49bp-3);
    q = rs_fma(q, r, rs_d1(-0x1.ed013b99d1440p-3));
    q = rs_fma(q, r, rs_d1(0x1.2778d7b80844fp-2));
    q = rs_fma(q, r, rs_d1(-0x1.71546db59339ap-2));
    q = rs_fma(q, r, rs_d1(0x1.ec709d967f877p-2));
    q = rs_fma(q, r, rs_d1(-0x1.71547652dc875p-1));
    q = rs_fma(q, r, rs_d1(0x1.71547652b852bp+0));
    return rs_fma(q, r, rs_add(e, pw_lut16(pw_logc, i)));
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
    ri s = rs_iadd(rs_asi(pw_lut16(pw_exp2t, kb)),
                   rs_isll(rs_iand(kb, rs_i1(~UINT64_C(15))), 48));
    return rs_mul(p, rs_asd(s));
}

static inline rmask pw_isint(rd b) { return rs_eq(rs_round(b), b); }

/* a^b of float lanes held in doubles */
static inline rd pw_pow_full(rd a, rd b)
{
    const rd one = rs_d1(1.0), inf = rs_d1(INFINITY);
    rd ax = rs_abs(a);
    rd l = pw_log2(ax);
    l = rs_sel(rs_eq(ax, rs_d1(0.0)), rs_d1(-INFINITY), l);
    l = rs_sel(rs_eq(ax, inf), inf, l);
    rd y = rs_mul(b, l);
    y = rs_min(rs_max(y, rs_d1(-320.0)), rs_d1(320.0)); /* NaN: -320 */
    rd r = pw_exp2(y);
    rmask bint = pw_isint(b);
    rmask bodd = rs_mandn(pw_isint(rs_mul(b, rs_d1(0.5))), bint);
    /* -|a|^b for a negative (sign bit set) and b odd */
    rd sg = rs_asd(rs_ior(rs_iand(rs_asi(a), rs_i1(UINT64_C(1) << 63)),
                          rs_asi(one))); /* copysign(1, a) */
    rmask neg = rs_lt(sg, rs_d1(0.0));
    r = rs_sel(rs_mand(neg, bodd), rs_dxor(r, rs_d1(-0.0)), r);
    /* finite a < 0, b not an integer: NaN */
    rmask nan = rs_mand(rs_mand(rs_lt(a, rs_d1(0.0)), rs_lt(ax, inf)),
                        rs_mandn(bint, rs_eq(b, b)));
    r = rs_sel(nan, rs_d1(NAN), r);
    r = rs_sel(rs_unord(a, b), rs_add(a, b), r);
    r = rs_sel(rs_mand(rs_eq(ax, one), rs_eq(rs_abs(b), inf)), one, r);
    return rs_sel(rs_mor(rs_eq(a, one), rs_eq(b, rs_d1(0.0))), one, r);
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

/* o[i] = a[i sa]^b[i sb], sa and sb 0 or 1 */
static void pw_pow_f32(const void *ap, int64_t sa, const void *bp,
                       int64_t sb, void *op, int64_t n)
{
    const float *a = ap, *b = bp;
    float *o = op;
    int64_t i = 0;
    if (n <= 0)
        return;
    const rd a0 = rs_d1((double)a[0]), b0 = rs_d1((double)b[0]);
    /* two vectors a step: their fast paths run side by side */
    for (; i + 2 * RS_W <= n; i += 2 * RS_W) {
        rd va = sa ? rs_loadf(a + i) : a0, wa = sa ? rs_loadf(a + i + RS_W) : a0;
        rd vb = sb ? rs_loadf(b + i) : b0, wb = sb ? rs_loadf(b + i + RS_W) : b0;
        rd y0 = rs_mul(vb, pw_log2(va)), y1 = rs_mul(wb, pw_log2(wa));
        if (pw_fast(va, y0) && pw_fast(wa, y1)) {
            rs_storef(o + i, pw_exp2(y0));
            rs_storef(o + i + RS_W, pw_exp2(y1));
        } else {
            rs_storef(o + i, pw_pow(va, vb));
            rs_storef(o + i + RS_W, pw_pow(wa, wb));
        }
    }
    for (; i + RS_W <= n; i += RS_W) {
        rd va = sa ? rs_loadf(a + i) : a0;
        rd vb = sb ? rs_loadf(b + i) : b0;
        rs_storef(o + i, pw_pow(va, vb));
    }
    if (i < n) {
        float ta[RS_W] = {0}, tb[RS_W] = {0}, to[RS_W];
        const int64_t w = n - i;
        for (int64_t l = 0; l < w; l++) {
            ta[l] = a[(i + l) * sa];
            tb[l] = b[(i + l) * sb];
        }
        rs_storef(to, pw_pow(rs_loadf(ta), rs_loadf(tb)));
        memcpy(o + i, to, (size_t)w * sizeof *o);
    }
}

/* For the sweep test: o[i] = a[i]^b[i], i < n. */
#define PW_CAT_(a, b) a##b
#define PW_CAT(a, b) PW_CAT_(a, b)
#define PW_ENTRIES(SFX, LV)                                               \
    int TB_CPU_KFN(pow, f32, SFX)(void *ctx, const tb_tensor *in,         \
                                  tb_tensor *out, const tb_params *p)     \
    {                                                                     \
        return tb_cpu_xs_binary(ctx, LV, TB_OP_pow, TB_F32, in, out, p,   \
                                pw_pow_f32);                              \
    }                                                                     \
    void PW_CAT(tb_cpu_pow_f32_, SFX)(const float *a, const float *b,     \
                                      float *o, int64_t n)                \
    {                                                                     \
        pw_pow_f32(a, 1, b, 1, o, n);                                     \
    }

#endif
