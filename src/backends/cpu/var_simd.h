/* var's contiguous lanes in f32, bf16 and f16 at the level of the file
 * that includes it (ops_simd_impl.h: vmath_simd.h's vf, its xs_d*
 * double vectors), one code for the three element types: a 16-bit
 * element is widened in registers (exactly) where f32 is loaded, so a
 * bf16/f16 lane gives the bits of the f32 lane of its widened values.
 *
 * Memory is read once.  A lane goes in blocks of XV_BLOCK elements; a
 * block's statistics come from the shifted sums S1 = sum t, S2 = sum t^2
 * of t = x - k: mean = k + S1 / n, M2 = S2 - S1^2 / n (the corrected
 * two-pass form, exact for any k; rounding errors scale with S2 =
 * M2 (1 + rho), rho = n (mean - k)^2 / M2).  The shift is predicted
 * (the block's first element for the first block, then the linear
 * extrapolation of the two blocks before: a stationary or trending lane
 * puts it within a few standard errors of the mean) and checked: the
 * block is kept when S1^2 / n <= S2 / 16, i.e. rho <= 1/15, else (rare:
 * a jump) the block, now in L1, is read again around its f32-summed
 * mean, the two-pass form.  Blocks merge by var_merge.h's tree.
 * t and t^2 are formed in f32 (t = x - k exact where x and k are within
 * a factor 2, else rounded once) and summed in f32 within chunks of
 * XV_CHUNK elements (4 terms per partial sum, 6 after the tree joining
 * the accumulators), each chunk's sums then added in double; a block's
 * tail (under a chunk) is summed in double.  Bound: |M2_block error| <=
 * (7 u + 2 u) S2 + O(u^2) with u = 2^-24, so relative to M2 at most
 * 9 u (1 + rho) <= 9.6 u = 5.7e-7 when the shift is kept (the merge
 * and the final division add a few 2^-53); constant data gives exactly
 * 0 (every t is 0).  A sum that is not finite (t^2 overflows f32, inf,
 * NaN) sends the block to a double form around its double mean, the
 * value the portable row gives. */
#ifndef TB_BACKENDS_CPU_VAR_SIMD_H
#define TB_BACKENDS_CPU_VAR_SIMD_H

#include "../../ops/half.h"
#include "var_merge.h"

enum { XV_F32, XV_BF16, XV_F16 };

/* Elements per block: 16 KiB of f32, so a block read again comes from
 * L1. */
#define XV_BLOCK 4096
/* Elements per f32 chunk: 16 vectors, 4 per accumulator. */
#define XV_CHUNK (16 * VS_LANES)
/* A block's shift is kept when S1^2 <= XV_RHO n S2. */
#define XV_RHO 0.0625

#define XV_AI static inline __attribute__((always_inline))

XV_AI const void *xv_at(const void *x, int64_t i, int kind)
{
    return (const char *)x + i * (kind == XV_F32 ? 4 : 2);
}

/* bf16 at avx512: one masked vpermw puts each value in the upper half
 * of its lane (a zero extension and a shift before: var bf16 at
 * 1024x1024 67.6 -> 61.3 us, tbench ab, 8 blocks, load 7; f16's two
 * 256-bit vcvtph2ps joined by an insert took 93 us against 69) */
XV_AI vf xv_load(const void *x, int64_t i, int kind)
{
    if (kind == XV_F32)
        return v_load((const float *)x + i);
    const uint16_t *h = (const uint16_t *)x + i;
#if VS_LANES == 16
    const __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)h);
    if (kind == XV_BF16)
        return _mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(
            0xaaaaaaaau,
            _mm512_set_epi16(15, 0, 14, 0, 13, 0, 12, 0, 11, 0, 10, 0, 9, 0,
                             8, 0, 7, 0, 6, 0, 5, 0, 4, 0, 3, 0, 2, 0, 1, 0,
                             0, 0),
            _mm512_castsi256_si512(w)));
    return _mm512_cvtph_ps(w);
#else
    const __m128i w = _mm_loadu_si128((const __m128i *)(const void *)h);
    if (kind == XV_BF16)
        return _mm256_castsi256_ps(
            _mm256_slli_epi32(_mm256_cvtepu16_epi32(w), 16));
    return _mm256_cvtph_ps(w);
