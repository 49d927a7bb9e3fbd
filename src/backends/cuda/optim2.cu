/* The CUDA module's optimizer steps beyond optim.cu: lamb, adabound and
 * lbfgs, f32 and f64, semantics of the cpu rows
 * (src/backends/cpu/optim.c, optim_red.h) and src/ops/ref_optim.c.  The
 * per-call scalars are computed once in double on the host and rounded
 * to the element type; the per-element arithmetic is in the element
 * type, as the cpu rows' (inside TOL_OPT).  Outputs may be exactly the
 * inputs they update (op.alias: p, m, v; lbfgs's p); any other overlap
 * is refused.
 *
 * adabound: one grid-stride pass, element-wise (no reduction).
 *
 * lamb: the trust ratio |p| / |r| needs two sums over the whole tensor
 * before any p is written, so three launches, no host round trip: the
 * moments (m, v written) with each block's partial sums of p^2 and r^2
 * in the instance's scratch; one block adding the partials in block
 * order into lr * ratio; the update p -= (lr ratio) r with r recomputed
 * from the new m and v.  The block count depends on n and the device
 * only (nn2_geom.h's tb_cu_red_blocks), so the sums are the same bits
 * every run on a device; no atomics.
 *
 * lbfgs: the two-loop recursion is sequential in the history, each step
 * a dot product and an axpy over the n elements.  Everything stays on
 * the device (no host round trip, no synchronization): one launch takes
 * the partials of s.y and y.y of all m pairs at once, one block adds
 * them into rho[k] and gamma (the newest pair with s.y > 1e-10); then
 * 2m + 1 passes (nn2_geom.h's tb_cu_lbfgs_pass_at), each an
 * element-wise launch fusing the previous step's axpy (skipped on the
 * device for a pair with rho 0) with the next step's per-block dot
 * partials, and a one-block launch adding those in block order into
 * al[k] or c[k].  So 4m + 3 launches for m pairs; the direction q lives
 * in out[1] in the element type, as the cpu rows keep it. */
#include "ext2.cuh"
#include "nn2_geom.h"

#include <cstring>

extern "C" {
#include "../../ops/optim_math.h"
}

/* The per-call scalars of lamb and adabound. */
template <typename T> struct opt2_k {
    T b1, omb1, b2, omb2, eps, wd;
    T rbc1, rbc2;  /* lamb: 1 / (1 - b1^t), 1 / (1 - b2^t) */
    T step, lo, hi; /* adabound: lr sqrt(bc2) / bc1 and the bounds */
    double lr;
};

template <typename T> static __device__ __forceinline__ T cu_sqrt2(T x)
{
    return sqrt(x);
}

/* lamb's r of one element from its new m, v and p. */
template <typename T>
static __device__ __forceinline__ T lamb_r(T m, T v, T p,
                                           const opt2_k<T> &k)
{
    T u = m * k.rbc1 / (cu_sqrt2(v * k.rbc2) + k.eps);
    if (k.wd != T(0))
        u = u + k.wd * p;
    return u;
}

/* lamb pass 1: m, v; part[2b], part[2b + 1] block b's sums of p^2, r^2. */
template <typename T>
__global__ void k_lamb_moments(const T *p, const T *g, const T *m,
                               const T *v, T *mo, T *vo, double *part,
                               int64_t n, opt2_k<T> k)
{
    __shared__ double sp[TB_CU_BLOCK / CU_WARP];
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    double pp = 0, rr = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        const T x = p[i], gr = g[i];
        const T mm = k.b1 * m[i] + k.omb1 * gr;
        const T vv = k.b2 * v[i] + k.omb2 * (gr * gr);
        const T u = lamb_r(mm, vv, x, k);
        pp += (double)x * x;
        rr += (double)u * u;
        mo[i] = mm;
        vo[i] = vv;
    }
    pp = cu_group_sum(pp, (int)blockDim.x, sp);
    rr = cu_group_sum(rr, (int)blockDim.x, sp);
    if (threadIdx.x == 0) {
        part[2 * blockIdx.x] = pp;
        part[2 * blockIdx.x + 1] = rr;
    }
}

/* lamb pass 2, one thread: coef = lr |p| / |r| (lr when a norm is 0)
 * from the nb blocks' partials in block order. */
__global__ void k_lamb_ratio(const double *part, int64_t nb, double lr,
                             double *coef)
{
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    double pp = 0, rr = 0;
    for (int64_t b = 0; b < nb; b++) {
        pp += part[2 * b];
        rr += part[2 * b + 1];
    }
    *coef = lr * (pp > 0 && rr > 0 ? sqrt(pp) / sqrt(rr) : 1);
}

