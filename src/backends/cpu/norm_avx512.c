/* layer_norm_backward and rms_norm_backward at the avx512 level: f32's
 * rows, and the same loops on bf16/f16 g, x, w widened in registers
 * with dx narrowed as it is stored (half_part.c's fused path: the bits
 * of half.c's widen + the f32 row + narrow, tests/test_half_paths.c).
 * On norm.h's driver (the chunks of rows, dw and db added in chunk
 * order); the loops are norm16_simd.h's NB_ROWS (norm_avx512bf16.c
 * builds bf16's again, narrowing by AVX512_BF16), w in f32 (norm.h's
 * w32: a 16-bit w widened once).  Per row of D, 16 lanes, the tail by masks:
 *  - one pass over x and g: with d = x - c (c the mean of the row's
 *    first 8 elements, 0 for rms_norm) and gh = g * w, the sums of d,
 *    d^2, gh and gh * d; m = E[d], the squared deviations s2 - m s1 and
 *    sum(gh * (d - m)) = sum(gh * d) - m sum(gh); where m s1 > 3/4 s2
 *    (the subtraction would lose more than 2 bits) the pass again with
 *    the shift c + m;
 *  - one pass for dx = rstd (gh - a - xh b), xh = ((x - c) - m) rstd, a
 *    = mean(gh) (0 for rms_norm), b = mean(gh * xh) = rstd sum(gh (d -
 *    m)) / D, and the chunk's dw += g xh, db += g; written as dx = (g
 *    rstd) w - q (x - c - m) + na, dw += (g rstd) (x - c - m), 4
 *    multiplies or FMAs a vector;
 *  - both passes over a quad of 4 rows column by column (w loaded once
 *    for the quad, each row's scalars in registers, dw and db in
 *    registers across the quad and stored once: Zen 4 loads one 512-bit
 *    vector a cycle, a broadcast from memory as one, and stores one in
 *    two), quad j's statistics before quad j - 1's dx so that the
 *    scalars' latency (folded sums, a square root, a division: four
 *    rows a lane, tb_cpu_nb_finish4) runs beside the next loop;
 *  - the chunks' dw and db added in chunk order 64 columns at a time in
 *    registers (tb_cpu_norm_bw_sum_avx512; the driver's portable loop
 *    was 4 of the 37 us of 512x256 f32).
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

/* The rows' scalars from their sums (norm16_simd.h: one function for
 * every dtype, so the 16-bit rows round as the f32 row does), four rows
 * a lane each: the sums transposed, then the scalar formulas lane by
 * lane (IEEE operations, no contraction: any lane's bits are the scalar
 * code's). */
_Static_assert(NB_Q == 4, "tb_cpu_nb_finish4 takes 4 rows");
unsigned tb_cpu_nb_finish4(bool rms, float inv_n, float eps,
                           const float (*t)[4], bool again, nb_grp *o)
{
    __m128 s1 = _mm_loadu_ps(t[0]), s2 = _mm_loadu_ps(t[1]);
    __m128 sg = _mm_loadu_ps(t[2]), sgd = _mm_loadu_ps(t[3]);
    _MM_TRANSPOSE4_PS(s1, s2, sg, sgd);
    const __m128 vn = _mm_set1_ps(inv_n), z = _mm_setzero_ps();
    const __m128 m = rms ? z : _mm_mul_ps(s1, vn);
    const __m128 ms1 = _mm_mul_ps(m, s1);
    const unsigned redo =
        !rms && again
            ? _mm_cmp_ps_mask(ms1, _mm_mul_ps(_mm_set1_ps(0.75f), s2),
                              _CMP_GT_OQ)
            : 0;
    const __m128 ss = _mm_sub_ps(s2, ms1), msg = _mm_mul_ps(m, sg);
    const __m128 rstd = _mm_div_ps(
        _mm_set1_ps(1.0f),
        _mm_sqrt_ps(_mm_add_ps(_mm_mul_ps(ss, vn), _mm_set1_ps(eps))));
    const __m128 b =
        _mm_mul_ps(_mm_mul_ps(rstd, _mm_sub_ps(sgd, msg)), vn);
    _mm_storeu_ps(o->m, m);
    _mm_storeu_ps(o->rstd, rstd);
    _mm_storeu_ps(o->q, _mm_mul_ps(rstd, _mm_mul_ps(rstd, b)));
    _mm_storeu_ps(o->na, _mm_xor_ps(_mm_mul_ps(rstd, rms ? z : _mm_mul_ps(sg, vn)),
                                    _mm_set1_ps(-0.0f)));
    return redo;
}

float tb_cpu_nb_shift(float c, float m)
{
    return c + m;
}

void tb_cpu_norm_bw_sum_avx512(const tb_cpu_norm_bw_job *j, int i,
                               void *out)
{
    float *o = out;
    const int64_t D = j->D, st = j->np * D;
    const float *p = (const float *)j->part + i * D;
    int64_t k = 0;
    for (; k + 64 <= D; k += 64) {
        __m512 a[4];
        for (int u = 0; u < 4; u++)
            a[u] = _mm512_setzero_ps();
        for (int64_t c = 0; c < j->nch; c++)
            for (int u = 0; u < 4; u++)
                a[u] = _mm512_add_ps(
                    a[u], _mm512_loadu_ps(p + c * st + k + 16 * u));
        for (int u = 0; u < 4; u++)
            _mm512_storeu_ps(o + k + 16 * u, a[u]);
    }
    for (; k < D; k += 16) {
        const __mmask16 m = D - k >= 16 ? (__mmask16)0xffff
                                        : (__mmask16)((1u << (D - k)) - 1);
        __m512 a = _mm512_setzero_ps();
        for (int64_t c = 0; c < j->nch; c++)
            a = _mm512_add_ps(a, _mm512_maskz_loadu_ps(m, p + c * st + k));
        _mm512_mask_storeu_ps(o + k, m, a);
    }
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
                              out, p, nb_bw_f32,
                              tb_cpu_norm_bw_sum_avx512);
}

int TB_CPU_KFN(rms_norm_backward, f32, avx512)(void *ctx,
                                               const tb_tensor *in,
                                               tb_tensor *out,
                                               const tb_params *p)
{
    return tb_cpu_norm_bw_run(ctx, TB_OP_rms_norm_backward, TB_F32, in,
                              out, p, nb_bw_f32,
                              tb_cpu_norm_bw_sum_avx512);
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
