/* Normalization of the CUDA module: layer_norm and rms_norm over the last
 * dim, f32, f64, bf16 and f16, one launch each.  bf16/f16 rows are read
 * widened and each result is rounded once (double -> f32 -> the dtype,
 * half.cuh): the statistics are summed in double as for f32, at least
 * the f32 accumulation of PyTorch's 16-bit kernels.
 *
 * Design: rows of D elements, a group of threads per row as the
 * reductions' rows mode (reduce.cu; tb_reduce_plan_make with inner 1 and
 * no splitting: one warp per row when D < 1024, else the whole 256-thread
 * block), interleaved lanes so every load is coalesced.  Three sweeps of
 * the row, as the reference: the mean (layer_norm only), the sum of
 * squared deviations from it (no cancellation of E[x^2] - E[x]^2), then
 * the scaled output; the second and third read the row again from L1/L2,
 * where it stays (a 1024-long f32 row is 4 KiB).  Sums are kept in double
 * for both dtypes, as reduce.cu's: they combine across lanes in a fixed
 * order (shuffles, then the block's warps in order), so the result is the
 * same every run.  eps is the parameter as given (the reference rounds it
 * to the dtype; an f32 eps differs from the double one by < 3e-8
 * relative, far inside the tolerance).
 *
 * The gradients (layer_norm_backward, rms_norm_backward): g, x, w -> dx,
 * dw (, db).  The rows are cut into chunks (nn_geom.h's
 * tb_cu_row_chunks: enough groups to fill the device, as many partials as
 * fit in the instance's scratch buffer); a group of threads (warp or
 * block, as the forward) takes one chunk and its rows in order: the
 * row's mean and rstd recomputed as the forward does, the sums of
 * g*w and g*w*xhat, dx, and the chunk's partial sums of g*xhat (dw) and
 * g (db) per column, each column owned by one lane of the group (no
 * atomics).  A second launch adds the chunks' partials in chunk order,
 * so dw and db are the same bits every run on a device.  Everything in
 * double.  Partials need rows' chunks x D (x 2) doubles of scratch: a D
 * too large for even one chunk (above about 2 x resident threads) is
 * refused with TB_ENOMEM. */
#include "kernels_ext.cuh"
#include "nn_geom.h"

/* The mean (0 for rms_norm) and 1 / sqrt(var + eps) of a row of n
 * elements, `count` of them this group's (0 for an idle group), as the
 * reference: the mean, then the squared deviations from it. */
template <typename T, bool RMS>
static __device__ __forceinline__ double
cu_row_rstd(const T *xr, int64_t count, double n, int group, int lane,
            double *part, double eps, double *mean)
{
    double m = 0;
    if (!RMS) {
        double s = 0;
        for (int64_t j = lane; j < count; j += group)
            s += (double)xr[j];
        m = cu_group_sum(s, group, part) / n;
    }
    double ss = 0;
    for (int64_t j = lane; j < count; j += group) {
        const double d = (double)xr[j] - m;
        ss += d * d;
    }
    ss = cu_group_sum(ss, group, part);
    *mean = m;
    return 1 / sqrt(ss / n + eps);
}

/* p.items rows of p.len elements; b is NULL for rms_norm. */
template <typename T, bool RMS>
__global__ void k_norm_rows(const T *x, const T *w, const T *b, T *y,
                            tb_reduce_plan p, double eps)
{
    __shared__ double part[TB_CU_BLOCK / CU_WARP];
    const int group = p.group;
    const int per_block = p.block / group;
    const int g = (int)threadIdx.x / group, lane = (int)threadIdx.x % group;
    const int64_t rounds = (p.items + per_block - 1) / per_block;
    const double n = (double)p.len;
    for (int64_t r = blockIdx.x; r < rounds; r += gridDim.x) {
        const int64_t row = r * per_block + g;
        const bool valid = row < p.items;
        const T *xr = x + (valid ? row * p.len : 0);
        const int64_t count = valid ? p.len : 0;
        double mean;
        const double inv = cu_row_rstd<T, RMS>(xr, count, n, group, lane,
                                               part, eps, &mean);
        T *yr = y + (valid ? row * p.len : 0);
        for (int64_t j = lane; j < count; j += group) {
            double v = ((double)xr[j] - mean) * inv * (double)w[j];
            if (!RMS)
                v += (double)b[j];
            yr[j] = (T)v;
        }
    }
}

