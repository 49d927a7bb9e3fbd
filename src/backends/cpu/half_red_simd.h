/* half_simd.h's reductions (tb_cpu_half_red): sum, max and min of
 * bf16/f16 values on the level's vectors.  For inclusion by half_simd.h
 * only, at its end: the vectors, widenings and loads it defines are
 * this file's vocabulary (so it has no include guard of its own, and no
 * includes: half_simd.h's guard holds it). */

/* ---- reductions (tb_cpu_half_red) -------------------------------------- */

/* Sum of x[0..n): ks_sum_f32_row (kernels_simd.h) on the widened values,
 * the same operations in the same order (lsm_simd.h's ks_fold4 per
 * block of TB_CPU_SUM_BLOCK: four vector accumulators, single vectors,
 * the tail with +0 in the lanes past it; the block's lanes widened to
 * double and added to a double vector), each vector widened from 16
 * bits in registers: the f32 row's value on the widened tensor, bit
 * for bit.
 * bf16's four-vector steps take 2 * VS_LANES values an integer vector
 * with no shuffle: the even-numbered values in e (the vector shifted
 * left 16 bits a 32-bit lane), the odd in o (the vector and 0xffff0000),
 * each accumulated in the lane that holds it; every f32 accumulator
 * lane of ks_fold4 is one lane of (e0, o0) or (e1, o1), which
 * hs_eo_join puts back in order after the steps, so each lane adds the
 * same values in the same order.  The e lanes add by fma(x, 1, acc)
 * (x * 1 is exact: one rounding of acc + x, add's bits) on the FMA pipes,
 * so that the adds and the shifts do not queue on the same ones (Zen 4,
 * 1M bf16 values in L1: 54 values/ns, 43 with vpermw's widening and
 * adds, 39 with e and o both by adds).  f16 stays with vcvtph2ps, 16
 * values per 2 cycles on Zen 4: 29 values/ns in L1 whatever the
 * accumulation (adds, fmas, 8 ymm accumulators) or an integer widening
 * beside it (a shift, an arithmetic shift and an and a value pair, times
 * 2^112, and a test for infinities: 23-29 values/ns), the row's
 * compute bound. */
#if VS_LANES == 16
/* ks_fold4's a0 (values 0-15 of a 32-value step) and a1 (16-31) from
 * e (lane i: value 2i) and o (value 2i + 1) */
static inline void hs_eo_join(vf e, vf o, vf *a0, vf *a1)
{
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20,
                                         5, 21, 6, 22, 7, 23);
    *a0 = _mm512_permutex2var_ps(e, lo, o);
    *a1 = _mm512_permutex2var_ps(
        e, _mm512_add_epi32(lo, _mm512_set1_epi32(8)), o);
}
#else
static inline void hs_eo_join(vf e, vf o, vf *a0, vf *a1)
{
    const __m256 lo = _mm256_unpacklo_ps(e, o); /* values 0-3, 8-11 */
    const __m256 hi = _mm256_unpackhi_ps(e, o); /* values 4-7, 12-15 */
    *a0 = _mm256_permute2f128_ps(lo, hi, 0x20);
    *a1 = _mm256_permute2f128_ps(lo, hi, 0x31);
}
#endif
/* the four-vector steps of ks_fold4 over p[0..m): the j reached, the
 * accumulators in a0..a3 */
static inline int64_t hs_fold4_steps_bf16(const uint16_t *p, int64_t m,
                                          vf *a0, vf *a1, vf *a2, vf *a3)
{
    const int64_t L = VS_LANES;
    const hvi hm = hi_set1(-65536) /* 0xffff0000 */;
    const vf one = v_set1(1.0f);
    vf e0 = v_set1(0.0f), o0 = e0, e1 = e0, o1 = e0;
    int64_t j = 0;
    for (; j + 4 * L <= m; j += 4 * L) {
        const hv2 u = h_load2(p + j), w = h_load2(p + j + 2 * L);
        e0 = v_fma(hi_f(HS_W(slli_epi32)(u, 16)), one, e0);
        o0 = v_add(o0, hi_f(hi_and(u, hm)));
        e1 = v_fma(hi_f(HS_W(slli_epi32)(w, 16)), one, e1);
        o1 = v_add(o1, hi_f(hi_and(w, hm)));
    }
    hs_eo_join(e0, o0, a0, a1);
    hs_eo_join(e1, o1, a2, a3);
    return j;
}
/* f16's four accumulators of the level's vectors, each value widened
 * by the level's vcvtph2ps: avx2, and avx512 on Intel (below) */
