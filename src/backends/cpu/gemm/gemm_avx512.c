/* AVX-512 GEMM micro-kernels (contract: gemm_kernels.h).
 *
 * Built with only -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma; the
 * framework calls these only after checking that the CPU and OS support
 * AVX-512.
 *
 * Register tile: 12 rows x 2 ZMM vectors of C (24 accumulators), so 24
 * independent FMAs per k step: enough to cover FMA latency (4-5 cycles)
 * times two FMA pipes.  Each k step loads two vectors of packed B and
 * broadcasts 12 values of packed A (each broadcast feeds two FMAs),
 * using 27 of the 32 ZMM registers.
 * The packed A panel is streamed (from L2 in the framework's blocking),
 * so it is prefetched a few k steps ahead; the B panel stays in L1 and
 * is prefetched too (f32; see PF_KB), and C is prefetched late. */
#include <immintrin.h>
#include <stdint.h>

#include "gemm_kernels.h"
#include "gemm_tr16.h"

/* Prefetch distance in k steps for the packed A panel (streamed from L2
 * by the framework's blocking). */
#define PF_K 8

/* Prefetch distance in k steps (2 KiB for f32) for the packed B panel.
 * The panel is reused from L1 by consecutive calls, but the first calls
 * on a new panel (and every call, once A and C traffic have evicted
 * parts of it) would otherwise wait on L2 line by line; past its end the
 * prefetches run into the next panel, which the framework packs right
 * after this one.  Worth about 5% at 4096^3 on a Zen 5 VM. */
#define PF_KB 16

/* The C tile is prefetched into L1 this many k steps (about 12 cycles
 * each) before the end of the loop, not at its start: the framework has
 * already brought it into L2 (gemm_impl.inc), and a tile fetched at the
 * start had to survive kc steps of A and B streaming through L1 while
 * its 12 rows, ldc apart (often a multiple of 4 KiB), share one or two
 * L1 sets, so it was often evicted again before the stores. */
#define PF_C 48

/* ---- f32: 12 x 32 -------------------------------------------------- */

#define F32_ROW(r)                                                        \
    do {                                                                  \
        __m512 av = _mm512_set1_ps(a[r]);                                 \
        c##r##_0 = _mm512_fmadd_ps(av, b0, c##r##_0);                     \
        c##r##_1 = _mm512_fmadd_ps(av, b1, c##r##_1);                     \
    } while (0)

#define F32_OUT(r)                                                        \
    do {                                                                  \
        float *cr = c + (r) * ldc;                                        \
        if (accumulate) {                                                 \
            c##r##_0 = _mm512_add_ps(c##r##_0, _mm512_loadu_ps(cr));      \
            c##r##_1 = _mm512_add_ps(c##r##_1, _mm512_loadu_ps(cr + 16)); \
        }                                                                 \
        _mm512_storeu_ps(cr, c##r##_0);                                   \
        _mm512_storeu_ps(cr + 16, c##r##_1);                              \
    } while (0)

void tb_gemm_ukr_f32_avx512_12x32(int64_t kc, const float *a,
                                  const float *b, float *c, int64_t ldc,
                                  int accumulate)
{
    __m512 c0_0, c0_1, c1_0, c1_1, c2_0, c2_1, c3_0, c3_1, c4_0, c4_1,
        c5_0, c5_1, c6_0, c6_1, c7_0, c7_1, c8_0, c8_1, c9_0, c9_1,
        c10_0, c10_1, c11_0, c11_1;
    c0_0 = c0_1 = c1_0 = c1_1 = c2_0 = c2_1 = c3_0 = c3_1 = c4_0 = c4_1 =
        c5_0 = c5_1 = c6_0 = c6_1 = c7_0 = c7_1 = c8_0 = c8_1 = c9_0 =
            c9_1 = c10_0 = c10_1 = c11_0 = c11_1 = _mm512_setzero_ps();

#define F32_STEP()                                                        \
    do {                                                                  \
        _mm_prefetch((const char *)(a + PF_K * 12), _MM_HINT_T0);         \
        _mm_prefetch((const char *)(b + PF_KB * 32), _MM_HINT_T0);        \
        _mm_prefetch((const char *)(b + PF_KB * 32 + 16), _MM_HINT_T0);   \
        __m512 b0 = _mm512_loadu_ps(b);                                   \
        __m512 b1 = _mm512_loadu_ps(b + 16);                              \
        F32_ROW(0);                                                       \
        F32_ROW(1);                                                       \
        F32_ROW(2);                                                       \
        F32_ROW(3);                                                       \
        F32_ROW(4);                                                       \
        F32_ROW(5);                                                       \
        F32_ROW(6);                                                       \
        F32_ROW(7);                                                       \
        F32_ROW(8);                                                       \
        F32_ROW(9);                                                       \
        F32_ROW(10);                                                      \
        F32_ROW(11);                                                      \
        a += 12;                                                          \
        b += 32;                                                          \
    } while (0)

    int64_t k = 0;
#pragma GCC unroll 4
    for (; k < kc - PF_C; k++)
        F32_STEP();
    for (int r = 0; r < 12; r++) {
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + r * ldc + 31), _MM_HINT_T0);
    }
#pragma GCC unroll 4
    for (; k < kc; k++)
        F32_STEP();
#undef F32_STEP

    F32_OUT(0);
    F32_OUT(1);
    F32_OUT(2);
    F32_OUT(3);
    F32_OUT(4);
    F32_OUT(5);
    F32_OUT(6);
    F32_OUT(7);
    F32_OUT(8);
    F32_OUT(9);
    F32_OUT(10);
    F32_OUT(11);
}

