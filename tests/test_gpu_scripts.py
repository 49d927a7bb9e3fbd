#!/usr/bin/python3
"""The GPU check's judgements (scripts/gpu_check.py), the report's GPU
section (scripts/gpu_report.py) and the offline bundle's unpacking, on
the results a real GPU produced (docs/perf-data/gpu/NVIDIA-H200/, from
scripts/gpu_check.sh on an H200) and on copies of them broken on
purpose: each assertion must pass on the real files and fail on the
broken ones (review WL4, WL5, WL7: checks that could not fail).  Printed
as TAP.

Usage: test_gpu_scripts.py   (run from the repository root)
"""
import copy
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

from tap import case, expect, run as run_cases

PY = sys.executable
GPU = "docs/perf-data/gpu"
H200 = os.path.join(GPU, "NVIDIA-H200")
TMP = tempfile.mkdtemp(prefix="tbench-gpuscripts-")


def check(*args):
    p = subprocess.run([PY, "scripts/gpu_check.py", *args],
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout


def doc(name):
    return json.load(open(os.path.join(H200, name), encoding="utf-8"))


def write(name, d):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(d, f)
    return path


def fails(out, *needles):
    bad = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    expect(bad, f"no FAIL line in:\n{out}")
    for n in needles:
        expect(any(n in ln for ln in bad), f"no FAIL naming '{n}':\n{out}")


def passes(rc, out):
    expect(rc == 0 and "FAIL" not in out and "PASS" in out,
           f"exit {rc}:\n{out}")


@case("counts: CUPTI launches = the module's counter, and a wrong one fails")
def _():
    passes(*check("counts", os.path.join(H200, "gpu.json"), "gpu"))
    d = doc("gpu.json")
    c = next(c for c in d["cases"] if c["op"] == "relu" and
             c["status"] == "ok" and not c.get("transfers"))
    c["cupti"]["kernel_launches"] = 2.0
    rc, out = check("counts", write("counts.json", d), "gpu")
    expect(rc == 1, f"exit {rc}")
    fails(out, "kernel launches, CUPTI = module counter", c["id"])


@case("counts --require-all: a config without the copy forms fails")
def _():
    rc, out = check("counts", os.path.join(H200, "gpu.json"), "gpu",
                    "--require-all")
    expect(rc == 1, f"exit {rc}")
    fails(out, "counts of add@alloc")


@case("cases: an unsupported cuda case fails (review WL5)")
def _():
    passes(*check("cases", os.path.join(H200, "gpu.json"), "gpu"))
    d = doc("gpu.json")
    d["cases"][3]["status"] = "unsupported"
    d["cases"][3]["message"] = "the backend has no kernel"
    rc, out = check("cases", write("cases.json", d), "gpu")
    expect(rc == 1, f"exit {rc}")
    fails(out, d["cases"][3]["id"], "unsupported")


@case("timing: events beyond the host time or CUPTI beyond the events fail")
def _():
    passes(*check("timing", os.path.join(H200, "gpu.json"), "gpu"))
    d = doc("gpu.json")
    c = next(c for c in d["cases"] if c["status"] == "ok" and
             c["op"] == "add" and c.get("cupti"))
    c["timing"]["device"]["median_ns"] = c["stats"]["median_ns"] * 1.5
    rc, out = check("timing", write("timing.json", d), "gpu")
    fails(out, "event time <= host time", c["id"])
    d = doc("gpu.json")
    c = next(c for c in d["cases"] if c["status"] == "ok" and
             c["op"] == "add" and c.get("cupti"))
    c["cupti"]["kernels"][0]["device_ns"] = \
        c["timing"]["device"]["median_ns"] * 2
    rc, out = check("timing", write("timing2.json", d), "gpu")
    fails(out, "CUPTI kernel time <= event time", c["id"])


@case("peaks: a figure at 1% of the vendor's fails (review WL7)")
def _():
    passes(*check("peaks", os.path.join(H200, "peaks.json")))
    d = doc("peaks.json")
    e = d["gpu"]["bandwidth"][0]
    e["best_gb_s"] = e["vendor_gb_s"] * 0.01
    rc, out = check("peaks", write("peaks.json", d))
    fails(out, f"peaks: {e['kernel']}", "want 50%-115%")
    e["best_gb_s"] = e["vendor_gb_s"] * 1.2
    rc, out = check("peaks", write("peaks2.json", d))
    fails(out, f"peaks: {e['kernel']}")


@case("l2: cold no slower than a warm single call fails (review WL4)")
def _():
    passes(*check("l2", os.path.join(H200, "l2.json"),
                  os.path.join(H200, "l2-single.json")))
    one = doc("l2-single.json")
    warm = next(c for c in one["cases"] if c["op"] == "add" and
                c["shapes"][0][0] == 1048576)
    cold = next(c for c in doc("l2.json")["cases"] if c["op"] == "add" and
                c["shapes"][0][0] == 1048576 and
                c["backend_params"]["l2"] == "cold")
    warm["timing"]["device"]["median_ns"] = \
        cold["timing"]["device"]["median_ns"]
    rc, out = check("l2", os.path.join(H200, "l2.json"),
                    write("l2-single.json", one))
    fails(out, "slower cold than warm")


@case("cupti-overhead: fastest detached within 3% of never passes, 10% "
      "fails; an old log without the fastest blocks fails")
def _():
    passes(*check("cupti-overhead", os.path.join(H200, "cupti_overhead.log")))
    path = os.path.join(TMP, "co.log")
    # the medians agree; the fastest blocks do not: the fastest decide
    with open(path, "w") as f:
        f.write("cupti_overhead never_ns=3000 attached_ns=3600 "
                "detached_ns=3000 attached_over_detached=1.09 "
                "detached_over_never=1.00 never_min_ns=2800 "
                "detached_min_ns=3080 detached_min_over_never_min=1.10 "
                "reps=21 launches=4000\n")
    rc, out = check("cupti-overhead", path)
    fails(out, "cuptiFinalize")
    with open(path, "w") as f:
        f.write("cupti_overhead never_ns=3000 attached_ns=3600 "
                "detached_ns=3000 attached_over_detached=1.09 "
                "detached_over_never=1.00 reps=21 launches=4000\n")
    rc, out = check("cupti-overhead", path)
    fails(out, "no fastest blocks")


def big_case(d):
    """gpu.json's first case judged by event vs CUPTI kernel time."""
    return next(c for c in d["cases"] if c["status"] == "ok" and
                c.get("cupti") and c["op"] == "add" and
                not c.get("transfers") and not c.get("alloc_outputs") and
                c["backend_params"].get("l2") != "cold" and
                c["timing"]["device"]["median_ns"] >= 50e3)


@case("timing: event span off CUPTI's kernel time fails, unless the case "
      "synchronizes (a device-to-host copy) or is launch-bound")
def _():
    d = doc("gpu.json")
    c = big_case(d)
    dev = c["timing"]["device"]["median_ns"]
    for k in c["cupti"]["kernels"]:
        k["device_ns"] = dev * 0.5 / len(c["cupti"]["kernels"])
    rc, out = check("timing", write("timing3.json", d), "gpu")
    fails(out, "within 10% of CUPTI kernel time", c["id"])
    # an index check's flag read back (cross_entropy on the H200): a sync
    c["cupti"]["memcpy"]["d2h"]["count"] = 1
    passes(*check("timing", write("timing4.json", d), "gpu"))
    # many launches of small kernels: the GPU idles between them
    c["cupti"]["memcpy"]["d2h"]["count"] = 0
    c["cupti"]["kernel_launches"] = 100
    rc, out = check("timing", write("timing5.json", d), "gpu")
    expect(rc == 0 and "launch-bound left out" in out, f"exit {rc}:\n{out}")


@case("counts: einsum's cuBLAS GEMMs may launch more kernels than calls")
def _():
    d = doc("gpu.json")
    c = next(c for c in d["cases"] if c["op"] == "relu" and
             c["status"] == "ok" and not c.get("transfers"))
    c["cupti"]["kernel_launches"] = 4.0
    c["op"] = "einsum3"
    passes(*check("counts", write("counts2.json", d), "gpu"))
    c["op"] = "relu"
    rc, out = check("counts", write("counts3.json", d), "gpu")
    fails(out, "kernel launches, CUPTI = module counter", c["id"])


def exec_dir(name, op, dtype, params, inputs, outputs, refs, tol):
    """A `tbench exec` folder as gpu_torch.py compare reads it: inputs,
    outputs and references as .npy (bf16 as the raw upper halves of f32
    in the structured dtype tbench writes), exec.json naming them."""
    import numpy as np
    d = os.path.join(TMP, "exec", name)
    os.makedirs(d, exist_ok=True)

    def save(kind, k, v, dt):
        a = np.asarray(v, dtype=np.float32)
        if dt == "bf16":
            b = np.zeros(a.shape, dtype=[("bf16", "<u2")])
            b["bf16"] = (a.reshape(-1).view(np.uint32) >> 16).reshape(
                a.shape)
            a = b
        elif dt == "f64":
            a = np.asarray(v, dtype=np.float64)
        np.save(os.path.join(d, f"{kind}{k}.npy"), a)
        return {"file": f"{kind}{k}.npy", "dtype": dt,
                "shape": list(np.shape(v))}
    ex = {"id": f"{name}/{dtype}/cuda", "op": op, "dtype": dtype,
          "params": params, "status": "ok",
          "inputs": [save("input", k, v, dtype)
                     for k, v in enumerate(inputs)],
          "outputs": [save("output", k, v, dtype)
                      for k, v in enumerate(outputs)],
          "reference": [save("reference", k, v, "f64")
                        for k, v in enumerate(refs)],
          "check": {"atol": tol, "rtol": tol}}
    with open(os.path.join(d, "exec.json"), "w", encoding="utf-8") as f:
        json.dump(ex, f)
    return d


def torch_compare(*dirs):
    p = subprocess.run([PY, "scripts/gpu_torch.py", "compare", *dirs],
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


@case("gpu_torch compare: a bf16 sum to a scalar and group_norm's groups "
      "of one value compare; a twin that raises or a wrong output fails "
      "its op alone")
def _():
    try:
        import numpy  # noqa: F401  pylint: disable=unused-import
        import torch  # noqa: F401  pylint: disable=unused-import
    except ImportError as e:
        print(f"# skipped: {e}")
        return
    s = exec_dir("sum0d", "sum", "bf16", {"keepdim": 0},
                 [[1.5, 2.5, -0.25]], [3.75], [3.75], 1e-2)
    # three groups of one value each: the output is the bias (seen on an
    # H200: F.group_norm refused the case and the traceback lost the step)
    g = exec_dir("gn1", "group_norm", "f32",
                 {"num_groups": 3, "eps": 1e-5},
                 [[[0.5, -1.0, 2.0]], [1.0, 2.0, 3.0], [0.25, 0.5, 0.75]],
                 [[[0.25, 0.5, 0.75]]], [[[0.25, 0.5, 0.75]]], 1e-5)
    gb = exec_dir("gnb1", "group_norm_backward", "f32",
                  {"num_groups": 3, "eps": 1e-5},
                  [[[1.0, 1.0, 1.0]], [[0.5, -1.0, 2.0]], [1.0, 2.0, 3.0]],
                  [[[0.0, 0.0, 0.0]], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]],
                  [[[0.0, 0.0, 0.0]], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]],
                  1e-5)
    rc, out = torch_compare(s, g, gb)
    passes(rc, out)
    # matmul of 2x3 by 2x3: PyTorch raises; add with a wrong output
    m = exec_dir("mm", "matmul", "f32", {}, [[[1, 2, 3], [4, 5, 6]]] * 2,
                 [[[1, 2], [3, 4]]], [[[1, 2], [3, 4]]], 1e-5)
    a = exec_dir("addbad", "add", "f32", {}, [[1.0, 2.0], [3.0, 4.0]],
                 [[4.0, 7.0]], [[4.0, 6.0]], 1e-5)
    rc, out = torch_compare(s, m, a, g)
    expect(rc == 1, f"exit {rc}:\n{out}")
    fails(out, "torch matmul", "raised")
    fails(out, "torch add:", "1 of 2 outside")
    expect("PASS torch sum" in out and "PASS torch group_norm" in out,
           f"the good ops lost:\n{out}")


