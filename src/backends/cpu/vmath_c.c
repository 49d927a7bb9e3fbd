/*
 * Portable reference-quality versions of the vmath functions (see
 * vmath.h), the table filler and the documented error bounds.
 *
 * Each function evaluates its definition in double with libm (whose
 * double exp/log/tanh/erfc are accurate to about 1 double ulp) and rounds
 * to float once, so the result is within 0.5 float ulp plus a few 2^-29
 * relative of the exact value: reference quality, not speed.
 */
#include <math.h>
#include <stdint.h>

#include "backends/cpu/cpu_config.h"
#include "isa.h"
#include "vmath.h"

static const char *const vm_names[TB_VM_COUNT] = {
    "exp", "log", "tanh", "sigmoid", "gelu_erf", "gelu_tanh", "silu",
};

/*
 * Documented bounds (ULP, see vmath.h), per function: [0] the C versions,
 * [1] the SIMD versions (AVX2 and AVX-512 run the same algorithm and give
 * identical results; the test checks that too; but for the gelus' cores
 * for |x| <= 3: 16 table pieces at AVX-512, 8 at AVX2, see below).
 *
 * How they were measured (release build, this code, glibc 2.36 libm as
 * the double reference): every float (--vmath-exhaustive, 4.3e9
 * inputs) for exp, tanh, sigmoid, gelu_erf and gelu_tanh, every 7th
 * bit pattern of all 2^32 for the others (6.1e8 inputs: every binade,
 * both signs, subnormals, infinities and NaNs).  Maxima found (SIMD): exp 1.950
 * (x = -5.199), log 0.800 (1.398), tanh 3.840 (2.367), sigmoid 2.402
 * (-4.157), gelu_erf 3.052 (-5.724, the exp form for |x| > 3; its
 * table polynomials for |x| <= 3: 1.760 at -1.859), gelu_tanh 2.948
 * (-3.386, the small form for 3 < |x| <= 4; its table polynomials for
 * |x| <= 3: 1.986 at -2.997), silu 3.137 (-3.245).  (tanh, gelu_erf
 * and gelu_tanh re-measured for their current algorithms:
 * --vmath-exhaustive, debugoptimized build, 2026-11-25/26.)
 * The bounds are those rounded up to the next half ulp (2.5 and 3.5
 * kept where they held).
 * Relaxed for speed (per-call time, in-cache microbenchmark, AVX-512):
 * exp 1.25 -> 2.0 (a degree-5 polynomial instead of 6: 12% less time),
 * tanh 1.5 -> 3.0 (one expm1-based formula for all arguments instead
 * of a polynomial plus exp: 17% less), then 3.0 -> 4.0 (a rational on
 * |x| < 3, no exp there: about 35% less again).  gelu_erf went from
 * 4.5 (a fit of log(erfc(z)/t) + z^2 in t = 1/(1 + z/2), a division and
 * an exp of a double-float sum) to 3.5 with less than half the time
 * (x exp(-x^2/2) G(x) with G a polynomial on three pieces, no
 * division; see vmath_simd.h), then for |x| <= 3 x Phi(x) by 8
 * degree-6 polynomials picked by table lookups, no exp (tbench ab,
 * release, 1 thread, AVX-512: 1M f32 486 -> 332 us, 4096 1.78 ->
 * 1.14 us; llvm-mca icelake-server 18.5 -> 9.0 cycles per 16
 * elements).  gelu_tanh kept its 3.5 with about 17%
 * less time (tbench ab, release, 1M f32, 1 thread: 535 -> 442 us; then
 * vscalefps for the scaling, 430 -> 408 us): a form for |x| <= 4 that
 * gets v's double-float tail from one FMA's exact rounding error
 * (Sterbenz) and skips the range checks (vs_gelu_tanh_small); its
 * maximum, every 7th pattern, is the wide form's 3.198 at -1.838;
 * --vmath-exhaustive (every float, debugoptimized build, 2026-11-25)
 * finds 3.404 at -2.978, inside 3.5 and the same as before this form.
 * Then, as gelu_erf, for |x| <= 3 x - x S / x S by the sign, S(|x|) =
 * sigmoid(-v) by 8 degree-6 polynomials picked by table lookups, no
 * exp or division (vs_gelu_tanh_core; tbench ab, release, 1 thread,
 * AVX-512, load 2.8: 4096 f32 1.58 -> 1.16 us, 1M 444 -> 339 us;
 * llvm-mca icelake-server 32 -> 20 cycles per 32 elements); every
 * float: 2.948 at -3.386, a lane of the small form, which now serves
 * 3 < |x| <= 4 only.
 * Then at AVX-512 both gelus' cores for |x| <= 3 take 16 table pieces
 * of degree 5 (vs_gelu16_core: six lookups a vector, not eight; tbench
 * ab, release, 1 thread, load ~15: 1M f32 274 -> 230 us, bf16 330 ->
 * 282 us, before the pieces' width became 1/4); every float with
 * |x| <= 3 against double erfc/exp (AVX-512): gelu_erf 1.843 at -2.842
 * (1.301 for x >= 0), gelu_tanh 1.828 at -0.340 (1.404 for x >= 0).
 * The C versions round a double result once: 0.5 ulp plus the double
 * evaluation's ~2^-29 ulp, stated as 0.501.  tests/test_checkasm.c
 * proves the bounds on its default sweep (every 1031st pattern plus
 * random inputs); --vmath-stride N and --vmath-exhaustive go denser.
 */
