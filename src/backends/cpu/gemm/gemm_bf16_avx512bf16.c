/* The bf16 GEMM's packing, micro-kernel and blocking loops on
 * AVX512_BF16 (contract: gemm_kernels.h, tb_gemm_bf16_block_avx512bf16;
 * the framework around it, argument checks, the work split and the
 * buffers: gemm.c's tb_gemm_bf16_ep).
 *
 * Built with only the avx512bf16 level's flags (cpu_avx512bf16_args);
 * the framework calls it only after checking that the CPU has the
 * level.
 *
 * vdpbf16ps multiplies pairs: each f32 lane of the accumulator gets
 * a[2i] * b[2i] + a[2i+1] * b[2i+1].  So both operands are packed in
 * pairs of consecutive k (K odd: the last pair's second half is zero):
 *  - A in micro-panels of MR = 12 rows: per pair step, 12 32-bit words
 *    (A[r][2q], A[r][2q+1]), one per row, each broadcast to a vector;
 *  - B in micro-panels of NR = 32 columns: per pair step, 32 words
 *    (B[2q][j], B[2q+1][j]), two vectors of 16 columns.
 * Register tile: 12 rows x 2 vectors of 16 f32 sums (24 accumulators,
 * 24 independent vdpbf16ps per pair step against its latency of 5-6
 * cycles), 2 B vectors, the broadcasts folded into the instruction's
 * memory operand.  Blocking as the f32 GEMM (gemm_impl.inc): jc (NC
 * columns of B, packed per depth block, in L3), pc (KSUB depth blocks of
 * KC, K split evenly, KC even), ic (MC rows of A packed, in L2), jr (a
 * B micro-panel of KC/2 x 32 words = 24 KiB, in L1), ir.
 *
 * Sums are f32 and leave the registers after each depth block: the
 * first block stores them (to the caller's f32 buffer, acc), later ones
 * add to them, and the last one adds bias (bf16 widened), applies relu
 * and rounds each output once to bf16 (round to nearest even, NaN kept
 * quiet: ops/half.h's tb_f32_to_bf16, in integer arithmetic, so the
 * bits are the portable narrowing's).  A call whose K fits one depth
 * block never touches acc. */
#include <immintrin.h>
#include <stdint.h>

#include "gemm.h"
#include "gemm_kernels.h"
#include "gemm_tr16.h"

#define MR TB_GEMM_BF16_MR
#define NR TB_GEMM_BF16_NR

/* Prefetch distances in pair steps: the packed A panel (streamed from
 * L2) and the B panel (in L1; past its end the next panel). */
#define PF_K 8
#define PF_KB 8
/* Pair steps before the end of a call at which the tile's partial sums
 * are prefetched into L1. */
#define PF_C 24

/* ---- packing -------------------------------------------------------- */

/* Rows [0, mc), depth [0, kc) of A (row stride lda, bf16) into
 * ceil(mc/MR) micro-panels of MR x ceil(kc/2) words:
 * ap[p*MR*kp + q*MR + r] = A[p*MR+r][2q] | A[p*MR+r][2q+1] << 16; rows
 * past mc and k past kc are zero. */
static void pack_a(uint32_t *restrict ap, const uint16_t *restrict A,
                   int64_t lda, int64_t mc, int64_t kc)
{
    const int64_t kp = (kc + 1) / 2, full = kc / 2;
    for (int64_t i0 = 0; i0 < mc; i0 += MR) {
        const int rows = mc - i0 < MR ? (int)(mc - i0) : MR;
        const uint16_t *src = A + i0 * lda;
        /* 16 pairs of 12 rows at a time: 16 x 16 words transposed in
         * registers, 12 lanes of each stored (rows past `rows` zero) */
        const __mmask16 rm = (__mmask16)((1u << MR) - 1);
        for (int64_t q = 0; q < full; q += 16) {
            const int qn = full - q < 16 ? (int)(full - q) : 16;
            const __mmask32 km = qn == 16 ? 0xffffffffu
                                          : (__mmask32)((1u << 2 * qn) - 1);
            __m512 v[16];
            for (int r = 0; r < 16; r++)
                v[r] = r < rows ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(
                                      km, src + r * lda + 2 * q))
                                : _mm512_setzero_ps();
            tb_gemm_tr16x16(v);
            for (int t = 0; t < qn; t++)
                _mm512_mask_storeu_ps(ap + (q + t) * MR, rm, v[t]);
        }
        if (kp > full) {
            int r = 0;
            for (; r < rows; r++)
                ap[full * MR + r] = src[r * lda + 2 * full];
            for (; r < MR; r++)
                ap[full * MR + r] = 0;
        }
        ap += MR * kp;
    }
}

