#!/usr/bin/python3
"""Generate the oracle vectors of svd, qr and eigh for tests/test_linalg.c:
tests/data/linalg_vectors.h.

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch):

    /usr/bin/python3 scripts/gen_oracle_linalg.py [OUTPUT]

OUTPUT defaults to tests/data/linalg_vectors.h.  Deterministic (fixed
seed, PCG64); the header is committed, so the C tests need no Python.

Expected values: NumPy (LAPACK underneath) in float64,
np.linalg.svd(full_matrices=False), np.linalg.qr(mode='reduced'),
np.linalg.eigh(UPLO='L'), brought to tbench's sign convention (the same
rules as tb_canon_svd/qr/eigh in src/ops/ref_linalg.c: U's and V's
columns have their largest-magnitude entry positive, first index on ties;
R's diagonal is >= 0).  Each is cross-checked against torch.linalg
(float64) after the same convention, to 1e-11 relative to the matrix
norm, and against the defining identities (A = U S Vt, A = Q R, A V =
V diag(w), orthonormal factors) to 1e-13 relative, before it is written.

Cases: square n x n for n in 1, 2, 4, 7, 8, 12, 16 (svd, qr, eigh),
non-square 7x4, 4x7, 13x5 (svd, qr); inputs uniform in [-1, 1]; f32
cases have float32-representable inputs and float64 expected values
computed from them.  eigh inputs are not symmetric: only their lower
triangle counts, which the test thereby checks too.
"""

import math
import os
import sys

import numpy as np
import torch

SEED = 20261122
MAX_BYTES = 300 * 1024

rng = np.random.default_rng(SEED)


def canon_cols(u, partner_rows=None):
    """Largest-|.| entry of each column of u positive (first on ties);
    flip the matching row of partner_rows too."""
    u = u.copy()
    p = None if partner_rows is None else partner_rows.copy()
    for j in range(u.shape[1]):
        i = int(np.argmax(np.abs(u[:, j])))  # first index on ties
        if u[i, j] < 0:
            u[:, j] = -u[:, j]
            if p is not None:
                p[j, :] = -p[j, :]
    return u, p


def canon_qr(q, r):
    q, r = q.copy(), r.copy()
    for j in range(r.shape[0]):
        if r[j, j] < 0:
            q[:, j] = -q[:, j]
            r[j, :] = -r[j, :]
    return q, r


def sym_lower(a):
    return np.tril(a) + np.tril(a, -1).T


def numpy_op(op, a):
    if op == "svd":
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        u, vt = canon_cols(u, vt)
        return [u, s, vt]
    if op == "qr":
        q, r = np.linalg.qr(a, mode="reduced")
        return list(canon_qr(q, r))
    w, v = np.linalg.eigh(a, UPLO="L")
    v, _ = canon_cols(v)
    return [w, v]


def torch_op(op, a):
    t = torch.from_numpy(a.copy())
    if op == "svd":
        u, s, vt = torch.linalg.svd(t, full_matrices=False)
        u, vt = canon_cols(u.numpy(), vt.numpy())
        return [u, s.numpy(), vt]
    if op == "qr":
        q, r = torch.linalg.qr(t, mode="reduced")
        return list(canon_qr(q.numpy(), r.numpy()))
    w, v = torch.linalg.eigh(t, UPLO="L")
    v, _ = canon_cols(v.numpy())
    return [w.numpy(), v]


def identities(op, a, outs):
    """Largest defect of the defining identities, relative to ||A||."""
    scale = max(np.linalg.norm(a, 2), 1e-300)
    if op == "svd":
        u, s, vt = outs
        k = s.size
        assert np.all(np.diff(s) <= 0), "svd: S not descending"
        return max(np.abs(u @ np.diag(s) @ vt - a).max() / scale,
                   np.abs(u.T @ u - np.eye(k)).max(),
                   np.abs(vt @ vt.T - np.eye(k)).max())
    if op == "qr":
        q, r = outs
        k = q.shape[1]
        assert np.allclose(r, np.triu(r), rtol=0, atol=0), "qr: R upper"
        return max(np.abs(q @ r - a).max() / scale,
                   np.abs(q.T @ q - np.eye(k)).max())
    w, v = outs
    s = sym_lower(a)
    assert np.all(np.diff(w) >= 0), "eigh: w not ascending"
    scale = max(np.linalg.norm(s, 2), 1e-300)
    return max(np.abs(s @ v - v @ np.diag(w)).max() / scale,
               np.abs(v.T @ v - np.eye(v.shape[0])).max())


