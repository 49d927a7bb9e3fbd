/* The op table: parameter schemas, input domains, tolerances and one
 * row per op; its shape rules are op_shape.c's, its cost models
 * op_cost.c's, the parameter helpers op_params.c's.  See op.h. */
#include "op.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "calib.h"
#include "einsum.h"
#include "model_shape.h"
#include "op_backward.h"
#include "op_rules.h"
#include "ref.h"

/* ---- parameter schemas and input domains -------------------------------- */

static const tb_param_spec params_reduce[] = {
    {"axis", TB_PARAM_INT, true, 0, -TB_MAX_DIMS, TB_MAX_DIMS - 1,
     "axis to reduce; absent: all elements"},
    {"keepdim", TB_PARAM_BOOL, false, 0, 0, 1,
     "keep the reduced axis with size 1"},
};
static const tb_param_spec params_transpose[] = {
    {"dim0", TB_PARAM_INT, false, -2, -TB_MAX_DIMS, TB_MAX_DIMS - 1,
     "first dim to swap"},
    {"dim1", TB_PARAM_INT, false, -1, -TB_MAX_DIMS, TB_MAX_DIMS - 1,
     "second dim to swap"},
};
static const tb_param_spec params_axis[] = {
    {"axis", TB_PARAM_INT, false, -1, -TB_MAX_DIMS, TB_MAX_DIMS - 1,
     "axis of the softmax"},
};
static const tb_param_spec params_var[] = {
    {"axis", TB_PARAM_INT, true, 0, -TB_MAX_DIMS, TB_MAX_DIMS - 1,
     "axis to reduce; absent: all elements"},
    {"keepdim", TB_PARAM_BOOL, false, 0, 0, 1,
     "keep the reduced axis with size 1"},
    {"correction", TB_PARAM_INT, false, 1, 0, 1e9,
     "divide by n - correction: 1 = unbiased (PyTorch's default), 0 = "
     "NumPy's default ddof=0"},
};
static const tb_param_spec params_leaky[] = {
    {"alpha", TB_PARAM_FLOAT, false, 0.01, -1e6, 1e6,
     "slope for x <= 0"},
};
static const tb_param_spec params_softplus[] = {
    {"beta", TB_PARAM_FLOAT, false, 1, 1e-6, 1e6,
     "log1p(exp(beta*x))/beta"},
    {"threshold", TB_PARAM_FLOAT, false, 20, -1e6, 1e6,
     "x itself where beta*x > threshold"},
};
static const tb_param_spec params_scalar[] = {
    {"scalar", TB_PARAM_FLOAT, false, 1, -1e30, 1e30,
     "the constant operand (rounded to the case dtype)"},
};
#define PERM_DIM(i)                                                       \
    {"p" #i, TB_PARAM_INT, true, 0, -TB_MAX_DIMS, TB_MAX_DIMS - 1,        \
     "input dim that becomes output dim " #i "; none set: reverse"}
static const tb_param_spec params_permute[TB_MAX_PARAMS] = {
    PERM_DIM(0), PERM_DIM(1), PERM_DIM(2), PERM_DIM(3),
    PERM_DIM(4), PERM_DIM(5), PERM_DIM(6), PERM_DIM(7),
};
#undef PERM_DIM
/* conv2d's three; conv2d_backward's four: then whether dx is wanted
 * (the tape sets input_grad=0 on a layer whose input needs no gradient:
 * the first). */
static const tb_param_spec params_conv[] = {
    {"stride", TB_PARAM_INT, false, 1, 1, 1 << 20,
     "window step, both spatial dims"},
    {"padding", TB_PARAM_INT, false, 0, 0, 1 << 20,
     "zeros added on each side, both spatial dims"},
    {"dilation", TB_PARAM_INT, false, 1, 1, 1 << 20,
     "spacing of kernel taps, both spatial dims"},
    {"input_grad", TB_PARAM_BOOL, true, 1, 0, 1,
     "0: dx is not computed and comes back zeros (dw, db as ever); "
     "absent or 1: dx computed"},
};
static const tb_param_spec params_pool[] = {
    {"kernel", TB_PARAM_INT, false, 2, 1, 1 << 20,
     "window size, both spatial dims"},
    {"stride", TB_PARAM_INT, true, 0, 1, 1 << 20,
     "window step; absent: = kernel"},
    {"padding", TB_PARAM_INT, false, 0, 0, 1 << 20,
     "padding on each side, at most kernel/2"},
};

/* The divisor stays away from zero so the check measures the kernel,
 * not the conditioning of x / ~0. */
static const tb_domain domain_div[] = {{-1, 1}, {0.5, 2}};
/* log, rsqrt: positive inputs away from 0 (log(0) = -inf); sqrt may
 * touch 0.  pow: a positive base (a negative one with a fractional
 * exponent is NaN) and exponents of both signs. */
static const tb_domain domain_log[] = {{0.01, 10}};
static const tb_domain domain_sqrt[] = {{0, 10}};
static const tb_domain domain_pow[] = {{0.1, 2}, {-2, 2}};

#define P_LR(d) {"lr", TB_PARAM_FLOAT, false, d, 0, 1e6, "learning rate"}
#define P_WD(d)                                                           \
    {"weight_decay", TB_PARAM_FLOAT, false, d, 0, 1e6,                    \
     "L2 penalty added to the gradient (adamw: decoupled decay)"}
#define P_BETA1 {"beta1", TB_PARAM_FLOAT, false, 0.9, 0, 0.999999,      \
                 "decay of the first moment"}
#define P_BETA2 {"beta2", TB_PARAM_FLOAT, false, 0.999, 0, 0.999999,    \
                 "decay of the second moment"}
#define P_EPS(d) {"eps", TB_PARAM_FLOAT, false, d, 0, 1, "added to the denominator"}
/* The state tensors are given (a run in progress): `step` is the number
 * of the step being taken, used in the bias corrections; every timed
 * call repeats that step number on the state the last call left. */
#define P_STEP {"step", TB_PARAM_INT, false, 10, 1, 1e9,                   \
                "number of this step (1 = first), for bias corrections"}
static const tb_param_spec params_sgd[] = {P_LR(0.01), P_WD(0)};
static const tb_param_spec params_sgd_momentum[] = {
    P_LR(0.01),
    {"momentum", TB_PARAM_FLOAT, false, 0.9, 0, 1, "momentum factor"},
    {"dampening", TB_PARAM_FLOAT, false, 0, 0, 1, "dampening of the gradient"},
    P_WD(0),
    {"nesterov", TB_PARAM_BOOL, false, 0, 0, 1, "Nesterov momentum"},
};
static const tb_param_spec params_adam[] = {
    P_LR(1e-3), P_BETA1, P_BETA2, P_EPS(1e-8), P_WD(0), P_STEP,
};
static const tb_param_spec params_adamw[] = {
    P_LR(1e-3), P_BETA1, P_BETA2, P_EPS(1e-8), P_WD(0.01), P_STEP,
};
static const tb_param_spec params_adagrad[] = {
    P_LR(0.01),
    {"lr_decay", TB_PARAM_FLOAT, false, 0, 0, 1e6, "lr / (1 + (step-1)*lr_decay)"},
    P_WD(0), P_EPS(1e-10), P_STEP,
};
static const tb_param_spec params_adamax[] = {
    P_LR(2e-3), P_BETA1, P_BETA2, P_EPS(1e-8), P_WD(0), P_STEP,
};
static const tb_param_spec params_nadam[] = {
    P_LR(2e-3), P_BETA1, P_BETA2, P_EPS(1e-8), P_WD(0),
    {"momentum_decay", TB_PARAM_FLOAT, false, 4e-3, 0, 1e6,
     "mu_t = beta1*(1 - 0.5*0.96^(t*momentum_decay))"},
    P_STEP,
};
static const tb_param_spec params_radam[] = {
    P_LR(1e-3), P_BETA1, P_BETA2, P_EPS(1e-8), P_WD(0), P_STEP,
};
static const tb_param_spec params_lamb[] = {
    P_LR(1e-3), P_BETA1, P_BETA2, P_EPS(1e-6),
    {"weight_decay", TB_PARAM_FLOAT, false, 0.01, 0, 1e6,
     "lambda: lambda*p added to the update r (decoupled)"},
    P_STEP,
};
static const tb_param_spec params_adabound[] = {
    P_LR(1e-3), P_BETA1, P_BETA2,
    {"final_lr", TB_PARAM_FLOAT, false, 0.1, 0, 1e6,
     "the SGD step size both bounds converge to"},
    {"gamma", TB_PARAM_FLOAT, false, 1e-3, 1e-12, 1e6,
     "convergence speed of the bounds"},
    P_EPS(1e-8), P_WD(0), P_STEP,
};
static const tb_param_spec params_lbfgs[] = {
    {"lr", TB_PARAM_FLOAT, false, 1, 0, 1e6,
     "step length t: p += t*d (no line search)"},
};
#undef P_LR
#undef P_WD
#undef P_BETA1
#undef P_BETA2
#undef P_EPS
#undef P_STEP
static const tb_param_spec params_full[] = {
    {"value", TB_PARAM_FLOAT, false, 0, -1e30, 1e30,
     "the fill value (rounded to the case dtype)"},
};
static const tb_param_spec params_arange[] = {
    {"start", TB_PARAM_FLOAT, false, 0, -1e30, 1e30, "first value"},
    {"step", TB_PARAM_FLOAT, false, 1, -1e30, 1e30,
     "out[i] = start + i*step, computed in double, rounded once"},
};
static const tb_param_spec params_rand_uniform[] = {
    {"low", TB_PARAM_FLOAT, false, 0, -1e30, 1e30, "lower bound"},
    {"high", TB_PARAM_FLOAT, false, 1, -1e30, 1e30, "upper bound"},
    {"seed", TB_PARAM_INT, false, 0, 0, 9007199254740992.0,
     "stream: out[i] depends only on (seed, i)"},
};
static const tb_param_spec params_calib_spin[] = {
    {"ns", TB_PARAM_INT, false, 1000, 0, 1e10,
     "nanoseconds to spin on the clock"},
};
static const tb_param_spec params_rand_normal[] = {
    {"mean", TB_PARAM_FLOAT, false, 0, -1e30, 1e30, "mean"},
    {"std", TB_PARAM_FLOAT, false, 1, 0, 1e30, "standard deviation"},
    {"seed", TB_PARAM_INT, false, 0, 0, 9007199254740992.0,
     "stream: out[i] depends only on (seed, i)"},
};

/* Optimizer inputs: param, grad, then state; second-moment state
 * (v, adagrad's sum, adamax's u) is nonnegative. */
static const tb_domain domain_optim_mv[] = {{-1, 1}, {-1, 1}, {-1, 1},
                                            {0, 1}};
