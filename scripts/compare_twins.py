"""The twins of scripts/compare_numpy.py for the op families of issue 34
item 2: the scalar and in-place ops, layout and creation, conv and
pooling, the optimizer steps, the factorizations, the unfused
compositions and the backward ops, with the checks that the
factorizations and the random ops need (docs/FORMAT.md, "Files written
by scripts/compare_numpy.py").

Each twin is called as fam(op, t, mod, np, out, x, o, p): t is True for
PyTorch (mod is torch, else numpy), out for the out= form, x the inputs,
o the preallocated outputs (those the op writes in place are its
inputs), p the case's parameters.  It returns (callable, library calls
per iteration, name), or a string: the reason the library has no such
form (the case is "unsupported" with it as the message), or None.
"""
import math


def as_list(v):
    return v if isinstance(v, list) else [v]


INPLACE_ONLY = "writes its input in place (tbench's alias): its twin is " \
    "the out= form, which updates the input"


def scalar_twin(op, t, mod, np, out, x, o, p):
    """add_scalar .. div_scalar: the ufunc / aten op with a Python scalar
    (PyTorch keeps the tensor's dtype; NumPy's scalar of the array's
    dtype, so f32 stays f32)."""
    name = {"add_scalar": "add", "sub_scalar": "sub", "mul_scalar": "mul",
            "div_scalar": "div"}[op]
    s = float(p.get("scalar", 1))
    if t:
        f = getattr(mod, name)
    else:
        f = getattr(np, {"add": "add", "sub": "subtract", "mul": "multiply",
                         "div": "divide"}[name])
        s = x[0].dtype.type(s)
        name = f.__name__
    if out:
        return (lambda: f(x[0], s, out=o[0])), 1, f"{name}(x, scalar, out=)"
    return (lambda: f(x[0], s)), 1, f"{name}(x, scalar)"


def inplace_twin(op, t, mod, np, out, x):
    """add_ .. div_, relu_: a op= b on the input itself (NumPy's out=a,
    PyTorch's a.add_(b)); every timed call updates the values the last
    one left, as tbench's in-place cases do (its output is its input)."""
    if not out:
        return f"'{op}' {INPLACE_ONLY}"
    a = x[0]
    if op == "relu_":
        if t:
            return (lambda: a.relu_()), 1, "relu_"
        return (lambda: np.maximum(a, 0, out=a)), 1, "maximum(a, 0, out=a)"
    b = x[1]
    name = op[:-1]
    if t:
        f = getattr(a, op)
        return (lambda: f(b)), 1, op
    f = getattr(np, {"add": "add", "sub": "subtract", "mul": "multiply",
                     "div": "divide"}[name])
    return (lambda: f(a, b, out=a)), 1, f"{f.__name__}(a, b, out=a)"


def layout_twin(op, t, mod, np, out, x, o, p):
    """hardswish, permute, copy, causal_mask, and the creation ops zeros,
    ones, arange, rand_uniform, rand_normal (their values from the
    library's own generator: check_random)."""
    a = x[0] if x else None
    if op == "hardswish":
        if t:
            import torch.nn.functional as F
            if out:
                return (lambda: o[0].copy_(F.hardswish(a))), 2, \
                    "copy_(hardswish)"
            return (lambda: F.hardswish(a)), 1, "hardswish"
        if out:
            def hs():
                np.add(a, 3, out=o[0])
                np.clip(o[0], 0, 6, out=o[0])
                np.multiply(o[0], a, out=o[0])
                np.divide(o[0], 6, out=o[0])
            return hs, 4, "add, clip, multiply, divide (out=)"
        return (lambda: a * np.clip(a + 3, 0, 6) / 6), 4, \
            "x * clip(x + 3, 0, 6) / 6"
    if op == "permute":
        nd = len(a.shape)
        perm = tuple(int(p[f"p{i}"]) for i in range(nd)) \
            if "p0" in p else tuple(range(nd - 1, -1, -1))
        if t:
            if out:
                return (lambda: o[0].copy_(a.permute(perm))), 1, \
                    "copy_(permute)"
            return (lambda: a.permute(perm).contiguous()), 1, \
                "permute.contiguous"
        if out:
            return (lambda: np.copyto(o[0], a.transpose(perm))), 1, \
                "copyto(transpose(axes))"
        return (lambda: np.ascontiguousarray(a.transpose(perm))), 1, \
            "ascontiguousarray(transpose(axes))"
    if op == "copy":
        if t:
            if out:
                return (lambda: o[0].copy_(a)), 1, "copy_"
            return (lambda: a.clone()), 1, "clone"
        if out:
            return (lambda: np.copyto(o[0], a)), 1, "copyto"
        return (lambda: a.copy()), 1, "copy"
    if op == "causal_mask":
        m, n = a.shape[-2], a.shape[-1]
        above = np.triu(np.ones((m, n), dtype=bool), 1)
        if not p.get("causal", 1):
            above[:] = False
        if t:
            tm = mod.from_numpy(above)
            if out:
                def tcm():
                    o[0].copy_(a)
                    o[0].masked_fill_(tm, float("-inf"))
                return tcm, 2, "copy_, masked_fill_(~tril, -inf)"
            return (lambda: a.masked_fill(tm, float("-inf"))), 1, \
                "masked_fill(~tril, -inf) (mask built once)"
        if out:
            def cm():
                np.copyto(o[0], a)
                np.copyto(o[0], -np.inf, where=above)
            return cm, 2, "copyto, copyto(-inf, where=above diagonal)"
        return (lambda: np.where(above, -np.inf, a).astype(a.dtype,
                                                           copy=False)), \
            1, "where(above diagonal, -inf, x)"
    # creation: the shape and dtype of output 0
    o0 = o[0]
    shape, dt = tuple(o0.shape), o0.dtype
    if op in ("zeros", "ones"):
        v = 0 if op == "zeros" else 1
        if t:
            f = getattr(mod, op)
            if out:
                return (lambda: f(shape, dtype=dt, out=o0)), 1, \
                    f"{op}(shape, out=)"
            return (lambda: f(shape, dtype=dt)), 1, f"{op}(shape)"
        if out:
            return (lambda: o0.fill(v)), 1, f"fill({v})"
        return (lambda: getattr(np, op)(shape, dt)), 1, f"{op}(shape)"
    if op == "arange":
        st, sp = float(p.get("start", 0)), float(p.get("step", 1))
        n = shape[0]
        end = st + (n - 0.5) * sp       # n values whatever the rounding
        if t:
            if out:
                return (lambda: mod.arange(st, end, sp, out=o0)), 1, \
                    "arange(start, end, step, out=)"
            return (lambda: mod.arange(st, end, sp, dtype=dt)), 1, \
                "arange(start, end, step)"
        if out:
            return "NumPy's arange has no out= form"
        return (lambda: np.arange(st, end, sp, dtype=dt)), 1, \
            "arange(start, end, step)"
    if op in ("rand_uniform", "rand_normal"):
        u = op == "rand_uniform"
        a0 = float(p.get("low" if u else "mean", 0))
        a1 = float(p.get("high" if u else "std", 1))
        if t:
            gen = mod.Generator().manual_seed(int(p.get("seed", 0)))
            if u:
                if out:
                    return (lambda: o0.uniform_(a0, a1, generator=gen)), 1, \
                        "uniform_(low, high) (out=)"
                return (lambda: mod.empty(shape, dtype=dt).uniform_(
                    a0, a1, generator=gen)), 2, "empty, uniform_(low, high)"
            if out:
                return (lambda: mod.normal(a0, a1, shape, generator=gen,
                                           out=o0)), 1, \
                    "normal(mean, std, out=)"
            return (lambda: mod.normal(a0, a1, shape, generator=gen,
                                       dtype=dt)), 1, "normal(mean, std)"
        if dt == np.float16:
            return "NumPy's Generator draws float32 and float64 only"
        gen = np.random.default_rng(int(p.get("seed", 0)))
        c0, c1 = dt.type(a0), dt.type(a1 - a0 if u else a1)
        draw = gen.random if u else gen.standard_normal
        what = "random" if u else "standard_normal"
        if out:
            def rnd():
                draw(dtype=dt, out=o0)
                np.multiply(o0, c1, out=o0)
                np.add(o0, c0, out=o0)
            return rnd, 3, f"{what}(out=), multiply, add (out=)"
        return (lambda: draw(shape, dtype=dt) * c1 + c0), 3, \
            f"{what} * " + ("(high - low) + low" if u else "std + mean")
    return None