/* Depth [0, kc), columns [0, nc) of B (row stride ldb, bf16) into
 * ceil(nc/NR) micro-panels of ceil(kc/2) x NR words:
 * bp[p*NR*kp + q*NR + j] = B[2q][p*NR+j] | B[2q+1][p*NR+j] << 16;
 * columns past nc and k past kc are zero. */
static void pack_b(uint32_t *restrict bp, const uint16_t *restrict B,
                   int64_t ldb, int64_t kc, int64_t nc)
{
    const int64_t kp = (kc + 1) / 2;
    for (int64_t j0 = 0; j0 < nc; j0 += NR) {
        const int64_t w = nc - j0 < NR ? nc - j0 : NR;
        const __mmask16 m0 = w >= 16 ? 0xffff : (__mmask16)((1u << w) - 1);
        const __mmask16 m1 =
            w >= 32 ? 0xffff
                    : w <= 16 ? 0 : (__mmask16)((1u << (w - 16)) - 1);
        uint32_t *d = bp + j0 * kp;
        const uint16_t *s = B + j0;
        for (int64_t q = 0; q < kp; q++) {
            const uint16_t *r0 = s + 2 * q * ldb;
            __m512i lo0 =
                _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m0, r0));
            __m512i lo1 =
                _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m1, r0 + 16));
            if (2 * q + 1 < kc) {
                const uint16_t *r1 = r0 + ldb;
                __m512i hi0 =
                    _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m0, r1));
                __m512i hi1 = _mm512_cvtepu16_epi32(
                    _mm256_maskz_loadu_epi16(m1, r1 + 16));
                lo0 = _mm512_or_si512(lo0, _mm512_slli_epi32(hi0, 16));
                lo1 = _mm512_or_si512(lo1, _mm512_slli_epi32(hi1, 16));
            }
            _mm512_storeu_si512(d + q * NR, lo0);
            _mm512_storeu_si512(d + q * NR + 16, lo1);
        }
    }
}

/* ---- the micro-kernel ----------------------------------------------- */

/* mode bits: the first depth block (no partial sums to add), the last
 * (bias, relu, round to bf16 into C; else the sums go to acc). */
#define UKR_FIRST 1
#define UKR_LAST 2

/* f32 -> bf16 bits in the low 16 bits of each lane: round to nearest
 * even; NaN: its upper half with the quiet bit set. */
static inline __m512i round_bf16(__m512 v)
{
    const __m512i x = _mm512_castps_si512(v);
    const __m512i lsb =
        _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)),
                         lsb),
        16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(
        _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
        _mm512_set1_epi32(0x7f800000));
    const __m512i q = _mm512_or_si512(_mm512_srli_epi32(x, 16),
                                      _mm512_set1_epi32(0x40));
    return _mm512_mask_mov_epi32(r, nan, q);
}

/* One row's 2 x 16 sums out (masks m0, m1: the columns present).  ep:
 * EP_RELU, and EP_ROW, bias the row's one value (else its columns'). */
