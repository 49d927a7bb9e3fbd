#!/usr/bin/python3
"""The per-op breakdown of a workload step on the command line, as TAP.

Usage: test_cli_breakdown.py PATH/TO/tbench   (from the repository root,
with Debian's /usr/bin/python3: jsonschema)

- a run of tiny mlp_train_step and cnn_train_step cases records a
  breakdown valid against docs/results.schema.json; `tbench show` prints
  its table (every op the model step runs, with its phase and calls per
  step) and the gap line, whose parts and gap add up to the step; a case
  that is no workload prints none;
- measure.breakdown false: show says why there is none;
- `tbench report` has the section, scripts/audit_report.py finds no
  mismatch in it, and finds a printed figure changed and a record whose
  parts and gap no longer make its step;
- a result file from before the breakdown: show and report work, with
  no table and no section;
- a training step's state window: the tiny training cases, thousands of
  steps, record state restores; add and state_window=0 or phase 1 none.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

import jsonschema

TBENCH = os.path.abspath(sys.argv[1])
ROOT = os.getcwd()
TMP = tempfile.mkdtemp(prefix="tbench-breakdown-")
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))

# What one training step of each model calls, per step (models.c): op ->
# (phase, calls).
MLP = {"linear": ("fwd", 2), "matmul": ("fwd", 1), "add": ("fwd", 1),
       "log_softmax": ("fwd", 1), "nll_loss": ("fwd", 1),
       "ones": ("bwd", 1), "nll_loss_backward": ("bwd", 1),
       "log_softmax_backward": ("bwd", 1), "add_backward": ("bwd", 1),
       "matmul_backward": ("bwd", 1), "linear_backward": ("bwd", 2),
       "sgd_momentum": ("optimizer", 6), "copy": ("fwd", 1)}
CNN = {"conv2d": ("fwd", 2), "relu": ("fwd", 2), "max_pool2d": ("fwd", 2),
       "matmul": ("fwd", 1), "add": ("fwd", 1), "log_softmax": ("fwd", 1),
       "nll_loss": ("fwd", 1), "ones": ("bwd", 1),
       "nll_loss_backward": ("bwd", 1), "log_softmax_backward": ("bwd", 1),
       "add_backward": ("bwd", 1), "matmul_backward": ("bwd", 1),
       "max_pool2d_backward": ("bwd", 2), "relu_backward": ("bwd", 2),
       "conv2d_backward": ("bwd", 2), "sgd_momentum": ("optimizer", 6),
       "copy": ("fwd", 1)}


def tbench(*args, ok=True):
    p = subprocess.run([TBENCH, *args], capture_output=True, text=True,
                       timeout=300)
    if ok:
        expect(p.returncode == 0, f"tbench {' '.join(args)}: exit "
               f"{p.returncode}: {p.stderr}")
    return p


def run_config(name, measure=""):
    cfg = os.path.join(TMP, name + ".json")
    with open(cfg, "w") as f:
        f.write('{"name": "%s", "warmup": {"min_time_ms": 1}, '
                '"measure": {"max_time_s": 0.05, "min_samples": 5%s}, '
                '"ops": [{"op": "mlp_train_step", "shapes": [[4, 32]]}, '
                '{"op": "cnn_train_step", "shapes": [[1, 1, 12, 12]]}, '
                '{"op": "add", "shapes": [[64]]}]}' % (name, measure))
    out = os.path.join(TMP, name)
    tbench("run", cfg, "-q", "-o", out)
    return out


def audit(report, root):
    p = subprocess.run(["/usr/bin/python3", "scripts/audit_report.py",
                        "--report", report, "--root", root, "--tbench",
                        TBENCH], capture_output=True, text=True,
                       timeout=300, cwd=ROOT)
    return p.returncode, p.stdout + p.stderr


RUN = []


def first_run():
    if not RUN:
        RUN.append(run_config("on"))
    return RUN[0]


def show_table(text):
    """show's breakdown rows: op -> (kernel, phase, calls, ms, share),
    and the gap line's (parts, gap, step) in ms."""
    rows, gap = {}, None
    lines = text.split("\n")
    at = [i for i, ln in enumerate(lines) if ln.startswith("breakdown (")]
    expect(len(at) == 1, f"one breakdown table, got {len(at)}:\n{text}")
    head = lines[at[0] + 1].split()
    expect(head == ["op", "kernel", "phase", "calls/step", "ms/step",
                    "share"], f"the table's header: {head}")
    for ln in lines[at[0] + 2:]:
        m = re.match(r"  parts ([\d.]+) ms \+ gap (-?[\d.]+) ms "
                     r"\((-?[\d.]+)% of the step[^)]*\) = step ([\d.]+) ms",
                     ln)
        if m:
            gap = (float(m[1]), float(m[2]), float(m[4]))
            continue
        m = re.match(r"  clock reads: ([\d.]+) calls x ([\d.]+) ns = "
                     r"([\d.]+) ms of parts \+ gap$", ln)
        if m:
            expect(abs(float(m[1]) * float(m[2]) / 1e6 - float(m[3])) <=
                   1e-4, f"clock reads: {ln!r}")
            expect(gap is not None, "the clock line after the gap line")
            break
        f = ln.split()
        expect(len(f) == 6 and f[5].endswith("%"), f"a table row: {ln!r}")
        rows[f[0]] = (f[1], f[2], float(f[3]), float(f[4]),
                      float(f[5][:-1]))
    expect(gap is not None, f"no gap line:\n{text}")
    return rows, gap


