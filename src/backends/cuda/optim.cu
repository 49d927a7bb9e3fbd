/* Fused optimizer steps of the CUDA module: sgd, sgd_momentum, adam,
 * adamw, adagrad, adamax, nadam and radam, f32 and f64.
 *
 * One grid-stride pass per call: thread i reads p, g and the state of
 * element i once and writes the new p and state once, so the outputs may
 * be the inputs they update (the harness's normal case, op.alias) or
 * separate buffers; any other overlap is refused.  Semantics are
 * PyTorch's single-tensor steps as in src/ops/ref_optim.c; as in the cpu
 * backend the per-call scalars (bias corrections, step sizes, NAdam's mu
 * product, RAdam's rectification) are computed once in double on the
 * host and rounded to the element type, and the per-element arithmetic
 * is in the element type (nvcc contracts to FMAs), inside TOL_OPT. */
#include "kernels_ext.cuh"

#include <cstring>

extern "C" {
#include "../../ops/optim_math.h"
}

/* The per-call scalars; their meaning depends on the op (see run). */
template <typename T> struct opt_k {
    T lr, wd, a, b, c, d, e, f, h;
    int flag;
};

template <typename T> static __device__ __forceinline__ T cu_sqrt_t(T x)
{
    return sqrt(x);
}

template <typename T, int OP>
__global__ void k_optim(const T *p, const T *g, const T *s1, const T *s2,
                        T *po, T *s1o, T *s2o, int64_t n, opt_k<T> k)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        T x = p[i], gr = g[i];
        if (OP == TB_OP_sgd) {
            if (k.wd != T(0))
                gr = gr + k.wd * x;
            po[i] = x - k.lr * gr;
        } else if (OP == TB_OP_sgd_momentum) {
            /* a = momentum, b = 1 - dampening, flag = nesterov */
            T buf = s1[i];
            if (k.wd != T(0))
                gr = gr + k.wd * x;
            if (k.a != T(0)) {
                buf = buf * k.a + k.b * gr;
                gr = k.flag ? gr + k.a * buf : buf;
            }
            po[i] = x - k.lr * gr;
            s1o[i] = buf;
        } else if (OP == TB_OP_adagrad) {
            /* lr = clr, a = eps */
            T sum = s1[i];
            if (k.wd != T(0))
                gr = gr + k.wd * x;
            sum = sum + gr * gr;
            po[i] = x - k.lr * (gr / (cu_sqrt_t(sum) + k.a));
            s1o[i] = sum;
        } else if (OP == TB_OP_adamax) {
            /* lr = clr, a = b1, b = 1 - b1, c = b2, d = eps */
            T m = s1[i], u = s2[i];
            if (k.wd != T(0))
                gr = gr + k.wd * x;
            m = m * k.a + k.b * gr;
            T aa = u * k.c, bb = (gr < T(0) ? -gr : gr) + k.d;
            u = (aa != aa || bb != bb) ? aa + bb : (aa >= bb ? aa : bb);
            po[i] = x - k.lr * (m / u);
            s1o[i] = m;
            s2o[i] = u;
        } else {
            /* adam, adamw, nadam, radam: a = b1, b = 1 - b1, c = b2,
             * d = 1 - b2, e = eps; then per op (see run) */
            T m = s1[i], v = s2[i];
            if (OP == TB_OP_adamw)
                x = x * k.wd; /* wd holds 1 - lr*wd */
            else if (k.wd != T(0))
                gr = gr + k.wd * x;
            m = m * k.a + k.b * gr;
            v = v * k.c + k.d * gr * gr;
            if (OP == TB_OP_nadam) {
                /* lr = c1, f = c2, h = bc2 */
                T denom = cu_sqrt_t(v / k.h) + k.e;
                x = x - k.lr * (gr / denom);
                x = x - k.f * (m / denom);
            }
            if (OP == TB_OP_radam) {
                /* lr = lr/bc1, f = sqrt(bc2)*rect, flag = rho_t > 5 */
                if (k.flag)
                    x = x - m * k.lr * (k.f / (cu_sqrt_t(v) + k.e));
                else
                    x = x - m * k.lr;
            } else if (OP != TB_OP_nadam) {
                /* lr = lr/bc1, f = sqrt(bc2) */
                x = x - k.lr * (m / (cu_sqrt_t(v) / k.f + k.e));
            }
            po[i] = x;
            s1o[i] = m;
            s2o[i] = v;
        }
    }
}

/* Distinct buffers, or an output exactly its aliased input. */
static bool optim_overlap_ok(const tb_tensor *in, int n_in,
                             const tb_tensor *out, int n_out, size_t nb)
{
    static const int alias[3] = {0, 2, 3};
    for (int o = 0; o < n_out; o++) {
        const char *po = (const char *)out[o].data;
        for (int i = 0; i < n_in; i++) {
            const char *pi = (const char *)in[i].data;
            if (i == alias[o] && pi == po)
                continue;
            if (po < pi + nb && pi < po + nb)
                return false;
        }
        for (int q = 0; q < o; q++) {
            const char *pq = (const char *)out[q].data;
            if (po < pq + nb && pq < po + nb)
                return false;
        }
    }
    return true;
}

static int optim_arity(int op, int *n_in, int *n_out)
{
    switch (op) {
    case TB_OP_sgd: *n_in = 2; *n_out = 1; return 0;
    case TB_OP_sgd_momentum:
    case TB_OP_adagrad: *n_in = 3; *n_out = 2; return 0;
    default: *n_in = 4; *n_out = 3; return 0;
    }
}

