#!/usr/bin/python3
"""Generate the normalization oracle vectors: tests/data/norm_vectors.h.

For layer_norm_backward and rms_norm_backward (g, x, w -> dx, dw and, for
layer_norm, db) at several shapes, dtypes and eps values, the inputs and
the float64 gradients PyTorch's autograd computes (tests/test_norm.c).
The forward ops' vectors are gen_oracle.py's (tests/data/oracle_vectors.h).

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch):

    /usr/bin/python3 scripts/gen_oracle_norm.py [OUTPUT]

How a case is made (all independent of tbench's C code):
- Inputs come from a fixed-seed PCG64: g and w in [-1, 1], x in [-1, 1]
  times a scale plus an offset (a row far from zero mean tests the
  statistics); f32 cases round them to float32 first, so the C test stores
  them exactly.
- layer_norm: torch.nn.functional.layer_norm(x, (D,), w, b, eps) on
  float64 tensors (b = 0: the gradients do not depend on it), then
  torch.autograd.grad of sum(y * g) for x, w and b.  rms_norm (PyTorch
  1.13 has none): its formula x * rsqrt(mean(x^2, -1) + eps) * w on
  float64 tensors, differentiated the same way.
- Every result is cross-checked against NumPy float64 closed forms of the
  gradients (xh = (x - mean) * rstd, gh = g * w; dx = rstd * (gh -
  mean(gh) - xh * mean(gh * xh)), mean 0 and no mean(gh) term for
  rms_norm; dw = sum of g * xh over the rows, db = sum of g) to 1e-12.
- f32 cases also run autograd on float32 tensors, which must agree with
  the float64 result within |d| <= 1e-4 |want| + 1e-5 (PyTorch's own f32
  error, far inside what the tests allow tbench at these sizes).

batch_norm, group_norm, batch_norm_backward and group_norm_backward
(appended after the gradients' arrays, which stay as they were; their own
PCG64 stream, seed SEED + 1; each op's cases after the earlier ops', so
their arrays stay as they were too):
- batch_norm: x [N, C, ...] in [-1, 1] times a scale plus an offset, w, b
  in [-1, 1], running mean in [-1, 1] and running var in [0.25, 1]
  (stacked as tbench's running [2, C]); F.batch_norm(x, rm, rv, w, b,
  training, momentum, eps) on float64 tensors, which updates rm and rv in
  place (training: batch statistics normalize, the unbiased variance goes
  into rv; else rm, rv normalize and stay).  Cross-checked with NumPy
  float64 to 1e-12.
- group_norm: F.group_norm(x, num_groups, w, b, eps) in float64,
  cross-checked with NumPy float64 (x reshaped to [N, G, -1]) to 1e-12.
- batch_norm_backward (the training form, statistics recomputed from
  x): torch.autograd.grad of sum(y * g) for x, w and b through
  F.batch_norm(x, None, None, w, b, True) in float64 (b = 0: the
  gradients do not depend on it), cross-checked with NumPy's closed forms
  (xh = (x - mean) * rstd per channel, n = N x trailing dims; dx = w *
  rstd * (g - sum(g) / n - xh * sum(g * xh) / n), dw = sum(g * xh), db =
  sum(g)) to 1e-12.
- group_norm_backward: torch.autograd.grad of sum(y * g) for x, w and b
  through F.group_norm(x, num_groups, w, b, eps) in float64 (b = 0),
  cross-checked with NumPy's closed forms (per sample and group of len =
  C / G x trailing dims: xh = (x - mean) * rstd, gh = g * w; dx = rstd *
  (gh - sum(gh) / len - xh * sum(gh * xh) / len); per channel dw =
  sum(g * xh), db = sum(g) over the samples and trailing dims) to 1e-12.
- f32 cases: inputs rounded to float32, eps as float32 holds it, and
  PyTorch's float32 result within 1e-4 |want| + 1e-5 of the float64 one.

Values are written with repr(), which round-trips float64 exactly through
a C compiler's correctly rounded strtod.
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

SEED = 20261128
MAX_BYTES = 600 * 1024
# (x shape, x scale, x offset, eps or None for the op's default)
SHAPES = [
    ((1, 1), 1.0, 0.0, None),
    ((3, 7), 1.0, 0.0, None),
    ((5, 17), 2.0, 0.5, None),
    ((2, 3, 33), 1.0, 0.0, None),
    ((70, 13), 1.0, 0.0, None),
    ((4, 100), 0.1, 3.0, None),
    ((6, 9), 1.0, 0.0, 0.25),
]
DEF_EPS = {"layer_norm_backward": 1e-5, "rms_norm_backward": 1e-6}

rng = np.random.default_rng(SEED)


def torch_grads(op, x, w, g, eps, dtype):
    xt = torch.tensor(x, dtype=dtype, requires_grad=True)
    wt = torch.tensor(w, dtype=dtype, requires_grad=True)
    gt = torch.tensor(g, dtype=dtype)
    if op == "layer_norm_backward":
        bt = torch.zeros(w.shape, dtype=dtype, requires_grad=True)
        y = F.layer_norm(xt, (x.shape[-1],), wt, bt, eps)
        return [t.detach().numpy().astype(np.float64) for t in
                torch.autograd.grad((y * gt).sum(), (xt, wt, bt))]
    y = xt * torch.rsqrt((xt * xt).mean(-1, keepdim=True) + eps) * wt
    return [t.detach().numpy().astype(np.float64) for t in
            torch.autograd.grad((y * gt).sum(), (xt, wt))]


def numpy_grads(op, x, w, g, eps):
    D = x.shape[-1]
    x2, g2 = x.reshape(-1, D), g.reshape(-1, D)
    ln = op == "layer_norm_backward"
    mean = x2.mean(-1, keepdims=True) if ln else 0.0
    rstd = 1.0 / np.sqrt(((x2 - mean) ** 2).mean(-1, keepdims=True) + eps)
    xh = (x2 - mean) * rstd
    gh = g2 * w
    a = gh.mean(-1, keepdims=True) if ln else 0.0
    dx = rstd * (gh - a - xh * (gh * xh).mean(-1, keepdims=True))
    out = [dx.reshape(x.shape), (g2 * xh).sum(0)]
    if ln:
        out.append(g2.sum(0))
    return out


def close(a, b, rtol, atol):
    return bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


class Writer:
    def __init__(self, prefix="normv_data"):
        self.arrays = []
        self.index = {}
        self.prefix = prefix

    def array(self, x):
        vals = tuple(float(v) for v in np.ravel(x))
        if vals in self.index:
            return self.index[vals]
        name = "%s%d" % (self.prefix, len(self.arrays))
        self.index[vals] = name
        self.arrays.append((name, vals))
        return name


# batch_norm: (x shape, scale, offset, training, momentum, eps); None:
# the op's default (momentum 0.1, eps 1e-5)
BN_CASES = [
    ((2, 3), 1.0, 0.0, True, None, None),
    ((2, 3), 1.0, 0.0, False, None, None),
    ((4, 5, 3, 3), 1.0, 0.0, True, None, None),
    ((4, 5, 3, 3), 1.0, 0.0, False, None, None),
    ((3, 4, 7), 2.0, 0.5, True, 0.3, None),
    ((1, 6, 2, 5), 1.0, 0.0, True, None, 0.25),
    ((1, 6, 2, 5), 1.0, 0.0, False, 0.3, 0.25),
    ((8, 2, 1, 1), 1.0, 0.0, True, 1.0, None),
    ((5, 3, 40), 0.1, 3.0, True, None, None),
]
# group_norm: (x shape, scale, offset, num_groups, eps)
GN_CASES = [
    ((1, 4), 1.0, 0.0, 1, None),
    ((2, 4), 1.0, 0.0, 4, None),
    ((2, 4, 3), 1.0, 0.0, 2, None),
    ((3, 6, 2, 2), 2.0, 0.5, 3, None),
    ((2, 8, 5, 5), 1.0, 0.0, 4, None),
    ((4, 6, 7), 1.0, 0.0, 6, 0.25),
    ((2, 4, 3, 10), 0.1, 3.0, 1, None),
]


# batch_norm_backward (training form): (x shape, scale, offset, eps)
BN_BW_CASES = [
    ((2, 3), 1.0, 0.0, None),
    ((4, 5, 3, 3), 1.0, 0.0, None),
    ((3, 4, 7), 2.0, 0.5, None),
    ((1, 6, 2, 5), 1.0, 0.0, 0.25),
    ((5, 3, 8), 0.1, 3.0, None),
]
# group_norm_backward: (x shape, scale, offset, num_groups, eps); three
# small cases (the header stays under MAX_BYTES), larger shapes and other
# groupings in test_norm.c's random cases and finite differences
GN_BW_CASES = [
    ((2, 4, 2), 1.0, 0.0, 2, None),
    ((1, 6, 2), 0.1, 3.0, 3, 0.25),
    ((2, 2), 1.0, 0.0, 1, None),
]


def torch_bn(x, w, b, run, training, mom, eps, dtype):
    t = [torch.tensor(a, dtype=dtype) for a in (x, w, b, run[0], run[1])]
    y = F.batch_norm(t[0], t[3], t[4], t[1], t[2], training, mom, eps)
    return [y.numpy().astype(np.float64),
            np.stack([t[3].numpy(), t[4].numpy()]).astype(np.float64)]


def numpy_bn(x, w, b, run, training, mom, eps):
    ax = tuple(d for d in range(x.ndim) if d != 1)
    bc = [1, -1] + [1] * (x.ndim - 2)
    if training:
        n = x.size // x.shape[1]
        mean = x.mean(ax)
        var = ((x - mean.reshape(bc)) ** 2).mean(ax)
        run = np.stack([(1 - mom) * run[0] + mom * mean,
                        (1 - mom) * run[1] + mom * var * n / (n - 1)])
    else:
        mean, var = run[0], run[1]
    y = (x - mean.reshape(bc)) / np.sqrt(var.reshape(bc) + eps) * \
        w.reshape(bc) + b.reshape(bc)
    return [y, run]


def torch_gn(x, w, b, G, eps, dtype):
    t = [torch.tensor(a, dtype=dtype) for a in (x, w, b)]
    return [F.group_norm(t[0], G, t[1], t[2], eps).numpy().astype(
        np.float64)]


def numpy_gn(x, w, b, G, eps):
    x3 = x.reshape(x.shape[0], G, -1)
    mean = x3.mean(-1, keepdims=True)
    var = ((x3 - mean) ** 2).mean(-1, keepdims=True)
    bc = [1, -1] + [1] * (x.ndim - 2)
    y = ((x3 - mean) / np.sqrt(var + eps)).reshape(x.shape)
    return [y * w.reshape(bc) + b.reshape(bc)]


def torch_bn_grads(x, w, g, eps, dtype):
    xt = torch.tensor(x, dtype=dtype, requires_grad=True)
    wt = torch.tensor(w, dtype=dtype, requires_grad=True)
    bt = torch.zeros(w.shape, dtype=dtype, requires_grad=True)
    y = F.batch_norm(xt, None, None, wt, bt, True, 0.1, eps)
    return [t.detach().numpy().astype(np.float64) for t in
            torch.autograd.grad((y * torch.tensor(g, dtype=dtype)).sum(),
                                (xt, wt, bt))]


def numpy_bn_grads(x, w, g, eps):
    ax = tuple(d for d in range(x.ndim) if d != 1)
    bc = [1, -1] + [1] * (x.ndim - 2)
    n = x.size // x.shape[1]
    mean = x.mean(ax).reshape(bc)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(ax).reshape(bc) + eps)
    xh = (x - mean) * rstd
    sg, sgx = g.sum(ax), (g * xh).sum(ax)
    dx = w.reshape(bc) * rstd * (g - sg.reshape(bc) / n -
                                 xh * sgx.reshape(bc) / n)
    return [dx, sgx, sg]


def torch_gn_grads(x, w, g, G, eps, dtype):
    xt = torch.tensor(x, dtype=dtype, requires_grad=True)
    wt = torch.tensor(w, dtype=dtype, requires_grad=True)
    bt = torch.zeros(w.shape, dtype=dtype, requires_grad=True)
    y = F.group_norm(xt, G, wt, bt, eps)
    return [t.detach().numpy().astype(np.float64) for t in
            torch.autograd.grad((y * torch.tensor(g, dtype=dtype)).sum(),
                                (xt, wt, bt))]


def numpy_gn_grads(x, w, g, G, eps):
    N, C = x.shape[0], x.shape[1]
    bc = [1, -1] + [1] * (x.ndim - 2)
    x3 = x.reshape(N, G, -1)
    n = x3.shape[2]
    mean = x3.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((x3 - mean) ** 2).mean(-1, keepdims=True) + eps)
    xh = ((x3 - mean) * rstd).reshape(x.shape)
    gh = (g * w.reshape(bc)).reshape(N, G, -1)
    xh3 = xh.reshape(N, G, -1)
    dx = rstd * (gh - gh.sum(-1, keepdims=True) / n -
                 xh3 * (gh * xh3).sum(-1, keepdims=True) / n)
    ax = tuple(d for d in range(x.ndim) if d != 1)
    return [dx.reshape(x.shape), (g * xh).sum(ax), g.sum(ax)]


def nc_cases(w):
    """The batch_norm, group_norm and batch_norm_backward cases, their
    arrays in w."""
    r = np.random.default_rng(SEED + 1)
    cases = []
    specs = [("batch_norm",) + c for c in BN_CASES] + \
        [("group_norm",) + c[:3] + (c[3], None, c[4]) for c in GN_CASES] + \
        [("batch_norm_backward",) + c[:3] + (True, None, c[3])
         for c in BN_BW_CASES] + \
        [("group_norm_backward",) + c[:3] + (c[3], None, c[4])
         for c in GN_BW_CASES]
    for si, (op, shape, scale, off, a, mom, eps_set) in enumerate(specs):
        C = shape[1]
        base = dict(x=r.uniform(-1, 1, shape) * scale + off,
                    w=r.uniform(-1, 1, (C,)), b=r.uniform(-1, 1, (C,)),
                    run=np.stack([r.uniform(-1, 1, (C,)),
                                  r.uniform(0.25, 1, (C,))]))
        if op.endswith("_backward"):
            base["g"] = r.uniform(-1, 1, shape)
        for dt in ("f32", "f64"):
            v = {k: (q.astype(np.float32).astype(np.float64)
                     if dt == "f32" else q) for k, q in base.items()}
            eps = 1e-5 if eps_set is None else eps_set
            if dt == "f32":
                eps = float(np.float32(eps))
            if op == "batch_norm":
                m = 0.1 if mom is None else mom
                args = (v["x"], v["w"], v["b"], v["run"], a, m, eps)
                want, alt = torch_bn(*args, torch.float64), numpy_bn(*args)
                low = torch_bn(*args, torch.float32) if dt == "f32" else None
                ins = ("x", "w", "b", "run")
            elif op == "group_norm":
                args = (v["x"], v["w"], v["b"], a, eps)
                want, alt = torch_gn(*args, torch.float64), numpy_gn(*args)
                low = torch_gn(*args, torch.float32) if dt == "f32" else None
                ins = ("x", "w", "b")
            elif op == "group_norm_backward":
                args = (v["x"], v["w"], v["g"], a, eps)
                want = torch_gn_grads(*args, torch.float64)
                alt = numpy_gn_grads(*args)
                low = torch_gn_grads(*args, torch.float32) \
                    if dt == "f32" else None
                ins = ("g", "x", "w")
            else:
                args = (v["x"], v["w"], v["g"], eps)
                want = torch_bn_grads(*args, torch.float64)
                alt = numpy_bn_grads(*args)
                low = torch_bn_grads(*args, torch.float32) \
                    if dt == "f32" else None
                ins = ("g", "x", "w")
            for p, q in zip(want, alt):
                assert close(p, q, 1e-12, 1e-13), (op, shape)
            for p, q in zip(low or [], want):
                assert close(p, q, 1e-4, 1e-5), (op, shape, dt)
            bn = op == "batch_norm"
            cases.append(dict(
                name="%s_s%d_%s" % (op, si, dt), op=op, dtype=dt,
                shape=shape, training=int(a) if bn else -1,
                momentum=-1.0 if mom is None else float(mom),
                eps=-1.0 if eps_set is None else float(eps_set),
                groups=a if op.startswith("group_norm") else -1,
                ins=[w.array(v[k]) for k in ins],
                outs=[w.array(q) for q in want]))
    return cases


def nc_lines(w, cases):
    """The batch_norm and group_norm section of the header."""
    lines = ["""
