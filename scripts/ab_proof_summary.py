#!/usr/bin/python3
"""Summary of scripts/ab_proof.sh's folder: OUT/summary.md.

Usage: ab_proof_summary.py OUT

Per group (A/A, +1%, +2%, +5%): runs, verdicts, how the cases stopped,
blocks and seconds used, the MDE reached, the machine's noise lines; the
MDE reached by elapsed time over every look of the A/A runs (per minute
of budget); the instruction-count gate's catches.
"""
import glob
import json
import os
import statistics
import sys

out = sys.argv[1]


def load(pattern):
    docs = []
    for d in sorted(glob.glob(os.path.join(out, pattern))):
        p = os.path.join(d, "ab.json")
        if os.path.isfile(p):
            docs.append(json.load(open(p, encoding="utf-8")))
    return docs


def pct(x):
    return "-" if x is None else f"{100 * x:.2f}%"


lines = ["# Sequential ab on calib_work: A/A, injected slowdowns, the "
         "instruction gate", ""]
lines += ["```"] + open(os.path.join(out, "log.txt")).read().splitlines()[:1]
lines += open(os.path.join(out, "log.txt")).read().splitlines()[-1:] + ["```",
                                                                        ""]
lines += ["| group | runs | regressed | improved | unchanged | inconclusive "
          "| error | stop: target / decided / budget | median blocks | median"
          " s | median MDE reached | median change | steal (max) | other "
          "CPUs (max) |", "|---|---|---|---|---|---|---|---|---|---|---|---|"
          "---|---|"]
groups = [("A/A", "aa-*")] + [(f"+{s}%", f"inj-1.0{s}-*") for s in
                              ("1", "2", "5")]
aa_looks = []
for name, pat in groups:
    docs = load(pat)
    if not docs:
        continue
    cs = [d["cases"][0] for d in docs]
    v = [c["verdict"] for c in cs]
    st = [c["stop"] for c in cs]
    mach = [d["settings"]["machine"] for d in docs]
    secs = [d["settings"]["sequential_run"]["looks"][-1]["elapsed_s"]
            for d in docs]
    mdes = [c["mde"] for c in cs if c["mde"] is not None]
    lines.append(
        f"| {name} | {len(docs)} | {v.count('regressed')} | "
        f"{v.count('improved')} | {v.count('unchanged')} | "
        f"{v.count('inconclusive')} | {v.count('error')} | "
        f"{st.count('target')} / {st.count('decided')} / "
        f"{st.count('budget') + st.count('max-blocks')} | "
        f"{statistics.median(c['blocks'] for c in cs):.0f} | "
        f"{statistics.median(secs):.0f} | "
        f"{pct(statistics.median(mdes)) if mdes else '-'} | "
        f"{pct(statistics.median(c['change'] for c in cs))} | "
        f"{pct(max(m['steal'] or 0 for m in mach))} | "
        f"{max(m['other_cpus'] or 0 for m in mach):.2f} |")
    if name == "A/A":
        for d in docs:
            aa_looks += d["settings"]["sequential_run"]["looks"]
lines += ["", "MDE reached against time (every look of the A/A runs; the "
          "largest MDE of the run's one case at that look):", "",
          "| elapsed | looks | median MDE | best | worst |",
          "|---|---|---|---|---|"]
for lo, hi in ((0, 10), (10, 20), (20, 30), (30, 45), (45, 60), (60, 120)):
    m = [l["mde_max"] for l in aa_looks if lo <= l["elapsed_s"] < hi]
    if m:
        lines.append(f"| {lo}-{hi} s | {len(m)} | "
                     f"{pct(statistics.median(m))} | {pct(min(m))} | "
                     f"{pct(max(m))} |")
caught = 0
n = 0
for d in sorted(glob.glob(os.path.join(out, "instr-*"))):
    n += 1
    text = open(os.path.join(d, "compare.txt")).read()
    rc = int(open(os.path.join(d, "rc")).read())
    caught += rc != 0 and "instructions" in text and "regression" in text
lines += ["", f"Instruction-count gate, +0.5% injected (TBENCH_CALIB_SCALE="
          f"1.005, callgrind): caught {caught} of {n} (tbench compare "
          "exits 1 with a counter regression)."]
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