def more_twin(op, t, mod, np, out, x, o, p):
    """leaky_relu, argmax, linear (relu(x @ W + b)) and full: ops the
    script had a cost model of but no twin."""
    if op == "full":
        v, shape, dt = float(p.get("value", 0)), tuple(o[0].shape), o[0].dtype
        if t:
            if out:
                return (lambda: mod.full(shape, v, out=o[0])), 1, \
                    "full(shape, value, out=)"
            return (lambda: mod.full(shape, v, dtype=dt)), 1, \
                "full(shape, value)"
        if out:
            return (lambda: o[0].fill(v)), 1, "fill(value)"
        return (lambda: np.full(shape, v, dt)), 1, "full(shape, value)"
    a = x[0]
    if op in ("gelu", "gelu_tanh", "silu"):    # NumPy's (impl_for: torch)
        if op == "gelu":
            return "NumPy has no erf (gelu's Phi)"
        if out:
            return f"no out= form of '{op}' in compare_numpy.py"
        if op == "silu":
            return (lambda: a / (1 + np.exp(-a))), 4, "x / (1 + exp(-x))"
        c0, c1 = a.dtype.type(math.sqrt(2 / math.pi)), a.dtype.type(0.044715)
        return (lambda: 0.5 * a * (1 + np.tanh(c0 * (a + c1 * a * a * a)))), \
            9, "0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))"
    if op == "leaky_relu":
        al = float(p.get("alpha", 0.01))
        if t:
            import torch.nn.functional as F
            if out:
                return (lambda: o[0].copy_(F.leaky_relu(a, al))), 2, \
                    "copy_(leaky_relu)"
            return (lambda: F.leaky_relu(a, al)), 1, "leaky_relu"
        al = a.dtype.type(al)
        if out:
            def lr():
                np.multiply(a, al, out=o[0])
                np.copyto(o[0], a, where=a > 0)
            return lr, 3, "multiply(out=), copyto(where=x > 0)"
        return (lambda: np.where(a > 0, a, a * al)), 3, \
            "where(x > 0, x, alpha x)"
    if op == "argmax":
        if out:
            return "argmax returns integer indices: no out= form into " \
                "the case's float output"
        ax, keep = p.get("axis"), bool(p.get("keepdim", False))
        if t:
            return (lambda: mod.argmax(a, None if ax is None else int(ax),
                                       keep)), 1, "argmax(dim, keepdim)"
        return (lambda: np.argmax(a, axis=ax, keepdims=keep)), 1, \
            "argmax(axis, keepdims)"
    if op == "linear":
        w, b = x[1], x[2]
        if t:
            if out:
                def lo():
                    mod.addmm(b, a, w, out=o[0])
                    o[0].clamp_min_(0)
                return lo, 2, "addmm(out=), clamp_min_"
            return (lambda: mod.addmm(b, a, w).clamp_min_(0)), 2, \
                "addmm(b, x, W).clamp_min_(0)"
        return np_linear(np, out, a, w, b, o)
    return None


