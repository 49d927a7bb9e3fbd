/* sdpa_backward of the CUDA module, f32 and f64: g [B,H,Sq,Dv], q, k, v
 * -> dq, dk, dv with sdpa's causal and scale (src/ops/ref_attn.c's
 * tb_ref_sdpa_backward).
 *
 * Written for correctness first (no tensor cores, no register tiling,
 * operands read from global memory through L1), in two launches per
 * chunk of heads, with no atomics:
 *   1. a block of 128 threads per (batch*head, query row) (grid-stride):
 *      the row's statistics recomputed from q and k, as the reference's
 *      two-pass softmax: the scores' maximum M, then l = sum exp(s - M)
 *      and Di = sum_j P dP (P = exp(s - M) / l, dP = g_i . v_j), block
 *      sums in double in a fixed order; then dq_i = scale sum_j P (dP -
 *      Di) k_j over key tiles of 128 (each thread a key's weight into
 *      shared memory, then each thread its columns of dq, keys in
 *      order); M, l and Di go to the instance's scratch (3 doubles a
 *      row);
 *   2. a block per (batch*head, key j): the rows that see key j
 *      (nn2_geom.h's tb_cu_sdpa_row0) in tiles of 128, each thread a
 *      row's P_ij and dS_ij = P (dP - Di) scale recomputed from the
 *      saved statistics, then dk_j = sum_i dS_ij q_i and dv_j = sum_i
 *      P_ij g_i, rows in order.
 * So every output element is written by one thread, its sum in an order
 * fixed by the shape: the same bits every run on a device.  Scores and
 * sums are in double for both dtypes.  The heads are taken in chunks
 * whose statistics fit in the scratch buffer (tb_cu_head_chunk); a row
 * longer than the scratch is refused with TB_ENOMEM, as is a D + Dv
 * whose accumulators do not fit in 48 KiB of shared memory (above about
 * 5,600).  Causal: a row's keys past the diagonal are never visited. */
#include "ext2.cuh"
#include "nn2_geom.h"

#define CU_ATTN_BW_THREADS 128
#define CU_ATTN_BW_SMEM (48 * 1024)

/* a . b over n elements in double, in order. */
template <typename T>
static __device__ __forceinline__ double cu_dot_d(const T *a, const T *b,
                                                  int64_t n)
{
    double s = 0;
    for (int64_t d = 0; d < n; d++)
        s += (double)a[d] * (double)b[d];
    return s;
}

/* acc[d] += sum over r < rn of w[r] * src[r * ld + d] for the columns
 * d < n this thread owns (d = threadIdx.x + k * blockDim.x), r in
 * order. */
template <typename T>
static __device__ __forceinline__ void cu_acc_rows(double *acc, int64_t n,
                                                   const double *w,
                                                   const T *src, int64_t ld,
                                                   int64_t rn)
{
    for (int64_t d = threadIdx.x; d < n; d += blockDim.x) {
        double a = acc[d];
        for (int64_t r = 0; r < rn; r++)
            a += w[r] * (double)src[r * ld + d];
        acc[d] = a;
    }
}

