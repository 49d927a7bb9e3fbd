#!/usr/bin/python3
"""CLI tests of the training workloads' side of the report (issue 14):
scripts/compare_torch_training.py and the report's sections "Hooks",
"API layers", "Training and inference steps by batch" (with its chart)
and "Memory pool" (src/report/training.c).  Printed as TAP.

Usage: test_cli_training.py PATH/TO/tbench   (from the repository root)

A tiny config of every workload runs in tbench and, with --quick, in the
PyTorch script (a few seconds).  The script's file must validate against
docs/results.schema.json and pair case for case with tbench's (same ids
but the backend, same params and cost model).  For the report, the
medians and counters of both files are then replaced by known values
(every stats field scaled together, so the files stay consistent), and
every figure of the four tables is recomputed here from those values
and compared (3 significant digits, so within 0.6%).  Needs Debian's
python3-jsonschema and python3-torch: run with /usr/bin/python3.
"""
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

import jsonschema

TBENCH = os.path.abspath(sys.argv[1])
SCRIPT = os.path.abspath("scripts/compare_torch_training.py")
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-training-")

CONFIG = """// every training workload, tiny
{
  "name": "tiny-training", "seed": 14,
  "warmup": {"min_time_ms": 1, "min_iters": 1},
  "measure": {"sample_time_ms": 0.5, "min_samples": 3, "max_samples": 10,
              "ci_target": 0.5, "max_time_s": 0.02},
  "dtypes": ["f32"], "backends": ["cpu", "blas"],
  "ops": [
    {"op": "mlp_train_step", "shapes": [[4, 784]],
     "params": [{"phase": 0, "hooks": 0}, {"phase": 0, "hooks": 1},
                {"phase": 1, "hooks": 0}, {"phase": 1, "hooks": 1},
                {"phase": 1, "hooks": 2}, {"phase": 1, "hooks": 3}]},
    {"op": "api_add", "shapes": [[16], [4096]],
     "params": [{"layer": 0}, {"layer": 1}, {"layer": 2}, {"layer": 3}]},
    {"op": "mlp_train_step", "shapes": [[1, 784], [4, 784]]},
    {"op": "mlp_infer_step", "shapes": [[1, 784], [4, 784]]},
    {"op": "cnn_train_step", "shapes": [[1, 1, 28, 28], [2, 1, 28, 28]]},
    {"op": "cnn_infer_step", "shapes": [[1, 1, 28, 28], [2, 1, 28, 28]]},
    {"op": "mlp_train_step", "shapes": [[4, 784]], "params": {"pool": true}},
    {"op": "api_add", "shapes": [[16]], "params": {"layer": 2, "pool": true}}
  ]
}
"""

_state = {}


def key(cid):
    return cid.rsplit("/", 1)[0]


def produce():
    """tbench's run and the script's file of CONFIG (once)."""
    if "run" in _state:
        return _state["run"], _state["torch"]
    cfg = os.path.join(TMP, "training.json")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(CONFIG)
    p = subprocess.run([TBENCH, "run", cfg, "-o", os.path.join(TMP, "run"),
                        "-q"], capture_output=True, text=True, timeout=300)
    expect(p.returncode == 0, f"tbench run: exit {p.returncode}: {p.stderr}")
    out = os.path.join(TMP, "torch.json")
    p = subprocess.run([sys.executable, SCRIPT, cfg, "-o", out, "--tbench",
                        TBENCH, "--quick"], capture_output=True, text=True,
                       timeout=300)
    expect(p.returncode == 0, f"script: exit {p.returncode}: {p.stderr}")
    with open(os.path.join(TMP, "run", "results.json"),
              encoding="utf-8") as f:
        _state["run"] = json.load(f)
    with open(out, encoding="utf-8") as f:
        _state["torch"] = json.load(f)
    return _state["run"], _state["torch"]


@case("compare_torch_training.py: valid tbench result file whose cases "
      "pair with tbench's (ids, params, cost model), checked in f64")
