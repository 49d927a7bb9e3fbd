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
   with one shape for every input; elementwise entries with per-input
   shapes that broadcast) at
   --elements (default 1M = 2^20) elements in the entry's rank
   (1048576, 1024x1024, 128x128x64, ...); matmul, conv, pooling,
   softmax, linalg, calibration, workloads and per-input shapes that do
   not broadcast keep their quick.json size.  Backends: quick.json's, at
   1 thread, the cpu backend at isa=auto;
2. runs `tbench run DIR/config.json --peaks -o DIR/run` (the peaks give
   every case its roofline, docs/FORMAT.md "roofline"; `--peaks cached`
   uses the cached ones instead of measuring);
3. runs scripts/compare_numpy.py on the same config, 1 thread, both forms
   (allocating and out=), into DIR/peers.json;
4. writes DIR/limits.md (a Markdown table) and DIR/limits.json.

Per case: the median time; its bound, the roofline's attainable time
(`roofline.min_time_ns`: the bytes of the op's cost model at the measured
copy/add/read bandwidth of the cache level its bytes fit, or its FLOPs at
the measured FMA peak when that is larger: `bound` says which); the
ratio time / bound; NumPy's and PyTorch's medians (each library's faster
form); and tbench's time over the best of them.  Flags:
  bound  an elementwise, activation, reduction, creation or inplace case
         above --max-ratio (1.5) times its bound;
  peer   a case slower than the best peer: its median above the best
         peer's, and the 95% confidence intervals of the two medians
         apart (tbench's CI low above the peer's CI high).

