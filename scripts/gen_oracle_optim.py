#!/usr/bin/python3
"""Generate the optimizer-step oracle vectors: tests/data/optim_vectors.h.

For every optimizer op of tbench (sgd, sgd_momentum, adam, adamw, adagrad,
adamax, nadam, radam) and several parameter sets and step numbers, the
inputs (param p, grad g, state) and the outputs PyTorch's torch.optim
produces for ONE step taken from that preset state (tests/test_optim.c).

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch):

    /usr/bin/python3 scripts/gen_oracle_optim.py [OUTPUT]

How a case is made (all independent of tbench's C code):
- Inputs come from a fixed-seed PCG64: p, g and the first state in
  [-1, 1], the second moment (v, u) and adagrad's sum in [0, 1] (the op
  table's domains).  f32 cases round them to float32 first, so the C test
  stores them exactly.  Inputs are shared by every case of one (size,
  dtype); only the expected outputs differ, which keeps the file small.
- The optimizer is torch.optim.<Name>(..., foreach=False) (the
  single-tensor code path), on float64 tensors; its state is preset as a
  run in progress: state['step'] = t - 1 as a tensor (the convention of
  torch >= 1.12), exp_avg etc. from the inputs, NAdam's mu_product =
  prod_{i<t} mu_i in double.  Then .step() takes step t.  The float64
  results are the expected values for both dtypes.
- f32 cases also run the same step on float32 tensors and must agree with
  the float64 result within the op table's f32 tolerance (TOL_OPT), so
  that tolerance is known to be met by PyTorch itself.
- NAdam: tbench follows PyTorch 2.x, where the second coefficient uses
  mu_product_next = mu_product * mu_{t+1}.  The installed PyTorch 1.13
  computes mu_product * mu_t * mu_{t+1} there (changed in 2.0), so its
  _single_tensor_nadam is patched on that one line before use (the patch
  is checked to apply exactly once), and every NAdam result is also
  checked against an independent NumPy float64 implementation of the 2.x
  formulas to 1e-14.

Values are written with repr(), which round-trips float64 exactly through
a C compiler's correctly rounded strtod.
"""

import inspect
import math
import os
import sys

import numpy as np
import torch
import torch.optim.nadam as nadam_mod

SEED = 20261122
SIZES = [1, 7, 17, 100]
STEPS = [1, 2, 10, 1000]
MAX_BYTES = 500 * 1024
TOL_F32 = (1e-5, 1e-6)  # op.c TOL_OPT, f32: |d| <= atol + rtol |want|

rng = np.random.default_rng(SEED)

# ---- NAdam as in PyTorch 2.x ------------------------------------------------

_OLD = "mu_product_next = mu_product * mu * mu_next"
_NEW = "mu_product_next = mu_product * mu_next"
_src = inspect.getsource(nadam_mod._single_tensor_nadam)
if _src.count(_OLD) == 1:
    _ns = dict(vars(nadam_mod))
    exec(compile(_src.replace(_OLD, _NEW), "<nadam 2.x>", "exec"), _ns)
    nadam_mod._single_tensor_nadam = _ns["_single_tensor_nadam"]
elif _src.count(_NEW) != 1:
    sys.exit("gen_oracle_optim: torch's NAdam changed; check the formula")


def nadam_mu(b1, md, t):
    return b1 * (1.0 - 0.5 * (0.96 ** (t * md)))


def nadam_numpy(p, g, m, v, prm, t):
    """PyTorch 2.x _single_tensor_nadam in NumPy float64."""
    lr, b1, b2, eps, wd, md = (prm[k] for k in (
        "lr", "beta1", "beta2", "eps", "weight_decay", "momentum_decay"))
    bc2 = 1 - b2 ** t
    if wd != 0:
        g = g + wd * p
    mu, mu_next = nadam_mu(b1, md, t), nadam_mu(b1, md, t + 1)
    prod = 1.0
    for i in range(1, t + 1):
        prod *= nadam_mu(b1, md, i)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    denom = np.sqrt(v / bc2) + eps
    p = p - lr * (1 - mu) / (1 - prod) * (g / denom)
    p = p - lr * mu_next / (1 - prod * mu_next) * (m / denom)
    return p, m, v


