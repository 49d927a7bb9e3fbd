/* layer_norm_backward and rms_norm_backward at the avx512 level: f32's
 * rows, and the same loops on bf16/f16 g, x, w widened in registers
 * with dx narrowed as it is stored (half_part.c's fused path: the bits
 * of half.c's widen + the f32 row + narrow, tests/test_half_paths.c).
 * On norm.h's driver (the chunks of rows, dw and db added in chunk
 * order).  Per row of D, 16 lanes, the tail by masks:
 *  - one pass over x and g: with d = x - c (c the mean of the row's
 *    first 8 elements, 0 for rms_norm) and gh = g * w, the sums of d,
 *    d^2, gh and gh * d in two sets of accumulators; m = E[d], the
 *    squared deviations s2 - m s1 and sum(gh * (d - m)) = sum(gh * d) -
 *    m sum(gh); where m s1 > 3/4 s2 (the subtraction would lose more than
 *    2 bits) the pass again with the shift c + m;
 *  - one pass for dx = rstd (gh - a - xh b), xh = ((x - c) - m) rstd, a
 *    = mean(gh) (0 for rms_norm), b = mean(gh * xh) = rstd sum(gh (d -
 *    m)) / D, and the chunk's dw += g xh, db += g (L1-resident rows).
 * The norm_avx2.c row reads x three times and g twice, with the
 * statistics in their own pass.  checkasm holds these rows to the C
 * rows within the ops' tolerance (the sums associate differently). */
#include <immintrin.h>
#include <math.h>

#include "../../ops/half.h"
#include "cpu_internal.h"
#include "half_bwd.h"
#include "kreg.h"
#include "norm.h"

#define NB_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* 16 lanes of p[k..k+16) widened to f32, the lanes outside m zero */
static inline __m512 nb_ld_f32(const void *p, int64_t k, __mmask16 m)
{
    return m == 0xffff ? _mm512_loadu_ps((const float *)p + k)
                       : _mm512_maskz_loadu_ps(m, (const float *)p + k);
}
static inline __m512 nb_ld_bf16(const void *p, int64_t k, __mmask16 m)
{
    const __m256i h =
        m == 0xffff ? _mm256_loadu_si256((const __m256i *)((const uint16_t *)p + k))
                    : _mm256_maskz_loadu_epi16(m, (const uint16_t *)p + k);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
static inline __m512 nb_ld_f16(const void *p, int64_t k, __mmask16 m)
{
    return _mm512_cvtph_ps(
        m == 0xffff
            ? _mm256_loadu_si256((const __m256i *)((const uint16_t *)p + k))
            : _mm256_maskz_loadu_epi16(m, (const uint16_t *)p + k));
}
/* v's lanes in m stored to p[k..k+16): f32; f16 by vcvtps2ph (nearest
 * even); bf16 as ops/half.h's tb_f32_to_bf16 (nearest even on the 16
 * bits dropped, a NaN its upper half with the quiet bit set) */
static inline void nb_st_f32(void *p, int64_t k, __mmask16 m, __m512 v)
{
    if (m == 0xffff)
        _mm512_storeu_ps((float *)p + k, v);
    else
        _mm512_mask_storeu_ps((float *)p + k, m, v);
}
static inline void nb_st16(void *p, int64_t k, __mmask16 m, __m256i h)
{
    if (m == 0xffff)
        _mm256_storeu_si256((__m256i *)((uint16_t *)p + k), h);
    else
        _mm256_mask_storeu_epi16((uint16_t *)p + k, m, h);
}
static inline void nb_st_f16(void *p, int64_t k, __mmask16 m, __m512 v)
{
    nb_st16(p, k, m, _mm512_cvtps_ph(v, NB_RNE));
}
static inline void nb_st_bf16(void *p, int64_t k, __mmask16 m, __m512 v)
{
    const __m512i x = _mm512_castps_si512(v);
    const __m512i hi = _mm512_srli_epi32(x, 16);
    __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(x, _mm512_add_epi32(
                                _mm512_and_si512(hi, _mm512_set1_epi32(1)),
                                _mm512_set1_epi32(0x7fff))),
        16);
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                              _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
    nb_st16(p, k, m, _mm512_cvtepi32_epi16(r));
}
/* two vectors' lanes, a's then b's, to p[k..k+32) as nb_st_* each: f16
 * by vcvtps2ph; bf16 the high halves of the rounded lanes picked by one
 * vpermt2w (vpmovdw's 2 uops on Zen 4 were the loop's cost) */
