#!/usr/bin/python3
"""CLI tests for tbench compare, history, export and run's baseline
options, printed as TAP.

Usage: test_cli_compare.py PATH/TO/tbench   (run from the repository root)

One tiny real run gives a template result document; every other input is
synthesized from it by replacing the samples with seeded draws (so the
verdicts are known: a 10% shift against 1% noise, a 0.5% shift under the
2% threshold...) and is checked against docs/results.schema.json first,
so the synthetic files are valid result files.  Nothing here depends on
how fast this machine is: the runs that --baseline compares are set
against baselines made 10x slower or faster.  Needs Debian's numpy and
python3-jsonschema: run with /usr/bin/python3.
"""
import copy
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

import jsonschema
import numpy as np

TBENCH = os.path.abspath(sys.argv[1])
SCHEMA = json.load(open("docs/results.schema.json", encoding="utf-8"))
TMP = tempfile.mkdtemp(prefix="tbench-cmp-")

TINY = """// tiny matrix for the compare tests
{
  "name": "tinycmp",
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  // at least 10 samples a case: with 5 a side (and a tie) even a 10x
  // change cannot reach p < 0.01
  "measure": {"sample_time_ms": 0.2, "min_samples": 10, "max_samples": 30,
              "ci_target": 0.05, "max_time_s": 0.5},
  "dtypes": ["f32"],
  "backends": ["cpu"],
  "ops": [
    {"op": "add", "shapes": [[7, 13]]},
    {"op": "sum", "shapes": [[33, 5]], "params": [{}, {"axis": 0}]},
    {"op": "log_softmax", "shapes": [[4, 10]]}
  ]
}
"""






