/* Reference kernels of the optimizer steps.  See ref.h for the contract.
 *
 * One step of a PyTorch optimizer on a parameter tensor p with gradient g
 * and the given state (a run in progress: the state is never initialised
 * here), step number t = the `step` parameter.  Inputs p, g, state...;
 * outputs the new p and state, in separate f64 tensors (the reference
 * does not alias; the harness makes backends write in place).
 *
 * Formulas: PyTorch's single-tensor code paths (foreach=False,
 * maximize=False, amsgrad=False, capturable=False), read in
 * torch/optim/{sgd,adam,adamw,adagrad,adamax,nadam,radam}.py of PyTorch
 * 1.13 and checked against 2.x: they agree except NAdam, where 2.x (which
 * we follow) uses mu_product_next = mu_product * mu_{t+1} and 1.13
 * mu_product * mu_t * mu_{t+1}.  Every operation is done in double in the
 * order PyTorch does it, with the scalars (bias corrections, step sizes,
 * the NAdam mu product) computed in double as Python does, so the result
 * matches a float64 torch.optim step to a few ulps (test_optim holds it to
 * 1e-12 against tests/data/optim_vectors.h).
 *
 * PyTorch has no LAMB or AdaBound: lamb follows You et al. 2019
 * ("Large Batch Optimization for Deep Learning: Training BERT in 76
 * minutes"), Algorithm 2, on one tensor (trust ratio |p| / |r|, phi the
 * identity, 1 when a norm is 0); adabound follows Luo et al. 2019
 * ("Adaptive Gradient Methods with Dynamic Bound of Learning Rate"),
 * Algorithm 1, with the bound schedule of the authors' code.  Their
 * oracles are NumPy float64 implementations of those equations.  lbfgs is
 * torch.optim.LBFGS's two-loop step without line search (tb_ref_lbfgs).
 *
 * A weight decay of 0 is skipped, as PyTorch does (`if weight_decay !=
 * 0`), so an infinite p does not turn the state into NaN through 0*inf. */
#include "ref.h"

#include <math.h>

#include "../base/error.h"
#include "optim_math.h"

/* Parameter idx of op id: p's value if set, else the schema default. */
static int param(const tb_params *p, tb_op_id id, int idx, double *v)
{
    const tb_op *op = tb_op_get(id);
    if (!op || idx >= op->n_params)
        return TB_EPARAM;
    *v = p && tb_params_has(p, idx) ? p->v[idx] : op->params[idx].def;
    return isfinite(*v) ? 0 : TB_EPARAM;
}

/* Element at flat row-major index i of a host tensor of any strides. */
static double load(const tb_tensor *t, int64_t i)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->shape[d]) * t->strides[d];
        i /= t->shape[d];
    }
    return tb_tensor_load(t, off);
}

/* Every input a host f32/f64 tensor of in[0]'s shape with data; every
 * output a contiguous f64 tensor of that shape.  Returns the element
 * count in *n. */
static int check(const tb_op *op, const tb_tensor *in, const tb_tensor *out,
                 int64_t *n)
{
    const tb_tensor *a = &in[0];
    if (a->ndim < 0 || a->ndim > TB_MAX_DIMS)
        return TB_ESHAPE;
    int64_t count = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] < 0)
            return TB_ESHAPE;
        count *= a->shape[d];
    }
    for (int i = 0; i < op->n_in; i++) {
        if ((unsigned)in[i].dtype >= TB_DTYPE_COUNT)
            return TB_EDTYPE;
        if (in[i].ndim != a->ndim)
            return TB_ESHAPE;
        for (int d = 0; d < a->ndim; d++)
            if (in[i].shape[d] != a->shape[d])
                return TB_ESHAPE;
        if (count > 0 && !in[i].data)
            return TB_EINVAL;
    }
    for (int o = 0; o < op->n_out; o++) {
        const tb_tensor *t = &out[o];
        if (t->dtype != TB_F64)
            return TB_EDTYPE;
        if (t->ndim != a->ndim)
            return TB_ESHAPE;
        int64_t stride = 1;
        for (int d = a->ndim - 1; d >= 0; d--) {
            if (t->shape[d] != a->shape[d])
                return TB_ESHAPE;
            if (t->shape[d] != 1 && t->strides[d] != stride)
                return TB_EINVAL;
            stride *= t->shape[d];
        }
        if (count > 0 && !t->data)
            return TB_EINVAL;
    }
    *n = count;
    return 0;
}