static inline int64_t hs_fold4_steps_f16v(const uint16_t *p, int64_t m,
                                          vf *a0, vf *a1, vf *a2, vf *a3)
{
    const int64_t L = VS_LANES;
    vf s0 = *a0, s1 = *a1, s2 = *a2, s3 = *a3;
    int64_t j = 0;
    for (; j + 4 * L <= m; j += 4 * L) {
        s0 = v_add(s0, h_f16_ld1(p + j));
        s1 = v_add(s1, h_f16_ld1(p + j + L));
        s2 = v_add(s2, h_f16_ld1(p + j + 2 * L));
        s3 = v_add(s3, h_f16_ld1(p + j + 3 * L));
    }
    *a0 = s0, *a1 = s1, *a2 = s2, *a3 = s3;
    return j;
}
#if VS_LANES == 16
/* f16 at avx512 on AMD (HS_WHOLE_f16): each 16-lane accumulator as two
 * 8-lane halves, each half's values widened by a 256-bit vcvtph2ps
 * (0.5 cycles on Zen 4
 * against 1.33 for the 512-bit form alone, 2 beside the adds) and added
 * as fma(x, 1, acc) (one rounding of acc + x: add's bits) on the FMA
 * pipes: 1M values in L1 at 52 values/ns against 29 (a loop of the two
 * forms, 3.69 GHz); each lane adds the values it added before, in the
 * same order. */
static inline int64_t hs_fold4_steps_f16(const uint16_t *p, int64_t m,
                                         vf *a0, vf *a1, vf *a2, vf *a3)
{
    if (!tb_cpu_isa_amd()) /* the halves on AMD only: HS_WHOLE_f16 */
        return hs_fold4_steps_f16v(p, m, a0, a1, a2, a3);
    const __m256 one = _mm256_set1_ps(1.0f);
#define HS_LO8(a) _mm512_castps512_ps256(a)
#define HS_HI8(a) _mm512_extractf32x8_ps(a, 1)
#define HS_JOIN8(l, h) _mm512_insertf32x8(_mm512_castps256_ps512(l), h, 1)
/* the 64 values at p + j into s0..s7, 8 each (one and p in scope) */
#define HS_F16_STEP64(j)                                                  \
    do {                                                                  \
        s0 = _mm256_fmadd_ps(hy_f16_ld(p + (j)), one, s0);                \
        s1 = _mm256_fmadd_ps(hy_f16_ld(p + (j) + 8), one, s1);            \
        s2 = _mm256_fmadd_ps(hy_f16_ld(p + (j) + 16), one, s2);           \
        s3 = _mm256_fmadd_ps(hy_f16_ld(p + (j) + 24), one, s3);           \
        s4 = _mm256_fmadd_ps(hy_f16_ld(p + (j) + 32), one, s4);           \
        s5 = _mm256_fmadd_ps(hy_f16_ld(p + (j) + 40), one, s5);           \
        s6 = _mm256_fmadd_ps(hy_f16_ld(p + (j) + 48), one, s6);           \
        s7 = _mm256_fmadd_ps(hy_f16_ld(p + (j) + 56), one, s7);           \
    } while (0)
    __m256 s0 = HS_LO8(*a0), s1 = HS_HI8(*a0), s2 = HS_LO8(*a1);
    __m256 s3 = HS_HI8(*a1), s4 = HS_LO8(*a2), s5 = HS_HI8(*a2);
    __m256 s6 = HS_LO8(*a3), s7 = HS_HI8(*a3);
    int64_t j = 0;
    for (; j + 64 <= m; j += 64)
        HS_F16_STEP64(j);
    *a0 = HS_JOIN8(s0, s1), *a1 = HS_JOIN8(s2, s3);
    *a2 = HS_JOIN8(s4, s5), *a3 = HS_JOIN8(s6, s7);
    return j;
}
#endif
/* hs_sum's whole blocks (TB_CPU_SUM_BLOCK values, a multiple of the
 * four-vector step): the block's f32 sum s widened, hd_add(hd_lo(s),
 * hd_hi(s)), inlined in hs_sum's loop.  f16 at avx512: hs_fold4_steps_f16's
 * eight 8-lane halves, folded as halves (s's low lanes (s0 + s2) + (s4 +
 * s6), as ks_fold4's (a0 + a1) + (a2 + a3) adds them, its high lanes the
 * odd halves) and widened from there: no join into 16-lane vectors, no
 * call a block (sum f16 at 1M: the call, the joins and extracts took a
 * third of the row's time; 30.2 us, 1.40x its read bound, in the
 * 2026-11-30 table).  Elsewhere (HS_WHOLE_<dt> 0) blocks as before, by
 * hs_part (bf16 by whole blocks took 10-15% more time at 1M, tbench ab:
 * hs_fold4 forced inline, or gcc's clone of it for m = TB_CPU_SUM_BLOCK). */