def var_twin(op, t, mod, np, out, x, o, p):
    """var: numpy.var (ddof = correction) and torch.var (correction=),
    along the axis or over every element."""
    a, ax = x[0], p.get("axis")
    keep, cor = bool(p.get("keepdim", False)), int(p.get("correction", 1))
    if t:
        dims = tuple(range(a.dim())) if ax is None else (int(ax),)
        if out:
            return (lambda: mod.var(a, dims, correction=cor, keepdim=keep,
                                    out=o[0])), 1, \
                "var(dim, correction, keepdim, out=)"
        return (lambda: mod.var(a, dims, correction=cor, keepdim=keep)), \
            1, "var(dim, correction, keepdim)"
    if out:
        return (lambda: np.var(a, axis=ax, ddof=cor, keepdims=keep,
                               out=o[0])), 1, "var(axis, ddof, keepdims, out=)"
    return (lambda: np.var(a, axis=ax, ddof=cor, keepdims=keep)), 1, \
        "var(axis, ddof, keepdims)"


def pool_twin(op, t, mod, np, out, x, o, p):
    """conv2d, conv2d_nobias, max_pool2d, avg_pool2d: torch.nn.functional
    (no out= form); NumPy has no convolution, and pools over
    sliding_window_view of the (padded) input."""
    if t:
        import torch.nn.functional as F
    if op.startswith("conv2d"):
        if not t:
            return "NumPy has no convolution"
        if out:
            return "torch.nn.functional.conv2d has no out= form"
        s, pd, dl = (int(p.get(k, d)) for k, d in
                     (("stride", 1), ("padding", 0), ("dilation", 1)))
        b = x[2] if op == "conv2d" else None
        return (lambda: F.conv2d(x[0], x[1], b, s, pd, dl)), 1, \
            f"conv2d(stride={s}, padding={pd}, dilation={dl})"
    k = int(p.get("kernel", 2))
    s = int(p.get("stride") or k)
    pd = int(p.get("padding", 0))
    mx = op == "max_pool2d"
    if t:
        if out:
            return f"torch.nn.functional.{op} has no out= form"
        f = F.max_pool2d if mx else F.avg_pool2d
        return (lambda: f(x[0], k, s, pd)), 1, \
            f"{op}(kernel={k}, stride={s}, padding={pd})"
    from numpy.lib.stride_tricks import sliding_window_view
    a = x[0]
    fill = -np.inf if mx else 0

    def windows():
        xp = np.pad(a, ((0, 0), (0, 0), (pd, pd), (pd, pd)),
                    constant_values=fill) if pd else a
        return sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::s, ::s]
    red = np.max if mx else np.mean
    name = ("pad, " if pd else "") + "sliding_window_view, " + \
        ("max" if mx else "mean") + "(axis=(-2, -1)"
    if out:
        return (lambda: red(windows(), axis=(-2, -1), out=o[0])), 1, \
            name + ", out=)"
    return (lambda: red(windows(), axis=(-2, -1))), 1, name + ")"


def optim_twin(op, t, mod, np, out, x, p):
    """The optimizer steps, in place on p and the state as tbench's
    (out= form only).  PyTorch: the torch.optim class itself
    (foreach=False), its state preset to the case's tensors with step =
    t - 1, so the checked (first) call takes step t; later calls count
    on, as the timed loop updates p and the state like tbench's.  NumPy:
    the closed-form update composed from ufuncs with out= into p, the
    state and preallocated buffers."""
    if not out:
        return f"'{op}' {INPLACE_ONLY}"
    f = lambda k, d: float(p.get(k, d))          # noqa: E731
    lr, wd = f("lr", 0.01), f("weight_decay", 0)
    b1, b2, eps = f("beta1", 0.9), f("beta2", 0.999), f("eps", 1e-8)
    step = int(p.get("step", 10))
    pv, g = x[0], x[1]
    if t:
        return torch_optim(op, mod, x, p, lr, wd, b1, b2, eps, step)
    return numpy_optim(op, np, x, p, lr, wd, b1, b2, eps, step, pv, g)


def torch_optim(op, mod, x, p, lr, wd, b1, b2, eps, step):
    pv, g = x[0], x[1]
    if op in ("lamb", "adabound"):
        return f"PyTorch has no {op} optimizer"
    if pv.dtype in (mod.bfloat16, mod.float16):
        return "torch.optim steps a 16-bit parameter in its own dtype " \
            "(1.13 fails on f32 state with it); tbench's 16-bit steps " \
            "keep the state in f32 and update in f32"
    if op == "nadam" and int(mod.__version__.split(".")[0]) < 2:
        return "PyTorch 1.x's NAdam takes mu_product * mu_t * mu_(t+1) " \
            "for the second step's product (fixed in 2.0, which tbench " \
            "follows): the values differ"
    O = mod.optim
    st = mod.tensor(float(step - 1))
    kw = {"lr": lr, "weight_decay": wd, "foreach": False}
    if op in ("sgd", "sgd_momentum"):
        mom = float(p.get("momentum", 0.9)) if op == "sgd_momentum" else 0
        opt = O.SGD([pv], momentum=mom,
                    dampening=float(p.get("dampening", 0)),
                    nesterov=bool(p.get("nesterov", 0)), **kw)
        state = {"momentum_buffer": x[2]} if mom else {}
        name = "SGD" + ("(momentum)" if mom else "")
    elif op == "adagrad":
        opt = O.Adagrad([pv], lr_decay=float(p.get("lr_decay", 0)),
                        eps=float(p.get("eps", 1e-10)), **kw)
        state = {"step": st, "sum": x[2]}
        name = "Adagrad"
    else:
        cls = {"adam": O.Adam, "adamw": O.AdamW, "adamax": O.Adamax,
               "nadam": O.NAdam, "radam": O.RAdam}[op]
        if op == "nadam":
            md = float(p.get("momentum_decay", 0.004))
            kw["momentum_decay"] = md
            mu = 1.0
            for i in range(1, step):
                mu *= b1 * (1. - 0.5 * (0.96 ** (i * md)))
        opt = cls([pv], betas=(b1, b2), eps=eps, **kw)
        state = {"step": st, "exp_avg": x[2],
                 ("exp_inf" if op == "adamax" else "exp_avg_sq"): x[3]}
        if op == "nadam":
            state["mu_product"] = mod.tensor(mu)
        name = cls.__name__
    pv.requires_grad_(False)
    pv.grad = g
    opt.state[pv] = state
    return (lambda: opt.step()), 1, f"optim.{name}(foreach=False).step"


