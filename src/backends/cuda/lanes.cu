/* Lane reductions of the CUDA module: max, min, argmax and var, over all
 * elements or along one axis (keepdim either way), f32 and f64.
 *
 * The tensor is viewed as [outer, len, inner] (tb_reduce_view,
 * geometry.h); each of the outer*inner lanes is reduced by one block of
 * TB_CU_BLOCK threads (strided loads, then a shared-memory tree), blocks
 * striding over the lanes.  When the lanes are too few to fill the GPU
 * (a global reduction is one lane, which one block on one SM would
 * read alone) the lanes are split in two stages instead (lanes_plan.h):
 * stage 1, one block per (lane, chunk), writes a partial to the
 * instance's scratch buffer; stage 2, one block per lane, folds the
 * lane's partials and writes the result.  Two launches and no atomics,
 * so the result is the same every run, as reduce.cu's sum.
 * Semantics as the reference (src/ops/ref.c): max/min propagate NaN;
 * argmax is the index of the first maximum or the first NaN, written as
 * a value of the case dtype; var is the corrected two-pass algorithm,
 * accumulated in double, over n - correction. */
#include "kernels_ext.cuh"
#include "lanes_plan.h"

enum { L_MAX, L_MIN, L_ARGMAX, L_VAR };

template <typename T>
static __device__ __forceinline__ bool am_better(T a, int64_t ia, T b,
                                                 int64_t ib)
{
    return tb_argmax_better((double)a, ia, (double)b, ib);
}

template <typename T>
static __device__ __forceinline__ T mm(T a, T b, bool is_max)
{
    return (T)tb_nan_minmax((double)a, (double)b, is_max);
}

struct lane_geom {
    int64_t lanes, len, inner;
    int64_t corr;
};

template <typename T, int OP>
__global__ void k_lanes(const T *__restrict__ x, T *__restrict__ y,
                        lane_geom g)
{
    __shared__ double sd[TB_CU_BLOCK];
    __shared__ double sd2[TB_CU_BLOCK];
    __shared__ int64_t si[TB_CU_BLOCK];
    __shared__ T sv[TB_CU_BLOCK];
    int t = threadIdx.x;
    for (int64_t l = blockIdx.x; l < g.lanes; l += gridDim.x) {
        int64_t o = l / g.inner, in = l - o * g.inner;
        const T *base = x + o * g.len * g.inner + in;
        if (OP == L_VAR) {
            double s = 0;
            for (int64_t j = t; j < g.len; j += blockDim.x)
                s += (double)base[j * g.inner];
            sd[t] = s;
            __syncthreads();
            for (int w = blockDim.x / 2; w > 0; w /= 2) {
                if (t < w)
                    sd[t] += sd[t + w];
                __syncthreads();
            }
            double mean = sd[0] / (double)g.len;
            __syncthreads();
            double d = 0, d2 = 0;
            for (int64_t j = t; j < g.len; j += blockDim.x) {
                double v = (double)base[j * g.inner] - mean;
                d += v;
                d2 += v * v;
            }
            sd[t] = d;
            sd2[t] = d2;
            __syncthreads();
            for (int w = blockDim.x / 2; w > 0; w /= 2) {
                if (t < w) {
                    sd[t] += sd[t + w];
                    sd2[t] += sd2[t + w];
                }
                __syncthreads();
            }
            if (t == 0)
                y[l] = (T)((sd2[0] - sd[0] * sd[0] / (double)g.len) /
                           (double)(g.len - g.corr));
        } else {
            /* thread t starts from element t (len >= 1: thread 0 has
             * one; an idle thread starts as "no element", index -1) */
            T acc = T(0);
            int64_t at = -1;
            for (int64_t j = t; j < g.len; j += blockDim.x) {
                T v = base[j * g.inner];
                if (at < 0) {
                    acc = v;
                    at = j;
                } else if (OP == L_ARGMAX) {
                    if (am_better(v, j, acc, at)) {
                        acc = v;
                        at = j;
                    }
                } else {
                    acc = mm(acc, v, OP == L_MAX);
                }
            }
            sv[t] = acc;
            si[t] = at;
            __syncthreads();
            for (int w = blockDim.x / 2; w > 0; w /= 2) {
                if (t < w && si[t + w] >= 0) {
                    T b = sv[t + w];
                    int64_t ib = si[t + w];
                    if (si[t] < 0 ||
                        (OP == L_ARGMAX ? am_better(b, ib, sv[t], si[t])
                                        : false)) {
                        sv[t] = b;
                        si[t] = ib;
                    } else if (OP != L_ARGMAX) {
                        sv[t] = mm(sv[t], b, OP == L_MAX);
                    }
                }
                __syncthreads();
            }
            if (t == 0)
                y[l] = OP == L_ARGMAX ? (T)si[0] : sv[0];
        }
        __syncthreads();
    }
}