static inline void nb_st2_f16(void *p, int64_t k, __m512 a, __m512 b)
{
    nb_st_f16(p, k, 0xffff, a);
    nb_st_f16(p, k + 16, 0xffff, b);
}
static inline __m512i nb_bf16_hi(__m512 v)
{
    const __m512i x = _mm512_castps_si512(v);
    const __m512i r = _mm512_add_epi32(
        x, _mm512_add_epi32(
               _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1)),
               _mm512_set1_epi32(0x7fff)));
    return _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                                 _mm512_or_si512(x, _mm512_set1_epi32(0x400000)));
}
/* the rounding of nb_bf16_hi on lanes not NaN, in the low halves */
static inline __m512i nb_bf16_lo(__m512 v)
{
    const __m512i x = _mm512_castps_si512(v);
    return _mm512_srli_epi32(
        _mm512_add_epi32(
            x, _mm512_add_epi32(_mm512_and_si512(_mm512_srli_epi32(x, 16),
                                                 _mm512_set1_epi32(1)),
                                _mm512_set1_epi32(0x7fff))),
        16);
}
static inline void nb_st2_bf16(void *p, int64_t k, __m512 a, __m512 b)
{
    if (_mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q)) { /* a NaN: quiet it */
        const __m512i odd = _mm512_set_epi16(
            63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33,
            31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
        _mm512_storeu_si512((uint16_t *)p + k,
                            _mm512_permutex2var_epi16(nb_bf16_hi(a), odd,
                                                      nb_bf16_hi(b)));
        return;
    }
    /* per 128-bit lane a's 4 words then b's: the 64-bit pieces put back
     * in order */
    const __m512i pk = _mm512_packus_epi32(nb_bf16_lo(a), nb_bf16_lo(b));
    _mm512_storeu_si512(
        (uint16_t *)p + k,
        _mm512_permutexvar_epi64(_mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0), pk));
}
static inline float nb_get_f32(const void *p, int64_t k)
{
    return ((const float *)p)[k];
}
static inline float nb_get_bf16(const void *p, int64_t k)
{
    return tb_bf16_to_f32(((const uint16_t *)p)[k]);
}
static inline float nb_get_f16(const void *p, int64_t k)
{
    return tb_f16_to_f32(((const uint16_t *)p)[k]);
}

/* A row's scalars from its sums (one function for every dtype, so the
 * 16-bit rows round as the f32 row does). */
typedef struct {
    float m, rstd, a, b;
} nb_row;

static __attribute__((noinline)) bool
nb_finish(bool rms, float inv_n, float eps, float s1, float s2, float sg,
          float sgd, bool again, nb_row *o)
{
    const float m = rms ? 0.0f : s1 * inv_n;
    const float ms1 = m * s1;
    if (!rms && again && ms1 > 0.75f * s2)
        return false; /* the pass again, shifted by c + m */
    const float ss = s2 - ms1, msg = m * sg;
    o->m = m;
    o->rstd = 1.0f / sqrtf(ss * inv_n + eps);
    o->a = rms ? 0.0f : sg * inv_n;
    o->b = o->rstd * (sgd - msg) * inv_n;
    return true;
}

static __attribute__((noinline)) float nb_shift(float c, float m)
{
    return c + m;
}