def numpy_optim(op, np, x, p, lr, wd, b1, b2, eps, step, pv, g):
    """The closed forms, in PyTorch's order (src/ops/ref_optim.c)."""
    # the state's dtype, the one the update is computed in: f32 for a
    # 16-bit p, as tbench's 16-bit steps do
    sd = x[2].dtype if len(x) > 2 else np.promote_types(pv.dtype,
                                                        np.float32)
    n = pv.shape
    ta, tb = np.empty(n, sd), np.empty(n, sd)
    t = float(step)
    S = sd.type
    if op in ("sgd", "sgd_momentum"):
        mom = float(p.get("momentum", 0.9)) if op == "sgd_momentum" else 0
        damp = float(p.get("dampening", 0))
        nest = bool(p.get("nesterov", 0))

        def sgd():
            np.copyto(ta, g)
            if wd:
                np.multiply(pv, S(wd), out=tb)
                np.add(ta, tb, out=ta)
            if mom:
                buf = x[2]
                np.multiply(buf, S(mom), out=buf)
                np.multiply(ta, S(1 - damp), out=tb)
                np.add(buf, tb, out=buf)
                if nest:
                    np.multiply(buf, S(mom), out=tb)
                    np.add(ta, tb, out=ta)
                else:
                    np.copyto(ta, buf)
            np.multiply(ta, S(lr), out=ta)
            np.subtract(pv, ta, out=pv, casting="same_kind")
        return sgd, 6, "p -= lr * (g + wd p) (momentum buffer), ufuncs out="
    m = x[2]

    def grad_wd():
        np.copyto(ta, g)
        if wd and op != "adamw" and op != "lamb":
            np.multiply(pv, S(wd), out=tb)
            np.add(ta, tb, out=ta)

    def moments():
        np.multiply(m, S(b1), out=m)
        np.multiply(ta, S(1 - b1), out=tb)
        np.add(m, tb, out=m)
        v = x[3]
        np.multiply(v, S(b2), out=v)
        np.multiply(ta, ta, out=tb)
        np.multiply(tb, S(1 - b2), out=tb)
        np.add(v, tb, out=v)

    if op == "adagrad":
        clr = lr / (1 + (t - 1) * float(p.get("lr_decay", 0)))
        e = S(float(p.get("eps", 1e-10)))

        def adagrad():
            grad_wd()
            np.multiply(ta, ta, out=tb)
            np.add(m, tb, out=m)
            np.sqrt(m, out=tb)
            np.add(tb, e, out=tb)
            np.divide(ta, tb, out=ta)
            np.multiply(ta, S(clr), out=ta)
            np.subtract(pv, ta, out=pv, casting="same_kind")
        return adagrad, 9, "sum += g^2; p -= clr g / (sqrt(sum) + eps), " \
            "ufuncs out="
    if op == "adamax":
        clr = lr / (1 - b1 ** t)
        u = x[3]

        def adamax():
            grad_wd()
            np.multiply(m, S(b1), out=m)
            np.multiply(ta, S(1 - b1), out=tb)
            np.add(m, tb, out=m)
            np.multiply(u, S(b2), out=u)
            np.abs(ta, out=tb)
            np.add(tb, S(eps), out=tb)
            np.maximum(u, tb, out=u)
            np.divide(m, u, out=ta)
            np.multiply(ta, S(clr), out=ta)
            np.subtract(pv, ta, out=pv, casting="same_kind")
        return adamax, 11, "m, u = max(b2 u, |g| + eps); p -= clr m / u, " \
            "ufuncs out="
    bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
    v = x[3]
    if op in ("adam", "adamw"):
        def adam():
            grad_wd()
            if op == "adamw":
                np.multiply(pv, 1 - lr * wd, out=pv, casting="same_kind")
            moments()
            np.sqrt(v, out=tb)
            np.divide(tb, S(math.sqrt(bc2)), out=tb)
            np.add(tb, S(eps), out=tb)
            np.divide(m, tb, out=ta)
            np.multiply(ta, S(lr / bc1), out=ta)
            np.subtract(pv, ta, out=pv, casting="same_kind")
        return adam, 14, "m, v; p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) " \
            "+ eps), ufuncs out="
    if op == "radam":
        rinf = 2 / (1 - b2) - 1
        rt = rinf - 2 * t * b2 ** t / bc2
        rect = math.sqrt((rt - 4) * (rt - 2) * rinf /
                         ((rinf - 4) * (rinf - 2) * rt)) if rt > 5 else 0

        def radam():
            grad_wd()
            moments()
            np.divide(m, S(bc1), out=ta)
            np.multiply(ta, S(lr), out=ta)
            if rt > 5:
                np.sqrt(v, out=tb)
                np.add(tb, S(eps), out=tb)
                np.divide(S(math.sqrt(bc2)), tb, out=tb)
                np.multiply(ta, tb, out=ta)
                np.multiply(ta, S(rect), out=ta)
            np.subtract(pv, ta, out=pv, casting="same_kind")
        return radam, 15, "m, v; p -= m / bc1 * lr * sqrt(bc2) / " \
            "(sqrt(v) + eps) * rect, ufuncs out="
    if op == "nadam":
        md = float(p.get("momentum_decay", 0.004))
        mu_of = lambda i: b1 * (1. - 0.5 * (0.96 ** (i * md)))  # noqa
        prod = 1.0
        for i in range(1, step + 1):
            prod *= mu_of(i)
        mu, mun = mu_of(t), mu_of(t + 1)
        c1 = lr * (1 - mu) / (1 - prod)
        c2 = lr * mun / (1 - prod * mun)
        tc = np.empty(n, sd)

        def nadam():
            grad_wd()
            moments()
            np.divide(v, S(bc2), out=tb)
            np.sqrt(tb, out=tb)
            np.add(tb, S(eps), out=tb)
            np.divide(ta, tb, out=tc)
            np.multiply(tc, S(c1), out=tc)
            np.subtract(pv, tc, out=pv, casting="same_kind")
            np.divide(m, tb, out=tc)
            np.multiply(tc, S(c2), out=tc)
            np.subtract(pv, tc, out=pv, casting="same_kind")
        return nadam, 17, "m, v; p -= c1 g / d; p -= c2 m / d, " \
            "d = sqrt(v / bc2) + eps, ufuncs out="
    if op == "lamb":
        def lamb():
            grad_wd()
            moments()
            np.divide(v, S(bc2), out=tb)
            np.sqrt(tb, out=tb)
            np.add(tb, S(eps), out=tb)
            np.divide(m, S(bc1), out=ta)
            np.divide(ta, tb, out=ta)          # r without the decay
            if wd:
                np.multiply(pv, S(wd), out=tb)
                np.add(ta, tb, out=ta)
            pn = math.sqrt(float(np.dot(pv.reshape(-1).astype(sd),
                                        pv.reshape(-1).astype(sd))))
            rn = math.sqrt(float(np.dot(ta.reshape(-1), ta.reshape(-1))))
            ratio = pn / rn if pn > 0 and rn > 0 else 1.0
            np.multiply(ta, S(lr * ratio), out=ta)
            np.subtract(pv, ta, out=pv, casting="same_kind")
        return lamb, 16, "m, v; r = m^ / (sqrt(v^) + eps) + wd p; " \
            "p -= lr |p| / |r| r, ufuncs out= and dot"
    if op == "adabound":
        fl, gm = float(p.get("final_lr", 0.1)), float(p.get("gamma", 1e-3))
        ss = lr * math.sqrt(bc2) / bc1
        lo, hi = fl * (1 - 1 / (gm * t + 1)), fl * (1 + 1 / (gm * t))

        def adabound():
            grad_wd()
            moments()
            np.sqrt(v, out=tb)
            np.add(tb, S(eps), out=tb)
            np.divide(S(ss), tb, out=tb)
            np.clip(tb, S(lo), S(hi), out=tb)
            np.multiply(tb, m, out=tb)
            np.subtract(pv, tb, out=pv, casting="same_kind")
        return adabound, 13, "m, v; p -= clip(step / (sqrt(v) + eps), " \
            "lower, upper) m, ufuncs out="
    return None


