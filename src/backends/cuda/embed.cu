/* The embedding family of the CUDA module, f32 and f64: cross_entropy and
 * its gradient, nll_loss (the same kernels: cross_entropy_unfused runs on
 * cuda through its steps, log_softmax and nll_loss), embedding and its
 * gradient, dropout.
 *
 * Indices (cross_entropy's targets, an embedding's idx: integers held as
 * values) are checked before anything is written: a first launch sets a
 * flag (one double at the end of the instance's scratch buffer, zeroed by
 * cudaMemsetAsync) when any value is not an integer in [0, bound)
 * (nn_geom.h's tb_cu_index, tb_bw_class's rule), the flag is copied back
 * and the stream synchronized, and a set flag returns TB_EINVAL with no
 * kernel of the op launched.  That costs one check launch and one
 * synchronization per call, inside the timed region.
 *
 * cross_entropy: the reductions' rows plan over the logits [N, C] (a warp
 * per row below 1024 classes, else the block); per row the max M, the sum
 * S of exp(x - M) in double (exponentials in the dtype, as the cpu rows),
 * and the loss (M - x_t) + log S in double, added to the group's running
 * total in row order; each group writes its total to the scratch buffer
 * and a second launch (one block) adds the totals in a fixed order and
 * divides by N: the same bits every run on a device.  The gradient
 * recomputes M and S per row and writes exp(x - M) * (g / (N S)), the
 * target's element in double (softmax - 1 cancels), as the cpu rows.
 *
 * embedding: a gather, one thread per output element.  Its gradient
 * without atomics: a block per row v of dW (grid-stride), its threads
 * over the columns, scanning all the indices in order (256 at a time
 * through shared memory) and adding the g rows whose index is v, in the
 * dtype from 0: the cpu rows' order, so the same bits as theirs.  It
 * reads the indices once per row of dW (V x n comparisons): correct
 * first, not fast for large V.
 *
 * dropout: element-wise, the keep bit of element i from ops/rand.h's
 * tb_rand_keep (TB_HOSTDEV: the very function the cpu rows call),
 * out = x * (keep ? s : 0) with s = 1 / (1 - p) rounded in the dtype: the
 * cpu rows' outputs bit for bit. */
#include "../../ops/rand.h"
#include "kernels_ext.cuh"
#include "nn_geom.h"

/* ---- index checks -------------------------------------------------------- */

template <typename T>
__global__ void k_index_check(const T *idx, int64_t n, int64_t bound,
                              double *flag)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        if (tb_cu_index((double)idx[i], bound) < 0)
            *flag = 1; /* every writer stores the same value */
}

/* 0 when the n values of idx (device memory) are all integers in
 * [0, bound), TB_EINVAL when one is not; waits for the check. */
template <typename T>
static int cu_indices_ok(cu_ctx *c, const T *idx, int64_t n, int64_t bound)
{
    if (n == 0)
        return 0;
    int rc = cu_use_device(c->device);
    if (rc)
        return rc;
    double *flag = c->scratch + c->scratch_elems - 1;
    if ((rc = cu_err(cudaMemsetAsync(flag, 0, sizeof *flag, c->stream))))
        return rc;
    rc = cu_launch(c, k_index_check<T>,
                   tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                   TB_CU_BLOCK, 0, idx, n, bound, flag);
    if (rc)
        return rc;
    double bad = 0;
    if ((rc = cu_read_back(c, &bad, flag, sizeof bad)))
        return rc;
    return bad != 0 ? TB_EINVAL : 0;
}

/* ---- cross_entropy -------------------------------------------------------- */

/* M and S of a row of `count` values (0 for an idle group member row),
 * to every thread of the group.  A NaN or +inf makes S NaN (exp(NaN),
 * inf - inf), a row of -inf gives M = -inf and S NaN: the cpu rows'. */
template <typename T>
static __device__ __forceinline__ void xent_stats(const T *xr, int64_t count,
                                                  int group, int lane,
                                                  double *sp, double *M,
                                                  double *S)
{
    T mx = -(T)INFINITY;
    for (int64_t j = lane; j < count; j += group)
        mx = xr[j] > mx ? xr[j] : mx;
    const double m = cu_group_max((double)mx, group, sp);
    const T mt = (T)m;
    double s = 0;
    for (int64_t j = lane; j < count; j += group)
        s += (double)cu_exp((T)(xr[j] - mt));
    *M = m;
    *S = cu_group_sum(s, group, sp);
}

