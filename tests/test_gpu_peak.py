#!/usr/bin/python3
"""`tbench peak` on a machine without a usable GPU, printed as TAP.

Usage: test_gpu_peak.py PATH/TO/tbench   (run from the repository root)

The CPU peaks are still measured and cached, exit 0, and the peaks'
"gpu" object says cuda is unavailable with the same reason `tbench list`
gives; the peaks validate against docs/results.schema.json ($defs/peaks)
and the table says why there are no GPU peaks.  Where a GPU is usable,
scripts/gpu_check.sh runs `tbench peak` instead.
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
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-gpupeak-")
ENV = dict(os.environ, TBENCH_PEAK_CACHE=os.path.join(TMP, "cache.json"))


def tbench(*args):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          env=ENV, timeout=300)


def cuda_reason():
    """cuda's unavailable reason as `tbench list` prints it, or None."""
    out = tbench("list").stdout
    for line in out.split("\n"):
        s = line.strip()
        if s.startswith("cuda") and "unavailable" in s:
            return s.split("unavailable", 1)[1].lstrip(":) ").strip()
    return None


@case("peak --quick --json: exit 0, CPU peaks, gpu unavailable with why")
def peak_json():
    r = tbench("peak", "--quick", "--json")
    expect(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr))
    p = json.loads(r.stdout)
    expect(len(p["flops"]) > 0 and len(p["bandwidth"]) > 0,
           "no CPU peaks")
    g = p.get("gpu")
    expect(isinstance(g, dict), "no gpu object: %r" % g)
    expect(g["backend"] == "cuda", "backend %r" % g["backend"])
    expect(g["available"] is False, "gpu available without a GPU")
    why = cuda_reason()
    expect(why is not None, "tbench list shows no unavailable cuda")
    expect(g["reason"] and why and why.startswith(g["reason"][:40]),
           "reason %r, list says %r" % (g["reason"], why))
    expect(g["device"] is None and g["bandwidth"] == [] and
           g["flops"] == [], "figures without a GPU: %r" % g)
    sub = dict(SCHEMA["$defs"]["peaks"], **{"$defs": SCHEMA["$defs"]})
    jsonschema.validate(p, sub)
    cache = json.load(open(ENV["TBENCH_PEAK_CACHE"], encoding="utf-8"))
    expect(cache["entries"][0].get("gpu") == g, "gpu not cached")


@case("peak table says why there are no GPU peaks")
def peak_table():
    r = tbench("peak", "--quick")
    expect(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr))
    lines = [l for l in r.stdout.split("\n")
             if l.startswith("GPU peaks: cuda unavailable: ")]
    expect(len(lines) == 1, "no unavailable line in:\n" + r.stdout)


@case("a run with those peaks: the report says why there are no GPU peaks")
def report_says_why():
    cfg = os.path.join(TMP, "tiny.json")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write('{"name": "tiny", "warmup": {"min_time_ms": 1}, '
                '"measure": {"max_time_s": 0.05, "min_samples": 3}, '
                '"backends": ["cpu"], '
                '"ops": [{"op": "add", "shapes": [[1024]]}]}')
    out = os.path.join(TMP, "run")
    r = tbench("run", cfg, "-o", out, "-q")
    expect(r.returncode == 0, "run exit %d: %s" % (r.returncode, r.stderr))
    md = os.path.join(TMP, "r.md")
    r = tbench("report", os.path.join(out, "results.json"), "-o", md,
               "--no-charts")
    expect(r.returncode == 0, r.stderr)
    text = open(md, encoding="utf-8").read()
    expect("No GPU peaks: cuda was unavailable when they were measured "
           "(" in text, "no reason in the report")
    expect("### Measured GPU peaks" not in text, "a GPU table without GPU")


if __name__ == "__main__":
    run_cases(lambda failed: failed or shutil.rmtree(TMP, True))
