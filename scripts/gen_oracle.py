#!/usr/bin/python3
"""Generate the oracle vectors for tests/test_oracle.c: tests/data/oracle_vectors.h.

Covers the ops added in issue 3 (unary math and activations, pow/maximum/
minimum, the scalar forms, max/min/argmax/var, softmax, permute, add_relu,
linear, conv2d, conv2d_nobias, max_pool2d, avg_pool2d); the first ten ops
have their own vectors (scripts/gen_ref_vectors.py -> ref_vectors.h), and
so have the creation ops, optimizer steps and svd/qr/eigh
(gen_oracle_create.py, gen_oracle_optim.py, gen_oracle_linalg.py).
scripts/gen_vectors.sh runs every generator.

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch,
python3-mpmath), from anywhere:

    /usr/bin/python3 scripts/gen_oracle.py [OUTPUT]

OUTPUT defaults to tests/data/oracle_vectors.h.  The output is
deterministic (fixed seed, PCG64) and committed, so the C tests need
neither Python nor these packages.

Where the expected values come from (all independent of tbench's C code):

- NumPy float64 for the ops NumPy has: neg, abs, exp, log, sqrt, rsqrt
  (1/np.sqrt), tanh, leaky_relu (np.where), pow, maximum, minimum, the
  scalar forms, hardswish (x * relu6(x + 3) / 6), max, min, argmax, var
  (np.var with ddof), softmax (the
  max-shifted formula), permute (np.transpose), add_relu, linear
  (np.matmul), conv2d and the pools (direct NumPy loops over windows).
- mpmath at 40 significant digits, rounded to float64, for sigmoid, silu,
  softplus, gelu and gelu_tanh, whose usual float64 formulas lose accuracy
  in the tails (1 + erf(x) cancels for negative x).  These are exact to
  the last bit, so they also hold the C reference kernels to 1e-12.
- PyTorch (float64) cross-checks sigmoid, tanh, gelu (both forms), silu,
  softplus, hardswish, exp, log, rsqrt, pow, maximum, minimum, softmax, var, argmax
  along an axis, permute, linear, conv2d, conv2d_nobias, max_pool2d and
  avg_pool2d (count_include_pad=True): NumPy (or mpmath) and PyTorch must
  agree (1e-12 relative, 1e-15 absolute for PyTorch's cancelling tails)
  before a case is written; mpmath also cross-checks NumPy's exp, log and
  tanh to 4e-16.

f32 cases: inputs are rounded to float32 first (so the C test stores them
exactly), float parameters too (tbench rounds add_scalar's scalar,
leaky_relu's alpha and softplus's beta/threshold to the case dtype, as
PyTorch does with a Python scalar), and the expected value is still the
float64 result from those rounded inputs.  The C test compares the
reference kernel with it at 1e-12 and the cpu kernel with it (rounded to
float32) within the op's tolerance from the op table.

Values are written with repr(), which round-trips float64 exactly through
a C compiler's correctly rounded strtod.
"""

import math
import os
import sys

import mpmath
import numpy as np
import torch
import torch.nn.functional as F

SEED = 20240603
MAX_BYTES = 3 * 1024 * 1024
MAX_IN = 3
MAX_DIMS = 5
MAX_PARAMS = 8

mpmath.mp.dps = 40
rng = np.random.default_rng(SEED)


# ---- inputs ---------------------------------------------------------------

def uniform(shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape)


def as_dtype(x, dtype):
    x = np.asarray(x, dtype=np.float64)
    if dtype == "f32":
        with np.errstate(over="ignore"):
            x = x.astype(np.float32).astype(np.float64)
    return x


def param_as_dtype(v, dtype):
    return float(np.float32(v)) if dtype == "f32" else float(v)


# Float parameters that act on values: rounded to the case dtype.
VALUE_PARAMS = {"scalar", "alpha", "beta", "threshold", "eps"}


# ---- oracles --------------------------------------------------------------

def mp_map(f, x):
    """Apply an mpmath function elementwise, exactly, rounded to float64."""
    out = np.empty(x.shape)
    flat = x.ravel()
    res = out.ravel()
    for i, v in enumerate(flat):
        if math.isnan(v):
            res[i] = math.nan
        else:
            res[i] = float(f(mpmath.mpf(float(v))))
    return out


def mp_sigmoid(x):
    if mpmath.isinf(x):
        return mpmath.mpf(1) if x > 0 else mpmath.mpf(0)
    return 1 / (1 + mpmath.exp(-x))


def mp_gelu(x):
    return x / 2 * mpmath.erfc(-x / mpmath.sqrt(2))


