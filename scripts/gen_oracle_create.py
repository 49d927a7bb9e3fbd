#!/usr/bin/python3
"""Generate the oracle vectors of the creation ops for tests/test_create.c:
tests/data/create_vectors.h.

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch), from
anywhere:

    /usr/bin/python3 scripts/gen_oracle_create.py [OUTPUT]

OUTPUT defaults to tests/data/create_vectors.h.  The output is
deterministic (fixed seed) and committed, so the C tests need neither
Python nor these packages.

Where the expected values come from (none from tbench's C code):

- zeros, ones, full, copy: NumPy (np.zeros, np.ones, np.full, np.copy) in
  the case dtype, written as float64 (so f32 cases hold the float32
  value: full rounds its value to the dtype).  PyTorch (torch.full etc.)
  must agree exactly before a case is written.
- arange: the op is out[i] = start + i*step computed in float64 and, for
  f32, rounded once to float32.  NumPy's np.arange(start, stop, step)
  fills with start + i*delta where delta = (start + step) - start, which
  differs from step by a rounding for most fractional steps, so the
  expected values are start + np.arange(n) * step (NumPy float64
  arithmetic, two IEEE roundings as the op's definition); np.arange and
  torch.arange cross-check them to 1e-12 relative.  The vectors hold the
  float64 value for both dtypes: the reference must return it exactly,
  an f32 kernel its float32 rounding.
- rand_uniform, rand_normal: an independent Python implementation of the
  stream documented in src/ops/rand.h (SplitMix64 on Python integers,
  uniforms and Box-Muller with NumPy float64/float32), at the first 17
  indices and at a few large ones, for several seeds and parameters.
  The statistical tests (KS, moments) are in test_create.c.

f32 values are exactly representable in float; every value is written with
repr(), which round-trips float64 through a correctly rounded strtod.
"""

import math
import os
import sys

import numpy as np
import torch

SEED = 20240611
M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix(z):
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def key_of(seed):
    return mix(seed + GAMMA)


def bits(key, i):
    return mix(key + (i + 1) * GAMMA)


def u53(key, i):
    return float(bits(key, i) >> 11) * 2.0 ** -53


def u24(key, i):
    return float(bits(key, i) >> 40) * 2.0 ** -24


def f32(v):
    return float(np.float32(v))


def uniform_value(key, i, low, high, dt):
    if dt == "f64":
        return float(np.float64(low) + (np.float64(high) - np.float64(low))
                     * np.float64(u53(key, i)))
    lo, hi = np.float64(f32(low)), np.float64(f32(high))
    return f32(lo + (hi - lo) * np.float64(u24(key, i)))


def normal_value(key, i, mean, std, dt):
    j = i // 2
    u = u24 if dt == "f32" else u53
    u1, u2 = u(key, 2 * j), u(key, 2 * j + 1)
    r = math.sqrt(-2.0 * math.log(1.0 - u1))
    a = 6.283185307179586 * u2
    z = r * (math.cos(a) if i % 2 == 0 else math.sin(a))
    if dt == "f64":
        return mean + std * z
    return f32(f32(mean) + f32(std) * z)


class Writer:
    def __init__(self):
        self.arrays = []
        self.cases = []

    def array(self, vals):
        name = "cv_data%d" % len(self.arrays)
        self.arrays.append((name, [float(v) for v in vals]))
        return name


def np_dtype(dt):
    return np.float32 if dt == "f32" else np.float64


def th_dtype(dt):
    return torch.float32 if dt == "f32" else torch.float64


def fill_cases(w, rng):
    shapes = [(1,), (7,), (513,), (3, 5), (2, 3, 4), (4, 1, 33)]
    for dt in ("f32", "f64"):
        nd, td = np_dtype(dt), th_dtype(dt)
        for s in shapes:
            for op, val in (("zeros", None), ("ones", None), ("full", 0.1),
                            ("full", -3.25), ("full", 1e30),
                            ("full", -2.0 / 3.0)):
                if op == "zeros":
                    y, t = np.zeros(s, nd), torch.zeros(s, dtype=td)
                elif op == "ones":
                    y, t = np.ones(s, nd), torch.ones(s, dtype=td)
                else:
                    y, t = np.full(s, val, nd), torch.full(s, val, dtype=td)
                assert np.array_equal(y, t.numpy()), (op, dt, s)
                if op == "full" and len(s) > 1 and val != 0.1:
                    continue  # the odd values once per 1-D shape suffice
                params = [("value", val)] if op == "full" else []
                w.cases.append((op, dt, s, params, None,
                                w.array(y.astype(np.float64).ravel())))
            x = rng.uniform(-1, 1, size=s).astype(nd)
            y, t = np.copy(x), torch.from_numpy(x).clone()
            assert np.array_equal(y, t.numpy())
            xin = w.array(x.astype(np.float64).ravel())
            w.cases.append(("copy", dt, s, [], xin,
                            w.array(y.astype(np.float64).ravel())))


