#!/usr/bin/python3
"""Every op of configs/quick.json against the machine's limit and the peers.

Usage (run by /usr/bin/python3, which has numpy and torch):
    /usr/bin/python3 scripts/op_limits.py [-o DIR] [options]

Issue 18's "Done when" table from ONE invocation:

1. writes DIR/config.json, generated from configs/quick.json (not a hand
   copy): every op entry, f32 only (entries that list only other dtypes
   are left out), each op of an element-wise kind (categories
   elementwise, activation, reduction, layout, creation, inplace,
   optimizer, fused, and X_backward / X_unfused of such an X: entries
   with one shape for every input (contiguous inputs: an entry of other
   layouts is left out); elementwise entries with per-input
   shapes that broadcast) at
   --elements (default 1M = 2^20) elements in the entry's rank
   (1048576, 1024x1024, 128x128x64, ...); matmul, conv, pooling,
   softmax, linalg, calibration, workloads and per-input shapes that do
   not broadcast keep their quick.json size.  An op with a stated compute
   bound (below) also runs at 4096 elements: in cache, the kernel's own
   throughput.  Backends: quick.json's, at 1 thread, the cpu backend at
   isa=auto.  measure.max_time_s is cut from quick.json's 0.5 s to
   0.15 s per case (--max-time) so that 4 rounds take ~4 minutes on 2
   busy CPUs (~5 without the cut);
2. --rounds R (default 4) rounds, each (the order of a. and b. is
   reversed in the even rounds: T P, P T, T P, P T, so that a drift of
   the machine's speed during the run favours neither side; one run
   whose load fell by half over its minutes had the peers faster in
   every round on max, min, maximum and minimum, 1.04-1.12x, where the
   run just before it had them level)
   a. `tbench run DIR/config.json -o DIR/run` (round r > 1: DIR/run-r),
      round 1 with `--peaks` (the peaks give every case its roofline,
      docs/FORMAT.md "roofline", and the core clock; `--peaks cached`
      uses the cached ones instead of measuring),
   b. scripts/compare_numpy.py on the same config, 1 thread, both
      forms (allocating and out=), into DIR/peers.json (DIR/peers-r.json;
      after round 1 on DIR/peers-config.json, the entries of the ops the
      peers have),
   so that tbench and the peers see the same phases of the machine (on a
   shared VM its speed drifts by 10% over the ~minute one side takes);
   With --peer-python PY[:LABEL] (repeatable) b. also runs
   compare_numpy.py with that interpreter (scripts/peers.sh's
   .peers/bin/python: PyPI's newest NumPy and PyTorch) as backends
   numpy-LABEL and torch-LABEL into DIR/peers-LABEL.json
   (peers-LABEL-r.json); each gets a column and counts for the best peer.
   --dtypes f32,f64 runs every entry in each dtype its op is defined in
   (default f32 only);
3. writes DIR/limits.md (a Markdown table), DIR/limits.json, and
   DIR/plan.json (rounds, sizes, the stated bounds used: what --from
   needs).

Per case: the time, the median over the rounds of each round's median;
its bound, the roofline's attainable time (`roofline.min_time_ns`: the
bytes of the op's cost model at the measured copy/add/read bandwidth of
the cache level its bytes fit, or its FLOPs at the measured FMA peak when
that is larger: `bound` says which), or, for a kernel row (impl) with a
stated compute bound in --bounds (docs/perf-data/compute-bounds.json:
cycles per element of its loop and a one-line derivation, for one llvm-mca
CPU model: the entries of --mcpu's, default this machine's from
/proc/cpuinfo, znver4 on an AMD CPU with AVX-512, icelake-server on
Intel, apply; an entry without a model applies anywhere), the larger of that
and elements x cycles / the core clock tbench peak measured
(peaks.clock.median_ghz): bound "compute (stated, C cycles/elem at X
GHz)"; the ratio time / bound; NumPy's and PyTorch's times (each
library's faster form, the median over the rounds); and tbench's time
over the best peer's, the median of the rounds' paired ratios (each
round's tbench median over that round's best peer median) with their
range.  The best peer of a round is the variant (library x form) fastest
in the other rounds (the median of its medians there), with one round the
fastest in it: the fastest of several noisy variants in the round it is
compared in is the one whose noise ran low, a bias toward "behind".  An unfused case (a chain of k kernels: every intermediate goes
through memory) is bounded by the sum of its steps' bounds, not the
fused op's: each step (chain_steps: the steps of src/ops/op.c, checked
against `tbench list --json`) also runs as a case of its own in every
round, at the step's shapes and parameters, and gets its bound as any
case does (bound "chain (K steps; fused op's T)"; the Markdown lists
each step's time and bound below the table).  The call floor (--call-
floor on, the default): a copy of 1 element runs in every round too; no
case but a calibration one is bounded below its time (bound "call
floor").  Below the table, each row with a stated bound: the bound per
element, the time per element here and at 4096 elements.  Flags:
  bound  a case of any category but calibration (calib_spin and
         calib_work take the time their parameters ask for) above
         --max-ratio (1.3, issue 34's line) times its bound (the stated
         compute bound where it is the larger); the summary below the
         table counts them by category;
  peer   a case slower than the best peer in every round, with the 95%
         confidence intervals apart (tbench's CI low above the lowest CI
         high of the peers' variants, library x form: the faster form's
         CI is often the wider on a busy machine) in a majority of the
         rounds.

A row flagged bound that a measured reason covers (--reasons, default
docs/perf-data/limit-reasons.json: why it stays above the line and what
was measured, up to a stated ratio) names it; the summary counts the
flagged rows with and without one and lists the reasons below the table.

A warning above the table when the run's own copy (or global sum) took
under 0.9x its memory bound: the peaks understate the machine (measured
while something else ran), so every memory bound is too generous; and
one naming each row with a stated bound that ran under 0.95x of it (in
cache or at its size): a bound the machine beats is wrong for it.

Exit status: 0 done (flags are findings, not failures); 1 a case failed
its check or did not run in tbench or a peer; 2 bad arguments or input
(a malformed bounds file: one line naming it and the place), a tool that
failed.  `--from DIR` renders the table again from DIR's files without
running anything (a folder written before rounds existed: one round);
`--config-only` stops after step 1.
"""
import argparse
import fnmatch
import json
import math
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = "tbench.op_limits/1"
# no bound flag: their time is what their parameters ask for
UNBOUNDED_CATS = {"calibration"}
SCALED = {"elementwise", "activation", "reduction", "layout", "creation",
          "inplace", "optimizer", "fused"}
BOUNDS_SCHEMA = "tbench.compute_bounds/1"
PLAN_SCHEMA = "tbench.op_limits_plan/1"
PROBE_N = 4096          # the in-cache size of a row with a stated bound
BOUNDS_FILE = os.path.join(ROOT, "docs", "perf-data", "compute-bounds.json")
REASONS_SCHEMA = "tbench.limit_reasons/1"
REASONS_FILE = os.path.join(ROOT, "docs", "perf-data", "limit-reasons.json")
ROUND_MAX_TIME_S = 0.15  # measure.max_time_s per case and round (default)


def die(msg, code=2):
    print(f"op_limits.py: {msg}", file=sys.stderr)
    sys.exit(code)


def strip_comments(text):
    """JSON with // and /* */ comments -> JSON (compare_numpy.py's rule)."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import compare_numpy
    return compare_numpy.strip_comments(text)


def load_json(path, what, comments=False):
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except OSError as e:
        die(f"{path}: cannot open {what}: {e.strerror}")
    try:
        return json.loads(strip_comments(text) if comments else text), text
    except ValueError as e:
        die(f"{path}: not valid JSON ({what}): {e}")


def op_of_impl(impl, ops):
    """The op an impl row belongs to: the longest op name X with the row
    named X_<dtype>_<isa> (rand_normal_f32_avx512 -> rand_normal)."""
    best = None
    for o in ops:
        if impl.startswith(o + "_") and (best is None or len(o) > len(best)):
            best = o
    return best


def host_mcpu(cpuinfo="/proc/cpuinfo"):
    """llvm-mca's model of this machine's cores, the one stated bounds
    are chosen by: znver4 for an AMD CPU with AVX-512 (Zen 4), znver3
    for one without, icelake-server for an Intel CPU (the AVX-512 Xeons
    this project runs on); None where the vendor is neither."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    vendor = re.search(r"^vendor_id\s*:\s*(\S+)", text, re.M)
    flags = re.search(r"^flags\s*:(.*)$", text, re.M)
    flags = set(flags.group(1).split()) if flags else set()
    if vendor and vendor.group(1) == "AuthenticAMD":
        return "znver4" if "avx512f" in flags else "znver3"
    if vendor and vendor.group(1) == "GenuineIntel":
        return "icelake-server"
    return None


def dtype_of_impl(impl, op):
    """The dtype part of a kernel row's name OP_DTYPE_ISA."""
    return impl[len(op) + 1:].split("_")[0]