/* Rows [h0 * Sq, (h0 + hc) * Sq): dq and the rows' statistics st[3 t]. */
template <typename T>
__global__ void k_sdpa_bw_q(const T *g, const T *q, const T *k, const T *v,
                            T *dq, double *st, int64_t h0, int64_t hc,
                            int64_t Sq, int64_t Sk, int64_t D, int64_t Dv,
                            int causal, double scale)
{
    extern __shared__ __align__(16) unsigned char cu_attn_bw_smem[];
    const int nt = (int)blockDim.x, tid = (int)threadIdx.x;
    double *w = (double *)cu_attn_bw_smem; /* nt key weights */
    double *acc = w + nt;                  /* D */
    double *part = acc + D;                /* nt / 32 */
    for (int64_t t = blockIdx.x; t < hc * Sq; t += gridDim.x) {
        const int64_t h = h0 + t / Sq, i = t % Sq;
        const T *qi = q + (h * Sq + i) * D, *gi = g + (h * Sq + i) * Dv;
        const T *kh = k + h * Sk * D, *vh = v + h * Sk * Dv;
        const int64_t nk = tb_cu_sdpa_keys(i, Sk, causal);
        double mx = -INFINITY;
        for (int64_t j = tid; j < nk; j += nt) {
            const double s = cu_dot_d(qi, kh + j * D, D) * scale;
            mx = s > mx ? s : mx;
        }
        mx = cu_group_max(mx, nt, part);
        double l = 0, pd = 0;
        for (int64_t j = tid; j < nk; j += nt) {
            const double e = exp(cu_dot_d(qi, kh + j * D, D) * scale - mx);
            l += e;
            pd += e * cu_dot_d(gi, vh + j * Dv, Dv);
        }
        l = cu_group_sum(l, nt, part);
        pd = cu_group_sum(pd, nt, part);
        const double di = pd / l;
        for (int64_t d = tid; d < D; d += nt)
            acc[d] = 0;
        for (int64_t j0 = 0; j0 < nk; j0 += nt) {
            const int64_t j = j0 + tid, kn = nk - j0 < nt ? nk - j0 : nt;
            if (j < nk) {
                const double p =
                    exp(cu_dot_d(qi, kh + j * D, D) * scale - mx) / l;
                w[tid] = p * (cu_dot_d(gi, vh + j * Dv, Dv) - di) * scale;
            }
            __syncthreads();
            cu_acc_rows(acc, D, w, kh + j0 * D, D, kn);
            __syncthreads(); /* w is refilled by the next tile */
        }
        T *dqi = dq + (h * Sq + i) * D;
        for (int64_t d = tid; d < D; d += nt)
            dqi[d] = (T)acc[d];
        if (tid == 0) {
            st[3 * t] = mx;
            st[3 * t + 1] = l;
            st[3 * t + 2] = di;
        }
        __syncthreads(); /* acc is reset for the next row */
    }
}

/* Keys [h0 * Sk, (h0 + hc) * Sk): dk, dv from the rows' statistics. */
template <typename T>
__global__ void k_sdpa_bw_kv(const T *g, const T *q, const T *k,
                             const T *v, T *dk, T *dv, const double *st,
                             int64_t h0, int64_t hc, int64_t Sq, int64_t Sk,
                             int64_t D, int64_t Dv, int causal, double scale)
{
    extern __shared__ __align__(16) unsigned char cu_attn_bw_smem[];
    const int nt = (int)blockDim.x, tid = (int)threadIdx.x;
    double *pw = (double *)cu_attn_bw_smem; /* nt weights P */
    double *sw = pw + nt;                   /* nt weights dS */
    double *ak = sw + nt, *av = ak + D;     /* D, Dv */
    for (int64_t t = blockIdx.x; t < hc * Sk; t += gridDim.x) {
        const int64_t hl = t / Sk, h = h0 + hl, j = t % Sk;
        const T *kj = k + (h * Sk + j) * D, *vj = v + (h * Sk + j) * Dv;
        const T *qh = q + h * Sq * D, *gh = g + h * Sq * Dv;
        for (int64_t d = tid; d < D; d += nt)
            ak[d] = 0;
        for (int64_t e = tid; e < Dv; e += nt)
            av[e] = 0;
        for (int64_t i0 = tb_cu_sdpa_row0(j, Sq, causal); i0 < Sq;
             i0 += nt) {
            const int64_t i = i0 + tid, rn = Sq - i0 < nt ? Sq - i0 : nt;
            if (i < Sq) {
                const double *si = st + 3 * (hl * Sq + i);
                const double p =
                    exp(cu_dot_d(qh + i * D, kj, D) * scale - si[0]) / si[1];
                pw[tid] = p;
                sw[tid] =
                    p * (cu_dot_d(gh + i * Dv, vj, Dv) - si[2]) * scale;
            }
            __syncthreads();
            cu_acc_rows(ak, D, sw, qh + i0 * D, D, rn);
            cu_acc_rows(av, Dv, pw, gh + i0 * Dv, Dv, rn);
            __syncthreads(); /* the weights are refilled next tile */
        }
        for (int64_t d = tid; d < D; d += nt)
            dk[(h * Sk + j) * D + d] = (T)ak[d];
        for (int64_t e = tid; e < Dv; e += nt)
            dv[(h * Sk + j) * Dv + e] = (T)av[e];
        __syncthreads(); /* the accumulators are reset next key */
    }
}