/* Doubles per stage-1 partial: value; value and index; (n, mean, m2). */
template <int OP> static constexpr int part_size()
{
    return OP == L_VAR ? 3 : OP == L_ARGMAX ? 2 : 1;
}

/* Fold (b at ib) into (a at ia), as the one-stage tree does; ia < 0 is
 * "nothing yet". */
template <int OP>
static __device__ __forceinline__ void fold(double *a, int64_t *ia, double b,
                                            int64_t ib)
{
    if (ib < 0)
        return;
    if (*ia < 0 || (OP == L_ARGMAX && tb_argmax_better(b, ib, *a, *ia))) {
        *a = b;
        *ia = ib;
    } else if (OP != L_ARGMAX) {
        *a = tb_nan_minmax(*a, b, OP == L_MAX);
    }
}

/* Block-wide fold of each thread's (v, iv) or (n, mean, m2) into thread
 * 0's; s* are the block's shared arrays. */
template <int OP>
static __device__ void block_fold(double *v, int64_t *iv, double *n,
                                  double *mean, double *m2, double *sv,
                                  int64_t *si, double *sn, double *sm,
                                  double *s2)
{
    int t = threadIdx.x;
    if (OP == L_VAR) {
        sn[t] = *n;
        sm[t] = *mean;
        s2[t] = *m2;
    } else {
        sv[t] = *v;
        si[t] = *iv;
    }
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (t < w) {
            if (OP == L_VAR)
                tb_var_merge(&sn[t], &sm[t], &s2[t], sn[t + w], sm[t + w],
                             s2[t + w]);
            else
                fold<OP>(&sv[t], &si[t], sv[t + w], si[t + w]);
        }
        __syncthreads();
    }
    if (OP == L_VAR) {
        *n = sn[0];
        *mean = sm[0];
        *m2 = s2[0];
    } else {
        *v = sv[0];
        *iv = si[0];
    }
    __syncthreads(); /* the arrays are reused by the next item */
}

/* Stage 1: partial of each (lane, chunk) item into part. */
template <typename T, int OP>
__global__ void k_lanes_part(const T *__restrict__ x,
                             double *__restrict__ part, lane_geom g,
                             tb_lane_plan p)
{
    __shared__ double sv[TB_CU_BLOCK], sn[TB_CU_BLOCK], sm[TB_CU_BLOCK],
        s2[TB_CU_BLOCK];
    __shared__ int64_t si[TB_CU_BLOCK];
    for (int64_t it = blockIdx.x; it < p.items; it += gridDim.x) {
        int64_t l, first, count;
        tb_lane_chunk(&p, it, &l, &first, &count);
        int64_t o = l / g.inner, in = l - o * g.inner;
        const T *base = x + o * g.len * g.inner + in;
        double v = 0, n = 0, mean = 0, m2 = 0;
        int64_t iv = -1;
        for (int64_t j = first + threadIdx.x; j < first + count;
             j += blockDim.x) {
            double e = (double)base[j * g.inner];
            if (OP == L_VAR)
                tb_var_push(&n, &mean, &m2, e);
            else
                fold<OP>(&v, &iv, e, j);
        }
        block_fold<OP>(&v, &iv, &n, &mean, &m2, sv, si, sn, sm, s2);
        if (threadIdx.x == 0) {
            if (OP == L_VAR) {
                part[3 * it] = n;
                part[3 * it + 1] = mean;
                part[3 * it + 2] = m2;
            } else {
                part[it] = v;
                if (OP == L_ARGMAX)
                    part[p.items + it] = (double)iv;
            }
        }
    }
}

