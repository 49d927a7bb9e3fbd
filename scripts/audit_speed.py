"""The audit of the report's speed sections: the Summary, the category
tables and their roofline fractions, the speedups over the reference
and the selection guidelines (scripts/audit_report.py)."""
import math
import re

from audit_core import (NUM, Case, method_texts, row_name, rows_of, show)


# ---- compare's test in the sections' text -----------------------------------

def check_test_text(a, sec):
    """The method paragraph that states compare's test: its alpha and
    threshold must be compare's (the options of its JSON output)."""
    for t in sec.texts:
        m = re.search(r"p below ([0-9.]+), a ratio of medians beyond the "
                      r"noise floor \(the ([0-9.]+)% threshold", t.text)
        if not m:
            continue
        t.done = True
        w = f"{sec.path}, line {t.line}"
        opts = a.oracle.options
        a.fig(w, "alpha", m.group(1), opts.get("alpha", 0.01))
        a.fig(w, "threshold", m.group(2) + "%", opts.get("threshold", 0.02),
              "pct")


def fastest_two(cands):
    """The fastest case and the next (None when one ran); file order
    breaks ties, as the report's text says nothing else."""
    s = sorted(cands, key=lambda c: c.median)
    return s[0], (s[1] if len(s) > 1 else None)


def check_p(a, where, text, p):
    """A printed p-value: 'p < 0.0001', 'p = 0.0019' or 'not tested'."""
    if text == "not tested":
        return a.claim(where, "p", text, "not tested" if p is None else
                       f"p = {p:.2g}")
    m = re.fullmatch(r"p (<|=) (\S+)", text)
    if not m or p is None:
        return a.word(where, "p", text, "none" if p is None else f"{p:.2g}")
    if m.group(1) == "<":
        a.figures += 1
        if not p < float(m.group(2)):
            a.bad(where, "p", text, show(p))
    else:
        a.fig(where, "p", m.group(2), p)


WINNER = {"improved": "yes",
          "unchanged": "no winner (equal within the threshold)",
          "inconclusive": "no winner (inconclusive)",
          "not tested": "no winner (not tested)"}


def check_summary(a, sec):
    check_test_text(a, sec)
    method_texts(a, sec, "For each op, shape and dtype")
    keys = []
    for c in a.data.ok():
        if c.key not in keys:
            keys.append(c.key)
    seen = []
    for t in sec.tables:
        for ln, row in t.rows:
            w = row_name(sec, ln, row, 3)
            key = "/".join(row[:3])
            seen.append(key)
            cands = [c for c in a.data.by_key(key) if not c.transfers]
            if not cands:
                a.word(w, "case", key, "no ok case of this op, shapes and "
                       "dtype")
                continue
            best, nxt = fastest_two(cands)
            a.word(w, "fastest", row[3], best.variant)
            a.fig(w, "median", row[4], best.median, "time")
            if len(row) < 8:
                continue
            if nxt is None:
                a.claim(w, "next", row[5], "only one backend ran")
                continue
            m = re.fullmatch(r"(\S+) \((.*)\)", row[5])
            a.word(w, "next", m.group(1) if m else row[5], nxt.variant)
            if m:
                a.fig(w, "next median", m.group(2), nxt.median, "time")
            a.fig(w, "next is slower by", row[6], nxt.median / best.median,
                  "x")
            v = a.verdict(nxt, best)
            m = re.fullmatch(r"(.*) \((not tested|p [<=] \S+)\)", row[7])
            a.claim(w, "winner", m.group(1) if m else row[7],
                    WINNER.get(v["verdict"], f"compare: {v['verdict']}"))
            if m:
                check_p(a, w, m.group(2), v.get("p_value"))
        t.done = set(range(len(t.rows)))
    for k in keys:
        if k not in seen:
            a.bad(sec.path, "row", "(none)", f"a row for {k}")


# ---- category tables and the roofline ---------------------------------------

CATEGORY_SECTIONS = {
    "Element-wise": "elementwise",
    "Activations": "activation",
    "Reductions": "reduction",
    "Matrix multiplication": "matmul,gemm,bmm,contraction",
    "Transpose and layout": "layout,transpose",
    "NN ops: softmax, convolution, pooling, normalization":
        "softmax,conv,convolution,pool,pooling,norm,normalization,nn,loss,"
        "attention",
    "Fused ops": "fused,unfused",
    "Creation": "creation",
    "In-place forms": "inplace",
    "Optimizers": "optimizer,optim",
    "Linear algebra": "linalg,lapack,decomposition,solve",
    "API overhead": "overhead,api",
    "Backward ops (gradients)": "backward",
    "Training workloads: model steps, hooks, API layers, pool": "workload",
}