/* ---- f64: 12 x 16 -------------------------------------------------- */

#define F64_ROW(r)                                                        \
    do {                                                                  \
        __m512d av = _mm512_set1_pd(a[r]);                                \
        c##r##_0 = _mm512_fmadd_pd(av, b0, c##r##_0);                     \
        c##r##_1 = _mm512_fmadd_pd(av, b1, c##r##_1);                     \
    } while (0)

#define F64_OUT(r)                                                        \
    do {                                                                  \
        double *cr = c + (r) * ldc;                                       \
        if (accumulate) {                                                 \
            c##r##_0 = _mm512_add_pd(c##r##_0, _mm512_loadu_pd(cr));      \
            c##r##_1 = _mm512_add_pd(c##r##_1, _mm512_loadu_pd(cr + 8));  \
        }                                                                 \
        _mm512_storeu_pd(cr, c##r##_0);                                   \
        _mm512_storeu_pd(cr + 8, c##r##_1);                               \
    } while (0)

void tb_gemm_ukr_f64_avx512_12x16(int64_t kc, const double *a,
                                  const double *b, double *c, int64_t ldc,
                                  int accumulate)
{
    __m512d c0_0, c0_1, c1_0, c1_1, c2_0, c2_1, c3_0, c3_1, c4_0, c4_1,
        c5_0, c5_1, c6_0, c6_1, c7_0, c7_1, c8_0, c8_1, c9_0, c9_1,
        c10_0, c10_1, c11_0, c11_1;
    c0_0 = c0_1 = c1_0 = c1_1 = c2_0 = c2_1 = c3_0 = c3_1 = c4_0 = c4_1 =
        c5_0 = c5_1 = c6_0 = c6_1 = c7_0 = c7_1 = c8_0 = c8_1 = c9_0 =
            c9_1 = c10_0 = c10_1 = c11_0 = c11_1 = _mm512_setzero_pd();

    for (int r = 0; r < 12; r++) {
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + r * ldc + 15), _MM_HINT_T0);
    }

#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; k++) {
        _mm_prefetch((const char *)(a + PF_K * 12), _MM_HINT_T0);
        _mm_prefetch((const char *)(a + PF_K * 12 + 8), _MM_HINT_T0);
        __m512d b0 = _mm512_loadu_pd(b);
        __m512d b1 = _mm512_loadu_pd(b + 8);
        F64_ROW(0);
        F64_ROW(1);
        F64_ROW(2);
        F64_ROW(3);
        F64_ROW(4);
        F64_ROW(5);
        F64_ROW(6);
        F64_ROW(7);
        F64_ROW(8);
        F64_ROW(9);
        F64_ROW(10);
        F64_ROW(11);
        a += 12;
        b += 16;
    }

    F64_OUT(0);
    F64_OUT(1);
    F64_OUT(2);
    F64_OUT(3);
    F64_OUT(4);
    F64_OUT(5);
    F64_OUT(6);
    F64_OUT(7);
    F64_OUT(8);
    F64_OUT(9);
    F64_OUT(10);
    F64_OUT(11);
}