#define NB_ROWS(DT, ES)                                                     \
    /* the sums of d, d^2, gh, gh d over the row (rms: c = 0, no sum of \
     * d) */                                                              \
    static inline __attribute__((always_inline)) void nb_sums_##DT(      \
        bool rms, const void *xr, const void *gr, const void *w,          \
        int64_t D, float c, float *t)                                     \
    {                                                                     \
        const __m512 vc = _mm512_set1_ps(c), z = _mm512_setzero_ps();     \
        __m512 a1[2] = {z, z}, a2[2] = {z, z}, ag[2] = {z, z};            \
        __m512 ad[2] = {z, z};                                            \
        int64_t k = 0;                                                    \
        for (; k + 32 <= D; k += 32)                                      \
            for (int u = 0; u < 2; u++) {                                 \
                const int64_t i = k + 16 * u;                             \
                const __m512 x = nb_ld_##DT(xr, i, 0xffff);               \
                const __m512 d = rms ? x : _mm512_sub_ps(x, vc);          \
                const __m512 gh = _mm512_mul_ps(nb_ld_##DT(gr, i, 0xffff), \
                                                nb_ld_##DT(w, i, 0xffff)); \
                if (!rms) {                                               \
                    a1[u] = _mm512_add_ps(a1[u], d);                      \
                    ag[u] = _mm512_add_ps(ag[u], gh);                     \
                }                                                         \
                a2[u] = _mm512_fmadd_ps(d, d, a2[u]);                     \
                ad[u] = _mm512_fmadd_ps(gh, d, ad[u]);                    \
            }                                                             \
        for (; k < D; k += 16) { /* (at most 2: 16 lanes, the tail) */    \
            const __mmask16 mk = D - k >= 16 ? (__mmask16)0xffff          \
                                             : (__mmask16)((1u << (D - k)) - 1); \
            const __m512 x = nb_ld_##DT(xr, k, mk);                       \
            const __m512 d = rms ? x : _mm512_maskz_sub_ps(mk, x, vc);    \
            const __m512 gh = _mm512_mul_ps(nb_ld_##DT(gr, k, mk),        \
                                            nb_ld_##DT(w, k, mk));        \
            if (!rms) {                                                   \
                a1[0] = _mm512_add_ps(a1[0], d);                          \
                ag[0] = _mm512_add_ps(ag[0], gh);                         \
            }                                                             \
            a2[0] = _mm512_fmadd_ps(d, d, a2[0]);                         \
            ad[0] = _mm512_fmadd_ps(gh, d, ad[0]);                        \
        }                                                                 \
        t[0] = _mm512_reduce_add_ps(_mm512_add_ps(a1[0], a1[1]));         \
        t[1] = _mm512_reduce_add_ps(_mm512_add_ps(a2[0], a2[1]));         \
        t[2] = _mm512_reduce_add_ps(_mm512_add_ps(ag[0], ag[1]));         \
        t[3] = _mm512_reduce_add_ps(_mm512_add_ps(ad[0], ad[1]));         \
    }                                                                     \
    /* lanes mk of row r's dx from k, dw += g xh, db += g */             \
    static inline __attribute__((always_inline)) void nb_dx16_##DT(      \
        bool rms, const void *xr, const void *gr, const void *w, void *dr, \
        int64_t k, __mmask16 mk, __m512 vc, __m512 vm, __m512 vr,         \
        __m512 va, __m512 vb, float *pw, float *pb)                       \
    {                                                                     \
        const __m512 xv = nb_ld_##DT(xr, k, mk);                          \
        const __m512 gv = nb_ld_##DT(gr, k, mk);                          \
        const __m512 xh =                                                 \
            rms ? _mm512_mul_ps(xv, vr)                                   \
                : _mm512_mul_ps(_mm512_sub_ps(_mm512_sub_ps(xv, vc), vm), vr); \
        const __m512 gh = _mm512_mul_ps(gv, nb_ld_##DT(w, k, mk));        \
        const __m512 tt = rms ? gh : _mm512_sub_ps(gh, va);               \
        nb_st_##DT(dr, k, mk, _mm512_mul_ps(vr, _mm512_fnmadd_ps(xh, vb, tt))); \
        nb_st_f32(pw, k, mk, _mm512_fmadd_ps(gv, xh, nb_ld_f32(pw, k, mk))); \
        if (!rms)                                                         \
            nb_st_f32(pb, k, mk, _mm512_add_ps(nb_ld_f32(pb, k, mk), gv)); \
    }                                                                     \
    /* row r's dx, dw += g xh, db += g */                                \
    static inline __attribute__((always_inline)) void nb_dx_##DT(        \
        bool rms, const void *xr, const void *gr, const void *w, void *dr, \
        int64_t D, float c, const nb_row *s, float *pw, float *pb)        \
    {                                                                     \
        const __m512 vc = _mm512_set1_ps(c), vm = _mm512_set1_ps(s->m);   \
        const __m512 vr = _mm512_set1_ps(s->rstd);                        \
        const __m512 va = _mm512_set1_ps(s->a), vb = _mm512_set1_ps(s->b); \
        int64_t k = 0;                                                    \
        for (; k + 16 <= D; k += 16)                                      \
            nb_dx16_##DT(rms, xr, gr, w, dr, k, 0xffff, vc, vm, vr, va, vb, \
                         pw, pb);                                         \
        if (k < D)                                                        \
            nb_dx16_##DT(rms, xr, gr, w, dr, k,                           \
                         (__mmask16)((1u << (D - k)) - 1), vc, vm, vr, va, \
                         vb, pw, pb);                                     \
    }                                                                     \
    static inline __attribute__((always_inline)) void nb_chunk_##DT(     \
        const tb_cpu_norm_bw_job *j, bool rms, int64_t ch)                \
    {                                                                     \
        const void *g = j->in[0].data, *x = j->in[1].data;                \
        const void *w = j->in[2].data;                                    \
        void *dx = j->out[0].data;                                        \
        const int64_t D = j->D, es = ES;                                  \
        const float inv_n = 1.0f / (float)D, eps = (float)j->eps;         \
        float *pw = (float *)j->part + ch * j->np * D;                    \
        float *pb = rms ? NULL : pw + D;                                  \
        for (int64_t k = 0; k < j->np * D; k++)                           \
            pw[k] = 0;                                                    \
        const int64_t r0 = ch * j->rows / j->nch;                         \
        const int64_t r1 = (ch + 1) * j->rows / j->nch;                   \
        nb_row s = {0, 0, 0, 0}, sn = s;                                  \
        float c = 0, cn = 0;                                              \
        /* row r's statistics, then row r - 1's dx: the statistics'      \
         * scalar latency beside the other row's vector work */           \
        for (int64_t r = r0; r <= r1; r++) {                              \
            if (r < r1) {                                                 \
                const char *xr = (const char *)x + r * D * es;            \
                const char *gr = (const char *)g + r * D * es;            \
                float t[4];                                               \
                cn = 0;                                                   \
                if (!rms) {                                               \
                    const int64_t n0 = D < 8 ? D : 8;                     \
                    for (int64_t k = 0; k < n0; k++)                      \
                        cn += nb_get_##DT(xr, k);                         \
                    cn /= (float)n0;                                      \
                }                                                         \
                nb_sums_##DT(rms, xr, gr, w, D, cn, t);                   \
                if (!nb_finish(rms, inv_n, eps, t[0], t[1], t[2], t[3],   \
                               true, &sn)) {                              \
                    cn = nb_shift(cn, t[0] * inv_n);                      \
                    nb_sums_##DT(rms, xr, gr, w, D, cn, t);               \
                    nb_finish(rms, inv_n, eps, t[0], t[1], t[2], t[3],    \
                              false, &sn);                                \
                }                                                         \
            }                                                             \
            if (r > r0)                                                   \
                nb_dx_##DT(rms, (const char *)x + (r - 1) * D * es,       \
                           (const char *)g + (r - 1) * D * es, w,         \
                           (char *)dx + (r - 1) * D * es, D, c, &s, pw,   \
                           pb);                                           \
            s = sn;                                                       \
            c = cn;                                                       \
        }                                                                 \
    }                                                                     \
    static void nb_bw_##DT(void *arg, int part, int nparts)               \
    {                                                                     \
        const tb_cpu_norm_bw_job *j = arg;                                \
        int64_t c0, c1;                                                   \
        tb_cpu_span(j->nch, 1, part, nparts, &c0, &c1);                   \
        for (int64_t ch = c0; ch < c1; ch++)                              \
            if (j->np == 1)                                               \
                nb_chunk_##DT(j, true, ch);                               \
            else                                                          \
                nb_chunk_##DT(j, false, ch);                              \
    }
