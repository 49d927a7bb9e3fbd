/* Attention of the CUDA module: sdpa (fused) and causal_mask, f32 and
 * f64; sdpa_unfused runs on cuda through its steps (transpose, matmul,
 * mul_scalar, causal_mask, softmax, matmul).
 *
 * sdpa: one launch, a block of 128 threads per (batch*head, query tile)
 * (grid-stride over the tiles), FlashAttention's schedule as the cpu
 * rows (src/backends/cpu/attn.h): the tile's output accumulators, running
 * max and sum stay in shared memory while the key tiles stream through
 * it; per key tile the scores q k^T * scale (-inf where masked), each
 * row's new max, the rescale factor exp(m_old - m_new) and the weights
 * exp(s - m_new), then o = o * alpha + weights @ v with the value tile
 * loaded where the key tile was; at the end o / l.  With the causal mask
 * the key tiles past the tile's last query row are never visited
 * (nn_geom.h's tb_cu_attn_keys).  The tile size B (query rows = keys per
 * tile) is the largest power of two up to 32 whose shared memory fits in
 * 48 KiB (nn_geom.h); a D or Dv too large for B = 1 (above ~3000 f32
 * elements, ~1500 f64) is refused with TB_ENOMEM.  Sums run in the dtype,
 * in key order, as the cpu rows' (the tolerance is TOL_ACC's).  Written
 * for correctness first: no tensor cores, no register tiling, q read from
 * global memory (L1) for every score.
 *
 * causal_mask: element-wise, -inf where the column exceeds the row of its
 * trailing [M, N] plane (a copy when causal is 0). */
#include "kernels_ext.cuh"
#include "nn_geom.h"

#define CU_ATTN_THREADS 128
#define CU_ATTN_SMEM (48 * 1024)

/* The tiles of one (batch*head, query tile) at a time; smem as
 * tb_cu_attn_smem(B, D, Dv) elements of T. */
template <typename T>
__global__ void k_sdpa(const T *q, const T *k, const T *v, T *out,
                       int64_t BH, int64_t Sq, int64_t Sk, int64_t D,
                       int64_t Dv, int64_t B, int causal, T scale)
{
    extern __shared__ __align__(16) unsigned char cu_attn_smem[];
    T *kv = (T *)cu_attn_smem;         /* B x max(D, Dv): k, then v */
    T *o = kv + B * (D > Dv ? D : Dv); /* B x Dv */
    T *s = o + B * Dv;                 /* B x B */
    T *m = s + B * B, *l = m + B, *alpha = l + B;
    const int64_t nqt = (Sq + B - 1) / B;
    const int64_t tid = threadIdx.x, nt = blockDim.x;
    for (int64_t t = blockIdx.x; t < BH * nqt; t += gridDim.x) {
        const int64_t h = t / nqt, i0 = t % nqt * B;
        const int64_t qn = Sq - i0 < B ? Sq - i0 : B;
        const T *qt = q + (h * Sq + i0) * D;
        const T *kh = k + h * Sk * D, *vh = v + h * Sk * Dv;
        const int64_t nk = tb_cu_attn_keys(i0, qn, Sk, causal);
        for (int64_t e = tid; e < qn * Dv; e += nt)
            o[e] = 0;
        for (int64_t r = tid; r < qn; r += nt) {
            m[r] = -(T)INFINITY;
            l[r] = 0;
        }
        __syncthreads();
        for (int64_t j0 = 0; j0 < nk; j0 += B) {
            const int64_t kn = nk - j0 < B ? nk - j0 : B;
            for (int64_t e = tid; e < kn * D; e += nt)
                kv[e] = kh[j0 * D + e];
            __syncthreads();
            for (int64_t e = tid; e < qn * kn; e += nt) {
                const int64_t r = e / kn, c = e % kn;
                T dot = 0;
                for (int64_t d = 0; d < D; d++)
                    dot += qt[r * D + d] * kv[c * D + d];
                s[r * B + c] = tb_cu_masked(i0 + r, j0 + c, causal)
                                   ? -(T)INFINITY
                                   : dot * scale;
            }
            __syncthreads();
            /* the rows' online softmax step; the value tile meanwhile */
            for (int64_t r = tid; r < qn; r += nt) {
                T *sr = s + r * B, mx = m[r], sum = 0;
                for (int64_t c = 0; c < kn; c++)
                    mx = sr[c] > mx ? sr[c] : mx;
                const T a = cu_exp(m[r] - mx);
                for (int64_t c = 0; c < kn; c++) {
                    sr[c] = cu_exp(sr[c] - mx);
                    sum += sr[c];
                }
                m[r] = mx;
                l[r] = l[r] * a + sum;
                alpha[r] = a;
            }
            for (int64_t e = tid; e < kn * Dv; e += nt)
                kv[e] = vh[j0 * Dv + e];
            __syncthreads();
            for (int64_t e = tid; e < qn * Dv; e += nt) {
                const int64_t r = e / Dv, col = e % Dv;
                T acc = o[e] * alpha[r];
                for (int64_t c = 0; c < kn; c++)
                    acc += s[r * B + c] * kv[c * Dv + col];
                o[e] = acc;
            }
            __syncthreads(); /* kv and s are refilled next tile */
        }
        T *ot = out + (h * Sq + i0) * Dv;
        for (int64_t e = tid; e < qn * Dv; e += nt)
            ot[e] = o[e] / l[e / Dv];
        __syncthreads(); /* o, m, l are reset for the next tile */
    }
}

