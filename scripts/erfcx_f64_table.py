#!/usr/bin/python3
"""Coefficients of erfc's core in f64's SIMD rows (gelu, gelu_backward:
src/backends/cpu/f64_gelu_simd.h, dx_erfcx).

Usage: /usr/bin/python3 scripts/erfcx_f64_table.py \
           > src/backends/cpu/f64_erfcx.h

For z >= 0 the rows compute erfcx z = e^(z^2) erfc z as

    erfcx z = 2 q (1/sqrt(pi) + q g(t)),  q = 1 / (1 + 2z),
    t = (z - L) / (z + L) in [-1, 1),     L = 4,

(erfcx z ~ 2 q / sqrt(pi) for large z: g is what is left, a bounded
function of t, analytic on [-1, 1] including t = 1, z = inf), and g as
a polynomial in t of degree N - 1 summed by Horner's rule (one fma a
coefficient).  Our own
construction after Weideman's rational substitution (SIAM J. Numer.
Anal. 31, 1994), fitted here: g is interpolated at the N Chebyshev
nodes in 50-digit mpmath arithmetic, the Chebyshev series turned into
the monomial basis there (exact: T_k's integer coefficients), the
coefficients rounded to double (they decay, sum of magnitudes 1.21 on
[-1, 1]: Horner's rule loses no more than Clenshaw's recurrence, which
took three operations a coefficient).  This prints the header with the
C table dx_erfcx_c (p_0 .. p_{N-1}, p_k the coefficient of t^k) and
checks (on stderr),
exiting 1 if one fails:
- the truncated series summed exactly, against mpmath's erfcx on 3000
  points of z in [0, 40] (and z = 0): within FIT_LIMIT relative to
  erfcx with the exact coefficients, FIT_LIMIT_D with them rounded to
  double (their rounding, up to 0.45 ulp near z = 0, is most of it);
- Horner's rule and erfcx's formula above evaluated in double
  (each operation rounded once, fused multiply-adds as the SIMD code
  has them, via mpmath at 53 bits): within EVAL_LIMIT relative.
Needs mpmath (Debian python3-mpmath).
"""
import sys

import mpmath as mp

mp.mp.dps = 50
L = mp.mpf(4)
N = 28                      # coefficients (degree N - 1)
FIT_LIMIT = 2.0 ** -60       # the series, exact coefficients
FIT_LIMIT_D = 2.0 ** -53.5   # with the coefficients rounded to double
EVAL_LIMIT = 3.5 * 2.0 ** -53
SP = mp.sqrt(mp.pi)


def g_of_t(t):
    z = L * (1 + t) / (1 - t)
    q = 1 / (1 + 2 * z)
    return (mp.erfc(z) * mp.exp(z * z) / (2 * q) - 1 / SP) / q


def cheb_coeffs():
    nodes = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / N) for k in range(N)]
    vals = [g_of_t(t) for t in nodes]
    c = []
    for j in range(N):
        s = mp.fsum(vals[k] * mp.cos(mp.pi * j * (k + mp.mpf(1) / 2) / N)
                    for k in range(N))
        c.append(2 * s / N)
    c[0] /= 2
    return c


def cheb_to_mono(c):
    """sum c_j T_j(t) as sum p_k t^k (exact in mpmath)."""
    n = len(c)
    p = [mp.mpf(0)] * n
    tkm1, tk = [1], [0, 1]          # T_0, T_1 as integer coefficients
    for j in range(n):
        tj = tkm1 if j == 0 else tk if j == 1 else None
        if j >= 2:
            nxt = [0] + [2 * a for a in tk]
            for i, a in enumerate(tkm1):
                nxt[i] -= a
            tkm1, tk = tk, nxt
            tj = tk
        for i, a in enumerate(tj):
            p[i] += c[j] * a
    return p


def d(x):
    """x rounded to double."""
    return mp.mpf(float(x))


def fma(a, b, c):
    return d(mp.mpf(a) * b + c)


SP2 = mp.sqrt(2 * mp.pi)
NS = 12                     # the short forms' coefficients (degree 11)
SHORT_LIMIT = 2.0 ** -52.5  # their fit, coefficients rounded, relative


def short_q(y):
    """Q(y) = (Phi(x) - 1/2) / x, y = x^2"""
    if y == 0:
        return 1 / SP2
    x = mp.sqrt(y)
    return (mp.ncdf(x) - mp.mpf(1) / 2) / x


def short_d(y):
    """D(y) = Q(y) + phi(x): gelu'(x) = 1/2 + x D(x^2)"""
    return short_q(y) + mp.exp(-y / 2) / SP2


