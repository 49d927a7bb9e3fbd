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
(relative error ~1e-15, far below the 2^-26 looked at here).  The
pieces, fit and checks are scripts/piecewise_tables.py's, shared with
gelu_erf_tables.py.
"""
import math
import sys

from piecewise_tables import (NP, R, S, center, check, f32, fit_piece,
                              print_centers, print_table, status)

C1 = 2 * 0.7978845608028654
C3 = 0.044715 * C1
FIT_LIMIT = 2.0 ** -26       # fit error, float coefficients, in double
EVAL_LIMIT = 1.6 * 2.0 ** -24    # float Horner's relative error


def s_fun(a):
    """S(a) = 1 / (1 + exp(v(a)))"""
    return 1.0 / (1.0 + math.exp(C1 * a + C3 * a ** 3))


def s_rel(a):
    """S, fitted for relative error"""
    y = s_fun(a)
    return y, y


ctr = [center(j, s_fun) for j in range(NP)]
tab = [fit_piece("vs_gelu_tanh_pc", j, ctr[j], s_rel, FIT_LIMIT, EVAL_LIMIT)
       for j in range(NP)]
check(int(f32(R) * f32(S)) == NP - 1 and f32(R) * f32(S) < NP,
      "a = R is not in the last piece")
print_centers("vs_gelu_tanh_ctr", ctr)
print_table("vs_gelu_tanh_pc", tab)
sys.exit(status())
