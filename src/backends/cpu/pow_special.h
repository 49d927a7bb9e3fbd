/* pow's special values in double lanes, shared by pow f32's double path
 * (pow_simd_impl.h) and pow f64's rows (f64_simd_impl.h): C99/IEEE pow
 * (the portable rows' pow and powf).  For inclusion after dvec_simd.h
 * by those two headers only. */
#ifndef TB_BACKENDS_CPU_POW_SPECIAL_H
#define TB_BACKENDS_CPU_POW_SPECIAL_H

#include <math.h>
#include <stdint.h>

static inline rmask pw_isint(rd b) { return rs_eq(rs_round(b), b); }

/* a^b from r = |a|^b, where r already holds the limits of |a| = 0 or
 * inf and of an infinite b (log |a| as -inf, inf; 2^y or e^y of an
 * infinite y as 0 or inf): -r for a negative a (-0 and -inf included)
 * and an odd integer b; NaN for a finite a < 0 and a b that is not an
 * integer; NaN in gives NaN; then (-1)^(+-inf) = 1, and 1^b = a^(+-0) =
 * 1 even for NaN (infinite b is an even integer). */
static inline rd pw_special(rd a, rd b, rd r)
{
    const rd one = rs_d1(1.0), inf = rs_d1(INFINITY);
    rd ax = rs_abs(a);
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

#endif
