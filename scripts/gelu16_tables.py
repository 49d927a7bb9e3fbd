#!/usr/bin/python3
"""Tables of the gelus' 16-entry SIMD cores at AVX-512
(src/backends/cpu/vmath_simd.h: vs_gelu16_poly / vs_gelu16_core, which
vs_gelu_erf_core, vs_gelu_tanh_core and gelu_backward's bw_gelu_f take).

Usage: /usr/bin/python3 scripts/gelu16_tables.py

Each table approximates a function F of a = |x| in [0, 3]: Phi(-a) =
erfc(a / sqrt 2) / 2 (gelu), S(a) = 1 / (1 + exp(v(a))), v(a) = c1 a +
c3 a^3 (gelu_tanh, c1 = 2 sqrt(2/pi), c3 = 0.044715 c1), or gelu'(-a) =
Phi(-a) - a phi(a) (gelu_backward).  t = fl(a + 1.5 * 2^21) (ulp 1/4)
holds j = round(4 a) in its low bits (the lookups' index: vpermps reads
the low 4 bits only), w = a - (t - 1.5 * 2^21) = a - j / 4 (both exact,
|w| <= 1/8), F(a) ~ P_j(w) of degree 5: piece j is a in [(j - 1/2) / 4,
(j + 1/2) / 4], 13 pieces (a = 3 is in piece 12; the tables' entries
13-15 are 0).  No centre table: six lookups a vector, not eight.
The fit is in u = 4 w = 4 a - j (|u| <= 1/2); the printed coefficient of
w^k is u^k's times 4^k, exact, so a float Horner in w rounds the same
values as one in u.  This prints vs_gelu16_pc, vs_gelu16_tanh_pc and
vs_gelu16_dpc ([k][j]: P_j's coefficient of w^k) and checks, exiting 1
if one fails, that a - j / 4 is exact, the fit's error with the float
coefficients evaluated in double and the error of the float Horner
evaluation (one rounding per FMA, as the SIMD code does), both on 4000
points per piece, relative to F (gelu'(-a): to Phi(-a) + a phi(a), its
bound's unit, as gelu_erf_tables.py's vs_gelu_dpc), against the limits
below.
How it is fitted (our own): a minimax fit in that unit (Lawson's
algorithm, weighted least squares on 1500 Chebyshev points of the piece
widened by 1e-3 in u), coefficient by coefficient from u^0 up: each is
rounded to float and the higher ones refitted to absorb the rounding
(scripts/piecewise_tables.py's lawson).
Needs numpy (Debian python3-numpy).
"""
import math
import sys

import numpy as np

from piecewise_tables import cfloat, check, f32, lawson, status

NP = 13      # pieces used (a <= 3); the tables' other 3 entries are 0
DEG = 5
SC = 4.0
# fit error, float coefficients, in double: P_j(0) is F(j / 5) rounded
# to float (no centre chosen for it), up to 2^-25 of error at u = 0
FIT_LIMIT = 2.0 ** -24.2
EVAL_LIMIT = 1.85 * 2.0 ** -24  # float Horner's relative error
EVAL_LIMIT_D = 1.5 * 2.0 ** -24  # vs_gelu16_dpc's, in its unit
C1 = 2 * 0.7978845608028654
C3 = 0.044715 * C1


def phi_m(a):
    return math.erfc(a / math.sqrt(2.0)) / 2


def s_fun(a):
    return 1.0 / (1.0 + math.exp(C1 * a + C3 * a ** 3))


def dphi(a):
    """a phi(a), phi the normal density"""
    return a * math.exp(-a * a / 2) / math.sqrt(2 * math.pi)


def dgelu_fun(a):
    """gelu'(-a) = Phi(-a) - a phi(a) (gelu_backward's s)"""
    return phi_m(a) - dphi(a)


def dgelu_unit(a):
    """its error's unit, Phi(-a) + a phi(a) (it crosses 0 near 0.75)"""
    return phi_m(a) + dphi(a)


def urange(j):
    return (0.0 if j == 0 else -0.5 - 1e-3), 0.5 + 1e-3


def fit(j, fun, unit, n=1500):
    lo, hi = urange(j)
    u = np.array([(lo + hi) / 2 + (hi - lo) / 2 *
                  math.cos(math.pi * (k + 0.5) / n) for k in range(n)])
    y = np.array([fun((j + t) / SC) for t in u])
    sc = np.array([unit((j + t) / SC) for t in u])
    V = np.vander(u, DEG + 1, increasing=True)
    fixed = []
    for k in range(DEG + 1):
        r = y - (V[:, :k] @ np.array(fixed) if k else 0.0)
        fixed.append(f32(lawson(V[:, k:], r, sc)[0]))
    return fixed


def horner_f32(cf, u):
    g = np.full(len(u), cf[-1])
    for k in range(len(cf) - 2, -1, -1):
        g = (g * u + cf[k]).astype(np.float32).astype(np.float64)
    return g


def fit_piece(name, j, fun, unit, lim):
    cf = fit(j, fun, unit)
    lo, hi = max(0.0, (j - 0.5) / SC), min(3.0, (j + 0.5) / SC)
    a = np.linspace(lo, hi, 4000).astype(np.float32).astype(np.float64)
    jf = np.rint(a * SC)
    ok = jf == j
    a, jf = a[ok], jf[ok]
    w = a - jf / SC
    check(all(f32(t) == t for t in w), "%s %d: a - j / 4 inexact" % (name, j))
    u = w * SC    # exact: the code's Horner in w with the coefficients
    # scaled by 4^k rounds the same values (a power of two)
    y = np.array([fun(t) for t in a])
    sc = np.array([unit(t) for t in a])
    ed = np.max(np.abs(np.polyval(cf[::-1], u) - y) / sc)
    ef = np.max(np.abs(horner_f32(cf, u) - y) / sc)
    print("/* %s piece %d [%.3f, %.3f]: fit %.2e (2^%.1f), float Horner "
          "%.2f * 2^-24 */" % (name, j, lo, hi, ed, math.log2(ed),
                               ef * 2 ** 24))
    check(ed <= FIT_LIMIT, "%s %d: fit error %.3g" % (name, j, ed))
    check(ef <= lim, "%s %d: float error %.3g" % (name, j, ef))
    return cf


def print_table(name, tab):
    print("static _Alignas(64) const float %s[%d][16] = {" % (name, DEG + 1))
    for k in range(DEG + 1):
        row = [cfloat(tab[j][k] * SC ** k) for j in range(NP)]
        row += [cfloat(0.0)] * (16 - NP)
        print("    {" + ", ".join(row[0:3]) + ",")
        for s in range(3, 15, 3):
            print("     " + ", ".join(row[s:s + 3]) + ",")
        print("     " + row[15] + "},")
    print("};")


check(int(np.rint(f32(3.0) * SC)) == NP - 1, "a = 3 is not in piece 12")
tabs = []
for name, fun, unit, lim in (
        ("vs_gelu16_pc", phi_m, phi_m, EVAL_LIMIT),
        ("vs_gelu16_tanh_pc", s_fun, s_fun, EVAL_LIMIT),
        ("vs_gelu16_dpc", dgelu_fun, dgelu_unit, EVAL_LIMIT_D)):
    tabs.append((name, [fit_piece(name, j, fun, unit, lim)
                        for j in range(NP)]))
for name, tab in tabs:
    print_table(name, tab)
sys.exit(status())
