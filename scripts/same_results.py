#!/usr/bin/env python3
"""Print every difference between two tbench result files that is not a
timing: the proof that a refactoring changed no behaviour (issue 26).

Usage: same_results.py OLD.json NEW.json

What is compared: the config, the summary, and every case record field
by field, except what a second run on the same machine legitimately
changes: the timings and what derives from them (stats, throughput,
timing, roofline, gpu_clock, the sampling counters that count page
faults and context switches), the environment and peaks of the run, and
the `host` field.  Checked values (check.max_abs_err, impl, counters of
kernel calls and allocations, cupti) must be equal: the inputs are
seeded, so the same kernel gives the same bits.  Prints one line per
difference ("CASE-ID: FIELD: OLD -> NEW") and exits 1 when there is
any, 0 (printing nothing) when there is none, 2 on unreadable input.
"""
import json
import sys

# case fields that a rerun changes by itself
CASE_SKIP = {"stats", "throughput", "timing", "roofline", "gpu_clock",
             "host"}
# counters that count the machine, not the code
COUNTER_SKIP = {"minor_faults", "major_faults", "vol_ctx_switches",
                "invol_ctx_switches"}
TOP_SKIP = {"env", "peaks", "timer", "isolation", "nvtx"}


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"same_results.py: {path}: {e}", file=sys.stderr)
        sys.exit(2)


def diff(a, b, where, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{where}{k}: "
                           f"{'absent' if k not in a else json.dumps(a[k])}"
                           f" -> "
                           f"{'absent' if k not in b else json.dumps(b[k])}")
            else:
                diff(a[k], b[k], f"{where}{k}.", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{where}{i}.", out)
    elif a != b:
        out.append(f"{where.rstrip('.')}: {json.dumps(a)} -> {json.dumps(b)}")


def strip_case(c):
    c = {k: v for k, v in c.items() if k not in CASE_SKIP}
    if isinstance(c.get("counters"), dict):
        c["counters"] = {k: v for k, v in c["counters"].items()
                         if k not in COUNTER_SKIP and
                         not k.startswith("peak_")}
    return c


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = load(argv[1]), load(argv[2])
    out = []
    diff({k: v for k, v in a.items() if k not in TOP_SKIP | {"cases"}},
         {k: v for k, v in b.items() if k not in TOP_SKIP | {"cases"}},
         "", out)
    ca = {c["id"]: c for c in a.get("cases", [])}
    cb = {c["id"]: c for c in b.get("cases", [])}
    if [c["id"] for c in a.get("cases", [])] != \
            [c["id"] for c in b.get("cases", [])]:
        out.append("cases: not the same ids in the same order")
    for i in ca:
        if i not in cb:
            out.append(f"{i}: only in {argv[1]}")
            continue
        diff(strip_case(ca[i]), strip_case(cb[i]), f"{i}: ", out)
    for i in cb:
        if i not in ca:
            out.append(f"{i}: only in {argv[2]}")
    for ln in out:
        print(ln)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