def make_cases():
    cases = []
    square = [1, 2, 4, 7, 8, 12, 16]
    shapes = {
        "svd": [(n, n) for n in square] + [(7, 4), (4, 7), (13, 5)],
        "qr": [(n, n) for n in square] + [(7, 4), (4, 7), (13, 5)],
        "eigh": [(n, n) for n in square],
    }
    for op in ("svd", "qr", "eigh"):
        for dtype in ("f32", "f64"):
            for (m, n) in shapes[op]:
                a = rng.uniform(-1.0, 1.0, size=(m, n))
                if dtype == "f32":
                    a = a.astype(np.float32).astype(np.float64)
                want = numpy_op(op, a)
                other = torch_op(op, a)
                scale = max(np.linalg.norm(a, 2), 1e-300)
                for x, y in zip(want, other):
                    d = np.abs(x - y).max() / max(scale, 1.0)
                    if d > 1e-11:
                        sys.exit("%s %dx%d %s: NumPy and PyTorch differ "
                                 "by %.3g" % (op, m, n, dtype, d))
                defect = identities(op, a, want)
                if defect > 1e-13:
                    sys.exit("%s %dx%d %s: identity defect %.3g"
                             % (op, m, n, dtype, defect))
                cases.append({"name": "%s_%dx%d_%s" % (op, m, n, dtype),
                              "op": op, "dtype": dtype, "a": a,
                              "outs": want})
    return cases


def c_double(v):
    v = float(v)
    assert math.isfinite(v)
    if v == 0 and math.copysign(1.0, v) < 0:
        return "-0.0"
    return repr(v)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        root, "tests", "data", "linalg_vectors.h")
    cases = make_cases()
    body, rows = [], []
    count = [0]

    def array(x):
        name = "lv_data%d" % count[0]
        count[0] += 1
        vals = [c_double(v) for v in np.asarray(x).ravel()]
        lines = ["    " + ", ".join(vals[i:i + 4]) + ","
                 for i in range(0, len(vals), 4)]
        body.append("static const double %s[%d] = {\n%s\n};\n"
                    % (name, len(vals), "\n".join(lines)))
        return name

    for c in cases:
        a = c["a"]
        names = [array(a)] + [array(o) for o in c["outs"]]
        outs = ", ".join(names[1:])
        shapes = ", ".join(
            "{%s}" % ", ".join(str(d) for d in (o.shape + (0,))[:2])
            for o in c["outs"])
        rows.append(
            '    {"%s", "%s", "%s", %d, %d, %s, %d,\n'
            "     {%s},\n"
            "     {%s}},\n"
            % (c["name"], c["op"], c["dtype"], a.shape[0], a.shape[1],
               names[0], len(c["outs"]), outs, shapes))

    head = """\
/* Oracle vectors of svd, qr and eigh.
 *
 * GENERATED by scripts/gen_oracle_linalg.py (NumPy %s, PyTorch %s,
 * seed %d); do not edit, re-run the script.  Expected outputs are NumPy's
 * float64 results in tbench's sign convention (tb_canon_*), checked
 * against torch.linalg and the defining identities.  Inputs of f32 cases
 * are exactly representable in float.  Included by tests/test_linalg.c
 * only. */
#ifndef TB_TESTS_DATA_LINALG_VECTORS_H
#define TB_TESTS_DATA_LINALG_VECTORS_H

#include <stdint.h>

typedef struct lv_case {
    const char *name;
    const char *op;
    const char *dtype; /* "f32" or "f64" */
    int64_t m, n;      /* the input matrix, m x n */
    const double *in;  /* row-major */
    int n_out;
    const double *out[3];      /* row-major, in the op's output order */
    int64_t out_shape[3][2];   /* a 1-D output has out_shape[i][1] = 0 */
} lv_case;

""" % (np.__version__, torch.__version__, SEED)
    text = (head + "\n".join(body) + "\nstatic const lv_case lv_cases[] = {\n"
            + "".join(rows) + "};\n\n#define LV_N_CASES "
            "(sizeof lv_cases / sizeof lv_cases[0])\n\n#endif\n")
    if len(text) > MAX_BYTES:
        sys.exit("header is %d bytes, over %d" % (len(text), MAX_BYTES))
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    print("wrote %s: %d cases, %d bytes" % (path, len(cases), len(text)))


if __name__ == "__main__":
    main()
