#!/usr/bin/python3
"""CLI tests of a config's "layout" (inputs as views: docs/CONFIG.md),
printed as TAP.

Usage: test_cli_layout.py PATH/TO/tbench   (run from the repository root)

A config with layouts runs: every case is ok or unsupported with the
reason, ids carry "@layout=L" only when the layout is not contiguous,
the record's `layout` member is there only then, results.csv's layout
column says it, a layout case draws its contiguous twin's inputs (the
same seed: the reference's outputs agree), and the view rows ran
(impl).  Bad values are one-line errors naming the file, line, column
and key path, exit 2, no result file.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="tbench-layout-")
MEASURE = {"sample_time_ms": 1, "min_samples": 3, "max_samples": 5,
           "max_time_s": 0.05}


def write_config(name, ops, text=None):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text if text is not None else json.dumps({
            "name": name, "seed": 7, "dtypes": ["f32", "f64"],
            "warmup": {"min_time_ms": 1, "min_iters": 1},
            "measure": MEASURE,
            "backends": [{"name": "cpu", "threads": [1, 2]}],
            "ops": ops}, indent=1))
    return path


def tbench(*args):
    return subprocess.run([TBENCH, *args], capture_output=True, text=True,
                          timeout=600)


RUN = {}
ROOT = os.getcwd()


def results():
    if not RUN:
        cfg = write_config("lay.json", [
            {"op": "add", "shapes": [[33, 17]],
             "layout": ["contiguous", "transposed", "strided", "sliced"]},
            {"op": "softmax", "shapes": [[9, 31]],
             "layout": ["contiguous", "strided"]},
            {"op": "matmul", "shapes": [[[20, 12], [12, 16]]],
             "layout": ["contiguous", "transposed", "sliced"]},
            {"op": "var", "shapes": [[8, 8]], "layout": "strided"}])
        out = os.path.join(TMP, "out")
        p = tbench("run", cfg, "-o", out, "-q")
        expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
        with open(os.path.join(out, "results.json"), encoding="utf-8") as f:
            RUN["json"] = json.load(f)
        with open(os.path.join(out, "results.csv"), encoding="utf-8") as f:
            rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
        RUN["csv"] = rows
    return RUN


@case("a config with layouts runs: ok or unsupported with the reason")
def runs():
    cases = results()["json"]["cases"]
    expect(len(cases) == (4 + 2 + 3 + 1) * 2 * 2, f"{len(cases)} cases")
    for c in cases:
        if c["op"] == "var":
            expect(c["status"] == "unsupported" and
                   "kernel needs contiguous input" in c["message"],
                   f"{c['id']}: {c['status']} {c['message']}")
        else:
            expect(c["status"] == "ok", f"{c['id']}: {c['status']} "
                   f"{c['message']}")
            view = c.get("layout") is not None
            expect(("_view" in c["impl"]) == view, f"{c['id']}: {c['impl']}")


@case("ids and records name the layout only when it is not contiguous")
def ids():
    for c in results()["json"]["cases"]:
        lay = c.get("layout")
        if lay is None:
            expect("@layout=" not in c["id"], c["id"])
        else:
            expect(lay in ("transposed", "strided", "sliced"), lay)
            expect(re.match(rf"{c['op']}@layout={lay}[/\[]", c["id"]),
                   c["id"])
    rows = results()["csv"]
    head, body = rows[0], rows[1:]
    expect("layout" in head, f"no layout column: {head}")
    col, idc = head.index("layout"), head.index("id")
    for r in body:
        m = re.search(r"@layout=(\w+)", r[idc])
        want = m.group(1) if m else "contiguous"
        expect(r[col] == want, f"{r[idc]}: layout {r[col]}")


@case("a layout's case draws its contiguous twin's values")
def twin():
    # f32 add rounds once, whichever row ran: equal inputs give the same
    # outputs, so the same largest error against the double reference
    # (other inputs would give another)
    by = {c["id"]: c for c in results()["json"]["cases"]}
    n = 0
    for cid, c in by.items():
        if c["op"] != "add" or c["dtype"] != "f32" or c.get("layout") is None:
            continue
        base = by[cid.replace("@layout=" + c["layout"], "")]
        e, eb = c["check"]["max_abs_err"], base["check"]["max_abs_err"]
        expect(e == eb and e > 0, f"{cid}: {e} vs {eb}")
        n += 1
    expect(n == 6, f"{n} f32 add layout cases")


@case("a bad layout is a one-line error naming file and place")
def bad_values():
    for text, words in [
            ('{"name": "x", "backends": ["cpu"], "ops": [\n'
             ' {"op": "add", "shapes": [[4, 4]], "layout": ["strided", '
             '"diagonal"]}]}\n',
             [":2:", "ops[0].layout[1]", "unknown layout \"diagonal\""]),
            ('{"name": "x", "backends": ["cpu"], "ops": [\n'
             ' {"op": "add", "shapes": [[4, 4]], "layout": 3}]}\n',
             [":2:", "ops[0].layout", "unknown layout 3"]),
            ('{"name": "x", "backends": ["cpu"], "ops": [\n'
             ' {"op": "add", "shapes": [[4, 4]], "layout": []}]}\n',
             [":2:", "ops[0].layout", "at least one layout"]),
            ('{"name": "x", "backends": ["cpu"], "ops": [\n'
             ' {"op": "add", "shapes": [[4]], "layout": "transposed"}]}\n',
             [":2:", "ops[0].layout: input 0", "transposed", "1 dim"]),
            ('{"name": "x", "backends": ["cpu"], "ops": [\n'
             ' {"op": "zeros", "shapes": [[4]], "layout": "sliced"}]}\n',
             [":2:", "ops[0].layout", "no inputs"])]:
        path = write_config("bad.json", None, text)
        out = os.path.join(TMP, "bad-out")
        p = tbench("run", path, "-o", out)
        expect(p.returncode == 2, f"exit {p.returncode}: {p.stderr}")
        lines = p.stderr.strip().splitlines()
        expect(len(lines) == 1 and lines[0].startswith("tbench: " + path),
               f"not one line naming the file: {p.stderr!r}")
        for w in words:
            expect(w in lines[0], f"'{w}' missing from: {lines[0]}")
        expect(not os.path.exists(os.path.join(out, "results.json")),
               "a result file was written")


def audit(report, root):
    p = subprocess.run(["/usr/bin/python3", "scripts/audit_report.py",
                        "--report", report, "--root", root, "--tbench",
                        TBENCH], capture_output=True, text=True,
                       timeout=300, cwd=ROOT)
    return p.returncode, p.stdout + p.stderr


def layout_rows(md):
    lines = md.split("\n")
    i = lines.index("### Layouts")
    while not lines[i].startswith("| Op "):
        i += 1
    rows = []
    for k in range(i + 2, len(lines)):
        if not lines[k].startswith("| "):
            break
        rows.append(k)
    return lines, rows


@case("report's Layouts section: ratio, CI and verdict, audited")
def report_layouts():
    results()
    root = TMP
    p = tbench("report", os.path.join(TMP, "out", "results.json"), "-o",
               os.path.join(root, "r.md"))
    expect(p.returncode == 0, f"report: {p.stderr}")
    md = open(os.path.join(root, "r.md"), encoding="utf-8").read()
    lines, rows = layout_rows(md)
    # add 3 layouts + softmax 1 + matmul 2, each f32/f64 x 2 threads
    expect(len(rows) == (3 + 1 + 2) * 2 * 2, f"{len(rows)} rows")
    words = ("view slower", "view faster", "equal within the threshold",
             "inconclusive")
    for k in rows:
        cells = [c.strip() for c in lines[k].strip("|").split("|")]
        expect(len(cells) == 10 and cells[9] in words and " … " in cells[8],
               f"row: {lines[k]}")
    rc, text = audit(os.path.join(root, "r.md"), root)
    expect(rc == 0 and ", 0 mismatches" in text, f"audit: {rc}\n{text}")
    for col, what in ((9, "verdict"), (7, "ratio")):
        bad = list(lines)
        cells = bad[rows[0]].split("|")
        if col == 9:
            cells[col + 1] = " " + next(w for w in words
                                        if w != cells[col + 1].strip()) + " "
        else:
            cells[col + 1] = " 1000x "
        bad[rows[0]] = "|".join(cells)
        with open(os.path.join(root, "bad.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(bad))
        rc, text = audit(os.path.join(root, "bad.md"), root)
        expect(rc == 1 and what in text, f"planted {what}: {rc}\n{text}")


def cleanup(failed):
    if failed:
        print(f"# files kept in {TMP}")
    else:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(run_cases(cleanup))
