"""What every part of the report audit shares (scripts/audit_report.py):
printed numbers read back at their precision, the report's Markdown as
sections of tables and paragraphs, the result files as cases, compare's
verdicts from `tbench compare`, and the tally of what was checked."""
import json
import math
import os
import re
import subprocess
import tempfile


class InputError(Exception):
    """A file the audit needs is missing or unreadable (exit 2)."""


# ---- printed numbers --------------------------------------------------------

NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?"
TIME_UNITS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
BYTE_UNITS = {"B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30,
              "TiB": 2 ** 40}
RATE_UNITS = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def number(text):
    """(value, half a unit of its last printed digit) of a number as
    printf writes it: '1.39', '0.0753', '4.03e-05', '-6.1'."""
    m = re.fullmatch(r"([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?", text)
    if not m or not (m.group(2) or m.group(3)):
        raise ValueError(text)
    exp = int(m.group(4) or 0)
    return float(text), 0.5 * 10.0 ** (exp - len(m.group(3) or ""))


def quantity(text, kind):
    """A printed figure of a kind as (value, half-unit) in base units:
    'time' ('230 ns' -> ns), 'bytes' ('15.3 MiB'), 'rate' ('1.50k'),
    'x' ('1.39x'), 'pct' ('25%' -> 0.25), 'num' ('4.36')."""
    text = text.strip()
    if kind == "time":
        m = re.fullmatch(rf"({NUM}) (ns|us|µs|ms|s)", text)
        scale = TIME_UNITS[m.group(2)] if m else 0
    elif kind == "bytes":
        m = re.fullmatch(rf"({NUM}) (B|KiB|MiB|GiB|TiB)", text)
        scale = BYTE_UNITS[m.group(2)] if m else 0
    elif kind == "rate":
        m = re.fullmatch(rf"({NUM})([kMGT]?)", text)
        scale = RATE_UNITS[m.group(2)] if m else 0
    elif kind == "x":
        m = re.fullmatch(rf"({NUM})x", text)
        scale = 1
    elif kind == "pct":
        m = re.fullmatch(rf"({NUM})%", text)
        scale = 0.01
    else:
        m = re.fullmatch(rf"({NUM})", text)
        scale = 1
    if not m:
        raise ValueError(text)
    v, h = number(m.group(1))
    return v * scale, h * scale


def agrees(printed, half, true):
    """Does true print as printed at that precision?"""
    if true is None or (isinstance(true, float) and math.isnan(true)):
        return False
    return abs(true - printed) <= half * (1 + 1e-6) + 1e-9 * abs(true)


def show(v, kind="num"):
    """A value for a mismatch line, with more digits than printed."""
    if v is None:
        return "none"
    if kind == "time":
        return f"{v:.6g} ns"
    if kind == "bytes":
        return f"{v:.6g} B"
    if kind == "pct":
        return f"{100 * v:.4g}%"
    if kind == "x":
        return f"{v:.5g}x"
    return f"{v:.6g}"


# ---- the Markdown -----------------------------------------------------------

def cells(row):
    return [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]


class Table:
    def __init__(self, line, header, rows):
        self.line = line            # the header's line number
        self.header = header        # header cells
        self.rows = rows            # [(line number, cells)]
        self.done = set()           # indices of the rows checked

    def col(self, name):
        return self.header.index(name)


class Text:
    """A paragraph or a bullet."""

    def __init__(self, line, text, kind):
        self.line, self.text, self.kind = line, text, kind
        self.done = self.method = False


class Section:
    def __init__(self, title, level, line, parent):
        self.title, self.level, self.line = title, level, line
        self.path = f"{parent} / {title}" if parent else title
        self.tables, self.texts = [], []