def autograd_twin(t, mod, fwd, ins, g, what, n_calls):
    """PyTorch's backward through autograd: the forward fwd(*leaves) built
    once outside timing, each call torch.autograd.grad of that graph
    (retain_graph) with the upstream gradient g; the first gradient
    returned (the check's output)."""
    leaves = [a.detach().requires_grad_() for a in ins]
    with mod.enable_grad():
        y = fwd(*leaves)
    return (lambda: mod.autograd.grad(y, leaves, g, retain_graph=True)[0]), \
        n_calls, f"autograd.grad of {what} (graph built once, backward " \
        "timed)"


def backward_twin(op, t, mod, np, out, x, o, p):
    """The backward ops: PyTorch through autograd (autograd_twin) or the
    aten kernel autograd runs; NumPy's closed forms (no out= form where
    the op has several outputs: the alloc form only)."""
    if t:
        import torch.nn.functional as F
    if not t and op in ("gelu_backward", "conv2d_backward"):
        return "NumPy has no erf (gelu's Phi)" if op[0] == "g" else \
            "NumPy has no convolution"
    if out and op not in ("relu_backward", "sigmoid_backward",
                          "tanh_backward"):
        return f"no out= form of '{op}' in compare_numpy.py" + (
            " (autograd and the aten kernels allocate their results)"
            if t else "")
    if op in ("relu_backward", "sigmoid_backward", "tanh_backward",
              "gelu_backward"):
        # PyTorch's alloc form is impl_for's (the aten kernels autograd
        # runs); here its out= form, the same kernels into o[0]
        g, a = x[0], x[1]
        fn = op[:-len("_backward")]
        if t:
            aten = mod.ops.aten
            if fn == "relu":
                return (lambda: aten.threshold_backward(
                    g, a, 0, grad_input=o[0])), 1, \
                    "threshold_backward(out=)"
            # y = fn(x) into a scratch tensor inside the timed call:
            # tbench's op takes x (compare_numpy.py's alloc form)
            f, y = getattr(mod, fn), mod.empty_like(a)
            k = getattr(aten, f"{fn}_backward")

            def tw():
                return k(g, f(a, out=y), grad_input=o[0])
            return tw, 2, f"{fn}_backward(g, {fn}(x, out=), out=), " \
                "both timed"
        if fn == "relu":
            if out:
                mb = np.empty(a.shape, bool)
                return (lambda: np.multiply(g, np.greater(a, 0, out=mb),
                                            out=o[0])), 2, \
                    "multiply(g, greater(x, 0, out=), out=)"
            return (lambda: g * (a > 0)), 2, "g * (x > 0)"
        if fn == "sigmoid":
            if out:
                tb = np.empty(a.shape, a.dtype)

                def sb():
                    np.negative(a, out=tb)
                    np.exp(tb, out=tb)
                    np.add(tb, 1, out=tb)
                    np.reciprocal(tb, out=tb)       # s
                    np.subtract(1, tb, out=o[0])
                    np.multiply(o[0], tb, out=o[0])
                    np.multiply(o[0], g, out=o[0])
                return sb, 7, "g * s * (1 - s), s = 1 / (1 + exp(-x)), out="

            def sba():
                s = 1 / (1 + np.exp(-a))
                return g * s * (1 - s)
            return sba, 7, "g * s * (1 - s), s = 1 / (1 + exp(-x))"
        if out:
            def tbw():
                np.tanh(a, out=o[0])
                np.multiply(o[0], o[0], out=o[0])
                np.subtract(1, o[0], out=o[0])
                np.multiply(o[0], g, out=o[0])
            return tbw, 4, "g * (1 - tanh(x)^2), out="
        return (lambda: g * (1 - np.tanh(a) ** 2)), 4, "g * (1 - tanh(x)^2)"
    if op == "log_softmax_backward":
        g, y = x[0], x[1]
        ax = int(p.get("axis", -1))
        if t:
            aten = mod.ops.aten
            return (lambda: aten._log_softmax_backward_data(g, y, ax,
                                                            y.dtype)), 1, \
                "_log_softmax_backward_data (what log_softmax's autograd " \
                "runs, on the given y)"
        return (lambda: g - np.exp(y) * g.sum(ax, keepdims=True)), 4, \
            "g - exp(y) * sum(g)"
    if op in ("sum_backward", "mean_backward"):
        g, a = x[0], x[1]
        ax = p.get("axis")
        keep = bool(p.get("keepdim", False))
        nd = len(a.shape)
        axes = tuple(range(nd)) if ax is None else \
            tuple(int(v) % nd for v in as_list(ax))
        ks = tuple(1 if d in axes else a.shape[d] for d in range(nd))
        mean = op == "mean_backward"
        if t:
            f = (lambda v: v.mean(axes, keep)) if mean else \
                (lambda v: v.sum(axes, keep))
            gg = g.reshape([s for d, s in enumerate(ks) if keep or
                            d not in axes])
            tw = autograd_twin(t, mod, f, [a], gg,
                               f"x.{op[:-9]}(dims, keepdim)", 1)
            if mean:
                return tw
            fn = tw[0]
            # sum's autograd returns a broadcast view (no write):
            # materialized, as tbench writes dx
            return (lambda: fn().contiguous()), 2, \
                tw[2] + ", .contiguous() (the gradient is a broadcast view)"
        n = 1
        for d in axes:
            n *= a.shape[d]
        gk = g.reshape(ks)
        if mean:
            return (lambda: np.broadcast_to(gk / n, a.shape).copy()), 2, \
                "broadcast_to(g / n).copy()"
        return (lambda: np.broadcast_to(gk, a.shape).copy()), 1, \
            "broadcast_to(g).copy()"
    if op in ("add_backward", "sub_backward", "mul_backward",
              "div_backward"):
        g, a, b = x
        name = op[:-9]
        if t:
            f = {"add": mod.add, "sub": mod.sub, "mul": mod.mul,
                 "div": mod.div}[name]
            return autograd_twin(t, mod, f, [a, b], g, f"{name}(a, b)", 2)
        rax = tuple(range(len(g.shape) - len(b.shape)))
        red = (lambda v: v.sum(rax)) if rax else (lambda v: v)  # noqa

        def bw():
            if name == "add":
                return g.copy(), red(g)
            if name == "sub":
                return g.copy(), red(-g)
            if name == "mul":
                return g * b, red(g * a)
            return g / b, red(-g * a / (b * b))
        return (lambda: bw()[0]), 2 if name in ("add", "sub") else 3, \
            {"add": "g, sum(g)", "sub": "g, sum(-g)",
             "mul": "g * b, sum(g * a)",
             "div": "g / b, sum(-g * a / b^2)"}[name] + \
            " over the broadcast dims"
    if op == "matmul_backward":
        g, a, b = x
        if t:
            return autograd_twin(t, mod, mod.matmul, [a, b], g,
                                 "matmul(a, b)", 2)

        def mmb():
            da = g @ b.swapaxes(-1, -2)
            a.swapaxes(-1, -2) @ g
            return da
        return mmb, 2, "g @ b^T, a^T @ g"
    if op == "linear_backward":
        g, a, w, y = x
        if t:
            aten = mod.ops.aten

            def lb():
                gz = aten.threshold_backward(g, y, 0)
                dx = gz @ w.t()
                a.t() @ gz
                gz.sum(0)
                return dx
            return lb, 4, "threshold_backward, mm, mm, sum (the kernels " \
                "autograd runs for relu(x @ W + b))"

        def lbn():
            gz = g * (y > 0)
            dx = gz @ w.T
            a.T @ gz
            gz.sum(0)
            return dx
        return lbn, 5, "gz = g * (y > 0), gz @ W^T, x^T @ gz, sum(gz)"
    if op in ("nll_loss", "nll_loss_backward"):
        back = op == "nll_loss_backward"
        lp, tg = (x[1], x[2]) if back else (x[0], x[1])
        n = lp.shape[0]
        if t:
            tt = tg.long()
            if not back:
                return (lambda: F.nll_loss(lp, tt)), 1, "nll_loss"
            gs = x[0].reshape(())
            tw = mod.tensor(float(n), dtype=lp.dtype)
            aten = mod.ops.aten
            return (lambda: aten.nll_loss_backward(gs, lp, tt, None, 1,
                                                   -100, tw)), 1, \
                "nll_loss_backward (what nll_loss's autograd runs)"
        ti = tg.astype(np.intp)
        rows = np.arange(n)
        if not back:
            return (lambda: -lp[rows, ti].mean()), 2, "-mean(take)"

        def nb():
            d = np.zeros(lp.shape, lp.dtype)
            d[rows, ti] = -x[0][0] / n
            return d
        return nb, 2, "zeros, -g / N at the targets"
    if op in ("max_pool2d_backward", "avg_pool2d_backward"):
        g, a = x
        k = int(p.get("kernel", 2))
        s = int(p.get("stride") or k)
        pd = int(p.get("padding", 0))
        mx = op == "max_pool2d_backward"
        if t:
            f = F.max_pool2d if mx else F.avg_pool2d
            return autograd_twin(t, mod, lambda v: f(v, k, s, pd), [a], g,
                                 f"{op[:-9]}(kernel={k}, stride={s}, "
                                 f"padding={pd})", 1)
        return numpy_pool_backward(np, mx, g, a, k, s, pd)
    if op == "conv2d_backward":
        g, a, w = x
        s, pd, dl = (int(p.get(k, d)) for k, d in
                     (("stride", 1), ("padding", 0), ("dilation", 1)))
        aten = mod.ops.aten
        return (lambda: aten.convolution_backward(
            g, a, w, [w.shape[0]], [s, s], [pd, pd], [dl, dl], False,
            [0, 0], 1, [True, True, True])[0]), 1, \
            "convolution_backward, dx dw db (what conv2d's autograd runs)"
    return None


