#!/usr/bin/python3
"""The memory choreography of src/backends/cuda/linalg.cu, replayed with
NumPy standing in for cuSOLVER, printed as TAP.  No GPU: this checks the
row-major/column-major reasoning (which buffer each cuSOLVER output lands
in, with which leading dimension, and which transposes follow), not
cuSOLVER.  Each case rebuilds A from the outputs exactly as tbench reads
them (row-major) and checks the factorization identities.

Usage: test_cuda_linalg_layout.py   (no arguments)
"""
import sys

import numpy as np

from tap import case, expect, run as run_cases

RNG = np.random.default_rng(7)
SHAPES = [(1, 1), (7, 7), (7, 13), (13, 7), (1, 7), (65, 33), (4, 9)]


def colmajor(buf, rows, cols, ld):
    """The column-major rows x cols matrix stored in flat buf (ld)."""
    return np.array([[buf[i + j * ld] for j in range(cols)]
                     for i in range(rows)])


def store_colmajor(mat, buf, ld):
    rows, cols = mat.shape
    for j in range(cols):
        for i in range(rows):
            buf[i + j * ld] = mat[i, j]


def gesvd(a_buf, rows, cols, u_buf, vt_buf):
    """cusolverDn?gesvd('S', 'S', rows, cols, A, lda=rows, S, U, ldu=rows,
    VT, ldvt=k): column-major in and out (rows >= cols)."""
    assert rows >= cols
    k = cols
    a = colmajor(a_buf, rows, cols, rows)
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    store_colmajor(u, u_buf, rows)
    store_colmajor(vt, vt_buf, k)
    return s


def rm_to_cm(src, rows, cols):
    """k_rm_to_cm: dst[t] with j = t / rows, i = t % rows from src[i*cols+j]."""
    dst = np.empty(rows * cols)
    for t in range(rows * cols):
        j, i = divmod(t, rows)
        dst[t] = src[i * cols + j]
    return dst


def cm_to_rm(src, rows, cols, ld, upper=False):
    """k_cm_to_rm: dst[i*cols + j] = src[i + j*ld] (0 below the diagonal)."""
    dst = np.empty(rows * cols)
    for t in range(rows * cols):
        i, j = divmod(t, cols)
        dst[t] = 0.0 if upper and j < i else src[i + j * ld]
    return dst


def svd_like_module(a_rm, m, n):
    k = min(m, n)
    out_u, out_s, out_vt = np.empty(m * k), None, np.empty(k * n)
    if n >= m:  # B = A^T (n x m) is the input buffer itself
        a = a_rm.copy()
        out_s = gesvd(a, n, m, out_vt, out_u)  # U_b -> Vt, VT_b -> U
    else:
        a = rm_to_cm(a_rm, m, n)
        u, vt = np.empty(m * k), np.empty(k * n)
        out_s = gesvd(a, m, n, u, vt)
        out_u = cm_to_rm(u, m, k, m)
        out_vt = cm_to_rm(vt, k, n, k)
    return out_u.reshape(m, k), out_s, out_vt.reshape(k, n)


@case("svd: wide, square and tall paths rebuild A with orthonormal factors")
def svd():
    for m, n in SHAPES:
        a = RNG.standard_normal((m, n))
        u, s, vt = svd_like_module(a.ravel(), m, n)
        k = min(m, n)
        expect(np.allclose(u @ np.diag(s) @ vt, a, atol=1e-10),
               f"{m}x{n}: U S Vt != A")
        expect(np.allclose(u.T @ u, np.eye(k), atol=1e-10), f"{m}x{n}: U")
        expect(np.allclose(vt @ vt.T, np.eye(k), atol=1e-10),
               f"{m}x{n}: Vt")
        expect(np.all(np.diff(s) <= 0), f"{m}x{n}: S not descending")


@case("qr: geqrf/orgqr on the transposed input, R's triangle, Q back")
def qr():
    for m, n in SHAPES:
        a = RNG.standard_normal((m, n))
        k = min(m, n)
        buf = rm_to_cm(a.ravel(), m, n)
        # geqrf + orgqr, column-major, lda = m: Q (m x k) over the first
        # k columns, R in the upper triangle of the first k rows
        q, r = np.linalg.qr(colmajor(buf, m, n, m), mode="reduced")
        geqrf = np.zeros(m * n)
        store_colmajor(np.vstack([r, np.zeros((m - k, n))]), geqrf, m)
        r_rm = cm_to_rm(geqrf, k, n, m, upper=True).reshape(k, n)
        qbuf = np.zeros(m * n)
        store_colmajor(q, qbuf, m)
        q_rm = cm_to_rm(qbuf, m, k, m).reshape(m, k)
        expect(np.allclose(q_rm @ r_rm, a, atol=1e-10), f"{m}x{n}: QR != A")
        expect(np.allclose(np.tril(r_rm, -1), 0), f"{m}x{n}: R not upper")


@case("eigh: syevd(upper) on A^T is A's lower triangle; vectors as columns")
def eigh():
    for n in (1, 7, 33):
        a = RNG.standard_normal((n, n))
        a = a + a.T
        # only the lower triangle is the input: poison the upper one
        a_in = np.tril(a) + np.triu(np.full((n, n), 1e3), 1)
        b = colmajor(a_in.ravel(), n, n, n)  # the buffer as cuSOLVER sees
        w, v = np.linalg.eigh(b, UPLO="U")
        vbuf = np.empty(n * n)
        store_colmajor(v, vbuf, n)
        vec = cm_to_rm(vbuf, n, n, n).reshape(n, n)
        expect(np.allclose(a @ vec, vec @ np.diag(w), atol=1e-9),
               f"{n}: A V != V diag(w)")
        expect(np.all(np.diff(w) >= 0), f"{n}: values not ascending")


sys.exit(run_cases())
