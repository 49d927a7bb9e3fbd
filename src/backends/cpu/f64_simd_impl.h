/* exp, log, pow, sigmoid, tanh, silu, softplus, gelu, gelu_tanh, the
 * ops written once (ew_defs.h: hardswish), neg, abs, sqrt, rsqrt,
 * leaky_relu, the scalar forms (add_scalar..div_scalar), maximum,
 * minimum, log_softmax and softmax (kernels.h's slots), log_softmax_backward, the
 * backward activations (relu, sigmoid, tanh, gelu), max, min, argmax
 * and var f64's SIMD rows (AVX2, AVX-512; ops_simd.h's unary, binary
 * and reduction drivers do the checks, axes and threads), for inclusion
 * by f64_avx2.c and f64_avx512.c only, each built with its level's
 * flags.  The portable
 * rows call libm per element (~300 us at 65536 on the machine).
 *
 * exp x: k = round(16 x / ln 2) = 16 e + j, r = x - k ln2 / 16 with ln
 * 2 in two parts (|r| <= ln2 / 32 plus a rounding), e^r - 1 by Taylor
 * to r^7 (truncation below 2^-59), y = T + (T (e^r - 1) + Tl) with
 * 2^(j/16) = T + Tl (f64_explog.h), 2^e y by adding e to y's exponent
 * field where every lane has |x| <= 708, else (x clamped to [-746, 710])
 * as (y 2^e1) 2^e2, e1 = round(e / 2): the first product exact, the
 * second one rounding, also into the subnormal range; NaN gives NaN.
 * log x: x < 2^-1022 scaled by 2^54 first (only in vectors with a lane
 * not positive normal finite, as the special values); x = 2^e z, z c_i
 * = p + pl by fma (pow's 16 intervals, c_i moved so that -log c_i is
 * within 2^-62 of a multiple of 2^-42: f64_explog.h), r = p - 1, log x
 * = e ln 2 - log c_i + r + pl + R^2 P(R), R = r + pl, P of degree 8
 * (f64_explog.h), the large parts summed exactly (one fma, Fast2Sum)
 * and the small ones after: no division; log 0 = -inf, log inf = inf,
 * x < 0 or NaN: NaN.
 * sigmoid x: t = e^-|x| by dx_exp_neg (exp's Taylor form: k =
 * round(x / ln 2), e^r by Taylor to r^13), then 1 / (1 + t) for x >= 0 and
 * t / (1 + t) below (the portable rows' stable form, one division);
 * silu x: x sigmoid x; tanh x: m = e^-2|x| - 1 as expm1 is made from
 * exp's reduction (2^k (e^r - 1) + 2^k - 1, e^r - 1 from the Taylor core
 * without its 1: no cancellation near 0), tanh |x| = -m / (2 + m), x's
 * sign put back; softplus: max(z, 0) + log1p(e^-|z|) over beta, z =
 * beta x (log1p by log's series with Goldberg's correction in its f,
 * one division; no division by beta = 1), x past the
 * threshold.
 * gelu x = x Phi(x), Phi(-|x|) = e^(-x^2/2) erfcx(|x| / sqrt 2) / 2
 * (dx_gauss, dx_erfcx), or 1/2 + x Q(x^2) where a block has every
 * |x| <= 1 (dx_short_n; gelu' likewise); gelu_tanh x = x sigmoid(2u) in the portable
 * row's operations; the backward activations as bwd_simd_impl.h's f32
 * ones (sigmoid' and tanh' as k e / (1 + e)^2, gelu' from one exp).
 * Bounds (tests/test_checkasm.c, f64_ulp, f64_act_ulp, f64_bwd_ulp,
 * against long double libm on dense sweeps): exp within 1 ulp (0.75
 * measured), log within 1 ulp (0.61), sigmoid within 3, tanh, silu and softplus within 4
 * (silu where sigmoid is subnormal: x times that rounding, as the
 * portable row), gelu within 6 (5.29 measured), gelu_tanh within 4 of
 * x sigmoid(z) at its formula's double z (2.96), relu' exactly,
 * sigmoid' and tanh' within 5 (3.93), gelu' within 5 ulp of |Phi| + |x
 * phi| (4.66); gelu and gelu' in blocks with every |x| <= 1 by
 * 1/2 + x P(x^2) (dx_short_n: 2.96 ulp measured for gelu on [-1, 1]);
 * the op tolerance (TOL_MATH, rtol 1e-14) is ~45 ulp.
 * pow a^b = e^(b log |a|), log |a| = H + lo within about 2^-63
 * relative (dx_log_dd_zi), y = b H + lo as a pair (yh, yl) by fma, e^y
 * by dx_exp's table form with yl added to r (dx_pow_blk: four vectors'
 * logs, then their exps): within 1.5 ulp of powl on pow64_ulp's six
 * families (0.763 measured: large |y| up to
 * 709.78, bases next to 1, subnormal results, signs), libm's special
 * values bit for bit (pow_special.h, shared with pow f32).  AVX2 looks
 * its tables up by vgatherqpd: four vpermps and three blends instead
 * (a float-pair permute per quarter) measured slower here, 9.3 against
 * 7.9 ns an element in cache.
 * max, min, argmax: the portable rows' values and indices (their NaN
 * rules; xs_reduce_special_f64), var: a contiguous lane read once in
 * blocks (var_simd.h's form in double; a non-last axis by the two-pass
 * formula in vector partial sums; within TOL_ACC), all through
 * ops_simd.c's f64 reduction driver. */
#ifndef TB_BACKENDS_CPU_F64_SIMD_IMPL_H
#define TB_BACKENDS_CPU_F64_SIMD_IMPL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../ops/op.h"
#include "dvec_simd.h"
#include "bwd_simd.h"
#include "isa.h"
#include "kernels.h"
#include "kreg.h"
#include "ops_simd.h"

#include "f64_explog_simd.h"

/* sigmoid x = num / (1 + t), t = e^-|x| in [0, 1] (never overflows),
 * num 1 for x >= 0 and t below 0: the portable rows' stable form with
 * one division. */
static inline rd dx_sigmoid_end(rd x, rd t)
{
    rd num = rs_sel(rs_lt(x, rs_d1(0.0)), t, rs_d1(1.0));
    rd r = rs_div(num, rs_add(rs_d1(1.0), t));
    return rs_sel(rs_unord(x, x), rs_add(x, x), r);
}

static inline rd dx_sigmoid(rd x)
{
    return dx_sigmoid_end(x, dx_exp_neg(rs_sub(rs_d1(0.0), rs_abs(x))));
}

static inline rd dx_silu(rd x)
{
    return rs_mul(x, dx_sigmoid(x));
}

/* DX_SV vectors a loop step, each phase for all of them (dx_sigmoid_n:
 * the DX_SV e^-|x| chains, then the DX_SV divisions), the same
 * operations per lane as one vector at a time: one vector's chain
 * (exp's, the division's latency after it) is too long for the
 * out-of-order window to overlap the next vector's.  In L1 (Zen 4,
 * release flags, cycles an element): gelu_tanh 5.06 -> 4.24, sigmoid
 * 3.65 -> 3.50, softplus (from two vectors) 7.78 -> 6.51, tanh (the
 * division after its expm1 chain) 3.52 -> 3.32.  Two at AVX2
 * (16 registers). */
#if RS_W == 8
enum { DX_SV = 4 };
#else
enum { DX_SV = 2 };
#endif

static inline void dx_sigmoid_n(const rd *x, rd *r)
{
    rd t[DX_SV];
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++)
        t[j] = dx_exp_neg(rs_sub(rs_d1(0.0), rs_abs(x[j])));
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++)
        r[j] = dx_sigmoid_end(x[j], t[j]);
}

static inline void dx_silu_n(const rd *x, rd *r)
{
    dx_sigmoid_n(x, r);
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++)
        r[j] = rs_mul(x[j], r[j]);
}

/* tanh |x| = -m / (2 + m), m = e^-a - 1, a = 2|x| (at most 40: beyond,
 * tanh is 1 in double): a = -(k ln 2 + r) as in exp, m = 2^k (e^r - 1)
 * + (2^k - 1) with e^r - 1 from the Taylor core (no cancellation near
 * 0, where k = 0; 2^k - 1 exact for k >= -53); x's sign put back by
 * xor (tanh -0 = -0). */
static inline rd dx_tanh_m(rd x)
{
    rd a = rs_min(rs_add(rs_abs(x), rs_abs(x)), rs_d1(40.0));
    rd k;
    rd r = dx_reduce(rs_sub(rs_d1(0.0), a), &k);
    rd p2 = dx_pow2(k);
    return rs_fma(p2, dx_expm1_small(r), rs_sub(p2, rs_d1(1.0)));
}

static inline rd dx_tanh_end(rd x, rd m)
{
    rd v = rs_abs(rs_div(m, rs_add(rs_d1(2.0), m)));
    rd sign = rs_asd(rs_iand(rs_asi(x), rs_i1(0x8000000000000000u)));
    return rs_sel(rs_unord(x, x), rs_add(x, x), rs_dxor(v, sign));
}

