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

LAMB, AdaBound, L-BFGS (appended after the cases above, so every earlier
array keeps its name and bytes):
- lamb (You et al. 2019, Algorithm 2) and adabound (Luo et al. 2019,
  Algorithm 1 with the authors' bound schedule) have no torch.optim
  class: the expected values come from NumPy float64 implementations of
  the papers' equations (lamb_numpy, adabound_numpy), each checked to
  1e-14 against a second formulation in float64 torch tensors
  (lamb_torch, adabound_torch, written as the reference code of each
  paper is structured; absolute 1e-16 where a moment cancels to ~1e-17); f32 cases run that second formulation in float32
  and must meet TOL_OPT.  Their inputs are drawn once per size (a second
  PCG64, seed + 1) and shared; one lamb case has p = 0 (trust ratio 1).
- lbfgs: torch.optim.LBFGS(history_size=m, max_iter=1, line_search_fn=
  None) in float64 on a fixed quadratic 0.5 x'Ax - b'x (A SPD, seeded):
  after k > m steps the history is full; the next step is recorded: p
  before it, g there (prev_flat_grad), S and Y (old_stps, old_dirs:
  oldest first) and the outputs p after it and the direction state['d'].
  A NumPy two-loop (lbfgs_numpy) must agree to 1e-12.  f32 cases round
  p, g, S, Y to float32 and take lbfgs_numpy's float64 result on them
  (checked against the f64 torch case above); a float32 torch two-loop
  must meet TOL_OPT.

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


# ---- lamb, adabound, lbfgs (no or a different torch.optim class) ----------

LAMB_PSETS = [
    dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.01),
    dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0),
    dict(lr=0.01, beta1=0.8, beta2=0.99, eps=1e-8, weight_decay=0.1),
]
LAMB_NAMES = ["lr", "beta1", "beta2", "eps", "weight_decay", "step"]
ADAB_PSETS = [
    dict(lr=1e-3, beta1=0.9, beta2=0.999, final_lr=0.1, gamma=1e-3,
         eps=1e-8, weight_decay=0.0),
    dict(lr=1e-3, beta1=0.9, beta2=0.999, final_lr=0.1, gamma=1e-3,
         eps=1e-8, weight_decay=0.1),
    # bounds that bind: a narrow band around final_lr
    dict(lr=0.05, beta1=0.8, beta2=0.99, final_lr=0.01, gamma=0.5,
         eps=1e-6, weight_decay=0.0),
]
ADAB_NAMES = ["lr", "beta1", "beta2", "final_lr", "gamma", "eps",
              "weight_decay", "step"]


def lamb_numpy(p, g, m, v, prm, t):
    """LAMB, Algorithm 2 of You et al. 2019, on one tensor."""
    b1, b2 = prm["beta1"], prm["beta2"]
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    m_hat = m / (1 - b1 ** t)
    v_hat = v / (1 - b2 ** t)
    r = m_hat / (np.sqrt(v_hat) + prm["eps"]) + prm["weight_decay"] * p
    pn, rn = math.sqrt(float(np.sum(p * p))), math.sqrt(float(np.sum(r * r)))
    ratio = pn / rn if pn > 0 and rn > 0 else 1.0
    return p - prm["lr"] * ratio * r, m, v


