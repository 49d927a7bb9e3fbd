/* matmul_int8 at the avx512bf16 level (qgemm.h): quantizing packers and a
 * 12 x 32 micro-kernel of vpdpbusd (AVX512_VNNI), built with that level's
 * flags only.
 *
 * Quantization: ops/quant.h's steps on 16 lanes, each the same IEEE
 * operation as the scalar code: a correctly rounded divide, a round to
 * nearest even (vrndscaleps, as nearbyintf in the default mode), the
 * add of the zero point, then vmaxps(q, lo) and vminps(q, hi), which
 * return their second operand for a NaN exactly as "q > lo ? q : lo"
 * and "q < hi ? q : hi" do, and a truncating conversion of the integral
 * value.  So the packed bytes are the C row's, bit for bit.
 *
 * The kernel: per quad of K, two loads of b's panel (32 columns x 4 k as
 * s8), and per row one broadcast of a's four u8 and two vpdpbusd (four
 * products summed into each column's int32, wrapping, never saturating:
 * see qgemm.h for why the sums are exact).  24 accumulators, 2 for b, 1
 * for a: 27 of the 32 zmm.  Row and column tails: the panels are zero
 * padded, the loads and stores of c masked.
 *
 * Blocking (after the f32 GEMM's, gemm_impl.inc): a thread's rows in
 * blocks of QG_MCP panels, K in blocks of QG_KCQ quads (the A block
 * QG_MCP x 12 x 4 QG_KCQ bytes stays in L2 across all of b's panels; each
 * b micro-panel, 32 x 4 QG_KCQ bytes, across the block's row panels).
 * Between K blocks the int32 partial sums live in out itself (an f32 has
 * an int32's size); the last block adds its sums, converts them to f32
 * and scales them as tb_quant_out does. */
#include <immintrin.h>
#include <stdint.h>

#include "qgemm.h"

#define MR TB_QGEMM512_MR
#define NR TB_QGEMM512_NR
/* Row panels per block (192 rows) and quads per depth block (2048 k). */
#ifndef QG_MCP
#define QG_MCP 16
#endif
#ifndef QG_KCQ
#define QG_KCQ 512
#endif

_Static_assert(MR == 12 && NR == 32, "the kernel's registers");

/* ---- quantization (ops/quant.h, 16 lanes) ---- */

typedef struct qparam {
    __m512 s, z, lo, hi;
} qparam;

static inline __m512i quant16(__m512 x, const qparam *q)
{
    __m512 v = _mm512_roundscale_ps(_mm512_div_ps(x, q->s),
                                    _MM_FROUND_TO_NEAREST_INT |
                                        _MM_FROUND_NO_EXC);
    v = _mm512_add_ps(v, q->z);
    v = _mm512_max_ps(v, q->lo); /* NaN: lo */
    v = _mm512_min_ps(v, q->hi);
    return _mm512_cvttps_epi32(v);
}

static inline __mmask16 lanes(int64_t n)
{
    return n >= 16 ? (__mmask16)0xffff
                   : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

void tb_qgemm_pack_a_avx512bf16(const tb_qgemm512_args *g, int64_t p0,
                                int64_t p1)
{
    const qparam q = {_mm512_set1_ps(g->a_scale),
                      _mm512_set1_ps((float)g->a_zero),
                      _mm512_setzero_ps(), _mm512_set1_ps(255.0f)};
    const int64_t K = g->K, KQ = g->KQ;
    for (int64_t ip = p0; ip < p1; ip++) {
        int32_t *panel = g->ap + ip * KQ * MR;
        /* 16 k (4 quads) of every row at a time; four rows' 4 quads
         * transposed so that each quad's 4 rows are one 16-byte store */
        for (int64_t k0 = 0; k0 < K; k0 += 16) {
            const __mmask16 km = lanes(K - k0);
            for (int r0 = 0; r0 < MR; r0 += 4) {
                __m128i x[4];
                for (int t = 0; t < 4; t++) {
                    const int64_t i = ip * MR + r0 + t;
                    if (i >= g->M) {
                        x[t] = _mm_setzero_si128();
                        continue;
                    }
                    const __m512 v =
                        _mm512_maskz_loadu_ps(km, g->a + i * K + k0);
                    x[t] = _mm512_cvtepi32_epi8(
                        _mm512_maskz_mov_epi32(km, quant16(v, &q)));
                }
                const __m128i t0 = _mm_unpacklo_epi32(x[0], x[1]);
                const __m128i t1 = _mm_unpacklo_epi32(x[2], x[3]);
                const __m128i t2 = _mm_unpackhi_epi32(x[0], x[1]);
                const __m128i t3 = _mm_unpackhi_epi32(x[2], x[3]);
                const __m128i y[4] = {
                    _mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1),
                    _mm_unpacklo_epi64(t2, t3), _mm_unpackhi_epi64(t2, t3)};
                for (int j = 0; j < 4 && k0 / 4 + j < KQ; j++)
                    _mm_storeu_si128(
                        (__m128i *)(panel + (k0 / 4 + j) * MR + r0), y[j]);
            }
        }
    }
}