def load_listed(path, what, schema, key):
    """The list `key` of a file of {schema, about, key} (the compute
    bounds, the limit reasons); a malformed file stops the script with
    one line naming the file and the place."""
    doc, _ = load_json(path, what)
    if not isinstance(doc, dict):
        die(f"{path}: not a {what} (expected an object)")
    if doc.get("schema") != schema:
        die(f"{path}: schema: expected \"{schema}\", got "
            f"{json.dumps(doc.get('schema'))}")
    extra = set(doc) - {"schema", "about", key}
    if extra:
        die(f"{path}: unknown key '{sorted(extra)[0]}' (expected schema, "
            f"about, {key})")
    if not isinstance(doc.get(key), list):
        die(f"{path}: {key}: expected a list")
    return doc[key]


def check_entry(where, e, required, optional):
    """One entry of a load_listed list: an object with the required keys
    and no key outside required and optional (one line and exit 2)."""
    if not isinstance(e, dict):
        die(f"{where}: expected an object with {', '.join(required)}")
    for k in required:
        if k not in e:
            die(f"{where}: '{k}' is missing")
    extra = set(e) - set(required) - set(optional)
    if extra:
        die(f"{where}: unknown key '{sorted(extra)[0]}'")


def load_bounds(path, ops, mcpu):
    """The stated compute bounds for a machine whose cores llvm-mca
    models as `mcpu`: {impl: {"op", "cycles_per_element", "derivation",
    "mcpu"}}.  An entry with an mcpu (written by scripts/kernel_bounds.py
    from that model) applies to that model only; one without (stated by
    hand) to any machine, unless the file also has the impl for mcpu.  A
    malformed file stops the script with one line naming the file and
    the place."""
    every = {}
    for i, e in enumerate(load_listed(path, "compute bounds file",
                                      BOUNDS_SCHEMA, "bounds")):
        where = f"{path}: bounds[{i}]"
        check_entry(where, e, ("impl", "cycles_per_element", "derivation"),
                    ("mcpu",))
        impl, cyc, why = e["impl"], e["cycles_per_element"], e["derivation"]
        model = e.get("mcpu")
        if not isinstance(impl, str) or not impl:
            die(f"{where}.impl: expected a kernel row name, got "
                f"{json.dumps(impl)}")
        if "mcpu" in e and (not isinstance(model, str) or
                            not re.fullmatch(r"[a-z0-9][a-z0-9-]*", model)):
            die(f"{where}.mcpu: expected an llvm-mca CPU name "
                f"(icelake-server, znver4, ...), got {json.dumps(model)}")
        op = op_of_impl(impl, ops)
        if op is None:
            die(f"{where}.impl: '{impl}' names no op of tbench list "
                "(expected OP_DTYPE_ISA)")
        if (impl, model) in every:
            die(f"{where}.impl: '{impl}' is stated twice" +
                (f" for mcpu {model}" if model else ""))
        if isinstance(cyc, bool) or not isinstance(cyc, (int, float)) or \
                not (0 < cyc < 1e6 and math.isfinite(cyc)):
            die(f"{where}.cycles_per_element: expected a number in "
                f"(0, 1e6), got {json.dumps(cyc)}")
        if not isinstance(why, str) or not why.strip() or "\n" in why:
            die(f"{where}.derivation: expected one line of text")
        every[(impl, model)] = {"op": op, "cycles_per_element": float(cyc),
                                "derivation": why, "mcpu": model}
    out = {}
    for (impl, model), b in every.items():
        if model is not None and model != mcpu:
            continue
        if model is None and (impl, mcpu) in every:
            continue
        out[impl] = b
    return out


def load_reasons(path, ops):
    """The measured reasons of rows above the line: [{id, ops, dtypes,
    shapes, mcpu, up_to, reason, measured}] (dtypes, shapes, mcpu None
    when not given: any).  A malformed file stops the script with one
    line naming the file and the place."""
    out, seen = [], set()
    for i, e in enumerate(load_listed(path, "limit reasons file",
                                      REASONS_SCHEMA, "reasons")):
        where = f"{path}: reasons[{i}]"
        check_entry(where, e, ("id", "ops", "up_to", "reason", "measured"),
                    ("dtypes", "shapes", "mcpu"))
        rid = e["id"]
        if not isinstance(rid, str) or \
                not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,39}", rid):
            die(f"{where}.id: expected a name of lower-case letters, "
                f"digits, _ and - (1-40), got {json.dumps(rid)}")
        if rid in seen:
            die(f"{where}.id: '{rid}' is used twice")
        seen.add(rid)
        if not isinstance(e["ops"], list) or not e["ops"]:
            die(f"{where}.ops: expected a list of op names")
        for k, op in enumerate(e["ops"]):
            if op not in ops:
                die(f"{where}.ops[{k}]: {json.dumps(op)} is no op of "
                    "tbench list")
        dts = e.get("dtypes")
        if dts is not None and (
                not isinstance(dts, list) or not dts or
                not set(dts) <= {"f32", "f64", "bf16", "f16"}):
            die(f"{where}.dtypes: expected a list of f32, f64, bf16, f16, "
                f"got {json.dumps(dts)}")
        shp = e.get("shapes")
        if shp is not None and (
                not isinstance(shp, list) or not shp or
                not all(isinstance(x, list) and x and
                        all(isinstance(d, int) and not isinstance(d, bool)
                            and d >= 0 for d in x) for x in shp)):
            die(f"{where}.shapes: expected the inputs' shapes, a list of "
                f"lists of sizes, got {json.dumps(shp)}")
        model = e.get("mcpu")
        if model is not None and (
                not isinstance(model, str) or
                not re.fullmatch(r"[a-z0-9][a-z0-9-]*", model)):
            die(f"{where}.mcpu: expected an llvm-mca CPU name "
                f"(icelake-server, znver4, ...), got {json.dumps(model)}")
        up = e["up_to"]
        if isinstance(up, bool) or not isinstance(up, (int, float)) or \
                not (1 < up < 1e6 and math.isfinite(up)):
            die(f"{where}.up_to: expected a ratio above 1, got "
                f"{json.dumps(up)}")
        for k in ("reason", "measured"):
            if not isinstance(e[k], str) or not e[k].strip() or \
                    "\n" in e[k]:
                die(f"{where}.{k}: expected one line of text")
        out.append({"id": rid, "ops": list(e["ops"]), "dtypes": dts,
                    "shapes": shp, "mcpu": model, "up_to": float(up),
                    "reason": e["reason"], "measured": e["measured"]})
    return out


def apply_reasons(rows, reasons, mcpu):
    """Each row flagged bound gets `reason`: the id of the first reason
    that names its op (and its dtype, its shapes and the machine's model
    where the reason gives them) and whose up_to its ratio does not pass;
    `reason_exceeded`: the id of one that matches but whose up_to the
    ratio passes (the reason no longer covers it).  Others: None."""
    for r in rows:
        r["reason"] = r["reason_exceeded"] = None
        if "bound" not in r["flags"]:
            continue
        for e in reasons:
            if r["op"] not in e["ops"] or \
                    (e["dtypes"] and r.get("dtype", "f32") not in
                     e["dtypes"]) or \
                    (e["shapes"] and r.get("shapes") != e["shapes"]) or \
                    (e["mcpu"] and e["mcpu"] != mcpu):
                continue
            if r["ratio"] <= e["up_to"]:
                r["reason"] = e["id"]
                break
            r["reason_exceeded"] = r["reason_exceeded"] or e["id"]
    return rows


# ---- step 1: the config -----------------------------------------------------

