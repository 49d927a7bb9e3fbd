"""The audit of the training sections: hooks, API layers, steps by batch
and the memory pool (scripts/audit_report.py)."""
import re

from audit_core import NUM, method_texts, row_name, time_cell


# ---- training: hooks, API layers, steps by batch, pool ----------------------

def within_noise(a, w, what, cell, v):
    """Does the cell say "within noise" exactly when compare's verdict on
    the pair is neither regressed nor improved?  Returns (agrees, the
    noise the cell must print then: the larger of compare's noise floor
    and the CI's reach, or None where compare calls a change)."""
    called = v["verdict"] in ("regressed", "improved")
    said = "within noise" if cell.startswith("within noise") else "a change"
    want = "a change" if called else "within noise"
    a.sentences += 1
    if said != want:
        a.bad(w, what, cell, f"{want} (compare: {v['verdict']})")
    noise = None if called else max(v.get("floor") or 0, -v["ci_low"],
                                     v["ci_high"])
    return said == want, noise


def change_cell(a, w, what, cell, old, new, unit=None):
    """A change of new over old with compare's CI: '+5.2% (+3.1 to
    +7.0)' where compare calls it, else 'within noise (±2.1%)'; unit (a
    time, ns) prints it as time per unit of old's median instead."""
    if old is None or new is None:
        return a.word(w, what, cell, "-")
    v = a.verdict(old, new)
    d, lo, hi = v.get("change"), v.get("ci_low"), v.get("ci_high")
    if d is None or lo is None:
        return a.word(w, what, cell, "-")     # not tested
    base = old.median / unit if unit else 1
    agree, noise = within_noise(a, w, what, cell, v)
    if not agree:
        return
    if noise is not None:
        m = re.search(r"±(.*?)(x?)\)$", cell)
        a.fig(w, f"{what}: noise", m.group(1) if m else cell,
              base * noise, "time" if unit else "pct")
        return
    m = re.fullmatch(r"([+-]?)(.*?) \((-?)(.*) to (-?)(.*)\)", cell)
    if not m:
        return a.word(w, what, cell, "change (low to high)")
    if not unit:
        a.fig(w, what, m.group(1) + m.group(2), d, "pct")
        a.fig(w, f"{what} CI low", m.group(3) + m.group(4) + "%", lo, "pct")
        a.fig(w, f"{what} CI high", m.group(5) + m.group(6) + "%", hi, "pct")
        return
    for sign, text, val, part in ((m.group(1), m.group(2), d, ""),
                                  (m.group(3), m.group(4), lo, " CI low"),
                                  (m.group(5), m.group(6), hi, " CI high")):
        a.word(w, f"{what}{part} sign", "-" if sign == "-" else "+",
               "-" if val < 0 else "+")
        a.fig(w, f"{what}{part}", text, abs(base * val), "time")




HOOK_OPS = {"mlp": 6, "cnn": 10}


def hook_groups(data):
    out = {}
    for c in data.ok("main"):
        if c.op in ("mlp_train_step", "cnn_train_step") and \
                c.param("phase", 2) <= 1:
            k = (c.op, c.shapes, c.dtype, c.variant, c.param("lr", 0),
                 c.param("momentum", 0), c.param("pool", 0))
            out.setdefault(k, c)
    return list(out.values())


def hook_rows(data, c):
    """(hooks, forward case, fwd+bwd case, forward-with-hooks case) of a
    hook group, with its hooks-0 cases."""
    f0 = data.find(c, phase=0, hooks=0)
    fb0 = data.find(c, phase=1, hooks=0)
    rows = []
    for h in range(4):
        f = data.find(c, phase=0, hooks=h) or data.find(c, phase=0,
                                                      hooks=h & 1)
        fb, fh = data.find(c, phase=1, hooks=h), data.find(c, phase=0,
                                                          hooks=h)
        if fb or fh:
            rows.append((h, f, fb, fh))
    return f0, fb0, rows


def sub(x, y):
    return x.median - y.median if x and y else None