/* x 4-D [B, H, rows, cols] of q's B and H: 0 or TB_ESHAPE. */
static int bw_4d(const tb_tensor *x, const tb_tensor *q, int64_t rows,
                 int64_t cols)
{
    if (x->ndim != 4 || x->shape[0] != q->shape[0] ||
        x->shape[1] != q->shape[1] || x->shape[2] != rows ||
        x->shape[3] != cols)
        return TB_ESHAPE;
    return 0;
}

template <typename T>
static int kf_sdpa_backward(void *ctx, const tb_tensor *in, tb_tensor *out,
                            const tb_params *p)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!cu_operands_ok(c, in, 4, out, 3, cu_dt<T>()))
        return TB_EINVAL;
    const tb_tensor *q = &in[1];
    if (q->ndim != 4 || in[2].ndim != 4 || in[3].ndim != 4)
        return TB_ESHAPE;
    const int64_t BH = q->shape[0] * q->shape[1], Sq = q->shape[2],
                  D = q->shape[3], Sk = in[2].shape[2], Dv = in[3].shape[3];
    int rc;
    if ((rc = bw_4d(&in[0], q, Sq, Dv)) || (rc = bw_4d(&in[2], q, Sk, D)) ||
        (rc = bw_4d(&in[3], q, Sk, Dv)) || (rc = bw_4d(&out[0], q, Sq, D)) ||
        (rc = bw_4d(&out[1], q, Sk, D)) || (rc = bw_4d(&out[2], q, Sk, Dv)))
        return rc;
    double causal, scale;
    if ((rc = cu_sdpa_params(p, D, &causal, &scale)))
        return rc;
    scale = (double)(T)scale; /* as sdpa applies it */
    if (BH == 0 || Sq == 0 || Sk == 0)
        return 0; /* the shape rule has every dim positive */
    const size_t smem = (size_t)tb_cu_sdpa_bw_smem(CU_ATTN_BW_THREADS, D,
                                                   Dv) * sizeof(double);
    const int64_t hc = tb_cu_head_chunk(BH, 3 * Sq, c->scratch_elems);
    if (smem > CU_ATTN_BW_SMEM || hc == 0)
        return TB_ENOMEM;
    const int cz = causal != 0 ? 1 : 0;
    const T *gd = (const T *)in[0].data, *qd = (const T *)q->data;
    const T *kd = (const T *)in[2].data, *vd = (const T *)in[3].data;
    for (int64_t h0 = 0; h0 < BH; h0 += hc) {
        const int64_t n = BH - h0 < hc ? BH - h0 : hc;
        if ((rc = cu_launch(c, k_sdpa_bw_q<T>,
                            n * Sq < c->max_blocks ? n * Sq : c->max_blocks,
                            CU_ATTN_BW_THREADS, smem, gd, qd, kd, vd,
                            (T *)out[0].data, c->scratch, h0, n, Sq, Sk, D,
                            Dv, cz, scale)) ||
            (rc = cu_launch(c, k_sdpa_bw_kv<T>,
                            n * Sk < c->max_blocks ? n * Sk : c->max_blocks,
                            CU_ATTN_BW_THREADS, smem, gd, qd, kd, vd,
                            (T *)out[1].data, (T *)out[2].data,
                            (const double *)c->scratch, h0, n, Sq, Sk, D,
                            Dv, cz, scale)))
            return rc;
    }
    return 0;
}

static const cu_ext_entry cu_attn_bw[] = {
    CU_EXT_ROW(sdpa_backward, kf_sdpa_backward<float>,
               kf_sdpa_backward<double>)
};

CU_EXT_LOOKUP(cu_attn_bw_kernel, cu_attn_bw)
