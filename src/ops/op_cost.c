/* The cost models of the op table: FLOPs, bytes moved and the number of
 * terms summed into an output element (the tolerance's reduce_len).
 * See op.h and op_rules.h. */
#include "op.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "model_shape.h"
#include "op_rules.h"

/* One FLOP per output element. */
double tb_flops_per_out(const tb_op *op, const tb_shape *in,
                        const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)op, (void)in, (void)p, (void)dt;
    return op_numel_d(&out[0]);
}

/* Reductions: one add per input element (+1 divide per output for mean). */
double tb_flops_reduce(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)p, (void)dt;
    return op_numel_d(&in[0]) +
           (op->id == TB_OP_mean ? op_numel_d(&out[0]) : 0);
}

double tb_flops_matmul(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)op, (void)p, (void)dt;
    return 2.0 * op_numel_d(&out[0]) * (double)in[0].dim[in[0].ndim - 1];
}

double tb_flops_zero(const tb_op *op, const tb_shape *in, const tb_shape *out,
                     const tb_params *p, tb_dtype dt)
{
    (void)op, (void)in, (void)out, (void)p, (void)dt;
    return 0;
}

/* log_softmax: per element a compare (max), a subtract, an exp and an
 * add (sum), then a subtract of the log-sum: 5 counted operations.
 * softmax likewise, with a divide by the sum in place of the last
 * subtract. */
double tb_flops_log_softmax(const tb_op *op, const tb_shape *in,
                            const tb_shape *out, const tb_params *p,
                            tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    return 5.0 * op_numel_d(&in[0]);
}

/* Element-wise ops: the row's FLOPs per output element (elem_flops,
 * counting every arithmetic operation, comparison and libm call of the
 * op's defining formula as one: transcendentals are far dearer than an
 * add, so items/s is the fairer figure for them) times the outputs. */
double tb_flops_elem(const tb_op *op, const tb_shape *in, const tb_shape *out,
                     const tb_params *p, tb_dtype dt)
{
    (void)in, (void)p, (void)dt;
    const double per = op->elem_flops > 0 ? op->elem_flops : 1;
    return per * op_numel_d(&out[0]);
}

/* var: the mean (an add per element), then a subtract, a multiply and an
 * add per element, and a divide per output. */
double tb_flops_var(const tb_op *op, const tb_shape *in, const tb_shape *out,
                    const tb_params *p, tb_dtype dt)
{
    (void)op, (void)p, (void)dt;
    return 4.0 * op_numel_d(&in[0]) + op_numel_d(&out[0]);
}

/* linear: a multiply-add per (m, k, n), then a bias add and a relu per
 * output. */
double tb_flops_linear(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)op, (void)p, (void)dt;
    return 2.0 * op_numel_d(&out[0]) * (double)in[0].dim[1] +
           2.0 * op_numel_d(&out[0]);
}

/* conv2d: a multiply-add per output and (c, kh, kw), the padded taps
 * included (as the usual 2*N*O*OH*OW*C*KH*KW figure), plus the bias add. */
double tb_flops_conv2d(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)p, (void)dt;
    double taps =
        (double)in[1].dim[1] * (double)in[1].dim[2] * (double)in[1].dim[3];
    return op_numel_d(&out[0]) * (2.0 * taps + (op->n_in == 3 ? 1 : 0));
}

/* Pooling: a compare (max) or add (avg) per output and window tap, plus
 * a divide per output for avg. */
double tb_flops_pool2d(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)in, (void)dt;
    double k = p->v[0];
    return op_numel_d(&out[0]) *
           (k * k + (op->id == TB_OP_avg_pool2d ? 1 : 0));
}

/* Minimum traffic: every input read once, every output written once. */
double tb_bytes_io(const tb_op *op, const tb_shape *in, const tb_shape *out,
                   const tb_params *p, tb_dtype dt)
{
    (void)p;
    double n = 0; /* bytes: an optimizer's f32 state in a 16-bit case */
    for (int i = 0; i < op->n_in; i++)
        n += op_numel_d(&in[i]) * op_dtype_bytes(tb_op_in_dtype(op, i, dt));
    for (int i = 0; i < op->n_out; i++)
        n += op_numel_d(&out[i]) *
             op_dtype_bytes(tb_op_out_dtype(op, i, dt));
    return n;
}

