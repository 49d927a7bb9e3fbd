#!/usr/bin/python3
"""Isolated workers: crashes, hangs, exits and signals, printed as TAP.

Usage: test_cli_isolate.py PATH/TO/tbench   (run from the repository root)

Each case of `tbench run` runs in a worker process (src/harness/worker.h).
TBENCH_FAULT (src/harness/runner.h) makes the kernel of a chosen case die
by SIGSEGV, abort(), spin forever or call exit() in a chosen phase; these
tests check that the case gets status crashed or timeout with the signal
and the phase, that every other case still runs and is ok, that the file
validates against docs/results.schema.json, and that SIGINT, SIGTERM and
SIGHUP keep every finished case and leave no temporary file.  Needs
Debian's python3-jsonschema: run with /usr/bin/python3.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from tap import case, expect, run as run_cases

import jsonschema

TBENCH = os.path.abspath(sys.argv[1])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-isolate-")

# Six cases in this order: add, relu, exp, neg, sum, abs.
CONFIG = """{
  "name": "isolate",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 0.2, "min_samples": 5, "max_samples": 50,
              "ci_target": 0.05, "max_time_s": 0.05, "rounds": 2,
              "timeout_s": 1.5},
  "ops": [
    {"op": "add", "shapes": [[64]]}, {"op": "relu", "shapes": [[64]]},
    {"op": "exp", "shapes": [[64]]}, {"op": "neg", "shapes": [[64]]},
    {"op": "sum", "shapes": [[64]]}, {"op": "abs", "shapes": [[64]]}
  ]
}
"""

ALL_FAULTS = ("segv:check:add/*;hang:warmup:relu/*;abort:sampling:exp/*;"
              "exit:check:neg/*")


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run(args, fault=None, timeout=120):
    env = dict(os.environ)
    env.pop("TBENCH_FAULT", None)
    if fault is not None:
        env["TBENCH_FAULT"] = fault
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def load(out):
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        doc = json.load(f)
    jsonschema.validate(doc, SCHEMA)
    return doc, {c["op"]: c for c in doc["cases"]}


def no_temp_files(out):
    left = [f for f in os.listdir(out) if ".tmp" in f]
    expect(not left, f"temporary files left: {left}")


@case("segv, hang, abort and exit in four kernels: each recorded, the "
      "rest ok, exit 1")
def t_faults():
    cfg = write("iso.json", CONFIG)
    out = os.path.join(TMP, "faults")
    t0 = time.time()
    p = run(["run", cfg, "-q", "-o", out], fault=ALL_FAULTS)
    took = time.time() - t0
    expect(p.returncode == 1, f"exit {p.returncode}, want 1: {p.stderr}")
    doc, by = load(out)
    expect(doc["complete"] is True, "complete should be true")
    expect(doc["isolation"] == "process", f"isolation {doc['isolation']}")
    want = {
        "add": ("crashed", "worker killed by SIGSEGV", "during check"),
        "relu": ("timeout", "no result after 1.5 s", "during warmup"),
        "exp": ("crashed", "worker killed by SIGABRT", "during sampling"),
        "neg": ("crashed", "worker exited with status 3", "during check"),
    }
    for op, (status, what, phase) in want.items():
        c = by[op]
        expect(c["status"] == status,
               f"{op}: status {c['status']}, want {status}")
        expect(what in c["message"] and phase in c["message"],
               f"{op}: message '{c['message']}'")
        expect(c["stats"] is None, f"{op}: has stats")
    for op in ("sum", "abs"):
        expect(by[op]["status"] == "ok", f"{op}: {by[op]['status']}")
        expect(by[op]["stats"]["rounds"] == 2, f"{op}: rounds")
    s = doc["summary"]
    expect(s["crashed"] == 3 and s["timeout"] == 1 and s["ok"] == 2,
           f"summary {s}")
    # the hang costs its timeout, not more
    expect(took < 60, f"took {took:.1f} s")
    no_temp_files(out)


@case("a crash while sampling keeps the kernel's name; the other cases "
      "get all their rounds")
def t_later_round():
    cfg = write("iso2.json", CONFIG)
    out = os.path.join(TMP, "later")
    p = run(["run", cfg, "-q", "-o", out], fault="segv:sampling:add/*")
    expect(p.returncode == 1, f"exit {p.returncode}: {p.stderr}")
    doc, by = load(out)
    expect(by["add"]["status"] == "crashed", by["add"]["status"])
    expect(by["add"]["impl"], "impl of the crashed kernel missing")
    for op in ("relu", "exp", "neg", "sum", "abs"):
        expect(by[op]["status"] == "ok" and by[op]["stats"]["rounds"] == 2,
               f"{op}: {by[op]['status']}")


@case("--no-isolate runs in process and records isolation none")
def t_no_isolate():
    cfg = write("iso3.json", CONFIG)
    out = os.path.join(TMP, "inproc")
    p = run(["run", cfg, "-q", "--no-isolate", "-o", out])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    doc, by = load(out)
    expect(doc["isolation"] == "none", f"isolation {doc['isolation']}")
    expect(all(c["status"] == "ok" for c in doc["cases"]), "not all ok")


@case("a malformed TBENCH_FAULT is a usage error: exit 2, nothing written")
def t_bad_fault():
    cfg = write("iso4.json", CONFIG)
    out = os.path.join(TMP, "badfault")
    for spec, needle in (("boom:check:*", "KIND is"),
                         ("segv:nowhere:*", "PHASE is"),
                         ("segv", "KIND:PHASE:GLOB")):
        p = run(["run", cfg, "-q", "-o", out], fault=spec)
        expect(p.returncode == 2, f"{spec}: exit {p.returncode}")
        lines = p.stderr.strip().splitlines()
        expect(len(lines) == 1 and lines[0].startswith("tbench: ") and
               needle in lines[0], f"{spec}: {p.stderr!r}")
        expect(not os.path.exists(out), f"{spec}: output written")
    # exec runs kernels too: the same one-line refusal
    p = run(["exec", "add", "--shape", "4", "-o", out], fault="boom:check:*")
    expect(p.returncode == 2 and "KIND is" in p.stderr and
           not os.path.exists(out), f"exec: {p.returncode} {p.stderr!r}")


@case("a bad TBENCH_ISA is a usage error too, for run and exec")
def t_bad_isa():
    cfg = write("iso5.json", CONFIG)
    out = os.path.join(TMP, "badisa")
    env = dict(os.environ, TBENCH_ISA="bogus")
    env.pop("TBENCH_FAULT", None)
    for args in (["run", cfg, "-q", "-o", out],
                 ["exec", "add", "--shape", "4", "-o", out]):
        p = subprocess.run([TBENCH, *args], capture_output=True, text=True,
                           env=env, timeout=60)
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 2 and len(lines) == 1 and
               "TBENCH_ISA" in lines[0] and "'bogus'" in lines[0],
               f"{args[0]}: {p.returncode} {p.stderr!r}")
        expect(not os.path.exists(out), f"{args[0]}: output written")
    env["TBENCH_ISA"] = "avx2"  # a good value still runs
    p = subprocess.run([TBENCH, "run", cfg, "-q", "-o", out], env=env,
                       capture_output=True, text=True, timeout=120)
    expect(p.returncode == 0, f"TBENCH_ISA=avx2: {p.stderr!r}")


FAST = """{"name": "fast", "warmup": {"min_time_ms": 1},
  "measure": {"max_time_s": 0.05}, "ops": [{"op": "add", "shapes": [[64]]}]}