def parse_markdown(md):
    """The report as sections (every heading opens one), each with its
    tables and its paragraphs and bullets; code blocks and chart images
    are left out (they hold no figure)."""
    lines = md.split("\n")
    secs = [Section("(head)", 1, 1, "")]
    stack = {}
    i = 0
    para = []

    def flush():
        if para:
            secs[-1].texts.append(Text(para[0][0], " ".join(
                t for _, t in para), "para"))
            para.clear()
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("```"):
            flush()
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                i += 1
        elif re.match(r"#+ ", ln):
            flush()
            level = len(ln.split(" ")[0])
            title = ln[level + 1:].strip()
            parent = stack.get(level - 1, "") if level > 2 else ""
            sec = Section(title, level, i + 1, parent)
            stack[level] = sec.path
            secs.append(sec)
        elif ln.startswith("|") and i + 1 < len(lines) and \
                re.match(r"^\|(-+\|)+$", lines[i + 1]):
            flush()
            rows, j = [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append((j + 1, cells(lines[j])))
                j += 1
            secs[-1].tables.append(Table(i + 1, cells(ln), rows))
            i = j - 1
        elif ln.startswith("- "):
            flush()
            secs[-1].texts.append(Text(i + 1, ln[2:], "bullet"))
        elif ln.startswith("!["):
            flush()
        elif ln.strip():
            para.append((i + 1, ln.strip()))
        else:
            flush()
        i += 1
    flush()
    return secs


# ---- the result files -------------------------------------------------------

def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: {e}")


class Case:
    """A case record with the parts of its id the report prints."""

    def __init__(self, rec, doc, role):
        self.rec, self.doc, self.role = rec, doc, role
        self.id = rec["id"]
        parts = self.id.split("/")
        if len(parts) != 4:
            raise InputError(f"case id {self.id!r}: not OP/SHAPES/DTYPE/"
                             "VARIANT")
        self.opp, self.shapes, self.dtype, self.variant = parts
        self.key = "/".join(parts[:3])
        self.op, self.backend = rec["op"], rec["backend"]
        self.axes = rec.get("backend_params") or {}
        self.params = rec.get("params") or {}
        self.status = rec["status"]
        self.ok = self.status == "ok"
        self.category = rec.get("category") or "other"
        self.transfers = bool(rec.get("transfers"))
        st = rec.get("stats") or {}
        self.stats = st
        self.median = self.mad = self.p5 = self.p95 = None
        self.outliers = {}
        if self.ok:
            self.from_samples(st.get("samples_ns") or [st["median_ns"]])
        model = rec.get("model") or {}
        self.flops = model.get("flops") or 0
        self.bytes = model.get("bytes") or 0
        self.items = model.get("items") or 0

    def from_samples(self, xs):
        """Median, MAD, p5, p95 and Tukey's outliers (beyond 1.5 IQR,
        severe beyond 3 IQR) of the raw samples; quantiles interpolate
        linearly between order statistics."""
        xs = sorted(xs)

        def q(p):
            h = (len(xs) - 1) * p
            lo = int(h)
            return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (h - lo)
        self.median, self.p5, self.p95 = q(0.5), q(0.05), q(0.95)
        dev = sorted(abs(x - self.median) for x in xs)
        h = (len(dev) - 1) / 2
        self.mad = (dev[int(h)] + dev[-1 - int(h)]) / 2
        q1, q3 = q(0.25), q(0.75)
        iqr = q3 - q1
        self.outliers = {
            "low_severe": sum(x < q1 - 3 * iqr for x in xs),
            "low_mild": sum(q1 - 3 * iqr <= x < q1 - 1.5 * iqr for x in xs),
            "high_mild": sum(q3 + 1.5 * iqr < x <= q3 + 3 * iqr for x in xs),
            "high_severe": sum(x > q3 + 3 * iqr for x in xs)}

    def work(self):
        """What grows between sizes: FLOPs, else bytes, else elements."""
        return self.flops or self.bytes or self.items or 0

    def threads(self):
        return str(self.axes.get("threads", ""))

    def label(self):
        """The variant without its threads axis ('numpy[form=out]')."""
        rest = [f"{k}={v}" for k, v in self.axes.items() if k != "threads"]
        return self.backend + (f"[{','.join(rest)}]" if rest else "")

    def counter(self, name):
        v = (self.rec.get("counters") or {}).get(name)
        return None if v is None else float(v)

    def param(self, name, default=None):
        v = self.params.get(name, default)
        return float(v) if isinstance(v, (bool, int, float)) else v


class Data:
    """The report's result files: the MAIN run first, then its --with
    files, in the order the report's command names them."""

    def __init__(self, root, main, withs):
        self.paths = [main] + withs
        self.docs = [load_json(os.path.join(root, p)) for p in self.paths]
        self.main = self.docs[0]
        self.cases = []
        for i, d in enumerate(self.docs):
            self.cases += [Case(r, i, "main" if i == 0 else "with")
                           for r in d.get("cases", [])]
        self.peaks = self.main.get("peaks") or {}

    def ok(self, role=None):
        return [c for c in self.cases if c.ok and
                (role is None or c.role == role)]

    def by_key(self, key, role=None):
        return [c for c in self.ok(role) if c.key == key]

    def find(self, like, role="main", **params):
        """The first ok case of role with like's op, shapes and dtype
        (and variant, for MAIN), and like's parameters but those given."""
        for d in self.ok(role):
            if d.op != like.op or d.shapes != like.shapes or \
                    d.dtype != like.dtype:
                continue
            if d.role == "main" and like.role == "main" and \
                    d.variant != like.variant:
                continue
            if all(d.param(n) == params.get(n, like.param(n))
                   for n in like.params):
                return d
        return None

    def peer(self, c):
        """The --with case of c's key with c's thread count, else the
        first of that key; None when none ran."""
        if c is None:
            return None
        peers = self.by_key(c.key, "with")
        same = [d for d in peers if d.threads() == c.threads()]
        return (same or peers or [None])[0]


# ---- compare's verdicts -----------------------------------------------------

class Oracle:
    """Compare's verdict on a pair of cases, from `tbench compare`: the
    old case's record is written under the new one's id (the id seeds
    compare's bootstrap, as it does for the report's pairs) to one
    temporary result file, the new one to another.  Pairs are asked for
    during a first pass over the report and judged in batches, an id at
    most once per batch."""

    def __init__(self, tbench, template):
        self.tbench, self.template = tbench, template
        self.asked = {}      # (old id, new id) -> (old record, new record)
        self.got = {}        # (old id, new id) -> compare's "time" object
        self.options = {}    # compare's options (threshold, alpha...)

    def verdict(self, old, new):
        """compare's "time" object of new against old; None until
        judged (the first pass asks)."""
        k = (old.id, new.id)
        if k not in self.got:
            self.asked[k] = (old.rec, new.rec)
        return self.got.get(k)

    def judge(self):
        todo = list(self.asked.items())
        while todo:
            batch, seen, rest = [], set(), []
            for k, recs in todo:
                (batch if k[1] not in seen else rest).append((k, recs))
                seen.add(k[1])
            self._run(batch)
            todo = rest
        self.asked = {}

    def _run(self, batch):
        olds = [dict(old, id=new["id"]) for _, (old, new) in batch]
        news = [new for _, (_, new) in batch]
        with tempfile.TemporaryDirectory(prefix="audit-") as d:
            paths = []
            for name, cs in (("old.json", olds), ("new.json", news)):
                doc = dict(self.template, cases=cs,
                           summary={"cases": len(cs), "ok": len(cs)})
                paths.append(os.path.join(d, name))
                with open(paths[-1], "w", encoding="utf-8") as f:
                    json.dump(doc, f)
            p = subprocess.run([self.tbench, "compare", *paths, "--format",
                                "json"], capture_output=True, text=True,
                               timeout=300)
        if p.returncode not in (0, 1):
            raise InputError(f"tbench compare: exit {p.returncode}: "
                             f"{p.stderr.strip()}")
        out = json.loads(p.stdout)
        self.options = out.get("options", {})
        by = {c["id"]: c.get("time") for c in out["cases"]}
        for k, _ in batch:
            self.got[k] = by.get(k[1]) or {"verdict": "not tested"}


# ---- the audit --------------------------------------------------------------

def row_name(sec, ln, row, n=4):
    text = " | ".join(row[:n])
    if len(text) > 110:
        text = text[:107] + "..."
    return f"{sec.path}, line {ln} ({text})"


class Audit:
    """Counts what was checked and collects the mismatches.  Checkers
    call fig() for a printed number, word() for a printed name or fact
    the data fixes (both count as figures), claim() for a verdict or a
    comparative sentence (counted as sentences), and method() for text
    that states the method, not a result (not counted, not listed as
    unchecked)."""

    def __init__(self, data, oracle, root):
        self.data, self.oracle, self.root = data, oracle, root
        self.reset()

    def reset(self):
        self.figures = self.sentences = 0
        self.mismatches = []
        self.seen_rows = {}         # case id -> category tables it is in
        self.used_guides = set()    # (op[params], dtype) with a guideline

    def bad(self, where, what, printed, expected):
        self.mismatches.append(f"{where}: {what}: report {printed!r}, "
                               f"data {expected}")

    def fig(self, where, what, printed, true, kind="num"):
        self.figures += 1
        try:
            v, h = quantity(printed, kind)
        except ValueError:
            return self.bad(where, what, printed, show(true, kind))
        if not agrees(v, h, true):
            self.bad(where, what, printed, show(true, kind))

    def word(self, where, what, printed, expected):
        self.figures += 1
        if printed != expected:
            self.bad(where, what, printed, repr(expected))

    def claim(self, where, what, printed, expected):
        self.sentences += 1
        if printed != expected:
            self.bad(where, what, printed, repr(expected))

    def method(self, text_item):
        text_item.done = text_item.method = True

    def verdict(self, old, new):
        """compare's time object of new against old, or a stand-in
        during the first pass."""
        v = self.oracle.verdict(old, new)
        return v if v is not None else {"verdict": "?", "p_value": None,
                                         "change": None, "ci_low": None,
                                         "ci_high": None}


def rows_of(table, *cols):
    """Each row of table with the cells of the named columns, marking the
    row checked."""
    idx = [table.col(c) for c in cols]
    for i, (ln, row) in enumerate(table.rows):
        table.done.add(i)
        yield ln, row, [row[k] if k < len(row) else "" for k in idx]


def texts_starting(sec, prefix):
    return [t for t in sec.texts if t.text.startswith(prefix)]


def method_texts(a, sec, *prefixes):
    """Mark the paragraphs of sec that start with one of prefixes as
    method text."""
    for t in sec.texts:
        if any(t.text.startswith(p) for p in prefixes):
            a.method(t)


def time_cell(a, w, what, cell, ns):
    if ns is None:
        return a.word(w, what, cell, "-")
    a.fig(w, what, cell, ns, "time")
