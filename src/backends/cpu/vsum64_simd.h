/* The sums of f64's blocked SIMD rows (attn64_simd_impl.h,
 * bnorm_simd_impl.h, norm64_simd_impl.h, optim_red_simd.h) on
 * dvec_simd.h's vectors: a vector's lanes maxed (added: f64_simd_impl.h's
 * dx_hsum), a run's sum and sum of squared deviations in four vector
 * accumulators (then lane by lane, then the scalar tail), with an
 * optional prefetch of another run (a row ahead) along the way.  Static
 * inline only; included by files built with their level's flags. */
#ifndef TB_BACKENDS_CPU_VSUM64_SIMD_H
#define TB_BACKENDS_CPU_VSUM64_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#include "dvec_simd.h"
#include "f64_simd_impl.h" /* dx_hsum */

static inline double v64_hmax(rd v)
{
    double t[RS_W];
    rs_stored(t, v);
    double s = t[0];
    for (int i = 1; i < RS_W; i++)
        s = t[i] > s ? t[i] : s;
    return s;
}

/* the lines of pf[i .. i + 4W) (doubles), when pf is not NULL */
static inline void v64_prefetch(const double *pf, int64_t i)
{
    if (pf)
        for (int l = 0; l < 4 * RS_W * 8; l += 64)
            _mm_prefetch((const char *)(pf + i) + l, _MM_HINT_T0);
}

/* sum of x[i] - c, i < n, pf's lines (a run ahead, or NULL)
 * prefetched: c a value near the row's (its first values' mean), so
 * that c + the result / n is a mean whose rounding is that of the
 * deviations, not n ulps of |x| (the plain mean's, large beside the
 * deviations of a row far from 0) */
static inline double v64_sum_shift(const double *x, int64_t n,
                                   const double *pf, double c)
{
    const rd vc = rs_d1(c);
    rd a0 = rs_d1(0.0), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 4 * RS_W <= n; i += 4 * RS_W) {
        v64_prefetch(pf, i);
        a0 = rs_add(a0, rs_sub(rs_loadd(x + i), vc));
        a1 = rs_add(a1, rs_sub(rs_loadd(x + i + RS_W), vc));
        a2 = rs_add(a2, rs_sub(rs_loadd(x + i + 2 * RS_W), vc));
        a3 = rs_add(a3, rs_sub(rs_loadd(x + i + 3 * RS_W), vc));
    }
    double s = dx_hsum(rs_add(rs_add(a0, a1), rs_add(a2, a3)));
    for (; i < n; i++)
        s += x[i] - c;
    return s;
}

/* sum of (x[i] - m)^2, i < n, pf as v64_sum_shift's */
static inline double v64_ssd(const double *x, int64_t n, double m,
                             const double *pf)
{
    const rd vm = rs_d1(m);
    rd a0 = rs_d1(0.0), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 4 * RS_W <= n; i += 4 * RS_W) {
        v64_prefetch(pf, i);
        const rd d0 = rs_sub(rs_loadd(x + i), vm);
        const rd d1 = rs_sub(rs_loadd(x + i + RS_W), vm);
        const rd d2 = rs_sub(rs_loadd(x + i + 2 * RS_W), vm);
        const rd d3 = rs_sub(rs_loadd(x + i + 3 * RS_W), vm);
        a0 = rs_fma(d0, d0, a0);
        a1 = rs_fma(d1, d1, a1);
        a2 = rs_fma(d2, d2, a2);
        a3 = rs_fma(d3, d3, a3);
    }
    double s = dx_hsum(rs_add(rs_add(a0, a1), rs_add(a2, a3)));
    for (; i < n; i++)
        s += (x[i] - m) * (x[i] - m);
    return s;
}

#endif