/* ---- edge tiles: m x n of a 12-row tile ---------------------------- */

/* The m x n corner (m <= 12, n <= NR) of the tile the full kernel would
 * compute from the same panels, written straight to C: only m rows of
 * FMAs (the packed A panel keeps its 12-value k steps; its padding rows
 * are not read), one vector column when n fits in one, masked loads and
 * stores past n; B's rows ldb apart (the packed panel's NR, or B in
 * place: gemm_kernels.h).  Each element's sum is the full kernel's (zero, then
 * FMAs in k order, then + C when accumulating): the same bits.  Inlined
 * per m and vector count by the switches below, so the accumulator
 * arrays live in registers.  (At 128 x 128 the 8-row edge ran the 12-row
 * kernel into a scratch tile and copied it out: a third of its FMAs on
 * zeros; at 256, 256 = 21 x 12 + 4: two thirds.) */
#define EDGE_KERNEL(name, T, V, VL, setzero, set1, loadu, fmadd, add,      \
                    maskz_loadu, mask_storeu, MT)                          \
    static inline __attribute__((always_inline)) void name(               \
        const int m, const int nv, int64_t n, int64_t kc, const T *a,     \
        const T *b, int64_t ldb, T *c, int64_t ldc, int accumulate)       \
    {                                                                     \
        V acc[12][2];                                                     \
        const MT k0 = n >= VL ? (MT)~(MT)0 : (MT)(((MT)1 << n) - 1);      \
        const MT k1 = n >= 2 * VL   ? (MT)~(MT)0                          \
                      : n <= VL     ? (MT)0                               \
                                    : (MT)(((MT)1 << (n - VL)) - 1);      \
        _Pragma("GCC unroll 12") for (int r = 0; r < m; r++)              \
            _Pragma("GCC unroll 2") for (int v = 0; v < nv; v++)          \
                acc[r][v] = setzero();                                    \
        for (int64_t k = 0; k < kc; k++) {                                \
            _mm_prefetch((const char *)(a + PF_K * 12), _MM_HINT_T0);     \
            V b0 = maskz_loadu(k0, b);                                    \
            V b1 = nv > 1 ? maskz_loadu(k1, b + VL) : b0;                 \
            _Pragma("GCC unroll 12") for (int r = 0; r < m; r++)          \
            {                                                             \
                V av = set1(a[r]);                                        \
                acc[r][0] = fmadd(av, b0, acc[r][0]);                     \
                if (nv > 1)                                               \
                    acc[r][1] = fmadd(av, b1, acc[r][1]);                 \
            }                                                             \
            a += 12;                                                      \
            b += ldb;                                                     \
        }                                                                 \
        _Pragma("GCC unroll 12") for (int r = 0; r < m; r++)              \
        {                                                                 \
            T *cr = c + r * ldc;                                          \
            _Pragma("GCC unroll 2") for (int v = 0; v < nv; v++)          \
            {                                                             \
                const MT km = v ? k1 : k0;                                \
                V o = acc[r][v];                                          \
                if (accumulate)                                           \
                    o = add(o, maskz_loadu(km, cr + v * VL));             \
                mask_storeu(cr + v * VL, km, o);                          \
            }                                                             \
        }                                                                 \
    }

EDGE_KERNEL(f32_edge, float, __m512, 16, _mm512_setzero_ps, _mm512_set1_ps,
            _mm512_loadu_ps, _mm512_fmadd_ps, _mm512_add_ps,
            _mm512_maskz_loadu_ps, _mm512_mask_storeu_ps, __mmask16)
