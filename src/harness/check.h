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
    const char *method; /* "full", "projection" or "identities" */
} tb_check;

/* Compare got[i] (host tensors, dtype of the case) with ref[i] (f64) for
 * i < n_out: element passes when |got-ref| <= atol*sqrt(reduce_len) +
 * rtol*|ref|, when both are NaN, or when both are the same infinity.
 * reduce_len <= 0 counts as 1; below 1 it narrows atol (softmax passes
 * 1/len: TB_CHECK_DISTRIBUTION). */
void tb_check_outputs(const tb_tensor *got, const tb_tensor *ref, int n_out,
                      tb_tol tol, double reduce_len, tb_check *out);

/* The reduce_len to pass tb_check_outputs for a case of op whose model
 * says reduce_len: the same, or 1/reduce_len for TB_CHECK_DISTRIBUTION
 * (softmax: an output is about 1/len, so the tolerance shrinks). */
double tb_check_terms(const tb_op *op, double reduce_len);

/* Matmuls above this many FLOPs are checked by projection: the full
 * double-precision reference costs O(M*N*K) and takes minutes at 4096. */
#define TB_CHECK_PROJECTION_FLOPS 2.5e8

/* BLIS-style O(n^2) check of C = A @ B ([..., M, K] @ [..., K, N], host,
 * contiguous): for a random v in [-1, 1]^N (seeded), compare C v with
 * A (B v) computed in double.  Row i of every batch passes when
 * |(Cv)_i - (A(Bv))_i| <= sum_j (atol*sqrt(K) + rtol*|C_ij|) |v_j|,
 * the bound the element-wise check would allow summed along v.  Errors
 * in C cannot hide unless they cancel along a random direction. */
void tb_check_matmul_projection(const tb_tensor *a, const tb_tensor *b,
                                const tb_tensor *c, tb_tol tol,
                                uint64_t seed, tb_check *out);

/* svd, qr, eigh (A [m, n] host, got: the case's outputs, ref: the
 * reference's, f64): the values against the reference, the
 * reconstruction of A, orthonormality, R's triangle - what defines the
 * factorization, since its vectors are not unique (check.c).  n_bad counts
 * entries out of bound; first_bad_output names the identity (0 values,
 * 1 reconstruction, 2 orthonormality, 3 triangle). */
void tb_check_factorization(const tb_op *op, const tb_tensor *a,
                            const tb_tensor *got, const tb_tensor *ref,
                            tb_tol tol, tb_check *out);

#endif
