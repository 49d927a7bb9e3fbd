/*
 * The SIMD inner loops of the cpu backend, written once over the vector
 * helpers of vmath_simd.h (f32: v_*) and the f64 helpers below (d_*),
 * for inclusion by kernels_avx2.c and kernels_avx512.c only (each
 * compiled with only its level's -m flags).  Everything is static.
 *
 * Loops are unrolled by four vectors where a loop is throughput-bound
 * (element-wise ops, sums), end with one masked vector for the tail, and
 * never touch a byte past the end of an operand.  Unaligned loads and
 * stores throughout: operands need only their element alignment.
 *
 * KS_DEFINE_KERNELS(SFX) defines the functions, KS_INSTALL(k, SFX, ISA)
 * puts them in a tb_cpu_kernels table.
 */
#ifndef TB_BACKENDS_CPU_KERNELS_SIMD_H
#define TB_BACKENDS_CPU_KERNELS_SIMD_H

#include <math.h>
#include <stdint.h>

#include "kernels.h"
#include "lsm_simd.h"
#include "pool64_simd.h"
#include "vmath_simd.h"
#include "vtranspose_simd.h"

#if VS_LANES == 16
/* ---- AVX-512 f64 helpers and f32 <-> f64 ------------------------------ */
#define VD_LANES 8
typedef __m512d vd;
static inline vd d_set1(double a) { return _mm512_set1_pd(a); }
static inline vd d_load(const double *p) { return _mm512_loadu_pd(p); }
static inline void d_store(double *p, vd a) { _mm512_storeu_pd(p, a); }
static inline void d_stream(double *p, vd a) { _mm512_stream_pd(p, a); }
static inline vd d_add(vd a, vd b) { return _mm512_add_pd(a, b); }
static inline vd d_sub(vd a, vd b) { return _mm512_sub_pd(a, b); }
static inline vd d_mul(vd a, vd b) { return _mm512_mul_pd(a, b); }
static inline vd d_div(vd a, vd b) { return _mm512_div_pd(a, b); }
static inline __mmask8 d_first(int64_t r)
{
    return (__mmask8)(r >= 8 ? 0xff : (1u << r) - 1);
}
static inline vd d_load_n(const double *p, int64_t r)
{
    return _mm512_maskz_loadu_pd(d_first(r), p);
}
static inline void d_store_n(double *p, vd a, int64_t r)
{
    _mm512_mask_storeu_pd(p, d_first(r), a);
}
static inline double d_hsum(vd a) { return _mm512_reduce_add_pd(a); }
/* x > 0 or NaN: x; otherwise +0 (relu). */
static inline vd d_relu(vd x)
{
    return _mm512_maskz_mov_pd(
        _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_NLE_UQ), x);
}
static inline vf v_relu(vf x)
{
    return _mm512_maskz_mov_ps(
        _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLE_UQ), x);
}
/* Lanes [0, VS_LANES/2) and [VS_LANES/2, VS_LANES) of a, in double. */
static inline vd v_lo_pd(vf a)
{
    return _mm512_cvtps_pd(_mm512_castps512_ps256(a));
}
static inline vd v_hi_pd(vf a)
{
    return _mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1));
}
typedef __m512i vi;
static inline vi vi_load(const int32_t *p) { return _mm512_loadu_si512(p); }
/* base[idx[i]] per lane (4-byte elements). */
static inline vf v_gather(const float *base, vi idx)
{
    return _mm512_i32gather_ps(idx, base, 4);
}
/* table[idx[i]] per lane. */
static inline vf v_permute(vi idx, vf table)
{
    return _mm512_permutexvar_ps(idx, table);
}
static inline vi vi_set1(int32_t a) { return _mm512_set1_epi32(a); }
static inline vi vi_add(vi a, vi b) { return _mm512_add_epi32(a, b); }
/* lane * s per lane. */
static inline vi vi_ramp(int32_t s)
{
    return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8,
                                                9, 10, 11, 12, 13, 14, 15),
                              _mm512_set1_epi32(s));
}
/* Lanes with 0 <= idx < lim (an unsigned compare puts negatives above). */
static inline vm vi_below(vi idx, int32_t lim)
{
    return _mm512_cmp_epu32_mask(idx, _mm512_set1_epi32(lim), _MM_CMPINT_LT);
}
/* base[idx[i]] in the lanes of m, fill[i] in the others (which read
 * nothing). */
static inline vf v_gather_m(const float *base, vi idx, vm m, vf fill)
{
    return _mm512_mask_i32gather_ps(fill, m, idx, base, 4);
}
/* Even and odd lanes of the 2 L-lane sequence a, b. */
static inline vf v_even(vf a, vf b)
{
    return _mm512_permutex2var_ps(
        a,
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                          28, 30),
        b);
}
static inline vf v_odd(vf a, vf b)
{
    return _mm512_permutex2var_ps(
        a,
        _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27,
                          29, 31),
        b);
}

#else
/* ---- AVX2 f64 helpers and f32 <-> f64 --------------------------------- */
#define VD_LANES 4
typedef __m256d vd;
static inline vd d_set1(double a) { return _mm256_set1_pd(a); }
static inline vd d_load(const double *p) { return _mm256_loadu_pd(p); }
static inline void d_store(double *p, vd a) { _mm256_storeu_pd(p, a); }
static inline void d_stream(double *p, vd a) { _mm256_stream_pd(p, a); }
static inline vd d_add(vd a, vd b) { return _mm256_add_pd(a, b); }
static inline vd d_sub(vd a, vd b) { return _mm256_sub_pd(a, b); }
static inline vd d_mul(vd a, vd b) { return _mm256_mul_pd(a, b); }
static inline vd d_div(vd a, vd b) { return _mm256_div_pd(a, b); }
static inline __m256i d_first_i(int64_t r)
{
    const __m256i idx = _mm256_setr_epi64x(0, 1, 2, 3);
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(r > 4 ? 4 : r), idx);
}
static inline vd d_load_n(const double *p, int64_t r)
{
    return _mm256_maskload_pd(p, d_first_i(r));
}
static inline void d_store_n(double *p, vd a, int64_t r)
{
    _mm256_maskstore_pd(p, d_first_i(r), a);
}
static inline double d_hsum(vd a)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(a),
                           _mm256_extractf128_pd(a, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}
static inline vd d_relu(vd x)
{
    return _mm256_and_pd(_mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_NLE_UQ),
                         x);
}
static inline vf v_relu(vf x)
{
    return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NLE_UQ),
                         x);
}
static inline vd v_lo_pd(vf a)
{
    return _mm256_cvtps_pd(_mm256_castps256_ps128(a));
}
static inline vd v_hi_pd(vf a)
{
    return _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
}
typedef __m256i vi;
static inline vi vi_load(const int32_t *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}
static inline vf v_gather(const float *base, vi idx)
{
    return _mm256_i32gather_ps(base, idx, 4);
}
static inline vf v_permute(vi idx, vf table)
{
    return _mm256_permutevar8x32_ps(table, idx);
}
static inline vi vi_set1(int32_t a) { return _mm256_set1_epi32(a); }
static inline vi vi_add(vi a, vi b) { return _mm256_add_epi32(a, b); }
static inline vi vi_ramp(int32_t s)
{
    return _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                              _mm256_set1_epi32(s));
}
static inline vm vi_below(vi idx, int32_t lim)
{
    __m256i ok = _mm256_and_si256(
        _mm256_cmpgt_epi32(idx, _mm256_set1_epi32(-1)),
        _mm256_cmpgt_epi32(_mm256_set1_epi32(lim), idx));
    return _mm256_castsi256_ps(ok);
}
static inline vf v_gather_m(const float *base, vi idx, vm m, vf fill)
{
    return _mm256_mask_i32gather_ps(fill, base, idx, m, 4);
}
/* shuffle picks lanes 0,2 (0x88) or 1,3 (0xdd) of each 128-bit half of a
 * then b; the 64-bit permute puts a's pairs before b's. */
static inline vf v_even(vf a, vf b)
{
    __m256 t = _mm256_shuffle_ps(a, b, 0x88);
    return _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(t), 0xd8));
}
static inline vf v_odd(vf a, vf b)
{
    __m256 t = _mm256_shuffle_ps(a, b, 0xdd);
    return _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(t), 0xd8));
}
#endif