EDGE_KERNEL(f64_edge, double, __m512d, 8, _mm512_setzero_pd,
            _mm512_set1_pd, _mm512_loadu_pd, _mm512_fmadd_pd,
            _mm512_add_pd, _mm512_maskz_loadu_pd, _mm512_mask_storeu_pd,
            __mmask8)

#define EDGE_CASE(fn, mm)                                                 \
    case mm:                                                              \
        if (n > VLEN)                                                     \
            fn(mm, 2, n, kc, a, b, ldb, c, ldc, accumulate);              \
        else                                                              \
            fn(mm, 1, n, kc, a, b, ldb, c, ldc, accumulate);              \
        return;
#define EDGE_SWITCH(fn)                                                   \
    switch (m) {                                                          \
        EDGE_CASE(fn, 1) EDGE_CASE(fn, 2) EDGE_CASE(fn, 3)                \
        EDGE_CASE(fn, 4) EDGE_CASE(fn, 5) EDGE_CASE(fn, 6)                \
        EDGE_CASE(fn, 7) EDGE_CASE(fn, 8) EDGE_CASE(fn, 9)                \
        EDGE_CASE(fn, 10) EDGE_CASE(fn, 11) EDGE_CASE(fn, 12)             \
    default:                                                              \
        return;                                                           \
    }

void tb_gemm_edge_f32_avx512_12x32(int64_t m, int64_t n, int64_t kc,
                                   const float *a, const float *b,
                                   int64_t ldb, float *c, int64_t ldc,
                                   int accumulate)
{
#define VLEN 16
    EDGE_SWITCH(f32_edge)
#undef VLEN
}

void tb_gemm_edge_f64_avx512_12x16(int64_t m, int64_t n, int64_t kc,
                                   const double *a, const double *b,
                                   int64_t ldb, double *c, int64_t ldc,
                                   int accumulate)
{
#define VLEN 8
    EDGE_SWITCH(f64_edge)
#undef VLEN
}

/* ---- f32 packing of A (and of a transposed B) ---------------------- */

/* Chunk rows [c0, c0 + cw) (cw <= 16) of one MR-row panel, of which the
 * first `rows` are A's (the rest zero), over depth [k0, k0 + kn)
 * (kn <= 16): 16 x 16 in registers, transposed, kn vectors of cw lanes
 * stored k-major. */
static inline __attribute__((always_inline)) void
pack_chunk(float *ap, const float *src, int64_t lda, int MR, int c0, int cw,
           int rows, int64_t k0, int kn)
{
    const __mmask16 km = kn >= 16 ? (__mmask16)0xffff
                                  : (__mmask16)((1u << kn) - 1);
    const __mmask16 rm = (__mmask16)((1u << cw) - 1);
    __m512 r[16];
    for (int i = 0; i < 16; i++)
        r[i] = i < cw && c0 + i < rows
                   ? _mm512_maskz_loadu_ps(km, src + (c0 + i) * lda + k0)
                   : _mm512_setzero_ps();
    tb_gemm_tr16x16(r);
    for (int q = 0; q < kn; q++)
        _mm512_mask_storeu_ps(ap + (k0 + q) * MR + c0, rm, r[q]);
}

static inline __attribute__((always_inline)) void
pack_a_f32(float *ap, const float *A, int64_t lda, int64_t mc, int64_t kc,
           const int MR)
{
    for (int64_t i0 = 0; i0 < mc; i0 += MR) {
        const int rows = mc - i0 < MR ? (int)(mc - i0) : MR;
        const float *src = A + i0 * lda;
        const int pf = mc - i0 - MR <= 0 ? 0
                       : mc - i0 - MR < MR ? (int)(mc - i0 - MR) : MR;
        for (int64_t k0 = 0; k0 < kc; k0 += 16) {
            const int kn = kc - k0 < 16 ? (int)(kc - k0) : 16;
            for (int r = 0; r < pf; r++)
                _mm_prefetch((const char *)(src + (MR + r) * lda + k0),
                             _MM_HINT_T0);
            for (int c0 = 0; c0 < MR; c0 += 16)
                pack_chunk(ap, src, lda, MR, c0,
                           MR - c0 < 16 ? MR - c0 : 16, rows, k0, kn);
        }
        ap += MR * kc;
    }
}

