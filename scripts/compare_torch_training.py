#!/usr/bin/python3
"""PyTorch doing the work of tbench's training workloads (issue 14).

Usage:
    /usr/bin/python3 scripts/compare_torch_training.py [-o FILE] [--threads N]
                                                      [--quick]

Runs, with PyTorch (Debian's python3-torch, float32, N threads, default 1),
the same work as configs/training.json's cases and prints one line per
case with tbench's case id (backend part "torch[threads=N]"), the median
time per call and, for the model steps, steps/s and samples/s; -o writes
the same as JSON ({"cases": [{"id", "median_ns", "samples", ...}]}), to
set beside tbench's results.json.  It is a sibling of compare_numpy.py
but does not yet write tbench's result schema.

The same work, op for op:
- MLP K-256-128-10 (relu(x@W+b) twice, then x@W+b, log_softmax, nll_loss
  against targets i mod 10); CNN conv 1->16 3x3, ReLU, max-pool 2, conv
  16->32 3x3, ReLU, max-pool 2, flatten, linear -> 10; weights uniform in
  +-1/sqrt(fan_in); the batch uniform in [-1, 1].
- mlp_train_step / cnn_train_step: phase 0 the forward pass with autograd
  recording; phase 1 forward + backward (grads set to None first, as
  tbench frees them); phase 2 also torch.optim.SGD(lr=0.01,
  momentum=0.9, foreach=False).step().  *_infer_step: the forward pass
  under torch.no_grad().
- hooks: 1 a forward hook on every leaf module (each op a module: Linear,
  ReLU, ... as tbench hooks every op), 2 a full backward hook on each, 3
  both; each hook increments a counter.
- api_add: layer 0 torch.add(a, b, out=o) (the closest PyTorch has to a
  raw kernel call), 1 torch.ops.aten.add.out(a, b, out=o) (the dispatcher
  by name), 2 a + b (the allocating tensor API), 3 a + b through a module
  with a forward hook.
Timing: warm-up of >= 20 ms and 2 calls, then batches of calls lasting
~1 ms each until 0.5 s or 200 samples; the median of the per-call times
(time.perf_counter_ns); the JSON also has the 5th percentile and the
minimum.
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as Fn


def uniform(shape, bound, gen):
    return (torch.rand(shape, generator=gen, dtype=torch.float32) * 2 - 1) \
        * bound


class Op(nn.Module):
    """One op as a module, so hooks attach per op as in tbench."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *a):
        return self.fn(*a)


class MLP(nn.Module):
    def __init__(self, K, gen):
        super().__init__()
        dims = [(K, 256), (256, 128), (128, 10)]
        self.W = nn.ParameterList()
        self.b = nn.ParameterList()
        for k, n in dims:
            bound = 1 / math.sqrt(k)
            self.W.append(nn.Parameter(uniform((k, n), bound, gen)))
            self.b.append(nn.Parameter(uniform((n,), bound, gen)))
        self.lin = nn.ModuleList([Op(lambda x, W, b: torch.relu(x @ W + b))
                                  for _ in range(2)])
        self.mm = Op(lambda x, W: x @ W)
        self.add = Op(lambda x, b: x + b)
        self.lsm = Op(lambda x: torch.log_softmax(x, 1))
        self.nll = Op(Fn.nll_loss)

    def forward(self, x, t):
        h = self.lin[0](x, self.W[0], self.b[0])
        h = self.lin[1](h, self.W[1], self.b[1])
        h = self.add(self.mm(h, self.W[2]), self.b[2])
        return self.nll(self.lsm(h), t)


class CNN(nn.Module):
    def __init__(self, gen):
        super().__init__()

        def p(shape, fan):
            return nn.Parameter(uniform(shape, 1 / math.sqrt(fan), gen))
        self.c1, self.cb1 = p((16, 1, 3, 3), 9), p((16,), 9)
        self.c2, self.cb2 = p((32, 16, 3, 3), 144), p((32,), 144)
        self.W, self.b = p((800, 10), 800), p((10,), 800)
        self.conv = nn.ModuleList([Op(Fn.conv2d) for _ in range(2)])
        self.relu = nn.ModuleList([Op(torch.relu) for _ in range(2)])
        self.pool = nn.ModuleList([Op(lambda x: Fn.max_pool2d(x, 2))
                                   for _ in range(2)])
        self.mm = Op(lambda x, W: x @ W)
        self.add = Op(lambda x, b: x + b)
        self.lsm = Op(lambda x: torch.log_softmax(x, 1))
        self.nll = Op(Fn.nll_loss)

    def forward(self, x, t):
        h = self.pool[0](self.relu[0](self.conv[0](x, self.c1, self.cb1)))
        h = self.pool[1](self.relu[1](self.conv[1](h, self.c2, self.cb2)))
        h = self.add(self.mm(h.reshape(h.shape[0], -1), self.W), self.b)
        return self.nll(self.lsm(h), t)


