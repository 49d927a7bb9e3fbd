/* matmul_int8 on the cpu backend (ops/quant.h defines the values).
 *
 * The C row quantizes a (u8, minus its zero point) and b (s8, stored
 * transposed), then sums each output's int32 products along K and
 * dequantizes.  The avx2 row packs both as s16 pairs (qgemm.h) and runs
 * a 4 x 16 micro-kernel of vpmaddwd (qgemm_avx2.c): the same exact sums,
 * so both match the reference bit for bit.  The avx512bf16 row packs the
 * raw u8 and s8 values in quads along K for vpdpbusd and subtracts the
 * zero point's share once per column (qgemm.h, qgemm_avx512bf16.c): the
 * same sums again.  Rows are split over the instance's threads. */
#include <string.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "../../ops/quant.h"
#include "cpu_internal.h"
#include "isa.h"
#include "kreg.h"
#include "qgemm.h"
#if TB_CPU_HAVE_GEMM
#include "gemm/gemm.h"
#endif

/* The packing buffers of the SIMD rows: n blocks of bytes[i] (each
 * rounded up to 64 bytes) in one buffer, the thread's cached GEMM
 * scratch where the build has it (gemm.h: no allocation per call), else
 * tb_alloc's.  NULL when it cannot be had; q_put gives it back. */
static char *q_get(int n, const size_t *bytes, char **blk, int *own)
{
    size_t off[4], total = 0;
    for (int i = 0; i < n; i++) {
        off[i] = total;
        total += (bytes[i] + 63) / 64 * 64;
    }
#if TB_CPU_HAVE_GEMM
    char *mem = tb_gemm_scratch_get(total, own);
#else
    char *mem = tb_alloc(total);
    *own = 1;
#endif
    for (int i = 0; i < n; i++)
        blk[i] = mem ? mem + off[i] : NULL;
    return mem;
}

static void q_put(char *mem, int own)
{
#if TB_CPU_HAVE_GEMM
    tb_gemm_scratch_put(mem, own);
#else
    (void)own;
    tb_free(mem);
#endif
}

typedef struct {
    int64_t M, N, K;
    int32_t za;
    float sa, sb;
} qshape;

/* The row's level lv (an instance below it: TB_EUNSUPPORTED), then
 * tb_cpu_begin_op, then the shape and the parameters. */
static int q_begin(void *ctx, int lv, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p, qshape *q)
{
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    int rc = tb_cpu_begin_op(ctx, TB_OP_matmul_int8, TB_F32, in, out, p);
    if (rc)
        return rc;
    q->M = in[0].shape[0];
    q->K = in[0].shape[1];
    q->N = in[1].shape[1];
    q->sa = (float)tb_cpu_param(p, TB_OP_matmul_int8, 0);
    q->za = (int32_t)tb_cpu_param(p, TB_OP_matmul_int8, 1);
    q->sb = (float)tb_cpu_param(p, TB_OP_matmul_int8, 2);
    return 0;
}

/* ---- the C row ---- */

typedef struct {
    const qshape *q;
    const int16_t *a;  /* [M][K], qa - za */
    const int8_t *bt;  /* [N][K], qb transposed */
    float *out;
} c_job;

static void c_part(void *arg, int part, int nparts)
{
    const c_job *j = arg;
    const qshape *q = j->q;
    int64_t m0, m1;
    tb_cpu_span(q->M, 1, part, nparts, &m0, &m1);
    for (int64_t i = m0; i < m1; i++)
        for (int64_t n = 0; n < q->N; n++) {
            const int16_t *a = j->a + i * q->K;
            const int8_t *b = j->bt + n * q->K;
            int32_t acc = 0;
            for (int64_t k = 0; k < q->K; k++)
                acc += (int32_t)a[k] * b[k];
            j->out[i * q->N + n] = tb_quant_out(acc, q->sa, q->sb);
        }
}

int TB_CPU_KFN(matmul_int8, f32, c)(void *ctx, const tb_tensor *in,
                                    tb_tensor *out, const tb_params *p)
{
    qshape q;
    int rc = q_begin(ctx, TB_ISA_SCALAR, in, out, p, &q);
    if (rc)
        return rc;
    int16_t *a = tb_alloc((size_t)(q.M * q.K) * sizeof *a);
    int8_t *bt = tb_alloc((size_t)(q.N * q.K));
    if (!a || !bt) {
        tb_free(a);
        tb_free(bt);
        return TB_ENOMEM;
    }
    const float *x = in[0].data, *y = in[1].data;
    for (int64_t i = 0; i < q.M * q.K; i++)
        a[i] = (int16_t)(tb_quant_u8(x[i], q.sa, q.za) - q.za);
    for (int64_t k = 0; k < q.K; k++)
        for (int64_t n = 0; n < q.N; n++)
            bt[n * q.K + k] = tb_quant_s8(y[k * q.N + n], q.sb);
    c_job j = {&q, a, bt, out[0].data};
    tb_cpu_parallel(ctx, q.M * q.N * q.K, q.M, c_part, &j);
    tb_free(a);
    tb_free(bt);
    return 0;
}

/* ---- the avx2 row: packing here, the micro-kernel in qgemm_avx2.c ---- */

