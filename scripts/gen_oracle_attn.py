#!/usr/bin/python3
"""Generate the attention oracle vectors: tests/data/attn_vectors.h.

For sdpa (and sdpa_unfused, which computes the same function) on small
shapes: the inputs q [B, H, Sq, D], k [B, H, Sk, D], v [B, H, Sk, Dv], the
parameters (causal, scale) and the float64 output of

    softmax(q @ k^T * scale + mask) @ v

with mask 0 where key j is allowed for query i (j <= i when causal:
PyTorch's is_causal, torch.ones(Sq, Sk).tril()) and -inf elsewhere; scale 0
means 1/sqrt(D) (tests/test_attn.c).

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch):

    /usr/bin/python3 scripts/gen_oracle_attn.py [OUTPUT]

How a case is made (independent of tbench's C code):
- Inputs come from a fixed-seed PCG64, uniform in [-1, 1]; f32 cases round
  them to float32 first, so the C test stores them exactly.  The
  "large logits" cases take integer q and k in [-20, 20] with D = 16 and
  scale 1/4 (exact in float32: every score is a multiple of 1/4 below
  2^24), scores up to 1600, whose exp overflows float64 (and float32 from
  89 on): a kernel must subtract the running max to get them right.
- The expected output is NumPy float64: scores, the row max subtracted,
  exp, normalised, times v.  PyTorch 1.13 (no F.scaled_dot_product_attention
  yet) computes the eager composition softmax(q @ k.transpose(-1, -2) *
  scale + mask) @ v on float64 tensors, and must agree to 1e-12 relative
  plus 1e-14 absolute.
- f32 cases also run that composition on float32 tensors (scale rounded
  to float32, as tbench's f32 kernels hold it) and must agree with the
  float64 output within the op table's f32 tolerance for sdpa (TOL_ACC:
  rtol 1e-5, atol 2e-6 * sqrt(D + Sk)), so that tolerance is known to be
  met by PyTorch itself.

sdpa_backward (appended after sdpa's arrays, which stay as they were;
its own PCG64 stream, seed SEED + 1): g [B, H, Sq, Dv], q, k, v uniform in
[-1, 1] and the float64 gradients dq, dk, dv of sum(g * out):
- PyTorch 1.13's autograd (torch.autograd.grad) through the eager
  composition above on float64 tensors;
- cross-checked with NumPy float64 closed forms (P the softmax, dV = P^T
  g, dP = g V^T, dS = P * (dP - rowsum(P * dP)), dQ = dS K * scale, dK =
  dS^T Q * scale) to 1e-12 relative plus 1e-14 absolute;
- f32 cases: PyTorch's float32 autograd within 1e-4 |want| + 1e-5 of the
  float64 gradients (PyTorch's own f32 error at these sizes).

Values are written with repr(), which round-trips float64 exactly through
a C compiler's correctly rounded strtod.
"""

import math
import os
import sys

import numpy as np
import torch

SEED = 20261128
MAX_BYTES = 400 * 1024
TOL_F32 = (1e-5, 2e-6)  # op.c TOL_ACC, f32; atol * sqrt(reduce_len)

# (B, H, Sq, Sk, D, Dv, scale, big): scale 0 = 1/sqrt(D); big: integer q
# and k in [-20, 20] (large logits).  Every shape runs causal and not.
SHAPES = [
    (1, 1, 1, 1, 1, 1, 0.0, False),      # S = 1, D = 1
    (1, 2, 1, 1, 16, 16, 0.0, False),    # S = 1
    (1, 2, 7, 7, 5, 5, 0.0, False),      # odd S and D
    (2, 1, 13, 9, 3, 6, 0.0, False),     # Sq > Sk, Dv != D
    (1, 2, 9, 21, 7, 4, 0.0, False),     # Sq < Sk
    (1, 1, 66, 66, 7, 5, 0.0, False),    # past one 64-row block
    (1, 1, 5, 70, 8, 8, 0.3, False),     # a non-default scale
    (1, 1, 3, 4, 2, 3, 2.0, False),      # scale > 1
    (1, 2, 19, 19, 16, 8, 0.0, True),    # large logits
    (1, 1, 66, 65, 16, 3, 0.0, True),    # large logits, two blocks
]

