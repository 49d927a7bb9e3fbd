#!/usr/bin/python3
"""PyTorch doing the work of tbench's training workloads (issue 14), in
tbench's result schema.

Usage:
    /usr/bin/python3 scripts/compare_torch_training.py [CONFIG] -o FILE
        [--tbench PATH] [--threads N] [--quick]

CONFIG (default configs/training.json) is a tbench config of the workload
ops (mlp_train_step, mlp_infer_step, cnn_train_step, cnn_infer_step,
tfm_train_step, tfm_infer_step, api_add).  Its cases come from `tbench run CONFIG --list-cases`, so the
ids are tbench's with the backend part "torch[threads=N]": `tbench report
RESULTS --with FILE` pairs them with tbench's cases.  FILE is a result
file in tbench's schema (tbench.results/1, docs/FORMAT.md: "Files written
by compare_torch_training.py"), timed with the same loop and statistics
as scripts/compare_numpy.py (tbench's warm-up, batching, stopping rule,
bootstrap CI; the config's warmup and measure; rounds are not
interleaved).  --quick replaces the config's warmup and measure by a few
milliseconds per case (the tests).  Ops of another kind are written as
"unsupported" (use compare_numpy.py for them).

The same work, op for op (PyTorch 1.13, float32 or float64 as the case,
N threads, default 1):
- MLP K-256-128-10 (relu(x@W+b) twice as one op each, then x@W, + b,
  log_softmax, nll_loss against targets i mod 10: tbench's 6 ops); CNN conv 1->16 3x3, ReLU, max-pool 2, conv
  16->32 3x3, ReLU, max-pool 2, flatten, linear -> 10; weights uniform in
  +-1/sqrt(fan_in); the batch uniform in [-1, 1] (PyTorch's generator
  seeded with the config's seed: the values differ from tbench's, the
  work does not).
- the transformer block (tfm_*, src/ops/models.h) on x [B, S, D], heads
  H: rms(x, g) = x / sqrt(mean(x^2) + 1e-6) * g (torch 1.13 has no
  F.rms_norm), q, k, v = rms(x, g1) @ Wq, Wk, Wv split to [B, H, S, Dh],
  softmax(q k^T / sqrt(Dh) + mask) v with mask -inf above the diagonal,
  merged back, h = x + (.) @ Wo, y = h + gelu(rms(h, g2) @ W1) @ W2
  (F.gelu, the erf form), loss mean(y * y); bias-free, the norm weights
  ones (tbench's 18 ops; each a module for the hooks).
- *_train_step: phase 0 the forward pass with autograd recording; phase 1
  forward + backward (grads set to None first, as tbench frees them);
  phase 2 also torch.optim.SGD(lr, momentum, foreach=False).step(), with
  tbench's state window (state_window, default 100): before a batch that
  would take the steps since the state was set past it, outside the
  clock, the weights are set back to their initial values and the
  optimizer's state cleared, so both sides time the same first steps.
  *_infer_step: the forward pass under torch.no_grad().
- hooks: 1 a forward hook on every op (each op a module, as tbench hooks
  every op of the tape), 2 a full backward hook on each, 3 both; each
  hook increments a counter.
- api_add: layer 0 torch.add(a, b, out=o) (the closest PyTorch has to a
  raw kernel call), 1 torch.ops.aten.add.out(a, b, out=o) (the
  dispatcher by name), 2 a + b (the allocating tensor API), 3 a + b
  through a module with a forward hook.
- pool=1 cases: "unsupported" (PyTorch's CPU allocator has no caching
  pool to switch on; the pool=0 cases are PyTorch's default).
Each case's first call (the loss, the log-probabilities, the sum) is
checked against the same case run by PyTorch in float64 (the same values:
inputs and weights are drawn in float64), with tbench's tolerances for
the workloads (f32: rtol 1e-4, atol 1e-5).  Not against tbench's
reference: the inputs differ; the models' gradients and parameters after
training steps are checked against PyTorch by tbench's own tests.
"""
import argparse
import importlib.util
import math
import os
import re
import subprocess
import sys
import tempfile
import json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = ("mlp_train_step", "mlp_infer_step", "cnn_train_step",
             "cnn_infer_step", "tfm_train_step", "tfm_infer_step", "api_add")