/* What k_xent computes per row. */
enum { XENT_LOSS, NLL_LOSS, XENT_GRAD };

/* The rows plan p over x [N, C] (targets t), one kernel for the three
 * modes.  XENT_LOSS: cross_entropy's (M - x_t) + log S; NLL_LOSS:
 * nll_loss's -x_t (x holds log-probabilities); both add each group's
 * losses in row order and write the total to part[blockIdx.x * groups
 * per block + group].  XENT_GRAD: the row of dx, g a device scalar. */
template <typename T, int MODE>
__global__ void k_xent(const T *gp, const T *x, const T *t, T *dx,
                       double *part, tb_reduce_plan p)
{
    __shared__ double sp[TB_CU_BLOCK / CU_WARP];
    const int group = p.group;
    const int per_block = p.block / group;
    const int g = (int)threadIdx.x / group, lane = (int)threadIdx.x % group;
    const int64_t rounds = (p.items + per_block - 1) / per_block;
    const double gn = MODE == XENT_GRAD ? (double)gp[0] / (double)p.items
                                        : 0;
    double acc = 0;
    for (int64_t r = blockIdx.x; r < rounds; r += gridDim.x) {
        const int64_t row = r * per_block + g;
        const bool valid = row < p.items;
        const int64_t count = valid ? p.len : 0;
        const T *xr = x + (valid ? row * p.len : 0);
        double M = 0, S = 1;
        if (MODE != NLL_LOSS)
            xent_stats(xr, count, group, lane, sp, &M, &S);
        const int64_t k = valid ? tb_cu_index((double)t[row], p.len) : -1;
        if (MODE != XENT_GRAD) {
            if (valid && lane == 0)
                acc += MODE == XENT_LOSS ? (M - (double)xr[k]) + log(S)
                                         : -(double)xr[k];
            continue;
        }
        const T mt = (T)M, sc = (T)(gn / S);
        T *dr = dx + (valid ? row * p.len : 0);
        for (int64_t j = lane; j < count; j += group)
            dr[j] = j == k ? (T)(exp((double)xr[j] - M) / S * gn - gn)
                           : cu_exp((T)(xr[j] - mt)) * sc;
    }
    if (MODE != XENT_GRAD && lane == 0)
        part[(int64_t)blockIdx.x * per_block + g] = acc;
}

/* Pass 2, one block: out = (the n totals, in a fixed order) / N. */
template <typename T>
__global__ void k_xent_mean(const double *part, int64_t n, int64_t N,
                            T *out)
{
    __shared__ double sp[TB_CU_BLOCK / CU_WARP];
    double s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        s += part[i];
    s = cu_group_sum(s, (int)blockDim.x, sp);
    if (threadIdx.x == 0)
        *out = (T)(s / (double)N);
}

/* logits x [N, C] and targets t [N] of the forward (xi = 0) or the
 * gradient (xi = 1, after g); 0 or TB_E*. */
template <typename T>
static int xent_check(cu_ctx *c, const tb_tensor *in, int xi, int n_in,
                      const tb_tensor *out)
{
    if (!cu_args_ok(c, in, n_in, out, cu_dt<T>()))
        return TB_EINVAL;
    const tb_tensor *x = &in[xi], *t = &in[xi + 1];
    if (x->ndim != 2 || t->ndim != 1 || t->shape[0] != x->shape[0])
        return TB_ESHAPE;
    if (x->shape[0] > 0 && x->shape[1] == 0)
        return TB_EINVAL; /* no class for any target */
    return cu_indices_ok(c, (const T *)t->data, t->shape[0], x->shape[1]);
}

