"""The audit of the per-op counters, fused against unfused, scaling
anomalies, more threads slower, and the side-by-side NumPy and PyTorch
table (scripts/audit_report.py)."""
import math
import re

from audit_core import NUM, Case, method_texts, row_name, texts_starting
from audit_speed import fastest_two


# ---- counters, fused ops, scaling, threads ----------------------------------

# The per-op counters table's columns: title -> (counter, bytes?, shown
# only when some case moved data to or allocated on a device).
COUNTER_COLUMNS = {
    "Kernel launches": ("kernel_launches", False, False),
    "Allocations": ("allocs", False, False),
    "Allocated bytes": ("alloc_bytes", True, False),
    "Frees": ("frees", False, False),
    "Peak extra": ("peak_extra_bytes", True, False),
    "Copies": ("memcpy_count", False, True),
    "Device allocations": ("device_allocs", False, True),
}


def check_range(a, w, what, cell, values, kind):
    """A counter range 'lo – hi' (or one figure) over values."""
    vals = [v for v in values if v is not None]
    if not vals:
        return a.word(w, what, cell, "")
    lo, _, hi = cell.partition(" – ")
    a.fig(w, f"{what} (lowest)", lo, min(vals), kind)
    a.fig(w, f"{what} (highest)", hi or lo, max(vals), kind)


def counter_groups(data):
    """The rows of the counters table: (document, op, label) in order of
    first appearance, over the ok cases that recorded counters."""
    groups = {}
    for c in data.ok():
        if c.rec.get("counters") is None:
            continue
        lab = c.label() if c.role == "with" else c.variant
        groups.setdefault((c.doc, c.op, lab), []).append(c)
    return list(groups.items())


def check_counters(a, sec):
    method_texts(a, sec, "Per call (iteration), counted over")
    groups = counter_groups(a.data)
    cases = [c for _, cs in groups for c in cs]
    dev = any((c.counter(k) or 0) > 0 for c in cases
              for k, _, d in COUNTER_COLUMNS.values() if d)
    for t in sec.tables:
        cols = t.header[2:]
        for title, (k, _, d) in COUNTER_COLUMNS.items():
            shown = (dev if d else True) and \
                any(c.counter(k) is not None for c in cases)
            a.claim(f"{sec.path}, line {t.line}", f"column {title}",
                    "shown" if title in cols else "absent",
                    "shown" if shown else "absent")
        a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)),
              len(groups))
        for i, ((ln, row), (g, cs)) in enumerate(zip(t.rows, groups)):
            t.done.add(i)
            w = row_name(sec, ln, row, 2)
            a.word(w, "op", row[0], g[1])
            a.word(w, "backend", row[1], g[2])
            for j, title in enumerate(cols):
                if title not in COUNTER_COLUMNS:
                    t.done.discard(i)
                    continue
                k, isbytes, _ = COUNTER_COLUMNS[title]
                check_range(a, w, title, row[2 + j],
                            [c.counter(k) for c in cs],
                            "bytes" if isbytes else "num")


def unfused_of(data, c):
    """The *_unfused composition of fused case c (same document and
    variant), or None."""
    key = c.key.replace(c.op, c.op + "_unfused", 1)
    return next((u for u in data.ok() if u.key == key and u.doc == c.doc
                 and u.variant == c.variant and u.category == "unfused"),
                None)


def launches_saved(f, u):
    for c in (f, u):
        if not c.rec.get("cupti"):
            return ("not measured: " + (c.rec.get("cupti_reason") or
                                        "the result file has no CUPTI "
                                        "counts"), None, None)
    lf = f.rec["cupti"].get("kernel_launches")
    lu = u.rec["cupti"].get("kernel_launches")
    return None, lu - lf, lu


