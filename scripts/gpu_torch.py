#!/usr/bin/env python3
"""PyTorch on the GPU as an independent oracle and yardstick for tbench's
cuda backend (scripts/gpu_check.sh).

    gpu_torch.py plan RESULTS [--backend NAME] [--per-op N]
        one line per ok case of backend NAME (default cuda) of a tbench
        results file, resident and out-of-place (no @transfers, no alloc
        form, pool=false): the arguments of `tbench exec` that recompute
        it (OP SHAPES PARAMS DTYPE SEED; PARAMS '-' for none); with
        --per-op N only the first N cases of each op and dtype.
        gpu_check.sh runs them and writes .npy files
    gpu_torch.py compare EXECDIR...
        each exec folder's inputs through PyTorch in float64 (a bf16/f16
        case's in torch.bfloat16/float16; on CUDA when
        available), the cuda output compared with that, within the case's
        own tolerance (exec.json's check atol/rtol); also tbench's double
        reference against PyTorch's (a reference bug that every backend
        shares shows there).  One PASS/FAIL line per op, exit 1 on any
        FAIL
    gpu_torch.py time RESULTS OUT
        for each ok cuda case (resident, f32) of RESULTS the same op,
        shapes and dtype through PyTorch CUDA, timed with CUDA events
        around batches (warm-up, then samples of enough calls to last
        1 ms; the median per call): a JSON list in OUT and a table of
        tbench's device median beside PyTorch's.  Optimizer steps in
        PyTorch's fastest form (fused, else foreach); host buffers of
        copies written before they are timed

Needs numpy and torch (torch with CUDA for the GPU figures); without
them each command says so and exits 2.
"""
import json
import math
import os
import sys

# rand_* draw from tbench's own counter-based stream: no PyTorch equal.
NO_TORCH = {"rand_uniform", "rand_normal"}


def die(msg, code=2):
    print(f"gpu_torch.py: {msg}", file=sys.stderr)
    sys.exit(code)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: {e}")


# ---- plan ------------------------------------------------------------------