double tb_rlen_reduce(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt)
{
    (void)op, (void)p, (void)dt;
    return op_numel_d(&in[0]) / op_numel_d(&out[0]);
}

double tb_rlen_lastdim(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    return in[0].ndim ? (double)in[0].dim[in[0].ndim - 1] : 1;
}

/* batch_norm: training: the channel sums (1 a element), the squared
 * deviations (3) and the scale (4: subtract, two multiplies, add), and
 * per channel the statistics and the running update (about 12);
 * inference: the scale alone (4 a element and 3 per channel). */
double tb_flops_batch_norm(const tb_op *op, const tb_shape *in,
                           const tb_shape *out, const tb_params *p,
                           tb_dtype dt)
{
    (void)op, (void)out, (void)dt;
    const bool training = !tb_params_has(p, 0) || p->v[0] != 0;
    const double C = in[0].ndim > 1 ? (double)in[0].dim[1] : 0;
    return (training ? 8 : 4) * op_numel_d(&in[0]) + (training ? 12 : 3) * C;
}

/* batch_norm: a channel's statistics sum N x the trailing dims. */
double tb_rlen_batch_norm(const tb_op *op, const tb_shape *in,
                          const tb_shape *out, const tb_params *p,
                          tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    const double C = in[0].ndim > 1 ? (double)in[0].dim[1] : 0;
    return C > 0 ? op_numel_d(&in[0]) / C : 1;
}

/* group_norm: a group's statistics sum C / num_groups x the trailing
 * dims of one sample. */
double tb_rlen_group_norm(const tb_op *op, const tb_shape *in,
                          const tb_shape *out, const tb_params *p,
                          tb_dtype dt)
{
    (void)out, (void)dt;
    const double G = tb_params_has(p, 0) ? p->v[0] : op->params[0].def;
    const double NG = in[0].ndim > 1 ? (double)in[0].dim[0] * G : 0;
    return NG > 0 ? op_numel_d(&in[0]) / NG : 1;
}

double tb_rlen_matmul(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    return (double)in[0].dim[in[0].ndim - 1];
}

double tb_rlen_axis(const tb_op *op, const tb_shape *in, const tb_shape *out,
                    const tb_params *p, tb_dtype dt)
{
    (void)out, (void)dt;
    int ax = 0;
    double axis = tb_params_has(p, 0) ? p->v[0] : op->params[0].def;
    if (tb_axis_norm((int64_t)axis, in[0].ndim, &ax))
        return 1;
    return (double)in[0].dim[ax];
}

/* conv2d: C*KH*KW products (+ the bias) summed into each output. */
double tb_rlen_conv2d(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt)
{
    (void)out, (void)p, (void)dt;
    return (double)in[1].dim[1] * (double)in[1].dim[2] * (double)in[1].dim[3] +
           (op->n_in == 3 ? 1 : 0);
}

/* avg_pool2d: kernel^2 terms per output. */
double tb_rlen_pool2d(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt)
{
    (void)op, (void)in, (void)out, (void)dt;
    return p->v[0] * p->v[0];
}

/* Optimizer steps: floating-point operations per parameter, counted
 * from the update formulas in their PyTorch form (weight decay, when
 * nonzero, adds 2; divisions and square roots count 1 each). */