# ---- the optimizers ---------------------------------------------------------

# name: (torch class, tbench parameter names in schema order, number of
# state inputs, parameter sets).  Every case writes every parameter, so
# the C side never depends on defaults.
ADAM_DEF = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0)
OPS = {
    "sgd": (torch.optim.SGD, ["lr", "weight_decay"], 0, [
        dict(lr=0.01, weight_decay=0.0),
        dict(lr=0.05, weight_decay=0.1),
    ]),
    "sgd_momentum": (torch.optim.SGD,
                     ["lr", "momentum", "dampening", "weight_decay",
                      "nesterov"], 1, [
        dict(lr=0.01, momentum=0.9, dampening=0.0, weight_decay=0.0,
             nesterov=0),
        dict(lr=0.01, momentum=0.9, dampening=0.0, weight_decay=0.0,
             nesterov=1),
        dict(lr=0.03, momentum=0.5, dampening=0.2, weight_decay=0.05,
             nesterov=0),
        dict(lr=0.03, momentum=0.7, dampening=0.0, weight_decay=0.05,
             nesterov=1),
        dict(lr=0.02, momentum=0.0, dampening=0.0, weight_decay=0.0,
             nesterov=0),
    ]),
    "adam": (torch.optim.Adam,
             ["lr", "beta1", "beta2", "eps", "weight_decay", "step"], 2, [
        dict(ADAM_DEF),
        dict(ADAM_DEF, weight_decay=0.1),
        dict(ADAM_DEF, lr=0.01, beta1=0.8, beta2=0.99, eps=1e-6),
    ]),
    "adamw": (torch.optim.AdamW,
              ["lr", "beta1", "beta2", "eps", "weight_decay", "step"], 2, [
        dict(ADAM_DEF, weight_decay=0.01),
        dict(ADAM_DEF, weight_decay=0.0),
        dict(ADAM_DEF, lr=0.01, weight_decay=0.1, beta2=0.99),
    ]),
    "adagrad": (torch.optim.Adagrad,
                ["lr", "lr_decay", "weight_decay", "eps", "step"], 1, [
        dict(lr=0.01, lr_decay=0.0, weight_decay=0.0, eps=1e-10),
        dict(lr=0.05, lr_decay=0.1, weight_decay=0.05, eps=1e-8),
    ]),
    "adamax": (torch.optim.Adamax,
               ["lr", "beta1", "beta2", "eps", "weight_decay", "step"], 2, [
        dict(ADAM_DEF, lr=2e-3),
        dict(ADAM_DEF, lr=2e-3, weight_decay=0.1, beta1=0.8),
    ]),
    "nadam": (torch.optim.NAdam,
              ["lr", "beta1", "beta2", "eps", "weight_decay",
               "momentum_decay", "step"], 2, [
        dict(ADAM_DEF, lr=2e-3, momentum_decay=4e-3),
        dict(ADAM_DEF, lr=2e-3, weight_decay=0.1, momentum_decay=4e-3),
        dict(ADAM_DEF, lr=5e-3, momentum_decay=0.05, beta2=0.99),
    ]),
    "radam": (torch.optim.RAdam,
              ["lr", "beta1", "beta2", "eps", "weight_decay", "step"], 2, [
        dict(ADAM_DEF),
        dict(ADAM_DEF, weight_decay=0.1),
        dict(ADAM_DEF, lr=0.01, beta2=0.99),
    ]),
}
HAS_STEP = {"adam", "adamw", "adagrad", "adamax", "nadam", "radam"}