def check_fused_units(a, sec, t):
    pairs = [(c, unfused_of(a.data, c)) for c in a.data.ok()]
    pairs = [p for p in pairs if p[1]]
    pairs.sort(key=lambda p: a.data.cases.index(p[1]))
    a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)),
          len(pairs))
    has_bytes = "Bytes moved, model (fused / unfused)" in t.header
    for i, ((ln, row), (c, u)) in enumerate(zip(t.rows, pairs)):
        t.done.add(i)
        w = row_name(sec, ln, row)
        a.word(w, "case", "/".join(row[:4]), c.id)
        a.fig(w, "fused", row[4], c.median, "time")
        a.fig(w, "unfused", row[5], u.median, "time")
        for col, k in ((6, "kernel_launches"), (7, "allocs")):
            got = row[col].split(" / ")
            for g, x in zip(got, (c, u)):
                v = x.counter(k)
                if v is None:
                    a.word(w, k, g, "-")
                else:
                    a.fig(w, k, g, v)
        k = 8
        if has_bytes:  # reports before the column lack it
            for g, x in zip(row[k].split(" / "), (c, u)):
                if (x.rec.get("model") or {}).get("bytes") is None:
                    a.word(w, "model bytes", g, "-")
                else:
                    a.fig(w, "model bytes", g, x.bytes, "bytes")
            k += 1
        a.fig(w, "fused speedup", row[k], u.median / c.median, "x")
        why, saved, of = launches_saved(c, u)
        if why:
            a.word(w, "launches saved", row[k + 1], why)
        else:
            m = re.match(rf"({NUM}) of ({NUM})", row[k + 1])
            a.fig(w, "launches saved", m.group(1) if m else row[k + 1],
                  saved)
            a.fig(w, "launches", m.group(2) if m else row[k + 1], of)


def parts_of(data, c):
    """The cases a fused case replaces (add_relu = add + relu, linear =
    matmul + add + relu), same document and variant; None when one is
    missing or the op has no known split."""
    out = "x".join(str(d) for d in (c.rec.get("out_shapes") or [[]])[0])
    if c.op == "add_relu":
        keys = [f"add/{c.shapes}", f"relu/{out}"]
    elif c.op == "linear" and "," in c.shapes:
        head, last = c.shapes.rsplit(",", 1)
        keys = [f"matmul/{head}", f"add/{out},{last}", f"relu/{out}"]
    else:
        return None
    parts = []
    for k in keys:
        p = next((d for d in data.ok() if d.key == f"{k}/{c.dtype}" and
                  d.doc == c.doc and d.variant == c.variant), None)
        if p is None:
            return None
        parts.append(p)
    return parts


def check_fused_parts(a, sec, t):
    rows = [(c, parts_of(a.data, c)) for c in a.data.ok()]
    rows = [r for r in rows if r[1]]
    a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)), len(rows))
    for i, ((ln, row), (c, parts)) in enumerate(zip(t.rows, rows)):
        t.done.add(i)
        w = row_name(sec, ln, row)
        a.word(w, "case", "/".join(row[:4]), c.id)
        total = sum(p.median for p in parts)
        a.fig(w, "fused", row[4], c.median, "time")
        a.fig(w, "unfused", row[5], total, "time")
        got = row[6].split(" + ")
        a.fig(w, "unfused ops", str(len(got)), len(parts))
        for g, p in zip(got, parts):
            op, _, tm = g.partition(" ")
            a.word(w, "unfused op", op, p.op)
            a.fig(w, f"{p.op} median", tm, p.median, "time")
        a.fig(w, "fused speedup", row[7], total / c.median, "x")


def check_fused(a, sec):
    method_texts(a, sec, "A fused op against")
    for t in sec.tables:
        if "Launches (fused / unfused)" in t.header:
            check_fused_units(a, sec, t)
        elif "Unfused ops" in t.header:
            check_fused_parts(a, sec, t)


def series(data, role="main"):
    """Cases of one document, op with parameters, dtype and variant, in
    order of work."""
    out = {}
    for c in data.ok(role):
        out.setdefault((c.doc, c.opp, c.dtype, c.variant), []).append(c)
    return [sorted(v, key=Case.work) for v in out.values()]