# sdpa_backward: (B, H, Sq, Sk, D, Dv, scale); every shape causal and
# not; kept small (the header stays under MAX_BYTES): S = 1, odd S and D,
# Sq > Sk with Dv != D, Sq < Sk with a set scale, past one 64-row block
BW_SHAPES = [
    (1, 1, 1, 1, 1, 1, 0.0),
    (1, 2, 5, 5, 3, 3, 0.0),
    (2, 1, 6, 4, 3, 2, 0.0),
    (1, 1, 4, 9, 2, 3, 0.7),
    (1, 1, 65, 65, 1, 1, 0.0),
]

rng = np.random.default_rng(SEED)


def expected(q, k, v, causal, scale):
    """NumPy float64: two-pass softmax per row, then @ v."""
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    sq, sk = s.shape[-2:]
    if causal:
        allowed = np.tril(np.ones((sq, sk), dtype=bool))
        s = np.where(allowed, s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    p = e / e.sum(axis=-1, keepdims=True)
    return np.einsum("bhij,bhjd->bhid", p, v)


def torch_eager(q, k, v, causal, scale, dtype):
    """PyTorch's eager composition of the same function."""
    tq, tk, tv = (torch.tensor(x, dtype=dtype) for x in (q, k, v))
    sq, sk = q.shape[2], k.shape[2]
    mask = torch.zeros(sq, sk, dtype=dtype)
    if causal:
        allowed = torch.ones(sq, sk, dtype=torch.bool).tril()
        mask = mask.masked_fill(~allowed, float("-inf"))
    s = tq @ tk.transpose(-1, -2) * scale + mask
    return (torch.softmax(s, dim=-1) @ tv).numpy().astype(np.float64)


def expected_grads(g, q, k, v, causal, scale):
    """NumPy float64 closed forms of sdpa's gradients."""
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    sq, sk = s.shape[-2:]
    if causal:
        allowed = np.tril(np.ones((sq, sk), dtype=bool))
        s = np.where(allowed, s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    dv = np.einsum("bhij,bhid->bhjd", p, g)
    dp = np.einsum("bhid,bhjd->bhij", g, v)
    ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True))
    dq = np.einsum("bhij,bhjd->bhid", ds, k) * scale
    dk = np.einsum("bhij,bhid->bhjd", ds, q) * scale
    return [dq, dk, dv]


def torch_grads(g, q, k, v, causal, scale, dtype):
    """PyTorch's autograd through the eager composition."""
    tq, tk, tv = (torch.tensor(x, dtype=dtype, requires_grad=True)
                  for x in (q, k, v))
    sq, sk = q.shape[2], k.shape[2]
    mask = torch.zeros(sq, sk, dtype=dtype)
    if causal:
        allowed = torch.ones(sq, sk, dtype=torch.bool).tril()
        mask = mask.masked_fill(~allowed, float("-inf"))
    s = tq @ tk.transpose(-1, -2) * scale + mask
    out = torch.softmax(s, dim=-1) @ tv
    grads = torch.autograd.grad((out * torch.tensor(g, dtype=dtype)).sum(),
                                (tq, tk, tv))
    return [x.numpy().astype(np.float64) for x in grads]


