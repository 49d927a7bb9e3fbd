/* var f64's SIMD rows' lanes (one read of memory: var_simd.h's form in
 * double), a part of f64_simd_impl.h kept in its own file (the house's
 * 1,500-line limit): included there, where dvec_simd.h's vectors and the
 * helpers above it are defined; not a header of its own. */
#ifndef TB_BACKENDS_CPU_VAR64_SIMD_H
#define TB_BACKENDS_CPU_VAR64_SIMD_H

/* ---- var f64: one read of memory (var_simd.h's form in double) ------ */

#include "var_merge.h"

/* Elements per block (16 KiB: a block read again comes from L1); a
 * block's shift is kept when S1^2 <= DX_VAR_RHO n S2. */
#define DX_VAR_BLOCK 2048
#define DX_VAR_RHO 0.0625

/* *d = sum (x - k), *d2 = sum (x - k)^2 over x[0, len), four chains. */
static inline void dx_var_sums(const double *x, int64_t len, double k,
                               double *d, double *d2)
{
    const rd kv = rs_d1(k);
    rd d0 = rs_d1(0.0), d1 = d0, e0 = d0, e1 = d0;
    rd q0 = d0, q1 = d0, r0 = d0, r1 = d0;
    int64_t j = 0;
    for (; j + 4 * RS_W <= len; j += 4 * RS_W) {
        rd t0 = rs_sub(rs_loadd(x + j), kv);
        rd t1 = rs_sub(rs_loadd(x + j + RS_W), kv);
        rd t2 = rs_sub(rs_loadd(x + j + 2 * RS_W), kv);
        rd t3 = rs_sub(rs_loadd(x + j + 3 * RS_W), kv);
        d0 = rs_add(d0, t0);
        d1 = rs_add(d1, t1);
        e0 = rs_add(e0, t2);
        e1 = rs_add(e1, t3);
        q0 = rs_fma(t0, t0, q0);
        q1 = rs_fma(t1, t1, q1);
        r0 = rs_fma(t2, t2, r0);
        r1 = rs_fma(t3, t3, r1);
    }
    double sd = dx_hsum(rs_add(rs_add(d0, d1), rs_add(e0, e1)));
    double sq = dx_hsum(rs_add(rs_add(q0, q1), rs_add(r0, r1)));
    for (; j < len; j++) {
        double t = x[j] - k;
        sd += t;
        sq += t * t;
    }
    *d = sd;
    *d2 = sq;
}

/* A block around the shift k, checked as var_simd.h's (else around its
 * mean: the two-pass form); its mean about K, the lane's first
 * element, as there. */
static inline tb_var_part dx_var_block(const double *x, int64_t len,
                                       double k, double K)
{
    double d, d2;
    dx_var_sums(x, len, k, &d, &d2);
    if (!(d * d <= DX_VAR_RHO * (double)len * d2) && isfinite(d) &&
        isfinite(d2)) {
        k = dx_sum(x, len) / (double)len;
        dx_var_sums(x, len, k, &d, &d2);
    }
    return (tb_var_part){(double)len, (k - K) + d / (double)len,
                         d2 - d * d / (double)len};
}

/* A contiguous lane: blocks of DX_VAR_BLOCK, each read from memory once
 * around a shift predicted from the blocks before (var_simd.h), merged
 * by var_merge.h's tree.  Error: a block's M2 within (2 + 4 + nb/4) u
 * (1 + rho) of itself for u = 2^-53 (t rounded once, its square, the
 * chains' sums of nb/4 terms), rho <= 1/15 where the shift is kept; the
 * tree adds about log2(blocks) u. */
static double dx_var_lane(const double *x, int64_t len, int64_t corr)
{
    tb_var_tree t = {.top = 0};
    const double K = isfinite(x[0]) ? x[0] : 0.0;
    double m0 = 0, m1 = 0;
    for (int64_t n = 0, b = 0; n < len; n += DX_VAR_BLOCK, b++) {
        const int64_t bl = len - n < DX_VAR_BLOCK ? len - n : DX_VAR_BLOCK;
        double k = K + (b == 1 ? m1 : 2 * m1 - m0);
        if (b == 0 || !isfinite(k))
            k = x[n];
        tb_var_part p = dx_var_block(x + n, bl, k, K);
        m0 = m1;
        m1 = p.mean;
        tb_var_push(&t, p);
    }
    return tb_var_total(&t).m2 / (double)(len - corr);
}

/* w <= TB_CPU_SIMD_COLS adjacent lanes, row by row, the partial sums in
 * arrays on the stack. */
static void dx_var_cols(const double *x, double *o, int64_t len,
                        int64_t step, int64_t w, int64_t corr)
{
    double s[TB_CPU_SIMD_COLS], d[TB_CPU_SIMD_COLS], d2[TB_CPU_SIMD_COLS];
    for (int64_t t = 0; t < w; t++)
        s[t] = d[t] = d2[t] = 0;
    const int64_t wv = w - w % RS_W;
    for (int64_t j = 0; j < len; j++) {
        const double *row = x + j * step;
        for (int64_t t = 0; t < wv; t += RS_W)
            rs_stored(s + t, rs_add(rs_loadd(s + t), rs_loadd(row + t)));
        for (int64_t t = wv; t < w; t++)
            s[t] += row[t];
    }
    for (int64_t t = 0; t < w; t++)
        s[t] /= (double)len; /* the mean */
    for (int64_t j = 0; j < len; j++) {
        const double *row = x + j * step;
        for (int64_t t = 0; t < wv; t += RS_W) {
            rd u = rs_sub(rs_loadd(row + t), rs_loadd(s + t));
            rs_stored(d + t, rs_add(rs_loadd(d + t), u));
            rs_stored(d2 + t, rs_fma(u, u, rs_loadd(d2 + t)));
        }
        for (int64_t t = wv; t < w; t++) {
            double u = row[t] - s[t];
            d[t] += u;
            d2[t] += u * u;
        }
    }
    for (int64_t t = 0; t < w; t++)
        o[t] = (d2[t] - d[t] * d[t] / (double)len) / (double)(len - corr);
}

#endif /* TB_BACKENDS_CPU_VAR64_SIMD_H */
