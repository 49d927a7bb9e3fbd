/* The op table: one row per op, declared once in TB_OP_LIST.
 *
 * A row gives everything the harness and the backends need to know about
 * an op without running it: arity, parameter schema, a shape rule that
 * rejects bad shapes with a message, FLOP and byte models (for GFLOP/s,
 * GB/s and roofline), the reduction length used to scale the tolerance,
 * the input domain, the per-dtype tolerance and the reference kernel,
 * which reads any dtype, accumulates in double and writes f64 outputs. */
#ifndef TB_OPS_OP_H
#define TB_OPS_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

#define TB_MAX_INPUTS 4
#define TB_MAX_OUTPUTS 3
#define TB_MAX_PARAMS 8

typedef enum {
    TB_CAT_ELEMENTWISE,
    TB_CAT_ACTIVATION,
    TB_CAT_REDUCTION,
    TB_CAT_SOFTMAX,
    TB_CAT_MATMUL,
    TB_CAT_LAYOUT,
    TB_CAT_FUSED, /* one kernel for what is otherwise a sequence of ops */
    TB_CAT_CONV,  /* NCHW convolution and pooling */
    TB_CAT_CREATION,  /* fill an output from parameters (or copy one) */
    TB_CAT_INPLACE,   /* write the result into the first input */
    TB_CAT_OPTIMIZER, /* one update step of a parameter vector and state */
    TB_CAT_LINALG,    /* LAPACK-style factorizations */
    TB_CAT_UNFUSED,   /* a fused op's composition, one kernel per step */
    TB_CAT_CALIB,     /* known work or time, to measure the harness */
    TB_CAT_BACKWARD,  /* gradient of a differentiable op (op_backward.h) */
    TB_CAT_WORKLOAD,  /* a model step on the tape autograd (models.h) */
    TB_CAT_TRANSFER,  /* a copy between host and device memory */
    TB_CAT_NORM,      /* normalization (layer, RMS, batch, group) */
    TB_CAT_ATTENTION, /* scaled dot-product attention and its mask */
    TB_CAT_CONTRACTION, /* einsum: an equation run as a plan of steps */
} tb_op_category;

/* TB_PARAM_STRING: a short text (einsum's equation).  Its value in
 * tb_params.v[i] is a handle (an exact integer >= 1) of the process's
 * string table, tb_param_str_get gives the text back: tb_params keeps
 * its layout (the plugin ABI's tbp_params).  Every process that holds
 * such params made them by parsing (configs, -p), which interns the
 * text, so a handle never crosses a process; plugins and the run-time
 * CUDA module have no table and get no kernel for an op with a string
 * parameter (docs/PLUGINS.md). */
typedef enum {
    TB_PARAM_INT,
    TB_PARAM_FLOAT,
    TB_PARAM_BOOL,
    TB_PARAM_STRING,
} tb_param_kind;

/* A string parameter's text: 1..TB_PARAM_STR_MAX characters, each an
 * ASCII letter, digit or one of TB_PARAM_STR_PUNCT: no '=', brackets,
 * glob characters, quotes, spaces or '%', so that a case id holds the
 * text as is and --filter, CSV and `-p name=a,b` read it back
 * (docs/CONFIG.md, "Parameters"). */
#define TB_PARAM_STR_MAX 64
#define TB_PARAM_STR_PUNCT ",->._+:"

/* One parameter of an op.  An `optional` parameter may be absent, which
 * has its own meaning (e.g. no axis = reduce over all elements); any
 * other parameter that is absent takes `def`. */
typedef struct tb_param_spec {
    const char *name;
    tb_param_kind kind;
    bool optional;
    double def;
    double min, max; /* inclusive bounds checked by tb_params_set */
    const char *doc;
} tb_param_spec;

typedef struct tb_params {
    uint32_t set; /* bit i: parameter i has a value in v[i] */
    double v[TB_MAX_PARAMS];
} tb_params;

typedef struct tb_tol {
    double rtol, atol;
} tb_tol;

typedef struct tb_domain {
    double lo, hi; /* inputs are drawn uniformly from [lo, hi] */
} tb_domain;

struct tb_op;
struct tb_einsum;
struct tb_ein_plan;

/* Shape rule: from the input shapes and parameters, compute output shapes
 * or return TB_ESHAPE/TB_EPARAM with a one-line reason in err. */
typedef int (*tb_shape_fn)(const struct tb_op *op, const tb_shape *in,
                           const tb_params *p, tb_shape *out, char *err,
                           size_t errlen);