def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run(*args, cwd=None):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def expect_exit(p, code):
    expect(p.returncode == code,
           f"exit {p.returncode}, want {code}\nstdout: {p.stdout[-2000:]}\n"
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


CONFIG = write("tiny.json", TINY)
_template = None


def template():
    """The result document of one real run of TINY (made once)."""
    global _template
    if _template is None:
        out = os.path.join(TMP, "template")
        p = run("run", CONFIG, "-o", out, "-q")
        expect_exit(p, 0)
        _template = json.load(open(os.path.join(out, "results.json")))
        expect(all(c["status"] == "ok" for c in _template["cases"]),
               "template run: not every case ok")
    return copy.deepcopy(_template)


def set_samples(c, x):
    """Replace a case's samples and every statistic derived from them."""
    x = np.asarray(x, dtype=float)
    s = c["stats"]
    med = float(np.median(x))
    rng = np.random.default_rng(1)
    meds = np.median(rng.choice(x, size=(500, len(x))), axis=1)
    lo, hi = (float(v) for v in np.quantile(meds, [0.025, 0.975]))
    s.update(n=len(x), samples_ns=[float(v) for v in x], median_ns=med,
             mean_ns=float(x.mean()), min_ns=float(x.min()),
             max_ns=float(x.max()), stddev_ns=float(x.std(ddof=1)),
             mad_ns=float(np.median(np.abs(x - med))),
             p5_ns=float(np.quantile(x, 0.05)),
             p95_ns=float(np.quantile(x, 0.95)),
             ci_low_ns=min(lo, med), ci_high_ns=max(hi, med))
    s["ci_rel"] = (s["ci_high_ns"] - s["ci_low_ns"]) / med
    m = c["model"]
    c["throughput"] = {
        "gb_s": m["bytes"] / med if m["bytes"] else None,
        "gflop_s": m["flops"] / med if m["flops"] else None,
        "items_s": m["items"] / med * 1e9}


def synth(name, factor=1.0, noise=0.01, seed=0, edit=None):
    """A result file whose cases take 1000 ns x factor x (1 + noise N(0,1))
    (60 samples, seeded per case); edit(doc) may change it further."""
    doc = template()
    for i, c in enumerate(doc["cases"]):
        rng = np.random.default_rng([seed, i])
        set_samples(c, 1000.0 * factor * (1 + noise * rng.normal(size=60)))
    if edit:
        edit(doc)
    jsonschema.validate(doc, SCHEMA)
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def compare_json(*args):
    p = run("compare", *args, "--format", "json")
    expect(p.returncode in (0, 1), f"exit {p.returncode}: {p.stderr}")
    return p.returncode, json.loads(p.stdout)


def verdicts(doc):
    return {c["id"]: c["verdict"] for c in doc["cases"]}


# ---- compare: verdicts ---------------------------------------------------


@case("inconclusive verdicts come with the machine the runs recorded "
      "(load average, CPUs, warnings of each side)")
def t_machine_note():
    def loaded(load):
        def edit(doc):
            doc["env"]["loadavg"] = [load, load, load]
            doc["env"]["warnings"] = [f"load {load} noted"]
        return edit
    a = synth("noisy-a.json", noise=0.3, seed=11, edit=loaded(0.25))
    b = synth("noisy-b.json", noise=0.3, seed=12, edit=loaded(7.5))
    p = run("compare", a, b)
    expect("inconclusive" in p.stdout, p.stdout)
    line = [l for l in p.stdout.splitlines() if "machine at the runs" in l]
    expect(len(line) == 1, p.stdout)
    expect("OLD: load average 0.25" in line[0] and
           "NEW: load average 7.50" in line[0] and
           "(first: load 7.5 noted)" in line[0], line)
    a = synth("quiet-a.json", seed=1)
    p = run("compare", a, a)
    expect("machine at the runs" not in p.stdout, "note without cause")


@case("identical samples compare as unchanged, exit 0")
def t_identical():
    a = synth("same-a.json", seed=1)
    b = synth("same-b.json", seed=1)
    rc, doc = compare_json(a, b)
    expect(rc == 0, f"exit {rc}")
    expect(doc["schema"] == "tbench.compare/1", "schema")
    v = verdicts(doc)
    expect(set(v.values()) == {"unchanged"}, f"verdicts {v}")
    for c in doc["cases"]:
        expect(c["time"]["change"] == 0 and c["time"]["p_value"] == 1,
               f"{c['id']}: {c['time']}")
    p = run("compare", a, b)
    expect_exit(p, 0)
    expect("summary: 0 regressed, 0 improved, 4 unchanged, 0 inconclusive, "
           "0 missing (4 cases compared" in p.stdout, p.stdout)


@case("a run capped by TBENCH_ISA: env records it, compare says kernel changed")
def t_isa_cap():
    out = os.path.join(TMP, "capped")
    p = subprocess.run([TBENCH, "run", CONFIG, "-o", out, "-q", "-f",
                        "log_softmax*"], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, TBENCH_ISA="scalar"))
    expect_exit(p, 0)
    capped = json.load(open(os.path.join(out, "results.json")))
    cpu = capped["env"]["cpu"]
    expect(cpu["isa_cap"] == "scalar" and cpu["isa_used"] == "scalar",
           str(cpu))
    expect(template()["env"]["cpu"]["isa_cap"] is None, "uncapped cap")
    impl_new = capped["cases"][0]["impl"]
    cid = capped["cases"][0]["id"]

    def edit(doc):  # the template's case, with another kernel recorded
        doc["cases"] = [c for c in doc["cases"] if c["id"] == cid]
        doc["cases"][0]["impl"] = impl_new + "_other"
    a = synth("impl-a.json", seed=3, edit=edit)
    def edit_b(doc):
        doc["cases"] = [c for c in doc["cases"] if c["id"] == cid]
        doc["cases"][0]["impl"] = impl_new
    b = synth("impl-b.json", seed=3, factor=1.5, edit=edit_b)
    p = run("compare", a, b)
    expect_exit(p, 1)
    expect("regressed (kernel changed)" in p.stdout, p.stdout)
    expect("kernel changes" in p.stdout and
           f"{impl_new}_other -> {impl_new}" in p.stdout, p.stdout)
    rc, doc = compare_json(a, b)
    expect(doc["cases"][0]["impl_changed"] is True, str(doc["cases"][0]))
    rc, doc = compare_json(b, b)
    expect(doc["cases"][0]["impl_changed"] is False, "same kernel")


@case("a 10% slowdown with 1% noise is a regression, exit 1")
def t_regressed():
    a = synth("base.json", seed=1)
    b = synth("slow10.json", factor=1.10, seed=2)
    rc, doc = compare_json(a, b)
    expect(rc == 1, f"exit {rc}")
    for c in doc["cases"]:
        t = c["time"]
        expect(c["verdict"] == "regressed", f"{c['id']}: {c['verdict']}")
        expect(0.07 < t["change"] < 0.13 and t["ci_low"] > 0, f"{t}")
        expect(t["p_value"] < 1e-6 and t["floor"] == 0.02, f"{t}")
    expect(doc["summary"]["regressed"] == 4 and doc["summary"]["failed"],
           f"{doc['summary']}")
    # a threshold above the shift, or --fail-on without time: exit 0
    expect_exit(run("compare", a, b, "--threshold", "15"), 0)
    expect_exit(run("compare", a, b, "--fail-on", "counters,status"), 0)


