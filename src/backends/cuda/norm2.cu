/* Channel and group normalization of the CUDA module: batch_norm,
 * group_norm and their gradients (batch_norm_backward,
 * group_norm_backward), f32 and f64, semantics of the cpu rows
 * (src/backends/cpu/bnorm_c.c) and the references.
 *
 * Design (correctness first): x is [N, C, S] (S the trailing dims'
 * product).  A block of 256 threads takes one set of values at a time
 * (grid-stride over the sets): a channel (N x S values, sample-strided:
 * nn2_geom.h's tb_cu_chan_at) for batch_norm and its gradient, a
 * (sample, group) pair (C / G x S contiguous values) for group_norm and
 * its gradient.  Each statistic is a block sum in double, two sweeps as
 * the reference (the mean, then the squared deviations from it), the
 * lanes combined in a fixed order (kernels_ext.cuh's cu_group_sum), so a
 * result is the same bits every run on a device; no atomics.  eps is
 * rounded to the dtype as the cpu rows do.
 *
 * batch_norm: training (param 0) takes the batch statistics, the
 * running ones updated with momentum (unbiased variance), else the
 * running ones; the block reads its channel's running pair before any
 * thread writes it (out[1] may be in[3], op.alias).
 *
 * batch_norm_backward: per channel the statistics, the sums of g and
 * g * xhat, dx, and dw, db written by the block (one block owns a
 * channel).  group_norm_backward: per pair the statistics, the sums of
 * g * w and g * w * xhat over the pair (what the cpu row adds channel by
 * channel), dx, and the pair's mean and rstd into the instance's scratch
 * (N x G pairs of doubles: a case whose pairs do not fit is refused with
 * TB_ENOMEM); a second launch sums dw and db per channel over the
 * samples with those statistics, a block per channel. */
#include "ext2.cuh"
#include "nn2_geom.h"

/* The offset of value e of set `set`: channel set of x [N, C, S] (CH),
 * else the contiguous pair set of len values. */
template <bool CH>
static __device__ __forceinline__ int64_t nc_at(int64_t set, int64_t e,
                                                int64_t C, int64_t S,
                                                int64_t len)
{
    return CH ? tb_cu_chan_at(e, set, C, S) : set * len + e;
}

/* The mean of the n values of a set (0 when n == 0) and their sum of
 * squared deviations from it in *ss; every thread of the block calls
 * it (block sums). */
template <typename T, bool CH>
static __device__ double nc_stats(const T *x, int64_t set, int64_t n,
                                  int64_t C, int64_t S, double *part,
                                  double *ss)
{
    double s = 0;
    for (int64_t e = threadIdx.x; e < n; e += blockDim.x)
        s += (double)x[nc_at<CH>(set, e, C, S, n)];
    s = cu_group_sum(s, (int)blockDim.x, part);
    const double m = n > 0 ? s / (double)n : 0;
    double q = 0;
    for (int64_t e = threadIdx.x; e < n; e += blockDim.x) {
        const double d = (double)x[nc_at<CH>(set, e, C, S, n)] - m;
        q += d * d;
    }
    *ss = cu_group_sum(q, (int)blockDim.x, part);
    return m;
}

/* ---- forward ------------------------------------------------------------- */

template <typename T>
__global__ void k_batch_norm(const T *x, const T *w, const T *b,
                             const T *run, T *y, T *ro, int64_t N,
                             int64_t C, int64_t S, int training, double mom,
                             double eps)
{
    __shared__ double part[TB_CU_BLOCK / CU_WARP];
    const int64_t n = N * S;
    for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
        double rm = (double)run[c], rv = (double)run[C + c];
        double mean = rm, var = rv;
        if (training) {
            double ss;
            mean = nc_stats<T, true>(x, c, n, C, S, part, &ss);
            var = ss / (double)n;
            rm = (1 - mom) * rm + mom * mean;
            rv = (1 - mom) * rv + mom * (ss / (double)(n - 1));
        }
        const double sc = (double)w[c] / sqrt(var + eps), bc = (double)b[c];
        for (int64_t e = threadIdx.x; e < n; e += blockDim.x) {
            const int64_t o = tb_cu_chan_at(e, c, C, S);
            y[o] = (T)(((double)x[o] - mean) * sc + bc);
        }
        __syncthreads(); /* every thread has read run[c], run[C + c] */
        if (threadIdx.x == 0) {
            ro[c] = (T)rm;
            ro[C + c] = (T)rv;
        }
    }
}

