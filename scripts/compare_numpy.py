#!/usr/bin/python3
"""NumPy and PyTorch side by side with tbench.

Usage:
    /usr/bin/python3 scripts/compare_numpy.py CONFIG -o FILE [options]

Runs the ops, shapes, parameters and dtypes of a tbench config with NumPy
and PyTorch (Debian's python3-numpy and python3-torch), with 1 thread and
with all threads, each in its allocating form (the call returns a new
array) and its out= form (the result goes into a preallocated array), and
writes a result file in tbench's schema (tbench.results/1,
docs/FORMAT.md: "Files written by compare_numpy.py") with backends
"numpy" and "torch", so `tbench report --with FILE` and `tbench compare`
put them next to tbench's own backends.  Run with another interpreter
(scripts/peers.sh's virtual environment holds PyPI's newest NumPy and
PyTorch) and --label pypi, its backends are "numpy-pypi" and "torch-pypi",
so both pairs go into one report.

How it measures, so the figures are comparable with tbench's:
- the same cases: every case's inputs, output shapes, reference output and
  tolerances come from `tbench exec` (the same deterministic inputs and
  the same double-precision reference as `tbench run`), and its id is
  tbench's id with the backend part replaced;
- every case is checked against the reference before it is timed, with
  tbench's rule |got - ref| <= atol + rtol * |ref| (failed-check: not timed);
- the same warm-up (min_time and min_iters), batching (k calls per sample so
  a sample lasts sample_time, refined with up to 3 timed batches), and
  stopping rule (bootstrap 95% CI of the median narrower than ci_target x
  median, checked after min_samples and then every max(5, n/8) samples;
  max_time_s with at least 3 samples; max_samples), and the same
  statistics (2000 bootstrap resamples, seeded per case);
- the clock is time.perf_counter_ns; the cost of a pair of clock reads
  (median of 20001 pairs) is subtracted from every sample, as tbench does;
- thread counts: each count runs in its own worker process whose
  OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS are set before
  NumPy and PyTorch are imported (threadpoolctl is not needed), plus
  torch.set_num_threads(N); "all" is the number of CPUs this process may
  run on;
- when PyTorch cannot be imported (or TBENCH_NO_TORCH is set, which the
  tests use), its cases are written as "unavailable" with the reason;
- the per-call overhead of the Python layer is measured the same way (a
  no-op Python call, and a 1-element add with out=) and written to
  env.python_overhead, so small sizes can be judged fairly;
- the twins of the in-place, creation, conv, optimizer, linalg, unfused
  and backward families, and the checks of the factorizations and the
  random ops, are in scripts/compare_twins.py.
"""
import argparse
import fnmatch
import json
import math
import os
import platform
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from compare_twins import FAMILIES, check_factorization, check_random

SCHEMA = "tbench.results/1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESAMPLES = 2000

WARMUP_DEFAULTS = {"min_time_ms": 50, "min_iters": 3}
MEASURE_DEFAULTS = {"sample_time_ms": 1, "min_samples": 10,
                    "max_samples": 2000, "ci_target": 0.02, "max_time_s": 1.0}


def die(msg, code=2):
    print(f"compare_numpy.py: {msg}", file=sys.stderr)
    sys.exit(code)


# ---- config ---------------------------------------------------------------

def strip_comments(text):
    """JSON with // and /* */ comments -> JSON.  Comments inside strings are
    kept (they are part of the string); line breaks are kept so that
    json's error positions still point at the right line."""
    out = []
    i, n = 0, len(text)
    in_str = False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_str = False
            i += 1
        elif c == '"':
            in_str = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ValueError("unterminated /* comment")
            out.append("\n" * text.count("\n", i, j))
            i = j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def load_config(path):
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except OSError as e:
        die(f"{path}: cannot open: {e.strerror}")
    try:
        cfg = json.loads(strip_comments(text))
    except ValueError as e:
        die(f"{path}: {e}")
    if not isinstance(cfg, dict) or "name" not in cfg or "ops" not in cfg:
        die(f"{path}: not a tbench config (needs 'name' and 'ops'; "
            "docs/CONFIG.md)")
    warm = dict(WARMUP_DEFAULTS, **cfg.get("warmup", {}))
    meas = dict(MEASURE_DEFAULTS, **cfg.get("measure", {}))
    return cfg, text, warm, meas


def as_list(v):
    return v if isinstance(v, list) else [v]


def expand(cfg):
    """(op, shapes-arg, params, dtype) of every case of the matrix."""
    top_dtypes = as_list(cfg.get("dtypes", ["f32"]))
    for entry in cfg["ops"]:
        params = as_list(entry.get("params", [{}]))
        dtypes = as_list(entry.get("dtypes", top_dtypes))
        for shp in entry["shapes"]:
            if shp and isinstance(shp[0], list):      # one shape per input
                sarg = ",".join("x".join(str(d) for d in s) for s in shp)
            else:                                      # for every input
                sarg = "x".join(str(d) for d in shp)
            for p in params:
                for dt in dtypes:
                    yield entry["op"], sarg, p, dt


# ---- tbench exec: inputs, reference, tolerances, ids -----------------------

def tbench_version(tb):
    p = subprocess.run([tb, "--version"], capture_output=True, text=True)
    m = re.match(r"tbench (\S+) \(commit (\S+),", p.stdout)
    return (m.group(1), m.group(2)) if m else (None, None)


def op_table(tb):
    p = subprocess.run([tb, "list", "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{tb} list --json failed: {p.stderr.strip()}")
    return {o["name"]: o for o in json.loads(p.stdout)["ops"]}


def exec_case(tb, op, sarg, params, dtype, seed, outdir):
    ptxt = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                    for k, v in params.items())
    cmd = [tb, "exec", op, "--shape", sarg, "--dtype", dtype,
           "--seed", str(seed), "-o", outdir]
    if ptxt:
        cmd += ["--params", ptxt]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == 2 or not os.path.exists(
            os.path.join(outdir, "exec.json")):
        die(f"tbench exec {op} {sarg} {dtype}: "
            f"{p.stderr.strip() or 'failed'}")
    with open(os.path.join(outdir, "exec.json"), encoding="utf-8") as f:
        return json.load(f)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# FLOPs of one call, mirroring the cost models of src/ops/op.c (used only
# when tbench exec does not report the model itself).
ELEM_FLOPS = {"rsqrt": 2, "leaky_relu": 2, "add_relu": 2, "sigmoid": 4,
              "silu": 5, "gelu": 5, "softplus": 5, "gelu_tanh": 9}


def model_of(spec, ex, dtype):
    if isinstance(ex.get("model"), dict):
        return ex["model"]
    op = ex["op"]
    ins = [i["shape"] for i in ex["inputs"]]
    outs = [o["shape"] for o in ex["outputs"]]
    nin, nout = [numel(s) for s in ins], [numel(s) for s in outs]
    size = {"f32": 4, "f64": 8, "bf16": 2, "f16": 2}[dtype]
    p = ex.get("params", {})
    cat = spec["category"]
    rl = 1.0
    if op == "matmul" or op == "linear":
        rl = ins[0][-1] if op == "matmul" else ins[0][1]
        fl = 2.0 * nout[0] * rl + (2.0 * nout[0] if op == "linear" else 0)
    elif op in ("sum", "mean", "max", "min", "argmax"):
        fl = nin[0] + (nout[0] if op == "mean" else 0)
        if op in ("sum", "mean"):
            rl = nin[0] / max(nout[0], 1)
    elif op == "var":
        fl = 4.0 * nin[0] + nout[0]
        rl = nin[0] / max(nout[0], 1)
    elif op in ("log_softmax", "softmax"):
        fl = 5.0 * nin[0]
        ax = p.get("axis", -1)
        rl = ins[0][ax]
    elif cat == "layout":
        fl = 0
    elif op in ("add", "sub", "mul", "div", "relu"):
        fl = nout[0]
    else:
        fl = ELEM_FLOPS.get(op, 1) * nout[0] if cat in (
            "elementwise", "activation", "fused") else 0
    return {"flops": float(fl), "bytes": float((sum(nin) + sum(nout)) * size),
            "items": float(max(nin + nout[:1])), "reduce_len": float(rl)}


# ---- the worker: timing in a process with a fixed thread count ------------