#define HS_AI static inline __attribute__((always_inline))
#if VS_LANES == 16
_Static_assert(TB_CPU_SUM_BLOCK % 64 == 0, "whole steps a block");
HS_AI hvd hs_block_f16(const uint16_t *p)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0;
    __m256 s5 = s0, s6 = s0, s7 = s0;
    for (int64_t j = 0; j < TB_CPU_SUM_BLOCK; j += 64)
        HS_F16_STEP64(j);
    const __m256 lo = _mm256_add_ps(_mm256_add_ps(s0, s2),
                                    _mm256_add_ps(s4, s6));
    const __m256 hi = _mm256_add_ps(_mm256_add_ps(s1, s3),
                                    _mm256_add_ps(s5, s7));
    return _mm512_add_pd(_mm512_cvtps_pd(lo), _mm512_cvtps_pd(hi));
}
/* On AMD only: an Intel core (the Emerald Rapids VM) widens 16 halves
 * by one 512-bit vcvtph2ps at the rate of two 256-bit ones, and there
 * hs_part's 16-lane blocks (bf16's route, the same bits) took half the
 * halves' time: sum f16 1024x1024 43.3 us against 88.6, 128x128 0.66
 * against 1.42, mean 46.0 against 88.8, sum axis=1 47.1 against 90.0
 * (tbench ab, 12 blocks, load 6.3-6.9, 2026-12-01) */