def check_scaling(a, sec):
    lim = 3.0
    for t in texts_starting(sec, "Between consecutive measured sizes"):
        a.method(t)
        m = re.search(rf"more than ({NUM}) times faster", t.text)
        lim = float(m.group(1)) if m else lim
    pairs, worst, flagged = 0, 0.0, []
    for s in series(a.data):
        for x, z in zip(s, s[1:]):
            rw, rt = z.work() / x.work() if x.work() else 0, \
                z.median / x.median
            if not rw > 1 or not x.median > 0:
                continue
            pairs += 1
            worst = max(worst, rt / rw)
            if rt > lim * rw:
                flagged.append((x, z, rw, rt))
    for t in texts_starting(sec, "None of the "):
        t.done = True
        w = f"{sec.path}, line {t.line}"
        m = re.fullmatch(rf"None of the (\d+) pairs of consecutive sizes: "
                         rf"time grew at most ({NUM})x as fast as work\.",
                         t.text)
        a.claim(w, "no anomaly", "none", "none" if not flagged else
                f"{len(flagged)} anomalies")
        if not m:
            a.word(w, "sentence", t.text, "None of the N pairs of "
                   "consecutive sizes: time grew at most Wx as fast as work.")
            continue
        a.fig(w, "pairs", m.group(1), pairs)
        a.fig(w, "worst time / work", m.group(2), worst)
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "anomalies", str(len(t.rows)),
              len(flagged))
        for i, ((ln, row), (x, z, rw, rt)) in enumerate(zip(t.rows,
                                                           flagged)):
            t.done.add(i)
            w = row_name(sec, ln, row)
            a.word(w, "series", " | ".join(row[:5]), " | ".join(
                (x.opp, x.dtype, x.variant, x.shapes, z.shapes)))
            a.fig(w, "work grew", row[5], rw, "x")
            a.fig(w, "time grew", row[6], rt, "x")
            a.claim(w, "flagged", "flagged", "flagged")


FIT_NAMES = ["O(n)", "O(n log n)", "O(n^2)", "O(n^3)", "cost model"]


def fit_f(m, c):
    """f(n) of model m for case c (report_fit.c's fit_f)."""
    n = c.items
    if m == 0:
        return n
    if m == 1:
        return n * math.log2(n) if n > 1 else 0
    if m == 2:
        return n * n
    if m == 3:
        return n * n * n
    return c.work()


def fit_best(s):
    """(model, c, rms) of the series s, relative residuals; None."""
    best = None
    for m in range(len(FIT_NAMES)):
        fs = [fit_f(m, c) for c in s]
        if not all(f > 0 and math.isfinite(f) for f in fs) or \
                not all(c.median > 0 for c in s):
            continue
        q = [f / c.median for f, c in zip(fs, s)]
        coef = sum(q) / sum(x * x for x in q)
        rms = math.sqrt(sum(((c.median - coef * f) / c.median) ** 2
                            for f, c in zip(fs, s)) / len(s))
        # as report_fit.c: a later model must be better by more than
        # rounding (models proportional to each other fit alike)
        if best is None or rms < best[2] * (1 - 1e-9):
            best = (m, coef, rms)
    return best


def check_complexity(a, sec):
    """The fits of report_fit.c derived again from the cases."""
    for t in texts_starting(sec, "Each series of "):
        a.method(t)
    fits = []
    for s in series(a.data):
        b = fit_best(s) if len(s) >= 3 else None
        if b:
            fits.append((s, b))
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "series fitted",
              str(len(t.rows)), len(fits))
        for i, ((ln, row), (s, (m, coef, rms))) in enumerate(zip(t.rows,
                                                                 fits)):
            t.done.add(i)
            w = row_name(sec, ln, row)
            x = s[0]
            a.word(w, "series", " | ".join(row[:4]), " | ".join(
                (x.opp, x.dtype, x.variant, str(len(s)))))
            a.word(w, "fit", row[4], FIT_NAMES[m])
            a.fig(w, "RMS error", row[5], rms, "pct")
            off = []
            for c in s:
                fit = coef * fit_f(m, c)
                half = (c.stats["ci_high_ns"] - c.stats["ci_low_ns"]) / 2
                if abs(c.median - fit) > half:
                    off.append((c, c.median / fit - 1))
            got = re.findall(rf"(\S+) \(([+-]?{NUM})%\)", row[6])
            a.fig(w, "sizes off the fit", str(len(got)), min(len(off), 3))
            for (shapes, pct), (c, r) in zip(got, off):
                a.word(w, "off-fit size", shapes, c.shapes)
                a.fig(w, f"{shapes} vs fit", pct + "%", r, "pct")
            more = re.search(r"and (\d+) more", row[6])
            a.fig(w, "more off the fit", more.group(1) if more else "0",
                  max(len(off) - 3, 0))
            if not off:
                a.word(w, "off the fit", row[6], "none")


