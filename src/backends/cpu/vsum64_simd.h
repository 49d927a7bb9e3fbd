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

/* sum of x[0..n), pf's lines (a run ahead, or NULL) prefetched */
static inline double v64_sum(const double *x, int64_t n, const double *pf)
{
    rd a0 = rs_d1(0.0), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 4 * RS_W <= n; i += 4 * RS_W) {
        v64_prefetch(pf, i);
        a0 = rs_add(a0, rs_loadd(x + i));
        a1 = rs_add(a1, rs_loadd(x + i + RS_W));
        a2 = rs_add(a2, rs_loadd(x + i + 2 * RS_W));
        a3 = rs_add(a3, rs_loadd(x + i + 3 * RS_W));
    }
    double s = dx_hsum(rs_add(rs_add(a0, a1), rs_add(a2, a3)));
    for (; i < n; i++)
        s += x[i];
    return s;
}

/* sum of (x[i] - m)^2, i < n, pf as v64_sum's; with c non-NULL the
 * corrected two-pass form: *c = the sum of x[i] - m too, so that the
 * caller's mean m + *c / n and sum of squares (the result - *c^2 / n)
 * lose no more than the deviations' own rounding where m (a sum's
 * quotient, off by about n ulps of |x|) is far from them */
static inline double v64_ssd(const double *x, int64_t n, double m,
                             const double *pf, double *c)
{
    const rd vm = rs_d1(m);
    rd a0 = rs_d1(0.0), a1 = a0, a2 = a0, a3 = a0;
    rd c0 = a0, c1 = a0;
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
        c0 = rs_add(c0, rs_add(d0, d1));
        c1 = rs_add(c1, rs_add(d2, d3));
    }
    double s = dx_hsum(rs_add(rs_add(a0, a1), rs_add(a2, a3)));
    double cs = dx_hsum(rs_add(c0, c1));
    for (; i < n; i++) {
        s += (x[i] - m) * (x[i] - m);
        cs += x[i] - m;
    }
    if (c)
        *c = cs;
    return s;
}

#endif