def mp_gelu_tanh(x):
    """0.5 x (1 + tanh u) = x / (1 + exp(-2u)): the same function, but
    1 + tanh(u) would cancel even at 40 digits for u < -50."""
    c = mpmath.sqrt(2 / mpmath.pi)
    u = c * (x + mpmath.mpf("0.044715") * x ** 3)
    return x / (1 + mpmath.exp(-2 * u))


def softplus_np(x, beta, threshold):
    def f(v):
        z = beta * v  # exact in mpmath: beta and v are doubles
        if z > threshold:
            return v
        return mpmath.log1p(mpmath.exp(z)) / beta
    return mp_map(f, x)


def softmax_np(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def window_out(n, k, s, p, d):
    span = n + 2 * p - d * (k - 1) - 1
    return span // s + 1 if span >= 0 else 0


def conv2d_np(x, w, b, stride, pad, dil):
    N, C, H, W = x.shape
    O, _, KH, KW = w.shape
    OH = window_out(H, KH, stride, pad, dil)
    OW = window_out(W, KW, stride, pad, dil)
    xp = np.zeros((N, C, H + 2 * pad, W + 2 * pad))
    xp[:, :, pad:pad + H, pad:pad + W] = x
    out = np.zeros((N, O, OH, OW))
    for oh in range(OH):
        for ow in range(OW):
            h0, w0 = oh * stride, ow * stride
            win = xp[:, :, h0:h0 + dil * (KH - 1) + 1:dil,
                     w0:w0 + dil * (KW - 1) + 1:dil]
            out[:, :, oh, ow] = np.einsum("nchw,ochw->no", win, w)
    if b is not None:
        out += b[None, :, None, None]
    return out


def pool2d_np(x, k, stride, pad, is_max):
    N, C, H, W = x.shape
    OH = window_out(H, k, stride, pad, 1)
    OW = window_out(W, k, stride, pad, 1)
    fill = -np.inf if is_max else 0.0
    xp = np.full((N, C, H + 2 * pad, W + 2 * pad), fill)
    xp[:, :, pad:pad + H, pad:pad + W] = x
    out = np.zeros((N, C, OH, OW))
    for oh in range(OH):
        for ow in range(OW):
            win = xp[:, :, oh * stride:oh * stride + k,
                     ow * stride:ow * stride + k]
            out[:, :, oh, ow] = (win.max(axis=(2, 3)) if is_max
                                 else win.sum(axis=(2, 3)) / (k * k))
    return out


def perm_of(params, ndim):
    if not any(k.startswith("p") for k in params):
        return list(range(ndim))[::-1]
    return [params["p%d" % i] % ndim for i in range(ndim)]


def oracle(op, ins, P):
    """Expected output (float64) of op on inputs ins with parameters P
    (defaults filled, value parameters already rounded)."""
    x = ins[0]
    with np.errstate(all="ignore"):
        if op == "layer_norm":
            m = x.mean(axis=-1, keepdims=True)
            v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
            return (x - m) / np.sqrt(v + P["eps"]) * ins[1] + ins[2]
        if op == "rms_norm":
            ms = (x * x).mean(axis=-1, keepdims=True)
            return x / np.sqrt(ms + P["eps"]) * ins[1]
        if op == "neg":
            return -x
        if op == "abs":
            return np.abs(x)
        if op == "exp":
            return np.exp(x)
        if op == "log":
            return np.log(x)
        if op == "sqrt":
            return np.sqrt(x)
        if op == "rsqrt":
            return 1.0 / np.sqrt(x)
        if op == "leaky_relu":
            return np.where(x > 0, x, P["alpha"] * x)
        if op == "sigmoid":
            return mp_map(mp_sigmoid, x)
        if op == "tanh":
            return np.tanh(x)
        if op == "gelu":
            return mp_map(mp_gelu, x)
        if op == "gelu_tanh":
            return mp_map(mp_gelu_tanh, x)
        if op == "silu":
            return mp_map(lambda v: v * mp_sigmoid(v), x)
        if op == "softplus":
            return softplus_np(x, P["beta"], P["threshold"])
        if op == "hardswish":
            return x * np.minimum(np.maximum(x + 3.0, 0.0), 6.0) / 6.0
        if op == "add_scalar":
            return x + P["scalar"]
        if op == "sub_scalar":
            return x - P["scalar"]
        if op == "mul_scalar":
            return x * P["scalar"]
        if op == "div_scalar":
            return x / P["scalar"]
        if op == "pow":
            return np.power(ins[0], ins[1])
        if op == "maximum":
            return np.maximum(ins[0], ins[1])
        if op == "minimum":
            return np.minimum(ins[0], ins[1])
        if op == "add_relu":
            s = ins[0] + ins[1]
            return np.where(s > 0, s, np.where(np.isnan(s), s, 0.0))
        if op in ("max", "min", "argmax", "var"):
            axis = P.get("axis")
            keep = bool(P["keepdim"])
            if op == "var":
                return np.asarray(np.var(x, axis=axis, ddof=P["correction"],
                                         keepdims=keep))
            f = {"max": np.max, "min": np.min, "argmax": np.argmax}[op]
            return np.asarray(f(x, axis=axis, keepdims=keep),
                              dtype=np.float64)
        if op == "softmax":
            return softmax_np(x, P["axis"])
        if op == "permute":
            return np.ascontiguousarray(np.transpose(x, perm_of(P, x.ndim)))
        if op == "linear":
            return np.maximum(np.matmul(ins[0], ins[1]) + ins[2], 0.0)
        if op in ("conv2d", "conv2d_nobias"):
            b = ins[2] if op == "conv2d" else None
            return conv2d_np(ins[0], ins[1], b, P["stride"], P["padding"],
                             P["dilation"])
        if op in ("max_pool2d", "avg_pool2d"):
            k = P["kernel"]
            return pool2d_np(x, k, P.get("stride", k), P["padding"],
                             op == "max_pool2d")
    raise ValueError(op)


def torch_check(op, ins, P):
    """The same result from PyTorch (float64), or None if torch has no
    direct equivalent worth checking."""
    t = [torch.from_numpy(np.ascontiguousarray(a)) for a in ins]
    x = t[0]
    if op == "layer_norm":
        return F.layer_norm(x, (x.shape[-1],), t[1], t[2], P["eps"])
    if op == "rms_norm":  # PyTorch 1.13 has no rms_norm: its ops
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + P["eps"]) \
            * t[1]
    if op == "sigmoid":
        return torch.sigmoid(x)
    if op == "tanh":
        return torch.tanh(x)
    if op == "gelu":
        return F.gelu(x)
    if op == "gelu_tanh":
        return F.gelu(x, approximate="tanh")
    if op == "silu":
        return F.silu(x)
    if op == "softplus":
        return F.softplus(x, beta=P["beta"], threshold=P["threshold"])
    if op == "hardswish":
        return F.hardswish(x)
    if op == "exp":
        return torch.exp(x)
    if op == "log":
        return torch.log(x)
    if op == "rsqrt":
        return torch.rsqrt(x)
    if op == "pow":
        return torch.pow(t[0], t[1])
    if op == "maximum":
        return torch.maximum(t[0], t[1])
    if op == "minimum":
        return torch.minimum(t[0], t[1])
    if op == "softmax":
        return torch.softmax(x, dim=P["axis"])
    if op == "var":
        if "axis" in P:
            return torch.var(x, dim=P["axis"], unbiased=P["correction"] == 1,
                             keepdim=bool(P["keepdim"]))
        v = torch.var(x, unbiased=P["correction"] == 1)
        return v.reshape([1] * x.dim()) if P["keepdim"] else v
    if op == "argmax":
        if "axis" in P:
            return torch.argmax(x, dim=P["axis"],
                                keepdim=bool(P["keepdim"])).double()
        return None
    if op == "permute":
        return x.permute(*perm_of(P, x.dim())).contiguous()
    if op == "linear":
        return torch.relu(t[0] @ t[1] + t[2])
    if op in ("conv2d", "conv2d_nobias"):
        return F.conv2d(x, t[1], t[2] if op == "conv2d" else None,
                        stride=P["stride"], padding=P["padding"],
                        dilation=P["dilation"])
    if op == "max_pool2d":
        return F.max_pool2d(x, P["kernel"], P.get("stride", P["kernel"]),
                            P["padding"])
    if op == "avg_pool2d":
        return F.avg_pool2d(x, P["kernel"], P.get("stride", P["kernel"]),
                            P["padding"], count_include_pad=True)
    return None


