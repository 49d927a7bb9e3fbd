/* log_softmax, softmax and log_softmax_backward f64 at the avx2 and
 * avx512 levels (kernels.h's lsm and sm slots, bwd_simd.h's
 * log_softmax_backward driver), for inclusion by f64_simd_impl.h only,
 * after its exp, log and dx_sum: long rows of log_softmax and softmax as
 * a row pipeline (dx_lsm_step), short rows RS_W at once
 * (f64_lsm_short.h), the tiles of a non-last axis (dx_lsm_fwd_cols);
 * the row max and sum of exponentials cross_entropy shares
 * (xent_f64_simd.h). */
#ifndef TB_BACKENDS_CPU_F64_LSM_SIMD_H
#define TB_BACKENDS_CPU_F64_LSM_SIMD_H

#include "f64_lsm_short.h"

/* ---- log_softmax_backward f64: dx = g - exp(y) s, s = sum(g) -------- */

/* dx = g - e^y s for RS_W lanes (fnma: one rounding of e^y s's
 * subtraction), the portable row's formula. */
static inline rd dx_lsm_one(rd g, rd y, rd s)
{
    return rs_fma(rs_sub(rs_d1(0.0), dx_exp(y)), s, g);
}

/* One contiguous lane of len: its sum (dx_sum), then dx; with nx, the
 * next lane's g, y and dx (len further) prefetched meanwhile (they
 * stream from L3 at 256 x 1000: the sum's pass waited on g, the second
 * on y and dx's lines). */
static void dx_lsm_lane(const double *g, const double *y, double *dx,
                        int64_t len, bool nx)
{
    const rd st = rs_d1(dx_sum(g, len));
    int64_t k = 0;
    for (; k + RS_W <= len; k += RS_W) {
        if (nx && RS_W == 8) { /* AVX2: 7% slower */
            _mm_prefetch((const char *)(g + len + k), _MM_HINT_T0);
            _mm_prefetch((const char *)(y + len + k), _MM_HINT_T0);
            _mm_prefetch((const char *)(dx + len + k), _MM_HINT_T0);
        }
        rs_stored(dx + k,
                  dx_lsm_one(rs_loadd(g + k), rs_loadd(y + k), st));
    }
    if (k < len) {
        double tg[RS_W] = {0}, ty[RS_W] = {0};
        memcpy(tg, g + k, (size_t)(len - k) * sizeof *tg);
        memcpy(ty, y + k, (size_t)(len - k) * sizeof *ty);
        rs_stored(tg, dx_lsm_one(rs_loadd(tg), rs_loadd(ty), st));
        memcpy(dx + k, tg, (size_t)(len - k) * sizeof *dx);
    }
}

/* The inner lanes of one outer index of a non-last axis (stride
 * inner): RS_W adjacent lanes at once, the last inner % RS_W by libm as
 * the portable row. */
static void dx_lsm_cols(const double *g, const double *y, double *dx,
                        int64_t len, int64_t inner)
{
    const int64_t wv = inner - inner % RS_W;
    for (int64_t i0 = 0; i0 < wv; i0 += RS_W) {
        rd s = rs_d1(0.0);
        for (int64_t k = 0; k < len; k++)
            s = rs_add(s, rs_loadd(g + k * inner + i0));
        for (int64_t k = 0; k < len; k++) {
            const int64_t q = k * inner + i0;
            rs_stored(dx + q,
                      dx_lsm_one(rs_loadd(g + q), rs_loadd(y + q), s));
        }
    }
    for (int64_t i = wv; i < inner; i++) {
        double s = 0;
        for (int64_t k = 0; k < len; k++)
            s += g[k * inner + i];
        for (int64_t k = 0; k < len; k++) {
            const int64_t q = k * inner + i;
            dx[q] = g[q] - exp(y[q]) * s;
        }
    }
}

/* Outer lanes [o0, o1) of [outer, len, inner] (bwd_simd.h's driver),
 * each in two passes: the sum of g, then dx (short contiguous lanes
 * RS_W at once: f64_lsm_short.h). */