def t_script():
    run, torch = produce()
    jsonschema.validate(torch, SCHEMA)
    tb = {key(c["id"]): c for c in run["cases"]}
    th = {key(c["id"]): c for c in torch["cases"]}
    expect(set(tb) == set(th), f"keys differ: {set(tb) ^ set(th)}")
    for k, c in th.items():
        t = tb[k]
        expect(c["id"] == k + "/torch[threads=1]", f"id {c['id']}")
        expect(c["backend"] == "torch", c["backend"])
        for f in ("op", "category", "dtype", "shapes", "out_shapes", "params",
                  "model"):
            expect(c[f] == t[f], f"{k}: {f} {c[f]} != tbench's {t[f]}")
        if c["params"].get("pool"):
            expect(c["status"] == "unsupported" and "pool" in c["message"],
                   f"{k}: {c['status']} {c['message']}")
            continue
        expect(c["status"] == "ok", f"{k}: {c['status']} {c['message']}")
        expect(c["check"]["passed"] and c["check"]["max_abs_err"] <= 1e-5,
               f"{k}: check {c['check']}")
        expect(c["stats"]["median_ns"] > 0, k)
        steps = c["throughput"]["steps_s"]
        if c["op"] == "api_add":
            expect(steps is None, f"{k}: steps_s {steps}")
        else:
            expect(abs(steps * c["stats"]["median_ns"] - 1e9) < 1e-3,
                   f"{k}: steps_s {steps}")
    s = torch["summary"]
    expect(s["cases"] == len(th) and s["ok"] + s["unsupported"] == len(th),
           f"summary {s}")


@case("compare_torch_training.py: a missing config is a one-line error, "
      "exit 2")