template <typename T, int MODE>
static int run_xent(void *ctx, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    (void)p;
    cu_ctx *c = (cu_ctx *)ctx;
    int rc = xent_check<T>(c, in, 0, 2, out);
    if (rc)
        return rc;
    if (cu_numel(&out[0]) != 1)
        return TB_ESHAPE;
    const int64_t N = in[0].shape[0], C = in[0].shape[1];
    int64_t parts = 0;
    if (N > 0) {
        tb_reduce_plan pl = tb_reduce_plan_make(N, C, 1, c->target_threads,
                                                0, c->max_blocks);
        parts = pl.blocks * (pl.block / pl.group);
        rc = cu_launch(c, k_xent<T, MODE>, pl.blocks, pl.block, 0,
                       (const T *)NULL, (const T *)in[0].data,
                       (const T *)in[1].data, (T *)NULL, c->scratch, pl);
        if (rc)
            return rc;
    }
    /* N == 0: 0 / 0, NaN, as the cpu rows and PyTorch */
    return cu_launch(c, k_xent_mean<T>, 1, TB_CU_BLOCK, 0,
                     (const double *)c->scratch, parts, N,
                     (T *)out[0].data);
}

template <typename T>
static int kf_cross_entropy(void *ctx, const tb_tensor *in, tb_tensor *out,
                            const tb_params *p)
{
    return run_xent<T, XENT_LOSS>(ctx, in, out, p);
}

template <typename T>
static int kf_nll_loss(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    return run_xent<T, NLL_LOSS>(ctx, in, out, p);
}

template <typename T>
static int kf_cross_entropy_backward(void *ctx, const tb_tensor *in,
                                     tb_tensor *out, const tb_params *p)
{
    (void)p;
    cu_ctx *c = (cu_ctx *)ctx;
    int rc = xent_check<T>(c, in, 1, 3, out);
    if (rc)
        return rc;
    if (cu_numel(&in[0]) != 1 || !cu_same_shape(&in[1], &out[0]))
        return TB_ESHAPE;
    const int64_t N = in[1].shape[0], C = in[1].shape[1];
    if (N * C == 0)
        return 0;
    tb_reduce_plan pl = tb_reduce_plan_make(N, C, 1, c->target_threads, 0,
                                            c->max_blocks);
    return cu_launch(c, k_xent<T, XENT_GRAD>, pl.blocks, pl.block, 0,
                     (const T *)in[0].data, (const T *)in[1].data,
                     (const T *)in[2].data, (T *)out[0].data,
                     (double *)NULL, pl);
}

/* ---- embedding ------------------------------------------------------------ */

template <typename T>
__global__ void k_embed(const T *w, const T *idx, T *o, int64_t n,
                        int64_t D)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         e < n * D; e += step) {
        const int64_t r = e / D;
        o[e] = w[(int64_t)idx[r] * D + (e - r * D)];
    }
}

/* Indices staged per tile of the gradient's scan (= its block size). */
#define CU_EMB_TILE TB_CU_BLOCK

template <typename T>
__global__ void k_embed_bwd(const T *g, const T *idx, T *dw, int64_t n,
                            int64_t D, int64_t V)
{
    __shared__ int64_t rows[CU_EMB_TILE];
    const int64_t tid = threadIdx.x;
    /* v and k0 are the same for the whole block (the __syncthreads) */
    for (int64_t v = blockIdx.x; v < V; v += gridDim.x)
        for (int64_t k0 = 0; k0 < D; k0 += blockDim.x) {
            const int64_t k = k0 + tid;
            T acc = 0;
            for (int64_t r0 = 0; r0 < n; r0 += CU_EMB_TILE) {
                const int64_t rn = n - r0 < CU_EMB_TILE ? n - r0
                                                        : CU_EMB_TILE;
                __syncthreads(); /* the last tile's reads are done */
                if (tid < rn)
                    rows[tid] = (int64_t)idx[r0 + tid];
                __syncthreads();
                if (k < D)
                    for (int64_t i = 0; i < rn; i++)
                        if (rows[i] == v)
                            acc += g[(r0 + i) * D + k];
            }
            if (k < D)
                dw[v * D + k] = acc;
        }
}

