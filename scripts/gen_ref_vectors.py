#!/usr/bin/python3
"""Generate the oracle vectors for tests/test_ops.c: tests/data/ref_vectors.h.

Run with Debian's /usr/bin/python3 (hence the shebang): it has NumPy
(python3-numpy), while the `python3` found first on PATH in some setups
(pyenv) does not.  Usage, from anywhere:

    /usr/bin/python3 scripts/gen_ref_vectors.py [OUTPUT]

OUTPUT defaults to tests/data/ref_vectors.h next to this script's repo.
The output is deterministic (fixed seed, PCG64) and is committed, so the C
tests never need Python.

The expected values are computed by NumPy in float64, independently of
tbench's reference kernels (src/ops/ref.c): broadcasting by NumPy's own
rules, sums by NumPy's pairwise summation, matmul by NumPy/BLAS,
transpose by np.swapaxes, log_softmax by the max-shifted formula and
cross-checked against np.logaddexp.reduce.  For f32 cases the inputs are
rounded to float32 first, so the C test can store them in a float tensor
exactly, and the expected value is still computed in float64 from the
rounded inputs (the reference kernels accumulate in double too).

Values are written with repr(), which round-trips float64 exactly through
a C compiler's correctly rounded strtod.
"""

import math
import os
import sys

import numpy as np

SEED = 20240601
MAX_BYTES = 200 * 1024

rng = np.random.default_rng(SEED)


def uniform(shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape)


def uniform2(shape):
    """A second operand: same distribution, drawn separately."""
    return uniform(shape)


def away_from_zero(shape):
    """Divisors: |b| in [0.5, 2] with a random sign."""
    mag = rng.uniform(0.5, 2.0, size=shape)
    sign = np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0)
    return mag * sign


def as_dtype(x, dtype):
    x = np.asarray(x, dtype=np.float64)
    if dtype == "f32":
        x = x.astype(np.float32).astype(np.float64)
    return x


# ---- oracles (float64 NumPy) -------------------------------------------

BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
}


def log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    y = x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    # A second, differently computed oracle must agree.
    y2 = x - np.logaddexp.reduce(x, axis=axis, keepdims=True)
    assert np.allclose(y, y2, rtol=1e-13, atol=1e-12), "log_softmax oracles"
    return y


def oracle(op, ins, params):
    if op in BINARY:
        return BINARY[op](ins[0], ins[1])
    x = ins[0]
    if op == "relu":
        return np.where(x > 0, x, 0.0)
    if op in ("sum", "mean"):
        axis = params.get("axis")
        keep = bool(params.get("keepdim", 0))
        f = np.sum if op == "sum" else np.mean
        y = f(x, axis=axis, keepdims=keep)
        # Cross-check against an exactly rounded sum where it is cheap.
        if axis is None and op == "sum":
            assert abs(float(y) - math.fsum(x.ravel())) <= 1e-14 * max(
                1.0, abs(float(y))), "sum oracles"
        return np.asarray(y)
    if op == "matmul":
        return np.matmul(ins[0], ins[1])
    if op == "transpose":
        return np.ascontiguousarray(
            np.swapaxes(x, params.get("dim0", -2), params.get("dim1", -1)))
    if op == "log_softmax":
        return log_softmax(x, params.get("axis", -1))
    raise ValueError(op)


# ---- the cases ------------------------------------------------------------

cases = []


def case(op, dtype, ins, params=None, note=""):
    params = dict(params or {})
    ins = [as_dtype(x, dtype) for x in ins]
    out = np.asarray(oracle(op, ins, params), dtype=np.float64)
    shapes = "_".join("x".join(str(d) for d in x.shape) for x in ins)
    ptxt = "".join("_%s%d" % (k, v) for k, v in params.items())
    name = "%s_%s_%s%s%s" % (op, dtype, shapes, ptxt, note)
    cases.append(dict(name=name, op=op, dtype=dtype, ins=ins,
                      params=params, out=out))


BOTH = ("f32", "f64")

# Inputs come from a pool, one array per (dtype, shape, kind), so cases on
# the same shape share their input arrays in the header (outputs differ).
# f64 inputs keep all 53 bits, so a kernel that narrowed an f64 input to
# float on the way would fail.
_pool = {}