template <typename T>
__global__ void k_group_norm(const T *x, const T *w, const T *b, T *y,
                             int64_t pairs, int64_t G, int64_t cg, int64_t S,
                             double eps)
{
    __shared__ double part[TB_CU_BLOCK / CU_WARP];
    const int64_t len = cg * S;
    for (int64_t r = blockIdx.x; r < pairs; r += gridDim.x) {
        double ss;
        const double mean = nc_stats<T, false>(x, r, len, 0, S, part, &ss);
        const double rstd = 1 / sqrt(ss / (double)len + eps);
        for (int64_t e = threadIdx.x; e < len; e += blockDim.x) {
            const int64_t c = tb_cu_pair_chan(r, e, G, cg, S);
            const int64_t o = r * len + e;
            y[o] = (T)(((double)x[o] - mean) * (rstd * (double)w[c]) +
                       (double)b[c]);
        }
    }
}

/* ---- gradients ----------------------------------------------------------- */

template <typename T>
__global__ void k_batch_norm_bw(const T *g, const T *x, const T *w, T *dx,
                                T *dw, T *db, int64_t N, int64_t C,
                                int64_t S, double eps)
{
    __shared__ double part[TB_CU_BLOCK / CU_WARP];
    const int64_t n = N * S;
    const double nd = (double)n;
    for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
        double ss;
        const double mean = nc_stats<T, true>(x, c, n, C, S, part, &ss);
        const double rstd = 1 / sqrt((n > 0 ? ss / nd : 0) + eps);
        double sg = 0, sgx = 0;
        for (int64_t e = threadIdx.x; e < n; e += blockDim.x) {
            const int64_t o = tb_cu_chan_at(e, c, C, S);
            const double gv = (double)g[o];
            sg += gv;
            sgx += gv * (((double)x[o] - mean) * rstd);
        }
        sg = cu_group_sum(sg, (int)blockDim.x, part);
        sgx = cu_group_sum(sgx, (int)blockDim.x, part);
        const double wr = (double)w[c] * rstd, a = sg / nd, bb = sgx / nd;
        for (int64_t e = threadIdx.x; e < n; e += blockDim.x) {
            const int64_t o = tb_cu_chan_at(e, c, C, S);
            const double xh = ((double)x[o] - mean) * rstd;
            dx[o] = (T)(wr * ((double)g[o] - a - xh * bb));
        }
        if (threadIdx.x == 0) {
            dw[c] = (T)sgx;
            db[c] = (T)sg;
        }
    }
}

/* Pass 1 of group_norm_backward: dx per pair; stats[2r], stats[2r + 1]
 * the pair's mean and rstd. */
template <typename T>
__global__ void k_group_norm_bw_dx(const T *g, const T *x, const T *w,
                                   T *dx, double *stats, int64_t pairs,
                                   int64_t G, int64_t cg, int64_t S,
                                   double eps)
{
    __shared__ double part[TB_CU_BLOCK / CU_WARP];
    const int64_t len = cg * S;
    const double nd = (double)len;
    for (int64_t r = blockIdx.x; r < pairs; r += gridDim.x) {
        double ss;
        const double mean = nc_stats<T, false>(x, r, len, 0, S, part, &ss);
        const double rstd = 1 / sqrt(ss / nd + eps);
        double sgh = 0, sghx = 0;
        for (int64_t e = threadIdx.x; e < len; e += blockDim.x) {
            const int64_t o = r * len + e;
            const double gh =
                (double)g[o] * (double)w[tb_cu_pair_chan(r, e, G, cg, S)];
            sgh += gh;
            sghx += gh * (((double)x[o] - mean) * rstd);
        }
        sgh = cu_group_sum(sgh, (int)blockDim.x, part);
        sghx = cu_group_sum(sghx, (int)blockDim.x, part);
        const double a = sgh / nd, bb = sghx / nd;
        for (int64_t e = threadIdx.x; e < len; e += blockDim.x) {
            const int64_t o = r * len + e;
            const double wc = (double)w[tb_cu_pair_chan(r, e, G, cg, S)];
            const double xh = ((double)x[o] - mean) * rstd;
            dx[o] = (T)(rstd * ((double)g[o] * wc - a - xh * bb));
        }
        if (threadIdx.x == 0) {
            stats[2 * r] = mean;
            stats[2 * r + 1] = rstd;
        }
    }
}