/* batch_norm, group_norm and their gradients: x [N, C, ...] (f32 cases
 * exactly representable in float), w and b [C], batch_norm's running
 * [2, C] (mean; var) and its parameters (training; momentum and eps < 0:
 * the op's default), group_norm's num_groups and eps; the inputs in the
 * op's order (batch_norm: x, w, b, running; group_norm: x, w, b; the
 * gradients: g, x, w) and the float64 results of PyTorch's F.batch_norm
 * (y and the running statistics it updated in place), F.group_norm (y)
 * and the autograd of F.batch_norm in training and of F.group_norm (dx,
 * dw, db), cross-checked with NumPy. */
typedef struct bnv_case {
    const char *name;
    const char *op;
    const char *dtype; /* "f32" or "f64" */
    int ndim;
    int64_t shape[4]; /* x's shape; w, b are [shape[1]] */
    int training;     /* batch_norm: 0 or 1; else -1 */
    double momentum;  /* < 0: the op's default */
    double eps;       /* < 0: the op's default */
    int num_groups;   /* group_norm; else -1 */
    int n_in, n_out;
    const double *in[4];
    const double *out[3];
} bnv_case;
"""]
    for name, vals in w.arrays:
        lines.append("static const double %s[%d] = {" % (name, len(vals)))
        for i in range(0, len(vals), 4):
            lines.append("    " + ", ".join(repr(v) for v in vals[i:i + 4])
                         + ",")
        lines.append("};")
    lines.append("")
    lines.append("static const bnv_case bnv_cases[] = {")
    for c in cases:
        sh = list(c["shape"]) + [0] * (4 - len(c["shape"]))
        lines.append('    {"%s", "%s", "%s", %d, {%s}, %d, %r, %r, %d, %d, %d,'
                     % (c["name"], c["op"], c["dtype"], len(c["shape"]),
                        ", ".join(str(d) for d in sh), c["training"],
                        c["momentum"], c["eps"], c["groups"], len(c["ins"]),
                        len(c["outs"])))
        lines.append("     {%s}," % ", ".join(c["ins"]))
        lines.append("     {%s}}," % ", ".join(c["outs"]))
    lines.append("};")
    lines.append("#define BNV_N_CASES (sizeof bnv_cases / sizeof bnv_cases[0])")
    return lines


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
        "norm_vectors.h")
    w = Writer()
    cases = []
    for si, (shape, scale, off, eps_set) in enumerate(SHAPES):
        D = shape[-1]
        base = dict(x=rng.uniform(-1, 1, shape) * scale + off,
                    g=rng.uniform(-1, 1, shape),
                    w=rng.uniform(-1, 1, (D,)))
        for dt in ("f32", "f64"):
            v = {k: (a.astype(np.float32).astype(np.float64)
                     if dt == "f32" else a) for k, a in base.items()}
            for op in ("layer_norm_backward", "rms_norm_backward"):
                eps = DEF_EPS[op] if eps_set is None else eps_set
                if dt == "f32":  # eps as the f32 kernel holds it
                    eps = float(np.float32(eps))
                want = torch_grads(op, v["x"], v["w"], v["g"], eps,
                                   torch.float64)
                alt = numpy_grads(op, v["x"], v["w"], v["g"], eps)
                for a, b in zip(want, alt):
                    assert close(a, b, 1e-12, 1e-13), (op, shape)
                if dt == "f32":
                    got = torch_grads(op, v["x"], v["w"], v["g"], eps,
                                      torch.float32)
                    for a, b in zip(got, want):
                        assert close(a, b, 1e-4, 1e-5), (op, shape, dt)
                cases.append(dict(
                    name="%s_s%d_%s" % (op, si, dt), op=op, dtype=dt,
                    shape=shape, eps=eps_set,
                    ins=[w.array(v["g"]), w.array(v["x"]), w.array(v["w"])],
                    outs=[w.array(a) for a in want]))

    lines = []
    lines.append("""/* Oracle vectors of the normalization gradients.
 *
 * GENERATED by scripts/gen_oracle_norm.py (NumPy %s, PyTorch %s, seed
 * %d); do not edit, re-run the script.  Each case: the inputs g, x (of
 * x's shape) and w ([D], D the last dim of x; f32 cases exactly
 * representable in float), eps when it is not the op's default, and the
 * float64 gradients of PyTorch's autograd (F.layer_norm; rms_norm by its
 * formula), cross-checked with NumPy's closed forms.
 * Included by tests/test_norm.c only. */