def make_optimizer(op, params, prm):
    cls = OPS[op][0]
    kw = dict(lr=prm["lr"], weight_decay=prm["weight_decay"], foreach=False)
    if op == "sgd_momentum":
        kw.update(momentum=prm["momentum"], dampening=prm["dampening"],
                  nesterov=bool(prm["nesterov"]))
    elif op == "adagrad":
        kw.update(lr_decay=prm["lr_decay"], eps=prm["eps"])
    elif op != "sgd":
        kw.update(betas=(prm["beta1"], prm["beta2"]), eps=prm["eps"])
        if op == "nadam":
            kw.update(momentum_decay=prm["momentum_decay"])
    return cls(params, **kw)


STATE_KEYS = {
    "sgd": [], "sgd_momentum": ["momentum_buffer"], "adagrad": ["sum"],
    "adam": ["exp_avg", "exp_avg_sq"], "adamw": ["exp_avg", "exp_avg_sq"],
    "adamax": ["exp_avg", "exp_inf"], "nadam": ["exp_avg", "exp_avg_sq"],
    "radam": ["exp_avg", "exp_avg_sq"],
}


def torch_step(op, prm, t, ins, dtype):
    """One step of op from inputs ins = [p, g, state...]; returns the
    outputs [p, state...] as float64 NumPy arrays."""
    p = torch.tensor(ins[0], dtype=dtype, requires_grad=True)
    p.grad = torch.tensor(ins[1], dtype=dtype)
    opt = make_optimizer(op, [p], prm)
    st = opt.state[p]
    for key, x in zip(STATE_KEYS[op], ins[2:]):
        st[key] = torch.tensor(x, dtype=dtype)
    if op in HAS_STEP:
        st["step"] = torch.tensor(float(t - 1))
    if op == "nadam":
        prod = 1.0
        for i in range(1, t):
            prod *= nadam_mu(prm["beta1"], prm["momentum_decay"], i)
        st["mu_product"] = torch.tensor(prod, dtype=torch.float64)
    opt.step()
    outs = [p.detach().numpy().astype(np.float64)]
    outs += [st[k].numpy().astype(np.float64) for k in STATE_KEYS[op]]
    return outs


def close(a, b, rtol, atol):
    return bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


# ---- inputs -------------------------------------------------------------------

def make_inputs():
    """(size, dtype) -> [p, g, s1 in [-1, 1], s2 in [0, 1]]."""
    out = {}
    for n in SIZES:
        base = [rng.uniform(-1, 1, n), rng.uniform(-1, 1, n),
                rng.uniform(-1, 1, n), rng.uniform(0, 1, n)]
        out[(n, "f64")] = base
        out[(n, "f32")] = [x.astype(np.float32).astype(np.float64)
                           for x in base]
    return out


def case_inputs(op, pool):
    """Inputs of op from the pool: p, g, then its state (the second moment
    and adagrad's sum are nonnegative)."""
    n_state = OPS[op][2]
    if n_state == 0:
        return pool[:2]
    if op == "adagrad":
        return pool[:2] + [pool[3]]
    if n_state == 1:
        return pool[:3]
    return pool[:4]


# ---- output ---------------------------------------------------------------------