Exit status: 0 done (flags are findings, not failures); 1 a case failed
its check or did not run in tbench or a peer; 2 bad arguments or input,
a tool that failed.  `--from DIR` renders the table again from DIR's
files without running anything; `--config-only` stops after step 1.
"""
import argparse
import fnmatch
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = "tbench.op_limits/1"
SCALED = {"elementwise", "activation", "reduction", "layout", "creation",
          "inplace", "optimizer", "fused"}
BOUND_CATS = {"elementwise", "activation", "reduction", "creation",
              "inplace"}


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


def make_config(quick_path, ops, n, op_filter):
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
        dts = e.get("dtypes", top)
        dts = dts if isinstance(dts, list) else [dts]
        if "f32" not in dts:
            continue
        ne = {k: v for k, v in e.items() if k != "dtypes"}
        sc = scale_entry(e, ops[e["op"]]["category"],
                         scaled_kind(e["op"], ops), n, where)
        if sc is not None:
            ne["shapes"] = sc
        key = json.dumps(ne, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        entries.append(ne)
    if op_filter:
        for g in op_filter:
            if not any(fnmatch.fnmatchcase(o, g) for o in wanted):
                die(f"--ops: '{g}' matches no op of {quick_path}")
    cfg = {
        "name": "op-limits",
        "seed": q.get("seed", 42),
        "warmup": q.get("warmup", {}),
        "measure": q.get("measure", {}),
        "dtypes": ["f32"],
        "backends": backends,
        "ops": entries,
    }
    return cfg


# ---- steps 2-3: the runs ----------------------------------------------------

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


def peer_of(peers, key):
    """{lib: (median, ci_low, ci_high)} for a tbench case: the faster form
    of each library; for an allocating case (op@alloc) the libraries'
    allocating form."""
    op, _, rest = key.partition("/")
    forms = None
    if "@alloc" in op:
        key = op.replace("@alloc", "", 1) + "/" + rest
        forms = ("alloc",)
    out = {}
    for lib, fm in peers.get(key, {}).items():
        v = [t for f, t in fm.items() if not forms or f in forms]
        if v:
            out[lib] = min(v)
    return out


def run_rates(results_doc):
    """ns per byte of this run's own copy (the copy op) and read (the
    global sum) at 1 thread: {"copy": r, "read": r}, where they ran."""
    best = {}
    for c in results_doc.get("cases", []):
        st = c.get("stats") or {}
        b = (c.get("model") or {}).get("bytes")
        kind = "copy" if c.get("op") == "copy" else \
            "read" if c.get("op") == "sum" and \
            "axis" not in (c.get("params") or {}) else None
        if kind and c.get("status") == "ok" and b and st.get("median_ns"):
            r = st["median_ns"] / b
            best[kind] = min(best.get(kind, r), r)
    return best


def build_rows(results_doc, peers_doc, max_ratio):
    peers = peer_times(peers_doc) if peers_doc else {}
    rates = run_rates(results_doc)
    rows = []
    for c in results_doc.get("cases", []):
        st = c.get("status")
        rl = c.get("roofline") or None
        med = (c.get("stats") or {}).get("median_ns") if st == "ok" else None
        bound = rl.get("min_time_ns") if rl else None
        ratio = med / bound if med and bound else None
        p = peer_of(peers, key_of(c["id"]))
        bp = min(p.values()) if p else None
        best = bp[0] if bp else None
        vs = med / best if med and best else None
        sts = c.get("stats") or {}
        flags = []
        if ratio is not None and c.get("category") in BOUND_CATS and \
                ratio > max_ratio:
            flags.append("bound")
        if vs is not None and vs > 1.0 and \
                sts.get("ci_low_ns", med) > bp[2]:
            flags.append("peer")
        # the same bytes at this run's own copy (read for reductions)
        b = (c.get("model") or {}).get("bytes")
        rk = "read" if c.get("category") == "reduction" else "copy"
        vs_run = med / (b * rates[rk]) if med and b and rk in rates \
            else None
        kind = None
        if rl:
            kind = (f"compute ({rl.get('isa')} FMA)"
                    if rl.get("bound") == "compute" else
                    f"memory ({rl.get('bw_kernel')}, {rl.get('level')})")
        rows.append({
            "id": c["id"], "op": c["op"], "case": c["id"].split("/")[0],
            "category": c.get("category"),
            "shapes": c.get("shapes"), "params": c.get("params") or {},
            "backend": c.get("backend"), "impl": c.get("impl"),
            "status": st, "message": c.get("message"),
            "median_ns": med, "bound_ns": bound, "bound": kind,
            "ratio": ratio, "run_bound": rk, "vs_run_bound": vs_run,
            "numpy_ns": p["numpy"][0] if "numpy" in p else None,
            "torch_ns": p["torch"][0] if "torch" in p else None,
            "best_peer_ns": best,
            "vs_best_peer": vs, "flags": flags,
        })
    return rows


def markdown(rows, meta, max_ratio):
    out = [f"# Every op at the machine's limit ({meta['date']})", "",
           f"From one invocation: `{meta['command']}` (tbench "
           f"{meta['tbench_version']}, commit {meta['git_commit']}, build "
           f"{meta['build_type']}; load average {meta['loadavg']}; peaks "
           f"{meta['peaks']}).  Time: median per call, 1 thread.  Bound: "
           "the roofline's attainable time (docs/FORMAT.md, roofline): the "
           "op's bytes at the measured bandwidth of the level they fit, or "
           "its FLOPs at the FMA peak when larger.  Ratio = time / bound.  "
           "NumPy, PyTorch: scripts/compare_numpy.py in the same "
           "invocation, the faster of each library's forms (allocating, "
           "out=).  Flags: **bound** = an elementwise, activation, "
           f"reduction, creation or inplace case above {max_ratio:g}x its "
           "bound; **peer** = slower than the best peer (the 95% confidence "
           "intervals of the two medians do not overlap).  \"vs run's "
           "copy/read\": the time over that of the same bytes at this "
           "run's own copy op (the global sum's read for reductions), a "
           "check of the bound that needs no peaks.", ""]
    if meta.get("peaks_warning"):
        out += [f"**Warning**: {meta['peaks_warning']}", ""]
    out += ["| case | category | shapes | backend | impl | time | "
            "bound | bound kind | ratio | vs run's copy/read | NumPy | "
            "PyTorch | vs best peer | flags |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t = fmt_ns(r["median_ns"]) if r["status"] == "ok" else r["status"]
        out.append("| " + " | ".join([
            r["case"], r["category"] or "-", shape_text(r["shapes"] or []),
            r["backend"] or "-", r["impl"] or "-", t,
            fmt_ns(r["bound_ns"]), r["bound"] or "-", fmt_x(r["ratio"]),
            fmt_x(r["vs_run_bound"]),
            fmt_ns(r["numpy_ns"]), fmt_ns(r["torch_ns"]),
            fmt_x(r["vs_best_peer"]),
            ", ".join(r["flags"]) or "-"]) + " |")
    above = [r for r in rows if "bound" in r["flags"]]
    behind = [r for r in rows if "peer" in r["flags"]]
    out += ["", f"Above {max_ratio:g}x their bound ({len(above)}): " +
            (", ".join(f"{r['case']} {shape_text(r['shapes'])} "
                       f"({fmt_x(r['ratio'])})" for r in above) or "none"),
            "", f"Slower than the best peer ({len(behind)}): " +
            (", ".join(f"{r['case']} {shape_text(r['shapes'])} "
                       f"({fmt_x(r['vs_best_peer'])})" for r in behind)
             or "none")]
    nobound = [r["op"] for r in rows if r["status"] == "ok" and
               r["bound_ns"] is None]
    if nobound:
        out += ["", f"No bound ({len(nobound)} cases: no peaks in the run, "
                "or no bytes or FLOPs in the op's cost model): " +
                ", ".join(dict.fromkeys(nobound))]
    return "\n".join(out) + "\n"


def render(d, max_ratio, command):
    res, _ = load_json(os.path.join(d, "run", "results.json"),
                       "tbench result file")
    if not isinstance(res, dict) or not isinstance(res.get("cases"), list):
        die(f"{os.path.join(d, 'run', 'results.json')}: not a tbench "
            "result file (no 'cases' list)")
    pp = os.path.join(d, "peers.json")
    peers = None
    if os.path.exists(pp):
        peers, _ = load_json(pp, "compare_numpy.py result file")
        if not isinstance(peers, dict) or \
                not isinstance(peers.get("cases"), list):
            die(f"{pp}: not a compare_numpy.py result file (no 'cases' "
                "list)")
    rows = build_rows(res, peers, max_ratio)
    env = res.get("env", {})
    b = env.get("build", {})
    pk = res.get("peaks")
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": command,
        "tbench_version": b.get("tbench_version"),
        "git_commit": b.get("git_commit"),
        "build_type": b.get("build_type"),
        "loadavg": ", ".join(f"{x:.2f}" for x in env.get("loadavg", [])),
        "peaks": (f"measured {pk.get('date')}" +
                  (" (quick)" if pk.get("quick") else "")) if pk else
        "none (no bounds)",
        "peaks_warning": (" ".join(pk.get("notes") or []) or None)
        if pk else None,
    }
    doc = {"schema": SCHEMA, "meta": meta, "max_ratio": max_ratio,
           "files": {"results": "run/results.json",
                     "peers": "peers.json" if peers else None,
                     "config": "config.json"},
           "rows": rows,
           "above_bound": [r["id"] for r in rows if "bound" in r["flags"]],
           "behind_peer": [r["id"] for r in rows if "peer" in r["flags"]]}
    with open(os.path.join(d, "limits.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    md = markdown(rows, meta, max_ratio)
    with open(os.path.join(d, "limits.md"), "w", encoding="utf-8") as f:
        f.write(md)
    bad = [r for r in rows if r["status"] not in ("ok", "unsupported")]
    pbad = [c for c in (peers or {}).get("cases", [])
            if c.get("status") in ("failed-check", "error")]
    return md, bool(bad or pbad)


# ---- main -------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(
        description="Every op of quick.json at 1M f32 elements, 1 thread: "
                    "time, roofline bound, ratio, NumPy and PyTorch, in one "
                    "run (issue 18).")
    ap.add_argument("-o", "--output", default=None,
                    help="folder for config.json, run/, peers.json, "
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
    ap.add_argument("--max-ratio", default="1.5",
                    help="flag bound: time / bound above this (default 1.5)")
    ap.add_argument("--peaks", default="measure",
                    help="'measure' (tbench run --peaks, default) or "
                         "'cached' (the peaks tbench peak cached)")
    ap.add_argument("--peers", default="numpy,torch",
                    help="numpy, torch, numpy,torch (default) or none")
    ap.add_argument("--max-time", default=None,
                    help="measure.max_time_s of every case (default "
                         "quick.json's)")
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
    if a.from_dir:
        if not os.path.isdir(a.from_dir):
            die(f"--from: '{a.from_dir}' is not a folder")
        try:
            with open(os.path.join(a.from_dir, "command.txt"),
                      encoding="utf-8") as f:
                command = f.read().strip() + " (rendered again by " + \
                    command + ")"
        except OSError:
            pass
        md, bad = render(a.from_dir, mr, command)
        sys.stdout.write(md)
        return 1 if bad else 0
    if not a.elements.isdigit() or not 16 <= int(a.elements) <= 1 << 28 \
            or int(a.elements) & (int(a.elements) - 1):
        die(f"--elements: expected a power of two from 16 to 268435456, "
            f"got '{a.elements}'")
    n = int(a.elements)
    if a.peaks not in ("measure", "cached"):
        die(f"--peaks: expected measure or cached, got '{a.peaks}'")
    peers = [] if a.peers == "none" else a.peers.split(",")
    if not set(peers) <= {"numpy", "torch"} or "" in peers:
        die(f"--peers: expected numpy, torch, numpy,torch or none, "
            f"got '{a.peers}'")
    if a.max_time is not None:
        try:
            mt = float(a.max_time)
        except ValueError:
            mt = float("nan")
        if not (0 < mt <= 3600):
            die(f"--max-time: expected seconds in (0, 3600], got "
                f"'{a.max_time}'")
    tb = a.tbench
    if not (os.path.isfile(tb) and os.access(tb, os.X_OK)):
        die(f"--tbench: '{tb}' is not an executable (build tbench first: "
            "meson setup build -Dbuildtype=release && ninja -C build)")
    p = subprocess.run([tb, "list", "--json"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        die(f"{tb} list --json failed: {p.stderr.strip()}")
    ops = {o["name"]: o for o in json.loads(p.stdout)["ops"]}
    op_filter = a.ops.split(",") if a.ops else None
    cfg = make_config(a.quick, ops, n, op_filter)
    if a.max_time is not None:
        cfg["measure"] = dict(cfg["measure"], max_time_s=mt)
    d = a.output or os.path.join(ROOT, "results", time.strftime(
        "op-limits-%Y%m%d-%H%M%S", time.gmtime()))
    try:
        os.makedirs(d, exist_ok=True)
        cpath = os.path.join(d, "config.json")
        with open(cpath, "w", encoding="utf-8") as f:
            f.write(f"// generated by scripts/op_limits.py from {a.quick}: "
                    f"every op at {n} f32 elements where its kind is "
                    "element-wise, else its quick size; 1 thread\n")
            json.dump(cfg, f, indent=1)
            f.write("\n")
        with open(os.path.join(d, "command.txt"), "w",
                  encoding="utf-8") as f:
            f.write(command + "\n")
    except OSError as e:
        die(f"{d}: cannot write the config: {e.strerror}")
    if a.config_only:
        print(f"op_limits.py: {cpath}: {len(cfg['ops'])} op entries",
              file=sys.stderr)
        return 0
    rc = run_tool([tb, "run", cpath, "-o", os.path.join(d, "run"), "-q"] +
                  (["--peaks"] if a.peaks == "measure" else []),
                  "tbench run")
    pp = os.path.join(d, "peers.json")
    if os.path.exists(pp):
        os.remove(pp)
    if peers:
        rc |= run_tool(["/usr/bin/python3",
                        os.path.join(ROOT, "scripts", "compare_numpy.py"),
                        cpath, "-o", pp, "--tbench", tb, "--threads", "1",
                        "--backends", ",".join(peers)],
                       "compare_numpy.py")
    md, bad = render(d, mr, command)
    sys.stdout.write(md)
    print(f"op_limits.py: {os.path.join(d, 'limits.md')}, "
          f"{os.path.join(d, 'limits.json')}", file=sys.stderr)
    return 1 if bad or rc else 0


if __name__ == "__main__":
    sys.exit(main())