def mp_check(op, x):
    """exp/log/tanh from mpmath, to cross-check NumPy's float64 libm."""
    f = {"exp": mpmath.exp, "log": mpmath.log, "tanh": mpmath.tanh}.get(op)
    if f is None:
        return None

    def g(v):
        if mpmath.isinf(v) or (op == "log" and v <= 0):
            return {"exp": math.exp, "log": lambda a: math.nan if a < 0
                    else -math.inf if a == 0 else math.inf,
                    "tanh": math.tanh}[op](float(v))
        return f(v)
    return mp_map(g, x)


def agree(a, b, rtol, atol):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    same_special = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))
    with np.errstate(invalid="ignore"):
        close = np.abs(a - b) <= atol + rtol * np.abs(b)
    return bool(np.all(same_special | close))


# ---- parameter schemas (defaults, as in src/ops/op.c) ---------------------

DEFAULTS = {
    "layer_norm": {"eps": 1e-5},
    "rms_norm": {"eps": 1e-6},
    "leaky_relu": {"alpha": 0.01},
    "softplus": {"beta": 1.0, "threshold": 20.0},
    "add_scalar": {"scalar": 1.0},
    "sub_scalar": {"scalar": 1.0},
    "mul_scalar": {"scalar": 1.0},
    "div_scalar": {"scalar": 1.0},
    "max": {"keepdim": 0},
    "min": {"keepdim": 0},
    "argmax": {"keepdim": 0},
    "var": {"keepdim": 0, "correction": 1},
    "softmax": {"axis": -1},
    "conv2d": {"stride": 1, "padding": 0, "dilation": 1},
    "conv2d_nobias": {"stride": 1, "padding": 0, "dilation": 1},
    "max_pool2d": {"kernel": 2, "padding": 0},
    "avg_pool2d": {"kernel": 2, "padding": 0},
}