#if TB_CPU_HAVE_AVX2
typedef struct {
    const tb_qgemm_args *g;
} v_job;

static void v_part(void *arg, int part, int nparts)
{
    const v_job *j = arg;
    int64_t m0, m1;
    tb_cpu_span(j->g->M, 4, part, nparts, &m0, &m1);
    tb_qgemm_rows_avx2(j->g, m0, m1);
}

int TB_CPU_KFN(matmul_int8, f32, avx2)(void *ctx, const tb_tensor *in,
                                       tb_tensor *out, const tb_params *p)
{
    qshape q;
    int rc = q_begin(ctx, TB_ISA_AVX2, in, out, p, &q);
    if (rc)
        return rc;
    const int64_t K2 = (q.K + 1) / 2, NP = (q.N + 15) / 16;
    const size_t sz[2] = {(size_t)(q.M * 2 * K2) * sizeof(int16_t),
                          (size_t)(NP * K2 * 32) * sizeof(int16_t)};
    char *blk[2];
    int own;
    char *mem = q_get(2, sz, blk, &own);
    if (!mem)
        return TB_ENOMEM;
    int16_t *ap = (int16_t *)(void *)blk[0], *bp = (int16_t *)(void *)blk[1];
    const float *x = in[0].data, *y = in[1].data;
    for (int64_t i = 0; i < q.M; i++) {
        int16_t *r = ap + i * 2 * K2;
        for (int64_t k = 0; k < q.K; k++)
            r[k] = (int16_t)(tb_quant_u8(x[i * q.K + k], q.sa, q.za) - q.za);
        if (q.K & 1)
            r[q.K] = 0;
    }
    memset(bp, 0, (size_t)(NP * K2 * 32) * sizeof *bp);
    for (int64_t k = 0; k < q.K; k++)
        for (int64_t n = 0; n < q.N; n++)
            bp[((n / 16) * K2 + k / 2) * 32 + 2 * (n % 16) + (k & 1)] =
                tb_quant_s8(y[k * q.N + n], q.sb);
    tb_qgemm_args g = {ap, bp, q.M, q.N, K2, q.sa, q.sb, out[0].data};
    v_job j = {&g};
    tb_cpu_parallel(ctx, q.M * q.N * q.K, (q.M + 3) / 4, v_part, &j);
    q_put(mem, own);
    return 0;
}
#endif

/* ---- the avx512bf16 row: vpdpbusd (qgemm_avx512bf16.c) ---- */

#if TB_CPU_HAVE_AVX512BF16
static void pack_part(void *arg, int part, int nparts)
{
    const tb_qgemm512_args *g = arg;
    int64_t p0, p1;
    tb_cpu_span((g->M + TB_QGEMM512_MR - 1) / TB_QGEMM512_MR, 1, part,
                nparts, &p0, &p1);
    tb_qgemm_pack_a_avx512bf16(g, p0, p1);
    tb_cpu_span((g->N + TB_QGEMM512_NR - 1) / TB_QGEMM512_NR, 1, part,
                nparts, &p0, &p1);
    tb_qgemm_pack_b_avx512bf16(g, p0, p1);
}

static void rows_part(void *arg, int part, int nparts)
{
    const tb_qgemm512_args *g = arg;
    int64_t p0, p1;
    tb_cpu_span((g->M + TB_QGEMM512_MR - 1) / TB_QGEMM512_MR, 1, part,
                nparts, &p0, &p1);
    tb_qgemm_rows_avx512bf16(g, p0, p1);
}

int TB_CPU_KFN(matmul_int8, f32, avx512bf16)(void *ctx, const tb_tensor *in,
                                             tb_tensor *out,
                                             const tb_params *p)
{
    qshape q;
    int rc = q_begin(ctx, TB_ISA_AVX512BF16, in, out, p, &q);
    if (rc)
        return rc;
    const int64_t KQ = (q.K + 3) / 4;
    const int64_t MP = (q.M + TB_QGEMM512_MR - 1) / TB_QGEMM512_MR;
    const int64_t NP = (q.N + TB_QGEMM512_NR - 1) / TB_QGEMM512_NR;
    const size_t sz[3] = {
        (size_t)(MP * KQ * TB_QGEMM512_MR) * sizeof(int32_t),
        (size_t)(NP * KQ * TB_QGEMM512_NR) * sizeof(int32_t),
        (size_t)(NP * TB_QGEMM512_NR) * sizeof(int32_t)};
    char *blk[3];
    int own;
    char *mem = q_get(3, sz, blk, &own);
    if (!mem)
        return TB_ENOMEM;
    tb_qgemm512_args g = {
        .a = in[0].data, .b = in[1].data, .M = q.M, .N = q.N, .K = q.K,
        .KQ = KQ, .a_scale = q.sa, .b_scale = q.sb, .a_zero = q.za,
        .ap = (int32_t *)(void *)blk[0], .bp = (int32_t *)(void *)blk[1],
        .corr = (int32_t *)(void *)blk[2], .out = out[0].data};
    tb_cpu_parallel(ctx, q.M * q.K + q.K * q.N, MP > NP ? MP : NP,
                    pack_part, &g);
    tb_cpu_parallel(ctx, q.M * q.N * q.K, MP, rows_part, &g);
    q_put(mem, own);
    return 0;
}
#endif