def fmt_param(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


def plan(results, backend="cuda", per_op=0):
    doc = load_json(results)
    cfg = doc.get("config")
    cfg = cfg[0] if isinstance(cfg, list) and cfg else cfg or {}
    seed = cfg.get("seed")
    seen = set()
    n_op = {}
    for c in doc["cases"]:
        bp = c.get("backend_params") or {}
        if c["backend"] != backend or c["status"] != "ok" or \
                c.get("transfers") or c.get("alloc_outputs") or \
                bp.get("pool") == "true" or bp.get("l2") == "cold":
            continue
        shapes = ",".join("x".join(str(d) for d in s) for s in c["shapes"])
        params = ",".join(f"{k}={fmt_param(v)}"
                          for k, v in (c.get("params") or {}).items()
                          if v is not None)
        key = (c["op"], shapes, params, c["dtype"])
        if key in seen:
            continue
        seen.add(key)
        n_op[(c["op"], c["dtype"])] = n_op.get((c["op"], c["dtype"]), 0) + 1
        if per_op and n_op[(c["op"], c["dtype"])] > per_op:
            continue
        print(c["op"], shapes, params or "-", c["dtype"],
              seed if seed is not None else 42)


# ---- the oracle ------------------------------------------------------------

def torch_of(op, x, p, torch, F):
    """op's outputs (a list) from inputs x (float64 tensors; a bf16/f16
    case's in that torch dtype) and params p, as PyTorch computes them;
    None when PyTorch has no equal."""
    ax = p.get("axis")
    keep = bool(p.get("keepdim", False))
    binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
              "div": torch.div, "pow": torch.pow,
              "maximum": torch.maximum, "minimum": torch.minimum}
    inplace = {"add_": torch.add, "sub_": torch.sub, "mul_": torch.mul,
               "div_": torch.div}
    unary = {"neg": torch.neg, "abs": torch.abs, "exp": torch.exp,
             "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
             "relu": torch.relu, "relu_": torch.relu,
             "sigmoid": torch.sigmoid, "tanh": torch.tanh,
             "silu": F.silu, "copy": torch.clone, "copy_h2d": torch.clone,
             "copy_d2h": torch.clone, "copy_d2d": torch.clone}
    scalar = {"add_scalar": torch.add, "sub_scalar": torch.sub,
              "mul_scalar": torch.mul, "div_scalar": torch.div}
    if op in binary:
        return [binary[op](x[0], x[1])]
    if op in inplace:
        return [inplace[op](x[0], x[1])]
    if op in unary:
        return [unary[op](x[0])]
    if op in scalar:
        return [scalar[op](x[0], p["scalar"])]
    if op in ("add_relu", "add_relu_unfused"):
        return [torch.relu(x[0] + x[1])]
    if op == "leaky_relu":
        return [F.leaky_relu(x[0], p["alpha"])]
    if op == "gelu":
        return [F.gelu(x[0])]
    if op == "gelu_tanh":
        return [F.gelu(x[0], approximate="tanh")]
    if op == "softplus":
        return [F.softplus(x[0], p["beta"], p["threshold"])]
    if op in ("sum", "mean", "max", "min", "var", "argmax"):
        dims = tuple(range(x[0].dim())) if ax is None else (ax,)
        if op == "sum":
            return [torch.sum(x[0], dims, keep)]
        if op == "mean":
            return [torch.mean(x[0], dims, keep)]
        if op == "max":
            return [torch.amax(x[0], dims, keep)]
        if op == "min":
            return [torch.amin(x[0], dims, keep)]
        if op == "var":
            return [torch.var(x[0], dims, correction=p["correction"],
                              keepdim=keep)]
        if ax is None:
            r = torch.argmax(x[0].reshape(-1))
            return [r.reshape([1] * x[0].dim()) if keep else r]
        return [torch.argmax(x[0], ax, keep)]
    if op == "softmax":
        return [torch.softmax(x[0], p.get("axis", -1))]
    if op in ("log_softmax", "log_softmax_unfused"):
        return [torch.log_softmax(x[0], p.get("axis", -1))]
    if op == "layer_norm":
        return [F.layer_norm(x[0], (x[0].shape[-1],), x[1], x[2], p["eps"])]
    if op == "rms_norm":  # no F.rms_norm before PyTorch 2.4: its formula
        return [x[0] * torch.rsqrt((x[0] * x[0]).mean(-1, keepdim=True)
                                   + p["eps"]) * x[1]]
    if op in ("layer_norm_backward", "rms_norm_backward"):
        return norm_grads(op, x, p, torch, F)
    if op == "batch_norm":  # running updated in place on the copies
        rm, rv = x[3][0].clone(), x[3][1].clone()
        y = F.batch_norm(x[0], rm, rv, x[1], x[2], bool(p["training"]),
                         p["momentum"], p["eps"])
        return [y, torch.stack([rm, rv])]
    if op == "group_norm":
        # torch.group_norm, not F.group_norm: the functional form refuses
        # a group of one value ("Expected more than 1 value per channel
        # when training", [1, 3] with 3 groups: seen on an H200 run),
        # which tbench defines (variance 0: the output is the bias)
        return [torch.group_norm(x[0], int(p["num_groups"]), x[1], x[2],
                                 p["eps"])]
    if op in ("batch_norm_backward", "group_norm_backward"):
        return nc_norm_grads(op, x, p, torch, F)
    if op == "sdpa_backward":
        return sdpa_grads(x, p, torch)
    if op in ("einsum1", "einsum", "einsum3", "einsum4"):
        return [torch.einsum(p["equation"], *x)]
    if op == "lbfgs":
        return lbfgs_step(x, p, torch)
    if op in ("sdpa", "sdpa_unfused"):
        # the eager composition (PyTorch 1.13 has no
        # F.scaled_dot_product_attention): scores, mask, softmax, @ v
        q, k, v = x
        scale = p.get("scale") or 1 / math.sqrt(q.shape[-1])
        s = q @ k.transpose(-2, -1) * scale
        if p.get("causal"):
            keep = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool,
                              device=s.device).tril()
            s = s.masked_fill(~keep, -math.inf)
        return [torch.softmax(s, -1) @ v]
    if op == "causal_mask":
        if not p.get("causal", True):
            return [x[0].clone()]
        keep = torch.ones(x[0].shape[-2], x[0].shape[-1], dtype=torch.bool,
                          device=x[0].device).tril()
        return [x[0].masked_fill(~keep, -math.inf)]
    if op in ("cross_entropy", "cross_entropy_unfused"):
        return [F.cross_entropy(x[0], x[1].long())]
    if op == "nll_loss":
        return [F.nll_loss(x[0], x[1].long())]
    if op == "cross_entropy_backward":
        lg = x[1].clone().requires_grad_()
        F.cross_entropy(lg, x[2].long()).backward(x[0].reshape(()))
        return [lg.grad]
    if op == "embedding":
        return [F.embedding(x[1].long(), x[0])]
    if op == "embedding_backward":
        d = x[0].shape[-1]
        dw = torch.zeros(int(p["num_weights"]), d, dtype=x[0].dtype,
                         device=x[0].device)
        return [dw.index_add_(0, x[1].long().reshape(-1), x[0].reshape(-1, d))]
    if op == "dropout":
        return None  # tbench's own stream: against the reference below
    if op == "transpose":
        return [x[0].transpose(p["dim0"], p["dim1"]).contiguous()]
    if op == "permute":
        n = x[0].dim()
        perm = [p[f"p{i}"] for i in range(n)] if "p0" in p else \
            list(range(n))[::-1]
        return [x[0].permute(*perm).contiguous()]
    if op in ("zeros", "ones", "full", "arange"):
        return None  # shapes only: compared with the reference below
    if op == "matmul":
        return [torch.matmul(x[0], x[1])]
    if op == "linear":
        return [torch.relu(x[0] @ x[1] + x[2])]
    if op in ("conv2d", "conv2d_nobias"):
        b = x[2] if op == "conv2d" else None
        return [F.conv2d(x[0], x[1], b, p["stride"], p["padding"],
                         p["dilation"])]
    if op == "max_pool2d":
        s = p.get("stride") or p["kernel"]
        return [F.max_pool2d(x[0], p["kernel"], s, p["padding"])]
    if op == "avg_pool2d":
        s = p.get("stride") or p["kernel"]
        return [F.avg_pool2d(x[0], p["kernel"], s, p["padding"],
                             count_include_pad=True)]
    if op in ("sgd", "sgd_momentum", "adam", "adamw", "adagrad", "adamax",
              "nadam", "radam"):
        return optim_step(op, x, p, torch)
    # lamb, adabound: no PyTorch optimizer (ref_optim.c follows the
    # papers), so None: compared with the reference below
    return None


