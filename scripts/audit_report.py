#!/usr/bin/python3
"""The report audits itself: every figure and every comparative sentence
of docs/PERFORMANCE.md, derived again from the result files it was made
from, and any disagreement named.

Usage: audit_report.py [--report FILE] [--tbench EXE] [--root DIR]
                       [--verbose] [--tap]

  --report   the report (default docs/PERFORMANCE.md); the result files
             are those its first line names (`tbench report MAIN --with
             FILE...`), read relative to --root, and the GPU folders its
             "GPU results" section names
  --tbench   the tbench executable whose `compare` gives the verdicts
             (default build/tbench)
  --root     the repository root (default: this script's parent folder)
  --verbose  list every table row and paragraph the audit did not check,
             the paragraphs it read as method text, and what it checked in
             each section
  --tap      print as one TAP test (`meson test audit-report`)

Independent of the report's code: the Markdown is parsed, and each
figure is computed from the JSON records (medians, ratios of two
medians, rates from the cost model, roofline fractions from the run's
measured peaks, counter ranges, percentages) and compared to the printed
one at the precision it is printed with.  Statistical words ("yes",
"faster", "within noise", "no winner (inconclusive)", a guideline's
winner) are not judged here: the two cases' records are written to two
temporary result files under one id and `tbench compare OLD NEW --format
json` says the verdict, the p-value and the CI; the sentence must agree.
A fraction of the roofline above 100% must carry a flagged cause in its
row, and the cause's figures must be the records'.

Prints one line per mismatch (section, row, what, both values), then
`audit: N figures and M sentences checked, K mismatches`, and the count
of rows and paragraphs left unchecked.  Exit 0 when nothing mismatched,
1 on a mismatch, 2 on a usage or input error.  Standard library only.
"""
import os
import re
import sys

from audit_core import Audit, Data, InputError, Oracle, parse_markdown
from audit_env import (check_build, check_environment, check_head,
                       check_noisiest, check_not_run, check_peaks,
                       check_reproduce, check_warnings)
from audit_gpu import check_gpu
from audit_speed import (CATEGORY_SECTIONS, check_category,
                         check_category_rows_complete, check_guidelines,
                         check_layouts,
                         check_speedups, check_summary, reference)
from audit_training import (check_api, check_hooks, check_pool,
                            check_rates, hook_groups, hook_rows,
                            rate_series)
from audit_work import (breakdown_cases, cache_cases, check_breakdown,
                        check_cache, check_complexity, check_counters,
                        check_dtypes,
                        check_fused,
                        check_scaling, check_threads, check_with,
                        counter_groups, dtype_groups, parts_of, series,
                        slow_thread_cases, unfused_of)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- the whole report -------------------------------------------------------

CHECKERS = {
    "tbench performance report": check_head,
    "How to reproduce": check_reproduce,
    "Build configuration": check_build,
    "Environment": check_environment,
    "Measured machine peaks": check_peaks,
    "Noise warnings": check_warnings,
    "Summary: fastest backend per op and size": check_summary,
    "Backend speedups": check_speedups,
    "Selection guidelines (measured)": check_guidelines,
    "Kernel launches and allocations per op": check_counters,
    "Fused vs unfused": check_fused,
    "Layouts": check_layouts,
    "Dtypes side by side": check_dtypes,
    "Scaling anomalies": check_scaling,
    "Complexity": check_complexity,
    "Cache behaviour": check_cache,
    "More threads, slower": check_threads,
    "Side by side with NumPy and PyTorch": check_with,
    "Hooks": check_hooks,
    "API layers": check_api,
    "Training and inference steps by batch": check_rates,
    "Where a step's time goes": check_breakdown,
    "Memory pool": check_pool,
    "Noisiest cases": check_noisiest,
    "Cases that did not run": check_not_run,
}


def checker_of(sec):
    if sec.path.startswith("GPU results"):
        return check_gpu
    if sec.title in CATEGORY_SECTIONS or sec.title.startswith("Other ops: "):
        return check_category
    return CHECKERS.get(sec.title)


def audit_pass(a, secs):
    a.reset()
    a.gpu_root = None
    a.per_section = {}
    for sec in secs:
        fn = checker_of(sec)
        if fn:
            f, s = a.figures, a.sentences
            try:
                fn(a, sec)
            except (KeyError, IndexError, ValueError, AttributeError,
                    TypeError, ZeroDivisionError) as e:
                # a layout the checker does not know: a mismatch, named
                a.bad(sec.path, "layout", f"{type(e).__name__}: {e}",
                      "the section's known form")
            a.per_section[sec.path] = (a.figures - f, a.sentences - s)
    check_category_rows_complete(a)
    titles = {s.title for s in secs}
    for title, why in required_sections(a):
        if title not in titles:
            a.bad(title, "section", "(none)", why)


