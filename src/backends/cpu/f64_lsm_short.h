/* Short rows of log_softmax, softmax and log_softmax_backward f64 (n <=
 * DX_SHORT elements along a contiguous last axis), for inclusion by
 * f64_simd_impl.h only (over its dx_exp_neg, dx_exp, dx_log).
 *
 * A row of 10 fills no vector: the row-at-a-time code (dx_rowmax,
 * dx_expsum, the write pass) spent its time in the scalar tails, the
 * horizontal folds and a libm log per row (1024x10: 99 us, 10 ns an
 * element, behind NumPy's 79).  Here RS_W rows at once, transposed into
 * a tile on the stack (lane l = row l, vector k = element k of every
 * row), so each step is one vector operation for RS_W rows and nothing
 * is folded across lanes: the max from element 0 in element order (the
 * portable rule: x > m ? x : m, a NaN wins only as element 0), the sum
 * of e^(x - m) in element order (the portable rows' order; dx_exp_neg
 * within 2 ulp an element), log s by dx_log (within 3 ulp; the
 * row-at-a-time code takes libm's), 1 / s for softmax; then the tile
 * written back.  log_softmax_backward: s = sum g from 0 in element order
 * (the portable row's sum, bit for bit), dx = g - e^y s by one fnma as
 * dx_lsm_one.  A NaN or +inf in a row makes its s NaN (+inf - +inf), a
 * row of -inf too, as the row-at-a-time code. */
#ifndef TB_BACKENDS_CPU_F64_LSM_SHORT_H
#define TB_BACKENDS_CPU_F64_LSM_SHORT_H

enum { DX_SHORT = 16 };

/* RS_W rows of n elements (row stride n) into t[k RS_W + l], or back */
static inline void dx_tile_in(const double *x, int64_t n, double *t)
{
    for (int l = 0; l < RS_W; l++)
        for (int64_t k = 0; k < n; k++)
            t[k * RS_W + l] = x[l * n + k];
}

static inline void dx_tile_out(const double *t, int64_t n, double *o)
{
    for (int l = 0; l < RS_W; l++)
        for (int64_t k = 0; k < n; k++)
            o[l * n + k] = t[k * RS_W + l];
}

/* log_softmax (soft 0) or softmax (soft 1) of RS_W rows of n <=
 * DX_SHORT */
static inline void dx_short_fwd(const double *x, double *o, int64_t n,
                                int soft)
{
    double t[DX_SHORT * RS_W] = {0}; /* n >= 1; gcc cannot tell */
    dx_tile_in(x, n, t);
    rd m = rs_loadd(t);
    for (int64_t k = 1; k < n; k++)
        m = rs_max(rs_loadd(t + k * RS_W), m);
    rd s = rs_d1(0.0);
    for (int64_t k = 0; k < n; k++) {
        rd e = dx_exp_neg(rs_sub(rs_loadd(t + k * RS_W), m));
        if (soft)
            rs_stored(t + k * RS_W, e);
        s = rs_add(s, e);
    }
    if (soft) {
        const rd inv = rs_div(rs_d1(1.0), s);
        for (int64_t k = 0; k < n; k++)
            rs_stored(t + k * RS_W, rs_mul(rs_loadd(t + k * RS_W), inv));
    } else {
        const rd ls = dx_log(s);
        for (int64_t k = 0; k < n; k++)
            rs_stored(t + k * RS_W,
                      rs_sub(rs_sub(rs_loadd(t + k * RS_W), m), ls));
    }
    dx_tile_out(t, n, o);
}

/* The first rows - rows % RS_W of `rows` rows of n (<= DX_SHORT) by
 * dx_short_fwd; the number done. */
static inline int64_t dx_short_rows(const double *x, double *o,
                                    int64_t rows, int64_t n, int soft)
{
    int64_t r = 0;
    for (; r + RS_W <= rows; r += RS_W)
        dx_short_fwd(x + r * n, o + r * n, n, soft);
    return r;
}

/* log_softmax_backward of RS_W rows of n <= DX_SHORT */
static inline void dx_short_bwd(const double *g, const double *y,
                                double *dx, int64_t n)
{
    double tg[DX_SHORT * RS_W] = {0}, ty[DX_SHORT * RS_W] = {0};
    dx_tile_in(g, n, tg);
    dx_tile_in(y, n, ty);
    rd s = rs_d1(0.0);
    for (int64_t k = 0; k < n; k++)
        s = rs_add(s, rs_loadd(tg + k * RS_W));
    for (int64_t k = 0; k < n; k++) {
        rd e = dx_exp(rs_loadd(ty + k * RS_W));
        rs_stored(tg + k * RS_W, rs_fma(rs_sub(rs_d1(0.0), e), s,
                                        rs_loadd(tg + k * RS_W)));
    }
    dx_tile_out(tg, n, dx);
}

#endif