/* relu(a + b) for KS_BINARY: one rounded add, then relu's compare and
 * mask (NaN kept, -0 and negatives give +0), as add then relu would. */
static inline vf v_add_relu(vf a, vf b) { return v_relu(v_add(a, b)); }
static inline vd d_add_relu(vd a, vd b) { return d_relu(d_add(a, b)); }

/* ---- element-wise binary ops ------------------------------------------ */

/* vv, sv and vs forms of o = a OP b for element type T with helper
 * prefix P (v_ for float, d_ for double) and L lanes. */
#define KS_BINARY(NAME, T, V, P, L, OP)                                   \
    static void NAME##_vv(const void *pa, const void *pb, void *po,       \
                          int64_t n)                                      \
    {                                                                     \
        const T *a = pa, *b = pb;                                         \
        T *o = po;                                                        \
        int64_t i = 0;                                                    \
        for (; i + 4 * L <= n; i += 4 * L) {                              \
            V x0 = P##load(a + i), x1 = P##load(a + i + L);               \
            V x2 = P##load(a + i + 2 * L), x3 = P##load(a + i + 3 * L);   \
            x0 = P##OP(x0, P##load(b + i));                               \
            x1 = P##OP(x1, P##load(b + i + L));                           \
            x2 = P##OP(x2, P##load(b + i + 2 * L));                       \
            x3 = P##OP(x3, P##load(b + i + 3 * L));                       \
            P##store(o + i, x0);                                          \
            P##store(o + i + L, x1);                                      \
            P##store(o + i + 2 * L, x2);                                  \
            P##store(o + i + 3 * L, x3);                                  \
        }                                                                 \
        for (; i + L <= n; i += L)                                        \
            P##store(o + i, P##OP(P##load(a + i), P##load(b + i)));       \
        if (i < n)                                                        \
            P##store_n(o + i,                                             \
                       P##OP(P##load_n(a + i, n - i),                     \
                             P##load_n(b + i, n - i)),                    \
                       n - i);                                            \
    }                                                                     \
    /* One operand broadcast: SV = 1 for a[0] OP b[i], 0 for a[i] OP b[0] \
     */                                                                   \
    static inline void NAME##_bc(const T *v, V s, T *o, int64_t n,        \
                                 int sv)                                  \
    {                                                                     \
        int64_t i = 0;                                                    \
        for (; i + 4 * L <= n; i += 4 * L) {                              \
            V x0 = P##load(v + i), x1 = P##load(v + i + L);               \
            V x2 = P##load(v + i + 2 * L), x3 = P##load(v + i + 3 * L);   \
            x0 = sv ? P##OP(s, x0) : P##OP(x0, s);                        \
            x1 = sv ? P##OP(s, x1) : P##OP(x1, s);                        \
            x2 = sv ? P##OP(s, x2) : P##OP(x2, s);                        \
            x3 = sv ? P##OP(s, x3) : P##OP(x3, s);                        \
            P##store(o + i, x0);                                          \
            P##store(o + i + L, x1);                                      \
            P##store(o + i + 2 * L, x2);                                  \
            P##store(o + i + 3 * L, x3);                                  \
        }                                                                 \
        for (; i + L <= n; i += L) {                                      \
            V x = P##load(v + i);                                         \
            P##store(o + i, sv ? P##OP(s, x) : P##OP(x, s));              \
        }                                                                 \
        if (i < n) {                                                      \
            V x = P##load_n(v + i, n - i);                                \
            P##store_n(o + i, sv ? P##OP(s, x) : P##OP(x, s), n - i);     \
        }                                                                 \
    }                                                                     \
    /* vv with streaming stores for o's whole lines (kernels.h): head   \
     * and tail through vv, the body 64-byte aligned, then a fence. */   \
    static void NAME##_vv_nt(const void *pa, const void *pb, void *po,    \
                             int64_t n)                                   \
    {                                                                     \
        const T *a = pa, *b = pb;                                         \
        T *o = po;                                                        \
        int64_t i = vs_head64(o, n, (int64_t)sizeof(T));                  \
        NAME##_vv(a, b, o, i);                                            \
        for (; i + 4 * L <= n; i += 4 * L) {                              \
            V x0 = P##load(a + i), x1 = P##load(a + i + L);               \
            V x2 = P##load(a + i + 2 * L), x3 = P##load(a + i + 3 * L);   \
            P##stream(o + i, P##OP(x0, P##load(b + i)));                  \
            P##stream(o + i + L, P##OP(x1, P##load(b + i + L)));          \
            P##stream(o + i + 2 * L, P##OP(x2, P##load(b + i + 2 * L)));  \
            P##stream(o + i + 3 * L, P##OP(x3, P##load(b + i + 3 * L)));  \
        }                                                                 \
        NAME##_vv(a + i, b + i, o + i, n - i);                            \
        _mm_sfence();                                                     \
    }                                                                     \
    static void NAME##_sv(const void *a, const void *b, void *o,          \
                          int64_t n)                                      \
    {                                                                     \
        NAME##_bc(b, P##set1(*(const T *)a), o, n, 1);                    \
    }                                                                     \
    static void NAME##_vs(const void *a, const void *b, void *o,          \
                          int64_t n)                                      \
    {                                                                     \
        NAME##_bc(a, P##set1(*(const T *)b), o, n, 0);                    \
    }                                                                     \
    /* kernels.h's row broadcast: NAME##_bc inlined per row */            \
    static void NAME##_rows(const void *pa, const void *pb, void *po,     \
                            int64_t rows, int64_t n, int sv)              \
    {                                                                     \
        const T *a = pa, *b = pb;                                         \
        T *o = po;                                                        \
        const T *v = sv ? b : a, *s = sv ? a : b;                         \
        for (int64_t r = 0; r < rows; r++)                                \
            NAME##_bc(v + r * n, P##set1(s[r]), o + r * n, n, sv);        \
    }

/* ---- relu --------------------------------------------------------------- */

#define KS_RELU(NAME, T, V, P, L)                                         \
    static void NAME(const void *px, void *po, int64_t n)                 \
    {                                                                     \
        const T *x = px;                                                  \
        T *o = po;                                                        \
        int64_t i = 0;                                                    \
        for (; i + 4 * L <= n; i += 4 * L) {                              \
            V x0 = P##load(x + i), x1 = P##load(x + i + L);               \
            V x2 = P##load(x + i + 2 * L), x3 = P##load(x + i + 3 * L);   \
            P##store(o + i, P##relu(x0));                                 \
            P##store(o + i + L, P##relu(x1));                             \
            P##store(o + i + 2 * L, P##relu(x2));                         \
            P##store(o + i + 3 * L, P##relu(x3));                         \
        }                                                                 \
        for (; i + L <= n; i += L)                                        \
            P##store(o + i, P##relu(P##load(x + i)));                     \
        if (i < n)                                                        \
            P##store_n(o + i, P##relu(P##load_n(x + i, n - i)), n - i);   \
    }                                                                     \
    static void NAME##_nt(const void *px, void *po, int64_t n)            \
    {                                                                     \
        const T *x = px;                                                  \
        T *o = po;                                                        \
        int64_t i = vs_head64(o, n, (int64_t)sizeof(T));                  \
        NAME(x, o, i);                                                    \
        for (; i + 4 * L <= n; i += 4 * L) {                              \
            V x0 = P##load(x + i), x1 = P##load(x + i + L);               \
            V x2 = P##load(x + i + 2 * L), x3 = P##load(x + i + 3 * L);   \
            P##stream(o + i, P##relu(x0));                                \
            P##stream(o + i + L, P##relu(x1));                            \
            P##stream(o + i + 2 * L, P##relu(x2));                        \
            P##stream(o + i + 3 * L, P##relu(x3));                        \
        }                                                                 \
        NAME(x + i, o + i, n - i);                                        \
        _mm_sfence();                                                     \
    }

/* ---- sums --------------------------------------------------------------- */

/*
 * f32 sum: per TB_CPU_SUM_BLOCK values, four f32 vector accumulators
 * (at most 1024 / (4 * 8) = 32 terms per lane, plus the two adds that
 * combine them), then the block total is widened to double and added to
 * a double vector: the f32 error stays local to a block, the long sum is
 * carried in double (see kernels.h).
 */