#endif
}

XV_AI float xv_get(const void *x, int64_t i, int kind)
{
    if (kind == XV_F32)
        return ((const float *)x)[i];
    const uint16_t h = ((const uint16_t *)x)[i];
    return kind == XV_BF16 ? tb_bf16_to_f32(h) : tb_f16_to_f32(h);
}

/* *d += sum (x - k), *d2 += sum (x - k)^2 over x[0, len), in double. */
XV_AI void xv_dsums(const void *x, int64_t len, double k, int kind,
                    double *d, double *d2)
{
    const vd kv = xs_dset1(k);
    vd d0 = xs_dzero(), d1 = d0, q0 = d0, q1 = d0;
    float buf[VS_LANES];
    int64_t j = 0;
    for (; j + VS_LANES <= len; j += VS_LANES) {
        v_store(buf, xv_load(x, j, kind));
        vd t0 = xs_dsub(xs_dload_f(buf), kv);
        vd t1 = xs_dsub(xs_dload_f(buf + XS_DL), kv);
        d0 = xs_dadd(d0, t0);
        d1 = xs_dadd(d1, t1);
        q0 = xs_dfma(t0, t0, q0);
        q1 = xs_dfma(t1, t1, q1);
    }
    double sd = xs_dhsum(xs_dadd(d0, d1)), sq = xs_dhsum(xs_dadd(q0, q1));
    for (; j < len; j++) {
        double t = (double)xv_get(x, j, kind) - k;
        sd += t;
        sq += t * t;
    }
    *d += sd;
    *d2 += sq;
}

/* t = x[i] - k in one rounding, as an FMA x * 1 - k: on the FMA pipes,
 * not the adders, which the loop's adds keep busy (f32 avx512 at
 * 1024x1024: 55.8 -> 50.0 us, load 24) */
#define XV_T(i) v_fms(xv_load(x, i, kind), one, kv)

#if VS_LANES == 16
/* xv_sums's whole chunks of f16 values at avx512 on 8-lane halves:
 * each 16-lane vector (t, accumulators a0..a3, b0..b3) as its low and
 * high 8 lanes, widened by a 256-bit vcvtph2ps (Zen 4: 0.5 cycles
 * against 1.33 to 2 for the 512-bit form, which shares the FADD pipes
 * with the adds); every lane adds what xv_sums's
 * lane adds, in its order, and the low and high halves of the folded
 * sums are the doubles xs_dload_f took from the stored vector: the same
 * bits.  (var f16 at 1024x1024: 68.8 -> 58 us; a microbenchmark of the
 * chunk loop on L2 data, cycles per 16 values: zmm f32 2.3, this 3.0,
 * the zmm vcvtph2ps 3.9; bf16 gained nothing from halves, a ymm zero
 * extension and shift, or even and odd lanes by a shift and an and:
 * 3.1 with its vpermw; the a sums as fma(t, 1, a) on the FMA pipes:
 * 61 us.)  The first j past the chunks. */