def numpy_pool_backward(np, mx, g, a, k, s, pd):
    """max: each window's first largest element (argmax) gets g, by
    add.at; avg: g / k^2 added over each of the k^2 window offsets."""
    from numpy.lib.stride_tricks import sliding_window_view
    N, C, H, W = a.shape
    OH, OW = g.shape[2], g.shape[3]
    if mx:
        nn, cc, oh, ow = np.meshgrid(np.arange(N), np.arange(C),
                                     np.arange(OH), np.arange(OW),
                                     indexing="ij")

        def mb():
            xp = np.pad(a, ((0, 0), (0, 0), (pd, pd), (pd, pd)),
                        constant_values=-np.inf) if pd else a
            win = sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::s, ::s]
            idx = win.reshape(N, C, OH, OW, k * k).argmax(-1)
            ki, kj = np.divmod(idx, k)
            dx = np.zeros((N, C, H + 2 * pd, W + 2 * pd), a.dtype)
            np.add.at(dx, (nn, cc, oh * s + ki, ow * s + kj), g)
            return dx[:, :, pd:pd + H, pd:pd + W]
        return mb, 5, "argmax of sliding_window_view, add.at"
    def ab():
        gs = g / (k * k)
        dx = np.zeros((N, C, H + 2 * pd, W + 2 * pd), a.dtype)
        for i in range(k):
            for j in range(k):
                dx[:, :, i:i + s * OH:s, j:j + s * OW:s] += gs
        return dx[:, :, pd:pd + H, pd:pd + W]
    return ab, 3, "g / k^2 added at each of the k^2 window offsets"


