#!/usr/bin/python3
"""The generated tables of the SIMD kernels are the committed ones, as
TAP: each generator script (which also checks its tables' properties and
fits, exiting 1 when one fails) is run, and every C table it prints
(`static ... const ... NAME[...] = {...};`) must appear in the kernel's
header, compared without whitespace.

Usage: test_tables.py   (run from the repository root with Debian's
/usr/bin/python3: numpy and mpmath)
"""
import re
import subprocess
import sys

from tap import case, expect, run as run_cases

PAIRS = [("scripts/pow_f32_tables.py", "src/backends/cpu/pow_simd_impl.h"),
         ("scripts/gelu_erf_tables.py", "src/backends/cpu/vmath_simd.h"),
         ("scripts/gelu_tanh_tables.py", "src/backends/cpu/vmath_simd.h"),
         ("scripts/gelu16_tables.py", "src/backends/cpu/vmath_simd.h"),
         ("scripts/erfcx_f64_table.py", "src/backends/cpu/f64_erfcx.h"),
         ("scripts/pow_f64_table.py", "src/backends/cpu/f64_powlog.h"),
         ("scripts/f64_explog_table.py", "src/backends/cpu/f64_explog.h")]


def squeeze(s):
    return re.sub(r"\s+", "", s)


def tables(text):
    """{name: the table's text without whitespace}"""
    out = {}
    for m in re.finditer(r"static\b[^=;{]*?\bconst\b[^=;{]*?\b(\w+)\s*"
                         r"(\[[^=]*\])\s*=\s*\{.*?\};", text, re.S):
        out[m.group(1)] = squeeze(m.group(0))
    return out


def check(script, header):
    r = subprocess.run([sys.executable, script], capture_output=True,
                       text=True)
    expect(r.returncode == 0, f"{script}: exit {r.returncode}: "
           f"{r.stderr[-1500:]}")
    printed = tables(r.stdout)
    expect(printed, f"{script}: printed no table")
    with open(header, encoding="utf-8") as f:
        have = tables(f.read())
    for name, t in printed.items():
        expect(name in have, f"{header}: no table {name}")
        expect(have[name] == t, f"{header}: {name} differs from what "
               f"{script} prints")


for s, h in PAIRS:
    case(f"{s}: its checks pass and its tables are {h}'s")(
        lambda s=s, h=h: check(s, h))

sys.exit(run_cases())