static inline rd dx_tanh(rd x)
{
    return dx_tanh_end(x, dx_tanh_m(x));
}

static inline void dx_tanh_n(const rd *x, rd *r)
{
    rd m[DX_SV];
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++)
        m[j] = dx_tanh_m(x[j]);
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++)
        r[j] = dx_tanh_end(x[j], m[j]);
}

/* log1p t for t in [0, 1] (softplus's e^-|z|): u = 1 + t rounded, d =
 * t - (u - 1) its rounding error (exact: Fast2Sum), m = u 2^-k (k 1
 * where u > sqrt 2, else 0), f = (m - 1 + d 2^-k) / (m + 1): Goldberg's
 * correction folded into f's numerator (exact where t is tiny: f = t /
 * (2 + t)), so one division and no special values (dx_log would add a
 * second division, the exponent split and its selects); then
 * dx_log_fk. */
static inline rd dx_log1p(rd t)
{
    const rd one = rs_d1(1.0);
    rd u = rs_add(one, t);
    rd d = rs_sub(t, rs_sub(u, one));
    rmask big = rs_gt(u, rs_d1(0x1.6a09e667f3bcdp+0)); /* sqrt(2) */
    rd h = rs_sel(big, rs_d1(0.5), one);
    rd m = rs_mul(u, h);
    rd f = rs_div(rs_fma(d, h, rs_sub(m, one)), rs_add(m, one));
    return dx_log_fk(f, rs_sel(big, one, rs_d1(0.0)));
}

/* softplus x (PyTorch's: beta = k[0], threshold = k[1]): x where beta x
 * > threshold, else log1p(e^z) / beta, z = beta x, as max(z, 0) +
 * log1p(e^-|z|) (no overflow), and +inf where z > 709.78 as log1p(exp
 * z) gives (the C row and PyTorch's, for a threshold that large).  DIV
 * 0 (beta = 1, the default) skips the division by beta, exact then:
 * the same values without the second vdivpd.  The loop takes DX_SV
 * vectors a step, each phase for all (one vector's exp-log1p chain is
 * too long for the out-of-order window to overlap the next one's):
 * in cache, 6.95 -> 4.69 (log1p, no division by 1) -> 4.00 ns an
 * element (two vectors), min of 1000 calls of 16384 (load ~10); four:
 * 7.78 -> 6.51 cycles an element in L1. */
static inline rd dx_softplus_end(rd x, rd z, rd l, rd beta, rd thr,
                                  int div)
{
    rd v = rs_add(rs_max(z, rs_d1(0.0)), l);
    v = div ? rs_div(v, beta) : v;
    v = rs_sel(rs_gt(z, rs_d1(0x1.62e42fefa39efp+9)), rs_d1(INFINITY), v);
    v = rs_sel(rs_gt(z, thr), x, v);
    return rs_sel(rs_unord(z, z), rs_add(z, z), v);
}

static inline rd dx_softplus(rd x, rd beta, rd thr, int div)
{
    rd z = rs_mul(beta, x);
    rd t = dx_exp_neg(rs_sub(rs_d1(0.0), rs_abs(z)));
    return dx_softplus_end(x, z, dx_log1p(t), beta, thr, div);
}

/* o[0, DX_SV RS_W) = softplus of x's: the loop's step */
static inline void dx_softplus_n(const double *x, double *o, rd beta,
                                 rd thr, int div)
{
    rd v[DX_SV], z[DX_SV], t[DX_SV];
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++) {
        v[j] = rs_loadd(x + j * RS_W);
        z[j] = rs_mul(beta, v[j]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++)
        t[j] = dx_exp_neg(rs_sub(rs_d1(0.0), rs_abs(z[j])));
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++)
        t[j] = dx_log1p(t[j]);
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++)
        rs_stored(o + j * RS_W,
                  dx_softplus_end(v[j], z[j], t[j], beta, thr, div));
}

static inline void dx_softplus_loop(const double *x, double *o, int64_t n,
                                    rd beta, rd thr, int div)
{
    int64_t i = 0;
    for (; i + DX_SV * RS_W <= n; i += DX_SV * RS_W)
        dx_softplus_n(x + i, o + i, beta, thr, div);
    for (; i + RS_W <= n; i += RS_W)
        rs_stored(o + i, dx_softplus(rs_loadd(x + i), beta, thr, div));
    if (i < n) {
        double t[RS_W] = {0};
        memcpy(t, x + i, (size_t)(n - i) * sizeof *t);
        rs_stored(t, dx_softplus(rs_loadd(t), beta, thr, div));
        memcpy(o + i, t, (size_t)(n - i) * sizeof *o);
    }
}

static void dx_softplus_f64(const void *xp, void *op, int64_t n,
                            const double *k)
{
    const rd beta = rs_d1(k[0]), thr = rs_d1(k[1]);
    if (k[0] == 1.0)
        dx_softplus_loop(xp, op, n, beta, thr, 0);
    else
        dx_softplus_loop(xp, op, n, beta, thr, 1);
}

/* gelu_tanh x = x sigmoid(z), z = 2 u, u = c (x + 0.044715 x^3), c =
 * sqrt(2 / pi): the portable row's (and the reference's) form and
 * operations, each rounded once (no fma, so z is theirs bit for bit),
 * then dx_sigmoid.  z's roundings (a few ulp of z) move sigmoid z by
 * |z| (1 - sigmoid z) times as many ulp: the bound is stated per ulp
 * of z's contribution (see test_f64_act_ulp). */
static inline rd dx_gelu_tanh_z(rd x)
{
    rd x3 = rs_mul(rs_mul(rs_mul(rs_d1(0.044715), x), x), x);
    rd u = rs_mul(rs_d1(0.7978845608028654), rs_add(x, x3));
    return rs_add(u, u);
}

static inline rd dx_gelu_tanh(rd x)
{
    return rs_mul(x, dx_sigmoid(dx_gelu_tanh_z(x)));
}

static inline void dx_gelu_tanh_n(const rd *x, rd *r)
{
    rd z[DX_SV];
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++)
        z[j] = dx_gelu_tanh_z(x[j]);
    dx_sigmoid_n(z, r);
#pragma GCC unroll 4
    for (int j = 0; j < DX_SV; j++)
        r[j] = rs_mul(x[j], r[j]);
}

/* DX_IL vectors at once: Horner's rule is one chain of 27 dependent
 * fmas per vector, too long for the out-of-order window to overlap two
 * vectors' chains; DX_IL chains advance together. */
enum { DX_IL = 4, DX_B = DX_IL * RS_W };

#include "f64_gelu_simd.h" /* dx_erfcx_n, dx_gauss, dx_short_n */

/* o[i] = f(a[i sa], b[i sb]) for i < n through blk, DX_B contiguous
 * elements at a time (b NULL for a unary f); strided operands and the
 * tail gathered into zero-padded blocks on the stack. */
static inline void dx_blocks(const double *a, int64_t sa, const double *b,
                             int64_t sb, double *o, int64_t n,
                             void (*blk)(const double *, const double *,
                                         double *))
{
    int64_t i = 0;
    if (sa == 1 && (!b || sb == 1))
        for (; i + DX_B <= n; i += DX_B)
            blk(a + i, b ? b + i : NULL, o + i);
    while (i < n) {
        double ta[DX_B] = {0}, tb[DX_B] = {0};
        const int64_t m = n - i < DX_B ? n - i : DX_B;
        for (int64_t j = 0; j < m; j++) {
            ta[j] = a[(i + j) * sa];
            tb[j] = b ? b[(i + j) * sb] : 0.0;
        }
        blk(ta, tb, ta);
        memcpy(o + i, ta, (size_t)m * sizeof *o);
        i += m;
    }
}

/* ---- pow f64: e^(b log |a|), log |a| as a double-double ------------- */

#include "pow_special.h"

/* log(2^e z) = H + *lo for z, i and e as dx_log_split's of a positive
 * normal double (dx_log_dd: also of a subnormal one scaled): c_i =
 * dx_pl_c[i] (f64_powlog.h), z c_i = p + pl exactly (fma), r = p - 1
 * exact, |r| <= 0.0391; log(z c_i) = log1p r + pl (1 - r + r^2) (the
 * dropped pl r^3: below 2^-67 |r|), log1p r = r + h + hl - (r^3 / 2)
 * Q(r), h + hl = -r^2 / 2 exactly (0.5 r exact, fmsub), Q of degree 8
 * (f64_explog.h: within 2^-64.9 of r; (r^3 / 2) as -h r); A = e ln2_hi
 * + dx_ld_h[i] exactly (one fma: f64_explog.h's multiple of 2^-42), s +
 * sl = r + h (Fast2Sum: |h| <= |r| / 50), H + hh = A + s (TwoSum), the
 * small terms (e ln2_lo + dx_ld_l[i], sl, hh, hl, the pl term, the
 * series' tail) in *lo, renormalized (Fast2Sum) so that b lo stays below
 * 2^-52 |b H| (dx_exp_dd's r within its series' range).  |log a| >=
 * 0.0118 wherever the sum cancels (e = 0, c_i != 1), and log a = log1p r
 * with no cancellation where c_i = 1 (e = 0): the log is within about
 * 2^-63 relative everywhere. */