def X(dt, shape, kind=uniform):
    key = (dt, tuple(shape), kind.__name__)
    if key not in _pool:
        _pool[key] = as_dtype(kind(shape), dt)
    return _pool[key]


def B(dt, shape):
    return X(dt, shape, away_from_zero)


# Element-wise binary ops: odd sizes, a scalar-like [1], and broadcasting
# (3x1x5 with 1x4x5, 5x1 with 1x6, rank-extending 13x17 with 17, [1]
# against 4x5).
for op in BINARY:
    second = B if op == "div" else (lambda dt, s: X(dt, s, uniform2))
    for dt in BOTH:
        case(op, dt, [X(dt, [1]), second(dt, [1])])
        case(op, dt, [X(dt, [7]), second(dt, [7])])
        case(op, dt, [X(dt, [3, 1, 5]), second(dt, [1, 4, 5])])
        case(op, dt, [X(dt, [5, 1]), second(dt, [1, 6])])
    case(op, "f64", [X("f64", [1]), second("f64", [4, 5])])
case("add", "f64", [X("f64", [13, 17]), X("f64", [13, 17], uniform2)])
case("add", "f32", [X("f32", [13, 17]), X("f32", [17], uniform2)])
case("div", "f32", [X("f32", [4, 5]), B("f32", [5])])

# relu: random values plus exact zeros and tiny negatives.
fixed = np.array([-2.0, -0.5, 0.0, 0.25, 1.0, -1e-30, 3.0])
for dt in BOTH:
    case("relu", dt, [fixed], note="_fixed")
    case("relu", dt, [X(dt, [1])])
    case("relu", dt, [X(dt, [3, 4, 5])])
case("relu", "f32", [X("f32", [13, 17])])

# sum / mean: all elements, each axis, negative axes, keepdim.
for op in ("sum", "mean"):
    for dt in BOTH:
        case(op, dt, [X(dt, [7])])
        case(op, dt, [X(dt, [1])])
        case(op, dt, [X(dt, [13, 17])], {"axis": 0})
        case(op, dt, [X(dt, [13, 17])], {"axis": -1})
        case(op, dt, [X(dt, [3, 4, 5])], {"axis": 1, "keepdim": 1})
        case(op, dt, [X(dt, [3, 4, 5])], {"axis": -3})
    case(op, "f64", [X("f64", [13, 17])])
    case(op, "f32", [X("f32", [13, 17])], {"axis": -2, "keepdim": 1})
    case(op, "f64", [X("f64", [1])], {"axis": 0, "keepdim": 1})
    case(op, "f64", [X("f64", [3, 4, 5])], {"keepdim": 1})

# matmul: 1x1, odd 2-D, vector-shaped operands, batched.
for dt in BOTH:
    case("matmul", dt, [X(dt, [1, 1]), X(dt, [1, 1], uniform2)])
    case("matmul", dt, [X(dt, [7, 13]), X(dt, [13, 17])])
    case("matmul", dt, [X(dt, [2, 3, 4]), X(dt, [2, 4, 5])])
case("matmul", "f64", [X("f64", [1, 7]), X("f64", [7, 1])])
case("matmul", "f32", [X("f32", [5, 1]), X("f32", [1, 6], uniform2)])
case("matmul", "f64", [X("f64", [2, 1, 3, 4]), X("f64", [2, 1, 4, 2])])

# transpose: defaults (the last two dims), explicit and negative dims.
for dt in BOTH:
    case("transpose", dt, [X(dt, [13, 17])])
    case("transpose", dt, [X(dt, [3, 4, 5])], {"dim0": 0, "dim1": 2})
case("transpose", "f64", [X("f64", [3, 4, 5])])
case("transpose", "f32", [X("f32", [3, 4, 5])], {"dim0": -1, "dim1": 0})
case("transpose", "f64", [X("f64", [3, 4, 5])], {"dim0": 1, "dim1": -3})
case("transpose", "f32", [X("f32", [1, 7])])

# log_softmax: along axis 0 and -1, a 1-element lane, and large values
# (around 1000, mixed with -1000) where the unshifted formula overflows.
big = np.concatenate([1000.0 + uniform([3, 5], -5.0, 5.0),
                      np.array([[1000.0, -1000.0, 999.5, 0.0, 1000.0]])])
