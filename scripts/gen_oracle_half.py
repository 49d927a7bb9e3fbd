#!/usr/bin/python3
"""Generate tests/data/half_vectors.h: PyTorch oracle vectors for tbench's
bf16 and f16 ops (tests/test_half_oracle.c).

Run with Debian's /usr/bin/python3 (python3-torch, python3-numpy):

    /usr/bin/python3 scripts/gen_oracle_half.py [OUTPUT]

Deterministic (fixed seed) and committed, so the C tests need no Python.

For each case the inputs are drawn in float32, rounded to the dtype (so
the C test stores them exactly as doubles), and the expected output is
what PyTorch computes for those 16-bit tensors on the CPU:

- "torch": the op run by PyTorch in the dtype itself (bf16 everywhere
  PyTorch 1.13 has the CPU kernel);
- "torch-f32": where PyTorch 1.13 has no CPU kernel in the dtype (most
  f16 ops; "not implemented for 'Half'"), the op run by PyTorch in float32
  on the widened inputs, the result rounded once to the dtype: the
  numerics PyTorch's own 16-bit CPU kernels use (compute in float, round
  the result once) and its later versions run.

The expected value is written as the double the 16-bit result holds.
Cases where PyTorch's own result is not within one rounding of a float64
computation on the same inputs are refused (the script stops): the oracle
must be correct before it judges anything.
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

SEED = 20261128
TDT = {"bf16": torch.bfloat16, "f16": torch.float16}
EPS = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10}


def rounded(shape, lo, hi, dt, gen):
    x = torch.from_numpy(gen.uniform(lo, hi, size=shape).astype(np.float32))
    return x.to(TDT[dt])


# name, op, input shapes, input domains, params, torch function of the
# inputs (tensors) and params, and reduction length (for the sanity check)
def cases():
    ew = [
        ("add", [[37], [37]], None, {}, lambda a, b: a + b),
        ("add", [[4, 9], [9]], None, {}, lambda a, b: a + b),
        ("sub", [[37], [37]], None, {}, lambda a, b: a - b),
        ("mul", [[37], [37]], None, {}, lambda a, b: a * b),
        ("div", [[37], [37]], [(-1, 1), (0.5, 2)], {}, lambda a, b: a / b),
        ("add_relu", [[37], [37]], None, {}, lambda a, b: torch.relu(a + b)),
        ("maximum", [[37], [37]], None, {}, torch.maximum),
        ("minimum", [[37], [37]], None, {}, torch.minimum),
        ("pow", [[37], [37]], [(0.1, 2), (-2, 2)], {}, torch.pow),
        ("add_scalar", [[37]], None, {"scalar": 0.3},
         lambda a, scalar: a + scalar),
        ("mul_scalar", [[37]], None, {"scalar": 1.7},
         lambda a, scalar: a * scalar),
        ("neg", [[37]], None, {}, torch.neg),
        ("abs", [[37]], None, {}, torch.abs),
        ("exp", [[37]], [(-4, 4)], {}, torch.exp),
        ("log", [[37]], [(0.01, 10)], {}, torch.log),
        ("sqrt", [[37]], [(0, 10)], {}, torch.sqrt),
        ("rsqrt", [[37]], [(0.01, 10)], {}, torch.rsqrt),
        ("relu", [[37]], None, {}, torch.relu),
        ("leaky_relu", [[37]], None, {"alpha": 0.1},
         lambda a, alpha: F.leaky_relu(a, alpha)),
        ("sigmoid", [[37]], [(-6, 6)], {}, torch.sigmoid),
        ("tanh", [[37]], [(-3, 3)], {}, torch.tanh),
        ("gelu", [[37]], [(-4, 4)], {}, F.gelu),
        ("gelu_tanh", [[37]], [(-4, 4)], {},
         lambda a: F.gelu(a, approximate="tanh")),
        ("silu", [[37]], [(-6, 6)], {}, F.silu),
        ("softplus", [[37]], [(-6, 6)], {}, F.softplus),
        ("hardswish", [[37]], [(-4, 4)], {}, F.hardswish),
    ]
    for name, shapes, dom, params, fn in ew:
        yield name, name, shapes, dom, params, fn, 1
    red = [
        ("sum", [[200]], {}, lambda a: a.sum(), 200),
        ("sum_axis0", [[50, 6]], {"axis": 0}, lambda a, **k: a.sum(0), 50),
        ("mean", [[7, 30]], {"axis": 1}, lambda a, **k: a.mean(1), 30),
        ("max", [[7, 30]], {"axis": 1}, lambda a, **k: a.amax(1), 1),
        ("min", [[7, 30]], {"axis": 0}, lambda a, **k: a.amin(0), 1),
        ("var", [[6, 40]], {"axis": 1}, lambda a, **k: a.var(1), 40),
        ("softmax", [[5, 33]], {}, lambda a: torch.softmax(a, -1), 33),
        ("log_softmax", [[5, 33]], {},
         lambda a: torch.log_softmax(a, -1), 33),
        ("transpose", [[5, 7]], {}, lambda a: a.transpose(0, 1), 1),
        ("permute", [[2, 3, 4]], {"p0": 2, "p1": 0, "p2": 1},
         lambda a, **k: a.permute(2, 0, 1), 1),
    ]
    for name, shapes, params, fn, rl in red:
        op = name.split("_axis")[0]
        yield name, op, shapes, None, params, fn, rl
    yield ("matmul", "matmul", [[9, 40], [40, 11]], None, {},
           lambda a, b: a @ b, 40)
    yield ("linear", "linear", [[6, 24], [24, 5], [5]], None, {},
           lambda x, w, b: torch.relu(x @ w + b), 24)
    yield ("conv2d", "conv2d", [[2, 3, 6, 6], [4, 3, 3, 3], [4]], None,
           {"padding": 1},
           lambda x, w, b, padding: F.conv2d(x, w, b, padding=int(padding)),
           27)
    yield ("max_pool2d", "max_pool2d", [[2, 3, 6, 6]], None, {},
           lambda x: F.max_pool2d(x, 2), 1)
    yield ("avg_pool2d", "avg_pool2d", [[2, 3, 6, 6]], None, {},
           lambda x: F.avg_pool2d(x, 2), 4)


def grad_of(fwd):
    """The gradient of fwd at x for the output gradient g, by autograd
    (PyTorch's own backward kernels)."""
    def fn(g, x):
        with torch.enable_grad():
            xx = x.detach().requires_grad_()
            (gx,) = torch.autograd.grad(fwd(xx), xx, g)
        return gx
    return fn


# the backward ops of half_rows.c (appended after cases(): the vectors
# before them keep their numbers)
def bwd_cases():
    yield ("log_softmax_backward", "log_softmax_backward",
           [[5, 33], [5, 33]], [(-1, 1), (-4, 0)], {},
           lambda g, y: torch._log_softmax_backward_data(g, y, -1, g.dtype),
           33)
    yield ("max_pool2d_backward", "max_pool2d_backward",
           [[2, 3, 3, 3], [2, 3, 6, 6]], None, {},
           grad_of(lambda x: F.max_pool2d(x, 2)), 1)
    yield ("avg_pool2d_backward", "avg_pool2d_backward",
           [[2, 3, 3, 3], [2, 3, 6, 6]], None, {},
           grad_of(lambda x: F.avg_pool2d(x, 2)), 4)


# softmax, log_softmax and log_softmax_backward over rows of 1, 2, 10,
# 15, 16, 17 and 1000 (half_lsm.c's blocks, the f32 rows' short-row
# paths at n <= 16 and <= 32 and their long rows), logits in [-8, 8)
# and (rows of 10 and 1000) large ones in [-300, 300) (appended last: the vectors before them
# keep their numbers and values)
def lsm_cases():
    for n, rows in ((1, 20), (2, 20), (10, 40), (15, 20), (16, 20),
                    (17, 20), (1000, 1)):
        for lo, hi in ((-8, 8), (-300, 300))[:1 + (n in (10, 1000))]:
            yield ("softmax", "softmax", [[rows, n]], [(lo, hi)], {},
                   lambda a: torch.softmax(a, -1), n)
            yield ("log_softmax", "log_softmax", [[rows, n]], [(lo, hi)],
                   {}, lambda a: torch.log_softmax(a, -1), n)
        yield ("log_softmax_backward", "log_softmax_backward",
               [[rows, n], [rows, n]], [(-1, 1), (-6, 0)], {},
               lambda g, y: torch._log_softmax_backward_data(g, y, -1,
                                                              g.dtype), n)


def run(fn, ins, params, dt):
    """PyTorch's 16-bit results in dt: its kernel in the dtype if it has
    one, else float32 rounded once."""
    try:
        with torch.no_grad():
            y = fn(*ins, **params)
        if y.dtype == TDT[dt]:
            return y, "torch"
    except RuntimeError as e:
        if "not implemented" not in str(e) and "Half" not in str(e):
            raise
    with torch.no_grad():
        y = fn(*[t.float() for t in ins], **params)
    return y.to(TDT[dt]), "torch-f32"


def within(y, y64, dt, rl):
    err = (y.double() - y64).abs()
    bound = EPS[dt] * y64.abs() + 1e-5 * rl ** 0.5 + 2.0 ** -24
    return bool((err <= bound).all()), float(err.max())


def fmt(vals):
    out = []
    for i in range(0, len(vals), 4):
        out.append("    " + ", ".join(repr(float(v)) for v in vals[i:i + 4]) + ",")
    return "\n".join(out)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
        "half_vectors.h")
    gen = np.random.default_rng(SEED)
    data, recs = [], []
    every = [(dt, c) for group in (cases, bwd_cases, lsm_cases)
             for dt in ("bf16", "f16") for c in group()]
    for dt, (name, op, shapes, dom, params, fn, rl) in every:
        if True:
            dom = dom or [(-1, 1)] * len(shapes)
            ins = [rounded(s, lo, hi, dt, gen) for s, (lo, hi) in zip(shapes, dom)]
            y, how = run(fn, ins, params, dt)
            # sanity: within a rounding (plus f32 accumulation) of float64
            # (a Python scalar is held in the dtype, as PyTorch holds it).
            # PyTorch 1.13's own bf16 kernels of some ops (gelu, ...) round
            # intermediates to bf16 and miss that: then its float32 result
            # rounded once is the oracle (what its later kernels compute).
            p16 = {k: torch.tensor(v, dtype=TDT[dt]).item()
                   for k, v in params.items()}
            y64 = fn(*[t.double() for t in ins], **p16)
            ok, err = within(y, y64, dt, rl)
            if not ok and how == "torch":
                with torch.no_grad():
                    y = fn(*[t.float() for t in ins], **params).to(TDT[dt])
                how = "torch-f32"
                ok, err = within(y, y64, dt, rl)
            if not ok:
                sys.exit(f"{name} {dt}: PyTorch ({how}) off float64 by "
                         f"{err}: refusing the case")
            ids = []
            for t in ins:
                data.append(t.double().flatten().tolist())
                ids.append(len(data) - 1)
            data.append(y.double().flatten().tolist())
            recs.append((name, op, dt, how, shapes, ids, params,
                         list(y.shape), len(data) - 1))
    L = ["/* PyTorch oracle vectors for the bf16 and f16 ops.",
         " *",
         f" * GENERATED by scripts/gen_oracle_half.py (PyTorch {torch.__version__},",
         f" * NumPy {np.__version__}, seed {SEED}); do not edit, re-run the script.",
         " * Inputs are values of the case dtype; expected outputs are PyTorch's",
         " * 16-bit results (how: \"torch\" in the dtype, \"torch-f32\" in float32",
         " * rounded once).  Included by tests/test_half_oracle.c only. */",
         "#ifndef TB_TESTS_DATA_HALF_VECTORS_H",
         "#define TB_TESTS_DATA_HALF_VECTORS_H",
         "",
         "#include <stdint.h>",
         "",
         "#define HV_MAX_IN 3",
         "#define HV_MAX_DIMS 4",
         "#define HV_MAX_PARAMS 3",
         "",
         "typedef struct hv_case {",
         "    const char *name, *op, *dtype, *how;",
         "    int n_in;",
         "    int in_ndim[HV_MAX_IN];",
         "    int64_t in_shape[HV_MAX_IN][HV_MAX_DIMS];",
         "    const double *in_data[HV_MAX_IN];",
         "    int n_params;",
         "    struct {",
         "        const char *name;",
         "        double value;",
         "    } params[HV_MAX_PARAMS];",
         "    int out_ndim;",
         "    int64_t out_shape[HV_MAX_DIMS];",
         "    const double *out_data;",
         "} hv_case;",
         ""]
    for i, d in enumerate(data):
        L.append(f"static const double hv_data{i}[{max(len(d), 1)}] = {{")
        L.append(fmt(d))
        L.append("};")
    L.append("")
    L.append("static const hv_case hv_cases[] = {")
    for name, op, dt, how, shapes, ids, params, oshape, oid in recs:
        nd = ", ".join(str(len(s)) for s in shapes)
        sh = ", ".join("{" + ", ".join(str(v) for v in s) + "}" for s in shapes)
        ind = ", ".join(f"hv_data{k}" for k in ids)
        ps = ", ".join(f'{{"{k}", {float(v)!r}}}' for k, v in params.items())
        osh = ", ".join(str(v) for v in oshape) or "0"
        L.append(f'    {{"{name}", "{op}", "{dt}", "{how}", {len(shapes)}, {{{nd}}},')
        L.append(f"     {{{sh}}}, {{{ind}}}, {len(params)}, {{{ps}}},")
        L.append(f"     {len(oshape)}, {{{osh}}}, hv_data{oid}}},")
    L.append("};")
    L.append("#define HV_N_CASES (sizeof hv_cases / sizeof hv_cases[0])")
    L.append("")
    L.append("#endif")
    with open(out, "w") as f:
        f.write("\n".join(L) + "\n")
    hows = {}
    for r in recs:
        hows[(r[2], r[3])] = hows.get((r[2], r[3]), 0) + 1
    print(f"{out}: {len(recs)} cases {hows}")


if __name__ == "__main__":
    main()
