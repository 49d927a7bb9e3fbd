/* The cpu backend's matrix-product drivers: matmul ([..., M, K] x
 * [..., K, N], equal batch dims) and linear (relu(x @ W + b) in one
 * launch); the native GEMM (gemm/gemm.h) at the avx2 and avx512 levels,
 * the portable row loops of kernels_c.c at the scalar level.  Their rows
 * are kreg.h's matmul family; bf16 at avx512bf16: the bf16 GEMM (end of
 * file, kreg.h's TB_CPU_HALF_MM), matmul_backward's too. */
#include <string.h>

#include "../../ops/alloc.h"
#include "drv.h"

typedef struct cpu_mm_job {
    tb_cpu_mm_fn fn;
    size_t esz;
    const char *a, *b;
    char *c;
    int64_t M, K, N;
    int64_t rows; /* batch * M: the output rows split over parts */
} cpu_mm_job;

static void cpu_mm_task(void *argp, int part, int nparts)
{
    const cpu_mm_job *j = argp;
    int64_t r, e;
    cpu_span(j->rows, part, nparts, &r, &e);
    while (r < e) {
        int64_t bi = r / j->M, i0 = r % j->M;
        int64_t i1 = j->M - i0 < e - r ? j->M : i0 + (e - r);
        j->fn(j->a + (size_t)(bi * j->M * j->K) * j->esz,
              j->b + (size_t)(bi * j->K * j->N) * j->esz,
              j->c + (size_t)(bi * j->M * j->N) * j->esz, i0, i1, j->K,
              j->N);
        r += i1 - i0;
    }
}

#if TB_CPU_HAVE_GEMM
typedef struct cpu_gemm_job {
    const tb_cpu_ctx *c;
    tb_dtype dt;
    int lv; /* the level whose GEMM runs */
    const char *a, *b;
    char *o;
    int64_t M, K, N, batch;
    int rc[TB_MAX_AXIS_VALUES]; /* per part */
} cpu_gemm_job;

/* Batches [lo, hi), each a whole GEMM with `threads` threads over par. */
static int cpu_gemm_batches(const cpu_gemm_job *j, int64_t lo, int64_t hi,
                            int threads, const tb_gemm_parallel *par)
{
    const size_t es = tb_dtype_size(j->dt);
    for (int64_t bi = lo; bi < hi; bi++) {
        const char *a = j->a + (size_t)(bi * j->M * j->K) * es;
        const char *b = j->b + (size_t)(bi * j->K * j->N) * es;
        char *o = j->o + (size_t)(bi * j->M * j->N) * es;
        int rc = j->dt == TB_BF16
                     ? tb_gemm_bf16_ep(j->lv, j->M, j->N, j->K,
                                       (const uint16_t *)a, j->K,
                                       (const uint16_t *)b, j->N,
                                       (uint16_t *)o, j->N, threads, par,
                                       NULL, 0)
                 : j->dt == TB_F32
                     ? tb_gemm_f32_ex(j->lv, j->M, j->N, j->K,
                                      (const float *)a, j->K,
                                      (const float *)b, j->N, (float *)o,
                                      j->N, threads, par)
                     : tb_gemm_f64_ex(j->lv, j->M, j->N, j->K,
                                      (const double *)a, j->K,
                                      (const double *)b, j->N, (double *)o,
                                      j->N, threads, par);
        if (rc)
            return rc;
    }
    return 0;
}

static void cpu_gemm_batch_task(void *argp, int part, int nparts)
{
    cpu_gemm_job *j = argp;
    int64_t b, e;
    cpu_span(j->batch, part, nparts, &b, &e);
    j->rc[part] = cpu_gemm_batches(j, b, e, 1, NULL);
}

/* Small matrices in a batch: one thread per batch slice; otherwise one
 * batch after the other, each split by the GEMM over the pool. */
static int cpu_matmul_gemm(tb_cpu_ctx *c, const void *a, const void *b,
                           void *out, tb_dtype dt, int64_t batch, int64_t M,
                           int64_t K, int64_t N, int lv)
{
    cpu_gemm_job j = {.c = c, .dt = dt, .lv = lv, .a = a, .b = b,
                      .o = out, .M = M, .K = K, .N = N, .batch = batch};
    if (batch > 1 && c->threads > 1 && M * N * K < TB_GEMM_PAR_MIN_MACS) {
        int parts = cpu_parts(c, batch * M * N * K, batch);
        parts = cpu_pool_run(c->pool, parts, cpu_gemm_batch_task, &j);
        for (int i = 0; i < parts; i++)
            if (j.rc[i])
                return j.rc[i];
        return 0;
    }
    const tb_gemm_parallel par = {cpu_gemm_par_run, c};
    return cpu_gemm_batches(&j, 0, batch, c->threads,
                            c->threads > 1 ? &par : NULL);
}
#endif

