/* nll_loss's and nll_loss_backward's rows of the AVX-512 level, f32 and
 * f64 (kreg.h's backward family; included by bwd_avx512.c, built with
 * only that level's flags).  8 targets a step: each widened to double
 * (f32), a class when in [0, C) and equal to its truncation (vcvttpd2qq
 * and back: backward_impl.inc's rule; an out-of-range lane takes class 0,
 * an in-bounds read), the index i*C + k in 64 bits.
 *   nll_loss: logp gathered at the 8 indices (vgatherqps / vgatherqpd,
 *     f32 widened to double) and subtracted from one vector of double
 *     sums, lane j holding the rows i = j mod 8 in order, reduced as
 *     ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)): the C row's
 *     partial sums and order, so the loss is the C row's bit for bit;
 *     TB_EINVAL after the pass when a target was no class (nothing
 *     written).
 *   nll_loss_backward: every target checked first (TB_EINVAL before any
 *     write), then dx zeroed and -g/N scattered to the 8 indices a step
 *     (vscatterqps / vscatterqpd; the rows differ, so no two lanes meet).
 * The C row's scalar loop (a conversion, a compare chain and a load a
 * target) took ~200 ns (f32) and ~300 ns (f64) of nll_loss 128x10's
 * time on the Xeon (Emerald Rapids) of 2026-12-01. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "cpu_internal.h"
#include "isa.h"
#include "kreg.h"

/* the lanes of the step at row i (N - i of them, at most 8) */
static inline __mmask8 nll_lanes(int64_t i, int64_t N)
{
    return N - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (N - i)) - 1u);
}

static inline __m512d nll_tv_f32(const float *t, int64_t i, __mmask8 m)
{
    return _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, t + i));
}

static inline __m512d nll_tv_f64(const double *t, int64_t i, __mmask8 m)
{
    return _mm512_maskz_loadu_pd(m, t + i);
}

/* the classes of targets tv in lanes m (0 where out of range; a NaN
 * fails both compares); *bad gets the lanes of m that hold no class */
static inline __m512i nll_cls(__m512d tv, __m512d cd, __mmask8 m,
                              __mmask8 *bad)
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

/* i*C for the lanes of the first step (i = 0..7) */
static inline __m512i nll_base(int64_t C)
{
    return _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
                              _mm512_set1_epi64(C));
}

static inline double nll_hsum(__m512d acc)
{
    const __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(acc),
                                    _mm512_extractf64x4_pd(acc, 1));
    const __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h),
                                 _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(q) + _mm_cvtsd_f64(_mm_unpackhi_pd(q, q));
}

static inline __m512d nll_gather_f32(const float *logp, __m512i idx,
                                     __mmask8 m)
{
    return _mm512_cvtps_pd(
        _mm512_mask_i64gather_ps(_mm256_setzero_ps(), m, idx, logp, 4));
}

static inline __m512d nll_gather_f64(const double *logp, __m512i idx,
                                     __mmask8 m)
{
    return _mm512_mask_i64gather_pd(_mm512_setzero_pd(), m, idx, logp, 8);
}

static inline void nll_scatter_f32(float *dx, __m512i idx, __mmask8 m,
                                   float v)
{
    _mm512_mask_i64scatter_ps(dx, m, idx, _mm256_set1_ps(v), 4);
}

static inline void nll_scatter_f64(double *dx, __m512i idx, __mmask8 m,
                                   double v)
{
    _mm512_mask_i64scatter_pd(dx, m, idx, _mm512_set1_pd(v), 8);
}

#define NLL_ROWS(SFX, T, DT)                                              \
    static int nll_fwd_##SFX(const T *logp, const T *t, T *out,           \
                             int64_t N, int64_t C)                        \
    {                                                                     \
        const __m512d cd = _mm512_set1_pd((double)C);                     \
        const __m512i step = _mm512_set1_epi64(8 * C);                    \
        __m512i base = nll_base(C);                                       \
        __m512d acc = _mm512_setzero_pd();                                \
        __mmask8 bad = 0;                                                 \
        for (int64_t i = 0; i < N; i += 8) {                              \
            const __mmask8 m = nll_lanes(i, N);                           \
            const __m512i k = nll_cls(nll_tv_##SFX(t, i, m), cd, m, &bad); \
            const __m512d v =                                             \
                nll_gather_##SFX(logp, _mm512_add_epi64(base, k), m);     \
            acc = _mm512_mask_sub_pd(acc, m, acc, v);                     \
            base = _mm512_add_epi64(base, step);                          \
        }                                                                 \
        if (bad)                                                          \
            return TB_EINVAL;                                             \
        out[0] = (T)(nll_hsum(acc) / (double)N);                          \
        return 0;                                                         \
    }                                                                     \
                                                                          \
    static int nll_bwd_##SFX(const T *g, const T *t, T *dx, int64_t N,    \
                             int64_t C)                                   \
    {                                                                     \
        const __m512d cd = _mm512_set1_pd((double)C);                     \
        __mmask8 bad = 0;                                                 \
        for (int64_t i = 0; i < N; i += 8) {                              \
            const __mmask8 m = nll_lanes(i, N);                           \
            (void)nll_cls(nll_tv_##SFX(t, i, m), cd, m, &bad);            \
        }                                                                 \
        if (bad)                                                          \
            return TB_EINVAL;                                             \
        memset(dx, 0, (size_t)(N * C) * sizeof(T));                       \
        const T v = (T)(-(double)g[0] / (double)N);                       \
        const __m512i step = _mm512_set1_epi64(8 * C);                    \
        __m512i base = nll_base(C);                                       \
        for (int64_t i = 0; i < N; i += 8) {                              \
            const __mmask8 m = nll_lanes(i, N);                           \
            const __m512i k =                                             \
                _mm512_maskz_cvttpd_epi64(m, nll_tv_##SFX(t, i, m));      \
            nll_scatter_##SFX(dx, _mm512_add_epi64(base, k), m, v);       \
            base = _mm512_add_epi64(base, step);                          \
        }                                                                 \
        return 0;                                                         \
    }                                                                     \
                                                                          \
    int TB_CPU_KFN(nll_loss, SFX, avx512)(void *ctx, const tb_tensor *in, \
                                          tb_tensor *out,                 \
                                          const tb_params *p)             \
    {                                                                     \
        if (ctx && tb_cpu_isa(ctx) < TB_ISA_AVX512)                       \
            return TB_EUNSUPPORTED;                                       \
        int rc = tb_cpu_begin_op(ctx, TB_OP_nll_loss, DT, in, out, p);    \
        if (rc)                                                           \
            return rc;                                                    \
        return nll_fwd_##SFX(in[0].data, in[1].data, out[0].data,         \
                             in[0].shape[0], in[0].shape[1]);             \
    }                                                                     \
                                                                          \
    int TB_CPU_KFN(nll_loss_backward, SFX, avx512)(                       \
        void *ctx, const tb_tensor *in, tb_tensor *out,                   \
        const tb_params *p)                                               \
    {                                                                     \
        if (ctx && tb_cpu_isa(ctx) < TB_ISA_AVX512)                       \
            return TB_EUNSUPPORTED;                                       \
        int rc = tb_cpu_begin_op(ctx, TB_OP_nll_loss_backward, DT, in,    \
                                 out, p);                                 \
        if (rc)                                                           \
            return rc;                                                    \
        return nll_bwd_##SFX(in[0].data, in[2].data, out[0].data,         \
                             in[1].shape[0], in[1].shape[1]);             \
    }

NLL_ROWS(f32, float, TB_F32)
NLL_ROWS(f64, double, TB_F64)
#undef NLL_ROWS