/* Stage 2: one block per lane folds its chunks' partials into y. */
template <typename T, int OP>
__global__ void k_lanes_final(const double *__restrict__ part,
                              T *__restrict__ y, tb_lane_plan p,
                              int64_t corr)
{
    __shared__ double sv[TB_CU_BLOCK], sn[TB_CU_BLOCK], sm[TB_CU_BLOCK],
        s2[TB_CU_BLOCK];
    __shared__ int64_t si[TB_CU_BLOCK];
    for (int64_t l = blockIdx.x; l < p.lanes; l += gridDim.x) {
        double v = 0, n = 0, mean = 0, m2 = 0;
        int64_t iv = -1;
        for (int64_t c = threadIdx.x; c < p.chunks; c += blockDim.x) {
            int64_t it = l * p.chunks + c;
            if (OP == L_VAR)
                tb_var_merge(&n, &mean, &m2, part[3 * it],
                             part[3 * it + 1], part[3 * it + 2]);
            else
                fold<OP>(&v, &iv, part[it],
                         OP == L_ARGMAX ? (int64_t)part[p.items + it] : c);
        }
        block_fold<OP>(&v, &iv, &n, &mean, &m2, sv, si, sn, sm, s2);
        if (threadIdx.x == 0)
            y[l] = OP == L_VAR      ? (T)(m2 / (n - (double)corr))
                   : OP == L_ARGMAX ? (T)iv
                                    : (T)v;
    }
}

template <typename T, int OP>
static int kf_lanes(void *ctx, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    const tb_dtype dt = cu_dt<T>();
    if (!cu_args_ok(c, in, 1, out, dt))
        return TB_EINVAL;
    const tb_tensor *x = &in[0];
    int64_t keep, corr = 0;
    if (cu_param_int(p, 1, 0, 1, &keep) ||
        (OP == L_VAR && cu_param_int(p, 2, 0, INT64_C(1) << 40, &corr)))
        return TB_EPARAM;
    int axis = -1;
    if (cu_param_has(p, 0)) {
        int64_t a;
        if (cu_param_int(p, 0, -x->ndim, x->ndim - 1, &a) || x->ndim < 1)
            return TB_EPARAM;
        axis = (int)(a < 0 ? a + x->ndim : a);
    }
    /* the output shape of shape_reduce (src/ops/op.c) */
    int64_t oshape[TB_MAX_DIMS];
    int ond = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (axis >= 0 && d != axis)
            oshape[ond++] = x->shape[d];
        else if (keep)
            oshape[ond++] = 1;
    }
    if (out[0].ndim != ond)
        return TB_ESHAPE;
    for (int d = 0; d < ond; d++)
        if (out[0].shape[d] != oshape[d])
            return TB_ESHAPE;
    lane_geom g;
    int64_t outer;
    tb_reduce_view(x->shape, x->ndim, axis, &outer, &g.len, &g.inner);
    g.lanes = outer * g.inner;
    g.corr = corr;
    if (g.len < 1 || (OP == L_VAR && g.len <= corr) ||
        (OP == L_ARGMAX && g.len > (INT64_C(1) << 24)))
        return TB_ESHAPE;
    if (g.lanes == 0)
        return 0;
    tb_lane_plan pl = tb_lane_plan_make(
        g.lanes, g.len, TB_CU_BLOCK, 2 * (c->target_threads / TB_CU_BLOCK),
        c->scratch_elems / part_size<OP>());
    if (pl.chunks > 1) {
        int64_t b1 = pl.items < c->max_blocks ? pl.items : c->max_blocks;
        int64_t b2 = pl.lanes < c->max_blocks ? pl.lanes : c->max_blocks;
        int rc = cu_launch(c, k_lanes_part<T, OP>, b1, TB_CU_BLOCK, 0,
                           (const T *)x->data, c->scratch, g, pl);
        return rc ? rc
                  : cu_launch(c, k_lanes_final<T, OP>, b2, TB_CU_BLOCK, 0,
                              (const double *)c->scratch, (T *)out[0].data,
                              pl, corr);
    }
    int64_t blocks = g.lanes < c->max_blocks ? g.lanes : c->max_blocks;
    return cu_launch(c, k_lanes<T, OP>, blocks, TB_CU_BLOCK, 0,
                     (const T *)x->data, (T *)out[0].data, g);
}

#define LANE_ROW(op, k)                                                   \
    CU_EXT_ROW(op, (kf_lanes<float, k>), (kf_lanes<double, k>))
static const cu_ext_entry cu_lanes[] = {
    LANE_ROW(max, L_MAX) LANE_ROW(min, L_MIN) LANE_ROW(argmax, L_ARGMAX)
    LANE_ROW(var, L_VAR)
};
#undef LANE_ROW

tb_kernel_fn cu_lanes_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_lanes, sizeof cu_lanes / sizeof cu_lanes[0], id, dt,
                       impl);
}
