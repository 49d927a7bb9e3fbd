#!/usr/bin/python3
"""CLI tests for tbench targets (performance targets as a gate), printed
as TAP.

Usage: test_cli_targets.py PATH/TO/tbench   (run from the repository root)

The result files are built by hand from records of the committed run
(docs/perf-data/results.json and numpy.json), with samples chosen so that
every verdict is certain: a case whose samples are symmetric around
1000 ns (median 1000, its bootstrap CI strictly around it) and whose
roofline bound is 500 ns, and NumPy peers at exactly 2x and 4x those
samples.  Each synthetic file is checked against
docs/results.schema.json first.  Nothing runs a benchmark.  Needs
Debian's numpy and python3-jsonschema: run with /usr/bin/python3.
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

import jsonschema
import numpy as np

TBENCH = os.path.abspath(sys.argv[1])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
RESULTS = "docs/perf-data/results.json"
PEERS = "docs/perf-data/numpy.json"
TMP = tempfile.mkdtemp(prefix="tbench-targets-")
ID = "add/1000000,1000000/f32/cpu[isa=auto,threads=1]"
ID2 = "add/1000000,1000000/f32/cpu[isa=auto,threads=2]"
NP_OUT = "add/1000000,1000000/f32/numpy[threads=1,form=out]"
NP_ALLOC = "add/1000000,1000000/f32/numpy[threads=1,form=alloc]"


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run(*args):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=120)


def expect_exit(p, code):
    expect(p.returncode == code,
           f"exit {p.returncode}, want {code}\nstdout: {p.stdout[-3000:]}\n"
           f"stderr: {p.stderr[-2000:]}")


def expect_error(p, *needles):
    """Exit 2 with exactly one line on stderr containing every needle."""
    expect_exit(p, 2)
    lines = [l for l in p.stderr.splitlines() if l.strip()
             and not l.startswith("Try ")]
    expect(len(lines) == 1, f"want one error line, got: {p.stderr!r}")
    expect(lines[0].startswith("tbench: "), f"bad message: {lines[0]}")
    for n in needles:
        expect(n in lines[0], f"'{n}' not in: {lines[0]}")


def set_samples(c, x):
    """Replace a case's samples and the statistics derived from them."""
    x = np.asarray(x, dtype=float)
    s = c["stats"]
    med = float(np.median(x))
    rng = np.random.default_rng(1)
    meds = np.median(rng.choice(x, size=(2000, len(x))), axis=1)
    lo, hi = (float(v) for v in np.quantile(meds, [0.025, 0.975]))
    s.update(n=len(x), samples_ns=[float(v) for v in x], median_ns=med,
             mean_ns=float(x.mean()), min_ns=float(x.min()),
             max_ns=float(x.max()), stddev_ns=float(x.std(ddof=1)),
             mad_ns=float(np.median(np.abs(x - med))),
             p5_ns=float(np.quantile(x, 0.05)),
             p95_ns=float(np.quantile(x, 0.95)),
             ci_low_ns=min(lo, med), ci_high_ns=max(hi, med))
    s["ci_rel"] = (s["ci_high_ns"] - s["ci_low_ns"]) / med
    s.pop("round_medians_ns", None)
    s.pop("rounds", None)
    m = c["model"]
    c["throughput"] = {"gb_s": m["bytes"] / med, "gflop_s": m["flops"] / med,
                       "items_s": m["items"] / med * 1e9}


# 61 samples symmetric around 1000 ns (+-1%, shuffled): the median is
# exactly 1000 and its 95% CI lies strictly on both sides of it
BASE = 1000 * (1 + 0.01 * np.random.default_rng(7).permutation(
    np.linspace(-1, 1, 61)))


def dump(name, doc):
    jsonschema.validate(doc, SCHEMA)
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def results():
    """The case ID at 1000 ns (bound 500 ns) and ID2, unsupported."""
    doc = json.load(open(RESULTS, encoding="utf-8"))
    rec = next(c for c in doc["cases"] if c["id"] == ID)
    set_samples(rec, BASE)
    rec["roofline"]["min_time_ns"] = 500.0
    off = copy.deepcopy(rec)
    off.update(id=ID2, status="unsupported", impl=None,
               message="the backend has no kernel for this op",
               check=None, stats=None, throughput=None, counters=None,
               timing=None, roofline=None)
    off["backend_params"]["threads"] = "2"
    doc["cases"] = [rec, off]
    return dump("results.json", doc)


