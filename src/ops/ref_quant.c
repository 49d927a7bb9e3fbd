/* matmul_int8's double-precision reference (ops/quant.h): the inputs
 * quantized as the op defines it, the products summed exactly in int64,
 * then the op's f32 dequantization.  Independent of the kernels'
 * packing, blocking and SIMD; they must match it bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "alloc.h"
#include "quant.h"
#include "ref.h"

static double par(const tb_params *p, int idx)
{
    const tb_op *op = tb_op_get(TB_OP_matmul_int8);
    return p && tb_params_has(p, idx) ? p->v[idx] : op->params[idx].def;
}

int tb_ref_matmul_int8(const tb_tensor *in, tb_tensor *out,
                       const tb_params *p)
{
    const tb_tensor *a = &in[0], *b = &in[1];
    if (a->ndim != 2 || b->ndim != 2 || out->ndim != 2 ||
        a->shape[1] != b->shape[0] || out->shape[0] != a->shape[0] ||
        out->shape[1] != b->shape[1] || out->dtype != TB_F64 ||
        a->shape[1] > TB_QUANT_MAX_K)
        return TB_ESHAPE;
    const int64_t M = a->shape[0], K = a->shape[1], N = b->shape[1];
    const float sa = (float)par(p, 0), sb = (float)par(p, 2);
    const int32_t za = (int32_t)par(p, 1);
    int32_t *qa = malloc((size_t)(M * K) * sizeof *qa);
    int32_t *qb = malloc((size_t)(K * N) * sizeof *qb);
    if (!qa || !qb) {
        free(qa);
        free(qb);
        return TB_ENOMEM;
    }
    for (int64_t i = 0; i < M * K; i++)
        qa[i] = (int32_t)tb_quant_u8((float)tb_tensor_get(a, i), sa, za) - za;
    for (int64_t i = 0; i < K * N; i++)
        qb[i] = tb_quant_s8((float)tb_tensor_get(b, i), sb);
    double *o = out->data;
    int64_t *row = malloc((size_t)N * sizeof *row);
    if (!row) {
        free(qa);
        free(qb);
        return TB_ENOMEM;
    }
    for (int64_t i = 0; i < M; i++) {
        memset(row, 0, (size_t)N * sizeof *row);
        for (int64_t k = 0; k < K; k++) {
            const int64_t x = qa[i * K + k];
            const int32_t *bk = qb + k * N;
            for (int64_t j = 0; j < N; j++)
                row[j] += x * bk[j];
        }
        for (int64_t j = 0; j < N; j++)
            o[i * N + j] = tb_quant_out((int32_t)row[j], sa, sb);
    }
    free(row);
    free(qa);
    free(qb);
    return 0;
}