int tb_cpu_matmul_batched(tb_cpu_ctx *c, tb_dtype dt, int lv, const void *a,
                          const void *b, void *out, int64_t batch,
                          int64_t M, int64_t K, int64_t N)
{
    CPU_SLOT_AT(cpu_mm_isa(c, dt, lv), lv);
    cpu_mm_job j = {
        .fn = c->k[lv].mm[dt].rows,
        .esz = tb_dtype_size(dt),
        .a = a,
        .b = b,
        .c = out,
        .M = M,
        .K = K,
        .N = N,
        .rows = batch * M,
    };
    if (j.rows == 0 || N == 0)
        return 0;
#if TB_CPU_HAVE_GEMM
    if (cpu_use_gemm(lv))
        return cpu_matmul_gemm(c, a, b, out, dt, batch, M, K, N, lv);
#endif
    cpu_pool_run(c->pool, cpu_parts(c, j.rows * K * N, j.rows), cpu_mm_task,
                 &j);
    return 0;
}

int tb_cpu_gemm_tr(void *ctx, tb_dtype dt, bool ta, bool tb, int64_t M,
                   int64_t N, int64_t K, const void *a, int64_t lda,
                   const void *b, int64_t ldb, void *out, int64_t ldc)
{
#if TB_CPU_HAVE_GEMM
    tb_cpu_ctx *c = ctx;
    const int lv = tb_cpu_isa(ctx);
    if ((dt == TB_F32 || dt == TB_F64) && cpu_use_gemm(lv)) {
        const tb_gemm_parallel par = {cpu_gemm_par_run, c};
        const int trans =
            (ta ? TB_GEMM_TRANS_A : 0) | (tb ? TB_GEMM_TRANS_B : 0);
        return tb_gemm_tr(lv, dt == TB_F64, trans, M, N, K, a, lda, b, ldb,
                          out, ldc, c->threads,
                          c->threads > 1 ? &par : NULL);
    }
#else
    (void)ctx, (void)dt, (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)a;
    (void)lda, (void)b, (void)ldb, (void)out, (void)ldc;
#endif
    return TB_EUNSUPPORTED;
}

int tb_cpu_gemm_nt(void *ctx, tb_dtype dt, int64_t M, int64_t N, int64_t K,
                   const void *a, int64_t lda, const void *b, int64_t ldb,
                   void *out, int64_t ldc)
{
#if TB_CPU_HAVE_GEMM
    tb_cpu_ctx *c = ctx;
    const int lv = tb_cpu_isa(ctx);
    if ((dt == TB_F32 || dt == TB_F64) && cpu_use_gemm(lv)) {
        const tb_gemm_parallel par = {cpu_gemm_par_run, c};
        return tb_gemm_nt_small(lv, dt == TB_F64, M, N, K, a, lda, b, ldb,
                                out, ldc, c->threads,
                                c->threads > 1 ? &par : NULL);
    }
#else
    (void)ctx, (void)dt, (void)M, (void)N, (void)K, (void)a, (void)lda;
    (void)b, (void)ldb, (void)out, (void)ldc;
#endif
    return TB_EUNSUPPORTED;
}

/* [..., M, K] x [..., K, N] -> [..., M, N] with equal batch dims. */
static int cpu_matmul(void *ctx, const tb_tensor *in, tb_tensor *out,
                      tb_dtype dt, int lv)
{
    int rc = cpu_begin(ctx, dt, in, 2, out);
    if (rc)
        return rc;
    int64_t batch, M, K, N;
    if ((rc = cpu_matmul_dims(&in[0], &in[1], out, &batch, &M, &K, &N)))
        return rc;
    return tb_cpu_matmul_batched(ctx, dt, lv, in[0].data, in[1].data,
                                 out->data, batch, M, K, N);
}

/* ---- linear: relu(x @ W + b) ---- */

/* Rows [r0, r1) of out [M, N]: out += b (broadcast over rows), then relu
 * (x <= 0, -0 included, gives +0; NaN is kept), the same two rounded
 * steps as the unfused add and relu. */
static void cpu_bias_relu_rows(tb_dtype dt, void *out, const void *bias,
                               int64_t r0, int64_t r1, int64_t N)
{
    for (int64_t r = r0; r < r1; r++) {
        if (dt == TB_F32) {
            float *restrict o = (float *)out + r * N;
            const float *restrict b = bias;
            for (int64_t q = 0; q < N; q++) {
                const float v = o[q] + b[q];
                o[q] = v <= 0 ? 0.0f : v;
            }
        } else {
            double *restrict o = (double *)out + r * N;
            const double *restrict b = bias;
            for (int64_t q = 0; q < N; q++) {
                const double v = o[q] + b[q];
                o[q] = v <= 0 ? 0.0 : v;
            }
        }
    }
}