def cache_cases(data):
    """The main run's ok cases with cache events counted, in order."""
    return [c for c in data.ok("main")
            if (c.rec.get("cache") or {}).get("source")]


def line_bytes(geometry):
    """The line size of a simulated geometry '32768 B, 64 B, 8-way'."""
    m = re.match(r"\d+ B, (\d+) B", geometry or "")
    return int(m.group(1)) if m else 64


def check_cache(a, sec):
    """report_cache.c's rows derived again from the cache records."""
    cases = cache_cases(a.data)
    sim = [c.rec["cache"] for c in cases if c.rec["cache"]["simulated"]]
    for t in texts_starting(sec, "Misses per call"):
        a.method(t)
        if sim:
            a.word(f"{sec.path}, line {t.line}", "simulated geometry",
                   "D1 of " + t.text.split("a D1 of ")[1].split(" and ")[0],
                   "D1 of " + sim[0]["d1"])
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "cases with cache events",
              str(len(t.rows)), len(cases))
        for i, ((ln, row), c) in enumerate(zip(t.rows, cases)):
            t.done.add(i)
            w = row_name(sec, ln, row)
            k = c.rec["cache"]
            a.word(w, "case", " | ".join(row[:4]),
                   " | ".join((c.opp, c.shapes, c.dtype, c.variant)))
            a.word(w, "source", row[4], k["source"] +
                   (" (simulated)" if k["simulated"] else ""))
            cols = ((5, 6, "l1d_misses", "d1"), (7, 8, "llc_misses", "ll"))
            for n, r, key, geo in cols:
                v = k[key]
                if v is None:
                    a.word(w, key, row[n], "n/a")
                    a.word(w, key + " bytes / model", row[r], "n/a")
                    continue
                a.fig(w, key, row[n], v)
                line = line_bytes(k[geo]) if k["simulated"] else 64
                if c.bytes > 0:
                    a.fig(w, key + " bytes / model", row[r],
                          v * line / c.bytes, "x")
                else:
                    a.word(w, key + " bytes / model", row[r], "n/a")
            for n, key in ((9, "dtlb_misses"), (10, "ipc")):
                if k[key] is None:
                    a.word(w, key, row[n], "n/a")
                else:
                    a.fig(w, key, row[n], k[key])


def one_thread(data, c):
    """The case c runs with threads=1: same document, key, backend,
    transfers and axes but threads."""
    t = c.axes.get("threads")
    if t is None or not str(t).isdigit() or str(t) == "1":
        return None
    want = dict(c.axes, threads="1")
    return next((d for d in data.ok(c.role) if d.doc == c.doc and
                 d.key == c.key and d.backend == c.backend and
                 d.transfers == c.transfers and
                 list(d.axes) == list(want) and
                 all(str(d.axes[k]) == str(v) for k, v in want.items())),
                None)


def slow_thread_cases(a):
    out = []
    for c in a.data.ok("main"):
        one = one_thread(a.data, c)
        if one and a.verdict(one, c)["verdict"] == "regressed":
            out.append((c, one))
    return out