class Writer:
    def __init__(self):
        self.arrays = []
        self.index = {}

    def array(self, x):
        vals = tuple(float(v) for v in x)
        if vals in self.index:
            return self.index[vals]
        name = "optv_data%d" % len(self.arrays)
        self.index[vals] = name
        self.arrays.append((name, vals))
        return name


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
        "optim_vectors.h")
    inputs = make_inputs()
    w = Writer()
    cases = []
    k = 0
    for op, (_, names, _, psets) in OPS.items():
        steps = STEPS if op in HAS_STEP else [0]
        for si, prm in enumerate(psets):
            for t in steps:
                # sgd/sgd_momentum have few combinations: every size; the
                # others rotate through the sizes (each size still appears
                # for every op and dtype).
                sizes = SIZES if op.startswith("sgd") else [SIZES[k % 4]]
                k += 1
                for n in sizes:
                    for dt in ("f32", "f64"):
                        ins = case_inputs(op, inputs[(n, dt)])
                        want = torch_step(op, prm, t, ins, torch.float64)
                        if op == "nadam":
                            alt = nadam_numpy(*ins, prm, t)
                            for a, b in zip(want, alt):
                                assert close(a, b, 1e-14, 1e-300), op
                        if dt == "f32":
                            got = torch_step(op, prm, t, ins, torch.float32)
                            for a, b in zip(got, want):
                                assert close(a, b, *TOL_F32), (op, prm, t)
                        full = dict(prm)
                        if op in HAS_STEP:
                            full["step"] = t
                        cases.append(dict(
                            name="%s_p%d_t%d_n%d_%s" % (op, si, t, n, dt),
                            op=op, dtype=dt, n=n,
                            ins=[w.array(x) for x in ins],
                            params=[(nm, float(full[nm])) for nm in names],
                            outs=[w.array(x) for x in want]))

    lines = []
    lines.append("""/* Oracle vectors of the optimizer steps.
 *
 * GENERATED by scripts/gen_oracle_optim.py (NumPy %s, PyTorch %s, seed
 * %d); do not edit, re-run the script.  Each case: the inputs (p, g,
 * state; f32 cases exactly representable in float), every parameter of
 * the op, and the float64 outputs (p, state) of one torch.optim step
 * (foreach=False) from that state; NAdam as in PyTorch 2.x.
 * Included by tests/test_optim.c only. */
#ifndef TB_TESTS_DATA_OPTIM_VECTORS_H
#define TB_TESTS_DATA_OPTIM_VECTORS_H

#include <stdint.h>

#define OPTV_MAX_IN 4
#define OPTV_MAX_OUT 3
#define OPTV_MAX_PARAMS 8

typedef struct optv_param {
    const char *name;
    double value;
} optv_param;

typedef struct optv_case {
    const char *name;
    const char *op;
    const char *dtype; /* "f32" or "f64" */
    int64_t n;         /* elements of every input and output (1-D) */
    int n_in, n_out, n_params;
    const double *in[OPTV_MAX_IN];
    optv_param params[OPTV_MAX_PARAMS];
    const double *out[OPTV_MAX_OUT];
} optv_case;
""" % (np.__version__, torch.__version__, SEED))
    for name, vals in w.arrays:
        lines.append("static const double %s[%d] = {" % (name, len(vals)))
        for i in range(0, len(vals), 4):
            lines.append("    " + ", ".join(repr(v) for v in vals[i:i + 4])
                         + ",")
        lines.append("};")
    lines.append("")
    lines.append("static const optv_case optv_cases[] = {")
    for c in cases:
        lines.append('    {"%s", "%s", "%s", %d, %d, %d, %d,' % (
            c["name"], c["op"], c["dtype"], c["n"], len(c["ins"]),
            len(c["outs"]), len(c["params"])))
        lines.append("     {%s}," % ", ".join(c["ins"]))
        lines.append("     {%s}," % ", ".join(
            '{"%s", %r}' % pv for pv in c["params"]))
        lines.append("     {%s}}," % ", ".join(c["outs"]))
    lines.append("};")
    lines.append("#define OPTV_N_CASES (sizeof optv_cases / sizeof optv_cases[0])")
    lines.append("")
    lines.append("#endif")
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_BYTES:
        sys.exit("gen_oracle_optim: %d bytes, over %d" % (len(text), MAX_BYTES))
    with open(out_path + ".tmp", "w") as f:
        f.write(text)
    os.replace(out_path + ".tmp", out_path)
    print("%s: %d cases, %d arrays, %d bytes" % (
        out_path, len(cases), len(w.arrays), len(text)))


if __name__ == "__main__":
    main()