void tb_qgemm_pack_b_avx512bf16(const tb_qgemm512_args *g, int64_t p0,
                                int64_t p1)
{
    const qparam q = {_mm512_set1_ps(g->b_scale), _mm512_setzero_ps(),
                      _mm512_set1_ps(-128.0f), _mm512_set1_ps(127.0f)};
    const __m512i lo8 = _mm512_set1_epi32(0xff);
    const int64_t K = g->K, N = g->N, KQ = g->KQ;
    for (int64_t jp = p0; jp < p1; jp++)
        for (int h = 0; h < NR / 16; h++) {
            const int64_t n0 = jp * NR + h * 16;
            const __mmask16 cm = lanes(N - n0);
            __m512i sum = _mm512_setzero_si512();
            int32_t *dst = g->bp + jp * KQ * NR + h * 16;
            for (int64_t kq = 0; kq < KQ; kq++) {
                __m512i d = _mm512_setzero_si512();
                for (int t = 0; t < 4 && 4 * kq + t < K; t++) {
                    const __m512 v = _mm512_maskz_loadu_ps(
                        cm, g->b + (4 * kq + t) * N + n0);
                    const __m512i s = _mm512_maskz_mov_epi32(cm,
                                                             quant16(v, &q));
                    sum = _mm512_add_epi32(sum, s);
                    d = _mm512_or_si512(
                        d, _mm512_sll_epi32(_mm512_and_si512(s, lo8),
                                            _mm_cvtsi32_si128(8 * t)));
                }
                _mm512_storeu_si512(dst + kq * NR, d);
            }
            /* -a_zero * column sum: |.| <= 255 * 128 * K, in int32 */
            _mm512_storeu_si512(
                g->corr + n0,
                _mm512_mullo_epi32(sum, _mm512_set1_epi32(-g->a_zero)));
        }
}

/* ---- the micro-kernel ---- */

/* One 12 x 32 tile over kcq quads: c (row stride ldc) holds R <= 12 rows
 * of the tile, the columns of masks m0 and m1.  corr non-NULL: the first
 * depth block, the sums start from corr; else from the int32 partial
 * sums in c.  last: the sums are final, c gets them as f32 times sab;
 * else as int32. */
static inline __attribute__((always_inline)) void
tile(const int32_t *restrict ap, const int32_t *restrict bp, int64_t kcq,
     float *c, int64_t ldc, int R, __mmask16 m0, __mmask16 m1,
     const int32_t *corr, int last, float sab)
{
    __m512i acc[MR][2];
    if (corr) {
        const __m512i c0 = _mm512_loadu_si512(corr);
        const __m512i c1 = _mm512_loadu_si512(corr + 16);
#pragma GCC unroll 12
        for (int r = 0; r < MR; r++) {
            acc[r][0] = c0;
            acc[r][1] = c1;
        }
    } else {
#pragma GCC unroll 12
        for (int r = 0; r < MR; r++) {
            const __mmask16 k0 = r < R ? m0 : 0, k1 = r < R ? m1 : 0;
            acc[r][0] = _mm512_maskz_loadu_epi32(k0, c + r * ldc);
            acc[r][1] = _mm512_maskz_loadu_epi32(k1, c + r * ldc + 16);
        }
    }
    for (int64_t kq = 0; kq < kcq; kq++) {
        const __m512i b0 = _mm512_loadu_si512(bp);
        const __m512i b1 = _mm512_loadu_si512(bp + 16);
#pragma GCC unroll 12
        for (int r = 0; r < MR; r++) {
            const __m512i a = _mm512_set1_epi32(ap[r]);
            acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], a, b0);
            acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], a, b1);
        }
        ap += MR;
        bp += NR;
    }
    const __m512 s = _mm512_set1_ps(sab);
    /* constant indices only (r < R inside): acc stays in registers */
#pragma GCC unroll 12
    for (int r = 0; r < MR; r++) {
        if (r >= R)
            break;
        float *o = c + r * ldc;
        if (last) {
            _mm512_mask_storeu_ps(
                o, m0, _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][0]), s));
            _mm512_mask_storeu_ps(
                o + 16, m1, _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][1]), s));
        } else {
            _mm512_mask_storeu_epi32(o, m0, acc[r][0]);
            _mm512_mask_storeu_epi32(o + 16, m1, acc[r][1]);
        }
    }
}

void tb_qgemm_rows_avx512bf16(const tb_qgemm512_args *g, int64_t p0,
                              int64_t p1)
{
    const int64_t KQ = g->KQ, N = g->N, np = (N + NR - 1) / NR;
    /* one f32 product, as tb_quant_out */
    const float sab = g->a_scale * g->b_scale;
    for (int64_t i0 = p0; i0 < p1; i0 += QG_MCP) {
        const int64_t i1 = p1 - i0 < QG_MCP ? p1 : i0 + QG_MCP;
        /* at least one block: K = 0 would leave out = corr = 0 */
        for (int64_t k0 = 0; k0 == 0 || k0 < KQ; k0 += QG_KCQ) {
            const int64_t kcq = KQ - k0 < QG_KCQ ? KQ - k0 : QG_KCQ;
            const int last = k0 + kcq >= KQ;
            for (int64_t jp = 0; jp < np; jp++) {
                const int64_t n0 = jp * NR;
                const __mmask16 m0 = lanes(N - n0), m1 = lanes(N - n0 - 16);
                const int32_t *b = g->bp + (jp * KQ + k0) * NR;
                const int32_t *corr = k0 == 0 ? g->corr + n0 : NULL;
                for (int64_t ip = i0; ip < i1; ip++) {
                    const int64_t rows = g->M - ip * MR;
                    tile(g->ap + (ip * KQ + k0) * MR, b, kcq,
                         g->out + ip * MR * N + n0, N,
                         rows < MR ? (int)rows : MR, m0, m1, corr, last,
                         sab);
                }
            }
        }
    }
}