/* lamb pass 3: p -= coef r. */
template <typename T>
__global__ void k_lamb_update(const T *p, const T *mo, const T *vo, T *po,
                              const double *coef, int64_t n, opt2_k<T> k)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    const T cf = (T)*coef;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        const T x = p[i];
        po[i] = x - cf * lamb_r(mo[i], vo[i], x, k);
    }
}

template <typename T>
__global__ void k_adabound(const T *p, const T *g, const T *m, const T *v,
                           T *po, T *mo, T *vo, int64_t n, opt2_k<T> k)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        const T x = p[i];
        T gr = g[i];
        if (k.wd != T(0))
            gr = gr + k.wd * x;
        const T mm = k.b1 * m[i] + k.omb1 * gr;
        const T vv = k.b2 * v[i] + k.omb2 * (gr * gr);
        T a = k.step / (cu_sqrt2(vv) + k.eps);
        a = a < k.lo ? k.lo : (a > k.hi ? k.hi : a); /* NaN stays NaN */
        po[i] = x - a * mm;
        mo[i] = mm;
        vo[i] = vv;
    }
}

/* ---- lbfgs --------------------------------------------------------------- */

/* Partials of s_k.y_k and y_k.y_k for every pair k: block k * nb + b
 * takes block b's share of pair k, into part[(k * nb + b) * 2 + {0, 1}]. */
template <typename T>
__global__ void k_lbfgs_dots(const T *S, const T *Y, double *part,
                             int64_t n, int64_t nb)
{
    __shared__ double sp[TB_CU_BLOCK / CU_WARP];
    const int64_t k = blockIdx.x / nb, b = blockIdx.x % nb;
    const T *s = S + k * n, *y = Y + k * n;
    double ys = 0, yy = 0;
    for (int64_t i = b * blockDim.x + threadIdx.x; i < n;
         i += nb * blockDim.x) {
        ys += (double)y[i] * s[i];
        yy += (double)y[i] * y[i];
    }
    ys = cu_group_sum(ys, (int)blockDim.x, sp);
    yy = cu_group_sum(yy, (int)blockDim.x, sp);
    if (threadIdx.x == 0) {
        part[(k * nb + b) * 2] = ys;
        part[(k * nb + b) * 2 + 1] = yy;
    }
}

/* One thread: rho[k] and gamma (s.y / y.y of the newest pair kept, 1 if
 * none) from the partials in block order. */
__global__ void k_lbfgs_rho(double *sc, tb_cu_lbfgs_layout L, int64_t m)
{
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    double gamma = 1;
    for (int64_t k = 0; k < m; k++) {
        double ys = 0, yy = 0;
        for (int64_t b = 0; b < L.nb; b++) {
            ys += sc[L.part + (k * L.nb + b) * 2];
            yy += sc[L.part + (k * L.nb + b) * 2 + 1];
        }
        sc[L.rho + k] = ys > TB_LBFGS_MIN_YS ? 1 / ys : 0;
        if (sc[L.rho + k] != 0)
            gamma = ys / yy;
    }
    sc[L.gamma] = gamma;
}

/* The pass's element-wise part (see nn2_geom.h): q's update, then the
 * block's partial of the dot with dv (NULL: none) into part[blockIdx.x],
 * or the step p_out = p + lr q. */
template <typename T>
__global__ void k_lbfgs_pass(const T *g, T *q, const T *av, const T *dv,
                             const T *p, T *po, double *sc,
                             tb_cu_lbfgs_layout L, tb_cu_lbfgs_pass ps,
                             int64_t n, T lr)
{
    __shared__ double sp[TB_CU_BLOCK / CU_WARP];
    T ca = 0;
    bool ax = false;
    if (ps.ax != TB_CU_LB_NONE && sc[L.rho + ps.ax_k] != 0) {
        ax = true;
        ca = ps.ax == TB_CU_LB_Y ? (T)-sc[L.al + ps.ax_k]
                                 : (T)sc[L.c + ps.ax_k];
    }
    const T gamma = (T)sc[L.gamma];
    double d = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        T qi = ps.init ? (T)-1 * g[i] : q[i];
        if (ax)
            qi = qi + ca * av[i];
        if (ps.scale)
            qi = gamma * qi;
        q[i] = qi;
        if (dv)
            d += (double)dv[i] * qi;
        if (ps.step)
            po[i] = p[i] + lr * qi;
    }
    if (dv) {
        d = cu_group_sum(d, (int)blockDim.x, sp);
        if (threadIdx.x == 0)
            sc[L.part + blockIdx.x] = d;
    }
}