/* Pass 2: dw[c], db[c] over channel c's N x S values, each sample's
 * values normalized with its pair's statistics. */
template <typename T>
__global__ void k_group_norm_bw_dw(const T *g, const T *x,
                                   const double *stats, T *dw, T *db,
                                   int64_t N, int64_t C, int64_t S,
                                   int64_t G, int64_t cg)
{
    __shared__ double part[TB_CU_BLOCK / CU_WARP];
    const int64_t n = N * S;
    for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
        double sw = 0, sb = 0;
        for (int64_t e = threadIdx.x; e < n; e += blockDim.x) {
            const int64_t o = tb_cu_chan_at(e, c, C, S);
            const int64_t r = tb_cu_chan_pair(e, c, S, G, cg);
            const double gv = (double)g[o];
            sw += gv * (((double)x[o] - stats[2 * r]) * stats[2 * r + 1]);
            sb += gv;
        }
        sw = cu_group_sum(sw, (int)blockDim.x, part);
        sb = cu_group_sum(sb, (int)blockDim.x, part);
        if (threadIdx.x == 0) {
            dw[c] = (T)sw;
            db[c] = (T)sb;
        }
    }
}

/* ---- launchers ----------------------------------------------------------- */

/* x [N, C, S...] (at least 2-D) and the n vectors t[0..n) [C]: N, C and
 * S, or TB_ESHAPE. */
static int nc_shape(const tb_tensor *x, const tb_tensor *t, int n,
                    int64_t *N, int64_t *C, int64_t *S)
{
    if (x->ndim < 2)
        return TB_ESHAPE;
    *N = x->shape[0];
    *C = x->shape[1];
    *S = 1;
    for (int d = 2; d < x->ndim; d++)
        *S *= x->shape[d];
    for (int i = 0; i < n; i++)
        if (t[i].ndim != 1 || t[i].shape[0] != *C)
            return TB_ESHAPE;
    return 0;
}

/* eps, parameter idx: >= 0, rounded to the dtype as the cpu rows do. */
template <typename T>
static int nc_eps(const tb_params *p, int idx, double *eps)
{
    int rc = cu_param(p, idx, eps);
    if (rc)
        return rc;
    if (!(*eps >= 0))
        return TB_EPARAM;
    *eps = (double)(T)*eps;
    return 0;
}

/* num_groups, parameter 0: an integer >= 1 dividing C. */
static int nc_groups(const tb_params *p, int64_t C, int64_t *G)
{
    int rc = cu_param_int(p, 0, 1, INT64_MAX / 2, G);
    if (rc)
        return rc;
    return C % *G ? TB_EPARAM : 0;
}

static int64_t nc_blocks(const cu_ctx *c, int64_t sets)
{
    return sets < c->max_blocks ? sets : c->max_blocks;
}

template <typename T>
static int kf_batch_norm(void *ctx, const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!cu_operands_ok(c, in, 4, out, 2, cu_dt<T>()))
        return TB_EINVAL;
    int64_t N, C, S;
    int rc = nc_shape(&in[0], &in[1], 2, &N, &C, &S);
    if (rc)
        return rc;
    if (!cu_same_shape(&in[0], &out[0]) || in[3].ndim != 2 ||
        in[3].shape[0] != 2 || in[3].shape[1] != C ||
        !cu_same_shape(&in[3], &out[1]))
        return TB_ESHAPE;
    double training, mom, eps;
    if ((rc = cu_param(p, 0, &training)) || (rc = cu_param(p, 1, &mom)) ||
        (rc = nc_eps<T>(p, 2, &eps)))
        return rc;
    if (!(mom >= 0 && mom <= 1))
        return TB_EPARAM;
    if (training != 0 && N * S < 2)
        return TB_ESHAPE; /* no unbiased variance (the shape rule's) */
    if (C == 0)
        return 0;
    return cu_launch(c, k_batch_norm<T>, nc_blocks(c, C), TB_CU_BLOCK, 0,
                     (const T *)in[0].data, (const T *)in[1].data,
                     (const T *)in[2].data, (const T *)in[3].data,
                     (T *)out[0].data, (T *)out[1].data, N, C, S,
                     training != 0 ? 1 : 0, mom, eps);
}

