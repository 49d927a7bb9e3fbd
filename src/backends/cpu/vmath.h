/*
 * Vectorised f32 math functions of the cpu backend: exp, log, tanh,
 * sigmoid, gelu (erf and tanh forms) and silu over arrays.
 *
 * Three implementations per function, chosen like the kernels (see
 * kernels.h): a reference-quality portable C version (vmath_c.c, which
 * evaluates in double with libm and rounds once, so it is within about
 * half an ulp of the true value), and AVX2+FMA and AVX-512 versions
 * (vmath_avx2.c, vmath_avx512.c) that share one float algorithm
 * (vmath_simd.h) and give bit-identical results to each other.
 *
 * Accuracy is stated as the maximum error in units in the last place
 * (ULP) against the double-precision result of the definitions below,
 * measured over a dense sweep of the float range; tests/test_checkasm.c
 * proves the bounds of tb_vmath_ulp_bound() (its --vmath-exhaustive option
 * sweeps every float).  An ulp is that of the float nearest the exact
 * result, 2^-149 for subnormal results, so a flush to zero where the
 * exact result is a subnormal counts as many ulps: none is allowed.
 *
 * Definitions (the references in the test, in double):
 *   exp(x), log(x)                       libm
 *   tanh(x)                              libm
 *   sigmoid(x)   = 1 / (1 + exp(-x))
 *   silu(x)      = x * sigmoid(x)
 *   gelu_erf(x)  = x * Phi(x) = 0.5 * x * erfc(-x / sqrt(2))
 *   gelu_tanh(x) = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
 *                = x * sigmoid(2 * sqrt(2/pi) * (x + 0.044715 x^3))
 * (The last forms avoid the cancellation in 1 + erf / 1 + tanh for
 * negative x, where the results are tiny but representable.)
 * Special values: NaN in, NaN out; exp(-inf) = 0, exp(inf) = inf;
 * log(0) = -inf, log(x < 0) = NaN, log(inf) = inf; tanh(+-inf) = +-1;
 * sigmoid(-inf) = 0, sigmoid(inf) = 1; silu and both gelus: -inf -> -0,
 * inf -> inf.
 */
#ifndef TB_BACKENDS_CPU_VMATH_H
#define TB_BACKENDS_CPU_VMATH_H

#include <stdint.h>

typedef enum tb_vmath_func {
    TB_VM_EXP,
    TB_VM_LOG,
    TB_VM_TANH,
    TB_VM_SIGMOID,
    TB_VM_GELU_ERF,
    TB_VM_GELU_TANH,
    TB_VM_SILU,
    TB_VM_COUNT
} tb_vmath_func;

/* y[i] = f(x[i]) for i < n (n >= 0).  y may equal x (in place); other
 * overlaps are not allowed.  No alignment beyond float's is needed, and
 * no byte outside x[0..n) / y[0..n) is read or written. */
typedef void (*tb_vmath_fn)(const float *x, float *y, int64_t n);

typedef struct tb_vmath {
    tb_vmath_fn fn[TB_VM_COUNT];
    /* The same results, y written with non-temporal stores where the
     * level has them (then a store fence): for arrays far beyond the
     * last-level cache (see kernels.h); the C level installs fn. */
    tb_vmath_fn fn_nt[TB_VM_COUNT];
    int isa[TB_VM_COUNT]; /* the tb_cpu_isa level of fn[i] */
} tb_vmath;

/*
 * Fill *t best-first for ISA level `isa` (capped by tb_cpu_isa_max()
 * and by what this binary was built with).  Returns the highest level
 * installed.
 */
int tb_vmath_fill(tb_vmath *t, int isa);

void tb_vmath_init_c(tb_vmath *t);
void tb_vmath_init_avx2(tb_vmath *t);
void tb_vmath_init_avx512(tb_vmath *t);

/* "exp", "log", "tanh", "sigmoid", "gelu_erf", "gelu_tanh", "silu";
 * "?" for a bad value. */
const char *tb_vmath_name(int f);

/*
 * Documented maximum error in ULP of function f at ISA level isa (see
 * the top of this file), as proven by tests/test_checkasm.c; a negative
 * value for bad arguments.
 */
double tb_vmath_ulp_bound(int f, int isa);

#endif /* TB_BACKENDS_CPU_VMATH_H */