static const tb_domain domain_optim_sum[] = {{-1, 1}, {-1, 1}, {0, 1}};
/* lbfgs: p, g, S, Y.  Pairs from [0, 1] x [0.25, 1] have s^T y > 0 (a
 * curvature pair L-BFGS keeps) and a product of oblique projections of
 * moderate norm, as the pairs of a convex problem do. */
static const tb_domain domain_lbfgs[] = {{-1, 1}, {-1, 1}, {0, 1},
                                         {0.25, 1}};
/* mul_ and div_ write into their input and are called millions of times
 * in a row: any |b| != 1 would drive the values to 0 (subnormals, which
 * are slow) or infinity within the timing loop.  b = -1 keeps them
 * unchanged in magnitude and still makes a kernel that ignores b tb_op_fail the
 * check (mul and div check the arithmetic on general values). */
static const tb_domain domain_inplace_neg1[] = {{-1, 1}, {-1, -1}};

static const int8_t alias_first[] = {0};
static const int8_t alias_p_buf[] = {0, 2};
static const int8_t alias_p_m_v[] = {0, 2, 3};
static const int8_t alias_running[] = {-1, 3}; /* batch_norm */
static const int8_t alias_p_own[] = {0, -1}; /* lbfgs: p, direction */

/* The unfused compositions, step by step as an eager framework runs
 * them (one kernel and one new tensor per step). */
static const tb_step steps_add_relu[] = {
    {TB_OP_add, {0, 1}, 0, {{NULL, 0}}},
    {TB_OP_relu, {TB_STEP_TMP(0)}, -1, {{NULL, 0}}},
};
static const tb_step steps_linear[] = {
    {TB_OP_matmul, {0, 1}, 0, {{NULL, 0}}},
    {TB_OP_add, {TB_STEP_TMP(0), 2}, 1, {{NULL, 0}}},
    {TB_OP_relu, {TB_STEP_TMP(1)}, -1, {{NULL, 0}}},
};
/* m = max(x, axis, keepdim); s = x - m; e = exp(s); z = sum(e, axis,
 * keepdim); l = log(z); out = s - l. */
static const tb_step steps_log_softmax[] = {
    {TB_OP_max, {0}, 0, {{"keepdim", 1}}},
    {TB_OP_sub, {0, TB_STEP_TMP(0)}, 1, {{NULL, 0}}},
    {TB_OP_exp, {TB_STEP_TMP(1)}, 2, {{NULL, 0}}},
    {TB_OP_sum, {TB_STEP_TMP(2)}, 3, {{"keepdim", 1}}},
    {TB_OP_log, {TB_STEP_TMP(3)}, 4, {{NULL, 0}}},
    {TB_OP_sub, {TB_STEP_TMP(1), TB_STEP_TMP(4)}, -1, {{NULL, 0}}},
};
/* s = k^T (materialized: transpose's default dims are the last two);
 * t = q @ s; u = t * scale (sdpa_step_params sets it); m = causal_mask(u)
 * (-inf above the diagonal; a copy when causal is false); w = softmax(m)
 * along the last dim; out = w @ v. */
static const tb_step steps_sdpa[] = {
    {TB_OP_transpose, {1}, 0, {{NULL, 0}}},
    {TB_OP_matmul, {0, TB_STEP_TMP(0)}, 1, {{NULL, 0}}},
    {TB_OP_mul_scalar, {TB_STEP_TMP(1)}, 2, {{NULL, 0}}},
    {TB_OP_causal_mask, {TB_STEP_TMP(2)}, 3, {{NULL, 0}}},
    {TB_OP_softmax, {TB_STEP_TMP(3)}, 4, {{"axis", -1}}},
    {TB_OP_matmul, {TB_STEP_TMP(4), 2}, -1, {{NULL, 0}}},
};

/* logp = log_softmax(x, axis 1); nll_loss(logp, target). */
static const tb_step steps_cross_entropy[] = {
    {TB_OP_log_softmax, {0}, 0, {{"axis", 1}}},
    {TB_OP_nll_loss, {TB_STEP_TMP(0), 1}, -1, {{NULL, 0}}},
};
#define NSTEPS(a) (int)(sizeof a / sizeof a[0])

/* sdpa and sdpa_unfused: PyTorch's is_causal (key j allowed for query i
 * iff j <= i) and its default scale. */
static const tb_param_spec params_sdpa[] = {
    {"causal", TB_PARAM_BOOL, false, 0, 0, 1,
     "mask key j from query i when j > i (torch.ones(Sq, Sk).tril())"},
    {"scale", TB_PARAM_FLOAT, false, 0, 0, 1e30,
     "multiplies q @ k^T; 0: 1/sqrt(D)"},
};
/* einsum: the equation, as NumPy's and PyTorch's einsum take it
 * (ops/einsum.h); one op per operand count (the table's arity is fixed
 * per op), all four the same but for n_in and the default. */
static const tb_param_spec params_einsum[] = {
    {"equation", TB_PARAM_STRING, false, 0, 1, TB_PARAM_STR_MAX,
     "terms of letters a-z, A-Z, one per input, joined by ',', then '->' "
     "and the output's (none: the letters seen once, sorted); no '...'"},
};
static const tb_param_spec params_causal_mask[] = {
    {"causal", TB_PARAM_BOOL, false, 1, 0, 1,
     "0: copy x unchanged"},
};

/* sdpa_unfused's scale step (mul_scalar): the case's scale, or
 * 1/sqrt(D) for 0; its mask step: the case's causal (sdpa's default,
 * not causal_mask's). */
static int sdpa_step_params(const tb_op *op, int s, const tb_shape *in,
                            const tb_params *p, tb_params *step)
{
    const tb_op_id id = op->steps[s].op;
    if (id == TB_OP_causal_mask)
        return tb_params_set(tb_op_get(id), step, "causal",
                             tb_params_has(p, 0) && p->v[0] != 0, NULL, 0);
    if (id != TB_OP_mul_scalar)
        return 0;
    double sc = tb_params_has(p, 1) ? p->v[1] : 0;
    if (sc == 0)
        sc = 1 / sqrt((double)in[0].dim[in[0].ndim - 1]);
    return tb_params_set(tb_op_get(id), step, "scalar", sc, NULL, 0);
}

/* layer_norm and rms_norm: PyTorch's defaults (nn.LayerNorm's 1e-5;
 * nn.RMSNorm's default is the dtype's epsilon, 1e-6 is the common
 * explicit choice). */
static const tb_param_spec params_layer_norm[] = {
    {"eps", TB_PARAM_FLOAT, false, 1e-5, 0, 1, "added to the variance"},
};
static const tb_param_spec params_rms_norm[] = {
    {"eps", TB_PARAM_FLOAT, false, 1e-6, 0, 1,
     "added to the mean square"},
};

/* dropout: PyTorch's default p; the stream's seed as the random ops'. */
static const tb_param_spec params_dropout[] = {
    {"p", TB_PARAM_FLOAT, false, 0.5, 0, 0x1.fffffffffffffp-1,
     "probability of zeroing an element, in [0, 1)"},
    {"seed", TB_PARAM_INT, false, 0, 0, 9007199254740992.0,
     "stream: element i's keep bit depends only on (seed, i)"},
};

/* batch_norm and group_norm: F.batch_norm's and nn.GroupNorm's
 * defaults (num_groups has none in PyTorch: 1, which divides every C,
 * normalizes each sample over all its channels). */
static const tb_param_spec params_batch_norm[] = {
    {"training", TB_PARAM_BOOL, false, 1, 0, 1,
     "batch statistics, running ones updated (else the running ones)"},
    {"momentum", TB_PARAM_FLOAT, false, 0.1, 0, 1,
     "weight of the batch statistics in the running update"},
    {"eps", TB_PARAM_FLOAT, false, 1e-5, 0, 1, "added to the variance"},
};
static const tb_param_spec params_batch_norm_backward[] = {
    {"eps", TB_PARAM_FLOAT, false, 1e-5, 0, 1, "added to the variance"},
};
static const tb_param_spec params_group_norm[] = {
    {"num_groups", TB_PARAM_INT, false, 1, 1, 1e9,
     "groups of channels (must divide C)"},
    {"eps", TB_PARAM_FLOAT, false, 1e-5, 0, 1, "added to the variance"},
};
/* batch_norm's running statistics [2, C]: variances nonnegative (row 1;
 * the domain is per input, so the means too). */
static const tb_domain domain_batch_norm[] = {{-1, 1}, {-1, 1}, {-1, 1},
                                              {0.25, 1}};

/* matmul_int8: scales of 1/128 map inputs in [-1, 1] onto the u8 and
 * s8 ranges (a: 0..255 around 128; b: -128..127, the top clamped). */
static const tb_param_spec params_int8[] = {
    {"a_scale", TB_PARAM_FLOAT, false, 0.0078125, 1e-30, 1e30,
     "a's quantization step (as f32)"},
    {"a_zero", TB_PARAM_INT, false, 128, 0, 255, "a's zero point (u8)"},
    {"b_scale", TB_PARAM_FLOAT, false, 0.0078125, 1e-30, 1e30,
     "b's quantization step (as f32); b's zero point is 0"},
};

/* ---- the table ----------------------------------------------------------- */

/* Tolerances: |got - ref| <= atol * sqrt(reduce_len) + rtol * |ref|,
 * one {rtol, atol} per dtype: f32, f64, bf16, f16.
 * f32 element-wise results are one rounding from the exact value
 * (half an ulp = 6e-8 relative); reductions and matmul accumulate
 * rounding that grows with the number of terms.
 *
 * bf16 and f16 (the reference reads the same rounded inputs): a kernel
 * computes in f32 and rounds each result once to the dtype, an error of
 * at most half the dtype's epsilon relative to the result, plus the f32
 * computation's own (2^-16 or 2^-13 of that for one operation; for a
 * sum, f32's accumulation error, whose absolute part the f32 atol already
 * bounds).  So rtol is stated in units of the dtype's epsilon (LOWP(k):
 * k * 2^-7 and k * 2^-10, 2k times the worst rounding), never borrowed
 * from f32, and atol is the f32 computation's. */
#define EPS_BF16 0x1p-7
#define EPS_F16 0x1p-10
#define LOWP(k, atol_bf16, atol_f16)                                     \
    {(k) * EPS_BF16, atol_bf16}, { (k) * EPS_F16, atol_f16 }
#define TOL_EW {{1e-6, 1e-7}, {1e-14, 1e-15}, LOWP(1, 1e-7, 1e-7)}
#define TOL_ACC {{1e-5, 2e-6}, {1e-12, 1e-13}, LOWP(1, 2e-6, 2e-6)}
/* An eager framework's composition of a fused op rounds every
 * intermediate to the dtype: a few roundings, which a cancellation
 * (t + b near 0 in linear's t = x @ W; u = t + b) turns into absolute
 * error of the intermediate's size. */