static inline vf ks_sum_f32_block(const float *p, int64_t m)
{
    return ks_fold4(p, m, 0.0f, 0);
}

static double ks_sum_f32_row(const void *px, int64_t n)
{
    const float *x = px;
    vd acc = d_set1(0.0);
    for (int64_t i = 0; i < n; i += TB_CPU_SUM_BLOCK) {
        int64_t m = n - i < TB_CPU_SUM_BLOCK ? n - i : TB_CPU_SUM_BLOCK;
        vf s = ks_sum_f32_block(x + i, m);
        acc = d_add(acc, d_add(v_lo_pd(s), v_hi_pd(s)));
    }
    return d_hsum(acc);
}

/* out[r] = the sum of row r of x's rows x n (n <= VS_LANES: kernels.h's
 * short rows): VS_LANES rows at once, masked row loads transposed in
 * registers (lane r = row r), each column widened to double and added
 * in order (a double sum of at most VS_LANES floats); the rows past the
 * last whole block one by one (ks_sum_f32_row).  A row a call of
 * ks_sum_f32_row cost 5.2 ns a row of 10 (sum of 1024x10 over axis -1,
 * log_softmax_unfused's fourth step); the columns by ks_load_cols, one
 * instance per n (1024x10 2.07 -> 1.83 us). */
static inline __attribute__((always_inline)) void
ks_sum_f32_short_n(const void *px, int64_t rows, int64_t n, double *out)
{
    const float *x = px;
    int64_t r0 = 0;
    for (; r0 + VS_LANES <= rows; r0 += VS_LANES) {
        vf col[VS_LANES];
        ks_load_cols(x + r0 * n, n, col);
        vd lo = d_set1(0.0), hi = lo;
#pragma GCC unroll 16
        for (int64_t c = 0; c < n; c++) {
            lo = d_add(lo, v_lo_pd(col[c]));
            hi = d_add(hi, v_hi_pd(col[c]));
        }
        d_store(out + r0, lo);
        d_store(out + r0 + VS_LANES / 2, hi);
    }
    for (; r0 < rows; r0++)
        out[r0] = ks_sum_f32_row(x + r0 * n, n);
}

/* ks_sum_f32_short_n, one instance per n (the columns in registers; by
 * ks_load_cols, the same columns as the row loads and v_transpose) */
static void ks_sum_f32_short(const void *px, int64_t rows, int64_t n,
                             double *out)
{
    switch (n) {
#define KS_SUM_CASE(N)                                                    \
    case N:                                                               \
        ks_sum_f32_short_n(px, rows, N, out);                             \
        return;
        KS_SHORT_NS(KS_SUM_CASE)
#undef KS_SUM_CASE
    default:
        ks_sum_f32_short_n(px, rows, n, out);
    }
}

/* f64 sum: four double vector accumulators over the whole row. */
static double ks_sum_f64_row(const void *px, int64_t n)
{
    const double *x = px;
    const int64_t L = VD_LANES;
    vd s0 = d_set1(0.0), s1 = s0, s2 = s0, s3 = s0;
    int64_t j = 0;
    for (; j + 4 * L <= n; j += 4 * L) {
        s0 = d_add(s0, d_load(x + j));
        s1 = d_add(s1, d_load(x + j + L));
        s2 = d_add(s2, d_load(x + j + 2 * L));
        s3 = d_add(s3, d_load(x + j + 3 * L));
    }
    for (; j + L <= n; j += L)
        s0 = d_add(s0, d_load(x + j));
    if (j < n)
        s1 = d_add(s1, d_load_n(x + j, n - j));
    return d_hsum(d_add(d_add(s0, s1), d_add(s2, s3)));
}

/*
 * Column sums: acc[j] += sum of R rows, four vectors of columns at a
 * time (independent chains), TB_CPU_SUM_COL_ROWS rows accumulated in f32
 * per column, then added to the double acc.  A chunk narrower than four
 * vectors uses masked loads.
 */
static void ks_sum_f32_strips(const void *px, int64_t R, int64_t ld,
                              int64_t w, double *acc)
{
    const float *x = px;
    const int64_t L = VS_LANES, CW = 4 * VS_LANES;
    float tmp[4 * VS_LANES];
    for (int64_t j = 0; j < w; j += CW) {
        const int64_t cw = w - j < CW ? w - j : CW;
        for (int64_t r0 = 0; r0 < R; r0 += TB_CPU_SUM_COL_ROWS) {
            const int64_t re = R - r0 < TB_CPU_SUM_COL_ROWS
                                   ? R
                                   : r0 + TB_CPU_SUM_COL_ROWS;
            vf s0 = v_set1(0.0f), s1 = s0, s2 = s0, s3 = s0;
            if (cw == CW) {
                for (int64_t r = r0; r < re; r++) {
                    const float *p = x + r * ld + j;
                    s0 = v_add(s0, v_load(p));
                    s1 = v_add(s1, v_load(p + L));
                    s2 = v_add(s2, v_load(p + 2 * L));
                    s3 = v_add(s3, v_load(p + 3 * L));
                }
            } else {
                for (int64_t r = r0; r < re; r++) {
                    const float *p = x + r * ld + j;
                    s0 = v_add(s0, v_load_n(p, cw));
                    if (cw > L)
                        s1 = v_add(s1, v_load_n(p + L, cw - L));
                    if (cw > 2 * L)
                        s2 = v_add(s2, v_load_n(p + 2 * L, cw - 2 * L));
                    if (cw > 3 * L)
                        s3 = v_add(s3, v_load_n(p + 3 * L, cw - 3 * L));
                }
            }
            v_store(tmp, s0);
            v_store(tmp + L, s1);
            v_store(tmp + 2 * L, s2);
            v_store(tmp + 3 * L, s3);
            for (int64_t q = 0; q < cw; q++)
                acc[j + q] += tmp[q];
        }
    }
}

/*
 * Column sums: acc[j] += sum of R rows, TB_CPU_SUM_COL_ROWS rows
 * accumulated in f32 per column (from 0, in row order), then added to
 * the double acc.  The f32 partial sums of all w columns sit in an array
 * in L1 and the rows are read eight at a time from start to end (a
 * sequential read of each row's w values; going down 64-column strips
 * of every row, ks_sum_f32_strips, touches R pages per pass, which the
 * TLB cannot hold for thousands of rows: 4096x4096 axis 0 took 3x the
 * time of this form).  The end of the row is masked.  The same values
 * as ks_sum_f32_strips bit for bit.
 */