static void dx_lsm_rows(const double *g, const double *y, double *dx,
                        int64_t o0, int64_t o1, int64_t len, int64_t inner)
{
    int64_t o = o0;
    if (inner == 1 && len <= DX_SHORT) /* RS_W rows at once */
        o += dx_short_lsm_bwd(g + o * len, y + o * len, dx + o * len,
                              o1 - o0, len);
    for (; o < o1; o++) {
        const int64_t at = o * len * inner;
        if (inner == 1)
            dx_lsm_lane(g + at, y + at, dx + at, len, o + 1 < o1);
        else
            dx_lsm_cols(g + at, y + at, dx + at, len, inner);
    }
}

/* ---- log_softmax and softmax f64: kernels.h's lsm and sm slots -------- */

/* The portable rows' three passes (kernels_c.c) in vector lanes, the
 * rows pipelined (dx_lsm_step: the three passes of three rows in one
 * loop): the max as theirs (m = x > m ? x : m from x[0]: x86's max keeps
 * its second operand, the running max, for a NaN, so only a NaN x[0]
 * wins), the sum of e^(x - m) in double (dx_exp_nonpos: x - m <= 0) in
 * vector partial sums (a different order: the op's tolerance), then (x -
 * m) - log s, or e written in the second pass and multiplied by 1 / s in
 * the third; a row's tail through blocks padded with -inf (e^-inf = 0);
 * rows of at most DX_SHORT RS_W at once (f64_lsm_short.h).  A tile of
 * columns: RS_W adjacent columns at once down the rows, the last w %
 * RS_W by libm as the portable row. */