N_IN = {"pow": 2, "maximum": 2, "minimum": 2, "add_relu": 2, "linear": 3,
        "conv2d": 3, "conv2d_nobias": 2, "layer_norm": 3, "rms_norm": 2}

# ---- the cases ------------------------------------------------------------

cases = []


def case(op, dtype, ins, params=None, note=""):
    """params: what the C test sets explicitly (absent ones take the
    schema default there, and here from DEFAULTS)."""
    params = dict(params or {})
    assert len(ins) == N_IN.get(op, 1), op
    ins = [as_dtype(x, dtype) for x in ins]
    for k in params:
        if k in VALUE_PARAMS:
            params[k] = param_as_dtype(params[k], dtype)
    full = dict(DEFAULTS.get(op, {}))
    for k, v in full.items():
        if k in VALUE_PARAMS:
            full[k] = param_as_dtype(v, dtype)
    full.update(params)
    out = np.asarray(oracle(op, ins, full), dtype=np.float64)

    # Independent cross-checks.
    tt = torch_check(op, ins, full)
    if tt is not None:
        # PyTorch's float64 gelu/silu/sigmoid formulas lose up to ~1e-15
        # absolute in the tails (1 + erf cancels); the rest agree to ulps.
        assert agree(tt.numpy(), out, 1e-12, 1e-15), (op, dtype, note)
    mc = mp_check(op, ins[0])
    if mc is not None:
        assert agree(out, mc, 4e-16, 0), ("mpmath", op, dtype, note)

    shapes = "_".join("x".join(str(d) for d in x.shape) for x in ins)
    ptxt = "".join("_%s%g" % (k, v) for k, v in params.items())
    name = "%s_%s_%s%s%s" % (op, dtype, shapes, ptxt, note)
    cases.append(dict(name=name, op=op, dtype=dtype, ins=ins,
                      params=params, out=out))


BOTH = ("f32", "f64")

_pool = {}


def X(dt, shape, lo=-1.0, hi=1.0, tag=""):
    """Shared random inputs: one array per (dtype, shape, range, tag)."""
    key = (dt, tuple(shape), lo, hi, tag)
    if key not in _pool:
        _pool[key] = as_dtype(uniform(shape, lo, hi), dt)
    return _pool[key]


def logspace(lo, hi, n):
    return np.exp(np.linspace(math.log(lo), math.log(hi), n))


# -- unary math and activations: random values in the op's run domain on
# odd sizes, then a wide sweep through each function's interesting range
# (overflow and underflow for exp, tails for sigmoid/gelu/softplus...).
RUN_DOMAIN = {"log": (0.01, 10.0), "sqrt": (0.0, 10.0),
              "rsqrt": (0.01, 10.0)}