def measure(fn, max_time=0.5, max_samples=200):
    t0 = time.perf_counter_ns()
    n = 0
    while n < 2 or time.perf_counter_ns() - t0 < 20e6:
        fn()
        n += 1
    per = (time.perf_counter_ns() - t0) / n
    k = max(1, int(1e6 / max(per, 1)))
    samples = []
    start = time.perf_counter_ns()
    while len(samples) < max_samples and \
            (len(samples) < 3 or time.perf_counter_ns() - start < max_time * 1e9):
        a = time.perf_counter_ns()
        for _ in range(k):
            fn()
        samples.append((time.perf_counter_ns() - a) / k)
    return statistics.median(samples), len(samples), k, \
        sorted(samples)[len(samples) // 20], min(samples)


def add_hooks(model, hooks, counter):
    def f(*a):
        counter[0] += 1
    for m in model.modules():
        if isinstance(m, Op):
            if hooks & 1:
                m.register_forward_hook(f)
            if hooks & 2:
                m.register_full_backward_hook(f)


def model_case(kind, B, phase, hooks, infer, threads):
    gen = torch.Generator().manual_seed(14)
    model = MLP(784, gen) if kind == "mlp" else CNN(gen)
    shape = (B, 784) if kind == "mlp" else (B, 1, 28, 28)
    x = uniform(shape, 1.0, gen)
    t = torch.arange(B) % 10
    counter = [0]
    add_hooks(model, hooks, counter)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9,
                          foreach=False)

    if infer:
        def fn():
            with torch.no_grad():
                model(x, t)
    else:
        def fn():
            if phase >= 1:
                opt.zero_grad(set_to_none=True)
            loss = model(x, t)
            if phase >= 1:
                loss.backward()
            if phase == 2:
                opt.step()
    return fn, counter


def api_case(n, layer):
    a, b = torch.rand(n), torch.rand(n)
    o = torch.empty(n)
    if layer == 0:
        return lambda: torch.add(a, b, out=o)
    if layer == 1:
        op = torch.ops.aten.add.out
        return lambda: op(a, b, out=o)
    if layer == 2:
        return lambda: a + b
    m = Op(lambda x, y: x + y)
    m.register_forward_hook(lambda *args: None)
    return lambda: m(a, b)


def cases(quick):
    out = []
    for ph in (0, 1):
        for hk in ((0, 1) if ph == 0 else (0, 1, 2, 3)):
            out.append(("mlp_train_step", "mlp", 128, ph, hk, False))
    batches = (1, 32) if quick else (1, 8, 32, 128, 512)
    for kind in ("mlp", "cnn"):
        for B in batches:
            out.append((f"{kind}_train_step", kind, B, 2, 0, False))
            out.append((f"{kind}_infer_step", kind, B, 0, 0, True))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    be = f"torch[threads={a.threads}]"
    res = []
    for op, kind, B, ph, hk, infer in cases(a.quick):
        fn, counter = model_case(kind, B, ph, hk, infer, a.threads)
        med, ns, k, p5, mn = measure(fn)
        shape = f"{B}x784" if kind == "mlp" else f"{B}x1x28x28"
        prm = f"[hooks={hk}]" if infer else \
            f"[phase={ph},hooks={hk},lr=0.01,momentum=0.9,pool=0]"
        cid = f"{op}{prm}/{shape}/f32/{be}"
        calls = ns * k + 2
        res.append({"id": cid, "median_ns": med, "p5_ns": p5, "min_ns": mn,
                    "samples": ns, "steps_per_s": 1e9 / med, "samples_per_s": B * 1e9 / med,
                    "hook_calls_per_call": counter[0] / max(calls, 1)})
        print(f"{cid:80s} {med / 1e3:12.1f} us {1e9 / med:10.1f} steps/s "
              f"{B * 1e9 / med:12.0f} samples/s", flush=True)
    for n in (16, 1048576):
        for layer in range(4):
            med, ns, k, p5, mn = measure(api_case(n, layer))
            cid = f"api_add[layer={layer},pool=0]/{n},{n}/f32/{be}"
            res.append({"id": cid, "median_ns": med, "p5_ns": p5,
                        "min_ns": mn, "samples": ns})
            print(f"{cid:80s} {med:12.1f} ns", flush=True)
    if a.output:
        with open(a.output, "w") as f:
            json.dump({"tool": "compare_torch_training", "torch":
                       torch.__version__, "threads": a.threads,
                       "cases": res}, f, indent=1)


main()