@case("env: env.gpu against nvidia-smi -q; another GPU's UUID fails")
def _():
    smi = os.path.join(H200, "nvidia-smi.txt")
    passes(*check("env", os.path.join(H200, "gpu.json"), smi))
    d = doc("gpu.json")
    d["env"]["gpu"]["devices"][0]["uuid"] = "GPU-00000000-0000-0000-0000-0"
    d["env"]["gpu"]["devices"][0]["clocks_mhz"]["sm_max"] = 1410
    rc, out = check("env", write("env.json", d), smi)
    expect(rc == 1, f"exit {rc}")
    fails(out, "uuid", "max SM clock")


@case("extract-debs: a .deb unpacked without dpkg, its .pc paths moved")
def _():
    debs = os.path.join(TMP, "debs")
    os.makedirs(debs)
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:xz") as t:
        for name, text in (("./usr/include/x/x.h", b"int x;\n"),
                           ("./usr/lib/x86_64-linux-gnu/pkgconfig/x.pc",
                            b"libdir=/usr/lib/x86_64-linux-gnu\n"
                            b"includedir=/usr/include\nName: x\n"
                            b"Cflags: -I${includedir}\n")):
            ti = tarfile.TarInfo(name)
            ti.size = len(text)
            t.addfile(ti, io.BytesIO(text))
    members = [(b"debian-binary", b"2.0\n"), (b"data.tar.xz",
                                              data.getvalue())]
    blob = b"!<arch>\n"
    for name, body in members:
        hdr = name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + \
            b"0".ljust(6) + b"100644".ljust(8) + \
            str(len(body)).encode().ljust(10) + b"`\n"
        blob += hdr + body + (b"\n" if len(body) % 2 else b"")
    with open(os.path.join(debs, "libx_1_amd64.deb"), "wb") as f:
        f.write(blob)
    root = os.path.join(TMP, "root")
    rc, out = check("extract-debs", debs, root)
    expect(rc == 0, f"exit {rc}: {out}")
    expect(os.path.exists(os.path.join(root, "usr/include/x/x.h")),
           "header not unpacked")
    pc = open(os.path.join(root, "usr/lib/x86_64-linux-gnu/pkgconfig/x.pc"
                           )).read()
    expect(f"libdir={root}/usr/lib" in pc and
           f"includedir={root}/usr/include" in pc, pc)


