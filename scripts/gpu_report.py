#!/usr/bin/env python3
"""The GPU sections of docs/PERFORMANCE.md, from the GPU result folders
that scripts/gpu_check.sh produced on a real GPU and that are committed
under docs/perf-data/gpu/DEVICE/ (scripts/make_report.sh appends this
script's output to the report).

Usage: gpu_report.py GPUDIR [--cpu RESULTS]

GPUDIR holds DEVICE folders; each gives one section: where and when it
was measured (README.md of the folder), the checks (first- and
full-summary.txt), the GPU's peaks (peaks.json), tbench against PyTorch
CUDA on the same cases (torch-times.json), CPU vs OpenBLAS vs CUDA on the
cases RESULTS (this report's own run) shares with gpu.json, launches and
fusion, transfers, the pool, the L2 cold and warm, and CUPTI's cost.
Without a DEVICE folder it says there are no GPU results yet, and
nothing else about GPUs.  Standard library only; every figure is read
from the files, none is computed that they do not hold the inputs of.
"""
import json
import os
import re
import sys


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def us(ns):
    if ns is None:
        return "-"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.2f} µs"


def dev_ns(c):
    return ((c.get("timing") or {}).get("device") or {}).get("median_ns")


def shape_s(shapes):
    return ",".join("x".join(str(d) for d in s) for s in shapes)


def case_s(c):
    """op[params] shapes of a case or torch-times row: its id without
    the dtype and backend parts."""
    parts = c["id"].split("/")
    return f"{parts[0]} {parts[1]}" if len(parts) > 1 else c["id"]


def numel(c):
    n = 1
    for d in c["shapes"][0]:
        n *= d
    return n


def cases(doc, backend=None):
    return [c for c in (doc or {}).get("cases", [])
            if c["status"] == "ok" and (backend is None or
                                         c["backend"] == backend)]


def summary_counts(path):
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError:
        return None
    total = [ln for ln in lines if ln.startswith("TOTAL ")]
    return {"pass": sum(ln.startswith("PASS") for ln in lines),
            "fail": sum(ln.startswith("FAIL") for ln in lines),
            "skip": sum(ln.startswith("SKIP") for ln in lines),
            "total": total[-1] if total else "", "lines": lines}