XV_AI int64_t xv_chunks_f16h(const uint16_t *x, int64_t len, float kf,
                             vd *dd0, vd *dd1, vd *dq0, vd *dq1)
{
    const __m256 kv = _mm256_set1_ps(kf), one = _mm256_set1_ps(1.0f);
    const vd oned = xs_dset1(1.0);
#define XH_LD(o)                                                          \
    _mm256_maskz_cvtph_ps(0xff,                                           \
                          _mm_loadu_si128((const __m128i *)(x + j + (o))))
#define XH_T(o) _mm256_fmsub_ps(XH_LD(o), one, kv)
#define XH_R8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
    vd s0 = *dd0, s1 = *dd1, q0 = *dq0, q1 = *dq1;
    int64_t j = 0;
    for (; j + XV_CHUNK <= len; j += XV_CHUNK) {
#define XH_FIRST(h) __m256 a##h = XH_T(8 * (h)), b##h = _mm256_mul_ps(a##h, a##h);
        XH_R8(XH_FIRST)
#undef XH_FIRST
#pragma GCC unroll 1
        for (int u = 4 * VS_LANES; u < XV_CHUNK; u += 4 * VS_LANES) {
#define XH_NEXT(h)                                                        \
    {                                                                     \
        const __m256 t = XH_T(u + 8 * (h));                               \
        a##h = _mm256_add_ps(a##h, t);                                    \
        b##h = _mm256_fmadd_ps(t, t, b##h);                               \
    }
            XH_R8(XH_NEXT)
#undef XH_NEXT
        }
        /* vector k is halves 2k (lanes 0-7) and 2k + 1 (lanes 8-15).
         * The fold's first f32 pair and its double adds as fma(s, 1, d)
         * (add's bits) on the FMA pipes: the fold took about a third of
         * this loop (a microbenchmark, L2 data, 2.04 TSC cycles per 16
         * values, 1.45 without it), mostly on the adders beside the
         * widening; 1.92 so (var f16 1024x1024 58.1 -> 55.6 us, tbench
         * ab, 8 blocks, load 8; the same in the zmm loop below: f32
         * +2.7%, bf16 +0.5%, so not there) */
        const __m256 al = _mm256_add_ps(_mm256_fmadd_ps(a0, one, a2),
                                        _mm256_add_ps(a4, a6));
        const __m256 ah = _mm256_add_ps(_mm256_fmadd_ps(a1, one, a3),
                                        _mm256_add_ps(a5, a7));
        const __m256 bl = _mm256_add_ps(_mm256_fmadd_ps(b0, one, b2),
                                        _mm256_add_ps(b4, b6));
        const __m256 bh = _mm256_add_ps(_mm256_fmadd_ps(b1, one, b3),
                                        _mm256_add_ps(b5, b7));
        s0 = xs_dfma(_mm512_cvtps_pd(al), oned, s0);
        s1 = xs_dfma(_mm512_cvtps_pd(ah), oned, s1);
        q0 = xs_dfma(_mm512_cvtps_pd(bl), oned, q0);
        q1 = xs_dfma(_mm512_cvtps_pd(bh), oned, q1);
    }
    *dd0 = s0, *dd1 = s1, *dq0 = q0, *dq1 = q1;
#undef XH_R8
#undef XH_T
#undef XH_LD
    return j;
}
#endif

/* The shifted sums of a block around kf: whole chunks in f32 partial
 * sums added in double, the tail in double. */
XV_AI void xv_sums(const void *x, int64_t len, float kf, int kind,
                   double *d, double *d2)
{
    const vf kv = v_set1(kf), one = v_set1(1.0f);
    vd dd0 = xs_dzero(), dd1 = dd0, dq0 = dd0, dq1 = dd0;
    float buf[2 * VS_LANES];
    int64_t j = 0;
#if VS_LANES == 16
    /* the halves on AMD only: an Intel core (the Emerald Rapids VM)
     * widens 16 halves by one 512-bit vcvtph2ps at the rate of two
     * 256-bit ones, and there the zmm loop below (the same bits) runs
     * var f16 1024x1024 in 77.4 us against the halves' 120.3, 128x128
     * 1.66 against 2.39 (tbench ab, 12 blocks, load 6.3-6.9,
     * 2026-12-01); the bare loops in L1, 0.166 against 0.203 cycles a
     * value */
    if (kind == XV_F16 && tb_cpu_isa_amd())
        j = xv_chunks_f16h(x, len, kf, &dd0, &dd1, &dq0, &dq1);
#endif
    for (; j + XV_CHUNK <= len; j += XV_CHUNK) {
        vf t0 = XV_T(j);
        vf t1 = XV_T(j + VS_LANES);
        vf t2 = XV_T(j + 2 * VS_LANES);
        vf t3 = XV_T(j + 3 * VS_LANES);
        vf a0 = t0, a1 = t1, a2 = t2, a3 = t3;
        vf b0 = v_mul(t0, t0), b1 = v_mul(t1, t1), b2 = v_mul(t2, t2);
        vf b3 = v_mul(t3, t3);
        for (int u = 4 * VS_LANES; u < XV_CHUNK; u += 4 * VS_LANES) {
            t0 = XV_T(j + u);
            t1 = XV_T(j + u + VS_LANES);
            t2 = XV_T(j + u + 2 * VS_LANES);
            t3 = XV_T(j + u + 3 * VS_LANES);
            a0 = v_add(a0, t0);
            a1 = v_add(a1, t1);
            a2 = v_add(a2, t2);
            a3 = v_add(a3, t3);
            b0 = v_fma(t0, t0, b0);
            b1 = v_fma(t1, t1, b1);
            b2 = v_fma(t2, t2, b2);
            b3 = v_fma(t3, t3, b3);
        }
        v_store(buf, v_add(v_add(a0, a1), v_add(a2, a3)));
        v_store(buf + VS_LANES, v_add(v_add(b0, b1), v_add(b2, b3)));
        dd0 = xs_dadd(dd0, xs_dload_f(buf));
        dd1 = xs_dadd(dd1, xs_dload_f(buf + XS_DL));
        dq0 = xs_dadd(dq0, xs_dload_f(buf + VS_LANES));
        dq1 = xs_dadd(dq1, xs_dload_f(buf + VS_LANES + XS_DL));
    }
    *d = xs_dhsum(xs_dadd(dd0, dd1));
    *d2 = xs_dhsum(xs_dadd(dq0, dq1));
    xv_dsums(xv_at(x, j, kind), len - j, (double)kf, kind, d, d2);
}

