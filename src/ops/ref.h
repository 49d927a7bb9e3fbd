/* Reference kernels: the ground truth every backend is checked against.
 *
 * Each reads host inputs of any dtype and any strides (including the
 * stride-0 dims of a broadcast view), accumulates in double and writes
 * contiguous f64 host outputs whose shapes come from the op's shape rule.
 * Clarity over speed: these are never timed. Signature: tb_ref_fn.
 *
 * One kernel per op of TB_OP_LIST, named tb_ref_NAME: here, and for the
 * creation ops in ref_create.c, optimizer steps in ref_optim.c and
 * svd/qr/eigh in ref_linalg.c.  Float parameters
 * that act on values (add_scalar's `scalar`, leaky_relu's `alpha`,
 * softplus's `beta` and `threshold`) are first rounded to the input's
 * dtype, as NumPy and PyTorch do with a Python scalar applied to a float32
 * array, so an f32 kernel and the reference apply the same constant. */
#ifndef TB_OPS_REF_H
#define TB_OPS_REF_H

#include "op.h"

#define TB_REF_DECLARE(name)                                              \
    int tb_ref_##name(const tb_tensor *in, tb_tensor *out,                \
                      const tb_params *p);
TB_OP_LIST(TB_REF_DECLARE)
#undef TB_REF_DECLARE

/* An operand of tb_ref_gemm: element (i, j) of the matrix is element
 * off + i rs + j cs of host tensor t (any dtype, any strides). */
typedef struct tb_ref_mat {
    const tb_tensor *t;
    int64_t off, rs, cs;
} tb_ref_mat;

/* o[i N + j] = init[j] (0 when init is NULL) + sum over k of a(i, k)
 * b(k, j), i < M, j < N, for o contiguous M x N: the blocked,
 * compensated dot products of matmul's and linear's references
 * (ref_gemm.c; its error bound there).  0, or TB_ENOMEM for its scratch
 * (then o holds no result). */
int tb_ref_gemm(const tb_ref_mat *a, const tb_ref_mat *b, const double *init,
                int64_t M, int64_t N, int64_t K, double *o);

/* Sign conventions for the check of svd/qr/eigh (tb_canon_fn; in
 * ref_linalg.c). */
void tb_canon_svd(tb_tensor *out, int n_out);
void tb_canon_qr(tb_tensor *out, int n_out);
void tb_canon_eigh(tb_tensor *out, int n_out);

#endif