NB_ROWS(f32, 4)
NB_ROWS(bf16, 2)
NB_ROWS(f16, 2)

tb_cpu_task_fn tb_cpu_norm_bw_chunks_avx512(tb_dtype dt)
{
    return dt == TB_F32 ? nb_bw_f32 : dt == TB_BF16 ? nb_bw_bf16 : nb_bw_f16;
}

int TB_CPU_KFN(layer_norm_backward, f32, avx512)(void *ctx,
                                                 const tb_tensor *in,
                                                 tb_tensor *out,
                                                 const tb_params *p)
{
    return tb_cpu_norm_bw_run(ctx, TB_OP_layer_norm_backward, TB_F32, in,
                              out, p, nb_bw_f32);
}

int TB_CPU_KFN(rms_norm_backward, f32, avx512)(void *ctx,
                                               const tb_tensor *in,
                                               tb_tensor *out,
                                               const tb_params *p)
{
    return tb_cpu_norm_bw_run(ctx, TB_OP_rms_norm_backward, TB_F32, in,
                              out, p, nb_bw_f32);
}

/* ---- layer_norm and rms_norm in bf16/f16 (half_part.c's fused rows at
 * the avx512 level, whose f32 row is norm_avx2.c's): that row's
 * operations in its order, 16 lanes at a time, so its bits (as
 * half_norm_simd.h's avx2 loops; tests/test_half_paths.c): its four
 * 8-lane accumulators of each sum as two 16-lane ones (elements k..k+15
 * and k+16..k+31 of each 32), its 8-element step into the low half by
 * a mask, its reduction order (a0 + a1) + (a2 + a3), then v_hsum's; the
 * scale pass lane by lane; the scalar tails the same C.  The statistics
 * pass prefetches the row NZ_PF_ROWS ahead (norm_avx2.c's reason: the
 * hardware prefetchers stop at a page's end). ---- */
