/* arange's exact case (create.c's rows define out[i] as
 * (T)(start + (double)i * step), the product and the sum rounded
 * separately; the bf16/f16 rows narrow that float once, half.c).
 *
 * When start and step are multiples of 2^lb (lb their lowest set bit's
 * exponent, the smaller of the two) and |start| + (n - 1) |step| <
 * 2^(24 + lb), with -149 <= lb <= 104, every start + i step (i < n),
 * every i step and every whole multiple k step up to it is a multiple
 * of 2^lb below 2^(24 + lb) in magnitude: a float (24 significant bits
 * over the quantum 2^lb, no overflow, subnormals included).  So the
 * double operations are exact, the rounding to float is exact, and any
 * float operations on such values (v + W step, one vector to the next)
 * are exact too, with the zero signs of the same IEEE rules: a SIMD row
 * may then compute out[i] in float, W values at a time, by one addition
 * per vector, and store the portable row's bits (start 0, step 1, the
 * usual case, up to 2^24 elements).  A computed bound rounds to nearest:
 * from an exact sum at or above the power of 2 it rounds to at least
 * that power, so the strict test never passes a range it should not. */
#ifndef TB_BACKENDS_CPU_ARANGE_H
#define TB_BACKENDS_CPU_ARANGE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* the exponent of x's lowest set bit (x finite, normal, not zero):
 * true and *lb; false for a zero (no bit: *lb kept), a subnormal, an
 * infinity or NaN */
static inline bool tb_cpu_arange_lowbit(double x, int *lb, bool *zero)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    const int ex = (int)(u >> 52 & 0x7ff);
    const uint64_t frac = u & ((UINT64_C(1) << 52) - 1);
    *zero = ex == 0 && frac == 0;
    if (*zero)
        return true;
    if (ex == 0 || ex == 0x7ff)
        return false;
    const uint64_t m = frac | UINT64_C(1) << 52;
    const int b = ex - 1075 + __builtin_ctzll(m);
    if (b < *lb)
        *lb = b;
    return true;
}

/* Every value of arange(start, step) over n elements is exact in float
 * (above). */
static inline bool tb_cpu_arange_exact(double start, double step, int64_t n)
{
    int lb = 1 << 20;
    bool z0, z1;
    if (n < 1 || !tb_cpu_arange_lowbit(start, &lb, &z0) ||
        !tb_cpu_arange_lowbit(step, &lb, &z1))
        return false;
    if (z0 && z1)
        return true; /* every value start + i * 0: a zero */
    if (lb < -149 || lb > 104)
        return false;
    const double top = __builtin_fabs(start) +
                       (double)(n - 1) * __builtin_fabs(step);
    const uint64_t pu = (uint64_t)(1023 + 24 + lb) << 52; /* 2^(24 + lb) */
    double p2;
    memcpy(&p2, &pu, sizeof p2);
    return top < p2;
}

/* The values of an exact arange (above) are zeros or at least 2^lb in
 * magnitude: with lb >= -126 none is a subnormal float (a narrowing that
 * must treat subnormals apart, AVX512_BF16's, may skip its test). */
static inline bool tb_cpu_arange_normal(double start, double step)
{
    int lb = 1 << 20;
    bool z;
    return tb_cpu_arange_lowbit(start, &lb, &z) &&
           tb_cpu_arange_lowbit(step, &lb, &z) && lb >= -126;
}

#endif