@case("run: a breakdown per training step, valid against the schema")
def _():
    out = first_run()
    doc = json.load(open(os.path.join(out, "results.json")))
    jsonschema.validate(doc, SCHEMA)
    by_op = {c["op"]: c for c in doc["cases"]}
    for op, want in (("mlp_train_step", MLP), ("cnn_train_step", CNN)):
        bd = by_op[op]["breakdown"]
        expect(isinstance(bd, dict), f"{op}: breakdown {bd!r}")
        got = {p["op"]: (p["phase"], p["calls"]) for p in bd["parts"]}
        expect(got == want, f"{op}: parts {got}, the model's {want}")
        expect(bd["steps"] >= 3, f"{op}: {bd['steps']} steps")
        parts = sum(p["ns"] for p in bd["parts"])
        expect(abs(parts + bd["gap_ns"] - bd["step_ns"]) <=
               1e-9 * bd["step_ns"], f"{op}: parts + gap != step")
    expect(by_op["add"]["breakdown"] is None and
           by_op["add"]["breakdown_reason"] is None, "add: no breakdown")


@case("show: the table, every op of the step, parts + gap = step")
def _():
    out = first_run()
    for glob, want in (("mlp_train_step*", MLP), ("cnn_train_step*", CNN)):
        text = tbench("show", glob, out).stdout
        rows, (parts, gap, step) = show_table(text)
        expect(set(rows) == set(want), f"{glob}: ops {sorted(rows)}")
        expect("  clock reads: %g calls" % sum(c for _, c in want.values())
               in text, f"{glob}: the clock line counts the calls:\n{text}")
        for op, (kernel, phase, calls, ms, share) in rows.items():
            expect((phase, calls) == want[op],
                   f"{glob}: {op}: {phase} x{calls}, want {want[op]}")
            expect(kernel and ms >= 0 and 0 <= share <= 100, f"{op} row")
        # each printed to 4 decimals
        expect(abs(parts + gap - step) <= 2e-4,
               f"{glob}: parts {parts} + gap {gap} != step {step}")
        expect(abs(sum(r[3] for r in rows.values()) - parts) <=
               1e-5 * len(rows) + 1e-4, f"{glob}: the rows' sum")
        expect(sum(r[4] for r in rows.values()) <= 100.05,
               f"{glob}: shares above 100%")
    text = tbench("show", "add*", out).stdout
    expect("breakdown" not in text, f"add shows a breakdown:\n{text}")


@case("measure.breakdown false: none, and show says why")
def _():
    out = run_config("off", ', "breakdown": false')
    text = tbench("show", "mlp_train_step*", out).stdout
    expect("breakdown: not measured: measure.breakdown is false" in text,
           f"no reason:\n{text}")


@case("report: the section, audited; a changed figure is found")
def _():
    out = first_run()
    root = os.path.join(TMP, "rep")
    os.makedirs(root, exist_ok=True)
    shutil.copytree(out, os.path.join(root, "on"), dirs_exist_ok=True)
    p = subprocess.run([TBENCH, "report", "on/results.json", "-o", "r.md"],
                       capture_output=True, text=True, cwd=root,
                       timeout=300)
    expect(p.returncode == 0, f"report: {p.stderr}")
    md = open(os.path.join(root, "r.md"), encoding="utf-8").read()
    expect("## Where a step's time goes" in md, "no breakdown section")
    rc, text = audit(os.path.join(root, "r.md"), root)
    expect(rc == 0 and ", 0 mismatches" in text, f"audit: {rc}\n{text}")
    # a Time/step cell of the section's first row made 10x larger
    lines = md.split("\n")
    i = lines.index("## Where a step's time goes")
    j = next(k for k in range(i, len(lines))
             if lines[k].startswith("| `mlp_train_step"))
    cells = lines[j].split(" | ")
    cells[5] = re.sub(r"^([\d.]+)", lambda m: "1" + m[1], cells[5])
    lines[j] = " | ".join(cells)
    bad = os.path.join(root, "bad.md")
    open(bad, "w", encoding="utf-8").write("\n".join(lines))
    rc, text = audit(bad, root)
    expect(rc == 1 and "Where a step's time goes" in text and
           "time per step" in text, f"audit of a changed cell: {rc}\n{text}")