def check_threads(a, sec):
    method_texts(a, sec, "Cases that ran significantly slower")
    want = slow_thread_cases(a)
    a.slow_threads_checked = True
    for t in sec.tables:
        a.claim(f"{sec.path}, line {t.line}", "cases slower with threads",
                str(len(t.rows)), str(len(want)))
        for i, ((ln, row), (c, one)) in enumerate(zip(t.rows, want)):
            t.done.add(i)
            w = row_name(sec, ln, row)
            a.word(w, "case", "/".join(row[:4]), c.id)
            a.fig(w, "1 thread", row[4], one.median, "time")
            a.fig(w, "this", row[5], c.median, "time")
            a.fig(w, "slower by", row[6], c.median / one.median, "x")
            for col, k in ((7, "vol_ctx_switches"),
                           (8, "invol_ctx_switches")):
                x, _, y = row[col].partition(" → ")
                a.fig(w, f"{k} (1 thread)", x, one.counter(k))
                a.fig(w, f"{k} (this)", y, c.counter(k))


# ---- side by side with NumPy and PyTorch ------------------------------------

def fastest_tbench(data, c):
    """The fastest MAIN case of c's key run with c's thread count (or
    without a threads axis), else the fastest at any count."""
    cands = data.by_key(c.key, "main")
    same = [d for d in cands if "threads" not in d.axes or
            str(d.axes["threads"]) == c.threads()]
    pool = same or cands
    return fastest_two(pool)[0] if pool else None


def with_sources(a, sec):
    for t in texts_starting(sec, "From `"):
        w = f"{sec.path}, line {t.line}"
        m = re.fullmatch(r"From `([^`]+)`(?: \((.*)\))?\.", t.text)
        if not m or m.group(1) not in a.data.paths[1:]:
            continue
        t.done = True
        libs = a.data.docs[a.data.paths.index(m.group(1))].get(
            "env", {}).get("libraries") or {}
        a.word(w, "libraries", m.group(2) or "", ", ".join(
            f"{k} {v}" for k, v in libs.items() if v is not None))
    for t in texts_starting(sec, "Per-call overhead of the Python layer"):
        t.done = True
        m = re.match(r"Per-call overhead of the Python layer, measured by "
                     r"the script \((.*)\); the library times", t.text)
        how = [(d.get("env") or {}).get("python_overhead") or {}
               for d in a.data.docs[1:]]
        a.word(f"{sec.path}, line {t.line}", "how it was measured",
               m.group(1) if m else t.text,
               next((h.get("method") for h in how if h.get("method")), None))
    for t in sec.texts:
        m = re.fullmatch(r"`(\S+)` is unavailable: (.*)", t.text)
        if t.kind != "bullet" or not m:
            continue
        t.done = True
        msg = next((c.rec.get("message") for c in a.data.cases
                    if c.role == "with" and c.status == "unavailable" and
                    c.backend == m.group(1)), None)
        a.word(f"{sec.path}, line {t.line}", "unavailable", m.group(2),
               msg or "an unavailable --with backend")


def python_overhead(a):
    """The Python layer's per-call figures of the --with files: name ->
    (document, value, [lo, hi] or None), from env.python_overhead (its
    *_ns members, their CIs in ci_ns)."""
    out = {}
    for i, d in enumerate(a.data.docs[1:], 1):
        ov = (d.get("env") or {}).get("python_overhead") or {}
        for k, v in ov.items():
            if k.endswith("_ns") and isinstance(v, (int, float)):
                out[k[:-3]] = (i, v, (ov.get("ci_ns") or {}).get(k))
    return out


def check_overhead_table(a, sec, t):
    ovh = python_overhead(a)
    for i, (ln, row) in enumerate(t.rows):
        t.done.add(i)
        w = row_name(sec, ln, row, 1)
        fig = ovh.get(row[0].replace(" ", "_"))
        if fig is None:
            a.word(w, "call", row[0], "a figure of env.python_overhead")
            continue
        a.fig(w, "median", row[1], fig[1], "time")
        if len(row) < 3:
            continue
        if not fig[2]:
            a.word(w, "95% CI", row[2], "not recorded (an older script)")
            continue
        lo, _, hi = row[2].partition(" – ")
        a.fig(w, "CI low", lo, fig[2][0], "time")
        a.fig(w, "CI high", hi, fig[2][1], "time")


