#!/usr/bin/python3
"""tbench exec checked by NumPy, printed as TAP.

Usage: test_cli_exec.py PATH/TO/tbench   (Debian's /usr/bin/python3: numpy)

For every op, exec writes inputs, outputs and the f64 reference as .npy;
NumPy recomputes the op from the inputs on its own (float64) and the
backend's output must match within the op's tolerance from
`tbench list --json` (|got - ref| <= atol*sqrt(K) + rtol*|ref|, K the
number of terms summed per output).  Bad input must exit 2 with one line.
"""
import json
import os
import subprocess
import sys
import tempfile

from tap import case, expect, run as run_cases

import numpy as np

TBENCH = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="tbench-exec-")
LIST = json.loads(subprocess.run([TBENCH, "list", "--json"], check=True,
                                 capture_output=True, text=True).stdout)
TOL = {o["name"]: o["tolerance"] for o in LIST["ops"]}


def log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def swap(x, d0, d1):
    return np.ascontiguousarray(np.swapaxes(x, d0, d1))


# (op, shape arg, params arg, numpy function of the f64 inputs, K)
CASES = [
    ("add", "7x13", "", lambda a, b: a + b, 1),
    ("sub", "3x1x5,1x4x5", "", lambda a, b: a - b, 1),
    ("mul", "5x1,1x6", "", lambda a, b: a * b, 1),
    ("div", "513", "", lambda a, b: a / b, 1),
    ("relu", "17x3", "", lambda a: np.maximum(a, 0), 1),
    ("sum", "33x5", "", lambda a: np.sum(a), 165),
    ("sum", "33x5", "axis=0", lambda a: np.sum(a, axis=0), 33),
    ("mean", "4x6x5", "axis=-2,keepdim=true",
     lambda a: np.mean(a, axis=-2, keepdims=True), 6),
    ("matmul", "7x13,13x5", "", lambda a, b: a @ b, 13),
    ("matmul", "2x3x4,2x4x5", "", lambda a, b: a @ b, 4),
    ("transpose", "6x9", "", lambda a: swap(a, -2, -1), 1),
    ("transpose", "2x3x4", "dim0=0,dim1=2", lambda a: swap(a, 0, 2), 1),
    ("log_softmax", "5x10", "", lambda a: log_softmax(a, -1), 10),
    ("log_softmax", "5x10", "axis=0", lambda a: log_softmax(a, 0), 5),
    # creation ops: the shape is the output's, there are no inputs
    ("zeros", "4x5", "", lambda: np.zeros((4, 5)), 1),
    ("full", "7", "value=2.5", lambda: np.full(7, 2.5), 1),
    ("arange", "9", "start=1,step=0.5", lambda: 1 + 0.5 * np.arange(9), 1),
    ("copy", "3x4", "", lambda a: a.copy(), 1),
    # in-place and unfused forms compute the values of their op
    ("add_", "4x5,5", "", lambda a, b: a + b, 1),
    ("add_relu_unfused", "7x13", "", lambda a, b: np.maximum(a + b, 0), 1),
    ("log_softmax_unfused", "5x10", "", lambda a: log_softmax(a, -1), 10),
    # optimizer step (output 0: the updated parameters); eigenvalues
    ("sgd", "17", "lr=0.1", lambda p, g: p - 0.1 * g, 1),
    ("eigh", "6x6", "", lambda a: np.linalg.eigh(a, UPLO="L")[0], 6),
]







def exec_case(op, shape, params, dtype, fn, k):
    out = os.path.join(TMP, f"{op}-{shape}-{params}-{dtype}".replace(",", "_"))
    args = [TBENCH, "exec", op, "--shape", shape, "--dtype", dtype]
    if params:
        args += ["--params", params]
    args += ["-o", out]
    p = subprocess.run(args, capture_output=True, text=True)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    meta = json.load(open(os.path.join(out, "exec.json")))
    ins = [np.load(os.path.join(out, f["file"])) for f in meta["inputs"]]
    got = np.load(os.path.join(out, meta["outputs"][0]["file"]))
    ref = np.load(os.path.join(out, meta["reference"][0]["file"]))
    want_dt = np.float32 if dtype == "f32" else np.float64
    expect(all(i.dtype == want_dt for i in ins), "input dtype")
    expect(got.dtype == want_dt and ref.dtype == np.float64, "output dtype")
    expect(list(got.shape) == meta["outputs"][0]["shape"], "output shape")
    oracle = np.asarray(fn(*[i.astype(np.float64) for i in ins]))
    expect(got.shape == oracle.shape, f"shape {got.shape} vs {oracle.shape}")
    t = TOL[op][dtype]
    bound = t["atol"] * np.sqrt(k) + t["rtol"] * np.abs(oracle)
    err = np.abs(got.astype(np.float64) - oracle)
    expect(np.all(err <= bound),
           f"max err {err.max():.3g} > bound (rtol {t['rtol']}, "
           f"atol {t['atol']})")
    # tbench's own f64 reference agrees with NumPy far inside the tolerance
    expect(np.allclose(ref, oracle, rtol=1e-12, atol=1e-12), "reference")
    # deterministic: the same command gives the same inputs
    p2 = subprocess.run(args[:-1] + [out + "-again"], capture_output=True,
                        text=True)
    expect(p2.returncode == 0, p2.stderr)
    if ins:
        again = np.load(os.path.join(out + "-again", "input0.npy"))
        expect(np.array_equal(again, ins[0]), "inputs not deterministic")
    else:
        expect(meta["inputs"] == [], "a creation op has no inputs")


