#!/usr/bin/python3
"""scripts/slurm/ on a real single-node Slurm cluster, printed as TAP.

Usage: test_slurm.py PATH/TO/tbench   (run from the repository root, as
root: CI's .ci/run runs as root)

The test starts its own cluster on this machine, in a temporary folder:
munged (Debian's munge, as the munge user, with a fresh key), slurmctld
and slurmd (Debian's slurmctld/slurmd 22.05, in the foreground as
children of this script, on free ports), waits for the node to be idle,
then:

1. runs configs/quick.json as a 4-task job array plus the dependent merge
   job (scripts/slurm/submit.sh --wait): the merged file holds every case
   of the plan, each `ok`, from 4 shards; every task left its log and exit
   status;
2. runs a small config where task 2 of 3 dies (SIGKILL, as the OOM killer
   would): the merge job refuses, naming shard 2/3 and its log, and writes
   no merged file.

At the end the daemons are stopped by their PIDs.  The whole test is
skipped, with the reason, only when the daemons cannot start: not root,
the Slurm or munge programs missing (scripts/setup.sh --tests installs
them), or a daemon that exits or a node that is not idle within 30 s (the
reason quotes its log).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(".")
SUBMIT = os.path.join(ROOT, "scripts", "slurm", "submit.sh")
TMP = tempfile.mkdtemp(prefix="tbench-slurm-")
os.chmod(TMP, 0o755)  # munged wants every folder above its socket open
PROCS = {}            # name -> Popen of a daemon we started
ENV = dict(os.environ)
SKIP = []             # the reason the cluster could not start


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tail(path, n=3):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return " | ".join(l.strip() for l in f.readlines()[-n:])
    except OSError:
        return "(no log)"


def start(name, argv, log):
    PROCS[name] = subprocess.Popen(argv, env=ENV, stdout=open(log, "w"),
                                   stderr=subprocess.STDOUT)


def start_cluster():
    """Start munged, slurmctld, slurmd; '' or the reason they did not."""
    if os.geteuid() != 0:
        return "not root: slurmd and munged (as the munge user) need root"
    for prog in ("munged", "slurmctld", "slurmd", "sbatch", "sinfo",
                 "setpriv"):
        if not shutil.which(prog):
            return (f"{prog} not installed (scripts/setup.sh --tests "
                    "installs it)")
    d = TMP
    log = os.path.join(d, "log")
    os.makedirs(log)
    # munge: the key in a private folder, the socket in an open one
    mk, ms = os.path.join(d, "munge"), os.path.join(d, "munge-socket")
    for sub, mode in ((mk, 0o700), (ms, 0o755)):
        os.makedirs(sub)
        shutil.chown(sub, "munge", "munge")
        os.chmod(sub, mode)
    key = os.path.join(mk, "munge.key")
    with open(key, "wb") as f:
        f.write(os.urandom(128))
    shutil.chown(key, "munge", "munge")
    os.chmod(key, 0o400)
    sock = os.path.join(ms, "munge.socket")
    start("munged", ["setpriv", "--reuid=munge", "--regid=munge",
                     "--init-groups", "munged", "-F", "--key-file", key,
                     "--socket", sock,
                     "--pid-file", os.path.join(mk, "munged.pid"),
                     "--log-file", os.path.join(mk, "munged.log"),
                     "--seed-file", os.path.join(mk, "seed")],
          os.path.join(log, "munged.out"))
    deadline = time.time() + 30
    while not os.path.exists(sock):
        if PROCS["munged"].poll() is not None or time.time() > deadline:
            return "munged did not start: " + tail(
                os.path.join(log, "munged.out"))
        time.sleep(0.05)

    node = subprocess.run(["slurmd", "-C"], capture_output=True,
                          text=True).stdout.splitlines()
    node = [l for l in node if l.startswith("NodeName=")]
    if not node:
        return "slurmd -C printed no NodeName line"
    host = node[0].split()[0].split("=", 1)[1]
    for sub in ("state", "spool"):
        os.makedirs(os.path.join(d, sub))
    conf = os.path.join(d, "slurm.conf")
    with open(conf, "w", encoding="utf-8") as f:
        f.write(f"""# written by tests/test_slurm.py
ClusterName=tbenchtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={log}/slurmctld.log
SlurmdLogFile={log}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
{node[0]} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
    ENV["SLURM_CONF"] = conf
    start("slurmctld", ["slurmctld", "-D", "-i", "-f", conf],
          os.path.join(log, "slurmctld.out"))
    start("slurmd", ["slurmd", "-D", "-f", conf],
          os.path.join(log, "slurmd.out"))
    t0 = time.time()
    state = ""
    while time.time() - t0 < 30:
        for name in ("slurmctld", "slurmd"):
            if PROCS[name].poll() is not None:
                return f"{name} exited ({PROCS[name].returncode}): " + \
                    tail(os.path.join(log, name + ".log"))
        r = subprocess.run(["sinfo", "-h", "-o", "%T"], env=ENV,
                           capture_output=True, text=True)
        state = r.stdout.strip()
        if state == "idle":
            print(f"# cluster idle {time.time() - t0:.1f} s after start")
            return ""
        time.sleep(0.2)
    return f"node not idle after 30 s (state '{state}'): " + \
        tail(os.path.join(log, "slurmd.log"))