/* A block's mean summed in f32 vectors (four accumulators), rounded to
 * f32: the two-pass form's shift. */
XV_AI float xv_fmean(const void *x, int64_t len, int kind)
{
    vf f0 = v_set1(0.0f), f1 = f0, f2 = f0, f3 = f0;
    int64_t j = 0;
    for (; j + 4 * VS_LANES <= len; j += 4 * VS_LANES) {
        f0 = v_add(f0, xv_load(x, j, kind));
        f1 = v_add(f1, xv_load(x, j + VS_LANES, kind));
        f2 = v_add(f2, xv_load(x, j + 2 * VS_LANES, kind));
        f3 = v_add(f3, xv_load(x, j + 3 * VS_LANES, kind));
    }
    float fs = v_hsum(v_add(v_add(f0, f1), v_add(f2, f3)));
    for (; j < len; j++)
        fs += xv_get(x, j, kind);
    return fs / (float)len;
}

/* One block of len >= 1 elements around the shift kf: its (n, mean - K,
 * M2), K the lane's first element (means about K: the merges' deltas
 * are differences of small numbers, not of two large means each
 * rounded, which lost u |mean| / sigma of M2 on ill-conditioned
 * lanes). */
XV_AI tb_var_part xv_block(const void *x, int64_t len, int kind, float kf,
                           double K)
{
    double d, d2;
    xv_sums(x, len, kf, kind, &d, &d2);
    if (!(d * d <= XV_RHO * (double)len * d2) && isfinite(d) &&
        isfinite(d2)) { /* the shift was off: the two-pass form */
        kf = xv_fmean(x, len, kind);
        xv_sums(x, len, kf, kind, &d, &d2);
    }
    double k = (double)kf;
    if (!isfinite(d) || !isfinite(d2) || !isfinite(k)) {
        double s = 0;
        for (int64_t i = 0; i < len; i++)
            s += (double)xv_get(x, i, kind);
        k = s / (double)len;
        d = d2 = 0;
        xv_dsums(x, len, k, kind, &d, &d2);
    }
    return (tb_var_part){(double)len, (k - K) + d / (double)len,
                         d2 - d * d / (double)len};
}

/* A contiguous lane of len >= 1 elements with correction corr: the
 * first block around its first element K, each next one around K plus
 * the linear extrapolation of the two blocks' means before. */
XV_AI float xv_lane(const void *x, int64_t len, int64_t corr, int kind)
{
    tb_var_tree t = {.top = 0};
    const float k0 = xv_get(x, 0, kind);
    const double K = isfinite(k0) ? (double)k0 : 0.0;
    double m0 = 0, m1 = 0; /* the means (about K) of the two blocks before */
    for (int64_t n = 0, b = 0; n < len; n += XV_BLOCK, b++) {
        const int64_t bl = len - n < XV_BLOCK ? len - n : XV_BLOCK;
        float kf = (float)(K + (b == 1 ? m1 : 2 * m1 - m0));
        if (b == 0 || !isfinite(kf))
            kf = k0;
        tb_var_part p = xv_block(xv_at(x, n, kind), bl, kind, kf, K);
        m0 = m1;
        m1 = p.mean;
        tb_var_push(&t, p);
    }
    return (float)(tb_var_total(&t).m2 / (double)(len - corr));
}

#endif