def peers():
    """NumPy's add at 2x the case's samples (form=out) and 4x (alloc)."""
    doc = json.load(open(PEERS, encoding="utf-8"))
    out = next(c for c in doc["cases"] if c["id"] == NP_OUT)
    alloc = next(c for c in doc["cases"] if c["id"] == NP_ALLOC)
    set_samples(out, 2 * BASE)
    set_samples(alloc, 4 * BASE)
    doc["cases"] = [alloc, out]
    return dump("numpy.json", doc)


RES = results()
PEER = peers()


def targets_file(*targets, name="t.json"):
    """A targets file with these targets, one per line from line 3."""
    body = ",\n".join("    " + json.dumps(t) for t in targets)
    return write(name, "// made by test_cli_targets.py\n{\"targets\": [\n"
                 + body + "\n]}\n")


def judge(tfile, *args):
    p = run("targets", RES, "-t", tfile, "--format", "json", *args)
    expect(p.returncode in (0, 1), f"exit {p.returncode}: {p.stderr}")
    return p.returncode, json.loads(p.stdout)


def verdicts(doc):
    return [[c["verdict"] for c in t["checks"]] for t in doc["targets"]]


# ---- verdicts ---------------------------------------------------------------


@case("max_time: met above the CI, missed below it, inconclusive inside")
def t_time():
    t = targets_file({"name": "met", "case": ID, "max_time": "1.1us"},
                     {"name": "missed", "case": ID, "max_time": "900ns"},
                     {"name": "inside", "case": ID, "max_time": "1us"})
    rc, doc = judge(t)
    expect(rc == 1, f"exit {rc}")
    expect(doc["schema"] == "tbench.targets/1", doc["schema"])
    expect(verdicts(doc) == [["met"], ["missed"], ["inconclusive"]],
           str(verdicts(doc)))
    c = doc["targets"][0]["checks"][0]
    expect(c["value"] == 1000.0 and c["ci_low"] < 1000 < c["ci_high"],
           str(c))
    expect(doc["targets"][1]["limit"] == 900 and
           doc["targets"][1]["unit"] == "ns", str(doc["targets"][1]))
    s = doc["summary"]
    expect((s["met"], s["missed"], s["inconclusive"], s["failed"]) ==
           (1, 1, 1, True), str(s))


@case("exit 0 when every check is met or inconclusive; --strict fails one")
def t_exit_codes():
    t = targets_file({"case": ID, "max_time": "2us"},
                     {"case": ID, "max_time": "1000ns"})
    p = run("targets", RES, "-t", t)
    expect_exit(p, 0)
    expect("summary: 1 met, 0 missed, 1 inconclusive, 0 missing, "
           "0 unmatched (2 cases under 2 targets)" in p.stdout, p.stdout)
    expect_exit(run("targets", RES, "-t", t, "--strict"), 1)
    t = targets_file({"case": ID, "max_time": "2us"})
    expect_exit(run("targets", RES, "-t", t, "--strict"), 0)


@case("max_ratio_to: the fastest NumPy form at the same thread count, CI "
      "of compare's pair test")
def t_peer():
    t = targets_file(
        {"name": "met", "case": ID,
         "max_ratio_to": {"peer": "numpy", "ratio": 0.6}},
        {"name": "missed", "case": ID,
         "max_ratio_to": {"peer": "numpy", "ratio": 0.4}},
        {"name": "inside", "case": ID,
         "max_ratio_to": {"peer": "numpy", "ratio": 0.5}},
        {"name": "loose", "case": ID,
         "max_ratio_to": {"peer": "numpy", "ratio": 9}})
    rc, doc = judge(t, "--with", PEER)
    expect(rc == 1, f"exit {rc}")
    expect(verdicts(doc) == [["met"], ["missed"], ["inconclusive"], ["met"]],
           str(verdicts(doc)))
    c = doc["targets"][0]["checks"][0]
    expect(abs(c["value"] - 0.5) < 1e-12, str(c))
    expect(c["peer_id"] == NP_OUT, f"peer {c['peer_id']}, want the faster "
           "form")
    expect(0.49 < c["ci_low"] < 0.5 < c["ci_high"] < 0.51, str(c))
    expect(doc["with"] == [PEER], str(doc["with"]))
    # text: the ratio with its CI under the target's heading
    p = run("targets", RES, "-t", t, "--with", PEER)
    expect("met: at most 0.6x numpy\n" in p.stdout, p.stdout)
    expect(f"  {ID}  0.50x [0.50, 0.50]  met\n" in p.stdout, p.stdout)