@case("a 0.5% shift with 1% noise is unchanged, exit 0")
def t_small_shift():
    a = synth("base.json", seed=1)
    b = synth("slow05.json", factor=1.005, seed=3)
    rc, doc = compare_json(a, b)
    expect(rc == 0, f"exit {rc}")
    expect(set(verdicts(doc).values()) == {"unchanged"}, f"{verdicts(doc)}")


@case("a 10% speed-up is an improvement and exits 0")
def t_improved():
    a = synth("base.json", seed=1)
    b = synth("fast10.json", factor=1 / 1.1, seed=4)
    rc, doc = compare_json(a, b)
    expect(rc == 0, f"exit {rc}")
    expect(set(verdicts(doc).values()) == {"improved"}, f"{verdicts(doc)}")
    expect(doc["summary"]["improved"] == 4, f"{doc['summary']}")
    for c in doc["cases"]:
        tp = c["throughput"]
        expect(abs(tp["change"] - 0.1) < 0.03, f"throughput {tp}")


@case("more kernel launches per iteration is a counter regression")
def t_counters():
    def more_kernels(doc):
        doc["cases"][1]["counters"]["kernel_launches"] = 2

    a = synth("base.json", seed=1)
    b = synth("kern2.json", seed=1, edit=more_kernels)
    rc, doc = compare_json(a, b)
    expect(rc == 1, f"exit {rc}")
    c = doc["cases"][1]
    expect(c["verdict"] == "counters", f"{c['verdict']}")
    k = c["counters"]["kernel_launches"]
    expect(k == {"old": 1, "new": 2, "verdict": "regressed"}, f"{k}")
    expect(doc["summary"]["counter_regressions"] == 1, f"{doc['summary']}")
    p = run("compare", a, b)
    expect("kernel_launches 1 -> 2 (counter regression)" in p.stdout,
           p.stdout)
    expect_exit(run("compare", a, b, "--fail-on", "time"), 0)


@case("ok -> failed-check is a status failure; ok -> unavailable too")
def t_status():
    def fail_one(doc):
        c = doc["cases"][0]
        c.update(status="failed-check", message="max_rel_err 1 > 1e-5",
                 stats=None, throughput=None, counters=None, timing=None)
        c["check"]["passed"] = False
        doc["cases"][2].update(status="unavailable", message="gone",
                               stats=None, throughput=None, counters=None,
                               timing=None, check=None)

    a = synth("base.json", seed=1)
    b = synth("failed.json", seed=1, edit=fail_one)
    rc, doc = compare_json(a, b)
    expect(rc == 1, f"exit {rc}")
    v = [c["verdict"] for c in doc["cases"]]
    expect(v == ["failure", "unchanged", "failure", "unchanged"], f"{v}")
    expect(doc["summary"]["status_failures"] == 2, f"{doc['summary']}")
    p = run("compare", a, b)
    expect("ok -> failed-check (failure): max_rel_err" in p.stdout, p.stdout)
    expect_exit(run("compare", a, b, "--fail-on", "time,counters"), 0)
    # ok -> unavailable is missing (--allow-missing lets it pass), ok ->
    # failed-check is broken (nothing lets it pass but --fail-on)
    expect(doc["summary"]["missing"] == 1, f"{doc['summary']}")
    expect_exit(run("compare", a, b, "--allow-missing"), 1)
    # the other way round it is fixed, which never fails
    expect_exit(run("compare", b, a), 0)


@case("cases only in one file are listed as added and removed; the "
      "vanished one fails the gate unless --allow-missing")
def t_added_removed():
    def rename(doc):
        doc["cases"][3]["id"] = "log_softmax/renamed"

    a = synth("base.json", seed=1)
    b = synth("renamed.json", seed=1, edit=rename)
    rc, doc = compare_json(a, b)
    expect(rc == 1, f"exit {rc}: a case of the baseline vanished")
    expect(doc["summary"]["added"] == 1 and doc["summary"]["removed"] == 1
           and doc["summary"]["missing"] == 1 and doc["summary"]["failed"],
           f"{doc['summary']}")
    p = run("compare", a, b)
    expect("added (only in the new file):" in p.stdout and
           "log_softmax/renamed" in p.stdout, p.stdout)
    expect("3 unchanged, 0 inconclusive, 1 missing" in p.stdout, p.stdout)
    rc, doc = compare_json(a, b, "--allow-missing")
    expect(rc == 0 and doc["options"]["allow_missing"], f"exit {rc}")
    expect_exit(run("compare", a, b, "--fail-on", "time"), 0)
    # a case that ran and now does not run (unsupported) is missing too
    def unsupported(doc):
        doc["cases"][0].update(status="unavailable", message="gone",
                               stats=None, throughput=None, counters=None,
                               timing=None, check=None)
    rc, doc = compare_json(a, synth("unsup2.json", seed=1, edit=unsupported))
    expect(rc == 1 and doc["summary"]["missing"] == 1, f"{doc['summary']}")
    rc, doc = compare_json(a, synth("unsup3.json", seed=1, edit=unsupported),
                           "--allow-missing")
    expect(rc == 0, f"exit {rc}: {doc['summary']}")