WIDE = {
    "neg": np.array([-3.5, -0.0, 0.0, 1e-30, 2.5e30, -7.0, 1.0]),
    "abs": np.array([-3.5, -0.0, 0.0, -1e-30, 2.5e30, -7.0, 1.0]),
    "exp": np.concatenate([np.linspace(-110, 95, 83),
                           [-1e-8, 1e-8, 0.5, -0.5, 88.5, 88.8, -87.0]]),
    "log": np.concatenate([logspace(1e-30, 1e30, 61),
                           [1 - 1e-6, 1 + 1e-6, 1.0, 2.0, 0.5]]),
    "sqrt": np.concatenate([logspace(1e-30, 1e30, 41), [0.0, 1.0, 2.0]]),
    "rsqrt": np.concatenate([logspace(1e-30, 1e30, 41), [1.0, 4.0]]),
    "leaky_relu": np.linspace(-10, 10, 41),
    "sigmoid": np.concatenate([np.linspace(-100, 100, 101),
                               [-1e-8, 1e-8, -87.5, -88.9, -103.0]]),
    "tanh": np.concatenate([np.linspace(-20, 20, 81),
                            [-1e-8, 1e-8, 1e-20, 0.003, -0.004]]),
    "gelu": np.linspace(-12, 12, 97),
    "gelu_tanh": np.linspace(-12, 12, 97),
    "silu": np.concatenate([np.linspace(-100, 100, 101), [-1e-8, 1e-8]]),
    "softplus": np.concatenate([np.linspace(-100, 30, 131),
                                [-1e-8, 1e-8, 19.9, 20.1]]),
    "add_scalar": np.linspace(-3, 3, 13),
    "sub_scalar": np.linspace(-3, 3, 13),
    "mul_scalar": np.linspace(-3, 3, 13),
    "div_scalar": np.linspace(-3, 3, 13),
}
UNARY = list(WIDE)

for op in UNARY:
    lo, hi = RUN_DOMAIN.get(op, (-1.0, 1.0))
    for dt in BOTH:
        case(op, dt, [X(dt, [7], lo, hi)])
        case(op, dt, [X(dt, [3, 5], lo, hi)])
        case(op, dt, [WIDE[op]], note="_wide")
    case(op, "f32", [X("f32", [513], lo, hi)])
    case(op, "f64", [X("f64", [1], lo, hi)])

# f64-only reaches: exp down to the subnormals and up to overflow, log
# and sqrt of subnormals and of the largest doubles.
case("exp", "f64", [np.array([-745.0, -740.0, -708.5, 700.0, 709.7, 710.0])],
     note="_edge")
case("log", "f64", [np.array([5e-324, 1e-310, 1e-300, 1.7e308])],
     note="_edge")
case("sqrt", "f64", [np.array([5e-324, 1e-310, 1.7e308])], note="_edge")

# parameters
for dt in BOTH:
    case("leaky_relu", dt, [WIDE["leaky_relu"]], {"alpha": 0.2},
         note="_wide")
    case("leaky_relu", dt, [X(dt, [7])], {"alpha": -1.5})
    case("softplus", dt, [np.linspace(-50, 20, 71)],
         {"beta": 2.0, "threshold": 20.0}, note="_wide")
    case("softplus", dt, [X(dt, [3, 5], -3, 3)],
         {"beta": 0.5, "threshold": 1.0})
    for op in ("add_scalar", "sub_scalar", "mul_scalar", "div_scalar"):
        for s in (0.1, -3.5, 1e-3):
            case(op, dt, [X(dt, [7])], {"scalar": s})
    # x - 0.1 next to 0.1: the rounded scalar cancels exactly in f32 too
    case("sub_scalar", dt, [np.array([0.1, 0.1000001, -0.1, 0.25])],
         {"scalar": 0.1}, note="_cancel")

# -- binary with broadcasting
POW_A = (0.1, 2.0)
POW_B = (-2.0, 2.0)
for op in ("pow", "maximum", "minimum", "add_relu"):
    la, ha = POW_A if op == "pow" else (-1.0, 1.0)
    lb, hb = POW_B if op == "pow" else (-1.0, 1.0)

    def A(dt, s):
        return X(dt, s, la, ha, "a")

    def B(dt, s):
        return X(dt, s, lb, hb, "b")
    for dt in BOTH:
        case(op, dt, [A(dt, [7]), B(dt, [7])])
        case(op, dt, [A(dt, [3, 1, 5]), B(dt, [1, 4, 5])])
        case(op, dt, [A(dt, [5, 1]), B(dt, [1, 6])])
        case(op, dt, [A(dt, [13, 17]), B(dt, [17])])
        case(op, dt, [A(dt, [1]), B(dt, [4, 5])])
    case(op, "f32", [A("f32", [513]), B("f32", [513])])
    case(op, "f64", [A("f64", [2, 3, 1, 4]), B("f64", [3, 5, 1])])
for dt in BOTH:
    # negative bases with integral exponents, zero to a negative power
    case("pow", dt, [np.array([-2.0, -1.5, 0.0, 0.0, 4.0, -0.5, 2.0]),
                     np.array([3.0, 2.0, 0.0, -1.0, 0.5, -3.0, 10.0])],
         note="_fixed")
    # ties and signed zeros
    for op in ("maximum", "minimum"):
        case(op, dt, [np.array([1.0, -2.0, 0.5, 3.0, -0.0]),
                      np.array([1.0, 2.0, -0.5, 3.0, 0.0])], note="_ties")
    case("add_relu", dt, [np.array([1.0, -2.0, 0.5, -0.25]),
                          np.array([-1.0, 1.0, -0.75, 0.25])],
         note="_zero")