static void ks_sum_f32_rows(const void *px, int64_t R, int64_t ld,
                            int64_t w, double *acc)
{
    const float *x = px;
    const int64_t L = VS_LANES, wv = w - w % VS_LANES, rem = w - wv;
    float part[TB_CPU_SUM_COL_TILE];
    /* rows 4 KiB apart and part within 4 KiB: a column's 8 rows and its
     * part line fall in one set of the 8-way L1 (9 lines), so 4 rows a
     * pass (1024x1024 over axis 0: 55.2 -> 49.0 us, 256x1024 13.6 ->
     * 11.1, 2048x1024 113 -> 99, tbench ab, 12 blocks, load ~7; four
     * rows a pass at 1024x512, rows 2 KiB apart, and 512x2048, part 8
     * KiB, +1% and +4%, inconclusive: eight there) */
    const bool four = (ld * (int64_t)sizeof(float)) % 4096 == 0 &&
                      w * (int64_t)sizeof(float) <= 4096;
    for (int64_t r0 = 0; r0 < R; r0 += TB_CPU_SUM_COL_ROWS) {
        const int64_t re =
            R - r0 < TB_CPU_SUM_COL_ROWS ? R : r0 + TB_CPU_SUM_COL_ROWS;
        for (int64_t j = 0; j < w; j += L)
            v_store_n(part + j, v_set1(0.0f), w - j);
        int64_t r = r0;
        /* eight rows per pass over part (half the part loads and stores
         * of four: 2-4% at 4096x4096 and 2048x8192, tbench ab), then
         * four, then one */
        for (; !four && r + 8 <= re; r += 8) {
            const float *p0 = x + r * ld;
            for (int64_t j = 0; j < wv; j += L) {
                const float *p = p0 + j;
                vf t = v_add(v_add(v_load(part + j), v_load(p)),
                             v_load(p + ld));
                t = v_add(v_add(t, v_load(p + 2 * ld)), v_load(p + 3 * ld));
                t = v_add(v_add(t, v_load(p + 4 * ld)), v_load(p + 5 * ld));
                t = v_add(v_add(t, v_load(p + 6 * ld)), v_load(p + 7 * ld));
                v_store(part + j, t);
            }
            if (rem) {
                vf t = v_load_n(part + wv, rem);
                for (int64_t k = 0; k < 8; k++)
                    t = v_add(t, v_load_n(p0 + k * ld + wv, rem));
                v_store_n(part + wv, t, rem);
            }
        }
        for (; r + 4 <= re; r += 4) {
            const float *p0 = x + r * ld, *p1 = p0 + ld, *p2 = p1 + ld;
            const float *p3 = p2 + ld;
            for (int64_t j = 0; j < wv; j += L) {
                vf t = v_add(v_add(v_load(part + j), v_load(p0 + j)),
                             v_load(p1 + j));
                v_store(part + j, v_add(v_add(t, v_load(p2 + j)),
                                        v_load(p3 + j)));
            }
            if (rem) {
                vf t = v_add(v_add(v_load_n(part + wv, rem),
                                   v_load_n(p0 + wv, rem)),
                             v_load_n(p1 + wv, rem));
                v_store_n(part + wv,
                          v_add(v_add(t, v_load_n(p2 + wv, rem)),
                                v_load_n(p3 + wv, rem)),
                          rem);
            }
        }
        for (; r < re; r++) {
            const float *p0 = x + r * ld;
            for (int64_t j = 0; j < w; j += L)
                v_store_n(part + j,
                          v_add(v_load_n(part + j, w - j),
                                v_load_n(p0 + j, w - j)),
                          w - j);
        }
        for (int64_t q = 0; q < w; q++)
            acc[q] += part[q];
    }
}

/* Columns up to which the column sum goes down strips (one strip of
 * four vectors: a single pass over the rows, no stores in its loop),
 * beyond that row by row (ks_sum_f32_rows), with the same bits.  Strips
 * of a wide matrix walk all R rows once per strip: at 1024x1024 on the
 * Zen 4 VM that took 84-88 us against the row order's 53-57 (1025 rows,
 * the same run, one thread); the strips had been about 5% faster there
 * from L3 on the Xeon of docs/perf-data/op-limits. */
#define KS_SUM_STRIP_COLS (4 * VS_LANES)

static void ks_sum_f32_cols(const void *px, int64_t R, int64_t ld,
                            int64_t w, double *acc)
{
    if (w <= KS_SUM_STRIP_COLS)
        ks_sum_f32_strips(px, R, ld, w, acc);
    else
        ks_sum_f32_rows(px, R, ld, w, acc);
}

/*
 * f64 column sums, the C row's order bit for bit (kernels_c.c
 * sum_f64_cols): per block of TB_CPU_SUM_COL_ROWS rows, part = the
 * block's first row, then each next row added in row order, then acc
 * += part.  The rows are read whole, eight at a time, from start to end
 * (part, at most TB_CPU_SUM_COL_TILE doubles, stays in L1 / L2), not
 * down 16-column strips: 1024x1024 over axis 0 went down 64 strips
 * touching 1024 pages each, 3.8x the time of one read of the matrix.
 * The end of a row is masked.
 */
static inline vd ks_sum_f64_8(vd t, const double *p, int64_t ld, int64_t k0,
                              int64_t k1)
{
    for (int64_t k = k0; k < k1; k++)
        t = d_add(t, d_load(p + k * ld));
    return t;
}

static void ks_sum_f64_cols(const void *px, int64_t R, int64_t ld,
                            int64_t w, double *acc)
{
    const double *x = px;
    const int64_t L = VD_LANES, wv = w - w % VD_LANES, rem = w - wv;
    double part[TB_CPU_SUM_COL_TILE];
    /* rows a pass: 4 where rows lie a multiple of 4 KiB apart and part
     * within 4 KiB (ks_sum_f32_rows's reason: the 8 rows' lines of a
     * column in one set of the 8-way L1 beside part's; 2048x512 over
     * axis 0 108.8 -> 97.3 us; with part up to 8 KiB 1024x1024 +4%,
     * inconclusive: tbench ab, 12 blocks, load ~8) */
    const int64_t step =
        (ld * (int64_t)sizeof(double)) % 4096 == 0 &&
                w * (int64_t)sizeof(double) <= 4096
            ? 4
            : 8;
    for (int64_t r0 = 0; r0 < R; r0 += TB_CPU_SUM_COL_ROWS) {
        const int64_t re =
            R - r0 < TB_CPU_SUM_COL_ROWS ? R : r0 + TB_CPU_SUM_COL_ROWS;
        for (int64_t r = r0; r < re; r += step) {
            const int64_t n = re - r < step ? re - r : step;
            const double *p0 = x + r * ld;
            if (r == r0) { /* part starts at the block's first row */
                for (int64_t j = 0; j < wv; j += L)
                    d_store(part + j, ks_sum_f64_8(d_load(p0 + j), p0 + j,
                                                   ld, 1, n));
                if (rem) {
                    vd t = d_load_n(p0 + wv, rem);
                    for (int64_t k = 1; k < n; k++)
                        t = d_add(t, d_load_n(p0 + k * ld + wv, rem));
                    d_store_n(part + wv, t, rem);
                }
            } else if (n == step) {
                for (int64_t j = 0; j < wv; j += L)
                    d_store(part + j, ks_sum_f64_8(d_load(part + j), p0 + j,
                                                   ld, 0, step));
                if (rem) {
                    vd t = d_load_n(part + wv, rem);
                    for (int64_t k = 0; k < step; k++)
                        t = d_add(t, d_load_n(p0 + k * ld + wv, rem));
                    d_store_n(part + wv, t, rem);
                }
            } else {
                for (int64_t j = 0; j < w; j += L) {
                    vd t = d_load_n(part + j, w - j);
                    for (int64_t k = 0; k < n; k++)
                        t = d_add(t, d_load_n(p0 + k * ld + j, w - j));
                    d_store_n(part + j, t, w - j);
                }
            }
        }
        for (int64_t j = 0; j < wv; j += L)
            d_store(acc + j, d_add(d_load(acc + j), d_load(part + j)));
        for (int64_t q = wv; q < w; q++)
            acc[q] += part[q];
    }
}

/* ---- log_softmax (f32): its statistics are lsm_simd.h's ---- */

/* Short rows (n <= KS_LSM_SHORT): VS_LANES rows at once, one row per
 * lane.  The VS_LANES x n block is contiguous, exactly n vectors.  Its
 * columns are transposed in registers (n <= VS_LANES) or gathered (lane
 * i reads row i), so max, the exponentials, the sum and the log (or the
 * inverse) run on full vectors with no horizontal step.  log_softmax
 * then writes the block vector by vector, each lane's row statistics
 * fetched with a permute (fidx[v][k] = row of flat element v*L + k);
 * softmax keeps the exponentials of a transposed block, scales them and
 * transposes them back (a gathered block recomputes them in the
 * permuted write).  soft: softmax, else log_softmax.
 *
 * Transposed blocks go in chunks of KS_SHORT_CHUNK blocks, three passes
 * per chunk: the max and sum of every block of the chunk (softmax: its
 * exponentials kept in ex), the chunk's logs (or inverses), then the
 * writes.  A block's write waits for its sum, then its log (or
 * inverse): one block after another in one pass, the chain of each
 * block held the next one back (1024 x 10 at 1.76 cycles an element,
 * against 0.75 for the work of the long rows); the chunk's blocks are
 * independent, so the passes overlap them (a log at the end of each
 * block's statistics still held the next block back: 1024 x 10
 * log_softmax 4.1 -> 3.8 us).  The columns come from ks_load_cols,
 * each n its own instance (ks_short_any).  The values are those of one
 * pass, bit for bit. */