/* Cost model: FLOPs or bytes moved for one call, from the shapes and
 * parameters (with defaults filled in by tb_params_defaults). */
typedef double (*tb_cost_fn)(const struct tb_op *op, const tb_shape *in,
                             const tb_shape *out, const tb_params *p,
                             tb_dtype dt);
/* Reference kernel: host inputs of any dtype/strides, outputs are
 * contiguous f64 host tensors of the shapes the shape rule returned. */
typedef int (*tb_ref_fn)(const tb_tensor *in, tb_tensor *out,
                         const tb_params *p);

/* Every op, in the order `tbench list` shows them.  Adding an op is one
 * name here, one row in op.c's table and a tb_ref_NAME kernel. */
#define TB_OP_LIST(X)                                                     \
    X(add) X(sub) X(mul) X(div) X(relu) X(sum) X(mean) X(matmul)          \
    X(transpose) X(log_softmax)                                           \
    X(neg) X(abs) X(exp) X(log) X(sqrt) X(rsqrt)                          \
    X(leaky_relu) X(sigmoid) X(tanh) X(gelu) X(gelu_tanh) X(silu)         \
    X(softplus) X(hardswish)                                              \
    X(pow) X(maximum) X(minimum)                                          \
    X(add_scalar) X(sub_scalar) X(mul_scalar) X(div_scalar)               \
    X(max) X(min) X(argmax) X(var)                                        \
    X(softmax) X(permute) X(add_relu) X(linear) X(matmul_int8)            \
    X(conv2d) X(conv2d_nobias) X(max_pool2d) X(avg_pool2d)                \
    X(layer_norm) X(rms_norm) X(batch_norm) X(group_norm)                 \
    X(embedding) X(dropout)                                               \
    X(sdpa) X(causal_mask)                                                \
    X(zeros) X(ones) X(full) X(arange) X(rand_uniform) X(rand_normal)     \
    X(copy)                                                               \
    X(add_) X(sub_) X(mul_) X(div_) X(relu_)                              \
    X(sgd) X(sgd_momentum) X(adam) X(adamw) X(adagrad) X(adamax)          \
    X(nadam) X(radam) X(lamb) X(adabound) X(lbfgs)                        \
    X(svd) X(qr) X(eigh)                                                  \
    X(add_relu_unfused) X(linear_unfused) X(log_softmax_unfused)          \
    X(sdpa_unfused) X(cross_entropy_unfused)                              \
    X(calib_work) X(calib_spin)                                           \
    X(relu_backward) X(sigmoid_backward) X(tanh_backward)                 \
    X(gelu_backward) X(log_softmax_backward) X(sum_backward)              \
    X(mean_backward) X(add_backward) X(sub_backward) X(mul_backward)      \
    X(div_backward) X(matmul_backward) X(linear_backward) X(nll_loss)     \
    X(nll_loss_backward) X(max_pool2d_backward) X(avg_pool2d_backward)    \
    X(conv2d_backward) X(layer_norm_backward) X(rms_norm_backward)        \
    X(batch_norm_backward) X(group_norm_backward) X(sdpa_backward)        \
    X(cross_entropy) X(cross_entropy_backward)                            \
    X(embedding_backward)                                                 \
    X(mlp_train_step) X(mlp_infer_step) X(cnn_train_step)                 \
    X(cnn_infer_step) X(tfm_train_step) X(tfm_infer_step) X(api_add)      \
    X(copy_h2d) X(copy_d2h) X(copy_d2d)                                   \
    X(einsum1) X(einsum) X(einsum3) X(einsum4)

typedef enum {
#define TB_OP_ENUM(name) TB_OP_##name,
    TB_OP_LIST(TB_OP_ENUM)
#undef TB_OP_ENUM
    TB_OP_COUNT
} tb_op_id;

/* One step of an unfused composition (TB_CAT_UNFUSED): a kernel of op
 * `op` whose inputs are the composition's inputs (in[i] >= 0) or
 * temporaries (in[i] = TB_STEP_TMP(k)), writing temporary `out` (>= 0) or
 * the composition's output (-1).  Parameters: every parameter of the step
 * op whose name the composition also has is copied from the case; then
 * `fixed` (up to two name=value pairs, NULL name = none) are set. */
#define TB_STEP_TMP(k) (-1 - (k))
#define TB_MAX_STEPS 8
typedef struct tb_step {
    tb_op_id op;
    int8_t in[TB_MAX_INPUTS];
    int8_t out;
    struct {
        const char *name;
        double v;
    } fixed[2];
} tb_step;

