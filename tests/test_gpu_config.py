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
- Transfers (issue 11 item 5): copy cases over 64 KiB..256 MiB, pageable
  and pinned; "transfers": [false, true] on the element-wise and matmul
  entries gives @transfers cases on cuda only; cpu runs copy_h2d as its
  memcpy (checked) and refuses pinned.
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
    # issue 11 item 5: copies over 64 KiB..256 MiB (f32), pageable and
    # pinned; element-wise and matmul with and without transfers
    sizes = [[16384 * 4 ** k] for k in range(7)]
    for op in ("copy_h2d", "copy_d2h", "copy_d2d"):
        expect(op in ops and all(s in ops[op] for s in sizes),
               f"{op}: needs 64 KiB to 256 MiB")
    for o in cfg["ops"]:
        if o["op"] in ("copy_h2d", "copy_d2h"):
            expect({"pinned": False} in o["params"] and
                   {"pinned": True} in o["params"],
                   f"{o['op']}: needs pageable and pinned")
        if o["op"] in ("add", "mul", "relu", "add_relu", "matmul"):
            expect(o.get("transfers") == [False, True],
                   f"{o['op']}: needs \"transfers\": [false, true]")
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
        n_tr = len(o["transfers"]) if isinstance(o.get("transfers"),
                                                   list) else 1
        want += len(o["shapes"]) * n_params * n_tr
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


@case("transfers: @transfers cases on cuda only, beside the resident ones")
def run_transfers():
    out = os.path.join(TMP, "tr")
    # peaks measured here into a cache of this test's own, so the cases
    # have their rooflines
    env = dict(os.environ, TBENCH_PEAK_CACHE=os.path.join(TMP, "peaks.json"))
    p = subprocess.run([TBENCH, "run", CONFIG, "-o", out, "-q", "--peaks",
                        "--filter", "add/256x256,*", "--filter",
                        "copy_h2d*/16384/*"], capture_output=True, text=True,
                       timeout=500, env=env)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = json.load(open(os.path.join(out, "results.json"), encoding="utf-8"))
    ids = {c["id"]: c for c in doc["cases"]}
    tr = [i for i in ids if ids[i]["transfers"]]
    expect(tr and all(i.endswith("@transfers") for i in tr), tr)
    expect(all(ids[i]["backend"] == "cuda" for i in tr), tr)
    expect(all(ids[i]["op"] == "add" for i in tr), tr)
    resident = [i for i in ids if ids[i]["op"] == "add" and
                ids[i]["backend"] == "cuda" and not ids[i]["transfers"]]
    expect(len(resident) == len(tr), f"{resident} vs {tr}")
    cpu = {c["params"].get("pinned"): c for c in doc["cases"]
           if c["op"] == "copy_h2d" and c["backend"] == "cpu"}
    expect(cpu[False]["status"] == "ok" and cpu[True]["status"] ==
           "unsupported", {k: v["status"] for k, v in cpu.items()})
    expect(cpu[False]["check"]["passed"], cpu[False]["check"])
    # on the host the copy reads and writes the link's bytes: its memory
    # roof counts twice model.bytes (results.c)
    rl = cpu[False].get("roofline")
    expect(rl, "copy_h2d on cpu has no roofline")
    if rl:
        want = 2 * cpu[False]["model"]["bytes"] / rl["bandwidth_gb_s"]
        expect(abs(rl["min_time_ns"] - want) <= 1e-9 * want,
               f"copy_h2d's roof {rl['min_time_ns']} ns, want {want}")
    return None


@case("gpu-alloc.json: allocating forms on cpu and cuda pool=false/true")
def gpu_alloc():
    text = open("configs/gpu-alloc.json", encoding="utf-8").read()
    cfg = json.loads(re.sub(r"//[^\n]*", "", text))
    expect(cfg["backends"] == ["cpu", {"name": "cuda",
                                        "pool": [False, True]}],
           cfg["backends"])
    forms = {o["op"]: o for o in cfg["ops"]}
    expect(forms["add"].get("alloc") == [False, True], forms["add"])
    expect("add_relu_unfused" in forms and "api_add" in forms, forms.keys())
    out = os.path.join(TMP, "alloc")
    p = tbench("run", "configs/gpu-alloc.json", "-o", out, "-q",
               "--filter", "add*/1024*", "--max-time", "0.05")
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = json.load(open(os.path.join(out, "results.json"), encoding="utf-8"))
    by = {}
    for c in doc["cases"]:
        by.setdefault(c["backend"], []).append(c)
    expect(all(c["status"] == "ok" for c in by["cpu"]),
           [(c["id"], c["status"]) for c in by["cpu"]])
    # cpu add@alloc: one backend allocation per call, out=: none
    for c in by["cpu"]:
        if c["op"] == "add":
            want = 1 if c["alloc_outputs"] else 0
            expect(c["counters"]["device_allocs"] == want,
                   f"{c['id']}: {c['counters']['device_allocs']}")
    avail, reason = cuda_reason()
    if not avail:
        expect(all(c["status"] == "unavailable" and c["message"] == reason
                   for c in by["cuda"]), by["cuda"][:1])
    return None


@case("bad transfer values: one-line errors naming file and place, exit 2")
def bad_values():
    bad = [
        ('{"op": "copy_h2d", "shapes": [[8]], "params": {"pinned": 1}}',
         ":1:80: ops[0].params.pinned: expected true or false, got 1"),
        ('{"op": "copy_d2d", "shapes": [[8]], "params": {"pinned": true}}',
         ":1:70: ops[0].params.pinned: op 'copy_d2d' has no parameter "
         "'pinned' (parameters: none)"),
        ('{"op": "add", "shapes": [[8]], "transfers": "host"}',
         ":1:67: ops[0].transfers: expected true or false, got \"host\""),
        ('{"op": "add", "shapes": [[8]], "transfers": [true, true]}',
         ":1:74: ops[0].transfers[1]: true is listed twice"),
    ]
    for i, (op, msg) in enumerate(bad):
        path = os.path.join(TMP, f"bad{i}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write('{"name": "t", "ops": [' + op + ']}')
        p = tbench("run", path, "-o", os.path.join(TMP, f"bad{i}"))
        expect(p.returncode == 2, f"{op}: exit {p.returncode}")
        lines = p.stderr.strip().splitlines()
        expect(len(lines) == 1 and lines[0] == f"tbench: {path}{msg}",
               f"{op}: {p.stderr!r}")
    return None


sys.exit(run_cases(cleanup=lambda failed: failed or
                   shutil.rmtree(TMP, ignore_errors=True)))
