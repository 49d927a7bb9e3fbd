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
~1e-16, far below the 2^-26 looked at here).  The pieces, fit and
checks are scripts/piecewise_tables.py's, shared with gelu_tanh_tables.py.
"""
import math
import sys

from piecewise_tables import (NP, center, fit_piece, print_centers,
                              print_table, status)

FIT_LIMIT = 2.0 ** -24.5    # fit error, float coefficients, in double
EVAL_LIMIT = 1.6 * 2.0 ** -24    # float Horner's relative error
EVAL_LIMIT_D = 1.3 * 2.0 ** -24    # vs_gelu_dpc's, see dgelu_fun


def phi_m(a):
    return math.erfc(a / math.sqrt(2.0)) / 2


def phi_fun(a):
    """Phi(-a), fitted for relative error"""
    y = phi_m(a)
    return y, y


def dgelu_fun(a):
    """Phi(-a) - a phi(a) (gelu'(-a)), fitted for error relative to
    Phi(-a) + a phi(a) (its bound's unit: it crosses 0 near 0.75)"""
    ph = a * math.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    return phi_m(a) - ph, phi_m(a) + ph


ctr = [center(j, phi_m) for j in range(NP)]
tabs = []
for name, fun, lim in (("vs_gelu_pc", phi_fun, EVAL_LIMIT),
                       ("vs_gelu_dpc", dgelu_fun, EVAL_LIMIT_D)):
    print("/* %s */" % name)
    tabs.append((name, [fit_piece(name, j, ctr[j], fun, FIT_LIMIT, lim)
                        for j in range(NP)]))
print_centers("vs_gelu_ctr", ctr)
for name, tab in tabs:
    print_table(name, tab)
sys.exit(status())
