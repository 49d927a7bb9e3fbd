#!/usr/bin/env python3
"""The assertions of scripts/gpu_check.sh, on tbench result files.

Usage: gpu_check.py CHECK ARGS...   (see each check_* function)

Every check prints one line per assertion, PASS, FAIL, SKIP or INFO, then
the check's name and its figure, and exits 1 when any line is FAIL.
gpu_check.sh appends the lines to its summary.txt.  Standard library only
(the GPU machine's python3 may have nothing else); the PyTorch checks are
in gpu_torch.py.
"""
import json
import math
import os
import sys

FAILED = 0

# Ops whose device work is a library's (cuBLAS, cuSOLVER): the module
# counts one launch per library call, the library may launch several
# kernels, so CUPTI's count is not the module's.
# The einsum ops' GEMMs are cuBLAS calls: on an H200 einsum3 f32
# (17x33, 33x65, 65x9) ran a split-K reduce kernel after each GEMM
# (CUPTI 4 launches, the module 2).
LIBRARY_OPS = {"matmul", "linear", "linear_unfused", "conv2d",
               "conv2d_nobias", "svd", "qr", "eigh",
               "einsum1", "einsum", "einsum3", "einsum4"}
# Ops that are copies, not kernels.
COPY_OPS = {"copy_h2d", "copy_d2h", "copy_d2d"}
# cuda cases of configs/gpu-check.json allowed to be `unsupported`: none
# (every op there has a kernel; an `unsupported` is a table regression).
UNSUPPORTED_OK = set()


def line(kind, name, figure=""):
    global FAILED
    if kind == "FAIL":
        FAILED += 1
    print(f"{kind:4} {name}{': ' + figure if figure else ''}", flush=True)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        line("FAIL", f"results {path}", f"cannot read: {e}")
        return None


def cuda_cases(doc):
    return [c for c in doc["cases"] if c["backend"] == "cuda"]


def pool_of(c):
    return (c.get("backend_params") or {}).get("pool") == "true"


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def find(cases, op, shapes=None, params=None, dtype="f32", pool=False,
         alloc=False, transfers=False):
    """The first case of op with these shapes (list of input shapes),
    a params superset, dtype and form; None if absent."""
    for c in cases:
        if c["op"] != op or c["dtype"] != dtype or pool_of(c) != pool:
            continue
        if bool(c.get("alloc_outputs")) != alloc or \
                bool(c.get("transfers")) != transfers:
            continue
        if shapes is not None and c["shapes"] != shapes:
            continue
        if params and any(c.get("params", {}).get(k) != v
                          for k, v in params.items()):
            continue
        return c
    return None


# ---- statuses --------------------------------------------------------------

def check_cases(path, label):
    """Every cuda case of the run is ok; unsupported, failed-check, error,
    crashed, timeout, unavailable, skipped are failures (each listed)."""
    doc = load(path)
    if doc is None:
        return
    cases = cuda_cases(doc)
    if not cases:
        line("FAIL", f"{label}: cuda cases", "none in the results")
        return
    by = {}
    for c in cases:
        by.setdefault(c["status"], []).append(c)
    counts = ", ".join(f"{k} {len(v)}" for k, v in sorted(by.items()))
    bad = [c for c in cases if c["status"] != "ok" and not
           (c["status"] == "unsupported" and c["id"] in UNSUPPORTED_OK)]
    if by.get("unavailable") and len(by["unavailable"]) == len(cases):
        line("FAIL", f"{label}: cuda unavailable",
             by["unavailable"][0].get("message") or "")
        return
    line("PASS" if not bad else "FAIL", f"{label}: cuda cases ok",
         f"{len(cases) - len(bad)} of {len(cases)} ({counts})")
    for c in bad[:40]:
        line("FAIL", f"{label}: {c['id']}",
             f"{c['status']}: {c.get('message') or ''}")
    if len(bad) > 40:
        line("INFO", f"{label}: {len(bad) - 40} more not ok")


# ---- CUPTI counts ----------------------------------------------------------