def norm_grads(op, x, p, torch, F):
    """layer_norm/rms_norm gradients by autograd: g, x, w -> dx, dw (,
    db)."""
    g, xx, w = x[0], x[1].clone().requires_grad_(), \
        x[2].clone().requires_grad_()
    if op == "layer_norm_backward":
        b = torch.zeros_like(x[2]).requires_grad_()
        F.layer_norm(xx, (xx.shape[-1],), w, b, p["eps"]).backward(g)
        return [xx.grad, w.grad, b.grad]
    (xx * torch.rsqrt((xx * xx).mean(-1, keepdim=True) + p["eps"])
     * w).backward(g)
    return [xx.grad, w.grad]


def nc_norm_grads(op, x, p, torch, F):
    """batch_norm (training) and group_norm gradients by autograd: g, x,
    w -> dx, dw, db."""
    g, xx, w = x[0], x[1].clone().requires_grad_(), \
        x[2].clone().requires_grad_()
    b = torch.zeros_like(x[2]).requires_grad_()
    if op == "batch_norm_backward":
        y = F.batch_norm(xx, None, None, w, b, True, 0.1, p["eps"])
    else:
        # torch.group_norm: F.group_norm refuses a group of one value
        y = torch.group_norm(xx, int(p["num_groups"]), w, b, p["eps"])
    y.backward(g)
    return [xx.grad, w.grad, b.grad]


