/* einsum's matrix-vector products (einsum_gemv.h) at the avx2 and
 * avx512 levels, for inclusion by einsum_avx2.c and einsum_avx512.c
 * only (each built with its level's flags).  f32 on vmath_simd.h's
 * vectors, f64 on the few helpers below.  Every load past a row's last
 * whole vector is masked: no byte beyond an operand is read.
 *
 * mv (N = 1): four rows at a time share each load of x, one accumulator
 * a row (five loads a step of four FMAs: load-bound, not latency-bound),
 * the tail of K in one masked step, each row's lanes then added; a
 * lone row keeps four accumulators (a dot product of a long K).
 * vm (M = 1): blocks of four vectors of c, a broadcast of a[k] times
 * row k of b added in k order; then single vectors, then one masked. */
#ifndef TB_BACKENDS_CPU_EINSUM_SIMD_H
#define TB_BACKENDS_CPU_EINSUM_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#include "einsum_gemv.h"
#include "vmath_simd.h"

/* f32: vmath_simd.h's v_* (EG_KERNELS's prefix v) */
#define v_L VS_LANES
typedef vf v_vt;

/* f64 (prefix egd): the intrinsics both widths name alike through
 * EGD_I, then the masked ones (r < egd_L lanes) and the lane sum */
#if VS_LANES == 16
#define egd_L 8
#define EGD_I(x) _mm512_##x
typedef __m512d egd_vt;
static inline egd_vt egd_load_n(const double *p, int64_t r)
{
    return _mm512_maskz_loadu_pd((__mmask8)((1u << r) - 1), p);
}
static inline void egd_store_n(double *p, egd_vt a, int64_t r)
{
    _mm512_mask_storeu_pd(p, (__mmask8)((1u << r) - 1), a);
}
static inline double egd_hsum(egd_vt a) { return _mm512_reduce_add_pd(a); }
#else
#define egd_L 4
#define EGD_I(x) _mm256_##x
typedef __m256d egd_vt;
/* 4 lanes from r lanes before the table's zeros: the first r set */
static const int64_t egd_ones[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
static inline egd_vt egd_load_n(const double *p, int64_t r)
{
    return _mm256_maskload_pd(
        p, _mm256_loadu_si256((const __m256i *)(egd_ones + 4 - r)));
}
static inline void egd_store_n(double *p, egd_vt a, int64_t r)
{
    _mm256_maskstore_pd(
        p, _mm256_loadu_si256((const __m256i *)(egd_ones + 4 - r)), a);
}
static inline double egd_hsum(egd_vt a)
{
    const __m256d h = _mm256_hadd_pd(a, a); /* a0+a1, ., a2+a3, . */
    return _mm_cvtsd_f64(
        _mm_add_sd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1)));
}
#endif
static inline egd_vt egd_set1(double a) { return EGD_I(set1_pd)(a); }
static inline egd_vt egd_load(const double *p) { return EGD_I(loadu_pd)(p); }
static inline void egd_store(double *p, egd_vt a) { EGD_I(storeu_pd)(p, a); }
static inline egd_vt egd_fma(egd_vt a, egd_vt b, egd_vt c)
{
    return EGD_I(fmadd_pd)(a, b, c);
}
static inline egd_vt egd_add(egd_vt a, egd_vt b) { return EGD_I(add_pd)(a, b); }