def check_overhead_notes(a, sec):
    """A library's 1-element call said to take longer than its fastest
    whole case of form=out exactly when its CI's low end (else its
    figure) lies above that case's median."""
    said = {}
    for t in sec.texts:
        m = re.fullmatch(rf"The (\w+) 1-element call \(({NUM} \w+)(, CI "
                         rf"above it)?\) took longer than the whole `(\S+)` "
                         rf"\(({NUM} \w+)\), its fastest case of the same "
                         r"form: .*", t.text)
        if m:
            t.done = True
            said[m.group(1)] = (t, m)
    for name, (doc, v, ci) in python_overhead(a).items():
        lib = name.split("_")[0]
        outs = [c for c in a.data.ok("with") if c.doc == doc and
                c.backend == lib and "form=out" in c.variant]
        if lib not in ("numpy", "torch") or not outs:
            continue
        best = fastest_two(outs)[0]
        above = (ci[0] if ci else v) > best.median
        t, m = said.get(lib, (None, None))
        a.claim(sec.path, f"{lib}'s 1-element call above its fastest case",
                "said" if m else "not said", "said" if above else "not said")
        if m:
            w = f"{sec.path}, line {t.line}"
            a.fig(w, "1-element call", m.group(2), v, "time")
            a.word(w, "fastest case", m.group(4), best.id)
            a.fig(w, "its median", m.group(5), best.median, "time")
            a.claim(w, "CI above it", bool(m.group(3)), bool(ci))


def with_rows(data):
    rows, seen = [], set()
    for c in data.ok("with"):
        if (c.key, c.threads()) not in seen:
            seen.add((c.key, c.threads()))
            rows.append(c)
    return rows


def check_with_table(a, sec, t):
    labels = []
    for c in a.data.ok("with"):
        if c.label() not in labels:
            labels.append(c.label())
    cols = t.header[6:-1]
    a.claim(f"{sec.path}, line {t.line}", "columns", " | ".join(cols),
            " | ".join(labels))
    want = [(c, fastest_tbench(a.data, c)) for c in with_rows(a.data)]
    want = [x for x in want if x[1]]
    a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)), len(want))
    for i, ((ln, row), (c, tb)) in enumerate(zip(t.rows, want)):
        t.done.add(i)
        w = row_name(sec, ln, row)
        a.word(w, "case", " | ".join(row[:4]), " | ".join(
            (c.opp, c.shapes, c.dtype, c.threads() or "-")))
        a.word(w, "tbench", row[4], tb.variant)
        a.fig(w, "tbench median", row[5], tb.median, "time")
        meds = []
        for j, lab in enumerate(cols):
            d = next((x for x in a.data.by_key(c.key, "with")
                      if x.threads() == c.threads() and x.label() == lab),
                     None)
            if d is None:
                a.word(w, lab, row[6 + j], "")
            else:
                meds.append(d.median)
                a.fig(w, lab, row[6 + j], d.median, "time")
        a.fig(w, "tbench speedup", row[-1],
              min(meds) / tb.median if meds else None, "x")


def check_with(a, sec):
    with_sources(a, sec)
    method_texts(a, sec, "Each row pairs a thread count")
    check_overhead_notes(a, sec)
    for t in sec.tables:
        if t.header[:2] == ["Call", "Median"]:
            check_overhead_table(a, sec, t)
        elif "tbench speedup" in t.header:
            check_with_table(a, sec, t)


# ---- dtypes side by side ------------------------------------------------------

DTYPE_ORDER = ("f32", "f64", "bf16", "f16")


def dtype_groups(data):
    """Per main ok f32 case (file order) with the same op, shapes and
    variant measured in another dtype: its cases, f32 first."""
    out = []
    for c in data.ok("main"):
        if c.dtype != "f32":
            continue
        g = [c]
        for dt in DTYPE_ORDER[1:]:
            d = next((x for x in data.ok("main")
                      if x.opp == c.opp and x.shapes == c.shapes and
                      x.dtype == dt and x.doc == c.doc and
                      x.variant == c.variant), None)
            if d:
                g.append(d)
        if len(g) > 1:
            out.append(g)
    return out