def worker(plan_path, threads, out_path):
    t = str(threads)
    # set before numpy/torch are imported (the parent also sets them)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = t
    import numpy as np
    try:
        if os.environ.get("TBENCH_NO_TORCH"):   # the tests' switch
            raise ImportError("TBENCH_NO_TORCH is set")
        import torch
        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
        torch_err = None
    except Exception as e:  # noqa: BLE001 - any import failure
        torch, torch_err = None, f"{type(e).__name__}: {e}"
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    warm, meas = plan["warmup"], plan["measure"]
    overhead = timer_overhead()
    res = {"threads": threads, "timer_overhead_ns": overhead, "cases": [],
           "torch_error": torch_err,
           "torch_threads": torch.get_num_threads() if torch else None}
    libs = [("numpy", np)] + ([("torch", torch)] if torch else [])
    for c in plan["cases"]:
        for lib, mod in libs:
            if lib not in plan["backends"]:
                continue
            for form in plan["forms"]:
                res["cases"].append(run_case(np, lib, mod, form, threads, c,
                                             warm, meas, overhead))
    if plan["overhead_threads"] == threads:
        res["python_overhead"] = python_overhead(np, torch, warm, meas,
                                                 overhead)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(res, f)


def timer_overhead():
    pc = time.perf_counter_ns
    v = []
    for _ in range(20001):
        t0 = pc()
        t1 = pc()
        v.append(t1 - t0)
    v.sort()
    return float(v[len(v) // 2])


def run_batch(fn, k):
    pc = time.perf_counter_ns
    t0 = pc()
    for _ in range(k):
        fn()
    return pc() - t0


def batch_size(target, per_iter):
    k = math.ceil(target / max(per_iter, 0.1))
    return int(min(max(k, 1), 1_000_000_000))


def median_ci(np, x, seed):
    """Percentile bootstrap 95% CI of the median (2000 resamples)."""
    a = np.asarray(x, dtype=np.float64)
    if len(a) == 1:
        return a[0], a[0]
    rng = np.random.default_rng(seed)
    meds = np.empty(RESAMPLES)
    step = max(1, 2_000_000 // len(a))      # bound the index matrix
    for s in range(0, RESAMPLES, step):
        e = min(RESAMPLES, s + step)
        idx = rng.integers(0, len(a), size=(e - s, len(a)))
        meds[s:e] = np.median(a[idx], axis=1)
    lo, hi = np.quantile(meds, [0.025, 0.975])
    return float(lo), float(hi)


def measure(np, fn, warm, meas, overhead, seed, before=None):
    """tbench's runner loop (src/harness/runner.c) for a Python callable.
    before (may be None): called with the batch's call count before every
    batch, outside its clock (a training step's state window, as the
    runner's tb_workload_batch_begin)."""
    pc = time.perf_counter_ns
    before = before or (lambda k: None)
    t0 = pc()
    iters = 0
    while iters < warm["min_iters"] or pc() - t0 < warm["min_time_ms"] * 1e6:
        before(1)
        run_batch(fn, 1)
        iters += 1
    warmup_iters = iters
    target = meas["sample_time_ms"] * 1e6
    k = batch_size(target, (pc() - t0) / iters)
    for _ in range(3):
        before(k)
        ns = run_batch(fn, k)
        warmup_iters += k
        if 0.9 * target <= ns <= 2 * target:
            break
        k = batch_size(target, ns / k)
    warmup_ns = pc() - t0
    samples = []
    stop = "max_samples"
    next_check = meas["min_samples"]
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    start = pc()
    while len(samples) < meas["max_samples"]:
        before(k)
        ns = run_batch(fn, k)
        samples.append(max((ns - overhead) / k, 0.0))
        n = len(samples)
        elapsed = pc() - start
        if n >= next_check:
            next_check = n + max(n // 8, 5)
            med = float(np.median(samples))
            lo, hi = median_ci(np, samples, seed)
            if med > 0 and (hi - lo) / med < meas["ci_target"]:
                stop = "ci_target"
                break
        if elapsed >= meas["max_time_s"] * 1e9 and n >= 3:
            stop = "time_limit"
            break
    sampling_ns = pc() - start
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    calls = len(samples) * k
    rus = {f: (getattr(ru1, f) - getattr(ru0, f)) / calls
           for f in ("ru_minflt", "ru_majflt", "ru_nvcsw", "ru_nivcsw")}
    return samples, k, stop, warmup_iters, warmup_ns, sampling_ns, rus


def stats_of(np, samples, k, stop, seed):
    a = np.asarray(samples, dtype=np.float64)
    med = float(np.median(a))
    lo, hi = median_ci(np, samples, seed)
    q1, q3 = np.quantile(a, [0.25, 0.75])
    iqr = q3 - q1
    return {
        "n": len(a), "iters_per_sample": k,
        "min_ns": float(a.min()), "max_ns": float(a.max()),
        "median_ns": med, "mean_ns": float(a.mean()),
        "stddev_ns": float(a.std(ddof=1)) if len(a) > 1 else 0.0,
        "mad_ns": float(np.median(np.abs(a - med))),
        "p5_ns": float(np.quantile(a, 0.05)),
        "p95_ns": float(np.quantile(a, 0.95)),
        "ci_low_ns": lo, "ci_high_ns": hi,
        "ci_rel": (hi - lo) / med if med > 0 else 0.0,
        "outliers": {
            "low_mild": int(((a < q1 - 1.5 * iqr) & (a >= q1 - 3 * iqr)).sum()),
            "low_severe": int((a < q1 - 3 * iqr).sum()),
            "high_mild": int(((a > q3 + 1.5 * iqr) & (a <= q3 + 3 * iqr)).sum()),
            "high_severe": int((a > q3 + 3 * iqr).sum()),
        },
        "stop_reason": stop,
        "samples_ns": [float(v) for v in a],
    }


def python_overhead(np, torch, warm, meas, overhead):
    """Per-call cost of the Python layer: a no-op call, and a 1-element add
    into a preallocated output, timed like any case; each median with the
    95% bootstrap CI of the cases' (ci_ns: {name: [low, high]})."""
    out = {"method": "median per call, timed like a case (a Python loop "
                     "calling it, clock-pair cost subtracted)", "ci_ns": {}}

    def put(name, fn, seed):
        samples = measure(np, fn, warm, meas, overhead, seed)[0]
        out[name] = float(np.median(samples))
        out["ci_ns"][name] = list(median_ci(np, samples, seed))

    def noop():
        return None
    put("python_noop_call_ns", noop, 1)
    a = np.ones(1, np.float32)
    o = np.empty(1, np.float32)
    put("numpy_add_1_element_out_ns", lambda: np.add(a, a, out=o), 2)
    if torch is not None:
        ta, to = torch.ones(1), torch.empty(1)
        put("torch_add_1_element_out_ns",
            lambda: torch.add(ta, ta, out=to), 3)
    return out


# ---- the ops ----------------------------------------------------------------
#
# impl(lib, mod, np, form, x, o, p) -> (callable, calls per iteration, name)
# x: the inputs (arrays or tensors); o: the preallocated outputs (out form)
# p: the case's parameters.  None when the library has no form of the op.

def _axis(p):
    return p.get("axis")


def nc_norm_twin(op, t, mod, np, x, p):
    """batch_norm / group_norm on x [N, C, ...]; y returned (the check's
    output).  batch_norm's running [2, C] (mean; var) is split into the
    two vectors PyTorch takes, views of one array, and updated in place
    when training, as tbench's op does.  PyTorch: F.batch_norm and
    F.group_norm; NumPy: the statistics over the channel's (group's)
    axes, two passes."""
    eps = p.get("eps", 1e-5)
    xx, w, b = x[0], x[1], x[2]
    bc = [1, -1] + [1] * (xx.ndim - 2)
    if op == "group_norm":
        G = int(p.get("num_groups", 1))
        if t:
            import torch.nn.functional as F
            return (lambda: F.group_norm(xx, G, w, b, eps)), 1, "group_norm"

        def gn():
            x3 = xx.reshape(xx.shape[0], G, -1)
            c = x3 - x3.mean(-1, keepdims=True)
            y = c / np.sqrt((c * c).mean(-1, keepdims=True) + eps)
            return y.reshape(xx.shape) * w.reshape(bc) + b.reshape(bc)
        return gn, 8, "(x - mean) / sqrt(var + eps) * w + b per group"
    training = bool(p.get("training", True))
    mom = p.get("momentum", 0.1)
    rm, rv = x[3][0], x[3][1]
    if t:
        import torch.nn.functional as F
        return (lambda: F.batch_norm(xx, rm, rv, w, b, training, mom,
                                     eps)), 1, \
            "batch_norm(training=%s)" % training
    ax = tuple(d for d in range(xx.ndim) if d != 1)
    n = xx.size // max(xx.shape[1], 1)

    def bn():
        if not training:
            return (xx - rm.reshape(bc)) / np.sqrt(rv.reshape(bc) + eps) * \
                w.reshape(bc) + b.reshape(bc)
        m = xx.mean(ax)
        c = xx - m.reshape(bc)
        v = (c * c).mean(ax)
        rm[:] = (1 - mom) * rm + mom * m
        rv[:] = (1 - mom) * rv + mom * v * (n / (n - 1))
        return c / np.sqrt(v.reshape(bc) + eps) * w.reshape(bc) + \
            b.reshape(bc)
    return bn, 8, "(x - mean) / sqrt(var + eps) * w + b per channel" + \
        (", running updated" if training else " (running statistics)")


def bn_backward_twin(t, mod, np, x, p):
    """batch_norm_backward (training): g, x [N, C, ...], w -> dx, dw, db,
    each channel's statistics recomputed from x as tbench's op does; dx
    returned (the check's output).  PyTorch: var_mean and rsqrt, then
    aten.native_batch_norm_backward (what F.batch_norm's autograd runs in
    training); NumPy: the closed forms."""
    eps = p.get("eps", 1e-5)
    g, xx, w = x
    ax = tuple(d for d in range(xx.ndim) if d != 1)
    bc = [1, -1] + [1] * (xx.ndim - 2)
    if t:
        def f():
            var, mean = mod.var_mean(xx, ax, unbiased=False)
            return mod.ops.aten.native_batch_norm_backward(
                g, xx, w, None, None, mean, mod.rsqrt(var + eps), True, eps,
                [True, True, True])[0]
        return f, 4, "var_mean, rsqrt, native_batch_norm_backward"
    n = xx.size // max(xx.shape[1], 1)

    def fn():
        m = xx.mean(ax).reshape(bc)
        c = xx - m
        rstd = 1 / np.sqrt((c * c).mean(ax).reshape(bc) + eps)
        xh = c * rstd
        sg, sgx = g.sum(ax), (g * xh).sum(ax)
        return w.reshape(bc) * rstd * (g - sg.reshape(bc) / n -
                                       xh * sgx.reshape(bc) / n)
    return fn, 10, "w * rstd * (g - sum(g) / n - xh * sum(g * xh) / n)"


def sdpa_backward_twin(t, mod, np, x, p):
    """sdpa_backward: g, q, k, v -> dq, dk, dv; dq returned (the check's
    output).  PyTorch 1.13 (no fused attention): autograd of the eager
    composition, the forward recomputed on every call as tbench's kernel
    recomputes its statistics, all three gradients asked for; NumPy: P
    materialized and the closed forms (dv = P^T g, dS = P * (dP -
    rowsum(P * dP)), dq = dS k * scale, dk = dS^T q * scale)."""
    g, q, k, v = x
    sq, sk, d = q.shape[-2], k.shape[-2], q.shape[-1]
    scale = p.get("scale", 0) or 1 / math.sqrt(d)
    causal = bool(p.get("causal", False))
    above = np.triu(np.ones((sq, sk), dtype=bool), 1)
    if t:
        tmask = mod.from_numpy(above)
        lq, lk, lv = (a.detach().requires_grad_() for a in (q, k, v))

        def ft():
            with mod.enable_grad():
                s = lq @ lk.transpose(-1, -2) * scale
                if causal:
                    s = s.masked_fill(tmask, float("-inf"))
                out = mod.softmax(s, dim=-1) @ lv
                return mod.autograd.grad(out, (lq, lk, lv), g)[0]
        return ft, 12, "autograd of softmax(q @ k.transpose(-1, -2) * " \
            "scale" + (" masked_fill(~tril, -inf)" if causal else "") + \
            ") @ v"

    def fn():
        s = q @ k.swapaxes(-1, -2) * scale
        if causal:
            s[..., above] = -np.inf
        e = np.exp(s - s.max(-1, keepdims=True))
        pr = e / e.sum(-1, keepdims=True)
        dv = pr.swapaxes(-1, -2) @ g
        dp = g @ v.swapaxes(-1, -2)
        ds = pr * (dp - (pr * dp).sum(-1, keepdims=True)) * scale
        dk = ds.swapaxes(-1, -2) @ q
        del dv, dk  # computed as the op does; dq is checked
        return ds @ k
    return fn, 14, "P = softmax(q @ k^T * scale), dS = P * (dP - " \
        "rowsum(P * dP)), dq = dS @ k, dk = dS^T @ q, dv = P^T @ g"


def gn_backward_twin(t, mod, np, x, p):
    """group_norm_backward: g, x [N, C, ...], w -> dx, dw, db, each
    (sample, group)'s statistics recomputed from x as tbench's op does; dx
    returned (the check's output).  PyTorch: aten.native_group_norm (its
    mean and rstd), then aten.native_group_norm_backward (what
    F.group_norm's autograd runs); NumPy: the closed forms."""
    eps, G = p.get("eps", 1e-5), int(p.get("num_groups", 1))
    g, xx, w = x
    N, C = xx.shape[0], xx.shape[1]
    hw = (xx.numel() if t else xx.size) // max(N * C, 1)
    if t:
        def f():
            _, mean, rstd = mod.ops.aten.native_group_norm(
                xx, w, None, N, C, hw, G, eps)
            return mod.ops.aten.native_group_norm_backward(
                g, xx, mean, rstd, w, N, C, hw, G, [True, True, True])[0]
        return f, 2, "native_group_norm, native_group_norm_backward"
    bc = [1, -1] + [1] * (xx.ndim - 2)

    def fn():
        x3 = xx.reshape(N, G, -1)
        c = x3 - x3.mean(-1, keepdims=True)
        rstd = 1 / np.sqrt((c * c).mean(-1, keepdims=True) + eps)
        xh = c * rstd
        gh = (g * w.reshape(bc)).reshape(N, G, -1)
        n = x3.shape[2]
        return (rstd * (gh - gh.sum(-1, keepdims=True) / n -
                        xh * (gh * xh).sum(-1, keepdims=True) / n)
                ).reshape(xx.shape)
    return fn, 10, "rstd * (gh - sum(gh) / n - xh * sum(gh * xh) / n)"


def norm_backward_twin(op, t, mod, np, x, p):
    """layer_norm_backward / rms_norm_backward: g, x, w -> dx, dw (, db),
    the statistics recomputed from x as tbench's op does; dx returned
    (the check's output).  PyTorch: var_mean and rsqrt, then
    aten.native_layer_norm_backward (what F.layer_norm's autograd runs);
    for rms_norm (no such op in 1.13) autograd through its eager
    composition.  NumPy: the closed forms."""
    ln = op == "layer_norm_backward"
    eps = p.get("eps", 1e-5 if ln else 1e-6)
    g, xx, w = x
    d = xx.shape[-1]
    if t and ln:
        b = mod.zeros_like(w)

        def f():
            var, mean = mod.var_mean(xx, -1, unbiased=False, keepdim=True)
            return mod.ops.aten.native_layer_norm_backward(
                g, xx, (d,), mean, mod.rsqrt(var + eps), w, b,
                [True, True, True])[0]
        return f, 4, "var_mean, rsqrt, native_layer_norm_backward"
    if t:
        def f():
            xr, wr = xx.detach().requires_grad_(), w.detach().requires_grad_()
            y = xr * mod.rsqrt((xr * xr).mean(-1, keepdim=True) + eps) * wr
            return mod.autograd.grad(y, (xr, wr), g)[0]
        # the composition's 6 ops and their gradients (about 12)
        return f, 18, "autograd of x * rsqrt(mean(x * x) + eps) * w"

    def f():
        x2, g2 = xx.reshape(-1, d), g.reshape(-1, d)
        c = x2 - x2.mean(-1, keepdims=True) if ln else x2
        rstd = 1 / np.sqrt((c * c).mean(-1, keepdims=True) + eps)
        xh = c * rstd
        gh = g2 * w
        a = gh.mean(-1, keepdims=True) if ln else 0
        dx = rstd * (gh - a - xh * (gh * xh).mean(-1, keepdims=True))
        (g2 * xh).sum(0)
        if ln:
            g2.sum(0)
        return dx.reshape(xx.shape)
    return f, 19 if ln else 14, "closed forms of dx, dw" + (
        ", db" if ln else "")

def impl_for(op, lib, mod, np, form, x, o, p):
    t = lib == "torch"
    out = form == "out"
    # element-wise binary ops with a direct ufunc / aten op
    binary = {"add": "add", "sub": "subtract" if not t else "sub",
              "mul": "multiply" if not t else "mul",
              "div": "divide" if not t else "div",
              "pow": "power" if not t else "pow",
              "maximum": "maximum", "minimum": "minimum"}
    unary = {"neg": "negative" if not t else "neg", "abs": "abs",
             "exp": "exp", "log": "log", "sqrt": "sqrt", "tanh": "tanh"}
    if op in binary:
        f = getattr(mod, binary[op])
        if out:
            return (lambda: f(x[0], x[1], out=o[0])), 1, f"{binary[op]}(out=)"
        return (lambda: f(x[0], x[1])), 1, binary[op]
    if op in unary:
        f = getattr(mod, unary[op])
        if out:
            return (lambda: f(x[0], out=o[0])), 1, f"{unary[op]}(out=)"
        return (lambda: f(x[0])), 1, unary[op]
    if op == "relu":
        if t:
            if out:
                return (lambda: mod.clamp_min(x[0], 0, out=o[0])), 1, \
                    "clamp_min(out=)"
            return (lambda: mod.relu(x[0])), 1, "relu"
        if out:
            return (lambda: np.maximum(x[0], 0, out=o[0])), 1, \
                "maximum(x, 0, out=)"
        return (lambda: np.maximum(x[0], 0)), 1, "maximum(x, 0)"
    if op == "rsqrt":
        if t:
            if out:
                return (lambda: mod.rsqrt(x[0], out=o[0])), 1, "rsqrt(out=)"
            return (lambda: mod.rsqrt(x[0])), 1, "rsqrt"
        if out:
            def f():
                np.sqrt(x[0], out=o[0])
                np.reciprocal(o[0], out=o[0])
            return f, 2, "sqrt(out=), reciprocal(out=)"
        return (lambda: 1 / np.sqrt(x[0])), 2, "1 / sqrt(x)"
    if op == "sigmoid":
        if t:
            if out:
                return (lambda: mod.sigmoid(x[0], out=o[0])), 1, \
                    "sigmoid(out=)"
            return (lambda: mod.sigmoid(x[0])), 1, "sigmoid"
        if out:
            def f():
                np.negative(x[0], out=o[0])
                np.exp(o[0], out=o[0])
                np.add(o[0], 1, out=o[0])
                np.reciprocal(o[0], out=o[0])
            return f, 4, "negative, exp, add, reciprocal (out=)"
        return (lambda: 1 / (1 + np.exp(-x[0]))), 4, "1 / (1 + exp(-x))"
    if op in ("sum", "mean", "max", "min"):
        ax = _axis(p)
        keep = bool(p.get("keepdim", False))
        if t:
            name = {"max": "amax", "min": "amin"}.get(op, op)
            f = getattr(mod, name)
            dims = tuple(range(x[0].dim())) if ax is None else ax
            if out:
                return (lambda: f(x[0], dims, keep, out=o[0])), 1, \
                    f"{name}(dim, keepdim, out=)"
            return (lambda: f(x[0], dims, keep)), 1, f"{name}(dim, keepdim)"
        f = getattr(np, {"max": "amax", "min": "amin"}.get(op, op))
        if out:
            return (lambda: f(x[0], axis=ax, keepdims=keep, out=o[0])), 1, \
                f"{op}(axis, keepdims, out=)"
        return (lambda: f(x[0], axis=ax, keepdims=keep)), 1, \
            f"{op}(axis, keepdims)"
    if op == "matmul":
        if out:
            return (lambda: mod.matmul(x[0], x[1], out=o[0])), 1, \
                "matmul(out=)"
        return (lambda: mod.matmul(x[0], x[1])), 1, "matmul"
    if op == "transpose":
        d0, d1 = int(p.get("dim0", -2)), int(p.get("dim1", -1))
        if t:
            if out:
                return (lambda: o[0].copy_(x[0].transpose(d0, d1))), 1, \
                    "copy_(transpose)"
            return (lambda: x[0].transpose(d0, d1).contiguous()), 1, \
                "transpose.contiguous"
        if out:
            return (lambda: np.copyto(o[0], np.swapaxes(x[0], d0, d1))), 1, \
                "copyto(swapaxes)"
        return (lambda: np.ascontiguousarray(np.swapaxes(x[0], d0, d1))), 1, \
            "ascontiguousarray(swapaxes)"
    if op in ("log_softmax", "softmax"):
        ax = int(p.get("axis", -1))
        if t:
            f = getattr(mod, op)
            if out:
                return (lambda: f(x[0], ax, out=o[0])), 1, f"{op}(out=)"
            return (lambda: f(x[0], ax)), 1, op
        if not out:
            if op == "log_softmax":
                def f():
                    m = np.max(x[0], axis=ax, keepdims=True)
                    s = x[0] - m
                    return s - np.log(np.sum(np.exp(s), axis=ax,
                                             keepdims=True))
                return f, 6, "max, subtract, exp, sum, log, subtract"

            def g():
                e = np.exp(x[0] - np.max(x[0], axis=ax, keepdims=True))
                return e / np.sum(e, axis=ax, keepdims=True)
            return g, 5, "max, subtract, exp, sum, divide"
        red = list(x[0].shape)
        red[ax] = 1
        mbuf = np.empty(red, x[0].dtype)
        sbuf = np.empty(red, x[0].dtype)
        tmp = np.empty(x[0].shape, x[0].dtype)
        if op == "log_softmax":
            def f():
                np.max(x[0], axis=ax, keepdims=True, out=mbuf)
                np.subtract(x[0], mbuf, out=o[0])
                np.exp(o[0], out=tmp)
                np.sum(tmp, axis=ax, keepdims=True, out=sbuf)
                np.log(sbuf, out=sbuf)
                np.subtract(o[0], sbuf, out=o[0])
            return f, 6, "max, subtract, exp, sum, log, subtract (out=)"

        def g():
            np.max(x[0], axis=ax, keepdims=True, out=mbuf)
            np.subtract(x[0], mbuf, out=o[0])
            np.exp(o[0], out=o[0])
            np.sum(o[0], axis=ax, keepdims=True, out=sbuf)
            np.divide(o[0], sbuf, out=o[0])
        return g, 5, "max, subtract, exp, sum, divide (out=)"
    if op == "add_relu":           # no fused form in either library
        if t:
            if out:
                def f():
                    mod.add(x[0], x[1], out=o[0])
                    o[0].clamp_min_(0)
                return f, 2, "add(out=), clamp_min_"
            return (lambda: mod.relu(mod.add(x[0], x[1]))), 2, "relu(add)"
        if out:
            def g():
                np.add(x[0], x[1], out=o[0])
                np.maximum(o[0], 0, out=o[0])
            return g, 2, "add(out=), maximum(out=)"
        return (lambda: np.maximum(x[0] + x[1], 0)), 2, "maximum(a + b, 0)"
    if op in ("layer_norm", "rms_norm") and not out:
        eps = p.get("eps", 1e-5 if op == "layer_norm" else 1e-6)
        d = x[0].shape[-1]
        if t and op == "layer_norm":
            import torch.nn.functional as F
            return (lambda: F.layer_norm(x[0], (d,), x[1], x[2], eps)), 1, \
                "layer_norm"
        if t:  # PyTorch 1.13 has no rms_norm: its eager composition
            return (lambda: x[0] * mod.rsqrt(
                (x[0] * x[0]).mean(-1, keepdim=True) + eps) * x[1]), 6, \
                "x * rsqrt(mean(x * x) + eps) * w"
        if op == "layer_norm":
            def ln():
                m = x[0].mean(-1, keepdims=True)
                c = x[0] - m
                return c / np.sqrt((c * c).mean(-1, keepdims=True) + eps) * \
                    x[1] + x[2]
            return ln, 8, "(x - mean) / sqrt(var + eps) * w + b"
        return (lambda: x[0] / np.sqrt((x[0] * x[0]).mean(-1, keepdims=True)
                                       + eps) * x[1]), 6, \
            "x / sqrt(mean(x * x) + eps) * w"
    if op in ("layer_norm_backward", "rms_norm_backward") and not out:
        return norm_backward_twin(op, t, mod, np, x, p)
    if op in ("batch_norm", "group_norm") and not out:
        return nc_norm_twin(op, t, mod, np, x, p)
    if op == "batch_norm_backward" and not out:
        return bn_backward_twin(t, mod, np, x, p)
    if op == "group_norm_backward" and not out:
        return gn_backward_twin(t, mod, np, x, p)
    if op == "sdpa_backward" and not out:
        return sdpa_backward_twin(t, mod, np, x, p)
    if op in ("sdpa", "sdpa_unfused") and not out:
        # PyTorch 1.13 has no F.scaled_dot_product_attention: the eager
        # composition, the causal mask built once (a model's buffer) and
        # applied with masked_fill on every call; NumPy the same steps.
        sq, sk, d = x[0].shape[-2], x[1].shape[-2], x[0].shape[-1]
        scale = p.get("scale", 0) or 1 / math.sqrt(d)
        causal = bool(p.get("causal", False))
        above = np.triu(np.ones((sq, sk), dtype=bool), 1)
        if t:
            tmask = mod.from_numpy(above)

            def ft():
                s = x[0] @ x[1].transpose(-1, -2) * scale
                if causal:
                    s = s.masked_fill(tmask, float("-inf"))
                return mod.softmax(s, dim=-1) @ x[2]
            return ft, 4 + causal, \
                "softmax(q @ k.transpose(-1, -2) * scale" + \
                (" masked_fill(~tril, -inf)" if causal else "") + ") @ v"

        def fn():
            s = x[0] @ x[1].swapaxes(-1, -2) * scale
            if causal:
                s[..., above] = -np.inf
            s = np.exp(s - s.max(-1, keepdims=True))
            return s / s.sum(-1, keepdims=True) @ x[2]
        return fn, 8 + causal, \
            "exp(s - max) / sum @ v, s = q @ k^T * scale" + \
            (" with -inf above the diagonal" if causal else "")
    if op in ("cross_entropy", "cross_entropy_backward") and not out:
        return loss_impl(op, t, mod, np, x)
    if op in ("embedding", "embedding_backward") and not out:
        return embedding_impl(op, t, mod, np, x, p)
    if op == "lbfgs" and t and not out:
        return lbfgs_twin(mod, x, p)
    if op in ("einsum1", "einsum", "einsum3", "einsum4"):
        # the equation string as the case has it; NumPy's path search off
        # by default (optimize=False), as np.einsum is called; torch's
        # own contraction order (1.13: left to right, no opt_einsum)
        eq = p.get("equation", {"einsum1": "ij->ji",
                                "einsum": "bij,bjk->bik",
                                "einsum3": "ij,jk,kl->il",
                                "einsum4": "ij,jk,kl,lm->im"}[op])
        if out:
            if t:
                return (lambda: o[0].copy_(mod.einsum(eq, *x))), 2, \
                    f"copy_(einsum('{eq}'))"
            return (lambda: np.einsum(eq, *x, out=o[0])), 1, \
                f"einsum('{eq}', out=)"
        return (lambda: mod.einsum(eq, *x)), 1, f"einsum('{eq}')"
    if op == "dropout" and not out:
        pr = float(p.get("p", 0.5))
        if t:
            import torch.nn.functional as F
            return (lambda: F.dropout(x[0], pr, training=True)), 1, \
                "dropout(training=True)"
        gen = np.random.default_rng(int(p.get("seed", 0)))
        sc = x[0].dtype.type(1) / x[0].dtype.type(1 - pr)
        return (lambda: x[0] * ((gen.random(x[0].shape, x[0].dtype) >= pr)
                                * sc)), 4, \
            "random, greater_equal, multiply, multiply" 
    if op == "softplus":
        beta = float(p.get("beta", 1.0))
        thr = float(p.get("threshold", 20.0))
        if t:
            import torch.nn.functional as F
            if out:
                return (lambda: o[0].copy_(F.softplus(x[0], beta, thr))), \
                    2, f"copy_(softplus(beta={beta:g}, threshold={thr:g}))"
            return (lambda: F.softplus(x[0], beta, thr)), 1, \
                f"softplus(beta={beta:g}, threshold={thr:g})"
        if out:
            return None
        b = x[0].dtype.type(beta)
        return (lambda: np.where(b * x[0] > thr, x[0],
                                 np.log1p(np.exp(b * x[0])) / b)), 5, \
            "where(beta x > threshold, x, log1p(exp(beta x)) / beta)"
    if op in ("relu_backward", "sigmoid_backward", "tanh_backward",
              "gelu_backward") and t and not out:
        # the kernels PyTorch's autograd runs: threshold_backward and
        # gelu_backward take the forward input; sigmoid_backward and
        # tanh_backward the forward output y, which tbench's ops (given
        # x) compute inside: so y = sigmoid(x) or tanh(x) is made in the
        # timed call too, the same function from the same inputs (the
        # y-given kernel alone, a read of two tensors and a write, is not
        # the same work and is not timed here)
        aten = mod.ops.aten
        g, xv = x[0], x[1]
        if op == "relu_backward":
            return (lambda: aten.threshold_backward(g, xv, 0)), 1, \
                "threshold_backward(g, x, 0)"
        if op == "gelu_backward":
            return (lambda: aten.gelu_backward(g, xv)), 1, \
                "gelu_backward(g, x)"
        fwd = mod.sigmoid if op == "sigmoid_backward" else mod.tanh
        bwd = (aten.sigmoid_backward if op == "sigmoid_backward"
               else aten.tanh_backward)
        name = op.split("_")[0]
        return (lambda: bwd(g, fwd(xv))), 2, \
            f"{name}_backward(g, {name}(x)), both timed"
    if op in ("gelu", "gelu_tanh", "silu") and t:
        import torch.nn.functional as F
        if op == "silu":
            if out:
                return (lambda: o[0].copy_(F.silu(x[0]))), 2, "copy_(silu)"
            return (lambda: F.silu(x[0])), 1, "silu"
        appr = "tanh" if op == "gelu_tanh" else "none"
        if out:
            return (lambda: o[0].copy_(F.gelu(x[0], approximate=appr))), 2, \
                f"copy_(gelu(approximate={appr}))"
        return (lambda: F.gelu(x[0], approximate=appr)), 1, \
            f"gelu(approximate={appr})"
    if op == "add_relu_unfused":
        # the composition's work: two kernels, each writing a tensor of
        # its own (tbench's composite.c allocates the step's tensor per
        # call, as relu(add) does; the out= form's t is made once); relu
        # in place on add's output (add_relu's clamp_min_ form) is one
        # buffer less and is not this op
        if not out:
            if t:
                return (lambda: mod.relu(mod.add(x[0], x[1]))), 2, \
                    "relu(add)"
            return (lambda: np.maximum(x[0] + x[1], 0)), 2, \
                "maximum(a + b, 0)"
        tmp = mod.empty_like(o[0]) if t else np.empty_like(o[0])
        if t:
            def f():
                mod.add(x[0], x[1], out=tmp)
                mod.clamp_min(tmp, 0, out=o[0])
            return f, 2, "add(out=t), clamp_min(t, out=)"

        def g():
            np.add(x[0], x[1], out=tmp)
            np.maximum(tmp, 0, out=o[0])
        return g, 2, "add(out=t), maximum(t, out=)"
    if op == "log_softmax_unfused" and not t:   # the same six steps
        return impl_for("log_softmax", lib, mod, np, form, x, o, p)
    for fam, ops in FAMILIES:
        if op in ops:
            return fam(op, t, mod, np, out, x, o, p)
    return None


def lbfgs_twin(mod, x, p):
    """lbfgs: torch.optim.LBFGS itself (max_iter=1, no line search) on
    p, its state preset to the case's history: old_stps = S's rows,
    old_dirs = Y's (oldest first; pairs with s.y <= 1e-10 left out, as
    it never stores them), ro, H_diag from the newest pair, and
    prev_flat_grad = g, so that the pair each step would add (y = g -
    prev_flat_grad = 0) is rejected and every call runs the two-loop
    recursion on the same history; the closure hands it g.  Output 0 is
    p after the step (in place, as tbench's)."""
    lr = float(p.get("lr", 1.0))
    pv, g, S, Y = x[0], x[1], x[2], x[3]
    pv.requires_grad_(False)
    pairs = [(S[k], Y[k]) for k in range(S.shape[0])]
    pairs = [(s, y) for s, y in pairs if float(y.dot(s)) > 1e-10]
    opt = mod.optim.LBFGS([pv], lr=lr, max_iter=1, history_size=len(S),
                          tolerance_grad=0, tolerance_change=0,
                          line_search_fn=None)
    st = opt.state[pv]
    st.update(func_evals=0, n_iter=1, t=lr, d=mod.zeros_like(g.flatten()),
              old_stps=[s for s, _ in pairs], old_dirs=[y for _, y in pairs],
              ro=[1.0 / y.dot(s) for s, y in pairs],
              H_diag=(pairs[-1][0].dot(pairs[-1][1]) /
                      pairs[-1][1].dot(pairs[-1][1])) if pairs else 1,
              prev_flat_grad=g.flatten().clone(), prev_loss=0.0)

    def closure():
        pv.grad = g
        return mod.zeros(())

    def step():
        opt.step(closure)
        return pv
    return step, 1, "optim.LBFGS(max_iter=1, line_search_fn=None).step"


def loss_impl(op, t, mod, np, x):
    """cross_entropy and its gradient: PyTorch's F.cross_entropy and the
    two kernels its autograd runs backward (log_softmax's output saved by
    the forward, which is not timed); NumPy's composition.  The targets
    (tbench's class indices as values) become integers once, outside the
    timed call, as a user's targets already are."""
    bw = op == "cross_entropy_backward"
    xs, ts = (x[1], x[2]) if bw else (x[0], x[1])
    n = xs.shape[0]
    if t:
        import torch.nn.functional as F
        tt = ts.long()
        if not bw:
            return (lambda: F.cross_entropy(xs, tt)), 1, "cross_entropy"
        logp = mod.log_softmax(xs, 1)
        g = x[0].reshape(())
        tw = mod.tensor(float(n), dtype=xs.dtype)
        aten = mod.ops.aten

        def tbw():
            gl = aten.nll_loss_backward(g, logp, tt, None, 1, -100, tw)
            return aten._log_softmax_backward_data(gl, logp, 1, xs.dtype)
        return tbw, 2, "nll_loss_backward, _log_softmax_backward_data"
    ti = ts.astype(np.intp)
    rows = np.arange(n)
    if not bw:
        def ce():
            m = xs.max(1, keepdims=True)
            ls = np.log(np.exp(xs - m).sum(1)) + m[:, 0]
            return np.mean(ls - xs[rows, ti])
        return ce, 8, "max, subtract, exp, sum, log, add, take, mean"

    def ceb():
        e = np.exp(xs - xs.max(1, keepdims=True))
        e /= e.sum(1, keepdims=True)
        e[rows, ti] -= 1
        e *= x[0][0] / n
        return e
    return ceb, 7, "max, subtract, exp, sum, divide, subtract, multiply"


def embedding_impl(op, t, mod, np, x, p):
    """embedding: PyTorch's F.embedding and the kernel its autograd runs
    backward (embedding_dense_backward); NumPy's take and add.at.  The
    indices become integers once, outside the timed call."""
    v = int(p.get("num_weights", 1000))
    if t:
        import torch.nn.functional as F
        it = x[1].long()
        if op == "embedding":
            return (lambda: F.embedding(it, x[0])), 1, "embedding"
        aten = mod.ops.aten
        return (lambda: aten.embedding_dense_backward(x[0], it, v, -1,
                                                      False)), 1, \
            "embedding_dense_backward"
    ii = x[1].astype(np.intp)
    if op == "embedding":
        return (lambda: np.take(x[0], ii, axis=0)), 1, "take(axis=0)"
    d = x[0].shape[-1]
    g2 = x[0].reshape(-1, d)
    i1 = ii.reshape(-1)

    def emb_bw():
        dw = np.zeros((v, d), x[0].dtype)
        np.add.at(dw, i1, g2)
        return dw
    return emb_bw, 2, "zeros, add.at"


def torch_tensor(np, torch, a):
    """A tensor of what tbench exec wrote: float arrays as they are, bf16
    (a structured uint16 field named bf16: docs/FORMAT.md) from its bits."""
    if a.dtype.names == ("bf16",):
        bits = np.ascontiguousarray(a["bf16"]).view(np.int16)
        return torch.from_numpy(bits.copy()).view(torch.bfloat16)
    return torch.from_numpy(a)


def check_dropout(np, got, x, p, rtol, atol):
    """dropout: PyTorch's and NumPy's masks come from other generators than
    tbench's stream (ops/rand.h), so their outputs are held to what the
    op defines apart from the mask: each kept (nonzero) element is
    x / (1 - p) within the tolerance, and the kept count is within 6
    binomial standard deviations of n (1 - p)."""
    g = np.asarray(got, dtype=np.float64).reshape(-1)
    xv = np.asarray(x, dtype=np.float64).reshape(-1)
    kept = g != 0
    chk, msg = check(np, g, np.where(kept, xv / (1 - p), 0.0), rtol, atol)
    k, n = int(kept.sum()), g.size
    if chk["passed"] and abs(k - n * (1 - p)) > 6 * math.sqrt(
            n * p * (1 - p)):
        chk["passed"] = False
        msg = f"{k} of {n} elements kept, expected {n * (1 - p):.0f}"
    return chk, msg


def check(np, got, ref, rtol, atol, tiny=0.0):
    """tbench's element rule (docs/FORMAT.md, check); tiny: the dtype's
    subnormal spacing, which a rounded result may be off by (f16)."""
    g = np.asarray(got, dtype=np.float64).reshape(-1)
    r = np.asarray(ref, dtype=np.float64).reshape(-1)
    atol = atol + tiny
    if g.shape != r.shape:
        return {"passed": False, "max_abs_err": 0.0, "max_rel_err": 0.0,
                "rtol": rtol, "atol": atol, "n_bad": int(r.size),
                "method": "full"}, \
            f"output has {g.size} elements, expected {r.size}"
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        err = np.abs(g - r)
        ok = (err <= atol + rtol * np.abs(r)) | (np.isnan(g) & np.isnan(r)) \
            | (np.isinf(g) & (g == r))
        fin = np.isfinite(err)
        mabs = float(err[fin].max()) if fin.any() else 0.0
        rel = err / np.abs(r)
        rf = np.isfinite(rel)
        mrel = float(rel[rf].max()) if rf.any() else 0.0
    bad = int((~ok).sum())
    msg = None
    if bad:
        i = int(np.argmax(~ok))
        msg = (f"{bad} element(s) out of tolerance; first at output 0 index "
               f"{i}: got {g[i]:.9g}, expected {r[i]:.9g}")
    return {"passed": bad == 0, "max_abs_err": mabs, "max_rel_err": mrel,
            "rtol": rtol, "atol": atol, "n_bad": bad,
            "method": "full"}, msg


def alloc_counters(np, lib, mod, fn):
    """Allocations of one call, measured outside timing: NumPy through
    tracemalloc (its data buffers are traced in their own domain), PyTorch
    through its profiler's memory events."""
    if lib == "numpy":
        import tracemalloc
        dom = np.lib.tracemalloc_domain
        flt = [tracemalloc.DomainFilter(True, dom)]
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot().filter_traces(flt)
            cur0 = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            r = fn()
            peak = tracemalloc.get_traced_memory()[1] - cur0
            after = tracemalloc.take_snapshot().filter_traces(flt)
            diff = after.compare_to(before, "traceback")
            del r
        finally:
            tracemalloc.stop()
        n = sum(max(d.count_diff, 0) for d in diff)
        b = sum(max(d.size_diff, 0) for d in diff)
        return float(n), float(b), float(max(peak, 0))
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as pr:
        fn()
    ev = [e for e in pr.events() if e.self_cpu_memory_usage > 0]
    b = float(sum(e.self_cpu_memory_usage for e in ev))
    return float(len(ev)), b, b


def library_failure(rec, lib, e):
    # PyTorch 1.13 lacks many CPU kernels in float16 ("... not
    # implemented for 'Half'"): the library has no such kernel
    rec["status"] = ("unsupported" if "not implemented for" in str(e)
                     else "error")
    rec["message"] = f"{lib} raised {type(e).__name__}: {e}"
    return rec


def run_case(np, lib, mod, form, threads, c, warm, meas, overhead):
    rec = {
        "id": f"{c['key']}/{lib}[threads={threads},form={form}]",
        "op": c["op"], "category": c["category"], "dtype": c["dtype"],
        "shapes": c["shapes"], "out_shapes": c["out_shapes"],
        "params": c["params"], "backend": lib,
        "backend_params": {"threads": str(threads), "form": form},
        "impl": None, "status": "ok", "message": None, "model": c["model"],
        "check": None, "stats": None, "throughput": None, "counters": None,
        "timing": None,
    }
    dt = c["dtype"]
    if dt == "bf16" and lib == "numpy":
        rec["status"] = "unsupported"
        rec["message"] = "NumPy has no bfloat16 dtype"
        return rec
    npdt = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
            "bf16": np.float32}[dt]
    x = [np.load(f) for f in c["inputs"]]
    o = [np.empty(s, npdt) for s in c["out_shapes"]]
    if lib == "torch":
        x = [torch_tensor(np, mod, a) for a in x]
        o = [mod.from_numpy(a) for a in o]
        if dt == "bf16":
            o = [a.to(mod.bfloat16) for a in o]
    # outputs written into inputs (in-place ops, optimizer state) are
    # those inputs, as in tbench's runner: every call updates them
    for i, j in enumerate(c.get("in_place") or []):
        if j is not None and j >= 0 and i < len(o):
            o[i] = x[j]
    try:        # some twins run a forward or set up state here
        got = impl_for(c["op"], lib, mod, np, form, x, o, c["params"])
    except Exception as e:  # noqa: BLE001 - as a failing call, below
        return library_failure(rec, lib, e)
    if got is None or isinstance(got, str):
        rec["status"] = "unsupported"
        rec["message"] = got or (f"compare_numpy.py has no {lib} form of "
                                 f"'{c['op']}'")
        return rec
    fn, calls, name = got
    rec["impl"] = f"{lib}.{name}"
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - report any library failure
        return library_failure(rec, lib, e)
    op = c["op"]
    if op in ("svd", "qr", "eigh"):        # every output is checked
        rs = list(o if form == "out" else r)
    else:
        rs = [o[0] if form == "out" else r]
    if lib == "torch":
        rs = [v.detach().float().numpy() if dt in ("bf16", "f16")
              else v.detach().numpy() for v in rs]
    r = rs[0]
    ref = np.load(c["reference"][0])
    if op in ("svd", "qr", "eigh"):
        chk, msg = check_factorization(
            np, op, np.load(c["inputs"][0]), rs,
            [np.load(f) for f in c["reference"]], c["rtol"], c["atol"])
    elif op in ("rand_uniform", "rand_normal"):
        chk, msg = check_random(np, op, r, c["params"], dt)
    elif c["op"] == "dropout":
        chk, msg = check_dropout(np, r, np.load(c["inputs"][0]),
                                 float(c["params"].get("p", 0.5)),
                                 c["rtol"], c["atol"])
    else:
        chk, msg = check(np, r, ref, c["rtol"], c["atol"],
                         2.0 ** -24 if dt == "f16" else 0.0)
    rec["check"] = chk
    if not chk["passed"]:
        rec["status"] = "failed-check"
        rec["message"] = msg
        return rec
    seed = int(c["seed"], 16) & 0xFFFFFFFF if isinstance(c["seed"], str) \
        else int(c["seed"])
    samples, k, stop, wi, wns, sns, rus = measure(np, fn, warm, meas,
                                                  overhead, seed)
    st = stats_of(np, samples, k, stop, seed)
    rec["stats"] = st
    med = st["median_ns"]
    m = c["model"]
    rec["throughput"] = {
        "gb_s": m["bytes"] / med if med > 0 and m["bytes"] > 0 else None,
        "gflop_s": m["flops"] / med if med > 0 and m["flops"] > 0 else None,
        "items_s": m["items"] / med * 1e9 if med > 0 else 0.0,
    }
    na, nb, peak = alloc_counters(np, lib, mod, fn)
    bufs = list({id(a): a for a in x + o}.values())   # aliases once
    live = sum(a.nbytes for a in bufs) if lib == "numpy" else \
        sum(a.numel() * a.element_size() for a in bufs)
    rec["counters"] = {
        "kernel_launches": float(calls), "memcpy_count": 0.0,
        "memcpy_bytes": 0.0, "allocs": na, "alloc_bytes": nb,
        "device_allocs": 0.0, "device_alloc_bytes": 0.0,
        "peak_bytes": float(live) + peak, "peak_extra_bytes": peak,
        "minor_faults": rus["ru_minflt"], "major_faults": rus["ru_majflt"],
        "vol_ctx_switches": rus["ru_nvcsw"],
        "invol_ctx_switches": rus["ru_nivcsw"],
    }
    rec["timing"] = {"timer_overhead_ns": overhead, "warmup_iters": wi,
                     "warmup_ns": float(wns), "sampling_ns": float(sns)}
    return rec


# ---- environment --------------------------------------------------------------

ISA_FLAGS = ["sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f",
             "avx512bw", "avx512dq", "avx512vl", "avx512cd", "avx512_bf16",
             "avx512_vnni", "amx_tile", "avx512_fp16", "amx_bf16",
             "amx_int8"]


def read(path, default=None):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return default


def cpu_env():
    info = read("/proc/cpuinfo", "")
    first = {}
    cores = set()
    phys = core = None
    for line in info.splitlines():
        if ":" not in line:
            if phys is not None and core is not None:
                cores.add((phys, core))
            phys = core = None
            continue
        k, v = [s.strip() for s in line.split(":", 1)]
        first.setdefault(k, v)
        if k == "physical id":
            phys = v
        elif k == "core id":
            core = v
    flags = first.get("flags", "").split()
    caches = []
    base = "/sys/devices/system/cpu/cpu0/cache"
    for d in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        if not d.startswith("index"):
            continue
        lv, ty = read(f"{base}/{d}/level"), read(f"{base}/{d}/type")
        sz, sh = read(f"{base}/{d}/size"), read(f"{base}/{d}/shared_cpu_list")
        if not (lv and ty and sz):
            continue
        sz = sz.strip()
        mult = {"K": 1024, "M": 1 << 20, "G": 1 << 30}.get(sz[-1:], 1)
        caches.append({"level": int(lv), "type": ty.strip(),
                       "size_bytes": int(sz.rstrip("KMG")) * mult,
                       "shared_cpus": (sh or "").strip()})
    gov = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    return {
        "model": first.get("model name", "unknown"),
        "vendor": first.get("vendor_id", "unknown"),
        "isa": [f for f in ISA_FLAGS if f in flags],
        "logical_cpus": os.cpu_count(),
        "physical_cores": len(cores) or None,
        "mhz": float(first["cpu MHz"]) if "cpu MHz" in first else None,
        "caches": caches,
        "governor": gov.strip() if gov else None,
    }, "hypervisor" in flags


def meminfo():
    m = {}
    for line in (read("/proc/meminfo", "") or "").splitlines():
        k, _, v = line.partition(":")
        if v.strip().endswith("kB"):
            m[k] = int(v.split()[0]) * 1024
    return {"total_bytes": m.get("MemTotal"),
            "available_bytes": m.get("MemAvailable")}


def os_name():
    for line in (read("/etc/os-release", "") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return platform.system()


def blas_info():
    """The BLAS NumPy uses: the shared library mapped into this process
    after a matmul, and, for OpenBLAS, its config and core type."""
    import ctypes
    import numpy as np
    np.ones((2, 2)) @ np.ones((2, 2))
    libs = set()
    for line in (read("/proc/self/maps", "") or "").splitlines():
        path = line.split()[-1] if line.split() else ""
        if re.search(r"(blas|lapack|mkl)", os.path.basename(path)):
            libs.add(path)
    info = {"libraries": sorted(libs), "openblas_config": None,
            "openblas_corename": None,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE")}
    # Debian's libopenblas, or PyPI NumPy's scipy-openblas (its symbols
    # carry a prefix and, for the ILP64 build, a suffix)
    names = [("openblas_get_config", "openblas_get_corename"),
             ("scipy_openblas_get_config64_",
              "scipy_openblas_get_corename64_"),
             ("scipy_openblas_get_config", "scipy_openblas_get_corename")]
    for p in sorted(libs):
        for cfg, core in names:
            try:
                lib = ctypes.CDLL(p)
                fc, fn = getattr(lib, cfg), getattr(lib, core)
            except (OSError, AttributeError):
                continue
            fc.restype = fn.restype = ctypes.c_char_p
            info["openblas_config"] = fc().decode()
            info["openblas_corename"] = fn().decode()
            return info
    return info


def environment(tb, argv, torch_err, hyper_cpu, overhead_info, workers):
    import numpy as np
    cpu, hyper = hyper_cpu
    version, commit = tbench_version(tb)
    git = subprocess.run(["git", "-C", ROOT, "describe", "--always",
                          "--dirty", "--abbrev=12"], capture_output=True,
                         text=True)
    try:
        import torch
        tv = torch.__version__
    except Exception:  # noqa: BLE001
        tv = None
    load = os.getloadavg()
    warnings = []
    ncpu = cpu["logical_cpus"] or 1
    if cpu["governor"] and cpu["governor"] != "performance":
        warnings.append(f"The CPU frequency governor is '{cpu['governor']}', "
                        "not 'performance': clock changes add noise.")
    if load[0] > ncpu / 2:
        warnings.append(f"The 1-minute load average is {load[0]:.2f}, above "
                        f"half of the {ncpu} logical CPUs ({ncpu / 2:.1f}): "
                        "other processes are competing for the CPUs and "
                        "timings will be noisy.")
    if hyper:
        warnings.append("The CPU reports the 'hypervisor' flag, so this is a "
                        "virtual machine: timings include virtualization "
                        "noise.")
    if torch_err:
        warnings.append(f"PyTorch is unavailable: {torch_err}")
    bl = blas_info()
    return {
        "cpu": cpu, "memory": meminfo(),
        "os": {"name": os_name(), "kernel": platform.release(),
               "machine": platform.machine()},
        "hostname": socket.gethostname(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "loadavg": list(load),
        "build": {
            "tbench_version": version,
            "git_commit": git.stdout.strip() or commit or "unknown",
            "compiler": f"{platform.python_implementation()} "
                        f"{platform.python_version()} "
                        f"({platform.python_compiler()})",
            "build_type": "python",
            "python_executable": sys.executable,
        },
        "libraries": {"numpy": np.__version__, "torch": tv,
                      "python": platform.python_version(),
                      "blas": bl["openblas_config"] or
                      ", ".join(bl["libraries"]) or None},
        "blas": bl,
        "workers": workers,
        "clock": {"source": "time.perf_counter_ns",
                  "resolution_ns": time.get_clock_info(
                      "perf_counter").resolution * 1e9},
        "python_overhead": overhead_info,
        "command": " ".join(argv),
        "warnings": warnings,
    }


# ---- main ---------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(
        description="Run a tbench config with NumPy and PyTorch and write a "
                    "tbench result file (docs/FORMAT.md).")
    ap.add_argument("config", nargs="?")
    ap.add_argument("-o", "--output", help="result file to write")
    ap.add_argument("--tbench", default=os.path.join(ROOT, "build", "tbench"),
                    help="the tbench executable, for `tbench exec` "
                         "(default: build/tbench)")
    ap.add_argument("--threads", default="1,all",
                    help="thread counts, comma-separated; 'all' = every CPU "
                         "this process may use (default 1,all)")
    ap.add_argument("--forms", default="alloc,out",
                    help="alloc, out or alloc,out (default)")
    ap.add_argument("--backends", default="numpy,torch",
                    help="numpy, torch or numpy,torch (default)")
    ap.add_argument("--label", help="name the backends numpy-LABEL and "
                    "torch-LABEL (letters, digits, _): a second NumPy and "
                    "PyTorch, e.g. scripts/peers.sh's PyPI releases, next "
                    "to Debian's in one report")
    ap.add_argument("-f", "--filter", help="only cases whose id (without "
                    "the backend part) matches this glob")
    ap.add_argument("--worker", nargs=3, metavar=("PLAN", "THREADS", "OUT"),
                    help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker[0], int(a.worker[1]), a.worker[2])
        return 0
    if not a.config or not a.output:
        ap.error("CONFIG and -o FILE are required")
    tb = a.tbench
    if not (os.path.isfile(tb) and os.access(tb, os.X_OK)):
        die(f"--tbench: '{tb}' is not an executable (build tbench first: "
            "meson setup build && ninja -C build)")
    if a.label is not None and not re.fullmatch(r"[A-Za-z0-9_]{1,20}",
                                                  a.label):
        die(f"--label: expected 1-20 letters, digits or _, got '{a.label}'")
    forms = a.forms.split(",")
    backends = a.backends.split(",")
    if not set(forms) <= {"alloc", "out"} or not forms:
        die(f"--forms: expected alloc, out or alloc,out, got '{a.forms}'")
    if not set(backends) <= {"numpy", "torch"} or not backends:
        die(f"--backends: expected numpy, torch or numpy,torch, "
            f"got '{a.backends}'")
    ncpu = len(os.sched_getaffinity(0))
    threads = []
    for t in a.threads.split(","):
        n = ncpu if t == "all" else int(t) if t.isdigit() and int(t) > 0 \
            else None
        if n is None:
            die(f"--threads: expected positive integers or 'all', got '{t}'")
        if n not in threads:
            threads.append(n)

    cfg, text, warm, meas = load_config(a.config)
    ops = op_table(tb)
    seed = cfg.get("seed", 42)
    tmp = tempfile.mkdtemp(prefix="tbench-numpy-")
    try:
        cases, seen = [], set()
        for op, sarg, params, dtype in expand(cfg):
            d = os.path.join(tmp, f"c{len(cases)}")
            ex = exec_case(tb, op, sarg, params, dtype, seed, d)
            key = ex["id"].rsplit("/", 1)[0]
            if key in seen or (a.filter and not fnmatch.fnmatchcase(
                    key, a.filter)):
                shutil.rmtree(d, ignore_errors=True)
                continue
            seen.add(key)
            spec = ops[op]
            ptypes = {p["name"]: p["type"] for p in spec["params"]}
            prm = {k: (bool(v) if ptypes.get(k) == "bool" else v)
                   for k, v in ex.get("params", {}).items()}
            cases.append({
                "key": key, "op": op, "category": spec["category"],
                "in_place": spec.get("in_place"),
                "dtype": dtype,
                # a creation op (no input) has its output's shape, as
                # in tbench's results
                "shapes": [i["shape"] for i in ex["inputs"]] or
                          [o["shape"] for o in ex["outputs"]],
                "out_shapes": [o["shape"] for o in ex["outputs"]],
                "params": prm,
                "inputs": [os.path.join(d, i["file"]) for i in ex["inputs"]],
                "reference": [os.path.join(d, r["file"])
                              for r in ex["reference"]],
                "rtol": ex["check"]["rtol"], "atol": ex["check"]["atol"],
                "seed": ex.get("input_seed", seed),
                "model": model_of(spec, ex, dtype),
            })
        if not cases:
            die("no case to run" + (f" (filter '{a.filter}')"
                                    if a.filter else ""))
        plan = os.path.join(tmp, "plan.json")
        with open(plan, "w", encoding="utf-8") as f:
            json.dump({"warmup": {"min_time_ms": warm["min_time_ms"],
                                  "min_iters": warm["min_iters"]},
                       "measure": meas, "cases": cases, "forms": forms,
                       "backends": backends,
                       "overhead_threads": threads[0]}, f)
        results = []
        for n in threads:
            env = dict(os.environ, OMP_NUM_THREADS=str(n),
                       OPENBLAS_NUM_THREADS=str(n), MKL_NUM_THREADS=str(n))
            out = os.path.join(tmp, f"threads{n}.json")
            print(f"compare_numpy.py: {len(cases)} cases x "
                  f"{len(backends)} libraries x {len(forms)} forms, "
                  f"{n} thread{'s' if n > 1 else ''}", file=sys.stderr)
            p = subprocess.run([sys.executable, os.path.abspath(__file__),
                                "--worker", plan, str(n), out], env=env)
            if p.returncode != 0:
                die(f"worker for {n} thread(s) failed (exit {p.returncode})",
                    1)
            with open(out, encoding="utf-8") as f:
                results.append(json.load(f))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    torch_err = results[0]["torch_error"]
    recs = []
    for c in cases:                        # plan order: case, then variant
        for lib in backends:
            for r in results:
                for form in forms:
                    want = f"{c['key']}/{lib}[threads={r['threads']}," \
                           f"form={form}]"
                    m = [x for x in r["cases"] if x["id"] == want]
                    if m:
                        recs.append(m[0])
                    elif lib == "torch" and torch_err:
                        recs.append(unavailable(c, r["threads"], form,
                                                torch_err))
    if a.label:
        for r in recs:
            lib = r["backend"]
            r["backend"] = f"{lib}-{a.label}"
            r["id"] = r["id"].replace(f"/{lib}[", f"/{lib}-{a.label}[", 1)
    overhead_info = next((r.get("python_overhead") for r in results
                          if r.get("python_overhead")), None)
    argv = [sys.executable, "scripts/compare_numpy.py"] + sys.argv[1:]
    doc = {
        "schema": SCHEMA,
        "complete": True,
        "env": environment(tb, argv, torch_err, cpu_env(), overhead_info,
                           [{"threads": r["threads"],
                             "torch_get_num_threads": r["torch_threads"]}
                            for r in results]),
        "timer": {"source": "time.perf_counter_ns",
                  "overhead_ns": results[0]["timer_overhead_ns"]},
        "config": [{
            "path": a.config, "name": cfg["name"], "seed": seed,
            "warmup": {"min_time_s": warm["min_time_ms"] / 1e3,
                       "min_iters": warm["min_iters"]},
            "measure": {"sample_time_s": meas["sample_time_ms"] / 1e3,
                        "min_samples": meas["min_samples"],
                        "max_samples": meas["max_samples"],
                        "ci_target": meas["ci_target"],
                        "max_time_s": meas["max_time_s"]},
            "text": text,
        }],
        "summary": {},
        "cases": recs,
    }
    st = ["ok", "unsupported", "unavailable", "failed-check", "error",
          "skipped"]
    doc["summary"] = dict({"cases": len(recs)},
                          **{s: sum(r["status"] == s for r in recs)
                             for s in st})
    d = os.path.dirname(os.path.abspath(a.output))
    os.makedirs(d, exist_ok=True)
    fd, tmpf = tempfile.mkstemp(dir=d, prefix=".compare_numpy-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmpf, a.output)
    s = doc["summary"]
    print(f"compare_numpy.py: {a.output}: {s['cases']} cases (ok {s['ok']}, "
          f"unsupported {s['unsupported']}, unavailable {s['unavailable']}, "
          f"failed-check {s['failed-check']}, error {s['error']})",
          file=sys.stderr)
    return 1 if s["failed-check"] or s["error"] else 0


def unavailable(c, threads, form, why):
    return {
        "id": f"{c['key']}/torch[threads={threads},form={form}]",
        "op": c["op"], "category": c["category"], "dtype": c["dtype"],
        "shapes": c["shapes"], "out_shapes": c["out_shapes"],
        "params": c["params"], "backend": "torch",
        "backend_params": {"threads": str(threads), "form": form},
        "impl": None, "status": "unavailable",
        "message": f"PyTorch cannot be imported: {why}",
        "model": c["model"], "check": None, "stats": None,
        "throughput": None, "counters": None, "timing": None,
    }


if __name__ == "__main__":
    sys.exit(main())
