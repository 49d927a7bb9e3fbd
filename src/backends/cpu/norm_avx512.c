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

#include "norm16_simd.h"

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
                                                nb_ld_f32(w, i, 0xffff)); \
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
                                            nb_ld_f32(w, k, mk));        \
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
        const __m512 gh = _mm512_mul_ps(gv, nb_ld_f32(w, k, mk));        \
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
        const float *w = j->w32; /* (f32: w itself) */                    \
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