void tb_gemm_pack_a_f32_avx512(float *ap, const float *A, int64_t lda,
                               int64_t mc, int64_t kc, int mr)
{
    switch (mr) {
    case 12: pack_a_f32(ap, A, lda, mc, kc, 12); break;
    case 16: pack_a_f32(ap, A, lda, mc, kc, 16); break;
    case 32: pack_a_f32(ap, A, lda, mc, kc, 32); break;
    default: pack_a_f32(ap, A, lda, mc, kc, mr); break;
    }
}

/* ---- epilogues (tb_gemm_*_ep) -------------------------------------- */

/* Row by row in full vectors plus one masked tail: the masked load and
 * store touch no element outside the block.  relu keeps lanes that are
 * not <= 0 (NLE_UQ is true for NaN) and zeroes the rest (-0 included). */
void tb_gemm_epi_f32_avx512(float *c, int64_t ldc, int64_t m, int64_t n,
                            const float *bias, int relu)
{
    const __m512 z = _mm512_setzero_ps();
    for (int64_t i = 0; i < m; i++) {
        float *cr = c + i * ldc;
        for (int64_t q = 0; q < n; q += 16) {
            const __mmask16 k =
                n - q >= 16 ? (__mmask16)0xffff
                            : (__mmask16)((1u << (n - q)) - 1);
            __m512 v = _mm512_maskz_loadu_ps(k, cr + q);
            if (bias)
                v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, bias + q));
            if (relu)
                v = _mm512_maskz_mov_ps(
                    _mm512_cmp_ps_mask(v, z, _CMP_NLE_UQ), v);
            _mm512_mask_storeu_ps(cr + q, k, v);
        }
    }
}

void tb_gemm_epi_f64_avx512(double *c, int64_t ldc, int64_t m, int64_t n,
                            const double *bias, int relu)
{
    const __m512d z = _mm512_setzero_pd();
    for (int64_t i = 0; i < m; i++) {
        double *cr = c + i * ldc;
        for (int64_t q = 0; q < n; q += 8) {
            const __mmask8 k = n - q >= 8 ? (__mmask8)0xff
                                          : (__mmask8)((1u << (n - q)) - 1);
            __m512d v = _mm512_maskz_loadu_pd(k, cr + q);
            if (bias)
                v = _mm512_add_pd(v, _mm512_maskz_loadu_pd(k, bias + q));
            if (relu)
                v = _mm512_maskz_mov_pd(
                    _mm512_cmp_pd_mask(v, z, _CMP_NLE_UQ), v);
            _mm512_mask_storeu_pd(cr + q, k, v);
        }
    }
}

/* ---- C = A B^T for few rows of A, both read in place ----------------- */

/* lane i of the result = the sum of v[i]'s 16 lanes (a fixed tree:
 * pairs of lanes, then of pairs, of 128-bit quarters, of halves) */
static inline __m512 nt_hsum16(const __m512 v[16])
{
    __m512 t[8], u[4], w[2];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        t[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                             _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        const __m512d a = _mm512_castps_pd(t[2 * i]);
        const __m512d b = _mm512_castps_pd(t[2 * i + 1]);
        u[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)),
                             _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
    }
    /* u[i]'s quarter q: the quarter-q sums of v[4i .. 4i + 3] */
#pragma GCC unroll 2
    for (int i = 0; i < 2; i++)
        w[i] = _mm512_add_ps(
            _mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], 0x88),
            _mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], 0xdd));
    return _mm512_add_ps(_mm512_shuffle_f32x4(w[0], w[1], 0x88),
                         _mm512_shuffle_f32x4(w[0], w[1], 0xdd));
}

/* lane i of the result = the sum of v[i]'s 8 lanes (pairs of lanes, then
 * 128-bit quarters, then halves) */