def section_of(category):
    for title, cats in CATEGORY_SECTIONS.items():
        if category in cats.split(","):
            return title
    return f"Other ops: {category}"


def fits_level(data, nbytes, threads):
    """The cache level a working set fits: the first of the run's levels
    (peaks.levels, from the cache sizes the CPU reports) whose capacity,
    times the threads for a per-thread level, holds it; else DRAM."""
    for lv in data.peaks.get("levels") or []:
        cap = lv.get("capacity_bytes")
        if cap and nbytes <= cap * (threads if lv.get("per_thread") else 1):
            return lv["name"]
    return "DRAM"


DT_BYTES = {"f32": 4, "f64": 8, "bf16": 2, "f16": 2}


def footprint(c):
    """The bytes of case c's arrays (results.c case_footprint) for the
    ops whose kernels store cached -- in-place forms, optimizers,
    reductions --, whose roof is then the level that holds them at the
    largest set not above them; None for the others.  Inputs in the
    case's dtype but an optimizer's state past its first two (f32 for a
    16-bit case); outputs but those written into an input (every one of
    an in-place op or optimizer, but lbfgs's direction: op.c's alias
    tables)."""
    if c.category not in ("inplace", "optimizer", "reduction"):
        return None
    es = DT_BYTES.get(c.dtype)
    if not es:
        return None

    f = 0
    for i, s in enumerate(c.rec.get("shapes") or []):
        half_state = (c.category == "optimizer" and i >= 2 and
                      c.dtype in ("bf16", "f16"))
        f += math.prod(s) * (4 if half_state else es)
    for o, s in enumerate(c.rec.get("out_shapes") or []):
        if c.category == "reduction" or (c.op == "lbfgs" and o == 1):
            f += math.prod(s) * es
    return f


def pick_sets(bws, fp):
    """Of bandwidth entries bws (one kernel, level, thread counts), the
    figures a footprint of fp bytes may take (roofline.c bw_pick): per
    thread count the largest set not above fp, else the smallest."""
    out = []
    for t in {e["threads"] for e in bws}:
        es = [e for e in bws if e["threads"] == t]
        if any(not e.get("working_set_bytes") for e in es):
            out += es
            continue
        under = [e for e in es if e["working_set_bytes"] <= fp]
        out.append(max(under, key=lambda e: e["working_set_bytes"])
                   if under else
                   min(es, key=lambda e: e["working_set_bytes"]))
    return out