def t_script_errors():
    p = subprocess.run([sys.executable, SCRIPT, os.path.join(TMP, "nope"),
                        "-o", os.path.join(TMP, "x.json"), "--tbench",
                        TBENCH], capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    expect(p.returncode == 2 and len(lines) == 1 and "nope" in lines[0],
           f"exit {p.returncode}: {p.stderr}")
    p = subprocess.run([sys.executable, SCRIPT, "-o", "x.json", "--tbench",
                        os.path.join(TMP, "no-tbench")], capture_output=True,
                       text=True, timeout=60)
    expect(p.returncode == 2 and "--tbench" in p.stderr, p.stderr)


# ---- the report on known values ----------------------------------------------

def set_median(c, v):
    """Scale every time of c's stats so its median is v."""
    st = c["stats"]
    f = v / st["median_ns"]
    for k in list(st):
        if k.endswith("_ns") and isinstance(st[k], (int, float)):
            st[k] *= f
    st["samples_ns"] = [x * f for x in st["samples_ns"]]
    if "round_medians_ns" in st:
        st["round_medians_ns"] = [x * f for x in st["round_medians_ns"]]


def fixtures(drop=()):
    """Copies of both files with known medians (and pool counters); the
    torch cases whose key is in drop are removed.  Returns (run path,
    torch path, {id: median})."""
    run, torch = produce()
    run, torch = copy.deepcopy(run), copy.deepcopy(torch)
    rnd = random.Random(14)
    meds = {}
    for c in run["cases"] + torch["cases"]:
        if c["status"] != "ok":
            continue
        lo, hi = (40, 5000) if c["op"] == "api_add" else (5e4, 9e5)
        v = round(rnd.uniform(lo, hi), 1)
        set_median(c, v)
        meds[c["id"]] = v
        if c["params"].get("pool") is not None and c["op"] != "api_add":
            ct = c["counters"]
            ct["device_allocs"] = rnd.choice([19.0, 23.0, 31.0]) \
                if not c["params"]["pool"] else rnd.choice([0.0, 0.5, 2.0])
            ct["device_alloc_bytes"] = float(rnd.randrange(1, 4000) * 1024)
            ct["minor_faults"] = float(rnd.randrange(0, 300))
            ct["peak_extra_bytes"] = float(rnd.randrange(1, 9000) * 1024)
    torch["cases"] = [c for c in torch["cases"] if key(c["id"]) not in drop]
    torch["summary"]["cases"] = len(torch["cases"])
    d = tempfile.mkdtemp(dir=TMP)
    rp, tp = os.path.join(d, "results.json"), os.path.join(d, "torch.json")
    for path, doc in ((rp, run), (tp, torch)):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
    return rp, tp, meds, run, torch


def report(rp, tp):
    out = os.path.join(os.path.dirname(rp), "report.md")
    p = subprocess.run([TBENCH, "report", rp, "--with", tp, "-o", out],
                       capture_output=True, text=True, timeout=300)
    expect(p.returncode == 0, f"report: exit {p.returncode}: {p.stderr}")
    with open(out, encoding="utf-8") as f:
        return f.read()


def section_rows(md, title):
    """The rows (lists of cells) of the first table of section title."""
    m = re.search(r"^## " + re.escape(title) + r"\n(.*?)(?=^## |\Z)", md,
                  re.S | re.M)
    expect(m, f"no section '{title}'")
    rows = [l for l in m.group(1).split("\n") if l.startswith("|")]
    return [[x.strip() for x in r.strip("|").split("|")] for r in rows[2:]]


UNIT = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def num(cell):
    """A figure of the report as a number in ns / a fraction / a count /
    bytes; None for "-"."""
    if cell == "-":
        return None
    m = re.fullmatch(r"([+-]?[0-9.]+) ?(ns|us|ms|s|%|x|B|KiB|MiB|GiB)?",
                     cell)
    expect(m, f"not a figure: '{cell}'")
    v = float(m.group(1))
    u = m.group(2)
    if u in UNIT:
        return v * UNIT[u]
    if u == "%":
        return v / 100
    if u in ("KiB", "MiB", "GiB"):
        return v * 1024 ** ("KMG".index(u[0]) + 1)
    return v


def near(cell, want, what):
    got = num(cell)
    if want is None:
        expect(got is None, f"{what}: '{cell}', want '-'")
        return
    expect(got is not None, f"{what}: '-', want {want:.6g}")
    # 3 significant digits, or 2 decimals in % / small figures
    tol = max(abs(want) * 0.006, 0.0006 if cell.endswith("%") else 0.006)
    if cell.endswith("%"):
        tol = max(tol, 0.0006)
    expect(abs(got - want) <= tol, f"{what}: '{cell}' = {got:.6g}, want "
                                   f"{want:.6g}")


def ovh(cell, want, what):
    """An overhead cell: "FIGURE (LO to HI)" with its CI, which must hold
    the figure and not 0, or "within noise (±X)", whose bound must hold
    the figure (the point lies in a CI that holds 0); "-" for None."""
    if want is None:
        expect(cell == "-", f"{what}: '{cell}', want '-'")
        return
    m = re.fullmatch(r"within noise \(±(.+)\)", cell)
    if m:
        x = num(m.group(1))
        expect(x is not None and x > 0 and abs(want) <= x * 1.01 + 1e-12,
               f"{what}: '{cell}' but the medians give {want:.6g}")
        return
    m = re.fullmatch(r"(\S+(?: \S+)?) \((.+) to (.+)\)", cell)
    expect(m, f"{what}: no CI in '{cell}'")
    near(m.group(1), want, what)
    unit = re.sub(r"[-+0-9.]", "", m.group(1)).strip()
    lo = num(m.group(2) if re.search(r"[a-z%]", m.group(2))
             else m.group(2) + unit)
    hi = num(m.group(3) if re.search(r"[a-z%]", m.group(3))
             else m.group(3) + unit)
    got = num(m.group(1))
    tol = 0.01 * abs(got) + 1e-12  # 3 significant digits each
    expect(lo - tol <= got <= hi + tol and (lo > 0 or hi < 0),
           f"{what}: CI of '{cell}'")


def by(doc):
    return {key(c["id"]) + "|" + c["backend"] + "|" +
            json.dumps(c["backend_params"], sort_keys=True): c
            for c in doc["cases"] if c["status"] == "ok"}


def variant(c):
    return c["id"].rsplit("/", 1)[1]


def find(doc, op, shape, be_variant=None, **params):
    for c in doc["cases"]:
        if c["status"] != "ok" or c["op"] != op or \
                "x".join(map(str, c["shapes"][0])) != shape:
            continue
        if be_variant and variant(c) != be_variant:
            continue
        if all(c["params"].get(k) == v for k, v in params.items()):
            return c
    return None


def med(c):
    return c["stats"]["median_ns"] if c else None


@case("report: Hooks figures recomputed from the fixture's medians")
def t_hooks():
    rp, tp, _, run, torch = fixtures()
    rows = section_rows(report(rp, tp), "Hooks")
    ops = {"mlp_train_step": 6}
    n = 0
    for be in sorted({variant(c) for c in run["cases"]}):
        for h in range(4):
            row = [r for r in rows if r[0] == be and r[2] == str(h)]
            expect(len(row) == 1, f"{be} hooks={h}: {len(row)} rows")
            r = row[0]
            n += 1
            base = dict(lr=0.01, momentum=0.9, pool=False)
            fh = find(run, "mlp_train_step", "4x784", be, phase=0, hooks=h,
                      **base)
            f = fh or find(run, "mlp_train_step", "4x784", be, phase=0,
                           hooks=h & 1, **base)
            fb = find(run, "mlp_train_step", "4x784", be, phase=1, hooks=h,
                      **base)
            f0 = find(run, "mlp_train_step", "4x784", be, phase=0, hooks=0,
                      **base)
            fb0 = find(run, "mlp_train_step", "4x784", be, phase=1, hooks=0,
                       **base)
            calls = ops["mlp_train_step"] * ((h & 1 != 0) + (h & 2 != 0))
            near(r[3], med(f), "forward")
            near(r[4], med(fb) - med(f), "backward")
            near(r[5], med(fb), "fwd+bwd")
            ovh(r[6], med(fh) / med(f0) - 1 if h and fh else None,
                "overhead forward")
            ovh(r[7], med(fb) / med(fb0) - 1 if h else None,
                "overhead fwd+bwd")
            ovh(r[8], (med(fb) - med(fb0)) / calls if h else None,
                "per hook call")
            pf = find(torch, "mlp_train_step", "4x784", None, phase=0,
                      hooks=h & 1, **base)
            pfb = find(torch, "mlp_train_step", "4x784", None, phase=1,
                       hooks=h, **base)
            pfb0 = find(torch, "mlp_train_step", "4x784", None, phase=1,
                        hooks=0, **base)
            near(r[9], med(pf), "torch forward")
            near(r[10], med(pfb) - med(pf), "torch backward")
            near(r[11], med(pfb), "torch fwd+bwd")
            ovh(r[12], med(pfb) / med(pfb0) - 1 if h else None,
                "torch overhead")
            ovh(r[13], (med(pfb) - med(pfb0)) / calls if h else None,
                "torch per hook call")
    expect(len(rows) == n, f"{len(rows)} rows, want {n}")


@case("report: API layers figures recomputed from the fixture's medians")
def t_api():
    rp, tp, _, run, torch = fixtures()
    rows = section_rows(report(rp, tp), "API layers")
    n = 0
    for be in sorted({variant(c) for c in run["cases"]
                      if c["op"] == "api_add" and c["status"] == "ok"}):
        for size in (16, 4096):
            s = f"{size}"
            raw = find(run, "api_add", s, be, layer=0, pool=False)
            praw = find(torch, "api_add", s, None, layer=0, pool=False)
            for layer in range(4):
                c = find(run, "api_add", s, be, layer=layer, pool=False)
                p = find(torch, "api_add", s, None, layer=layer, pool=False)
                row = [r for r in rows if r[0] == be and r[1] == s and
                       r[2].startswith(f"{layer} ")]
                expect(len(row) == 1, f"{be} {s} layer {layer}: {row}")
                r = row[0]
                n += 1
                near(r[3], med(c), "per call")
                near(r[6], med(p), "torch per call")
                if layer == 0:  # the baseline itself
                    expect(r[4] == r[5] == r[7] == r[8] == "-", str(r))
                    continue
                ovh(r[4], med(c) - med(raw), "over raw")
                ovh(r[5], (med(c) - med(raw)) / med(raw), "over raw %")
                ovh(r[7], med(p) - med(praw), "torch over")
                ovh(r[8], (med(p) - med(praw)) / med(praw), "torch over %")
    # backends in name order, sizes ascending within each
    order = [(r[0], int(r[1])) for r in rows]
    expect(order == sorted(order), f"row order {order}")
    expect(len(rows) == n, f"{len(rows)} rows, want {n}")


@case("report: step rates by batch recomputed, a missing PyTorch case "
      "shows '-', the chart's data are samples/s by batch")
def t_rates():
    gone = "cnn_infer_step[hooks=0,pool=0]/2x1x28x28/f32"
    rp, tp, _, run, torch = fixtures(drop=(gone,))
    md = report(rp, tp)
    rows = section_rows(md, "Training and inference steps by batch")
    want = []
    for op in ("mlp_train_step", "mlp_infer_step", "cnn_train_step",
               "cnn_infer_step"):
        for be in ["cpu[isa=auto,threads=1]", "blas[threads=1]"]:
            for c in sorted((c for c in run["cases"]
                             if c["op"] == op and variant(c) == be and
                             c["status"] == "ok" and
                             c["params"].get("phase", 2) == 2 and
                             not c["params"]["hooks"] and
                             not c["params"]["pool"]),
                            key=lambda c: c["shapes"][0][0]):
                want.append(c)
    expect(len(rows) == len(want) == 16, f"{len(rows)} rows, want "
                                         f"{len(want)}")
    peer = {key(c["id"]): c for c in torch["cases"] if c["status"] == "ok"}
    for r, c in zip(rows, want):
        B = c["shapes"][0][0]
        what = f"{c['id']}"
        expect(r[0] == c["op"] and r[1] == variant(c) and r[2] == str(B),
               f"row {r[:3]} for {what}")
        near(r[3], med(c), what + " median")
        near(r[4], 1e9 / med(c), what + " steps/s")
        near(r[5], B * 1e9 / med(c), what + " samples/s")
        p = peer.get(key(c["id"]))
        expect((p is None) == (key(c["id"]) == gone), f"{what}: peer")
        near(r[6], med(p), what + " torch median")
        near(r[7], 1e9 / med(p) if p else None, what + " torch steps/s")
        near(r[8], B * 1e9 / med(p) if p else None, what + " torch samples/s")
        near(r[9], med(p) / med(c) if p else None, what + " ratio")
    # the chart's data: one block per series (tbench's, then PyTorch's)
    dat = os.path.join(os.path.dirname(rp), "perf", "training-steps.dat")
    if not os.path.exists(dat):
        return "SKIP chart: gnuplot is not installed"
    expect("perf/training-steps.png" in md, "chart not linked")
    blocks = open(dat, encoding="utf-8").read().strip().split("\n\n\n")
    series = {}
    for c in run["cases"] + torch["cases"]:
        if c in want or (c["backend"] == "torch" and c["status"] == "ok" and
                         c["op"] != "api_add" and
                         c["params"].get("phase", 2) == 2 and
                         not c["params"]["hooks"]):
            series.setdefault(f"{c['op']} {variant(c)} f32", []).append(c)
    series = {k: v for k, v in series.items() if len(v) >= 2}
    got = {}
    for b in blocks:
        lines = b.strip().split("\n")
        pts = [tuple(float(x) for x in l.split("#")[0].split())
               for l in lines[1:]]
        got[lines[0][2:]] = pts
    expect(set(got) == set(series), f"series {set(got) ^ set(series)}")
    for name, cs in series.items():
        exp = sorted((c["shapes"][0][0], c["shapes"][0][0] * 1e9 / med(c))
                     for c in cs)
        expect(len(got[name]) == len(exp), f"{name}: {got[name]}")
        for (b0, v0), (b1, v1) in zip(got[name], exp):
            expect(b0 == b1 and abs(v0 - v1) <= 1e-6 * v1,
                   f"{name}: ({b0}, {v0}) want ({b1}, {v1})")


@case("report: Memory pool figures recomputed from the fixture's medians "
      "and counters")
def t_pool():
    rp, tp, _, run, torch = fixtures()
    rows = section_rows(report(rp, tp), "Memory pool")
    n = 0
    for on in run["cases"]:
        if on["status"] != "ok" or not on["params"].get("pool"):
            continue
        prm = dict(on["params"], pool=False)
        off = find(run, on["op"], "x".join(map(str, on["shapes"][0])),
                   variant(on), **prm)
        row = [r for r in rows if r[1] == variant(on) and
               r[0].startswith(on["op"] + "[") and
               r[0].endswith("/" + ",".join("x".join(map(str, s))
                                           for s in on["shapes"]))]
        expect(len(row) == 1, f"{on['id']}: {len(row)} rows")
        r = row[0]
        n += 1
        a, b = off["counters"], on["counters"]
        near(r[2], med(off), "off")
        near(r[3], med(on), "on")
        sp = re.fullmatch(r"within noise \(1 ±(\S+)x\)|(\S+)x \((\S+) to "
                          r"(\S+)\)", r[4])
        expect(sp, f"speedup without its CI: '{r[4]}'")
        want = med(off) / med(on)
        if sp.group(1):  # the CI of the change holds 0
            expect(abs(want - 1) <= float(sp.group(1)) * 1.01 + 1e-9,
                   f"'{r[4]}' but the medians give {want:.4g}")
        else:
            got, lo, hi = (float(sp.group(k)) for k in (2, 3, 4))
            expect(abs(got - want) <= 0.006 * want and
                   lo - 0.01 * got <= got <= hi + 0.01 * got and
                   (lo > 1 or hi < 1), f"speedup '{r[4]}', want {want:.4g}")
        near(r[5], a["device_allocs"], "allocs off")
        near(r[6], b["device_allocs"], "allocs on")
        near(r[7], a["device_allocs"] - b["device_allocs"], "hits")
        near(r[8], a["device_alloc_bytes"], "bytes off")
        near(r[9], b["device_alloc_bytes"], "bytes on")
        near(r[10], a["minor_faults"], "faults off")
        near(r[11], b["minor_faults"], "faults on")
        near(r[12], a["peak_extra_bytes"], "peak off")
        near(r[13], b["peak_extra_bytes"], "peak on")
    expect(n >= 2 and len(rows) == n, f"{len(rows)} rows, {n} pool cases")


@case("report: no training section without training workloads")
def t_absent():
    rp, tp, _, run, torch = fixtures()
    run["cases"] = [c for c in run["cases"] if c["op"] == "mlp_infer_step"
                    and c["shapes"][0][0] == 1]
    run["summary"]["cases"] = len(run["cases"])
    with open(rp, "w", encoding="utf-8") as f:
        json.dump(run, f)
    md = report(rp, tp)
    for t in ("Hooks", "API layers", "Memory pool"):
        expect(f"## {t}\n" not in md, f"section {t} with no data")
    rows = section_rows(md, "Training and inference steps by batch")
    expect(len(rows) == len(run["cases"]) >= 1,
           f"{len(rows)} rate rows, {len(run['cases'])} cases")


def cleanup(failed):
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print(f"# files kept in {TMP}")


sys.exit(run_cases(cleanup))
