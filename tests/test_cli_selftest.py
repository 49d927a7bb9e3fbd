#!/usr/bin/python3
"""tbench selftest and the calibration ops from the command line, as TAP.

Usage: test_cli_selftest.py PATH/TO/tbench   (Debian's /usr/bin/python3)

- calib_work's outputs (tbench exec) against the chain computed here with
  Python integers, at scale 1 and with TBENCH_CALIB_SCALE=1.5;
- TBENCH_CALIB_SCALE is recorded in results (env.calib_scale) and a bad
  value is one line and exit 2, for run, exec and selftest;
- selftest --quick --json: the figures are consistent with each other and
  the MDE is the stated formula of the reported CV, recomputed with
  NumPy and SciPy.  No timing is asserted.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

import numpy as np
from scipy.stats import norm

TBENCH = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="tbench-selftest-")
M64 = (1 << 64) - 1


def chain(n, steps):
    o = [0] * n
    x = 0x9e3779b97f4a7c15
    for s in range(steps):
        x = (((x ^ (x >> 29)) * 0xbf58476d1ce4e5b9) + 0x94d049bb133111eb) & M64
        o[s % n] = x >> 40
    return np.array(o, dtype=np.float64)


def tb(args, scale=None):
    env = dict(os.environ)
    env.pop("TBENCH_CALIB_SCALE", None)
    if scale is not None:
        env["TBENCH_CALIB_SCALE"] = scale
    return subprocess.run([TBENCH] + args, capture_output=True, text=True,
                          env=env)


@case("exec calib_work matches the Python chain (f32, f64, scaled)")
def _():
    for dt, n, scale, steps in [("f32", 1000, None, 1000),
                                ("f64", 777, None, 777),
                                ("f32", 1000, "1.5", 1500),
                                ("f64", 10, "0.35", 4)]:
        out = os.path.join(TMP, f"ex-{dt}-{n}-{scale}")
        p = tb(["exec", "calib_work", "--shape", str(n), "-d", dt, "-o", out],
               scale)
        expect(p.returncode == 0, f"exec: {p.returncode} {p.stderr}")
        got = np.load(os.path.join(out, "output0.npy")).astype(np.float64)
        want = chain(n, steps)
        expect(np.array_equal(got, want),
               f"{dt} n={n} scale={scale}: first difference at "
               f"{np.flatnonzero(got != want)[:3]}")


@case("a bad TBENCH_CALIB_SCALE is one line and exit 2")
def _():
    cfg = os.path.join(TMP, "c.json")
    with open(cfg, "w") as f:
        f.write('{"name": "c", "ops": [{"op": "calib_work", '
                '"shapes": [[100]]}]}')
    for bad in ["abc", "0", "-1", "1001", "1.02x"]:
        for args in (["run", cfg, "-o", os.path.join(TMP, "bad")],
                     ["exec", "calib_work", "-s", "10", "-o",
                      os.path.join(TMP, "bad")],
                     ["selftest", "--quick"]):
            p = tb(args, bad)
            expect(p.returncode == 2 and p.stdout == "",
                   f"{args[0]} {bad}: exit {p.returncode}")
            lines = p.stderr.strip().splitlines()
            expect(len(lines) == 1 and "TBENCH_CALIB_SCALE" in lines[0]
                   and bad in lines[0], f"{args[0]} {bad}: {p.stderr!r}")
    expect(not os.path.exists(os.path.join(TMP, "bad")), "wrote files")


@case("run records TBENCH_CALIB_SCALE as env.calib_scale")
def _():
    cfg = os.path.join(TMP, "w.json")
    with open(cfg, "w") as f:
        f.write('{"name": "w", "measure": {"max_time_s": 0.05}, '
                '"ops": [{"op": '
                '"calib_work", "shapes": [[1000]]}, {"op": "calib_spin", '
                '"shapes": [[1]], "params": {"ns": 100}}]}')
    for scale, want in [(None, 1.0), ("1.02", 1.02)]:
        out = os.path.join(TMP, f"run-{scale}")
        p = tb(["run", cfg, "-q", "-o", out], scale)
        expect(p.returncode == 0, f"run: {p.returncode} {p.stderr}")
        doc = json.load(open(os.path.join(out, "results.json")))
        expect(doc["env"]["calib_scale"] == want,
               f"calib_scale {doc['env'].get('calib_scale')} != {want}")
        st = {c["op"]: c["status"] for c in doc["cases"]}
        expect(st == {"calib_work": "ok", "calib_spin": "ok"}, str(st))
        cat = {c["category"] for c in doc["cases"]}
        expect(cat == {"calibration"}, str(cat))


@case("selftest --quick --json: consistent figures, MDE = the formula")
def _():
    out = os.path.join(TMP, "st.json")
    p = tb(["selftest", "--quick", "--json", "-o", out])
    expect(p.returncode == 0, f"selftest: {p.returncode} {p.stderr}")
    doc = json.loads(p.stdout)
    expect(doc == json.load(open(out)), "-o file differs from stdout")
    expect(doc["schema"] == "tbench.selftest/1", doc["schema"])
    clk = doc["clock"]
    expect(clk["read_cost_ns"] > 0 and clk["step_ns"] > 0, str(clk))
    sp = doc["spin"]
    expect([s["true_ns"] for s in sp] == [100, 1000, 10000, 1000000],
           str([s["true_ns"] for s in sp]))
    for s in sp:
        expect(math.isclose(s["net_ns"], s["measured_ns"] - doc["spin0_ns"],
                            rel_tol=1e-9, abs_tol=1e-6), str(s))
        expect(math.isclose(s["error_ns"], s["net_ns"] - s["true_ns"],
                            rel_tol=1e-9, abs_tol=1e-6), str(s))
        bound = (clk["read_cost_ns"] + clk["step_ns"] +
                 clk["step_ns"] / s["iters_per_sample"])
        expect(math.isclose(s["bound_ns"], bound, rel_tol=1e-9), str(s))
        expect(s["within_bound"] == (abs(s["error_ns"]) <= s["bound_ns"]),
               str(s))
        expect(s["samples"] >= 3, str(s))
    # the spin really took its time: measured >= the spin (any machine)
    expect(all(s["measured_ns"] >= s["true_ns"] for s in sp), str(sp))
    m = doc["mde"]
    r = np.array(m["round_medians_ns"])
    expect(m["runs"] == 5 and len(r) == 5, str(m))
    cv = r.std(ddof=1) / r.mean()
    expect(math.isclose(m["cv"], cv, rel_tol=1e-9), f"{m['cv']} vs {cv}")
    expect(math.isclose(m["median_ns"], float(np.median(r)), rel_tol=1e-12),
           "median")
    z = norm.ppf(1 - m["alpha"] / 2) + norm.ppf(m["power"])
    for ps in m["per_side"]:
        want = z * cv * math.sqrt(2 / ps["runs_per_side"])
        expect(math.isclose(ps["mde_rel"], want, rel_tol=1e-9),
               f"m={ps['runs_per_side']}: {ps['mde_rel']} vs {want}")
        expect(math.isclose(ps["mde_ns"], want * m["median_ns"],
                            rel_tol=1e-9), "mde_ns")
    # noise sources: the core clock before each round, the machine
    # meanwhile, and the sources named by the documented rules
    ns = m["noise"]
    g = np.array(ns["clock_ghz"])
    expect(len(g) == 5 and (g > 0.2).all() and (g < 10).all(), str(ns))
    expect(math.isclose(ns["clock_cv"], g.std(ddof=1) / g.mean(),
                        rel_tol=1e-9), str(ns))
    mach = ns["machine"]
    expect(mach["cpus"] >= 1 and mach["seconds"] > 0, str(mach))
    want = []
    if mach["steal"] is not None and mach["steal"] >= 0.01:
        want.append("steal")
    if mach["other_cpus"] is not None and mach["other_cpus"] >= 0.25:
        want.append("other processes")
    if ns["clock_cv"] >= 0.01:
        want.append("core clock CV")
    if max(mach["load_start"], mach["load_end"]) > mach["cpus"]:
        want.append("load average")
    got = [x.split(" ")[0] for x in ns["named"].split(", ") if x]
    expect(got == [w.split(" ")[0] for w in want], f"{ns['named']} vs {want}")
    p = tb(["selftest", "--quick"])
    expect("noise sources: core clock" in p.stdout and "named: " in p.stdout,
           p.stdout)
    expect(p.returncode == 0 and "minimum detectable effect" in p.stdout
           and "clock" in p.stdout, p.stdout + p.stderr)


@case("selftest: bad options are one line and exit 2")
def _():
    for args in (["--runs", "2"], ["--runs", "x"], ["--alpha", "0"],
                 ["--power", "1"], ["--work", "1.5"], ["--bogus"],
                 ["extra"], ["--runs"]):
        p = tb(["selftest"] + args)
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 2 and p.stdout == "" and lines and
               lines[0].startswith("tbench: selftest"),
               f"{args}: exit {p.returncode} {p.stderr!r}")


sys.exit(run_cases())
