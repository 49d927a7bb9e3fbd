#!/usr/bin/python3
"""Tables and polynomial constants of pow f32's float lanes (AVX-512, AVX2).

Usage: /usr/bin/python3 scripts/pow_f32_tables.py

Prints the C tables pf_c, pf_th, pf_tl, pf_eh, pf_rl and the fitted
coefficients of src/backends/cpu/pow_simd_impl.h, and checks, exiting 1
if one fails:
- r = z c - 1 is a float for every float z of every interval (so one fma
  computes it exactly), and the largest |r|;
- -log2 c = pf_th + pf_tl within 2^-41, pf_th a multiple of 2^-16;
- the Fast2Sum condition of the log2: |pf_th| > |r| / ln 2 wherever c != 1
  and the exponent is 0;
- 2^(j/32) = pf_eh (1 + pf_rl) within 2^-47 relative;
- the AVX2 row's packing of pf_c and pf_th in one word (pf_c's bits
  0..16 clear, pf_th 2^-16 times an integer in [0, 2^16]);
and prints the relative error of each fit (mpmath, 200 bits).
Needs numpy and mpmath (Debian python3-numpy, python3-mpmath).
"""
import sys

import mpmath as mp
import numpy as np

mp.mp.prec = 200
IL = 1 / mp.log(2)
bad = 0


def f32(x):
    return float(np.float32(x))


def cfloat(x):
    h = float(x).hex()
    mant, ex = h.split("p")
    mant = mant.rstrip("0")
    if mant.endswith("."):
        mant = mant[:-1]
    return mant + "p" + ex + "f"


def table(name, v):
    items = [cfloat(x) for x in v]
    rows = [", ".join(items[k:k + 4]) for k in range(0, 32, 4)]
    return ("static const float %s[32] = {\n    " % name +
            ",\n    ".join(rows) + "};")


def check(ok, what):
    global bad
    if not ok:
        print("FAILED: " + what, file=sys.stderr)
        bad += 1


def fit(fun, a, b, deg, n=400):
    """least squares on Chebyshev nodes (near minimax), float coefficients"""
    x = np.array([float((a + b) / 2 + (b - a) / 2 *
                        mp.cos(mp.pi * (k + 0.5) / n)) for k in range(n)])
    y = np.array([float(fun(mp.mpf(t))) for t in x])
    co = np.linalg.lstsq(np.vander(x, deg + 1, increasing=True), y,
                         rcond=None)[0]
    return [f32(c) for c in co]


def horner(co, t):
    s = mp.mpf(0)
    for c in reversed(co):
        s = s * t + mp.mpf(c)
    return s


# intervals of z in [0.75, 1.5) by the low 5 bits of bits(z) >> 18
C, R = [], []
for i in range(32):
    if i < 16:
        lo, hi, ulp = 1 + i / 32, 1 + (i + 1) / 32, 2.0 ** -23
    else:
        lo, hi, ulp = 0.5 + i / 64, 0.5 + (i + 1) / 64, 2.0 ** -24
    z = lo + np.arange(int(round((hi - lo) / ulp)), dtype=np.float64) * ulp
    best = None
    cands = [1.0] if i in (0, 31) else []
    if not cands:
        mid = 2.0 / (lo + hi)
        for m in range(4, 16):
            q = 2.0 ** (np.floor(np.log2(mid)) - (m - 1))
            cands += [float(np.floor(mid / q) * q), float(np.ceil(mid / q) * q)]
    for c in cands:
        r = z * c - 1.0  # exact in double
        if not np.all(r.astype(np.float32) == r):
            continue
        if best is None or np.abs(r).max() < best[0]:
            best = (np.abs(r).max(), c)
    check(best is not None, "no c with an exact r in interval %d" % i)
    R.append(best[0])
    C.append(best[1])
rmax = max(R)
print("/* max |r| %.4f; next to 1 (i = 0, 31) %.4f, %.4f; elsewhere %.4f */"
      % (rmax, R[0], R[31], max(R[1:31])))
