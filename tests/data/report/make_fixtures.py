#!/usr/bin/python3
"""Writes the result-file fixtures of the plot/report tests.

Run from the repository root:  /usr/bin/python3 tests/data/report/make_fixtures.py

The files are synthetic but schema-valid (docs/results.schema.json) and
fully deterministic, with the situations the tests look for:

  mixed.json     the run reported: ok cases on cpu[threads=1] and
                 cpu[threads=2] (a crossover on add), a scaling anomaly
                 (relu, 100000 -> 1000000 elements, with page faults),
                 add_relu with its unfused parts, matmul with roofline
                 fractions and measured peaks, a failed-check case, an
                 unsupported case and an unavailable backend (cuda)
  baseline.json  an earlier run of the same matrix: one case 10% faster
                 (so mixed regressed), one 20% slower (improved), one 3%
                 faster (past the 2% threshold with the two CIs apart,
                 but not significant on the 11 raw samples: unchanged for
                 `tbench compare`, so for the report too), the failed
                 case still ok there, one case removed since
  numpy.json     a compare_numpy.py-style file: numpy cases for the add
                 and matmul keys, torch unavailable
  single.json    one ok case and nothing else
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def lcg(seed):
    x = seed
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        yield (x >> 11) / 2**53


def samples_around(med, n, spread, seed):
    """n samples whose median is exactly med (odd n)."""
    g = lcg(seed)
    half = [med * (1 + spread * next(g)) for _ in range(n // 2)]
    low = [med * (1 - spread * next(g) * 0.5) for _ in range(n // 2)]
    return [round(v, 3) for v in low + [med] + half]


def quantile(s, q):
    s = sorted(s)
    h = (len(s) - 1) * q
    i = int(h)
    return s[i] if i + 1 >= len(s) else s[i] + (s[i + 1] - s[i]) * (h - i)


ENV = {
    "cpu": {"model": "Fixture CPU 9000", "vendor": "GenuineFixture",
            "isa": ["sse4_2", "avx", "avx2", "fma"], "logical_cpus": 2,
            "physical_cores": 2, "mhz": 2600.0,
            "caches": [
                {"level": 1, "type": "Data", "size_bytes": 49152,
                 "shared_cpus": "0"},
                {"level": 2, "type": "Unified", "size_bytes": 1048576,
                 "shared_cpus": "0"},
                {"level": 3, "type": "Unified", "size_bytes": 33554432,
                 "shared_cpus": "0-1"}],
            "governor": None},
    "memory": {"total_bytes": 8589934592, "available_bytes": 6442450944},
    "os": {"name": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0",
           "machine": "x86_64"},
    "hostname": "fixture",
    "date": "2025-01-02T03:04:05Z",
    "loadavg": [0.25, 0.5, 0.75],
    "build": {"tbench_version": "0.1.0", "git_commit": "0123456789ab",
              "compiler": "gcc 12.2.0", "compiler_version_string": "12.2.0",
              "c_args": "", "build_type": "release", "optimization": "3",
              "sanitize": "none", "debug": False, "openblas": True,
              "cuda_module": False},
    "libraries": {"cjson": "1.7.15", "libcsv": "3.0.3", "libc": "2.36"},
    "clock": {"source": "CLOCK_MONOTONIC", "resolution_ns": 1},
    "warnings": ["The CPU reports the 'hypervisor' flag, so this is a "
                 "virtual machine: timings include virtualization noise."],
}

PEAKS = {
    "schema": "tbench.peaks/1",
    "key": {"cpu_model": "Fixture CPU 9000", "logical_cpus": 2,
            "tbench_version": "0.1.0"},
    "date": "2025-01-02T03:00:00Z", "quick": True, "repetitions": 3,
    "min_rep_time_s": 0.005, "threads": [1, 2],
    "levels": [
        {"name": "L2", "capacity_bytes": 1048576, "per_thread": True,
         "working_set_bytes": 524288},
        {"name": "DRAM", "capacity_bytes": None, "per_thread": False,
         "working_set_bytes": 268435456}],
    "bandwidth_isa": "avx2",
    "bandwidth": [],
    "flops": [],
    "pinned": True, "notes": [], "duration_s": 1.5,
}
for lvl, bw1 in (("L2", 120.0), ("DRAM", 20.0)):
    for t in (1, 2):
        for k in ("copy", "add", "read"):
            best = bw1 * t * (1.2 if k == "read" else 1.0)
            PEAKS["bandwidth"].append({
                "kernel": k, "level": lvl, "threads": t,
                "working_set_bytes": 524288 if lvl == "L2" else 268435456,
                "best_gb_s": best, "median_gb_s": best * 0.97,
                "worst_gb_s": best * 0.9, "spread": 0.1})
for t in (1, 2):
    for isa, g in (("scalar", 10.0), ("avx2", 80.0)):
        PEAKS["flops"].append({
            "isa": isa, "dtype": "f32", "threads": t, "accumulators": 12,
            "best_gflop_s": g * t, "median_gflop_s": g * t * 0.98,
            "worst_gflop_s": g * t * 0.95, "spread": 0.05})

CONFIG_TEXT = "// fixture matrix (synthetic)\n{\"name\": \"fixture\"}\n"


def config():
    return [{"path": "configs/fixture.json", "name": "fixture", "seed": 42,
             "warmup": {"min_time_s": 0.02, "min_iters": 2},
             "measure": {"sample_time_s": 0.001, "min_samples": 10,
                         "max_samples": 1000, "ci_target": 0.03,
                         "max_time_s": 0.5},
             "text": CONFIG_TEXT}]


def dims(s):
    return "x".join(str(d) for d in s)


def numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def case(op, cat, shapes, out, backend, bp, median, *, params=None,
         pstr="", flops=None, status="ok", message=None, faults=0.0,
         roofline=None, seed=1, dtype="f32", launches=1, allocs=0,
         alloc_bytes=0):
    size = 4 if dtype == "f32" else 8
    items = max([numel(s) for s in shapes] + [numel(out)])
    nbytes = (sum(numel(s) for s in shapes) + numel(out)) * size
    fl = numel(out) if flops is None else flops
    axes = ",".join(f"{k}={v}" for k, v in bp.items())
    cid = f"{op}{pstr}/{','.join(dims(s) for s in shapes)}/{dtype}/" \
          f"{backend}[{axes}]"
    c = {"id": cid, "op": op, "category": cat, "dtype": dtype,
         "shapes": shapes, "out_shapes": [out], "params": params or {},
         "backend": backend, "backend_params": bp,
         "impl": None, "status": status, "message": message,
         "model": {"flops": fl, "bytes": nbytes, "items": items,
                   "reduce_len": 1},
         "check": None, "stats": None, "throughput": None,
         "counters": None, "timing": None}
    if status == "failed-check":
        c["impl"] = f"{op}_{dtype}_c"
        c["check"] = {"passed": False, "max_abs_err": 0.5,
                      "max_rel_err": 0.01, "rtol": 1e-5, "atol": 2e-6,
                      "n_bad": 3, "method": "full"}
    if status != "ok":
        return c
    c["impl"] = f"{op}_{dtype}_c"
    c["check"] = {"passed": True, "max_abs_err": 1e-7, "max_rel_err": 1e-7,
                  "rtol": 1e-6, "atol": 1e-7, "n_bad": 0,
                  "method": "full"}
    s = samples_around(median, 11, 0.04 + 0.01 * (seed % 5), seed)
    med = quantile(s, 0.5)
    lo, hi = quantile(s, 0.3), quantile(s, 0.7)
    dev = sorted(abs(v - med) for v in s)
    mean = sum(s) / len(s)
    c["stats"] = {
        "n": len(s), "iters_per_sample": 10, "min_ns": min(s),
        "max_ns": max(s), "median_ns": med, "mean_ns": round(mean, 3),
        "stddev_ns": round((sum((v - mean) ** 2 for v in s) /
                            (len(s) - 1)) ** 0.5, 3),
        "mad_ns": dev[len(dev) // 2],
        "p5_ns": round(quantile(s, 0.05), 3),
        "p95_ns": round(quantile(s, 0.95), 3),
        "ci_low_ns": lo, "ci_high_ns": hi,
        "ci_rel": round((hi - lo) / med, 6),
        "outliers": {"low_mild": 0, "low_severe": 0, "high_mild": 1,
                     "high_severe": 0},
        "stop_reason": "ci_target", "samples_ns": s}
    c["throughput"] = {"gb_s": nbytes / med,
                       "gflop_s": fl / med if fl else None,
                       "items_s": items / med * 1e9}
    c["counters"] = {
        "kernel_launches": launches, "memcpy_count": 0, "memcpy_bytes": 0,
        "allocs": allocs, "alloc_bytes": alloc_bytes, "device_allocs": 0,
        "device_alloc_bytes": 0, "peak_bytes": nbytes,
        "peak_extra_bytes": alloc_bytes, "minor_faults": faults,
        "major_faults": 0, "vol_ctx_switches": 0,
        "invol_ctx_switches": 0.001}
    c["timing"] = {"timer_overhead_ns": 20, "warmup_iters": 100,
                   "warmup_ns": 20000000, "sampling_ns": 50000000}
    if roofline is not None:
        c["roofline"] = roofline
    return c


def roof(frac, threads, median):
    """A compute-bound roofline whose attainable time is frac x median."""
    return {"level": "L2", "threads": threads, "bw_kernel": "add",
            "bandwidth_gb_s": 120.0 * threads, "isa": "avx2",
            "peak_gflop_s": 80.0 * threads,
            "attainable_gflop_s": 80.0 * threads,
            "attainable_gb_s": 120.0 * threads, "bound": "compute",
            "min_time_ns": frac * median, "fraction": frac}


def mixed_cases(scale=None):
    """The cases of the fixture run; scale maps an id to a factor applied
    to its median (for the baseline)."""
    t1, t2 = {"threads": "1"}, {"threads": "2"}
    out = []
    seed = 1
    for n, m1, m2 in ((1000, 150.0, 900.0), (100000, 12000.0, 9000.0),
                      (1000000, 150000.0, 90000.0)):
        for bp, m in ((t1, m1), (t2, m2)):
            out.append(case("add", "elementwise", [[n], [n]], [n], "cpu", bp,
                            m, seed=seed))
            seed += 1
    for n, m, f in ((1000, 100.0, 0.0), (100000, 8000.0, 0.0),
                    (1000000, 400000.0, 0.5)):
        out.append(case("relu", "activation", [[n]], [n], "cpu", t1, m,
                        faults=f, seed=seed))
        seed += 1
    out.append(case("add_relu", "fused", [[100000], [100000]], [100000],
                    "cpu", t1, 13000.0, flops=200000, seed=seed))
    seed += 1
    for n, m1, m2 in ((64, 20000.0, 12000.0), (256, 1000000.0, 600000.0)):
        for bp, m, fr in ((t1, m1, 0.33), (t2, m2, 0.27)):
            fl = 2 * n * n * n
            out.append(case("matmul", "matmul", [[n, n], [n, n]], [n, n],
                            "cpu", bp, m, flops=fl,
                            roofline=roof(fr, int(bp["threads"]), m),
                            seed=seed))
            seed += 1
    out.append(case("sum", "reduction", [[1000000]], [], "cpu", t1, 0,
                    params={"keepdim": False}, pstr="[keepdim=0]",
                    dtype="f64", status="failed-check",
                    message="3 element(s) out of tolerance; first at output "
                            "0 index 0: got 1.5, expected 1"))
    out.append(case("log_softmax", "softmax", [[64, 100]], [64, 100], "blas",
                    {"coretype": "auto"}, 0, params={"axis": -1},
                    pstr="[axis=-1]", status="unsupported",
                    message="the backend has no kernel for this op, dtype "
                            "and parameters"))
    out.append(case("add", "elementwise", [[1000000], [1000000]], [1000000],
                    "cuda", {"device": "0"}, 0, status="unavailable",
                    message="cuda: module tbench-cuda.so not found (built "
                            "without CUDA)"))
    if scale:
        for c in out:
            f = scale.get(c["id"])
            if f and c["stats"]:
                st = c["stats"]
                for k in ("min_ns", "max_ns", "median_ns", "mean_ns",
                          "stddev_ns", "mad_ns", "p5_ns", "p95_ns",
                          "ci_low_ns", "ci_high_ns"):
                    st[k] = round(st[k] * f, 3)
                st["samples_ns"] = [round(v * f, 3) for v in st["samples_ns"]]
                tp = c["throughput"]
                for k in ("gb_s", "gflop_s", "items_s"):
                    if tp[k] is not None:
                        tp[k] = tp[k] / f
    return out


def doc(cases, env=ENV, peaks=None, cfg=None):
    st = ["ok", "unsupported", "unavailable", "failed-check", "error",
          "skipped"]
    return {"schema": "tbench.results/1", "complete": True,
            "env": copy.deepcopy(env), "peaks": peaks,
            "timer": {"source": "CLOCK_MONOTONIC", "overhead_ns": 20},
            "config": cfg or config(),
            "summary": dict({"cases": len(cases)},
                            **{s: sum(c["status"] == s for c in cases)
                               for s in st}),
            "cases": cases}


def write(name, d):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(d, f, separators=(",", ":"))
        f.write("\n")


def main():
    write("mixed.json", doc(mixed_cases(), peaks=PEAKS))

    base = mixed_cases(scale={
        "add/1000000,1000000/f32/cpu[threads=1]": 1 / 1.10,
        "relu/100000/f32/cpu[threads=1]": 1 / 1.03,
        "matmul/256x256,256x256/f32/cpu[threads=2]": 1.25})
    for c in base:   # the failed case was ok in the baseline
        if c["status"] == "failed-check":
            c.update(case("sum", "reduction", [[1000000]], [], "cpu",
                          {"threads": "1"}, 60000.0,
                          params={"keepdim": False}, pstr="[keepdim=0]",
                          dtype="f64", seed=99))
    base.append(case("mul", "elementwise", [[1000], [1000]], [1000], "cpu",
                     {"threads": "1"}, 160.0, seed=98))
    benv = copy.deepcopy(ENV)
    benv["build"]["git_commit"] = "fedcba987654"
    benv["date"] = "2024-12-31T23:00:00Z"
    write("baseline.json", doc(base, env=benv, peaks=PEAKS))

    nenv = copy.deepcopy(ENV)
    nenv["build"] = {"tbench_version": "0.1.0", "git_commit": "0123456789ab",
                     "compiler": "CPython 3.11.2 (GCC 12.2.0)",
                     "build_type": "python"}
    nenv["libraries"] = {"numpy": "1.24.2", "torch": None,
                         "python": "3.11.2"}
    nenv["python_overhead"] = {"method": "fixture",
                               "python_noop_call_ns": 21.0,
                               "numpy_add_1_element_out_ns": 280.0}
    nenv["command"] = ("/usr/bin/python3 scripts/compare_numpy.py "
                       "configs/fixture.json -o numpy.json")
    ncases = []
    seed = 50
    for n, m in ((1000, 900.0), (100000, 20000.0), (1000000, 200000.0)):
        for t in ("1", "2"):
            for form, f in (("alloc", 1.1), ("out", 1.0)):
                c = case("add", "elementwise", [[n], [n]], [n], "numpy",
                         {"threads": t, "form": form}, m * f, seed=seed,
                         allocs=1 if form == "alloc" else 0,
                         alloc_bytes=4 * n if form == "alloc" else 0)
                c["impl"] = "numpy.add" + ("(out=)" if form == "out" else "")
                ncases.append(c)
                seed += 1
    for n, m in ((64, 15000.0), (256, 700000.0)):
        for t, tf in (("1", 1.0), ("2", 0.6)):
            c = case("matmul", "matmul", [[n, n], [n, n]], [n, n], "numpy",
                     {"threads": t, "form": "out"}, m * tf,
                     flops=2 * n ** 3, seed=seed)
            c["impl"] = "numpy.matmul(out=)"
            ncases.append(c)
            seed += 1
    for n in (1000, 100000, 1000000):
        for t in ("1", "2"):
            for form in ("alloc", "out"):
                c = case("add", "elementwise", [[n], [n]], [n], "torch",
                         {"threads": t, "form": form}, 0,
                         status="unavailable",
                         message="PyTorch cannot be imported: "
                                 "ModuleNotFoundError: No module named "
                                 "'torch'")
                ncases.append(c)
    write("numpy.json", doc(ncases, env=nenv))

    write("single.json", doc([case("add", "elementwise", [[1000], [1000]],
                                   [1000], "cpu", {"threads": "1"}, 150.0,
                                   seed=7)]))


if __name__ == "__main__":
    main()
