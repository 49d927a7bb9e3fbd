#!/usr/bin/python3
"""The report's flag on cases timed while the GPU throttled (the case
record's gpu_clock, docs/FORMAT.md), printed as TAP.

Usage: test_gpu_report.py PATH/TO/tbench   (run from the repository root)

No GPU is needed: records of tests/data/report/mixed.json get the
gpu_clock a cuda case would have (throttled, not throttled, NVML
absent), are checked against docs/results.schema.json, and the report
must flag exactly the throttled one, with its reasons and clocks.
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
SRC = os.path.abspath("tests/data/report/mixed.json")
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-gpurep-")

THROTTLED = {
    "pci_bus_id": "00000000:01:00.0", "source": "NVML", "available": True,
    "reason": None, "readings": 12, "sm_mhz_start": 1980,
    "sm_mhz_end": 1755, "sm_mhz_min": 1755, "sm_mhz_max": 1980,
    "reasons_start": [], "reasons_end": ["software power cap"],
    "reasons_seen": ["software power cap", "hardware thermal slowdown"],
    "throttled": True,
    "throttle_reasons": ["software power cap", "hardware thermal slowdown"],
}
STEADY = dict(THROTTLED, sm_mhz_end=1980, sm_mhz_min=1980,
              reasons_end=[], reasons_seen=[], throttled=False,
              throttle_reasons=[])
NO_NVML = {
    "pci_bus_id": "00000000:01:00.0", "source": "NVML", "available": False,
    "reason": "NVML not loaded (no NVIDIA driver?): libnvidia-ml.so.1",
    "readings": 0, "sm_mhz_start": None, "sm_mhz_end": None,
    "sm_mhz_min": None, "sm_mhz_max": None, "reasons_start": None,
    "reasons_end": None, "reasons_seen": None, "throttled": None,
    "throttle_reasons": None,
}


def report(doc, name):
    path = os.path.join(TMP, name + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    md = os.path.join(TMP, name + ".md")
    r = subprocess.run([TBENCH, "report", path, "-o", md, "--no-charts"],
                       capture_output=True, text=True, timeout=300)
    expect(r.returncode == 0, "report exit %d: %s" % (r.returncode,
                                                      r.stderr))
    with open(md, encoding="utf-8") as f:
        return f.read()


def with_clocks():
    doc = json.load(open(SRC, encoding="utf-8"))
    ok = [c for c in doc["cases"] if c["status"] == "ok"]
    ok[0]["gpu_clock"] = copy.deepcopy(THROTTLED)
    ok[1]["gpu_clock"] = copy.deepcopy(STEADY)
    ok[2]["gpu_clock"] = copy.deepcopy(NO_NVML)
    return doc, ok[0]["id"], ok[1]["id"], ok[2]["id"]


@case("records with gpu_clock (throttled, steady, no NVML) fit the schema")
def schema_ok():
    doc, _, _, _ = with_clocks()
    jsonschema.validate(doc, SCHEMA)
    bad = copy.deepcopy(doc)
    bad["cases"][0]["gpu_clock"]["throttled"] = "yes"
    try:
        jsonschema.validate(bad, SCHEMA)
        expect(False, "a string 'throttled' passed the schema")
    except jsonschema.ValidationError:
        pass


@case("the report flags the throttled case only, with reasons and clocks")
def flagged():
    doc, thr, steady, nonvml = with_clocks()
    md = report(doc, "clocks")
    flagged_rows = [l for l in md.split("\n")
                    if l.startswith("|") and "GPU throttled" in l]
    expect(len(flagged_rows) == 1, "flagged rows: %r" % flagged_rows)
    line = "- `%s`: SM clock 1755-1980 MHz; software power cap, " \
           "hardware thermal slowdown" % thr
    expect(line in md, "no note line %r in the report" % line)
    expect("`%s`" % steady not in md.split("**GPU throttled**:")[1]
           .split("\n\n")[1], "the steady case is listed as throttled")
    expect(nonvml not in md.split("**GPU throttled**:")[1].split("\n\n")[1],
           "the case without NVML is listed as throttled")


@case("without gpu_clock records the report has no throttle flag")
def not_flagged():
    doc = json.load(open(SRC, encoding="utf-8"))
    md = report(doc, "plain")
    expect("GPU throttled" not in md, "flag in a report without GPU cases")


if __name__ == "__main__":
    run_cases(lambda failed: failed or shutil.rmtree(TMP, True))