def roof(data, c):
    """The attainable time of case c from the run's measured peaks: the
    bytes over the best bandwidth of its kernel (roofline.bw_kernel) at
    the level its working set fits, at its thread count or fewer (for a
    cached-store op, the level its arrays fit and the set footprint
    picks); the
    FLOPs over the best FMA rate of the ISA it ran at and its dtype at
    its thread count or fewer; the larger of the two.  Returns {time,
    bound ('memory' or 'compute'), level, isa, kernel} or None."""
    r = c.rec.get("roofline")
    if not r or not c.ok:
        return None
    thr = int(c.axes.get("threads", 1))
    isa = c.axes.get("isa", "auto")
    if isa == "auto":
        isa = ((data.main.get("env") or {}).get("cpu") or {}).get(
            "isa_used")
    # copy_h2d/copy_d2h count the link's bytes once; on the host they
    # are read and written (results.c)
    nbytes = c.bytes * 2 if c.op in ("copy_h2d", "copy_d2h") else c.bytes
    # the footprint picks the level and set where the record says it did
    # (files from before footprint_bytes: the bytes and the fastest set)
    fp = footprint(c) if r.get("footprint_bytes") is not None else None
    level = fits_level(data, fp if fp else nbytes, thr)
    ents = [e for e in data.peaks.get("bandwidth") or []
            if e["kernel"] == r.get("bw_kernel") and e["level"] == level and
            e["threads"] <= thr]
    if fp:
        ents = pick_sets(ents, fp)
    bws = [e["best_gb_s"] for e in ents]
    # a 16-bit case computes in 16-bit only where its op runs on a GEMM
    # (matmul, linear, conv2d, conv2d_nobias) and its kernel is of the
    # level its dtype's figure belongs to (impl ..._avx512bf16 at isa
    # avx512bf16); other 16-bit rows widen to f32 (exp_bf16_avx512bf16
    # too: its level only narrows): f32's FMA rate, as also when the
    # peaks hold no figure of the dtype (results.c)
    pdt = c.dtype
    impl = c.rec.get("impl") or ""
    gemm_op = c.category == "matmul" or c.op in ("linear", "conv2d",
                                                  "conv2d_nobias")
    if c.dtype in ("bf16", "f16") and (
            not gemm_op or impl.rsplit("_", 1)[-1] != isa):
        pdt = "f32"
    # matmul_int8 (dtype f32): u8 x s8 multiply-adds, the int8 dot roof
    # (tb_roofline_flop_dtype); none at a level without that figure
    if c.op == "matmul_int8":
        pdt = "int8"

    def flops_of(dt, lv):
        return [e for e in data.peaks.get("flops") or []
                if (lv is None or e["isa"] == lv) and e["dtype"] == dt and
                e["threads"] <= thr]
    # results.c's order: the level; for isa=auto at a level the peaks
    # lack, the best of any level; then a 16-bit case without a figure
    # of its dtype takes f32's
    lv = isa
    fls = flops_of(pdt, lv)
    if not fls and c.axes.get("isa", "auto") == "auto":
        lv = None
        fls = flops_of(pdt, lv)
    if not fls and pdt in ("bf16", "f16"):
        pdt = "f32"
        fls = flops_of(pdt, lv)
    best = max(fls, key=lambda e: e["best_gflop_s"]) if fls else None
    if best:
        isa = best["isa"]
    tb = nbytes / max(bws) if bws and nbytes else 0
    tf = c.flops / best["best_gflop_s"] if best and c.flops else 0
    if not tb and not tf:
        return None
    return {"time": max(tb, tf), "bound": "compute" if tf > tb else "memory",
            "level": level, "isa": isa, "kernel": r.get("bw_kernel"),
            "peak_dtype": pdt if pdt != c.dtype else None}


def l3_bytes(env):
    return max([x["size_bytes"] for x in (env.get("cpu") or {}).get(
        "caches") or [] if x.get("level") == 3] or [0])


def roof_entry(pk, r, level, threads):
    """The peaks' bandwidth entry of roofline r's kernel at level and
    threads (at the working set r names, when it names one: a level
    measured on several sets), or {}."""
    ws = r.get("bandwidth_working_set_bytes")
    e = [e for e in pk.get("bandwidth") or []
         if e["kernel"] == r.get("bw_kernel") and e["level"] == level and
         e["threads"] == threads and
         (ws is None or threads != r.get("bandwidth_threads") or
          e.get("working_set_bytes") == ws)]
    return e[0] if e else {}


