#!/usr/bin/python3
"""Instruction counts per case (measure.instructions), as TAP.

Usage: test_cli_instr.py PATH/TO/tbench   (Debian's /usr/bin/python3;
valgrind from scripts/setup.sh: without it the callgrind cases skip)

- callgrind: a tiny case and calib_work counted in two runs give equal
  counts, valid against docs/results.schema.json, source callgrind, ISA
  at most avx2 (valgrind runs no AVX-512);
- calib_work with TBENCH_CALIB_SCALE=1.005 counts 0.5% more (within
  0.05 percentage points): the count follows the work;
- perf: a count, or null with the reason (no PMU in most VMs);
- a bad measure.instructions is one line naming the key, exit 2.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

import jsonschema

TBENCH = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="tbench-instr-")
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
HAVE_VALGRIND = shutil.which("valgrind") is not None


def config(name, source, extra=""):
    path = os.path.join(TMP, name + ".json")
    with open(path, "w") as f:
        f.write('{"name": "%s", "warmup": {"min_time_ms": 1}, '
                '"measure": {"max_time_s": 0.05, "min_samples": 3, '
                '"instructions": "%s", "instructions_iters": 5%s}, '
                '"ops": [{"op": "add", "shapes": [[64]]}, '
                '{"op": "calib_work", "shapes": [[20000]]}]}'
                % (name, source, extra))
    return path


def run(cfg, out, scale=None):
    env = dict(os.environ)
    env.pop("TBENCH_CALIB_SCALE", None)
    if scale:
        env["TBENCH_CALIB_SCALE"] = scale
    p = subprocess.run([TBENCH, "run", cfg, "-q", "-o", out],
                       capture_output=True, text=True, env=env)
    expect(p.returncode == 0, f"run {cfg}: {p.returncode} {p.stderr}")
    doc = json.load(open(os.path.join(out, "results.json")))
    jsonschema.validate(doc, SCHEMA)
    with open(os.path.join(out, "results.csv"), newline="") as f:
        expect(f.readline().startswith("# tbench "), "csv provenance line")
        rows = {r["id"]: r for r in csv.DictReader(f)}
    for c in doc["cases"]:  # the CSV column is the JSON's per_iter
        v = (c["instructions"] or {}).get("per_iter")
        got = rows[c["id"]]["instructions"]
        expect((got == "" and v is None) or
               (v is not None and got != "" and float(got) == v),
               f"csv instructions {got!r} vs json {v!r}")
    return {c["op"]: c["instructions"] for c in doc["cases"]}


COUNTS = {}
SANITIZED = []


@case("callgrind: each case counted twice gives one number")
def _():
    if not HAVE_VALGRIND:
        return "SKIP valgrind is not installed"
    cfg = config("cg", "callgrind")
    a = run(cfg, os.path.join(TMP, "cg1"))
    if "sanitizers" in (a["add"]["reason"] or ""):
        SANITIZED.append(a["add"]["reason"])
        return "SKIP " + a["add"]["reason"]
    b = run(cfg, os.path.join(TMP, "cg2"))
    for op in ("add", "calib_work"):
        ia, ib = a[op], b[op]
        expect(ia["per_iter"] is not None, f"{op}: no count: {ia}")
        expect(ia["source"] == "callgrind" and ia["requested"] == "callgrind"
               and ia["iters"] == 5 and ia["reason"] is None, str(ia))
        expect(ia["isa"] in ("scalar", "avx2"), f"{op}: isa {ia['isa']}")
        expect(ia["per_iter"] == ib["per_iter"],
               f"{op}: {ia['per_iter']} then {ib['per_iter']}")
        expect(ia["per_iter"] > 0, str(ia))
    COUNTS["base"] = a["calib_work"]["per_iter"]
    # 20000 steps of at least the 4 chain instructions each
    expect(COUNTS["base"] >= 4 * 20000, str(COUNTS))


@case("callgrind: calib_work at scale 1.005 counts 0.5% more (+-0.05%)")
def _():
    if not HAVE_VALGRIND:
        return "SKIP valgrind is not installed"
    if SANITIZED:
        return "SKIP " + SANITIZED[0]
    base = COUNTS.get("base")
    if base is None:
        base = run(config("cg", "callgrind"),
                   os.path.join(TMP, "cg3"))["calib_work"]["per_iter"]
    scaled = run(config("cg", "callgrind"), os.path.join(TMP, "cg4"),
                 "1.005")["calib_work"]["per_iter"]
    change = scaled / base - 1
    expect(abs(change - 0.005) <= 0.0005,
           f"{base} -> {scaled}: {100 * change:.4f}%")


@case("perf: a count, or null with the reason")
def _():
    i = run(config("pf", "perf"), os.path.join(TMP, "pf"))["calib_work"]
    if i["per_iter"] is None:
        expect(i["source"] is None and "perf_event_open" in i["reason"],
               str(i))
    else:
        expect(i["source"] == "perf" and i["per_iter"] >= 4 * 20000, str(i))


@case("a bad measure.instructions is one line, exit 2")
def _():
    for bad, key in (('"cachegrind"', "measure.instructions"),
                     ('true', "measure.instructions")):
        path = os.path.join(TMP, "bad.json")
        with open(path, "w") as f:
            f.write('{"name": "b", "measure": {"instructions": %s}, '
                    '"ops": [{"op": "add", "shapes": [[4]]}]}' % bad)
        p = subprocess.run([TBENCH, "run", path, "-o",
                            os.path.join(TMP, "bad")],
                           capture_output=True, text=True)
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 2 and len(lines) == 1 and key in lines[0]
               and "callgrind" in lines[0], f"{bad}: {p.stderr!r}")
    path = os.path.join(TMP, "bad2.json")
    with open(path, "w") as f:
        f.write('{"name": "b", "measure": {"instructions_iters": 0}, '
                '"ops": [{"op": "add", "shapes": [[4]]}]}')
    p = subprocess.run([TBENCH, "run", path], capture_output=True, text=True)
    expect(p.returncode == 2 and "measure.instructions_iters" in p.stderr,
           p.stderr)


sys.exit(run_cases())