static inline rd dx_log_dd_zi(rd z, ri i, rd e, rd *lo)
{
    const rd one = rs_d1(1.0);
    rd c = rs_lut16(dx_pl_c, i);
    rd p = rs_mul(z, c);
    rd pl = dx_fms(z, c, p);
    rd r = rs_sub(p, one);
    rd ar = rs_mul(r, rs_d1(-0.5));
    rd h = rs_mul(ar, r);
    rd hl = dx_fms(ar, r, h);
    /* Q by even and odd Horner chains in r^2 (rounded: Q's own
     * rounding) */
    rd r2 = rs_mul(r, r);
    rd ev = rs_d1(dx_ld_q[0]), od = rs_d1(dx_ld_q[1]);
#pragma GCC unroll 4
    for (int k = 2; k < 8; k += 2) {
        ev = rs_fma(ev, r2, rs_d1(dx_ld_q[k]));
        od = rs_fma(od, r2, rs_d1(dx_ld_q[k + 1]));
    }
    ev = rs_fma(ev, r2, rs_d1(dx_ld_q[8]));
    rd q = rs_fma(od, r, ev);
    rd s = rs_add(r, h);
    rd sl = rs_add(rs_sub(r, s), h);
    rd A = rs_fma(e, rs_d1(0x1.62e42fefa3800p-1), rs_lut16(dx_ld_h, i));
    rd H = rs_add(A, s);
    rd bv = rs_sub(H, A);
    rd hh = rs_add(rs_sub(A, rs_sub(H, bv)), rs_sub(s, bv));
    rd l = rs_fma(e, rs_d1(0x1.ef35793c7673p-45), rs_lut16(dx_ld_l, i));
    rd lt = rs_add(rs_add(l, sl), rs_add(hh, hl));
    /* pl (1 - r + r^2) = pl (1 - r - 2 h) */
    lt = rs_fma(pl, rs_fma(h, rs_d1(-2.0), rs_sub(one, r)), lt);
    lt = rs_fma(rs_mul(h, r), q, lt);
    rd Hn = rs_add(H, lt);
    *lo = rs_add(rs_sub(H, Hn), lt);
    return Hn;
}

/* log a = H + *lo for a positive finite a (subnormals included: scaled
 * by 2^54 first; other inputs: unspecified, the caller selects), within
 * about 2^-63 relative (dx_log_dd_zi); bit for bit dx_log_dd_zi's where
 * a is normal. */
static inline rd dx_log_dd(rd a, rd *lo)
{
    rmask sub = rs_lt(a, rs_d1(0x1.0p-1022));
    rd e;
    ri i;
    rd z = dx_log_split(rs_sel(sub, rs_mul(a, rs_d1(0x1.0p54)), a), &e, &i);
    e = rs_sel(sub, rs_sub(e, rs_d1(54.0)), e);
    return dx_log_dd_zi(z, i, e, lo);
}

/* e^(yh + yl) for |yh| <= 708 (|yl| <= 2^-40 |yh|): dx_exp's table
 * form, yl added to r, its one integer scaling (results normal). */
static inline rd dx_exp_dd(rd yh, rd yl)
{
    rd kf;
    rd r = rs_add(dx_e16_red(yh, &kf), yl);
    return dx_e16_fast(dx_e16_y(r, kf), kf);
}

/* Any a, b: log |a| with its limits (0: -inf, inf: inf), y = b log |a|
 * (yl 0 where |yh| > 746, which the clamp takes, or y is NaN), e^y as
 * dx_exp's full form (dx_e16_full: 0, subnormal or inf where it must),
 * then pw_special. */
static inline rd dx_pow_full(rd a, rd b)
{
    const rd inf = rs_d1(INFINITY), zero = rs_d1(0.0);
    rd ax = rs_abs(a), lo;
    rd H = dx_log_dd(ax, &lo);
    rmask lim = rs_mor(rs_eq(ax, zero), rs_eq(ax, inf));
    H = rs_sel(rs_eq(ax, zero), rs_d1(-INFINITY), H);
    H = rs_sel(rs_eq(ax, inf), inf, H);
    lo = rs_sel(lim, zero, lo);
    rd yh = rs_mul(b, H);
    rd yl = rs_fma(b, lo, dx_fms(b, H, yh));
    yl = rs_sel(rs_le(rs_abs(yh), rs_d1(746.0)), yl, zero); /* NaN: 0 */
    return pw_special(a, b, dx_e16_full(yh, yl)); /* NaN yh: -746 */
}

/* Where every lane has a positive normal finite a (AVX-512: one
 * vfpclasspd) and a finite y with |yh| <= 708, pw_special keeps e^y (1
 * where a = 1 or b = 0: log 1 = 0 exactly, y = 0, e^0 = 1); else the
 * full form. */
static inline rd dx_pow(rd a, rd b)
{
    rd lo, e;
    ri i;
    rd z = dx_log_split(a, &e, &i);
    rd H = dx_log_dd_zi(z, i, e, &lo);
    rd yh = rs_mul(b, H);
#if RS_W == 8
    rmask ok = (rmask)~_mm512_fpclass_pd_mask(a, 0xff);
#else
    rmask ok = rs_mand(rs_le(rs_d1(0x1.0p-1022), a),
                       rs_lt(a, rs_d1(INFINITY)));
#endif
    ok = rs_mand(ok, rs_le(rs_abs(yh), rs_d1(708.0)));
    if (rs_bits(ok) != (1u << RS_W) - 1)
        return dx_pow_full(a, b);
    rd yl = rs_fma(b, lo, dx_fms(b, H, yh));
    return dx_exp_dd(yh, yl);
}

/* DX_B elements of a and b (both read before o is written): the logs
 * and checks of DX_IL vectors, then their exps where every lane of them
 * takes dx_pow's fast form (the same values), else dx_pow on each. */
static void dx_pow_blk(const double *a, const double *b, double *o)
{
    rd va[DX_IL], vb[DX_IL], H[DX_IL], lo[DX_IL], yh[DX_IL], r[DX_IL];
    unsigned all = (1u << RS_W) - 1;
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++) {
        rd e;
        ri i;
        va[j] = rs_loadd(a + j * RS_W);
        vb[j] = rs_loadd(b + j * RS_W);
        rd z = dx_log_split(va[j], &e, &i);
        H[j] = dx_log_dd_zi(z, i, e, &lo[j]);
        yh[j] = rs_mul(vb[j], H[j]);
#if RS_W == 8
        rmask ok = (rmask)~_mm512_fpclass_pd_mask(va[j], 0xff);
#else
        rmask ok = rs_mand(rs_le(rs_d1(0x1.0p-1022), va[j]),
                           rs_lt(va[j], rs_d1(INFINITY)));
#endif
        all &= rs_bits(rs_mand(ok, rs_le(rs_abs(yh[j]), rs_d1(708.0))));
    }
    if (all == (1u << RS_W) - 1) {
#pragma GCC unroll 4
        for (int j = 0; j < DX_IL; j++)
            r[j] = dx_exp_dd(yh[j], rs_fma(vb[j], lo[j],
                                           dx_fms(vb[j], H[j], yh[j])));
    } else {
#pragma GCC unroll 4
        for (int j = 0; j < DX_IL; j++)
            r[j] = dx_pow(va[j], vb[j]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++)
        rs_stored(o + j * RS_W, r[j]);
}

/* gelu x = x Phi(x): Phi(x) = Phi(-|x|) for x < 0, 1 - Phi(-|x|)
 * (>= 1/2: no cancellation) for x >= 0; gelu(-inf) = -inf 0 = NaN and
 * gelu(+inf) = inf, the portable row's.  DX_B elements of x (all read
 * before o is written). */
static void dx_gelu_blk(const double *x, const double *unused, double *o)
{
    (void)unused;
    rd v[DX_IL], a[DX_IL], z[DX_IL], e[DX_IL], r[DX_IL];
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++)
        v[j] = rs_loadd(x + j * RS_W);
    if (dx_short_ok(v)) {
        dx_short_n(dx_gelu_q, v, r);
#pragma GCC unroll 4
        for (int j = 0; j < DX_IL; j++)
            rs_stored(o + j * RS_W, rs_mul(v[j], r[j]));
        return;
    }
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++)
        e[j] = dx_gauss(v[j], &a[j], &z[j]);
    dx_erfcx_n(z, r);
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++) {
        rd pn = rs_mul(rs_mul(e[j], r[j]), rs_d1(0.5));
        rd phi = rs_sel(rs_lt(v[j], rs_d1(0.0)), pn,
                        rs_fma(rs_d1(-1.0), pn, rs_d1(1.0)));
        rs_stored(o + j * RS_W, rs_sel(rs_unord(v[j], v[j]),
                                       rs_add(v[j], v[j]),
                                       rs_mul(v[j], phi)));
    }
}