"""
# Cases that sample for 30 s each unless stopped (min_samples keeps the
# CI rule from stopping them early: identical samples make a CI of 0).
SLOW = """{"name": "slow", "warmup": {"min_time_ms": 1},
  "measure": {"sample_time_ms": 0.2, "min_samples": 1000000,
              "max_samples": 1000000, "max_time_s": 30},
  "ops": [{"op": "relu", "shapes": [[64]]}, {"op": "exp", "shapes": [[64]]}]}
"""


def stop_during(sig, fault=None, group=False):
    """Run FAST then SLOW; once FAST's case is in the file, send sig
    while SLOW's first case runs (to tbench, or with group to its whole
    process group, worker included, as a closed terminal does); return
    (exit code, stderr, folder)."""
    fast = write("fast.json", FAST)
    slow = write("slow.json", SLOW)
    out = os.path.join(TMP, f"stop-{int(sig)}-{bool(fault)}-{group}")
    env = dict(os.environ)
    env.pop("TBENCH_FAULT", None)
    if fault:
        env["TBENCH_FAULT"] = fault
    proc = subprocess.Popen([TBENCH, "run", fast, slow, "-q", "-o", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=group)
    path = os.path.join(out, "results.json")
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with open(path, encoding="utf-8") as f:
                if json.load(f)["cases"]:
                    break
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    time.sleep(0.5)  # inside the next case
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err, out


def check_stopped(code, want, err, out):
    expect(code == want, f"exit {code}, want {want}: {err}")
    doc, _ = load(out)
    expect(doc["complete"] is False, "complete should be false")
    n = len(doc["cases"])
    expect(1 <= n < 3, f"{n} cases")
    for c in doc["cases"]:
        expect(c["status"] == "ok", f"{c['id']}: {c['status']}")
    no_temp_files(out)
    return doc


@case("SIGINT during a case: exit 130, finished cases kept, no temp files")
def t_sigint():
    code, err, out = stop_during(signal.SIGINT)
    doc = check_stopped(code, 130, err, out)
    # the case running when the signal came ended early, as interrupted
    ops = [c["op"] for c in doc["cases"]]
    expect(ops == ["add", "relu"], f"cases {ops}")
    last = doc["cases"][-1]["stats"]
    expect(last["stop_reason"] == "interrupted", last["stop_reason"])


@case("SIGTERM: exit 143; SIGHUP: exit 129")
def t_sigterm_sighup():
    code, err, out = stop_during(signal.SIGTERM)
    check_stopped(code, 143, err, out)
    code, err, out = stop_during(signal.SIGHUP)
    check_stopped(code, 129, err, out)


@case("SIGHUP behaves as SIGTERM, to tbench alone or to its process "
      "group with the worker: the running case ends as interrupted")
def t_sighup_like_sigterm():
    docs = {}
    for sig, want in ((signal.SIGTERM, 143), (signal.SIGHUP, 129)):
        for group in (False, True):
            code, err, out = stop_during(sig, group=group)
            doc = check_stopped(code, want, err, out)
            ops = [c["op"] for c in doc["cases"]]
            expect(ops == ["add", "relu"], f"{sig!r} group={group}: {ops}")
            last = doc["cases"][-1]["stats"]
            expect(last["stop_reason"] == "interrupted",
                   f"{sig!r} group={group}: {last['stop_reason']}")
            docs[(sig, group)] = [(c["id"], c["status"]) for c in
                                  doc["cases"]]
    expect(docs[(signal.SIGHUP, True)] == docs[(signal.SIGTERM, True)],
           f"{docs}")


@case("SIGTERM while a kernel hangs deaf to signals: the worker is killed, "
      "exit 143, finished cases kept")
def t_sigterm_hang():
    t0 = time.time()
    code, err, out = stop_during(signal.SIGTERM, fault="hang:warmup:relu/*")
    expect(time.time() - t0 < 60, "took too long")
    doc = check_stopped(code, 143, err, out)
    expect([c["op"] for c in doc["cases"]] == ["add"],
           f"cases {[c['op'] for c in doc['cases']]}")


def procs_with(needle):
    """Pids of live processes whose command line contains needle."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().decode(errors="replace")
            with open(f"/proc/{d}/stat", encoding="utf-8") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmd and state != "Z":
            pids.append(int(d))
    return pids


