#!/usr/bin/python3
"""No output of tbench follows a symlink planted in its folder, as TAP.

Usage: test_cli_symlink.py PATH/TO/tbench   (run from the repository root)

Issue 33, item 1 (reliability review D1): every atomic write went
through "<target>.tmp.<pid>", opened without O_EXCL or O_NOFOLLOW, so
anyone able to create files in an output folder could plant a symlink
under that name (for a span of pids) and have tbench overwrite a victim
file, or create one through a dangling link; `report` wrote its charts
with fopen straight into DIR/perf, following links planted at the
charts' names.  Each case here plants, in the child between fork and
exec (so the pid is tbench's own), symlinks to a victim file at the old
temporary names for pids around tbench's, dangling links among them,
links at a spread of names of the new form (TARGET.tmp.XXXXXX,
DIR.tmp-XXXXXX) and, for report, at the chart files' own names; then it
runs `run -o`, `run --save-baseline`, `compare -o`, `report -o` and
`merge -o` and checks that the victim keeps its bytes, nothing was
created through a dangling link, the links at temporary names are still
links, and every output is a regular file with the right content.  A
target that is itself a symlink is replaced by the new file, its victim
left alone.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="tbench-symlink-")
SHARED = os.path.join(TMP, "shared")   # the folder others can write to
VICTIM = os.path.join(TMP, "victim.txt")
PRECIOUS = "precious bytes of someone else\n"
ABC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
SEED = 33
CFG = os.path.join(TMP, "two.json")
STATE = {}


def path(*p):
    return os.path.join(TMP, *p)


class Plants:
    """Symlinks planted for one command: at TARGET.tmp.PID for pids near
    the command's (the pid's own to the victim, every third other one
    dangling into TMP/ghost-*), and at
    random names of the new forms; `exact` are links at the outputs' own
    names (replaced by the command, not followed).  The names follow from
    the pid and SEED, so the test computes them again after the run."""

    def __init__(self, targets, folders=(), exact=()):
        self.targets, self.folders, self.exact = targets, folders, exact

    def names(self, pid):
        """[(link target, link name)] and the dangling links' targets."""
        rng = random.Random(SEED)
        links, ghosts = [], []
        for t in self.targets:
            for p in range(max(1, pid - 30), pid + 31):
                to = VICTIM
                if p % 3 == 0 and p != pid:
                    to = path(f"ghost-{len(ghosts)}")
                    ghosts.append(to)
                links.append((to, f"{t}.tmp.{p}"))
            for _ in range(50):
                sfx = "".join(rng.choice(ABC) for _ in range(6))
                links.append((VICTIM, f"{t}.tmp.{sfx}"))
        for d in self.folders:
            for _ in range(20):
                sfx = "".join(rng.choice(ABC) for _ in range(6))
                links.append((VICTIM, f"{d}.tmp-{sfx}"))
        return links, ghosts

    def plant(self):  # in the child, before exec: getpid() is tbench's
        for to, at in self.names(os.getpid())[0]:
            os.symlink(to, at)
        for at in self.exact:
            os.symlink(VICTIM, at)

    def check(self, pid):
        links, ghosts = self.names(pid)
        with open(VICTIM) as f:
            got = f.read()
        expect(got == PRECIOUS, f"the victim was overwritten: {got[:80]!r}")
        made = [g for g in ghosts if os.path.lexists(g)]
        expect(not made, f"created through dangling links: {made[:3]}")
        gone = [at for _, at in links if not os.path.islink(at)]
        expect(not gone, f"planted links replaced or removed: {gone[:3]}")
        kept = [at for at in self.exact if os.path.islink(at)]
        expect(not kept, f"outputs still symlinks: {kept[:3]}")


class Done:
    """What tb() returns: exit status, output, and tbench's pid."""

    def __init__(self, proc, out, err):
        self.returncode, self.stdout, self.stderr = proc.returncode, out, err
        self.pid = proc.pid