@case("gpu_report: the H200 section's figures are the files'")
def _():
    p = subprocess.run([PY, "scripts/gpu_report.py", GPU, "--cpu",
                        "docs/perf-data/results.json"],
                       capture_output=True, text=True, timeout=120)
    expect(p.returncode == 0, p.stderr)
    md = p.stdout
    expect(md.startswith("## GPU results") and "### NVIDIA H200" in md,
           md[:300])
    for mode in ("first", "full"):
        lines = open(os.path.join(H200, f"{mode}-summary.txt")).read(
        ).splitlines()
        n_pass = sum(ln.startswith("PASS") for ln in lines)
        n_fail = sum(ln.startswith("FAIL") for ln in lines)
        expect(f"| `gpu_check.sh --{mode}` | {n_pass} | {n_fail} |" in md,
               f"{mode}: {n_pass} passed, {n_fail} failed not in the "
               f"section")
    tt = doc("torch-times.json")
    r = next(r for r in tt["rows"] if r["id"].startswith(
        "add/4096x4096,4096x4096/"))
    ratio = r["tbench_device_ns"] / r["torch_device_ns"]
    expect(f"| add 4096x4096,4096x4096 | " in md and f"| {ratio:.2f} |" in md,
           f"add 4096x4096 ratio {ratio:.2f} not in the section")
    expect("No GPU results yet" not in md, "says there are none")


@case("gpu_report: without a device folder, 'No GPU results yet' only")
def _():
    empty = os.path.join(TMP, "nogpu")
    os.makedirs(empty)
    p = subprocess.run([PY, "scripts/gpu_report.py", empty],
                       capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0, p.stderr)
    expect("No GPU results yet" in p.stdout and "###" not in p.stdout,
           p.stdout)


@case("gpu_check.sh: --help is the header; an unknown option exits 2")
def _():
    p = subprocess.run(["sh", "scripts/gpu_check.sh", "--help"],
                       capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0 and "--first" in p.stdout and
           "Exit status" in p.stdout, p.stdout[:500])
    p = subprocess.run(["sh", "scripts/gpu_check.sh", "--fast"],
                       capture_output=True, text=True, timeout=60)
    expect(p.returncode == 2 and "unknown option" in p.stderr, p.stderr)


sys.exit(run_cases(lambda failed: failed or shutil.rmtree(TMP, True)))