@case("audit: a record whose parts and gap do not make its step")
def _():
    out = first_run()
    root = os.path.join(TMP, "rep2")
    os.makedirs(os.path.join(root, "on"), exist_ok=True)
    doc = json.load(open(os.path.join(out, "results.json")))
    for c in doc["cases"]:
        if c["op"] == "cnn_train_step":
            c["breakdown"]["gap_ns"] *= 2
    json.dump(doc, open(os.path.join(root, "on", "results.json"), "w"))
    p = subprocess.run([TBENCH, "report", "on/results.json", "-o", "r.md"],
                       capture_output=True, text=True, cwd=root,
                       timeout=300)
    expect(p.returncode == 0, f"report: {p.stderr}")
    rc, text = audit(os.path.join(root, "r.md"), root)
    expect(rc == 1 and "parts + gap" in text, f"audit: {rc}\n{text}")


@case("a file from before the breakdown: show and report without it")
def _():
    out = first_run()
    root = os.path.join(TMP, "old")
    os.makedirs(os.path.join(root, "on"), exist_ok=True)
    doc = json.load(open(os.path.join(out, "results.json")))
    for c in doc["cases"]:
        del c["breakdown"], c["breakdown_reason"]
    path = os.path.join(root, "on", "results.json")
    json.dump(doc, open(path, "w"))
    text = tbench("show", "mlp_train_step*", path).stdout
    expect("breakdown" not in text, f"show of an old file:\n{text}")
    p = subprocess.run([TBENCH, "report", "on/results.json", "-o", "r.md"],
                       capture_output=True, text=True, cwd=root,
                       timeout=300)
    expect(p.returncode == 0, f"report: {p.stderr}")
    md = open(os.path.join(root, "r.md"), encoding="utf-8").read()
    expect("Where a step's time goes" not in md, "a section without data")


@case("state_window: a training step's state set back, recorded; 0: never")
def _():
    out = first_run()
    doc = json.load(open(os.path.join(out, "results.json")))
    by = {c["op"]: c for c in doc["cases"]}
    for op in ("mlp_train_step", "cnn_train_step"):
        c = by[op]
        t = c["timing"]
        calls = t["warmup_iters"] + c["stats"]["n"] * \
            c["stats"]["iters_per_sample"]
        # past the default window of 100 steps (thousands of steps of a
        # tiny model in 0.05 s; a sanitizer build may run fewer than 100)
        expect(calls <= 300 or t["state_restores"] >= 1,
               f"{op}: {calls} calls, {t['state_restores']} restores")
    expect(by["add"]["timing"]["state_restores"] == 0, "add restored")
    # a window of 4 steps: set back whatever the build's speed
    for c in mlp_cases("small", {"state_window": 4}):
        t = c["timing"]
        calls = t["warmup_iters"] + c["stats"]["n"] * \
            c["stats"]["iters_per_sample"]
        expect(c["status"] == "ok" and calls > 8 and
               t["state_restores"] >= 1,
               f"{c['id']}: {c['status']}, {calls} calls, "
               f"{t['state_restores']} restores")
    for c in mlp_cases("never", [{"state_window": 0}, {"phase": 1}]):
        expect(c["status"] == "ok" and c["timing"]["state_restores"] == 0,
               f"{c['id']}: {c['status']} {c['timing']}")


def mlp_cases(name, params):
    """The cases of a short run of mlp_train_step 4x32 with params (an
    object, or a list of them), from TMP/name's results.json."""
    cfg = os.path.join(TMP, name + ".json")
    with open(cfg, "w") as f:
        json.dump({"name": name, "warmup": {"min_time_ms": 1},
                   "measure": {"max_time_s": 0.05, "min_samples": 5},
                   "ops": [{"op": "mlp_train_step", "shapes": [[4, 32]],
                            "params": params}]}, f)
    out = os.path.join(TMP, name)
    tbench("run", cfg, "-q", "-o", out)
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        return json.load(f)["cases"]

def cleanup(failed):
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print(f"# files kept in {TMP}")


sys.exit(run_cases(cleanup))