def sdpa_grads(x, p, torch):
    """sdpa's gradient by autograd through the eager composition (as
    torch_of's sdpa): g, q, k, v -> dq, dk, dv."""
    g = x[0]
    q, k, v = [t.clone().requires_grad_() for t in x[1:]]
    scale = p.get("scale") or 1 / math.sqrt(q.shape[-1])
    s = q @ k.transpose(-2, -1) * scale
    if p.get("causal"):
        keep = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool,
                          device=s.device).tril()
        s = s.masked_fill(~keep, -math.inf)
    (torch.softmax(s, -1) @ v).backward(g)
    return [q.grad, k.grad, v.grad]


def lbfgs_step(x, p, torch):
    """torch.optim.LBFGS's direction as its lbfgs.py computes it (the
    optimizer has no entry point for one step from a given history: it
    builds its own by closure calls): the pairs with y.s > 1e-10 kept,
    H_diag = y.s / y.y of the newest, the two-loop recursion, p + lr d."""
    flat_p, flat_g = x[0].reshape(-1), x[1].reshape(-1)
    dirs, stps, ro, h_diag = [], [], [], 1.0
    for s, y in zip(x[2], x[3]):
        ys = y.dot(s)
        if ys > 1e-10:
            dirs.append(y)
            stps.append(s)
            ro.append(1.0 / ys)
            h_diag = ys / y.dot(y)
    q = flat_g.neg()
    al = [None] * len(dirs)
    for i in range(len(dirs) - 1, -1, -1):
        al[i] = stps[i].dot(q) * ro[i]
        q.add_(dirs[i], alpha=-al[i])
    r = torch.mul(q, h_diag)
    for i in range(len(dirs)):
        be_i = dirs[i].dot(r) * ro[i]
        r.add_(stps[i], alpha=al[i] - be_i)
    return [(flat_p + p["lr"] * r).reshape(x[0].shape), r.reshape(x[0].shape)]


def optim_step(op, x, p, torch):
    """One step of torch.optim's single-tensor implementation from the
    state tbench's inputs hold: p, g, then the op's state tensors; the
    step tbench names is the step being taken (the state holds step-1)."""
    param = torch.nn.Parameter(x[0].clone())
    param.grad = x[1].clone()
    step = float(p.get("step", 1))
    st = torch.tensor(step - 1, dtype=torch.float64)
    wd = p.get("weight_decay", 0)
    if op == "sgd":
        o = torch.optim.SGD([param], lr=p["lr"], weight_decay=wd,
                            foreach=False)
    elif op == "sgd_momentum":
        o = torch.optim.SGD([param], lr=p["lr"], momentum=p["momentum"],
                            dampening=p["dampening"], weight_decay=wd,
                            nesterov=bool(p["nesterov"]), foreach=False)
        o.state[param] = {"momentum_buffer": x[2].clone()}
    elif op in ("adam", "adamw", "radam", "nadam", "adamax"):
        betas = (p["beta1"], p["beta2"])
        if op == "adam":
            o = torch.optim.Adam([param], lr=p["lr"], betas=betas,
                                 eps=p["eps"], weight_decay=wd,
                                 foreach=False)
        elif op == "adamw":
            o = torch.optim.AdamW([param], lr=p["lr"], betas=betas,
                                  eps=p["eps"], weight_decay=wd,
                                  foreach=False)
        elif op == "radam":
            o = torch.optim.RAdam([param], lr=p["lr"], betas=betas,
                                  eps=p["eps"], weight_decay=wd,
                                  foreach=False)
        elif op == "nadam":
            o = torch.optim.NAdam([param], lr=p["lr"], betas=betas,
                                  eps=p["eps"], weight_decay=wd,
                                  momentum_decay=p["momentum_decay"],
                                  foreach=False)
        else:
            o = torch.optim.Adamax([param], lr=p["lr"], betas=betas,
                                   eps=p["eps"], weight_decay=wd,
                                   foreach=False)
        if op == "adamax":
            o.state[param] = {"step": st, "exp_avg": x[2].clone(),
                              "exp_inf": x[3].clone()}
        else:
            o.state[param] = {"step": st, "exp_avg": x[2].clone(),
                              "exp_avg_sq": x[3].clone()}
        if op == "nadam":
            mu = 1.0
            for i in range(1, int(step)):
                mu *= p["beta1"] * (1 - 0.5 * 0.96 ** (
                    i * p["momentum_decay"]))
            o.state[param]["mu_product"] = torch.tensor(
                mu, dtype=torch.float64)
    elif op == "adagrad":
        o = torch.optim.Adagrad([param], lr=p["lr"],
                                lr_decay=p["lr_decay"], weight_decay=wd,
                                eps=p["eps"], foreach=False)
        o.state[param] = {"step": st, "sum": x[2].clone()}
    o.step()
    s = o.state[param]
    keys = {"sgd": [], "sgd_momentum": ["momentum_buffer"],
            "adagrad": ["sum"], "adamax": ["exp_avg", "exp_inf"]}.get(
                op, ["exp_avg", "exp_avg_sq"])
    return [param.detach()] + [s[k] for k in keys]