template <typename T, int OP>
static int kf_optim(void *ctx, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    const tb_dtype dt = cu_dt<T>();
    int n_in, n_out;
    optim_arity(OP, &n_in, &n_out);
    if (!c || !in || !out)
        return TB_EINVAL;
    for (int i = 0; i < n_in; i++)
        if (!cu_operand_ok(&in[i], dt))
            return TB_EINVAL;
    for (int o = 0; o < n_out; o++)
        if (!cu_operand_ok(&out[o], dt))
            return TB_EINVAL;
    for (int i = 1; i < n_in; i++)
        if (!cu_same_shape(&in[0], &in[i]))
            return TB_ESHAPE;
    for (int o = 0; o < n_out; o++)
        if (!cu_same_shape(&in[0], &out[o]))
            return TB_ESHAPE;
    int64_t n = cu_numel(&in[0]);
    if (!optim_overlap_ok(in, n_in, out, n_out, (size_t)n * sizeof(T)))
        return TB_EINVAL;

    double v[TB_MAX_PARAMS];
    /* parameter counts of the schemas (src/ops/op.c); the last of the
     * stepped ops is `step` */
    int np = OP == TB_OP_sgd                                  ? 2
             : OP == TB_OP_sgd_momentum || OP == TB_OP_adagrad ? 5
             : OP == TB_OP_nadam                               ? 7
                                                               : 6;
    for (int i = 0; i < np; i++)
        if (cu_param(p, i, &v[i]) || !std::isfinite(v[i]))
            return TB_EPARAM;
    opt_k<T> k;
    memset(&k, 0, sizeof k);
    double t = v[np - 1];
    bool stepped = OP != TB_OP_sgd && OP != TB_OP_sgd_momentum;
    if (stepped && (t < 1 || t != std::floor(t)))
        return TB_EPARAM;
    switch (OP) {
    case TB_OP_sgd:
        k.lr = (T)v[0];
        k.wd = (T)v[1];
        break;
    case TB_OP_sgd_momentum:
        k.lr = (T)v[0];
        k.a = (T)v[1];
        k.b = (T)(1 - v[2]);
        k.wd = (T)v[3];
        k.flag = v[4] != 0;
        break;
    case TB_OP_adagrad:
        k.lr = (T)(v[0] / (1 + (t - 1) * v[1]));
        k.wd = (T)v[2];
        k.a = (T)v[3];
        break;
    case TB_OP_adamax:
        k.lr = (T)(v[0] / (1 - std::pow(v[1], t)));
        k.a = (T)v[1];
        k.b = (T)(1 - v[1]);
        k.c = (T)v[2];
        k.d = (T)v[3];
        k.wd = (T)v[4];
        break;
    default: { /* adam, adamw, nadam, radam */
        double lr = v[0], b1 = v[1], b2 = v[2], eps = v[3], wd = v[4];
        double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
        k.a = (T)b1;
        k.b = (T)(1 - b1);
        k.c = (T)b2;
        k.d = (T)(1 - b2);
        k.e = (T)eps;
        k.wd = OP == TB_OP_adamw ? (T)(1 - lr * wd) : (T)wd;
        if (OP == TB_OP_nadam) {
            double md = v[5];
            double mu = tb_nadam_mu(b1, md, t);
            double mu_next = tb_nadam_mu(b1, md, t + 1);
            double prod = tb_nadam_mu_product(b1, md, t);
            k.lr = (T)(lr * (1 - mu) / (1 - prod));
            k.f = (T)(lr * mu_next / (1 - prod * mu_next));
            k.h = (T)bc2;
        } else if (OP == TB_OP_radam) {
            double rho_inf = 2 / (1 - b2) - 1;
            double rho_t = rho_inf - 2 * t * std::pow(b2, t) / bc2;
            k.lr = (T)(lr / bc1);
            k.flag = rho_t > 5;
            if (k.flag)
                k.f = (T)(std::sqrt(bc2) *
                          std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                    ((rho_inf - 4) * (rho_inf - 2) * rho_t)));
        } else {
            k.lr = (T)(lr / bc1);
            k.f = (T)std::sqrt(bc2);
        }
        break;
    }
    }
    if (n == 0)
        return 0;
    const T *s1 = n_in > 2 ? (const T *)in[2].data : NULL;
    const T *s2 = n_in > 3 ? (const T *)in[3].data : NULL;
    T *s1o = n_out > 1 ? (T *)out[1].data : NULL;
    T *s2o = n_out > 2 ? (T *)out[2].data : NULL;
    return cu_launch(c, k_optim<T, OP>,
                     tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, (const T *)in[0].data,
                     (const T *)in[1].data, s1, s2, (T *)out[0].data, s1o,
                     s2o, n, k);
}

#define OPT_ROW(op)                                                       \
    CU_EXT_ROW(op, (kf_optim<float, TB_OP_##op>),                         \
               (kf_optim<double, TB_OP_##op>))
static const cu_ext_entry cu_optim[] = {
    OPT_ROW(sgd) OPT_ROW(sgd_momentum) OPT_ROW(adam) OPT_ROW(adamw)
    OPT_ROW(adagrad) OPT_ROW(adamax) OPT_ROW(nadam) OPT_ROW(radam)
};
#undef OPT_ROW

tb_kernel_fn cu_optim_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_optim, sizeof cu_optim / sizeof cu_optim[0], id, dt,
                       impl);
}
