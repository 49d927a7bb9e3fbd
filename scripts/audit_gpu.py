"""The audit of the GPU results, against the files of each device folder
that scripts/gpu_check.sh wrote (scripts/audit_report.py)."""
import json
import math
import os
import re

from audit_core import (load_json, method_texts, quantity, row_name, rows_of,
                        texts_starting)


# ---- GPU results ------------------------------------------------------------

def us_cell(a, w, what, cell, ns):
    if ns is None:
        return a.word(w, what, cell, "-")
    a.fig(w, what, cell.replace("µs", "us"), ns, "time")


def gpu_ok(doc, backend="cuda"):
    return [c for c in (doc or {}).get("cases", [])
            if c["status"] == "ok" and c["backend"] == backend]


def dev_ns(c):
    return ((c.get("timing") or {}).get("device") or {}).get("median_ns")


def gpu_case_name(c):
    p = c["id"].split("/")
    return f"{p[0]} {p[1]}"


class GpuDir:
    """One device folder of GPU results."""

    def __init__(self, path):
        self.path = path
        self.json = {}

    def load(self, name):
        if name not in self.json:
            p = os.path.join(self.path, name)
            self.json[name] = load_json(p) if os.path.exists(p) else None
        return self.json[name]

    def summary(self, mode):
        p = os.path.join(self.path, f"{mode}-summary.txt")
        if not os.path.exists(p):
            return None
        with open(p, encoding="utf-8") as f:
            return f.read().splitlines()


def gpu_checks(a, sec, g):
    for t in sec.tables:
        for ln, row, (run, ps, fl, sk, tm) in rows_of(
                t, "run", "passed", "failed", "skipped", "time"):
            w = row_name(sec, ln, row, 1)
            lines = g.summary(run.split("--")[-1].rstrip("`")) or []
            for what, cell, pre in (("passed", ps, "PASS"),
                                    ("failed", fl, "FAIL"),
                                    ("skipped", sk, "SKIP")):
                a.fig(w, what, cell, sum(x.startswith(pre) for x in lines))
            tot = [x for x in lines if x.startswith("TOTAL ")]
            m = re.search(r"(\d+) passed, (\d+) failed, (\d+) s$",
                          tot[-1] if tot else "")
            a.fig(w, "time", tm.replace(" s", ""),
                  int(m.group(3)) if m else None)
            # the run's own tally agrees with its PASS and FAIL lines
            a.fig(w, "passed (its TOTAL line)", ps,
                  int(m.group(1)) if m else None)
            a.fig(w, "failed (its TOTAL line)", fl,
                  int(m.group(2)) if m else None)
    first = g.summary("first") or []
    for t in sec.texts:
        if t.kind != "bullet":
            continue
        t.done = True
        w = f"{sec.path}, line {t.line}"
        m = re.fullmatch(r"PyTorch as the oracle: (\d+) ops within their "
                         r"tolerance of PyTorch's float64 result on the GPU, "
                         r"(\d+) off \(`first-summary.txt` lists each\)",
                         t.text)
        if m:
            a.fig(w, "ops within tolerance", m.group(1),
                  sum(x.startswith("PASS torch ") for x in first))
            a.fig(w, "ops off", m.group(2),
                  sum(x.startswith("FAIL torch ") for x in first))
            continue
        a.word(w, "summary line", t.text, t.text if any(
            x in (t.text, "PASS " + t.text, "INFO " + t.text)
            for x in first) else "a line of first-summary.txt")


def gpu_readme(a, sec, g):
    p = os.path.join(g.path, "README.md")
    if not os.path.exists(p):
        return
    with open(p, encoding="utf-8") as f:
        body = f.read().split("\n", 1)[1].split("\n| file |")[0]
    text = " ".join(x.strip() for x in body.split("\n") if x.strip())
    first = g.summary("first") or []
    for t in sec.texts:
        if " Files: [" not in t.text:
            continue
        t.done = True
        w = f"{sec.path}, line {t.line}"
        a.word(w, "README text", t.text.split(" Files: [")[0], text)
        rel = os.path.relpath(g.path, a.root)
        a.word(w, "files", t.text.split(" Files: ")[1],
               f"[{rel}]({os.path.relpath(rel, 'docs')}/README.md).")
        m = re.search(r"\*\*(\d+) passed, (\d+) failed, (\d+) s\.\*\*",
                      t.text)
        if m:
            tot = [x for x in first if x.startswith("TOTAL ")]
            want = re.search(r"(\d+) passed, (\d+) failed, (\d+) s",
                             tot[-1] if tot else "")
            for i, what in enumerate(("passed", "failed", "time"), 1):
                a.fig(w, what, m.group(i),
                      int(want.group(i)) if want else None)


