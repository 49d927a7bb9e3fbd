#!/usr/bin/python3
"""Tables of gelu_erf's SIMD core (src/backends/cpu/vmath_simd.h).

Usage: /usr/bin/python3 scripts/gelu_erf_tables.py

The core computes Phi(-a) = erfc(a / sqrt 2) / 2 for a = |x| in [0, 3]
on 8 pieces: piece j = trunc(a * S) (S = 2.666f, so a = 3 is in piece
7), u = a - c_j, Phi(-a) ~ P_j(u) of degree 6; gelu_backward's rows
(bwd_simd_impl.h) take gelu'(-a) = Phi(-a) - a phi(a) the same way.
This prints the C tables vs_gelu_ctr (c_j), vs_gelu_pc (pc[k][j]: P_j's
coefficient of u^k) and vs_gelu_dpc (the same for gelu'(-a), fitted for
error relative to Phi(-a) + a phi(a), the unit of its bound: it crosses
0 near a = 0.75) and checks, exiting 1 if one fails:
- c_0 = 0, and for j >= 1 c_j / 2 <= a <= 2 c_j on the piece (Sterbenz:
  a - c_j is exact);
- the fit's (relative) error with the float coefficients, evaluated in
  double, and the error of the float Horner evaluation (one rounding per
  FMA, as the SIMD code does), both on 4000 points per piece, within
  the limits below.
How it is fitted (our own): c_j (j >= 1) is the float within 0.006 of
the piece's midpoint whose Phi(-c_j) is nearest a float, so that P_j's
constant term rounds with almost no error; then a minimax fit of the
error in the unit above (Lawson's algorithm, weighted least squares on
1500 Chebyshev points of the piece widened by 1e-4), coefficient by
coefficient from u^0 up: each is rounded to float and the higher ones
refitted to absorb the rounding.
Needs numpy (Debian python3-numpy); erfc is libm's double erfc (error
~1e-16, far below the 2^-26 looked at here).
"""
import math
import sys

import numpy as np

S = float(np.float32(2.666))
DEG = 6
NP = 8
FIT_LIMIT = 2.0 ** -24.5    # fit error, float coefficients, in double
EVAL_LIMIT = 1.6 * 2.0 ** -24    # float Horner's relative error
EVAL_LIMIT_D = 1.3 * 2.0 ** -24    # vs_gelu_dpc's, see dgelu_fun
bad = 0


def f32(x):
    return float(np.float32(x))


def phi_m(a):
    return math.erfc(a / math.sqrt(2.0)) / 2


def cfloat(x):
    return "%.9ef" % x


def check(ok, what):
    global bad
    if not ok:
        print("FAILED: " + what, file=sys.stderr)
        bad += 1


def piece(j):
    lo, hi = j / S, min((j + 1) / S, 3.0)
    return max(lo - 1e-4, 0.0), hi + 1e-4


def center(j):
    if j == 0:
        return 0.0
    lo, hi = piece(j)
    mid = np.array([(lo + hi) / 2], dtype=np.float32).view(np.int32)[0]
    best = (2.0, None)
    fulp = 2.0 ** (math.frexp((lo + hi) / 2)[1] - 24)    # float ulp
    span = int(0.006 / fulp)
    for d in range(-span, span + 1):
        c = float(np.array([mid + d], dtype=np.int32).view(np.float32)[0])
        v = phi_m(c)
        e = abs(f32(v) - v) / v
        if e < best[0]:
            best = (e, c)
    return best[1]


def lawson(V, y, scale, iters=200):
    w = np.ones(len(y)) / len(y)
    for _ in range(iters):
        sw = np.sqrt(w) / scale
        coef = np.linalg.lstsq(V * sw[:, None], y * sw, rcond=None)[0]
        e = np.abs(V @ coef - y) / scale
        w = w * e + 1e-300
        w /= w.sum()
    return coef


def phi_fun(a):
    """Phi(-a), fitted for relative error"""
    y = phi_m(a)
    return y, y


def dgelu_fun(a):
    """Phi(-a) - a phi(a) (gelu'(-a)), fitted for error relative to
    Phi(-a) + a phi(a) (its bound's unit: it crosses 0 near 0.75)"""
    ph = a * math.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    return phi_m(a) - ph, phi_m(a) + ph


def fit(j, c, fun, n=1500):
    lo, hi = piece(j)
    a = np.array([(lo + hi) / 2 + (hi - lo) / 2 *
                  math.cos(math.pi * (k + 0.5) / n) for k in range(n)])
    yw = np.array([fun(t) for t in a])
    V = np.vander(a - c, DEG + 1, increasing=True)
    fixed = []
    for k in range(DEG + 1):
        r = yw[:, 0] - (V[:, :k] @ np.array(fixed) if k else 0.0)
        fixed.append(f32(lawson(V[:, k:], r, yw[:, 1])[0]))
    return fixed


def horner_f32(cf, u):
    """float Horner, one rounding per FMA (the product of two floats is
    exact in double, so double then float rounds once but for double
    rounding, which can move a result by one float ulp at most once in
    ~2^29 cases: an estimate; the checkasm sweep is the proof)"""
    g = np.full(len(u), cf[-1])
    for k in range(len(cf) - 2, -1, -1):
        g = (g * u + cf[k]).astype(np.float32).astype(np.float64)
    return g


def table(name, tab):
    print("static _Alignas(32) const float %s[%d][8] = {" % (name, DEG + 1))
    for k in range(DEG + 1):
        row = [cfloat(tab[j][k]) for j in range(NP)]
        print("    {" + ", ".join(row[:3]) + ",")
        print("     " + ", ".join(row[3:6]) + ",")
        print("     " + ", ".join(row[6:]) + "},")
    print("};")


ctr = [center(j) for j in range(NP)]
tabs = []
for name, fun, lim in (("vs_gelu_pc", phi_fun, EVAL_LIMIT),
                       ("vs_gelu_dpc", dgelu_fun, EVAL_LIMIT_D)):
    print("/* %s */" % name)
    tab = []
    for j in range(NP):
        c = ctr[j]
        cf = fit(j, c, fun)
        lo, hi = piece(j)
        a = np.linspace(lo, hi, 4000).astype(np.float32).astype(np.float64)
        u = a - c    # exact (Sterbenz), checked below
        check(all(f32(x) == x for x in u), "piece %d: a - c inexact" % j)
        if j > 0:
            check(c / 2 <= lo and hi <= 2 * c, "piece %d: Sterbenz" % j)
        yw = np.array([fun(t) for t in a])
        y, w = yw[:, 0], yw[:, 1]
        ed = np.max(np.abs(np.polyval(cf[::-1], u) - y) / w)
        ef = np.max(np.abs(horner_f32(cf, u) - y) / w)
        print("/* piece %d [%.4f, %.4f] c %a: fit %.2e (2^%.1f), float "
              "Horner %.2f * 2^-24 */" % (j, lo, hi, c, ed, math.log2(ed),
                                            ef * 2 ** 24))
        check(ed <= FIT_LIMIT, "%s %d: fit error %.3g" % (name, j, ed))
        check(ef <= lim, "%s %d: float error %.3g" % (name, j, ef))
        tab.append(cf)
    tabs.append((name, tab))
print("static _Alignas(32) const float vs_gelu_ctr[8] = {")
print("    " + ", ".join(cfloat(c) for c in ctr[:4]) + ",")
print("    " + ", ".join(cfloat(c) for c in ctr[4:]) + "};")
for name, tab in tabs:
    table(name, tab)
sys.exit(1 if bad else 0)