#define KS_LSM_SHORT 32
#define KS_SHORT_CHUNK 8

/* Pass one of a transposed block (n <= VS_LANES): lsm_simd.h's
 * ks_cols_stats on the columns of x's block, loaded by ks_load_cols_bc
 * (gathers cost about a cycle per element). */
static inline __attribute__((always_inline)) void
ks_short_stats(const float *x, int64_t n, vf *mo, vf *so, vf *ex, int soft)
{
    vf col[VS_LANES];
    ks_load_cols_bc(x, n, col);
    ks_cols_stats(col, n, mo, so, ex, soft);
}

/* Pass two of a transposed block: log_softmax (x - m) - log s vector by
 * vector in memory order, the row's statistics by permutes; softmax
 * exp(x - m) (1 / s) on the columns, transposed back. */
static inline __attribute__((always_inline)) void
ks_short_write(const float *x, float *o, int64_t n, vf m, vf st,
               const vf *ex, const int32_t fidx[][VS_LANES], int soft)
{
    if (soft) {
        vf col[VS_LANES];
#pragma GCC unroll 16
        for (int64_t c = 0; c < n; c++)
            col[c] = v_mul(ex[c], st);
#pragma GCC unroll 16
        for (int64_t c = n; c < VS_LANES; c++)
            col[c] = v_set1(0.0f);
        v_transpose(col);
#pragma GCC unroll 16
        for (int64_t r = 0; r < VS_LANES; r++)
            v_store_n(o + r * n, col[r], n);
        return;
    }
#pragma GCC unroll 16
    for (int64_t v = 0; v < n; v++) {
        const vi k = vi_load(fidx[v]);
        const vf xv = v_sub(v_load(x + v * VS_LANES), v_permute(k, m));
        v_store(o + v * VS_LANES, v_sub(xv, v_permute(k, st)));
    }
}

/* A gathered block (VS_LANES < n <= KS_LSM_SHORT), one pass: lane i
 * reads row i (rows: the lanes' row offsets). */
static inline __attribute__((always_inline)) void
ks_short_gathered(const float *x, float *o, int64_t n, vi rows,
                  const int32_t fidx[][VS_LANES], int soft)
{
    vf col[KS_LSM_SHORT];
    for (int64_t c = 0; c < n; c++)
        col[c] = v_gather(x + c, rows);
    vf m = col[0];
    for (int64_t c = 1; c < n; c++)
        m = v_max(m, col[c]);
    vf s = v_set1(0.0f);
    for (int64_t c = 0; c < n; c++)
        s = v_add(s, vs_exp(v_sub(col[c], m)));
    const vf st = soft ? v_div(v_set1(1.0f), s) : vs_log(s);
    for (int64_t v = 0; v < n; v++) {
        const vi k = vi_load(fidx[v]);
        vf xv = v_sub(v_load(x + v * VS_LANES), v_permute(k, m));
        v_store(o + v * VS_LANES,
                soft ? v_mul(vs_exp(xv), v_permute(k, st))
                     : v_sub(xv, v_permute(k, st)));
    }
}

/* nb consecutive blocks of VS_LANES rows of n <= KS_LSM_SHORT. */
static inline __attribute__((always_inline)) void
ks_short_rows(const float *x, float *o, int64_t nb, int64_t n, int soft)
{
    int32_t ri[VS_LANES], fidx[KS_LSM_SHORT][VS_LANES];
    const int64_t bs = VS_LANES * n;
    for (int k = 0; k < VS_LANES; k++)
        ri[k] = (int32_t)(k * n);
    ks_row_index(fidx, n);
    const int32_t(*fi)[VS_LANES] = (const int32_t(*)[VS_LANES])fidx;
    if (n > VS_LANES) {
        const vi rv = vi_load(ri);
        for (int64_t b = 0; b < nb; b++)
            ks_short_gathered(x + b * bs, o + b * bs, n, rv, fi, soft);
        return;
    }
    vf m[KS_SHORT_CHUNK], st[KS_SHORT_CHUNK];
    vf ex[KS_SHORT_CHUNK][VS_LANES];
    for (int64_t b0 = 0; b0 < nb; b0 += KS_SHORT_CHUNK) {
        const int64_t cb =
            nb - b0 < KS_SHORT_CHUNK ? nb - b0 : KS_SHORT_CHUNK;
        int64_t b;
        for (b = 0; b < cb; b++)
            ks_short_stats(x + (b0 + b) * bs, n, &m[b], &st[b], ex[b],
                           soft);
        /* the chunk's logs (or inverses) together: one a block, at the
         * end of its chain, held the next blocks back */
        for (b = 0; b < cb; b++)
            st[b] = soft ? v_div(v_set1(1.0f), st[b]) : vs_log(st[b]);
        for (b = 0; b < cb; b++)
            ks_short_write(x + (b0 + b) * bs, o + (b0 + b) * bs, n, m[b],
                           st[b], ex[b], fi, soft);
    }
}

/* The short-row path of both ops: one instance per n <= VS_LANES and op
 * (n a constant: the loops unrolled, the columns in registers; with n a
 * variable they lived on the stack), the gathered rows' one instance
 * with n a variable. */
#define KS_SHORT_CASE(N)                                                  \
    case N:                                                               \
        if (soft)                                                         \
            ks_short_rows(x, o, nb, N, 1);                                \
        else                                                              \
            ks_short_rows(x, o, nb, N, 0);                                \
        return;
static void ks_short_any(const float *x, float *o, int64_t nb, int64_t n,
                         int soft)
{
    switch (n) {
        KS_SHORT_NS(KS_SHORT_CASE)
    default:
        if (soft)
            ks_short_rows(x, o, nb, n, 1);
        else
            ks_short_rows(x, o, nb, n, 0);
    }
}
#undef KS_SHORT_CASE

/* Lane 0 of a. */
static inline float v_first_lane(vf a)
{
#if VS_LANES == 16
    return _mm512_cvtss_f32(a);
#else
    return _mm256_cvtss_f32(a);
#endif
}

/* One step of ks_lsm_pipe over row r's j-th vector (exp-summed into
 * *s), row r + 1's (max into *a) and row r - 1's (written when wr). */
#define KS_PIPE_E(S, J) *(S) = v_add(*(S), vs_exp(v_sub(v_load(xc + (J)), mc)))
#define KS_PIPE_W(J)                                                      \
    v_store(op + (J), v_sub(v_sub(v_load(xp + (J)), mp), lp))

/* One row of ks_lsm_pipe: the sum of exp(x - mc) of row xc (returned:
 * ks_lsm_block's order, two partial sums, so the same value), the max
 * of row xn (*mn: ks_fold4's order and v_hmax, the same value), and
 * (wr, a constant) row xp's write (x - mp) - lp to op, in one loop over
 * the elements: the exponentials' FMAs hide the max's and the write's
 * loads and stores, which three passes over a row ran alone. */
static inline __attribute__((always_inline)) float
ks_pipe_row(const float *xc, float mcs, const float *xn, float *mn,
            const float *xp, float *op, float mps, float lps, int64_t n,
            int wr)
{
    const int64_t L = VS_LANES;
    const float ninf = -__builtin_inff();
    const vf mc = v_set1(mcs), mp = v_set1(mps), lp = v_set1(lps);
    vf s0 = v_set1(0.0f), s1 = s0;
    vf a0 = v_set1(ninf), a1 = a0, a2 = a0, a3 = a0;
    int64_t j = 0;
    for (; j + 4 * L <= n; j += 4 * L) {
        KS_PIPE_E(&s0, j);
        a0 = v_max(a0, v_load(xn + j));
        KS_PIPE_E(&s1, j + L);
        a1 = v_max(a1, v_load(xn + j + L));
        KS_PIPE_E(&s0, j + 2 * L);
        a2 = v_max(a2, v_load(xn + j + 2 * L));
        KS_PIPE_E(&s1, j + 3 * L);
        a3 = v_max(a3, v_load(xn + j + 3 * L));
        if (wr) {
            KS_PIPE_W(j);
            KS_PIPE_W(j + L);
            KS_PIPE_W(j + 2 * L);
            KS_PIPE_W(j + 3 * L);
        }
    }
    const int64_t j4 = j;
    /* the three tails, each in its own pass's order */
    for (; j + 2 * L <= n; j += 2 * L) {
        KS_PIPE_E(&s0, j);
        KS_PIPE_E(&s1, j + L);
    }
    for (; j + L <= n; j += L)
        KS_PIPE_E(&s0, j);
    if (j < n)
        s1 = v_add(s1, vs_exp(v_sub(v_load_fill(xc + j, n - j, ninf), mc)));
    for (j = j4; j + L <= n; j += L)
        a0 = v_max(a0, v_load(xn + j));
    if (j < n)
        a1 = v_max(a1, v_load_fill(xn + j, n - j, ninf));
    *mn = v_hmax(v_max(v_max(a0, a1), v_max(a2, a3)));
    if (wr) {
        for (j = j4; j + L <= n; j += L)
            KS_PIPE_W(j);
        if (j < n)
            v_store_n(op + j,
                      v_sub(v_sub(v_load_n(xp + j, n - j), mp), lp), n - j);
    }
    return v_hsum(v_add(s0, s1));
}
#undef KS_PIPE_E
#undef KS_PIPE_W

