#!/usr/bin/python3
"""The report audit (scripts/audit_report.py) can fail: copies of
docs/PERFORMANCE.md and of its result files, broken on purpose, must
make it exit 1 and name what is wrong (section, row, both values); what
it cannot read is counted and listed, not passed over.  Printed as TAP.
(`meson test audit-report` runs the audit on the committed report.)

Usage: test_audit_report.py PATH/TO/tbench   (run from the repository
root, with /usr/bin/python3)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

TBENCH = os.path.abspath(sys.argv[1])
ROOT = os.getcwd()
REPORT = os.path.join(ROOT, "docs", "PERFORMANCE.md")
TMP = tempfile.mkdtemp(prefix="tbench-audit-")


def audit(report, root=ROOT, *extra):
    p = subprocess.run(["/usr/bin/python3", "scripts/audit_report.py",
                        "--report", report, "--root", root, "--tbench",
                        TBENCH, *extra], capture_output=True, text=True,
                       timeout=300, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def cells(line):
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def table_rows(lines, title):
    """Indices of the table rows (not headers, not rules) under the
    heading title, up to the next heading."""
    out = []
    for i in range(lines.index(title) + 1, len(lines)):
        if lines[i].startswith("#"):
            break
        if lines[i].startswith("|") and not lines[i].startswith("|---") \
                and not lines[i + 1].startswith("|---"):
            out.append(i)
    return out


def set_cell(line, k, value):
    c = cells(line)
    c[k] = value
    return "| " + " | ".join(c) + " |"


def report_lines():
    with open(REPORT, encoding="utf-8") as f:
        return f.read().split("\n")


@case("a figure altered, a verdict flipped, a guideline's winner changed, "
      "noise printed as a cost, a GPU ratio altered, a Summary row "
      "removed and a cache miss count doubled: exit 1, each named")
def t_broken_report():
    lines = report_lines()
    # a Hooks overhead that compare does not call printed as a cost
    h = next(k for k in table_rows(lines, "## Hooks")
             if cells(lines[k])[7].startswith("within noise"))
    lines[h] = set_cell(lines[h], 7, "+5.0% (+1.0 to +9.0)")
    # a Summary row gone
    s = table_rows(lines, "## Summary: fastest backend per op and size")[1]
    gone = "/".join(cells(lines[s])[:3])
    del lines[s]
    rows = table_rows(lines, "## Backend speedups")
    # a speedup 0.5 higher
    i = rows[0]
    c = cells(lines[i])
    sp = float(c[6].rstrip("x"))
    lines[i] = set_cell(lines[i], 6, f"{sp + 0.5:.2f}x")
    # a verdict word flipped
    j = next(k for k in rows[1:] if cells(lines[k])[7] in ("faster", "no"))
    was = cells(lines[j])[7]
    lines[j] = set_cell(lines[j], 7, "no" if was == "faster" else "faster")
    # a guideline names another winner
    g = next(k for k, ln in enumerate(lines) if ln.startswith("- ") and
             ": use " in ln)
    lines[g] = re.sub(r": use (\S+) ", ": use blas[threads=9] ", lines[g],
                      count=1)
    # the GPU's best / vendor, 10 points higher
    p = next(k for k, ln in enumerate(lines) if ln.startswith("| copy | ")
             and ln.endswith("% |"))
    pct = int(cells(lines[p])[4].rstrip("%"))
    lines[p] = set_cell(lines[p], 4, f"{pct + 10}%")
    # a case's simulated L1D misses per call doubled
    m = table_rows(lines, "## Cache behaviour")[-1]
    l1d = cells(lines[m])[5]
    lines[m] = set_cell(lines[m], 5, f"{2 * float(l1d):.6g}")
    rc, out, _ = audit(write("broken.md", "\n".join(lines)))
    expect(rc == 1, f"exit {rc}: {out[-1500:]}")
    mism = [ln for ln in out.split("\n") if ln.startswith("mismatch: ")]
    want = {
        "cache": f"Cache behaviour, line {m + 1} (",
        "cache figure": f"l1d_misses: report '{2 * float(l1d):.6g}'",
        "figure": f"Backend speedups, line {i + 1} ({' | '.join(c[:4])}): "
                  f"speedup: report '{sp + 0.5:.2f}x', data {c[6][:3]}",
        "verdict": f"significant: report "
                   f"'{'no' if was == 'faster' else 'faster'}', data "
                   f"'{was}'",
        "guideline": "guideline: report 'at ",
        "GPU": f"best / vendor: report '{pct + 10}%'",
        "row": f"a row for {gone}",
        "noise": "overhead fwd+bwd: report '+5.0% (+1.0 to +9.0)', data "
                 "within noise (compare: ",
    }
    for what, text in want.items():
        expect(any(text in ln for ln in mism),
               f"{what} not named ({text!r}): " + "\n".join(mism)[:1500])
    expect(re.search(r"audit: \d+ figures and \d+ sentences checked, "
                     rf"{len(mism)} mismatches", out), out[-300:])


def broken_data_root():
    """A copy of the report and its result files in which one case of a
    category table runs 2 / its roofline fraction times faster than its
    samples say: above 100%, the report unchanged."""
    root = tempfile.mkdtemp(prefix="data-", dir=TMP)
    data = os.path.join(root, "docs", "perf-data")
    os.makedirs(data)
    shutil.copy(REPORT, os.path.join(root, "docs"))
    for f in ("results.json", "numpy.json", "torch-training.json"):
        shutil.copy(os.path.join(ROOT, "docs", "perf-data", f), data)
    shutil.copytree(os.path.join(ROOT, "docs", "perf-data", "gpu"),
                    os.path.join(data, "gpu"))
    path = os.path.join(data, "results.json")
    doc = json.load(open(path, encoding="utf-8"))
    c = next(c for c in doc["cases"] if c["status"] == "ok" and
             (c.get("roofline") or {}).get("fraction", 1) < 0.5 and
             c["category"] == "elementwise")
    k = 2 / c["roofline"]["fraction"]
    st = c["stats"]
    st["samples_ns"] = [v / k for v in st["samples_ns"]]
    for f in ("median_ns", "min_ns", "max_ns", "mean_ns", "p5_ns", "p95_ns",
              "ci_low_ns", "ci_high_ns", "mad_ns", "stddev_ns"):
        st[f] /= k
    st["round_medians_ns"] = [v / k for v in st["round_medians_ns"]]
    json.dump(doc, open(path, "w", encoding="utf-8"))
    return root, c["id"]


@case("result files changed after the report: its figures, and a fraction "
      "above 100% without a cause, are named")
def t_broken_data():
    root, cid = broken_data_root()
    rc, out, _ = audit(os.path.join(root, "docs", "PERFORMANCE.md"), root)
    expect(rc == 1, f"exit {rc}: {out[-1500:]}")
    row = " | ".join(cid.split("/"))
    mism = [ln for ln in out.split("\n") if ln.startswith("mismatch: ") and
            f"({row})" in ln]
    for what in ("median: report", "of peak: report",
                 "fraction above 100% without a cause"):
        expect(any(f"): {what}" in ln for ln in mism),
               f"{what} not named for {cid}: " + "\n".join(mism)[:1500])


@case("a table and a paragraph the audit does not know are counted and "
      "listed with --verbose, not passed over")
def t_unknown():
    md = open(REPORT, encoding="utf-8").read()
    extra = ("\n## Extra section\n\nA claim: cpu is 3.5x faster than "
             "blas.\n\n| What | Figure |\n|---|---|\n| speed | 12.5 |\n")
    path = write("unknown.md", md + extra)
    rc, out, _ = audit(path, ROOT, "--verbose")
    expect(rc == 0, f"exit {rc}: {out[-800:]}")
    expect("audit: 2 rows and paragraphs not checked" in out, out[-400:])
    expect(re.search(r"unchecked: line \d+ \[Extra section\] para: A claim",
                     out) and
           re.search(r"unchecked: line \d+ \[Extra section\] row: speed",
                     out), out[-800:])


@case("dtypes side by side (bf16/f16 beside f32): audited; a speedup "
      "altered, an error altered or the section removed: exit 1, named")
def t_dtypes():
    md = os.path.join(TMP, "half.md")
    p = subprocess.run([TBENCH, "report",
                        "docs/perf-data/half/run/results.json", "-o", md],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    expect(p.returncode == 0, p.stderr)
    rc, out, err = audit(md)
    expect(rc == 0 and "0 mismatches" in out, out + err)
    with open(md, encoding="utf-8") as f:
        lines = f.read().split("\n")
    title = "## Dtypes side by side"
    rows = table_rows(lines, title)
    expect(len(rows) == 27, f"{len(rows)} rows")
    bf = next(k for k in rows if cells(lines[k])[3] == "bf16")
    broken = list(lines)
    broken[bf] = set_cell(broken[bf], 5, "3.5")
    f16 = next(k for k in rows if cells(lines[k])[3] == "f16")
    broken[f16] = set_cell(broken[f16], 6, "0.5")
    rc, out, err = audit(write("half-broken.md", "\n".join(broken)))
    expect(rc == 1 and "Dtypes side by side" in out and "vs f32" in out and
           "max rel. error" in out, out + err)
    start = lines.index(title)
    end = next(i for i in range(start + 1, len(lines))
               if lines[i].startswith("## "))
    gone = lines[:start] + lines[end:]
    rc, out, err = audit(write("half-gone.md", "\n".join(gone)))
    expect(rc == 1 and "Dtypes side by side" in out, out + err)


@case("usage and input errors exit 2 with one line")
def t_errors():
    rc, out, err = audit(os.path.join(TMP, "none.md"))
    expect(rc == 2 and "none.md" in err and len(err.splitlines()) == 1,
           f"exit {rc}: {err}")
    rc, out, err = audit(write("nohead.md", "# A report\n\nNothing.\n"))
    expect(rc == 2 and "Generated by" in err, f"exit {rc}: {err}")
    rc, out, err = audit(REPORT, ROOT, "--bogus")
    expect(rc == 2 and "--bogus" in err, f"exit {rc}: {err}")


if __name__ == "__main__":
    sys.exit(run_cases(lambda failed: failed or shutil.rmtree(TMP, True)))
