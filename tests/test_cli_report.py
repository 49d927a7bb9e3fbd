#!/usr/bin/python3
"""CLI tests of `tbench plot`, `tbench report` and scripts/compare_numpy.py,
printed as TAP.

Usage: test_cli_report.py PATH/TO/tbench   (run from the repository root,
with Debian's /usr/bin/python3: numpy and jsonschema)

Fixtures: tests/data/report/ (see make_fixtures.py there).  The golden
report tests/data/report/golden.md is the report of mixed.json with
baseline.json and numpy.json, made with --no-charts so it does not depend
on gnuplot; after an intended change of the report, regenerate it with
TBENCH_UPDATE_GOLDEN=1 and review the diff.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
DATA = os.path.abspath("tests/data/report")
GOLDEN = os.path.join(DATA, "golden.md")
SCRIPT = os.path.abspath("scripts/compare_numpy.py")
SCHEMA = os.path.abspath("docs/results.schema.json")
TMP = tempfile.mkdtemp(prefix="tbench-report-")
HAVE_GNUPLOT = shutil.which("gnuplot") is not None






def workdir(name, *fixtures):
    """A fresh folder with copies of the named fixtures."""
    d = tempfile.mkdtemp(prefix=name + "-", dir=TMP)
    for f in fixtures:
        shutil.copy(os.path.join(DATA, f), d)
    return d


def run(args, cwd, env=None, timeout=300):
    e = dict(os.environ, **(env or {}))
    return subprocess.run([TBENCH, *args], cwd=cwd, capture_output=True,
                          text=True, env=e, timeout=timeout)


def load(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return json.load(f)


# ---- Markdown checks ------------------------------------------------------

def tables(md):
    """Every table as (header line number, [rows]) from the Markdown."""
    lines = md.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and \
                re.match(r"^\|(-+\|)+$", lines[i + 1]):
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(lines[j])
                j += 1
            out.append((i + 1, lines[i], rows))
            i = j
        else:
            i += 1
    return out


def cells(row):
    return [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]


def check_markdown(md):
    """No empty table, rows as wide as their header, no empty section."""
    for ln, head, rows in tables(md):
        expect(rows, f"line {ln}: table without rows: {head}")
        w = len(cells(head))
        for r in rows:
            expect(len(cells(r)) == w,
                   f"line {ln}: row has {len(cells(r))} cells, header {w}: "
                   f"{r}")
    heads = [i for i, l in enumerate(md.split("\n")) if l.startswith("#")]
    lines = md.split("\n")
    for a, b in zip(heads, heads[1:] + [len(lines)]):
        body = [l for l in lines[a + 1:b] if l.strip()]
        if lines[a].startswith("## ") and b < len(lines) and \
                lines[b].startswith("### "):
            continue  # a section that opens with a subsection
        expect(body, f"empty section: {lines[a]}")
    text = md.replace("nothing is estimated or extrapolated", "")
    for bad in ("TODO", "placeholder", "estimate", "n/a |", "nan", "inf "):
        expect(bad not in text, f"'{bad}' in the report")


def sections(md):
    return [l[3:] for l in md.split("\n") if l.startswith("## ")]


def png_size(path):
    """(width, height) from a PNG's signature and IHDR chunk."""
    with open(path, "rb") as f:
        head = f.read(24)
    expect(head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG")
    expect(head[12:16] == b"IHDR", f"{path}: no IHDR chunk first")
    return struct.unpack(">II", head[16:24])


# ---- report -----------------------------------------------------------------

def golden_report():
    d = workdir("golden", "mixed.json", "baseline.json", "numpy.json")
    p = run(["report", "mixed.json", "--baseline", "baseline.json",
             "--with", "numpy.json", "--no-charts", "-o", "report.md"], d)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    with open(os.path.join(d, "report.md"), encoding="utf-8") as f:
        return f.read()


@case("report of the fixture equals the golden file")
def t_golden():
    md = golden_report()
    if os.environ.get("TBENCH_UPDATE_GOLDEN"):
        with open(GOLDEN, "w", encoding="utf-8") as f:
            f.write(md)
    with open(GOLDEN, encoding="utf-8") as f:
        want = f.read()
    if md != want:
        import difflib
        diff = "".join(difflib.unified_diff(
            want.splitlines(True), md.splitlines(True), "golden.md",
            "report.md", n=1))
        raise AssertionError("report differs from golden.md:\n" +
                             diff[:3000])


@case("report flags a roofline fraction above 100% with the recorded reasons")
def t_over_peak():
    d = workdir("overpeak", "mixed.json")
    path = os.path.join(d, "mixed.json")
    doc = json.load(open(path))
    c = next(c for c in doc["cases"] if c.get("roofline"))
    c["roofline"]["fraction"] = 4.17
    doc["peaks"]["load_avg_1m"] = 9.5
    json.dump(doc, open(path, "w"))
    p = run(["report", "mixed.json", "--no-charts", "-o", "r.md"], d)
    expect(p.returncode == 0, p.stderr)
    md = open(os.path.join(d, "r.md"), encoding="utf-8").read()
    row = next((l for l in md.split("\n") if "417%" in l), "")
    expect("417% (**above the roof**: " in row, f"not flagged: {row}")
    expect("1 case runs above 100% of its roofline" in md and
           "load average was 9.50 on 2 logical CPUs" in md and
           "`roofline.level`" in md, "no reason given")
    # without the load, only the cache-level reason
    doc["peaks"]["load_avg_1m"] = 0.2
    json.dump(doc, open(path, "w"))
    p = run(["report", "mixed.json", "--no-charts", "-o", "r2.md"], d)
    md = open(os.path.join(d, "r2.md"), encoding="utf-8").read()
    expect("load average" not in md.split("above 100% of")[1][:400],
           "load blamed without load")


@case("report: every roofline fraction above 100% names its measured cause")
def t_over_roof_causes():
    # the committed report data: peaks without an L1 level or an update
    # kernel, roofs from before they were monotone in threads
    src = os.path.abspath("docs/perf-data/results.json")
    d = tempfile.mkdtemp(prefix="roofs-", dir=TMP)
    p = run(["report", src, "--no-charts", "-o", "r.md"], d)
    expect(p.returncode == 0, p.stderr)
    md = open(os.path.join(d, "r.md"), encoding="utf-8").read()
    over = 0
    for line in md.split("\n"):
        for m in re.finditer(r"\| (\d+)% ([^|]*)\|", line):
            if int(m.group(1)) <= 100:
                continue
            over += 1
            expect(m.group(2).startswith("(**above the roof**: ") and
                   len(m.group(2)) > 30, f"unflagged: {line[:160]}")
    doc = json.load(open(src))
    want = sum(1 for c in doc["cases"] if c.get("status") == "ok" and
               (c.get("roofline") or {}).get("fraction", 0) > 1.005)
    expect(over >= want - 2, f"{over} rows above 100%, {want} cases in "
           "the data")
    # a case held to a 2-thread figure below the 1-thread one says so
    # (only where the committed peaks have such a pair)
    pairs = {}
    for e in doc["peaks"]["bandwidth"]:
        pairs.setdefault((e["kernel"], e["level"]), {})[e["threads"]] = \
            e["best_gb_s"]
    if any(v.get(2, 1e99) < v.get(1, 0) for v in pairs.values()) and \
            "below the 1-thread one" in md:
        expect("a roof from before roofs were monotone" in md, "cause text")


@case("report: scaling anomalies name a cache-level crossing, and only "
      "counters that rose")
def t_scaling_causes():
    src = os.path.abspath("docs/perf-data/results.json")
    d = tempfile.mkdtemp(prefix="scaling-", dir=TMP)
    p = run(["report", src, "--no-charts", "-o", "r.md"], d)
    expect(p.returncode == 0, p.stderr)
    md = open(os.path.join(d, "r.md"), encoding="utf-8").read()
    sec = md.split("## Scaling anomalies", 1)
    expect(len(sec) == 2, "no scaling section")
    doc = json.load(open(src))
    level = {c["id"]: (c.get("roofline") or {}).get("level")
             for c in doc["cases"]}
    rows = [l for l in sec[1].split("\n## ")[0].split("\n")
            if l.startswith("| ") and not l.startswith("| Op ")]
    for r in rows:
        c = cells(r)
        opp, dt, var, a, z, why = c[0], c[1], c[2], c[3], c[4], c[7]

        def num(t):
            mult = {"k": 1e3, "M": 1e6, "G": 1e9}.get(t[-1], 1)
            return float(t[:-1] if mult != 1 else t) * mult
        for x, y in re.findall(r"_(?:faults|switches) ([^\s,]+) → ([^\s,]+)",
                               why):
            expect(num(y) > num(x), f"a counter that did not rise: {r}")
        la = level.get(f"{opp}/{a}/{dt}/{var}")
        lz = level.get(f"{opp}/{z}/{dt}/{var}")
        if la and lz and la != lz:
            expect(f"working set {la} → {lz}" in why, f"crossing not named: "
                                                       f"{r}")
        else:
            expect("working set" not in why, f"a crossing named: {r}")


def check_guidelines(md, docs):
    """Every guideline sentence against the Summary and the records: a
    range's ends are sizes whose Summary row names the same fastest and
    the same verdict, and that fastest has the lowest median among the
    records of its op, shapes and dtype."""
    summ = {}
    for _, head, rows in tables(md):
        if not head.startswith("| Op | Shapes | Dtype | Fastest |"):
            continue
        for r in rows:
            c = cells(r)
            if len(c) >= 8:
                summ[(c[0], c[1], c[2])] = (c[3], c[7])
    meds = {}
    for doc in docs:
        for c in doc["cases"]:
            if c.get("status") != "ok":
                continue
            k = c["id"].rsplit("/", 1)[0]
            meds.setdefault(k, []).append((c["stats"]["median_ns"], c["id"]))
    sec = md.split("### Selection guidelines (measured)", 1)
    expect(len(sec) == 2, "no guidelines")
    bullets = [l for l in sec[1].split("\n## ")[0].split("\n")
               if l.startswith("- ")]
    expect(bullets, "no guideline")
    n = 0
    for b in bullets:
        m = re.fullmatch(r"- (\S+) (\w+)(, data starting on the host)?: "
                         r"(.*)\.", b)
        expect(m, f"guideline: {b}")
        if m.group(3):
            continue  # the @transfers view: not the Summary's
        opp, dt = m.group(1), m.group(2)
        for seg in re.split(r"; (?=at )", m.group(4)):
            sm = re.fullmatch(r"at (\S+?)(?: to (\S+?))?: (.*)", seg)
            expect(sm, f"segment: {seg}")
            for shapes in filter(None, (sm.group(1), sm.group(2))):
                row = summ.get((opp, shapes, dt))
                expect(row, f"{opp} {shapes} {dt}: no Summary row")
                fastest, winner = row
                what = sm.group(3)
                if what.startswith("use "):
                    expect(what.startswith(f"use {fastest} ") and
                           winner.startswith("yes"),
                           f"{b}: Summary says {row}")
                    ids = sorted(meds[f"{opp}/{shapes}/{dt}"])
                    expect(ids[0][1].endswith("/" + fastest),
                           f"{opp} {shapes}: fastest record {ids[0]}")
                elif "inconclusive" in what:
                    expect(winner.startswith("no winner (inconclusive)"),
                           f"{b}: Summary says {row}")
                else:
                    expect("equal within the threshold" in what and
                           winner.startswith("no winner (equal"),
                           f"{b}: Summary says {row}")
                n += 1
    return n


@case("report: every selection guideline agrees with the Summary and the "
      "records (committed data)")
def t_guidelines_committed():
    src = os.path.abspath("docs/perf-data/results.json")
    npy = os.path.abspath("docs/perf-data/numpy.json")
    d = tempfile.mkdtemp(prefix="guide-", dir=TMP)
    p = run(["report", src, "--with", npy, "--no-charts", "-o", "r.md"], d)
    expect(p.returncode == 0, p.stderr)
    md = open(os.path.join(d, "r.md"), encoding="utf-8").read()
    n = check_guidelines(md, [json.load(open(src)), json.load(open(npy))])
    expect(n >= 10, f"only {n} sizes checked")


@case("report: guidelines without a reference backend (one variant a case "
      "in the run, a peer's beside it) are a section of their own, audited")
def t_guidelines_no_reference():
    src = json.load(open("docs/perf-data/results.json", encoding="utf-8"))
    d = tempfile.mkdtemp(prefix="guide1-", dir=TMP)
    seen, cases = set(), []
    for c in src["cases"]:
        key = (c["op"], json.dumps(c.get("shapes")), c["dtype"],
               json.dumps(c.get("params")))
        if c["status"] == "ok" and key not in seen:
            seen.add(key)
            cases.append(c)
    src["cases"] = cases[:40]
    src["summary"] = {k: 0 for k in src["summary"]}
    src["summary"].update(cases=40, ok=40)
    with open(os.path.join(d, "one.json"), "w", encoding="utf-8") as f:
        json.dump(src, f)
    shutil.copy("docs/perf-data/numpy.json", d)
    p = run(["report", "one.json", "--with", "numpy.json", "--no-charts",
             "-o", "r.md"], d)
    expect(p.returncode == 0, p.stderr)
    md = open(os.path.join(d, "r.md"), encoding="utf-8").read()
    expect("## Backend speedups" not in md, "a speedups table without a "
           "second variant")
    expect("\n## Selection guidelines (measured)\n" in md,
           "no guidelines section")
    a = subprocess.run(["/usr/bin/python3", "scripts/audit_report.py",
                        "--report", os.path.join(d, "r.md"), "--root", d,
                        "--tbench", TBENCH], capture_output=True, text=True,
                       timeout=600)
    expect(a.returncode == 0 and ", 0 mismatches" in a.stdout,
           f"audit: {a.returncode}\n{a.stdout}{a.stderr}")


@case("report: the Python layer's per-call figures with their CIs; one "
      "above the library's fastest case is called out (ux review D13)")
def t_python_overhead():
    src = os.path.abspath("docs/perf-data/results.json")
    npy = json.load(open("docs/perf-data/numpy.json", encoding="utf-8"))
    d = tempfile.mkdtemp(prefix="pyov-", dir=TMP)
    fastest = min(c["stats"]["median_ns"] for c in npy["cases"]
                  if c["status"] == "ok" and c["backend"] == "numpy" and
                  "form=out" in c["id"])
    ov = npy["env"]["python_overhead"]
    ov["numpy_add_1_element_out_ns"] = 2 * fastest
    ov["ci_ns"] = {"numpy_add_1_element_out_ns": [1.5 * fastest,
                                                   2.5 * fastest],
                   "python_noop_call_ns": [30.0, 45.0]}
    with open(os.path.join(d, "numpy.json"), "w", encoding="utf-8") as f:
        json.dump(npy, f)
    p = run(["report", src, "--with", "numpy.json", "--no-charts", "-o",
             "r.md"], d)
    expect(p.returncode == 0, p.stderr)
    md = open(os.path.join(d, "r.md"), encoding="utf-8").read()
    expect("| Call | Median | 95% CI |" in md, "no CI column")
    expect(re.search(r"\| python noop call \| [0-9.]+ ns \| 30(\.0)? ns – "
                     r"45(\.0)? ns \|", md), "noop CI not printed")
    expect("| torch add 1 element out |" in md and
           "not recorded (an older script)" in md, "torch without a CI")
    expect("The numpy 1-element call" in md and
           "took longer than the whole" in md, "contradiction not said")
    expect("The torch 1-element call" not in md, "torch wrongly flagged")
    # the committed data: figures below the fastest cases, no such note
    p = run(["report", src, "--with", os.path.abspath(
        "docs/perf-data/numpy.json"), "--no-charts", "-o", "c.md"], d)
    md = open(os.path.join(d, "c.md"), encoding="utf-8").read()
    expect(p.returncode == 0 and "took longer than the whole" not in md,
           "committed data flagged")


@case("report names a winner or a crossover only where compare's test finds one")
def t_no_winner():
    d = workdir("tie", "mixed.json")
    path = os.path.join(d, "mixed.json")
    doc = json.load(open(path))
    by = {c["id"]: c for c in doc["cases"]}
    # threads=2 gets threads=1's samples x 1.01 at every size of add: a
    # 1% difference, under compare's 2% threshold
    for n in ("1000", "100000", "1000000"):
        one = by[f"add/{n},{n}/f32/cpu[threads=1]"]
        two = by[f"add/{n},{n}/f32/cpu[threads=2]"]
        two["stats"] = json.loads(json.dumps(one["stats"]))
        st = two["stats"]
        for k in ("samples_ns",):
            st[k] = [v * 1.01 for v in st[k]]
        for k in ("min_ns", "max_ns", "median_ns", "mean_ns", "p5_ns",
                  "p95_ns", "ci_low_ns", "ci_high_ns", "stddev_ns",
                  "mad_ns"):
            st[k] = st[k] * 1.01
    json.dump(doc, open(path, "w"))
    p = run(["report", "mixed.json", "--no-charts", "-o", "r.md"], d)
    expect(p.returncode == 0, p.stderr)
    md = open(os.path.join(d, "r.md"), encoding="utf-8").read()
    rows = [r for _, h, rs in tables(md) if "Winner" in h for r in rs
            if cells(r)[0] == "add"]
    expect(len(rows) == 3 and all(cells(r)[7].startswith("no winner")
                                  for r in rows), f"{rows}")
    guide = md.split("Selection guidelines")[1].split("\n## ")[0]
    add = [l for l in guide.split("\n") if l.startswith("- add f32:")]
    expect(len(add) == 1 and "use " not in add[0] and
           add[0].startswith("- add f32: at 1000,1000 to 1000000,1000000: "
                             "no winner: "), f"guideline: {add}")


@case("report has its sections, no empty table, no empty section")
def t_sections():
    md = golden_report()
    check_markdown(md)
    want = ["How to reproduce", "Build configuration", "Environment",
            "Summary: fastest backend per op and size", "Element-wise",
            "Activations", "Matrix multiplication", "Fused ops",
            "Backend speedups", "Kernel launches and allocations per op",
            "Fused vs unfused", "Scaling anomalies", "Complexity",
            "More threads, slower",
            "Comparison with the baseline",
            "Side by side with NumPy and PyTorch", "Noisiest cases",
            "Cases that did not run"]
    have = sections(md)
    expect(have == want, f"sections {have}, want {want}")
    # sections without data are left out
    for absent in ("Reductions", "Optimizers", "Linear algebra",
                   "API overhead"):
        expect(absent not in have, f"section '{absent}' without data")
    expect("![" not in md, "--no-charts report links an image")
    expect(md.startswith("# tbench performance report\n\nGenerated by "
                         "`tbench report mixed.json --baseline baseline.json"
                         " --with numpy.json --no-charts -o report.md`"),
           "the top does not state the command")


@case("report numbers agree with the fixture (independent computation)")
def t_numbers():
    md = golden_report()
    doc = load("mixed.json")
    by = {c["id"]: c for c in doc["cases"]}

    def med(i):
        return by[i]["stats"]["median_ns"]
    # speedup of cpu[threads=2] over cpu[threads=1] for add at 1e5
    sp = med("add/100000,100000/f32/cpu[threads=1]") / \
        med("add/100000,100000/f32/cpu[threads=2]")
    row = [r for _, h, rows in tables(md) if "Speedup" in h for r in rows
           if r.startswith("| add | 100000,100000 |")]
    expect(len(row) == 1, f"speedup rows: {row}")
    expect(cells(row[0])[6] == f"{sp:.2f}x", f"{row[0]} vs {sp:.3f}")
    # the crossover of add: threads=1 wins at 1000, threads=2 from 100000
    # on (the guideline names the best variant at each size, and the
    # ratio to the next: 6x, then 1.33-1.67x)
    expect("- add f32: at 1000,1000: use cpu[threads=1] (6x faster than the "
           "next, cpu[threads=2]); at 100000,100000 to 1000000,1000000: use "
           "cpu[threads=2] (1.33-1.67x faster than the next, cpu[threads=1])."
           in md, "add crossover missing")
    n = check_guidelines(md, [load("mixed.json"), load("numpy.json")])
    expect(n >= 5, f"{n} guideline sizes checked")
    # scaling anomaly: relu 1e5 -> 1e6, 10x work, 50x time
    r5 = med("relu/100000/f32/cpu[threads=1]")
    r6 = med("relu/1000000/f32/cpu[threads=1]")
    expect(abs(r6 / r5 - 50) < 1e-9, "fixture changed")
    rows = [r for _, h, rs in tables(md) if "Work grew" in h for r in rs]
    expect(len(rows) == 1 and cells(rows[0])[:3] ==
           ["relu", "f32", "cpu[threads=1]"] and cells(rows[0])[5:7] ==
           ["10x", "50x"] and cells(rows[0])[7] ==
           "minor_faults 0 → 0.5",  # the switches did not rise
           f"anomaly rows: {rows}")
    # baseline: regressed +10%, improved -20%, failed, removed 1
    base = {c["id"]: c for c in load("baseline.json")["cases"]}
    i = "add/1000000,1000000/f32/cpu[threads=1]"
    ch = med(i) / base[i]["stats"]["median_ns"] - 1
    expect(f"| `{i}` |" in md and f"+{100 * ch:.1f}% |" in md and
           "**regressed**" in md, "regression row")
    expect("1 regressed, 1 improved, 1 unchanged, 11 inconclusive, 1 "
           "missing; 1 status failure, 0 counter regressions; 0 cases only "
           "in the current run, 1 only in the baseline." in md,
           "baseline summary line")
    # fused vs unfused: add_relu against add + relu at 100000
    fused = med("add_relu/100000,100000/f32/cpu[threads=1]")
    unf = med("add/100000,100000/f32/cpu[threads=1]") + r5
    expect(f"| {unf / fused:.2f}x |" in md, "fused speedup")
    # roofline fractions from the cases
    expect("| 33% |" in md and "| 27% |" in md, "roofline fractions")
    # side by side: tbench speedup over the fastest numpy form
    nump = [c for c in load("numpy.json")["cases"] if c["status"] == "ok" and
            c["id"].startswith("add/1000000,1000000/f32/numpy[threads=1,")]
    best = min(c["stats"]["median_ns"] for c in nump)
    want = best / med("add/1000000,1000000/f32/cpu[threads=1]")
    rows = [r for _, h, rs in tables(md) if "tbench speedup" in h for r in rs
            if r.startswith("| add | 1000000,1000000 | f32 | 1 |")]
    expect(len(rows) == 1 and cells(rows[0])[-1] == f"{want:.2f}x",
           f"side-by-side row {rows} vs {want:.3f}")
    expect("`torch` is unavailable: PyTorch cannot be imported" in md,
           "torch unavailable reason")


@case("report of a single case: only the sections with data")
def t_single():
    d = workdir("single", "single.json")
    p = run(["report", "single.json", "-o", "out/report.md"], d)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    with open(os.path.join(d, "out", "report.md"), encoding="utf-8") as f:
        md = f.read()
    check_markdown(md)
    have = sections(md)
    expect(have == ["How to reproduce", "Build configuration",
                    "Environment", "Summary: fastest backend per op and "
                    "size", "Element-wise",
                    "Kernel launches and allocations per op",
                    "Noisiest cases"], f"sections {have}")
    if HAVE_GNUPLOT:
        links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
        expect(links, "no chart linked")
        for l in links:
            expect(os.path.isfile(os.path.join(d, "out", l)),
                   f"linked chart {l} missing")


@case("report: usage and input errors exit 2 with one line")
def t_report_errors():
    d = workdir("errors", "mixed.json", "single.json")
    with open(os.path.join(d, "bad.json"), "w", encoding="utf-8") as f:
        f.write('{"schema": "tbench.results/1",\n "cases": [1,}\n')
    with open(os.path.join(d, "other.json"), "w", encoding="utf-8") as f:
        f.write('{"schema": "something/9", "cases": []}')
    for args, needle in (
            (["report", "mixed.json"], "-o FILE is required"),
            (["report", "-o", "r.md"], "no result file"),
            (["report", "mixed.json", "single.json", "-o", "r.md"],
             "one result file expected"),
            (["report", "nope.json", "-o", "r.md"], "nope.json"),
            (["report", "bad.json", "-o", "r.md"], "bad.json: truncated"),
            (["report", "other.json", "-o", "r.md"],
             'schema is "something/9"'),
            (["report", "mixed.json", "--with", "nope.json", "-o", "r.md"],
             "tbench: nope.json"),
            (["report", "mixed.json", "--charts", "../x", "-o", "r.md"],
             "--charts"),
            (["report", "mixed.json", "--format", "png", "-o", "r.md"],
             "not an option of this command"),
            (["plot", "mixed.json"], "-o DIR is required"),
            (["plot", "mixed.json", "-o", "p", "--format", "gif"],
             "--format"),
            (["plot", "mixed.json", "-o", "p", "--no-charts"],
             "not an option of this command")):
        p = run(args, d)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        expect(p.returncode == 2, f"{args}: exit {p.returncode}")
        expect(lines and lines[0].startswith("tbench: ") and
               needle in lines[0], f"{args}: {lines}")
        expect(not os.path.exists(os.path.join(d, "r.md")),
               f"{args}: wrote a report")


# ---- plot -----------------------------------------------------------------------

@case("plot: PNG and SVG charts are real images, scripts kept")
def t_plot():
    if not HAVE_GNUPLOT:
        return "SKIP gnuplot not installed"
    d = workdir("plot", "mixed.json", "baseline.json", "numpy.json")
    p = run(["plot", "mixed.json", "--baseline", "baseline.json", "--with",
             "numpy.json", "-o", "charts"], d)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    c = os.path.join(d, "charts")
    want = ["time-add-f32", "throughput-add-f32", "speedup-add-f32",
            "time-matmul-f32", "throughput-matmul-f32", "speedup-matmul-f32",
            "time-relu-f32", "summary-fused-f32", "change", "noise"]
    for n in want:
        for ext in ("gp", "dat", "png", "svg"):
            f = os.path.join(c, f"{n}.{ext}")
            expect(os.path.isfile(f) and os.path.getsize(f) > 0,
                   f"{n}.{ext} missing")
        w, h = png_size(os.path.join(c, f"{n}.png"))
        expect(w == 900 and h >= 300, f"{n}.png is {w}x{h}")
        with open(os.path.join(c, f"{n}.svg"), encoding="utf-8") as f:
            expect("<svg" in f.read(2000), f"{n}.svg is not SVG")
    # ops measured at one size only (add_relu, sum in f64) get no chart
    # of their own but a bar cluster in their category's summary, on a
    # log axis with SI ticks; none for the op that did not run anywhere,
    # no speedup for relu (one backend)
    expect(not os.path.exists(os.path.join(c, "time-add_relu-f32.gp")),
           "a single-bar chart of its own")
    with open(os.path.join(c, "summary-fused-f32.gp"), encoding="utf-8") as f:
        gp = f.read()
    expect("histogram errorbars" in gp and "set logscale y" in gp and
           "set format y '%.0s %cs'" in gp, "summary: not clustered bars")
    with open(os.path.join(c, "summary-fused-f32.dat"), encoding="utf-8") as f:
        rows = [l.split() for l in f if not l.startswith("#")]
    expect(len(rows) == 1 and rows[0][0] == '"add_relu"' and
           len(rows[0]) >= 4 and (len(rows[0]) - 1) % 3 == 0,
           f"summary rows {rows}")
    expect(os.path.getsize(os.path.join(c, "summary-fused-f32.png")) > 0,
           "summary-fused-f32.png")
    # sum (f64) failed its check: no summary of its category
    expect(not os.path.exists(os.path.join(c, "summary-reduction-f64.gp")),
           "a summary of a case that failed")
    # the fixture carries roofline objects: a roofline chart of cpu, each
    # case at FLOPs/byte of its cost model
    with open(os.path.join(c, "roofline-cpu.dat"), encoding="utf-8") as f:
        pts = [l.split() for l in f if not l.startswith("#")]
    ref = json.load(open(os.path.join(d, "mixed.json")))
    want_pts = {(c2["model"]["flops"] / c2["model"]["bytes"])
                for c2 in ref["cases"] if c2["backend"] == "cpu" and
                c2["status"] == "ok" and c2.get("roofline") and
                c2["model"]["flops"] and c2["model"]["bytes"]}
    expect(len(pts) >= 1 and {round(float(p[0]), 6) for p in pts} ==
           {round(v, 6) for v in want_pts}, f"roofline points {pts}")
    expect(not os.path.exists(os.path.join(c, "time-log_softmax-f32.gp")),
           "chart of a case that did not run")
    expect(not os.path.exists(os.path.join(c, "speedup-relu-f32.gp")),
           "speedup chart with a single backend")
    # the throughput chart draws the measured FMA peaks of its dtype
    with open(os.path.join(c, "throughput-matmul-f32.gp"),
              encoding="utf-8") as f:
        gp = f.read()
    expect("FMA peak avx2 f32, 2 threads: 160" in gp, "peak line missing")
    # labels: title, axes with units, legend outside
    with open(os.path.join(c, "time-add-f32.gp"), encoding="utf-8") as f:
        gp = f.read()
    # SI ticks with units ("10 us", "1M"), legend below the plot
    for s in ("set title", "set xlabel 'size (elements",
              "set ylabel 'time per call'", "set format y '%.0s %cs'",
              "set format x '%.0s%c'", "set key below",
              "set logscale x", "set logscale y", "yerrorlines"):
        expect(s in gp, f"'{s}' not in time-add-f32.gp")
    # matmul's x axis names M x N x K
    with open(os.path.join(c, "time-matmul-f32.gp"), encoding="utf-8") as f:
        gp = f.read()
    expect("set xlabel 'M x N x K'" in gp and "xtic(5)" in gp, "matmul axis")
    with open(os.path.join(c, "time-matmul-f32.dat"), encoding="utf-8") as f:
        dat = f.read()
    expect(re.search(r'"\d+x\d+x\d+"', dat), "no MxNxK labels")
    # the change chart colours by verdict: one red (regressed) bar
    with open(os.path.join(c, "change.dat"), encoding="utf-8") as f:
        rows = [l.split() for l in f if not l.startswith("#")]
    red = [r for r in rows if r[2] == str(0xd62728)]
    expect(len(red) == 1 and "add/1000000,1000000/f32/cpu[threads=1]" in
           " ".join(red[0]), f"regressed bars: {red}")


@case("plot: at most 8 lines a chart, in parts, each its colour and "
      "point shape; roofline points named by op")
def t_plot_parts():
    if not HAVE_GNUPLOT:
        return "SKIP gnuplot not installed"
    d = workdir("parts", "mixed.json")
    doc = json.load(open(os.path.join(d, "mixed.json"), encoding="utf-8"))
    adds = [c for c in doc["cases"] if c["op"] == "add" and
            c["backend_params"].get("threads") == "1"]
    for t in range(3, 12):  # eleven thread counts: eleven series of add
        for c in adds:
            n = json.loads(json.dumps(c))
            n["backend_params"]["threads"] = str(t)
            n["id"] = c["id"].replace("threads=1]", f"threads={t}]")
            n["roofline"] = None
            doc["cases"].append(n)
    with open(os.path.join(d, "many.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f)
    p = run(["plot", "many.json", "-o", "charts", "--no-render"], d)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    c = os.path.join(d, "charts")
    styles = []
    for name, n in (("time-add-f32", 8), ("time-add-f32-2", 3)):
        with open(os.path.join(c, f"{name}.gp"), encoding="utf-8") as f:
            gp = f.read()
        lines = re.findall(r"with yerrorlines lw 2 (lc rgb '[^']+' dt \d+ "
                           r"pt \d+)", gp)
        expect(len(lines) == n, f"{name}: {len(lines)} lines, want {n}")
        expect(f"(part {1 if n == 8 else 2} of 2)" in gp, f"{name}: title")
        styles.append(lines)
    colours = [re.search(r"'(#\w+)'", l).group(1) for l in styles[0]]
    shapes = [re.search(r"pt (\d+)", l).group(1) for l in styles[0]]
    expect(len(set(colours)) == 8 and len(set(shapes)) == 8,
           f"colours {colours}, shapes {shapes}")
    with open(os.path.join(c, "roofline-cpu.dat"), encoding="utf-8") as f:
        labels = [l.rsplit(" ", 1)[1].strip() for l in f
                  if not l.startswith("#")]
    named = [l for l in labels if l != '""']
    expect(len(named) == len(set(named)) and '"matmul"' in named,
           f"roofline labels {labels}")


@case("plot: without gnuplot, scripts and data are kept, exit 0")
def t_plot_no_gnuplot():
    d = workdir("nognuplot", "mixed.json")
    p = run(["plot", "mixed.json", "-o", "charts"], d,
            env={"TBENCH_GNUPLOT": "/nonexistent/gnuplot"})
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    expect("gnuplot not found" in p.stderr, f"stderr: {p.stderr}")
    c = os.path.join(d, "charts")
    names = os.listdir(c)
    expect("time-add-f32.gp" in names and "time-add-f32.dat" in names,
           f"scripts missing: {names}")
    expect(not [n for n in names if n.endswith((".png", ".svg"))],
           f"images without gnuplot: {names}")
    # and the report says so too, linking no image
    p = run(["report", "mixed.json", "-o", "r.md"], d,
            env={"TBENCH_GNUPLOT": "/nonexistent/gnuplot"})
    expect(p.returncode == 0 and "gnuplot not found" in p.stderr,
           f"report: {p.returncode} {p.stderr}")
    with open(os.path.join(d, "r.md"), encoding="utf-8") as f:
        expect("![" not in f.read(), "report links images never made")


@case("plot: several runs of one matrix give history charts with change "
      "points")
def t_history():
    d = workdir("history")
    doc = load("mixed.json")
    key = "add/1000000,1000000/f32/cpu[threads=1]"
    files = []
    for r in range(6):
        x = json.loads(json.dumps(doc))
        x["env"]["date"] = f"2025-01-0{r + 1}T00:00:00Z"
        for c in x["cases"]:
            if c["id"] == key:      # a 30% step from run 4 on
                f = 1.3 if r >= 3 else 1.0
                st = c["stats"]
                for k in ("median_ns", "ci_low_ns", "ci_high_ns"):
                    st[k] *= f
                st["samples_ns"] = [v * f for v in st["samples_ns"]]
        name = os.path.join(d, f"run{r}.json")
        with open(name, "w", encoding="utf-8") as f:
            json.dump(x, f)
        files.append(name)
    p = run(["plot", *files, "-o", "charts", "--no-render"], d)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    path = os.path.join(d, "charts", "history-add-f32.dat")
    expect(os.path.isfile(path), "no history chart")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    cp = text.split("# change points\n")
    expect(len(cp) == 2, "no change point found")
    pts = [l.split() for l in cp[1].splitlines() if l.strip()]
    expect([p_[0] for p_ in pts] == ["4"], f"change points at {pts}")
    # two unrelated files are merged, not a history
    p = run(["plot", os.path.join(DATA, "mixed.json"),
             os.path.join(DATA, "numpy.json"), "-o", "merged",
             "--no-render"], d)
    expect(p.returncode == 0, p.stderr)
    expect(not [n for n in os.listdir(os.path.join(d, "merged"))
                if n.startswith("history-")], "history of unrelated files")


# ---- one loader, one verdict, one change-point algorithm ------------------------

def first_line(p):
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    return lines[0] if lines else ""


@case("compare, report and plot reject bad files with the same line")
def t_one_loader():
    d = workdir("loader", "mixed.json")
    doc = load("mixed.json")
    with open(os.path.join(d, "mixed.json"), encoding="utf-8") as f:
        text = f.read()
    bad = {"truncated.json": text[:len(text) // 2]}
    x = json.loads(text)
    x["schema"] = "tbench.results/0"
    bad["schema.json"] = json.dumps(x)
    # a median of 1e999 parses as infinity (plot used to crash on it)
    bad["inf.json"] = text.replace(
        '"median_ns":%s,' % json.dumps(doc["cases"][0]["stats"]
                                       ["median_ns"]),
        '"median_ns":1e999,', 1)
    expect(bad["inf.json"] != text, "fixture: median not replaced")
    x = json.loads(text)
    for c in x["cases"]:
        c["id"] = "other/" + c["id"]
    bad["other.json"] = json.dumps(x)
    for name, body in bad.items():
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(body)
    want = {
        "truncated.json": "tbench: truncated.json: truncated: ",
        "schema.json": 'tbench: schema.json: schema is "tbench.results/0", '
                       'expected "tbench.results/1"',
        "inf.json": "tbench: inf.json: cases[0] (%s): stats.median_ns: "
                    "expected a finite number, got inf" % doc["cases"][0]["id"],
        "other.json": "tbench: other.json: no case id in common with "
                      "mixed.json (a different matrix?)",
    }
    for name, prefix in want.items():
        runs = [["compare", name, "mixed.json"],
                ["report", "mixed.json", "--baseline", name, "--no-charts",
                 "-o", "r.md"],
                ["plot", "mixed.json", "--baseline", name, "-o", "p",
                 "--no-render"]]
        if name != "other.json":   # a file on its own, not only as a pair
            runs += [["report", name, "-o", "r.md"],
                     ["plot", name, "-o", "p", "--no-render"],
                     ["history", "mixed.json", name]]
        lines = set()
        for args in runs:
            p = run(args, d)
            expect(p.returncode == 2, f"{args}: exit {p.returncode}")
            expect(len(p.stderr.strip().splitlines()) == 1,
                   f"{args}: {p.stderr}")
            lines.add(first_line(p))
        expect(len(lines) == 1, f"{name}: different messages {lines}")
        line = lines.pop()
        expect(line.startswith(prefix), f"{name}: {line!r}")
        expect(not os.path.exists(os.path.join(d, "r.md")), "wrote a report")


def baseline_rows(md):
    """{case id: verdict} from the report's baseline table."""
    out = {}
    for _, head, rows in tables(md):
        if not head.startswith("| Case | Baseline | Current |"):
            continue
        for r in rows:
            c = cells(r)
            out[c[0].strip("`")] = c[-1].strip("*")
    return out


@case("report's baseline verdicts equal compare's, case by case")
def t_report_agrees_with_compare():
    d = workdir("agree", "mixed.json", "baseline.json")
    for thr in ("2", "5"):
        p = run(["report", "mixed.json", "--baseline", "baseline.json",
                 "--threshold", thr, "--no-charts", "-o", "r.md"], d)
        expect(p.returncode == 0, p.stderr)
        with open(os.path.join(d, "r.md"), encoding="utf-8") as f:
            rows = baseline_rows(f.read())
        p = run(["compare", "baseline.json", "mixed.json", "--threshold", thr,
                 "--format", "json"], d)
        expect(p.returncode in (0, 1), p.stderr)
        cmp = json.loads(p.stdout)
        want = {}
        for c in cmp["cases"]:
            if c["presence"] != "both" or (c["time"] is None and
                                           c["status_change"] == "same"):
                continue        # one side only, or ran in neither
            want[c["id"]] = c["verdict"]
        expect(rows == want, f"threshold {thr}: report {rows} != compare "
                             f"{want}")
        if thr == "2":
            got = set(want.values())
            expect({"regressed", "improved", "unchanged", "inconclusive",
                    "failure"} <= got,
                   f"fixture pair lacks a verdict: {got}")
            # 3% slower with the CIs apart, but not significant: the old
            # CI-overlap rule called it regressed, compare does not; nor
            # does it call it unchanged (its CI reaches past 2%)
            expect(want["relu/100000/f32/cpu[threads=1]"] == "inconclusive",
                   want)


@case("plot's history change points are those of tbench history")
def t_plot_history_matches_history():
    d = workdir("cp")
    doc = load("mixed.json")
    steps = {"add/1000000,1000000/f32/cpu[threads=1]": (3, 1.3),
             "add/1000,1000/f32/cpu[threads=2]": (5, 0.75),
             "add/100000,100000/f32/cpu[threads=2]": (2, 1.015)}
    files = []
    for r in range(8):
        x = json.loads(json.dumps(doc))
        x["env"]["date"] = f"2025-01-0{r + 1}T00:00:00Z"
        for c in x["cases"]:
            at, f = steps.get(c["id"], (99, 1))
            f = f if r >= at else 1.0
            # a little run-to-run wobble everywhere
            f *= 1 + 0.002 * ((r * 5) % 3 - 1)
            if c["stats"]:
                st = c["stats"]
                for k in ("median_ns", "ci_low_ns", "ci_high_ns", "min_ns",
                          "mean_ns"):
                    st[k] *= f
                st["samples_ns"] = [v * f for v in st["samples_ns"]]
        name = f"run{r}.json"
        with open(os.path.join(d, name), "w", encoding="utf-8") as fh:
            json.dump(x, fh)
        files.append(name)
    p = run(["history", *files, "--format", "json"], d)
    expect(p.returncode == 0, p.stderr)
    hist = json.loads(p.stdout)
    want = sorted(s["run"] + 1 for c in hist["cases"]
                  if c["id"].startswith("add/") and "/f32/" in c["id"]
                  for s in c["steps"])
    expect(want == [4, 6], f"history found {want}")
    p = run(["plot", *files, "-o", "charts", "--no-render"], d)
    expect(p.returncode == 0, p.stderr)
    with open(os.path.join(d, "charts", "history-add-f32.dat"),
              encoding="utf-8") as f:
        parts = f.read().split("# change points\n")
    got = sorted(int(l.split()[0]) for l in
                 (parts[1].splitlines() if len(parts) == 2 else [])
                 if l.strip())
    expect(got == want, f"plot marks runs {got}, history {want}")


# ---- compare_numpy.py -----------------------------------------------------------

TINY = """// tiny: comments // and /* */ outside strings are stripped,
/* but "a // b" inside a string is kept */
{
  "name": "tiny-np", "seed": 7,
  "warmup": {"min_time_ms": 1, "min_iters": 2},
  "measure": {"sample_time_ms": 0.2, "min_samples": 5, "max_samples": 30,
              "ci_target": 0.05, "max_time_s": 0.02},
  "dtypes": ["f32"],
  "ops": [
    {"op": "add", "shapes": [[7, 13], [[3, 1, 5], [1, 4, 5]]]},
    {"op": "sum", "shapes": [[33, 5]], "params": [{"axis": 0}]},
    {"op": "matmul", "shapes": [[[5, 7], [7, 3]]], "dtypes": ["f64"]},
    {"op": "log_softmax", "shapes": [[4, 10]]}
  ]
}
"""


def compare_numpy(env=None, extra=()):
    d = tempfile.mkdtemp(prefix="np-", dir=TMP)
    cfg = os.path.join(d, "tiny.json")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(TINY)
    out = os.path.join(d, "numpy.json")
    p = subprocess.run(["/usr/bin/python3", SCRIPT, cfg, "-o", out,
                        "--tbench", TBENCH, *extra], capture_output=True,
                       text=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    return p, out, d


@case("compare_numpy.py: valid result file, same case ids, checked, "
      "overhead")
def t_compare_numpy():
    import jsonschema
    p, out, d = compare_numpy(extra=["--threads", "1"])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    with open(SCHEMA, encoding="utf-8") as f:
        jsonschema.validate(doc, json.load(f))
    # the same case keys as tbench's own run of the config
    r = run(["run", os.path.join(d, "tiny.json"), "-o", "run", "-q"], d)
    expect(r.returncode == 0, r.stderr)
    with open(os.path.join(d, "run", "results.json"), encoding="utf-8") as f:
        keys = {c["id"].rsplit("/", 1)[0] for c in json.load(f)["cases"]}
    got = {c["id"].rsplit("/", 1)[0] for c in doc["cases"]}
    expect(got == keys, f"keys {sorted(got)} != {sorted(keys)}")
    np_ok = [c for c in doc["cases"] if c["backend"] == "numpy"]
    expect(len(np_ok) == 2 * len(keys), "numpy: not 2 forms per case")
    for c in np_ok:
        expect(c["status"] == "ok", f"{c['id']}: {c['status']} "
                                    f"{c['message']}")
        expect(c["check"]["passed"], c["id"])
        expect(c["backend_params"]["threads"] == "1", c["id"])
        expect(c["stats"]["stop_reason"] in ("ci_target", "time_limit",
                                            "max_samples"), c["id"])
        expect(c["stats"]["ci_low_ns"] <= c["stats"]["median_ns"] <=
               c["stats"]["ci_high_ns"], c["id"])
    forms = {c["backend_params"]["form"] for c in np_ok}
    expect(forms == {"alloc", "out"}, f"forms {forms}")
    # the out= form allocates nothing, the allocating one its output
    add = {c["backend_params"]["form"]: c for c in np_ok
           if c["id"].startswith("add/7x13,7x13/")}
    expect(add["out"]["counters"]["allocs"] == 0 and
           add["alloc"]["counters"]["alloc_bytes"] >= 7 * 13 * 4,
           f"alloc counters {add['out']['counters']} "
           f"{add['alloc']['counters']}")
    ov = doc["env"]["python_overhead"]
    expect(ov["python_noop_call_ns"] > 0 and
           ov["numpy_add_1_element_out_ns"] > ov["python_noop_call_ns"],
           f"overhead {ov}")
    expect(doc["env"]["libraries"]["numpy"], "numpy version")
    expect(doc["config"][0]["name"] == "tiny-np", "config name")
    # and it goes side by side into a report
    r = run(["report", "run/results.json", "--with", out, "--no-charts",
             "-o", "r.md"], d)
    expect(r.returncode == 0, r.stderr)
    with open(os.path.join(d, "r.md"), encoding="utf-8") as f:
        md = f.read()
    check_markdown(md)
    expect("## Side by side with NumPy and PyTorch" in md, "no side by side")


@case("compare_numpy.py: PyTorch that cannot be imported is unavailable")
def t_compare_numpy_no_torch():
    p, out, _ = compare_numpy(env={"TBENCH_NO_TORCH": "1"},
                              extra=["--threads", "1", "--forms", "out",
                                     "--filter", "add/*"])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    torch = [c for c in doc["cases"] if c["backend"] == "torch"]
    expect(len(torch) == 2 and all(c["status"] == "unavailable" and
                                   "PyTorch cannot be imported" in
                                   c["message"] for c in torch),
           f"torch cases {[(c['id'], c['status']) for c in torch]}")
    expect(doc["summary"]["unavailable"] == 2, doc["summary"])


@case("compare_numpy.py --label: backends numpy-LABEL and torch-LABEL in "
      "ids and records (a second NumPy/PyTorch beside Debian's); a bad "
      "label exits 2")
def t_compare_numpy_label():
    p, out, d = compare_numpy(env={"TBENCH_NO_TORCH": "1"},
                              extra=["--threads", "1", "--forms", "out",
                                     "--filter", "add/*", "--label", "pypi"])
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    got = sorted({c["backend"] for c in doc["cases"]})
    expect(got == ["numpy-pypi", "torch-pypi"], f"backends {got}")
    for c in doc["cases"]:
        expect(f"/{c['backend']}[threads=1,form=out]" in c["id"], c["id"])
    r = run(["show", "*", out], d)
    expect(r.returncode == 0 and "numpy-pypi" in r.stdout, r.stderr)
    for bad in ("a-b", "", "x" * 21):
        p, o2, _ = compare_numpy(extra=["--label", bad])
        expect(p.returncode == 2 and "--label" in p.stderr,
               f"--label '{bad}': exit {p.returncode} {p.stderr[-300:]}")


FAMILIES = """{
  "name": "families-np", "seed": 7,
  "warmup": {"min_time_ms": 1, "min_iters": 1},
  "measure": {"sample_time_ms": 0.2, "min_samples": 3, "max_samples": 5,
              "ci_target": 0.5, "max_time_s": 0.01},
  "dtypes": ["f32"],
  "ops": [
    {"op": "mul_scalar", "shapes": [[5, 7]], "params": {"scalar": 0.5}},
    {"op": "add_", "shapes": [[64]]},
    {"op": "permute", "shapes": [[3, 4, 5]],
     "params": {"p0": 2, "p1": 0, "p2": 1}},
    {"op": "max_pool2d", "shapes": [[1, 2, 7, 7]],
     "params": {"kernel": 3, "stride": 2, "padding": 1}},
    {"op": "conv2d", "shapes": [[[1, 1, 5, 5], [2, 1, 3, 3], [2]]]},
    {"op": "arange", "shapes": [[50]], "params": {"start": 1.5, "step": 0.25}},
    {"op": "rand_normal", "shapes": [[4096]]},
    {"op": "adam", "shapes": [[64]], "params": {"weight_decay": 0.01}},
    {"op": "svd", "shapes": [[6, 4]], "dtypes": ["f64"]},
    {"op": "linear_unfused", "shapes": [[[4, 6], [6, 3], [3]]]},
    {"op": "matmul_backward", "shapes": [[8, 8]], "dtypes": ["f64"]},
    {"op": "avg_pool2d_backward", "shapes": [[[1, 2, 3, 3], [1, 2, 6, 6]]]}
  ]
}
"""


@case("compare_numpy.py: one case per family of issue 34's twins, NumPy: "
      "ok where it has the form, unsupported with the reason where not; "
      "the factorization and distribution checks can fail")
def t_compare_numpy_families():
    d = tempfile.mkdtemp(prefix="np-fam-", dir=TMP)
    cfg, out = os.path.join(d, "fam.json"), os.path.join(d, "o.json")
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(FAMILIES)
    p = subprocess.run(["/usr/bin/python3", SCRIPT, cfg, "-o", out,
                        "--tbench", TBENCH, "--threads", "1", "--backends",
                        "numpy"], capture_output=True, text=True,
                       timeout=300,
                       env=dict(os.environ, TBENCH_NO_TORCH="1"))
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    got = {(c["op"], c["backend_params"]["form"]): c for c in doc["cases"]}
    # (op, form): None = ok, else a word of the unsupported message
    want = {("add_", "alloc"): "in place", ("conv2d", "alloc"): "convolution",
            ("conv2d", "out"): "convolution", ("arange", "out"): "out=",
            ("adam", "alloc"): "in place", ("svd", "out"): "out=",
            ("matmul_backward", "out"): "out=",
            ("avg_pool2d_backward", "out"): "out="}
    ops = sorted({c["op"] for c in doc["cases"]})
    expect(len(ops) == 12, f"ops {ops}")
    for op in ops:
        for form in ("alloc", "out"):
            c = got.get((op, form))
            w = want.get((op, form))
            if c is None:
                expect(False, f"{op} {form}: no record")
            elif w is None:
                expect(c["status"] == "ok" and c["check"]["passed"],
                       f"{op} {form}: {c['status']} {c['message']}")
            else:
                expect(c["status"] == "unsupported" and w in c["message"],
                       f"{op} {form}: {c['status']} {c['message']}")
    expect(got[("svd", "alloc")]["check"]["method"] == "identities",
           "svd not checked by its identities")
    # the checks themselves reject a wrong answer
    sys.path.insert(0, os.path.dirname(SCRIPT))
    import numpy as np
    import compare_numpy as cn
    a = np.random.default_rng(1).standard_normal((6, 4))
    u, sv, vt = np.linalg.svd(a, full_matrices=False)
    u[:, 0], vt[0] = -u[:, 0], -vt[0]          # signs are free
    ok, _ = cn.check_factorization(np, "svd", a, [u, sv, vt], [u, sv, vt],
                                   1e-9, 1e-10)
    expect(ok["passed"], "svd with a flipped singular pair rejected")
    sv2 = sv * np.array([1.01, 1, 1, 1])
    bad, msg = cn.check_factorization(np, "svd", a, [u, sv2, vt],
                                      [u, sv, vt], 1e-9, 1e-10)
    expect(not bad["passed"] and "identity 0" in msg, f"svd: {msg}")
    q, r = np.linalg.qr(a.T)
    r[1, 0] = 1e-300
    bad, msg = cn.check_factorization(np, "qr", a.T, [q, r], [q, r], 1e-9,
                                      1e-10)
    expect(not bad["passed"] and "identity 3" in msg, f"qr: {msg}")
    w, v = np.linalg.eigh(a.T @ a)
    bad, msg = cn.check_factorization(np, "eigh", a.T @ a, [w, v[:, ::-1]],
                                      [w], 1e-9, 1e-10)
    expect(not bad["passed"], "eigh with unordered vectors passed")
    rng = np.random.default_rng(2)
    for op, val, good in (("rand_uniform", rng.random(4096), True),
                          ("rand_uniform", rng.random(4096) * 0.9, False),
                          ("rand_normal", rng.standard_normal(4096), True),
                          ("rand_normal", rng.standard_normal(4096) * 1.2,
                           False)):
        chk, msg = cn.check_random(np, op, val, {}, "f64")
        expect(chk["passed"] == good, f"{op} {good}: {msg}")


@case("compare_numpy.py: bad config exits 2 with the file named")
def t_compare_numpy_errors():
    d = tempfile.mkdtemp(prefix="np-err-", dir=TMP)
    bad = os.path.join(d, "bad.json")
    with open(bad, "w", encoding="utf-8") as f:
        f.write('{"name": "x", "ops": [}')
    for args in ([bad, "-o", os.path.join(d, "o.json")],
                 [os.path.join(d, "missing.json"), "-o",
                  os.path.join(d, "o.json")]):
        p = subprocess.run(["/usr/bin/python3", SCRIPT, *args, "--tbench",
                            TBENCH], capture_output=True, text=True)
        expect(p.returncode == 2, f"{args}: exit {p.returncode}")
        expect(args[0] in p.stderr, f"{args}: {p.stderr}")
        expect(not os.path.exists(os.path.join(d, "o.json")), "wrote output")


if __name__ == "__main__":
    sys.exit(run_cases(lambda failed: shutil.rmtree(TMP, ignore_errors=True)))
