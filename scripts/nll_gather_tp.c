/* The loops of nll_loss's and nll_loss_backward's avx512 rows
 * (src/backends/cpu/nll_avx512.h) on L1-resident data, without the call:
 * what the 128 x 10 rows cost past their checked entry.
 *   gather: 8 targets a step, 8-lane gathers (vgatherqps / vgatherqpd),
 *           one vector of double sums (no target check);
 *   fwd:    the row's loop as it is (the class check, the gather, the sum);
 *   zero:   dx zeroed (memset of N*C elements);
 *   bwd:    the row's whole gradient: check pass, memset, scatter.
 * Each figure the minimum over 50 rounds of 20000 calls (ns a call).
 * Build: gcc -O2 -mavx512f -mavx512dq -mavx512vl -mavx512bw
 *        scripts/nll_gather_tp.c -o /tmp/nll_gather_tp
 * (tests/meson.build builds it too: build/tests/nll_gather_tp)
 * Run:   /tmp/nll_gather_tp [N C] (default 128 10) */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline __mmask8 lanes(int64_t i, int64_t N)
{
    return N - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (N - i)) - 1u);
}

static inline __m512i base0(int64_t C)
{
    return _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
                              _mm512_set1_epi64(C));
}

static inline __m512i cls(__m512d tv, __m512d cd, __mmask8 m, __mmask8 *bad)
{
    __mmask8 in =
        _mm512_mask_cmp_pd_mask(m, tv, _mm512_setzero_pd(), _CMP_GE_OQ);
    in = _mm512_mask_cmp_pd_mask(in, tv, cd, _CMP_LT_OQ);
    const __m512i k = _mm512_maskz_cvttpd_epi64(in, tv);
    const __mmask8 ex =
        _mm512_mask_cmp_pd_mask(in, _mm512_cvtepi64_pd(k), tv, _CMP_EQ_OQ);
    *bad |= (__mmask8)(m & ~ex);
    return k;
}

#define LOOPS(SFX, T, TV, GATHER, SCATTER)                                \
    static __attribute__((noinline)) double gather_##SFX(                 \
        const T *lp, const T *t, int64_t N, int64_t C)                    \
    {                                                                     \
        const __m512i step = _mm512_set1_epi64(8 * C);                    \
        __m512i base = base0(C);                                          \
        __m512d acc = _mm512_setzero_pd();                                \
        for (int64_t i = 0; i < N; i += 8) {                              \
            const __mmask8 m = lanes(i, N);                               \
            const __m512i k = _mm512_maskz_cvttpd_epi64(m, TV(t, i, m));  \
            acc = _mm512_mask_sub_pd(                                     \
                acc, m, acc, GATHER(lp, _mm512_add_epi64(base, k), m));   \
            base = _mm512_add_epi64(base, step);                          \
        }                                                                 \
        return _mm512_reduce_add_pd(acc);                                 \
    }                                                                     \
    static __attribute__((noinline)) double fwd_##SFX(                    \
        const T *lp, const T *t, int64_t N, int64_t C)                    \
    {                                                                     \
        const __m512d cd = _mm512_set1_pd((double)C);                     \
        const __m512i step = _mm512_set1_epi64(8 * C);                    \
        __m512i base = base0(C);                                          \
        __m512d acc = _mm512_setzero_pd();                                \
        __mmask8 bad = 0;                                                 \
        for (int64_t i = 0; i < N; i += 8) {                              \
            const __mmask8 m = lanes(i, N);                               \
            const __m512i k = cls(TV(t, i, m), cd, m, &bad);              \
            acc = _mm512_mask_sub_pd(                                     \
                acc, m, acc, GATHER(lp, _mm512_add_epi64(base, k), m));   \
            base = _mm512_add_epi64(base, step);                          \
        }                                                                 \
        return bad ? -1.0 : _mm512_reduce_add_pd(acc);                    \
    }                                                                     \
    static __attribute__((noinline)) double zero_##SFX(                   \
        T *dx, const T *t, int64_t N, int64_t C)                          \
    {                                                                     \
        (void)t;                                                          \
        memset(dx, 0, (size_t)(N * C) * sizeof(T));                       \
        return 0;                                                         \
    }                                                                     \
    static __attribute__((noinline)) double bwd_##SFX(                    \
        T *dx, const T *t, int64_t N, int64_t C)                          \
    {                                                                     \
        const __m512d cd = _mm512_set1_pd((double)C);                     \
        __mmask8 bad = 0;                                                 \
        for (int64_t i = 0; i < N; i += 8)                                \
            (void)cls(TV(t, i, lanes(i, N)), cd, lanes(i, N), &bad);      \
        if (bad)                                                          \
            return -1.0;                                                  \
        memset(dx, 0, (size_t)(N * C) * sizeof(T));                       \
        const __m512i step = _mm512_set1_epi64(8 * C);                    \
        __m512i base = base0(C);                                          \
        for (int64_t i = 0; i < N; i += 8) {                              \
            const __mmask8 m = lanes(i, N);                               \
            const __m512i k = _mm512_maskz_cvttpd_epi64(m, TV(t, i, m));  \
            SCATTER(dx, _mm512_add_epi64(base, k), m);                    \
            base = _mm512_add_epi64(base, step);                          \
        }                                                                 \
        return 0;                                                         \
    }

