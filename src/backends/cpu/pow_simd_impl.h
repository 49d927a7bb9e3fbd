/* pow f32's SIMD rows (AVX2, AVX-512; ops_simd.h's binary driver does
 * the checks, broadcasting and threads), for inclusion by pow_avx2.c and
 * pow_avx512.c only, each built with its level's flags.
 *
 * a^b is computed in double lanes as exp(b log |a|) and rounded to float
 * once.  log: dvec_simd.h's rs_log, a few 2^-53 relative; b log |a| one
 * more rounding; exp: k = round(y / ln 2), r = y - k ln 2 (ln 2 in two
 * parts, fused), |r| <= 0.347, Taylor to r^12 (truncation below 2^-51),
 * times 2^k.  With |y| <= 200 wherever the float result is neither 0 nor
 * inf (|y| <= 104 for finite nonzero floats), the double is within about
 * 2^-42 relative of a^b, so the float is within 0.5 + 2^-17 ulp of the
 * exact a^b (subnormal results: of the subnormal spacing).  The sweep of
 * tests/test_checkasm.c (pow_ulp) checks 0.5 + 2^-12 against libm's
 * double pow; vmath_simd.h's float vs_exp/vs_log were not used: the
 * float log's error, multiplied by |y| up to ~100, would be ~50 ulp.
 *
 * A vector whose lanes all have a positive finite a and |b log a| <= 200
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

/* e^y for |y| <= 200 (NaN: unspecified, the caller selects) */
static inline rd pw_exp(rd y)
{
    rd k = rs_round(rs_mul(y, rs_d1(0x1.71547652b82fep+0))); /* 1/ln2 */
    rd r = rs_fma(k, rs_d1(-0x1.62e42fefa3800p-1), y);
    r = rs_fma(k, rs_d1(-0x1.ef35793c7673p-45), r);
    rd p = rs_d1(1.0 / 479001600.0); /* 1/12! */
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
    p = rs_fma(p, r, rs_d1(1.0));
    p = rs_fma(p, r, rs_d1(1.0));
    /* 2^k, |k| <= 289: k + 1023 in the exponent field */
    ri ki = rs_asi(rs_add(k, rs_d1(0x1.8p52 + 1023.0)));
    rd s = rs_asd(rs_isll(ki, 52));
    return rs_mul(p, s);
}

static inline rmask pw_isint(rd b) { return rs_eq(rs_round(b), b); }

/* a^b of float lanes held in doubles */
static inline rd pw_pow_full(rd a, rd b)
{
    const rd one = rs_d1(1.0), inf = rs_d1(INFINITY);
    rd ax = rs_abs(a);
    rd l = rs_log(ax);
    l = rs_sel(rs_eq(ax, rs_d1(0.0)), rs_d1(-INFINITY), l);
    l = rs_sel(rs_eq(ax, inf), inf, l);
    rd y = rs_mul(b, l);
    y = rs_min(rs_max(y, rs_d1(-200.0)), rs_d1(200.0)); /* NaN: -200 */
    rd r = pw_exp(y);
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
 * |b log a| <= 200 (b finite), pw_pow_full's selects all keep exp(b log
 * a) (1 where a = 1 or b = 0, exactly: log 1 = 0, exp 0 = 1), so that
 * is the result; else the full form. */
static inline rd pw_pow(rd a, rd b)
{
    rd y = rs_mul(b, rs_log(a));
    rmask ok = rs_mand(rs_lt(rs_d1(0.0), a), rs_lt(a, rs_d1(INFINITY)));
    ok = rs_mand(ok, rs_le(rs_abs(y), rs_d1(200.0)));
    if (rs_bits(ok) == (1u << RS_W) - 1)
        return pw_exp(y);
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