@case("SIGKILL mid-run: the file left claims no unfinished case as "
      "finished, and the worker dies with its parent")
def t_sigkill():
    cfg = write("kill.json", CONFIG.replace(
        '"max_time_s": 0.05', '"max_time_s": 1.5').replace(
        '"rounds": 2', '"rounds": 3').replace(
        '"min_samples": 5', '"min_samples": 1000000').replace(
        '"max_samples": 50', '"max_samples": 1000000'))
    out = os.path.join(TMP, "sigkill")
    env = dict(os.environ)
    env.pop("TBENCH_FAULT", None)
    proc = subprocess.Popen([TBENCH, "run", cfg, "-q", "-o", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    path = os.path.join(out, "results.json")
    deadline = time.time() + 60
    n = 0
    while time.time() < deadline and n < 6:  # round 0 of every case done
        try:
            with open(path, encoding="utf-8") as f:
                n = len(json.load(f)["cases"])
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    time.sleep(0.3)  # inside round 1
    proc.kill()
    proc.communicate(timeout=60)
    doc, _ = load(out)
    expect(doc["complete"] is False, "complete should be false")
    expect(len(doc["cases"]) == 6, f"{len(doc['cases'])} cases")
    unfinished = 0
    for c in doc["cases"]:
        s = c["stats"]
        if s["rounds"] < 3:
            unfinished += 1
            expect(s["stop_reason"] == "interrupted",
                   f"{c['id']}: rounds {s['rounds']}, stop_reason "
                   f"{s['stop_reason']}")
    expect(unfinished == 6, f"{unfinished} unfinished cases")
    deadline = time.time() + 10
    while procs_with(out) and time.time() < deadline:
        time.sleep(0.1)
    expect(not procs_with(out), f"worker left running: {procs_with(out)}")


if __name__ == "__main__":
    sys.exit(run_cases())