def within(np, got, want, atol, rtol):
    g = np.asarray(got, dtype=np.float64).reshape(-1)
    w = np.asarray(want, dtype=np.float64).reshape(-1)
    if g.shape != w.shape:
        return False, math.inf, f"shape {got.shape} vs {want.shape}"
    both_nan = np.isnan(g) & np.isnan(w)
    err = np.where(both_nan, 0.0, np.abs(g - w))
    err = np.where(np.isinf(w) & (g == w), 0.0, err)
    bad = ~(err <= atol + rtol * np.abs(w))
    worst = float(np.max(err / (atol + rtol * np.abs(w) + 1e-300))) \
        if err.size else 0.0
    return not bad.any(), worst, f"{int(bad.sum())} of {bad.size} outside"


def factor_check(np, torch, op, x, outs):
    """svd/qr/eigh: the values against PyTorch's, and the factors
    reconstruct the input (vectors are not unique)."""
    a = x[0]
    o = [torch.from_numpy(np.asarray(v, dtype=np.float64)).to(a.device)
         for v in outs]
    scale = float(torch.max(torch.abs(a))) or 1.0
    if op == "svd":
        s_ref = torch.linalg.svdvals(a)
        rec = o[0] @ torch.diag(o[1]) @ o[2]
        return [("values", o[1], s_ref), ("reconstruction", rec, a)], scale
    if op == "qr":
        rec = o[0] @ o[1]
        return [("reconstruction", rec, a)], scale
    if op == "eigh":
        sym = torch.tril(a) + torch.tril(a, -1).T
        w_ref = torch.linalg.eigvalsh(sym)
        rec = sym @ o[1] - o[1] @ torch.diag(o[0])
        return [("values", o[0], w_ref),
                ("residual", rec, torch.zeros_like(rec))], scale
    return [], scale


def npy_f64(np, v):
    """An exec .npy as float64: a bf16 file holds the raw 16-bit patterns
    in the structured dtype [('bf16', '<u2')] (src/ops/npy.h), the upper
    half of an f32; f16 is NumPy's float16."""
    if v.dtype.names == ("bf16",):
        # reshape(-1): a 0-d array's view cannot change its itemsize (a
        # bf16 sum to a scalar)
        bits = v["bf16"].reshape(-1).astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64).reshape(v.shape)
    return v.astype(np.float64)


# A 16-bit case's PyTorch twin runs in float64 on the 16-bit inputs, as
# the f32 and f64 cases' do: PyTorch's own 16-bit paths are no oracle of
# one rounding.  On an H200 (torch 2.11) its bf16 rms_norm composition
# rounds after every step, its f16 linear may reduce in f16 (cuBLAS's
# reduced-precision reduction) and its bf16 conv2d came out 13 of 280
# elements outside the case's tolerance where tbench's output was within
# it of its double reference; on a CPU torch 1.13 has no f16 kernel for
# most ops.  The output is held to the case's whole tolerance; the
# reference too (a 16-bit case's parameters are rounded to its dtype:
# mul_scalar's 1.7 is 1.703125 in bf16).
HALF_DTYPES = {"bf16", "f16"}