def shape_of(n, rank):
    """n = 2^k elements in `rank` dimensions, the larger ones first."""
    k = n.bit_length() - 1
    bits = [k // rank + (1 if i < k % rank else 0) for i in range(rank)]
    return [1 << b for b in bits]


def scaled_kind(name, ops):
    """Whether an op's shapes are element-wise: its category, or for
    X_backward and X_unfused, X's."""
    for suffix in ("_backward", "_unfused"):
        if name.endswith(suffix) and name[:-len(suffix)] in ops:
            return scaled_kind(name[:-len(suffix)], ops)
    return ops[name]["category"] in SCALED


def scale_entry(entry, cat, scaled, n, where):
    """The entry's shapes at n elements where its kind allows; else None."""
    if not scaled:
        return None
    out = []
    for shp in entry["shapes"]:
        if not isinstance(shp, list) or not shp:
            die(f"{where}: 'shapes' must hold non-empty lists")
        if isinstance(shp[0], list):             # one shape per input
            big = max(shp, key=len)
            if cat != "elementwise" or not all(
                    s == big[len(big) - len(s):] for s in shp):
                return None
            nb = shape_of(n, len(big))
            out.append([nb[len(nb) - len(s):] for s in shp])
        else:
            out.append(shape_of(n, len(shp)))
    return [s for i, s in enumerate(out) if s not in out[:i]]


def make_config(quick_path, ops, n, op_filter, probe_ops=(),
                dtypes=("f32",)):
    """The run's config: probe_ops, the (op, dtype) pairs with a stated
    compute bound, also run at PROBE_N elements."""
    q, _ = load_json(quick_path, "tbench config", comments=True)
    if not isinstance(q, dict) or not isinstance(q.get("ops"), list):
        die(f"{quick_path}: not a tbench config (needs an 'ops' list; "
            "docs/CONFIG.md)")
    names = []
    for b in q.get("backends", ["cpu"]):
        names.append(b if isinstance(b, str) else b.get("name"))
    backends = []
    for b in dict.fromkeys(names):
        if b == "cpu":
            backends.append({"name": "cpu", "isa": "auto", "threads": 1})
        elif b in ("blas",):
            backends.append({"name": b, "threads": 1})
        else:
            backends.append(b)
    top = q.get("dtypes", ["f32"])
    top = top if isinstance(top, list) else [top]
    entries, seen, wanted = [], set(), set()
    for i, e in enumerate(q["ops"]):
        where = f"{quick_path}: ops[{i}]"
        if not isinstance(e, dict) or "op" not in e or "shapes" not in e:
            die(f"{where}: needs 'op' and 'shapes'")
        if e["op"] not in ops:
            die(f"{where}: unknown op '{e['op']}' (tbench list)")
        wanted.add(e["op"])
        if op_filter and not any(fnmatch.fnmatchcase(e["op"], g)
                                 for g in op_filter):
            continue
        # contiguous inputs only: the cost of the other layouts is the
        # report's Layouts section, not a limit of the op
        lay = e.get("layout", "contiguous")
        if "contiguous" not in (lay if isinstance(lay, list) else [lay]):
            continue
        dts = e.get("dtypes", top)
        dts = dts if isinstance(dts, list) else [dts]
        # the dtypes asked for that the entry lists; an entry that lists
        # f32 also runs in the others its op is defined in
        mine = [x for x in dtypes if x in dts or
                ("f32" in dts and x in ops[e["op"]].get("dtypes", ()))]
        if not mine:
            continue
        ne = {k: v for k, v in e.items() if k not in ("dtypes", "layout")}
        if mine != list(dtypes):
            ne["dtypes"] = mine
        sc = scale_entry(e, ops[e["op"]]["category"],
                         scaled_kind(e["op"], ops), n, where)
        if sc is not None:
            ne["shapes"] = sc
        todo = [ne]
        # an op with a stated compute bound in a dtype also at PROBE_N
        # elements in that dtype (in cache: the kernel's own throughput
        # next to its bound)
        pdt = [x for x in mine if (e["op"], x) in probe_ops]
        if sc is not None and pdt and n != PROBE_N:
            pe = dict(ne, shapes=scale_entry(e, ops[e["op"]]["category"],
                                             True, PROBE_N, where))
            pe.pop("dtypes", None)
            if pdt != list(dtypes):
                pe["dtypes"] = pdt
            todo.append(pe)
        for x in todo:
            key = json.dumps(x, sort_keys=True)
            if key not in seen:
                seen.add(key)
                entries.append(x)
    if op_filter:
        for g in op_filter:
            if not any(fnmatch.fnmatchcase(o, g) for o in wanted):
                die(f"--ops: '{g}' matches no op of {quick_path}")
    cfg = {
        "name": "op-limits",
        "seed": q.get("seed", 42),
        "warmup": q.get("warmup", {}),
        "measure": q.get("measure", {}),
        "dtypes": list(dtypes),
        "backends": backends,
        "ops": entries,
    }
    return cfg


# ---- chains and the call floor ----------------------------------------------
#
# An unfused composition (category unfused) runs k kernels, each reading
# its inputs from memory and writing a new tensor: its limit is the sum
# of its steps' bounds, not the fused op's.  The steps are those of
# src/ops/op.c (tbench list --json names them; chain_steps checks the
# names): each step also runs as a case of its own in the same rounds
# (not a table row), so that tbench gives it its roofline (or its
# stated compute bound applies) and its time is there to compare.
FLOOR_OP, FLOOR_SHAPE = "copy", [1]


def _bcast(a, b):
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    return [max(x, y) for x, y in zip(a, b)]


def chain_steps(op, shapes, params):
    """The steps of unfused `op` on input shapes `shapes` (one per input)
    and its params: [(step op, input shapes, params)] as src/ops/op.c
    runs them; None for an op this table does not know."""
    if op == "add_relu_unfused":
        a, b = shapes
        t = _bcast(a, b)
        return [("add", [a, b], {}), ("relu", [t], {})]
    if op == "linear_unfused":
        x, w, b = shapes
        t = x[:-1] + [w[-1]]
        return [("matmul", [x, w], {}), ("add", [t, b], {}),
                ("relu", [t], {})]
    if op == "log_softmax_unfused":
        x = shapes[0]
        ax = params.get("axis", -1)
        ax = ax + len(x) if ax < 0 else ax
        r = [1 if i == ax else d for i, d in enumerate(x)]
        return [("max", [x], {"axis": ax - len(x), "keepdim": True}),
                ("sub", [x, r], {}), ("exp", [x], {}),
                ("sum", [x], {"axis": ax - len(x), "keepdim": True}),
                ("log", [r], {}), ("sub", [x, r], {})]
    if op == "sdpa_unfused":
        q, k, v = shapes
        kt = k[:-2] + [k[-1], k[-2]]
        s = q[:-1] + [k[-2]]
        sc = params.get("scale", 0) or 1 / math.sqrt(q[-1])
        return [("transpose", [k], {}), ("matmul", [q, kt], {}),
                ("mul_scalar", [s], {"scalar": sc}),
                ("causal_mask", [s], {"causal": bool(
                    params.get("causal", 0))}),
                ("softmax", [s], {"axis": -1}), ("matmul", [s, v], {})]
    if op == "cross_entropy_unfused":
        x, t = shapes
        return [("log_softmax", [x], {"axis": 1}),
                ("nll_loss", [x, t], {})]
    return None


def check_chain_table(ops):
    """Each unfused op of tbench list --json against chain_steps' step
    names (a step added or renamed in op.c must be added here)."""
    for name, o in ops.items():
        if o.get("category") != "unfused":
            continue
        n = o.get("inputs", 1)
        got = chain_steps(name, [[2, 4, 8, 8]] * n, {})
        want = o.get("steps") or []
        if got is None or [s[0] for s in got] != want:
            die(f"scripts/op_limits.py's chain_steps does not know "
                f"{name}'s steps {want} (tbench list --json): add them")


def expand_shapes(entry, n_in):
    """A config entry's cases as per-input shape lists."""
    out = []
    for s in entry["shapes"]:
        out.append(s if isinstance(s[0], list) else
                   [s] * n_in if n_in else [s])
    return out


def params_match(want, got):
    """A case's params hold want's (numbers compared as numbers)."""
    for k, v in want.items():
        g = (got or {}).get(k)
        if g is None or not math.isclose(float(g), float(v),
                                         rel_tol=1e-12, abs_tol=0):
            return False
    return True


def aux_entries(entries, ops, dtypes_of, floor=True):
    """The entries the chains' steps and the call floor add to a config
    of `entries`: (new entries, their cases as plan.json lists them:
    [op, input shapes, params, dtype])."""
    have = set()
    for e in entries:
        for shp in expand_shapes(e, ops[e["op"]].get("inputs", 1)):
            for dt in dtypes_of(e):
                have.add((e["op"], json.dumps(shp), json.dumps(
                    e.get("params", {}), sort_keys=True), dt))
    new, aux = [], []

    def add(op, shp, params, dts):
        dts = [dt for dt in dts if dt in ops[op].get("dtypes", [dt])]
        mine = [dt for dt in dts if (op, json.dumps(shp), json.dumps(
            params, sort_keys=True), dt) not in have]
        if not mine:
            return
        for dt in mine:
            have.add((op, json.dumps(shp), json.dumps(params,
                                                      sort_keys=True), dt))
            aux.append([op, shp, params, dt])
        e = {"op": op, "shapes": [shp], "dtypes": mine}
        if params:
            e["params"] = params
        new.append(e)
    for e in entries:
        if ops[e["op"]].get("category") != "unfused":
            continue
        for shp in expand_shapes(e, ops[e["op"]].get("inputs", 1)):
            for sop, sshp, sp in chain_steps(e["op"], shp,
                                             e.get("params", {})) or []:
                add(sop, sshp, sp, dtypes_of(e))
    if entries and floor:
        dts = dtypes_of(entries[0])
        add(FLOOR_OP, [FLOOR_SHAPE], {}, dts[:1])
    return new, aux


def find_case(cases, op, shapes, params, dtype):
    for c in cases:
        if c.get("op") == op and c.get("shapes") == shapes and \
                c.get("dtype", "f32") == dtype and \
                params_match(params, c.get("params")):
            return c
    return None


def is_floor(c):
    return c.get("op") == FLOOR_OP and c.get("shapes") == [FLOOR_SHAPE]


# ---- steps 2-3: the runs ----------------------------------------------------

def peers_config(d, cfg, peers_path):
    """DIR/peers-config.json: the config's entries of the ops the peers
    ran in round 1 (compare_numpy.py runs `tbench exec` on every entry,
    its inputs and reference, before it knows it has no form of the op:
    half its time on quick.json)."""
    doc, _ = load_json(peers_path, "compare_numpy.py result file")
    ran = {c.get("op") for c in (doc or {}).get("cases", [])
           if isinstance(c, dict) and c.get("status") != "unsupported"}
    pc = dict(cfg, ops=[e for e in cfg["ops"] if e["op"] in ran] or
              cfg["ops"][:1])
    path = os.path.join(d, "peers-config.json")
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write("// generated by scripts/op_limits.py: config.json's "
                    "entries of the ops NumPy or PyTorch ran in round 1\n")
            json.dump(pc, f, indent=1)
            f.write("\n")
    except OSError as e:
        die(f"{path}: cannot write: {e.strerror}")
    return path


def run_tool(cmd, what):
    """Run a step; exit 1 (a case failed) goes on, anything else stops."""
    print("op_limits.py: " + " ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd, stdout=sys.stderr.fileno())  # stdout: the table
    if p.returncode not in (0, 1):
        die(f"{what} failed (exit {p.returncode}): {' '.join(cmd)}")
    return p.returncode


# ---- step 4: the table ------------------------------------------------------

def key_of(case_id):
    return case_id.rsplit("/", 1)[0]


def fmt_ns(ns):
    if ns is None or not math.isfinite(ns):
        return "-"
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            return f"{ns / div:.3g} {unit}"
    return f"{ns:.3g} ns"


def fmt_x(r):
    return "-" if r is None else f"{r:.2f}x"


def shape_text(shapes):
    return ",".join("x".join(str(d) for d in s) for s in shapes)


def peer_times(peers_doc):
    """{case key: {lib: {form: (median, ci_low, ci_high)}}} of threads=1."""
    out = {}
    for c in peers_doc.get("cases", []):
        bp = c.get("backend_params", {})
        st = c.get("stats") or {}
        if c.get("status") != "ok" or bp.get("threads") != "1" or \
                st.get("median_ns") is None:
            continue
        out.setdefault(key_of(c["id"]), {}).setdefault(
            c["backend"], {})[bp.get("form")] = (
                st["median_ns"], st.get("ci_low_ns", st["median_ns"]),
                st.get("ci_high_ns", st["median_ns"]))
    return out


def peer_variants(peers, key):
    """{(lib, form): (median, ci_low, ci_high)} of a tbench case's peers
    in one round; for an allocating case (op@alloc) the libraries'
    allocating form only."""
    op, _, rest = key.partition("/")
    forms = None
    if "@alloc" in op:
        key = op.replace("@alloc", "", 1) + "/" + rest
        forms = ("alloc",)
    return {(lib, f): t for lib, fm in peers.get(key, {}).items()
            for f, t in fm.items() if not forms or f in forms}


def peer_of(peers, key):
    """{lib: (median, ci_low, ci_high)} for a tbench case: the faster form
    of each library, with the lowest CI high of the library's forms (an
    upper bound of its time: the faster form's CI is often the wider on a
    busy machine)."""
    out = {}
    for (lib, _), t in peer_variants(peers, key).items():
        out.setdefault(lib, []).append(t)
    return {lib: min(v)[:2] + (min(t[2] for t in v),)
            for lib, v in out.items()}


def held_out_best(variants, r):
    """The peer variant (library, form) round r is compared with: the one
    fastest in the OTHER rounds (the median of its medians there), so that
    the choice and the comparison use independent measurements.  Taking
    the fastest of several noisy variants in the same round picks the one
    whose noise ran low (the winner's curse) and biases the verdict toward
    "behind"; with one round, or no variant measured in another round, the
    fastest in round r.  variants: per round {(lib, form): (median, ...)}."""
    here = variants[r]
    if not here:
        return None
    other = {}
    for s, vs in enumerate(variants):
        if s != r:
            for v, t in vs.items():
                if v in here:
                    other.setdefault(v, []).append(t[0])
    if other:
        return min(other, key=lambda v: (median(other[v]), v))
    return min(here, key=lambda v: (here[v][0], v))


def run_rates(results_doc, skip=()):
    """ns per byte of this run's own copy (the copy op) and read (the
    global sum) at 1 thread: {"copy": r, "read": r}, where they ran
    (not the cases of ids `skip`: chain steps, the call floor)."""
    best = {}
    for c in results_doc.get("cases", []):
        if c["id"] in skip:
            continue
        st = c.get("stats") or {}
        b = (c.get("model") or {}).get("bytes")
        kind = "copy" if c.get("op") == "copy" else \
            "read" if c.get("op") == "sum" and \
            "axis" not in (c.get("params") or {}) else None
        if kind and c.get("status") == "ok" and b and st.get("median_ns"):
            r = st["median_ns"] / b
            best[kind] = min(best.get(kind, r), r)
    return best


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    k = len(xs)
    if not k:
        return None
    return xs[k // 2] if k % 2 else 0.5 * (xs[k // 2 - 1] + xs[k // 2])


def numel(shape):
    n = 1
    for x in shape:
        n *= x
    return n


def out_elements(c):
    """Elements a case's kernel loop visits: what cycles per element
    count: its first output's, or its first input's where that is larger
    (a reduction's loop runs over its input: cross_entropy's logits, not
    its scalar loss)."""
    out = c.get("out_shapes")
    n = None
    if isinstance(out, list) and out and isinstance(out[0], list):
        n = numel(out[0])
    else:
        n = (c.get("model") or {}).get("items")
    sh = c.get("shapes")
    if isinstance(sh, list) and sh and isinstance(sh[0], list):
        n = max(n or 0, numel(sh[0])) or n
    return n


def round_paths(d, r, label=None):
    """Round r's tbench result folder and peers file: round 1 run/ and
    peers.json, round r run-r/ and peers-r.json; a --peer-python
    interpreter's file peers-LABEL.json, peers-LABEL-r.json."""
    pf = "peers" + (f"-{label}" if label else "")
    return (os.path.join(d, "run" if r == 1 else f"run-{r}"),
            os.path.join(d, f"{pf}.json" if r == 1 else f"{pf}-{r}.json"))


def probe_cases(res, bounds, plan):
    """{probe_key: probe case} of round 1: the cases of an op with a
    stated bound at the in-cache size (not table rows)."""
    n, pn = plan.get("elements"), plan.get("probe_elements")
    if not n or not pn or n == pn:
        return {}
    bops = {b["op"] for b in bounds.values()}
    out = {}
    for c in res.get("cases", []):
        if c.get("op") in bops and out_elements(c) == pn:
            out[probe_key(c)] = c
    return out


def probe_key(c):
    """A case's key among the probes: its case name (op and params), its
    dtype and its backend part (one probe per dtype: with --dtypes
    f32,f64 the f32 and f64 rows each have their own)."""
    parts = c["id"].split("/")
    return (parts[0], c.get("dtype"), parts[-1])


def case_median(c):
    if not c or c.get("status") != "ok":
        return None
    return (c.get("stats") or {}).get("median_ns")


def case_bound(c, med, bounds, probes, by_id, clock, plan):
    """A case's (memory bound, bound, bound kind, stated): the roofline's
    attainable time, or a stated compute bound where larger."""
    nr = len(by_id)
    rl = c.get("roofline") or None
    mem = rl.get("min_time_ns") if rl else None
    bound = mem
    kind = None
    if rl:
        # the L3 is measured on several sets: name the one whose figure
        # (the fastest) it is held to
        ws = rl.get("bandwidth_working_set_bytes")
        at = (f" {ws / 2 ** 20:.0f} MiB" if rl.get("level") == "L3" and ws
              else "")
        kind = (f"compute ({rl.get('isa')} FMA)"
                if rl.get("bound") == "compute" else
                f"memory ({rl.get('bw_kernel')}, {rl.get('level')}{at})")
    # a stated compute bound: elements x cycles / the measured clock
    stated = None
    b = bounds.get(c.get("impl"))
    elems = out_elements(c)
    if b:
        cyc = b["cycles_per_element"]
        pc = probes.get(probe_key(c))
        pm = median(case_median(by_id[r].get(pc["id"]))
                    for r in range(nr)) if pc else None
        stated = {"cycles_per_element": cyc, "clock_ghz": clock,
                  "derivation": b["derivation"], "compute_ns": None,
                  "ns_per_element": None,
                  "ns_per_element_here": med / elems
                  if med and elems else None,
                  "in_cache_id": pc["id"] if pc else None,
                  "in_cache_ns_per_element":
                  pm / plan["probe_elements"] if pm else None}
        if clock and elems and mem:
            comp = elems * cyc / clock
            stated.update(compute_ns=comp, ns_per_element=cyc / clock)
            if comp > mem:
                bound = comp
                kind = (f"compute (stated, {cyc:g} cycles/elem at "
                        f"{clock:.2f} GHz)")
    return mem, bound, kind, stated


def aux_ids(res, plan):
    """Ids of a round's chain-step and call-floor cases (plan.json's
    aux): not table rows."""
    out = set()
    for op, shp, params, dt in plan.get("aux") or []:
        c = find_case(res.get("cases", []), op, shp, params, dt)
        if c:
            out.add(c["id"])
    return out


def floor_of(res1, by_id, plan):
    """The call floor: the median over the rounds of the smallest op's
    time (a copy of 1 element, plan.json's aux), None without it."""
    ts = []
    for op, shp, params, dt in plan.get("aux") or []:
        c = find_case(res1.get("cases", []), op, shp, params, dt)
        if c and is_floor(c):
            m = median(case_median(b.get(c["id"])) for b in by_id)
            if m:
                ts.append(m)
    return min(ts) if ts else None


def chain_of(c, res1, by_id, bounds, probes, clock, plan):
    """An unfused case's steps, each found among round 1's cases: [{op,
    id, impl, shapes, params, median_ns, bound_ns, bound, ratio}]; None
    when a step did not run."""
    steps = chain_steps(c["op"], c.get("shapes") or [], c.get("params")
                        or {})
    if not steps:
        return None
    out = []
    for op, shp, params in steps:
        s = find_case(res1.get("cases", []), op, shp, params,
                      c.get("dtype", "f32"))
        if not s or s.get("status") != "ok":
            return None
        med = median(case_median(b.get(s["id"])) for b in by_id)
        _, bound, kind, _ = case_bound(s, med, bounds, probes, by_id,
                                       clock, plan)
        out.append({"op": op, "id": s["id"], "impl": s.get("impl"),
                    "shapes": shp, "params": params, "median_ns": med,
                    "bound_ns": bound, "bound": kind,
                    "ratio": med / bound if med and bound else None})
    return out


def build_rows(rounds, bounds, plan, max_ratio):
    """rounds: [(results doc, peers doc or None)], round 1 first.  The
    rows are round 1's cases (less the in-cache probes); each figure is
    the median over the rounds of that round's median."""
    nr = len(rounds)
    res1 = rounds[0][0]
    # backends of the other interpreters' peers (numpy-pypi, torch-pypi)
    extra_libs = sorted({c.get("backend") for _, p in rounds
                         for c in (p or {}).get("cases", [])} -
                        {"numpy", "torch", None})
    by_id = [{c["id"]: c for c in r.get("cases", [])} for r, _ in rounds]
    peers = [peer_times(p) if p else {} for _, p in rounds]
    rates = [run_rates(r, aux_ids(r, plan)) for r, _ in rounds]
    clock = ((res1.get("peaks") or {}).get("clock") or {}).get("median_ghz")
    probes = probe_cases(res1, bounds, plan)
    probe_ids = {c["id"] for c in probes.values()} | aux_ids(res1, plan)
    floor = floor_of(res1, by_id, plan)
    rows = []
    for c in res1.get("cases", []):
        if c["id"] in probe_ids:
            continue
        st = c.get("status")
        meds = [case_median(by_id[r].get(c["id"])) for r in range(nr)]
        med = median(meds) if st == "ok" else None
        mem, bound, kind, stated = case_bound(c, med, bounds, probes,
                                              by_id, clock, plan)
        # a chain: the sum of its steps' bounds; any case: no bound under
        # the call floor of the same run
        chain, fused = None, None
        if c.get("category") == "unfused":
            chain = chain_of(c, res1, by_id, bounds, probes, clock, plan)
            if chain and all(s["bound_ns"] for s in chain):
                fused = (bound, kind)
                bound = sum(s["bound_ns"] for s in chain)
                kind = (f"chain ({len(chain)} steps; fused op's "
                        f"{fmt_ns(fused[0])})")
        if floor and bound and floor > bound and \
                c.get("category") not in UNBOUNDED_CATS:
            bound, kind = floor, "call floor"
        ratio = med / bound if med and bound else None
        # the peers, round by round: tbench's median over the best peer's
        key = key_of(c["id"])
        libs = {lib: [] for lib in ["numpy", "torch"] + extra_libs}
        best, vs_r, apart = [], [], 0
        variants = [peer_variants(peers[r], key) for r in range(nr)]
        for r in range(nr):
            p = peer_of(peers[r], key)
            for lib in libs:
                libs[lib].append(p[lib][0] if lib in p else None)
            hv = held_out_best(variants, r)
            bp = variants[r][hv] if hv else None
            best.append(bp[0] if bp else None)
            tc = by_id[r].get(c["id"])
            tm = case_median(tc)
            if bp and tm:
                vs_r.append(tm / bp[0])
                # apart: tbench's CI low above the lowest CI high of the
                # peers' variants (library x form)
                hi = min(x[2] for x in p.values())
                if (tc.get("stats") or {}).get("ci_low_ns", tm) > hi:
                    apart += 1
            else:
                vs_r.append(None)
        paired = [v for v in vs_r if v is not None]
        vs = median(paired)
        flags = []
        if ratio is not None and ratio > max_ratio and \
                c.get("category") not in UNBOUNDED_CATS:
            flags.append("bound")
        if paired and all(v > 1.0 for v in paired) and 2 * apart > nr:
            flags.append("peer")
        # the same bytes at each round's own copy (read for reductions)
        nb = (c.get("model") or {}).get("bytes")
        if nb and c.get("op") in ("copy_h2d", "copy_d2h"):
            nb *= 2  # the link's bytes: on the host it reads and writes them
        rk = "read" if c.get("category") == "reduction" else "copy"
        vs_run = median(meds[r] / (nb * rates[r][rk]) for r in range(nr)
                        if meds[r] and nb and rk in rates[r])
        rows.append({
            "id": c["id"], "op": c["op"], "case": c["id"].split("/")[0],
            "category": c.get("category"),
            "shapes": c.get("shapes"), "params": c.get("params") or {},
            "dtype": c.get("dtype"),
            "backend": c.get("backend"), "impl": c.get("impl"),
            "status": st, "message": c.get("message"),
            "median_ns": med, "rounds_median_ns": meds,
            "bound_ns": bound, "bound": kind, "memory_bound_ns": mem,
            "stated": stated, "chain": chain,
            "fused_bound_ns": fused[0] if fused else None,
            "fused_bound": fused[1] if fused else None,
            "call_floor_ns": floor,
            "ratio": ratio, "run_bound": rk, "vs_run_bound": vs_run,
            "numpy_ns": median(libs["numpy"]),
            "torch_ns": median(libs["torch"]),
            "peers_ns": {lib: median(v) for lib, v in libs.items()},
            "best_peer_ns": median(best),
            "best_peer_rounds_ns": best,
            "vs_best_peer": vs, "vs_best_peer_rounds": vs_r,
            "vs_best_peer_range": [min(paired), max(paired)]
            if paired else None,
            "peer_rounds_apart": apart if paired else None,
            "flags": flags,
        })
    return rows


def bounds_warning(rows):
    """A line when the run's own copy (or global sum) beat its memory
    bound by more than 10%: then the peaks understate the machine (they
    were measured while something else ran) and every memory bound is too
    generous; None otherwise."""
    for r in rows:
        if r["ratio"] is None or not (r["bound"] or "").startswith(
                "memory"):
            continue
        if r["op"] == "copy" or (r["op"] == "sum" and
                                 "axis" not in r["params"]):
            if r["ratio"] < 0.9:
                return (f"the run's own {r['op']} took {r['ratio']:.2f}x "
                        f"its bound ({r['bound']}): the peaks understate "
                        "this machine (measured under load?), so every "
                        "memory bound here is too generous; run `tbench "
                        "peak` again on a quiet machine")
    return None


def stated_warning(rows):
    """A line naming the rows that ran, at the in-cache size or at the
    row's own, under 0.95x their stated compute bound: a bound the
    machine beats is wrong for it (a mis-modelled instruction, a clock
    that ran faster than measured); None when there is none."""
    bad = []
    for r in rows:
        s = r.get("stated") or {}
        per = s.get("ns_per_element")
        if not per:
            continue
        got = [x for x in (s.get("in_cache_ns_per_element"),
                           s.get("ns_per_element_here")) if x]
        if got and min(got) < 0.95 * per:
            bad.append(f"{r['impl']} ({min(got) / per:.2f}x)")
    if not bad:
        return None
    return ("ran faster than its stated compute bound allows: " +
            ", ".join(bad) + ": that bound is wrong for this machine "
            "(docs/perf-data/compute-bounds.json; a mis-modelled "
            "instruction or a clock faster than peaks.clock)")


def fmt_vs(r):
    if r["vs_best_peer"] is None:
        return "-"
    lo, hi = r["vs_best_peer_range"]
    if len(r["vs_best_peer_rounds"]) == 1:
        return fmt_x(r["vs_best_peer"])
    return f"{fmt_x(r['vs_best_peer'])} ({lo:.2f}-{hi:.2f})"


def flags_text(r):
    """The flags column: bound with its measured reason's id where one
    covers the row (or the one whose up_to it passed)."""
    out = []
    for f in r["flags"]:
        if f == "bound" and r.get("reason"):
            f = f"bound (reason: {r['reason']})"
        elif f == "bound" and r.get("reason_exceeded"):
            f = f"bound (past {r['reason_exceeded']}'s up_to)"
        out.append(f)
    return ", ".join(out) or "-"


def markdown(rows, meta, max_ratio):
    nr = meta["rounds"]
    out = [f"# Every op at the machine's limit ({meta['date']})", "",
           f"From one invocation: `{meta['command']}` (tbench "
           f"{meta['tbench_version']}, commit {meta['git_commit']}, build "
           f"{meta['build_type']}; load average {meta['loadavg']}; peaks "
           f"{meta['peaks']}; {meta['time_note']}).  {nr} round"
           f"{'s' if nr > 1 else ''}, each tbench on every case and the "
           "peers on the same config, tbench first in the odd rounds and "
           "the peers first in the even ones, so both sides see the same "
           "phases of the machine.  Time: the median over the rounds of "
           "each round's median per call, 1 thread.  Bound: the roofline's "
           "attainable time (docs/FORMAT.md, roofline): the "
           "op's bytes at the measured bandwidth of the level they fit, or "
           "its FLOPs at the FMA peak when larger; for a kernel row with a "
           f"stated compute bound ({meta['bounds_file']}, the entries "
           f"for llvm-mca's model {meta.get('bounds_mcpu') or 'none'} of "
           "this machine and those stated by hand) the larger of "
           "that and the elements its loop visits (its first output's, or "
           "its first input's where larger) x the stated cycles per element "
           "/ the measured core clock (peaks.clock).  Ratio = time / "
           "bound.  NumPy, PyTorch: scripts/compare_numpy.py, the faster "
           "of each library's forms (allocating, out=), the median over "
           "the rounds.  vs best peer: the median over the rounds of "
           "tbench's time over the best peer's in the same round (range "
           "over the rounds); a round's best peer is the variant (library "
           "x form) fastest in the other rounds, so the choice and the "
           "comparison use independent measurements (with one round, the "
           "fastest in it).  Flags: **bound** = a case (any "
           f"category but calibration) above {max_ratio:g}x its bound; **peer** = slower than the best "
           "peer in every round, with the 95% confidence intervals apart "
           "(tbench's low above the lowest high of the peers' variants, "
           "library x form) in a "
           f"majority of the rounds (more than {nr // 2} of {nr}).  "
           "\"vs run's copy/read\": the time over that of the same bytes "
           "at the same round's own copy op (the global sum's read for "
           "reductions), a check of the bound that needs no peaks.", ""]
    if meta.get("peaks_warning"):
        out += [f"**Warning**: {meta['peaks_warning']}", ""]
    if meta.get("bounds_warning"):
        out += [f"**Warning**: {meta['bounds_warning']}", ""]
    if meta.get("stated_warning"):
        out += [f"**Warning**: {meta['stated_warning']}", ""]
    if meta.get("clock_note"):
        out += [f"**Note**: {meta['clock_note']}", ""]
    extra = sorted({lib for r in rows for lib in r["peers_ns"]} -
                   {"numpy", "torch"})
    out += ["| case | category | shapes | backend | impl | time | "
            "bound | bound kind | ratio | vs run's copy/read | NumPy | "
            "PyTorch | " + "".join(f"{lib} | " for lib in extra) +
            "vs best peer | flags |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|" +
            "---|" * len(extra) + "---|---|"]
    for r in rows:
        t = fmt_ns(r["median_ns"]) if r["status"] == "ok" else r["status"]
        out.append("| " + " | ".join([
            r["case"], r["category"] or "-",
            shape_text(r["shapes"] or []) + (
                f" ({r['dtype']})" if r.get("dtype", "f32") != "f32"
                else ""),
            r["backend"] or "-", r["impl"] or "-", t,
            fmt_ns(r["bound_ns"]), r["bound"] or "-", fmt_x(r["ratio"]),
            fmt_x(r["vs_run_bound"]),
            fmt_ns(r["numpy_ns"]), fmt_ns(r["torch_ns"])] +
            [fmt_ns(r["peers_ns"].get(lib)) for lib in extra] + [
            fmt_vs(r), flags_text(r)]) + " |")
    stated = [r for r in rows if r["stated"]]
    if stated:
        out += ["", f"Stated compute bounds ({len(stated)} rows; "
                f"{meta['bounds_file']}; in cache = the same row at "
                f"{meta['probe_elements']} elements in the same rounds, "
                "the kernel's own throughput):", ""]
        for r in stated:
            s = r["stated"]
            here = s.get("ns_per_element_here")
            inc = s.get("in_cache_ns_per_element")
            if s["ns_per_element"]:
                bnd = (f"stated {s['cycles_per_element']:g} cycles/elem = "
                       f"{s['ns_per_element']:.3g} ns/elem at "
                       f"{s['clock_ghz']:.2f} GHz")
                per = s["ns_per_element"]
            else:
                bnd = (f"stated {s['cycles_per_element']:g} cycles/elem, "
                       "not applied (no core clock or no roofline)")
                per = None

            def vs(x):
                return f"{x:.3g} ns/elem" + (
                    f" ({x / per:.2f}x)" if per and x else "")
            out.append(
                f"- {r['case']} {shape_text(r['shapes'])}, `{r['impl']}`: "
                f"{bnd}; here {vs(here) if here else '-'}; in cache "
                f"{vs(inc) if inc else '-'}.  {s['derivation']}")
    chains = [r for r in rows if r.get("chain")]
    if chains:
        out += ["", f"Chains of the unfused cases ({len(chains)}; the "
                "bound of a chain of k kernels is the sum of its steps' "
                "bounds, each step run as a case of its own in the same "
                "rounds; per step: time / bound = ratio):", ""]
        for r in chains:
            out.append(
                f"- {r['case']} {shape_text(r['shapes'])} ({r['dtype']}): "
                + "; ".join(
                    f"{s['op']} {shape_text(s['shapes'])} "
                    f"{fmt_ns(s['median_ns'])} / {fmt_ns(s['bound_ns'])} "
                    f"= {fmt_x(s['ratio'])}" for s in r["chain"]) +
                f"; fused op's bound {fmt_ns(r['fused_bound_ns'])}")
    if meta.get("call_floor_ns"):
        out += ["", f"Call floor: {fmt_ns(meta['call_floor_ns'])}, the "
                "time of the smallest op (a copy of 1 element) in the same "
                "rounds; a case whose bound is below it is bounded by it "
                "(bound kind \"call floor\")."]
    above = [r for r in rows if "bound" in r["flags"]]
    behind = [r for r in rows if "peer" in r["flags"]]
    cats = {}
    for r in above:
        cats[r["category"]] = cats.get(r["category"], 0) + 1
    def name(r):
        return f"{r['case']} {shape_text(r['shapes'])}" + (
            f" {r['dtype']}" if r.get("dtype", "f32") != "f32" else "")
    out += ["", f"Above {max_ratio:g}x their bound ({len(above)}" +
            "".join(f"; {k} {v}" for k, v in
                    sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))) +
            "): " +
            (", ".join(f"{name(r)} ({fmt_x(r['ratio'])})" for r in above)
             or "none"),
            ""]
    if meta.get("reasons_file"):
        why = [r for r in above if r.get("reason")]
        out += [f"With a measured reason ({len(why)} of {len(above)}, "
                f"{len(above) - len(why)} without; {meta['reasons_file']}, "
                "listed below): " +
                (", ".join(f"{name(r)} ({r['reason']})" for r in why)
                 or "none"),
                ""]
    out += [f"Slower than the best peer ({len(behind)}): " +
            (", ".join(f"{r['case']} {shape_text(r['shapes'])} "
                       f"({fmt_vs(r)})" for r in behind)
             or "none")]
    if meta.get("reasons"):
        out += ["", "Measured reasons (each covers the rows it names up to "
                "its ratio, up_to; a row past it is flagged without it):",
                ""]
        for e in meta["reasons"]:
            scope = ", ".join(e["ops"]) + (
                f" ({', '.join(e['dtypes'])})" if e["dtypes"] else "") + (
                f" at {shape_text(e['shapes'])}" if e["shapes"] else "") + (
                f", {e['mcpu']}" if e["mcpu"] else "")
            out.append(f"- **{e['id']}** ({scope}; up to "
                       f"{e['up_to']:g}x): {e['reason']}  Measured: "
                       f"{e['measured']}")
    nobound = [r["op"] for r in rows if r["status"] == "ok" and
               r["bound_ns"] is None]
    if nobound:
        out += ["", f"No bound ({len(nobound)} cases: no peaks in the run, "
                "or no bytes or FLOPs in the op's cost model): " +
                ", ".join(dict.fromkeys(nobound))]
    return "\n".join(out) + "\n"


def load_results(path):
    res, _ = load_json(path, "tbench result file")
    if not isinstance(res, dict) or not isinstance(res.get("cases"), list):
        die(f"{path}: not a tbench result file (no 'cases' list)")
    return res


def load_plan(d):
    """DIR/plan.json (rounds, sizes, the stated bounds used), or for a
    folder written before it existed: one round, no stated bounds."""
    pp = os.path.join(d, "plan.json")
    if not os.path.exists(pp):
        return {"schema": PLAN_SCHEMA, "rounds": 1, "elements": None,
                "probe_elements": None, "time_note": "per-case time as "
                "the config says", "bounds_file": None, "bounds": {}}
    plan, _ = load_json(pp, "op_limits.py plan")
    if not isinstance(plan, dict) or plan.get("schema") != PLAN_SCHEMA or \
            not isinstance(plan.get("rounds"), int) or \
            not 1 <= plan["rounds"] <= 100 or \
            not isinstance(plan.get("bounds"), dict) or \
            not all(isinstance(b, dict) and
                    isinstance(b.get("op"), str) and
                    isinstance(b.get("cycles_per_element"), (int, float)) and
                    isinstance(b.get("derivation"), str)
                    for b in plan["bounds"].values()):
        die(f"{pp}: not an op_limits.py plan (schema \"{PLAN_SCHEMA}\" "
            "with rounds and bounds)")
    return plan


def list_ops(tb):
    """tbench list --json's ops by name (one line and exit 2 where tb is
    not an executable)."""
    if not (os.path.isfile(tb) and os.access(tb, os.X_OK)):
        die(f"--tbench: '{tb}' is not an executable (build tbench first: "
            "meson setup build -Dbuildtype=release && ninja -C build)")
    p = subprocess.run([tb, "list", "--json"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        die(f"{tb} list --json failed: {p.stderr.strip()}")
    return {o["name"]: o for o in json.loads(p.stdout)["ops"]}


def render(d, max_ratio, command, bounds=None, reasons=None,
           reasons_file=None):
    """DIR's table; `bounds` (stated bounds loaded now) replaces those
    the run used, when given; `reasons` (load_reasons's, from
    reasons_file) explain the rows above the line they cover."""
    plan = load_plan(d)
    if bounds is not None:
        plan = dict(plan, bounds=bounds)
    rounds = []
    for r in range(1, plan["rounds"] + 1):
        rdir, pp = round_paths(d, r)
        res = load_results(os.path.join(rdir, "results.json"))
        peers = None
        for lab in [None] + plan.get("peer_labels", []):
            pp = round_paths(d, r, lab)[1]
            if not os.path.exists(pp):
                continue
            doc, _ = load_json(pp, "compare_numpy.py result file")
            if not isinstance(doc, dict) or \
                    not isinstance(doc.get("cases"), list):
                die(f"{pp}: not a compare_numpy.py result file (no "
                    "'cases' list)")
            # one document of every interpreter's peers (their backend
            # names differ: numpy, numpy-pypi, ...)
            peers = doc if peers is None else \
                dict(peers, cases=peers["cases"] + doc["cases"])
        rounds.append((res, peers))
    res = rounds[0][0]
    rows = build_rows(rounds, plan["bounds"], plan, max_ratio)
    apply_reasons(rows, reasons or [], plan.get("bounds_mcpu"))
    env = res.get("env", {})
    b = env.get("build", {})
    pk = res.get("peaks")
    clock = ((pk or {}).get("clock") or {}).get("median_ghz")
    loads = [", ".join(f"{x:.2f}" for x in
                       r.get("env", {}).get("loadavg", []))
             for r, _ in rounds]
    # the first round's start (results.json's env.date), not the time
    # of rendering: --from renders a run again days later
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d):\d\dZ",
                     str(env.get("date", "")))
    meta = {
        "date": f"{m.group(1)} {m.group(2)} UTC" if m else
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": command,
        "tbench_version": b.get("tbench_version"),
        "git_commit": b.get("git_commit"),
        "build_type": b.get("build_type"),
        "loadavg": " / ".join(loads) + (" (per round)" if len(loads) > 1
                                        else ""),
        "rounds": plan["rounds"],
        "elements": plan.get("elements"),
        "probe_elements": plan.get("probe_elements"),
        "time_note": plan.get("time_note"),
        "bounds_file": plan.get("bounds_file") or "none",
        "bounds_mcpu": plan.get("bounds_mcpu"),
        "clock_ghz": clock,
        "clock_note": None if clock or not plan["bounds"] or not pk else
        "the peaks have no core clock (measured before tbench measured "
        "it): the stated compute bounds are not applied",
        "peaks": (f"measured {pk.get('date')}" +
                  (" (quick)" if pk.get("quick") else "") +
                  (f", core clock {clock:.2f} GHz" if clock else "")) if pk
        else "none (no bounds)",
        "peaks_warning": (" ".join(pk.get("notes") or []) or None)
        if pk else None,
        "bounds_warning": bounds_warning(rows),
        "call_floor_ns": next((r["call_floor_ns"] for r in rows
                               if r.get("call_floor_ns")), None),
        "stated_warning": stated_warning(rows),
        "reasons_file": os.path.relpath(os.path.abspath(reasons_file), ROOT)
        if reasons_file else None,
        "reasons": [e for e in reasons or []
                    if any(r["reason"] == e["id"] or
                           r["reason_exceeded"] == e["id"] for r in rows)],
    }
    files = {"results": [os.path.join(round_paths("", r)[0], "results.json")
                         for r in range(1, plan["rounds"] + 1)],
             "peers": [round_paths("", r)[1] if p else None
                       for r, (_, p) in enumerate(rounds, 1)],
             "peers_labelled": {lab: [round_paths("", r, lab)[1] for r in
                                      range(1, plan["rounds"] + 1)]
                                for lab in plan.get("peer_labels", [])},
             "config": "config.json",
             "plan": "plan.json"
             if os.path.exists(os.path.join(d, "plan.json")) else None}
    doc = {"schema": SCHEMA, "meta": meta, "max_ratio": max_ratio,
           "files": files, "rows": rows,
           "above_bound": [r["id"] for r in rows if "bound" in r["flags"]],
           "explained": [r["id"] for r in rows if r["reason"]],
           "unexplained": [r["id"] for r in rows
                           if "bound" in r["flags"] and not r["reason"]],
           "behind_peer": [r["id"] for r in rows if "peer" in r["flags"]]}
    with open(os.path.join(d, "limits.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    md = markdown(rows, meta, max_ratio)
    with open(os.path.join(d, "limits.md"), "w", encoding="utf-8") as f:
        f.write(md)
    bad = [r for r in rows if r["status"] not in ("ok", "unsupported")]
    pbad = [c for _, p in rounds for c in (p or {}).get("cases", [])
            if c.get("status") in ("failed-check", "error")]
    return md, bool(bad or pbad)


# ---- main -------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(
        description="Every op of quick.json at 1M f32 elements, 1 thread: "
                    "time, roofline or stated compute bound, ratio, NumPy "
                    "and PyTorch, in one run of interleaved rounds (issue "
                    "18).")
    ap.add_argument("-o", "--output", default=None,
                    help="folder for config.json, plan.json, run/ and "
                         "peers.json (round r > 1: run-r/, peers-r.json), "
                         "limits.md, limits.json (default: "
                         "results/op-limits-YYYYmmdd-HHMMSS)")
    ap.add_argument("--tbench", default=os.path.join(ROOT, "build",
                                                     "tbench"),
                    help="the tbench executable (default build/tbench)")
    ap.add_argument("--quick", default=os.path.join(ROOT, "configs",
                                                    "quick.json"),
                    help="the config the op list comes from (default "
                         "configs/quick.json)")
    ap.add_argument("--elements", default="1048576",
                    help="elements of the element-wise cases, a power of "
                         "two from 16 to 2^28 (default 1048576)")
    ap.add_argument("--ops", default=None,
                    help="only these ops (comma-separated globs)")
    ap.add_argument("--max-ratio", default="1.3",
                    help="flag bound: time / bound above this (default 1.3)")
    ap.add_argument("--peaks", default="measure",
                    help="'measure' (tbench run --peaks, default) or "
                         "'cached' (the peaks tbench peak cached)")
    ap.add_argument("--peers", default="numpy,torch",
                    help="numpy, torch, numpy,torch (default) or none")
    ap.add_argument("--peer-python", action="append", default=[],
                    metavar="PYTHON[:LABEL]",
                    help="also run compare_numpy.py with this interpreter "
                         "(e.g. .peers/bin/python from scripts/peers.sh: "
                         "PyPI's NumPy and PyTorch) as backends "
                         "numpy-LABEL and torch-LABEL (LABEL default "
                         "pypi), in every round next to Debian's; "
                         "repeatable")
    ap.add_argument("--dtypes", default="f32",
                    help="dtypes of every op, comma-separated (default "
                         "f32; e.g. f32,f64): an entry of quick.json "
                         "runs in those of them it lists, or, when it "
                         "lists f32, in those the op is defined in")
    ap.add_argument("--max-time", default=None,
                    help="measure.max_time_s of every case in each round "
                         f"(default {ROUND_MAX_TIME_S:g} s: quick.json's "
                         "0.5 s cut so that 4 rounds take ~4 minutes)")
    ap.add_argument("--rounds", default="4",
                    help="rounds, each tbench on every case and the "
                         "peers, tbench first in the odd rounds, the "
                         "peers first in the even ones (default 4; 1 to "
                         "20)")
    ap.add_argument("--bounds", default=None,
                    help="the stated compute bounds (default "
                         "docs/perf-data/compute-bounds.json; 'none': "
                         "no stated bounds); with --from, the folder's "
                         "own (those its run used) unless given: then "
                         "this file's, for the run's llvm-mca model")
    ap.add_argument("--reasons", default=None,
                    help="the measured reasons of rows above the line "
                         "(default docs/perf-data/limit-reasons.json; "
                         "'none': none): a row flagged bound that one "
                         "covers names it")
    ap.add_argument("--mcpu", default="auto",
                    help="llvm-mca's model of this machine's cores: the "
                         "stated bounds written for it (and those stated "
                         "by hand) apply, those of other models not "
                         "(default auto: znver4 for an AMD CPU with "
                         "AVX-512, znver3 for another AMD one, "
                         "icelake-server for Intel)")
    ap.add_argument("--call-floor", default="on",
                    help="'on' (default): also run the smallest op (a "
                         "copy of 1 element) and bound no case below its "
                         "time (bound kind \"call floor\"); 'off': not")
    ap.add_argument("--config-only", action="store_true",
                    help="write DIR/config.json and stop")
    ap.add_argument("--from", dest="from_dir", default=None,
                    help="render DIR's table again from its files; run "
                         "nothing")
    a = ap.parse_args()
    try:
        mr = float(a.max_ratio)
    except ValueError:
        mr = float("nan")
    if not (mr >= 1.0 and math.isfinite(mr)):
        die(f"--max-ratio: expected a number >= 1, got '{a.max_ratio}'")
    command = "/usr/bin/python3 scripts/op_limits.py " + " ".join(
        sys.argv[1:])
    if a.reasons is None:
        a.reasons = REASONS_FILE
    if a.from_dir and not os.path.isdir(a.from_dir):
        die(f"--from: '{a.from_dir}' is not a folder")
    reasons = [] if a.reasons == "none" else load_reasons(
        a.reasons, list_ops(a.tbench))
    rfile = None if a.reasons == "none" else a.reasons
    if a.from_dir:
        try:
            with open(os.path.join(a.from_dir, "command.txt"),
                      encoding="utf-8") as f:
                command = f.read().strip() + " (rendered again by " + \
                    command + ")"
        except OSError:
            pass
        bounds = None
        if a.bounds is not None:
            # the times as measured, judged against the bounds of now
            bounds = {} if a.bounds == "none" else load_bounds(
                a.bounds, list_ops(a.tbench),
                load_plan(a.from_dir).get("bounds_mcpu") or host_mcpu())
        md, bad = render(a.from_dir, mr, command, bounds, reasons, rfile)
        sys.stdout.write(md)
        return 1 if bad else 0
    if not a.elements.isdigit() or not 16 <= int(a.elements) <= 1 << 28 \
            or int(a.elements) & (int(a.elements) - 1):
        die(f"--elements: expected a power of two from 16 to 268435456, "
            f"got '{a.elements}'")
    n = int(a.elements)
    if a.call_floor not in ("on", "off"):
        die(f"--call-floor: expected on or off, got '{a.call_floor}'")
    if a.peaks not in ("measure", "cached"):
        die(f"--peaks: expected measure or cached, got '{a.peaks}'")
    peers = [] if a.peers == "none" else a.peers.split(",")
    if not set(peers) <= {"numpy", "torch"} or "" in peers:
        die(f"--peers: expected numpy, torch, numpy,torch or none, "
            f"got '{a.peers}'")
    extra = []
    for spec in a.peer_python:
        py, _, lab = spec.partition(":")
        lab = lab or "pypi"
        if not re.fullmatch(r"[A-Za-z0-9_]{1,20}", lab) or \
                lab in [x[1] for x in extra]:
            die(f"--peer-python: '{spec}': LABEL must be 1-20 letters, "
                "digits or _, each label once")
        if not (os.path.isfile(py) and os.access(py, os.X_OK)):
            die(f"--peer-python: '{py}' is not an executable (make one "
                "with sh scripts/peers.sh)")
        extra.append((py, lab))
    dtypes = a.dtypes.split(",")
    if len(set(dtypes)) != len(dtypes) or \
            not set(dtypes) <= {"f32", "f64", "bf16", "f16"}:
        die(f"--dtypes: expected a comma-separated list of f32, f64, bf16, "
            f"f16, got '{a.dtypes}'")
    if not a.rounds.isdigit() or not 1 <= int(a.rounds) <= 20:
        die(f"--rounds: expected a whole number from 1 to 20, got "
            f"'{a.rounds}'")
    nr = int(a.rounds)
    mt = ROUND_MAX_TIME_S
    if a.max_time is not None:
        try:
            mt = float(a.max_time)
        except ValueError:
            mt = float("nan")
        if not (0 < mt <= 3600):
            die(f"--max-time: expected seconds in (0, 3600], got "
                f"'{a.max_time}'")
    tb = a.tbench
    ops = list_ops(tb)
    if a.bounds is None:
        a.bounds = BOUNDS_FILE
    op_filter = a.ops.split(",") if a.ops else None
    mcpu = host_mcpu() if a.mcpu == "auto" else a.mcpu
    bounds = {} if a.bounds == "none" else load_bounds(a.bounds, ops, mcpu)
    cfg = make_config(a.quick, ops, n, op_filter,
                      {(b["op"], dtype_of_impl(i, b["op"]))
                       for i, b in bounds.items()}, dtypes)
    cfg["measure"] = dict(cfg["measure"], max_time_s=mt)
    # the chains' steps and the call floor: cases of their own
    check_chain_table(ops)
    aux_new, aux = aux_entries(cfg["ops"], ops,
                               lambda e: e.get("dtypes", cfg["dtypes"]),
                               a.call_floor == "on")
    cfg["ops"] += aux_new
    plan = {"schema": PLAN_SCHEMA, "rounds": nr, "elements": n,
            "probe_elements": PROBE_N,
            "peer_labels": [lab for _, lab in extra],
            "time_note": f"measure.max_time_s {mt:g} s per case and round",
            "bounds_file": None if a.bounds == "none" else
            os.path.relpath(os.path.abspath(a.bounds), ROOT),
            "bounds_mcpu": mcpu,
            "bounds": bounds, "aux": aux}
    d = a.output or os.path.join(ROOT, "results", time.strftime(
        "op-limits-%Y%m%d-%H%M%S", time.gmtime()))
    try:
        os.makedirs(d, exist_ok=True)
        cpath = os.path.join(d, "config.json")
        with open(cpath, "w", encoding="utf-8") as f:
            f.write(f"// generated by scripts/op_limits.py from {a.quick}: "
                    f"every op at {n} elements ({a.dtypes}) where its kind is "
                    "element-wise, else its quick size; 1 thread\n")
            json.dump(cfg, f, indent=1)
            f.write("\n")
        with open(os.path.join(d, "command.txt"), "w",
                  encoding="utf-8") as f:
            f.write(command + "\n")
        with open(os.path.join(d, "plan.json"), "w", encoding="utf-8") as f:
            json.dump(plan, f, indent=1)
            f.write("\n")
    except OSError as e:
        die(f"{d}: cannot write the config: {e.strerror}")
    if a.config_only:
        print(f"op_limits.py: {cpath}: {len(cfg['ops'])} op entries",
              file=sys.stderr)
        return 0
    rc = 0
    ppath = cpath   # the peers' config: after round 1, their ops only
    for r in range(1, nr + 1):
        rdir, pp = round_paths(d, r)

        def tbench_side():
            return run_tool([tb, "run", cpath, "-o", rdir, "-q"] +
                            (["--peaks"] if a.peaks == "measure" and r == 1
                             else []), f"tbench run (round {r} of {nr})")

        def peers_side():
            rc = 0
            for py, lab in [("/usr/bin/python3", None)] + extra:
                pf = round_paths(d, r, lab)[1]
                if os.path.exists(pf):
                    os.remove(pf)
                if not peers:
                    continue
                rc |= run_tool([py, os.path.join(ROOT, "scripts",
                                                 "compare_numpy.py"),
                                ppath, "-o", pf, "--tbench", tb,
                                "--threads", "1", "--backends",
                                ",".join(peers)] +
                               (["--label", lab] if lab else []),
                               f"compare_numpy.py {py} (round {r} of {nr})")
            return rc
        # odd rounds tbench first, even rounds the peers first (T P, P T,
        # T P, P T): a drift of the machine's speed during the run favours
        # neither side
        for side in ((tbench_side, peers_side) if r % 2 else
                     (peers_side, tbench_side)):
            rc |= side()
        if r == 1 and nr > 1 and os.path.exists(pp):
            ppath = peers_config(d, cfg, pp)
    md, bad = render(d, mr, command, None, reasons, rfile)
    sys.stdout.write(md)
    print(f"op_limits.py: {os.path.join(d, 'limits.md')}, "
          f"{os.path.join(d, 'limits.json')}", file=sys.stderr)
    return 1 if bad or rc else 0


if __name__ == "__main__":
    sys.exit(main())