for dt in BOTH:
    case("log_softmax", dt, [X(dt, [7])])
    case("log_softmax", dt, [X(dt, [13, 17])], {"axis": 0})
    case("log_softmax", dt, [X(dt, [13, 17])], {"axis": -1})
    case("log_softmax", dt, [big], {"axis": -1}, note="_big")
    case("log_softmax", dt, [big], {"axis": 0}, note="_big")
case("log_softmax", "f64", [X("f64", [3, 4, 5])], {"axis": 1})
case("log_softmax", "f32", [X("f32", [1])])
case("log_softmax", "f64", [X("f64", [4, 1])], {"axis": -1})


# ---- emit ---------------------------------------------------------------

def c_double(v):
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        root, "tests", "data", "ref_vectors.h")

    arrays = {}   # values tuple -> C name (identical arrays stored once)
    body = []

    def array(x):
        vals = tuple(c_double(v) for v in np.asarray(x).ravel())
        if vals not in arrays:
            name = "rv_data%d" % len(arrays)
            arrays[vals] = name
            lines = []
            for i in range(0, len(vals), 4):
                lines.append("    " + ", ".join(vals[i:i + 4]) + ",")
            body.append("static const double %s[%d] = {\n%s\n};\n"
                        % (name, len(vals), "\n".join(lines)))
        return arrays[vals]

    rows = []
    for c in cases:
        ins = c["ins"]
        names = [array(x) for x in ins]
        out = array(c["out"])
        shape = lambda s: "{" + ", ".join(str(d) for d in s) + "}"
        params = ", ".join('{"%s", %d}' % (k, v)
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
               c["out"].ndim, shape(c["out"].shape) if c["out"].ndim
               else "{0}", out))

    text = (
        "/* Oracle vectors for the reference kernels.\n"
        " *\n"
        " * GENERATED by scripts/gen_ref_vectors.py (NumPy %s, seed %d);\n"
        " * do not edit, re-run the script.  Inputs of f32 cases are exactly\n"
        " * representable in float; expected outputs are float64 computed\n"
        " * from those inputs.  Included by tests/test_ops.c only. */\n"
        "#ifndef TB_TESTS_DATA_REF_VECTORS_H\n"
        "#define TB_TESTS_DATA_REF_VECTORS_H\n\n"
        "#include <math.h>\n"
        "#include <stdint.h>\n\n"
        "#define RV_MAX_IN 2\n"
        "#define RV_MAX_DIMS 4\n"
        "#define RV_MAX_PARAMS 2\n\n"
        "typedef struct rv_param {\n"
        "    const char *name;\n"
        "    double value;\n"
        "} rv_param;\n\n"
        "typedef struct rv_case {\n"
        "    const char *name;\n"
        "    const char *op;\n"
        "    const char *dtype; /* \"f32\" or \"f64\" */\n"
        "    int n_in;\n"
        "    int in_ndim[RV_MAX_IN];\n"
        "    int64_t in_shape[RV_MAX_IN][RV_MAX_DIMS];\n"
        "    const double *in_data[RV_MAX_IN]; /* row-major */\n"
        "    int n_params; /* absent parameters take their default */\n"
        "    rv_param params[RV_MAX_PARAMS];\n"
        "    int out_ndim; /* 0: a 0-dim (scalar) output of 1 element */\n"
        "    int64_t out_shape[RV_MAX_DIMS];\n"
        "    const double *out_data; /* row-major */\n"
        "} rv_case;\n\n"
        "%s\n"
        "static const rv_case rv_cases[] = {\n"
        "%s"
        "};\n\n"
        "#define RV_N_CASES ((int)(sizeof rv_cases / sizeof rv_cases[0]))\n\n"
        "#endif\n" % (np.__version__, SEED, "\n".join(body), "".join(rows)))

    assert max(x.ndim for c in cases for x in c["ins"]) <= 4
    assert max(len(c["params"]) for c in cases) <= 2
    assert len(text) < MAX_BYTES, "vectors too large: %d bytes" % len(text)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    print("%s: %d cases, %d arrays, %d bytes"
          % (path, len(cases), len(arrays), len(text)))


if __name__ == "__main__":
    main()