def gpu_peaks(a, sec, g):
    pk = (g.load("peaks.json") or {}).get("gpu") or {}
    dv = pk.get("device") or {}
    for t in sec.texts:
        if ", compute capability " not in t.text:
            continue
        t.done = True
        a.word(f"{sec.path}, line {t.line}", "device", t.text.split(";")[0],
               f"{dv.get('name')}, compute capability "
               f"{dv.get('compute_capability')}, {dv.get('sm_count')} SMs")
    rows = {e["kernel"]: (e["best_gb_s"], e["median_gb_s"], e["vendor_gb_s"])
            for e in pk.get("bandwidth") or []}
    rows.update({f"FMA {e['dtype']}": (e["best_gflop_s"], e["median_gflop_s"],
                                       e["vendor_gflop_s"])
                 for e in pk.get("flops") or []})
    for t in sec.tables:
        for ln, row, (name, best, med, ven, ratio) in rows_of(
                t, "peak", "best", "median", "vendor", "best / vendor"):
            w = row_name(sec, ln, row, 1)
            e = rows.get(name)
            if not e:
                a.word(w, "peak", name, "a peak of peaks.json")
                continue
            for what, cell, v in (("best", best, e[0]), ("median", med, e[1]),
                                  ("vendor", ven, e[2])):
                a.fig(w, what, cell.split(" ")[0], v)
            a.fig(w, "best / vendor", ratio, e[0] / e[2], "pct")


def gpu_torch(a, sec, g):
    tt = (g.load("torch-times.json") or {}).get("rows") or []
    dev = {c["id"]: dev_ns(c) for c in gpu_ok(g.load("gpu.json"))}
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)),
              len(tt))
        for i, ((ln, row), r) in enumerate(zip(t.rows, tt)):
            t.done.add(i)
            w = row_name(sec, ln, row, 1)
            a.word(w, "case", row[0], gpu_case_name(r))
            tb = dev.get(r["id"]) or r["tbench_device_ns"] or \
                r["tbench_host_ns"]
            us_cell(a, w, "tbench", row[1], tb)
            us_cell(a, w, "PyTorch", row[2], r["torch_device_ns"])
            a.fig(w, "tbench / PyTorch", row[3], tb / r["torch_device_ns"])
    for t in texts_starting(sec, "The cases of [configs/gpu.json]"):
        t.done = True
        m = re.search(r"run through PyTorch (\S+) on the same GPU", t.text)
        a.word(f"{sec.path}, line {t.line}", "PyTorch version",
               m.group(1) if m else t.text,
               tt[0].get("torch_version") if tt else None)


def gpu_vs_cpu(a, sec, g):
    def key(c):
        return (c["op"], json.dumps(c["shapes"]), json.dumps(c.get("params")),
                c["dtype"], bool(c.get("transfers")))
    cpu = {}
    for c in a.data.main.get("cases", []):
        if c["status"] == "ok" and c["backend"] in ("cpu", "blas"):
            k = key(c) + (c["backend"],)
            cpu[k] = min(cpu.get(k, math.inf), c["stats"]["median_ns"])
    cuda = {gpu_case_name(c): c for c in gpu_ok(g.load("gpu.json"))
            if key(c) + ("cpu",) in cpu or key(c) + ("blas",) in cpu}
    model = ((a.data.main.get("env") or {}).get("cpu") or {}).get("model")
    for t in texts_starting(sec, "The cases this report's run shares"):
        t.done = True
        m = re.search(r"this report's machine's \(([^)]*)\)", t.text)
        a.word(f"{sec.path}, line {t.line}", "CPU", m.group(1) if m else
               "(none)", model)
    for t in sec.tables:
        a.fig(f"{sec.path}, line {t.line}", "rows", str(len(t.rows)),
              len(cuda))
        for ln, row, (name, cp, bl, host, dv, ratio) in rows_of(
                t, *t.header):
            w = row_name(sec, ln, row, 1)
            c = cuda.get(name)
            if c is None:
                a.word(w, "case", name, "a cuda case this run shares")
                continue
            tc, tbl = cpu.get(key(c) + ("cpu",)), cpu.get(key(c) + ("blas",))
            us_cell(a, w, "cpu", cp, tc)
            us_cell(a, w, "blas", bl, tbl)
            us_cell(a, w, "cuda (host)", host, c["stats"]["median_ns"])
            us_cell(a, w, "cuda (device)", dv, dev_ns(c))
            a.fig(w, "best CPU side / cuda host", ratio,
                  min(x for x in (tc, tbl) if x) / c["stats"]["median_ns"],
                  "x")