@case("max_ratio_to without the peer's file, or with a peer it lacks: exit 2"
      " at the peer's FILE:LINE:COL")
def t_peer_errors():
    t = targets_file({"op": "add", "max_time": "1s"},
                     {"op": "add",
                      "max_ratio_to": {"peer": "torch", "ratio": 1}})
    expect_error(run("targets", RES, "-t", t),
                 f"{t}:4:", "targets[1].max_ratio_to.peer: 'torch' needs "
                 "the peer's result file (--with FILE)")
    expect_error(run("targets", RES, "-t", t, "--with", PEER),
                 f"{t}:4:", "no case of backend 'torch' in the --with files "
                 "(their backends: numpy)")


@case("max_bound_ratio: the median's CI over roofline.min_time_ns")
def t_bound():
    t = targets_file({"name": "met", "case": ID, "max_bound_ratio": 2.5},
                     {"name": "missed", "case": ID, "max_bound_ratio": 1.5},
                     {"name": "inside", "case": ID, "max_bound_ratio": 2})
    rc, doc = judge(t)
    expect(rc == 1, f"exit {rc}")
    expect(verdicts(doc) == [["met"], ["missed"], ["inconclusive"]],
           str(verdicts(doc)))
    c = doc["targets"][0]["checks"][0]
    expect(c["value"] == 2.0 and c["ci_low"] < 2 < c["ci_high"], str(c))
    p = run("targets", RES, "-t", t)
    expect("met: at most 2.5x the roofline bound\n" in p.stdout, p.stdout)


@case("a case that did not run is missing: fails unless --allow-missing")
def t_missing():
    t = targets_file({"op": "add", "max_time": "1s"})
    rc, doc = judge(t)
    expect(rc == 1, f"exit {rc}")
    checks = doc["targets"][0]["checks"]
    expect([(c["id"], c["verdict"], c["why"]) for c in checks] ==
           [(ID, "met", None),
            (ID2, "missing", "not run (unsupported)")], str(checks))
    expect(checks[1]["value"] is None and checks[1]["status"] ==
           "unsupported", str(checks[1]))
    rc, doc = judge(t, "--allow-missing")
    expect(rc == 0 and doc["summary"]["missing"] == 1 and
           not doc["summary"]["failed"], f"exit {rc}: {doc['summary']}")
    p = run("targets", RES, "-t", t)
    expect("missing: not run (unsupported)" in p.stdout, p.stdout)


@case("a target that selects no case: 'matched no case' at its place, exit 1"
      " (even with --allow-missing)")
def t_unmatched():
    t = targets_file({"name": "ok", "case": ID, "max_time": "1s"},
                     {"name": "typo", "op": "addd", "max_time": "1s"})
    p = run("targets", RES, "-t", t, "--allow-missing")
    expect_exit(p, 1)
    expect(f"typo: at most 1 s\n  matched no case ({t}:4:5)  unmatched\n"
           in p.stdout, p.stdout)
    expect("1 met, 0 missed, 0 inconclusive, 0 missing, 1 unmatched"
           in p.stdout, p.stdout)
    rc, doc = judge(t)
    expect(doc["targets"][1]["matched"] == 0 and
           doc["targets"][1]["checks"] == [] and
           doc["summary"]["unmatched"] == 1, str(doc["targets"][1]))


