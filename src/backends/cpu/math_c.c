/* The portable C rows of the element-wise ops outside the drivers
 * (kreg.h's arithmetic and math families): neg, abs, sqrt, rsqrt,
 * leaky_relu, softplus and the scalar forms (add_scalar..div_scalar) in
 * both dtypes, exp, log, sigmoid, tanh, gelu, gelu_tanh and silu in f64
 * (their f32 C rows are drv_ew.c's over vmath.h), and the broadcasting
 * pow, maximum and minimum.
 *
 * Simple, single-threaded and correct: each row is the plain loop of its
 * op's definition in the case dtype (f32 rows use float libm: expf,
 * erfcf...), in the same numerically stable forms as the reference
 * kernels (src/ops/ref.c); the SIMD rows of the same pairs are checked
 * against them.  Operands follow the cpu backend's rules (host memory,
 * contiguous, the row's dtype, outputs of exactly the shapes the op's
 * rule gives: tb_cpu_begin_op checks them first).  A NULL ctx is allowed
 * (nothing is counted). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "cpu_internal.h"
#include "ew_defs.h"
#include "kreg.h"

/* ------------------------------------------------------------------ */
/* Element functions                                                    */
/* ------------------------------------------------------------------ */

/* Same stable forms as the reference kernels: sigmoid never computes
 * 1/(1+inf) for negative x; gelu uses erfc; gelu_tanh is x*sigmoid(2u),
 * equal to 0.5x(1+tanh u) without its cancellation for negative x. */