def bw_cases(w):
    """sdpa_backward's cases, their arrays in w."""
    r = np.random.default_rng(SEED + 1)
    cases = []
    for si, (b, h, sq, sk, d, dv, scale) in enumerate(BW_SHAPES):
        base = [r.uniform(-1, 1, (b, h, sq, dv)),
                r.uniform(-1, 1, (b, h, sq, d)),
                r.uniform(-1, 1, (b, h, sk, d)),
                r.uniform(-1, 1, (b, h, sk, dv))]
        for dt in ("f32", "f64"):
            ins = base
            if dt == "f32":
                ins = [x.astype(np.float32).astype(np.float64) for x in base]
            sc = scale if scale != 0 else 1 / math.sqrt(d)
            if dt == "f32":
                sc = float(np.float32(sc))
            for causal in (0, 1):
                want = torch_grads(*ins, causal, sc, torch.float64)
                alt = expected_grads(*ins, causal, sc)
                for a, x in zip(want, alt):
                    assert close(a, x, 1e-12, 1e-14), (si, dt, causal)
                if dt == "f32":
                    got = torch_grads(*ins, causal, sc, torch.float32)
                    for a, x in zip(got, want):
                        assert close(a, x, 1e-4, 1e-5), (si, causal)
                cases.append(dict(
                    name="bw_s%d_%dx%dx%dx%dx%dx%d_c%d_%s" % (
                        si, b, h, sq, sk, d, dv, causal, dt),
                    dtype=dt, dims=(b, h, sq, sk, d, dv), causal=causal,
                    scale=scale, ins=[w.array(x) for x in ins],
                    outs=[w.array(x) for x in want]))
    return cases


def bw_lines(w, cases):
    """sdpa_backward's section of the header."""
    lines = ["""
/* sdpa_backward: g [B, H, Sq, Dv], q, k, v (f32 cases exactly
 * representable in float), causal, scale (0: 1/sqrt(D)) and the float64
 * gradients dq, dk, dv of sum(g * sdpa(q, k, v)): PyTorch's autograd of
 * the eager composition, cross-checked with NumPy's closed forms. */
typedef struct attbv_case {
    const char *name;
    const char *dtype; /* "f32" or "f64" */
    int64_t B, H, Sq, Sk, D, Dv;
    int causal;
    double scale;
    const double *g, *q, *k, *v;
    const double *out[3]; /* dq, dk, dv */
} attbv_case;
"""]
    for name, vals in w.arrays:
        lines.append("static const double %s[%d] = {" % (name, len(vals)))
        for i in range(0, len(vals), 4):
            lines.append("    " + ", ".join(repr(v) for v in vals[i:i + 4])
                         + ",")
        lines.append("};")
    lines.append("")
    lines.append("static const attbv_case attbv_cases[] = {")
    for c in cases:
        lines.append('    {"%s", "%s", %d, %d, %d, %d, %d, %d, %d, %r,' % (
            (c["name"], c["dtype"]) + c["dims"] + (c["causal"], c["scale"])))
        lines.append("     %s, {%s}}," % (", ".join(c["ins"]),
                                         ", ".join(c["outs"])))
    lines.append("};")
    lines.append("#define ATTBV_N_CASES "
                 "(sizeof attbv_cases / sizeof attbv_cases[0])")
    return lines


def close(a, b, rtol, atol):
    return bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


class Writer:
    def __init__(self, prefix="attv_data"):
        self.arrays = []
        self.index = {}
        self.prefix = prefix

    def array(self, x):
        vals = tuple(float(v) for v in np.asarray(x).ravel())
        if vals in self.index:
            return self.index[vals]
        name = "%s%d" % (self.prefix, len(self.arrays))
        self.index[vals] = name
        self.arrays.append((name, vals))
        return name