def check_cause(a, w, c, text):
    """The cause a row gives for a fraction above 100%: its figures must
    be the records' and its condition must hold."""
    env, pk = a.data.main.get("env") or {}, a.data.peaks
    r = c.rec.get("roofline") or {}
    cpus = (env.get("cpu") or {}).get("logical_cpus")
    a.sentences += 1
    m = re.fullmatch(rf"its ({NUM}) MiB are held to the DRAM roof, measured "
                     rf"on ({NUM}) MiB: above the L3 the CPU reports, but part"
                     r" of them stays in a larger cache", text)
    if m:
        ws = roof_entry(pk, r, "DRAM", r.get("bandwidth_threads")).get(
            "working_set_bytes")
        a.fig(w, "working set (MiB)", m.group(1), c.bytes / 2 ** 20)
        a.fig(w, "DRAM roof's set (MiB)", m.group(2),
              ws / 2 ** 20 if ws else None)
        if not (r.get("level") == "DRAM" and ws and c.bytes < ws / 2 and
                c.bytes > l3_bytes(env)):
            a.bad(w, "cause", text, "its condition does not hold")
        return
    m = re.fullmatch(rf"peaks measured under load \(1-minute load average "
                     rf"({NUM}) on (\d+) CPUs\), so the roof is low", text)
    if m:
        load = pk.get("load_avg_1m")
        a.fig(w, "load average", m.group(1), load)
        a.fig(w, "CPUs", m.group(2), cpus)
        if not (load is not None and cpus and load > cpus / 2):
            a.bad(w, "cause", text, "load not above half the CPUs")
        return
    m = re.fullmatch(rf"held to the (\d+)-thread (\w+) figure \(({NUM}) GB/s\)"
                     rf", below the (\d+)-thread one \(({NUM}) GB/s\): a roof "
                     r"from before roofs were monotone in threads", text)
    if m:
        a.fig(w, "roof used", m.group(3), r.get("bandwidth_gb_s"))
        a.fig(w, "fewer threads' figure", m.group(5),
              roof_entry(pk, r, r.get("level"),
                         int(m.group(4))).get("best_gb_s"))
        return
    m = re.fullmatch(rf"its ({NUM}) KiB are held to the (L2|L3) roof, but "
                     rf"the L(\d) \(({NUM}) KiB a thread\) holds ({NUM})% "
                     r"of them", text)
    if m:
        lv = int(m.group(2)[1])
        t = r.get("threads") or 1
        ws = r.get("attainable_gb_s", 0) * r.get("min_time_ns", 0)
        low = [x["size_bytes"] for x in (env.get("cpu") or {}).get("caches")
               or [] if x.get("level") == lv - 1 and
               x.get("type") != "Instruction"]
        a.word(w, "roof level", m.group(2), r.get("level"))
        a.word(w, "level below", m.group(3), str(lv - 1))
        a.fig(w, "working set (KiB)", m.group(1), ws / 1024)
        a.fig(w, "level below (KiB)", m.group(4),
              max(low) / 1024 if low else None)
        if low and ws > 0:
            a.fig(w, "share held", m.group(5) + "%",
                  min(1, max(low) * t / ws), "pct")
            if not max(low) * t >= ws / 4:
                a.bad(w, "cause", text, "the level below holds under 1/4")
        return
    m = re.fullmatch(rf"({NUM})% above the roof, within the spread of the "
                     rf"roof's own repetitions \(({NUM}) to ({NUM}) GB/s: "
                     rf"({NUM})%\)", text)
    if m:
        e = roof_entry(pk, r, r.get("level"), r.get("bandwidth_threads"))
        a.fig(w, "above the roof", m.group(1) + "%", r.get("fraction", 0) - 1,
              "pct")
        a.fig(w, "roof's worst", m.group(2), e.get("worst_gb_s"))
        a.fig(w, "roof's best", m.group(3), e.get("best_gb_s"))
        if e.get("worst_gb_s"):
            sp = e["best_gb_s"] / e["worst_gb_s"] - 1
            a.fig(w, "roof's spread", m.group(4) + "%", sp, "pct")
            if not r.get("fraction", 0) - 1 <= sp:
                a.bad(w, "cause", text, "above the roof's spread")
        return
    if text.startswith("held to the add kernel, which writes a third array"):
        if not (c.category in ("inplace", "optimizer") and
                r.get("bw_kernel") == "add"):
            a.bad(w, "cause", text, "not an in-place op held to add")
        return
    m = re.fullmatch(r"no L1 roof in these peaks \(measured before tbench "
                     rf"measured one\); its ({NUM}) KiB fit the L1 \(({NUM}) "
                     r"KiB a thread\) but are held to the (\w+)'s bandwidth",
                     text)
    if m:
        a.fig(w, "working set (KiB)", m.group(1), c.bytes / 1024)
        l1 = [x["size_bytes"] for x in (env.get("cpu") or {}).get("caches")
              or [] if x.get("level") == 1 and x.get("type") == "Data"]
        a.fig(w, "L1 (KiB)", m.group(2), l1[0] / 1024 if l1 else None)
        if any(lv.get("name") == "L1" for lv in pk.get("levels") or []):
            a.bad(w, "cause", text, "the peaks have an L1 level")
        return
    a.bad(w, "roofline fraction above 100%", text, "a measured cause")