def check_counts(path, label, require_all=False):
    """CUPTI's view of one iteration against the module's own counters
    and the fixed expectations of the copy, transfer and alloc forms
    (require_all: each form must be there, as in gpu-check.json)."""
    doc = load(path)
    if doc is None:
        return
    ok_cases = [c for c in cuda_cases(doc) if c["status"] == "ok"]
    if not ok_cases:
        line("FAIL", f"{label}: CUPTI counts", "no ok cuda case")
        return
    missing = [c for c in ok_cases if c.get("cupti") is None]
    line("PASS" if not missing else "FAIL", f"{label}: CUPTI measured",
         f"{len(ok_cases) - len(missing)} of {len(ok_cases)} ok cases"
         + (f"; first without: {missing[0]['id']}: "
            f"{missing[0].get('cupti_reason')}" if missing else ""))
    cases = [c for c in ok_cases if c.get("cupti") is not None]
    # kernel launches: CUPTI = the module's counter (every kernel goes
    # through cu_launch), for every case that calls no library
    n = eq = 0
    worst = []
    for c in cases:
        if c["op"] in LIBRARY_OPS or c["op"] in COPY_OPS:
            continue
        n += 1
        mine = c["counters"]["kernel_launches"]
        got = c["cupti"]["kernel_launches"]
        if abs(mine - got) < 1e-9:
            eq += 1
        else:
            worst.append(f"{c['id']}: CUPTI {got:g}, module {mine:g}")
    line("PASS" if n and eq == n else "FAIL",
         f"{label}: kernel launches, CUPTI = module counter",
         f"{eq} of {n} cases" + (f"; {'; '.join(worst[:5])}" if worst
                                 else ""))
    # device allocations: with cudaMalloc (pool=false) CUPTI's MEMORY2
    # allocations are the module's; with the pool shown
    n = eq = 0
    worst = []
    pool_info = []
    for c in cases:
        mine = c["counters"]["device_allocs"]
        got = c["cupti"]["device_allocs"]
        if pool_of(c):
            if c.get("alloc_outputs"):
                pool_info.append(f"{c['id']}: module {mine:g}, "
                                 f"CUPTI {got:g}")
            continue
        n += 1
        if abs(mine - got) < 1e-9:
            eq += 1
        else:
            worst.append(f"{c['id']}: CUPTI {got:g}, module {mine:g}")
    if n:
        line("PASS" if eq == n else "FAIL",
             f"{label}: device allocs (pool=false), CUPTI = module",
             f"{eq} of {n}" + (f"; {'; '.join(worst[:5])}" if worst else ""))
    for s in pool_info[:4]:
        line("INFO", f"{label}: pool alloc", s)

    def expect(c, what, got, want):
        ok = abs(got - want) < 1e-9
        line("PASS" if ok else "FAIL", f"{label}: {c['id']}: {what}",
             f"{got:g} (want {want:g})")

    seen = set()
    for c in cases:
        cu = c["cupti"]
        op = c["op"]
        copies = sum(d["count"] for d in cu["memcpy"].values())
        if pool_of(c):
            continue
        if op in COPY_OPS and c["dtype"] == "f32" and \
                numel(c["shapes"][0]) == 4097:
            way = op[5:]
            nb = numel(c["shapes"][0]) * 4
            expect(c, "kernel launches", cu["kernel_launches"], 0)
            expect(c, f"{way} memcpys", cu["memcpy"][way]["count"], 1)
            expect(c, f"{way} bytes", cu["memcpy"][way]["bytes"], nb)
            expect(c, "memcpys in all", copies, 1)
            seen.add(op)
        elif op == "add" and c.get("transfers") and c["dtype"] == "f32" \
                and c["shapes"] == [[4097], [4097]]:
            expect(c, "kernel launches", cu["kernel_launches"], 1)
            expect(c, "h2d memcpys", cu["memcpy"]["h2d"]["count"], 2)
            expect(c, "d2h memcpys", cu["memcpy"]["d2h"]["count"], 1)
            seen.add("add@transfers" + ("+alloc" if c.get("alloc_outputs")
                                        else ""))
        elif op == "add" and not c.get("transfers") and \
                c["shapes"] == [[4097], [4097]] and c["dtype"] == "f32":
            expect(c, "kernel launches", cu["kernel_launches"], 1)
            expect(c, "memcpys", copies, 0)
            if c.get("alloc_outputs"):
                expect(c, "device allocs", cu["device_allocs"], 1)
                expect(c, "device frees", cu["device_frees"], 1)
                seen.add("add@alloc")
            else:
                expect(c, "device allocs", cu["device_allocs"], 0)
                seen.add("add")
        elif op == "log_softmax" and c["shapes"] == [[7, 4097]] and \
                c["dtype"] == "f32":
            expect(c, "kernel launches", cu["kernel_launches"], 1)
            seen.add(op)
        elif op == "log_softmax_unfused" and not c.get("transfers") and \
                c["dtype"] == "f32":
            # six steps; sum may take two passes on a big GPU (review
            # WF1): at least 6, and the module's count (checked above)
            ok = cu["kernel_launches"] >= 6
            line("PASS" if ok else "FAIL",
                 f"{label}: {c['id']}: kernel launches >= 6 steps",
                 f"{cu['kernel_launches']:g}: " + ", ".join(
                     f"{k['name'].split('(')[0]} x{k['count']:g}"
                     for k in cu["kernels"]))
            seen.add(op)
        elif op == "zeros" and c["dtype"] == "f32" and \
                c["shapes"] == [[4097]]:
            expect(c, "memsets (zeros is cudaMemsetAsync)", cu["memsets"], 1)
            expect(c, "kernel launches", cu["kernel_launches"], 0)
            seen.add(op)
    if not require_all:
        return
    for want in ("add", "add@alloc", "log_softmax", "log_softmax_unfused",
                 "copy_h2d", "copy_d2h", "copy_d2d", "add@transfers",
                 "zeros"):
        if want not in seen:
            line("FAIL", f"{label}: counts of {want}",
                 "no ok cuda case with CUPTI counts to check")