def compare(dirs):
    try:
        import numpy as np
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        die(f"PyTorch/NumPy cannot be imported: {e}")
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"INFO torch oracle: torch {torch.__version__} on {dev}"
          f"{' (' + torch.cuda.get_device_name(0) + ')' if dev == 'cuda' else ''}"
          f", float64", flush=True)
    per_op = {}
    failed = 0
    for d in dirs:
        exj = os.path.join(d, "exec.json")
        if not os.path.exists(exj):
            per_op.setdefault("?", []).append(
                (False, math.inf, f"{d}: no exec.json (exec failed)"))
            continue
        ex = load_json(exj)
        op, p = ex["op"], ex.get("params") or {}
        rec = per_op.setdefault(op, [])
        try:
            xs = [npy_f64(np, np.load(os.path.join(d, i["file"])))
                  for i in ex["inputs"]]
            outs = [npy_f64(np, np.load(os.path.join(d, o["file"])))
                    for o in ex["outputs"]]
            refs = [npy_f64(np, np.load(os.path.join(d, r["file"])))
                    for r in ex["reference"]]
        except (OSError, ValueError) as e:
            rec.append((False, math.inf, f"{ex['id']}: {e}"))
            continue
        ck = ex.get("check") or {}
        atol, rtol = ck.get("atol", 0.0), ck.get("rtol", 0.0)

        x = [torch.from_numpy(v).to(dev) for v in xs]
        half = ex.get("dtype") in HALF_DTYPES
        if op in NO_TORCH:
            rec.append((None, 0.0, "no PyTorch equal (tbench's own "
                        "stream): checked against the reference only"))
            continue
        if op in ("svd", "qr", "eigh"):
            parts, scale = factor_check(np, torch, op, x, outs)
            n = max(x[0].shape)
            tol = ck.get("atol", 1e-5) + ck.get("rtol", 1e-5) * n * scale
            ok, worst, msg = True, 0.0, ""
            for what, got, want in parts:
                e = float(torch.max(torch.abs(got - want)))
                worst = max(worst, e / tol)
                if not e <= tol:
                    ok, msg = False, f"{what} off by {e:.3g} (tol {tol:.3g})"
            rec.append((ok, worst, f"{ex['id']}: {msg or 'ok'}"))
            continue
        try:  # a twin that raises is this case's failure, not the step's
            want = torch_of(op, x, p, torch, F)
        except Exception as e:  # pylint: disable=broad-except
            rec.append((False, math.inf, f"{ex['id']}: the PyTorch twin "
                        f"raised {type(e).__name__}: {str(e)[:200]}"))
            continue
        if want is None:
            # fills: the output against tbench's reference (exact)
            ok, worst, msg = within(np, outs[0], refs[0], atol, rtol)
            rec.append((ok, worst, f"{ex['id']}: vs reference: {msg}"))
            continue
        ok_all, worst_all, msgs = True, 0.0, []
        for k, w in enumerate(want):
            wn = w.detach().to("cpu").numpy()
            ok, worst, msg = within(np, outs[k], wn, atol, rtol)
            # the double reference against PyTorch's double result, within
            # a tenth of the case's tolerance (f32 cases round some
            # parameters to f32 in the reference: 3e-8 relative); a 16-bit
            # case's, within the whole tolerance (see HALF_DTYPES)
            f = 1.0 if half else 0.1
            rok, rworst, rmsg = within(np, refs[k], wn, atol * f + 1e-13,
                                       max(rtol * f, 1e-13))
            if not rok:
                msgs.append(f"reference vs PyTorch output {k}: {rmsg}")
            ok_all &= ok and rok
            worst_all = max(worst_all, worst)
            if not ok:
                msgs.append(f"output {k}: {msg}")
        rec.append((ok_all, worst_all,
                    f"{ex['id']}: {'; '.join(msgs) or 'ok'}"))
    for op in sorted(per_op):
        rs = per_op[op]
        if all(r[0] is None for r in rs):
            print(f"SKIP torch {op}: {rs[0][2]}")
            continue
        bad = [r for r in rs if r[0] is False]
        worst = max(rs, key=lambda r: r[1])
        if bad:
            failed += 1
            print(f"FAIL torch {op}: {len(bad)} of {len(rs)} cases off "
                  f"PyTorch; {bad[0][2]}")
        else:
            print(f"PASS torch {op}: {len(rs)} cases within their "
                  f"tolerance of PyTorch (worst {worst[1]:.2f} of the "
                  f"tolerance: {worst[2].split(':')[0]})")
    return 1 if failed else 0


# ---- timing ----------------------------------------------------------------

