#!/usr/bin/python3
"""Generate the oracle vectors of the embedding family: tests/data/embed_vectors.h.

For cross_entropy and cross_entropy_backward (issue 30 item 3), the inputs
and the float64 outputs tests/test_embed.c holds tbench's reference and
cpu rows to.

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch):

    /usr/bin/python3 scripts/gen_oracle_embed.py [OUTPUT]

How a case is made (all independent of tbench's C code):
- Inputs come from a fixed-seed PCG64: logits uniform in [-4, 4], or
  "large" logits of magnitude up to 1000 (the exponentials of every class
  but the largest underflow: the max must be subtracted first), targets
  uniform integers in [0, C) (repeats in a batch are the rule).  f32
  cases round the logits to float32 first, so the C test stores them
  exactly; targets are small integers, exact in both dtypes.
- The expected values are NumPy float64: loss = mean_i(lse(x_i) -
  x_i[t_i]) with lse(x) = m + log(sum(exp(x - m))), m = max(x), and the
  gradient (exp(x - lse) - onehot(t)) * g / N.
- Each is cross-checked against PyTorch 1.13 in float64:
  F.cross_entropy(x, t, reduction='mean') and the gradient of g * loss
  by autograd (torch.autograd.grad), to 1e-12 relative (plus 1e-300):
  x - lse at |x| ~ 1000 is rounded to 2^-43 ~ 1.1e-13 absolute, which
  exp turns into that much relative error, in either library.
- f32 cases also run PyTorch in float32, which must agree with the
  float64 values within the op table's f32 tolerance (TOL_ACC, with the
  reduce length C of op_backward.c), so that the tolerance is known to be
  met by PyTorch itself.

Values are written with repr(), which round-trips float64 exactly through
a C compiler's correctly rounded strtod.
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

SEED = 20261128
# (N, C, kind): one class, odd sizes and vector tails, a row past the
# online statistics' blocks (256 in C, 1024 in SIMD), rows to split over
# two threads, large logits
SHAPES = [(1, 1, "u"), (3, 1, "u"), (5, 7, "u"), (17, 10, "u"),
          (4, 33, "u"), (1, 1100, "u"), (150, 7, "u"), (4, 9, "large"),
          (6, 40, "large")]
GS = [1.0, -0.375]
TOL_F32 = (1e-5, 2e-6)  # op.c TOL_ACC, f32: atol * sqrt(C) + rtol |want|
MAX_BYTES = 600 * 1024

rng = np.random.default_rng(SEED)


def lse(x):
    m = x.max(axis=1, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]


def ce_numpy(x, t):
    n = x.shape[0]
    return np.array([np.mean(lse(x) - x[np.arange(n), t])])


def ce_bw_numpy(g, x, t):
    n, c = x.shape
    p = np.exp(x - lse(x)[:, None])
    p[np.arange(n), t] -= 1.0
    return p * (g / n)


def ce_torch(x, t, g, dtype):
    xt = torch.tensor(x, dtype=dtype, requires_grad=True)
    tt = torch.tensor(t, dtype=torch.int64)
    loss = F.cross_entropy(xt, tt, reduction="mean")
    (dx,) = torch.autograd.grad(loss * g, xt)
    return (np.array([loss.item()]),
            dx.detach().numpy().astype(np.float64))


def close(a, b, rtol, atol):
    return bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


def make_logits(n, c, kind):
    if kind == "large":
        x = rng.uniform(-1000, 1000, (n, c))
        x[:, 0] = x.max(axis=1) - rng.uniform(0, 3, n)  # a near tie
        return x
    return rng.uniform(-4, 4, (n, c))


class Writer:
    def __init__(self):
        self.arrays = []
        self.index = {}

    def array(self, x):
        vals = tuple(float(v) for v in np.ravel(x))
        if vals in self.index:
            return self.index[vals]
        name = "embv_data%d" % len(self.arrays)
        self.index[vals] = name
        self.arrays.append((name, vals))
        return name


def shape_c(s):
    return "{%d, {%s}}" % (len(s), ", ".join(str(d) for d in s))


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
        "embed_vectors.h")
    w = Writer()
    cases = []
    for k, (n, c, kind) in enumerate(SHAPES):
        x64 = make_logits(n, c, kind)
        t = rng.integers(0, c, n)
        g = GS[k % len(GS)]
        for dt in ("f32", "f64"):
            x = x64.astype(np.float32).astype(np.float64) if dt == "f32" \
                else x64
            loss = ce_numpy(x, t)
            dx = ce_bw_numpy(g, x, t)
            tl, tdx = ce_torch(x, t, g, torch.float64)
            assert close(loss, tl, 1e-12, 1e-300), ("loss", n, c, kind)
            assert close(dx, tdx, 1e-12, 1e-300), ("grad", n, c, kind)
            if dt == "f32":
                fl, fdx = ce_torch(x.astype(np.float32), t, g,
                                   torch.float32)
                atol = TOL_F32[1] * np.sqrt(c)
                assert close(fl, loss, TOL_F32[0], atol), ("f32 loss", n, c)
                assert close(fdx, dx, TOL_F32[0], atol), ("f32 grad", n, c)
            name = "ce_%dx%d_%s_%s" % (n, c, kind, dt)
            xs, ts = w.array(x), w.array(t.astype(np.float64))
            cases.append(dict(name=name, op="cross_entropy", dtype=dt,
                              shapes=[(n, c), (n,)], ins=[xs, ts],
                              out=w.array(loss), n_out=1))
            cases.append(dict(name=name + "_bw", op="cross_entropy_backward",
                              dtype=dt, shapes=[(1,), (n, c), (n,)],
                              ins=[w.array([g]), xs, ts],
                              out=w.array(dx), n_out=n * c))
    text = render(w, cases)
    if len(text) > MAX_BYTES:
        sys.exit("gen_oracle_embed: %d bytes, over %d" % (len(text),
                                                          MAX_BYTES))
    with open(out_path, "w") as f:
        f.write(text)
    print("wrote %s: %d cases, %d arrays" % (out_path, len(cases),
                                             len(w.arrays)))


def render(w, cases):
    o = []
    o.append("""/* Oracle vectors of the embedding family (issue 30 item 3).
 *
 * GENERATED by scripts/gen_oracle_embed.py (NumPy %s, PyTorch %s, seed
 * %d); do not edit, re-run the script.  Each case: the op, the dtype,
 * the inputs (f32 cases exactly representable in float; indices as
 * values) and the NumPy float64 outputs, cross-checked against PyTorch's
 * F.cross_entropy and its autograd gradient in float64.
 * Included by tests/test_embed.c only. */