def short_fit(f):
    """f on y in [0, 1] interpolated at NS Chebyshev nodes, monomial
    coefficients rounded to double; the fit's worst relative error."""
    nodes = [(1 + mp.cos(mp.pi * (k + mp.mpf(1) / 2) / NS)) / 2
             for k in range(NS)]
    a = mp.matrix([[t ** i for i in range(NS)] for t in nodes])
    c = [d(v) for v in mp.lu_solve(a, mp.matrix([f(t) for t in nodes]))]
    err = max(abs(horner(c, y, True) / f(y) - 1)
              for y in [mp.mpf(k) / 1000 for k in range(1001)])
    return c, err


def horner(p, t, exact):
    if exact:
        r = mp.mpf(0)
        for pk in reversed(p):
            r = r * t + pk
        return r
    r = p[-1]
    for pk in reversed(p[:-1]):
        r = fma(r, t, pk)
    return r


def erfcx_double(c, z):
    """The rows' erfcx of a double z, every operation rounded."""
    z = d(z)
    t = d(d(z - L) / d(z + L))
    dd = fma(2, z, 1)
    e = fma(2, z, d(1 - dd))
    r = d(1 / dd)
    rho = fma(-r, dd, 1)
    q = fma(r, fma(-e, r, rho), r)
    g = horner(c, t, False)
    return d(d(2 * q) * fma(g, q, d(1 / SP)))


def main():
    ce = cheb_to_mono(cheb_coeffs())
    c = [d(x) for x in ce]
    bad = 0
    zs = [mp.mpf(0)] + [mp.mpf(40) * (i + 0.5) / 3000 for i in range(3000)]
    wx = wf = we = 0
    ze = 0
    for z in zs:
        want = mp.erfc(z) * mp.exp(z * z)
        t = (z - L) / (z + L)
        q = 1 / (1 + 2 * z)
        fit = 2 * q * (1 / SP + q * horner(ce, t, True))
        wx = max(wx, abs(fit / want - 1))
        fit = 2 * q * (1 / SP + q * horner(c, t, True))
        wf = max(wf, abs(fit / want - 1))
        zd = d(z)
        wantd = mp.erfc(zd) * mp.exp(zd * zd)
        e = abs(erfcx_double(c, zd) / wantd - 1)
        if e > we:
            we, ze = e, zd
    print("/* Generated by scripts/erfcx_f64_table.py (do not edit): the "
          "monomial\n * coefficients p_0 .. p_%d (of t^k) of f64_gelu_simd.h's "
          "dx_erfcx,\n * and the short forms' Q and D, for inclusion there only. */" % (N - 1))
    print("#ifndef TB_BACKENDS_CPU_F64_ERFCX_H")
    print("#define TB_BACKENDS_CPU_F64_ERFCX_H\n")
    print("#define DX_ERFCX_N %d" % N)
    print("static const double dx_erfcx_c[DX_ERFCX_N] = {")
    for i in range(0, N, 3):
        print("    " + " ".join(float(x).hex() + "," for x in c[i:i + 3]))
    print("};\n")
    print("/* |x| <= 1 (dx_gelu_blk, dx_gelu_bwd_blk): Phi(x) = 1/2 + x "
          "Q(x^2),\n * gelu'(x) = 1/2 + x D(x^2), Q and D of degree %d "
          "(coefficient of\n * y^k first), fitted in 40 digits on y in "
          "[0, 1] */" % (NS - 1))
    print("#define DX_GELU_NS %d" % NS)
    for name, f in (("dx_gelu_q", short_q), ("dx_gelu_d", short_d)):
        cs, err = short_fit(f)
        print("static const double %s[DX_GELU_NS] = {" % name)
        for i in range(0, NS, 3):
            print("    " + " ".join(float(x).hex() + "," for x in cs[i:i + 3]))
        print("};")
        print("%s: fit with double coefficients %.3g (2^%.2f), limit 2^%.1f"
              % (name, err, float(mp.log(err, 2)), mp.log(SHORT_LIMIT, 2)),
              file=sys.stderr)
        if err > SHORT_LIMIT:
            print("FAIL: %s" % name, file=sys.stderr)
            bad = 1
    print("\n#endif")
    print("fit error %.3g (2^%.2f), limit 2^%.1f; coefficients rounded: "
          "%.3g (2^%.2f), limit 2^%.1f" %
          (wx, float(mp.log(wx, 2)), mp.log(FIT_LIMIT, 2), wf,
           float(mp.log(wf, 2)), mp.log(FIT_LIMIT_D, 2)), file=sys.stderr)
    print("double evaluation %.3g (%.3f x 2^-53, at z = %s), limit %.2f" %
          (we, we * 2.0 ** 53, mp.nstr(ze, 6), EVAL_LIMIT * 2.0 ** 53),
          file=sys.stderr)
    if wx > FIT_LIMIT or wf > FIT_LIMIT_D:
        print("FAIL: fit", file=sys.stderr)
        bad = 1
    if we > EVAL_LIMIT:
        print("FAIL: evaluation", file=sys.stderr)
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