def check_hook_row(a, w, row, c, h, f, fb, fh, f0, fb0):
    d = a.data
    calls = HOOK_OPS[c.op[:3]] * (bool(h & 1) + bool(h & 2))
    a.word(w, "case", " | ".join(row[:3]), f"{c.variant} | {c.op}/"
           f"{c.shapes} | {h}")
    time_cell(a, w, "forward", row[3], f.median if f else None)
    time_cell(a, w, "backward", row[4], sub(fb, f))
    time_cell(a, w, "forward+backward", row[5], fb.median if fb else None)
    pf, pfb, pfb0 = d.peer(f), d.peer(fb), d.peer(fb0)
    time_cell(a, w, "PyTorch forward", row[9], pf.median if pf else None)
    time_cell(a, w, "PyTorch backward", row[10], sub(pfb, pf))
    time_cell(a, w, "PyTorch fwd+bwd", row[11], pfb.median if pfb else None)
    if not h:
        for k in (6, 7, 8, 12, 13):
            a.word(w, "overhead", row[k], "-")
        return
    change_cell(a, w, "overhead forward", row[6], f0, fh)
    change_cell(a, w, "overhead fwd+bwd", row[7], fb0, fb)
    change_cell(a, w, "per hook call", row[8], fb0, fb, calls)
    change_cell(a, w, "PyTorch overhead fwd+bwd", row[12], pfb0, pfb)
    change_cell(a, w, "PyTorch per hook call", row[13], pfb0, pfb, calls)


def check_hooks(a, sec):
    method_texts(a, sec, "The model's training step")
    want = []
    for c in hook_groups(a.data):
        f0, fb0, rows = hook_rows(a.data, c)
        if f0 and fb0 and any(h for h, *_ in rows):
            want += [(c, f0, fb0) + r for r in rows]
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)),
              len(want))
        for i, ((ln, row), (c, f0, fb0, h, f, fb, fh)) in enumerate(
                zip(t.rows, want)):
            t.done.add(i)
            check_hook_row(a, row_name(sec, ln, row, 3), row, c, h, f, fb,
                           fh, f0, fb0)


def numel(c):
    n = 1
    for d in (c.rec.get("shapes") or [[]])[0]:
        n *= d
    return n


LAYERS = ["raw kernel", "op-table dispatch",
          "tensor API (allocates, checks)", "tensor API + hook"]


def check_api(a, sec):
    method_texts(a, sec, "The same add called four ways")
    groups = {}
    for c in a.data.ok("main"):
        if c.op == "api_add" and c.param("pool", 0) == 0:
            groups.setdefault((c.variant, c.shapes, c.dtype), c)
    want = []
    for c in sorted(groups.values(), key=lambda c: (c.variant, numel(c))):
        raw = a.data.find(c, layer=0)
        if raw:
            want += [(raw, lay, a.data.find(c, layer=lay))
                     for lay in range(4) if a.data.find(c, layer=lay)]
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)),
              len(want))
        for i, ((ln, row), (raw, lay, c)) in enumerate(zip(t.rows, want)):
            t.done.add(i)
            w = row_name(sec, ln, row, 3)
            a.word(w, "case", " | ".join(row[:3]),
                   f"{c.variant} | {numel(c)} | {lay} {LAYERS[lay]}")
            p, praw = a.data.peer(c), a.data.peer(raw)
            time_cell(a, w, "per call", row[3], c.median)
            time_cell(a, w, "PyTorch per call", row[6],
                      p.median if p else None)
            if not lay:
                for k in (4, 5, 7, 8):
                    a.word(w, "over raw", row[k], "-")
                continue
            change_cell(a, w, "over raw", row[4], raw, c, 1)
            change_cell(a, w, "over raw (%)", row[5], raw, c)
            change_cell(a, w, "PyTorch over its layer 0", row[7], praw, p, 1)
            change_cell(a, w, "PyTorch over (%)", row[8], praw, p)


STEP_OPS = ("mlp_train_step", "mlp_infer_step", "cnn_train_step",
            "cnn_infer_step", "tfm_train_step", "tfm_infer_step")


def step_label(c):
    """The model step's name in the table: the op, the transformer
    block's with its sequence length, d_model and heads."""
    x = c.rec["shapes"][0]
    if not c.op.startswith("tfm_") or len(x) != 3:
        return c.op
    return (f"{c.op} (seq {x[1]}, d_model {x[2]}, "
            f"{c.param('heads', 4):g} heads)")