def time_torch(results, out):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        die(f"PyTorch cannot be imported: {e}")
    if not torch.cuda.is_available():
        die("PyTorch sees no CUDA device")
    doc = load_json(results)
    rows = []
    for c in doc["cases"]:
        if c["backend"] != "cuda" or c["status"] != "ok" or \
                c.get("transfers") or c["dtype"] != "f32" or \
                c["op"] in NO_TORCH:
            continue
        dt = torch.float32
        p = c.get("params") or {}
        g = torch.Generator(device="cuda").manual_seed(1)
        x = [torch.rand(s, device="cuda", generator=g, dtype=dt) * 2 - 1
             for s in c["shapes"]]
        op = c["op"]
        if op in ("copy_h2d", "copy_d2h", "copy_d2d"):
            n = c["shapes"][0]
            pin = bool(p.get("pinned"))
            # written once, as tbench's staging is: an untouched buffer
            # reads as the kernel's one zero page (an h2d copy of 256 MiB
            # from it ran 2.6x faster than from real data on an H200)
            h = torch.rand(n, dtype=dt)
            if pin:
                h = h.pin_memory()
            d = torch.empty(n, dtype=dt, device="cuda")
            fn = {"copy_h2d": lambda: d.copy_(h, non_blocking=pin),
                  "copy_d2h": lambda: h.copy_(d, non_blocking=pin),
                  "copy_d2d": lambda: d.copy_(x[0])}[op]
        elif op in ("sgd", "adam", "adamw"):
            # PyTorch's fastest form of the step: fused (one kernel), else
            # foreach (multi-tensor apply)
            par = torch.nn.Parameter(x[0].clone())
            par.grad = x[0].clone()
            cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam,
                   "adamw": torch.optim.AdamW}[op]
            try:
                o = cls([par], lr=1e-3, fused=True)
                o.step()
            except (RuntimeError, TypeError, ValueError):
                o = cls([par], lr=1e-3, foreach=True)
                o.step()
            fn = o.step
        else:
            try:
                fn0 = None
                with torch.no_grad():
                    import functools
                    fn0 = functools.partial(torch_of, op, x, p, torch, F)
                    if fn0() is None:
                        continue
                fn = fn0
            except (RuntimeError, KeyError, TypeError) as e:
                print(f"INFO torch time {c['id']}: skipped: {e}")
                continue
        with torch.no_grad():
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            one = max(e0.elapsed_time(e1) * 1e6, 1.0)  # ns
            k = max(1, min(10000, int(1e6 / one)))
            samples = []
            for _ in range(15):
                e0.record()
                for _ in range(k):
                    fn()
                e1.record()
                e1.synchronize()
                samples.append(e0.elapsed_time(e1) * 1e6 / k)
        samples.sort()
        tmed = samples[len(samples) // 2]
        dmed = ((c.get("timing") or {}).get("device") or {}).get(
            "median_ns")
        rows.append({"id": c["id"], "op": op, "shapes": c["shapes"],
                     "tbench_device_ns": dmed,
                     "tbench_host_ns": c["stats"]["median_ns"],
                     "torch_device_ns": tmed, "torch_calls": k,
                     "torch_version": torch.__version__})
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"device": torch.cuda.get_device_name(0),
                   "rows": rows}, f, indent=1)
    print(f"{'case':60} {'tbench':>11} {'torch':>11} {'ratio':>6}")
    for r in rows:
        t = r["tbench_device_ns"] or r["tbench_host_ns"]
        print(f"{r['id'][:60]:60} {t / 1e3:9.2f}us "
              f"{r['torch_device_ns'] / 1e3:9.2f}us "
              f"{t / r['torch_device_ns']:6.2f}")
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "plan":
        opts = dict(zip(argv[3::2], argv[4::2]))
        if len(argv[3:]) % 2 or set(opts) - {"--backend", "--per-op"}:
            print(__doc__, file=sys.stderr)
            return 2
        plan(argv[2], opts.get("--backend", "cuda"),
             int(opts.get("--per-op", 0)))
        return 0
    if len(argv) >= 3 and argv[1] == "compare":
        return compare(argv[2:])
    if len(argv) == 4 and argv[1] == "time":
        return time_torch(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
