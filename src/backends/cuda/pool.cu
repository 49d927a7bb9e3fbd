/* Pooling kernels of the CUDA module: max_pool2d and avg_pool2d over
 * NCHW, f32, f64, bf16 and f16 (read widened, the window folded in f32,
 * the result rounded once: half.cuh).  One thread per output element (grid-stride), its
 * window clipped to the input by tb_pool_range (layout.h).  max: NaN
 * propagates, padding is -inf (the window always holds an input element:
 * padding <= kernel/2).  avg: the in-bounds sum over kernel^2 (padding
 * counts as zeros, PyTorch's count_include_pad=True), summed in the
 * dtype: at most kernel^2 terms. */
#include "kernels_ext.cuh"

struct pool_geom {
    int64_t C, H, W, OH, OW, k, s, pad;
};

template <typename T, bool MAX>
__global__ void k_pool2d(const T *__restrict__ x, T *__restrict__ y,
                         int64_t n, pool_geom g)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        int64_t ow = i % g.OW, t = i / g.OW;
        int64_t oh = t % g.OH, nc = t / g.OH;
        int64_t h0, h1, w0, w1;
        tb_pool_range(oh, g.k, g.s, g.pad, g.H, &h0, &h1);
        tb_pool_range(ow, g.k, g.s, g.pad, g.W, &w0, &w1);
        typedef cu_acc<T> C;
        const T *src = x + nc * g.H * g.W;
        C acc = MAX ? -INFINITY : C(0);
        for (int64_t ih = h0; ih < h1; ih++)
            for (int64_t iw = w0; iw < w1; iw++) {
                C v = cu_ld(src[ih * g.W + iw]);
                if (MAX)
                    acc = (acc != acc || v != v) ? acc + v
                                                 : (v > acc ? v : acc);
                else
                    acc += v;
            }
        y[i] = cu_st<T>(MAX ? acc : acc / (C)(g.k * g.k));
    }
}

template <typename T, bool MAX>
static int kf_pool2d(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    const tb_dtype dt = cu_dt<T>();
    if (!cu_args_ok(c, in, 1, out, dt))
        return TB_EINVAL;
    if (in[0].ndim != 4 || out[0].ndim != 4)
        return TB_ESHAPE;
    pool_geom g;
    if (cu_param_int(p, 0, 1, 1 << 20, &g.k) ||
        cu_param_int(p, 2, 0, 1 << 20, &g.pad))
        return TB_EPARAM;
    if (cu_param_has(p, 1)) {
        if (cu_param_int(p, 1, 1, 1 << 20, &g.s))
            return TB_EPARAM;
    } else {
        g.s = g.k;
    }
    if (2 * g.pad > g.k)
        return TB_EPARAM;
    g.C = in[0].shape[1];
    g.H = in[0].shape[2];
    g.W = in[0].shape[3];
    g.OH = tb_cu_window_out(g.H, g.k, g.s, g.pad, 1);
    g.OW = tb_cu_window_out(g.W, g.k, g.s, g.pad, 1);
    if (out[0].shape[0] != in[0].shape[0] || out[0].shape[1] != g.C ||
        out[0].shape[2] != g.OH || out[0].shape[3] != g.OW)
        return TB_ESHAPE;
    int64_t n = cu_numel(&out[0]);
    if (n == 0)
        return 0;
    return cu_launch(c, k_pool2d<T, MAX>,
                     tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, (const T *)in[0].data,
                     (T *)out[0].data, n, g);
}

static const cu_ext_entry cu_pool[] = {
    CU_EXT_ROW4(max_pool2d, (kf_pool2d<float, true>),
                (kf_pool2d<double, true>), (kf_pool2d<cu_bf16, true>),
                (kf_pool2d<cu_f16, true>))
    CU_EXT_ROW4(avg_pool2d, (kf_pool2d<float, false>),
                (kf_pool2d<double, false>), (kf_pool2d<cu_bf16, false>),
                (kf_pool2d<cu_f16, false>))
};

tb_kernel_fn cu_pool_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_pool, sizeof cu_pool / sizeof cu_pool[0], id, dt,
                       impl);
}