#define NZ_PF_ROWS 4

/* vmath_simd.h's 8-lane v_hsum */
static inline float nz_hsum8(__m256 a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a),
                          _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline __m256 nz_fold(__m512 a0, __m512 a1)
{
    return _mm256_add_ps(_mm256_add_ps(_mm512_castps512_ps256(a0),
                                       _mm512_extractf32x8_ps(a0, 1)),
                         _mm256_add_ps(_mm512_castps512_ps256(a1),
                                       _mm512_extractf32x8_ps(a1, 1)));
}

#define NZ_ROWS(DT)                                                       \
    static inline __attribute__((always_inline)) void nz_sums_##DT(      \
        const uint16_t *x, int64_t D, float c, const char *pf, float *s1, \
        float *s2)                                                        \
    {                                                                     \
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, q0 = a0, q1 = a0;       \
        const __m512 vc = _mm512_set1_ps(c);                              \
        int64_t k = 0;                                                    \
        for (; k + 32 <= D; k += 32) {                                    \
            if (pf)                                                       \
                _mm_prefetch(pf + 2 * k, _MM_HINT_T0);                    \
            const __m512 d0 = _mm512_sub_ps(nb_ld_##DT(x, k, 0xffff), vc); \
            const __m512 d1 =                                             \
                _mm512_sub_ps(nb_ld_##DT(x, k + 16, 0xffff), vc);         \
            a0 = _mm512_add_ps(a0, d0);                                   \
            q0 = _mm512_fmadd_ps(d0, d0, q0);                             \
            a1 = _mm512_add_ps(a1, d1);                                   \
            q1 = _mm512_fmadd_ps(d1, d1, q1);                             \
        }                                                                 \
        for (; k + 8 <= D; k += 8) {                                      \
            const __m512 d = _mm512_sub_ps(nb_ld_##DT(x, k, 0xff), vc);   \
            a0 = _mm512_mask_add_ps(a0, 0xff, a0, d);                     \
            q0 = _mm512_mask3_fmadd_ps(d, d, q0, 0xff);                   \
        }                                                                 \
        float t1 = nz_hsum8(nz_fold(a0, a1));                             \
        float t2 = nz_hsum8(nz_fold(q0, q1));                             \
        for (; k < D; k++) {                                              \
            const float xk = tb_##DT##_to_f32(x[k]);                      \
            t1 += xk - c;                                                 \
            t2 += (xk - c) * (xk - c);                                    \
        }                                                                 \
        if (s1)                                                           \
            *s1 = t1;                                                     \
        *s2 = t2;                                                         \
    }                                                                     \
    /* y of the lanes of mk from k: ((x - sh) - m) * inv * w (+ b) */   \
    static inline __attribute__((always_inline)) __m512 nz_y_##DT(      \
        const uint16_t *xr, const float *w, const float *b, int64_t k,    \
        __mmask16 mk, __m512 vsh, __m512 vmu, __m512 vinv)                \
    {                                                                     \
        const __m512 c = _mm512_mul_ps(                                   \
            _mm512_sub_ps(_mm512_sub_ps(nb_ld_##DT(xr, k, mk), vsh), vmu), \
            vinv);                                                        \
        return _mm512_fmadd_ps(c, nb_ld_f32(w, k, mk),                    \
                               b ? nb_ld_f32(b, k, mk)                    \
                                 : _mm512_setzero_ps());                  \
    }                                                                     \
    static inline __attribute__((always_inline)) void nz_scale_##DT(     \
        const uint16_t *xr, uint16_t *yr, const float *w, const float *b, \
        int64_t k, __mmask16 mk, __m512 vsh, __m512 vmu, __m512 vinv)     \
    {                                                                     \
        nb_st_##DT(yr, k, mk, nz_y_##DT(xr, w, b, k, mk, vsh, vmu, vinv)); \
    }                                                                     \
    static void nz_rows_##DT(const uint16_t *x, uint16_t *y, int64_t rows, \
                             int64_t D, const float *w, const float *b,   \
                             float eps)                                   \
    {                                                                     \
        for (int64_t r = 0; r < rows; r++) {                              \
            const uint16_t *xr = x + r * D;                               \
            uint16_t *yr = y + r * D;                                     \
            const char *pf = r + NZ_PF_ROWS < rows                        \
                                 ? (const char *)(xr + NZ_PF_ROWS * D)    \
                                 : NULL;                                  \
            float sh, m, ss;                                              \
            TB_HALF_NORM_STATS(nz_sums_##DT, tb_##DT##_to_f32, xr, D, b,  \
                               pf, sh, m, ss);                            \
            const float inv =                                             \
                1.0f / (float)sqrt((double)(ss / (float)D + eps));        \
            const __m512 vsh = _mm512_set1_ps(sh), vmu = _mm512_set1_ps(m); \
            const __m512 vinv = _mm512_set1_ps(inv);                      \
            int64_t k = 0;                                                \
            for (; k + 32 <= D; k += 32)                                  \
                nb_st2_##DT(                                              \
                    yr, k, nz_y_##DT(xr, w, b, k, 0xffff, vsh, vmu, vinv), \
                    nz_y_##DT(xr, w, b, k + 16, 0xffff, vsh, vmu, vinv)); \
            for (; k + 16 <= D; k += 16)                                  \
                nz_scale_##DT(xr, yr, w, b, k, 0xffff, vsh, vmu, vinv);   \
            if (k + 8 <= D) {                                             \
                nz_scale_##DT(xr, yr, w, b, k, 0xff, vsh, vmu, vinv);     \
                k += 8;                                                   \
            }                                                             \
            for (; k < D; k++)                                            \
                yr[k] = tb_f32_to_##DT((tb_##DT##_to_f32(xr[k]) - sh - m) * \
                                           inv * w[k] +                   \
                                       (b ? b[k] : 0.0f));                \
        }                                                                 \
    }
NZ_ROWS(bf16)
NZ_ROWS(f16)

void tb_cpu_half_norm_rows_avx512(tb_dtype dt, const uint16_t *x,
                                  uint16_t *y, int64_t rows, int64_t D,
                                  const float *w, const float *b, float eps)
{
    if (dt == TB_BF16)
        nz_rows_bf16(x, y, rows, D, w, b, eps);
    else
        nz_rows_f16(x, y, rows, D, w, b, eps);
}