/* log_softmax of rows of KS_LSM_SHORT < n <= TB_CPU_SUM_BLOCK (and the
 * rows past the short rows' blocks) as a row pipeline: one loop over a
 * row's elements sums its exponentials while it takes the next row's
 * max and writes the previous row (the f64 rows' schedule,
 * f64_lsm_simd.h); log s a row by vs_log on a broadcast (its lanes are
 * the group's vector log's).  The same values as ks_lsm_stats and
 * ks_lsm_write, bit for bit. */
static void ks_lsm_pipe(const float *x, float *o, int64_t rows, int64_t n)
{
    if (rows <= 0)
        return;
    float mc = v_hmax(ks_fold4(x, n, -__builtin_inff(), 1)), mn;
    float s = ks_pipe_row(x, mc, x + (rows > 1 ? n : 0), &mn, x, o, 0.0f,
                          0.0f, n, 0);
    for (int64_t r = 1; r < rows; r++) {
        const float mp = mc, lp = v_first_lane(vs_log(v_set1(s)));
        mc = mn;
        s = ks_pipe_row(x + r * n, mc, x + (r + 1 < rows ? r + 1 : r) * n,
                        &mn, x + (r - 1) * n, o + (r - 1) * n, mp, lp, n,
                        1);
    }
    ks_lsm_write(x + (rows - 1) * n, o + (rows - 1) * n, n, mc,
                 v_first_lane(vs_log(v_set1(s))), 0);
}

/* Rows in groups of VS_LANES: short rows as blocks (above); softmax's
 * rows of at most a block by ks_sm_row; log_softmax's by ks_lsm_pipe;
 * otherwise the statistics of each row, one vector log (or inverse)
 * for the group, then the outputs. */
static inline __attribute__((always_inline)) void
ks_rows_f32(const void *px, void *po, int64_t rows, int64_t n, int soft)
{
    const float *x = px;
    float *o = po;
    float m[VS_LANES], s[VS_LANES], ls[VS_LANES];
    int64_t r0 = 0;
    if (n <= KS_LSM_SHORT && rows >= VS_LANES) {
        const int64_t nb = rows / VS_LANES;
        ks_short_any(x, o, nb, n, soft);
        r0 = nb * VS_LANES;
    }
    if (soft && n <= TB_CPU_SUM_BLOCK) {
        /* one exp an element (lsm_simd.h) */
        for (; r0 < rows; r0++)
            ks_sm_row(x + r0 * n, o + r0 * n, n);
        return;
    }
    if (!soft && n <= TB_CPU_SUM_BLOCK) {
        ks_lsm_pipe(x + r0 * n, o + r0 * n, rows - r0, n);
        return;
    }
    for (; r0 < rows; r0 += VS_LANES) {
        const int64_t g = rows - r0 < VS_LANES ? rows - r0 : VS_LANES;
        for (int64_t r = 0; r < g; r++)
            ks_lsm_stats(x + (r0 + r) * n, n, &m[r], &s[r]);
        const vf sv = v_load_fill(s, g, 1.0f);
        v_store(ls, soft ? v_div(v_set1(1.0f), sv) : vs_log(sv));
        for (int64_t r = 0; r < g; r++) {
            const float *xr = x + (r0 + r) * n;
            float *orow = o + (r0 + r) * n;
            if (soft)
                ks_lsm_write(xr, orow, n, m[r], ls[r], 1);
            else
                ks_lsm_write(xr, orow, n, m[r], ls[r], 0);
        }
    }
}

static void ks_lsm_f32_rows(const void *px, void *po, int64_t rows,
                            int64_t n)
{
    ks_rows_f32(px, po, rows, n, 0);
}

static void ks_sm_f32_rows(const void *px, void *po, int64_t rows,
                           int64_t n)
{
    ks_rows_f32(px, po, rows, n, 1);
}

/*
 * Columns: per vector of columns, blocks of TB_CPU_SUM_COL_ROWS rows are
 * reduced (block max, then sum of exp(x - block max)) and merged with
 * the online rule per lane; then one pass writes (x - M) - log(S)
 * (log_softmax) or exp(x - M) * (1 / S) (softmax).
 */
static inline __attribute__((always_inline)) void
ks_cols_f32(const void *px, void *po, int64_t R, int64_t ld, int64_t w,
            int soft)
{
    const float *x = px;
    float *o = po;
    const int64_t L = VS_LANES;
    const vf ninf = v_set1(-__builtin_inff());
    for (int64_t j = 0; j < w; j += L) {
        const int64_t cw = w - j < L ? w - j : L;
        vf M = ninf, S = v_set1(0.0f);
        for (int64_t r0 = 0; r0 < R; r0 += TB_CPU_SUM_COL_ROWS) {
            const int64_t re = R - r0 < TB_CPU_SUM_COL_ROWS
                                   ? R
                                   : r0 + TB_CPU_SUM_COL_ROWS;
            vf mb = ninf;
            for (int64_t r = r0; r < re; r++)
                mb = v_max(mb, v_load_n(x + r * ld + j, cw));
            vf sb = v_set1(0.0f);
            for (int64_t r = r0; r < re; r++)
                sb = v_add(sb, vs_exp(v_sub(v_load_n(x + r * ld + j, cw),
                                            mb)));
            vf nm = v_max(M, mb);
            vf ns = v_add(v_mul(S, vs_exp(v_sub(M, nm))),
                          v_mul(sb, vs_exp(v_sub(mb, nm))));
            vm skip = v_eq(mb, ninf);
            M = v_sel(skip, M, nm);
            S = v_sel(skip, S, ns);
            if (m_any(skip)) {
                /* The max may have lost a NaN (see ks_lsm_stats). */
                vm nan = v_unord(mb, mb);
                for (int64_t r = r0; r < re; r++) {
                    vf v = v_load_n(x + r * ld + j, cw);
                    nan = m_or(nan, v_unord(v, v));
                }
                S = v_sel(nan, v_set1(__builtin_nanf("")), S);
            }
        }
        /* All -inf: S = 0 -> log = -inf -> (-inf - -inf) = NaN, as the
         * reference gives; softmax: exp(NaN) * inf = NaN likewise. */
        if (soft) {
            const vf inv = v_div(v_set1(1.0f), S);
            for (int64_t r = 0; r < R; r++) {
                vf v = v_load_n(x + r * ld + j, cw);
                v_store_n(o + r * ld + j, v_mul(vs_exp(v_sub(v, M)), inv),
                          cw);
            }
        } else {
            const vf ls = vs_log(S);
            for (int64_t r = 0; r < R; r++) {
                vf v = v_load_n(x + r * ld + j, cw);
                v_store_n(o + r * ld + j, v_sub(v_sub(v, M), ls), cw);
            }
        }
    }
}

static void ks_lsm_f32_cols(const void *px, void *po, int64_t R, int64_t ld,
                            int64_t w)
{
    ks_cols_f32(px, po, R, ld, w, 0);
}

static void ks_sm_f32_cols(const void *px, void *po, int64_t R, int64_t ld,
                           int64_t w)
{
    ks_cols_f32(px, po, R, ld, w, 1);
}