/* The n vectors t[0..n) (w, b, dw, db) are [D], and eps (param 0) is
 * >= 0: 0, TB_ESHAPE or TB_EPARAM. */
static int norm_vecs_eps(const tb_tensor *t, int n, int64_t D,
                         const tb_params *p, double *eps)
{
    for (int i = 0; i < n; i++)
        if (t[i].ndim != 1 || t[i].shape[0] != D)
            return TB_ESHAPE;
    int rc = cu_param(p, 0, eps);
    if (rc)
        return rc;
    return *eps >= 0 ? 0 : TB_EPARAM;
}

template <typename T, bool RMS>
static int run_norm(void *ctx, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    const int n_in = RMS ? 2 : 3;
    if (!cu_args_ok(c, in, n_in, out, cu_dt<T>()))
        return TB_EINVAL;
    if (in[0].ndim < 1 || !cu_same_shape(&in[0], &out[0]))
        return TB_ESHAPE;
    const int64_t D = in[0].shape[in[0].ndim - 1];
    double eps;
    int rc = norm_vecs_eps(&in[1], n_in - 1, D, p, &eps);
    if (rc)
        return rc;
    const int64_t n = cu_numel(&in[0]);
    if (n == 0)
        return 0;
    /* max_partials 0: one chunk per row, never split */
    tb_reduce_plan pl = tb_reduce_plan_make(n / D, D, 1, c->target_threads,
                                            0, c->max_blocks);
    return cu_launch(c, k_norm_rows<T, RMS>, pl.blocks, pl.block, 0,
                     (const T *)in[0].data, (const T *)in[1].data,
                     RMS ? (const T *)NULL : (const T *)in[2].data,
                     (T *)out[0].data, pl, eps);
}

template <typename T>
static int kf_layer_norm(void *ctx, const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    return run_norm<T, false>(ctx, in, out, p);
}

template <typename T>
static int kf_rms_norm(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    return run_norm<T, true>(ctx, in, out, p);
}

/* ---- gradients ------------------------------------------------------------ */

/* Pass 1: group gi of block b takes chunk b * (blockDim / group) + gi of
 * nch; part holds the chunks' partials [nch][np][D] (np: 2 with db, 1). */
template <typename T, bool RMS>
__global__ void k_norm_bw_chunks(const T *g, const T *x, const T *w, T *dx,
                                 double *part, int64_t rows, int64_t D,
                                 int64_t nch, int group, double eps)
{
    __shared__ double sp[TB_CU_BLOCK / CU_WARP];
    const int per_block = (int)blockDim.x / group;
    const int gi = (int)threadIdx.x / group, lane = (int)threadIdx.x % group;
    const int64_t c = (int64_t)blockIdx.x * per_block + gi;
    /* only a warp leaves early: a block-wide group always has a chunk
     * (one block per chunk), so its __syncthreads stay uniform */
    if (c >= nch)
        return;
    const int np = RMS ? 1 : 2;
    double *pw = part + c * np * D, *pb = RMS ? NULL : pw + D;
    for (int64_t k = lane; k < D; k += group) { /* lane k % group owns k */
        pw[k] = 0;
        if (!RMS)
            pb[k] = 0;
    }
    int64_t r0, r1;
    tb_cu_chunk_rows(rows, nch, c, &r0, &r1);
    const double n = (double)D;
    for (int64_t r = r0; r < r1; r++) {
        const T *xr = x + r * D, *gr = g + r * D;
        double mean;
        const double rstd = cu_row_rstd<T, RMS>(xr, D, n, group, lane, sp,
                                                eps, &mean);
        double sg = 0, sgx = 0;
        for (int64_t k = lane; k < D; k += group) {
            const double xh = ((double)xr[k] - mean) * rstd;
            const double gk = (double)gr[k], gh = gk * (double)w[k];
            sg += gh;
            sgx += gh * xh;
            pw[k] += gk * xh;
            if (!RMS)
                pb[k] += gk;
        }
        sg = RMS ? 0 : cu_group_sum(sg, group, sp);
        sgx = cu_group_sum(sgx, group, sp);
        const double a = sg / n, b = sgx / n;
        T *dr = dx + r * D;
        for (int64_t k = lane; k < D; k += group) {
            const double xh = ((double)xr[k] - mean) * rstd;
            const double gh = (double)gr[k] * (double)w[k];
            dr[k] = (T)(rstd * (gh - a - xh * b));
        }
    }
}