#define TV32(t, i, m) _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, (t) + (i)))
#define TV64(t, i, m) _mm512_maskz_loadu_pd(m, (t) + (i))
#define G32(lp, idx, m)                                                   \
    _mm512_cvtps_pd(                                                      \
        _mm512_mask_i64gather_ps(_mm256_setzero_ps(), m, idx, lp, 4))
#define G64(lp, idx, m)                                                   \
    _mm512_mask_i64gather_pd(_mm512_setzero_pd(), m, idx, lp, 8)
#define S32(dx, idx, m)                                                   \
    _mm512_mask_i64scatter_ps(dx, m, idx, _mm256_set1_ps(-0.5f), 4)
#define S64(dx, idx, m)                                                   \
    _mm512_mask_i64scatter_pd(dx, m, idx, _mm512_set1_pd(-0.5), 8)

LOOPS(f32, float, TV32, G32, S32)
LOOPS(f64, double, TV64, G64, S64)

static volatile double sink;

#define TIME(name, call)                                                  \
    do {                                                                  \
        double best = 1e30;                                               \
        for (int r = 0; r < 50; r++) {                                    \
            double t0 = now_ns();                                         \
            for (int j = 0; j < 20000; j++) {                             \
                sink += call;                                             \
                __asm__ volatile("" ::: "memory");                        \
            }                                                             \
            double d = (now_ns() - t0) / 20000;                           \
            best = d < best ? d : best;                                   \
        }                                                                 \
        printf("%-10s %8.1f ns\n", name, best);                           \
    } while (0)

int main(int argc, char **argv)
{
    const int64_t N = argc > 2 ? atoll(argv[1]) : 128;
    const int64_t C = argc > 2 ? atoll(argv[2]) : 10;
    /* sizes rounded up to 64 bytes (aligned_alloc's rule) */
    const size_t lpb = ((size_t)(N * C) * 8 + 63) / 64 * 64;
    const size_t tb = ((size_t)N * 8 + 63) / 64 * 64;
    float *lp32 = aligned_alloc(64, lpb);
    double *lp64 = aligned_alloc(64, lpb);
    float *t32 = aligned_alloc(64, tb);
    double *t64 = aligned_alloc(64, tb);
    if (!lp32 || !lp64 || !t32 || !t64)
        return 1;
    for (int64_t i = 0; i < N * C; i++)
        lp32[i] = (float)(lp64[i] = -0.1 * (double)(i % 7));
    for (int64_t i = 0; i < N; i++)
        t32[i] = (float)(t64[i] = (double)((i * 7) % C));
    printf("N %lld C %lld\n", (long long)N, (long long)C);
    TIME("gather f32", gather_f32(lp32, t32, N, C));
    TIME("gather f64", gather_f64(lp64, t64, N, C));
    TIME("fwd f32", fwd_f32(lp32, t32, N, C));
    TIME("fwd f64", fwd_f64(lp64, t64, N, C));
    TIME("zero f32", zero_f32(lp32, t32, N, C));
    TIME("zero f64", zero_f64(lp64, t64, N, C));
    TIME("bwd f32", bwd_f32(lp32, t32, N, C));
    TIME("bwd f64", bwd_f64(lp64, t64, N, C));
    free(lp32);
    free(lp64);
    free(t32);
    free(t64);
    return 0;
}