#define HS_WHOLE_f16 tb_cpu_isa_amd()
#define HS_BLOCK_f16(p) hs_block_f16(p)
#else
#define HS_WHOLE_f16 0
#define HS_BLOCK_f16(p) hd_zero()
#define hs_fold4_steps_f16 hs_fold4_steps_f16v
#endif
#define HS_WHOLE_bf16 0
#define HS_BLOCK_bf16(p) hd_zero()
#define HS_SUM(DT)                                                        \
    static inline vf hs_fold4_##DT(const uint16_t *p, int64_t m)          \
    {                                                                     \
        const int64_t L = VS_LANES;                                       \
        vf a0 = v_set1(0.0f), a1 = a0, a2 = a0, a3 = a0;                  \
        int64_t j = hs_fold4_steps_##DT(p, m, &a0, &a1, &a2, &a3);        \
        for (; j + L <= m; j += L)                                        \
            a0 = v_add(a0, h_##DT##_ld1(p + j));                          \
        if (j < m) {                                                      \
            uint16_t t[VS_LANES] = {0};                                   \
            memcpy(t, p + j, (size_t)(m - j) * 2);                        \
            a1 = v_add(a1, h_##DT##_ld1(t));                              \
        }                                                                 \
        return v_add(v_add(a0, a1), v_add(a2, a3));                       \
    }                                                                     \
    /* hd_add(hd_lo(s), hd_hi(s)) of a block's (or the last part's) sum */ \
    static inline hvd hs_part_##DT(const uint16_t *p, int64_t m)          \
    {                                                                     \
        const vf s = hs_fold4_##DT(p, m);                                 \
        return hd_add(hd_lo(s), hd_hi(s));                                \
    }                                                                     \
    static double hs_sum_##DT(const uint16_t *x, int64_t n)               \
    {                                                                     \
        hvd acc = hd_zero();                                              \
        int64_t i = 0;                                                    \
        if (HS_WHOLE_##DT)                                                \
            for (; i + TB_CPU_SUM_BLOCK <= n; i += TB_CPU_SUM_BLOCK)      \
                acc = hd_add(acc, HS_BLOCK_##DT(x + i));                  \
        for (; i < n; i += TB_CPU_SUM_BLOCK) {                            \
            int64_t m = n - i < TB_CPU_SUM_BLOCK ? n - i : TB_CPU_SUM_BLOCK; \
            acc = hd_add(acc, hs_part_##DT(x + i, m));                    \
        }                                                                 \
        return hd_hsum(acc);                                              \
    }
HS_SUM(bf16)
HS_SUM(f16)

/* max (mx 1) or min of x[0..n), n >= 1, on the 16-bit patterns, with
 * no conversion: a value is its sign bit and its magnitude's pattern,
 * which orders the magnitudes, so over 2 * VS_LANES patterns a vector
 * three running extremes give both results: smax, the largest as int16
 * (a pattern with the sign clear, if there is one: the largest
 * non-negative value), umax, the largest as uint16 (with the sign set,
 * if there is one: the most negative value), umin, the smallest as
 * uint16 (the smallest non-negative value, or, where every sign is set,
 * the negative value nearest zero).  max = smax where it is
 * non-negative, else umin; min = umax where its sign is set, else umin.
 * A NaN is a pattern above the infinity's (inf) in magnitude: the
 * largest positive one is smax, the largest negative one umax, so a NaN
 * anywhere shows there.  A NaN, or a result that is a zero (whose sign
 * depends on the order), comes from the portable rows' scalar rule
 * instead (m = x[0], then m = v where v > m (v < m) or v is NaN: the
 * last NaN, the first zero), so the value is theirs.  The tail runs
 * single vectors, the last ending at x[n - 1], overlapping the one
 * before it: extremes do not mind.
 * (The widening loop this replaced took 36 and 55 us for max of 1M bf16
 * and f16 values, one thread: the conversions, not memory.) */
/* The extreme of a 256-bit vector's 16-bit lanes: halves folded down to
 * 8 lanes, then SSE4.1's phminposuw (the unsigned minimum of 8), on the
 * lanes complemented for the unsigned maximum, or with 0x7fff xored in
 * for the signed one (which turns signed order into reverse unsigned
 * order).  The loop runs on 256-bit vectors at avx512 too: Zen 4 runs
 * vpmaxsw/vpmaxuw/vpminuw on zmm at one a cycle, on ymm at two, so the
 * three extremes of 1M values in L1 take 58 values/ns on ymm against 36
 * on zmm (a loop of the two forms, /tmp microbenchmark, 3.69 GHz): the
 * zmm loop fell below L3's read rate (max bf16 at 1M: 29.6 us, 1.39x its
 * read bound, docs/perf-data/op-limits-zen4).  Four vectors a step, each
 * pair folded first: 24.6 us with two a step, 21.1 with four (tbench
 * ab, 8 blocks, load 4-5). */
#define HS_TO128(OP, a)                                                   \
    _mm_##OP(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1))
static inline uint16_t hs_minpos16(__m128i x)
{
    return (uint16_t)(_mm_cvtsi128_si32(_mm_minpos_epu16(x)) & 0xffff);
}
static inline uint16_t hs_humin16(__m256i a)
{
    return hs_minpos16(HS_TO128(min_epu16, a));
}
static inline uint16_t hs_humax16(__m256i a)
{
    const __m128i x = HS_TO128(max_epu16, a);
    return (uint16_t)~hs_minpos16(_mm_xor_si128(x, _mm_set1_epi16(-1)));
}
static inline int16_t hs_hsmax16(__m256i a)
{
    const __m128i x = HS_TO128(max_epi16, a);
    return (int16_t)(hs_minpos16(_mm_xor_si128(x, _mm_set1_epi16(0x7fff))) ^
                     0x7fff);
}
/* a result's pattern widened (never a NaN): bf16 a shift, f16 F16C's
 * vcvtph2ps (the portable tb_f16_to_f32's value; that function took 2%
 * of min f16's time over rows of 1024) */
static inline float hs_bf16_f32(uint16_t h) { return tb_bf16_to_f32(h); }
static inline float hs_f16_f32(uint16_t h)
{
#if VS_LANES == 16 /* (avx512's flags name no F16C: its EVEX form) */
    return _mm_cvtss_f32(_mm_maskz_cvtph_ps(1, _mm_cvtsi32_si128(h)));
#else
    return _cvtsh_ss(h);
#endif
}
#define HS_EXT(DT, INF)                                                   \
    static float hs_ext_scalar_##DT(const uint16_t *x, int64_t n, int mx) \
    {                                                                     \
        float m = tb_##DT##_to_f32(x[0]);                                 \
        for (int64_t j = 1; j < n; j++) {                                 \
            float v = tb_##DT##_to_f32(x[j]);                             \
            if ((mx ? v > m : v < m) || v != v)                           \
                m = v;                                                    \
        }                                                                 \
        return m;                                                         \
    }                                                                     \
    static inline float hs_ext_##DT(const uint16_t *x, int64_t n, int mx) \
    {                                                                     \
        enum { W = 16 }; /* 16-bit lanes of a 256-bit vector */           \
        if (n < 2 * W)                                                    \
            return hs_ext_scalar_##DT(x, n, mx);                          \
        __m256i s0 = _mm256_loadu_si256((const void *)x), s1 = s0;        \
        __m256i u0 = s0, u1 = s0, m0 = s0, m1 = s0;                       \
        int64_t j = 0;                                                    \
        for (; j + 4 * W <= n; j += 4 * W) {                              \
            const __m256i *q = (const void *)(x + j);                     \
            const __m256i v0 = _mm256_loadu_si256(q);                     \
            const __m256i v1 = _mm256_loadu_si256(q + 1);                 \
            const __m256i v2 = _mm256_loadu_si256(q + 2);                 \
            const __m256i v3 = _mm256_loadu_si256(q + 3);                 \
            s0 = _mm256_max_epi16(s0, _mm256_max_epi16(v0, v2));          \
            s1 = _mm256_max_epi16(s1, _mm256_max_epi16(v1, v3));          \
            u0 = _mm256_max_epu16(u0, _mm256_max_epu16(v0, v2));          \
            u1 = _mm256_max_epu16(u1, _mm256_max_epu16(v1, v3));          \
            m0 = _mm256_min_epu16(m0, _mm256_min_epu16(v0, v2));          \
            m1 = _mm256_min_epu16(m1, _mm256_min_epu16(v1, v3));          \
        }                                                                 \
        for (; j + 2 * W <= n; j += 2 * W) {                              \
            const __m256i v0 = _mm256_loadu_si256((const void *)(x + j)); \
            const __m256i v1 =                                            \
                _mm256_loadu_si256((const void *)(x + j + W));            \
            s0 = _mm256_max_epi16(s0, v0);                                \
            s1 = _mm256_max_epi16(s1, v1);                                \
            u0 = _mm256_max_epu16(u0, v0);                                \
            u1 = _mm256_max_epu16(u1, v1);                                \
            m0 = _mm256_min_epu16(m0, v0);                                \
            m1 = _mm256_min_epu16(m1, v1);                                \
        }                                                                 \
        for (; j < n; j += W) {                                           \
            const __m256i v = _mm256_loadu_si256(                         \
                (const void *)(x + (j + W <= n ? j : n - W)));            \
            s0 = _mm256_max_epi16(s0, v);                                 \
            u0 = _mm256_max_epu16(u0, v);                                 \
            m0 = _mm256_min_epu16(m0, v);                                 \
        }                                                                 \
        const int16_t smax = hs_hsmax16(_mm256_max_epi16(s0, s1));        \
        const uint16_t umax = hs_humax16(_mm256_max_epu16(u0, u1));       \
        const uint16_t umin = hs_humin16(_mm256_min_epu16(m0, m1));       \
        if (smax > (INF) || umax > (0x8000 | (INF)))                      \
            return hs_ext_scalar_##DT(x, n, mx); /* a NaN */              \
        const uint16_t r = mx ? (smax >= 0 ? (uint16_t)smax : umin)       \
                              : (umax & 0x8000 ? umax : umin);            \
        if (!(r & 0x7fff))                                                \
            return hs_ext_scalar_##DT(x, n, mx); /* a zero */             \
        return hs_##DT##_f32(r);                                          \
    }                                                                     \
    static float hs_max_##DT(const uint16_t *x, int64_t n)                \
    {                                                                     \
        return hs_ext_##DT(x, n, 1);                                      \
    }                                                                     \
    static float hs_min_##DT(const uint16_t *x, int64_t n)                \
    {                                                                     \
        return hs_ext_##DT(x, n, 0);                                      \
    }
HS_EXT(bf16, 0x7f80)
HS_EXT(f16, 0x7c00)

static inline tb_cpu_half_red hs_red(tb_dtype dt)
{
    if (dt == TB_BF16)
        return (tb_cpu_half_red){hs_sum_bf16, hs_max_bf16, hs_min_bf16};
    if (dt == TB_F16)
        return (tb_cpu_half_red){hs_sum_f16, hs_max_f16, hs_min_f16};
    return (tb_cpu_half_red){0, 0, 0};
}
