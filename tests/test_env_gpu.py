#!/usr/bin/python3
"""env.gpu (NVML loaded at run time), printed as TAP.

Usage: test_env_gpu.py TBENCH FAKE_NVML   (run from the repository root)

- This machine: without libnvidia-ml.so.1 (no NVIDIA driver), a run
  still succeeds and env.gpu says why (the dlopen error), with no
  devices; a TBENCH_NVML_LIB that does not exist is named in the reason.
- A fake NVML (tests/nvml_fake.c): every field of env.gpu comes from it
  (name, compute capability, SM count from cores, memory, clocks, ECC;
  an unsupported query is null), and NVML's own failures (init without
  a driver, no device) become the reason.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
FAKE = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="tbench-envgpu-")
N = [0]


def env_gpu(**extra):
    """env.gpu of a one-case run with extra environment variables."""
    N[0] += 1
    out = os.path.join(TMP, f"r{N[0]}")
    env = dict(os.environ)
    env.pop("TBENCH_NVML_LIB", None)
    env.update(extra)
    p = subprocess.run([TBENCH, "run", "configs/quick.json", "-b", "cpu",
                        "-f", "relu/*", "-o", out, "-q"],
                       capture_output=True, text=True, env=env, timeout=300)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc = json.load(open(os.path.join(out, "results.json"), encoding="utf-8"))
    g = doc["env"].get("gpu")
    expect(isinstance(g, dict), f"env.gpu: {g!r}")
    return g


def have_nvml():
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        return True
    except OSError:
        return False


@case("this machine: env.gpu says why there is no GPU information")
def this_machine():
    g = env_gpu()
    expect(g["nvml_library"] == "libnvidia-ml.so.1", g)
    if have_nvml():
        return "SKIP NVML is installed here"
    expect(g["available"] is False, g)
    expect(g["reason"].startswith("NVML not loaded (no NVIDIA driver?): "),
           g["reason"])
    expect("libnvidia-ml.so.1" in g["reason"], g["reason"])
    expect(g["devices"] == [], g)
    expect(g["driver_version"] is None, g)
    return None


@case("a TBENCH_NVML_LIB that does not exist is named in the reason")
def missing_lib():
    path = os.path.join(TMP, "no-such-nvml.so")
    g = env_gpu(TBENCH_NVML_LIB=path)
    expect(g["available"] is False and path in g["reason"], g)


@case("a fake NVML: every field of env.gpu")
def fake():
    g = env_gpu(TBENCH_NVML_LIB=FAKE)
    expect(g["available"] is True and g["reason"] is None, g)
    expect(g["driver_version"] == "580.65.06", g)
    expect(g["cuda_driver_version"] == "13.1", g)
    expect(len(g["devices"]) == 1, g)
    d = g["devices"][0]
    want = {"index": 0, "name": "Fake H100 80GB HBM3",
            "uuid": "GPU-00000000-fake", "compute_capability": "9.0",
            "cuda_cores": 16896, "sm_count": 132,
            "memory_total_bytes": 85520809984, "ecc": True,
            "persistence": None,
            "clocks_mhz": {"sm": 345, "mem": 2619, "sm_max": 1980,
                           "mem_max": 2619}}
    for k, v in want.items():
        expect(d.get(k) == v, f"{k}: {d.get(k)!r}, want {v!r}")


@case("NVML failures: init without a driver, no device")
def fake_failures():
    g = env_gpu(TBENCH_NVML_LIB=FAKE, FAKE_NVML_MODE="initfail")
    expect(g["available"] is False, g)
    expect(g["reason"] == "nvmlInit_v2: Driver Not Loaded (error 9)",
           g["reason"])
    expect(g["devices"] == [], g)
    g = env_gpu(TBENCH_NVML_LIB=FAKE, FAKE_NVML_MODE="nodevice")
    expect(g["available"] is False, g)
    expect(g["reason"] == "no NVIDIA GPU: NVML found 0 devices", g["reason"])
    expect(g["driver_version"] == "580.65.06", g)


sys.exit(run_cases(cleanup=lambda failed: failed or
                   shutil.rmtree(TMP, ignore_errors=True)))