static void dx_gelu_f64(const void *x, void *o, int64_t n, const double *k)
{
    (void)k;
    dx_blocks(x, 1, NULL, 0, o, n, dx_gelu_blk);
}

static inline rd dx_fnma(rd a, rd b, rd c) { return RS_I(fnmadd_pd)(a, b, c); }

/* a / b correctly rounded without the divider (vdivpd zmm: 9 cycles
 * for 8 lanes on Zen 4, measured by scripts/divsqrt_tp.c, against the
 * 4-6 FMA-unit operations here), given y = RN(1/b) and the mode
 * dx_div_mode(b) chose, by Markstein's theorem (IBM J. Res. Dev. 34,
 * 1990; in the Handbook of Floating-Point Arithmetic): y within half an
 * ulp of 1/b and q within one ulp of a/b make r = a - b q exact and
 * RN(q + r y) = RN(a/b).  q = RN(a y) is within one ulp of a/b when |1 - b y| <=
 * 2^-54 (mode 1: |a y - a/b| < half an ulp of a/b, plus the rounding's
 * half ulp; b = 6, hardswish's divisor, is such: 6 RN(1/6) = 1 -
 * 2^-54); otherwise (mode 2) one step q + (a - b q) y brings it there
 * first.  The theorem needs no underflow or overflow: with |b| in
 * [2^-50, 2^50] (mode 0, the divider, else), a lane takes this form
 * when |a| is in [2^-900, 2^970] (every quotient, y, product and
 * residual then a normal number or an exact zero, far from overflow)
 * or a is +-0 (its quotient a y, exactly +-0 with the right sign); a
 * vector with another lane (a NaN, an infinity, a tiny or huge a) is
 * divided.  tests/test_divsqrt.c checks it against the division on
 * the quotients nearest a rounding tie and at the range's edges. */
static inline int dx_div_mode(double b, double y)
{
    if (!(fabs(b) >= 0x1p-50 && fabs(b) <= 0x1p50))
        return 0;
    return fabs(fma(-b, y, 1.0)) <= 0x1p-54 ? 1 : 2;
}
static inline rd dx_divk(rd a, rd b, rd y, int mode)
{
#if RS_W == 8
    /* |a|'s bits in [2^-900, 2^970]'s by one unsigned compare, and +-0,
     * integer operations any of Zen 4's four vector pipes takes (its FP
     * compares, like max, min and the FMAs, take only the two
     * multiply pipes, which this loop fills) */
    const __m512i ab = rs_iand(rs_asi(a), rs_i1(~UINT64_C(0) >> 1));
    const rmask z = _mm512_testn_epi64_mask(ab, ab);
    const rmask ok = rs_mor(
        _mm512_cmple_epu64_mask(
            _mm512_sub_epi64(ab, rs_i1(UINT64_C(123) << 52)),
            rs_i1((UINT64_C(1993) - 123) << 52)),
        z);
#else
    const rd zero = rs_d1(0.0), aa = rs_abs(a);
    const rmask z = rs_eq(a, zero);
    const rmask ok = rs_mor(rs_mand(rs_le(rs_d1(0x1p-900), aa),
                                    rs_le(aa, rs_d1(0x1p970))),
                            z);
#endif
    if (mode == 0 || rs_bits(ok) != (1u << RS_W) - 1)
        return rs_div(a, b);
    const rd q0 = rs_mul(a, y);
    rd q = q0;
    if (mode == 2)
        q = rs_fma(dx_fnma(b, q, a), y, q);
    q = rs_fma(dx_fnma(b, q, a), y, q);
    return rs_sel(z, q0, q);
}

/* The ops written once (ew_defs.h) in double lanes, each operation
 * rounded once as in the portable row (this file is built without fp
 * contraction), so its values bit for bit: x86's max and min give their
 * second operand when either is NaN, so MAX(a, b) (a < b ? b : a) is
 * rs_max(b, a), and MIN alike.  Each op twice: dx_NAME_dv with DIV the
 * divider's vdivpd, dx_NAME with DIV by a constant (hardswish's 6)
 * dx_divk's (its y and mode folded at compile time), and the loop
 * (DX_EW2_LOOP) takes one vector of each a step: on Zen 4 the divider
 * (9 cycles a vdivpd zmm) runs beside the two multiply pipes, which
 * hardswish's max, min and products fill (4 operations a vector by the
 * divider, 7 by dx_divk, 2 cycles each: about 5.5 cycles a vector for
 * the pair, against 9 by the divider alone and 7 by dx_divk alone). */
#define ADD(a, b) rs_add(a, b)
#define SUB(a, b) rs_sub(a, b)
#define MUL(a, b) rs_mul(a, b)
#undef MAX
#undef MIN
#define MAX(a, b) rs_max(b, a)
#define MIN(a, b) rs_min(b, a)
#define K(c) rs_d1((double)(c))
static inline rd dx_divc(rd a, rd b)
{
    const double bv = RS_I(cvtsd_f64)(b), yv = 1.0 / bv;
    return dx_divk(a, b, rs_d1(yv), dx_div_mode(bv, yv));
}
#define DIV(a, b) rs_div(a, b)
#define DX_EW_F(NAME, W, EXPR, ...)                                       \
    static inline rd dx_##NAME##_dv(rd x) { return EXPR; }
TB_CPU_EW_OPS(DX_EW_F, ~)
#undef DX_EW_F
#undef DIV
#define DIV(a, b) dx_divc(a, b)
#define DX_EW_F(NAME, W, EXPR, ...)                                       \
    static inline rd dx_##NAME(rd x) { return EXPR; }
TB_CPU_EW_OPS(DX_EW_F, ~)
#include "ew_undef.h"
#undef DX_EW_F