# scipy.stats.t.ppf(0.995, 2), pasted so the test does not need SciPy
T_995_DF2 = 9.92484320091807


@case("several runs per side (--vs): the floor includes their spread")
def t_multi_run():
    olds = [synth(f"o{i}.json", factor=f, seed=10 + i)
            for i, f in enumerate([1.0, 1.01, 1.005])]
    new_in = synth("n-in.json", factor=1.03, seed=20)
    new_out = synth("n-out.json", factor=1.15, seed=21)
    rc, doc = compare_json(*olds, "--vs", new_in)
    expect(rc == 0, f"exit {rc}: {verdicts(doc)}")
    for i, c in enumerate(doc["cases"]):
        t = c["time"]
        logs = [math.log(json.load(open(f))["cases"][i]["stats"]["median_ns"])
                for f in olds]
        sd = float(np.std(logs, ddof=1))
        want = math.expm1(T_995_DF2 * sd * math.sqrt(1 / 3 + 1))
        fp = t["floor_parts"]
        expect(math.isclose(t["run_sd"], sd, rel_tol=1e-9) and
               t["run_df"] == 2, f"{t}")
        expect(math.isclose(fp["between_runs"], want, rel_tol=1e-9), f"{fp}")
        expect(c["old_runs"] == 3 and c["new_runs"] == 1, f"{c}")
    rc, doc = compare_json(*olds, "--vs", new_out)
    expect(rc == 1, f"exit {rc}")
    expect(set(verdicts(doc).values()) == {"regressed"}, f"{verdicts(doc)}")
    # with one run per side the note says the floor lacks between-run noise
    p = run("compare", olds[0], new_in)
    expect("one run per side" in p.stdout, p.stdout)
    expect("one run per side" not in run("compare", *olds, "--vs",
                                         new_in).stdout, "note with --vs")


@case("text, md and json outputs; -o FILE; a run folder as argument")
def t_formats():
    a = synth("base.json", seed=1)
    b = synth("slow10.json", factor=1.10, seed=2)
    p = run("compare", a, b, "--format", "md")
    expect_exit(p, 1)
    expect("| case | old | new | change |" in p.stdout and
           "| regressed |" in p.stdout, p.stdout)
    out = os.path.join(TMP, "cmp.json")
    p = run("compare", a, b, "--format", "json", "-o", out)
    expect_exit(p, 1)
    expect(p.stdout == "", "stdout should be empty with -o")
    expect(json.load(open(out))["summary"]["regressed"] == 4, "-o content")
    d = os.path.join(TMP, "rundir")
    os.makedirs(d, exist_ok=True)
    os.replace(synth("x.json", seed=1), os.path.join(d, "results.json"))
    p = run("compare", d, a)
    expect_exit(p, 0)
    expect("rundir/results.json" in p.stdout, p.stdout)


# ---- compare: errors -----------------------------------------------------