def rate_series(data):
    out = {}
    for op in STEP_OPS:
        for c in data.ok("main"):
            if c.op == op and c.param("hooks", 0) == 0 and \
                    c.param("pool", 0) == 0 and c.param("phase", 2) == 2:
                out.setdefault((c.doc, step_label(c), c.dtype, c.variant),
                               []).append(c)
    return [sorted(v, key=lambda c: c.rec["shapes"][0][0])
            for v in out.values()]


def check_rates(a, sec):
    method_texts(a, sec, "The MLP (784-256-128-10)")
    want = [c for s in rate_series(a.data) for c in s]
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)),
              len(want))
        for i, ((ln, row), c) in enumerate(zip(t.rows, want)):
            t.done.add(i)
            w = row_name(sec, ln, row, 3)
            b = c.rec["shapes"][0][0]
            a.word(w, "case", " | ".join(row[:3]),
                   f"{step_label(c)} | {c.variant} | {b}")
            p = a.data.peer(c)
            time_cell(a, w, "median", row[3], c.median)
            a.fig(w, "steps/s", row[4], 1e9 / c.median)
            a.fig(w, "samples/s", row[5], 1e9 * b / c.median)
            time_cell(a, w, "PyTorch median", row[6],
                      p.median if p else None)
            if p:
                a.fig(w, "PyTorch steps/s", row[7], 1e9 / p.median)
                a.fig(w, "PyTorch samples/s", row[8], 1e9 * b / p.median)
                a.fig(w, "tbench / PyTorch", row[9], p.median / c.median)


def speedup_cell(a, w, cell, on, off):
    """Median off / median on with compare's CI of off against on where
    compare calls it, else 'within noise (1 ±x)'."""
    v = a.verdict(on, off)
    d, lo, hi = v.get("change"), v.get("ci_low"), v.get("ci_high")
    if d is None or lo is None:
        return a.word(w, "speedup", cell, "-")   # not tested
    agree, noise = within_noise(a, w, "speedup", cell, v)
    if not agree:
        return
    m = re.fullmatch(rf"within noise \(1 ±({NUM})x\)", cell) \
        if noise is not None else \
        re.fullmatch(rf"({NUM})x \(({NUM}) to ({NUM})\)", cell)
    if not m:
        return a.word(w, "speedup", cell, "a speedup with its CI")
    if noise is not None:
        return a.fig(w, "speedup noise", m.group(1), noise)
    a.fig(w, "speedup", m.group(1), off.median / on.median)
    a.fig(w, "speedup CI low", m.group(2), 1 + lo)
    a.fig(w, "speedup CI high", m.group(3), 1 + hi)


def check_pool(a, sec):
    method_texts(a, sec, "The same case with tensor memory from")
    want = [(on, a.data.find(on, pool=0)) for on in a.data.ok("main")
            if on.param("pool", 0) == 1]
    want = [p for p in want if p[1]]
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)),
              len(want))
        for i, ((ln, row), (on, off)) in enumerate(zip(t.rows, want)):
            t.done.add(i)
            w = row_name(sec, ln, row, 2)
            a.word(w, "case", f"{row[0]} | {row[1]}",
                   f"{off.opp.replace('pool=0', 'pool=0/1')}/{off.shapes} | "
                   f"{on.variant}")
            time_cell(a, w, "pool off", row[2], off.median)
            time_cell(a, w, "pool on", row[3], on.median)
            speedup_cell(a, w, row[4], on, off)
            da, db = off.counter("device_allocs"), on.counter("device_allocs")
            a.fig(w, "backend allocs off", row[5], da)
            a.fig(w, "backend allocs on", row[6], db)
            a.fig(w, "pool hits", row[7],
                  da - db if None not in (da, db) else None)
            for col, k, kind in ((8, "device_alloc_bytes", "bytes"),
                                 (10, "minor_faults", "num"),
                                 (12, "peak_extra_bytes", "bytes")):
                a.fig(w, f"{k} off", row[col], off.counter(k), kind)
                a.fig(w, f"{k} on", row[col + 1], on.counter(k), kind)