typedef struct cpu_lin_job {
    cpu_mm_job mm; /* rows == M */
    tb_dtype dt;
    const void *bias;
} cpu_lin_job;

/* The portable level: each part multiplies its rows, then adds the bias
 * and applies relu to them (the part's own rows, fresh in its caches). */
static void cpu_lin_task(void *argp, int part, int nparts)
{
    const cpu_lin_job *j = argp;
    int64_t r, e;
    cpu_span(j->mm.rows, part, nparts, &r, &e);
    if (r >= e)
        return;
    j->mm.fn(j->mm.a, j->mm.b, j->mm.c, r, e, j->mm.K, j->mm.N);
    cpu_bias_relu_rows(j->dt, j->mm.c, j->bias, r, e, j->mm.N);
}

/* linear (x [M, K], W [K, N], b [N] -> [M, N]) in one launch.  At the
 * avx2 / avx512 levels the native GEMM runs with its fused epilogue
 * (gemm.h, tb_gemm_*_ep): bias and relu are applied to each micro-tile
 * as soon as its sums are complete, while it is in L1, so the output is
 * written once and no intermediate exists.  The scalar level splits the
 * rows over the threads: the portable matmul rows, then bias and relu
 * on the same rows.  Results equal matmul, then add, then relu (bit for
 * bit at a given level). */
/* linear's prologue: operands of dtype dt, shapes x [M, K], W [K, N],
 * b [N], out [M, N].  0 or a TB_E* code. */
static int cpu_linear_begin(void *ctx, const tb_tensor *in, tb_tensor *out,
                            const tb_params *p, tb_dtype dt, int64_t *M,
                            int64_t *K, int64_t *N)
{
    int rc = cpu_begin(ctx, dt, in, 3, out);
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
    *M = in[0].shape[0], *K = in[0].shape[1], *N = in[1].shape[1];
    return 0;
}

static int cpu_linear(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, int lv)
{
    int64_t M, K, N;
    int rc = cpu_linear_begin(ctx, in, out, p, dt, &M, &K, &N);
    if (rc)
        return rc;
    tb_cpu_ctx *c = ctx;
    if (M == 0 || N == 0)
        return 0;
#if TB_CPU_HAVE_GEMM
    if (cpu_use_gemm(lv)) {
        const tb_gemm_parallel par = {cpu_gemm_par_run, c};
        const tb_gemm_parallel *pp = c->threads > 1 ? &par : NULL;
        if (dt == TB_F32)
            return tb_gemm_f32_ep(lv, M, N, K, in[0].data, K,
                                  in[1].data, N, out->data, N, c->threads,
                                  pp, in[2].data, 1);
        return tb_gemm_f64_ep(lv, M, N, K, in[0].data, K, in[1].data,
                              N, out->data, N, c->threads, pp, in[2].data,
                              1);
    }
#endif
    CPU_SLOT_AT(c->k[lv].mm[dt].isa, lv);
    cpu_lin_job j = {
        .mm = {.fn = c->k[lv].mm[dt].rows, .esz = tb_dtype_size(dt),
               .a = in[0].data, .b = in[1].data, .c = out->data, .M = M,
               .K = K, .N = N, .rows = M},
        .dt = dt,
        .bias = in[2].data,
    };
    cpu_pool_run(c->pool, cpu_parts(c, M * K * N + M * N, M), cpu_lin_task,
                 &j);
    return 0;
}

/* ---- entry points ---- */

CPU_RUN(matmul, cpu_matmul(ctx, in, out, dt, lv))
CPU_RUN(linear, cpu_linear(ctx, in, out, p, dt, lv))

TB_CPU_ROWS_MATMUL(CPU_DEF, CPU_DEF_N)

/* ---- bf16 at the avx512bf16 level ----
 * matmul and linear through the bf16 GEMM on vdpbf16ps (gemm/gemm.h,
 * tb_gemm_bf16_ep): bf16 operands packed as they are, f32 sums, bias and
 * relu fused, each output rounded once to bf16; batches as the f32
 * matmul's.  Below that level the bf16 rows are half.c's (the f32 GEMM
 * between conversions).  Their rows: kreg.h's TB_CPU_HALF_MM. */