def check_fraction(a, w, c, cell, rf):
    """'Of peak': the case's fraction of its roofline, flagged with a
    cause when above 100%."""
    m = re.fullmatch(rf"({NUM}%)(?: \(\*\*above the roof\*\*: (.*)\))?", cell)
    true = rf["time"] / c.median if rf else None
    if not m:
        return a.fig(w, "of peak", cell, true, "pct")
    a.fig(w, "of peak", m.group(1), true, "pct")
    stored = (c.rec.get("roofline") or {}).get("fraction")
    if true is not None and stored is not None and \
            abs(stored - true) > 1e-6 * true:
        a.bad(w, "roofline.fraction", show(stored, "pct"),
              f"{show(true, 'pct')} (min_time_ns / median_ns)")
    if true is not None and true > 1 and not m.group(2):
        a.bad(w, "fraction above 100% without a cause", cell,
              "a flagged cause in the row")
    if m.group(2):
        a.claim(w, "above the roof", "flagged",
                "flagged" if true is not None and true > 1 else
                "not above 100%")
        check_cause(a, w, c, m.group(2))
    return bool(m.group(2))


def check_bound(a, w, c, cell, rf):
    m = re.fullmatch(rf"({NUM})x of (.*) \((.*)\)", cell)
    if not rf or not m:
        return a.word(w, "time / bound", cell, "a bound" if rf else "")
    a.fig(w, "time / bound", m.group(1), c.median / rf["time"])
    a.fig(w, "bound", m.group(2), rf["time"], "time")
    a.word(w, "what bounds it", m.group(3),
           f"{rf['isa']} FMA" + (f", {rf['peak_dtype']}"
                                 if rf.get("peak_dtype") else "")
           if rf["bound"] == "compute" else
           f"{rf['kernel']}, {rf['level']}")


def rate_cell(a, w, what, cell, work):
    if not work:
        return a.word(w, what, cell, "")
    a.fig(w, what, cell, work)


def check_category_row(a, sec, ln, row, t):
    """One row of a category table; returns whether it was flagged above
    the roof."""
    w = row_name(sec, ln, row)
    col = {h: row[i] for i, h in enumerate(t.header) if i < len(row)}
    cid = "/".join(row[:4])
    c = next((x for x in a.data.ok("main") if x.id == cid), None)
    if c is None:
        a.word(w, "case", cid, "no ok case with this id")
        return False
    a.seen_rows.setdefault(c.id, []).append(sec.title)
    if sec.title != section_of(c.category):
        a.word(w, "section", sec.title, section_of(c.category))
    a.fig(w, "median", col["Median"], c.median, "time")
    lo, _, hi = col["95% CI"].partition(" – ")
    a.fig(w, "CI low", lo, c.stats.get("ci_low_ns"), "time")
    a.fig(w, "CI high", hi, c.stats.get("ci_high_ns"), "time")
    if "Steps/s" in col:
        a.fig(w, "steps/s", col["Steps/s"], 1e9 / c.median, "rate")
    if "GB/s" in col:
        rate_cell(a, w, "GB/s", col["GB/s"], c.bytes / c.median)
    if "GFLOP/s" in col:
        rate_cell(a, w, "GFLOP/s", col["GFLOP/s"], c.flops / c.median)
    rf = roof(a.data, c)
    flagged = False
    if "Of peak" in col:
        if rf:
            flagged = check_fraction(a, w, c, col["Of peak"], rf)
        else:
            a.word(w, "of peak", col["Of peak"], "")
    if "Time / bound" in col:
        check_bound(a, w, c, col["Time / bound"], rf)
    n, _, it = col["Samples"].partition(" x ")
    a.fig(w, "samples", n, c.stats.get("n"))
    a.fig(w, "iterations per sample", it, c.stats.get("iters_per_sample"))
    a.word(w, "stopped by", col["Stopped by"], c.stats.get("stop_reason"))
    return flagged


def check_over_note(a, sec, over):
    env = a.data.main.get("env") or {}
    load = a.data.peaks.get("load_avg_1m")
    cpus = (env.get("cpu") or {}).get("logical_cpus")
    notes = [t for t in sec.texts
             if re.match(r"\d+ cases? runs? above 100% of", t.text)]
    if over and not notes:
        a.bad(sec.path, "note", "(none)", f"{over} cases above 100%")
    for t in notes:
        t.done = True
        w = f"{sec.path}, line {t.line}"
        a.fig(w, "cases above 100%", t.text.split(" ")[0], over)
        m = re.search(rf"load average was ({NUM}) on (\d+) logical CPUs",
                      t.text)
        a.claim(w, "peaks measured under load", bool(m),
                load is not None and bool(cpus) and load > cpus / 2)
        if m:
            a.fig(w, "load average", m.group(1), load)
            a.fig(w, "CPUs", m.group(2), cpus)