def stop_cluster():
    """Stop the daemons by PID, newest first; each must exit."""
    for name in ("slurmd", "slurmctld", "munged"):
        p = PROCS.get(name)
        if p is None or p.poll() is not None:
            continue
        os.kill(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()


def submit(*args, timeout=540):
    return subprocess.run(["sh", SUBMIT, "-t", TBENCH, "--wait", *args],
                          env=ENV, capture_output=True, text=True,
                          timeout=timeout, cwd=TMP)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


@case("single-node Slurm cluster starts (munged, slurmctld, slurmd)")
def _():
    t0 = time.time()
    why = start_cluster()
    if why:
        SKIP.append(why)
        return f"SKIP the Slurm daemons cannot start here: {why}"
    print(f"# started in {time.time() - t0:.1f} s")


@case("4-task array of configs/quick.json + merge job: every case ok")
def _():
    if SKIP:
        return f"SKIP {SKIP[0]}"
    out = os.path.join(TMP, "quick")
    t0 = time.time()
    p = submit("-o", out, os.path.join(ROOT, "configs", "quick.json"), "4")
    print(f"# submit --wait: {time.time() - t0:.1f} s")
    merge_log = os.path.join(out, "logs", "merge.log")
    expect(p.returncode == 0,
           f"exit {p.returncode}: {p.stderr} {tail(merge_log, 12)}")
    doc = json.loads(read(os.path.join(out, "results.json")))
    shards = doc["merge"]["shards"]
    expect([s["index"] for s in shards] == [1, 2, 3, 4], f"{shards}")
    expect(doc["complete"] and len(doc["cases"]) ==
           doc["merge"]["plan_cases"], "cases missing")
    expect(len(doc["cases"]) >= 50, f"only {len(doc['cases'])} cases")
    bad = [(c["id"], c["status"], c["message"]) for c in doc["cases"]
           if c["status"] != "ok"]
    expect(not bad, f"not ok: {bad[:5]}")
    expect({c["shard"]["index"] for c in doc["cases"]} == {1, 2, 3, 4},
           "a shard ran no case")
    for i in range(1, 5):
        log = read(os.path.join(out, "logs", f"shard-{i}.log"))
        expect(f"tbench shard {i}/4" in log and "exit 0" in log, log[-300:])
        rc = read(os.path.join(out, "status", f"shard-{i}.rc")).split()
        expect(rc[0] == "0", f"shard {i} status {rc}")
        n = sum(c["shard"]["index"] == i for c in doc["cases"])
        print(f"# shard {i}/4: {n} cases, {rc[2]} s on {rc[1]}")
    expect("merged 4 shards" in read(merge_log), tail(merge_log))


FAKE = """#!/bin/sh
# tbench, except that shard 2 is killed (SIGKILL) as it starts
for a in "$@"; do
    case $a in 2/*) kill -9 $$ ;; esac
done
exec {tbench} "$@"
"""

SMALL = """{
  "name": "small",
  "warmup": {"min_time_ms": 1, "min_iters": 1},
  "measure": {"sample_time_ms": 0.2, "min_samples": 3, "max_samples": 20,
              "ci_target": 0.1, "max_time_s": 0.02},
  "dtypes": ["f32"],
  "backends": ["cpu"],
  "ops": [{"op": "add", "shapes": [[7, 13], [64, 64], [100]]},
          {"op": "relu", "shapes": [[1000]]}]
}
"""


@case("a task that dies makes the merge job refuse, naming the shard")
def _():
    if SKIP:
        return f"SKIP {SKIP[0]}"
    fake = os.path.join(TMP, "fake-tbench")
    with open(fake, "w", encoding="utf-8") as f:
        f.write(FAKE.format(tbench=TBENCH))
    os.chmod(fake, 0o755)
    cfg = os.path.join(TMP, "small.json")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(SMALL)
    out = os.path.join(TMP, "failed")
    p = subprocess.run(["sh", SUBMIT, "-t", fake, "--wait", "-o", out, cfg,
                        "3"], env=ENV, capture_output=True, text=True,
                       timeout=300, cwd=TMP)
    merge_log = read(os.path.join(out, "logs", "merge.log"))
    expect(p.returncode == 2, f"exit {p.returncode}, want 2: {merge_log}")
    expect("shard 2/3 failed" in merge_log and "exit status 137" in
           merge_log and "logs/shard-2.log" in merge_log, merge_log)
    expect("refused" in merge_log, merge_log)
    expect("shard 1/3: ok" in merge_log and "shard 3/3: ok" in merge_log,
           merge_log)
    expect(not os.path.exists(os.path.join(out, "results.json")),
           "a merged file was written")


@case("the daemons stop when signalled by PID")
def _():
    if SKIP:
        return f"SKIP {SKIP[0]}"
    stop_cluster()
    for name, p in PROCS.items():
        expect(p.poll() is not None, f"{name} (pid {p.pid}) still running")


def cleanup(failed):
    stop_cluster()
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print(f"# kept {TMP} (logs in {TMP}/log)")


if __name__ == "__main__":
    t0 = time.time()
    try:
        rc = run_cases(cleanup)
    finally:
        stop_cluster()
    print(f"# wall time {time.time() - t0:.1f} s")
    sys.exit(rc)
