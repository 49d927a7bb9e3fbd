#!/usr/bin/python3
"""Tables of exp, log and pow f64's SIMD rows (src/backends/cpu/f64_explog.h).

Usage: /usr/bin/python3 scripts/f64_explog_table.py \
           > src/backends/cpu/f64_explog.h

exp (f64_simd_impl.h, dx_e16): x = (16 e + j) ln2 / 16 + r, |r| <=
ln2 / 32 (plus the reduction's rounding), e^x = 2^e 2^(j/16) e^r;
2^(j/16) = dx_e16_h[j] + dx_e16_l[j] (hi the double nearest, lo the
double nearest the rest), e^r - 1 by Taylor's series to r^7, whose
truncation this checks below 2^-59 relative.

log (dx_log_zi): x = 2^e z, c_i from f64_powlog.h
(scripts/pow_f64_table.py, read from dvec_simd.h), r = z c_i - 1;
-log c_i = dx_lg_h[i] + dx_lg_l[i], dx_lg_h the multiple of 2^-42
nearest (so that e ln2_hi + dx_lg_h, ln2_hi of 42 bits and |e| <= 1075,
is exact: one fma), dx_lg_l the double nearest the rest (|.| <= 2^-43);
log1p r = r + r^2 P(r), P a degree 8 polynomial (dx_lg_p, highest
degree first) from Chebyshev interpolation of (log1p r - r) / r^2 on the
range of r (mpmath's chebyfit), its coefficients rounded to double.
This checks, at 4001 points of that range, |r^2 (P(r) - exact)| <=
2^-57 min(0.98 |r|, 0.0117): relative to log x in the interval around 1
(c_i = 1, log x = log1p r, |log1p r| >= 0.98 |r|) and to the bound on
|log x| elsewhere (0.0117, pow_f64_table.py's check); and, per interval
with c_i != 1, |dx_lg_h| >= max |r| (the kernel's Fast2Sum of e ln2_hi
+ dx_lg_h and r for e = 0).  tests/test_tables.py checks that the header holds
what this prints.
"""
import argparse
import importlib.util
import os
import sys
from fractions import Fraction