def gpu_fusion(a, sec, g):
    by = {(c["op"], gpu_case_name(c).split(" ")[1], bool(c.get("transfers"))):
          c for c in gpu_ok(g.load("gpu.json"))}
    pooled = {gpu_case_name(c).split(" ")[1]: c
              for c in gpu_ok(g.load("alloc.json"))
              if c["op"] == "log_softmax_unfused" and
              c["backend_params"].get("pool") == "true"}
    for t in sec.tables:
        for ln, row, cl in rows_of(t, *t.header):
            w = row_name(sec, ln, row, 1)
            op, _, shp = cl[0].partition(" ")
            f, u = by.get((op, shp, False)), \
                by.get((op + "_unfused", shp, False))
            if not (f and u and f.get("cupti") and u.get("cupti")):
                a.word(w, "case", cl[0], "a fused case with CUPTI counts")
                continue
            fl, ft = cl[1].split(", ")
            a.fig(w, "fused launches", fl, f["cupti"]["kernel_launches"])
            us_cell(a, w, "fused time", ft, f["stats"]["median_ns"])
            ul, ua, ut = cl[2].split(", ")
            a.fig(w, "unfused launches", ul, u["cupti"]["kernel_launches"])
            a.fig(w, "unfused allocations", ua, u["cupti"]["device_allocs"])
            us_cell(a, w, "unfused time", ut, u["stats"]["median_ns"])
            q = pooled.get(shp)
            us_cell(a, w, "unfused, pool", cl[3],
                    q["stats"]["median_ns"] if q else None)
            if q:
                a.fig(w, "pool / fused", cl[4], q["stats"]["median_ns"] /
                      f["stats"]["median_ns"], "x")
            else:
                a.word(w, "pool / fused", cl[4], "-")


def gpu_transfers(a, sec, g):
    cs = gpu_ok(g.load("gpu.json"))
    by = {(c["op"], gpu_case_name(c).split(" ")[1], bool(c.get("transfers"))):
          c for c in cs}
    for t in sec.tables:
        if "with transfers" in t.header:
            for ln, row, cl in rows_of(t, *t.header):
                w = row_name(sec, ln, row, 1)
                op, _, shp = cl[0].partition(" ")
                r, c = by.get((op, shp, False)), by.get((op, shp, True))
                if not (r and c):
                    a.word(w, "case", cl[0], "a resident and @transfers pair")
                    continue
                x, y = r["stats"]["median_ns"], c["stats"]["median_ns"]
                us_cell(a, w, "resident", cl[1], x)
                us_cell(a, w, "with transfers", cl[2], y)
                a.fig(w, "share in copies", cl[3], 1 - x / y, "pct")
        elif "GB/s" in t.header:
            for ln, row, cl in rows_of(t, *t.header):
                w = row_name(sec, ln, row, 3)
                n = quantity(cl[1], "bytes")[0] / 4
                kind = {"pinned": True, "pageable": False}.get(cl[2])
                c = next((c for c in cs if c["op"] == cl[0] and
                          c["shapes"][0][0] == n and
                          (kind is None or bool((c.get("params") or {}).get(
                              "pinned")) == kind)), None)
                if c is None:
                    a.word(w, "copy", " | ".join(cl[:3]), "a copy case")
                    continue
                us_cell(a, w, "time", cl[3], c["stats"]["median_ns"])
                a.fig(w, "GB/s", cl[4], n * 4 / c["stats"]["median_ns"])


def gpu_pool(a, sec, g):
    adds = {(gpu_case_name(c).split(" ")[1], c["backend_params"].get(
        "pool")): c for c in gpu_ok(g.load("alloc.json"))
        if c["op"] == "add" and c.get("alloc_outputs") and
        not c.get("transfers")}
    for t in sec.tables:
        for ln, row, cl in rows_of(t, *t.header):
            w = row_name(sec, ln, row, 1)
            shp = cl[0].partition(" ")[2]
            f, p = adds.get((shp, "false")), adds.get((shp, "true"))
            if not (f and p):
                a.word(w, "case", cl[0], "add with pool=false and true")
                continue
            us_cell(a, w, "cudaMalloc", cl[1], f["stats"]["median_ns"])
            us_cell(a, w, "pool", cl[2], p["stats"]["median_ns"])
            x, _, y = cl[3].partition(" / ")
            a.fig(w, "allocations (cudaMalloc)", x,
                  f["cupti"]["device_allocs"])
            a.fig(w, "allocations (pool)", y, p["cupti"]["device_allocs"])