#define EG_KERNELS(SFX, T, P)                                             \
    static void eg_mv_##SFX(const void *av, const void *xv, void *cv,     \
                            int64_t m, int64_t K)                         \
    {                                                                     \
        const T *a = av, *x = xv;                                         \
        T *c = cv;                                                        \
        const int64_t L = P##_L, kt = K - K % P##_L;                      \
        int64_t i = 0;                                                    \
        for (; i + 4 <= m; i += 4) {                                      \
            const T *a0 = a + i * K, *a1 = a0 + K, *a2 = a1 + K,          \
                    *a3 = a2 + K;                                         \
            P##_vt s0 = P##_set1(0), s1 = s0, s2 = s0, s3 = s0;             \
            for (int64_t k = 0; k < kt; k += L) {                         \
                const P##_vt v = P##_load(x + k);                          \
                s0 = P##_fma(P##_load(a0 + k), v, s0);                    \
                s1 = P##_fma(P##_load(a1 + k), v, s1);                    \
                s2 = P##_fma(P##_load(a2 + k), v, s2);                    \
                s3 = P##_fma(P##_load(a3 + k), v, s3);                    \
            }                                                             \
            if (kt < K) {                                                 \
                const int64_t r = K - kt;                                 \
                const P##_vt v = P##_load_n(x + kt, r);                    \
                s0 = P##_fma(P##_load_n(a0 + kt, r), v, s0);              \
                s1 = P##_fma(P##_load_n(a1 + kt, r), v, s1);              \
                s2 = P##_fma(P##_load_n(a2 + kt, r), v, s2);              \
                s3 = P##_fma(P##_load_n(a3 + kt, r), v, s3);              \
            }                                                             \
            c[i] = P##_hsum(s0), c[i + 1] = P##_hsum(s1);                 \
            c[i + 2] = P##_hsum(s2), c[i + 3] = P##_hsum(s3);             \
        }                                                                 \
        for (; i < m; i++) {                                              \
            const T *ar = a + i * K;                                      \
            P##_vt s0 = P##_set1(0), s1 = s0, s2 = s0, s3 = s0;             \
            int64_t k = 0;                                                \
            for (; k + 4 * L <= kt; k += 4 * L) {                         \
                s0 = P##_fma(P##_load(ar + k), P##_load(x + k), s0);      \
                s1 = P##_fma(P##_load(ar + k + L), P##_load(x + k + L),   \
                             s1);                                         \
                s2 = P##_fma(P##_load(ar + k + 2 * L),                    \
                             P##_load(x + k + 2 * L), s2);                \
                s3 = P##_fma(P##_load(ar + k + 3 * L),                    \
                             P##_load(x + k + 3 * L), s3);                \
            }                                                             \
            for (; k < kt; k += L)                                        \
                s0 = P##_fma(P##_load(ar + k), P##_load(x + k), s0);      \
            if (kt < K)                                                   \
                s1 = P##_fma(P##_load_n(ar + kt, K - kt),                 \
                             P##_load_n(x + kt, K - kt), s1);             \
            c[i] = P##_hsum(P##_add(P##_add(s0, s1), P##_add(s2, s3)));   \
        }                                                                 \
    }                                                                     \
    static void eg_vm_##SFX(const void *av, const void *bv, void *cv,     \
                            int64_t j0, int64_t j1, int64_t K, int64_t N) \
    {                                                                     \
        const T *a = av, *b = bv;                                         \
        T *c = cv;                                                        \
        const int64_t L = P##_L;                                          \
        int64_t j = j0;                                                   \
        for (; j + 4 * L <= j1; j += 4 * L) {                             \
            P##_vt s0 = P##_set1(0), s1 = s0, s2 = s0, s3 = s0;             \
            for (int64_t k = 0; k < K; k++) {                             \
                const P##_vt v = P##_set1(a[k]);                           \
                const T *br = b + k * N + j;                              \
                s0 = P##_fma(v, P##_load(br), s0);                        \
                s1 = P##_fma(v, P##_load(br + L), s1);                    \
                s2 = P##_fma(v, P##_load(br + 2 * L), s2);                \
                s3 = P##_fma(v, P##_load(br + 3 * L), s3);                \
            }                                                             \
            P##_store(c + j, s0), P##_store(c + j + L, s1);               \
            P##_store(c + j + 2 * L, s2), P##_store(c + j + 3 * L, s3);   \
        }                                                                 \
        for (; j + L <= j1; j += L) {                                     \
            P##_vt s = P##_set1(0);                                         \
            for (int64_t k = 0; k < K; k++)                               \
                s = P##_fma(P##_set1(a[k]), P##_load(b + k * N + j), s);  \
            P##_store(c + j, s);                                          \
        }                                                                 \
        if (j < j1) {                                                     \
            const int64_t r = j1 - j;                                     \
            P##_vt s = P##_set1(0);                                         \
            for (int64_t k = 0; k < K; k++)                               \
                s = P##_fma(P##_set1(a[k]), P##_load_n(b + k * N + j, r), \
                            s);                                           \
            P##_store_n(c + j, s, r);                                     \
        }                                                                 \
    }

