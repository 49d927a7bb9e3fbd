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

/* Sign conventions for the check of svd/qr/eigh (tb_canon_fn; in
 * ref_linalg.c). */
void tb_canon_svd(tb_tensor *out, int n_out);
void tb_canon_qr(tb_tensor *out, int n_out);
void tb_canon_eigh(tb_tensor *out, int n_out);

#endif