/* ---- pooling (f32) ------------------------------------------------------- */

/* max that propagates NaN from either side: x86 max returns its second
 * operand when either is NaN, so a NaN in a is put back. */
static inline vf v_nmax(vf a, vf b)
{
    return v_sel(v_unord(a, a), a, v_max(a, b));
}

/* VS_LANES windows of a 2 x 2 / 2 row from input rows r0, r1 (2
 * VS_LANES values each: whole vectors, or the first n0 + n1 by masks) */
static inline vf ks_pool_2x2_step(const float *r0, const float *r1,
                                  int is_max, int whole, int64_t n0,
                                  int64_t n1)
{
    const int64_t L = VS_LANES;
    vf a0, a1, b0, b1;
    if (whole) {
        a0 = v_load(r0), a1 = v_load(r0 + L);
        b0 = v_load(r1), b1 = v_load(r1 + L);
    } else {
        a0 = v_load_n(r0, n0), a1 = v_load_n(r0 + L, n1);
        b0 = v_load_n(r1, n0), b1 = v_load_n(r1 + L, n1);
    }
    if (is_max) {
        vf v0 = v_nmax(a0, b0), v1 = v_nmax(a1, b1);
        return v_nmax(v_even(v0, v1), v_odd(v0, v1));
    }
    vf v0 = v_add(a0, b0), v1 = v_add(a1, b1);
    return v_mul(v_add(v_even(v0, v1), v_odd(v0, v1)), v_set1(0.25f));
}

/*
 * 2 x 2 windows, stride 2, no padding (the common case): per output row
 * the two input rows are combined vertically, then the even and odd
 * columns horizontally (a permute pair), VS_LANES outputs per step.
 * Only the first 2 OW columns and 2 OH rows feed a window (an odd last
 * column / row belongs to no window).  A row's last step (OW % VS_LANES
 * windows, or the whole row when OW < VS_LANES: 24 x 24 planes) loads
 * and stores whole vectors wherever they stay inside these planes: the
 * lanes past the row's windows read the next row's values and write
 * values into the next row's outputs, which its own step rewrites after
 * (the outputs are contiguous across rows and planes); only the last
 * steps, where a vector would pass the end of x or o, are masked (a
 * masked step per row cost 24 of 32x16x24x24's 16 us, avx512).
 */
static inline void ks_pool_2x2_f32(const float *x, float *o, int64_t planes,
                                   const tb_cpu_pool_geom *g, int is_max)
{
    const int64_t L = VS_LANES, W = g->W, OH = g->OH, OW = g->OW;
    const float *xe = x + planes * g->H * W;
    float *oe = o + planes * OH * OW;
    /* rows: when H is even the row pairs of every plane are one
     * sequence (pair t at 2 t W, its outputs at t OW) */
    const int64_t seq = g->H == 2 * OH ? planes : 1;
    const int64_t rows = seq * OH;
    for (int64_t pl = 0; pl < planes; pl += seq) {
        const float *xp = x + pl * g->H * W;
        float *op = o + pl * OH * OW;
        for (int64_t t = 0; t < rows; t++) {
            const float *r0 = xp + 2 * t * W, *r1 = r0 + W;
            float *orow = op + t * OW;
            int64_t ow = 0;
            for (; ow + L <= OW; ow += L)
                v_store(orow + ow,
                        ks_pool_2x2_step(r0 + 2 * ow, r1 + 2 * ow, is_max, 1,
                                         L, L));
            if (ow == OW)
                continue;
            if (xe - (r1 + 2 * ow) >= 2 * L && oe - (orow + ow) >= L) {
                v_store(orow + ow,
                        ks_pool_2x2_step(r0 + 2 * ow, r1 + 2 * ow, is_max, 1,
                                         L, L));
            } else {
                const int64_t rem = OW - ow, n0 = 2 * rem < L ? 2 * rem : L;
                v_store_n(orow + ow,
                          ks_pool_2x2_step(r0 + 2 * ow, r1 + 2 * ow, is_max,
                                           0, n0, 2 * rem - n0),
                          rem);
            }
        }
    }
}

/*
 * Any window: VS_LANES outputs of a row at a time; for each in-bounds
 * input row of the window and each of the k taps, one masked gather of
 * the lanes' inputs (lane i reads column (ow + i) s - pad + t), with
 * -inf (max) or 0 (avg) in the lanes whose column is padding, which is
 * what the op's padding means.  Rows outside the plane are skipped.
 * The avg sum runs in the C version's order (rows, then taps).
 */
static inline void ks_pool_any_f32(const float *x, float *o, int64_t planes,
                                   const tb_cpu_pool_geom *g, int is_max)
{
    const int64_t L = VS_LANES, H = g->H, W = g->W, OH = g->OH, OW = g->OW;
    const int64_t k = g->k, s = g->s, pad = g->pad;
    const vf fill = v_set1(is_max ? -__builtin_inff() : 0.0f);
    const vf inv = v_set1(1.0f / (float)(k * k));
    const vi ramp = vi_ramp((int32_t)s);
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * H * W;
        float *op = o + pl * OH * OW;
        for (int64_t oh = 0; oh < OH; oh++) {
            int64_t h0 = oh * s - pad, h1 = h0 + k;
            h0 = h0 < 0 ? 0 : h0;
            h1 = h1 > H ? H : h1;
            for (int64_t ow = 0; ow < OW; ow += L) {
                const int64_t n = OW - ow < L ? OW - ow : L;
                const vm live = v_first(n);
                const vi col0 = vi_add(ramp, vi_set1((int32_t)(ow * s - pad)));
                vf acc = fill;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t t = 0; t < k; t++) {
                        const vi col = vi_add(col0, vi_set1((int32_t)t));
                        vf v = v_gather_m(xp + h * W, col,
                                          m_and(live, vi_below(col,
                                                               (int32_t)W)),
                                          fill);
                        acc = is_max ? v_nmax(v, acc) : v_add(acc, v);
                    }
                v_store_n(op + oh * OW + ow, is_max ? acc : v_mul(acc, inv),
                          n);
            }
        }
    }
}

static void ks_max_pool_f32(const void *x, void *o, int64_t planes,
                            const tb_cpu_pool_geom *g)
{
    if (g->k == 2 && g->s == 2 && g->pad == 0)
        ks_pool_2x2_f32(x, o, planes, g, 1);
    else
        ks_pool_any_f32(x, o, planes, g, 1);
}

static void ks_avg_pool_f32(const void *x, void *o, int64_t planes,
                            const tb_cpu_pool_geom *g)
{
    if (g->k == 2 && g->s == 2 && g->pad == 0)
        ks_pool_2x2_f32(x, o, planes, g, 0);
    else
        ks_pool_any_f32(x, o, planes, g, 0);
}

/* ---- pooling (f64) ------------------------------------------------------- */

/*
 * 2 x 2 windows, stride 2, no padding, P64_W outputs a step (one masked
 * step for the tail): the even and odd columns of the two input rows,
 * combined in the portable row's order (x00, x01, x10, x11) with its
 * operations, so the results are its bits: max by its running rule
 * (p64_cmax; x86's max where no lane holds a NaN), avg as
 * ((((0 + x00) + x01) + x10) + x11) * 0.25.  Every
 * other geometry runs the portable loop (tb_cpu_pool_f64_c).
 */