static inline __m512d nt_hsum8d(const __m512d v[8])
{
    __m512d t[4], u[2];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        t[i] = _mm512_add_pd(_mm512_unpacklo_pd(v[2 * i], v[2 * i + 1]),
                             _mm512_unpackhi_pd(v[2 * i], v[2 * i + 1]));
#pragma GCC unroll 2
    for (int i = 0; i < 2; i++)
        u[i] = _mm512_add_pd(
            _mm512_shuffle_f64x2(t[2 * i], t[2 * i + 1], 0x88),
            _mm512_shuffle_f64x2(t[2 * i], t[2 * i + 1], 0xdd));
    return _mm512_add_pd(_mm512_shuffle_f64x2(u[0], u[1], 0x88),
                         _mm512_shuffle_f64x2(u[0], u[1], 0xdd));
}

/* The dot products of a tile: rows i < m (m <= 8; rows past m repeat
 * row m - 1, not stored) of a against b's rows j and j + nc - 1, in
 * acc[r] (column j) and acc[8 + r] (column j + 1), VL lanes over k in k
 * order, the last vector masked. */
#define NT_DOTS(T, V, VL, MT, setzero, loadu, maskz_loadu, fmadd)         \
    V acc[16];                                                            \
    const T *ar[8], *br[2];                                               \
    _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++)                   \
        ar[r] = a + (r < m ? r : m - 1) * lda;                            \
    br[0] = b;                                                            \
    br[1] = b + (nc > 1 ? ldb : 0);                                       \
    _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++)                 \
        acc[i] = setzero();                                               \
    int64_t k = 0;                                                        \
    for (; k + VL <= K; k += VL) {                                        \
        const V b0 = loadu(br[0] + k), b1 = loadu(br[1] + k);             \
        _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++)               \
        {                                                                 \
            const V av = loadu(ar[r] + k);                                \
            acc[r] = fmadd(av, b0, acc[r]);                               \
            acc[8 + r] = fmadd(av, b1, acc[8 + r]);                       \
        }                                                                 \
    }                                                                     \
    if (k < K) {                                                          \
        const MT km = (MT)((1u << (K - k)) - 1);                          \
        const V b0 = maskz_loadu(km, br[0] + k);                          \
        const V b1 = maskz_loadu(km, br[1] + k);                          \
        _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++)               \
        {                                                                 \
            const V av = maskz_loadu(km, ar[r] + k);                      \
            acc[r] = fmadd(av, b0, acc[r]);                               \
            acc[8 + r] = fmadd(av, b1, acc[8 + r]);                       \
        }                                                                 \
    }

/* Columns j, j + 1 (nc of them: 1 or 2) of rows i < m (m <= 8) of C. */
static inline __attribute__((always_inline)) void
nt_tile_f32(int m, int nc, int64_t K, const float *a, int64_t lda,
            const float *b, int64_t ldb, float *c, int64_t ldc)
{
    NT_DOTS(float, __m512, 16, __mmask16, _mm512_setzero_ps, _mm512_loadu_ps,
            _mm512_maskz_loadu_ps, _mm512_fmadd_ps)
    /* lane r: C[r][j], lane 8 + r: C[r][j + 1]; to (r, j) pairs */
    const __m512 s = _mm512_permutexvar_ps(
        _mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7,
                          15),
        nt_hsum16(acc));
    /* quarter q: rows 2q and 2q + 1 (the extract's index a literal:
     * -O1 does not fold a loop counter into the immediate) */
#define NT_Q32(q)                                                         \
    do {                                                                  \
        const __m128 p = _mm512_extractf32x4_ps(s, q);                    \
        if (2 * (q) < m) {                                                \
            if (nc > 1)                                                   \
                _mm_storel_pi((__m64 *)(void *)(c + 2 * (q) * ldc), p);   \
            else                                                          \
                _mm_store_ss(c + 2 * (q) * ldc, p);                       \
        }                                                                 \
        if (2 * (q) + 1 < m) {                                            \
            if (nc > 1)                                                   \
                _mm_storeh_pi((__m64 *)(void *)(c + (2 * (q) + 1) * ldc), \
                              p);                                         \
            else                                                          \
                _mm_store_ss(c + (2 * (q) + 1) * ldc,                     \
                             _mm_movehl_ps(p, p));                        \
        }                                                                 \
    } while (0)
    NT_Q32(0);
    NT_Q32(1);
    NT_Q32(2);
    NT_Q32(3);
