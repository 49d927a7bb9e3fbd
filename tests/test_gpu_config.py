#!/usr/bin/python3
"""configs/gpu.json (issue 11, item 7) on a machine with or without a GPU,
printed as TAP.

Usage: test_gpu_config.py TBENCH   (run from the repository root)

- The matrix holds every op and size of the seeds' CPU/OpenBLAS/CUDA
  tables on the backends cpu, blas and cuda (read from the file itself,
  comments stripped).
- `tbench run configs/gpu.json -b cuda` exits 0 and records one cuda
  case per matrix entry; without a driver (or without the module) every
  one is `unavailable` with the reason `list` gives.
- A small part on cpu and blas (`--filter`) runs: cpu cases are ok, blas
  runs matmul and reports sum `unsupported`, never run elsewhere.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
CONFIG = "configs/gpu.json"
TMP = tempfile.mkdtemp(prefix="tbench-gpucfg-")


def load_config():
    text = open(CONFIG, encoding="utf-8").read()
    # // comments never occur inside this file's strings
    return json.loads(re.sub(r"//[^\n]*", "", text))


def tbench(*args):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=500)


def cuda_reason():
    p = tbench("list", "--json")
    expect(p.returncode == 0, p.stderr)
    for b in json.loads(p.stdout)["backends"]:
        if b["name"] == "cuda":
            return b.get("available"), b.get("reason")
    raise AssertionError("no cuda backend in `list --json`")


@case("the matrix: the seeds' ops and sizes on cpu, blas and cuda")
def matrix():
    cfg = load_config()
    expect(cfg["backends"] == ["cpu", "blas", "cuda"], cfg["backends"])
    ops = {}
    for o in cfg["ops"]:
        ops.setdefault(o["op"], []).extend(o["shapes"])
    need = {
        "matmul": [[256, 256], [1024, 1024], [4096, 4096]],
        "transpose": [[256, 256], [1024, 1024]],
        "sum": [[256, 256], [1024, 1024]],
        "mean": [[256, 256], [1024, 1024]],
        "log_softmax": [[256, 10], [4096, 10]],
        "conv2d": [[[32, 1, 28, 28], [16, 1, 3, 3], [16]]],
        "max_pool2d": [[32, 16, 24, 24]],
        "add": [[256, 256], [4096, 4096]],
        "relu": [[256, 256], [4096, 4096]],
        "adam": [[1000000], [100000000]],
        "sgd": [[1000000], [100000000]],
    }
    for op, shapes in need.items():
        expect(op in ops, f"{op} missing from {CONFIG}")
        for s in shapes:
            expect(s in ops[op], f"{op}: shape {s} missing")
    axis0 = [o for o in cfg["ops"] if o["op"] in ("sum", "mean")]
    for o in axis0:
        expect({} in o["params"] and {"axis": 0} in o["params"],
               f"{o['op']}: needs global and axis-0 cases")


@case("run -b cuda: exit 0, every case recorded, unavailable with the reason")
def run_cuda():
    cfg = load_config()
    want = 0
    for o in cfg["ops"]:
        params = o.get("params", [{}])
        n_params = len(params) if isinstance(params, list) else 1
        want += len(o["shapes"]) * n_params
    out = os.path.join(TMP, "cuda")
    p = tbench("run", CONFIG, "-b", "cuda", "-o", out, "-q")
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = json.load(open(os.path.join(out, "results.json"), encoding="utf-8"))
    cases = doc["cases"]
    expect(len(cases) == want, f"{len(cases)} cases, want {want}")
    expect(all(c["backend"] == "cuda" for c in cases), "non-cuda case")
    ops = {c["op"] for c in cases}
    expect(ops == {o["op"] for o in cfg["ops"]}, ops)
    avail, reason = cuda_reason()
    if avail:
        bad = [c["id"] for c in cases if c["status"] not in ("ok",)]
        expect(not bad, f"not ok on this GPU: {bad}")
        return None
    expect(reason, "cuda unavailable without a reason in list")
    for c in cases:
        expect(c["status"] == "unavailable", f"{c['id']}: {c['status']}")
        expect(c["message"] == reason,
               f"{c['id']}: message {c['message']!r}, list says {reason!r}")
    return None


@case("a part on cpu and blas: cpu ok, blas matmul ok, blas sum unsupported")
def run_cpu_blas():
    out = os.path.join(TMP, "cpu")
    p = tbench("run", CONFIG, "-o", out, "-q", "--filter",
               "matmul/256x256,*", "--filter", "sum*/256x256/*")
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = json.load(open(os.path.join(out, "results.json"), encoding="utf-8"))
    got = {(c["op"], c["backend"]): c["status"] for c in doc["cases"]}
    expect(got.get(("matmul", "cuda")) in ("ok", "unavailable"), got)
    expect(got.get(("matmul", "cpu")) == "ok", got)
    expect(got.get(("sum", "cpu")) == "ok", got)
    if ("matmul", "blas") in got and got[("matmul", "blas")] != "unavailable":
        expect(got[("matmul", "blas")] == "ok", got)
        expect(got.get(("sum", "blas")) == "unsupported", got)
    return None


sys.exit(run_cases(cleanup=lambda failed: failed or
                   shutil.rmtree(TMP, ignore_errors=True)))