def np_linear(np, out, a, w, b, o):
    """relu(x @ W + b) in NumPy, which has no fused form: linear's and
    linear_unfused's twin alike."""
    if out:
        def ln():
            np.matmul(a, w, out=o[0])
            np.add(o[0], b, out=o[0])
            np.maximum(o[0], 0, out=o[0])
        return ln, 3, "matmul, add, maximum (out=)"
    return (lambda: np.maximum(a @ w + b, 0)), 3, "maximum(x @ W + b, 0)"


def unfused_twin(op, t, mod, np, out, x, o, p):
    """The unfused compositions, step by step as tbench's op runs them."""
    if op == "linear_unfused":
        # each step writes a tensor of its own, as tbench's steps do
        # (the out= form's t1, t2 made once); add_ and clamp_min_ in
        # place are fewer tensors and linear's peer form, not this op's
        a, w, b = x
        if not out:
            if t:
                return (lambda: mod.relu(a @ w + b)), 3, "relu(x @ W + b)"
            return np_linear(np, out, a, w, b, o)
        t1 = mod.empty_like(o[0]) if t else np.empty_like(o[0])
        t2 = mod.empty_like(o[0]) if t else np.empty_like(o[0])
        if t:
            def lo():
                mod.matmul(a, w, out=t1)
                mod.add(t1, b, out=t2)
                mod.clamp_min(t2, 0, out=o[0])
            return lo, 3, "matmul(out=t1), add(out=t2), clamp_min(out=)"

        def ln():
            np.matmul(a, w, out=t1)
            np.add(t1, b, out=t2)
            np.maximum(t2, 0, out=o[0])
        return ln, 3, "matmul(out=t1), add(out=t2), maximum(out=)"
    if op == "log_softmax_unfused":
        ax = int(p.get("axis", -1))
        a = x[0]
        if t:
            if out:
                return "no out= form of the six-step composition in PyTorch"
            return (lambda: (lambda s: s - s.exp().sum(ax, True).log())(
                a - a.amax(ax, True))), 6, \
                "amax, sub, exp, sum, log, sub (the six kernels)"
        return None
    if op == "cross_entropy_unfused":
        if out:
            return "no out= form of cross_entropy in compare_numpy.py"
        a, tg = x
        if t:
            import torch.nn.functional as F
            tt = tg.long()
            return (lambda: F.nll_loss(mod.log_softmax(a, 1), tt)), 2, \
                "nll_loss(log_softmax(x, 1))"
        ti = tg.astype(np.intp)
        rows = np.arange(a.shape[0])

        def ce():
            s = a - a.max(1, keepdims=True)
            lp = s - np.log(np.exp(s).sum(1, keepdims=True))
            return -lp[rows, ti].mean()
        return ce, 8, "log_softmax's six steps, then -mean(take)"
    return None


def linalg_twin(op, t, mod, np, out, x, o):
    """svd (thin), qr (reduced), eigh (lower triangle): numpy.linalg and
    torch.linalg, every output returned (check_factorization)."""
    a = x[0]
    if t:
        L = mod.linalg
        call = {"svd": lambda **k: L.svd(a, full_matrices=False, **k),
                "qr": lambda **k: L.qr(a, mode="reduced", **k),
                "eigh": lambda **k: L.eigh(a, UPLO="L", **k)}[op]
        if out:
            return (lambda: call(out=tuple(o))), 1, f"linalg.{op}(out=)"
        return (lambda: call()), 1, f"linalg.{op}"
    if out:
        return "numpy.linalg has no out= form"
    L = np.linalg
    call = {"svd": lambda: L.svd(a, full_matrices=False),
            "qr": lambda: L.qr(a, mode="reduced"),
            "eigh": lambda: L.eigh(a, UPLO="L")}[op]
    return call, 1, f"linalg.{op}"