# ---- dispatch: which kernel ran ------------------------------------------

DISPATCH = [
    # op, input shapes, params, what CUPTI's kernel names must contain
    ("add", [[4097], [4097]], {}, ["k_binary_vec"]),
    ("add", [[7, 1], [1, 513]], {}, ["k_binary_bcast"]),
    ("add_relu", [[4097], [4097]], {}, ["k_add_relu_same"]),
    ("add_relu", [[7, 1], [1, 513]], {}, ["k_add_relu_bcast"]),
    ("relu", [[4097]], {}, ["k_unary_vec"]),
    ("transpose", [[7, 513]], {}, ["k_transpose_tiled"]),
    ("permute", [[2, 3, 5, 7]], {"p0": 1, "p1": 0, "p2": 3, "p3": 2},
     ["k_permute_gather"]),
    ("softmax", [[7, 4097]], {"axis": -1}, ["k_softmax_rows"]),
    ("softmax", [[513, 7]], {"axis": 0}, ["k_softmax_cols"]),
    ("sum", [[7, 4097]], {"axis": -1}, ["k_sum_rows"]),
    ("sum", [[4097, 7]], {"axis": 0}, ["k_sum_cols"]),
    ("max", [[4194304]], {}, ["k_lanes_part", "k_lanes_final"]),
    ("rand_normal", [[4097]], {}, ["k_rand_normal"]),
    ("matmul", [[7, 513], [513, 7]], {}, ["gemm|gemv"]),
]


def check_dispatch(path, label):
    """The kernels CUPTI saw are the ones the module's dispatch should
    pick for a few paths (same shape vs broadcast, tiled vs gather,
    rows vs columns, one vs two stages, cuBLAS)."""
    doc = load(path)
    if doc is None:
        return
    cases = [c for c in cuda_cases(doc) if c["status"] == "ok" and
             c.get("cupti") is not None]
    for op, shapes, params, want in DISPATCH:
        c = find(cases, op, shapes, params)
        name = f"{label}: dispatch {op} {shapes} {params or ''}".rstrip()
        if c is None:
            line("FAIL", name, "no ok case with CUPTI counts")
            continue
        names = [k["name"] for k in c["cupti"]["kernels"]]
        low = " ".join(names).lower()
        ok = all(any(alt.lower() in low for alt in w.split("|"))
                 for w in want)
        line("PASS" if ok else "FAIL", name,
             "; ".join(n.split("(")[0] for n in names) or "no kernel")


# ---- time: host vs events vs CUPTI ---------------------------------------