def die(msg, code=2):
    print(f"compare_torch_training.py: {msg}", file=sys.stderr)
    sys.exit(code)


def load_compare_numpy():
    """compare_numpy.py's timing loop, statistics and environment, so both
    scripts measure alike."""
    spec = importlib.util.spec_from_file_location(
        "compare_numpy", os.path.join(ROOT, "scripts", "compare_numpy.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def parse_id(cid):
    """tbench's id OP[K=V,...]/SHAPES/DTYPE/BACKEND -> parts."""
    m = re.match(r"^([a-z0-9_]+)(?:\[([^\]]*)\])?/([0-9x,]+)/(f32|f64)/", cid)
    if not m:
        return None
    params = {}
    for kv in (m.group(2) or "").split(","):
        if kv:
            k, v = kv.split("=", 1)
            params[k] = float(v) if re.search(r"[.eE]", v) else int(v)
    shapes = [[int(d) for d in s.split("x")] for s in m.group(3).split(",")]
    key = cid[:m.end() - 1]
    return key, m.group(1), params, shapes, m.group(4)


def list_cases(tb, config):
    p = subprocess.run([tb, "run", config, "--list-cases"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{tb} run {config} --list-cases: {p.stderr.strip()}")
    out, seen = [], set()
    for line in p.stdout.splitlines():
        got = parse_id(line.strip())
        if got and got[0] not in seen:
            seen.add(got[0])
            out.append(got)
    return out


# ---- the cost model: tbench's (src/ops/op.c, models.c) ----------------------

def out_shape(op, x):
    if op == "api_add" or op == "tfm_infer_step":
        return list(x)
    return [1] if op.endswith("train_step") else [x[0], 10]


def model_of(op, params, shapes, dtype):
    size = 4 if dtype == "f32" else 8
    x = shapes[0]
    o = out_shape(op, x)
    numel = [math.prod(s) for s in shapes] + [math.prod(o)]
    if op == "api_add":
        fl = float(numel[-1])
    else:
        B = x[0]
        if op.startswith("tfm"):
            S, D = x[1], x[2]
            fl = 2.0 * B * S * (4 + 2 * 4) * D * D + \
                2.0 * 2 * B * D * S * (S + 1) / 2
        elif op.startswith("mlp"):
            fl = 2.0 * B * (x[1] * 256 + 256 * 128 + 128 * 10)
        else:
            h1, w1 = x[2] - 2, x[3] - 2
            h2, w2 = h1 // 2 - 2, w1 // 2 - 2
            flat = 32 * (h2 // 2) * (w2 // 2)
            fl = 2.0 * B * (16 * h1 * w1 * 9 + 32 * h2 * w2 * 16 * 9 +
                            flat * 10)
        if op.endswith("train_step") and params.get("phase", 2) != 0:
            fl *= 3
    return {"flops": fl, "bytes": float(sum(numel) * size),
            "items": float(max(numel)), "reduce_len": 1.0}


# ---- the PyTorch side ---------------------------------------------------------

def build(torch, seed):
    nn = torch.nn
    Fn = torch.nn.functional

    def uniform(shape, bound, gen, dt):
        # drawn in f64 and rounded, so an f64 copy of a case has the same
        # values (the check's reference)
        return ((torch.rand(shape, generator=gen, dtype=torch.float64) * 2 -
                 1) * bound).to(dt)

    class Op(nn.Module):
        """One op as a module, so hooks attach per op as in tbench."""

        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, *a):
            return self.fn(*a)

    class MLP(nn.Module):
        def __init__(self, K, gen, dt):
            super().__init__()
            self.W = nn.ParameterList()
            self.b = nn.ParameterList()
            for k, n in ((K, 256), (256, 128), (128, 10)):
                bound = 1 / math.sqrt(k)
                self.W.append(nn.Parameter(uniform((k, n), bound, gen, dt)))
                self.b.append(nn.Parameter(uniform((n,), bound, gen, dt)))
            # 6 ops as tbench's tape: linear (fused relu(x @ W + b)) twice,
            # matmul, add, log_softmax, nll_loss
            self.lin = nn.ModuleList([Op(lambda x, W, b: torch.relu(x @ W + b))
                                      for _ in range(2)])
            self.mm = Op(lambda x, W: x @ W)
            self.add = Op(lambda x, b: x + b)
            self.lsm = Op(lambda x: torch.log_softmax(x, 1))
            self.nll = Op(Fn.nll_loss)

        def forward(self, x, t):
            h = self.lin[0](x, self.W[0], self.b[0])
            h = self.lin[1](h, self.W[1], self.b[1])
            lp = self.lsm(self.add(self.mm(h, self.W[2]), self.b[2]))
            return lp if t is None else self.nll(lp, t)

    class CNN(nn.Module):
        def __init__(self, x, gen, dt):
            super().__init__()

            def p(shape, fan):
                return nn.Parameter(uniform(shape, 1 / math.sqrt(fan), gen,
                                            dt))
            h2, w2 = (x[2] - 2) // 2 - 2, (x[3] - 2) // 2 - 2
            flat = 32 * (h2 // 2) * (w2 // 2)
            self.c1, self.cb1 = p((16, 1, 3, 3), 9), p((16,), 9)
            self.c2, self.cb2 = p((32, 16, 3, 3), 144), p((32,), 144)
            self.W, self.b = p((flat, 10), flat), p((10,), flat)
            self.conv = nn.ModuleList([Op(Fn.conv2d) for _ in range(2)])
            self.relu = nn.ModuleList([Op(torch.relu) for _ in range(2)])
            self.pool = nn.ModuleList([Op(lambda x: Fn.max_pool2d(x, 2))
                                       for _ in range(2)])
            self.mm = Op(lambda x, W: x @ W)
            self.add = Op(lambda x, b: x + b)
            self.lsm = Op(lambda x: torch.log_softmax(x, 1))
            self.nll = Op(Fn.nll_loss)

        def forward(self, x, t):
            h = self.pool[0](self.relu[0](self.conv[0](x, self.c1,
                                                       self.cb1)))
            h = self.pool[1](self.relu[1](self.conv[1](h, self.c2,
                                                       self.cb2)))
            h = self.add(self.mm(h.reshape(h.shape[0], -1), self.W), self.b)
            lp = self.lsm(h)
            return lp if t is None else self.nll(lp, t)

    class TFM(nn.Module):
        """The pre-norm block of tbench's tfm_*_step, op for op."""

        def __init__(self, x, heads, gen, dt):
            super().__init__()
            D = x[2]
            self.H = heads

            def p(shape, fan):
                return nn.Parameter(uniform(shape, 1 / math.sqrt(fan), gen,
                                            dt))
            self.g1 = nn.Parameter(torch.ones(D, dtype=dt))
            self.Wq, self.Wk = p((D, D), D), p((D, D), D)
            self.Wv, self.Wo = p((D, D), D), p((D, D), D)
            self.g2 = nn.Parameter(torch.ones(D, dtype=dt))
            self.W1, self.W2 = p((D, 4 * D), D), p((4 * D, D), 4 * D)

            def rms(x, g):
                return x * torch.rsqrt((x * x).mean(-1, keepdim=True) +
                                       1e-6) * g
            self.norm = nn.ModuleList([Op(rms) for _ in range(2)])
            self.mm = nn.ModuleList([Op(lambda a, W: a @ W)
                                     for _ in range(6)])
            self.perm = nn.ModuleList([Op(lambda a: a.permute(0, 2, 1, 3))
                                       for _ in range(4)])
            S = x[1]
            mask = torch.full((S, S), -math.inf, dtype=dt).triu(1)
            scale = 1 / math.sqrt(D // heads)
            self.attn = Op(lambda q, k, v: torch.softmax(
                q @ k.transpose(-1, -2) * scale + mask, -1) @ v)
            self.add = nn.ModuleList([Op(torch.add) for _ in range(2)])
            self.gelu = Op(Fn.gelu)
            self.mul = Op(torch.mul)
            self.mean = Op(torch.mean)

        def forward(self, x, t):
            B, S, D = x.shape
            H, Dh = self.H, D // self.H
            x2 = x.reshape(B * S, D)
            n = self.norm[0](x2, self.g1)
            q, k, v = (self.perm[i](self.mm[i](n, W).reshape(B, S, H, Dh))
                       for i, W in enumerate((self.Wq, self.Wk, self.Wv)))
            a = self.perm[3](self.attn(q, k, v)).reshape(B * S, D)
            h = self.add[0](x2, self.mm[3](a, self.Wo))
            u = self.gelu(self.mm[4](self.norm[1](h, self.g2), self.W1))
            y = self.add[1](h, self.mm[5](u, self.W2))
            return y.reshape(B, S, D) if t is None else \
                self.mean(self.mul(y, y))

    def add_hooks(model, hooks, counter):
        def f(*a):
            counter[0] += 1
        for m in model.modules():
            if isinstance(m, Op):
                if hooks & 1:
                    m.register_forward_hook(f)
                if hooks & 2:
                    m.register_full_backward_hook(f)

    def model_case(op, params, x, dt):
        gen = torch.Generator().manual_seed(seed)
        if op.startswith("tfm"):
            model = TFM(x, int(params.get("heads", 4)), gen, dt)
        elif op.startswith("mlp"):
            model = MLP(x[1], gen, dt)
        else:
            model = CNN(x, gen, dt)
        xb = uniform(tuple(x), 1.0, gen, dt)
        t = torch.arange(x[0]) % 10
        counter = [0]
        add_hooks(model, int(params.get("hooks", 0)), counter)
        if op.endswith("infer_step"):
            def fn():
                with torch.no_grad():
                    return model(xb, None)
            return fn, "no_grad forward"
        phase = int(params.get("phase", 2))
        opt = torch.optim.SGD(model.parameters(), lr=params.get("lr", 0.01),
                              momentum=params.get("momentum", 0.9),
                              foreach=False)

        # tbench's state window (CONFIG.md, state_window): before a batch
        # that would take the steps since the state was set past the
        # window, the weights are set back to their initial values and the
        # optimizer's state cleared (its momentum buffers, as at the start)
        window = int(params.get("state_window", 100)) if phase == 2 else 0
        init = [p.detach().clone() for p in model.parameters()]
        since = [0]

        def step():
            if phase >= 1:
                opt.zero_grad(set_to_none=True)
            loss = model(xb, t)
            if phase >= 1:
                loss.backward()
            if phase == 2:
                opt.step()
                since[0] += 1
            return loss

        def before(k):
            if window <= 0 or since[0] == 0 or since[0] + k <= window:
                return
            with torch.no_grad():
                for p, p0 in zip(model.parameters(), init):
                    p.copy_(p0)
            opt.state.clear()
            since[0] = 0
        step.before = before
        return step, ["forward", "forward+backward",
                      "forward+backward+SGD(momentum).step"][phase]

    def api_case(layer, n, dt):
        a, b = torch.rand(n, dtype=dt), torch.rand(n, dtype=dt)
        o = torch.empty(n, dtype=dt)
        if layer == 0:
            return (lambda: torch.add(a, b, out=o)), "add(out=)", \
                a.double() + b.double()
        if layer == 1:
            f = torch.ops.aten.add.out
            return (lambda: f(a, b, out=o)), "aten.add.out", \
                a.double() + b.double()
        if layer == 2:
            return (lambda: a + b), "a + b", a.double() + b.double()
        m = Op(lambda u, v: u + v)
        m.register_forward_hook(lambda *args: None)
        return (lambda: m(a, b)), "module(a + b) with a forward hook", \
            a.double() + b.double()

    return model_case, api_case


def run_case(cn, np, torch, fns, key, op, params, shapes, dtype, threads,
             warm, meas, overhead, seed):
    model_case, api_case = fns
    rec = {
        "id": f"{key}/torch[threads={threads}]", "op": op,
        "category": "workload", "dtype": dtype, "shapes": shapes,
        "out_shapes": [out_shape(op, shapes[0])],
        "params": {k: (bool(v) if k == "pool" else v)
                   for k, v in params.items()},
        "backend": "torch", "backend_params": {"threads": str(threads)},
        "impl": None, "status": "ok", "message": None,
        "model": model_of(op, params, shapes, dtype), "check": None,
        "stats": None, "throughput": None, "counters": None, "timing": None,
    }
    if op not in WORKLOADS:
        rec["status"] = "unsupported"
        rec["message"] = ("compare_torch_training.py runs the training "
                          "workloads only (compare_numpy.py runs the ops)")
        return rec
    if params.get("pool"):
        rec["status"] = "unsupported"
        rec["message"] = ("PyTorch's CPU allocator has no caching pool to "
                          "switch on")
        return rec
    dt = torch.float32 if dtype == "f32" else torch.float64
    rtol, atol = (1e-4, 1e-5) if dtype == "f32" else (1e-10, 1e-12)
    try:
        if op == "api_add":
            fn, name, ref = api_case(int(params.get("layer", 0)),
                                     math.prod(shapes[0]), dt)
        else:
            fn, name = model_case(op, params, shapes[0], dt)
            ref = model_case(op, params, shapes[0], torch.float64)[0]()
        rec["impl"] = f"torch.{name}"
        got = fn()
    except Exception as e:  # noqa: BLE001 - report any library failure
        rec["status"] = "error"
        rec["message"] = f"torch raised {type(e).__name__}: {e}"
        return rec
    # the first call (the initial weights) against the same case in f64
    chk, msg = cn.check(np, got.detach().numpy(), ref.detach().numpy(),
                        rtol, atol)
    rec["check"] = chk
    if not chk["passed"]:
        rec["status"] = "failed-check"
        rec["message"] = msg
        return rec
    samples, k, stop, wi, wns, sns, rus = cn.measure(
        np, fn, warm, meas, overhead, seed, getattr(fn, "before", None))
    st = cn.stats_of(np, samples, k, stop, seed)
    rec["stats"] = st
    med = st["median_ns"]
    m = rec["model"]
    rec["throughput"] = {
        "gb_s": m["bytes"] / med if med > 0 and m["bytes"] > 0 else None,
        "gflop_s": m["flops"] / med if med > 0 and m["flops"] > 0 else None,
        "items_s": m["items"] / med * 1e9 if med > 0 else 0.0,
        "steps_s": 1e9 / med if med > 0 and op != "api_add" else None,
    }
    na, nb, peak = cn.alloc_counters(np, "torch", torch, fn)
    rec["counters"] = {
        "kernel_launches": 0.0, "memcpy_count": 0.0, "memcpy_bytes": 0.0,
        "allocs": na, "alloc_bytes": nb, "device_allocs": 0.0,
        "device_alloc_bytes": 0.0, "peak_bytes": peak,
        "peak_extra_bytes": peak,
        "minor_faults": rus["ru_minflt"], "major_faults": rus["ru_majflt"],
        "vol_ctx_switches": rus["ru_nvcsw"],
        "invol_ctx_switches": rus["ru_nivcsw"],
    }
    rec["timing"] = {"timer_overhead_ns": overhead, "warmup_iters": wi,
                     "warmup_ns": float(wns), "sampling_ns": float(sns)}
    return rec


def main():
    ap = argparse.ArgumentParser(
        description="Run tbench's training workloads with PyTorch and write "
                    "a tbench result file (docs/FORMAT.md).")
    ap.add_argument("config", nargs="?",
                    default=os.path.join(ROOT, "configs", "training.json"))
    ap.add_argument("-o", "--output", required=True,
                    help="result file to write")
    ap.add_argument("--tbench", default=os.path.join(ROOT, "build", "tbench"),
                    help="the tbench executable, for --list-cases "
                         "(default: build/tbench)")
    ap.add_argument("--threads", type=int, default=1,
                    help="PyTorch's thread count (default 1)")
    ap.add_argument("--quick", action="store_true",
                    help="a few milliseconds per case (tests)")
    a = ap.parse_args()
    if a.threads < 1:
        die(f"--threads: expected a positive integer, got {a.threads}")
    tb = a.tbench
    if not (os.path.isfile(tb) and os.access(tb, os.X_OK)):
        die(f"--tbench: '{tb}' is not an executable (build tbench first: "
            "meson setup build && ninja -C build)")
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = str(a.threads)
    os.environ.setdefault("GLOG_minloglevel", "2")  # the profiler's notes
    cn = load_compare_numpy()
    cfg, text, warm, meas = cn.load_config(a.config)
    if a.quick:
        warm = {"min_time_ms": 1, "min_iters": 1}
        meas = {"sample_time_ms": 0.5, "min_samples": 3, "max_samples": 10,
                "ci_target": 0.5, "max_time_s": 0.02}
    seed = int(cfg.get("seed", 42))
    cases = list_cases(tb, a.config)
    if not cases:
        die(f"{a.config}: no case to run")
    import numpy as np
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure
        die(f"PyTorch cannot be imported: {type(e).__name__}: {e}", 1)
    torch.set_num_threads(a.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    fns = build(torch, seed)
    overhead = cn.timer_overhead()
    recs = []
    for i, (key, op, params, shapes, dtype) in enumerate(cases):
        recs.append(run_case(cn, np, torch, fns, key, op, params, shapes,
                             dtype, a.threads, warm, meas, overhead,
                             seed + i))
        r = recs[-1]
        med = r["stats"]["median_ns"] if r["stats"] else None
        print(f"{r['id']:90s} {r['status']:11s} "
              f"{'' if med is None else f'{med / 1e3:12.1f} us'}",
              file=sys.stderr, flush=True)
    argv = ["/usr/bin/python3", "scripts/compare_torch_training.py"] + \
        sys.argv[1:]
    env = cn.environment(tb, argv, None, cn.cpu_env(), None,
                         [{"threads": a.threads,
                           "torch_get_num_threads": torch.get_num_threads()}])
    st = ["ok", "unsupported", "unavailable", "failed-check", "error",
          "skipped"]
    doc = {
        "schema": cn.SCHEMA, "complete": True, "env": env,
        "timer": {"source": "time.perf_counter_ns", "overhead_ns": overhead},
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
        "summary": dict({"cases": len(recs)},
                        **{s: sum(r["status"] == s for r in recs)
                           for s in st}),
        "cases": recs,
    }
    d = os.path.dirname(os.path.abspath(a.output))
    os.makedirs(d, exist_ok=True)
    fd, tmpf = tempfile.mkstemp(dir=d, prefix=".compare_torch-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmpf, a.output)
    s = doc["summary"]
    print(f"compare_torch_training.py: {a.output}: {s['cases']} cases (ok "
          f"{s['ok']}, unsupported {s['unsupported']}, error {s['error']})",
          file=sys.stderr)
    return 1 if s["error"] or s["failed-check"] else 0


if __name__ == "__main__":
    sys.exit(main())