#define TOL_EW_STEPS {{1e-6, 1e-7}, {1e-14, 1e-15}, LOWP(2, 1e-7, 1e-7)}
#define TOL_ACC_STEPS                                                     \
    {{1e-5, 2e-6}, {1e-12, 1e-13}, LOWP(4, EPS_BF16, EPS_F16)}
/* Exact: the result is one of the inputs (or an index), or an exact
 * operation on one (neg, abs). */
#define TOL_EXACT {{0, 0}, {0, 0}, {0, 0}, {0, 0}}
/* Element-wise math on exact inputs: one correctly rounded operation or
 * a libm call of at most a few ulp (glibc's expf/logf/tanhf/powf are
 * under 2 ulp), or a short chain of them whose rounding errors are not
 * amplified (sigmoid, silu, softplus in their stable forms).  rtol 1e-6
 * is 8 ulp at worst (2^-23 relative per ulp) for f32, 1e-14 ~45 ulp for
 * f64.  atol is the smallest normal number: results in the subnormal
 * range may be flushed to zero (FTZ, as SIMD kernels often run) or
 * computed as 1/(1+inf) = 0, but any normal result must be accurate.
 * f16's subnormals are spaced 2^-24 apart: a result rounded there is
 * within 2^-25 absolute. */
#define TOL_MATH                                                          \
    {{1e-6, FLT_MIN}, {1e-14, DBL_MIN}, LOWP(1, FLT_MIN, 0x1p-24)}
/* gelu and gelu_tanh as most libraries compute them, 0.5*x*(1+erf(.))
 * and 0.5*x*(1+tanh(.)), cancel for negative x: the absolute error is
 * about |x|/2 times half an ulp of 1, i.e. up to ~1.6e-7 in f32 (at
 * x ~ -5.5, beyond which the result rounds to 0) and ~4.4e-16 in f64 (at
 * x ~ -8).  Stable forms (erfc, x*sigmoid(2u)) meet rtol alone. */
#define TOL_GELU {{1e-6, 2e-7}, {1e-14, 1e-15}, LOWP(1, 2e-7, 2e-7)}
/* Optimizer steps: a short chain of roundings (a square root and a
 * division for the Adam family) on values of order 1. */
#define TOL_OPT {{1e-5, 1e-6}, {1e-13, 1e-14}, LOWP(1, 1e-6, 1e-6)}
/* rand_normal: Box-Muller's log and cos of the same uniform draws. */
#define TOL_RAND_NORMAL {{1e-5, 1e-6}, {1e-13, 1e-14}, LOWP(1, 1e-6, 1e-6)}
/* svd/qr/eigh on well-conditioned random matrices (entries in [-1, 1]):
 * backward-stable algorithms, errors ~ n * eps * cond; vectors compared
 * after tb_canon_* fixed their signs.  No backend factorizes in bf16 or
 * f16 (PyTorch does not either): n * eps * cond stated for them anyway,
 * n ~ 64. */
#define TOL_LINALG                                                        \
    {{2e-3, 2e-4}, {1e-9, 1e-10}, LOWP(64, EPS_BF16, EPS_F16)}

/* Backward ops: a gradient is a short chain of roundings per term
 * (sigmoid' = g*s*(1-s), gelu' = g*(Phi + x*phi)), sums scale atol with
 * their length (tb_bw_reduce_len). */
#define TOL_BW_EW {{1e-5, 1e-6}, {1e-13, 1e-14}, LOWP(1, 1e-6, 1e-6)}
#define BW_ROW(nin, nout, shape_fn, tol_)                                 \
    .category = TB_CAT_BACKWARD, .n_in = nin, .n_out = nout,              \
    .shape = shape_fn, .flops = tb_bw_flops, .bytes = tb_bytes_io,        \
    .reduce_len = tb_bw_reduce_len, .tol = tol_
/* log_softmax_backward's y is a log-probability (<= 0); div's divisor
 * away from 0; nll_loss's targets are class indices (0: the harness's
 * random inputs are all class 0; tests give real targets). */
static const tb_domain domain_bw_log_softmax[] = {{-1, 1}, {-4, 0}};
static const tb_domain domain_bw_div[] = {{-1, 1}, {-1, 1}, {0.5, 2}};
static const tb_domain domain_bw_nll[] = {{-4, 0}, {0, 0}};
static const tb_domain domain_bw_nll_backward[] = {{-1, 1}, {-4, 0}, {0, 0}};
/* sdpa_backward's q, k, v from sdpa's own inputs' [-1, 1], not a
 * gradient's forward input's wider range: q in [-25, 25] makes scores of
 * hundreds, where an f32 score's rounding, exponentiated and multiplied
 * by q, is past the f32 tolerance (the avx2 row's f32 products; the C
 * row sums its dot products in double). */
static const tb_domain domain_bw_sdpa[] = {{-1, 1}, {-1, 1}, {-1, 1},
                                           {-1, 1}};

/* Class indices held as values in the input before the last
 * (cross_entropy's target after the logits [N, C]): C classes. */
static double index_classes(const tb_op *op, const tb_shape *in,
                            const tb_shape *out, const tb_params *p,
                            tb_dtype dt)
{
    (void)out, (void)p, (void)dt;
    const tb_shape *x = &in[op->index_in - 1];
    return x->ndim == 2 ? (double)x->dim[1] : 0;
}
/* An embedding's indices: below V, weight's rows (embedding) or the
 * parameter num_weights (embedding_backward). */
static double index_rows(const tb_op *op, const tb_shape *in,
                         const tb_shape *out, const tb_params *p,
                         tb_dtype dt)
{
    (void)out, (void)dt;
    if (op->id == TB_OP_embedding_backward)
        return p->v[0];
    return in[0].ndim == 2 ? (double)in[0].dim[0] : 0;
}

/* embedding reads only the rows it gathers: idx, then n rows of D in
 * and out (n the number of indices). */
static double bytes_embedding(const tb_op *op, const tb_shape *in,
                              const tb_shape *out, const tb_params *p,
                              tb_dtype dt)
{
    (void)op, (void)p;
    return (op_numel_d(&in[1]) + 2 * op_numel_d(&out[0])) *
           op_dtype_bytes(dt);
}

static const tb_param_spec params_embedding_bw[] = {
    {"num_weights", TB_PARAM_INT, false, 1000, 1, 1e9,
     "V: the rows of the weight whose gradient this is; indices below V"},
};

/* cross_entropy and its gradient: targets in input idx, below C */
#define XENT_ROW(nin, shape_fn, idx)                                      \
    BW_ROW(nin, 1, shape_fn, TOL_ACC), .index_in = idx,                   \
    .index_bound = index_classes

/* copy_h2d, copy_d2h: the host side of the copy. */
static const tb_param_spec params_xfer[] = {
    {"pinned", TB_PARAM_BOOL, false, 0, 0, 1,
     "the host buffer is page-locked (cudaMallocHost) instead of pageable "
     "(malloc)"},
};

/* copy_h2d, copy_d2h: the bytes that cross between host and device
 * (read on one side, written on the other), once. */
static double bytes_xfer(const tb_op *op, const tb_shape *in,
                         const tb_shape *out, const tb_params *p,
                         tb_dtype dt)
{
    (void)op, (void)out, (void)p;
    return op_numel_d(&in[0]) * op_dtype_bytes(dt);
}

#define P_POOL                                                            \
    {"pool", TB_PARAM_BOOL, false, 0, 0, 1,                               \
     "tensor memory from a caching pool (pool.h) instead of one backend "  \
     "allocation per tensor"}
/* a training step's first six parameters (workload.c reads phase,
 * hooks, lr and momentum by position, pool and state_window by name), an
 * inference step's first two */
#define P_TRAIN                                                           \
    {"phase", TB_PARAM_INT, false, 2, 0, 2,                               \
     "0: forward only (recorded on the tape); 1: forward + backward; 2: " \
     "forward, backward and the sgd_momentum step"},                      \
    {"hooks", TB_PARAM_INT, false, 0, 0, 3,                               \
     "1: a forward hook on every op; 2: a backward hook on every op; 3: " \
     "both (each counts its calls)"},                                     \
    {"lr", TB_PARAM_FLOAT, false, 0.01, 0, 1e6, "learning rate"},        \
    {"momentum", TB_PARAM_FLOAT, false, 0.9, 0, 1, "momentum factor"},    \
    P_POOL,                                                               \
    {"state_window", TB_PARAM_INT, false, 100, 0, 1000000000,            \
     "phase 2: the parameters and momentum buffers are set back to their " \
     "initial values (outside the timed calls) before a sample whose "    \
     "steps would go past this many steps since they were set, so every " \
     "timed step is one of the first max(state_window, calls per sample) " \
     "steps of training (a longer run drives unused units' momentum to "  \
     "subnormals); 0: never (the state drifts with the run's length)"}
#define P_INFER                                                           \
    {"hooks", TB_PARAM_INT, false, 0, 0, 1,                               \
     "1: a forward hook on every op (counts its calls)"},                 \
    P_POOL
static const tb_param_spec params_train_step[] = {P_TRAIN};
static const tb_param_spec params_infer_step[] = {P_INFER};
/* the transformer block's: the MLP's and CNN's, then heads */
#define P_HEADS                                                           \
    {"heads", TB_PARAM_INT, false, 4, 1, 4096,                            \
     "attention heads; d_model (x's last dim) a multiple of it"}
static const tb_param_spec params_tfm_train[] = {P_TRAIN, P_HEADS};
static const tb_param_spec params_tfm_infer[] = {P_INFER, P_HEADS};
#undef P_HEADS
#undef P_TRAIN
#undef P_INFER
/* A loss or log-probabilities after ~10 chained kernels with sums over
 * up to K = 784 terms (in bf16 and f16: ~10 roundings of the dtype). */
#define TOL_WORKLOAD                                                      \
    {{1e-4, 1e-5}, {1e-10, 1e-12}, LOWP(16, EPS_BF16, EPS_F16)}
#define WL_ROW(nparams, params_)                                          \
    .category = TB_CAT_WORKLOAD, .n_in = 1, .n_out = 1,                   \
    .n_params = nparams, .params = params_, .shape = tb_rule_workload,    \
    .flops = tb_flops_workload, .bytes = tb_bytes_io, .tol = TOL_WORKLOAD
static const tb_param_spec params_api[] = {
    {"layer", TB_PARAM_INT, false, 0, 0, 3,
     "0: the raw kernel (looked up once); 1: through the op table's "
     "dispatch (kernel lookup every call); 2: a tensor API that checks "
     "shapes and allocates its result (freed after the call); 3: that "
     "API with a forward hook registered"},
    P_POOL,
};
#undef P_POOL