def required_sections(a):
    """The sections the data calls for, each with why."""
    d = a.data
    ok, main = d.ok(), d.ok("main")
    hooks = [c for c in hook_groups(d) if hook_rows(d, c)[0] and
             hook_rows(d, c)[1] and any(h for h, *_ in hook_rows(d, c)[2])]
    want = [
        ("Summary: fastest backend per op and size", bool(ok)),
        ("Backend speedups", any(reference(d, c.key) not in (None, c)
                                 for c in main)),
        ("Selection guidelines (measured)",
         any(len(d.by_key(c.key)) > 1 for c in ok)),
        ("Kernel launches and allocations per op", bool(counter_groups(d))),
        ("Fused vs unfused", any(unfused_of(d, c) or parts_of(d, c)
                                 for c in ok)),
        ("Dtypes side by side", bool(dtype_groups(d))),
        ("Scaling anomalies", any(len(s) > 1 for s in series(d))),
        ("Complexity", any(len(s) >= 3 for s in series(d))),
        ("Cache behaviour", bool(cache_cases(d))),
        ("More threads, slower", bool(slow_thread_cases(a))),
        ("Side by side with NumPy and PyTorch", len(d.docs) > 1),
        ("Hooks", bool(hooks)),
        ("API layers", any(c.op == "api_add" for c in main)),
        ("Training and inference steps by batch", bool(rate_series(d))),
        ("Where a step's time goes", bool(breakdown_cases(d))),
        ("Memory pool", any(c.param("pool", 0) == 1 and d.find(c, pool=0)
                            for c in main)),
        ("Noisiest cases", bool(main)),
        ("Cases that did not run", any(not c.ok for c in d.cases)),
    ]
    return [(t, "the data has cases for it") for t, w in want if w]


def unchecked(secs):
    """Rows and paragraphs no checker covered: (line, section, text)."""
    out = []
    for s in secs:
        for t in s.tables:
            for i, (ln, row) in enumerate(t.rows):
                if i not in t.done:
                    out.append((ln, s.path, "row: " + " | ".join(row)))
        for t in s.texts:
            if not t.done:
                out.append((t.line, s.path, f"{t.kind}: {t.text}"))
    return sorted(out)


def report_files(md):
    """The MAIN result file and the --with files the report's first line
    names (`tbench report MAIN [--with FILE]... [-o ...]`).  A --baseline
    file is not read: its section ("Comparison with the baseline") is
    left unchecked, and listed."""
    m = re.search(r"Generated by `tbench report (\S+)(.*?)`", md)
    if not m:
        raise InputError("the report does not start with 'Generated by "
                         "`tbench report FILE ...`'")
    return m.group(1), re.findall(r"--with (\S+)", m.group(2))


def parse_args(argv):
    opts = {"report": "docs/PERFORMANCE.md", "tbench": "build/tbench",
            "root": ROOT, "verbose": False, "tap": False}
    i = 0
    while i < len(argv):
        k = argv[i]
        if k in ("-v", "--verbose"):
            opts["verbose"] = True
        elif k == "--tap":
            opts["tap"] = True
        elif k in ("--report", "--tbench", "--root") and i + 1 < len(argv):
            opts[k[2:]] = argv[i + 1]
            i += 1
        elif k in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        else:
            raise InputError(f"unknown argument {k!r} (see --help)")
        i += 1
    return opts


def run_audit(o):
    """Both passes over the report: the first asks compare for the pairs
    it needs, the second checks with compare's verdicts."""
    root = os.path.abspath(o["root"])
    rep = os.path.join(root, o["report"])
    tbench = os.path.join(root, o["tbench"])
    if not os.access(tbench, os.X_OK):
        raise InputError(f"{tbench}: not an executable (build it, or give "
                         "--tbench)")
    try:
        with open(rep, encoding="utf-8") as f:
            md = f.read()
    except OSError as e:
        raise InputError(f"{rep}: {e}")
    main_path, withs = report_files(md)
    data = Data(root, main_path, withs)
    oracle = Oracle(tbench, data.main)
    a = Audit(data, oracle, root)
    audit_pass(a, parse_markdown(md))
    oracle.judge()
    secs = parse_markdown(md)
    audit_pass(a, secs)
    return a, secs


def main(argv):
    try:
        o = parse_args(argv)
        a, secs = run_audit(o)
    except InputError as e:
        print(f"audit_report.py: {e}", file=sys.stderr)
        return 2
    left = unchecked(secs)
    lines = [f"mismatch: {m}" for m in a.mismatches]
    if o["verbose"]:
        lines += [f"checked: [{path}] {f} figures, {s} sentences"
                  for path, (f, s) in a.per_section.items()]
        lines += [f"method: line {t.line} [{s.path}] {t.text[:100]}"
                  for s in secs for t in s.texts if t.method]
        lines += [f"unchecked: line {ln} [{path}] {text[:160]}"
                  for ln, path, text in left]
    total = (f"audit: {a.figures} figures and {a.sentences} sentences "
             f"checked, {len(a.mismatches)} mismatches")
    hint = " (--verbose lists them)" if left and not o["verbose"] else ""
    method = sum(t.method for s in secs for t in s.texts)
    lines += [total,
              f"audit: {len(left)} rows and paragraphs not checked{hint}; "
              f"{method} paragraphs state the method, not results"]
    if o["tap"]:
        lines = ["1..1"] + [f"# {x}" for x in lines] + [
            f"{'not ok' if a.mismatches else 'ok'} 1 - {o['report']} "
            f"agrees with its result files ({total[7:]}; {len(left)} "
            "rows and paragraphs not checked)"]
    print("\n".join(lines))
    return 1 if a.mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
