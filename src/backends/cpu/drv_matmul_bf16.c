/* The cpu backend's bf16 matrix products at the avx512bf16 level:
 * matmul ([..., M, K] x [..., K, N], equal batch dims) and linear
 * (relu(x @ W + b)) through the bf16 GEMM on vdpbf16ps (gemm/gemm.h,
 * tb_gemm_bf16_ep): bf16 operands packed as they are, f32 sums, bias and
 * relu fused, each output rounded once to bf16.  Below that level the
 * bf16 rows are half.c's (the f32 GEMM between conversions).  Their rows
 * are kreg.h's TB_CPU_HALF_MM. */
#include "drv.h"

#if TB_CPU_HAVE_GEMM && TB_CPU_HAVE_AVX512BF16

typedef struct mm_bf16_job {
    const uint16_t *a, *b;
    uint16_t *o;
    int64_t M, K, N, batch;
    int rc[TB_MAX_AXIS_VALUES]; /* per part */
} mm_bf16_job;

/* Batches [lo, hi), each a whole GEMM with `threads` threads over par. */
static int mm_bf16_batches(const mm_bf16_job *j, int64_t lo, int64_t hi,
                           int threads, const tb_gemm_parallel *par)
{
    for (int64_t bi = lo; bi < hi; bi++) {
        int rc = tb_gemm_bf16_ep(TB_ISA_AVX512BF16, j->M, j->N, j->K,
                                 j->a + bi * j->M * j->K, j->K,
                                 j->b + bi * j->K * j->N, j->N,
                                 j->o + bi * j->M * j->N, j->N, threads,
                                 par, NULL, 0);
        if (rc)
            return rc;
    }
    return 0;
}

static void mm_bf16_batch_task(void *argp, int part, int nparts)
{
    mm_bf16_job *j = argp;
    int64_t b, e;
    cpu_span(j->batch, part, nparts, &b, &e);
    j->rc[part] = mm_bf16_batches(j, b, e, 1, NULL);
}

/* As the f32 matmul (drv_matmul.c): small matrices in a batch, one
 * thread per batch slice; otherwise one batch after the other, each
 * split by the GEMM over the pool. */
static int mm_bf16(tb_cpu_ctx *c, const tb_tensor *in, tb_tensor *out)
{
    int rc = cpu_begin(c, TB_BF16, in, 2, out);
    if (rc)
        return rc;
    mm_bf16_job j = {.a = in[0].data, .b = in[1].data, .o = out->data};
    if ((rc = cpu_matmul_dims(&in[0], &in[1], out, &j.batch, &j.M, &j.K,
                              &j.N)))
        return rc;
    if (j.batch * j.M == 0 || j.N == 0)
        return 0;
    if (j.batch > 1 && c->threads > 1 &&
        j.M * j.N * j.K < TB_GEMM_PAR_MIN_MACS) {
        int parts = cpu_parts(c, j.batch * j.M * j.N * j.K, j.batch);
        parts = cpu_pool_run(c->pool, parts, mm_bf16_batch_task, &j);
        for (int i = 0; i < parts; i++)
            if (j.rc[i])
                return j.rc[i];
        return 0;
    }
    const tb_gemm_parallel par = {cpu_gemm_par_run, c};
    return mm_bf16_batches(&j, 0, j.batch, c->threads,
                           c->threads > 1 ? &par : NULL);
}

/* linear: x [M, K], W [K, N], b [N] -> [M, N], bias and relu fused. */
static int lin_bf16(tb_cpu_ctx *c, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    int rc = cpu_begin(c, TB_BF16, in, 3, out);
    if (rc)
        return rc;
    tb_shape ish[3] = {tb_tensor_shape(&in[0]), tb_tensor_shape(&in[1]),
                       tb_tensor_shape(&in[2])};
    tb_shape osh;
    if ((rc = tb_op_infer(tb_op_get(TB_OP_linear), ish, 3, p, &osh, NULL,
                          0)))
        return rc;
    tb_shape got = tb_tensor_shape(out);
    if (!tb_shape_equal(&got, &osh))
        return TB_ESHAPE;
    const int64_t M = in[0].shape[0], K = in[0].shape[1];
    const int64_t N = in[1].shape[1];
    if (M == 0 || N == 0)
        return 0;
    const tb_gemm_parallel par = {cpu_gemm_par_run, c};
    return tb_gemm_bf16_ep(TB_ISA_AVX512BF16, M, N, K, in[0].data, K,
                           in[1].data, N, out->data, N, c->threads,
                           c->threads > 1 ? &par : NULL, in[2].data, 1);
}

#define MM_BF16_ENTRY(op, call)                                           \
    int TB_CPU_KFN(op, bf16, avx512bf16)(void *ctx, const tb_tensor *in,  \
                                         tb_tensor *out,                  \
                                         const tb_params *p)              \
    {                                                                     \
        (void)p;                                                          \
        if (ctx && tb_cpu_isa(ctx) < TB_ISA_AVX512BF16)                   \
            return TB_EUNSUPPORTED;                                       \
        if (!ctx)                                                         \
            return TB_EINVAL;                                             \
        return call;                                                      \
    }
MM_BF16_ENTRY(matmul, mm_bf16(ctx, in, out))
MM_BF16_ENTRY(linear, lin_bf16(ctx, in, out, p))

#endif
