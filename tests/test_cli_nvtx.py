#!/usr/bin/python3
"""NVTX ranges of a run, recorded by a test tool, printed as TAP.

Usage: test_cli_nvtx.py PATH/TO/tbench PATH/TO/nvtx_inject.so

tests/nvtx_inject.c is loaded by NVTX through NVTX_INJECTION64_PATH and
logs every push and pop with the stack of range names.  A small run must
show exactly run > CASE-ID > phase > round N > batch in domain "tbench"
(src/harness/trace.h), in the worker and with --no-isolate, and nothing
at all with --no-nvtx.  Needs Debian's python3-jsonschema: run with
/usr/bin/python3.
"""
import json
import os
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

import jsonschema

TBENCH = os.path.abspath(sys.argv[1])
INJECT = os.path.abspath(sys.argv[2])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-nvtx-")

CONFIG = """{
  "name": "nvtx",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 0.2, "min_samples": 4, "max_samples": 8,
              "max_time_s": 0.05, "rounds": 2},
  "ops": [{"op": "add", "shapes": [[64]]}, {"op": "relu", "shapes": [[64]]}]
}
"""


def traced_run(name, *extra):
    cfg = os.path.join(TMP, "nvtx.json")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(CONFIG)
    log = os.path.join(TMP, name + ".log")
    out = os.path.join(TMP, name)
    env = dict(os.environ, NVTX_INJECTION64_PATH=INJECT, TB_NVTX_LOG=log)
    env.pop("TBENCH_FAULT", None)
    p = subprocess.run([TBENCH, "run", cfg, "-q", "-o", out, *extra],
                       capture_output=True, text=True, timeout=120, env=env)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        doc = json.load(f)
    jsonschema.validate(doc, SCHEMA)
    events = []
    if os.path.exists(log):
        with open(log, encoding="utf-8") as f:
            for line in f:
                pid, what, dom, path = line.rstrip("\n").split("\t")
                events.append((int(pid), what, dom, path))
    return doc, events


def expected_paths(doc):
    """Every range path a run of doc's cases must push, as a set."""
    want = {"run"}
    for c in doc["cases"]:
        top = "run > " + c["id"]
        want |= {top, top + " > setup", top + " > check", top + " > warmup",
                 top + " > sampling"}
        for r in (1, 2):
            want |= {f"{top} > sampling > round {r}",
                     f"{top} > sampling > round {r} > batch"}
    return want


def check_nesting(doc, events, one_process):
    expect(events, "no NVTX event recorded")
    expect(all(dom == "tbench" for _, _, dom, _ in events),
           f"domains {set(d for _, _, d, _ in events)}")
    expect(not [e for e in events if e[1] == "pop-empty"], "unbalanced pop")
    pushed = {path for _, what, _, path in events if what == "push"}
    want = expected_paths(doc)
    expect(pushed == want, f"missing {sorted(want - pushed)[:4]}, "
           f"unexpected {sorted(pushed - want)[:4]}")
    pids = {pid for pid, _, _, _ in events}
    expect((len(pids) == 1) == one_process, f"{len(pids)} processes")
    # every push is popped: per process, pushes - pops is 0 for the
    # process that pushed "run"; a worker ends inside the inherited "run"
    for pid in pids:
        mine = [e for e in events if e[0] == pid]
        bal = sum(1 if w == "push" else -1 for _, w, _, _ in mine)
        has_run = any(w == "push" and p == "run" for _, w, _, p in mine)
        expect(bal == 0, f"pid {pid}: {bal} ranges left open")
        if not has_run:
            expect(all(p.startswith("run") for _, _, _, p in mine),
                   f"pid {pid}: a range outside run")
    # batches are inside their round, rounds inside sampling
    for _, what, _, path in events:
        if what == "push" and path.endswith("batch"):
            expect(" > sampling > round " in path, path)


@case("isolated run: run > case id > phase > round > batch, domain "
      "tbench, results say nvtx on")
def t_isolated():
    doc, events = traced_run("iso")
    expect(doc["nvtx"] is True, f"nvtx {doc['nvtx']}")
    expect(len(doc["cases"]) == 2, "cases")
    check_nesting(doc, events, one_process=False)


@case("--no-isolate: the same nesting in one process")
def t_in_process():
    doc, events = traced_run("inproc", "--no-isolate")
    check_nesting(doc, events, one_process=True)


@case("--no-nvtx: no range at all, results say nvtx off")
def t_off():
    doc, events = traced_run("off", "--no-nvtx")
    expect(doc["nvtx"] is False, f"nvtx {doc['nvtx']}")
    expect(not events, f"{len(events)} events with --no-nvtx")


if __name__ == "__main__":
    sys.exit(run_cases())