def make_inputs(shape, big):
    b, h, sq, sk, d, dv = shape
    if big:
        q = rng.integers(-20, 21, (b, h, sq, d)).astype(np.float64)
        k = rng.integers(-20, 21, (b, h, sk, d)).astype(np.float64)
    else:
        q = rng.uniform(-1, 1, (b, h, sq, d))
        k = rng.uniform(-1, 1, (b, h, sk, d))
    v = rng.uniform(-1, 1, (b, h, sk, dv))
    return q, k, v


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
        "attn_vectors.h")
    w = Writer()
    cases = []
    for si, (b, h, sq, sk, d, dv, scale, big) in enumerate(SHAPES):
        base = make_inputs((b, h, sq, sk, d, dv), big)
        for dt in ("f32", "f64"):
            ins = base
            if dt == "f32":
                ins = [x.astype(np.float32).astype(np.float64) for x in base]
            sc = scale if scale != 0 else 1 / math.sqrt(d)
            if dt == "f32":
                sc = float(np.float32(sc))
            for causal in (0, 1):
                want = expected(*ins, causal, sc)
                assert np.all(np.isfinite(want))
                alt = torch_eager(*ins, causal, sc, torch.float64)
                assert close(alt, want, 1e-12, 1e-14), (si, dt, causal)
                if dt == "f32":
                    got = torch_eager(*ins, causal, sc, torch.float32)
                    atol = TOL_F32[1] * math.sqrt(d + sk)
                    assert close(got, want, TOL_F32[0], atol), \
                        (si, causal, np.abs(got - want).max())
                cases.append(dict(
                    name="s%d_%dx%dx%dx%dx%dx%d_c%d_%s" % (
                        si, b, h, sq, sk, d, dv, causal, dt),
                    dtype=dt, dims=(b, h, sq, sk, d, dv), causal=causal,
                    scale=scale, ins=[w.array(x) for x in ins],
                    out=w.array(want)))

    lines = ["""/* Oracle vectors of sdpa (and sdpa_unfused: the same function).
 *
 * GENERATED by scripts/gen_oracle_attn.py (NumPy %s, PyTorch %s, seed
 * %d); do not edit, re-run the script.  Each case: q, k, v (row-major
 * [B, H, S, D]; f32 cases exactly representable in float), causal, scale
 * (0: 1/sqrt(D)) and the float64 output of softmax(q @ k^T * scale +
 * mask) @ v (NumPy, cross-checked with PyTorch's eager composition);
 * sdpa_backward's cases after them (attbv_cases).
 * Included by tests/test_attn.c only. */
#ifndef TB_TESTS_DATA_ATTN_VECTORS_H
#define TB_TESTS_DATA_ATTN_VECTORS_H

#include <stdint.h>

typedef struct attv_case {
    const char *name;
    const char *dtype; /* "f32" or "f64" */
    int64_t B, H, Sq, Sk, D, Dv;
    int causal;
    double scale;
    const double *q, *k, *v, *out;
} attv_case;
""" % (np.__version__, torch.__version__, SEED)]
    for name, vals in w.arrays:
        lines.append("static const double %s[%d] = {" % (name, len(vals)))
        for i in range(0, len(vals), 4):
            lines.append("    " + ", ".join(repr(v) for v in vals[i:i + 4])
                         + ",")
        lines.append("};")
    lines.append("")
    lines.append("static const attv_case attv_cases[] = {")
    for c in cases:
        lines.append('    {"%s", "%s", %d, %d, %d, %d, %d, %d, %d, %r,' % (
            (c["name"], c["dtype"]) + c["dims"] + (c["causal"], c["scale"])))
        lines.append("     %s, %s, %s, %s}," % tuple(c["ins"] + [c["out"]]))
    lines.append("};")
    lines.append("#define ATTV_N_CASES "
                 "(sizeof attv_cases / sizeof attv_cases[0])")
    wb = Writer("attbv_data")
    lines.extend(bw_lines(wb, bw_cases(wb)))
    lines.append("")
    lines.append("#endif")
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_BYTES:
        sys.exit("gen_oracle_attn: %d bytes, over %d" % (len(text),
                                                          MAX_BYTES))
    with open(out_path + ".tmp", "w") as f:
        f.write(text)
    os.replace(out_path + ".tmp", out_path)
    print("%s: %d cases, %d arrays, %d bytes" % (
        out_path, len(cases), len(w.arrays) + len(wb.arrays), len(text)))


if __name__ == "__main__":
    main()