#if TB_CPU_HAVE_GEMM && TB_CPU_HAVE_AVX512BF16
static int cpu_mm_bf16(tb_cpu_ctx *c, const tb_tensor *in, tb_tensor *out)
{
    int rc = cpu_begin(c, TB_BF16, in, 2, out);
    if (rc)
        return rc;
    int64_t batch, M, K, N;
    if ((rc = cpu_matmul_dims(&in[0], &in[1], out, &batch, &M, &K, &N)))
        return rc;
    if (batch * M == 0 || N == 0)
        return 0;
    return cpu_matmul_gemm(c, in[0].data, in[1].data, out->data, TB_BF16,
                           batch, M, K, N, TB_ISA_AVX512BF16);
}

/* x [M, K], W [K, N], b [N] -> relu(x @ W + b) [M, N]. */
static int cpu_lin_bf16(tb_cpu_ctx *c, const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    int64_t M, K, N;
    int rc = cpu_linear_begin(c, in, out, p, TB_BF16, &M, &K, &N);
    if (rc)
        return rc;
    if (M == 0 || N == 0)
        return 0;
    const tb_gemm_parallel par = {cpu_gemm_par_run, c};
    return tb_gemm_bf16_ep(TB_ISA_AVX512BF16, M, N, K, in[0].data, K,
                           in[1].data, N, out->data, N, c->threads,
                           c->threads > 1 ? &par : NULL, in[2].data,
                           TB_GEMM_EP_RELU);
}

#define CPU_BF16_ENTRY(op, call)                                          \
    int TB_CPU_KFN(op, bf16, avx512bf16)(void *ctx, const tb_tensor *in,  \
                                         tb_tensor *out,                  \
                                         const tb_params *p)              \
    {                                                                     \
        (void)p;                                                          \
        if (!ctx)                                                         \
            return TB_EINVAL;                                             \
        if (tb_cpu_isa(ctx) < TB_ISA_AVX512BF16)                          \
            return TB_EUNSUPPORTED;                                       \
        return call;                                                      \
    }
/* matmul_backward: g [..., M, N], a [..., M, K], b [..., K, N] ->
 * da = g @ b^T [..., M, K], db = a^T @ g [..., K, N], per batch, both on
 * the bf16 GEMM (its numerics: gemm.h's tb_gemm_bf16_ep), which packs
 * plain row-major operands: b^T and a^T are made first as 16-bit copies
 * (the f32 row's GEMM reads them transposed in place, but the half row
 * around it widened all three inputs and narrowed both outputs: 1.33x
 * PyTorch's bf16 at 128 x 128). */
static int cpu_mmbw_bf16(tb_cpu_ctx *c, const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    int rc = tb_cpu_begin_op(c, TB_OP_matmul_backward, TB_BF16, in, out, p);
    if (rc)
        return rc;
    const tb_shape sa = tb_tensor_shape(&in[1]), sb = tb_tensor_shape(&in[2]);
    const int nd = sa.ndim;
    const int64_t M = sa.dim[nd - 2], K = sa.dim[nd - 1];
    const int64_t N = sb.dim[nd - 1];
    int64_t batch = 1;
    for (int d = 0; d < nd - 2; d++)
        batch *= sa.dim[d];
    if (batch == 0 || (M == 0 && N == 0) || K == 0)
        return 0; /* at least one of da, db empty, the other zeros */
    uint16_t *t = tb_alloc((size_t)(N * K + K * M) * sizeof *t);
    if (!t)
        return TB_ENOMEM;
    uint16_t *bt = t, *at = t + N * K;
    const uint16_t *g = in[0].data, *a = in[1].data, *b = in[2].data;
    uint16_t *da = out[0].data, *db = out[1].data;
    const tb_gemm_parallel par = {cpu_gemm_par_run, c};
    const tb_gemm_parallel *pp = c->threads > 1 ? &par : NULL;
    for (int64_t i = 0; i < batch && rc == 0; i++) {
        tb_gemm_tr16_avx512bf16(b + i * K * N, bt, K, N);
        tb_gemm_tr16_avx512bf16(a + i * M * K, at, M, K);
        rc = tb_gemm_bf16_ep(TB_ISA_AVX512BF16, M, K, N, g + i * M * N, N,
                             bt, K, da + i * M * K, K, c->threads, pp, NULL,
                             0);
        if (rc == 0)
            rc = tb_gemm_bf16_ep(TB_ISA_AVX512BF16, K, N, M, at, M,
                                 g + i * M * N, N, db + i * K * N, N,
                                 c->threads, pp, NULL, 0);
    }
    tb_free(t);
    return rc;
}

CPU_BF16_ENTRY(matmul, cpu_mm_bf16(ctx, in, out))
CPU_BF16_ENTRY(linear, cpu_lin_bf16(ctx, in, out, p))
CPU_BF16_ENTRY(matmul_backward, cpu_mmbw_bf16(ctx, in, out, p))
#endif