def tb(args, plants=None, cwd=None):
    """Run tbench with plants planted in its process before exec; after
    the run, plants.check(pid) has been called."""
    # pylint: disable=subprocess-popen-preexec-fn
    proc = subprocess.Popen([TBENCH, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            cwd=cwd or TMP,
                            preexec_fn=plants.plant if plants else None)
    out, err = proc.communicate(timeout=300)
    done = Done(proc, out, err)
    if plants:
        plants.check(proc.pid)
    expect(done.returncode == 0,
           f"tbench {' '.join(args[:2])}: exit {done.returncode}: {err}")
    return done


def regular(p):
    expect(os.path.isfile(p) and not os.path.islink(p),
           f"{p}: not a regular file")


def load(p):
    regular(p)
    with open(p) as f:
        return json.load(f)


def fresh(name):
    """An empty SHARED/name folder (a case's own corner of SHARED)."""
    d = os.path.join(SHARED, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def reset_victim():
    with open(VICTIM, "w") as f:
        f.write(PRECIOUS)


@case("run -o: links at results.json/.csv.tmp.PID and at random temp "
      "names are not followed; a symlinked results.csv is replaced")
def t_run():
    reset_victim()
    out = fresh("run")
    json_, csv = os.path.join(out, "results.json"), \
        os.path.join(out, "results.csv")
    tb(["run", CFG, "-q", "-o", out], Plants([json_, csv], exact=[csv]))
    doc = load(json_)
    expect(doc["schema"] == "tbench.results/1" and doc["complete"] is True,
           f"{doc.get('schema')} complete={doc.get('complete')}")
    ok = [c["id"] for c in doc["cases"] if c["status"] == "ok"]
    expect(len(ok) == 2, f"cases ok: {ok}")
    regular(csv)
    with open(csv) as f:
        rows = f.read().splitlines()
    expect(len(rows) == 4 and rows[0].startswith("# tbench ") and
           all(i in "\n".join(rows) for i in ok),
           f"results.csv: {rows[:3]}")


@case("run --save-baseline: the baseline file is written the same way")
def t_baseline():
    reset_victim()
    cwd = fresh("base")
    bdir = os.path.join(cwd, "results", "baselines")
    os.makedirs(bdir)
    target = os.path.join(bdir, "b1.json")
    tb(["run", CFG, "-q", "-o", "out", "--save-baseline", "b1"],
       Plants([target]), cwd=cwd)
    doc = load(target)
    expect(len(doc["cases"]) == 2, f"{len(doc['cases'])} cases")


@case("compare -o: a link at OUT.tmp.PID is not followed")
def t_compare():
    reset_victim()
    d = fresh("cmp")
    out = os.path.join(d, "cmp.json")
    tb(["compare", STATE["run"], STATE["run"], "--format", "json", "-o",
        out], Plants([out]))
    doc = load(out)
    expect(isinstance(doc, dict) and doc, f"compare JSON: {str(doc)[:80]}")
    expect(json.dumps(doc).count("add/") >= 2, "compare JSON without cases")


def chart_names():
    """The chart files a plain report of the run writes (learned from a
    report into a folder nobody touched)."""
    d = fresh("rep-clean")
    tb(["report", STATE["run"], "-o", os.path.join(d, "r.md")])
    return sorted(os.listdir(os.path.join(d, "perf")))


@case("report -o: no link followed at r.md.tmp.PID, perf.tmp-XXXXXX or "
      "at the chart files' own names (perf/*.gp, .dat, .png, gnuplot.log)")
def t_report():
    names = chart_names()
    expect(any(n.endswith(".gp") for n in names), f"charts: {names}")
    reset_victim()
    d = fresh("rep")
    md, perf = os.path.join(d, "r.md"), os.path.join(d, "perf")
    os.makedirs(perf)
    exact = [os.path.join(perf, n) for n in names]
    tb(["report", STATE["run"], "-o", md],
       Plants([md], folders=[perf], exact=exact))
    regular(md)
    with open(md) as f:
        text = f.read()
    expect("add" in text and "perf/" in text, f"r.md: {text[:200]!r}")
    for n in names:
        regular(os.path.join(perf, n))
        if n.endswith((".gp", ".dat", ".png")):
            expect(os.path.getsize(os.path.join(perf, n)) > 0, f"{n} empty")
    left = [n for n in os.listdir(d) if ".tmp-" in n and
            not os.path.islink(os.path.join(d, n))]
    expect(not left, f"temporary folders left: {left}")


@case("report: a chart folder that is a symlink to a folder is followed "
      "(as before): the charts go into the folder it points to")
def t_report_linked_folder():
    d = fresh("rep-linked")
    for real, keep in (("real", True), ("empty", False)):
        os.makedirs(os.path.join(d, real))
        if keep:
            with open(os.path.join(d, real, "mine.txt"), "w") as f:
                f.write("keep")
        perf = os.path.join(d, "perf")
        if os.path.lexists(perf):
            os.unlink(perf)
        os.symlink(real, perf)
        tb(["report", STATE["run"], "-o", os.path.join(d, "r.md")])
        expect(os.path.islink(perf), "the chart folder's link was replaced")
        names = os.listdir(os.path.join(d, real))
        expect(any(n.endswith(".gp") for n in names) and
               (not keep or "mine.txt" in names), f"{real}: {names}")


@case("report and plot: the chart folder is private (0700) while gnuplot "
      "writes in it, then as mkdir makes it; files as a plain create")
def t_private():
    gp = shutil.which("gnuplot")
    if not gp:
        return "SKIP gnuplot not found"
    log = path("modes.log")
    wrap = path("gnuplot-wrap.sh")
    with open(wrap, "w") as f:
        f.write(f"#!/bin/sh\nstat -c %a . >> '{log}'\nexec '{gp}' \"$@\"\n")
    os.chmod(wrap, 0o755)
    um = os.umask(0o022)
    os.umask(um)
    env = dict(os.environ, TBENCH_GNUPLOT=wrap)
    d = fresh("private")
    for args, out in ((["report", STATE["run"], "-o", os.path.join(d, "r.md")],
                       os.path.join(d, "perf")),
                      (["plot", STATE["run"], "-o", os.path.join(d, "pl")],
                       os.path.join(d, "pl"))):
        if os.path.exists(log):
            os.unlink(log)
        p = subprocess.run([TBENCH, *args], capture_output=True, text=True,
                           timeout=300, env=env)
        expect(p.returncode == 0, f"{args[0]}: exit {p.returncode}: "
               f"{p.stderr}")
        with open(log) as f:
            modes = set(f.read().split())
        expect(modes == {"700"}, f"{args[0]}: gnuplot ran in a folder of "
               f"mode {modes}")
        mode = os.stat(out).st_mode & 0o777
        expect(mode == 0o777 & ~um, f"{out}: mode {oct(mode)}")
        for n in os.listdir(out):
            m = os.stat(os.path.join(out, n)).st_mode & 0o777
            expect(m == 0o644 & ~um, f"{n}: mode {oct(m)}")


@case("merge -o: a link at OUT.tmp.PID is not followed")
def t_merge():
    reset_victim()
    shards = []
    for i in (1, 2):
        out = path(f"s{i}")
        tb(["run", CFG, "-q", "--shard", f"{i}/2", "-o", out])
        shards.append(os.path.join(out, "results.json"))
    d = fresh("merge")
    out = os.path.join(d, "merged.json")
    tb(["merge", *shards, "-o", out], Plants([out]))
    doc = load(out)
    expect(len(doc["cases"]) == 2 and doc["complete"] is True,
           f"{len(doc['cases'])} cases, complete={doc.get('complete')}")


@case("no temporary file is left next to any output")
def t_leftovers():
    left = []
    for root, dirs, files in os.walk(SHARED):
        for n in dirs + files:
            q = os.path.join(root, n)
            if (".tmp." in n or ".tmp-" in n) and not os.path.islink(q):
                left.append(q)
    expect(not left, f"left: {left[:5]}")


def setup():
    os.makedirs(SHARED)
    with open(CFG, "w") as f:
        json.dump({"name": "two",
                   "warmup": {"min_time_ms": 1, "min_iters": 1},
                   "measure": {"sample_time_ms": 0.1, "min_samples": 3,
                               "max_samples": 10, "max_time_s": 0.02},
                   "ops": [{"op": "add", "shapes": [[8, 8], [16, 16]]}]},
                  f)
    reset_victim()
    print(f"# seed {SEED}, folder {TMP}")
    # the result file compare and report read, from a run nobody touched
    tb(["run", CFG, "-q", "-o", path("clean")])
    STATE["run"] = path("clean", "results.json")


if __name__ == "__main__":
    try:
        setup()
    except (AssertionError, OSError, subprocess.SubprocessError) as e:
        print(f"Bail out! setup: {e}")
        sys.exit(1)
    rc = run_cases()
    if rc == 0:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)