template <typename T>
static int kf_sdpa(void *ctx, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!cu_args_ok(c, in, 3, out, cu_dt<T>()))
        return TB_EINVAL;
    const tb_tensor *q = &in[0], *k = &in[1], *v = &in[2];
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4 || out[0].ndim != 4)
        return TB_ESHAPE;
    for (int d = 0; d < 2; d++)
        if (k->shape[d] != q->shape[d] || v->shape[d] != q->shape[d] ||
            out[0].shape[d] != q->shape[d])
            return TB_ESHAPE;
    const int64_t BH = q->shape[0] * q->shape[1], Sq = q->shape[2],
                  D = q->shape[3], Sk = k->shape[2], Dv = v->shape[3];
    if (k->shape[3] != D || v->shape[2] != Sk || out[0].shape[2] != Sq ||
        out[0].shape[3] != Dv)
        return TB_ESHAPE;
    double causal, scale;
    int rc = cu_sdpa_params(p, D, &causal, &scale);
    if (rc)
        return rc;
    if (BH * Sq * Dv == 0)
        return 0;
    const int64_t B = tb_cu_attn_tile(D, Dv, (int64_t)sizeof(T),
                                      CU_ATTN_SMEM);
    if (B == 0)
        return TB_ENOMEM; /* one row of k or v does not fit */
    const int64_t tiles = BH * ((Sq + B - 1) / B);
    return cu_launch(c, k_sdpa<T>,
                     tiles < c->max_blocks ? tiles : c->max_blocks,
                     CU_ATTN_THREADS,
                     (size_t)tb_cu_attn_smem(B, D, Dv) * sizeof(T),
                     (const T *)q->data, (const T *)k->data,
                     (const T *)v->data, (T *)out[0].data, BH, Sq, Sk, D,
                     Dv, B, causal != 0 ? 1 : 0, (T)scale);
}

/* ---- causal_mask ------------------------------------------------------------ */

template <typename T>
__global__ void k_causal_mask(const T *x, T *y, int64_t n, int64_t M,
                              int64_t N, int causal)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t f = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; f < n;
         f += step)
        y[f] = tb_cu_mask_at(f, M, N, causal) ? -(T)INFINITY : x[f];
}

template <typename T>
static int kf_causal_mask(void *ctx, const tb_tensor *in, tb_tensor *out,
                          const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!cu_args_ok(c, in, 1, out, cu_dt<T>()))
        return TB_EINVAL;
    if (in[0].ndim < 2 || !cu_same_shape(&in[0], &out[0]))
        return TB_ESHAPE;
    double causal;
    int rc = cu_param(p, 0, &causal);
    if (rc)
        return rc;
    const int64_t n = cu_numel(&in[0]);
    if (n == 0)
        return 0;
    const int nd = in[0].ndim;
    return cu_launch(c, k_causal_mask<T>,
                     tb_cu_blocks_1d(n, TB_CU_BLOCK, c->max_blocks),
                     TB_CU_BLOCK, 0, (const T *)in[0].data,
                     (T *)out[0].data, n, in[0].shape[nd - 2],
                     in[0].shape[nd - 1], causal != 0 ? 1 : 0);
}

static const cu_ext_entry cu_attns[] = {
    CU_EXT_ROW(sdpa, kf_sdpa<float>, kf_sdpa<double>)
    CU_EXT_ROW(causal_mask, kf_causal_mask<float>, kf_causal_mask<double>)
};

tb_kernel_fn cu_attn_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    return cu_ext_find(cu_attns, sizeof cu_attns / sizeof cu_attns[0], id,
                       dt, impl);
}