/* Canonicalise outputs before the check, applied alike to a backend's
 * outputs (any dtype) and the reference's (f64): linalg results are
 * unique only up to the signs of singular/eigen vectors and of Q's
 * columns, so both sides are brought to one sign convention. */
typedef void (*tb_canon_fn)(tb_tensor *out, int n_out);

/* How the harness checks an op's outputs against its reference. */
typedef enum {
    TB_CHECK_ELEMENTS = 0, /* every element within the tolerance */
    /* output 0 is in[0] @ in[1]: a case too large for the O(n^3)
     * reference is checked by random projection instead (check.h) */
    TB_CHECK_PRODUCT,
    /* svd/qr/eigh: values, reconstruction, orthonormality (check.h),
     * since the vectors are not unique */
    TB_CHECK_FACTORIZATION,
    /* every element within the tolerance, its absolute part divided by
     * sqrt(reduce_len) instead of multiplied: the outputs along the axis
     * sum to 1 (softmax), so each is about 1/len, and a tolerance that
     * grew with len would pass errors larger than the values */
    TB_CHECK_DISTRIBUTION,
} tb_check_kind;

typedef struct tb_op {
    tb_op_id id;
    const char *name;
    tb_op_category category;
    int n_in, n_out;
    int n_params;
    const tb_param_spec *params;
    const tb_domain *domain; /* n_in entries; NULL: [-1, 1] for all */
    tb_shape_fn shape;
    tb_cost_fn flops;
    tb_cost_fn bytes;
    /* Number of terms summed into one output element (1 if none); the
     * absolute tolerance grows with its square root. NULL: 1. */
    tb_cost_fn reduce_len;
    tb_tol tol[TB_DTYPE_COUNT];
    tb_ref_fn ref;
    const char *doc;
    /* Outputs written into inputs (in-place ops, optimizer state):
     * alias[i] is the input that output i overwrites, or -1.  NULL: every
     * output has its own buffer. */
    const int8_t *alias;
    /* In-place ops: the out-of-place op that computes the same values
     * (a backend may serve both with one alias-safe kernel); else the op
     * itself. */
    tb_op_id base;
    /* Unfused compositions: the steps, run as separate kernels. */
    int n_steps;
    const tb_step *steps;
    /* (optional) Unfused compositions: set the parameters of step s that
     * depend on the case's input shapes (sdpa_unfused's scale, 1/sqrt(D)
     * by default), after the copied and fixed ones.  0 or TB_EPARAM. */
    int (*step_params)(const struct tb_op *op, int s, const tb_shape *in,
                       const tb_params *p, tb_params *step);
    tb_canon_fn canon; /* (optional) see tb_canon_fn */
    tb_check_kind check;
    /* Element-wise ops (their FLOP model is tb_flops_elem): the FLOPs of
     * one output element, every arithmetic operation, comparison and
     * libm call of the op's formula counted as one; 0 means 1. */
    double elem_flops;
    /* (optional) Ops with an input of integer indices held as values
     * (embedding's idx, cross_entropy's target): index_in is that input
     * (> 0; 0: none) and index_bound its exclusive upper bound for the
     * case's shapes and parameters (with defaults), so that the harness
     * and the tests draw valid indices, uniform in [0, bound). */
    int index_in;
    tb_cost_fn index_bound;
    /* The default text of the op's TB_PARAM_STRING parameter (an op has
     * at most one; its spec's def and min/max: unused, 1..length). */
    const char *str_default;
    /* The einsum ops: the case's equation parsed against its operand
     * shapes `in` and its plan (ops/einsum.h; 0 or TB_EPARAM/TB_ESHAPE).
     * Through the op table, a backend module (which has no string table
     * of its own: tb_params_str is tbench's) runs the same plan as the
     * cpu backend.  NULL for every other op. */
    int (*einsum_plan)(const struct tb_op *op, const tb_shape *in,
                       const tb_params *p, struct tb_einsum *e,
                       struct tb_ein_plan *pl);
} tb_op;

/* Shapes an op takes from a config or the command line: one per input,
 * or for a creation op (no inputs) one: the output shape. */
static inline int tb_op_n_shapes(const tb_op *op)
{
    return op->n_in ? op->n_in : 1;
}

const tb_op *tb_op_get(tb_op_id id);
/* Is op defined in dtype dt?  Every op is in f32, and in f64 but
 * matmul_int8 (it quantizes f32 inputs); bf16 and f16 are defined for
 * the ops PyTorch computes in them on the CPU, with its numerics
 * (ops/half.h).  NULL when it is, else why not (one line). */
