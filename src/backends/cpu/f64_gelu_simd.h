/* gelu and gelu_backward f64's cores for f64_simd_impl.h (included
 * there after DX_IL, for inclusion there only): erfcx by Weideman's
 * substitution, e^(-x^2/2) and the short forms of blocks with every
 * |x| <= 1. */
#ifndef TB_BACKENDS_CPU_F64_GELU_SIMD_H
#define TB_BACKENDS_CPU_F64_GELU_SIMD_H

#include <stdbool.h>

#include "dvec_simd.h"
#include "f64_explog_simd.h"

/* erfcx z = e^(z^2) erfc z for z >= 0 (z <= 40: the callers clamp):
 * 2 q (1/sqrt(pi) + q g(t)), q = 1 / (1 + 2z), t = (z - 4) / (z + 4),
 * g a polynomial of degree 27 in t (dx_erfcx_c, Horner's rule: one fma
 * a coefficient, where the Chebyshev series' Clenshaw recurrence took
 * an fma and two additions: gelu_backward f64 at 1M 7% faster, tbench
 * ab, load 32): our construction after Weideman's substitution, fitted
 * and checked by scripts/erfcx_f64_table.py (series within 2^-60; in
 * double, within 3.5 2^-53 relative, 2.66 there). */
#include "f64_erfcx.h"

static inline void dx_erfcx_n(const rd *z, rd *out)
{
    const rd four = rs_d1(4.0), one = rs_d1(1.0), zero = rs_d1(0.0);
    rd t[DX_IL], q[DX_IL], h[DX_IL];
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++) {
        t[j] = rs_div(rs_sub(z[j], four), rs_add(z[j], four));
        /* q = 1 / (1 + 2z) to about half an ulp: d + e = 1 + 2z (e
         * exact where d <= 2, 1 - d then exact; beyond, e is below z's
         * ulp), r = 1 / d rounded with residual rho = 1 - r d (exact by
         * fma), q = r + r (rho - e r): erfcx is proportional to q near
         * z = 0 */
        rd d = rs_fma(rs_d1(2.0), z[j], one);
        rd e = rs_fma(rs_d1(2.0), z[j], rs_sub(one, d));
        rd r = rs_div(one, d);
        rd rho = rs_fma(rs_sub(zero, r), d, one);
        q[j] = rs_fma(r, rs_fma(rs_sub(zero, e), r, rho), r);
        h[j] = rs_d1(dx_erfcx_c[DX_ERFCX_N - 1]);
    }
    for (int k = DX_ERFCX_N - 2; k >= 0; k--) {
        const rd ck = rs_d1(dx_erfcx_c[k]);
#pragma GCC unroll 4
        for (int j = 0; j < DX_IL; j++)
            h[j] = rs_fma(h[j], t[j], ck);
    }
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++) {
        out[j] = rs_mul(rs_add(q[j], q[j]),
                        rs_fma(h[j], q[j], rs_d1(0x1.20dd750429b6dp-1)));
    }
}

/* E = e^(-a^2 / 2) for a = |x| clamped to 40 (beyond, E and Phi(-a)
 * are 0 in double), a^2 / 2 as h + l exactly (fma): e^-h (1 - l); *a
 * = a and *z = a / sqrt 2 rounded (erfcx moves by about z ulp of z:
 * under an ulp).  Phi(-a) = E erfcx(z) / 2. */
static inline rd dx_gauss(rd x, rd *a, rd *z)
{
    *a = rs_min(rs_abs(x), rs_d1(40.0));
    rd h2 = rs_mul(*a, *a);
    rd l2 = rs_fma(*a, *a, rs_sub(rs_d1(0.0), h2));
    rd h = rs_mul(h2, rs_d1(0.5)), l = rs_mul(l2, rs_d1(0.5));
    rd eh = dx_exp_neg(rs_sub(rs_d1(0.0), h));
    *z = rs_mul(*a, rs_d1(0x1.6a09e667f3bcdp-1)); /* 1 / sqrt 2 */
    return rs_fma(rs_sub(rs_d1(0.0), l), eh, eh);
}

/* The short forms (|x| <= 1 in every lane of a block: no exp, no
 * erfcx, no division): P(x^2) for P = dx_gelu_q or dx_gelu_d (degree
 * 11, Horner), then 1/2 + x P (Phi(x), gelu'(x): f64_erfcx.h).  Phi >=
 * 0.158 here, x Q <= 0.342 of it: Q's ~1 ulp counts at most 2.2 times.
 * dx_short_ok: every lane of v's DX_IL vectors has |x| <= 1 (NaN
 * fails). */
static inline bool dx_short_ok(const rd *v)
{
    unsigned all = (1u << RS_W) - 1;
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++)
        all &= rs_bits(rs_le(rs_abs(v[j]), rs_d1(1.0)));
    return all == (1u << RS_W) - 1;
}

static inline void dx_short_n(const double *P, const rd *v, rd *out)
{
    rd y[DX_IL], h[DX_IL];
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++) {
        y[j] = rs_mul(v[j], v[j]);
        h[j] = rs_d1(P[DX_GELU_NS - 1]);
    }
#pragma GCC unroll 16
    for (int k = DX_GELU_NS - 2; k >= 0; k--) {
        const rd ck = rs_d1(P[k]);
#pragma GCC unroll 4
        for (int j = 0; j < DX_IL; j++)
            h[j] = rs_fma(h[j], y[j], ck);
    }
#pragma GCC unroll 4
    for (int j = 0; j < DX_IL; j++)
        out[j] = rs_fma(v[j], h[j], rs_d1(0.5));
}

#endif