def check_timing(path, label, big_us=50.0):
    """Per ok cuda case with a device time: the event span per call is
    within the host's (x1.02 + 0.5 us, the events' resolution); the
    CUPTI kernel time per call fits in the event span (x1.05 + 0.5 us);
    and for kernels of 50 us and more without host syncs, the event span
    is within 10% of CUPTI's kernel time.  A host sync: transfers, output
    allocations, a library, an unfused chain, or a device-to-host copy
    CUPTI saw (the index checks of cross_entropy, nll_loss, embedding
    read a flag back).  Launch-bound cases (CUPTI's kernel time per launch
    under 20 us: lbfgs's 15 small kernels) are left out and counted: the
    GPU idles between launches the host issues no faster than it can,
    and that idle time is in the event span by right."""
    doc = load(path)
    if doc is None:
        return
    n = n1 = n2 = n3 = bad1 = bad2 = bad3 = n_lb = 0
    w1, w2, w3 = [], [], []
    for c in cuda_cases(doc):
        if c["status"] != "ok" or not (c.get("timing") or {}).get("device"):
            continue
        if c.get("backend_params", {}).get("l2") == "cold":
            continue
        n += 1
        host = c["stats"]["median_ns"]
        dev = c["timing"]["device"]["median_ns"]
        n1 += 1
        if dev > host * 1.02 + 500:
            bad1 += 1
            w1.append(f"{c['id']}: device {dev:.0f} ns > host {host:.0f}")
        cu = c.get("cupti")
        if not cu or c["op"] in COPY_OPS:
            continue
        k = sum(x["device_ns"] for x in cu["kernels"])
        n2 += 1
        if k > dev * 1.05 + 500:
            bad2 += 1
            w2.append(f"{c['id']}: kernels {k:.0f} ns > device {dev:.0f}")
        d2h = ((cu.get("memcpy") or {}).get("d2h") or {}).get("count", 0)
        sync = c.get("transfers") or c.get("alloc_outputs") or \
            c["op"] in LIBRARY_OPS or c["op"].endswith("_unfused") or \
            d2h > 0
        if dev >= big_us * 1e3 and not sync:
            if k < 20e3 * (cu.get("kernel_launches") or 1):
                n_lb += 1
                continue
            n3 += 1
            if abs(dev - k) > 0.10 * dev:
                bad3 += 1
                w3.append(f"{c['id']}: device {dev:.0f} ns, kernels "
                          f"{k:.0f} ns")
    if not n:
        line("FAIL", f"{label}: device times", "no ok cuda case has one")
        return
    line("PASS" if not bad1 else "FAIL",
         f"{label}: event time <= host time x1.02 + 0.5 us",
         f"{n1 - bad1} of {n1}" + (f"; {'; '.join(w1[:4])}" if w1 else ""))
    line("PASS" if n2 and not bad2 else "FAIL",
         f"{label}: CUPTI kernel time <= event time x1.05 + 0.5 us",
         f"{n2 - bad2} of {n2}" + (f"; {'; '.join(w2[:4])}" if w2 else ""))
    if n3:
        line("PASS" if not bad3 else "FAIL",
             f"{label}: event time within 10% of CUPTI kernel time "
             f"(kernels >= {big_us:g} us, no host syncs)",
             f"{n3 - bad3} of {n3}" + (f" ({n_lb} launch-bound left out)"
                                       if n_lb else "")
             + (f"; {'; '.join(w3[:4])}" if w3 else ""))
    else:
        line("SKIP", f"{label}: event vs CUPTI kernel time within 10%",
             f"no case of {big_us:g} us or more without host syncs")


def check_clocks(path, label):
    """Every ok cuda case has its NVML clock record; throttled cases are
    listed (their figures are low: run them again)."""
    doc = load(path)
    if doc is None:
        return
    cases = [c for c in cuda_cases(doc) if c["status"] == "ok"]
    no = [c for c in cases if not (c.get("gpu_clock") or {}).get(
        "available")]
    thr = [c for c in cases if (c.get("gpu_clock") or {}).get("throttled")]
    line("PASS" if cases and not no else "FAIL",
         f"{label}: NVML clock record",
         f"{len(cases) - len(no)} of {len(cases)}" +
         (f"; first without: {no[0]['id']}: "
          f"{(no[0].get('gpu_clock') or {}).get('reason')}" if no else ""))
    mhz = [c["gpu_clock"]["sm_mhz_max"] for c in cases
           if (c.get("gpu_clock") or {}).get("available")]
    if mhz:
        line("INFO", f"{label}: SM clock while timed",
             f"{min(mhz)}-{max(mhz)} MHz")
    for c in thr[:5]:
        k = c["gpu_clock"]
        line("INFO", f"{label}: throttled {c['id']}",
             f"SM {k['sm_mhz_min']}-{k['sm_mhz_max']} MHz: "
             f"{', '.join(k['throttle_reasons'])}")