static inline float stable_sigmoid_f32(float x)
{
    if (x >= 0)
        return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

static inline double stable_sigmoid_f64(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

/* Every row's scalar functions, for both dtypes; f32 no longer has a C
 * row for some of them (vmath's are the f32 rows), so they may be
 * unused there (clang warns where gcc does not). */
#define EXT_FN static inline __attribute__((unused))

/* k: the op's float parameters, converted to the dtype. */
#define EXT_ELEM(T, SFX, SQRT, EXP, LOG, TANH, ERFC, LOG1P, FABS)          \
    EXT_FN T neg_##SFX(T x, const T *k)                                   \
    {                                                                     \
        (void)k;                                                          \
        return -x;                                                        \
    }                                                                     \
    EXT_FN T abs_##SFX(T x, const T *k)                                   \
    {                                                                     \
        (void)k;                                                          \
        return FABS(x);                                                   \
    }                                                                     \
    EXT_FN T exp_##SFX(T x, const T *k)                                   \
    {                                                                     \
        (void)k;                                                          \
        return EXP(x);                                                    \
    }                                                                     \
    EXT_FN T log_##SFX(T x, const T *k)                                   \
    {                                                                     \
        (void)k;                                                          \
        return LOG(x);                                                    \
    }                                                                     \
    EXT_FN T sqrt_##SFX(T x, const T *k)                                  \
    {                                                                     \
        (void)k;                                                          \
        return SQRT(x);                                                   \
    }                                                                     \
    EXT_FN T rsqrt_##SFX(T x, const T *k)                                 \
    {                                                                     \
        (void)k;                                                          \
        return (T)1 / SQRT(x);                                            \
    }                                                                     \
    /* the product is computed whatever the sign: a multiply only on   \
     * one side of ?: may trap, so gcc would keep a branch (mispredicted \
     * on random signs) instead of a vector select */                    \
    EXT_FN T leaky_relu_##SFX(T x, const T *k)                            \
    {                                                                     \
        T y = k[0] * x;                                                   \
        return x > 0 ? x : y;                                             \
    }                                                                     \
    EXT_FN T sigmoid_##SFX(T x, const T *k)                               \
    {                                                                     \
        (void)k;                                                          \
        return stable_sigmoid_##SFX(x);                                       \
    }                                                                     \
    EXT_FN T tanh_##SFX(T x, const T *k)                                  \
    {                                                                     \
        (void)k;                                                          \
        return TANH(x);                                                   \
    }                                                                     \
    EXT_FN T gelu_##SFX(T x, const T *k)                                  \
    {                                                                     \
        (void)k;                                                          \
        return (T)0.5 * x * ERFC(-x * (T)M_SQRT1_2);                      \
    }                                                                     \
    EXT_FN T gelu_tanh_##SFX(T x, const T *k)                             \
    {                                                                     \
        (void)k;                                                          \
        const T c = (T)0.7978845608028654; /* sqrt(2/pi) */               \
        T u = c * (x + (T)0.044715 * x * x * x);                          \
        return x * stable_sigmoid_##SFX((T)2 * u);                            \
    }                                                                     \
    EXT_FN T silu_##SFX(T x, const T *k)                                  \
    {                                                                     \
        (void)k;                                                          \
        return x * stable_sigmoid_##SFX(x);                                   \
    }                                                                     \
    EXT_FN T softplus_##SFX(T x, const T *k)                              \
    {                                                                     \
        T z = k[0] * x;                                                   \
        return z > k[1] ? x : LOG1P(EXP(z)) / k[0];                       \
    }                                                                     \
    EXT_FN T add_scalar_##SFX(T x, const T *k)                            \
    {                                                                     \
        return x + k[0];                                                  \
    }                                                                     \
    EXT_FN T sub_scalar_##SFX(T x, const T *k)                            \
    {                                                                     \
        return x - k[0];                                                  \
    }                                                                     \
    EXT_FN T mul_scalar_##SFX(T x, const T *k)                            \
    {                                                                     \
        return x * k[0];                                                  \
    }                                                                     \
    EXT_FN T div_scalar_##SFX(T x, const T *k)                            \
    {                                                                     \
        return x / k[0];                                                  \
    }                                                                     \
    /* binary */                                                          \
    EXT_FN T pow_##SFX(T a, T b)                                          \
    {                                                                     \
        return POW_##SFX(a, b);                                           \
    }                                                                     \
    /* NaN in either operand gives NaN (a + b is then NaN); every value \
     * computed, then selected with | (not ||), so no branch */          \
    EXT_FN T maximum_##SFX(T a, T b)                                      \
    {                                                                     \
        T s = a + b, m = a >= b ? a : b;                                  \
        return ((a != a) | (b != b)) ? s : m;                             \
    }                                                                     \
    EXT_FN T minimum_##SFX(T a, T b)                                      \
    {                                                                     \
        T s = a + b, m = a <= b ? a : b;                                  \
        return ((a != a) | (b != b)) ? s : m;                             \
    }

#define POW_f32 powf
#define POW_f64 pow

EXT_ELEM(float, f32, sqrtf, expf, logf, tanhf, erfcf, log1pf, fabsf)
EXT_ELEM(double, f64, sqrt, exp, log, tanh, erfc, log1p, fabs)

/* ------------------------------------------------------------------ */
/* Unary driver                                                         */
/* ------------------------------------------------------------------ */

/* o[i] = f(x[i]) for i < n; k: the op's float parameters. */
typedef void (*ext_unary_loop)(const void *x, void *o, int64_t n,
                               const double *k);

#define EXT_UNARY_LOOP(NAME, T, SFX)                                      \
    static void NAME##_##SFX##_loop(const void *xv, void *ov, int64_t n,  \
                                    const double *kd)                     \
    {                                                                     \
        const T *restrict x = xv;                                         \
        T *restrict o = ov;                                               \
        const T k[2] = {(T)kd[0], (T)kd[1]};                              \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = NAME##_##SFX(x[i], k);                                 \
    }

static int ext_unary(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p, tb_op_id id, tb_dtype dt,
                     ext_unary_loop loop, int nk)
{
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    double k[2] = {0, 0};
    for (int i = 0; i < nk; i++)
        k[i] = tb_cpu_param(p, id, i);
    loop(in[0].data, out[0].data, tb_tensor_numel(&in[0]), k);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Broadcasting binary driver                                           */
/* ------------------------------------------------------------------ */

#define EXT_BINARY_LOOP(NAME, T, SFX)                                     \
    static void NAME##_##SFX##_loop(const void *av, int64_t sa,           \
                                    const void *bv, int64_t sb, void *ov, \
                                    int64_t n)                            \
    {                                                                     \
        const T *restrict a = av;                                         \
        const T *restrict b = bv;                                         \
        T *restrict o = ov;                                               \
        if (sa == 1 && sb == 1) {                                         \
            for (int64_t i = 0; i < n; i++)                               \
                o[i] = NAME##_##SFX(a[i], b[i]);                          \
        } else {                                                          \
            for (int64_t i = 0; i < n; i++)                               \
                o[i] = NAME##_##SFX(a[i * sa], b[i * sb]);                \
        }                                                                 \
    }

void tb_cpu_bcast_rows(const tb_tensor *in, tb_tensor *out, size_t esz,
                       tb_cpu_binary_row_fn fn)
{
    const int nd = out->ndim;
    int64_t sa[TB_MAX_DIMS] = {0}, sb[TB_MAX_DIMS] = {0};
    tb_shape sh = tb_tensor_shape(&in[0]);
    tb_shape_bcast_strides(&sh, nd, sa);
    sh = tb_tensor_shape(&in[1]);
    tb_shape_bcast_strides(&sh, nd, sb);
    const int64_t inner = out->shape[nd - 1];
    const int64_t rows = inner ? tb_tensor_numel(out) / inner : 0;
    int64_t idx[TB_MAX_DIMS] = {0}, oa = 0, ob = 0;
    const char *a = in[0].data, *b = in[1].data;
    char *o = out->data;
    for (int64_t r = 0; r < rows; r++) {
        fn(a + (size_t)oa * esz, sa[nd - 1], b + (size_t)ob * esz,
           sb[nd - 1], o + (size_t)(r * inner) * esz, inner);
        for (int d = nd - 2; d >= 0; d--) {
            oa += sa[d];
            ob += sb[d];
            if (++idx[d] < out->shape[d])
                break;
            oa -= sa[d] * out->shape[d];
            ob -= sb[d] * out->shape[d];
            idx[d] = 0;
        }
    }
}

/* Broadcasting (ext_begin checked that the shapes broadcast to out). */
static int ext_binary(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_op_id id, tb_dtype dt,
                      tb_cpu_binary_row_fn loop)
{
    int rc = tb_cpu_begin_op(ctx, id, dt, in, out, p);
    if (rc)
        return rc;
    tb_cpu_bcast_rows(in, out, tb_dtype_size(dt), loop);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Entry points (rows of kreg.h)                                        */
/* ------------------------------------------------------------------ */

#define EXT_K_UNARY(NAME, NK)                                             \
    EXT_UNARY_LOOP(NAME, float, f32)                                      \
    EXT_UNARY_LOOP(NAME, double, f64)                                     \
    int tb_cpu_k_##NAME##_f32_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_unary(ctx, in, out, p, TB_OP_##NAME, TB_F32,           \
                         NAME##_f32_loop, NK);                            \
    }                                                                     \
    int tb_cpu_k_##NAME##_f64_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_unary(ctx, in, out, p, TB_OP_##NAME, TB_F64,           \
                         NAME##_f64_loop, NK);                            \
    }

