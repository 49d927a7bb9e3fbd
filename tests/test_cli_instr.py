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
- a bad measure.instructions is one line naming the key, exit 2;
- measure.cache with callgrind: add at 3 KB (warm in any D1) misses
  under 3 lines per iteration, at 3 MB its D1 misses are the lines it
  moves (model bytes / line, within -5%..+30%), LL misses no more than
  D1's; simulated, with the geometry, cycles/IPC/dTLB null; the CSV
  columns are the JSON's; two runs compare with no counter verdict;
- measure.cache with perf: counts, or null with the reason.
"""
import re
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


def cache_config(name, source):
    path = os.path.join(TMP, name + ".json")
    with open(path, "w") as f:
        f.write('{"name": "%s", "warmup": {"min_time_ms": 1}, '
                '"measure": {"max_time_s": 0.05, "min_samples": 3, '
                '"cache": "%s", "instructions_iters": 5}, '
                '"backends": [{"name": "cpu", "threads": [1]}], '
                '"ops": [{"op": "add", "shapes": [[256], [262144]]}]}'
                % (name, source))
    return path


def cache_run(cfg, out):
    p = subprocess.run([TBENCH, "run", cfg, "-q", "-o", out],
                       capture_output=True, text=True)
    expect(p.returncode == 0, f"run {cfg}: {p.returncode} {p.stderr}")
    doc = json.load(open(os.path.join(out, "results.json")))
    jsonschema.validate(doc, SCHEMA)
    with open(os.path.join(out, "results.csv"), newline="") as f:
        f.readline()
        rows = {r["id"]: r for r in csv.DictReader(f)}
    for c in doc["cases"]:
        for k in ("l1d_misses", "llc_misses"):
            v = (c["cache"] or {}).get(k)
            got = rows[c["id"]][k]
            expect((got == "" and v is None) or
                   (v is not None and got != "" and float(got) == v),
                   f"csv {k} {got!r} vs json {v!r}")
    return {c["shapes"][0][0]: c for c in doc["cases"]}


GEOMETRY = re.compile(r"^\d+ B, \d+ B, ")


@case("callgrind cache simulation: D1 misses are the lines add moves")
def _():
    if not HAVE_VALGRIND:
        return "SKIP valgrind is not installed"
    cfg = cache_config("cs", "callgrind")
    a = cache_run(cfg, os.path.join(TMP, "cs1"))
    if "sanitizers" in (a[256]["cache"]["reason"] or ""):
        return "SKIP " + a[256]["cache"]["reason"]
    for n, c in a.items():
        k = c["cache"]
        expect(k["source"] == "callgrind" and k["simulated"] is True and
               k["requested"] == "callgrind" and k["iters"] == 5, str(k))
        expect(k["cycles"] is None and k["ipc"] is None and
               k["dtlb_misses"] is None and "simulated" in k["reason"],
               str(k))
        expect(all(GEOMETRY.match(k[g] or "") for g in ("d1", "ll")),
               str(k))
        expect(k["instructions"] > 0 and k["isa"] in ("scalar", "avx2"),
               str(k))
        expect(0 <= k["llc_misses"] <= k["l1d_misses"], str(k))
    line = int(a[262144]["cache"]["d1"].split(", ")[1].split()[0])
    lines = a[262144]["model"]["bytes"] / line
    big = a[262144]["cache"]["l1d_misses"]
    expect(0.95 * lines <= big <= 1.3 * lines,
           f"3 MB: {big} D1 misses per call for {lines} lines moved")
    small = a[256]["cache"]["l1d_misses"]
    expect(small < 3, f"3 KB (warm): {small} D1 misses per call")
    b = cache_run(cfg, os.path.join(TMP, "cs2"))
    p = subprocess.run([TBENCH, "compare", os.path.join(TMP, "cs1",
                                                        "results.json"),
                        os.path.join(TMP, "cs2", "results.json"),
                        "--fail-on", "counters", "--format", "json"],
                       capture_output=True, text=True)
    expect(p.returncode == 0, f"compare: {p.returncode} {p.stderr}")
    doc = json.loads(p.stdout)
    expect(doc["options"]["cache_threshold"] == 0.01, str(doc["options"]))
    for c in doc["cases"]:
        v = c["counters"]["l1d_misses"]
        expect(v["verdict"] == "unchanged" and v["simulated"] is True, str(v))
    expect(b[262144]["cache"]["d1"] == a[262144]["cache"]["d1"], "geometry")


@case("perf cache events: counts, or null with the reason")
def _():
    k = cache_run(cache_config("cp", "perf"),
                  os.path.join(TMP, "cp"))[262144]["cache"]
    if k["source"] is None:
        expect(k["l1d_misses"] is None and k["simulated"] is False and
               "perf_event_open" in k["reason"], str(k))
    else:
        expect(k["source"] == "perf" and not k["simulated"] and
               k["cycles"] > 0 and k["d1"] is None, str(k))


@case("a bad measure.instructions or measure.cache is one line, exit 2")
def _():
    for bad, key in (('"cachegrind"', "measure.instructions"),
                     ('true', "measure.instructions"),
                     ('"cachegrind"', "measure.cache")):
        path = os.path.join(TMP, "bad.json")
        with open(path, "w") as f:
            f.write('{"name": "b", "measure": {"%s": %s}, '
                    '"ops": [{"op": "add", "shapes": [[4]]}]}'
                    % (key.split(".")[1], bad))
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