#define EP_RELU 1
#define EP_ROW 2
static inline __attribute__((always_inline)) void
row_out(__m512 v0, __m512 v1, float *acc, uint16_t *c, __mmask16 m0,
        __mmask16 m1, int mode, const uint16_t *bias, int ep)
{
    if (!(mode & UKR_FIRST)) {
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, acc));
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, acc + 16));
    }
    if (!(mode & UKR_LAST)) {
        _mm512_mask_storeu_ps(acc, m0, v0);
        _mm512_mask_storeu_ps(acc + 16, m1, v1);
        return;
    }
    if (bias && (ep & EP_ROW)) {
        const __m512 b = _mm512_castsi512_ps(
            _mm512_set1_epi32((int)((uint32_t)bias[0] << 16)));
        v0 = _mm512_add_ps(v0, b);
        v1 = _mm512_add_ps(v1, b);
    } else if (bias) {
        const __m512i b0 = _mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m0, bias)), 16);
        const __m512i b1 = _mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m1, bias + 16)),
            16);
        v0 = _mm512_add_ps(v0, _mm512_castsi512_ps(b0));
        v1 = _mm512_add_ps(v1, _mm512_castsi512_ps(b1));
    }
    if (ep & EP_RELU) {
        /* x <= 0 (-0 included) gives +0; NaN is kept */
        const __m512 z = _mm512_setzero_ps();
        v0 = _mm512_mask_mov_ps(v0, _mm512_cmp_ps_mask(v0, z, _CMP_LE_OQ),
                                z);
        v1 = _mm512_mask_mov_ps(v1, _mm512_cmp_ps_mask(v1, z, _CMP_LE_OQ),
                                z);
    }
    _mm256_mask_storeu_epi16(c, m0, _mm512_cvtepi32_epi16(round_bf16(v0)));
    _mm256_mask_storeu_epi16(c + 16, m1,
                             _mm512_cvtepi32_epi16(round_bf16(v1)));
}

