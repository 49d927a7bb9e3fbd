"""Piecewise float polynomials for the SIMD cores of gelu_erf_tables.py
and gelu_tanh_tables.py (not run by itself).

A function f on a = |x| in [0, R] is cut into NP pieces, piece j =
trunc(a * S) (S = 2.666f, so a = R = 3 is in piece 7), and approximated
there by P_j(u), u = a - c_j, of degree DEG.  c_0 = 0; for j >= 1, c_j is
the float within 0.006 of the piece's midpoint whose f(c_j) is nearest a
float (P_j's constant term then rounds with almost no error), and
c_j / 2 <= a <= 2 c_j on the piece, so u is exact (Sterbenz; checked).
The fit (our own): a minimax fit of the error in a given unit (Lawson's
algorithm, weighted least squares on 1500 Chebyshev points of the piece
widened by 1e-4), coefficient by coefficient from u^0 up: each is rounded
to float and the higher ones refitted to absorb the rounding.  Each
piece's error is measured on 4000 points, with the float coefficients in
double and by a float Horner evaluation (one rounding per FMA, as the
SIMD code does), and checked against the caller's limits.
"""
import math
import sys

import numpy as np

S = float(np.float32(2.666))
R = 3.0
DEG = 6
NP = 8
_bad = [0]


def f32(x):
    return float(np.float32(x))


def cfloat(x):
    return "%.9ef" % x


def check(ok, what):
    if not ok:
        print("FAILED: " + what, file=sys.stderr)
        _bad[0] += 1


def status():
    """The exit status: 1 when a check failed."""
    return 1 if _bad[0] else 0


def piece(j):
    lo, hi = j / S, min((j + 1) / S, R)
    return max(lo - 1e-4, 0.0), hi + 1e-4


def center(j, value):
    """c_j for the function value(a) (a double)."""
    if j == 0:
        return 0.0
    lo, hi = piece(j)
    mid = np.array([(lo + hi) / 2], dtype=np.float32).view(np.int32)[0]
    best = (2.0, None)
    fulp = 2.0 ** (math.frexp((lo + hi) / 2)[1] - 24)    # float ulp
    span = int(0.006 / fulp)
    for d in range(-span, span + 1):
        c = float(np.array([mid + d], dtype=np.int32).view(np.float32)[0])
        v = value(c)
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


def fit(j, c, fun, n=1500):
    """P_j's float coefficients, u^0 first; fun(a) = (f(a), the error's
    unit at a)."""
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


def fit_piece(name, j, c, fun, fit_limit, eval_limit):
    """Fit piece j, print its errors as a C comment, check them; its
    coefficients."""
    cf = fit(j, c, fun)
    lo, hi = piece(j)
    a = np.linspace(lo, hi, 4000).astype(np.float32).astype(np.float64)
    u = a - c    # exact (Sterbenz), checked
    check(all(f32(x) == x for x in u), "%s %d: a - c inexact" % (name, j))
    if j > 0:
        check(c / 2 <= lo and hi <= 2 * c, "%s %d: Sterbenz" % (name, j))
    yw = np.array([fun(t) for t in a])
    y, w = yw[:, 0], yw[:, 1]
    ed = np.max(np.abs(np.polyval(cf[::-1], u) - y) / w)
    ef = np.max(np.abs(horner_f32(cf, u) - y) / w)
    print("/* piece %d [%.4f, %.4f] c %a: fit %.2e (2^%.1f), float "
          "Horner %.2f * 2^-24 */" % (j, lo, hi, c, ed, math.log2(ed),
                                        ef * 2 ** 24))
    check(ed <= fit_limit, "%s %d: fit error %.3g" % (name, j, ed))
    check(ef <= eval_limit, "%s %d: float error %.3g" % (name, j, ef))
    return cf


def print_centers(name, ctr):
    print("static _Alignas(32) const float %s[8] = {" % name)
    print("    " + ", ".join(cfloat(c) for c in ctr[:4]) + ",")
    print("    " + ", ".join(cfloat(c) for c in ctr[4:]) + "};")


def print_table(name, tab):
    print("static _Alignas(32) const float %s[%d][8] = {" % (name, DEG + 1))
    for k in range(DEG + 1):
        row = [cfloat(tab[j][k]) for j in range(NP)]
        print("    {" + ", ".join(row[:3]) + ",")
        print("     " + ", ".join(row[3:6]) + ",")
        print("     " + ", ".join(row[6:]) + "},")
    print("};")
