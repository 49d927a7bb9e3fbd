/* Short rows of log_softmax, softmax and log_softmax_backward f64 (n <=
 * DX_SHORT elements along a contiguous last axis), for inclusion by
 * f64_lsm_simd.h only (over f64_simd_impl.h's dx_exp_nonpos, dx_exp, dx_log).
 *
 * A row of 10 fills no vector: the row-at-a-time code (dx_rowmax,
 * dx_expsum, the write pass) spent its time in the scalar tails, the
 * horizontal folds and a libm log per row (1024x10: 99 us, 10 ns an
 * element, behind NumPy's 79).  Here RS_W rows at once, transposed into
 * columns in registers (lane l = row l, vector k = element k of every
 * row: masked row loads and an RS_W x RS_W transpose per RS_W columns;
 * a scalar copy through a tile on the stack was half of the 21 us at
 * 1024 x 10), so each step is one vector operation for RS_W rows and nothing
 * is folded across lanes: the max from element 0 in element order (the
 * portable rule: x > m ? x : m, a NaN wins only as element 0), the sum
 * of e^(x - m) in element order (the portable rows' order;
 * dx_exp_nonpos within 1 ulp an element, 2 at avx2), log s by dx_log
 * (within 3 ulp; the long rows take libm's), 1 / s for softmax; then
 * softmax's columns transposed back and stored, log_softmax's (x - m) -
 * log s written in memory order from x, m and log s fetched per lane by
 * a permute (dx_rowperm).  log_softmax_backward: s = sum g from 0 in
 * element order (the portable row's sum, bit for bit), dx = g - e^y s
 * by one fnma as dx_lsm_one, in memory order, s by a permute.  A NaN or +inf in a row makes its s NaN (+inf - +inf), a
 * row of -inf too, as the row-at-a-time code.  Each n is its own
 * instance (dx_short_rows' switch: n a constant, the loops unrolled, the
 * columns in registers, the shuffles of the columns past n dropped; with
 * n a variable the columns lived on the stack; with dx_exp_nonpos
 * and two groups, log_softmax 1024 x 10 f64 at avx512 15.7 -> 11.1 us,
 * tbench ab against main). */
#ifndef TB_BACKENDS_CPU_F64_LSM_SHORT_H
#define TB_BACKENDS_CPU_F64_LSM_SHORT_H

enum { DX_SHORT = 16 };

#define DX_AI static inline __attribute__((always_inline))

/* Lanes [0, r) of p (r <= RS_W; 0 in the others), and their store. */
#if RS_W == 8
DX_AI rd dx_ld_n(const double *p, int64_t r)
{
    return _mm512_maskz_loadu_pd((__mmask8)((1u << r) - 1), p);
}
DX_AI void dx_st_n(double *p, rd a, int64_t r)
{
    _mm512_mask_storeu_pd(p, (__mmask8)((1u << r) - 1), a);
}

/* The RS_W x RS_W transpose of v[0..RS_W) (v[l] lane k <-> v[k] lane
 * l): pairs, then 128-bit quarters by two-source permutes, then halves;
 * 24 shuffles. */
DX_AI void dx_tr(rd *v)
{
    const __m512i qa = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
    const __m512i qb = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    rd t[8], u[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_pd(v[i], v[i + 1]);
        t[i + 1] = _mm512_unpackhi_pd(v[i], v[i + 1]);
    }
#pragma GCC unroll 8
    for (int h = 0; h < 8; h += 4) /* rows h..h+3 */
#pragma GCC unroll 8
        for (int e = 0; e < 2; e++) {
            u[h + e] = _mm512_permutex2var_pd(t[h + e], qa, t[h + 2 + e]);
            u[h + 2 + e] = _mm512_permutex2var_pd(t[h + e], qb, t[h + 2 + e]);
        }
    /* u[c] (c < 4): columns c and c + 4 of rows 0-3, u[4 + c] of rows
     * 4-7 */
#pragma GCC unroll 8
    for (int c = 0; c < 4; c++) {
        v[c] = _mm512_shuffle_f64x2(u[c], u[4 + c], 0x44);
        v[c + 4] = _mm512_shuffle_f64x2(u[c], u[4 + c], 0xEE);
    }
}
#else
DX_AI __m256i dx_mask_n(int64_t r)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(r),
                              _mm256_set_epi64x(3, 2, 1, 0));
}
DX_AI rd dx_ld_n(const double *p, int64_t r)
{
    return _mm256_maskload_pd(p, dx_mask_n(r));
}
DX_AI void dx_st_n(double *p, rd a, int64_t r)
{
    _mm256_maskstore_pd(p, dx_mask_n(r), a);
}