def check_roofline(path, label, min_bytes=256 * 2**20):
    """No ok cuda case that moves more than 256 MiB per call (more than
    any GPU's L2, so its data comes from device memory) runs above its
    roofline (fraction <= 1.05): a byte model or a clock that lies shows
    here.  Smaller cases may beat the device-memory roof from the L2."""
    doc = load(path)
    if doc is None:
        return
    n = bad = 0
    w = []
    for c in cuda_cases(doc):
        r = c.get("roofline")
        if c["status"] != "ok" or not r or r.get("fraction") is None:
            continue
        if (c.get("model") or {}).get("bytes", 0) < min_bytes or \
                c.get("transfers") or c["op"] in COPY_OPS:
            continue
        n += 1
        if r["fraction"] > 1.05:
            bad += 1
            w.append(f"{c['id']}: {r['fraction']:.2f} of "
                     f"{r['bandwidth_gb_s']:.0f} GB/s")
    if not n:
        line("SKIP", f"{label}: rooflines", "no case over 256 MiB has one")
        return
    line("PASS" if not bad else "FAIL",
         f"{label}: roofline fraction <= 1.05 (cases over 256 MiB)",
         f"{n - bad} of {n}" + (f"; {'; '.join(w[:4])}" if w else ""))


# ---- peaks -------------------------------------------------------------------

def check_peaks(path):
    """The GPU's measured bandwidth and FMA rates: present, at least half
    the vendor figure (a mis-sized grid or a wrong byte count shows) and
    at most 1.15 x it (a counting bug)."""
    doc = load(path)
    if doc is None:
        return
    g = doc.get("gpu") or {}
    if not g.get("available"):
        line("FAIL", "peaks: GPU", f"unavailable: {g.get('reason')}")
        return
    d = g["device"]
    line("INFO", "peaks: GPU", f"{d['name']} (cc {d['compute_capability']}, "
         f"{d['sm_count']} SMs), arrays "
         f"{(g.get('array_bytes') or 0) / 2**20:.0f} MiB")
    entries = [(e, "GB/s", "gb_s") for e in g["bandwidth"]] + \
              [(e, "GFLOP/s", "gflop_s") for e in g["flops"]]
    for e, unit, key in entries:
        best, ven = e[f"best_{key}"], e[f"vendor_{key}"]
        name = e.get("kernel") or e.get("dtype")
        if ven:
            ok = best and 0.5 * ven <= best <= 1.15 * ven
            fig = (f"best {best:.1f} {unit}, median "
                   f"{e[f'median_{key}'] or 0:.1f}, vendor {ven:.1f} "
                   f"({best / ven:.0%}; want 50%-115%)")
        else:
            ok = bool(best and best > 0)
            fig = f"best {best:.1f} {unit} (no vendor figure)"
        line("PASS" if ok else "FAIL", f"peaks: {name}", fig)
    if len(g["bandwidth"]) != 3 or len(g["flops"]) != 2:
        line("FAIL", "peaks: figures", f"missing: {g.get('reason')}")


# ---- L2 warm and cold ------------------------------------------------------

def check_l2(path, single_path):
    """gpu-l2.json: every case ok; cold cases are one prepared call per
    sample; add on 1M f32 (fits the L2) is slower cold than warm, both as
    one call per sample (single_path: the warm cases run with a sample
    of one call), by at least 10%."""
    doc = load(path)
    one = load(single_path)
    if doc is None or one is None:
        return
    dev = {}
    for d, tag in ((doc, "batched"), (one, "single")):
        for c in d["cases"]:
            if c["status"] != "ok":
                line("FAIL", f"l2 {tag}: {c['id']}",
                     f"{c['status']}: {c.get('message')}")
                continue
            l2 = c["backend_params"].get("l2")
            tm, st = c["timing"], c["stats"]
            if l2 == "cold" and not (tm.get("prepared_samples") and
                                     st["iters_per_sample"] == 1):
                line("FAIL", f"l2: {c['id']}",
                     "cold but not one prepared call per sample")
            if tag == "single" and l2 == "warm" and \
                    st["iters_per_sample"] != 1:
                line("FAIL", f"l2: {c['id']}",
                     f"warm single: {st['iters_per_sample']} calls/sample")
            if tm.get("device"):
                dev[(c["op"], c["shapes"][0][0], l2, tag)] = \
                    tm["device"]["median_ns"]
    for op, n in (("add", 1048576), ("add", 16777216), ("sum", 4194304)):
        w = dev.get((op, n, "warm", "single"))
        k = dev.get((op, n, "cold", "batched"))
        wb = dev.get((op, n, "warm", "batched"))
        if w is None or k is None:
            line("FAIL", f"l2: {op} {n} f32", "no device time warm and cold")
            continue
        fig = (f"device median warm (one call) {w:.0f} ns, cold {k:.0f} ns "
               f"(cold/warm {k / w:.2f}); warm batched "
               f"{wb if wb is None else round(wb)} ns")
        if (op, n) == ("add", 1048576):
            line("PASS" if k >= 1.10 * w else "FAIL",
                 f"l2: {op} 1M f32 (12 MB, in L2) slower cold than warm "
                 f"by >= 10%", fig)
        else:
            line("INFO", f"l2: {op} {n} f32", fig)