static inline void ks_pool_2x2_f64(const double *x, double *o, int64_t planes,
                                   const tb_cpu_pool_geom *g, int is_max)
{
    const int64_t L = P64_W, W = g->W, OH = g->OH, OW = g->OW;
    const p64 quarter = p64_set1(0.25), zero = p64_set1(0.0);
    for (int64_t pl = 0; pl < planes; pl++) {
        const double *xp = x + pl * g->H * W;
        double *op = o + pl * OH * OW;
        for (int64_t oh = 0; oh < OH; oh++) {
            const double *r0 = xp + 2 * oh * W, *r1 = r0 + W;
            double *orow = op + oh * OW;
            for (int64_t ow = 0; ow < OW; ow += L) {
                const int64_t rem = OW - ow < L ? OW - ow : L;
                p64 a0, a1, b0, b1;
                if (rem == L) {
                    a0 = p64_load(r0 + 2 * ow), a1 = p64_load(r0 + 2 * ow + L);
                    b0 = p64_load(r1 + 2 * ow), b1 = p64_load(r1 + 2 * ow + L);
                } else {
                    const int64_t n0 = 2 * rem < L ? 2 * rem : L;
                    a0 = p64_load_n(r0 + 2 * ow, n0);
                    a1 = p64_load_n(r0 + 2 * ow + L, 2 * rem - n0);
                    b0 = p64_load_n(r1 + 2 * ow, n0);
                    b1 = p64_load_n(r1 + 2 * ow + L, 2 * rem - n0);
                }
                const p64 v00 = p64_even(a0, a1), v01 = p64_odd(a0, a1);
                const p64 v10 = p64_even(b0, b1), v11 = p64_odd(b0, b1);
                p64 r;
                if (is_max && !p64_any(p64_or(p64_unord(v00, v01),
                                              p64_unord(v10, v11))))
                    /* no NaN: max(v, acc) is v > acc ? v : acc, the
                     * running rule's value (a tie keeps acc) */
                    r = p64_max(v11, p64_max(v10, p64_max(v01, v00)));
                else if (is_max)
                    r = p64_cmax(p64_cmax(p64_cmax(v00, v01), v10), v11);
                else
                    r = p64_mul(p64_add(p64_add(p64_add(p64_add(zero, v00),
                                                        v01),
                                                v10),
                                        v11),
                                quarter);
                if (rem == L)
                    p64_store(orow + ow, r);
                else
                    p64_store_n(orow + ow, r, rem);
            }
        }
    }
}

static void ks_max_pool_f64(const void *x, void *o, int64_t planes,
                            const tb_cpu_pool_geom *g)
{
    if (g->k == 2 && g->s == 2 && g->pad == 0)
        ks_pool_2x2_f64(x, o, planes, g, 1);
    else
        tb_cpu_pool_f64_c(x, o, planes, g, 1);
}

static void ks_avg_pool_f64(const void *x, void *o, int64_t planes,
                            const tb_cpu_pool_geom *g)
{
    if (g->k == 2 && g->s == 2 && g->pad == 0)
        ks_pool_2x2_f64(x, o, planes, g, 0);
    else
        tb_cpu_pool_f64_c(x, o, planes, g, 0);
}

/* ---- definitions and table ---------------------------------------------- */

#define KS_DEFINE_KERNELS(SFX)                                            \
    KS_BINARY(add_f32_##SFX, float, vf, v_, VS_LANES, add)                \
    KS_BINARY(sub_f32_##SFX, float, vf, v_, VS_LANES, sub)                \
    KS_BINARY(mul_f32_##SFX, float, vf, v_, VS_LANES, mul)                \
    KS_BINARY(div_f32_##SFX, float, vf, v_, VS_LANES, div)                \
    KS_BINARY(add_f64_##SFX, double, vd, d_, VD_LANES, add)               \
    KS_BINARY(sub_f64_##SFX, double, vd, d_, VD_LANES, sub)               \
    KS_BINARY(mul_f64_##SFX, double, vd, d_, VD_LANES, mul)               \
    KS_BINARY(div_f64_##SFX, double, vd, d_, VD_LANES, div)               \
    KS_BINARY(add_relu_f32_##SFX, float, vf, v_, VS_LANES, add_relu)      \
    KS_BINARY(add_relu_f64_##SFX, double, vd, d_, VD_LANES, add_relu)     \
    KS_RELU(relu_f32_##SFX, float, vf, v_, VS_LANES)                      \
    KS_RELU(relu_f64_##SFX, double, vd, d_, VD_LANES)

#define KS_SET_BIN(k, IDX, NAME, SFX, ISA)                                \
    do {                                                                  \
        (k)->bin[IDX][TB_F32].vv = NAME##_f32_##SFX##_vv;                 \
        (k)->bin[IDX][TB_F32].sv = NAME##_f32_##SFX##_sv;                 \
        (k)->bin[IDX][TB_F32].vs = NAME##_f32_##SFX##_vs;                 \
        (k)->bin[IDX][TB_F32].vv_nt = NAME##_f32_##SFX##_vv_nt;           \
        (k)->bin[IDX][TB_F32].rows = NAME##_f32_##SFX##_rows;             \
        (k)->bin[IDX][TB_F32].isa = (ISA);                                \
        (k)->bin[IDX][TB_F64].vv = NAME##_f64_##SFX##_vv;                 \
        (k)->bin[IDX][TB_F64].sv = NAME##_f64_##SFX##_sv;                 \
        (k)->bin[IDX][TB_F64].vs = NAME##_f64_##SFX##_vs;                 \
        (k)->bin[IDX][TB_F64].vv_nt = NAME##_f64_##SFX##_vv_nt;           \
        (k)->bin[IDX][TB_F64].rows = NAME##_f64_##SFX##_rows;             \
        (k)->bin[IDX][TB_F64].isa = (ISA);                                \
    } while (0)

/* Everything above except transpose and matmul (and log_softmax /
 * softmax f64, which need a double exp: f64_simd_impl.h's installer
 * after this). */
#define KS_INSTALL(k, SFX, ISA)                                           \
    do {                                                                  \
        KS_SET_BIN(k, TB_CPU_ADD, add, SFX, ISA);                         \
        KS_SET_BIN(k, TB_CPU_SUB, sub, SFX, ISA);                         \
        KS_SET_BIN(k, TB_CPU_MUL, mul, SFX, ISA);                         \
        KS_SET_BIN(k, TB_CPU_DIV, div, SFX, ISA);                         \
        KS_SET_BIN(k, TB_CPU_ADD_RELU, add_relu, SFX, ISA);               \
        (k)->relu[TB_F32].fn = relu_f32_##SFX;                            \
        (k)->relu[TB_F64].fn = relu_f64_##SFX;                            \
        (k)->relu[TB_F32].fn_nt = relu_f32_##SFX##_nt;                    \
        (k)->relu[TB_F64].fn_nt = relu_f64_##SFX##_nt;                    \
        (k)->relu[TB_F32].isa = (k)->relu[TB_F64].isa = (ISA);            \
        (k)->sum[TB_F32].row = ks_sum_f32_row;                            \
        (k)->sum[TB_F32].cols = ks_sum_f32_cols;                          \
        (k)->sum[TB_F32].rows = ks_sum_f32_short;                         \
        (k)->sum[TB_F32].short_n = VS_LANES;                              \
        (k)->sum[TB_F64].row = ks_sum_f64_row;                            \
        (k)->sum[TB_F64].cols = ks_sum_f64_cols;                          \
        (k)->sum[TB_F32].isa = (k)->sum[TB_F64].isa = (ISA);              \
        (k)->lsm[TB_F32].rows = ks_lsm_f32_rows;                          \
        (k)->lsm[TB_F32].cols = ks_lsm_f32_cols;                          \
        (k)->lsm[TB_F32].isa = (ISA);                                     \
        (k)->sm[TB_F32].rows = ks_sm_f32_rows;                            \
        (k)->sm[TB_F32].cols = ks_sm_f32_cols;                            \
        (k)->sm[TB_F32].isa = (ISA);                                      \
        (k)->pool[TB_F32].max = ks_max_pool_f32;                          \
        (k)->pool[TB_F32].avg = ks_avg_pool_f32;                          \
        (k)->pool[TB_F32].isa = (ISA);                                    \
        (k)->pool[TB_F64].max = ks_max_pool_f64;                          \
        (k)->pool[TB_F64].avg = ks_avg_pool_f64;                          \
        (k)->pool[TB_F64].isa = (ISA);                                    \
    } while (0)

/* The transpose row of dtype dt: block and block_nt, tile input rows a
 * call, at level isa. */
static inline void ks_set_tr(tb_cpu_kernels *k, tb_dtype dt,
                             tb_cpu_tr_fn block, tb_cpu_tr_fn block_nt,
                             int tile, int isa)
{
    k->tr[dt].block = block;
    k->tr[dt].block_nt = block_nt;
    k->tr[dt].tile = tile;
    k->tr[dt].isa = isa;
}

#endif /* TB_BACKENDS_CPU_KERNELS_SIMD_H */