# -- reductions: all elements, each axis, negative axes, keepdim
for op in ("max", "min", "argmax", "var"):
    for dt in BOTH:
        case(op, dt, [X(dt, [7])])
        case(op, dt, [X(dt, [13, 17])], {"axis": 0})
        case(op, dt, [X(dt, [13, 17])], {"axis": -1})
        case(op, dt, [X(dt, [3, 4, 5])], {"axis": 1, "keepdim": 1})
        case(op, dt, [X(dt, [3, 4, 5])], {"axis": -3})
        case(op, dt, [X(dt, [13, 17])], {"keepdim": 1})
    case(op, "f32", [X("f32", [513])])
    case(op, "f64", [X("f64", [2, 3, 4, 5])], {"axis": 2})
    if op != "var":
        case(op, "f64", [X("f64", [1])])
        case(op, "f32", [X("f32", [4, 1])], {"axis": 1})
# lanes of a non-last axis wider than the cpu kernels' column tile (256)
for op in ("max", "min", "argmax", "var", "softmax"):
    case(op, "f32", [X("f32", [3, 300])], {"axis": 0})
    case(op, "f64", [X("f64", [2, 3, 260])], {"axis": 1})
nanm = np.array([[1.0, math.nan, 2.0, -1.0], [math.nan, 5.0, 3.0, -2.0],
                 [4.0, math.nan, math.nan, -3.0], [0.0, 9.0, 1.0, -4.0]])
for dt in BOTH:
    # NaN: max/min propagate it, argmax points at the first NaN
    for op in ("max", "min", "argmax"):
        case(op, dt, [nanm], {"axis": 0}, note="_nan")
        case(op, dt, [nanm], {"axis": 1}, note="_nan")
    case("argmax", dt, [nanm], note="_nan")
    # ties: the first maximum wins
    case("argmax", dt, [np.array([1.0, 3.0, 3.0, 2.0, 3.0])], note="_ties")
    case("argmax", dt, [np.array([[1.0, 5.0, 5.0], [4.0, 4.0, -1.0],
                                  [2.0, 2.0, 2.0]])], {"axis": 1},
         note="_ties")
    for corr in (0, 1):
        case("var", dt, [X(dt, [13, 17])], {"axis": 0, "correction": corr})
        case("var", dt, [X(dt, [7])], {"correction": corr})
    case("var", dt, [X(dt, [1])], {"correction": 0})
    case("var", dt, [X(dt, [4, 1])], {"axis": 1, "correction": 0})
    case("var", dt, [X(dt, [5, 2])], {"axis": 1, "correction": 1})
    # a large mean against a small spread: one-pass formulas fail here
    case("var", dt, [1000.0 + X(dt, [64], tag="big")], note="_bigmean")
    case("var", dt, [1000.0 + X(dt, [8, 16], tag="big")], {"axis": 0},
         note="_bigmean")

# -- softmax
big = np.concatenate([1000.0 + uniform([3, 5], -5.0, 5.0),
                      np.array([[1000.0, -1000.0, 999.5, 0.0, 1000.0]])])
for dt in BOTH:
    case("softmax", dt, [X(dt, [7])])
    case("softmax", dt, [X(dt, [13, 17])], {"axis": 0})
    case("softmax", dt, [X(dt, [13, 17])], {"axis": -1})
    case("softmax", dt, [X(dt, [3, 4, 5])], {"axis": 1})
    case("softmax", dt, [big], {"axis": -1}, note="_big")
    case("softmax", dt, [big], {"axis": 0}, note="_big")
    case("softmax", dt, [X(dt, [4, 1])], {"axis": -1})
case("softmax", "f32", [X("f32", [513])])
case("softmax", "f64", [X("f64", [1])])

# -- permute: default (reverse), every 3-D order, negative dims, 4-D/5-D
for dt in BOTH:
    case("permute", dt, [X(dt, [3, 4, 5])])
    for p in ((1, 2, 0), (0, 2, 1), (2, 0, 1), (-1, 0, 1)):
        case("permute", dt, [X(dt, [3, 4, 5])],
             {"p0": p[0], "p1": p[1], "p2": p[2]})
    case("permute", dt, [X(dt, [2, 3, 4, 5])],
         {"p0": 0, "p1": 2, "p2": 1, "p3": 3})
    case("permute", dt, [X(dt, [7])])
    case("permute", dt, [X(dt, [1, 7])], {"p0": 1, "p1": 0})