/* One row per op, fields by name.  OP_ID(nm): an op that is its own
 * base (id, name, reference kernel); OP_FORM(nm, base): a form of
 * another op (in-place, optimizer state), served by base's kernels.
 * Fields left out are 0 / NULL: no parameters, the default domain
 * [-1, 1], one term per output (reduce_len), no aliasing, no steps, no
 * canonicalisation, the element-wise check. */
#define OP_ID(nm)                                                         \
    .id = TB_OP_##nm, .name = #nm, .ref = tb_ref_##nm, .base = TB_OP_##nm
#define OP_FORM(nm, base_)                                                \
    .id = TB_OP_##nm, .name = #nm, .ref = tb_ref_##nm, .base = TB_OP_##base_

static const tb_op op_table[TB_OP_COUNT] = {
    [TB_OP_add] = {OP_ID(add),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .shape = tb_rule_broadcast, .flops = tb_flops_per_out,
        .bytes = tb_bytes_io,
        .tol = TOL_EW,
        .doc = "a + b, NumPy broadcasting"},
    [TB_OP_sub] = {OP_ID(sub),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .shape = tb_rule_broadcast, .flops = tb_flops_per_out,
        .bytes = tb_bytes_io,
        .tol = TOL_EW,
        .doc = "a - b, NumPy broadcasting"},
    [TB_OP_mul] = {OP_ID(mul),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .shape = tb_rule_broadcast, .flops = tb_flops_per_out,
        .bytes = tb_bytes_io,
        .tol = TOL_EW,
        .doc = "a * b, NumPy broadcasting"},
    [TB_OP_div] = {OP_ID(div),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .domain = domain_div, .shape = tb_rule_broadcast,
        .flops = tb_flops_per_out, .bytes = tb_bytes_io, .tol = TOL_EW,
        .doc = "a / b, NumPy broadcasting"},
    [TB_OP_relu] = {OP_ID(relu),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_per_out, .bytes = tb_bytes_io,
        .tol = TOL_EW,
        .doc = "max(x, 0)"},
    [TB_OP_sum] = {OP_ID(sum),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_reduce, .shape = tb_rule_reduce,
        .flops = tb_flops_reduce,
        .bytes = tb_bytes_io, .reduce_len = tb_rlen_reduce, .tol = TOL_ACC,
        .doc = "sum over all elements or along an axis"},
    [TB_OP_mean] = {OP_ID(mean),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_reduce, .shape = tb_rule_reduce,
        .flops = tb_flops_reduce,
        .bytes = tb_bytes_io, .reduce_len = tb_rlen_reduce, .tol = TOL_ACC,
        .doc = "mean over all elements or along an axis"},
    [TB_OP_matmul] = {OP_ID(matmul),
        .category = TB_CAT_MATMUL, .n_in = 2, .n_out = 1,
        .shape = tb_rule_matmul, .flops = tb_flops_matmul, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_matmul, .tol = TOL_ACC, .check = TB_CHECK_PRODUCT,
        .doc = "[...,M,K] @ [...,K,N], equal batch dims"},
    [TB_OP_transpose] = {OP_ID(transpose),
        .category = TB_CAT_LAYOUT, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_transpose, .shape = tb_rule_transpose,
        .flops = tb_flops_zero, .bytes = tb_bytes_io, .tol = TOL_EW,
        .doc = "swap two dims, materialized"},
    [TB_OP_log_softmax] = {OP_ID(log_softmax),
        .category = TB_CAT_SOFTMAX, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_axis, .shape = tb_rule_axis_same,
        .flops = tb_flops_log_softmax, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_axis, .tol = TOL_ACC,
        .doc = "x - log(sum(exp(x))) along an axis"},

    /* unary math */
    [TB_OP_neg] = {OP_ID(neg),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .tol = TOL_EXACT,
        .doc = "-x"},
    [TB_OP_abs] = {OP_ID(abs),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .tol = TOL_EXACT,
        .doc = "|x|"},
    [TB_OP_exp] = {OP_ID(exp),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .tol = TOL_MATH,
        .doc = "e^x"},
    [TB_OP_log] = {OP_ID(log),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .domain = domain_log, .shape = tb_rule_same, .flops = tb_flops_elem,
        .bytes = tb_bytes_io, .tol = TOL_MATH,
        .doc = "natural log; inputs in [0.01, 10]"},
    [TB_OP_sqrt] = {OP_ID(sqrt),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .domain = domain_sqrt, .shape = tb_rule_same, .flops = tb_flops_elem,
        .bytes = tb_bytes_io, .tol = TOL_MATH,
        .doc = "square root; inputs in [0, 10]"},
    [TB_OP_rsqrt] = {OP_ID(rsqrt),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1,
        .domain = domain_log, .shape = tb_rule_same, .flops = tb_flops_elem,
        .bytes = tb_bytes_io, .tol = TOL_MATH, .elem_flops = 2,
        .doc = "1/sqrt(x); inputs in [0.01, 10]"},

    /* activations */
    [TB_OP_leaky_relu] = {OP_ID(leaky_relu),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_leaky, .shape = tb_rule_same, .flops = tb_flops_elem,
        .bytes = tb_bytes_io, .tol = TOL_MATH, .elem_flops = 2,
        .doc = "x > 0 ? x : alpha*x"},
    [TB_OP_sigmoid] = {OP_ID(sigmoid),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .tol = TOL_MATH, .elem_flops = 4,
        .doc = "1/(1+exp(-x))"},
    [TB_OP_tanh] = {OP_ID(tanh),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .tol = TOL_MATH,
        .doc = "hyperbolic tangent"},
    [TB_OP_gelu] = {OP_ID(gelu),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .tol = TOL_GELU, .elem_flops = 5,
        .doc = "0.5*x*(1+erf(x/sqrt(2))), the exact (erf) form"},
    [TB_OP_gelu_tanh] = {OP_ID(gelu_tanh),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .tol = TOL_GELU, .elem_flops = 9,
        .doc = "0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))), the tanh "
               "approximation"},
    [TB_OP_silu] = {OP_ID(silu),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .tol = TOL_MATH, .elem_flops = 5,
        .doc = "x*sigmoid(x) (swish)"},
    [TB_OP_softplus] = {OP_ID(softplus),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_softplus, .shape = tb_rule_same,
        .flops = tb_flops_elem,
        .bytes = tb_bytes_io, .tol = TOL_MATH, .elem_flops = 5,
        .doc = "log1p(exp(beta*x))/beta, x where beta*x > threshold (PyTorch)"},
    [TB_OP_dropout] = {OP_ID(dropout),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_dropout, .shape = tb_rule_same,
        .flops = tb_flops_elem, .bytes = tb_bytes_io, .tol = TOL_EW,
        .elem_flops = 2,
        .doc = "x * keep / (1 - p), keep = u(seed, i) >= p on the random "
               "ops' counter-based stream (ops/rand.h): the same mask at "
               "every thread count and ISA level; PyTorch's mask differs "
               "(another generator)"},
    [TB_OP_hardswish] = {OP_ID(hardswish),
        .category = TB_CAT_ACTIVATION, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .tol = TOL_MATH, .elem_flops = 5,
        .doc = "x*relu6(x+3)/6 = x*min(max(x+3, 0), 6)/6 (PyTorch)"},

    /* binary with broadcasting */
    [TB_OP_pow] = {OP_ID(pow),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .domain = domain_pow, .shape = tb_rule_broadcast,
        .flops = tb_flops_elem,
        .bytes = tb_bytes_io, .tol = TOL_MATH,
        .doc = "a^b, NumPy broadcasting; a in [0.1, 2], b in [-2, 2]"},
    [TB_OP_maximum] = {OP_ID(maximum),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .shape = tb_rule_broadcast, .flops = tb_flops_elem,
        .bytes = tb_bytes_io,
        .tol = TOL_EXACT,
        .doc = "larger of a and b (NaN if either is), NumPy broadcasting"},
    [TB_OP_minimum] = {OP_ID(minimum),
        .category = TB_CAT_ELEMENTWISE, .n_in = 2, .n_out = 1,
        .shape = tb_rule_broadcast, .flops = tb_flops_elem,
        .bytes = tb_bytes_io,
        .tol = TOL_EXACT,
        .doc = "smaller of a and b (NaN if either is), NumPy broadcasting"},

    /* scalar forms */
    [TB_OP_add_scalar] = {OP_ID(add_scalar),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_scalar, .shape = tb_rule_same, .flops = tb_flops_elem,
        .bytes = tb_bytes_io, .tol = TOL_MATH,
        .doc = "x + scalar"},
    [TB_OP_sub_scalar] = {OP_ID(sub_scalar),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_scalar, .shape = tb_rule_same, .flops = tb_flops_elem,
        .bytes = tb_bytes_io, .tol = TOL_MATH,
        .doc = "x - scalar"},
    [TB_OP_mul_scalar] = {OP_ID(mul_scalar),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_scalar, .shape = tb_rule_same, .flops = tb_flops_elem,
        .bytes = tb_bytes_io, .tol = TOL_MATH,
        .doc = "x * scalar"},
    [TB_OP_div_scalar] = {OP_ID(div_scalar),
        .category = TB_CAT_ELEMENTWISE, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_scalar, .shape = tb_rule_same, .flops = tb_flops_elem,
        .bytes = tb_bytes_io, .tol = TOL_MATH,
        .doc = "x / scalar"},

    /* reductions */
    [TB_OP_max] = {OP_ID(max),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_reduce, .shape = tb_rule_reduce_ext,
        .flops = tb_flops_reduce, .bytes = tb_bytes_io, .tol = TOL_EXACT,
        .doc = "largest element, over all or along an axis (NaN propagates)"},
    [TB_OP_min] = {OP_ID(min),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_reduce, .shape = tb_rule_reduce_ext,
        .flops = tb_flops_reduce, .bytes = tb_bytes_io, .tol = TOL_EXACT,
        .doc = "smallest element, over all or along an axis (NaN propagates)"},
    [TB_OP_argmax] = {OP_ID(argmax),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 2,
        .params = params_reduce, .shape = tb_rule_reduce_ext,
        .flops = tb_flops_reduce, .bytes = tb_bytes_io, .tol = TOL_EXACT,
        .doc =
            "index of the first largest element (first NaN), flat over all or "
            "along an axis; stored as values of the case dtype"},
    [TB_OP_var] = {OP_ID(var),
        .category = TB_CAT_REDUCTION, .n_in = 1, .n_out = 1, .n_params = 3,
        .params = params_var, .shape = tb_rule_reduce_ext,
        .flops = tb_flops_var,
        .bytes = tb_bytes_io, .reduce_len = tb_rlen_reduce, .tol = TOL_ACC,
        .doc =
            "variance over all or along an axis, "
            "sum((x-mean)^2)/(n-correction)"},

    [TB_OP_softmax] = {OP_ID(softmax),
        .category = TB_CAT_SOFTMAX, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_axis, .shape = tb_rule_axis_same,
        .flops = tb_flops_log_softmax, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_axis, .tol = TOL_ACC,
        .check = TB_CHECK_DISTRIBUTION,
        .doc = "exp(x - max) / sum(exp(x - max)) along an axis"},
    [TB_OP_permute] = {OP_ID(permute),
        .category = TB_CAT_LAYOUT, .n_in = 1, .n_out = 1,
        .n_params = TB_MAX_PARAMS, .params = params_permute,
        .shape = tb_rule_permute, .flops = tb_flops_zero, .bytes = tb_bytes_io,
        .tol = TOL_EXACT,
        .doc = "reorder dims: output dim i = input dim p<i>; materialized"},

    [TB_OP_embedding] = {OP_ID(embedding),
        .category = TB_CAT_LAYOUT, .n_in = 2, .n_out = 1,
        .shape = tb_rule_embedding, .flops = tb_flops_zero,
        .bytes = bytes_embedding, .tol = TOL_EXACT, .index_in = 1,
        .index_bound = index_rows,
        .doc = "rows of weight [V,D] gathered by idx [...] (indices as "
               "values, in [0, V)) -> [...,D] (PyTorch's F.embedding)"},

    /* fused */
    [TB_OP_add_relu] = {OP_ID(add_relu),
        .category = TB_CAT_FUSED, .n_in = 2, .n_out = 1,
        .shape = tb_rule_broadcast, .flops = tb_flops_elem,
        .bytes = tb_bytes_io,
        .tol = TOL_EW, .elem_flops = 2,
        .doc = "relu(a + b) in one pass, NumPy broadcasting (fused add, relu)"},
    [TB_OP_linear] = {OP_ID(linear),
        .category = TB_CAT_FUSED, .n_in = 3, .n_out = 1,
        .shape = tb_rule_linear, .flops = tb_flops_linear, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_matmul, .tol = TOL_ACC,
        .doc = "relu(x @ W + b): x [M,K], W [K,N], b [N] (fused matmul, add, "
               "relu)"},

    [TB_OP_matmul_int8] = {OP_ID(matmul_int8),
        .category = TB_CAT_MATMUL, .n_in = 2, .n_out = 1, .n_params = 3,
        .params = params_int8, .shape = tb_rule_matmul_int8,
        .flops = tb_flops_matmul, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_matmul, .tol = TOL_EXACT,
        .doc = "int8 GEMM of f32 inputs: a [M,K] quantized to u8 (a_scale, "
               "a_zero), b [K,N] to s8 (b_scale, zero 0), exact int32 sums, "
               "dequantized to f32 (ops/quant.h); checked exactly; FLOPs: "
               "2 per multiply-add"},

    /* normalization: over the last dim, per channel, per group */
    [TB_OP_layer_norm] = {OP_ID(layer_norm),
        .category = TB_CAT_NORM, .n_in = 3, .n_out = 1, .n_params = 1,
        .params = params_layer_norm, .shape = tb_rule_norm,
        .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_lastdim, .tol = TOL_ACC, .elem_flops = 8,
        .doc = "(x - mean) / sqrt(var + eps) * w + b over x's last dim D "
               "(biased var, PyTorch's F.layer_norm); w, b [D]"},
    [TB_OP_rms_norm] = {OP_ID(rms_norm),
        .category = TB_CAT_NORM, .n_in = 2, .n_out = 1, .n_params = 1,
        .params = params_rms_norm, .shape = tb_rule_norm,
        .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_lastdim, .tol = TOL_ACC, .elem_flops = 4,
        .doc = "x / sqrt(mean(x^2) + eps) * w over x's last dim D "
               "(PyTorch's nn.RMSNorm); w [D]"},
    [TB_OP_batch_norm] = {OP_ID(batch_norm),
        .category = TB_CAT_NORM, .n_in = 4, .n_out = 2, .n_params = 3,
        .params = params_batch_norm, .domain = domain_batch_norm,
        .shape = tb_rule_nc_norm, .flops = tb_flops_batch_norm,
        .bytes = tb_bytes_io, .reduce_len = tb_rlen_batch_norm,
        .tol = TOL_ACC, .alias = alias_running,
        .doc = "per channel of x [N, C, ...]: (x - mean) / sqrt(var + eps) "
               "* w + b (PyTorch's F.batch_norm); w, b [C], running [2, C] "
               "(mean; var) updated in place when training (batch "
               "statistics, unbiased var into running) and used when not; "
               "outputs y, running"},
    [TB_OP_group_norm] = {OP_ID(group_norm),
        .category = TB_CAT_NORM, .n_in = 3, .n_out = 1, .n_params = 2,
        .params = params_group_norm, .shape = tb_rule_nc_norm,
        .flops = tb_flops_elem, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_group_norm, .tol = TOL_ACC, .elem_flops = 8,
        .doc = "per sample and group of C / num_groups channels of x "
               "[N, C, ...]: (x - mean) / sqrt(var + eps) * w + b "
               "(PyTorch's F.group_norm); w, b [C]"},

    /* einsum by operand count: the plan of ops/einsum.h (pairwise
     * GEMMs, gathers for diagonals, sums and permutes); the reference the
     * naive sum over every letter */
#define EINSUM_ROW(name, n, def, what)                                    \
    [TB_OP_##name] = {OP_ID(name),                                        \
        .category = TB_CAT_CONTRACTION, .n_in = n, .n_out = 1,            \
        .n_params = 1, .params = params_einsum, .str_default = def,       \
        .shape = tb_rule_einsum, .einsum_plan = tb_einsum_plan_of,        \
        .flops = tb_flops_einsum, .bytes = tb_bytes_io,                   \
        .reduce_len = tb_rlen_einsum, .tol = TOL_ACC,                     \
        .doc = "einsum of " what " (numpy.einsum's equation); FLOPs: "  \
               "the plan's (2 per GEMM multiply-add, 1 per add of a sum)"}
    EINSUM_ROW(einsum1, 1, "ij->ji",
               "one operand: a permute, diagonal or sum"),
    EINSUM_ROW(einsum, 2, "bij,bjk->bik", "two operands"),
    EINSUM_ROW(einsum3, 3, "ij,jk,kl->il",
               "three operands, contracted pairwise (greedy)"),
    EINSUM_ROW(einsum4, 4, "ij,jk,kl,lm->im",
               "four operands, contracted pairwise (greedy)"),
#undef EINSUM_ROW

    /* attention over [B, H, S, D] */
    [TB_OP_sdpa] = {OP_ID(sdpa),
        .category = TB_CAT_ATTENTION, .n_in = 3, .n_out = 1, .n_params = 2,
        .params = params_sdpa, .shape = tb_rule_sdpa,
        .flops = tb_flops_sdpa, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_sdpa, .tol = TOL_ACC,
        .doc = "softmax(q @ k^T * scale + mask) @ v, q [B,H,Sq,D], k "
               "[B,H,Sk,D], v [B,H,Sk,Dv] -> [B,H,Sq,Dv]; causal: key j "
               "allowed for query i iff j <= i (PyTorch's is_causal, "
               "top-left aligned when Sq != Sk); scale 0: 1/sqrt(D); one "
               "kernel streaming over key blocks with the online softmax "
               "(FlashAttention), blocks above the diagonal skipped; "
               "FLOPs: the unmasked (i, j) pairs only"},
    [TB_OP_causal_mask] = {OP_ID(causal_mask),
        .category = TB_CAT_ATTENTION, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_causal_mask, .shape = tb_rule_causal_mask,
        .flops = tb_flops_zero, .bytes = tb_bytes_io, .tol = TOL_EXACT,
        .doc = "x [..., M, N] with element (i, j) set to -inf where j > i "
               "(x.masked_fill(~ones(M, N).tril(), -inf)); causal 0: a "
               "copy"},

    /* convolution and pooling, NCHW */
    [TB_OP_conv2d] = {OP_ID(conv2d),
        .category = TB_CAT_CONV, .n_in = 3, .n_out = 1, .n_params = 3,
        .params = params_conv, .shape = tb_rule_conv2d,
        .flops = tb_flops_conv2d,
        .bytes = tb_bytes_io, .reduce_len = tb_rlen_conv2d, .tol = TOL_ACC,
        .doc =
            "x [N,C,H,W] * w [O,C,KH,KW] + b [O] -> [N,O,OH,OW], zero padding"},
    [TB_OP_conv2d_nobias] = {OP_ID(conv2d_nobias),
        .category = TB_CAT_CONV, .n_in = 2, .n_out = 1, .n_params = 3,
        .params = params_conv, .shape = tb_rule_conv2d,
        .flops = tb_flops_conv2d,
        .bytes = tb_bytes_io, .reduce_len = tb_rlen_conv2d, .tol = TOL_ACC,
        .doc = "conv2d without bias: x [N,C,H,W] * w [O,C,KH,KW]"},
    [TB_OP_max_pool2d] = {OP_ID(max_pool2d),
        .category = TB_CAT_CONV, .n_in = 1, .n_out = 1, .n_params = 3,
        .params = params_pool, .shape = tb_rule_pool2d,
        .flops = tb_flops_pool2d,
        .bytes = tb_bytes_io, .tol = TOL_EXACT,
        .doc =
            "max over kernel x kernel windows of [N,C,H,W] (NaN propagates)"},
    [TB_OP_avg_pool2d] = {OP_ID(avg_pool2d),
        .category = TB_CAT_CONV, .n_in = 1, .n_out = 1, .n_params = 3,
        .params = params_pool, .shape = tb_rule_pool2d,
        .flops = tb_flops_pool2d,
        .bytes = tb_bytes_io, .reduce_len = tb_rlen_pool2d, .tol = TOL_ACC,
        .doc =
            "mean over kernel x kernel windows of [N,C,H,W], padding counted "
            "as zeros"},

    /* creation: the one shape given is the output's */
    [TB_OP_zeros] = {OP_ID(zeros),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1,
        .shape = tb_rule_create, .flops = tb_flops_zero, .bytes = tb_bytes_io,
        .tol = TOL_EXACT,
        .doc = "a tensor of zeros"},
    [TB_OP_ones] = {OP_ID(ones),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1,
        .shape = tb_rule_create, .flops = tb_flops_zero, .bytes = tb_bytes_io,
        .tol = TOL_EXACT,
        .doc = "a tensor of ones"},
    [TB_OP_full] = {OP_ID(full),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1, .n_params = 1,
        .params = params_full, .shape = tb_rule_create, .flops = tb_flops_zero,
        .bytes = tb_bytes_io, .tol = TOL_EXACT,
        .doc = "a tensor of one value"},
    [TB_OP_arange] = {OP_ID(arange),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1, .n_params = 2,
        .params = params_arange, .shape = tb_rule_create,
        .flops = tb_flops_per_out, .bytes = tb_bytes_io, .tol = TOL_EW,
        .doc = "start + i*step for i in 0..n-1 (1-D)"},
    [TB_OP_rand_uniform] = {OP_ID(rand_uniform),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1, .n_params = 3,
        .params = params_rand_uniform, .shape = tb_rule_create,
        .flops = tb_flops_zero, .bytes = tb_bytes_io, .tol = TOL_EW,
        .doc = "uniform in [low, high): counter-based, out[i] from (seed, i)"},
    [TB_OP_rand_normal] = {OP_ID(rand_normal),
        .category = TB_CAT_CREATION, .n_in = 0, .n_out = 1, .n_params = 3,
        .params = params_rand_normal, .shape = tb_rule_create,
        .flops = tb_flops_zero, .bytes = tb_bytes_io, .tol = TOL_RAND_NORMAL,
        .doc = "normal(mean, std): Box-Muller on the rand_uniform stream"},
    [TB_OP_copy] = {OP_ID(copy),
        .category = TB_CAT_CREATION, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_zero, .bytes = tb_bytes_io,
        .tol = TOL_EXACT,
        .doc = "a new tensor with the input's values"},

    /* in-place: the result overwrites the first input */
    [TB_OP_add_] = {OP_FORM(add_, add),
        .category = TB_CAT_INPLACE, .n_in = 2, .n_out = 1,
        .shape = tb_rule_inplace, .flops = tb_flops_per_out,
        .bytes = tb_bytes_io,
        .tol = TOL_EW, .alias = alias_first,
        .doc = "a += b in place, b broadcast to a"},
    [TB_OP_sub_] = {OP_FORM(sub_, sub),
        .category = TB_CAT_INPLACE, .n_in = 2, .n_out = 1,
        .shape = tb_rule_inplace, .flops = tb_flops_per_out,
        .bytes = tb_bytes_io,
        .tol = TOL_EW, .alias = alias_first,
        .doc = "a -= b in place, b broadcast to a"},
    [TB_OP_mul_] = {OP_FORM(mul_, mul),
        .category = TB_CAT_INPLACE, .n_in = 2, .n_out = 1,
        .domain = domain_inplace_neg1, .shape = tb_rule_inplace,
        .flops = tb_flops_per_out, .bytes = tb_bytes_io, .tol = TOL_EW,
        .alias = alias_first,
        .doc = "a *= b in place, b broadcast to a; b = -1"},
    [TB_OP_div_] = {OP_FORM(div_, div),
        .category = TB_CAT_INPLACE, .n_in = 2, .n_out = 1,
        .domain = domain_inplace_neg1, .shape = tb_rule_inplace,
        .flops = tb_flops_per_out, .bytes = tb_bytes_io, .tol = TOL_EW,
        .alias = alias_first,
        .doc = "a /= b in place, b broadcast to a; b = -1"},
    [TB_OP_relu_] = {OP_FORM(relu_, relu),
        .category = TB_CAT_INPLACE, .n_in = 1, .n_out = 1,
        .shape = tb_rule_inplace, .flops = tb_flops_per_out,
        .bytes = tb_bytes_io,
        .tol = TOL_EW, .alias = alias_first,
        .doc = "x = max(x, 0) in place"},

    /* optimizer steps: param and state updated in place */
    [TB_OP_sgd] = {OP_ID(sgd),
        .category = TB_CAT_OPTIMIZER, .n_in = 2, .n_out = 1, .n_params = 2,
        .params = params_sgd, .shape = tb_rule_optim, .flops = tb_flops_optim,
        .bytes = tb_bytes_io, .tol = TOL_OPT, .alias = alias_first,
        .doc = "p -= lr*(g + wd*p); inputs p, g"
               "; bf16/f16: p, g 16-bit, state f32"},
    [TB_OP_sgd_momentum] = {OP_ID(sgd_momentum),
        .category = TB_CAT_OPTIMIZER, .n_in = 3, .n_out = 2, .n_params = 5,
        .params = params_sgd_momentum, .shape = tb_rule_optim,
        .flops = tb_flops_optim, .bytes = tb_bytes_io, .tol = TOL_OPT,
        .alias = alias_p_buf,
        .doc = "PyTorch SGD with momentum (optionally Nesterov); inputs p, g, "
               "buf; outputs p, buf; bf16/f16: p, g 16-bit, state f32"},
    [TB_OP_adam] = {OP_ID(adam),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 6,
        .params = params_adam, .domain = domain_optim_mv,
        .shape = tb_rule_optim, .flops = tb_flops_optim, .bytes = tb_bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "PyTorch Adam; inputs p, g, m, v; outputs p, m, v"
               "; bf16/f16: p, g 16-bit, state f32"},
    [TB_OP_adamw] = {OP_ID(adamw),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 6,
        .params = params_adamw, .domain = domain_optim_mv,
        .shape = tb_rule_optim, .flops = tb_flops_optim, .bytes = tb_bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "PyTorch AdamW (decoupled weight decay); inputs p, g, m, v; "
               "outputs p, m, v; bf16/f16: p, g 16-bit, state f32"},
    [TB_OP_adagrad] = {OP_ID(adagrad),
        .category = TB_CAT_OPTIMIZER, .n_in = 3, .n_out = 2, .n_params = 5,
        .params = params_adagrad, .domain = domain_optim_sum,
        .shape = tb_rule_optim, .flops = tb_flops_optim, .bytes = tb_bytes_io,
        .tol = TOL_OPT, .alias = alias_p_buf,
        .doc = "PyTorch Adagrad; inputs p, g, sum; outputs p, sum"
               "; bf16/f16: p, g 16-bit, state f32"},
    [TB_OP_adamax] = {OP_ID(adamax),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 6,
        .params = params_adamax, .domain = domain_optim_mv,
        .shape = tb_rule_optim, .flops = tb_flops_optim, .bytes = tb_bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "PyTorch Adamax; inputs p, g, m, u; outputs p, m, u"
               "; bf16/f16: p, g 16-bit, state f32"},
    [TB_OP_nadam] = {OP_ID(nadam),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 7,
        .params = params_nadam, .domain = domain_optim_mv,
        .shape = tb_rule_optim, .flops = tb_flops_optim, .bytes = tb_bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "PyTorch NAdam (mu product from the step number); inputs p, g, "
               "m, v; outputs p, m, v; bf16/f16: p, g 16-bit, state f32"},
    [TB_OP_radam] = {OP_ID(radam),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 6,
        .params = params_radam, .domain = domain_optim_mv,
        .shape = tb_rule_optim, .flops = tb_flops_optim, .bytes = tb_bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "PyTorch RAdam; inputs p, g, m, v; outputs p, m, v"
               "; bf16/f16: p, g 16-bit, state f32"},
    [TB_OP_lamb] = {OP_ID(lamb),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 6,
        .params = params_lamb, .domain = domain_optim_mv,
        .shape = tb_rule_optim, .flops = tb_flops_optim,
        .bytes = tb_bytes_optim_red,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "LAMB (You et al. 2019, Algorithm 2, one tensor): "
               "m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; "
               "r = (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps) + wd p; "
               "p -= lr (|p|/|r|) r (ratio 1 if a norm is 0; 2-norms over "
               "the whole tensor, fixed chunks); inputs p, g, m, v; "
               "outputs p, m, v; bf16/f16: p, g 16-bit, state f32"},
    [TB_OP_adabound] = {OP_ID(adabound),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 3, .n_params = 8,
        .params = params_adabound, .domain = domain_optim_mv,
        .shape = tb_rule_optim, .flops = tb_flops_optim, .bytes = tb_bytes_io,
        .tol = TOL_OPT, .alias = alias_p_m_v,
        .doc = "AdaBound (Luo et al. 2019, Algorithm 1, the reference "
               "code's bounds): g += wd p; m, v as Adam; "
               "a = lr sqrt(1-b2^t)/(1-b1^t) / (sqrt(v) + eps) clipped "
               "to [final_lr (1 - 1/(gamma t + 1)), "
               "final_lr (1 + 1/(gamma t))]; p -= a m; inputs p, g, m, v; "
               "outputs p, m, v; bf16/f16: p, g 16-bit, state f32"},
    [TB_OP_lbfgs] = {OP_ID(lbfgs),
        .category = TB_CAT_OPTIMIZER, .n_in = 4, .n_out = 2, .n_params = 1,
        .params = params_lbfgs, .domain = domain_lbfgs,
        .shape = tb_rule_lbfgs, .flops = tb_flops_optim,
        .bytes = tb_bytes_optim_red,
        .reduce_len = tb_rlen_optim, .tol = TOL_OPT, .alias = alias_p_own,
        .doc = "one L-BFGS step, torch.optim.LBFGS without line search: "
               "inputs p, g (n elements), S, Y [m, n] (the m pairs s, y, "
               "oldest first; pairs with s.y <= 1e-10 skipped, as torch "
               "never stores them); d = -H g by the two-loop recursion, "
               "H0 = (s.y / y.y of the newest pair) I; p += lr d; "
               "outputs p, d; bf16/f16: p, g, d 16-bit, S, Y f32"},

    /* linear algebra (LAPACK semantics) */
    [TB_OP_svd] = {OP_ID(svd),
        .category = TB_CAT_LINALG, .n_in = 1, .n_out = 3,
        .shape = tb_rule_linalg, .flops = tb_flops_linalg, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_linalg, .tol = TOL_LINALG, .canon = tb_canon_svd,
        .check = TB_CHECK_FACTORIZATION,
        .doc = "thin SVD of [m,n]: U [m,k], S [k] (descending), Vt [k,n]"},
    [TB_OP_qr] = {OP_ID(qr),
        .category = TB_CAT_LINALG, .n_in = 1, .n_out = 2,
        .shape = tb_rule_linalg, .flops = tb_flops_linalg, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_linalg, .tol = TOL_LINALG, .canon = tb_canon_qr,
        .check = TB_CHECK_FACTORIZATION,
        .doc = "reduced QR of [m,n]: Q [m,k], R [k,n]"},
    [TB_OP_eigh] = {OP_ID(eigh),
        .category = TB_CAT_LINALG, .n_in = 1, .n_out = 2,
        .shape = tb_rule_linalg, .flops = tb_flops_linalg, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_linalg, .tol = TOL_LINALG, .canon = tb_canon_eigh,
        .check = TB_CHECK_FACTORIZATION,
        .doc = "symmetric eigendecomposition from the lower triangle: values "
               "[n] ascending, vectors [n,n] as columns"},

    /* unfused compositions of the fused ops, one kernel per step */
    [TB_OP_add_relu_unfused] = {OP_ID(add_relu_unfused),
        .category = TB_CAT_UNFUSED, .n_in = 2, .n_out = 1,
        .shape = tb_rule_broadcast, .flops = tb_flops_elem,
        .bytes = tb_bytes_io,
        .tol = TOL_EW_STEPS, .n_steps = NSTEPS(steps_add_relu),
        .steps = steps_add_relu,
        .doc = "add_relu as two kernels: t = a + b; relu(t)"},
    [TB_OP_linear_unfused] = {OP_ID(linear_unfused),
        .category = TB_CAT_UNFUSED, .n_in = 3, .n_out = 1,
        .shape = tb_rule_linear, .flops = tb_flops_linear, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_matmul, .tol = TOL_ACC_STEPS,
        .n_steps = NSTEPS(steps_linear), .steps = steps_linear,
        .doc = "linear as three kernels: t = x @ W; u = t + b; relu(u)"},
    [TB_OP_log_softmax_unfused] = {OP_ID(log_softmax_unfused),
        .category = TB_CAT_UNFUSED, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_axis, .shape = tb_rule_axis_same,
        .flops = tb_flops_log_softmax, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_axis, .tol = TOL_ACC_STEPS,
        .n_steps = NSTEPS(steps_log_softmax), .steps = steps_log_softmax,
        .doc = "log_softmax as six kernels: max, sub, exp, sum, log, sub"},
    [TB_OP_sdpa_unfused] = {OP_ID(sdpa_unfused),
        .category = TB_CAT_UNFUSED, .n_in = 3, .n_out = 1, .n_params = 2,
        .params = params_sdpa, .shape = tb_rule_sdpa,
        .flops = tb_flops_sdpa, .bytes = tb_bytes_sdpa_unfused,
        .reduce_len = tb_rlen_sdpa, .tol = TOL_ACC_STEPS,
        .n_steps = NSTEPS(steps_sdpa), .steps = steps_sdpa,
        .step_params = sdpa_step_params,
        .doc = "sdpa as six kernels, the eager composition with the "
               "[Sq, Sk] scores materialized: t = k^T (transpose); s = q "
               "@ t; u = s * scale; m = causal_mask(u) (a copy when not "
               "causal); w = softmax(m); w @ v.  The steps compute every "
               "(i, j), masked or not; FLOPs: sdpa's (the unmasked pairs); "
               "bytes: the inputs, output and every intermediate's writes "
               "and reads"},
    [TB_OP_cross_entropy_unfused] = {OP_ID(cross_entropy_unfused),
        .category = TB_CAT_UNFUSED, .n_in = 2, .n_out = 1,
        .shape = tb_bw_shape_nll, .flops = tb_bw_flops, .bytes = tb_bytes_io,
        .reduce_len = tb_bw_reduce_len, .tol = TOL_ACC_STEPS,
        .n_steps = NSTEPS(steps_cross_entropy), .steps = steps_cross_entropy,
        .index_in = 1, .index_bound = index_classes,
        .doc = "cross_entropy as two kernels: log_softmax over the "
               "classes, then nll_loss"},

    /* calibration: known work and known time (calib.h) */
    [TB_OP_calib_work] = {OP_ID(calib_work),
        .category = TB_CAT_CALIB, .n_in = 0, .n_out = 1,
        .shape = tb_calib_shape, .flops = tb_calib_flops,
        .bytes = tb_calib_bytes, .tol = TOL_EXACT,
        .doc = "round(n * TBENCH_CALIB_SCALE) steps of a chain of dependent "
               "integer instructions; out[s mod n] = top 24 bits after step "
               "s"},
    [TB_OP_calib_spin] = {OP_ID(calib_spin),
        .category = TB_CAT_CALIB, .n_in = 0, .n_out = 1, .n_params = 1,
        .params = params_calib_spin, .shape = tb_calib_shape,
        .flops = tb_calib_flops, .bytes = tb_calib_bytes, .tol = TOL_EXACT,
        .doc = "spin on CLOCK_MONOTONIC for ns nanoseconds; shape [1], "
               "output 0"},
    /* backward ops: input 0 is the gradient of the forward output, the
     * outputs the gradients of the forward inputs (op_backward.h) */
    [TB_OP_relu_backward] = {OP_ID(relu_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_BW_EW),
        .doc = "relu gradient: g, x -> g * (x > 0)"},
    [TB_OP_sigmoid_backward] = {OP_ID(sigmoid_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_BW_EW),
        .doc = "sigmoid gradient: g, x -> g * s * (1 - s), s = sigmoid(x) "
               "(from the forward input: an exp per element, bound by "
               "it; PyTorch's takes the saved output)"},
    [TB_OP_tanh_backward] = {OP_ID(tanh_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_BW_EW),
        .doc = "tanh gradient: g, x -> g * (1 - tanh(x)^2) (from the "
               "forward input: an exp per element, bound by it; PyTorch's "
               "takes the saved output)"},
    [TB_OP_gelu_backward] = {OP_ID(gelu_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_BW_EW),
        .doc = "gelu (erf form) gradient: g, x -> g * (Phi(x) + x*phi(x))"},
    [TB_OP_log_softmax_backward] = {OP_ID(log_softmax_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_ACC), .n_params = 1,
        .params = params_axis, .domain = domain_bw_log_softmax,
        .doc = "log_softmax gradient: g, y (the forward output) -> g - "
               "exp(y) * sum(g) along the axis"},
    [TB_OP_sum_backward] = {OP_ID(sum_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_EW), .n_params = 2,
        .params = params_reduce,
        .doc = "sum gradient: g, x -> g broadcast to x's shape"},
    [TB_OP_mean_backward] = {OP_ID(mean_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_EW), .n_params = 2,
        .params = params_reduce,
        .doc = "mean gradient: g, x -> g / n broadcast to x's shape"},
    [TB_OP_add_backward] = {OP_ID(add_backward),
        BW_ROW(3, 2, tb_bw_shape_binary, TOL_ACC),
        .doc = "add gradient: g, a, b -> da, db (g summed over the dims "
               "each input was broadcast along)"},
    [TB_OP_sub_backward] = {OP_ID(sub_backward),
        BW_ROW(3, 2, tb_bw_shape_binary, TOL_ACC),
        .doc = "sub gradient: g, a, b -> g, -g reduced to a's and b's "
               "shapes"},
    [TB_OP_mul_backward] = {OP_ID(mul_backward),
        BW_ROW(3, 2, tb_bw_shape_binary, TOL_ACC),
        .doc = "mul gradient: g, a, b -> g*b, g*a reduced to a's and b's "
               "shapes"},
    [TB_OP_div_backward] = {OP_ID(div_backward),
        BW_ROW(3, 2, tb_bw_shape_binary, TOL_ACC),
        .domain = domain_bw_div,
        .doc = "div gradient: g, a, b -> g/b, -g*a/b^2 reduced to a's and "
               "b's shapes"},
    [TB_OP_matmul_backward] = {OP_ID(matmul_backward),
        BW_ROW(3, 2, tb_bw_shape_binary, TOL_ACC),
        .doc = "matmul gradient: g, a, b -> g @ b^T, a^T @ g"},
    [TB_OP_linear_backward] = {OP_ID(linear_backward),
        BW_ROW(4, 3, tb_bw_shape_linear, TOL_ACC),
        .doc = "linear (relu(x@W+b)) gradient: g, x, W, y (the forward "
               "output) -> dx, dW, db with gz = g*(y > 0)"},
    [TB_OP_nll_loss] = {OP_ID(nll_loss),
        BW_ROW(2, 1, tb_bw_shape_nll, TOL_ACC),
        .domain = domain_bw_nll,
        .doc = "negative log-likelihood, mean over the batch: logp [N,C], "
               "target [N] (class indices as values) -> scalar; "
               "cross-entropy is log_softmax then nll_loss"},
    [TB_OP_nll_loss_backward] = {OP_ID(nll_loss_backward),
        BW_ROW(3, 1, tb_bw_shape_nll_backward, TOL_EW),
        .domain = domain_bw_nll_backward,
        .doc = "nll_loss gradient: g (scalar), logp, target -> dlogp, -g/N "
               "at each row's target"},
    [TB_OP_cross_entropy] = {OP_ID(cross_entropy),
        XENT_ROW(2, tb_bw_shape_nll, 1),
        .doc = "cross-entropy of logits [N,C] and targets [N] (class "
               "indices as values), mean over the batch -> scalar: "
               "log_softmax and nll_loss in one pass over each row "
               "(PyTorch's F.cross_entropy, reduction='mean')"},
    [TB_OP_cross_entropy_backward] = {OP_ID(cross_entropy_backward),
        XENT_ROW(3, tb_bw_shape_nll_backward, 2),
        .doc = "cross_entropy gradient: g (scalar), logits, target -> "
               "dlogits = (softmax(logits) - onehot(target)) * g / N, one "
               "pass per row"},
    [TB_OP_embedding_backward] = {OP_ID(embedding_backward),
        BW_ROW(2, 1, tb_bw_shape_embedding, TOL_ACC), .n_params = 1,
        .params = params_embedding_bw, .index_in = 1,
        .index_bound = index_rows,
        .doc = "embedding gradient: g [...,D], idx [...] -> dW [V,D] "
               "(V: num_weights), g's rows added into the rows their "
               "indices name, in index order (the same bits at every "
               "thread count)"},
    [TB_OP_max_pool2d_backward] = {OP_ID(max_pool2d_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_ACC), .n_params = 3,
        .params = params_pool,
        .doc = "max_pool2d gradient: g, x -> dx, g routed to the first "
               "largest element of each window"},
    [TB_OP_avg_pool2d_backward] = {OP_ID(avg_pool2d_backward),
        BW_ROW(2, 1, tb_bw_shape_act, TOL_ACC), .n_params = 3,
        .params = params_pool,
        .doc = "avg_pool2d gradient: g, x -> dx, g/kernel^2 spread over "
               "each window"},
    [TB_OP_conv2d_backward] = {OP_ID(conv2d_backward),
        BW_ROW(3, 3, tb_bw_shape_conv2d, TOL_ACC), .n_params = 4,
        .params = params_conv,
        .doc = "conv2d gradient: g, x, w -> dx, dw, db (the bias's "
               "gradient); input_grad=0: dx left out (zeros)"},
    [TB_OP_layer_norm_backward] = {OP_ID(layer_norm_backward),
        BW_ROW(3, 3, tb_bw_shape_norm, TOL_ACC), .n_params = 1,
        .params = params_layer_norm,
        .doc = "layer_norm gradient: g, x, w -> dx, dw, db (mean and rstd "
               "recomputed from x; dw, db summed over the rows in an order "
               "fixed by the shape, not the threads)"},
    [TB_OP_rms_norm_backward] = {OP_ID(rms_norm_backward),
        BW_ROW(3, 2, tb_bw_shape_norm, TOL_ACC), .n_params = 1,
        .params = params_rms_norm,
        .doc = "rms_norm gradient: g, x, w -> dx, dw (rstd recomputed "
               "from x; dw summed over the rows in an order fixed by the "
               "shape, not the threads)"},
    [TB_OP_batch_norm_backward] = {OP_ID(batch_norm_backward),
        BW_ROW(3, 3, tb_bw_shape_norm, TOL_ACC), .n_params = 1,
        .params = params_batch_norm_backward,
        .doc = "batch_norm gradient in training: g, x, w -> dx, dw, db "
               "(each channel's mean and rstd recomputed from x [N, C, "
               "...]; each channel summed by one thread)"},
    [TB_OP_sdpa_backward] = {OP_ID(sdpa_backward),
        .category = TB_CAT_BACKWARD, .n_in = 4, .n_out = 3, .n_params = 2,
        .params = params_sdpa, .shape = tb_bw_shape_sdpa,
        .flops = tb_flops_sdpa_backward, .bytes = tb_bytes_io,
        .reduce_len = tb_rlen_sdpa_backward, .tol = TOL_ACC,
        .domain = domain_bw_sdpa,
        .doc = "sdpa gradient: g [B,H,Sq,Dv], q, k, v -> dq, dk, dv "
               "(causal and scale as sdpa); FlashAttention-2's schedule: "
               "per query block the row statistics recomputed in a first "
               "pass over the key blocks, then P, dP = g v^T and dS = P * "
               "(dP - rowsum(P * dP)) blockwise into dq, dk, dv; the "
               "(batch, head) pairs over the threads, each owning its dk "
               "and dv (the same bits at any thread count); blocks above "
               "the diagonal skipped; operands in [-1, 1] (f32 scores of "
               "hundreds exceed the f32 tolerance)"},
    [TB_OP_group_norm_backward] = {OP_ID(group_norm_backward),
        BW_ROW(3, 3, tb_bw_shape_norm, TOL_ACC), .n_params = 2,
        .params = params_group_norm,
        .doc = "group_norm gradient: g, x, w -> dx, dw, db (each (sample, "
               "group)'s mean and rstd recomputed from x [N, C, ...]; dw, "
               "db summed over the samples in order, the same bits at any "
               "thread count)"},

    /* workloads: model steps on the tape autograd (models.h) */
    [TB_OP_mlp_train_step] = {OP_ID(mlp_train_step),
        WL_ROW(6, params_train_step),
        .doc = "one MLP (K-256-128-10) training step on batch x [B, K]: "
               "forward, backward, sgd_momentum (the weights and momentum set "
               "back to their initial values every state_window steps, "
               "outside the timed calls); out: the loss"},
    [TB_OP_mlp_infer_step] = {OP_ID(mlp_infer_step),
        WL_ROW(2, params_infer_step),
        .doc = "MLP inference on x [B, K]: log-probabilities [B, 10]"},
    [TB_OP_cnn_train_step] = {OP_ID(cnn_train_step),
        WL_ROW(6, params_train_step),
        .doc = "one CNN (conv 16, pool, conv 32, pool, linear 10) training "
               "step on x [B, 1, H, W] (the state set back every state_window "
               "steps, untimed); out: the loss"},
    [TB_OP_cnn_infer_step] = {OP_ID(cnn_infer_step),
        WL_ROW(2, params_infer_step),
        .doc = "CNN inference on x [B, 1, H, W]: log-probabilities [B, 10]"},
    [TB_OP_tfm_train_step] = {OP_ID(tfm_train_step),
        WL_ROW(7, params_tfm_train),
        .doc = "one pre-norm transformer block training step on x [batch, "
               "seq, d_model]: h = x + Wo attn(rms_norm(x)) (causal sdpa "
               "over heads; q, k, v, Wo bias-free), y = h + W2 "
               "gelu(W1 rms_norm(h)) (width 4 d_model), loss mean(y^2); "
               "forward, backward, sgd_momentum (the state set back every "
               "state_window steps, untimed); out: the loss"},
    [TB_OP_tfm_infer_step] = {OP_ID(tfm_infer_step),
        WL_ROW(3, params_tfm_infer),
        .doc = "the transformer block's forward pass on x [batch, seq, "
               "d_model]: y [batch, seq, d_model]"},
    [TB_OP_api_add] = {OP_ID(api_add),
        .category = TB_CAT_WORKLOAD, .n_in = 2, .n_out = 1, .n_params = 2,
        .params = params_api, .shape = tb_rule_broadcast,
        .flops = tb_flops_per_out, .bytes = tb_bytes_io, .tol = TOL_EW,
        .doc = "add called through an API layer (parameter layer), for the "
               "per-call cost of each layer"},

    /* copies between host and device memory (a device backend's); the
     * values are copy's (base), which the cpu backend runs for them */
    [TB_OP_copy_h2d] = {OP_FORM(copy_h2d, copy),
        .category = TB_CAT_TRANSFER, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_xfer, .shape = tb_rule_same, .flops = tb_flops_zero,
        .bytes = bytes_xfer, .tol = TOL_EXACT,
        .doc = "host to device copy of the input's bytes (parameter pinned: "
               "page-locked host memory)"},
    [TB_OP_copy_d2h] = {OP_FORM(copy_d2h, copy),
        .category = TB_CAT_TRANSFER, .n_in = 1, .n_out = 1, .n_params = 1,
        .params = params_xfer, .shape = tb_rule_same, .flops = tb_flops_zero,
        .bytes = bytes_xfer, .tol = TOL_EXACT,
        .doc = "device to host copy of the input's bytes (parameter pinned: "
               "page-locked host memory)"},
    [TB_OP_copy_d2d] = {OP_FORM(copy_d2d, copy),
        .category = TB_CAT_TRANSFER, .n_in = 1, .n_out = 1,
        .shape = tb_rule_same, .flops = tb_flops_zero, .bytes = tb_bytes_io,
        .tol = TOL_EXACT,
        .doc = "device to device copy of the input's bytes (one memcpy)"},
};