# ---- CUPTI detach (review WL1) ------------------------------------------

def check_detach(path_on, path_off):
    """Round medians of launch-bound tbench cases before (round 0) and
    after (rounds 1, 2) the counting pass, CUPTI detached after the pass
    and attached (TBENCH_CUPTI_DETACH=0): shown, not judged.  On the
    first GPU (an H200) the rounds of one case differed by up to 20%
    either way in both modes, more than any CUPTI cost: the judgement is
    cupti_overhead's, which alternates the states within one process."""
    on, off = load(path_on), load(path_off)
    if on is None or off is None:
        return
    for doc, tag in ((on, "detached"), (off, "attached")):
        for c in cuda_cases(doc):
            if c["status"] != "ok":
                line("FAIL", f"cupti {tag}: {c['id']}", c["status"])
                continue
            r = c["stats"]["round_medians_ns"]
            after = sorted(r[1:])[len(r[1:]) // 2] if len(r) > 1 else r[0]
            line("INFO", f"cupti {tag}: {c['id']}",
                 f"round medians {', '.join(f'{x:.0f}' for x in r)} ns; "
                 f"after/before the count pass {after / r[0]:.3f}")


def check_cupti_overhead(path):
    """tests/gpu/cupti_overhead.cu's last line: launches with CUPTI
    detached (cuptiFinalize after a counting pass) within 3% of launches
    before CUPTI was loaded, the fastest block of each state compared
    (the states cannot alternate; interference only adds time); the
    medians' ratio and what the attached state cost, shown."""
    try:
        last = [ln for ln in open(path, encoding="utf-8")
                if ln.startswith("cupti_overhead ")][-1]
    except (OSError, IndexError) as e:
        line("FAIL", "cupti overhead", f"no result in {path}: {e}")
        return
    f = dict(kv.split("=") for kv in last.split()[1:])
    dn, ad = float(f["detached_over_never"]), float(f["attached_over_detached"])
    if "detached_min_over_never_min" not in f:
        line("FAIL", "cupti overhead", f"{path}: no fastest blocks (an "
             "older tests/gpu/cupti_overhead.cu?)")
        return
    mn = float(f["detached_min_over_never_min"])
    line("PASS" if mn <= 1.03 else "FAIL",
         "cupti overhead: launches after cuptiFinalize as fast as before "
         "CUPTI was loaded (fastest blocks, <= 1.03)",
         f"detached {float(f['detached_min_ns']):.0f} ns, never "
         f"{float(f['never_min_ns']):.0f} ns per launch: {mn:.3f} (fastest "
         f"of {f['reps']} blocks of {f['launches']} launches each; the "
         f"medians {float(f['detached_ns']):.0f} and "
         f"{float(f['never_ns']):.0f} ns: {dn:.3f})")
    line("INFO", "cupti overhead: attached (kinds disabled, not finalized) "
         "against detached",
         f"{float(f['attached_ns']):.0f} ns vs "
         f"{float(f['detached_ns']):.0f} ns per launch: {ad:.3f} (paired "
         f"median): what detaching saves each later launch")


# ---- transfers ---------------------------------------------------------------

def check_transfers(path, link_gb_s):
    """Pinned copies of 256 MiB (64M f32) between 50% and 110% of the
    link's rate (nvidia-smi's PCIe generation x width, or what the
    caller measured), and never slower than pageable ones."""
    doc = load(path)
    if doc is None:
        return
    cases = [c for c in cuda_cases(doc) if c["status"] == "ok"]
    for op in ("copy_h2d", "copy_d2h"):
        p = find(cases, op, [[67108864]], {"pinned": True})
        q = find(cases, op, [[67108864]], {"pinned": False})
        if p is None or q is None:
            line("FAIL", f"transfers: {op} 256 MiB", "no ok pinned and "
                 "pageable case")
            continue
        bp = 67108864 * 4 / p["stats"]["median_ns"]
        bq = 67108864 * 4 / q["stats"]["median_ns"]
        line("PASS" if bp >= bq * 0.98 else "FAIL",
             f"transfers: {op} 256 MiB pinned not slower than pageable",
             f"pinned {bp:.1f} GB/s, pageable {bq:.1f} GB/s")
        if link_gb_s:
            ok = 0.5 * link_gb_s <= bp <= 1.1 * link_gb_s
            line("PASS" if ok else "FAIL",
                 f"transfers: {op} pinned within 50-110% of the link",
                 f"{bp:.1f} GB/s of {link_gb_s:.1f} GB/s "
                 f"({bp / link_gb_s:.0%})")
        else:
            line("SKIP", f"transfers: {op} against the link rate",
                 "no link rate (nvidia-smi gave no PCIe generation/width)")


def check_same_outputs(dir_a, dir_b):
    """tbench exec twice on the same case: outputs bitwise equal (the
    reductions use no atomics: the same every run)."""
    names = sorted(os.listdir(dir_a)) if os.path.isdir(dir_a) else []
    if not names:
        line("FAIL", "determinism", f"no exec folders in {dir_a}")
        return
    for name in names:
        a, b = os.path.join(dir_a, name), os.path.join(dir_b, name)
        try:
            ex = json.load(open(os.path.join(a, "exec.json")))
            same = all(open(os.path.join(a, o["file"]), "rb").read() ==
                       open(os.path.join(b, o["file"]), "rb").read()
                       for o in ex["outputs"])
        except (OSError, ValueError, KeyError) as e:
            line("FAIL", f"determinism {name}", f"cannot compare: {e}")
            continue
        line("PASS" if same else "FAIL",
             f"determinism {ex['id']}", "outputs bitwise equal in two "
             "runs" if same else "outputs differ between two runs")


def check_big(path):
    """One case of more than 2^31 elements: ok (checked against the
    reference, so every element past index 2^31 was right)."""
    doc = load(path)
    if doc is None:
        return
    for c in doc["cases"]:
        n = max(numel(s) for s in c["shapes"])
        ok = c["status"] == "ok" and n > 2**31
        fig = f"{n} elements: {c['status']}"
        if c["status"] == "ok":
            fig += (f", max rel err {c['check']['max_rel_err']:.2e}, "
                    f"median {c['stats']['median_ns'] / 1e6:.2f} ms")
        else:
            fig += f": {c.get('message')}"
        line("PASS" if ok else "FAIL", f"64-bit indices: {c['id']}", fig)


def smi_fields(path):
    """The first GPU's facts in `nvidia-smi -q`'s text."""
    out, section, sub = {}, None, None
    for ln in open(path, encoding="utf-8", errors="replace"):
        if not ln.strip():
            continue
        indent = len(ln) - len(ln.lstrip())
        key, sep, val = ln.strip().partition(":")
        key, val = key.strip(), val.strip()
        if indent == 0:
            section = None
        if not sep or (not val and indent <= 8):
            if indent == 4:
                section, sub = key, None
            elif indent == 8:
                sub = key
            continue
        if key in ("Driver Version", "CUDA Version") and indent == 0:
            out[key] = val
        elif indent == 4 and key in ("Product Name", "GPU UUID",
                                     "Persistence Mode") and key not in out:
            out[key] = val
        elif section == "FB Memory Usage" and key == "Total":
            out.setdefault("FB Total", val)
        elif section == "Max Clocks" and key in ("SM", "Memory"):
            out.setdefault(f"Max {key}", val)
    return out


def check_env(results, smi):
    """The run's env.gpu (NVML through tbench) against `nvidia-smi -q`
    on the same machine: name, UUID, driver and CUDA versions, memory,
    maximum clocks, persistence (review's missing check 12)."""
    doc = load(results)
    if doc is None:
        return
    try:
        f = smi_fields(smi)
    except OSError as e:
        line("FAIL", "env vs nvidia-smi", f"cannot read {smi}: {e}")
        return
    g = (doc.get("env") or {}).get("gpu") or {}
    if not g.get("available") or not g.get("devices"):
        line("FAIL", "env vs nvidia-smi", f"env.gpu unavailable: "
             f"{g.get('reason')}")
        return
    d = g["devices"][0]
    mib = d["memory_total_bytes"] / 2**20
    pairs = [
        ("name", d["name"], f.get("Product Name")),
        ("uuid", d["uuid"], f.get("GPU UUID")),
        ("driver", g["driver_version"], f.get("Driver Version")),
        ("CUDA driver version", g["cuda_driver_version"],
         f.get("CUDA Version")),
        ("memory (MiB)", f"{mib:.0f}",
         (f.get("FB Total") or "").replace(" MiB", "")),
        ("max SM clock (MHz)", str(d["clocks_mhz"]["sm_max"]),
         (f.get("Max SM") or "").replace(" MHz", "")),
        ("max memory clock (MHz)", str(d["clocks_mhz"]["mem_max"]),
         (f.get("Max Memory") or "").replace(" MHz", "")),
        ("persistence", "Enabled" if d["persistence"] else "Disabled",
         f.get("Persistence Mode")),
    ]
    for what, mine, theirs in pairs:
        ok = theirs is not None and str(mine) == str(theirs)
        line("PASS" if ok else "FAIL", f"env vs nvidia-smi: {what}",
             f"tbench {mine}, nvidia-smi {theirs}")


def extract_debs(debdir, root):
    """Unpack every .deb of debdir under root as `dpkg -x` would (a .deb
    is an ar archive whose data.tar.* holds the files), without dpkg,
    and point the pkg-config files' paths at root: Debian's hard-code
    prefix, libdir and includedir under /usr."""
    import tarfile
    import io
    debs = sorted(f for f in os.listdir(debdir) if f.endswith(".deb"))
    if not debs:
        print(f"no .deb files in {debdir}", file=sys.stderr)
        return 1
    for name in debs:
        with open(os.path.join(debdir, name), "rb") as f:
            blob = f.read()
        if blob[:8] != b"!<arch>\n":
            print(f"{name}: not an ar archive", file=sys.stderr)
            return 1
        at, data = 8, None
        while at + 60 <= len(blob):
            hdr = blob[at:at + 60]
            member = hdr[:16].decode().strip().rstrip("/")
            size = int(hdr[48:58].decode().strip())
            if member.startswith("data.tar"):
                data = blob[at + 60:at + 60 + size]
                break
            at += 60 + size + (size & 1)
        if data is None:
            print(f"{name}: no data.tar member", file=sys.stderr)
            return 1
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            t.extractall(root, filter="tar") if hasattr(tarfile, "data_filter") \
                else t.extractall(root)
        print(f"unpacked {name}")
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".pc"):
                continue
            path = os.path.join(dirpath, f)
            lines = open(path, encoding="utf-8").read().splitlines()
            out = []
            for ln in lines:
                k, sep, v = ln.partition("=")
                if sep and k.strip() in ("prefix", "exec_prefix", "libdir",
                                         "includedir") and \
                        v.startswith("/usr"):
                    ln = f"{k}={root}{v}"
                out.append(ln)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(out) + "\n")
    return 0