@case("selectors: op, dtype and backend must all match, with the case glob")
def t_selectors():
    t = targets_file(
        {"name": "a", "op": "add", "dtype": "f32", "backend": "cpu",
         "max_time": "1s"},
        {"name": "b", "case": "add/*[isa=auto,threads=1]", "max_time": "1s"},
        {"name": "c", "op": "add", "dtype": "f64", "max_time": "1s"},
        {"name": "d", "op": "add", "backend": "blas", "max_time": "1s"})
    rc, doc = judge(t, "--allow-missing")
    expect([x["matched"] for x in doc["targets"]] == [2, 1, 0, 0],
           str([x["matched"] for x in doc["targets"]]))


# ---- the targets file -------------------------------------------------------


@case("a bad targets file: one line FILE:LINE:COL: what, exit 2")
def t_bad_files():
    bad = [
        ('{"targets": [\n  {"op": "add" "max_time": "1s"}\n]}', ":2:16: ",
         "syntax error"),
        ('{"targets": [{"op": "add", "max_time": 1}]}', ":1:40: ",
         "targets[0].max_time: expected a duration with a unit"),
        ('{"targets": [{"op": "add", "max_time": "1 hour"}]}', ":1:40: ",
         "got \"1 hour\""),
        ('{"targets": [{"op": "add", "max_time": "1s",\n'
         '  "max_bound_ratio": 2}]}', ":2:3: ",
         "targets[0]: a target holds one bound"),
        ('{"targets": [{"op": "add", "max_time": "1s", "dtypes": "f32"}]}',
         ":1:46: ", "targets[0]: unknown key 'dtypes'"),
        ('{"targets": [{"op": "add"}]}', ":1:14: ", "no bound"),
        ('{"targets": [{"max_time": "1s"}]}', ":1:14: ", "selects no cases"),
        ('{"targets": [{"op": "add", "max_ratio_to": {"ratio": 1}}]}',
         ":1:44: ", "targets[0].max_ratio_to: needs \"peer\""),
        ('{"targets": [{"op": "add", "max_bound_ratio": "1.2"}]}', ":1:47: ",
         "expected a ratio"),
        ('{"targets": []}', ":1:13: ", "got an empty list"),
        ('{"goals": []}', ":1:2: ", "unknown top-level key 'goals'"),
    ]
    for i, (text, where, what) in enumerate(bad):
        f = write(f"bad{i}.json", text)
        expect_error(run("targets", RES, "-t", f), f"tbench: {f}{where}",
                     what)
    expect_error(run("targets", RES, "-t", os.path.join(TMP, "none.json")),
                 "none.json: cannot open: No such file or directory")


@case("usage errors: no -t, no or two result files, bad --format, bad "
      "result file: exit 2")
def t_usage():
    t = targets_file({"case": ID, "max_time": "1s"})
    expect_error(run("targets", RES), "-t FILE")
    expect_error(run("targets", "-t", t), "expected one result file")
    expect_error(run("targets", RES, RES, "-t", t), "expected one result file")
    expect_error(run("targets", RES, "-t", t, "--format", "md"),
                 "--format: expected text or json, got 'md'")
    expect_error(run("targets", RES, "-t", t, "--strcit"),
                 "did you mean '--strict'?")
    expect_error(run("targets", t, "-t", t), t)
    p = run("targets", "--help")
    expect_exit(p, 0)
    expect(p.stdout.startswith("usage: tbench targets RESULTS -t FILE"),
           p.stdout[:200])


@case("the committed example configs/targets.json holds on the committed run"
      " and its NumPy/PyTorch peers")
def t_example():
    p = run("targets", RESULTS, "-t", "configs/targets.json", "--with", PEERS)
    expect_exit(p, 0)
    expect(" 0 missed, 0 inconclusive, 0 missing, 0 unmatched" in p.stdout,
           p.stdout)
    p = run("targets", RESULTS, "-t", "configs/targets.json", "--with",
            PEERS, "--format", "json", "--strict")
    expect_exit(p, 0)
    doc = json.loads(p.stdout)
    s = doc["summary"]
    expect(s["met"] == s["checks"] > 0 and s["targets"] >= 3, str(s))
    expect({t["bound"] for t in doc["targets"]} ==
           {"max_time", "max_ratio_to", "max_bound_ratio"},
           "the example shows every kind of bound")


def cleanup(failed):
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print(f"# files kept in {TMP}")


sys.exit(run_cases(cleanup))