import mpmath

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pow_table():
    spec = importlib.util.spec_from_file_location(
        'pow_f64_table', os.path.join(ROOT, 'scripts/pow_f64_table.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(name, vals, n=3):
    items = [v.hex() if v != 0 else '0.0' for v in vals]
    lines = ['    ' + ', '.join(items[k:k + n]) + ','
             for k in range(0, len(items), n)]
    return (f'static const double {name}[{len(vals)}] = {{\n' +
            '\n'.join(lines) + '\n};\n')


def exp_tables():
    hi, lo = [], []
    for j in range(16):
        t = mpmath.mpf(2) ** (mpmath.mpf(j) / 16)
        h = float(t)
        hi.append(h)
        lo.append(float(t - mpmath.mpf(h)))
    r = mpmath.log(2) / 32 * (1 + mpmath.mpf(2) ** -40)
    trunc = r ** 8 / mpmath.factorial(8)  # first omitted term of e^r
    assert trunc < mpmath.mpf(2) ** -59, trunc
    return hi, lo


def log_hl(c):
    """-log c as a multiple of 2^-42 and the double nearest the rest"""
    t = -mpmath.log(mpmath.mpf(c))
    g = mpmath.mpf(2) ** -42
    h = mpmath.nint(t / g) * g
    hf = float(h)
    assert mpmath.mpf(hf) == h
    return hf, float(t - h)


# log's c_i: pow's c_i (f64_powlog.h) plus LOG_C_STEP[i] of its ulps, the
# first step from 0 up where -log c_i is within 2^-62 of a multiple of
# 2^-42 (so that log needs no lo table); --search finds them again (about
# 30 s: a walk over k with -log(c + k ulp) by its Taylor series to k^2
# in 120-bit fixed point, mod 2^-42); the default run checks them.
LOG_C_STEP = [5812845, 5576262, 89994, 2993083, 1295410, 144688, 4562699,
              3268162, 50884, 0, 5512525, 3607947, 2982215, 5410362,
              171594, 86699]
LOG_C_TOL = 62


def c_step_search(c0, scale=120):
    u = mpmath.mpf(2) ** (-52 if c0 >= 1 else -53)
    c0m = mpmath.mpf(c0)
    two = mpmath.mpf(2) ** scale
    t0 = int(mpmath.nint(-mpmath.log(c0m) * two))
    s1 = int(mpmath.nint(u / c0m * two))
    s2 = int(mpmath.nint(u * u / (2 * c0m * c0m) * two))
    m = 1 << (scale - 42)
    thr = 1 << (scale - LOG_C_TOL)
    x, d = t0 % m, s2 - s1
    for k in range(1 << 24):
        if x < thr or m - x < thr:
            return k
        x = (x + d) % m
        d += 2 * s2
    raise SystemExit(f'f64_explog_table.py: no step for {c0.hex()}')


def log_c(pt, search):
    """log's c_i and -log c_i's multiples of 2^-42, each within
    2^-LOG_C_TOL"""
    cs, hs = [], []
    for i, c0 in enumerate(pt.invc_table()):
        k = 0 if c0 == 1.0 else (c_step_search(c0) if search
                                  else LOG_C_STEP[i])
        c = c0 + k * 2.0 ** (-52 if c0 >= 1 else -53)
        t = -mpmath.log(mpmath.mpf(c))
        h = log_hl(c)[0]
        assert abs(t - mpmath.mpf(h)) <= mpmath.mpf(2) ** -LOG_C_TOL, i
        cs.append(c)
        hs.append(h)
    return cs, hs


def r_range(pt, cs):
    """the range of r = z c_i - 1 over each interval (exact rationals)"""
    rmin = rmax = 0.0
    per = []
    for i, c in enumerate(cs):
        zl, zh = pt.interval(i)
        cf = Fraction(c)
        rs = [float(zl * cf - 1), float(zh * cf - 1)]
        rmin, rmax = min(rmin, *rs), max(rmax, *rs)
        per.append(max(abs(v) for v in rs))
    return rmin, rmax, per


def log_poly(pt, cs, hs):
    rmin, rmax, per = r_range(pt, cs)
    for i, c in enumerate(cs):
        if c != 1.0:
            assert abs(hs[i]) >= per[i], i

    def exact(r):
        r = mpmath.mpf(r)
        return mpmath.mpf(-0.5) if r == 0 else (mpmath.log1p(r) - r) / r**2

    coef = [float(c) for c in mpmath.chebyfit(exact, [rmin, rmax], 9)]
    worst = mpmath.mpf(0)
    for k in range(4001):
        r = mpmath.mpf(rmin + (rmax - rmin) * k / 4000)
        if r == 0:
            continue
        v = mpmath.mpf(0)
        for c in coef:
            v = v * r + c
        err = abs(r * r * (v - exact(r)))
        worst = max(worst, err / min(abs(r) * mpmath.mpf(0.98),
                                     mpmath.mpf(0.0117)))
    assert worst <= mpmath.mpf(2) ** -57, worst
    return coef, rmin, rmax, float(mpmath.log(worst, 2))


def dd_poly(rmin, rmax):
    """pow's double-double log: log1p r = r - r^2/2 + r^3 q(r), its q
    times -2 (the kernel multiplies by h r, h = -r^2/2 rounded), degree
    8 by chebyfit; checked |r^3 (q - exact)| <= 2^-64.5 |r| at 4001
    points of r's range (Taylor's series to r^15, the form before,
    reaches 2^-64.9 there: both at the rounding of the coefficients)."""
    def exact(r):
        r = mpmath.mpf(r)
        if r == 0:
            return mpmath.mpf(1) / 3
        return (mpmath.log1p(r) - r + r * r / 2) / r**3

    coef = [float(c) for c in mpmath.chebyfit(exact, [rmin, rmax], 9)]
    worst = mpmath.mpf(0)
    for k in range(4001):
        r = mpmath.mpf(rmin + (rmax - rmin) * k / 4000)
        if r == 0:
            continue
        v = mpmath.mpf(0)
        for c in coef:
            v = v * r + c
        worst = max(worst, abs(r**3 * (v - exact(r)) / r))
    assert worst <= mpmath.mpf(2) ** -64.5, worst
    return [-2 * c for c in coef], float(mpmath.log(worst, 2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--search', action='store_true',
                    help='find LOG_C_STEP again (about 30 s)')
    args = ap.parse_args()
    mpmath.mp.prec = 200
    hi, lo = exp_tables()
    pt = pow_table()
    cs, hs = log_c(pt, args.search)
    coef, rmin, rmax, lw = log_poly(pt, cs, hs)
    hl = [log_hl(c) for c in pt.invc_table()]
    prmin, prmax, pper = r_range(pt, pt.invc_table())
    for i, c in enumerate(pt.invc_table()):
        if c != 1.0:
            assert abs(hl[i][0]) >= pper[i], i
    qd, qw = dd_poly(prmin, prmax)
    text = ('/* Generated by scripts/f64_explog_table.py: do not edit.  exp '
            'f64\'s\n * 2^(j/16) = dx_e16_h + dx_e16_l (mpmath, 200 bits); '
            'log f64\'s\n * log1p r = r + r^2 P(r), P = dx_lg_p highest '
            'degree first, for r\n * in [' + f'{rmin:.5f}, {rmax:.5f}' +
            '] (f64_powlog.h\'s reduction): checked within\n * 2^' +
            f'{lw:.1f}' + ' of log x (the script says how); log\'s c_i = '
            'dx_lg_c,\n * -log c_i within 2^-62 of dx_lg_h (a multiple of '
            '2^-42); pow\'s c_i\n * f64_powlog.h\'s, -log c_i = dx_ld_h '
            '(a multiple of 2^-42) + dx_ld_l;\n * pow\'s '
            'double-double log1p r = r - r^2/2\n * - (r^3 / 2) Q(r), Q = '
            'dx_ld_q highest degree first: within 2^' + f'{qw:.1f}' +
            '\n * of r there. */\n'
            '#ifndef TB_BACKENDS_CPU_F64_EXPLOG_H\n'
            '#define TB_BACKENDS_CPU_F64_EXPLOG_H\n\n' +
            row('dx_e16_h', hi) + row('dx_e16_l', lo) +
            row('dx_lg_p', coef) + row('dx_lg_c', cs) + row('dx_lg_h', hs) +
            row('dx_ld_h', [h for h, _ in hl]) +
            row('dx_ld_l', [l for _, l in hl]) + row('dx_ld_q', qd) +
            '\n#endif\n')
    sys.stdout.write(text)
    print(f'log: r in [{rmin}, {rmax}], P error 2^{lw:.2f}, '
          f'pow Q error 2^{qw:.2f}', file=sys.stderr)


if __name__ == '__main__':
    main()
