#!/usr/bin/python3
"""Generate the oracle vectors of the embedding family: tests/data/embed_vectors.h.

For cross_entropy, cross_entropy_backward, embedding and
embedding_backward (issue 30 item 3), the inputs and the float64 outputs
tests/test_embed.c holds tbench's reference and cpu rows to.

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
- embedding: weight rows gathered, W[idx]; embedding_backward: dW =
  zeros, then np.add.at(dW, idx, g) (the rows of repeated indices summed:
  every batch of indices here repeats some).  Cross-checked against
  F.embedding and the autograd gradient of sum(F.embedding(idx, W) * g)
  in float64 to 1e-13 relative; f32 cases against PyTorch in float32
  within TOL_ACC with the reduce length n (the number of indices).
- dropout: PyTorch's mask comes from another generator, so the oracle is
  the stream's definition (src/ops/rand.h, written again here in Python
  integers: SplitMix64 with Vigna's constants): element i is kept when
  mix(key + (i + 1) G) >> 11 >= ceil(p 2^53), key = mix(seed + G), and
  out = x * (keep ? s : 0) with s = 1 / (1 - p) rounded in the dtype
  (PyTorch's noise.div_(1 - p); f32: 1 - p rounded to float, then the
  float reciprocal).  PyTorch's F.dropout is used to confirm that form:
  its kept elements equal x * s exactly (float32 and float64).
- Each cross_entropy case is cross-checked against PyTorch 1.13 in float64:
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

import math
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
# embedding: (V, D, idx shape)
EMB = [(1, 1, (3,)), (7, 13, (5,)), (10, 17, (3, 7)), (50, 8, (2, 3, 4)),
       (4, 13, (9,)), (3, 1, (6,))]
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


def emb_torch(w, idx, g, dtype):
    wt = torch.tensor(w, dtype=dtype, requires_grad=True)
    it = torch.tensor(idx, dtype=torch.int64)
    y = F.embedding(it, wt)
    (dw,) = torch.autograd.grad((y * torch.tensor(g, dtype=dtype)).sum(),
                                wt)
    return (y.detach().numpy().astype(np.float64),
            dw.numpy().astype(np.float64))


def emb_cases(w, cases):
    for k, (v, d, ishape) in enumerate(EMB):
        w64 = rng.uniform(-1, 1, (v, d))
        idx = rng.integers(0, v, ishape)
        g64 = rng.uniform(-1, 1, ishape + (d,))
        for dt in ("f32", "f64"):
            rnd = (lambda a: a.astype(np.float32).astype(np.float64)) \
                if dt == "f32" else (lambda a: a)
            wv, gv = rnd(w64), rnd(g64)
            y = wv[idx]
            dw = np.zeros((v, d))
            np.add.at(dw, idx, gv)
            ty, tdw = emb_torch(wv, idx, gv, torch.float64)
            assert close(y, ty, 0, 0), ("embedding", v, d)
            assert close(dw, tdw, 1e-13, 1e-300), ("embedding grad", v, d)
            if dt == "f32":
                _, fdw = emb_torch(wv.astype(np.float32), idx,
                                   gv.astype(np.float32), torch.float32)
                atol = TOL_F32[1] * np.sqrt(idx.size)
                assert close(fdw, dw, TOL_F32[0], atol), ("f32 grad", v, d)
            name = "emb_%dx%d_%s_%s" % (v, d, "x".join(map(str, ishape)),
                                       dt)
            ids = w.array(idx.astype(np.float64))
            cases.append(dict(name=name, op="embedding", dtype=dt,
                              shapes=[(v, d), ishape],
                              ins=[w.array(wv), ids], out=w.array(y),
                              n_out=y.size))
            cases.append(dict(name=name + "_bw", op="embedding_backward",
                              dtype=dt, shapes=[ishape + (d,), ishape],
                              ins=[w.array(gv), ids], out=w.array(dw),
                              n_out=dw.size, params=[("num_weights", v)]))


M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix(z):
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def keep_mask(seed, p, n):
    key = mix(seed + GAMMA)
    thr = math.ceil(p * 2.0 ** 53)
    return np.array([(mix(key + (i + 1) * GAMMA) >> 11) >= thr
                     for i in range(n)])


def drop_scale(p, dt):
    if dt == "f32":
        return float(np.float32(1.0) / np.float32(1.0 - p))
    return 1.0 / (1.0 - p)


def torch_scale_check(p, dt):
    """PyTorch's kept elements are x * s with drop_scale's s."""
    dtype = torch.float32 if dt == "f32" else torch.float64
    torch.manual_seed(0)
    x = torch.rand(4096, dtype=dtype) + 0.5
    y = F.dropout(x, p=p, training=True)
    kept = y != 0
    s = torch.tensor(drop_scale(p, dt), dtype=dtype)
    assert torch.equal(y[kept], x[kept] * s), ("dropout scale", p, dt)


DROP = [(1, 0.5, 0), (7, 0.0, 3), (100, 0.3, 12345), (1000, 0.5, 1),
        (513, 0.9, 2 ** 53), (64, 0.1, 7)]


def drop_cases(w, cases):
    for n, p, seed in DROP:
        x64 = rng.uniform(-4, 4, n)
        keep = keep_mask(seed, p, n)
        for dt in ("f32", "f64"):
            x = x64.astype(np.float32).astype(np.float64) if dt == "f32" \
                else x64
            if p > 0:
                torch_scale_check(p, dt)
            y = x * np.where(keep, drop_scale(p, dt), 0.0)
            cases.append(dict(name="drop_%d_p%g_s%d_%s" % (n, p, seed, dt),
                              op="dropout", dtype=dt, shapes=[(n,)],
                              ins=[w.array(x)], out=w.array(y), n_out=n,
                              params=[("p", p), ("seed", seed)]))


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
    emb_cases(w, cases)
    drop_cases(w, cases)
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
 * F.cross_entropy, F.embedding and their autograd gradients in
 * float64; dropout's from the stream's definition (ops/rand.h) in Python
 * integers, its scale confirmed against F.dropout.
 * Included by tests/test_embed.c only. */
#ifndef TB_TESTS_DATA_EMBED_VECTORS_H
#define TB_TESTS_DATA_EMBED_VECTORS_H

#include <stdint.h>

#define EMBV_MAX_IN 3
#define EMBV_MAX_PARAMS 2

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
    int n_params;
    struct {
        const char *name;
        double value;
    } params[EMBV_MAX_PARAMS];
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
        prm = c.get("params", [])
        ptxt = ", ".join('{"%s", %r}' % (k, float(v)) for k, v in prm)
        o.append("     {%s}, %d, %s, %d, {%s}}," % (
            ", ".join(c["ins"]), c["n_out"], c["out"], len(prm),
            ptxt or "{NULL, 0}"))
    o.append("};")
    o.append("#define EMBV_N_CASES (sizeof embv_cases / sizeof embv_cases[0])")
    o.append("")
    o.append("#endif")
    return "\n".join(o) + "\n"


if __name__ == "__main__":
    main()
