/* einsum's reference (einsum1, einsum, einsum3, einsum4): the naive sum
 * in double, over every value of every letter, of the product of the
 * operands' elements; no plan, no GEMM (ops/einsum.h only parses). */
#include <string.h>

#include "../base/error.h"
#include "einsum.h"
#include "ref.h"

static int einsum_ref(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    const tb_op *op = tb_op_get(id);
    tb_shape sh[TB_MAX_INPUTS];
    for (int k = 0; k < op->n_in; k++) {
        sh[k].ndim = in[k].ndim;
        memcpy(sh[k].dim, in[k].shape, sizeof sh[k].dim);
    }
    tb_einsum e;
    if (tb_einsum_of(op, sh, p, &e, NULL, 0))
        return TB_EPARAM;
    tb_shape os;
    tb_einsum_out_shape(&e, &os);
    if (out->dtype != TB_F64 || out->ndim != os.ndim ||
        memcmp(out->shape, os.dim, (size_t)os.ndim * sizeof os.dim[0]))
        return TB_ESHAPE;
    /* every letter: the output's first (row-major), then the summed */
    int lv[TB_EIN_LETTERS], n = 0;
    bool used[TB_EIN_LETTERS] = {false};
    for (int d = 0; d < e.out.n; d++)
        used[lv[n++] = e.out.l[d]] = true;
    for (int k = 0; k < e.n_in; k++)
        for (int d = 0; d < e.in[k].n; d++)
            if (!used[e.in[k].l[d]])
                used[lv[n++] = e.in[k].l[d]] = true;
    /* each operand's logical element stride per letter (a repeated
     * letter: the sum of its dims' strides, the diagonal) */
    int64_t st[TB_MAX_INPUTS][TB_EIN_LETTERS] = {{0}};
    for (int k = 0; k < e.n_in; k++) {
        int64_t s = 1;
        for (int d = e.in[k].n - 1; d >= 0; d--) {
            st[k][e.in[k].l[d]] += s;
            s *= in[k].shape[d];
        }
    }
    int64_t idx[TB_EIN_LETTERS] = {0};
    int64_t n_out = tb_tensor_numel(out), per = 1;
    for (int i = e.out.n; i < n; i++)
        per *= e.size[lv[i]];
    double *o = out->data;
    for (int64_t oi = 0; oi < n_out; oi++) {
        double acc = 0;
        for (int64_t t = 0; t < per; t++) {
            double prod = 1;
            for (int k = 0; k < e.n_in; k++) {
                int64_t f = 0;
                for (int i = 0; i < n; i++)
                    f += idx[lv[i]] * st[k][lv[i]];
                prod *= tb_tensor_get(&in[k], f);
            }
            acc += prod;
            /* next value of the summed letters (the last fastest) */
            for (int i = n - 1; i >= e.out.n; i--) {
                if (++idx[lv[i]] < e.size[lv[i]])
                    break;
                idx[lv[i]] = 0;
            }
        }
        o[oi] = acc;
        for (int i = e.out.n - 1; i >= 0; i--) {
            if (++idx[lv[i]] < e.size[lv[i]])
                break;
            idx[lv[i]] = 0;
        }
    }
    return 0;
}

#define EINSUM_REF(name)                                                  \
    int tb_ref_##name(const tb_tensor *in, tb_tensor *out,                \
                      const tb_params *p)                                 \
    {                                                                     \
        return einsum_ref(TB_OP_##name, in, out, p);                      \
    }
EINSUM_REF(einsum1)
EINSUM_REF(einsum)
EINSUM_REF(einsum3)
EINSUM_REF(einsum4)
