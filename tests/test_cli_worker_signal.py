#!/usr/bin/python3
"""Signals to a worker alone, or to tbench, printed as TAP.

Usage: test_cli_worker_signal.py PATH/TO/tbench   (run from the repository
root)

A worker process killed on its own (SIGTERM from an out-of-memory guard
or an admin, SIGKILL, a SIGINT sent to its pid) makes the case it was
running `crashed`, naming the signal and the phase; a fresh worker runs
every later case in full, `complete` is true and the exit status 1
(src/harness/worker.h).  One killed between cases costs no case: a fresh
worker takes the next, exit 0, and tbench warns.  A signal to tbench, or
to its whole process group as a terminal's Ctrl-C sends it, still stops
the run: exit 128 + N, `complete` false, no case `crashed`.  `tbench
ab`'s exec'd workers: one killed alone makes its case an `error` on that
side, naming the signal; a Ctrl-C to ab's group stops it (130, nothing
judged) at once.  Every file validates against
docs/results.schema.json.  Needs Debian's python3-jsonschema: run with
/usr/bin/python3.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from tap import case, expect, run as run_cases

import jsonschema

TBENCH = os.path.abspath(sys.argv[1])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-wsig-")

# Five cases of a fixed number of samples: min = max, so a case that ran
# in full has exactly 60 samples over its 2 rounds (about 0.6 s).
N_SAMPLES = 60
CONFIG = """{
  "name": "wsig",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 10, "min_samples": %d, "max_samples": %d,
              "ci_target": 0.0001, "max_time_s": 120, "rounds": 2,
              "timeout_s": 120},
  "ops": [
    {"op": "add", "shapes": [[4096]]}, {"op": "relu", "shapes": [[4096]]},
    {"op": "exp", "shapes": [[4096]]}, {"op": "neg", "shapes": [[4096]]},
    {"op": "abs", "shapes": [[4096]]}
  ]
}
""" % (N_SAMPLES, N_SAMPLES)
N_CASES = 5

AB_CONFIG = """{
  "name": "wsigab",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 10, "min_samples": 30, "max_samples": 30,
              "ci_target": 0.0001, "max_time_s": 120, "timeout_s": 120},
  "ops": [{"op": "add", "shapes": [[4096]]},
          {"op": "relu", "shapes": [[4096]]}]
}
"""


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def children(pid):
    """The live child processes of pid."""
    kids = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children", encoding="utf-8") as f:
                kids += [int(k) for k in f.read().split()]
    except OSError:
        pass
    return [k for k in kids if state(k) not in ("Z", None)]


def state(pid):
    """The state letter of pid (R running, S sleeping...), None if gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def cpu_s(pid):
    """User + system CPU seconds pid has run, 0 if gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            v = f.read().rsplit(")", 1)[1].split()
        return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def busy_child(pid, deadline, min_cpu_s=0.0):
    """The child of pid that is running (measuring), once only one is and
    it has run min_cpu_s of CPU time (past loading the config: under
    ASan on a loaded machine a fresh worker was still loading it 0.3 s
    after the block began, and SIGTERM there ends ab, exit 3)."""
    while time.time() < deadline:
        kids = children(pid)
        running = [k for k in kids if state(k) == "R"]
        if len(running) == 1 and cpu_s(running[0]) >= min_cpu_s:
            return running[0]
        time.sleep(0.01)
    return None


def start_run(name, group=False, quiet=True):
    """tbench run CONFIG -o DIR, once the first case is in its file and
    the worker is measuring the next: (process, folder, worker pid)."""
    cfg = write(f"{name}.json", CONFIG)
    out = os.path.join(TMP, name)
    env = dict(os.environ)
    env.pop("TBENCH_FAULT", None)
    proc = subprocess.Popen([TBENCH, "run", cfg, "-o", out] +
                            (["-q"] if quiet else []),
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
        time.sleep(0.02)
    time.sleep(0.1)  # inside the second case
    return proc, out, busy_child(proc.pid, time.time() + 30)


def load(out):
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        doc = json.load(f)
    jsonschema.validate(doc, SCHEMA)
    return doc


def full(c):
    """Did case record c run every round and every sample?"""
    s = c.get("stats") or {}
    return (c["status"] == "ok" and s.get("n") == N_SAMPLES and
            s.get("rounds") == 2 and s.get("stop_reason") != "interrupted")


def worker_killed(sig, abbr):
    proc, out, worker = start_run(f"alone-{abbr}")
    expect(worker is not None, "no worker measuring")
    os.kill(worker, sig)
    _, err = proc.communicate(timeout=120)
    expect(proc.returncode == 1, f"exit {proc.returncode}, want 1: {err}")
    doc = load(out)
    expect(doc["complete"] is True, "complete should be true")
    cases = doc["cases"]
    expect(len(cases) == N_CASES, f"{len(cases)} cases, want {N_CASES}")
    hit = [c for c in cases if c["status"] == "crashed"]
    expect(len(hit) == 1, f"crashed: {[c['id'] for c in hit]}; statuses "
           f"{[c['status'] for c in cases]}")
    msg = hit[0]["message"]
    expect(f"SIG{abbr}" in msg and " during " in msg, msg)
    expect(hit[0]["stats"] is None, f"a crashed case with stats: {hit[0]}")
    expect(doc["summary"]["crashed"] == 1, doc["summary"])
    for c in cases:
        if c is not hit[0]:
            expect(full(c), f"{c['id']}: {c['status']} {c.get('stats')}")
    expect(cases.index(hit[0]) > 0, "the first case was hit")


@case("SIGTERM to the worker alone: its case crashed naming SIGTERM, every "
      "other case ran in full, complete, exit 1")
def t_worker_sigterm():
    worker_killed(signal.SIGTERM, "TERM")


@case("SIGKILL to the worker alone: the same")
def t_worker_sigkill():
    worker_killed(signal.SIGKILL, "KILL")


@case("SIGINT to the worker alone (not to tbench): the same")
def t_worker_sigint():
    worker_killed(signal.SIGINT, "INT")


@case("SIGTERM to the worker while it waits between cases: a fresh one "
      "takes the next case, every case runs in full, exit 0, a warning")
def t_worker_idle():
    proc, out, worker = start_run("idle-term", quiet=False)
    expect(worker is not None, "no worker measuring")
    os.kill(proc.pid, signal.SIGSTOP)  # tbench sends no new case
    try:
        idle, deadline = 0, time.time() + 60
        while idle < 5 and time.time() < deadline:  # its round is done
            idle = idle + 1 if state(worker) == "S" else 0
            time.sleep(0.05)
        expect(idle == 5, f"worker state {state(worker)}")
        os.kill(worker, signal.SIGTERM)
        while state(worker) not in ("Z", None) and time.time() < deadline:
            time.sleep(0.01)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    _, err = proc.communicate(timeout=120)
    expect(proc.returncode == 0, f"exit {proc.returncode}, want 0: {err}")
    expect("killed by SIGTERM" in err and "between cases" in err, err)
    doc = load(out)
    expect(doc["complete"] is True, "complete should be true")
    expect(len(doc["cases"]) == N_CASES, f"{len(doc['cases'])} cases")
    for c in doc["cases"]:
        expect(full(c), f"{c['id']}: {c['status']} {c.get('stats')}")


@case("SIGINT to tbench's process group (Ctrl-C): exit 130, complete "
      "false, the running case interrupted, none crashed")
def t_group_sigint():
    proc, out, _ = start_run("group-int", group=True)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    expect(proc.returncode == 130, f"exit {proc.returncode}: {err}")
    doc = load(out)
    expect(doc["complete"] is False, "complete should be false")
    cases = doc["cases"]
    expect(1 <= len(cases) < N_CASES, f"{len(cases)} cases")
    for c in cases:
        expect(c["status"] == "ok", f"{c['id']}: {c['status']}")
    expect(cases[-1]["stats"]["stop_reason"] == "interrupted",
           cases[-1]["stats"])
    expect(not children(proc.pid), "a worker outlived tbench")


@case("SIGTERM to tbench and to its worker, each by pid (pkill tbench): "
      "a stop, exit 143, complete false, none crashed")
def t_both_sigterm():
    proc, out, worker = start_run("both-term")
    expect(worker is not None, "no worker measuring")
    os.kill(proc.pid, signal.SIGTERM)  # pkill's order: the lower pid first
    os.kill(worker, signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    expect(proc.returncode == 143, f"exit {proc.returncode}: {err}")
    doc = load(out)
    expect(doc["complete"] is False, "complete should be false")
    for c in doc["cases"]:
        expect(c["status"] == "ok", f"{c['id']}: {c['status']}")


def start_ab(name, group=False, samples=30):
    """tbench ab TBENCH TBENCH on AB_CONFIG (samples per case), 6 blocks,
    -o DIR, once the second block's workers have loaded the config:
    (process, folder)."""
    cfg = write(f"{name}.json", AB_CONFIG.replace(
        '"min_samples": 30, "max_samples": 30',
        f'"min_samples": {samples}, "max_samples": {samples}'))
    out = os.path.join(TMP, name)
    proc = subprocess.Popen([TBENCH, "ab", TBENCH, TBENCH, cfg, "--blocks",
                             "6", "-q", "--threshold", "50", "-o", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=group)
    # block 1 is written when block 2 starts; its fresh workers then load
    # the config, and one of them measures a case
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(
            os.path.join(out, "new", "block-01", "results.json")):
        time.sleep(0.02)
    time.sleep(0.3)
    return proc, out


@case("ab: SIGTERM to one build's exec'd worker alone: that case is an "
      "error naming SIGTERM, the other is judged, exit 1")
def t_ab_worker_sigterm():
    # A case is 60 samples of 10 ms of wall time, so a block is 1.2 s.
    # The worker is picked once it has run 0.1 s of CPU (past loading
    # the config); on a loaded machine (load 8 on 2 CPUs) it gets a
    # quarter of a CPU, so that is 0.4 s into its block: with 30 samples
    # the SIGTERM could land after its last case (no error, a false
    # failure), with 60 there is 0.8 s of its cases left.
    proc, out = start_ab("ab-term", samples=60)
    worker = busy_child(proc.pid, time.time() + 30, 0.1)
    expect(worker is not None, "no worker measuring")
    os.kill(worker, signal.SIGTERM)
    sout, err = proc.communicate(timeout=300)
    expect(proc.returncode == 1, f"exit {proc.returncode}: {err}{sout}")
    with open(os.path.join(out, "ab.json"), encoding="utf-8") as f:
        doc = json.load(f)
    bad = [c for c in doc["cases"] if c["verdict"] == "error"]
    expect(len(bad) == 1, f"verdicts {[c['verdict'] for c in doc['cases']]}")
    expect("SIGTERM" in (bad[0]["message"] or ""), bad[0]["message"])
    good = [c for c in doc["cases"] if c is not bad[0]][0]
    expect(len(good["old_block_ns"]) == 6 and len(good["new_block_ns"]) == 6,
           f"{good}")


@case("ab: a worker that dies after its block's last case (TBENCH_FAULT "
      "exit:sent) took its block's results file with it: a warning per "
      "file, the blocks go on, every block judged, missing_blocks lists "
      "them, exit 0")
def t_ab_worker_dies_after_block():
    cfg = write("ab-one.json", AB_CONFIG.replace(
        """,
          {"op": "relu", "shapes": [[4096]]}]""", "]"))
    out = os.path.join(TMP, "ab-sent")
    env = dict(os.environ, TBENCH_FAULT="exit:sent:add/*")
    proc = subprocess.run([TBENCH, "ab", TBENCH, TBENCH, cfg, "--blocks",
                           "6", "-q", "--threshold", "50", "-o", out],
                          capture_output=True, text=True, env=env,
                          timeout=300)
    expect(proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}")
    warn = [l for l in proc.stderr.splitlines()
            if "stopped before writing" in l]
    expect(len(warn) == 12 and all("exited with status 3" in l or
                                   "gone" in l for l in warn), proc.stderr)
    expect("12 of 12 missing" in proc.stdout, proc.stdout)
    with open(os.path.join(out, "ab.json"), encoding="utf-8") as f:
        doc = json.load(f)
    for side in ("old", "new"):
        got = doc["builds"][side]["missing_blocks"]
        expect(got == [1, 2, 3, 4, 5, 6], f"{side}: {got}")
        expect(not os.path.exists(os.path.join(out, side)), f"{side}/")
    (c,) = doc["cases"]
    expect(c["verdict"] != "error" and c["blocks"] == 6, f"{c}")
    expect(all(v > 0 for v in c["old_block_ns"] + c["new_block_ns"]), f"{c}")


@case("ab: SIGINT to its process group (Ctrl-C): exit 130 at once, nothing "
      "judged, no worker left")
def t_ab_group_sigint():
    proc, out = start_ab("ab-int", group=True)
    workers = children(proc.pid)
    t0 = time.time()
    os.killpg(proc.pid, signal.SIGINT)
    sout, err = proc.communicate(timeout=120)
    expect(proc.returncode == 130, f"exit {proc.returncode}: {err}{sout}")
    expect(time.time() - t0 < 10, f"took {time.time() - t0:.1f} s")
    expect("nothing judged" in err, err)
    expect(not os.path.exists(os.path.join(out, "ab.json")), "ab.json")
    deadline = time.time() + 10
    while any(state(w) not in ("Z", None) for w in workers) and \
            time.time() < deadline:
        time.sleep(0.05)
    expect(all(state(w) in ("Z", None) for w in workers), "a worker lives")


def cleanup(failed):
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)


sys.exit(run_cases(cleanup))