static const double vm_bounds[TB_VM_COUNT][2] = {
    [TB_VM_EXP] = {0.501, 2.0},
    [TB_VM_LOG] = {0.501, 1.0},
    [TB_VM_TANH] = {0.501, 4.0},
    [TB_VM_SIGMOID] = {0.501, 2.5},
    [TB_VM_GELU_ERF] = {0.501, 3.5},
    [TB_VM_GELU_TANH] = {0.501, 3.5},
    [TB_VM_SILU] = {0.501, 3.5},
};

const char *tb_vmath_name(int f)
{
    return f >= 0 && f < TB_VM_COUNT ? vm_names[f] : "?";
}

double tb_vmath_ulp_bound(int f, int isa)
{
    if (f < 0 || f >= TB_VM_COUNT || isa < 0 || isa >= TB_ISA_COUNT)
        return -1;
    return vm_bounds[f][isa == TB_ISA_SCALAR ? 0 : 1];
}

/* x * sigmoid(v) in double, without overflow: exp of a non-positive
 * argument only. */
static double mul_sigmoid(double x, double v)
{
    if (v >= 0)
        return x / (1 + exp(-v));
    double e = exp(v);
    return x * e / (1 + e);
}

static float c_exp1(float x)
{
    return (float)exp((double)x);
}

static float c_log1(float x)
{
    return (float)log((double)x);
}

static float c_tanh1(float x)
{
    return (float)tanh((double)x);
}

static float c_sigmoid1(float x)
{
    return isnan(x) ? x : (float)mul_sigmoid(1.0, (double)x);
}

static float c_silu1(float x)
{
    if (isinf(x))
        return x > 0 ? x : -0.0f;
    return (float)mul_sigmoid((double)x, (double)x);
}

static float c_gelu_erf1(float x)
{
    if (isinf(x))
        return x > 0 ? x : -0.0f;
    double d = x;
    return (float)(0.5 * d * erfc(-d * M_SQRT1_2));
}

static float c_gelu_tanh1(float x)
{
    if (isinf(x))
        return x > 0 ? x : -0.0f;
    const double k = 2 * 0.7978845608028654; /* 2 * sqrt(2 / pi) */
    double d = x;
    return (float)mul_sigmoid(d, k * (d + 0.044715 * d * d * d));
}

#define VM_C_ARRAY(NAME)                                                  \
    static void c_##NAME(const float *x, float *y, int64_t n)             \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            y[i] = c_##NAME##1(x[i]);                                     \
    }

VM_C_ARRAY(exp)
VM_C_ARRAY(log)
VM_C_ARRAY(tanh)
VM_C_ARRAY(sigmoid)
VM_C_ARRAY(gelu_erf)
VM_C_ARRAY(gelu_tanh)
VM_C_ARRAY(silu)

void tb_vmath_init_c(tb_vmath *t)
{
    t->fn[TB_VM_EXP] = c_exp;
    t->fn[TB_VM_LOG] = c_log;
    t->fn[TB_VM_TANH] = c_tanh;
    t->fn[TB_VM_SIGMOID] = c_sigmoid;
    t->fn[TB_VM_GELU_ERF] = c_gelu_erf;
    t->fn[TB_VM_GELU_TANH] = c_gelu_tanh;
    t->fn[TB_VM_SILU] = c_silu;
    for (int f = 0; f < TB_VM_COUNT; f++) {
        t->fn_nt[f] = t->fn[f];
        t->isa[f] = TB_ISA_SCALAR;
    }
}

int tb_vmath_fill(tb_vmath *t, int isa)
{
    const int max = tb_cpu_isa_max();
    int got = TB_ISA_SCALAR;
    tb_vmath_init_c(t);
    if (isa > max)
        isa = max;
#if TB_CPU_HAVE_AVX2
    if (isa >= TB_ISA_AVX2) {
        tb_vmath_init_avx2(t);
        got = TB_ISA_AVX2;
    }
#endif
#if TB_CPU_HAVE_AVX512
    if (isa >= TB_ISA_AVX512) {
        tb_vmath_init_avx512(t);
        got = TB_ISA_AVX512;
    }
#endif
#if TB_CPU_HAVE_AVX512BF16
    if (isa >= TB_ISA_AVX512BF16) /* avx512's functions */
        got = TB_ISA_AVX512BF16;
#endif
    return got;
}