def check_dtypes(a, sec):
    method_texts(a, sec, "Each op and shape measured in f32")
    rows = [(g[0], r) for g in dtype_groups(a.data) for r in g]
    t = sec.tables[0]
    a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)), len(rows))
    for i, ((ln, row), (c, r)) in enumerate(zip(t.rows, rows)):
        t.done.add(i)
        w = row_name(sec, ln, row)
        first = r is c
        a.word(w, "case", "/".join(row[:3]),
               "/".join((c.opp, c.shapes, c.variant)) if first else "//")
        a.word(w, "dtype", row[3], r.dtype)
        a.fig(w, "median", row[4], r.median, "time")
        a.fig(w, "vs f32", row[5], c.median / r.median)
        chk = r.rec.get("check") or {}
        if chk.get("method") == "full" and \
                chk.get("max_rel_err") is not None:
            a.fig(w, "max rel. error", row[6], chk["max_rel_err"])
        else:
            a.word(w, "max rel. error", row[6], "-")


# ---- the per-op breakdown of the model steps -------------------------------

def breakdown_rows(c):
    """The rows a case with a breakdown gets, as (op, kernel, phase,
    calls, ns, share) with None where the report prints '-': its five
    parts with the most time per step (ties: first call first), the
    rest as other, the gap (the step less every part, computed here)
    and the step; the shares over the record's step."""
    bd = c.rec["breakdown"]
    step = bd["step_ns"]
    parts = sorted(bd["parts"], key=lambda p: -p["ns"])
    rows = [(p["op"], p["kernel"], p["phase"], p["calls"], p["ns"],
             p["ns"] / step if step > 0 else 0) for p in parts[:5]]
    rest = parts[5:]
    if rest:
        ns = sum(p["ns"] for p in rest)
        name = f"other ({len(rest)} op{'s' if len(rest) > 1 else ''})"
        rows.append((name, "-", "-",
                     sum(p["calls"] for p in rest), ns,
                     ns / step if step > 0 else 0))
    gap = step - sum(p["ns"] for p in bd["parts"])
    rows.append(("gap (tape)", "-", "-", None, gap,
                 gap / step if step > 0 else 0))
    rows.append(("step", "-", "-",
                 f"{bd['kept_steps']:.0f} of {bd['steps']:.0f} steps",
                 step, 1.0))
    return rows


def breakdown_cases(data):
    return [c for c in data.ok("main")
            if isinstance(c.rec.get("breakdown"), dict)]


def check_breakdown(a, sec):
    """The section's rows against the records, and each case's record
    against itself: its parts plus its gap make its step (gap_ns,
    parts_ns as written and the rows' shares adding up to 100%)."""
    method_texts(a, sec, "Per step of each model step")
    want = [(c, r) for c in breakdown_cases(a.data)
            for r in breakdown_rows(c)]
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)),
              len(want))
        for i, ((ln, row), (c, r)) in enumerate(zip(t.rows, want)):
            t.done.add(i)
            w = row_name(sec, ln, row, 2)
            op, kernel, phase, calls, ns, share = r
            a.word(w, "case", row[0], f"`{c.id}`")
            a.word(w, "op", row[1], op)
            a.word(w, "kernel", row[2], kernel)
            a.word(w, "phase", row[3], phase)
            if calls is None:
                a.word(w, "calls", row[4], "-")
            elif isinstance(calls, str):
                a.word(w, "steps", row[4], calls)
            else:
                a.fig(w, "calls per step", row[4], calls)
            a.fig(w, "time per step", row[5], ns, "time")
            a.fig(w, "share", row[6], share, "pct")
    for c in breakdown_cases(a.data):
        bd = c.rec["breakdown"]
        w = f"{sec.path}, {c.id}"
        parts = sum(p["ns"] for p in bd["parts"])
        a.fig(w, "parts_ns (the sum of the parts)", f"{bd['parts_ns']:.9g}",
              parts)
        a.fig(w, "parts + gap (= step_ns)",
              f"{bd['parts_ns'] + bd['gap_ns']:.9g}", bd["step_ns"])
        shares = sum(r[5] for r in breakdown_rows(c)[:-1])
        a.fig(w, "shares of the rows (= 1)", f"{shares:.9f}", 1.0)