/* The f64 row only: the f32 row of these ops is the element-wise driver's
 * (cpu.c over vmath.h), the one portable C version per op and dtype. */
#define EXT_K_UNARY_F64(NAME, NK)                                         \
    EXT_UNARY_LOOP(NAME, double, f64)                                     \
    int tb_cpu_k_##NAME##_f64_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_unary(ctx, in, out, p, TB_OP_##NAME, TB_F64,           \
                         NAME##_f64_loop, NK);                            \
    }

#define EXT_K_BINARY(NAME)                                                \
    EXT_BINARY_LOOP(NAME, float, f32)                                     \
    EXT_BINARY_LOOP(NAME, double, f64)                                    \
    int tb_cpu_k_##NAME##_f32_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_binary(ctx, in, out, p, TB_OP_##NAME, TB_F32,          \
                          NAME##_f32_loop);                               \
    }                                                                     \
    int tb_cpu_k_##NAME##_f64_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return ext_binary(ctx, in, out, p, TB_OP_##NAME, TB_F64,          \
                          NAME##_f64_loop);                               \
    }


/* The ops written once (ew_defs.h): their element functions in each
 * dtype, then their rows as the other unary ops'. */
#define ADD(a, b) ((a) + (b))
#define SUB(a, b) ((a) - (b))
#define MUL(a, b) ((a) * (b))
#define DIV(a, b) ((a) / (b))
#undef MAX
#undef MIN
#define MAX(a, b) ((a) < (b) ? (b) : (a))
#define MIN(a, b) ((b) < (a) ? (b) : (a))
#define K(c) ((T)(c))
#define EW_ELEM_T(NAME, EXPR, T_, SFX)                                    \
    static inline T_ NAME##_##SFX(T_ x, const T_ *k)                      \
    {                                                                     \
        typedef T_ T;                                                     \
        (void)k;                                                          \
        return EXPR;                                                      \
    }
#define EW_ROWS(NAME, W, EXPR, ...)                                       \
    EW_ELEM_T(NAME, EXPR, float, f32)                                     \
    EW_ELEM_T(NAME, EXPR, double, f64)                                    \
    EXT_K_UNARY(NAME, 0)
TB_CPU_EW_OPS(EW_ROWS, ~)
#include "ew_undef.h"

EXT_K_UNARY(neg, 0)
EXT_K_UNARY(abs, 0)
EXT_K_UNARY_F64(exp, 0)
EXT_K_UNARY_F64(log, 0)
EXT_K_UNARY(sqrt, 0)
EXT_K_UNARY(rsqrt, 0)
EXT_K_UNARY(leaky_relu, 1)
EXT_K_UNARY_F64(sigmoid, 0)
EXT_K_UNARY_F64(tanh, 0)
EXT_K_UNARY_F64(gelu, 0)
EXT_K_UNARY_F64(gelu_tanh, 0)
EXT_K_UNARY_F64(silu, 0)
EXT_K_UNARY(softplus, 2)
EXT_K_UNARY(add_scalar, 1)
EXT_K_UNARY(sub_scalar, 1)
EXT_K_UNARY(mul_scalar, 1)
EXT_K_UNARY(div_scalar, 1)
EXT_K_BINARY(pow)
EXT_K_BINARY(maximum)
EXT_K_BINARY(minimum)