/* One thread: the pass's dot from the partials in block order, into
 * al[k] = rho s.q (S) or c[k] = al[k] - rho y.q (Y). */
__global__ void k_lbfgs_fin(double *sc, tb_cu_lbfgs_layout L,
                            tb_cu_lbfgs_pass ps)
{
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    double d = 0;
    for (int64_t b = 0; b < L.nb; b++)
        d += sc[L.part + b];
    const int64_t k = ps.dot_k;
    const double rho = sc[L.rho + k];
    if (ps.dot == TB_CU_LB_S)
        sc[L.al + k] = d * rho;
    else
        sc[L.c + k] = sc[L.al + k] - d * rho;
}

/* ---- launchers ----------------------------------------------------------- */

/* Every operand of dtype dt, contiguous; in[1..n_in) and out[..n_out)
 * of in[0]'s shape (lbfgs: its own check); each output exactly its
 * aliased input (alias[o], -1: none) or disjoint from every operand. */
static int opt2_operands(const cu_ctx *c, const tb_tensor *in, int n_in,
                         const tb_tensor *out, int n_out, tb_dtype dt,
                         const int *alias)
{
    if (!cu_operands_ok(c, in, n_in, out, n_out, dt))
        return TB_EINVAL;
    const size_t es = cu_dtype_size(dt);
    for (int o = 0; o < n_out; o++) {
        const char *po = (const char *)out[o].data;
        const size_t no = (size_t)cu_numel(&out[o]) * es;
        for (int i = 0; i < n_in; i++) {
            const char *pi = (const char *)in[i].data;
            const size_t ni = (size_t)cu_numel(&in[i]) * es;
            if (i == alias[o] && pi == po)
                continue;
            if (po < pi + ni && pi < po + no)
                return TB_EINVAL;
        }
        for (int q = 0; q < o; q++) {
            const char *pq = (const char *)out[q].data;
            const size_t nq = (size_t)cu_numel(&out[q]) * es;
            if (po < pq + nq && pq < po + no)
                return TB_EINVAL;
        }
    }
    return 0;
}

/* The first np parameters, finite; the last the step t, an integer
 * >= 1. */
static int opt2_params(const tb_params *p, int np, double *v)
{
    for (int i = 0; i < np; i++)
        if (cu_param(p, i, &v[i]) || !std::isfinite(v[i]))
            return TB_EPARAM;
    const double t = v[np - 1];
    return t >= 1 && t == std::floor(t) ? 0 : TB_EPARAM;
}

/* lamb and adabound: p, g, m, v -> p, m, v. */
template <typename T, bool LAMB>
static int kf_opt2(void *ctx, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    static const int alias[3] = {0, 2, 3};
    int rc = opt2_operands(c, in, 4, out, 3, cu_dt<T>(), alias);
    if (rc)
        return rc;
    for (int i = 1; i < 4; i++)
        if (!cu_same_shape(&in[0], &in[i]))
            return TB_ESHAPE;
    for (int o = 0; o < 3; o++)
        if (!cu_same_shape(&in[0], &out[o]))
            return TB_ESHAPE;
    double v[8];
    if ((rc = opt2_params(p, LAMB ? 6 : 8, v)))
        return rc;
    opt2_k<T> k;
    memset(&k, 0, sizeof k);
    const double t = LAMB ? v[5] : v[7];
    k.b1 = (T)v[1];
    k.omb1 = (T)(1 - v[1]);
    k.b2 = (T)v[2];
    k.omb2 = (T)(1 - v[2]);
    const double bc1 = 1 - std::pow(v[1], t), bc2 = 1 - std::pow(v[2], t);
    if (LAMB) { /* lr, b1, b2, eps, wd, step */
        k.lr = v[0];
        k.eps = (T)v[3];
        k.wd = (T)v[4];
        k.rbc1 = (T)(1 / bc1);
        k.rbc2 = (T)(1 / bc2);
    } else { /* lr, b1, b2, final_lr, gamma, eps, wd, step */
        k.step = (T)(v[0] * std::sqrt(bc2) / bc1);
        k.lo = (T)(v[3] * (1 - 1 / (v[4] * t + 1)));
        k.hi = (T)(v[3] * (1 + 1 / (v[4] * t)));
        k.eps = (T)v[5];
        k.wd = (T)v[6];
    }
    const int64_t n = cu_numel(&in[0]);
    if (n == 0)
        return 0;
    const T *pp = (const T *)in[0].data, *g = (const T *)in[1].data;
    const T *m = (const T *)in[2].data, *vv = (const T *)in[3].data;
    T *po = (T *)out[0].data, *mo = (T *)out[1].data, *vo = (T *)out[2].data;
    if (!LAMB)
        return cu_launch(c, k_adabound<T>,
                         tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                         TB_CU_BLOCK, 0, pp, g, m, vv, po, mo, vo, n, k);
    /* the partials (2 a block) and the coefficient after them */
    const int64_t nb = tb_cu_red_blocks(n, TB_CU_BLOCK, c->max_blocks,
                                        (c->scratch_elems - 1) / 2);
    double *coef = c->scratch + 2 * nb;
    if ((rc = cu_launch(c, k_lamb_moments<T>, nb, TB_CU_BLOCK, 0, pp, g, m,
                        vv, mo, vo, c->scratch, n, k)) ||
        (rc = cu_launch(c, k_lamb_ratio, 1, 1, 0,
                        (const double *)c->scratch, nb, k.lr, coef)))
        return rc;
    return cu_launch(c, k_lamb_update<T>,
                     tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, pp, (const T *)mo, (const T *)vo, po,
                     (const double *)coef, n, k);
}