case("permute", "f64", [X("f64", [2, 3, 1, 2, 3])],
     {"p0": 4, "p1": 0, "p2": 3, "p3": 2, "p4": 1})
case("permute", "f32", [X("f32", [13, 17])])

# -- linear: relu(x @ W + b)
for dt in BOTH:
    case("linear", dt, [X(dt, [1, 1]), X(dt, [1, 1], tag="w"),
                        X(dt, [1], tag="b")])
    case("linear", dt, [X(dt, [7, 13]), X(dt, [13, 5], tag="w"),
                        X(dt, [5], tag="b")])
    case("linear", dt, [X(dt, [5, 1]), X(dt, [1, 6], tag="w"),
                        X(dt, [6], tag="b")])
case("linear", "f32", [X("f32", [4, 33]), X("f32", [33, 9], tag="w"),
                       X("f32", [9], tag="b")])

# -- conv2d: stride, padding, dilation, 1x1 kernels, non-square
CONV = [
    ([1, 1, 5, 5], [1, 1, 3, 3], {}),
    ([2, 3, 7, 6], [4, 3, 3, 2], {"stride": 2, "padding": 1}),
    ([1, 2, 7, 7], [3, 2, 3, 3], {"dilation": 2}),
    ([1, 2, 5, 5], [3, 2, 1, 1], {}),
    ([2, 1, 9, 9], [4, 1, 3, 3], {"padding": 1}),
    ([1, 2, 6, 5], [2, 2, 2, 3], {"stride": 3, "padding": 2,
                                   "dilation": 2}),
]
for dt in BOTH:
    for xs, ws, p in CONV:
        case("conv2d", dt, [X(dt, xs), X(dt, ws, tag="w"),
                            X(dt, [ws[0]], tag="b")], p)
        case("conv2d_nobias", dt, [X(dt, xs), X(dt, ws, tag="w")], p)

# -- pooling: kernel, stride (default = kernel), padding <= kernel/2
POOL = [
    ([1, 1, 4, 4], {}),
    ([2, 3, 7, 6], {"kernel": 3, "stride": 2, "padding": 1}),
    ([1, 2, 5, 5], {"kernel": 2, "stride": 1}),
    ([1, 2, 5, 5], {"kernel": 1}),
    ([2, 2, 6, 6], {"kernel": 3, "stride": 3, "padding": 1}),
    ([1, 1, 7, 5], {"kernel": 4, "padding": 2}),
]
for dt in BOTH:
    for xs, p in POOL:
        case("max_pool2d", dt, [X(dt, xs)], p)
        case("avg_pool2d", dt, [X(dt, xs)], p)

# -- hardswish (after every other case, so that theirs keep their random
# inputs): odd sizes in [-6, 6] (both corners of relu6 inside), and a
# sweep through the corners, signed zeros and large values
HARDSWISH_WIDE = np.concatenate([np.linspace(-8, 8, 65),
                                 [-3.0, 3.0, -0.0, 0.0, 1e-30, -1e30,
                                  1e30, -2.9999999, 2.9999999]])
for dt in BOTH:
    case("hardswish", dt, [X(dt, [7], -6.0, 6.0)])
    case("hardswish", dt, [X(dt, [3, 5], -6.0, 6.0)])
    case("hardswish", dt, [HARDSWISH_WIDE], note="_wide")
case("hardswish", "f32", [X("f32", [513], -6.0, 6.0)])
case("hardswish", "f64", [X("f64", [1], -6.0, 6.0)])

# -- layer_norm and rms_norm (issue 30; after the rest, so that their
# cases keep their inputs): one element per row, odd widths, 3-D, a wide
# row, a non-default eps, rows far from zero mean
NORM = [([1, 1], {}), ([7, 13], {}), ([3, 4, 33], {}), ([2, 513], {}),
        ([5, 8], {"eps": 0.25})]
for dt in BOTH:
    for xs, p in NORM:
        d = xs[-1]
        case("layer_norm", dt, [X(dt, xs, tag="n"), X(dt, [d], tag="nw"),
                                X(dt, [d], tag="nb")], p)
        case("rms_norm", dt, [X(dt, xs, tag="n"), X(dt, [d], tag="nw")], p)
    case("layer_norm", dt, [X(dt, [4, 16], 3.0, 5.0, tag="n"),
                            X(dt, [16], tag="nw"), X(dt, [16], tag="nb")],
         note="_offset")


# ---- emit -------------------------------------------------------------------