#define DX_EW2_LOOP(NAME, W, EXPR, ...)                                   \
    static void dx_##NAME##_f64(const void *xp, void *op, int64_t n,      \
                                const double *k)                          \
    {                                                                     \
        (void)k;                                                          \
        const double *x = xp;                                             \
        double *o = op;                                                   \
        int64_t i = 0;                                                    \
        for (; i + 2 * RS_W <= n; i += 2 * RS_W) {                        \
            rs_stored(o + i, dx_##NAME##_dv(rs_loadd(x + i)));            \
            rs_stored(o + i + RS_W, dx_##NAME(rs_loadd(x + i + RS_W)));   \
        }                                                                 \
        for (; i + RS_W <= n; i += RS_W)                                  \
            rs_stored(o + i, dx_##NAME(rs_loadd(x + i)));                 \
        if (i < n) {                                                      \
            double t[RS_W] = {0};                                         \
            memcpy(t, x + i, (size_t)(n - i) * sizeof *t);                \
            rs_stored(t, dx_##NAME(rs_loadd(t)));                         \
            memcpy(o + i, t, (size_t)(n - i) * sizeof *o);                \
        }                                                                 \
    }
TB_CPU_EW_OPS(DX_EW2_LOOP, ~)
#undef DX_EW2_LOOP

/* exp and log one vector a step (four a step, each chain whole, ran
 * log 7% slower in L1; both are bound by the FP pipes' work) */
static inline rd dx_exp1(rd x) { return dx_exp(x); }
static inline void dx_exp1_n(const rd *x, rd *r)
{
    r[0] = dx_exp(x[0]);
}
/* two a step (each vector its own check and chain; the same values):
 * on the Intel Xeon (Emerald Rapids) 3.1% faster at 1M and 2.4% in L2
 * than one a step (tbench ab, 30 blocks, 2026-12-01); Zen 4 keeps one
 * a step (not measured there) */
static inline rd dx_exp2(rd x) { return dx_exp(x); }
static inline void dx_exp2_n(const rd *x, rd *r)
{
    r[0] = dx_exp(x[0]);
    r[1] = dx_exp(x[1]);
}

static inline void dx_log_n(const rd *x, rd *r)
{
    r[0] = dx_log(x[0]);
}

/* B vectors a step through dx_NAME_n, then single vectors */
#define DX_NLOOP(NAME, B)                                                 \
    static void dx_##NAME##_f64(const void *xp, void *op, int64_t n,      \
                                const double *k)                          \
    {                                                                     \
        (void)k;                                                          \
        const double *x = xp;                                             \
        double *o = op;                                                   \
        int64_t i = 0;                                                    \
        for (; i + (B) * RS_W <= n; i += (B) * RS_W) {                    \
            rd v[B], r[B];                                                \
            _Pragma("GCC unroll 4")                                          \
            for (int j = 0; j < (B); j++)                                 \
                v[j] = rs_loadd(x + i + j * RS_W);                        \
            dx_##NAME##_n(v, r);                                          \
            _Pragma("GCC unroll 4")                                          \
            for (int j = 0; j < (B); j++)                                 \
                rs_stored(o + i + j * RS_W, r[j]);                        \
        }                                                                 \
        for (; i + RS_W <= n; i += RS_W)                                  \
            rs_stored(o + i, dx_##NAME(rs_loadd(x + i)));                 \
        if (i < n) {                                                      \
            double t[RS_W] = {0};                                         \
            memcpy(t, x + i, (size_t)(n - i) * sizeof *t);                \
            rs_stored(t, dx_##NAME(rs_loadd(t)));                         \
            memcpy(o + i, t, (size_t)(n - i) * sizeof *o);                \
        }                                                                 \
    }
DX_NLOOP(exp1, 1)
DX_NLOOP(exp2, 2)
static void dx_exp_f64(const void *x, void *o, int64_t n, const double *k)
{
    if (RS_W == 8 && !tb_cpu_isa_amd()) { /* AVX-512 on Intel */
        dx_exp2_f64(x, o, n, k);
        return;
    }
    dx_exp1_f64(x, o, n, k);
}
DX_NLOOP(log, 1)
DX_NLOOP(sigmoid, DX_SV)
DX_NLOOP(tanh, DX_SV)
DX_NLOOP(silu, DX_SV)
DX_NLOOP(gelu_tanh, DX_SV)
#undef DX_NLOOP

/* ---- neg, abs, sqrt, rsqrt, leaky_relu, the scalar forms, maximum and
 * minimum f64: math_c.c's operations, each step exact or correctly
 * rounded (neg flips the sign bit and abs clears it, a NaN's too, as -x
 * and fabs do; rsqrt is math_c.c's 1 / sqrt x, two correctly rounded
 * steps, not a reciprocal estimate; div_scalar divides), so their values
 * bit for bit the portable rows' (checkasm's xs_special_f64).  k: the op's parameter (leaky_relu's
 * alpha, the scalar forms' scalar). */
static inline rd dx_neg_k(rd x, rd k)
{
    (void)k;
    return rs_dxor(x, rs_d1(-0.0));
}
static inline rd dx_abs_k(rd x, rd k)
{
    (void)k;
    return rs_abs(x);
}
static inline rd dx_sqrt_k(rd x, rd k)
{
    (void)k;
    return rs_sqrt(x);
}
/* rsqrt: s = sqrt x by the divider, 1/s (the division that doubled
 * the time: vsqrtpd zmm 16 cycles, vdivpd 9, the two together 25 for 8
 * lanes, scripts/divsqrt_tp.c) at AVX-512 from a reciprocal estimate
 * (rcp14, relative error < 2^-14) and three Newton-Raphson steps r +=
 * r (1 - s r) in the FMA units, which run beside the divider: the
 * first two bring r within 2^-56 of 1/s (a faithful rounding), the
 * last, from the exact residual, rounds it correctly, for every s but
 * those of the largest significand 2 - 2^-52, where 1/s lies just above
 * a tie that a faithful r from below lands on (scripts/recip_ties.py
 * proves it: the step can only fail when 1/s is within 2^-105 of a
 * tie, and checks each such significand exactly).  As ops_simd_impl.h's
 * f32 row: a vector with such a lane, or whose s is not a positive
 * normal (x <= 0, inf, NaN), is divided as before; s of a positive
 * double is a normal in [2^-537, 2^512]. */
static inline rd dx_rsqrt_k(rd x, rd k)
{
    (void)k;
    const rd s = rs_sqrt(x);
#if RS_W == 8
    /* s in [DBL_MIN, DBL_MAX] (its bits, unsigned: -0, negatives and
     * NaN too large) and its significand not all ones (+1 carries out
     * of it), in integer operations (as dx_divk's) */
    const ri u = rs_asi(s), frac = rs_i1(UINT64_C(0xfffffffffffff));
    const rmask ok = rs_mand(
        _mm512_cmple_epu64_mask(_mm512_sub_epi64(u, rs_i1(UINT64_C(1) << 52)),
                                rs_i1(UINT64_C(0x7fdfffffffffffff))),
        _mm512_test_epi64_mask(rs_iadd(u, rs_i1(1)), frac));
    if (rs_bits(ok) == 0xFF) {
        const rd one = rs_d1(1.0);
        rd r = _mm512_rcp14_pd(s);
        r = rs_fma(r, dx_fnma(s, r, one), r);
        r = rs_fma(r, dx_fnma(s, r, one), r);
        return rs_fma(r, dx_fnma(s, r, one), r);
    }
#endif
    return rs_div(rs_d1(1.0), s);
}
/* x > 0 ? x : alpha x (NaN: alpha NaN, a NaN) */
static inline rd dx_leaky_relu_k(rd x, rd k)
{
    return rs_sel(rs_gt(x, rs_d1(0.0)), x, rs_mul(k, x));
}
static inline rd dx_add_scalar_k(rd x, rd k) { return rs_add(x, k); }
static inline rd dx_sub_scalar_k(rd x, rd k) { return rs_sub(x, k); }
static inline rd dx_mul_scalar_k(rd x, rd k) { return rs_mul(x, k); }
static inline rd dx_div_scalar_k(rd x, rd k) { return rs_div(x, k); }

#if RS_W == 8
/* neg, abs and the scalar add, sub and mul on AMD from
 * TB_CPU_AMD_YMM_MIN_BYTES an array: the same operations on 256-bit
 * vectors, four a step (isa.h: Zen 4's L3 streams ymm loads and stores
 * faster; o = -x over 8 MiB f64 241-265 us against 259-289 with zmm);
 * the elements done, a multiple of 16, the zmm loop the rest. */
#define DY_neg(x, k) _mm256_xor_pd(x, _mm256_set1_pd(-0.0))
#define DY_abs(x, k) _mm256_andnot_pd(_mm256_set1_pd(-0.0), x)
#define DY_add_scalar(x, k) _mm256_add_pd(x, k)
#define DY_sub_scalar(x, k) _mm256_sub_pd(x, k)
#define DY_mul_scalar(x, k) _mm256_mul_pd(x, k)
#define DY_LOOP(NAME)                                                     \
    static int64_t dy_##NAME(const double *x, double *o, int64_t n,       \
                             double kv)                                   \
    {                                                                     \
        const __m256d k = _mm256_set1_pd(kv);                             \
        (void)k;                                                          \
        int64_t i = 0;                                                    \
        for (; i + 16 <= n; i += 16) {                                    \
            __m256d a = _mm256_loadu_pd(x + i);                           \
            __m256d b = _mm256_loadu_pd(x + i + 4);                       \
            __m256d c = _mm256_loadu_pd(x + i + 8);                       \
            __m256d d = _mm256_loadu_pd(x + i + 12);                      \
            _mm256_storeu_pd(o + i, DY_##NAME(a, k));                     \
            _mm256_storeu_pd(o + i + 4, DY_##NAME(b, k));                 \
            _mm256_storeu_pd(o + i + 8, DY_##NAME(c, k));                 \
            _mm256_storeu_pd(o + i + 12, DY_##NAME(d, k));                \
        }                                                                 \
        return i;                                                         \
    }
DY_LOOP(neg)
DY_LOOP(abs)
DY_LOOP(add_scalar)
DY_LOOP(sub_scalar)
DY_LOOP(mul_scalar)
#define DY_TRY(NAME)                                                      \
    if (tb_cpu_amd_ymm((double)n * sizeof(double)))                       \
        i = dy_##NAME(x, o, n, kd[0]);
#define DY_TRY_neg DY_TRY(neg)
#define DY_TRY_abs DY_TRY(abs)
#define DY_TRY_add_scalar DY_TRY(add_scalar)
#define DY_TRY_sub_scalar DY_TRY(sub_scalar)
#define DY_TRY_mul_scalar DY_TRY(mul_scalar)
#else
#define DY_TRY_neg
#define DY_TRY_abs
#define DY_TRY_add_scalar
#define DY_TRY_sub_scalar
#define DY_TRY_mul_scalar
#endif
#define DY_TRY_sqrt
#define DY_TRY_rsqrt
#define DY_TRY_leaky_relu
#define DY_TRY_div_scalar

/* (On AMD, large arrays: DY_TRY's 256-bit loop first.)  Two vectors a
 * step, then one, then the tail through a zero-padded block on the
 * stack. */
#define DX_KLOOP(NAME)                                                    \
    static void dx_##NAME##_kf64(const void *xp, void *op, int64_t n,     \
                                 const double *kd)                        \
    {                                                                     \
        const double *x = xp;                                             \
        double *o = op;                                                   \
        const rd k = rs_d1(kd[0]);                                        \
        int64_t i = 0;                                                    \
        DY_TRY_##NAME                                                     \
        for (; i + 2 * RS_W <= n; i += 2 * RS_W) {                        \
            rd a = rs_loadd(x + i), b = rs_loadd(x + i + RS_W);           \
            rs_stored(o + i, dx_##NAME##_k(a, k));                        \
            rs_stored(o + i + RS_W, dx_##NAME##_k(b, k));                 \
        }                                                                 \
        for (; i + RS_W <= n; i += RS_W)                                  \
            rs_stored(o + i, dx_##NAME##_k(rs_loadd(x + i), k));          \
        if (i < n) {                                                      \
            double t[RS_W] = {0};                                         \
            memcpy(t, x + i, (size_t)(n - i) * sizeof *t);                \
            rs_stored(t, dx_##NAME##_k(rs_loadd(t), k));                  \
            memcpy(o + i, t, (size_t)(n - i) * sizeof *o);                \
        }                                                                 \
    }
#define DX_SIMPLE_OPS(X, ...)                                             \
    X(neg, __VA_ARGS__) X(abs, __VA_ARGS__) X(sqrt, __VA_ARGS__)          \
    X(rsqrt, __VA_ARGS__) X(leaky_relu, __VA_ARGS__)                      \
    X(add_scalar, __VA_ARGS__) X(sub_scalar, __VA_ARGS__)                 \
    X(mul_scalar, __VA_ARGS__) X(div_scalar, __VA_ARGS__)
#define DX_KLOOP_X(NAME, ...) DX_KLOOP(NAME)
#define dx_div_scalar_kf64 dx_div_scalar_kf64_div
DX_SIMPLE_OPS(DX_KLOOP_X, ~)
#undef dx_div_scalar_kf64
#undef DX_KLOOP_X
#undef DX_KLOOP

/* div_scalar: dx_divk's division without the divider where the scalar
 * allows (mode 1 or 2), else the loop above's vdivpd. */
static inline void dx_div_scalar_run(const double *x, double *o, int64_t n,
                                     double kv, double yv, int mode)
{
    const rd k = rs_d1(kv), y = rs_d1(yv);
    int64_t i = 0;
    for (; i + 2 * RS_W <= n; i += 2 * RS_W) {
        rd a = rs_loadd(x + i), b = rs_loadd(x + i + RS_W);
        rs_stored(o + i, dx_divk(a, k, y, mode));
        rs_stored(o + i + RS_W, dx_divk(b, k, y, mode));
    }
    for (; i + RS_W <= n; i += RS_W)
        rs_stored(o + i, dx_divk(rs_loadd(x + i), k, y, mode));
    if (i < n) {
        double t[RS_W] = {0};
        memcpy(t, x + i, (size_t)(n - i) * sizeof *t);
        rs_stored(t, dx_divk(rs_loadd(t), k, y, mode));
        memcpy(o + i, t, (size_t)(n - i) * sizeof *o);
    }
}
static void dx_div_scalar_kf64(const void *xp, void *op, int64_t n,
                               const double *kd)
{
    const double kv = kd[0], yv = 1.0 / kv;
    const int mode = dx_div_mode(kv, yv);
    if (mode == 1)
        dx_div_scalar_run(xp, op, n, kv, yv, 1);
    else if (mode == 2)
        dx_div_scalar_run(xp, op, n, kv, yv, 2);
    else
        dx_div_scalar_kf64_div(xp, op, n, kd);
}

#include "f64_mm_simd.h" /* maximum and minimum */

/* ---- backward activations f64: o = dx from a = g and b = x ------------- */

/* gelu'(x) = Phi(x) + x phi(x): s = gelu'(-a) = Phi(-a) - a phi(a) =
 * E (erfcx(z) / 2 - a / sqrt(2 pi)) (one exp for both terms, a = |x|),
 * g s for x < 0 and g (1 - s) for x >= 0; +-inf give g (-0) and g
 * (the limits), NaN NaN.  DX_B elements (g, x read before o is
 * written). */
static void dx_gelu_bwd_blk(const double *gp, const double *xp, double *o)
{
    rd x[DX_IL], g[DX_IL], a[DX_IL], z[DX_IL], e[DX_IL], r[DX_IL];
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++) {
        x[j] = rs_loadd(xp + j * RS_W);
        g[j] = rs_loadd(gp + j * RS_W);
    }
    if (dx_short_ok(x)) {
        dx_short_n(dx_gelu_d, x, r);
#pragma GCC unroll 4
        for (int j = 0; j < DX_IL; j++)
            rs_stored(o + j * RS_W, rs_mul(g[j], r[j]));
        return;
    }
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++)
        e[j] = dx_gauss(x[j], &a[j], &z[j]);
    dx_erfcx_n(z, r);
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++) {
        rd s = rs_mul(e[j], rs_fma(rs_d1(0.5), r[j],
                                   rs_mul(rs_d1(-0x1.9884533d43651p-2),
                                          a[j])));
        rd d = rs_sel(rs_lt(x[j], rs_d1(0.0)), s, rs_sub(rs_d1(1.0), s));
        rs_stored(o + j * RS_W,
                  rs_mul(g[j], rs_sel(rs_unord(x[j], x[j]),
                                      rs_add(x[j], x[j]), d)));
    }
}

static void dx_pow_f64(const void *ap, int64_t sa, const void *bp,
                       int64_t sb, void *op, int64_t n)
{
    dx_blocks(ap, sa, bp, sb, op, n, dx_pow_blk);
}

static void dx_gelu_bwd_f64(const void *ap, int64_t sa, const void *bp,
                            int64_t sb, void *op, int64_t n)
{
    dx_blocks(ap, sa, bp, sb, op, n, dx_gelu_bwd_blk);
}

/* Backward activation f (0 relu, 1 sigmoid, 2 tanh) from g and x.  relu: x > 0 ? g : 0 (NaN x gives 0, as the portable row);
 * sigmoid' and tanh' as g c^2 e / (1 + e)^2, e = exp(-c |x|) (c 1 and
 * 2), without the cancellation of 1 - s or 1 - t^2 (the portable rows'
 * form, which rounds to 0 from |x| ~ 37 or 19 on).
 * y = -c |x| by a sign OR and an addition.  A vector whose lanes all
 * have y >= -708 (no NaN; e normal) takes dx_bwd_exp: k = round(y /
 * ln 2) by the 1.5 2^52 shift in the FMA (one rounding of the exact
 * product, where dx_reduce rounds the product and then to an integer:
 * k may differ by one at a tie, r then by ln 2 within the Taylor core's
 * range), 2^k added to the exponent field of 1 + (e^r - 1) as an
 * integer, and tanh's 4 e likewise: no vrndscale and no multiplication
 * by 2^k or by 4 on the FMA ports (the busiest).  The others take
 * dx_exp_neg as before. */
static inline rd dx_bwd_exp(rd y, rd *e)
{
    const rd shift = rs_d1(0x1.8p52);
    rd kk = rs_fma(y, rs_d1(0x1.71547652b82fep+0), shift); /* 1/ln2 */
    rd n = rs_sub(kk, shift);
    rd r = rs_fma(n, rs_d1(-0x1.62e42fefa3800p-1), y);
    r = rs_fma(n, rs_d1(-0x1.ef35793c7673p-45), r);
    rd p = rs_add(rs_d1(1.0), dx_expm1_small(r));
    *e = rs_asd(rs_iadd(rs_asi(p), rs_isll(rs_asi(kk), 52)));
    return *e;
}

static inline rd dx_bwd(int f, rd g, rd x)
{
    if (f == 0)
        return rs_sel(rs_gt(x, rs_d1(0.0)), g, rs_d1(0.0));
    const double c = f;
    rd y = RS_I(or_pd)(x, rs_d1(-0.0));
    if (f == 2)
        y = rs_add(y, y);
    rd e, ke;
    if (rs_bits(rs_mor(rs_lt(y, rs_d1(-708.0)), rs_unord(y, y)))) {
        e = dx_exp_neg(y);
        ke = rs_mul(rs_d1(c * c), e);
    } else {
        dx_bwd_exp(y, &e);
        ke = f == 2 ? rs_asd(rs_iadd(rs_asi(e), rs_i1(2ull << 52))) : e;
    }
    rd d = rs_add(rs_d1(1.0), e);
    return rs_mul(g, rs_div(ke, rs_mul(d, d)));
}

#define DX_BLOOP(NAME, F)                                                 \
    static void dx_##NAME##_bwd_f64(const void *ap, int64_t sa,           \
                                    const void *bp, int64_t sb, void *op, \
                                    int64_t n)                            \
    {                                                                     \
        const double *g = ap, *x = bp;                                    \
        double *o = op;                                                   \
        int64_t i = 0;                                                    \
        if (sa == 1 && sb == 1) {                                         \
            for (; i + 2 * RS_W <= n; i += 2 * RS_W) {                    \
                rd y0 = dx_bwd(F, rs_loadd(g + i), rs_loadd(x + i));      \
                rd y1 = dx_bwd(F, rs_loadd(g + i + RS_W),                 \
                               rs_loadd(x + i + RS_W));                   \
                rs_stored(o + i, y0);                                     \
                rs_stored(o + i + RS_W, y1);                              \
            }                                                             \
            for (; i + RS_W <= n; i += RS_W)                              \
                rs_stored(o + i,                                          \
                          dx_bwd(F, rs_loadd(g + i), rs_loadd(x + i)));   \
        }                                                                 \
        for (; i < n; i += RS_W) {                                        \
            double tg[RS_W] = {0}, tx[RS_W] = {0};                        \
            const int64_t m = n - i < RS_W ? n - i : RS_W;                \
            for (int64_t j = 0; j < m; j++) {                             \
                tg[j] = g[(i + j) * sa];                                  \
                tx[j] = x[(i + j) * sb];                                  \
            }                                                             \
            rs_stored(tg, dx_bwd(F, rs_loadd(tg), rs_loadd(tx)));         \
            memcpy(o + i, tg, (size_t)m * sizeof *o);                     \
        }                                                                 \
    }
DX_BLOOP(relu, 0)
DX_BLOOP(sigmoid, 1)
DX_BLOOP(tanh, 2)
#undef DX_BLOOP

/* relu_backward's values with o's whole 64-byte lines written by
 * streaming stores (tb_cpu_simd_binary_nt takes it for equal shapes from
 * a working set of 20 MiB, as add's and maximum's): at 1024 x 1024 f64
 * (24 MiB) the cached stores' line fills made the row 1.4x add f64's
 * time for the same traffic.  The head up to o's first line and the
 * tail by dx_relu_bwd_f64: the same select everywhere. */
static void dx_relu_bwd_f64_nt(const void *ap, int64_t sa, const void *bp,
                               int64_t sb, void *op, int64_t n)
{
    (void)sa, (void)sb;
    const double *g = ap, *x = bp;
    double *o = op;
    int64_t i = (int64_t)((64 - ((uintptr_t)o & 63)) & 63) /
                (int64_t)sizeof *o;
    i = i < n ? i : n;
    dx_relu_bwd_f64(g, 1, x, 1, o, i);
    for (; i + 4 * RS_W <= n; i += 4 * RS_W)
        for (int u = 0; u < 4 * RS_W; u += RS_W)
            RS_I(stream_pd)(o + i + u, dx_bwd(0, rs_loadd(g + i + u),
                                              rs_loadd(x + i + u)));
    dx_relu_bwd_f64(g + i, 1, x + i, 1, o + i, n - i);
    _mm_sfence();
}

/* The sum of a's lanes, in lane order. */
static inline double dx_hsum(rd a)
{
    double t[RS_W], r = 0;
    rs_stored(t, a);
    for (int l = 0; l < RS_W; l++)
        r += t[l];
    return r;
}

/* x[0] + ... + x[len - 1] in two RS_W partial sums, then the tail in
 * order (var's first pass, log_softmax_backward's sum). */
static inline double dx_sum(const double *x, int64_t len)
{
    rd s0 = rs_d1(0.0), s1 = rs_d1(0.0);
    int64_t j = 0;
    for (; j + 2 * RS_W <= len; j += 2 * RS_W) {
        s0 = rs_add(s0, rs_loadd(x + j));
        s1 = rs_add(s1, rs_loadd(x + j + RS_W));
    }
    double s = dx_hsum(rs_add(s0, s1));
    for (; j < len; j++)
        s += x[j];
    return s;
}

#include "f64_lsm_simd.h" /* log_softmax, softmax, their backward */

#include "var64_simd.h" /* var f64 */

/* ---- max, min, argmax f64: reduce_c.c's scan rules ---------------------- */

/* The first j < len with x[j] == v (v not NaN); len if none. */
static inline int64_t dx_find(const double *x, int64_t len, double v)
{
    const rd vv = rs_d1(v);
    int64_t j = 0;
    for (; j + RS_W <= len; j += RS_W)
        if (rs_bits(rs_eq(rs_loadd(x + j), vv)))
            break;
    for (; j < len; j++)
        if (x[j] == v)
            return j;
    return len;
}

/* dx_extreme_lane's argmax snaps: at most DX_SNAPS a lane, DX_SNAP_MIN
 * elements or more apart */
#define DX_SNAPS 32
#define DX_SNAP_MIN 128

/* A contiguous lane (len >= 1) as reduce_c.c scans it: m = x[0], then m
 * = x[j] where x[j] OP m or x[j] is NaN; max/min thus end on the last NaN
 * of a lane that has one, argmax (arg) on the first maximum or the first
 * NaN (its index to *at).  Vector form as ops_simd_impl.h's f32 one: two
 * running extremes (x86 max/min return the second operand, the running
 * one, for a NaN) and a NaN mask, then the NaN (rare) or the extreme
 * found again by a scan when its index or its sign (zeros) matters. */
static inline double dx_extreme_lane(const double *x, int64_t len,
                                     int is_max, int arg, int64_t *at)
{
    *at = 0;
    /* max/min of RS_W <= len < 2 RS_W: two overlapping vectors (an
     * element seen twice changes no extreme), then as below; the scan
     * branches on every element, unpredictably on data in no order (max
     * of 1024x10 over axis -1: 11.7 us, 8.3 at the C row) */
    const int two = len >= 2 * RS_W || (!arg && len >= RS_W);
    if (!two) {
        double m = x[0];
        for (int64_t j = 1; j < len && (!arg || m == m); j++) {
            double v = x[j];
            if ((is_max ? v > m : v < m) || v != v) {
                m = v;
                *at = j;
            }
        }
        return m;
    }
    const int64_t o1 = len < 2 * RS_W ? len - RS_W : RS_W;
    rd m0 = rs_loadd(x), m1 = rs_loadd(x + o1);
    rmask nan = rs_unord(m0, m1);
    int64_t j = o1 + RS_W;
    /* argmax: the running extreme of the elements before ends[k], snap
     * k, every iv elements (at most DX_SNAPS of them): the first snap
     * holding the result bounds where the scan for it starts */
    double snap[DX_SNAPS * RS_W];
    int64_t ends[DX_SNAPS];
    int ns = 0;
    const int64_t iv =
        !arg ? len
             : ((len / DX_SNAPS > DX_SNAP_MIN ? len / DX_SNAPS : DX_SNAP_MIN) +
                2 * RS_W - 1) / (2 * RS_W) * (2 * RS_W);
    while (j + 2 * RS_W <= len) {
        const int64_t lim = len - j > iv ? j + iv : len;
        for (; j + 2 * RS_W <= lim; j += 2 * RS_W) {
            rd v0 = rs_loadd(x + j), v1 = rs_loadd(x + j + RS_W);
            nan = rs_mor(nan, rs_unord(v0, v1));
            m0 = is_max ? rs_max(v0, m0) : rs_min(v0, m0);
            m1 = is_max ? rs_max(v1, m1) : rs_min(v1, m1);
        }
        if (arg && ns < DX_SNAPS) {
            rs_stored(snap + ns * RS_W,
                      is_max ? rs_max(m0, m1) : rs_min(m0, m1));
            ends[ns++] = j;
        }
    }
    bool tail_nan = false;
    for (int64_t k = j; k < len; k++)
        tail_nan |= x[k] != x[k];
    if (rs_bits(nan) || tail_nan) {
        int64_t k = 0;
        if (arg) {
            while (x[k] == x[k])
                k++;
        } else {
            for (k = len - 1; x[k] == x[k]; k--)
                ;
        }
        *at = k;
        return x[k];
    }
    m0 = is_max ? rs_max(m0, m1) : rs_min(m0, m1);
    double t[RS_W];
    rs_stored(t, m0);
    double r = t[0];
    for (int u = 1; u < RS_W; u++)
        r = (is_max ? t[u] > r : t[u] < r) ? t[u] : r;
    for (int64_t k = j; k < len; k++)
        r = (is_max ? x[k] > r : x[k] < r) ? x[k] : r;
    if (arg || r == 0) {
        int64_t from = 0;
        if (arg) { /* no element before the snap's end equals r */
            int k = 0;
            while (k < ns && !rs_bits(rs_eq(rs_loadd(snap + k * RS_W),
                                            rs_d1(r))))
                k++;
            from = k == 0 ? 0 : ends[k - 1];
        }
        *at = from + dx_find(x + from, len - from, r);
        return x[*at];
    }
    return r;
}

/* w <= TB_CPU_SIMD_COLS lanes of a non-last axis, row by row, running
 * extremes and argmax's indices (as doubles, exact) on the stack.  The
 * portable update per lane: max/min take v where v OP m or v is NaN;
 * argmax where v > m or (v is NaN and m is not). */
static inline void dx_extreme_cols(const double *x, double *o, int64_t len,
                                   int64_t step, int64_t w, int is_max,
                                   int arg)
{
    double m[TB_CPU_SIMD_COLS], at[TB_CPU_SIMD_COLS];
    for (int64_t t = 0; t < w; t++) {
        m[t] = x[t];
        at[t] = 0;
    }
    const int64_t wv = w - w % RS_W;
    for (int64_t j = 1; j < len; j++) {
        const double *row = x + j * step;
        const rd jv = rs_d1((double)j);
        for (int64_t t = 0; t < wv; t += RS_W) {
            rd v = rs_loadd(row + t), mv = rs_loadd(m + t);
            rmask better = is_max ? rs_gt(v, mv) : rs_lt(v, mv);
            rmask vn = rs_unord(v, v);
            rmask up = arg ? rs_mor(better, rs_mandn(rs_unord(mv, mv), vn))
                           : rs_mor(better, vn);
            rs_stored(m + t, rs_sel(up, v, mv));
            if (arg)
                rs_stored(at + t, rs_sel(up, jv, rs_loadd(at + t)));
        }
        for (int64_t t = wv; t < w; t++) {
            double v = row[t], mv = m[t];
            bool better = is_max ? v > mv : v < mv;
            bool up = arg ? better || (v != v && mv == mv)
                          : better || v != v;
            if (up) {
                m[t] = v;
                at[t] = (double)j;
            }
        }
    }
    for (int64_t t = 0; t < w; t++)
        o[t] = arg ? at[t] : m[t];
}

#define DX_RED(NAME, IS_MAX, ARG)                                         \
    static double dx_##NAME##_lane(const double *x, int64_t len,          \
                                   int64_t corr)                          \
    {                                                                     \
        (void)corr;                                                       \
        int64_t at;                                                       \
        double r = dx_extreme_lane(x, len, IS_MAX, ARG, &at);             \
        return ARG ? (double)at : r;                                      \
    }                                                                     \
    static void dx_##NAME##_cols(const double *x, double *o, int64_t len, \
                                 int64_t step, int64_t w, int64_t corr)   \
    {                                                                     \
        (void)corr;                                                       \
        dx_extreme_cols(x, o, len, step, w, IS_MAX, ARG);                 \
    }
DX_RED(max, 1, 0)
DX_RED(min, 0, 0)
DX_RED(argmax, 1, 1)
#undef DX_RED

#define DX_CAT_(a, b) a##b
#define DX_CAT(a, b) DX_CAT_(a, b)
#define DX_ENTRY(NAME, SFX, LV)                                           \
    int TB_CPU_KFN(NAME, f64, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_simd_unary(ctx, LV, TB_OP_##NAME, TB_F64, in, out, p, \
                                 8, dx_##NAME##_f64);                     \
    }
#define DX_EW_ENTRY(NAME, W, EXPR, SFX, LV)                               \
    int TB_CPU_KFN(NAME, f64, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_simd_unary(ctx, LV, TB_OP_##NAME, TB_F64, in, out, p, \
                                 W, dx_##NAME##_f64);                     \
    }
#define DX_K_ENTRY(NAME, SFX, LV)                                         \
    int TB_CPU_KFN(NAME, f64, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_simd_unary(ctx, LV, TB_OP_##NAME, TB_F64, in, out, p, \
                                 1, dx_##NAME##_kf64);                    \
    }
#define DX_MM_ENTRY(NAME, SFX, LV)                                        \
    int TB_CPU_KFN(NAME, f64, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return dx_mm_run(ctx, LV, TB_OP_##NAME, in, out, p,               \
                         dx_##NAME##_bin, dx_##NAME##_nt,                 \
                         dx_##NAME##_rows);                               \
    }
#define DX_BWD_ENTRY(NAME, SFX, LV)                                       \
    int TB_CPU_KFN(NAME##_backward, f64, SFX)(void *ctx,                  \
                                              const tb_tensor *in,        \
                                              tb_tensor *out,             \
                                              const tb_params *p)         \
    {                                                                     \
        return tb_cpu_simd_binary(ctx, LV, TB_OP_##NAME##_backward,       \
                                  TB_F64, in, out, p,                     \
                                  dx_##NAME##_bwd_f64);                   \
    }
#define DX_RED_ENTRY(NAME, SFX, LV)                                       \
    int TB_CPU_KFN(NAME, f64, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_simd_reduce64(ctx, LV, TB_OP_##NAME, in, out, p,    \
                                    dx_##NAME##_lane, dx_##NAME##_cols);  \
    }
#define DX_ENTRIES(SFX, LV)                                               \
    DX_ENTRY(exp, SFX, LV)                                                \
    DX_ENTRY(log, SFX, LV)                                                \
    DX_ENTRY(sigmoid, SFX, LV)                                            \
    DX_ENTRY(tanh, SFX, LV)                                               \
    DX_ENTRY(silu, SFX, LV)                                               \
    DX_ENTRY(softplus, SFX, LV)                                           \
    DX_ENTRY(gelu, SFX, LV)                                               \
    DX_ENTRY(gelu_tanh, SFX, LV)                                          \
    TB_CPU_EW_OPS(DX_EW_ENTRY, SFX, LV)                                   \
    DX_SIMPLE_OPS(DX_K_ENTRY, SFX, LV)                                    \
    DX_MM_ENTRY(maximum, SFX, LV)                                         \
    DX_MM_ENTRY(minimum, SFX, LV)                                         \
    int TB_CPU_KFN(relu_backward, f64, SFX)(void *ctx,                    \
                                            const tb_tensor *in,          \
                                            tb_tensor *out,               \
                                            const tb_params *p)           \
    {                                                                     \
        return tb_cpu_simd_binary_nt(ctx, LV, TB_OP_relu_backward, TB_F64, \
                                     in, out, p, dx_relu_bwd_f64,         \
                                     dx_relu_bwd_f64_nt);                 \
    }                                                                     \
    DX_BWD_ENTRY(sigmoid, SFX, LV)                                        \
    DX_BWD_ENTRY(tanh, SFX, LV)                                           \
    DX_BWD_ENTRY(gelu, SFX, LV)                                           \
    int TB_CPU_KFN(pow, f64, SFX)(void *ctx, const tb_tensor *in,         \
                                  tb_tensor *out, const tb_params *p)     \
    {                                                                     \
        return tb_cpu_simd_binary(ctx, LV, TB_OP_pow, TB_F64, in, out, p, \
                                  dx_pow_f64);                            \
    }                                                                     \
    void DX_CAT(tb_cpu_pow_f64_, SFX)(const double *a, const double *b,   \
                                      double *o, int64_t n)               \
    {                                                                     \
        dx_pow_f64(a, 1, b, 1, o, n);                                     \
    }                                                                     \
    int TB_CPU_KFN(log_softmax_backward, f64, SFX)(                       \
        void *ctx, const tb_tensor *in, tb_tensor *out, const tb_params *p) \
    {                                                                     \
        return tb_cpu_bw_lsm64(ctx, LV, in, out, p, dx_lsm_rows);         \
    }                                                                     \
    void DX_CAT(tb_cpu_lsm_f64_install_, SFX)(tb_cpu_kernels *k)          \
    {                                                                     \
        k->lsm[TB_F64].rows = dx_lsm_fwd_rows;                            \
        k->lsm[TB_F64].cols = dx_lsm_fwd_cols_0;                          \
        k->lsm[TB_F64].isa = LV;                                          \
        k->sm[TB_F64].rows = dx_sm_rows;                                  \
        k->sm[TB_F64].cols = dx_sm_cols;                                  \
        k->sm[TB_F64].isa = LV;                                           \
    }                                                                     \
    DX_RED_ENTRY(max, SFX, LV)                                            \
    DX_RED_ENTRY(min, SFX, LV)                                            \
    DX_RED_ENTRY(argmax, SFX, LV)                                         \
    int TB_CPU_KFN(var, f64, SFX)(void *ctx, const tb_tensor *in,         \
                                  tb_tensor *out, const tb_params *p)     \
    {                                                                     \
        return tb_cpu_simd_reduce64(ctx, LV, TB_OP_var, in, out, p,       \
                                    dx_var_lane, dx_var_cols);            \
    }                                                                     \
    void DX_CAT(tb_cpu_exp_f64_, SFX)(const double *x, double *o,         \
                                      int64_t n)                          \
    {                                                                     \
        dx_exp_f64(x, o, n, NULL);                                        \
    }                                                                     \
    void DX_CAT(tb_cpu_log_f64_, SFX)(const double *x, double *o,         \
                                      int64_t n)                          \
    {                                                                     \
        dx_log_f64(x, o, n, NULL);                                        \
    }                                                                     \
    void DX_CAT(tb_cpu_act_f64_, SFX)(int fn, const double *x, double *o, \
                                      int64_t n)                          \
    {                                                                     \
        static const double k[2] = {1.0, 20.0};                           \
        static void (*const f[])(const void *, void *, int64_t,           \
                                 const double *) = {                      \
            dx_sigmoid_f64, dx_tanh_f64, dx_silu_f64, dx_softplus_f64,    \
            dx_gelu_f64, dx_gelu_tanh_f64};                               \
        f[fn](x, o, n, k);                                                \
    }                                                                     \
    void DX_CAT(tb_cpu_act_bwd_f64_, SFX)(int fn, const double *g,        \
                                          const double *x, double *o,     \
                                          int64_t n)                      \
    {                                                                     \
        static void (*const f[])(const void *, int64_t, const void *,     \
                                 int64_t, void *, int64_t) = {            \
            dx_relu_bwd_f64, dx_sigmoid_bwd_f64, dx_tanh_bwd_f64,         \
            dx_gelu_bwd_f64};                                             \
        f[fn](g, 1, x, 1, o, n);                                          \
    }

#endif