double tb_flops_optim(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt)
{
    (void)out, (void)p, (void)dt;
    double per;
    switch (op->id) {
    case TB_OP_sgd:
        per = 2;
        break; /* p -= lr*g */
    case TB_OP_sgd_momentum:
        per = 6;
        break; /* buf, nesterov, p */
    case TB_OP_adagrad:
        per = 6;
        break; /* sum += g*g; p -= .. */
    case TB_OP_adamax:
        per = 9;
        break; /* m, u = max(..), p */
    case TB_OP_adam:
        per = 12;
        break; /* m, v, sqrt, div, p */
    case TB_OP_adamw:
        per = 14;
        break; /* adam + decoupled decay */
    case TB_OP_nadam:
        per = 15;
        break;
    case TB_OP_lamb:
        per = 19;
        break; /* adam's moments and r, two squares, p -= c*r */
    case TB_OP_adabound:
        per = 14;
        break; /* adam's moments, the clipped step, p */
    case TB_OP_lbfgs: /* per pair two dots and two axpys; gamma's two
                       * dots, q = -g, d = gamma*q, p += lr*d */
        return (8 * (double)in[2].dim[0] + 7) * op_numel_d(&in[0]);
    default:
        per = 14;
        break; /* radam, rectified */
    }
    return per * op_numel_d(&in[0]);
}

/* lamb and lbfgs: what any algorithm must move, more than every
 * operand once (tb_bytes_io).  lamb's step scales every element by a
 * ratio of norms over the whole tensor, so a second pass reads p, m and
 * v again (r recomputed from them; no buffer holds r) to write p.
 * lbfgs's direction is a combination of the history's rows whose
 * coefficients are dot products over whole rows (the two-loop
 * recursion, or the compact form's S^T g, Y^T g): S and Y are read once
 * to find the coefficients and once more to combine them (the working
 * vector q, one row, is left to the cache). */
double tb_bytes_optim_red(const tb_op *op, const tb_shape *in,
                          const tb_shape *out, const tb_params *p,
                          tb_dtype dt)
{
    double n = tb_bytes_io(op, in, out, p, dt);
    const int again[2][3] = {{0, 2, 3}, {2, 3, -1}}; /* lamb, lbfgs */
    for (int k = 0; k < 3; k++) {
        int i = again[op->id == TB_OP_lbfgs][k];
        if (i >= 0)
            n += op_numel_d(&in[i]) *
                 op_dtype_bytes(tb_op_in_dtype(op, i, dt));
    }
    return n;
}

/* lbfgs: the direction is built from dot products of n terms (a
 * library that sums them in f32, as PyTorch does, errs ~ sqrt(n) ulps).
 * lamb's norms enter only through the trust ratio, a relative error of
 * the small update lr*ratio*r: no reduce_len. */
double tb_rlen_optim(const tb_op *op, const tb_shape *in, const tb_shape *out,
                     const tb_params *p, tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    return op_numel_d(&in[0]);
}

/* Linear algebra: the textbook operation counts (Golub & Van Loan,
 * Matrix Computations, 4th ed., sec. 5.2 and 8.3 and the table of
 * 8.6.3), a convention for GFLOP/s, not what a given LAPACK performs:
 * qr (Householder, thin Q, m >= n): 4mn^2 - 4n^3/3; svd (thin, R-SVD):
 * 6mn^2 + 11n^3; eigh (symmetric QR with eigenvectors): 9n^3.  For
 * m < n, m and n swap. */
double tb_flops_linalg(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)out, (void)p, (void)dt;
    double m = (double)in[0].dim[0], n = (double)in[0].dim[1];
    if (m < n) {
        double t = m;
        m = n;
        n = t;
    }
    switch (op->id) {
    case TB_OP_qr:
        return 4 * m * n * n - 4 * n * n * n / 3;
    case TB_OP_svd:
        return 6 * m * n * n + 11 * n * n * n;
    default:
        return 9 * n * n * n;
    }
}

/* svd/qr/eigh: errors grow with the matrix size. */
double tb_rlen_linalg(const tb_op *op, const tb_shape *in, const tb_shape *out,
                      const tb_params *p, tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    return (double)(in[0].dim[0] > in[0].dim[1] ? in[0].dim[0] : in[0].dim[1]);
}

/* ---- attention ------------------------------------------------------ */

/* The (query, key) pairs one head's softmax keeps: Sq * Sk, or with the
 * causal mask (j <= i) sum over i of min(i + 1, Sk). */