#ifndef TB_TESTS_DATA_EMBED_VECTORS_H
#define TB_TESTS_DATA_EMBED_VECTORS_H

#include <stdint.h>

#define EMBV_MAX_IN 3

typedef struct embv_case {
    const char *name;
    const char *op;
    const char *dtype; /* "f32" or "f64" */
    int n_in;
    struct {
        int ndim;
        int64_t dim[4];
    } shape[EMBV_MAX_IN];
    const double *in[EMBV_MAX_IN];
    int64_t n_out; /* elements of the one output */
    const double *out;
} embv_case;
""" % (np.__version__, torch.__version__, SEED))
    for name, vals in w.arrays:
        o.append("static const double %s[%d] = {" % (name, len(vals)))
        line = "   "
        for v in vals:
            item = " %r," % v
            if len(line) + len(item) > 78:
                o.append(line)
                line = "   "
            line += item
        o.append(line)
        o.append("};")
    o.append("")
    o.append("static const embv_case embv_cases[] = {")
    for c in cases:
        shapes = ", ".join(shape_c(s) for s in c["shapes"])
        o.append('    {"%s", "%s", "%s", %d, {%s},' % (
            c["name"], c["op"], c["dtype"], len(c["ins"]), shapes))
        o.append("     {%s}, %d, %s}," % (", ".join(c["ins"]), c["n_out"],
                                          c["out"]))
    o.append("};")
    o.append("#define EMBV_N_CASES (sizeof embv_cases / sizeof embv_cases[0])")
    o.append("")
    o.append("#endif")
    return "\n".join(o) + "\n"


if __name__ == "__main__":
    main()