#ifndef TB_TESTS_DATA_NORM_VECTORS_H
#define TB_TESTS_DATA_NORM_VECTORS_H

#include <stdint.h>

#define NORMV_MAX_OUT 3

typedef struct normv_case {
    const char *name;
    const char *op;
    const char *dtype; /* "f32" or "f64" */
    int ndim;
    int64_t shape[3];  /* x's (and g's) shape; w is [shape[ndim - 1]] */
    double eps;        /* < 0: the op's default */
    int n_out;
    const double *g, *x, *w;
    const double *out[NORMV_MAX_OUT]; /* dx, dw[, db] */
} normv_case;
""" % (np.__version__, torch.__version__, SEED))
    for name, vals in w.arrays:
        lines.append("static const double %s[%d] = {" % (name, len(vals)))
        for i in range(0, len(vals), 4):
            lines.append("    " + ", ".join(repr(v) for v in vals[i:i + 4])
                         + ",")
        lines.append("};")
    lines.append("")
    lines.append("static const normv_case normv_cases[] = {")
    for c in cases:
        sh = list(c["shape"]) + [0] * (3 - len(c["shape"]))
        lines.append('    {"%s", "%s", "%s", %d, {%s}, %r, %d,' % (
            c["name"], c["op"], c["dtype"], len(c["shape"]),
            ", ".join(str(d) for d in sh),
            -1.0 if c["eps"] is None else float(c["eps"]), len(c["outs"])))
        lines.append("     %s," % ", ".join(c["ins"]))
        lines.append("     {%s}}," % ", ".join(c["outs"]))
    lines.append("};")
    lines.append("#define NORMV_N_CASES "
                 "(sizeof normv_cases / sizeof normv_cases[0])")
    wn = Writer("bnv_data")
    ncc = nc_cases(wn)
    lines.extend(nc_lines(wn, ncc))
    lines.append("")
    lines.append("#endif")
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_BYTES:
        sys.exit("gen_oracle_norm: %d bytes, over %d" % (len(text), MAX_BYTES))
    with open(out_path + ".tmp", "w") as f:
        f.write(text)
    os.replace(out_path + ".tmp", out_path)
    print("%s: %d + %d cases, %d + %d arrays, %d bytes" % (
        out_path, len(cases), len(ncc), len(w.arrays), len(wn.arrays),
        len(text)))


if __name__ == "__main__":
    main()