const tb_op *tb_op_get(tb_op_id id)
{
    return (unsigned)id < TB_OP_COUNT ? &op_table[id] : NULL;
}

const tb_op *tb_op_find(const char *name)
{
    for (int i = 0; name && i < TB_OP_COUNT; i++)
        if (strcmp(op_table[i].name, name) == 0)
            return &op_table[i];
    return NULL;
}

tb_dtype tb_op_in_dtype(const tb_op *op, int i, tb_dtype dt)
{
    return op && op->category == TB_CAT_OPTIMIZER && i >= 2 &&
                   tb_dtype_is_half(dt)
               ? TB_F32
               : dt;
}

tb_dtype tb_op_out_dtype(const tb_op *op, int o, tb_dtype dt)
{
    return op && op->alias && op->alias[o] >= 0
               ? tb_op_in_dtype(op, op->alias[o], dt)
               : dt;
}

const char *tb_op_dtype_reason(const tb_op *op, tb_dtype dt)
{
    if (!op || (unsigned)dt >= TB_DTYPE_COUNT)
        return "not a dtype";
    if (op->id == TB_OP_matmul_int8)
        return dt == TB_F32 ? NULL
                            : "an int8 GEMM quantizes f32 inputs: defined "
                              "in f32 only";
    if (!tb_dtype_is_half(dt))
        return NULL;
    switch (op->category) {
    case TB_CAT_LINALG:
        return "factorizations are defined in f32 and f64 only (LAPACK "
               "and PyTorch have none in bf16 or f16)";
    case TB_CAT_CALIB:
        return "calibration ops run in f32 and f64 only";
    case TB_CAT_WORKLOAD:
        return "model steps in bf16/f16 are not yet defined (their loss "
               "is nll_loss, and their optimizer step mixed precision)";
    case TB_CAT_CONTRACTION:
        return "einsum in bf16/f16 is not yet defined (PyTorch rounds each "
               "pairwise intermediate of its plan to 16 bits, which the "
               "half wrappers' one final rounding does not model)";
    default:
        break;
    }
    if (op->id == TB_OP_batch_norm)
        return "its running statistics are state updated in place on "
               "every call, which 16-bit storage would round each time: "
               "defined in f32 and f64 only";
    if (op->id == TB_OP_dropout)
        return "its keep mask is the element's index in the stream, which "
               "the 16-bit rows' blocks would restart: defined in f32 and "
               "f64 only";
    if (op->id == TB_OP_argmax || op->id == TB_OP_nll_loss ||
        op->id == TB_OP_nll_loss_backward || op->index_in)
        return "its class indices are integers, which bf16 holds exactly "
               "only up to 256 (f16: 2048): defined in f32 and f64 only";
    return NULL;
}

