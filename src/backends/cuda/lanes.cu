/* Lane reductions of the CUDA module: max, min, argmax and var, over all
 * elements or along one axis (keepdim either way), f32 and f64.
 *
 * The tensor is viewed as [outer, len, inner] (tb_reduce_view,
 * geometry.h); each of the outer*inner lanes is reduced by one block of
 * TB_CU_BLOCK threads (strided loads, then a shared-memory tree), blocks
 * striding over the lanes.  Simple and exact, but a global reduction is
 * one lane on one SM: fine for the checks, slow for large tensors (sum
 * and mean have reduce.cu's two-pass design; these do not yet).
 * Semantics as the reference (src/ops/ref.c): max/min propagate NaN;
 * argmax is the index of the first maximum or the first NaN, written as
 * a value of the case dtype; var is the corrected two-pass algorithm,
 * accumulated in double, over n - correction. */
#include "kernels_ext.cuh"

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

template <typename T, int OP>
static int kf_lanes(void *ctx, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    const tb_dtype dt = cu_dt<T>();
    if (!c || !in || !out || !cu_operand_ok(&in[0], dt) ||
        !cu_operand_ok(&out[0], dt))
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