def gpu_l2(a, sec, g):
    t2 = {}
    for name, tag in (("l2.json", "batch"), ("l2-single.json", "one")):
        for c in gpu_ok(g.load(name)):
            t2[(c["op"], c["shapes"][0][0], c["backend_params"]["l2"],
                tag)] = dev_ns(c)
    for t in sec.tables:
        for ln, row, cl in rows_of(t, *t.header):
            w = row_name(sec, ln, row, 1)
            op, n, dt = cl[0].split(" ")
            a.word(w, "dtype", dt, "f32")
            k = (op, int(n))
            one, cold = t2.get(k + ("warm", "one")), t2.get(k + ("cold",
                                                                 "batch"))
            us_cell(a, w, "warm, batched", cl[1], t2.get(k + ("warm",
                                                              "batch")))
            us_cell(a, w, "warm, one call", cl[2], one)
            us_cell(a, w, "cold, one call", cl[3], cold)
            a.fig(w, "cold / warm one call", cl[4],
                  cold / one if cold and one else None)


def gpu_cupti(a, sec, g):
    p = os.path.join(g.path, "cupti_overhead.log")
    if not os.path.exists(p):
        return
    with open(p, encoding="utf-8") as f:
        last = [x for x in f if x.startswith("cupti_overhead ")][-1]
    v = dict(kv.split("=") for kv in last.split()[1:])
    for t in texts_starting(sec, "An empty kernel launched back to back"):
        t.done = True
        w = f"{sec.path}, line {t.line}"
        m = re.search(r"(\d+) alternations of (\d+) launches\): (\S+) ns per "
                      r"launch before.*?, (\S+) ns with CUPTI attached.*?, "
                      r"(\S+) ns after `cuptiFinalize`: attached costs "
                      r"(\S+%) per launch", t.text)
        if not m:
            a.word(w, "CUPTI's cost", t.text, "the log's figures")
            continue
        for i, k in enumerate(("reps", "launches", "never_ns", "attached_ns",
                               "detached_ns"), 1):
            a.fig(w, k, m.group(i), float(v[k]))
        a.fig(w, "attached over detached", m.group(6),
              float(v["attached_over_detached"]) - 1, "pct")


GPU_PARTS = {
    "Checks": gpu_checks, "Peaks": gpu_peaks,
    "tbench's CUDA kernels against PyTorch CUDA": gpu_torch,
    "CPU vs OpenBLAS vs CUDA": gpu_vs_cpu,
    "Launches and fusion": gpu_fusion,
    "Data resident on the GPU vs starting on the host": gpu_transfers,
    "Allocating every call: cudaMalloc vs the stream-ordered pool": gpu_pool,
    "L2 warm and cold": gpu_l2,
    "CUPTI's cost after its counting pass": gpu_cupti,
}


def check_gpu(a, sec):
    """The GPU sections: the folder the top paragraph names, one
    subsection per device folder, each part from that folder's files."""
    if sec.level == 2:
        for t in texts_starting(sec, "Measured by `scripts/gpu_check.sh`"):
            t.done = True
            m = re.search(r"the files are in `([^`]+)`", t.text)
            a.gpu_root = m.group(1) if m else None
            a.word(f"{sec.path}, line {t.line}", "GPU folder",
                   a.gpu_root or t.text, a.gpu_root if a.gpu_root and
                   os.path.isdir(os.path.join(a.root, a.gpu_root)) else
                   "an existing folder")
        return
    dev = sec.path.split(" / ")[1]
    g = GpuDir(os.path.join(a.root, a.gpu_root or "", dev.replace(" ", "-")))
    if sec.level == 3:
        return gpu_readme(a, sec, g)
    part = GPU_PARTS.get(sec.title)
    if part:
        method_texts(a, sec, "CUPTI's kernel launches per call",
                     "Host time per call: resident", "`add` allocating",
                     "Device time per call: warm")
        part(a, sec, g)
