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


@case("cupti-overhead: detached within 3% of never passes, 10% fails")
def _():
    passes(*check("cupti-overhead", os.path.join(H200, "cupti_overhead.log")))
    path = os.path.join(TMP, "co.log")
    with open(path, "w") as f:
        f.write("cupti_overhead never_ns=3000 attached_ns=3600 "
                "detached_ns=3300 attached_over_detached=1.09 "
                "detached_over_never=1.10 reps=21 launches=4000\n")
    rc, out = check("cupti-overhead", path)
    fails(out, "cuptiFinalize")


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