@case("corrupt, truncated, wrong-schema, missing, mismatched: exit 2")
def t_input_errors():
    good = synth("base.json", seed=1)
    text = open(good).read()
    trunc = write("trunc.json", text[:len(text) // 2])
    corrupt = write("corrupt.json", text.replace('"cases"', '"cases" ::', 1))
    other = json.loads(text)
    other["schema"] = "tbench.results/2"
    wrong = write("wrong.json", json.dumps(other))
    cfg = write("notresult.json", TINY)
    for c in other["cases"]:
        c["id"] = "x/" + c["id"]
    other["schema"] = "tbench.results/1"
    mism = write("mismatch.json", json.dumps(other))
    expect_error(run("compare", good, trunc), "trunc.json: truncated")
    expect_error(run("compare", corrupt, good), "corrupt.json: corrupt")
    expect_error(run("compare", good, wrong), "wrong.json: schema is "
                 "\"tbench.results/2\", expected \"tbench.results/1\"")
    expect_error(run("compare", good, cfg), "notresult.json: corrupt")
    expect_error(run("compare", good, os.path.join(TMP, "nope.json")),
                 "nope.json: No such file")
    expect_error(run("compare", good, mism),
                 "no case id in common", "base.json")
    expect_error(run("history", good, mism), "mismatch.json: no case id")
    expect_error(run("history", good, good, mism), "mismatch.json: no case")
    expect_error(run("export", trunc, "--format", "gab"), "truncated")


@case("usage errors: exit 2 with one line")
def t_usage():
    a = synth("base.json", seed=1)
    expect_error(run("compare", a), "expected OLD NEW")
    expect_error(run("compare", a, a, a), "expected OLD NEW")
    expect_error(run("compare", a, "--vs"), "--vs needs")
    expect_error(run("compare", a, a, "--alpha", "2"), "--alpha")
    expect_error(run("compare", a, a, "--threshold", "x"), "--threshold")
    expect_error(run("compare", a, a, "--format", "xml"), "--format")
    expect_error(run("compare", a, a, "--fail-on", "speed"), "--fail-on")
    expect_error(run("compare", a, a, "--bogus"), "unknown option")
    expect_error(run("compare", a, a, "--alpha"), "needs a value")
    expect_error(run("history"), "no result file")
    expect_error(run("history", a, "--penalty", "-1"), "--penalty")
    expect_error(run("export", a), "--format is required")
    expect_error(run("export", a, "--format", "csv"), "gbench, bmf or gab")
    expect_error(run("export", a, a, "--format", "bmf"), "one result file")
    p = run("compare", "--help")
    expect_exit(p, 0)
    expect("--fail-on" in p.stdout and "--vs" in p.stdout, "help")


# ---- history -------------------------------------------------------------


@case("history names the run where a step happened")
def t_history():
    files = [synth(f"h{i}.json", factor=1.0 if i < 3 else 1.25, seed=30 + i,
                   noise=0.005) for i in range(7)]
    p = run("history", *files, "--format", "json")
    expect_exit(p, 0)
    doc = json.loads(p.stdout)
    expect(doc["schema"] == "tbench.history/1", "schema")
    expect(len(doc["runs"]) == 7, "runs")
    for c in doc["cases"]:
        expect(len(c["median_ns"]) == 7, "series length")
        expect(len(c["steps"]) == 1, f"{c['id']}: steps {c['steps']}")
        s = c["steps"][0]
        expect(s["run"] == 3 and s["kind"] == "regression" and
               0.2 < s["change"] < 0.3, f"{s}")
        expect(s["path"].endswith("h3.json"), s["path"])
    p = run("history", *files)
    expect_exit(p, 0)
    expect("at run 4" in p.stdout, p.stdout)
    flat = [synth(f"f{i}.json", seed=40 + i, noise=0.005) for i in range(5)]
    doc = json.loads(run("history", *flat, "--format", "json").stdout)
    expect(all(not c["steps"] for c in doc["cases"]), "steps in flat")
    expect("| case |" in run("history", *flat, "--format", "md").stdout,
           "md table")


# ---- export --------------------------------------------------------------


@case("export gbench, bmf and gab")
def t_export():
    a = synth("base.json", seed=1)
    ref = json.load(open(a))
    c0 = ref["cases"][0]
    p = run("export", a, "--format", "gbench")
    expect_exit(p, 0)
    g = json.loads(p.stdout)
    expect(g["context"]["host_name"] == ref["env"]["hostname"], "host")
    b = g["benchmarks"]
    expect(len(b) == 4 and b[0]["name"] == c0["id"], "names")
    expect(math.isclose(b[0]["real_time"], c0["stats"]["median_ns"],
                        rel_tol=1e-14) and
           b[0]["time_unit"] == "ns" and b[0]["iterations"] ==
           60 * c0["stats"]["iters_per_sample"], f"{b[0]}")
    p = run("export", a, "--format", "bmf")
    expect_exit(p, 0)
    m = json.loads(p.stdout)
    lat = m[c0["id"]]["latency"]
    # cJSON prints 15 significant digits when they read back within its
    # own epsilon, so values agree to ~1e-15, not always bit for bit
    want = {"value": "median_ns", "lower_value": "ci_low_ns",
            "upper_value": "ci_high_ns"}
    expect(set(lat) == set(want) and all(
        math.isclose(lat[k], c0["stats"][v], rel_tol=1e-14)
        for k, v in want.items()), f"{lat}")
    expect(m[c0["id"]]["kernel-launches-per-call"]["value"] == 1, "counter")
    # Bencher's published BMF schema (bencher.dev/bmf.json, draft-07),
    # plus its slug rule for measures: lower case, digits, '-', <= 64
    bmf_schema = {
        "type": "object",
        "patternProperties": {".+": {
            "type": "object",
            "patternProperties": {".+": {
                "type": "object",
                "properties": {"value": {"type": "number"},
                               "lower_value": {"type": "number"},
                               "upper_value": {"type": "number"}},
                "required": ["value"]}}}}}
    jsonschema.validate(m, bmf_schema)
    for case_id, measures in m.items():
        expect(len(case_id) <= 1024, "benchmark name too long")
        for slug in measures:
            expect(re.fullmatch(r"[a-z0-9-]{1,64}", slug), slug)
            expect(slug in ("latency", "throughput") or
                   re.search(r"-per-(second|call)$", slug),
                   f"{slug}: no unit in the name")
    out = os.path.join(TMP, "gab.json")
    expect_exit(run("export", a, "--format", "gab", "-o", out), 0)
    arr = json.load(open(out))
    expect(len(arr) == 4 and arr[0]["name"] == c0["id"] and
           arr[0]["unit"] == "ns" and math.isclose(
               arr[0]["value"], c0["stats"]["median_ns"], rel_tol=1e-14)
           and arr[0]["range"].startswith("± ")
           and isinstance(arr[0]["extra"], str), f"{arr[0]}")
    # github-action-benchmark's custom tools: an array of
    # {name, unit, value, range?, extra?} (its README, "customSmallerIsBetter")
    gab_schema = {
        "type": "array", "minItems": 1,
        "items": {"type": "object",
                  "required": ["name", "unit", "value"],
                  "properties": {"name": {"type": "string"},
                                 "unit": {"type": "string"},
                                 "value": {"type": "number"},
                                 "range": {"type": "string"},
                                 "extra": {"type": "string"}},
                  "additionalProperties": False}}
    jsonschema.validate(arr, gab_schema)
    # a run with no ok case: bmf and gab refuse (an empty upload reads as
    # a run that measured nothing), gbench lists the errors
    none = synth("none-ok.json", seed=1, edit=lambda d: [
        c.update(status="unavailable", message="x", stats=None,
                 throughput=None, counters=None, timing=None, check=None,
                 impl=None) for c in d["cases"]])
    for fmt in ("bmf", "gab"):
        expect_error(run("export", none, "--format", fmt),
                     "no case with status ok", fmt)
    expect_exit(run("export", none, "--format", "gbench"), 0)
    # a file with no case at all: every format refuses (D17: gbench wrote
    # an empty list, exit 0)
    empty = synth("no-case.json", seed=1, edit=lambda d: (
        d.__setitem__("cases", []), d["summary"].update(cases=0, ok=0)))
    for fmt in ("gbench", "bmf", "gab"):
        expect_error(run("export", empty, "--format", fmt),
                     "nothing to export", fmt)


GBENCH_COMPARE = "/usr/share/benchmark/compare.py"  # libbenchmark-tools


@case("export gbench: rounds as repetitions, aggregates, a crashed case")
def t_export_gbench_rounds():
    meds = [900.0, 1000.0, 1250.0]

    def edit(doc):
        doc["cases"][0]["stats"]["round_medians_ns"] = meds
        c = doc["cases"][1]
        for k in ("check", "stats", "throughput", "counters", "timing",
                  "roofline"):
            c[k] = None
        c["status"], c["message"] = "crashed", "worker killed by SIGSEGV"

    a = synth("gb_rounds.json", seed=7, edit=edit)
    g = json.loads(run("export", a, "--format", "gbench").stdout)
    doc = json.load(open(a))
    c0, c1 = doc["cases"][0]["id"], doc["cases"][1]["id"]
    reps = [b for b in g["benchmarks"]
            if b["name"] == c0 and b["run_type"] == "iteration"]
    expect([b["real_time"] for b in reps] == meds and
           [b["repetition_index"] for b in reps] == [0, 1, 2] and
           all(b["repetitions"] == 3 for b in reps), f"{reps}")
    agg = {b["aggregate_name"]: b["real_time"] for b in g["benchmarks"]
           if b["run_type"] == "aggregate" and b["run_name"] == c0}
    x = np.array(meds)
    want = {"mean": x.mean(), "median": float(np.median(x)),
            "stddev": x.std(ddof=1), "cv": x.std(ddof=1) / x.mean()}
    expect(set(agg) == set(want) and all(
        math.isclose(agg[k], want[k], rel_tol=1e-12) for k in want),
        f"{agg} vs {want}")
    err = [b for b in g["benchmarks"] if b["name"] == c1]
    expect(len(err) == 1 and err[0]["error_occurred"] is True and
           err[0]["error_message"].startswith("crashed: ") and
           err[0]["real_time"] == 0 and err[0]["time_unit"] == "ns",
           f"{err}")
    # a case of a one-round file stays one repetition with its iterations
    one = [b for b in g["benchmarks"] if b["name"] == doc["cases"][2]["id"]]
    expect(len(one) == 1 and one[0]["repetitions"] == 1 and
           one[0]["iterations"] > 0, f"{one}")
    # Google Benchmark's own compare.py reads it (it used to raise
    # KeyError: 'real_time' on a case that did not run) and runs its U
    # test on the repetitions
    if not os.path.exists(GBENCH_COMPARE):
        raise SystemExit(f"{GBENCH_COMPARE} missing: scripts/setup.sh "
                         "--tests installs libbenchmark-tools")
    ga = os.path.join(TMP, "gb_a.json")
    gb = os.path.join(TMP, "gb_b.json")
    expect_exit(run("export", a, "--format", "gbench", "-o", ga), 0)
    expect_exit(run("export", a, "--format", "gbench", "-o", gb), 0)
    p = subprocess.run(["/usr/bin/python3", GBENCH_COMPARE, "-d",
                        os.path.join(TMP, "gb_cmp.json"), "benchmarks", ga,
                        gb], capture_output=True, text=True, timeout=120)
    expect(p.returncode == 0, f"compare.py: {p.stderr[-2000:]}")
    diff = json.load(open(os.path.join(TMP, "gb_cmp.json")))
    u = [d for d in diff if d["name"] == c0 and d.get("utest")]
    expect(len(u) == 1 and u[0]["utest"]["nr_of_repetitions"] == 3,
           f"no U test on the rounds: {[d['name'] for d in diff]}")


# ---- run --save-baseline / --baseline ----------------------------------------


def fresh_cwd(name):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    return d


def run_dirs(cwd):
    r = os.path.join(cwd, "results")
    return sorted(x for x in os.listdir(r) if x != "baselines") \
        if os.path.isdir(r) else []


@case("baseline names are checked before anything runs")
def t_baseline_names():
    cwd = fresh_cwd("names")
    for bad in ["../evil", "a/b", ".hidden", "", "x" * 101, "sp ace",
                "semi;colon"]:
        p = run("run", CONFIG, "-q", "--save-baseline", bad, cwd=cwd)
        expect_error(p, "invalid baseline name")
        p = run("run", CONFIG, "-q", "--baseline", bad, cwd=cwd)
        expect_error(p, "invalid baseline name")
    expect_error(run("run", CONFIG, "-q", "--force", cwd=cwd), "--force")
    expect(not os.path.exists(os.path.join(cwd, "results")),
           "something was written")


@case("--save-baseline stores the run; no overwrite without --force")
def t_save_baseline():
    cwd = fresh_cwd("save")
    p = run("run", CONFIG, "-q", "--save-baseline", "main-1.x_y", cwd=cwd)
    expect_exit(p, 0)
    path = os.path.join(cwd, "results", "baselines", "main-1.x_y.json")
    doc = json.load(open(path))
    jsonschema.validate(doc, SCHEMA)
    dirs = run_dirs(cwd)
    expect(len(dirs) == 1, f"{dirs}")
    run_doc = json.load(open(os.path.join(cwd, "results", dirs[0],
                                          "results.json")))
    expect(doc == run_doc, "baseline differs from the run's results.json")
    p = run("run", CONFIG, "-q", "--save-baseline", "main-1.x_y", cwd=cwd)
    expect_error(p, "exists", "--force")
    expect(run_dirs(cwd) == dirs, "a run happened before the refusal")
    expect(json.load(open(path)) == doc, "baseline changed")
    p = run("run", CONFIG, "-q", "--save-baseline", "main-1.x_y", "--force",
            cwd=cwd)
    expect_exit(p, 0)
    expect(json.load(open(path))["env"]["date"] >= doc["env"]["date"],
           "not replaced")
    expect(not [f for f in os.listdir(os.path.dirname(path))
                if ".tmp." in f], "temporary files left")


@case("--baseline compares at the end; exit 1 only on regressions")
def t_run_baseline():
    cwd = fresh_cwd("cmp")
    bdir = os.path.join(cwd, "results", "baselines")
    os.makedirs(bdir)
    tpl = template()

    def scaled(name, factor):
        doc = copy.deepcopy(tpl)
        for c in doc["cases"]:
            set_samples(c, np.asarray(c["stats"]["samples_ns"]) * factor)
        jsonschema.validate(doc, SCHEMA)
        with open(os.path.join(bdir, name + ".json"), "w") as f:
            json.dump(doc, f)

    scaled("slow", 10.0)   # the new run is ~10x faster: improved
    scaled("fast", 0.1)    # the new run is ~10x slower: regressed
    p = run("run", CONFIG, "-q", "-o", "new1", "--baseline", "slow", cwd=cwd)
    expect_exit(p, 0)
    expect("comparison with baseline slow:" in p.stdout and
           "improved" in p.stdout, p.stdout)
    cmp = json.load(open(os.path.join(cwd, "new1", "compare.json")))
    expect(cmp["schema"] == "tbench.compare/1" and
           cmp["summary"]["improved"] == 4, f"{cmp['summary']}")
    p = run("run", CONFIG, "-q", "-o", "new2", "--baseline", "fast", cwd=cwd)
    expect_exit(p, 1)
    expect("regressed" in p.stdout, p.stdout)
    # a baseline made of two runs
    p = run("run", CONFIG, "-q", "-o", "new3", "--baseline", "slow",
            "--baseline", "fast", cwd=cwd)
    expect(p.returncode in (0, 1), p.stderr)
    cmp = json.load(open(os.path.join(cwd, "new3", "compare.json")))
    expect(len(cmp["old"]["files"]) == 2, "two baseline files")
    # unknown baseline, and one of another matrix: exit 2 before running
    before = sorted(os.listdir(cwd))
    expect_error(run("run", CONFIG, "-q", "--baseline", "nope", cwd=cwd),
                 "nope.json")
    other = copy.deepcopy(tpl)
    for c in other["cases"]:
        c["id"] = "other/" + c["id"]
    with open(os.path.join(bdir, "other.json"), "w") as f:
        json.dump(other, f)
    expect_error(run("run", CONFIG, "-q", "--baseline", "other", cwd=cwd),
                 "other.json: no case id in common")
    expect(sorted(os.listdir(cwd)) == before, "something ran")


@case("run --baseline --filter: cases the filter left out are not missing; "
      "a case the run planned and lost is")
def t_run_baseline_scope():
    cwd = fresh_cwd("scope")
    bdir = os.path.join(cwd, "results", "baselines")
    os.makedirs(bdir)
    tpl = copy.deepcopy(template())
    with open(os.path.join(bdir, "all.json"), "w") as f:
        json.dump(tpl, f)
    ids = [c["id"] for c in tpl["cases"]]
    keep = ids[0]
    p = run("run", CONFIG, "-q", "-o", "f1", "--baseline", "all",
            "--filter", keep, cwd=cwd)
    expect(p.returncode in (0, 1), p.stderr)
    cmp = json.load(open(os.path.join(cwd, "f1", "compare.json")))
    got = [c["id"] for c in cmp["cases"]]
    expect(got == [keep] and cmp["summary"].get("missing", 0) == 0,
           f"filtered run compared {got}, summary {cmp['summary']}")
    expect("missing" not in p.stdout.split("\n")[-3:][0] or
           " 0 missing" in p.stdout, p.stdout[-400:])
    # without a filter, a baseline case the configs no longer plan is
    # missing: the gate fails unless --allow-missing
    extra = copy.deepcopy(tpl)
    gone = copy.deepcopy(extra["cases"][0])
    gone["id"] = gone["id"] + "-gone"
    extra["cases"].append(gone)
    with open(os.path.join(bdir, "extra.json"), "w") as f:
        json.dump(extra, f)
    p = run("run", CONFIG, "-q", "-o", "f2", "--baseline", "extra",
            cwd=cwd)
    expect_exit(p, 1)
    cmp = json.load(open(os.path.join(cwd, "f2", "compare.json")))
    expect(cmp["summary"]["missing"] >= 1, f"{cmp['summary']}")
    p = run("run", CONFIG, "-q", "-o", "f3", "--baseline", "extra",
            "--allow-missing", cwd=cwd)
    expect(p.returncode in (0, 1), p.stderr)
    cmp = json.load(open(os.path.join(cwd, "f3", "compare.json")))
    expect(not cmp["failed"] if "failed" in cmp else True, f"{cmp}"[:300])


if __name__ == "__main__":
    # keep the files of a failure for a look
    sys.exit(run_cases(
        lambda failed: failed or shutil.rmtree(TMP, ignore_errors=True)))
