/* Neumaier-compensated summation, the accumulator of the double-precision
 * references (ref.c, ref_backward.c): a sum of terms close to the
 * correctly rounded one.  Start from {0, 0}. */
#ifndef TB_OPS_KSUM_H
#define TB_OPS_KSUM_H

#include <math.h>

typedef struct tb_ksum {
    double s, c;
} tb_ksum;

static inline void tb_ksum_add(tb_ksum *k, double x)
{
    double t = k->s + x;
    if (fabs(k->s) >= fabs(x))
        k->c += (k->s - t) + x;
    else
        k->c += (x - t) + k->s;
    k->s = t;
}

/* Once the running sum is inf or NaN it stays so and the compensation
 * term is meaningless (inf - inf), so the plain sum is the answer. */
static inline double tb_ksum_get(const tb_ksum *k)
{
    return isfinite(k->s) ? k->s + k->c : k->s;
}

#endif