double tb_op_index_bound(const tb_op *op, int i, const tb_shape *in,
                         const tb_params *p)
{
    if (!op || !op->index_in || i != op->index_in || !op->index_bound)
        return 0;
    tb_params full = p ? *p : (tb_params){0};
    tb_params_defaults(op, &full);
    return op->index_bound(op, in, NULL, &full, TB_F64);
}

const char *tb_op_category_name(tb_op_category c)
{
    switch (c) {
    case TB_CAT_ELEMENTWISE: return "elementwise";
    case TB_CAT_ACTIVATION: return "activation";
    case TB_CAT_REDUCTION: return "reduction";
    case TB_CAT_SOFTMAX: return "softmax";
    case TB_CAT_MATMUL: return "matmul";
    case TB_CAT_LAYOUT: return "layout";
    case TB_CAT_FUSED: return "fused";
    case TB_CAT_CONV: return "conv";
    case TB_CAT_CREATION: return "creation";
    case TB_CAT_INPLACE: return "inplace";
    case TB_CAT_OPTIMIZER: return "optimizer";
    case TB_CAT_LINALG: return "linalg";
    case TB_CAT_UNFUSED: return "unfused";
    case TB_CAT_CALIB: return "calibration";
    case TB_CAT_BACKWARD: return "backward";
    case TB_CAT_WORKLOAD: return "workload";
    case TB_CAT_TRANSFER: return "transfer";
    case TB_CAT_NORM: return "normalization";
    case TB_CAT_ATTENTION: return "attention";
    case TB_CAT_CONTRACTION: return "contraction";
    }
    return "unknown";
}

