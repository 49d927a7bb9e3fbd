/* Correctness check of a backend's outputs against the reference. */
#ifndef TB_HARNESS_CHECK_H
#define TB_HARNESS_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "../ops/op.h"

typedef struct tb_check {
    double max_abs_err;  /* max |got - ref| */
    double max_rel_err;  /* max |got - ref| / |ref| over ref != 0 */
    double rtol, atol;   /* atol already scaled by sqrt(reduce_len) */
    int64_t n_bad;       /* elements outside tolerance */
    int64_t first_bad;   /* flat index of the first, -1 if none */
    int first_bad_output;
    double first_bad_got, first_bad_ref;
    bool passed;
} tb_check;

/* Compare got[i] (host tensors, dtype of the case) with ref[i] (f64) for
 * i < n_out: element passes when |got-ref| <= atol*sqrt(reduce_len) +
 * rtol*|ref|, when both are NaN, or when both are the same infinity. */
void tb_check_outputs(const tb_tensor *got, const tb_tensor *ref, int n_out,
                      tb_tol tol, double reduce_len, tb_check *out);

#endif