for op, shape, params, fn, k in CASES:
    for dt in ("f32", "f64"):
        def make(op=op, shape=shape, params=params, fn=fn, k=k, dt=dt):
            return lambda: exec_case(op, shape, params, dt, fn, k)
        case(f"exec {op} {shape} {params or '-'} {dt} matches NumPy")(make())


BAD = [
    (["frob", "--shape", "4"], "frob"),
    (["add", "--shape", "4x5,3x5"], "cannot broadcast"),
    (["add", "--shape", "4,4,4"], "2 inputs"),
    (["add", "--shape", "4x0"], "positive"),
    (["add", "--shape", "4x-2"], "positive"),
    (["sum", "--shape", "4x5", "--params", "axis=2"], "out of range"),
    (["sum", "--shape", "4x5", "--params", "colour=2"], "colour"),
    (["matmul", "--shape", "2x3,4x5"], "inner dims"),
    (["add", "--shape", "4", "--dtype", "f8"], "f8"),
    (["add", "--shape", "4", "--backend", "tpu"], "tpu"),
    (["add", "--shape", "4"], "-o DIR"),
    (["add", "--shape", "4", "--seed", "-1"], "seed"),
    (["eigh", "--shape", "4x5"], "square"),
    (["zeros", "--shape", "4,4"], "one shape"),
    (["add_", "--shape", "4,3x4"], "first input"),
    (["adam", "--shape", "8,8,8,7"], "differs from param"),
    # reliability review D17: read as 4 before
    (["relu", "--shape", "4x"], "expected dims like 64x128"),
    (["relu", "--shape", "+4"], "dims must be positive integers"),
    (["relu", "--shape", " 4"], "dims must be positive integers"),
    (["sum", "--shape", "4x4", "-p", "axis=0,axis=1"], "axis is given twice"),
]

def expect_refused(argv, needle, out):
    """exec ARGV [-o OUT] exits 2 with NEEDLE in its first line and
    writes nothing."""
    extra = [] if out is None else ["-o", out]
    p = subprocess.run([TBENCH, "exec", *argv, *extra],
                       capture_output=True, text=True)
    expect(p.returncode == 2, f"exit {p.returncode}: {p.stderr}")
    first = p.stderr.splitlines()[0]
    expect(needle in first, f"'{needle}' not in '{first}'")
    if out is not None:
        expect(not os.path.exists(out), "output written on bad input")


for argv, needle in BAD:
    def make(argv=argv, needle=needle):
        out = None if needle == "-o DIR" else os.path.join(TMP, "bad")
        return lambda: expect_refused(argv, needle, out)
    case(f"exec {' '.join(argv)}: exit 2 naming '{needle}'")(make())


# --input: the user's own arrays instead of generated inputs.
def npy(name, a):
    path = os.path.join(TMP, name)
    np.save(path, a)
    return path


@case("exec --input: the given arrays are the inputs; NumPy agrees")
def _():
    a = np.random.default_rng(5).standard_normal((6, 7))
    b = np.random.default_rng(6).standard_normal(7)
    out = os.path.join(TMP, "given")
    p = subprocess.run([TBENCH, "exec", "sub", "-i", npy("a.npy", a),
                        "-i", npy("b.npy", b), "-o", out],
                       capture_output=True, text=True)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    meta = json.load(open(os.path.join(out, "exec.json")))
    expect(meta["dtype"] == "f64", "dtype from the files")
    expect(len(meta["input_files"]) == 2, "input_files")
    expect(np.array_equal(np.load(os.path.join(out, "input0.npy")), a),
           "input0 is the file")
    got = np.load(os.path.join(out, "output0.npy"))
    expect(np.allclose(got, a - b, rtol=1e-14, atol=0), "a - b")