/* Pass 2: dw[k] (and db[k]) = the nch chunks' partials in chunk order. */
template <typename T>
__global__ void k_norm_bw_sum(const double *part, T *dw, T *db, int64_t D,
                              int64_t nch, int np)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         e < np * D; e += step) {
        const int64_t i = e / D, k = e % D;
        double s = 0;
        for (int64_t c = 0; c < nch; c++)
            s += part[(c * np + i) * D + k];
        (i ? db : dw)[k] = (T)s;
    }
}

template <typename T, bool RMS>
static int run_norm_bw(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    const int np = RMS ? 1 : 2;
    if (!cu_args_ok(c, in, 3, out, cu_dt<T>()))
        return TB_EINVAL;
    for (int i = 1; i <= np; i++)
        if (!cu_operand_ok(&out[i], cu_dt<T>()))
            return TB_EINVAL;
    if (in[1].ndim < 1 || !cu_same_shape(&in[0], &in[1]) ||
        !cu_same_shape(&in[1], &out[0]))
        return TB_ESHAPE;
    const int64_t D = in[1].shape[in[1].ndim - 1];
    double eps;
    int rc = norm_vecs_eps(&in[2], 1, D, p, &eps);
    if (rc || (rc = norm_vecs_eps(&out[1], np, D, p, &eps)))
        return rc;
    if (D == 0)
        return 0;
    const int64_t rows = cu_numel(&in[1]) / D;
    const int group = D >= 1024 ? TB_CU_BLOCK : 32;
    const int64_t nch = tb_cu_row_chunks(rows, c->target_threads / group,
                                         c->scratch_elems / (np * D));
    if (rows > 0 && nch == 0)
        return TB_ENOMEM; /* not one chunk's partials fit the scratch */
    T *dw = (T *)out[1].data, *db = RMS ? (T *)NULL : (T *)out[2].data;
    if (nch > 0) {
        const int per_block = TB_CU_BLOCK / group;
        rc = cu_launch(c, k_norm_bw_chunks<T, RMS>,
                       (nch + per_block - 1) / per_block, TB_CU_BLOCK, 0,
                       (const T *)in[0].data, (const T *)in[1].data,
                       (const T *)in[2].data, (T *)out[0].data, c->scratch,
                       rows, D, nch, group, eps);
        if (rc)
            return rc;
    }
    return cu_launch(c, k_norm_bw_sum<T>,
                     tb_cu_blocks_1d(np * D, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, (const double *)c->scratch, dw, db, D,
                     nch, np);
}

template <typename T>
static int kf_layer_norm_backward(void *ctx, const tb_tensor *in,
                                  tb_tensor *out, const tb_params *p)
{
    return run_norm_bw<T, false>(ctx, in, out, p);
}

template <typename T>
static int kf_rms_norm_backward(void *ctx, const tb_tensor *in,
                                tb_tensor *out, const tb_params *p)
{
    return run_norm_bw<T, true>(ctx, in, out, p);
}

static const cu_ext_entry cu_norms[] = {
    CU_EXT_ROW_T(layer_norm, kf_layer_norm)
    CU_EXT_ROW_T(rms_norm, kf_rms_norm)
    CU_EXT_ROW_T(layer_norm_backward, kf_layer_norm_backward)
    CU_EXT_ROW_T(rms_norm_backward, kf_rms_norm_backward)
};

tb_kernel_fn cu_norm_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_norms, sizeof cu_norms / sizeof cu_norms[0], id,
                       dt, impl);
}