def check_category(a, sec):
    method_texts(a, sec, "Median time per call with its 95%")
    over = 0
    for t in sec.tables:
        for i, (ln, row) in enumerate(t.rows):
            t.done.add(i)
            over += check_category_row(a, sec, ln, row, t)
    check_over_note(a, sec, over)


def check_category_rows_complete(a):
    for c in a.data.ok("main"):
        got = a.seen_rows.get(c.id, [])
        if len(got) != 1:
            a.bad("category tables", c.id, f"{len(got)} rows",
                  f"one row, in {section_of(c.category)}")


# ---- speedups and the selection guidelines ----------------------------------

def ref_score(c):
    """How well c fits as the reference: cpu with isa=scalar at one
    thread, else cpu with isa=scalar, else cpu at one thread."""
    if c.backend != "cpu":
        return -1
    scalar = c.axes.get("isa") == "scalar"
    one = str(c.axes.get("threads", "1")) == "1"
    return 3 if scalar and one else 2 if scalar else 1 if one else -1


def reference(data, key):
    best = None
    for c in data.by_key(key, "main"):
        if ref_score(c) >= 0 and (best is None or
                                  ref_score(c) > ref_score(best)):
            best = c
    return best


SIGNIFICANT = {"improved": "faster", "regressed": "slower",
               "unchanged": "no", "inconclusive": "no"}


def check_speedups(a, sec):
    check_test_text(a, sec)
    method_texts(a, sec, "Speedup = median time of the reference")
    want = [c for c in a.data.ok("main")
            if reference(a.data, c.key) not in (None, c)]
    seen = set()
    for t in sec.tables:
        for ln, row, (med, ref, sp, sig) in rows_of(
                t, "Median", "Reference", "Speedup", "Significant"):
            w = row_name(sec, ln, row)
            cid = "/".join(row[:4])
            c = next((x for x in want if x.id == cid), None)
            if c is None:
                a.word(w, "case", cid, "an ok case with a reference")
                continue
            seen.add(cid)
            r = reference(a.data, c.key)
            a.fig(w, "median", med, c.median, "time")
            m = re.fullmatch(r"(\S+) \((.*)\)", ref)
            a.word(w, "reference", m.group(1) if m else ref, r.variant)
            if m:
                a.fig(w, "reference median", m.group(2), r.median, "time")
            a.fig(w, "speedup", sp, r.median / c.median, "x")
            v = a.verdict(r, c)["verdict"]
            a.claim(w, "significant", sig,
                    SIGNIFICANT.get(v, f"compare: {v}"))
    for c in want:
        if c.id not in seen:
            a.bad(sec.path, "row", "(none)", f"a row for {c.id}")


def guideline_sizes(a, opp, dtype):
    """The sizes of opp and dtype in order of work, each with its
    fastest case, the next and compare's verdict of the one against the
    other (sizes where one variant ran are left out)."""
    cs = sorted((c for c in a.data.ok() if c.opp == opp and
                 c.dtype == dtype and not c.transfers), key=Case.work)
    out, keys = [], []
    for c in cs:
        if c.key in keys:
            continue
        keys.append(c.key)
        best, nxt = fastest_two([d for d in a.data.by_key(c.key)
                                 if not d.transfers])
        if nxt is not None:
            out.append((best, nxt, a.verdict(nxt, best)["verdict"]))
    return out


def guideline_runs(sizes):
    """Consecutive sizes with one outcome: the same winner, or the same
    verdict without one."""
    runs = []
    for g in sizes:
        last = runs[-1][-1] if runs else None
        same = last is not None and (
            (g[2] == "improved") == (last[2] == "improved")) and (
            g[0].variant == last[0].variant if g[2] == "improved"
            else g[2] == last[2])
        if same:
            runs[-1].append(g)
        else:
            runs.append([g])
    return runs


