#!/usr/bin/python3
"""The GPU features of the harness end to end on a machine without a GPU,
printed as TAP: tbench list/run/peak/report with a stand-in CUDA module
(tests/fake_cuda_module.c, loaded through TBENCH_MODULE_DIR) and a fake
NVML (tests/nvml_fake.c, TBENCH_NVML_LIB).

Usage: test_gpu_fake.py PATH/TO/tbench FAKE_MODULE_DIR FAKE_NVML.so
(run from the repository root)

Checked: the tf32 axis (an impl ending in "_tf32" is checked at tf32's
tolerance, rtol 2^-9 and atol 2^-10, and passes; the same TF32 result
named as a plain f32 impl fails f32's); the l2 axis (cold samples are one prepared call each, device
time 5000 ns against 1000 warm, as the fake charges); the clock record
and the run's throttle warning (FAKE_NVML_MODE=throttle), its absence on
a steady GPU, the reason without NVML; `peak` with a GPU (the fake's
figures, cached) and the GPU roofline of a run that reads them,
recomputed here from the model and the peaks; the report's flag.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
MODDIR = os.path.abspath(sys.argv[2])
NVML = os.path.abspath(sys.argv[3])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-gpufake-")
N = 65536
CONFIG = """{
  "name": "gpu-fake", "seed": 3,
  "warmup": {"min_time_ms": 1, "min_iters": 1},
  "measure": {"sample_time_ms": 0.5, "min_samples": 5, "max_samples": 40,
              "ci_target": 0.5, "max_time_s": 0.3},
  "dtypes": ["f32"],
  "backends": [{"name": "cuda", "l2": ["warm", "cold"]}],
  "ops": [{"op": "add", "shapes": [[%d]]}]
}
""" % N


def env(**kw):
    e = dict(os.environ, TBENCH_MODULE_DIR=MODDIR, TBENCH_NVML_LIB=NVML,
             TBENCH_PEAK_CACHE=os.path.join(TMP, "peaks.json"))
    e.pop("FAKE_NVML_MODE", None)
    e.update(kw)
    return e


def tbench(args, **kw):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          env=env(**kw), timeout=300, cwd=TMP)


def run(name, **kw):
    cfg = os.path.join(TMP, "fake.json")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(CONFIG)
    out = os.path.join(TMP, name)
    r = tbench(["run", cfg, "-o", out], **kw)
    expect(r.returncode == 0, "run exit %d: %s" % (r.returncode, r.stderr))
    doc = json.load(open(os.path.join(out, "results.json"),
                         encoding="utf-8"))
    jsonschema.validate(doc, SCHEMA)
    cases = {c["backend_params"]["l2"]: c for c in doc["cases"]}
    expect(set(cases) == {"warm", "cold"}, "cases %r" % list(cases))
    return r, doc, cases


@case("list: the stand-in module is cuda, with the device and l2 axes")
def listed():
    r = tbench(["list"])
    expect(r.returncode == 0, r.stderr)
    lines = [l.split() for l in r.stdout.split("\n")]
    expect(["cuda", "available"] in lines, "cuda not available:\n" +
           r.stdout)
    expect("axis l2: warm cold  (default warm)" in r.stdout, "no l2 axis")


TF32_CONFIG = """{
  "name": "gpu-fake-tf32", "seed": 5,
  "warmup": {"min_time_ms": 0, "min_iters": 1},
  "measure": {"sample_time_ms": 0.1, "min_samples": 3, "max_samples": 5,
              "ci_target": 0.5, "max_time_s": 0.1},
  "dtypes": ["f32"],
  "backends": [{"name": "cuda", "tf32": ["off", "on"]}],
  "ops": [{"op": "matmul", "shapes": [[[32, 1024], [1024, 16]]]}]
}
"""


def run_tf32(name, **kw):
    cfg = os.path.join(TMP, "tf32.json")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(TF32_CONFIG)
    out = os.path.join(TMP, name)
    r = tbench(["run", cfg, "-o", out], **kw)
    doc = json.load(open(os.path.join(out, "results.json"),
                         encoding="utf-8"))
    jsonschema.validate(doc, SCHEMA)
    return r, {c["backend_params"]["tf32"]: c for c in doc["cases"]}


@case("tf32=on: checked at tf32's tolerance; f32's fails its result")
def tf32():
    r, c = run_tf32("tf32")
    expect(r.returncode == 0, "run exit %d: %s" % (r.returncode, r.stderr))
    on, off = c["on"], c["off"]
    expect(on["status"] == "ok" and off["status"] == "ok",
           "%s / %s" % (on["message"], off["message"]))
    expect(on["impl"] == "matmul_f32_fakecuda_tf32", on["impl"])
    expect(on["check"]["rtol"] == 2.0 ** -9, "rtol %r" % on["check"])
    expect(abs(on["check"]["atol"] - 2.0 ** -10 * 32) < 1e-12,
           "atol %r (2^-10 x sqrt(1024))" % on["check"])
    expect(off["check"]["rtol"] == 1e-5, "f32 rtol %r" % off["check"])
    # rounding the inputs to 10 bits is far outside f32's tolerance
    expect(on["check"]["max_abs_err"] > 50 * off["check"]["atol"],
           "tf32 error %r" % on["check"])
    r, c = run_tf32("tf32plain", FAKE_TF32_IMPL="plain")
    expect(r.returncode == 1, "exit %d: %s" % (r.returncode, r.stderr))
    expect(c["on"]["status"] == "failed-check" and
           c["off"]["status"] == "ok",
           "%s / %s" % (c["on"]["status"], c["off"]["status"]))


@case("l2=cold: one prepared call per sample, cold device time")
def cold():
    _, _, c = run("steady")
    w, k = c["warm"], c["cold"]
    expect(w["status"] == "ok" and k["status"] == "ok",
           "%s %s" % (w["message"], k["message"]))
    expect(k["timing"]["prepared_samples"] is True, "cold not prepared")
    expect(k["stats"]["iters_per_sample"] == 1, "cold batch %r"
           % k["stats"]["iters_per_sample"])
    expect(w["timing"]["prepared_samples"] is False, "warm prepared")
    expect(k["timing"]["device"]["median_ns"] == 5000.0,
           "cold device %r" % k["timing"]["device"])
    expect(w["timing"]["device"]["median_ns"] == 1000.0,
           "warm device %r" % w["timing"]["device"])


@case("steady GPU: a clock record, no warning")
def steady():
    r, _, c = run("steady2")
    for k in c.values():
        g = k["gpu_clock"]
        expect(g["available"] and g["throttled"] is False,
               "record %r" % g)
        expect(g["sm_mhz_min"] == 345 and g["readings"] >= 2, "%r" % g)
    expect("throttled" not in r.stderr, "warning: " + r.stderr)


@case("throttled GPU: the record, the run's warning, the report's flag")
def throttled():
    r, doc, c = run("throttled", FAKE_NVML_MODE="throttle")
    for k in c.values():
        g = k["gpu_clock"]
        expect(g["throttled"] is True, "not throttled: %r" % g)
        expect(g["throttle_reasons"] == ["software power cap",
                                         "hardware thermal slowdown"],
               "%r" % g["throttle_reasons"])
        want = ("warning: %s: the GPU (00000000:01:00.0) throttled during "
                "the case: SM clock " % k["id"])
        expect(want in r.stderr, "no %r in:\n%s" % (want, r.stderr))
    expect(r.stderr.count("software power cap, hardware thermal "
                          "slowdown") == 2, r.stderr)
    md = os.path.join(TMP, "throttled.md")
    rr = tbench(["report", os.path.join(TMP, "throttled", "results.json"),
                 "-o", md, "--no-charts"])
    expect(rr.returncode == 0, rr.stderr)
    text = open(md, encoding="utf-8").read()
    rows = [l for l in text.split("\n")
            if l.startswith("| add") and "**GPU throttled**" in l]
    expect(len(rows) == 2, "flagged rows %r" % rows)


@case("no NVML: the record says why, the run still times the cases")
def no_nvml():
    _, _, c = run("nonvml", TBENCH_NVML_LIB="/nonexistent/libnvidia-ml.so")
    for k in c.values():
        g = k["gpu_clock"]
        expect(k["status"] == "ok", k["message"])
        expect(g["available"] is False and g["reason"].startswith(
            "NVML not loaded (no NVIDIA driver?): /nonexistent/"), "%r" % g)


@case("peak with a GPU: its figures, cached; a run's GPU rooflines")
def peak_and_roofline():
    r = tbench(["peak", "--quick", "--json"])
    expect(r.returncode == 0, r.stderr)
    g = json.loads(r.stdout)["gpu"]
    expect(g["available"] and g["device"]["name"] == "Fake GPU", "%r" % g)
    bw = {e["kernel"]: e for e in g["bandwidth"]}
    expect(abs(bw["triad"]["best_gb_s"] - 2800) < 1e-6, "%r" % bw)
    expect(abs(bw["copy"]["vendor_gb_s"] - 3352) < 1e-6, "%r" % bw)
    t = tbench(["peak", "--quick"])
    expect("GPU peaks (cuda device 0: Fake GPU" in t.stdout, t.stdout)
    _, doc, c = run("roofline")
    expect(doc["peaks"] and doc["peaks"]["gpu"] == g, "peaks not used")
    for k in c.values():
        rl = k["roofline"]
        expect(rl and rl["level"] == "GPU" and rl["bw_kernel"] == "triad",
               "roofline %r" % rl)
        t_mem = k["model"]["bytes"] / 2800.0
        t_flop = k["model"]["flops"] / 60000.0
        want = max(t_mem, t_flop) / k["stats"]["median_ns"]
        expect(abs(rl["fraction"] - want) <= 1e-9 * want,
               "fraction %r, want %r" % (rl["fraction"], want))
    md = os.path.join(TMP, "roofline.md")
    rr = tbench(["report", os.path.join(TMP, "roofline", "results.json"),
                 "-o", md, "--no-charts"])
    expect(rr.returncode == 0, rr.stderr)
    text = open(md, encoding="utf-8").read()
    expect("### Measured GPU peaks" in text and "Fake GPU" in text,
           "no GPU peaks table")
    rows = [l for l in text.split("\n")
            if l.startswith(("| GPU triad bandwidth", "| GPU f32 FMA",
                             "| GPU f64 FMA"))]
    expect(len(rows) == 3, "rows %r" % rows)
    expect(rows[0].endswith("| 84% |"), "triad: %r" % rows[0])  # 2800/3352
    expect(rows[1].endswith("| 90% |"), "f32: %r" % rows[1])  # 60/66.9


if __name__ == "__main__":
    run_cases(lambda failed: failed or shutil.rmtree(TMP, True))