template <typename T>
static int kf_group_norm(void *ctx, const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!cu_args_ok(c, in, 3, out, cu_dt<T>()))
        return TB_EINVAL;
    int64_t N, C, S, G;
    double eps;
    int rc = nc_shape(&in[0], &in[1], 2, &N, &C, &S);
    if (rc)
        return rc;
    if (!cu_same_shape(&in[0], &out[0]))
        return TB_ESHAPE;
    if ((rc = nc_groups(p, C, &G)) || (rc = nc_eps<T>(p, 1, &eps)))
        return rc;
    if (N * C * S == 0)
        return 0;
    return cu_launch(c, k_group_norm<T>, nc_blocks(c, N * G), TB_CU_BLOCK,
                     0, (const T *)in[0].data, (const T *)in[1].data,
                     (const T *)in[2].data, (T *)out[0].data, N * G, G,
                     C / G, S, eps);
}

/* The gradients' operands: g, x, w -> dx, dw, db; g and dx of x's
 * shape, w, dw, db [C]. */
template <typename T>
static int nc_bw_args(cu_ctx *c, const tb_tensor *in, const tb_tensor *out,
                      int64_t *N, int64_t *C, int64_t *S)
{
    if (!cu_operands_ok(c, in, 3, out, 3, cu_dt<T>()))
        return TB_EINVAL;
    int rc = nc_shape(&in[1], &in[2], 1, N, C, S);
    if (rc || (rc = nc_shape(&in[1], &out[1], 2, N, C, S)))
        return rc;
    if (!cu_same_shape(&in[0], &in[1]) || !cu_same_shape(&in[1], &out[0]))
        return TB_ESHAPE;
    return 0;
}

template <typename T>
static int kf_batch_norm_backward(void *ctx, const tb_tensor *in,
                                  tb_tensor *out, const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    int64_t N, C, S;
    double eps;
    int rc = nc_bw_args<T>(c, in, out, &N, &C, &S);
    if (rc || (rc = nc_eps<T>(p, 0, &eps)))
        return rc;
    if (C == 0)
        return 0;
    return cu_launch(c, k_batch_norm_bw<T>, nc_blocks(c, C), TB_CU_BLOCK, 0,
                     (const T *)in[0].data, (const T *)in[1].data,
                     (const T *)in[2].data, (T *)out[0].data,
                     (T *)out[1].data, (T *)out[2].data, N, C, S, eps);
}

template <typename T>
static int kf_group_norm_backward(void *ctx, const tb_tensor *in,
                                  tb_tensor *out, const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    int64_t N, C, S, G;
    double eps;
    int rc = nc_bw_args<T>(c, in, out, &N, &C, &S);
    if (rc || (rc = nc_groups(p, C, &G)) || (rc = nc_eps<T>(p, 1, &eps)))
        return rc;
    if (C == 0)
        return 0;
    if (N * G * 2 > c->scratch_elems)
        return TB_ENOMEM; /* the pairs' statistics do not fit */
    if (N > 0 && S > 0) {
        rc = cu_launch(c, k_group_norm_bw_dx<T>, nc_blocks(c, N * G),
                       TB_CU_BLOCK, 0, (const T *)in[0].data,
                       (const T *)in[1].data, (const T *)in[2].data,
                       (T *)out[0].data, c->scratch, N * G, G, C / G, S,
                       eps);
        if (rc)
            return rc;
    }
    return cu_launch(c, k_group_norm_bw_dw<T>, nc_blocks(c, C), TB_CU_BLOCK,
                     0, (const T *)in[0].data, (const T *)in[1].data,
                     (const double *)c->scratch, (T *)out[1].data,
                     (T *)out[2].data, N, C, S, G, C / G);
}

static const cu_ext_entry cu_norms2[] = {
    CU_EXT_ROW(batch_norm, kf_batch_norm<float>, kf_batch_norm<double>)
    CU_EXT_ROW(group_norm, kf_group_norm<float>, kf_group_norm<double>)
    CU_EXT_ROW(batch_norm_backward, kf_batch_norm_backward<float>,
               kf_batch_norm_backward<double>)
    CU_EXT_ROW(group_norm_backward, kf_group_norm_backward<float>,
               kf_group_norm_backward<double>)
};

CU_EXT_LOOKUP(cu_norm2_kernel, cu_norms2)