def section(d, cpu_doc, out):
    name = os.path.basename(os.path.normpath(d))
    w = out.append
    w(f"### {name.replace('-', ' ')}\n")
    readme = os.path.join(d, "README.md")
    if os.path.exists(readme):
        # its text, without the table of files (the folder's README has it)
        body = open(readme, encoding="utf-8").read().split("\n", 1)
        text = body[1].split("\n| file |")[0].strip() if len(body) > 1 \
            else ""
        w(text + f" Files: [{d}]({os.path.relpath(d, 'docs')}/README.md)."
          "\n")
    # ---- checks
    w("#### Checks\n")
    w("| run | passed | failed | skipped | time |\n|---|---|---|---|---|")
    for mode in ("first", "full"):
        s = summary_counts(os.path.join(d, f"{mode}-summary.txt"))
        if s:
            t = re.search(r"(\d+) s$", s["total"])
            w(f"| `gpu_check.sh --{mode}` | {s['pass']} | {s['fail']} | "
              f"{s['skip']} | {t.group(1) + ' s' if t else '-'} |")
    w("")
    first = summary_counts(os.path.join(d, "first-summary.txt"))
    if first:
        keys = ("check: cuda cases ok", "kernel launches, CUPTI",
                "event time <=", "CUPTI kernel time <=", "sanitizer:",
                "64-bit indices", "torch oracle")
        for ln in first["lines"]:
            if any(k in ln for k in keys) and not ln.startswith("TIME"):
                w(f"- {ln[5:] if ln[:4] in ('PASS', 'INFO') else ln}")
        tp = [ln for ln in first["lines"] if ln.startswith("PASS torch ")]
        tf = [ln for ln in first["lines"] if ln.startswith("FAIL torch ")]
        if tp or tf:
            w(f"- PyTorch as the oracle: {len(tp)} ops within their "
              f"tolerance of PyTorch's float64 result on the GPU, "
              f"{len(tf)} off (`first-summary.txt` lists each)")
        w("")
    # ---- peaks
    pk = (load(os.path.join(d, "peaks.json")) or {}).get("gpu") or {}
    if pk.get("available"):
        dv = pk["device"]
        w("#### Peaks\n")
        w(f"{dv['name']}, compute capability {dv['compute_capability']}, "
          f"{dv['sm_count']} SMs; measured by `tbench peak` with the "
          f"module's own kernels.\n")
        w("| peak | best | median | vendor | best / vendor |\n"
          "|---|---|---|---|---|")
        for e in pk["bandwidth"]:
            w(f"| {e['kernel']} | {e['best_gb_s']:.0f} GB/s | "
              f"{e['median_gb_s']:.0f} GB/s | {e['vendor_gb_s']:.0f} GB/s | "
              f"{e['best_gb_s'] / e['vendor_gb_s']:.0%} |")
        for e in pk["flops"]:
            w(f"| FMA {e['dtype']} | {e['best_gflop_s']:.0f} GFLOP/s | "
              f"{e['median_gflop_s']:.0f} GFLOP/s | "
              f"{e['vendor_gflop_s']:.0f} GFLOP/s | "
              f"{e['best_gflop_s'] / e['vendor_gflop_s']:.0%} |")
        w("")
    gpu = load(os.path.join(d, "gpu.json"))
    # ---- PyTorch CUDA
    tt = load(os.path.join(d, "torch-times.json"))
    if tt and tt.get("rows"):
        ver = tt["rows"][0].get("torch_version", "?")
        w("#### tbench's CUDA kernels against PyTorch CUDA\n")
        w(f"The cases of [configs/gpu.json](../configs/gpu.json) (f32), "
          f"each also run through PyTorch {ver} on the same GPU "
          f"(`scripts/gpu_torch.py time`: CUDA events around batches of "
          f"back-to-back calls, the median per call; optimizer steps in "
          f"PyTorch's fused form). tbench: its device time "
          f"(`timing.device`, CUDA events around each batch). Below "
          f"about 15 µs PyTorch's column is its own per-call cost (Python "
          f"and dispatch), not its kernel: compare the larger sizes.\n")
        w("| case | tbench | PyTorch | tbench / PyTorch |\n|---|---|---|---|")
        for r in tt["rows"]:
            t = r["tbench_device_ns"] or r["tbench_host_ns"]
            w(f"| {case_s(r)} | {us(t)} | "
              f"{us(r['torch_device_ns'])} | "
              f"{t / r['torch_device_ns']:.2f} |")
        w("")
    # ---- CPU vs OpenBLAS vs CUDA
    if gpu and cpu_doc:
        def key(c):
            return (c["op"], json.dumps(c["shapes"]),
                    json.dumps(c.get("params")), c["dtype"],
                    bool(c.get("transfers")))
        best = {}
        for c in cases(cpu_doc):
            if c["backend"] not in ("cpu", "blas"):
                continue
            k = key(c) + (c["backend"],)
            t = c["stats"]["median_ns"]
            if k not in best or t < best[k][0]:
                best[k] = (t, c["backend_params"])
        rows = []
        for c in cases(gpu, "cuda"):
            k = key(c)
            cp = best.get(k + ("cpu",))
            bl = best.get(k + ("blas",))
            if cp or bl:
                rows.append((c, cp, bl))
        if rows:
            host = (cpu_doc.get("env") or {}).get("cpu", {})
            cpu_name = host.get("model") if isinstance(host, dict) else None
            w("#### CPU vs OpenBLAS vs CUDA\n")
            w(f"The cases this report's run shares with configs/gpu.json: "
              f"the CPU figures are this report's machine's"
              f"{' (' + cpu_name + ')' if cpu_name else ''}, the best "
              f"thread count; CUDA's are the GPU machine's, host time per "
              f"call (launch and synchronisation included) and device "
              f"time. Two machines: the ratio says what moving the op to "
              f"that GPU would buy, not a property of either kernel.\n")
            w("| case | cpu | blas | cuda (host) | cuda (device) | "
              "best CPU side / cuda host |\n|---|---|---|---|---|---|")
            for c, cp, bl in rows:
                side = min(x[0] for x in (cp, bl) if x)
                w(f"| {case_s(c)} | "
                  f"{us(cp[0]) if cp else '-'} | "
                  f"{us(bl[0]) if bl else '-'} | "
                  f"{us(c['stats']['median_ns'])} | {us(dev_ns(c))} | "
                  f"{side / c['stats']['median_ns']:.1f}x |")
            w("")
    # ---- launches and fusion
    if gpu:
        g = cases(gpu, "cuda")
        by = {(c["op"], shape_s(c["shapes"]), bool(c.get("transfers"))): c
              for c in g}
        rows = []
        pooled = {shape_s(c["shapes"]): c for c in cases(
            load(os.path.join(d, "alloc.json")), "cuda")
            if c["op"] == "log_softmax_unfused" and
            c["backend_params"].get("pool") == "true"}
        for shp in ("256x10", "1024x10", "4096x10"):
            f, u = by.get(("log_softmax", shp, False)), \
                by.get(("log_softmax_unfused", shp, False))
            if f and u and f.get("cupti") and u.get("cupti"):
                rows.append((f"log_softmax {shp}", f, u, pooled.get(shp)))
        if rows:
            w("#### Launches and fusion\n")
            w("CUPTI's kernel launches per call and the host time per call "
              "of the fused kernel against its unfused composition (max, "
              "sub, exp, sum, log, sub as separate kernels, whose "
              "temporaries are allocated every call: with cudaMalloc, "
              "which synchronizes, or from the stream-ordered pool).\n")
            w("| case | fused: launches, time | unfused, cudaMalloc: "
              "launches, allocations, time | unfused, pool: time | "
              "unfused (pool) / fused |\n|---|---|---|---|---|")
            for n, f, u, q in rows:
                fh = f["stats"]["median_ns"]
                w(f"| {n} | {f['cupti']['kernel_launches']:g}, {us(fh)} | "
                  f"{u['cupti']['kernel_launches']:g}, "
                  f"{u['cupti']['device_allocs']:g}, "
                  f"{us(u['stats']['median_ns'])} | "
                  f"{us(q['stats']['median_ns']) if q else '-'} | "
                  f"{format(q['stats']['median_ns'] / fh, '.1f') + 'x' if q else '-'} |")
            w("")
        # ---- transfers
        rows = []
        for (op, shp, tr), c in sorted(
                by.items(), key=lambda kv: (kv[0][0], numel(kv[1]))):
            if tr:
                r = by.get((op, shp, False))
                if r:
                    rows.append((op, shp, r, c))
        if rows:
            w("#### Data resident on the GPU vs starting on the host\n")
            w("Host time per call: resident (inputs uploaded once) and "
              "`@transfers` (every call uploads its inputs from pageable "
              "host memory and downloads its output).\n")
            w("| case | resident | with transfers | share of the call in "
              "copies |\n|---|---|---|---|")
            for op, shp, r, c in rows:
                a, b = r["stats"]["median_ns"], c["stats"]["median_ns"]
                w(f"| {op} {shp} | {us(a)} | {us(b)} | "
                  f"{100 * (1 - a / b):.1f}% |")
            w("")
        copies = [c for c in g if c["op"] in ("copy_h2d", "copy_d2h",
                                              "copy_d2d") and
                  c["shapes"][0][0] in (1048576, 67108864)]
        if copies:
            w("| copy | size | host memory | time | GB/s |\n"
              "|---|---|---|---|---|")
            for c in copies:
                n = c["shapes"][0][0] * 4
                kind = ("pinned" if c.get("params", {}).get("pinned")
                        else "pageable") if c["op"] != "copy_d2d" else "-"
                w(f"| {c['op']} | {n / 2**20:.0f} MiB | {kind} | "
                  f"{us(c['stats']['median_ns'])} | "
                  f"{n / c['stats']['median_ns']:.1f} |")
            w("")
    # ---- pool
    al = load(os.path.join(d, "alloc.json"))
    if al:
        a = {}
        for c in cases(al, "cuda"):
            if c["op"] == "add" and c.get("alloc_outputs") and \
                    not c.get("transfers"):
                a[(shape_s(c["shapes"]), c["backend_params"].get("pool"))] \
                    = c
        shp = sorted({k[0] for k in a}, key=lambda s: int(s.split(",")[0]))
        if shp:
            w("#### Allocating every call: cudaMalloc vs the stream-ordered "
              "pool\n")
            w("`add` allocating its output every call (`\"alloc\": true`), "
              "host time per call; device allocations per call from "
              "CUPTI.\n")
            w("| case | cudaMalloc (pool=false) | pool=true | allocations "
              "per call (CUPTI) |\n|---|---|---|---|")
            for s in shp:
                f, t = a.get((s, "false")), a.get((s, "true"))
                if not (f and t):
                    continue
                w(f"| add {s} | {us(f['stats']['median_ns'])} | "
                  f"{us(t['stats']['median_ns'])} | "
                  f"{f['cupti']['device_allocs']:g} / "
                  f"{t['cupti']['device_allocs']:g} |")
            w("")
    # ---- L2
    l2, one = load(os.path.join(d, "l2.json")), \
        load(os.path.join(d, "l2-single.json"))
    if l2 and one:
        t = {}
        for doc, tag in ((l2, "batch"), (one, "one")):
            for c in cases(doc, "cuda"):
                t[(c["op"], c["shapes"][0][0], c["backend_params"]["l2"],
                   tag)] = dev_ns(c)
        w("#### L2 warm and cold\n")
        w("Device time per call: warm in batches, warm one call per "
          "sample, and cold (a buffer of twice the L2 overwritten before "
          "each one-call sample, outside the clocks).\n")
        w("| case | warm, batched | warm, one call | cold, one call | "
          "cold / warm one call |\n|---|---|---|---|---|")
        for op, n in (("add", 1048576), ("add", 16777216), ("sum", 4194304)):
            a, b, c = t.get((op, n, "warm", "batch")), \
                t.get((op, n, "warm", "one")), t.get((op, n, "cold", "batch"))
            if b and c:
                w(f"| {op} {n} f32 | {us(a)} | {us(b)} | {us(c)} | "
                  f"{c / b:.2f} |")
        w("")
    # ---- CUPTI
    try:
        last = [ln for ln in open(os.path.join(d, "cupti_overhead.log"),
                                  encoding="utf-8")
                if ln.startswith("cupti_overhead ")][-1]
        f = dict(kv.split("=") for kv in last.split()[1:])
        w("#### CUPTI's cost after its counting pass\n")
        w(f"An empty kernel launched back to back "
          f"(`tests/gpu/cupti_overhead.cu`, {f['reps']} alternations of "
          f"{f['launches']} launches): {float(f['never_ns']):.0f} ns per "
          f"launch before CUPTI was loaded, "
          f"{float(f['attached_ns']):.0f} ns with CUPTI attached after a "
          f"pass (its activity kinds disabled), "
          f"{float(f['detached_ns']):.0f} ns after `cuptiFinalize`: "
          f"attached costs {float(f['attached_over_detached']) - 1:.0%} "
          f"per launch, which tbench no longer pays (it detaches after "
          f"each counting pass).\n")
    except (OSError, IndexError, KeyError, ValueError):
        pass


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--cpu"):
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    cpu_doc = load(argv[3]) if len(argv) == 4 else None
    dirs = sorted(os.path.join(root, x) for x in os.listdir(root)
                  if os.path.isdir(os.path.join(root, x))) \
        if os.path.isdir(root) else []
    out = ["## GPU results\n"]
    if not dirs:
        out.append("No GPU results yet: `scripts/gpu_check.sh` has not "
                   "been run on a GPU for this report "
                   f"(`{root}` holds no device folder).\n")
    else:
        out.append("Measured by `scripts/gpu_check.sh` on a GPU machine, "
                   "not the machine of the sections above; the files are "
                   f"in `{root}`.\n")
        for d in dirs:
            section(d, cpu_doc, out)
    print("\n".join(out).rstrip() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