/* c [m, N] = a [m, K] b [K, N] for N <= 2 lanes' vectors, unpacked:
 * four rows a step (a short last step repeats row i's reads and
 * stores only its rows), one or two vectors of each row of b (the last
 * masked), a broadcast of a[r][k] times them added in k order. */
#define EG_MM4(P, T, NV)                                                  \
    for (int64_t i = 0; i < m; i += 4) {                                  \
        const int64_t mr = m - i < 4 ? m - i : 4;                         \
        const T *a0 = a + i * K, *a1 = a0 + (mr > 1 ? K : 0),             \
                *a2 = a0 + (mr > 2 ? 2 * K : 0),                          \
                *a3 = a0 + (mr > 3 ? 3 * K : 0);                          \
        P##_vt s0 = P##_set1(0), s1 = s0, s2 = s0, s3 = s0;               \
        P##_vt u0 = s0, u1 = s0, u2 = s0, u3 = s0;                        \
        for (int64_t k = 0; k < K; k++) {                                 \
            const T *br = b + k * N;                                      \
            const P##_vt v = NV == 1 ? P##_load_n(br, N) : P##_load(br);  \
            const P##_vt x0 = P##_set1(a0[k]), x1 = P##_set1(a1[k]);      \
            const P##_vt x2 = P##_set1(a2[k]), x3 = P##_set1(a3[k]);      \
            s0 = P##_fma(x0, v, s0), s1 = P##_fma(x1, v, s1);             \
            s2 = P##_fma(x2, v, s2), s3 = P##_fma(x3, v, s3);             \
            if (NV == 2) {                                                \
                const P##_vt w = P##_load_n(br + L, N - L);               \
                u0 = P##_fma(x0, w, u0), u1 = P##_fma(x1, w, u1);         \
                u2 = P##_fma(x2, w, u2), u3 = P##_fma(x3, w, u3);         \
            }                                                             \
        }                                                                 \
        const P##_vt s[4] = {s0, s1, s2, s3}, u[4] = {u0, u1, u2, u3};    \
        for (int64_t r = 0; r < mr; r++) {                                \
            T *cr = c + (i + r) * N;                                      \
            if (NV == 1) {                                                \
                P##_store_n(cr, s[r], N);                                 \
            } else {                                                      \
                P##_store(cr, s[r]);                                      \
                P##_store_n(cr + L, u[r], N - L);                         \
            }                                                             \
        }                                                                 \
    }

#define EG_MM(SFX, T, P)                                                  \
    static void eg_mm_##SFX(const void *av, const void *bv, void *cv,     \
                            int64_t m, int64_t K, int64_t N)              \
    {                                                                     \
        const T *a = av, *b = bv;                                         \
        T *c = cv;                                                        \
        const int64_t L = P##_L;                                          \
        if (N <= L) {                                                     \
            EG_MM4(P, T, 1)                                               \
        } else {                                                          \
            EG_MM4(P, T, 2)                                               \
        }                                                                 \
    }

EG_KERNELS(f32, float, v)
EG_KERNELS(f64, double, egd)
EG_MM(f32, float, v)
EG_MM(f64, double, egd)

#define EG_TABLE(LV)                                                      \
    const tb_cpu_ein_gemv tb_cpu_ein_gemv_##LV[2] = {                     \
        {eg_mv_f32, eg_vm_f32, eg_mm_f32, 2 * v_L},                       \
        {eg_mv_f64, eg_vm_f64, eg_mm_f64, 2 * egd_L}};

#endif