static double sdpa_pairs(const tb_shape *in, const tb_params *p)
{
    const double sq = (double)in[0].dim[2], sk = (double)in[1].dim[2];
    if (!(p && tb_params_has(p, 0) && p->v[0] != 0))
        return sq * sk;
    if (sq <= sk)
        return sq * (sq + 1) / 2;
    return sk * (sk + 1) / 2 + (sq - sk) * sk;
}

/* sdpa: per kept pair 2D (the dot product), 4 (scale, max, exp, sum)
 * and 2Dv (the weighted sum of v); per query row Dv divides.  The masked
 * pairs are not counted: a kernel that computes them does work the
 * result does not need (sdpa_unfused's steps do). */
double tb_flops_sdpa(const tb_op *op, const tb_shape *in,
                     const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)op, (void)dt;
    const double bh = (double)in[0].dim[0] * (double)in[0].dim[1];
    const double d = (double)in[0].dim[3], dv = (double)in[2].dim[3];
    return bh * (sdpa_pairs(in, p) * (2 * d + 2 * dv + 4)) +
           op_numel_d(&out[0]);
}

/* sdpa_backward (g, q, k, v): per kept pair 6D + 4Dv + 8: the score
 * and its exp against the row's statistics, dP = g . v, its term of
 * rowsum(P * dP), dS = P * (dP - D), and the three products dv += P g,
 * dq += dS k, dk += dS q.  The kernel's first pass (the row statistics
 * recomputed, 2D + 2Dv per pair) is not counted, as FlashAttention's
 * papers count the backward. */
double tb_flops_sdpa_backward(const tb_op *op, const tb_shape *in,
                              const tb_shape *out, const tb_params *p,
                              tb_dtype dt)
{
    (void)op, (void)out, (void)dt;
    const double bh = (double)in[1].dim[0] * (double)in[1].dim[1];
    const double d = (double)in[1].dim[3], dv = (double)in[3].dim[3];
    return bh * sdpa_pairs(&in[1], p) * (6 * d + 4 * dv + 8);
}

/* Terms behind one gradient: a score's D and dP's Dv, then dq's sum over
 * Sk keys or dk's and dv's over Sq queries. */
double tb_rlen_sdpa_backward(const tb_op *op, const tb_shape *in,
                             const tb_shape *out, const tb_params *p,
                             tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    const double sq = (double)in[1].dim[2], sk = (double)in[2].dim[2];
    return (double)in[1].dim[3] + (double)in[3].dim[3] + (sq > sk ? sq : sk);
}

/* sdpa_unfused: the inputs and the output, plus each intermediate
 * written once and read once per step that reads it: k^T (2 |k|) and
 * the [B, H, Sq, Sk] scores 8 times (matmul writes; scale, mask and
 * softmax read and write; the last matmul reads). */
double tb_bytes_sdpa_unfused(const tb_op *op, const tb_shape *in,
                             const tb_shape *out, const tb_params *p,
                             tb_dtype dt)
{
    const double scores = (double)in[0].dim[0] * (double)in[0].dim[1] *
                          (double)in[0].dim[2] * (double)in[1].dim[2];
    return tb_bytes_io(op, in, out, p, dt) +
           op_dtype_bytes(dt) * (2 * op_numel_d(&in[1]) + 8 * scores);
}

/* Terms behind one output: D in each score, Sk in the weighted sum. */
double tb_rlen_sdpa(const tb_op *op, const tb_shape *in, const tb_shape *out,
                    const tb_params *p, tb_dtype dt)
{
    (void)op, (void)out, (void)p, (void)dt;
    return (double)in[0].dim[3] + (double)in[1].dim[2];
}

/* Workloads: forward FLOPs; backward counted as twice the forward (its
 * two products per layer), the optimizer step not at all. */
double tb_flops_workload(const tb_op *op, const tb_shape *in,
                         const tb_shape *out, const tb_params *p,
                         tb_dtype dt)
{
    (void)out, (void)dt;
    double f = tb_model_forward_flops(tb_model_of_op(op), &in[0]);
    if (tb_model_op_trains(op) && !(tb_params_has(p, 0) && p->v[0] == 0))
        f *= 3;
    return f;
}
