#!/usr/bin/env python3
"""Which significands break the last step of rsqrt f64's reciprocal.

Usage: scripts/recip_ties.py   (needs GNU coreutils' factor)

f64_simd_impl.h's rsqrt row takes 1/s from a faithful y (within one
ulp of 1/s) by one step y' = RN(y + y r), r = 1 - s y (exact in an
FMA).  Take s = B 2^-52 in [1, 2) (1/s scales exactly by powers of
two while normal).  y + y r = 1/s - r^2/s, always below 1/s, and
|r| < s 2^-53, so y' can differ from RN(1/s) only when a rounding tie
m = M 2^-54 (M odd, 2^53 < M < 2^54) lies in [1/s - 2^-105, 1/s): then
|1 - s m| < 2^-104, that is |2^106 - B M| < 4.  This script factors
2^106 - j for j = -3..3, lists every B in [2^52, 2^53) with such an M,
and runs the step exactly (fractions) from both faithful y (the floats
either side of 1/s).  It prints each candidate and the failures: the
one is B = 2^53 - 1 (s = 2 - 2^-52) from y below 1/s, which the row
sends to the division.  tests/test_divsqrt.c tests the candidates'
square roots.  Exit status 0; 1 if factor fails.
"""
import subprocess
import sys
from fractions import Fraction as F


def rn53(x):
    """x > 0 rounded to 53 significant bits, ties to even"""
    e = 0
    while F(2) ** e > x:
        e -= 1
    while F(2) ** (e + 1) <= x:
        e += 1
    g = F(2) ** (e - 52)
    q = x / g
    f = q.numerator // q.denominator
    rem = q - f
    if rem > F(1, 2) or (rem == F(1, 2) and f % 2):
        f += 1
    return f * g


def main():
    bad = []
    for j in range(-3, 4):
        if j == 0:
            continue
        n = 2 ** 106 - j
        r = subprocess.run(["factor", str(n)], capture_output=True,
                           text=True)
        if r.returncode != 0:
            print(f"factor {n}: {r.stderr.strip()}", file=sys.stderr)
            return 1
        divs = {1}
        for p in map(int, r.stdout.split(":")[1].split()):
            divs |= {d * p for d in divs}
        for b_int in sorted(divs):
            m = n // b_int
            if not (2 ** 52 <= b_int < 2 ** 53) or m % 2 == 0 or \
                    not (2 ** 53 < m < 2 ** 54):
                continue
            s = F(b_int, 2 ** 52)
            inv = 1 / s
            g = F(1, 2 ** 53)  # the ulp of 1/s in (1/2, 1)
            lo = (inv // g) * g
            for y in ([lo, lo + g] if lo != inv else [inv]):
                ok = rn53(y + y * (1 - s * y)) == rn53(inv)
                side = "below" if y < inv else "above"
                print(f"j={j:+d} B={b_int:#x} y {side} 1/s: "
                      f"{'ok' if ok else 'WRONG'}")
                if not ok:
                    bad.append(f"{b_int:#x} (y {side})")
    print("failures:", ", ".join(bad) if bad else "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