/* The 4 x 4 transpose of v[0..4): pairs, then halves; 8 shuffles. */
DX_AI void dx_tr(rd *v)
{
    const rd t0 = _mm256_unpacklo_pd(v[0], v[1]);
    const rd t1 = _mm256_unpackhi_pd(v[0], v[1]);
    const rd t2 = _mm256_unpacklo_pd(v[2], v[3]);
    const rd t3 = _mm256_unpackhi_pd(v[2], v[3]);
    v[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    v[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    v[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    v[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
#endif

#if RS_W == 8
/* A block of two columns (w = 2, the last of n = 10) at AVX-512: each
 * row's pair one 128-bit load, rows 0, 2, 4, 6 in a and 1, 3, 5, 7 in b
 * (three inserts each), then one unpack per column: 8 shuffles, where
 * the transpose took 14 (out: 24, the transposed block's every row
 * holding a pair); the same values. */
DX_AI void dx_pair_in(const double *x, int64_t n, rd *c)
{
    /* (the inserts written out: their lane is an immediate, which a
     * loop gives only once unrolled, not at -O1) */
    rd a = _mm512_castpd128_pd512(_mm_loadu_pd(x));
    rd b = _mm512_castpd128_pd512(_mm_loadu_pd(x + n));
    a = _mm512_insertf64x2(a, _mm_loadu_pd(x + 2 * n), 1);
    b = _mm512_insertf64x2(b, _mm_loadu_pd(x + 3 * n), 1);
    a = _mm512_insertf64x2(a, _mm_loadu_pd(x + 4 * n), 2);
    b = _mm512_insertf64x2(b, _mm_loadu_pd(x + 5 * n), 2);
    a = _mm512_insertf64x2(a, _mm_loadu_pd(x + 6 * n), 3);
    b = _mm512_insertf64x2(b, _mm_loadu_pd(x + 7 * n), 3);
    c[0] = _mm512_unpacklo_pd(a, b);
    c[1] = _mm512_unpackhi_pd(a, b);
#pragma GCC unroll 8
    for (int l = 2; l < 8; l++)
        c[l] = rs_d1(0.0);
}

DX_AI void dx_pair_out(const rd *c, int64_t n, double *o)
{
    const rd a = _mm512_unpacklo_pd(c[0], c[1]); /* rows 0, 2, 4, 6 */
    const rd b = _mm512_unpackhi_pd(c[0], c[1]); /* rows 1, 3, 5, 7 */
    _mm_storeu_pd(o, _mm512_castpd512_pd128(a));
    _mm_storeu_pd(o + n, _mm512_castpd512_pd128(b));
    _mm_storeu_pd(o + 2 * n, _mm512_extractf64x2_pd(a, 1));
    _mm_storeu_pd(o + 3 * n, _mm512_extractf64x2_pd(b, 1));
    _mm_storeu_pd(o + 4 * n, _mm512_extractf64x2_pd(a, 2));
    _mm_storeu_pd(o + 5 * n, _mm512_extractf64x2_pd(b, 2));
    _mm_storeu_pd(o + 6 * n, _mm512_extractf64x2_pd(a, 3));
    _mm_storeu_pd(o + 7 * n, _mm512_extractf64x2_pd(b, 3));
}
#endif

/* One block of RS_W columns from k0 (w = min(n - k0, RS_W) of them) of
 * RS_W rows of n elements (row stride n) into c[k0 .. k0 + RS_W) (lane
 * l = row l's element k; lanes past n are 0): the rows loaded (masked
 * past n) and transposed in registers; dx_blk_out is its inverse. */
DX_AI void dx_blk_in(const double *x, int64_t n, int64_t k0, rd *c)
{
    const int64_t w = n - k0 < RS_W ? n - k0 : RS_W;
#if RS_W == 8
    if (w == 2) {
        dx_pair_in(x + k0, n, c + k0);
        return;
    }
#endif
#pragma GCC unroll 8
    for (int l = 0; l < RS_W; l++)
        c[k0 + l] = w == RS_W ? rs_loadd(x + l * n + k0)
                              : dx_ld_n(x + l * n + k0, w);
    dx_tr(c + k0);
}

DX_AI void dx_blk_out(rd *c, int64_t n, int64_t k0, double *o)
{
    const int64_t w = n - k0 < RS_W ? n - k0 : RS_W;
#if RS_W == 8
    if (w == 2) {
        dx_pair_out(c + k0, n, o + k0);
        return;
    }
#endif
    dx_tr(c + k0);
#pragma GCC unroll 8
    for (int l = 0; l < RS_W; l++) {
        if (w == RS_W)
            rs_stored(o + l * n + k0, c[k0 + l]);
        else
            dx_st_n(o + l * n + k0, c[k0 + l], w);
    }
}

/* t[row] per lane k, row = that of flat element v RS_W + k of RS_W
 * rows of n (n and v constants once inlined: the index is a constant):
 * the memory-order writes fetch their rows' statistics by one permute
 * instead of transposing the columns back. */
#if RS_W == 8
DX_AI rd dx_rowperm(rd t, int64_t v, int64_t n)
{
    const int64_t b = v * 8;
    return _mm512_permutexvar_pd(
        _mm512_set_epi64((b + 7) / n, (b + 6) / n, (b + 5) / n,
                         (b + 4) / n, (b + 3) / n, (b + 2) / n,
                         (b + 1) / n, b / n),
        t);
}
#else
DX_AI rd dx_rowperm(rd t, int64_t v, int64_t n)
{
    const int64_t b = v * 4;
    const int r0 = (int)(b / n), r1 = (int)((b + 1) / n),
              r2 = (int)((b + 2) / n), r3 = (int)((b + 3) / n);
    return _mm256_castps_pd(_mm256_permutevar8x32_ps(
        _mm256_castpd_ps(t),
        _mm256_set_epi32(2 * r3 + 1, 2 * r3, 2 * r2 + 1, 2 * r2,
                         2 * r1 + 1, 2 * r1, 2 * r0 + 1, 2 * r0)));
}
#endif

/* log_softmax (soft 0) or softmax (soft 1) of G RS_W rows of n <=
 * DX_SHORT (n and G constants where it is inlined), G <= DX_G groups of
 * RS_W rows phase by phase: the groups' chains (the max's, the sum's,
 * the log's) overlap where one group's were longer than the core's
 * window could hide */
enum { DX_G = 2 };
DX_AI void dx_short_fwd(const double *x, double *o, int64_t n, int soft,
                        int G)
{
    rd c[DX_G][DX_SHORT], m[DX_G], s[DX_G], l[DX_G];
#pragma GCC unroll 2
    for (int g = 0; g < G; g++)
#pragma GCC unroll 4
        for (int64_t k0 = 0; k0 < n; k0 += RS_W)
            dx_blk_in(x + g * RS_W * n, n, k0, c[g]);
#pragma GCC unroll 2
    for (int g = 0; g < G; g++) {
        m[g] = c[g][0];
        s[g] = rs_d1(0.0);
    }
#pragma GCC unroll 16
    for (int64_t k = 1; k < n; k++)
#pragma GCC unroll 2
        for (int g = 0; g < G; g++)
            m[g] = rs_max(c[g][k], m[g]);
#pragma GCC unroll 16
    for (int64_t k = 0; k < n; k++)
#pragma GCC unroll 2
        for (int g = 0; g < G; g++) {
            rd e = dx_exp_nonpos(rs_sub(c[g][k], m[g]));
            if (soft)
                c[g][k] = e;
            s[g] = rs_add(s[g], e);
        }
#pragma GCC unroll 2
    for (int g = 0; g < G; g++)
        l[g] = soft ? rs_div(rs_d1(1.0), s[g]) : dx_log(s[g]);
    if (!soft) {
        /* (x - m) - log s in memory order, x read again (the same
         * values as the columns': 18 fewer shuffles a group at n = 10) */
#pragma GCC unroll 2
        for (int g = 0; g < G; g++)
#pragma GCC unroll 16
            for (int64_t v = 0; v < n; v++) {
                const int64_t at = g * RS_W * n + v * RS_W;
                rs_stored(o + at,
                          rs_sub(rs_sub(rs_loadd(x + at),
                                        dx_rowperm(m[g], v, n)),
                                 dx_rowperm(l[g], v, n)));
            }
        return;
    }
#pragma GCC unroll 16
    for (int64_t k = 0; k < n; k++)
#pragma GCC unroll 2
        for (int g = 0; g < G; g++)
            c[g][k] = soft ? rs_mul(c[g][k], l[g])
                           : rs_sub(rs_sub(c[g][k], m[g]), l[g]);
#pragma GCC unroll 2
    for (int g = 0; g < G; g++)
#pragma GCC unroll 4
        for (int64_t k0 = 0; k0 < n; k0 += RS_W)
            dx_blk_out(c[g], n, k0, o + g * RS_W * n);
}

/* log_softmax_backward of RS_W rows of n <= DX_SHORT (a constant where
 * it is inlined): g's columns for the sums, then dx = g - e^y s in
 * memory order, s by a permute (y is never transposed; 1024 x 10 f64
 * at avx512 11.2 -> 7.2 us, tbench ab) */
DX_AI void dx_short_bwd(const double *g, const double *y, double *dx,
                        int64_t n)
{
    rd cg[DX_SHORT];
#pragma GCC unroll 4
    for (int64_t k0 = 0; k0 < n; k0 += RS_W)
        dx_blk_in(g, n, k0, cg);
    rd s = rs_d1(0.0);
#pragma GCC unroll 16
    for (int64_t k = 0; k < n; k++)
        s = rs_add(s, cg[k]);
#pragma GCC unroll 16
    for (int64_t v = 0; v < n; v++)
        rs_stored(dx + v * RS_W,
                  rs_fma(rs_sub(rs_d1(0.0), dx_exp(rs_loadd(y + v * RS_W))),
                         dx_rowperm(s, v, n), rs_loadd(g + v * RS_W)));
}

/* The first rows - rows % RS_W of `rows` rows of n (<= DX_SHORT): soft
 * 0 log_softmax, 1 softmax, 2 log_softmax_backward (x = g, z = y, o =
 * dx); the number done.  N a constant (the switch's cases). */
DX_AI int64_t dx_sr_n(const double *x, const double *z, double *o,
                      int64_t rows, int64_t n, int soft)
{
    int64_t r = 0;
    if (soft != 2)
        for (; r + DX_G * RS_W <= rows; r += DX_G * RS_W)
            dx_short_fwd(x + r * n, o + r * n, n, soft, DX_G);
    for (; r + RS_W <= rows; r += RS_W) {
        if (soft == 2)
            dx_short_bwd(x + r * n, z + r * n, o + r * n, n);
        else
            dx_short_fwd(x + r * n, o + r * n, n, soft, 1);
    }
    return r;
}

#define DX_SHORT_CASES(X)                                                 \
    X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) \
        X(14) X(15) X(16)

#define DX_SHORT_FN(NAME, SOFT)                                           \
    static int64_t NAME(const double *x, const double *z, double *o,      \
                        int64_t rows, int64_t n)                          \
    {                                                                     \
        switch (n) {                                                      \
            DX_SHORT_CASES(DX_SHORT_CASE_##SOFT)                          \
        default:                                                          \
            return 0;                                                     \
        }                                                                 \
    }
#define DX_SHORT_CASE_0(N)                                                \
    case N:                                                               \
        return dx_sr_n(x, z, o, rows, N, 0);
#define DX_SHORT_CASE_1(N)                                                \
    case N:                                                               \
        return dx_sr_n(x, z, o, rows, N, 1);
#define DX_SHORT_CASE_2(N)                                                \
    case N:                                                               \
        return dx_sr_n(x, z, o, rows, N, 2);
DX_SHORT_FN(dx_short_lsm, 0)
DX_SHORT_FN(dx_short_sm, 1)
DX_SHORT_FN(dx_short_lsm_bwd, 2)
#undef DX_SHORT_FN
#undef DX_SHORT_CASE_0
#undef DX_SHORT_CASE_1
#undef DX_SHORT_CASE_2
#undef DX_SHORT_CASES

/* The first rows - rows % RS_W of `rows` rows of n (<= DX_SHORT) by
 * dx_short_fwd; the number done. */
static inline int64_t dx_short_rows(const double *x, double *o,
                                    int64_t rows, int64_t n, int soft)
{
    return soft ? dx_short_sm(x, NULL, o, rows, n)
                : dx_short_lsm(x, NULL, o, rows, n);
}

#endif