@case("exec --input: eigh of a non-finite matrix: exit 2, one line")
def _():
    a = np.eye(4)
    a[2, 1] = np.nan
    out = os.path.join(TMP, "nan-eigh")
    p = subprocess.run([TBENCH, "exec", "eigh", "-i", npy("nan.npy", a),
                        "-o", out], capture_output=True, text=True)
    expect(p.returncode == 2, f"exit {p.returncode}: {p.stderr}")
    expect(len(p.stderr.strip().splitlines()) == 1, "one line")
    expect("element 9 is nan; eigh needs finite values" in p.stderr,
           p.stderr)
    expect(not os.path.exists(out), "output written on bad input")


@case("exec --input: eigh of a singular matrix is defined: NumPy agrees")
def _():
    v = np.arange(1.0, 6.0)
    a = np.outer(v, v)  # rank 1: four zero eigenvalues
    out = os.path.join(TMP, "singular-eigh")
    p = subprocess.run([TBENCH, "exec", "eigh", "-i", npy("sing.npy", a),
                        "-o", out], capture_output=True, text=True)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    w = np.load(os.path.join(out, "output0.npy"))
    expect(np.allclose(w, np.linalg.eigh(a)[0], rtol=0, atol=1e-12),
           f"eigenvalues {w}")


BAD_INPUT = [
    (lambda: ["-i", npy("f32.npy", np.ones(4, np.float32)),
              "-i", npy("f64.npy", np.ones(4))], "f64.npy: f64, but the case"),
    (lambda: ["-i", npy("one.npy", np.ones(4))], "takes 2 inputs, got 1"),
    (lambda: ["-i", npy("fo.npy", np.asfortranarray(np.ones((3, 4)))),
              "-i", npy("r.npy", np.ones(4))], "Fortran order"),
    (lambda: ["-i", npy("int.npy", np.ones(4, np.int32)),
              "-i", npy("r2.npy", np.ones(4))], "not little-endian float"),
    (lambda: ["-i", npy("s0.npy", np.float64(3)),
              "-i", npy("r3.npy", np.ones(4))], "0-dim"),
    (lambda: ["-i", os.path.join(TMP, "missing.npy"),
              "-i", npy("r4.npy", np.ones(4))], "cannot open"),
    (lambda: ["--shape", "3x5", "-i", npy("m.npy", np.ones((3, 4))),
              "-i", npy("r5.npy", np.ones(4))], "does not match"),
    (lambda: ["-i", npy("x1.npy", np.ones((3, 4))),
              "-i", npy("x2.npy", np.ones(5))], "cannot broadcast"),
]

for i, (argv, needle) in enumerate(BAD_INPUT):
    def make(argv=argv, needle=needle, i=i):
        return lambda: expect_refused(["add", *argv()], needle,
                                      os.path.join(TMP, f"badin{i}"))
    case(f"exec add --input: exit 2 naming '{needle}'")(make())


# a truncated file
@case("exec --input: a truncated .npy is refused")
def _():
    path = npy("trunc.npy", np.ones(100))
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 8)
    p = subprocess.run([TBENCH, "exec", "relu", "-i", path, "-o",
                        os.path.join(TMP, "tr")], capture_output=True,
                       text=True)
    expect(p.returncode == 2, f"exit {p.returncode}")
    expect("fewer data bytes" in p.stderr, p.stderr)


# issue 15: the header was searched with strstr, so a key inside a string
# value was taken as the key: this file read as one float of shape (1,)
@case("exec --input: a .npy key inside a string value is not the key")
def _():
    d = ("{'note': \"'shape': (1,)\", 'descr': '<f4', "
         "'fortran_order': False, 'shape': (2,)}")
    d += " " * (63 - (10 + len(d)) % 64) + "\n"
    path = os.path.join(TMP, "keyinstr.npy")
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") +
                d.encode() + np.ones(1, np.float32).tobytes())
    p = subprocess.run([TBENCH, "exec", "relu", "-i", path, "-o",
                        os.path.join(TMP, "kis")], capture_output=True,
                       text=True)
    expect(p.returncode == 2, f"exit {p.returncode}: {p.stderr}")
    expect("a key other than descr" in p.stderr, p.stderr)


if __name__ == "__main__":
    sys.exit(run_cases())
