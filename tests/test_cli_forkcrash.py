#!/usr/bin/python3
"""A kernel that forks a child and then crashes, printed as TAP.

Usage: test_cli_forkcrash.py PATH/TO/tbench FIXTURE_DIR
       (run from the repository root)

The plugin fixture_forkcrash.so (tests/plugins/fixture.c) forks a child
that sleeps, as a library's helper process would, and then dies by
SIGSEGV.  The child holds the worker's socket open, so the worker's end
of file never comes (reliability review D8): tbench must still see the
worker die at once (the case `crashed` with SIGSEGV, not `timeout` after
measure.timeout_s) and kill the worker's process group, so that no
child outlives the run.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
FIX = os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="tbench-forkcrash-")
TIMEOUT_S = 12

CONFIG = {
    "name": "forkcrash",
    "warmup": {"min_time_ms": 1, "min_iters": 1},
    "measure": {"sample_time_ms": 0.2, "min_samples": 3, "max_samples": 20,
                "ci_target": 0.5, "max_time_s": 0.05,
                "timeout_s": TIMEOUT_S},
    "dtypes": ["f32"],
    "backends": ["forky", "cpu"],
    "ops": [{"op": "add", "shapes": [[64]]}],
}


def processes_naming(text):
    """Pids of the processes whose command line holds text."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    pids.append(int(d))
        except OSError:
            pass
    return pids


def kill_left(pids):
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


@case("a kernel that forks and crashes: crashed with SIGSEGV at once, "
      "the other case ok, no process of the worker left")
def t_fork_crash():
    cfg = os.path.join(TMP, "forkcrash.json")
    with open(cfg, "w", encoding="utf-8") as f:
        json.dump(CONFIG, f)
    out = os.path.join(TMP, "out")
    env = dict(os.environ)
    env.pop("TBENCH_PLUGIN_PATH", None)
    env.pop("TBENCH_FAULT", None)
    t0 = time.monotonic()
    p = subprocess.run([TBENCH, "run", cfg, "-q", "-o", out, "--plugin",
                        os.path.join(FIX, "fixture_forkcrash.so") + ":forky"],
                       capture_output=True, text=True, timeout=120, env=env)
    wall = time.monotonic() - t0
    time.sleep(0.2)  # a SIGKILLed process leaves /proc at once; be fair
    left = processes_naming(cfg)
    kill_left(left)
    expect(p.returncode == 1, f"exit {p.returncode}: {p.stderr}")
    with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
        doc = json.load(f)
    by = {c["backend"]: c for c in doc["cases"]}
    c = by["forky"]
    expect(c["status"] == "crashed" and "SIGSEGV" in c["message"],
           f"{c['id']}: {c['status']}: {c['message']}")
    expect(by["cpu"]["status"] == "ok", f"cpu: {by['cpu']['status']}")
    expect(wall < TIMEOUT_S / 2,
           f"the run took {wall:.1f} s: the crash waited for the timeout")
    expect(not left, f"processes left running after tbench: {left}")


sys.exit(run_cases())