template <typename T>
static int kf_lamb(void *ctx, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    return kf_opt2<T, true>(ctx, in, out, p);
}

template <typename T>
static int kf_adabound(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    return kf_opt2<T, false>(ctx, in, out, p);
}

/* lbfgs: p, g (n elements), S, Y [m, n] -> p + lr d, d. */
template <typename T>
static int kf_lbfgs(void *ctx, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    static const int alias[2] = {0, -1};
    int rc = opt2_operands(c, in, 4, out, 2, cu_dt<T>(), alias);
    if (rc)
        return rc;
    const int64_t n = cu_numel(&in[0]);
    if (!cu_same_shape(&in[0], &in[1]) || in[2].ndim != 2 ||
        in[2].shape[1] != n || in[2].shape[0] > TB_LBFGS_MAX_HIST ||
        !cu_same_shape(&in[2], &in[3]) || !cu_same_shape(&in[0], &out[0]) ||
        !cu_same_shape(&in[0], &out[1]))
        return TB_ESHAPE;
    double lr;
    if ((rc = cu_param(p, 0, &lr)) || !std::isfinite(lr))
        return TB_EPARAM;
    const int64_t m = in[2].shape[0];
    if (n == 0)
        return 0;
    tb_cu_lbfgs_layout L;
    if (tb_cu_lbfgs_plan(m, n, TB_CU_BLOCK, c->max_blocks, c->scratch_elems,
                         &L))
        return TB_ENOMEM; /* the history's scalars do not fit */
    const T *S = (const T *)in[2].data, *Y = (const T *)in[3].data;
    T *q = (T *)out[1].data;
    if (m > 0) {
        rc = cu_launch(c, k_lbfgs_dots<T>, m * L.nb, TB_CU_BLOCK, 0, S, Y,
                       c->scratch + L.part, n, L.nb);
        if (rc)
            return rc;
    }
    if ((rc = cu_launch(c, k_lbfgs_rho, 1, 1, 0, c->scratch, L, m)))
        return rc;
    for (int64_t t = 0; t < tb_cu_lbfgs_passes(m); t++) {
        const tb_cu_lbfgs_pass ps = tb_cu_lbfgs_pass_at(m, t);
        const T *av = ps.ax == TB_CU_LB_Y   ? Y + ps.ax_k * n
                      : ps.ax == TB_CU_LB_S ? S + ps.ax_k * n
                                            : (const T *)NULL;
        const T *dv = ps.dot == TB_CU_LB_S   ? S + ps.dot_k * n
                      : ps.dot == TB_CU_LB_Y ? Y + ps.dot_k * n
                                             : (const T *)NULL;
        rc = cu_launch(c, k_lbfgs_pass<T>, L.nb, TB_CU_BLOCK, 0,
                       (const T *)in[1].data, q, av, dv,
                       (const T *)in[0].data, (T *)out[0].data, c->scratch,
                       L, ps, n, (T)lr);
        if (!rc && dv)
            rc = cu_launch(c, k_lbfgs_fin, 1, 1, 0, c->scratch, L, ps);
        if (rc)
            return rc;
    }
    return 0;
}

static const cu_ext_entry cu_optim2[] = {
    CU_EXT_ROW(lamb, kf_lamb<float>, kf_lamb<double>)
    CU_EXT_ROW(adabound, kf_adabound<float>, kf_adabound<double>)
    CU_EXT_ROW(lbfgs, kf_lbfgs<float>, kf_lbfgs<double>)
};

CU_EXT_LOOKUP(cu_optim2_kernel, cu_optim2)
