/* matmul_int8's AVX2 micro-kernel (qgemm.h): 4 rows x 16 columns of
 * int32 sums in eight registers; per K pair, two loads of b's panel (16
 * columns x 2 k as s16), and per row one broadcast of a's s16 pair and
 * two vpmaddwd (a0*b0 + a1*b1 per column, exact in int32).  Tails: rows
 * one at a time, columns through a 16-wide buffer. */
#include <immintrin.h>
#include <string.h>

#include "../../ops/quant.h"
#include "qgemm.h"

/* Rows i..i+R (R <= 4) x panel pn; writes the valid columns of out. */
static inline void tile(const tb_qgemm_args *g, int64_t i, int R,
                        int64_t pn)
{
    __m256i acc[4][2];
    for (int r = 0; r < 4; r++)
        acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    const int16_t *b = g->bp + pn * g->K2 * 32;
    const int64_t ka = 2 * g->K2;
    for (int64_t kk = 0; kk < g->K2; kk++) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(b + kk * 32));
        const __m256i b1 =
            _mm256_loadu_si256((const __m256i *)(b + kk * 32 + 16));
        for (int r = 0; r < 4; r++) {
            if (r >= R)
                break;
            int32_t pair;
            memcpy(&pair, g->ap + (i + r) * ka + 2 * kk, sizeof pair);
            const __m256i a = _mm256_set1_epi32(pair);
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(a, b0));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(a, b1));
        }
    }
    const __m256 sab = _mm256_set1_ps(g->a_scale * g->b_scale);
    const int64_t n0 = pn * 16, nv = g->N - n0 < 16 ? g->N - n0 : 16;
    for (int r = 0; r < R; r++) {
        float *o = g->out + (i + r) * g->N + n0;
        __m256 y0 = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][0]), sab);
        __m256 y1 = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][1]), sab);
        if (nv == 16) {
            _mm256_storeu_ps(o, y0);
            _mm256_storeu_ps(o + 8, y1);
        } else {
            float buf[16];
            _mm256_storeu_ps(buf, y0);
            _mm256_storeu_ps(buf + 8, y1);
            memcpy(o, buf, (size_t)nv * sizeof *o);
        }
    }
}

/* Rows in blocks of QA_MB (a multiple of 4), each block's tiles panel by
 * panel: b's panel (16 columns x K as s16) is read from memory once per
 * block and then from the L2 for the block's other tiles (a loop of
 * every panel per 4 rows read all of b per 4 rows: at 4096^3 half the
 * f32 GEMM's speed). */
#define QA_MB 64

void tb_qgemm_rows_avx2(const tb_qgemm_args *g, int64_t m0, int64_t m1)
{
    const int64_t np = (g->N + 15) / 16;
    for (int64_t i0 = m0; i0 < m1; i0 += QA_MB) {
        const int64_t i1 = m1 - i0 < QA_MB ? m1 : i0 + QA_MB;
        for (int64_t pn = 0; pn < np; pn++)
            for (int64_t i = i0; i < i1; i += 4) {
                const int R = i1 - i < 4 ? (int)(i1 - i) : 4;
                if (R == 4)
                    tile(g, i, 4, pn);
                else
                    tile(g, i, R, pn);
            }
    }
}