const char *tb_op_dtype_reason(const tb_op *op, tb_dtype dt);
/* The dtype of input i (tb_op_out_dtype: output o) in a case of dtype
 * dt: dt, except an optimizer's state (the inputs after p and g, and the
 * outputs that overwrite them) in a bf16/f16 case, which is f32: the
 * mixed-precision form (16-bit parameters and gradients, f32 state). */
tb_dtype tb_op_in_dtype(const tb_op *op, int i, tb_dtype dt);
tb_dtype tb_op_out_dtype(const tb_op *op, int o, tb_dtype dt);
/* The bound of input i's indices (see tb_op.index_bound): > 0 when
 * input i of op holds indices, else 0. */
double tb_op_index_bound(const tb_op *op, int i, const tb_shape *in,
                         const tb_params *p);
/* Lookup by name; NULL if unknown. */
const tb_op *tb_op_find(const char *name);
const char *tb_op_category_name(tb_op_category c);

/* Index of parameter `name` in op's schema, or -1. */
int tb_op_param_index(const tb_op *op, const char *name);
/* Set parameter `name` to v after checking kind and bounds.
 * Returns 0, TB_ENOTFOUND (unknown name) or TB_EPARAM (bad value) with
 * the reason in err. */
int tb_params_set(const tb_op *op, tb_params *p, const char *name, double v,
                  char *err, size_t errlen);
/* Set string parameter `name` to text s (checked as TB_PARAM_STR_MAX
 * says; the op's own rules, e.g. einsum's, come in its shape rule).
 * Returns 0, TB_ENOTFOUND, TB_EPARAM (bad text, or `name` is not a
 * string parameter) or TB_ENOMEM (the string table is full) with the
 * reason in err. */
int tb_params_set_str(const tb_op *op, tb_params *p, const char *name,
                      const char *s, char *err, size_t errlen);
/* The text of string parameter idx of p, or NULL when it is unset, not
 * a string parameter's handle or not in this process's table. */
const char *tb_params_str(const tb_params *p, int idx);
/* Is text s acceptable as a string parameter's value?  NULL if so,
 * else what is wrong (a static one-line reason). */
const char *tb_param_str_check(const char *s);
/* The next entry of a "name=value,name=value" list at *cur: a piece
 * without '=' continues the value before it ("equation=ij,jk->ik" is
 * one entry: a string parameter's text may hold commas, never '=').
 * Copies the name and value (NUL-terminated) and moves *cur past the
 * entry.  Returns 1 (an entry), 0 (the end) or TB_EINVAL (an empty
 * piece, a list starting without '=', or a name or value too long). */
int tb_params_next(const char **cur, char *name, size_t name_len,
                   char *value, size_t value_len);
/* Fill defaults for non-optional parameters that were not set. */
void tb_params_defaults(const tb_op *op, tb_params *p);
bool tb_params_has(const tb_params *p, int idx);
/* Formats "axis=0,keepdim=1" (empty string when none set); a string
 * parameter as its text, "equation=ij,jk->ik"; returns buf. */
char *tb_params_format(const tb_op *op, const tb_params *p, char *buf,
                       size_t len);

/* Runs op's shape rule after checking the input count and that every
 * input shape is non-empty with positive dims. */
int tb_op_infer(const tb_op *op, const tb_shape *in, int n_in,
                const tb_params *p, tb_shape *out, char *err, size_t errlen);

/* Normalise an axis parameter against ndim (negative counts from the end).
 * Returns 0 and the axis in *ax, or TB_EPARAM. */
int tb_axis_norm(int64_t axis, int ndim, int *ax);

/* permute's dims: params p0..p7 (schema of TB_OP_permute).  None set: the
 * dims reversed.  Otherwise exactly p0..p(ndim-1) must be set, each in
 * -ndim..ndim-1 (negative counts from the end), together a permutation of
 * 0..ndim-1.  Output dim i is input dim perm[i].  Returns 0, or TB_EPARAM
 * with the reason (naming "permute") in err (may be NULL). */
int tb_permute_dims(const tb_params *p, int ndim, int perm[TB_MAX_DIMS],
                    char *err, size_t errlen);

/* Output size of a 2-D window op along one dim: floor((in + 2*pad -
 * dil*(k-1) - 1) / stride) + 1, or 0 when the window does not fit (an
 * empty output).  Preconditions: in, k, stride, dil >= 1, pad >= 0. */
int64_t tb_window_out(int64_t in, int64_t k, int64_t stride, int64_t pad,
                      int64_t dil);

#endif