#define DP(acc, a, b) acc = _mm512_dpbf16_ps(acc, (__m512bh)(a), (__m512bh)(b))
#define BF_ROW(r)                                                         \
    do {                                                                  \
        const __m512i av = _mm512_set1_epi32((int)a[r]);                  \
        DP(c##r##_0, av, b0);                                             \
        DP(c##r##_1, av, b1);                                             \
    } while (0)
#define BF_OUT(r)                                                         \
    if ((r) < mre)                                                        \
    row_out(c##r##_0, c##r##_1, acc + (r) * ldacc, c + (r) * ldc, m0, m1, \
            mode, bias && (ep & EP_ROW) ? bias + (r) : bias, ep)

/* The mre x nre corner (mre <= MR, nre <= NR) of the tile
 * sum_q a-panel x b-panel over kp pair steps, out by mode: acc (row
 * stride ldacc, f32) and c (row stride ldc, bf16); bias: the tile's
 * first column's (first row's with EP_ROW). */
static void ukr(int64_t kp, const uint32_t *a, const uint32_t *b,
                float *acc, int64_t ldacc, uint16_t *c, int64_t ldc,
                int mre, int nre, int mode, const uint16_t *bias, int ep)
{
    __m512 c0_0, c0_1, c1_0, c1_1, c2_0, c2_1, c3_0, c3_1, c4_0, c4_1,
        c5_0, c5_1, c6_0, c6_1, c7_0, c7_1, c8_0, c8_1, c9_0, c9_1,
        c10_0, c10_1, c11_0, c11_1;
    c0_0 = c0_1 = c1_0 = c1_1 = c2_0 = c2_1 = c3_0 = c3_1 = c4_0 = c4_1 =
        c5_0 = c5_1 = c6_0 = c6_1 = c7_0 = c7_1 = c8_0 = c8_1 = c9_0 =
            c9_1 = c10_0 = c10_1 = c11_0 = c11_1 = _mm512_setzero_ps();
#define BF_STEP()                                                         \
    do {                                                                  \
        _mm_prefetch((const char *)(a + PF_K * MR), _MM_HINT_T0);         \
        _mm_prefetch((const char *)(b + PF_KB * NR), _MM_HINT_T0);        \
        _mm_prefetch((const char *)(b + PF_KB * NR + 16), _MM_HINT_T0);   \
        const __m512i b0 = _mm512_loadu_si512(b);                         \
        const __m512i b1 = _mm512_loadu_si512(b + 16);                    \
        BF_ROW(0);                                                        \
        BF_ROW(1);                                                        \
        BF_ROW(2);                                                        \
        BF_ROW(3);                                                        \
        BF_ROW(4);                                                        \
        BF_ROW(5);                                                        \
        BF_ROW(6);                                                        \
        BF_ROW(7);                                                        \
        BF_ROW(8);                                                        \
        BF_ROW(9);                                                        \
        BF_ROW(10);                                                       \
        BF_ROW(11);                                                       \
        a += MR;                                                          \
        b += NR;                                                          \
    } while (0)
    int64_t q = 0;
#pragma GCC unroll 4
    for (; q < kp - PF_C; q++)
        BF_STEP();
    /* the partial sums (or C) into L1 near the end (gemm_avx512.c's
     * PF_C: fetched at the start they were often evicted again) */
    if (!(mode & UKR_FIRST))
        for (int r = 0; r < mre; r++) {
            _mm_prefetch((const char *)(acc + r * ldacc), _MM_HINT_T0);
            _mm_prefetch((const char *)(acc + r * ldacc + 16), _MM_HINT_T0);
        }
#pragma GCC unroll 4
    for (; q < kp; q++)
        BF_STEP();
#undef BF_STEP
    const __mmask16 m0 =
        nre >= 16 ? 0xffff : (__mmask16)((1u << nre) - 1);
    const __mmask16 m1 = nre >= 32   ? 0xffff
                         : nre <= 16 ? 0
                                     : (__mmask16)((1u << (nre - 16)) - 1);
    BF_OUT(0);
    BF_OUT(1);
    BF_OUT(2);
    BF_OUT(3);
    BF_OUT(4);
    BF_OUT(5);
    BF_OUT(6);
    BF_OUT(7);
    BF_OUT(8);
    BF_OUT(9);
    BF_OUT(10);
    BF_OUT(11);
}

/* ---- the blocking loops --------------------------------------------- */

void tb_gemm_bf16_block_avx512bf16(const tb_gemm_bf16_job *j, uint32_t *ap,
                                   uint32_t *bp, int64_t m0, int64_t m1,
                                   int64_t n0, int64_t n1)
{
    const int64_t K = j->K, kc0 = j->kc, kstep = kc0 * j->ksub;
    if (m1 <= m0 || n1 <= n0)
        return;
    /* even row blocks of whole micro-panels, at most mc (gemm_impl.inc) */
    const int64_t nmb = (m1 - m0 + j->mc - 1) / j->mc;
    const int64_t mcb = ((m1 - m0 + nmb - 1) / nmb + MR - 1) / MR * MR;
    for (int64_t jc = n0; jc < n1; jc += j->nc) {
        const int64_t nc = n1 - jc < j->nc ? n1 - jc : j->nc;
        for (int64_t pc = 0; pc < K; pc += kstep) {
            const int64_t rest = K - pc;
            const int ns = (int)(rest < kstep ? (rest + kc0 - 1) / kc0
                                              : j->ksub);
#define KCS(s) (rest - (s) * kc0 < kc0 ? rest - (s) * kc0 : kc0)
            for (int s = 0; s < ns; s++)
                pack_b(bp + s * j->b_stride,
                       j->B + (pc + s * kc0) * j->ldb + jc, j->ldb, KCS(s),
                       nc);
            for (int64_t ic = m0; ic < m1; ic += mcb) {
                const int64_t mc = m1 - ic < mcb ? m1 - ic : mcb;
                for (int s = 0; s < ns; s++)
                    pack_a(ap + s * j->a_stride,
                           j->A + ic * j->lda + pc + s * kc0, j->lda, mc,
                           KCS(s));
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    const int nre = nc - jr < NR ? (int)(nc - jr) : NR;
                    const int64_t col = jc + jr;
                    for (int s = 0; s < ns; s++) {
                        const int64_t kcs = KCS(s), kp = (kcs + 1) / 2;
                        const int mode =
                            (pc == 0 && s == 0 ? UKR_FIRST : 0) |
                            (pc + s * kc0 + kcs >= K ? UKR_LAST : 0);
                        const uint32_t *b = bp + s * j->b_stride + jr * kp;
                        const uint32_t *a0 = ap + s * j->a_stride;
                        for (int64_t ir = 0; ir < mc; ir += MR) {
                            const int mre =
                                mc - ir < MR ? (int)(mc - ir) : MR;
                            const int64_t row = ic + ir;
                            /* the next tile's partial sums into L2 a
                             * call ahead (rows N apart: too few in a
                             * row for the hardware prefetcher) */
                            if (!(mode & UKR_FIRST) && ir + MR < mc) {
                                const char *nx = (const char *)(
                                    j->acc + (row + MR) * j->N + col);
                                const int64_t ld = j->N * 4;
                                for (int r = 0; r < MR; r++) {
                                    _mm_prefetch(nx + r * ld, _MM_HINT_T1);
                                    _mm_prefetch(nx + r * ld + 64,
                                                 _MM_HINT_T1);
                                }
                            }
                            ukr(kp, a0 + ir * kp, b,
                                j->acc ? j->acc + row * j->N + col : NULL,
                                j->N, j->C + row * j->ldc + col, j->ldc,
                                mre, nre, mode,
                                !j->bias     ? NULL
                                : j->row_bias ? j->bias + row
                                              : j->bias + col,
                                (j->relu ? EP_RELU : 0) |
                                    (j->row_bias ? EP_ROW : 0));
                        }
                    }
                }
            }
#undef KCS
        }
    }
}

/* ---- 16-bit transpose (tb_gemm_tr16_avx512bf16) -------------------- */

/* a[j] lane r <- a[r] lane j for 16 rows of 16 16-bit values: unpack
 * pairs of rows by 16, 32 and 64 bits, then swap 128-bit halves. */
static inline __attribute__((always_inline)) void tr16x16_u16(__m256i a[16])
{
    __m256i b[16], c[16], d[16];
    for (int i = 0; i < 8; i++) {
        b[2 * i] = _mm256_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
        b[2 * i + 1] = _mm256_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        c[4 * i] = _mm256_unpacklo_epi32(b[4 * i], b[4 * i + 2]);
        c[4 * i + 1] = _mm256_unpackhi_epi32(b[4 * i], b[4 * i + 2]);
        c[4 * i + 2] = _mm256_unpacklo_epi32(b[4 * i + 1], b[4 * i + 3]);
        c[4 * i + 3] = _mm256_unpackhi_epi32(b[4 * i + 1], b[4 * i + 3]);
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            d[8 * i + 2 * j] =
                _mm256_unpacklo_epi64(c[8 * i + j], c[8 * i + j + 4]);
            d[8 * i + 2 * j + 1] =
                _mm256_unpackhi_epi64(c[8 * i + j], c[8 * i + j + 4]);
        }
    for (int j = 0; j < 8; j++) {
        a[j] = _mm256_permute2x128_si256(d[j], d[j + 8], 0x20);
        a[j + 8] = _mm256_permute2x128_si256(d[j], d[j + 8], 0x31);
    }
}

void tb_gemm_tr16_avx512bf16(const uint16_t *src, uint16_t *dst, int64_t R,
                             int64_t C)
{
    const int64_t R16 = R / 16 * 16, C16 = C / 16 * 16;
    for (int64_t r0 = 0; r0 < R16; r0 += 16)
        for (int64_t c0 = 0; c0 < C16; c0 += 16) {
            __m256i a[16];
            for (int i = 0; i < 16; i++)
                a[i] = _mm256_loadu_si256(
                    (const __m256i *)(src + (r0 + i) * C + c0));
            tr16x16_u16(a);
            for (int i = 0; i < 16; i++)
                _mm256_storeu_si256((__m256i *)(dst + (c0 + i) * R + r0),
                                    a[i]);
        }
    /* the edges: columns past C16 of every row, rows past R16 */
    for (int64_t r = 0; r < R; r++)
        for (int64_t q = r < R16 ? C16 : 0; q < C; q++)
            dst[q * R + r] = src[r * C + q];
}