def lamb_torch(ins, prm, t, dtype):
    """LAMB again, as torch tensor operations in place (the structure of
    the common PyTorch LAMB codes: addcmul_, norms by torch.norm)."""
    p, g, m, v = (torch.tensor(x, dtype=dtype) for x in ins)
    b1, b2 = prm["beta1"], prm["beta2"]
    m.mul_(b1).add_(g, alpha=1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    step = m.div(1 - b1 ** t).div(v.div(1 - b2 ** t).sqrt().add(prm["eps"]))
    if prm["weight_decay"] != 0:
        step.add_(p, alpha=prm["weight_decay"])
    wn, sn = torch.norm(p).item(), torch.norm(step).item()
    trust = wn / sn if wn > 0 and sn > 0 else 1.0
    p.add_(step, alpha=-prm["lr"] * trust)
    return [x.numpy().astype(np.float64) for x in (p, m, v)]


def adabound_numpy(p, g, m, v, prm, t):
    """AdaBound, Algorithm 1 of Luo et al. 2019, with the authors' bounds
    eta_l = final_lr (1 - 1/(gamma t + 1)), eta_u = final_lr (1 +
    1/(gamma t))."""
    b1, b2 = prm["beta1"], prm["beta2"]
    if prm["weight_decay"] != 0:
        g = g + prm["weight_decay"] * p
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    alpha = prm["lr"] * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    lo = prm["final_lr"] * (1 - 1 / (prm["gamma"] * t + 1))
    hi = prm["final_lr"] * (1 + 1 / (prm["gamma"] * t))
    eta = np.minimum(np.maximum(alpha / (np.sqrt(v) + prm["eps"]), lo), hi)
    return p - eta * m, m, v


def adabound_torch(ins, prm, t, dtype):
    """AdaBound again in torch tensors: a full tensor of the step size,
    divided, clamped, multiplied by m (the reference code's sequence)."""
    p, g, m, v = (torch.tensor(x, dtype=dtype) for x in ins)
    b1, b2 = prm["beta1"], prm["beta2"]
    if prm["weight_decay"] != 0:
        g = g.add(p, alpha=prm["weight_decay"])
    m.mul_(b1).add_(g, alpha=1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    denom = v.sqrt().add_(prm["eps"])
    size = prm["lr"] * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    lo = prm["final_lr"] * (1 - 1 / (prm["gamma"] * t + 1))
    hi = prm["final_lr"] * (1 + 1 / (prm["gamma"] * t))
    eta = torch.full_like(denom, size).div_(denom).clamp_(lo, hi).mul_(m)
    p.add_(-eta)
    return [x.numpy().astype(np.float64) for x in (p, m, v)]


def lbfgs_numpy(p, g, S, Y, lr):
    """Two-loop recursion (Nocedal & Wright, Algorithm 7.4), H0 = gamma I
    from the newest pair; pairs with s.y <= 1e-10 skipped."""
    mm = S.shape[0]
    rho, al, gamma = [0.0] * mm, [0.0] * mm, 1.0
    for k in range(mm):
        ys = float(np.dot(S[k], Y[k]))
        if ys > 1e-10:
            rho[k] = 1 / ys
            gamma = ys / float(np.dot(Y[k], Y[k]))
    q = -g.copy()
    for k in range(mm - 1, -1, -1):
        if rho[k]:
            al[k] = float(np.dot(S[k], q)) * rho[k]
            q = q - al[k] * Y[k]
    q = gamma * q
    for k in range(mm):
        if rho[k]:
            be = float(np.dot(Y[k], q)) * rho[k]
            q = q + (al[k] - be) * S[k]
    return p + lr * q, q


def lbfgs_torch32(p, g, S, Y, lr):
    """The same two-loop in float32 torch tensors (the f32 tolerance)."""
    f = lambda x: torch.tensor(x, dtype=torch.float32)
    p, g, S, Y = f(p), f(g), f(S), f(Y)
    mm = S.shape[0]
    rho = [1 / float(S[k].dot(Y[k])) for k in range(mm)]
    gamma = float(S[-1].dot(Y[-1])) / float(Y[-1].dot(Y[-1]))
    al = [0.0] * mm
    q = g.neg()
    for k in range(mm - 1, -1, -1):
        al[k] = float(S[k].dot(q)) * rho[k]
        q.add_(Y[k], alpha=-al[k])
    q.mul_(gamma)
    for k in range(mm):
        q.add_(S[k], alpha=al[k] - float(Y[k].dot(q)) * rho[k])
    return [x.numpy().astype(np.float64) for x in (p + lr * q, q)]


def lbfgs_torch_run(n, mm, lr, seed):
    """torch.optim.LBFGS on a fixed quadratic: the inputs and outputs of
    the step after the history has filled."""
    qr = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(qr.standard_normal((n, n)))
    A = torch.tensor(Q @ np.diag(qr.uniform(0.5, 3, n)) @ Q.T)
    b = torch.tensor(qr.uniform(-1, 1, n))
    x = torch.tensor(qr.uniform(-1, 1, n), requires_grad=True)
    opt = torch.optim.LBFGS([x], lr=lr, max_iter=1, history_size=mm,
                            tolerance_grad=0, tolerance_change=0,
                            line_search_fn=None)

    def closure():
        opt.zero_grad()
        loss = 0.5 * x @ (A @ x) - b @ x
        loss.backward()
        return loss

    for _ in range(mm + 2):
        opt.step(closure)
    st = opt.state[x]
    assert len(st["old_dirs"]) == mm
    p0 = x.detach().numpy().copy()
    opt.step(closure)
    assert len(st["old_dirs"]) == mm and st["t"] == lr
    g = st["prev_flat_grad"].numpy().copy()
    S = np.stack([s.numpy() for s in st["old_stps"]])
    Y = np.stack([y.numpy() for y in st["old_dirs"]])
    return [p0, g, S, Y], [x.detach().numpy().copy(), st["d"].numpy().copy()]


LBFGS_CASES = [  # n, m, lr
    (7, 1, 1.0), (33, 3, 0.5), (100, 5, 1.0), (17, 2, 0.25),
]


def extra_cases(w, cases):
    """The lamb, adabound and lbfgs cases, appended to cases."""
    xr = np.random.default_rng(SEED + 1)
    pool = {n: [xr.uniform(-1, 1, n), xr.uniform(-1, 1, n),
                xr.uniform(-1, 1, n), xr.uniform(0, 1, n)] for n in SIZES}
    k = 0
    for op, psets, names, ref, twin in (
            ("lamb", LAMB_PSETS, LAMB_NAMES, lamb_numpy, lamb_torch),
            ("adabound", ADAB_PSETS, ADAB_NAMES, adabound_numpy,
             adabound_torch)):
        for si, prm in enumerate(psets):
            for t in STEPS:
                n = SIZES[k % 4]
                k += 1
                base = list(pool[n])
                if op == "lamb" and si == 0 and t == 2:
                    base[0] = np.zeros(n)  # |p| = 0: trust ratio 1
                for dt in ("f32", "f64"):
                    ins = base if dt == "f64" else [
                        x.astype(np.float32).astype(np.float64)
                        for x in base]
                    want = list(ref(*ins, prm, t))
                    for a, b in zip(want, twin(ins, prm, t, torch.float64)):
                        # atol: m and v of ~1e-17 where g cancels m
                        assert close(a, b, 1e-14, 1e-16), (op, prm, t)
                    if dt == "f32":
                        got = twin(ins, prm, t, torch.float32)
                        for a, b in zip(got, want):
                            assert close(a, b, *TOL_F32), (op, prm, t)
                    full = dict(prm, step=t)
                    cases.append(dict(
                        name="%s_p%d_t%d_n%d_%s" % (op, si, t, n, dt),
                        op=op, dtype=dt, n=n,
                        ins=[w.array(x) for x in ins],
                        params=[(nm, float(full[nm])) for nm in names],
                        outs=[w.array(x) for x in want]))
    for ci, (n, mm, lr) in enumerate(LBFGS_CASES):
        ins64, want64 = lbfgs_torch_run(n, mm, lr, SEED + 10 + ci)
        alt = lbfgs_numpy(*ins64, lr)
        for a, b in zip(want64, alt):
            assert close(a, b, 1e-12, 1e-14), ("lbfgs", n, mm)
        for dt in ("f32", "f64"):
            if dt == "f64":
                ins, want = ins64, want64
            else:
                ins = [x.astype(np.float32).astype(np.float64)
                       for x in ins64]
                want = list(lbfgs_numpy(*ins, lr))
                for a, b in zip(lbfgs_torch32(*ins, lr), want):
                    assert close(a, b, *TOL_F32), ("lbfgs f32", n, mm)
            cases.append(dict(
                name="lbfgs_m%d_n%d_%s" % (mm, n, dt), op="lbfgs",
                dtype=dt, n=n, m=mm,
                ins=[w.array(np.ravel(x)) for x in ins],
                params=[("lr", float(lr))],
                outs=[w.array(x) for x in want]))


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
    extra_cases(w, cases)

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
    int64_t m; /* lbfgs: pairs in S and Y ([m, n] each); else 0 */
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
        lines.append("     {%s}, %d}," % (", ".join(c["outs"]),
                                             c.get("m", 0)))
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
