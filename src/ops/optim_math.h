/* Scalars of the optimizer steps shared by the reference (ref_optim.c)
 * and the cpu kernels (backends/cpu/optim.c), so both take the same
 * per-call constants; the reference itself is checked against
 * torch.optim (tests/test_optim.c). */
#ifndef TB_OPS_OPTIM_MATH_H
#define TB_OPS_OPTIM_MATH_H

#include <math.h>

/* lbfgs: the most history pairs a step takes (torch's default
 * history_size is 100). */
#define TB_LBFGS_MAX_HIST 256
/* lbfgs: a pair with s.y at or below this is skipped (torch.optim.LBFGS
 * does not store it). */
#define TB_LBFGS_MIN_YS 1e-10

/* LAMB and L-BFGS reduce over the whole tensor in this many chunks, each
 * summed in order in double, then the chunks in order: the same sums at
 * every thread count (a thread takes whole chunks). */
#define TB_OPTIM_CHUNKS 64

/* NAdam's mu_i = beta1 (1 - 0.5 * 0.96^(i * momentum_decay)). */
static inline double tb_nadam_mu(double b1, double md, double i)
{
    return b1 * (1.0 - 0.5 * pow(0.96, i * md));
}

/* prod_{i=1..t} mu_i, multiplied in index order as PyTorch's mu_product
 * state accumulates it.  Once a factor is exactly beta1 (0.5 * 0.96^(i
 * md) below half an ulp of 1) every later one is too, and the rest is
 * beta1^(t-i); once the product is below 2^-60 (so 1 - product and
 * 1 - product*mu_next are exactly 1) or zero, the rest cannot matter.
 * The loop stops there, which bounds it for huge t at default
 * parameters. */
static inline double tb_nadam_mu_product(double b1, double md, double t)
{
    double prod = 1.0;
    for (double i = 1; i <= t; i++) {
        double mu = tb_nadam_mu(b1, md, i);
        if (mu == b1)
            return prod * pow(b1, t - i + 1);
        prod *= mu;
        if (prod < 0x1p-60)
            return prod;
    }
    return prod;
}

#endif
