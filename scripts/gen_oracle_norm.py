#!/usr/bin/python3
"""Generate the normalization-gradient oracle vectors: tests/data/norm_vectors.h.

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
    def __init__(self):
        self.arrays = []
        self.index = {}

    def array(self, x):
        vals = tuple(float(v) for v in np.ravel(x))
        if vals in self.index:
            return self.index[vals]
        name = "normv_data%d" % len(self.arrays)
        self.index[vals] = name
        self.arrays.append((name, vals))
        return name


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
    lines.append("")
    lines.append("#endif")
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_BYTES:
        sys.exit("gen_oracle_norm: %d bytes, over %d" % (len(text), MAX_BYTES))
    with open(out_path + ".tmp", "w") as f:
        f.write(text)
    os.replace(out_path + ".tmp", out_path)
    print("%s: %d cases, %d arrays, %d bytes" % (
        out_path, len(cases), len(w.arrays), len(text)))


if __name__ == "__main__":
    main()