def main(argv):
    checks = {
        "cases": lambda a: check_cases(a[0], a[1]),
        "counts": lambda a: check_counts(a[0], a[1], len(a) > 2 and
                                         a[2] == "--require-all"),
        "dispatch": lambda a: check_dispatch(a[0], a[1]),
        "timing": lambda a: check_timing(a[0], a[1]),
        "clocks": lambda a: check_clocks(a[0], a[1]),
        "roofline": lambda a: check_roofline(a[0], a[1]),
        "peaks": lambda a: check_peaks(a[0]),
        "l2": lambda a: check_l2(a[0], a[1]),
        "detach": lambda a: check_detach(a[0], a[1]),
        "cupti-overhead": lambda a: check_cupti_overhead(a[0]),
        "transfers": lambda a: check_transfers(
            a[0], float(a[1]) if len(a) > 1 and a[1] else 0.0),
        "same": lambda a: check_same_outputs(a[0], a[1]),
        "big": lambda a: check_big(a[0]),
        "env": lambda a: check_env(a[0], a[1]),
    }
    if len(argv) == 4 and argv[1] == "extract-debs":
        return extract_debs(argv[2], os.path.abspath(argv[3]))
    if len(argv) < 2 or argv[1] not in checks:
        print(f"usage: {argv[0]} {{{','.join(checks)}}} ARGS...",
              file=sys.stderr)
        return 2
    try:
        checks[argv[1]](argv[2:])
    except (KeyError, TypeError, IndexError, ZeroDivisionError) as e:
        line("FAIL", f"{argv[1]} {' '.join(argv[2:])}",
             f"results not as expected: {type(e).__name__}: {e}")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
