#!/usr/bin/python3
"""Generate the backward-op oracle vectors: tests/data/autograd_vectors.h,
and the autograd model vectors: tests/data/autograd_model_vectors.h.

For every backward op of tbench (category "backward", src/ops/op_backward.h)
and a few odd shapes (broadcasting in add/sub/mul/div, batched matmul,
padded and strided pooling and convolution), the inputs the backward op
takes (the upstream gradient g, then the forward inputs or output it
reads) and the gradients PyTorch's autograd computes for them
(tests/test_backward.c).  Each case also carries the forward op and its
inputs, so the C test can check the same gradients by central finite
differences of tbench's own forward reference kernels in f64.

Run with Debian's /usr/bin/python3 (python3-numpy, python3-torch):

    /usr/bin/python3 scripts/gen_oracle_autograd.py [OUTPUT [MODEL_OUTPUT]]

How a case is made (independent of tbench's C code):
- Inputs come from a fixed-seed PCG64, rounded to float32 first so the
  f32 and f64 runs of the C test read the same values exactly.
- The forward op runs in torch (float64) on tensors with requires_grad,
  then torch.autograd.grad(out, inputs, g) gives the expected gradients
  (float64), written for both dtypes.  The f32 kernels are held to the
  op table's f32 tolerance, which the test states.
- The scalar output of sum/mean over all elements and of nll_loss has
  its gradient given as shape [1] (tbench inputs have at least one dim).
- nll_loss targets are class indices stored as values; nll_loss is
  checked on its forward value.

Values are written with repr(), which round-trips float64 exactly.
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as Fn

SEED = 20261125
rng = np.random.default_rng(SEED)


def rnd(shape, lo=-1.0, hi=1.0):
    x = rng.uniform(lo, hi, size=shape).astype(np.float32).astype(np.float64)
    return x


def T(x):
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


CASES = []


def add(name, op, fwd, params, bw_in, out, f_in, f_map):
    """bw_in: the backward op's inputs; out: expected outputs; f_in: the
    forward op's inputs; f_map[k]: the forward input output k is the
    gradient of."""
    CASES.append(dict(name=name, op=op, fwd=fwd, params=params,
                      bw_in=[np.asarray(a, dtype=np.float64) for a in bw_in],
                      out=[np.asarray(a, dtype=np.float64) for a in out],
                      f_in=[np.asarray(a, dtype=np.float64) for a in f_in],
                      f_map=f_map))


def grads(y, xs, g):
    gs = torch.autograd.grad(y, xs, torch.tensor(g).reshape(y.shape))
    return [t.detach().numpy() for t in gs]


# ---- activations --------------------------------------------------------
ACT = {"relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
       "gelu": Fn.gelu}
for nm, f in ACT.items():
    for shape in [(7, 13), (3, 1, 5)]:
        x = rnd(shape, -3, 3)
        g = rnd(shape)
        xt = T(x)
        (dx,) = grads(f(xt), [xt], g)
        add(f"{nm}_backward_{'x'.join(map(str, shape))}", nm + "_backward",
            nm, {}, [g, x], [dx], [x], [0])

# ---- log_softmax ----------------------------------------------------------
for shape, axis in [((5, 11), -1), ((6, 3, 4), 0), ((2, 7, 3), 1)]:
    x = rnd(shape, -3, 3)
    g = rnd(shape)
    xt = T(x)
    y = torch.log_softmax(xt, axis)
    (dx,) = grads(y, [xt], g)
    yv = y.detach().numpy()
    add(f"log_softmax_backward_axis{axis}", "log_softmax_backward",
        "log_softmax", {"axis": axis}, [g, yv], [dx], [x], [0])

# ---- sum, mean ------------------------------------------------------------
for nm in ["sum", "mean"]:
    for shape, axis, keep in [((5, 7, 3), 1, 0), ((4, 6), -1, 1),
                              ((3, 5), None, 0), ((2, 3), None, 1)]:
        x = rnd(shape)
        xt = T(x)
        f = torch.sum if nm == "sum" else torch.mean
        y = f(xt) if axis is None else f(xt, axis, keepdim=bool(keep))
        if axis is None and keep:
            y = y.reshape([1] * len(shape))
        gshape = list(y.shape) if y.dim() else [1]
        g = rnd(gshape)
        (dx,) = grads(y, [xt], g)
        prm = {"keepdim": keep}
        if axis is not None:
            prm["axis"] = axis
        add(f"{nm}_backward_{'x'.join(map(str, shape))}_a{axis}_k{keep}",
            nm + "_backward", nm, prm, [g, x], [dx], [x], [0])

# ---- broadcasting binary ops --------------------------------------------
BIN = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
       "div": torch.div}
for nm, f in BIN.items():
    for sa, sb in [((5, 1, 7), (3, 1)), ((4, 6), (6,)), ((1,), (3, 5)),
                   ((2, 3), (2, 3))]:
        a = rnd(sa)
        b = rnd(sb, 0.5, 2.0) if nm == "div" else rnd(sb)
        at, bt = T(a), T(b)
        y = f(at, bt)
        g = rnd(tuple(y.shape))
        da, db = grads(y, [at, bt], g)
        add(f"{nm}_backward_{'x'.join(map(str, sa))}_{'x'.join(map(str, sb))}",
            nm + "_backward", nm, {}, [g, a, b], [da, db], [a, b], [0, 1])

# ---- matmul, linear ---------------------------------------------------------
for sa, sb in [((5, 7), (7, 3)), ((2, 3, 4), (2, 4, 5)), ((1, 9), (9, 1))]:
    a, b = rnd(sa), rnd(sb)
    at, bt = T(a), T(b)
    y = at @ bt
    g = rnd(tuple(y.shape))
    da, db = grads(y, [at, bt], g)
    add(f"matmul_backward_{'x'.join(map(str, sa))}_{'x'.join(map(str, sb))}",
        "matmul_backward", "matmul", {}, [g, a, b], [da, db], [a, b], [0, 1])

for M, K, N in [(6, 5, 4), (3, 8, 7)]:
    x, W, b = rnd((M, K)), rnd((K, N)), rnd((N,), -0.3, 0.3)
    xt, Wt, bt = T(x), T(W), T(b)
    y = torch.relu(xt @ Wt + bt)
    g = rnd((M, N))
    dx, dW, db = grads(y, [xt, Wt, bt], g)
    add(f"linear_backward_{M}x{K}x{N}", "linear_backward", "linear", {},
        [g, x, W, y.detach().numpy()], [dx, dW, db], [x, W, b], [0, 1, 2])

# ---- nll_loss -------------------------------------------------------------
for N, C in [(6, 5), (1, 3), (9, 10)]:
    logp = torch.log_softmax(torch.tensor(rnd((N, C), -3, 3)), 1).numpy()
    logp = logp.astype(np.float32).astype(np.float64)
    t = rng.integers(0, C, size=N).astype(np.float64)
    lt = T(logp)
    loss = Fn.nll_loss(lt, torch.tensor(t, dtype=torch.long))
    add(f"nll_loss_{N}x{C}", "nll_loss", "nll_loss", {}, [logp, t],
        [np.array(loss.item())], [logp, t], [])
    g = rnd((1,))
    (dl,) = grads(loss, [lt], g)
    add(f"nll_loss_backward_{N}x{C}", "nll_loss_backward", "nll_loss", {},
        [g, logp, t], [dl], [logp, t], [0])

# ---- pooling ----------------------------------------------------------------
for nm in ["max_pool2d", "avg_pool2d"]:
    for shape, k, s, p in [((2, 3, 7, 9), 2, None, 0),
                           ((1, 2, 8, 7), 3, 2, 1), ((2, 1, 5, 5), 3, 1, 0)]:
        x = rnd(shape)
        xt = T(x)
        if nm == "max_pool2d":
            y = Fn.max_pool2d(xt, k, s, p)
        else:
            y = Fn.avg_pool2d(xt, k, s, p, count_include_pad=True)
        g = rnd(tuple(y.shape))
        (dx,) = grads(y, [xt], g)
        prm = {"kernel": k, "padding": p}
        if s is not None:
            prm["stride"] = s
        add(f"{nm}_backward_{'x'.join(map(str, shape))}_k{k}s{s}p{p}",
            nm + "_backward", nm, prm, [g, x], [dx], [x], [0])

# ---- conv2d -----------------------------------------------------------------
for xs, ws, st, pd, dl in [((2, 3, 7, 6), (4, 3, 3, 2), 1, 0, 1),
                           ((2, 2, 9, 8), (3, 2, 3, 3), 2, 1, 2),
                           ((1, 1, 5, 5), (2, 1, 1, 1), 1, 0, 1)]:
    x, w, b = rnd(xs), rnd(ws), rnd((ws[0],))
    xt, wt, bt = T(x), T(w), T(b)
    y = Fn.conv2d(xt, wt, bt, stride=st, padding=pd, dilation=dl)
    g = rnd(tuple(y.shape))
    dx, dw, db = grads(y, [xt, wt, bt], g)
    add(f"conv2d_backward_{'x'.join(map(str, xs))}_s{st}p{pd}d{dl}",
        "conv2d_backward", "conv2d",
        {"stride": st, "padding": pd, "dilation": dl}, [g, x, w],
        [dx, dw, db], [x, w, b], [0, 1, 2])


# ---- output ---------------------------------------------------------------
def arr(lines, name, a):
    flat = np.asarray(a, dtype=np.float64).reshape(-1)
    lines.append(f"static const double {name}[{max(flat.size, 1)}] = {{")
    for i in range(0, flat.size, 4):
        lines.append("    " + ", ".join(repr(float(v)) for v in
                                        flat[i:i + 4]) + ",")
    lines.append("};")


def shape_init(a):
    a = np.asarray(a)
    dims = list(a.shape) if a.ndim else []
    return "{%d, {%s}}" % (len(dims), ", ".join(str(d) for d in dims) or "0")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "data",
        "autograd_vectors.h")
    L = []
    L.append("/* Oracle vectors of the backward ops.")
    L.append(" *")
    L.append(" * GENERATED by scripts/gen_oracle_autograd.py (NumPy %s, "
             "PyTorch %s, seed" % (np.__version__, torch.__version__))
    L.append(" * %d); do not edit, re-run the script.  Each case: the "
             "backward op's" % SEED)
    L.append(" * inputs (float32-representable), its parameters, the "
             "gradients PyTorch's")
    L.append(" * autograd computes in float64, and the forward op with its "
             "inputs for")
    L.append(" * the finite-difference check.  Included by "
             "tests/test_backward.c only. */")
    L.append("#ifndef TB_TESTS_DATA_AUTOGRAD_VECTORS_H")
    L.append("#define TB_TESTS_DATA_AUTOGRAD_VECTORS_H")
    L.append("")
    L.append("#include <stdint.h>")
    L.append("")
    L.append("typedef struct agv_shape {")
    L.append("    int ndim;")
    L.append("    int64_t dim[8];")
    L.append("} agv_shape;")
    L.append("")
    L.append("typedef struct agv_param {")
    L.append("    const char *name;")
    L.append("    double value;")
    L.append("} agv_param;")
    L.append("")
    L.append("typedef struct agv_case {")
    L.append("    const char *name, *op, *fwd;")
    L.append("    int n_params;")
    L.append("    agv_param params[4];")
    L.append("    int n_in;")
    L.append("    agv_shape in_shape[4];")
    L.append("    const double *in[4];")
    L.append("    int n_out;")
    L.append("    agv_shape out_shape[3];")
    L.append("    const double *out[3];")
    L.append("    int n_fin;")
    L.append("    agv_shape fin_shape[4];")
    L.append("    const double *fin[4];")
    L.append("    int fmap[3]; /* output k is the gradient of fin[fmap[k]] */")
    L.append("} agv_case;")
    L.append("")
    k = 0
    rows = []
    for c in CASES:
        names = {}
        for kind in ("bw_in", "out", "f_in"):
            names[kind] = []
            for a in c[kind]:
                nm = f"agv_data{k}"
                k += 1
                arr(L, nm, a)
                names[kind].append(nm)
        prm = ", ".join('{"%s", %r}' % (n, float(v))
                        for n, v in c["params"].items())
        fmap = c["f_map"] + [-1] * (3 - len(c["f_map"]))
        rows.append(
            '    {"%s", "%s", "%s", %d, {%s}, %d, {%s}, {%s}, %d, {%s}, {%s}, '
            '%d, {%s}, {%s}, {%s}},' % (
                c["name"], c["op"], c["fwd"], len(c["params"]), prm or "{0}",
                len(c["bw_in"]), ", ".join(shape_init(a) for a in c["bw_in"]),
                ", ".join(names["bw_in"]), len(c["out"]),
                ", ".join(shape_init(a) for a in c["out"]),
                ", ".join(names["out"]), len(c["f_in"]),
                ", ".join(shape_init(a) for a in c["f_in"]),
                ", ".join(names["f_in"]), ", ".join(map(str, fmap))))
    L.append("")
    L.append("static const agv_case agv_cases[] = {")
    L.extend(rows)
    L.append("};")
    L.append("#define AGV_N_CASES (int)(sizeof agv_cases / sizeof agv_cases[0])")
    L.append("")
    L.append("#endif")
    with open(out, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"{out}: {len(CASES)} cases")
    models_out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(out), "autograd_model_vectors.h")
    write_models(models_out)


# ---- models: gradients of one step and parameters after N steps -------------
# The MLP and the CNN as tests/test_autograd.c builds them from tbench ops
# (linear = relu(x @ W + b) with W [K, N]; the last layer matmul + add; the
# loss log_softmax then nll_loss, mean over the batch), trained with
# torch.optim.SGD(lr, momentum, foreach=False) for STEPS steps on the same
# batch.  Parameters start from the generator's PCG64 values.
STEPS = 3
LR, MOMENTUM = 0.1, 0.9


def mlp_forward(P, x, t):
    h = torch.relu(x @ P["W1"] + P["b1"])
    h = torch.relu(h @ P["W2"] + P["b2"])
    z = h @ P["W3"] + P["b3"]
    return Fn.nll_loss(torch.log_softmax(z, 1), t)


def cnn_forward(P, x, t):
    h = torch.relu(Fn.conv2d(x, P["c1"], P["cb1"]))
    h = Fn.max_pool2d(h, 2)
    h = torch.relu(Fn.conv2d(h, P["c2"], P["cb2"]))
    h = Fn.max_pool2d(h, 2)
    h = h.reshape(h.shape[0], -1)
    z = h @ P["W"] + P["b"]
    return Fn.nll_loss(torch.log_softmax(z, 1), t)


MODELS = [
    ("mlp", mlp_forward, (5, 7), 4,
     [("W1", (7, 6)), ("b1", (6,)), ("W2", (6, 5)), ("b2", (5,)),
      ("W3", (5, 4)), ("b3", (4,))]),
    ("cnn", cnn_forward, (3, 1, 14, 14), 4,
     [("c1", (4, 1, 3, 3)), ("cb1", (4,)), ("c2", (3, 4, 3, 3)),
      ("cb2", (3,)), ("W", (12, 4)), ("b", (4,))]),
]


def write_models(out):
    L = ["/* Oracle vectors of the autograd models.", " *",
         " * GENERATED by scripts/gen_oracle_autograd.py (PyTorch %s, seed %d);"
         % (torch.__version__, SEED),
         " * do not edit, re-run the script.  Per model: the batch (x, class",
         " * targets), the initial parameters, the loss and the gradients of",
         " * one forward/backward pass, and the parameters after %d steps of"
         % STEPS,
         " * torch.optim.SGD(lr=%g, momentum=%g) on that batch (float64)."
         % (LR, MOMENTUM),
         " * Included by tests/test_autograd.c only. */",
         "#ifndef TB_TESTS_DATA_AUTOGRAD_MODEL_VECTORS_H",
         "#define TB_TESTS_DATA_AUTOGRAD_MODEL_VECTORS_H", "",
         "#include <stdint.h>", "",
         "#define AGM_STEPS %d" % STEPS,
         "#define AGM_LR %r" % LR, "#define AGM_MOMENTUM %r" % MOMENTUM, ""]
    for name, fwd, xshape, C, pspec in MODELS:
        x = rnd(xshape)
        t = rng.integers(0, C, size=xshape[0])
        P = {}
        for pn, ps in pspec:
            fan = int(np.prod(ps[1:])) if len(ps) == 4 else ps[0]
            bound = 1 / np.sqrt(fan)
            P[pn] = torch.tensor(rnd(ps, -bound, bound), dtype=torch.float64,
                                 requires_grad=True)
        init = {k: v.detach().numpy().copy() for k, v in P.items()}
        xt = torch.tensor(x)
        tt = torch.tensor(t, dtype=torch.long)
        loss = fwd(P, xt, tt)
        gr = torch.autograd.grad(loss, [P[k] for k, _ in pspec])
        loss0 = loss.item()
        opt = torch.optim.SGD([P[k] for k, _ in pspec], lr=LR,
                              momentum=MOMENTUM, foreach=False)
        for _ in range(STEPS):
            opt.zero_grad()
            fwd(P, xt, tt).backward()
            opt.step()
        arr(L, f"agm_{name}_x", x)
        arr(L, f"agm_{name}_t", t.astype(np.float64))
        for i, (pn, ps) in enumerate(pspec):
            arr(L, f"agm_{name}_{pn}_init", init[pn])
            arr(L, f"agm_{name}_{pn}_grad", gr[i].numpy())
            arr(L, f"agm_{name}_{pn}_final", P[pn].detach().numpy())
        L.append(f"static const double agm_{name}_loss = {loss0!r};")
        L.append("")
    L.append("#endif")
    with open(out, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"{out}: {len(MODELS)} models")


main()
