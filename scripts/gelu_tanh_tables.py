#!/usr/bin/python3
"""Tables of gelu_tanh's SIMD core (src/backends/cpu/vmath_simd.h).

Usage: /usr/bin/python3 scripts/gelu_tanh_tables.py

gelu_tanh(x) = x sigmoid(v(x)), v(x) = c1 x + c3 x^3 (c1 = 2 sqrt(2/pi),
c3 = 0.044715 c1, both as the double constants of the code and of the
checkasm reference).  The core computes S(a) = sigmoid(-v(a)) =
1 / (1 + exp(v(a))) for a = |x| in [0, 3] on 8 pieces: piece
j = trunc(a * K) (K = 2.666f, as gelu_erf's core: a = 3 is in piece 7),
u = a - c_j, S(a) ~ P_j(u) of degree 6, then x S for x < 0 and x - x S
for x >= 0.  This prints the C tables vs_gelu_tanh_ctr (c_j) and
vs_gelu_tanh_pc (pc[k][j]: P_j's coefficient of u^k) and checks, exiting
1 if one fails:
- c_0 = 0, and for j >= 1 c_j / 2 <= a <= 2 c_j on the piece (Sterbenz:
  a - c_j is exact);
- the fit's relative error with the float coefficients, evaluated in
  double, and the relative error of the float Horner evaluation (one
  rounding per FMA, as the SIMD code does), both on 4000 points per
  piece, within the limits below.  For x < 0 the result's error is S's
  relative error plus the product's half ulp; for x > 0 it is that
  times S / (1 - S) <= 1 plus the subtraction's half ulp.
How it is fitted (our own): c_j (j >= 1) is the float within 0.006 of
the piece's midpoint whose S(c_j) is nearest a float, so that P_j's
constant term rounds with almost no error; then a relative-error minimax
fit (Lawson's algorithm, weighted least squares on 1500 Chebyshev points
of the piece widened by 1e-4), coefficient by coefficient from u^0 up:
each is rounded to float and the higher ones refitted to absorb the
rounding.
Needs numpy (Debian python3-numpy); S is computed with libm's double exp
(relative error ~1e-15, far below the 2^-26 looked at here).
"""
import math
import sys

import numpy as np

C1 = 2 * 0.7978845608028654
C3 = 0.044715 * C1
R = 3.0                      # the core's range, VS_GELU_TANH_FAST
K = float(np.float32(2.666))
DEG = 6
NP = 8
FIT_LIMIT = 2.0 ** -26       # fit error, float coefficients, in double
EVAL_LIMIT = 1.6 * 2.0 ** -24    # float Horner's relative error
bad = 0


def f32(x):
    return float(np.float32(x))


def s_fun(a):
    """S(a) = 1 / (1 + exp(v(a)))"""
    return 1.0 / (1.0 + math.exp(C1 * a + C3 * a ** 3))


def cfloat(x):
    return "%.9ef" % x


def check(ok, what):
    global bad
    if not ok:
        print("FAILED: " + what, file=sys.stderr)
        bad += 1


def piece(j):
    lo, hi = j / K, min((j + 1) / K, R)
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
        v = s_fun(c)
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


def fit(j, c, n=1500):
    lo, hi = piece(j)
    a = np.array([(lo + hi) / 2 + (hi - lo) / 2 *
                  math.cos(math.pi * (k + 0.5) / n) for k in range(n)])
    y = np.array([s_fun(t) for t in a])
    V = np.vander(a - c, DEG + 1, increasing=True)
    fixed = []
    for k in range(DEG + 1):
        r = y - (V[:, :k] @ np.array(fixed) if k else 0.0)
        fixed.append(f32(lawson(V[:, k:], r, y)[0]))
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


ctr = [center(j) for j in range(NP)]
tab = []
for j in range(NP):
    c = ctr[j]
    cf = fit(j, c)
    lo, hi = piece(j)
    a = np.linspace(lo, hi, 4000).astype(np.float32).astype(np.float64)
    u = a - c    # exact (Sterbenz), checked below
    check(all(f32(x) == x for x in u), "piece %d: a - c inexact" % j)
    if j > 0:
        check(c / 2 <= lo and hi <= 2 * c, "piece %d: Sterbenz" % j)
    y = np.array([s_fun(t) for t in a])
    ed = np.max(np.abs(np.polyval(cf[::-1], u) - y) / y)
    ef = np.max(np.abs(horner_f32(cf, u) - y) / y)
    print("/* piece %d [%.4f, %.4f] c %a: fit %.2e (2^%.1f), float "
          "Horner %.2f * 2^-24 */" % (j, lo, hi, c, ed, math.log2(ed),
                                        ef * 2 ** 24))
    check(ed <= FIT_LIMIT, "piece %d: fit error %.3g" % (j, ed))
    check(ef <= EVAL_LIMIT, "piece %d: float error %.3g" % (j, ef))
    tab.append(cf)
check(int(f32(R) * f32(K)) == NP - 1 and f32(R) * f32(K) < NP,
      "a = R is not in the last piece")
print("static _Alignas(32) const float vs_gelu_tanh_ctr[8] = {")
print("    " + ", ".join(cfloat(c) for c in ctr[:4]) + ",")
print("    " + ", ".join(cfloat(c) for c in ctr[4:]) + "};")
print("static _Alignas(32) const float vs_gelu_tanh_pc[%d][8] = {" % (DEG + 1))
for k in range(DEG + 1):
    row = [cfloat(tab[j][k]) for j in range(NP)]
    print("    {" + ", ".join(row[:3]) + ",")
    print("     " + ", ".join(row[3:6]) + ",")
    print("     " + ", ".join(row[6:]) + "},")
print("};")
sys.exit(1 if bad else 0)