static inline double dx_rowmax(const double *x, int64_t n)
{
    rd m0 = rs_d1(x[0]), m1 = m0;
    int64_t i = 0;
    for (; i + 2 * RS_W <= n; i += 2 * RS_W) {
        m0 = rs_max(rs_loadd(x + i), m0);
        m1 = rs_max(rs_loadd(x + i + RS_W), m1);
    }
    double t[RS_W];
    rs_stored(t, rs_max(m1, m0));
    double m = t[0];
    for (int u = 1; u < RS_W; u++)
        m = t[u] > m ? t[u] : m;
    for (; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

/* e^(x[i] - m) for i < n into o (when o is not NULL), their sum
 * returned.  pr and pw (when not NULL): n elements to prefetch into L1
 * meanwhile, a row to be read (the next row's x) and one to be written
 * (an output row): cross_entropy's passes stream their rows from L3
 * (2 MB at 256 x 1000), which the exponentials' loop leaves idle. */
static inline double dx_expsum(const double *x, double *o, int64_t n,
                               double m, const double *pr,
                               const double *pw)
{
    const rd vm = rs_d1(m);
    rd s0 = rs_d1(0.0), s1 = rs_d1(0.0);
    int64_t i = 0;
    for (; i + 2 * RS_W <= n; i += 2 * RS_W) {
        if (pr && RS_W == 8) {
            _mm_prefetch((const char *)(pr + i), _MM_HINT_T0);
            _mm_prefetch((const char *)(pr + i + 8), _MM_HINT_T0);
        }
        if (pw && RS_W == 8) {
            _mm_prefetch((const char *)(pw + i), _MM_HINT_T0);
            _mm_prefetch((const char *)(pw + i + 8), _MM_HINT_T0);
        }
        rd e0 = dx_exp_nonpos(rs_sub(rs_loadd(x + i), vm));
        rd e1 = dx_exp_nonpos(rs_sub(rs_loadd(x + i + RS_W), vm));
        if (o) {
            rs_stored(o + i, e0);
            rs_stored(o + i + RS_W, e1);
        }
        s0 = rs_add(s0, e0);
        s1 = rs_add(s1, e1);
    }
    if (i + RS_W <= n) {
        rd e = dx_exp_nonpos(rs_sub(rs_loadd(x + i), vm));
        if (o)
            rs_stored(o + i, e);
        s1 = rs_add(s1, e);
        i += RS_W;
    }
    for (; i < n; i += RS_W) {
        double t[RS_W];
        const int64_t k = n - i < RS_W ? n - i : RS_W;
        for (int u = 0; u < RS_W; u++)
            t[u] = u < k ? x[i + u] : -INFINITY;
        rd e = dx_exp_nonpos(rs_sub(rs_loadd(t), vm));
        rs_stored(t, e);
        if (o)
            memcpy(o + i, t, (size_t)k * sizeof *o);
        s0 = rs_add(s0, e);
    }
    return dx_hsum(rs_add(s0, s1));
}

/* The previous row's write: log_softmax o = (x - m) - l (two
 * roundings, the portable row's), softmax o = o l (l = 1 / s) */
static inline rd dx_lsm_put(const double *x, double *o, rd m, rd l,
                            int soft)
{
    return soft ? rs_mul(rs_loadd(o), l) : rs_sub(rs_sub(rs_loadd(x), m), l);
}

static inline void dx_lsm_put_row(const double *x, double *o, int64_t n,
                                  double m, double l, int soft)
{
    const rd vm = rs_d1(m), vl = rs_d1(l);
    int64_t i = 0;
    for (; i + RS_W <= n; i += RS_W)
        rs_stored(o + i, dx_lsm_put(x + i, o + i, vm, vl, soft));
    for (; i < n; i++)
        o[i] = soft ? o[i] * l : (x[i] - m) - l;
}

/* One step of the row pipeline of log_softmax (soft 0) and softmax
 * (soft 1) on long rows: in one loop over the n elements, the max of
 * the next row xn (when not NULL; dx_rowmax's rule and value) into *mn,
 * the sum of e^(x - m) of this row (e stored in o for softmax), and the
 * previous row's write (xp, op, mp, lp: dx_lsm_put; when op is not
 * NULL), pw prefetched (the output row the next step writes).  The
 * three passes one after another left the exponentials' FMA pipes idle
 * while the max streamed its row in from L3 and the write stored it
 * (zmm stores one every 2 cycles): log_softmax 256x1000 f64 at avx512
 * 174 -> 170 us in a micro (the passes apart, prefetched: 185 -> 174),
 * 247 -> 159 us in all against main's dx_exp_neg rows (tbench ab). */
static inline double dx_lsm_step(const double *xn, double *mn,
                                 const double *x, double m, double *o,
                                 const double *xp, double *op, double mp,
                                 double lp, const double *pw, int64_t n,
                                 int soft)
{
    const rd vm = rs_d1(m), vmp = rs_d1(mp), vlp = rs_d1(lp);
    rd m0 = rs_d1(xn ? xn[0] : 0.0), m1 = m0;
    rd s0 = rs_d1(0.0), s1 = rs_d1(0.0);
    int64_t i = 0;
    for (; i + 2 * RS_W <= n; i += 2 * RS_W) {
        if (pw && RS_W == 8) {
            _mm_prefetch((const char *)(pw + i), _MM_HINT_T0);
            _mm_prefetch((const char *)(pw + i + 8), _MM_HINT_T0);
        }
        if (xn) {
            m0 = rs_max(rs_loadd(xn + i), m0);
            m1 = rs_max(rs_loadd(xn + i + RS_W), m1);
        }
        rd e0 = dx_exp_nonpos(rs_sub(rs_loadd(x + i), vm));
        rd e1 = dx_exp_nonpos(rs_sub(rs_loadd(x + i + RS_W), vm));
        if (soft) {
            rs_stored(o + i, e0);
            rs_stored(o + i + RS_W, e1);
        }
        s0 = rs_add(s0, e0);
        s1 = rs_add(s1, e1);
        if (op) {
            rs_stored(op + i, dx_lsm_put(xp + i, op + i, vmp, vlp, soft));
            rs_stored(op + i + RS_W, dx_lsm_put(xp + i + RS_W,
                                                op + i + RS_W, vmp, vlp,
                                                soft));
        }
    }
    const int64_t i2 = i;
    if (xn) { /* dx_rowmax's fold and tail from i2 */
        double t[RS_W];
        rs_stored(t, rs_max(m1, m0));
        double v = t[0];
        for (int u = 1; u < RS_W; u++)
            v = t[u] > v ? t[u] : v;
        for (int64_t k = i2; k < n; k++)
            v = xn[k] > v ? xn[k] : v;
        *mn = v;
    }
    for (; i < n; i += RS_W) { /* the tail through a block padded with -inf */
        double t[RS_W];
        const int64_t k = n - i < RS_W ? n - i : RS_W;
        for (int u = 0; u < RS_W; u++)
            t[u] = u < k ? x[i + u] : -INFINITY;
        rd e = dx_exp_nonpos(rs_sub(rs_loadd(t), vm));
        rs_stored(t, e);
        if (soft)
            memcpy(o + i, t, (size_t)k * sizeof *o);
        s0 = rs_add(s0, e);
    }
    if (op)
        for (int64_t k = i2; k < n; k++)
            op[k] = soft ? op[k] * lp : (xp[k] - mp) - lp;
    return dx_hsum(rs_add(s0, s1));
}

/* Rows of n > DX_SHORT by dx_lsm_step (the first row's max by
 * dx_rowmax, the last row's write by dx_lsm_put_row); shorter rows RS_W
 * at once (f64_lsm_short.h) */
static inline void dx_lsm_rows_soft(const double *x, double *o,
                                    int64_t rows, int64_t n, int soft)
{
    const int64_t r0 = n <= DX_SHORT ? dx_short_rows(x, o, rows, n, soft)
                                     : 0;
    if (r0 == rows)
        return;
    x += r0 * n;
    o += r0 * n;
    double m = dx_rowmax(x, n), mp = 0, lp = 0;
    for (int64_t r = r0; r < rows; r++, x += n, o += n) {
        const bool last = r + 1 == rows, first = r == r0;
        double mn = 0;
        const double s = dx_lsm_step(
            last ? NULL : x + n, &mn, x, m, o, first ? NULL : x - n,
            first ? NULL : o - n, mp, lp,
            soft ? (last ? NULL : o + n) : o, n, soft);
        mp = m;
        lp = soft ? 1.0 / s : log(s);
        m = mn;
    }
    dx_lsm_put_row(x - n, o - n, n, mp, lp, soft);
}

static void dx_lsm_fwd_rows(const void *px, void *po, int64_t rows,
                            int64_t n)
{
    dx_lsm_rows_soft(px, po, rows, n, 0);
}

static void dx_sm_rows(const void *px, void *po, int64_t rows, int64_t n)
{
    dx_lsm_rows_soft(px, po, rows, n, 1);
}

/* w columns (stride ld) down R rows: soft 0 log_softmax, 1 softmax */
static inline void dx_lsm_fwd_cols(const double *x, double *o, int64_t R,
                                   int64_t ld, int64_t w, int soft)
{
    const int64_t wv = w - w % RS_W;
    for (int64_t j = 0; j < wv; j += RS_W) {
        rd m = rs_loadd(x + j), s = rs_d1(0.0);
        for (int64_t r = 1; r < R; r++)
            m = rs_max(rs_loadd(x + r * ld + j), m);
        for (int64_t r = 0; r < R; r++) {
            rd e = dx_exp_nonpos(rs_sub(rs_loadd(x + r * ld + j), m));
            if (soft)
                rs_stored(o + r * ld + j, e);
            s = rs_add(s, e);
        }
        double st[RS_W];
        rs_stored(st, s);
        for (int u = 0; u < RS_W; u++)
            st[u] = soft ? 1.0 / st[u] : log(st[u]);
        const rd k = rs_loadd(st);
        for (int64_t r = 0; r < R; r++) {
            double *q = o + r * ld + j;
            rs_stored(q, soft ? rs_mul(rs_loadd(q), k)
                              : rs_sub(rs_sub(rs_loadd(x + r * ld + j), m),
                                       k));
        }
    }
    for (int64_t j = wv; j < w; j++) {
        double m = x[j], s = 0;
        for (int64_t r = 1; r < R; r++)
            m = x[r * ld + j] > m ? x[r * ld + j] : m;
        for (int64_t r = 0; r < R; r++) {
            double e = exp(x[r * ld + j] - m);
            if (soft)
                o[r * ld + j] = e;
            s += e;
        }
        const double k = soft ? 1.0 / s : log(s);
        for (int64_t r = 0; r < R; r++)
            o[r * ld + j] = soft ? o[r * ld + j] * k
                                 : (x[r * ld + j] - m) - k;
    }
}

#define DX_LSM_COLS(NAME, SOFT)                                           \
    static void NAME(const void *x, void *o, int64_t R, int64_t ld,       \
                     int64_t w)                                           \
    {                                                                     \
        dx_lsm_fwd_cols(x, o, R, ld, w, SOFT);                            \
    }
DX_LSM_COLS(dx_lsm_fwd_cols_0, 0)
DX_LSM_COLS(dx_sm_cols, 1)
#undef DX_LSM_COLS

#endif
