#!/usr/bin/python3
"""`run`'s memory does not grow with its cases by a result document, as TAP.

Usage: test_cli_scale.py PATH/TO/tbench   (run from the repository root)

Issue 33, "Scale": `run` held the whole result document (a cJSON record
of every finished case, and each write's whole printed text), about
17 KB a tiny case (187 MB at 10,000 cases).  A settled case's record now
goes to a spool (src/harness/results.h) and is freed; what is left per
case is the plan's tb_case (1.8 KB) and the config's shape entry.  Here
two runs of tiny relu cases, 200 and 2,500 (each of one warm-up call and
3 samples: a few seconds), give the peak RSS growth per case (getrusage
of the waited child: tbench and its worker), which must stay under
6 KB (about 16 KB before the spool).  Each output folder must hold only
results.json and results.csv (the spool's folder is gone), the file must
load (`tbench show`), and `-o -` must write the same document to stdout.
The plan and the config, built before the first case runs, are what
grows with a run's cases now: `run --list-cases` of 200 and 20,000 tiny
cases (well under a second each) must grow by less than 1.2 KB a case
(the plan's tb_case and its id and shapes, and the config's shape
entry: 0.8 KB; 2.1 KB when tb_case held its strings and shapes, 1,792
bytes).  Skipped under sanitizers, whose allocator keeps freed memory.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="tbench-scale-")
SMALL, LARGE = 200, 2500
KB_PER_CASE = 6
PLAN_LARGE, PLAN_KB_PER_CASE = 20000, 1.2
STATE = {}


def config(n):
    """n relu cases of 1..n elements (64 shapes an op entry)."""
    ops = [{"op": "relu", "shapes": [[k] for k in range(a, min(a + 64,
                                                               n + 1))]}
           for a in range(1, n + 1, 64)]
    cfg = {"name": f"scale-{n}", "seed": 1,
           "warmup": {"min_time_ms": 0, "min_iters": 1},
           "measure": {"sample_time_ms": 0.001, "min_samples": 3,
                       "max_samples": 3, "max_time_s": 10},
           "dtypes": ["f32"],
           "backends": [{"name": "cpu", "isa": ["scalar"], "threads": [1]}],
           "ops": ops}
    path = os.path.join(TMP, f"scale-{n}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f)
    return path


def run_rss(args):
    """Run tbench with args; (exit status, peak RSS in KB, stdout)."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen([TBENCH, *args], stdout=out,
                             stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return p.returncode, ru.ru_maxrss, out.read()


def sanitized(doc):
    b = doc.get("env", {}).get("build", {})
    return (b.get("sanitize") or "none") != "none"


@case(f"run of {SMALL} and {LARGE} tiny cases: the peak RSS grows by less "
      f"than {KB_PER_CASE} KB a case; only results.json and results.csv "
      "are left in the folder")
def t_growth():
    rss = {}
    for n in (SMALL, LARGE):
        out = os.path.join(TMP, f"run-{n}")
        rc, kb, _ = run_rss(["run", config(n), "-q", "-o", out])
        expect(rc == 0, f"{n} cases: exit {rc}")
        expect(sorted(os.listdir(out)) == ["results.csv", "results.json"],
               f"{n} cases: left {sorted(os.listdir(out))}")
        with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
            doc = json.load(f)
        expect(len(doc["cases"]) == n and doc["complete"] is True,
               f"{n} cases: {len(doc['cases'])} records")
        expect(doc["summary"]["cases"] == n == doc["summary"]["ok"],
               f"summary {doc['summary']}")
        with open(os.path.join(out, "results.csv"), encoding="utf-8") as f:
            expect(len(f.read().splitlines()) == n + 2, "CSV rows")
        rss[n] = kb
        STATE["doc"] = doc
    if sanitized(STATE["doc"]):
        return "SKIP a sanitizer build: its allocator keeps freed memory"
    per = (rss[LARGE] - rss[SMALL]) / (LARGE - SMALL)
    print(f"# peak RSS {rss[SMALL]} KB at {SMALL} cases, {rss[LARGE]} KB "
          f"at {LARGE}: {per:.2f} KB a case")
    expect(per < KB_PER_CASE, f"{per:.2f} KB a case")


@case(f"run --list-cases of {SMALL} and {PLAN_LARGE} tiny cases: the peak "
      f"RSS grows by less than {PLAN_KB_PER_CASE} KB a case (the plan and "
      "the config)")
def t_plan():
    # GNU time, not this process's wait4: a child's peak RSS starts at
    # this (larger, by now) process's own, kept across exec
    if not os.access("/usr/bin/time", os.X_OK):
        return "SKIP needs /usr/bin/time (package time)"
    v = subprocess.run([TBENCH, "--version"], capture_output=True,
                       text=True, timeout=60, check=False)
    if "sanitizers" in v.stdout:
        return "SKIP a sanitizer build: its allocator keeps freed memory"
    rss = {}
    for n in (SMALL, PLAN_LARGE):
        kbf = os.path.join(TMP, f"list-{n}.kb")
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", kbf, TBENCH,
                            "run", config(n), "--list-cases"],
                           capture_output=True, timeout=600, check=False)
        expect(p.returncode == 0, f"{n} cases: exit {p.returncode}")
        expect(len(p.stdout.splitlines()) == n, f"{n} cases: "
               f"{len(p.stdout.splitlines())} lines")
        with open(kbf, encoding="utf-8") as f:
            rss[n] = int(f.read().split()[-1])
    per = (rss[PLAN_LARGE] - rss[SMALL]) / (PLAN_LARGE - SMALL)
    print(f"# run --list-cases: peak RSS {rss[SMALL]} KB at {SMALL} cases, "
          f"{rss[PLAN_LARGE]} KB at {PLAN_LARGE}: {per:.2f} KB a case")
    expect(per < PLAN_KB_PER_CASE, f"{per:.2f} KB a case")


@case("run -o -: the document on stdout, as a folder's results.json")
def t_stdout():
    rc, _, out = run_rss(["run", config(SMALL), "-q", "-o", "-"])
    expect(rc == 0, f"exit {rc}")
    doc = json.loads(out)
    expect(len(doc["cases"]) == SMALL, f"{len(doc['cases'])} records")
    expect(out.startswith(b"{\n\t\"schema\":\t\"tbench.results/1\""),
           repr(out[:40]))
    expect(out.endswith(b"\n}"), repr(out[-10:]))


@case("the large run's file loads (tbench show)")
def t_loads():
    p = subprocess.run([TBENCH, "show", "relu/2500/*",
                        os.path.join(TMP, f"run-{LARGE}")],
                       capture_output=True, text=True, timeout=120)
    expect(p.returncode == 0 and "relu/2500/f32" in p.stdout,
           f"exit {p.returncode}: {p.stderr[-300:]}")


if __name__ == "__main__":
    try:
        sys.exit(run_cases())
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