def check_factorization(np, op, a, got, ref, rtol, atol):
    """svd, qr, eigh: as tbench checks them (src/harness/check.c,
    tb_check_factorization), since their outputs are unique only up to
    signs and bases: the values (S, w) against the reference's, the
    reconstruction (A - U diag(S) Vt, A - Q R, A V - V diag(w)), the
    orthonormality of U, Vt, Q, V, and R upper triangular; entries of
    the first two within atol sqrt(n) + rtol n max|A|, of the third
    within atol sqrt(n) + rtol, R's lower entries exactly 0."""
    A = np.asarray(a, dtype=np.float64)
    m, n = A.shape
    k, big = min(m, n), max(m, n)
    if op == "eigh":
        A = np.tril(A) + np.tril(A, -1).T
    G = [np.asarray(v, dtype=np.float64) for v in got]
    at = atol * math.sqrt(big)
    b01 = at + rtol * big * float(np.abs(A).max() if A.size else 0)
    parts = []
    if op == "svd":
        parts += [(0, G[1] - np.asarray(ref[1]).reshape(-1), b01),
                  (1, A - (G[0] * G[1]) @ G[2], b01),
                  (2, G[0].T @ G[0] - np.eye(k), at + rtol),
                  (2, G[2] @ G[2].T - np.eye(k), at + rtol)]
    elif op == "qr":
        parts += [(1, A - G[0] @ G[1], b01),
                  (2, G[0].T @ G[0] - np.eye(k), at + rtol),
                  (3, np.tril(G[1][:k, :], -1), 0.0)]
    else:
        parts += [(0, G[0] - np.asarray(ref[0]).reshape(-1), b01),
                  (1, A @ G[1] - G[1] * G[0], b01),
                  (2, G[1].T @ G[1] - np.eye(n), at + rtol)]
    nbad, mabs, msg = 0, 0.0, None
    for which, e, bound in parts:
        e = np.abs(np.asarray(e, dtype=np.float64)).reshape(-1)
        bad = ~(e <= bound)
        if e.size:
            mabs = max(mabs, float(np.nanmax(e)))
        if bad.any() and msg is None:
            i = int(np.argmax(bad))
            msg = f"{int(bad.sum())} element(s) out of tolerance " \
                f"(identities check); first at identity {which} index " \
                f"{i}: error {e[i]:.9g}, bound {bound:.9g}"
        nbad += int(bad.sum())
    return {"passed": nbad == 0, "max_abs_err": mabs,
            "max_rel_err": mabs / (b01 - at) if b01 > at else 0.0,
            "rtol": rtol, "atol": at, "n_bad": nbad,
            "method": "identities"}, msg


def check_random(np, op, got, p, dt):
    """rand_uniform, rand_normal: the library's generator is not tbench's
    stream (ops/rand.h), so the values cannot match the reference; the
    output is held to the distribution instead: uniform: every value in
    [low, high] and the mean within 6 standard errors of (low + high) /
    2; normal: the mean within 6 standard errors of mean and the
    standard deviation within 6 of its standard errors (sqrt(2 / n)
    relative) of std; no NaN or infinity."""
    g = np.asarray(got, dtype=np.float64).reshape(-1)
    n = g.size
    u = op == "rand_uniform"
    a0 = float(p.get("low" if u else "mean", 0))
    a1 = float(p.get("high" if u else "std", 1))
    mu = (a0 + a1) / 2 if u else a0
    sd = (a1 - a0) / math.sqrt(12) if u else a1
    msg = None
    if not np.isfinite(g).all():
        msg = "the output holds NaN or infinity"
    elif u and (g.min() < min(a0, a1) or g.max() > max(a0, a1)):
        msg = f"values outside [low, high]: {g.min():.9g} .. {g.max():.9g}"
    elif n and abs(g.mean() - mu) > 6 * sd / math.sqrt(n):
        msg = f"mean {g.mean():.9g}, expected {mu:.9g} within " \
            f"{6 * sd / math.sqrt(n):.3g}"
    elif not u and n > 1 and abs(g.std() - sd) > 6 * sd * math.sqrt(
            2.0 / n) + 1e-3 * sd * (dt in ("bf16", "f16")):
        msg = f"standard deviation {g.std():.9g}, expected {sd:.9g}"
    return {"passed": msg is None, "max_abs_err": 0.0, "max_rel_err": 0.0,
            "rtol": 0.0, "atol": 0.0, "n_bad": 0 if msg is None else 1,
            "method": "full"}, msg       # every element, as dropout's


FAMILIES = [
    (scalar_twin, ("add_scalar", "sub_scalar", "mul_scalar", "div_scalar")),
    (lambda op, t, mod, np, out, x, o, p: inplace_twin(op, t, mod, np, out,
                                                       x),
     ("add_", "sub_", "mul_", "div_", "relu_")),
    (layout_twin, ("hardswish", "permute", "copy", "causal_mask", "zeros",
                   "ones", "arange", "rand_uniform", "rand_normal")),
    (var_twin, ("var",)),
    (more_twin, ("leaky_relu", "argmax", "linear", "full", "gelu",
                 "gelu_tanh", "silu")),
    (pool_twin, ("conv2d", "conv2d_nobias", "max_pool2d", "avg_pool2d")),
    (lambda op, t, mod, np, out, x, o, p: optim_twin(op, t, mod, np, out,
                                                     x, p),
     ("sgd", "sgd_momentum", "adam", "adamw", "adagrad", "adamax", "nadam",
      "radam", "lamb", "adabound")),
    (lambda op, t, mod, np, out, x, o, p: linalg_twin(op, t, mod, np, out,
                                                      x, o),
     ("svd", "qr", "eigh")),
    (unfused_twin, ("linear_unfused", "log_softmax_unfused",
                    "cross_entropy_unfused")),
    (backward_twin, ("relu_backward", "sigmoid_backward", "tanh_backward",
                     "gelu_backward", "log_softmax_backward", "sum_backward",
                     "mean_backward", "add_backward", "sub_backward",
                     "mul_backward", "div_backward", "matmul_backward",
                     "linear_backward", "nll_loss", "nll_loss_backward",
                     "max_pool2d_backward", "avg_pool2d_backward",
                     "conv2d_backward")),
]