def c_double(v):
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    if v == 0 and math.copysign(1.0, v) < 0:
        return "-0.0"
    return repr(v)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        root, "tests", "data", "oracle_vectors.h")

    arrays = {}   # values tuple -> C name (identical arrays stored once)
    body = []

    def array(x):
        vals = tuple(c_double(v) for v in np.asarray(x).ravel())
        if vals not in arrays:
            name = "ov_data%d" % len(arrays)
            arrays[vals] = name
            lines = []
            for i in range(0, len(vals), 4):
                lines.append("    " + ", ".join(vals[i:i + 4]) + ",")
            body.append("static const double %s[%d] = {\n%s\n};\n"
                        % (name, len(vals), "\n".join(lines)))
        return arrays[vals]

    def shape(s):
        return "{" + ", ".join(str(d) for d in s) + "}" if len(s) else "{0}"

    rows = []
    for c in cases:
        ins = c["ins"]
        names = [array(x) for x in ins]
        out = array(c["out"])
        params = ", ".join('{"%s", %s}' % (k, repr(float(v)))
                           for k, v in c["params"].items())
        rows.append(
            "    {\n"
            '        .name = "%s",\n'
            '        .op = "%s",\n'
            '        .dtype = "%s",\n'
            "        .n_in = %d,\n"
            "        .in_ndim = {%s},\n"
            "        .in_shape = {%s},\n"
            "        .in_data = {%s},\n"
            "        .n_params = %d,\n"
            "%s"
            "        .out_ndim = %d,\n"
            "        .out_shape = %s,\n"
            "        .out_data = %s,\n"
            "    },\n"
            % (c["name"], c["op"], c["dtype"], len(ins),
               ", ".join(str(x.ndim) for x in ins),
               ", ".join(shape(x.shape) for x in ins),
               ", ".join(names), len(c["params"]),
               "        .params = {%s},\n" % params if params else "",
               c["out"].ndim, shape(c["out"].shape), out))

    text = (
        "/* Oracle vectors for the ops of issue 3.\n"
        " *\n"
        " * GENERATED by scripts/gen_oracle.py (NumPy %s, PyTorch %s,\n"
        " * mpmath %s, seed %d); do not edit, re-run the script.  Inputs of\n"
        " * f32 cases (and their value parameters) are exactly representable\n"
        " * in float; expected outputs are float64 computed from them.\n"
        " * Included by tests/test_oracle.c only. */\n"
        "#ifndef TB_TESTS_DATA_ORACLE_VECTORS_H\n"
        "#define TB_TESTS_DATA_ORACLE_VECTORS_H\n\n"
        "#include <math.h>\n"
        "#include <stdint.h>\n\n"
        "#define OV_MAX_IN %d\n"
        "#define OV_MAX_DIMS %d\n"
        "#define OV_MAX_PARAMS %d\n\n"
        "typedef struct ov_param {\n"
        "    const char *name;\n"
        "    double value;\n"
        "} ov_param;\n\n"
        "typedef struct ov_case {\n"
        "    const char *name;\n"
        "    const char *op;\n"
        "    const char *dtype; /* \"f32\" or \"f64\" */\n"
        "    int n_in;\n"
        "    int in_ndim[OV_MAX_IN];\n"
        "    int64_t in_shape[OV_MAX_IN][OV_MAX_DIMS];\n"
        "    const double *in_data[OV_MAX_IN]; /* row-major */\n"
        "    int n_params; /* absent parameters take their default */\n"
        "    ov_param params[OV_MAX_PARAMS];\n"
        "    int out_ndim; /* 0: a 0-dim (scalar) output of 1 element */\n"
        "    int64_t out_shape[OV_MAX_DIMS];\n"
        "    const double *out_data; /* row-major */\n"
        "} ov_case;\n\n"
        "%s\n"
        "static const ov_case ov_cases[] = {\n"
        "%s"
        "};\n\n"
        "#define OV_N_CASES ((int)(sizeof ov_cases / sizeof ov_cases[0]))\n\n"
        "#endif\n" % (np.__version__, torch.__version__, mpmath.__version__,
                      SEED, MAX_IN, MAX_DIMS, MAX_PARAMS, "\n".join(body),
                      "".join(rows)))

    assert max(x.ndim for c in cases for x in c["ins"]) <= MAX_DIMS
    assert max(len(c["ins"]) for c in cases) <= MAX_IN
    assert max(len(c["params"]) for c in cases) <= MAX_PARAMS
    assert len(text) < MAX_BYTES, "vectors too large: %d bytes" % len(text)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    print("%s: %d cases, %d arrays, %d bytes"
          % (path, len(cases), len(arrays), len(text)))


if __name__ == "__main__":
    main()