template <typename T>
static int kf_embedding(void *ctx, const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    (void)p;
    cu_ctx *c = (cu_ctx *)ctx;
    if (!cu_args_ok(c, in, 2, out, cu_dt<T>()))
        return TB_EINVAL;
    const tb_tensor *w = &in[0], *idx = &in[1];
    if (w->ndim != 2 || out[0].ndim != idx->ndim + 1 ||
        out[0].shape[idx->ndim] != w->shape[1])
        return TB_ESHAPE;
    for (int d = 0; d < idx->ndim; d++)
        if (out[0].shape[d] != idx->shape[d])
            return TB_ESHAPE;
    const int64_t n = cu_numel(idx), D = w->shape[1];
    int rc = cu_indices_ok(c, (const T *)idx->data, n, w->shape[0]);
    if (rc || n * D == 0)
        return rc;
    return cu_launch(c, k_embed<T>,
                     tb_cu_blocks_1d(n * D, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, (const T *)w->data,
                     (const T *)idx->data, (T *)out[0].data, n, D);
}

template <typename T>
static int kf_embedding_backward(void *ctx, const tb_tensor *in,
                                 tb_tensor *out, const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!cu_args_ok(c, in, 2, out, cu_dt<T>()))
        return TB_EINVAL;
    const tb_tensor *g = &in[0], *idx = &in[1];
    int64_t V;
    int rc = cu_param_int(p, 0, 1, INT64_MAX, &V);
    if (rc)
        return rc;
    if (g->ndim != idx->ndim + 1 || out[0].ndim != 2 ||
        out[0].shape[0] != V || out[0].shape[1] != g->shape[idx->ndim])
        return TB_ESHAPE;
    for (int d = 0; d < idx->ndim; d++)
        if (g->shape[d] != idx->shape[d])
            return TB_ESHAPE;
    const int64_t n = cu_numel(idx), D = out[0].shape[1];
    if ((rc = cu_indices_ok(c, (const T *)idx->data, n, V)) || D == 0)
        return rc;
    return cu_launch(c, k_embed_bwd<T>, V < c->max_blocks ? V : c->max_blocks,
                     CU_EMB_TILE, 0, (const T *)g->data,
                     (const T *)idx->data, (T *)out[0].data, n, D, V);
}

/* ---- dropout ---------------------------------------------------------------- */

template <typename T>
__global__ void k_dropout(const T *x, T *o, int64_t n, uint64_t key,
                          uint64_t thr, T s)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        o[i] = x[i] * (tb_rand_keep(key, (uint64_t)i, thr) ? s : (T)0);
}

template <typename T>
static int kf_dropout(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!cu_args_ok(c, in, 1, out, cu_dt<T>()))
        return TB_EINVAL;
    if (!cu_same_shape(&in[0], &out[0]))
        return TB_ESHAPE;
    double pr, seed;
    int rc = cu_param(p, 0, &pr);
    if (rc || (rc = cu_param(p, 1, &seed)))
        return rc;
    if (!(pr >= 0 && pr < 1))
        return TB_EPARAM;
    const int64_t n = cu_numel(&in[0]);
    if (n == 0)
        return 0;
    const T s = (T)1 / (T)(1 - pr); /* the cpu rows' rounding */
    return cu_launch(c, k_dropout<T>,
                     tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, (const T *)in[0].data,
                     (T *)out[0].data, n, tb_rand_key(tb_rand_seed(seed)),
                     tb_rand_keep_threshold(pr), s);
}

static const cu_ext_entry cu_embeds[] = {
    CU_EXT_ROW(cross_entropy, kf_cross_entropy<float>,
               kf_cross_entropy<double>)
    CU_EXT_ROW(cross_entropy_backward, kf_cross_entropy_backward<float>,
               kf_cross_entropy_backward<double>)
    CU_EXT_ROW(nll_loss, kf_nll_loss<float>, kf_nll_loss<double>)
    CU_EXT_ROW(embedding, kf_embedding<float>, kf_embedding<double>)
    CU_EXT_ROW(embedding_backward, kf_embedding_backward<float>,
               kf_embedding_backward<double>)
    CU_EXT_ROW(dropout, kf_dropout<float>, kf_dropout<double>)
};

tb_kernel_fn cu_embed_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_embeds, sizeof cu_embeds / sizeof cu_embeds[0],
                       id, dt, impl);
}