def segment_want(run):
    """A run's guideline segment with its ratio as R, and the ratios."""
    first, last = run[0], run[-1]
    at = f"at {first[0].shapes}" + (f" to {last[0].shapes}"
                                    if len(run) > 1 else "")
    ratios = [g[1].median / g[0].median for g in run]
    if first[2] == "improved":
        nexts = {g[1].variant for g in run}
        tail = f", {first[1].variant}" if len(nexts) == 1 else ""
        what = f"use {first[0].variant} (R faster than the next{tail})"
    elif first[2] == "unchanged":
        what = "no winner: the fastest two are equal within the threshold (R)"
    elif first[2] == "inconclusive":
        what = ("no winner: inconclusive, this run cannot tell the fastest "
                "two apart (R)")
    else:
        what = f"(compare: {first[2]}) (R)"
    return f"{at}: {what}", min(ratios), max(ratios)


def check_guideline(a, sec, t):
    w = f"{sec.path}, line {t.line}"
    m = re.fullmatch(r"(\S+) (\w+)(, data starting on the host)?: (.*)\.",
                     t.text)
    if not m or m.group(3):
        return      # the @transfers view: not checked (listed)
    t.done = True
    runs = guideline_runs(guideline_sizes(a, m.group(1), m.group(2)))
    segs = re.split(r"; (?=at )", m.group(4))
    a.fig(w, "ranges of sizes", str(len(segs)), len(runs))
    for seg, run in zip(segs, runs):
        want, lo, hi = segment_want(run)
        r = re.search(rf"\(({NUM})(?:-({NUM}))?x", seg)
        if not r:
            a.claim(w, "guideline", seg, want)
            continue
        a.claim(w, "guideline", seg[:r.start()] + "(R" + seg[r.end() - 1:]
                .replace("x", "", 1), want)
        a.fig(w, "ratio (lowest)", r.group(1), lo)
        a.fig(w, "ratio (highest)", r.group(2) or r.group(1), hi)
    a.used_guides.add((m.group(1), m.group(2)))


def check_guidelines(a, sec):
    method_texts(a, sec, "Per op and dtype, over the measured sizes")
    a.used_guides = set()
    for t in sec.texts:
        if t.kind == "bullet":
            check_guideline(a, sec, t)
    for c in a.data.ok():
        k = (c.opp, c.dtype)
        if k not in a.used_guides and len(guideline_sizes(a, *k)):
            a.used_guides.add(k)
            a.bad(sec.path, "guideline", "(none)", f"a line for {k[0]} "
                  f"{k[1]}")


def layout_twin(data, c):
    """The contiguous case of layout case c (its id without @layout=L) in
    the main run, or None."""
    want = c.id.replace("@layout=" + c.rec["layout"], "", 1)
    for t in data.ok("main"):
        if t.id == want and not t.rec.get("layout"):
            return t
    return None


LAYOUT_VERDICT = {"regressed": "view slower", "improved": "view faster",
                  "unchanged": "equal within the threshold",
                  "inconclusive": "inconclusive",
                  "not tested": "not tested"}


def check_layouts(a, sec):
    """Each row: a layout case beside its contiguous twin, the two medians,
    their ratio (view over contiguous), compare's CI of it and its verdict
    on the pair (the view as the new side), in the main run's order."""
    method_texts(a, sec, "Cases whose inputs were views")
    pairs = [(c, layout_twin(a.data, c)) for c in a.data.ok("main")
             if c.rec.get("layout")]
    pairs = [p for p in pairs if p[1]]
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)),
              len(pairs))
        for i, ((ln, row), (c, base)) in enumerate(zip(t.rows, pairs)):
            t.done.add(i)
            w = row_name(sec, ln, row)
            a.word(w, "case", "/".join(row[:4]), base.id)
            a.word(w, "layout", row[4], c.rec["layout"])
            a.fig(w, "contiguous", row[5], base.median, "time")
            a.fig(w, "view", row[6], c.median, "time")
            a.fig(w, "ratio", row[7], c.median / base.median, "x")
            v = a.verdict(base, c)
            lo, _, hi = row[8].partition(" … ")
            if v["ci_low"] is None or v["ci_high"] is None:
                a.word(w, "95% CI", row[8], "-")
            else:
                a.fig(w, "CI low", lo, 1 + v["ci_low"], "x")
                a.fig(w, "CI high", hi, 1 + v["ci_high"], "x")
            a.word(w, "verdict", row[9], LAYOUT_VERDICT.get(v["verdict"],
                                                           v["verdict"]))