#undef NT_Q32
}

static inline __attribute__((always_inline)) void
nt_tile_f64(int m, int nc, int64_t K, const double *a, int64_t lda,
            const double *b, int64_t ldb, double *c, int64_t ldc)
{
    NT_DOTS(double, __m512d, 8, __mmask8, _mm512_setzero_pd,
            _mm512_loadu_pd, _mm512_maskz_loadu_pd, _mm512_fmadd_pd)
    /* s0 lane r: C[r][j], s1 lane r: C[r][j + 1]; each 128-bit quarter
     * of lo holds row 2q's pair, of hi row 2q + 1's */
    const __m512d s0 = nt_hsum8d(acc), s1 = nt_hsum8d(acc + 8);
    const __m512d lo = _mm512_unpacklo_pd(s0, s1);
    const __m512d hi = _mm512_unpackhi_pd(s0, s1);
#define NT_Q64(q)                                                         \
    do {                                                                  \
        const __m128d pl = _mm512_extractf64x2_pd(lo, q);                 \
        const __m128d ph = _mm512_extractf64x2_pd(hi, q);                 \
        if (2 * (q) < m) {                                                \
            if (nc > 1)                                                   \
                _mm_storeu_pd(c + 2 * (q) * ldc, pl);                     \
            else                                                          \
                _mm_store_sd(c + 2 * (q) * ldc, pl);                      \
        }                                                                 \
        if (2 * (q) + 1 < m) {                                            \
            if (nc > 1)                                                   \
                _mm_storeu_pd(c + (2 * (q) + 1) * ldc, ph);               \
            else                                                          \
                _mm_store_sd(c + (2 * (q) + 1) * ldc, ph);                \
        }                                                                 \
    } while (0)
    NT_Q64(0);
    NT_Q64(1);
    NT_Q64(2);
    NT_Q64(3);
#undef NT_Q64
}
#undef NT_DOTS

/* The row blocks of 8 (the last m rows), each the column pairs in
 * [n0, n1), a last single column alone. */
#define NT_CASE(SFX, mm)                                                  \
    case mm:                                                              \
        for (; j + 2 <= n1; j += 2)                                       \
            nt_tile_##SFX(mm, 2, K, a, lda, b + j * ldb, ldb, c + j, ldc); \
        if (j < n1)                                                       \
            nt_tile_##SFX(mm, 1, K, a, lda, b + j * ldb, ldb, c + j, ldc); \
        break;
#define NT_ENTRY(SFX, T)                                                  \
    void tb_gemm_nt_##SFX##_avx512(int64_t M, int64_t n0, int64_t n1,     \
                                   int64_t K, const T *A, int64_t lda,    \
                                   const T *B, int64_t ldb, T *C,         \
                                   int64_t ldc)                           \
    {                                                                     \
        for (int64_t i = 0; i < M; i += 8) {                              \
            const int m = M - i < 8 ? (int)(M - i) : 8;                   \
            const T *a = A + i * lda, *b = B;                             \
            T *c = C + i * ldc;                                           \
            int64_t j = n0;                                               \
            switch (m) {                                                  \
                NT_CASE(SFX, 1) NT_CASE(SFX, 2) NT_CASE(SFX, 3)           \
                NT_CASE(SFX, 4) NT_CASE(SFX, 5) NT_CASE(SFX, 6)           \
                NT_CASE(SFX, 7) NT_CASE(SFX, 8)                           \
            default:                                                      \
                break;                                                    \
            }                                                             \
        }                                                                 \
    }
NT_ENTRY(f32, float)
NT_ENTRY(f64, double)
#undef NT_ENTRY
#undef NT_CASE