TH, TL = [], []
for i, c in enumerate(C):
    t = -mp.log(c, 2)
    th = float(mp.nint(t * 2 ** 16)) / 2 ** 16
    tl = f32(float(t - th))
    check(abs(float(t - th - tl)) < 2 ** -41, "pf_th + pf_tl, entry %d" % i)
    check(c == 1.0 or abs(th) > 1.0001 * float(IL) * R[i],
          "Fast2Sum condition, entry %d" % i)
    TH.append(th + (1.0 if i >= 16 else 0.0))
    TL.append(tl)
EH, RL = [], []
for j in range(32):
    e = mp.power(2, mp.mpf(j) / 32)
    eh = f32(float(e))
    rl = f32(float((e - eh) / eh))
    check(abs(float((eh * (1 + mp.mpf(rl)) - e) / e)) < 2 ** -47,
          "pf_eh (1 + pf_rl), entry %d" % j)
    EH.append(eh)
    RL.append(rl)
# the AVX2 row packs pf_c and pf_th in one 32-bit word (pg_tabs_init):
# c's bits 0..16 clear, pf_th 2^-16 times an integer in [0, 2^16]
for i in range(32):
    cb = int(np.array([C[i]], dtype=np.float32).view(np.uint32)[0])
    check(cb & 0x1ffff == 0, "pf_c's bits 0..16, entry %d" % i)
    check(TH[i] * 2 ** 16 == int(TH[i] * 2 ** 16) and
          0 <= TH[i] * 2 ** 16 <= 2 ** 16, "pf_th's word, entry %d" % i)
for name, v in (("pf_c", C), ("pf_th", TH), ("pf_tl", TL), ("pf_eh", EH),
                ("pf_rl", RL)):
    print(table(name, v))


def report(name, co, err):
    print("/* %s: {%s}, relative error 2^%.1f */"
          % (name, ", ".join(cfloat(c) for c in co), float(mp.log(err, 2))))


grid = [mp.mpf(t) for t in np.linspace(-rmax, rmax, 4001) if t != 0]
# full log2: log2(1 + r) - (r - r^2/2)/ln 2 = r^3 G(r) (code: g = G, the
# fit is of 2G and halved exactly)
G2 = fit(lambda r: 2 * (mp.log(1 + r, 2) - IL * (r - r * r / 2)) / r ** 3
         if r else 2 * IL / 3, -rmax, rmax, 3)
G = [c / 2 for c in G2]
err = max(abs((horner(G, t) - (mp.log(1 + t, 2) - IL * (t - t * t / 2)) /
               t ** 3) * t ** 3 / mp.log(1 + t, 2)) for t in grid)
report("G (pf_log2_full)", G, err)
# short log2: log2(1 + r) - r ILH = r (ILL + r Q(r)) (code: Q, then ILL)
Q = fit(lambda r: (mp.log(1 + r, 2) - IL * r) / (r * r) if r else -IL / 2,
        -rmax, rmax, 4)
err = max(abs((horner(Q, t) * t * t + IL * t - mp.log(1 + t, 2)) /
              mp.log(1 + t, 2)) for t in grid)
report("Q (pf_log2_short)", Q, err)
# exp2: 2^f - 1 = f P(f), |f| <= 1/64 + 2^-20
fm = 1 / 64 + 2 ** -20
P = fit(lambda f: (mp.power(2, f) - 1) / f if f else mp.log(2), -fm, fm, 2)
err = max(abs((1 + t * horner(P, t) - mp.power(2, t)) / mp.power(2, t))
          for t in (mp.mpf(x) for x in np.linspace(-fm, fm, 4001)))
report("P (pf_exp2)", P, err)
# the AVX2 row's exp2 (pg_exp2): 8 entries (pf_eh, pf_rl at 4j: 2^(j/8)),
# 2^f - 1 = f P8(f), |f| <= 1/16 + 2^-20
fm8 = 1 / 16 + 2 ** -20
P8 = fit(lambda f: (mp.power(2, f) - 1) / f if f else mp.log(2), -fm8, fm8, 3)
err = max(abs((1 + t * horner(P8, t) - mp.power(2, t)) / mp.power(2, t))
          for t in (mp.mpf(x) for x in np.linspace(-fm8, fm8, 4001)))
report("P8 (pg_exp2)", P8, err)
ilh = f32(float(IL))
print("/* 1/ln 2 = %s + %s */" % (cfloat(ilh), cfloat(f32(float(IL - ilh)))))
sys.exit(1 if bad else 0)