/* Reads the op's parameters (schema order) into v[]. */
static int params_all(const tb_op *op, const tb_params *p, double *v)
{
    for (int i = 0; i < op->n_params; i++) {
        int rc = param(p, op->id, i, &v[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* The step number t >= 1, an integer (the schema allows 1..1e9). */
static int step_of(const tb_op *op, const double *v, double *t)
{
    *t = v[op->n_params - 1];
    return *t >= 1 && *t == floor(*t) ? 0 : TB_EPARAM;
}

/* lamb and adabound (the Adam family's parameters, schema order of
 * op.c's rows): outputs p, m, v into po, s1o, s2o. */
static int lamb_ref(const tb_op *op, const double *v, int64_t n,
                    const tb_tensor *in, double *po, double *s1o,
                    double *s2o)
{
    int rc;
    /* You et al. 2019, Algorithm 2 on one tensor: r = m_hat /
     * (sqrt(v_hat) + eps) + wd p, p -= lr |p| / |r| r. */
    double lr = v[0], b1 = v[1], b2 = v[2], eps = v[3], wd = v[4], t;
    if ((rc = step_of(op, v, &t)))
        return rc;
    double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
    double pp = 0, rr = 0;
    for (int64_t i = 0; i < n; i++) { /* moments, r kept in po */
        double x = load(&in[0], i), g = load(&in[1], i);
        double m = load(&in[2], i), s = load(&in[3], i);
        m = b1 * m + (1 - b1) * g;
        s = b2 * s + (1 - b2) * g * g;
        double r = (m / bc1) / (sqrt(s / bc2) + eps);
        if (wd != 0)
            r = r + wd * x;
        pp += x * x;
        rr += r * r;
        po[i] = r;
        s1o[i] = m;
        s2o[i] = s;
    }
    double ratio = pp > 0 && rr > 0 ? sqrt(pp) / sqrt(rr) : 1;
    for (int64_t i = 0; i < n; i++)
        po[i] = load(&in[0], i) - lr * ratio * po[i];
    return 0;
}

static int adabound_ref(const tb_op *op, const double *v, int64_t n,
                        const tb_tensor *in, double *po, double *s1o,
                        double *s2o)
{
    int rc;
    /* Luo et al. 2019, Algorithm 1, with the bound schedule of the
     * authors' code (final_lr not rescaled: no lr schedule). */
    double lr = v[0], b1 = v[1], b2 = v[2], flr = v[3], gam = v[4];
    double eps = v[5], wd = v[6], t;
    if ((rc = step_of(op, v, &t)))
        return rc;
    double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
    double step = lr * sqrt(bc2) / bc1;
    double lo = flr * (1 - 1 / (gam * t + 1));
    double hi = flr * (1 + 1 / (gam * t));
    for (int64_t i = 0; i < n; i++) {
        double x = load(&in[0], i), g = load(&in[1], i);
        double m = load(&in[2], i), s = load(&in[3], i);
        if (wd != 0)
            g = g + wd * x;
        m = b1 * m + (1 - b1) * g;
        s = b2 * s + (1 - b2) * g * g;
        double a = step / (sqrt(s) + eps);
        a = a < lo ? lo : (a > hi ? hi : a); /* NaN stays NaN */
        po[i] = x - a * m;
        s1o[i] = m;
        s2o[i] = s;
    }
    return 0;
}

static int optim_ref(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    const tb_op *op = tb_op_get(id);
    double v[TB_MAX_PARAMS] = {0};
    int64_t n;
    int rc;
    if (!op || !in || !out)
        return TB_EINVAL;
    if ((rc = check(op, in, out, &n)) || (rc = params_all(op, p, v)))
        return rc;
    double *po = out[0].data;
    double *s1o = op->n_out > 1 ? out[1].data : NULL;
    double *s2o = op->n_out > 2 ? out[2].data : NULL;

    switch (id) {
    case TB_OP_sgd: {
        double lr = v[0], wd = v[1];
        for (int64_t i = 0; i < n; i++) {
            double x = load(&in[0], i), g = load(&in[1], i);
            if (wd != 0)
                g = g + wd * x;
            po[i] = x - lr * g;
        }
        return 0;
    }
    case TB_OP_sgd_momentum: {
        double lr = v[0], mom = v[1], damp = v[2], wd = v[3];
        bool nesterov = v[4] != 0;
        for (int64_t i = 0; i < n; i++) {
            double x = load(&in[0], i), g = load(&in[1], i);
            double buf = load(&in[2], i);
            if (wd != 0)
                g = g + wd * x;
            /* momentum 0: PyTorch keeps no buffer and steps by g. */
            if (mom != 0) {
                buf = buf * mom + (1 - damp) * g;
                g = nesterov ? g + mom * buf : buf;
            }
            po[i] = x - lr * g;
            s1o[i] = buf;
        }
        return 0;
    }
    case TB_OP_adam:
    case TB_OP_adamw:
    case TB_OP_radam:
    case TB_OP_nadam: {
        double lr = v[0], b1 = v[1], b2 = v[2], eps = v[3], wd = v[4], t;
        if ((rc = step_of(op, v, &t)))
            return rc;
        double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
        /* radam */
        double rho_inf = 2 / (1 - b2) - 1;
        double rho_t = rho_inf - 2 * t * pow(b2, t) / bc2;
        double rect = 0;
        if (id == TB_OP_radam && rho_t > 5)
            rect = sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                        ((rho_inf - 4) * (rho_inf - 2) * rho_t));
        /* nadam */
        double c1 = 0, c2 = 0;
        if (id == TB_OP_nadam) {
            double md = v[5];
            double mu = tb_nadam_mu(b1, md, t);
            double mu_next = tb_nadam_mu(b1, md, t + 1);
            double prod = tb_nadam_mu_product(b1, md, t);
            c1 = lr * (1 - mu) / (1 - prod);
            c2 = lr * mu_next / (1 - prod * mu_next);
        }
        for (int64_t i = 0; i < n; i++) {
            double x = load(&in[0], i), g = load(&in[1], i);
            double m = load(&in[2], i), s = load(&in[3], i);
            if (id == TB_OP_adamw)
                x = x * (1 - lr * wd);
            else if (wd != 0)
                g = g + wd * x;
            m = m * b1 + (1 - b1) * g;
            s = s * b2 + (1 - b2) * g * g;
            switch (id) {
            case TB_OP_nadam: {
                double denom = sqrt(s / bc2) + eps;
                x = x - c1 * (g / denom);
                x = x - c2 * (m / denom);
                break;
            }
            case TB_OP_radam:
                if (rho_t > 5)
                    x = x - m / bc1 * lr * (sqrt(bc2) / (sqrt(s) + eps)) *
                                rect;
                else
                    x = x - m / bc1 * lr;
                break;
            default: /* adam, adamw */
                x = x - lr / bc1 * (m / (sqrt(s) / sqrt(bc2) + eps));
                break;
            }
            po[i] = x;
            s1o[i] = m;
            s2o[i] = s;
        }
        return 0;
    }
    case TB_OP_lamb:
        return lamb_ref(op, v, n, in, po, s1o, s2o);
    case TB_OP_adabound:
        return adabound_ref(op, v, n, in, po, s1o, s2o);
    case TB_OP_adagrad: {
        double lr = v[0], lr_decay = v[1], wd = v[2], eps = v[3], t;
        if ((rc = step_of(op, v, &t)))
            return rc;
        double clr = lr / (1 + (t - 1) * lr_decay);
        for (int64_t i = 0; i < n; i++) {
            double x = load(&in[0], i), g = load(&in[1], i);
            double sum = load(&in[2], i);
            if (wd != 0)
                g = g + wd * x;
            sum = sum + g * g;
            po[i] = x - clr * (g / (sqrt(sum) + eps));
            s1o[i] = sum;
        }
        return 0;
    }
    case TB_OP_adamax: {
        double lr = v[0], b1 = v[1], b2 = v[2], eps = v[3], wd = v[4], t;
        if ((rc = step_of(op, v, &t)))
            return rc;
        double clr = lr / (1 - pow(b1, t));
        for (int64_t i = 0; i < n; i++) {
            double x = load(&in[0], i), g = load(&in[1], i);
            double m = load(&in[2], i), u = load(&in[3], i);
            if (wd != 0)
                g = g + wd * x;
            m = m * b1 + (1 - b1) * g;
            /* torch.amax of (b2 u, |g| + eps): NaN propagates */
            double a = u * b2, b = fabs(g) + eps;
            u = isnan(a) || isnan(b) ? a + b : (a >= b ? a : b);
            po[i] = x - clr * (m / u);
            s1o[i] = m;
            s2o[i] = u;
        }
        return 0;
    }
    default:
        return TB_EUNSUPPORTED;
    }
}

/* lbfgs: inputs p, g (n elements), S, Y [m, n]; outputs p + lr d and d,
 * with d = -H g by the two-loop recursion (Nocedal & Wright, Numerical
 * Optimization, 2nd ed., Algorithm 7.4) over the pairs with s.y >
 * TB_LBFGS_MIN_YS, oldest first, H0 = gamma I with gamma = s.y / y.y of
 * the newest such pair (1 if none), in torch.optim.LBFGS's order. */
int tb_ref_lbfgs(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    const tb_op *op = tb_op_get(TB_OP_lbfgs);
    double lr;
    int rc;
    if (!in || !out)
        return TB_EINVAL;
    if ((rc = param(p, TB_OP_lbfgs, 0, &lr)))
        return rc;
    tb_shape ish[4], osh[2];
    for (int i = 0; i < 4; i++) {
        if ((unsigned)in[i].dtype >= TB_DTYPE_COUNT)
            return TB_EDTYPE;
        if (in[i].ndim < 1 || in[i].ndim > TB_MAX_DIMS)
            return TB_ESHAPE;
        ish[i] = tb_tensor_shape(&in[i]);
    }
    if ((rc = tb_op_infer(op, ish, 4, p, osh, NULL, 0)))
        return rc;
    int64_t n = in[2].shape[1], m = in[2].shape[0];
    for (int o = 0; o < 2; o++) {
        tb_shape got = tb_tensor_shape(&out[o]);
        if (out[o].dtype != TB_F64)
            return TB_EDTYPE;
        if (!tb_shape_equal(&got, &osh[o]) || !tb_tensor_is_contiguous(&out[o]))
            return TB_ESHAPE;
        if (!out[o].data)
            return TB_EINVAL;
    }
    for (int i = 0; i < 4; i++)
        if (!in[i].data)
            return TB_EINVAL;
    double *q = out[1].data, *po = out[0].data;
    double rho[TB_LBFGS_MAX_HIST], al[TB_LBFGS_MAX_HIST], gamma = 1;
    for (int64_t k = 0; k < m; k++) { /* rho, gamma of the newest pair */
        double ys = 0, yy = 0;
        for (int64_t i = 0; i < n; i++) {
            double s = load(&in[2], k * n + i), y = load(&in[3], k * n + i);
            ys += y * s;
            yy += y * y;
        }
        rho[k] = ys > TB_LBFGS_MIN_YS ? 1 / ys : 0;
        if (rho[k] != 0)
            gamma = ys / yy;
    }
    for (int64_t i = 0; i < n; i++)
        q[i] = -load(&in[1], i);
    for (int64_t k = m - 1; k >= 0; k--) {
        if (rho[k] == 0)
            continue;
        double sq = 0;
        for (int64_t i = 0; i < n; i++)
            sq += load(&in[2], k * n + i) * q[i];
        al[k] = sq * rho[k];
        for (int64_t i = 0; i < n; i++)
            q[i] -= al[k] * load(&in[3], k * n + i);
    }
    for (int64_t i = 0; i < n; i++)
        q[i] *= gamma;
    for (int64_t k = 0; k < m; k++) {
        if (rho[k] == 0)
            continue;
        double yr = 0;
        for (int64_t i = 0; i < n; i++)
            yr += load(&in[3], k * n + i) * q[i];
        double c = al[k] - yr * rho[k];
        for (int64_t i = 0; i < n; i++)
            q[i] += c * load(&in[2], k * n + i);
    }
    for (int64_t i = 0; i < n; i++)
        po[i] = load(&in[0], i) + lr * q[i];
    return 0;
}

#define OPTIM_REF(name)                                                   \
    int tb_ref_##name(const tb_tensor *in, tb_tensor *out,                \
                      const tb_params *p)                                 \
    {                                                                     \
        return optim_ref(TB_OP_##name, in, out, p);                       \
    }
OPTIM_REF(sgd)
OPTIM_REF(sgd_momentum)
OPTIM_REF(adam)
OPTIM_REF(adamw)
OPTIM_REF(adagrad)
OPTIM_REF(adamax)
OPTIM_REF(nadam)
OPTIM_REF(radam)
OPTIM_REF(lamb)
OPTIM_REF(adabound)