def arange_cases(w):
    for dt in ("f32", "f64"):
        for n in (1, 7, 513):
            for start, step in ((0.0, 1.0), (2.5, -0.75), (-3.0, 0.1),
                                (1000.0, -1.0 / 3.0), (0.1, 0.7)):
                y = np.float64(start) + np.arange(n, dtype=np.float64) * step
                # np.arange and torch.arange as cross-checks (their fill
                # rounds differently, see the module doc)
                a = np.arange(start, start + (n - 0.5) * step, step,
                              dtype=np.float64)
                t = torch.arange(n, dtype=torch.float64) * step + start
                assert len(a) == n, (start, step, n)
                assert np.allclose(a, y, rtol=1e-12, atol=1e-12)
                assert np.allclose(t.numpy(), y, rtol=1e-12, atol=1e-12)
                w.cases.append(("arange", dt, (n,),
                                [("start", start), ("step", step)], None,
                                w.array(y)))


RAND_IDX = list(range(17)) + [1000, 65537, 300001]


def rand_cases(w):
    """(op, dtype, n, params, indices array, values array)."""
    out = []
    for dt in ("f32", "f64"):
        for seed, a, b in ((0, 0.0, 1.0), (42, -2.5, 7.0),
                           (9007199254740992, 0.3, 0.30001),
                           (123456789, -1e3, 1e3)):
            k = key_of(seed)
            vals = [uniform_value(k, i, a, b, dt) for i in RAND_IDX]
            out.append(("rand_uniform", dt, RAND_IDX[-1] + 1,
                        [("low", a), ("high", b), ("seed", seed)], vals))
        for seed, m, s in ((0, 0.0, 1.0), (7, 3.0, 0.5),
                           (9007199254740992, -1.0, 2.0)):
            k = key_of(seed)
            vals = [normal_value(k, i, m, s, dt) for i in RAND_IDX]
            out.append(("rand_normal", dt, RAND_IDX[-1] + 1,
                        [("mean", m), ("std", s), ("seed", seed)], vals))
    return out


def fmt_vals(vals):
    lines = []
    for i in range(0, len(vals), 4):
        lines.append("    " + ", ".join(repr(v) if math.isfinite(v) else
                                        ("INFINITY" if v > 0 else
                                         "-INFINITY")
                                        for v in vals[i:i + 4]) + ",")
    return "\n".join(lines)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "tests", "data", "create_vectors.h")
    rng = np.random.default_rng(SEED)
    w = Writer()
    fill_cases(w, rng)
    arange_cases(w)
    rand = rand_cases(w)
    ridx = w.array(RAND_IDX)

    o = []
    o.append("/* Oracle vectors of the creation ops.\n"
             " *\n"
             " * GENERATED by scripts/gen_oracle_create.py (NumPy %s, "
             "PyTorch %s,\n"
             " * seed %d); do not edit, re-run the script.  Values are "
             "float64; f32\n"
             " * cases hold float32 values, except arange, whose vectors "
             "hold the\n"
             " * float64 start + i*step that f32 rounds once.  Included by "
             "tests/test_create.c\n"
             " * only. */" % (np.__version__, torch.__version__, SEED))
    o.append("#ifndef TB_TESTS_DATA_CREATE_VECTORS_H")
    o.append("#define TB_TESTS_DATA_CREATE_VECTORS_H\n")
    o.append("#include <math.h>")
    o.append("#include <stdint.h>\n")
    o.append("typedef struct cv_param {\n    const char *name;\n"
             "    double value;\n} cv_param;\n")
    o.append("typedef struct cv_case {\n"
             "    const char *op;\n"
             "    const char *dtype; /* \"f32\" or \"f64\" */\n"
             "    int ndim;\n"
             "    int64_t shape[4]; /* the output's (and copy's input) */\n"
             "    int n_params;\n"
             "    cv_param params[3];\n"
             "    const double *in; /* copy's input, else NULL */\n"
             "    const double *out; /* row-major */\n"
             "} cv_case;\n")
    o.append("/* Random streams: out[cv_rand_idx[k]] == values[k] for a "
             "tensor of n\n * elements. */")
    o.append("typedef struct cv_rand {\n"
             "    const char *op;\n"
             "    const char *dtype;\n"
             "    int64_t n;\n"
             "    cv_param params[3];\n"
             "    double values[%d];\n"
             "} cv_rand;\n" % len(RAND_IDX))
    for name, vals in w.arrays:
        o.append("static const double %s[%d] = {\n%s\n};\n"
                 % (name, len(vals), fmt_vals(vals)))
    o.append("#define CV_RAND_NIDX %d" % len(RAND_IDX))
    o.append("static const double *const cv_rand_idx = %s;\n" % ridx)
    o.append("static const cv_case cv_cases[] = {")
    for op, dt, s, params, xin, yout in w.cases:
        ps = ", ".join("{\"%s\", %r}" % (n, float(v)) for n, v in params)
        o.append("    {\"%s\", \"%s\", %d, {%s}, %d, {%s}, %s, %s},"
                 % (op, dt, len(s), ", ".join(str(d) for d in s),
                    len(params), ps, xin or "NULL", yout))
    o.append("};\n")
    o.append("static const cv_rand cv_rands[] = {")
    for op, dt, n, params, vals in rand:
        ps = ", ".join("{\"%s\", %r}" % (nm, float(v)) for nm, v in params)
        o.append("    {\"%s\", \"%s\", %d, {%s},\n     {\n%s\n     }},"
                 % (op, dt, n, ps, fmt_vals(vals)))
    o.append("};\n")
    o.append("#endif")
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(o) + "\n")
    os.replace(path + ".tmp", path)
    print("%s: %d cases, %d random streams" % (path, len(w.cases),
                                                len(rand)))


if __name__ == "__main__":
    main()
